/*
 * Tests of the thread pool (src/runtime/thread_pool.c): the settings read
 * from KILN_NUM_THREADS and KILN_SPIN_COUNT (main sets both before the pool
 * first starts), their parser and the physical-core count on a made-up
 * /sys tree; 100,000 launches with num_task 0..9 where every task must run
 * exactly once, then 20,000 with spin count 0 (every wait sleeps); failing
 * tasks (the first failure's message reaches the caller, every other task
 * still runs); nested launches (inline, on the task's own thread); launches
 * from two user threads at once; the barrier (a phase-by-phase exchange,
 * and its refusals: more tasks than threads, a task that fails before it);
 * resizing between launches, with one thread per task checked by thread id;
 * and the argument errors.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kiln/parallel.h"
#include "kiln_test.h"

#define MAX_TASKS 16

static unsigned next_random(unsigned *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

/* ---- settings ---- */

static void test_settings_come_from_the_environment(void **state) {
  (void)state;
  assert_int_equal(kiln_parallel_get_num_threads(), 3);
  assert_int_equal(kiln_parallel_get_spin_count(), 777);
}

static void test_parse_setting(void **state) {
  (void)state;
  int64_t live = kiln_status_live_count();
  int value = 0;
  KILN_ASSERT_OK(kiln_parallel_parse_setting("KILN_NUM_THREADS", "4", 1, 1024, &value));
  assert_int_equal(value, 4);
  KILN_ASSERT_OK(kiln_parallel_parse_setting("KILN_NUM_THREADS", " 12 ", 1, 1024, &value));
  assert_int_equal(value, 12);
  KILN_ASSERT_OK(kiln_parallel_parse_setting("KILN_SPIN_COUNT", "0", 0, 10, &value));
  assert_int_equal(value, 0);
  const char *bad[] = {"0", "1025", "abc", "", "4x", "-2", "99999999999999999999", "4.5"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    char expected[96];
    snprintf(expected, sizeof(expected), "KILN_NUM_THREADS: \"%s\" is not an integer in [1, 1024]",
             bad[i]);
    KILN_ASSERT_STATUS(kiln_parallel_parse_setting("KILN_NUM_THREADS", bad[i], 1, 1024, &value),
                       INVALID_ARGUMENT, expected);
  }
  KILN_ASSERT_STATUS(kiln_parallel_parse_setting("KILN_SPIN_COUNT", NULL, 0, 5, &value),
                     INVALID_ARGUMENT, "KILN_SPIN_COUNT: \"(null)\" is not an integer in [0, 5]");
  assert_int_equal(value, 0); /* untouched by the failures */
  assert_int_equal(kiln_status_live_count(), live);
}

static void test_setting_errors(void **state) {
  (void)state;
  KILN_ASSERT_STATUS(kiln_parallel_set_num_threads(0), INVALID_ARGUMENT,
                     "kiln_parallel_set_num_threads: 0 is outside [1, 1024]");
  KILN_ASSERT_STATUS(kiln_parallel_set_num_threads(1025), INVALID_ARGUMENT, "1025 is outside");
  KILN_ASSERT_STATUS(kiln_parallel_set_spin_count(-1), INVALID_ARGUMENT,
                     "kiln_parallel_set_spin_count: -1 is outside [0, 1073741824]");
  assert_int_equal(kiln_parallel_get_num_threads(), 3);
  assert_int_equal(kiln_parallel_get_spin_count(), 777);
  KILN_ASSERT_OK(kiln_parallel_set_spin_count(2000));
  assert_int_equal(kiln_parallel_get_spin_count(), 2000);
}

/* ---- the core count on a made-up /sys/devices/system/cpu ---- */

typedef struct fake_cpu_t {
  int package, core, online; /* online -1: no "online" file */
} fake_cpu_t;

static void write_text(const char *dir, const char *name, int value) {
  char path[1024];
  char text[32];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int length = snprintf(text, sizeof(text), "%d\n", value);
  kiln_test_write_file(path, text, (size_t)length);
}

static void make_fake_cpu(const char *root, int index, fake_cpu_t cpu) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/cpu%d", root, index);
  assert_int_equal(mkdir(dir, 0700), 0);
  if (cpu.online >= 0) {
    write_text(dir, "online", cpu.online);
  }
  char topology[600];
  snprintf(topology, sizeof(topology), "%s/topology", dir);
  assert_int_equal(mkdir(topology, 0700), 0);
  write_text(topology, "physical_package_id", cpu.package);
  write_text(topology, "core_id", cpu.core);
}

static void remove_fake_cpu(const char *root, int index) {
  char path[512];
  const char *files[] = {"topology/physical_package_id", "topology/core_id", "online"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
    snprintf(path, sizeof(path), "%s/cpu%d/%s", root, index, files[i]);
    unlink(path);
  }
  snprintf(path, sizeof(path), "%s/cpu%d/topology", root, index);
  assert_int_equal(rmdir(path), 0);
  snprintf(path, sizeof(path), "%s/cpu%d", root, index);
  assert_int_equal(rmdir(path), 0);
}

static void test_count_physical_cores(void **state) {
  (void)state;
  char *root = kiln_test_make_temp_dir();
  int count = 0;
  KILN_ASSERT_STATUS(kiln_parallel_count_physical_cores(root, &count), NOT_FOUND, root);
  /* two hyperthreads of core 0, core 1, core 0 of a second package, and an
   * offline CPU on a core of its own */
  const fake_cpu_t cpus[] = {{0, 0, -1}, {0, 1, 1}, {0, 0, 1}, {1, 0, 1}, {1, 5, 0}};
  const int num_cpus = (int)(sizeof(cpus) / sizeof(cpus[0]));
  for (int i = 0; i < num_cpus; ++i) {
    make_fake_cpu(root, i, cpus[i]);
  }
  KILN_ASSERT_OK(kiln_parallel_count_physical_cores(root, &count));
  assert_int_equal(count, 3);
  for (int i = 0; i < num_cpus; ++i) {
    remove_fake_cpu(root, i);
  }
  kiln_test_remove_dir(root);
  free(root);
  int cores = kiln_parallel_default_num_threads();
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  assert_true(cores >= 1);
  assert_true(online < 1 || cores <= online);
}

/* ---- every task exactly once ---- */

typedef struct count_launch_t {
  atomic_int ran[MAX_TASKS];
  atomic_int wrong_env;
  int expected_num_task;
} count_launch_t;

static int count_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  count_launch_t *launch = cdata;
  if (penv->num_task != launch->expected_num_task || task_id < 0 || task_id >= MAX_TASKS) {
    atomic_fetch_add(&launch->wrong_env, 1);
    return 0;
  }
  atomic_fetch_add(&launch->ran[task_id], 1);
  return 0;
}

/* Launches num_task tasks; 0 when every task ran once and no other did. */
static int launch_and_count(int num_task, int num_threads) {
  count_launch_t launch;
  for (int i = 0; i < MAX_TASKS; ++i) {
    atomic_init(&launch.ran[i], 0);
  }
  atomic_init(&launch.wrong_env, 0);
  launch.expected_num_task = num_task == 0 ? num_threads : num_task;
  if (kiln_parallel_launch(count_task, &launch, num_task) != 0 || atomic_load(&launch.wrong_env)) {
    return -1;
  }
  for (int i = 0; i < MAX_TASKS; ++i) {
    if (atomic_load(&launch.ran[i]) != (i < launch.expected_num_task)) {
      return -1;
    }
  }
  return 0;
}

static void test_many_launches(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  unsigned random = 12345;
  int histogram[10] = {0};
  for (int i = 0; i < 100000; ++i) {
    int num_task = (int)(next_random(&random) % 10);
    ++histogram[num_task];
    if (launch_and_count(num_task, 3) != 0) {
      fail_msg("launch %d with num_task %d: a task did not run exactly once", i, num_task);
    }
  }
  for (int n = 0; n < 10; ++n) {
    assert_true(histogram[n] > 9000); /* every num_task was tried, 0 included */
  }
}

/* Spin count 0: every wait sleeps at once, so every launch goes through the
 * sleep and wake-up handshake. */
static void test_launches_that_sleep(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  KILN_ASSERT_OK(kiln_parallel_set_spin_count(0));
  unsigned random = 777;
  for (int i = 0; i < 20000; ++i) {
    int num_task = (int)(next_random(&random) % 10);
    if (launch_and_count(num_task, 3) != 0) {
      fail_msg("sleeping launch %d with num_task %d: a task did not run exactly once", i, num_task);
    }
  }
  KILN_ASSERT_OK(kiln_parallel_set_spin_count(2000));
}

/* ---- failing tasks ---- */

typedef struct fail_launch_t {
  atomic_int ran[MAX_TASKS];
  int fail_mask;  /* tasks that fail */
  int quiet_mask; /* failing tasks that set no message */
} fail_launch_t;

static int maybe_fail_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  (void)penv;
  fail_launch_t *launch = cdata;
  atomic_fetch_add(&launch->ran[task_id], 1);
  if (!(launch->fail_mask & (1 << task_id))) {
    return 0;
  }
  char message[64];
  snprintf(message, sizeof(message), "task %d failed on purpose", task_id);
  kiln_backend_set_last_error(launch->quiet_mask & (1 << task_id) ? "" : message);
  return -1;
}

static void run_failing_launch(int num_task, int fail_mask, int quiet_mask, const char *expected) {
  fail_launch_t launch = {.fail_mask = fail_mask, .quiet_mask = quiet_mask};
  for (int i = 0; i < MAX_TASKS; ++i) {
    atomic_init(&launch.ran[i], 0);
  }
  kiln_backend_set_last_error("stale");
  assert_int_equal(kiln_parallel_launch(maybe_fail_task, &launch, num_task), -1);
  if (expected) {
    assert_string_equal(kiln_get_last_error(), expected);
  }
  int tasks = num_task == 0 ? kiln_parallel_get_num_threads() : num_task;
  for (int i = 0; i < MAX_TASKS; ++i) {
    assert_int_equal(atomic_load(&launch.ran[i]), i < tasks); /* every task still ran */
  }
}

static void test_failing_tasks(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  run_failing_launch(7, 1 << 4, 0, "task 4 failed on purpose"); /* a worker's task */
  run_failing_launch(7, 1 << 0, 0, "task 0 failed on purpose"); /* the caller's */
  run_failing_launch(0, 1 << 2, 0, "task 2 failed on purpose"); /* one per thread */
  run_failing_launch(1, 1 << 0, 0, "task 0 failed on purpose"); /* inline */
  run_failing_launch(9, 1 << 5, 1 << 5,
                     "kiln_parallel_launch: task 5 of 9 failed without "
                     "setting the last error");
  run_failing_launch(9, (1 << 1) | (1 << 7), 0, NULL);
  const char *message = kiln_get_last_error();
  assert_true(strcmp(message, "task 1 failed on purpose") == 0 ||
              strcmp(message, "task 7 failed on purpose") == 0);
  /* the next launch starts clean */
  assert_int_equal(launch_and_count(9, 3), 0);
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(1));
  run_failing_launch(5, 1 << 3, 0, "task 3 failed on purpose"); /* one thread: inline */
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
}

/* ---- nested launches ---- */

typedef struct nested_t {
  pthread_t outer_thread[MAX_TASKS];
  int inner_order[MAX_TASKS][MAX_TASKS]; /* [outer][i]: the i-th inner task to run */
  int inner_count[MAX_TASKS];
  int inner_num_task; /* what each outer task asks for */
  int inner_fails;    /* inner task 1 of outer task 2 fails */
  atomic_int wrong_thread;
  atomic_int inner_seen_num_task;
} nested_t;

typedef struct inner_t {
  nested_t *nested;
  int outer;
} inner_t;

static int inner_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  inner_t *inner = cdata;
  nested_t *nested = inner->nested;
  if (!pthread_equal(pthread_self(), nested->outer_thread[inner->outer])) {
    atomic_fetch_add(&nested->wrong_thread, 1);
  }
  atomic_store(&nested->inner_seen_num_task, penv->num_task);
  nested->inner_order[inner->outer][nested->inner_count[inner->outer]++] = task_id;
  if (nested->inner_fails && inner->outer == 2 && task_id == 1) {
    kiln_backend_set_last_error("inner task 1 of outer task 2 failed");
    return -1;
  }
  return 0;
}

static int outer_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  (void)penv;
  nested_t *nested = cdata;
  nested->outer_thread[task_id] = pthread_self();
  inner_t inner = {nested, task_id};
  return kiln_parallel_launch(inner_task, &inner, nested->inner_num_task);
}

static void test_nested_launches_run_inline(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  nested_t nested = {.inner_num_task = 4};
  atomic_init(&nested.wrong_thread, 0);
  atomic_init(&nested.inner_seen_num_task, 0);
  assert_int_equal(kiln_parallel_launch(outer_task, &nested, 0), 0);
  assert_int_equal(atomic_load(&nested.wrong_thread), 0);
  for (int outer = 0; outer < 3; ++outer) {
    assert_int_equal(nested.inner_count[outer], 4);
    for (int i = 0; i < 4; ++i) {
      assert_int_equal(nested.inner_order[outer][i], i); /* in order */
    }
  }
  /* num_task 0 inside a task: one task */
  nested_t zero = {.inner_num_task = 0};
  atomic_init(&zero.wrong_thread, 0);
  atomic_init(&zero.inner_seen_num_task, 0);
  assert_int_equal(kiln_parallel_launch(outer_task, &zero, 3), 0);
  assert_int_equal(zero.inner_count[0] + zero.inner_count[1] + zero.inner_count[2], 3);
  assert_int_equal(atomic_load(&zero.inner_seen_num_task), 1);
  /* an inner failure travels through both launches */
  nested_t failing = {.inner_num_task = 3, .inner_fails = 1};
  atomic_init(&failing.wrong_thread, 0);
  atomic_init(&failing.inner_seen_num_task, 0);
  assert_int_equal(kiln_parallel_launch(outer_task, &failing, 0), -1);
  assert_string_equal(kiln_get_last_error(), "inner task 1 of outer task 2 failed");
  assert_int_equal(failing.inner_count[2], 3);
}

static int set_threads_in_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  (void)penv;
  if (task_id == 1) {
    kiln_status_t status = kiln_parallel_set_num_threads(2);
    *(int *)cdata = status && kiln_status_code(status) == KILN_STATUS_CODE_FAILED_PRECONDITION &&
                    strstr(kiln_status_message(status), "from inside a parallel task");
    kiln_status_free(status);
  }
  return 0;
}

static void test_resize_from_a_task_is_refused(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  int refused = 0;
  assert_int_equal(kiln_parallel_launch(set_threads_in_task, &refused, 3), 0);
  assert_true(refused);
  assert_int_equal(kiln_parallel_get_num_threads(), 3);
}

/* ---- launches from two user threads ---- */

typedef struct user_thread_t {
  unsigned seed;
  int launches;
  int bad;
} user_thread_t;

static void *launch_from_user_thread(void *arg) {
  user_thread_t *user = arg;
  for (int i = 0; i < user->launches; ++i) {
    int num_task = (int)(next_random(&user->seed) % 10);
    user->bad += launch_and_count(num_task, 3) != 0;
  }
  return NULL;
}

static void test_two_user_threads(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  user_thread_t users[2] = {{1, 5000, 0}, {2, 5000, 0}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, launch_from_user_thread, &users[i]), 0);
  }
  user_thread_t self = {3, 2000, 0}; /* and the main thread at the same time */
  launch_from_user_thread(&self);
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_int_equal(users[i].bad, 0);
  }
  assert_int_equal(self.bad, 0);
}

/* ---- the barrier ---- */

#define BARRIER_PHASES 200

typedef struct exchange_t {
  atomic_int slot[MAX_TASKS];
  atomic_int mismatches;
  int fail_task; /* fails before its first barrier; -1: none */
  atomic_int barrier_errors;
} exchange_t;

/* Each phase: write my slot, barrier, read every slot, barrier. */
static int exchange_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  exchange_t *exchange = cdata;
  if (task_id == exchange->fail_task) {
    kiln_backend_set_last_error("exchange task failed before the barrier");
    return -1;
  }
  for (int phase = 1; phase <= BARRIER_PHASES; ++phase) {
    atomic_store(&exchange->slot[task_id], phase);
    if (kiln_parallel_barrier(task_id, penv) != 0) {
      atomic_fetch_add(&exchange->barrier_errors, 1);
      return -1;
    }
    for (int other = 0; other < penv->num_task; ++other) {
      if (atomic_load(&exchange->slot[other]) != phase) {
        atomic_fetch_add(&exchange->mismatches, 1);
      }
    }
    if (kiln_parallel_barrier(task_id, penv) != 0) {
      atomic_fetch_add(&exchange->barrier_errors, 1);
      return -1;
    }
  }
  return 0;
}

static void exchange_init(exchange_t *exchange, int fail_task) {
  for (int i = 0; i < MAX_TASKS; ++i) {
    atomic_init(&exchange->slot[i], 0);
  }
  atomic_init(&exchange->mismatches, 0);
  atomic_init(&exchange->barrier_errors, 0);
  exchange->fail_task = fail_task;
}

static void test_barrier(void **state) {
  (void)state;
  for (int threads = 2; threads <= 4; ++threads) {
    KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads));
    for (int num_task = 0; num_task <= threads; ++num_task) {
      exchange_t exchange;
      exchange_init(&exchange, -1);
      assert_int_equal(kiln_parallel_launch(exchange_task, &exchange, num_task), 0);
      assert_int_equal(atomic_load(&exchange.mismatches), 0);
      int tasks = num_task == 0 ? threads : num_task;
      for (int i = 0; i < tasks; ++i) {
        assert_int_equal(atomic_load(&exchange.slot[i]), BARRIER_PHASES);
      }
    }
  }
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
}

static void test_barrier_refusals(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  exchange_t more;
  exchange_init(&more, -1);
  assert_int_equal(kiln_parallel_launch(exchange_task, &more, 5), -1);
  assert_non_null(strstr(kiln_get_last_error(), "the launch runs on 3 threads, so its tasks do "
                                                "not all run at once and a barrier cannot "
                                                "complete"));
  assert_int_equal(atomic_load(&more.barrier_errors), 5);
  /* a task fails before the barrier: the others give up, and the launch
   * reports the failure, not the barrier */
  for (int fail_task = 0; fail_task < 3; ++fail_task) {
    exchange_t failing;
    exchange_init(&failing, fail_task);
    assert_int_equal(kiln_parallel_launch(exchange_task, &failing, 3), -1);
    assert_string_equal(kiln_get_last_error(), "exchange task failed before the barrier");
    assert_int_equal(atomic_load(&failing.barrier_errors), 2);
  }
  /* one thread: the tasks run inline, so more than one cannot share a barrier */
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(1));
  exchange_t inline_tasks;
  exchange_init(&inline_tasks, -1);
  assert_int_equal(kiln_parallel_launch(exchange_task, &inline_tasks, 2), -1);
  assert_non_null(strstr(kiln_get_last_error(), "task 0 of 2: the launch runs on 1 threads"));
  exchange_init(&inline_tasks, -1);
  assert_int_equal(kiln_parallel_launch(exchange_task, &inline_tasks, 1), 0); /* one task: fine */
  assert_int_equal(kiln_parallel_barrier(0, NULL), -1);
  assert_non_null(strstr(kiln_get_last_error(), "penv has no sync handle"));
  kiln_parallel_env_t no_sync = {NULL, 2};
  assert_int_equal(kiln_parallel_barrier(0, &no_sync), -1);
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
}

/* ---- resizing ---- */

typedef struct who_t {
  pthread_t thread[MAX_TASKS];
  atomic_int seen_num_task;
} who_t;

static int record_thread(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  who_t *who = cdata;
  who->thread[task_id] = pthread_self();
  atomic_store(&who->seen_num_task, penv->num_task);
  return 0;
}

static int distinct_threads(const who_t *who, int count) {
  int distinct = 0;
  for (int i = 0; i < count; ++i) {
    int seen_before = 0;
    for (int j = 0; j < i; ++j) {
      seen_before |= pthread_equal(who->thread[i], who->thread[j]) != 0;
    }
    distinct += !seen_before;
  }
  return distinct;
}

static void test_set_num_threads_between_launches(void **state) {
  (void)state;
  const int counts[] = {1, 2, 3, 4, 3, 1, 4, 2, 1};
  for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) {
    int n = counts[i];
    KILN_ASSERT_OK(kiln_parallel_set_num_threads(n));
    assert_int_equal(kiln_parallel_get_num_threads(), n);
    who_t who;
    atomic_init(&who.seen_num_task, 0);
    assert_int_equal(kiln_parallel_launch(record_thread, &who, 0), 0);
    assert_int_equal(atomic_load(&who.seen_num_task), n);
    assert_int_equal(distinct_threads(&who, n), n);            /* one thread per task */
    assert_true(pthread_equal(who.thread[0], pthread_self())); /* the caller runs task 0 */
    assert_int_equal(launch_and_count(9, n), 0);
    assert_int_equal(launch_and_count(2, n), 0);
  }
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
}

/* A child forked after the parent's workers started runs launches on
 * workers of its own, and the parent's pool still works after. */
static void test_fork_child_starts_its_own_workers(void **state) {
  (void)state;
#if defined(__SANITIZE_THREAD__)
  skip(); /* ThreadSanitizer refuses threads started after a multi-threaded fork */
#endif
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(3));
  assert_int_equal(launch_and_count(7, 3), 0); /* the parent's workers run */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int ok = launch_and_count(7, 3) == 0 && kiln_parallel_set_num_threads(2) == NULL &&
             launch_and_count(5, 2) == 0;
    _exit(ok ? 0 : 1);
  }
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  assert_true(WIFEXITED(wstatus));
  assert_int_equal(WEXITSTATUS(wstatus), 0);
  assert_int_equal(launch_and_count(7, 3), 0);
}

/* ---- argument errors ---- */

static void test_launch_argument_errors(void **state) {
  (void)state;
  assert_int_equal(kiln_parallel_launch(NULL, NULL, 2), -1);
  assert_string_equal(kiln_get_last_error(), "kiln_parallel_launch: the lambda is NULL");
  assert_int_equal(kiln_parallel_launch(count_task, NULL, -3), -1);
  assert_string_equal(kiln_get_last_error(), "kiln_parallel_launch: num_task is -3, expected >= 0");
}

int main(void) {
  /* read once, when the pool first starts: before any test runs */
  setenv("KILN_NUM_THREADS", "3", 1);
  setenv("KILN_SPIN_COUNT", " 777", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_settings_come_from_the_environment),
      cmocka_unit_test(test_parse_setting),
      cmocka_unit_test(test_setting_errors),
      cmocka_unit_test(test_count_physical_cores),
      cmocka_unit_test(test_many_launches),
      cmocka_unit_test(test_launches_that_sleep),
      cmocka_unit_test(test_failing_tasks),
      cmocka_unit_test(test_nested_launches_run_inline),
      cmocka_unit_test(test_resize_from_a_task_is_refused),
      cmocka_unit_test(test_two_user_threads),
      cmocka_unit_test(test_barrier),
      cmocka_unit_test(test_barrier_refusals),
      cmocka_unit_test(test_set_num_threads_between_launches),
      cmocka_unit_test(test_fork_child_starts_its_own_workers),
      cmocka_unit_test(test_launch_argument_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
