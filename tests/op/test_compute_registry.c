/*
 * The compute-rule driver and the default CPU schedule (op/compute.h):
 * every registry operator has a compute rule; the driver's errors (no
 * rule, a rule that builds the wrong shape or count, missing attributes, a
 * tuple input); the
 * default schedule's loop structure for a reduction (parallel data loop,
 * serial reduce loop), for an extent smaller than a vector (parallel only),
 * for a rank-0 output and for vector widths by dtype.
 */
#include <string.h>

#include "kiln_compute_test.h"
#include "op/control_attrs.h"

static void test_every_operator_has_a_compute_rule(void **state) {
  (void)state;
  for (int id = 0; id < kiln_op_count(); ++id) {
    const kiln_op_t *op = kiln_op_get((kiln_op_id_t)id);
    if (kiln_op_is_control(op)) { /* evaluated by the interpreter (op/control.c) */
      assert_null(kiln_op_compute_get(op->id));
      assert_null(kiln_op_reference_get(op->id));
      continue;
    }
    if (!kiln_op_compute_get(op->id)) {
      fail_msg("%s has no compute rule", op->name);
    }
  }
}

static kiln_status_t wrong_shape(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  out_result->num_outputs = 1;
  out_result->outputs[0] = args->inputs[0]; /* float32, where the type says int32 */
  return KILN_OK;
}

static kiln_status_t two_outputs(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  out_result->num_outputs = 2;
  out_result->outputs[0] = out_result->outputs[1] = args->inputs[0];
  return KILN_OK;
}

/* Compute args of `op` on one placeholder of type `input` (p0), whose
 * output type is `output`. */
static kiln_compute_args_t one_input_args(const kiln_op_t *op, const void *attrs,
                                          const kiln_type_t *input, const kiln_type_t *output,
                                          const kiln_te_tensor_t **p0) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(input);
  KILN_ASSERT_OK(kiln_te_placeholder(&kiln_op_test_arena, "p0", tensor->ndim, tensor->shape,
                                     tensor->dtype, p0));
  kiln_compute_args_t args = {op, attrs, &kiln_op_test_arena, 1, p0, output};
  return args;
}

static void test_driver_errors(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *t = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const kiln_te_tensor_t *p0 = NULL;
  kiln_compute_result_t result;
  kiln_compute_args_t relu = one_input_args(&kiln_op_relu, NULL, t, t, &p0);
  KILN_ASSERT_STATUS(kiln_op_compute_with(NULL, &relu, &result), UNIMPLEMENTED,
                     "nn.relu: the operator has no compute rule");
  KILN_ASSERT_OK(kiln_op_compute(&relu, &result));
  assert_int_equal(result.num_outputs, 1);
  /* A rule whose output is not the inferred type: a placeholder of the
   * right shape but the wrong dtype (cast's rule returning its input). */
  void *attrs = ATTRS(&kiln_op_cast, "dtype", "\"int32\"");
  kiln_compute_args_t cast =
      one_input_args(&kiln_op_cast, attrs, t, ttype(KILN_DTYPE_INT32, 2, SHAPE(2, 3)), &p0);
  KILN_ASSERT_STATUS(kiln_op_compute_with(wrong_shape, &cast, &result), INTERNAL,
                     "cast: the compute rule's output 0 (p0) is not the inferred int32");
  KILN_ASSERT_STATUS(kiln_op_compute_with(two_outputs, &relu, &result), INTERNAL,
                     "nn.relu: the compute rule made 2 outputs, the type has 1");
  KILN_ASSERT_STATUS(
      kiln_op_lower(&kiln_op_sum, NULL, 1, &t, &target, &kiln_op_test_arena, "f", &func),
      INVALID_ARGUMENT, "sum: attributes are missing");
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&kiln_op_test_arena, 1, &t, &tuple));
  KILN_ASSERT_STATUS(
      kiln_op_lower(&kiln_op_relu, NULL, 1, &tuple, &target, &kiln_op_test_arena, "f", &func),
      INVALID_ARGUMENT, "nn.relu");
}

static void test_default_schedule_reduction(void **state) {
  (void)state;
  const kiln_type_t *t = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 5));
  void *attrs = ATTRS(&kiln_op_sum, "axis", "[2]");
  assert_string_equal(
      lowered_text(&kiln_op_sum, attrs, 1, &t, 512),
      "@T.prim_func\n"
      "def main(p0: T.Buffer((2, 3, 5), \"float32\"), T_sum: T.Buffer((2, 3), \"float32\")):\n"
      "    T_sum_acc = T.decl_buffer((2, 3), \"float64\", scope=\"global\")\n"
      "    for i_j_fused in T.parallel(6):\n"
      "        T_sum_acc[i_j_fused // 3, i_j_fused % 3] = T.float64(0.0)\n"
      "        for k0 in T.serial(5):\n"
      "            T_sum_acc[i_j_fused // 3, i_j_fused % 3] = T_sum_acc[i_j_fused // 3, i_j_fused "
      "% 3] + T.Cast(\"float64\", p0[i_j_fused // 3, i_j_fused % 3, k0])\n"
      "    for i_j_fused in T.serial(6):\n"
      "        T_sum[i_j_fused // 3, i_j_fused % 3] = T.Cast(\"float32\", T_sum_acc[i_j_fused // "
      "3, i_j_fused % 3])\n");
  check_compute_random(&kiln_op_sum, attrs, 1, &t, -1.0, 1.0);
}

static void test_default_schedule_small_and_rank0(void **state) {
  (void)state;
  const kiln_type_t *small = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(5));
  assert_string_equal(
      lowered_text(&kiln_op_relu, NULL, 1, &small, 512),
      "@T.prim_func\n"
      "def main(p0: T.Buffer((5,), \"float32\"), T_relu: T.Buffer((5,), "
      "\"float32\")):\n"
      "    for i in T.serial(5):\n"
      "        T_relu[i] = T.Select(p0[i] < T.float32(0.0), T.float32(0.0), p0[i])\n");
  const kiln_type_t *scalar = ttype(KILN_DTYPE_FLOAT32, 0, NULL);
  assert_string_equal(lowered_text(&kiln_op_relu, NULL, 1, &scalar, 512),
                      "@T.prim_func\n"
                      "def main(p0: T.Buffer((), \"float32\"), T_relu: T.Buffer((), "
                      "\"float32\")):\n"
                      "    T_relu[0] = T.Select(p0[0] < T.float32(0.0), T.float32(0.0), p0[0])\n");
  check_compute_random(&kiln_op_relu, NULL, 1, &scalar, -1.0, 1.0);
}

/* Rank-0 tensors in and out, through families that once worked around
 * them: a scalar condition, a full reduction, a vector dot product. */
static void test_rank0_tensors(void **state) {
  (void)state;
  const kiln_type_t *where[] = {ttype(KILN_DTYPE_BOOL, 0, NULL),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5)),
                                ttype(KILN_DTYPE_FLOAT32, 0, NULL)};
  check_compute_random(&kiln_op_where, NULL, 3, where, -2.0, 2.0);
  const kiln_type_t *matrix = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5));
  check_compute_random(&kiln_op_sum, attrs_with(&kiln_op_sum, NULL), 1, &matrix, -1.0, 1.0);
  check_compute_random(&kiln_op_max, attrs_with(&kiln_op_max, NULL), 1, &matrix, -1.0, 1.0);
  const kiln_type_t *vectors[] = {ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(7)),
                                  ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(7))};
  check_compute_random(&kiln_op_matmul, attrs_with(&kiln_op_matmul, NULL), 2, vectors, -1.0, 1.0);
  const kiln_type_t *scalar = ttype(KILN_DTYPE_INT32, 0, NULL);
  check_compute_random(&kiln_op_negative, NULL, 1, &scalar, -50, 50);
  check_compute_random(&kiln_op_expand_dims, ATTRS(&kiln_op_expand_dims, "axis", "0"), 1, &scalar,
                       -50, 50);
}

static void test_lanes_by_dtype(void **state) {
  (void)state;
  kiln_schedule_target_t avx512 = {512}, avx2 = {256};
  assert_int_equal(kiln_schedule_lanes(&avx512, KILN_DTYPE_FLOAT32), 16);
  assert_int_equal(kiln_schedule_lanes(&avx512, KILN_DTYPE_FLOAT64), 8);
  assert_int_equal(kiln_schedule_lanes(&avx512, KILN_DTYPE_INT8), 64);
  assert_int_equal(kiln_schedule_lanes(&avx512, KILN_DTYPE_BOOL), 64);
  assert_int_equal(kiln_schedule_lanes(&avx2, KILN_DTYPE_FLOAT32), 8);
  kiln_schedule_target_t host = kiln_schedule_target_host();
  assert_true(host.vector_bits == 128 || host.vector_bits == 256 || host.vector_bits == 512);
  const kiln_type_t *t = ttype(KILN_DTYPE_INT8, 1, SHAPE(130));
  assert_string_equal(lowered_text(&kiln_op_relu, NULL, 1, &t, 512),
                      "@T.prim_func\n"
                      "def main(p0: T.Buffer((130,), \"int8\"), T_relu: T.Buffer((130,), "
                      "\"int8\")):\n"
                      "    for i_outer in T.parallel(3):\n"
                      "        for i_inner in T.vectorized(64):\n"
                      "            if i_outer * 64 + i_inner < 130:\n"
                      "                T_relu[i_outer * 64 + i_inner] = T.Select(p0[i_outer * 64 + "
                      "i_inner] < T.int8(0), T.int8(0), p0[i_outer * 64 + i_inner])\n");
}

static void test_default_schedule_after_passes(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(7, 13)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(13))};
  assert_string_equal(
      passed_text(&kiln_op_add, NULL, 2, types, 512),
      "@T.prim_func\n"
      "def main(p0: T.Buffer((7, 13), \"float32\"), p1: T.Buffer((13,), \"float32\"), T_add: "
      "T.Buffer((7, 13), \"float32\")):\n"
      "    for i_j_fused_outer in T.parallel(5):\n"
      "        T_add[T.ramp(i_j_fused_outer * 16, 1, 16)] = p0[T.ramp(i_j_fused_outer * 16, 1, "
      "16)] "
      "+ p1[T.ramp(i_j_fused_outer * 16, 1, 16) % T.broadcast(13, 16)]\n"
      "    for i_j_fused_inner in T.serial(11):\n"
      "        T_add[i_j_fused_inner + 80] = p0[i_j_fused_inner + 80] + p1[i_j_fused_inner + 2]\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_operator_has_a_compute_rule),
      cmocka_unit_test_setup_teardown(test_driver_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_schedule_reduction, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_schedule_small_and_rank0, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rank0_tensors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lanes_by_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_schedule_after_passes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
