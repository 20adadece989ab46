/*
 * Tests of image.grid_sample (transform_grid_sample.c): attribute defaults
 * and validation, every type-relation error, the layout rule, and the
 * reference kernel on a 2x2 plane [[1, 2], [3, 4]] at grid points whose
 * results are worked by hand from the ONNX reference's formulas: bilinear
 * inside and at the borders for each padding mode, points out of bounds
 * that "border" clamps and "reflection" reflects, "nearest" rounding half
 * to even, align_corners, and bicubic with Keys' weights (-0.09375,
 * 0.59375, 0.59375, -0.09375 at t = 0.5). The compute rule is checked
 * against this kernel in test_compute_spatial.c.
 */
#include <math.h>

#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

static const float plane_2x2[4] = {1, 2, 3, 4};

/* The 2x2 plane sampled at `count` (x, y) points with the given attributes. */
static void check_sample(const char *method, const char *padding, const char *align, int count,
                         const float *points, const double *expected) {
  const kiln_op_t *op = &kiln_op_grid_sample;
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 2, 2), plane_2x2);
  kiln_tensor_t *grid = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, count, 2), points);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(op,
                     ATTRS(op, "method", method, "padding_mode", padding, "align_corners", align),
                     &out, data, grid));
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(grid);
  kiln_tensor_release(data);
}

static void test_attrs_and_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_grid_sample;
  assert_string_equal(op->name, "image.grid_sample");
  assert_int_equal(op->pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_defaults(op, "method=\"bilinear\", padding_mode=\"zeros\", align_corners=False");
  assert_attr_invalid(op, "method", "\"cubic\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "image.grid_sample: method \"cubic\" is not one of bilinear, nearest, "
                      "bicubic");
  assert_attr_invalid(op, "padding_mode", "\"wrap\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "padding_mode \"wrap\" is not one of zeros, border, reflection");
  const void *attrs = ATTRS(op, "method", "\"bilinear\"");
  const kiln_type_t *out = NULL;
  const kiln_type_t *grid = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 7, 2));
  KILN_ASSERT_OK(INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 4, 6)), grid));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 5, 7));
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 4, 6)), grid),
                     INVALID_ARGUMENT,
                     "image.grid_sample: data (3, 4, 6) must be (N, C, H, W) and grid "
                     "(2, 5, 7, 2) (N, H_out, W_out, 2)");
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 4, 6)), grid),
                     INVALID_ARGUMENT, "data (1, 3, 4, 6) must be (N, C, H, W)");
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 4, 6)),
                           ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 7, 3))),
                     INVALID_ARGUMENT, "grid (2, 5, 7, 3) (N, H_out, W_out, 2)");
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 0, 6)), grid),
                     INVALID_ARGUMENT,
                     "image.grid_sample: data (2, 3, 0, 6) has empty planes to sample from");
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 4, 6)),
                           ttype(KILN_DTYPE_INT32, 4, SHAPE(2, 5, 7, 2))),
                     INVALID_ARGUMENT, "image.grid_sample: grid is int32");
  const char *required = NULL, *produced = NULL;
  KILN_ASSERT_OK(layout1(op, attrs, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 4, 6)), "NCHW16c",
                         &required, &produced));
  assert_string_equal(required, "NCHW");
  assert_string_equal(produced, "NCHW");
}

static void test_bilinear(void **state) {
  (void)state;
  /* (0, 0) is the plane's centre (0.5, 0.5); (-1, -1) its outer corner
   * (-0.5, -0.5), a quarter of pixel (0, 0) with zeros; (1, -1) the top
   * right corner (1.5, -0.5), a quarter of 2. */
  const float points[] = {0, 0, -1, -1, 1, -1, 3, 0};
  check_sample("\"bilinear\"", "\"zeros\"", "False", 4, points,
               (const double[]){2.5, 0.25, 0.5, 0.0});
  /* border: the corner reads the clamped pixels; (3, 0) is x = 3.5, out of
   * bounds, clamped to 1: the right column's mean. */
  check_sample("\"bilinear\"", "\"border\"", "False", 4, points,
               (const double[]){2.5, 1.0, 2.0, 3.0});
  /* reflection: pixel -1 reflects to 0; x = 3.5 reflects (d = 2 = one
   * range, odd) to -0.5: the left column's mean. */
  check_sample("\"bilinear\"", "\"reflection\"", "False", 4, points,
               (const double[]){2.5, 1.0, 2.0, 2.0});
  /* align_corners: -1 and 1 are the corner pixels' centres. */
  const float corners[] = {1, 1, -1, -1, 0, 0, 0, 1};
  check_sample("\"bilinear\"", "\"zeros\"", "True", 4, corners,
               (const double[]){4.0, 1.0, 2.5, 3.5});
}

static void test_nearest(void **state) {
  (void)state;
  /* (0, 0) is (0.5, 0.5): rounded half to even, pixel (0, 0); (0.6, -0.2)
   * is (1.1, 0.3): pixel (0, 1); (0.8, 0.8) is (1.3, 1.3); (2, 0) is x = 2.5
   * -> 2, out of bounds: zeros reads 0, border clamps to column 1. */
  const float points[] = {0, 0, 0.6f, -0.2f, 0.8f, 0.8f, 2, 0};
  check_sample("\"nearest\"", "\"zeros\"", "False", 4, points,
               (const double[]){1.0, 2.0, 4.0, 0.0});
  check_sample("\"nearest\"", "\"border\"", "False", 4, points,
               (const double[]){1.0, 2.0, 4.0, 2.0});
}

static void test_bicubic(void **state) {
  (void)state;
  /* The centre (0.5, 0.5): weights w = (-0.09375, 0.59375, 0.59375,
   * -0.09375) on taps -1..2 of each axis. zeros: only the inner four,
   * 0.59375^2 (1 + 2 + 3 + 4); border: taps clamp, rows mix to 1.5 and 3.5,
   * then 2.5. */
  const float centre[] = {0, 0};
  check_sample("\"bicubic\"", "\"zeros\"", "False", 1, centre,
               (const double[]){0.59375 * 0.59375 * 10});
  check_sample("\"bicubic\"", "\"border\"", "False", 1, centre, (const double[]){2.5});
  /* At a pixel centre (align_corners, (1, 1) is pixel (1, 1)) the weights
   * are (0, 1, 0, 0). */
  check_sample("\"bicubic\"", "\"zeros\"", "True", 1, (const float[]){1, 1}, (const double[]){4});
}

static void test_batches_channels_and_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_grid_sample;
  /* Two batches of two channels: batch 1's grid reads its own planes. */
  const float data[16] = {1, 2, 3, 4, 10, 20, 30, 40, 5, 6, 7, 8, 50, 60, 70, 80};
  const float points[4] = {1, 1, -1, 1};
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 2, 2, 2), data);
  kiln_tensor_t *grid = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 1, 2), points);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(op, ATTRS(op, "align_corners", "True"), &out, x, grid));
  assert_f32(out, (const double[]){4, 40, 7, 70}, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(grid);
  kiln_tensor_release(x);
  /* float64 data: the kernel says what it handles. */
  const double wide[4] = {1, 2, 3, 4};
  x = tensor_of(KILN_DTYPE_FLOAT64, 4, SHAPE(1, 1, 2, 2), wide);
  grid = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 1, 2), points);
  KILN_ASSERT_STATUS(RUN(op, ATTRS(op, "align_corners", "False"), &out, x, grid), UNIMPLEMENTED,
                     "image.grid_sample: the reference kernel does not handle float64");
  kiln_tensor_release(grid);
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_attrs_and_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bilinear, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nearest, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bicubic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batches_channels_and_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
