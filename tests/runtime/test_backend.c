/*
 * Tests of the backend ABI's runtime side (include/kiln/backend.h): the
 * per-thread last error (set, replaced, cut when too long, separate per
 * thread), workspace alignment, and the launch contract every task ends
 * before it returns and a failing task makes it return -1 with its message,
 * and a barrier shared by the tasks of a launch with one task per thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "kiln/backend.h"
#include "kiln/parallel.h"
#include "kiln_test.h"

static void test_last_error(void **state) {
  (void)state;
  kiln_backend_set_last_error("fused_add: argument 2 has shape (3,), expected (4,)");
  assert_string_equal(kiln_get_last_error(), "fused_add: argument 2 has shape (3,), expected (4,)");
  kiln_backend_set_last_error("second");
  assert_string_equal(kiln_get_last_error(), "second");
  char long_message[3000];
  memset(long_message, 'x', sizeof(long_message) - 1);
  long_message[sizeof(long_message) - 1] = '\0';
  kiln_backend_set_last_error(long_message);
  size_t length = strlen(kiln_get_last_error());
  assert_int_equal(length, 1023);
  assert_string_equal(kiln_get_last_error() + length - 3, "...");
  kiln_backend_set_last_error(NULL);
  assert_string_equal(kiln_get_last_error(), "");
}

static void *other_thread(void *arg) {
  kiln_backend_set_last_error("from the other thread");
  *(int *)arg = strcmp(kiln_get_last_error(), "from the other thread") == 0;
  return NULL;
}

static void test_last_error_is_per_thread(void **state) {
  (void)state;
  kiln_backend_set_last_error("main thread");
  int ok = 0;
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, other_thread, &ok), 0);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_true(ok);
  assert_string_equal(kiln_get_last_error(), "main thread");
}

static void test_workspace(void **state) {
  (void)state;
  for (size_t bytes = 1; bytes < 5000; bytes = bytes * 3 + 1) {
    unsigned char *p = kiln_backend_alloc_workspace(bytes);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    memset(p, 0xab, bytes);
    kiln_backend_free_workspace(p);
  }
  assert_null(kiln_backend_alloc_workspace(SIZE_MAX - 8));
  assert_non_null(strstr(kiln_get_last_error(), "cannot allocate"));
}

typedef struct tasks_t {
  int ran[8];
  int fail_task;
} tasks_t;

static int record_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  tasks_t *t = cdata;
  t->ran[task_id] += penv->num_task;
  if (task_id == t->fail_task) {
    kiln_backend_set_last_error("task failed on purpose");
    return -1;
  }
  return 0;
}

/* Every task passes the barrier only after all have counted themselves. */
static int count_then_barrier(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  atomic_int *arrived = cdata;
  atomic_fetch_add(arrived, 1);
  if (kiln_parallel_barrier(task_id, penv) != 0) {
    return -1;
  }
  return atomic_load(arrived) == penv->num_task ? 0 : -1;
}

static void test_launch_runs_every_task(void **state) {
  (void)state;
  tasks_t t = {{0}, -1};
  assert_int_equal(kiln_parallel_launch(record_task, &t, 5), 0);
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(t.ran[i], 5);
  }
  tasks_t f = {{0}, 2};
  assert_int_equal(kiln_parallel_launch(record_task, &f, 4), -1);
  assert_string_equal(kiln_get_last_error(), "task failed on purpose");
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(f.ran[i], 4); /* every task still ran */
  }
}

/* num_task 0 runs one task per thread, so its tasks can share a barrier. */
static void test_launch_barrier_one_task_per_thread(void **state) {
  (void)state;
  atomic_int arrived = 0;
  assert_int_equal(kiln_parallel_launch(count_then_barrier, &arrived, 0), 0);
  assert_int_equal(atomic_load(&arrived), kiln_parallel_get_num_threads());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_last_error),
      cmocka_unit_test(test_last_error_is_per_thread),
      cmocka_unit_test(test_workspace),
      cmocka_unit_test(test_launch_runs_every_task),
      cmocka_unit_test(test_launch_barrier_one_task_per_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
