/*
 * remove_unused_functions: functions main cannot reach go, callees (to any
 * depth, primitive or not) stay, the module order is kept; the entry
 * option; a missing entry is an error naming it; allocation failures.
 */
#include "ir/infer.h"
#include "pass_fixture.h"

/* main calls @used, which calls @deep; @unused and @also_unused are alone. */
static kiln_module_t *build(kiln_allocator_t allocator) {
  (void)allocator;
  kiln_module_t *m = irt_module();
  kiln_var_t *p = irt_var(m, "p", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_function_t *deep =
      irt_add_function(m, "deep", 1, &p, IRT_CALL(m, "nn.relu", NULL, &p->base));
  deep->primitive = true;
  kiln_var_t *q = irt_var(m, "q", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_call_t *call_deep = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, deep, 1, (kiln_expr_t *[]){&q->base}, &call_deep));
  kiln_function_t *used = irt_add_function(m, "used", 1, &q, &call_deep->base);
  kiln_var_t *r = irt_var(m, "r", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "unused", 1, &r, IRT_CALL(m, "exp", NULL, &r->base));
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_call_t *call_used = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, used, 1, (kiln_expr_t *[]){&x->base}, &call_used));
  irt_add_function(m, "main", 1, &x, &call_used->base);
  kiln_var_t *s = irt_var(m, "s", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "also_unused", 1, &s, &s->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  return m;
}

static void assert_names(const kiln_module_t *m, const char *const *names, int count) {
  assert_int_equal(kiln_module_function_count(m), count);
  for (int i = 0; i < count; ++i) {
    assert_string_equal(kiln_module_function_name(m, i), names[i]);
  }
}

static void test_unreached_functions_are_removed(void **state) {
  (void)state;
  kiln_module_t *m = build(kiln_allocator_system());
  assert_int_equal(kiln_module_function_count(m), 5);
  KILN_ASSERT_OK(pf_run_pass(m, "remove_unused_functions"));
  assert_names(m, (const char *const[]){"deep", "used", "main"}, 3);
  KILN_ASSERT_OK(pf_run_pass(m, "remove_unused_functions")); /* nothing more to do */
  assert_int_equal(kiln_module_function_count(m), 3);
  kiln_module_destroy(m);
}

static kiln_status_t run_with_entry(kiln_module_t *m, const char *entry) {
  const kiln_pass_t *pass = &kiln_pass_remove_unused_functions;
  kiln_pass_context_t *context = pf_context(1);
  kiln_pass_context_set_verify(context, false); /* the verifier wants a main */
  kiln_status_t status =
      kiln_pass_context_set_option(context, "remove_unused_functions.entry", entry);
  status = status ? status : kiln_pass_sequential_run(m, context, &pass, 1);
  kiln_pass_context_destroy(context);
  return status;
}

static void test_entry_option_and_missing_entry(void **state) {
  (void)state;
  kiln_module_t *m = build(kiln_allocator_system());
  KILN_ASSERT_OK(run_with_entry(m, "used"));
  assert_names(m, (const char *const[]){"deep", "used"}, 2);
  KILN_ASSERT_STATUS(run_with_entry(m, "nope"), NOT_FOUND,
                     "remove_unused_functions: the module has no entry function @nope");
  kiln_module_destroy(m);
}

static kiln_status_t scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_parse_module("test",
                           "def @a(%x: Tensor[(2), float32]) { nn.relu(%x) }\n"
                           "def @main(%x: Tensor[(2), float32]) {\n"
                           "  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { exp(%p) };\n"
                           "  %0(%x)\n"
                           "}\n",
                           allocator, &m));
  kiln_status_t status = pf_run_pass(m, "remove_unused_functions");
  if (!status && kiln_module_function_count(m) != 1) {
    status = KILN_STATUS(INTERNAL, "expected one function, got %d", kiln_module_function_count(m));
  }
  kiln_module_destroy(m);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(scenario, NULL) > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unreached_functions_are_removed),
      cmocka_unit_test(test_entry_option_and_missing_entry),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
