/*
 * Tests of tensor expressions, schedules and lowering: for each primitive
 * the printed loop IR (exact) and the numbers (the lowered PrimFunc run on
 * the loop-IR interpreter against plain C loops): an elementwise add on 7x13
 * split by 4 (tail guard), vectorized and parallel; a 7x13x5 matmul with its
 * reduce axis split and the loops reordered; fuse then split; split_nparts;
 * unroll and pragma; max and min reductions (a reduce axis not starting at
 * 0); compute_inline and an intermediate stage. Then every error path and an
 * allocation-failure sweep over building, scheduling and lowering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "te/lower.h"
#include "tir/interp.h"
#include "tir/printer.h"

#define M 7
#define N 13
#define K 5

typedef struct fixture_t {
  kiln_arena_t arena;
} fixture_t;

static void fixture_init(fixture_t *f) {
  kiln_arena_initialize(&f->arena, kiln_allocator_system(), 0);
}

static void fixture_done(fixture_t *f) {
  kiln_arena_deinitialize(&f->arena);
}

static float value_at(int i, int salt) {
  return (float)((i * 37 + salt * 11) % 23) / 7.0f - 1.5f;
}

/* ---- compute rules ---- */

typedef struct rule_t {
  const kiln_te_tensor_t *a;
  const kiln_te_tensor_t *b;
  const kiln_te_iter_var_t *k;
  const kiln_te_iter_var_t *b_axis;
  double scale;
} rule_t;

/* a[i, j] + b[i, j] */
static const kiln_tir_expr_t *add_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                       void *user) {
  const rule_t *r = user;
  return kiln_tir_b_add(b, kiln_te_read(b, r->a, 2, ix), kiln_te_read(b, r->b, 2, ix));
}

/* a[i, k] * b[k, j] */
static const kiln_tir_expr_t *matmul_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                          void *user) {
  const rule_t *r = user;
  const kiln_tir_expr_t *k = kiln_tir_b_v(r->k->var);
  const kiln_tir_expr_t *ai[] = {ix[0], k};
  const kiln_tir_expr_t *bi[] = {k, ix[1]};
  return kiln_tir_b_mul(b, kiln_te_read(b, r->a, 2, ai), kiln_te_read(b, r->b, 2, bi));
}

/* a[i, k] */
static const kiln_tir_expr_t *row_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                       void *user) {
  const rule_t *r = user;
  const kiln_tir_expr_t *ai[] = {ix[0], kiln_tir_b_v(r->k->var)};
  return kiln_te_read(b, r->a, 2, ai);
}

/* a[i, j] * scale */
static const kiln_tir_expr_t *scale_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                         void *user) {
  const rule_t *r = user;
  return kiln_tir_b_mul(b, kiln_te_read(b, r->a, 2, ix), kiln_tir_b_f32(b, r->scale));
}

/* ---- running and printing ---- */

static kiln_tensor_t *make_tensor(int ndim, const int64_t *shape, int salt) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &t));
  float *data = kiln_tensor_data(t);
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    count *= shape[d];
  }
  for (int64_t i = 0; i < count; ++i) {
    data[i] = salt < 0 ? -99.0f : value_at((int)i, salt);
  }
  return t;
}

static void check_text(const kiln_tir_prim_func_t *func, const char *expected) {
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, &text));
  if (strcmp(text, expected) != 0) {
    fprintf(stderr, "lowered to:\n%s\nexpected:\n%s\n", text, expected);
  }
  assert_string_equal(text, expected);
  free(text);
}

static void check_floats(const kiln_tensor_t *t, const float *expected, int count) {
  const float *got = kiln_tensor_data(t);
  for (int i = 0; i < count; ++i) {
    if (got[i] != expected[i]) {
      print_error("element %d: got %.9g, expected %.9g\n", i, (double)got[i], (double)expected[i]);
    }
    assert_true(got[i] == expected[i]);
  }
}

static void run(const kiln_tir_prim_func_t *func, int n, kiln_tensor_t *const *args) {
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, n, args));
}

static void release_all(int n, kiln_tensor_t *const *args) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(args[i]);
  }
}

/* A = placeholder 7x13, B = placeholder 7x13, C = A + B. */
static void make_add(fixture_t *f, const char *name, rule_t *r, const kiln_te_tensor_t **out_c) {
  const int64_t shape[] = {M, N};
  KILN_ASSERT_OK(kiln_te_placeholder(&f->arena, "A", 2, shape, KILN_DTYPE_FLOAT32, &r->a));
  KILN_ASSERT_OK(kiln_te_placeholder(&f->arena, "B", 2, shape, KILN_DTYPE_FLOAT32, &r->b));
  const kiln_te_tensor_t *inputs[] = {r->a, r->b};
  KILN_ASSERT_OK(kiln_te_compute(&f->arena, name, 2, shape, 2, inputs, add_rule, r, out_c));
}

static void check_add(const kiln_tir_prim_func_t *func) {
  const int64_t shape[] = {M, N};
  kiln_tensor_t *args[] = {make_tensor(2, shape, 1), make_tensor(2, shape, 2),
                           make_tensor(2, shape, -1)};
  run(func, 3, args);
  float expected[M * N];
  for (int i = 0; i < M * N; ++i) {
    expected[i] = value_at(i, 1) + value_at(i, 2);
  }
  check_floats(args[2], expected, M * N);
  release_all(3, args);
}

/* ---- primitives ---- */

static void test_elementwise_split_vectorize_parallel(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = NULL;
  make_add(&f, "C", &r, &C);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  kiln_te_stage_t *st = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, C, &st));
  const kiln_te_iter_var_t *jo = NULL, *ji = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, st, kiln_te_tensor_axis(C, 1), 4, &jo, &ji));
  KILN_ASSERT_OK(kiln_te_vectorize(st, ji));
  KILN_ASSERT_OK(kiln_te_parallel(st, kiln_te_tensor_axis(C, 0)));
  /* Bound inference: i 7, j 13, j_outer ceil(13/4) = 4, j_inner 4. */
  kiln_te_range_t ranges[KILN_TE_MAX_ITER_VARS];
  KILN_ASSERT_OK(kiln_te_infer_bound(st, ranges));
  assert_int_equal(st->num_all, 4);
  assert_int_equal(ranges[2].extent, 4);
  assert_int_equal(ranges[3].extent, 4);
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "add", 3, args, &func));
  check_text(func, "@T.prim_func\n"
                   "def add(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), \"float32\"), "
                   "C: T.Buffer((7, 13), \"float32\")):\n"
                   "    for i in T.parallel(7):\n"
                   "        for j_outer in T.serial(4):\n"
                   "            for j_inner in T.vectorized(4):\n"
                   "                if j_outer * 4 + j_inner < 13:\n"
                   "                    C[i, j_outer * 4 + j_inner] = A[i, j_outer * 4 + j_inner] "
                   "+ B[i, j_outer * 4 + j_inner]\n");
  check_add(func);
  fixture_done(&f);
}

/* C[i, j] = sum over k of A[i, k] * B[k, j]; 7x5 by 5x13. */
static const kiln_te_tensor_t *make_matmul(fixture_t *f, rule_t *r) {
  const int64_t ashape[] = {M, K}, bshape[] = {K, N}, cshape[] = {M, N};
  KILN_ASSERT_OK(kiln_te_placeholder(&f->arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r->a));
  KILN_ASSERT_OK(kiln_te_placeholder(&f->arena, "B", 2, bshape, KILN_DTYPE_FLOAT32, &r->b));
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f->arena, "k", 0, K, &r->k));
  const kiln_te_tensor_t *inputs[] = {r->a, r->b};
  const kiln_te_tensor_t *C = NULL;
  KILN_ASSERT_OK(kiln_te_compute_reduce(&f->arena, "C", 2, cshape, KILN_TE_REDUCE_SUM, NULL, 1,
                                        &r->k, 2, inputs, matmul_rule, r, &C));
  return C;
}

static void check_matmul(const kiln_tir_prim_func_t *func) {
  const int64_t ashape[] = {M, K}, bshape[] = {K, N}, cshape[] = {M, N};
  kiln_tensor_t *args[] = {make_tensor(2, ashape, 3), make_tensor(2, bshape, 4),
                           make_tensor(2, cshape, -1)};
  run(func, 3, args);
  float expected[M * N];
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        acc = acc + value_at(i * K + k, 3) * value_at(k * N + j, 4);
      }
      expected[i * N + j] = acc;
    }
  }
  check_floats(args[2], expected, M * N);
  release_all(3, args);
}

static void test_matmul_split_reorder(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = make_matmul(&f, &r);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *jo = NULL, *ji = NULL, *ko = NULL, *ki = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, st, kiln_te_tensor_axis(C, 1), 4, &jo, &ji));
  KILN_ASSERT_OK(kiln_te_split(s, st, r.k, 2, &ko, &ki));
  const kiln_te_iter_var_t *order[] = {kiln_te_tensor_axis(C, 0), jo, ko, ki, ji};
  KILN_ASSERT_OK(kiln_te_reorder(st, 5, order));
  KILN_ASSERT_OK(kiln_te_vectorize(st, ji));
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "matmul", 3, args, &func));
  check_text(
      func, "@T.prim_func\n"
            "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), \"float32\"), C: "
            "T.Buffer((7, 13), \"float32\")):\n"
            "    for i in T.serial(7):\n"
            "        for j_outer in T.serial(4):\n"
            "            for j_inner_init in T.vectorized(4):\n"
            "                if j_outer * 4 + j_inner_init < 13:\n"
            "                    C[i, j_outer * 4 + j_inner_init] = T.float32(0.0)\n"
            "            for k_outer in T.serial(3):\n"
            "                for k_inner in T.serial(2):\n"
            "                    for j_inner in T.vectorized(4):\n"
            "                        if k_outer * 2 + k_inner < 5 and j_outer * 4 + j_inner < 13:\n"
            "                            C[i, j_outer * 4 + j_inner] = C[i, j_outer * 4 + j_inner] "
            "+ A[i, k_outer * 2 + k_inner] * B[k_outer * 2 + k_inner, j_outer * 4 + j_inner]\n");
  check_matmul(func);
  fixture_done(&f);
}

static void test_matmul_default(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = make_matmul(&f, &r);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "matmul", 3, args, &func));
  check_text(func, "@T.prim_func\n"
                   "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), "
                   "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                   "    for i in T.serial(7):\n"
                   "        for j in T.serial(13):\n"
                   "            C[i, j] = T.float32(0.0)\n"
                   "            for k in T.serial(5):\n"
                   "                C[i, j] = C[i, j] + A[i, k] * B[k, j]\n");
  check_matmul(func);
  fixture_done(&f);
}

static void test_fuse_then_split(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = NULL;
  make_add(&f, "C", &r, &C);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *fused = NULL, *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_fuse(s, st, kiln_te_tensor_axis(C, 0), kiln_te_tensor_axis(C, 1), &fused));
  KILN_ASSERT_OK(kiln_te_split(s, st, fused, 8, &o, &i));
  KILN_ASSERT_OK(kiln_te_parallel(st, o));
  KILN_ASSERT_OK(kiln_te_vectorize(st, i));
  kiln_te_range_t ranges[KILN_TE_MAX_ITER_VARS];
  KILN_ASSERT_OK(kiln_te_infer_bound(st, ranges));
  assert_int_equal(ranges[2].extent, M * N); /* i_j_fused */
  assert_int_equal(ranges[3].extent, 12);    /* ceil(91 / 8) */
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "fused", 3, args, &func));
  check_text(func,
             "@T.prim_func\n"
             "def fused(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), \"float32\"), C: "
             "T.Buffer((7, 13), \"float32\")):\n"
             "    for i_j_fused_outer in T.parallel(12):\n"
             "        for i_j_fused_inner in T.vectorized(8):\n"
             "            if i_j_fused_outer * 8 + i_j_fused_inner < 91:\n"
             "                C[(i_j_fused_outer * 8 + i_j_fused_inner) // 13, (i_j_fused_outer * "
             "8 + i_j_fused_inner) % 13] = A[(i_j_fused_outer * 8 + i_j_fused_inner) // 13, "
             "(i_j_fused_outer * 8 + i_j_fused_inner) % 13] + B[(i_j_fused_outer * 8 + "
             "i_j_fused_inner) // 13, (i_j_fused_outer * 8 + i_j_fused_inner) % 13]\n");
  check_add(func);
  fixture_done(&f);
}

static void test_split_nparts(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = NULL;
  make_add(&f, "C", &r, &C);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split_nparts(s, st, kiln_te_tensor_axis(C, 0), 3, &o, &i));
  kiln_te_range_t ranges[KILN_TE_MAX_ITER_VARS];
  KILN_ASSERT_OK(kiln_te_infer_bound(st, ranges));
  assert_int_equal(ranges[2].extent, 3); /* nparts */
  assert_int_equal(ranges[3].extent, 3); /* ceil(7 / 3) */
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "nparts", 3, args, &func));
  check_text(func, "@T.prim_func\n"
                   "def nparts(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), "
                   "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                   "    for i_outer in T.serial(3):\n"
                   "        for i_inner in T.serial(3):\n"
                   "            for j in T.serial(13):\n"
                   "                if i_outer * 3 + i_inner < 7:\n"
                   "                    C[i_outer * 3 + i_inner, j] = A[i_outer * 3 + i_inner, j] "
                   "+ B[i_outer * 3 + i_inner, j]\n");
  check_add(func);
  fixture_done(&f);
}

static void test_unroll_pragma(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = NULL;
  make_add(&f, "C", &r, &C);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, st, kiln_te_tensor_axis(C, 1), 13, &o, &i));
  KILN_ASSERT_OK(kiln_te_unroll(st, i));
  KILN_ASSERT_OK(
      kiln_te_pragma(s, st, kiln_te_tensor_axis(C, 0), "pragma_auto_unroll_max_step", "16"));
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "unrolled", 3, args, &func));
  check_text(func,
             "@T.prim_func\n"
             "def unrolled(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), \"float32\"), "
             "C: T.Buffer((7, 13), \"float32\")):\n"
             "    for i in T.serial(7, annotations={\"pragma_auto_unroll_max_step\": \"16\"}):\n"
             "        for j_outer in T.serial(1):\n"
             "            for j_inner in T.unroll(13):\n"
             "                C[i, j_outer * 13 + j_inner] = A[i, j_outer * 13 + j_inner] + B[i, "
             "j_outer * 13 + j_inner]\n");
  check_add(func);
  fixture_done(&f);
}

/* B[i] = reducer over k in [kmin, N) of A[i, k]. */
static void check_row_reduce(kiln_te_reducer_t reducer, int64_t kmin, int64_t split,
                             const char *golden) {
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const int64_t ashape[] = {M, N}, bshape[] = {M};
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r.a));
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f.arena, "k", kmin, N - kmin, &r.k));
  const kiln_te_tensor_t *B = NULL;
  KILN_ASSERT_OK(kiln_te_compute_reduce(&f.arena, "B", 1, bshape, reducer, NULL, 1, &r.k, 1, &r.a,
                                        row_rule, &r, &B));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &B, &s));
  if (split > 0) {
    const kiln_te_iter_var_t *o = NULL, *i = NULL;
    KILN_ASSERT_OK(kiln_te_split(s, s->stages[0], r.k, split, &o, &i));
    KILN_ASSERT_OK(kiln_te_unroll(s->stages[0], i));
  }
  const kiln_te_tensor_t *args[] = {r.a, B};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "reduce", 2, args, &func));
  check_text(func, golden);
  kiln_tensor_t *tensors[] = {make_tensor(2, ashape, 5), make_tensor(1, bshape, -1)};
  run(func, 2, tensors);
  float expected[M];
  for (int i = 0; i < M; ++i) {
    float acc = value_at(i * N + (int)kmin, 5);
    for (int k = (int)kmin + 1; k < N; ++k) {
      float v = value_at(i * N + k, 5);
      acc = reducer == KILN_TE_REDUCE_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
    }
    expected[i] = acc;
  }
  check_floats(tensors[1], expected, M);
  release_all(2, tensors);
  fixture_done(&f);
}

static void test_reduce_max(void **state) {
  (void)state;
  check_row_reduce(
      KILN_TE_REDUCE_MAX, 0, 0,
      "@T.prim_func\n"
      "def reduce(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7,), \"float32\")):\n"
      "    for i in T.serial(7):\n"
      "        B[i] = T.float32(-3.40282347e+38)\n"
      "        for k in T.serial(13):\n"
      "            B[i] = T.max(B[i], A[i, k])\n");
}

static void test_reduce_min_offset_split(void **state) {
  (void)state;
  check_row_reduce(
      KILN_TE_REDUCE_MIN, 2, 4,
      "@T.prim_func\n"
      "def reduce(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7,), \"float32\")):\n"
      "    for i in T.serial(7):\n"
      "        B[i] = T.float32(3.40282347e+38)\n"
      "        for k_outer in T.serial(3):\n"
      "            for k_inner in T.unroll(4):\n"
      "                if k_outer * 4 + k_inner < 11:\n"
      "                    B[i] = T.min(B[i], A[i, k_outer * 4 + k_inner + 2])\n");
}

/* B = A * 2, C = B * 0.5 + ... : two chained stages, inlined or not. */
static void check_chain(int inline_b, const char *golden) {
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {M, N};
  rule_t r1 = {0}, r2 = {0};
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "A", 2, shape, KILN_DTYPE_FLOAT32, &r1.a));
  r1.scale = 2.0;
  const kiln_te_tensor_t *B = NULL, *C = NULL;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "B", 2, shape, 1, &r1.a, scale_rule, &r1, &B));
  r2.a = B;
  r2.scale = 0.25;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "C", 2, shape, 1, &B, scale_rule, &r2, &C));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  assert_int_equal(s->num_stages, 2);
  kiln_te_stage_t *sb = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, B, &sb));
  assert_ptr_equal(sb, s->stages[0]);
  if (inline_b) {
    KILN_ASSERT_OK(kiln_te_compute_inline(sb));
  }
  const kiln_te_tensor_t *args[] = {r1.a, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "chain", 2, args, &func));
  check_text(func, golden);
  kiln_tensor_t *tensors[] = {make_tensor(2, shape, 6), make_tensor(2, shape, -1)};
  run(func, 2, tensors);
  float expected[M * N];
  for (int i = 0; i < M * N; ++i) {
    expected[i] = value_at(i, 6) * 2.0f * 0.25f;
  }
  check_floats(tensors[1], expected, M * N);
  release_all(2, tensors);
  fixture_done(&f);
}

static void test_intermediate_stage(void **state) {
  (void)state;
  check_chain(0,
              "@T.prim_func\n"
              "def chain(A: T.Buffer((7, 13), \"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
              "    B = T.decl_buffer((7, 13), \"float32\", scope=\"global\")\n"
              "    for i in T.serial(7):\n"
              "        for j in T.serial(13):\n"
              "            B[i, j] = A[i, j] * T.float32(2.0)\n"
              "    for i in T.serial(7):\n"
              "        for j in T.serial(13):\n"
              "            C[i, j] = B[i, j] * T.float32(0.25)\n");
}

static void test_compute_inline(void **state) {
  (void)state;
  check_chain(1,
              "@T.prim_func\n"
              "def chain(A: T.Buffer((7, 13), \"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
              "    for i in T.serial(7):\n"
              "        for j in T.serial(13):\n"
              "            C[i, j] = A[i, j] * T.float32(2.0) * T.float32(0.25)\n");
}

/* a[i, r * 4 + s] */
static const kiln_tir_expr_t *window_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                          void *user) {
  const rule_t *r = user;
  const kiln_tir_expr_t *col =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, kiln_tir_b_v(r->k->var), kiln_tir_b_i32(b, 4)),
                     kiln_tir_b_v(r->b_axis->var));
  const kiln_tir_expr_t *ai[] = {ix[0], col};
  return kiln_te_read(b, r->a, 2, ai);
}

/* Two reduce axes fused then split with a tail; a split of a split's inner
 * part, both with tails; a factor larger than the extent. */
static void test_nested_splits_and_reduce_fuse(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const int64_t ashape[] = {M, N}, bshape[] = {M};
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r.a));
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f.arena, "r", 0, 3, &r.k));
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f.arena, "s", 0, 4, &r.b_axis));
  const kiln_te_iter_var_t *raxes[] = {r.k, r.b_axis};
  const kiln_te_tensor_t *B = NULL;
  KILN_ASSERT_OK(kiln_te_compute_reduce(&f.arena, "B", 1, bshape, KILN_TE_REDUCE_SUM, NULL, 2,
                                        raxes, 1, &r.a, window_rule, &r, &B));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &B, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *rs = NULL, *rso = NULL, *rsi = NULL, *io = NULL, *ii = NULL,
                           *iio = NULL, *iii = NULL, *big_o = NULL, *big_i = NULL;
  KILN_ASSERT_OK(kiln_te_fuse(s, st, r.k, r.b_axis, &rs));
  KILN_ASSERT_OK(kiln_te_split(s, st, rs, 5, &rso, &rsi));
  KILN_ASSERT_OK(kiln_te_split(s, st, kiln_te_tensor_axis(B, 0), 3, &io, &ii));
  KILN_ASSERT_OK(kiln_te_split(s, st, ii, 2, &iio, &iii));
  KILN_ASSERT_OK(kiln_te_split(s, st, io, 10, &big_o, &big_i));
  kiln_te_range_t ranges[KILN_TE_MAX_ITER_VARS];
  KILN_ASSERT_OK(kiln_te_infer_bound(st, ranges));
  assert_int_equal(ranges[3].extent, 12); /* r_s_fused */
  assert_int_equal(ranges[4].extent, 3);  /* ceil(12 / 5) */
  assert_int_equal(ranges[6].extent, 3);  /* i_outer: ceil(7 / 3) */
  assert_int_equal(ranges[8].extent, 2);  /* i_inner_outer: ceil(3 / 2) */
  assert_int_equal(ranges[10].extent, 1); /* i_outer_outer: ceil(3 / 10) */
  const kiln_te_tensor_t *args[] = {r.a, B};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "window", 2, args, &func));
  check_text(
      func,
      "@T.prim_func\n"
      "def window(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7,), \"float32\")):\n"
      "    for i_outer_outer in T.serial(1):\n"
      "        for i_outer_inner in T.serial(10):\n"
      "            for i_inner_outer in T.serial(2):\n"
      "                for i_inner_inner in T.serial(2):\n"
      "                    if i_outer_outer * 10 + i_outer_inner < 3 and (i_inner_outer * 2 + "
      "i_inner_inner < 3 and i_outer_outer * 30 + i_outer_inner * 3 + i_inner_outer * 2 + "
      "i_inner_inner < 7):\n"
      "                        B[i_outer_outer * 30 + i_outer_inner * 3 + i_inner_outer * 2 + "
      "i_inner_inner] = T.float32(0.0)\n"
      "                    for r_s_fused_outer in T.serial(3):\n"
      "                        for r_s_fused_inner in T.serial(5):\n"
      "                            if i_outer_outer * 10 + i_outer_inner < 3 and (i_inner_outer * "
      "2 + i_inner_inner < 3 and (i_outer_outer * 30 + i_outer_inner * 3 + i_inner_outer * 2 + "
      "i_inner_inner < 7 and r_s_fused_outer * 5 + r_s_fused_inner < 12)):\n"
      "                                B[i_outer_outer * 30 + i_outer_inner * 3 + i_inner_outer * "
      "2 + i_inner_inner] = B[i_outer_outer * 30 + i_outer_inner * 3 + i_inner_outer * 2 + "
      "i_inner_inner] + A[i_outer_outer * 30 + i_outer_inner * 3 + i_inner_outer * 2 + "
      "i_inner_inner, r_s_fused_outer * 5 + r_s_fused_inner]\n");
  kiln_tensor_t *tensors[] = {make_tensor(2, ashape, 7), make_tensor(1, bshape, -1)};
  run(func, 2, tensors);
  float expected[M];
  for (int i = 0; i < M; ++i) {
    float acc = 0.0f;
    for (int c = 0; c < 12; ++c) {
      acc = acc + value_at(i * N + c, 7);
    }
    expected[i] = acc;
  }
  check_floats(tensors[1], expected, M);
  release_all(2, tensors);
  fixture_done(&f);
}

/* ---- errors ---- */

static const kiln_tir_expr_t *bad_read_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                            void *user) {
  const rule_t *r = user;
  return kiln_te_read(b, r->b, 2, ix); /* r->b is not declared as an input */
}

static const kiln_tir_expr_t *failing_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                           void *user) {
  (void)user;
  /* int32 + float32: the builder records the constructor's error. */
  return kiln_tir_b_add(b, ix[0], kiln_tir_b_f32(b, 1.0));
}

static void test_tensor_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const int64_t shape[] = {M, N}, bad[] = {M, 0};
  const kiln_te_tensor_t *t = NULL;
  const kiln_te_iter_var_t *k = NULL;
  KILN_ASSERT_STATUS(kiln_te_placeholder(&f.arena, "A", 2, bad, KILN_DTYPE_FLOAT32, &t),
                     INVALID_ARGUMENT, "placeholder A: extent 0 of dim 1 must be in [1, 2^31)");
  KILN_ASSERT_STATUS(kiln_te_reduce_axis(&f.arena, "k", 0, 0, &k), INVALID_ARGUMENT,
                     "reduce_axis k: range [0, 0 + 0) must be non-empty");
  const kiln_te_tensor_t *C = NULL;
  make_add(&f, "C", &r, &C);
  KILN_ASSERT_STATUS(kiln_te_compute(&f.arena, "D", 2, shape, 1, &r.a, bad_read_rule, &r, &t),
                     INVALID_ARGUMENT,
                     "compute D: the body reads buffer B, which is not one of its 1 inputs");
  KILN_ASSERT_STATUS(kiln_te_compute(&f.arena, "E", 2, shape, 0, NULL, failing_rule, &r, &t),
                     INVALID_ARGUMENT, "compute E: Add: operand dtypes differ");
  const kiln_te_iter_var_t *not_reduce = kiln_te_tensor_axis(C, 0);
  assert_null(kiln_te_tensor_axis(r.a, 0));
  assert_null(kiln_te_tensor_axis(C, 2));
  KILN_ASSERT_STATUS(kiln_te_compute_reduce(&f.arena, "F", 2, shape, KILN_TE_REDUCE_SUM, NULL, 1,
                                            &not_reduce, 1, &r.a, row_rule, &r, &t),
                     INVALID_ARGUMENT, "compute F: axis i is not a reduce axis");
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f.arena, "k", 0, N, &r.k));
  const kiln_tir_expr_t *int_init = NULL;
  KILN_ASSERT_OK(
      kiln_tir_int_imm_create(&f.arena, kiln_tir_scalar(KILN_DTYPE_INT32), 0, &int_init));
  const int64_t rshape[] = {M};
  KILN_ASSERT_STATUS(kiln_te_compute_reduce(&f.arena, "G", 1, rshape, KILN_TE_REDUCE_SUM, int_init,
                                            1, &r.k, 1, &r.a, row_rule, &r, &t),
                     INVALID_ARGUMENT, "compute G: init is int32 but the body is float32");
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_STATUS(kiln_te_create_schedule(&f.arena, 1, &r.a, &s), INVALID_ARGUMENT,
                     "create_schedule: output A is a placeholder, not a compute");
  fixture_done(&f);
}

static void test_schedule_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = make_matmul(&f, &r);
  rule_t r2 = {0};
  const kiln_te_tensor_t *D = NULL;
  make_add(&f, "D", &r2, &D);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *i = kiln_te_tensor_axis(C, 0), *j = kiln_te_tensor_axis(C, 1);
  const kiln_te_iter_var_t *o = NULL, *n = NULL, *x = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, st, i, 2, &o, &n));
  /* A split axis is no longer a leaf. */
  KILN_ASSERT_STATUS(kiln_te_split(s, st, i, 2, &x, &x), INVALID_ARGUMENT,
                     "split: axis i of stage C is not a leaf (it was already split or fused)");
  KILN_ASSERT_STATUS(kiln_te_split(s, st, j, 0, &x, &x), INVALID_ARGUMENT,
                     "split: factor 0 of axis j (stage C) must be positive");
  KILN_ASSERT_STATUS(kiln_te_split(s, st, j, -3, &x, &x), INVALID_ARGUMENT,
                     "split: factor -3 of axis j (stage C) must be positive");
  KILN_ASSERT_STATUS(kiln_te_split_nparts(s, st, j, 0, &x, &x), INVALID_ARGUMENT,
                     "split_nparts: nparts 0 of axis j (stage C) must be positive");
  /* Axes of another stage. */
  const kiln_te_iter_var_t *foreign[] = {j, kiln_te_tensor_axis(D, 0)};
  KILN_ASSERT_STATUS(kiln_te_reorder(st, 2, foreign), INVALID_ARGUMENT,
                     "reorder: axis i is not an axis of stage C");
  const kiln_te_iter_var_t *twice[] = {j, j};
  KILN_ASSERT_STATUS(kiln_te_reorder(st, 2, twice), INVALID_ARGUMENT,
                     "reorder: stage C: axis j appears twice");
  KILN_ASSERT_STATUS(kiln_te_vectorize(st, r.k), INVALID_ARGUMENT,
                     "vectorize: axis k of stage C is a reduction axis");
  KILN_ASSERT_STATUS(kiln_te_parallel(st, r.k), INVALID_ARGUMENT,
                     "parallel: axis k of stage C is a reduction axis");
  KILN_ASSERT_STATUS(kiln_te_fuse(s, st, o, j, &x), INVALID_ARGUMENT,
                     "fuse: axes i_outer and j of stage C must be adjacent leaves");
  KILN_ASSERT_STATUS(kiln_te_fuse(s, st, j, r.k, &x), INVALID_ARGUMENT,
                     "fuse: stage C: cannot fuse data-parallel and reduction axes j and k");
  KILN_ASSERT_STATUS(kiln_te_compute_inline(st), INVALID_ARGUMENT,
                     "compute_inline: stage C is an output of the schedule");
  KILN_ASSERT_STATUS(kiln_te_schedule_stage(s, D, &st), NOT_FOUND,
                     "schedule has no stage for tensor D");
  /* The failed primitives changed nothing: the lowered nest has 4 leaves. */
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, C, &st));
  assert_int_equal(st->num_leaves, 4);
  const kiln_te_tensor_t *missing_a[] = {r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_te_lower(s, "mm", 2, missing_a, &func), INVALID_ARGUMENT,
                     "lower mm: placeholder A (read by C) is not among the arguments");
  const kiln_te_tensor_t *missing_c[] = {r.a, r.b};
  KILN_ASSERT_STATUS(kiln_te_lower(s, "mm", 2, missing_c, &func), INVALID_ARGUMENT,
                     "lower mm: output C is not among the arguments");
  fixture_done(&f);
}

static void test_compute_inline_reduction_error(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = make_matmul(&f, &r);
  rule_t r2 = {.a = C, .scale = 3.0};
  const int64_t shape[] = {M, N};
  const kiln_te_tensor_t *D = NULL;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "D", 2, shape, 1, &C, scale_rule, &r2, &D));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &D, &s));
  KILN_ASSERT_STATUS(kiln_te_compute_inline(s->stages[0]), INVALID_ARGUMENT,
                     "compute_inline: stage C is a reduction (sum)");
  fixture_done(&f);
}

static void test_lower_verifies(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = NULL;
  make_add(&f, "C", &r, &C);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  KILN_ASSERT_OK(kiln_te_parallel(s->stages[0], kiln_te_tensor_axis(C, 0)));
  KILN_ASSERT_OK(kiln_te_parallel(s->stages[0], kiln_te_tensor_axis(C, 1)));
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_te_lower(s, "nested", 3, args, &func), INVALID_ARGUMENT,
                     "nested: parallel loop j is nested in parallel loop i");
  fixture_done(&f);
}

/* The register tile of TVM's x86 schedules: C_local = cache_write(C), C's j
 * split by 4, C_local computed at j_outer with k outside its j_c. */
static void test_cache_write_compute_at(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = make_matmul(&f, &r);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  const kiln_te_tensor_t *CL = NULL;
  KILN_ASSERT_OK(kiln_te_cache_write(s, C, KILN_TIR_SCOPE_LOCAL, &CL));
  assert_string_equal(CL->name, "C_local");
  assert_int_equal(s->num_stages, 2);
  kiln_te_stage_t *sc = NULL, *scl = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, C, &sc));
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, CL, &scl));
  assert_ptr_equal(scl, s->stages[0]);
  assert_int_equal(sc->num_leaves, 2);
  assert_int_equal(scl->num_leaves, 3);
  const kiln_te_iter_var_t *jo = NULL, *ji = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, sc, kiln_te_tensor_axis(C, 1), 4, &jo, &ji));
  KILN_ASSERT_OK(kiln_te_vectorize(sc, ji));
  KILN_ASSERT_OK(kiln_te_compute_at(scl, sc, jo));
  const kiln_te_iter_var_t *order[] = {r.k, kiln_te_tensor_axis(CL, 1)};
  KILN_ASSERT_OK(kiln_te_reorder(scl, 2, order));
  KILN_ASSERT_OK(kiln_te_vectorize(scl, kiln_te_tensor_axis(CL, 1)));
  const kiln_te_tensor_t *args[] = {r.a, r.b, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "matmul", 3, args, &func));
  check_text(func, "@T.prim_func\n"
                   "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), "
                   "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                   "    for i in T.serial(7):\n"
                   "        for j_outer in T.serial(4):\n"
                   "            C_local = T.decl_buffer((1, 4), \"float32\", scope=\"local\")\n"
                   "            for i_c in T.serial(1):\n"
                   "                for j_c_init in T.vectorized(4):\n"
                   "                    if j_outer * 4 + j_c_init < 13:\n"
                   "                        C_local[i_c, j_c_init] = T.float32(0.0)\n"
                   "                for k in T.serial(5):\n"
                   "                    for j_c in T.vectorized(4):\n"
                   "                        if j_outer * 4 + j_c < 13:\n"
                   "                            C_local[i_c, j_c] = C_local[i_c, j_c] + A[i + i_c, "
                   "k] * B[k, j_outer * 4 + j_c]\n"
                   "            for j_inner in T.vectorized(4):\n"
                   "                if j_outer * 4 + j_inner < 13:\n"
                   "                    C[i, j_outer * 4 + j_inner] = C_local[0, j_inner]\n");
  check_matmul(func);
  fixture_done(&f);
}

/* The intermediate B of the chain computed per row of C, in a 1x13 buffer. */
static void test_compute_at_row(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {M, N};
  rule_t r1 = {.scale = 2.0}, r2 = {.scale = 0.25};
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "A", 2, shape, KILN_DTYPE_FLOAT32, &r1.a));
  const kiln_te_tensor_t *B = NULL, *C = NULL;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "B", 2, shape, 1, &r1.a, scale_rule, &r1, &B));
  r2.a = B;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "C", 2, shape, 1, &B, scale_rule, &r2, &C));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &C, &s));
  KILN_ASSERT_OK(kiln_te_compute_at(s->stages[0], s->stages[1], kiln_te_tensor_axis(C, 0)));
  KILN_ASSERT_OK(kiln_te_parallel(s->stages[1], kiln_te_tensor_axis(C, 0)));
  const kiln_te_tensor_t *args[] = {r1.a, C};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "chain", 2, args, &func));
  /* B's axes i, j and C's are distinct variables; the printer does not rename them. */
  check_text(func,
             "@T.prim_func\n"
             "def chain(A: T.Buffer((7, 13), \"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
             "    for i in T.parallel(7):\n"
             "        B = T.decl_buffer((1, 13), \"float32\", scope=\"global\")\n"
             "        for i in T.serial(1):\n"
             "            for j in T.serial(13):\n"
             "                B[i, j] = A[i + i, j] * T.float32(2.0)\n"
             "        for j in T.serial(13):\n"
             "            C[i, j] = B[0, j] * T.float32(0.25)\n");
  kiln_tensor_t *tensors[] = {make_tensor(2, shape, 6), make_tensor(2, shape, -1)};
  run(func, 2, tensors);
  float expected[M * N];
  for (int i = 0; i < M * N; ++i) {
    expected[i] = value_at(i, 6) * 2.0f * 0.25f;
  }
  check_floats(tensors[1], expected, M * N);
  release_all(2, tensors);
  /* An attached stage is no argument; its axis must stay a leaf. */
  const kiln_te_tensor_t *with_b[] = {r1.a, B, C};
  KILN_ASSERT_STATUS(kiln_te_lower(s, "chain", 3, with_b, &func), INVALID_ARGUMENT,
                     "lower chain: B is computed at a loop of C (compute_at) and cannot be an "
                     "argument");
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, s->stages[1], kiln_te_tensor_axis(C, 0), 2, &o, &i));
  KILN_ASSERT_STATUS(kiln_te_lower(s, "chain", 2, args, &func), INVALID_ARGUMENT,
                     "compute_at: stage B is attached at axis i of stage C, which is no longer "
                     "a leaf");
  fixture_done(&f);
}

/* B computed per row of D, which reads it through C, inlined: the region
 * comes from D's body after inlining. Without the inline, lowering refuses. */
static void test_compute_at_through_inlined(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {M, N};
  rule_t r1 = {.scale = 2.0}, r2 = {.scale = 0.25}, r3 = {.scale = -1.0};
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "A", 2, shape, KILN_DTYPE_FLOAT32, &r1.a));
  const kiln_te_tensor_t *B = NULL, *C = NULL, *D = NULL;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "B", 2, shape, 1, &r1.a, scale_rule, &r1, &B));
  r2.a = B;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "C", 2, shape, 1, &B, scale_rule, &r2, &C));
  r3.a = C;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "D", 2, shape, 1, &C, scale_rule, &r3, &D));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &D, &s));
  KILN_ASSERT_OK(kiln_te_compute_at(s->stages[0], s->stages[2], kiln_te_tensor_axis(D, 0)));
  const kiln_te_tensor_t *args[] = {r1.a, D};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_te_lower(s, "through", 2, args, &func), INVALID_ARGUMENT,
                     "compute_at: stage D reads B only through stages that are not inlined");
  KILN_ASSERT_OK(kiln_te_compute_inline(s->stages[1]));
  KILN_ASSERT_OK(kiln_te_lower(s, "through", 2, args, &func));
  check_text(func,
             "@T.prim_func\n"
             "def through(A: T.Buffer((7, 13), \"float32\"), D: T.Buffer((7, 13), \"float32\")):\n"
             "    for i in T.serial(7):\n"
             "        B = T.decl_buffer((1, 13), \"float32\", scope=\"global\")\n"
             "        for i in T.serial(1):\n"
             "            for j in T.serial(13):\n"
             "                B[i, j] = A[i + i, j] * T.float32(2.0)\n"
             "        for j in T.serial(13):\n"
             "            D[i, j] = B[0, j] * T.float32(0.25) * T.float32(-1.0)\n");
  kiln_tensor_t *tensors[] = {make_tensor(2, shape, 6), make_tensor(2, shape, -1)};
  run(func, 2, tensors);
  float expected[M * N];
  for (int i = 0; i < M * N; ++i) {
    expected[i] = value_at(i, 6) * 2.0f * 0.25f * -1.0f;
  }
  check_floats(tensors[1], expected, M * N);
  release_all(2, tensors);
  fixture_done(&f);
}

static void test_compute_at_cache_write_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  rule_t r = {0};
  const kiln_te_tensor_t *C = make_matmul(&f, &r);
  rule_t r2 = {.a = C, .scale = 3.0};
  const int64_t shape[] = {M, N};
  const kiln_te_tensor_t *D = NULL;
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "D", 2, shape, 1, &C, scale_rule, &r2, &D));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &D, &s));
  kiln_te_stage_t *sc = s->stages[0], *sd = s->stages[1];
  KILN_ASSERT_STATUS(kiln_te_compute_at(sd, sc, kiln_te_tensor_axis(C, 0)), INVALID_ARGUMENT,
                     "compute_at: stage D is an output of the schedule");
  KILN_ASSERT_STATUS(kiln_te_compute_at(sc, sd, kiln_te_tensor_axis(C, 0)), INVALID_ARGUMENT,
                     "compute_at: axis i is not an axis of stage D");
  KILN_ASSERT_STATUS(kiln_te_compute_at(sc, sc, kiln_te_tensor_axis(C, 0)), INVALID_ARGUMENT,
                     "compute_at: stage C does not read C");
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  const kiln_te_tensor_t *cache = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, sc, kiln_te_tensor_axis(C, 0), 2, &o, &i));
  KILN_ASSERT_STATUS(kiln_te_cache_write(s, C, KILN_TIR_SCOPE_LOCAL, &cache), INVALID_ARGUMENT,
                     "cache_write: stage C has already been scheduled; cache it first");
  KILN_ASSERT_STATUS(kiln_te_cache_write(s, r.a, KILN_TIR_SCOPE_LOCAL, &cache), NOT_FOUND,
                     "schedule has no stage for tensor A");
  /* Caching D (not yet scheduled) works; D = 3 * C still comes out. */
  KILN_ASSERT_OK(kiln_te_cache_write(s, D, KILN_TIR_SCOPE_GLOBAL, &cache));
  assert_string_equal(cache->name, "D_global");
  const kiln_te_tensor_t *args[] = {r.a, r.b, D};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "cached", 3, args, &func));
  const int64_t ashape[] = {M, K}, bshape[] = {K, N};
  kiln_tensor_t *tensors[] = {make_tensor(2, ashape, 3), make_tensor(2, bshape, 4),
                              make_tensor(2, shape, -1)};
  run(func, 3, tensors);
  float expected[M * N];
  for (int row = 0; row < M; ++row) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        acc = acc + value_at(row * K + k, 3) * value_at(k * N + j, 4);
      }
      expected[row * N + j] = acc * 3.0f;
    }
  }
  check_floats(tensors[2], expected, M * N);
  release_all(3, tensors);
  fixture_done(&f);
}

/* ---- allocation failures ---- */

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_status_t status = KILN_OK;
  rule_t r = {0};
  const int64_t ashape[] = {M, K}, bshape[] = {K, N}, cshape[] = {M, N};
  const kiln_te_tensor_t *C = NULL, *D = NULL, *CL = NULL;
  kiln_te_schedule_t *s = NULL;
  const kiln_te_iter_var_t *o = NULL, *i = NULL, *fused = NULL;
  const kiln_tir_prim_func_t *func = NULL;
  if ((status = kiln_te_placeholder(&arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r.a)) ||
      (status = kiln_te_placeholder(&arena, "B", 2, bshape, KILN_DTYPE_FLOAT32, &r.b)) ||
      (status = kiln_te_reduce_axis(&arena, "k", 0, K, &r.k))) {
    goto done;
  }
  const kiln_te_tensor_t *inputs[] = {r.a, r.b};
  if ((status = kiln_te_compute_reduce(&arena, "C", 2, cshape, KILN_TE_REDUCE_SUM, NULL, 1, &r.k, 2,
                                       inputs, matmul_rule, &r, &C))) {
    goto done;
  }
  rule_t r2 = {.a = C, .scale = 3.0};
  if ((status = kiln_te_compute(&arena, "D", 2, cshape, 1, &C, scale_rule, &r2, &D)) ||
      (status = kiln_te_create_schedule(&arena, 1, &D, &s)) ||
      (status = kiln_te_cache_write(s, C, KILN_TIR_SCOPE_LOCAL, &CL)) ||
      (status = kiln_te_split(s, s->stages[1], kiln_te_tensor_axis(C, 1), 4, &o, &i)) ||
      (status = kiln_te_compute_at(s->stages[0], s->stages[1], o)) ||
      (status = kiln_te_split(s, s->stages[0], r.k, 2, &o, &i)) ||
      (status = kiln_te_fuse(s, s->stages[2], kiln_te_tensor_axis(D, 0), kiln_te_tensor_axis(D, 1),
                             &fused)) ||
      (status = kiln_te_parallel(s->stages[2], fused)) ||
      (status = kiln_te_pragma(s, s->stages[2], fused, "key", "value"))) {
    goto done;
  }
  const kiln_te_tensor_t *args[] = {r.a, r.b, D};
  status = kiln_te_lower(s, "sweep", 3, args, &func);
done:
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  KILN_ASSERT_OK(lower_scenario(kiln_allocator_system(), NULL));
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, NULL) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise_split_vectorize_parallel),
      cmocka_unit_test(test_matmul_split_reorder),
      cmocka_unit_test(test_matmul_default),
      cmocka_unit_test(test_fuse_then_split),
      cmocka_unit_test(test_split_nparts),
      cmocka_unit_test(test_unroll_pragma),
      cmocka_unit_test(test_reduce_max),
      cmocka_unit_test(test_reduce_min_offset_split),
      cmocka_unit_test(test_nested_splits_and_reduce_fuse),
      cmocka_unit_test(test_intermediate_stage),
      cmocka_unit_test(test_compute_inline),
      cmocka_unit_test(test_tensor_errors),
      cmocka_unit_test(test_schedule_errors),
      cmocka_unit_test(test_compute_inline_reduction_error),
      cmocka_unit_test(test_lower_verifies),
      cmocka_unit_test(test_cache_write_compute_at),
      cmocka_unit_test(test_compute_at_row),
      cmocka_unit_test(test_compute_at_through_inlined),
      cmocka_unit_test(test_compute_at_cache_write_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
