/*
 * strength_reduce: power by 0.5, 1, 2, 3 and 4 becomes sqrt or multiplies
 * (the tanh GELU's cube among them), a divide by a power of two becomes a
 * multiply by its exact reciprocal; other exponents (0.5, 2.5) and divisors, a
 * constant that broadcasts the shape up, and int32 data stay. Numbers
 * kept; allocation failures.
 */
#include "pass_fixture.h"

static const char *const text = "def @main(%x: Tensor[(2, 8), float32]) {\n"
                                "  %0 = power(%x, meta[Constant][0]);\n"
                                "  %1 = power(%x, meta[Constant][1]);\n"
                                "  %2 = power(%x, meta[Constant][2]);\n"
                                "  %3 = divide(%x, meta[Constant][3]);\n"
                                "  %4 = divide(%x, meta[Constant][4]);\n"
                                "  %5 = power(%x, meta[Constant][5]);\n"
                                "  %6 = divide(meta[Constant][7], meta[Constant][6]);\n"
                                "  (%0, %1, %2, %3, %4, %5, %6)\n"
                                "}\n"
                                "#[metadata]\n"
                                "Constant[0] = Tensor[(), float32] [3]\n"
                                "Constant[1] = Tensor[(), float32] [0.5]\n"
                                "Constant[2] = Tensor[(1), float32] [2]\n"
                                "Constant[3] = Tensor[(), float32] [8]\n"
                                "Constant[4] = Tensor[(), float32] [3]\n"
                                "Constant[5] = Tensor[(), float32] [2.5]\n"
                                "Constant[6] = Tensor[(), int32] [2]\n"
                                "Constant[7] = Tensor[(3), int32] [1, 2, 3]\n";

static void test_powers_and_divides(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "strength_reduce");
  KILN_ASSERT_OK(pf_run_pass(m, "dead_code_elimination"));
  assert_int_equal(pf_count(m, &kiln_op_power), 2);    /* 0.5 and 2.5 */
  assert_int_equal(pf_count(m, &kiln_op_divide), 2);   /* by 3, and int32 */
  assert_int_equal(pf_count(m, &kiln_op_multiply), 4); /* cube 2, square 1, divide 1 */
  kiln_module_destroy(m);
}

/* A (2, 8) constant exponent broadcasts (8) up: the power stays. */
static void test_broadcasting_constant_stays(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(8), float32]) {\n"
                              "  power(%x, meta[Constant][0])\n"
                              "}\n"
                              "#[metadata]\n"
                              "Constant[0] = Tensor[(1, 1), float32] [2]\n");
  KILN_ASSERT_OK(pf_run_pass(m, "strength_reduce"));
  assert_int_equal(pf_count(m, &kiln_op_power), 1);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "strength_reduce") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_powers_and_divides),
      cmocka_unit_test(test_broadcasting_constant_stays),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
