/*
 * kiln from several threads at once, as a server uses it (run under
 * ThreadSanitizer by make test-tsan): three graph executors over one
 * compiled model, each run 20 times from its own thread, every output equal
 * to a run on one thread; and one model compiled from two threads at once
 * (they share the process's kernel cache and LLVM), both results giving the
 * same numbers.
 */
#include <pthread.h>
#include <string.h>

#include "kiln/compiler.h"
#include "kiln/runtime.h"
#include "kiln_test.h"

#define EXECUTORS 3
#define RUNS      20

static kiln_compiler_options_t mlp_options(void) {
  kiln_compiler_options_t options;
  memset(&options, 0, sizeof(options));
  options.opt_level = 3;
  return options;
}

/* The mlp workload's input: (1, 784) float32, a fixed pattern. */
static kiln_tensor_t *mlp_input(void) {
  kiln_tensor_t *x = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2, (int64_t[]){1, 784}, &x));
  float *data = kiln_tensor_data(x);
  for (int i = 0; i < 784; ++i) {
    data[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  }
  return x;
}

/* One run of `gx` on `x`; its output copied into out[10]. */
static kiln_status_t run_once(kiln_graph_executor_t *gx, const kiln_tensor_t *x, float *out) {
  KILN_RETURN_IF_ERROR(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(x)));
  KILN_RETURN_IF_ERROR(kiln_graph_executor_run(gx));
  const DLTensor *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_get_output(gx, 0, &y));
  memcpy(out, y->data, 10 * sizeof(float));
  return KILN_OK;
}

typedef struct runner_t {
  kiln_graph_executor_t *gx;
  const kiln_tensor_t *x;
  const float *want;
  int mismatches;
  kiln_status_t status;
} runner_t;

static void *run_many(void *user) {
  runner_t *r = user;
  float got[10];
  for (int i = 0; i < RUNS && r->status == KILN_OK; ++i) {
    r->status = run_once(r->gx, r->x, got);
    r->mismatches += r->status == KILN_OK && memcmp(got, r->want, sizeof(got)) != 0;
  }
  return NULL;
}

static void test_executors_of_one_model_on_threads(void **state) {
  (void)state;
  kiln_compiler_options_t options = mlp_options();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compile(kiln_allocator_system(), "mlp", &options, &compiled));
  kiln_tensor_t *x = mlp_input();
  kiln_graph_executor_t *reference = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &reference));
  float want[10];
  KILN_ASSERT_OK(run_once(reference, x, want));
  runner_t runners[EXECUTORS];
  pthread_t threads[EXECUTORS];
  for (int i = 0; i < EXECUTORS; ++i) {
    runners[i] = (runner_t){NULL, x, want, 0, KILN_OK};
    KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &runners[i].gx));
    assert_int_equal(pthread_create(&threads[i], NULL, run_many, &runners[i]), 0);
  }
  for (int i = 0; i < EXECUTORS; ++i) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    KILN_ASSERT_OK(runners[i].status);
    assert_int_equal(runners[i].mismatches, 0);
    kiln_graph_executor_destroy(runners[i].gx);
  }
  kiln_graph_executor_destroy(reference);
  kiln_tensor_release(x);
  kiln_compiled_destroy(compiled);
}

typedef struct compiler_t {
  kiln_compiled_t *compiled;
  kiln_status_t status;
} compiler_t;

static void *compile_mlp(void *user) {
  compiler_t *c = user;
  kiln_compiler_options_t options = mlp_options();
  c->status = kiln_compile(kiln_allocator_system(), "mlp", &options, &c->compiled);
  return NULL;
}

static void test_one_model_compiled_from_two_threads(void **state) {
  (void)state;
  compiler_t compilers[2] = {{NULL, KILN_OK}, {NULL, KILN_OK}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, compile_mlp, &compilers[i]), 0);
  }
  kiln_tensor_t *x = mlp_input();
  float outputs[2][10];
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    KILN_ASSERT_OK(compilers[i].status);
    kiln_graph_executor_t *gx = NULL;
    KILN_ASSERT_OK(kiln_compiled_create_executor(compilers[i].compiled, &gx));
    KILN_ASSERT_OK(run_once(gx, x, outputs[i]));
    kiln_graph_executor_destroy(gx);
    kiln_compiled_destroy(compilers[i].compiled);
  }
  assert_memory_equal(outputs[0], outputs[1], sizeof(outputs[0]));
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_executors_of_one_model_on_threads),
      cmocka_unit_test(test_one_model_compiled_from_two_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
