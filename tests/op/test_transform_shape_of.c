/*
 * Tests of shape_of (transform_shape_of.c): the attribute defaults, the
 * relation on static and symbolic inputs (the output's length from the
 * rank alone, start and end clamped and counted from the back as ONNX
 * Shape does), the reference kernel on a run-time shape, and the compute
 * rule against the kernel on every path (kiln_compute_test.h), and an
 * empty range (the kernel's (0) output; the compute rule's refusal).
 */
#include "kiln_compute_test.h"
#include "kiln_test.h"

static void test_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_shape_of;
  assert_defaults(op, "start=0, end=2147483647");
  const void *all = ATTRS(op, "start", "0");
  const kiln_type_t *out = NULL;
  const kiln_type_t *x = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 5, 7));
  KILN_ASSERT_OK(infer1(op, all, x, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(3));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "start", "-2"), x, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(2));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "start", "1", "end", "-1"), x, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(1));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "start", "5", "end", "-9"), x, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(0));
  const kiln_dim_var_t *n = NULL;
  KILN_ASSERT_OK(kiln_dim_var_create(&kiln_op_test_arena, "n", -1, &n));
  const kiln_type_t *symbolic = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_type_create_symbolic(&kiln_op_test_arena, KILN_DTYPE_FLOAT32, 2, SHAPE(-1, 4),
                                       (const kiln_dim_var_t *const[]){n, NULL}, &symbolic));
  KILN_ASSERT_OK(
      kiln_op_infer_type(op, ATTRS(op, "start", "0"), 1, &symbolic, &kiln_op_test_arena, &out));
  assert_type(out, KILN_DTYPE_INT64, 1, SHAPE(2));
}

static void test_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_shape_of;
  kiln_tensor_t *x = tensor_zeros(KILN_DTYPE_UINT8, 4, SHAPE(3, 1, 6, 2));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, ATTRS(op, "start", "0"), x, &out));
  assert_i64(out, (const int64_t[]){3, 1, 6, 2}, 4);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(op, ATTRS(op, "start", "-3", "end", "3"), x, &out));
  assert_i64(out, (const int64_t[]){1, 6}, 2);
  kiln_tensor_release(out);
  /* The output must have the length the input's rank gives. */
  out = tensor_zeros(KILN_DTYPE_INT64, 1, SHAPE(3));
  kiln_kernel_args_t args = {op, ATTRS(op, "start", "0"), 1, &x, 1, &out};
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "shape_of: the output must be (4) "
                     "int64");
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

static void test_compute(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_shape_of;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(3, 1, 7, 2));
  check_compute_random(op, ATTRS(op, "start", "0"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "start", "1", "end", "-1"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "start", "3"), 1, &f32, -2, 2);
}

/* An empty range: the kernel gives a (0) output; the compute rule refuses
 * it (the loop IR has no extent 0), saying why. */
static void test_empty(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_shape_of;
  const void *attrs = ATTRS(op, "start", "2", "end", "1");
  kiln_tensor_t *x = tensor_zeros(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, attrs, x, &out));
  assert_int_equal(kiln_tensor_ndim(out), 1);
  assert_int_equal(kiln_tensor_shape(out)[0], 0);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  const kiln_te_tensor_t *data = NULL;
  KILN_ASSERT_OK(
      kiln_te_placeholder(&kiln_op_test_arena, "p0", 2, SHAPE(3, 4), KILN_DTYPE_FLOAT32, &data));
  kiln_compute_args_t args = {op, attrs, &kiln_op_test_arena, 1, &data, NULL};
  kiln_compute_result_t result;
  KILN_ASSERT_STATUS(kiln_op_compute_get(op->id)(&args, &result), UNIMPLEMENTED,
                     "shape_of: no dims in [start, end) of a rank-2 input: an empty output has no "
                     "compute rule");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compute, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
