/*
 * A loop-IR builder with a sticky status, for code that makes many nodes.
 *
 * Writing `a*4 + b` with the checking constructors of tir.h takes a status
 * check per node. The builder wraps them: each kiln_tir_b_* call returns the
 * new node, or NULL once any call has failed, and keeps the first failure;
 * a NULL operand (from an earlier failure) makes the call return NULL without
 * a new error. The caller checks once, with kiln_tir_builder_finish, which
 * hands the first failure over (or OK). Tensor-expression lowering, schedule
 * passes and tests build IR this way; nothing is lost, since every node still
 * passes through the checking constructor.
 */
#ifndef KILN_TIR_BUILDER_H_
#define KILN_TIR_BUILDER_H_

#include "tir/tir.h"

typedef struct kiln_tir_builder_t {
  kiln_arena_t *arena;
  kiln_status_t status; /* the first failure, or OK */
} kiln_tir_builder_t;

void kiln_tir_builder_initialize(kiln_tir_builder_t *b, kiln_arena_t *arena);
/* Hands over the first failure (the builder is left OK and reusable). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_builder_finish(kiln_tir_builder_t *b);

/* int32 and float32 constants, and constants of any dtype. */
const kiln_tir_expr_t *kiln_tir_b_i32(kiln_tir_builder_t *b, int64_t value);
const kiln_tir_expr_t *kiln_tir_b_f32(kiln_tir_builder_t *b, double value);
const kiln_tir_expr_t *kiln_tir_b_int(kiln_tir_builder_t *b, kiln_dtype_t dtype, int64_t value);
const kiln_tir_expr_t *kiln_tir_b_float(kiln_tir_builder_t *b, kiln_dtype_t dtype, double value);
const kiln_tir_var_t *kiln_tir_b_var(kiln_tir_builder_t *b, const char *name, kiln_dtype_t dtype);
/* The variable as an expression (NULL stays NULL). */
const kiln_tir_expr_t *kiln_tir_b_v(const kiln_tir_var_t *var);
const kiln_tir_expr_t *kiln_tir_b_bin(kiln_tir_builder_t *b, kiln_tir_expr_kind_t kind,
                                      const kiln_tir_expr_t *x, const kiln_tir_expr_t *y);
const kiln_tir_expr_t *kiln_tir_b_add(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                      const kiln_tir_expr_t *y);
const kiln_tir_expr_t *kiln_tir_b_mul(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                      const kiln_tir_expr_t *y);
const kiln_tir_expr_t *kiln_tir_b_not(kiln_tir_builder_t *b, const kiln_tir_expr_t *x);
const kiln_tir_expr_t *kiln_tir_b_select(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                         const kiln_tir_expr_t *t, const kiln_tir_expr_t *f);
const kiln_tir_expr_t *kiln_tir_b_cast(kiln_tir_builder_t *b, kiln_tir_dtype_t dtype,
                                       const kiln_tir_expr_t *x);
const kiln_tir_expr_t *kiln_tir_b_load(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                       int n, const kiln_tir_expr_t *const *indices);
const kiln_tir_expr_t *kiln_tir_b_ramp(kiln_tir_builder_t *b, const kiln_tir_expr_t *start,
                                       const kiln_tir_expr_t *stride, int lanes);
const kiln_tir_expr_t *kiln_tir_b_broadcast(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                            int lanes);
const kiln_tir_expr_t *kiln_tir_b_call(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op, int n,
                                       const kiln_tir_expr_t *const *args);
const kiln_tir_expr_t *kiln_tir_b_let(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                      const kiln_tir_expr_t *value, const kiln_tir_expr_t *body);

const kiln_tir_buffer_t *kiln_tir_b_buffer(kiln_tir_builder_t *b, const char *name,
                                           kiln_dtype_t dtype, int ndim, const int64_t *shape);
const kiln_tir_stmt_t *kiln_tir_b_for(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                      const kiln_tir_expr_t *min, const kiln_tir_expr_t *extent,
                                      kiln_tir_for_kind_t kind, const kiln_tir_stmt_t *body);
const kiln_tir_stmt_t *kiln_tir_b_store(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                        const kiln_tir_expr_t *value, int n,
                                        const kiln_tir_expr_t *const *indices);
const kiln_tir_stmt_t *kiln_tir_b_allocate(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                           kiln_tir_scope_t scope, kiln_tir_init_t init,
                                           const kiln_tir_stmt_t *body);
const kiln_tir_stmt_t *kiln_tir_b_seq(kiln_tir_builder_t *b, int n,
                                      const kiln_tir_stmt_t *const *stmts);
const kiln_tir_stmt_t *kiln_tir_b_if(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                     const kiln_tir_stmt_t *then_case,
                                     const kiln_tir_stmt_t *else_case);
const kiln_tir_stmt_t *kiln_tir_b_let_stmt(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                           const kiln_tir_expr_t *value,
                                           const kiln_tir_stmt_t *body);
const kiln_tir_stmt_t *kiln_tir_b_evaluate(kiln_tir_builder_t *b, const kiln_tir_expr_t *x);
const kiln_tir_stmt_t *kiln_tir_b_prefetch(kiln_tir_builder_t *b, const kiln_tir_expr_t *load);
const kiln_tir_stmt_t *kiln_tir_b_assert(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                         const char *message, const kiln_tir_stmt_t *body);
const kiln_tir_prim_func_t *kiln_tir_b_func(kiln_tir_builder_t *b, const char *name, int n,
                                            const kiln_tir_buffer_t *const *params,
                                            const kiln_tir_stmt_t *body);

#endif /* KILN_TIR_BUILDER_H_ */
