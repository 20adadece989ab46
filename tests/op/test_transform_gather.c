/*
 * Tests of gather (ONNX GatherElements), gather_nd, scatter_elements and
 * scatter_nd (op/transform_gather.c): attribute defaults and validation,
 * every type-relation error, layout rules, and the reference kernels on the
 * examples of the ONNX operator documentation (numbers written out by hand),
 * negative and out-of-range indices, int32 indices, repeated indices with
 * each reduction, several dtypes and odd shapes checked against loops here.
 */
#include <math.h>
#include <string.h>

#include "base/arena.h"
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

/* ---- fixture ---- */

#define F32 KILN_DTYPE_FLOAT32
#define I64 KILN_DTYPE_INT64
#define I32 KILN_DTYPE_INT32

static kiln_status_t infer2(const kiln_op_t *op, const void *attrs, const kiln_type_t *a,
                            const kiln_type_t *b, const kiln_type_t **out) {
  const kiln_type_t *types[] = {a, b};
  return infer(op, attrs, 2, types, out);
}

static kiln_status_t infer3(const kiln_op_t *op, const void *attrs, const kiln_type_t *a,
                            const kiln_type_t *b, const kiln_type_t *c, const kiln_type_t **out) {
  const kiln_type_t *types[] = {a, b, c};
  return infer(op, attrs, 3, types, out);
}

/* Runs `op` on two or three inputs; releases them. */
static kiln_status_t run_n(const kiln_op_t *op, const void *attrs, int count, kiln_tensor_t *a,
                           kiln_tensor_t *b, kiln_tensor_t *c, kiln_tensor_t **out) {
  kiln_tensor_t *inputs[] = {a, b, c};
  kiln_status_t status = run(op, attrs, count, inputs, out);
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  return status;
}

/* The layout rule of an operator with several inputs. */
static kiln_status_t layout_n(const kiln_op_t *op, const void *attrs, int count,
                              const kiln_type_t *const *types, const char *const *arriving,
                              const char **required, const char **out_output) {
  kiln_layout_relation_t relation = {.op = op,
                                     .attrs = attrs,
                                     .num_inputs = count,
                                     .input_types = types,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_RETURN_IF_ERROR(op->correct_layout(&relation));
  *out_output = relation.output_layout;
  return KILN_OK;
}

/* ---- attributes ---- */

static void test_defaults_and_patterns(void **state) {
  (void)state;
  assert_defaults(&kiln_op_gather, "axis=0");
  assert_defaults(&kiln_op_gather_nd, "batch_dims=0");
  assert_defaults(&kiln_op_scatter_elements, "axis=0, reduction=\"none\"");
  assert_defaults(&kiln_op_scatter_nd, "reduction=\"none\"");
  assert_int_equal(kiln_op_gather.pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_int_equal(kiln_op_gather_nd.pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_int_equal(kiln_op_scatter_elements.pattern, KILN_OP_PATTERN_OPAQUE);
  assert_int_equal(kiln_op_scatter_nd.pattern, KILN_OP_PATTERN_OPAQUE);
  assert_int_equal(kiln_op_scatter_nd.min_inputs, 3);
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_gather_nd, ATTRS(&kiln_op_gather_nd, "batch_dims", "-1")),
      INVALID_ARGUMENT, "gather_nd: batch_dims is -1, not in [0, 32)");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_scatter_elements,
                             ATTRS(&kiln_op_scatter_elements, "reduction", "\"max\"")),
      INVALID_ARGUMENT, "scatter_elements: reduction \"max\" is not one of none, add, mul");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_scatter_nd, ATTRS(&kiln_op_scatter_nd, "reduction", "\"\"")),
      INVALID_ARGUMENT, "scatter_nd: reduction \"\" is not one of none, add, mul");
  KILN_ASSERT_OK(kiln_op_attrs_validate(&kiln_op_scatter_nd,
                                        ATTRS(&kiln_op_scatter_nd, "reduction", "\"mul\"")));
}

/* ---- gather ---- */

static void test_gather_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_gather;
  const kiln_type_t *out = NULL;
  const kiln_type_t *data = ttype(F32, 2, SHAPE(3, 3));
  KILN_ASSERT_OK(infer2(op, attrs_with(op, NULL), data, ttype(I64, 2, SHAPE(2, 3)), &out));
  assert_type(out, F32, 2, SHAPE(2, 3));
  /* the indices may be longer than the data on the axis, not elsewhere */
  KILN_ASSERT_OK(infer2(op, ATTRS(op, "axis", "1"), data, ttype(I32, 2, SHAPE(1, 7)), &out));
  assert_type(out, F32, 2, SHAPE(1, 7));
  KILN_ASSERT_STATUS(infer2(op, ATTRS(op, "axis", "1"), data, ttype(I64, 2, SHAPE(4, 1)), &out),
                     INVALID_ARGUMENT,
                     "gather: indices (4, 1) is larger than data (3, 3) at dim 0");
  KILN_ASSERT_STATUS(infer2(op, attrs_with(op, NULL), data, ttype(I64, 1, SHAPE(3)), &out),
                     INVALID_ARGUMENT, "gather: indices (3,) must have the rank of data (3, 3)");
  KILN_ASSERT_STATUS(infer2(op, attrs_with(op, NULL), data, ttype(F32, 2, SHAPE(2, 3)), &out),
                     INVALID_ARGUMENT,
                     "gather: indices (2, 3) must be int32 or int64, not float32");
  KILN_ASSERT_STATUS(infer2(op, ATTRS(op, "axis", "2"), data, ttype(I64, 2, SHAPE(2, 3)), &out),
                     INVALID_ARGUMENT, "gather: axis 2 is outside [-2, 1] for data (3, 3)");
  const kiln_type_t *types[] = {data, ttype(I64, 2, SHAPE(3, 3))};
  const char *arriving[] = {"NC", ""};
  const char *required[2] = {NULL, NULL};
  const char *output = NULL;
  KILN_ASSERT_OK(layout_n(op, attrs_with(op, NULL), 2, types, arriving, required, &output));
  assert_string_equal(required[0], "NC");
  assert_string_equal(required[1], "NC");
  assert_string_equal(output, "NC");
}

static void test_gather_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_gather;
  kiln_tensor_t *out = NULL;
  /* ONNX test_gather_elements_0: [[1, 2], [3, 4]], [[0, 0], [1, 0]], axis 1 */
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "axis", "1"), 2,
                       tensor_of(F32, 2, SHAPE(2, 2), (float[]){1, 2, 3, 4}),
                       tensor_of(I64, 2, SHAPE(2, 2), (int64_t[]){0, 0, 1, 0}), NULL, &out));
  assert_f32(out, (double[]){1, 1, 4, 3}, 4);
  kiln_tensor_release(out);
  /* test_gather_elements_1 (axis 0) and its negative-index twin, int32 indices */
  float nine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 2, tensor_of(F32, 2, SHAPE(3, 3), nine),
                       tensor_of(I32, 2, SHAPE(2, 3), (int32_t[]){1, 2, 0, 2, 0, 0}), NULL, &out));
  assert_f32(out, (double[]){4, 8, 3, 7, 2, 3}, 6);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 2, tensor_of(F32, 2, SHAPE(3, 3), nine),
                       tensor_of(I64, 2, SHAPE(2, 3), (int64_t[]){-1, -2, 0, -2, 0, 0}), NULL,
                       &out));
  assert_f32(out, (double[]){7, 5, 3, 4, 2, 3}, 6);
  kiln_tensor_release(out);
  /* an odd (3, 4, 5) int64 along axis 1 with (3, 6, 2) indices, against loops */
  int64_t data[60];
  int64_t indices[36];
  int64_t expected[36];
  for (int i = 0; i < 60; ++i) {
    data[i] = i * 1000003;
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 6; ++j) {
      for (int k = 0; k < 2; ++k) {
        int at = (i * 6 + j) * 2 + k;
        indices[at] = (at * 7) % 4 - (at % 3 == 0 ? 4 : 0);
        int64_t row = indices[at] < 0 ? indices[at] + 4 : indices[at];
        expected[at] = data[(i * 4 + row) * 5 + k];
      }
    }
  }
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "axis", "-2"), 2, tensor_of(I64, 3, SHAPE(3, 4, 5), data),
                       tensor_of(I64, 3, SHAPE(3, 6, 2), indices), NULL, &out));
  assert_i64(out, expected, 36);
  kiln_tensor_release(out);
  /* out of range, either side */
  KILN_ASSERT_STATUS(run_n(op, attrs_with(op, NULL), 2, tensor_of(F32, 2, SHAPE(3, 3), nine),
                           tensor_of(I64, 2, SHAPE(1, 2), (int64_t[]){1, 3}), NULL, &out),
                     OUT_OF_RANGE, "gather: index 3 is out of range for axis 0 of size 3");
  KILN_ASSERT_STATUS(run_n(op, ATTRS(op, "axis", "1"), 2, tensor_of(F32, 2, SHAPE(3, 3), nine),
                           tensor_of(I32, 2, SHAPE(1, 1), (int32_t[]){-4}), NULL, &out),
                     OUT_OF_RANGE, "gather: index -4 is out of range for axis 1 of size 3");
}

/* ---- gather_nd ---- */

static void test_gather_nd_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_gather_nd;
  const kiln_type_t *out = NULL;
  const kiln_type_t *cube = ttype(F32, 3, SHAPE(2, 3, 4));
  KILN_ASSERT_OK(infer2(op, attrs_with(op, NULL), cube, ttype(I64, 2, SHAPE(5, 2)), &out));
  assert_type(out, F32, 2, SHAPE(5, 4));
  KILN_ASSERT_OK(infer2(op, attrs_with(op, NULL), cube, ttype(I32, 3, SHAPE(5, 6, 3)), &out));
  assert_type(out, F32, 2, SHAPE(5, 6));
  KILN_ASSERT_OK(infer2(op, ATTRS(op, "batch_dims", "1"), cube, ttype(I64, 2, SHAPE(2, 1)), &out));
  assert_type(out, F32, 2, SHAPE(2, 4));
  KILN_ASSERT_STATUS(
      infer2(op, attrs_with(op, NULL), cube, ttype(I64, 2, SHAPE(5, 4)), &out), INVALID_ARGUMENT,
      "gather_nd: the last dim of indices (5, 4) is 4; it must be in [1, 3] for data "
      "(2, 3, 4)");
  KILN_ASSERT_STATUS(infer2(op, attrs_with(op, NULL), cube, ttype(I64, 2, SHAPE(5, 0)), &out),
                     INVALID_ARGUMENT, "gather_nd: the last dim of indices (5, 0) is 0");
  KILN_ASSERT_STATUS(
      infer2(op, ATTRS(op, "batch_dims", "1"), cube, ttype(I64, 2, SHAPE(3, 1)), &out),
      INVALID_ARGUMENT, "gather_nd: indices (3, 1) and data (2, 3, 4) differ in batch dim 0");
  KILN_ASSERT_STATUS(infer2(op, ATTRS(op, "batch_dims", "1"), ttype(F32, 1, SHAPE(2)),
                            ttype(I64, 1, SHAPE(1)), &out),
                     INVALID_ARGUMENT,
                     "gather_nd: indices (1,) and data (2,) need rank > batch_dims (1)");
  KILN_ASSERT_STATUS(
      infer2(op, attrs_with(op, NULL), cube, ttype(KILN_DTYPE_UINT8, 1, SHAPE(1)), &out),
      INVALID_ARGUMENT, "gather_nd: indices (1,) must be int32 or int64, not uint8");
  KILN_ASSERT_STATUS(
      infer2(op, attrs_with(op, NULL), ttype(F32, 0, NULL), ttype(I64, 1, SHAPE(1)), &out),
      INVALID_ARGUMENT, "gather_nd: indices (1,) and data () need rank");
}

static void test_gather_nd_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_gather_nd;
  kiln_tensor_t *out = NULL;
  /* ONNX test_gathernd_example_int32: [[0, 1], [2, 3]] at [[0, 0], [1, 1]] */
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 2,
                       tensor_of(I32, 2, SHAPE(2, 2), (int32_t[]){0, 1, 2, 3}),
                       tensor_of(I64, 2, SHAPE(2, 2), (int64_t[]){0, 0, 1, 1}), NULL, &out));
  assert_memory_equal(kiln_tensor_data(out), ((int32_t[]){0, 3}), 2 * sizeof(int32_t));
  kiln_tensor_release(out);
  /* rows: [[0, 1], [2, 3]] at [[1], [0]] */
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 2,
                       tensor_of(F32, 2, SHAPE(2, 2), (float[]){0, 1, 2, 3}),
                       tensor_of(I64, 2, SHAPE(2, 1), (int64_t[]){1, 0}), NULL, &out));
  assert_f32(out, (double[]){2, 3, 0, 1}, 4);
  kiln_tensor_release(out);
  /* test_gathernd_example_float32: (2, 2, 2) at [[[0, 1]], [[1, 0]]] -> (2, 1, 2) */
  float cube[] = {0, 1, 2, 3, 4, 5, 6, 7};
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 2, tensor_of(F32, 3, SHAPE(2, 2, 2), cube),
                       tensor_of(I64, 3, SHAPE(2, 1, 2), (int64_t[]){0, 1, 1, 0}), NULL, &out));
  assert_int_equal(kiln_tensor_ndim(out), 3);
  assert_f32(out, (double[]){2, 3, 4, 5}, 4);
  kiln_tensor_release(out);
  /* test_gathernd_example_int32_batch_dim1: batch 1, [[1], [0]] -> [[2, 3], [4, 5]] */
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "batch_dims", "1"), 2,
                       tensor_of(I32, 3, SHAPE(2, 2, 2), (int32_t[]){0, 1, 2, 3, 4, 5, 6, 7}),
                       tensor_of(I64, 2, SHAPE(2, 1), (int64_t[]){1, 0}), NULL, &out));
  assert_memory_equal(kiln_tensor_data(out), ((int32_t[]){2, 3, 4, 5}), 4 * sizeof(int32_t));
  kiln_tensor_release(out);
  /* negative coordinates count from the end; a full tuple picks one element */
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 2, tensor_of(F32, 3, SHAPE(2, 2, 2), cube),
                       tensor_of(I32, 2, SHAPE(2, 3), (int32_t[]){-1, 0, -1, 0, -2, 1}), NULL,
                       &out));
  assert_f32(out, (double[]){5, 1}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_STATUS(run_n(op, attrs_with(op, NULL), 2, tensor_of(F32, 3, SHAPE(2, 2, 2), cube),
                           tensor_of(I64, 2, SHAPE(1, 2), (int64_t[]){1, 2}), NULL, &out),
                     OUT_OF_RANGE, "gather_nd: index 2 is out of range for axis 1 of size 2");
}

/* ---- scatter_elements ---- */

static void test_scatter_elements_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_scatter_elements;
  const void *axis1 = ATTRS(op, "axis", "1");
  const kiln_type_t *out = NULL;
  const kiln_type_t *data = ttype(F32, 2, SHAPE(1, 5));
  const kiln_type_t *indices = ttype(I64, 2, SHAPE(1, 2));
  KILN_ASSERT_OK(infer3(op, axis1, data, indices, ttype(F32, 2, SHAPE(1, 2)), &out));
  assert_type(out, F32, 2, SHAPE(1, 5));
  KILN_ASSERT_STATUS(infer3(op, axis1, data, indices, ttype(I64, 2, SHAPE(1, 2)), &out),
                     INVALID_ARGUMENT,
                     "scatter_elements: updates (1, 2) is int64 but data (1, 5) is float32");
  KILN_ASSERT_STATUS(infer3(op, axis1, data, indices, ttype(F32, 2, SHAPE(1, 3)), &out),
                     INVALID_ARGUMENT,
                     "scatter_elements: updates (1, 3) must have the shape of indices (1, 2)");
  KILN_ASSERT_STATUS(
      infer3(op, axis1, data, ttype(I64, 2, SHAPE(2, 2)), ttype(F32, 2, SHAPE(2, 2)), &out),
      INVALID_ARGUMENT, "scatter_elements: indices (2, 2) is larger than data (1, 5) at dim 0");
  KILN_ASSERT_STATUS(
      infer3(op, axis1, data, ttype(I64, 1, SHAPE(2)), ttype(F32, 1, SHAPE(2)), &out),
      INVALID_ARGUMENT, "scatter_elements: indices (2,) must have the rank of data (1, 5)");
  KILN_ASSERT_STATUS(infer3(op, axis1, data, ttype(KILN_DTYPE_BOOL, 2, SHAPE(1, 2)),
                            ttype(F32, 2, SHAPE(1, 2)), &out),
                     INVALID_ARGUMENT,
                     "scatter_elements: indices (1, 2) must be int32 or int64, not bool");
  KILN_ASSERT_STATUS(infer3(op, ATTRS(op, "reduction", "\"min\""), data, indices,
                            ttype(F32, 2, SHAPE(1, 2)), &out),
                     INVALID_ARGUMENT, "scatter_elements: reduction \"min\" is not one of");
}

static void test_scatter_elements_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_scatter_elements;
  kiln_tensor_t *out = NULL;
  float row[] = {1, 2, 3, 4, 5};
  /* ONNX test_scatter_elements_with_axis and _with_negative_indices */
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "axis", "1"), 3, tensor_of(F32, 2, SHAPE(1, 5), row),
                       tensor_of(I64, 2, SHAPE(1, 2), (int64_t[]){1, 3}),
                       tensor_of(F32, 2, SHAPE(1, 2), (float[]){1.1f, 2.1f}), &out));
  assert_f32(out, (double[]){1, 1.1f, 3, 2.1f, 5}, 5);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "axis", "1"), 3, tensor_of(F32, 2, SHAPE(1, 5), row),
                       tensor_of(I32, 2, SHAPE(1, 2), (int32_t[]){1, -3}),
                       tensor_of(F32, 2, SHAPE(1, 2), (float[]){1.1f, 2.1f}), &out));
  assert_f32(out, (double[]){1, 1.1f, 2.1f, 4, 5}, 5);
  kiln_tensor_release(out);
  /* test_scatter_elements_without_axis: zeros (3, 3) */
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 3, tensor_of(F32, 2, SHAPE(3, 3), (float[9]){0}),
                       tensor_of(I64, 2, SHAPE(2, 3), (int64_t[]){1, 0, 2, 0, 2, 1}),
                       tensor_of(F32, 2, SHAPE(2, 3), (float[]){1, 1.1f, 1.2f, 2, 2.1f, 2.2f}),
                       &out));
  assert_f32(out, (double[]){2, 1.1f, 0, 1, 0, 2.2f, 0, 2.1f, 1.2f}, 9);
  kiln_tensor_release(out);
  /* repeated index [[1, 1]]: none keeps the last, add sums (test_scatter_elements_with_
   * duplicate_indices: 2 + 1.1 + 2.1), mul multiplies */
  const char *reductions[] = {"\"none\"", "\"add\"", "\"mul\""};
  const double second[] = {2.1f, 2 + (double)1.1f + (double)2.1f, 2 * (double)1.1f * (double)2.1f};
  for (int r = 0; r < 3; ++r) {
    KILN_ASSERT_OK(run_n(op, ATTRS(op, "axis", "1", "reduction", reductions[r]), 3,
                         tensor_of(F32, 2, SHAPE(1, 5), row),
                         tensor_of(I64, 2, SHAPE(1, 2), (int64_t[]){1, 1}),
                         tensor_of(F32, 2, SHAPE(1, 2), (float[]){1.1f, 2.1f}), &out));
    assert_f32(out, (double[]){1, second[r], 3, 4, 5}, 5);
    kiln_tensor_release(out);
  }
  /* int64 add wraps; uint8 mul wraps */
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "reduction", "\"add\""), 3,
                       tensor_of(I64, 1, SHAPE(2), (int64_t[]){INT64_MAX, 5}),
                       tensor_of(I64, 1, SHAPE(2), (int64_t[]){0, 0}),
                       tensor_of(I64, 1, SHAPE(2), (int64_t[]){1, 1}), &out));
  assert_i64(out, (int64_t[]){INT64_MIN + 1, 5}, 2);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "reduction", "\"mul\""), 3,
                       tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(2), (uint8_t[]){20, 3}),
                       tensor_of(I64, 1, SHAPE(1), (int64_t[]){0}),
                       tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(1), (uint8_t[]){17}), &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint8_t[]){84, 3}), 2); /* 340 - 256 */
  kiln_tensor_release(out);
  KILN_ASSERT_STATUS(run_n(op, ATTRS(op, "axis", "1"), 3, tensor_of(F32, 2, SHAPE(1, 5), row),
                           tensor_of(I64, 2, SHAPE(1, 2), (int64_t[]){1, 5}),
                           tensor_of(F32, 2, SHAPE(1, 2), (float[]){1, 2}), &out),
                     OUT_OF_RANGE,
                     "scatter_elements: index 5 is out of range for axis 1 of size 5");
}

/* ---- scatter_nd ---- */

static void test_scatter_nd_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_scatter_nd;
  const void *none = attrs_with(op, NULL);
  const kiln_type_t *out = NULL;
  const kiln_type_t *data = ttype(F32, 3, SHAPE(4, 4, 4));
  KILN_ASSERT_OK(
      infer3(op, none, data, ttype(I64, 2, SHAPE(2, 1)), ttype(F32, 3, SHAPE(2, 4, 4)), &out));
  assert_type(out, F32, 3, SHAPE(4, 4, 4));
  KILN_ASSERT_OK(infer3(op, none, data, ttype(I32, 2, SHAPE(5, 3)), ttype(F32, 1, SHAPE(5)), &out));
  KILN_ASSERT_STATUS(
      infer3(op, none, ttype(F32, 1, SHAPE(8)), ttype(I64, 2, SHAPE(4, 1)), ttype(F32, 1, SHAPE(3)),
             &out),
      INVALID_ARGUMENT,
      "scatter_nd: updates (3,) must have shape (4,) (indices (4, 1) without its last dim, then "
      "the dims of data (8,) after the first 1)");
  KILN_ASSERT_STATUS(infer3(op, none, ttype(F32, 1, SHAPE(8)), ttype(I64, 2, SHAPE(4, 2)),
                            ttype(F32, 1, SHAPE(4)), &out),
                     INVALID_ARGUMENT,
                     "scatter_nd: the last dim of indices (4, 2) is 2; it must be in [1, 1] for "
                     "data (8,)");
  KILN_ASSERT_STATUS(
      infer3(op, none, data, ttype(I64, 2, SHAPE(2, 1)), ttype(I64, 3, SHAPE(2, 4, 4)), &out),
      INVALID_ARGUMENT, "scatter_nd: updates (2, 4, 4) is int64 but data (4, 4, 4) is float32");
  KILN_ASSERT_STATUS(
      infer3(op, none, data, ttype(F32, 2, SHAPE(2, 1)), ttype(F32, 3, SHAPE(2, 4, 4)), &out),
      INVALID_ARGUMENT, "scatter_nd: indices (2, 1) must be int32 or int64, not float32");
  const kiln_type_t *types[] = {ttype(F32, 4, SHAPE(1, 2, 3, 4)), ttype(I64, 2, SHAPE(1, 1)),
                                ttype(F32, 4, SHAPE(1, 2, 3, 4))};
  const char *arriving[] = {"NCHW8c", "", "NCHW"};
  const char *required[3] = {NULL, NULL, NULL};
  const char *output = NULL;
  KILN_ASSERT_OK(layout_n(op, none, 3, types, arriving, required, &output));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[1], "");
  assert_string_equal(required[2], "");
  assert_string_equal(output, "NCHW");
}

static void test_scatter_nd_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_scatter_nd;
  kiln_tensor_t *out = NULL;
  /* ONNX ScatterND example 1: [1..8] at [[4], [3], [1], [7]] = [9, 10, 11, 12] */
  float eight[] = {1, 2, 3, 4, 5, 6, 7, 8};
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 3, tensor_of(F32, 1, SHAPE(8), eight),
                       tensor_of(I64, 2, SHAPE(4, 1), (int64_t[]){4, 3, 1, 7}),
                       tensor_of(F32, 1, SHAPE(4), (float[]){9, 10, 11, 12}), &out));
  assert_f32(out, (double[]){1, 11, 3, 10, 9, 6, 7, 12}, 8);
  kiln_tensor_release(out);
  /* test_scatternd, _add and _multiply: (4, 4, 4) slices 0 and 2, then 0 twice */
  const float slice_a[16] = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1};
  const float slice_b[16] = {8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
  float data[64];
  memcpy(data, slice_a, sizeof(slice_a));
  memcpy(data + 16, slice_a, sizeof(slice_a));
  memcpy(data + 32, slice_b, sizeof(slice_b));
  memcpy(data + 48, slice_b, sizeof(slice_b));
  float updates[32];
  for (int i = 0; i < 32; ++i) {
    updates[i] = (float)(i / 16 == 0 ? 5 + (i % 16) / 4 : 1 + (i % 16) / 4);
  }
  const char *reductions[] = {"\"none\"", "\"add\"", "\"mul\""};
  const int64_t where[3][2] = {{0, 2}, {0, 0}, {0, 0}};
  for (int r = 0; r < 3; ++r) {
    double expected[64];
    for (int i = 0; i < 64; ++i) {
      expected[i] = data[i];
    }
    for (int u = 0; u < 2; ++u) {
      for (int e = 0; e < 16; ++e) {
        double *slot = &expected[where[r][u] * 16 + e];
        double update = updates[u * 16 + e];
        *slot = r == 0 ? update : r == 1 ? *slot + update : *slot * update;
      }
    }
    KILN_ASSERT_OK(run_n(op, ATTRS(op, "reduction", reductions[r]), 3,
                         tensor_of(F32, 3, SHAPE(4, 4, 4), data),
                         tensor_of(I64, 2, SHAPE(2, 1), where[r]),
                         tensor_of(F32, 3, SHAPE(2, 4, 4), updates), &out));
    assert_f32(out, expected, 64);
    kiln_tensor_release(out);
  }
  /* by hand, test_scatternd_add's first rows: 1+5+1, 2+5+1, ...; 5+6+2, ... */
  KILN_ASSERT_OK(run_n(op, ATTRS(op, "reduction", "\"add\""), 3,
                       tensor_of(F32, 3, SHAPE(4, 4, 4), data),
                       tensor_of(I64, 2, SHAPE(2, 1), (int64_t[]){0, 0}),
                       tensor_of(F32, 3, SHAPE(2, 4, 4), updates), &out));
  const float by_hand[8] = {7, 8, 9, 10, 13, 14, 15, 16};
  assert_memory_equal(kiln_tensor_data(out), by_hand, sizeof(by_hand));
  kiln_tensor_release(out);
  /* a full tuple with a negative coordinate; int64 data */
  KILN_ASSERT_OK(run_n(op, attrs_with(op, NULL), 3,
                       tensor_of(I64, 2, SHAPE(2, 2), (int64_t[]){1, 2, 3, 4}),
                       tensor_of(I32, 2, SHAPE(1, 2), (int32_t[]){-1, 0}),
                       tensor_of(I64, 1, SHAPE(1), (int64_t[]){-9}), &out));
  assert_i64(out, (int64_t[]){1, 2, -9, 4}, 4);
  kiln_tensor_release(out);
  KILN_ASSERT_STATUS(run_n(op, attrs_with(op, NULL), 3, tensor_of(F32, 1, SHAPE(8), eight),
                           tensor_of(I64, 2, SHAPE(1, 1), (int64_t[]){8}),
                           tensor_of(F32, 1, SHAPE(1), (float[]){0}), &out),
                     OUT_OF_RANGE, "scatter_nd: index 8 is out of range for axis 0 of size 8");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_patterns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_nd_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_nd_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_elements_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_elements_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_nd_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_nd_kernel, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
