/*
 * Compute rules of the indexing operators (transform_index_compute.c)
 * against the reference kernels (kiln_compute_test.h): concatenate of
 * several inputs on negative axes, split by sections and by indices (one
 * output per part), strided_slice with negative strides, axes and begin/end
 * clamping, take in every mode with negative and out-of-range indices; a
 * golden lowered function and the error paths.
 */
#include <stdio.h>

#include "kiln_compute_test.h"
#include "tir/interp.h"

static void test_concatenate(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_concatenate;
  const kiln_type_t *three[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 2, 5)),
                                ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 7, 5)),
                                ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 1, 5))};
  check_compute_random(op, ATTRS(op, "axis", "-2"), 3, three, -2, 2);
  const kiln_type_t *rows[] = {ttype(KILN_DTYPE_INT32, 2, SHAPE(3, 17)),
                               ttype(KILN_DTYPE_INT32, 2, SHAPE(5, 17))};
  check_compute_random(op, ATTRS(op, "axis", "0"), 2, rows, -1000, 1000);
  const kiln_type_t *last[] = {ttype(KILN_DTYPE_BOOL, 2, SHAPE(3, 4)),
                               ttype(KILN_DTYPE_BOOL, 2, SHAPE(3, 13))};
  check_compute_random(op, ATTRS(op, "axis", "-1"), 2, last, 0, 1);
  const kiln_type_t *one = ttype(KILN_DTYPE_INT8, 1, SHAPE(19));
  check_compute_random(op, ATTRS(op, "axis", "0"), 1, &one, -100, 100);
}

/* The x86 schedule's cases: blocked chunks (NCHW8c on axis 1, rows of 8
 * lanes), NCHW channels with a row of 21 (a vector and a tail), and the
 * 16 inputs a kernel takes. */
static void test_concatenate_schedule(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_concatenate;
  const kiln_type_t *blocked[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 3, 5, 8)),
                                  ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 1, 3, 5, 8)),
                                  ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 3, 3, 5, 8))};
  check_compute_random(op, ATTRS(op, "axis", "1"), 3, blocked, -2, 2);
  const kiln_type_t *nchw[] = {ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 2, 21)),
                               ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 2, 21))};
  check_compute_random(op, ATTRS(op, "axis", "1"), 2, nchw, -2, 2);
  const kiln_type_t *many[16];
  for (int i = 0; i < 16; ++i) {
    many[i] = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1 + i % 3, 4, 6));
  }
  check_compute_random(op, ATTRS(op, "axis", "1"), 16, many, -2, 2);
}

static void test_split(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_split;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 9, 5));
  check_compute_random(op, ATTRS(op, "sections", "3", "axis", "1"), 1, &f32, -2, 2);
  check_compute_random(op, ATTRS(op, "sections", "1", "axis", "-1"), 1, &f32, -2, 2);
  const kiln_type_t *i8 = ttype(KILN_DTYPE_INT8, 3, SHAPE(3, 4, 11));
  check_compute_random(op, ATTRS(op, "indices", "[2, 5]", "axis", "-1"), 1, &i8, -100, 100);
  check_compute_random(op, ATTRS(op, "indices", "[1]", "axis", "0"), 1, &i8, -100, 100);
  check_compute_random(op, ATTRS(op, "indices", "[3, 10]", "axis", "2"), 1, &i8, -100, 100);
}

static void test_strided_slice(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_strided_slice;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(11, 13));
  check_compute_random(op, ATTRS(op, "begin", "[1, -1]", "end", "[7, -8]", "strides", "[2, -2]"), 1,
                       &f32, -2, 2);
  check_compute_random(
      op, ATTRS(op, "begin", "[-100, 100]", "end", "[100, -100]", "strides", "[3, -1]"), 1, &f32,
      -2, 2);
  check_compute_random(op, ATTRS(op, "begin", "[2]", "end", "[3]", "strides", "[1000]"), 1, &f32,
                       -2, 2);
  check_compute_random(
      op, ATTRS(op, "begin", "[5]", "end", "[4]", "strides", "[-1000000]", "axes", "[-1]"), 1, &f32,
      -2, 2);
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 3, SHAPE(5, 3, 7));
  check_compute_random(
      op, ATTRS(op, "begin", "[1, 6]", "end", "[3, 0]", "axes", "[2, 0]", "strides", "[1, -2]"), 1,
      &i32, -1000, 1000);
  check_compute_random(op, ATTRS(op, "begin", "[0, 1]", "end", "[4, 3]"), 1, &i32, -1000, 1000);
  check_compute_random(
      op, ATTRS(op, "begin", "[-1, -1, -1]", "end", "[-6, -4, -8]", "strides", "[-1, -1, -1]"), 1,
      &i32, -1000, 1000);
  const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 1, SHAPE(17));
  check_compute_random(op, ATTRS(op, "begin", "[16]", "end", "[-18]", "strides", "[-4]"), 1, &u8, 0,
                       255);
}

static void check_take(const char *mode, const char *axis, kiln_tensor_t *data,
                       kiln_tensor_t *indices) {
  const kiln_op_t *op = &kiln_op_take;
  char quoted[16];
  snprintf(quoted, sizeof(quoted), "\"%s\"", mode);
  kiln_tensor_t *inputs[] = {data, indices};
  check_compute(op, ATTRS(op, "mode", quoted, "axis", axis), 2, inputs);
}

static void test_take(void **state) {
  (void)state;
  kiln_tensor_t *data = random_tensor(KILN_DTYPE_FLOAT32, 3, SHAPE(5, 7, 3), -2, 2);
  /* Out of range both ways, negative, and in range. */
  const int32_t wild[] = {0, -1, 6, 7, -7, -8, 100, -100, 3, 13, -15, 2};
  kiln_tensor_t *i32 = tensor_of(KILN_DTYPE_INT32, 2, SHAPE(4, 3), wild);
  check_take("clip", "1", data, i32);
  check_take("wrap", "-2", data, i32);
  const int64_t wild64[] = {5, -6, 4, -1, 0, 9000000000LL, -9000000000LL};
  kiln_tensor_t *i64 = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(7), wild64);
  check_take("clip", "0", data, i64);
  check_take("wrap", "0", data, i64);
  const int64_t tame[] = {2, -1, 0, -3, 1, 2};
  kiln_tensor_t *fast = tensor_of(KILN_DTYPE_INT64, 3, SHAPE(1, 2, 3), tame);
  check_take("fast", "-1", data, fast);
  check_take("fast", "0", data, fast);
  /* Rank-0 indices wait for te/tensor.c to skip its memcpy of a NULL shape
   * (UBSan); one index of shape (1,) meanwhile. */
  const int32_t single[] = {-2};
  kiln_tensor_t *scalar = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(1), single);
  check_take("clip", "1", data, scalar);
  check_take("fast", "2", data, scalar);
  kiln_tensor_t *ints = random_tensor(KILN_DTYPE_INT16, 2, SHAPE(17, 2), -3000, 3000);
  check_take("wrap", "0", ints, i32);
  check_take("clip", "1", ints, i64);
  kiln_tensor_release(data);
  kiln_tensor_release(i32);
  kiln_tensor_release(i64);
  kiln_tensor_release(fast);
  kiln_tensor_release(scalar);
  kiln_tensor_release(ints);
}

/* fast mode (ONNX Gather) on an index out of range: the reference rejects
 * it, and so does the lowered function, by its index stage's assertion
 * (compiled code calls the same assertion's failure). */
static void test_take_fast_out_of_range(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_take;
  const void *attrs = ATTRS(op, "mode", "\"fast\"");
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(5)),
                                ttype(KILN_DTYPE_INT32, 1, SHAPE(2))};
  kiln_schedule_target_t target = {128};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_op_lower(op, attrs, 2, types, &target, &kiln_op_test_arena, "main", &func));
  kiln_tensor_t *data = random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(5), -2, 2);
  const int32_t bad[] = {1, 5};
  kiln_tensor_t *indices = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(2), bad);
  kiln_tensor_t *out = random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(2), -2, 2);
  kiln_tensor_t *args[] = {data, indices, out};
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), func, 3, args), INVALID_ARGUMENT,
                     "assertion failed: take: an index is out of range for axis 0 of size 5");
  kiln_tensor_t *outs[] = {out};
  kiln_kernel_args_t kernel = {op, attrs, 2, (kiln_tensor_t *const[]){data, indices}, 1, outs};
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&kernel), OUT_OF_RANGE,
                     "take: index 5 is out of range");
  kiln_tensor_release(data);
  kiln_tensor_release(indices);
  kiln_tensor_release(out);
}

static void test_golden_concatenate(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_concatenate;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(2)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(3))};
  const char *text = lowered_text(op, ATTRS(op, "axis", "0"), 2, types, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((2,), \"float32\"), p1: T.Buffer((3,), \"float32\"), "
            "T_concatenate: T.Buffer((5,), \"float32\")):\n"
            "    for i_outer in T.parallel(2):\n"
            "        for i_inner in T.vectorized(4):\n"
            "            if i_outer * 4 + i_inner < 5:\n"
            "                T_concatenate[i_outer * 4 + i_inner] = T.Select(i_outer * 4 + i_inner "
            "< 2, p0[T.min(i_outer * 4 + i_inner, 1)], p1[T.max(i_outer * 4 + i_inner - 2, 0)])\n");
}

/* The rule run directly on placeholders of `types`, with the inferred output type. */
static kiln_status_t compute_directly(const kiln_op_t *op, const void *attrs, int n,
                                      const kiln_type_t *const *types, const void *rule_attrs) {
  const kiln_type_t *out_type = NULL;
  KILN_RETURN_IF_ERROR(infer(op, attrs, n, types, &out_type));
  const kiln_te_tensor_t *inputs[32];
  for (int i = 0; i < n; ++i) {
    const kiln_tensor_type_t *type = kiln_type_as_tensor(types[i]);
    KILN_RETURN_IF_ERROR(kiln_te_placeholder(&kiln_op_test_arena, "p", type->ndim, type->shape,
                                             type->dtype, &inputs[i]));
  }
  kiln_compute_args_t args = {op, rule_attrs, &kiln_op_test_arena, n, inputs, out_type};
  kiln_compute_result_t result;
  return kiln_op_compute(&args, &result);
}

static void test_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_split;
  const kiln_type_t *wide = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(17));
  const void *seventeen = ATTRS(op, "sections", "17");
  KILN_ASSERT_STATUS(compute_directly(op, seventeen, 1, &wide, seventeen), UNIMPLEMENTED,
                     "split: 17 parts; a compute rule makes 1 to 16 outputs");
  const void *empty = ATTRS(op, "indices", "[2, 2]");
  KILN_ASSERT_STATUS(compute_directly(op, empty, 1, &wide, empty), UNIMPLEMENTED,
                     "split: part 1 is empty; tensor expressions need positive extents");
  op = &kiln_op_take;
  const kiln_type_t *types[] = {wide, ttype(KILN_DTYPE_INT32, 1, SHAPE(2))};
  KILN_ASSERT_STATUS(
      compute_directly(op, ATTRS(op, "mode", "\"clip\""), 2, types, ATTRS(op, "mode", "\"raise\"")),
      INVALID_ARGUMENT, "take: mode \"raise\" is not one of clip, wrap, fast");
  op = &kiln_op_concatenate;
  const kiln_type_t *many[17];
  for (int i = 0; i < 17; ++i) {
    many[i] = wide;
  }
  const void *axis = ATTRS(op, "axis", "0");
  KILN_ASSERT_STATUS(compute_directly(op, axis, 17, many, axis), UNIMPLEMENTED,
                     "concatenate: 17 inputs; a compute reads at most 16 tensors");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_concatenate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concatenate_schedule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strided_slice, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take, setup, teardown),
      cmocka_unit_test_setup_teardown(test_take_fast_out_of_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_golden_concatenate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
