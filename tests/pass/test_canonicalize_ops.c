/*
 * canonicalize_ops: nn.bias_add becomes add with the bias expanded to
 * broadcast along the axis (a constant bias expanded at once; a last-axis
 * bias as it is); numbers kept; allocation failures.
 */
#include "pass_fixture.h"

static const char *const text =
    "def @main(%x: Tensor[(1, 3, 4, 4), float32], %b: Tensor[(3), float32], %y: Tensor[(2, 5), "
    "float32]) {\n"
    "  %0 = nn.bias_add(%x, %b);\n"
    "  %1 = nn.bias_add(%y, meta[Constant][0], axis=-1);\n"
    "  %2 = nn.bias_add(%x, meta[Constant][1], axis=1);\n"
    "  (%0, %1, %2)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(5), float32] [1, 2, 3, 4, 5]\n"
    "Constant[1] = Tensor[(3), float32] [-1, 0, 1]\n";

static void test_bias_add_becomes_add(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "canonicalize_ops");
  pf_assert_text(m, "def @main(%x: Tensor[(1, 3, 4, 4), float32], %b: Tensor[(3), float32], %y: "
                    "Tensor[(2, 5), float32]) -> (Tensor[(1, 3, 4, 4), float32], Tensor[(2, 5), "
                    "float32], Tensor[(1, 3, 4, 4), float32]) {\n"
                    "  %0 = expand_dims(%b, axis=1, num_newaxis=2);\n"
                    "  %1 = add(%x, %0);\n"
                    "  %2 = add(%y, meta[Constant][0]);\n"
                    "  %3 = add(%x, meta[Constant][1]);\n"
                    "  %4 = (%1, %2, %3);\n"
                    "  %4\n"
                    "}\n");
  kiln_call_t *third =
      kiln_expr_as_call(kiln_expr_as_tuple(kiln_module_get_function(m, "main")->body)->fields[2]);
  const kiln_tensor_type_t *bias = kiln_pass_tensor_type(third->args[1]);
  assert_int_equal(bias->ndim, 3);
  assert_int_equal(bias->shape[0], 3);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "canonicalize_ops") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bias_add_becomes_add),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
