/*
 * `kiln tune MODEL -o RECORDS [OPTIONS]` (kiln/tune.h, docs/tuning.md):
 * tunes the model's kernels within the budget, appending each measured
 * configuration to RECORDS, then prints one line per task: its calls, the
 * default's time, the best time, the speed-up and its share of the run.
 * A progress line per measurement goes to a terminal. Ctrl-C stops after
 * the measurement in flight; the records measured so far stay.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kiln/tune.h"

#define TUNE_MAX_SHAPES 16

typedef struct tune_args_t {
  const char *model;
  const char *records;
  kiln_tune_options_t options;
  const char *input_shapes[TUNE_MAX_SHAPES];
} tune_args_t;

static volatile sig_atomic_t tune_stop;

static void on_interrupt(int signal_number) {
  (void)signal_number;
  tune_stop = 1;
}

/* A positive number of minutes or seconds (fractions allowed). */
static kiln_status_t parse_seconds(const char *flag, const char *text, double *out) {
  return kiln_cli_parse_positive(flag, text, 1e6, "expected a positive number after", out);
}

static const char *const cache_names[] = {"auto", "memory", "shared", "private"};

/* --cache auto|memory|shared|private (kiln_tune_cache_t, in that order). */
static kiln_status_t parse_cache(const char *flag, const char *value, kiln_tune_cache_t *out) {
  for (int i = 0; value && i < 4; ++i) {
    if (strcmp(value, cache_names[i]) == 0) {
      *out = (kiln_tune_cache_t)i;
      return KILN_OK;
    }
  }
  return kiln_cli_usage("expected auto, memory, shared or private after", flag);
}

static kiln_status_t parse_model_option(const char *flag, const char *value, tune_args_t *a) {
  kiln_model_options_t *m = &a->options.model;
  if (strcmp(flag, "--input-shape") == 0) {
    if (!value || m->num_input_shapes == TUNE_MAX_SHAPES) {
      return kiln_cli_usage("expected NAME=DIMS after", flag);
    }
    a->input_shapes[m->num_input_shapes++] = value;
    return KILN_OK;
  }
  if (strcmp(flag, "--batch") == 0) {
    return kiln_cli_parse_count(flag, value, 1, &m->batch);
  }
  if (strcmp(flag, "--image-size") == 0) {
    return kiln_cli_parse_count(flag, value, 1, &m->image_size);
  }
  return kiln_cli_usage("unknown option", flag);
}

static kiln_status_t parse_option(const char *flag, const char *value, tune_args_t *a) {
  kiln_tune_options_t *o = &a->options;
  if (strcmp(flag, "-o") == 0) {
    a->records = value;
    return value ? KILN_OK : kiln_cli_usage("missing RECORDS file after", flag);
  }
  if (strcmp(flag, "--minutes") == 0) {
    KILN_RETURN_IF_ERROR(parse_seconds(flag, value, &o->minutes));
    return KILN_OK;
  }
  if (strcmp(flag, "--timeout") == 0) {
    return parse_seconds(flag, value, &o->timeout_seconds);
  }
  if (strcmp(flag, "--trials") == 0) {
    return kiln_cli_parse_count(flag, value, 1, &o->trials);
  }
  if (strcmp(flag, "--threads") == 0) {
    return kiln_cli_parse_count(flag, value, 1, &o->threads);
  }
  if (strcmp(flag, "--cache") == 0) {
    return parse_cache(flag, value, &o->cache);
  }
  if (strcmp(flag, "--target") == 0) {
    o->compile.target = value;
    return value ? KILN_OK : kiln_cli_usage("missing target after", flag);
  }
  if (strcmp(flag, "--opt-level") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_count(flag, value, 0, &o->compile.opt_level));
    return o->compile.opt_level <= 3 ? KILN_OK : kiln_cli_usage("expected 0 to 3 after", flag);
  }
  return parse_model_option(flag, value, a);
}

static kiln_status_t parse_args(int argc, char **argv, tune_args_t *a) {
  memset(a, 0, sizeof(*a));
  a->options = kiln_tune_options_default();
  a->options.model.input_shapes = a->input_shapes;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') {
      if (a->model) {
        return kiln_cli_usage("unexpected argument", argv[i]);
      }
      a->model = argv[i];
      continue;
    }
    KILN_RETURN_IF_ERROR(parse_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, a));
    ++i;
  }
  if (!a->model || !a->records) {
    return kiln_cli_usage(a->model ? "missing -o RECORDS" : "missing the model", NULL);
  }
  a->options.compile.input_shapes = a->options.model.input_shapes;
  a->options.compile.num_input_shapes = a->options.model.num_input_shapes;
  return KILN_OK;
}

static void print_report(const kiln_tune_report_t *r, const char *records) {
  double total = 0, tuned = 0;
  for (int i = 0; i < r->num_tasks; ++i) {
    total += r->tasks[i].default_ms * r->tasks[i].calls;
    tuned += r->tasks[i].best_ms * r->tasks[i].calls;
  }
  printf("%d of %d kernels tuned, %d trials in %.0f s%s; records appended to %s\n", r->num_tasks,
         r->kernels, r->trials, r->seconds, r->stopped ? " (stopped)" : "", records);
  static const char *const where[] = {"", "memory", "the shared cache", "the private caches"};
  printf("weights timed from %s (the model's constants: %.1f MiB; private caches: %.1f MiB, "
         "shared: %.0f MiB)\n",
         where[r->cache], (double)r->constant_bytes / (1 << 20),
         (double)r->private_cache_bytes / (1 << 20), (double)r->shared_cache_bytes / (1 << 20));
  if (r->layouts > 0) {
    printf("graph-level knobs (pack_dense's blocks): %d searched, %d choices measured, %d beat "
           "their default\n",
           r->layouts, r->layout_trials, r->layouts_tuned);
  }
  printf("%-48s %5s %11s %11s %8s %6s %7s\n", "kernel", "calls", "default_ms", "tuned_ms",
         "speedup", "share", "trials");
  for (int i = 0; i < r->num_tasks; ++i) {
    const kiln_tune_task_report_t *t = &r->tasks[i];
    double share = total > 0 ? 100.0 * t->default_ms * t->calls / total : 0;
    printf("%-48.48s %5d %11.4f %11.4f %7.2fx %5.1f%% %3d/%-3d\n", t->kernel, t->calls,
           t->default_ms, t->best_ms, t->best_ms > 0 ? t->default_ms / t->best_ms : 0, share,
           t->trials - t->failed, t->trials);
  }
  printf("tuned kernels: %.4f ms per run by default, %.4f ms tuned\n", total, tuned);
}

kiln_status_t kiln_cli_tune(int argc, char **argv) {
  tune_args_t a;
  KILN_RETURN_IF_ERROR(parse_args(argc, argv, &a));
  a.options.progress = isatty(STDERR_FILENO) ? stderr : NULL;
  a.options.stop = &tune_stop;
  signal(SIGINT, on_interrupt);
  kiln_tune_report_t report;
  kiln_status_t status =
      kiln_tune(kiln_allocator_system(), a.model, a.records, &a.options, &report);
  signal(SIGINT, SIG_DFL);
  if (!status) {
    print_report(&report, a.records);
  }
  kiln_tune_report_deinitialize(&report);
  return status;
}
