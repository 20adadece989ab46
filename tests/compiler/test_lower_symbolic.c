/*
 * Kernels over symbolic dims (compiler/lower_symbolic.c, tir/generalize.h):
 * each group below is lowered once with its sequence dim n (and in one
 * case a batch dim b) symbolic, then run at n = 1, 17, 64 and 128 on the
 * loop-IR interpreter (before the lowering passes), and through the C
 * backend and, when kiln has it, the LLVM backend (after them), against
 * the reference interpreter on the symbolic module. The groups cover the
 * default schedule (elementwise with broadcasting, softmax, layer_norm,
 * reductions, a mean's 1/n, transpose and reshape) and the tuned ones
 * (dense with its epilogue, batch_matmul with n as M, N and K). Then the
 * errors: arguments whose dims disagree (n of one, another n of the
 * other) are refused by the kernel naming the argument and the expected
 * shape; generalizing runs that do not fit is refused naming the values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/target.h"
#include "compiler/lower.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/text.h"
#include "kiln/compiler.h"
#include "kiln_compute_test.h"
#include "kiln_test.h"
#include "te/lower.h"
#include "tir/generalize.h"
#include "tir/interp.h"
#include "tir/printer.h"
#include "tir/transform.h"

#define MAX_INPUTS 4

/* A dim of -1 is n, -2 is b. */
typedef struct group_t {
  const char *name;
  const char *text;
  int num_inputs;
  int ndim[MAX_INPUTS];
  int64_t shape[MAX_INPUTS][4];
} group_t;

static const int64_t sizes[][2] = {{1, 1}, {17, 3}, {64, 2}, {128, 1}}; /* n, b */

static bool has_llvm(void) {
  return strncmp(kiln_compiler_default_target(), "llvm", 4) == 0;
}

static kiln_module_t *parse(const char *text) {
  kiln_module_t *m = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("group", text, kiln_allocator_system(), &m));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  return m;
}

static void assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, const char *where,
                         const char *group, int64_t n) {
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i);
    double w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-5 + 1e-4 * fabs(w))) {
      fail_msg("%s at n=%lld, %s: element %lld is %.9g, %.9g in the reference", group, (long long)n,
               where, (long long)i, g, w);
    }
  }
}

static void make_inputs(const group_t *g, int64_t n, int64_t b, kiln_tensor_t **inputs) {
  for (int i = 0; i < g->num_inputs; ++i) {
    int64_t shape[4];
    for (int d = 0; d < g->ndim[i]; ++d) {
      int64_t s = g->shape[i][d];
      shape[d] = s == -1 ? n : s == -2 ? b : s;
    }
    inputs[i] = random_tensor(KILN_DTYPE_FLOAT32, g->ndim[i], shape, -1, 1);
  }
}

/* Outputs shaped like the reference's, poisoned. */
static void make_outputs(int count, kiln_tensor_t *const *want, kiln_tensor_t **out) {
  for (int i = 0; i < count; ++i) {
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), kiln_tensor_dtype(want[i]),
                                      kiln_tensor_ndim(want[i]), kiln_tensor_shape(want[i]),
                                      &out[i]));
    memset(kiln_tensor_data(out[i]), 0x7f, kiln_tensor_byte_size(out[i]));
  }
}

typedef struct built_t {
  const kiln_tir_prim_func_t *func;
  kiln_runtime_module_t *c;
  kiln_runtime_module_t *llvm;
} built_t;

static void build(kiln_arena_t *arena, kiln_module_t *m, built_t *out) {
  kiln_schedule_target_t target = kiln_schedule_target_host();
  KILN_ASSERT_OK(kiln_compiler_lower_function(kiln_module_get_function(m, "main"), &target, arena,
                                              "fused", &out->func));
  const kiln_tir_prim_func_t *passed = NULL;
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(arena, out->func, &options, &passed));
  KILN_ASSERT_OK(
      kiln_codegen_build(kiln_allocator_system(), "c -march=native", &passed, 1, &out->c));
  out->llvm = NULL;
  if (has_llvm()) {
    KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "llvm", &passed, 1, &out->llvm));
  }
}

static void run_backend(kiln_runtime_module_t *module, const char *where, const group_t *g,
                        int64_t n, int num_args, kiln_tensor_t **args, int num_want,
                        kiln_tensor_t *const *want) {
  for (int o = 0; o < num_want; ++o) {
    memset(kiln_tensor_data(args[g->num_inputs + o]), 0x7f,
           kiln_tensor_byte_size(args[g->num_inputs + o]));
  }
  KILN_ASSERT_OK(kiln_runtime_module_call(module, "fused", num_args, args));
  for (int o = 0; o < num_want; ++o) {
    assert_close(args[g->num_inputs + o], want[o], where, g->name, n);
  }
}

static void check_size(const group_t *g, kiln_module_t *m, const built_t *built, int64_t n,
                       int64_t b) {
  kiln_tensor_t *args[MAX_INPUTS + 4];
  make_inputs(g, n, b, args);
  int num_want = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(
      kiln_interp_run(m, "main", g->num_inputs, args, kiln_allocator_system(), &num_want, &want));
  assert_true(num_want <= 4);
  make_outputs(num_want, want, args + g->num_inputs);
  int num_args = g->num_inputs + num_want;
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), built->func, num_args, args));
  for (int o = 0; o < num_want; ++o) {
    assert_close(args[g->num_inputs + o], want[o], "loop-IR interpreter", g->name, n);
  }
  run_backend(built->c, "C backend", g, n, num_args, args, num_want, want);
  if (built->llvm) {
    run_backend(built->llvm, "LLVM backend", g, n, num_args, args, num_want, want);
  }
  for (int i = 0; i < num_args; ++i) {
    kiln_tensor_release(args[i]);
  }
  for (int o = 0; o < num_want; ++o) {
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
}

static void check_group(const group_t *g) {
  kiln_module_t *m = parse(g->text);
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  built_t built;
  build(&arena, m, &built);
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    check_size(g, m, &built, sizes[s][0], sizes[s][1]);
  }
  kiln_runtime_module_release(built.c);
  if (built.llvm) {
    kiln_runtime_module_release(built.llvm);
  }
  kiln_arena_deinitialize(&arena);
  kiln_module_destroy(m);
}

static void test_dense_add_relu(void **state) {
  (void)state;
  check_group(&(group_t){
      "dense_add_relu",
      "def @main(%x: Tensor[(n, 64), float32], %w: Tensor[(48, 64), float32], "
      "%bias: Tensor[(48), float32]) { nn.relu(add(nn.dense(%x, %w, units=48), %bias)) }",
      3,
      {2, 2, 1},
      {{-1, 64}, {48, 64}, {48}}});
}

static void test_softmax(void **state) {
  (void)state;
  check_group(&(group_t){"softmax",
                         "def @main(%x: Tensor[(4, n, n), float32]) { nn.softmax(%x) }",
                         1,
                         {3},
                         {{4, -1, -1}}});
}

static void test_layer_norm(void **state) {
  (void)state;
  check_group(&(group_t){"layer_norm",
                         "def @main(%x: Tensor[(n, 64), float32], %g: Tensor[(64), float32], "
                         "%e: Tensor[(64), float32]) { nn.layer_norm(%x, %g, %e, axis=-1) }",
                         3,
                         {2, 1, 1},
                         {{-1, 64}, {64}, {64}}});
}

static void test_batch_matmul_scores(void **state) {
  (void)state;
  check_group(&(group_t){"batch_matmul_scores",
                         "def @main(%q: Tensor[(4, n, 16), float32], %k: Tensor[(4, n, 16), "
                         "float32]) { nn.batch_matmul(%q, %k) }",
                         2,
                         {3, 3},
                         {{4, -1, 16}, {4, -1, 16}}});
}

static void test_batch_matmul_context(void **state) {
  (void)state;
  check_group(&(group_t){"batch_matmul_context",
                         "def @main(%p: Tensor[(4, n, n), float32], %v: Tensor[(4, n, 16), "
                         "float32]) { nn.batch_matmul(%p, %v, transpose_b=False) }",
                         2,
                         {3, 3},
                         {{4, -1, -1}, {4, -1, 16}}});
}

static void test_transpose_reshape(void **state) {
  (void)state;
  check_group(&(group_t){"transpose_reshape",
                         "def @main(%x: Tensor[(n, 4, 16), float32]) { "
                         "reshape(transpose(%x, axes=[1, 0, 2]), newshape=[4, -1]) }",
                         1,
                         {3},
                         {{-1, 4, 16}}});
}

static void test_mask_broadcast(void **state) {
  (void)state;
  check_group(&(group_t){"mask_broadcast",
                         "def @main(%x: Tensor[(4, n, n), float32], %mask: Tensor[(n), "
                         "float32]) { add(%x, %mask) }",
                         2,
                         {3, 1},
                         {{4, -1, -1}, {-1}}});
}

static void test_mean_over_n(void **state) {
  (void)state;
  check_group(&(group_t){"mean_over_n",
                         "def @main(%x: Tensor[(n, 32), float32]) { mean(%x, axis=[0]) }",
                         1,
                         {2},
                         {{-1, 32}}});
}

static void test_two_dims(void **state) {
  (void)state;
  check_group(&(group_t){"two_dims",
                         "def @main(%x: Tensor[(b, n, 16), float32]) { "
                         "sum(exp(%x), axis=[1]) }",
                         1,
                         {3},
                         {{-2, -1, 16}}});
}

/* x and y both (n, 8): given 5 and 6 rows, the kernel names the argument. */
static void test_mismatching_arguments(void **state) {
  (void)state;
  kiln_module_t *m = parse("def @main(%x: Tensor[(n, 8), float32], %y: Tensor[(n, 8), float32]) "
                           "{ add(%x, %y) }");
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  built_t built;
  build(&arena, m, &built);
  kiln_tensor_t *args[3] = {
      random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){5, 8}, -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){6, 8}, -1, 1),
      random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){5, 8}, -1, 1),
  };
  KILN_ASSERT_STATUS(kiln_runtime_module_call(built.c, "fused", 3, args), INTERNAL,
                     "fused: argument 1 has shape (6, 8), expected (n, 8)");
  if (built.llvm) {
    KILN_ASSERT_STATUS(kiln_runtime_module_call(built.llvm, "fused", 3, args), INTERNAL,
                       "argument 1 has shape (6, 8), expected (n, 8)");
  }
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(args[i]);
  }
  kiln_runtime_module_release(built.c);
  if (built.llvm) {
    kiln_runtime_module_release(built.llvm);
  }
  kiln_arena_deinitialize(&arena);
  kiln_module_destroy(m);
}

/* An elementwise kernel over (e) whose body adds `constant(e)`. */
typedef struct probe_body_t {
  double value;
} probe_body_t;

static const kiln_tir_expr_t *probe_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const kiln_te_tensor_t *x = ((const kiln_te_tensor_t *const *)user)[0];
  const probe_body_t *body = ((const void *const *)user)[1];
  return kiln_tir_b_add(b, kiln_te_read(b, x, 1, indices),
                        kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, body->value));
}

static const kiln_tir_prim_func_t *probe_kernel(kiln_arena_t *arena, int64_t extent, double value) {
  const kiln_te_tensor_t *x = NULL, *y = NULL;
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "x", 1, &extent, KILN_DTYPE_FLOAT32, &x));
  probe_body_t *body = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(arena, sizeof(*body), _Alignof(probe_body_t), (void **)&body));
  body->value = value;
  const void **user = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(arena, 2 * sizeof(void *), _Alignof(void *), (void **)&user));
  user[0] = x;
  user[1] = body;
  KILN_ASSERT_OK(kiln_te_compute(arena, "y", 1, &extent, 1, &x, probe_body, user, &y));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 1, &y, &s));
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "k", 2, (const kiln_te_tensor_t *[]){x, y}, &func));
  return func;
}

/* The runs' constants must be expressions of the probes; a float constant
 * that is n * n * n rounded to float32 (not exactly a cube above 2^24) is
 * not one kiln fits. */
static void test_unfitted_constant(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_tir_generalize_vars_t vars = {.count = 1, .names = {"n"}};
  const int64_t probes[4] = {257, 509, 61, 97};
  const kiln_tir_prim_func_t *runs[4];
  for (int r = 0; r < 4; ++r) {
    vars.probes[r][0] = probes[r];
    runs[r] = probe_kernel(&arena, probes[r], (double)probes[r]);
  }
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_tir_generalize(&arena, runs, &vars, &func));
  for (int r = 0; r < 4; ++r) {
    double p = (double)probes[r];
    runs[r] = probe_kernel(&arena, probes[r], p * p * p);
  }
  KILN_ASSERT_STATUS(kiln_tir_generalize(&arena, runs, &vars, &func), UNIMPLEMENTED,
                     "generalize k: the float constant 16974592, 131872232, 226981, 912673 in "
                     "the probe runs is not an expression of the symbolic dims");
  kiln_arena_deinitialize(&arena);
}

/* w[i] = x[i] over (12 e + 190), then y[i] = z[i] + x[i] over (e) split
 * by 16 (z of (e)): the first extent the runs' body shows, 12 n + 190,
 * fits the split's outer extent as (12 n + 190) // 191 at the four probes
 * by coincidence; the smallest divisor first finds (n + 15) // 16 (n, the
 * guard's, comes later). */
static const kiln_tir_expr_t *sum_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const kiln_te_tensor_t *const *in = user;
  return kiln_tir_b_add(b, kiln_te_read(b, in[0], 1, indices), kiln_te_read(b, in[1], 1, indices));
}

static const kiln_tir_expr_t *copy_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const kiln_te_tensor_t *const *in = user;
  return kiln_te_read(b, in[1], 1, indices);
}

static const kiln_tir_prim_func_t *split_kernel(kiln_arena_t *arena, int64_t extent) {
  const kiln_te_tensor_t **in = NULL, *out[2] = {NULL, NULL};
  KILN_ASSERT_OK(kiln_arena_allocate(arena, 2 * sizeof(*in), _Alignof(void *), (void **)&in));
  int64_t wide = 12 * extent + 190;
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "z", 1, &extent, KILN_DTYPE_FLOAT32, &in[0]));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "x", 1, &wide, KILN_DTYPE_FLOAT32, &in[1]));
  KILN_ASSERT_OK(kiln_te_compute(arena, "w", 1, &wide, 2, in, copy_body, in, &out[0]));
  KILN_ASSERT_OK(kiln_te_compute(arena, "y", 1, &extent, 2, in, sum_body, in, &out[1]));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 2, out, &s));
  s->probe = true;
  kiln_te_stage_t *st = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, out[1], &st));
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, st, kiln_te_tensor_axis(out[1], 0), 16, &o, &i));
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(
      kiln_te_lower(s, "k", 4, (const kiln_te_tensor_t *[]){in[0], in[1], out[0], out[1]}, &func));
  return func;
}

static void test_smallest_divisor_first(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_tir_generalize_vars_t vars = {.count = 1, .names = {"n"}};
  const int64_t probes[4] = {257, 509, 61, 97};
  const kiln_tir_prim_func_t *runs[4];
  for (int r = 0; r < 4; ++r) {
    vars.probes[r][0] = probes[r];
    runs[r] = split_kernel(&arena, probes[r]);
  }
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_tir_generalize(&arena, runs, &vars, &func));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, &text));
  if (!strstr(text, "T.serial((n + 15) // 16)")) {
    fail_msg("the split's outer extent is not (n + 15) // 16:\n%s", text);
  }
  free(text);
  kiln_arena_deinitialize(&arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dense_add_relu),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_layer_norm),
      cmocka_unit_test(test_batch_matmul_scores),
      cmocka_unit_test(test_batch_matmul_context),
      cmocka_unit_test(test_transpose_reshape),
      cmocka_unit_test(test_mask_broadcast),
      cmocka_unit_test(test_mean_over_n),
      cmocka_unit_test(test_two_dims),
      cmocka_unit_test(test_mismatching_arguments),
      cmocka_unit_test(test_unfitted_constant),
      cmocka_unit_test(test_smallest_divisor_first),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
