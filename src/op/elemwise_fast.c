/*
 * Fast approximations of exp, erf and tanh: fast_exp, fast_erf, fast_tanh
 * (TVM's fast_math operators), which the fast_math pass substitutes for
 * exp, erf and tanh when asked to.
 *
 * Each is a short float32 program of clamps (as selects), multiply-adds of
 * a polynomial in Horner form, one division, and for fast_exp a floor and a
 * power of two:
 *
 * - fast_exp (Cephes' expf): x clamped to [-87.3, 88.3]; n = floor(x *
 *   log2(e) + 0.5); r = x - n * C1 - n * C2 (ln 2 split in two so r is
 *   exact); p = 1 + r + r^2 * P5(r); the result p * 2^n (2^n through pow,
 *   which is exact for an integer n).
 * - fast_tanh (Eigen's rational approximation): x clamped to +-7.905311;
 *   x * P13(x^2) / Q6(x^2), odd numerator and even denominator.
 * - fast_erf (Eigen's): x clamped to [-4, 4]; x * P13(x^2) / Q8(x^2).
 *
 * Relative error is about 1e-7 for exp and a few float ulps for the other
 * two, against libm (tests/op/test_compute_fast.c measures it). The
 * coefficients live in one table per operator that both the reference
 * kernel and the compute rule read, and the two evaluate the same
 * operations in the same order, so the compiled code computes the
 * approximation, not libm, and agrees with the reference to rounding.
 * float32 only (other dtypes are UNIMPLEMENTED in both).
 */
#include <math.h>

#include "op/compute.h"
#include "op/impl.h"
#include "op/op.h"

/* ---- the approximations' constants ---- */

#define FAST_EXP_LO     -87.3
#define FAST_EXP_HI     88.3
#define FAST_LOG2E      1.44269504088896341
#define FAST_LN2_HI     0.693359375
#define FAST_LN2_LO     -2.12194440e-4
#define FAST_TANH_CLAMP 7.90531110763549805
#define FAST_ERF_CLAMP  4.0

/* Highest degree first. */
static const double fast_exp_p[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                                    4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
static const double fast_tanh_p[] = {
    -2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
    1.48572235717979e-05,  6.37261928875436e-04, 4.89352455891786e-03};
static const double fast_tanh_q[] = {1.19825839466702e-06, 1.18534705686654e-04,
                                     2.26843463243900e-03, 4.89352518554385e-03};
static const double fast_erf_p[] = {
    -2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06, -5.69250639462346e-05,
    -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02};
static const double fast_erf_q[] = {-1.45660718464996e-05, -2.13374055278905e-04,
                                    -1.68282697438203e-03, -7.37332916720468e-03,
                                    -1.42647390514189e-02};

#define COUNT_(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- the reference: the programs in float ---- */

static float clampf_(float x, double lo, double hi) {
  return x < (float)lo ? (float)lo : (x > (float)hi ? (float)hi : x);
}

static float hornerf(const double *c, int n, float x) {
  float acc = (float)c[0];
  for (int i = 1; i < n; ++i) {
    acc = acc * x + (float)c[i];
  }
  return acc;
}

static float fast_exp_f(float v) {
  float x = clampf_(v, FAST_EXP_LO, FAST_EXP_HI);
  float n = floorf(x * (float)FAST_LOG2E + 0.5f);
  float r = x - n * (float)FAST_LN2_HI - n * (float)FAST_LN2_LO;
  float p = hornerf(fast_exp_p, COUNT_(fast_exp_p), r) * (r * r) + r + 1.0f;
  return p * powf(2.0f, n);
}

static float rational_odd_f(float v, double clamp, const double *p, int np, const double *q,
                            int nq) {
  float x = clampf_(v, -clamp, clamp);
  float x2 = x * x;
  return x * hornerf(p, np, x2) / hornerf(q, nq, x2);
}

static float fast_tanh_f(float v) {
  return rational_odd_f(v, FAST_TANH_CLAMP, fast_tanh_p, COUNT_(fast_tanh_p), fast_tanh_q,
                        COUNT_(fast_tanh_q));
}

static float fast_erf_f(float v) {
  return rational_odd_f(v, FAST_ERF_CLAMP, fast_erf_p, COUNT_(fast_erf_p), fast_erf_q,
                        COUNT_(fast_erf_q));
}

typedef float (*fast_fn)(float);

static fast_fn fast_function(const kiln_op_t *op) {
  if (op->id == KILN_OP_FAST_EXP) {
    return fast_exp_f;
  }
  if (op->id == KILN_OP_FAST_TANH) {
    return fast_tanh_f;
  }
  return op->id == KILN_OP_FAST_ERF ? fast_erf_f : NULL;
}

static kiln_status_t fast_reference(const kiln_kernel_args_t *args) {
  const kiln_op_t *op = args->op;
  fast_fn fn = fast_function(op);
  if (!fn || args->num_inputs != 1 || args->num_outputs != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected one input and one output", op->name);
  }
  const kiln_tensor_t *in = args->inputs[0];
  kiln_tensor_t *out = args->outputs[0];
  if (kiln_tensor_dtype(in) != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel takes float32 only, not %s",
                       op->name, kiln_dtype_name(kiln_tensor_dtype(in)));
  }
  if (kiln_tensor_dtype(out) != KILN_DTYPE_FLOAT32 ||
      kiln_tensor_element_count(out) != kiln_tensor_element_count(in)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the output does not match the input", op->name);
  }
  const float *x = kiln_tensor_data(in);
  float *y = kiln_tensor_data(out);
  for (int64_t i = 0; i < kiln_tensor_element_count(in); ++i) {
    y[i] = fn(x[i]);
  }
  return KILN_OK;
}

/* ---- the compute rule: the same programs in the loop IR ---- */

static const kiln_tir_expr_t *f32(kiln_tir_builder_t *b, double value) {
  return kiln_tir_b_f32(b, (double)(float)value);
}

static const kiln_tir_expr_t *clamp_expr(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, double lo,
                                         double hi) {
  const kiln_tir_expr_t *low = f32(b, lo), *high = f32(b, hi);
  return kiln_tir_b_select(
      b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, low), low,
      kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, high), high, x));
}

static const kiln_tir_expr_t *horner_expr(kiln_tir_builder_t *b, const double *c, int n,
                                          const kiln_tir_expr_t *x) {
  const kiln_tir_expr_t *acc = f32(b, c[0]);
  for (int i = 1; i < n; ++i) {
    acc = kiln_tir_b_add(b, kiln_tir_b_mul(b, acc, x), f32(b, c[i]));
  }
  return acc;
}

static const kiln_tir_expr_t *sub_expr(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, y);
}

static const kiln_tir_expr_t *fast_exp_expr(kiln_tir_builder_t *b, const kiln_tir_expr_t *v) {
  const kiln_tir_expr_t *x = clamp_expr(b, v, FAST_EXP_LO, FAST_EXP_HI);
  const kiln_tir_expr_t *t =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, x, f32(b, FAST_LOG2E)), f32(b, 0.5));
  const kiln_tir_expr_t *n = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_FLOOR, 1, &t);
  const kiln_tir_expr_t *r = sub_expr(b, sub_expr(b, x, kiln_tir_b_mul(b, n, f32(b, FAST_LN2_HI))),
                                      kiln_tir_b_mul(b, n, f32(b, FAST_LN2_LO)));
  const kiln_tir_expr_t *p = kiln_tir_b_add(
      b,
      kiln_tir_b_add(b,
                     kiln_tir_b_mul(b, horner_expr(b, fast_exp_p, COUNT_(fast_exp_p), r),
                                    kiln_tir_b_mul(b, r, r)),
                     r),
      f32(b, 1.0));
  const kiln_tir_expr_t *pow_args[] = {f32(b, 2.0), n};
  return kiln_tir_b_mul(b, p, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_POW, 2, pow_args));
}

static const kiln_tir_expr_t *rational_odd_expr(kiln_tir_builder_t *b, const kiln_tir_expr_t *v,
                                                double clamp, const double *p, int np,
                                                const double *q, int nq) {
  const kiln_tir_expr_t *x = clamp_expr(b, v, -clamp, clamp);
  const kiln_tir_expr_t *x2 = kiln_tir_b_mul(b, x, x);
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, kiln_tir_b_mul(b, x, horner_expr(b, p, np, x2)),
                        horner_expr(b, q, nq, x2));
}

static const kiln_tir_expr_t *fast_scalar(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *values,
                                          const kiln_compute_args_t *args) {
  kiln_op_id_t id = args->op->id;
  if (id == KILN_OP_FAST_EXP) {
    return fast_exp_expr(b, values[0]);
  }
  if (id == KILN_OP_FAST_TANH) {
    return rational_odd_expr(b, values[0], FAST_TANH_CLAMP, fast_tanh_p, COUNT_(fast_tanh_p),
                             fast_tanh_q, COUNT_(fast_tanh_q));
  }
  return rational_odd_expr(b, values[0], FAST_ERF_CLAMP, fast_erf_p, COUNT_(fast_erf_p), fast_erf_q,
                           COUNT_(fast_erf_q));
}

static kiln_status_t fast_compute(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  char name[64];
  return kiln_compute_elemwise(args, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                               fast_scalar, out_result);
}

/* ---- the operators ---- */

static kiln_status_t fast_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  if (data->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data must be float32, not %s", relation->op->name,
                       kiln_dtype_name(data->dtype));
  }
  *out_type = &data->base;
  return KILN_OK;
}

#define KILN_FAST_OP_(symbol, op_name, op_id) \
  const kiln_op_t symbol = {                  \
      .name = op_name,                        \
      .id = KILN_OP_##op_id,                  \
      .min_inputs = 1,                        \
      .max_inputs = 1,                        \
      .pattern = KILN_OP_PATTERN_ELEMWISE,    \
      .attrs_size = 0,                        \
      .infer_type = fast_infer_type,          \
      .symbolic_dims = true,                  \
      .correct_layout = NULL,                 \
  };                                          \
  const kiln_op_impl_t symbol##_impl = {.reference = fast_reference, .compute = fast_compute}

KILN_FAST_OP_(kiln_op_fast_exp, "fast_exp", FAST_EXP);
KILN_FAST_OP_(kiln_op_fast_erf, "fast_erf", FAST_ERF);
KILN_FAST_OP_(kiln_op_fast_tanh, "fast_tanh", FAST_TANH);
