/*
 * One configuration's measurement in a child process (tune_measure.h):
 * fork, build and time in the child, one fixed-size verdict through a
 * pipe, poll(2) with the timeout in the parent, SIGKILL past it.
 */
#define _POSIX_C_SOURCE 200809L

#include "compiler/tune_measure.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/arena.h"
#include "codegen/target.h"
#include "compiler/lower.h"
#include "kiln/backend.h"
#include "kiln/model.h"
#include "kiln/module.h"
#include "kiln/parallel.h"
#include "op/compute.h"
#include "tir/transform.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- building ---- */

/* The kernel lowered with `config` (NULL: the default; `space` written
 * when not NULL), before the loop-IR passes. */
static kiln_status_t lower(const kiln_tune_kernel_t *k, const kiln_schedule_config_t *config,
                           kiln_schedule_space_t *space, kiln_arena_t *arena,
                           const kiln_tir_prim_func_t **out_func) {
  kiln_schedule_target_t target;
  KILN_RETURN_IF_ERROR(kiln_compiler_schedule_target(k->target, &target));
  target.config = config;
  target.out_space = space;
  return kiln_compiler_lower_function(k->function, &target, arena, k->name, out_func);
}

static kiln_status_t build(const kiln_tune_kernel_t *k, const kiln_schedule_config_t *config,
                           kiln_arena_t *arena, kiln_runtime_module_t **out_module,
                           kiln_packed_fn *out_fn) {
  const kiln_tir_prim_func_t *func = NULL, *passed = NULL;
  KILN_RETURN_IF_ERROR(lower(k, config, NULL, arena, &func));
  kiln_tir_pipeline_options_t pipeline = kiln_tir_pipeline_options_default();
  KILN_RETURN_IF_ERROR(kiln_tir_lower_pipeline(arena, func, &pipeline, &passed));
  KILN_RETURN_IF_ERROR(
      kiln_codegen_build(kiln_allocator_system(), k->target, &passed, 1, out_module));
  return kiln_runtime_module_get_function(*out_module, k->name, out_fn);
}

static kiln_status_t run(const kiln_tune_kernel_t *k, kiln_packed_fn fn) {
  DLTensor tensors[KILN_TUNE_MAX_ARGS];
  kiln_value_t values[KILN_TUNE_MAX_ARGS];
  int codes[KILN_TUNE_MAX_ARGS];
  int n = k->num_inputs + k->num_outputs;
  for (int i = 0; i < n; ++i) {
    tensors[i] = *kiln_tensor_dl(k->args[i]);
    values[i].v_handle = &tensors[i];
    codes[i] = KILN_ARG_DLTENSOR;
  }
  if (fn(values, codes, n, NULL, NULL, NULL) != 0) {
    return KILN_STATUS(INTERNAL, "%s: %s", k->name, kiln_get_last_error());
  }
  return KILN_OK;
}

/* ---- preparing ---- */

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

void kiln_tune_fill_uniform(kiln_tensor_t *tensor, uint64_t *state) {
  if (kiln_tensor_dtype(tensor) != KILN_DTYPE_FLOAT32) {
    return;
  }
  float *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    data[i] = (float)((double)(next_random(state) >> 11) / 4503599627370496.0 - 1.0);
  }
}

static kiln_status_t new_tensor(const kiln_tensor_type_t *type, kiln_tensor_t **out_tensor) {
  KILN_RETURN_IF_ERROR(kiln_tensor_create(kiln_allocator_system(), type->dtype, type->ndim,
                                          type->shape, out_tensor));
  memset(kiln_tensor_data(*out_tensor), 0, kiln_tensor_byte_size(*out_tensor));
  return KILN_OK;
}

static kiln_status_t make_input(const kiln_type_t *type, uint64_t *state,
                                kiln_tensor_t **out_tensor) {
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  if (!t) {
    return KILN_STATUS(INVALID_ARGUMENT, "a kernel parameter that is not a tensor");
  }
  KILN_RETURN_IF_ERROR(new_tensor(t, out_tensor));
  kiln_tune_fill_uniform(*out_tensor, state);
  return KILN_OK;
}

/* The outputs' types: the function's result, one tensor or a tuple's. */
static kiln_status_t output_types(const kiln_function_t *f, int *out_count,
                                  const kiln_type_t **out_types) {
  const kiln_type_t *result = f->body->checked_type;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(result);
  *out_count = tuple ? tuple->count : 1;
  if (*out_count > KILN_TUNE_MAX_ARGS / 2) {
    return KILN_STATUS(UNIMPLEMENTED, "a kernel with %d outputs", *out_count);
  }
  for (int i = 0; i < *out_count; ++i) {
    out_types[i] = tuple ? tuple->fields[i] : result;
  }
  return KILN_OK;
}

static kiln_status_t make_tensors(kiln_tune_kernel_t *k, uint64_t seed) {
  const kiln_function_t *f = k->function;
  if (f->num_params > KILN_TUNE_MAX_ARGS / 2) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d parameters", k->name, f->num_params);
  }
  uint64_t state = seed * 2654435761u + 88172645463325252ull;
  k->num_inputs = f->num_params;
  for (int i = 0; i < f->num_params; ++i) {
    KILN_RETURN_IF_ERROR(make_input(f->params[i]->base.checked_type, &state, &k->args[i]));
  }
  const kiln_type_t *types[KILN_TUNE_MAX_ARGS / 2];
  KILN_RETURN_IF_ERROR(output_types(f, &k->num_outputs, types));
  for (int i = 0; i < k->num_outputs; ++i) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(types[i]);
    if (!t) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: an output that is not a tensor", k->name);
    }
    KILN_RETURN_IF_ERROR(new_tensor(t, &k->args[k->num_inputs + i]));
    KILN_RETURN_IF_ERROR(new_tensor(t, &k->expected[i]));
  }
  return KILN_OK;
}

/* The default configuration's outputs, on this thread alone. */
static kiln_status_t expected_outputs(kiln_tune_kernel_t *k) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_runtime_module_t *module = NULL;
  kiln_packed_fn fn = NULL;
  kiln_status_t status = build(k, NULL, &arena, &module, &fn);
  if (!status) {
    status = run(k, fn);
  }
  for (int i = 0; !status && i < k->num_outputs; ++i) {
    memcpy(kiln_tensor_data(k->expected[i]), kiln_tensor_data(k->args[k->num_inputs + i]),
           kiln_tensor_byte_size(k->expected[i]));
  }
  kiln_runtime_module_release(module);
  kiln_arena_deinitialize(&arena);
  return status;
}

kiln_status_t kiln_tune_kernel_prepare(kiln_allocator_t allocator, uint64_t seed,
                                       kiln_tune_kernel_t *kernel) {
  (void)allocator;
  KILN_RETURN_IF_ERROR(make_tensors(kernel, seed));
  return expected_outputs(kernel);
}

void kiln_tune_kernel_deinitialize(kiln_tune_kernel_t *kernel) {
  for (int i = 0; i < KILN_TUNE_MAX_ARGS; ++i) {
    kiln_tensor_release(kernel->args[i]);
    kiln_tensor_release(kernel->expected[i]);
    kernel->args[i] = kernel->expected[i] = NULL;
  }
}

kiln_status_t kiln_tune_kernel_space(const kiln_tune_kernel_t *kernel,
                                     kiln_schedule_space_t *out_space) {
  memset(out_space, 0, sizeof(*out_space));
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = lower(kernel, NULL, out_space, &arena, &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

/* ---- the child ---- */

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double kiln_tune_median(double *values, int count) {
  qsort(values, (size_t)count, sizeof(double), compare_doubles);
  return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

/* Evicts every argument but the first (the data its producer has just
 * written, in a model) from every cache level, as TVM's time evaluator
 * does (cache_flush_cpu_non_first_arg): measured hot, a kernel's weights
 * stay in the cache between runs as they do not in a model, and the search
 * would favour configurations that only win hot. */
static void flush_args(const kiln_tune_kernel_t *k) {
#if defined(__x86_64__) || defined(__i386__)
  for (int i = 1; i < k->num_inputs + k->num_outputs; ++i) {
    const char *data = kiln_tensor_data(k->args[i]);
    size_t bytes = kiln_tensor_byte_size(k->args[i]);
    for (size_t offset = 0; offset < bytes; offset += 64) {
      __builtin_ia32_clflush(data + offset);
    }
  }
  __builtin_ia32_mfence();
#else
  (void)k;
#endif
}

typedef struct evict_t {
  const kiln_tune_kernel_t *k;
  char *buffers; /* evict_bytes per thread */
  volatile int sink;
} evict_t;

/* One thread's share of evict_private: overwrites its core's private
 * caches with its own buffer (a write a line, so the lines it evicts are
 * its own), then reads the first argument back in. */
static int evict_task(int task_id, kiln_parallel_env_t *penv, void *cdata) {
  (void)penv;
  evict_t *e = cdata;
  size_t bytes = (size_t)e->k->evict_bytes;
  volatile char *buffer = e->buffers + (size_t)task_id * bytes;
  for (size_t i = 0; i < bytes; i += 64) {
    buffer[i] = (char)i;
  }
  const volatile char *first = kiln_tensor_data(e->k->args[0]);
  size_t first_bytes = kiln_tensor_byte_size(e->k->args[0]);
  int sum = 0;
  for (size_t i = 0; i < first_bytes; i += 64) {
    sum += first[i];
  }
  e->sink = sum;
  return 0;
}

/* The weights out of every core's private caches and still in the shared
 * one, where a model's next call finds them when its constants fit there;
 * the first argument in the private caches, as its producer leaves it. */
static kiln_status_t evict_private(const kiln_tune_kernel_t *k, evict_t *e) {
  int threads = k->threads > 0 ? k->threads : 1;
  if (!e->buffers) {
    KILN_RETURN_IF_ERROR(kiln_allocator_malloc(
        kiln_allocator_system(), (size_t)threads * (size_t)k->evict_bytes, (void **)&e->buffers));
  }
  e->k = k;
  if (kiln_parallel_launch(evict_task, e, threads) != 0) {
    return KILN_STATUS(INTERNAL, "tune: evicting the caches failed: %s", kiln_get_last_error());
  }
  return KILN_OK;
}

static kiln_status_t prepare_caches(const kiln_tune_kernel_t *k, evict_t *e) {
  if (k->cache == KILN_TUNE_CACHE_SHARED) {
    return evict_private(k, e);
  }
  if (k->cache != KILN_TUNE_CACHE_PRIVATE) { /* MEMORY, or AUTO left unresolved */
    flush_args(k);
  }
  return KILN_OK;
}

static kiln_status_t time_runs(const kiln_tune_kernel_t *k, kiln_packed_fn fn, double *out_ms) {
  double times[KILN_TUNE_MAX_RUNS];
  int n = 0;
  evict_t evict = {0};
  kiln_status_t status = run(k, fn); /* warm-up */
  for (double start = now_ms(), spent = 0;
       !status && n < KILN_TUNE_MAX_RUNS &&
       (n < KILN_TUNE_MIN_RUNS || spent < KILN_TUNE_MEASURE_SECONDS * 1e3);
       spent = now_ms() - start) {
    status = prepare_caches(k, &evict);
    double begin = now_ms();
    status = status ? status : run(k, fn);
    times[n++] = now_ms() - begin;
  }
  kiln_allocator_free(kiln_allocator_system(), evict.buffers);
  KILN_RETURN_IF_ERROR(status);
  *out_ms = kiln_tune_median(times, n);
  return KILN_OK;
}

static kiln_status_t check_outputs(const kiln_tune_kernel_t *k) {
  for (int i = 0; i < k->num_outputs; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_tensor_allclose(k->expected[i], k->args[k->num_inputs + i], 1e-3, 1e-4),
        "output %d differs from the default configuration's", i);
  }
  return KILN_OK;
}

static kiln_status_t child_measure(const kiln_tune_kernel_t *k,
                                   const kiln_schedule_config_t *config, double *out_ms) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_runtime_module_t *module = NULL;
  kiln_packed_fn fn = NULL;
  kiln_status_t status = kiln_parallel_set_num_threads(k->threads > 0 ? k->threads : 1);
  if (!status) {
    status = build(k, config, &arena, &module, &fn);
  }
  for (int i = 0; !status && i < k->num_outputs; ++i) {
    memset(kiln_tensor_data(k->args[k->num_inputs + i]), 0x7f,
           kiln_tensor_byte_size(k->args[k->num_inputs + i]));
  }
  if (!status) {
    status = time_runs(k, fn, out_ms);
  }
  if (!status) {
    status = check_outputs(k);
  }
  return status;
}

static void child(const kiln_tune_kernel_t *k, const kiln_schedule_config_t *config, int fd) {
  const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (int i = 0; i < 5; ++i) {
    signal(fatal[i], SIG_DFL); /* a crash ends the child, whatever the parent handles */
  }
  kiln_tune_result_t result = {0};
  kiln_status_t status = child_measure(k, config, &result.median_ms);
  result.ok = status == NULL;
  snprintf(result.message, sizeof(result.message), "%s", kiln_status_message(status));
  ssize_t written = write(fd, &result, sizeof(result));
  _exit(written == (ssize_t)sizeof(result) ? 0 : 1);
}

/* ---- the parent ---- */

static void describe_end(pid_t pid, kiln_tune_result_t *r) {
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (WIFSIGNALED(wstatus)) {
    snprintf(r->message, sizeof(r->message), "the measuring process died of signal %d",
             WTERMSIG(wstatus));
  } else {
    snprintf(r->message, sizeof(r->message),
             "the measuring process exited with code %d and no "
             "result",
             WEXITSTATUS(wstatus));
  }
}

static void await(const kiln_tune_kernel_t *k, pid_t pid, int fd, kiln_tune_result_t *r) {
  double timeout = k->timeout_seconds > 0 ? k->timeout_seconds : 20;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int ready = 0;
  do {
    ready = poll(&p, 1, (int)(timeout * 1e3));
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    snprintf(r->message, sizeof(r->message), "timed out after %.0f s", timeout);
    return;
  }
  if (read(fd, r, sizeof(*r)) != (ssize_t)sizeof(*r)) {
    memset(r, 0, sizeof(*r));
    describe_end(pid, r);
    return;
  }
  waitpid(pid, NULL, 0);
}

kiln_status_t kiln_tune_measure(const kiln_tune_kernel_t *kernel,
                                const kiln_schedule_config_t *config,
                                kiln_tune_result_t *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  int fds[2];
  if (pipe(fds) != 0) {
    return KILN_STATUS(INTERNAL, "tune: cannot make a pipe: %s", strerror(errno));
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return KILN_STATUS(INTERNAL, "tune: cannot fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    child(kernel, config, fds[1]);
  }
  close(fds[1]);
  await(kernel, pid, fds[0], out_result);
  close(fds[0]);
  return KILN_OK;
}
