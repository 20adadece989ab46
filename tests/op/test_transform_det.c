/*
 * Tests of det (transform_det.c): every type-relation error, the output
 * shapes, and the reference kernel on determinants worked by hand: a 2x2,
 * a permutation (the pivot swaps, the sign flips), a diagonal, a singular
 * matrix (a zero pivot), a batch, 1x1 and 0x0 (1), float64.
 */
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

static void test_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_det;
  assert_int_equal(op->attrs_size, 0);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 5, 5)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(4, 4)), &out));
  assert_type(out, KILN_DTYPE_FLOAT64, 0, SHAPE(0));
  KILN_ASSERT_STATUS(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(4)), &out),
                     INVALID_ARGUMENT, "det: data (4,) must be (..., n, n): square matrices");
  KILN_ASSERT_STATUS(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4)), &out),
                     INVALID_ARGUMENT, "det: data (2, 3, 4) must be (..., n, n)");
  KILN_ASSERT_STATUS(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5000, 5000)), &out),
                     INVALID_ARGUMENT, "det: matrices of data (5000, 5000) are larger than 4096");
}

static void check_det(int ndim, const int64_t *shape, const float *data, const double *expected,
                      int64_t count) {
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT32, ndim, shape, data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_det, NULL, x, &out));
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

static void test_kernel(void **state) {
  (void)state;
  check_det(2, SHAPE(2, 2), (const float[]){1, 2, 3, 4}, (const double[]){-2}, 1);
  check_det(2, SHAPE(2, 2), (const float[]){0, 1, 1, 0}, (const double[]){-1}, 1);
  check_det(3, SHAPE(2, 2, 2), (const float[]){1, 2, 2, 4, 2, 0, 0, 3}, (const double[]){0, 6}, 2);
  check_det(2, SHAPE(3, 3), (const float[]){0, 0, 4, 0, 3, 0, 2, 0, 0}, (const double[]){-24}, 1);
  /* Pivoting picks 7 then 5: [[1, 2, 3], [4, 5, 6], [7, 8, 10]] has det -3. */
  check_det(2, SHAPE(3, 3), (const float[]){1, 2, 3, 4, 5, 6, 7, 8, 10}, (const double[]){-3}, 1);
  check_det(3, SHAPE(2, 1, 1), (const float[]){5, -0.5f}, (const double[]){5, -0.5}, 2);
  check_det(3, SHAPE(3, 0, 0), (const float[]){0}, (const double[]){1, 1, 1}, 3);
  const double wide[4] = {0.5, 0.25, 0.125, 1};
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT64, 2, SHAPE(2, 2), wide);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_det, NULL, x, &out));
  assert_true(((const double *)kiln_tensor_data(out))[0] == 0.5 - 0.03125);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  const int32_t ints[1] = {3};
  x = tensor_of(KILN_DTYPE_INT32, 2, SHAPE(1, 1), ints);
  KILN_ASSERT_STATUS(run1(&kiln_op_det, NULL, x, &out), UNIMPLEMENTED,
                     "det: the reference kernel does not handle int32");
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
