/*
 * eliminate_common_subexpr: same operator, attributes and arguments merge,
 * and merging cascades to the users; different attributes do not merge;
 * small equal constants merge by content, so calls over them merge too;
 * numbers kept; allocation failures.
 */
#include "pass_fixture.h"

static const char *const text = "def @main(%x: Tensor[(1, 2, 4, 4), float32]) {\n"
                                "  %0 = nn.relu(%x);\n"
                                "  %1 = nn.relu(%x);\n"
                                "  %2 = nn.max_pool2d(%0, pool_size=[2, 2]);\n"
                                "  %3 = nn.max_pool2d(%1, pool_size=[2, 2]);\n"
                                "  %4 = nn.max_pool2d(%1, pool_size=[1, 1]);\n"
                                "  %5 = add(%2, %3);\n"
                                "  %6 = multiply(%x, meta[Constant][0]);\n"
                                "  %7 = multiply(%x, meta[Constant][1]);\n"
                                "  %8 = multiply(%x, meta[Constant][2]);\n"
                                "  %9 = nn.global_avg_pool2d(%4);\n"
                                "  %10 = add(%6, %7);\n"
                                "  (%5, %9, %10, %8)\n"
                                "}\n"
                                "#[metadata]\n"
                                "Constant[0] = Tensor[(), float32] [2]\n"
                                "Constant[1] = Tensor[(), float32] [2]\n"
                                "Constant[2] = Tensor[(), float32] [3]\n";

static void test_merges_equal_calls(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  assert_int_equal(pf_count(m, NULL), 11);
  KILN_ASSERT_OK(pf_run_pass(m, "eliminate_common_subexpr"));
  pf_assert_text(m, "def @main(%x: Tensor[(1, 2, 4, 4), float32]) -> (Tensor[(1, 2, 3, 3), "
                    "float32], Tensor[(1, 2, 1, 1), float32], Tensor[(1, 2, 4, 4), float32], "
                    "Tensor[(1, 2, 4, 4), float32]) {\n"
                    "  %0 = nn.relu(%x);\n"
                    "  %1 = nn.max_pool2d(%0, pool_size=[2, 2]);\n"
                    "  %2 = add(%1, %1);\n"
                    "  %3 = nn.max_pool2d(%0);\n"
                    "  %4 = nn.global_avg_pool2d(%3);\n"
                    "  %5 = multiply(%x, meta[Constant][0]);\n"
                    "  %6 = add(%5, %5);\n"
                    "  %7 = multiply(%x, meta[Constant][1]);\n"
                    "  %8 = (%2, %4, %6, %7);\n"
                    "  %8\n"
                    "}\n");
  kiln_module_destroy(m);
}

static void test_keeps_numbers(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "eliminate_common_subexpr");
  assert_int_equal(pf_count(m, NULL), 8);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "eliminate_common_subexpr") > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_merges_equal_calls),
      cmocka_unit_test(test_keeps_numbers),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
