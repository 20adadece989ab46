/*
 * The loop-IR printer; see printer.h.
 *
 * Expressions print recursively with a precedence level: each node knows its
 * own level (Python's: or 1, and 2, not 3, comparisons 4, + - 5, * / // % 6,
 * atoms and calls 9) and wraps itself in parentheses when its parent needs a
 * higher one; comparisons do not chain, so one inside another is wrapped. Statements print line by
 * line with an indentation level.
 */
#include "tir/printer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PREC_ATOM 9

static int binary_precedence(kiln_tir_expr_kind_t kind, const char **out_op) {
  switch (kind) {
  case KILN_TIR_EXPR_ADD:
    *out_op = " + ";
    return 5;
  case KILN_TIR_EXPR_SUB:
    *out_op = " - ";
    return 5;
  case KILN_TIR_EXPR_MUL:
    *out_op = " * ";
    return 6;
  case KILN_TIR_EXPR_DIV:
    *out_op = " / ";
    return 6;
  case KILN_TIR_EXPR_FLOOR_DIV:
    *out_op = " // ";
    return 6;
  case KILN_TIR_EXPR_FLOOR_MOD:
    *out_op = " % ";
    return 6;
  case KILN_TIR_EXPR_EQ:
    *out_op = " == ";
    return 4;
  case KILN_TIR_EXPR_NE:
    *out_op = " != ";
    return 4;
  case KILN_TIR_EXPR_LT:
    *out_op = " < ";
    return 4;
  case KILN_TIR_EXPR_LE:
    *out_op = " <= ";
    return 4;
  case KILN_TIR_EXPR_GT:
    *out_op = " > ";
    return 4;
  case KILN_TIR_EXPR_GE:
    *out_op = " >= ";
    return 4;
  case KILN_TIR_EXPR_AND:
    *out_op = " and ";
    return 2;
  case KILN_TIR_EXPR_OR:
    *out_op = " or ";
    return 1;
  case KILN_TIR_EXPR_INT_IMM:
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
  case KILN_TIR_EXPR_NOT:
  case KILN_TIR_EXPR_SELECT:
  case KILN_TIR_EXPR_CAST:
  case KILN_TIR_EXPR_BUFFER_LOAD:
  case KILN_TIR_EXPR_RAMP:
  case KILN_TIR_EXPR_BROADCAST:
  case KILN_TIR_EXPR_CALL:
  case KILN_TIR_EXPR_LET:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  *out_op = NULL;
  return PREC_ATOM;
}

static kiln_status_t print_prec(kiln_strbuf_t *sb, const kiln_tir_expr_t *e, int min_prec);

static kiln_status_t print_list(kiln_strbuf_t *sb, int n, const kiln_tir_expr_t *const *exprs) {
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, i ? ", " : ""));
    KILN_RETURN_IF_ERROR(print_prec(sb, exprs[i], 0));
  }
  return KILN_OK;
}

/* "T.name(a, b)" */
static kiln_status_t print_call(kiln_strbuf_t *sb, const char *name, int n,
                                const kiln_tir_expr_t *const *args) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "T.%s(", name));
  KILN_RETURN_IF_ERROR(print_list(sb, n, args));
  return kiln_strbuf_append_char(sb, ')');
}

static kiln_status_t print_int(kiln_strbuf_t *sb, const kiln_tir_expr_t *e) {
  int64_t value = ((const kiln_tir_int_imm_t *)e)->value;
  if (e->dtype.base == KILN_DTYPE_INT32) {
    return kiln_strbuf_appendf(sb, "%lld", (long long)value);
  }
  if (e->dtype.base == KILN_DTYPE_BOOL) {
    return kiln_strbuf_append(sb, value ? "T.bool(True)" : "T.bool(False)");
  }
  return kiln_strbuf_appendf(sb, "T.%s(%lld)", kiln_dtype_name(e->dtype.base), (long long)value);
}

static kiln_status_t print_float(kiln_strbuf_t *sb, const kiln_tir_expr_t *e) {
  double value = ((const kiln_tir_float_imm_t *)e)->value;
  const char *name = kiln_dtype_name(e->dtype.base);
  if (isnan(value) || isinf(value)) {
    return kiln_strbuf_appendf(sb, "T.%s(\"%s\")", name,
                               isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf"));
  }
  char text[40];
  snprintf(text, sizeof(text), e->dtype.base == KILN_DTYPE_FLOAT64 ? "%.17g" : "%.9g", value);
  int plain = strpbrk(text, ".e") == NULL;
  return kiln_strbuf_appendf(sb, "T.%s(%s%s)", name, text, plain ? ".0" : "");
}

static kiln_status_t print_binary(kiln_strbuf_t *sb, const kiln_tir_expr_t *e) {
  const kiln_tir_binary_t *n = (const void *)e;
  if (e->kind == KILN_TIR_EXPR_MIN || e->kind == KILN_TIR_EXPR_MAX) {
    const kiln_tir_expr_t *args[] = {n->a, n->b};
    return print_call(sb, e->kind == KILN_TIR_EXPR_MIN ? "min" : "max", 2, args);
  }
  const char *op = NULL;
  int prec = binary_precedence(e->kind, &op);
  /* Python chains comparisons (a < b != c), so a comparison operand of a
   * comparison takes parentheses on both sides. */
  KILN_RETURN_IF_ERROR(print_prec(sb, n->a, prec == 4 ? prec + 1 : prec));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, op));
  return print_prec(sb, n->b, prec + 1);
}

static kiln_status_t print_load(kiln_strbuf_t *sb, const kiln_tir_buffer_load_t *n) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s[", n->buffer->name));
  KILN_RETURN_IF_ERROR(print_list(sb, n->num_indices, n->indices));
  return kiln_strbuf_append_char(sb, ']');
}

static kiln_status_t print_lanes_call(kiln_strbuf_t *sb, const char *name, int n,
                                      const kiln_tir_expr_t *const *args, int lanes) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "T.%s(", name));
  KILN_RETURN_IF_ERROR(print_list(sb, n, args));
  return kiln_strbuf_appendf(sb, ", %d)", lanes);
}

static kiln_status_t print_atom(kiln_strbuf_t *sb, const kiln_tir_expr_t *e) {
  char text[24];
  switch (e->kind) {
  case KILN_TIR_EXPR_INT_IMM:
    return print_int(sb, e);
  case KILN_TIR_EXPR_FLOAT_IMM:
    return print_float(sb, e);
  case KILN_TIR_EXPR_VAR:
    return kiln_strbuf_append(sb, ((const kiln_tir_var_t *)e)->name);
  case KILN_TIR_EXPR_NOT:
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "not "));
    return print_prec(sb, ((const kiln_tir_not_t *)e)->a, 3);
  case KILN_TIR_EXPR_SELECT: {
    const kiln_tir_select_t *n = (const void *)e;
    const kiln_tir_expr_t *args[] = {n->condition, n->true_value, n->false_value};
    return print_call(sb, "Select", 3, args);
  }
  case KILN_TIR_EXPR_CAST:
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(sb, "T.Cast(\"%s\", ", kiln_tir_dtype_format(e->dtype, text)));
    KILN_RETURN_IF_ERROR(print_prec(sb, ((const kiln_tir_cast_t *)e)->value, 0));
    return kiln_strbuf_append_char(sb, ')');
  case KILN_TIR_EXPR_BUFFER_LOAD:
    return print_load(sb, (const void *)e);
  case KILN_TIR_EXPR_RAMP: {
    const kiln_tir_ramp_t *n = (const void *)e;
    const kiln_tir_expr_t *args[] = {n->start, n->stride};
    return print_lanes_call(sb, "ramp", 2, args, e->dtype.lanes);
  }
  case KILN_TIR_EXPR_BROADCAST:
    return print_lanes_call(sb, "broadcast", 1, &((const kiln_tir_broadcast_t *)e)->value,
                            e->dtype.lanes);
  case KILN_TIR_EXPR_CALL: {
    const kiln_tir_call_t *n = (const void *)e;
    return print_call(sb, kiln_tir_intrinsic_name(n->op), n->num_args, n->args);
  }
  case KILN_TIR_EXPR_LET: {
    const kiln_tir_let_t *n = (const void *)e;
    const kiln_tir_expr_t *args[] = {&n->var->base, n->value, n->body};
    return print_call(sb, "let", 3, args);
  }
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
    return print_binary(sb, e);
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INVALID_ARGUMENT, "print: invalid expression kind %d", (int)e->kind);
}

static int expr_precedence(const kiln_tir_expr_t *e) {
  const char *op = NULL;
  if (e->kind == KILN_TIR_EXPR_NOT) {
    return 3;
  }
  return binary_precedence(e->kind, &op);
}

static kiln_status_t print_prec(kiln_strbuf_t *sb, const kiln_tir_expr_t *e, int min_prec) {
  if (!e) {
    return KILN_STATUS(INVALID_ARGUMENT, "print: null expression");
  }
  int parens = expr_precedence(e) < min_prec;
  if (parens) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '('));
  }
  KILN_RETURN_IF_ERROR(print_atom(sb, e));
  return parens ? kiln_strbuf_append_char(sb, ')') : KILN_OK;
}

kiln_status_t kiln_tir_print_expr(kiln_strbuf_t *sb, const kiln_tir_expr_t *expr) {
  return print_prec(sb, expr, 0);
}

/* ---- statements ---- */

static kiln_status_t indent_line(kiln_strbuf_t *sb, int indent) {
  for (int i = 0; i < indent; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "    "));
  }
  return KILN_OK;
}

static kiln_status_t print_quoted(kiln_strbuf_t *sb, const char *text) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '"'));
  for (const char *p = text; *p; ++p) {
    if (*p == '"' || *p == '\\') {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '\\'));
    }
    if (*p == '\n') {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "\\n"));
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, *p));
  }
  return kiln_strbuf_append_char(sb, '"');
}

static kiln_status_t print_annotations(kiln_strbuf_t *sb, int n, const kiln_tir_annotation_t *a) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '{'));
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, i ? ", " : ""));
    KILN_RETURN_IF_ERROR(print_quoted(sb, a[i].key));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ": "));
    KILN_RETURN_IF_ERROR(print_quoted(sb, a[i].value));
  }
  return kiln_strbuf_append_char(sb, '}');
}

static kiln_status_t print_for(kiln_strbuf_t *sb, const kiln_tir_for_t *n, int indent) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "for %s in T.%s(", n->var->name,
                                           kiln_tir_for_kind_name(n->for_kind)));
  int64_t min = 0;
  if (kiln_tir_expr_as_int(n->min, &min) && min == 0) {
    KILN_RETURN_IF_ERROR(print_prec(sb, n->extent, 0));
  } else {
    KILN_RETURN_IF_ERROR(print_prec(sb, n->min, 0));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", "));
    KILN_RETURN_IF_ERROR(print_prec(sb, n->min, 5));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, " + "));
    KILN_RETURN_IF_ERROR(print_prec(sb, n->extent, 6));
  }
  if (n->num_annotations > 0) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", annotations="));
    KILN_RETURN_IF_ERROR(print_annotations(sb, n->num_annotations, n->annotations));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "):\n"));
  return kiln_tir_print_stmt(sb, n->body, indent + 1);
}

static kiln_status_t print_shape(kiln_strbuf_t *sb, int ndim, const kiln_tir_expr_t *const *dims) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '('));
  KILN_RETURN_IF_ERROR(print_list(sb, ndim, dims));
  return kiln_strbuf_append(sb, ndim == 1 ? ",)" : ")");
}

/* `(4, 5), "float32"` plus strides and offset when they are not the defaults. */
static kiln_status_t print_buffer_args(kiln_strbuf_t *sb, const kiln_tir_buffer_t *buffer) {
  KILN_RETURN_IF_ERROR(print_shape(sb, buffer->ndim, buffer->shape));
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, ", \"%s\"", kiln_dtype_name(buffer->dtype)));
  if (buffer->strides) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", strides="));
    KILN_RETURN_IF_ERROR(print_shape(sb, buffer->ndim, buffer->strides));
  }
  int64_t offset = 0;
  if (!kiln_tir_expr_as_int(buffer->elem_offset, &offset) || offset != 0) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", elem_offset="));
    KILN_RETURN_IF_ERROR(print_prec(sb, buffer->elem_offset, 0));
  }
  return KILN_OK;
}

static kiln_status_t print_store(kiln_strbuf_t *sb, const kiln_tir_buffer_store_t *n) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s[", n->buffer->name));
  KILN_RETURN_IF_ERROR(print_list(sb, n->num_indices, n->indices));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "] = "));
  KILN_RETURN_IF_ERROR(print_prec(sb, n->value, 0));
  return kiln_strbuf_append_char(sb, '\n');
}

static kiln_status_t print_if(kiln_strbuf_t *sb, const kiln_tir_if_then_else_t *n, int indent) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "if "));
  KILN_RETURN_IF_ERROR(print_prec(sb, n->condition, 0));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ":\n"));
  KILN_RETURN_IF_ERROR(kiln_tir_print_stmt(sb, n->then_case, indent + 1));
  if (!n->else_case) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(indent_line(sb, indent));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "else:\n"));
  return kiln_tir_print_stmt(sb, n->else_case, indent + 1);
}

static kiln_status_t print_line_stmt(kiln_strbuf_t *sb, const kiln_tir_stmt_t *stmt, int indent) {
  char text[24];
  switch (stmt->kind) {
  case KILN_TIR_STMT_FOR:
    return print_for(sb, (const void *)stmt, indent);
  case KILN_TIR_STMT_BUFFER_STORE:
    return print_store(sb, (const void *)stmt);
  case KILN_TIR_STMT_ALLOCATE: {
    const kiln_tir_allocate_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s = T.decl_buffer(", n->buffer->name));
    KILN_RETURN_IF_ERROR(print_buffer_args(sb, n->buffer));
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(sb, ", scope=\"%s\"%s)\n", kiln_tir_scope_name(n->scope),
                            n->init == KILN_TIR_INIT_ZERO ? ", init=\"zero\"" : ""));
    return kiln_tir_print_stmt(sb, n->body, indent);
  }
  case KILN_TIR_STMT_IF_THEN_ELSE:
    return print_if(sb, (const void *)stmt, indent);
  case KILN_TIR_STMT_LET_STMT: {
    const kiln_tir_let_stmt_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s: T.%s = ", n->var->name,
                                             kiln_tir_dtype_format(n->var->base.dtype, text)));
    KILN_RETURN_IF_ERROR(print_prec(sb, n->value, 0));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '\n'));
    return kiln_tir_print_stmt(sb, n->body, indent);
  }
  case KILN_TIR_STMT_EVALUATE:
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "T.evaluate("));
    KILN_RETURN_IF_ERROR(print_prec(sb, ((const kiln_tir_evaluate_t *)stmt)->value, 0));
    return kiln_strbuf_append(sb, ")\n");
  case KILN_TIR_STMT_PREFETCH:
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "T.prefetch("));
    KILN_RETURN_IF_ERROR(print_prec(sb, ((const kiln_tir_prefetch_t *)stmt)->load, 0));
    return kiln_strbuf_append(sb, ")\n");
  case KILN_TIR_STMT_ASSERT: {
    const kiln_tir_assert_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "assert "));
    KILN_RETURN_IF_ERROR(print_prec(sb, n->condition, 0));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", "));
    KILN_RETURN_IF_ERROR(print_quoted(sb, n->message));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '\n'));
    return kiln_tir_print_stmt(sb, n->body, indent);
  }
  case KILN_TIR_STMT_SEQ:
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INVALID_ARGUMENT, "print: invalid statement kind %d", (int)stmt->kind);
}

kiln_status_t kiln_tir_print_stmt(kiln_strbuf_t *sb, const kiln_tir_stmt_t *stmt, int indent) {
  if (!stmt) {
    return KILN_STATUS(INVALID_ARGUMENT, "print: null statement");
  }
  if (stmt->kind == KILN_TIR_STMT_SEQ) {
    const kiln_tir_seq_t *n = (const void *)stmt;
    if (n->count == 0) {
      KILN_RETURN_IF_ERROR(indent_line(sb, indent));
      return kiln_strbuf_append(sb, "pass\n");
    }
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(kiln_tir_print_stmt(sb, n->stmts[i], indent));
    }
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(indent_line(sb, indent));
  return print_line_stmt(sb, stmt, indent);
}

kiln_status_t kiln_tir_print_prim_func(kiln_strbuf_t *sb, const kiln_tir_prim_func_t *func) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "@T.prim_func\ndef %s(", func->name));
  for (int i = 0; i < func->num_params; ++i) {
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(sb, "%s%s: T.Buffer(", i ? ", " : "", func->params[i]->name));
    KILN_RETURN_IF_ERROR(print_buffer_args(sb, func->params[i]));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, ')'));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "):\n"));
  if (func->num_attrs > 0) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "    T.func_attr("));
    KILN_RETURN_IF_ERROR(print_annotations(sb, func->num_attrs, func->attrs));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ")\n"));
  }
  return kiln_tir_print_stmt(sb, func->body, 1);
}

/* ---- to text ---- */

typedef kiln_status_t (*print_fn)(kiln_strbuf_t *sb, const void *node);

static kiln_status_t print_expr_node(kiln_strbuf_t *sb, const void *node) {
  return kiln_tir_print_expr(sb, node);
}

static kiln_status_t print_stmt_node(kiln_strbuf_t *sb, const void *node) {
  return kiln_tir_print_stmt(sb, node, 0);
}

static kiln_status_t print_func_node(kiln_strbuf_t *sb, const void *node) {
  return kiln_tir_print_prim_func(sb, node);
}

static kiln_status_t to_text(kiln_allocator_t allocator, print_fn print, const void *node,
                             char **out_text) {
  *out_text = NULL;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_status_t status = print(&sb, node);
  if (!status) {
    status = kiln_strbuf_take(&sb, out_text);
  }
  kiln_strbuf_deinitialize(&sb);
  return status;
}

kiln_status_t kiln_tir_expr_to_text(kiln_allocator_t allocator, const kiln_tir_expr_t *expr,
                                    char **out_text) {
  return to_text(allocator, print_expr_node, expr, out_text);
}

kiln_status_t kiln_tir_stmt_to_text(kiln_allocator_t allocator, const kiln_tir_stmt_t *stmt,
                                    char **out_text) {
  return to_text(allocator, print_stmt_node, stmt, out_text);
}

kiln_status_t kiln_tir_prim_func_to_text(kiln_allocator_t allocator,
                                         const kiln_tir_prim_func_t *func, char **out_text) {
  return to_text(allocator, print_func_node, func, out_text);
}
