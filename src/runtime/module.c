/*
 * Runtime modules over dlopen; see include/kiln/module.h.
 *
 * Loading opens the library with RTLD_NOW | RTLD_LOCAL (missing symbols fail
 * at load, not at the first call; two modules never see each other's
 * symbols), then fills the backend-ABI pointers the library declares (TVM's
 * InitContextFunctions): each of the names below found with dlsym gets the
 * runtime's function, so generated code reaches the last error, the parallel
 * launch and the workspace allocator without linking against the
 * executable. The module's struct, path and kept source come from the
 * allocator given at load time; the count is atomic so modules can be shared
 * between threads.
 */
#include "kiln/module.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

struct kiln_runtime_module_t {
  kiln_allocator_t allocator;
  atomic_int refs;
  void *handle;
  char *path;
  char *source_format;
  char *source;
};

typedef struct abi_entry_t {
  const char *symbol;
  void (*fn)(void);
} abi_entry_t;

/* Every function pointer a generated library may declare. */
static void wire_abi(void *handle) {
  const abi_entry_t entries[] = {
      {"__kiln_backend_set_last_error", (void (*)(void))kiln_backend_set_last_error},
      {"__kiln_parallel_launch", (void (*)(void))kiln_parallel_launch},
      {"__kiln_parallel_barrier", (void (*)(void))kiln_parallel_barrier},
      {"__kiln_backend_alloc_workspace", (void (*)(void))kiln_backend_alloc_workspace},
      {"__kiln_backend_free_workspace", (void (*)(void))kiln_backend_free_workspace},
  };
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); ++i) {
    void (**slot)(void) = NULL;
    *(void **)&slot = dlsym(handle, entries[i].symbol);
    if (slot) {
      *slot = entries[i].fn;
    }
  }
}

kiln_status_t kiln_runtime_module_load(kiln_allocator_t allocator, const char *path,
                                       kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  if (!path) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_runtime_module_load: null path");
  }
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*module), (void **)&module));
  module->allocator = allocator;
  atomic_init(&module->refs, 1);
  kiln_status_t status = kiln_allocator_strdup(allocator, path, &module->path);
  if (!status) {
    module->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module->handle) {
      const char *error = dlerror();
      status = KILN_STATUS(IO_ERROR, "kiln_runtime_module_load: cannot load %s: %s", path,
                           error ? error : "unknown error");
    }
  }
  if (status) {
    kiln_runtime_module_release(module);
    return status;
  }
  wire_abi(module->handle);
  *out_module = module;
  return KILN_OK;
}

void kiln_runtime_module_retain(kiln_runtime_module_t *module) {
  atomic_fetch_add(&module->refs, 1);
}

void kiln_runtime_module_release(kiln_runtime_module_t *module) {
  if (!module || atomic_fetch_sub(&module->refs, 1) != 1) {
    return;
  }
  if (module->handle) {
    dlclose(module->handle);
  }
  kiln_allocator_free(module->allocator, module->path);
  kiln_allocator_free(module->allocator, module->source_format);
  kiln_allocator_free(module->allocator, module->source);
  kiln_allocator_free(module->allocator, module);
}

kiln_status_t kiln_runtime_module_set_source(kiln_runtime_module_t *module, const char *format,
                                             const char *source) {
  char *format_copy = NULL, *source_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(module->allocator, format, &format_copy));
  kiln_status_t status = kiln_allocator_strdup(module->allocator, source, &source_copy);
  if (status) {
    kiln_allocator_free(module->allocator, format_copy);
    return status;
  }
  kiln_allocator_free(module->allocator, module->source_format);
  kiln_allocator_free(module->allocator, module->source);
  module->source_format = format_copy;
  module->source = source_copy;
  return KILN_OK;
}

const char *kiln_runtime_module_source(const kiln_runtime_module_t *module, const char *format) {
  if (!module || !format || !module->source_format || strcmp(module->source_format, format) != 0) {
    return NULL;
  }
  return module->source;
}

const char *kiln_runtime_module_path(const kiln_runtime_module_t *module) {
  return module->path;
}

kiln_status_t kiln_runtime_module_get_function(const kiln_runtime_module_t *module,
                                               const char *name, kiln_packed_fn *out_fn) {
  *out_fn = NULL;
  void *symbol = name ? dlsym(module->handle, name) : NULL;
  if (!symbol) {
    return KILN_STATUS(NOT_FOUND, "function %s is not in module %s", name ? name : "(null)",
                       module->path);
  }
  *(void **)out_fn = symbol;
  return KILN_OK;
}

kiln_status_t kiln_packed_call_dl(kiln_allocator_t allocator, kiln_packed_fn fn, const char *name,
                                  int num_args, DLTensor *const *args) {
  if (num_args < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d arguments", name, num_args);
  }
  void *memory = NULL;
  size_t count = num_args > 0 ? (size_t)num_args : 1;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, count, sizeof(kiln_value_t) + sizeof(int), &memory));
  kiln_value_t *values = memory;
  int *codes = (int *)(values + count);
  for (int i = 0; i < num_args; ++i) {
    values[i].v_handle = args[i];
    codes[i] = KILN_ARG_DLTENSOR;
  }
  int result = fn(values, codes, num_args, NULL, NULL, NULL);
  kiln_allocator_free(allocator, memory);
  if (result != 0) {
    return KILN_STATUS(INTERNAL, "%s: %s", name, kiln_get_last_error());
  }
  return KILN_OK;
}

kiln_status_t kiln_runtime_module_call(const kiln_runtime_module_t *module, const char *name,
                                       int num_args, kiln_tensor_t *const *args) {
  kiln_packed_fn fn = NULL;
  KILN_RETURN_IF_ERROR(kiln_runtime_module_get_function(module, name, &fn));
  if (num_args < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d arguments", name, num_args);
  }
  /* Copies of the tensors' DLTensors (the kernel takes non-const ones). */
  void *memory = NULL;
  size_t count = num_args > 0 ? (size_t)num_args : 1;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(module->allocator, count,
                                                   sizeof(DLTensor) + sizeof(DLTensor *), &memory));
  DLTensor *copies = memory;
  DLTensor **pointers = (DLTensor **)(copies + count);
  for (int i = 0; i < num_args; ++i) {
    pointers[i] = args[i] ? &copies[i] : NULL;
    if (args[i]) {
      copies[i] = *kiln_tensor_dl(args[i]);
    }
  }
  kiln_status_t status = kiln_packed_call_dl(module->allocator, fn, name, num_args, pointers);
  kiln_allocator_free(module->allocator, memory);
  return status;
}
