/*
 * Value-reading shape functions (TVM's data-dependent shape functions): the
 * output shape of a dyn operator (docs/dynamic-shapes.md, "Dyn operators")
 * computed from its inputs' shapes and the values of its shape-like inputs.
 *
 * This table is the one definition of each listed operator's shape rule.
 * It lives in the runtime (libkiln_runtime, no compiler linked) so that the
 * VM's `shape_func` instruction (docs/vm.md) calls it at run time, and the
 * reference interpreter's shape function of the same operator (op/dyn.c)
 * calls it too: the two executors cannot disagree on a shape.
 */
#ifndef KILN_RUNTIME_SHAPE_FUNC_H_
#define KILN_RUNTIME_SHAPE_FUNC_H_

#include <stdbool.h>
#include <stdint.h>

#include "kiln/status.h"
#include "kiln/tensor.h"

/* The most inputs a shape function takes. */
#define KILN_SHAPE_FUNC_MAX_INPUTS 8

/* One input as a shape function sees it: its shape and, for an input whose
 * values the rule reads (kiln_shape_func_t.value_inputs), its `count`
 * values as int64 (NULL otherwise), or as doubles in `numbers` for an
 * input the rule reads as numbers (kiln_shape_func_t.number_inputs: any
 * numeric dtype; `values` NULL). */
typedef struct kiln_shape_func_arg_t {
  int ndim;
  const int64_t *shape;
  int64_t count;
  const int64_t *values;
  const double *numbers;
} kiln_shape_func_arg_t;

/* The output shape from the inputs and one integer attribute (dyn.reshape's
 * allowzero, dyn.one_hot's axis, dyn.sum's keepdims, dyn.pad's mode,
 * dyn.topk's axis; 0 where the operator has none); an operator with several
 * outputs (dyn.topk's values and indices) gives them all this shape. Errors are INVALID_ARGUMENT
 * and name the operator, the input and what was expected. */
typedef kiln_status_t (*kiln_shape_func_fn)(const kiln_shape_func_arg_t *args, int64_t attr,
                                            int *out_ndim, int64_t *out_shape);

typedef struct kiln_shape_func_t {
  const char *name;      /* the operator's name: "dyn.reshape" */
  int num_inputs;        /* the operator's inputs, all passed */
  unsigned value_inputs; /* bit i: the rule reads input i's values (at most KILN_MAX_RANK) */
  bool view;             /* the output is the first input's data under the new shape */
  kiln_shape_func_fn fn;
  unsigned number_inputs; /* bit i: of the value inputs, read as doubles (dyn.arange's) */
} kiln_shape_func_t;

/* The index of the shape function of operator `name`, or -1. */
int kiln_shape_func_find(const char *name);
/* The shape function at `index` (0 <= index < kiln_shape_func_count()). */
const kiln_shape_func_t *kiln_shape_func_at(int index);
int kiln_shape_func_count(void);

/* Runs shape function `index` on `num_args` inputs: checks the count and that
 * every value input has at most KILN_MAX_RANK values, then calls the rule. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_func_run(int index, int num_args,
                                                       const kiln_shape_func_arg_t *args,
                                                       int64_t attr, int *out_ndim,
                                                       int64_t *out_shape);

/* ONNX Slice's element count on a dim of `dim` (negative begin and end
 * count from the end; clamped as ONNX does; 0 for step 0). */
int64_t kiln_shape_slice_count(int64_t dim, int64_t begin, int64_t end, int64_t step);

/* The most elements an arange may have (a bound, so the count converts
 * exactly). */
#define KILN_SHAPE_ARANGE_MAX ((double)((int64_t)1 << 53))

/* arange's element count, max(ceil((stop - start) / step), 0): INVALID_ARGUMENT
 * naming `op` unless the three are finite, step is not 0 and the count is at
 * most KILN_SHAPE_ARANGE_MAX. The one rule of arange and dyn.arange. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_arange_count(const char *op, double start,
                                                           double stop, double step,
                                                           int64_t *out_count);

/* nn.pad's modes ("constant", "edge", "reflect"), as kiln_shape_pad_dim
 * takes them; -1 for another name. */
int kiln_shape_pad_mode(const char *name);

/* The size of dim d of data (ndim, shape) padded by `before` and `after`
 * (negative crops) in pad mode `mode`: INVALID_ARGUMENT naming `op` when
 * it overflows, crops below 0, edge-pads an empty dim or reflect-pads by
 * the dim's size or more. The one rule of nn.pad and dyn.pad. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_pad_dim(const char *op, int mode, int ndim,
                                                      const int64_t *shape, int d, int64_t before,
                                                      int64_t after, int64_t *out_size);

/* The shape of data (ndim, shape) tiled by `count` repetition counts
 * (aligned at the last dim, the shorter side padded with 1s):
 * INVALID_ARGUMENT naming `op` for a negative count, a rank above
 * KILN_MAX_RANK or more than INT64_MAX elements. The one rule of tile and
 * dyn.tile. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_tile(const char *op, int ndim, const int64_t *shape,
                                                   int count, const int64_t *reps, int *out_ndim,
                                                   int64_t *out_shape);

/* The shape of topk's outputs over data (ndim, shape) along `axis` (in
 * [0, ndim)): the data's with k on the axis; INVALID_ARGUMENT naming `op`
 * unless 0 <= k <= the axis' size. The one rule of topk and dyn.topk. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_topk(const char *op, int ndim, const int64_t *shape,
                                                   int axis, int64_t k, int64_t *out_shape);

#endif /* KILN_RUNTIME_SHAPE_FUNC_H_ */
