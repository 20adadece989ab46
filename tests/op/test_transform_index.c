/*
 * Tests of the indexing operators (concatenate, split, strided_slice, take):
 * attribute defaults and validation, every type-relation error, layout rules,
 * and the reference kernels on small inputs with expected values written by
 * hand or computed by loops here, including rank 0 and 1, odd shapes, empty
 * parts, ONNX Slice clamping with negative steps, and every take mode.
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

/* data[i] = base + i for a float tensor of `count` elements. */
static kiln_tensor_t *iota_f32(int ndim, const int64_t *shape, float base) {
  float data[512];
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    count *= shape[d];
  }
  for (int64_t i = 0; i < count; ++i) {
    data[i] = base + (float)i;
  }
  return tensor_of(KILN_DTYPE_FLOAT32, ndim, shape, data);
}

/* ---- attributes and patterns ---- */

static void test_defaults_and_patterns(void **state) {
  (void)state;
  assert_defaults(&kiln_op_concatenate, "axis=0");
  assert_defaults(&kiln_op_split, "sections=0, indices=[], axis=0");
  assert_defaults(&kiln_op_strided_slice, "begin=[], end=[], strides=[], axes=[]");
  assert_defaults(&kiln_op_take, "axis=0, mode=\"clip\"");
  const kiln_op_t *ops[] = {&kiln_op_concatenate, &kiln_op_split, &kiln_op_strided_slice,
                            &kiln_op_take};
  const char *names[] = {"concatenate", "split", "strided_slice", "take"};
  const kiln_op_id_t ids[] = {KILN_OP_CONCATENATE, KILN_OP_SPLIT, KILN_OP_STRIDED_SLICE,
                              KILN_OP_TAKE};
  for (int i = 0; i < 4; ++i) {
    assert_string_equal(ops[i]->name, names[i]);
    assert_int_equal(ops[i]->id, ids[i]);
    assert_int_equal(ops[i]->pattern, KILN_OP_PATTERN_INJECTIVE);
  }
  assert_int_equal(kiln_op_concatenate.max_inputs, -1);
  assert_int_equal(kiln_op_take.min_inputs, 2);
}

static void test_attr_validation(void **state) {
  (void)state;
  const kiln_op_t *split = &kiln_op_split;
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(split, ATTRS(split, "sections", "-1")),
                     INVALID_ARGUMENT, "split: sections is -1, not in [0, 2147483647]");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(split, ATTRS(split, "sections", "2", "indices", "[1]")),
                     INVALID_ARGUMENT, "split: give sections or indices, not both (2 and [1])");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(split, ATTRS(split, "indices", "[3, 2]")),
                     INVALID_ARGUMENT, "split: indices [3, 2] must be >= 0 and non-decreasing");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(split, ATTRS(split, "indices", "[-1, 2]")),
                     INVALID_ARGUMENT, "split: indices [-1, 2] must be >= 0 and non-decreasing");
  KILN_ASSERT_OK(kiln_op_attrs_validate(split, ATTRS(split, "indices", "[2, 2, 5]")));
  const kiln_op_t *slice = &kiln_op_strided_slice;
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(slice, ATTRS(slice, "begin", "[0, 1]", "end", "[2]")),
                     INVALID_ARGUMENT, "strided_slice: begin has 2 values but end has 1");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(slice, ATTRS(slice, "begin", "[0]", "end", "[2]", "strides", "[0]")),
      INVALID_ARGUMENT, "strided_slice: strides[0] is 0");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(slice, ATTRS(slice, "begin", "[0, 1]", "end", "[2, 3]",
                                                         "strides", "[1, 1, 1]")),
                     INVALID_ARGUMENT,
                     "strided_slice: strides has 3 values; give none or one per begin value (2)");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(slice, ATTRS(slice, "begin", "[0]", "end", "[2]", "axes", "[0, 1]")),
      INVALID_ARGUMENT, "strided_slice: axes has 2 values; give none or one per begin value (1)");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_take, ATTRS(&kiln_op_take, "mode", "\"raise\"")),
      INVALID_ARGUMENT, "take: mode \"raise\" is not one of clip, wrap, fast");
}

/* ---- concatenate ---- */

static void test_concatenate_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_concatenate;
  const kiln_type_t *out = NULL;
  const kiln_type_t *pair[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)),
                               ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 5))};
  KILN_ASSERT_OK(infer(op, ATTRS(op, "axis", "1"), 2, pair, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 8));
  KILN_ASSERT_OK(infer(op, ATTRS(op, "axis", "-1"), 2, pair, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 8));
  const kiln_type_t *three[] = {ttype(KILN_DTYPE_INT64, 2, SHAPE(1, 3)),
                                ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 3)),
                                ttype(KILN_DTYPE_INT64, 2, SHAPE(4, 3))};
  KILN_ASSERT_OK(infer(op, attrs_with(op, NULL), 3, three, &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(7, 3));
  KILN_ASSERT_OK(infer(op, attrs_with(op, NULL), 1, three, &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(1, 3));
  const kiln_type_t *rank1[] = {ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(0)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(5))};
  KILN_ASSERT_OK(infer(op, attrs_with(op, NULL), 2, rank1, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(5));
}

static void test_concatenate_type_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_concatenate;
  const kiln_type_t *out = NULL;
  const kiln_type_t *ranks[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)),
                                ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 1))};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, ranks, &out), INVALID_ARGUMENT,
                     "concatenate: input 1 (2, 3, 1) has rank 3 but input 0 (2, 3) has rank 2");
  const kiln_type_t *dtypes[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)),
                                 ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 3))};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, dtypes, &out), INVALID_ARGUMENT,
                     "concatenate: input 1 (2, 3) is int64 but input 0 (2, 3) is float32");
  const kiln_type_t *dims[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4)),
                               ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4)),
                               ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5))};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 3, dims, &out), INVALID_ARGUMENT,
                     "concatenate: input 2 (3, 5) differs from input 0 (2, 4) at dim 1 (the axis "
                     "is 0)");
  KILN_ASSERT_STATUS(infer(op, ATTRS(op, "axis", "2"), 2, dims, &out), INVALID_ARGUMENT,
                     "concatenate: axis 2 is outside [-2, 1] for data (2, 4)");
  const kiln_type_t *scalars[] = {ttype(KILN_DTYPE_FLOAT32, 0, NULL)};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 1, scalars, &out), INVALID_ARGUMENT,
                     "concatenate: axis 0 is outside [0, -1] for data ()");
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 0, NULL, &out), INVALID_ARGUMENT,
                     "concatenate: expected at least 1 inputs, got 0");
  const kiln_type_t *huge[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(INT64_MAX, 0)),
                               ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(1, 0))};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, huge, &out), INVALID_ARGUMENT,
                     "concatenate: axis 0 overflows int64 at input 1 (1, 0)");
}

static void test_concatenate_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_concatenate;
  kiln_tensor_t *pair[2] = {
      tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6}),
      tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 2), (float[]){-1, -2, -3, -4})};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(op, ATTRS(op, "axis", "1"), 2, pair, &out));
  assert_f32(out, (double[]){1, 2, 3, -1, -2, 4, 5, 6, -3, -4}, 10);
  kiln_tensor_release(out);
  kiln_tensor_release(pair[0]);
  kiln_tensor_release(pair[1]);
  kiln_tensor_t *three[3] = {tensor_of(KILN_DTYPE_INT64, 1, SHAPE(1), (int64_t[]){7}),
                             tensor_of(KILN_DTYPE_INT64, 1, SHAPE(0), NULL),
                             tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (int64_t[]){8, 9, -1})};
  KILN_ASSERT_OK(run(op, attrs_with(op, NULL), 3, three, &out));
  assert_i64(out, (int64_t[]){7, 8, 9, -1}, 4);
  kiln_tensor_release(out);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(three[i]);
  }
  /* (3, 1, 5) and (3, 4, 5) on axis 1, against loops. */
  kiln_tensor_t *odd[2] = {iota_f32(3, SHAPE(3, 1, 5), 0.0f), iota_f32(3, SHAPE(3, 4, 5), 100.0f)};
  KILN_ASSERT_OK(run(op, ATTRS(op, "axis", "-2"), 2, odd, &out));
  double expected[75];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int k = 0; k < 5; ++k) {
        expected[(i * 5 + j) * 5 + k] = j == 0 ? i * 5 + k : 100 + (i * 4 + j - 1) * 5 + k;
      }
    }
  }
  assert_f32(out, expected, 75);
  kiln_tensor_release(out);
  kiln_tensor_release(odd[0]);
  kiln_tensor_release(odd[1]);
}

static void test_concatenate_layout(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 32, 7, 7));
  const kiln_type_t *types[] = {type, type};
  const char *arriving[] = {"", "NCHW16c"};
  const char *required[2] = {NULL, NULL};
  const char *output = NULL;
  KILN_ASSERT_OK(layout_n(&kiln_op_concatenate, ATTRS(&kiln_op_concatenate, "axis", "1"), 2, types,
                          arriving, required, &output));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[1], "NCHW");
  assert_string_equal(output, "NCHW");
}

/* ---- split ---- */

static void assert_parts(const kiln_type_t *type, kiln_dtype_t dtype, int count, int ndim,
                         const int64_t *part_dims) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  assert_non_null(tuple);
  assert_int_equal(tuple->count, count);
  for (int i = 0; i < count; ++i) {
    assert_type(tuple->fields[i], dtype, ndim, part_dims + i * ndim);
  }
}

static void test_split_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_split;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "sections", "3"), data, &out));
  assert_parts(out, KILN_DTYPE_FLOAT32, 3, 2, SHAPE(2, 4, 2, 4, 2, 4));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "indices", "[1, 4]"), data, &out));
  assert_parts(out, KILN_DTYPE_FLOAT32, 3, 2, SHAPE(1, 4, 3, 4, 2, 4));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "indices", "[2, 2]"), data, &out));
  assert_parts(out, KILN_DTYPE_FLOAT32, 3, 2, SHAPE(2, 4, 0, 4, 4, 4));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "indices", "[0, 6]"), data, &out));
  assert_parts(out, KILN_DTYPE_FLOAT32, 3, 2, SHAPE(0, 4, 6, 4, 0, 4));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "sections", "2", "axis", "-1"), data, &out));
  assert_parts(out, KILN_DTYPE_FLOAT32, 2, 2, SHAPE(6, 2, 6, 2));
  KILN_ASSERT_OK(
      infer1(op, ATTRS(op, "sections", "1"), ttype(KILN_DTYPE_INT64, 1, SHAPE(5)), &out));
  assert_parts(out, KILN_DTYPE_INT64, 1, 1, SHAPE(5));
}

static void test_split_type_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_split;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 4));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "sections", "4"), data, &out), INVALID_ARGUMENT,
                     "split: axis 0 of data (6, 4) has size 6, which 4 sections do not divide");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "indices", "[2, 7]"), data, &out), INVALID_ARGUMENT,
                     "split: indices [2, 7] go beyond axis 0 of data (6, 4) (size 6)");
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), data, &out), INVALID_ARGUMENT,
                     "split: give sections (> 0) or indices to split data (6, 4)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "sections", "2", "axis", "2"), data, &out),
                     INVALID_ARGUMENT, "split: axis 2 is outside [-2, 1] for data (6, 4)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "sections", "2", "indices", "[3]"), data, &out),
                     INVALID_ARGUMENT, "split: give sections or indices, not both");
  const kiln_type_t *fields[] = {data};
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&kiln_op_test_arena, 1, fields, &tuple));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "sections", "2"), tuple, &out), INVALID_ARGUMENT,
                     "split: input 0 must be a tensor, not a tuple");
}

/* Runs split into one output per part of the inferred tuple. */
static kiln_status_t run_split(const void *attrs, kiln_tensor_t *input, int capacity,
                               kiln_tensor_t **outputs, int *out_count) {
  const kiln_type_t *in_type =
      ttype(kiln_tensor_dtype(input), kiln_tensor_ndim(input), kiln_tensor_shape(input));
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(infer1(&kiln_op_split, attrs, in_type, &type));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  assert_true(tuple->count <= capacity);
  for (int i = 0; i < tuple->count; ++i) {
    const kiln_tensor_type_t *part = kiln_type_as_tensor(tuple->fields[i]);
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), part->dtype, part->ndim, part->shape,
                                      &outputs[i]));
  }
  *out_count = tuple->count;
  kiln_kernel_args_t args = {&kiln_op_split, attrs, 1, &input, tuple->count, outputs};
  return kiln_op_reference_get(kiln_op_split.id)(&args);
}

static void test_split_kernel(void **state) {
  (void)state;
  kiln_tensor_t *in = iota_f32(2, SHAPE(3, 5), 0.0f);
  kiln_tensor_t *parts[4] = {NULL, NULL, NULL, NULL};
  int count = 0;
  KILN_ASSERT_OK(
      run_split(ATTRS(&kiln_op_split, "indices", "[1, 3]", "axis", "1"), in, 4, parts, &count));
  assert_int_equal(count, 3);
  assert_f32(parts[0], (double[]){0, 5, 10}, 3);
  assert_f32(parts[1], (double[]){1, 2, 6, 7, 11, 12}, 6);
  assert_f32(parts[2], (double[]){3, 4, 8, 9, 13, 14}, 6);
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(parts[i]);
  }
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(6), (int64_t[]){1, 2, 3, 4, 5, 6});
  KILN_ASSERT_OK(run_split(ATTRS(&kiln_op_split, "sections", "3"), in, 4, parts, &count));
  assert_i64(parts[0], (int64_t[]){1, 2}, 2);
  assert_i64(parts[1], (int64_t[]){3, 4}, 2);
  assert_i64(parts[2], (int64_t[]){5, 6}, 2);
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(parts[i]);
  }
  KILN_ASSERT_OK(run_split(ATTRS(&kiln_op_split, "indices", "[0, 0, 4]"), in, 4, parts, &count));
  assert_int_equal(count, 4);
  assert_int_equal(kiln_tensor_element_count(parts[0]), 0);
  assert_int_equal(kiln_tensor_element_count(parts[1]), 0);
  assert_i64(parts[2], (int64_t[]){1, 2, 3, 4}, 4);
  assert_i64(parts[3], (int64_t[]){5, 6}, 2);
  /* The kernel wants one output per part, each of the part's shape. */
  kiln_kernel_args_t args = {&kiln_op_split, ATTRS(&kiln_op_split, "sections", "3"), 1, &in, 1,
                             parts};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_split.id)(&args), INVALID_ARGUMENT,
                     "split: expected 3 outputs (one per part), got 1");
  args.num_outputs = 3;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_split.id)(&args), INVALID_ARGUMENT,
                     "split: output 0 is (0,) int64 but the inputs give (2,) int64");
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(parts[i]);
  }
  kiln_tensor_release(in);
}

/* ---- strided_slice ---- */

static void check_slice_1d(const char *begin, const char *end, const char *strides,
                           int64_t expected_count) {
  const kiln_op_t *op = &kiln_op_strided_slice;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "begin", begin, "end", end, "strides", strides),
                        ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(10)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(expected_count));
}

static void test_slice_types(void **state) {
  (void)state;
  check_slice_1d("[2]", "[8]", "[]", 6);
  check_slice_1d("[2]", "[8]", "[3]", 2);
  check_slice_1d("[-3]", "[1000]", "[1]", 3);
  check_slice_1d("[8]", "[2]", "[-2]", 3);
  check_slice_1d("[-1]", "[-11]", "[-1]", 10);
  check_slice_1d("[9223372036854775807]", "[-9223372036854775808]", "[-1]", 10);
  check_slice_1d("[5]", "[2]", "[1]", 0);
  check_slice_1d("[-100]", "[3]", "[1]", 3);
  check_slice_1d("[100]", "[-100]", "[-3]", 4);
  check_slice_1d("[0]", "[10]", "[9223372036854775807]", 1);
  const kiln_op_t *op = &kiln_op_strided_slice;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "begin", "[1]", "end", "[4]", "axes", "[1]"), data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(4, 3));
  KILN_ASSERT_OK(infer1(
      op, ATTRS(op, "begin", "[0, 1]", "end", "[5, 3]", "strides", "[2, 1]", "axes", "[-1, 0]"),
      data, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "begin", "[0]", "end", "[1]"),
                        ttype(KILN_DTYPE_INT64, 2, SHAPE(0, 3)), &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(0, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "begin", "[-1]", "end", "[0]", "strides", "[-1]"),
                        ttype(KILN_DTYPE_INT64, 2, SHAPE(0, 3)), &out));
  assert_type(out, KILN_DTYPE_INT64, 2, SHAPE(0, 3));
}

static void test_slice_type_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_strided_slice;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "begin", "[0, 0, 0]", "end", "[1, 1, 1]"), data, &out),
                     INVALID_ARGUMENT,
                     "strided_slice: begin has 3 values but data (4, 5) has rank 2");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "begin", "[0]", "end", "[1]", "axes", "[2]"), data, &out),
                     INVALID_ARGUMENT,
                     "strided_slice: axes[0] 2 is outside [-2, 1] for data (4, 5)");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "begin", "[0, 0]", "end", "[1, 1]", "axes", "[1, -1]"), data, &out),
      INVALID_ARGUMENT, "strided_slice: axes [1, -1] names dim 1 twice for data (4, 5)");
  KILN_ASSERT_STATUS(
      infer1(op, ATTRS(op, "begin", "[0]", "end", "[1]", "strides", "[0]"), data, &out),
      INVALID_ARGUMENT, "strided_slice: strides[0] is 0");
}

static void test_slice_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_strided_slice;
  kiln_tensor_t *in = iota_f32(2, SHAPE(4, 5), 0.0f);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      run1(op, ATTRS(op, "begin", "[1, 4]", "end", "[4, 0]", "strides", "[2, -2]"), in, &out));
  assert_f32(out, (double[]){9, 7, 19, 17}, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* (5, 7, 3): rows 4, 2, 0 (step -2), cols 1, 4 (step 3), depth all, against loops. */
  in = iota_f32(3, SHAPE(5, 7, 3), 0.5f);
  KILN_ASSERT_OK(
      run1(op, ATTRS(op, "begin", "[-1, 1]", "end", "[-6, 7]", "strides", "[-2, 3]"), in, &out));
  double expected[18];
  int n = 0;
  for (int i = 4; i >= 0; i -= 2) {
    for (int j = 1; j < 7; j += 3) {
      for (int k = 0; k < 3; ++k) {
        expected[n++] = 0.5 + (i * 7 + j) * 3 + k;
      }
    }
  }
  assert_int_equal(n, 18);
  assert_f32(out, expected, 18);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* int64: reverse all, a huge step that takes one element, and an empty slice. */
  in = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(5), (int64_t[]){1, 2, 3, 4, 5});
  KILN_ASSERT_OK(run1(op,
                      ATTRS(op, "begin", "[9223372036854775807]", "end", "[-9223372036854775808]",
                            "strides", "[-1]"),
                      in, &out));
  assert_i64(out, (int64_t[]){5, 4, 3, 2, 1}, 5);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(
      run1(op, ATTRS(op, "begin", "[4]", "end", "[-100]", "strides", "[-9223372036854775808]"), in,
           &out));
  assert_i64(out, (int64_t[]){5}, 1);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "begin", "[3]", "end", "[1]"), in, &out));
  assert_int_equal(kiln_tensor_element_count(out), 0);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* Rank 0 with no slicing is a copy. */
  in = tensor_of(KILN_DTYPE_FLOAT32, 0, NULL, (float[]){2.0f});
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &out));
  assert_f32(out, (double[]){2.0}, 1);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_slice_and_split_layouts(void **state) {
  (void)state;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 32, 7, 7));
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(&kiln_op_strided_slice,
                         ATTRS(&kiln_op_strided_slice, "begin", "[1]", "end", "[3]", "axes", "[2]"),
                         data, "NCHW16c", &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
  KILN_ASSERT_OK(layout1(&kiln_op_split, ATTRS(&kiln_op_split, "sections", "2", "axis", "1"), data,
                         "NHWC", &required, &output));
  assert_string_equal(required, "NHWC");
  assert_string_equal(output, "NHWC");
}

/* ---- take ---- */

static void test_take_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_take;
  const kiln_type_t *data = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 4));
  const kiln_type_t *out = NULL;
  const kiln_type_t *inputs[] = {data, ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 3))};
  KILN_ASSERT_OK(infer(op, attrs_with(op, NULL), 2, inputs, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  KILN_ASSERT_OK(infer(op, ATTRS(op, "axis", "1"), 2, inputs, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 3, SHAPE(5, 2, 3));
  inputs[1] = ttype(KILN_DTYPE_INT32, 0, NULL);
  KILN_ASSERT_OK(infer(op, ATTRS(op, "axis", "-1"), 2, inputs, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 1, SHAPE(5));
  inputs[0] = ttype(KILN_DTYPE_INT64, 1, SHAPE(3));
  inputs[1] = ttype(KILN_DTYPE_INT32, 1, SHAPE(7));
  KILN_ASSERT_OK(infer(op, attrs_with(op, NULL), 2, inputs, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(7));
}

static void test_take_type_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_take;
  const kiln_type_t *out = NULL;
  const kiln_type_t *inputs[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 4)),
                                 ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3))};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, inputs, &out), INVALID_ARGUMENT,
                     "take: indices (2, 3) must be int32 or int64, not float32");
  inputs[1] = ttype(KILN_DTYPE_INT64, 1, SHAPE(2));
  KILN_ASSERT_STATUS(infer(op, ATTRS(op, "axis", "2"), 2, inputs, &out), INVALID_ARGUMENT,
                     "take: axis 2 is outside [-2, 1] for data (5, 4)");
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 1, inputs, &out), INVALID_ARGUMENT,
                     "take: expected 2 inputs, got 1");
  inputs[0] = ttype(KILN_DTYPE_FLOAT32, 0, NULL);
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, inputs, &out), INVALID_ARGUMENT,
                     "take: axis 0 is outside [0, -1] for data ()");
  int64_t ones[32];
  for (int i = 0; i < 32; ++i) {
    ones[i] = 1;
  }
  inputs[0] = ttype(KILN_DTYPE_FLOAT32, 32, ones);
  inputs[1] = ttype(KILN_DTYPE_INT64, 2, SHAPE(1, 1));
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, inputs, &out), INVALID_ARGUMENT,
                     "taken at indices (1, 1) would have rank 33");
}

/* take on data (5,) = [10, 20, 30, 40, 50] with int64 indices. */
static kiln_status_t take_1d(const char *mode, const int64_t *indices, int64_t count,
                             kiln_tensor_t **out) {
  kiln_tensor_t *inputs[2] = {
      tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(5), (float[]){10, 20, 30, 40, 50}),
      tensor_of(KILN_DTYPE_INT64, 1, SHAPE(count), indices)};
  kiln_status_t status = run(&kiln_op_take, ATTRS(&kiln_op_take, "mode", mode), 2, inputs, out);
  kiln_tensor_release(inputs[0]);
  kiln_tensor_release(inputs[1]);
  return status;
}

static void test_take_modes(void **state) {
  (void)state;
  kiln_tensor_t *out = NULL;
  for (int m = 0; m < 3; ++m) {
    const char *mode = (const char *[]){"\"clip\"", "\"wrap\"", "\"fast\""}[m];
    KILN_ASSERT_OK(take_1d(mode, (int64_t[]){0, -1, 4, -5, 2}, 5, &out));
    assert_f32(out, (double[]){10, 50, 50, 10, 30}, 5);
    kiln_tensor_release(out);
  }
  const int64_t wild[] = {5, -6, 7, 12, INT64_MIN, INT64_MAX};
  KILN_ASSERT_OK(take_1d("\"clip\"", wild, 6, &out));
  assert_f32(out, (double[]){50, 10, 50, 50, 10, 50}, 6);
  kiln_tensor_release(out);
  /* INT64_MIN % 5 = -3 -> 2; INT64_MAX % 5 = 2. */
  KILN_ASSERT_OK(take_1d("\"wrap\"", wild, 6, &out));
  assert_f32(out, (double[]){10, 50, 30, 30, 30, 30}, 6);
  kiln_tensor_release(out);
  KILN_ASSERT_STATUS(take_1d("\"fast\"", wild, 6, &out), OUT_OF_RANGE,
                     "take: index 5 is out of range for axis 0 of size 5");
  KILN_ASSERT_STATUS(take_1d("\"fast\"", (int64_t[]){1, -6}, 2, &out), OUT_OF_RANGE,
                     "take: index -6 is out of range for axis 0 of size 5");
  assert_null(out);
}

static void test_take_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_take;
  /* (3, 4) on axis 1 with int32 indices [3, 0]. */
  kiln_tensor_t *inputs[2] = {iota_f32(2, SHAPE(3, 4), 0.0f),
                              tensor_of(KILN_DTYPE_INT32, 1, SHAPE(2), (int32_t[]){3, 0})};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(op, ATTRS(op, "axis", "1"), 2, inputs, &out));
  assert_f32(out, (double[]){3, 0, 7, 4, 11, 8}, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(inputs[1]);
  /* Axis 0 with (2, 2) indices: rows 2, 0, 1, 2. */
  inputs[1] = tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 2), (int64_t[]){2, 0, -2, -1});
  KILN_ASSERT_OK(run(op, attrs_with(op, NULL), 2, inputs, &out));
  assert_int_equal(kiln_tensor_ndim(out), 3);
  assert_f32(out, (double[]){8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 16);
  kiln_tensor_release(out);
  kiln_tensor_release(inputs[1]);
  /* A scalar index removes the axis. */
  inputs[1] = tensor_of(KILN_DTYPE_INT64, 0, NULL, (int64_t[]){-1});
  KILN_ASSERT_OK(run(op, ATTRS(op, "axis", "1"), 2, inputs, &out));
  assert_f32(out, (double[]){3, 7, 11}, 3);
  kiln_tensor_release(out);
  kiln_tensor_release(inputs[1]);
  kiln_tensor_release(inputs[0]);
  /* int64 data. */
  inputs[0] = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), (int64_t[]){INT64_MAX, 0, -9});
  inputs[1] = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(4), (int32_t[]){2, 2, 0, 1});
  KILN_ASSERT_OK(run(op, attrs_with(op, NULL), 2, inputs, &out));
  assert_i64(out, (int64_t[]){-9, -9, INT64_MAX, 0}, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(inputs[1]);
  kiln_tensor_release(inputs[0]);
  /* An empty axis has nothing to clip or wrap to; a bad index fails even
   * when the output is empty. */
  inputs[0] = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(0, 3), NULL);
  inputs[1] = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(1), (int64_t[]){0});
  KILN_ASSERT_STATUS(run(op, attrs_with(op, NULL), 2, inputs, &out), OUT_OF_RANGE,
                     "take: index 0 is out of range for axis 0 of size 0");
  kiln_tensor_release(inputs[0]);
  inputs[0] = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 0), NULL);
  KILN_ASSERT_STATUS(run(op, ATTRS(op, "axis", "1"), 2, inputs, &out), OUT_OF_RANGE,
                     "take: index 0 is out of range for axis 1 of size 0");
  kiln_tensor_release(inputs[1]);
  kiln_tensor_release(inputs[0]);
}

static void test_take_layout(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 32, 7, 7)),
                                ttype(KILN_DTYPE_INT64, 1, SHAPE(4))};
  const char *arriving[] = {"NCHW16c", "C"};
  const char *required[2] = {NULL, NULL};
  const char *output = NULL;
  KILN_ASSERT_OK(layout_n(&kiln_op_take, ATTRS(&kiln_op_take, "axis", "1"), 2, types, arriving,
                          required, &output));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[1], "");
  assert_string_equal(output, "NCHW");
  types[1] = ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 2));
  KILN_ASSERT_OK(layout_n(&kiln_op_take, ATTRS(&kiln_op_take, "axis", "1"), 2, types, arriving,
                          required, &output));
  assert_string_equal(output, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_patterns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attr_validation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concatenate_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concatenate_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concatenate_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concatenate_layout, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slice_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slice_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slice_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slice_and_split_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take_layout, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
