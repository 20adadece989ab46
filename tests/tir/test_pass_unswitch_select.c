/*
 * Tests of unswitch_select: a three-input concatenation along an outer
 * axis (the selects depend on the parallel loop alone) becomes one copy of
 * the inner loop per input (printed exactly) computing the same numbers; a
 * select whose condition uses an inner loop variable, or a value with a
 * Let, stays; a chain longer than the copy limit unswitches 64 copies and
 * leaves the rest as selects, with the same numbers; a function without
 * selects is returned as it is.
 */
#include "pass_fixture.h"

/* for c in parallel(n): for j in serial(4): Out[c * 4 + j] = chain, where
 * chain(k) = select(c < k + 1, In[k * 4 + j], chain(k + 1)) and the last
 * input is read unconditionally. */
static const kiln_tir_prim_func_t *concat(fixture_t *f, int n, int inner_condition) {
  kiln_tir_builder_t *b = &f->b;
  int64_t in_shape = (int64_t)n * 4, out_shape = (int64_t)n * 4;
  const kiln_tir_buffer_t *params[] = {
      kiln_tir_b_buffer(b, "In", KILN_DTYPE_FLOAT32, 1, &in_shape),
      kiln_tir_b_buffer(b, "Out", KILN_DTYPE_FLOAT32, 1, &out_shape)};
  const kiln_tir_var_t *c = kiln_tir_b_var(b, "c", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *cv = kiln_tir_b_v(c), *jv = kiln_tir_b_v(j);
  const kiln_tir_expr_t *value = pass_load1(
      b, params[0],
      kiln_tir_b_add(b, kiln_tir_b_mul(b, kiln_tir_b_i32(b, n - 1), kiln_tir_b_i32(b, 4)), jv));
  for (int k = n - 2; k >= 0; --k) {
    const kiln_tir_expr_t *index = kiln_tir_b_add(b, kiln_tir_b_i32(b, (int64_t)k * 4), jv);
    const kiln_tir_expr_t *cond =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, inner_condition ? jv : cv, kiln_tir_b_i32(b, k + 1));
    value = kiln_tir_b_select(b, cond, pass_load1(b, params[0], index), value);
  }
  const kiln_tir_expr_t *out_index =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, cv, kiln_tir_b_i32(b, 4)), jv);
  const kiln_tir_stmt_t *store = pass_store1(b, params[1], out_index, value);
  const kiln_tir_stmt_t *inner =
      kiln_tir_b_for(b, j, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 4), KILN_TIR_FOR_SERIAL, store);
  const kiln_tir_stmt_t *outer = kiln_tir_b_for(b, c, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, n),
                                                KILN_TIR_FOR_PARALLEL, inner);
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(b, "concat", 2, params, outer);
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  return func;
}

static const kiln_tir_prim_func_t *unswitch(fixture_t *f, const kiln_tir_prim_func_t *func) {
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_unswitch_select(&f->arena, func, &out));
  return out;
}

static void test_concatenation(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = concat(&f, 3, 0), *out = unswitch(&f, func);
  pass_check_text(out, "@T.prim_func\n"
                       "def concat(In: T.Buffer((12,), \"float32\"), Out: T.Buffer((12,), "
                       "\"float32\")):\n"
                       "    for c in T.parallel(3):\n"
                       "        if c < 1:\n"
                       "            for j in T.serial(4):\n"
                       "                Out[c * 4 + j] = In[0 + j]\n"
                       "        else:\n"
                       "            if c < 2:\n"
                       "                for j in T.serial(4):\n"
                       "                    Out[c * 4 + j] = In[4 + j]\n"
                       "            else:\n"
                       "                for j in T.serial(4):\n"
                       "                    Out[c * 4 + j] = In[2 * 4 + j]\n");
  pass_check_same(func, out, 3);
  /* Nothing left to unswitch: the same function. */
  assert_ptr_equal(unswitch(&f, out), out);
  fixture_done(&f);
}

static void test_inner_conditions_stay(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = concat(&f, 3, 1);
  assert_ptr_equal(unswitch(&f, func), func);
  fixture_done(&f);
}

static void test_copy_limit(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = concat(&f, 80, 0), *out = unswitch(&f, func);
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), out, &text));
  int loops = 0;
  for (const char *p = strstr(text, "T.serial(4)"); p; p = strstr(p + 1, "T.serial(4)")) {
    ++loops;
  }
  assert_int_equal(loops, 64);
  assert_non_null(strstr(text, "T.Select("));
  free(text);
  pass_check_same(func, out, 5);
  fixture_done(&f);
}

/* for v in serial(4): for w in serial(2): B[v * 2 + w] = let x = v in
 * select(x < 2, A[w], A[2 + w]): the condition names a Let's variable. */
static const kiln_tir_stmt_t *let_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                       const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_var_t *w = kiln_tir_b_var(b, "w", KILN_DTYPE_INT32);
  const kiln_tir_var_t *x = kiln_tir_b_var(b, "x", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *wv = kiln_tir_b_v(w);
  const kiln_tir_expr_t *select = kiln_tir_b_select(
      b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, kiln_tir_b_v(x), kiln_tir_b_i32(b, 2)),
      pass_load1(b, a, wv), pass_load1(b, a, kiln_tir_b_add(b, kiln_tir_b_i32(b, 2), wv)));
  const kiln_tir_expr_t *index =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, kiln_tir_b_v(v), kiln_tir_b_i32(b, 2)), wv);
  const kiln_tir_stmt_t *store =
      pass_store1(b, out, index, kiln_tir_b_let(b, x, kiln_tir_b_v(v), select));
  return kiln_tir_b_for(b, w, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 2), KILN_TIR_FOR_SERIAL,
                        store);
}

static void test_let_stays(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "let", 4, 8, KILN_TIR_FOR_SERIAL, 4, let_body);
  assert_ptr_equal(unswitch(&f, func), func);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concatenation),
      cmocka_unit_test(test_inner_conditions_stay),
      cmocka_unit_test(test_copy_limit),
      cmocka_unit_test(test_let_stays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
