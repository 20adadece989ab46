/*
 * Eager contexts (context.h): kiln_eager_context_create, _destroy, _sync,
 * _get_options; the process default context and the calls that use it
 * (kiln_eager_initialize, _shutdown, _get_options, _sync).
 *
 * Set-up is a table of steps, each with its tear-down, run in order; a step
 * that fails tears the earlier ones down in reverse, and destroy does the
 * same with all of them. The VM goes first on the way down, so instructions
 * still queued are cancelled and drained while the kernel cache and the
 * registries they use are alive. The object itself outlives its tear-down
 * while tensors made in it hold references (context.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "eager/context.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "eager/builder.h"
#include "eager/vm.h"
#include "kiln/parallel.h"

/* ---- the steps ---- */

static kiln_status_t set_up_stream_types(kiln_eager_context_t *context) {
  kiln_eager_stream_type_registry_initialize(&context->stream_types);
  return kiln_eager_stream_types_register_builtin(&context->stream_types);
}

static kiln_status_t set_up_instruction_types(kiln_eager_context_t *context) {
  kiln_eager_instruction_type_registry_initialize(&context->instruction_types);
  return kiln_eager_instruction_types_register_builtin(&context->instruction_types,
                                                       &context->stream_types);
}

static kiln_status_t set_up_kernel_cache(kiln_eager_context_t *context) {
  kiln_kernel_cache_options_t options = {context->options.target,
                                         context->options.reference_kernels, true};
  return kiln_kernel_cache_create(context->options.allocator, &options, &context->kernel_cache);
}

static void tear_down_kernel_cache(kiln_eager_context_t *context) {
  kiln_kernel_cache_destroy(context->kernel_cache);
  context->kernel_cache = NULL;
}

static kiln_status_t set_up_vm(kiln_eager_context_t *context) {
  return kiln_eager_vm_create(context->options.allocator, &context->stream_types,
                              &context->instruction_types, context->options.spin_count,
                              &context->vm);
}

static void tear_down_vm(kiln_eager_context_t *context) {
  kiln_eager_vm_destroy(context->vm);
  context->vm = NULL;
}

static kiln_status_t set_up_resolutions(kiln_eager_context_t *context) {
  KILN_RETURN_IF_ERROR(
      kiln_eager_vm_resolve(context->vm, "cpu.call_kernel", &context->call_kernel));
  KILN_RETURN_IF_ERROR(kiln_eager_vm_resolve(context->vm, "cpu.copy", &context->copy));
  return kiln_eager_vm_resolve(context->vm, "barrier", &context->barrier);
}

static void tear_down_nothing(kiln_eager_context_t *context) {
  (void)context;
}

static const struct {
  const char *name;
  kiln_status_t (*set_up)(kiln_eager_context_t *context);
  void (*tear_down)(kiln_eager_context_t *context);
} steps[] = {
    {"stream types", set_up_stream_types, tear_down_nothing},
    {"instruction types", set_up_instruction_types, tear_down_nothing},
    {"kernel cache", set_up_kernel_cache, tear_down_kernel_cache},
    {"vm", set_up_vm, tear_down_vm},
    {"instruction type resolutions", set_up_resolutions, tear_down_nothing},
};

#define NUM_STEPS ((int)(sizeof(steps) / sizeof(steps[0])))

int kiln_eager_context_step_count(void) {
  return NUM_STEPS;
}

const char *kiln_eager_context_step_name(int index) {
  return index >= 0 && index < NUM_STEPS ? steps[index].name : NULL;
}

/* ---- lifetime ---- */

static void tear_down(kiln_eager_context_t *context) {
  for (int i = context->steps_done - 1; i >= 0; --i) {
    steps[i].tear_down(context);
  }
  context->steps_done = 0;
  atomic_store_explicit(&context->torn_down, true, memory_order_release);
}

void kiln_eager_context_retain(kiln_eager_context_t *context) {
  atomic_fetch_add_explicit(&context->refs, 1, memory_order_relaxed);
}

void kiln_eager_context_release(kiln_eager_context_t *context) {
  if (!context || atomic_fetch_sub_explicit(&context->refs, 1, memory_order_acq_rel) != 1) {
    return;
  }
  kiln_allocator_t allocator = context->options.allocator;
  kiln_allocator_free(allocator, context->target_copy);
  kiln_allocator_free(allocator, context);
}

kiln_status_t kiln_eager_context_check(const kiln_eager_context_t *context, const char *what) {
  if (KILN_UNLIKELY(atomic_load_explicit(&context->torn_down, memory_order_acquire))) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "%s: the eager context was destroyed (kiln_eager_context_destroy "
                       "or kiln_eager_shutdown); its tensors can be read, not used in new work",
                       what);
  }
  return KILN_OK;
}

static kiln_status_t context_set_up(kiln_eager_context_t *context) {
  for (int i = 0; i < NUM_STEPS; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(steps[i].set_up(context), "eager environment: %s", steps[i].name);
    context->steps_done = i + 1;
  }
  return KILN_OK;
}

kiln_status_t kiln_eager_context_create(const kiln_eager_options_t *options,
                                        kiln_eager_context_t **out_context) {
  *out_context = NULL;
  kiln_eager_options_t defaults = kiln_eager_options_default();
  options = options ? options : &defaults;
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(options->allocator, sizeof(*context), (void **)&context));
  atomic_init(&context->refs, 1);
  atomic_init(&context->torn_down, false);
  context->options = *options;
  static atomic_ullong generations;
  context->generation = atomic_fetch_add(&generations, 1) + 1;
  kiln_status_t status = KILN_OK;
  if (options->target) {
    status = kiln_allocator_strdup(options->allocator, options->target, &context->target_copy);
    context->options.target = context->target_copy;
  }
  if (!status) {
    status = context_set_up(context);
  }
  if (status) {
    kiln_eager_context_destroy(context);
    return status;
  }
  *out_context = context;
  return KILN_OK;
}

kiln_status_t kiln_eager_context_get_options(const kiln_eager_context_t *context,
                                             kiln_eager_options_t *out_options) {
  KILN_RETURN_IF_ERROR(kiln_eager_context_check(context, "kiln_eager_context_get_options"));
  *out_options = context->options;
  if (!out_options->target) {
    out_options->target = kiln_kernel_cache_target(context->kernel_cache);
  }
  return KILN_OK;
}

kiln_status_t kiln_eager_context_get_kernel_stats(const kiln_eager_context_t *context,
                                                  kiln_eager_kernel_stats_t *out_stats) {
  KILN_RETURN_IF_ERROR(kiln_eager_context_check(context, "kiln_eager_context_get_kernel_stats"));
  kiln_kernel_cache_stats_t stats;
  kiln_kernel_cache_get_stats(context->kernel_cache, &stats);
  *out_stats = (kiln_eager_kernel_stats_t){.lookups = stats.lookups,
                                           .entries = stats.entries,
                                           .hits = stats.hits,
                                           .compiled = stats.compiled,
                                           .reference = stats.reference,
                                           .compiles = stats.compiles};
  return KILN_OK;
}

/* ---- the process default ---- */

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(kiln_eager_context_t *) default_context;

/* Destroying the default context unpublishes it first (kiln_eager_shutdown). */
void kiln_eager_context_destroy(kiln_eager_context_t *context) {
  if (!context) {
    return;
  }
  kiln_eager_context_t *expected = context;
  atomic_compare_exchange_strong(&default_context, &expected, NULL);
  tear_down(context);
  kiln_eager_context_release(context);
}
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;

static void register_atexit(void) {
  atexit(kiln_eager_shutdown);
}

/* Under default_lock. */
static kiln_status_t set_up_default_locked(const kiln_eager_options_t *options) {
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_create(options, &context));
  context->is_default = true;
  pthread_once(&atexit_once, register_atexit);
  atomic_store_explicit(&default_context, context, memory_order_release);
  return KILN_OK;
}

kiln_status_t kiln_eager_context_default(kiln_eager_context_t **out_context) {
  kiln_eager_context_t *context = atomic_load_explicit(&default_context, memory_order_acquire);
  if (KILN_LIKELY(context != NULL)) {
    *out_context = context;
    return KILN_OK;
  }
  pthread_mutex_lock(&default_lock);
  kiln_status_t status = KILN_OK;
  if (!atomic_load(&default_context)) {
    kiln_eager_options_t options = kiln_eager_options_default();
    status = set_up_default_locked(&options);
  }
  pthread_mutex_unlock(&default_lock);
  *out_context = atomic_load(&default_context);
  return status;
}

kiln_status_t kiln_eager_context_of(kiln_eager_context_t *bound,
                                    kiln_eager_context_t **out_context) {
  if (bound) {
    *out_context = bound;
    return KILN_OK;
  }
  return kiln_eager_context_default(out_context);
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
  pthread_mutex_lock(&default_lock);
  kiln_status_t status = KILN_OK;
  if (atomic_load(&default_context)) {
    status = KILN_STATUS(FAILED_PRECONDITION,
                         "kiln_eager_initialize: the eager environment is already set up "
                         "(call kiln_eager_shutdown first)");
  } else {
    status = set_up_default_locked(options ? options : &defaults);
  }
  pthread_mutex_unlock(&default_lock);
  return status;
}

void kiln_eager_shutdown(void) {
  pthread_mutex_lock(&default_lock);
  kiln_eager_context_destroy(atomic_exchange(&default_context, NULL));
  pthread_mutex_unlock(&default_lock);
}

kiln_status_t kiln_eager_get_options(kiln_eager_options_t *out_options) {
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_default(&context));
  return kiln_eager_context_get_options(context, out_options);
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

kiln_status_t kiln_eager_context_sync(kiln_eager_context_t *context) {
  kiln_eager_builder_t builder;
  KILN_RETURN_IF_ERROR(kiln_eager_builder_initialize(&builder, context, "kiln_eager_context_sync"));
  sync_state_t state;
  atomic_init(&state.done, 0);
  KILN_RETURN_IF_ERROR(kiln_eager_builder_barrier(&builder, sync_reached, &state));
  kiln_eager_builder_submit(&builder);
  kiln_eager_vm_wait_host(context->vm, sync_done, &state);
  return kiln_eager_vm_take_error(context->vm);
}

kiln_status_t kiln_eager_sync(void) {
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_default(&context));
  return kiln_eager_context_sync(context);
}
