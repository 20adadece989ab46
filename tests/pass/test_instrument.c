/*
 * The timer and IR printer instruments, and the default pipeline: which
 * passes run at each opt_level (timer names, in order), the timer's table,
 * a failing pass marked in it, the printer before and after each pass and
 * only after a named one, a write error kept and reported once, and
 * allocation failures in a fully instrumented run.
 */
#include "pass/instrument.h"
#include "pass/pipeline.h"
#include "pass_fixture.h"

static const char *const bn_text =
    "def @main(%x: Tensor[(1, 2, 2, 2), float32]) {\n"
    "  nn.batch_norm(%x, meta[Constant][0], meta[Constant][0], meta[Constant][0], "
    "meta[Constant][0])\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(2), float32] [1, 2]\n";

static void run_timed(int opt_level, kiln_pass_timer_t *timer) {
  kiln_module_t *m = pf_parse(bn_text);
  kiln_pass_context_t *context = pf_context(opt_level);
  kiln_pass_instrument_t instrument = kiln_pass_timer_instrument(timer);
  KILN_ASSERT_OK(kiln_pass_context_add_instrument(context, &instrument));
  KILN_ASSERT_OK(kiln_pass_run_default_pipeline(m, context));
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static void assert_ran(const kiln_pass_timer_t *timer, const char *const *names, size_t count) {
  assert_int_equal(kiln_pass_timer_count(timer), count);
  for (size_t i = 0; i < count; ++i) {
    assert_string_equal(kiln_pass_timer_at(timer, i)->name, names[i]);
    assert_false(kiln_pass_timer_at(timer, i)->failed);
    assert_true(kiln_pass_timer_at(timer, i)->seconds >= 0.0);
  }
}

static void test_pipeline_by_opt_level(void **state) {
  (void)state;
  const kiln_pass_t *const *passes = NULL;
  int count = 0;
  kiln_pass_default_pipeline(&passes, &count);
  assert_true(count >= 8);
  assert_string_equal(passes[0]->info.name, "infer_type");
  const char *const level0[] = {"infer_type", "simplify_inference", "split_args"};
  const char *const level1[] = {"infer_type", "remove_unused_functions", "simplify_inference",
                                "dead_code_elimination", "split_args"};
  const char *const level2[] = {"infer_type",    "remove_unused_functions", "simplify_inference",
                                "fold_constant", "dead_code_elimination",   "split_args"};
  const char *const level3[] = {"infer_type",
                                "remove_unused_functions",
                                "simplify_inference",
                                "eliminate_common_subexpr",
                                "fold_constant",
                                "matmul_to_dense",
                                "rewrite_layer_norm",
                                "strength_reduce",
                                "fold_scale_axis",
                                "canonicalize_ops",
                                "pad_channels",
                                "pack_dense",
                                "dead_code_elimination",
                                "split_args"};
  const char *const *want[] = {level0, level1, level2, level3};
  size_t want_count[] = {3, 5, 6, 14};
  for (int level = 0; level <= 3; ++level) {
    kiln_pass_timer_t timer;
    kiln_pass_timer_initialize(&timer, kiln_allocator_system());
    run_timed(level, &timer);
    assert_ran(&timer, want[level], want_count[level]);
    kiln_pass_timer_deinitialize(&timer);
  }
}

static void test_timer_table(void **state) {
  (void)state;
  kiln_pass_timer_t timer;
  kiln_pass_timer_initialize(&timer, kiln_allocator_system());
  run_timed(0, &timer);
  double total = kiln_pass_timer_total(&timer);
  assert_true(total >= kiln_pass_timer_at(&timer, 0)->seconds);
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_pass_timer_format(&timer, &sb));
  const char *table = kiln_strbuf_c_str(&sb);
  assert_non_null(strstr(table, "pass "));
  assert_non_null(strstr(table, "seconds"));
  assert_non_null(strstr(table, "\ninfer_type "));
  assert_non_null(strstr(table, "\nsimplify_inference "));
  assert_non_null(strstr(table, "\ntotal "));
  assert_non_null(strstr(table, "100.0%"));
  kiln_strbuf_deinitialize(&sb);
  kiln_pass_timer_deinitialize(&timer);
}

static kiln_status_t failing_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)module;
  (void)context;
  return KILN_STATUS(INTERNAL, "broken on purpose");
}

static void test_timer_marks_failed_pass(void **state) {
  (void)state;
  static const kiln_pass_t failing = {.info = {"failing", 0, NULL}, .run = failing_run};
  const kiln_pass_t *passes[] = {&kiln_pass_infer_type, &failing};
  kiln_module_t *m = pf_parse(bn_text);
  kiln_pass_context_t *context = pf_context(0);
  kiln_pass_timer_t timer;
  kiln_pass_timer_initialize(&timer, kiln_allocator_system());
  kiln_pass_instrument_t instrument = kiln_pass_timer_instrument(&timer);
  KILN_ASSERT_OK(kiln_pass_context_add_instrument(context, &instrument));
  KILN_ASSERT_STATUS(kiln_pass_sequential_run(m, context, passes, 2), INTERNAL,
                     "failing: broken on purpose");
  assert_int_equal(kiln_pass_timer_count(&timer), 2);
  assert_true(kiln_pass_timer_at(&timer, 1)->failed);
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_pass_timer_format(&timer, &sb));
  assert_non_null(strstr(kiln_strbuf_c_str(&sb), "(failed)"));
  kiln_strbuf_deinitialize(&sb);
  kiln_pass_timer_deinitialize(&timer);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static char *print_run(const char *only_after, int *out_printed) {
  kiln_module_t *m = pf_parse(bn_text);
  kiln_pass_context_t *context = pf_context(0);
  FILE *out = tmpfile();
  assert_non_null(out);
  kiln_pass_printer_t printer;
  kiln_pass_printer_initialize(&printer, out, only_after, kiln_allocator_system());
  kiln_pass_instrument_t instrument = kiln_pass_printer_instrument(&printer);
  KILN_ASSERT_OK(kiln_pass_context_add_instrument(context, &instrument));
  KILN_ASSERT_OK(kiln_pass_run_default_pipeline(m, context));
  KILN_ASSERT_OK(kiln_pass_printer_finish(&printer));
  *out_printed = printer.printed;
  long size = ftell(out);
  char *text = calloc((size_t)size + 1, 1);
  rewind(out);
  assert_int_equal(fread(text, 1, (size_t)size, out), (size_t)size);
  fclose(out);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
  return text;
}

static void test_printer_before_and_after(void **state) {
  (void)state;
  int printed = 0;
  char *text = print_run(NULL, &printed);
  assert_int_equal(printed, 6); /* three passes at opt_level 0 */
  const char *before = strstr(text, "// before simplify_inference\n");
  const char *after = strstr(text, "// after simplify_inference\n");
  assert_non_null(strstr(text, "// before infer_type\n"));
  assert_non_null(before);
  assert_non_null(after);
  assert_true(before < after);
  const char *batch_norm = strstr(before, "nn.batch_norm(");
  assert_true(batch_norm && batch_norm < after); /* before: the batch norm */
  assert_null(strstr(after, "nn.batch_norm("));  /* after: gone */
  assert_non_null(strstr(after, "multiply(%x, meta[Constant]"));
  free(text);
}

static void test_printer_only_after_one_pass(void **state) {
  (void)state;
  int printed = 0;
  char *text = print_run("simplify_inference", &printed);
  assert_int_equal(printed, 1);
  const char *head = "// after simplify_inference\ndef @main(";
  assert_true(strncmp(text, head, strlen(head)) == 0);
  free(text);
  text = print_run("fold_constant", &printed); /* does not run at opt_level 0 */
  assert_int_equal(printed, 0);
  assert_string_equal(text, "");
  free(text);
}

static void test_printer_write_error(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(bn_text);
  kiln_pass_context_t *context = pf_context(0);
  FILE *read_only = fopen("/dev/null", "r");
  assert_non_null(read_only);
  kiln_pass_printer_t printer;
  kiln_pass_printer_initialize(&printer, read_only, NULL, kiln_allocator_system());
  kiln_pass_instrument_t instrument = kiln_pass_printer_instrument(&printer);
  KILN_ASSERT_OK(kiln_pass_context_add_instrument(context, &instrument));
  KILN_ASSERT_OK(kiln_pass_run_default_pipeline(m, context)); /* instruments never fail a run */
  KILN_ASSERT_STATUS(kiln_pass_printer_finish(&printer), IO_ERROR,
                     "IR printer: before infer_type: writing ");
  KILN_ASSERT_OK(kiln_pass_printer_finish(&printer)); /* reported once */
  assert_int_equal(printer.printed, 0);
  fclose(read_only);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

/* The pipeline at opt_level 3 with both instruments, printing to a scratch file. */
static kiln_status_t instrumented_scenario(kiln_allocator_t allocator, void *user) {
  (void)user;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_parse_module("test", bn_text, allocator, &m));
  kiln_pass_context_t *context = NULL;
  kiln_status_t status = kiln_pass_context_create(allocator, 3, &context);
  kiln_pass_timer_t timer;
  kiln_pass_timer_initialize(&timer, allocator);
  kiln_pass_printer_t printer;
  FILE *out = tmpfile();
  kiln_pass_printer_initialize(&printer, out, NULL, allocator);
  kiln_pass_instrument_t instruments[] = {kiln_pass_timer_instrument(&timer),
                                          kiln_pass_printer_instrument(&printer)};
  for (int i = 0; i < 2 && !status; ++i) {
    status = kiln_pass_context_add_instrument(context, &instruments[i]);
  }
  status = status ? status : kiln_pass_run_default_pipeline(m, context);
  kiln_status_t printed = kiln_pass_printer_finish(&printer);
  status = status ? (kiln_status_free(printed), status) : printed;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_status_t formatted = kiln_pass_timer_format(&timer, &sb);
  status = status ? (kiln_status_free(formatted), status) : formatted;
  kiln_strbuf_deinitialize(&sb);
  fclose(out);
  kiln_pass_timer_deinitialize(&timer);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(instrumented_scenario, NULL) > 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipeline_by_opt_level),
      cmocka_unit_test(test_timer_table),
      cmocka_unit_test(test_timer_marks_failed_pass),
      cmocka_unit_test(test_printer_before_and_after),
      cmocka_unit_test(test_printer_only_after_one_pass),
      cmocka_unit_test(test_printer_write_error),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
