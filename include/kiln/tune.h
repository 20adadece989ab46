/*
 * kiln/tune.h: tuning a model's kernels on this machine (`kiln tune`,
 * docs/tuning.md).
 *
 * kiln_tune compiles the model, takes each of its distinct kernels whose
 * schedule is a template with knobs (a conv2d_NCHWc, a GEMM) as a task,
 * and measures candidate configurations of each task, each in a child
 * process with a timeout, checking every candidate's output against the
 * default configuration's. Every measurement that passes is appended to
 * the records file at once (JSON lines), so a run stopped at any point
 * leaves a valid file; kiln_compiler_options_t.tuning_records then
 * compiles each kernel with its best record.
 */
#ifndef KILN_TUNE_H_
#define KILN_TUNE_H_

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "kiln/allocator.h"
#include "kiln/compiler.h"
#include "kiln/model.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a kernel's weights (every argument but its first) are when it is
 * timed: where they would be when it runs in the model, other kernels
 * having run since its last call (docs/tuning.md). */
typedef enum kiln_tune_cache_e {
  /* PRIVATE when the model's constants fit in the private (L2) caches of
   * the cores the kernels run on, else SHARED when they fit in half the
   * host's last-level cache, else MEMORY. */
  KILN_TUNE_CACHE_AUTO = 0,
  /* flushed from every cache level to memory (clflush) before each run */
  KILN_TUNE_CACHE_MEMORY,
  /* the cores' private caches (L1, L2) overwritten before each run, the
   * first argument read back: the weights come from the shared cache */
  KILN_TUNE_CACHE_SHARED,
  /* left where the previous run put them: in the cores' private caches */
  KILN_TUNE_CACHE_PRIVATE,
} kiln_tune_cache_t;

typedef struct kiln_tune_options_t {
  kiln_model_options_t model;      /* how the model is imported */
  kiln_compiler_options_t compile; /* target, opt level: the records are for that target */
  double minutes;                  /* the whole run's budget (0: no limit) */
  int trials;                      /* candidates measured in all at most (0: no limit) */
  int threads;                     /* threads the kernels run with (0: 1) */
  double timeout_seconds;          /* per candidate (0: 20) */
  uint64_t seed;                   /* the search's random stream */
  kiln_tune_cache_t cache;         /* where the weights are when a kernel is timed */
  FILE *progress;                  /* a line per measurement when not NULL */
  /* When set and non-zero, the run stops after the measurement in flight
   * (a SIGINT handler's flag). */
  volatile sig_atomic_t *stop;
} kiln_tune_options_t;

typedef struct kiln_tune_task_report_t {
  char task[17];   /* the task's id in the records */
  char kernel[96]; /* the kernel's name */
  char config[160];
  int calls;  /* per run of the model */
  int trials; /* candidates measured (the default included) */
  int failed; /* of those, failed to build, crashed, timed out or differed */
  double default_ms;
  double best_ms;
} kiln_tune_task_report_t;

typedef struct kiln_tune_report_t {
  kiln_allocator_t allocator;
  int num_tasks;
  kiln_tune_task_report_t *tasks; /* the tuned kernels, in the graph's order */
  int kernels;                    /* the model's kernels (tunable or not) */
  double seconds;
  int trials;
  int stopped;                 /* the stop flag ended the run */
  kiln_tune_cache_t cache;     /* where the weights were (AUTO resolved) */
  int64_t constant_bytes;      /* the model's constants */
  int64_t private_cache_bytes; /* the L2 of the cores the kernels ran on, 0: not known */
  int64_t shared_cache_bytes;  /* the host's last-level cache, 0: not known */
  int layouts;                 /* graph-level knobs (pack_dense's blocks) searched */
  int layouts_tuned;           /* of them, those whose verified best beat the default */
  int layout_trials;           /* choices compiled and measured for them */
} kiln_tune_report_t;

/* minutes 10, threads 1, timeout 20 s, the compiler's defaults. */
kiln_tune_options_t kiln_tune_options_default(void);

/* Tunes `model` (an ONNX file or a workload), appending records to
 * `records_path` (created when missing). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tune(kiln_allocator_t allocator, const char *model,
                                             const char *records_path,
                                             const kiln_tune_options_t *options,
                                             kiln_tune_report_t *out_report);
void kiln_tune_report_deinitialize(kiln_tune_report_t *report);

#ifdef __cplusplus
}
#endif

#endif /* KILN_TUNE_H_ */
