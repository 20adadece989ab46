/*
 * A transformer encoder layer (BERT's: 12 heads of 32 over 384, a
 * 1536-wide erf-GELU feed-forward, post-norm) typed with a symbolic
 * sequence length N, its weights bound as constants, compiled once (AUTO
 * takes the VM) and run at N = 1, 17, 64 and 128 on one executor, against
 * the reference interpreter at each; typed N<=128, its values planned at
 * N = 128 (no storage sized per run but the result's), the same.
 *
 * With KILN_BENCH_ENCODER=<runs> in the environment it also compiles the
 * same layer with N = 64 (the graph executor) and prints the median time
 * of each at length 64 and their profiles; that is a measurement, not a
 * check. With KILN_ENCODER_DUMP=<folder> it writes every kernel of each
 * compile after the loop-IR passes to <folder>/symbolic.tir and
 * <folder>/static.tir (what docs/dynamic-shapes.md's figures were read from).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/params.h"
#include "ir/text.h"
#include "kiln/compiler.h"
#include "kiln_compute_test.h"
#include "kiln_test.h"
#include "tir/printer.h"

static const char layer[] =
    "def @main(%%x: Tensor[(1, %s, 384), float32],\n"
    "  %%wq: Tensor[(384, 384), float32], %%bq: Tensor[(384), float32],\n"
    "  %%wk: Tensor[(384, 384), float32], %%bk: Tensor[(384), float32],\n"
    "  %%wv: Tensor[(384, 384), float32], %%bv: Tensor[(384), float32],\n"
    "  %%wo: Tensor[(384, 384), float32], %%bo: Tensor[(384), float32],\n"
    "  %%g1: Tensor[(384), float32], %%e1: Tensor[(384), float32],\n"
    "  %%w1: Tensor[(1536, 384), float32], %%b1: Tensor[(1536), float32],\n"
    "  %%w2: Tensor[(384, 1536), float32], %%b2: Tensor[(384), float32],\n"
    "  %%g2: Tensor[(384), float32], %%e2: Tensor[(384), float32],\n"
    "  %%scale: Tensor[(), float32], %%rsqrt2: Tensor[(), float32],\n"
    "  %%one: Tensor[(), float32], %%half: Tensor[(), float32]) {\n"
    "  %%0 = add(nn.dense(%%x, %%wq, units=384), %%bq);\n"
    "  %%1 = reshape(transpose(reshape(%%0, newshape=[0, 0, 12, 32]), axes=[0, 2, 1, 3]), "
    "newshape=[12, -1, 32]);\n"
    "  %%2 = add(nn.dense(%%x, %%wk, units=384), %%bk);\n"
    "  %%3 = reshape(transpose(reshape(%%2, newshape=[0, 0, 12, 32]), axes=[0, 2, 1, 3]), "
    "newshape=[12, -1, 32]);\n"
    "  %%4 = add(nn.dense(%%x, %%wv, units=384), %%bv);\n"
    "  %%5 = reshape(transpose(reshape(%%4, newshape=[0, 0, 12, 32]), axes=[0, 2, 1, 3]), "
    "newshape=[12, -1, 32]);\n"
    "  %%6 = nn.softmax(multiply(nn.batch_matmul(%%1, %%3), %%scale));\n"
    "  %%7 = nn.batch_matmul(%%6, %%5, transpose_b=False);\n"
    "  %%8 = reshape(transpose(reshape(%%7, newshape=[1, 12, -1, 32]), axes=[0, 2, 1, 3]), "
    "newshape=[0, 0, 384]);\n"
    "  %%9 = add(add(nn.dense(%%8, %%wo, units=384), %%bo), %%x);\n"
    "  %%10 = nn.layer_norm(%%9, %%g1, %%e1, axis=-1);\n"
    "  %%11 = add(nn.dense(%%10, %%w1, units=1536), %%b1);\n"
    "  %%12 = multiply(multiply(%%11, add(erf(multiply(%%11, %%rsqrt2)), %%one)), %%half);\n"
    "  %%13 = add(add(nn.dense(%%12, %%w2, units=384), %%b2), %%10);\n"
    "  nn.layer_norm(%%13, %%g2, %%e2, axis=-1)\n"
    "}\n";

typedef struct weight_t {
  const char *name;
  int ndim;
  int64_t shape[2];
  double lo, hi;
} weight_t;

static const weight_t weights[] = {
    {"wq", 2, {384, 384}, -0.05, 0.05},  {"bq", 1, {384}, -0.1, 0.1},
    {"wk", 2, {384, 384}, -0.05, 0.05},  {"bk", 1, {384}, -0.1, 0.1},
    {"wv", 2, {384, 384}, -0.05, 0.05},  {"bv", 1, {384}, -0.1, 0.1},
    {"wo", 2, {384, 384}, -0.05, 0.05},  {"bo", 1, {384}, -0.1, 0.1},
    {"g1", 1, {384}, 0.8, 1.2},          {"e1", 1, {384}, -0.1, 0.1},
    {"w1", 2, {1536, 384}, -0.05, 0.05}, {"b1", 1, {1536}, -0.1, 0.1},
    {"w2", 2, {384, 1536}, -0.03, 0.03}, {"b2", 1, {384}, -0.1, 0.1},
    {"g2", 1, {384}, 0.8, 1.2},          {"e2", 1, {384}, -0.1, 0.1},
};

static kiln_tensor_t *scalar(float value) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 0, NULL, &t));
  *(float *)kiln_tensor_data(t) = value;
  return t;
}

static void make_params(kiln_params_t *params) {
  kiln_params_initialize(params, kiln_allocator_system());
  for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); ++i) {
    const weight_t *w = &weights[i];
    kiln_tensor_t *t = random_tensor(KILN_DTYPE_FLOAT32, w->ndim, w->shape, w->lo, w->hi);
    KILN_ASSERT_OK(kiln_params_add(params, w->name, t));
    kiln_tensor_release(t);
  }
  const char *names[] = {"scale", "rsqrt2", "one", "half"};
  const float values[] = {0.17677669f, 0.70710678f, 1.0f, 0.5f};
  for (int i = 0; i < 4; ++i) {
    kiln_tensor_t *t = scalar(values[i]);
    KILN_ASSERT_OK(kiln_params_add(params, names[i], t));
    kiln_tensor_release(t);
  }
}

/* The layer with N as `n` (a name or a size), its weights bound. */
static kiln_module_t *parse_layer(const char *n, const kiln_params_t *params) {
  char text[sizeof(layer) + 32];
  snprintf(text, sizeof(text), layer, n);
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("encoder", text, kiln_allocator_system(), &m));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_OK(kiln_ir_bind_params(m, "main", params));
  return m;
}

static kiln_compiled_t *compile(const char *n, const kiln_params_t *params) {
  kiln_module_t *m = parse_layer(n, params);
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), m, &options, &compiled));
  kiln_module_destroy(m);
  return compiled;
}

static void assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, int64_t n) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  assert_int_equal(kiln_tensor_shape(got)[1], n);
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i), w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-4 + 1e-3 * fabs(w))) {
      fail_msg("N=%lld element %lld: %.9g, %.9g in the reference", (long long)n, (long long)i, g,
               w);
    }
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median milliseconds of `runs` runs of `executor` on its inputs. */
static double median_ms(kiln_graph_executor_t *executor, int runs) {
  double *times = calloc((size_t)runs, sizeof(double));
  assert_non_null(times);
  KILN_ASSERT_OK(kiln_graph_executor_run(executor)); /* warm up */
  for (int r = 0; r < runs; ++r) {
    double start = now();
    KILN_ASSERT_OK(kiln_graph_executor_run(executor));
    times[r] = 1e3 * (now() - start);
  }
  qsort(times, (size_t)runs, sizeof(double), compare_doubles);
  double median = times[runs / 2];
  free(times);
  return median;
}

/* Every kernel of `compiled` after the loop-IR passes, to <KILN_ENCODER_DUMP>/<name>.tir. */
static void dump_kernels(const kiln_compiled_t *compiled, const char *name) {
  const char *folder = getenv("KILN_ENCODER_DUMP");
  if (!folder || !folder[0]) {
    return;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.tir", folder, name);
  FILE *file = fopen(path, "w");
  assert_non_null(file);
  for (int i = 0; i < compiled->graph.num_funcs; ++i) {
    char *text = NULL;
    KILN_ASSERT_OK(
        kiln_tir_prim_func_to_text(kiln_allocator_system(), compiled->lowered[i], &text));
    fprintf(file, "%s\n", text);
    kiln_allocator_free(kiln_allocator_system(), text);
  }
  assert_int_equal(fclose(file), 0);
}

static void bench(kiln_graph_executor_t *symbolic, const kiln_params_t *params, int runs) {
  kiln_compiled_t *fixed = compile("64", params);
  kiln_graph_executor_t *graph = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(fixed, &graph));
  kiln_tensor_t *x = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){1, 64, 384}, -1, 1);
  KILN_ASSERT_OK(kiln_graph_executor_set_input(symbolic, 0, kiln_tensor_dl(x)));
  KILN_ASSERT_OK(kiln_graph_executor_set_input(graph, 0, kiln_tensor_dl(x)));
  for (int round = 0; round < 3; ++round) {
    double s = median_ms(symbolic, runs), g = median_ms(graph, runs);
    print_message("encoder at N=64, round %d: symbolic (VM) %.3f ms, static (graph executor) "
                  "%.3f ms, ratio %.3f\n",
                  round, s, g, s / g);
  }
  kiln_graph_executor_t *const executors[2] = {symbolic, graph};
  for (int e = 0; e < 2; ++e) { /* where the time goes, kernel by kernel */
    kiln_graph_profile_t *profile = NULL;
    char *text = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_profile(executors[e], 20, &profile));
    KILN_ASSERT_OK(kiln_graph_profile_format(profile, kiln_allocator_system(), &text));
    printf("%s profile:\n%s\n", e ? "static" : "symbolic", text); /* print_message truncates */
    kiln_allocator_free(kiln_allocator_system(), text);
    kiln_graph_profile_destroy(profile);
  }
  kiln_tensor_release(x);
  kiln_graph_executor_destroy(graph);
  kiln_compiled_destroy(fixed);
}

/* `vm` against `reference` at N = 1, 17, 64 and 128. */
static void run_at_four_lengths(kiln_graph_executor_t *vm, kiln_module_t *reference) {
  const int64_t lengths[] = {1, 17, 64, 128};
  for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); ++l) {
    int64_t n = lengths[l];
    kiln_tensor_t *x = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){1, n, 384}, -1, 1);
    int count = 0;
    kiln_tensor_t **want = NULL;
    KILN_ASSERT_OK(
        kiln_interp_run(reference, "main", 1, &x, kiln_allocator_system(), &count, &want));
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, 0, kiln_tensor_dl(x)));
    KILN_ASSERT_OK(kiln_graph_executor_run(vm));
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_copy_output(vm, 0, kiln_allocator_system(), &got));
    assert_close(got, want[0], n);
    kiln_tensor_release(got);
    kiln_tensor_release(want[0]);
    kiln_allocator_free(kiln_allocator_system(), want);
    kiln_tensor_release(x);
  }
}

/* How many times `op` occurs in the program's text (an instruction's
 * name, quoted). */
static int count_in_program(const kiln_compiled_t *compiled, const char *op) {
  char quoted[64];
  snprintf(quoted, sizeof(quoted), "\"%s\"", op);
  int count = 0;
  for (const char *at = strstr(compiled->vm_json, quoted); at; at = strstr(at + 1, quoted)) {
    ++count;
  }
  return count;
}

static void test_encoder_at_four_lengths(void **state) {
  (void)state;
  kiln_params_t params;
  make_params(&params);
  kiln_module_t *reference = parse_layer("N", &params);
  kiln_compiled_t *compiled = compile("N", &params);
  assert_int_equal(kiln_compiled_executor(compiled), KILN_EXECUTOR_VM);
  dump_kernels(compiled, "symbolic");
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  run_at_four_lengths(vm, reference);
  if (getenv("KILN_ENCODER_DUMP")) {
    kiln_compiled_t *fixed = compile("64", &params);
    dump_kernels(fixed, "static");
    kiln_compiled_destroy(fixed);
  }
  const char *runs = getenv("KILN_BENCH_ENCODER");
  if (runs && atoi(runs) > 0) {
    bench(vm, &params, atoi(runs));
  }
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
  kiln_params_deinitialize(&params);
}

/* With N<=128 the values are planned at N = 128 (vm_symbolic.c): fewer
 * bytes than without reuse, no storage sized per run but the result's
 * (main's caller owns it), and the same results at each length. */
static void test_bounded_encoder_at_four_lengths(void **state) {
  (void)state;
  kiln_params_t params;
  make_params(&params);
  kiln_module_t *reference = parse_layer("N<=128", &params);
  kiln_compiled_t *compiled = compile("N<=128", &params);
  kiln_compile_stats_t stats;
  kiln_compiled_get_stats(compiled, &stats);
  print_message("encoder, N<=128: %d alloc_storage_shape, %zu bytes planned, %zu without reuse\n",
                count_in_program(compiled, "alloc_storage_shape"), stats.planned_bytes,
                stats.tensor_bytes);
  assert_true(stats.planned_bytes > 0 && stats.planned_bytes < stats.tensor_bytes);
  assert_int_equal(count_in_program(compiled, "alloc_storage_shape"), 1); /* the result's */
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  run_at_four_lengths(vm, reference);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
  kiln_params_deinitialize(&params);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_encoder_at_four_lengths),
      cmocka_unit_test(test_bounded_encoder_at_four_lengths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
