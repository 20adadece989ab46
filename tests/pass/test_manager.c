/*
 * The pass manager (pass/pass.h): Sequential's opt_level, disabled and
 * required passes, a pass's own requirements running first and once, the
 * instruments, the verifier between passes, errors prefixed by the pass, the
 * options, and the registry's lookup.
 */
#include <string.h>

#include "kiln_ir_test.h"
#include "pass/passes.h"

/* A log of the passes that ran, shared by the test passes below. */
static char ran[256];

static void log_pass(const char *name) {
  strncat(ran, name, sizeof(ran) - strlen(ran) - 2);
  strncat(ran, " ", sizeof(ran) - strlen(ran) - 1);
}

/* A module with main(x) = relu(x), types not inferred. */
static kiln_module_t *relu_module(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_expr_t *y = IRT_CALL(m, "nn.relu", NULL, &x->base);
  irt_add_function(m, "main", 1, &x, y);
  return m;
}

static kiln_status_t level1_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)module;
  (void)context;
  log_pass("level1");
  return KILN_OK;
}

static kiln_status_t level3_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)module;
  (void)context;
  log_pass("level3");
  return KILN_OK;
}

/* Needs types: fails when infer_type did not run before it. */
static kiln_status_t typed_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)context;
  log_pass("typed");
  kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  if (!main_fn->body->checked_type) {
    return KILN_STATUS(FAILED_PRECONDITION, "types were not inferred");
  }
  return KILN_OK;
}

static kiln_status_t failing_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)module;
  (void)context;
  return KILN_STATUS(INTERNAL, "something broke");
}

/* Replaces main's body by a variable that is not a parameter. */
static kiln_status_t breaking_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)context;
  kiln_var_t *stray = irt_var(module, "stray", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  main_fn->body = &stray->base;
  return KILN_OK;
}

static const char *const needs_types[] = {"infer_type", NULL};
static const char *const needs_unknown[] = {"no_such_pass", NULL};

static const kiln_pass_t level1 = {.info = {"level1", 1, NULL}, .run = level1_run};
static const kiln_pass_t level3 = {.info = {"level3", 3, NULL}, .run = level3_run};
static const kiln_pass_t typed = {.info = {"typed", 0, needs_types}, .run = typed_run};
static const kiln_pass_t failing = {.info = {"failing", 0, NULL}, .run = failing_run};
static const kiln_pass_t breaking = {.info = {"breaking", 0, NULL}, .run = breaking_run};
static const kiln_pass_t unknown_requirement = {.info = {"needs_unknown", 0, needs_unknown},
                                                .run = level1_run};

static kiln_pass_context_t *context_at(int opt_level) {
  kiln_pass_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_pass_context_create(kiln_allocator_system(), opt_level, &context));
  return context;
}

static void run_and_log(kiln_module_t *m, kiln_pass_context_t *context,
                        const kiln_pass_t *const *passes, int n) {
  ran[0] = '\0';
  KILN_ASSERT_OK(kiln_pass_sequential_run(m, context, passes, n));
}

static void test_opt_level_skips_passes(void **state) {
  (void)state;
  kiln_module_t *m = relu_module();
  const kiln_pass_t *passes[] = {&level1, &level3};
  for (int level = 0; level <= 3; ++level) {
    kiln_pass_context_t *context = context_at(level);
    assert_int_equal(kiln_pass_context_opt_level(context), level);
    run_and_log(m, context, passes, 2);
    const char *want[] = {"", "level1 ", "level1 ", "level1 level3 "};
    assert_string_equal(ran, want[level]);
    kiln_pass_context_destroy(context);
  }
  kiln_module_destroy(m);
}

static void test_disabled_and_required(void **state) {
  (void)state;
  kiln_module_t *m = relu_module();
  const kiln_pass_t *passes[] = {&level1, &typed};
  kiln_pass_context_t *context = context_at(2);
  /* Disabling names a registered pass; the test passes are not registered. */
  KILN_ASSERT_STATUS(kiln_pass_context_disable(context, "level1"), NOT_FOUND,
                     "no pass named \"level1\"; the passes are: infer_type");
  KILN_ASSERT_OK(kiln_pass_context_disable(context, "infer_type"));
  /* typed still gets its requirement: requirements are not subject to disabling. */
  run_and_log(m, context, passes, 2);
  assert_string_equal(ran, "level1 typed ");
  kiln_pass_context_destroy(context);

  /* Required by the context: runs at opt_level 0 even though disabled. */
  context = context_at(0);
  KILN_ASSERT_OK(kiln_pass_context_disable(context, "infer_type"));
  KILN_ASSERT_OK(kiln_pass_context_require(context, "infer_type"));
  KILN_ASSERT_OK(kiln_pass_context_require(context, "infer_type")); /* once */
  kiln_module_t *m2 = relu_module();
  const kiln_pass_t *infer_only[] = {&kiln_pass_infer_type};
  KILN_ASSERT_OK(kiln_pass_sequential_run(m2, context, infer_only, 1));
  assert_non_null(kiln_module_get_function(m2, "main")->body->checked_type);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m2);
  kiln_module_destroy(m);
}

typedef struct instrument_log_t {
  int before;
  int after;
  char names[128];
  double seconds;
} instrument_log_t;

static void instrument_before(void *user, const kiln_pass_t *pass, const kiln_module_t *module) {
  (void)module;
  instrument_log_t *log = user;
  log->before++;
  strncat(log->names, pass->info.name, sizeof(log->names) - strlen(log->names) - 2);
  strncat(log->names, ",", sizeof(log->names) - strlen(log->names) - 1);
}

static void instrument_after(void *user, const kiln_pass_t *pass, const kiln_module_t *module,
                             kiln_status_t status, double seconds) {
  (void)pass;
  (void)module;
  instrument_log_t *log = user;
  log->after += status == KILN_OK;
  log->seconds += seconds;
}

static void test_requirements_run_once_first_with_instruments(void **state) {
  (void)state;
  kiln_module_t *m = relu_module();
  kiln_pass_context_t *context = context_at(0);
  instrument_log_t log = {0};
  const kiln_pass_instrument_t instrument = {&log, instrument_before, instrument_after};
  KILN_ASSERT_OK(kiln_pass_context_add_instrument(context, &instrument));
  const kiln_pass_t *passes[] = {&typed, &level3, &typed};
  run_and_log(m, context, passes, 3);
  assert_string_equal(ran, "typed typed ");
  /* infer_type ran once, before the first pass needing it; level3 was skipped. */
  assert_string_equal(log.names, "infer_type,typed,typed,");
  assert_int_equal(log.before, 3);
  assert_int_equal(log.after, 3);
  assert_true(log.seconds >= 0.0 && log.seconds < 10.0);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static void test_errors_name_the_pass(void **state) {
  (void)state;
  kiln_module_t *m = relu_module();
  kiln_pass_context_t *context = context_at(3);
  const kiln_pass_t *fail[] = {&level1, &failing, &level3};
  ran[0] = '\0';
  KILN_ASSERT_STATUS(kiln_pass_sequential_run(m, context, fail, 3), INTERNAL,
                     "failing: something broke");
  assert_string_equal(ran, "level1 "); /* nothing after the failure */
  const kiln_pass_t *unknown[] = {&unknown_requirement};
  KILN_ASSERT_STATUS(kiln_pass_sequential_run(m, context, unknown, 1), NOT_FOUND,
                     "required by pass needs_unknown: no pass named \"no_such_pass\"");

  /* The verifier between passes catches IR a pass broke, naming the pass. */
  const kiln_pass_t *broken[] = {&kiln_pass_infer_type, &breaking};
  KILN_ASSERT_OK(kiln_pass_sequential_run(m, context, broken, 1));
  kiln_pass_context_set_verify(context, true);
  KILN_ASSERT_STATUS(kiln_pass_sequential_run(m, context, broken, 2), INVALID_ARGUMENT,
                     "IR after pass breaking: ");
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static void test_options(void **state) {
  (void)state;
  kiln_pass_context_t *context = context_at(2);
  assert_string_equal(kiln_pass_context_option(context, "fuse_ops.max_depth", "256"), "256");
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fuse_ops.max_depth", "8"));
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fuse_ops.max_depth", "12"));
  KILN_ASSERT_OK(kiln_pass_context_set_option(context, "fast_math", "x1"));
  assert_string_equal(kiln_pass_context_option(context, "fuse_ops.max_depth", "256"), "12");
  int64_t value = 0;
  KILN_ASSERT_OK(kiln_pass_context_option_int(context, "fuse_ops.max_depth", 256, &value));
  assert_int_equal(value, 12);
  KILN_ASSERT_OK(kiln_pass_context_option_int(context, "absent", -5, &value));
  assert_int_equal(value, -5);
  KILN_ASSERT_STATUS(kiln_pass_context_option_int(context, "fast_math", 0, &value),
                     INVALID_ARGUMENT, "option fast_math = \"x1\" is not an integer");
  kiln_pass_context_destroy(context);

  kiln_pass_context_t *bad = NULL;
  KILN_ASSERT_STATUS(kiln_pass_context_create(kiln_allocator_system(), 4, &bad), INVALID_ARGUMENT,
                     "opt_level 4 is out of range: expected 0 to 3");
  assert_null(bad);
  const kiln_pass_t *found = NULL;
  KILN_ASSERT_OK(kiln_pass_find("infer_type", &found));
  assert_ptr_equal(found, &kiln_pass_infer_type);
}

static kiln_status_t context_scenario(kiln_allocator_t allocator, void *unused) {
  (void)unused;
  kiln_pass_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_context_create(allocator, 2, &context));
  kiln_status_t status = kiln_pass_context_set_option(context, "a", "1");
  if (!status) {
    status = kiln_pass_context_set_option(context, "a", "2");
  }
  if (!status) {
    status = kiln_pass_context_disable(context, "infer_type");
  }
  if (!status) {
    status = kiln_pass_context_require(context, "infer_type");
  }
  if (!status) {
    const kiln_pass_instrument_t instrument = {NULL, NULL, NULL};
    status = kiln_pass_context_add_instrument(context, &instrument);
  }
  kiln_pass_context_destroy(context);
  return status;
}

static void test_context_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(context_scenario, NULL) >= 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opt_level_skips_passes),
      cmocka_unit_test(test_disabled_and_required),
      cmocka_unit_test(test_requirements_run_once_first_with_instruments),
      cmocka_unit_test(test_errors_name_the_pass),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_context_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
