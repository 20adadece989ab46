/*
 * kiln_parallel_launch (include/kiln/backend.h), serial for now: every task
 * runs inline on the caller's thread, in order, which is what the launch
 * promises for one worker. The persistent thread pool of seed 000 replaces
 * this file (issue 6); its contract (every task ends before the launch
 * returns, a failing task makes the launch return -1 with its message) is
 * the same. The thread count is only recorded here.
 */
#include <stdatomic.h>

#include "kiln/parallel.h"

static atomic_int num_threads = 1;

kiln_status_t kiln_parallel_set_num_threads(int count) {
  if (count < 1 || count > 1024) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_parallel_set_num_threads: %d is outside [1, 1024]",
                       count);
  }
  atomic_store(&num_threads, count);
  return KILN_OK;
}

int kiln_parallel_get_num_threads(void) {
  return atomic_load(&num_threads);
}

int kiln_parallel_launch(kiln_parallel_lambda_fn f, void *cdata, int num_task) {
  kiln_parallel_env_t env = {NULL, num_task > 0 ? num_task : kiln_parallel_get_num_threads()};
  int failed = 0;
  for (int task = 0; task < env.num_task; ++task) {
    failed |= f(task, &env, cdata) != 0;
  }
  return failed ? -1 : 0;
}

int kiln_parallel_barrier(int task_id, kiln_parallel_env_t *penv) {
  (void)task_id;
  (void)penv;
  return 0; /* tasks run one after another: each has passed every barrier */
}
