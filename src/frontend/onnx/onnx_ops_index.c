/*
 * Indexing converters: Concat, Split, Slice, Gather, Pad, Resize and
 * Upsample.
 *
 * Operators that took attributes in early opsets and inputs later have one
 * converter per form, which read their lists and hand them to a shared
 * builder; list inputs must be constants (kiln_onnx_input_ints). Slice maps
 * onto strided_slice, which implements ONNX's clamping; Split's sizes become
 * split's cut points, and its tuple result one TupleGetItem per output; Pad's
 * [x1_begin, x2_begin, ..., x1_end, ...] is reordered into pad_width's
 * before/after pairs. Resize and Upsample map onto image.resize2d when the
 * input is 4-D, N and C keep their size, and the output size follows from
 * the scales exactly (resize2d derives its scale as out / in); cubic mode
 * and the tf_* coordinate modes are refused.
 */
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* ---- Concat ---- */

kiln_status_t kiln_onnx_convert_concat(kiln_onnx_node_t *node) {
  int64_t axis = 0;
  void *attrs = NULL;
  if (!kiln_onnx_attr(node, "axis")) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute axis is required");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  for (int i = 0; i < node->num_inputs; ++i) {
    kiln_expr_t *input = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &input));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_concatenate, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_concatenate, attrs, "axis", axis));
  return kiln_onnx_emit(node, &kiln_op_concatenate, node->num_inputs, node->inputs, attrs,
                        &node->outputs[0]);
}

/* ---- Split ---- */

/* Splits input 0 along `axis` into parts of `sizes` (NULL: equal parts, one
 * per output). */
static kiln_status_t kiln_onnx_split(kiln_onnx_node_t *node, int64_t axis_attr,
                                     const kiln_ints_t *sizes) {
  kiln_expr_t *x = NULL, *parts = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(&kiln_op_split, axis_attr, xt->ndim, &axis));
  const kiln_op_t *op = &kiln_op_split;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  if (sizes && sizes->count > 1) {
    if (sizes->count != node->num_outputs) {
      return KILN_STATUS(INVALID_ARGUMENT, "split has %d sizes for %d outputs", (int)sizes->count,
                         node->num_outputs);
    }
    int64_t indices[KILN_MAX_RANK * 8], at = 0, total = 0;
    if (sizes->count - 1 > (int32_t)(sizeof(indices) / sizeof(indices[0]))) {
      return KILN_STATUS(UNIMPLEMENTED, "split into %d parts", (int)sizes->count);
    }
    for (int32_t i = 0; i < sizes->count; ++i) {
      if (sizes->values[i] < 0) {
        return KILN_STATUS(INVALID_ARGUMENT, "split[%d] is %lld", (int)i,
                           (long long)sizes->values[i]);
      }
      total += sizes->values[i];
      if (i + 1 < sizes->count) {
        indices[at++] = total;
      }
    }
    if (total != xt->shape[axis]) {
      return KILN_STATUS(INVALID_ARGUMENT, "split sizes add up to %lld but dim %d is %lld",
                         (long long)total, axis, (long long)xt->shape[axis]);
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "indices", (int)at, indices));
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "sections", node->num_outputs));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &parts));
  for (int i = 0; i < node->num_outputs; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, parts, i, &node->outputs[i]));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_split_attrs(kiln_onnx_node_t *node) {
  int64_t axis = 0;
  kiln_ints_t sizes;
  bool present = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "split", &sizes, &present));
  return kiln_onnx_split(node, axis, present ? &sizes : NULL);
}

kiln_status_t kiln_onnx_convert_split_inputs(kiln_onnx_node_t *node) {
  int64_t axis = 0;
  kiln_ints_t sizes;
  bool present = kiln_onnx_input_optional(node, 1) != NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  if (present) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "split", &sizes));
  }
  return kiln_onnx_split(node, axis, present ? &sizes : NULL);
}

/* ---- Slice ---- */

static kiln_status_t kiln_onnx_slice(kiln_onnx_node_t *node, const kiln_ints_t *starts,
                                     const kiln_ints_t *ends, const kiln_ints_t *axes,
                                     const kiln_ints_t *steps) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (ends->count != starts->count || (axes->count && axes->count != starts->count) ||
      (steps->count && steps->count != starts->count)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "starts, ends, axes and steps have %d, %d, %d and %d values",
                       (int)starts->count, (int)ends->count, (int)axes->count, (int)steps->count);
  }
  const kiln_op_t *op = &kiln_op_strided_slice;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "begin", starts->count, starts->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "end", ends->count, ends->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axes", axes->count, axes->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "strides", steps->count, steps->values));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_slice_attrs(kiln_onnx_node_t *node) {
  kiln_ints_t starts, ends, axes, steps = {0, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "starts", &starts, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "ends", &ends, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "axes", &axes, NULL));
  return kiln_onnx_slice(node, &starts, &ends, &axes, &steps);
}

kiln_status_t kiln_onnx_convert_slice_inputs(kiln_onnx_node_t *node) {
  kiln_ints_t starts, ends, axes = {0, NULL}, steps = {0, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "starts", &starts));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 2, "ends", &ends));
  if (kiln_onnx_input_optional(node, 3)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 3, "axes", &axes));
  }
  if (kiln_onnx_input_optional(node, 4)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 4, "steps", &steps));
  }
  return kiln_onnx_slice(node, &starts, &ends, &axes, &steps);
}

/* ---- Gather ---- */

kiln_status_t kiln_onnx_convert_gather(kiln_onnx_node_t *node) {
  kiln_expr_t *data = NULL, *indices = NULL;
  int64_t axis = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &indices));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_take, attrs, "axis", axis));
  return kiln_onnx_emit2(node, &kiln_op_take, data, indices, attrs, &node->outputs[0]);
}

/* ---- Pad ---- */

static kiln_status_t kiln_onnx_pad(kiln_onnx_node_t *node, const kiln_ints_t *pads,
                                   const char *mode, double value) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  int rank = kiln_onnx_type_of(x)->ndim;
  if (pads->count != 2 * rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "pads has %d values; rank %d needs %d", (int)pads->count,
                       rank, 2 * rank);
  }
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0) {
    return KILN_STATUS(UNIMPLEMENTED, "mode \"%s\" is not supported (constant, reflect, edge)",
                       mode);
  }
  int64_t width[2 * KILN_MAX_RANK];
  for (int d = 0; d < rank; ++d) {
    width[2 * d] = pads->values[d];
    width[2 * d + 1] = pads->values[rank + d];
  }
  const kiln_op_t *op = &kiln_op_pad;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "pad_width", 2 * rank, width));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "pad_mode", mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "pad_value", value));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_pad_attrs(kiln_onnx_node_t *node) {
  kiln_ints_t pads;
  const char *mode = "constant";
  double value = 0.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "pads", &pads, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "constant", &mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "value", 0.0, &value));
  return kiln_onnx_pad(node, &pads, mode, value);
}

kiln_status_t kiln_onnx_convert_pad_inputs(kiln_onnx_node_t *node) {
  kiln_ints_t pads;
  const char *mode = "constant";
  double value = 0.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "pads", &pads));
  if (kiln_onnx_input_optional(node, 2)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "constant_value", &value));
  }
  if (kiln_onnx_input_optional(node, 3)) {
    return KILN_STATUS(UNIMPLEMENTED, "the axes input is not supported");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "constant", &mode));
  return kiln_onnx_pad(node, &pads, mode, value);
}

/* ---- Resize and Upsample ---- */

typedef struct kiln_onnx_resize_t {
  const char *method;     /* resize2d's: nearest_neighbor | linear */
  const char *coordinate; /* coordinate_transformation_mode */
  const char *rounding;   /* nearest rounding */
} kiln_onnx_resize_t;

/* The output H and W from `scales` (4 values), which must give them exactly. */
static kiln_status_t kiln_onnx_resize_from_scales(const kiln_tensor_type_t *xt,
                                                  const double *scales, int64_t *out_size) {
  for (int d = 0; d < 4; ++d) {
    double exact = (double)xt->shape[d] * scales[d];
    int64_t out = (int64_t)floor(exact);
    if (d < 2 && scales[d] != 1.0) {
      return KILN_STATUS(UNIMPLEMENTED, "scaling dim %d (by %g) is not supported; only H and W", d,
                         scales[d]);
    }
    if (d >= 2 &&
        (out < 1 || fabs((double)out / (double)xt->shape[d] - scales[d]) > 1e-6 * scales[d])) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "scale %g of dim %d (%lld) does not give a whole output size; kiln's "
                         "resize2d takes the scale as output / input",
                         scales[d], d, (long long)xt->shape[d]);
    }
    if (d >= 2) {
      out_size[d - 2] = out;
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_resize_emit(kiln_onnx_node_t *node, kiln_expr_t *x,
                                           const int64_t *size, const kiln_onnx_resize_t *mode) {
  const kiln_op_t *op = &kiln_op_resize2d;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "size", 2, size));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "method", mode->method));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_string(op, attrs, "coordinate_transformation_mode", mode->coordinate));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "rounding_method", mode->rounding));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* Resizes input 0 by `scales` (count values) or to `sizes`. */
static kiln_status_t kiln_onnx_resize(kiln_onnx_node_t *node, const double *scales, int count,
                                      const kiln_ints_t *sizes, const kiln_onnx_resize_t *mode) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->ndim != 4) {
    return KILN_STATUS(UNIMPLEMENTED, "only 4-D (N, C, H, W) data is supported, not rank %d",
                       xt->ndim);
  }
  int64_t size[2];
  if (sizes && sizes->count > 0) {
    if (sizes->count != 4 || sizes->values[0] != xt->shape[0] || sizes->values[1] != xt->shape[1]) {
      return KILN_STATUS(UNIMPLEMENTED, "sizes must have 4 values that keep N and C");
    }
    size[0] = sizes->values[2];
    size[1] = sizes->values[3];
  } else {
    if (count != 4) {
      return KILN_STATUS(INVALID_ARGUMENT, "scales has %d values; expected 4", count);
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_from_scales(xt, scales, size));
  }
  return kiln_onnx_resize_emit(node, x, size, mode);
}

static kiln_status_t kiln_onnx_resize_method(const char *onnx_mode, const char **out_method) {
  if (strcmp(onnx_mode, "nearest") == 0) {
    *out_method = "nearest_neighbor";
  } else if (strcmp(onnx_mode, "linear") == 0 || strcmp(onnx_mode, "bilinear") == 0) {
    *out_method = "linear";
  } else {
    return KILN_STATUS(UNIMPLEMENTED, "mode \"%s\" is not supported (nearest, linear)", onnx_mode);
  }
  return KILN_OK;
}

/* The scales of constant input `index` as doubles in the arena. */
static kiln_status_t kiln_onnx_resize_scales(const kiln_onnx_node_t *node, int index,
                                             double *scales, int *out_count) {
  const kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, index, "scales", &tensor));
  int64_t count = kiln_tensor_element_count(tensor);
  if (count > 4) {
    return KILN_STATUS(UNIMPLEMENTED, "scales has %lld values; only 4-D data is supported",
                       (long long)count);
  }
  for (int64_t i = 0; i < count; ++i) {
    scales[i] = kiln_onnx_load_double(tensor, i);
  }
  *out_count = (int)count;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_resize(kiln_onnx_node_t *node) {
  const char *onnx_mode = "nearest";
  kiln_onnx_resize_t mode = {NULL, "half_pixel", "round_prefer_floor"};
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "nearest", &onnx_mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_resize_method(onnx_mode, &mode.method));
  bool opset10 = node->importer->opset < 11;
  if (opset10) { /* Upsample's rule: x / scale, rounded down */
    mode.coordinate = "asymmetric";
    mode.rounding = "floor";
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "coordinate_transformation_mode",
                                             mode.coordinate, &mode.coordinate));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "nearest_mode", mode.rounding, &mode.rounding));
  if (strncmp(mode.coordinate, "tf_", 3) == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "coordinate_transformation_mode \"%s\" is not supported",
                       mode.coordinate);
  }
  double scales[4];
  int count = 0;
  kiln_ints_t sizes = {0, NULL};
  int scales_at = opset10 ? 1 : 2;
  if (!opset10 && kiln_onnx_input_optional(node, 3)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 3, "sizes", &sizes));
  }
  if (sizes.count == 0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_scales(node, scales_at, scales, &count));
  }
  return kiln_onnx_resize(node, scales, count, &sizes, &mode);
}

kiln_status_t kiln_onnx_convert_upsample(kiln_onnx_node_t *node) {
  const char *onnx_mode = "nearest";
  kiln_onnx_resize_t mode = {NULL, "asymmetric", "floor"};
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "nearest", &onnx_mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_resize_method(onnx_mode, &mode.method));
  double scales[4];
  int count = 0;
  if (node->importer->opset >= 9) {
    KILN_RETURN_IF_ERROR(kiln_onnx_resize_scales(node, 1, scales, &count));
  } else {
    kiln_floats_t floats;
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_floats(node, "scales", &floats, NULL));
    count = floats.count < 4 ? (int)floats.count : 4;
    for (int i = 0; i < count; ++i) {
      scales[i] = floats.values[i];
    }
    if (floats.count > 4) {
      count = (int)floats.count;
    }
  }
  return kiln_onnx_resize(node, scales, count, NULL, &mode);
}
