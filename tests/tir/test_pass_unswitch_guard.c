/*
 * Tests of unswitch_guard on hand-built kernels over a run-time extent n:
 * a GEMM-like tile loop fused over row and column tiles (its guards read
 * the fused variable through // and %) gets one corner test before the
 * tile's loops and an unguarded copy (printed exactly), computing the same
 * numbers as before at n = 1, 3, 4, 5 and 13 (every output element
 * written); a guard of the function's body over n alone is tested before
 * the loop. Guards stay where the pass must not fire: one that reads a
 * buffer, one over an inner loop of run-time extent, one not linear in an
 * inner variable, one with an else, one outside every inner loop. At most
 * 16 bodies are copied per function; a null function is an error.
 */
#include "pass_fixture.h"

/* The variables and buffers of a kernel over n. */
typedef struct kernel_t {
  kiln_tir_builder_t *b;
  const kiln_tir_var_t *n, *f, *k, *r, *c;
  const kiln_tir_expr_t *tiles; /* (n + 3) // 4 */
  const kiln_tir_buffer_t *params[3];
} kernel_t;

static const kiln_tir_expr_t *v(const kiln_tir_var_t *var) {
  return kiln_tir_b_v(var);
}

static const kiln_tir_expr_t *i32(kernel_t *t, int64_t value) {
  return kiln_tir_b_i32(t->b, value);
}

static const kiln_tir_expr_t *bin(kernel_t *t, kiln_tir_expr_kind_t kind, const kiln_tir_expr_t *x,
                                  const kiln_tir_expr_t *y) {
  return kiln_tir_b_bin(t->b, kind, x, y);
}

/* A: (n, 8) float32, C: (n, 8) float32 (and I: (8,) int32 when `index`). */
static void kernel_init(kernel_t *t, kiln_tir_builder_t *b, int index) {
  memset(t, 0, sizeof(*t));
  t->b = b;
  t->n = kiln_tir_b_var(b, "n", KILN_DTYPE_INT32);
  const char *names[] = {"f", "k", "r", "c"};
  const kiln_tir_var_t **vars[] = {&t->f, &t->k, &t->r, &t->c};
  for (int i = 0; i < 4; ++i) {
    *vars[i] = kiln_tir_b_var(b, names[i], KILN_DTYPE_INT32);
  }
  t->tiles = bin(t, KILN_TIR_EXPR_FLOOR_DIV, kiln_tir_b_add(b, v(t->n), i32(t, 3)), i32(t, 4));
  const kiln_tir_expr_t *shape[] = {v(t->n), i32(t, 8)};
  KILN_ASSERT_OK(kiln_tir_buffer_create(b->arena, "A", KILN_DTYPE_FLOAT32, 2, shape, NULL, NULL,
                                        &t->params[0]));
  KILN_ASSERT_OK(kiln_tir_buffer_create(b->arena, "C", KILN_DTYPE_FLOAT32, 2, shape, NULL, NULL,
                                        &t->params[1]));
  if (index) {
    int64_t eight = 8;
    t->params[2] = t->params[1];
    t->params[1] = kiln_tir_b_buffer(b, "I", KILN_DTYPE_INT32, 1, &eight);
  }
}

/* C[i, j] = A[i, j] * 2 + 1. */
static const kiln_tir_stmt_t *store(kernel_t *t, const kiln_tir_expr_t *i,
                                    const kiln_tir_expr_t *j) {
  const kiln_tir_expr_t *ix[] = {i, j};
  const kiln_tir_buffer_t *c = t->params[2] ? t->params[2] : t->params[1];
  const kiln_tir_expr_t *a = kiln_tir_b_load(t->b, t->params[0], 2, ix);
  const kiln_tir_expr_t *value = kiln_tir_b_add(
      t->b, kiln_tir_b_mul(t->b, a, kiln_tir_b_f32(t->b, 2)), kiln_tir_b_f32(t->b, 1));
  return kiln_tir_b_store(t->b, c, value, 2, ix);
}

static const kiln_tir_stmt_t *loop(kernel_t *t, const kiln_tir_var_t *var,
                                   const kiln_tir_expr_t *extent, kiln_tir_for_kind_t kind,
                                   const kiln_tir_stmt_t *body) {
  return kiln_tir_b_for(t->b, var, i32(t, 0), extent, kind, body);
}

static const kiln_tir_prim_func_t *finish(kernel_t *t, const char *name,
                                          const kiln_tir_stmt_t *body) {
  int count = t->params[2] ? 3 : 2;
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(t->b, name, count, t->params, body);
  KILN_ASSERT_OK(kiln_tir_builder_finish(t->b));
  return func;
}

/* for f in parallel(tiles * 2): for k in 3: for r in 4: for c in 4:
 *   i = f % tiles * 4 + r, j = f // tiles * 4 + c
 *   if 0 <= i and i < n and j < 8: C[i, j] = A[i, j] * 2 + 1 */
static const kiln_tir_prim_func_t *tile(kernel_t *t) {
  const kiln_tir_expr_t *i = kiln_tir_b_add(
      t->b, kiln_tir_b_mul(t->b, bin(t, KILN_TIR_EXPR_FLOOR_MOD, v(t->f), t->tiles), i32(t, 4)),
      v(t->r));
  const kiln_tir_expr_t *j = kiln_tir_b_add(
      t->b, kiln_tir_b_mul(t->b, bin(t, KILN_TIR_EXPR_FLOOR_DIV, v(t->f), t->tiles), i32(t, 4)),
      v(t->c));
  const kiln_tir_expr_t *cond = bin(t, KILN_TIR_EXPR_AND, bin(t, KILN_TIR_EXPR_LE, i32(t, 0), i),
                                    bin(t, KILN_TIR_EXPR_AND, bin(t, KILN_TIR_EXPR_LT, i, v(t->n)),
                                        bin(t, KILN_TIR_EXPR_LT, j, i32(t, 8))));
  const kiln_tir_stmt_t *body = kiln_tir_b_if(t->b, cond, store(t, i, j), NULL);
  body = loop(t, t->c, i32(t, 4), KILN_TIR_FOR_SERIAL, body);
  body = loop(t, t->r, i32(t, 4), KILN_TIR_FOR_SERIAL, body);
  body = loop(t, t->k, i32(t, 3), KILN_TIR_FOR_SERIAL, body);
  body = loop(t, t->f, kiln_tir_b_mul(t->b, t->tiles, i32(t, 2)), KILN_TIR_FOR_PARALLEL, body);
  return finish(t, "tile", body);
}

static const kiln_tir_prim_func_t *unswitch(fixture_t *f, const kiln_tir_prim_func_t *func) {
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_unswitch_guard(&f->arena, func, &out));
  return out;
}

/* A (n, 8) and a poisoned C (n, 8) (and I of zeros) for `func`. */
static void make_args(const kiln_tir_prim_func_t *func, int64_t n, uint32_t seed,
                      kiln_tensor_t **out) {
  int64_t shape[] = {n, 8};
  for (int p = 0; p < func->num_params; ++p) {
    const kiln_tir_buffer_t *buffer = func->params[p];
    int64_t eight = 8;
    int ndim = buffer->ndim;
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), buffer->dtype, ndim,
                                      ndim == 2 ? shape : &eight, &out[p]));
    memset(kiln_tensor_data(out[p]), 0, kiln_tensor_byte_size(out[p]));
    if (buffer->dtype != KILN_DTYPE_FLOAT32) {
      continue;
    }
    float *data = kiln_tensor_data(out[p]);
    for (int64_t e = 0; e < kiln_tensor_element_count(out[p]); ++e) {
      seed = seed * 1664525u + 1013904223u;
      data[e] = p == 0 ? (float)(seed >> 8) / (float)(1u << 24) : -1e30f;
    }
  }
}

/* `before` and `after` at size n: the same outputs (and, when
 * `all_written`, every element of C written). */
static void check_same_at(const kiln_tir_prim_func_t *before, const kiln_tir_prim_func_t *after,
                          int64_t n, int all_written) {
  kiln_tensor_t *x[3] = {0}, *y[3] = {0};
  make_args(before, n, 7, x);
  make_args(before, n, 7, y);
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), before, before->num_params, x));
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), after, after->num_params, y));
  int last = before->num_params - 1;
  for (int p = 0; p < before->num_params; ++p) {
    assert_memory_equal(kiln_tensor_data(x[p]), kiln_tensor_data(y[p]),
                        kiln_tensor_byte_size(x[p]));
  }
  const float *c = kiln_tensor_data(y[last]);
  for (int64_t e = 0; all_written && e < kiln_tensor_element_count(y[last]); ++e) {
    assert_true(c[e] > -1e29f);
  }
  for (int p = 0; p < before->num_params; ++p) {
    kiln_tensor_release(x[p]);
    kiln_tensor_release(y[p]);
  }
}

static void check_same(const kiln_tir_prim_func_t *before, const kiln_tir_prim_func_t *after,
                       int all_written) {
  const int64_t sizes[] = {1, 3, 4, 5, 13};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    check_same_at(before, after, sizes[s], all_written);
  }
}

static void test_fused_tile(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kernel_t t;
  kernel_init(&t, &f.b, 0);
  const kiln_tir_prim_func_t *func = tile(&t), *out = unswitch(&f, func);
  pass_check_text(
      out,
      "@T.prim_func\n"
      "def tile(A: T.Buffer((n, 8), \"float32\"), C: T.Buffer((n, 8), \"float32\")):\n"
      "    for f in T.parallel((n + 3) // 4 * 2):\n"
      "        if 0 <= f % ((n + 3) // 4) * 4 + 0 and f % ((n + 3) // 4) * 4 + 3 < n and f // "
      "((n + 3) // 4) * 4 + 3 < 8:\n"
      "            for k in T.serial(3):\n"
      "                for r in T.serial(4):\n"
      "                    for c in T.serial(4):\n"
      "                        C[f % ((n + 3) // 4) * 4 + r, f // ((n + 3) // 4) * 4 + c] = A[f "
      "% ((n + 3) // 4) * 4 + r, f // ((n + 3) // 4) * 4 + c] * T.float32(2.0) + "
      "T.float32(1.0)\n"
      "        else:\n"
      "            for k in T.serial(3):\n"
      "                for r in T.serial(4):\n"
      "                    if 0 <= f % ((n + 3) // 4) * 4 + r and f % ((n + 3) // 4) * 4 + r < "
      "n:\n"
      "                        for c in T.serial(4):\n"
      "                            if f // ((n + 3) // 4) * 4 + c < 8:\n"
      "                                C[f % ((n + 3) // 4) * 4 + r, f // ((n + 3) // 4) * 4 + "
      "c] = A[f % ((n + 3) // 4) * 4 + r, f // ((n + 3) // 4) * 4 + c] * T.float32(2.0) + "
      "T.float32(1.0)\n"
      "                    else:\n"
      "                        for c in T.serial(4):\n"
      "                            if 0 <= f % ((n + 3) // 4) * 4 + r and (f % ((n + 3) // 4) * "
      "4 + r < n and f // ((n + 3) // 4) * 4 + c < 8):\n"
      "                                C[f % ((n + 3) // 4) * 4 + r, f // ((n + 3) // 4) * 4 + "
      "c] = A[f % ((n + 3) // 4) * 4 + r, f // ((n + 3) // 4) * 4 + c] * T.float32(2.0) + "
      "T.float32(1.0)\n");
  check_same(func, out, 1);
  fixture_done(&f);
}

/* for c in 4: if c + 2 < n: C[0, c] = ...; tested once before the loop. */
static void test_function_body(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kernel_t t;
  kernel_init(&t, &f.b, 0);
  const kiln_tir_expr_t *cond =
      bin(&t, KILN_TIR_EXPR_LT, kiln_tir_b_add(&f.b, v(t.c), i32(&t, 2)), v(t.n));
  const kiln_tir_stmt_t *body = kiln_tir_b_if(
      &f.b, cond, store(&t, bin(&t, KILN_TIR_EXPR_FLOOR_MOD, v(t.c), v(t.n)), v(t.c)), NULL);
  const kiln_tir_prim_func_t *func =
      finish(&t, "head", loop(&t, t.c, i32(&t, 4), KILN_TIR_FOR_SERIAL, body));
  const kiln_tir_prim_func_t *out = unswitch(&f, func);
  pass_check_text(out, "@T.prim_func\n"
                       "def head(A: T.Buffer((n, 8), \"float32\"), C: T.Buffer((n, 8), "
                       "\"float32\")):\n"
                       "    if 3 + 2 < n:\n"
                       "        for c in T.serial(4):\n"
                       "            C[c % n, c] = A[c % n, c] * T.float32(2.0) + T.float32(1.0)\n"
                       "    else:\n"
                       "        for c in T.serial(4):\n"
                       "            if c + 2 < n:\n"
                       "                C[c % n, c] = A[c % n, c] * T.float32(2.0) + "
                       "T.float32(1.0)\n");
  check_same(func, out, 0);
  fixture_done(&f);
}

/* for f in parallel(n): <inner>(if <cond>: C[f, 0] = ...), built by `make`. */
typedef const kiln_tir_stmt_t *(*stays_fn)(kernel_t *t, const kiln_tir_stmt_t *store);

static void check_stays(int index, stays_fn make) {
  fixture_t f;
  fixture_init(&f);
  kernel_t t;
  kernel_init(&t, &f.b, index);
  const kiln_tir_stmt_t *body = make(&t, store(&t, v(t.f), i32(&t, 0)));
  const kiln_tir_prim_func_t *func =
      finish(&t, "stays", loop(&t, t.f, v(t.n), KILN_TIR_FOR_PARALLEL, body));
  assert_ptr_equal(unswitch(&f, func), func);
  fixture_done(&f);
}

static const kiln_tir_stmt_t *in_c_loop(kernel_t *t, const kiln_tir_expr_t *cond,
                                        const kiln_tir_stmt_t *s) {
  return loop(t, t->c, i32(t, 4), KILN_TIR_FOR_SERIAL, kiln_tir_b_if(t->b, cond, s, NULL));
}

/* if I[f % 8] + c < n: the test would read a buffer. */
static const kiln_tir_stmt_t *reads_buffer(kernel_t *t, const kiln_tir_stmt_t *s) {
  const kiln_tir_expr_t *ix = bin(t, KILN_TIR_EXPR_FLOOR_MOD, v(t->f), i32(t, 8));
  const kiln_tir_expr_t *load = kiln_tir_b_load(t->b, t->params[1], 1, &ix);
  return in_c_loop(t, bin(t, KILN_TIR_EXPR_LT, kiln_tir_b_add(t->b, load, v(t->c)), v(t->n)), s);
}

/* for r in n: if f + r < n: r's range is not known (and r's own body is
 * the guard). */
static const kiln_tir_stmt_t *inner_extent(kernel_t *t, const kiln_tir_stmt_t *s) {
  const kiln_tir_expr_t *cond =
      bin(t, KILN_TIR_EXPR_LT, kiln_tir_b_add(t->b, v(t->f), v(t->r)), v(t->n));
  return loop(t, t->r, v(t->n), KILN_TIR_FOR_SERIAL, kiln_tir_b_if(t->b, cond, s, NULL));
}

/* if f + c * c < n: not linear in c. */
static const kiln_tir_stmt_t *not_linear(kernel_t *t, const kiln_tir_stmt_t *s) {
  const kiln_tir_expr_t *square = kiln_tir_b_mul(t->b, v(t->c), v(t->c));
  return in_c_loop(t, bin(t, KILN_TIR_EXPR_LT, kiln_tir_b_add(t->b, v(t->f), square), v(t->n)), s);
}

/* if f + c < n: ... else: ...: not a guard. */
static const kiln_tir_stmt_t *with_else(kernel_t *t, const kiln_tir_stmt_t *s) {
  const kiln_tir_expr_t *cond =
      bin(t, KILN_TIR_EXPR_LT, kiln_tir_b_add(t->b, v(t->f), v(t->c)), v(t->n));
  return loop(t, t->c, i32(t, 4), KILN_TIR_FOR_SERIAL, kiln_tir_b_if(t->b, cond, s, s));
}

/* if f * 2 < n around the c loop: tested once per f already. */
static const kiln_tir_stmt_t *outside_loops(kernel_t *t, const kiln_tir_stmt_t *s) {
  const kiln_tir_expr_t *cond =
      bin(t, KILN_TIR_EXPR_LT, kiln_tir_b_mul(t->b, v(t->f), i32(t, 2)), v(t->n));
  return kiln_tir_b_if(t->b, cond, loop(t, t->c, i32(t, 4), KILN_TIR_FOR_SERIAL, s), NULL);
}

static void test_guards_that_stay(void **state) {
  (void)state;
  check_stays(1, reads_buffer);
  check_stays(0, inner_extent);
  check_stays(0, not_linear);
  check_stays(0, with_else);
  check_stays(0, outside_loops);
}

/* 20 loops over n, each with a guard of its own: 16 are unswitched. */
static void test_copy_limit(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kernel_t t;
  kernel_init(&t, &f.b, 0);
  const kiln_tir_stmt_t *loops[20];
  for (int i = 0; i < 20; ++i) {
    const kiln_tir_var_t *var = kiln_tir_b_var(&f.b, "f", KILN_DTYPE_INT32);
    const kiln_tir_expr_t *cond =
        bin(&t, KILN_TIR_EXPR_LT, kiln_tir_b_add(&f.b, v(var), v(t.c)), v(t.n));
    const kiln_tir_stmt_t *s = kiln_tir_b_if(&f.b, cond, store(&t, v(var), v(t.c)), NULL);
    loops[i] = loop(&t, var, v(t.n), KILN_TIR_FOR_SERIAL,
                    loop(&t, t.c, i32(&t, 4), KILN_TIR_FOR_SERIAL, s));
  }
  const kiln_tir_prim_func_t *func = finish(&t, "many", kiln_tir_b_seq(&f.b, 20, loops));
  const kiln_tir_prim_func_t *out = unswitch(&f, func);
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), out, &text));
  int tests = 0;
  for (const char *p = strstr(text, "else:"); p; p = strstr(p + 1, "else:")) {
    ++tests;
  }
  assert_int_equal(tests, 16);
  free(text);
  check_same_at(func, out, 9, 0);
  fixture_done(&f);
}

static void test_null_function(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_STATUS(kiln_tir_unswitch_guard(&f.arena, NULL, &out), INVALID_ARGUMENT,
                     "unswitch_guard: null function");
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_tile),       cmocka_unit_test(test_function_body),
      cmocka_unit_test(test_guards_that_stay), cmocka_unit_test(test_copy_limit),
      cmocka_unit_test(test_null_function),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
