/*
 * simplify_inference: a batch norm with constant statistics becomes one
 * multiply and one add by folded per-channel constants (values checked);
 * with statistics as parameters, graph arithmetic; center/scale False; the
 * axis of a batch norm on other ranks; layer_norm untouched; the numbers
 * kept on random inputs; allocation failures.
 */
#include <math.h>

#include "pass_fixture.h"

static const char *const constant_bn =
    "def @main(%x: Tensor[(1, 2, 3, 3), float32]) {\n"
    "  %0 = nn.batch_norm(%x, meta[Constant][0], meta[Constant][1], meta[Constant][2], "
    "meta[Constant][3], epsilon=0.01);\n"
    "  nn.relu(%0)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(2), float32] [2, -1]\n"
    "Constant[1] = Tensor[(2), float32] [0.5, 3]\n"
    "Constant[2] = Tensor[(2), float32] [1, -2]\n"
    "Constant[3] = Tensor[(2), float32] [3.99, 0.24]\n";

static const float *constant_values(kiln_expr_t *expr) {
  kiln_constant_t *constant = kiln_expr_as_constant(expr);
  assert_non_null(constant);
  return kiln_tensor_data(constant->value);
}

static void test_constant_batch_norm_folds_to_scale_and_shift(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(constant_bn);
  KILN_ASSERT_OK(pf_run_pass(m, "simplify_inference"));
  pf_assert_text(m,
                 "def @main(%x: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {\n"
                 "  %0 = multiply(%x, meta[Constant][0]);\n"
                 "  %1 = add(%0, meta[Constant][1]);\n"
                 "  %2 = nn.relu(%1);\n"
                 "  %2\n"
                 "}\n");
  kiln_call_t *relu = kiln_expr_as_call(kiln_module_get_function(m, "main")->body);
  kiln_call_t *add = kiln_expr_as_call(relu->args[0]);
  kiln_call_t *mul = kiln_expr_as_call(add->args[0]);
  /* scale = gamma / sqrt(var + eps) = [2 / 2, -1 / 0.5]; shift = beta - mean * scale */
  const kiln_tensor_type_t *scale_type = kiln_pass_tensor_type(mul->args[1]);
  assert_int_equal(scale_type->ndim, 3);
  assert_int_equal(scale_type->shape[0], 2);
  assert_int_equal(scale_type->shape[1], 1);
  const float *scale = constant_values(mul->args[1]);
  const float *shift = constant_values(add->args[1]);
  assert_float_equal(scale[0], 1.0, 1e-6);
  assert_float_equal(scale[1], -2.0, 1e-6);
  assert_float_equal(shift[0], 0.5 - 1.0, 1e-6);
  assert_float_equal(shift[1], 3.0 - 4.0, 1e-6);
  kiln_module_destroy(m);
}

static void test_constant_batch_norm_keeps_numbers(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(constant_bn);
  pf_assert_pass_keeps_numbers(m, "simplify_inference");
  assert_int_equal(pf_count(m, &kiln_op_batch_norm), 0);
  kiln_module_destroy(m);
}

static const char *const variable_bn =
    "def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), "
    "float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]) {\n"
    "  nn.batch_norm(%x, %g, %b, %m, %v)\n"
    "}\n";

static void test_variable_batch_norm_becomes_graph_arithmetic(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(variable_bn);
  /* variance must be >= 0: the random inputs are in [-1, 1), so use |v| via abs */
  KILN_ASSERT_OK(pf_run_pass(m, "simplify_inference"));
  pf_assert_text(m, "def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3), float32], %b: "
                    "Tensor[(3), float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]) -> "
                    "Tensor[(2, 3, 4), float32] {\n"
                    "  %0 = add(%v, meta[Constant][0]);\n"
                    "  %1 = rsqrt(%0);\n"
                    "  %2 = multiply(%g, %1);\n"
                    "  %3 = expand_dims(%2, axis=1);\n"
                    "  %4 = multiply(%x, %3);\n"
                    "  %5 = multiply(%m, %2);\n"
                    "  %6 = subtract(%b, %5);\n"
                    "  %7 = expand_dims(%6, axis=1);\n"
                    "  %8 = add(%4, %7);\n"
                    "  %8\n"
                    "}\n");
  kiln_module_destroy(m);
}

static void test_variable_batch_norm_keeps_numbers(void **state) {
  (void)state;
  /* The variance goes through abs so that random inputs make a valid one. */
  kiln_module_t *m = pf_parse(
      "def @main(%x: Tensor[(2, 3, 4, 5), float32], %g: Tensor[(4), float32], %b: Tensor[(4), "
      "float32], %m: Tensor[(4), float32], %v: Tensor[(4), float32]) {\n"
      "  %0 = abs(%v);\n"
      "  nn.batch_norm(%x, %g, %b, %m, %0, axis=2, epsilon=0.1)\n"
      "}\n");
  pf_assert_pass_keeps_numbers(m, "simplify_inference");
  assert_int_equal(pf_count(m, &kiln_op_batch_norm), 0);
  assert_int_equal(pf_count(m, &kiln_op_expand_dims), 2);
  kiln_module_destroy(m);
}

static void test_center_and_scale_false(void **state) {
  (void)state;
  kiln_module_t *m =
      pf_parse("def @main(%x: Tensor[(3, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), "
               "float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
               "  %0 = abs(%v);\n"
               "  nn.batch_norm(%x, %g, %b, %m, %0, axis=-1, center=False, scale=False)\n"
               "}\n");
  pf_assert_pass_keeps_numbers(m, "simplify_inference");
  pf_assert_text(m, "def @main(%x: Tensor[(3, 2), float32], %g: Tensor[(2), float32], %b: "
                    "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) -> "
                    "Tensor[(3, 2), float32] {\n"
                    "  %0 = abs(%v);\n"
                    "  %1 = add(%0, meta[Constant][0]);\n"
                    "  %2 = rsqrt(%1);\n"
                    "  %3 = multiply(%x, %2);\n"
                    "  %4 = multiply(%m, %2);\n"
                    "  %5 = negative(%4);\n"
                    "  %6 = add(%3, %5);\n"
                    "  %6\n"
                    "}\n");
  kiln_module_destroy(m);
}

static void test_layer_norm_is_left_alone(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(2, 4), float32], %g: Tensor[(4), float32], "
                              "%b: Tensor[(4), float32]) {\n"
                              "  nn.layer_norm(%x, %g, %b)\n"
                              "}\n");
  kiln_function_t *before = kiln_module_get_function(m, "main");
  KILN_ASSERT_OK(pf_run_pass(m, "simplify_inference"));
  assert_ptr_equal(kiln_module_get_function(m, "main"), before);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(constant_bn, "simplify_inference") > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_constant_batch_norm_folds_to_scale_and_shift),
      cmocka_unit_test(test_constant_batch_norm_keeps_numbers),
      cmocka_unit_test(test_variable_batch_norm_becomes_graph_arithmetic),
      cmocka_unit_test(test_variable_batch_norm_keeps_numbers),
      cmocka_unit_test(test_center_and_scale_false),
      cmocka_unit_test(test_layer_norm_is_left_alone),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
