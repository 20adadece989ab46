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
 * for another CPU can be saved (runtime/module_built.h). kiln_codegen_link
 * links an object file (both backends make one) into a library, for this
 * machine or another architecture, with or without an embedded model.
 */
#ifndef KILN_CODEGEN_TOOLCHAIN_H_
#define KILN_CODEGEN_TOOLCHAIN_H_

#include <stdbool.h>
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

/* Links an object file into a shared library, with the embedded model of
 * a one-file model (`model`, model_size > 0: the __kiln_model symbol's
 * bytes, kiln_runtime_model_serialize) when one is given, in a temporary
 * directory removed after. `triple` NULL (or one of this machine's
 * architecture) links for this machine with the system C compiler
 * ($CC, else cc): `$CC -shared -o lib.so kernels.o [model.s] -lm`;
 * another architecture's triple with GNU binutils for it,
 * <arch>-linux-gnu-as and <arch>-linux-gnu-ld (Debian's
 * binutils-<arch>-linux-gnu), UNAVAILABLE naming the package when they
 * are not installed. The model goes in through an assembly file that
 * .incbin's it into the read-only data of the library, exported as
 * __kiln_model with its size. The module keeps the library's bytes and
 * the object file; it is loaded here (kiln_runtime_module_load_built)
 * when `load` and the library is for this machine, else unloaded
 * (runtime/module_built.h). A failed link is INVALID_ARGUMENT quoting the
 * linker's first lines. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_link(kiln_allocator_t allocator, const char *triple,
                                                     const void *object, size_t object_size,
                                                     const void *model, size_t model_size,
                                                     bool load, kiln_runtime_module_t **out_module);

#endif /* KILN_CODEGEN_TOOLCHAIN_H_ */
