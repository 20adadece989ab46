/*
 * The six shared ONNX models (../shared/models) compiled end to end and
 * run by the graph executor, against their expected outputs (rtol 1e-3,
 * atol 1e-4): each with the default target and with the C backend, at
 * opt_level 0 and 3 (LLVM through its JIT at 0). cnn_mix has a 19-way
 * concatenate (over the kernel argument limit: split_args splits it),
 * grouped convs, a channel shuffle and every kind of pooling; encoder_layer
 * (a pre-LN transformer layer) goes through matmul_to_dense, pack_dense,
 * rewrite_layer_norm and the GEMM, row and attention schedules. Skipped (77)
 * when the folder is not there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/compiler.h"
#include "kiln/npy.h"
#include "kiln_test.h"

static char *model_file(const char *name, const char *suffix) {
  char file[128];
  snprintf(file, sizeof(file), "%s%s", name, suffix);
  return kiln_test_path_join(kiln_test_shared_models_dir(), file);
}

static void check_model(const char *name, const char *target, int opt_level) {
  char *onnx = model_file(name, ".onnx");
  char *input_path = model_file(name, ".input.npy");
  char *output_path = model_file(name, ".output.npy");
  kiln_tensor_t *input = NULL, *want = NULL, *got = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), input_path, &input));
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), output_path, &want));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  options.opt_level = opt_level;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), onnx, &options, &compiled));
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &gx));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(input)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &got));
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  double worst = 0;
  for (int64_t e = 0; e < kiln_tensor_element_count(want); ++e) {
    double g = kiln_tensor_element_as_double(got, e), w = kiln_tensor_element_as_double(want, e);
    if (!(fabs(g - w) <= 1e-4 + 1e-3 * fabs(w))) {
      fail_msg("%s (%s, opt_level %d): element %lld is %.9g, expected %.9g", name, target,
               opt_level, (long long)e, g, w);
    }
    worst = fmax(worst, fabs(g - w));
  }
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  print_message("%s (%s, opt_level %d): compiled in %.2f s, %d kernels; largest difference "
                "%.3g\n",
                name, target, opt_level, stats.seconds_total, stats.num_kernels, worst);
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  kiln_tensor_release(got);
  kiln_tensor_release(want);
  kiln_tensor_release(input);
  free(onnx);
  free(input_path);
  free(output_path);
}

static bool has_llvm(void) {
  return strncmp(kiln_compiler_default_target(), "llvm", 4) == 0;
}

static void check_all(const char *name) {
  check_model(name, kiln_compiler_default_target(), 3);
  check_model(name, "c -march=native", 0);
  check_model(name, "c -march=native", 3);
  if (has_llvm()) {
    check_model(name, "llvm -jit", 0);
  }
}

static void test_mlp(void **state) {
  (void)state;
  check_all("mlp");
}

static void test_squeezenet(void **state) {
  (void)state;
  check_all("squeezenet1_1");
}

static void test_mobilenet_v2(void **state) {
  (void)state;
  check_all("mobilenet_v2");
}

static void test_resnet18(void **state) {
  (void)state;
  check_all("resnet18");
}

static void test_encoder_layer(void **state) {
  (void)state;
  check_all("encoder_layer");
}

static void test_cnn_mix(void **state) {
  (void)state;
  check_all("cnn_mix");
}

int main(void) {
  if (!kiln_test_shared_models_dir()) {
    printf("skipped: ../shared/models is not there\n");
    return KILN_TEST_SKIP_EXIT_CODE;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mlp),          cmocka_unit_test(test_squeezenet),
      cmocka_unit_test(test_mobilenet_v2), cmocka_unit_test(test_resnet18),
      cmocka_unit_test(test_cnn_mix),      cmocka_unit_test(test_encoder_layer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
