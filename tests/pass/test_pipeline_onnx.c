/*
 * The graph passes on the four shared ONNX models (../shared/models:
 * torchvision exports with an input and ONNX Runtime's output): each is
 * imported, run through the default pipeline at opt_level 3 with the
 * verifier after every pass and with both opt-in passes (fast_math,
 * combine_parallel_conv2d) on, then run on the interpreter; the output must
 * still match ONNX Runtime's (rtol 1e-3, atol 1e-4). Skipped (77) when the
 * models are not there.
 */
#include <time.h>

#include "frontend/onnx/onnx_import.h"
#include "kiln/npy.h"
#include "pass/pipeline.h"
#include "pass_fixture.h"

static kiln_status_t run_pipeline(kiln_module_t *module, void *user) {
  (void)user;
  kiln_pass_context_t *context = pf_context(3);
  kiln_status_t status = kiln_pass_context_set_option(context, "fast_math", "1");
  status = status ? status : kiln_pass_context_set_option(context, "combine_parallel_conv2d", "1");
  status = status ? status : kiln_pass_run_default_pipeline(module, context);
  kiln_pass_context_destroy(context);
  return status;
}

static char *model_path(const char *name, const char *suffix) {
  char file[128];
  snprintf(file, sizeof(file), "%s%s", name, suffix);
  return kiln_test_path_join(kiln_test_shared_models_dir(), file);
}

static void check_shared_model(const char *name) {
  char *paths[3] = {model_path(name, ".onnx"), model_path(name, ".input.npy"),
                    model_path(name, ".output.npy")};
  kiln_tensor_t *input = NULL, *expected = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), paths[1], &input));
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), paths[2], &expected));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_onnx_import_file(paths[0], NULL, kiln_allocator_system(), &module));
  int64_t before = pf_count(module, NULL);
  int64_t bias_adds = pf_count(module, &kiln_op_bias_add);
  clock_t start = clock();
  KILN_ASSERT_OK(run_pipeline(module, NULL));
  double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
  pf_outputs_t outputs = pf_run(module, 1, &input);
  assert_int_equal(outputs.count, 1);
  KILN_ASSERT_OK(kiln_onnx_compare(expected, outputs.tensors[0], 1e-3, 1e-4));
  print_message("%-14s calls %4lld -> %4lld (bias_add %lld -> 0, add %lld after; passes %.2fs)\n",
                name, (long long)before, (long long)pf_count(module, NULL), (long long)bias_adds,
                (long long)pf_count(module, &kiln_op_add), seconds);
  assert_int_equal(pf_count(module, &kiln_op_bias_add), 0); /* canonicalize_ops ran */
  pf_outputs_release(&outputs);
  kiln_module_destroy(module);
  kiln_tensor_release(input);
  kiln_tensor_release(expected);
  for (int i = 0; i < 3; ++i) {
    free(paths[i]);
  }
}

static void test_shared_models_match_onnx_runtime(void **state) {
  (void)state;
  const char *const names[] = {"mlp", "squeezenet1_1", "mobilenet_v2", "resnet18"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    check_shared_model(names[i]);
  }
}

int main(void) {
  if (!kiln_test_shared_models_dir()) {
    printf("skipped: no shared models (../shared/models)\n");
    return KILN_TEST_SKIP_EXIT_CODE;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shared_models_match_onnx_runtime),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
