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
 * values as int64 (NULL otherwise). */
typedef struct kiln_shape_func_arg_t {
  int ndim;
  const int64_t *shape;
  int64_t count;
  const int64_t *values;
} kiln_shape_func_arg_t;

/* The output shape from the inputs and one integer attribute (dyn.reshape's
 * allowzero; 0 where the operator has none). Errors are INVALID_ARGUMENT and
 * name the operator, the input and what was expected. */
typedef kiln_status_t (*kiln_shape_func_fn)(const kiln_shape_func_arg_t *args, int64_t attr,
                                            int *out_ndim, int64_t *out_shape);

typedef struct kiln_shape_func_t {
  const char *name;      /* the operator's name: "dyn.reshape" */
  int num_inputs;        /* the operator's inputs, all passed */
  unsigned value_inputs; /* bit i: the rule reads input i's values (at most KILN_MAX_RANK) */
  bool view;             /* the output is the first input's data under the new shape */
  kiln_shape_func_fn fn;
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

#endif /* KILN_RUNTIME_SHAPE_FUNC_H_ */
