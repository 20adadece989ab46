/*
 * Every built-in workload through the text format: `kiln show`'s text of the
 * real networks parses back to a module that verifies and prints the same
 * bytes (the text-format tests use small hand-built modules; these are the
 * graphs users see).
 */
#include <stdbool.h>

#include "frontend/testing/workloads.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "kiln_test.h"

static void round_trip(const char *name, bool bind) {
  kiln_allocator_t allocator = kiln_allocator_system();
  kiln_params_t params;
  kiln_params_initialize(&params, allocator);
  kiln_workload_options_t options = kiln_workload_options_default();
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_workload_build(name, &options, allocator, &params, &module));
  if (bind)
    KILN_ASSERT_OK(kiln_ir_bind_params(module, "main", &params));
  kiln_ir_print_options_t print = {.include_metadata = true};
  kiln_strbuf_t first, second;
  kiln_strbuf_initialize(&first, allocator);
  kiln_strbuf_initialize(&second, allocator);
  KILN_ASSERT_OK(kiln_ir_print_module(module, &print, &first));
  kiln_module_t *parsed = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module(name, kiln_strbuf_c_str(&first), allocator, &parsed));
  KILN_ASSERT_OK(kiln_ir_verify(parsed));
  KILN_ASSERT_OK(kiln_ir_print_module(parsed, &print, &second));
  assert_string_equal(kiln_strbuf_c_str(&first), kiln_strbuf_c_str(&second));
  assert_int_equal(kiln_module_get_function(parsed, "main")->num_params,
                   bind ? 1 : (int)kiln_params_count(&params) + 1);
  kiln_strbuf_deinitialize(&first);
  kiln_strbuf_deinitialize(&second);
  kiln_module_destroy(parsed);
  kiln_module_destroy(module);
  kiln_params_deinitialize(&params);
}

static void test_every_workload_round_trips_through_text(void **state) {
  (void)state;
  for (const char *const *name = kiln_workload_names(); *name != NULL; name++) {
    round_trip(*name, false);
  }
}

/* With the weights bound, the metadata section carries every value. */
static void test_bound_weights_round_trip_through_metadata(void **state) {
  (void)state;
  round_trip("mlp", true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_workload_round_trips_through_text),
      cmocka_unit_test(test_bound_weights_round_trip_through_metadata),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
