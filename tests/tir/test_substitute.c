/*
 * Tests of variable substitution, used the way a schedule's split uses it:
 * i -> io * 4 + ii in a loop body, then simplified, printed and run against
 * the original loop.
 */
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "tir/interp.h"
#include "tir/printer.h"
#include "tir/simplify.h"
#include "tir/substitute.h"
#include "tir_fixture.h"

static void test_split_by_substitution(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const int64_t shape[] = {64};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", KILN_DTYPE_INT32, 1, shape);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *io = kiln_tir_b_var(b, "io", KILN_DTYPE_INT32);
  const kiln_tir_var_t *ii = kiln_tir_b_var(b, "ii", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *four = kiln_tir_b_i32(b, 4);
  /* A[i // 4 * 4 + i % 4] = i * 3 */
  const kiln_tir_expr_t *idx[] = {kiln_tir_b_add(
      b, kiln_tir_b_mul(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, kiln_tir_b_v(i), four), four),
      kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, kiln_tir_b_v(i), four))};
  const kiln_tir_stmt_t *body =
      kiln_tir_b_store(b, A, kiln_tir_b_mul(b, kiln_tir_b_v(i), kiln_tir_b_i32(b, 3)), 1, idx);
  const kiln_tir_stmt_t *original =
      kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 64), KILN_TIR_FOR_SERIAL, body);
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));

  kiln_tir_var_value_t map[] = {
      {i, kiln_tir_b_add(b, kiln_tir_b_mul(b, kiln_tir_b_v(io), four), kiln_tir_b_v(ii))}};
  const kiln_tir_stmt_t *inner = NULL;
  KILN_ASSERT_OK(kiln_tir_substitute_stmt(&f.arena, 1, map, body, &inner));
  inner = kiln_tir_b_for(b, ii, kiln_tir_b_i32(b, 0), four, KILN_TIR_FOR_VECTORIZED, inner);
  const kiln_tir_stmt_t *split = kiln_tir_b_for(b, io, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 16),
                                                KILN_TIR_FOR_PARALLEL, inner);
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  const kiln_tir_stmt_t *simple = NULL;
  KILN_ASSERT_OK(kiln_tir_simplify_stmt(&f.arena, NULL, split, &simple));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_allocator_system(), simple, &text));
  assert_string_equal(text, "for io in T.parallel(16):\n"
                            "    for ii in T.vectorized(4):\n"
                            "        A[io * 4 + ii] = io * 12 + ii * 3\n");
  free(text);

  /* All three versions write the same numbers. */
  const kiln_tir_stmt_t *versions[] = {original, split, simple};
  int32_t first[64];
  for (int v = 0; v < 3; ++v) {
    const kiln_tir_prim_func_t *func = kiln_tir_b_func(b, "f", 1, &A, versions[v]);
    KILN_ASSERT_OK(kiln_tir_builder_finish(b));
    kiln_tensor_t *t = NULL;
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_INT32, 1, shape, &t));
    KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 1, &t));
    const int32_t *data = kiln_tensor_data(t);
    assert_int_equal(data[63], 189);
    if (v == 0) {
      memcpy(first, data, sizeof(first));
    } else {
      assert_memory_equal(data, first, sizeof(first));
    }
    kiln_tensor_release(t);
  }
  fixture_done(&f);
}

static void test_substitute_errors_and_identity(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *k = kiln_tir_b_var(b, "k", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *e = kiln_tir_b_add(b, kiln_tir_b_v(i), kiln_tir_b_i32(b, 1));
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  const kiln_tir_expr_t *out = NULL;
  kiln_tir_var_value_t bad[] = {{i, kiln_tir_b_int(b, KILN_DTYPE_INT64, 2)}};
  KILN_ASSERT_STATUS(kiln_tir_substitute_expr(&f.arena, 1, bad, e, &out), INVALID_ARGUMENT,
                     "substitute: variable i is int32 but its value is int64");
  kiln_tir_var_value_t none[] = {{i, NULL}};
  KILN_ASSERT_STATUS(kiln_tir_substitute_expr(&f.arena, 1, none, e, &out), INVALID_ARGUMENT,
                     "entry 0 has a null variable or value");
  kiln_tir_var_value_t other[] = {{k, kiln_tir_b_i32(b, 2)}};
  KILN_ASSERT_OK(kiln_tir_substitute_expr(&f.arena, 1, other, e, &out));
  assert_ptr_equal(out, e); /* nothing mapped: the same node */
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_by_substitution),
      cmocka_unit_test(test_substitute_errors_and_identity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
