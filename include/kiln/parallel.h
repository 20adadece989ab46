/*
 * The thread pool's user-facing settings (the launch itself is in
 * kiln/backend.h, which generated code includes). docs/thread-pool.md has
 * the design.
 *
 * The pool starts with KILN_NUM_THREADS threads when that variable is set
 * (an integer in [1, KILN_PARALLEL_MAX_THREADS]), else one per physical core
 * (kiln_parallel_default_num_threads). The count includes the launching
 * thread, which runs task 0: a pool of n threads has n - 1 workers, started
 * on the first launch that needs them. kiln_parallel_set_num_threads changes
 * the count at run time, between launches. Idle workers spin for
 * KILN_SPIN_COUNT rounds (kiln_parallel_set_spin_count) before they sleep.
 * An invalid variable is reported as a warning on the log and ignored.
 */
#ifndef KILN_PARALLEL_H_
#define KILN_PARALLEL_H_

#include "kiln/backend.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest thread count, and the largest spin count. */
#define KILN_PARALLEL_MAX_THREADS    1024
#define KILN_PARALLEL_MAX_SPIN_COUNT (1 << 30)

/* INVALID_ARGUMENT unless 1 <= num_threads <= KILN_PARALLEL_MAX_THREADS;
 * FAILED_PRECONDITION from inside a parallel task. Waits for a launch in
 * progress on another thread to end, then stops workers beyond the new count
 * (a larger count starts workers lazily at the next launch). */
KILN_MUST_USE_RESULT kiln_status_t kiln_parallel_set_num_threads(int num_threads);
/* The number of threads launches use (the caller's thread counts as one). */
int kiln_parallel_get_num_threads(void);

/* Rounds an idle worker (and a caller waiting for its workers) polls before
 * it sleeps; 0 sleeps at once. INVALID_ARGUMENT outside
 * [0, KILN_PARALLEL_MAX_SPIN_COUNT]. */
KILN_MUST_USE_RESULT kiln_status_t kiln_parallel_set_spin_count(int spin_count);
int kiln_parallel_get_spin_count(void);

/* The default thread count: the physical cores of
 * /sys/devices/system/cpu (kiln_parallel_count_physical_cores), else the
 * online logical CPUs (sysconf), else 1; at most KILN_PARALLEL_MAX_THREADS. */
int kiln_parallel_default_num_threads(void);

/* Counts the distinct (physical_package_id, core_id) pairs of the online
 * CPUs under `cpu_dir` (laid out as /sys/devices/system/cpu: cpu0/,
 * cpu1/, ... each with topology/core_id and topology/physical_package_id).
 * NOT_FOUND naming the directory when no CPU has a readable topology. */
KILN_MUST_USE_RESULT kiln_status_t kiln_parallel_count_physical_cores(const char *cpu_dir,
                                                                      int *out_count);

/* Parses the value `text` of the environment variable `name` (how
 * KILN_NUM_THREADS and KILN_SPIN_COUNT are read): a decimal integer in
 * [min, max], spaces around it allowed. INVALID_ARGUMENT naming the
 * variable, the text and the range otherwise. */
KILN_MUST_USE_RESULT kiln_status_t kiln_parallel_parse_setting(const char *name, const char *text,
                                                               int min, int max, int *out_value);

#ifdef __cplusplus
}
#endif

#endif /* KILN_PARALLEL_H_ */
