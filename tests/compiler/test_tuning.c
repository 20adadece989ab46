/*
 * Tuning (compiler/tuning.h, compiler/tune_measure.h, kiln/tune.h): records
 * written, appended and read back with the best per task, records of
 * other targets and versions counted and ignored, a line cut short by a
 * killed writer skipped and the next record kept on its own line, bad
 * records refused naming the line; a compile that uses a record (the
 * kernel's key gets the configuration, the numbers stay the same); the
 * measurement surviving a candidate that times out or cannot be built;
 * and a short kiln_tune run whose records a compile then takes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/build.h"
#include "compiler/tune_measure.h"
#include "compiler/tuning.h"
#include "kiln/tune.h"
#include "kiln/version.h"
#include "kiln_test.h"

static char *temp_file(const char *name) {
  char *dir = kiln_test_make_temp_dir();
  char *path = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", dir, name);
  free(dir);
  return path;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static kiln_tuning_record_t record(const char *task, const char *target, const char *config,
                                   double ms) {
  kiln_tuning_record_t r = {.task = task,
                            .kernel = "fused_nn_dense",
                            .target = target,
                            .version = kiln_version_string(),
                            .time_ms = ms,
                            .default_ms = 1.0};
  KILN_ASSERT_OK(kiln_schedule_config_parse(config, &r.config));
  return r;
}

static void test_best_per_task(void **state) {
  (void)state;
  char *path = temp_file("records.json");
  kiln_tuning_record_t rows[] = {
      record("aaaa", "llvm", "gemm tile_rows=8 tile_cols=32 columns_outer=1", 1.0),
      record("aaaa", "llvm", "gemm tile_rows=4 tile_cols=64 columns_outer=1", 0.5),
      record("aaaa", "llvm", "gemm tile_rows=2 tile_cols=64 columns_outer=0", 0.7),
      record("bbbb", "llvm", "gemm tile_rows=1 tile_cols=16 columns_outer=0", 0.1),
      record("aaaa", "c", "gemm tile_rows=1 tile_cols=16 columns_outer=0", 0.01),
  };
  for (int i = 0; i < 5; ++i) {
    KILN_ASSERT_OK(kiln_tuning_append(path, &rows[i]));
  }
  kiln_tuning_record_t old = rows[3];
  old.version = "0.0.1";
  old.time_ms = 0.001;
  KILN_ASSERT_OK(kiln_tuning_append(path, &old));
  kiln_tuning_t *t = NULL;
  KILN_ASSERT_OK(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t));
  const kiln_schedule_config_t *best = kiln_tuning_find(t, "aaaa");
  assert_non_null(best);
  assert_true(kiln_schedule_config_equal(best, &rows[1].config));
  assert_true(kiln_schedule_config_equal(kiln_tuning_find(t, "bbbb"), &rows[3].config));
  assert_null(kiln_tuning_find(t, "cccc"));
  int tasks = 0, other_target = 0, other_version = 0;
  kiln_tuning_counts(t, &tasks, &other_target, &other_version);
  assert_int_equal(tasks, 2);
  assert_int_equal(other_target, 1);
  assert_int_equal(other_version, 1);
  kiln_tuning_destroy(t);
  free(path);
}

/* A writer killed mid-line: the cut line is skipped and the next record
 * starts a line of its own. */
static void test_cut_line(void **state) {
  (void)state;
  char *path = temp_file("records.json");
  write_text(path, "{\"task\": \"aaaa\", \"kernel\": \"k\", \"tar");
  kiln_tuning_record_t r =
      record("bbbb", "llvm", "gemm tile_rows=2 tile_cols=16 columns_outer=0", 0.3);
  KILN_ASSERT_OK(kiln_tuning_append(path, &r));
  kiln_tuning_t *t = NULL;
  KILN_ASSERT_OK(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t));
  assert_non_null(kiln_tuning_find(t, "bbbb"));
  assert_null(kiln_tuning_find(t, "aaaa"));
  kiln_tuning_destroy(t);
  free(path);
}

static void test_bad_records(void **state) {
  (void)state;
  char *path = temp_file("records.json");
  kiln_tuning_t *t = NULL;
  write_text(path, "\n{\"task\": \"a\", \"kernel\": \"k\", \"target\": \"llvm\", \"kiln\": \"0\", "
                   "\"config\": \"gemm tile_rows=1\", \"time_ms\": 1, \"default_ms\": 1}\n");
  KILN_ASSERT_STATUS(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t), INVALID_ARGUMENT,
                     "line 2: schedule config 'gemm tile_rows=1': knob tile_cols is missing");
  write_text(path, "{\"task\": \"a\", \"kernel\": \"k\", \"target\": \"llvm\", \"kiln\": \"0\", "
                   "\"config\": \"gemm tile_rows=1 tile_cols=0 columns_outer=2\", \"time_ms\": 1, "
                   "\"default_ms\": 1}\n");
  KILN_ASSERT_STATUS(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t), INVALID_ARGUMENT,
                     "line 1: schedule config gemm: knob tile_cols is 0, expected 1 to 1024");
  write_text(path, "[1, 2]\n");
  KILN_ASSERT_STATUS(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t), INVALID_ARGUMENT,
                     "line 1: expected an object, got array");
  write_text(path, "{\"task\": \"a\"}\n");
  KILN_ASSERT_STATUS(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t), NOT_FOUND,
                     "kernel");
  unlink(path);
  KILN_ASSERT_STATUS(kiln_tuning_load(kiln_allocator_system(), path, "llvm", &t), NOT_FOUND,
                     "records.json");
  assert_null(t);
  free(path);
}

static void test_task_ids(void **state) {
  (void)state;
  char a[KILN_TUNING_TASK_CHARS], b[KILN_TUNING_TASK_CHARS], c[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of("fn(%0: Tensor[(1, 8), float32]) { nn.relu(%0) }", a);
  kiln_tuning_task_of("fn(%0: Tensor[(1, 8), float32]) { nn.relu(%0) }", b);
  kiln_tuning_task_of("fn(%0: Tensor[(1, 9), float32]) { nn.relu(%0) }", c);
  assert_string_equal(a, b);
  assert_string_not_equal(a, c);
  assert_int_equal(strlen(a), 16);
}

/* The model stays with the caller when `out_model` is given: the graph's
 * functions live in its module. */
static kiln_compiled_t *compile_mlp_kept(const char *records, kiln_model_t **out_model) {
  kiln_model_t *model = NULL;
  KILN_ASSERT_OK(kiln_model_load(kiln_allocator_system(), "mlp", NULL, &model));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = "c";
  options.private_kernels = true;
  options.tuning_records = records;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_model_compile(model, &options, &compiled));
  if (out_model) {
    *out_model = model;
  } else {
    kiln_model_destroy(model);
  }
  return compiled;
}

static kiln_compiled_t *compile_mlp(const char *records) {
  return compile_mlp_kept(records, NULL);
}

/* A record for one of mlp's kernels: that kernel is lowered with it. */
static void test_compile_takes_record(void **state) {
  (void)state;
  kiln_compiled_t *plain = compile_mlp(NULL);
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(plain->graph.func_keys[0], task);
  char *path = temp_file("records.json");
  kiln_tuning_record_t r = record(task, "c", "gemm tile_rows=1 tile_cols=16 columns_outer=0", 0.1);
  KILN_ASSERT_OK(kiln_tuning_append(path, &r));
  kiln_compiled_t *tuned = compile_mlp(path);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(tuned, &stats);
  assert_int_equal(stats.num_kernels_tuned, 1);
  assert_non_null(
      strstr(tuned->graph.func_keys[0], " @tuned gemm tile_rows=1 tile_cols=16 columns_outer=0"));
  assert_null(strstr(plain->graph.func_keys[0], "@tuned"));
  kiln_compiled_destroy(tuned);
  kiln_compiled_destroy(plain);
  free(path);
}

/* mlp's output on an input of 0.01 i (i the element's index). */
static kiln_tensor_t *run_mlp(kiln_compiled_t *compiled) {
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &gx));
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_OK(kiln_graph_executor_input_info(gx, 0, &info));
  kiln_tensor_t *input = NULL, *output = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), info.dtype, info.ndim, info.shape, &input));
  float *x = kiln_tensor_data(input);
  for (int64_t i = 0; i < kiln_tensor_element_count(input); ++i) {
    x[i] = 0.01f * (float)(i % 100);
  }
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(input)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &output));
  kiln_graph_executor_destroy(gx);
  kiln_tensor_release(input);
  return output;
}

/* A dense_pack record for one of the workloads mlp's compile asked for:
 * the compile packs that weight in the record's block (its kernels'
 * keys change), and the outputs are those of the untuned compile. */
static void test_compile_takes_layout_record(void **state) {
  (void)state;
  kiln_compiled_t *plain = compile_mlp(NULL);
  const kiln_compiled_layout_t *layout = plain->layouts;
  while (layout && layout->space.num_choices[0] < 2) { /* N narrower than a vector: one block */
    layout = layout->next;
  }
  assert_non_null(layout);
  assert_non_null(strstr(layout->workload, "nn.dense float32 m=1 n="));
  kiln_schedule_config_t config = layout->space.default_config;
  assert_int_equal(config.template_id, KILN_SCHEDULE_TEMPLATE_DENSE_PACK);
  config.values[0] = layout->space.choices[0][0] == config.values[0] ? layout->space.choices[0][1]
                                                                     : layout->space.choices[0][0];
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_schedule_config_format(&config, &text));
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(layout->workload, task);
  char *path = temp_file("layout.json");
  kiln_tuning_record_t r = record(task, "c", kiln_strbuf_c_str(&text), 0.1);
  KILN_ASSERT_OK(kiln_tuning_append(path, &r));
  kiln_compiled_t *tuned = compile_mlp(path);
  int changed = 0;
  for (int i = 0; i < tuned->graph.num_funcs; ++i) {
    changed += strcmp(tuned->graph.func_keys[i], plain->graph.func_keys[i]) != 0;
  }
  assert_int_equal(changed, 1);
  kiln_tensor_t *want = run_mlp(plain), *got = run_mlp(tuned);
  KILN_ASSERT_OK(kiln_tensor_allclose(want, got, 1e-5, 1e-6));
  kiln_tensor_release(want);
  kiln_tensor_release(got);
  kiln_strbuf_deinitialize(&text);
  kiln_compiled_destroy(tuned);
  kiln_compiled_destroy(plain);
  free(path);
}

static void prepare(kiln_compiled_t *compiled, kiln_tune_kernel_t *kernel) {
  memset(kernel, 0, sizeof(*kernel));
  kernel->function = compiled->graph.functions[0];
  kernel->name = compiled->graph.funcs[0]->name;
  kernel->target = "c";
  kernel->threads = 2;
  KILN_ASSERT_OK(kiln_tune_kernel_prepare(kiln_allocator_system(), 1, kernel));
}

/* Candidates that time out or do not build are failed results; the
 * default's measurement succeeds after them. */
static void test_measure_survives(void **state) {
  (void)state;
  kiln_model_t *model = NULL;
  kiln_compiled_t *compiled = compile_mlp_kept(NULL, &model);
  kiln_tune_kernel_t kernel;
  prepare(compiled, &kernel);
  kiln_tune_result_t r;
  kiln_schedule_config_t broken = {KILN_SCHEDULE_TEMPLATE_GEMM, {0, 16, 0}};
  KILN_ASSERT_OK(kiln_tune_measure(&kernel, &broken, &r));
  assert_false(r.ok);
  assert_non_null(strstr(r.message, "knob tile_rows is 0, expected 1 to 64"));
  kernel.timeout_seconds = 1e-6;
  KILN_ASSERT_OK(kiln_tune_measure(&kernel, NULL, &r));
  assert_false(r.ok);
  assert_string_equal(r.message, "timed out after 0 s");
  kernel.timeout_seconds = 60;
  /* every state of the caches before a timed run */
  const kiln_tune_cache_t caches[] = {KILN_TUNE_CACHE_MEMORY, KILN_TUNE_CACHE_SHARED,
                                      KILN_TUNE_CACHE_PRIVATE};
  kernel.evict_bytes = 1 << 20;
  for (int i = 0; i < 3; ++i) {
    kernel.cache = caches[i];
    KILN_ASSERT_OK(kiln_tune_measure(&kernel, NULL, &r));
    assert_true(r.ok);
    assert_true(r.median_ms > 0);
  }
  kiln_tune_kernel_deinitialize(&kernel);
  kiln_compiled_destroy(compiled);
  kiln_model_destroy(model);
}

/* kiln_tune on mlp with a few trials: every task has its default and a
 * record; a compile takes them. */
static void test_tune_then_compile(void **state) {
  (void)state;
  char *path = temp_file("records.json");
  kiln_tune_options_t options = kiln_tune_options_default();
  options.compile.target = "c";
  options.trials = 6;
  kiln_tune_report_t report;
  KILN_ASSERT_OK(kiln_tune(kiln_allocator_system(), "mlp", path, &options, &report));
  assert_int_equal(report.num_tasks, 3);
  assert_int_equal(report.trials, 6);
  assert_true(report.cache != KILN_TUNE_CACHE_AUTO); /* resolved */
  assert_true(report.constant_bytes > 100000);       /* mlp's weights */
  assert_int_equal(report.layouts, 3);               /* mlp's three products' blocks */
  assert_true(report.layout_trials >= 1 && report.layouts_tuned <= report.layouts);
  for (int i = 0; i < report.num_tasks; ++i) {
    assert_true(report.tasks[i].default_ms > 0);
    assert_true(report.tasks[i].best_ms <= report.tasks[i].default_ms);
  }
  kiln_tune_report_deinitialize(&report);
  kiln_compiled_t *tuned = compile_mlp(path);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(tuned, &stats);
  assert_int_equal(stats.num_kernels_tuned, 3);
  kiln_compiled_destroy(tuned);
  options.compile.target = "llvm -jit";
  KILN_ASSERT_STATUS(kiln_tune(kiln_allocator_system(), "mlp", path, &options, &report),
                     INVALID_ARGUMENT, "is a JIT");
  options.compile.target = "c";
  options.cache = (kiln_tune_cache_t)9;
  KILN_ASSERT_STATUS(kiln_tune(kiln_allocator_system(), "mlp", path, &options, &report),
                     INVALID_ARGUMENT, "cache must be auto, memory, shared or private, got 9");
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_best_per_task),
      cmocka_unit_test(test_cut_line),
      cmocka_unit_test(test_bad_records),
      cmocka_unit_test(test_task_ids),
      cmocka_unit_test(test_compile_takes_record),
      cmocka_unit_test(test_measure_survives),
      cmocka_unit_test(test_compile_takes_layout_record),
      cmocka_unit_test(test_tune_then_compile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
