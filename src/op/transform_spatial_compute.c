/*
 * Compute rules of the spatial operators (transform_spatial.c): nn.pad,
 * image.resize2d, nn.depth_to_space and nn.space_to_depth.
 *
 * pad maps each output index to source = index - before, dim by dim, with
 * only the bounds checks a side's padding needs: "constant" selects the fill
 * (pad_value converted as the reference converts it, through scalar.h) when
 * a source leaves the data, reading the data at the source clamped into it
 * (Select evaluates both sides); "edge" clamps the source; "reflect" mirrors
 * it (-s below, 2 (dim - 1) - s above; the relation keeps pads below the
 * dim, so one mirror suffices).
 *
 * resize2d is float32 only, as its reference; like the reference it
 * computes in float64: the source coordinate of an output index by the
 * coordinate transformation (scale = out / in as a constant), then nearest
 * (floor, then up by the rounding method's test of the fraction, clamped to
 * the input) or linear (coordinate clamped to [0, in - 1], floor and the
 * next index capped at in - 1, the fraction as weight), the four float32
 * taps widened to float64 and the result rounded to float32 once.
 *
 * depth_to_space reads input channel (i b + j) C' + c (DCR) or
 * c b^2 + i b + j (CRD) at (y // b, x // b) with i = y % b, j = x % b;
 * space_to_depth reads channel c % C at (y b + (c // C) // b,
 * x b + (c // C) % b).
 */
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

static kiln_status_t bad_name(const kiln_compute_args_t *args, const char *name,
                              const char *value) {
  return KILN_STATUS(INVALID_ARGUMENT, "%s: %s \"%s\" is not supported", args->op->name, name,
                     value ? value : "");
}

/* ---- nn.pad ---- */

typedef enum pad_mode_e {
  PAD_CONSTANT,
  PAD_EDGE,
  PAD_REFLECT,
} pad_mode_t;

typedef struct pad_t {
  const kiln_te_tensor_t *data;
  pad_mode_t mode;
  const int64_t *width; /* before_0, after_0, ... */
  kiln_scalar_t fill;   /* pad_value as the data's dtype holds it */
} pad_t;

static const kiln_tir_expr_t *pad_fill(kiln_tir_builder_t *b, const pad_t *p) {
  kiln_dtype_t dtype = p->data->dtype;
  if (p->fill.is_float) {
    return kiln_tir_b_float(b, dtype, p->fill.f);
  }
  int64_t value = p->fill.is_unsigned
                      ? (p->fill.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)p->fill.u)
                      : p->fill.i;
  return kiln_tir_b_int(b, dtype, value);
}

/* The index of one dim and, for "constant", whether it is inside (NULL:
 * always). */
static const kiln_tir_expr_t *pad_index(kiln_tir_builder_t *b, const pad_t *p, int d,
                                        const kiln_tir_expr_t *index,
                                        const kiln_tir_expr_t **inside) {
  int64_t before = p->width[2 * d], after = p->width[2 * d + 1], dim = p->data->shape[d];
  const kiln_tir_expr_t *s =
      before == 0 ? index : kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, index, kiln_tir_b_i32(b, before));
  const kiln_tir_expr_t *low =
      before > 0 ? kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, s, kiln_tir_b_i32(b, 0)) : NULL;
  const kiln_tir_expr_t *high =
      after > 0 ? kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, s, kiln_tir_b_i32(b, dim)) : NULL;
  *inside = NULL;
  switch (p->mode) {
  case PAD_CONSTANT:
  case PAD_EDGE:
    if (p->mode == PAD_CONSTANT && (low || high)) {
      const kiln_tir_expr_t *out =
          low && high ? kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, low, high) : (low ? low : high);
      *inside = kiln_tir_b_not(b, out);
    }
    if (low) {
      s = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, s, kiln_tir_b_i32(b, 0));
    }
    return high ? kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, s, kiln_tir_b_i32(b, dim - 1)) : s;
  case PAD_REFLECT: {
    const kiln_tir_expr_t *value = s;
    if (high) {
      value = kiln_tir_b_select(
          b, high, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_i32(b, 2 * (dim - 1)), s),
          value);
    }
    if (low) {
      value = kiln_tir_b_select(
          b, low, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_i32(b, 0), s), value);
    }
    return value;
  }
  }
  return s;
}

static const kiln_tir_expr_t *pad_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const pad_t *p = user;
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  const kiln_tir_expr_t *inside = NULL;
  for (int d = 0; d < p->data->ndim; ++d) {
    const kiln_tir_expr_t *dim_inside = NULL;
    at[d] = pad_index(b, p, d, indices[d], &dim_inside);
    if (dim_inside) {
      inside = inside ? kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, inside, dim_inside) : dim_inside;
    }
  }
  const kiln_tir_expr_t *value = kiln_te_read(b, p->data, p->data->ndim, at);
  return inside ? kiln_tir_b_select(b, inside, value, pad_fill(b, p)) : value;
}

kiln_status_t kiln_compute_pad(const kiln_compute_args_t *args, kiln_compute_result_t *out_result) {
  const kiln_pad_attrs_t *attrs = args->attrs;
  static const char *const modes[] = {"constant", "edge", "reflect"};
  int mode = kiln_transform_name_index(attrs->pad_mode, modes, 3);
  if (mode < 0) {
    return bad_name(args, "pad_mode", attrs->pad_mode);
  }
  pad_t p = {args->inputs[0], (pad_mode_t)mode, attrs->pad_width.values, {0}};
  if (attrs->pad_width.count != 2 * p.data->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: pad_width has %d values but the data has rank %d",
                       args->op->name, (int)attrs->pad_width.count, p.data->ndim);
  }
  kiln_scalar_kind_t kind = kiln_scalar_kind(p.data->dtype);
  char bytes[8];
  kiln_scalar_store(kind, bytes, 0, kiln_scalar_float(attrs->pad_value));
  p.fill = kiln_scalar_load(kind, bytes, 0);
  return kiln_compute_one(args, pad_body, &p, out_result);
}

/* ---- image.resize2d ---- */

typedef struct resize_t {
  const kiln_te_tensor_t *data;
  kiln_resize_method_t method;
  kiln_resize_coordinates_t coordinates;
  kiln_resize_rounding_t rounding;
  const int64_t *out_shape;
} resize_t;

static const kiln_tir_expr_t *ffloor(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  return kiln_tir_b_call(b, KILN_TIR_INTRINSIC_FLOOR, 1, &x);
}

/* The source coordinate (float64) of output index x on an axis in -> out. */
static const kiln_tir_expr_t *resize_coordinate(kiln_tir_builder_t *b, const resize_t *r,
                                                const kiln_tir_expr_t *x, int64_t in, int64_t out) {
  const kiln_tir_expr_t *xf = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT64), x);
  const kiln_tir_expr_t *scale = kiln_tcompute_f64(b, (double)out / (double)in);
  const kiln_tir_expr_t *half_pixel = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_SUB,
      kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, kiln_tir_b_add(b, xf, kiln_tcompute_f64(b, 0.5)), scale),
      kiln_tcompute_f64(b, 0.5));
  switch (r->coordinates) {
  case KILN_RESIZE_COORDINATES_PYTORCH_HALF_PIXEL:
    return out > 1 ? half_pixel : kiln_tcompute_f64(b, 0.0);
  case KILN_RESIZE_COORDINATES_HALF_PIXEL:
    return half_pixel;
  case KILN_RESIZE_COORDINATES_ALIGN_CORNERS:
    if (out == 1) {
      return kiln_tcompute_f64(b, 0.0);
    }
    return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV,
                          kiln_tir_b_mul(b, xf, kiln_tcompute_f64(b, (double)(in - 1))),
                          kiln_tcompute_f64(b, (double)(out - 1)));
  case KILN_RESIZE_COORDINATES_ASYMMETRIC:
    return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, xf, scale);
  }
  return NULL;
}

/* A float64 index in [0, in - 1] as int32. */
static const kiln_tir_expr_t *clamped_index(kiln_tir_builder_t *b, const kiln_tir_expr_t *value,
                                            int64_t in) {
  value = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, value, kiln_tcompute_f64(b, 0.0));
  value = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, value, kiln_tcompute_f64(b, (double)(in - 1)));
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), value);
}

/* One axis's sampling: two int32 source indices and the float64 weight of the second. */
typedef struct resize_tap_t {
  const kiln_tir_expr_t *i0;
  const kiln_tir_expr_t *i1;
  const kiln_tir_expr_t *t;
} resize_tap_t;

static const kiln_tir_expr_t *resize_nearest(kiln_tir_builder_t *b, const resize_t *r,
                                             const kiln_tir_expr_t *source, int64_t in) {
  const kiln_tir_expr_t *low = ffloor(b, source);
  const kiln_tir_expr_t *ratio = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, source, low);
  const kiln_tir_expr_t *up = NULL;
  switch (r->rounding) {
  case KILN_RESIZE_ROUNDING_ROUND_PREFER_FLOOR:
    up = kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, ratio, kiln_tcompute_f64(b, 0.5));
    break;
  case KILN_RESIZE_ROUNDING_ROUND_PREFER_CEIL:
    up = kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, ratio, kiln_tcompute_f64(b, 0.5));
    break;
  case KILN_RESIZE_ROUNDING_FLOOR:
    return clamped_index(b, low, in);
  case KILN_RESIZE_ROUNDING_CEIL:
    up = kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, ratio, kiln_tcompute_f64(b, 0.0));
    break;
  }
  return clamped_index(
      b, kiln_tir_b_select(b, up, kiln_tir_b_add(b, low, kiln_tcompute_f64(b, 1.0)), low), in);
}

static resize_tap_t resize_tap(kiln_tir_builder_t *b, const resize_t *r, const kiln_tir_expr_t *x,
                               int64_t in, int64_t out) {
  const kiln_tir_expr_t *source = resize_coordinate(b, r, x, in, out);
  if (r->method == KILN_RESIZE_METHOD_NEAREST) {
    const kiln_tir_expr_t *index = resize_nearest(b, r, source, in);
    return (resize_tap_t){index, index, NULL};
  }
  const kiln_tir_expr_t *clamped =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, source, kiln_tcompute_f64(b, 0.0));
  clamped = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, clamped, kiln_tcompute_f64(b, (double)(in - 1)));
  const kiln_tir_expr_t *low = ffloor(b, clamped);
  const kiln_tir_expr_t *i0 = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), low);
  const kiln_tir_expr_t *i1 = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_MIN, kiln_tir_b_add(b, i0, kiln_tir_b_i32(b, 1)), kiln_tir_b_i32(b, in - 1));
  return (resize_tap_t){i0, i1, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, clamped, low)};
}

static const kiln_tir_expr_t *resize_read(kiln_tir_builder_t *b, const resize_t *r,
                                          const kiln_tir_expr_t *const *indices,
                                          const kiln_tir_expr_t *y, const kiln_tir_expr_t *x) {
  const kiln_tir_expr_t *at[4] = {indices[0], indices[1], y, x};
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT64), kiln_te_read(b, r->data, 4, at));
}

/* (1 - t) a + t c, in float64. */
static const kiln_tir_expr_t *lerp(kiln_tir_builder_t *b, const kiln_tir_expr_t *t,
                                   const kiln_tir_expr_t *a, const kiln_tir_expr_t *c) {
  const kiln_tir_expr_t *one_minus =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tcompute_f64(b, 1.0), t);
  return kiln_tir_b_add(b, kiln_tir_b_mul(b, one_minus, a), kiln_tir_b_mul(b, t, c));
}

static const kiln_tir_expr_t *resize_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const resize_t *r = user;
  const kiln_te_tensor_t *data = r->data;
  resize_tap_t ty = resize_tap(b, r, indices[2], data->shape[2], r->out_shape[2]);
  resize_tap_t tx = resize_tap(b, r, indices[3], data->shape[3], r->out_shape[3]);
  if (r->method == KILN_RESIZE_METHOD_NEAREST) {
    const kiln_tir_expr_t *at[4] = {indices[0], indices[1], ty.i0, tx.i0};
    return kiln_te_read(b, data, 4, at);
  }
  const kiln_tir_expr_t *top = lerp(b, tx.t, resize_read(b, r, indices, ty.i0, tx.i0),
                                    resize_read(b, r, indices, ty.i0, tx.i1));
  const kiln_tir_expr_t *bottom = lerp(b, tx.t, resize_read(b, r, indices, ty.i1, tx.i0),
                                       resize_read(b, r, indices, ty.i1, tx.i1));
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), lerp(b, ty.t, top, bottom));
}

kiln_status_t kiln_compute_resize2d(const kiln_compute_args_t *args,
                                    kiln_compute_result_t *out_result) {
  const kiln_resize2d_attrs_t *attrs = args->attrs;
  kiln_resize_mode_t mode;
  KILN_RETURN_IF_ERROR(kiln_resize_mode_of(args->op, attrs, &mode));
  const kiln_te_tensor_t *data = args->inputs[0];
  if (data->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the compute rule does not handle %s (only float32)",
                       args->op->name, kiln_dtype_name(data->dtype));
  }
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  resize_t r = {data, mode.method, mode.coordinates, mode.rounding, type->shape};
  return kiln_compute_one(args, resize_body, &r, out_result);
}

/* ---- nn.depth_to_space and nn.space_to_depth ---- */

typedef struct depth_space_t {
  const kiln_te_tensor_t *data;
  int64_t block;
  int64_t channels; /* depth_to_space: the output's; space_to_depth: the input's */
  bool d2s;
  bool dcr;
} depth_space_t;

static const kiln_tir_expr_t *idiv(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, int64_t n) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, kiln_tir_b_i32(b, n));
}

static const kiln_tir_expr_t *imod(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, int64_t n) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, kiln_tir_b_i32(b, n));
}

static const kiln_tir_expr_t *imul(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, int64_t n) {
  return kiln_tir_b_mul(b, x, kiln_tir_b_i32(b, n));
}

static const kiln_tir_expr_t *depth_space_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const depth_space_t *s = user;
  int64_t bs = s->block;
  const kiln_tir_expr_t *at[4] = {indices[0], NULL, NULL, NULL};
  if (s->d2s) {
    const kiln_tir_expr_t *i = imod(b, indices[2], bs);
    const kiln_tir_expr_t *j = imod(b, indices[3], bs);
    const kiln_tir_expr_t *offset = kiln_tir_b_add(b, imul(b, i, bs), j);
    at[1] = s->dcr ? kiln_tir_b_add(b, imul(b, offset, s->channels), indices[1])
                   : kiln_tir_b_add(b, imul(b, indices[1], bs * bs), offset);
    at[2] = idiv(b, indices[2], bs);
    at[3] = idiv(b, indices[3], bs);
  } else {
    const kiln_tir_expr_t *block = idiv(b, indices[1], s->channels);
    at[1] = imod(b, indices[1], s->channels);
    at[2] = kiln_tir_b_add(b, imul(b, indices[2], bs), idiv(b, block, bs));
    at[3] = kiln_tir_b_add(b, imul(b, indices[3], bs), imod(b, block, bs));
  }
  return kiln_te_read(b, s->data, 4, at);
}

kiln_status_t kiln_compute_depth_space(const kiln_compute_args_t *args,
                                       kiln_compute_result_t *out_result) {
  const kiln_depth_space_attrs_t *attrs = args->attrs;
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  depth_space_t s = {args->inputs[0], attrs->block_size, 0, args->op->id == KILN_OP_DEPTH_TO_SPACE,
                     false};
  if (s.data->ndim != 4) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the data has rank %d, not 4 (NCHW)", args->op->name,
                       s.data->ndim);
  }
  if (s.d2s) {
    static const char *const modes[] = {"DCR", "CRD"};
    int mode = kiln_transform_name_index(attrs->mode, modes, 2);
    if (mode < 0) {
      return bad_name(args, "mode", attrs->mode);
    }
    s.dcr = mode == 0;
    s.channels = type->shape[1];
  } else {
    s.channels = s.data->shape[1];
  }
  return kiln_compute_one(args, depth_space_body, &s, out_result);
}
