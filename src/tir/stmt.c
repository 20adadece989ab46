/*
 * Loop-IR statements, buffers and PrimFuncs: the checking constructors; see
 * tir.h.
 *
 * As for expressions, every check comes before the first allocation and the
 * messages start with the node's kind name and name the buffer or variable.
 * Arrays handed in (indices, statements, annotations, shapes) are copied into
 * the arena, so callers may build them on the stack.
 */
#include <stdio.h>
#include <string.h>

#include "tir/tir.h"

static const char *const stmt_kind_names[] = {
#define KILN_TIR_STMT_KIND_NAME_(e, name) name,
    KILN_TIR_STMT_KIND_LIST(KILN_TIR_STMT_KIND_NAME_)
#undef KILN_TIR_STMT_KIND_NAME_
};

const char *kiln_tir_stmt_kind_name(kiln_tir_stmt_kind_t kind) {
  return (unsigned)kind < KILN_TIR_STMT_KIND_COUNT_ ? stmt_kind_names[kind] : "invalid";
}

const char *kiln_tir_for_kind_name(kiln_tir_for_kind_t kind) {
  switch (kind) {
  case KILN_TIR_FOR_SERIAL:
    return "serial";
  case KILN_TIR_FOR_PARALLEL:
    return "parallel";
  case KILN_TIR_FOR_VECTORIZED:
    return "vectorized";
  case KILN_TIR_FOR_UNROLLED:
    return "unroll";
  case KILN_TIR_FOR_COUNT_:
    break;
  }
  return "invalid";
}

const char *kiln_tir_scope_name(kiln_tir_scope_t scope) {
  switch (scope) {
  case KILN_TIR_SCOPE_GLOBAL:
    return "global";
  case KILN_TIR_SCOPE_LOCAL:
    return "local";
  case KILN_TIR_SCOPE_COUNT_:
    break;
  }
  return "invalid";
}

static kiln_status_t allocate_stmt(kiln_arena_t *arena, size_t size, kiln_tir_stmt_kind_t kind,
                                   void **out_node) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(arena, size, _Alignof(max_align_t), out_node));
  ((kiln_tir_stmt_t *)*out_node)->kind = kind;
  return KILN_OK;
}

static kiln_status_t copy_pointers(kiln_arena_t *arena, int count, const void *const *in,
                                   const void *const **out) {
  const void **copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(count > 0 ? count : 0),
                                                 sizeof(*copy), _Alignof(max_align_t),
                                                 (void **)&copy));
  for (int i = 0; i < count; ++i) {
    copy[i] = in[i];
  }
  *out = copy;
  return KILN_OK;
}

static kiln_status_t copy_annotations(kiln_arena_t *arena, int count,
                                      const kiln_tir_annotation_t *in,
                                      const kiln_tir_annotation_t **out) {
  kiln_tir_annotation_t *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(count > 0 ? count : 0),
                                                 sizeof(*copy), _Alignof(max_align_t),
                                                 (void **)&copy));
  for (int i = 0; i < count; ++i) {
    if (!in[i].key || !in[i].value) {
      return KILN_STATUS(INVALID_ARGUMENT, "annotation %d has a null key or value", i);
    }
    char *key = NULL, *value = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, in[i].key, &key));
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, in[i].value, &value));
    copy[i].key = key;
    copy[i].value = value;
  }
  *out = copy;
  return KILN_OK;
}

static kiln_status_t check_not_null(const char *what, const void *node, const char *role) {
  if (!node) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s is null", what, role);
  }
  return KILN_OK;
}

static kiln_status_t check_int_scalar(const char *what, const kiln_tir_expr_t *expr,
                                      const char *role) {
  KILN_RETURN_IF_ERROR(check_not_null(what, expr, role));
  if (!kiln_tir_dtype_is_int(expr->dtype) || expr->dtype.lanes != 1) {
    char text[24];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s must be a scalar integer, not %s", what, role,
                       kiln_tir_dtype_format(expr->dtype, text));
  }
  return KILN_OK;
}

static kiln_status_t check_bool_scalar(const char *what, const kiln_tir_expr_t *expr) {
  KILN_RETURN_IF_ERROR(check_not_null(what, expr, "condition"));
  if (!kiln_tir_dtype_is_bool(expr->dtype) || expr->dtype.lanes != 1) {
    char text[24];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: condition must be a scalar bool, not %s", what,
                       kiln_tir_dtype_format(expr->dtype, text));
  }
  return KILN_OK;
}

/* ---- buffers ---- */

kiln_status_t kiln_tir_buffer_create(kiln_arena_t *arena, const char *name, kiln_dtype_t dtype,
                                     int ndim, const kiln_tir_expr_t *const *shape,
                                     const kiln_tir_expr_t *const *strides,
                                     const kiln_tir_expr_t *elem_offset,
                                     const kiln_tir_buffer_t **out_buffer) {
  *out_buffer = NULL;
  if (!name || !name[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "Buffer: empty name");
  }
  if (ndim < 0 || ndim > KILN_TIR_MAX_DIMS) {
    return KILN_STATUS(INVALID_ARGUMENT, "Buffer %s: rank %d is outside [0, %d]", name, ndim,
                       KILN_TIR_MAX_DIMS);
  }
  if ((unsigned)dtype >= KILN_DTYPE_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "Buffer %s: invalid dtype %d", name, (int)dtype);
  }
  for (int i = 0; i < ndim; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(check_int_scalar("Buffer", shape[i], "shape"), "buffer %s", name);
    if (strides) {
      KILN_RETURN_IF_ERROR_ANNOTATE(check_int_scalar("Buffer", strides[i], "stride"), "buffer %s",
                                    name);
    }
  }
  if (elem_offset) {
    KILN_RETURN_IF_ERROR_ANNOTATE(check_int_scalar("Buffer", elem_offset, "elem_offset"),
                                  "buffer %s", name);
  } else {
    KILN_RETURN_IF_ERROR(
        kiln_tir_int_imm_create(arena, kiln_tir_scalar(KILN_DTYPE_INT32), 0, &elem_offset));
  }
  kiln_tir_buffer_t *buffer = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*buffer), _Alignof(max_align_t), (void **)&buffer));
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &copy));
  buffer->name = copy;
  buffer->dtype = dtype;
  buffer->ndim = ndim;
  KILN_RETURN_IF_ERROR(
      copy_pointers(arena, ndim, (const void *const *)shape, (const void *const **)&buffer->shape));
  if (strides) {
    KILN_RETURN_IF_ERROR(copy_pointers(arena, ndim, (const void *const *)strides,
                                       (const void *const **)&buffer->strides));
  }
  KILN_RETURN_IF_ERROR(
      kiln_tir_var_create(arena, name, kiln_tir_scalar(KILN_DTYPE_INT64), &buffer->data));
  buffer->elem_offset = elem_offset;
  *out_buffer = buffer;
  return KILN_OK;
}

kiln_status_t kiln_tir_buffer_create_const(kiln_arena_t *arena, const char *name,
                                           kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                           const kiln_tir_buffer_t **out_buffer) {
  *out_buffer = NULL;
  if (ndim < 0 || ndim > KILN_TIR_MAX_DIMS) {
    return KILN_STATUS(INVALID_ARGUMENT, "Buffer %s: rank %d is outside [0, %d]", name ? name : "?",
                       ndim, KILN_TIR_MAX_DIMS);
  }
  const kiln_tir_expr_t *dims[KILN_TIR_MAX_DIMS] = {0};
  for (int i = 0; i < ndim; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_tir_int_imm_create(arena, kiln_tir_scalar(KILN_DTYPE_INT32), shape[i], &dims[i]),
        "buffer %s dim %d", name ? name : "?", i);
  }
  return kiln_tir_buffer_create(arena, name, dtype, ndim, dims, NULL, NULL, out_buffer);
}

/* ---- statements ---- */

kiln_status_t kiln_tir_for_create(kiln_arena_t *arena, const kiln_tir_var_t *var,
                                  const kiln_tir_expr_t *min, const kiln_tir_expr_t *extent,
                                  kiln_tir_for_kind_t for_kind, const kiln_tir_stmt_t *body,
                                  int num_annotations, const kiln_tir_annotation_t *annotations,
                                  const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_int_scalar("For", var ? &var->base : NULL, "loop variable"));
  KILN_RETURN_IF_ERROR(check_int_scalar("For", min, "min"));
  KILN_RETURN_IF_ERROR(check_int_scalar("For", extent, "extent"));
  KILN_RETURN_IF_ERROR(check_not_null("For", body, "body"));
  if (!kiln_tir_dtype_equal(min->dtype, var->base.dtype) ||
      !kiln_tir_dtype_equal(extent->dtype, var->base.dtype)) {
    char tv[24], tm[24], te[24];
    return KILN_STATUS(INVALID_ARGUMENT, "For %s: loop variable is %s but min is %s, extent %s",
                       var->name, kiln_tir_dtype_format(var->base.dtype, tv),
                       kiln_tir_dtype_format(min->dtype, tm),
                       kiln_tir_dtype_format(extent->dtype, te));
  }
  if ((unsigned)for_kind >= KILN_TIR_FOR_COUNT_ || num_annotations < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "For %s: invalid kind %d or %d annotations", var->name,
                       (int)for_kind, num_annotations);
  }
  kiln_tir_for_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_FOR, (void **)&node));
  KILN_RETURN_IF_ERROR(copy_annotations(arena, num_annotations, annotations, &node->annotations));
  node->var = var;
  node->min = min;
  node->extent = extent;
  node->for_kind = for_kind;
  node->body = body;
  node->num_annotations = num_annotations;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_buffer_store_create(kiln_arena_t *arena, const kiln_tir_buffer_t *buffer,
                                           const kiln_tir_expr_t *value, int num_indices,
                                           const kiln_tir_expr_t *const *indices,
                                           const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_not_null("BufferStore", value, "value"));
  /* A load with the same indices checks them and gives the stored dtype. */
  const kiln_tir_expr_t *load = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_buffer_load_create(arena, buffer, num_indices, indices, &load));
  if (!kiln_tir_dtype_equal(load->dtype, value->dtype)) {
    char tb[24], tv[24];
    return KILN_STATUS(INVALID_ARGUMENT, "BufferStore: buffer %s takes %s, the value is %s",
                       buffer->name, kiln_tir_dtype_format(load->dtype, tb),
                       kiln_tir_dtype_format(value->dtype, tv));
  }
  kiln_tir_buffer_store_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_BUFFER_STORE, (void **)&node));
  node->buffer = buffer;
  node->value = value;
  node->num_indices = num_indices;
  node->indices = ((const kiln_tir_buffer_load_t *)load)->indices;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_allocate_create(kiln_arena_t *arena, const kiln_tir_buffer_t *buffer,
                                       kiln_tir_scope_t scope, kiln_tir_init_t init,
                                       const kiln_tir_stmt_t *body,
                                       const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_not_null("Allocate", buffer, "buffer"));
  KILN_RETURN_IF_ERROR(check_not_null("Allocate", body, "body"));
  if ((unsigned)scope >= KILN_TIR_SCOPE_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "Allocate %s: invalid scope %d", buffer->name, (int)scope);
  }
  if ((unsigned)init >= KILN_TIR_INIT_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "Allocate %s: invalid init %d", buffer->name, (int)init);
  }
  kiln_tir_allocate_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_ALLOCATE, (void **)&node));
  node->buffer = buffer;
  node->scope = scope;
  node->init = init;
  node->body = body;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_seq_create(kiln_arena_t *arena, int count,
                                  const kiln_tir_stmt_t *const *stmts,
                                  const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  if (count < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "SeqStmt: negative count %d", count);
  }
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(check_not_null("SeqStmt", stmts[i], "a statement"));
  }
  kiln_tir_seq_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_SEQ, (void **)&node));
  KILN_RETURN_IF_ERROR(
      copy_pointers(arena, count, (const void *const *)stmts, (const void *const **)&node->stmts));
  node->count = count;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_if_then_else_create(kiln_arena_t *arena, const kiln_tir_expr_t *condition,
                                           const kiln_tir_stmt_t *then_case,
                                           const kiln_tir_stmt_t *else_case,
                                           const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_bool_scalar("IfThenElse", condition));
  KILN_RETURN_IF_ERROR(check_not_null("IfThenElse", then_case, "then case"));
  kiln_tir_if_then_else_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_IF_THEN_ELSE, (void **)&node));
  node->condition = condition;
  node->then_case = then_case;
  node->else_case = else_case;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_let_stmt_create(kiln_arena_t *arena, const kiln_tir_var_t *var,
                                       const kiln_tir_expr_t *value, const kiln_tir_stmt_t *body,
                                       const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_not_null("LetStmt", var, "variable"));
  KILN_RETURN_IF_ERROR(check_not_null("LetStmt", value, "value"));
  KILN_RETURN_IF_ERROR(check_not_null("LetStmt", body, "body"));
  if (!kiln_tir_dtype_equal(var->base.dtype, value->dtype)) {
    char ta[24], tb[24];
    return KILN_STATUS(INVALID_ARGUMENT, "LetStmt: variable %s is %s but its value is %s",
                       var->name, kiln_tir_dtype_format(var->base.dtype, ta),
                       kiln_tir_dtype_format(value->dtype, tb));
  }
  kiln_tir_let_stmt_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_LET_STMT, (void **)&node));
  node->var = var;
  node->value = value;
  node->body = body;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_evaluate_create(kiln_arena_t *arena, const kiln_tir_expr_t *value,
                                       const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_not_null("Evaluate", value, "value"));
  kiln_tir_evaluate_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_EVALUATE, (void **)&node));
  node->value = value;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_prefetch_create(kiln_arena_t *arena, const kiln_tir_expr_t *load,
                                       const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_not_null("Prefetch", load, "load"));
  if (load->kind != KILN_TIR_EXPR_BUFFER_LOAD || load->dtype.lanes != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "Prefetch: takes a scalar BufferLoad, not a %s",
                       kiln_tir_expr_kind_name(load->kind));
  }
  kiln_tir_prefetch_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_PREFETCH, (void **)&node));
  node->load = load;
  *out_stmt = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_assert_create(kiln_arena_t *arena, const kiln_tir_expr_t *condition,
                                     const char *message, const kiln_tir_stmt_t *body,
                                     const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  KILN_RETURN_IF_ERROR(check_bool_scalar("AssertStmt", condition));
  KILN_RETURN_IF_ERROR(check_not_null("AssertStmt", message, "message"));
  KILN_RETURN_IF_ERROR(check_not_null("AssertStmt", body, "body"));
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, message, &copy));
  kiln_tir_assert_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_stmt(arena, sizeof(*node), KILN_TIR_STMT_ASSERT, (void **)&node));
  node->condition = condition;
  node->message = copy;
  node->body = body;
  *out_stmt = &node->base;
  return KILN_OK;
}

/* ---- functions ---- */

kiln_status_t kiln_tir_prim_func_create(kiln_arena_t *arena, const char *name, int num_params,
                                        const kiln_tir_buffer_t *const *params,
                                        const kiln_tir_stmt_t *body, int num_attrs,
                                        const kiln_tir_annotation_t *attrs,
                                        const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!name || !name[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "PrimFunc: empty name");
  }
  KILN_RETURN_IF_ERROR(check_not_null("PrimFunc", body, "body"));
  if (num_params < 0 || num_attrs < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "PrimFunc %s: negative parameter or attribute count",
                       name);
  }
  for (int i = 0; i < num_params; ++i) {
    KILN_RETURN_IF_ERROR(check_not_null("PrimFunc", params[i], "a parameter"));
    for (int j = 0; j < i; ++j) {
      if (params[j] == params[i]) {
        return KILN_STATUS(INVALID_ARGUMENT, "PrimFunc %s: buffer %s is parameter %d and %d", name,
                           params[i]->name, j, i);
      }
    }
  }
  kiln_tir_prim_func_t *func = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*func), _Alignof(max_align_t), (void **)&func));
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &copy));
  func->name = copy;
  KILN_RETURN_IF_ERROR(copy_pointers(arena, num_params, (const void *const *)params,
                                     (const void *const **)&func->params));
  KILN_RETURN_IF_ERROR(copy_annotations(arena, num_attrs, attrs, &func->attrs));
  func->num_params = num_params;
  func->body = body;
  func->num_attrs = num_attrs;
  *out_func = func;
  return KILN_OK;
}

void kiln_tir_buffer_shape_text(const kiln_tir_buffer_t *buffer, char *text, size_t capacity) {
  size_t n = (size_t)snprintf(text, capacity, "(");
  for (int d = 0; d < buffer->ndim && n + 40 < capacity; ++d) {
    int64_t extent = 0;
    const kiln_tir_expr_t *dim = buffer->shape[d];
    const char *sep = d ? ", " : "";
    if (kiln_tir_expr_as_int(dim, &extent)) {
      n += (size_t)snprintf(text + n, capacity - n, "%s%lld", sep, (long long)extent);
    } else {
      n += (size_t)snprintf(text + n, capacity - n, "%s%.20s", sep,
                            dim->kind == KILN_TIR_EXPR_VAR ? ((const kiln_tir_var_t *)dim)->name
                                                           : "?");
    }
  }
  snprintf(text + n, capacity - n, buffer->ndim == 1 ? ",)" : ")");
}
