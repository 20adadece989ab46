/*
 * NumPy broadcasting, shared by every operator that combines tensors of
 * different shapes: the shape rule, the text of its error messages, the layout
 * rule of broadcasting operators and an N-d index walker for kernels.
 *
 * Shapes are aligned at their last dim; a result dim is the common size of
 * the operands' dims there, where a dim of 1 (or a missing leading dim)
 * stretches to any size. The walker turns that into strides: an operand's
 * stride is 0 on every dim it is stretched along, so a kernel visits the
 * output in row-major order and reads each operand at walker.offsets[k]
 * without knowing anything about broadcasting. Everything works on any rank up
 * to KILN_MAX_RANK, rank 0 included, and on zero-sized dims (NumPy's rule: 0
 * pairs with 0 or 1 only).
 */
#ifndef KILN_OP_BROADCAST_H_
#define KILN_OP_BROADCAST_H_

#include <stdint.h>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "op/op.h"

/* Most operands a walker follows (where has three). */
#define KILN_BROADCAST_MAX_OPERANDS 4
/* Enough room for kiln_broadcast_shapes_text of KILN_BROADCAST_MAX_OPERANDS
 * shapes; longer lists are cut short. */
#define KILN_BROADCAST_TEXT_CAPACITY (KILN_BROADCAST_MAX_OPERANDS * (KILN_SHAPE_TEXT_CAPACITY + 8))

/* "(2, 3) and (4, 3)", or "(2,), (3,) and (1,)" for three shapes, into
 * `buffer` (truncated to `capacity`, always NUL-terminated); returns it. */
const char *kiln_broadcast_shapes_text(int count, const int *ndims, const int64_t *const *shapes,
                                       char *buffer, size_t capacity);

/* Broadcasts `count` shapes together into out_shape (room for KILN_MAX_RANK
 * dims). On a mismatch, INVALID_ARGUMENT "<what>: cannot broadcast (1, 3, 4)
 * and (5, 4): dim 1 of the result would be 3 vs 5". */
KILN_MUST_USE_RESULT kiln_status_t kiln_broadcast_shapes(const char *what, int count,
                                                         const int *ndims,
                                                         const int64_t *const *shapes,
                                                         int *out_ndim, int64_t *out_shape);

/* The broadcast shape of the relation's inputs [first, first + count), which
 * must be tensors; errors name the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_broadcast_infer_shape(const kiln_type_relation_t *relation,
                                                              int first, int count, int *out_ndim,
                                                              int64_t *out_shape);

/* The layout rule of broadcasting operators. When every input has the same
 * rank, every input is required in the first non-empty input layout and the
 * output has it. When ranks differ (a (C, 1, 1) bias added to NCHW), the
 * inputs of the highest rank are treated so among themselves, the others are
 * required in "" (any), and the output takes the highest-rank layout. */
KILN_MUST_USE_RESULT kiln_status_t kiln_broadcast_correct_layout(kiln_layout_relation_t *relation);

/* An N-d walk over an output shape in row-major order, tracking where each
 * operand's element is. Use:
 *
 *   kiln_broadcast_walker_t walker;
 *   KILN_RETURN_IF_ERROR(kiln_broadcast_walker_initialize_tensors(&walker, out, 2, inputs));
 *   for (int64_t i = 0; i < walker.count; ++i, kiln_broadcast_walker_next(&walker)) {
 *     out_data[i] = a[walker.offsets[0]] + b[walker.offsets[1]];
 *   }
 */
typedef struct kiln_broadcast_walker_t {
  int ndim;         /* rank of the output */
  int num_operands; /* operands followed */
  int64_t count;    /* output elements: iterations of the walk */
  int64_t shape[KILN_MAX_RANK];
  int64_t index[KILN_MAX_RANK];                                /* output index now */
  int64_t strides[KILN_BROADCAST_MAX_OPERANDS][KILN_MAX_RANK]; /* 0 where stretched */
  int64_t offsets[KILN_BROADCAST_MAX_OPERANDS];                /* element offsets now */
} kiln_broadcast_walker_t;

/* Starts a walk at index 0 of `out_shape`. Each operand must broadcast to the
 * output shape (its rank no higher, each dim equal or 1), else
 * INVALID_ARGUMENT naming the operand and both shapes, so a walk never leaves
 * any operand's bounds. */
KILN_MUST_USE_RESULT kiln_status_t kiln_broadcast_walker_initialize(
    kiln_broadcast_walker_t *walker, int out_ndim, const int64_t *out_shape, int num_operands,
    const int *ndims, const int64_t *const *shapes);
/* The same with the shapes of tensors. */
KILN_MUST_USE_RESULT kiln_status_t kiln_broadcast_walker_initialize_tensors(
    kiln_broadcast_walker_t *walker, const kiln_tensor_t *output, int num_operands,
    kiln_tensor_t *const *operands);
/* Moves to the next output index in row-major order (after the last one the
 * walk starts over at index 0). */
void kiln_broadcast_walker_next(kiln_broadcast_walker_t *walker);

#endif /* KILN_OP_BROADCAST_H_ */
