/*
 * The thread pool's user-facing settings (the launch itself is in
 * kiln/backend.h, which generated code includes).
 *
 * The pool starts with KILN_NUM_THREADS workers when that variable is set
 * (a positive integer), else one per physical core. kiln_parallel_set_num_threads
 * changes the count at run time; launches after the call use it.
 */
#ifndef KILN_PARALLEL_H_
#define KILN_PARALLEL_H_

#include "kiln/backend.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* INVALID_ARGUMENT unless 1 <= num_threads <= 1024. */
KILN_MUST_USE_RESULT kiln_status_t kiln_parallel_set_num_threads(int num_threads);
/* The number of workers launches use (the caller's thread counts as one). */
int kiln_parallel_get_num_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_PARALLEL_H_ */
