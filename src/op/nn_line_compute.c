/*
 * Reductions along the last axis in vector lanes (nn_compute.h), for the
 * operators that reduce each row of their data before mapping it: softmax
 * and log_softmax (the row's max, then its sum of exps) and layer_norm
 * (its sum, then its sum of squared deviations).
 *
 * One reduction over a row of C elements is a serial chain; written as
 * one te reduction it runs scalar, and softmax's exp is then a libm call
 * per element. te has no rfactor, so the rule splits the reduction
 * itself: a partial stage of KILN_NN_LINE_LANES lanes per row, lane l
 * reducing the elements l, l + lanes, l + 2 lanes, ... (contiguous vectors
 * of the row, which the schedule vectorizes, exp included), then the
 * row's value from its lanes. The last vector of a row whose length the
 * lanes do not divide reads a clamped position and is masked to the
 * reducer's identity. The order of the additions differs from a serial
 * sum's (by rounding only); max is exact.
 */
#include <stdio.h>

#include "op/nn_compute.h"

typedef struct lanes_t {
  const kiln_nn_line_reduce_t *r;
  const kiln_te_iter_var_t *p; /* the partial stage's reduction: vectors of the row */
  const kiln_te_iter_var_t *l; /* the final stage's: the lanes */
  const kiln_te_tensor_t *partial;
} lanes_t;

static const kiln_tir_expr_t *partial_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const lanes_t *lanes = user;
  const kiln_nn_line_reduce_t *r = lanes->r;
  const kiln_tir_expr_t *c = kiln_tir_b_add(
      b, kiln_tir_b_mul(b, kiln_tir_b_v(lanes->p->var), kiln_tir_b_i32(b, KILN_NN_LINE_LANES)),
      indices[r->rows_ndim]);
  if (r->extent % KILN_NN_LINE_LANES == 0) {
    return r->element(b, indices, c, r->user);
  }
  const kiln_tir_expr_t *value =
      r->element(b, indices, kiln_compute_clamp(b, c, 0, r->extent - 1), r->user);
  return kiln_tir_b_select(b, kiln_compute_in_range(b, c, 0, r->extent), value,
                           kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, r->identity));
}

static const kiln_tir_expr_t *final_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const lanes_t *lanes = user;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < lanes->r->rows_ndim; ++d) {
    at[d] = indices[d];
  }
  at[lanes->r->rows_ndim] = kiln_tir_b_v(lanes->l->var);
  return kiln_te_read(b, lanes->partial, lanes->r->rows_ndim + 1, at);
}

static kiln_status_t partial_stage(lanes_t *lanes, const char *name) {
  const kiln_nn_line_reduce_t *r = lanes->r;
  int64_t shape[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < r->rows_ndim; ++d) {
    shape[d] = r->rows_shape[d];
  }
  shape[r->rows_ndim] = KILN_NN_LINE_LANES;
  int64_t vectors = (r->extent + KILN_NN_LINE_LANES - 1) / KILN_NN_LINE_LANES;
  KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(r->args->arena, "p", 0, vectors, &lanes->p));
  return kiln_te_compute_reduce(r->args->arena, name, r->rows_ndim + 1, shape, r->reducer, r->init,
                                1, &lanes->p, r->num_inputs, r->inputs, partial_body, lanes,
                                &lanes->partial);
}

kiln_status_t kiln_nn_line_reduce(const kiln_nn_line_reduce_t *r,
                                  const kiln_te_tensor_t **out_tensor) {
  kiln_arena_t *arena = r->args->arena;
  lanes_t *lanes = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(*lanes), 8, (void **)&lanes));
  *lanes = (lanes_t){.r = r};
  char base[48], name[80];
  kiln_compute_tensor_name(r->args->op, base, sizeof(base));
  snprintf(name, sizeof(name), "%s_%s_lanes", base, r->stage);
  KILN_RETURN_IF_ERROR(partial_stage(lanes, name));
  KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(arena, "l", 0, KILN_NN_LINE_LANES, &lanes->l));
  snprintf(name, sizeof(name), "%s_%s", base, r->stage);
  return kiln_te_compute_reduce(arena, name, r->rows_ndim, r->rows_shape, r->reducer, r->init, 1,
                                &lanes->l, 1, &lanes->partial, final_body, lanes, out_tensor);
}
