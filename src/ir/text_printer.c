/*
 * The IR text printer; see text.h for the format.
 *
 * Each function is printed from its canonical order (ir/order.h), one line
 * per numbered node, so the %N of the text are the numbers every error
 * message uses, and the walk is a loop, never a recursion. A nested
 * Function is printed as a block at the place of the nodes that make up its
 * body: the order puts those just before the Function node, so the block is
 * the longest run of nodes ending there that are all reachable from the
 * function's body (computed with the function's own order). Two such blocks
 * are nested or apart, never overlapping, so one pass over the order with a
 * stack of open functions prints them: a block opens at its first node and
 * closes at its Function node.
 *
 * Names: %N numbers are per top-level function (nested bodies included).
 * Vars are named in scopes: the parameters of a function are visible in it
 * and in the functions nested in it, and a Var is printed under a name no
 * other visible Var has. A name is first made a valid name
 * ([A-Za-z_][A-Za-z0-9_.]*: other characters become '_', a name that does
 * not start with a letter or '_' gets a '_' in front), then, while another
 * visible Var has it, "_1", "_2", ... is appended. Function names follow the
 * same rule over the module. Constants are meta[Constant][k], k counting
 * distinct Constant nodes in the order the text first mentions them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "ir/order.h"
#include "ir/text.h"
#include "ir/text_metadata.h"
#include "op/op.h"

/* A nested function's block: order indexes [start, end], end being the
 * Function node. */
typedef struct printer_block_t {
  size_t start;
  size_t end;
} printer_block_t;

typedef struct printer_t {
  kiln_strbuf_t *sb;
  kiln_allocator_t allocator;
  kiln_arena_t scratch;          /* printed names */
  kiln_hashmap_t constant_index; /* kiln_constant_t * -> k + 1 */
  kiln_array_t constants;        /* kiln_constant_t *, by k */
  kiln_hashmap_t globals;        /* printed function names */
  /* per top-level function */
  kiln_ir_order_t order;
  kiln_hashmap_t numbers;   /* numbered node -> N + 1 */
  kiln_hashmap_t var_names; /* kiln_var_t * -> printed name */
  kiln_hashmap_t visible;   /* printed name -> kiln_var_t * */
  kiln_array_t scope_names; /* const char *: visible names, innermost last */
  kiln_array_t scope_marks; /* size_t: scope_names count when each function opened */
  kiln_array_t blocks;      /* printer_block_t, by start, outer first */
  kiln_array_t open_nodes;  /* size_t: order index of each open function */
} printer_t;

static void printer_initialize(printer_t *p, kiln_strbuf_t *sb) {
  memset(p, 0, sizeof(*p));
  p->sb = sb;
  p->allocator = sb->allocator;
  kiln_allocator_t a = p->allocator;
  kiln_arena_initialize(&p->scratch, a, 0);
  kiln_hashmap_initialize(&p->constant_index, a, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&p->constants, a, sizeof(kiln_constant_t *));
  kiln_hashmap_initialize(&p->globals, a, KILN_HASHMAP_KEY_STRING);
  kiln_array_initialize(&p->order.nodes, a, sizeof(kiln_expr_t *));
  kiln_array_initialize(&p->order.numbers, a, sizeof(int));
  kiln_hashmap_initialize(&p->numbers, a, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&p->var_names, a, KILN_HASHMAP_KEY_POINTER);
  kiln_hashmap_initialize(&p->visible, a, KILN_HASHMAP_KEY_STRING);
  kiln_array_initialize(&p->scope_names, a, sizeof(const char *));
  kiln_array_initialize(&p->scope_marks, a, sizeof(size_t));
  kiln_array_initialize(&p->blocks, a, sizeof(printer_block_t));
  kiln_array_initialize(&p->open_nodes, a, sizeof(size_t));
}

static void printer_deinitialize(printer_t *p) {
  kiln_array_deinitialize(&p->open_nodes);
  kiln_array_deinitialize(&p->blocks);
  kiln_array_deinitialize(&p->scope_marks);
  kiln_array_deinitialize(&p->scope_names);
  kiln_hashmap_deinitialize(&p->visible);
  kiln_hashmap_deinitialize(&p->var_names);
  kiln_hashmap_deinitialize(&p->numbers);
  kiln_ir_order_deinitialize(&p->order);
  kiln_hashmap_deinitialize(&p->globals);
  kiln_array_deinitialize(&p->constants);
  kiln_hashmap_deinitialize(&p->constant_index);
  kiln_arena_deinitialize(&p->scratch);
}

/* ---- names ---- */

static bool name_char_ok(char c, bool first) {
  bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return letter || (!first && ((c >= '0' && c <= '9') || c == '.'));
}

/* `raw` made a valid name, then suffixed until `taken` does not have it. */
static kiln_status_t printer_unique_name(printer_t *p, const char *raw, const kiln_hashmap_t *taken,
                                         char **out_name) {
  size_t length = strlen(raw);
  char *base = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&p->scratch, length + 2, 1, (void **)&base));
  size_t n = 0;
  if (!name_char_ok(raw[0], true)) {
    base[n++] = '_';
  }
  for (size_t i = 0; i < length; ++i) {
    base[n++] = name_char_ok(raw[i], false) ? raw[i] : '_';
  }
  base[n] = '\0';
  char *name = base;
  for (unsigned suffix = 1; kiln_hashmap_contains(taken, name); ++suffix) {
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(&p->scratch, n + 16, 1, (void **)&name));
    snprintf(name, n + 16, "%s_%u", base, suffix);
  }
  *out_name = name;
  return KILN_OK;
}

/* Names `var` in the innermost open scope. */
static kiln_status_t printer_declare_var(printer_t *p, kiln_var_t *var, const char **out_name) {
  char *name = NULL;
  KILN_RETURN_IF_ERROR(printer_unique_name(p, var->name, &p->visible, &name));
  KILN_RETURN_IF_ERROR(kiln_array_reserve(&p->scope_names, kiln_array_count(&p->scope_names) + 1));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&p->var_names, var, name));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&p->visible, name, var));
  const char *stored = name;
  KILN_RETURN_IF_ERROR(kiln_array_push(&p->scope_names, &stored));
  *out_name = name;
  return KILN_OK;
}

static kiln_status_t printer_open_scope(printer_t *p) {
  size_t mark = kiln_array_count(&p->scope_names);
  return kiln_array_push(&p->scope_marks, &mark);
}

static void printer_close_scope(printer_t *p) {
  size_t mark = 0;
  kiln_array_pop(&p->scope_marks, &mark);
  const char *name = NULL;
  while (kiln_array_count(&p->scope_names) > mark) {
    kiln_array_pop(&p->scope_names, &name);
    kiln_hashmap_remove(&p->visible, name, NULL);
  }
}

/* ---- pieces ---- */

static kiln_status_t printer_append(printer_t *p, const char *text) {
  return kiln_strbuf_append(p->sb, text);
}

static kiln_status_t printer_indent(printer_t *p) {
  size_t depth = 1 + kiln_array_count(&p->open_nodes);
  for (size_t i = 0; i < depth; ++i) {
    KILN_RETURN_IF_ERROR(printer_append(p, "  "));
  }
  return KILN_OK;
}

static kiln_status_t printer_constant_ref(printer_t *p, kiln_constant_t *constant) {
  void *found = NULL;
  size_t k = 0;
  if (kiln_hashmap_get(&p->constant_index, constant, &found)) {
    k = (size_t)(uintptr_t)found - 1;
  } else {
    k = kiln_array_count(&p->constants);
    KILN_RETURN_IF_ERROR(kiln_array_reserve(&p->constants, k + 1));
    KILN_RETURN_IF_ERROR(
        kiln_hashmap_put(&p->constant_index, constant, (void *)(uintptr_t)(k + 1)));
    KILN_RETURN_IF_ERROR(kiln_array_push(&p->constants, &constant));
  }
  return kiln_strbuf_appendf(p->sb, "meta[Constant][%zu]", k);
}

/* How a node is mentioned: %3, %data, meta[Constant][0]. */
static kiln_status_t printer_ref(printer_t *p, kiln_expr_t *expr) {
  void *found = NULL;
  kiln_var_t *var = kiln_expr_as_var(expr);
  if (var != NULL) {
    const char *name = NULL;
    if (kiln_hashmap_get(&p->var_names, var, &found)) {
      name = found;
    } else {
      KILN_RETURN_IF_ERROR(printer_declare_var(p, var, &name)); /* a free Var */
    }
    return kiln_strbuf_appendf(p->sb, "%%%s", name);
  }
  kiln_constant_t *constant = kiln_expr_as_constant(expr);
  if (constant != NULL) {
    return printer_constant_ref(p, constant);
  }
  if (!kiln_hashmap_get(&p->numbers, expr, &found)) {
    return KILN_STATUS(INTERNAL, "printer: a %s node is used outside the function's order",
                       kiln_expr_kind_name(expr->kind));
  }
  return kiln_strbuf_appendf(p->sb, "%%%d", (int)(uintptr_t)found - 1);
}

static kiln_status_t printer_type_comment(printer_t *p, const kiln_type_t *type) {
  if (type == NULL) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(printer_append(p, " /* "));
  KILN_RETURN_IF_ERROR(kiln_type_format(type, p->sb));
  return printer_append(p, " */");
}

/* "(%a: T, %b: T, Primitive=1) -> T {", declaring the parameters. */
static kiln_status_t printer_signature(printer_t *p, const kiln_function_t *function) {
  KILN_RETURN_IF_ERROR(printer_append(p, "("));
  for (int i = 0; i < function->num_params; ++i) {
    const char *name = NULL;
    KILN_RETURN_IF_ERROR(printer_declare_var(p, function->params[i], &name));
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(p->sb, "%s%%%s", i > 0 ? ", " : "", name));
    if (function->params[i]->type_annotation != NULL) {
      KILN_RETURN_IF_ERROR(printer_append(p, ": "));
      KILN_RETURN_IF_ERROR(kiln_type_format(function->params[i]->type_annotation, p->sb));
    }
  }
  if (function->primitive) {
    KILN_RETURN_IF_ERROR(
        printer_append(p, function->num_params > 0 ? ", Primitive=1" : "Primitive=1"));
  }
  KILN_RETURN_IF_ERROR(printer_append(p, ")"));
  if (function->ret_type != NULL) {
    KILN_RETURN_IF_ERROR(printer_append(p, " -> "));
    KILN_RETURN_IF_ERROR(kiln_type_format(function->ret_type, p->sb));
  }
  return printer_append(p, " {\n");
}

static kiln_status_t printer_args(printer_t *p, int count, kiln_expr_t *const *args) {
  for (int i = 0; i < count; ++i) {
    if (i > 0) {
      KILN_RETURN_IF_ERROR(printer_append(p, ", "));
    }
    KILN_RETURN_IF_ERROR(printer_ref(p, args[i]));
  }
  return KILN_OK;
}

/* ", name=value" for every attribute that differs from its default. */
static kiln_status_t printer_attrs(printer_t *p, const kiln_call_t *call) {
  const kiln_op_t *op = call->op;
  bool first = call->num_args == 0;
  for (int i = 0; call->attrs != NULL && i < op->num_attr_fields; ++i) {
    const kiln_attr_field_t *field = &op->attr_fields[i];
    bool is_default = false;
    KILN_RETURN_IF_ERROR(
        kiln_op_attrs_field_is_default(op, call->attrs, field, p->allocator, &is_default));
    if (is_default) {
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(p->sb, "%s%s=", first ? "" : ", ", field->name));
    KILN_RETURN_IF_ERROR(kiln_op_attrs_format_field(op, call->attrs, field, p->sb));
    first = false;
  }
  return KILN_OK;
}

static kiln_status_t printer_call(printer_t *p, const kiln_call_t *call) {
  if (call->op != NULL) {
    KILN_RETURN_IF_ERROR(printer_append(p, call->op->name));
  } else {
    KILN_RETURN_IF_ERROR(printer_ref(p, &call->callee->base));
  }
  KILN_RETURN_IF_ERROR(printer_append(p, "("));
  KILN_RETURN_IF_ERROR(printer_args(p, call->num_args, call->args));
  if (call->op != NULL) {
    KILN_RETURN_IF_ERROR(printer_attrs(p, call));
  }
  return printer_append(p, ")");
}

static kiln_status_t printer_tuple(printer_t *p, const kiln_tuple_t *tuple) {
  KILN_RETURN_IF_ERROR(printer_append(p, "("));
  KILN_RETURN_IF_ERROR(printer_args(p, tuple->num_fields, tuple->fields));
  return printer_append(p, tuple->num_fields == 1 ? ",)" : ")");
}

/* %4.1; a Var is parenthesized, (%t).1, since a name may contain ".1". */
static kiln_status_t printer_get_item(printer_t *p, const kiln_tuple_get_item_t *item) {
  bool var = item->tuple->kind == KILN_EXPR_KIND_VAR;
  KILN_RETURN_IF_ERROR(printer_append(p, var ? "(" : ""));
  KILN_RETURN_IF_ERROR(printer_ref(p, item->tuple));
  return kiln_strbuf_appendf(p->sb, "%s.%d", var ? ")" : "", item->index);
}

/* The line "%N = rhs" with its type comment, for a numbered node other than a
 * Function. */
static kiln_status_t printer_line(printer_t *p, kiln_expr_t *expr, int number) {
  KILN_RETURN_IF_ERROR(printer_indent(p));
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(p->sb, "%%%d = ", number));
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL:
    KILN_RETURN_IF_ERROR(printer_call(p, kiln_expr_as_call(expr)));
    break;
  case KILN_EXPR_KIND_TUPLE:
    KILN_RETURN_IF_ERROR(printer_tuple(p, kiln_expr_as_tuple(expr)));
    break;
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    KILN_RETURN_IF_ERROR(printer_get_item(p, kiln_expr_as_tuple_get_item(expr)));
    break;
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    return KILN_STATUS(INTERNAL, "printer: no line for a %s node", kiln_expr_kind_name(expr->kind));
  }
  KILN_RETURN_IF_ERROR(printer_type_comment(p, expr->checked_type));
  return printer_append(p, ";\n");
}

/* ---- nested functions ---- */

/* The first order index of the block ending at the Function node `end`. */
static kiln_status_t printer_block_start(printer_t *p, size_t end, size_t *out_start) {
  const kiln_function_t *function = kiln_expr_as_function(kiln_ir_order_node(&p->order, end));
  kiln_ir_order_t inner;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, p->allocator, &inner));
  kiln_hashmap_t reachable;
  kiln_hashmap_initialize(&reachable, p->allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = KILN_OK;
  for (size_t i = 0; i < kiln_ir_order_count(&inner) && status == KILN_OK; ++i) {
    status = kiln_hashmap_put(&reachable, kiln_ir_order_node(&inner, i), &reachable);
  }
  size_t start = end;
  while (start > 0 && kiln_hashmap_contains(&reachable, kiln_ir_order_node(&p->order, start - 1))) {
    start--;
  }
  kiln_hashmap_deinitialize(&reachable);
  kiln_ir_order_deinitialize(&inner);
  *out_start = start;
  return status;
}

static int printer_block_compare(const void *a, const void *b) {
  const printer_block_t *x = a;
  const printer_block_t *y = b;
  if (x->start != y->start) {
    return x->start < y->start ? -1 : 1;
  }
  return x->end > y->end ? -1 : (x->end < y->end ? 1 : 0); /* outer first */
}

static kiln_status_t printer_find_blocks(printer_t *p) {
  kiln_array_clear(&p->blocks);
  for (size_t i = 0; i < kiln_ir_order_count(&p->order); ++i) {
    if (kiln_ir_order_node(&p->order, i)->kind != KILN_EXPR_KIND_FUNCTION) {
      continue;
    }
    printer_block_t block = {.end = i};
    KILN_RETURN_IF_ERROR(printer_block_start(p, i, &block.start));
    KILN_RETURN_IF_ERROR(kiln_array_push(&p->blocks, &block));
  }
  if (kiln_array_count(&p->blocks) > 1) {
    qsort(kiln_array_data(&p->blocks), kiln_array_count(&p->blocks), sizeof(printer_block_t),
          printer_block_compare);
  }
  return KILN_OK;
}

static kiln_status_t printer_open_function(printer_t *p, size_t end) {
  const kiln_function_t *function = kiln_expr_as_function(kiln_ir_order_node(&p->order, end));
  KILN_RETURN_IF_ERROR(printer_indent(p));
  KILN_RETURN_IF_ERROR(
      kiln_strbuf_appendf(p->sb, "%%%d = fn ", kiln_ir_order_number(&p->order, end)));
  KILN_RETURN_IF_ERROR(kiln_array_reserve(&p->open_nodes, kiln_array_count(&p->open_nodes) + 1));
  KILN_RETURN_IF_ERROR(printer_open_scope(p));
  KILN_RETURN_IF_ERROR(kiln_array_push(&p->open_nodes, &end));
  return printer_signature(p, function);
}

/* The body's result line, then "};" one level out. */
static kiln_status_t printer_close_function(printer_t *p, size_t index) {
  kiln_expr_t *node = kiln_ir_order_node(&p->order, index);
  size_t open_count = kiln_array_count(&p->open_nodes);
  if (open_count == 0 || KILN_ARRAY_AT(&p->open_nodes, size_t, open_count - 1) != index) {
    return KILN_STATUS(INTERNAL, "printer: function blocks do not nest at %%%d",
                       kiln_ir_order_number(&p->order, index));
  }
  KILN_RETURN_IF_ERROR(printer_indent(p));
  KILN_RETURN_IF_ERROR(printer_ref(p, kiln_expr_as_function(node)->body));
  KILN_RETURN_IF_ERROR(printer_append(p, "\n"));
  kiln_array_pop(&p->open_nodes, NULL);
  printer_close_scope(p);
  KILN_RETURN_IF_ERROR(printer_indent(p));
  KILN_RETURN_IF_ERROR(printer_append(p, "}"));
  KILN_RETURN_IF_ERROR(printer_type_comment(p, node->checked_type));
  return printer_append(p, ";\n");
}

/* ---- functions and the module ---- */

static kiln_status_t printer_number_nodes(printer_t *p) {
  for (size_t i = 0; i < kiln_ir_order_count(&p->order); ++i) {
    int number = kiln_ir_order_number(&p->order, i);
    if (number >= 0) {
      KILN_RETURN_IF_ERROR(kiln_hashmap_put(&p->numbers, kiln_ir_order_node(&p->order, i),
                                            (void *)(uintptr_t)(number + 1)));
    }
  }
  return KILN_OK;
}

static kiln_status_t printer_body(printer_t *p) {
  size_t next_block = 0;
  size_t block_count = kiln_array_count(&p->blocks);
  for (size_t i = 0; i < kiln_ir_order_count(&p->order); ++i) {
    while (next_block < block_count &&
           KILN_ARRAY_AT(&p->blocks, printer_block_t, next_block).start == i) {
      KILN_RETURN_IF_ERROR(
          printer_open_function(p, KILN_ARRAY_AT(&p->blocks, printer_block_t, next_block).end));
      next_block++;
    }
    kiln_expr_t *node = kiln_ir_order_node(&p->order, i);
    if (node->kind == KILN_EXPR_KIND_FUNCTION) {
      KILN_RETURN_IF_ERROR(printer_close_function(p, i));
    } else if (kiln_ir_expr_is_numbered(node)) {
      KILN_RETURN_IF_ERROR(printer_line(p, node, kiln_ir_order_number(&p->order, i)));
    }
  }
  return KILN_OK;
}

static void printer_reset_function(printer_t *p) {
  kiln_ir_order_deinitialize(&p->order);
  kiln_hashmap_clear(&p->numbers);
  kiln_hashmap_clear(&p->var_names);
  kiln_hashmap_clear(&p->visible);
  kiln_array_clear(&p->scope_names);
  kiln_array_clear(&p->scope_marks);
  kiln_array_clear(&p->open_nodes);
}

static kiln_status_t printer_function(printer_t *p, const char *name,
                                      const kiln_function_t *function) {
  printer_reset_function(p);
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, p->allocator, &p->order));
  KILN_RETURN_IF_ERROR(printer_number_nodes(p));
  KILN_RETURN_IF_ERROR(printer_find_blocks(p));
  char *global = NULL;
  KILN_RETURN_IF_ERROR(printer_unique_name(p, name, &p->globals, &global));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&p->globals, global, global));
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(p->sb, "def @%s", global));
  KILN_RETURN_IF_ERROR(printer_open_scope(p));
  KILN_RETURN_IF_ERROR(printer_signature(p, function));
  KILN_RETURN_IF_ERROR(printer_body(p));
  KILN_RETURN_IF_ERROR(printer_indent(p));
  KILN_RETURN_IF_ERROR(printer_ref(p, function->body));
  return printer_append(p, "\n}\n");
}

static kiln_status_t printer_metadata(printer_t *p) {
  if (kiln_array_count(&p->constants) == 0) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(printer_append(p, "\n#[metadata]\n"));
  for (size_t k = 0; k < kiln_array_count(&p->constants); ++k) {
    const kiln_tensor_t *value = KILN_ARRAY_AT(&p->constants, kiln_constant_t *, k)->value;
    const kiln_type_t *type = NULL;
    KILN_RETURN_IF_ERROR(kiln_tensor_type_of(&p->scratch, value, &type));
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(p->sb, "Constant[%zu] = ", k));
    KILN_RETURN_IF_ERROR(kiln_type_format(type, p->sb));
    KILN_RETURN_IF_ERROR(printer_append(p, " "));
    KILN_RETURN_IF_ERROR(kiln_text_format_tensor_values(value, p->sb));
    KILN_RETURN_IF_ERROR(printer_append(p, "\n"));
  }
  return KILN_OK;
}

static kiln_status_t printer_module(printer_t *p, const kiln_module_t *module,
                                    const kiln_ir_print_options_t *options) {
  for (int i = 0; i < kiln_module_function_count(module); ++i) {
    if (i > 0) {
      KILN_RETURN_IF_ERROR(printer_append(p, "\n"));
    }
    const char *name = kiln_module_function_name(module, i);
    KILN_RETURN_IF_ERROR_ANNOTATE(printer_function(p, name, kiln_module_function_at(module, i)),
                                  "printing @%s", name);
  }
  if (options != NULL && options->include_metadata) {
    KILN_RETURN_IF_ERROR(printer_metadata(p));
  }
  return KILN_OK;
}

kiln_status_t kiln_ir_print_module(const kiln_module_t *module,
                                   const kiln_ir_print_options_t *options, kiln_strbuf_t *sb) {
  printer_t printer;
  printer_initialize(&printer, sb);
  kiln_status_t status = printer_module(&printer, module, options);
  printer_deinitialize(&printer);
  return status;
}
