/*
 * matmul_to_dense: a matmul whose right operand is a constant matrix
 * becomes nn.dense of the transposed weight (evaluated at once), whatever
 * the left operand's rank; a computed right operand, or one with batch
 * dims, stays a matmul. Numbers kept; allocation failures.
 */
#include "pass_fixture.h"

static const char *const text =
    "def @main(%x: Tensor[(2, 3, 4), float32], %v: Tensor[(4), float32], %q: Tensor[(2, 3, 4), "
    "float32], %k: Tensor[(2, 4, 3), float32]) {\n"
    "  %0 = nn.matmul(%x, meta[Constant][0]);\n"
    "  %1 = nn.matmul(%v, meta[Constant][0]);\n"
    "  %2 = nn.matmul(%q, %k);\n"
    "  %3 = nn.matmul(%x, meta[Constant][1]);\n"
    "  (%0, %1, %2, %3)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(4, 2), float32] [1, 2, 3, 4, 5, 6, 7, 8]\n"
    "Constant[1] = Tensor[(1, 4, 2), float32] [1, 2, 3, 4, 5, 6, 7, 8]\n";

static void test_constant_right_operand_becomes_dense(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "matmul_to_dense");
  assert_int_equal(pf_count(m, &kiln_op_dense), 2);
  assert_int_equal(pf_count(m, &kiln_op_matmul), 2);
  assert_int_equal(pf_count(m, &kiln_op_transpose), 0); /* evaluated */
  kiln_call_t *first =
      kiln_expr_as_call(kiln_expr_as_tuple(kiln_module_get_function(m, "main")->body)->fields[0]);
  assert_ptr_equal(first->op, &kiln_op_dense);
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(first->args[1]);
  assert_int_equal(weight->shape[0], 2);
  assert_int_equal(weight->shape[1], 4);
  const float *w = kiln_tensor_data(kiln_expr_as_constant(first->args[1])->value);
  const float want[] = {1, 3, 5, 7, 2, 4, 6, 8};
  for (int i = 0; i < 8; ++i) {
    assert_float_equal(w[i], want[i], 0.0f);
  }
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "matmul_to_dense") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_constant_right_operand_becomes_dense),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
