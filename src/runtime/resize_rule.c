/*
 * ONNX Resize's rule along one axis (see resize_rule.h), written after
 * ONNX's reference: the coordinate transform maps an output position to a
 * source coordinate; the n (2 for nearest and linear, 4 for cubic) indexes
 * of the edge-padded input nearest to it, ties to the smaller, get the
 * mode's coefficients; exclude_outside drops those outside the input and
 * renormalizes; a tf_crop_and_resize position outside the input is the
 * extrapolation value. Indexes past an edge read the edge element.
 */
#include "runtime/resize_rule.h"

#include <math.h>
#include <string.h>

static const char *const resize_modes[] = {"nearest", "linear", "cubic"};
static const char *const resize_coordinates[] = {"half_pixel",           "pytorch_half_pixel",
                                                 "align_corners",        "asymmetric",
                                                 "tf_half_pixel_for_nn", "tf_crop_and_resize"};
static const char *const resize_roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                               "ceil"};

#define RESIZE_COUNT(names) ((int)(sizeof(names) / sizeof(names[0])))

/* The index of `value` in `names`, or -1. */
static int resize_rule_index(const char *value, const char *const *names, int count) {
  for (int i = 0; i < count; ++i) {
    if (strcmp(value, names[i]) == 0) {
      return i;
    }
  }
  return -1;
}

kiln_status_t kiln_resize_rule_check(const kiln_resize_rule_t *rule) {
  if (resize_rule_index(rule->mode, resize_modes, RESIZE_COUNT(resize_modes)) < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "mode \"%s\" is not nearest, linear or cubic", rule->mode);
  }
  if (resize_rule_index(rule->coordinate, resize_coordinates, RESIZE_COUNT(resize_coordinates)) <
      0) {
    return KILN_STATUS(INVALID_ARGUMENT, "coordinate_transformation_mode \"%s\" is unknown",
                       rule->coordinate);
  }
  if (resize_rule_index(rule->rounding, resize_roundings, RESIZE_COUNT(resize_roundings)) < 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "nearest_mode \"%s\" is not round_prefer_floor, round_prefer_ceil, floor "
                       "or ceil",
                       rule->rounding);
  }
  return KILN_OK;
}

static int64_t resize_rule_bits(double value) {
  int64_t bits = 0;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static double resize_rule_double(int64_t bits) {
  double value = 0.0;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

void kiln_resize_rule_encode(const kiln_resize_rule_t *rule, int64_t *out_attrs) {
  out_attrs[0] = resize_rule_index(rule->mode, resize_modes, RESIZE_COUNT(resize_modes));
  out_attrs[1] =
      resize_rule_index(rule->coordinate, resize_coordinates, RESIZE_COUNT(resize_coordinates));
  out_attrs[2] =
      resize_rule_index(rule->rounding, resize_roundings, RESIZE_COUNT(resize_roundings));
  out_attrs[3] = rule->exclude_outside;
  out_attrs[4] = resize_rule_bits(rule->cubic_a);
  out_attrs[5] = resize_rule_bits(rule->extrapolation);
}

/* names[index], or INVALID_ARGUMENT naming `what`. */
static kiln_status_t resize_rule_name(const char *what, int64_t index, const char *const *names,
                                      int count, const char **out_name) {
  if (index < 0 || index >= count) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s %lld is not one of the %d ONNX defines", what,
                       (long long)index, count);
  }
  *out_name = names[index];
  return KILN_OK;
}

kiln_status_t kiln_resize_rule_decode(const int64_t *attrs, kiln_resize_rule_t *out_rule) {
  KILN_RETURN_IF_ERROR(resize_rule_name("mode", attrs[0], resize_modes, RESIZE_COUNT(resize_modes),
                                        &out_rule->mode));
  KILN_RETURN_IF_ERROR(resize_rule_name("coordinate_transformation_mode", attrs[1],
                                        resize_coordinates, RESIZE_COUNT(resize_coordinates),
                                        &out_rule->coordinate));
  KILN_RETURN_IF_ERROR(resize_rule_name("nearest_mode", attrs[2], resize_roundings,
                                        RESIZE_COUNT(resize_roundings), &out_rule->rounding));
  out_rule->exclude_outside = attrs[3] != 0;
  out_rule->cubic_a = resize_rule_double(attrs[4]);
  out_rule->extrapolation = resize_rule_double(attrs[5]);
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
