/*
 * The thread pool behind kiln_parallel_launch (include/kiln/backend.h) and
 * its settings (include/kiln/parallel.h); TVM's ThreadPool,
 * ParallelLauncher and TVMBackendParallelLaunch, in C. docs/thread-pool.md
 * has the whole design.
 *
 * A pool of n threads is the launching thread plus n - 1 persistent workers,
 * started on the first launch that needs them and joined at exit. A launch
 * of num_task tasks on T = min(num_task, n) threads maps the tasks
 * statically: thread t runs tasks t, t + T, t + 2T, ... and the caller is
 * thread 0. There is no task queue: each worker has one command word the
 * launcher writes (run, or stop) and the launch itself sits in one slot of
 * the pool, guarded by the pool's mutex, so one launch runs at a time and
 * launches from other user threads wait for it. A worker polls its command
 * for the spin count, then sleeps on its condition variable; the launcher
 * signals only a worker that said it sleeps (both sides store their flag,
 * then load the other's, with sequentially consistent atomics, so one of
 * them always sees the other and no wake-up is lost). The caller waits for
 * its workers the same way.
 *
 * A task that returns non-zero marks the launch failed; the first to fail
 * copies its thread's last error into the launch, and the launch returns -1
 * with that message as the caller's last error once every task has ended.
 * Launches with one thread, one task, or from inside a task run their tasks
 * inline, in order, with no lock. A barrier needs every task on its own
 * thread at once; a launch that maps several tasks to a thread refuses it.
 * Nothing is allocated: the workers live in a static array.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "kiln/parallel.h"

#define ERROR_CAPACITY     1024
#define DEFAULT_SPIN_COUNT 10000

/* ---- one launch ---- */

/* What kiln_parallel_barrier needs (penv->sync_handle points here). */
typedef struct launch_sync_t {
  atomic_int barrier_arrived;
  atomic_uint barrier_generation;
  atomic_int tasks_ended;
  int num_threads; /* threads running the tasks: a barrier needs num_task of them */
} launch_sync_t;

typedef struct launch_t {
  kiln_parallel_lambda_fn f;
  void *cdata;
  kiln_parallel_env_t env;
  launch_sync_t sync;
  atomic_int failed;
  char error[ERROR_CAPACITY]; /* the first failing task's message */
} launch_t;

/* Non-zero on a worker, and on a caller while it runs its tasks: a launch
 * from such a thread runs inline. */
static _Thread_local int in_task;

static void launch_init(launch_t *launch, kiln_parallel_lambda_fn f, void *cdata, int num_task,
                        int num_threads) {
  launch->f = f;
  launch->cdata = cdata;
  launch->env.sync_handle = &launch->sync;
  launch->env.num_task = num_task;
  atomic_store(&launch->sync.barrier_arrived, 0);
  atomic_store(&launch->sync.barrier_generation, 0);
  atomic_store(&launch->sync.tasks_ended, 0);
  launch->sync.num_threads = num_threads;
  atomic_store(&launch->failed, 0);
  launch->error[0] = '\0';
}

static void launch_record_failure(launch_t *launch, int task_id) {
  if (atomic_exchange(&launch->failed, 1) != 0) {
    return; /* an earlier failure's message wins */
  }
  const char *message = kiln_get_last_error();
  if (message[0] != '\0') {
    snprintf(launch->error, sizeof(launch->error), "%s", message);
  } else {
    snprintf(launch->error, sizeof(launch->error),
             "kiln_parallel_launch: task %d of %d failed without setting the last error", task_id,
             launch->env.num_task);
  }
}

static void launch_run_task(launch_t *launch, int task_id) {
  if (launch->f(task_id, &launch->env, launch->cdata) != 0) {
    launch_record_failure(launch, task_id);
  }
  atomic_fetch_add(&launch->sync.tasks_ended, 1); /* after the failure is recorded */
}

/* Thread `thread` of the launch runs its share of the tasks. */
static void launch_run_thread(launch_t *launch, int thread) {
  ++in_task;
  for (int task = thread; task < launch->env.num_task; task += launch->sync.num_threads) {
    launch_run_task(launch, task);
  }
  --in_task;
}

/* After every task ended: the launch's result, with the caller's last error. */
static int launch_result(const launch_t *launch) {
  if (!atomic_load(&launch->failed)) {
    return 0;
  }
  kiln_backend_set_last_error(launch->error);
  return -1;
}

/* Every task on the calling thread, in order. */
static int launch_inline(kiln_parallel_lambda_fn f, void *cdata, int num_task) {
  launch_t launch;
  launch_init(&launch, f, cdata, num_task, 1);
  launch_run_thread(&launch, 0);
  return launch_result(&launch);
}

/* ---- spinning ---- */

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ---- the pool ---- */

typedef enum worker_command_e { WORKER_IDLE = 0, WORKER_RUN = 1, WORKER_STOP = 2 } worker_command_t;

typedef struct worker_t {
  _Alignas(64) atomic_int command; /* worker_command_t */
  atomic_int sleeping;
  int index;
  int running; /* guarded by the pool's lock */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
} worker_t;

static struct {
  pthread_once_t once;
  pthread_mutex_t lock; /* one launch (or resize) at a time */
  atomic_int num_threads;
  atomic_int spin_count;
  launch_t launch; /* the launch in progress, guarded by lock */
  atomic_int pending_workers;
  atomic_int caller_sleeping;
  pthread_mutex_t done_lock;
  pthread_cond_t done;
  worker_t workers[KILN_PARALLEL_MAX_THREADS]; /* [0] is unused: the caller */
} pool = {
    .once = PTHREAD_ONCE_INIT,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .done_lock = PTHREAD_MUTEX_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

/* Polls `*word` until it differs from `idle` for the spin count; 0 when it
 * did not. */
static int spin_until_changed(atomic_int *word, int idle) {
  int spins = atomic_load_explicit(&pool.spin_count, memory_order_relaxed);
  for (int i = 0; i < spins; ++i) {
    if (atomic_load(word) != idle) {
      return 1;
    }
    cpu_relax();
  }
  return 0;
}

/* Sleeps on `cond` until `*word` differs from `idle`; `*sleeping` tells the
 * other side to signal. */
static void sleep_until_changed(atomic_int *word, int idle, atomic_int *sleeping,
                                pthread_mutex_t *lock, pthread_cond_t *cond) {
  pthread_mutex_lock(lock);
  atomic_store(sleeping, 1);
  while (atomic_load(word) == idle) {
    pthread_cond_wait(cond, lock);
  }
  atomic_store(sleeping, 0);
  pthread_mutex_unlock(lock);
}

/* Wakes the side sleeping in sleep_until_changed, if it sleeps; call after
 * changing the word it waits on. */
static void wake_if_sleeping(atomic_int *sleeping, pthread_mutex_t *lock, pthread_cond_t *cond) {
  if (atomic_load(sleeping)) {
    pthread_mutex_lock(lock);
    pthread_cond_signal(cond);
    pthread_mutex_unlock(lock);
  }
}

static worker_command_t worker_wait(worker_t *worker) {
  if (!spin_until_changed(&worker->command, WORKER_IDLE)) {
    sleep_until_changed(&worker->command, WORKER_IDLE, &worker->sleeping, &worker->lock,
                        &worker->wake);
  }
  return (worker_command_t)atomic_exchange(&worker->command, WORKER_IDLE);
}

static void worker_post(worker_t *worker, worker_command_t command) {
  atomic_store(&worker->command, (int)command);
  wake_if_sleeping(&worker->sleeping, &worker->lock, &worker->wake);
}

static void worker_finish_launch(void) {
  if (atomic_fetch_sub(&pool.pending_workers, 1) == 1) {
    wake_if_sleeping(&pool.caller_sleeping, &pool.done_lock, &pool.done);
  }
}

static void *worker_main(void *arg) {
  worker_t *worker = arg;
  in_task = 1; /* launches from a worker's tasks run inline */
  for (;;) {
    worker_command_t command = worker_wait(worker);
    switch (command) {
    case WORKER_RUN:
      launch_run_thread(&pool.launch, worker->index);
      worker_finish_launch();
      break;
    case WORKER_STOP:
      return NULL;
    case WORKER_IDLE:
      break;
    }
  }
}

/* Under the pool's lock. 0 when the thread cannot be created. */
static int worker_start(worker_t *worker, int index) {
  worker->index = index;
  atomic_store(&worker->command, WORKER_IDLE);
  atomic_store(&worker->sleeping, 0);
  if (pthread_mutex_init(&worker->lock, NULL) != 0) {
    return 0;
  }
  if (pthread_cond_init(&worker->wake, NULL) != 0) {
    pthread_mutex_destroy(&worker->lock);
    return 0;
  }
  if (pthread_create(&worker->thread, NULL, worker_main, worker) != 0) {
    pthread_cond_destroy(&worker->wake);
    pthread_mutex_destroy(&worker->lock);
    return 0;
  }
  worker->running = 1;
  return 1;
}

/* Under the pool's lock. */
static void worker_stop(worker_t *worker) {
  if (!worker->running) {
    return;
  }
  worker_post(worker, WORKER_STOP);
  pthread_join(worker->thread, NULL);
  pthread_cond_destroy(&worker->wake);
  pthread_mutex_destroy(&worker->lock);
  worker->running = 0;
}

/* Under the pool's lock: workers 1..num_threads-1 running; returns how many
 * threads (the caller included) are there, fewer when one cannot start. */
static int pool_start_workers(int num_threads) {
  for (int i = 1; i < num_threads; ++i) {
    if (!pool.workers[i].running && !worker_start(&pool.workers[i], i)) {
      KILN_LOG_WARN("kiln_parallel_launch: cannot start worker thread %d; running on %d threads", i,
                    i);
      return i;
    }
  }
  return num_threads;
}

/* Under the pool's lock. */
static void pool_stop_workers_from(int first) {
  for (int i = KILN_PARALLEL_MAX_THREADS - 1; i >= first && i >= 1; --i) {
    worker_stop(&pool.workers[i]);
  }
}

static void pool_shutdown(void) {
  if (in_task || pthread_mutex_trylock(&pool.lock) != 0) {
    return; /* exit from a task, or during a launch: the workers end with the process */
  }
  pool_stop_workers_from(1);
  pthread_mutex_unlock(&pool.lock);
}

static int setting_from_env(const char *name, int min, int max, int fallback) {
  const char *text = getenv(name);
  int value = fallback;
  if (!text) {
    return fallback;
  }
  kiln_status_t status = kiln_parallel_parse_setting(name, text, min, max, &value);
  if (status) {
    KILN_LOG_WARN("%s; using %d", kiln_status_message(status), fallback);
    kiln_status_free(status);
    return fallback;
  }
  return value;
}

/* In a forked child only the forking thread exists: the workers are
 * forgotten (a worker's lock and condition are made anew when it starts)
 * and the pool's locks start free, so the child's first launch starts
 * workers of its own (a measuring process of `kiln tune`). Forking from
 * inside a task is not supported. */
static void pool_after_fork_in_child(void) {
  pthread_mutex_init(&pool.lock, NULL);
  pthread_mutex_init(&pool.done_lock, NULL);
  pthread_cond_init(&pool.done, NULL);
  atomic_store(&pool.pending_workers, 0);
  atomic_store(&pool.caller_sleeping, 0);
  for (int i = 0; i < KILN_PARALLEL_MAX_THREADS; ++i) {
    pool.workers[i].running = 0;
  }
}

static void pool_init(void) {
  atomic_store(&pool.num_threads, setting_from_env("KILN_NUM_THREADS", 1, KILN_PARALLEL_MAX_THREADS,
                                                   kiln_parallel_default_num_threads()));
  atomic_store(
      &pool.spin_count,
      setting_from_env("KILN_SPIN_COUNT", 0, KILN_PARALLEL_MAX_SPIN_COUNT, DEFAULT_SPIN_COUNT));
  atexit(pool_shutdown);
  pthread_atfork(NULL, NULL, pool_after_fork_in_child);
}

static void pool_ensure_init(void) {
  pthread_once(&pool.once, pool_init);
}

/* The caller waits for its workers to finish their tasks: polls, then sleeps. */
static void pool_wait_for_workers(void) {
  int spins = atomic_load_explicit(&pool.spin_count, memory_order_relaxed);
  for (int i = 0; i < spins; ++i) {
    if (atomic_load(&pool.pending_workers) == 0) {
      return;
    }
    cpu_relax();
  }
  pthread_mutex_lock(&pool.done_lock);
  atomic_store(&pool.caller_sleeping, 1);
  while (atomic_load(&pool.pending_workers) != 0) {
    pthread_cond_wait(&pool.done, &pool.done_lock);
  }
  atomic_store(&pool.caller_sleeping, 0);
  pthread_mutex_unlock(&pool.done_lock);
}

/* Under the pool's lock: runs the launch on num_threads threads. */
static int pool_run(kiln_parallel_lambda_fn f, void *cdata, int num_task, int num_threads) {
  launch_init(&pool.launch, f, cdata, num_task, num_threads);
  atomic_store(&pool.pending_workers, num_threads - 1);
  for (int i = 1; i < num_threads; ++i) {
    worker_post(&pool.workers[i], WORKER_RUN);
  }
  launch_run_thread(&pool.launch, 0);
  pool_wait_for_workers();
  return launch_result(&pool.launch);
}

/* ---- the ABI ---- */

static int launch_check(kiln_parallel_lambda_fn f, int num_task) {
  char message[128];
  if (!f) {
    snprintf(message, sizeof(message), "kiln_parallel_launch: the lambda is NULL");
  } else if (num_task < 0) {
    snprintf(message, sizeof(message), "kiln_parallel_launch: num_task is %d, expected >= 0",
             num_task);
  } else {
    return 0;
  }
  kiln_backend_set_last_error(message);
  return -1;
}

int kiln_parallel_launch(kiln_parallel_lambda_fn f, void *cdata, int num_task) {
  if (launch_check(f, num_task) != 0) {
    return -1;
  }
  pool_ensure_init();
  int pool_threads = atomic_load(&pool.num_threads);
  if (in_task || pool_threads == 1 || num_task == 1) {
    return launch_inline(f, cdata, num_task == 0 ? 1 : num_task);
  }
  pthread_mutex_lock(&pool.lock);
  pool_threads = atomic_load(&pool.num_threads); /* a resize may have come first */
  int wanted = num_task == 0 || num_task > pool_threads ? pool_threads : num_task;
  int threads = pool_start_workers(wanted);
  int result = pool_run(f, cdata, num_task == 0 ? threads : num_task, threads);
  pthread_mutex_unlock(&pool.lock);
  return result;
}

static int barrier_fail(const char *format, ...) KILN_PRINTF_FORMAT(1, 2);

/* Sets the last error and returns -1. */
static int barrier_fail(const char *format, ...) {
  char message[320];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  kiln_backend_set_last_error(message);
  return -1;
}

static int barrier_wait(launch_sync_t *sync, unsigned generation, int task_id, int num_task) {
  int spins = atomic_load_explicit(&pool.spin_count, memory_order_relaxed);
  for (int i = 0;; i = i < spins ? i + 1 : i) {
    if (atomic_load(&sync->barrier_generation) != generation) {
      return 0;
    }
    if (atomic_load(&sync->tasks_ended) > 0) {
      /* a task ended without reaching this barrier, unless it passed it */
      if (atomic_load(&sync->barrier_generation) != generation) {
        return 0;
      }
      return barrier_fail("kiln_parallel_barrier: task %d of %d waits for a task that already "
                          "ended (failed, or skipped the barrier); %d threads",
                          task_id, num_task, sync->num_threads);
    }
    if (i < spins) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
}

int kiln_parallel_barrier(int task_id, kiln_parallel_env_t *penv) {
  if (!penv || !penv->sync_handle) {
    kiln_backend_set_last_error("kiln_parallel_barrier: penv has no sync handle: call it from a "
                                "task of kiln_parallel_launch with the penv the task was given");
    return -1;
  }
  launch_sync_t *sync = penv->sync_handle;
  if (penv->num_task <= 1) {
    return 0;
  }
  if (penv->num_task > sync->num_threads) {
    return barrier_fail("kiln_parallel_barrier: task %d of %d: the launch runs on %d threads, so "
                        "its tasks do not all run at once and a barrier cannot complete; launch "
                        "at most kiln_parallel_get_num_threads() tasks (or 0) to use a barrier",
                        task_id, penv->num_task, sync->num_threads);
  }
  unsigned generation = atomic_load(&sync->barrier_generation);
  if (atomic_fetch_add(&sync->barrier_arrived, 1) == penv->num_task - 1) {
    atomic_store(&sync->barrier_arrived, 0);
    atomic_fetch_add(&sync->barrier_generation, 1);
    return 0;
  }
  return barrier_wait(sync, generation, task_id, penv->num_task);
}

/* ---- settings ---- */

kiln_status_t kiln_parallel_set_num_threads(int count) {
  if (count < 1 || count > KILN_PARALLEL_MAX_THREADS) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_parallel_set_num_threads: %d is outside [1, %d]",
                       count, KILN_PARALLEL_MAX_THREADS);
  }
  if (in_task) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "kiln_parallel_set_num_threads: called from inside a parallel task; "
                       "change the thread count between launches");
  }
  pool_ensure_init();
  pthread_mutex_lock(&pool.lock);
  pool_stop_workers_from(count);
  atomic_store(&pool.num_threads, count);
  pthread_mutex_unlock(&pool.lock);
  return KILN_OK;
}

int kiln_parallel_get_num_threads(void) {
  pool_ensure_init();
  return atomic_load(&pool.num_threads);
}

kiln_status_t kiln_parallel_set_spin_count(int spin_count) {
  if (spin_count < 0 || spin_count > KILN_PARALLEL_MAX_SPIN_COUNT) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_parallel_set_spin_count: %d is outside [0, %d]",
                       spin_count, KILN_PARALLEL_MAX_SPIN_COUNT);
  }
  pool_ensure_init();
  atomic_store(&pool.spin_count, spin_count);
  return KILN_OK;
}

int kiln_parallel_get_spin_count(void) {
  pool_ensure_init();
  return atomic_load(&pool.spin_count);
}

kiln_status_t kiln_parallel_parse_setting(const char *name, const char *text, int min, int max,
                                          int *out_value) {
  const char *shown = text ? text : "(null)";
  char *end = NULL;
  errno = 0;
  long value = text ? strtol(text, &end, 10) : 0;
  int valid = text && end != text && errno == 0;
  while (valid && *end == ' ') {
    ++end;
  }
  if (!valid || *end != '\0' || value < min || value > max) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: \"%s\" is not an integer in [%d, %d]", name, shown,
                       min, max);
  }
  *out_value = (int)value;
  return KILN_OK;
}

/* ---- the default thread count ---- */

/* Reads one integer from `dir`/cpu`cpu`/`file`; 0 when it cannot. */
static int read_cpu_int(const char *dir, int cpu, const char *file, int *out_value) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/cpu%d/%s", dir, cpu, file);
  FILE *stream = fopen(path, "r");
  if (!stream) {
    return 0;
  }
  int ok = fscanf(stream, "%d", out_value) == 1;
  fclose(stream);
  return ok;
}

static int cpu_exists(const char *dir, int cpu) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/cpu%d", dir, cpu);
  return access(path, F_OK) == 0;
}

typedef struct core_set_t {
  int package[KILN_PARALLEL_MAX_THREADS];
  int core[KILN_PARALLEL_MAX_THREADS];
  int count;
} core_set_t;

static void core_set_add(core_set_t *set, int package, int core) {
  for (int i = 0; i < set->count; ++i) {
    if (set->package[i] == package && set->core[i] == core) {
      return;
    }
  }
  if (set->count < KILN_PARALLEL_MAX_THREADS) {
    set->package[set->count] = package;
    set->core[set->count] = core;
    ++set->count;
  }
}

kiln_status_t kiln_parallel_count_physical_cores(const char *cpu_dir, int *out_count) {
  core_set_t set;
  set.count = 0;
  for (int cpu = 0; cpu < 4 * KILN_PARALLEL_MAX_THREADS && cpu_exists(cpu_dir, cpu); ++cpu) {
    int online = 1;
    int package = 0;
    int core = 0;
    if (read_cpu_int(cpu_dir, cpu, "online", &online) && !online) {
      continue; /* cpu0 has no "online" file: it is always online */
    }
    if (read_cpu_int(cpu_dir, cpu, "topology/physical_package_id", &package) &&
        read_cpu_int(cpu_dir, cpu, "topology/core_id", &core)) {
      core_set_add(&set, package, core);
    }
  }
  if (set.count == 0) {
    return KILN_STATUS(NOT_FOUND,
                       "kiln_parallel_count_physical_cores: no CPU under %s has a readable "
                       "topology/core_id and topology/physical_package_id",
                       cpu_dir);
  }
  *out_count = set.count;
  return KILN_OK;
}

int kiln_parallel_default_num_threads(void) {
  int count = 0;
  kiln_status_t status = kiln_parallel_count_physical_cores("/sys/devices/system/cpu", &count);
  if (status) {
    kiln_status_free(status);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    count = online > 0
                ? (int)(online < KILN_PARALLEL_MAX_THREADS ? online : KILN_PARALLEL_MAX_THREADS)
                : 1;
  }
  return count;
}
