/*
 * fast_math: exp, erf and tanh become their fast versions (float32 only;
 * sigmoid and others untouched); skipped at every opt_level unless required
 * or the pipeline's "fast_math" option is "1"; the numbers stay within the
 * approximations' error (rtol 1e-5, atol 1e-6); allocation failures.
 */
#include "pass/pipeline.h"
#include "pass_fixture.h"

static const char *const text = "def @main(%x: Tensor[(4, 5), float32]) {\n"
                                "  %0 = exp(%x);\n"
                                "  %1 = tanh(%0);\n"
                                "  %2 = erf(%1);\n"
                                "  %3 = sigmoid(%2);\n"
                                "  %4 = exp(meta[Constant][0]);\n"
                                "  (%3, %4)\n"
                                "}\n"
                                "#[metadata]\n"
                                "Constant[0] = Tensor[(2), float64] [1, 2]\n";

static void test_replaces_float32_calls(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  KILN_ASSERT_OK(pf_run_pass(m, "fast_math"));
  pf_assert_text(m, "def @main(%x: Tensor[(4, 5), float32]) -> (Tensor[(4, 5), float32], "
                    "Tensor[(2), float64]) {\n"
                    "  %0 = fast_exp(%x);\n"
                    "  %1 = fast_tanh(%0);\n"
                    "  %2 = fast_erf(%1);\n"
                    "  %3 = sigmoid(%2);\n"
                    "  %4 = exp(meta[Constant][0]);\n"
                    "  %5 = (%3, %4);\n"
                    "  %5\n"
                    "}\n");
  kiln_module_destroy(m);
}

static kiln_status_t run_fast(kiln_module_t *module, void *user) {
  (void)user;
  return pf_run_pass(module, "fast_math");
}

static void test_keeps_numbers_within_the_approximation(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(3, 7), float32]) {\n"
                              "  %0 = multiply(%x, meta[Constant][0]);\n"
                              "  %1 = exp(%0);\n"
                              "  %2 = tanh(%0);\n"
                              "  %3 = erf(%0);\n"
                              "  (%1, %2, %3)\n"
                              "}\n"
                              "#[metadata]\n"
                              "Constant[0] = Tensor[(), float32] [5]\n");
  pf_assert_keeps_numbers(m, run_fast, NULL, 1e-5, 1e-6);
  assert_int_equal(pf_count(m, &kiln_op_fast_exp), 1);
  kiln_module_destroy(m);
}

static int64_t fast_calls_after_pipeline(int opt_level, const char *option) {
  kiln_module_t *m = pf_parse(text);
  kiln_pass_context_t *context = pf_context(opt_level);
  if (option) {
    KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fast_math", option));
  }
  KILN_ASSERT_OK(kiln_pass_run_default_pipeline(m, context));
  int64_t count = pf_count(m, &kiln_op_fast_exp) + pf_count(m, &kiln_op_fast_tanh) +
                  pf_count(m, &kiln_op_fast_erf);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
  return count;
}

static void test_opt_in(void **state) {
  (void)state;
  assert_int_equal(kiln_pass_fast_math.info.opt_level, 4);
  for (int level = 0; level <= 3; ++level) {
    assert_int_equal(fast_calls_after_pipeline(level, NULL), 0);
    assert_int_equal(fast_calls_after_pipeline(level, "0"), 0);
    assert_int_equal(fast_calls_after_pipeline(level, "1"), 3);
  }
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "fast_math") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_replaces_float32_calls),
      cmocka_unit_test(test_keeps_numbers_within_the_approximation),
      cmocka_unit_test(test_opt_in),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
