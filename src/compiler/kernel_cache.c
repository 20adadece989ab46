/*
 * The kernel cache (kernel_cache.h). A store is a string-keyed hash map of
 * entries in one arena, behind one mutex; the process's shared store is
 * counted by the views on it (under a static mutex) and freed with the last.
 * An entry's call fields are filled under the lock by the first call lookup
 * that meets it, so a pointer handed out is immutable but for its path, an
 * atomic word that a run reads without the lock once it is resolved (the
 * module and function are stored before the path says COMPILED). Compiling
 * happens outside the lock; the entry's `compiling` flag (under the lock)
 * and one condition variable make a second thread wait for the first one's
 * compile.
 */
#define _POSIX_C_SOURCE 200809L

#include "compiler/kernel_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "codegen/target.h"
#include "codegen/target_record.h"
#include "compiler/call_function.h"
#include "compiler/key.h"
#include "compiler/lower.h"
#include "op/compute.h"
#include "tir/transform.h"

#define MAX_KERNEL_ARGS (KILN_TE_MAX_INPUTS + KILN_COMPUTE_MAX_OUTPUTS)

typedef struct entry_t {
  kiln_kernel_t kernel; /* first: a kiln_kernel_t * is an entry_t *; op NULL until a call */
  atomic_int path;      /* kiln_kernel_path_t */
  int compiling;        /* under the store's lock */
  kiln_runtime_module_t *module;
  kiln_packed_fn fn;
} entry_t;

typedef struct store_t {
  kiln_allocator_t allocator;
  int views; /* the shared store's, under shared_lock */
  pthread_mutex_t lock;
  pthread_cond_t compiled; /* an entry's compile ended */
  kiln_hashmap_t map;      /* key -> entry_t * */
  kiln_arena_t arena;      /* entries, keys, attrs, types */
  int64_t entries;
} store_t;

struct kiln_kernel_cache_t {
  kiln_allocator_t allocator;
  char *target;
  char *code; /* the key prefix: kiln_codegen_target_code of the target */
  bool reference_only;
  bool shared;                     /* store is the shared store */
  store_t *store;                  /* the shared one, or the cache's own */
  kiln_kernel_cache_stats_t stats; /* under the store's lock */
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static store_t *shared_store;

/* The entry of a kernel handed out (entries are ours to update). */
static entry_t *entry_of(const kiln_kernel_t *kernel) {
  return (entry_t *)(uintptr_t)kernel;
}

const char *kiln_kernel_path_name(kiln_kernel_path_t path) {
  switch (path) {
  case KILN_KERNEL_PATH_UNRESOLVED:
    return "unresolved";
  case KILN_KERNEL_PATH_COMPILED:
    return "compiled";
  case KILN_KERNEL_PATH_REFERENCE:
    return "reference";
  case KILN_KERNEL_PATH_COUNT_:
    break;
  }
  return "invalid";
}

/* ---- stores ---- */

static kiln_status_t store_create(kiln_allocator_t allocator, store_t **out_store) {
  store_t *store = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*store), (void **)&store));
  store->allocator = allocator;
  pthread_mutex_init(&store->lock, NULL);
  pthread_cond_init(&store->compiled, NULL);
  kiln_hashmap_initialize(&store->map, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_arena_initialize(&store->arena, allocator, 0);
  *out_store = store;
  return KILN_OK;
}

static void store_destroy(store_t *store) {
  kiln_hashmap_iterator_t it;
  kiln_hashmap_iterator_initialize(&it, &store->map);
  const void *key = NULL;
  void *value = NULL;
  while (kiln_hashmap_iterator_next(&it, &key, &value)) {
    kiln_runtime_module_release(((entry_t *)value)->module);
  }
  kiln_hashmap_deinitialize(&store->map);
  kiln_arena_deinitialize(&store->arena);
  pthread_cond_destroy(&store->compiled);
  pthread_mutex_destroy(&store->lock);
  kiln_allocator_free(store->allocator, store);
}

/* The shared store with one more view (made by the first; its memory is the
 * system allocator's, since it outlives any one view). */
static kiln_status_t shared_store_acquire(store_t **out_store) {
  kiln_status_t status = KILN_OK;
  pthread_mutex_lock(&shared_lock);
  if (!shared_store) {
    status = store_create(kiln_allocator_system(), &shared_store);
  }
  if (!status) {
    shared_store->views++;
    *out_store = shared_store;
  }
  pthread_mutex_unlock(&shared_lock);
  return status;
}

static void shared_store_release(store_t *store) {
  pthread_mutex_lock(&shared_lock);
  if (--store->views == 0) {
    store_destroy(store);
    shared_store = NULL;
  }
  pthread_mutex_unlock(&shared_lock);
}

/* ---- caches (views) ---- */

static kiln_status_t set_target(kiln_kernel_cache_t *cache, const char *target) {
  kiln_strbuf_t code;
  kiln_strbuf_initialize(&code, cache->allocator);
  kiln_status_t status = kiln_codegen_target_code(target, &code);
  if (!status) {
    status = kiln_allocator_strdup(cache->allocator, kiln_strbuf_c_str(&code), &cache->code);
  }
  if (!status) {
    status = kiln_allocator_strdup(cache->allocator, target, &cache->target);
  }
  kiln_strbuf_deinitialize(&code);
  return kiln_status_annotate(status, "kernel cache");
}

kiln_status_t kiln_kernel_cache_create(kiln_allocator_t allocator,
                                       const kiln_kernel_cache_options_t *options,
                                       kiln_kernel_cache_t **out_cache) {
  *out_cache = NULL;
  kiln_kernel_cache_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*cache), (void **)&cache));
  cache->allocator = allocator;
  cache->reference_only = options && options->reference_only;
  kiln_status_t status = set_target(
      cache, options && options->target ? options->target : kiln_codegen_default_jit_target());
  cache->shared = options && options->shared;
  if (!status) {
    status = cache->shared ? shared_store_acquire(&cache->store)
                           : store_create(allocator, &cache->store);
  }
  if (status) {
    kiln_kernel_cache_destroy(cache);
    return status;
  }
  *out_cache = cache;
  return KILN_OK;
}

void kiln_kernel_cache_destroy(kiln_kernel_cache_t *cache) {
  if (!cache) {
    return;
  }
  if (cache->store && cache->shared) {
    shared_store_release(cache->store);
  } else if (cache->store) {
    store_destroy(cache->store);
  }
  kiln_allocator_free(cache->allocator, cache->code);
  kiln_allocator_free(cache->allocator, cache->target);
  kiln_allocator_free(cache->allocator, cache);
}

const char *kiln_kernel_cache_target(const kiln_kernel_cache_t *cache) {
  return cache->target;
}

bool kiln_kernel_cache_reference_only(const kiln_kernel_cache_t *cache) {
  return cache->reference_only;
}

bool kiln_kernel_cache_shared(const kiln_kernel_cache_t *cache) {
  return cache->shared;
}

int64_t kiln_kernel_cache_store_entries(kiln_kernel_cache_t *cache) {
  pthread_mutex_lock(&cache->store->lock);
  int64_t entries = cache->store->entries;
  pthread_mutex_unlock(&cache->store->lock);
  return entries;
}

/* ---- keys ---- */

/* The call's key without the target: the key of its function. */
static kiln_status_t call_key(kiln_allocator_t allocator, const kiln_op_t *op, const void *attrs,
                              int num_inputs, const kiln_type_t *const *input_types,
                              kiln_strbuf_t *sb) {
  kiln_module_t *module = NULL;
  kiln_function_t *function = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiler_call_function(allocator, op, attrs, num_inputs, input_types,
                                                   &module, &function));
  kiln_status_t status = kiln_compiler_function_key(function, sb);
  kiln_module_destroy(module);
  return status;
}

kiln_status_t kiln_kernel_cache_key(const char *target, const kiln_op_t *op, const void *attrs,
                                    int num_inputs, const kiln_type_t *const *input_types,
                                    kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_codegen_target_code(target, sb));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '|'));
  return call_key(sb->allocator, op, attrs, num_inputs, input_types, sb);
}

/* Appends "code|function key" (the cache's prefix on a key without one). */
static kiln_status_t prefixed(const kiln_kernel_cache_t *cache, const char *function_key,
                              kiln_strbuf_t *sb) {
  return kiln_strbuf_appendf(sb, "%s|%s", cache->code, function_key);
}

/* ---- making an entry (under the lock) ---- */

static kiln_status_t copy_type(kiln_arena_t *arena, const kiln_type_t *type,
                               const kiln_type_t **out_type) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  if (tensor) {
    return kiln_tensor_type_create(arena, tensor->dtype, tensor->ndim, tensor->shape, out_type);
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (!tuple) {
    return KILN_STATUS(INVALID_ARGUMENT, "kernel cache: an input type is missing");
  }
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(tuple->count ? tuple->count : 1),
                                                 sizeof(*fields), sizeof(void *),
                                                 (void **)&fields));
  for (int i = 0; i < tuple->count; ++i) {
    KILN_RETURN_IF_ERROR(copy_type(arena, tuple->fields[i], &fields[i]));
  }
  return kiln_tuple_type_create(arena, tuple->count, fields, out_type);
}

/* The output type's tensors, tuple fields flattened. */
static kiln_status_t flatten_outputs(kiln_arena_t *arena, const kiln_op_t *op,
                                     const kiln_type_t *type, int *out_count,
                                     const kiln_tensor_type_t *const **out_types) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  int count = tuple ? tuple->count : 1;
  if (count > KILN_COMPUTE_MAX_OUTPUTS) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d outputs; a kernel returns at most %d", op->name,
                       count, KILN_COMPUTE_MAX_OUTPUTS);
  }
  const kiln_tensor_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(count ? count : 1), sizeof(*types),
                                                 sizeof(void *), (void **)&types));
  for (int i = 0; i < count; ++i) {
    types[i] = kiln_type_as_tensor(tuple ? tuple->fields[i] : type);
    if (!types[i]) {
      return KILN_STATUS(UNIMPLEMENTED, "%s: output %d is a nested tuple", op->name, i);
    }
  }
  *out_count = count;
  *out_types = types;
  return KILN_OK;
}

/* Under the lock: an entry for `key`, made when there is none. */
static kiln_status_t entry_for(kiln_kernel_cache_t *cache, const char *key, bool *out_made,
                               entry_t **out_entry) {
  store_t *store = cache->store;
  void *found = NULL;
  *out_made = false;
  if (kiln_hashmap_get(&store->map, key, &found)) {
    *out_entry = found;
    return KILN_OK;
  }
  entry_t *e = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(&store->arena, sizeof(*e), _Alignof(entry_t), (void **)&e));
  size_t key_size = strlen(key) + 1;
  char *key_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&store->arena, key_size, 1, (void **)&key_copy));
  memcpy(key_copy, key, key_size);
  e->kernel.key = key_copy;
  atomic_init(&e->path, KILN_KERNEL_PATH_UNRESOLVED);
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&store->map, key_copy, e));
  store->entries++;
  cache->stats.entries++;
  *out_made = true;
  *out_entry = e;
  return KILN_OK;
}

/* With the key built by `status`'s step: locks the store and finds or
 * makes the key's entry. On an error the key is freed and the lock not
 * held; otherwise leave() ends it. */
static kiln_status_t enter(kiln_kernel_cache_t *cache, kiln_strbuf_t *key, kiln_status_t status,
                           bool *out_made, entry_t **out_entry) {
  if (!status) {
    pthread_mutex_lock(&cache->store->lock);
    status = entry_for(cache, kiln_strbuf_c_str(key), out_made, out_entry);
    if (status) {
      pthread_mutex_unlock(&cache->store->lock);
    }
  }
  if (status) {
    kiln_strbuf_deinitialize(key);
  }
  return status;
}

static void leave(kiln_kernel_cache_t *cache, kiln_strbuf_t *key) {
  pthread_mutex_unlock(&cache->store->lock);
  kiln_strbuf_deinitialize(key);
}

/* Under the lock: the call's fields of an entry that has none yet. */
static kiln_status_t fill_call(store_t *store, entry_t *e, const kiln_op_t *op, const void *attrs,
                               int num_inputs, const kiln_type_t *const *input_types) {
  kiln_arena_t *arena = &store->arena;
  const kiln_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(num_inputs ? num_inputs : 1),
                                                 sizeof(*types), sizeof(void *), (void **)&types));
  for (int i = 0; i < num_inputs; ++i) {
    KILN_RETURN_IF_ERROR(copy_type(arena, input_types[i], &types[i]));
  }
  void *attrs_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_copy(op, attrs, arena, &attrs_copy));
  const kiln_type_t *output = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_infer_type(op, attrs_copy, num_inputs, types, arena, &output));
  int num_outputs = 0;
  const kiln_tensor_type_t *const *output_types = NULL;
  KILN_RETURN_IF_ERROR(flatten_outputs(arena, op, output, &num_outputs, &output_types));
  e->kernel.attrs = attrs_copy;
  e->kernel.num_inputs = num_inputs;
  e->kernel.input_types = types;
  e->kernel.output_type = output;
  e->kernel.num_outputs = num_outputs;
  e->kernel.output_types = output_types;
  e->kernel.op = op; /* last: an entry with an op is complete */
  return KILN_OK;
}

/* Under the lock: counts a lookup that met `e`. */
static void count_lookup(kiln_kernel_cache_t *cache, const entry_t *e, bool made) {
  cache->stats.lookups++;
  if (!made && atomic_load(&e->path) == KILN_KERNEL_PATH_COMPILED) {
    cache->stats.hits++;
  }
}

kiln_status_t kiln_kernel_cache_lookup(kiln_kernel_cache_t *cache, const kiln_op_t *op,
                                       const void *attrs, int num_inputs,
                                       const kiln_type_t *const *input_types,
                                       const kiln_kernel_t **out_kernel) {
  *out_kernel = NULL;
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, cache->allocator);
  kiln_status_t status = kiln_strbuf_reserve(&key, 256);
  if (!status) {
    status = kiln_strbuf_appendf(&key, "%s|", cache->code);
  }
  if (!status) {
    status = call_key(cache->allocator, op, attrs, num_inputs, input_types, &key);
  }
  entry_t *e = NULL;
  bool made = false;
  KILN_RETURN_IF_ERROR(enter(cache, &key, status, &made, &e));
  status = e->kernel.op ? KILN_OK : fill_call(cache->store, e, op, attrs, num_inputs, input_types);
  if (!status) {
    count_lookup(cache, e, made);
    cache->stats.reference += cache->reference_only;
    *out_kernel = &e->kernel;
  }
  leave(cache, &key);
  return status;
}

/* ---- the graph compiler's kernels ---- */

bool kiln_kernel_cache_find_compiled(kiln_kernel_cache_t *cache, const char *function_key,
                                     kiln_runtime_module_t **out_module, kiln_packed_fn *out_fn) {
  *out_module = NULL;
  *out_fn = NULL;
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, cache->allocator);
  if (cache->reference_only || prefixed(cache, function_key, &key)) {
    kiln_strbuf_deinitialize(&key); /* an allocation failure is a miss */
    return false;
  }
  store_t *store = cache->store;
  pthread_mutex_lock(&store->lock);
  void *found = NULL;
  cache->stats.lookups++;
  if (kiln_hashmap_get(&store->map, kiln_strbuf_c_str(&key), &found) &&
      atomic_load(&((entry_t *)found)->path) == KILN_KERNEL_PATH_COMPILED) {
    entry_t *e = found;
    kiln_runtime_module_retain(e->module);
    *out_module = e->module;
    *out_fn = e->fn;
    cache->stats.hits++;
  }
  pthread_mutex_unlock(&store->lock);
  kiln_strbuf_deinitialize(&key);
  return *out_fn != NULL;
}

kiln_status_t kiln_kernel_cache_add_compiled(kiln_kernel_cache_t *cache, const char *function_key,
                                             kiln_runtime_module_t *module, kiln_packed_fn fn) {
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, cache->allocator);
  entry_t *e = NULL;
  bool made = false;
  KILN_RETURN_IF_ERROR(enter(cache, &key, prefixed(cache, function_key, &key), &made, &e));
  if (!e->compiling && atomic_load(&e->path) != KILN_KERNEL_PATH_COMPILED) {
    kiln_runtime_module_retain(module);
    e->module = module;
    e->fn = fn;
    atomic_store(&e->path, KILN_KERNEL_PATH_COMPILED);
  }
  leave(cache, &key);
  return KILN_OK;
}

/* ---- compiling ---- */

/* Whether `type` has a static dim of 0: a tensor with no elements. */
static bool is_empty(const kiln_tensor_type_t *type) {
  for (int d = 0; type && d < type->ndim; ++d) {
    if (type->shape[d] == 0) {
      return true;
    }
  }
  return false;
}

/* UNIMPLEMENTED (the reference kernel runs the call) when an input or an
 * output has no elements: kernels take no empty buffers. */
static kiln_status_t check_not_empty(const kiln_kernel_t *kernel) {
  for (int i = 0; i < kernel->num_inputs; ++i) {
    if (is_empty(kiln_type_as_tensor(kernel->input_types[i]))) {
      return KILN_STATUS(UNIMPLEMENTED, "input %d has no elements", i);
    }
  }
  for (int o = 0; o < kernel->num_outputs; ++o) {
    if (is_empty(kernel->output_types[o])) {
      return KILN_STATUS(UNIMPLEMENTED, "output %d has no elements", o);
    }
  }
  return KILN_OK;
}

static kiln_status_t lower(kiln_kernel_cache_t *cache, const kiln_kernel_t *kernel,
                           kiln_arena_t *arena, const char *name,
                           const kiln_tir_prim_func_t **out_func) {
  KILN_RETURN_IF_ERROR(check_not_empty(kernel));
  kiln_module_t *module = NULL;
  kiln_function_t *function = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiler_call_function(cache->allocator, kernel->op, kernel->attrs,
                                                   kernel->num_inputs, kernel->input_types, &module,
                                                   &function));
  kiln_schedule_target_t target;
  kiln_status_t status = kiln_compiler_schedule_target(cache->target, &target);
  if (!status) {
    status = kiln_compiler_lower_function(function, &target, arena, name, out_func);
  }
  kiln_module_destroy(module);
  return status;
}

static kiln_status_t compile(kiln_kernel_cache_t *cache, const entry_t *e,
                             kiln_runtime_module_t **out_module, kiln_packed_fn *out_fn) {
  *out_module = NULL;
  /* an eager kernel runs as soon as it is built: on this CPU */
  KILN_RETURN_IF_ERROR(kiln_codegen_target_check_host(cache->target));
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, cache->allocator, 0);
  char name[48];
  snprintf(name, sizeof(name), "kernel_%s", e->kernel.op->name);
  for (char *c = name; *c; ++c) {
    *c = *c == '.' ? '_' : *c;
  }
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = lower(cache, &e->kernel, &arena, name, &func);
  if (!status) {
    status = kiln_tir_lower_pipeline(&arena, func, NULL, &func);
  }
  if (!status) {
    status = kiln_codegen_build(cache->allocator, cache->target, &func, 1, out_module);
  }
  if (!status) {
    status = kiln_runtime_module_get_function(*out_module, name, out_fn);
  }
  kiln_arena_deinitialize(&arena);
  if (status) {
    kiln_runtime_module_release(*out_module);
    *out_module = NULL;
  }
  return status;
}

/* Under the lock: records a compile's outcome; the status to return. */
static kiln_status_t record_compile(kiln_kernel_cache_t *cache, entry_t *e, kiln_status_t status,
                                    kiln_runtime_module_t *module, kiln_packed_fn fn) {
  cache->stats.compiles++;
  if (!status) {
    e->module = module;
    e->fn = fn;
    cache->stats.compiled++;
    atomic_store(&e->path, KILN_KERNEL_PATH_COMPILED);
    return KILN_OK;
  }
  if (kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
    KILN_LOG_DEBUG("kernel cache: %s runs the reference kernel: %s", e->kernel.key,
                   kiln_status_message(status));
    kiln_status_free(status);
    cache->stats.reference++;
    atomic_store(&e->path, KILN_KERNEL_PATH_REFERENCE);
    return KILN_OK;
  }
  return kiln_status_annotate(status, "%s: compiling the kernel", e->kernel.op->name);
}

kiln_status_t kiln_kernel_cache_prepare(kiln_kernel_cache_t *cache, const kiln_kernel_t *kernel,
                                        kiln_kernel_path_t *out_path) {
  entry_t *e = entry_of(kernel);
  kiln_kernel_path_t path = (kiln_kernel_path_t)atomic_load(&e->path);
  if (cache->reference_only || path != KILN_KERNEL_PATH_UNRESOLVED) {
    *out_path = cache->reference_only ? KILN_KERNEL_PATH_REFERENCE : path;
    return KILN_OK;
  }
  store_t *store = cache->store;
  pthread_mutex_lock(&store->lock);
  while (e->compiling) {
    pthread_cond_wait(&store->compiled, &store->lock);
  }
  kiln_status_t status = KILN_OK;
  if (atomic_load(&e->path) == KILN_KERNEL_PATH_UNRESOLVED) {
    e->compiling = 1;
    pthread_mutex_unlock(&store->lock);
    kiln_runtime_module_t *module = NULL;
    kiln_packed_fn fn = NULL;
    kiln_status_t compiled = compile(cache, e, &module, &fn);
    pthread_mutex_lock(&store->lock);
    status = record_compile(cache, e, compiled, module, fn);
    e->compiling = 0;
    pthread_cond_broadcast(&store->compiled);
  }
  pthread_mutex_unlock(&store->lock);
  *out_path = (kiln_kernel_path_t)atomic_load(&e->path);
  return status;
}

kiln_kernel_path_t kiln_kernel_cache_path(const kiln_kernel_cache_t *cache,
                                          const kiln_kernel_t *kernel) {
  return cache->reference_only ? KILN_KERNEL_PATH_REFERENCE
                               : (kiln_kernel_path_t)atomic_load(&entry_of(kernel)->path);
}

/* ---- running ---- */

/* `status` with the operator's name in front unless it starts with it. */
static kiln_status_t named(const kiln_op_t *op, kiln_status_t status) {
  const char *message = kiln_status_message(status);
  size_t length = strlen(op->name);
  if (!status || (strncmp(message, op->name, length) == 0 && message[length] == ':')) {
    return status;
  }
  return kiln_status_annotate(status, "%s", op->name);
}

static kiln_status_t run_compiled(const entry_t *e, kiln_tensor_t *const *inputs,
                                  kiln_tensor_t *const *outputs) {
  int num_args = e->kernel.num_inputs + e->kernel.num_outputs;
  if (num_args > MAX_KERNEL_ARGS) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d kernel arguments; at most %d", e->kernel.op->name,
                       num_args, MAX_KERNEL_ARGS);
  }
  DLTensor tensors[MAX_KERNEL_ARGS];
  kiln_value_t values[MAX_KERNEL_ARGS];
  int codes[MAX_KERNEL_ARGS];
  for (int i = 0; i < num_args; ++i) {
    kiln_tensor_t *t = i < e->kernel.num_inputs ? inputs[i] : outputs[i - e->kernel.num_inputs];
    tensors[i] = *kiln_tensor_dl(t);
    values[i].v_handle = &tensors[i];
    codes[i] = KILN_ARG_DLTENSOR;
  }
  if (e->fn(values, codes, num_args, NULL, NULL, NULL) != 0) {
    return KILN_STATUS(INTERNAL, "%s: %s", e->kernel.op->name, kiln_get_last_error());
  }
  return KILN_OK;
}

kiln_status_t kiln_kernel_cache_run(kiln_kernel_cache_t *cache, const kiln_kernel_t *kernel,
                                    kiln_tensor_t *const *inputs, kiln_tensor_t *const *outputs) {
  kiln_kernel_path_t path = KILN_KERNEL_PATH_UNRESOLVED;
  KILN_RETURN_IF_ERROR(kiln_kernel_cache_prepare(cache, kernel, &path));
  if (path == KILN_KERNEL_PATH_COMPILED) {
    return run_compiled(entry_of(kernel), inputs, outputs);
  }
  kiln_kernel_args_t args = {kernel->op, kernel->attrs,       kernel->num_inputs,
                             inputs,     kernel->num_outputs, outputs};
  return named(kernel->op, kiln_op_evaluate_into(&args));
}

void kiln_kernel_cache_get_stats(kiln_kernel_cache_t *cache, kiln_kernel_cache_stats_t *out_stats) {
  pthread_mutex_lock(&cache->store->lock);
  *out_stats = cache->stats;
  pthread_mutex_unlock(&cache->store->lock);
}
