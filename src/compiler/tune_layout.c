/*
 * kiln_tune_layouts (tune_layout.h): graph-level knobs, searched before
 * the kernels' own.
 *
 * A pass that lays a constant out for the kernel after it (pack_dense's
 * column block) asks the target's find_layout for a record of its
 * workload (build.c), and the compile notes every workload asked with its
 * space. Such a knob changes which kernels the model has, so it is not
 * measured as a kernel's knob is: each other choice is compiled, the model
 * with a records file holding that one record, and the kernels that
 * compile has and the baseline lacks are the choice's; their default
 * schedules are measured (tune_measure.c, in a child each), weighted by
 * their calls. The best choice and the default are measured again,
 * interleaved, three times each, and the record appended to the user's
 * file says the best only when its median beats the default's, as the
 * kernels' verification does (tune.c). TVM takes its alter-layout choices
 * (dense_pack's tile_x, conv2d_NCHWc's tile_ic and tile_oc) from the
 * tuning records the same way.
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

#include "compiler/tune_measure.h"
#include "compiler/tuning.h"
#include "kiln/version.h"

#define LAYOUT_VERIFY_ROUNDS 3

double kiln_tune_layout_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool has_key(const kiln_compiled_t *c, const char *key) {
  for (int i = 0; i < c->graph.num_funcs; ++i) {
    if (strcmp(c->graph.func_keys[i], key) == 0) {
      return true;
    }
  }
  return false;
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

/* The model compiled with `config` for `workload` alone. */
static kiln_status_t compile_with(const kiln_tune_layout_search_t *s, const char *path,
                                  const char *workload, const kiln_schedule_config_t *config,
                                  kiln_model_t **out_model, kiln_compiled_t **out_compiled) {
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(workload, task);
  FILE *f = fopen(path, "w"); /* emptied: our own temporary file */
  if (!f) {
    return KILN_STATUS(INTERNAL, "kiln tune: cannot write %s", path);
  }
  fclose(f);
  kiln_tuning_record_t record = layout_record(s, task, workload, config);
  KILN_RETURN_IF_ERROR(kiln_tuning_append(path, &record));
  kiln_compiler_options_t options = *s->compile;
  options.tuning_records = path;
  return kiln_tune_layout_compile(s, &options, out_model, out_compiled);
}

/* The summed median times (ms, times calls) of `c`'s kernels that `other`
 * lacks, each measured once in a child; failed when any fails, or when
 * there is none (the choice changed no kernel). */
static kiln_status_t measure_own(const kiln_tune_layout_search_t *s, const kiln_compiled_t *c,
                                 const kiln_compiled_t *other, double *out_ms, bool *out_ok) {
  *out_ms = 0;
  *out_ok = false;
  for (int i = 0; i < c->graph.num_funcs; ++i) {
    if (has_key(other, c->graph.func_keys[i])) {
      continue;
    }
    kiln_tune_kernel_t k = {.function = c->graph.functions[i],
                            .name = c->graph.funcs[i]->name,
                            .target = s->target,
                            .threads = s->options->threads,
                            .timeout_seconds = s->options->timeout_seconds,
                            .cache = s->cache,
                            .evict_bytes = s->evict_bytes};
    kiln_tune_result_t r = {0};
    kiln_status_t status = kiln_tune_kernel_prepare(kiln_allocator_system(), 1, &k);
    if (!status) {
      status = kiln_tune_measure(&k, NULL, &r);
    }
    kiln_tune_kernel_deinitialize(&k);
    KILN_RETURN_IF_ERROR(status);
    if (!r.ok) {
      if (s->options->progress) {
        fprintf(s->options->progress, "kiln tune: %s: %s\n", k.name, r.message);
      }
      *out_ok = false;
      return KILN_OK;
    }
    *out_ok = true;
    *out_ms += r.median_ms * c->graph.func_calls[i];
  }
  return KILN_OK;
}

/* A choice's compile and its kernels' time against the baseline's. */
static kiln_status_t measure_choice(kiln_tune_layout_search_t *s, const char *path,
                                    const kiln_compiled_layout_t *layout,
                                    const kiln_schedule_config_t *config, double *out_ms,
                                    double *out_default_ms, bool *out_ok) {
  kiln_model_t *m = NULL;
  kiln_compiled_t *c = NULL;
  KILN_RETURN_IF_ERROR(compile_with(s, path, layout->workload, config, &m, &c));
  bool ok_default = true;
  kiln_status_t status = measure_own(s, c, s->baseline, out_ms, out_ok);
  if (!status && out_default_ms) {
    status = measure_own(s, s->baseline, c, out_default_ms, &ok_default);
    *out_ok &= ok_default;
  }
  kiln_compiled_destroy(c);
  kiln_model_destroy(m);
  s->trials++;
  return status;
}

static double median3(double *v, int n) {
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0 && v[j] < v[j - 1]; --j) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The best choice against the default, interleaved; the verified record
 * (the default's unless the best's median wins) appended to the user's
 * file, and to the chosen file when it is not the default. */
static kiln_status_t verify_choice(kiln_tune_layout_search_t *s, const char *path,
                                   const kiln_compiled_layout_t *layout,
                                   const kiln_schedule_config_t *best) {
  double b[LAYOUT_VERIFY_ROUNDS], d[LAYOUT_VERIFY_ROUNDS];
  int n = 0;
  for (int r = 0; r < LAYOUT_VERIFY_ROUNDS; ++r) {
    bool ok = false;
    KILN_RETURN_IF_ERROR(measure_choice(s, path, layout, best, &b[n], &d[n], &ok));
    n += ok;
  }
  double best_ms = n ? median3(b, n) : 0, default_ms = n ? median3(d, n) : 0;
  bool wins = n > 0 && best_ms < default_ms;
  const kiln_schedule_config_t *config = wins ? best : &layout->space.default_config;
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(layout->workload, task);
  kiln_tuning_record_t record = layout_record(s, task, layout->workload, config);
  record.time_ms = wins ? best_ms : default_ms;
  record.default_ms = default_ms;
  record.verified = true;
  if (s->options->progress) {
    fprintf(s->options->progress, "kiln tune: %-40.40s block %lld: %8.4f ms, default %lld: %8.4f\n",
            layout->workload, (long long)config->values[0], record.time_ms,
            (long long)layout->space.default_config.values[0], default_ms);
  }
  KILN_RETURN_IF_ERROR(kiln_tuning_append(s->records, &record));
  s->num_chosen += wins;
  return wins ? kiln_tuning_append(s->chosen_path, &record) : KILN_OK;
}

/* The deadline or the stop flag. */
static bool out_of_time(const kiln_tune_layout_search_t *s) {
  return kiln_tune_layout_now() >= s->deadline || (s->options->stop && *s->options->stop);
}

/* Out of time, or --trials choices measured (a search so bounded still
 * verifies its best). */
static bool out_of_trials(const kiln_tune_layout_search_t *s) {
  return out_of_time(s) || (s->options->trials > 0 && s->trials >= s->options->trials);
}

/* One workload: every other choice measured, then the best verified. */
static kiln_status_t search_layout(kiln_tune_layout_search_t *s, const char *path,
                                   const kiln_compiled_layout_t *layout) {
  const kiln_schedule_space_t *space = &layout->space;
  kiln_schedule_config_t best = space->default_config;
  double best_ms = 0;
  bool have = false;
  for (int i = 0; i < space->num_choices[0] && !out_of_trials(s); ++i) {
    kiln_schedule_config_t config = space->default_config;
    config.values[0] = space->choices[0][i];
    if (kiln_schedule_config_equal(&config, &space->default_config)) {
      continue;
    }
    double ms = 0;
    bool ok = false;
    KILN_RETURN_IF_ERROR(measure_choice(s, path, layout, &config, &ms, NULL, &ok));
    if (ok && (!have || ms < best_ms)) {
      best = config;
      best_ms = ms;
      have = true;
    }
  }
  return have && !out_of_time(s) ? verify_choice(s, path, layout, &best) : KILN_OK;
}

kiln_status_t kiln_tune_layouts(kiln_tune_layout_search_t *s) {
  s->num_chosen = 0;
  KILN_RETURN_IF_ERROR(temp_file(s->chosen_path));
  char path[64];
  kiln_status_t status = temp_file(path);
  for (const kiln_compiled_layout_t *l = s->baseline->layouts; !status && l; l = l->next) {
    status = search_layout(s, path, l);
  }
  if (path[0]) {
    remove(path);
  }
  return status;
}
