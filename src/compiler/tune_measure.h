/*
 * Measuring one kernel configuration in a child process (tune.c's
 * measurements).
 *
 * The parent holds the kernel's inputs, its output buffers and the
 * expected outputs (the default configuration, run once in the parent; a
 * forked child starts thread-pool workers of its own, docs/thread-pool.md). A child lowers the
 * kernel's fused function with the configuration, builds it for the target, runs it once to warm
 * up, then times runs until KILN_TUNE_MEASURE_SECONDS have passed (at least KILN_TUNE_MIN_RUNS, at
 * most KILN_TUNE_MAX_RUNS), compares its outputs with the expected ones (rtol 1e-3, atol 1e-4: a
 * configuration changes the order of sums) and writes the median and the verdict to a pipe. The
 * parent waits with a timeout; a child that crashes, hangs (killed at the
 * timeout) or exits without a verdict is a failed candidate, and the
 * parent goes on.
 */
#ifndef KILN_COMPILER_TUNE_MEASURE_H_
#define KILN_COMPILER_TUNE_MEASURE_H_

#include "ir/expr.h"
#include "kiln/tensor.h"
#include "kiln/tune.h"
#include "op/schedule_config.h"

#define KILN_TUNE_MAX_ARGS        64
#define KILN_TUNE_MEASURE_SECONDS 0.25
#define KILN_TUNE_MIN_RUNS        5
#define KILN_TUNE_MAX_RUNS        200

typedef struct kiln_tune_kernel_t {
  const kiln_function_t *function; /* the fused function */
  const char *name;
  const char *target;
  int num_inputs;
  int num_outputs;
  kiln_tensor_t *args[KILN_TUNE_MAX_ARGS]; /* inputs, then outputs */
  kiln_tensor_t *expected[KILN_TUNE_MAX_ARGS];
  int threads;
  double timeout_seconds;
  /* Before each timed run: the weights flushed to memory, or (SHARED)
   * `evict_bytes` written by each thread to overwrite its core's private
   * caches, then the first argument read back. */
  kiln_tune_cache_t cache;
  int64_t evict_bytes;
} kiln_tune_kernel_t;

typedef struct kiln_tune_result_t {
  int ok;
  double median_ms;
  char message[256]; /* why it failed */
} kiln_tune_result_t;

/* Makes the kernel's inputs (float inputs uniform in [-1, 1) from `seed`,
 * others zero), its outputs and the expected outputs (the default
 * configuration, run here). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tune_kernel_prepare(kiln_allocator_t allocator,
                                                            uint64_t seed,
                                                            kiln_tune_kernel_t *kernel);
void kiln_tune_kernel_deinitialize(kiln_tune_kernel_t *kernel);

/* The space of the kernel's schedule (template NONE: not tunable). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tune_kernel_space(const kiln_tune_kernel_t *kernel,
                                                          kiln_schedule_space_t *out_space);

/* Measures `config` (NULL: the default) in a child process. A failed
 * candidate is a result with ok 0; the status is for the parent's own
 * failures (no pipe, no fork). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tune_measure(const kiln_tune_kernel_t *kernel,
                                                     const kiln_schedule_config_t *config,
                                                     kiln_tune_result_t *out_result);

/* The median of `count` (at least 1) values, which it sorts. */
double kiln_tune_median(double *values, int count);

/* A float32 tensor's elements uniform in [-1, 1) from `state` (nonzero);
 * a tensor of another dtype is left as it is. */
void kiln_tune_fill_uniform(kiln_tensor_t *tensor, uint64_t *state);

#endif /* KILN_COMPILER_TUNE_MEASURE_H_ */
