/*
 * The kernel cache is shared by the graph compiler and the eager VM
 * (src/compiler/kernel_cache.h). A network dense -> softmax compiled by the
 * graph compiler has a kernel of the softmax alone; an eager softmax over
 * the same type then runs that kernel without compiling, and in the other
 * order the graph compiler takes the eager call's kernel (its stats count
 * it reused). Both sides use their default targets: the eager VM's JIT
 * target and the graph compiler's object-file target make the same code. Both give the numbers of a
 * plain C reference; a compiled model that reused a kernel saves one library of its own that loads
 * and runs the same; private_kernels turns the sharing off.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>

#include "codegen/target.h"
#include "compiler/build.h"
#include "compiler/kernel_cache.h"
#include "eager/context.h"
#include "ir/text.h"
#include "kiln/eager.h"
#include "kiln_test.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define ROWS       4
#define COLS       6
#define DEPTH      10

static const char *const network =
    "def @main(%x: Tensor[(4, 10), float32], %w: Tensor[(6, 10), float32]) {\n"
    "  %0 = nn.dense(%x, %w);\n"
    "  nn.softmax(%0)\n"
    "}\n";

static float x_data[ROWS * DEPTH], w_data[COLS * DEPTH], h_data[ROWS * COLS];

static int make_data(void **state) {
  (void)state;
  unsigned rng = 7;
  for (int i = 0; i < ROWS * DEPTH; ++i) {
    rng = rng * 1103515245u + 12345u;
    x_data[i] = (float)((rng >> 8) % 2001) / 1000.0f - 1.0f;
  }
  for (int i = 0; i < COLS * DEPTH; ++i) {
    rng = rng * 1103515245u + 12345u;
    w_data[i] = (float)((rng >> 8) % 2001) / 1000.0f - 1.0f;
  }
  for (int r = 0; r < ROWS; ++r) { /* the softmax's input: x w^T */
    for (int c = 0; c < COLS; ++c) {
      float sum = 0;
      for (int k = 0; k < DEPTH; ++k) {
        sum += x_data[r * DEPTH + k] * w_data[c * DEPTH + k];
      }
      h_data[r * COLS + c] = sum;
    }
  }
  return 0;
}

/* softmax(x w^T) element i, in double. */
static double expected(int i) {
  int r = i / COLS;
  double max = -INFINITY, sum = 0;
  for (int c = 0; c < COLS; ++c) {
    max = fmax(max, h_data[r * COLS + c]);
  }
  for (int c = 0; c < COLS; ++c) {
    sum += exp(h_data[r * COLS + c] - max);
  }
  return exp(h_data[i] - max) / sum;
}

static void assert_softmax(const kiln_tensor_t *got, const char *what) {
  assert_int_equal(kiln_tensor_element_count(got), ROWS * COLS);
  for (int i = 0; i < ROWS * COLS; ++i) {
    double a = kiln_tensor_element_as_double(got, i), b = expected(i);
    if (fabs(a - b) > 1e-6 + 1e-4 * fabs(b)) {
      fail_msg("%s: element %d: %.8f, expected %.8f", what, i, a, b);
    }
  }
}

static kiln_compiled_t *compile(bool private_kernels) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("dense_softmax", network, kiln_allocator_system(), &module));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.private_kernels = private_kernels;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  kiln_module_destroy(module);
  return compiled;
}

static void run_executor(kiln_graph_executor_t *gx, const char *what) {
  kiln_tensor_t *x = NULL, *w = NULL, *out = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2,
                                         SHAPE(ROWS, DEPTH), x_data, sizeof(x_data), &x));
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2,
                                         SHAPE(COLS, DEPTH), w_data, sizeof(w_data), &w));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 0, kiln_tensor_dl(x)));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(gx, 1, kiln_tensor_dl(w)));
  KILN_ASSERT_OK(kiln_graph_executor_run(gx));
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(gx, 0, kiln_allocator_system(), &out));
  assert_softmax(out, what);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  kiln_tensor_release(w);
}

static void run_compiled(const kiln_compiled_t *compiled, const char *what) {
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &gx));
  run_executor(gx, what);
  kiln_graph_executor_destroy(gx);
}

/* The eager softmax of h; the eager cache's counts after it. */
static void run_eager_softmax(kiln_kernel_cache_stats_t *out_stats) {
  kiln_eager_tensor_t *h = NULL, *y = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_from_host(KILN_DTYPE_FLOAT32, 2, SHAPE(ROWS, COLS), h_data,
                                             sizeof(h_data), &h));
  KILN_ASSERT_OK(kiln_eager_softmax(h, -1, &y));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(kiln_eager_tensor_read(y, &out));
  assert_softmax(out, "eager softmax");
  kiln_tensor_release(out); /* the read's reference */
  kiln_eager_tensor_release(h);
  kiln_eager_tensor_release(y);
  kiln_eager_context_t *env = NULL;
  KILN_ASSERT_OK(kiln_eager_context_default(&env));
  kiln_kernel_cache_get_stats(env->kernel_cache, out_stats);
}

static kiln_eager_options_t compiled_kernels(void) {
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = false;
  /* The defaults: "llvm -jit -noasm" against the graph compiler's "llvm"
   * (the same code, kept in memory), or "c -march=native" for both. */
  options.target = kiln_codegen_default_jit_target();
  return options;
}

static void test_eager_runs_the_graph_compilers_kernel(void **state) {
  (void)state;
  kiln_compiled_t *compiled = compile(false);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  assert_int_equal(stats.num_kernels_reused, 0);
  run_compiled(compiled, "compiled");
  kiln_eager_options_t options = compiled_kernels();
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  kiln_kernel_cache_stats_t eager;
  run_eager_softmax(&eager);
  assert_int_equal(eager.lookups, 1);
  assert_int_equal(eager.hits, 1);
  assert_int_equal(eager.compiles, 0);
  kiln_eager_shutdown();
  kiln_compiled_destroy(compiled);
}

static void test_graph_compiler_reuses_the_eager_kernel(void **state) {
  (void)state;
  kiln_eager_options_t options = compiled_kernels();
  KILN_ASSERT_OK(kiln_eager_initialize(&options));
  kiln_kernel_cache_stats_t eager;
  run_eager_softmax(&eager);
  assert_int_equal(eager.hits, 0); /* the last holder of the store went with the last test */
  assert_int_equal(eager.compiles, 1);
  assert_int_equal(eager.compiled, 1);

  kiln_compiled_t *compiled = compile(false);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  assert_true(stats.num_kernels >= 2);
  assert_int_equal(stats.num_kernels_reused, 1);
  run_compiled(compiled, "compiled, softmax reused");
  /* Saved, it is one library of its own that runs alone. */
  char *dir = kiln_test_make_temp_dir();
  KILN_ASSERT_OK(kiln_compiled_save(compiled, dir));
  kiln_graph_executor_t *gx = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_load(kiln_allocator_system(), dir, &gx));
  run_executor(gx, "saved and loaded");
  kiln_graph_executor_destroy(gx);
  kiln_test_remove_dir(dir);
  free(dir);

  /* private_kernels: nothing taken. */
  kiln_compiled_t *own = compile(true);
  kiln_compiled_get_stats(own, &stats);
  assert_int_equal(stats.num_kernels_reused, 0);
  run_compiled(own, "compiled, private kernels");
  kiln_compiled_destroy(own);
  kiln_eager_shutdown();
  /* The compiled model keeps the kernels it reused. */
  run_compiled(compiled, "compiled, after the eager environment went");
  kiln_compiled_destroy(compiled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eager_runs_the_graph_compilers_kernel),
      cmocka_unit_test(test_graph_compiler_reuses_the_eager_kernel),
  };
  return cmocka_run_group_tests(tests, make_data, NULL);
}
