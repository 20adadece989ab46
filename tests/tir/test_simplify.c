/*
 * Tests of the arithmetic simplifier, rule by rule, each with the cases
 * where it must fire and the cases where it must not: constant folding
 * (overflow and float division by zero must not fold; integer division by
 * zero, saturating casts and shifts fold as they run), linear
 * forms, bounds, min/max, floordiv/floormod, comparisons, select and the
 * statement rules. Results are compared as printed text.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "tir/builder.h"
#include "tir/printer.h"
#include "tir/simplify.h"

typedef struct fixture_t {
  kiln_arena_t arena;
  kiln_tir_builder_t b;
  kiln_tir_analyzer_t analyzer;
  const kiln_tir_var_t *i, *j, *n;
  const kiln_tir_var_t *x;   /* float32 */
  const kiln_tir_var_t *l64; /* int64 */
} fixture_t;

static void fixture_init(fixture_t *f) {
  kiln_arena_initialize(&f->arena, kiln_allocator_system(), 0);
  kiln_tir_builder_initialize(&f->b, &f->arena);
  kiln_tir_analyzer_initialize(&f->analyzer, kiln_allocator_system());
  f->i = kiln_tir_b_var(&f->b, "i", KILN_DTYPE_INT32);
  f->j = kiln_tir_b_var(&f->b, "j", KILN_DTYPE_INT32);
  f->n = kiln_tir_b_var(&f->b, "n", KILN_DTYPE_INT32);
  f->x = kiln_tir_b_var(&f->b, "x", KILN_DTYPE_FLOAT32);
  f->l64 = kiln_tir_b_var(&f->b, "l", KILN_DTYPE_INT64);
}

static void fixture_done(fixture_t *f) {
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  kiln_tir_analyzer_deinitialize(&f->analyzer);
  kiln_arena_deinitialize(&f->arena);
}

static void check(fixture_t *f, const kiln_tir_expr_t *e, const char *expected) {
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  const kiln_tir_expr_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_simplify_expr(&f->arena, &f->analyzer, e, &out));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_expr_to_text(kiln_allocator_system(), out, &text));
  if (strcmp(text, expected) != 0) {
    print_error("simplified to \"%s\", expected \"%s\"\n", text, expected);
  }
  assert_string_equal(text, expected);
  free(text);
}

/* Shorthands. */
#define B            (&f.b)
#define V(var)       kiln_tir_b_v(f.var)
#define C(v)         kiln_tir_b_i32(B, (v))
#define ADD(a, b)    kiln_tir_b_add(B, (a), (b))
#define SUB(a, b)    kiln_tir_b_bin(B, KILN_TIR_EXPR_SUB, (a), (b))
#define MUL(a, b)    kiln_tir_b_mul(B, (a), (b))
#define DIV(a, b)    kiln_tir_b_bin(B, KILN_TIR_EXPR_FLOOR_DIV, (a), (b))
#define MOD(a, b)    kiln_tir_b_bin(B, KILN_TIR_EXPR_FLOOR_MOD, (a), (b))
#define BIN(k, a, b) kiln_tir_b_bin(B, KILN_TIR_EXPR_##k, (a), (b))

static void bind(fixture_t *f, const kiln_tir_var_t *var, int64_t lo, int64_t hi) {
  KILN_ASSERT_OK(kiln_tir_analyzer_bind(&f->analyzer, var, lo, hi));
}

static void test_constant_folding(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  check(&f, ADD(C(2), MUL(C(3), C(4))), "14");
  check(&f, DIV(C(-7), C(2)), "-4");
  check(&f, MOD(C(-7), C(2)), "1");
  check(&f, BIN(MIN, C(-7), C(2)), "-7");
  check(&f, BIN(MAX, C(-7), C(2)), "2");
  check(&f, BIN(LE, C(3), C(3)), "T.bool(True)");
  check(&f, BIN(NE, C(3), C(3)), "T.bool(False)");
  check(&f, kiln_tir_b_not(B, BIN(LT, C(3), C(2))), "T.bool(True)");
  check(&f, BIN(AND, BIN(LT, C(1), C(2)), BIN(GT, C(1), C(2))), "T.bool(False)");
  check(&f, kiln_tir_b_add(B, kiln_tir_b_f32(B, 0.1), kiln_tir_b_f32(B, 0.2)),
        "T.float32(0.300000012)");
  check(&f,
        BIN(DIV, kiln_tir_b_float(B, KILN_DTYPE_FLOAT64, 1),
            kiln_tir_b_float(B, KILN_DTYPE_FLOAT64, 3)),
        "T.float64(0.33333333333333331)");
  check(&f, BIN(LT, kiln_tir_b_f32(B, 0.5), kiln_tir_b_f32(B, 0.25)), "T.bool(False)");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_FLOAT32), C(3)), "T.float32(3.0)");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_INT8), C(200)), "T.int8(-56)");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_INT32), kiln_tir_b_f32(B, -2.5)), "-2");
  /* Must not fold: overflow, a float division by zero. */
  check(&f, ADD(C(INT32_MAX), C(1)), "2147483647 + 1");
  check(&f, MUL(C(65536), C(65536)), "65536 * 65536");
  check(&f,
        kiln_tir_b_add(B, kiln_tir_b_int(B, KILN_DTYPE_INT64, INT64_MAX),
                       kiln_tir_b_int(B, KILN_DTYPE_INT64, 1)),
        "T.int64(9223372036854775807) + T.int64(1)");
  check(&f, DIV(C(INT32_MIN), C(-1)), "-2147483648 // -1");
  check(&f, BIN(DIV, kiln_tir_b_f32(B, 1), kiln_tir_b_f32(B, 0)),
        "T.float32(1.0) / T.float32(0.0)");
  /* Fold as they run (base/scalar_ops.h): a zero divisor gives 0, a float
   * to int saturates (NaN gives 0), a shift by the width or more gives 0. */
  check(&f, DIV(C(5), C(0)), "0");
  check(&f, MOD(C(5), C(0)), "0");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_INT32), kiln_tir_b_f32(B, 3e9)),
        "2147483647");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_INT8), kiln_tir_b_f32(B, -1e9)),
        "T.int8(-128)");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_UINT8), kiln_tir_b_f32(B, -3)),
        "T.uint8(0)");
  check(&f, kiln_tir_b_cast(B, kiln_tir_scalar(KILN_DTYPE_INT32), kiln_tir_b_f32(B, (double)NAN)),
        "0");
  const kiln_tir_expr_t *shift_args[] = {C(-1), C(4)};
  check(&f, kiln_tir_b_call(B, KILN_TIR_INTRINSIC_SHIFT_RIGHT, 2, shift_args), "268435455");
  const kiln_tir_expr_t *wide_args[] = {C(1), C(32)};
  check(&f, kiln_tir_b_call(B, KILN_TIR_INTRINSIC_SHIFT_LEFT, 2, wide_args), "0");
  const kiln_tir_expr_t *negative_args[] = {C(1), C(-1)};
  check(&f, kiln_tir_b_call(B, KILN_TIR_INTRINSIC_SHIFT_LEFT, 2, negative_args), "0");
  fixture_done(&f);
}

static void test_linear_forms(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  check(&f, SUB(ADD(MUL(V(i), C(4)), V(j)), ADD(V(j), MUL(V(i), C(4)))), "0");
  check(&f, ADD(MUL(V(i), C(1)), C(0)), "i");
  check(&f, ADD(ADD(V(i), C(3)), ADD(V(j), C(-5))), "i + j - 2");
  check(&f, SUB(MUL(C(2), ADD(V(i), V(j))), V(j)), "i * 2 + j");
  check(&f, SUB(C(0), V(i)), "i * -1");
  check(&f, SUB(V(j), MUL(V(i), C(3))), "j - i * 3");
  /* Non-linear products and other atoms merge structurally. */
  check(&f, SUB(ADD(MUL(V(i), V(j)), V(n)), MUL(V(i), V(j))), "n");
  check(&f, SUB(ADD(DIV(V(i), V(n)), C(1)), DIV(V(i), V(n))), "1");
  /* Mixed dtypes: a cast is an atom of its own, i+1 may wrap in int32. */
  kiln_tir_dtype_t i64 = kiln_tir_scalar(KILN_DTYPE_INT64);
  check(&f,
        kiln_tir_b_bin(B, KILN_TIR_EXPR_SUB, kiln_tir_b_cast(B, i64, ADD(V(i), C(1))),
                       kiln_tir_b_cast(B, i64, V(i))),
        "T.Cast(\"int64\", i + 1) - T.Cast(\"int64\", i)");
  check(&f,
        kiln_tir_b_bin(B, KILN_TIR_EXPR_SUB,
                       kiln_tir_b_add(B, V(l64), kiln_tir_b_cast(B, i64, V(i))), V(l64)),
        "T.Cast(\"int64\", i)");
  /* A coefficient that does not fit int32 is not written out. */
  check(&f, ADD(MUL(V(i), C(65536)), MUL(V(i), C(2147418112))), "i * 65536 + i * 2147418112");
  fixture_done(&f);
}

static void test_bounds(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  bind(&f, f.i, 0, 15);
  bind(&f, f.j, -3, 4);
  KILN_ASSERT_OK(kiln_tir_builder_finish(B));
  kiln_tir_interval_t r = kiln_tir_analyzer_bound(&f.analyzer, SUB(MUL(V(i), C(2)), V(j)));
  assert_true(r.exact);
  assert_int_equal(r.min, -4);
  assert_int_equal(r.max, 33);
  r = kiln_tir_analyzer_bound(&f.analyzer, MUL(V(j), V(j)));
  assert_int_equal(r.min, -12); /* interval arithmetic, not exact squares */
  assert_int_equal(r.max, 16);
  r = kiln_tir_analyzer_bound(&f.analyzer, MOD(V(j), C(4)));
  assert_int_equal(r.min, 0);
  assert_int_equal(r.max, 3);
  r = kiln_tir_analyzer_bound(&f.analyzer, DIV(V(j), C(4)));
  assert_int_equal(r.min, -1);
  assert_int_equal(r.max, 1);
  r = kiln_tir_analyzer_bound(&f.analyzer, V(n)); /* unbound: its dtype */
  assert_int_equal(r.min, INT32_MIN);
  assert_int_equal(r.max, INT32_MAX);
  /* i * 2^28 with i in [0, 15] fits; n * 4 may wrap: the dtype's range. */
  r = kiln_tir_analyzer_bound(&f.analyzer, MUL(V(i), C(1 << 27)));
  assert_int_equal(r.max, 15LL << 27);
  r = kiln_tir_analyzer_bound(&f.analyzer, MUL(V(n), C(4)));
  assert_int_equal(r.min, INT32_MIN);
  assert_int_equal(r.max, INT32_MAX);
  KILN_ASSERT_STATUS(kiln_tir_analyzer_bind(&f.analyzer, f.n, 3, 2), INVALID_ARGUMENT,
                     "analyzer: empty range [3, 2] for n");
  kiln_tir_analyzer_unbind(&f.analyzer);
  r = kiln_tir_analyzer_bound(&f.analyzer, V(j)); /* scope popped */
  assert_int_equal(r.min, INT32_MIN);
  fixture_done(&f);
}

static void test_min_max(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  bind(&f, f.i, 0, 15);
  check(&f, BIN(MIN, V(i), C(16)), "i");
  check(&f, BIN(MIN, V(i), C(15)), "i");
  check(&f, BIN(MAX, V(i), C(16)), "16");
  check(&f, BIN(MAX, C(0), V(i)), "i");
  check(&f, BIN(MIN, ADD(V(i), C(1)), V(i)), "i");
  /* Must not fire: the ranges overlap, or nothing is known. */
  check(&f, BIN(MIN, V(i), C(14)), "T.min(i, 14)");
  check(&f, BIN(MAX, V(i), V(j)), "T.max(i, j)");
  check(&f, BIN(MIN, V(n), ADD(V(n), C(1))), "T.min(n, n + 1)"); /* n + 1 may wrap */
  check(&f, BIN(MIN, V(x), V(x)), "T.min(x, x)");                /* floats: folding only */
  fixture_done(&f);
}

static void test_floordiv_floormod(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  bind(&f, f.i, 0, 100);
  bind(&f, f.j, 0, 15);
  check(&f, DIV(ADD(MUL(V(i), C(16)), V(j)), C(16)), "i");
  check(&f, MOD(ADD(MUL(V(i), C(16)), V(j)), C(16)), "j");
  check(&f, DIV(ADD(MUL(V(i), C(32)), ADD(V(j), C(16))), C(16)), "i * 2 + 1");
  check(&f, MOD(ADD(MUL(V(i), C(32)), ADD(V(j), C(16))), C(16)), "j");
  check(&f, DIV(V(j), C(16)), "0");
  check(&f, MOD(V(j), C(16)), "j");
  check(&f, DIV(ADD(V(j), C(-16)), C(16)), "-1");
  check(&f, MOD(V(n), C(1)), "0");
  check(&f, DIV(V(n), C(1)), "n");
  /* j may reach 16, or be negative: the multiples of 16 still leave the
   * division ((q c + r) // c = q + r // c in integers), r stays divided;
   * the dividend may wrap: nothing fires. */
  KILN_ASSERT_OK(kiln_tir_analyzer_bind(&f.analyzer, f.j, 0, 16));
  check(&f, DIV(ADD(MUL(V(i), C(16)), V(j)), C(16)), "i + j // 16");
  check(&f, MOD(ADD(MUL(V(i), C(16)), V(j)), C(16)), "j % 16");
  check(&f, DIV(ADD(MUL(V(i), C(16)), C(16)), C(16)), "i + 1");
  kiln_tir_analyzer_unbind(&f.analyzer);
  KILN_ASSERT_OK(kiln_tir_analyzer_bind(&f.analyzer, f.j, -1, 14));
  check(&f, DIV(ADD(MUL(V(i), C(16)), V(j)), C(16)), "i + j // 16");
  check(&f, MOD(V(j), C(16)), "j % 16");
  kiln_tir_analyzer_unbind(&f.analyzer);
  check(&f, DIV(ADD(MUL(V(n), C(16)), V(j)), C(16)), "(n * 16 + j) // 16");
  check(&f, DIV(V(i), V(j)), "i // j"); /* divisor not a constant */
  check(&f, DIV(ADD(MUL(V(i), C(16)), V(j)), C(-16)), "(i * 16 + j) // -16");
  fixture_done(&f);
}

/* x // c * c + x % c is x for any x (n is unbounded), scaled by k; it
 * needs the same x, the same c and coefficients k*c and k. */
static void test_div_mod_recombine(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  check(&f, ADD(MUL(DIV(V(n), C(4)), C(4)), MOD(V(n), C(4))), "n");
  check(&f, ADD(MOD(V(n), C(4)), MUL(DIV(V(n), C(4)), C(4))), "n");
  check(&f, ADD(MUL(DIV(V(n), C(4)), C(8)), MUL(MOD(V(n), C(4)), C(2))), "n * 2");
  check(&f, ADD(ADD(MUL(DIV(ADD(V(n), V(i)), C(3)), C(3)), MOD(ADD(V(n), V(i)), C(3))), C(1)),
        "n + i + 1");
  /* Must not fire: other divisor, other dividend, wrong coefficient. */
  check(&f, ADD(MUL(DIV(V(n), C(4)), C(4)), MOD(V(n), C(8))), "n // 4 * 4 + n % 8");
  check(&f, ADD(MUL(DIV(V(n), C(4)), C(4)), MOD(V(i), C(4))), "n // 4 * 4 + i % 4");
  check(&f, ADD(MUL(DIV(V(n), C(4)), C(3)), MOD(V(n), C(4))), "n // 4 * 3 + n % 4");
  fixture_done(&f);
}

static void test_comparisons_and_select(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  bind(&f, f.i, 0, 15);
  bind(&f, f.j, 0, 3);
  check(&f, BIN(LT, V(i), C(20)), "T.bool(True)");
  check(&f, BIN(GE, V(i), C(16)), "T.bool(False)");
  check(&f, BIN(LT, ADD(MUL(V(i), C(4)), V(j)), C(64)), "T.bool(True)");
  check(&f, BIN(LE, V(i), ADD(V(i), V(j))), "T.bool(True)");
  check(&f, BIN(EQ, SUB(ADD(V(n), C(1)), C(1)), V(n)), "T.bool(True)");
  check(&f, BIN(NE, V(i), C(-1)), "T.bool(True)");
  /* Must not fire. */
  check(&f, BIN(LT, ADD(MUL(V(i), C(4)), V(j)), C(63)), "i * 4 + j < 63");
  check(&f, BIN(LT, V(n), ADD(V(n), C(1))), "n < n + 1"); /* wraps at INT32_MAX */
  check(&f, BIN(LT, V(x), V(x)), "x < x");
  /* Select and logic. */
  const kiln_tir_expr_t *p = BIN(LT, V(n), C(0));
  check(&f, kiln_tir_b_select(B, BIN(LT, V(i), C(16)), V(n), C(0)), "n");
  check(&f, kiln_tir_b_select(B, p, V(i), V(i)), "i");
  check(&f, kiln_tir_b_select(B, p, V(i), V(j)), "T.Select(n < 0, i, j)");
  check(&f, BIN(AND, BIN(LT, V(i), C(16)), p), "n < 0");
  check(&f, BIN(OR, BIN(LT, V(i), C(16)), p), "T.bool(True)");
  check(&f, BIN(AND, p, BIN(GT, V(i), C(16))), "T.bool(False)");
  check(&f, BIN(OR, p, BIN(GT, V(i), C(16))), "n < 0");
  fixture_done(&f);
}

static char *simplified_text(fixture_t *f, const kiln_tir_stmt_t *s) {
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  const kiln_tir_stmt_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_simplify_stmt(&f->arena, NULL, s, &out));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_allocator_system(), out, &text));
  return text;
}

static void test_statements(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {64};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(B, "A", KILN_DTYPE_INT32, 1, shape);
  /* for i in 4: for j in 16: if i*16 + j < 64: A[(i*16 + j) // 16 * 16 + (i*16 + j) % 16] = min(j,
   * 20) */
  const kiln_tir_expr_t *flat = ADD(MUL(V(i), C(16)), V(j));
  const kiln_tir_expr_t *idx[] = {ADD(MUL(DIV(flat, C(16)), C(16)), MOD(flat, C(16)))};
  const kiln_tir_stmt_t *store = kiln_tir_b_store(B, A, BIN(MIN, V(j), C(20)), 1, idx);
  const kiln_tir_stmt_t *guarded = kiln_tir_b_if(B, BIN(LT, flat, C(64)), store, NULL);
  const kiln_tir_stmt_t *tail = kiln_tir_b_if(B, BIN(LT, flat, C(63)), store, NULL);
  const kiln_tir_stmt_t *both[] = {guarded, tail};
  const kiln_tir_stmt_t *body =
      kiln_tir_b_for(B, f.j, C(0), C(16), KILN_TIR_FOR_VECTORIZED, kiln_tir_b_seq(B, 2, both));
  body = kiln_tir_b_for(B, f.i, C(0), C(4), KILN_TIR_FOR_PARALLEL, body);
  char *text = simplified_text(&f, body);
  assert_string_equal(text, "for i in T.parallel(4):\n"
                            "    for j in T.vectorized(16):\n"
                            "        A[i * 16 + j] = j\n"
                            "        if i * 16 + j < 63:\n"
                            "            A[i * 16 + j] = j\n");
  free(text);
  /* Outside the loop the same store keeps its min (its index still folds: x // 16
   * * 16 + x % 16 is x for any x); a false branch disappears;
   * an assertion that holds is dropped, one that fails is kept; a let binds
   * its value's range. */
  const kiln_tir_stmt_t *other = kiln_tir_b_store(B, A, C(1), 1, idx);
  const kiln_tir_stmt_t *list[] = {
      store,
      kiln_tir_b_if(B, BIN(GT, C(1), C(2)), other, NULL),
      kiln_tir_b_if(B, BIN(GT, C(1), C(2)), other, store),
      kiln_tir_b_assert(B, BIN(LT, C(1), C(2)), "holds", other),
      kiln_tir_b_assert(B, BIN(GT, C(1), C(2)), "fails", other),
      kiln_tir_b_let_stmt(B, f.n, MOD(V(i), C(8)),
                          kiln_tir_b_if(B, BIN(LT, V(n), C(8)), other, store)),
  };
  text = simplified_text(&f, kiln_tir_b_seq(B, 6, list));
  assert_string_equal(text, "A[i * 16 + j] = T.min(j, 20)\n"
                            "pass\n"
                            "A[i * 16 + j] = T.min(j, 20)\n"
                            "A[i * 16 + j] = 1\n"
                            "assert T.bool(False), \"fails\"\n"
                            "A[i * 16 + j] = 1\n"
                            "n: T.int32 = i % 8\n"
                            "A[i * 16 + j] = 1\n");
  free(text);
  /* Nothing to simplify: the same function comes back. */
  const kiln_tir_expr_t *plain[] = {flat};
  const kiln_tir_prim_func_t *func =
      kiln_tir_b_func(B, "f", 1, &A, kiln_tir_b_store(B, A, C(1), 1, plain));
  KILN_ASSERT_OK(kiln_tir_builder_finish(B));
  const kiln_tir_prim_func_t *same = NULL;
  KILN_ASSERT_OK(kiln_tir_simplify_prim_func(&f.arena, func, &same));
  assert_ptr_equal(same, func);
  fixture_done(&f);
}

static kiln_status_t simplify_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 256);
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, &arena);
  const int64_t shape[] = {64};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(&b, "A", KILN_DTYPE_INT32, 1, shape);
  const kiln_tir_var_t *i = kiln_tir_b_var(&b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(&b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *flat = kiln_tir_b_add(
      &b, kiln_tir_b_mul(&b, kiln_tir_b_v(i), kiln_tir_b_i32(&b, 16)), kiln_tir_b_v(j));
  const kiln_tir_expr_t *idx[] = {
      kiln_tir_b_bin(&b, KILN_TIR_EXPR_FLOOR_MOD, flat, kiln_tir_b_i32(&b, 64))};
  const kiln_tir_stmt_t *s = kiln_tir_b_store(&b, A, kiln_tir_b_v(j), 1, idx);
  s = kiln_tir_b_for(&b, j, kiln_tir_b_i32(&b, 0), kiln_tir_b_i32(&b, 16), KILN_TIR_FOR_SERIAL, s);
  s = kiln_tir_b_for(&b, i, kiln_tir_b_i32(&b, 0), kiln_tir_b_i32(&b, 4), KILN_TIR_FOR_SERIAL, s);
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(&b, "f", 1, &A, s);
  kiln_status_t status = kiln_tir_builder_finish(&b);
  const kiln_tir_prim_func_t *out = NULL;
  if (!status) {
    status = kiln_tir_simplify_prim_func(&arena, func, &out);
  }
  if (!status && out == func) {
    status = KILN_STATUS(INTERNAL, "the modulo was not simplified");
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

/* A loop over [0, (n + 7) // 8 * 12) (a fused tile loop over a run-time
 * extent): i // ((n + 7) // 8) is in [0, 11] and i % ((n + 7) // 8) is not
 * negative, so a column index leaves its division and the column guard
 * folds; the row guard stays (n is unknown), and so does the lower bound of
 * the row (times 8 it may wrap, as far as bounds tell). Another divisor,
 * an extent that is not a multiple of the divisor, or a loop from 1 prove
 * nothing. */
static void test_run_time_extent(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {12, 32};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(B, "A", KILN_DTYPE_INT32, 2, shape);
  const kiln_tir_expr_t *tiles = DIV(ADD(V(n), C(7)), C(8));
  const kiln_tir_expr_t *extents[] = {MUL(tiles, C(12)), MUL(C(12), tiles), MUL(tiles, C(12)),
                                      ADD(MUL(tiles, C(12)), C(1)), MUL(V(n), C(12))};
  const char *expected[] = {
      "for i in T.parallel((n + 7) // 8 * 12):\n"
      "    for j in T.serial(32):\n"
      "        if 0 <= i % ((n + 7) // 8) * 8 and i % ((n + 7) // 8) * 8 + 7 < n:\n"
      "            A[i // ((n + 7) // 8), j] = 1\n",
      "for i in T.parallel((n + 7) // 8 * 12):\n" /* the extent's linear form, reordered */
      "    for j in T.serial(32):\n"
      "        if 0 <= i % ((n + 7) // 8) * 8 and i % ((n + 7) // 8) * 8 + 7 < n:\n"
      "            A[i // ((n + 7) // 8), j] = 1\n",
      NULL, NULL, NULL};
  for (int e = 0; e < 5; ++e) {
    const kiln_tir_expr_t *q = DIV(V(i), tiles), *r = MOD(V(i), tiles);
    const kiln_tir_expr_t *col = ADD(MUL(q, C(32)), V(j));
    const kiln_tir_expr_t *cond =
        BIN(AND, BIN(LE, C(0), MUL(r, C(8))),
            BIN(AND, BIN(LT, col, C(384)), BIN(LT, ADD(MUL(r, C(8)), C(7)), V(n))));
    const kiln_tir_expr_t *idx[] = {DIV(col, C(32)), MOD(col, C(32))};
    const kiln_tir_stmt_t *body =
        kiln_tir_b_if(B, cond, kiln_tir_b_store(B, A, C(1), 2, idx), NULL);
    body = kiln_tir_b_for(B, f.j, C(0), C(32), KILN_TIR_FOR_SERIAL, body);
    body = kiln_tir_b_for(B, f.i, C(e == 2), extents[e], KILN_TIR_FOR_PARALLEL, body);
    char *text = simplified_text(&f, body);
    if (expected[e]) {
      assert_string_equal(text, expected[e]);
    } else { /* nothing proven: the guard and the division stay */
      assert_non_null(strstr(text, "i // ((n + 7) // 8) * 32 + j < 384"));
      assert_non_null(strstr(text, "(i // ((n + 7) // 8) * 32 + j) // 32"));
    }
    free(text);
  }
  fixture_done(&f);
}

/* Divisions by run-time extents in a kernel whose index arithmetic is
 * trusted (trust_index), inside a loop i over [0, n * 12) and j in
 * [0, 31]: (i // n) * (n * 32) + (i % n) * 32 is i * 32 (a flattened
 * (12, n, 32) index); (i * 32 + j) // (n * 32) is i // n and its % is
 * (i % n) * 32 + j (mixed radix), whole multiples j * (n * 32) leaving
 * the division (a product's constant factor comes out: p * (n * 32) is
 * p * n * 32); a loop k over [0, n) makes k % n k and
 * k // n 0; trusted, the constant rules fold i * 32 + j whose bound leaves
 * int32. What must not fire: untrusted, the same forms stay; a divisor
 * that no loop extent makes positive, another dividend, a coefficient
 * that does not match, a load (data may wrap). */
static void test_run_time_divisors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_var_t *k = kiln_tir_b_var(B, "k", KILN_DTYPE_INT32);
  const int64_t shape[] = {8};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(B, "A", KILN_DTYPE_INT32, 1, shape);
  const kiln_tir_expr_t *zero = C(0);
  const kiln_tir_expr_t *flat = ADD(MUL(V(i), C(32)), V(j));
  const kiln_tir_expr_t *recombine =
      ADD(MUL(DIV(V(i), V(n)), MUL(V(n), C(32))), MUL(MOD(V(i), V(n)), C(32)));
  const kiln_tir_expr_t *wrong_coeff =
      ADD(MUL(DIV(V(i), V(n)), MUL(V(n), C(16))), MUL(MOD(V(i), V(n)), C(32)));
  const kiln_tir_expr_t *other_dividend =
      ADD(MUL(DIV(V(j), V(n)), MUL(V(n), C(32))), MUL(MOD(V(i), V(n)), C(32)));
  const kiln_tir_expr_t *load = ADD(MUL(kiln_tir_b_load(B, A, 1, &zero), C(32)), V(j));
  KILN_ASSERT_OK(kiln_tir_analyzer_bind_extent(&f.analyzer, f.i, MUL(V(n), C(12))));
  bind(&f, f.j, 0, 31);
  check(&f, DIV(flat, C(32)), "(i * 32 + j) // 32");
  check(&f, DIV(flat, MUL(V(n), C(32))), "(i * 32 + j) // (n * 32)");
  f.analyzer.trust_index = 1;
  check(&f, recombine, "i * 32");
  check(&f, DIV(flat, MUL(V(n), C(32))), "i // n");
  check(&f, MOD(flat, MUL(V(n), C(32))), "j + i % n * 32");
  check(&f, DIV(flat, C(32)), "i");
  check(&f, MOD(flat, C(32)), "j");
  check(&f, wrong_coeff, "i // n * n * 16 + i % n * 32"); /* the 16 out of the product */
  check(&f, other_dividend, "j // n * n * 32 + i % n * 32");
  /* whole divisors leave: (j * (n * 32) + i * 32 + j) // (n * 32) */
  const kiln_tir_expr_t *whole = ADD(MUL(V(j), MUL(V(n), C(32))), flat);
  check(&f, DIV(whole, MUL(V(n), C(32))), "j + i // n");
  check(&f, MOD(whole, MUL(V(n), C(32))), "j + i % n * 32");
  check(&f, DIV(load, C(32)), "(A[0] * 32 + j) // 32");
  check(&f, DIV(flat, MUL(V(j), C(32))), "(i * 32 + j) // (j * 32)"); /* j may be 0 */
  KILN_ASSERT_OK(kiln_tir_analyzer_bind_extent(&f.analyzer, k, V(n)));
  check(&f, MOD(kiln_tir_b_v(k), V(n)), "k");
  check(&f, DIV(kiln_tir_b_v(k), V(n)), "0");
  check(&f, DIV(V(i), V(n)), "i // n"); /* i runs to n * 12 */
  kiln_tir_analyzer_unbind(&f.analyzer);
  fixture_done(&f);
}

static void test_simplify_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(simplify_scenario, NULL) > 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_constant_folding),
      cmocka_unit_test(test_linear_forms),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_min_max),
      cmocka_unit_test(test_floordiv_floormod),
      cmocka_unit_test(test_div_mod_recombine),
      cmocka_unit_test(test_comparisons_and_select),
      cmocka_unit_test(test_statements),
      cmocka_unit_test(test_run_time_extent),
      cmocka_unit_test(test_run_time_divisors),
      cmocka_unit_test(test_simplify_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
