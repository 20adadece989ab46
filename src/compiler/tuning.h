/*
 * Tuning records: what `kiln tune` measured, and what a compile uses.
 *
 * A records file is JSON lines (docs/tuning.md), one measured configuration
 * per line:
 *
 *   {"task": "9f0c1d2e3a4b5c6d", "kernel": "fused_nn_contrib_conv2d_NCHWc_add",
 *    "target": "llvm", "config": "conv2d_nchwc tile_ow=6 ...",
 *    "time_ms": 0.512, "default_ms": 0.581, "kiln": "0.1.0"}
 *
 * The task is the 64-bit FNV-1a hash of the kernel's key (the fused
 * function's structure, compiler/key.h), in hex: two models that share a
 * kernel share its records. A file is appended to, never rewritten, so a
 * tuning run that is killed leaves every line it finished; a line cut short
 * (the last one, by a kill) is skipped with a warning, any other bad line is
 * an error naming the file and the line.
 *
 * Loading keeps, per task, the fastest record of the compile's target and
 * of this kiln version, among the verified ones when the task has any (a
 * search's fastest candidate is measured again against the default at the
 * end: the minimum of many noisy measurements is biased low); records of other targets or versions
 * are counted and reported once, never used. A compile asks for the task of each kernel it lowers
 * (graph_codegen.c) and schedules it with that configuration.
 */
#ifndef KILN_COMPILER_TUNING_H_
#define KILN_COMPILER_TUNING_H_

#include "base/strbuf.h"
#include "kiln/allocator.h"
#include "op/schedule_config.h"

#define KILN_TUNING_TASK_CHARS 17 /* 16 hex digits and the NUL */

typedef struct kiln_tuning_t kiln_tuning_t;

typedef struct kiln_tuning_record_t {
  const char *task;
  const char *kernel;
  const char *target;
  const char *version; /* kiln's, when measured */
  kiln_schedule_config_t config;
  double time_ms;    /* median of the candidate's runs */
  double default_ms; /* median of the default configuration's runs */
  bool verified;     /* measured again, interleaved with the default, at the end of a run */
} kiln_tuning_record_t;

/* The task of a kernel key. */
void kiln_tuning_task_of(const char *kernel_key, char out_task[KILN_TUNING_TASK_CHARS]);

/* Loads `path`, keeping the best record per task of `target` and this
 * version. NOT_FOUND for a missing file; INVALID_ARGUMENT naming the file
 * and the line for a bad record. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tuning_load(kiln_allocator_t allocator, const char *path,
                                                    const char *target, kiln_tuning_t **out_tuning);
void kiln_tuning_destroy(kiln_tuning_t *tuning);
/* The best configuration of `task`, or NULL. */
const kiln_schedule_config_t *kiln_tuning_find(const kiln_tuning_t *tuning, const char *task);
/* Records used (tasks with a best), and records ignored for their target
 * or version. */
void kiln_tuning_counts(const kiln_tuning_t *tuning, int *out_tasks, int *out_other_target,
                        int *out_other_version);

/* One record as its JSON line (with the newline). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tuning_record_format(const kiln_tuning_record_t *record,
                                                             kiln_strbuf_t *sb);
/* Appends one record to `path` (created when missing) with one write of
 * the whole line, flushed before returning. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tuning_append(const char *path,
                                                      const kiln_tuning_record_t *record);

#endif /* KILN_COMPILER_TUNING_H_ */
