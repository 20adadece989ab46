/*
 * ONNX Resize's rule along one axis (see resize_rule.h), written after
 * ONNX's reference: the coordinate transform maps an output position to a
 * source coordinate; the n (2 for nearest and linear, 4 for cubic) indexes
 * of the edge-padded input nearest to it, ties to the smaller, get the
 * mode's coefficients; exclude_outside drops those outside the input and
 * renormalizes; a tf_crop_and_resize position outside the input is the
 * extrapolation value. Indexes past an edge read the edge element.
 */
#include "op/resize_rule.h"

#include <math.h>
#include <string.h>

static bool resize_rule_in(const char *value, const char *const *names, int count) {
  for (int i = 0; i < count; ++i) {
    if (strcmp(value, names[i]) == 0) {
      return true;
    }
  }
  return false;
}

kiln_status_t kiln_resize_rule_check(const kiln_resize_rule_t *rule) {
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  static const char *const coordinates[] = {"half_pixel",           "pytorch_half_pixel",
                                            "align_corners",        "asymmetric",
                                            "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
  if (!resize_rule_in(rule->mode, modes, 3)) {
    return KILN_STATUS(INVALID_ARGUMENT, "mode \"%s\" is not nearest, linear or cubic", rule->mode);
  }
  if (!resize_rule_in(rule->coordinate, coordinates, 6)) {
    return KILN_STATUS(INVALID_ARGUMENT, "coordinate_transformation_mode \"%s\" is unknown",
                       rule->coordinate);
  }
  if (!resize_rule_in(rule->rounding, roundings, 4)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "nearest_mode \"%s\" is not round_prefer_floor, round_prefer_ceil, floor "
                       "or ceil",
                       rule->rounding);
  }
  return KILN_OK;
}

/* The source coordinate of output position `x`; *out_outside for
 * tf_crop_and_resize positions outside the input. */
static double resize_rule_source(const kiln_resize_rule_t *rule, int64_t x, int64_t in,
                                 double scale, double roi_start, double roi_end,
                                 bool *out_outside) {
  const char *c = rule->coordinate;
  double width = scale * (double)in, position = (double)x, source = 0.0;
  *out_outside = false;
  if (strcmp(c, "align_corners") == 0) {
    source = width == 1.0 ? 0.0 : position * (double)(in - 1) / (width - 1.0);
  } else if (strcmp(c, "asymmetric") == 0) {
    source = position / scale;
  } else if (strcmp(c, "tf_half_pixel_for_nn") == 0) {
    source = (position + 0.5) / scale;
  } else if (strcmp(c, "tf_crop_and_resize") == 0) {
    source = width == 1.0 ? (roi_end - roi_start) * (double)(in - 1) / 2.0
                          : position * (roi_end - roi_start) * (double)(in - 1) / (width - 1.0);
    source += roi_start * (double)(in - 1);
    *out_outside = source < 0.0 || source > (double)(in - 1);
  } else if (strcmp(c, "pytorch_half_pixel") == 0) {
    source = width == 1.0 ? 0.0 : (position + 0.5) / scale - 0.5;
  } else { /* half_pixel */
    source = (position + 0.5) / scale - 0.5;
  }
  return source;
}

/* The coefficients of the n (2 or 4) neighbours for `ratio` in (0, 1]. */
static int resize_rule_coefficients(const kiln_resize_rule_t *rule, double ratio,
                                    double *coefficients) {
  if (strcmp(rule->mode, "cubic") == 0) {
    double a = rule->cubic_a, r = ratio, s = 1.0 - ratio;
    coefficients[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    coefficients[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    coefficients[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    coefficients[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
    return 4;
  }
  if (strcmp(rule->mode, "linear") == 0) {
    coefficients[0] = 1.0 - ratio;
    coefficients[1] = ratio;
    return 2;
  }
  bool second = true; /* an integral position, or ceil */
  if (ratio != 1.0) {
    const char *rounding = rule->rounding;
    second = strcmp(rounding, "round_prefer_ceil") == 0 ? ratio >= 0.5
             : strcmp(rounding, "floor") == 0           ? false
             : strcmp(rounding, "ceil") == 0            ? true
                                                        : ratio > 0.5;
  }
  coefficients[0] = second ? 0.0 : 1.0;
  coefficients[1] = second ? 1.0 : 0.0;
  return 2;
}

/* The n indexes of the edge-padded axis [-pad, in + pad) nearest to
 * `source`, ties to the smaller, in ascending order. The nearest indexes
 * form a window, slid right while the next index is strictly nearer than
 * the window's first. */
static void resize_rule_neighbors(double source, int n, int64_t in, int64_t *indexes) {
  int64_t pad = (n + 1) / 2, first = -pad;
  while (first + n < in + pad &&
         fabs(source - (double)(first + n)) < fabs(source - (double)first)) {
    ++first;
  }
  for (int k = 0; k < n; ++k) {
    indexes[k] = first + k;
  }
}

void kiln_resize_rule_row(const kiln_resize_rule_t *rule, int64_t x, int64_t in, double scale,
                          double roi_start, double roi_end, double *row, double *out_offset) {
  bool outside = false;
  double source = resize_rule_source(rule, x, in, scale, roi_start, roi_end, &outside);
  memset(row, 0, sizeof(double) * (size_t)in);
  *out_offset = 0.0;
  if (outside) {
    *out_offset = rule->extrapolation;
    return;
  }
  double base = floor(source), ratio = source - base;
  if (ratio == 0.0) {
    ratio = 1.0;
  }
  double coefficients[4];
  int64_t indexes[4];
  int n = resize_rule_coefficients(rule, ratio, coefficients);
  resize_rule_neighbors(source, n, in, indexes);
  double total = 0.0;
  for (int k = 0; k < n; ++k) {
    if (rule->exclude_outside && (indexes[k] < 0 || indexes[k] >= in)) {
      coefficients[k] = 0.0;
    }
    total += coefficients[k];
  }
  for (int k = 0; k < n; ++k) {
    int64_t i = indexes[k] < 0 ? 0 : indexes[k] >= in ? in - 1 : indexes[k];
    row[i] += rule->exclude_outside ? coefficients[k] / total : coefficients[k];
  }
}
