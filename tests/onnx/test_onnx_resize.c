/*
 * Resize through interpolation matrices, on the interpreter: cubic
 * (checked against Keys' kernel written in its distance form, a different
 * formulation from the converter's ratio form), exclude_outside at the
 * border, tf_crop_and_resize with extrapolation, nearest with a scale that
 * does not give a whole size (the coordinates use the given scale), and
 * resizing an axis that is neither of the last two (transposed there and
 * back). Expected numbers are worked out in the comments. With the scales
 * or sizes a graph input (dyn.resize, run at run time) each mode gives what
 * the import-time paths give, and bad lists are refused.
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

/* ---- lists known only at run time: dyn.resize ---- */

typedef struct late_case_t {
  const char *mode, *coordinate, *nearest;
  int exclude;
  bool by_size;
  int rank;
  const int64_t *dims;
  const double *list;
} late_case_t;

/* The case's Resize with its list (scales or sizes) an initializer, or a
 * graph input "s" when `late`. */
static void build_late(ob_t *ob, const late_case_t *c, kiln_tensor_t *const *values, bool late) {
  ob_init(ob, 13);
  or_input(ob, "x", values[0]);
  if (late) {
    or_input(ob, "s", values[1]);
  } else if (c->by_size) {
    ob_init_i64(ob, "s", 1, OB_DIMS(c->rank), kiln_tensor_data(values[1]));
  } else {
    ob_init_f32(ob, "s", 1, OB_DIMS(c->rank), kiln_tensor_data(values[1]));
  }
  Onnx__NodeProto *node = ob_node(ob, "Resize", "r", c->by_size ? "x,,,s" : "x,,s", "y");
  ob_attr_string(ob, node, "mode", c->mode);
  ob_attr_string(ob, node, "coordinate_transformation_mode", c->coordinate);
  ob_attr_string(ob, node, "nearest_mode", c->nearest);
  ob_attr_int(ob, node, "exclude_outside", c->exclude);
  or_output(ob, "y", KILN_DTYPE_FLOAT32);
}

/* dyn.resize at run time gives what the import-time paths (matrices,
 * resize2d) give with the same list as a constant. */
static void assert_late_like_known(const late_case_t *c) {
  int64_t count = 1;
  for (int d = 0; d < c->rank; ++d) {
    count *= c->dims[d];
  }
  double data[64];
  assert_true(count <= 64);
  for (int64_t i = 0; i < count; ++i) {
    data[i] = (double)(i * 5 % 11) - 3.5;
  }
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, c->rank, c->dims, data),
      or_tensor(c->by_size ? KILN_DTYPE_INT64 : KILN_DTYPE_FLOAT32, 1, OB_DIMS(c->rank), c->list)};
  ob_t known_ob, late_ob;
  build_late(&known_ob, c, values, false);
  build_late(&late_ob, c, values, true);
  or_run_t known, late;
  or_run(&known_ob, 1, values, &known);
  or_run_late(&late_ob, 2, values, &late);
  assert_int_equal(om_count_calls(known.module, &kiln_op_dyn_resize), 0);
  assert_int_equal(om_count_calls(late.module, &kiln_op_dyn_resize), 1);
  const kiln_tensor_t *want = known.outputs[0];
  double expected[512];
  assert_true(kiln_tensor_element_count(want) <= 512);
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    expected[i] = kiln_tensor_element_as_double(want, i);
  }
  or_assert(late.outputs[0], KILN_DTYPE_FLOAT32, kiln_tensor_ndim(want), kiln_tensor_shape(want),
            expected, 1e-5);
  or_run_free(&known);
  or_run_free(&late);
  ob_free(&known_ob);
  ob_free(&late_ob);
  or_release(2, values);
}

static void test_late_lists(void **state) {
  (void)state;
  const late_case_t cases[] = {
      {"linear", "half_pixel", "round_prefer_floor", 0, false, 4, OB_DIMS(1, 2, 3, 4),
       OR_D(1, 1, 0.6, 1.7)},
      {"cubic", "align_corners", "round_prefer_floor", 1, true, 4, OB_DIMS(1, 2, 3, 4),
       OR_D(1, 2, 5, 3)},
      {"nearest", "asymmetric", "round_prefer_ceil", 0, false, 4, OB_DIMS(1, 1, 3, 4),
       OR_D(1, 1, 2, 0.5)},
      {"nearest", "tf_half_pixel_for_nn", "floor", 0, true, 4, OB_DIMS(1, 2, 2, 3),
       OR_D(1, 2, 3, 7)},
      {"linear", "pytorch_half_pixel", "round_prefer_floor", 0, true, 3, OB_DIMS(2, 3, 1),
       OR_D(5, 2, 1)},
      {"cubic", "half_pixel", "round_prefer_floor", 0, false, 2, OB_DIMS(3, 4), OR_D(2.5, 0.75)},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    assert_late_like_known(&cases[i]);
  }
}

/* A run-time list of the wrong dtype is refused at import naming the node
 * and the operator; one of the wrong length when the model runs. */
static void test_late_errors(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 1, 2), OR_D(1, 2)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 1, 1, 2)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  ob_node(&ob, "Resize", "r", "x,,s", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"r\" (Resize): dyn.resize: input 2 (scales) is int64 (4,); expected a "
                     "1-D float tensor");
  ob_free(&ob);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(1, 1, 2));
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  ob_node(&ob, "Resize", "r", "x,,s", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_try_late(&ob, 2, values), INVALID_ARGUMENT,
                     "dyn.resize: scales has 3 values; the data has rank 4");
  ob_free(&ob);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(1, 1, 1, 0));
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  ob_node(&ob, "Resize", "r", "x,,s", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_try_late(&ob, 2, values), INVALID_ARGUMENT,
                     "dyn.resize: dim 3 would have 0 elements (from scale 0)");
  ob_free(&ob);
  or_release(2, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_cubic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tf_crop_and_resize, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nearest_by_scale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_first_axis, setup, teardown),
      cmocka_unit_test_setup_teardown(test_late_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_late_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
