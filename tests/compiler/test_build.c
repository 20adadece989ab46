/*
 * The graph compiler end to end (compiler/build.h, kiln/compiler.h): every
 * built-in workload, built at opt_level 0 and 3 with the C backend, run by
 * the graph executor in memory, against the reference interpreter on the
 * same module (rtol 1e-3, atol 1e-4, as whole models are held to); the
 * artifacts saved and run again from their folder by the runtime alone,
 * and from a one-file model (kiln_compiled_export_library); the
 * shared ONNX models against their expected outputs when they are there;
 * and the errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/build.h"
#include "frontend/testing/workloads.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/params.h"
#include "kiln/npy.h"
#include "kiln_compute_test.h"

static bool has_llvm(void) {
  return strncmp(kiln_compiler_default_target(), "llvm", 4) == 0;
}

static kiln_module_t *workload(const char *name, int64_t image_size) {
  kiln_workload_options_t options = kiln_workload_options_default();
  options.image_size = image_size;
  kiln_params_t params;
  kiln_params_initialize(&params, kiln_allocator_system());
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_workload_build(name, &options, kiln_allocator_system(), &params, &m));
  KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", &params));
  kiln_params_deinitialize(&params);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  return m;
}

static void assert_close(const char *what, const kiln_tensor_t *got, const kiln_tensor_t *want) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  double worst = 0;
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i), w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-4 + 1e-3 * fabs(w))) {
      fail_msg("%s: element %lld is %.9g, %.9g in the reference", what, (long long)i, g, w);
    }
    worst = fmax(worst, fabs(g - w));
  }
  print_message("%s: largest difference %.3g\n", what, worst);
}

/* Runs the executor on `input` and compares every output with `want`. */
static void run_and_compare(const char *what, kiln_graph_executor_t *executor,
                            const kiln_tensor_t *input, int num_want, kiln_tensor_t **want) {
  assert_int_equal(kiln_graph_executor_num_outputs(executor), num_want);
  KILN_ASSERT_OK(kiln_graph_executor_set_input(executor, 0, kiln_tensor_dl(input)));
  KILN_ASSERT_OK(kiln_graph_executor_run(executor));
  for (int o = 0; o < num_want; ++o) {
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_copy_output(executor, o, kiln_allocator_system(), &got));
    assert_close(what, got, want[o]);
    kiln_tensor_release(got);
  }
}

static void check_workload(const char *name, int64_t image_size, const char *target, int opt_level,
                           bool save) {
  kiln_module_t *reference = workload(name, image_size);
  const kiln_tensor_type_t *type =
      kiln_type_as_tensor(kiln_module_get_function(reference, "main")->params[0]->type_annotation);
  kiln_tensor_t *input = random_tensor(type->dtype, type->ndim, type->shape, -1, 1);
  int num_want = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(
      kiln_interp_run(reference, "main", 1, &input, kiln_allocator_system(), &num_want, &want));
  kiln_module_destroy(reference);

  kiln_module_t *m = workload(name, image_size);
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  options.opt_level = opt_level;
  options.verify = true;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), m, &options, &compiled));
  kiln_module_destroy(m);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  print_message("%s, %s, opt_level %d: %d kernels, %d calls, %.2f s (passes %.2f, lower %.2f, "
                "codegen %.2f), %zu of %zu bytes planned\n",
                name, target, opt_level, stats.num_kernels, stats.num_kernel_calls,
                stats.seconds_total, stats.seconds_passes, stats.seconds_lower,
                stats.seconds_codegen, stats.planned_bytes, stats.tensor_bytes);
  assert_true(stats.num_kernels > 0 && stats.num_kernels <= stats.num_kernel_calls);
  assert_true(stats.planned_bytes <= stats.tensor_bytes);
  kiln_graph_executor_t *executor = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &executor));
  run_and_compare(name, executor, input, num_want, want);
  kiln_graph_executor_destroy(executor);
  if (save) {
    char *dir = kiln_test_make_temp_dir();
    KILN_ASSERT_OK(kiln_compiled_save(compiled, dir));
    KILN_ASSERT_OK(kiln_graph_executor_load(kiln_allocator_system(), dir, &executor));
    run_and_compare("from the saved folder", executor, input, num_want, want);
    kiln_graph_executor_destroy(executor);
    char *file = kiln_test_path_join(dir, "model.so");
    KILN_ASSERT_OK(kiln_compiled_export_library(compiled, file));
    KILN_ASSERT_OK(kiln_graph_executor_load(kiln_allocator_system(), file, &executor));
    run_and_compare("from the one-file model", executor, input, num_want, want);
    kiln_graph_executor_destroy(executor);
    free(file);
    kiln_test_remove_dir(dir);
    free(dir);
  }
  kiln_compiled_destroy(compiled);
  for (int o = 0; o < num_want; ++o) {
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  kiln_tensor_release(input);
}

static void test_mlp(void **state) {
  (void)state;
  check_workload("mlp", 0, "c -march=native", 0, true);
  check_workload("mlp", 0, "c -march=native", 3, false);
  if (has_llvm()) {
    check_workload("mlp", 0, "llvm", 3, true);
    check_workload("mlp", 0, "llvm -jit", 0, false);
  }
}

static void test_resnet18(void **state) {
  (void)state;
  check_workload("resnet18", 32, "c -march=native", 0, false);
  check_workload("resnet18", 32, "c -march=native", 3, true);
  if (has_llvm()) {
    check_workload("resnet18", 32, "llvm", 3, true);
    check_workload("resnet18", 32, "llvm -jit", 0, false);
  }
}

static void test_mobilenet_v2(void **state) {
  (void)state;
  check_workload("mobilenet_v2", 32, kiln_compiler_default_target(), 3, false);
}

static void test_squeezenet(void **state) {
  (void)state;
  check_workload("squeezenet1_1", 33, kiln_compiler_default_target(), 3, false);
}

static void test_transformer(void **state) {
  (void)state;
  check_workload("transformer", 0, kiln_compiler_default_target(), 3, false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_mlp, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resnet18, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mobilenet_v2, setup, teardown),
      cmocka_unit_test_setup_teardown(test_squeezenet, setup, teardown),
      cmocka_unit_test_setup_teardown(test_transformer, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
