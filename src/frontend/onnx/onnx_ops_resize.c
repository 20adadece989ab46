/*
 * Resize (opsets 10 and 11+), Upsample (7-9), GridSample (16+) and
 * RoiAlign (10+).
 *
 * RoiAlign maps onto vision.roi_align: output_height and output_width
 * become pooled_size, sampling_ratio sample_ratio, and
 * coordinate_transformation_mode (opset 16; before it, the boxes were never
 * shifted) "half_pixel" aligned, "output_half_pixel" not.
 *
 * GridSample maps onto image.grid_sample one to one: its attributes mode,
 * padding_mode and align_corners keep their values (the operator validates
 * them, so a mode it does not know is refused with the operator's list).
 *
 * Two paths. image.resize2d does what it can: 4-D NCHW data whose N and C
 * keep their size, nearest or linear, the coordinate modes half_pixel,
 * pytorch_half_pixel, align_corners and asymmetric, and an output size given
 * or following exactly from the scales (resize2d derives its scale as out /
 * in). Everything else (cubic, the tf_* modes, exclude_outside, scales that
 * do not give whole sizes, other ranks, resizing N or C) is done by
 * interpolation matrices: resizing is separable, so each axis whose size or
 * coordinates change gets an (out, in) matrix A and offset b computed here
 * by ONNX's reference rule (the coordinate transform with the given scale,
 * the n nearest neighbours in the edge-padded input, ties to the smaller
 * index, their nearest / linear / cubic coefficients, exclude_outside
 * renormalizing, tf_crop_and_resize's extrapolation_value in b), and the
 * data goes through nn.matmul with it: x · Aᵀ for the last axis, A · x for
 * the one before, other axes transposed to that place and back. That path
 * runs on float32 data (the matmul kernel's dtype); nearest through a
 * matrix turns an infinite input into NaN (inf · 0). The rule for one axis
 * (coordinates, neighbours, coefficients) is runtime/resize_rule.h.
 *
 * When the scales, the sizes or (for tf_crop_and_resize) the roi depend on
 * the graph's inputs, neither path can be built at import: the node becomes
 * dyn.resize (op/dyn_resize.c) over (X, roi, scales, sizes), absent lists
 * given as empty Constants, which applies the same rule at run time.
 */
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "runtime/resize_rule.h"

typedef struct kiln_onnx_resize_t {
  kiln_resize_rule_t rule; /* mode, coordinates, rounding, cubic_a, ... */
  const double *roi;       /* 2 · rank values (starts, then ends) or NULL */
} kiln_onnx_resize_t;

/* ---- image.resize2d ---- */

/* Whether resize2d does this resize: (N, C, H, W) to (N, C, size). */
static bool kiln_onnx_resize2d_fits(const kiln_tensor_type_t *xt, const int64_t *out,
                                    const double *scales, const kiln_onnx_resize_t *mode) {
  if (xt->ndim != 4 || out[0] != xt->shape[0] || out[1] != xt->shape[1] || xt->shape[2] == 0 ||
      xt->shape[3] == 0 || mode->rule.exclude_outside ||
      strncmp(mode->rule.coordinate, "tf_", 3) == 0 || strcmp(mode->rule.mode, "cubic") == 0) {
    return false;
  }
  for (int d = 2; d < 4; ++d) { /* resize2d's scale is out / in */
    double exact = (double)out[d] / (double)xt->shape[d];
    if (scales && fabs(exact - scales[d]) > 1e-6 * scales[d]) {
      return false;
    }
  }
  return true;
}

static kiln_status_t kiln_onnx_resize2d(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                        const int64_t *out, const kiln_onnx_resize_t *mode,
                                        kiln_expr_t **out_expr) {
  const kiln_op_t *op = &kiln_op_resize2d;
  void *attrs = NULL;
  bool nearest = strcmp(mode->rule.mode, "nearest") == 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "size", 2, out + 2));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_string(op, attrs, "method", nearest ? "nearest_neighbor" : "linear"));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_string(op, attrs, "coordinate_transformation_mode", mode->rule.coordinate));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "rounding_method", mode->rule.rounding));
  return kiln_onnx_emit1(node, op, x, attrs, out_expr);
}

/* ---- interpolation matrices ---- */

/* A (out, in) and b (out,) of axis d as float32 Constants; *out_identity
 * when the axis does not change. */
static kiln_status_t kiln_onnx_resize_matrix(const kiln_onnx_node_t *node,
                                             const kiln_onnx_resize_t *mode, int rank, int d,
                                             int64_t in, int64_t out, double scale,
                                             kiln_expr_t **out_a, kiln_expr_t **out_b,
                                             bool *out_identity) {
  const int64_t shape[2] = {out, in};
  kiln_tensor_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_FLOAT32, 2, shape, &a));
  kiln_status_t status = kiln_onnx_tensor_new(node, KILN_DTYPE_FLOAT32, 1, &out, &b);
  double *row = NULL;
  if (!status) {
    status = kiln_arena_allocate_array(node->importer->arena, (size_t)(in > 0 ? in : 1),
                                       sizeof(double), 8, (void **)&row);
  }
  bool identity = out == in;
  double roi_start = mode->roi ? mode->roi[d] : 0.0,
         roi_end = mode->roi ? mode->roi[rank + d] : 1.0;
  for (int64_t x = 0; !status && x < out; ++x) {
    double offset = 0.0;
    kiln_resize_rule_row(&mode->rule, x, in, scale, roi_start, roi_end, row, &offset);
    kiln_onnx_store_double(b, x, offset);
    identity = identity && offset == 0.0;
    for (int64_t i = 0; i < in; ++i) {
      kiln_onnx_store_double(a, x * in + i, row[i]);
      identity = identity && row[i] == (i == x ? 1.0 : 0.0);
    }
  }
  *out_identity = identity;
  if (!status) {
    status = kiln_onnx_constant(node->importer, a, out_a);
  }
  if (!status) {
    status = kiln_onnx_constant(node->importer, b, out_b);
  }
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  return status;
}

/* x with axes `first` and `second` swapped. */
static kiln_status_t kiln_onnx_swap_axes(const kiln_onnx_node_t *node, kiln_expr_t *x, int first,
                                         int second, kiln_expr_t **out_expr) {
  int rank = kiln_onnx_type_of(x)->ndim;
  int64_t perm[KILN_MAX_RANK];
  for (int d = 0; d < rank; ++d) {
    perm[d] = d == first ? second : d == second ? first : d;
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_transpose, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_transpose, attrs, "axes", rank, perm));
  return kiln_onnx_emit1(node, &kiln_op_transpose, x, attrs, out_expr);
}

/* x resized along axis d by A and b: the last axis as x · Aᵀ + b, any other
 * moved to the one before last and back, as A · x + b (b as a column). */
static kiln_status_t kiln_onnx_resize_axis(const kiln_onnx_node_t *node, kiln_expr_t *x, int d,
                                           kiln_expr_t *a, kiln_expr_t *b, kiln_expr_t **out_expr) {
  int rank = kiln_onnx_type_of(x)->ndim;
  int64_t out = kiln_onnx_type_of(b)->shape[0];
  if (d == rank - 1) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_transpose, a, NULL, &a));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_matmul, x, a, NULL, &x));
    return kiln_onnx_emit2(node, &kiln_op_add, x, b, NULL, out_expr);
  }
  int slot = rank - 2;
  if (d != slot) {
    KILN_RETURN_IF_ERROR(kiln_onnx_swap_axes(node, x, d, slot, &x));
  }
  const int64_t column[2] = {out, 1};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_matmul, a, x, NULL, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, b, 2, column, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, x, b, NULL, &x));
  if (d != slot) {
    return kiln_onnx_swap_axes(node, x, d, slot, out_expr);
  }
  *out_expr = x;
  return KILN_OK;
}

static kiln_status_t kiln_onnx_resize_matrices(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                               const int64_t *out, const double *scales,
                                               const kiln_onnx_resize_t *mode,
                                               kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "this resize (mode %s, %s) runs through interpolation matrices, which "
                       "take float32 data, not %s",
                       mode->rule.mode, mode->rule.coordinate, kiln_dtype_name(xt->dtype));
  }
  int rank = xt->ndim;
  for (int d = 0; d < rank; ++d) {
    if (xt->shape[d] == 0) {
      return KILN_STATUS(UNIMPLEMENTED, "resizing an empty dim (%d) is not supported", d);
    }
    double scale = scales ? scales[d] : (double)out[d] / (double)xt->shape[d];
    kiln_expr_t *a = NULL, *b = NULL;
    bool identity = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_matrix(node, mode, rank, d, xt->shape[d], out[d], scale,
                                                 &a, &b, &identity));
    if (!identity) {
      KILN_RETURN_IF_ERROR(kiln_onnx_resize_axis(node, x, d, a, b, &x));
    }
  }
  *out_expr = x;
  return KILN_OK;
}

/* ---- the operators ---- */

/* Resizes input 0 to `sizes` (count values) or by `scales`. */
static kiln_status_t kiln_onnx_resize(kiln_onnx_node_t *node, const double *scales, int count,
                                      const kiln_ints_t *sizes, const kiln_onnx_resize_t *mode) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int64_t out[KILN_MAX_RANK];
  bool by_size = sizes && sizes->count > 0;
  int given = by_size ? (int)sizes->count : count;
  if (given != xt->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s has %d values; the data has rank %d",
                       by_size ? "sizes" : "scales", given, xt->ndim);
  }
  for (int d = 0; d < xt->ndim; ++d) {
    out[d] = by_size ? sizes->values[d] : (int64_t)floor((double)xt->shape[d] * scales[d]);
    if (out[d] < 1 || (!by_size && !(scales[d] > 0.0))) {
      return KILN_STATUS(INVALID_ARGUMENT, "dim %d would have %lld elements (from %s)", d,
                         (long long)out[d], by_size ? "sizes" : "scales");
    }
  }
  if (kiln_onnx_resize2d_fits(xt, out, by_size ? NULL : scales, mode)) {
    return kiln_onnx_resize2d(node, x, out, mode, &node->outputs[0]);
  }
  return kiln_onnx_resize_matrices(node, x, out, by_size ? NULL : scales, mode, &node->outputs[0]);
}

static kiln_status_t kiln_onnx_resize_mode(const kiln_onnx_node_t *node, const char *fallback,
                                           kiln_onnx_resize_t *mode) {
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", fallback, &mode->rule.mode));
  if (strcmp(mode->rule.mode, "bilinear") == 0) {
    mode->rule.mode = "linear";
  }
  return kiln_resize_rule_check(&mode->rule);
}

/* The values of constant input `index` as doubles in the arena. */
static kiln_status_t kiln_onnx_resize_doubles(const kiln_onnx_node_t *node, int index,
                                              const char *what, double **out_values,
                                              int *out_count) {
  const kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, index, what, &tensor));
  int64_t count = kiln_tensor_element_count(tensor);
  if (count > 2 * KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s has %lld values", what, (long long)count);
  }
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena,
                                                 (size_t)(count > 0 ? count : 1), sizeof(double), 8,
                                                 (void **)out_values));
  for (int64_t i = 0; i < count; ++i) {
    (*out_values)[i] = kiln_tensor_element_as_double(tensor, i);
  }
  *out_count = (int)count;
  return KILN_OK;
}

/* Attributes of opset 11+: coordinates, nearest mode, cubic_coeff_a,
 * exclude_outside, extrapolation_value. */
static kiln_status_t kiln_onnx_resize_attrs(const kiln_onnx_node_t *node,
                                            kiln_onnx_resize_t *mode) {
  int64_t exclude = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "coordinate_transformation_mode",
                                             mode->rule.coordinate, &mode->rule.coordinate));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_string(node, "nearest_mode", mode->rule.rounding, &mode->rule.rounding));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "cubic_coeff_a", -0.75, &mode->rule.cubic_a));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "exclude_outside", 0, &exclude));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_float(node, "extrapolation_value", 0.0, &mode->rule.extrapolation));
  mode->rule.exclude_outside = exclude != 0;
  return kiln_resize_rule_check(&mode->rule);
}

/* ---- run-time scales, sizes or roi: dyn.resize ---- */

/* Whether any of the inputs `indexes` (-1: none) that is present depends
 * on the graph's inputs. */
static kiln_status_t kiln_onnx_resize_dynamic(const kiln_onnx_node_t *node, int count,
                                              const int *indexes, bool *out_dynamic) {
  *out_dynamic = false;
  for (int k = 0; k < count && !*out_dynamic; ++k) {
    bool known = true;
    if (indexes[k] >= 0 && kiln_onnx_input_optional(node, indexes[k])) {
      KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, indexes[k], &known));
    }
    *out_dynamic = !known;
  }
  return KILN_OK;
}

/* dyn.resize over (x, roi, scales, sizes): inputs[k] is the node's input
 * for each list (-1 or absent: an empty list). */
static kiln_status_t kiln_onnx_resize_dyn(kiln_onnx_node_t *node, const kiln_onnx_resize_t *mode,
                                          const int *inputs) {
  const kiln_op_t *op = &kiln_op_dyn_resize;
  const kiln_dtype_t dtypes[3] = {KILN_DTYPE_FLOAT32, KILN_DTYPE_FLOAT32, KILN_DTYPE_INT64};
  const int64_t empty[1] = {0};
  kiln_expr_t *args[4] = {NULL, NULL, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &args[0]));
  for (int k = 0; k < 3; ++k) {
    args[k + 1] = inputs[k] >= 0 ? kiln_onnx_input_optional(node, inputs[k]) : NULL;
    if (!args[k + 1]) {
      KILN_RETURN_IF_ERROR(kiln_onnx_filled(node, dtypes[k], 1, empty, 0.0, &args[k + 1]));
    }
  }
  void *attrs = NULL;
  const kiln_resize_rule_t *rule = &mode->rule;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "mode", rule->mode));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_string(op, attrs, "coordinate_transformation_mode", rule->coordinate));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "nearest_mode", rule->rounding));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "cubic_coeff_a", rule->cubic_a));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "exclude_outside", rule->exclude_outside));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "extrapolation_value", rule->extrapolation));
  return kiln_onnx_emit(node, op, 4, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_resize(kiln_onnx_node_t *node) {
  kiln_onnx_resize_t mode = {{NULL, "half_pixel", "round_prefer_floor", -0.75, false, 0.0}, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_resize_mode(node, "nearest", &mode));
  bool opset10 = node->importer->opset < 11;
  if (opset10) { /* Upsample's rule: x / scale, rounded down */
    mode.rule.coordinate = "asymmetric";
    mode.rule.rounding = "floor";
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_attrs(node, &mode));
  }
  bool crops = strcmp(mode.rule.coordinate, "tf_crop_and_resize") == 0, dynamic = false;
  const int lists[3] = {crops ? 1 : -1, opset10 ? 1 : 2, opset10 ? -1 : 3};
  KILN_RETURN_IF_ERROR(kiln_onnx_resize_dynamic(node, 3, lists, &dynamic));
  if (dynamic) {
    return kiln_onnx_resize_dyn(node, &mode, lists);
  }
  double *scales = NULL, *roi = NULL;
  int count = 0, roi_count = 0;
  kiln_ints_t sizes = {0, NULL};
  if (!opset10 && kiln_onnx_input_optional(node, 3)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 3, "sizes", &sizes));
  }
  if (sizes.count == 0) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_resize_doubles(node, opset10 ? 1 : 2, "scales", &scales, &count));
  }
  if (crops) {
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_doubles(node, 1, "roi", &roi, &roi_count));
    if (roi_count != 2 * kiln_onnx_type_of(node->inputs[0])->ndim) {
      return KILN_STATUS(INVALID_ARGUMENT, "roi has %d values; expected 2 per dim", roi_count);
    }
    mode.roi = roi;
  }
  return kiln_onnx_resize(node, scales, count, &sizes, &mode);
}

kiln_status_t kiln_onnx_convert_upsample(kiln_onnx_node_t *node) {
  kiln_onnx_resize_t mode = {{NULL, "asymmetric", "floor", -0.75, false, 0.0}, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_resize_mode(node, "nearest", &mode));
  double *scales = NULL;
  kiln_floats_t floats = {0, NULL};
  int count = 0;
  if (node->importer->opset >= 9) {
    const int lists[3] = {-1, 1, -1};
    bool dynamic = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_dynamic(node, 3, lists, &dynamic));
    if (dynamic) {
      return kiln_onnx_resize_dyn(node, &mode, lists);
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_doubles(node, 1, "scales", &scales, &count));
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_floats(node, "scales", &floats, NULL));
    count = (int)floats.count;
  }
  return kiln_onnx_resize(node, scales ? scales : floats.values, count, NULL, &mode);
}

/* ---- GridSample ---- */

kiln_status_t kiln_onnx_convert_grid_sample(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *grid = NULL;
  const char *mode = NULL, *padding = NULL;
  int64_t align = 0;
  void *attrs = NULL;
  const kiln_op_t *op = &kiln_op_grid_sample;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 2));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &grid));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "bilinear", &mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "padding_mode", "zeros", &padding));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "align_corners", 0, &align));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "method", mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "padding_mode", padding));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "align_corners", align != 0));
  return kiln_onnx_emit2(node, op, x, grid, attrs, &node->outputs[0]);
}

/* ---- RoiAlign ---- */

kiln_status_t kiln_onnx_convert_roi_align(kiln_onnx_node_t *node) {
  kiln_expr_t *args[3] = {NULL, NULL, NULL};
  int64_t height = 1, width = 1, ratio = 0;
  double scale = 1.0;
  const char *mode = NULL, *coordinates = NULL;
  void *attrs = NULL;
  const kiln_op_t *op = &kiln_op_roi_align;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 3));
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "output_height", 1, &height));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "output_width", 1, &width));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "sampling_ratio", 0, &ratio));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "spatial_scale", 1.0, &scale));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "avg", &mode));
  const char *fallback = node->importer->opset >= 16 ? "half_pixel" : "output_half_pixel";
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_string(node, "coordinate_transformation_mode", fallback, &coordinates));
  bool aligned = strcmp(coordinates, "half_pixel") == 0;
  if (!aligned && strcmp(coordinates, "output_half_pixel") != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "coordinate_transformation_mode \"%s\" is not half_pixel or "
                       "output_half_pixel",
                       coordinates);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, op, attrs, "pooled_size", 2, (const int64_t[]){height, width}));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "spatial_scale", scale));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "sample_ratio", ratio));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "mode", mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "aligned", aligned));
  return kiln_onnx_emit(node, op, 3, args, attrs, &node->outputs[0]);
}
