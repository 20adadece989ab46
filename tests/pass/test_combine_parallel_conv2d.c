/*
 * combine_parallel_conv2d: three convs of one input (different output
 * channels) become one conv over concatenated weights and three slices
 * (weights concatenated in member order, slices at their offsets, numbers
 * kept); a conv with
 * other strides and a pair below min_branches stay; min_branches=2 takes
 * the pair; a bad option is named; opt-in through the pipeline option;
 * allocation failures.
 */
#include "pass/pipeline.h"
#include "pass_fixture.h"

static const char *const text =
    "def @main(%x: Tensor[(1, 2, 5, 5), float32], %y: Tensor[(1, 2, 4, 4), float32], %wb: "
    "Tensor[(2, 2, 3, 3), float32]) {\n"
    "  %0 = nn.conv2d(%x, meta[Constant][0], padding=[1, 1, 1, 1]);\n"
    "  %1 = nn.conv2d(%x, %wb, padding=[1, 1, 1, 1]);\n"
    "  %2 = nn.conv2d(%x, meta[Constant][1], padding=[1, 1, 1, 1], channels=3);\n"
    "  %3 = nn.conv2d(%x, meta[Constant][1], strides=[2, 2]);\n"
    "  %4 = nn.conv2d(%y, meta[Constant][2]);\n"
    "  %5 = nn.conv2d(%y, meta[Constant][2]);\n"
    "  %6 = add(%0, %1);\n"
    "  (%6, %2, %3, %4, %5)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(2, 2, 3, 3), float32] [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, "
    "8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9, 0, 0, 0, 1, 1, 1, 2, 2, 2]\n"
    "Constant[1] = Tensor[(3, 2, 3, 3), float32] [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1, "
    "0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, -1, -1, -1, -1, "
    "-1, -1, -1, -1, -1, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]\n"
    "Constant[2] = Tensor[(4, 2, 1, 1), float32] [1, 2, 3, 4, 5, 6, 7, 8]\n";

static void test_three_branches_combine(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "combine_parallel_conv2d");
  pf_assert_text(
      m, "def @main(%x: Tensor[(1, 2, 5, 5), float32], %y: Tensor[(1, 2, 4, 4), float32], %wb: "
         "Tensor[(2, 2, 3, 3), float32]) -> (Tensor[(1, 2, 5, 5), float32], Tensor[(1, 3, 5, 5), "
         "float32], Tensor[(1, 3, 2, 2), float32], Tensor[(1, 4, 4, 4), float32], Tensor[(1, 4, "
         "4, 4), float32]) {\n"
         "  %0 = concatenate(meta[Constant][0], %wb, meta[Constant][1]);\n"
         "  %1 = nn.conv2d(%x, %0, padding=[1, 1, 1, 1], channels=7);\n"
         "  %2 = strided_slice(%1, begin=[0], end=[2], axes=[1]);\n"
         "  %3 = strided_slice(%1, begin=[2], end=[4], axes=[1]);\n"
         "  %4 = add(%2, %3);\n"
         "  %5 = strided_slice(%1, begin=[4], end=[7], axes=[1]);\n"
         "  %6 = nn.conv2d(%x, meta[Constant][1], strides=[2, 2]);\n"
         "  %7 = nn.conv2d(%y, meta[Constant][2]);\n"
         "  %8 = nn.conv2d(%y, meta[Constant][2]);\n"
         "  %9 = (%4, %5, %6, %7, %8);\n"
         "  %9\n"
         "}\n");
  kiln_module_destroy(m);
}

static kiln_status_t run_with_min(kiln_module_t *m, const char *min) {
  const kiln_pass_t *pass = &kiln_pass_combine_parallel_conv2d;
  kiln_pass_context_t *context = pf_context(3);
  kiln_status_t status = kiln_pass_context_require(context, "combine_parallel_conv2d");
  status = status
               ? status
               : kiln_pass_context_set_option(context, "combine_parallel_conv2d.min_branches", min);
  status = status ? status : kiln_pass_sequential_run(m, context, &pass, 1);
  kiln_pass_context_destroy(context);
  return status;
}

static void test_min_branches_option(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  KILN_ASSERT_OK(run_with_min(m, "4"));
  assert_int_equal(pf_count(m, &kiln_op_conv2d), 6); /* three is not enough */
  KILN_ASSERT_OK(run_with_min(m, "2"));
  assert_int_equal(pf_count(m, &kiln_op_conv2d), 3); /* x's group of three, y's pair */
  assert_int_equal(pf_count(m, &kiln_op_strided_slice), 5);
  KILN_ASSERT_STATUS(run_with_min(m, "1"), INVALID_ARGUMENT,
                     "combine_parallel_conv2d: option combine_parallel_conv2d.min_branches = 1: "
                     "at least 2 convs make a group");
  kiln_module_destroy(m);
}

static int64_t convs_after_pipeline(const char *option) {
  kiln_module_t *m = pf_parse(text);
  kiln_pass_context_t *context = pf_context(3);
  if (option) {
    KILN_ASSERT_OK(kiln_pass_context_set_option(context, "combine_parallel_conv2d", option));
  }
  KILN_ASSERT_OK(kiln_pass_run_default_pipeline(m, context));
  int64_t count = pf_count(m, &kiln_op_conv2d);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
  return count;
}

static void test_opt_in(void **state) {
  (void)state;
  assert_int_equal(kiln_pass_combine_parallel_conv2d.info.opt_level, 4);
  /* At opt_level 3, CSE merges the two equal convs of %y: 5 convs. */
  assert_int_equal(convs_after_pipeline(NULL), 5);
  assert_int_equal(convs_after_pipeline("1"), 3);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "combine_parallel_conv2d") > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_three_branches_combine),
      cmocka_unit_test(test_min_branches_option),
      cmocka_unit_test(test_opt_in),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
