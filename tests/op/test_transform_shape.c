/*
 * Tests of the shape operators (reshape, transpose, expand_dims, squeeze,
 * nn.batch_flatten, tile, broadcast_to) and cast: attribute defaults and validation, every
 * type-relation error, layout rules, and the reference kernels on small
 * inputs with expected values written by hand or computed by loops here,
 * including rank 0 and 1, odd shapes, several dtypes, and cast's rounding,
 * saturation and wrapping between every pair of dtype classes.
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

/* ---- attributes ---- */

static void test_defaults_and_patterns(void **state) {
  (void)state;
  assert_defaults(&kiln_op_reshape, "newshape=[], allowzero=False");
  assert_defaults(&kiln_op_transpose, "axes=[]");
  assert_defaults(&kiln_op_expand_dims, "axis=0, num_newaxis=1");
  assert_defaults(&kiln_op_squeeze, "axis=[]");
  assert_defaults(&kiln_op_cast, "dtype=\"float32\"");
  assert_null(attrs_with(&kiln_op_batch_flatten, NULL));
  assert_string_equal(kiln_op_batch_flatten.name, "nn.batch_flatten");
  const kiln_op_t *injective[] = {&kiln_op_reshape, &kiln_op_transpose, &kiln_op_expand_dims,
                                  &kiln_op_squeeze, &kiln_op_batch_flatten};
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(injective[i]->pattern, KILN_OP_PATTERN_INJECTIVE);
    assert_non_null(injective[i]->correct_layout);
  }
  assert_int_equal(kiln_op_cast.pattern, KILN_OP_PATTERN_ELEMWISE);
  assert_null(kiln_op_cast.correct_layout);
  assert_int_equal(kiln_op_reshape.id, KILN_OP_RESHAPE);
  assert_int_equal(kiln_op_cast.id, KILN_OP_CAST);
}

static void test_attr_validation(void **state) {
  (void)state;
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", "[2, -2]")),
      INVALID_ARGUMENT, "reshape: newshape[1] is -2; a dim is >= 0, or -1 to infer it");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", "[-1, 3, -1]")),
      INVALID_ARGUMENT, "reshape: newshape [-1, 3, -1] has more than one -1");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_reshape,
                             ATTRS(&kiln_op_reshape, "newshape", "[-1, 0]", "allowzero", "True")),
      INVALID_ARGUMENT, "reshape: newshape [-1, 0] has -1 and 0 with allowzero");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_expand_dims,
                                            ATTRS(&kiln_op_expand_dims, "num_newaxis", "-1")),
                     INVALID_ARGUMENT, "expand_dims: num_newaxis is -1, not in [0, 32]");
  /* Every dtype is a cast target; only a value outside the enum is not. */
  KILN_ASSERT_OK(
      kiln_op_attrs_validate(&kiln_op_cast, ATTRS(&kiln_op_cast, "dtype", "\"bfloat16\"")));
  void *cast_attrs = attrs_with(&kiln_op_cast, NULL);
  *(kiln_dtype_t *)((char *)cast_attrs + kiln_op_attr_field(&kiln_op_cast, "dtype")->offset) =
      KILN_DTYPE_COUNT_;
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_cast, cast_attrs), INVALID_ARGUMENT,
                     "cast: dtype 13 is not a dtype");
  KILN_ASSERT_STATUS(kiln_op_attrs_set_text(&kiln_op_cast, attrs_with(&kiln_op_cast, NULL), "dtype",
                                            "\"float128\"", &kiln_op_test_arena),
                     NOT_FOUND, "cast attribute dtype=\"float128\": unknown dtype");
  const char *long_list = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, "
                          "19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]";
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_transpose, ATTRS(&kiln_op_transpose, "axes", long_list)),
      INVALID_ARGUMENT, "transpose: axes has 33 entries, more than 32");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_squeeze, ATTRS(&kiln_op_squeeze, "axis", long_list)),
      INVALID_ARGUMENT, "squeeze: axis has 33 entries, more than 32");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", long_list)),
      INVALID_ARGUMENT, "reshape: newshape has 33 entries, more than 32");
}

/* ---- reshape ---- */

static void test_reshape_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_reshape;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "newshape", "[4, 6]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(4, 6));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "newshape", "[0, -1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 12));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "newshape", "[-1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(24));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "newshape", "[4, 0, -1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(4, 3, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "newshape", "[0, 0, 0, 1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 4, 1));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_INT64, 2, SHAPE(1, 1)), &out));
  assert_type(out, KILN_DTYPE_INT64, 0, NULL);
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "newshape", "[1, -1, 1]"), ttype(KILN_DTYPE_BOOL, 0, NULL), &out));
  assert_type(out, KILN_DTYPE_BOOL, 3, SHAPE(1, 1, 1));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "newshape", "[-1, 3]"),
                        ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3));
}

static void test_reshape_type_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_reshape;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "newshape", "[5, 5]"), data, &out), INVALID_ARGUMENT,
                     "reshape: cannot reshape data (2, 3, 4) of 24 elements into [5, 5]");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "newshape", "[5, -1]"), data, &out), INVALID_ARGUMENT,
                     "reshape: cannot reshape data (2, 3, 4) of 24 elements into [5, -1]");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "newshape", "[2, 3, 4, 0]"), data, &out),
                     INVALID_ARGUMENT,
                     "reshape: newshape[3] is 0 (copy the input dim) but data (2, 3, 4) has no "
                     "dim 3");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "newshape", "[4611686018427387904, 4]"), data, &out), INVALID_ARGUMENT,
      "reshape: cannot reshape data (2, 3, 4) of 24 elements into [4611686018427387904, 4]");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "newshape", "[0, -1]"), ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3)), &out),
      INVALID_ARGUMENT, "reshape: cannot reshape data (0, 3) of 0 elements into [0, -1]");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "newshape", "[-1, -1]"), data, &out), INVALID_ARGUMENT,
                     "reshape: newshape [-1, -1] has more than one -1");
}

static void test_reshape_kernel(void **state) {
  (void)state;
  kiln_tensor_t *in =
      tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 3), (int64_t[]){1, 2, 3, 4, 5, INT64_MIN});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      run1(&kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", "[3, -1, 1]"), in, &out));
  assert_int_equal(kiln_tensor_ndim(out), 3);
  assert_int_equal(kiln_tensor_shape(out)[1], 2);
  assert_i64(out, (int64_t[]){1, 2, 3, 4, 5, INT64_MIN}, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(5), (uint8_t[]){9, 8, 7, 6, 5});
  KILN_ASSERT_OK(run1(&kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", "[5, 1]"), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint8_t[]){9, 8, 7, 6, 5}), 5);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

/* ---- transpose ---- */

static void test_transpose_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_transpose;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(4, 3, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axes", "[1, 0, 2]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(3, 2, 4));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axes", "[-1, 0, 1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(4, 2, 3));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_INT32, 0, NULL), &out));
  assert_type(out, KILN_DTYPE_INT32, 0, NULL);
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axes", "[0, 1]"), data, &out), INVALID_ARGUMENT,
                     "transpose: axes [0, 1] has 2 entries but data (2, 3, 4) has rank 3");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axes", "[0, 0, 1]"), data, &out), INVALID_ARGUMENT,
                     "transpose: axes [0, 0, 1] names dim 0 twice for data (2, 3, 4)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axes", "[0, 1, 3]"), data, &out), INVALID_ARGUMENT,
                     "transpose: axes[2] 3 is outside [-3, 2] for data (2, 3, 4)");
}

static void test_transpose_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_transpose;
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &out));
  assert_f32(out, (double[]){1, 4, 2, 5, 3, 6}, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* (3, 5, 7) int64 with axes [2, 0, 1]: out[k][i][j] = in[i][j][k]. */
  int64_t data[105];
  for (int i = 0; i < 105; ++i) {
    data[i] = 1000 + i;
  }
  in = tensor_of(KILN_DTYPE_INT64, 3, SHAPE(3, 5, 7), data);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axes", "[2, 0, 1]"), in, &out));
  int64_t expected[105];
  for (int k = 0; k < 7; ++k) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        expected[(k * 3 + i) * 5 + j] = data[(i * 5 + j) * 7 + k];
      }
    }
  }
  assert_i64(out, expected, 105);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* Rank 1 and rank 0 are copies; uint8 moves bytes. */
  in = tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(3), (uint8_t[]){7, 8, 9});
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint8_t[]){7, 8, 9}), 3);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_FLOAT32, 0, NULL, (float[]){4.5f});
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &out));
  assert_f32(out, (double[]){4.5}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_shape_layouts(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 1, 5));
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(&kiln_op_transpose, ATTRS(&kiln_op_transpose, "axes", "[0, 2, 3, 1]"),
                         data, "NCHW", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NHWC");
  KILN_ASSERT_OK(layout1(&kiln_op_transpose, attrs_with(&kiln_op_transpose, NULL), data, "NCHW16c",
                         &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "WHCN");
  KILN_ASSERT_OK(layout1(&kiln_op_squeeze, attrs_with(&kiln_op_squeeze, NULL), data, "NCHW",
                         &required, &output));
  assert_string_equal(output, "CW");
  KILN_ASSERT_OK(layout1(&kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", "[-1]"), data,
                         "NCHW8c", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "");
  KILN_ASSERT_OK(layout1(&kiln_op_expand_dims, attrs_with(&kiln_op_expand_dims, NULL), data, "",
                         &required, &output));
  assert_string_equal(required, "");
  assert_string_equal(output, "");
  KILN_ASSERT_OK(layout1(&kiln_op_batch_flatten, NULL, data, "NHWC", &required, &output));
  assert_string_equal(required, "NHWC");
  assert_string_equal(output, "");
  /* A layout that does not name every dim cannot name the output's. */
  KILN_ASSERT_OK(layout1(&kiln_op_squeeze, attrs_with(&kiln_op_squeeze, NULL), data, "NC",
                         &required, &output));
  assert_string_equal(output, "");
  KILN_ASSERT_STATUS(layout1(&kiln_op_transpose, ATTRS(&kiln_op_transpose, "axes", "[0, 0, 1, 2]"),
                             data, "NCHW", &required, &output),
                     INVALID_ARGUMENT, "transpose: axes [0, 0, 1, 2] names dim 0 twice");
}

/* ---- expand_dims, squeeze, batch_flatten ---- */

static void test_expand_dims(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_expand_dims;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(1, 2, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "2"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 1));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "-1"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 1));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "-3"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(1, 2, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "1", "num_newaxis", "2"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 1, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "num_newaxis", "0"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_INT64, 0, NULL), &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(1));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "3"), data, &out), INVALID_ARGUMENT,
                     "expand_dims: axis 3 is outside [-3, 2] for data (2, 3)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "-4"), data, &out), INVALID_ARGUMENT,
                     "expand_dims: axis -4 is outside [-3, 2] for data (2, 3)");
  int64_t ones[31];
  for (int i = 0; i < 31; ++i) {
    ones[i] = 1;
  }
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "num_newaxis", "2"), ttype(KILN_DTYPE_FLOAT32, 31, ones), &out),
      INVALID_ARGUMENT, "with 2 new axes would have rank 33, more than 32");
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), (float[]){1, -2, 3});
  kiln_tensor_t *result = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", "1", "num_newaxis", "3"), in, &result));
  assert_int_equal(kiln_tensor_ndim(result), 4);
  assert_int_equal(kiln_tensor_shape(result)[0], 3);
  assert_f32(result, (double[]){1, -2, 3}, 3);
  kiln_tensor_release(result);
  kiln_tensor_release(in);
}

static void test_squeeze(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_squeeze;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 1, 5));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "[0]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(3, 1, 5));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "[-2, 0]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_INT64, 2, SHAPE(1, 1)), &out));
  assert_type(out, KILN_DTYPE_INT64, 0, NULL);
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "[1]"), data, &out), INVALID_ARGUMENT,
                     "squeeze: axis 1 of data (1, 3, 1, 5) has size 3, not 1");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "[0, -4]"), data, &out), INVALID_ARGUMENT,
                     "squeeze: axis [0, -4] names dim 0 twice for data (1, 3, 1, 5)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "[4]"), data, &out), INVALID_ARGUMENT,
                     "squeeze: axis[0] 4 is outside [-4, 3] for data (1, 3, 1, 5)");
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_INT64, 3, SHAPE(1, 2, 1), (int64_t[]){-7, 8});
  kiln_tensor_t *result = NULL;
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &result));
  assert_int_equal(kiln_tensor_ndim(result), 1);
  assert_i64(result, (int64_t[]){-7, 8}, 2);
  kiln_tensor_release(result);
  kiln_tensor_release(in);
}

static void test_batch_flatten(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_flatten;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 1, 5)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 15));
  KILN_ASSERT_OK(infer1(op, NULL, ttype(KILN_DTYPE_INT64, 1, SHAPE(7)), &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(7, 1));
  KILN_ASSERT_OK(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 0, 4)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(3, 0));
  KILN_ASSERT_STATUS(infer1(op, NULL, ttype(KILN_DTYPE_FLOAT32, 0, NULL), &out), INVALID_ARGUMENT,
                     "nn.batch_flatten: data () must have rank >= 1");
  KILN_ASSERT_STATUS(infer1(op, NULL,
                            ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(0, INT64_C(4611686018427387904), 4)),
                            &out),
                     INVALID_ARGUMENT,
                     "nn.batch_flatten: a row of data (0, 4611686018427387904, 4) has more than");
  float data[30];
  for (int i = 0; i < 30; ++i) {
    data[i] = (float)i - 0.5f;
  }
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 5), data);
  kiln_tensor_t *result = NULL;
  KILN_ASSERT_OK(run1(op, NULL, in, &result));
  assert_int_equal(kiln_tensor_shape(result)[1], 15);
  double expected[30];
  for (int i = 0; i < 30; ++i) {
    expected[i] = i - 0.5;
  }
  assert_f32(result, expected, 30);
  kiln_tensor_release(result);
  kiln_tensor_release(in);
}

/* ---- cast ---- */

static void test_cast_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_cast;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "dtype", "\"int64\""), ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)), &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_BOOL, 0, NULL), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 0, NULL);
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "dtype", "\"uint16\""), ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(2)), &out));
  assert_type(out, KILN_DTYPE_UINT16, 1, SHAPE(2));
}

/* Casts `count` values of `from` to `to` and compares the bytes. */
static void check_cast(kiln_dtype_t from, const void *in_data, kiln_dtype_t to,
                       const void *expected, int64_t count) {
  char text[32];
  snprintf(text, sizeof(text), "\"%s\"", kiln_dtype_name(to));
  kiln_tensor_t *in = tensor_of(from, 1, SHAPE(count), in_data);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_cast, ATTRS(&kiln_op_cast, "dtype", text), in, &out));
  assert_int_equal(kiln_tensor_dtype(out), to);
  assert_memory_equal(kiln_tensor_data(out), expected, (size_t)count * kiln_dtype_size(to));
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_cast_kernel(void **state) {
  (void)state;
  /* float -> int truncates toward zero, saturates, and NaN gives 0. */
  check_cast(KILN_DTYPE_FLOAT32, (float[]){1.7f, -1.7f, 2.5f, -0.5f, 3e9f, -3e9f, NAN, INFINITY},
             KILN_DTYPE_INT32, (int32_t[]){1, -1, 2, 0, INT32_MAX, INT32_MIN, 0, INT32_MAX}, 8);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){-1.5f, 300.0f, 255.9f, 7.2f}, KILN_DTYPE_UINT8,
             (uint8_t[]){0, 255, 255, 7}, 4);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){200.0f, -200.7f, -128.9f}, KILN_DTYPE_INT8,
             (int8_t[]){127, -128, -128}, 3);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){1e19f, -1e19f, -INFINITY, 12345678.0f}, KILN_DTYPE_INT64,
             (int64_t[]){INT64_MAX, INT64_MIN, INT64_MIN, 12345678}, 4);
  /* int -> narrower int wraps. */
  check_cast(KILN_DTYPE_INT64, (int64_t[]){300, -129, 5}, KILN_DTYPE_INT8, (int8_t[]){44, 127, 5},
             3);
  check_cast(KILN_DTYPE_INT32, (int32_t[]){-1, 256, 255}, KILN_DTYPE_UINT8,
             (uint8_t[]){255, 0, 255}, 3);
  check_cast(KILN_DTYPE_INT32, (int32_t[]){-5, INT32_MAX}, KILN_DTYPE_INT64,
             (int64_t[]){-5, INT32_MAX}, 2);
  check_cast(KILN_DTYPE_UINT8, (uint8_t[]){255, 0}, KILN_DTYPE_INT32, (int32_t[]){255, 0}, 2);
  check_cast(KILN_DTYPE_INT8, (int8_t[]){-128, 3}, KILN_DTYPE_FLOAT32, (float[]){-128.0f, 3.0f}, 2);
  /* int -> float rounds to nearest (2^24 + 1 is not a float). */
  check_cast(KILN_DTYPE_INT64, (int64_t[]){16777217, -3}, KILN_DTYPE_FLOAT32,
             (float[]){16777216.0f, -3.0f}, 2);
  /* bool: value != 0 (NaN is true); bool reads as 0 and 1. */
  check_cast(KILN_DTYPE_FLOAT32, (float[]){0.0f, -0.0f, 0.1f, NAN, -2.0f}, KILN_DTYPE_BOOL,
             (uint8_t[]){0, 0, 1, 1, 1}, 5);
  check_cast(KILN_DTYPE_INT64, (int64_t[]){0, 256, -1}, KILN_DTYPE_BOOL, (uint8_t[]){0, 1, 1}, 3);
  check_cast(KILN_DTYPE_BOOL, (uint8_t[]){0, 1, 1}, KILN_DTYPE_FLOAT32, (float[]){0, 1, 1}, 3);
  check_cast(KILN_DTYPE_BOOL, (uint8_t[]){1, 0}, KILN_DTYPE_INT64, (int64_t[]){1, 0}, 2);
  /* float16: 1.0 = 0x3c00, -2.5 = 0xc100, 65520 overflows to inf 0x7c00. */
  check_cast(KILN_DTYPE_FLOAT32, (float[]){1.0f, -2.5f, 65520.0f}, KILN_DTYPE_FLOAT16,
             (uint16_t[]){0x3c00, 0xc100, 0x7c00}, 3);
  check_cast(KILN_DTYPE_FLOAT16, (uint16_t[]){0x3e00, 0xc100}, KILN_DTYPE_INT32, (int32_t[]){1, -2},
             2);
  check_cast(KILN_DTYPE_FLOAT16, (uint16_t[]){0x3555}, KILN_DTYPE_FLOAT32,
             (float[]){0.333251953125f}, 1);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){1.5f, -7.25f}, KILN_DTYPE_FLOAT32,
             (float[]){1.5f, -7.25f}, 2);
  /* An odd 2-D shape keeps its order. */
  float grid[35];
  int32_t truncated[35];
  for (int i = 0; i < 35; ++i) {
    grid[i] = (float)(i - 17) * 0.75f;
    truncated[i] = (int32_t)((i - 17) * 3 / 4);
  }
  check_cast(KILN_DTYPE_FLOAT32, grid, KILN_DTYPE_INT32, truncated, 35);
}

/* The dtypes scalar.h added: float64, bfloat16, int16 and the wide unsigned ones. */
static void test_cast_kernel_wide_dtypes(void **state) {
  (void)state;
  /* float64 -> float32 rounds once to nearest; -> float64 is exact. */
  check_cast(KILN_DTYPE_FLOAT64, (double[]){0.1, 16777217.0, -1e300}, KILN_DTYPE_FLOAT32,
             (float[]){0.1f, 16777216.0f, -INFINITY}, 3);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){0.1f, -2.5f}, KILN_DTYPE_FLOAT64,
             (double[]){(double)0.1f, -2.5}, 2);
  /* int64 -> float64 rounds to nearest (2^53 + 1 is not a double). */
  check_cast(KILN_DTYPE_INT64, (int64_t[]){9007199254740993LL, -7}, KILN_DTYPE_FLOAT64,
             (double[]){9007199254740992.0, -7.0}, 2);
  /* uint64 keeps values above INT64_MAX; floats saturate at its range. */
  check_cast(KILN_DTYPE_UINT64, (uint64_t[]){UINT64_MAX, 5}, KILN_DTYPE_FLOAT64,
             (double[]){18446744073709551616.0, 5.0}, 2);
  check_cast(KILN_DTYPE_FLOAT64, (double[]){1e30, -3.0, 12.9, NAN}, KILN_DTYPE_UINT64,
             (uint64_t[]){UINT64_MAX, 0, 12, 0}, 4);
  check_cast(KILN_DTYPE_UINT64, (uint64_t[]){UINT64_MAX, 300}, KILN_DTYPE_INT64,
             (int64_t[]){-1, 300}, 2);
  check_cast(KILN_DTYPE_INT64, (int64_t[]){-1, 70000}, KILN_DTYPE_UINT16, (uint16_t[]){65535, 4464},
             2);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){70000.0f, -1.0f, 4e9f}, KILN_DTYPE_UINT32,
             (uint32_t[]){70000, 0, 4000000000u}, 3);
  check_cast(KILN_DTYPE_FLOAT32, (float[]){40000.0f, -40000.0f, -3.9f}, KILN_DTYPE_INT16,
             (int16_t[]){INT16_MAX, INT16_MIN, -3}, 3);
  check_cast(KILN_DTYPE_INT16, (int16_t[]){-300}, KILN_DTYPE_UINT8, (uint8_t[]){212}, 1);
  /* bfloat16 is float32's top half: 1.0 = 0x3f80, -2.5 = 0xc020; 1 + 2^-8 ties to even. */
  check_cast(KILN_DTYPE_FLOAT32, (float[]){1.0f, -2.5f, 1.00390625f}, KILN_DTYPE_BFLOAT16,
             (uint16_t[]){0x3f80, 0xc020, 0x3f80}, 3);
  check_cast(KILN_DTYPE_BFLOAT16, (uint16_t[]){0x4040}, KILN_DTYPE_INT32, (int32_t[]){3}, 1);
  check_cast(KILN_DTYPE_BOOL, (uint8_t[]){1, 0}, KILN_DTYPE_UINT64, (uint64_t[]){1, 0}, 2);
}

static void test_kernel_checks(void **state) {
  (void)state;
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *wrong = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_INT64, 2, SHAPE(3, 2), &wrong));
  kiln_kernel_args_t args = {
      &kiln_op_reshape, ATTRS(&kiln_op_reshape, "newshape", "[3, 2]"), 1, &in, 1, &wrong};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_reshape.id)(&args), INVALID_ARGUMENT,
                     "reshape: output 0 is (3, 2) int64 but the inputs give (3, 2) float32");
  args.op = &kiln_op_transpose;
  args.attrs = attrs_with(&kiln_op_transpose, NULL);
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_transpose.id)(&args), INVALID_ARGUMENT,
                     "transpose: output 0 is (3, 2) int64 but the inputs give (3, 2) float32");
  args.op = &kiln_op_reshape;
  args.attrs = ATTRS(&kiln_op_reshape, "newshape", "[-1, -1]");
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_reshape.id)(&args), INVALID_ARGUMENT,
                     "reshape: newshape [-1, -1] has more than one -1");
  kiln_tensor_release(wrong);
  kiln_tensor_release(in);
}

/* ---- tile ---- */

static void test_tile_attrs_and_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_tile;
  assert_defaults(op, "reps=[]");
  assert_int_equal(op->pattern, KILN_OP_PATTERN_INJECTIVE);
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "reps", "[2, -1]")), INVALID_ARGUMENT,
                     "tile: reps[1] is -1; a repetition count is >= 0");
  const kiln_type_t *out = NULL;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "reps", "[2, 2]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(4, 6));
  /* reps and shape align at the last dim; the shorter one gets leading 1s */
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "reps", "[2]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 6));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "reps", "[2, 1, 1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(2, 2, 3));
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "reps", "[0, 1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3));
  /* ONNX test_tile */
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "reps", "[7, 6, 4, 2]"),
                        ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 4, 5)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 4, SHAPE(14, 18, 16, 10));
  const kiln_type_t *wide = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, INT64_C(1) << 40));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "reps", "[1099511627776, 1099511627776]"), wide, &out),
                     INVALID_ARGUMENT,
                     "tile: data (3, 1099511627776) tiled by [1099511627776, 1099511627776] has "
                     "more than 9223372036854775807 elements");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "reps", "[3, 1099511627776]"), wide, &out),
                     INVALID_ARGUMENT, "tile: data (3, 1099511627776) tiled by");
  const char *required = NULL;
  const char *output = NULL;
  const kiln_type_t *nchw = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 2, 2));
  KILN_ASSERT_OK(
      layout1(op, ATTRS(op, "reps", "[1, 1, 2, 2]"), nchw, "NCHW4c", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
  KILN_ASSERT_OK(
      layout1(op, ATTRS(op, "reps", "[2, 1, 1, 2, 2]"), nchw, "NCHW", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "");
}

static void test_tile_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_tile;
  /* ONNX test_tile_precomputed */
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 2), (float[]){0, 1, 2, 3});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "reps", "[2, 2]"), in, &out));
  assert_f32(out, (double[]){0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}, 16);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* int64 (1, 3) by [2, 1, 2]: (2, 1, 6) */
  in = tensor_of(KILN_DTYPE_INT64, 2, SHAPE(1, 3), (int64_t[]){7, -8, 9});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "reps", "[2, 1, 2]"), in, &out));
  assert_int_equal(kiln_tensor_ndim(out), 3);
  assert_i64(out, (int64_t[]){7, -8, 9, 7, -8, 9, 7, -8, 9, 7, -8, 9}, 12);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* an odd (3, 5) by [2, 3], against loops */
  float x[15];
  double expected[90];
  for (int i = 0; i < 15; ++i) {
    x[i] = (float)(i * 7 % 11) - 4.5f;
  }
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 15; ++c) {
      expected[r * 15 + c] = x[(r % 3) * 5 + c % 5];
    }
  }
  in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5), x);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "reps", "[2, 3]"), in, &out));
  assert_f32(out, expected, 90);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "reps", "[2, 0]"), in, &out));
  assert_int_equal(kiln_tensor_element_count(out), 0);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* bool, rank 0 by [3] */
  in = tensor_of(KILN_DTYPE_BOOL, 0, NULL, (uint8_t[]){1});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "reps", "[3]"), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint8_t[]){1, 1, 1}), 3);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

/* ---- broadcast_to ---- */

static void test_broadcast_to(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_broadcast_to;
  assert_defaults(op, "shape=[]");
  assert_int_equal(op->pattern, KILN_OP_PATTERN_BROADCAST);
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "shape", "[2, -1]")), INVALID_ARGUMENT,
                     "broadcast_to: shape[1] is -1; a dim is >= 0");
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 1));
  const kiln_type_t *out = NULL;
  /* ONNX test_expand_dim_changed and test_expand_dim_unchanged */
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "shape", "[2, 1, 6]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 6));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "shape", "[3, 4]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4));
  /* the output is broadcast(data, shape): a 1 in shape keeps the data's dim */
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "shape", "[1, 1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(3, 1));
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "shape", "[4]"), ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 2)), &out),
      INVALID_ARGUMENT,
      "broadcast_to: cannot broadcast (3, 2) and (4,): dim 1 of the result would "
      "be 2 vs 4");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(op, ATTRS(op, "shape", "[2, 3, 1]"), data, "NC", &required, &output));
  assert_string_equal(required, "NC");
  assert_string_equal(output, "");
  /* kernel: (3, 1) = [1, 2, 3] to (2, 3, 6) */
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 1), (float[]){1, 2, 3});
  kiln_tensor_t *result = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "shape", "[2, 1, 6]"), in, &result));
  double expected[36];
  for (int i = 0; i < 36; ++i) {
    expected[i] = (i / 6) % 3 + 1;
  }
  assert_f32(result, expected, 36);
  kiln_tensor_release(result);
  kiln_tensor_release(in);
  /* uint16 row (1, 3) to (2, 3); rank 0 to (2,) */
  in = tensor_of(KILN_DTYPE_UINT16, 2, SHAPE(1, 3), (uint16_t[]){1, 65535, 3});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "shape", "[2, 1]"), in, &result));
  assert_memory_equal(kiln_tensor_data(result), ((uint16_t[]){1, 65535, 3, 1, 65535, 3}),
                      6 * sizeof(uint16_t));
  kiln_tensor_release(result);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_INT64, 0, NULL, (int64_t[]){-4});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "shape", "[2]"), in, &result));
  assert_i64(result, (int64_t[]){-4, -4}, 2);
  kiln_tensor_release(result);
  kiln_tensor_release(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_patterns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attr_validation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_transpose_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_transpose_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shape_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_expand_dims, setup, teardown),
      cmocka_unit_test_setup_teardown(test_squeeze, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_flatten, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_kernel_wide_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_checks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tile_attrs_and_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tile_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_broadcast_to, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
