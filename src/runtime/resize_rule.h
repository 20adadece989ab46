/*
 * ONNX Resize's interpolation rule along one axis, shared by the ONNX
 * importer (which builds interpolation matrices from it when the sizes are
 * known at import) and dyn.resize's extern kernel (runtime/extern_resize.c,
 * which applies it at run time for the interpreter and the VM): one
 * definition of the coordinate transforms, the neighbours and their
 * coefficients. It lives in the runtime so that the VM's call_extern can
 * run it without the compiler.
 *
 * Resizing is separable: output position x along an axis of `in` elements
 * is sum_i row[i] * input[i] + offset, where row (in entries) and offset
 * come from kiln_resize_rule_row.
 */
#ifndef KILN_RUNTIME_RESIZE_RULE_H_
#define KILN_RUNTIME_RESIZE_RULE_H_

#include <stdbool.h>
#include <stdint.h>

#include "kiln/status.h"

typedef struct kiln_resize_rule_t {
  const char *mode;       /* nearest | linear | cubic */
  const char *coordinate; /* coordinate_transformation_mode */
  const char *rounding;   /* nearest_mode */
  double cubic_a;
  bool exclude_outside;
  double extrapolation; /* tf_crop_and_resize, outside the input */
} kiln_resize_rule_t;

/* INVALID_ARGUMENT naming the value when mode, coordinate or rounding is
 * not one ONNX defines. */
KILN_MUST_USE_RESULT kiln_status_t kiln_resize_rule_check(const kiln_resize_rule_t *rule);

/* A rule as the integer attributes of an extern kernel (a VM's call_extern
 * operands): mode, coordinate and rounding as their index in ONNX's lists
 * (-1 for a name not in them), exclude_outside as 0 or 1, cubic_a and
 * extrapolation as the bits of their IEEE-754 doubles (exact, unlike a
 * decimal text). */
#define KILN_RESIZE_RULE_ATTRS 6
void kiln_resize_rule_encode(const kiln_resize_rule_t *rule, int64_t *out_attrs);
/* The rule `attrs` (KILN_RESIZE_RULE_ATTRS values) encode; INVALID_ARGUMENT
 * naming the attribute when an index is outside its list. */
KILN_MUST_USE_RESULT kiln_status_t kiln_resize_rule_decode(const int64_t *attrs,
                                                           kiln_resize_rule_t *out_rule);

/* Row `x` of the interpolation along an axis of `in` (>= 1) elements scaled
 * by `scale`, roi [roi_start, roi_end] (tf_crop_and_resize; 0 and 1
 * otherwise): `row` gets `in` coefficients, *out_offset the constant term. */
void kiln_resize_rule_row(const kiln_resize_rule_t *rule, int64_t x, int64_t in, double scale,
                          double roi_start, double roi_end, double *row, double *out_offset);

#endif /* KILN_RUNTIME_RESIZE_RULE_H_ */
