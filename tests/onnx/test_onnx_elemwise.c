/*
 * The elementwise converters on the interpreter: every ONNX operator of the
 * unary and binary lookup tables becomes exactly one call of its registry
 * operator, the activations carry their attributes (and ONNX's defaults)
 * across, and IsInf, Mod and BitShift pick or fill their operator from
 * their attributes. Inputs are parameters with values, so the calls run on
 * the interpreter rather than folding at import; the expected numbers are
 * written by hand (or, for the trigonometric family, by libm, since those
 * tests check the mapping, not the kernels).
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

/* One node `op_type` over input x of `dtype`, run; returns the run. */
static void run_unary(const char *op_type, int64_t opset, kiln_dtype_t dtype, int count,
                      const double *x, kiln_dtype_t out_dtype, or_run_t *run) {
  ob_t ob;
  ob_init(&ob, opset);
  kiln_tensor_t *value = or_tensor(dtype, 1, OB_DIMS(count), x);
  or_input(&ob, "x", value);
  ob_node(&ob, op_type, "n", "x", "y");
  or_output(&ob, "y", out_dtype);
  or_run(&ob, 1, &value, run);
  kiln_tensor_release(value);
  ob_free(&ob);
}

typedef struct unary_case_t {
  const char *op_type;
  const kiln_op_t *op;
  double (*reference)(double);
} unary_case_t;

static void test_unary_math(void **state) {
  (void)state;
  static const unary_case_t cases[] = {
      {"Sin", &kiln_op_sin, sin},       {"Cos", &kiln_op_cos, cos},
      {"Tan", &kiln_op_tan, tan},       {"Asin", &kiln_op_asin, asin},
      {"Acos", &kiln_op_acos, acos},    {"Atan", &kiln_op_atan, atan},
      {"Sinh", &kiln_op_sinh, sinh},    {"Cosh", &kiln_op_cosh, cosh},
      {"Asinh", &kiln_op_asinh, asinh}, {"Atanh", &kiln_op_atanh, atanh},
  };
  const double x[3] = {-0.5, 0.25, 0.75};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    or_run_t run;
    run_unary(cases[i].op_type, 13, KILN_DTYPE_FLOAT32, 3, x, KILN_DTYPE_FLOAT32, &run);
    assert_int_equal(om_count_calls(run.module, cases[i].op), 1);
    assert_int_equal(om_count_calls(run.module, NULL), 1);
    double expected[3];
    for (int k = 0; k < 3; ++k) {
      expected[k] = cases[i].reference(x[k]);
    }
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), expected, 1e-6);
    or_run_free(&run);
  }
  or_run_t run;
  run_unary("Acosh", 13, KILN_DTYPE_FLOAT64, 2, OR_D(1, 2), KILN_DTYPE_FLOAT64, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT64, 1, OB_DIMS(2), OR_D(0, acosh(2.0)), 1e-15);
  or_run_free(&run);
}

/* Operators that are one registry operator each, with hand-written numbers. */
static void test_unary_one_operator(void **state) {
  (void)state;
  or_run_t run;
  run_unary("Round", 11, KILN_DTYPE_FLOAT32, 5, OR_D(0.5, 1.5, 2.5, -1.5, -0.4), KILN_DTYPE_FLOAT32,
            &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_round), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(5), OR_D(0, 2, 2, -2, -0.0), 0.0);
  or_run_free(&run);
  run_unary("Sign", 13, KILN_DTYPE_INT32, 3, OR_D(-7, 0, 4), KILN_DTYPE_INT32, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_sign), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 1, OB_DIMS(3), OR_D(-1, 0, 1), 0.0);
  or_run_free(&run);
  run_unary("Reciprocal", 13, KILN_DTYPE_FLOAT32, 3, OR_D(2, -4, 0), KILN_DTYPE_FLOAT32, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_reciprocal), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(0.5, -0.25, INFINITY), 0.0);
  or_run_free(&run);
  run_unary("IsNaN", 13, KILN_DTYPE_FLOAT32, 3, OR_D(NAN, 1, INFINITY), KILN_DTYPE_BOOL, &run);
  or_assert(run.outputs[0], KILN_DTYPE_BOOL, 1, OB_DIMS(3), OR_D(1, 0, 0), 0.0);
  or_run_free(&run);
  run_unary("Softplus", 13, KILN_DTYPE_FLOAT32, 3, OR_D(0, 1000, -1), KILN_DTYPE_FLOAT32, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_softplus), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(log(2.0), 1000, log1p(exp(-1))),
            1e-6);
  or_run_free(&run);
  run_unary("Softsign", 13, KILN_DTYPE_FLOAT32, 2, OR_D(1, -3), KILN_DTYPE_FLOAT32, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0.5, -0.75), 1e-7);
  or_run_free(&run);
  run_unary("Not", 13, KILN_DTYPE_BOOL, 2, OR_D(0, 1), KILN_DTYPE_BOOL, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_logical_not), 1);
  or_assert(run.outputs[0], KILN_DTYPE_BOOL, 1, OB_DIMS(2), OR_D(1, 0), 0.0);
  or_run_free(&run);
}

/* And, Or, Xor: the logical operators, broadcasting (2, 1) against (2,). */
static void test_logical_binary(void **state) {
  (void)state;
  const char *ops[3] = {"And", "Or", "Xor"};
  const kiln_op_t *registry[3] = {&kiln_op_logical_and, &kiln_op_logical_or, &kiln_op_logical_xor};
  const double expected[3][4] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}};
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_BOOL, 2, OB_DIMS(2, 1), OR_D(0, 1)),
                              or_tensor(KILN_DTYPE_BOOL, 1, OB_DIMS(2), OR_D(0, 1))};
  for (int k = 0; k < 3; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "a", values[0]);
    or_input(&ob, "b", values[1]);
    ob_node(&ob, ops[k], "n", "a,b", "y");
    or_output(&ob, "y", KILN_DTYPE_BOOL);
    or_run_t run;
    or_run(&ob, 2, values, &run);
    assert_int_equal(om_count_calls(run.module, registry[k]), 1);
    or_assert(run.outputs[0], KILN_DTYPE_BOOL, 2, OB_DIMS(2, 2), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(values[0]);
  kiln_tensor_release(values[1]);
}

/* ---- attributes ---- */

typedef struct activation_case_t {
  const char *op_type;
  const char *attrs[2]; /* NULL: ONNX's default */
  float values[2];
  double expected[4];
} activation_case_t;

/* x = (-2, -0.25, 0.25, 2) through each activation, with and without
 * attributes. */
static void test_activations(void **state) {
  (void)state;
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  const activation_case_t cases[] = {
      {"LeakyRelu", {NULL, NULL}, {0, 0}, {-0.02, -0.0025, 0.25, 2}},
      {"LeakyRelu", {"alpha", NULL}, {0.5f, 0}, {-1, -0.125, 0.25, 2}},
      {"HardSigmoid", {"alpha", "beta"}, {0.25f, 0.25f}, {0, 0.1875, 0.3125, 0.75}},
      {"Elu", {"alpha", NULL}, {2, 0}, {2 * expm1(-2), 2 * expm1(-0.25), 0.25, 2}},
      {"Selu",
       {NULL, NULL},
       {0, 0},
       {selu_g * selu_a * expm1(-2), selu_g * selu_a * expm1(-0.25), selu_g * 0.25, selu_g * 2}},
      {"Celu", {"alpha", NULL}, {2, 0}, {2 * expm1(-1), 2 * expm1(-0.125), 0.25, 2}},
      {"ThresholdedRelu", {"alpha", NULL}, {0.5f, 0}, {0, 0, 0, 2}},
      {"ThresholdedRelu", {NULL, NULL}, {0, 0}, {0, 0, 0, 2}},
      {"Shrink", {"bias", "lambd"}, {0.5f, 1}, {-1.5, 0, 0, 1.5}},
      {"Shrink", {NULL, NULL}, {0, 0}, {-2, 0, 0, 2}},
  };
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(-2, -0.25, 0.25, 2));
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, cases[i].op_type, "n", "x", "y");
    for (int a = 0; a < 2; ++a) {
      if (cases[i].attrs[a]) {
        ob_attr_float(&ob, node, cases[i].attrs[a], cases[i].values[a]);
      }
    }
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, NULL), 1);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), cases[i].expected, 1e-6);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

static void test_activation_errors(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(2));
  Onnx__NodeProto *node = ob_node(&ob, "Celu", "celu0", "x", "y");
  ob_attr_float(&ob, node, "alpha", 0);
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"celu0\" (Celu): nn.celu: attribute alpha (0) must be a nonzero");
  node->n_attribute = 0;
  ob_attr_int(&ob, node, "alpha", 2);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"celu0\" (Celu): attribute alpha is INT; expected FLOAT");
  ob_free(&ob);
}

static void test_isinf_flags(void **state) {
  (void)state;
  kiln_tensor_t *x =
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(INFINITY, -INFINITY, NAN, 1));
  const double expected[3][4] = {{1, 1, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}};
  for (int k = 0; k < 3; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, "IsInf", "n", "x", "y");
    if (k == 1) {
      ob_attr_int(&ob, node, "detect_positive", 0);
    } else if (k == 2) {
      ob_attr_int(&ob, node, "detect_negative", 0);
    }
    or_output(&ob, "y", KILN_DTYPE_BOOL);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_isinf), 1);
    or_assert(run.outputs[0], KILN_DTYPE_BOOL, 1, OB_DIMS(4), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* Mod(a, b) with fmod set to `fmod` (-1: absent). */
static kiln_status_t import_mod(kiln_dtype_t dtype, int64_t fmod, kiln_tensor_t **values,
                                or_run_t *run) {
  ob_t ob;
  ob_init(&ob, 13);
  values[0] = or_tensor(dtype, 1, OB_DIMS(4), OR_D(-7, 7, -7.5, 4));
  values[1] = or_tensor(dtype, 1, OB_DIMS(4), OR_D(3, -3, 2, -2));
  or_input(&ob, "a", values[0]);
  or_input(&ob, "b", values[1]);
  Onnx__NodeProto *node = ob_node(&ob, "Mod", "mod0", "a,b", "y");
  if (fmod >= 0) {
    ob_attr_int(&ob, node, "fmod", fmod);
  }
  or_output(&ob, "y", dtype);
  kiln_onnx_import_options_t options = {.num_input_values = 2, .input_values = values};
  kiln_status_t status = ob_import(&ob, &options, kiln_allocator_system(), &run->module);
  if (!status) {
    KILN_ASSERT_OK(kiln_interp_run(run->module, "main", 2, values, kiln_allocator_system(),
                                   &run->num_outputs, &run->outputs));
  }
  ob_free(&ob);
  return status;
}

static void test_mod_forms(void **state) {
  (void)state;
  kiln_tensor_t *values[2];
  or_run_t run;
  /* fmod 0 (the default): the divisor's sign, as Python's % (-7.5 is -7 in int64) */
  KILN_ASSERT_OK(import_mod(KILN_DTYPE_INT64, -1, values, &run));
  assert_int_equal(om_count_calls(run.module, &kiln_op_floor_mod), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(2, -2, 1, 0), 0.0);
  or_run_free(&run);
  or_release(2, values);
  /* fmod 1: the dividend's sign, as C's fmod */
  KILN_ASSERT_OK(import_mod(KILN_DTYPE_FLOAT32, 1, values, &run));
  assert_int_equal(om_count_calls(run.module, &kiln_op_mod), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(-1, 1, -1.5, 0), 0.0);
  or_run_free(&run);
  or_release(2, values);
  KILN_ASSERT_STATUS(import_mod(KILN_DTYPE_FLOAT32, 0, values, &run), INVALID_ARGUMENT,
                     "node \"mod0\" (Mod): fmod=0 on float32 inputs; ONNX requires fmod=1 for "
                     "floats");
  or_release(2, values);
  KILN_ASSERT_STATUS(import_mod(KILN_DTYPE_INT32, 2, values, &run), INVALID_ARGUMENT,
                     "node \"mod0\" (Mod): attribute fmod is 2; expected 0 or 1");
  or_release(2, values);
}

static void test_bit_shift(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_UINT8, 1, OB_DIMS(3), OR_D(1, 2, 255)),
                              or_tensor(KILN_DTYPE_UINT8, 1, OB_DIMS(3), OR_D(1, 7, 4))};
  const char *directions[2] = {"LEFT", "RIGHT"};
  const kiln_op_t *ops[2] = {&kiln_op_left_shift, &kiln_op_right_shift};
  const double expected[2][3] = {{2, 0, 240}, {0, 0, 15}};
  for (int k = 0; k < 3; ++k) {
    ob_t ob;
    ob_init(&ob, 11);
    or_input(&ob, "a", values[0]);
    or_input(&ob, "b", values[1]);
    Onnx__NodeProto *node = ob_node(&ob, "BitShift", "shift", "a,b", "y");
    ob_attr_string(&ob, node, "direction", k < 2 ? directions[k] : "UP");
    or_output(&ob, "y", KILN_DTYPE_UINT8);
    if (k == 2) {
      kiln_module_t *module = NULL;
      KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                         "node \"shift\" (BitShift): attribute direction is \"UP\"; expected LEFT "
                         "or RIGHT");
      ob_free(&ob);
      continue;
    }
    or_run_t run;
    or_run(&ob, 2, values, &run);
    assert_int_equal(om_count_calls(run.module, ops[k]), 1);
    or_assert(run.outputs[0], KILN_DTYPE_UINT8, 1, OB_DIMS(3), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(2, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unary_math, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unary_one_operator, setup, teardown),
      cmocka_unit_test_setup_teardown(test_logical_binary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_activations, setup, teardown),
      cmocka_unit_test_setup_teardown(test_activation_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_isinf_flags, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mod_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bit_shift, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
