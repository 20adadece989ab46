/*
 * The compute rule of det (transform_det_compute.c, an extern op) against
 * the reference kernel (kiln_compute_test.h), through the loop-IR
 * interpreter and every backend: batches of one, two and three dims, a
 * single matrix (a rank-0 output), 1x1 matrices, float32 and float64, and
 * matrices that are singular (a zero column: the zero pivot) or need row
 * swaps (zeros on the diagonal); and the rule's errors.
 */
#include "kiln_compute_test.h"

static void test_det(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_det;
  const kiln_type_t *types[] = {
      ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 4, 4)),    ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 5)),
      ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 3, 3)), ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(7, 1, 1)),
      ttype(KILN_DTYPE_FLOAT64, 3, SHAPE(2, 7, 7)),    ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(2, 2)),
  };
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); ++i) {
    check_compute_random(op, NULL, 1, &types[i], -2, 2);
  }
  /* Matrix 0 has a zero column (singular), matrix 1 zeros on its diagonal. */
  const float special[18] = {1, 0, 2, 3, 0, 4, 5, 0, 6, 0, 1, 2, 3, 0, 4, 5, 6, 0};
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 3), special);
  check_compute(op, NULL, 1, &x);
  kiln_tensor_release(x);
}

static void test_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_det;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 2, SHAPE(2, 2));
  KILN_ASSERT_STATUS(kiln_op_lower(op, NULL, 1, &i32, &target, &kiln_op_test_arena, "f", &func),
                     UNIMPLEMENTED, "det: the compute rule does not handle int32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_det, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
