/*
 * ONNX Resize's interpolation rule along one axis, shared by the ONNX
 * importer (which builds interpolation matrices from it when the sizes are
 * known at import) and dyn.resize's reference kernel (which applies it at
 * run time): one definition of the coordinate transforms, the neighbours
 * and their coefficients.
 *
 * Resizing is separable: output position x along an axis of `in` elements
 * is sum_i row[i] * input[i] + offset, where row (in entries) and offset
 * come from kiln_resize_rule_row.
 */
#ifndef KILN_OP_RESIZE_RULE_H_
#define KILN_OP_RESIZE_RULE_H_

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

/* Row `x` of the interpolation along an axis of `in` (>= 1) elements scaled
 * by `scale`, roi [roi_start, roi_end] (tf_crop_and_resize; 0 and 1
 * otherwise): `row` gets `in` coefficients, *out_offset the constant term. */
void kiln_resize_rule_row(const kiln_resize_rule_t *rule, int64_t x, int64_t in, double scale,
                          double roi_start, double roi_end, double *row, double *out_offset);

#endif /* KILN_OP_RESIZE_RULE_H_ */
