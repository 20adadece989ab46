/*
 * One-file models and cross-compilation end to end (kiln/compiler.h's
 * kiln_compiled_export_library, kiln/runtime.h's loaders): the mlp
 * workload compiled by each backend into one library, run from it with the
 * same output as from its folder; that library cut short at many lengths
 * and its embedded model, symbol table and target record edited by hand,
 * each refused with a message, never a crash; and a build for aarch64
 * (`llvm -mtriple=aarch64-linux-gnu`): an AArch64 ELF library with every
 * kernel, its argument counts, its target record and the embedded model
 * exported, which this machine refuses to load by its target record. The
 * cross build needs binutils-aarch64-linux-gnu and is skipped without it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "codegen/target_record.h"
#include "compiler/build.h"
#include "kiln/module.h"
#include "kiln_test.h"
#include "runtime/elf.h"

static bool has_llvm(void) {
  return strncmp(kiln_compiler_default_target(), "llvm", 4) == 0;
}

static const char *default_target(void) {
  return has_llvm() ? "llvm" : "c -march=native";
}

static kiln_compiled_t *compile_mlp(const char *target) {
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled));
  return compiled;
}

/* Runs input 0 filled with a fixed ramp; output 0's copy. */
static kiln_tensor_t *run_once(kiln_graph_executor_t *gx) {
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_OK(kiln_graph_executor_input_info(gx, 0, &info));
  kiln_tensor_t *input = NULL, *output = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), info.dtype, info.ndim, info.shape, &input));
  float *data = kiln_tensor_data(input);
  for (int64_t i = 0; i < kiln_tensor_element_count(input); ++i) {
    data[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  }
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(input)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &output));
  kiln_tensor_release(input);
  return output;
}

static kiln_tensor_t *load_and_run(const char *path) {
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_load(kiln_allocator_system(), path, &gx));
  kiln_tensor_t *output = run_once(gx);
  kiln_graph_executor_destroy(gx);
  return output;
}

static void read_bytes(const char *path, unsigned char **out_bytes, size_t *out_size) {
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(), path, (void **)out_bytes, out_size));
}

/* A temporary folder with the compiled model saved both ways:
 * DIR/{graph.json,lib.so,params.bin} and DIR/model.so. */
typedef struct saved_t {
  char *dir;
  char *file;
} saved_t;

static saved_t save_both(const kiln_compiled_t *compiled) {
  saved_t s = {kiln_test_make_temp_dir(), NULL};
  s.file = kiln_test_path_join(s.dir, "model.so");
  KILN_ASSERT_OK(kiln_compiled_save(compiled, s.dir));
  KILN_ASSERT_OK(kiln_compiled_export_library(compiled, s.file));
  return s;
}

static void saved_done(saved_t *s) {
  kiln_test_remove_dir(s->dir);
  free(s->dir);
  free(s->file);
}

static void check_matches_folder(const char *target) {
  kiln_compiled_t *compiled = compile_mlp(target);
  saved_t s = save_both(compiled);
  kiln_tensor_t *from_folder = load_and_run(s.dir), *from_file = load_and_run(s.file);
  assert_int_equal(kiln_tensor_byte_size(from_file), kiln_tensor_byte_size(from_folder));
  assert_memory_equal(kiln_tensor_data(from_file), kiln_tensor_data(from_folder),
                      kiln_tensor_byte_size(from_folder));
  kiln_tensor_release(from_folder);
  kiln_tensor_release(from_file);

  /* the embedded model is the folder's graph.json and params */
  char *json = NULL;
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_OK(kiln_runtime_model_file_read(kiln_allocator_system(), s.file, &json, &params));
  assert_string_equal(json, kiln_compiled_graph_json(compiled));
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  assert_int_equal(kiln_runtime_params_count(params), stats.num_params);
  free(json);
  kiln_runtime_params_destroy(params);

  /* the one file is a library of the kernels too; the folder's lib.so holds no model */
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_load(kiln_allocator_system(), s.file, &module));
  kiln_runtime_module_release(module);
  char *lib = kiln_test_path_join(s.dir, "lib.so");
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_load(kiln_allocator_system(), lib, &gx), NOT_FOUND,
                     "lib.so holds no model (no __kiln_model symbol)");
  free(lib);
  saved_done(&s);
  kiln_compiled_destroy(compiled);
}

static void test_matches_folder(void **state) {
  (void)state;
  check_matches_folder("c -march=native");
  if (has_llvm()) {
    check_matches_folder("llvm");
  }
}

/* Writes `size` bytes to `path` and loads it: the status. */
static kiln_status_t load_bytes(const char *path, const unsigned char *bytes, size_t size) {
  kiln_test_write_file(path, bytes, size);
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = kiln_graph_executor_load(kiln_allocator_system(), path, &gx);
  assert_true(status != KILN_OK || gx != NULL);
  kiln_graph_executor_destroy(gx);
  return status;
}

static void test_cut_short_refused(void **state) {
  (void)state;
  kiln_compiled_t *compiled = compile_mlp(default_target());
  saved_t s = save_both(compiled);
  unsigned char *bytes = NULL;
  size_t size = 0;
  read_bytes(s.file, &bytes, &size);
  /* the file's bytes at many lengths, each copy exact (ASan sees a read past it) */
  size_t step = size / 211 + 1;
  for (size_t cut = 0; cut < size; cut += cut < 256 || cut > size - 256 ? 1 : step) {
    unsigned char *part = malloc(cut > 0 ? cut : 1);
    memcpy(part, bytes, cut);
    char *json = NULL;
    kiln_runtime_params_t *params = NULL;
    kiln_status_t status = kiln_runtime_model_file_parse(kiln_allocator_system(), part, cut,
                                                         "model.so", &json, &params);
    if (status == KILN_OK) {
      fail_msg("the model cut to %zu of %zu bytes parses", cut, size);
    }
    kiln_status_free(status);
    assert_null(json);
    assert_null(params);
    free(part);
  }
  /* and loaded from a file so cut: refused before dlopen, or by it */
  char *path = kiln_test_path_join(s.dir, "cut.so");
  const size_t cuts[] = {0, 10, 64, 4096, size / 2, size - 1};
  for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); ++i) {
    kiln_status_t status = load_bytes(path, bytes, cuts[i]);
    assert_true(status != KILN_OK);
    print_message("cut to %zu bytes: %s\n", cuts[i], kiln_status_message(status));
    kiln_status_free(status);
  }
  KILN_ASSERT_STATUS(load_bytes(path, bytes, size - 1), DATA_LOSS, "the file is cut short");
  free(path);
  free(bytes);
  saved_done(&s);
  kiln_compiled_destroy(compiled);
}

static void put_le(unsigned char *at, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) {
    at[i] = (unsigned char)(value >> (8 * i));
  }
}

/* The offset of dynamic symbol `name`'s table entry in the file. */
static size_t symbol_entry(const unsigned char *bytes, size_t size, const char *name) {
  kiln_elf_t elf;
  KILN_ASSERT_OK(kiln_elf_parse(bytes, size, "model.so", &elf));
  for (size_t i = 0; i < elf.num_symbols; ++i) {
    const unsigned char *sym = elf.symbols + i * 24;
    uint32_t at =
        (uint32_t)sym[0] | (uint32_t)sym[1] << 8 | (uint32_t)sym[2] << 16 | (uint32_t)sym[3] << 24;
    if (at < elf.strings_size && strcmp(elf.strings + at, name) == 0) {
      return (size_t)(sym - bytes);
    }
  }
  fail_msg("no symbol %s", name);
  return 0;
}

/* The embedded model's header and data edited by hand: each refused. */
static void test_corrupt_model_refused(void **state) {
  (void)state;
  kiln_compiled_t *compiled = compile_mlp(default_target());
  saved_t s = save_both(compiled);
  unsigned char *bytes = NULL, *b = NULL;
  size_t size = 0;
  read_bytes(s.file, &bytes, &size);
  b = malloc(size);
  const unsigned char *at = memmem(bytes, size, "KILNMDL\0\1\0\0\0\0\0\0\0", 16);
  assert_non_null(at);
  size_t m = (size_t)(at - bytes), graph_size = strlen(kiln_compiled_graph_json(compiled));
  char *path = kiln_test_path_join(s.dir, "edited.so");

  memcpy(b, bytes, size);
  put_le(b + m + 16, (uint64_t)1 << 40, 8);
  KILN_ASSERT_STATUS(
      load_bytes(path, b, size), DATA_LOSS,
      "truncated: graph.json's 1099511627776 bytes run past the embedded model's end");
  uint64_t params_size = 0;
  for (int i = 7; i >= 0; --i) {
    params_size = params_size << 8 | bytes[m + 24 + i];
  }
  memcpy(b, bytes, size);
  put_le(b + m + 24, params_size + 1, 8);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), DATA_LOSS, "truncated: params.bin's");
  memcpy(b, bytes, size);
  put_le(b + m + 8, 9, 4);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), UNIMPLEMENTED, "embedded model version 9");
  memcpy(b, bytes, size);
  b[m + 32] = 'x'; /* graph.json's '{' */
  KILN_ASSERT_STATUS(load_bytes(path, b, size), INVALID_ARGUMENT, "edited.so(graph.json)");
  memcpy(b, bytes, size);
  b[m + 32 + graph_size] = 'X'; /* params.bin's magic */
  KILN_ASSERT_STATUS(load_bytes(path, b, size), INVALID_ARGUMENT,
                     "edited.so(params.bin): not a kiln params file");
  memcpy(b, bytes, size); /* the symbol's size past its section */
  put_le(b + symbol_entry(bytes, size, KILN_RUNTIME_MODEL_SYMBOL) + 16, size, 8);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), INVALID_ARGUMENT, "symbol __kiln_model (");
  KILN_ASSERT_OK(load_bytes(path, bytes, size));
  free(path);
  free(b);
  free(bytes);
  saved_done(&s);
  kiln_compiled_destroy(compiled);
}

/* Replaces the first `from` in `b` with `to` (as long). */
static void patch(unsigned char *b, size_t size, const char *from, const char *to) {
  assert_int_equal(strlen(from), strlen(to));
  unsigned char *at = memmem(b, size, from, strlen(from));
  assert_non_null(at);
  memcpy(at, to, strlen(to));
}

/* A one-file model for the x86-64-v2 level, its target record edited by
 * hand: every edit refused before any of its code is mapped to run. */
static void check_record(const char *target) {
  kiln_compiled_t *compiled = compile_mlp(target);
  saved_t s = save_both(compiled);
  unsigned char *bytes = NULL, *b = NULL;
  size_t size = 0;
  read_bytes(s.file, &bytes, &size);
  b = malloc(size);
  char *path = kiln_test_path_join(s.dir, "edited.so");
  const char *list = "sse3,ssse3,cx16,sse4.1,sse4.2,popcnt";
  char lacked[64], unknown[64]; /* as long as `list`, the rest spaces (the list ends there) */
  snprintf(lacked, sizeof(lacked), "%-*s", (int)strlen(list), "avx512fp16");
  snprintf(unknown, sizeof(unknown), "%-*s", (int)strlen(list), "warp9");

  /* a CPU without SSE4.2 (as if) refuses the library as it was built */
  setenv("KILN_CPU_DISABLE", "sse4.2", 1);
  KILN_ASSERT_STATUS(load_bytes(path, bytes, size), FAILED_PRECONDITION,
                     "edited.so was compiled for CPU x86-64-v2 and needs sse4.2, which this CPU "
                     "lacks");
  /* a feature this CPU lacks written into the record */
  setenv("KILN_CPU_DISABLE", "avx512fp16", 1);
  memcpy(b, bytes, size);
  patch(b, size, list, lacked);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), FAILED_PRECONDITION,
                     "needs avx512fp16, which this CPU lacks");
  unsetenv("KILN_CPU_DISABLE");
  memcpy(b, bytes, size);
  patch(b, size, "triple=x86_64", "triple=riscv6");
  KILN_ASSERT_STATUS(load_bytes(path, b, size), FAILED_PRECONDITION,
                     "edited.so was compiled for riscv6");
  memcpy(b, bytes, size);
  patch(b, size, list, unknown);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), INVALID_ARGUMENT,
                     "needs CPU feature \"warp9\", which this kiln cannot check");
  /* the ELF machine edited: the record fits, the machine does not */
  memcpy(b, bytes, size);
  put_le(b + 18, 183, 2);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), FAILED_PRECONDITION,
                     "edited.so is a library for aarch64 (ELF machine 183); this machine is");
  /* the record's string not ended inside its symbol */
  memcpy(b, bytes, size);
  size_t entry = symbol_entry(bytes, size, "__kiln_target");
  put_le(b + entry + 16, 4, 8);
  KILN_ASSERT_STATUS(load_bytes(path, b, size), INVALID_ARGUMENT,
                     "its target record (__kiln_target, 4 bytes) is not a string");
  KILN_ASSERT_OK(load_bytes(path, bytes, size));
  free(path);
  free(b);
  free(bytes);
  saved_done(&s);
  kiln_compiled_destroy(compiled);
}

static void test_target_record_refused(void **state) {
  (void)state;
  check_record("c -march=x86-64-v2");
  if (has_llvm()) {
    check_record("llvm -mcpu=x86-64-v2");
  }
}

static void test_jit_cannot_export(void **state) {
  (void)state;
  if (!has_llvm()) {
    KILN_SKIP("kiln was built without LLVM: no JIT target");
  }
  kiln_compiled_t *compiled = compile_mlp("llvm -jit");
  KILN_ASSERT_STATUS(kiln_compiled_export_library(compiled, "/tmp/kiln-never.so"),
                     FAILED_PRECONDITION, "target \"llvm -jit\" built the kernels in memory");
  kiln_compiled_destroy(compiled);
}

/* ---- cross-compilation ---- */

static bool on_path(const char *program) {
  const char *path = getenv("PATH");
  char candidate[1024];
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)n, p, program);
    if (n > 0 && access(candidate, X_OK) == 0) {
      return true;
    }
    p += n + (p[n] == ':');
  }
  return false;
}

/* The file at `path` is an AArch64 ELF shared library exporting every
 * kernel of `compiled`, its argument count and the target record (and
 * the embedded model when `one_file`). */
static void check_aarch64_library(const kiln_compiled_t *compiled, const char *path,
                                  bool one_file) {
  unsigned char *bytes = NULL;
  size_t size = 0;
  read_bytes(path, &bytes, &size);
  assert_true(size > 64);
  assert_memory_equal(bytes, "\177ELF\2\1\1", 7);    /* 64-bit, little-endian, version 1 */
  assert_int_equal(bytes[16] | bytes[17] << 8, 3);   /* ET_DYN */
  assert_int_equal(bytes[18] | bytes[19] << 8, 183); /* EM_AARCH64 */
  kiln_elf_t elf;
  KILN_ASSERT_OK(kiln_elf_parse(bytes, size, path, &elf));
  assert_int_equal(elf.machine, 183);
  const void *symbol = NULL;
  size_t length = 0;
  for (int i = 0; i < compiled->graph.num_funcs; ++i) {
    const char *name = compiled->lowered[i]->name;
    KILN_ASSERT_OK(kiln_elf_symbol(&elf, name, &symbol, &length));
    assert_true(length > 0);
    char count[300];
    snprintf(count, sizeof(count), "%s%s", KILN_RUNTIME_MODULE_NUM_ARGS_PREFIX, name);
    KILN_ASSERT_OK(kiln_elf_symbol(&elf, count, &symbol, &length));
    assert_int_equal(length, 4);
  }
  KILN_ASSERT_OK(kiln_elf_symbol(&elf, "__kiln_target", &symbol, &length));
  print_message("%s: %s\n", path, (const char *)symbol);
  assert_non_null(strstr(symbol, "triple=aarch64-unknown-linux-gnu cpu="));
  kiln_status_t status = kiln_elf_symbol(&elf, KILN_RUNTIME_MODEL_SYMBOL, &symbol, &length);
  if (one_file) {
    KILN_ASSERT_OK(status);
  } else {
    KILN_ASSERT_STATUS(status, NOT_FOUND, "no symbol __kiln_model");
  }
  free(bytes);
}

static void test_cross_compiled_aarch64(void **state) {
  (void)state;
  if (!has_llvm()) {
    KILN_SKIP("kiln was built without LLVM: no cross-compilation");
  }
  if (!on_path("aarch64-linux-gnu-ld") || !on_path("aarch64-linux-gnu-as")) {
    KILN_SKIP("aarch64-linux-gnu-ld is not installed (binutils-aarch64-linux-gnu): the "
              "aarch64 build was not linked");
  }
  kiln_compiled_t *compiled = compile_mlp("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_STATUS(kiln_compiled_create_executor(compiled, &gx), FAILED_PRECONDITION,
                     "was compiled for aarch64-linux-gnu; this machine is");
  saved_t s = save_both(compiled);
  char *lib = kiln_test_path_join(s.dir, "lib.so");
  check_aarch64_library(compiled, lib, false);
  check_aarch64_library(compiled, s.file, true);
  /* the embedded model reads on any machine; loading is refused by the record */
  char *json = NULL;
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_OK(kiln_runtime_model_file_read(kiln_allocator_system(), s.file, &json, &params));
  assert_string_equal(json, kiln_compiled_graph_json(compiled));
  free(json);
  kiln_runtime_params_destroy(params);
  char expected[700];
  snprintf(expected, sizeof(expected),
           "%s was compiled for aarch64-unknown-linux-gnu; this machine is %s", s.file,
           kiln_elf_machine_name(kiln_elf_host_machine()));
  KILN_ASSERT_STATUS(kiln_graph_executor_load(kiln_allocator_system(), s.file, &gx),
                     FAILED_PRECONDITION, expected);
  KILN_ASSERT_STATUS(kiln_graph_executor_load(kiln_allocator_system(), s.dir, &gx),
                     FAILED_PRECONDITION, "lib.so was compiled for aarch64-unknown-linux-gnu");
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_runtime_module_load(kiln_allocator_system(), lib, &module),
                     FAILED_PRECONDITION, "was compiled for aarch64");
  assert_null(module);
  free(lib);
  saved_done(&s);
  kiln_compiled_destroy(compiled);
}

static void expect_compile_error(const char *target, kiln_status_code_t code, const char *message) {
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  kiln_compiled_t *compiled = NULL;
  kiln_status_t status = kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled);
  kiln_test_assert_status(status, code, message, target, __FILE__, __LINE__);
  assert_null(compiled);
}

static void test_cross_errors(void **state) {
  (void)state;
  expect_compile_error("c -mtriple=aarch64-linux-gnu", KILN_STATUS_CODE_INVALID_ARGUMENT,
                       "c backend: -mtriple is the llvm backend's option");
  if (!has_llvm()) {
    KILN_SKIP("kiln was built without LLVM: no cross-compilation");
  }
  expect_compile_error("llvm -mtriple=foo-linux-gnu", KILN_STATUS_CODE_INVALID_ARGUMENT,
                       "llvm backend: -mtriple=foo-linux-gnu: unknown architecture \"foo\"");
  expect_compile_error("llvm -mtriple=riscv64-linux-gnu", KILN_STATUS_CODE_INVALID_ARGUMENT,
                       "kiln does not build for riscv64 (it builds for x86_64-linux-gnu and "
                       "aarch64-linux-gnu)");
  expect_compile_error("llvm -mtriple=aarch64-apple-darwin", KILN_STATUS_CODE_INVALID_ARGUMENT,
                       "kiln builds ELF shared libraries for Linux");
  expect_compile_error("llvm -jit -mtriple=aarch64-linux-gnu", KILN_STATUS_CODE_INVALID_ARGUMENT,
                       "-jit runs the code in this process");
  expect_compile_error("llvm -mtriple=aarch64-linux-gnu -mcpu=pentium",
                       KILN_STATUS_CODE_INVALID_ARGUMENT,
                       "'pentium' is not a recognized processor");
  /* no binutils for aarch64 on the PATH: the package to install, named */
  char *saved = strdup(getenv("PATH") ? getenv("PATH") : "");
  char *empty = kiln_test_make_temp_dir();
  setenv("PATH", empty, 1);
  expect_compile_error("llvm -mtriple=aarch64-linux-gnu", KILN_STATUS_CODE_UNAVAILABLE,
                       "linking the kernels for aarch64-linux-gnu needs GNU binutils for it: "
                       "aarch64-linux-gnu-ld was not found; install Debian's "
                       "binutils-aarch64-linux-gnu");
  setenv("PATH", saved, 1);
  rmdir(empty);
  free(empty);
  free(saved);
}

/* The schedules' vector width follows the target's CPU, never the host's
 * for another one. */
static void test_vector_width(void **state) {
  (void)state;
  const struct {
    const char *target;
    int bits;
  } cases[] = {
      {"llvm", 0},
      {"llvm -mcpu=native", 0},
      {"c", 0},
      {"c -march=native", 0},
      {"llvm -mtriple=aarch64-linux-gnu", 128},
      {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", 128},
      {"llvm -mcpu=x86-64", 128},
      {"llvm -mcpu=x86-64-v2", 128},
      {"c -march=x86-64-v2", 128},
      {"llvm -mcpu=x86-64-v3", 256},
      {"llvm -mcpu=x86-64-v4", 512},
      {"llvm -mcpu=x86-64-v2 -mattr=+avx", 256},
      {"llvm -mcpu=x86-64-v4 -mattr=-avx512f", 256},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    int bits = -1;
    KILN_ASSERT_OK(kiln_codegen_target_vector_bits(cases[i].target, &bits));
    if (bits != cases[i].bits) {
      fail_msg("%s: %d vector bits, expected %d", cases[i].target, bits, cases[i].bits);
    }
  }
  int bits = 0;
  KILN_ASSERT_STATUS(kiln_codegen_target_vector_bits("llvm -mcpu=nosuch", &bits), INVALID_ARGUMENT,
                     "CPU \"nosuch\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matches_folder),        cmocka_unit_test(test_cut_short_refused),
      cmocka_unit_test(test_corrupt_model_refused), cmocka_unit_test(test_target_record_refused),
      cmocka_unit_test(test_jit_cannot_export),     cmocka_unit_test(test_cross_compiled_aarch64),
      cmocka_unit_test(test_cross_errors),          cmocka_unit_test(test_vector_width),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
