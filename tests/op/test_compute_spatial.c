/*
 * Compute rules of the spatial operators (transform_spatial_compute.c)
 * against the reference kernels (kiln_compute_test.h): pad in every mode
 * with negative (cropping) pads and fills that saturate, resize2d for every
 * method, coordinate transformation and rounding (including outputs of one
 * pixel), grid_sample for every method, padding mode and align_corners,
 * roi_align for every mode and alignment over boxes in and out of the plane, depth_to_space in DCR
 * and CRD and space_to_depth; a golden lowered function and the error paths.
 */
#include <stdio.h>

#include "kiln_compute_test.h"

static void test_pad(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_pad;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 5, 7));
  check_compute_random(op, ATTRS(op, "pad_width", "[1, 2, 0, 0, 3, -1]", "pad_value", "1.5"), 1,
                       &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "pad_width", "[0, 0, -2, 3, 0, 0]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "pad_width", "[2, 1, 4, 4, 6, 6]", "pad_mode", "\"edge\""), 1,
                       &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "pad_width", "[2, 1, 4, 3, -1, 5]", "pad_mode", "\"reflect\""),
                       1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "pad_width", "[-1, 0, 0, 0, 0, 0]", "pad_mode", "\"reflect\""),
                       1, &f32, -2, 2);
  const kiln_type_t *i8 = ttype(KILN_DTYPE_INT8, 2, SHAPE(4, 11));
  check_compute_random(op, ATTRS(op, "pad_width", "[1, 1, 2, 3]", "pad_value", "300.7"), 1, &i8,
                       -100, 100);
  check_compute_random(op, ATTRS(op, "pad_width", "[1, 1, 2, 3]", "pad_value", "-2.9"), 1, &i8,
                       -100, 100);
  check_compute_random(op, ATTRS(op, "pad_width", "[3, 2, 5, 0]", "pad_mode", "\"reflect\""), 1,
                       &i8, -100, 100);
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 1, SHAPE(13));
  check_compute_random(op, ATTRS(op, "pad_width", "[4, 3]", "pad_value", "-3"), 1, &u8, 0, 255);
  check_compute_random(op, ATTRS(op, "pad_width", "[4, 3]", "pad_mode", "\"edge\""), 1, &u8, 0,
                       255);
  const kiln_type_t *b = ttype(KILN_DTYPE_BOOL, 2, SHAPE(3, 2));
  check_compute_random(op, ATTRS(op, "pad_width", "[1, 0, 0, 2]", "pad_value", "0.5"), 1, &b, 0, 1);
  const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(5));
  check_compute_random(op, ATTRS(op, "pad_width", "[2, 2]", "pad_value", "nan"), 1, &f64, -2, 2);
}

static void test_resize2d_every_mode(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_resize2d;
  static const char *const methods[] = {"\"nearest_neighbor\"", "\"linear\""};
  static const char *const coordinates[] = {"\"half_pixel\"", "\"align_corners\"", "\"asymmetric\"",
                                            "\"pytorch_half_pixel\""};
  static const char *const roundings[] = {"\"round_prefer_floor\"", "\"round_prefer_ceil\"",
                                          "\"floor\"", "\"ceil\""};
  static const char *const sizes[] = {"[9, 4]", "[1, 1]", "[3, 13]", "[5, 7]"};
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 5, 7));
  for (int m = 0; m < 2; ++m) {
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < (m == 0 ? 4 : 1); ++r) {
        for (int s = 0; s < 4; ++s) {
          check_compute_random(op,
                               ATTRS(op, "size", sizes[s], "method", methods[m],
                                     "coordinate_transformation_mode", coordinates[c],
                                     "rounding_method", roundings[r]),
                               1, &data, -2, 2);
        }
      }
    }
  }
  const kiln_type_t *single = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 1, 1));
  check_compute_random(op, ATTRS(op, "size", "[3, 2]"), 1, &single, -2, 2);
}

/* Every method, padding mode and align_corners, on grids reaching past
 * the plane (the joint out-of-bounds test, reflections of more than one
 * range) and planes of one pixel (reflection's range of 0). */
static void test_grid_sample(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_grid_sample;
  static const char *const methods[] = {"\"bilinear\"", "\"nearest\"", "\"bicubic\""};
  static const char *const paddings[] = {"\"zeros\"", "\"border\"", "\"reflection\""};
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 5, 7));
  const kiln_type_t *single = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 1, 1));
  for (int m = 0; m < 3; ++m) {
    for (int p = 0; p < 3; ++p) {
      for (int a = 0; a < 2; ++a) {
        const void *attrs = ATTRS(op, "method", methods[m], "padding_mode", paddings[p],
                                  "align_corners", a ? "True" : "False");
        const kiln_type_t *types[2] = {data, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 4, 9, 2))};
        check_compute_random(op, attrs, 2, types, -3.5, 3.5);
        const kiln_type_t *small[2] = {single, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 2, 2))};
        check_compute_random(op, attrs, 2, small, -2, 2);
      }
    }
  }
}

/* Boxes in [-3, 12) over 7x9 planes (some outside, some inverted, some
 * smaller than a pixel), images 0 and 1, every mode, alignment and a few
 * grid sizes and scales; the inputs made here since each has its range. */
static void test_roi_align(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_roi_align;
  kiln_tensor_t *inputs[3] = {random_tensor(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 7, 9), -2, 2),
                              random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 4), -3, 12),
                              random_tensor(KILN_DTYPE_INT64, 1, SHAPE(6), 0, 1)};
  static const char *const modes[] = {"\"avg\"", "\"max\""};
  static const char *const ratios[] = {"1", "2", "3"};
  for (int m = 0; m < 2; ++m) {
    for (int a = 0; a < 2; ++a) {
      for (int r = 0; r < 3; ++r) {
        check_compute(op,
                      ATTRS(op, "pooled_size", r == 1 ? "[3, 2]" : "[2, 5]", "sample_ratio",
                            ratios[r], "mode", modes[m], "aligned", a ? "True" : "False",
                            "spatial_scale", r == 2 ? "0.5" : "1.0"),
                      3, inputs);
      }
    }
  }
  const kiln_type_t *i32[3] = {ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 3, 3)),
                               ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4)),
                               ttype(KILN_DTYPE_INT32, 1, SHAPE(2))};
  check_compute_random(op, ATTRS(op, "pooled_size", "[2, 2]", "sample_ratio", "2"), 3, i32, 0, 0);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

static void test_depth_space(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_depth_to_space;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 12, 3, 5));
  check_compute_random(op, ATTRS(op, "block_size", "2", "mode", "\"DCR\""), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "block_size", "2", "mode", "\"CRD\""), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "block_size", "1"), 1, &f32, -2, 2);
  const kiln_type_t *i16 = ttype(KILN_DTYPE_INT16, 4, SHAPE(1, 18, 2, 3));
  check_compute_random(op, ATTRS(op, "block_size", "3", "mode", "\"CRD\""), 1, &i16, -3000, 3000);
  check_compute_random(op, ATTRS(op, "block_size", "3", "mode", "\"DCR\""), 1, &i16, -3000, 3000);
  op = &kiln_op_space_to_depth;
  const kiln_type_t *s = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 9, 6));
  check_compute_random(op, ATTRS(op, "block_size", "3"), 1, &s, -2, 2);
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 4, SHAPE(3, 5, 4, 2));
  check_compute_random(op, ATTRS(op, "block_size", "2"), 1, &u8, 0, 255);
}

static void test_golden_pad(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_pad;
  const kiln_type_t *t = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  const char *text =
      lowered_text(op, ATTRS(op, "pad_width", "[1, 2]", "pad_mode", "\"reflect\""), 1, &t, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((3,), \"float32\"), T_pad: T.Buffer((6,), \"float32\")):\n"
            "    for i_outer in T.parallel(2):\n"
            "        for i_inner in T.vectorized(4):\n"
            "            if i_outer * 4 + i_inner < 6:\n"
            "                T_pad[i_outer * 4 + i_inner] = p0[T.Select(i_outer * 4 + i_inner - 1 "
            "< 0, i_outer * -4 - i_inner + 1, T.Select(i_outer * 4 + i_inner - 1 >= 3, i_outer * "
            "-4 - i_inner + 5, i_outer * 4 + i_inner - 1))]\n");
}

static kiln_status_t compute_directly(const kiln_op_t *op, const void *attrs,
                                      const kiln_type_t *input_type, const void *rule_attrs) {
  const kiln_type_t *out_type = NULL;
  KILN_RETURN_IF_ERROR(infer(op, attrs, 1, &input_type, &out_type));
  const kiln_tensor_type_t *type = kiln_type_as_tensor(input_type);
  const kiln_te_tensor_t *input = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_placeholder(&kiln_op_test_arena, "p0", type->ndim, type->shape, type->dtype, &input));
  kiln_compute_args_t args = {op, rule_attrs, &kiln_op_test_arena, 1, &input, out_type};
  kiln_compute_result_t result;
  return kiln_op_compute(&args, &result);
}

static void test_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_resize2d;
  const void *size = ATTRS(op, "size", "[4, 4]");
  const kiln_type_t *i8 = ttype(KILN_DTYPE_INT8, 4, SHAPE(1, 1, 2, 2));
  const kiln_type_t *roi_types[3] = {ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 3, 3)),
                                     ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4)),
                                     ttype(KILN_DTYPE_INT32, 1, SHAPE(2))};
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_roi_align,
                                   ATTRS(&kiln_op_roi_align, "sample_ratio", "0"), 3, roi_types,
                                   &target, &kiln_op_test_arena, "f", &func),
                     UNIMPLEMENTED,
                     "vision.roi_align: sample_ratio 0 (a grid sized by the boxes' "
                     "values) has no compute rule");
  KILN_ASSERT_STATUS(compute_directly(op, size, i8, size), UNIMPLEMENTED,
                     "image.resize2d: the compute rule does not handle int8 (only float32)");
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 2, 2));
  KILN_ASSERT_STATUS(
      compute_directly(op, size, f32, ATTRS(op, "size", "[4, 4]", "method", "\"cubic\"")),
      INVALID_ARGUMENT, "image.resize2d: method \"cubic\" is not supported");
  KILN_ASSERT_STATUS(
      compute_directly(op, size, f32,
                       ATTRS(op, "size", "[4, 4]", "coordinate_transformation_mode", "\"tf\"")),
      INVALID_ARGUMENT, "coordinate_transformation_mode \"tf\" is not supported");
  KILN_ASSERT_STATUS(
      compute_directly(op, size, f32, ATTRS(op, "size", "[4, 4]", "rounding_method", "\"odd\"")),
      INVALID_ARGUMENT, "rounding_method \"odd\" is not supported");
  op = &kiln_op_pad;
  const void *pad = ATTRS(op, "pad_width", "[0, 0, 0, 0, 1, 1, 1, 1]");
  KILN_ASSERT_STATUS(
      compute_directly(op, pad, f32,
                       ATTRS(op, "pad_width", "[1, 1, 1, 1, 0, 0, 1, 1]", "pad_mode", "\"wrap\"")),
      INVALID_ARGUMENT, "nn.pad: pad_mode \"wrap\" is not supported");
  KILN_ASSERT_STATUS(compute_directly(op, pad, f32, ATTRS(op, "pad_width", "[1, 1]")),
                     INVALID_ARGUMENT, "nn.pad: pad_width has 2 values but the data has rank 4");
  op = &kiln_op_depth_to_space;
  const void *d2s = ATTRS(op, "block_size", "1");
  KILN_ASSERT_STATUS(
      compute_directly(op, d2s, f32, ATTRS(op, "block_size", "1", "mode", "\"XYZ\"")),
      INVALID_ARGUMENT, "nn.depth_to_space: mode \"XYZ\" is not supported");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_pad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize2d_every_mode, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grid_sample, setup, teardown),
      cmocka_unit_test_setup_teardown(test_roi_align, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depth_space, setup, teardown),
      cmocka_unit_test_setup_teardown(test_golden_pad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
