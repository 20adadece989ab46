/*
 * Tensor expressions (TVM's te): placeholders, computes and reductions.
 *
 * A tensor is the output of an operation: a placeholder (an input the
 * caller supplies) or a compute, whose value at each index is an expression
 * of the loop IR over the index variables. Every tensor has a loop-IR buffer
 * of its shape and dtype, and a compute reads other tensors with ordinary
 * BufferLoads of their buffers (kiln_te_read): the loop IR needs no extra
 * node kind, lowering finds the reads as loads, and compute_inline rewrites
 * them. A compute names its input tensors explicitly; creating it checks
 * that its body loads no buffer other than theirs, so the dataflow graph is
 * known without a registry of buffers.
 *
 * The body comes from a C callback, fcompute, given a builder (tir/builder.h,
 * sticky status) and the index variables as expressions; it returns the
 * value, or NULL after a builder failure. A reduction (kiln_te_compute_reduce)
 * also takes reduce axes made beforehand with kiln_te_reduce_axis, which the
 * callback uses as variables, a combiner (sum, max, min) and an init value
 * (NULL: the combiner's identity, 0, the dtype's lowest or highest value).
 *
 * Shapes are constants (int64) in this version; index variables are int32.
 * A tensor may have rank 0 (one element; its loads and stores use the flat
 * index 0).
 * Everything lives in the arena given at creation and is immutable once
 * made, except that a schedule (schedule.h) keeps its own per-stage state.
 */
#ifndef KILN_TE_TE_H_
#define KILN_TE_TE_H_

#include "tir/builder.h"

/* Largest number of reduce axes of one compute, and of input tensors. */
#define KILN_TE_MAX_REDUCE_AXES 8
#define KILN_TE_MAX_INPUTS      16

typedef enum kiln_te_iter_kind_e {
  KILN_TE_ITER_DATA_PAR,
  KILN_TE_ITER_REDUCE,
  KILN_TE_ITER_COUNT_
} kiln_te_iter_kind_t;

/* An iteration variable: a loop-IR variable with its domain [min, min+extent).
 * Root axes (a compute's axes, reduce axes) have their domain set at
 * creation; axes made by split and fuse get theirs from bound inference. */
typedef struct kiln_te_iter_var_t {
  const kiln_tir_var_t *var;
  int64_t min;
  int64_t extent;
  kiln_te_iter_kind_t kind;
} kiln_te_iter_var_t;

typedef enum kiln_te_op_kind_e {
  KILN_TE_OP_PLACEHOLDER,
  KILN_TE_OP_COMPUTE,
  KILN_TE_OP_EXTERN,
  KILN_TE_OP_COUNT_
} kiln_te_op_kind_t;

typedef enum kiln_te_reducer_e {
  KILN_TE_REDUCE_NONE, /* not a reduction */
  KILN_TE_REDUCE_SUM,
  KILN_TE_REDUCE_MAX,
  KILN_TE_REDUCE_MIN,
  KILN_TE_REDUCE_COUNT_
} kiln_te_reducer_t;

/* "sum", "max", "min" ("none"). */
const char *kiln_te_reducer_name(kiln_te_reducer_t reducer);

typedef struct kiln_te_tensor_t kiln_te_tensor_t;

typedef struct kiln_te_operation_t {
  kiln_te_op_kind_t kind;
  const char *name;
  /* Compute only: */
  int num_axes; /* = the output's ndim */
  const kiln_te_iter_var_t *const *axes;
  int num_reduce_axes;
  const kiln_te_iter_var_t *const *reduce_axes;
  kiln_te_reducer_t reducer;
  const kiln_tir_expr_t *body; /* the value, or the reduction's source */
  const kiln_tir_expr_t *init; /* reductions only */
  int num_inputs;
  const kiln_te_tensor_t *const *inputs;
  /* Extern only: its outputs, and the statement that writes their buffers
   * from the inputs' buffers. */
  int num_outputs;
  const kiln_te_tensor_t *const *outputs;
  const kiln_tir_stmt_t *extern_body;
} kiln_te_operation_t;

struct kiln_te_tensor_t {
  const char *name;
  kiln_dtype_t dtype;
  int ndim;
  const int64_t *shape;
  const kiln_te_operation_t *op;
  const kiln_tir_buffer_t *buffer; /* same name, shape and dtype */
};

/* Builds the value at `indices` (one int32 expression per output dim). */
typedef const kiln_tir_expr_t *(*kiln_te_fcompute_fn)(kiln_tir_builder_t *b,
                                                      const kiln_tir_expr_t *const *indices,
                                                      void *user);

/* An input tensor. Every extent must be positive. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_placeholder(kiln_arena_t *arena, const char *name,
                                                       int ndim, const int64_t *shape,
                                                       kiln_dtype_t dtype,
                                                       const kiln_te_tensor_t **out_tensor);

/* A reduce axis named `name` over [min, min+extent); extent > 0. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_reduce_axis(kiln_arena_t *arena, const char *name,
                                                       int64_t min, int64_t extent,
                                                       const kiln_te_iter_var_t **out_axis);

/* out[i...] = fcompute(i...). The body must be a scalar and load only the
 * buffers of `inputs`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_compute(kiln_arena_t *arena, const char *name, int ndim,
                                                   const int64_t *shape, int num_inputs,
                                                   const kiln_te_tensor_t *const *inputs,
                                                   kiln_te_fcompute_fn fcompute, void *user,
                                                   const kiln_te_tensor_t **out_tensor);

/* out[i...] = reducer over the reduce axes of fcompute(i...), starting from
 * `init` (NULL: the reducer's identity; otherwise of the body's dtype). */
KILN_MUST_USE_RESULT kiln_status_t
kiln_te_compute_reduce(kiln_arena_t *arena, const char *name, int ndim, const int64_t *shape,
                       kiln_te_reducer_t reducer, const kiln_tir_expr_t *init, int num_reduce_axes,
                       const kiln_te_iter_var_t *const *reduce_axes, int num_inputs,
                       const kiln_te_tensor_t *const *inputs, kiln_te_fcompute_fn fcompute,
                       void *user, const kiln_te_tensor_t **out_tensor);

/* Builds an extern op's statement from its inputs' and outputs' buffers. */
typedef const kiln_tir_stmt_t *(*kiln_te_fextern_fn)(kiln_tir_builder_t *b,
                                                     const kiln_tir_buffer_t *const *inputs,
                                                     const kiln_tir_buffer_t *const *outputs,
                                                     void *user);

/* The shape and dtype of one output of an extern op. */
typedef struct kiln_te_extern_output_t {
  const char *name;
  int ndim;
  const int64_t *shape;
  kiln_dtype_t dtype;
} kiln_te_extern_output_t;

/* TVM's te.extern: an op whose body is a loop-IR statement written by hand
 * (sorting, scans, scatters: what one expression per element cannot say).
 * The statement may read only the inputs' buffers and write only the
 * outputs', besides buffers it Allocates itself (a running accumulator in
 * a local buffer); schedules leave it as it is. out_tensors gets num_outputs
 * tensors (at most KILN_TE_MAX_INPUTS). */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_extern(
    kiln_arena_t *arena, const char *name, int num_outputs, const kiln_te_extern_output_t *outputs,
    int num_inputs, const kiln_te_tensor_t *const *inputs, kiln_te_fextern_fn fbody, void *user,
    const kiln_te_tensor_t **out_tensors);

/* A load of `tensor` at `indices` (int32), for use inside fcompute; a rank-0
 * tensor takes n = 0 (its one element is read at flat index 0). */
const kiln_tir_expr_t *kiln_te_read(kiln_tir_builder_t *b, const kiln_te_tensor_t *tensor, int n,
                                    const kiln_tir_expr_t *const *indices);

/* The output tensor of `op` with a new buffer (for schedule transformations
 * such as cache_write; computes make theirs). Name and shape are copied. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_tensor_create(kiln_arena_t *arena, const char *name,
                                                         int ndim, const int64_t *shape,
                                                         kiln_dtype_t dtype,
                                                         const kiln_te_operation_t *op,
                                                         const kiln_te_tensor_t **out_tensor);

/* The i-th axis of a compute's output (NULL for a placeholder or out of range). */
const kiln_te_iter_var_t *kiln_te_tensor_axis(const kiln_te_tensor_t *tensor, int i);

#endif /* KILN_TE_TE_H_ */
