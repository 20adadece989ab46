/*
 * The ABI between generated kernels and the kiln runtime (as TVM's
 * c_backend_api.h and c_runtime_api.h are for its generated code).
 *
 * Generated code (the C and LLVM backends) includes this header alone and
 * calls nothing else of kiln: the parallel launch (TVMBackendParallelLaunch's
 * role), the last-error hook its argument checks call, and the workspace
 * allocator. Every generated kernel has one signature, the packed calling convention
 * (kiln_packed_fn): an array of argument values with a type code each, the
 * count, a return value and a resource handle. A tensor argument is a
 * DLTensor pointer with type code KILN_ARG_DLTENSOR. A kernel returns 0, or
 * -1 after calling kiln_backend_set_last_error with a message naming itself
 * and what was wrong; kiln_get_last_error returns that message to the caller
 * (per thread).
 *
 * Parallel loops become outlined lambdas run by kiln_parallel_launch on the
 * runtime's thread pool: task i of n runs its share of the iterations; a
 * lambda returns 0, or -1 after setting the last error, and the launch then
 * returns -1 with that message once every task has ended.
 */
#ifndef KILN_BACKEND_H_
#define KILN_BACKEND_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the packed calling convention ---- */

/* Type codes of packed arguments (TVM's numbering, so the two agree). */
typedef enum kiln_arg_type_code_e {
  KILN_ARG_INT = 0,      /* v_int64 */
  KILN_ARG_UINT = 1,     /* v_int64, as unsigned */
  KILN_ARG_FLOAT = 2,    /* v_float64 */
  KILN_ARG_HANDLE = 3,   /* v_handle: an opaque pointer */
  KILN_ARG_NULL = 4,     /* no value */
  KILN_ARG_DLTENSOR = 7, /* v_handle: a DLTensor * */
  KILN_ARG_STRING = 11,  /* v_str */
} kiln_arg_type_code_t;

typedef union kiln_value_t {
  int64_t v_int64;
  double v_float64;
  void *v_handle;
  const char *v_str;
} kiln_value_t;

/* A generated kernel. `out_ret_value`/`out_ret_tcode` may be NULL when the
 * kernel returns nothing (every kiln kernel writes its outputs in place). */
typedef int (*kiln_packed_fn)(const kiln_value_t *args, const int *type_codes, int num_args,
                              kiln_value_t *out_ret_value, int *out_ret_tcode,
                              void *resource_handle);

/* ---- errors ---- */

/* Sets this thread's last error (copied). Generated code calls it before
 * returning -1. */
void kiln_backend_set_last_error(const char *message);
/* This thread's last error message ("" when none). */
const char *kiln_get_last_error(void);

/* ---- the parallel launch (TVM's TVMBackendParallelLaunch) ---- */

/* What a task sees: how many tasks run, and the barrier they share. */
typedef struct kiln_parallel_env_t {
  void *sync_handle; /* the launch's barrier state (opaque) */
  int num_task;
} kiln_parallel_env_t;

/* One task of a parallel loop: returns 0, or -1 after setting the last
 * error. */
typedef int (*kiln_parallel_lambda_fn)(int task_id, kiln_parallel_env_t *penv, void *cdata);

/* Runs f(task_id, penv, cdata) for task_id in [0, num_task) on the thread
 * pool (num_task 0: one task per worker) and returns when every task has
 * ended: 0, or -1 when a task failed (the last error is that task's message).
 * With one worker, or from inside a task, the tasks run inline, in order. */
int kiln_parallel_launch(kiln_parallel_lambda_fn f, void *cdata, int num_task);
/* Waits until every task of the launch has reached the barrier. 0, or -1. */
int kiln_parallel_barrier(int task_id, kiln_parallel_env_t *penv);

/* ---- workspace memory ---- */

/* Scratch memory for a kernel's global-scope intermediates, 64-byte
 * aligned; NULL (with the last error set) when it cannot be had. */
void *kiln_backend_alloc_workspace(size_t bytes);
void kiln_backend_free_workspace(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BACKEND_H_ */
