/*
 * Runtime modules: compiled kernels loaded from a shared library.
 *
 * A kiln_runtime_module_t wraps a library opened with dlopen. Loading also wires the
 * library to this runtime, as TVM's library module does: a generated library
 * declares function-pointer globals for the backend ABI it calls
 * (__kiln_backend_set_last_error, __kiln_parallel_launch, ...; see
 * docs/codegen-c.md) and the loader stores the runtime's functions in those it
 * finds, so the library needs no symbol of the executable. Functions are
 * looked up by name and called with the packed calling convention
 * (kiln/backend.h); kiln_runtime_module_call packs tensors for the caller and turns a
 * kernel's -1 into an INTERNAL status carrying kiln_get_last_error().
 *
 * A module may keep the source it was compiled from, in one or more formats
 * (the C backend keeps its C file, the LLVM backend its IR and assembly),
 * returned by kiln_runtime_module_source, and the bytes of the shared library
 * it was loaded from (kiln_runtime_module_set_binary: a backend that builds in
 * a temporary directory keeps them before removing it), which
 * kiln_runtime_module_save writes out as the lib.so of a build's artifacts.
 * Modules are reference counted: release closes the library when the count
 * reaches zero. The allocator given at load time holds the module's own
 * memory.
 */
#ifndef KILN_MODULE_H_
#define KILN_MODULE_H_

#include "kiln/allocator.h"
#include "kiln/backend.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_runtime_module_t kiln_runtime_module_t;

/* Opens the shared library at `path` (count 1). IO_ERROR naming the file and
 * dlerror's message when it cannot be opened. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_load(kiln_allocator_t allocator,
                                                            const char *path,
                                                            kiln_runtime_module_t **out_module);
/* One function of an in-memory module. */
typedef struct kiln_runtime_module_entry_t {
  const char *name;
  kiln_packed_fn fn;
  int num_args; /* the argument count fn checks; 0 when not recorded */
} kiln_runtime_module_entry_t;

/* A module over functions already in this process (kernels compiled into
 * the executable, TVM's system library, or code a JIT made): `name` names
 * it in errors and as its path; the entries (names copied) are looked up by
 * name. `release_owner(owner)`, when given, runs when the last reference
 * goes (a JIT frees its code there). */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_create_in_memory(
    kiln_allocator_t allocator, const char *name, int num_entries,
    const kiln_runtime_module_entry_t *entries, void (*release_owner)(void *owner), void *owner,
    kiln_runtime_module_t **out_module);

void kiln_runtime_module_retain(kiln_runtime_module_t *module);
/* Drops a reference; the last one closes the library. NULL is a no-op. */
void kiln_runtime_module_release(kiln_runtime_module_t *module);

/* Most source formats a module keeps ("c"; "ll" and "asm"). */
#define KILN_RUNTIME_MODULE_MAX_SOURCES 4

/* Keeps a copy of `source` as the module's source in `format` ("c", "ll",
 * "asm"), replacing any kept before in that format. INVALID_ARGUMENT when
 * the module already keeps KILN_RUNTIME_MODULE_MAX_SOURCES other formats. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_set_source(kiln_runtime_module_t *module,
                                                                  const char *format,
                                                                  const char *source);
/* The source kept in `format`, or NULL when there is none. */
const char *kiln_runtime_module_source(const kiln_runtime_module_t *module, const char *format);
/* Keeps a copy of the `size` bytes of the module's shared library (the file
 * it was loaded from), replacing any kept before. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_set_binary(kiln_runtime_module_t *module,
                                                                  const void *bytes, size_t size);
/* The library bytes kept, or NULL (and *out_size 0) when there are none. */
const void *kiln_runtime_module_binary(const kiln_runtime_module_t *module, size_t *out_size);
/* Writes the kept library bytes to `path` (replacing it atomically), ready
 * for kiln_runtime_module_load. FAILED_PRECONDITION "module X has no library
 * file (built in memory): ..." when none are kept; IO_ERROR naming the path. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_save(const kiln_runtime_module_t *module,
                                                            const char *path);
/* The path the library was loaded from. */
const char *kiln_runtime_module_path(const kiln_runtime_module_t *module);

/* The packed function `name`; NOT_FOUND naming the function and the module
 * otherwise. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_get_function(
    const kiln_runtime_module_t *module, const char *name, kiln_packed_fn *out_fn);
/* The prefix of the symbol that records a generated function's argument
 * count: every packed function `name` of a generated library comes with
 * `const int32_t __kiln_num_args_<name>` (both backends), so a loader can
 * check a caller's argument count before the first call. */
#define KILN_RUNTIME_MODULE_NUM_ARGS_PREFIX "__kiln_num_args_"
/* The argument count function `name` checks, as the module records it (the
 * library's __kiln_num_args_<name>, or an in-memory entry's num_args); -1
 * when it is not recorded (a library not made by kiln, an entry with
 * num_args 0) or there is no such function. */
int kiln_runtime_module_function_num_args(const kiln_runtime_module_t *module, const char *name);
/* Calls `fn` with DLTensor arguments (type code KILN_ARG_DLTENSOR each).
 * INTERNAL "<name>: <last error>" when it returns non-zero. */
KILN_MUST_USE_RESULT kiln_status_t kiln_packed_call_dl(kiln_allocator_t allocator,
                                                       kiln_packed_fn fn, const char *name,
                                                       int num_args, DLTensor *const *args);
/* Looks `name` up and calls it with the tensors' DLTensors. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_call(const kiln_runtime_module_t *module,
                                                            const char *name, int num_args,
                                                            kiln_tensor_t *const *args);

#ifdef __cplusplus
}
#endif

#endif /* KILN_MODULE_H_ */
