/*
 * The compute rule of einsum (transform_einsum_compute.c) against the
 * reference kernel (kiln_compute_test.h), through the loop-IR interpreter
 * and every backend: matrix products with and without a batch, sums over
 * one and several labels, an inner product to a scalar, transposes and
 * diagonals (nothing summed: a plain compute), ellipses that broadcast a
 * dim of 1, three inputs, the implicit output, float32 and float64 on odd
 * extents; and the errors of the rule itself.
 */
#include <stdio.h>

#include "kiln_compute_test.h"

typedef struct einsum_case_t {
  const char *equation;
  int num_inputs;
  kiln_dtype_t dtype;
  int ndim[3];
  int64_t shape[3][4];
} einsum_case_t;

static void test_einsum(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_einsum;
  static const einsum_case_t cases[] = {
      {"ij,jk->ik", 2, KILN_DTYPE_FLOAT32, {2, 2}, {{5, 7}, {7, 19}}},
      {"bij,bjk->bik", 2, KILN_DTYPE_FLOAT64, {3, 3}, {{3, 5, 7}, {3, 7, 6}}},
      {"i,i", 2, KILN_DTYPE_FLOAT64, {1, 1}, {{23}, {23}}},
      {"ij->i", 1, KILN_DTYPE_FLOAT32, {2}, {{5, 13}}},
      {"ijk->", 1, KILN_DTYPE_FLOAT32, {3}, {{3, 5, 7}}},
      {"ij->ji", 1, KILN_DTYPE_FLOAT64, {2}, {{5, 19}}},
      {"...ii->...i", 1, KILN_DTYPE_FLOAT64, {4}, {{2, 3, 5, 5}}},
      {"ii", 1, KILN_DTYPE_FLOAT32, {2}, {{7, 7}}},
      {"...ij,...jk", 2, KILN_DTYPE_FLOAT32, {4, 3}, {{2, 1, 3, 5}, {4, 5, 3}}},
      {"ab,bc,cd->ad", 3, KILN_DTYPE_FLOAT32, {2, 2, 2}, {{3, 4}, {4, 5}, {5, 17}}},
      {"i,j->ij", 2, KILN_DTYPE_FLOAT32, {1, 1}, {{5}, {21}}},
      {"bhqd,bhkd->bhqk", 2, KILN_DTYPE_FLOAT32, {4, 4}, {{1, 2, 5, 3}, {1, 2, 7, 3}}},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    const einsum_case_t *e = &cases[c];
    const kiln_type_t *types[3];
    for (int i = 0; i < e->num_inputs; ++i) {
      types[i] = ttype(e->dtype, e->ndim[i], e->shape[i]);
    }
    char equation[64];
    snprintf(equation, sizeof(equation), "\"%s\"", e->equation);
    check_compute_random(op, ATTRS(op, "equation", equation), e->num_inputs, types, -2, 2);
  }
}

static void test_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_einsum;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 2, SHAPE(2, 3));
  KILN_ASSERT_STATUS(kiln_op_lower(op, ATTRS(op, "equation", "\"ij->ji\""), 1, &i32, &target,
                                   &kiln_op_test_arena, "f", &func),
                     UNIMPLEMENTED, "einsum: the compute rule does not handle int32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_einsum, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
