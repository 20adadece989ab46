/*
 * Tests of dft (transform_dft.c): attribute defaults and validation, every
 * type-relation error, the output shapes (onesided, dft_length longer and
 * shorter than the signal, a negative axis), and the reference kernel on
 * transforms worked by hand: [1, 2, 3, 4] -> [10, -2 + 2i, -2, -2 - 2i],
 * its onesided half, its inverse back, a cut to 2 samples, the axis
 * choosing which dim of a 2x2 signal is transformed, float64.
 */
#include <math.h>

#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

static void test_attrs_and_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dft;
  assert_defaults(op, "axis=1, inverse=False, onesided=False, dft_length=0");
  assert_attr_invalid(op, "dft_length", "-1", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "dft: dft_length -1 is not in [0, 2147483647]");
  const kiln_type_t *out = NULL;
  const kiln_type_t *real = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 7, 1));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "1"), real, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 7, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "-2", "onesided", "True"), real, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 4, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "1", "dft_length", "12"), real, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 12, 7, 2));
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "axis", "1", "dft_length", "3", "onesided", "True"), real, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 2, 7, 2));
  const void *axis1 = ATTRS(op, "axis", "1");
  KILN_ASSERT_STATUS(infer1(op, axis1, ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 1)), &out),
                     INVALID_ARGUMENT,
                     "dft: data (5, 1) must be (batch, signal dims..., 1 or 2): a real or complex "
                     "signal");
  KILN_ASSERT_STATUS(infer1(op, axis1, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(1, 5, 3)), &out),
                     INVALID_ARGUMENT, "data (1, 5, 3) must be (batch, signal dims..., 1 or 2)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "0"), real, &out), INVALID_ARGUMENT,
                     "dft: axis 0 of data (2, 5, 7, 1) is the batch or the real/imaginary dim");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "-1"), real, &out), INVALID_ARGUMENT,
                     "dft: axis -1 of data (2, 5, 7, 1) is the batch");
  KILN_ASSERT_STATUS(infer1(op, axis1, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(1, 0, 1)), &out),
                     INVALID_ARGUMENT, "dft: the signal axis 1 of data (1, 0, 1) must be in [1, ");
}

static void check_dft(const void *attrs, int ndim, const int64_t *shape, const float *data,
                      const double *expected, int64_t count) {
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT32, ndim, shape, data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_dft, attrs, x, &out));
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

static void test_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dft;
  const float signal[4] = {1, 2, 3, 4};
  check_dft(ATTRS(op, "axis", "1"), 3, SHAPE(1, 4, 1), signal,
            (const double[]){10, 0, -2, 2, -2, 0, -2, -2}, 8);
  check_dft(ATTRS(op, "axis", "1", "onesided", "True"), 3, SHAPE(1, 4, 1), signal,
            (const double[]){10, 0, -2, 2, -2, 0}, 6);
  check_dft(ATTRS(op, "axis", "1", "dft_length", "2"), 3, SHAPE(1, 4, 1), signal,
            (const double[]){3, 0, -1, 0}, 4);
  const float spectrum[8] = {10, 0, -2, 2, -2, 0, -2, -2};
  check_dft(ATTRS(op, "axis", "1", "inverse", "True"), 3, SHAPE(1, 4, 2), spectrum,
            (const double[]){1, 0, 2, 0, 3, 0, 4, 0}, 8);
  /* [[1, 2], [3, 4]]: axis 2 transforms the rows, axis 1 the columns. */
  check_dft(ATTRS(op, "axis", "2"), 4, SHAPE(1, 2, 2, 1), signal,
            (const double[]){3, 0, -1, 0, 7, 0, -1, 0}, 8);
  check_dft(ATTRS(op, "axis", "1"), 4, SHAPE(1, 2, 2, 1), signal,
            (const double[]){4, 0, 6, 0, -2, 0, -2, 0}, 8);
  /* dft_length 8 pads with zeros: frequency 4 is 1 - 2 + 3 - 4. */
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(1, 4, 1), signal);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", "1", "dft_length", "8"), x, &out));
  const float *values = kiln_tensor_data(out);
  assert_near(values[0], 10);
  assert_near(values[8], -2);
  assert_true(fabs(values[9]) < 1e-6);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  const double wide[2] = {0.5, 0.25};
  x = tensor_of(KILN_DTYPE_FLOAT64, 3, SHAPE(1, 2, 1), wide);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", "1"), x, &out));
  const double *w = kiln_tensor_data(out);
  assert_true(w[0] == 0.75 && w[2] == 0.25 && w[1] == 0.0);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  const int32_t ints[2] = {1, 2};
  x = tensor_of(KILN_DTYPE_INT32, 3, SHAPE(1, 2, 1), ints);
  KILN_ASSERT_STATUS(run1(op, ATTRS(op, "axis", "1"), x, &out), UNIMPLEMENTED,
                     "dft: the reference kernel does not handle int32");
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_attrs_and_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
