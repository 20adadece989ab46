/*
 * The compute rule of image.grid_sample (transform_grid_sample.c): one
 * injective output whose element (n, c, oy, ox) is the reference kernel's
 * arithmetic written as loop-IR expressions, in float64 and rounded to
 * float32 once.
 *
 * The grid point (n, oy, ox) becomes the source point x, y exactly as the
 * reference moves it (denormalize, round half to even for "nearest" with
 * the round intrinsic, which is nearbyint; the joint out-of-bounds test that
 * clamps or reflects both coordinates; the pin to [-4, size + 3]); each is
 * bound once with a Let, since every tap reads it. Reflection is written
 * without integer conversions: d = the distance past the border,
 * n = floor(d / range), r = d - n range, and the parity of n from
 * n - 2 floor(n / 2). Each axis then gives its taps (one for nearest, two
 * for bilinear, four for bicubic): an int32 index made safe to load at (the
 * clamp of "zeros" and "border", the truncated reflection of "reflection",
 * also bound by Lets) and, for "zeros", whether the unclamped index is
 * inside, which selects the pixel or 0. The weights are the reference's:
 * 1 - t and t for bilinear, Keys' cubic polynomials of t = x - floor(x) for
 * bicubic.
 */
#include "op/transform_attrs.h"
#include "op/transform_compute.h"

enum { MAX_LETS = 4 + 2 * 4 }; /* x, y, their sources, four taps an axis */

typedef struct grid_sample_t {
  const kiln_te_tensor_t *data;
  const kiln_te_tensor_t *grid;
  kiln_grid_sample_plan_t plan;
} grid_sample_t;

/* Let bindings collected while the body is built, wrapped around it at the end. */
typedef struct lets_t {
  int count;
  const kiln_tir_var_t *vars[MAX_LETS];
  const kiln_tir_expr_t *values[MAX_LETS];
} lets_t;

static const kiln_tir_expr_t *bind(kiln_tir_builder_t *b, lets_t *lets, const char *name,
                                   const kiln_tir_expr_t *value) {
  const kiln_tir_var_t *var = kiln_tir_b_var(b, name, value->dtype.base);
  lets->vars[lets->count] = var;
  lets->values[lets->count++] = value;
  return kiln_tir_b_v(var);
}

static const kiln_tir_expr_t *bin(kiln_tir_builder_t *b, kiln_tir_expr_kind_t kind,
                                  const kiln_tir_expr_t *x, const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, kind, x, y);
}

static const kiln_tir_expr_t *sub(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                  const kiln_tir_expr_t *y) {
  return bin(b, KILN_TIR_EXPR_SUB, x, y);
}

static const kiln_tir_expr_t *call1(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op,
                                    const kiln_tir_expr_t *x) {
  return kiln_tir_b_call(b, op, 1, &x);
}

static const kiln_tir_expr_t *as_i32(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), x);
}

static const kiln_tir_expr_t *either(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                     const kiln_tir_expr_t *y) {
  return bin(b, KILN_TIR_EXPR_OR, x, y);
}

static const kiln_tir_expr_t *outside(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, double lo,
                                      double hi) {
  return either(b, bin(b, KILN_TIR_EXPR_LT, x, kiln_tcompute_f64(b, lo)),
                bin(b, KILN_TIR_EXPR_GT, x, kiln_tcompute_f64(b, hi)));
}

/* x in [lo, hi]; NaN becomes lo, as the reference's pin. */
static const kiln_tir_expr_t *pin(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, double lo,
                                  double hi) {
  const kiln_tir_expr_t *low = bin(b, KILN_TIR_EXPR_MIN, x, kiln_tcompute_f64(b, hi));
  return kiln_tir_b_select(b, bin(b, KILN_TIR_EXPR_GE, x, kiln_tcompute_f64(b, lo)), low,
                           kiln_tcompute_f64(b, lo));
}

static const kiln_tir_expr_t *denormalize(kiln_tir_builder_t *b, const kiln_tir_expr_t *n,
                                          int64_t size, bool align_corners) {
  const kiln_tir_expr_t *n1 = kiln_tir_b_add(b, n, kiln_tcompute_f64(b, 1.0));
  if (align_corners) {
    return kiln_tir_b_mul(b, bin(b, KILN_TIR_EXPR_DIV, n1, kiln_tcompute_f64(b, 2.0)),
                          kiln_tcompute_f64(b, (double)(size - 1)));
  }
  const kiln_tir_expr_t *scaled =
      sub(b, kiln_tir_b_mul(b, n1, kiln_tcompute_f64(b, (double)size)), kiln_tcompute_f64(b, 1.0));
  return bin(b, KILN_TIR_EXPR_DIV, scaled, kiln_tcompute_f64(b, 2.0));
}

/* x reflected between lo and hi until it is inside (the reference's reflect). */
static const kiln_tir_expr_t *reflect(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, double lo,
                                      double hi) {
  double range = hi - lo;
  const kiln_tir_expr_t *out = outside(b, x, lo, hi);
  if (range <= 0.0) {
    return kiln_tir_b_select(b, out, kiln_tcompute_f64(b, lo), x);
  }
  const kiln_tir_expr_t *below = bin(b, KILN_TIR_EXPR_LT, x, kiln_tcompute_f64(b, lo));
  const kiln_tir_expr_t *d = kiln_tir_b_select(b, below, sub(b, kiln_tcompute_f64(b, lo), x),
                                               sub(b, x, kiln_tcompute_f64(b, hi)));
  const kiln_tir_expr_t *n =
      call1(b, KILN_TIR_INTRINSIC_FLOOR, bin(b, KILN_TIR_EXPR_DIV, d, kiln_tcompute_f64(b, range)));
  const kiln_tir_expr_t *r = sub(b, d, kiln_tir_b_mul(b, n, kiln_tcompute_f64(b, range)));
  const kiln_tir_expr_t *half =
      call1(b, KILN_TIR_INTRINSIC_FLOOR, kiln_tir_b_mul(b, n, kiln_tcompute_f64(b, 0.5)));
  const kiln_tir_expr_t *even =
      bin(b, KILN_TIR_EXPR_EQ, sub(b, n, kiln_tir_b_mul(b, half, kiln_tcompute_f64(b, 2.0))),
          kiln_tcompute_f64(b, 0.0));
  const kiln_tir_expr_t *up = kiln_tir_b_add(b, kiln_tcompute_f64(b, lo), r);
  const kiln_tir_expr_t *down = sub(b, kiln_tcompute_f64(b, hi), r);
  const kiln_tir_expr_t *moved = kiln_tir_b_select(b, below, kiln_tir_b_select(b, even, up, down),
                                                   kiln_tir_b_select(b, even, down, up));
  return kiln_tir_b_select(b, out, moved, x);
}

/* One axis of the plane: its size and the borders of reflection. */
typedef struct axis_t {
  int64_t size;
  double lo, hi;
} axis_t;

/* The source coordinate on `axis` of normalized n (the out-of-bounds test
 * of both coordinates is `out`). */
static const kiln_tir_expr_t *source(kiln_tir_builder_t *b, const kiln_grid_sample_plan_t *p,
                                     const kiln_tir_expr_t *x, const kiln_tir_expr_t *out,
                                     axis_t axis) {
  if (p->padding == KILN_GRID_SAMPLE_BORDER) {
    x = kiln_tir_b_select(b, out, pin(b, x, 0.0, (double)(axis.size - 1)), x);
  } else if (p->padding == KILN_GRID_SAMPLE_REFLECTION) {
    x = reflect(b, x, axis.lo, axis.hi);
  }
  return pin(b, x, -4.0, (double)(axis.size + 3));
}

/* One tap of an axis: an index safe to load at, and for "zeros" whether
 * the tap is inside the plane (NULL: always read). */
typedef struct tap_t {
  const kiln_tir_expr_t *index;
  const kiln_tir_expr_t *inside;
} tap_t;

static tap_t make_tap(kiln_tir_builder_t *b, const kiln_grid_sample_plan_t *p, lets_t *lets,
                      const char *name, const kiln_tir_expr_t *i, axis_t axis) {
  if (p->padding == KILN_GRID_SAMPLE_REFLECTION) {
    const kiln_tir_expr_t *at = call1(b, KILN_TIR_INTRINSIC_TRUNC,
                                      reflect(b, kiln_tcompute_as_f64(b, i), axis.lo, axis.hi));
    return (tap_t){bind(b, lets, name, as_i32(b, pin(b, at, 0.0, (double)(axis.size - 1)))), NULL};
  }
  const kiln_tir_expr_t *index = bind(b, lets, name, kiln_compute_clamp(b, i, 0, axis.size - 1));
  bool zeros = p->padding == KILN_GRID_SAMPLE_ZEROS;
  return (tap_t){index, zeros ? kiln_compute_in_range(b, i, 0, axis.size) : NULL};
}

/* `count` taps from floor(x) + first on, each bound once. */
static void make_taps(kiln_tir_builder_t *b, const kiln_grid_sample_plan_t *p, lets_t *lets,
                      const char *name, const kiln_tir_expr_t *low, int first, int count,
                      axis_t axis, tap_t *out_taps) {
  for (int k = 0; k < count; ++k) {
    out_taps[k] =
        make_tap(b, p, lets, name, kiln_tir_b_add(b, low, kiln_tir_b_i32(b, first + k)), axis);
  }
}

static const kiln_tir_expr_t *pixel(kiln_tir_builder_t *b, const grid_sample_t *s,
                                    const kiln_tir_expr_t *const *indices, tap_t row, tap_t col) {
  const kiln_tir_expr_t *at[4] = {indices[0], indices[1], row.index, col.index};
  const kiln_tir_expr_t *value = kiln_tcompute_as_f64(b, kiln_te_read(b, s->data, 4, at));
  if (!row.inside) {
    return value;
  }
  return kiln_tir_b_select(b, bin(b, KILN_TIR_EXPR_AND, row.inside, col.inside), value,
                           kiln_tcompute_f64(b, 0.0));
}

/* Keys' cubic weights (a = -0.75) of the four taps around t in [0, 1). */
static void cubic_weights(kiln_tir_builder_t *b, const kiln_tir_expr_t *t,
                          const kiln_tir_expr_t **w) {
  const double a = -0.75;
  const kiln_tir_expr_t *x[4] = {kiln_tir_b_add(b, t, kiln_tcompute_f64(b, 1.0)), t,
                                 sub(b, kiln_tcompute_f64(b, 1.0), t),
                                 sub(b, kiln_tcompute_f64(b, 2.0), t)};
  for (int k = 0; k < 4; ++k) {
    bool outer = k == 0 || k == 3;
    /* outer: ((a x - 5a) x + 8a) x - 4a; inner: ((a + 2) x - (a + 3)) x x + 1 */
    const kiln_tir_expr_t *v = kiln_tir_b_mul(b, kiln_tcompute_f64(b, outer ? a : a + 2), x[k]);
    v = sub(b, v, kiln_tcompute_f64(b, outer ? 5 * a : a + 3));
    v = kiln_tir_b_mul(b, v, x[k]);
    v = outer ? kiln_tir_b_add(b, v, kiln_tcompute_f64(b, 8 * a)) : kiln_tir_b_mul(b, v, x[k]);
    v = kiln_tir_b_mul(b, v, outer ? x[k] : kiln_tcompute_f64(b, 1.0));
    w[k] = outer ? sub(b, v, kiln_tcompute_f64(b, 4 * a))
                 : kiln_tir_b_add(b, v, kiln_tcompute_f64(b, 1.0));
  }
}

/* sum_h wy[h] sum_w wx[w] pixel(rows[h], cols[w]) over `count` taps a side. */
static const kiln_tir_expr_t *weigh(kiln_tir_builder_t *b, const grid_sample_t *s,
                                    const kiln_tir_expr_t *const *indices, int count,
                                    const tap_t *rows, const kiln_tir_expr_t *const *wy,
                                    const tap_t *cols, const kiln_tir_expr_t *const *wx) {
  const kiln_tir_expr_t *sum = NULL;
  for (int h = 0; h < count; ++h) {
    const kiln_tir_expr_t *row = NULL;
    for (int w = 0; w < count; ++w) {
      const kiln_tir_expr_t *term =
          kiln_tir_b_mul(b, wx[w], pixel(b, s, indices, rows[h], cols[w]));
      row = row ? kiln_tir_b_add(b, row, term) : term;
    }
    const kiln_tir_expr_t *term = kiln_tir_b_mul(b, wy[h], row);
    sum = sum ? kiln_tir_b_add(b, sum, term) : term;
  }
  return sum;
}

static const kiln_tir_expr_t *interpolate(kiln_tir_builder_t *b, const grid_sample_t *s,
                                          const kiln_tir_expr_t *const *indices, lets_t *lets,
                                          const kiln_tir_expr_t *x, const kiln_tir_expr_t *y) {
  const kiln_grid_sample_plan_t *p = &s->plan;
  axis_t ax = {p->width, p->x_min, p->x_max}, ay = {p->height, p->y_min, p->y_max};
  tap_t rows[4], cols[4];
  if (p->method == KILN_GRID_SAMPLE_NEAREST) {
    make_taps(b, p, lets, "gs_row", as_i32(b, y), 0, 1, ay, rows);
    make_taps(b, p, lets, "gs_col", as_i32(b, x), 0, 1, ax, cols);
    return pixel(b, s, indices, rows[0], cols[0]);
  }
  const kiln_tir_expr_t *fx = call1(b, KILN_TIR_INTRINSIC_FLOOR, x);
  const kiln_tir_expr_t *fy = call1(b, KILN_TIR_INTRINSIC_FLOOR, y);
  const kiln_tir_expr_t *tx = sub(b, x, fx), *ty = sub(b, y, fy);
  bool cubic = p->method == KILN_GRID_SAMPLE_BICUBIC;
  int first = cubic ? -1 : 0, count = cubic ? 4 : 2;
  make_taps(b, p, lets, "gs_row", as_i32(b, fy), first, count, ay, rows);
  make_taps(b, p, lets, "gs_col", as_i32(b, fx), first, count, ax, cols);
  const kiln_tir_expr_t *wx[4], *wy[4];
  if (cubic) {
    cubic_weights(b, tx, wx);
    cubic_weights(b, ty, wy);
  } else {
    wx[0] = sub(b, kiln_tir_b_add(b, fx, kiln_tcompute_f64(b, 1.0)), x);
    wx[1] = tx;
    wy[0] = sub(b, kiln_tir_b_add(b, fy, kiln_tcompute_f64(b, 1.0)), y);
    wy[1] = ty;
  }
  return weigh(b, s, indices, count, rows, wy, cols, wx);
}

static const kiln_tir_expr_t *grid_sample_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const grid_sample_t *s = user;
  const kiln_grid_sample_plan_t *p = &s->plan;
  const kiln_tir_expr_t *at[4] = {indices[0], indices[2], indices[3], kiln_tir_b_i32(b, 0)};
  const kiln_tir_expr_t *nx = kiln_tcompute_as_f64(b, kiln_te_read(b, s->grid, 4, at));
  at[3] = kiln_tir_b_i32(b, 1);
  const kiln_tir_expr_t *ny = kiln_tcompute_as_f64(b, kiln_te_read(b, s->grid, 4, at));
  const kiln_tir_expr_t *x = denormalize(b, nx, p->width, p->align_corners);
  const kiln_tir_expr_t *y = denormalize(b, ny, p->height, p->align_corners);
  if (p->method == KILN_GRID_SAMPLE_NEAREST) {
    x = call1(b, KILN_TIR_INTRINSIC_ROUND, x);
    y = call1(b, KILN_TIR_INTRINSIC_ROUND, y);
  }
  lets_t lets = {0};
  x = bind(b, &lets, "gs_x", x);
  y = bind(b, &lets, "gs_y", y);
  const kiln_tir_expr_t *out =
      either(b, outside(b, x, p->x_min, p->x_max), outside(b, y, p->y_min, p->y_max));
  const kiln_tir_expr_t *sx = source(b, p, x, out, (axis_t){p->width, p->x_min, p->x_max});
  const kiln_tir_expr_t *sy = source(b, p, y, out, (axis_t){p->height, p->y_min, p->y_max});
  const kiln_tir_expr_t *body =
      interpolate(b, s, indices, &lets, bind(b, &lets, "gs_sx", sx), bind(b, &lets, "gs_sy", sy));
  body = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), body);
  for (int i = lets.count - 1; i >= 0; --i) {
    body = kiln_tir_b_let(b, lets.vars[i], lets.values[i], body);
  }
  return body;
}

kiln_status_t kiln_compute_grid_sample(const kiln_compute_args_t *args,
                                       kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  grid_sample_t s = {args->inputs[0], args->inputs[1], {0}};
  if (s.data->ndim != 4 || s.grid->ndim != 4 || s.grid->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 4-D float32 data and grid", args->op->name);
  }
  KILN_RETURN_IF_ERROR(
      kiln_grid_sample_plan_of(args->op, args->attrs, s.data->shape[2], s.data->shape[3], &s.plan));
  return kiln_compute_one(args, grid_sample_body, &s, out_result);
}
