/*
 * A small CNN written with eager calls gives the output of the same network
 * compiled by the graph compiler (kiln_compiler_build, run by the graph
 * executor) and run as a graph-IR module by the reference interpreter. conv -> bias -> relu ->
 * max pool -> conv (stride 2) -> relu -> global average pool -> flatten ->
 * dense -> bias -> softmax, on odd shapes, with deterministic random
 * weights. The eager run goes through the kernel cache's compiled kernels
 * (the default eager target, the LLVM JIT when kiln has LLVM: each kernel compiles once, then a
 * second forward pass reuses them) and again on the reference kernels.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/build.h"
#include "compiler/kernel_cache.h"
#include "eager/context.h"
#include "interp/interp.h"
#include "ir/expr.h"
#include "ir/text.h"
#include "kiln/eager.h"
#include "kiln_test.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static const char *const network =
    "def @main(%x: Tensor[(2, 3, 9, 9), float32], %w1: Tensor[(5, 3, 3, 3), float32],\n"
    "          %b1: Tensor[(5), float32], %w2: Tensor[(6, 5, 3, 3), float32],\n"
    "          %w3: Tensor[(4, 6), float32], %b3: Tensor[(4), float32]) {\n"
    "  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);\n"
    "  %1 = nn.bias_add(%0, %b1, axis=1);\n"
    "  %2 = nn.relu(%1);\n"
    "  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]);\n"
    "  %4 = nn.conv2d(%3, %w2, strides=[2, 2], padding=[1, 1, 1, 1]);\n"
    "  %5 = nn.relu(%4);\n"
    "  %6 = nn.global_avg_pool2d(%5);\n"
    "  %7 = nn.batch_flatten(%6);\n"
    "  %8 = nn.dense(%7, %w3);\n"
    "  %9 = nn.bias_add(%8, %b3, axis=1);\n"
    "  %10 = nn.softmax(%9);\n"
    "  %10\n"
    "}\n";

#define NUM_PARAMS 6

static const int64_t *const shapes[NUM_PARAMS] = {SHAPE(2, 3, 9, 9), SHAPE(5, 3, 3, 3), SHAPE(5),
                                                  SHAPE(6, 5, 3, 3), SHAPE(4, 6),       SHAPE(4)};
static const int ranks[NUM_PARAMS] = {4, 4, 1, 4, 2, 1};

static kiln_tensor_t *random_tensor(unsigned *rng, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &t));
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    *rng = *rng * 1103515245u + 12345u;
    data[i] = (float)((*rng >> 8) % 2001) / 1000.0f - 1.0f;
  }
  return t;
}

/* The network in eager calls; the softmax output's storage. */
static kiln_tensor_t *run_eager(kiln_tensor_t *const *params) {
  kiln_eager_tensor_t *p[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i) {
    KILN_ASSERT_OK(kiln_eager_tensor_wrap(params[i], &p[i]));
  }
  kiln_eager_tensor_t *t[11];
  KILN_ASSERT_OK(kiln_eager_conv2d(p[0], p[1], SHAPE(1, 1), SHAPE(1, 1, 1, 1), &t[0]));
  KILN_ASSERT_OK(kiln_eager_bias_add(t[0], p[2], 1, &t[1]));
  KILN_ASSERT_OK(kiln_eager_relu(t[1], &t[2]));
  KILN_ASSERT_OK(kiln_eager_max_pool2d(t[2], SHAPE(2, 2), SHAPE(2, 2), SHAPE(0, 0, 0, 0), &t[3]));
  KILN_ASSERT_OK(kiln_eager_conv2d(t[3], p[3], SHAPE(2, 2), SHAPE(1, 1, 1, 1), &t[4]));
  KILN_ASSERT_OK(kiln_eager_relu(t[4], &t[5]));
  KILN_ASSERT_OK(kiln_eager_global_avg_pool2d(t[5], &t[6]));
  KILN_ASSERT_OK(kiln_eager_batch_flatten(t[6], &t[7]));
  KILN_ASSERT_OK(kiln_eager_dense(t[7], p[4], &t[8]));
  KILN_ASSERT_OK(kiln_eager_bias_add(t[8], p[5], 1, &t[9]));
  KILN_ASSERT_OK(kiln_eager_softmax(t[9], -1, &t[10]));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_read(t[10], &out));
  for (int i = 0; i < 11; ++i) {
    kiln_eager_tensor_release(t[i]);
  }
  for (int i = 0; i < NUM_PARAMS; ++i) {
    kiln_eager_tensor_release(p[i]);
  }
  return out;
}

static void assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, const char *what) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  assert_int_equal(kiln_tensor_element_count(got), 8);
  for (int64_t i = 0; i < kiln_tensor_element_count(got); ++i) {
    double a = kiln_tensor_element_as_double(got, i), b = kiln_tensor_element_as_double(want, i);
    if (fabs(a - b) > 1e-5) {
      fail_msg("%s: element %lld: %.8f, expected %.8f", what, (long long)i, a, b);
    }
  }
}

/* The network compiled (default target, opt_level 3) and run on `params`. */
static kiln_tensor_t *run_compiled(kiln_tensor_t *const *params) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("cnn", network, kiln_allocator_system(), &module));
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, NULL, &compiled));
  kiln_module_destroy(module);
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &gx));
  assert_int_equal(kiln_graph_executor_num_inputs(gx), NUM_PARAMS);
  for (int i = 0; i < NUM_PARAMS; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(params[i])));
  }
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &out));
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  return out;
}

static void test_eager_cnn_matches_the_interpreter(void **state) {
  (void)state;
  int64_t statuses = kiln_status_live_count();
  unsigned rng = 2024;
  kiln_tensor_t *params[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i) {
    params[i] = random_tensor(&rng, ranks[i], shapes[i]);
  }
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("cnn", network, kiln_allocator_system(), &module));
  int num_outputs = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_OK(kiln_interp_run(module, "main", NUM_PARAMS, params, kiln_allocator_system(),
                                 &num_outputs, &outputs));
  assert_int_equal(num_outputs, 1);
  kiln_tensor_t *graph_compiled = run_compiled(params);
  assert_close(graph_compiled, outputs[0], "graph compiler");

  /* Compiled kernels: two passes, the second one hits the cache only. */
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = false;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  for (int pass = 0; pass < 2; ++pass) {
    kiln_tensor_t *got = run_eager(params);
    assert_close(got, outputs[0], pass ? "compiled, second pass" : "compiled");
    assert_close(got, graph_compiled, "eager against the graph compiler");
    kiln_tensor_release(got);
  }
  kiln_eager_context_t *env = NULL;
  KILN_ASSERT_OK(kiln_eager_context_default(&env));
  kiln_kernel_cache_stats_t stats;
  kiln_kernel_cache_get_stats(env->kernel_cache, &stats);
  /* 11 calls, two relus and two of everything but softmax and flatten of
   * different shapes: conv x2, bias_add x2, relu x2, pool, gap, flatten,
   * dense, softmax. */
  assert_int_equal(stats.entries, 11);
  assert_int_equal(stats.compiles, stats.compiled + stats.reference);
  assert_true(stats.compiled >= 8);
  kiln_eager_shutdown();

  /* Reference kernels. */
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  kiln_tensor_t *got = run_eager(params);
  assert_close(got, outputs[0], "reference");
  kiln_tensor_release(got);
  kiln_eager_shutdown();

  kiln_tensor_release(graph_compiled);
  kiln_tensor_release(outputs[0]);
  kiln_allocator_free(kiln_allocator_system(), outputs);
  kiln_module_destroy(module);
  for (int i = 0; i < NUM_PARAMS; ++i) {
    kiln_tensor_release(params[i]);
  }
  assert_int_equal(kiln_status_live_count(), statuses);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eager_cnn_matches_the_interpreter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
