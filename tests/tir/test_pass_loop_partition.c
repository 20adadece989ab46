/*
 * Tests of loop_partition: the tails of the te lowerings of a split (7x13
 * by 4), a fuse+split (1x3x17x23 by 16), a matmul with its reduce axis
 * split (by 4, unrolled) and a cache_write/compute_at reduction are peeled,
 * the printed IR is exact and the partitioned function computes
 * bit-identical results on the interpreter; hand-built loops check <=, >,
 * >= guards, a parallel loop that stays parallel with a tail the bounds
 * prove empty, and guards that must not partition (not linear, v inside an
 * atom, an else branch). Then errors and an allocation-failure sweep.
 */
#include "pass_fixture.h"

static const kiln_tir_prim_func_t *partition(fixture_t *f, const kiln_tir_prim_func_t *func) {
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_loop_partition(&f->arena, func, &out));
  return out;
}

static void test_split_tail(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_split(&f.arena), *out = partition(&f, func);
  pass_check_text(out,
                  "@T.prim_func\n"
                  "def split(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), "
                  "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                  "    for i in T.parallel(7):\n"
                  "        for j_outer in T.serial(3):\n"
                  "            for j_inner in T.vectorized(4):\n"
                  "                C[i, j_outer * 4 + j_inner] = A[i, j_outer * 4 + j_inner] * "
                  "B[i, j_outer * 4 + j_inner] + A[i, j_outer * 4 + j_inner]\n"
                  "        for j_inner in T.vectorized(4):\n"
                  "            if 3 * 4 + j_inner < 13:\n"
                  "                C[i, 3 * 4 + j_inner] = A[i, 3 * 4 + j_inner] * B[i, 3 * 4 "
                  "+ j_inner] + A[i, 3 * 4 + j_inner]\n");
  pass_check_same(func, out, 1);
  /* Pure: the input is untouched, and a second run changes nothing more. */
  const kiln_tir_for_t *outer = (const void *)func->body;
  assert_int_equal(outer->body->kind, KILN_TIR_STMT_FOR);
  assert_ptr_equal(partition(&f, out), out);
  fixture_done(&f);
}

static void test_fused_tail(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_fused(&f.arena), *out = partition(&f, func);
  /* A parallel main loop of 73 blocks of 16 without guard, then the tail. */
  assert_int_equal(out->body->kind, KILN_TIR_STMT_SEQ);
  const kiln_tir_seq_t *seq = (const void *)out->body;
  assert_int_equal(seq->count, 2);
  const kiln_tir_for_t *main_loop = (const void *)seq->stmts[0];
  const kiln_tir_for_t *tail = (const void *)seq->stmts[1];
  int64_t extent = 0;
  assert_true(kiln_tir_expr_as_int(main_loop->extent, &extent));
  assert_int_equal(extent, 73);
  assert_int_equal(main_loop->for_kind, KILN_TIR_FOR_PARALLEL);
  const kiln_tir_for_t *inner = (const void *)main_loop->body;
  assert_int_equal(inner->for_kind, KILN_TIR_FOR_VECTORIZED);
  assert_int_equal(inner->body->kind, KILN_TIR_STMT_BUFFER_STORE);
  assert_int_equal(tail->base.kind, KILN_TIR_STMT_FOR);
  assert_int_equal(tail->for_kind, KILN_TIR_FOR_VECTORIZED);
  assert_int_equal(tail->body->kind, KILN_TIR_STMT_IF_THEN_ELSE);
  pass_check_same(func, out, 2);
  fixture_done(&f);
}

static void test_split_reduce_axis(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_matmul(&f.arena), *out = partition(&f, func);
  /* k_outer = 0 runs the four unrolled k_inner unguarded; k_outer = 1 keeps
   * only k_inner = 0 (the other three are proven out of range). */
  pass_check_text(out, "@T.prim_func\n"
                       "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), "
                       "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                       "    for i in T.serial(7):\n"
                       "        for j in T.serial(13):\n"
                       "            C[i, j] = T.float32(0.0)\n"
                       "            for k_inner in T.unroll(4):\n"
                       "                C[i, j] = C[i, j] + A[i, 0 * 4 + k_inner] * B[0 * 4 + "
                       "k_inner, j]\n"
                       "            C[i, j] = C[i, j] + A[i, 1 * 4 + 0] * B[1 * 4 + 0, j]\n");
  pass_check_same(func, out, 3);
  fixture_done(&f);
}

static void test_cache_write_compute_at(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_cached(&f.arena), *out = partition(&f, func);
  /* for i: [j_outer in 0..3 without guards; j_outer = 3 with them]. */
  const kiln_tir_for_t *i = (const void *)out->body;
  assert_int_equal(i->body->kind, KILN_TIR_STMT_SEQ);
  const kiln_tir_seq_t *seq = (const void *)i->body;
  assert_int_equal(seq->count, 2);
  const kiln_tir_for_t *main_loop = (const void *)seq->stmts[0];
  int64_t extent = 0;
  assert_true(kiln_tir_expr_as_int(main_loop->extent, &extent));
  assert_int_equal(extent, 3);
  assert_int_equal(seq->stmts[1]->kind, KILN_TIR_STMT_ALLOCATE);
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_allocator_system(), &main_loop->base, &text));
  assert_null(strstr(text, "if "));
  free(text);
  pass_check_same(func, out, 4);
  fixture_done(&f);
}

/* if v <= 9: B[v] = A[v] (v in 0..12): prefix 10. */
static const kiln_tir_stmt_t *le_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                      const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  return kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LE, x, kiln_tir_b_i32(b, 9)),
                       pass_store1(b, out, x, pass_load1(b, a, x)), NULL);
}

/* if 11 > v and v * 2 + 1 >= 0: ... (v in 0..12): prefix 11, the second
 * conjunct always holds. */
static const kiln_tir_stmt_t *gt_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                      const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  const kiln_tir_expr_t *c1 = kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, kiln_tir_b_i32(b, 11), x);
  const kiln_tir_expr_t *c2 = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_GE,
      kiln_tir_b_add(b, kiln_tir_b_mul(b, x, kiln_tir_b_i32(b, 2)), kiln_tir_b_i32(b, 1)),
      kiln_tir_b_i32(b, 0));
  return kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, c1, c2),
                       pass_store1(b, out, x, pass_load1(b, a, x)), NULL);
}

static void test_comparison_forms(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "le", 13, 13, KILN_TIR_FOR_PARALLEL, 13, le_body);
  const kiln_tir_prim_func_t *out = partition(&f, func);
  /* Parallel stays parallel; the tail [10, 13) is proven empty and dropped. */
  pass_check_text(out, "@T.prim_func\n"
                       "def le(A: T.Buffer((13,), \"float32\"), B: T.Buffer((13,), \"float32\")):\n"
                       "    for v in T.parallel(10):\n"
                       "        B[v] = A[v]\n");
  func = pass_loop_func(&f.b, "gt", 13, 13, KILN_TIR_FOR_SERIAL, 13, gt_body);
  out = partition(&f, func);
  pass_check_text(out, "@T.prim_func\n"
                       "def gt(A: T.Buffer((13,), \"float32\"), B: T.Buffer((13,), \"float32\")):\n"
                       "    for v in T.serial(11):\n"
                       "        B[v] = A[v]\n");
  fixture_done(&f);
}

/* if v * v < 10 (not linear in v): must stay. */
static const kiln_tir_stmt_t *square_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                          const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  return kiln_tir_b_if(
      b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, kiln_tir_b_mul(b, x, x), kiln_tir_b_i32(b, 10)),
      pass_store1(b, out, x, pass_load1(b, a, x)), NULL);
}

/* if v % 3 < 2: v inside an atom; a guard holding for a suffix (v >= 4);
 * an If with an else branch. */
static const kiln_tir_stmt_t *others_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                          const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  const kiln_tir_stmt_t *store = pass_store1(b, out, x, pass_load1(b, a, x));
  const kiln_tir_stmt_t *stmts[] = {
      kiln_tir_b_if(
          b,
          kiln_tir_b_bin(b, KILN_TIR_EXPR_LT,
                         kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, kiln_tir_b_i32(b, 3)),
                         kiln_tir_b_i32(b, 2)),
          store, NULL),
      kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, x, kiln_tir_b_i32(b, 4)), store, NULL),
      kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, kiln_tir_b_i32(b, 4)), store, store)};
  return kiln_tir_b_seq(b, 3, stmts);
}

static void test_must_not_partition(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "square", 8, 8, KILN_TIR_FOR_SERIAL, 8, square_body);
  assert_ptr_equal(partition(&f, func), func);
  pass_check_text(func, "@T.prim_func\n"
                        "def square(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), "
                        "\"float32\")):\n"
                        "    for v in T.serial(8):\n"
                        "        if v * v < 10:\n"
                        "            B[v] = A[v]\n");
  func = pass_loop_func(&f.b, "others", 8, 8, KILN_TIR_FOR_SERIAL, 8, others_body);
  assert_ptr_equal(partition(&f, func), func);
  fixture_done(&f);
}

static void test_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_STATUS(kiln_tir_loop_partition(&f.arena, NULL, &out), INVALID_ARGUMENT,
                     "loop_partition: null function");
  assert_null(out);
  fixture_done(&f);
}

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 64);
  const kiln_tir_prim_func_t *out = NULL;
  const kiln_tir_prim_func_t *const *func = context;
  kiln_status_t status = kiln_tir_loop_partition(&arena, *func, &out);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *funcs[] = {pass_workload_matmul(&f.arena),
                                         pass_workload_cached(&f.arena)};
  for (int i = 0; i < 2; ++i) {
    int64_t n = kiln_test_sweep_allocation_failures(sweep_scenario, (void *)&funcs[i]);
    assert_true(n > 5);
  }
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_tail),
      cmocka_unit_test(test_fused_tail),
      cmocka_unit_test(test_split_reduce_axis),
      cmocka_unit_test(test_cache_write_compute_at),
      cmocka_unit_test(test_comparison_forms),
      cmocka_unit_test(test_must_not_partition),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
