/*
 * Compute rules of the reductions (reduce_compute.c), the axis operators
 * cumsum and topk (transform_axis_compute.c), arange, one_hot and trilu
 * (transform_create_compute.c) and the gathers and scatters
 * (transform_gather_compute.c), named by the family files' operator
 * definitions; docs/compute-gather.md says how each is expressed.
 *
 * The kiln_gather_* helpers below are shared by those files for the
 * hand-written loops of extern ops (tensor-expression computes need none of
 * them): a serial loop nest over a shape, loads and stores that accept rank
 * 0, and negative-index wrapping. They use the builder's sticky status, so a
 * caller checks once.
 */
#ifndef KILN_OP_GATHER_COMPUTE_H_
#define KILN_OP_GATHER_COMPUTE_H_

#include "op/op.h"
#include "te/te.h"
#include "tir/builder.h"

/* sum, mean, max, min, prod. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_reduce(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);
/* sum over the axes its second input holds at run time (dyn.sum; none:
 * every axis): every dim has a reduce axis and the dims not named are
 * masked, so each output element reads the whole input. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_sum_any_axes(const kiln_compute_args_t *args,
                                                             bool keepdims,
                                                             kiln_compute_result_t *out_result);
/* argmax, argmin. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_argreduce(const kiln_compute_args_t *args,
                                                          kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_cumsum(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);
/* cumsum along the axis its second input holds at run time (dyn.cumsum):
 * one walk per axis in the kernel, an assertion that the axis is in range. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_cumsum_any_axis(const kiln_compute_args_t *args,
                                                                bool exclusive, bool reverse,
                                                                kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_topk(const kiln_compute_args_t *args,
                                                     kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_arange(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);
/* A float64 expression converted to `dtype` as kiln_scalar_store converts
 * a double (floats rounded, integers truncated and saturated): a value the
 * reference reads as a double, read in the kernel (dyn.pad's fill). */
const kiln_tir_expr_t *kiln_compute_from_f64(kiln_tir_builder_t *b, const kiln_tir_expr_t *v,
                                             kiln_dtype_t dtype);
/* arange's element `index`: start + index * step (float64 expressions),
 * converted to `dtype` as the reference stores it; dyn.arange's too. */
const kiln_tir_expr_t *kiln_compute_arange_element(kiln_tir_builder_t *b,
                                                   const kiln_tir_expr_t *index,
                                                   const kiln_tir_expr_t *start,
                                                   const kiln_tir_expr_t *step, kiln_dtype_t dtype);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_one_hot(const kiln_compute_args_t *args,
                                                        kiln_compute_result_t *out_result);
/* one_hot whose depth (input 1, truncated) and off and on values (input 2)
 * are read in the kernel (dyn.one_hot). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_one_hot_inputs(const kiln_compute_args_t *args,
                                                               int64_t axis, kiln_dtype_t dtype,
                                                               kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_trilu(const kiln_compute_args_t *args,
                                                      kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_gather(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_gather_nd(const kiln_compute_args_t *args,
                                                          kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_scatter_elements(const kiln_compute_args_t *args,
                                                                 kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_scatter_nd(const kiln_compute_args_t *args,
                                                           kiln_compute_result_t *out_result);

/* The stage T_<op>_index of inputs[1] (an index tensor into axis `axis` of
 * inputs[0]): each index asserted in [-dim, dim) at run time, naming the
 * operator, the axis and its size, and stored wrapped to [0, dim) as
 * int32. gather and take (mode "fast") read the data through it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_gather_checked_indices(
    const kiln_compute_args_t *args, int axis, const struct kiln_te_tensor_t **out_checked);

/* The output stage T_<op> of `fn` over inputs[0] and the checked indices
 * (kiln_gather_checked_indices), of the call's output type. */
KILN_MUST_USE_RESULT kiln_status_t kiln_gather_output_stage(const kiln_compute_args_t *args,
                                                            kiln_te_fcompute_fn fn, void *user,
                                                            const struct kiln_te_tensor_t *checked,
                                                            kiln_compute_result_t *out_result);

/* ---- loops of extern bodies ---- */

/* A nest of serial loops over `shape`: make the variables with
 * kiln_gather_nest_begin, build the body from `index`, then wrap it with
 * kiln_gather_nest_end (outermost loop first in `index`). */
typedef struct kiln_gather_nest_t {
  int ndim;
  const int64_t *shape;
  const kiln_tir_var_t *vars[KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *index[KILN_TIR_MAX_DIMS]; /* int32 */
} kiln_gather_nest_t;

void kiln_gather_nest_begin(kiln_tir_builder_t *b, const char *prefix, int ndim,
                            const int64_t *shape, kiln_gather_nest_t *out_nest);
const kiln_tir_stmt_t *kiln_gather_nest_end(kiln_tir_builder_t *b, const kiln_gather_nest_t *nest,
                                            const kiln_tir_stmt_t *body);
/* A load or store of `buffer` at n indices; rank 0 uses the flat index 0. */
const kiln_tir_expr_t *kiln_gather_load(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                        int n, const kiln_tir_expr_t *const *indices);
const kiln_tir_stmt_t *kiln_gather_store(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                         const kiln_tir_expr_t *value, int n,
                                         const kiln_tir_expr_t *const *indices);
/* Statement sequence of two (either may be NULL: the other alone). */
const kiln_tir_stmt_t *kiln_gather_seq2(kiln_tir_builder_t *b, const kiln_tir_stmt_t *first,
                                        const kiln_tir_stmt_t *second);
/* An integer index `raw` (any integer dtype) on a dim of extent `dim`,
 * negative ones counted from the end, as int32 (the loop IR's index type). */
const kiln_tir_expr_t *kiln_gather_wrap_index(kiln_tir_builder_t *b, const kiln_tir_expr_t *raw,
                                              int64_t dim);
/* `body` behind an assertion that raw index `raw` is in [-dim, dim); the
 * message names the operator, the axis and its size, as the reference
 * kernel's OUT_OF_RANGE does. */
const kiln_tir_stmt_t *kiln_gather_assert_index(kiln_tir_builder_t *b, const kiln_op_t *op,
                                                const kiln_tir_expr_t *raw, int axis, int64_t dim,
                                                const kiln_tir_stmt_t *body);

#endif /* KILN_OP_GATHER_COMPUTE_H_ */
