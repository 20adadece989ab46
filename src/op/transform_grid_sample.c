/*
 * image.grid_sample: ONNX GridSample (opset 16), Relay's image.grid_sample.
 *
 * data is (N, C, H, W), grid (N, H_out, W_out, 2) of normalized (x, y)
 * locations in [-1, 1]; the output (N, C, H_out, W_out) samples each plane
 * of data at its batch's grid points. The kernel follows the ONNX reference
 * implementation step by step, in float64: a location is denormalized
 * (align_corners maps -1 and 1 to the centres of the corner pixels, else to
 * their outer edges), rounded half to even for "nearest"; when x or y leaves
 * the borders ([-0.5, size - 0.5], or [0, size - 1] with align_corners),
 * "border" clamps both to [0, size - 1] and "reflection" reflects both
 * between the borders. Then "nearest" reads one pixel, "bilinear" weighs
 * the four around the point, "bicubic" the sixteen with Keys' kernel
 * (a = -0.75). A pixel index outside the plane reads 0 with "zeros", the
 * clamped index with "border", the reflected one (truncated) with
 * "reflection". Only the joint test of x and y is the reference's own
 * quirk worth keeping: in "border" a point with one coordinate out of bounds
 * clamps the other too. A coordinate still far outside (zeros padding) is
 * pinned to [-4, size + 3], where every tap of every method is outside, so
 * no conversion to an integer overflows; a NaN lands there too.
 *
 * The compute rule (transform_grid_sample_compute.c) builds the same
 * arithmetic as loop-IR expressions from the plan below. float32 data and
 * grid only.
 */
#include <math.h>

#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

static const kiln_attr_field_t kiln_grid_sample_fields[] = {
    KILN_ATTR_FIELD(kiln_grid_sample_attrs_t, method, STRING, "\"bilinear\""),
    KILN_ATTR_FIELD(kiln_grid_sample_attrs_t, padding_mode, STRING, "\"zeros\""),
    KILN_ATTR_FIELD(kiln_grid_sample_attrs_t, align_corners, BOOL, "False"),
};

static const char *const kiln_grid_sample_methods[] = {"bilinear", "nearest", "bicubic"};
static const char *const kiln_grid_sample_paddings[] = {"zeros", "border", "reflection"};

static kiln_status_t grid_sample_enum(const kiln_op_t *op, const char *name, const char *value,
                                      const char *const *names, const char *list, int *out) {
  *out = kiln_transform_name_index(value, names, 3);
  if (*out < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s \"%s\" is not one of %s", op->name, name,
                       value ? value : "", list);
  }
  return KILN_OK;
}

kiln_status_t kiln_grid_sample_plan_of(const kiln_op_t *op, const kiln_grid_sample_attrs_t *attrs,
                                       int64_t height, int64_t width,
                                       kiln_grid_sample_plan_t *out_plan) {
  int method = 0, padding = 0;
  KILN_RETURN_IF_ERROR(grid_sample_enum(op, "method", attrs->method, kiln_grid_sample_methods,
                                        "bilinear, nearest, bicubic", &method));
  KILN_RETURN_IF_ERROR(grid_sample_enum(op, "padding_mode", attrs->padding_mode,
                                        kiln_grid_sample_paddings, "zeros, border, reflection",
                                        &padding));
  double low = attrs->align_corners ? 0.0 : -0.5;
  double high = attrs->align_corners ? 1.0 : 0.5;
  *out_plan = (kiln_grid_sample_plan_t){(kiln_grid_sample_method_t)method,
                                        (kiln_grid_sample_padding_t)padding,
                                        attrs->align_corners,
                                        height,
                                        width,
                                        low,
                                        (double)width - high,
                                        low,
                                        (double)height - high};
  return KILN_OK;
}

static kiln_status_t grid_sample_validate(const kiln_op_t *op, const void *attrs) {
  kiln_grid_sample_plan_t plan;
  return kiln_grid_sample_plan_of(op, attrs, 1, 1, &plan);
}

static kiln_status_t grid_sample_rule(const kiln_op_t *op, const void *attrs,
                                      const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  (void)attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t grid = kiln_tinputs_get(inputs, 1);
  char a[KILN_SHAPE_TEXT_CAPACITY], g[KILN_SHAPE_TEXT_CAPACITY];
  if (data.ndim != 4 || grid.ndim != 4 || grid.shape[3] != 2 || grid.shape[0] != data.shape[0]) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data %s must be (N, C, H, W) and grid %s (N, H_out, W_out, 2)",
                       op->name, kiln_op_shape_text(&data, a), kiln_op_shape_text(&grid, g));
  }
  if (data.shape[2] == 0 || data.shape[3] == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s has empty planes to sample from", op->name,
                       kiln_op_shape_text(&data, a));
  }
  if (grid.dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: grid is %s; kiln samples at float32 locations",
                       op->name, kiln_dtype_name(grid.dtype));
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = 4;
  out_shape->dims[0] = data.shape[0];
  out_shape->dims[1] = data.shape[1];
  out_shape->dims[2] = grid.shape[1];
  out_shape->dims[3] = grid.shape[2];
  return KILN_OK;
}

static kiln_status_t grid_sample_infer_type(const kiln_type_relation_t *relation,
                                            const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, grid_sample_rule, out_type);
}

/* ---- the reference kernel ---- */

static double denormalize(double n, int64_t size, bool align_corners) {
  return align_corners ? (n + 1.0) / 2.0 * (double)(size - 1)
                       : ((n + 1.0) * (double)size - 1.0) / 2.0;
}

/* x reflected between lo and hi until it is inside (ONNX's _gs_reflect). */
static double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (!(x < lo) && !(x > hi)) {
    return x;
  }
  if (range <= 0.0) {
    return lo;
  }
  bool below = x < lo;
  double d = below ? lo - x : x - hi;
  double n = floor(d / range);
  double r = d - n * range;
  bool even = fmod(n, 2.0) == 0.0;
  return below == even ? lo + r : hi - r;
}

static double pin(double x, double lo, double hi) {
  return !(x >= lo) ? lo : x > hi ? hi : x;
}

/* The source point of normalized (nx, ny), as the reference moves it. */
static void source_point(const kiln_grid_sample_plan_t *p, double nx, double ny, double *out_x,
                         double *out_y) {
  double x = denormalize(nx, p->width, p->align_corners);
  double y = denormalize(ny, p->height, p->align_corners);
  if (p->method == KILN_GRID_SAMPLE_NEAREST) {
    x = nearbyint(x);
    y = nearbyint(y);
  }
  bool out = x < p->x_min || x > p->x_max || y < p->y_min || y > p->y_max;
  if (out && p->padding == KILN_GRID_SAMPLE_BORDER) {
    x = pin(x, 0.0, (double)(p->width - 1));
    y = pin(y, 0.0, (double)(p->height - 1));
  } else if (out && p->padding == KILN_GRID_SAMPLE_REFLECTION) {
    x = reflect(x, p->x_min, p->x_max);
    y = reflect(y, p->y_min, p->y_max);
  }
  *out_x = pin(x, -4.0, (double)(p->width + 3));
  *out_y = pin(y, -4.0, (double)(p->height + 3));
}

/* The pixel index of `i` on an axis of `size` for a padding mode other
 * than zeros: clamped, or reflected and truncated. */
static int64_t padded_index(const kiln_grid_sample_plan_t *p, int64_t i, int64_t size, double lo,
                            double hi) {
  double at =
      p->padding == KILN_GRID_SAMPLE_REFLECTION ? trunc(reflect((double)i, lo, hi)) : (double)i;
  return (int64_t)pin(at, 0.0, (double)(size - 1));
}

static double pixel(const kiln_grid_sample_plan_t *p, const float *plane, int64_t r, int64_t c) {
  if (p->padding == KILN_GRID_SAMPLE_ZEROS) {
    bool inside = r >= 0 && r < p->height && c >= 0 && c < p->width;
    return inside ? plane[r * p->width + c] : 0.0;
  }
  r = padded_index(p, r, p->height, p->y_min, p->y_max);
  c = padded_index(p, c, p->width, p->x_min, p->x_max);
  return plane[r * p->width + c];
}

/* Keys' cubic convolution weights of the four taps around offset t in [0, 1). */
static void cubic_weights(double t, double *w) {
  const double a = -0.75;
  double x = fabs(t);
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

static double bicubic(const kiln_grid_sample_plan_t *p, const float *plane, double x, double y) {
  int64_t x0 = (int64_t)floor(x) - 1, y0 = (int64_t)floor(y) - 1;
  double wx[4], wy[4], sum = 0.0;
  cubic_weights(x - floor(x), wx);
  cubic_weights(y - floor(y), wy);
  for (int h = 0; h < 4; ++h) {
    double row = 0.0;
    for (int w = 0; w < 4; ++w) {
      row += wx[w] * pixel(p, plane, y0 + h, x0 + w);
    }
    sum += wy[h] * row;
  }
  return sum;
}

static double sample(const kiln_grid_sample_plan_t *p, const float *plane, double x, double y) {
  if (p->method == KILN_GRID_SAMPLE_NEAREST) {
    return pixel(p, plane, (int64_t)y, (int64_t)x);
  }
  if (p->method == KILN_GRID_SAMPLE_BICUBIC) {
    return bicubic(p, plane, x, y);
  }
  double fx = floor(x), fy = floor(y);
  int64_t x1 = (int64_t)fx, y1 = (int64_t)fy;
  double dx1 = x - fx, dx2 = fx + 1.0 - x, dy1 = y - fy, dy2 = fy + 1.0 - y;
  double top = dx2 * pixel(p, plane, y1, x1) + dx1 * pixel(p, plane, y1, x1 + 1);
  double bottom = dx2 * pixel(p, plane, y1 + 1, x1) + dx1 * pixel(p, plane, y1 + 1, x1 + 1);
  return dy2 * top + dy1 * bottom;
}

static kiln_status_t grid_sample_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, grid_sample_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  kiln_tensor_type_t grid = kiln_tinputs_get(&inputs, 1);
  if (data.dtype != KILN_DTYPE_FLOAT32) {
    return kiln_transform_unsupported_dtype(args->op, data.dtype, "float32");
  }
  kiln_grid_sample_plan_t plan;
  KILN_RETURN_IF_ERROR(
      kiln_grid_sample_plan_of(args->op, args->attrs, data.shape[2], data.shape[3], &plan));
  int64_t channels = data.shape[1], plane_size = plan.height * plan.width;
  int64_t points = grid.shape[1] * grid.shape[2];
  const float *in = kiln_tensor_data(args->inputs[0]);
  const float *where = kiln_tensor_data(args->inputs[1]);
  float *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t n = 0; n < data.shape[0]; ++n) {
    for (int64_t q = 0; q < points; ++q) {
      double x = 0.0, y = 0.0;
      const float *at = where + 2 * (n * points + q);
      source_point(&plan, at[0], at[1], &x, &y);
      for (int64_t c = 0; c < channels; ++c) {
        const float *plane = in + (n * channels + c) * plane_size;
        out[(n * channels + c) * points + q] = (float)sample(&plan, plane, x, y);
      }
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_grid_sample = {
    .name = "image.grid_sample",
    .id = KILN_OP_GRID_SAMPLE,
    .min_inputs = 2,
    .max_inputs = 2,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_grid_sample_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_grid_sample_fields) / sizeof(kiln_grid_sample_fields[0])),
    .attr_fields = kiln_grid_sample_fields,
    .validate_attrs = grid_sample_validate,
    .infer_type = grid_sample_infer_type,
    .correct_layout = kiln_layout_nchw_data,
};

const kiln_op_impl_t kiln_op_grid_sample_impl = {
    .reference = grid_sample_reference,
    .compute = kiln_compute_grid_sample,
};
