/*
 * Runtime modules over dlopen; see include/kiln/module.h.
 *
 * Loading opens the library with RTLD_NOW | RTLD_LOCAL (missing symbols fail
 * at load, not at the first call; two modules never see each other's
 * symbols), then fills the backend-ABI pointers the library declares (TVM's
 * InitContextFunctions): each of the names below found with dlsym gets the
 * runtime's function, so generated code reaches the last error, the parallel
 * launch and the workspace allocator without linking against the
 * executable. The module's struct, path and kept sources (one per format,
 * a few formats) come from the
 * allocator given at load time; the count is atomic so modules can be shared
 * between threads. An in-memory module has no library handle: it keeps a
 * copied table of names and function pointers, searched by name, and an
 * owner released with it. The library's bytes, when a backend hands them
 * over, are one copy from the module's allocator, written out by save with
 * the atomic whole-file write of base/file.h. A function's argument count,
 * when recorded, is the library's __kiln_num_args_<name> (found with dlsym)
 * or the in-memory entry's num_args. The library's target record
 * (__kiln_target, runtime/cpu_features.h) is checked against this CPU
 * before dlopen: the file is mapped and read as ELF (runtime/elf.h), a
 * library for another machine is refused (by its record's triple, or by
 * its ELF machine when it has none) and the record found among its
 * dynamic symbols is checked, so a library that needs a feature this CPU
 * lacks is refused, naming it, before any of it is mapped to run, instead
 * of dying with SIGILL at its first kernel. When the file cannot be read
 * that way (not ELF: dlopen says why it refuses it) the record is looked
 * up with dlsym after dlopen and checked before the loader hands out any
 * function. A library a backend has just built
 * (kiln_runtime_module_load_built) may be for another CPU, to be saved and
 * run elsewhere: it loads unchecked, and whoever runs it in this process
 * checks its target first (the graph compiler's executor, the eager
 * kernel cache: codegen/target_record.h). A library built for another
 * architecture is never loaded: its module is unloaded (no handle, no
 * entries), keeps the library's bytes and a reason, and refuses every
 * function with it. A backend may also hand over the object file it
 * linked (kept like the library's bytes) for linking the kernels again.
 */
#include "kiln/module.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "runtime/cpu_features.h"
#include "runtime/elf.h"
#include "runtime/module_built.h"

struct kiln_runtime_module_t {
  kiln_allocator_t allocator;
  atomic_int refs;
  void *handle;
  char *path;
  int num_sources;
  char *source_formats[KILN_RUNTIME_MODULE_MAX_SOURCES];
  char *sources[KILN_RUNTIME_MODULE_MAX_SOURCES];
  void *binary; /* the shared library's bytes, or NULL */
  size_t binary_size;
  void *object; /* the object file it was linked from, or NULL */
  size_t object_size;
  char *not_loaded; /* an unloaded module's reason */
  /* In-memory modules only: */
  int num_entries;
  kiln_runtime_module_entry_t *entries; /* names point into `names` */
  char *names;
  void (*release_owner)(void *owner);
  void *owner;
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

/* The library's target record (cpu_features.h), checked against this CPU
 * before any of its code can run; a library without one (built before
 * kiln recorded targets, or by hand) loads as it is. */
static kiln_status_t check_target(const kiln_runtime_module_t *module) {
  const char *record = module->handle ? dlsym(module->handle, KILN_TARGET_RECORD_SYMBOL) : NULL;
  return record ? kiln_cpu_target_check(record, module->path) : KILN_OK;
}

/* The record's text from the file: a string ending inside the symbol. */
static kiln_status_t record_text(const kiln_elf_t *elf, const char *path, char *text,
                                 size_t capacity, bool *out_found) {
  *out_found = false;
  const void *bytes = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_elf_symbol(elf, KILN_TARGET_RECORD_SYMBOL, &bytes, &size);
  if (kiln_status_code(status) == KILN_STATUS_CODE_NOT_FOUND) {
    kiln_status_free(status);
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(status);
  const char *end = memchr(bytes, '\0', size);
  if (!end || (size_t)(end - (const char *)bytes) >= capacity) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: its target record (%s, %zu bytes) is not a string",
                       path, KILN_TARGET_RECORD_SYMBOL, size);
  }
  memcpy(text, bytes, (size_t)(end - (const char *)bytes) + 1);
  *out_found = true;
  return KILN_OK;
}

/* The file read as ELF before dlopen: another machine's library refused,
 * the record (when `check`) checked; *out_checked says whether the file
 * could be read so. A missing file or one that is not ELF is left to
 * dlopen; what is not a regular file is refused (never waited on). */
static kiln_status_t check_file(const char *path, bool check, bool *out_checked) {
  *out_checked = false;
  kiln_file_mapping_t mapping;
  kiln_status_t status = kiln_file_map(path, &mapping);
  if (kiln_status_code(status) == KILN_STATUS_CODE_NOT_FOUND) {
    kiln_status_free(status); /* dlopen says why, as it always has */
    return KILN_OK;
  }
  /* not a regular file (a FIFO dlopen would wait on), or unreadable */
  KILN_RETURN_IF_ERROR_ANNOTATE(status, "kiln_runtime_module_load");
  if (!kiln_elf_is_elf(mapping.data, mapping.size)) {
    kiln_file_unmap(&mapping);
    return KILN_OK;
  }
  kiln_elf_t elf;
  char record[1024];
  bool found = false;
  status = kiln_elf_parse(mapping.data, mapping.size, path, &elf);
  if (!status) {
    status = record_text(&elf, path, record, sizeof(record), &found);
  }
  kiln_file_unmap(&mapping);
  KILN_RETURN_IF_ERROR(status);
  bool foreign = elf.machine != kiln_elf_host_machine();
  if (found && (check || foreign)) {
    KILN_RETURN_IF_ERROR(kiln_cpu_target_check(record, path));
  }
  if (foreign) {
    const char *name = kiln_elf_machine_name(elf.machine);
    return KILN_STATUS(FAILED_PRECONDITION,
                       "%s is a library for %s (ELF machine %u); this machine is %s", path,
                       name ? name : "another machine", elf.machine, kiln_cpu_host_arch());
  }
  *out_checked = true;
  return KILN_OK;
}

static kiln_status_t load(kiln_allocator_t allocator, const char *path, bool check,
                          kiln_runtime_module_t **out_module);

kiln_status_t kiln_runtime_module_load(kiln_allocator_t allocator, const char *path,
                                       kiln_runtime_module_t **out_module) {
  return load(allocator, path, true, out_module);
}

kiln_status_t kiln_runtime_module_load_built(kiln_allocator_t allocator, const char *path,
                                             kiln_runtime_module_t **out_module) {
  return load(allocator, path, false, out_module);
}

/* Opens the library; with `check`, refuses it when its target record does
 * not fit this CPU. */
static kiln_status_t load(kiln_allocator_t allocator, const char *path, bool check,
                          kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  if (!path) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_runtime_module_load: null path");
  }
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*module), (void **)&module));
  module->allocator = allocator;
  atomic_init(&module->refs, 1);
  bool checked = false;
  kiln_status_t status = kiln_allocator_strdup(allocator, path, &module->path);
  if (!status) {
    status = check_file(path, check, &checked);
  }
  if (!status) {
    module->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module->handle) {
      const char *error = dlerror();
      status = KILN_STATUS(IO_ERROR, "kiln_runtime_module_load: cannot load %s: %s", path,
                           error ? error : "unknown error");
    }
  }
  if (!status && check && !checked) {
    status = check_target(module);
  }
  if (status) {
    kiln_runtime_module_release(module);
    return status;
  }
  wire_abi(module->handle);
  *out_module = module;
  return KILN_OK;
}

static kiln_status_t copy_entries(kiln_runtime_module_t *module, int count,
                                  const kiln_runtime_module_entry_t *entries) {
  size_t bytes = 0;
  for (int i = 0; i < count; ++i) {
    if (!entries[i].name || !entries[i].fn) {
      return KILN_STATUS(INVALID_ARGUMENT, "module %s: entry %d has no name or no function",
                         module->path, i);
    }
    bytes += strlen(entries[i].name) + 1;
  }
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(module->allocator, count > 0 ? (size_t)count : 1,
                                                   sizeof(*entries), (void **)&module->entries));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc(module->allocator, bytes > 0 ? bytes : 1, (void **)&module->names));
  char *next = module->names;
  for (int i = 0; i < count; ++i) {
    size_t length = strlen(entries[i].name) + 1;
    memcpy(next, entries[i].name, length);
    module->entries[i] = (kiln_runtime_module_entry_t){next, entries[i].fn, entries[i].num_args};
    next += length;
  }
  module->num_entries = count;
  return KILN_OK;
}

kiln_status_t kiln_runtime_module_create_in_memory(kiln_allocator_t allocator, const char *name,
                                                   int num_entries,
                                                   const kiln_runtime_module_entry_t *entries,
                                                   void (*release_owner)(void *owner), void *owner,
                                                   kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  if (!name || num_entries < 0 || (num_entries > 0 && !entries)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "kiln_runtime_module_create_in_memory: a name and %d entries are needed",
                       num_entries);
  }
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*module), (void **)&module));
  module->allocator = allocator;
  atomic_init(&module->refs, 1);
  kiln_status_t status = kiln_allocator_strdup(allocator, name, &module->path);
  if (!status) {
    status = copy_entries(module, num_entries, entries);
  }
  if (status) {
    kiln_runtime_module_release(module);
    return status; /* the owner stays the caller's */
  }
  module->release_owner = release_owner;
  module->owner = owner;
  *out_module = module;
  return KILN_OK;
}

kiln_status_t kiln_runtime_module_create_unloaded(kiln_allocator_t allocator, const char *name,
                                                  const char *why, const void *library, size_t size,
                                                  kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*module), (void **)&module));
  module->allocator = allocator;
  atomic_init(&module->refs, 1);
  kiln_status_t status = kiln_allocator_strdup(allocator, name, &module->path);
  if (!status) {
    status = kiln_allocator_strdup(allocator, why, &module->not_loaded);
  }
  if (!status) {
    status = kiln_runtime_module_set_binary(module, library, size);
  }
  if (status) {
    kiln_runtime_module_release(module);
    return status;
  }
  *out_module = module;
  return KILN_OK;
}

bool kiln_runtime_module_is_loaded(const kiln_runtime_module_t *module) {
  return !module->not_loaded;
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
  if (module->release_owner) {
    module->release_owner(module->owner);
  }
  kiln_allocator_free(module->allocator, module->entries);
  kiln_allocator_free(module->allocator, module->names);
  kiln_allocator_free(module->allocator, module->path);
  for (int i = 0; i < module->num_sources; ++i) {
    kiln_allocator_free(module->allocator, module->source_formats[i]);
    kiln_allocator_free(module->allocator, module->sources[i]);
  }
  kiln_allocator_free(module->allocator, module->binary);
  kiln_allocator_free(module->allocator, module->object);
  kiln_allocator_free(module->allocator, module->not_loaded);
  kiln_allocator_free(module->allocator, module);
}

kiln_status_t kiln_runtime_module_set_source(kiln_runtime_module_t *module, const char *format,
                                             const char *source) {
  int slot = 0;
  while (slot < module->num_sources && strcmp(module->source_formats[slot], format) != 0) {
    ++slot;
  }
  if (slot == KILN_RUNTIME_MODULE_MAX_SOURCES) {
    return KILN_STATUS(INVALID_ARGUMENT, "module %s: cannot keep a %s source: it keeps %d formats",
                       module->path, format, KILN_RUNTIME_MODULE_MAX_SOURCES);
  }
  char *format_copy = NULL, *source_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(module->allocator, format, &format_copy));
  kiln_status_t status = kiln_allocator_strdup(module->allocator, source, &source_copy);
  if (status) {
    kiln_allocator_free(module->allocator, format_copy);
    return status;
  }
  if (slot < module->num_sources) {
    kiln_allocator_free(module->allocator, module->source_formats[slot]);
    kiln_allocator_free(module->allocator, module->sources[slot]);
  } else {
    module->num_sources = slot + 1;
  }
  module->source_formats[slot] = format_copy;
  module->sources[slot] = source_copy;
  return KILN_OK;
}

const char *kiln_runtime_module_source(const kiln_runtime_module_t *module, const char *format) {
  for (int i = 0; module && format && i < module->num_sources; ++i) {
    if (strcmp(module->source_formats[i], format) == 0) {
      return module->sources[i];
    }
  }
  return NULL;
}

kiln_status_t kiln_runtime_module_set_binary(kiln_runtime_module_t *module, const void *bytes,
                                             size_t size) {
  if (!bytes && size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "module %s: %zu library bytes at NULL", module->path,
                       size);
  }
  void *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(module->allocator, size > 0 ? size : 1, &copy));
  if (size > 0) {
    memcpy(copy, bytes, size);
  }
  kiln_allocator_free(module->allocator, module->binary);
  module->binary = copy;
  module->binary_size = size;
  return KILN_OK;
}

const void *kiln_runtime_module_binary(const kiln_runtime_module_t *module, size_t *out_size) {
  *out_size = module->binary ? module->binary_size : 0;
  return module->binary;
}

kiln_status_t kiln_runtime_module_set_object(kiln_runtime_module_t *module, const void *bytes,
                                             size_t size) {
  if (!bytes || size == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "module %s: an object file of %zu bytes", module->path,
                       size);
  }
  void *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(module->allocator, size, &copy));
  memcpy(copy, bytes, size);
  kiln_allocator_free(module->allocator, module->object);
  module->object = copy;
  module->object_size = size;
  return KILN_OK;
}

const void *kiln_runtime_module_object(const kiln_runtime_module_t *module, size_t *out_size) {
  *out_size = module->object ? module->object_size : 0;
  return module->object;
}

kiln_status_t kiln_runtime_module_save(const kiln_runtime_module_t *module, const char *path) {
  if (!module->binary) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "module %s has no library file (built in memory): build with an "
                       "object-file target to save it",
                       module->path);
  }
  return kiln_file_write_all(path, module->binary, module->binary_size);
}

const char *kiln_runtime_module_path(const kiln_runtime_module_t *module) {
  return module->path;
}

kiln_status_t kiln_runtime_module_get_function(const kiln_runtime_module_t *module,
                                               const char *name, kiln_packed_fn *out_fn) {
  *out_fn = NULL;
  for (int i = 0; name && !module->handle && i < module->num_entries; ++i) {
    if (strcmp(module->entries[i].name, name) == 0) {
      *out_fn = module->entries[i].fn;
      return KILN_OK;
    }
  }
  if (module->not_loaded) {
    return KILN_STATUS(FAILED_PRECONDITION, "function %s: module %s is not loaded: %s",
                       name ? name : "(null)", module->path, module->not_loaded);
  }
  void *symbol = name && module->handle ? dlsym(module->handle, name) : NULL;
  if (!symbol) {
    return KILN_STATUS(NOT_FOUND, "function %s is not in module %s", name ? name : "(null)",
                       module->path);
  }
  *(void **)out_fn = symbol;
  return KILN_OK;
}

int kiln_runtime_module_function_num_args(const kiln_runtime_module_t *module, const char *name) {
  for (int i = 0; name && !module->handle && i < module->num_entries; ++i) {
    if (strcmp(module->entries[i].name, name) == 0) {
      return module->entries[i].num_args > 0 ? module->entries[i].num_args : -1;
    }
  }
  char symbol[512];
  int length =
      name ? snprintf(symbol, sizeof(symbol), "%s%s", KILN_RUNTIME_MODULE_NUM_ARGS_PREFIX, name)
           : -1;
  if (!module->handle || length < 0 || (size_t)length >= sizeof(symbol)) {
    return -1;
  }
  const int32_t *count = dlsym(module->handle, symbol);
  return count && *count >= 0 ? (int)*count : -1;
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
    /* Generated kernels name themselves in their messages. */
    const char *error = kiln_get_last_error();
    size_t length = strlen(name);
    int named = strncmp(error, name, length) == 0 && error[length] == ':';
    return named ? KILN_STATUS(INTERNAL, "%s", error)
                 : KILN_STATUS(INTERNAL, "%s: %s", name, error);
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
