/*
 * Tests of the loop-IR printer: the exact TVMScript-like text of whole
 * functions and of expressions whose parentheses depend on precedence.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "tir/builder.h"
#include "tir/printer.h"
#include "tir_fixture.h"

static void assert_expr_text(fixture_t *f, const kiln_tir_expr_t *e, const char *expected) {
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_expr_to_text(kiln_allocator_system(), e, &text));
  assert_string_equal(text, expected);
  free(text);
}

static void assert_func_text(fixture_t *f, const kiln_tir_prim_func_t *func, const char *expected) {
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, &text));
  assert_string_equal(text, expected);
  free(text);
}

static void test_elementwise_add(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const int64_t shape[] = {4, 5};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_buffer_t *B = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_buffer_t *C = kiln_tir_b_buffer(b, "C", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *idx[] = {kiln_tir_b_v(i), kiln_tir_b_v(j)};
  const kiln_tir_stmt_t *s = kiln_tir_b_store(
      b, C, kiln_tir_b_add(b, kiln_tir_b_load(b, A, 2, idx), kiln_tir_b_load(b, B, 2, idx)), 2,
      idx);
  s = kiln_tir_b_for(b, j, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 5), KILN_TIR_FOR_SERIAL, s);
  s = kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 4), KILN_TIR_FOR_PARALLEL, s);
  const kiln_tir_buffer_t *params[] = {A, B, C};
  assert_func_text(&f, kiln_tir_b_func(b, "add", 3, params, s),
                   "@T.prim_func\n"
                   "def add(A: T.Buffer((4, 5), \"float32\"), B: T.Buffer((4, 5), \"float32\"), "
                   "C: T.Buffer((4, 5), \"float32\")):\n"
                   "    for i in T.parallel(4):\n"
                   "        for j in T.serial(5):\n"
                   "            C[i, j] = A[i, j] + B[i, j]\n");
  fixture_done(&f);
}

/* Every statement kind, vectors, intrinsics, allocation, annotations. */
static void test_every_statement(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const int64_t n16[] = {16}, n4[] = {4};
  const kiln_tir_buffer_t *X = kiln_tir_b_buffer(b, "X", KILN_DTYPE_FLOAT32, 1, n16);
  const kiln_tir_buffer_t *acc = kiln_tir_b_buffer(b, "acc", KILN_DTYPE_FLOAT32, 1, n4);
  const kiln_tir_var_t *io = kiln_tir_b_var(b, "io", KILN_DTYPE_INT32);
  const kiln_tir_var_t *k = kiln_tir_b_var(b, "k", KILN_DTYPE_INT32);
  const kiln_tir_var_t *t = kiln_tir_b_var(b, "t", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0), *four = kiln_tir_b_i32(b, 4);
  /* X[T.ramp(io * 4, 1, 4)] = T.exp(X[T.ramp(io * 4, 1, 4)]) + T.broadcast(T.float32(1.0), 4) */
  const kiln_tir_expr_t *ramp[] = {
      kiln_tir_b_ramp(b, kiln_tir_b_mul(b, kiln_tir_b_v(io), four), kiln_tir_b_i32(b, 1), 4)};
  const kiln_tir_expr_t *load = kiln_tir_b_load(b, X, 1, ramp);
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(b, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_EXP, 1, &load),
                     kiln_tir_b_broadcast(b, kiln_tir_b_f32(b, 1.0), 4));
  const kiln_tir_stmt_t *vec = kiln_tir_b_store(b, X, value, 1, ramp);
  /* acc[k] = T.float32(0.5) in an unrolled loop */
  const kiln_tir_expr_t *kidx[] = {kiln_tir_b_v(k)};
  const kiln_tir_stmt_t *init =
      kiln_tir_b_for(b, k, zero, four, KILN_TIR_FOR_UNROLLED,
                     kiln_tir_b_store(b, acc, kiln_tir_b_f32(b, 0.5), 1, kidx));
  /* if io % 2 == 0: ... else: T.evaluate(0) */
  const kiln_tir_expr_t *cond = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_EQ,
      kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, kiln_tir_b_v(io), kiln_tir_b_i32(b, 2)), zero);
  const kiln_tir_stmt_t *branch = kiln_tir_b_if(b, cond, vec, kiln_tir_b_evaluate(b, zero));
  /* t: T.int32 = io // 2, then assert */
  const kiln_tir_expr_t *tdiv =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, kiln_tir_b_v(io), kiln_tir_b_i32(b, 2));
  const kiln_tir_stmt_t *checked = kiln_tir_b_assert(
      b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, kiln_tir_b_v(t), four), "t \"small\"", branch);
  const kiln_tir_stmt_t *let = kiln_tir_b_let_stmt(b, t, tdiv, checked);
  const kiln_tir_stmt_t *body_list[] = {init, let};
  const kiln_tir_stmt_t *body = kiln_tir_b_allocate(
      b, acc, KILN_TIR_SCOPE_LOCAL, KILN_TIR_INIT_ZERO, kiln_tir_b_seq(b, 2, body_list));
  const kiln_tir_annotation_t pragma[] = {{"pragma_auto_unroll_max_step", "16"}};
  const kiln_tir_stmt_t *loop = NULL;
  KILN_ASSERT_OK(kiln_tir_for_create(&f.arena, io, kiln_tir_b_i32(b, 1), kiln_tir_b_i32(b, 3),
                                     KILN_TIR_FOR_VECTORIZED, body, 1, pragma, &loop));
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_tir_annotation_t attrs[] = {{"global_symbol", "every"}};
  KILN_ASSERT_OK(kiln_tir_prim_func_create(&f.arena, "every", 1, &X, loop, 1, attrs, &func));
  assert_func_text(
      &f, func,
      "@T.prim_func\n"
      "def every(X: T.Buffer((16,), \"float32\")):\n"
      "    T.func_attr({\"global_symbol\": \"every\"})\n"
      "    for io in T.vectorized(1, 1 + 3, annotations={\"pragma_auto_unroll_max_step\": "
      "\"16\"}):\n"
      "        acc = T.decl_buffer((4,), \"float32\", scope=\"local\", init=\"zero\")\n"
      "        for k in T.unroll(4):\n"
      "            acc[k] = T.float32(0.5)\n"
      "        t: T.int32 = io // 2\n"
      "        assert t < 4, \"t \\\"small\\\"\"\n"
      "        if io % 2 == 0:\n"
      "            X[T.ramp(io * 4, 1, 4)] = T.exp(X[T.ramp(io * 4, 1, 4)]) + "
      "T.broadcast(T.float32(1.0), 4)\n"
      "        else:\n"
      "            T.evaluate(0)\n");
  fixture_done(&f);
}

static void test_expression_text(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const kiln_tir_var_t *av = kiln_tir_b_var(b, "a", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *a = kiln_tir_b_v(av);
  const kiln_tir_expr_t *c = kiln_tir_b_v(kiln_tir_b_var(b, "c", KILN_DTYPE_INT32));
  const kiln_tir_expr_t *x = kiln_tir_b_v(kiln_tir_b_var(b, "x", KILN_DTYPE_FLOAT32));
  const kiln_tir_expr_t *p = kiln_tir_b_v(kiln_tir_b_var(b, "p", KILN_DTYPE_BOOL));
  const kiln_tir_expr_t *q = kiln_tir_b_v(kiln_tir_b_var(b, "q", KILN_DTYPE_BOOL));
  assert_expr_text(&f, kiln_tir_b_mul(b, kiln_tir_b_add(b, a, c), c), "(a + c) * c");
  assert_expr_text(&f, kiln_tir_b_add(b, a, kiln_tir_b_mul(b, a, c)), "a + a * c");
  /* Comparisons do not chain: (a < c) != (c < a) keeps both pairs. */
  assert_expr_text(&f,
                   kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, a, c),
                                  kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, c, a)),
                   "(a < c) != (c < a)");
  assert_expr_text(
      &f, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, a, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, a, c)),
      "a - (a - c)");
  assert_expr_text(
      &f, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, a, c), c),
      "a - c - c");
  assert_expr_text(&f, kiln_tir_b_not(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, p, q)),
                   "not (p and q)");
  assert_expr_text(
      &f, kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, p, q), p),
      "(p or q) and p");
  assert_expr_text(
      &f, kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, a, kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, c, a)),
      "T.min(a, T.max(c, a))");
  assert_expr_text(
      &f, kiln_tir_b_select(b, p, x, kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, x, kiln_tir_b_f32(b, 3))),
      "T.Select(p, x, x / T.float32(3.0))");
  assert_expr_text(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), a),
                   "T.Cast(\"float32\", a)");
  assert_expr_text(
      &f, kiln_tir_b_cast(b, kiln_tir_vector(KILN_DTYPE_FLOAT32, 4), kiln_tir_b_ramp(b, a, c, 4)),
      "T.Cast(\"float32x4\", T.ramp(a, c, 4))");
  assert_expr_text(&f, kiln_tir_b_int(b, KILN_DTYPE_INT64, -3), "T.int64(-3)");
  assert_expr_text(&f, kiln_tir_b_int(b, KILN_DTYPE_BOOL, 1), "T.bool(True)");
  assert_expr_text(&f, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, 0.1),
                   "T.float64(0.10000000000000001)");
  assert_expr_text(&f, kiln_tir_b_f32(b, 1e20), "T.float32(1.00000002e+20)");
  assert_expr_text(&f, kiln_tir_b_f32(b, (double)INFINITY), "T.float32(\"inf\")");
  const kiln_tir_expr_t *fma_args[] = {x, x, x};
  assert_expr_text(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_FMA, 3, fma_args), "T.fma(x, x, x)");
  assert_expr_text(&f, kiln_tir_b_let(b, av, c, kiln_tir_b_add(b, a, a)), "T.let(a, c, a + a)");
  fixture_done(&f);
}

static void test_strided_buffer_and_empty_seq(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const kiln_tir_expr_t *n = kiln_tir_b_v(kiln_tir_b_var(b, "n", KILN_DTYPE_INT32));
  const kiln_tir_expr_t *shape[] = {n, kiln_tir_b_i32(b, 3)};
  const kiln_tir_expr_t *strides[] = {kiln_tir_b_i32(b, 8), kiln_tir_b_i32(b, 1)};
  const kiln_tir_buffer_t *A = NULL;
  KILN_ASSERT_OK(kiln_tir_buffer_create(&f.arena, "A", KILN_DTYPE_INT8, 2, shape, strides,
                                        kiln_tir_b_i32(b, 2), &A));
  assert_func_text(&f, kiln_tir_b_func(b, "f", 1, &A, kiln_tir_b_seq(b, 0, NULL)),
                   "@T.prim_func\n"
                   "def f(A: T.Buffer((n, 3), \"int8\", strides=(8, 1), elem_offset=2)):\n"
                   "    pass\n");
  fixture_done(&f);
}

static kiln_status_t print_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, &arena);
  const kiln_tir_expr_t *x = kiln_tir_b_v(kiln_tir_b_var(&b, "x", KILN_DTYPE_FLOAT32));
  const kiln_tir_expr_t *e = kiln_tir_b_call(&b, KILN_TIR_INTRINSIC_TANH, 1, &x);
  for (int i = 0; i < 20; ++i) { /* long enough for the text to grow several times */
    e = kiln_tir_b_add(&b, e, x);
  }
  kiln_status_t status = kiln_tir_builder_finish(&b);
  char *text = NULL;
  if (!status) {
    status = kiln_tir_expr_to_text(allocator, e, &text);
  }
  kiln_allocator_free(allocator, text);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_print_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(print_scenario, NULL) >= 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise_add),
      cmocka_unit_test(test_every_statement),
      cmocka_unit_test(test_expression_text),
      cmocka_unit_test(test_strided_buffer_and_empty_seq),
      cmocka_unit_test(test_print_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
