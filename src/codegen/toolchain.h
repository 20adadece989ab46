/*
 * Running the system toolchain from a backend (shared by the C backend's
 * compiler call and the LLVM backend's link step).
 *
 * kiln_codegen_spawn runs a program through posix_spawnp with an argument
 * vector (no shell, so every word reaches it exactly), its stdout and
 * stderr into a log file, and waits for it. kiln_codegen_temp_dir makes a
 * fresh private directory with mkdtemp under $TMPDIR (else /tmp).
 * kiln_codegen_load_library loads a library the toolchain built as a
 * runtime module that also keeps the library's bytes, so the module can be
 * saved (kiln_runtime_module_save) after the directory is gone; its target
 * record is checked when a function is asked for, not at load, so a build
 * for another CPU can be saved (runtime/module_built.h).
 */
#ifndef KILN_CODEGEN_TOOLCHAIN_H_
#define KILN_CODEGEN_TOOLCHAIN_H_

#include <stddef.h>

#include "kiln/module.h"
#include "kiln/status.h"

/* Runs argv (NULL-terminated; argv[0] looked up on PATH) with its output
 * in `log_path`; *out_exit is its exit code, or 128 + the signal that ended
 * it. UNAVAILABLE naming `who` and the program when it cannot be started. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_spawn(const char *who, char *const *argv,
                                                      const char *log_path, int *out_exit);
/* "<tmp>/<prefix>-XXXXXX" made with mkdtemp into `dir`. IO_ERROR naming
 * `who` and the path when it cannot be made. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_temp_dir(const char *who, const char *prefix,
                                                         char *dir, size_t capacity);

/* kiln_runtime_module_load, then the file's bytes kept in the module. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_load_library(kiln_allocator_t allocator,
                                                             const char *path,
                                                             kiln_runtime_module_t **out_module);

#endif /* KILN_CODEGEN_TOOLCHAIN_H_ */
