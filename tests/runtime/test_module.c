/*
 * Tests of in-memory runtime modules (include/kiln/module.h): functions
 * found by name and called with tensors through the packed convention, a
 * failing kernel's last error in the status, a missing function, the
 * owner released with the last reference, bad entries, and an
 * allocation-failure sweep. Shared-library modules are tested with the C
 * backend (tests/codegen/).
 */
#include <string.h>

#include "kiln/module.h"
#include "kiln_test.h"

/* Doubles a float32 tensor in place. */
static int double_it(const kiln_value_t *args, const int *type_codes, int num_args,
                     kiln_value_t *ret, int *ret_tcode, void *resource) {
  (void)ret;
  (void)ret_tcode;
  (void)resource;
  if (num_args != 1 || type_codes[0] != KILN_ARG_DLTENSOR) {
    kiln_backend_set_last_error("expected one tensor");
    return -1;
  }
  DLTensor *t = args[0].v_handle;
  float *data = t->data;
  for (int64_t i = 0; i < t->shape[0]; ++i) {
    data[i] *= 2.0f;
  }
  return 0;
}

static int always_fails(const kiln_value_t *args, const int *type_codes, int num_args,
                        kiln_value_t *ret, int *ret_tcode, void *resource) {
  (void)args;
  (void)type_codes;
  (void)num_args;
  (void)ret;
  (void)ret_tcode;
  (void)resource;
  kiln_backend_set_last_error("always_fails: argument 0 has shape (3,), expected (4,)");
  return -1;
}

static void count_release(void *owner) {
  ++*(int *)owner;
}

static const kiln_runtime_module_entry_t entries[] = {{"double_it", double_it},
                                                      {"always_fails", always_fails}};

static void test_in_memory_module(void **state) {
  (void)state;
  int released = 0;
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_create_in_memory(kiln_allocator_system(), "kernels", 2,
                                                      entries, count_release, &released, &module));
  assert_string_equal(kiln_runtime_module_path(module), "kernels");
  const int64_t shape[] = {3};
  const float values[] = {1.0f, -2.5f, 4.0f};
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape,
                                         values, sizeof(values), &t));
  KILN_ASSERT_OK(kiln_runtime_module_call(module, "double_it", 1, &t));
  const float doubled[] = {2.0f, -5.0f, 8.0f};
  assert_memory_equal(kiln_tensor_data(t), doubled, sizeof(doubled));
  KILN_ASSERT_STATUS(kiln_runtime_module_call(module, "always_fails", 1, &t), INTERNAL,
                     "always_fails: argument 0 has shape (3,), expected (4,)");
  /* A message that does not name the function gets the name in front. */
  KILN_ASSERT_STATUS(kiln_runtime_module_call(module, "double_it", 0, NULL), INTERNAL,
                     "double_it: expected one tensor");
  KILN_ASSERT_STATUS(kiln_runtime_module_call(module, "missing", 1, &t), NOT_FOUND,
                     "function missing is not in module kernels");
  kiln_packed_fn fn = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_get_function(module, "double_it", &fn));
  assert_true(fn == double_it);
  kiln_runtime_module_retain(module);
  kiln_runtime_module_release(module);
  assert_int_equal(released, 0);
  kiln_runtime_module_release(module);
  assert_int_equal(released, 1);
  kiln_tensor_release(t);
}

static void test_bad_entries(void **state) {
  (void)state;
  kiln_runtime_module_t *module = NULL;
  const kiln_runtime_module_entry_t bad[] = {{"double_it", double_it}, {"nothing", NULL}};
  KILN_ASSERT_STATUS(kiln_runtime_module_create_in_memory(kiln_allocator_system(), "kernels", 2,
                                                          bad, NULL, NULL, &module),
                     INVALID_ARGUMENT, "module kernels: entry 1 has no name or no function");
  assert_null(module);
  KILN_ASSERT_STATUS(kiln_runtime_module_create_in_memory(kiln_allocator_system(), NULL, 0, NULL,
                                                          NULL, NULL, &module),
                     INVALID_ARGUMENT, "a name and 0 entries are needed");
  /* No entries is a valid (empty) module. */
  KILN_ASSERT_OK(kiln_runtime_module_create_in_memory(kiln_allocator_system(), "empty", 0, NULL,
                                                      NULL, NULL, &module));
  kiln_packed_fn fn = NULL;
  KILN_ASSERT_STATUS(kiln_runtime_module_get_function(module, "double_it", &fn), NOT_FOUND,
                     "function double_it is not in module empty");
  kiln_runtime_module_release(module);
}

/* One source per format, replaced only by the same format, up to
 * KILN_RUNTIME_MODULE_MAX_SOURCES formats. */
static void test_sources(void **state) {
  (void)state;
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_create_in_memory(kiln_allocator_system(), "kernels", 2,
                                                      entries, NULL, NULL, &module));
  assert_null(kiln_runtime_module_source(module, "ll"));
  KILN_ASSERT_OK(kiln_runtime_module_set_source(module, "ll", "define void @f()"));
  KILN_ASSERT_OK(kiln_runtime_module_set_source(module, "asm", "f:"));
  KILN_ASSERT_OK(kiln_runtime_module_set_source(module, "ll", "define void @g()"));
  assert_string_equal(kiln_runtime_module_source(module, "ll"), "define void @g()");
  assert_string_equal(kiln_runtime_module_source(module, "asm"), "f:");
  KILN_ASSERT_OK(kiln_runtime_module_set_source(module, "c", "int x;"));
  KILN_ASSERT_OK(kiln_runtime_module_set_source(module, "h", "int y;"));
  KILN_ASSERT_STATUS(kiln_runtime_module_set_source(module, "json", "{}"), INVALID_ARGUMENT,
                     "module kernels: cannot keep a json source: it keeps 4 formats");
  assert_null(kiln_runtime_module_source(module, "json"));
  assert_string_equal(kiln_runtime_module_source(module, "h"), "int y;");
  kiln_runtime_module_release(module);
}

static kiln_status_t create_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_runtime_module_create_in_memory(allocator, "kernels", 2, entries, NULL, NULL, &module));
  kiln_status_t status = kiln_runtime_module_set_source(module, "c", "int x;");
  kiln_runtime_module_release(module);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(create_scenario, NULL) >= 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_in_memory_module),
      cmocka_unit_test(test_bad_entries),
      cmocka_unit_test(test_sources),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
