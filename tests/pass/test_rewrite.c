/*
 * The passes' shared tools (pass/rewrite.h): typed node builders (and the
 * attribute errors they pass on), evaluation of constant calls (values; a
 * non-Constant argument named; a kernel without the dtype leaves the call),
 * use counts, call counts, and kiln_module_remove_function's error.
 */
#include "pass_fixture.h"

static void test_make_call_types_and_checks_attrs(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(kiln_pass_type_node(m, &x->base));
  kiln_expr_t *call = NULL;
  const char *const settings[] = {"axes", "[1, 0]", NULL};
  KILN_ASSERT_OK(
      kiln_pass_make_call(m, &kiln_op_transpose, 1, (kiln_expr_t *[]){&x->base}, settings, &call));
  const kiln_tensor_type_t *type = kiln_pass_tensor_type(call);
  assert_int_equal(type->shape[0], 3);
  assert_int_equal(type->shape[1], 2);
  const char *const bad[] = {"axes", "[1, 0", NULL};
  KILN_ASSERT_STATUS(
      kiln_pass_make_call(m, &kiln_op_transpose, 1, (kiln_expr_t *[]){&x->base}, bad, &call),
      INVALID_ARGUMENT, "axes");
  kiln_var_t *v = irt_var(m, "v", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  KILN_ASSERT_OK(kiln_pass_type_node(m, &v->base));
  KILN_ASSERT_STATUS(
      kiln_pass_make_call(m, &kiln_op_add, 2, (kiln_expr_t *[]){&x->base, &v->base}, NULL, &call),
      INVALID_ARGUMENT, "a new add: add: ");
  kiln_module_destroy(m);
}

static void test_evaluate_call(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_expr_t *a = irt_constant_f32(m, 1, SHAPE(3), (const float[]){1, 2, 3});
  kiln_expr_t *b = irt_constant_f32(m, 1, SHAPE(3), (const float[]){10, 20, 30});
  KILN_ASSERT_OK(kiln_pass_type_node(m, a));
  KILN_ASSERT_OK(kiln_pass_type_node(m, b));
  kiln_expr_t *sum = NULL, *folded = NULL;
  KILN_ASSERT_OK(
      kiln_pass_make_call_folded(m, &kiln_op_add, 2, (kiln_expr_t *[]){a, b}, NULL, &folded));
  const float *values = kiln_tensor_data(kiln_expr_as_constant(folded)->value);
  assert_float_equal(values[2], 33.0, 0.0);
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  KILN_ASSERT_OK(kiln_pass_type_node(m, &x->base));
  KILN_ASSERT_OK(
      kiln_pass_make_call(m, &kiln_op_add, 2, (kiln_expr_t *[]){a, &x->base}, NULL, &sum));
  KILN_ASSERT_STATUS(kiln_pass_evaluate_call(m, kiln_expr_as_call(sum), &folded), INVALID_ARGUMENT,
                     "add: argument 1 is a Var, not a Constant");
  /* left_shift's kernel takes unsigned integers only: on floats the call is
   * left as it is (UNIMPLEMENTED is not an error here). */
  kiln_expr_t *shifted = NULL;
  KILN_ASSERT_OK(kiln_pass_make_call_folded(m, &kiln_op_left_shift, 2, (kiln_expr_t *[]){a, b},
                                            NULL, &shifted));
  assert_true(kiln_pass_is_call_of(shifted, &kiln_op_left_shift));
  kiln_module_destroy(m);
}

static void test_uses_and_counts(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(2), float32]) {\n"
                              "  %0 = nn.relu(%x);\n"
                              "  %1 = add(%0, %0);\n"
                              "  %2 = exp(%0);\n"
                              "  (%1, %2)\n"
                              "}\n");
  kiln_pass_uses_t uses;
  KILN_ASSERT_OK(kiln_pass_uses_compute(m, kiln_allocator_system(), &uses));
  kiln_tuple_t *body = kiln_expr_as_tuple(kiln_module_get_function(m, "main")->body);
  kiln_call_t *add = kiln_expr_as_call(body->fields[0]);
  assert_int_equal(kiln_pass_uses_count(&uses, add->args[0]), 3); /* twice by add, once by exp */
  assert_int_equal(kiln_pass_uses_count(&uses, &add->base), 1);
  assert_int_equal(kiln_pass_uses_count(&uses, &body->base), 1); /* the body */
  kiln_pass_uses_deinitialize(&uses);
  assert_int_equal(pf_count(m, NULL), 3);
  assert_int_equal(pf_count(m, &kiln_op_relu), 1);
  KILN_ASSERT_STATUS(kiln_module_remove_function(m, "nope"), NOT_FOUND,
                     "module has no function named 'nope'");
  kiln_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_make_call_types_and_checks_attrs),
      cmocka_unit_test(test_evaluate_call),
      cmocka_unit_test(test_uses_and_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
