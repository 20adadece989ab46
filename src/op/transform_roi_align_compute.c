/*
 * The compute rule of vision.roi_align (transform_roi_align.c): two
 * stages, as the reference computes in double and rounds once.
 *
 * T_roi_align_pool reduces over two reduce axes, the sample grid (iy, ix)
 * of sample_ratio x sample_ratio points, at every output index (r, c, ph,
 * pw): the box of roi r (read from rois, scaled, shifted when aligned,
 * grown to a pixel when not), the sample point y, x (bound by Lets), and
 * the reference's bilinear weights of its four neighbours, zero when the
 * point is more than a pixel outside. The coordinate is clamped to
 * [0, size - 1] before it becomes an int32, so every load is in bounds and
 * the edge case (the last row repeated, fraction 0) falls out of the same
 * clamp. The image is batch_indices[r] clamped into [0, N) (the reference
 * refuses one outside it). "avg" sums the weighted neighbours and the
 * output stage divides by the grid's size; "max" takes the largest
 * weighted neighbour with a max reduction. sample_ratio 0 (a grid sized by
 * each box's values) has no compute rule: UNIMPLEMENTED.
 */
#include <stdio.h>

#include "op/transform_attrs.h"
#include "op/transform_compute.h"

typedef struct roi_align_t {
  const kiln_compute_args_t *args;
  const kiln_roi_align_attrs_t *attrs;
  const kiln_te_iter_var_t *axes[2]; /* iy, ix */
  const kiln_te_tensor_t *pool;
  bool is_max;
} roi_align_t;

static const kiln_tir_expr_t *sub(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                  const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, y);
}

static const kiln_tir_expr_t *div_(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, double y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, x, kiln_tcompute_f64(b, y));
}

/* max(x, lo) with NaN giving lo. */
static const kiln_tir_expr_t *at_least(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, double lo) {
  return kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, kiln_tcompute_f64(b, lo)), x,
                           kiln_tcompute_f64(b, lo));
}

/* Coordinate k of roi r times the scale, shifted when aligned. */
static const kiln_tir_expr_t *roi_coordinate(kiln_tir_builder_t *b, const roi_align_t *s,
                                             const kiln_tir_expr_t *r, int k) {
  const kiln_tir_expr_t *at[2] = {r, kiln_tir_b_i32(b, k)};
  const kiln_tir_expr_t *v = kiln_tcompute_as_f64(b, kiln_te_read(b, s->args->inputs[1], 2, at));
  v = kiln_tir_b_mul(b, v, kiln_tcompute_f64(b, s->attrs->spatial_scale));
  return sub(b, v, kiln_tcompute_f64(b, s->attrs->aligned ? 0.5 : 0.0));
}

/* The sample coordinate on one axis (0: y, 1: x) of the bin at `bin`. */
static const kiln_tir_expr_t *sample_coordinate(kiln_tir_builder_t *b, const roi_align_t *s,
                                                const kiln_tir_expr_t *r,
                                                const kiln_tir_expr_t *bin, int axis) {
  const kiln_tir_expr_t *start = roi_coordinate(b, s, r, 1 - axis);
  const kiln_tir_expr_t *side = sub(b, roi_coordinate(b, s, r, 3 - axis), start);
  if (!s->attrs->aligned) {
    side = at_least(b, side, 1.0);
  }
  int64_t bins = s->attrs->pooled_size.values[axis], grid = s->attrs->sample_ratio;
  const kiln_tir_expr_t *size = div_(b, side, (double)bins);
  const kiln_tir_expr_t *cell = kiln_tir_b_add(
      b, kiln_tcompute_as_f64(b, kiln_tir_b_v(s->axes[axis]->var)), kiln_tcompute_f64(b, 0.5));
  const kiln_tir_expr_t *v =
      kiln_tir_b_add(b, start, kiln_tir_b_mul(b, kiln_tcompute_as_f64(b, bin), size));
  return kiln_tir_b_add(b, v, div_(b, kiln_tir_b_mul(b, cell, size), (double)grid));
}

/* One axis of a sample: two int32 indices and the weight of the second. */
typedef struct axis_tap_t {
  const kiln_tir_expr_t *low, *high, *t;
} axis_tap_t;

static axis_tap_t axis_tap(kiln_tir_builder_t *b, const kiln_tir_expr_t *v, int64_t size) {
  const kiln_tir_expr_t *clamped = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, at_least(b, v, 0.0),
                                                  kiln_tcompute_f64(b, (double)(size - 1)));
  const kiln_tir_expr_t *low = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), clamped);
  const kiln_tir_expr_t *high =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, kiln_tir_b_add(b, low, kiln_tir_b_i32(b, 1)),
                     kiln_tir_b_i32(b, size - 1));
  return (axis_tap_t){low, high, sub(b, clamped, kiln_tcompute_as_f64(b, low))};
}

static const kiln_tir_expr_t *inside(kiln_tir_builder_t *b, const kiln_tir_expr_t *v,
                                     int64_t size) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_AND,
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, v, kiln_tcompute_f64(b, -1.0)),
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_LE, v, kiln_tcompute_f64(b, (double)size)));
}

static const kiln_tir_expr_t *pixel(kiln_tir_builder_t *b, const roi_align_t *s,
                                    const kiln_tir_expr_t *image, const kiln_tir_expr_t *c,
                                    const kiln_tir_expr_t *y, const kiln_tir_expr_t *x) {
  const kiln_tir_expr_t *at[4] = {image, c, y, x};
  return kiln_tcompute_as_f64(b, kiln_te_read(b, s->args->inputs[0], 4, at));
}

/* The image of roi r, clamped into the batch. */
static const kiln_tir_expr_t *image_of(kiln_tir_builder_t *b, const roi_align_t *s,
                                       const kiln_tir_expr_t *r) {
  const kiln_tir_expr_t *index = kiln_te_read(b, s->args->inputs[2], 1, &r);
  const kiln_tir_expr_t *n = kiln_tir_b_cast(
      b, kiln_tir_scalar(KILN_DTYPE_INT32),
      kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, index, kiln_tir_b_int(b, index->dtype.base, 0)));
  int64_t batch = s->args->inputs[0]->shape[0];
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, n, kiln_tir_b_i32(b, batch - 1));
}

static const kiln_tir_expr_t *combine(kiln_tir_builder_t *b, bool is_max, const kiln_tir_expr_t *x,
                                      const kiln_tir_expr_t *y) {
  return is_max ? kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, x, y) : kiln_tir_b_add(b, x, y);
}

static const kiln_tir_expr_t *pool_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const roi_align_t *s = user;
  const int64_t *shape = s->args->inputs[0]->shape;
  const kiln_tir_var_t *vy = kiln_tir_b_var(b, "roi_y", KILN_DTYPE_FLOAT64);
  const kiln_tir_var_t *vx = kiln_tir_b_var(b, "roi_x", KILN_DTYPE_FLOAT64);
  const kiln_tir_expr_t *y = kiln_tir_b_v(vy), *x = kiln_tir_b_v(vx);
  const kiln_tir_expr_t *in =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, inside(b, y, shape[2]), inside(b, x, shape[3]));
  axis_tap_t ty = axis_tap(b, y, shape[2]), tx = axis_tap(b, x, shape[3]);
  const kiln_tir_expr_t *one = kiln_tcompute_f64(b, 1.0);
  const kiln_tir_expr_t *wy[2] = {sub(b, one, ty.t), ty.t}, *wx[2] = {sub(b, one, tx.t), tx.t};
  const kiln_tir_expr_t *rows[2] = {ty.low, ty.high}, *cols[2] = {tx.low, tx.high};
  const kiln_tir_expr_t *image = image_of(b, s, indices[0]), *value = NULL;
  for (int k = 0; k < 4; ++k) {
    const kiln_tir_expr_t *w = kiln_tir_b_mul(b, wy[k / 2], wx[k % 2]);
    w = kiln_tir_b_select(b, in, w, kiln_tcompute_f64(b, 0.0));
    const kiln_tir_expr_t *term =
        kiln_tir_b_mul(b, w, pixel(b, s, image, indices[1], rows[k / 2], cols[k % 2]));
    value = value ? combine(b, s->is_max, value, term) : term;
  }
  value = kiln_tir_b_let(b, vx, sample_coordinate(b, s, indices[0], indices[3], 1), value);
  return kiln_tir_b_let(b, vy, sample_coordinate(b, s, indices[0], indices[2], 0), value);
}

static const kiln_tir_expr_t *output_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const roi_align_t *s = user;
  const kiln_tir_expr_t *value = kiln_te_read(b, s->pool, 4, indices);
  if (!s->is_max) {
    value = div_(b, value, (double)(s->attrs->sample_ratio * s->attrs->sample_ratio));
  }
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), value);
}

kiln_status_t kiln_compute_roi_align(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  roi_align_t s = {.args = args, .attrs = args->attrs};
  if (s.attrs->sample_ratio <= 0) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: sample_ratio 0 (a grid sized by the boxes' values) has no compute "
                       "rule; give sample_ratio > 0 or run it on the interpreter",
                       args->op->name);
  }
  s.is_max = s.attrs->mode && s.attrs->mode[0] == 'm';
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  KILN_RETURN_IF_ERROR(
      kiln_te_reduce_axis(args->arena, "iy", 0, s.attrs->sample_ratio, &s.axes[0]));
  KILN_RETURN_IF_ERROR(
      kiln_te_reduce_axis(args->arena, "ix", 0, s.attrs->sample_ratio, &s.axes[1]));
  char base[48], name[64];
  snprintf(name, sizeof(name), "%s_pool", kiln_compute_tensor_name(args->op, base, sizeof(base)));
  KILN_RETURN_IF_ERROR(kiln_te_compute_reduce(
      args->arena, name, 4, type->shape, s.is_max ? KILN_TE_REDUCE_MAX : KILN_TE_REDUCE_SUM, NULL,
      2, s.axes, args->num_inputs, args->inputs, pool_body, &s, &s.pool));
  out_result->num_outputs = 1;
  return kiln_te_compute(args->arena, kiln_compute_tensor_name(args->op, base, sizeof(base)), 4,
                         type->shape, 1, &s.pool, output_body, &s, &out_result->outputs[0]);
}
