/*
 * Compute rules of the elementwise operators: one scalar expression per
 * operator, through the elementwise template of op/compute.h (inputs read
 * with NumPy broadcasting, the result cast to the output dtype).
 *
 * The expressions follow the reference kernels (elemwise_unary.c,
 * elemwise_binary.c) exactly where exactness is observable: every NaN,
 * infinity and signed zero goes the same way (relu, clip and the selects of
 * the activations are written as the reference's comparisons, so NaN falls
 * through them as it does there; maximum and minimum test for NaN first;
 * sign keeps -0 and NaN), integers wrap at their width as the reference's
 * int64 arithmetic stored to that width does, and the dtypes a reference
 * kernel rejects are rejected here with the same UNIMPLEMENTED. Floats are
 * computed in their own dtype (float16 and bfloat16 through float32, as the
 * reference does); the reference's double arithmetic rounded once agrees
 * with that within float tolerance.
 *
 * The loop IR divides integers with floordiv/floormod only, so divide and
 * mod build C's truncating forms from them (the quotient moved one step
 * toward zero when the remainder is nonzero and the signs differ). A zero
 * divisor reaches a FloorDiv and a FloorMod, which give 0 on every path
 * (base/scalar_ops.h), so the truncating forms give 0 too, as the
 * reference's kiln_scalar_int_divide and kiln_scalar_int_mod do. Integer
 * power is square and multiply unrolled over the exponent's bits, with Let
 * bindings so each square is computed once; a negative exponent gives the
 * truncated 1 / x^-y through a truncating division of 1, so 0 to a negative
 * power is 1 / 0 = 0, as kiln_scalar_int_power gives.
 */
#include "op/elemwise_compute.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op/compute.h"
#include "op/elemwise_attrs.h"
#include "runtime/scalar.h"

/* ---- expression helpers (NULL operands stay NULL: the builder is sticky) ---- */

/* The constant `value` in x's dtype. */
static const kiln_tir_expr_t *constant(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       double value) {
  if (!x) {
    return NULL;
  }
  return kiln_tir_dtype_is_float(x->dtype) ? kiln_tir_b_float(b, x->dtype.base, value)
                                           : kiln_tir_b_int(b, x->dtype.base, (int64_t)value);
}

static const kiln_tir_expr_t *bool_constant(kiln_tir_builder_t *b, bool value) {
  return kiln_tir_b_int(b, KILN_DTYPE_BOOL, value ? 1 : 0);
}

static const kiln_tir_expr_t *sub(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                  const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, y);
}

static const kiln_tir_expr_t *div_(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                   const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, x, y);
}

static const kiln_tir_expr_t *call1(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op,
                                    const kiln_tir_expr_t *x) {
  return kiln_tir_b_call(b, op, 1, &x);
}

static const kiln_tir_expr_t *call2(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op,
                                    const kiln_tir_expr_t *x, const kiln_tir_expr_t *y) {
  const kiln_tir_expr_t *args[2] = {x, y};
  return kiln_tir_b_call(b, op, 2, args);
}

static const kiln_tir_expr_t *select_(kiln_tir_builder_t *b, const kiln_tir_expr_t *c,
                                      const kiln_tir_expr_t *t, const kiln_tir_expr_t *f) {
  return kiln_tir_b_select(b, c, t, f);
}

/* x < 0 ? 0 : (x > 1 ? 1 : x): NaN stays NaN. */
static const kiln_tir_expr_t *clamp01(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  const kiln_tir_expr_t *zero = constant(b, x, 0.0);
  const kiln_tir_expr_t *one = constant(b, x, 1.0);
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, zero), zero,
                 select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, one), one, x));
}

/* x != x. */
static const kiln_tir_expr_t *is_nan(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, x, x);
}

/* (x < 0) != (y < 0): the signs of two integers differ. */
static const kiln_tir_expr_t *signs_differ(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                           const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_NE,
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, constant(b, x, 0.0)),
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, y, constant(b, y, 0.0)));
}

/* Whether floor and truncation part: a nonzero floormod with signs that differ. */
static const kiln_tir_expr_t *floor_is_not_trunc(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                                 const kiln_tir_expr_t *y,
                                                 const kiln_tir_expr_t *r) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_AND,
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, r, constant(b, r, 0.0)),
                        signs_differ(b, x, y));
}

/* C's x / y on signed integers (INT_MIN / -1 wraps, as floordiv does). */
static const kiln_tir_expr_t *trunc_div(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                        const kiln_tir_expr_t *y) {
  const kiln_tir_expr_t *q = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, y);
  const kiln_tir_expr_t *r = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, y);
  return select_(b, floor_is_not_trunc(b, x, y, r), kiln_tir_b_add(b, q, constant(b, q, 1.0)), q);
}

/* C's x % y on signed integers: the sign of the dividend. */
static const kiln_tir_expr_t *trunc_mod(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                        const kiln_tir_expr_t *y) {
  const kiln_tir_expr_t *r = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, y);
  return select_(b, floor_is_not_trunc(b, x, y, r), sub(b, r, y), r);
}

static bool is_unsigned(const kiln_tir_expr_t *x) {
  return x && kiln_scalar_class(x->dtype.base) == KILN_SCALAR_CLASS_UNSIGNED;
}

static int bit_width(const kiln_tir_expr_t *x) {
  return x ? kiln_dtype_to_dl(x->dtype.base).bits : 0;
}

/* Bit k of e (shifted as unsigned bits): floormod(e >> k, 2) == 1. */
static const kiln_tir_expr_t *bit_set(kiln_tir_builder_t *b, const kiln_tir_expr_t *e, int k) {
  const kiln_tir_expr_t *shifted = call2(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, e, constant(b, e, k));
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ,
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, shifted, constant(b, e, 2.0)),
                        constant(b, e, 1.0));
}

/* A Let-bound variable of e's dtype named `<prefix><k>`. */
static const kiln_tir_var_t *let_var(kiln_tir_builder_t *b, const char *prefix, int k,
                                     const kiln_tir_expr_t *e) {
  if (!e) {
    return NULL;
  }
  char name[32];
  snprintf(name, sizeof(name), "%s%d", prefix, k);
  return kiln_tir_b_var(b, name, e->dtype.base);
}

/* base^exponent over the low `bits` bits of the exponent, wrapping: square
 * and multiply, as nested Lets
 *   let p0 = base; let r1 = bit0 ? p0 : 1; let p1 = p0 * p0;
 *   let r2 = bit1 ? r1 * p1 : r1; ...; r<bits>. */
static const kiln_tir_expr_t *power_bits(kiln_tir_builder_t *b, const kiln_tir_expr_t *base,
                                         const kiln_tir_expr_t *exponent, int bits) {
  enum { MAX_BINDINGS = 2 * 64 };
  const kiln_tir_var_t *vars[MAX_BINDINGS];
  const kiln_tir_expr_t *values[MAX_BINDINGS];
  int n = 0;
  const kiln_tir_var_t *p = let_var(b, "pow_p", 0, base);
  vars[n] = p;
  values[n++] = base;
  const kiln_tir_var_t *r = NULL;
  for (int k = 0; k < bits; ++k) {
    if (k > 0) {
      const kiln_tir_var_t *next = let_var(b, "pow_p", k, base);
      vars[n] = next;
      values[n++] = kiln_tir_b_mul(b, kiln_tir_b_v(p), kiln_tir_b_v(p));
      p = next;
    }
    const kiln_tir_expr_t *taken =
        r ? kiln_tir_b_mul(b, kiln_tir_b_v(r), kiln_tir_b_v(p)) : kiln_tir_b_v(p);
    const kiln_tir_expr_t *kept = r ? kiln_tir_b_v(r) : constant(b, base, 1.0);
    const kiln_tir_var_t *next_r = let_var(b, "pow_r", k + 1, base);
    vars[n] = next_r;
    values[n++] = select_(b, bit_set(b, exponent, k), taken, kept);
    r = next_r;
  }
  const kiln_tir_expr_t *body = kiln_tir_b_v(r);
  for (int i = n - 1; i >= 0; --i) {
    body = kiln_tir_b_let(b, vars[i], values[i], body);
  }
  return body;
}

/* ---- unary rules (v[0] = x) ---- */

#define RULE_(name)                                                                          \
  static const kiln_tir_expr_t *name(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *v, \
                                     const kiln_compute_args_t *args)
#define INTRINSIC_RULE_(name, op)                   \
  RULE_(u_##name) {                                 \
    (void)args;                                     \
    return call1(b, KILN_TIR_INTRINSIC_##op, v[0]); \
  }

INTRINSIC_RULE_(sigmoid, SIGMOID)
INTRINSIC_RULE_(tanh, TANH)
INTRINSIC_RULE_(erf, ERF)
INTRINSIC_RULE_(exp, EXP)
INTRINSIC_RULE_(log, LOG)
INTRINSIC_RULE_(sqrt, SQRT)
INTRINSIC_RULE_(rsqrt, RSQRT)
INTRINSIC_RULE_(floor, FLOOR)
INTRINSIC_RULE_(ceil, CEIL)
INTRINSIC_RULE_(round, ROUND) /* nearbyint: half to even, as rint */
INTRINSIC_RULE_(sin, SIN)
INTRINSIC_RULE_(cos, COS)
INTRINSIC_RULE_(tan, TAN)
INTRINSIC_RULE_(asin, ASIN)
INTRINSIC_RULE_(acos, ACOS)
INTRINSIC_RULE_(atan, ATAN)
INTRINSIC_RULE_(sinh, SINH)
INTRINSIC_RULE_(cosh, COSH)
INTRINSIC_RULE_(asinh, ASINH)
INTRINSIC_RULE_(acosh, ACOSH)
INTRINSIC_RULE_(atanh, ATANH)

/* x < 0 ? 0 : x: NaN stays NaN. */
RULE_(u_relu) {
  (void)args;
  const kiln_tir_expr_t *zero = constant(b, v[0], 0.0);
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, v[0], zero), zero, v[0]);
}

RULE_(u_leaky_relu) {
  double alpha = ((const kiln_leaky_relu_attrs_t *)args->attrs)->alpha;
  const kiln_tir_expr_t *x = v[0];
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, constant(b, x, 0.0)),
                 kiln_tir_b_mul(b, constant(b, x, alpha), x), x);
}

/* A double saturated to int64, as the reference's integer clip bounds. */
static int64_t saturate_int64(double v) {
  const double two63 = 9223372036854775808.0;
  return v < -two63 ? INT64_MIN : (v >= two63 ? INT64_MAX : (int64_t)v);
}

/* x < lo ? lo : (x > hi ? hi : x) with lo and hi constants of x's dtype. */
static const kiln_tir_expr_t *clamp(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                    const kiln_tir_expr_t *lo, const kiln_tir_expr_t *hi) {
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, lo), lo,
                 select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, hi), hi, x));
}

/* Floats compare with the bounds (NaN stays). Integers compare with
 * ceil(a_min) and floor(a_max) saturated to int64, as the reference does:
 * in the input's dtype when both fit it, else in int64 (the result then
 * wraps to the input's width, as the reference's store does). */
RULE_(u_clip) {
  const kiln_clip_attrs_t *clip = args->attrs;
  const kiln_tir_expr_t *x = v[0];
  if (!x || kiln_tir_dtype_is_float(x->dtype)) {
    return clamp(b, x, constant(b, x, clip->a_min), constant(b, x, clip->a_max));
  }
  int64_t low = saturate_int64(ceil(clip->a_min));
  int64_t high = saturate_int64(floor(clip->a_max));
  int64_t min = 0;
  int64_t max = 0;
  kiln_tir_dtype_int_range(x->dtype.base, &min, &max);
  if (!(low >= min && low <= max && high >= min && high <= max)) {
    x = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64), x);
  }
  return x ? clamp(b, x, kiln_tir_b_int(b, x->dtype.base, low),
                   kiln_tir_b_int(b, x->dtype.base, high))
           : NULL;
}

/* 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
 * 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
RULE_(u_gelu) {
  const char *approximate = ((const kiln_gelu_attrs_t *)args->attrs)->approximate;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *inner = NULL;
  if (approximate && strcmp(approximate, "tanh") == 0) {
    const kiln_tir_expr_t *cube = kiln_tir_b_mul(b, kiln_tir_b_mul(b, x, x), x);
    const kiln_tir_expr_t *sum =
        kiln_tir_b_add(b, x, kiln_tir_b_mul(b, constant(b, x, 0.044715), cube));
    inner = call1(b, KILN_TIR_INTRINSIC_TANH,
                  kiln_tir_b_mul(b, constant(b, x, 0.79788456080286535588), sum));
  } else {
    inner = call1(b, KILN_TIR_INTRINSIC_ERF,
                  kiln_tir_b_mul(b, x, constant(b, x, 0.70710678118654752440)));
  }
  return kiln_tir_b_mul(b, kiln_tir_b_mul(b, constant(b, x, 0.5), x),
                        kiln_tir_b_add(b, constant(b, x, 1.0), inner));
}

RULE_(u_hard_sigmoid) {
  const kiln_hard_sigmoid_attrs_t *hard = args->attrs;
  const kiln_tir_expr_t *x = v[0];
  return clamp01(b, kiln_tir_b_add(b, kiln_tir_b_mul(b, constant(b, x, hard->alpha), x),
                                   constant(b, x, hard->beta)));
}

/* clamp01(x / 6 + 0.5) * x. */
RULE_(u_hard_swish) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *t =
      kiln_tir_b_add(b, div_(b, x, constant(b, x, 6.0)), constant(b, x, 0.5));
  return kiln_tir_b_mul(b, clamp01(b, t), x);
}

/* fabs on floats; x < 0 ? -x : x on integers (wrapping at the minimum). */
RULE_(u_abs) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  if (!x || kiln_tir_dtype_is_float(x->dtype)) {
    return call1(b, KILN_TIR_INTRINSIC_FABS, x);
  }
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, constant(b, x, 0.0)),
                 kiln_tir_b_mul(b, x, constant(b, x, -1.0)), x);
}

/* x * -1: exact negation, -0 for +0, wrapping on integers. */
RULE_(u_negative) {
  (void)args;
  return kiln_tir_b_mul(b, v[0], constant(b, v[0], -1.0));
}

/* x > 0 ? 1 : (x < 0 ? -1 : x): keeps ±0 and NaN (and gives 0 on integers). */
RULE_(u_sign) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *zero = constant(b, x, 0.0);
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, zero), constant(b, x, 1.0),
                 select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, zero), constant(b, x, -1.0), x));
}

RULE_(u_reciprocal) {
  (void)args;
  return div_(b, constant(b, v[0], 1.0), v[0]);
}

/* x != x; false for integers. */
RULE_(u_isnan) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  return x && kiln_tir_dtype_is_float(x->dtype) ? is_nan(b, x) : bool_constant(b, false);
}

/* The largest finite value of a float dtype (float16 and bfloat16 are
 * computed in float32). */
static double float_max(const kiln_tir_expr_t *x) {
  return x->dtype.base == KILN_DTYPE_FLOAT64 ? DBL_MAX : (double)FLT_MAX;
}

/* (detect_positive and x > max) or (detect_negative and x < -max), max the
 * dtype's largest finite value; false for integers. */
RULE_(u_isinf) {
  const kiln_isinf_attrs_t *detect = args->attrs;
  const kiln_tir_expr_t *x = v[0];
  if (!x || !kiln_tir_dtype_is_float(x->dtype)) {
    return x ? bool_constant(b, false) : NULL;
  }
  double max = float_max(x);
  const kiln_tir_expr_t *positive =
      detect->detect_positive ? kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, constant(b, x, max)) : NULL;
  const kiln_tir_expr_t *negative =
      detect->detect_negative ? kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, constant(b, x, -max)) : NULL;
  if (positive && negative) {
    return kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, positive, negative);
  }
  return positive ? positive : (negative ? negative : bool_constant(b, false));
}

RULE_(u_logical_not) {
  (void)args;
  return kiln_tir_b_not(b, v[0]);
}

/* x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)): never overflows. */
RULE_(u_softplus) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *positive = kiln_tir_b_add(
      b, x,
      call1(b, KILN_TIR_INTRINSIC_LOG1P, call1(b, KILN_TIR_INTRINSIC_EXP, u_negative(b, v, args))));
  const kiln_tir_expr_t *otherwise =
      call1(b, KILN_TIR_INTRINSIC_LOG1P, call1(b, KILN_TIR_INTRINSIC_EXP, x));
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, constant(b, x, 0.0)), positive,
                 otherwise);
}

/* x / (1 + |x|). */
RULE_(u_softsign) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  return div_(b, x, kiln_tir_b_add(b, constant(b, x, 1.0), call1(b, KILN_TIR_INTRINSIC_FABS, x)));
}

/* x < 0 ? alpha expm1(x) : x. */
RULE_(u_elu) {
  double alpha = ((const kiln_alpha_attrs_t *)args->attrs)->alpha;
  const kiln_tir_expr_t *x = v[0];
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, constant(b, x, 0.0)),
                 kiln_tir_b_mul(b, constant(b, x, alpha), call1(b, KILN_TIR_INTRINSIC_EXPM1, x)),
                 x);
}

/* x > 0 ? gamma x : gamma alpha expm1(x). */
RULE_(u_selu) {
  const kiln_selu_attrs_t *selu = args->attrs;
  const kiln_tir_expr_t *x = v[0];
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, constant(b, x, 0.0)),
                 kiln_tir_b_mul(b, constant(b, x, selu->gamma), x),
                 kiln_tir_b_mul(b, constant(b, x, selu->gamma * selu->alpha),
                                call1(b, KILN_TIR_INTRINSIC_EXPM1, x)));
}

/* (x > 0 ? x : 0) + (n < 0 ? n : 0) with n = alpha expm1(x / alpha). */
RULE_(u_celu) {
  double alpha = ((const kiln_alpha_attrs_t *)args->attrs)->alpha;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *zero = constant(b, x, 0.0);
  const kiln_tir_expr_t *n =
      kiln_tir_b_mul(b, constant(b, x, alpha),
                     call1(b, KILN_TIR_INTRINSIC_EXPM1, div_(b, x, constant(b, x, alpha))));
  return kiln_tir_b_add(b, select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, zero), x, zero),
                        select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, n, zero), n, zero));
}

/* x > alpha ? x : 0 (NaN gives 0). */
RULE_(u_thresholded_relu) {
  double alpha = ((const kiln_alpha_attrs_t *)args->attrs)->alpha;
  const kiln_tir_expr_t *x = v[0];
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, constant(b, x, alpha)), x,
                 constant(b, x, 0.0));
}

/* x < -lambd ? x + bias : (x > lambd ? x - bias : 0). */
RULE_(u_shrink) {
  const kiln_shrink_attrs_t *shrink = args->attrs;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *bias = constant(b, x, shrink->bias);
  return select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, constant(b, x, -shrink->lambd)),
                 kiln_tir_b_add(b, x, bias),
                 select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, constant(b, x, shrink->lambd)),
                         sub(b, x, bias), constant(b, x, 0.0)));
}

/* ---- binary rules (v[0] = a, v[1] = b) ---- */

#define BINARY_KIND_RULE_(name, kind)           \
  RULE_(b_##name) {                             \
    (void)args;                                 \
    return kiln_tir_b_bin(b, kind, v[0], v[1]); \
  }

BINARY_KIND_RULE_(add, KILN_TIR_EXPR_ADD)
BINARY_KIND_RULE_(subtract, KILN_TIR_EXPR_SUB)
BINARY_KIND_RULE_(multiply, KILN_TIR_EXPR_MUL)
BINARY_KIND_RULE_(equal, KILN_TIR_EXPR_EQ)
BINARY_KIND_RULE_(not_equal, KILN_TIR_EXPR_NE)
BINARY_KIND_RULE_(less, KILN_TIR_EXPR_LT)
BINARY_KIND_RULE_(less_equal, KILN_TIR_EXPR_LE)
BINARY_KIND_RULE_(greater, KILN_TIR_EXPR_GT)
BINARY_KIND_RULE_(greater_equal, KILN_TIR_EXPR_GE)
BINARY_KIND_RULE_(logical_and, KILN_TIR_EXPR_AND)
BINARY_KIND_RULE_(logical_or, KILN_TIR_EXPR_OR)
BINARY_KIND_RULE_(logical_xor, KILN_TIR_EXPR_NE) /* on bools */

/* Floats divide; integers truncate toward zero (C), unsigned ones floor. */
RULE_(b_divide) {
  (void)args;
  if (!v[0] || kiln_tir_dtype_is_float(v[0]->dtype)) {
    return div_(b, v[0], v[1]);
  }
  return is_unsigned(v[0]) ? kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, v[0], v[1])
                           : trunc_div(b, v[0], v[1]);
}

/* pow on floats. On integers: the exponent's bits squared and multiplied,
 * wrapping; a negative exponent y gives trunc(1 / x)^-y, which is x^y
 * truncated (0 unless x is 1 or -1), through a truncating division of 1 by
 * x that gives 0 for x = 0 as the reference does (the divisor is 1 when
 * y >= 0). */
RULE_(b_power) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *y = v[1];
  if (!x || kiln_tir_dtype_is_float(x->dtype)) {
    return call2(b, KILN_TIR_INTRINSIC_POW, x, y);
  }
  if (is_unsigned(x)) {
    return power_bits(b, x, y, bit_width(x));
  }
  const kiln_tir_expr_t *positive = power_bits(b, x, y, bit_width(x) - 1);
  const kiln_tir_expr_t *negative_y = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, y, constant(b, y, 0.0));
  const kiln_tir_expr_t *t =
      trunc_div(b, constant(b, x, 1.0), select_(b, negative_y, x, constant(b, x, 1.0)));
  const kiln_tir_expr_t *odd = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_EQ, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, y, constant(b, y, 2.0)),
      constant(b, y, 1.0));
  const kiln_tir_expr_t *negative = select_(b, odd, t, kiln_tir_b_mul(b, t, t));
  return select_(b, negative_y, negative, positive);
}

/* NaN if either is NaN, else the larger (the smaller). */
static const kiln_tir_expr_t *extremum(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *v,
                                       kiln_tir_expr_kind_t int_kind, kiln_tir_expr_kind_t pick) {
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *y = v[1];
  if (!x || !kiln_tir_dtype_is_float(x->dtype)) {
    return kiln_tir_b_bin(b, int_kind, x, y);
  }
  return select_(b, is_nan(b, x), x,
                 select_(b, is_nan(b, y), y, select_(b, kiln_tir_b_bin(b, pick, x, y), x, y)));
}

RULE_(b_maximum) {
  (void)args;
  return extremum(b, v, KILN_TIR_EXPR_MAX, KILN_TIR_EXPR_GT);
}

RULE_(b_minimum) {
  (void)args;
  return extremum(b, v, KILN_TIR_EXPR_MIN, KILN_TIR_EXPR_LT);
}

/* fmod on floats, C's % (the sign of the dividend) on integers. */
RULE_(b_mod) {
  (void)args;
  if (!v[0] || kiln_tir_dtype_is_float(v[0]->dtype)) {
    return call2(b, KILN_TIR_INTRINSIC_FMOD, v[0], v[1]);
  }
  return is_unsigned(v[0]) ? kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, v[0], v[1])
                           : trunc_mod(b, v[0], v[1]);
}

/* Python's %: floormod on integers; on floats fmod moved into the divisor's
 * sign, a zero result taking the divisor's sign (NumPy). */
RULE_(b_floor_mod) {
  (void)args;
  const kiln_tir_expr_t *x = v[0];
  const kiln_tir_expr_t *y = v[1];
  if (!x || !kiln_tir_dtype_is_float(x->dtype)) {
    return kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, y);
  }
  const kiln_tir_expr_t *r = call2(b, KILN_TIR_INTRINSIC_FMOD, x, y);
  const kiln_tir_expr_t *zero = constant(b, x, 0.0);
  const kiln_tir_expr_t *moved = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_AND, kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, r, zero),
      kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, r, zero),
                     kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, y, zero)));
  const kiln_tir_expr_t *signed_zero = call2(b, KILN_TIR_INTRINSIC_COPYSIGN, zero, y);
  return select_(b, moved, kiln_tir_b_add(b, r, y),
                 select_(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, r, zero), signed_zero, r));
}

/* The bits shifted as unsigned; a shift by the width or more gives 0. */
RULE_(b_left_shift) {
  (void)args;
  return call2(b, KILN_TIR_INTRINSIC_SHIFT_LEFT, v[0], v[1]);
}

RULE_(b_right_shift) {
  (void)args;
  return call2(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, v[0], v[1]);
}

/* cond ? x : y. */
RULE_(w_where) {
  (void)args;
  return select_(b, v[0], v[1], v[2]);
}

/* ---- the table ---- */

/* The dtype classes a rule takes: exactly those its reference kernel does. */
#define F_   (1u << KILN_SCALAR_CLASS_FLOAT)
#define S_   (1u << KILN_SCALAR_CLASS_SIGNED)
#define U_   (1u << KILN_SCALAR_CLASS_UNSIGNED)
#define B_   (1u << KILN_SCALAR_CLASS_BOOL)
#define ALL_ (F_ | S_ | U_ | B_)

typedef struct elem_rule_t {
  kiln_compute_scalar_fn fn;
  unsigned classes; /* of the first input (the second of where) */
} elem_rule_t;

static const elem_rule_t elem_rules[KILN_OP_COUNT_] = {
    [KILN_OP_RELU] = {u_relu, F_ | S_},
    [KILN_OP_LEAKY_RELU] = {u_leaky_relu, F_},
    [KILN_OP_CLIP] = {u_clip, F_ | S_},
    [KILN_OP_SIGMOID] = {u_sigmoid, F_},
    [KILN_OP_TANH] = {u_tanh, F_},
    [KILN_OP_ERF] = {u_erf, F_},
    [KILN_OP_GELU] = {u_gelu, F_},
    [KILN_OP_HARD_SIGMOID] = {u_hard_sigmoid, F_},
    [KILN_OP_HARD_SWISH] = {u_hard_swish, F_},
    [KILN_OP_EXP] = {u_exp, F_},
    [KILN_OP_LOG] = {u_log, F_},
    [KILN_OP_SQRT] = {u_sqrt, F_},
    [KILN_OP_RSQRT] = {u_rsqrt, F_},
    [KILN_OP_ABS] = {u_abs, F_ | S_},
    [KILN_OP_NEGATIVE] = {u_negative, F_ | S_},
    [KILN_OP_FLOOR] = {u_floor, F_},
    [KILN_OP_CEIL] = {u_ceil, F_},
    [KILN_OP_SIN] = {u_sin, F_},
    [KILN_OP_COS] = {u_cos, F_},
    [KILN_OP_TAN] = {u_tan, F_},
    [KILN_OP_ASIN] = {u_asin, F_},
    [KILN_OP_ACOS] = {u_acos, F_},
    [KILN_OP_ATAN] = {u_atan, F_},
    [KILN_OP_SINH] = {u_sinh, F_},
    [KILN_OP_COSH] = {u_cosh, F_},
    [KILN_OP_ASINH] = {u_asinh, F_},
    [KILN_OP_ACOSH] = {u_acosh, F_},
    [KILN_OP_ATANH] = {u_atanh, F_},
    [KILN_OP_SIGN] = {u_sign, F_ | S_},
    [KILN_OP_ROUND] = {u_round, F_},
    [KILN_OP_RECIPROCAL] = {u_reciprocal, F_},
    [KILN_OP_ISNAN] = {u_isnan, F_ | S_},
    [KILN_OP_ISINF] = {u_isinf, F_ | S_},
    [KILN_OP_LOGICAL_NOT] = {u_logical_not, B_},
    [KILN_OP_SOFTPLUS] = {u_softplus, F_},
    [KILN_OP_SOFTSIGN] = {u_softsign, F_},
    [KILN_OP_ELU] = {u_elu, F_},
    [KILN_OP_SELU] = {u_selu, F_},
    [KILN_OP_CELU] = {u_celu, F_},
    [KILN_OP_THRESHOLDED_RELU] = {u_thresholded_relu, F_},
    [KILN_OP_SHRINK] = {u_shrink, F_},
    [KILN_OP_ADD] = {b_add, F_ | S_ | U_},
    [KILN_OP_SUBTRACT] = {b_subtract, F_ | S_ | U_},
    [KILN_OP_MULTIPLY] = {b_multiply, F_ | S_ | U_},
    [KILN_OP_DIVIDE] = {b_divide, F_ | S_ | U_},
    [KILN_OP_POWER] = {b_power, F_ | S_ | U_},
    [KILN_OP_MAXIMUM] = {b_maximum, F_ | S_ | U_},
    [KILN_OP_MINIMUM] = {b_minimum, F_ | S_ | U_},
    [KILN_OP_EQUAL] = {b_equal, ALL_},
    [KILN_OP_NOT_EQUAL] = {b_not_equal, ALL_},
    [KILN_OP_LESS] = {b_less, F_ | S_ | U_},
    [KILN_OP_LESS_EQUAL] = {b_less_equal, F_ | S_ | U_},
    [KILN_OP_GREATER] = {b_greater, F_ | S_ | U_},
    [KILN_OP_GREATER_EQUAL] = {b_greater_equal, F_ | S_ | U_},
    [KILN_OP_MOD] = {b_mod, F_ | S_ | U_},
    [KILN_OP_FLOOR_MOD] = {b_floor_mod, F_ | S_ | U_},
    [KILN_OP_LOGICAL_AND] = {b_logical_and, B_},
    [KILN_OP_LOGICAL_OR] = {b_logical_or, B_},
    [KILN_OP_LOGICAL_XOR] = {b_logical_xor, B_},
    [KILN_OP_LEFT_SHIFT] = {b_left_shift, U_},
    [KILN_OP_RIGHT_SHIFT] = {b_right_shift, U_},
    [KILN_OP_WHERE] = {w_where, ALL_},
};

static const elem_rule_t *elem_rule(const kiln_op_t *op) {
  const elem_rule_t *rule = (unsigned)op->id < KILN_OP_COUNT_ ? &elem_rules[op->id] : NULL;
  return rule && rule->fn ? rule : NULL;
}

/* The rule's expression on values widened as the reference widens them:
 * float16 and bfloat16 to float32 (the template casts the result back). */
static const kiln_tir_expr_t *widened_scalar(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *v,
                                             const kiln_compute_args_t *args) {
  const kiln_tir_expr_t *values[KILN_TE_MAX_INPUTS];
  for (int i = 0; i < args->num_inputs; ++i) {
    bool half =
        v[i] && (v[i]->dtype.base == KILN_DTYPE_FLOAT16 || v[i]->dtype.base == KILN_DTYPE_BFLOAT16);
    values[i] = half ? kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), v[i]) : v[i];
  }
  return elem_rule(args->op)->fn(b, values, args);
}

static kiln_status_t compute_rule(const kiln_compute_args_t *args, int typed_input,
                                  kiln_compute_scalar_fn fn, kiln_compute_result_t *out_result) {
  const kiln_op_t *op = args->op;
  const elem_rule_t *rule = elem_rule(op);
  if (!rule) {
    return KILN_STATUS(INTERNAL, "%s: not an elementwise operator with a compute rule", op->name);
  }
  if (args->num_inputs <= typed_input || !args->inputs[typed_input]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected input %d, got %d inputs", op->name,
                       typed_input, args->num_inputs);
  }
  kiln_dtype_t dtype = args->inputs[typed_input]->dtype;
  if (!(rule->classes & (1u << kiln_scalar_class(dtype)))) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the compute rule does not take dtype %s (nor does the reference "
                       "kernel)",
                       op->name, kiln_dtype_name(dtype));
  }
  char name[64];
  return kiln_compute_elemwise(args, kiln_compute_tensor_name(op, name, sizeof(name)), fn,
                               out_result);
}

kiln_status_t kiln_compute_unary(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  return compute_rule(args, 0, widened_scalar, out_result);
}

kiln_status_t kiln_compute_binary(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  return compute_rule(args, 0, widened_scalar, out_result);
}

kiln_status_t kiln_compute_where(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  return compute_rule(args, 1, w_where, out_result);
}
