/*
 * fold_constant: chains of constant calls fold from the leaves up (values
 * checked), a split's fields through TupleGetItem, calls with a Var stay;
 * precompute prune: params bound as Constants fold the weight-only
 * subgraph away; the size limit option keeps a growing broadcast unfolded
 * and rejects a bad value by name; numbers kept; allocation failures.
 */
#include "ir/params.h"
#include "pass_fixture.h"

static const char *const chain = "def @main(%x: Tensor[(2, 2), float32]) {\n"
                                 "  %0 = add(meta[Constant][0], meta[Constant][1]);\n"
                                 "  %1 = multiply(%0, meta[Constant][0]);\n"
                                 "  %2 = split(%1, sections=2);\n"
                                 "  %3 = %2.1;\n"
                                 "  %4 = reshape(%3, newshape=[2, 1]);\n"
                                 "  %5 = add(%x, %4);\n"
                                 "  nn.relu(%5)\n"
                                 "}\n"
                                 "#[metadata]\n"
                                 "Constant[0] = Tensor[(4), float32] [1, 2, 3, 4]\n"
                                 "Constant[1] = Tensor[(4), float32] [10, 20, 30, 40]\n";

static void test_chain_folds_to_one_constant(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(chain);
  KILN_ASSERT_OK(pf_run_pass(m, "fold_constant"));
  pf_assert_text(m, "def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {\n"
                    "  %0 = add(%x, meta[Constant][0]);\n"
                    "  %1 = nn.relu(%0);\n"
                    "  %1\n"
                    "}\n");
  kiln_call_t *add =
      kiln_expr_as_call(kiln_expr_as_call(kiln_module_get_function(m, "main")->body)->args[0]);
  kiln_constant_t *folded = kiln_expr_as_constant(add->args[1]);
  assert_non_null(folded);
  const float *values = kiln_tensor_data(folded->value);
  assert_int_equal(kiln_tensor_element_count(folded->value), 2);
  assert_float_equal(values[0], 33.0 * 3.0, 0.0); /* (3 + 30) * 3 */
  assert_float_equal(values[1], 44.0 * 4.0, 0.0);
  kiln_module_destroy(m);
}

static void test_chain_keeps_numbers(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(chain);
  pf_assert_pass_keeps_numbers(m, "fold_constant");
  assert_int_equal(pf_count(m, NULL), 2);
  kiln_module_destroy(m);
}

static void test_precompute_prune_with_bound_params(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse("def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32], "
                              "%s: Tensor[(4), float32]) {\n"
                              "  %0 = transpose(%w);\n"
                              "  %1 = transpose(%0);\n"
                              "  %2 = multiply(%s, meta[Constant][0]);\n"
                              "  %3 = nn.dense(%x, %1);\n"
                              "  add(%3, %2)\n"
                              "}\n"
                              "#[metadata]\n"
                              "Constant[0] = Tensor[(), float32] [2]\n");
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_tensor_t *w = NULL, *s = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2, SHAPE(4, 3), &w));
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(4), &s));
  pf_fill_random(w, 3);
  pf_fill_random(s, 4);
  KILN_ASSERT_OK(kiln_params_add(&params, "w", w));
  KILN_ASSERT_OK(kiln_params_add(&params, "s", s));
  kiln_tensor_release(w);
  kiln_tensor_release(s);
  KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", &params));
  assert_int_equal(pf_count(m, NULL), 5);
  pf_assert_pass_keeps_numbers(m, "fold_constant");
  pf_assert_text(m, "def @main(%x: Tensor[(1, 3), float32]) -> Tensor[(1, 4), float32] {\n"
                    "  %0 = nn.dense(%x, meta[Constant][0]);\n"
                    "  %1 = add(%0, meta[Constant][1]);\n"
                    "  %1\n"
                    "}\n");
  kiln_params_deinitialize(&params);
  kiln_module_destroy(m);
}

static const char *const growing = "def @main(%x: Tensor[(64, 64), float32]) {\n"
                                   "  %0 = broadcast_to(meta[Constant][0], shape=[64, 64]);\n"
                                   "  add(%x, %0)\n"
                                   "}\n"
                                   "#[metadata]\n"
                                   "Constant[0] = Tensor[(1), float32] [1.5]\n";

static kiln_status_t run_with_limit(kiln_module_t *m, const char *limit) {
  const kiln_pass_t *pass = &kiln_pass_fold_constant;
  kiln_pass_context_t *context = pf_context(2);
  kiln_status_t status = kiln_pass_context_set_option(context, "fold_constant.max_bytes", limit);
  status = status ? status : kiln_pass_sequential_run(m, context, &pass, 1);
  kiln_pass_context_destroy(context);
  return status;
}

static void test_size_limit(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(growing);
  /* 64 * 64 * 4 = 16384 bytes from 4: over a 16000-byte limit, not folded. */
  KILN_ASSERT_OK(run_with_limit(m, "16000"));
  assert_int_equal(pf_count(m, &kiln_op_broadcast_to), 1);
  KILN_ASSERT_OK(run_with_limit(m, "16384"));
  assert_int_equal(pf_count(m, &kiln_op_broadcast_to), 0);
  assert_int_equal(pf_count(m, NULL), 1);
  KILN_ASSERT_STATUS(run_with_limit(m, "lots"), INVALID_ARGUMENT,
                     "option fold_constant.max_bytes = \"lots\" is not an integer");
  KILN_ASSERT_STATUS(run_with_limit(m, "-1"), INVALID_ARGUMENT,
                     "fold_constant: option fold_constant.max_bytes = -1 is negative");
  kiln_module_destroy(m);
}

static void test_kernel_error_names_the_node(void **state) {
  (void)state;
  /* An index out of range is the graph's error, not something to skip. */
  kiln_module_t *m = pf_parse("def @main() {\n"
                              "  gather(meta[Constant][0], meta[Constant][1])\n"
                              "}\n"
                              "#[metadata]\n"
                              "Constant[0] = Tensor[(1), int64] [4]\n"
                              "Constant[1] = Tensor[(1), int64] [3]\n");
  KILN_ASSERT_STATUS(pf_run_pass(m, "fold_constant"), OUT_OF_RANGE,
                     "fold_constant: in @main: at gather: ");
  kiln_module_destroy(m);
  /* An integer division by zero folds to 0, as it runs compiled
   * (base/scalar_ops.h). */
  m = pf_parse("def @main() {\n"
               "  divide(meta[Constant][0], meta[Constant][1])\n"
               "}\n"
               "#[metadata]\n"
               "Constant[0] = Tensor[(1), int64] [4]\n"
               "Constant[1] = Tensor[(1), int64] [0]\n");
  KILN_ASSERT_OK(pf_run_pass(m, "fold_constant"));
  assert_int_equal(pf_count(m, &kiln_op_divide), 0);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(chain, "fold_constant") > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chain_folds_to_one_constant),
      cmocka_unit_test(test_chain_keeps_numbers),
      cmocka_unit_test(test_precompute_prune_with_bound_params),
      cmocka_unit_test(test_size_limit),
      cmocka_unit_test(test_kernel_error_names_the_node),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
