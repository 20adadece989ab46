/*
 * The system toolchain from a backend; see toolchain.h.
 */
#define _GNU_SOURCE
#include "codegen/toolchain.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "kiln/runtime.h"
#include "runtime/cpu_features.h"
#include "runtime/module_built.h"

kiln_status_t kiln_codegen_spawn(const char *who, char *const *argv, const char *log_path,
                                 int *out_exit) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int error = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return KILN_STATUS(UNAVAILABLE, "%s: cannot run %s: %s", who, argv[0], strerror(error));
  }
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) < 0) {
    return KILN_STATUS(INTERNAL, "%s: waiting for %s failed", who, argv[0]);
  }
  *out_exit = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return KILN_OK;
}

kiln_status_t kiln_codegen_temp_dir(const char *who, const char *prefix, char *dir,
                                    size_t capacity) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, capacity, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
  if (!mkdtemp(dir)) {
    return KILN_STATUS(IO_ERROR, "%s: cannot make a temporary directory %s", who, dir);
  }
  return KILN_OK;
}

kiln_status_t kiln_codegen_load_library(kiln_allocator_t allocator, const char *path,
                                        kiln_runtime_module_t **out_module) {
  KILN_RETURN_IF_ERROR(kiln_runtime_module_load_built(allocator, path, out_module));
  void *bytes = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, path, &bytes, &size);
  if (!status) {
    status = kiln_runtime_module_set_binary(*out_module, bytes, size);
    kiln_allocator_free(allocator, bytes);
  }
  if (status) {
    kiln_runtime_module_release(*out_module);
    *out_module = NULL;
  }
  return status;
}

/* ---- linking ---- */

/* Lines of the linker's output a failure quotes. */
#define KILN_LINK_ERROR_LINES 12

typedef struct linkdir_t {
  char dir[512];
  char object[600];
  char model[600];     /* the embedded model's bytes */
  char model_asm[600]; /* the assembly that .incbin's them */
  char model_obj[600]; /* assembled (another architecture) */
  char library[600];
  char log[600];
  char prefix[64]; /* "aarch64-linux-gnu-" for another architecture, else "" */
} linkdir_t;

static kiln_status_t tool_error(kiln_allocator_t allocator, const linkdir_t *d, const char *tool,
                                int exit_code) {
  void *log = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, d->log, &log, &size);
  const char *text = status ? "(no output)" : log;
  kiln_status_free(status);
  size_t end = 0;
  for (int lines = 0; text[end] && lines < KILN_LINK_ERROR_LINES; ++end) {
    lines += text[end] == '\n';
  }
  status = KILN_STATUS(INVALID_ARGUMENT, "linking the kernels: %s failed (exit %d):\n%.*s", tool,
                       exit_code, (int)end, text);
  kiln_allocator_free(allocator, log);
  return status;
}

/* Runs argv; a tool of another architecture's binutils that cannot be
 * started names the Debian package to install. */
static kiln_status_t run_tool(kiln_allocator_t allocator, const linkdir_t *d, char *const *argv) {
  int exit_code = 0;
  kiln_status_t status = kiln_codegen_spawn("linking the kernels", argv, d->log, &exit_code);
  if (status && d->prefix[0]) {
    char package[80];
    snprintf(package, sizeof(package), "binutils-%.*s", (int)strlen(d->prefix) - 1, d->prefix);
    for (char *c = package; *c; ++c) {
      *c = *c == '_' ? '-' : *c;
    }
    kiln_status_free(status);
    return KILN_STATUS(UNAVAILABLE,
                       "linking the kernels for %.*s needs GNU binutils for it: %s was not found; "
                       "install Debian's %s (apt-get install %s; scripts/install-deps.sh does)",
                       (int)strlen(d->prefix) - 1, d->prefix, argv[0], package, package);
  }
  if (!status && exit_code != 0) {
    status = tool_error(allocator, d, argv[0], exit_code);
  }
  return status;
}

/* The assembly that puts the model's bytes in the library's read-only
 * data as the exported __kiln_model, of their size (% instead of @: the
 * form every GNU assembler takes), on a stack that is not executable. */
static kiln_status_t write_model_asm(kiln_allocator_t allocator, const linkdir_t *d) {
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, allocator);
  kiln_status_t status = kiln_strbuf_appendf(&text,
                                             "\t.section .note.GNU-stack,\"\",%%progbits\n"
                                             "\t.section .rodata.kiln_model,\"a\",%%progbits\n"
                                             "\t.globl %s\n"
                                             "\t.type %s, %%object\n"
                                             "\t.balign 64\n"
                                             "%s:\n"
                                             "\t.incbin \"",
                                             KILN_RUNTIME_MODEL_SYMBOL, KILN_RUNTIME_MODEL_SYMBOL,
                                             KILN_RUNTIME_MODEL_SYMBOL);
  for (const char *c = d->model; *c && !status; ++c) {
    status = *c == '"' || *c == '\\' ? kiln_strbuf_append_char(&text, '\\') : KILN_OK;
    if (!status) {
      status = kiln_strbuf_append_char(&text, *c);
    }
  }
  if (!status) {
    status = kiln_strbuf_appendf(&text, "\"\n\t.size %s, . - %s\n", KILN_RUNTIME_MODEL_SYMBOL,
                                 KILN_RUNTIME_MODEL_SYMBOL);
  }
  if (!status) {
    status = kiln_file_write_all(d->model_asm, kiln_strbuf_c_str(&text), kiln_strbuf_length(&text));
  }
  kiln_strbuf_deinitialize(&text);
  return status;
}

/* $CC -shared -o lib.so kernels.o [model.s] -lm */
static kiln_status_t link_host(kiln_allocator_t allocator, const linkdir_t *d, bool with_model) {
  const char *cc = getenv("CC");
  char *compiler = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(allocator, cc && *cc ? cc : "cc", &compiler));
  char *argv[40];
  int argc = 0;
  char *save = NULL; /* strtok_r: builds run on several threads */
  for (char *word = strtok_r(compiler, " \t", &save); word && argc < 24;
       word = strtok_r(NULL, " \t", &save)) {
    argv[argc++] = word;
  }
  const char *tail[] = {"-shared",
                        "-o",
                        d->library,
                        d->object,
                        with_model ? d->model_asm : "-lm",
                        with_model ? "-lm" : NULL,
                        NULL};
  memcpy(&argv[argc], tail, sizeof(tail));
  kiln_status_t status = run_tool(allocator, d, argv);
  kiln_allocator_free(allocator, compiler);
  return status;
}

/* <prefix>as model.s, then <prefix>ld -shared; -lm when that
 * architecture's libm is installed (libc6-dev-<arch>-cross), else the
 * library takes libm's functions from the process that loads it, as a
 * kiln runtime links libm. */
static kiln_status_t link_cross(kiln_allocator_t allocator, linkdir_t *d, bool with_model) {
  char as[96], ld[96], libm[160], o[] = "-o", shared[] = "-shared", lm[] = "-lm";
  snprintf(as, sizeof(as), "%sas", d->prefix);
  snprintf(ld, sizeof(ld), "%sld", d->prefix);
  if (with_model) {
    char *argv[] = {as, o, d->model_obj, d->model_asm, NULL};
    KILN_RETURN_IF_ERROR(run_tool(allocator, d, argv));
  }
  snprintf(libm, sizeof(libm), "/usr/%.*s/lib/libm.so", (int)strlen(d->prefix) - 1, d->prefix);
  char *argv[] = {ld, shared, o, d->library, d->object, NULL, NULL, NULL};
  int argc = 5;
  if (with_model) {
    argv[argc++] = d->model_obj;
  }
  if (kiln_file_exists(libm)) {
    argv[argc++] = lm;
  }
  return run_tool(allocator, d, argv);
}

/* The library as a module: loaded, or unloaded with its bytes. */
static kiln_status_t finish(kiln_allocator_t allocator, const linkdir_t *d, const char *triple,
                            bool load, kiln_runtime_module_t **out_module) {
  if (load && !d->prefix[0]) {
    return kiln_codegen_load_library(allocator, d->library, out_module);
  }
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, d->library, &bytes, &size));
  char name[300], why[400];
  snprintf(name, sizeof(name), "kiln_module.so (%.200s)", triple ? triple : kiln_cpu_host_arch());
  if (d->prefix[0]) {
    snprintf(why, sizeof(why),
             "it was built for %.200s, and this machine is %s: save it and run it there", triple,
             kiln_cpu_host_arch());
  } else {
    snprintf(why, sizeof(why), "it was linked to be saved, not run");
  }
  kiln_status_t status =
      kiln_runtime_module_create_unloaded(allocator, name, why, bytes, size, out_module);
  kiln_allocator_free(allocator, bytes);
  return status;
}

kiln_status_t kiln_codegen_link(kiln_allocator_t allocator, const char *triple, const void *object,
                                size_t object_size, const void *model, size_t model_size, bool load,
                                kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  if (!object || object_size == 0 || (!model && model_size > 0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "linking the kernels: no object file");
  }
  linkdir_t d;
  memset(&d, 0, sizeof(d));
  size_t arch = triple ? strcspn(triple, "-") : 0;
  const char *host = kiln_cpu_host_arch();
  if (triple && !(arch == strlen(host) && strncmp(triple, host, arch) == 0)) {
    snprintf(d.prefix, sizeof(d.prefix), "%.*s-linux-gnu-", (int)(arch < 40 ? arch : 40), triple);
  }
  KILN_RETURN_IF_ERROR(
      kiln_codegen_temp_dir("linking the kernels", "kiln-link", d.dir, sizeof(d.dir)));
  snprintf(d.object, sizeof(d.object), "%s/kernels.o", d.dir);
  snprintf(d.model, sizeof(d.model), "%s/model.kiln", d.dir);
  snprintf(d.model_asm, sizeof(d.model_asm), "%s/model.s", d.dir);
  snprintf(d.model_obj, sizeof(d.model_obj), "%s/model.o", d.dir);
  snprintf(d.library, sizeof(d.library), "%s/kiln_module.so", d.dir);
  snprintf(d.log, sizeof(d.log), "%s/link.log", d.dir);
  bool with_model = model_size > 0;
  kiln_status_t status = kiln_file_write_all(d.object, object, object_size);
  if (!status && with_model) {
    status = kiln_file_write_all(d.model, model, model_size);
  }
  if (!status && with_model) {
    status = write_model_asm(allocator, &d);
  }
  if (!status) {
    status =
        d.prefix[0] ? link_cross(allocator, &d, with_model) : link_host(allocator, &d, with_model);
  }
  if (!status) {
    status = finish(allocator, &d, triple, load, out_module);
  }
  if (!status) {
    status = kiln_runtime_module_set_object(*out_module, object, object_size);
  }
  if (status) {
    kiln_runtime_module_release(*out_module);
    *out_module = NULL;
  }
  const char *files[] = {d.object, d.model, d.model_asm, d.model_obj, d.library, d.log};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
    unlink(files[i]);
  }
  rmdir(d.dir);
  return status;
}
