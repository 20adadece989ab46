/*
 * fold_scale_axis: a per-output-channel constant multiply after conv2d
 * (directly, through an add of a per-channel constant, through bias_add)
 * and after dense goes into the weights (values checked, numbers kept); a
 * conv + batch norm becomes a conv and an add after simplify_inference;
 * what must not fold: a conv read twice, a scale varying along H, an NHWC
 * conv; allocation failures.
 */
#include "pass_fixture.h"

static const char *const conv_text =
    "def @main(%x: Tensor[(1, 2, 5, 5), float32]) {\n"
    "  %0 = nn.conv2d(%x, meta[Constant][0], padding=[1, 1, 1, 1]);\n"
    "  %1 = multiply(%0, meta[Constant][1]);\n"
    "  %2 = add(%1, meta[Constant][2]);\n"
    "  %3 = nn.conv2d(%2, meta[Constant][0], padding=[1, 1, 1, 1]);\n"
    "  %4 = add(%3, meta[Constant][2]);\n"
    "  %5 = multiply(meta[Constant][1], %4);\n"
    "  %6 = nn.bias_add(%5, meta[Constant][3]);\n"
    "  %7 = multiply(%6, meta[Constant][1]);\n"
    "  nn.relu(%7)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(2, 2, 3, 3), float32] [1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, "
    "-6, -7, -8, -9, 0.5, 0.25, 0, 1, 0, -1, 2, 1, 0, 3, 3, 3, 1, 1, 1, 0, 0, 0.5]\n"
    "Constant[1] = Tensor[(2, 1, 1), float32] [0.5, -2]\n"
    "Constant[2] = Tensor[(2, 1, 1), float32] [1, 10]\n"
    "Constant[3] = Tensor[(2), float32] [3, 4]\n";

static void test_conv_scales_fold_into_weights(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(conv_text);
  assert_int_equal(pf_count(m, &kiln_op_multiply), 3);
  pf_assert_pass_keeps_numbers(m, "fold_scale_axis");
  pf_assert_text(m, "def @main(%x: Tensor[(1, 2, 5, 5), float32]) -> Tensor[(1, 2, 5, 5), "
                    "float32] {\n"
                    "  %0 = nn.conv2d(%x, meta[Constant][0], padding=[1, 1, 1, 1]);\n"
                    "  %1 = add(%0, meta[Constant][1]);\n"
                    "  %2 = nn.conv2d(%1, meta[Constant][2], padding=[1, 1, 1, 1]);\n"
                    "  %3 = add(%2, meta[Constant][3]);\n"
                    "  %4 = nn.bias_add(%3, meta[Constant][4]);\n"
                    "  %5 = multiply(%4, meta[Constant][5]);\n"
                    "  %6 = nn.relu(%5);\n"
                    "  %6\n"
                    "}\n");
  /* The first conv's weights: output channel 0 times 0.5, channel 1 times -2. */
  kiln_call_t *relu = kiln_expr_as_call(kiln_module_get_function(m, "main")->body);
  kiln_call_t *mul = kiln_expr_as_call(relu->args[0]);
  kiln_call_t *bias_add = kiln_expr_as_call(mul->args[0]);
  kiln_call_t *add3 = kiln_expr_as_call(bias_add->args[0]);
  kiln_call_t *conv2 = kiln_expr_as_call(add3->args[0]);
  kiln_call_t *add1 = kiln_expr_as_call(conv2->args[0]);
  kiln_call_t *conv1 = kiln_expr_as_call(add1->args[0]);
  const float *w = kiln_tensor_data(kiln_expr_as_constant(conv1->args[1])->value);
  assert_float_equal(w[0], 0.5, 0.0);
  assert_float_equal(w[17], -9 * 0.5, 0.0);
  assert_float_equal(w[18], 0.5 * -2, 0.0);
  /* The second conv's bias was scaled with it: [1 * -... ] = b * s = [0.5, -20]. */
  const float *b = kiln_tensor_data(kiln_expr_as_constant(add3->args[1])->value);
  assert_float_equal(b[0], 0.5, 0.0);
  assert_float_equal(b[1], -20, 0.0);
  kiln_module_destroy(m);
}

static void test_dense_scale(void **state) {
  (void)state;
  kiln_module_t *m =
      pf_parse("def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {\n"
               "  %0 = nn.dense(%x, %w);\n"
               "  multiply(%0, meta[Constant][0])\n"
               "}\n"
               "#[metadata]\n"
               "Constant[0] = Tensor[(4), float32] [1, 2, 3, 4]\n");
  pf_assert_pass_keeps_numbers(m, "fold_scale_axis");
  pf_assert_text(m, "def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) -> "
                    "Tensor[(2, 4), float32] {\n"
                    "  %0 = multiply(%w, meta[Constant][0]);\n"
                    "  %1 = nn.dense(%x, %0);\n"
                    "  %1\n"
                    "}\n");
  kiln_module_destroy(m);
}

static void test_through_bias_add(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(1, 2, 3, 3), float32]) {\n"
                              "  %0 = nn.conv2d(%x, meta[Constant][0]);\n"
                              "  %1 = nn.bias_add(%0, meta[Constant][1]);\n"
                              "  multiply(%1, meta[Constant][2])\n"
                              "}\n"
                              "#[metadata]\n"
                              "Constant[0] = Tensor[(2, 2, 1, 1), float32] [1, 2, 3, 4]\n"
                              "Constant[1] = Tensor[(2), float32] [5, 6]\n"
                              "Constant[2] = Tensor[(1, 2, 1, 1), float32] [2, -3]\n");
  pf_assert_pass_keeps_numbers(m, "fold_scale_axis");
  pf_assert_text(m, "def @main(%x: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), "
                    "float32] {\n"
                    "  %0 = nn.conv2d(%x, meta[Constant][0]);\n"
                    "  %1 = nn.bias_add(%0, meta[Constant][1]);\n"
                    "  %1\n"
                    "}\n");
  kiln_call_t *bias_add = kiln_expr_as_call(kiln_module_get_function(m, "main")->body);
  const float *b = kiln_tensor_data(kiln_expr_as_constant(bias_add->args[1])->value);
  assert_int_equal(kiln_tensor_ndim(kiln_expr_as_constant(bias_add->args[1])->value), 1);
  assert_float_equal(b[0], 10, 0.0);
  assert_float_equal(b[1], -18, 0.0);
  kiln_module_destroy(m);
}

static void test_conv_batch_norm_becomes_conv_add(void **state) {
  (void)state;
  kiln_module_t *m =
      pf_parse("def @main(%x: Tensor[(1, 2, 4, 4), float32]) {\n"
               "  %0 = nn.conv2d(%x, meta[Constant][0]);\n"
               "  nn.batch_norm(%0, meta[Constant][1], meta[Constant][2], meta[Constant][3], "
               "meta[Constant][4])\n"
               "}\n"
               "#[metadata]\n"
               "Constant[0] = Tensor[(2, 2, 1, 1), float32] [1, 2, 3, 4]\n"
               "Constant[1] = Tensor[(2), float32] [2, 0.5]\n"
               "Constant[2] = Tensor[(2), float32] [1, -1]\n"
               "Constant[3] = Tensor[(2), float32] [0.5, 0.25]\n"
               "Constant[4] = Tensor[(2), float32] [4, 1]\n");
  KILN_ASSERT_OK(pf_run_pass(m, "simplify_inference"));
  pf_assert_pass_keeps_numbers(m, "fold_scale_axis");
  pf_assert_text(m, "def @main(%x: Tensor[(1, 2, 4, 4), float32]) -> Tensor[(1, 2, 4, 4), "
                    "float32] {\n"
                    "  %0 = nn.conv2d(%x, meta[Constant][0]);\n"
                    "  %1 = add(%0, meta[Constant][1]);\n"
                    "  %1\n"
                    "}\n");
  kiln_module_destroy(m);
}

static void test_illegal_cases_stay(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(
      "def @main(%x: Tensor[(1, 2, 3, 3), float32], %y: Tensor[(1, 3, 3, 2), float32]) {\n"
      "  %0 = nn.conv2d(%x, meta[Constant][0]);\n"
      "  %1 = multiply(%0, meta[Constant][1]);\n"
      "  %2 = nn.relu(%0);\n"
      "  %3 = nn.conv2d(%x, meta[Constant][0]);\n"
      "  %4 = multiply(%3, meta[Constant][2]);\n"
      "  %5 = nn.conv2d(%y, meta[Constant][3], data_layout=\"NHWC\", kernel_layout=\"HWIO\");\n"
      "  %6 = multiply(%5, meta[Constant][4]);\n"
      "  (%1, %2, %4, %6)\n"
      "}\n"
      "#[metadata]\n"
      "Constant[0] = Tensor[(2, 2, 1, 1), float32] [1, 2, 3, 4]\n"
      "Constant[1] = Tensor[(2, 1, 1), float32] [2, 3]\n"
      "Constant[2] = Tensor[(1, 3, 1), float32] [2, 3, 4]\n"
      "Constant[3] = Tensor[(1, 1, 2, 2), float32] [1, 2, 3, 4]\n"
      "Constant[4] = Tensor[(2), float32] [2, 3]\n");
  kiln_function_t *before = kiln_module_get_function(m, "main");
  KILN_ASSERT_OK(pf_run_pass(m, "fold_scale_axis"));
  assert_ptr_equal(kiln_module_get_function(m, "main"), before);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(conv_text, "fold_scale_axis") > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_scales_fold_into_weights),
      cmocka_unit_test(test_dense_scale),
      cmocka_unit_test(test_through_bias_add),
      cmocka_unit_test(test_conv_batch_norm_becomes_conv_add),
      cmocka_unit_test(test_illegal_cases_stay),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
