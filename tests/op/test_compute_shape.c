/*
 * Compute rules of the shape operators (transform_shape_compute.c), lowered
 * with the default schedule and run on the loop-IR interpreter against the
 * reference kernels (kiln_compute_test.h): odd shapes, negative axes, every
 * attribute variant, float32 and integer/bool dtypes; cast's saturation
 * edges (NaN, infinities, values past the range) for every integer target;
 * a golden lowered function; the error paths; an allocation-failure sweep.
 */
#include <math.h>
#include <stdio.h>

#include "kiln_compute_test.h"

static void test_every_op_has_a_compute_rule(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {
      &kiln_op_reshape,       &kiln_op_transpose, &kiln_op_expand_dims,    &kiln_op_squeeze,
      &kiln_op_batch_flatten, &kiln_op_cast,      &kiln_op_tile,           &kiln_op_broadcast_to,
      &kiln_op_concatenate,   &kiln_op_split,     &kiln_op_strided_slice,  &kiln_op_take,
      &kiln_op_pad,           &kiln_op_resize2d,  &kiln_op_depth_to_space, &kiln_op_space_to_depth};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    assert_non_null(kiln_op_compute_get(ops[i]->id));
  }
}

static void test_reshape_family(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_reshape;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 5, 7));
  check_compute_random(op, ATTRS(op, "newshape", "[7, -1, 3]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "newshape", "[0, 35]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "newshape", "[105]"), 1, &f32, -2, 2);
  const kiln_type_t *i8 = ttype(KILN_DTYPE_INT8, 2, SHAPE(6, 17));
  check_compute_random(op, ATTRS(op, "newshape", "[3, 2, 1, 17]"), 1, &i8, -100, 100);
  const kiln_type_t *one = ttype(KILN_DTYPE_INT32, 2, SHAPE(1, 1));
  check_compute_random(op, ATTRS(op, "newshape", "[]"), 1, &one, -100, 100);
  /* Rank-0 inputs wait for te/tensor.c to skip its memcpy of a NULL shape (UBSan). */
  const kiln_type_t *single = ttype(KILN_DTYPE_BOOL, 1, SHAPE(1));
  check_compute_random(op, ATTRS(op, "newshape", "[1, 1, 1]"), 1, &single, 0, 1);

  op = &kiln_op_expand_dims;
  const kiln_type_t *f = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 3));
  check_compute_random(op, ATTRS(op, "axis", "-1", "num_newaxis", "2"), 1, &f, -2, 2);
  check_compute_random(op, ATTRS(op, "axis", "1"), 1, &f, -2, 2);
  const kiln_type_t *u16 = ttype(KILN_DTYPE_UINT16, 1, SHAPE(19));
  check_compute_random(op, ATTRS(op, "axis", "0", "num_newaxis", "3"), 1, &u16, 0, 60000);

  op = &kiln_op_squeeze;
  const kiln_type_t *ones = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 7, 1, 3));
  check_compute_random(op, ATTRS(op, "axis", "[-2]"), 1, &ones, -2, 2);
  check_compute_random(op, ATTRS(op, "axis", "[]"), 1, &ones, -2, 2);
  const kiln_type_t *i64 = ttype(KILN_DTYPE_INT64, 3, SHAPE(1, 1, 1));
  check_compute_random(op, ATTRS(op, "axis", "[]"), 1, &i64, -1e6, 1e6);

  op = &kiln_op_batch_flatten;
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 4, SHAPE(3, 5, 2, 7));
  check_compute_random(op, NULL, 1, &i32, -1000, 1000);
  const kiln_type_t *vec = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(13));
  check_compute_random(op, NULL, 1, &vec, -2, 2);
}

static void test_transpose(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_transpose;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 5, 7));
  check_compute_random(op, ATTRS(op, "axes", "[]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "axes", "[1, -1, 0]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "axes", "[0, 1, 2]"), 1, &f32, -2, 2);
  const kiln_type_t *i16 = ttype(KILN_DTYPE_INT16, 4, SHAPE(2, 3, 1, 17));
  check_compute_random(op, ATTRS(op, "axes", "[3, 0, 2, 1]"), 1, &i16, -3000, 3000);
  const kiln_type_t *b = ttype(KILN_DTYPE_BOOL, 2, SHAPE(11, 4));
  check_compute_random(op, ATTRS(op, "axes", "[]"), 1, &b, 0, 1);
}

static void check_cast(kiln_tensor_t *input, kiln_dtype_t to) {
  const kiln_op_t *op = &kiln_op_cast;
  char dtype[32];
  snprintf(dtype, sizeof(dtype), "\"%s\"", kiln_dtype_name(to));
  check_compute(op, ATTRS(op, "dtype", dtype), 1, &input);
}

/* The saturation edges of float -> int for every integer target, in float32 and float64. */
static void test_cast_float_to_int_saturates(void **state) {
  (void)state;
  const float values[] = {NAN,    INFINITY,      -INFINITY,      1e10f,    -1e10f,   2.7f,   -2.7f,
                          127.9f, -128.9f,       128.0f,         -129.0f,  255.5f,   256.0f, -0.5f,
                          -1.0f,  -0.99f,        32767.5f,       -32769.f, 65536.0f, 3e9f,   -3e9f,
                          4.3e9f, 2147483520.0f, -2147483648.0f, 9.3e18f,  -9.3e18f, 0.0f,   -0.0f,
                          1.0f,   100.25f,       65535.9f,       -65535.f};
  int64_t n = (int64_t)(sizeof(values) / sizeof(values[0]));
  double doubles[sizeof(values) / sizeof(values[0])];
  for (int64_t i = 0; i < n; ++i) {
    doubles[i] = values[i];
  }
  doubles[22] = 2147483647.0;
  doubles[23] = 2147483647.9;
  kiln_tensor_t *f32 = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(n), values);
  kiln_tensor_t *f64 = tensor_of(KILN_DTYPE_FLOAT64, 1, SHAPE(n), doubles);
  const kiln_dtype_t targets[] = {KILN_DTYPE_INT8,   KILN_DTYPE_INT16, KILN_DTYPE_INT32,
                                  KILN_DTYPE_INT64,  KILN_DTYPE_UINT8, KILN_DTYPE_UINT16,
                                  KILN_DTYPE_UINT32, KILN_DTYPE_BOOL};
  for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); ++i) {
    check_cast(f32, targets[i]);
    check_cast(f64, targets[i]);
  }
  kiln_tensor_release(f32);
  kiln_tensor_release(f64);
}

static void test_cast_pairs(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_cast;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 1, 29));
  check_compute_random(op, ATTRS(op, "dtype", "\"int32\""), 1, &f32, -1e3, 1e3);
  check_compute_random(op, ATTRS(op, "dtype", "\"int8\""), 1, &f32, -300, 300);
  check_compute_random(op, ATTRS(op, "dtype", "\"uint8\""), 1, &f32, -300, 300);
  check_compute_random(op, ATTRS(op, "dtype", "\"float64\""), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "dtype", "\"float32\""), 1, &f32, -2, 2);
  const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(37));
  check_compute_random(op, ATTRS(op, "dtype", "\"float32\""), 1, &f64, -1e30, 1e30);
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 2, SHAPE(5, 19));
  check_compute_random(op, ATTRS(op, "dtype", "\"float32\""), 1, &i32, -2e9, 2e9);
  check_compute_random(op, ATTRS(op, "dtype", "\"int8\""), 1, &i32, -2e9, 2e9);
  check_compute_random(op, ATTRS(op, "dtype", "\"uint16\""), 1, &i32, -2e9, 2e9);
  check_compute_random(op, ATTRS(op, "dtype", "\"int64\""), 1, &i32, -2e9, 2e9);
  check_compute_random(op, ATTRS(op, "dtype", "\"bool\""), 1, &i32, -2, 2);
  const kiln_type_t *i64 = ttype(KILN_DTYPE_INT64, 1, SHAPE(23));
  check_compute_random(op, ATTRS(op, "dtype", "\"bool\""), 1, &i64, -2, 2);
  check_compute_random(op, ATTRS(op, "dtype", "\"float64\""), 1, &i64, -1e15, 1e15);
  check_compute_random(op, ATTRS(op, "dtype", "\"int32\""), 1, &i64, -1e15, 1e15);
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 1, SHAPE(17));
  check_compute_random(op, ATTRS(op, "dtype", "\"int8\""), 1, &u8, 0, 255);
  check_compute_random(op, ATTRS(op, "dtype", "\"float32\""), 1, &u8, 0, 255);
  const kiln_type_t *u32 = ttype(KILN_DTYPE_UINT32, 1, SHAPE(17));
  check_compute_random(op, ATTRS(op, "dtype", "\"int32\""), 1, &u32, 0, 4e9);
  check_compute_random(op, ATTRS(op, "dtype", "\"float64\""), 1, &u32, 0, 4e9);
  const kiln_type_t *b = ttype(KILN_DTYPE_BOOL, 2, SHAPE(3, 7));
  check_compute_random(op, ATTRS(op, "dtype", "\"float32\""), 1, &b, 0, 1);
  check_compute_random(op, ATTRS(op, "dtype", "\"int16\""), 1, &b, 0, 1);
  check_compute_random(op, ATTRS(op, "dtype", "\"bool\""), 1, &b, 0, 1);
  const kiln_type_t *single = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(1));
  check_compute_random(op, ATTRS(op, "dtype", "\"int16\""), 1, &single, -100, 100);
}

static void test_tile(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_tile;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 1, 5));
  check_compute_random(op, ATTRS(op, "reps", "[2, 1, 3, 2]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "reps", "[3]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "reps", "[]"), 1, &f32, -2, 2);
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 2, SHAPE(7, 2));
  check_compute_random(op, ATTRS(op, "reps", "[1, 5]"), 1, &i32, -1000, 1000);
  const kiln_type_t *b = ttype(KILN_DTYPE_BOOL, 1, SHAPE(3));
  check_compute_random(op, ATTRS(op, "reps", "[2, 7]"), 1, &b, 0, 1);
}

static void test_broadcast_to(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_broadcast_to;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 1, 5));
  check_compute_random(op, ATTRS(op, "shape", "[2, 3, 7, 5]"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "shape", "[7, 1]"), 1, &f32, -2, 2);
  const kiln_type_t *single = ttype(KILN_DTYPE_INT8, 1, SHAPE(1));
  check_compute_random(op, ATTRS(op, "shape", "[13]"), 1, &single, -100, 100);
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 2, SHAPE(1, 17));
  check_compute_random(op, ATTRS(op, "shape", "[3, 17]"), 1, &u8, 0, 255);
}

static void test_golden_transpose(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_transpose;
  const kiln_type_t *t = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const char *text = lowered_text(op, ATTRS(op, "axes", "[]"), 1, &t, 128);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((2, 3), \"float32\"), T_transpose: T.Buffer((3, 2), \"float32\")):\n"
      "    for i_j_fused_outer in T.parallel(2):\n"
      "        for i_j_fused_inner in T.vectorized(4):\n"
      "            if i_j_fused_outer * 4 + i_j_fused_inner < 6:\n"
      "                T_transpose[i_j_fused_outer * 2 + i_j_fused_inner // 2, i_j_fused_inner % "
      "2] = p0[i_j_fused_inner % 2, i_j_fused_outer * 2 + i_j_fused_inner // 2]\n");
}

/* The rule run directly, with the inferred output type. */
static kiln_status_t compute_directly(const kiln_op_t *op, const void *attrs,
                                      const kiln_type_t *input_type) {
  const kiln_type_t *out_type = NULL;
  KILN_RETURN_IF_ERROR(infer(op, attrs, 1, &input_type, &out_type));
  const kiln_tensor_type_t *type = kiln_type_as_tensor(input_type);
  const kiln_te_tensor_t *input = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_placeholder(&kiln_op_test_arena, "p0", type->ndim, type->shape, type->dtype, &input));
  kiln_compute_args_t args = {op, attrs, &kiln_op_test_arena, 1, &input, out_type};
  kiln_compute_result_t result;
  return kiln_op_compute(&args, &result);
}

static void test_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_cast;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  /* float to uint64 saturates at run time; int to uint64 is a plain cast. */
  KILN_ASSERT_OK(compute_directly(op, ATTRS(op, "dtype", "\"uint64\""), f32));
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 1, SHAPE(4));
  KILN_ASSERT_OK(compute_directly(op, ATTRS(op, "dtype", "\"uint64\""), i32));
  const kiln_type_t *huge = ttype(KILN_DTYPE_INT8, 2, SHAPE(65536, 65536));
  op = &kiln_op_reshape;
  KILN_ASSERT_STATUS(compute_directly(op, ATTRS(op, "newshape", "[-1]"), huge), UNIMPLEMENTED,
                     "reshape: 4294967296 elements; the compute rule's flat index is int32");
}

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 0);
  const kiln_op_t *op = &kiln_op_cast;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5));
  kiln_schedule_target_t target = {256};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status =
      kiln_op_lower(op, ATTRS(op, "dtype", "\"int8\""), 1, &type, &target, &arena, "main", &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_lower_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_op_has_a_compute_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_family, setup, teardown),
      cmocka_unit_test_setup_teardown(test_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_float_to_int_saturates, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_pairs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tile, setup, teardown),
      cmocka_unit_test_setup_teardown(test_broadcast_to, setup, teardown),
      cmocka_unit_test_setup_teardown(test_golden_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lower_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
