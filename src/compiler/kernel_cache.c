/*
 * The kernel cache (kernel_cache.h): a string-keyed hash map of entries in
 * one arena, behind one mutex. Entries are made complete under the lock (the
 * key, the attrs and types copied, the output types inferred), so a pointer
 * handed out is immutable but for its path, which is an atomic word: a run
 * reads it without the lock once it is resolved. Compiling happens outside
 * the lock; the entry's `compiling` flag (under the lock) and one condition
 * variable make a second thread wait for the first one's compile.
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
#include "op/compute.h"
#include "tir/transform.h"

#define MAX_KERNEL_ARGS (KILN_TE_MAX_INPUTS + KILN_COMPUTE_MAX_OUTPUTS)

typedef struct entry_t {
  kiln_kernel_t kernel; /* first: a kiln_kernel_t * is an entry_t * */
  atomic_int path;      /* kiln_kernel_path_t */
  int compiling;        /* under the cache's lock */
  const char *func_name;
  kiln_runtime_module_t *module;
  kiln_packed_fn fn;
} entry_t;

struct kiln_kernel_cache_t {
  kiln_allocator_t allocator;
  char *target;
  bool reference_only;
  pthread_mutex_t lock;
  pthread_cond_t compiled; /* an entry's compile ended */
  kiln_hashmap_t map;      /* key -> entry_t * */
  kiln_arena_t arena;      /* entries, keys, attrs, types */
  kiln_kernel_cache_stats_t stats;
};

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

kiln_status_t kiln_kernel_cache_create(kiln_allocator_t allocator,
                                       const kiln_kernel_cache_options_t *options,
                                       kiln_kernel_cache_t **out_cache) {
  *out_cache = NULL;
  const char *target =
      options && options->target ? options->target : KILN_KERNEL_CACHE_DEFAULT_TARGET;
  const kiln_codegen_target_t *found = NULL;
  const char *target_options = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_codegen_target_find(target, &found, &target_options),
                                "kernel cache");
  kiln_kernel_cache_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*cache), (void **)&cache));
  cache->allocator = allocator;
  kiln_status_t status = kiln_allocator_strdup(allocator, target, &cache->target);
  if (status) {
    kiln_allocator_free(allocator, cache);
    return status;
  }
  cache->reference_only = options && options->reference_only;
  pthread_mutex_init(&cache->lock, NULL);
  pthread_cond_init(&cache->compiled, NULL);
  kiln_hashmap_initialize(&cache->map, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_arena_initialize(&cache->arena, allocator, 0);
  *out_cache = cache;
  return KILN_OK;
}

void kiln_kernel_cache_destroy(kiln_kernel_cache_t *cache) {
  if (!cache) {
    return;
  }
  kiln_hashmap_iterator_t it;
  kiln_hashmap_iterator_initialize(&it, &cache->map);
  const void *key = NULL;
  void *value = NULL;
  while (kiln_hashmap_iterator_next(&it, &key, &value)) {
    kiln_runtime_module_release(((entry_t *)value)->module);
  }
  kiln_hashmap_deinitialize(&cache->map);
  kiln_arena_deinitialize(&cache->arena);
  pthread_cond_destroy(&cache->compiled);
  pthread_mutex_destroy(&cache->lock);
  kiln_allocator_free(cache->allocator, cache->target);
  kiln_allocator_free(cache->allocator, cache);
}

const char *kiln_kernel_cache_target(const kiln_kernel_cache_t *cache) {
  return cache->target;
}

bool kiln_kernel_cache_reference_only(const kiln_kernel_cache_t *cache) {
  return cache->reference_only;
}

/* ---- keys ---- */

kiln_status_t kiln_kernel_cache_key(const char *target, const kiln_op_t *op, const void *attrs,
                                    int num_inputs, const kiln_type_t *const *input_types,
                                    kiln_strbuf_t *sb) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s|%s|", target, op->name));
  if (attrs && op->num_attr_fields > 0) {
    KILN_RETURN_IF_ERROR(kiln_op_attrs_format(op, attrs, sb));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '|'));
  for (int i = 0; i < num_inputs; ++i) {
    if (i > 0) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, ','));
    }
    KILN_RETURN_IF_ERROR(kiln_type_format(input_types[i], sb));
  }
  return KILN_OK;
}

/* ---- making an entry (under the lock) ---- */

static kiln_status_t copy_attrs(kiln_kernel_cache_t *cache, const kiln_op_t *op, const void *attrs,
                                const void **out_attrs) {
  *out_attrs = NULL;
  if (!attrs || op->attrs_size == 0) {
    return KILN_OK;
  }
  void *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, &cache->arena, &copy));
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, cache->allocator);
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < op->num_attr_fields && !status; ++i) {
    const kiln_attr_field_t *field = &op->attr_fields[i];
    kiln_strbuf_reset(&text);
    status = kiln_op_attrs_format_field(op, attrs, field, &text);
    if (!status) {
      status =
          kiln_op_attrs_set_text(op, copy, field->name, kiln_strbuf_c_str(&text), &cache->arena);
    }
  }
  kiln_strbuf_deinitialize(&text);
  *out_attrs = copy;
  return status;
}

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
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d outputs; a kernel takes at most %d", op->name, count,
                       KILN_COMPUTE_MAX_OUTPUTS);
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

static kiln_status_t make_entry(kiln_kernel_cache_t *cache, const char *key, const kiln_op_t *op,
                                const void *attrs, int num_inputs,
                                const kiln_type_t *const *input_types, entry_t **out_entry) {
  kiln_arena_t *arena = &cache->arena;
  entry_t *e = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*e), _Alignof(entry_t), (void **)&e));
  size_t key_size = strlen(key) + 1;
  char *key_copy = NULL, *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, key_size, 1, (void **)&key_copy));
  memcpy(key_copy, key, key_size);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, 32, 1, (void **)&name));
  snprintf(name, 32, "kernel_%lld", (long long)cache->stats.entries);
  const kiln_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(num_inputs ? num_inputs : 1),
                                                 sizeof(*types), sizeof(void *), (void **)&types));
  for (int i = 0; i < num_inputs; ++i) {
    KILN_RETURN_IF_ERROR(copy_type(arena, input_types[i], &types[i]));
  }
  const void *attrs_copy = NULL;
  KILN_RETURN_IF_ERROR(copy_attrs(cache, op, attrs, &attrs_copy));
  const kiln_type_t *output = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_infer_type(op, attrs_copy, num_inputs, types, arena, &output));
  KILN_RETURN_IF_ERROR(
      flatten_outputs(arena, op, output, &e->kernel.num_outputs, &e->kernel.output_types));
  e->kernel.key = key_copy;
  e->kernel.op = op;
  e->kernel.attrs = attrs_copy;
  e->kernel.num_inputs = num_inputs;
  e->kernel.input_types = types;
  e->kernel.output_type = output;
  e->func_name = name;
  atomic_init(&e->path, KILN_KERNEL_PATH_UNRESOLVED);
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&cache->map, key_copy, e));
  cache->stats.entries++;
  *out_entry = e;
  return KILN_OK;
}

kiln_status_t kiln_kernel_cache_lookup(kiln_kernel_cache_t *cache, const kiln_op_t *op,
                                       const void *attrs, int num_inputs,
                                       const kiln_type_t *const *input_types,
                                       const kiln_kernel_t **out_kernel) {
  *out_kernel = NULL;
  kiln_strbuf_t key;
  kiln_strbuf_initialize(&key, cache->allocator);
  kiln_status_t status = kiln_strbuf_reserve(&key, 192);
  if (!status) {
    status = kiln_kernel_cache_key(cache->target, op, attrs, num_inputs, input_types, &key);
  }
  if (status) {
    kiln_strbuf_deinitialize(&key);
    return status;
  }
  pthread_mutex_lock(&cache->lock);
  void *found = NULL;
  if (!kiln_hashmap_get(&cache->map, kiln_strbuf_c_str(&key), &found)) {
    entry_t *e = NULL;
    status = make_entry(cache, kiln_strbuf_c_str(&key), op, attrs, num_inputs, input_types, &e);
    found = e;
  }
  pthread_mutex_unlock(&cache->lock);
  kiln_strbuf_deinitialize(&key);
  if (!status) {
    *out_kernel = found;
  }
  return status;
}

/* ---- compiling ---- */

static kiln_status_t compile(kiln_kernel_cache_t *cache, const entry_t *e,
                             kiln_runtime_module_t **out_module, kiln_packed_fn *out_fn) {
  *out_module = NULL;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, cache->allocator, 0);
  kiln_schedule_target_t target = kiln_schedule_target_host();
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = kiln_op_lower(e->kernel.op, e->kernel.attrs, e->kernel.num_inputs,
                                       e->kernel.input_types, &target, &arena, e->func_name, &func);
  if (!status) {
    status = kiln_tir_lower_pipeline(&arena, func, NULL, &func);
  }
  if (!status) {
    status = kiln_codegen_build(cache->allocator, cache->target, &func, 1, out_module);
  }
  if (!status) {
    status = kiln_runtime_module_get_function(*out_module, e->func_name, out_fn);
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
  if (path != KILN_KERNEL_PATH_UNRESOLVED) {
    *out_path = path;
    return KILN_OK;
  }
  pthread_mutex_lock(&cache->lock);
  while (e->compiling) {
    pthread_cond_wait(&cache->compiled, &cache->lock);
  }
  kiln_status_t status = KILN_OK;
  if (atomic_load(&e->path) == KILN_KERNEL_PATH_UNRESOLVED && cache->reference_only) {
    cache->stats.reference++;
    atomic_store(&e->path, KILN_KERNEL_PATH_REFERENCE);
  } else if (atomic_load(&e->path) == KILN_KERNEL_PATH_UNRESOLVED) {
    e->compiling = 1;
    pthread_mutex_unlock(&cache->lock);
    kiln_runtime_module_t *module = NULL;
    kiln_packed_fn fn = NULL;
    kiln_status_t compiled = compile(cache, e, &module, &fn);
    pthread_mutex_lock(&cache->lock);
    status = record_compile(cache, e, compiled, module, fn);
    e->compiling = 0;
    pthread_cond_broadcast(&cache->compiled);
  }
  pthread_mutex_unlock(&cache->lock);
  *out_path = (kiln_kernel_path_t)atomic_load(&e->path);
  return status;
}

kiln_kernel_path_t kiln_kernel_cache_path(const kiln_kernel_t *kernel) {
  return (kiln_kernel_path_t)atomic_load(&entry_of(kernel)->path);
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
  return named(kernel->op, kernel->op->reference(&args));
}

void kiln_kernel_cache_get_stats(kiln_kernel_cache_t *cache, kiln_kernel_cache_stats_t *out_stats) {
  pthread_mutex_lock(&cache->lock);
  *out_stats = cache->stats;
  pthread_mutex_unlock(&cache->lock);
}
