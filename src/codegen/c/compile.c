/*
 * Compiling a C file into a loaded module, and the C target; see
 * codegen_c.h.
 *
 * The file goes to a fresh directory made with mkdtemp under $TMPDIR (else
 * /tmp); the compiler runs through posix_spawnp with an argument vector (no
 * shell, so option words reach it exactly), its output into a log file in
 * the same directory (codegen/toolchain.h). The compiler makes an object
 * file (-c), which kiln_codegen_link links into the library and loads
 * (dlopen keeps it mapped); the source, the library's bytes (so the module
 * can be saved as a build's lib.so) and the object file (so the kernels
 * can be linked again into a one-file model) are kept in the module, and
 * the directory removed.
 * On failure the source stays where it is, for the user to look at, and the
 * status quotes the compiler's first lines.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "codegen/c/codegen_c.h"
#include "codegen/target_record.h"
#include "codegen/toolchain.h"
#include "runtime/cpu_features.h"

#define KILN_CG_MAX_ARGS 64
/* Lines of the compiler's output a failure quotes. */
#define KILN_CG_ERROR_LINES 12

typedef struct workdir_t {
  char dir[512];
  char source[600];
  char object[600];
  char log[600];
} workdir_t;

static kiln_status_t make_workdir(workdir_t *w) {
  KILN_RETURN_IF_ERROR(kiln_codegen_temp_dir("c backend", "kiln-c", w->dir, sizeof(w->dir)));
  snprintf(w->source, sizeof(w->source), "%s/kiln_module.c", w->dir);
  snprintf(w->object, sizeof(w->object), "%s/kiln_module.o", w->dir);
  snprintf(w->log, sizeof(w->log), "%s/cc.log", w->dir);
  return KILN_OK;
}

/* Splits `text` (a copy the caller owns) into words appended to argv. */
static int split_words(char *text, char **argv, int argc, int skip_chunk) {
  char *save = NULL; /* strtok_r: builds run on several threads */
  for (char *word = strtok_r(text, " \t", &save); word && argc < KILN_CG_MAX_ARGS - 8;
       word = strtok_r(NULL, " \t", &save)) {
    if (!(skip_chunk && strncmp(word, "chunk=", 6) == 0)) {
      argv[argc++] = word;
    }
  }
  return argc;
}

static kiln_status_t run_compiler(kiln_allocator_t allocator, const workdir_t *w,
                                  const char *options, int *out_exit) {
  const char *cc = getenv("CC");
  char *cc_copy = NULL, *options_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(allocator, cc && *cc ? cc : "cc", &cc_copy));
  kiln_status_t status = kiln_allocator_strdup(allocator, options, &options_copy);
  char *argv[KILN_CG_MAX_ARGS];
  int argc = 0;
  if (!status) {
    argc = split_words(cc_copy, argv, 0, 0);
    static const char *const defaults[] = {"-O2", "-fPIC", "-fwrapv", "-std=gnu11"};
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); ++i) {
      memcpy(&argv[argc++], &defaults[i], sizeof(char *));
    }
    argc = split_words(options_copy, argv, argc, 1);
    const char *tail[] = {"-c", "-o", w->object, w->source, NULL};
    memcpy(&argv[argc], tail, sizeof(tail));
    status = kiln_codegen_spawn("c backend", argv, w->log, out_exit);
  }
  kiln_allocator_free(allocator, cc_copy);
  kiln_allocator_free(allocator, options_copy);
  return status;
}

/* The status of a failed compilation: the log's first lines, the source. */
static kiln_status_t compile_error(kiln_allocator_t allocator, const workdir_t *w, int exit_code) {
  void *log = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, w->log, &log, &size);
  const char *text = status ? "(no compiler output)" : log;
  kiln_status_free(status);
  size_t end = 0;
  for (int lines = 0; text[end] && lines < KILN_CG_ERROR_LINES; ++end) {
    lines += text[end] == '\n';
  }
  status = KILN_STATUS(INVALID_ARGUMENT,
                       "c backend: the C compiler failed (exit %d):\n%.*s\nthe source is kept "
                       "at %s",
                       exit_code, (int)end, text, w->source);
  kiln_allocator_free(allocator, log);
  unlink(w->log);
  return status;
}

static void remove_workdir(const workdir_t *w) {
  unlink(w->source);
  unlink(w->object);
  unlink(w->log);
  rmdir(w->dir);
}

kiln_status_t kiln_codegen_c_compile(kiln_allocator_t allocator, const char *source,
                                     const char *options, kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  workdir_t w;
  KILN_RETURN_IF_ERROR(make_workdir(&w));
  int exit_code = 0;
  kiln_status_t status = kiln_file_write_all(w.source, source, strlen(source));
  if (!status) {
    status = run_compiler(allocator, &w, options ? options : "", &exit_code);
  }
  if (!status && exit_code != 0) {
    return compile_error(allocator, &w, exit_code); /* keeps the source */
  }
  kiln_runtime_module_t *module = NULL;
  void *object = NULL;
  size_t object_size = 0;
  if (!status) {
    status = kiln_file_read_all(allocator, w.object, &object, &object_size);
  }
  if (!status) {
    status = kiln_codegen_link(allocator, NULL, object, object_size, NULL, 0, true, &module);
  }
  kiln_allocator_free(allocator, object);
  if (!status) {
    status = kiln_runtime_module_set_source(module, "c", source);
  }
  remove_workdir(&w);
  if (status) {
    kiln_runtime_module_release(module);
    return status;
  }
  *out_module = module;
  return KILN_OK;
}

/* `const char __kiln_target[]`: the library's target record
 * (codegen/target_record.h) for the module loader's check, appended to the
 * source. */
static kiln_status_t append_target(kiln_allocator_t allocator, const char *options,
                                   char **inout_source) {
  kiln_strbuf_t target, text;
  kiln_strbuf_initialize(&target, allocator);
  kiln_strbuf_initialize(&text, allocator);
  kiln_status_t status = kiln_strbuf_appendf(&target, "c %s", options ? options : "");
  if (!status) {
    status = kiln_strbuf_appendf(&text, "%s\nconst char %s[] = \"", *inout_source,
                                 KILN_TARGET_RECORD_SYMBOL);
  }
  if (!status) {
    status = kiln_codegen_target_record_of(kiln_strbuf_c_str(&target), &text);
  }
  if (!status) {
    status = kiln_strbuf_append(&text, "\";\n");
  }
  kiln_strbuf_deinitialize(&target);
  if (!status) {
    kiln_allocator_free(allocator, *inout_source);
    status = kiln_strbuf_take(&text, inout_source);
  }
  kiln_strbuf_deinitialize(&text);
  return status;
}

static atomic_flag baseline_warned = ATOMIC_FLAG_INIT;

/* Once per process: c without -march= builds for baseline x86-64, whose
 * vectors are SSE2's 4 lanes, where the schedules assume the host's. */
static void warn_baseline(const char *options) {
  if (options && strstr(options, "-march=")) {
    return;
  }
  if (!atomic_flag_test_and_set(&baseline_warned)) {
    KILN_LOG_WARN("the c target without -march= compiles for baseline x86-64 (SSE2 vectors of "
                  "4 lanes): kernels run about 10 times slower than with -march=native, 40 times "
                  "slower than llvm (docs/codegen-c.md); use \"c -march=native\" or llvm");
  }
}

static kiln_status_t build_c(kiln_allocator_t allocator, const kiln_tir_prim_func_t *const *funcs,
                             int num_funcs, const char *options,
                             kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  if (options && strstr(options, "-mtriple=")) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "c backend: -mtriple is the llvm backend's option: it builds for this "
                       "machine (cross-compile with \"llvm -mtriple=aarch64-linux-gnu\")");
  }
  kiln_codegen_chunk_t chunk = options && strstr(options, "chunk=stride")
                                   ? KILN_CODEGEN_CHUNK_STRIDE
                                   : KILN_CODEGEN_CHUNK_STATIC;
  char *source = NULL;
  warn_baseline(options);
  KILN_RETURN_IF_ERROR(kiln_codegen_c_emit(allocator, funcs, num_funcs, chunk, &source));
  kiln_status_t status = append_target(allocator, options, &source);
  if (!status) {
    status = kiln_codegen_c_compile(allocator, source, options, out_module);
  }
  kiln_allocator_free(allocator, source);
  return status;
}

const kiln_codegen_target_t kiln_codegen_target_c = {"c", build_c, ""};
