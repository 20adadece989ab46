/*
 * Loading a library a backend has just built (internal to kiln): it may be
 * compiled for another CPU than this one (`--target "llvm -mcpu=x86-64-v4"`
 * on a smaller machine, to be saved and deployed there), so its target
 * record is not checked at load, as kiln_runtime_module_load does. Code in
 * this process that runs such a library checks its target string first
 * (kiln_codegen_target_check_host, codegen/target_record.h).
 *
 * Also what a backend keeps in a module beyond the public API: a library
 * for another architecture held unloaded, and the object file a library
 * was linked from.
 */
#ifndef KILN_RUNTIME_MODULE_BUILT_H_
#define KILN_RUNTIME_MODULE_BUILT_H_

#include <stdbool.h>
#include <stddef.h>

#include "kiln/module.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_load_built(
    kiln_allocator_t allocator, const char *path, kiln_runtime_module_t **out_module);

/* A module over a library built for another architecture (a cross build:
 * `llvm -mtriple=aarch64-linux-gnu`), which cannot be loaded here: it
 * keeps the library's `size` bytes (copied) for saving, and asking it for
 * a function is FAILED_PRECONDITION "module NAME is not loaded: WHY". */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_create_unloaded(
    kiln_allocator_t allocator, const char *name, const char *why, const void *library, size_t size,
    kiln_runtime_module_t **out_module);
/* Whether the module's functions can be called here (a loaded library, or
 * an in-memory module); false for an unloaded one. */
bool kiln_runtime_module_is_loaded(const kiln_runtime_module_t *module);

/* The object file a backend linked the library from, kept (a copy) so the
 * kernels can be linked again with an embedded model into a one-file
 * model (kiln_compiled_export_library); NULL when none is kept (a JIT's
 * module, a library loaded from a file). */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_set_object(kiln_runtime_module_t *module,
                                                                  const void *bytes, size_t size);
const void *kiln_runtime_module_object(const kiln_runtime_module_t *module, size_t *out_size);

#endif /* KILN_RUNTIME_MODULE_BUILT_H_ */
