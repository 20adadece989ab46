/*
 * dyn.resize: ONNX Resize (and Upsample) whose scales, sizes or roi are
 * known only at run time.
 *
 * When they are known at import, the ONNX importer builds image.resize2d or
 * interpolation matrices. Here the same rule (op/resize_rule.h, one
 * definition for both) runs at run time: the inputs are (data, roi,
 * scales, sizes), each list 1-D and possibly empty; sizes, when not empty,
 * give the output's shape (and each axis's scale out / in), else the scales
 * do (out = floor(in * scale)); roi is read for tf_crop_and_resize only.
 * The attributes are ONNX's, under ONNX's names.
 *
 * At import the output's rank is the data's and every dim is "?"; the shape
 * function reads the values. The reference kernel resizes one axis after
 * the other (resizing is separable), in double: each output position along
 * the axis is the row's weighted sum of the input positions plus the
 * row's offset, skipping zero weights so that nearest keeps infinities.
 * The graph compiler refuses it (kiln_dyn_compute_refuse).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "op/dyn.h"
#include "op/resize_rule.h"
#include "op/scalar.h"

typedef struct kiln_dyn_resize_attrs_t {
  const char *mode;
  const char *coordinate_transformation_mode;
  const char *nearest_mode;
  double cubic_coeff_a;
  bool exclude_outside;
  double extrapolation_value;
} kiln_dyn_resize_attrs_t;

enum { RESIZE_DATA, RESIZE_ROI, RESIZE_SCALES, RESIZE_SIZES };

/* The most elements along one output axis. */
#define RESIZE_MAX_EXTENT ((int64_t)1 << 31)

static kiln_resize_rule_t dyn_resize_rule(const kiln_dyn_resize_attrs_t *attrs) {
  return (kiln_resize_rule_t){.mode = attrs->mode,
                              .coordinate = attrs->coordinate_transformation_mode,
                              .rounding = attrs->nearest_mode,
                              .cubic_a = attrs->cubic_coeff_a,
                              .exclude_outside = attrs->exclude_outside,
                              .extrapolation = attrs->extrapolation_value};
}

static kiln_status_t dyn_resize_validate(const kiln_op_t *op, const void *attrs) {
  kiln_resize_rule_t rule = dyn_resize_rule(attrs);
  return kiln_status_annotate(kiln_resize_rule_check(&rule), "%s", op->name);
}

static bool dyn_resize_crops(const kiln_dyn_resize_attrs_t *attrs) {
  return strcmp(attrs->coordinate_transformation_mode, "tf_crop_and_resize") == 0;
}

/* ---- type relation and shape function ---- */

static kiln_status_t dyn_resize_infer(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, RESIZE_DATA, &data));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, RESIZE_ROI, "roi", true));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, RESIZE_SCALES, "scales", true));
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, RESIZE_SIZES, "sizes", false));
  kiln_scalar_class_t have = kiln_scalar_class(data->dtype);
  if (data->ndim < 1 || have == KILN_SCALAR_CLASS_NONE || have == KILN_SCALAR_CLASS_BOOL) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the data is %s of rank %d; expected numbers of rank "
                       ">= 1",
                       relation->op->name, kiln_dtype_name(data->dtype), data->ndim);
  }
  return kiln_dyn_symbolic_type(relation->arena, data->dtype, data->ndim, out_type);
}

/* The output's extent and scale along axis d from `value`, a size
 * (by_size) or a scale. */
static kiln_status_t dyn_resize_extent(const kiln_op_t *op, int d, int64_t in, double value,
                                       bool by_size, int64_t *out_extent, double *out_scale) {
  double extent = by_size ? value : floor((double)in * value);
  if (in == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: resizing an empty dim (%d) is not supported", op->name,
                       d);
  }
  if (!(extent >= 1.0 && extent < (double)RESIZE_MAX_EXTENT) || (!by_size && !(value > 0.0))) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dim %d would have %g elements (from %s %g)", op->name,
                       d, extent, by_size ? "size" : "scale", value);
  }
  *out_extent = (int64_t)extent;
  *out_scale = by_size ? extent / (double)in : value;
  return KILN_OK;
}

/* The output's shape and each axis's scale, from the sizes when given,
 * else the scales; checks the roi's length for tf_crop_and_resize. */
static kiln_status_t dyn_resize_plan(const kiln_op_t *op, const kiln_dyn_resize_attrs_t *attrs,
                                     kiln_tensor_t *const *inputs, int64_t *out_shape,
                                     double *out_scales) {
  const kiln_tensor_t *data = inputs[RESIZE_DATA], *sizes = inputs[RESIZE_SIZES];
  int rank = kiln_tensor_ndim(data);
  bool by_size = kiln_tensor_element_count(sizes) > 0;
  const kiln_tensor_t *given = by_size ? sizes : inputs[RESIZE_SCALES];
  if (kiln_tensor_element_count(given) != rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s has %lld values; the data has rank %d", op->name,
                       by_size ? "sizes" : "scales", (long long)kiln_tensor_element_count(given),
                       rank);
  }
  int64_t roi = kiln_tensor_element_count(inputs[RESIZE_ROI]);
  if (dyn_resize_crops(attrs) && roi != 2 * rank) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: roi has %lld values; tf_crop_and_resize needs 2 per dim (%d)", op->name,
                       (long long)roi, 2 * rank);
  }
  for (int d = 0; d < rank; ++d) {
    KILN_RETURN_IF_ERROR(dyn_resize_extent(op, d, kiln_tensor_shape(data)[d],
                                           kiln_tensor_element_as_double(given, d), by_size,
                                           &out_shape[d], &out_scales[d]));
  }
  return KILN_OK;
}

static kiln_status_t dyn_resize_shape_func(const kiln_shape_func_args_t *args,
                                           const kiln_type_t **out_type) {
  int64_t shape[KILN_MAX_RANK];
  double scales[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(dyn_resize_plan(args->op, args->attrs, args->inputs, shape, scales));
  const kiln_tensor_t *data = args->inputs[RESIZE_DATA];
  return kiln_tensor_type_create(args->arena, kiln_tensor_dtype(data), kiln_tensor_ndim(data),
                                 shape, out_type);
}

/* ---- reference kernel ---- */

typedef struct dyn_resize_axis_t {
  const kiln_resize_rule_t *rule;
  int64_t outer, in, inner, out;
  double scale, roi_start, roi_end;
} dyn_resize_axis_t;

/* to = from resized along one axis, viewed as (outer, in, inner) into
 * (outer, out, inner); row has `in` entries of scratch. */
static void dyn_resize_axis(const dyn_resize_axis_t *axis, const double *from, double *to,
                            double *row) {
  int64_t in = axis->in, inner = axis->inner;
  for (int64_t x = 0; x < axis->out; ++x) {
    double offset = 0.0;
    kiln_resize_rule_row(axis->rule, x, in, axis->scale, axis->roi_start, axis->roi_end, row,
                         &offset);
    for (int64_t o = 0; o < axis->outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        double sum = offset;
        for (int64_t i = 0; i < in; ++i) {
          sum += row[i] != 0.0 ? row[i] * from[(o * in + i) * inner + j] : 0.0;
        }
        to[(o * axis->out + x) * inner + j] = sum;
      }
    }
  }
}

/* Resizes `buffers[0]` (the data as doubles, of `shape`) axis by axis,
 * ping-ponging between the two buffers; *out_result is the last one. */
static void dyn_resize_all(const kiln_resize_rule_t *rule, const kiln_tensor_t *roi, int rank,
                           int64_t *shape, const int64_t *out_shape, const double *scales,
                           double **buffers, double *row, const double **out_result) {
  int current = 0;
  for (int d = 0; d < rank; ++d) {
    dyn_resize_axis_t axis = {.rule = rule, .outer = 1, .in = shape[d], .inner = 1};
    for (int k = 0; k < rank; ++k) {
      axis.outer *= k < d ? shape[k] : 1;
      axis.inner *= k > d ? shape[k] : 1;
    }
    axis.out = out_shape[d];
    axis.scale = scales[d];
    bool crops = strcmp(rule->coordinate, "tf_crop_and_resize") == 0;
    axis.roi_start = crops ? kiln_tensor_element_as_double(roi, d) : 0.0;
    axis.roi_end = crops ? kiln_tensor_element_as_double(roi, rank + d) : 1.0;
    dyn_resize_axis(&axis, buffers[current], buffers[1 - current], row);
    current = 1 - current;
    shape[d] = out_shape[d];
  }
  *out_result = buffers[current];
}

/* The number of doubles the largest intermediate needs (every axis at the
 * larger of its two extents), and the largest input extent. */
static void dyn_resize_sizes(int rank, const int64_t *in, const int64_t *out, size_t *out_most,
                             size_t *out_row) {
  size_t most = 1, row = 1;
  for (int d = 0; d < rank; ++d) {
    size_t larger = (size_t)(in[d] > out[d] ? in[d] : out[d]);
    most = most > SIZE_MAX / larger ? SIZE_MAX : most * larger; /* SIZE_MAX: allocation fails */
    row = (size_t)in[d] > row ? (size_t)in[d] : row;
  }
  *out_most = most;
  *out_row = row;
}

static kiln_status_t dyn_resize_reference(const kiln_kernel_args_t *args) {
  const kiln_dyn_resize_attrs_t *attrs = args->attrs;
  kiln_resize_rule_t rule = dyn_resize_rule(attrs);
  int64_t out_shape[KILN_MAX_RANK], shape[KILN_MAX_RANK];
  double scales[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(dyn_resize_plan(args->op, attrs, args->inputs, out_shape, scales));
  const kiln_tensor_t *data = args->inputs[RESIZE_DATA];
  int rank = kiln_tensor_ndim(data);
  memcpy(shape, kiln_tensor_shape(data), sizeof(int64_t) * (size_t)rank);
  size_t most = 0, row_size = 0;
  dyn_resize_sizes(rank, shape, out_shape, &most, &row_size);
  kiln_allocator_t allocator = kiln_allocator_system();
  double *buffers[2] = {NULL, NULL}, *row = NULL;
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, most, sizeof(double), (void **)&buffers[0]);
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, most, sizeof(double), (void **)&buffers[1]);
  }
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, row_size, sizeof(double), (void **)&row);
  }
  if (!status) {
    kiln_scalar_kind_t in_kind = kiln_scalar_kind(kiln_tensor_dtype(data));
    for (int64_t i = 0; i < kiln_tensor_element_count(data); ++i) {
      buffers[0][i] = kiln_scalar_to_double(kiln_scalar_load(in_kind, kiln_tensor_data(data), i));
    }
    const double *result = NULL;
    dyn_resize_all(&rule, args->inputs[RESIZE_ROI], rank, shape, out_shape, scales, buffers, row,
                   &result);
    kiln_tensor_t *output = args->outputs[0];
    kiln_scalar_kind_t out_kind = kiln_scalar_kind(kiln_tensor_dtype(output));
    for (int64_t i = 0; i < kiln_tensor_element_count(output); ++i) {
      kiln_scalar_store(out_kind, kiln_tensor_data(output), i, kiln_scalar_float(result[i]));
    }
  }
  kiln_allocator_free(allocator, buffers[0]);
  kiln_allocator_free(allocator, buffers[1]);
  kiln_allocator_free(allocator, row);
  return status;
}

/* ---- the operator ---- */

static const kiln_attr_field_t dyn_resize_fields[] = {
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, mode, STRING, "\"nearest\""),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, coordinate_transformation_mode, STRING,
                    "\"half_pixel\""),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, nearest_mode, STRING, "\"round_prefer_floor\""),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, cubic_coeff_a, FLOAT, "-0.75"),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, exclude_outside, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_dyn_resize_attrs_t, extrapolation_value, FLOAT, "0.0"),
};

const kiln_op_t kiln_op_dyn_resize = {
    .name = "dyn.resize",
    .id = KILN_OP_DYN_RESIZE,
    .min_inputs = 4,
    .max_inputs = 4,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_dyn_resize_attrs_t),
    .num_attr_fields = (int)(sizeof(dyn_resize_fields) / sizeof(dyn_resize_fields[0])),
    .attr_fields = dyn_resize_fields,
    .validate_attrs = dyn_resize_validate,
    .infer_type = dyn_resize_infer,
    .reference = dyn_resize_reference,
    .compute = kiln_dyn_compute_refuse,
    .shape_func = dyn_resize_shape_func,
    .symbolic_relation = true,
};
