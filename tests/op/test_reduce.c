/*
 * Tests of the reductions (sum, mean, max, min, prod) and argmax and argmin: attribute
 * defaults and validation, every type-relation error, layout rules, and the
 * reference kernels on small inputs whose expected values are computed here
 * by independent loops (or written by hand), on odd shapes, rank 0 and 1,
 * empty axes, NaN and int64 values beyond 2^53.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/impl.h"
#include "op/op.h"

/* ---- fixture ---- */

/* A (d0, d1, d2) float tensor with element [i][j][k] = f(i, j, k). */
static double value_at(int64_t i, int64_t j, int64_t k) {
  return 0.25 * (double)(i * 100 + j * 10 + k) - 7.0 + (double)((i + 2 * j + 3 * k) % 5);
}

static kiln_tensor_t *cube(int64_t d0, int64_t d1, int64_t d2) {
  float data[1024];
  for (int64_t i = 0; i < d0; ++i) {
    for (int64_t j = 0; j < d1; ++j) {
      for (int64_t k = 0; k < d2; ++k) {
        data[(i * d1 + j) * d2 + k] = (float)value_at(i, j, k);
      }
    }
  }
  return tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(d0, d1, d2), data);
}

/* ---- attributes ---- */

static void test_defaults_and_patterns(void **state) {
  (void)state;
  const kiln_op_t *reductions[] = {&kiln_op_sum, &kiln_op_mean, &kiln_op_max, &kiln_op_min};
  const char *names[] = {"sum", "mean", "max", "min"};
  for (int i = 0; i < 4; ++i) {
    assert_string_equal(reductions[i]->name, names[i]);
    assert_int_equal(reductions[i]->pattern, KILN_OP_PATTERN_COMM_REDUCE);
    assert_defaults(reductions[i], "axis=[], keepdims=False");
  }
  assert_int_equal(kiln_op_sum.id, KILN_OP_SUM);
  assert_int_equal(kiln_op_min.id, KILN_OP_MIN);
  assert_int_equal(kiln_op_argmax.id, KILN_OP_ARGMAX);
  assert_int_equal(kiln_op_argmax.pattern, KILN_OP_PATTERN_OPAQUE);
  assert_defaults(&kiln_op_argmax, "axis=0, keepdims=True, select_last_index=False");
  assert_string_equal(kiln_op_prod.name, "prod");
  assert_int_equal(kiln_op_prod.pattern, KILN_OP_PATTERN_COMM_REDUCE);
  assert_defaults(&kiln_op_prod, "axis=[], keepdims=False");
  assert_string_equal(kiln_op_argmin.name, "argmin");
  assert_int_equal(kiln_op_argmin.pattern, KILN_OP_PATTERN_OPAQUE);
  assert_defaults(&kiln_op_argmin, "axis=0, keepdims=True, select_last_index=False");
}

static void test_attr_validation(void **state) {
  (void)state;
  void *attrs = ATTRS(&kiln_op_sum, "axis",
                      "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, "
                      "21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_sum, attrs), INVALID_ARGUMENT,
                     "sum: axis has 33 entries, more than the largest rank 32");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_set_text(&kiln_op_max, attrs, "keepdims", "yes", &kiln_op_test_arena),
      INVALID_ARGUMENT, "max attribute keepdims=yes");
  KILN_ASSERT_STATUS(kiln_op_attrs_set_text(&kiln_op_argmax, attrs_with(&kiln_op_argmax, NULL),
                                            "axes", "1", &kiln_op_test_arena),
                     INVALID_ARGUMENT, "argmax has no attribute 'axes'");
}

/* ---- type relations ---- */

static void test_reduce_types(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4));
  KILN_ASSERT_OK(
      infer1(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[1]", "keepdims", "True"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(2, 1, 4));
  KILN_ASSERT_OK(infer1(&kiln_op_max, attrs_with(&kiln_op_max, NULL), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 0, NULL);
  KILN_ASSERT_OK(infer1(&kiln_op_min, ATTRS(&kiln_op_min, "axis", "[-1, 0]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  KILN_ASSERT_OK(infer1(&kiln_op_sum, ATTRS(&kiln_op_sum, "keepdims", "True"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(1, 1, 1));
  const kiln_type_t *ints = ttype(KILN_DTYPE_INT64, 2, SHAPE(5, 7));
  KILN_ASSERT_OK(infer1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[0]"), ints, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(7));
  const kiln_type_t *scalar = ttype(KILN_DTYPE_FLOAT32, 0, NULL);
  KILN_ASSERT_OK(infer1(&kiln_op_max, attrs_with(&kiln_op_max, NULL), scalar, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 0, NULL);
  /* sum and mean reduce an empty axis; max and min cannot. */
  const kiln_type_t *empty = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 0));
  KILN_ASSERT_OK(infer1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1]"), empty, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  KILN_ASSERT_OK(infer1(&kiln_op_max, ATTRS(&kiln_op_max, "axis", "[0]"), empty, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(0));
}

static void test_reduce_type_errors(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[3]"), data, &out),
                     INVALID_ARGUMENT, "sum: axis[0] 3 is outside [-3, 2] for data (2, 3, 4)");
  KILN_ASSERT_STATUS(infer1(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[0, -4]"), data, &out),
                     INVALID_ARGUMENT, "mean: axis[1] -4 is outside [-3, 2] for data (2, 3, 4)");
  KILN_ASSERT_STATUS(infer1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1, -2]"), data, &out),
                     INVALID_ARGUMENT, "sum: axis [1, -2] names dim 1 twice for data (2, 3, 4)");
  const kiln_type_t *empty = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 0));
  KILN_ASSERT_STATUS(infer1(&kiln_op_max, ATTRS(&kiln_op_max, "axis", "[1]"), empty, &out),
                     INVALID_ARGUMENT, "max: cannot reduce axis 1 of size 0 (data (2, 0))");
  KILN_ASSERT_STATUS(infer1(&kiln_op_min, attrs_with(&kiln_op_min, NULL), empty, &out),
                     INVALID_ARGUMENT, "min: cannot reduce axis 1 of size 0");
  KILN_ASSERT_STATUS(infer1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "-1"), empty, &out),
                     INVALID_ARGUMENT, "argmax: cannot reduce axis 1 of size 0");
  const kiln_type_t *fields[] = {data, data};
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&kiln_op_test_arena, 2, fields, &tuple));
  KILN_ASSERT_STATUS(infer1(&kiln_op_sum, attrs_with(&kiln_op_sum, NULL), tuple, &out),
                     INVALID_ARGUMENT, "sum: input 0 must be a tensor, not a tuple");
  KILN_ASSERT_STATUS(kiln_op_infer_type(&kiln_op_sum, attrs_with(&kiln_op_sum, NULL), 2, fields,
                                        &kiln_op_test_arena, &out),
                     INVALID_ARGUMENT, "sum: expected 1 inputs, got 2");
  void *too_long = ATTRS(&kiln_op_sum, "axis",
                         "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, "
                         "20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]");
  KILN_ASSERT_STATUS(infer1(&kiln_op_sum, too_long, data, &out), INVALID_ARGUMENT,
                     "sum: axis has 33 entries");
}

static void test_argmax_types(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(&kiln_op_argmax, attrs_with(&kiln_op_argmax, NULL), data, &out));
  assert_type(out, KILN_DTYPE_INT64, 3, SHAPE(1, 3, 4));
  KILN_ASSERT_OK(infer1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "-1", "keepdims", "False"),
                        data, &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(2, 3));
  KILN_ASSERT_STATUS(infer1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "3"), data, &out),
                     INVALID_ARGUMENT, "argmax: axis 3 is outside [-3, 2] for data (2, 3, 4)");
  KILN_ASSERT_STATUS(infer1(&kiln_op_argmax, attrs_with(&kiln_op_argmax, NULL),
                            ttype(KILN_DTYPE_INT64, 0, NULL), &out),
                     INVALID_ARGUMENT, "argmax: axis 0 is outside [0, -1] for data ()");
}

/* ---- layouts ---- */

static void test_layouts(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 32, 5, 7));
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1]", "keepdims", "True"), data,
                         "NCHW16c", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
  KILN_ASSERT_OK(layout1(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[2, 3]"), data, "NCHW",
                         &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NC");
  KILN_ASSERT_OK(layout1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "1", "keepdims", "False"),
                         data, "NHWC", &required, &output));
  assert_string_equal(output, "NWC");
  KILN_ASSERT_OK(
      layout1(&kiln_op_max, attrs_with(&kiln_op_max, NULL), data, "", &required, &output));
  assert_string_equal(required, "");
  assert_string_equal(output, "");
  KILN_ASSERT_STATUS(
      layout1(&kiln_op_min, attrs_with(&kiln_op_min, NULL), data, "NC-HW", &required, &output),
      INVALID_ARGUMENT, "min: \"NC-HW\" is not a layout");
  KILN_ASSERT_STATUS(
      layout1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[4]"), data, "NCHW", &required, &output),
      INVALID_ARGUMENT, "sum: axis[0] 4 is outside [-4, 3] for data (1, 32, 5, 7)");
}

/* ---- kernels ---- */

/* Expected sum (or mean, max, min) of cube(d0, d1, d2) over the marked axes, by loops. */
static void expected_reduce(int kind, int64_t d0, int64_t d1, int64_t d2, const bool *reduced,
                            double *out, int64_t *out_count) {
  int64_t dims[3] = {d0, d1, d2};
  int64_t n[3];
  for (int a = 0; a < 3; ++a) {
    n[a] = reduced[a] ? 1 : dims[a];
  }
  *out_count = n[0] * n[1] * n[2];
  for (int64_t o = 0; o < *out_count; ++o) {
    int64_t oi = o / (n[1] * n[2]), oj = (o / n[2]) % n[1], ok = o % n[2];
    double acc = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.0;
    int64_t count = 0;
    for (int64_t i = 0; i < d0; ++i) {
      for (int64_t j = 0; j < d1; ++j) {
        for (int64_t k = 0; k < d2; ++k) {
          if ((!reduced[0] && i != oi) || (!reduced[1] && j != oj) || (!reduced[2] && k != ok)) {
            continue;
          }
          double v = (double)(float)value_at(i, j, k);
          acc = kind <= 1 ? acc + v : kind == 2 ? fmax(acc, v) : fmin(acc, v);
          ++count;
        }
      }
    }
    out[o] = kind == 1 ? acc / (double)count : acc;
  }
}

static void check_reduce(const kiln_op_t *op, int kind, int64_t d0, int64_t d1, int64_t d2,
                         const char *axis_text, bool r0, bool r1, bool r2) {
  kiln_tensor_t *in = cube(d0, d1, d2);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", axis_text), in, &out));
  bool reduced[3] = {r0, r1, r2};
  double expected[1024];
  int64_t count = 0;
  expected_reduce(kind, d0, d1, d2, reduced, expected, &count);
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  /* keepdims gives the same values in the same order. */
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", axis_text, "keepdims", "True"), in, &out));
  assert_int_equal(kiln_tensor_ndim(out), 3);
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_reduce_kernels_float(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_sum, &kiln_op_mean, &kiln_op_max, &kiln_op_min};
  for (int kind = 0; kind < 4; ++kind) {
    check_reduce(ops[kind], kind, 3, 5, 7, "[1]", false, true, false);
    check_reduce(ops[kind], kind, 3, 5, 7, "[0, 2]", true, false, true);
    check_reduce(ops[kind], kind, 3, 5, 7, "[-1]", false, false, true);
    check_reduce(ops[kind], kind, 3, 5, 7, "[]", true, true, true);
    check_reduce(ops[kind], kind, 1, 13, 3, "[2, 0]", true, false, true);
    check_reduce(ops[kind], kind, 5, 1, 1, "[0]", true, false, false);
  }
}

static void test_reduce_by_hand(void **state) {
  (void)state;
  /* [[1, 2, 3], [4, 5, 6]] */
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[0]"), in, &out));
  assert_f32(out, (double[]){5, 7, 9}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[1]"), in, &out));
  assert_f32(out, (double[]){2, 5}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_max, attrs_with(&kiln_op_max, NULL), in, &out));
  assert_int_equal(kiln_tensor_ndim(out), 0);
  assert_f32(out, (double[]){6}, 1);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_min, ATTRS(&kiln_op_min, "axis", "[-1]"), in, &out));
  assert_f32(out, (double[]){1, 4}, 2);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* Rank 0: a reduction over no axes is the value itself. */
  in = tensor_of(KILN_DTYPE_FLOAT32, 0, NULL, (float[]){-2.5f});
  KILN_ASSERT_OK(run1(&kiln_op_sum, attrs_with(&kiln_op_sum, NULL), in, &out));
  assert_f32(out, (double[]){-2.5}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* Rank 1. */
  in = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(5), (float[]){0.5f, -1, 3, 2, -4});
  KILN_ASSERT_OK(run1(&kiln_op_mean, attrs_with(&kiln_op_mean, NULL), in, &out));
  assert_f32(out, (double[]){0.1}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_reduce_empty_and_nan(void **state) {
  (void)state;
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 0), NULL);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1]"), in, &out));
  assert_f32(out, (double[]){0, 0}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[1]"), in, &out));
  assert_f32(out, (double[]){NAN, NAN}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_max, ATTRS(&kiln_op_max, "axis", "[0]"), in, &out));
  assert_int_equal(kiln_tensor_element_count(out), 0);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* NaN propagates through max and min, wherever it is. */
  in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), (float[]){NAN, 1, 2, 3, 4, NAN});
  KILN_ASSERT_OK(run1(&kiln_op_max, ATTRS(&kiln_op_max, "axis", "[1]"), in, &out));
  assert_f32(out, (double[]){NAN, NAN}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_min, ATTRS(&kiln_op_min, "axis", "[0]"), in, &out));
  assert_f32(out, (double[]){NAN, 1, NAN}, 3);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_reduce_int64(void **state) {
  (void)state;
  const int64_t big = INT64_C(1) << 60;
  int64_t data[6] = {big + 1, big, -3, 7, big + 3, -big};
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 3), data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1]"), in, &out));
  assert_i64(out, (int64_t[]){2 * big - 2, 10}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_max, ATTRS(&kiln_op_max, "axis", "[0]"), in, &out));
  assert_i64(out, (int64_t[]){big + 1, big + 3, -3}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_min, attrs_with(&kiln_op_min, NULL), in, &out));
  assert_i64(out, (int64_t[]){-big}, 1);
  kiln_tensor_release(out);
  KILN_ASSERT_STATUS(run1(&kiln_op_mean, attrs_with(&kiln_op_mean, NULL), in, &out), UNIMPLEMENTED,
                     "mean: the reference kernel does not handle int64");
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(2), (int32_t[]){1, 2});
  KILN_ASSERT_STATUS(run1(&kiln_op_sum, attrs_with(&kiln_op_sum, NULL), in, &out), UNIMPLEMENTED,
                     "sum: the reference kernel does not handle int32");
  kiln_tensor_release(in);
}

/* float64 keeps its precision: 1 + 2^-40 is not representable in float32. */
static void test_reduce_float64(void **state) {
  (void)state;
  const double tiny = 1.0 / (double)(INT64_C(1) << 40);
  kiln_tensor_t *in =
      tensor_of(KILN_DTYPE_FLOAT64, 2, SHAPE(2, 3), (double[]){1, tiny, 2, -1, NAN, 4});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[0]"), in, &out));
  assert_int_equal(kiln_tensor_dtype(out), KILN_DTYPE_FLOAT64);
  const double *values = kiln_tensor_data(out);
  assert_true(values[0] == 0.0 && isnan(values[1]) && values[2] == 6.0);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(
      run1(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[1]", "keepdims", "True"), in, &out));
  values = kiln_tensor_data(out);
  assert_true(values[0] == (3.0 + tiny) / 3.0 && isnan(values[1]));
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "1"), in, &out));
  assert_i64(out, (int64_t[]){2, 1}, 2); /* NaN wins an argmax, as in NumPy */
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_argmax_kernel(void **state) {
  (void)state;
  /* (3, 4): ties, NaN, negative values. */
  float data[12] = {1, 5, 5, 2, -1, -3, -1, -2, 0, NAN, 7, NAN};
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4), data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "1"), in, &out));
  assert_int_equal(kiln_tensor_ndim(out), 2);
  assert_i64(out, (int64_t[]){1, 0, 1}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_argmax,
                      ATTRS(&kiln_op_argmax, "axis", "1", "select_last_index", "True"), in, &out));
  assert_i64(out, (int64_t[]){2, 2, 3}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "keepdims", "False"), in, &out));
  assert_i64(out, (int64_t[]){0, 2, 2, 2}, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* int64 beyond 2^53, where a double compare would tie. */
  const int64_t big = INT64_C(1) << 60;
  in = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (int64_t[]){big, big + 1, big - 1});
  KILN_ASSERT_OK(run1(&kiln_op_argmax, attrs_with(&kiln_op_argmax, NULL), in, &out));
  assert_int_equal(kiln_tensor_ndim(out), 1);
  assert_i64(out, (int64_t[]){1}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* An odd cube, against loops. */
  in = cube(3, 5, 7);
  KILN_ASSERT_OK(run1(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "-2"), in, &out));
  int64_t expected[21];
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t k = 0; k < 7; ++k) {
      int64_t best = 0;
      for (int64_t j = 1; j < 5; ++j) {
        if ((float)value_at(i, j, k) > (float)value_at(i, best, k)) {
          best = j;
        }
      }
      expected[i * 7 + k] = best;
    }
  }
  assert_i64(out, expected, 21);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(2), (uint8_t[]){1, 2});
  KILN_ASSERT_STATUS(run1(&kiln_op_argmax, attrs_with(&kiln_op_argmax, NULL), in, &out),
                     UNIMPLEMENTED, "argmax: the reference kernel does not handle uint8");
  kiln_tensor_release(in);
}

static void test_kernel_checks_outputs(void **state) {
  (void)state;
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *wrong = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, SHAPE(3), &wrong));
  void *attrs = ATTRS(&kiln_op_sum, "axis", "[1]");
  kiln_kernel_args_t args = {&kiln_op_sum, attrs, 1, &in, 1, &wrong};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_sum.id)(&args), INVALID_ARGUMENT,
                     "sum: output 0 is (3,) float32 but the inputs give (2,) float32");
  args.num_outputs = 0;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_sum.id)(&args), INVALID_ARGUMENT,
                     "sum: expected 1 output, got 0");
  args.num_inputs = 0;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_sum.id)(&args), INVALID_ARGUMENT,
                     "sum: the kernel got 0 inputs");
  kiln_tensor_release(wrong);
  kiln_tensor_release(in);
}

/* ---- prod and argmin ---- */

static void test_prod_and_argmin_types(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 2, 2));
  const kiln_type_t *out = NULL;
  /* ONNX test_reduce_prod_*: (3, 2, 2) */
  KILN_ASSERT_OK(infer1(&kiln_op_prod, ATTRS(&kiln_op_prod, "keepdims", "True"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(1, 1, 1));
  KILN_ASSERT_OK(infer1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[-2]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(3, 2));
  KILN_ASSERT_STATUS(infer1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[3]"), data, &out),
                     INVALID_ARGUMENT, "prod: axis[0] 3 is outside [-3, 2] for data (3, 2, 2)");
  /* prod of nothing is 1, so an empty axis is fine; argmin's is not */
  const kiln_type_t *empty = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 0));
  KILN_ASSERT_OK(infer1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[1]"), empty, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  KILN_ASSERT_STATUS(infer1(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "1"), empty, &out),
                     INVALID_ARGUMENT, "argmin: cannot reduce axis 1 of size 0 (data (2, 0))");
  KILN_ASSERT_OK(infer1(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "-1", "keepdims", "False"),
                        data, &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(3, 2));
  KILN_ASSERT_STATUS(infer1(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "-4"), data, &out),
                     INVALID_ARGUMENT, "argmin: axis -4 is outside [-3, 2] for data (3, 2, 2)");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[1]"),
                         ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 3, 4)), "NCHW", &required,
                         &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NHW");
}

static void test_prod_kernel(void **state) {
  (void)state;
  /* ONNX test_reduce_prod_do_not_keepdims_example: [[[1, 2], [3, 4]], [[5, 6], [7, 8]],
   * [[9, 10], [11, 12]]] over axis 1 */
  float data[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 2, 2), data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[1]"), in, &out));
  assert_f32(out, (double[]){3, 8, 35, 48, 99, 120}, 6);
  kiln_tensor_release(out);
  /* all axes: 12! = 479001600 */
  KILN_ASSERT_OK(run1(&kiln_op_prod, ATTRS(&kiln_op_prod, "keepdims", "True"), in, &out));
  assert_f32(out, (double[]){479001600.0}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* empty axis: 1; int64 wraps: 2^32 * 2^32 = 0 */
  in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 0), NULL);
  KILN_ASSERT_OK(run1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[1]"), in, &out));
  assert_f32(out, (double[]){1, 1}, 2);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  const int64_t two32 = INT64_C(1) << 32;
  in = tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 2), (int64_t[]){two32, two32, -3, 5});
  KILN_ASSERT_OK(run1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[1]"), in, &out));
  assert_i64(out, (int64_t[]){0, -15}, 2);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* an odd cube, against loops (products of 5 values computed in double) */
  in = cube(3, 5, 7);
  KILN_ASSERT_OK(run1(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[1]"), in, &out));
  double expected[21];
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t k = 0; k < 7; ++k) {
      double product = 1.0;
      for (int64_t j = 0; j < 5; ++j) {
        product *= (float)value_at(i, j, k);
      }
      expected[i * 7 + k] = product;
    }
  }
  assert_f32(out, expected, 21);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_argmin_kernel(void **state) {
  (void)state;
  /* ONNX test_argmin_*_example: [[2, 1], [3, 10]] */
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 2), (float[]){2, 1, 3, 10});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_argmin, attrs_with(&kiln_op_argmin, NULL), in, &out));
  assert_i64(out, (int64_t[]){0, 0}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "1"), in, &out));
  assert_i64(out, (int64_t[]){1, 0}, 2);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* (3, 4): ties first or last, NaN wins (NumPy) */
  float data[12] = {5, 1, 1, 2, -1, -3, -3, -2, 0, NAN, -7, NAN};
  in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4), data);
  KILN_ASSERT_OK(run1(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "1"), in, &out));
  assert_i64(out, (int64_t[]){1, 1, 1}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_argmin,
                      ATTRS(&kiln_op_argmin, "axis", "1", "select_last_index", "True"), in, &out));
  assert_i64(out, (int64_t[]){2, 2, 3}, 3);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* int64 beyond 2^53 */
  const int64_t big = INT64_C(1) << 60;
  in = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (int64_t[]){big, big - 1, big + 1});
  KILN_ASSERT_OK(run1(&kiln_op_argmin, attrs_with(&kiln_op_argmin, NULL), in, &out));
  assert_i64(out, (int64_t[]){1}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* an odd cube, against loops */
  in = cube(3, 5, 7);
  KILN_ASSERT_OK(
      run1(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "2", "keepdims", "False"), in, &out));
  int64_t expected[15];
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      int64_t best = 0;
      for (int64_t k = 1; k < 7; ++k) {
        if ((float)value_at(i, j, k) < (float)value_at(i, j, best)) {
          best = k;
        }
      }
      expected[i * 5 + j] = best;
    }
  }
  assert_i64(out, expected, 15);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_patterns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attr_validation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_argmax_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_kernels_float, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_empty_and_nan, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_int64, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_float64, setup, teardown),
      cmocka_unit_test_setup_teardown(test_argmax_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prod_and_argmin_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prod_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_argmin_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_checks_outputs, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
