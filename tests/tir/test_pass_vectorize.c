/*
 * Tests of vectorize: the partitioned 7x13 split becomes ramp/vector code
 * (printed exactly), the fused 1x3x17x23 split by 16 vectorizes both with
 * multi-dimensional indices (the f % 23 lane-wise rule) and flattened, the
 * cache_write reduction vectorizes around its inner k loop; every result
 * computes bit-identical numbers on the interpreter. Selects, intrinsic
 * calls and casts become vector; the guarded (unpartitioned) body, a store
 * every lane writes, a store that is not lane-wise, a store in an inner loop
 * whose location uses that loop's variable, a let of a vector and a too
 * long loop stay serial loops. Then errors and an allocation sweep.
 */
#include "pass_fixture.h"

static const kiln_tir_prim_func_t *vectorize(fixture_t *f, const kiln_tir_prim_func_t *func) {
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_vectorize(&f->arena, func, &out));
  return out;
}

static const kiln_tir_prim_func_t *partitioned(fixture_t *f, const kiln_tir_prim_func_t *func,
                                               int flat) {
  KILN_ASSERT_OK(kiln_tir_loop_partition(&f->arena, func, &func));
  if (flat) {
    KILN_ASSERT_OK(kiln_tir_storage_flatten(&f->arena, func, &func));
  }
  return func;
}

static void test_split(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_split(&f.arena);
  const kiln_tir_prim_func_t *out = vectorize(&f, partitioned(&f, func, 0));
  pass_check_text(out, "@T.prim_func\n"
                       "def split(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), "
                       "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                       "    for i in T.parallel(7):\n"
                       "        for j_outer in T.serial(3):\n"
                       "            C[i, T.ramp(j_outer * 4 + 0, 1, 4)] = A[i, T.ramp(j_outer * 4 "
                       "+ 0, 1, 4)] * B[i, T.ramp(j_outer * 4 + 0, 1, 4)] + A[i, T.ramp(j_outer * "
                       "4 + 0, 1, 4)]\n"
                       "        for j_inner in T.serial(4):\n"
                       "            if 3 * 4 + j_inner < 13:\n"
                       "                C[i, 3 * 4 + j_inner] = A[i, 3 * 4 + j_inner] * B[i, 3 * 4 "
                       "+ j_inner] + A[i, 3 * 4 + j_inner]\n");
  pass_check_same(func, out, 21);
  /* Without partitioning the guard depends on the lanes: a serial loop. */
  pass_check_text(vectorize(&f, func),
                  "@T.prim_func\n"
                  "def split(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), "
                  "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                  "    for i in T.parallel(7):\n"
                  "        for j_outer in T.serial(4):\n"
                  "            for j_inner in T.serial(4):\n"
                  "                if j_outer * 4 + j_inner < 13:\n"
                  "                    C[i, j_outer * 4 + j_inner] = A[i, j_outer * 4 + j_inner] * "
                  "B[i, j_outer * 4 + j_inner] + A[i, j_outer * 4 + j_inner]\n");
  fixture_done(&f);
}

/* The main loop's store of a partitioned fused workload: 16 lanes. */
static void check_fused_vector(const kiln_tir_prim_func_t *out) {
  const kiln_tir_seq_t *seq = (const void *)out->body;
  assert_int_equal(seq->base.kind, KILN_TIR_STMT_SEQ);
  const kiln_tir_for_t *main_loop = (const void *)seq->stmts[0];
  assert_int_equal(main_loop->for_kind, KILN_TIR_FOR_PARALLEL);
  const kiln_tir_buffer_store_t *store = (const void *)main_loop->body;
  assert_int_equal(store->base.kind, KILN_TIR_STMT_BUFFER_STORE);
  assert_int_equal(store->value->dtype.lanes, 16);
  const kiln_tir_for_t *tail = (const void *)seq->stmts[1];
  assert_int_equal(tail->for_kind, KILN_TIR_FOR_SERIAL);
}

static void test_fused(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_fused(&f.arena);
  const kiln_tir_prim_func_t *nd = vectorize(&f, partitioned(&f, func, 0));
  check_fused_vector(nd);
  pass_check_same(func, nd, 22);
  const kiln_tir_prim_func_t *flat = vectorize(&f, partitioned(&f, func, 1));
  check_fused_vector(flat);
  pass_check_same(func, flat, 23);
  fixture_done(&f);
}

static void test_cached_reduction(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_cached(&f.arena);
  const kiln_tir_prim_func_t *out = vectorize(&f, partitioned(&f, func, 1));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), out, &text));
  /* The accumulation inside the k loop is a vector statement. */
  assert_non_null(
      strstr(text, "                for k in T.serial(5):\n"
                   "                    C_local[T.ramp(i_c * 4 + 0, 1, 4)] = C_local[T.ramp(i_c "
                   "* 4 + 0, 1, 4)] + T.broadcast(A[i * 5 + i_c * 5 + k], 4) * B[T.ramp(k * 13 + "
                   "j_outer * 4 + 0, 1, 4)]\n"));
  assert_null(strstr(text, "T.vectorized"));
  free(text);
  pass_check_same(func, out, 24);
  fixture_done(&f);
}

/* B[v] = select(v < 2, exp(A[v]), A[v] * float32(v) + A[0]) */
static const kiln_tir_stmt_t *mixed_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                         const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *x = kiln_tir_b_v(v), *av = pass_load1(b, a, x);
  const kiln_tir_expr_t *e = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_EXP, 1, &av);
  const kiln_tir_expr_t *scaled = kiln_tir_b_add(
      b, kiln_tir_b_mul(b, av, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), x)),
      pass_load1(b, a, kiln_tir_b_i32(b, 0)));
  const kiln_tir_expr_t *c = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, kiln_tir_b_i32(b, 2));
  return pass_store1(b, out, x, kiln_tir_b_select(b, c, e, scaled));
}

static void test_select_call_cast(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "mixed", 4, 4, KILN_TIR_FOR_VECTORIZED, 4, mixed_body);
  const kiln_tir_prim_func_t *out = vectorize(&f, func);
  pass_check_text(out, "@T.prim_func\n"
                       "def mixed(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), "
                       "\"float32\")):\n"
                       "    B[T.ramp(0, 1, 4)] = T.Select(T.ramp(0, 1, 4) < T.broadcast(2, 4), "
                       "T.exp(A[T.ramp(0, 1, 4)]), A[T.ramp(0, 1, 4)] * T.Cast(\"float32x4\", "
                       "T.ramp(0, 1, 4)) + T.broadcast(A[0], 4))\n");
  pass_check_same(func, out, 25);
  fixture_done(&f);
}

/* B[0] = B[0] + A[v]: every lane writes B[0]. */
static const kiln_tir_stmt_t *reduce_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                          const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  return pass_store1(
      b, out, zero, kiln_tir_b_add(b, pass_load1(b, out, zero), pass_load1(b, a, kiln_tir_b_v(v))));
}

/* B[v // 2] = A[v]: two lanes per location. */
static const kiln_tir_stmt_t *pairs_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                         const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  return pass_store1(b, out, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, kiln_tir_b_i32(b, 2)),
                     pass_load1(b, a, x));
}

/* B[v] = let w = v in A[w]: a let of a vector. */
static const kiln_tir_stmt_t *let_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                       const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_var_t *w = kiln_tir_b_var(b, "w", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  return pass_store1(b, out, x, kiln_tir_b_let(b, w, x, pass_load1(b, a, kiln_tir_b_v(w))));
}

/* for k in 0..2: B[v + k] = A[v]: lanes of different k iterations collide. */
static const kiln_tir_stmt_t *shifted_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                           const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_var_t *k = kiln_tir_b_var(b, "k", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  const kiln_tir_stmt_t *store =
      pass_store1(b, out, kiln_tir_b_add(b, x, kiln_tir_b_v(k)), pass_load1(b, a, x));
  return kiln_tir_b_for(b, k, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 2), KILN_TIR_FOR_SERIAL,
                        store);
}

/* B[v] = A[v] */
static const kiln_tir_stmt_t *copy_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                        const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  return pass_store1(b, out, kiln_tir_b_v(v), pass_load1(b, a, kiln_tir_b_v(v)));
}

static void check_stays_serial(fixture_t *f, const kiln_tir_prim_func_t *func) {
  const kiln_tir_prim_func_t *out = vectorize(f, func);
  const kiln_tir_for_t *before = (const void *)func->body, *after = (const void *)out->body;
  assert_int_equal(after->base.kind, KILN_TIR_STMT_FOR);
  assert_int_equal(after->for_kind, KILN_TIR_FOR_SERIAL);
  assert_ptr_equal(after->body, before->body);
  assert_ptr_equal(after->var, before->var);
}

static void test_must_not_vectorize(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "reduce", 8, 1, KILN_TIR_FOR_VECTORIZED, 8, reduce_body);
  check_stays_serial(&f, func);
  pass_check_text(vectorize(&f, func), "@T.prim_func\n"
                                       "def reduce(A: T.Buffer((8,), \"float32\"), B: "
                                       "T.Buffer((1,), \"float32\")):\n"
                                       "    for v in T.serial(8):\n"
                                       "        B[0] = B[0] + A[v]\n");
  check_stays_serial(&f,
                     pass_loop_func(&f.b, "pairs", 8, 4, KILN_TIR_FOR_VECTORIZED, 8, pairs_body));
  check_stays_serial(&f, pass_loop_func(&f.b, "let", 8, 8, KILN_TIR_FOR_VECTORIZED, 8, let_body));
  func = pass_loop_func(&f.b, "shifted", 4, 5, KILN_TIR_FOR_VECTORIZED, 4, shifted_body);
  check_stays_serial(&f, func);
  check_stays_serial(&f,
                     pass_loop_func(&f.b, "long", KILN_TIR_MAX_LANES + 1, KILN_TIR_MAX_LANES + 1,
                                    KILN_TIR_FOR_VECTORIZED, KILN_TIR_MAX_LANES + 1, copy_body));
  check_stays_serial(&f, pass_loop_func(&f.b, "one", 1, 1, KILN_TIR_FOR_VECTORIZED, 1, copy_body));
  fixture_done(&f);
}

static void test_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_STATUS(kiln_tir_vectorize(&f.arena, NULL, &out), INVALID_ARGUMENT,
                     "vectorize: null function");
  fixture_done(&f);
}

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 64);
  const kiln_tir_prim_func_t *const *func = context, *out = NULL;
  kiln_status_t status = kiln_tir_vectorize(&arena, *func, &out);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = partitioned(&f, pass_workload_cached(&f.arena), 1);
  assert_true(kiln_test_sweep_allocation_failures(sweep_scenario, (void *)&func) > 5);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_fused),
      cmocka_unit_test(test_cached_reduction),
      cmocka_unit_test(test_select_call_cast),
      cmocka_unit_test(test_must_not_vectorize),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
