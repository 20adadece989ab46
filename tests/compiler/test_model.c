/*
 * The public model API (kiln/model.h, kiln/compiler.h's kiln_model_compile)
 * and the conformance case runner (kiln/conformance.h), as the kiln tool
 * uses them: loading a workload (weights apart, then bound) and an ONNX
 * file (with input-shape overrides for a symbolic dim), the inputs'
 * descriptions, the pass pipeline with its hook, text and dot printing,
 * the reference interpreter against hand-computed numbers and against the
 * compiled model, kiln_tensor_allclose, one ONNX node test case run and
 * its operators listed; and every error path: a missing file, a file that
 * is not a model, an unknown workload, a wrong input count or shape, a bad
 * option, an unknown pass, each with its code and message.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../onnx/onnx_builder.h"
#include "kiln/compiler.h"
#include "kiln/conformance.h"
#include "kiln/model.h"
#include "kiln/runtime.h"

#define NODE_TESTS "/usr/share/libonnx-testdata/data/node"

static kiln_model_t *load(const char *name, const kiln_model_options_t *options) {
  kiln_model_t *model = NULL;
  KILN_ASSERT_OK(kiln_model_load(kiln_allocator_system(), name, options, &model));
  return model;
}

/* A .onnx file in `dir`: y = relu(image), image (N, 3, 2, 2) with N symbolic. */
static char *write_symbolic_model(const char *dir) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "image", OB_FLOAT, 4, OB_DIMS(OB_SYMBOLIC, 3, 2, 2));
  ob_node(&ob, "Relu", "r", "image", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  size_t size = 0;
  uint8_t *bytes = ob_pack(&ob, &size);
  char *path = malloc(strlen(dir) + 16);
  sprintf(path, "%s/relu.onnx", dir);
  FILE *file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(bytes, 1, size, file), size);
  fclose(file);
  ob_free(&ob);
  return path;
}

static kiln_tensor_t *floats(int ndim, const int64_t *shape, const float *values) {
  kiln_tensor_t *tensor = NULL;
  size_t count = 1;
  for (int i = 0; i < ndim; ++i) {
    count *= (size_t)shape[i];
  }
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape,
                                         values, count * sizeof(float), &tensor));
  return tensor;
}

static void release_outputs(int count, kiln_tensor_t **outputs) {
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(outputs[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), outputs);
}

/* ---- loading ---- */

static void test_workload_weights_apart_then_bound(void **state) {
  (void)state;
  kiln_model_options_t options = kiln_model_options_default();
  assert_int_equal(options.batch, 0);
  assert_int_equal(options.num_input_shapes, 0);
  bool has_mlp = false;
  for (const char *const *name = kiln_model_workload_names(); *name; ++name) {
    has_mlp |= strcmp(*name, "mlp") == 0;
  }
  assert_true(has_mlp);
  options.batch = 2;
  kiln_model_t *model = load("mlp", &options);
  assert_int_equal(kiln_model_num_params(model), 6); /* three dense layers' weights and biases */
  assert_int_equal(kiln_model_num_inputs(model), 7);
  kiln_model_input_info_t info;
  KILN_ASSERT_OK(kiln_model_input_info(model, 1, &info));
  assert_string_equal(info.name, "fc1_weight");
  KILN_ASSERT_OK(kiln_model_bind_params(model));
  assert_int_equal(kiln_model_num_params(model), 0);
  assert_int_equal(kiln_model_num_inputs(model), 1);
  KILN_ASSERT_OK(kiln_model_bind_params(model)); /* nothing left: a no-op */
  KILN_ASSERT_OK(kiln_model_input_info(model, 0, &info));
  assert_string_equal(info.name, "data");
  assert_true(info.is_tensor);
  assert_int_equal(info.dtype, KILN_DTYPE_FLOAT32);
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 2);
  assert_int_equal(info.shape[1], 784);
  assert_string_equal(info.type_text, "Tensor[(2, 784), float32]");
  KILN_ASSERT_STATUS(kiln_model_input_info(model, 1, &info), OUT_OF_RANGE,
                     "input 1 of a model of 1 inputs");
  KILN_ASSERT_STATUS(kiln_model_input_info(model, -1, &info), OUT_OF_RANGE, "input -1");
  kiln_model_destroy(model);
  kiln_model_destroy(NULL); /* a no-op */
}

static void test_onnx_file_with_input_shapes(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = write_symbolic_model(dir);
  kiln_model_t *model = NULL;
  KILN_ASSERT_STATUS(kiln_model_load(kiln_allocator_system(), path, NULL, &model), INVALID_ARGUMENT,
                     "input \"image\" has a symbolic dimension \"N\"");
  assert_null(model);
  kiln_model_options_t options = kiln_model_options_default();
  const char *shapes[] = {"image=5x3x2x2"};
  options.num_input_shapes = 1;
  options.input_shapes = shapes;
  model = load(path, &options);
  assert_int_equal(kiln_model_num_params(model), 0);
  kiln_model_input_info_t info;
  KILN_ASSERT_OK(kiln_model_input_info(model, 0, &info));
  assert_int_equal(info.shape[0], 5);
  kiln_model_destroy(model);
  const char *wrong[] = {"image=5x3x9x2"};
  options.input_shapes = wrong;
  KILN_ASSERT_STATUS(kiln_model_load(kiln_allocator_system(), path, &options, &model),
                     INVALID_ARGUMENT,
                     "gives dim 2 of input \"image\" as 9 but the model fixes it");
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

/* Kept symbolic (symbolic_input_shapes), the same file compiles once with
 * kiln_compile (AUTO: the VM) and runs at batch 2 and then 5. */
static void test_onnx_symbolic_for_the_vm(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = write_symbolic_model(dir);
  kiln_model_options_t options = kiln_model_options_default();
  options.symbolic_input_shapes = true;
  kiln_model_t *model = load(path, &options);
  kiln_model_input_info_t info;
  KILN_ASSERT_OK(kiln_model_input_info(model, 0, &info));
  assert_string_equal(info.type_text, "Tensor[(N, 3, 2, 2), float32]");
  kiln_model_destroy(model);
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), path, NULL, &compiled));
  assert_int_equal(kiln_compiled_executor(compiled), KILN_EXECUTOR_VM);
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  for (int64_t batch = 2; batch <= 5; batch += 3) {
    int64_t shape[4] = {batch, 3, 2, 2};
    float values[60];
    for (int i = 0; i < 60; ++i) {
      values[i] = (float)(i % 7) - 3.0f;
    }
    kiln_tensor_t *input = floats(4, shape, values);
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, 0, kiln_tensor_dl(input)));
    KILN_ASSERT_OK(kiln_graph_executor_run(vm));
    const DLTensor *out = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output(vm, 0, &out));
    assert_int_equal(out->shape[0], batch);
    for (int64_t i = 0; i < batch * 12; ++i) {
      assert_float_equal(((const float *)out->data)[i], values[i] > 0 ? values[i] : 0.0f, 0.0f);
    }
    kiln_tensor_release(input);
  }
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  free(path);
  kiln_test_remove_dir(dir);
  free(dir);
}

static void test_load_errors(void **state) {
  (void)state;
  kiln_model_t *model = NULL;
  KILN_ASSERT_STATUS(kiln_model_load(kiln_allocator_system(), "nosuchnet", NULL, &model), NOT_FOUND,
                     "nosuchnet");
  KILN_ASSERT_STATUS(kiln_model_load(kiln_allocator_system(), "/nonexistent/m.onnx", NULL, &model),
                     NOT_FOUND, "/nonexistent/m.onnx");
  KILN_ASSERT_STATUS(kiln_model_load(kiln_allocator_system(), NULL, NULL, &model), INVALID_ARGUMENT,
                     "no model given");
  /* A file that is not an ONNX model. */
  char *dir = kiln_test_make_temp_dir();
  char path[512];
  snprintf(path, sizeof(path), "%s/junk.onnx", dir);
  FILE *file = fopen(path, "wb");
  fputs("this is not a protobuf \xff\xff\xff\xff", file);
  fclose(file);
  kiln_status_t status = kiln_model_load(kiln_allocator_system(), path, NULL, &model);
  assert_non_null(status);
  assert_non_null(strstr(kiln_status_message(status), path));
  kiln_status_free(status);
  assert_null(model);
  kiln_test_remove_dir(dir);
  free(dir);
  /* Input shapes are for ONNX models. */
  kiln_model_options_t options = kiln_model_options_default();
  const char *shapes[] = {"data=1x784"};
  options.num_input_shapes = 1;
  options.input_shapes = shapes;
  KILN_ASSERT_STATUS(kiln_model_load(kiln_allocator_system(), "mlp", &options, &model),
                     INVALID_ARGUMENT, "mlp: input shapes are for ONNX models");
  assert_null(model);
}

/* ---- passes and printing ---- */

typedef struct seen_t {
  int passes;
  bool fuse_ops;
  bool printed_ok;
} seen_t;

static void on_pass(void *user, const char *pass_name, const kiln_model_t *model, bool failed,
                    double seconds) {
  seen_t *seen = user;
  seen->passes++;
  assert_false(failed);
  assert_true(seconds >= 0);
  if (strcmp(pass_name, "fuse_ops") == 0) {
    seen->fuse_ops = true;
    char *text = NULL;
    KILN_ASSERT_OK(kiln_model_print(model, false, kiln_allocator_system(), &text));
    seen->printed_ok = strstr(text, "Primitive") != NULL;
    kiln_allocator_free(kiln_allocator_system(), text);
  }
}

static void test_optimize_print_and_dot(void **state) {
  (void)state;
  kiln_model_t *model = load("mlp", NULL);
  char *text = NULL;
  KILN_ASSERT_OK(kiln_model_print(model, false, kiln_allocator_system(), &text));
  assert_non_null(strstr(text, "def @main(%data: Tensor[(1, 784), float32], %fc1_weight"));
  kiln_allocator_free(kiln_allocator_system(), text);
  KILN_ASSERT_OK(kiln_model_bind_params(model));
  KILN_ASSERT_OK(kiln_model_print(model, true, kiln_allocator_system(), &text));
  assert_non_null(strstr(text, "#[metadata]"));
  kiln_allocator_free(kiln_allocator_system(), text);

  kiln_model_optimize_options_t options = kiln_model_optimize_options_default();
  assert_int_equal(options.opt_level, 3);
  seen_t seen = {0};
  options.after_pass = on_pass;
  options.user = &seen;
  options.verify = true;
  KILN_ASSERT_OK(kiln_model_optimize(model, &options));
  assert_true(seen.passes > 3);
  assert_true(seen.fuse_ops);
  assert_true(seen.printed_ok);
  KILN_ASSERT_OK(kiln_model_print_dot(model, kiln_allocator_system(), &text));
  assert_true(strncmp(text, "digraph", 7) == 0);
  assert_non_null(strstr(text, "nn.relu\\n+2 params"));
  kiln_allocator_free(kiln_allocator_system(), text);
  kiln_model_destroy(model);

  int level = -1;
  KILN_ASSERT_OK(kiln_model_pass_opt_level("fuse_ops", &level));
  assert_true(level >= 0 && level <= 3);
  KILN_ASSERT_STATUS(kiln_model_pass_opt_level("no_such_pass", &level), NOT_FOUND, "no_such_pass");
}

static void test_optimize_options(void **state) {
  (void)state;
  kiln_model_t *model = load("mlp", NULL);
  kiln_model_optimize_options_t options = kiln_model_optimize_options_default();
  options.opt_level = 4;
  KILN_ASSERT_STATUS(kiln_model_optimize(model, &options), INVALID_ARGUMENT,
                     "opt_level 4 is not 0 to 3");
  options.opt_level = 3;
  const char *unknown[] = {"no_such_pass"};
  options.num_disabled_passes = 1;
  options.disabled_passes = unknown;
  KILN_ASSERT_STATUS(kiln_model_optimize(model, &options), NOT_FOUND, "no_such_pass");
  /* fuse_ops disabled: the hook never sees it. */
  const char *no_fusion[] = {"fuse_ops"};
  options.disabled_passes = no_fusion;
  seen_t seen = {0};
  options.after_pass = on_pass;
  options.user = &seen;
  KILN_ASSERT_OK(kiln_model_optimize(model, &options));
  assert_true(seen.passes > 0);
  assert_false(seen.fuse_ops);
  kiln_model_destroy(model);
}

/* ---- running ---- */

static void test_interpret_and_errors(void **state) {
  (void)state;
  kiln_model_options_t options = kiln_model_options_default();
  const char *shapes[] = {"image=1x3x2x2"};
  options.num_input_shapes = 1;
  options.input_shapes = shapes;
  char *dir = kiln_test_make_temp_dir();
  char *path = write_symbolic_model(dir);
  kiln_model_t *model = load(path, &options);
  float values[12] = {-1, 2, -3, 4, 5, -6, 7, -8, 0, 1, -1, 2};
  kiln_tensor_t *x = floats(4, OB_DIMS(1, 3, 2, 2), values);
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_OK(kiln_model_interpret(model, 1, &x, kiln_allocator_system(), &count, &outputs));
  assert_int_equal(count, 1);
  const float *y = kiln_tensor_data(outputs[0]);
  for (int i = 0; i < 12; ++i) {
    assert_true(y[i] == (values[i] > 0 ? values[i] : 0));
  }
  /* kiln_tensor_allclose: equal, a difference, another shape. */
  float relu[12];
  for (int i = 0; i < 12; ++i) {
    relu[i] = values[i] > 0 ? values[i] : 0;
  }
  kiln_tensor_t *want = floats(4, OB_DIMS(1, 3, 2, 2), relu);
  KILN_ASSERT_OK(kiln_tensor_allclose(want, outputs[0], 1e-3, 1e-7));
  relu[5] = 0.5f;
  kiln_tensor_t *off = floats(4, OB_DIMS(1, 3, 2, 2), relu);
  KILN_ASSERT_STATUS(kiln_tensor_allclose(off, outputs[0], 1e-3, 1e-7), OUT_OF_RANGE, "element 5");
  kiln_tensor_t *flat = floats(1, OB_DIMS(12), values);
  KILN_ASSERT_STATUS(kiln_tensor_allclose(x, flat, 0, 0), INVALID_ARGUMENT,
                     "the result is (12,) float32; expected (1, 3, 2, 2) float32");
  kiln_tensor_release(flat);
  release_outputs(count, outputs);
  /* A wrong count and a wrong shape: clear errors, no outputs. */
  KILN_ASSERT_STATUS(
      kiln_model_interpret(model, 0, NULL, kiln_allocator_system(), &count, &outputs),
      INVALID_ARGUMENT, "input");
  assert_int_equal(count, 0);
  assert_null(outputs);
  kiln_tensor_t *wide = floats(4, OB_DIMS(1, 3, 2, 1), values);
  KILN_ASSERT_STATUS(
      kiln_model_interpret(model, 1, &wide, kiln_allocator_system(), &count, &outputs),
      INVALID_ARGUMENT, "image");
  kiln_tensor_release(wide);
  kiln_tensor_release(want);
  kiln_tensor_release(off);
  kiln_tensor_release(x);
  kiln_model_destroy(model);
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

/* kiln_model_compile against the interpreter on the same model. */
static void test_compile_a_model_in_memory(void **state) {
  (void)state;
  kiln_model_t *reference = load("mlp", NULL), *model = load("mlp", NULL);
  KILN_ASSERT_OK(kiln_model_bind_params(reference));
  float data[784];
  for (int i = 0; i < 784; ++i) {
    data[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  }
  kiln_tensor_t *x = floats(2, OB_DIMS(1, 784), data);
  int count = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(kiln_model_interpret(reference, 1, &x, kiln_allocator_system(), &count, &want));
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_model_compile(model, NULL, &compiled));
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &gx));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(x)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  kiln_tensor_t *got = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &got));
  KILN_ASSERT_OK(kiln_tensor_allclose(want[0], got, 1e-3, 1e-4));
  kiln_tensor_release(got);
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  release_outputs(count, want);
  kiln_tensor_release(x);
  kiln_model_destroy(model);
  kiln_model_destroy(reference);
}

/* ---- the conformance case runner ---- */

static void test_conformance_case(void **state) {
  (void)state;
  kiln_conformance_result_t result = KILN_CONFORMANCE_RESULT_PASS;
  kiln_status_t status =
      kiln_conformance_case_run(kiln_allocator_system(), "/nonexistent/case", NULL, &result);
  assert_int_equal(result, KILN_CONFORMANCE_RESULT_FAIL);
  assert_non_null(strstr(kiln_status_message(status), "/nonexistent/case"));
  kiln_status_free(status);
  char ops[64];
  KILN_ASSERT_STATUS(
      kiln_conformance_case_read_ops(kiln_allocator_system(), "/nonexistent/case", ops, 64),
      NOT_FOUND, "/nonexistent/case/model.onnx");
  KILN_ASSERT_STATUS(kiln_conformance_case_read_ops(kiln_allocator_system(), ".", ops, 0),
                     INVALID_ARGUMENT, "no room");
  struct stat info;
  if (stat(NODE_TESTS "/test_abs", &info) != 0) {
    KILN_SKIP("ONNX's node tests (libonnx-testdata) are not installed");
  }
  KILN_ASSERT_OK(
      kiln_conformance_case_run(kiln_allocator_system(), NODE_TESTS "/test_abs", NULL, &result));
  assert_int_equal(result, KILN_CONFORMANCE_RESULT_PASS);
  KILN_ASSERT_OK(kiln_conformance_case_read_ops(kiln_allocator_system(), NODE_TESTS "/test_abs",
                                                ops, sizeof(ops)));
  assert_string_equal(ops, "Abs");
  KILN_ASSERT_OK(kiln_conformance_case_run(kiln_allocator_system(), NODE_TESTS "/test_abs",
                                           kiln_compiler_default_target(), &result));
  assert_int_equal(result, KILN_CONFORMANCE_RESULT_PASS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_workload_weights_apart_then_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_onnx_file_with_input_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_onnx_symbolic_for_the_vm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_optimize_print_and_dot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_optimize_options, setup, teardown),
      cmocka_unit_test_setup_teardown(test_interpret_and_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compile_a_model_in_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conformance_case, setup, teardown),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
