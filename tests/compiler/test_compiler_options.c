/*
 * Tests of kiln/compiler.h's options as the kiln tool uses them: disabled
 * passes (an unknown name listing the passes, a pass the build requires
 * refused, one that may be disabled honoured), the progress lines (one per
 * phase and per kernel lowered, none without a stream) and the version of
 * the LLVM kiln was built with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/compiler.h"
#include "kiln_test.h"

static kiln_compiler_options_t c_options(void) {
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = "c -march=native";
  options.private_kernels = true;
  return options;
}

static void test_disabled_passes(void **state) {
  (void)state;
  kiln_compiler_options_t options = c_options();
  const char *unknown[] = {"nosuch"};
  options.num_disabled_passes = 1;
  options.disabled_passes = unknown;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_STATUS(kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled), NOT_FOUND,
                     "no pass named \"nosuch\"; the passes are: infer_type");
  const char *required[] = {"fold_constant", "fuse_ops"};
  options.num_disabled_passes = 2;
  options.disabled_passes = required;
  KILN_ASSERT_STATUS(kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled),
                     FAILED_PRECONDITION,
                     "pass fuse_ops cannot be disabled: the build requires it");
  assert_null(compiled);
  options.num_disabled_passes = 1; /* fold_constant alone: allowed */
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled));
  kiln_compiled_destroy(compiled);
}

static char *read_stream(FILE *stream) {
  long size = ftell(stream);
  assert_true(size >= 0);
  char *text = calloc((size_t)size + 1, 1);
  rewind(stream);
  assert_int_equal(fread(text, 1, (size_t)size, stream), (size_t)size);
  return text;
}

static void test_progress_per_kernel(void **state) {
  (void)state;
  kiln_compiler_options_t options = c_options();
  options.progress = tmpfile();
  assert_non_null(options.progress);
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled));
  kiln_compiled_destroy(compiled);
  char *text = read_stream(options.progress);
  fclose(options.progress);
  assert_non_null(strstr(text, "kiln: passes done"));
  assert_non_null(strstr(text, "kiln: kernel 1/3 fused_"));
  assert_non_null(strstr(text, "kiln: kernel 3/3 fused_"));
  assert_null(strstr(text, "kernel 4/"));
  assert_non_null(strstr(text, "kiln: generating code for 3 kernels (c -march=native)"));
  assert_non_null(strstr(text, "kiln: code generated"));
  free(text);
}

static void test_llvm_version(void **state) {
  (void)state;
  const char *version = kiln_compiler_llvm_version();
  bool llvm = strncmp(kiln_compiler_default_target(), "llvm", 4) == 0;
  assert_int_equal(version != NULL, llvm);
  if (version) {
    int major = 0, minor = 0, patch = 0;
    assert_int_equal(sscanf(version, "%d.%d.%d", &major, &minor, &patch), 3);
    assert_true(major >= 14);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_disabled_passes),
      cmocka_unit_test(test_progress_per_kernel),
      cmocka_unit_test(test_llvm_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
