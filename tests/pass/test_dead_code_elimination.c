/*
 * dead_code_elimination: TupleGetItem of a Tuple forwards the field, so the
 * tuple's other fields (and what computes them) leave the graph; unread
 * parameters of a primitive function go, with the arguments of every call
 * of it (the function rebuilt once for two calls); numbers kept;
 * allocation failures.
 */
#include "pass_fixture.h"

static const char *const tuple_text = "def @main(%x: Tensor[(2, 3), float32]) {\n"
                                      "  %0 = exp(%x);\n"
                                      "  %1 = nn.relu(%x);\n"
                                      "  %2 = (%0, %1);\n"
                                      "  %3 = %2.1;\n"
                                      "  negative(%3)\n"
                                      "}\n";

static void test_tuple_items_forward(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(tuple_text);
  assert_int_equal(pf_count(m, &kiln_op_exp), 1);
  pf_assert_pass_keeps_numbers(m, "dead_code_elimination");
  pf_assert_text(m, "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
                    "  %0 = nn.relu(%x);\n"
                    "  %1 = negative(%0);\n"
                    "  %1\n"
                    "}\n");
  kiln_module_destroy(m);
}

static const char *const fused_text =
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {\n"
    "  %0 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(2, 3), float32], %p2: Tensor[(2, 3), "
    "float32], Primitive=1) {\n"
    "    add(%p0, %p2)\n"
    "  };\n"
    "  %1 = exp(%y);\n"
    "  %2 = %0(%x, %1, %y);\n"
    "  %3 = %0(%y, %1, %x);\n"
    "  subtract(%2, %3)\n"
    "}\n";

static void test_unread_parameters_of_fused_functions(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(fused_text);
  pf_assert_pass_keeps_numbers(m, "dead_code_elimination");
  assert_int_equal(pf_count(m, &kiln_op_exp), 0);
  pf_assert_text(m, "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> "
                    "Tensor[(2, 3), float32] {\n"
                    "  %1 = fn (%p0: Tensor[(2, 3), float32], %p2: Tensor[(2, 3), float32], "
                    "Primitive=1) -> Tensor[(2, 3), float32] {\n"
                    "    %0 = add(%p0, %p2);\n"
                    "    %0\n"
                    "  };\n"
                    "  %2 = %1(%x, %y);\n"
                    "  %3 = %1(%y, %x);\n"
                    "  %4 = subtract(%2, %3);\n"
                    "  %4\n"
                    "}\n");
  kiln_module_destroy(m);
}

static void test_nothing_to_remove_keeps_the_function(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(2), float32]) { nn.relu(%x) }\n");
  kiln_function_t *before = kiln_module_get_function(m, "main");
  KILN_ASSERT_OK(pf_run_pass(m, "dead_code_elimination"));
  assert_ptr_equal(kiln_module_get_function(m, "main"), before);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(tuple_text, "dead_code_elimination") > 5);
  assert_true(pf_sweep_pass(fused_text, "dead_code_elimination") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tuple_items_forward),
      cmocka_unit_test(test_unread_parameters_of_fused_functions),
      cmocka_unit_test(test_nothing_to_remove_keeps_the_function),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
