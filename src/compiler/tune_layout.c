/*
 * kiln_tune_layouts (tune_layout.h): graph-level knobs, searched before
 * the kernels' own.
 *
 * A pass that lays a constant out for the kernel after it (pack_dense's
 * column block) asks the target's find_layout for a record of its
 * workload (build.c), and the compile notes every workload asked with its
 * space. The workloads are searched one after another in the graph's
 * order, each on top of the choices made before it (a product's block
 * decides which core wrote which columns the next one reads). Such a knob
 * changes which kernels the model has, and the kernels
 * around them (a product's input comes from the kernel before it), so it
 * is measured on the whole model rather than kernel by kernel: the
 * default and each other choice are compiled (the model with a records
 * file holding that one record), run on the same made-up inputs with
 * --threads threads, and timed in LAYOUT_ROUNDS rounds, every choice once
 * a round. A choice's score is the median over the rounds of its time over
 * the default's in the same round (the machine drifts between rounds, not
 * within one); the best is recorded (verified) when it makes the model at
 * least 1% faster, else the default is. The compiled kernels are the
 * compiler's own default schedules, so they run in this process; only the
 * kernel search runs candidates in children. TVM takes its alter-layout
 * choices (dense_pack's tile_x, conv2d_NCHWc's tile_ic and tile_oc) from
 * the tuning records the same way.
 *
 * The chosen records also go to a temporary file of their own, which the
 * kernel search compiles with, so that the kernels it tunes are those of
 * the chosen layouts and the kernels' records match a later compile with
 * the user's file.
 */
#define _POSIX_C_SOURCE 200809L

#include "compiler/tune_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/tuning.h"
#include "kiln/compiler.h"
#include "kiln/parallel.h"
#include "kiln/runtime.h"
#include "kiln/version.h"

/* Rounds of runs each choice gets, and a round's runs. */
#define LAYOUT_ROUNDS        15
#define LAYOUT_ROUND_SECONDS 0.05
#define LAYOUT_MIN_RUNS      3
#define LAYOUT_MAX_RUNS      200
/* A choice is taken when the model runs in less than this share of the
 * default's time (the median of the rounds' ratios): at least 1% faster. */
#define LAYOUT_MIN_GAIN 0.995
/* Workloads searched at most (the first in the graph). */
#define LAYOUT_MAX_WORKLOADS 256

double kiln_tune_layout_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* An empty temporary file; its path in `path`. */
static kiln_status_t temp_file(char path[64]) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, 64, "%s/kiln-tune-XXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    return KILN_STATUS(INTERNAL, "kiln tune: cannot make a temporary file %s", path);
  }
  close(fd);
  return KILN_OK;
}

static kiln_tuning_record_t layout_record(const kiln_tune_layout_search_t *s, const char *task,
                                          const char *workload,
                                          const kiln_schedule_config_t *config) {
  return (kiln_tuning_record_t){.task = task,
                                .kernel = workload,
                                .target = s->target,
                                .version = kiln_version_string(),
                                .config = *config};
}

kiln_status_t kiln_tune_layout_compile(const kiln_tune_layout_search_t *s,
                                       const kiln_compiler_options_t *compile,
                                       kiln_model_t **out_model, kiln_compiled_t **out_compiled) {
  *out_compiled = NULL;
  KILN_RETURN_IF_ERROR(kiln_model_load(s->allocator, s->model, s->model_options, out_model));
  kiln_status_t status = kiln_model_compile(*out_model, compile, out_compiled);
  if (status) {
    kiln_model_destroy(*out_model);
    *out_model = NULL;
  }
  return status;
}

/* `to` (our own temporary file) made a copy of `from`. */
static kiln_status_t copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  char buffer[4096];
  size_t n = 0;
  bool ok = in && out;
  while (ok && (n = fread(buffer, 1, sizeof(buffer), in)) > 0) {
    ok = fwrite(buffer, 1, n, out) == n;
  }
  ok = ok && !ferror(in);
  if (in) {
    fclose(in);
  }
  if (out) {
    ok = fclose(out) == 0 && ok;
  }
  return ok ? KILN_OK : KILN_STATUS(INTERNAL, "kiln tune: cannot copy %s to %s", from, to);
}

/* The model compiled with the blocks chosen so far and `config` for
 * `workload`. */
static kiln_status_t compile_with(const kiln_tune_layout_search_t *s, const char *path,
                                  const char *workload, const kiln_schedule_config_t *config,
                                  kiln_model_t **out_model, kiln_compiled_t **out_compiled) {
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(workload, task);
  KILN_RETURN_IF_ERROR(copy_file(s->chosen_path, path));
  kiln_tuning_record_t record = layout_record(s, task, workload, config);
  KILN_RETURN_IF_ERROR(kiln_tuning_append(path, &record));
  kiln_compiler_options_t options = *s->compile;
  options.tuning_records = path;
  return kiln_tune_layout_compile(s, &options, out_model, out_compiled);
}

/* One choice of a workload: its compile and executor, and its run time
 * (ms, a median of runs) in each round. */
typedef struct choice_t {
  kiln_schedule_config_t config;
  kiln_model_t *model;
  kiln_compiled_t *compiled;
  kiln_graph_executor_t *gx;
  double round_ms[LAYOUT_ROUNDS];
} choice_t;

static void choice_destroy(choice_t *c) {
  kiln_graph_executor_destroy(c->gx);
  kiln_compiled_destroy(c->compiled);
  kiln_model_destroy(c->model);
}

/* Input `i` made up: float32 uniform in [-1, 1) from `state`, other dtypes
 * zeros; UNIMPLEMENTED for a dim known only at run time. */
static kiln_status_t set_made_up_input(kiln_graph_executor_t *gx, int i, uint64_t *state) {
  kiln_graph_executor_tensor_info_t info;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_input_info(gx, i, &info));
  for (int d = 0; d < info.ndim; ++d) {
    if (info.shape[d] < 0) {
      return KILN_STATUS(UNIMPLEMENTED, "input %s has a dim known only at run time", info.name);
    }
  }
  kiln_tensor_t *t = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(kiln_allocator_system(), info.dtype, info.ndim, info.shape, &t));
  float *data = info.dtype == KILN_DTYPE_FLOAT32 ? kiln_tensor_data(t) : NULL;
  for (int64_t e = 0; data && e < kiln_tensor_element_count(t); ++e) {
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    data[e] = (float)((double)(*state >> 40) / (double)(1u << 24) * 2.0 - 1.0);
  }
  kiln_status_t status = kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(t));
  kiln_tensor_release(t);
  return status;
}

/* The choice compiled (the model with its one record) and ready to run. */
static kiln_status_t choice_create(kiln_tune_layout_search_t *s, const char *path,
                                   const kiln_compiled_layout_t *layout, choice_t *c) {
  KILN_RETURN_IF_ERROR(
      compile_with(s, path, layout->workload, &c->config, &c->model, &c->compiled));
  s->trials++;
  KILN_RETURN_IF_ERROR(kiln_compiled_create_executor(c->compiled, &c->gx));
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < kiln_graph_executor_num_inputs(c->gx); ++i) {
    KILN_RETURN_IF_ERROR(set_made_up_input(c->gx, i, &state));
  }
  return kiln_graph_executor_run(c->gx); /* a warm-up */
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One round of a choice: runs for LAYOUT_ROUND_SECONDS (LAYOUT_MIN_RUNS to
 * LAYOUT_MAX_RUNS of them); their median. */
static kiln_status_t time_round(choice_t *c, double *out_ms) {
  double ms[LAYOUT_MAX_RUNS];
  int n = 0;
  double start = kiln_tune_layout_now();
  while (n < LAYOUT_MIN_RUNS ||
         (n < LAYOUT_MAX_RUNS && kiln_tune_layout_now() - start < LAYOUT_ROUND_SECONDS)) {
    double t0 = kiln_tune_layout_now();
    KILN_RETURN_IF_ERROR(kiln_graph_executor_run(c->gx));
    ms[n++] = (kiln_tune_layout_now() - t0) * 1e3;
  }
  *out_ms = median_of(ms, n);
  return KILN_OK;
}

/* The rounds: every choice once a round, from a different first choice
 * each round, so that none always follows the same one. */
static kiln_status_t time_rounds(choice_t *choices, int count) {
  for (int r = 0; r < LAYOUT_ROUNDS; ++r) {
    for (int j = 0; j < count; ++j) {
      choice_t *c = &choices[(r + j) % count];
      KILN_RETURN_IF_ERROR(time_round(c, &c->round_ms[r]));
    }
  }
  return KILN_OK;
}

/* The median over the rounds of the choice's time against the default's
 * (choices[0]) in the same round. */
static double ratio_to_default(const choice_t *choices, const choice_t *c) {
  double ratios[LAYOUT_ROUNDS];
  for (int r = 0; r < LAYOUT_ROUNDS; ++r) {
    ratios[r] = c->round_ms[r] / choices[0].round_ms[r];
  }
  return median_of(ratios, LAYOUT_ROUNDS);
}

static double median_ms(const choice_t *c) {
  double ms[LAYOUT_ROUNDS];
  memcpy(ms, c->round_ms, sizeof(ms));
  return median_of(ms, LAYOUT_ROUNDS);
}

/* The verified record: the choice with the least ratio when it is below
 * LAYOUT_MIN_GAIN, else the default; appended to the user's file, and to
 * the chosen file when it is not the default. */
static kiln_status_t record_best(kiln_tune_layout_search_t *s, const kiln_compiled_layout_t *layout,
                                 const choice_t *choices, int count) {
  const choice_t *best = &choices[0];
  double best_ratio = 1;
  for (int j = 1; j < count; ++j) {
    double ratio = ratio_to_default(choices, &choices[j]);
    if (ratio < best_ratio) {
      best = &choices[j];
      best_ratio = ratio;
    }
  }
  best = best_ratio < LAYOUT_MIN_GAIN ? best : &choices[0];
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(layout->workload, task);
  kiln_tuning_record_t record = layout_record(s, task, layout->workload, &best->config);
  record.time_ms = median_ms(best);
  record.default_ms = median_ms(&choices[0]);
  record.verified = true;
  if (s->options->progress) {
    fprintf(s->options->progress,
            "kiln tune: %-40.40s block %lld: model %8.4f ms, with block %lld %8.4f\n",
            layout->workload, (long long)best->config.values[0], record.time_ms,
            (long long)choices[0].config.values[0], record.default_ms);
  }
  KILN_RETURN_IF_ERROR(kiln_tuning_append(s->records, &record));
  bool chosen = best != &choices[0];
  s->num_chosen += chosen;
  return chosen ? kiln_tuning_append(s->chosen_path, &record) : KILN_OK;
}

static bool out_of_time(const kiln_tune_layout_search_t *s) {
  return kiln_tune_layout_now() >= s->deadline || (s->options->stop && *s->options->stop) ||
         (s->options->trials > 0 && s->trials >= s->options->trials);
}

/* One workload: the default and each other choice compiled (until the
 * budget ends), timed in rounds, and the best recorded. A model whose
 * inputs have run-time dims is not searched. */
static kiln_status_t search_layout(kiln_tune_layout_search_t *s, const char *path,
                                   const kiln_compiled_layout_t *layout) {
  const kiln_schedule_space_t *space = &layout->space;
  choice_t choices[KILN_SCHEDULE_MAX_CHOICES + 1];
  memset(choices, 0, sizeof(choices));
  choices[0].config = space->default_config;
  int count = 1;
  kiln_status_t status = choice_create(s, path, layout, &choices[0]);
  for (int i = 0; !status && i < space->num_choices[0] && !out_of_time(s); ++i) {
    choice_t *c = &choices[count];
    c->config = space->default_config;
    c->config.values[0] = space->choices[0][i];
    if (!kiln_schedule_config_equal(&c->config, &space->default_config)) {
      count++;
      status = choice_create(s, path, layout, c);
    }
  }
  if (!status && count > 1) {
    status = time_rounds(choices, count);
  }
  if (!status && count > 1) {
    status = record_best(s, layout, choices, count);
  }
  for (int j = 0; j < count; ++j) {
    choice_destroy(&choices[j]);
  }
  if (status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
    kiln_status_free(status); /* run-time input dims: not searched */
    return KILN_OK;
  }
  return status;
}

kiln_status_t kiln_tune_layouts(kiln_tune_layout_search_t *s) {
  s->num_chosen = 0;
  KILN_RETURN_IF_ERROR(
      kiln_parallel_set_num_threads(s->options->threads > 0 ? s->options->threads : 1));
  KILN_RETURN_IF_ERROR(temp_file(s->chosen_path));
  char path[64];
  kiln_status_t status = temp_file(path);
  const kiln_compiled_layout_t *order[LAYOUT_MAX_WORKLOADS];
  int count = 0;
  for (const kiln_compiled_layout_t *l = s->baseline->layouts; l; l = l->next) {
    if (count < LAYOUT_MAX_WORKLOADS) {
      order[count++] = l;
    }
  }
  while (!status && count > 0) { /* in the graph's order: the list is the last asked first */
    status = search_layout(s, path, order[--count]);
  }
  if (path[0]) {
    remove(path);
  }
  return status;
}
