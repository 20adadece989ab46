/*
 * Tests of the unary elementwise operators (op/elemwise_unary.c) and of the
 * family's definitions: every entry of KILN_OP_LIST_ELEMWISE has its name, id,
 * input counts and pattern; attribute defaults, printing and validation; the
 * type relation and its errors (bool outputs of isnan and isinf, the bool
 * input of logical_not); and the reference kernel on hand-checked values
 * (the trigonometric and hyperbolic functions, sign, round half to even,
 * the activations of ONNX), on odd shapes against formulas evaluated here, on
 * int64 (including INT64_MIN), narrower integers, float64 and float16, and
 * NaN, and its errors for dtypes it does not take and for tensors that do
 * not match.
 */
#include <math.h>

#include "kiln_op_test.h"
#include "op/impl.h"

/* ---- helpers ---- */

/* C11 has no PI: the constants the expectations use. */
#define PI  3.14159265358979323846
#define LN2 0.69314718055994530942
#define E   2.71828182845904523536

static double float_attr(const kiln_op_t *op, const void *attrs, const char *name) {
  const kiln_attr_field_t *field = kiln_op_attr_field(op, name);
  assert_non_null(field);
  assert_int_equal(field->kind, KILN_ATTR_KIND_FLOAT);
  return *(const double *)((const char *)attrs + field->offset);
}

/* Runs `op` on a fresh output of the input's type; returns the status. */
static kiln_status_t run_same_type(const kiln_op_t *op, const void *attrs, kiln_tensor_t *input,
                                   kiln_tensor_t **out_output) {
  *out_output =
      tensor_zeros(kiln_tensor_dtype(input), kiln_tensor_ndim(input), kiln_tensor_shape(input));
  kiln_kernel_args_t args = {.op = op,
                             .attrs = attrs,
                             .num_inputs = 1,
                             .inputs = &input,
                             .num_outputs = 1,
                             .outputs = out_output};
  return kiln_op_reference_get(op->id)(&args);
}

/* Runs `op` (default attrs unless given) on float32 values of `shape` and
 * checks each output against `expected`. */
static void check_float(const kiln_op_t *op, const void *attrs, int ndim, const int64_t *shape,
                        const float *in, const double *expected) {
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, ndim, shape, in);
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_same_type(op, attrs ? attrs : attrs_with(op, NULL), input, &output));
  const float *out = kiln_tensor_data(output);
  for (int64_t i = 0; i < kiln_tensor_element_count(output); ++i) {
    assert_near(out[i], expected[i]);
  }
  kiln_tensor_release(input);
  kiln_tensor_release(output);
}

static void check_int(const kiln_op_t *op, const void *attrs, int64_t count, const int64_t *in,
                      const int64_t *expected) {
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_INT64, 1, &count, in);
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_same_type(op, attrs ? attrs : attrs_with(op, NULL), input, &output));
  const int64_t *out = kiln_tensor_data(output);
  for (int64_t i = 0; i < count; ++i) {
    assert_int_equal(out[i], expected[i]);
  }
  kiln_tensor_release(input);
  kiln_tensor_release(output);
}

/* ---- the family's definitions ---- */

typedef struct family_entry_t {
  const kiln_op_t *op;
  const char *name;
  kiln_op_id_t id;
} family_entry_t;

static const family_entry_t family[] = {
#define FAMILY_ENTRY_(id, name, symbol) {&symbol, name, KILN_OP_##id},
    KILN_OP_LIST_ELEMWISE(FAMILY_ENTRY_)
#undef FAMILY_ENTRY_
};

static void test_family_definitions(void **state) {
  (void)state;
  assert_int_equal(sizeof(family) / sizeof(family[0]), 62);
  for (size_t i = 0; i < sizeof(family) / sizeof(family[0]); ++i) {
    const kiln_op_t *op = family[i].op;
    assert_string_equal(op->name, family[i].name);
    assert_int_equal(op->id, family[i].id);
    assert_non_null(op->infer_type);
    assert_non_null(kiln_op_reference_get(op->id));
    int unary = op->id < KILN_OP_ADD;
    int where = op->id == KILN_OP_WHERE;
    assert_int_equal(op->min_inputs, unary ? 1 : (where ? 3 : 2));
    assert_int_equal(op->max_inputs, op->min_inputs);
    assert_int_equal(op->pattern, unary ? KILN_OP_PATTERN_ELEMWISE : KILN_OP_PATTERN_BROADCAST);
    assert_true(unary ? op->correct_layout == NULL : op->correct_layout != NULL);
  }
}

/* ---- attributes ---- */

static void test_attribute_defaults(void **state) {
  (void)state;
  const void *leaky = attrs_with(&kiln_op_leaky_relu, NULL);
  assert_true(float_attr(&kiln_op_leaky_relu, leaky, "alpha") == 0.01);
  const void *clip = attrs_with(&kiln_op_clip, NULL);
  assert_true(float_attr(&kiln_op_clip, clip, "a_min") == -3.4028234663852886e+38);
  assert_true(float_attr(&kiln_op_clip, clip, "a_max") == 3.4028234663852886e+38);
  assert_true(float_attr(&kiln_op_clip, clip, "a_max") == (double)3.40282346638528859812e+38f);
  const void *hard = attrs_with(&kiln_op_hard_sigmoid, NULL);
  assert_true(float_attr(&kiln_op_hard_sigmoid, hard, "alpha") == 0.2);
  assert_true(float_attr(&kiln_op_hard_sigmoid, hard, "beta") == 0.5);
  const void *gelu = attrs_with(&kiln_op_gelu, NULL);
  const kiln_attr_field_t *approximate = kiln_op_attr_field(&kiln_op_gelu, "approximate");
  assert_int_equal(approximate->kind, KILN_ATTR_KIND_STRING);
  assert_string_equal(*(const char *const *)((const char *)gelu + approximate->offset), "none");
  /* operators without attributes */
  const kiln_op_t *plain[] = {
      &kiln_op_relu,        &kiln_op_sigmoid,  &kiln_op_tanh,       &kiln_op_erf,
      &kiln_op_exp,         &kiln_op_log,      &kiln_op_sqrt,       &kiln_op_rsqrt,
      &kiln_op_abs,         &kiln_op_floor,    &kiln_op_negative,   &kiln_op_ceil,
      &kiln_op_hard_swish,  &kiln_op_sin,      &kiln_op_cos,        &kiln_op_tan,
      &kiln_op_asin,        &kiln_op_acos,     &kiln_op_atan,       &kiln_op_sinh,
      &kiln_op_cosh,        &kiln_op_asinh,    &kiln_op_acosh,      &kiln_op_atanh,
      &kiln_op_sign,        &kiln_op_round,    &kiln_op_reciprocal, &kiln_op_isnan,
      &kiln_op_logical_not, &kiln_op_softplus, &kiln_op_softsign};
  for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); ++i) {
    assert_int_equal(plain[i]->attrs_size, 0);
    assert_int_equal(plain[i]->num_attr_fields, 0);
    assert_null(attrs_with(plain[i], NULL));
  }
}

static void test_attribute_printing(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  const struct {
    const kiln_op_t *op;
    const char *text;
  } cases[] = {
      {&kiln_op_leaky_relu, "alpha=0.01"},
      {&kiln_op_clip, "a_min=-3.4028234663852886e+38, a_max=3.4028234663852886e+38"},
      {&kiln_op_gelu, "approximate=\"none\""},
      {&kiln_op_hard_sigmoid, "alpha=0.2, beta=0.5"},
      {&kiln_op_isinf, "detect_positive=True, detect_negative=True"},
      {&kiln_op_elu, "alpha=1"},
      {&kiln_op_selu, "alpha=1.6732631921768188, gamma=1.0507010221481323"},
      {&kiln_op_celu, "alpha=1"},
      {&kiln_op_thresholded_relu, "alpha=1"},
      {&kiln_op_shrink, "bias=0, lambd=0.5"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    kiln_strbuf_reset(&sb);
    KILN_ASSERT_OK(kiln_op_attrs_format(cases[i].op, attrs_with(cases[i].op, NULL), &sb));
    assert_string_equal(kiln_strbuf_c_str(&sb), cases[i].text);
  }
  kiln_strbuf_deinitialize(&sb);
}

static void test_attribute_validation(void **state) {
  (void)state;
  void *clip = attrs_with(&kiln_op_clip, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_min", "2", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_max", "1", &kiln_op_test_arena));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_clip, clip), INVALID_ARGUMENT,
                     "clip: attribute a_min (2) must be <= a_max (1)");
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_max", "2", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_validate(&kiln_op_clip, clip));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_min", "nan", &kiln_op_test_arena));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_clip, clip), INVALID_ARGUMENT,
                     "clip: attribute a_min (nan) must be <= a_max (2)");

  void *gelu = attrs_with(&kiln_op_gelu, NULL);
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_gelu, gelu, "approximate", "\"tanh\"", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_validate(&kiln_op_gelu, gelu));
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_gelu, gelu, "approximate", "\"fast\"", &kiln_op_test_arena));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_gelu, gelu), INVALID_ARGUMENT,
                     "nn.gelu: attribute approximate must be \"none\" or \"tanh\", got \"fast\"");

  void *celu = attrs_with(&kiln_op_celu, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_celu, celu, "alpha", "0", &kiln_op_test_arena));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_celu, celu), INVALID_ARGUMENT,
                     "nn.celu: attribute alpha (0) must be a nonzero number");
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_celu, celu, "alpha", "nan", &kiln_op_test_arena));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_celu, celu), INVALID_ARGUMENT,
                     "nn.celu: attribute alpha (nan) must be a nonzero number");
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_celu, celu, "alpha", "-2", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_validate(&kiln_op_celu, celu));
  void *shrink = attrs_with(&kiln_op_shrink, NULL);
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_shrink, shrink, "lambd", "-1", &kiln_op_test_arena));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_shrink, shrink), INVALID_ARGUMENT,
                     "nn.shrink: attribute lambd (-1) must be >= 0");
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_shrink, shrink, "lambd", "0", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_validate(&kiln_op_shrink, shrink));

  void *leaky = attrs_with(&kiln_op_leaky_relu, NULL);
  KILN_ASSERT_STATUS(
      kiln_op_attrs_set_text(&kiln_op_leaky_relu, leaky, "beta", "1", &kiln_op_test_arena),
      INVALID_ARGUMENT, "nn.leaky_relu has no attribute 'beta'");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_set_text(&kiln_op_leaky_relu, leaky, "alpha", "x", &kiln_op_test_arena),
      INVALID_ARGUMENT, "nn.leaky_relu attribute alpha=x");
}

/* ---- type relation ---- */

/* The output dtype of unary `op` on `input`: bool for the tests. */
static kiln_dtype_t unary_output_dtype(const kiln_op_t *op, kiln_dtype_t input) {
  bool tests = op->id == KILN_OP_ISNAN || op->id == KILN_OP_ISINF || op->id == KILN_OP_LOGICAL_NOT;
  return tests ? KILN_DTYPE_BOOL : input;
}

static void test_type_relation(void **state) {
  (void)state;
  const int64_t shape[] = {1, 3, 5, 7};
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_FLOAT32, KILN_DTYPE_INT64, KILN_DTYPE_FLOAT16};
  for (size_t i = 0; i < sizeof(family) / sizeof(family[0]); ++i) {
    const kiln_op_t *op = family[i].op;
    if (op->pattern != KILN_OP_PATTERN_ELEMWISE) {
      continue;
    }
    for (size_t d = 0; d < 3; ++d) {
      kiln_dtype_t dtype = op->id == KILN_OP_LOGICAL_NOT ? KILN_DTYPE_BOOL : dtypes[d];
      for (int ndim = 0; ndim <= 4; ndim += 2) {
        const kiln_type_t *input = ttype(dtype, ndim, shape);
        const kiln_type_t *out = NULL;
        KILN_ASSERT_OK(infer(op, NULL, 1, &input, &out));
        const kiln_type_t *expected = ttype(unary_output_dtype(op, dtype), ndim, shape);
        assert_true(kiln_type_equal(out, expected));
      }
    }
  }
}

static void test_type_relation_errors(void **state) {
  (void)state;
  const int64_t shape[] = {2, 3};
  const kiln_type_t *t = ttype(KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_type_t *two[] = {t, t};
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer(&kiln_op_relu, NULL, 2, two, &out), INVALID_ARGUMENT,
                     "nn.relu: expected 1 inputs, got 2");
  KILN_ASSERT_STATUS(infer(&kiln_op_exp, NULL, 0, two, &out), INVALID_ARGUMENT,
                     "exp: expected 1 inputs, got 0");
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&kiln_op_test_arena, 2, two, &tuple));
  KILN_ASSERT_STATUS(infer(&kiln_op_sigmoid, NULL, 1, &tuple, &out), INVALID_ARGUMENT,
                     "sigmoid: input 0 must be a tensor, not a tuple");
  const kiln_type_t *missing = NULL;
  KILN_ASSERT_STATUS(infer(&kiln_op_abs, NULL, 1, &missing, &out), FAILED_PRECONDITION,
                     "abs: input 0 has no type yet");
  KILN_ASSERT_STATUS(infer(&kiln_op_logical_not, NULL, 1, &t, &out), INVALID_ARGUMENT,
                     "logical_not: x must be bool, got float32 (2, 3)");
  const kiln_type_t *ints = ttype(KILN_DTYPE_INT64, 1, (const int64_t[]){4});
  KILN_ASSERT_STATUS(infer(&kiln_op_logical_not, NULL, 1, &ints, &out), INVALID_ARGUMENT,
                     "logical_not: x must be bool, got int64 (4,)");
}

/* ---- kernels: hand-checked values ---- */

static void test_activations_by_hand(void **state) {
  (void)state;
  const int64_t five[] = {5};
  const float x[] = {-3.0f, -0.5f, 0.0f, 1.0f, 3.0f};
  check_float(&kiln_op_relu, NULL, 1, five, x, (const double[]){0, 0, 0, 1, 3});
  check_float(&kiln_op_leaky_relu, NULL, 1, five, x, (const double[]){-0.03, -0.005, 0, 1, 3});
  check_float(&kiln_op_clip, NULL, 1, five, x, (const double[]){-3, -0.5, 0, 1, 3});
  check_float(&kiln_op_sigmoid, NULL, 1, five, x,
              (const double[]){0.04742587317756678, 0.3775406687981454, 0.5, 0.7310585786300049,
                               0.9525741268224334});
  check_float(&kiln_op_tanh, NULL, 1, five, x,
              (const double[]){-0.9950547536867305, -0.46211715726000974, 0, 0.7615941559557649,
                               0.9950547536867305});
  check_float(&kiln_op_erf, NULL, 1, five, x,
              (const double[]){-0.9999779095030014, -0.5204998778130465, 0, 0.8427007929497149,
                               0.9999779095030014});
  check_float(&kiln_op_gelu, NULL, 1, five, x,
              (const double[]){-0.00404969409489031, -0.15426876936299344, 0, 0.8413447460685429,
                               2.99595030590511});
  /* hard_sigmoid: max(0, min(1, 0.2x + 0.5)) */
  check_float(&kiln_op_hard_sigmoid, NULL, 1, five, x, (const double[]){0, 0.4, 0.5, 0.7, 1});
  /* hard_swish: x * max(0, min(1, x / 6 + 0.5)) */
  check_float(&kiln_op_hard_swish, NULL, 1, five, x,
              (const double[]){0, -0.5 * (0.5 - 0.5 / 6), 0, 1.0 * (0.5 + 1.0 / 6), 3});
}

static void test_math_by_hand(void **state) {
  (void)state;
  const int64_t six[] = {2, 3};
  const float x[] = {-2.5f, -1.5f, -0.0f, 0.25f, 1.5f, 4.0f};
  check_float(&kiln_op_abs, NULL, 2, six, x, (const double[]){2.5, 1.5, 0, 0.25, 1.5, 4});
  check_float(&kiln_op_negative, NULL, 2, six, x, (const double[]){2.5, 1.5, 0, -0.25, -1.5, -4});
  check_float(&kiln_op_floor, NULL, 2, six, x, (const double[]){-3, -2, 0, 0, 1, 4});
  check_float(&kiln_op_ceil, NULL, 2, six, x, (const double[]){-2, -1, 0, 1, 2, 4});
  const float positive[] = {0.25f, 1.0f, 4.0f, 16.0f, 2.0f, 0.0f};
  check_float(&kiln_op_sqrt, NULL, 2, six, positive,
              (const double[]){0.5, 1, 2, 4, 1.4142135623730951, 0});
  check_float(&kiln_op_rsqrt, NULL, 2, six, positive,
              (const double[]){2, 1, 0.5, 0.25, 0.7071067811865476, INFINITY});
  check_float(&kiln_op_log, NULL, 2, six, positive,
              (const double[]){-1.3862943611198906, 0, 1.3862943611198906, 2.772588722239781,
                               0.6931471805599453, -INFINITY});
  check_float(&kiln_op_exp, NULL, 2, six, positive,
              (const double[]){1.2840254166877414, 2.718281828459045, 54.598150033144236,
                               8886110.520507872, 7.38905609893065, 1});
  /* out of range: log and sqrt of negatives are NaN, exp overflows to inf */
  const int64_t three[] = {3};
  const float bad[] = {-1.0f, -4.0f, 100.0f};
  check_float(&kiln_op_log, NULL, 1, three, bad, (const double[]){NAN, NAN, 4.605170185988092});
  check_float(&kiln_op_sqrt, NULL, 1, three, bad, (const double[]){NAN, NAN, 10});
  check_float(&kiln_op_exp, NULL, 1, three, bad,
              (const double[]){0.36787944117144233, 0.01831563888873418, INFINITY});
}

static void test_attributes_reach_the_kernel(void **state) {
  (void)state;
  const int64_t five[] = {5};
  const float x[] = {-3.0f, -0.5f, 0.0f, 1.0f, 3.0f};
  void *leaky = attrs_with(&kiln_op_leaky_relu, NULL);
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_leaky_relu, leaky, "alpha", "0.5", &kiln_op_test_arena));
  check_float(&kiln_op_leaky_relu, leaky, 1, five, x, (const double[]){-1.5, -0.25, 0, 1, 3});
  void *clip = attrs_with(&kiln_op_clip, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_min", "-1", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_max", "0.75", &kiln_op_test_arena));
  check_float(&kiln_op_clip, clip, 1, five, x, (const double[]){-1, -0.5, 0, 0.75, 0.75});
  void *gelu = attrs_with(&kiln_op_gelu, NULL);
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_gelu, gelu, "approximate", "\"tanh\"", &kiln_op_test_arena));
  check_float(&kiln_op_gelu, gelu, 1, five, x,
              (const double[]){-0.0036373920817729943, -0.15428599017485606, 0, 0.8411919906082768,
                               2.996362607918227});
  void *hard = attrs_with(&kiln_op_hard_sigmoid, NULL);
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_hard_sigmoid, hard, "alpha", "0.5", &kiln_op_test_arena));
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_hard_sigmoid, hard, "beta", "0.25", &kiln_op_test_arena));
  check_float(&kiln_op_hard_sigmoid, hard, 1, five, x, (const double[]){0, 0, 0.25, 0.75, 1});
}

static void test_nan_propagates(void **state) {
  (void)state;
  const int64_t one[] = {1};
  const float x[] = {NAN};
  const kiln_op_t *ops[] = {&kiln_op_relu, &kiln_op_leaky_relu, &kiln_op_clip, &kiln_op_sigmoid,
                            &kiln_op_abs,  &kiln_op_floor,      &kiln_op_exp};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    check_float(ops[i], NULL, 1, one, x, (const double[]){NAN});
  }
}

/* ---- kernels: odd shapes against formulas ---- */

static double sigmoid_formula(double x) {
  return 1.0 / (1.0 + exp(-x));
}

static void test_odd_shapes(void **state) {
  (void)state;
  const int64_t shapes[][4] = {{1, 3, 5, 7}, {13, 1, 1, 1}, {7, 5, 1, 1}};
  const int ranks[] = {4, 1, 2};
  float x[105];
  double expected[105];
  for (int s = 0; s < 3; ++s) {
    int64_t count = 1;
    for (int d = 0; d < ranks[s]; ++d) {
      count *= shapes[s][d];
    }
    for (int64_t i = 0; i < count; ++i) {
      x[i] = (float)(i % 11) * 0.7f - 3.3f;
    }
    for (int64_t i = 0; i < count; ++i) {
      expected[i] = sigmoid_formula(x[i]);
    }
    check_float(&kiln_op_sigmoid, NULL, ranks[s], shapes[s], x, expected);
    for (int64_t i = 0; i < count; ++i) {
      expected[i] = x[i] * 0.5 * (1.0 + erf(x[i] / sqrt(2.0)));
    }
    check_float(&kiln_op_gelu, NULL, ranks[s], shapes[s], x, expected);
    for (int64_t i = 0; i < count; ++i) {
      expected[i] = x[i] > 0 ? x[i] : 0.01 * x[i];
    }
    check_float(&kiln_op_leaky_relu, NULL, ranks[s], shapes[s], x, expected);
  }
  /* rank 0 */
  const float scalar[] = {-2.0f};
  check_float(&kiln_op_abs, NULL, 0, NULL, scalar, (const double[]){2});
  check_float(&kiln_op_tanh, NULL, 0, NULL, scalar, (const double[]){-0.9640275800758169});
  /* zero elements */
  const int64_t empty[] = {0, 3};
  check_float(&kiln_op_exp, NULL, 2, empty, NULL, NULL);
}

/* ---- kernels: int64 ---- */

static void test_int64(void **state) {
  (void)state;
  const int64_t x[] = {INT64_MIN, -7, -1, 0, 2, INT64_MAX};
  check_int(&kiln_op_abs, NULL, 6, x, (const int64_t[]){INT64_MIN, 7, 1, 0, 2, INT64_MAX});
  check_int(&kiln_op_negative, NULL, 6, x, (const int64_t[]){INT64_MIN, 7, 1, 0, -2, -INT64_MAX});
  check_int(&kiln_op_relu, NULL, 6, x, (const int64_t[]){0, 0, 0, 0, 2, INT64_MAX});
  /* default bounds are beyond int64: nothing is clipped */
  check_int(&kiln_op_clip, NULL, 6, x, x);
  void *clip = attrs_with(&kiln_op_clip, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_min", "-2.5", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_max", "1.5", &kiln_op_test_arena));
  check_int(&kiln_op_clip, clip, 6, x, (const int64_t[]){-2, -2, -1, 0, 1, 1});
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_min", "-1e300", &kiln_op_test_arena));
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_clip, clip, "a_max", "1e300", &kiln_op_test_arena));
  check_int(&kiln_op_clip, clip, 6, x, x);
}

/* ---- kernels: errors ---- */

static void test_kernel_errors(void **state) {
  (void)state;
  const int64_t shape[] = {2, 3};
  kiln_tensor_t *ints = tensor_zeros(KILN_DTYPE_INT64, 2, shape);
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_STATUS(run_same_type(&kiln_op_exp, NULL, ints, &output), UNIMPLEMENTED,
                     "exp: the reference kernel does not take dtype int64");
  kiln_tensor_release(output);
  KILN_ASSERT_STATUS(
      run_same_type(&kiln_op_leaky_relu, attrs_with(&kiln_op_leaky_relu, NULL), ints, &output),
      UNIMPLEMENTED, "nn.leaky_relu: the reference kernel does not take dtype int64");
  kiln_tensor_release(output);
  kiln_tensor_t *bools = tensor_zeros(KILN_DTYPE_BOOL, 2, shape);
  KILN_ASSERT_STATUS(run_same_type(&kiln_op_relu, NULL, bools, &output), UNIMPLEMENTED,
                     "nn.relu: the reference kernel does not take dtype bool");
  kiln_tensor_release(output);
  kiln_tensor_release(bools);
  KILN_ASSERT_STATUS(run_same_type(&kiln_op_clip, NULL, ints, &output), INVALID_ARGUMENT,
                     "clip: the kernel needs the operator's attributes");
  kiln_tensor_release(output);

  /* an output that does not match the input */
  kiln_tensor_t *floats = tensor_zeros(KILN_DTYPE_FLOAT32, 2, shape);
  const int64_t other[] = {3, 2};
  kiln_tensor_t *wrong_shape = tensor_zeros(KILN_DTYPE_FLOAT32, 2, other);
  kiln_tensor_t *inputs[] = {floats, floats};
  kiln_tensor_t *outputs[] = {wrong_shape, ints};
  kiln_kernel_args_t args = {
      .op = &kiln_op_tanh, .num_inputs = 1, .inputs = inputs, .num_outputs = 1, .outputs = outputs};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_tanh.id)(&args), INVALID_ARGUMENT,
                     "tanh: output float32 (3, 2) does not match input float32 (2, 3)");
  args.outputs = outputs + 1;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_tanh.id)(&args), INVALID_ARGUMENT,
                     "tanh: output int64 (2, 3) does not match input float32 (2, 3)");
  args.num_inputs = 2;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_tanh.id)(&args), INVALID_ARGUMENT,
                     "tanh: expected 1 input and 1 output, got 2 and 1");
  kiln_tensor_release(floats);
  kiln_tensor_release(wrong_shape);
  kiln_tensor_release(ints);
}

/* ---- the operators added for ONNX ---- */

/* Runs `op` on `count` values of `dtype` into an output of `out_dtype` and
 * compares its bytes with `expected`. */
static void check_bytes(const kiln_op_t *op, const void *attrs, kiln_dtype_t dtype, int64_t count,
                        const void *in, kiln_dtype_t out_dtype, const void *expected) {
  kiln_tensor_t *input = tensor_of(dtype, 1, &count, in);
  kiln_tensor_t *output = tensor_zeros(out_dtype, 1, &count);
  kiln_kernel_args_t args = {.op = op,
                             .attrs = attrs ? attrs : attrs_with(op, NULL),
                             .num_inputs = 1,
                             .inputs = &input,
                             .num_outputs = 1,
                             .outputs = &output};
  KILN_ASSERT_OK(kiln_op_reference_get(op->id)(&args));
  assert_memory_equal(kiln_tensor_data(output), expected,
                      (size_t)count * kiln_dtype_size(out_dtype));
  kiln_tensor_release(input);
  kiln_tensor_release(output);
}

static void test_trigonometry_by_hand(void **state) {
  (void)state;
  const int64_t five[] = {5};
  const float x[] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f};
  check_float(&kiln_op_sin, NULL, 1, five, x,
              (const double[]){-0.8414709848078965, -0.479425538604203, 0, 0.479425538604203,
                               0.8414709848078965});
  check_float(&kiln_op_cos, NULL, 1, five, x,
              (const double[]){0.5403023058681398, 0.8775825618903728, 1, 0.8775825618903728,
                               0.5403023058681398});
  check_float(&kiln_op_tan, NULL, 1, five, x,
              (const double[]){-1.5574077246549023, -0.5463024898437905, 0, 0.5463024898437905,
                               1.5574077246549023});
  check_float(&kiln_op_asin, NULL, 1, five, x,
              (const double[]){-PI / 2, -PI / 6, 0, PI / 6, PI / 2});
  check_float(&kiln_op_acos, NULL, 1, five, x, (const double[]){PI, 2 * PI / 3, PI / 2, PI / 3, 0});
  check_float(&kiln_op_atan, NULL, 1, five, x,
              (const double[]){-PI / 4, -0.4636476090008061, 0, 0.4636476090008061, PI / 4});
  check_float(&kiln_op_sinh, NULL, 1, five, x,
              (const double[]){-1.1752011936438014, -0.5210953054937474, 0, 0.5210953054937474,
                               1.1752011936438014});
  check_float(&kiln_op_cosh, NULL, 1, five, x,
              (const double[]){1.5430806348152437, 1.1276259652063807, 1, 1.1276259652063807,
                               1.5430806348152437});
  check_float(&kiln_op_asinh, NULL, 1, five, x,
              (const double[]){-0.881373587019543, -0.48121182505960347, 0, 0.48121182505960347,
                               0.881373587019543});
  /* domains: asin(2), acosh(0.5) and atanh(2) are NaN; atanh(1) is inf */
  const float edges[] = {-0.5f, 0.0f, 0.5f, 1.0f, 2.0f};
  check_float(&kiln_op_atanh, NULL, 1, five, edges,
              (const double[]){-0.5493061443340548, 0, 0.5493061443340548, INFINITY, NAN});
  check_float(&kiln_op_asin, NULL, 1, five, edges,
              (const double[]){-PI / 6, 0, PI / 6, PI / 2, NAN});
  const float cosh_args[] = {1.0f, 2.0f, 10.0f, 0.5f, -1.0f};
  check_float(&kiln_op_acosh, NULL, 1, five, cosh_args,
              (const double[]){0, 1.3169578969248166, 2.993222846126381, NAN, NAN});
}

static void test_sign_round_reciprocal(void **state) {
  (void)state;
  const int64_t five[] = {5};
  check_float(&kiln_op_sign, NULL, 1, five, (const float[]){-2.5f, -0.0f, 0.0f, 3.0f, NAN},
              (const double[]){-1, 0, 0, 1, NAN});
  /* ONNX test_round: halves go to the even neighbour */
  const int64_t fifteen[] = {15};
  check_float(&kiln_op_round, NULL, 1, fifteen,
              (const float[]){0.1f, 0.5f, 0.9f, 1.2f, 1.5f, 1.8f, 2.3f, 2.5f, 2.7f, -1.1f, -1.5f,
                              -1.9f, -2.2f, -2.5f, -2.8f},
              (const double[]){0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3});
  check_float(&kiln_op_reciprocal, NULL, 1, five, (const float[]){2, -4, 0.5f, 0, -0.0f},
              (const double[]){0.5, -0.25, 2, INFINITY, -INFINITY});
  check_int(&kiln_op_sign, NULL, 5, (const int64_t[]){INT64_MIN, -3, 0, 9, INT64_MAX},
            (const int64_t[]){-1, -1, 0, 1, 1});
  check_bytes(&kiln_op_sign, NULL, KILN_DTYPE_INT32, 3, (const int32_t[]){-7, 0, INT32_MAX},
              KILN_DTYPE_INT32, (const int32_t[]){-1, 0, 1});
}

static void test_tests_and_logic(void **state) {
  (void)state;
  const float x[] = {NAN, 1.0f, INFINITY, -INFINITY, -0.0f};
  check_bytes(&kiln_op_isnan, NULL, KILN_DTYPE_FLOAT32, 5, x, KILN_DTYPE_BOOL,
              (const uint8_t[]){1, 0, 0, 0, 0});
  check_bytes(&kiln_op_isinf, NULL, KILN_DTYPE_FLOAT32, 5, x, KILN_DTYPE_BOOL,
              (const uint8_t[]){0, 0, 1, 1, 0});
  void *positive = attrs_with(&kiln_op_isinf, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_isinf, positive, "detect_negative", "False",
                                        &kiln_op_test_arena));
  check_bytes(&kiln_op_isinf, positive, KILN_DTYPE_FLOAT32, 5, x, KILN_DTYPE_BOOL,
              (const uint8_t[]){0, 0, 1, 0, 0});
  void *negative = attrs_with(&kiln_op_isinf, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_isinf, negative, "detect_positive", "False",
                                        &kiln_op_test_arena));
  check_bytes(&kiln_op_isinf, negative, KILN_DTYPE_FLOAT32, 5, x, KILN_DTYPE_BOOL,
              (const uint8_t[]){0, 0, 0, 1, 0});
  /* float64 keeps a NaN float32 could not; integers are never NaN or inf */
  check_bytes(&kiln_op_isnan, NULL, KILN_DTYPE_FLOAT64, 2, (const double[]){NAN, 1e300},
              KILN_DTYPE_BOOL, (const uint8_t[]){1, 0});
  check_bytes(&kiln_op_isinf, NULL, KILN_DTYPE_FLOAT64, 2, (const double[]){1e300, -INFINITY},
              KILN_DTYPE_BOOL, (const uint8_t[]){0, 1});
  check_bytes(&kiln_op_isinf, NULL, KILN_DTYPE_INT64, 2, (const int64_t[]){INT64_MAX, 0},
              KILN_DTYPE_BOOL, (const uint8_t[]){0, 0});
  check_bytes(&kiln_op_logical_not, NULL, KILN_DTYPE_BOOL, 4, (const uint8_t[]){0, 1, 1, 0},
              KILN_DTYPE_BOOL, (const uint8_t[]){1, 0, 0, 1});
}

static void test_onnx_activations_by_hand(void **state) {
  (void)state;
  const int64_t five[] = {5};
  /* softplus = log(1 + e^x), stable: e^1000 overflows a double, softplus(1000) does not */
  check_float(
      &kiln_op_softplus, NULL, 1, five, (const float[]){-1, 0, 1, 1000, -20},
      (const double[]){0.31326168751822286, LN2, 1.3132616875182228, 1000, 2.061153620314381e-09});
  check_float(&kiln_op_softsign, NULL, 1, five, (const float[]){-3, 0, 1, 0.5f, -0.25f},
              (const double[]){-0.75, 0, 0.5, 1.0 / 3, -0.2});
  /* elu = alpha (e^x - 1) below 0 */
  check_float(&kiln_op_elu, NULL, 1, five, (const float[]){-1, 0, 2, -20, 0.5f},
              (const double[]){-0.6321205588285577, 0, 2, -0.9999999979388464, 0.5});
  void *elu = attrs_with(&kiln_op_elu, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_elu, elu, "alpha", "2", &kiln_op_test_arena));
  check_float(&kiln_op_elu, elu, 1, five, (const float[]){-1, 0, 2, -20, 0.5f},
              (const double[]){-1.2642411176571153, 0, 2, -1.9999999958776927, 0.5});
  /* selu defaults; ONNX test_selu_example: alpha 2, gamma 3 */
  const double gamma = 1.0507010221481323;
  check_float(&kiln_op_selu, NULL, 1, five, (const float[]){-1, 0, 1, -3, 2},
              (const double[]){-1.1113307412864784, 0, gamma, -1.670568733989153, 2 * gamma});
  void *selu = attrs_with(&kiln_op_selu, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_selu, selu, "alpha", "2", &kiln_op_test_arena));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_selu, selu, "gamma", "3", &kiln_op_test_arena));
  check_float(&kiln_op_selu, selu, 1, five, (const float[]){-1, 0, 1, -3, 2},
              (const double[]){-3.7927233529713463, 0, 3, 6 * (exp(-3.0) - 1), 6});
  /* celu = max(0, x) + min(0, alpha (e^(x / alpha) - 1)) */
  check_float(&kiln_op_celu, NULL, 1, five, (const float[]){-1, 0, 2, -20, 0.5f},
              (const double[]){-0.6321205588285577, 0, 2, -0.9999999979388464, 0.5});
  void *celu = attrs_with(&kiln_op_celu, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_celu, celu, "alpha", "2", &kiln_op_test_arena));
  check_float(&kiln_op_celu, celu, 1, five, (const float[]){-1, 0, 3, -2, 0.5f},
              (const double[]){-0.7869386805747332, 0, 3, 2 * (exp(-1.0) - 1), 0.5});
  /* thresholded_relu: x > alpha ? x : 0; NaN gives 0 */
  check_float(&kiln_op_thresholded_relu, NULL, 1, five, (const float[]){0.5f, 1, 1.5f, -2, NAN},
              (const double[]){0, 0, 1.5, 0, 0});
  void *thresholded = attrs_with(&kiln_op_thresholded_relu, NULL);
  KILN_ASSERT_OK(kiln_op_attrs_set_text(&kiln_op_thresholded_relu, thresholded, "alpha", "2",
                                        &kiln_op_test_arena));
  check_float(&kiln_op_thresholded_relu, thresholded, 1, five,
              (const float[]){-1.5f, 0, 1.2f, 2, 2.2f}, (const double[]){0, 0, 0, 0, 2.2f});
  /* shrink: ONNX test_shrink_hard and test_shrink_soft (lambd 1.5) */
  const int64_t six[] = {6};
  check_float(&kiln_op_shrink, NULL, 1, six, (const float[]){-1, -0.5f, 0, 0.4f, 0.6f, NAN},
              (const double[]){-1, 0, 0, 0, 0.6f, 0});
  void *shrink = attrs_with(&kiln_op_shrink, NULL);
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_shrink, shrink, "lambd", "1.5", &kiln_op_test_arena));
  check_float(&kiln_op_shrink, shrink, 1, five, (const float[]){-2, -1, 0, 1, 2},
              (const double[]){-2, 0, 0, 0, 2});
  KILN_ASSERT_OK(
      kiln_op_attrs_set_text(&kiln_op_shrink, shrink, "bias", "1.5", &kiln_op_test_arena));
  check_float(&kiln_op_shrink, shrink, 1, five, (const float[]){-2, -1, 0, 1, 2},
              (const double[]){-0.5, 0, 0, 0, 0.5});
}

static void test_other_dtypes(void **state) {
  (void)state;
  /* float64 is computed and stored in double, never rounded to float */
  check_bytes(&kiln_op_sin, NULL, KILN_DTYPE_FLOAT64, 2, (const double[]){1.0, 0.1},
              KILN_DTYPE_FLOAT64, (const double[]){sin(1.0), sin(0.1)});
  check_bytes(&kiln_op_exp, NULL, KILN_DTYPE_FLOAT64, 1, (const double[]){1.0}, KILN_DTYPE_FLOAT64,
              (const double[]){E});
  /* float16: sqrt(4) = 2 (0x4400 -> 0x4000), -1.5 (0xbe00) rounds to -2 (0xc000) */
  check_bytes(&kiln_op_sqrt, NULL, KILN_DTYPE_FLOAT16, 1, (const uint16_t[]){0x4400},
              KILN_DTYPE_FLOAT16, (const uint16_t[]){0x4000});
  check_bytes(&kiln_op_round, NULL, KILN_DTYPE_FLOAT16, 1, (const uint16_t[]){0xbe00},
              KILN_DTYPE_FLOAT16, (const uint16_t[]){0xc000});
  /* narrower signed integers wrap as int64 does */
  check_bytes(&kiln_op_abs, NULL, KILN_DTYPE_INT8, 4, (const int8_t[]){-128, -5, 0, 7},
              KILN_DTYPE_INT8, (const int8_t[]){-128, 5, 0, 7});
  check_bytes(&kiln_op_negative, NULL, KILN_DTYPE_INT16, 3, (const int16_t[]){INT16_MIN, 5, 0},
              KILN_DTYPE_INT16, (const int16_t[]){INT16_MIN, -5, 0});
  check_bytes(&kiln_op_relu, NULL, KILN_DTYPE_INT32, 3, (const int32_t[]){-9, 0, 9},
              KILN_DTYPE_INT32, (const int32_t[]){0, 0, 9});
}

static void test_new_kernel_errors(void **state) {
  (void)state;
  const int64_t two[] = {2};
  kiln_tensor_t *ints = tensor_zeros(KILN_DTYPE_INT64, 1, two);
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_STATUS(run_same_type(&kiln_op_sin, NULL, ints, &output), UNIMPLEMENTED,
                     "sin: the reference kernel does not take dtype int64");
  kiln_tensor_release(output);
  kiln_tensor_t *bytes = tensor_zeros(KILN_DTYPE_UINT8, 1, two);
  KILN_ASSERT_STATUS(run_same_type(&kiln_op_sign, NULL, bytes, &output), UNIMPLEMENTED,
                     "sign: the reference kernel does not take dtype uint8");
  kiln_tensor_release(output);
  kiln_tensor_release(bytes);
  /* logical_not's kernel refuses what its relation refuses */
  kiln_tensor_t *bools = tensor_zeros(KILN_DTYPE_BOOL, 1, two);
  kiln_tensor_t *inputs[] = {ints};
  kiln_tensor_t *outputs[] = {bools};
  kiln_kernel_args_t args = {.op = &kiln_op_logical_not,
                             .num_inputs = 1,
                             .inputs = inputs,
                             .num_outputs = 1,
                             .outputs = outputs};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_logical_not.id)(&args), UNIMPLEMENTED,
                     "logical_not: the reference kernel does not take dtype int64");
  /* a bool-valued operator wants a bool output */
  kiln_tensor_t *floats = tensor_zeros(KILN_DTYPE_FLOAT32, 1, two);
  inputs[0] = floats;
  outputs[0] = floats;
  args.op = &kiln_op_isnan;
  KILN_ASSERT_STATUS(
      kiln_op_reference_get(kiln_op_isnan.id)(&args), INVALID_ARGUMENT,
      "isnan: output float32 (2,) does not match input float32 (2,) (the output is bool)");
  outputs[0] = bools;
  KILN_ASSERT_OK(kiln_op_reference_get(kiln_op_isnan.id)(&args));
  args.op = &kiln_op_isinf;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_isinf.id)(&args), INVALID_ARGUMENT,
                     "isinf: the kernel needs the operator's attributes");
  kiln_tensor_release(floats);
  kiln_tensor_release(bools);
  kiln_tensor_release(ints);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_family_definitions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attribute_defaults, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attribute_printing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attribute_validation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_type_relation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_type_relation_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_activations_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_math_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attributes_reach_the_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nan_propagates, setup, teardown),
      cmocka_unit_test_setup_teardown(test_odd_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_int64, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trigonometry_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sign_round_reciprocal, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tests_and_logic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_onnx_activations_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_kernel_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
