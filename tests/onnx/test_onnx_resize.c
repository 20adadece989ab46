/*
 * Resize through interpolation matrices, on the interpreter: cubic
 * (checked against Keys' kernel written in its distance form, a different
 * formulation from the converter's ratio form), exclude_outside at the
 * border, tf_crop_and_resize with extrapolation, nearest with a scale that
 * does not give a whole size (the coordinates use the given scale), and
 * resizing an axis that is neither of the last two (transposed there and
 * back). Expected numbers are worked out in the comments.
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

/* Resize of x by constant `scales` (count values) or `sizes`; attributes
 * are added by the caller through *out_node before running. */
static void build(ob_t *ob, kiln_tensor_t *x, int count, const float *scales, const int64_t *sizes,
                  Onnx__NodeProto **out_node) {
  ob_init(ob, 13);
  or_input(ob, "x", x);
  if (scales) {
    ob_init_f32(ob, "scales", 1, OB_DIMS(count), scales);
    *out_node = ob_node(ob, "Resize", "r", "x,,scales", "y");
  } else if (sizes) {
    ob_init_i64(ob, "sizes", 1, OB_DIMS(count), sizes);
    *out_node = ob_node(ob, "Resize", "r", "x,,,sizes", "y");
  } else {
    fail_msg("build: give scales or sizes");
  }
  or_output(ob, "y", KILN_DTYPE_FLOAT32);
}

/* Keys' cubic kernel with a = -0.75, by distance. */
static double keys(double d) {
  const double a = -0.75;
  d = fabs(d);
  if (d <= 1) {
    return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  }
  return d < 2 ? a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a : 0.0;
}

/* x = (0, 1, 0, 0) along W upsampled by 2 (half_pixel): output j is the
 * weight of source index 1, i.e. the sum of keys(s - k) over the
 * neighbours k = floor(s) - 1 .. floor(s) + 2 that clamp to 1. With
 * exclude_outside the neighbours outside [0, 4) weigh 0 and each row is
 * renormalized. */
static void test_cubic(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 4), OR_D(0, 1, 0, 0));
  for (int exclude = 0; exclude < 2; ++exclude) {
    ob_t ob;
    Onnx__NodeProto *node = NULL;
    build(&ob, x, 4, OB_F32(1, 1, 1, 2), NULL, &node);
    ob_attr_string(&ob, node, "mode", "cubic");
    ob_attr_int(&ob, node, "exclude_outside", exclude);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    double expected[8];
    for (int j = 0; j < 8; ++j) {
      double s = (j + 0.5) / 2 - 0.5, weight = 0.0, total = 0.0;
      for (int k = (int)floor(s) - 1; k <= (int)floor(s) + 2; ++k) {
        bool inside = k >= 0 && k < 4;
        int clamped = k < 0 ? 0 : k > 3 ? 3 : k;
        double w = exclude && !inside ? 0.0 : keys(s - k);
        weight += clamped == 1 ? w : 0.0;
        total += w;
      }
      expected[j] = exclude ? weight / total : weight;
    }
    /* by hand for j = 3 (s = 1.25): the ratio-0.25 coefficient 0.87890625 */
    assert_true(fabs(expected[3] - 0.87890625) < 1e-12);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 8), expected, 1e-6);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* (10, 20, 30) along W, roi [0.5, 1.5] there, 3 outputs, linear: the
 * sources are x + 1 = 1, 2, 3, and 3 lies outside [0, 2]: the
 * extrapolation value 7. */
static void test_tf_crop_and_resize(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 3), OR_D(10, 20, 30)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(8), OR_D(0, 0, 0, 0.5, 1, 1, 1, 1.5)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "roi", values[1]);
  ob_init_i64(&ob, "sizes", 1, OB_DIMS(4), OB_I64(1, 1, 1, 3));
  Onnx__NodeProto *node = ob_node(&ob, "Resize", "r", "x,roi,,sizes", "y");
  ob_attr_string(&ob, node, "mode", "linear");
  ob_attr_string(&ob, node, "coordinate_transformation_mode", "tf_crop_and_resize");
  ob_attr_float(&ob, node, "extrapolation_value", 7);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 3), OR_D(20, 30, 7), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[0]);
  kiln_tensor_release(values[1]);
}

/* 0..4 along W by 0.6: floor(3) outputs, sources (x + 0.5) / 0.6 - 0.5 =
 * 1/3, 2, 11/3, nearest (round_prefer_floor) 0, 2, 4. */
static void test_nearest_by_scale(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 5), OR_D(0, 1, 2, 3, 4));
  ob_t ob;
  Onnx__NodeProto *node = NULL;
  build(&ob, x, 4, OB_F32(1, 1, 1, 0.6f), NULL, &node);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 3), OR_D(0, 2, 4), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* (2, 1, 1) = (1, 2) to sizes (4, 1, 1) along axis 0, nearest half_pixel:
 * sources -0.25, 0.25, 0.75, 1.25 pick 0, 0, 1, 1. Axis 0 of a rank-3
 * tensor is moved next to last for the product and back. */
static void test_first_axis(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 1), OR_D(1, 2));
  ob_t ob;
  Onnx__NodeProto *node = NULL;
  build(&ob, x, 3, NULL, OB_I64(4, 1, 1), &node);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_transpose), 2);
  assert_int_equal(om_count_calls(run.module, &kiln_op_matmul), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(4, 1, 1), OR_D(1, 1, 2, 2), 0.0);
  or_run_free(&run);
  ob.initializers[0] = ob_tensor_i64(&ob, "sizes", 1, OB_DIMS(2), OB_I64(4, 1));
  kiln_onnx_import_options_t options = {.num_input_values = 1, .input_values = &x};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"r\" (Resize): sizes has 2 values; the data has rank 3");
  ob_free(&ob);
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_cubic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tf_crop_and_resize, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nearest_by_scale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_first_axis, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
