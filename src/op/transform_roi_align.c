/*
 * vision.roi_align: ONNX RoiAlign (opsets 10 and 16), Relay's
 * vision.roi_align with the batch indices a third input.
 *
 * data is (N, C, H, W), rois (R, 4) boxes (x1, y1, x2, y2) in the input's
 * coordinates times spatial_scale, batch_indices (R) int32 or int64 the
 * image of each box; the output (R, C, H_out, W_out) pools each box's
 * H_out x W_out bins. The kernel is the ONNX reference's, in double: the box
 * scaled and, when aligned (ONNX's half_pixel), shifted by half a pixel
 * (unaligned, a box smaller than a pixel grows to one); each bin holds a
 * grid of sample_ratio x sample_ratio points (0: ceil(box side / bins) a
 * side, per box) at the centres of its cells; a point more than one pixel
 * outside the input counts 0; otherwise it is clamped to the input and
 * interpolated bilinearly between its four neighbours (the last row or
 * column repeated at the edge). "avg" averages the points of a bin; "max"
 * takes the largest of the four weighted neighbours of every point, as the
 * reference does. A batch index outside [0, N) is OUT_OF_RANGE.
 *
 * The compute rule (transform_roi_align_compute.c) builds the same
 * arithmetic over reduce axes for the samples; it needs sample_ratio > 0
 * (the adaptive grid's size depends on the boxes' values), and the
 * interpreter runs the adaptive form. float32 data and rois.
 */
#include <math.h>

#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

static const kiln_attr_field_t kiln_roi_align_fields[] = {
    KILN_ATTR_FIELD(kiln_roi_align_attrs_t, pooled_size, INTS, "[1, 1]"),
    KILN_ATTR_FIELD(kiln_roi_align_attrs_t, spatial_scale, FLOAT, "1.0"),
    KILN_ATTR_FIELD(kiln_roi_align_attrs_t, sample_ratio, INT, "0"),
    KILN_ATTR_FIELD(kiln_roi_align_attrs_t, mode, STRING, "\"avg\""),
    KILN_ATTR_FIELD(kiln_roi_align_attrs_t, aligned, BOOL, "False"),
};

static const char *const kiln_roi_align_modes[] = {"avg", "max"};

static kiln_status_t roi_align_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_roi_align_attrs_t *a = attrs;
  char list[KILN_INTS_TEXT_CAPACITY];
  bool sized = a->pooled_size.count == 2 && a->pooled_size.values[0] > 0 &&
               a->pooled_size.values[1] > 0 && a->pooled_size.values[0] <= INT32_MAX &&
               a->pooled_size.values[1] <= INT32_MAX;
  if (!sized) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: pooled_size %s must be [H, W] with H, W > 0",
                       op->name, kiln_ints_text(&a->pooled_size, list));
  }
  if (a->sample_ratio < 0 || a->sample_ratio > 1024) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: sample_ratio %lld is not in [0, 1024]", op->name,
                       (long long)a->sample_ratio);
  }
  if (kiln_transform_name_index(a->mode, kiln_roi_align_modes, 2) < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: mode \"%s\" is not one of avg, max", op->name,
                       a->mode ? a->mode : "");
  }
  return KILN_OK;
}

static kiln_status_t roi_align_rule(const kiln_op_t *op, const void *attrs,
                                    const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_roi_align_attrs_t *a = attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t rois = kiln_tinputs_get(inputs, 1);
  kiln_tensor_type_t batch = kiln_tinputs_get(inputs, 2);
  char d[KILN_SHAPE_TEXT_CAPACITY], r[KILN_SHAPE_TEXT_CAPACITY], b[KILN_SHAPE_TEXT_CAPACITY];
  if (data.ndim != 4 || rois.ndim != 2 || rois.shape[1] != 4 || batch.ndim != 1 ||
      batch.shape[0] != rois.shape[0]) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data %s, rois %s and batch_indices %s must be (N, C, H, W), (R, 4) "
                       "and (R)",
                       op->name, kiln_op_shape_text(&data, d), kiln_op_shape_text(&rois, r),
                       kiln_op_shape_text(&batch, b));
  }
  if (data.shape[2] == 0 || data.shape[3] == 0 || data.shape[0] == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s has no planes to pool from", op->name,
                       kiln_op_shape_text(&data, d));
  }
  if (rois.dtype != data.dtype ||
      (batch.dtype != KILN_DTYPE_INT32 && batch.dtype != KILN_DTYPE_INT64)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: rois is %s and batch_indices %s; expected data's %s and int32 or int64",
                       op->name, kiln_dtype_name(rois.dtype), kiln_dtype_name(batch.dtype),
                       kiln_dtype_name(data.dtype));
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = 4;
  out_shape->dims[0] = rois.shape[0];
  out_shape->dims[1] = data.shape[1];
  out_shape->dims[2] = a->pooled_size.values[0];
  out_shape->dims[3] = a->pooled_size.values[1];
  return KILN_OK;
}

static kiln_status_t roi_align_infer_type(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, roi_align_rule, out_type);
}

/* ---- the reference kernel ---- */

/* One box: its corner, its bins' size and its sampling grid. */
typedef struct roi_box_t {
  double start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
} roi_box_t;

static int64_t adaptive_grid(double side, int64_t bins) {
  double grid = ceil(side / (double)bins);
  return !(grid > 0.0) ? 0 : grid > 1e6 ? 1000000 : (int64_t)grid;
}

static roi_box_t roi_box(const kiln_roi_align_attrs_t *a, const float *roi) {
  double offset = a->aligned ? 0.5 : 0.0, scale = a->spatial_scale;
  double start_w = roi[0] * scale - offset, start_h = roi[1] * scale - offset;
  double width = roi[2] * scale - offset - start_w, height = roi[3] * scale - offset - start_h;
  if (!a->aligned) {
    width = width > 1.0 ? width : 1.0;
    height = height > 1.0 ? height : 1.0;
  }
  int64_t ph = a->pooled_size.values[0], pw = a->pooled_size.values[1];
  roi_box_t box = {start_h,         start_w,        height / (double)ph, width / (double)pw,
                   a->sample_ratio, a->sample_ratio};
  if (a->sample_ratio == 0) {
    box.grid_h = adaptive_grid(height, ph);
    box.grid_w = adaptive_grid(width, pw);
  }
  return box;
}

/* One sample point's four neighbours (row-major offsets) and weights;
 * all weights 0 for a point more than a pixel outside. */
typedef struct roi_tap_t {
  int64_t at[4];
  double w[4];
} roi_tap_t;

/* The low index and fraction of coordinate v on an axis of `size`. */
static void roi_axis(double v, int64_t size, int64_t *out_low, int64_t *out_high, double *out_t) {
  v = v > 0.0 ? v : 0.0;
  int64_t low = (int64_t)v;
  if (low >= size - 1) {
    *out_low = *out_high = size - 1;
    *out_t = 0.0;
    return;
  }
  *out_low = low;
  *out_high = low + 1;
  *out_t = v - (double)low;
}

static roi_tap_t roi_tap(double y, double x, int64_t height, int64_t width) {
  roi_tap_t tap = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  if (!(y >= -1.0 && y <= (double)height && x >= -1.0 && x <= (double)width)) {
    return tap;
  }
  int64_t y0, y1, x0, x1;
  double ly, lx;
  roi_axis(y, height, &y0, &y1, &ly);
  roi_axis(x, width, &x0, &x1, &lx);
  tap = (roi_tap_t){{y0 * width + x0, y0 * width + x1, y1 * width + x0, y1 * width + x1},
                    {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx}};
  return tap;
}

/* Bin (ph, pw) of `box` over one plane. */
static double roi_bin(const roi_box_t *box, bool is_max, const float *plane, int64_t height,
                      int64_t width, int64_t ph, int64_t pw) {
  double value = is_max ? -INFINITY : 0.0;
  for (int64_t iy = 0; iy < box->grid_h; ++iy) {
    double y = box->start_h + (double)ph * box->bin_h +
               ((double)iy + 0.5) * box->bin_h / (double)box->grid_h;
    for (int64_t ix = 0; ix < box->grid_w; ++ix) {
      double x = box->start_w + (double)pw * box->bin_w +
                 ((double)ix + 0.5) * box->bin_w / (double)box->grid_w;
      roi_tap_t tap = roi_tap(y, x, height, width);
      for (int k = 0; k < 4; ++k) {
        double term = tap.w[k] * plane[tap.at[k]];
        value = is_max ? (term > value ? term : value) : value + term;
      }
    }
  }
  if (is_max) {
    return box->grid_h * box->grid_w > 0 ? value : 0.0;
  }
  int64_t count = box->grid_h * box->grid_w;
  return value / (double)(count > 1 ? count : 1);
}

static kiln_status_t roi_batch_index(const kiln_kernel_args_t *args, int64_t r, int64_t batch,
                                     int64_t *out_index) {
  int64_t index = kiln_transform_load_index(args->inputs[2], r);
  if (index < 0 || index >= batch) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: batch index %lld of box %lld is not in [0, %lld)",
                       args->op->name, (long long)index, (long long)r, (long long)batch);
  }
  *out_index = index;
  return KILN_OK;
}

static kiln_status_t roi_align_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, roi_align_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  if (data.dtype != KILN_DTYPE_FLOAT32) {
    return kiln_transform_unsupported_dtype(args->op, data.dtype, "float32");
  }
  const kiln_roi_align_attrs_t *a = args->attrs;
  bool is_max = kiln_transform_name_index(a->mode, kiln_roi_align_modes, 2) == 1;
  int64_t channels = data.shape[1], height = data.shape[2], width = data.shape[3];
  int64_t ph = a->pooled_size.values[0], pw = a->pooled_size.values[1];
  const float *in = kiln_tensor_data(args->inputs[0]);
  const float *rois = kiln_tensor_data(args->inputs[1]);
  float *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t r = 0; r < kiln_tensor_shape(args->inputs[1])[0]; ++r) {
    int64_t image = 0;
    KILN_RETURN_IF_ERROR(roi_batch_index(args, r, data.shape[0], &image));
    roi_box_t box = roi_box(a, rois + 4 * r);
    for (int64_t c = 0; c < channels; ++c) {
      const float *plane = in + (image * channels + c) * height * width;
      for (int64_t y = 0; y < ph; ++y) {
        for (int64_t x = 0; x < pw; ++x) {
          *out++ = (float)roi_bin(&box, is_max, plane, height, width, y, x);
        }
      }
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_roi_align = {
    .name = "vision.roi_align",
    .id = KILN_OP_ROI_ALIGN,
    .min_inputs = 3,
    .max_inputs = 3,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_roi_align_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_roi_align_fields) / sizeof(kiln_roi_align_fields[0])),
    .attr_fields = kiln_roi_align_fields,
    .validate_attrs = roi_align_validate,
    .infer_type = roi_align_infer_type,
    .correct_layout = kiln_layout_nchw_data,
};

const kiln_op_impl_t kiln_op_roi_align_impl = {
    .reference = roi_align_reference,
    .compute = kiln_compute_roi_align,
};
