/*
 * Tests of nn.pad, image.resize2d, nn.depth_to_space and nn.space_to_depth:
 * attribute defaults and validation,
 * every type-relation error, layout rules, and the reference kernels on
 * small inputs. Pad's expected values are written by hand (constant, edge,
 * numpy-style reflect, negative pads that crop) or computed by loops here;
 * resize's come from the ONNX Resize backend tests (worked by hand from the
 * specification's formulas) and from an independent bilinear loop on odd
 * shapes; depth_to_space's and space_to_depth's from the ONNX examples
 * (DCR and CRD) and a round trip.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

/* ---- fixture ---- */

/* ---- nn.pad ---- */

static void test_pad_attrs(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_pad;
  assert_string_equal(op->name, "nn.pad");
  assert_int_equal(op->id, KILN_OP_PAD);
  assert_int_equal(op->pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_defaults(op, "pad_width=[], pad_mode=\"constant\", pad_value=0");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "pad_mode", "\"wrap\"")),
                     INVALID_ARGUMENT,
                     "nn.pad: pad_mode \"wrap\" is not one of constant, edge, reflect");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "pad_width", "[1, 2, 3]")),
                     INVALID_ARGUMENT,
                     "nn.pad: pad_width has 3 values; it needs a before and an after per dim");
  KILN_ASSERT_OK(kiln_op_attrs_validate(
      op, ATTRS(op, "pad_mode", "\"reflect\"", "pad_value", "-1.5", "pad_width", "[1, 0]")));
}

static void test_pad_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_pad;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "pad_width", "[1, 1, 2, 0]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "pad_width", "[0, -1, -1, 0]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(1, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "pad_width", "[-2, 0, 0, 0]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_INT64, 0, NULL), &out));
  assert_type(out, KILN_DTYPE_INT64, 0, NULL);
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "pad_width", "[1, 1, 2, 1]", "pad_mode", "\"reflect\""), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(4, 6));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "pad_width", "[0, 0, 0, 0]", "pad_mode", "\"edge\""),
                        ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3));
}

static void test_pad_type_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_pad;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "pad_width", "[1, 1]"), data, &out), INVALID_ARGUMENT,
                     "nn.pad: pad_width has 2 values but data (2, 3) needs 4");
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), data, &out), INVALID_ARGUMENT,
                     "nn.pad: pad_width has 0 values but data (2, 3) needs 4");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "pad_width", "[-3, 0, 0, 0]"), data, &out),
                     INVALID_ARGUMENT,
                     "nn.pad: pad_width (-3, 0) crops dim 0 of data (2, 3) below 0");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "pad_width", "[0, 0, 9223372036854775807, 1]"), data, &out),
      INVALID_ARGUMENT,
      "nn.pad: pad_width (9223372036854775807, 1) overflows dim 1 of data (2, 3)");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "pad_width", "[1, 1, 0, 3]", "pad_mode", "\"reflect\""), data, &out),
      INVALID_ARGUMENT,
      "nn.pad: reflect pad 3 of dim 1 must be smaller than its size 3 (data (2, 3))");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "pad_width", "[2, 0, 0, 0]", "pad_mode", "\"reflect\""), data, &out),
      INVALID_ARGUMENT, "nn.pad: reflect pad 2 of dim 0 must be smaller than its size 2");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "pad_width", "[1, 0, 0, 0]", "pad_mode", "\"edge\""),
                            ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3)), &out),
                     INVALID_ARGUMENT, "nn.pad: cannot edge-pad dim 0 of size 0 in data (0, 3)");
}

static kiln_status_t pad_f32(const char *pad_width, const char *mode, const char *value, int ndim,
                             const int64_t *shape, const float *data, kiln_tensor_t **out) {
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, ndim, shape, data);
  kiln_status_t status = run1(
      &kiln_op_pad,
      ATTRS(&kiln_op_pad, "pad_width", pad_width, "pad_mode", mode, "pad_value", value), in, out);
  kiln_tensor_release(in);
  return status;
}

static void test_pad_kernel(void **state) {
  (void)state;
  const float grid[6] = {1, 2, 3, 4, 5, 6};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(pad_f32("[1, 0, 1, 2]", "\"constant\"", "9", 2, SHAPE(2, 3), grid, &out));
  assert_f32(out, (double[]){9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9}, 18);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(pad_f32("[1, 0, 1, 2]", "\"edge\"", "9", 2, SHAPE(2, 3), grid, &out));
  assert_f32(out, (double[]){1, 1, 2, 3, 3, 3, 1, 1, 2, 3, 3, 3, 4, 4, 5, 6, 6, 6}, 18);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(pad_f32("[1, 1, 2, 1]", "\"reflect\"", "9", 2, SHAPE(2, 3), grid, &out));
  assert_f32(
      out, (double[]){6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}, 24);
  kiln_tensor_release(out);
  const float line[4] = {1, 2, 3, 4};
  KILN_ASSERT_OK(pad_f32("[2, 3]", "\"reflect\"", "0", 1, SHAPE(4), line, &out));
  assert_f32(out, (double[]){3, 2, 1, 2, 3, 4, 3, 2, 1}, 9);
  kiln_tensor_release(out);
  /* Negative pads crop; the mirror stays at the original edge. */
  KILN_ASSERT_OK(pad_f32("[-1, 2]", "\"reflect\"", "0", 1, SHAPE(4), line, &out));
  assert_f32(out, (double[]){2, 3, 4, 3, 2}, 5);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(pad_f32("[-2, 1]", "\"constant\"", "-0.5", 1, SHAPE(4), line, &out));
  assert_f32(out, (double[]){3, 4, -0.5}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(pad_f32("[1, -3]", "\"edge\"", "0", 1, SHAPE(4), line, &out));
  assert_f32(out, (double[]){1, 1}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(pad_f32("[]", "\"constant\"", "0", 0, NULL, (float[]){7.5f}, &out));
  assert_f32(out, (double[]){7.5}, 1);
  kiln_tensor_release(out);
}

static void test_pad_kernel_odd_and_int(void **state) {
  (void)state;
  /* (3, 5, 7) padded by (1, 0), (0, 2), (3, 1) with -1, against loops. */
  float data[105];
  for (int i = 0; i < 105; ++i) {
    data[i] = (float)i * 0.5f;
  }
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      pad_f32("[1, 0, 0, 2, 3, 1]", "\"constant\"", "-1", 3, SHAPE(3, 5, 7), data, &out));
  assert_int_equal(kiln_tensor_shape(out)[0], 4);
  assert_int_equal(kiln_tensor_shape(out)[1], 7);
  assert_int_equal(kiln_tensor_shape(out)[2], 11);
  double expected[4 * 7 * 11];
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 7; ++j) {
      for (int k = 0; k < 11; ++k) {
        int si = i - 1, sj = j, sk = k - 3;
        bool inside = si >= 0 && si < 3 && sj < 5 && sk >= 0 && sk < 7;
        expected[(i * 7 + j) * 11 + k] = inside ? ((si * 5 + sj) * 7 + sk) * 0.5 : -1.0;
      }
    }
  }
  assert_f32(out, expected, 4 * 7 * 11);
  kiln_tensor_release(out);
  /* int64: the pad value truncates toward zero, and saturates. */
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(2), (int64_t[]){INT64_MAX, -4});
  KILN_ASSERT_OK(run1(&kiln_op_pad, ATTRS(&kiln_op_pad, "pad_width", "[1, 1]", "pad_value", "-2.7"),
                      in, &out));
  assert_i64(out, (int64_t[]){-2, INT64_MAX, -4, -2}, 4);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_pad, ATTRS(&kiln_op_pad, "pad_width", "[0, 1]", "pad_value", "1e30"),
                      in, &out));
  assert_i64(out, (int64_t[]){INT64_MAX, -4, INT64_MAX}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(
      &kiln_op_pad, ATTRS(&kiln_op_pad, "pad_width", "[2, 0]", "pad_mode", "\"edge\""), in, &out));
  assert_i64(out, (int64_t[]){INT64_MAX, INT64_MAX, INT64_MAX, -4}, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* float64 pads with the pad_value exactly; uint16 saturates it. */
  in = tensor_of(KILN_DTYPE_FLOAT64, 1, SHAPE(1), (double[]){1.0});
  KILN_ASSERT_OK(
      run1(&kiln_op_pad, ATTRS(&kiln_op_pad, "pad_width", "[1, 1]", "pad_value", "0.1"), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((double[]){0.1, 1.0, 0.1}), 3 * sizeof(double));
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_UINT16, 1, SHAPE(1), (uint16_t[]){7});
  KILN_ASSERT_OK(
      run1(&kiln_op_pad, ATTRS(&kiln_op_pad, "pad_width", "[0, 1]", "pad_value", "1e9"), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint16_t[]){7, 65535}), 2 * sizeof(uint16_t));
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

/* ---- image.resize2d ---- */

static void test_resize_attrs(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_resize2d;
  assert_string_equal(op->name, "image.resize2d");
  assert_int_equal(op->id, KILN_OP_RESIZE2D);
  assert_int_equal(op->pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_defaults(op, "size=[], layout=\"NCHW\", method=\"linear\", "
                      "coordinate_transformation_mode=\"half_pixel\", "
                      "rounding_method=\"round_prefer_floor\"");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "size", "[3]")), INVALID_ARGUMENT,
                     "image.resize2d: size [3] must be [H, W] with H, W > 0");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "size", "[0, 2]")), INVALID_ARGUMENT,
                     "image.resize2d: size [0, 2] must be [H, W] with H, W > 0");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "layout", "\"NHWC\"")), INVALID_ARGUMENT,
                     "image.resize2d: layout \"NHWC\" is not one of NCHW");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "method", "\"cubic\"")), INVALID_ARGUMENT,
                     "image.resize2d: method \"cubic\" is not one of nearest_neighbor, linear");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(op,
                             ATTRS(op, "coordinate_transformation_mode", "\"tf_crop_and_resize\"")),
      INVALID_ARGUMENT,
      "image.resize2d: coordinate_transformation_mode \"tf_crop_and_resize\" is not one of");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "rounding_method", "\"round\"")),
                     INVALID_ARGUMENT,
                     "image.resize2d: rounding_method \"round\" is not one of round_prefer_floor, "
                     "round_prefer_ceil, floor, ceil");
}

static void test_resize_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_resize2d;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "size", "[8, 10]"),
                        ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 4, 5)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 8, 10));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "size", "[1, 1]"),
                        ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 0, 7, 7)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 0, 1, 1));
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "size", "[8, 10]"), ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 4, 5)), &out),
      INVALID_ARGUMENT, "image.resize2d: data (3, 4, 5) must have rank 4 (NCHW)");
  KILN_ASSERT_STATUS(
      infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 4, 5)), &out),
      INVALID_ARGUMENT, "image.resize2d: size must give the output [H, W] for data (1, 3, 4, 5)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "size", "[2, 2]"),
                            ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 0, 4)), &out),
                     INVALID_ARGUMENT,
                     "image.resize2d: data (1, 1, 0, 4) has empty planes to sample from");
}

/* Resizes a (1, 1, h, w) float plane with the given attributes. */
static void check_resize(int64_t h, int64_t w, const float *data, const char *size,
                         const char *method, const char *mode, const char *rounding,
                         const double *expected, int64_t count) {
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, h, w), data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_resize2d,
                      ATTRS(&kiln_op_resize2d, "size", size, "method", method,
                            "coordinate_transformation_mode", mode, "rounding_method", rounding),
                      in, &out));
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static const float kiln_test_2x2[4] = {1, 2, 3, 4};
static const float kiln_test_4x4[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void test_resize_nearest(void **state) {
  (void)state;
  /* ONNX resize_upsample_sizes_nearest: 2x2 -> 7x8, half_pixel, round_prefer_floor. */
  double expected[56];
  for (int y = 0; y < 7; ++y) {
    for (int x = 0; x < 8; ++x) {
      expected[y * 8 + x] = (y < 4 ? 1 : 3) + (x < 4 ? 0 : 1);
    }
  }
  check_resize(2, 2, kiln_test_2x2, "[7, 8]", "\"nearest_neighbor\"", "\"half_pixel\"",
               "\"round_prefer_floor\"", expected, 56);
  /* 4x4 -> 8x8 per row: the column pattern says which source column each output takes. */
  const struct {
    const char *mode;
    const char *rounding;
    int columns[8];
  } cases[] = {
      /* x/2 - 0.25, ceil */
      {"\"half_pixel\"", "\"ceil\"", {0, 1, 1, 2, 2, 3, 3, 3}},
      /* x * 3/7, floor */
      {"\"align_corners\"", "\"floor\"", {0, 0, 0, 1, 1, 2, 2, 3}},
      /* x/2, ties go up */
      {"\"asymmetric\"", "\"round_prefer_ceil\"", {0, 1, 1, 2, 2, 3, 3, 3}},
      /* x/2, ties go down */
      {"\"asymmetric\"", "\"round_prefer_floor\"", {0, 0, 1, 1, 2, 2, 3, 3}},
      /* x/2 - 0.25: -0.25 -> 0, 0.25 -> 0, 0.75 -> 1, ... */
      {"\"pytorch_half_pixel\"", "\"round_prefer_floor\"", {0, 0, 1, 1, 2, 2, 3, 3}},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    double grid[64];
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) {
        grid[y * 8 + x] = cases[c].columns[y] * 4 + cases[c].columns[x] + 1;
      }
    }
    check_resize(4, 4, kiln_test_4x4, "[8, 8]", "\"nearest_neighbor\"", cases[c].mode,
                 cases[c].rounding, grid, 64);
  }
  /* Downsampling 4x4 -> 1x1 with pytorch_half_pixel samples (0, 0). */
  check_resize(4, 4, kiln_test_4x4, "[1, 1]", "\"nearest_neighbor\"", "\"pytorch_half_pixel\"",
               "\"round_prefer_ceil\"", (double[]){1}, 1);
}

static void test_resize_linear(void **state) {
  (void)state;
  /* ONNX resize_upsample_scales_linear (2x2 -> 4x4, half_pixel). */
  check_resize(
      2, 2, kiln_test_2x2, "[4, 4]", "\"linear\"", "\"half_pixel\"", "\"round_prefer_floor\"",
      (double[]){1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4},
      16);
  /* ONNX resize_upsample_scales_linear_align_corners. */
  const double third = 1.0 / 3.0;
  check_resize(2, 2, kiln_test_2x2, "[4, 4]", "\"linear\"", "\"align_corners\"", "\"floor\"",
               (double[]){1, 1 + third, 1 + 2 * third, 2, 1 + 2 * third, 2, 2 + third,
                          2 + 2 * third, 2 + third, 2 + 2 * third, 3, 3 + third, 3, 3 + third,
                          3 + 2 * third, 4},
               16);
  /* ONNX resize_downsample_sizes_linear_pytorch_half_pixel (4x4 -> 3x1). */
  check_resize(4, 4, kiln_test_4x4, "[3, 1]", "\"linear\"", "\"pytorch_half_pixel\"",
               "\"round_prefer_floor\"", (double[]){1 + 2.0 / 3.0, 7, 12 + 1.0 / 3.0}, 3);
  /* 1x4 -> 1x2 with half_pixel: x = 0.5 and 2.5. */
  check_resize(1, 4, kiln_test_4x4, "[1, 2]", "\"linear\"", "\"half_pixel\"",
               "\"round_prefer_floor\"", (double[]){1.5, 3.5}, 2);
  /* asymmetric 2x2 -> 3x3: x = 0, 2/3, 4/3 (clamped to 1). */
  check_resize(
      2, 2, kiln_test_2x2, "[3, 3]", "\"linear\"", "\"asymmetric\"", "\"round_prefer_floor\"",
      (double[]){1, 1 + 2.0 / 3.0, 2, 1 + 4.0 / 3.0, 3, 3 + 1.0 / 3.0, 3, 3 + 2.0 / 3.0, 4}, 9);
}

/* Bilinear half_pixel sampling of plane p at (y, x), written independently of the kernel. */
static double bilinear(const float *plane, int64_t h, int64_t w, int64_t out_h, int64_t out_w,
                       int64_t y, int64_t x) {
  double sy = fmin(fmax((y + 0.5) * h / out_h - 0.5, 0.0), h - 1.0);
  double sx = fmin(fmax((x + 0.5) * w / out_w - 0.5, 0.0), w - 1.0);
  int64_t y0 = (int64_t)sy, x0 = (int64_t)sx;
  int64_t y1 = y0 + 1 < h ? y0 + 1 : y0, x1 = x0 + 1 < w ? x0 + 1 : x0;
  double fy = sy - y0, fx = sx - x0;
  return plane[y0 * w + x0] * (1 - fy) * (1 - fx) + plane[y0 * w + x1] * (1 - fy) * fx +
         plane[y1 * w + x0] * fy * (1 - fx) + plane[y1 * w + x1] * fy * fx;
}

static void test_resize_odd_planes(void **state) {
  (void)state;
  /* (2, 3, 3, 5) -> (2, 3, 5, 7) linear, plane by plane. */
  float data[90];
  for (int i = 0; i < 90; ++i) {
    data[i] = (float)((i * 37) % 23) - 11.0f;
  }
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 3, 5), data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_resize2d, ATTRS(&kiln_op_resize2d, "size", "[5, 7]"), in, &out));
  double expected[210];
  for (int p = 0; p < 6; ++p) {
    for (int y = 0; y < 5; ++y) {
      for (int x = 0; x < 7; ++x) {
        expected[(p * 5 + y) * 7 + x] = bilinear(data + p * 15, 3, 5, 5, 7, y, x);
      }
    }
  }
  assert_f32(out, expected, 210);
  kiln_tensor_release(out);
  /* Same size is the identity, for either method. */
  double same[90];
  for (int i = 0; i < 90; ++i) {
    same[i] = data[i];
  }
  KILN_ASSERT_OK(run1(&kiln_op_resize2d, ATTRS(&kiln_op_resize2d, "size", "[3, 5]"), in, &out));
  assert_f32(out, same, 90);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_resize2d,
                      ATTRS(&kiln_op_resize2d, "size", "[3, 5]", "method", "\"nearest_neighbor\""),
                      in, &out));
  assert_f32(out, same, 90);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_INT64, 4, SHAPE(1, 1, 1, 1), (int64_t[]){3});
  KILN_ASSERT_STATUS(run1(&kiln_op_resize2d, ATTRS(&kiln_op_resize2d, "size", "[2, 2]"), in, &out),
                     UNIMPLEMENTED, "image.resize2d: the reference kernel does not handle int64");
  kiln_tensor_release(in);
}

static void test_spatial_layouts(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 32, 7, 7));
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(&kiln_op_pad, ATTRS(&kiln_op_pad, "pad_width", "[0, 0, 0, 0, 1, 1, 1, 1]"),
                         data, "NCHW16c", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
  KILN_ASSERT_OK(layout1(&kiln_op_resize2d, ATTRS(&kiln_op_resize2d, "size", "[14, 14]"), data,
                         "NCHW16c", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
  KILN_ASSERT_OK(layout1(&kiln_op_resize2d, ATTRS(&kiln_op_resize2d, "size", "[14, 14]"), data, "",
                         &required, &output));
  assert_string_equal(required, "NCHW");
}

/* ---- nn.depth_to_space and nn.space_to_depth ---- */

static void test_depth_space_attrs_and_types(void **state) {
  (void)state;
  const kiln_op_t *d2s = &kiln_op_depth_to_space;
  const kiln_op_t *s2d = &kiln_op_space_to_depth;
  assert_defaults(d2s, "block_size=1, layout=\"NCHW\", mode=\"DCR\"");
  assert_defaults(s2d, "block_size=1, layout=\"NCHW\"");
  assert_int_equal(d2s->pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_int_equal(s2d->pattern, KILN_OP_PATTERN_INJECTIVE);
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(d2s, ATTRS(d2s, "block_size", "0")), INVALID_ARGUMENT,
                     "nn.depth_to_space: block_size is 0, not in [1, 1073741824]");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(d2s, ATTRS(d2s, "mode", "\"XYZ\"")), INVALID_ARGUMENT,
                     "nn.depth_to_space: mode \"XYZ\" is not one of DCR, CRD");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(s2d, ATTRS(s2d, "layout", "\"NHWC\"")),
                     INVALID_ARGUMENT, "nn.space_to_depth: layout \"NHWC\" is not one of NCHW");
  const kiln_type_t *out = NULL;
  const void *two = ATTRS(d2s, "block_size", "2");
  KILN_ASSERT_OK(infer1(d2s, two, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 8, 3, 3)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 2, 6, 6));
  KILN_ASSERT_OK(infer1(s2d, ATTRS(s2d, "block_size", "2"),
                        ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 2, 6, 6)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 8, 3, 3));
  KILN_ASSERT_STATUS(infer1(d2s, two, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(8, 2, 3)), &out),
                     INVALID_ARGUMENT, "nn.depth_to_space: data (8, 2, 3) must have rank 4 (NCHW)");
  KILN_ASSERT_STATUS(infer1(d2s, two, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 6, 2, 3)), &out),
                     INVALID_ARGUMENT,
                     "nn.depth_to_space: the 6 channels of data (1, 6, 2, 3) are not a multiple of "
                     "block_size^2 4");
  KILN_ASSERT_STATUS(infer1(s2d, ATTRS(s2d, "block_size", "2"),
                            ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 5, 6)), &out),
                     INVALID_ARGUMENT,
                     "nn.space_to_depth: height and width of data (1, 1, 5, 6) are not multiples "
                     "of block_size 2");
  /* empty tensors may have dims whose products overflow */
  const int64_t huge = INT64_C(1) << 62;
  KILN_ASSERT_STATUS(
      infer1(d2s, ATTRS(d2s, "block_size", "4"), ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 0, huge, 1)),
             &out),
      INVALID_ARGUMENT,
      "nn.depth_to_space: data (1, 0, 4611686018427387904, 1) times block_size 4 overflows int64");
  KILN_ASSERT_STATUS(infer1(s2d, ATTRS(s2d, "block_size", "2"),
                            ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, huge, 0, 0)), &out),
                     INVALID_ARGUMENT,
                     "nn.space_to_depth: the channels of data (1, 4611686018427387904, 0, 0) "
                     "times 4 overflow int64");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(s2d, attrs_with(s2d, NULL),
                         ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 2, 2)), "NHWC", &required,
                         &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
}

/* ONNX DepthToSpace example input: (1, 8, 2, 3), channel c holds 9c + 0..5. */
static kiln_tensor_t *depth_example(void) {
  float data[48];
  for (int c = 0; c < 8; ++c) {
    for (int i = 0; i < 6; ++i) {
      data[c * 6 + i] = (float)(9 * c + i);
    }
  }
  return tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 8, 2, 3), data);
}

static void test_depth_space_kernels(void **state) {
  (void)state;
  const kiln_op_t *d2s = &kiln_op_depth_to_space;
  const kiln_op_t *s2d = &kiln_op_space_to_depth;
  kiln_tensor_t *in = depth_example();
  kiln_tensor_t *out = NULL;
  /* test_depthtospace_example (DCR) */
  KILN_ASSERT_OK(run1(d2s, ATTRS(d2s, "block_size", "2"), in, &out));
  assert_f32(out, (double[]){0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22,
                             5,  23, 39, 57, 40, 58, 41, 59, 9,  27, 10, 28, 11, 29, 45, 63,
                             46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68},
             48);
  /* DCR then space_to_depth is the identity */
  kiln_tensor_t *back = NULL;
  KILN_ASSERT_OK(run1(s2d, ATTRS(s2d, "block_size", "2"), out, &back));
  assert_memory_equal(kiln_tensor_data(back), kiln_tensor_data(in), 48 * sizeof(float));
  kiln_tensor_release(back);
  kiln_tensor_release(out);
  /* test_depthtospace_crd_mode_example */
  KILN_ASSERT_OK(run1(d2s, ATTRS(d2s, "block_size", "2", "mode", "\"CRD\""), in, &out));
  assert_f32(out, (double[]){0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13,
                             5,  14, 21, 30, 22, 31, 23, 32, 36, 45, 37, 46, 38, 47, 54, 63,
                             55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68},
             48);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* test_spacetodepth_example: (1, 1, 4, 6) -> (1, 4, 2, 3) holding 0..23 in order */
  in = tensor_of(KILN_DTYPE_INT64, 4, SHAPE(1, 1, 4, 6),
                 (int64_t[]){0, 6, 1, 7,  2, 8,  12, 18, 13, 19, 14, 20,
                             3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23});
  KILN_ASSERT_OK(run1(s2d, ATTRS(s2d, "block_size", "2"), in, &out));
  int64_t ordered[24];
  for (int i = 0; i < 24; ++i) {
    ordered[i] = i;
  }
  assert_int_equal(kiln_tensor_shape(out)[1], 4);
  assert_i64(out, ordered, 24);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* block 3 on (2, 1, 3, 6) uint8, against the definition's loop */
  uint8_t bytes[36];
  uint8_t expected[36];
  for (int i = 0; i < 36; ++i) {
    bytes[i] = (uint8_t)(i * 5);
  }
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 9; ++c) {
      for (int x = 0; x < 2; ++x) {
        int i = c / 3, j = c % 3;
        expected[(n * 9 + c) * 2 + x] = bytes[(n * 3 + i) * 6 + x * 3 + j];
      }
    }
  }
  in = tensor_of(KILN_DTYPE_UINT8, 4, SHAPE(2, 1, 3, 6), bytes);
  KILN_ASSERT_OK(run1(s2d, ATTRS(s2d, "block_size", "3"), in, &out));
  assert_memory_equal(kiln_tensor_data(out), expected, 36);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_pad_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pad_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pad_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pad_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pad_kernel_odd_and_int, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_nearest, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_linear, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_odd_planes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_spatial_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depth_space_attrs_and_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depth_space_kernels, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
