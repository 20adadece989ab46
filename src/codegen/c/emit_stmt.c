/*
 * Statements of the loop IR as C statements; see emit.h.
 *
 * A loop counts an int64 k over [0, extent) and binds its variable to
 * min + k in its own dtype, as the interpreter does. Allocate makes a stack
 * array when the scope is local and the size a constant of at most
 * KILN_CODEGEN_STACK_BYTES, and a workspace (kiln_backend_alloc_workspace,
 * freed after its body) otherwise, either zeroed when its init is
 * KILN_TIR_INIT_ZERO; every error exit frees the
 * workspaces live at that point (kiln_cg_fail_exit). A parallel loop becomes
 * its outlined lambda (written to cg->lambdas) and a launch.
 */
#include <stdio.h>

#include "codegen/c/emit.h"

#define A(...) KILN_RETURN_IF_ERROR(kiln_cg_printf(cg, __VA_ARGS__))
#define L(...) KILN_RETURN_IF_ERROR(kiln_cg_line(cg, __VA_ARGS__))

static kiln_status_t emit_block(kiln_cg_t *cg, const kiln_tir_stmt_t *body) {
  ++cg->indent;
  kiln_status_t status = kiln_cg_stmt(cg, body);
  --cg->indent;
  return status;
}

static kiln_status_t emit_for(kiln_cg_t *cg, const kiln_tir_for_t *n) {
  if (n->for_kind == KILN_TIR_FOR_PARALLEL) {
    return kiln_cg_parallel(cg, n);
  }
  const char *name = NULL, *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, n->var, &name));
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->var->base.dtype, &type));
  L("for (int64_t %s_k = 0, %s_n = (int64_t)", name, name);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->extent));
  A("; %s_k < %s_n; ++%s_k) {\n", name, name, name);
  ++cg->indent;
  L("const %s %s = (%s)(", type, name, type);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->min));
  A(" + %s_k);\n", name);
  --cg->indent;
  KILN_RETURN_IF_ERROR(emit_block(cg, n->body));
  L("}\n");
  return KILN_OK;
}

static kiln_status_t emit_store_body(kiln_cg_t *cg, const kiln_tir_buffer_store_t *n) {
  const char *data = NULL, *mem = kiln_cg_mem_type(n->buffer->dtype), *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, n->buffer->data, &data));
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->value->dtype, &type));
  int is_bool = n->buffer->dtype == KILN_DTYPE_BOOL, lanes = n->value->dtype.lanes;
  int narrow = kiln_cg_is_narrow(n->buffer->dtype);
  const char *name = narrow ? kiln_cg_narrow_name(n->buffer->dtype) : "";
  if (lanes == 1) {
    L("((%s *)%s)[", mem, data);
    KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, n->buffer, n->num_indices, n->indices, 0));
    if (narrow) {
      A("] = kiln_scalar_float32_to_%s(", name);
    } else {
      A(is_bool ? "] = (uint8_t)(" : "] = (%s)(", mem);
    }
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
    A(is_bool ? " != 0);\n" : ");\n");
    return KILN_OK;
  }
  L("{\n");
  ++cg->indent;
  L("%s _v = ", type);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
  A(";\n");
  int64_t stride = 0;
  if (!is_bool && !narrow && n->num_indices == 1 && n->indices[0]->kind == KILN_TIR_EXPR_RAMP &&
      (n->buffer->ndim != 1 || !n->buffer->strides ||
       (kiln_tir_expr_as_int(n->buffer->strides[0], &stride) && stride == 1)) &&
      kiln_tir_expr_as_int(((const kiln_tir_ramp_t *)n->indices[0])->stride, &stride) &&
      stride == 1) {
    L("__builtin_memcpy((%s *)%s + ", mem, data);
    KILN_RETURN_IF_ERROR(
        kiln_cg_offset(cg, n->buffer, 1, &((const kiln_tir_ramp_t *)n->indices[0])->start, 0));
    A(", &_v, %d * sizeof(%s));\n", lanes, mem);
  } else {
    L("%s", "");
    KILN_RETURN_IF_ERROR(kiln_cg_index_temps(cg, n->num_indices, n->indices));
    A("\n");
    L("for (int _l = 0; _l < %d; ++_l) ((%s *)%s)[", lanes, mem, data);
    KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, n->buffer, n->num_indices, n->indices, 1));
    if (narrow) {
      A("] = kiln_scalar_float32_to_%s(_v[_l]);\n", name);
    } else {
      A(is_bool ? "] = (uint8_t)(_v[_l] != 0);\n" : "] = _v[_l];\n");
    }
  }
  --cg->indent;
  L("}\n");
  return KILN_OK;
}

/* The store in a block that first declares the nodes its value and indices
 * share. */
static kiln_status_t emit_store(kiln_cg_t *cg, const kiln_tir_buffer_store_t *n) {
  const kiln_tir_expr_t *exprs[KILN_TIR_MAX_DIMS + 1];
  exprs[0] = n->value;
  for (int i = 0; i < n->num_indices && i < KILN_TIR_MAX_DIMS; ++i) {
    exprs[i + 1] = n->indices[i];
  }
  size_t mark = kiln_array_count(&cg->hoisted_stack);
  L("{\n");
  ++cg->indent;
  kiln_status_t status = kiln_cg_hoist(cg, 1 + n->num_indices, exprs);
  if (!status) {
    status = emit_store_body(cg, n);
  }
  --cg->indent;
  kiln_cg_unhoist(cg, mark);
  KILN_RETURN_IF_ERROR(status);
  L("}\n");
  return KILN_OK;
}

/* The element count of a buffer as a C expression. */
static kiln_status_t emit_count(kiln_cg_t *cg, const kiln_tir_buffer_t *buffer) {
  A("(int64_t)1");
  for (int d = 0; d < buffer->ndim; ++d) {
    A(" * (int64_t)");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, buffer->shape[d]));
  }
  return KILN_OK;
}

static int64_t constant_count(const kiln_tir_buffer_t *buffer) {
  int64_t count = 1;
  for (int d = 0; d < buffer->ndim; ++d) {
    int64_t extent = 0;
    if (!kiln_tir_expr_as_int(buffer->shape[d], &extent) || extent < 0 ||
        __builtin_mul_overflow(count, extent, &count)) {
      return -1;
    }
  }
  return count;
}

static kiln_status_t emit_allocate(kiln_cg_t *cg, const kiln_tir_allocate_t *n) {
  const kiln_tir_buffer_t *buffer = n->buffer;
  const char *data = NULL, *mem = kiln_cg_mem_type(buffer->dtype);
  if (!mem) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the C backend does not support %s (Allocate %s)",
                       cg->func->name, kiln_dtype_name(buffer->dtype), buffer->name);
  }
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, buffer->data, &data));
  int64_t count = constant_count(buffer);
  L("{\n");
  ++cg->indent;
  if (n->scope == KILN_TIR_SCOPE_LOCAL && count >= 0 &&
      count * (int64_t)kiln_dtype_size(buffer->dtype) <= KILN_CODEGEN_STACK_BYTES) {
    L("%s %s_stack[%lld] __attribute__((aligned(64)))%s;\n", mem, data,
      (long long)(count > 0 ? count : 1), n->init == KILN_TIR_INIT_ZERO ? " = {0}" : "");
    L("void *%s = %s_stack;\n", data, data);
    KILN_RETURN_IF_ERROR(kiln_cg_stmt(cg, n->body));
  } else {
    L("const size_t %s_bytes = (size_t)(", data);
    KILN_RETURN_IF_ERROR(emit_count(cg, buffer));
    A(") * sizeof(%s);\n", mem);
    L("void *%s = __kiln_backend_alloc_workspace(%s_bytes);\n", data, data);
    L("if (!%s) { ", data);
    KILN_RETURN_IF_ERROR(kiln_cg_fail_exit(cg));
    A(" }\n");
    if (n->init == KILN_TIR_INIT_ZERO) {
      L("memset(%s, 0, %s_bytes);\n", data, data);
    }
    KILN_RETURN_IF_ERROR(kiln_array_push(&cg->workspaces, &data));
    kiln_status_t status = kiln_cg_stmt(cg, n->body);
    (void)kiln_array_pop(&cg->workspaces, NULL);
    KILN_RETURN_IF_ERROR(status);
    L("__kiln_backend_free_workspace(%s);\n", data);
  }
  --cg->indent;
  L("}\n");
  return KILN_OK;
}

static kiln_status_t emit_if(kiln_cg_t *cg, const kiln_tir_if_then_else_t *n) {
  L("if (");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->condition));
  A(") {\n");
  KILN_RETURN_IF_ERROR(emit_block(cg, n->then_case));
  if (n->else_case) {
    L("} else {\n");
    KILN_RETURN_IF_ERROR(emit_block(cg, n->else_case));
  }
  L("}\n");
  return KILN_OK;
}

static kiln_status_t emit_let(kiln_cg_t *cg, const kiln_tir_let_stmt_t *n) {
  const char *name = NULL, *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, n->var, &name));
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->var->base.dtype, &type));
  L("{\n");
  ++cg->indent;
  L("const %s %s = ", type, name);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
  A(";\n");
  KILN_RETURN_IF_ERROR(kiln_cg_stmt(cg, n->body));
  --cg->indent;
  L("}\n");
  return KILN_OK;
}

static kiln_status_t emit_assert(kiln_cg_t *cg, const kiln_tir_assert_t *n) {
  L("if (!(");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->condition));
  A(")) { __kiln_backend_set_last_error(");
  char prefix[256];
  snprintf(prefix, sizeof(prefix), "%s: assertion failed: ", cg->func->name);
  KILN_RETURN_IF_ERROR(kiln_cg_string(cg, prefix));
  A(" ");
  KILN_RETURN_IF_ERROR(kiln_cg_string(cg, n->message ? n->message : ""));
  A("); ");
  KILN_RETURN_IF_ERROR(kiln_cg_fail_exit(cg));
  A(" }\n");
  return kiln_cg_stmt(cg, n->body);
}

/* __builtin_prefetch(address, read, to L2). */
static kiln_status_t emit_prefetch(kiln_cg_t *cg, const kiln_tir_prefetch_t *n) {
  const kiln_tir_buffer_load_t *load = (const void *)n->load;
  const char *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, load->buffer->data, &data));
  L("__builtin_prefetch((const %s *)%s + (", kiln_cg_mem_type(load->buffer->dtype), data);
  KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, load->buffer, load->num_indices, load->indices, 0));
  A("), 0, 2);\n");
  return KILN_OK;
}

kiln_status_t kiln_cg_stmt(kiln_cg_t *cg, const kiln_tir_stmt_t *s) {
  switch (s->kind) {
  case KILN_TIR_STMT_FOR:
    return emit_for(cg, (const void *)s);
  case KILN_TIR_STMT_BUFFER_STORE:
    return emit_store(cg, (const void *)s);
  case KILN_TIR_STMT_ALLOCATE:
    return emit_allocate(cg, (const void *)s);
  case KILN_TIR_STMT_SEQ: {
    const kiln_tir_seq_t *n = (const void *)s;
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(kiln_cg_stmt(cg, n->stmts[i]));
    }
    return KILN_OK;
  }
  case KILN_TIR_STMT_IF_THEN_ELSE:
    return emit_if(cg, (const void *)s);
  case KILN_TIR_STMT_LET_STMT:
    return emit_let(cg, (const void *)s);
  case KILN_TIR_STMT_EVALUATE:
    L("(void)");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, ((const kiln_tir_evaluate_t *)s)->value));
    A(";\n");
    return KILN_OK;
  case KILN_TIR_STMT_ASSERT:
    return emit_assert(cg, (const void *)s);
  case KILN_TIR_STMT_PREFETCH:
    return emit_prefetch(cg, (const void *)s);
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "%s: invalid statement kind %d", cg->func->name, (int)s->kind);
}
