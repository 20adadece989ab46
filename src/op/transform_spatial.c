/*
 * Spatial operators: nn.pad, image.resize2d, nn.depth_to_space and
 * nn.space_to_depth.
 *
 * pad maps every output index back to a source index dim by dim: inside the
 * data it is the data; outside, "constant" writes pad_value (converted to
 * the dtype through kiln_scalar_t, so ints truncate and saturate), "edge"
 * clamps to the nearest edge, "reflect" mirrors about the edge without
 * repeating it (numpy's 'reflect'; a pad of dim or more is an error, so one
 * mirror always suffices). A negative pad crops that side (as ONNX Pad); the
 * mirror and the edge stay those of the original data. pad_width lists
 * before and after for dim 0, then dim 1, and so on.
 *
 * resize2d follows the ONNX Resize specification: scale = out / in per axis,
 * the coordinate transformation maps an output index to a source
 * coordinate, nearest rounds it by rounding_method and clamps it to the
 * input, linear interpolates between the two neighbours with the coordinate
 * clamped to [0, in - 1] (the edge-padding of the ONNX reference). The
 * arithmetic is in double, as the ONNX reference implementation computes it.
 *
 * depth_to_space moves blocks of block_size x block_size channels into
 * space, (N, C, H, W) -> (N, C / b^2, H b, W b), space_to_depth the reverse
 * (the DCR order: the block offset is the outer part of the channel). Output
 * element (n, c, h b + i, w b + j) of depth_to_space is input channel
 * (i b + j) C' + c in mode "DCR" and c b^2 + i b + j in mode "CRD"
 * (C' = C / b^2), as ONNX DepthToSpace. Both walk the output and copy bytes,
 * so they take every dtype; NCHW only.
 */
#include <math.h>
#include <string.h>

#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"
#include "runtime/shape_func.h"

/* INVALID_ARGUMENT unless string attribute `name` is one of `names`. */
static kiln_status_t check_name(const kiln_op_t *op, const char *name, const char *value,
                                const char *const *names, int count, const char *list) {
  if (kiln_transform_name_index(value, names, count) < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s \"%s\" is not one of %s", op->name, name,
                       value ? value : "", list);
  }
  return KILN_OK;
}

/* ---- nn.pad ---- */

static const kiln_attr_field_t kiln_pad_fields[] = {
    KILN_ATTR_FIELD(kiln_pad_attrs_t, pad_width, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_pad_attrs_t, pad_mode, STRING, "\"constant\""),
    KILN_ATTR_FIELD(kiln_pad_attrs_t, pad_value, FLOAT, "0.0"),
};

typedef enum pad_mode_e {
  PAD_CONSTANT,
  PAD_EDGE,
  PAD_REFLECT,
} pad_mode_t;

static const char *const kiln_pad_modes[] = {"constant", "edge", "reflect"};

static kiln_status_t pad_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_pad_attrs_t *pad = attrs;
  KILN_RETURN_IF_ERROR(
      check_name(op, "pad_mode", pad->pad_mode, kiln_pad_modes, 3, "constant, edge, reflect"));
  if (pad->pad_width.count % 2 != 0 || pad->pad_width.count > 2 * KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: pad_width has %d values; it needs a before and an after per dim",
                       op->name, (int)pad->pad_width.count);
  }
  return KILN_OK;
}

/* One dim's padding must leave a size >= 0 and have a source for its mode:
 * the rule dyn.pad shares (runtime/shape_func.h). */
static kiln_status_t pad_check_dim(const kiln_op_t *op, pad_mode_t mode,
                                   const kiln_tensor_type_t *data, int d, int64_t before,
                                   int64_t after, int64_t *out_dim) {
  return kiln_shape_pad_dim(op->name, (int)mode, data->ndim, data->shape, d, before, after,
                            out_dim);
}

static kiln_status_t pad_rule(const kiln_op_t *op, const void *attrs, const kiln_tinputs_t *inputs,
                              kiln_tshape_t *out_shape) {
  const kiln_pad_attrs_t *pad = attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  if (pad->pad_width.count != 2 * data.ndim) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: pad_width has %d values but data %s needs %d",
                       op->name, (int)pad->pad_width.count, kiln_op_shape_text(&data, shape),
                       2 * data.ndim);
  }
  pad_mode_t mode = (pad_mode_t)kiln_transform_name_index(pad->pad_mode, kiln_pad_modes, 3);
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  for (int d = 0; d < data.ndim; ++d) {
    KILN_RETURN_IF_ERROR(pad_check_dim(op, mode, &data, d, pad->pad_width.values[2 * d],
                                       pad->pad_width.values[2 * d + 1], &out_shape->dims[d]));
  }
  return KILN_OK;
}

static kiln_status_t pad_infer_type(const kiln_type_relation_t *relation,
                                    const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, pad_rule, out_type);
}

/* The source of output index `index` on one dim; false for the constant. */
static bool pad_source(pad_mode_t mode, int64_t index, int64_t before, int64_t dim,
                       int64_t *out_source) {
  int64_t source = index - before;
  if (source >= 0 && source < dim) {
    *out_source = source;
    return true;
  }
  if (mode == PAD_EDGE) {
    *out_source = source < 0 ? 0 : dim - 1;
    return true;
  }
  if (mode == PAD_REFLECT) {
    *out_source = source < 0 ? -source : 2 * (dim - 1) - source;
    return true;
  }
  return false;
}

static kiln_status_t pad_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, pad_rule, &inputs));
  const kiln_pad_attrs_t *pad = args->attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  kiln_scalar_kind_t kind = kiln_scalar_kind(data.dtype);
  pad_mode_t mode = (pad_mode_t)kiln_transform_name_index(pad->pad_mode, kiln_pad_modes, 3);
  size_t size = kiln_dtype_size(data.dtype);
  char fill[8];
  kiln_scalar_store(kind, fill, 0, kiln_scalar_float(pad->pad_value));
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data.ndim, data.shape, strides);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, data.ndim, kiln_tensor_shape(args->outputs[0]));
  for (int64_t i = 0; i < count; ++i) {
    bool inside = true;
    int64_t offset = 0;
    for (int d = 0; d < data.ndim && inside; ++d) {
      int64_t source = 0;
      inside =
          pad_source(mode, walk.index[d], pad->pad_width.values[2 * d], data.shape[d], &source);
      offset += source * strides[d];
    }
    memcpy(dst + (size_t)i * size, inside ? src + (size_t)offset * size : fill, size);
    kiln_walk_next(&walk);
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_pad = {
    .name = "nn.pad",
    .id = KILN_OP_PAD,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_pad_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_pad_fields) / sizeof(kiln_pad_fields[0])),
    .attr_fields = kiln_pad_fields,
    .validate_attrs = pad_validate,
    .infer_type = pad_infer_type,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_pad_impl = {
    .reference = pad_reference,
    .compute = kiln_compute_pad,
};

/* ---- image.resize2d ---- */

static const kiln_attr_field_t kiln_resize2d_fields[] = {
    KILN_ATTR_FIELD(kiln_resize2d_attrs_t, size, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_resize2d_attrs_t, layout, STRING, "\"NCHW\""),
    KILN_ATTR_FIELD(kiln_resize2d_attrs_t, method, STRING, "\"linear\""),
    KILN_ATTR_FIELD(kiln_resize2d_attrs_t, coordinate_transformation_mode, STRING,
                    "\"half_pixel\""),
    KILN_ATTR_FIELD(kiln_resize2d_attrs_t, rounding_method, STRING, "\"round_prefer_floor\""),
};

static const char *const kiln_resize_layouts[] = {"NCHW"};
static const char *const kiln_resize_methods[] = {"nearest_neighbor", "linear"};
static const char *const kiln_resize_coordinates[] = {"half_pixel", "align_corners", "asymmetric",
                                                      "pytorch_half_pixel"};
static const char *const kiln_resize_roundings[] = {"round_prefer_floor", "round_prefer_ceil",
                                                    "floor", "ceil"};

static kiln_status_t resize_enum(const kiln_op_t *op, const char *name, const char *value,
                                 const char *const *names, int count, int *out_index) {
  *out_index = kiln_transform_name_index(value, names, count);
  if (*out_index < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s \"%s\" is not supported", op->name, name,
                       value ? value : "");
  }
  return KILN_OK;
}

kiln_status_t kiln_resize_mode_of(const kiln_op_t *op, const kiln_resize2d_attrs_t *attrs,
                                  kiln_resize_mode_t *out_mode) {
  int method = 0, coordinates = 0, rounding = 0;
  KILN_RETURN_IF_ERROR(resize_enum(op, "method", attrs->method, kiln_resize_methods, 2, &method));
  KILN_RETURN_IF_ERROR(resize_enum(op, "coordinate_transformation_mode",
                                   attrs->coordinate_transformation_mode, kiln_resize_coordinates,
                                   4, &coordinates));
  KILN_RETURN_IF_ERROR(resize_enum(op, "rounding_method", attrs->rounding_method,
                                   kiln_resize_roundings, 4, &rounding));
  out_mode->method = (kiln_resize_method_t)method;
  out_mode->coordinates = (kiln_resize_coordinates_t)coordinates;
  out_mode->rounding = (kiln_resize_rounding_t)rounding;
  return KILN_OK;
}

/* size may still be [] (the default): the relation asks for it. */
static kiln_status_t resize2d_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_resize2d_attrs_t *resize = attrs;
  KILN_RETURN_IF_ERROR(check_name(op, "layout", resize->layout, kiln_resize_layouts, 1, "NCHW"));
  KILN_RETURN_IF_ERROR(
      check_name(op, "method", resize->method, kiln_resize_methods, 2, "nearest_neighbor, linear"));
  KILN_RETURN_IF_ERROR(check_name(op, "coordinate_transformation_mode",
                                  resize->coordinate_transformation_mode, kiln_resize_coordinates,
                                  4, "half_pixel, align_corners, asymmetric, pytorch_half_pixel"));
  KILN_RETURN_IF_ERROR(check_name(op, "rounding_method", resize->rounding_method,
                                  kiln_resize_roundings, 4,
                                  "round_prefer_floor, round_prefer_ceil, floor, ceil"));
  bool sized = resize->size.count == 2 && resize->size.values[0] > 0 && resize->size.values[1] > 0;
  if (resize->size.count != 0 && !sized) {
    char list[KILN_INTS_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: size %s must be [H, W] with H, W > 0", op->name,
                       kiln_ints_text(&resize->size, list));
  }
  return KILN_OK;
}

static kiln_status_t resize2d_rule(const kiln_op_t *op, const void *attrs,
                                   const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_resize2d_attrs_t *resize = attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  if (data.ndim != 4) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must have rank 4 (NCHW)", op->name,
                       kiln_op_shape_text(&data, shape));
  }
  if (resize->size.count != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: size must give the output [H, W] for data %s",
                       op->name, kiln_op_shape_text(&data, shape));
  }
  if (data.shape[2] == 0 || data.shape[3] == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s has empty planes to sample from", op->name,
                       kiln_op_shape_text(&data, shape));
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = 4;
  out_shape->dims[0] = data.shape[0];
  out_shape->dims[1] = data.shape[1];
  out_shape->dims[2] = resize->size.values[0];
  out_shape->dims[3] = resize->size.values[1];
  return KILN_OK;
}

static kiln_status_t resize2d_infer_type(const kiln_type_relation_t *relation,
                                         const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, resize2d_rule, out_type);
}

/* The rule of an operator with a layout attribute: its input in it, and its output. */
static kiln_status_t layout_attribute_rule(kiln_layout_relation_t *relation, const char *layout) {
  relation->required_layouts[0] = layout;
  relation->output_layout = layout;
  return KILN_OK;
}

static kiln_status_t resize2d_layout(kiln_layout_relation_t *relation) {
  return layout_attribute_rule(relation, ((const kiln_resize2d_attrs_t *)relation->attrs)->layout);
}

/* The source coordinate of output index x on an axis of in -> out (ONNX Resize). */
static double resize_coordinate(kiln_resize_coordinates_t mode, int64_t x, int64_t in,
                                int64_t out) {
  double scale = (double)out / (double)in;
  switch (mode) {
  case KILN_RESIZE_COORDINATES_HALF_PIXEL:
    return ((double)x + 0.5) / scale - 0.5;
  case KILN_RESIZE_COORDINATES_PYTORCH_HALF_PIXEL:
    return out > 1 ? ((double)x + 0.5) / scale - 0.5 : 0.0;
  case KILN_RESIZE_COORDINATES_ALIGN_CORNERS:
    return out == 1 ? 0.0 : (double)x * (double)(in - 1) / (double)(out - 1);
  case KILN_RESIZE_COORDINATES_ASYMMETRIC:
    return (double)x / scale;
  }
  return 0.0;
}

static int64_t clamp_index(double value, int64_t in) {
  return value < 0.0 ? 0 : value > (double)(in - 1) ? in - 1 : (int64_t)value;
}

/* The nearest source index (ONNX Resize: ties by rounding, then clamped). */
static int64_t resize_nearest(kiln_resize_rounding_t rounding, double x, int64_t in) {
  double low = floor(x);
  double ratio = x - low;
  bool up = false;
  switch (rounding) {
  case KILN_RESIZE_ROUNDING_ROUND_PREFER_FLOOR:
    up = ratio > 0.5;
    break;
  case KILN_RESIZE_ROUNDING_ROUND_PREFER_CEIL:
    up = ratio >= 0.5;
    break;
  case KILN_RESIZE_ROUNDING_FLOOR:
    up = false;
    break;
  case KILN_RESIZE_ROUNDING_CEIL:
    up = ratio > 0.0;
    break;
  }
  return clamp_index(up ? low + 1.0 : low, in);
}

/* One axis's sampling of an output index: two source indices and the weight of the second. */
typedef struct resize_tap_t {
  int64_t i0;
  int64_t i1;
  double t;
} resize_tap_t;

typedef kiln_resize_mode_t resize_plan_t;

static resize_tap_t resize_tap(const resize_plan_t *plan, int64_t x, int64_t in, int64_t out) {
  double source = resize_coordinate(plan->coordinates, x, in, out);
  if (plan->method == KILN_RESIZE_METHOD_NEAREST) {
    int64_t index = resize_nearest(plan->rounding, source, in);
    return (resize_tap_t){index, index, 0.0};
  }
  double clamped = source < 0.0 ? 0.0 : source > (double)(in - 1) ? (double)(in - 1) : source;
  int64_t i0 = (int64_t)floor(clamped);
  int64_t i1 = i0 + 1 < in ? i0 + 1 : in - 1;
  return (resize_tap_t){i0, i1, clamped - (double)i0};
}

/* One output plane from one input plane (in_h x in_w -> out_h x out_w). */
static void resize_plane(const resize_plan_t *plan, const float *in, int64_t in_h, int64_t in_w,
                         float *out, int64_t out_h, int64_t out_w) {
  for (int64_t y = 0; y < out_h; ++y) {
    resize_tap_t ty = resize_tap(plan, y, in_h, out_h);
    const float *row0 = in + ty.i0 * in_w;
    const float *row1 = in + ty.i1 * in_w;
    for (int64_t x = 0; x < out_w; ++x) {
      resize_tap_t tx = resize_tap(plan, x, in_w, out_w);
      if (plan->method == KILN_RESIZE_METHOD_NEAREST) {
        out[y * out_w + x] = row0[tx.i0];
        continue;
      }
      double top = (1.0 - tx.t) * row0[tx.i0] + tx.t * row0[tx.i1];
      double bottom = (1.0 - tx.t) * row1[tx.i0] + tx.t * row1[tx.i1];
      out[y * out_w + x] = (float)((1.0 - ty.t) * top + ty.t * bottom);
    }
  }
}

static kiln_status_t resize2d_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, resize2d_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  if (data.dtype != KILN_DTYPE_FLOAT32) {
    return kiln_transform_unsupported_dtype(args->op, data.dtype, "float32");
  }
  const kiln_resize2d_attrs_t *resize = args->attrs;
  resize_plan_t plan;
  KILN_RETURN_IF_ERROR(kiln_resize_mode_of(args->op, resize, &plan));
  const int64_t *out_shape = kiln_tensor_shape(args->outputs[0]);
  int64_t planes = data.shape[0] * data.shape[1];
  int64_t in_h = data.shape[2];
  int64_t in_w = data.shape[3];
  int64_t out_h = out_shape[2];
  int64_t out_w = out_shape[3];
  const float *in = kiln_tensor_data(args->inputs[0]);
  float *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t p = 0; p < planes; ++p) {
    resize_plane(&plan, in + p * in_h * in_w, in_h, in_w, out + p * out_h * out_w, out_h, out_w);
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_resize2d = {
    .name = "image.resize2d",
    .id = KILN_OP_RESIZE2D,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_resize2d_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_resize2d_fields) / sizeof(kiln_resize2d_fields[0])),
    .attr_fields = kiln_resize2d_fields,
    .validate_attrs = resize2d_validate,
    .infer_type = resize2d_infer_type,
    .correct_layout = resize2d_layout,
};

const kiln_op_impl_t kiln_op_resize2d_impl = {
    .reference = resize2d_reference,
    .compute = kiln_compute_resize2d,
};

/* ---- nn.depth_to_space and nn.space_to_depth ---- */

static const kiln_attr_field_t kiln_depth_to_space_fields[] = {
    KILN_ATTR_FIELD(kiln_depth_space_attrs_t, block_size, INT, "1"),
    KILN_ATTR_FIELD(kiln_depth_space_attrs_t, layout, STRING, "\"NCHW\""),
    KILN_ATTR_FIELD(kiln_depth_space_attrs_t, mode, STRING, "\"DCR\""),
};

static const kiln_attr_field_t kiln_space_to_depth_fields[] = {
    KILN_ATTR_FIELD(kiln_depth_space_attrs_t, block_size, INT, "1"),
    KILN_ATTR_FIELD(kiln_depth_space_attrs_t, layout, STRING, "\"NCHW\""),
};

static const char *const kiln_depth_space_modes[] = {"DCR", "CRD"};

static bool depth_space_is_d2s(const kiln_op_t *op) {
  return op->id == KILN_OP_DEPTH_TO_SPACE;
}

static kiln_status_t depth_space_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_depth_space_attrs_t *a = attrs;
  if (a->block_size < 1 || a->block_size > ((int64_t)1 << 30)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: block_size is %lld, not in [1, %lld]", op->name,
                       (long long)a->block_size, (long long)1 << 30);
  }
  KILN_RETURN_IF_ERROR(check_name(op, "layout", a->layout, kiln_resize_layouts, 1, "NCHW"));
  if (depth_space_is_d2s(op)) {
    KILN_RETURN_IF_ERROR(check_name(op, "mode", a->mode, kiln_depth_space_modes, 2, "DCR, CRD"));
  }
  return KILN_OK;
}

static kiln_status_t depth_space_rule(const kiln_op_t *op, const void *attrs,
                                      const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_depth_space_attrs_t *a = attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  if (data.ndim != 4) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must have rank 4 (NCHW)", op->name,
                       kiln_op_shape_text(&data, shape));
  }
  int64_t b = a->block_size;
  int64_t square = b * b;
  out_shape->dtype = data.dtype;
  out_shape->ndim = 4;
  out_shape->dims[0] = data.shape[0];
  if (depth_space_is_d2s(op)) {
    if (data.shape[1] % square != 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: the %lld channels of data %s are not a multiple of block_size^2 %lld",
                         op->name, (long long)data.shape[1], kiln_op_shape_text(&data, shape),
                         (long long)square);
    }
    out_shape->dims[1] = data.shape[1] / square;
    if (!kiln_transform_mul(data.shape[2], b, &out_shape->dims[2]) ||
        !kiln_transform_mul(data.shape[3], b, &out_shape->dims[3])) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s times block_size %lld overflows int64",
                         op->name, kiln_op_shape_text(&data, shape), (long long)b);
    }
    return KILN_OK;
  }
  if (data.shape[2] % b != 0 || data.shape[3] % b != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: height and width of data %s are not multiples of block_size %lld",
                       op->name, kiln_op_shape_text(&data, shape), (long long)b);
  }
  if (!kiln_transform_mul(data.shape[1], square, &out_shape->dims[1])) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the channels of data %s times %lld overflow int64",
                       op->name, kiln_op_shape_text(&data, shape), (long long)square);
  }
  out_shape->dims[2] = data.shape[2] / b;
  out_shape->dims[3] = data.shape[3] / b;
  return KILN_OK;
}

static kiln_status_t depth_space_infer_type(const kiln_type_relation_t *relation,
                                            const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, depth_space_rule, out_type);
}

/* The input channel, row and column of depth_to_space output (c, y, x). */
static void depth_to_space_source(const kiln_depth_space_attrs_t *a, int64_t out_channels,
                                  const int64_t *index, int64_t *out_source) {
  int64_t b = a->block_size;
  int64_t i = index[2] % b;
  int64_t j = index[3] % b;
  bool dcr = strcmp(a->mode, "DCR") == 0;
  out_source[1] = dcr ? (i * b + j) * out_channels + index[1] : index[1] * b * b + i * b + j;
  out_source[2] = index[2] / b;
  out_source[3] = index[3] / b;
}

/* The input channel, row and column of space_to_depth output (c, y, x). */
static void space_to_depth_source(const kiln_depth_space_attrs_t *a, int64_t in_channels,
                                  const int64_t *index, int64_t *out_source) {
  int64_t b = a->block_size;
  int64_t block = index[1] / in_channels;
  out_source[1] = index[1] % in_channels;
  out_source[2] = index[2] * b + block / b;
  out_source[3] = index[3] * b + block % b;
}

static kiln_status_t depth_space_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, depth_space_rule, &inputs));
  const kiln_depth_space_attrs_t *a = args->attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  const int64_t *out_dims = kiln_tensor_shape(args->outputs[0]);
  int64_t strides[4];
  kiln_shape_compact_strides(4, data.shape, strides);
  size_t size = kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, 4, out_dims);
  for (int64_t e = 0; e < count; ++e, kiln_walk_next(&walk)) {
    int64_t source[4] = {walk.index[0], 0, 0, 0};
    if (depth_space_is_d2s(args->op)) {
      depth_to_space_source(a, out_dims[1], walk.index, source);
    } else {
      space_to_depth_source(a, data.shape[1], walk.index, source);
    }
    int64_t offset = 0;
    for (int d = 0; d < 4; ++d) {
      offset += source[d] * strides[d];
    }
    memcpy(dst + (size_t)e * size, src + (size_t)offset * size, size);
  }
  return KILN_OK;
}

static kiln_status_t depth_space_layout(kiln_layout_relation_t *relation) {
  return layout_attribute_rule(relation,
                               ((const kiln_depth_space_attrs_t *)relation->attrs)->layout);
}

#define KILN_DEPTH_SPACE_OP_(symbol, ID, NAME, fields)                      \
  const kiln_op_t symbol = {                                                \
      .name = NAME,                                                         \
      .id = KILN_OP_##ID,                                                   \
      .min_inputs = 1,                                                      \
      .max_inputs = 1,                                                      \
      .pattern = KILN_OP_PATTERN_INJECTIVE,                                 \
      .attrs_size = sizeof(kiln_depth_space_attrs_t),                       \
      .num_attr_fields = (int)(sizeof(fields) / sizeof(fields[0])),         \
      .attr_fields = fields,                                                \
      .validate_attrs = depth_space_validate,                               \
      .infer_type = depth_space_infer_type,                                 \
      .correct_layout = depth_space_layout,                                 \
  };                                                                        \
  const kiln_op_impl_t symbol##_impl = {.reference = depth_space_reference, \
                                        .compute = kiln_compute_depth_space}

KILN_DEPTH_SPACE_OP_(kiln_op_depth_to_space, DEPTH_TO_SPACE, "nn.depth_to_space",
                     kiln_depth_to_space_fields);
KILN_DEPTH_SPACE_OP_(kiln_op_space_to_depth, SPACE_TO_DEPTH, "nn.space_to_depth",
                     kiln_space_to_depth_fields);
