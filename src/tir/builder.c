/*
 * The sticky-status builder; see builder.h.
 *
 * Every wrapper has the same shape: return NULL when an earlier call failed,
 * otherwise call the checking constructor and keep its failure. A NULL
 * operand can only come from an earlier failure (which already stopped the
 * builder) or from the caller, and the constructor reports the latter.
 */
#include "tir/builder.h"

#define KILN_TIR_B_CALL_(type, call) \
  do {                               \
    if (b->status) {                 \
      return NULL;                   \
    }                                \
    type out_ = NULL;                \
    b->status = (call);              \
    return b->status ? NULL : out_;  \
  } while (0)

void kiln_tir_builder_initialize(kiln_tir_builder_t *b, kiln_arena_t *arena) {
  b->arena = arena;
  b->status = KILN_OK;
}

kiln_status_t kiln_tir_builder_finish(kiln_tir_builder_t *b) {
  kiln_status_t status = b->status;
  b->status = KILN_OK;
  return status;
}

const kiln_tir_expr_t *kiln_tir_b_i32(kiln_tir_builder_t *b, int64_t value) {
  return kiln_tir_b_int(b, KILN_DTYPE_INT32, value);
}

const kiln_tir_expr_t *kiln_tir_b_f32(kiln_tir_builder_t *b, double value) {
  return kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, value);
}

const kiln_tir_expr_t *kiln_tir_b_int(kiln_tir_builder_t *b, kiln_dtype_t dtype, int64_t value) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *,
                   kiln_tir_int_imm_create(b->arena, kiln_tir_scalar(dtype), value, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_float(kiln_tir_builder_t *b, kiln_dtype_t dtype, double value) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *,
                   kiln_tir_float_imm_create(b->arena, kiln_tir_scalar(dtype), value, &out_));
}

const kiln_tir_var_t *kiln_tir_b_var(kiln_tir_builder_t *b, const char *name, kiln_dtype_t dtype) {
  KILN_TIR_B_CALL_(const kiln_tir_var_t *,
                   kiln_tir_var_create(b->arena, name, kiln_tir_scalar(dtype), &out_));
}

const kiln_tir_expr_t *kiln_tir_b_v(const kiln_tir_var_t *var) {
  return var ? &var->base : NULL;
}

const kiln_tir_expr_t *kiln_tir_b_bin(kiln_tir_builder_t *b, kiln_tir_expr_kind_t kind,
                                      const kiln_tir_expr_t *x, const kiln_tir_expr_t *y) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_binary_create(b->arena, kind, x, y, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_add(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                      const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_ADD, x, y);
}

const kiln_tir_expr_t *kiln_tir_b_mul(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                      const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MUL, x, y);
}

const kiln_tir_expr_t *kiln_tir_b_not(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_not_create(b->arena, x, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_select(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                         const kiln_tir_expr_t *t, const kiln_tir_expr_t *f) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_select_create(b->arena, c, t, f, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_cast(kiln_tir_builder_t *b, kiln_tir_dtype_t dtype,
                                       const kiln_tir_expr_t *x) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_cast_create(b->arena, dtype, x, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_load(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                       int n, const kiln_tir_expr_t *const *indices) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *,
                   kiln_tir_buffer_load_create(b->arena, buffer, n, indices, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_ramp(kiln_tir_builder_t *b, const kiln_tir_expr_t *start,
                                       const kiln_tir_expr_t *stride, int lanes) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *,
                   kiln_tir_ramp_create(b->arena, start, stride, lanes, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_broadcast(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                            int lanes) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_broadcast_create(b->arena, x, lanes, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_call(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op, int n,
                                       const kiln_tir_expr_t *const *args) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_call_create(b->arena, op, n, args, &out_));
}

const kiln_tir_expr_t *kiln_tir_b_let(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                      const kiln_tir_expr_t *value, const kiln_tir_expr_t *body) {
  KILN_TIR_B_CALL_(const kiln_tir_expr_t *, kiln_tir_let_create(b->arena, var, value, body, &out_));
}

const kiln_tir_buffer_t *kiln_tir_b_buffer(kiln_tir_builder_t *b, const char *name,
                                           kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  KILN_TIR_B_CALL_(const kiln_tir_buffer_t *,
                   kiln_tir_buffer_create_const(b->arena, name, dtype, ndim, shape, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_for(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                      const kiln_tir_expr_t *min, const kiln_tir_expr_t *extent,
                                      kiln_tir_for_kind_t kind, const kiln_tir_stmt_t *body) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *,
                   kiln_tir_for_create(b->arena, var, min, extent, kind, body, 0, NULL, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_store(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                        const kiln_tir_expr_t *value, int n,
                                        const kiln_tir_expr_t *const *indices) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *,
                   kiln_tir_buffer_store_create(b->arena, buffer, value, n, indices, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_allocate(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                           kiln_tir_scope_t scope, kiln_tir_init_t init,
                                           const kiln_tir_stmt_t *body) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *,
                   kiln_tir_allocate_create(b->arena, buffer, scope, init, body, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_seq(kiln_tir_builder_t *b, int n,
                                      const kiln_tir_stmt_t *const *stmts) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *, kiln_tir_seq_create(b->arena, n, stmts, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_if(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                     const kiln_tir_stmt_t *then_case,
                                     const kiln_tir_stmt_t *else_case) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *,
                   kiln_tir_if_then_else_create(b->arena, c, then_case, else_case, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_let_stmt(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                           const kiln_tir_expr_t *value,
                                           const kiln_tir_stmt_t *body) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *,
                   kiln_tir_let_stmt_create(b->arena, var, value, body, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_evaluate(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *, kiln_tir_evaluate_create(b->arena, x, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_prefetch(kiln_tir_builder_t *b, const kiln_tir_expr_t *load) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *, kiln_tir_prefetch_create(b->arena, load, &out_));
}

const kiln_tir_stmt_t *kiln_tir_b_assert(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                         const char *message, const kiln_tir_stmt_t *body) {
  KILN_TIR_B_CALL_(const kiln_tir_stmt_t *,
                   kiln_tir_assert_create(b->arena, c, message, body, &out_));
}

const kiln_tir_prim_func_t *kiln_tir_b_func(kiln_tir_builder_t *b, const char *name, int n,
                                            const kiln_tir_buffer_t *const *params,
                                            const kiln_tir_stmt_t *body) {
  KILN_TIR_B_CALL_(const kiln_tir_prim_func_t *,
                   kiln_tir_prim_func_create(b->arena, name, n, params, body, 0, NULL, &out_));
}
