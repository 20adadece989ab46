/*
 * The VM executor on compiled models (docs/vm.md): each of the six shared
 * ONNX models (../shared/models) compiled once for the VM (kiln_compile
 * with executor VM), run by the VM and by the graph executor over the same
 * library, params and plan (the compiled graph.json), twice each: the
 * outputs must be bit-identical, and match ONNX Runtime's expected output
 * (rtol 1e-3, atol 1e-4). For one model also: the folder a save writes
 * (vm.json, no graph.json, loaded as a VM), the one-file library (loaded
 * as a VM), the profile (one row per kernel call, the flops of graph.json)
 * and the executor choice (AUTO is the graph executor for a static model).
 * Skipped (77) when the folder is not there.
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

static kiln_tensor_t *read_npy(const char *name, const char *suffix) {
  char *path = model_file(name, suffix);
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), path, &t));
  free(path);
  return t;
}

static kiln_compiled_t *compile_for(const char *name, kiln_executor_kind_t executor) {
  char *onnx = model_file(name, ".onnx");
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.executor = executor;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), onnx, &options, &compiled));
  free(onnx);
  return compiled;
}

/* Runs `gx` on `input` twice; the second run's output 0, copied. */
static kiln_tensor_t *run_twice(kiln_graph_executor_t *gx, const kiln_tensor_t *input) {
  kiln_tensor_t *out = NULL;
  for (int run = 0; run < 2; ++run) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(input)));
    KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  }
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &out));
  return out;
}

static void assert_identical(const char *what, const kiln_tensor_t *a, const kiln_tensor_t *b) {
  assert_int_equal(kiln_tensor_dtype(a), kiln_tensor_dtype(b));
  assert_true(kiln_shape_equal(kiln_tensor_ndim(a), kiln_tensor_shape(a), kiln_tensor_ndim(b),
                               kiln_tensor_shape(b)));
  if (memcmp(kiln_tensor_data(a), kiln_tensor_data(b), kiln_tensor_byte_size(a)) != 0) {
    fail_msg("%s: the VM's output differs from the graph executor's", what);
  }
}

static void assert_close(const char *name, const kiln_tensor_t *got, const kiln_tensor_t *want) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  for (int64_t e = 0; e < kiln_tensor_element_count(want); ++e) {
    double g = kiln_tensor_element_as_double(got, e), w = kiln_tensor_element_as_double(want, e);
    if (!(fabs(g - w) <= 1e-4 + 1e-3 * fabs(w))) {
      fail_msg("%s: element %lld is %.9g, expected %.9g", name, (long long)e, g, w);
    }
  }
}

/* The graph executor over the VM build's own graph.json, library and params. */
static kiln_graph_executor_t *graph_executor_of(const kiln_compiled_t *compiled) {
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_OK(kiln_compiled_params(compiled, &params));
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_create(kiln_allocator_system(),
                                            kiln_compiled_graph_json(compiled), "graph.json",
                                            kiln_compiled_library(compiled), params, &gx));
  kiln_runtime_params_destroy(params);
  return gx;
}

static void check_model(const char *name) {
  kiln_tensor_t *input = read_npy(name, ".input.npy"), *want = read_npy(name, ".output.npy");
  kiln_compiled_t *compiled = compile_for(name, KILN_EXECUTOR_VM);
  assert_int_equal(kiln_compiled_executor(compiled), KILN_EXECUTOR_VM);
  assert_non_null(strstr(kiln_compiled_program_json(compiled), "\"kiln-vm\""));
  kiln_graph_executor_t *vm = NULL, *gx = graph_executor_of(compiled);
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  assert_int_equal(kiln_graph_executor_kind(vm), KILN_EXECUTOR_VM);
  assert_int_equal(kiln_graph_executor_kind(gx), KILN_EXECUTOR_GRAPH);
  kiln_tensor_t *from_vm = run_twice(vm, input), *from_graph = run_twice(gx, input);
  assert_identical(name, from_vm, from_graph);
  assert_close(name, from_vm, want);
  print_message("%s: the VM's output is bit-identical to the graph executor's\n", name);
  kiln_tensor_release(from_vm);
  kiln_tensor_release(from_graph);
  kiln_graph_executor_destroy(vm);
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  kiln_tensor_release(input);
  kiln_tensor_release(want);
}

static void skip_without_models(void) {
  if (!kiln_test_shared_models_dir()) {
    KILN_SKIP("../shared/models is not there");
  }
}

static void test_mlp(void **state) {
  (void)state;
  skip_without_models();
  check_model("mlp");
}

static void test_squeezenet(void **state) {
  (void)state;
  skip_without_models();
  check_model("squeezenet1_1");
}

static void test_mobilenet_v2(void **state) {
  (void)state;
  skip_without_models();
  check_model("mobilenet_v2");
}

static void test_resnet18(void **state) {
  (void)state;
  skip_without_models();
  check_model("resnet18");
}

static void test_encoder_layer(void **state) {
  (void)state;
  skip_without_models();
  check_model("encoder_layer");
}

static void test_cnn_mix(void **state) {
  (void)state;
  skip_without_models();
  check_model("cnn_mix");
}

/* Loads `path` and checks it is a VM giving `want` exactly. */
static void check_loaded(const char *path, const kiln_tensor_t *input, const kiln_tensor_t *want) {
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_load(kiln_allocator_system(), path, &vm));
  assert_int_equal(kiln_graph_executor_kind(vm), KILN_EXECUTOR_VM);
  kiln_tensor_t *got = run_twice(vm, input);
  assert_identical(path, got, want);
  kiln_tensor_release(got);
  kiln_graph_executor_destroy(vm);
}

static int file_exists(const char *dir, const char *name) {
  char *path = kiln_test_path_join(dir, name);
  FILE *f = fopen(path, "rb");
  free(path);
  if (f) {
    fclose(f);
  }
  return f != NULL;
}

static void test_saved_forms_and_profile(void **state) {
  (void)state;
  skip_without_models();
  kiln_tensor_t *input = read_npy("mlp", ".input.npy");
  kiln_compiled_t *graph_build = compile_for("mlp", KILN_EXECUTOR_AUTO);
  assert_int_equal(kiln_compiled_executor(graph_build), KILN_EXECUTOR_GRAPH);
  kiln_compiled_t *compiled = compile_for("mlp", KILN_EXECUTOR_VM);
  kiln_graph_executor_t *gx = graph_executor_of(compiled);
  kiln_tensor_t *want = run_twice(gx, input);
  char *dir = kiln_test_make_temp_dir();
  /* a folder: vm.json replaces a graph.json saved there before */
  KILN_ASSERT_OK(kiln_compiled_save(graph_build, dir));
  assert_true(file_exists(dir, "graph.json"));
  KILN_ASSERT_OK(kiln_compiled_save(compiled, dir));
  assert_true(file_exists(dir, "vm.json") && !file_exists(dir, "graph.json"));
  check_loaded(dir, input, want);
  /* both programs in one folder are refused */
  KILN_ASSERT_OK(kiln_compiled_save(graph_build, dir));
  char *vm_path = kiln_test_path_join(dir, "vm.json");
  const char *vm_json = kiln_compiled_program_json(compiled);
  kiln_test_write_file(vm_path, vm_json, strlen(vm_json));
  kiln_graph_executor_t *both = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_load(kiln_allocator_system(), dir, &both),
                     INVALID_ARGUMENT, "holds both graph.json and vm.json");
  free(vm_path);
  /* one file */
  char *library = kiln_test_path_join(dir, "model.so");
  KILN_ASSERT_OK(kiln_compiled_export_library(compiled, library));
  check_loaded(library, input, want);
  free(library);
  /* the profile: one row per kernel call or copy */
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, 0, kiln_tensor_dl(input)));
  kiln_graph_profile_t *profile = NULL, *graph_profile = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_profile(vm, 3, &profile));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(input)));
  KILN_ASSERT_OK(kiln_graph_executor_profile(gx, 3, &graph_profile));
  assert_int_equal(profile->num_nodes, graph_profile->num_nodes);
  assert_true(profile->total_flops == graph_profile->total_flops && profile->total_flops > 0);
  for (int k = 0; k < profile->num_nodes; ++k) {
    assert_string_equal(profile->nodes[k].func_name, graph_profile->nodes[k].func_name);
  }
  char *text = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_disassemble(vm, kiln_allocator_system(), &text));
  assert_non_null(strstr(text, "function @main"));
  assert_non_null(strstr(text, "invoke_packed"));
  kiln_allocator_free(kiln_allocator_system(), text);
  KILN_ASSERT_STATUS(kiln_graph_executor_disassemble(gx, kiln_allocator_system(), &text),
                     FAILED_PRECONDITION, "only a VM program");
  kiln_graph_profile_destroy(profile);
  kiln_graph_profile_destroy(graph_profile);
  kiln_graph_executor_destroy(vm);
  kiln_test_remove_dir(dir);
  free(dir);
  kiln_tensor_release(want);
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  kiln_compiled_destroy(graph_build);
  kiln_tensor_release(input);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mlp),
      cmocka_unit_test(test_squeezenet),
      cmocka_unit_test(test_mobilenet_v2),
      cmocka_unit_test(test_resnet18),
      cmocka_unit_test(test_encoder_layer),
      cmocka_unit_test(test_cnn_mix),
      cmocka_unit_test(test_saved_forms_and_profile),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
