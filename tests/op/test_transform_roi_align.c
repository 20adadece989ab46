/*
 * Tests of vision.roi_align (transform_roi_align.c): attribute defaults and
 * validation, every type-relation error, and the reference kernel on 2x2
 * planes [[1, 2], [3, 4]] (and ten times that as image 1) with boxes whose
 * bins are worked by hand from the ONNX reference: one sample at a bin's
 * centre, a 2x2 grid over the whole plane when aligned (avg and max), the
 * adaptive grid (sample_ratio 0), a point on the last row and column
 * (clamped, fraction 0), a box outside (0), spatial_scale, the batch index
 * choosing the image, and an index out of range.
 */
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

static const float planes[8] = {1, 2, 3, 4, 10, 20, 30, 40};

static const void *roi_attrs(const char *pooled, const char *ratio, const char *mode,
                             const char *aligned, const char *scale) {
  const kiln_op_t *op = &kiln_op_roi_align;
  return ATTRS(op, "pooled_size", pooled, "sample_ratio", ratio, "mode", mode, "aligned", aligned,
               "spatial_scale", scale);
}

static void check_roi(const void *attrs, const float *box, int64_t image, const double *expected,
                      int64_t count) {
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 2, 2), planes);
  kiln_tensor_t *rois = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(1, 4), box);
  kiln_tensor_t *batch = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(1), &image);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_roi_align, attrs, &out, data, rois, batch));
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(batch);
  kiln_tensor_release(rois);
  kiln_tensor_release(data);
}

static void test_attrs_and_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_roi_align;
  assert_defaults(op, "pooled_size=[1, 1], spatial_scale=1, sample_ratio=0, mode=\"avg\", "
                      "aligned=False");
  assert_attr_invalid(op, "pooled_size", "[2]", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "vision.roi_align: pooled_size [2] must be [H, W] with H, W > 0");
  assert_attr_invalid(op, "sample_ratio", "-1", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "sample_ratio -1 is not in [0, 1024]");
  assert_attr_invalid(op, "mode", "\"min\"", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "vision.roi_align: mode \"min\" is not one of avg, max");
  const void *attrs = roi_attrs("[3, 5]", "2", "\"avg\"", "True", "0.5");
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 7, 9, 11));
  const kiln_type_t *rois = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 4));
  const kiln_type_t *batch = ttype(KILN_DTYPE_INT64, 1, SHAPE(4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, attrs, &out, data, rois, batch));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(4, 7, 3, 5));
  KILN_ASSERT_STATUS(
      INFER(op, attrs, &out, data, ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5)), batch),
      INVALID_ARGUMENT,
      "vision.roi_align: data (2, 7, 9, 11), rois (4, 5) and batch_indices (4,) must "
      "be (N, C, H, W), (R, 4) and (R)");
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, data, rois, ttype(KILN_DTYPE_INT64, 1, SHAPE(3))),
                     INVALID_ARGUMENT, "batch_indices (3,) must be");
  KILN_ASSERT_STATUS(
      INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(7, 9, 11)), rois, batch),
      INVALID_ARGUMENT, "data (7, 9, 11), rois (4, 4)");
  KILN_ASSERT_STATUS(
      INFER(op, attrs, &out, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 7, 0, 11)), rois, batch),
      INVALID_ARGUMENT, "vision.roi_align: data (2, 7, 0, 11) has no planes to pool from");
  KILN_ASSERT_STATUS(INFER(op, attrs, &out, data, rois, ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(4))),
                     INVALID_ARGUMENT,
                     "vision.roi_align: rois is float32 and batch_indices float32; expected "
                     "data's float32 and int32 or int64");
}

static void test_kernel(void **state) {
  (void)state;
  /* Unaligned box (0, 0, 1, 1), one sample at (0.5, 0.5). */
  check_roi(roi_attrs("[1, 1]", "1", "\"avg\"", "False", "1.0"), (const float[]){0, 0, 1, 1}, 0,
            (const double[]){2.5}, 1);
  /* Aligned (0, 0, 2, 2): the box starts at -0.5; samples at 0 and 1. */
  const float whole[4] = {0, 0, 2, 2};
  check_roi(roi_attrs("[1, 1]", "2", "\"avg\"", "True", "1.0"), whole, 0, (const double[]){2.5}, 1);
  check_roi(roi_attrs("[1, 1]", "2", "\"max\"", "True", "1.0"), whole, 0, (const double[]){4}, 1);
  /* Adaptive: ceil(2 / 1) = 2 samples a side, at 0.5 and 1.5 (clamped to
   * the last row and column): 2.5, 3, 3.5, 4. */
  check_roi(roi_attrs("[1, 1]", "0", "\"avg\"", "False", "1.0"), whole, 0, (const double[]){3.25},
            1);
  /* 2x2 bins, one sample each, at 0.5 and 1.5. */
  check_roi(roi_attrs("[2, 2]", "1", "\"avg\"", "False", "1.0"), whole, 0,
            (const double[]){2.5, 3, 3.5, 4}, 4);
  /* Outside by more than a pixel: 0; spatial_scale 0.25 brings it back. */
  const float far[4] = {10, 10, 12, 12};
  check_roi(roi_attrs("[1, 1]", "1", "\"avg\"", "False", "1.0"), far, 0, (const double[]){0}, 1);
  check_roi(roi_attrs("[1, 1]", "1", "\"avg\"", "False", "0.1"), far, 0, (const double[]){4}, 1);
  /* Image 1 is ten times image 0. */
  check_roi(roi_attrs("[1, 1]", "1", "\"avg\"", "False", "1.0"), (const float[]){0, 0, 1, 1}, 1,
            (const double[]){25}, 1);
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 2, 2), planes);
  kiln_tensor_t *rois = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(1, 4), whole);
  const int32_t bad = 2;
  kiln_tensor_t *batch = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(1), &bad);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(RUN(&kiln_op_roi_align, roi_attrs("[1, 1]", "1", "\"avg\"", "False", "1.0"),
                         &out, data, rois, batch),
                     OUT_OF_RANGE, "vision.roi_align: batch index 2 of box 0 is not in [0, 2)");
  kiln_tensor_release(batch);
  kiln_tensor_release(rois);
  kiln_tensor_release(data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_attrs_and_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
