/*
 * Tests of the IR verifier (ir/verify.h): a well-formed module passes, and
 * each broken invariant (free variables, shared parameters, missing or stale
 * types, a wrong return type, no @main, a cycle) is reported with the
 * function and the node.
 */
#include "ir/infer.h"
#include "ir/verify.h"
#include "kiln_ir_test.h"

/* main(x, y) = relu(add(x, y)) over [2, 3]. */
static kiln_module_t *small_module(kiln_var_t **out_x, kiln_expr_t **out_sum) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_var_t *y = irt_var(m, "y", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_expr_t *sum = IRT_CALL(m, "add", NULL, &x->base, &y->base);
  irt_add_function(m, "main", 2, (kiln_var_t *[]){x, y}, IRT_CALL(m, "nn.relu", NULL, sum));
  if (out_x)
    *out_x = x;
  if (out_sum)
    *out_sum = sum;
  return m;
}

static void test_verify_accepts_a_typed_module(void **state) {
  (void)state;
  kiln_module_t *m = small_module(NULL, NULL);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_OK(kiln_ir_verify(m));
  kiln_module_destroy(m);
}

static void test_verify_requires_types(void **state) {
  (void)state;
  kiln_module_t *m = small_module(NULL, NULL);
  KILN_ASSERT_STATUS(kiln_ir_verify(m), FAILED_PRECONDITION,
                     "in @main, %x: has no checked type (type inference has not run)");
  kiln_module_destroy(m);
}

static void test_verify_catches_a_stale_type(void **state) {
  (void)state;
  kiln_expr_t *sum = NULL;
  kiln_module_t *m = small_module(NULL, &sum);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  sum->checked_type = irt_type(m, KILN_DTYPE_FLOAT32, 1, SHAPE(6));
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT,
                     "in @main, %0 = add: has checked type Tensor[(6), float32] but its inputs "
                     "give Tensor[(2, 3), float32]");
  kiln_module_destroy(m);
}

static void test_verify_catches_a_wrong_return_type(void **state) {
  (void)state;
  kiln_module_t *m = small_module(NULL, NULL);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  kiln_module_get_function(m, "main")->ret_type = irt_type(m, KILN_DTYPE_INT64, 0, NULL);
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT,
                     "in @main, a function returns Tensor[(), int64] but its body is "
                     "Tensor[(2, 3), float32]");
  kiln_module_destroy(m);
}

static void test_verify_catches_a_free_variable(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_var_t *stray = irt_var(m, "stray", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "add", NULL, &x->base, &stray->base));
  KILN_ASSERT_OK(kiln_ir_infer_types(m)); /* inference alone does not see scoping */
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT,
                     "in @main, %stray: is not a parameter of the function that uses it");
  kiln_module_destroy(m);
}

static void test_verify_keeps_primitive_functions_closed(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_var_t *p = irt_var(m, "p0", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  /* The fused body reaches out to main's %x instead of using only %p0. */
  kiln_function_t *fused = irt_function(m, 1, &p, IRT_CALL(m, "add", NULL, &p->base, &x->base));
  fused->primitive = true;
  kiln_call_t *call = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, fused, 1, (kiln_expr_t *[]){&x->base}, &call));
  irt_add_function(m, "main", 1, &x, &call->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT,
                     "in @main, %x: is not a parameter of the function that uses it");
  kiln_module_destroy(m);

  /* The same graph with the body closed over %p0 verifies. */
  m = irt_module();
  x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  p = irt_var(m, "p0", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  fused = irt_function(m, 1, &p, IRT_CALL(m, "add", NULL, &p->base, &p->base));
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, fused, 1, (kiln_expr_t *[]){&x->base}, &call));
  irt_add_function(m, "main", 1, &x, &call->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_OK(kiln_ir_verify(m));
  kiln_module_destroy(m);
}

static void test_verify_rejects_a_parameter_of_two_functions(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "exp", NULL, &x->base));
  irt_add_function(m, "other", 1, &x, IRT_CALL(m, "log", NULL, &x->base));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT,
                     "in @other, %x is a parameter of two functions");
  kiln_module_destroy(m);
}

static void test_verify_requires_main_and_no_cycle(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "entry", 1, &x, IRT_CALL(m, "exp", NULL, &x->base));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT, "the module has no @main function");
  kiln_module_destroy(m);

  kiln_expr_t *sum = NULL;
  m = small_module(NULL, &sum);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  kiln_call_t *relu = kiln_expr_as_call(kiln_module_get_function(m, "main")->body);
  kiln_expr_as_call(sum)->args[1] = &relu->base;
  KILN_ASSERT_STATUS(kiln_ir_verify(m), INVALID_ARGUMENT, "in @main: the graph has a cycle");
  kiln_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_verify_accepts_a_typed_module),
      cmocka_unit_test(test_verify_requires_types),
      cmocka_unit_test(test_verify_catches_a_stale_type),
      cmocka_unit_test(test_verify_catches_a_wrong_return_type),
      cmocka_unit_test(test_verify_catches_a_free_variable),
      cmocka_unit_test(test_verify_keeps_primitive_functions_closed),
      cmocka_unit_test(test_verify_rejects_a_parameter_of_two_functions),
      cmocka_unit_test(test_verify_requires_main_and_no_cycle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
