/*
 * The built-in workloads end to end on the reference interpreter: each one
 * builds, binds its weights, runs, and gives finite, non-degenerate outputs
 * of the right shape. Two checks make the numbers mean something: the MLP's
 * output equals a plain-loop evaluation of its weights written here, and a
 * CNN run on a batch of two copies of one image gives that image's batch-1
 * output twice (kernels index the batch correctly; batch_norm is in
 * inference mode). resnet-18 runs at 224x224 and its time is printed.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "frontend/testing/workloads.h"
#include "interp/interp.h"
#include "ir/params.h"
#include "kiln_test.h"

typedef struct run_result_t {
  int num_outputs;
  kiln_tensor_t **outputs;
} run_result_t;

static void fill_input(kiln_tensor_t *tensor, uint64_t seed) {
  float *data = kiln_tensor_data(tensor);
  uint64_t state = seed + 12345;
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    data[i] = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

/* Builds `name`, binds its weights, and runs it on `input` (made from the
 * data parameter's type and filled by fill_input when NULL). */
static run_result_t run_workload(const char *name, kiln_workload_options_t options,
                                 kiln_tensor_t *input, kiln_params_t *out_params) {
  kiln_allocator_t allocator = kiln_allocator_system();
  kiln_params_initialize(out_params, allocator);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_workload_build(name, &options, allocator, out_params, &module));
  KILN_ASSERT_OK(kiln_ir_bind_params(module, "main", out_params));
  kiln_function_t *main = kiln_module_get_function(module, "main");
  assert_int_equal(main->num_params, 1);
  const kiln_tensor_type_t *type = kiln_type_as_tensor(main->params[0]->type_annotation);
  kiln_tensor_t *own = NULL;
  if (input == NULL) {
    KILN_ASSERT_OK(kiln_tensor_create(allocator, type->dtype, type->ndim, type->shape, &own));
    fill_input(own, 7);
    input = own;
  }
  run_result_t result = {0, NULL};
  KILN_ASSERT_OK(
      kiln_interp_run(module, "main", 1, &input, allocator, &result.num_outputs, &result.outputs));
  kiln_tensor_release(own);
  kiln_module_destroy(module);
  return result;
}

static void run_result_release(run_result_t *result) {
  for (int i = 0; i < result->num_outputs; i++)
    kiln_tensor_release(result->outputs[i]);
  kiln_allocator_free(kiln_allocator_system(), result->outputs);
}

/* Finite everywhere, and not a constant (a dead network gives one value). */
static void assert_healthy(const kiln_tensor_t *tensor, int ndim, const int64_t *shape) {
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_FLOAT32);
  assert_int_equal(kiln_tensor_ndim(tensor), ndim);
  for (int d = 0; d < ndim; d++)
    assert_int_equal(kiln_tensor_shape(tensor)[d], shape[d]);
  const float *data = kiln_tensor_data(tensor);
  int64_t count = kiln_tensor_element_count(tensor);
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < count; i++) {
    assert_true(isfinite(data[i]));
    sum += data[i];
    sum_sq += (double)data[i] * data[i];
  }
  double mean = sum / (double)count;
  double variance = sum_sq / (double)count - mean * mean;
  assert_true(variance > 1e-8);
}

static void check_workload(const char *name, int64_t image_size, int ndim, const int64_t *shape) {
  kiln_workload_options_t options = kiln_workload_options_default();
  if (image_size > 0)
    options.image_size = image_size;
  kiln_params_t params;
  clock_t start = clock();
  run_result_t result = run_workload(name, options, NULL, &params);
  double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
  print_message("%s (image %lld): %.2f s on the interpreter\n", name, (long long)image_size,
                seconds);
  assert_int_equal(result.num_outputs, 1);
  assert_healthy(result.outputs[0], ndim, shape);
  run_result_release(&result);
  kiln_params_deinitialize(&params);
}

static void test_resnet18_runs_at_224(void **state) {
  (void)state;
  check_workload("resnet18", 224, 2, (const int64_t[]){1, 1000});
}

static void test_deeper_resnets_run(void **state) {
  (void)state;
  check_workload("resnet34", 64, 2, (const int64_t[]){1, 1000});
  check_workload("resnet50", 64, 2, (const int64_t[]){1, 1000});
}

static void test_mobile_networks_run(void **state) {
  (void)state;
  check_workload("mobilenet_v2", 96, 2, (const int64_t[]){1, 1000});
  check_workload("squeezenet1_1", 96, 2, (const int64_t[]){1, 1000});
}

static void test_transformer_runs(void **state) {
  (void)state;
  check_workload("transformer", 0, 3, (const int64_t[]){1, 128, 256});
}

/* y = W3 relu(W2 relu(W1 x + b1) + b2) + b3 (784-512-512-10) with plain loops over the
 * workload's own weights. */
static void dense_relu(const float *x, const kiln_tensor_t *weight, const kiln_tensor_t *bias,
                       int relu, float *out) {
  int64_t units = kiln_tensor_shape(weight)[0], inputs = kiln_tensor_shape(weight)[1];
  const float *w = kiln_tensor_data(weight), *b = kiln_tensor_data(bias);
  for (int64_t n = 0; n < units; n++) {
    double acc = b[n];
    for (int64_t k = 0; k < inputs; k++)
      acc += (double)w[n * inputs + k] * x[k];
    out[n] = relu && acc < 0 ? 0.0f : (float)acc;
  }
}

static void test_mlp_matches_plain_loops(void **state) {
  (void)state;
  kiln_params_t params;
  run_result_t result = run_workload("mlp", kiln_workload_options_default(), NULL, &params);
  assert_int_equal(kiln_params_count(&params), 6);
  kiln_tensor_t *input = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2,
                                    (const int64_t[]){1, 784}, &input));
  fill_input(input, 7);
  static float hidden1[1024], hidden2[1024], expected[10];
  assert_true(kiln_tensor_shape(kiln_params_at(&params, 0)->tensor)[0] <= 1024);
  assert_true(kiln_tensor_shape(kiln_params_at(&params, 2)->tensor)[0] <= 1024);
  const kiln_tensor_t *t[6];
  for (size_t i = 0; i < 6; i++)
    t[i] = kiln_params_at(&params, i)->tensor;
  dense_relu(kiln_tensor_data(input), t[0], t[1], 1, hidden1);
  dense_relu(hidden1, t[2], t[3], 1, hidden2);
  dense_relu(hidden2, t[4], t[5], 0, expected);
  const float *actual = kiln_tensor_data(result.outputs[0]);
  for (int i = 0; i < 10; i++) {
    assert_true(fabs(actual[i] - expected[i]) <= 1e-4 + 1e-3 * fabs(expected[i]));
  }
  kiln_tensor_release(input);
  run_result_release(&result);
  kiln_params_deinitialize(&params);
}

static void test_batch_items_are_independent(void **state) {
  (void)state;
  kiln_workload_options_t options = kiln_workload_options_default();
  options.image_size = 64;
  kiln_params_t params;
  run_result_t single = run_workload("resnet18", options, NULL, &params);
  kiln_params_deinitialize(&params);

  options.batch_size = 2;
  kiln_tensor_t *pair = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 4,
                                    (const int64_t[]){2, 3, 64, 64}, &pair));
  int64_t half = kiln_tensor_element_count(pair) / 2;
  kiln_tensor_t *one = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 4,
                                    (const int64_t[]){1, 3, 64, 64}, &one));
  fill_input(one, 7);
  float *data = kiln_tensor_data(pair);
  memcpy(data, kiln_tensor_data(one), (size_t)half * sizeof(float));
  memcpy(data + half, kiln_tensor_data(one), (size_t)half * sizeof(float));
  run_result_t both = run_workload("resnet18", options, pair, &params);
  const float *expected = kiln_tensor_data(single.outputs[0]);
  const float *actual = kiln_tensor_data(both.outputs[0]);
  for (int i = 0; i < 2000; i++) {
    assert_true(fabs(actual[i] - expected[i % 1000]) <= 1e-5 + 1e-4 * fabs(expected[i % 1000]));
  }
  kiln_tensor_release(one);
  kiln_tensor_release(pair);
  run_result_release(&single);
  run_result_release(&both);
  kiln_params_deinitialize(&params);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mlp_matches_plain_loops),
      cmocka_unit_test(test_resnet18_runs_at_224),
      cmocka_unit_test(test_deeper_resnets_run),
      cmocka_unit_test(test_mobile_networks_run),
      cmocka_unit_test(test_transformer_runs),
      cmocka_unit_test(test_batch_items_are_independent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
