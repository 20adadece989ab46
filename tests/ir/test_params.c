/*
 * Tests of named parameters and binding them as constants (ir/params.h):
 * the bound function keeps the other parameters in order, shares the
 * untouched graph, re-infers types and verifies; mismatches and unknown
 * functions are errors; no leaks under allocation failures.
 */
#include <string.h>

#include "ir/infer.h"
#include "ir/params.h"
#include "ir/verify.h"
#include "kiln_ir_test.h"
#include "op/op.h"

static kiln_tensor_t *f32_tensor(int ndim, const int64_t *shape, float fill) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &tensor));
  float *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); i++)
    data[i] = fill;
  return tensor;
}

static void test_params_hold_named_tensors(void **state) {
  (void)state;
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_tensor_t *w = f32_tensor(1, SHAPE(2), 1.0f);
  KILN_ASSERT_OK(kiln_params_add(&params, "w", w));
  KILN_ASSERT_STATUS(kiln_params_add(&params, "w", w), ALREADY_EXISTS,
                     "parameter \"w\" is already set");
  kiln_tensor_release(w); /* params hold their own reference */
  assert_int_equal(kiln_params_count(&params), 1);
  assert_ptr_equal(kiln_params_get(&params, "w"), w);
  assert_null(kiln_params_get(&params, "b"));
  assert_string_equal(kiln_params_at(&params, 0)->name, "w");
  assert_float_equal(((float *)kiln_tensor_data(kiln_params_get(&params, "w")))[1], 1.0f, 0);
  kiln_params_deinitialize(&params);
}

/* main(x, w, b) = add(multiply(x, w), b), plus an untouched relu(x) branch. */
static void test_bind_params_replaces_params_by_constants(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_var_t *w = irt_var(m, "w", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_var_t *b = irt_var(m, "b", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_expr_t *branch = IRT_CALL(m, "nn.relu", NULL, &x->base);
  kiln_expr_t *scaled = IRT_CALL(m, "multiply", NULL, &x->base, &w->base);
  kiln_expr_t *shifted = IRT_CALL(m, "add", NULL, scaled, &b->base);
  kiln_expr_t *out = IRT_CALL(m, "add", NULL, shifted, branch);
  irt_add_function(m, "main", 3, (kiln_var_t *[]){x, w, b}, out);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));

  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_tensor_t *w_value = f32_tensor(1, SHAPE(4), 2.0f);
  kiln_tensor_t *b_value = f32_tensor(1, SHAPE(4), 0.5f);
  KILN_ASSERT_OK(kiln_params_add(&params, "w", w_value));
  KILN_ASSERT_OK(kiln_params_add(&params, "b", b_value));
  kiln_tensor_release(w_value);
  kiln_tensor_release(b_value);
  KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", &params));
  kiln_params_deinitialize(&params); /* the module keeps the tensors alive */

  kiln_function_t *bound = kiln_module_get_function(m, "main");
  assert_int_equal(bound->num_params, 1);
  assert_ptr_equal(bound->params[0], x);
  const kiln_call_t *top = kiln_expr_as_call(bound->body);
  assert_ptr_not_equal(&top->base, out);
  assert_ptr_equal(top->args[1], branch); /* the untouched branch is shared */
  const kiln_call_t *new_shifted = kiln_expr_as_call(top->args[0]);
  const kiln_constant_t *b_constant = kiln_expr_as_constant(new_shifted->args[1]);
  assert_non_null(b_constant);
  assert_float_equal(((const float *)kiln_tensor_data(b_constant->value))[3], 0.5f, 0);
  assert_non_null(bound->ret_type);
  KILN_ASSERT_OK(kiln_ir_verify(m));
  kiln_module_destroy(m);
}

static void test_bind_params_checks_types_and_names(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_var_t *w = irt_var(m, "w", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  irt_add_function(m, "main", 2, (kiln_var_t *[]){x, w},
                   IRT_CALL(m, "multiply", NULL, &x->base, &w->base));
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_tensor_t *wrong = f32_tensor(2, SHAPE(2, 2), 1.0f);
  KILN_ASSERT_OK(kiln_params_add(&params, "w", wrong));
  kiln_tensor_release(wrong);
  KILN_ASSERT_STATUS(kiln_ir_bind_params(m, "main", &params), INVALID_ARGUMENT,
                     "parameter %w is Tensor[(4), float32] but the bound value is Tensor[(2, 2), "
                     "float32]");
  KILN_ASSERT_STATUS(kiln_ir_bind_params(m, "encoder", &params), NOT_FOUND,
                     "the module has no function @encoder");
  kiln_params_deinitialize(&params);
  kiln_module_destroy(m);
}

static kiln_status_t bind_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_module_create(allocator, &m));
  kiln_params_t params;
  kiln_params_initialize(&params, allocator);
  const kiln_type_t *type = NULL;
  kiln_var_t *x = NULL, *w = NULL;
  kiln_call_t *product = NULL;
  kiln_function_t *f = NULL;
  kiln_tensor_t *value = NULL;
  kiln_status_t status =
      kiln_tensor_type_create(kiln_module_arena(m), KILN_DTYPE_FLOAT32, 1, SHAPE(3), &type);
  if (status == KILN_OK)
    status = kiln_ir_var_create(m, "x", type, &x);
  if (status == KILN_OK)
    status = kiln_ir_var_create(m, "w", type, &w);
  if (status == KILN_OK) {
    status = kiln_ir_call_create(m, kiln_op_get(KILN_OP_MULTIPLY), 2,
                                 (kiln_expr_t *[]){&x->base, &w->base}, NULL, &product);
  }
  if (status == KILN_OK) {
    status = kiln_ir_function_create(m, 2, (kiln_var_t *[]){x, w}, &product->base, &f);
  }
  if (status == KILN_OK)
    status = kiln_module_add_function(m, "main", f);
  if (status == KILN_OK)
    status = kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 1, SHAPE(3), &value);
  if (status == KILN_OK)
    status = kiln_params_add(&params, "w", value);
  if (status == KILN_OK)
    status = kiln_ir_bind_params(m, "main", &params);
  kiln_tensor_release(value);
  kiln_params_deinitialize(&params);
  kiln_module_destroy(m);
  return status;
}

static void test_bind_params_survives_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(bind_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params_hold_named_tensors),
      cmocka_unit_test(test_bind_params_replaces_params_by_constants),
      cmocka_unit_test(test_bind_params_checks_types_and_names),
      cmocka_unit_test(test_bind_params_survives_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
