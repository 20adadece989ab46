/*
 * Compute rules of the elementwise operators, lowered with the default
 * schedule and run on the loop-IR interpreter against the reference
 * kernels (kiln_compute_test.h): every unary and binary operator and where,
 * on odd shapes with broadcasting, on float32 over each operator's domain,
 * on hand-made tensors of NaN, infinities and signed zeros, on every integer
 * and bool dtype the reference takes (with the wrapping corners: INT_MIN / -1,
 * abs(INT_MIN), integer power), and with every attribute variant. Zero
 * divisors, INT_MIN / -1, 0 ** -1 and shifts past the width give the same
 * bits on every path (base/scalar_ops.h), dtypes the reference rejects are
 * rejected by the
 * rules, float16 rules build, and a golden text per family pins the shape
 * of the lowered loops.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kiln_compute_test.h"
#include "op/elemwise_attrs.h"
#include "runtime/scalar.h"
#include "tir/interp.h"

/* Default attrs (NULL for an operator without attributes). */
static const void *defaults(const kiln_op_t *op) {
  return op->attrs_size > 0 ? attrs_with(op, NULL) : NULL;
}

/* Shapes of the random tests: 3 x 37 (a tail of 11 lanes in 16). */
#define ODD_SHAPE SHAPE(3, 37)

static void check_unary(const kiln_op_t *op, const void *attrs, kiln_dtype_t dtype, double lo,
                        double hi) {
  const kiln_type_t *type = ttype(dtype, 2, ODD_SHAPE);
  check_compute_random(op, attrs ? attrs : defaults(op), 1, &type, lo, hi);
}

/* ---- registry ---- */

static void test_every_operator_has_a_compute_rule(void **state) {
  (void)state;
  int count = 0;
#define CHECK_COMPUTE_(e, name, symbol)            \
  assert_non_null(kiln_op_compute_get(symbol.id)); \
  ++count;
  KILN_OP_LIST_ELEMWISE(CHECK_COMPUTE_)
#undef CHECK_COMPUTE_
  assert_int_equal(count, 62);
}

/* ---- unary ---- */

typedef struct unary_case_t {
  const kiln_op_t *op;
  double lo;
  double hi;
} unary_case_t;

/* Every unary float operator over its domain. */
static const unary_case_t float_cases[] = {
    {&kiln_op_relu, -2, 2},
    {&kiln_op_leaky_relu, -2, 2},
    {&kiln_op_clip, -5, 5},
    {&kiln_op_sigmoid, -8, 8},
    {&kiln_op_tanh, -4, 4},
    {&kiln_op_erf, -3, 3},
    {&kiln_op_gelu, -4, 4},
    {&kiln_op_hard_sigmoid, -4, 4},
    {&kiln_op_hard_swish, -5, 5},
    {&kiln_op_exp, -10, 10},
    {&kiln_op_log, 0.01, 100},
    {&kiln_op_sqrt, 0, 100},
    {&kiln_op_rsqrt, 0.01, 100},
    {&kiln_op_abs, -3, 3},
    {&kiln_op_negative, -3, 3},
    {&kiln_op_floor, -5, 5},
    {&kiln_op_ceil, -5, 5},
    {&kiln_op_sin, -7, 7},
    {&kiln_op_cos, -7, 7},
    {&kiln_op_tan, -1.4, 1.4},
    {&kiln_op_asin, -1, 1},
    {&kiln_op_acos, -1, 1},
    {&kiln_op_atan, -10, 10},
    {&kiln_op_sinh, -4, 4},
    {&kiln_op_cosh, -4, 4},
    {&kiln_op_asinh, -10, 10},
    {&kiln_op_acosh, 1, 20},
    {&kiln_op_atanh, -0.99, 0.99},
    {&kiln_op_sign, -2, 2},
    {&kiln_op_round, -6, 6},
    {&kiln_op_reciprocal, 0.1, 5},
    {&kiln_op_isnan, -2, 2},
    {&kiln_op_isinf, -2, 2},
    {&kiln_op_softplus, -30, 30},
    {&kiln_op_softsign, -5, 5},
    {&kiln_op_elu, -4, 4},
    {&kiln_op_selu, -4, 4},
    {&kiln_op_celu, -4, 4},
    {&kiln_op_thresholded_relu, -3, 3},
    {&kiln_op_shrink, -2, 2},
};

static void test_unary_float32_domains(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(float_cases) / sizeof(float_cases[0]); ++i) {
    check_unary(float_cases[i].op, NULL, KILN_DTYPE_FLOAT32, float_cases[i].lo, float_cases[i].hi);
  }
  /* round's halves go to even: -2.5, -0.5, 0.5, 1.5, 2.5. */
  kiln_tensor_t *halves =
      tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(5), (const float[]){-2.5f, -0.5f, 0.5f, 1.5f, 2.5f});
  check_compute(&kiln_op_round, NULL, 1, &halves);
  kiln_tensor_release(halves);
}

static void test_unary_float64(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(float_cases) / sizeof(float_cases[0]); ++i) {
    check_unary(float_cases[i].op, NULL, KILN_DTYPE_FLOAT64, float_cases[i].lo, float_cases[i].hi);
  }
}

/* NaN, infinities, signed zeros, the largest finite values, a subnormal. */
static kiln_tensor_t *special_floats(void) {
  const float values[] = {NAN,  INFINITY, -INFINITY, -0.0f,   0.0f,     1.5f,  -2.5f,
                          0.5f, 2.5f,     -1e-40f,   FLT_MAX, -FLT_MAX, 1e-3f, -7.0f};
  return tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(14), values);
}

static void test_unary_special_values(void **state) {
  (void)state;
  kiln_tensor_t *x = special_floats();
  for (size_t i = 0; i < sizeof(float_cases) / sizeof(float_cases[0]); ++i) {
    check_compute(float_cases[i].op, defaults(float_cases[i].op), 1, &x);
  }
  kiln_tensor_release(x);
}

/* Lowers `op` on `inputs` and runs it on the interpreter into a fresh
 * output of the inferred type (released on failure). */
static kiln_status_t run_lowered(const kiln_op_t *op, const void *attrs, int num_inputs,
                                 kiln_tensor_t *const *inputs, kiln_tensor_t **out) {
  const kiln_type_t *types[3];
  for (int i = 0; i < num_inputs; ++i) {
    KILN_ASSERT_OK(kiln_tensor_type_of(&kiln_op_test_arena, inputs[i], &types[i]));
  }
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(
      kiln_op_lower(op, attrs, num_inputs, types, &target, &kiln_op_test_arena, "main", &func));
  const kiln_type_t *out_type = NULL;
  KILN_ASSERT_OK(infer(op, attrs, num_inputs, types, &out_type));
  const kiln_tensor_type_t *tensor_type = kiln_type_as_tensor(out_type);
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), tensor_type->dtype, tensor_type->ndim,
                                    tensor_type->shape, out));
  kiln_tensor_t *args[4];
  memcpy(args, inputs, (size_t)num_inputs * sizeof(*args));
  args[num_inputs] = *out;
  kiln_status_t status = kiln_tir_interp_run(kiln_allocator_system(), func, num_inputs + 1, args);
  if (status != KILN_OK) {
    kiln_tensor_release(*out);
    *out = NULL;
  }
  return status;
}

/* check_compute's comparison, with the sign of every zero (which its
 * tolerance does not see) and every infinity matched exactly. */
static void check_exact_zeros(const kiln_op_t *op, const void *attrs, int num_inputs,
                              kiln_tensor_t *const *inputs) {
  kiln_tensor_t *got = NULL;
  kiln_tensor_t *want = NULL;
  KILN_ASSERT_OK(run_lowered(op, attrs, num_inputs, inputs, &got));
  KILN_ASSERT_OK(run(op, attrs, num_inputs, inputs, &want));
  const float *g = kiln_tensor_data(got);
  const float *w = kiln_tensor_data(want);
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    bool exact = w[i] == 0.0f || isinf(w[i]);
    bool same = isnan(w[i]) ? isnan(g[i])
                : exact     ? g[i] == w[i] && !signbit(g[i]) == !signbit(w[i])
                            : fabs((double)g[i] - (double)w[i]) <= 1e-5 + 1e-4 * fabs((double)w[i]);
    if (!same) {
      fail_msg("%s: element %lld is %g through the loop IR, %g in the reference", op->name,
               (long long)i, (double)g[i], (double)w[i]);
    }
  }
  kiln_tensor_release(got);
  kiln_tensor_release(want);
}

static void test_unary_signed_zeros_exact(void **state) {
  (void)state;
  kiln_tensor_t *x = special_floats();
  for (size_t i = 0; i < sizeof(float_cases) / sizeof(float_cases[0]); ++i) {
    if (float_cases[i].op != &kiln_op_isnan && float_cases[i].op != &kiln_op_isinf) {
      check_exact_zeros(float_cases[i].op, defaults(float_cases[i].op), 1, &x);
    }
  }
  kiln_tensor_release(x);
}

static void test_unary_attribute_variants(void **state) {
  (void)state;
  check_unary(&kiln_op_leaky_relu, &(kiln_leaky_relu_attrs_t){0.3}, KILN_DTYPE_FLOAT32, -2, 2);
  check_unary(&kiln_op_clip, &(kiln_clip_attrs_t){-0.5, 0.7}, KILN_DTYPE_FLOAT32, -2, 2);
  check_unary(&kiln_op_clip, &(kiln_clip_attrs_t){0.1, 0.1}, KILN_DTYPE_FLOAT32, -2, 2);
  check_unary(&kiln_op_gelu, &(kiln_gelu_attrs_t){"tanh"}, KILN_DTYPE_FLOAT32, -4, 4);
  check_unary(&kiln_op_gelu, &(kiln_gelu_attrs_t){"none"}, KILN_DTYPE_FLOAT64, -4, 4);
  check_unary(&kiln_op_hard_sigmoid, &(kiln_hard_sigmoid_attrs_t){0.25, 0.4}, KILN_DTYPE_FLOAT32,
              -5, 5);
  check_unary(&kiln_op_elu, &(kiln_alpha_attrs_t){0.5}, KILN_DTYPE_FLOAT32, -4, 4);
  check_unary(&kiln_op_selu, &(kiln_selu_attrs_t){1.5, 2.0}, KILN_DTYPE_FLOAT32, -4, 4);
  check_unary(&kiln_op_celu, &(kiln_alpha_attrs_t){2.0}, KILN_DTYPE_FLOAT32, -4, 4);
  check_unary(&kiln_op_celu, &(kiln_alpha_attrs_t){-0.5}, KILN_DTYPE_FLOAT32, -4, 4);
  check_unary(&kiln_op_thresholded_relu, &(kiln_alpha_attrs_t){0.3}, KILN_DTYPE_FLOAT32, -2, 2);
  check_unary(&kiln_op_shrink, &(kiln_shrink_attrs_t){0.2, 0.4}, KILN_DTYPE_FLOAT32, -2, 2);
  check_unary(&kiln_op_shrink, &(kiln_shrink_attrs_t){0.0, 0.0}, KILN_DTYPE_FLOAT32, -2, 2);
  /* isinf with each detection setting, on infinities of both signs. */
  kiln_tensor_t *x = special_floats();
  const kiln_isinf_attrs_t detect[] = {{true, true}, {true, false}, {false, true}, {false, false}};
  for (int i = 0; i < 4; ++i) {
    check_compute(&kiln_op_isinf, &detect[i], 1, &x);
  }
  /* clip with bounds outside float32 (rounded to infinities). */
  check_compute(&kiln_op_clip, &(kiln_clip_attrs_t){-1e39, 1e39}, 1, &x);
  kiln_tensor_release(x);
}

/* The unary operators that take signed integers, on int8 (its whole range),
 * int32 and int64. */
static void test_unary_integers(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_relu, &kiln_op_clip,  &kiln_op_abs,  &kiln_op_negative,
                            &kiln_op_sign, &kiln_op_isnan, &kiln_op_isinf};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    check_unary(ops[i], NULL, KILN_DTYPE_INT8, -128, 127);
    check_unary(ops[i], NULL, KILN_DTYPE_INT16, -1000, 1000);
    check_unary(ops[i], NULL, KILN_DTYPE_INT32, -100000, 100000);
    check_unary(ops[i], NULL, KILN_DTYPE_INT64, -1e15, 1e15);
  }
  /* abs and negative wrap at the minimum. */
  kiln_tensor_t *mins =
      tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (const int64_t[]){INT64_MIN, INT64_MAX, -1});
  check_compute(&kiln_op_abs, NULL, 1, &mins);
  check_compute(&kiln_op_negative, NULL, 1, &mins);
  kiln_tensor_release(mins);
  /* clip: bounds inside int8 (rounded inward), bounds past it (compared in
   * int64 and wrapped, as the reference's store wraps), crossed bounds. */
  const kiln_clip_attrs_t clips[] = {{-20.5, 30.7}, {-300, -200}, {200, 300},
                                     {-1e30, 1e30}, {0.2, 0.8},   {-1000, 50}};
  for (size_t i = 0; i < sizeof(clips) / sizeof(clips[0]); ++i) {
    check_unary(&kiln_op_clip, &clips[i], KILN_DTYPE_INT8, -128, 127);
    check_unary(&kiln_op_clip, &clips[i], KILN_DTYPE_INT64, -1e4, 1e4);
  }
  /* logical_not takes bool. */
  check_unary(&kiln_op_logical_not, NULL, KILN_DTYPE_BOOL, 0, 1);
}

/* ---- binary ---- */

static const kiln_op_t *const arithmetic_ops[] = {
    &kiln_op_add,        &kiln_op_subtract, &kiln_op_multiply,      &kiln_op_maximum,
    &kiln_op_minimum,    &kiln_op_equal,    &kiln_op_not_equal,     &kiln_op_less,
    &kiln_op_less_equal, &kiln_op_greater,  &kiln_op_greater_equal,
};

/* 7x1x13 against 5x1: both sides broadcast, 455 elements. */
static void check_binary(const kiln_op_t *op, kiln_dtype_t dtype, double lo, double hi) {
  const kiln_type_t *types[] = {ttype(dtype, 3, SHAPE(7, 1, 13)), ttype(dtype, 2, SHAPE(5, 1))};
  check_compute_random(op, NULL, 2, types, lo, hi);
}

/* A random tensor with every zero replaced by `instead`. */
static kiln_tensor_t *nonzero_tensor(kiln_dtype_t dtype, int ndim, const int64_t *shape, double lo,
                                     double hi, double instead) {
  kiln_tensor_t *t = random_tensor(dtype, ndim, shape, lo, hi);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    if (kiln_tensor_element_as_double(t, i) == 0.0) {
      kiln_tensor_t *one = random_tensor(dtype, 0, NULL, instead, instead);
      memcpy((char *)kiln_tensor_data(t) + (size_t)i * kiln_dtype_size(dtype),
             kiln_tensor_data(one), kiln_dtype_size(dtype));
      kiln_tensor_release(one);
    }
  }
  return t;
}

/* op(a, b) with b free of zeros, broadcasting a 1x13 divisor row. */
static void check_division(const kiln_op_t *op, kiln_dtype_t dtype, double lo, double hi) {
  kiln_tensor_t *inputs[] = {random_tensor(dtype, 2, SHAPE(7, 13), lo, hi),
                             nonzero_tensor(dtype, 2, SHAPE(1, 13), lo, hi, 3)};
  check_compute(op, NULL, 2, inputs);
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
}

static void test_binary_float32(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(arithmetic_ops) / sizeof(arithmetic_ops[0]); ++i) {
    check_binary(arithmetic_ops[i], KILN_DTYPE_FLOAT32, -3, 3);
    check_binary(arithmetic_ops[i], KILN_DTYPE_FLOAT64, -3, 3);
  }
  check_binary(&kiln_op_power, KILN_DTYPE_FLOAT32, 0.1, 3);
  check_binary(&kiln_op_power, KILN_DTYPE_FLOAT64, 0.1, 3);
  const kiln_op_t *divisions[] = {&kiln_op_divide, &kiln_op_mod, &kiln_op_floor_mod};
  for (int i = 0; i < 3; ++i) {
    check_division(divisions[i], KILN_DTYPE_FLOAT32, -9, 9);
    check_division(divisions[i], KILN_DTYPE_FLOAT64, -9, 9);
  }
  /* Comparisons on equal values (the random ones are never equal). */
  check_binary(&kiln_op_equal, KILN_DTYPE_FLOAT32, 2, 2);
  check_binary(&kiln_op_less_equal, KILN_DTYPE_FLOAT32, 2, 2);
}

/* Every pair of NaN, infinities, signed zeros and ordinary values. */
static void test_binary_special_values(void **state) {
  (void)state;
  const float values[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 3.0f, -3.0f, 5.5f, -2.0f};
  kiln_tensor_t *a = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(9, 1), values);
  kiln_tensor_t *b = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(9), values);
  kiln_tensor_t *inputs[] = {a, b};
  const kiln_op_t *ops[] = {&kiln_op_add,        &kiln_op_subtract,  &kiln_op_multiply,
                            &kiln_op_divide,     &kiln_op_power,     &kiln_op_maximum,
                            &kiln_op_minimum,    &kiln_op_mod,       &kiln_op_floor_mod,
                            &kiln_op_equal,      &kiln_op_not_equal, &kiln_op_less,
                            &kiln_op_less_equal, &kiln_op_greater,   &kiln_op_greater_equal};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    check_compute(ops[i], NULL, 2, inputs);
    if (i < 9) { /* the float-valued ones */
      check_exact_zeros(ops[i], NULL, 2, inputs);
    }
  }
  kiln_tensor_release(a);
  kiln_tensor_release(b);
}

static void test_binary_integers(void **state) {
  (void)state;
  const kiln_dtype_t signed_types[] = {KILN_DTYPE_INT8, KILN_DTYPE_INT16, KILN_DTYPE_INT32,
                                       KILN_DTYPE_INT64};
  const double bound[] = {127, 1000, 1e6, 1e15};
  const kiln_op_t *divisions[] = {&kiln_op_divide, &kiln_op_mod, &kiln_op_floor_mod};
  for (int t = 0; t < 4; ++t) {
    for (size_t i = 0; i < sizeof(arithmetic_ops) / sizeof(arithmetic_ops[0]); ++i) {
      check_binary(arithmetic_ops[i], signed_types[t], -bound[t] - 1, bound[t]);
    }
    for (int i = 0; i < 3; ++i) {
      check_division(divisions[i], signed_types[t], -bound[t] - 1, bound[t]);
      check_division(divisions[i], signed_types[t], -9, 9); /* small quotients */
    }
  }
  const kiln_dtype_t unsigned_types[] = {KILN_DTYPE_UINT8, KILN_DTYPE_UINT16, KILN_DTYPE_UINT32};
  const double top[] = {255, 65535, 4294967295.0};
  for (int t = 0; t < 3; ++t) {
    for (size_t i = 0; i < sizeof(arithmetic_ops) / sizeof(arithmetic_ops[0]); ++i) {
      check_binary(arithmetic_ops[i], unsigned_types[t], 0, top[t]);
    }
    for (int i = 0; i < 3; ++i) {
      check_division(divisions[i], unsigned_types[t], 0, top[t]);
    }
  }
  /* The wrapping corners: INT_MIN / -1 and INT_MIN % -1. */
  kiln_tensor_t *corner[] = {
      tensor_of(KILN_DTYPE_INT8, 1, SHAPE(4), (const int8_t[]){-128, -128, 127, -7}),
      tensor_of(KILN_DTYPE_INT8, 1, SHAPE(4), (const int8_t[]){-1, 1, -1, 2})};
  kiln_tensor_t *corner64[] = {
      tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (const int64_t[]){INT64_MIN, INT64_MIN, 7}),
      tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (const int64_t[]){-1, 3, -2})};
  for (int i = 0; i < 3; ++i) {
    check_compute(divisions[i], NULL, 2, corner);
    check_compute(divisions[i], NULL, 2, corner64);
  }
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_release(corner[i]);
    kiln_tensor_release(corner64[i]);
  }
}

/* Integer power wraps; negative exponents truncate. */
static void test_integer_power(void **state) {
  (void)state;
  check_binary(&kiln_op_power, KILN_DTYPE_INT8, -128, 127);
  check_binary(&kiln_op_power, KILN_DTYPE_UINT8, 0, 255);
  check_binary(&kiln_op_power, KILN_DTYPE_UINT32, 0, 40);
  kiln_tensor_t *small[] = {nonzero_tensor(KILN_DTYPE_INT32, 2, SHAPE(11, 1), -4, 4, -1),
                            random_tensor(KILN_DTYPE_INT32, 1, SHAPE(9), -5, 12)};
  check_compute(&kiln_op_power, NULL, 2, small);
  kiln_tensor_t *wide[] = {nonzero_tensor(KILN_DTYPE_INT64, 2, SHAPE(5, 1), -1e6, 1e6, 1),
                           random_tensor(KILN_DTYPE_INT64, 1, SHAPE(7), -3, 70)};
  check_compute(&kiln_op_power, NULL, 2, wide);
  kiln_tensor_t *corners[] = {tensor_of(KILN_DTYPE_INT64, 1, SHAPE(8),
                                        (const int64_t[]){1, -1, -1, 2, -2, 3, 0, INT64_MIN}),
                              tensor_of(KILN_DTYPE_INT64, 1, SHAPE(8),
                                        (const int64_t[]){-5, -3, -4, -1, -1, 63, 0, INT64_MAX})};
  check_compute(&kiln_op_power, NULL, 2, corners);
  /* int8 exponents past the width: even bases wrap to 0, odd ones cycle. */
  kiln_tensor_t *narrow[] = {
      tensor_of(KILN_DTYPE_INT8, 1, SHAPE(8), (const int8_t[]){2, 2, 3, 3, -2, -3, 2, 127}),
      tensor_of(KILN_DTYPE_INT8, 1, SHAPE(8), (const int8_t[]){64, 65, 64, 127, 71, 100, 7, 127})};
  check_compute(&kiln_op_power, NULL, 2, narrow);
  kiln_tensor_t *unsigned_narrow[] = {
      tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(5), (const uint8_t[]){2, 2, 3, 255, 4}),
      tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(5), (const uint8_t[]){128, 130, 200, 255, 3})};
  check_compute(&kiln_op_power, NULL, 2, unsigned_narrow);
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_release(narrow[i]);
    kiln_tensor_release(unsigned_narrow[i]);
  }
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_release(small[i]);
    kiln_tensor_release(wide[i]);
    kiln_tensor_release(corners[i]);
  }
}

static void test_bools_and_shifts(void **state) {
  (void)state;
  const kiln_op_t *logical[] = {&kiln_op_logical_and, &kiln_op_logical_or, &kiln_op_logical_xor,
                                &kiln_op_equal, &kiln_op_not_equal};
  for (int i = 0; i < 5; ++i) {
    check_binary(logical[i], KILN_DTYPE_BOOL, 0, 1);
  }
  const kiln_dtype_t unsigned_types[] = {KILN_DTYPE_UINT8, KILN_DTYPE_UINT16, KILN_DTYPE_UINT32};
  for (int t = 0; t < 3; ++t) {
    kiln_tensor_t *inputs[] = {random_tensor(unsigned_types[t], 2, SHAPE(7, 13), 0, 250),
                               random_tensor(unsigned_types[t], 2, SHAPE(1, 13), 0, 40)};
    check_compute(&kiln_op_left_shift, NULL, 2, inputs);
    check_compute(&kiln_op_right_shift, NULL, 2, inputs);
    kiln_tensor_release(inputs[0]);
    kiln_tensor_release(inputs[1]);
  }
}

/* ---- where ---- */

static void test_where_broadcasts(void **state) {
  (void)state;
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_FLOAT32, KILN_DTYPE_FLOAT64, KILN_DTYPE_INT8,
                                 KILN_DTYPE_INT64,   KILN_DTYPE_UINT16,  KILN_DTYPE_BOOL};
  for (int t = 0; t < 6; ++t) {
    kiln_tensor_t *inputs[] = {random_tensor(KILN_DTYPE_BOOL, 3, SHAPE(3, 1, 17), 0, 1),
                               random_tensor(dtypes[t], 2, SHAPE(5, 1), 0, 100),
                               random_tensor(dtypes[t], 1, SHAPE(17), 0, 100)};
    check_compute(&kiln_op_where, NULL, 3, inputs);
    for (int i = 0; i < 3; ++i) {
      kiln_tensor_release(inputs[i]);
    }
  }
  /* A one-element condition. (A rank-0 tensor trips a memcpy from a NULL
   * shape in te/tensor.c under UBSan; see docs/compute-elemwise.md.) */
  kiln_tensor_t *scalar[] = {random_tensor(KILN_DTYPE_BOOL, 1, SHAPE(1), 1, 1),
                             random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(19), -1, 1),
                             random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(19), -1, 1)};
  check_compute(&kiln_op_where, NULL, 3, scalar);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(scalar[i]);
  }
}

/* ---- errors ---- */

/* The edge values of base/scalar_ops.h on every path: a zero divisor gives
 * 0 (divide, mod, floor_mod, power 0 ** -n), INT_MIN / -1 wraps and INT_MIN
 * % -1 is 0. check_compute runs the reference kernel, the loop-IR
 * interpreter (as lowered and after the passes), the C backend and the LLVM
 * backend (object file and JIT) and requires the same bits; the reference
 * is also pinned to the values chosen. */
static void test_integer_edges_on_every_path(void **state) {
  (void)state;
  kiln_tensor_t *inputs[] = {
      tensor_of(KILN_DTYPE_INT32, 1, SHAPE(8),
                (const int32_t[]){7, -7, 0, INT32_MIN, INT32_MIN, INT32_MAX, 0, 5}),
      tensor_of(KILN_DTYPE_INT32, 1, SHAPE(8), (const int32_t[]){0, 0, 0, -1, 0, -1, -1, -3})};
  const kiln_op_t *ops[] = {&kiln_op_divide, &kiln_op_mod, &kiln_op_floor_mod, &kiln_op_power};
  const int32_t want[4][8] = {
      {0, 0, 0, INT32_MIN, 0, -INT32_MAX, 0, -1}, /* divide */
      {0, 0, 0, 0, 0, 0, 0, 2},                   /* mod */
      {0, 0, 0, 0, 0, 0, 0, -1},                  /* floor_mod */
      {1, 1, 1, 0, 1, 0, 0, 0},                   /* power: 0 ** -1 = 0, 5 ** -3 = 0 */
  };
  for (int i = 0; i < 4; ++i) {
    kiln_tensor_t *out = NULL;
    KILN_ASSERT_OK(run(ops[i], NULL, 2, inputs, &out));
    assert_memory_equal(kiln_tensor_data(out), want[i], sizeof(want[i]));
    kiln_tensor_release(out);
    check_compute(ops[i], NULL, 2, inputs);
  }
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
  /* Every integer width, signed and unsigned, with zero divisors among
   * random ones and the INT_MIN / -1 corner. */
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_INT8,  KILN_DTYPE_INT16,  KILN_DTYPE_INT64,
                                 KILN_DTYPE_UINT8, KILN_DTYPE_UINT16, KILN_DTYPE_UINT32};
  for (size_t t = 0; t < sizeof(dtypes) / sizeof(dtypes[0]); ++t) {
    bool is_signed = kiln_scalar_class(dtypes[t]) == KILN_SCALAR_CLASS_SIGNED;
    kiln_tensor_t *pair[] = {random_tensor(dtypes[t], 2, SHAPE(5, 1), is_signed ? -100 : 0, 100),
                             random_tensor(dtypes[t], 1, SHAPE(9), is_signed ? -2 : 0, 2)};
    for (int i = 0; i < 4; ++i) {
      check_compute(ops[i], NULL, 2, pair);
    }
    kiln_tensor_release(pair[0]);
    kiln_tensor_release(pair[1]);
  }
  kiln_tensor_t *corner[] = {
      tensor_of(KILN_DTYPE_INT64, 1, SHAPE(4), (const int64_t[]){INT64_MIN, INT64_MIN, 0, 9}),
      tensor_of(KILN_DTYPE_INT64, 1, SHAPE(4), (const int64_t[]){-1, 0, -5, 0})};
  for (int i = 0; i < 4; ++i) {
    check_compute(ops[i], NULL, 2, corner);
  }
  kiln_tensor_release(corner[0]);
  kiln_tensor_release(corner[1]);
}

/* Shifts by the width or more give 0 on every path. */
static void test_shift_edges_on_every_path(void **state) {
  (void)state;
  kiln_tensor_t *inputs[] = {
      tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(6), (const uint8_t[]){1, 255, 128, 3, 255, 7}),
      tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(6), (const uint8_t[]){7, 8, 9, 200, 255, 0})};
  const uint8_t left[] = {128, 0, 0, 0, 0, 7};
  const uint8_t right[] = {0, 0, 0, 0, 0, 7};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(&kiln_op_left_shift, NULL, 2, inputs, &out));
  assert_memory_equal(kiln_tensor_data(out), left, sizeof(left));
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run(&kiln_op_right_shift, NULL, 2, inputs, &out));
  assert_memory_equal(kiln_tensor_data(out), right, sizeof(right));
  kiln_tensor_release(out);
  check_compute(&kiln_op_left_shift, NULL, 2, inputs);
  check_compute(&kiln_op_right_shift, NULL, 2, inputs);
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
  kiln_tensor_t *wide[] = {
      tensor_of(KILN_DTYPE_UINT32, 1, SHAPE(4), (const uint32_t[]){1, UINT32_MAX, 5, 9}),
      tensor_of(KILN_DTYPE_UINT32, 1, SHAPE(4), (const uint32_t[]){31, 32, 33, UINT32_MAX})};
  check_compute(&kiln_op_left_shift, NULL, 2, wide);
  check_compute(&kiln_op_right_shift, NULL, 2, wide);
  kiln_tensor_release(wide[0]);
  kiln_tensor_release(wide[1]);
}

/* Dtypes the reference kernels reject are rejected by the rules, naming the
 * operator and the dtype. */
static void test_rejected_dtypes(void **state) {
  (void)state;
  const struct {
    const kiln_op_t *op;
    kiln_dtype_t dtype;
    int num_inputs;
    const char *message;
  } cases[] = {
      {&kiln_op_sigmoid, KILN_DTYPE_INT32, 1,
       "sigmoid: the compute rule does not take dtype int32"},
      {&kiln_op_relu, KILN_DTYPE_UINT8, 1, "nn.relu: the compute rule does not take dtype uint8"},
      {&kiln_op_abs, KILN_DTYPE_BOOL, 1, "abs: the compute rule does not take dtype bool"},
      {&kiln_op_add, KILN_DTYPE_BOOL, 2, "add: the compute rule does not take dtype bool"},
      {&kiln_op_less, KILN_DTYPE_BOOL, 2, "less: the compute rule does not take dtype bool"},
      {&kiln_op_left_shift, KILN_DTYPE_INT32, 2,
       "left_shift: the compute rule does not take dtype int32"},
      {&kiln_op_right_shift, KILN_DTYPE_FLOAT32, 2,
       "right_shift: the compute rule does not take dtype float32"},
  };
  kiln_schedule_target_t target = {512};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    const kiln_type_t *types[] = {ttype(cases[i].dtype, 1, SHAPE(5)),
                                  ttype(cases[i].dtype, 1, SHAPE(5))};
    const kiln_tir_prim_func_t *func = NULL;
    KILN_ASSERT_STATUS(kiln_op_lower(cases[i].op, defaults(cases[i].op), cases[i].num_inputs, types,
                                     &target, &kiln_op_test_arena, "main", &func),
                       UNIMPLEMENTED, cases[i].message);
    /* The reference kernel rejects the same dtype. */
    kiln_tensor_t *inputs[] = {random_tensor(cases[i].dtype, 1, SHAPE(5), 0, 1),
                               random_tensor(cases[i].dtype, 1, SHAPE(5), 0, 1)};
    kiln_tensor_t *out = NULL;
    KILN_ASSERT_STATUS(run(cases[i].op, defaults(cases[i].op), cases[i].num_inputs, inputs, &out),
                       UNIMPLEMENTED, "does not take dtype");
    kiln_tensor_release(inputs[0]);
    kiln_tensor_release(inputs[1]);
  }
}

/* float16 and bfloat16 (which the interpreter does not run) are computed in
 * float32 and cast back; their rules build and lower. */
static void test_half_floats_lower(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_dtype_t halves[] = {KILN_DTYPE_FLOAT16, KILN_DTYPE_BFLOAT16};
  for (int h = 0; h < 2; ++h) {
    for (size_t i = 0; i < sizeof(float_cases) / sizeof(float_cases[0]); ++i) {
      const kiln_type_t *type = ttype(halves[h], 1, SHAPE(5));
      const kiln_tir_prim_func_t *func = NULL;
      KILN_ASSERT_OK(kiln_op_lower(float_cases[i].op, defaults(float_cases[i].op), 1, &type,
                                   &target, &kiln_op_test_arena, "main", &func));
    }
    const kiln_type_t *types[] = {ttype(halves[h], 1, SHAPE(5)), ttype(halves[h], 1, SHAPE(5))};
    const kiln_tir_prim_func_t *func = NULL;
    KILN_ASSERT_OK(kiln_op_lower(&kiln_op_floor_mod, NULL, 2, types, &target, &kiln_op_test_arena,
                                 "main", &func));
    const char *text = lowered_text(&kiln_op_maximum, NULL, 2, types, 512);
    assert_non_null(strstr(text, "T.Cast(\"float32\""));
  }
}

/* ---- golden text ---- */

static void test_default_schedule_shape(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(7, 13)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(13))};
  const char *text = lowered_text(&kiln_op_add, NULL, 2, types, 512);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((7, 13), \"float32\"), p1: T.Buffer((13,), \"float32\"), T_add: "
            "T.Buffer((7, 13), \"float32\")):\n"
            "    for i_j_fused_outer in T.parallel(6):\n"
            "        for i_j_fused_inner in T.vectorized(16):\n"
            "            if i_j_fused_outer * 16 + i_j_fused_inner < 91:\n"
            "                T_add[(i_j_fused_outer * 16 + i_j_fused_inner) // 13, "
            "(i_j_fused_outer * 16 + "
            "i_j_fused_inner) % 13] = p0[(i_j_fused_outer * 16 + i_j_fused_inner) // 13, "
            "(i_j_fused_outer * 16 + i_j_fused_inner) % 13] + p1[(i_j_fused_outer * 16 + "
            "i_j_fused_inner) % 13]\n");
}

/* A unary rule under the default schedule (parallel outer loop, 16 float32
 * lanes, guarded tail) and where's three-way broadcast (short extents stay
 * one parallel loop). */
static void test_golden_unary_and_where(void **state) {
  (void)state;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(19));
  const char *text = lowered_text(&kiln_op_clip, &(kiln_clip_attrs_t){-1.0, 2.0}, 1, &f32, 512);
  assert_string_equal(text,
                      "@T.prim_func\n"
                      "def main(p0: T.Buffer((19,), \"float32\"), T_clip: T.Buffer((19,), "
                      "\"float32\")):\n"
                      "    for i_outer in T.parallel(2):\n"
                      "        for i_inner in T.vectorized(16):\n"
                      "            if i_outer * 16 + i_inner < 19:\n"
                      "                T_clip[i_outer * 16 + i_inner] = T.Select(p0[i_outer * 16 + "
                      "i_inner] < T.float32(-1.0), T.float32(-1.0), T.Select(p0[i_outer * 16 + "
                      "i_inner] > T.float32(2.0), T.float32(2.0), p0[i_outer * 16 + i_inner]))\n");
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_BOOL, 2, SHAPE(2, 1)),
                                ttype(KILN_DTYPE_INT8, 1, SHAPE(3)),
                                ttype(KILN_DTYPE_INT8, 1, SHAPE(1))};
  text = lowered_text(&kiln_op_where, NULL, 3, types, 512);
  assert_string_equal(text,
                      "@T.prim_func\n"
                      "def main(p0: T.Buffer((2, 1), \"bool\"), p1: T.Buffer((3,), \"int8\"), "
                      "p2: T.Buffer((1,), \"int8\"), T_where: T.Buffer((2, 3), \"int8\")):\n"
                      "    for i_j_fused in T.serial(6):\n"
                      "        T_where[i_j_fused // 3, i_j_fused % 3] = T.Select(p0[i_j_fused "
                      "// 3, 0], p1[i_j_fused % 3], p2[0])\n");
}

/* ---- allocation failures ---- */

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  const kiln_type_t *const *types = context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status =
      kiln_op_lower(&kiln_op_power, NULL, 2, types, &target, &arena, "main", &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_INT8, 2, SHAPE(3, 5)),
                                ttype(KILN_DTYPE_INT8, 1, SHAPE(5))};
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, (void *)types) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_compute_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_float32_domains, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_float64, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_special_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_signed_zeros_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_attribute_variants, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_integers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary_float32, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary_special_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary_integers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_integer_power, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bools_and_shifts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_where_broadcasts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_integer_edges_on_every_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shift_edges_on_every_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rejected_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_half_floats_lower, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_schedule_shape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_golden_unary_and_where, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
