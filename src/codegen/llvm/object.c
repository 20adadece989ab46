/*
 * An object file linked into a shared library and loaded; see machine.h.
 *
 * The object goes to a fresh temporary directory (codegen/toolchain.h) and
 * the system C compiler links it: `$CC -shared -o kiln_module.so
 * kiln_module.o -lm` ($CC else cc), so libm's functions the code calls
 * resolve as in the C backend's libraries. The library is loaded with
 * kiln_codegen_load_library (keeping its bytes for saving), which fills the
 * backend-ABI pointers the module
 * defines (__kiln_parallel_launch, ...), and the directory is removed. A
 * failed link is INVALID_ARGUMENT quoting the linker's first lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "codegen/llvm/machine.h"
#include "codegen/toolchain.h"

/* Lines of the linker's output a failure quotes. */
#define KILN_LLVM_ERROR_LINES 12

typedef struct linkdir_t {
  char dir[512];
  char object[600];
  char library[600];
  char log[600];
} linkdir_t;

static kiln_status_t link_error(kiln_allocator_t allocator, const linkdir_t *d, int exit_code) {
  void *log = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, d->log, &log, &size);
  const char *text = status ? "(no linker output)" : log;
  kiln_status_free(status);
  size_t end = 0;
  for (int lines = 0; text[end] && lines < KILN_LLVM_ERROR_LINES; ++end) {
    lines += text[end] == '\n';
  }
  status = KILN_STATUS(INVALID_ARGUMENT, "llvm backend: linking the object failed (exit %d):\n%.*s",
                       exit_code, (int)end, text);
  kiln_allocator_free(allocator, log);
  return status;
}

static kiln_status_t run_linker(kiln_allocator_t allocator, const linkdir_t *d) {
  const char *cc = getenv("CC");
  char *compiler = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(allocator, cc && *cc ? cc : "cc", &compiler));
  char *argv[32];
  int argc = 0;
  for (char *word = strtok(compiler, " \t"); word && argc < 24; word = strtok(NULL, " \t")) {
    argv[argc++] = word;
  }
  const char *tail[] = {"-shared", "-o", d->library, d->object, "-lm", NULL};
  memcpy(&argv[argc], tail, sizeof(tail));
  int exit_code = 0;
  kiln_status_t status = kiln_codegen_spawn("llvm backend", argv, d->log, &exit_code);
  if (!status && exit_code != 0) {
    status = link_error(allocator, d, exit_code);
  }
  kiln_allocator_free(allocator, compiler);
  return status;
}

kiln_status_t kiln_llvm_link_object(kiln_allocator_t allocator, LLVMMemoryBufferRef object,
                                    kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  linkdir_t d;
  KILN_RETURN_IF_ERROR(kiln_codegen_temp_dir("llvm backend", "kiln-llvm", d.dir, sizeof(d.dir)));
  snprintf(d.object, sizeof(d.object), "%s/kiln_module.o", d.dir);
  snprintf(d.library, sizeof(d.library), "%s/kiln_module.so", d.dir);
  snprintf(d.log, sizeof(d.log), "%s/link.log", d.dir);
  kiln_status_t status =
      kiln_file_write_all(d.object, LLVMGetBufferStart(object), LLVMGetBufferSize(object));
  if (!status) {
    status = run_linker(allocator, &d);
  }
  if (!status) {
    status = kiln_codegen_load_library(allocator, d.library, out_module);
  }
  unlink(d.object);
  unlink(d.library);
  unlink(d.log);
  rmdir(d.dir);
  return status;
}
