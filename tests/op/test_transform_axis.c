/*
 * Tests of cumsum and topk (op/transform_axis.c): attribute defaults and
 * validation, every type-relation error (topk's tuple type included), layout
 * rules, and the reference kernels on the examples of the ONNX CumSum and
 * TopK tests (numbers written out by hand), exclusive and reverse sums,
 * accumulation in double, wrapping integers, ties (the smaller index first),
 * NaN, integers beyond 2^53 and the kernel's checks of its two outputs.
 */
#include <math.h>
#include <string.h>

#include "base/arena.h"
#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/impl.h"
#include "op/op.h"

#define F32 KILN_DTYPE_FLOAT32
#define F64 KILN_DTYPE_FLOAT64
#define I64 KILN_DTYPE_INT64

/* ---- attributes ---- */

static void test_defaults_and_patterns(void **state) {
  (void)state;
  assert_defaults(&kiln_op_cumsum, "axis=0, exclusive=False, reverse=False");
  assert_defaults(&kiln_op_topk, "k=1, axis=-1, largest=True, sorted=True");
  assert_int_equal(kiln_op_cumsum.pattern, KILN_OP_PATTERN_OPAQUE);
  assert_int_equal(kiln_op_topk.pattern, KILN_OP_PATTERN_OPAQUE);
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", "-1")),
                     INVALID_ARGUMENT, "topk: k is -1; it must be >= 0");
}

/* ---- cumsum ---- */

static void test_cumsum_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_cumsum;
  const kiln_type_t *out = NULL;
  const kiln_type_t *data = ttype(F64, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "-1"), data, &out));
  assert_type(out, F64, 2, SHAPE(2, 3));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "2"), data, &out), INVALID_ARGUMENT,
                     "cumsum: axis 2 is outside [-2, 1] for data (2, 3)");
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), ttype(F32, 0, NULL), &out), INVALID_ARGUMENT,
                     "cumsum: axis 0 is outside [0, -1] for data ()");
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_BOOL, 1, SHAPE(3)), &out),
                     INVALID_ARGUMENT, "cumsum: data (3,) must be numbers, not bool");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(op, ATTRS(op, "axis", "1"), ttype(F32, 4, SHAPE(1, 4, 2, 2)), "NCHW4c",
                         &required, &output));
  assert_string_equal(required, "NCHW");
  assert_string_equal(output, "NCHW");
}

/* cumsum of `count` float64 values with the given attrs, compared exactly. */
static void check_cumsum_f64(const void *attrs, int ndim, const int64_t *shape, const double *in,
                             const double *expected, int64_t count) {
  kiln_tensor_t *data = tensor_of(F64, ndim, shape, in);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_cumsum, attrs, data, &out));
  assert_memory_equal(kiln_tensor_data(out), expected, (size_t)count * sizeof(double));
  kiln_tensor_release(out);
  kiln_tensor_release(data);
}

static void test_cumsum_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_cumsum;
  /* ONNX test_cumsum_1d and its exclusive, reverse and reverse-exclusive forms (float64) */
  const double five[] = {1, 2, 3, 4, 5};
  check_cumsum_f64(attrs_with(op, NULL), 1, SHAPE(5), five, (const double[]){1, 3, 6, 10, 15}, 5);
  check_cumsum_f64(ATTRS(op, "exclusive", "True"), 1, SHAPE(5), five,
                   (const double[]){0, 1, 3, 6, 10}, 5);
  check_cumsum_f64(ATTRS(op, "reverse", "True"), 1, SHAPE(5), five,
                   (const double[]){15, 14, 12, 9, 5}, 5);
  check_cumsum_f64(ATTRS(op, "exclusive", "True", "reverse", "True"), 1, SHAPE(5), five,
                   (const double[]){14, 12, 9, 5, 0}, 5);
  /* test_cumsum_2d_axis_0, _axis_1 and _negative_axis */
  const double six[] = {1, 2, 3, 4, 5, 6};
  check_cumsum_f64(attrs_with(op, NULL), 2, SHAPE(2, 3), six, (const double[]){1, 2, 3, 5, 7, 9},
                   6);
  check_cumsum_f64(ATTRS(op, "axis", "1"), 2, SHAPE(2, 3), six, (const double[]){1, 3, 6, 4, 9, 15},
                   6);
  check_cumsum_f64(ATTRS(op, "axis", "-1"), 2, SHAPE(2, 3), six,
                   (const double[]){1, 3, 6, 4, 9, 15}, 6);
  /* float32 accumulates in double: 2^24 + 1 + 1 is 2^24 + 2, which a float sum misses */
  kiln_tensor_t *in = tensor_of(F32, 1, SHAPE(3), (float[]){16777216.0f, 1, 1});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((float[]){16777216.0f, 16777216.0f, 16777218.0f}),
                      3 * sizeof(float));
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* integers wrap at their width */
  in = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(2), (int32_t[]){INT32_MAX, 1});
  KILN_ASSERT_OK(run1(op, attrs_with(op, NULL), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((int32_t[]){INT32_MAX, INT32_MIN}), 8);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  in = tensor_of(KILN_DTYPE_UINT8, 1, SHAPE(3), (uint8_t[]){200, 100, 1});
  KILN_ASSERT_OK(run1(op, ATTRS(op, "reverse", "True"), in, &out));
  assert_memory_equal(kiln_tensor_data(out), ((uint8_t[]){45, 101, 1}), 3);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  /* an odd (3, 4, 5) int64 along axis 1, against loops */
  int64_t cube[60];
  int64_t expected[60];
  for (int i = 0; i < 60; ++i) {
    cube[i] = (i * 37) % 23 - 11;
  }
  for (int a = 0; a < 3; ++a) {
    for (int c = 0; c < 5; ++c) {
      int64_t sum = 0;
      for (int b = 0; b < 4; ++b) {
        expected[(a * 4 + b) * 5 + c] = sum;
        sum += cube[(a * 4 + b) * 5 + c];
      }
    }
  }
  in = tensor_of(I64, 3, SHAPE(3, 4, 5), cube);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", "1", "exclusive", "True"), in, &out));
  assert_i64(out, expected, 60);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

/* ---- topk ---- */

/* Runs topk into outputs of the relation's tuple type. */
static kiln_status_t run_topk(const void *attrs, kiln_tensor_t *data, kiln_tensor_t **values,
                              kiln_tensor_t **indices) {
  const kiln_type_t *input =
      ttype(kiln_tensor_dtype(data), kiln_tensor_ndim(data), kiln_tensor_shape(data));
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(infer1(&kiln_op_topk, attrs, input, &type));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  assert_non_null(tuple);
  assert_int_equal(tuple->count, 2);
  kiln_tensor_t *outputs[2];
  for (int i = 0; i < 2; ++i) {
    const kiln_tensor_type_t *field = kiln_type_as_tensor(tuple->fields[i]);
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), field->dtype, field->ndim,
                                      field->shape, &outputs[i]));
  }
  kiln_kernel_args_t args = {&kiln_op_topk, attrs, 1, &data, 2, outputs};
  *values = outputs[0];
  *indices = outputs[1];
  return kiln_op_reference_get(kiln_op_topk.id)(&args);
}

static void check_topk(const void *attrs, int ndim, const int64_t *shape, const float *in,
                       const double *values, const int64_t *indices, int64_t count) {
  kiln_tensor_t *data = tensor_of(F32, ndim, shape, in);
  kiln_tensor_t *got_values = NULL;
  kiln_tensor_t *got_indices = NULL;
  KILN_ASSERT_OK(run_topk(attrs, data, &got_values, &got_indices));
  assert_f32(got_values, values, count);
  assert_i64(got_indices, indices, count);
  kiln_tensor_release(got_values);
  kiln_tensor_release(got_indices);
  kiln_tensor_release(data);
}

static void test_topk_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_topk;
  const kiln_type_t *out = NULL;
  const kiln_type_t *data = ttype(F32, 2, SHAPE(3, 4));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "k", "3", "axis", "1"), data, &out));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(out);
  assert_non_null(tuple);
  assert_int_equal(tuple->count, 2);
  assert_type(tuple->fields[0], F32, 2, SHAPE(3, 3));
  assert_type(tuple->fields[1], I64, 2, SHAPE(3, 3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "k", "0", "axis", "0"), data, &out));
  assert_type(kiln_type_as_tuple(out)->fields[1], I64, 2, SHAPE(0, 4));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "k", "5"), data, &out), INVALID_ARGUMENT,
                     "topk: k is 5; it must be in [0, 4], axis 1 of data (3, 4)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "-3"), data, &out), INVALID_ARGUMENT,
                     "topk: axis -3 is outside [-2, 1] for data (3, 4)");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "k", "-2"), data, &out), INVALID_ARGUMENT,
                     "topk: k is -2; it must be >= 0");
  const char *required = NULL;
  const char *output = NULL;
  KILN_ASSERT_OK(layout1(op, attrs_with(op, NULL), data, "NC", &required, &output));
  assert_string_equal(required, "NC");
}

static void test_topk_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_topk;
  /* ONNX test_top_k and test_top_k_negative_axis */
  const float twelve[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const double top_values[] = {3, 2, 1, 7, 6, 5, 11, 10, 9};
  const int64_t top_indices[] = {3, 2, 1, 3, 2, 1, 3, 2, 1};
  check_topk(ATTRS(op, "k", "3", "axis", "1"), 2, SHAPE(3, 4), twelve, top_values, top_indices, 9);
  check_topk(ATTRS(op, "k", "3"), 2, SHAPE(3, 4), twelve, top_values, top_indices, 9);
  /* test_top_k_smallest */
  const float mixed[] = {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8};
  check_topk(ATTRS(op, "k", "3", "largest", "False"), 2, SHAPE(3, 4), mixed,
             (const double[]){0, 1, 2, 4, 5, 6, 8, 9, 10},
             (const int64_t[]){0, 1, 2, 0, 1, 2, 3, 2, 1}, 9);
  /* ties: the smaller index first, either way */
  const float ties[] = {3, 1, 3, 2, 3};
  check_topk(ATTRS(op, "k", "3"), 1, SHAPE(5), ties, (const double[]){3, 3, 3},
             (const int64_t[]){0, 2, 4}, 3);
  check_topk(ATTRS(op, "k", "2", "largest", "False"), 1, SHAPE(5), ties, (const double[]){1, 2},
             (const int64_t[]){1, 3}, 2);
  /* NaN above every number */
  const float nan[] = {1, NAN, 5};
  check_topk(ATTRS(op, "k", "2"), 1, SHAPE(3), nan, (const double[]){NAN, 5},
             (const int64_t[]){1, 2}, 2);
  check_topk(ATTRS(op, "k", "3", "largest", "False"), 1, SHAPE(3), nan, (const double[]){1, 5, NAN},
             (const int64_t[]){0, 2, 1}, 3);
  /* axis 0 of an odd (3, 5), against a selection loop here */
  float grid[15];
  for (int i = 0; i < 15; ++i) {
    grid[i] = (float)((i * 7) % 5) - (float)(i / 5);
  }
  double values[10];
  int64_t indices[10];
  for (int c = 0; c < 5; ++c) {
    bool used[3] = {false, false, false};
    for (int j = 0; j < 2; ++j) {
      int best = -1;
      for (int r = 0; r < 3; ++r) {
        if (!used[r] && (best < 0 || grid[r * 5 + c] > grid[best * 5 + c])) {
          best = r;
        }
      }
      used[best] = true;
      values[j * 5 + c] = grid[best * 5 + c];
      indices[j * 5 + c] = best;
    }
  }
  check_topk(ATTRS(op, "k", "2", "axis", "0"), 2, SHAPE(3, 5), grid, values, indices, 10);
  /* int64 beyond 2^53 and uint64 beyond INT64_MAX order exactly */
  const int64_t big = INT64_C(1) << 60;
  kiln_tensor_t *data = tensor_of(I64, 1, SHAPE(3), (int64_t[]){big, big + 1, big - 1});
  kiln_tensor_t *got_values = NULL;
  kiln_tensor_t *got_indices = NULL;
  KILN_ASSERT_OK(run_topk(ATTRS(op, "k", "3"), data, &got_values, &got_indices));
  assert_i64(got_values, (int64_t[]){big + 1, big, big - 1}, 3);
  assert_i64(got_indices, (int64_t[]){1, 0, 2}, 3);
  kiln_tensor_release(got_values);
  kiln_tensor_release(got_indices);
  kiln_tensor_release(data);
  data = tensor_of(KILN_DTYPE_UINT64, 1, SHAPE(2), (uint64_t[]){1, UINT64_MAX});
  KILN_ASSERT_OK(run_topk(attrs_with(op, NULL), data, &got_values, &got_indices));
  assert_memory_equal(kiln_tensor_data(got_values), ((uint64_t[]){UINT64_MAX}), 8);
  assert_i64(got_indices, (int64_t[]){1}, 1);
  kiln_tensor_release(got_values);
  kiln_tensor_release(got_indices);
  kiln_tensor_release(data);
}

static void test_topk_kernel_checks(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_topk;
  const void *attrs = ATTRS(op, "k", "2");
  kiln_tensor_t *data = tensor_of(F32, 1, SHAPE(3), (float[]){1, 2, 3});
  kiln_tensor_t *values = NULL;
  kiln_tensor_t *wrong = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), F32, 1, SHAPE(2), &values));
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), F32, 1, SHAPE(2), &wrong));
  kiln_tensor_t *outputs[] = {values, wrong};
  kiln_kernel_args_t args = {op, attrs, 1, &data, 1, outputs};
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "topk: expected 2 outputs (values, indices), got 1");
  args.num_outputs = 2;
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "topk: output 1 is (2,) float32 but the inputs give (2,) int64");
  args.attrs = ATTRS(op, "k", "4");
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "topk: k is 4; it must be in [0, 3], axis 0 of data (3,)");
  kiln_tensor_release(values);
  kiln_tensor_release(wrong);
  kiln_tensor_release(data);
}

/* The tuple relation with every allocation failing in turn: an error, never a leak. */
static kiln_status_t topk_relation_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 64);
  const kiln_type_t *data = NULL;
  const kiln_type_t *out = NULL;
  kiln_status_t status = kiln_tensor_type_create(&arena, F32, 2, SHAPE(3, 4), &data);
  if (!status) {
    status =
        kiln_op_infer_type(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", "2"), 1, &data, &arena, &out);
  }
  if (!status) {
    assert_int_equal(kiln_type_as_tuple(out)->count, 2);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_topk_relation_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(topk_relation_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_patterns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cumsum_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cumsum_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_kernel_checks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_relation_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
