/*
 * Tests of arange, one_hot and trilu (op/transform_create.c): attribute
 * defaults and validation, every type-relation error, layout rules, arange
 * as a zero-input call through IR type inference, and the reference kernels
 * on the examples of the ONNX operator tests (Range, OneHot, Trilu; numbers
 * written out by hand), with negative and out-of-range indices, float
 * indices, several dtypes, batches of matrices and empty shapes.
 */
#include <math.h>
#include <string.h>

#include "base/arena.h"
#include "ir/infer.h"
#include "kiln_ir_test.h"
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

#define F32 KILN_DTYPE_FLOAT32
#define I64 KILN_DTYPE_INT64

/* ---- attributes ---- */

static void test_defaults_and_patterns(void **state) {
  (void)state;
  assert_defaults(&kiln_op_arange, "start=0, stop=1, step=1, dtype=\"float32\"");
  assert_defaults(&kiln_op_one_hot, "depth=1, axis=-1, on_value=1, off_value=0, dtype=\"float32\"");
  assert_defaults(&kiln_op_trilu, "upper=True, k=0");
  assert_int_equal(kiln_op_arange.min_inputs, 0);
  assert_int_equal(kiln_op_arange.max_inputs, 0);
  assert_int_equal(kiln_op_arange.pattern, KILN_OP_PATTERN_OPAQUE);
  assert_int_equal(kiln_op_one_hot.pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_int_equal(kiln_op_trilu.pattern, KILN_OP_PATTERN_INJECTIVE);
  const kiln_op_t *arange = &kiln_op_arange;
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(arange, ATTRS(arange, "step", "0")), INVALID_ARGUMENT,
                     "arange: start 0, stop 1 and step 0 must be finite, and step nonzero");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(arange, ATTRS(arange, "stop", "inf")), INVALID_ARGUMENT,
                     "arange: start 0, stop inf and step 1 must be finite");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(arange, ATTRS(arange, "start", "nan")),
                     INVALID_ARGUMENT, "arange: start nan, stop 1 and step 1 must be finite");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(arange, ATTRS(arange, "dtype", "\"bool\"")),
                     INVALID_ARGUMENT, "arange: dtype bool is not a number type");
  const kiln_op_t *one_hot = &kiln_op_one_hot;
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(one_hot, ATTRS(one_hot, "depth", "0")),
                     INVALID_ARGUMENT, "one_hot: depth is 0; it must be >= 1");
  void *attrs = attrs_with(one_hot, NULL);
  *(kiln_dtype_t *)((char *)attrs + kiln_op_attr_field(one_hot, "dtype")->offset) =
      KILN_DTYPE_COUNT_;
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(one_hot, attrs), INVALID_ARGUMENT,
                     "one_hot: dtype 13 is not a dtype");
}

/* ---- arange ---- */

static kiln_status_t arange_type(const void *attrs, const kiln_type_t **out) {
  return infer(&kiln_op_arange, attrs, 0, NULL, out);
}

static void test_arange_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_arange;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(arange_type(attrs_with(op, NULL), &out));
  assert_type(out, F32, 1, SHAPE(1));
  /* length ceil((stop - start) / step), never below 0 */
  KILN_ASSERT_OK(arange_type(ATTRS(op, "start", "1", "stop", "5", "step", "2"), &out));
  assert_type(out, F32, 1, SHAPE(2));
  KILN_ASSERT_OK(arange_type(ATTRS(op, "stop", "1", "step", "0.3"), &out));
  assert_type(out, F32, 1, SHAPE(4));
  KILN_ASSERT_OK(arange_type(ATTRS(op, "start", "5", "stop", "1"), &out));
  assert_type(out, F32, 1, SHAPE(0));
  KILN_ASSERT_OK(
      arange_type(ATTRS(op, "start", "10", "stop", "6", "step", "-3", "dtype", "\"int32\""), &out));
  assert_type(out, KILN_DTYPE_INT32, 1, SHAPE(2));
  KILN_ASSERT_STATUS(arange_type(ATTRS(op, "stop", "1e20"), &out), INVALID_ARGUMENT,
                     "arange: start 0, stop 1e+20, step 1 give more than 9.0072e+15 elements");
  KILN_ASSERT_STATUS(arange_type(ATTRS(op, "step", "0"), &out), INVALID_ARGUMENT,
                     "arange: start 0, stop 1 and step 0 must be finite");
  const kiln_type_t *input = ttype(F32, 1, SHAPE(2));
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), input, &out), INVALID_ARGUMENT,
                     "arange: expected 0 inputs, got 1");
  kiln_layout_relation_t relation = {.op = op, .attrs = attrs_with(op, NULL), .num_inputs = 0};
  KILN_ASSERT_OK(op->correct_layout(&relation));
  assert_string_equal(relation.output_layout, "");
}

static void test_arange_in_a_module(void **state) {
  (void)state;
  kiln_module_t *module = irt_module();
  kiln_expr_t *call = irt_call(
      module, "arange", IRT_ATTRS("stop", "6", "step", "1.5", "dtype", "\"int64\""), 0, NULL);
  irt_add_function(module, "main", 0, NULL, call);
  KILN_ASSERT_OK(kiln_ir_infer_types(module));
  assert_type(call->checked_type, I64, 1, SHAPE(4));
  kiln_module_destroy(module);
}

static void test_arange_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_arange;
  kiln_tensor_t *out = NULL;
  /* ONNX test_range_float_type_positive_delta and test_range_int32_type_negative_delta */
  KILN_ASSERT_OK(run(op, ATTRS(op, "start", "1", "stop", "5", "step", "2"), 0, NULL, &out));
  assert_f32(out, (double[]){1, 3}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run(op, ATTRS(op, "start", "10", "stop", "6", "step", "-3", "dtype", "\"int32\""),
                     0, NULL, &out));
  assert_memory_equal(kiln_tensor_data(out), ((int32_t[]){10, 7}), 2 * sizeof(int32_t));
  kiln_tensor_release(out);
  KILN_ASSERT_OK(
      run(op, ATTRS(op, "start", "-2", "stop", "3", "dtype", "\"int64\""), 0, NULL, &out));
  assert_i64(out, (int64_t[]){-2, -1, 0, 1, 2}, 5);
  kiln_tensor_release(out);
  /* each value is start + i step in double, rounded once: 3 * 0.1 is 0.30000000000000004 */
  KILN_ASSERT_OK(
      run(op, ATTRS(op, "stop", "0.35", "step", "0.1", "dtype", "\"float64\""), 0, NULL, &out));
  assert_memory_equal(kiln_tensor_data(out), ((double[]){0, 0.1, 0.2, 0.30000000000000004}),
                      4 * sizeof(double));
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run(op, ATTRS(op, "start", "3", "stop", "3"), 0, NULL, &out));
  assert_int_equal(kiln_tensor_element_count(out), 0);
  kiln_tensor_release(out);
}

/* ---- one_hot ---- */

static void test_one_hot_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_one_hot;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "depth", "10"), ttype(I64, 1, SHAPE(3)), &out));
  assert_type(out, F32, 2, SHAPE(3, 10));
  const kiln_type_t *square = ttype(F32, 2, SHAPE(2, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "depth", "10", "axis", "1"), square, &out));
  assert_type(out, F32, 3, SHAPE(2, 10, 2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "depth", "10", "axis", "-2"), square, &out));
  assert_type(out, F32, 3, SHAPE(2, 10, 2));
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "depth", "4", "axis", "0", "dtype", "\"int32\""), square, &out));
  assert_type(out, KILN_DTYPE_INT32, 3, SHAPE(4, 2, 2));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "3"), square, &out), INVALID_ARGUMENT,
                     "one_hot: axis 3 is outside [-3, 2] for data (2, 2)");
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_BOOL, 1, SHAPE(3)), &out),
                     INVALID_ARGUMENT,
                     "one_hot: indices (3,) must be integers or floats, not bool");
  int64_t big[KILN_MAX_RANK];
  for (int d = 0; d < KILN_MAX_RANK; ++d) {
    big[d] = 1;
  }
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), ttype(I64, KILN_MAX_RANK, big), &out),
                     INVALID_ARGUMENT, "have the largest rank already");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(op, attrs_with(op, NULL), square, "NC", &required, &output));
  assert_string_equal(required, "NC");
  assert_string_equal(output, "");
}

static void test_one_hot_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_one_hot;
  kiln_tensor_t *in = NULL;
  kiln_tensor_t *out = NULL;
  /* ONNX test_onehot_without_axis: [0, 7, 8], depth 12, values [2, 5], int32 */
  in = tensor_of(I64, 1, SHAPE(3), (int64_t[]){0, 7, 8});
  KILN_ASSERT_OK(
      run1(op, ATTRS(op, "depth", "12", "on_value", "5", "off_value", "2", "dtype", "\"int32\""),
           in, &out));
  int32_t without_axis[36];
  for (int i = 0; i < 36; ++i) {
    without_axis[i] = 2;
  }
  without_axis[0] = without_axis[12 + 7] = without_axis[24 + 8] = 5;
  assert_memory_equal(kiln_tensor_data(out), without_axis, sizeof(without_axis));
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* test_onehot_negative_indices: [0, -7, -8], depth 10, axis 1, values [1, 3]; and indices
   * outside [-10, 10) give a line of off values */
  in = tensor_of(I64, 1, SHAPE(5), (int64_t[]){0, -7, -8, 10, -11});
  KILN_ASSERT_OK(
      run1(op, ATTRS(op, "depth", "10", "axis", "1", "on_value", "3", "off_value", "1"), in, &out));
  double negative[50];
  for (int i = 0; i < 50; ++i) {
    negative[i] = 1;
  }
  negative[0] = negative[10 + 3] = negative[20 + 2] = 3;
  assert_f32(out, negative, 50);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* test_onehot_with_axis: float indices [[1, 9], [2, 4]], depth 10, axis 1 -> (2, 10, 2) */
  in = tensor_of(F32, 2, SHAPE(2, 2), (float[]){1, 9, 2, 4});
  KILN_ASSERT_OK(
      run1(op, ATTRS(op, "depth", "10", "axis", "1", "on_value", "3", "off_value", "1"), in, &out));
  double with_axis[40];
  for (int i = 0; i < 40; ++i) {
    with_axis[i] = 1;
  }
  /* out[i][c][j] is 3 where c = indices[i][j] */
  with_axis[(0 * 10 + 1) * 2 + 0] = with_axis[(0 * 10 + 9) * 2 + 1] = 3;
  with_axis[(1 * 10 + 2) * 2 + 0] = with_axis[(1 * 10 + 4) * 2 + 1] = 3;
  assert_f32(out, with_axis, 40);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* float indices truncate toward zero: 2.7 -> 2, -0.5 -> 0, -1.5 -> -1 -> 2 (depth 3);
   * NaN and inf match no position */
  in = tensor_of(F32, 1, SHAPE(5), (float[]){2.7f, -0.5f, -1.5f, NAN, -INFINITY});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "depth", "3", "dtype", "\"int64\""), in, &out));
  assert_i64(out, (int64_t[]){0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, 15);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* uint8 indices, bool output, rank 0 */
  in = tensor_of(KILN_DTYPE_UINT8, 0, NULL, (uint8_t[]){1});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "depth", "2", "dtype", "\"bool\""), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint8_t[]){0, 1}), 2);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

/* ---- trilu ---- */

/* ONNX test_triu / test_tril input, (4, 5). */
static const int64_t kMatrix[20] = {4, 7, 3, 7, 9, 1, 2, 8, 6, 9, 9, 4, 0, 8, 7, 4, 1, 7, 0, 3};

static void check_trilu(const char *upper, const char *k, const int64_t *expected) {
  kiln_tensor_t *in = tensor_of(I64, 2, SHAPE(4, 5), kMatrix);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_trilu, ATTRS(&kiln_op_trilu, "upper", upper, "k", k), in, &out));
  assert_i64(out, expected, 20);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_trilu(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_trilu;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(I64, 3, SHAPE(3, 0, 5)), &out));
  assert_type(out, I64, 3, SHAPE(3, 0, 5));
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), ttype(F32, 1, SHAPE(5)), &out),
                     INVALID_ARGUMENT, "trilu: data (5,) must have rank >= 2 (rows, columns)");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(op, attrs_with(op, NULL), ttype(F32, 4, SHAPE(1, 2, 3, 3)), "NCHW4c",
                         &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
  /* test_triu, test_tril, and k = 1, -1 and beyond the matrix */
  check_trilu("True", "0",
              (const int64_t[]){4, 7, 3, 7, 9, 0, 2, 8, 6, 9, 0, 0, 0, 8, 7, 0, 0, 0, 0, 3});
  check_trilu("False", "0",
              (const int64_t[]){4, 0, 0, 0, 0, 1, 2, 0, 0, 0, 9, 4, 0, 0, 0, 4, 1, 7, 0, 0});
  check_trilu("True", "1",
              (const int64_t[]){0, 7, 3, 7, 9, 0, 0, 8, 6, 9, 0, 0, 0, 8, 7, 0, 0, 0, 0, 3});
  check_trilu("False", "-1",
              (const int64_t[]){0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 9, 4, 0, 0, 0, 4, 1, 7, 0, 0});
  const int64_t zeros[20] = {0};
  check_trilu("True", "6", zeros);
  check_trilu("False", "-7", zeros);
  check_trilu("False", "6", kMatrix);
  check_trilu("True", "-7", kMatrix);
  /* a batch of two (3, 3) float matrices, NaN zeroed too, against loops */
  float cube[18];
  double expected[18];
  for (int i = 0; i < 18; ++i) {
    cube[i] = i == 3 ? NAN : (float)i + 0.5f;
    int r = (i / 3) % 3;
    int c = i % 3;
    expected[i] = c - r <= 1 ? cube[i] : 0.0;
  }
  kiln_tensor_t *in = tensor_of(F32, 3, SHAPE(2, 3, 3), cube);
  kiln_tensor_t *result = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "upper", "False", "k", "1"), in, &result));
  assert_f32(result, expected, 18);
  kiln_tensor_release(result);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "k", "1"), in, &result));
  assert_true(((const float *)kiln_tensor_data(result))[3] == 0.0f); /* NaN below: zeroed */
  kiln_tensor_release(result);
  kiln_tensor_release(in);
  in = tensor_of(I64, 3, SHAPE(3, 0, 5), NULL);
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &result));
  assert_int_equal(kiln_tensor_element_count(result), 0);
  kiln_tensor_release(result);
  kiln_tensor_release(in);
}

/* arange in a module built with every allocation failing in turn. */
static kiln_status_t arange_module_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_module_create(allocator, &module));
  kiln_call_t *call = NULL;
  kiln_function_t *function = NULL;
  kiln_status_t status = kiln_ir_call_create(module, &kiln_op_arange, 0, NULL, NULL, &call);
  if (!status) {
    status = kiln_ir_function_create(module, 0, NULL, &call->base, &function);
  }
  if (!status) {
    status = kiln_module_add_function(module, "main", function);
  }
  if (!status) {
    status = kiln_ir_infer_types(module);
  }
  if (!status) {
    assert_type(call->base.checked_type, F32, 1, SHAPE(1));
  }
  kiln_module_destroy(module);
  return status;
}

static void test_arange_module_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(arange_module_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_patterns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_arange_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_arange_in_a_module, setup, teardown),
      cmocka_unit_test_setup_teardown(test_arange_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_arange_module_allocation_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_hot_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_hot_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trilu, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
