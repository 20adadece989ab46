/*
 * Tests of the CPU feature table and the target record check
 * (runtime/cpu_features.h), and of the records the code generators write
 * (codegen/target_record.h): a named CPU's implied features, -mattr,
 * the host's features, an unknown CPU; and a library whose record this CPU
 * cannot satisfy, refused by the module loader with the feature named.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tir/tir_fixture.h"
#include "base/strbuf.h"
#include "codegen/target.h"
#include "codegen/target_record.h"
#include "kiln/module.h"
#include "kiln_test.h"
#include "runtime/cpu_features.h"

/* The first feature of the table this CPU lacks (the tests set
 * KILN_CPU_DISABLE to make sure there is one), or NULL. */
static const char *missing_feature(void) {
  const char *f = NULL;
  for (int i = 0; (f = kiln_cpu_feature_name(i)) != NULL; ++i) {
    if (!kiln_cpu_feature_present(f)) {
      return f;
    }
  }
  return NULL;
}

static void test_records_checked(void **state) {
  (void)state;
  char record[256];
  snprintf(record, sizeof(record),
           "triple=%s-pc-linux-gnu cpu=x86-64 features=", kiln_cpu_host_arch());
  KILN_ASSERT_OK(kiln_cpu_target_check(record, "lib.so"));
  KILN_ASSERT_STATUS(kiln_cpu_target_check("triple=riscv64-linux cpu=x features=", "lib.so"),
                     FAILED_PRECONDITION, "lib.so was compiled for riscv64-linux; this machine is");
  snprintf(record, sizeof(record), "triple=%s-linux cpu=y features=warp9", kiln_cpu_host_arch());
  KILN_ASSERT_STATUS(kiln_cpu_target_check(record, "lib.so"), INVALID_ARGUMENT,
                     "lib.so needs CPU feature \"warp9\", which this kiln cannot check");
  KILN_ASSERT_STATUS(kiln_cpu_target_check("cpu=x features=", "lib.so"), INVALID_ARGUMENT,
                     "has no triple=");
  snprintf(record, sizeof(record), "triple=%s-linux", kiln_cpu_host_arch());
  KILN_ASSERT_STATUS(kiln_cpu_target_check(record, "lib.so"), INVALID_ARGUMENT,
                     "needs cpu= and features=");
  assert_true(kiln_cpu_feature_known("avx512f"));
  assert_false(kiln_cpu_feature_known("avx512"));
  assert_false(kiln_cpu_feature_present("warp9"));
}

/* A feature the host lacks is refused by name. */
static void test_missing_feature_refused(void **state) {
  (void)state;
  setenv("KILN_CPU_DISABLE", "sse3,avx512f", 1); /* this CPU as if it lacked them */
  const char *missing = missing_feature();
  assert_non_null(missing);
  char record[256], expected[256];
  snprintf(record, sizeof(record), "triple=%s-linux cpu=future features=avx,%s",
           kiln_cpu_host_arch(), missing);
  snprintf(expected, sizeof(expected), "compiled for CPU future and needs %s, which this CPU lacks",
           missing);
  KILN_ASSERT_STATUS(kiln_cpu_target_check(record, "lib.so"), FAILED_PRECONDITION, expected);
  unsetenv("KILN_CPU_DISABLE");
}

static void assert_record(const char *cpu, const char *mattr, const char *expected) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_codegen_target_record("x86_64-pc-linux-gnu", cpu, "host", mattr, &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), expected);
  kiln_strbuf_deinitialize(&sb);
}

static void test_records_written(void **state) {
  (void)state;
  setenv("KILN_CPU_DISABLE", "sse3,avx512f", 1);
  assert_record("x86-64", NULL, "triple=x86_64-pc-linux-gnu cpu=x86-64 features=");
  assert_record("x86-64-v3", "-fma,+avx512f",
                "triple=x86_64-pc-linux-gnu cpu=x86-64-v3 features=sse3,ssse3,cx16,sse4.1,sse4.2,"
                "movbe,popcnt,avx,f16c,bmi,avx2,bmi2,avx512f,lzcnt");
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_codegen_target_record("x86_64-pc-linux-gnu", NULL, "host", NULL, &sb));
  assert_non_null(strstr(kiln_strbuf_c_str(&sb), "cpu=host features="));
  KILN_ASSERT_OK(kiln_cpu_target_check(kiln_strbuf_c_str(&sb), "the host's record"));
  assert_null(strstr(kiln_strbuf_c_str(&sb), "features=sse3,")); /* disabled: not recorded */
  kiln_strbuf_deinitialize(&sb);
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_STATUS(kiln_codegen_target_record("x86_64-pc-linux-gnu", "pentium9", NULL, NULL, &sb),
                     INVALID_ARGUMENT, "CPU \"pentium9\": kiln does not know which features");
  kiln_strbuf_deinitialize(&sb);
  unsetenv("KILN_CPU_DISABLE");
}

/* func(A) { A[0] = 1 }: the smallest library. */
static const kiln_tir_prim_func_t *one_func(kiln_tir_builder_t *b) {
  int64_t n = 1;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_expr_t *zero = kiln_tir_b_int(b, KILN_DTYPE_INT32, 0);
  const kiln_tir_stmt_t *body =
      kiln_tir_b_store(b, a, kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 1), 1, &zero);
  return kiln_tir_b_func(b, "one", 1, &a, body);
}

/* Both backends, for the x86-64-v2 level (SSE3 to SSE4.2). */
static const char *const v2_targets[] = {"c -march=x86-64-v2",
#ifdef KILN_HAVE_LLVM
                                         "llvm -mcpu=x86-64-v2",
#endif
                                         NULL};

/* Replaces the first `from` in the file at `path` with `to` (as long). */
static void patch_file(const char *path, const char *from, const char *to) {
  FILE *file = fopen(path, "r+b");
  assert_non_null(file);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  char *bytes = malloc((size_t)size);
  rewind(file);
  assert_int_equal(fread(bytes, 1, (size_t)size, file), (size_t)size);
  char *at = memmem(bytes, (size_t)size, from, strlen(from));
  assert_non_null(at);
  fseek(file, at - bytes, SEEK_SET);
  fwrite(to, 1, strlen(to), file);
  fclose(file);
  free(bytes);
}

/* A saved library's record edited by hand: another architecture, then a
 * feature this CPU lacks; the loader refuses both before any code runs. */
static void check_patched(const char *target, const char *from, const char *to,
                          const char *message) {
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = one_func(&f.b);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, &func, 1, &module));
  char path[] = "/tmp/kiln_target_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  KILN_ASSERT_OK(kiln_runtime_module_save(module, path));
  kiln_runtime_module_release(module);
  KILN_ASSERT_OK(kiln_runtime_module_load(kiln_allocator_system(), path, &module));
  kiln_runtime_module_release(module);
  patch_file(path, from, to);
  setenv("KILN_CPU_DISABLE", "sse3,avx512f", 1);
  KILN_ASSERT_STATUS(kiln_runtime_module_load(kiln_allocator_system(), path, &module),
                     FAILED_PRECONDITION, message);
  unsetenv("KILN_CPU_DISABLE");
  assert_null(module);
  unlink(path);
  fixture_done(&f);
}

static void test_loader_refuses(void **state) {
  (void)state;
  for (const char *const *target = v2_targets; *target; ++target) {
    check_patched(*target, "triple=x86_64", "triple=riscv6", "was compiled for riscv6");
    /* sse4.2 -> "sse3  " (padded to the same length): the list ends at the
     * space, and this CPU "lacks" sse3 (KILN_CPU_DISABLE, set for the load
     * only: the build loads its library too) */
    check_patched(*target, "sse4.2", "sse3  ", "and needs sse3, which this CPU lacks");
  }
}

/* A library built here for a CPU this one does not cover (x86-64-v2 while
 * this CPU "lacks" SSE3) builds and can be saved for elsewhere; code that
 * would run it here checks the target string first and is refused. */
static void test_built_for_another_cpu(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = one_func(&f.b);
  setenv("KILN_CPU_DISABLE", "sse3", 1);
  for (const char *const *target = v2_targets; *target; ++target) {
    kiln_runtime_module_t *module = NULL;
    KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), *target, &func, 1, &module));
    kiln_runtime_module_release(module);
    KILN_ASSERT_STATUS(kiln_codegen_target_check_host(*target), FAILED_PRECONDITION,
                       "was compiled for CPU x86-64-v2 and needs sse3, which this CPU lacks");
  }
  KILN_ASSERT_OK(kiln_codegen_target_check_host("c -march=x86-64-v2 -mno-sse3"));
  KILN_ASSERT_OK(kiln_codegen_target_check_host("llvm -jit"));
  KILN_ASSERT_OK(kiln_codegen_target_check_host("c"));
  KILN_ASSERT_STATUS(kiln_codegen_target_check_host("llvm -mcpu=x86-64 -mattr=+sse3"),
                     FAILED_PRECONDITION, "needs sse3");
  KILN_ASSERT_STATUS(kiln_codegen_target_check_host("c -msse3"), FAILED_PRECONDITION, "needs sse3");
  unsetenv("KILN_CPU_DISABLE");
  fixture_done(&f);
}

/* ---- cache sizes ---- */

/* cpu0/cache/index<i> under `root` with its level, type and size files. */
static void make_fake_cache(const char *root, int index, const char *level, const char *type,
                            const char *size) {
  char path[512];
  const char *dirs[] = {"cpu0", "cpu0/cache"};
  for (int i = 0; i < 2; ++i) {
    snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
    (void)mkdir(path, 0700);
  }
  snprintf(path, sizeof(path), "%s/cpu0/cache/index%d", root, index);
  assert_int_equal(mkdir(path, 0700), 0);
  const char *files[][2] = {{"level", level}, {"type", type}, {"size", size}};
  for (int i = 0; i < 3; ++i) {
    snprintf(path, sizeof(path), "%s/cpu0/cache/index%d/%s", root, index, files[i][0]);
    kiln_test_write_file(path, files[i][1], strlen(files[i][1]));
  }
}

static void remove_fake_caches(const char *root, int count) {
  char path[512];
  for (int i = 0; i < count; ++i) {
    snprintf(path, sizeof(path), "%s/cpu0/cache/index%d", root, i);
    kiln_test_remove_dir(path);
  }
  snprintf(path, sizeof(path), "%s/cpu0/cache", root);
  assert_int_equal(rmdir(path), 0);
  snprintf(path, sizeof(path), "%s/cpu0", root);
  assert_int_equal(rmdir(path), 0);
}

static void test_cache_sizes(void **state) {
  (void)state;
  char *root = kiln_test_make_temp_dir();
  int64_t bytes = -1;
  KILN_ASSERT_STATUS(kiln_cpu_cache_bytes(root, 2, &bytes), NOT_FOUND, "level-2");
  assert_int_equal(bytes, 0);
  /* the instruction cache comes first and is not the data cache */
  make_fake_cache(root, 0, "1\n", "Instruction\n", "32K\n");
  make_fake_cache(root, 1, "1\n", "Data\n", "48K\n");
  make_fake_cache(root, 2, "2\n", "Unified\n", "2048K\n");
  make_fake_cache(root, 3, "3\n", "Unified\n", "480M\n");
  make_fake_cache(root, 4, "4\n", "Unified\n", "lots\n");
  KILN_ASSERT_OK(kiln_cpu_cache_bytes(root, 1, &bytes));
  assert_int_equal(bytes, 48 * 1024);
  KILN_ASSERT_OK(kiln_cpu_cache_bytes(root, 2, &bytes));
  assert_int_equal(bytes, 2048 * 1024);
  KILN_ASSERT_OK(kiln_cpu_cache_bytes(root, 3, &bytes));
  assert_int_equal(bytes, 480ll * 1024 * 1024);
  KILN_ASSERT_STATUS(kiln_cpu_cache_bytes(root, 4, &bytes), NOT_FOUND, "level-4");
  remove_fake_caches(root, 5);
  kiln_test_remove_dir(root);
  free(root);
  /* the host's, when it describes them: a level 2 at least as large as its level 1 */
  int64_t l1 = 0, l2 = 0;
  kiln_status_t s1 = kiln_cpu_cache_bytes(NULL, 1, &l1), s2 = kiln_cpu_cache_bytes(NULL, 2, &l2);
  if (!s1 && !s2) {
    assert_true(l1 > 0 && l2 >= l1);
  }
  kiln_status_free(s1);
  kiln_status_free(s2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_records_checked),       cmocka_unit_test(test_missing_feature_refused),
      cmocka_unit_test(test_records_written),       cmocka_unit_test(test_loader_refuses),
      cmocka_unit_test(test_built_for_another_cpu), cmocka_unit_test(test_cache_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
