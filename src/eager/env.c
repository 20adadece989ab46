/*
 * The eager environment (env.h) and kiln_eager_initialize, _shutdown,
 * _get_options and _sync.
 *
 * Set-up is a table of steps, each with its tear-down, run in order; a step
 * that fails tears the earlier ones down in reverse, and shutdown does the
 * same with all of them. The VM goes first on the way down, so instructions
 * still queued are cancelled and drained while the kernel cache and the
 * registries they use are alive.
 */
#define _POSIX_C_SOURCE 200809L

#include "eager/env.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "eager/builder.h"
#include "eager/vm.h"
#include "kiln/parallel.h"

/* ---- the steps ---- */

static kiln_status_t set_up_stream_types(kiln_eager_env_t *env) {
  kiln_eager_stream_type_registry_initialize(&env->stream_types);
  return kiln_eager_stream_types_register_builtin(&env->stream_types);
}

static kiln_status_t set_up_instruction_types(kiln_eager_env_t *env) {
  kiln_eager_instruction_type_registry_initialize(&env->instruction_types);
  return kiln_eager_instruction_types_register_builtin(&env->instruction_types, &env->stream_types);
}

static kiln_status_t set_up_kernel_cache(kiln_eager_env_t *env) {
  kiln_kernel_cache_options_t options = {env->options.target, env->options.reference_kernels, true};
  return kiln_kernel_cache_create(env->options.allocator, &options, &env->kernel_cache);
}

static void tear_down_kernel_cache(kiln_eager_env_t *env) {
  kiln_kernel_cache_destroy(env->kernel_cache);
  env->kernel_cache = NULL;
}

static kiln_status_t set_up_vm(kiln_eager_env_t *env) {
  return kiln_eager_vm_create(env->options.allocator, &env->stream_types, &env->instruction_types,
                              env->options.spin_count, &env->vm);
}

static void tear_down_vm(kiln_eager_env_t *env) {
  kiln_eager_vm_destroy(env->vm);
  env->vm = NULL;
}

static kiln_status_t set_up_resolutions(kiln_eager_env_t *env) {
  KILN_RETURN_IF_ERROR(kiln_eager_vm_resolve(env->vm, "cpu.call_kernel", &env->call_kernel));
  KILN_RETURN_IF_ERROR(kiln_eager_vm_resolve(env->vm, "cpu.copy", &env->copy));
  return kiln_eager_vm_resolve(env->vm, "barrier", &env->barrier);
}

static void tear_down_nothing(kiln_eager_env_t *env) {
  (void)env;
}

static const struct {
  const char *name;
  kiln_status_t (*set_up)(kiln_eager_env_t *env);
  void (*tear_down)(kiln_eager_env_t *env);
} steps[] = {
    {"stream types", set_up_stream_types, tear_down_nothing},
    {"instruction types", set_up_instruction_types, tear_down_nothing},
    {"kernel cache", set_up_kernel_cache, tear_down_kernel_cache},
    {"vm", set_up_vm, tear_down_vm},
    {"instruction type resolutions", set_up_resolutions, tear_down_nothing},
};

#define NUM_STEPS ((int)(sizeof(steps) / sizeof(steps[0])))

int kiln_eager_env_step_count(void) {
  return NUM_STEPS;
}

const char *kiln_eager_env_step_name(int index) {
  return index >= 0 && index < NUM_STEPS ? steps[index].name : NULL;
}

static void env_destroy(kiln_eager_env_t *env) {
  for (int i = env->steps_done - 1; i >= 0; --i) {
    steps[i].tear_down(env);
  }
  kiln_allocator_t allocator = env->options.allocator;
  kiln_allocator_free(allocator, env->target_copy);
  kiln_allocator_free(allocator, env);
}

static kiln_status_t env_create(const kiln_eager_options_t *options, kiln_eager_env_t **out_env) {
  kiln_eager_env_t *env = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(options->allocator, sizeof(*env), (void **)&env));
  env->options = *options;
  static atomic_ullong generations;
  env->generation = atomic_fetch_add(&generations, 1) + 1;
  kiln_status_t status = KILN_OK;
  if (options->target) {
    status = kiln_allocator_strdup(options->allocator, options->target, &env->target_copy);
    env->options.target = env->target_copy;
  }
  for (int i = 0; i < NUM_STEPS && !status; ++i) {
    status = kiln_status_annotate(steps[i].set_up(env), "eager environment: %s", steps[i].name);
    if (!status) {
      env->steps_done = i + 1;
    }
  }
  if (status) {
    env_destroy(env);
    return status;
  }
  *out_env = env;
  return KILN_OK;
}

/* ---- the global ---- */

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(kiln_eager_env_t *) env_current;
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;

static void register_atexit(void) {
  atexit(kiln_eager_shutdown);
}

/* Under env_lock. */
static kiln_status_t set_up_locked(const kiln_eager_options_t *options) {
  kiln_eager_env_t *env = NULL;
  KILN_RETURN_IF_ERROR(env_create(options, &env));
  pthread_once(&atexit_once, register_atexit);
  atomic_store_explicit(&env_current, env, memory_order_release);
  return KILN_OK;
}

kiln_status_t kiln_eager_env_get(kiln_eager_env_t **out_env) {
  kiln_eager_env_t *env = atomic_load_explicit(&env_current, memory_order_acquire);
  if (KILN_LIKELY(env != NULL)) {
    *out_env = env;
    return KILN_OK;
  }
  pthread_mutex_lock(&env_lock);
  kiln_status_t status = KILN_OK;
  if (!atomic_load(&env_current)) {
    kiln_eager_options_t options = kiln_eager_options_default();
    status = set_up_locked(&options);
  }
  pthread_mutex_unlock(&env_lock);
  *out_env = atomic_load(&env_current);
  return status;
}

static int spin_from_environment(void) {
  const char *text = getenv("KILN_EAGER_SPIN");
  if (!text) {
    return -1;
  }
  int value = -1;
  kiln_status_t status = kiln_parallel_parse_setting("KILN_EAGER_SPIN", text, 0, 1 << 24, &value);
  if (status) {
    KILN_LOG_WARN("%s; using the default", kiln_status_message(status));
    kiln_status_free(status);
    return -1;
  }
  return value;
}

kiln_eager_options_t kiln_eager_options_default(void) {
  kiln_eager_options_t options;
  options.allocator = kiln_allocator_system();
  options.target = getenv("KILN_EAGER_TARGET");
  const char *kernels = getenv("KILN_KERNELS");
  options.reference_kernels = kernels && strcmp(kernels, "reference") == 0;
  options.spin_count = spin_from_environment();
  return options;
}

kiln_status_t kiln_eager_initialize(const kiln_eager_options_t *options) {
  kiln_eager_options_t defaults = kiln_eager_options_default();
  pthread_mutex_lock(&env_lock);
  kiln_status_t status = KILN_OK;
  if (atomic_load(&env_current)) {
    status = KILN_STATUS(FAILED_PRECONDITION,
                         "kiln_eager_initialize: the eager environment is already set up "
                         "(call kiln_eager_shutdown first)");
  } else {
    status = set_up_locked(options ? options : &defaults);
  }
  pthread_mutex_unlock(&env_lock);
  return status;
}

void kiln_eager_shutdown(void) {
  pthread_mutex_lock(&env_lock);
  kiln_eager_env_t *env = atomic_exchange(&env_current, NULL);
  if (env) {
    env_destroy(env);
  }
  pthread_mutex_unlock(&env_lock);
}

kiln_status_t kiln_eager_get_options(kiln_eager_options_t *out_options) {
  kiln_eager_env_t *env = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_env_get(&env));
  *out_options = env->options;
  if (!out_options->target) {
    out_options->target = kiln_kernel_cache_target(env->kernel_cache);
  }
  return KILN_OK;
}

/* ---- sync: a barrier and a wait ---- */

typedef struct sync_state_t {
  atomic_int done;
} sync_state_t;

static void sync_reached(void *user, kiln_status_t status) {
  (void)status;
  atomic_store(&((sync_state_t *)user)->done, 1);
}

static bool sync_done(void *context) {
  return atomic_load(&((sync_state_t *)context)->done) != 0;
}

kiln_status_t kiln_eager_sync(void) {
  kiln_eager_builder_t builder;
  KILN_RETURN_IF_ERROR(kiln_eager_builder_initialize(&builder));
  sync_state_t state;
  atomic_init(&state.done, 0);
  KILN_RETURN_IF_ERROR(kiln_eager_builder_barrier(&builder, sync_reached, &state));
  kiln_eager_builder_submit(&builder);
  kiln_eager_vm_wait_host(builder.env->vm, sync_done, &state);
  return kiln_eager_vm_take_error(builder.env->vm);
}
