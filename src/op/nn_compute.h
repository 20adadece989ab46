/*
 * Compute rules of the nn families that work along one axis or a window:
 * the norms and per-channel maps (nn_norm_compute.c), pooling
 * (nn_pool_compute.c), softmax, log_softmax and lrn (nn_softmax_compute.c)
 * and layout_transform (nn_layout_compute.c). The family files name these
 * functions in their operator definitions.
 *
 * The small static inline helpers below are shared by those four files:
 * a one-argument intrinsic call, and index lists with one index replaced,
 * dropped or inserted. The dtype check and the index clamp they use are
 * compute.h's.
 */
#ifndef KILN_OP_NN_COMPUTE_H_
#define KILN_OP_NN_COMPUTE_H_

#include "op/compute.h"

/* nn.batch_norm, nn.layer_norm, nn.bias_add, nn.prelu, nn.instance_norm. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_nn_norm(const kiln_compute_args_t *args,
                                                        kiln_compute_result_t *out_result);
/* nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_nn_pool(const kiln_compute_args_t *args,
                                                        kiln_compute_result_t *out_result);
/* Window cells up to which the pool schedule unrolls both window loops. */
#define KILN_SCHEDULE_POOL_UNROLL_CELLS 16
/* The widest register tile of the pool schedule in channel-innermost
 * layouts (output columns by one channel vector). */
#define KILN_SCHEDULE_POOL_REG_N 4
/* The x86 pool schedule (schedule_x86_pool.c): the four pooling operators. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_pool_x86(const kiln_schedule_target_t *target,
                                                          const kiln_compute_args_t *args,
                                                          const kiln_compute_result_t *result,
                                                          struct kiln_te_schedule_t *schedule);
/* nn.softmax and nn.log_softmax. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_nn_softmax(const kiln_compute_args_t *args,
                                                           kiln_compute_result_t *out_result);
/* nn.lrn. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_nn_lrn(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);
/* layout_transform. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_layout_transform(const kiln_compute_args_t *args,
                                                                 kiln_compute_result_t *out_result);

/* ---- helpers of the nn compute rules ---- */

/* f(x) for a one-argument intrinsic. */
static inline const kiln_tir_expr_t *kiln_nn_c_call1(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op,
                                                     const kiln_tir_expr_t *x) {
  return kiln_tir_b_call(b, op, 1, &x);
}

/* Copies `indices` (n of them) into `out`, replacing index `axis` by
 * `value` (NULL: dropping it, so `out` gets n - 1). */
static inline void kiln_nn_c_replace_index(int n, const kiln_tir_expr_t *const *indices, int axis,
                                           const kiln_tir_expr_t *value,
                                           const kiln_tir_expr_t **out) {
  int k = 0;
  for (int d = 0; d < n; ++d) {
    if (d != axis) {
      out[k++] = indices[d];
    } else if (value) {
      out[k++] = value;
    }
  }
}

/* The indices of a tensor of rank n + 1 from those of one of rank n that
 * dropped `axis`: `value` goes in at `axis`. */
static inline void kiln_nn_c_insert_index(int n, const kiln_tir_expr_t *const *indices, int axis,
                                          const kiln_tir_expr_t *value,
                                          const kiln_tir_expr_t **out) {
  for (int d = 0, k = 0; d <= n; ++d) {
    out[d] = d == axis ? value : indices[k++];
  }
}

/* A float constant made outside any fcompute (a reduction's init). */
static inline kiln_status_t kiln_nn_c_float_const(kiln_arena_t *arena, kiln_dtype_t dtype,
                                                  double value, const kiln_tir_expr_t **out_expr) {
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, arena);
  *out_expr = kiln_tir_b_float(&b, dtype, value);
  return kiln_tir_builder_finish(&b);
}

/* ---- reductions along the last axis in lanes (nn_line_compute.c) ---- */

/* Lanes of a line reduction's partial stage: a vector of AVX-512 floats
 * (two of AVX2's). */
#define KILN_NN_LINE_LANES 16

/* The element of the line at position `c` (in bounds) of the row at the
 * reduced tensor's `row` indices. */
typedef const kiln_tir_expr_t *(*kiln_nn_line_element_fn)(kiln_tir_builder_t *b,
                                                          const kiln_tir_expr_t *const *row,
                                                          const kiln_tir_expr_t *c, void *user);

/* A reduction of each row's `extent` elements along the data's last axis,
 * as two stages: T_<op>_<stage>_lanes (rows..., KILN_NN_LINE_LANES), lane
 * l reducing the elements c = p * lanes + l (positions past the line are
 * `identity`), then T_<op>_<stage> (rows...) reducing the lanes. The
 * schedule vectorizes the first over its lanes (kiln_schedule_line_x86).
 * `init` as kiln_te_compute_reduce's (NULL: the reducer's own). */
typedef struct kiln_nn_line_reduce_t {
  const kiln_compute_args_t *args;
  const char *stage;
  int rows_ndim;
  const int64_t *rows_shape;
  int64_t extent;
  kiln_te_reducer_t reducer;
  const kiln_tir_expr_t *init;
  double identity;
  int num_inputs;
  const kiln_te_tensor_t *const *inputs;
  kiln_nn_line_element_fn element;
  void *user;
} kiln_nn_line_reduce_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_nn_line_reduce(const kiln_nn_line_reduce_t *r,
                                                       const kiln_te_tensor_t **out_tensor);

/* The x86 schedule of softmax, log_softmax and layer_norm along the last
 * axis (schedule_x86_line.c); other axes: the default schedule. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_line_x86(const kiln_schedule_target_t *target,
                                                          const kiln_compute_args_t *args,
                                                          const kiln_compute_result_t *result,
                                                          struct kiln_te_schedule_t *schedule);
/* Whether the operator (softmax, log_softmax, layer_norm) works along the
 * data's last axis, where the compute rules reduce in lanes. */
bool kiln_nn_line_axis_is_last(const kiln_compute_args_t *args);

#endif /* KILN_OP_NN_COMPUTE_H_ */
