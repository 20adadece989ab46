/*
 * Compute rules of the transform operators (transform_shape_compute.c,
 * transform_index_compute.c, transform_spatial_compute.c), named by the
 * family files' operator definitions, and the small helpers the three
 * files share.
 *
 * Every rule is injective: each output element is one load of an input at
 * indices computed from the output's (TVM's topi transform computes). The
 * loop IR's Select evaluates both of its sides, so an index that is only
 * used on one side of a Select is clamped into its buffer; the simplifier
 * removes the clamps it can prove redundant.
 */
#ifndef KILN_OP_TRANSFORM_COMPUTE_H_
#define KILN_OP_TRANSFORM_COMPUTE_H_

#include <string.h>

#include "op/compute.h"

/* reshape, expand_dims, squeeze and nn.batch_flatten: the element order is
 * kept, so an output index becomes a flat index and then input indices. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_reshape(const kiln_compute_args_t *args,
                                                        kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_transpose(const kiln_compute_args_t *args,
                                                          kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_cast(const kiln_compute_args_t *args,
                                                     kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_tile(const kiln_compute_args_t *args,
                                                     kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_broadcast_to(const kiln_compute_args_t *args,
                                                             kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_concatenate(const kiln_compute_args_t *args,
                                                            kiln_compute_result_t *out_result);
/* concatenate's x86 schedule (schedule_x86_concat.c): the axes but the
 * last fused and parallel, the last vectorized, the epilogue inlined. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_concatenate_x86(
    const kiln_schedule_target_t *target, const kiln_compute_args_t *args,
    const kiln_compute_result_t *result, struct kiln_te_schedule_t *schedule);
/* One output tensor per part (T_split_0, T_split_1, ...). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_split(const kiln_compute_args_t *args,
                                                      kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_strided_slice(const kiln_compute_args_t *args,
                                                              kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_take(const kiln_compute_args_t *args,
                                                     kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_pad(const kiln_compute_args_t *args,
                                                    kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_resize2d(const kiln_compute_args_t *args,
                                                         kiln_compute_result_t *out_result);
/* nn.depth_to_space and nn.space_to_depth. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_depth_space(const kiln_compute_args_t *args,
                                                            kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_grid_sample(const kiln_compute_args_t *args,
                                                            kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_einsum(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_dft(const kiln_compute_args_t *args,
                                                    kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_roi_align(const kiln_compute_args_t *args,
                                                          kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_det(const kiln_compute_args_t *args,
                                                    kiln_compute_result_t *out_result);

/* ---- shared by the three files ---- */

/* The type of a placeholder tensor, for the attribute helpers of
 * transform_common.h and their error messages. */
static inline kiln_tensor_type_t kiln_tcompute_type_of(const kiln_te_tensor_t *tensor) {
  kiln_tensor_type_t type;
  memset(&type, 0, sizeof(type));
  type.dtype = tensor->dtype;
  type.ndim = tensor->ndim;
  type.shape = tensor->shape;
  return type;
}

/* A float64 constant, and x converted to float64: for the rules that
 * compute in double as their reference kernels do (resize2d, grid_sample,
 * dft, roi_align). */
static inline const kiln_tir_expr_t *kiln_tcompute_f64(kiln_tir_builder_t *b, double value) {
  return kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, value);
}

static inline const kiln_tir_expr_t *kiln_tcompute_as_f64(kiln_tir_builder_t *b,
                                                          const kiln_tir_expr_t *x) {
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT64), x);
}

#endif /* KILN_OP_TRANSFORM_COMPUTE_H_ */
