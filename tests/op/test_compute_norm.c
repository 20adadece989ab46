/*
 * Compute rules of nn.batch_norm, nn.layer_norm, nn.bias_add, nn.prelu and
 * nn.instance_norm (nn_norm_compute.c), lowered with the default schedule
 * and run on the loop-IR interpreter against the reference kernels
 * (kiln_compute_test.h): odd shapes, first, middle, last and negative axes,
 * epsilon, scale and center off, instance_norm of rank 2 (planes of one
 * element) to 5; the lowered text of bias_add; the dtype errors; an
 * allocation failure sweep over lowering.
 */
#include "kiln_compute_test.h"
#include "op/nn_common.h"

static void test_every_operator_has_a_rule(void **state) {
  (void)state;
  const kiln_op_t *const ops[] = {&kiln_op_batch_norm, &kiln_op_layer_norm, &kiln_op_bias_add,
                                  &kiln_op_prelu, &kiln_op_instance_norm};
  for (int i = 0; i < 5; ++i) {
    assert_non_null(kiln_op_compute_get(ops[i]->id));
  }
}

/* Runs `op` on data of `shape` and (C,) vectors, C the extent at `axis`;
 * vector `positive` (or -1) is drawn from [0.5, 2). */
static void check_vectors(const kiln_op_t *op, const void *attrs, int ndim, const int64_t *shape,
                          int axis, int num_vectors, int positive) {
  kiln_tensor_t *inputs[5];
  inputs[0] = random_tensor(KILN_DTYPE_FLOAT32, ndim, shape, -3.0, 3.0);
  int64_t channels = shape[axis < 0 ? axis + ndim : axis];
  for (int i = 1; i <= num_vectors; ++i) {
    bool pos = i == positive;
    inputs[i] = random_tensor(KILN_DTYPE_FLOAT32, 1, &channels, pos ? 0.5 : -2.0, 2.0);
  }
  check_compute(op, attrs, num_vectors + 1, inputs);
  for (int i = 0; i <= num_vectors; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

static void test_batch_norm(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_norm;
  const int64_t *shape = SHAPE(2, 5, 3, 7);
  check_vectors(op, ATTRS(op, "axis", "1"), 4, shape, 1, 4, 4);
  check_vectors(op, ATTRS(op, "axis", "-1", "epsilon", "0.25"), 4, shape, -1, 4, 4);
  check_vectors(op, ATTRS(op, "axis", "2", "scale", "False"), 4, shape, 2, 4, 4);
  check_vectors(op, ATTRS(op, "axis", "0", "center", "False", "scale", "False"), 4, shape, 0, 4, 4);
  check_vectors(op, ATTRS(op, "axis", "0"), 1, SHAPE(13), 0, 4, 4);
}

static void test_layer_norm(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_layer_norm;
  const int64_t *shape = SHAPE(3, 7, 13);
  check_vectors(op, ATTRS(op, "axis", "-1"), 3, shape, -1, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "1", "epsilon", "0.001"), 3, shape, 1, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "0", "scale", "False"), 3, shape, 0, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "-2", "center", "False", "epsilon", "0.5"), 3, shape, -2, 2,
                -1);
  check_vectors(op, ATTRS(op, "axis", "0"), 1, SHAPE(17), 0, 2, -1);
}

/* Along the last axis the sums are made in 16 lanes: rows of 1, 15, 16,
 * 17, 64 and 100 (whole vectors and masked tails), rank 1 to 4. */
static void test_layer_norm_lanes(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_layer_norm;
  static const int64_t lengths[] = {1, 15, 16, 17, 64, 100};
  for (int i = 0; i < 6; ++i) {
    check_vectors(op, ATTRS(op, "axis", "-1"), 2, SHAPE(5, lengths[i]), -1, 2, -1);
  }
  check_vectors(op, ATTRS(op, "axis", "0", "center", "False"), 1, SHAPE(33), 0, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "3", "scale", "False"), 4, SHAPE(2, 1, 3, 40), 3, 2, -1);
}

static void test_instance_norm(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_instance_norm;
  check_vectors(op, ATTRS(op, "axis", "1"), 4, SHAPE(2, 3, 5, 7), 1, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "-1", "epsilon", "0.01"), 4, SHAPE(2, 5, 7, 3), -1, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "2", "scale", "False"), 4, SHAPE(3, 5, 3, 7), 2, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "1", "center", "False"), 3, SHAPE(2, 3, 11), 1, 2, -1);
  check_vectors(op, ATTRS(op, "axis", "1"), 5, SHAPE(2, 3, 2, 3, 5), 1, 2, -1);
  /* Planes of one element: the output is beta. */
  check_vectors(op, ATTRS(op, "axis", "1"), 2, SHAPE(3, 5), 1, 2, -1);
}

static void test_bias_add_and_prelu(void **state) {
  (void)state;
  const kiln_op_t *const ops[] = {&kiln_op_bias_add, &kiln_op_prelu};
  for (int i = 0; i < 2; ++i) {
    const kiln_op_t *op = ops[i];
    check_vectors(op, ATTRS(op, "axis", "1"), 4, SHAPE(2, 7, 3, 5), 1, 1, -1);
    check_vectors(op, ATTRS(op, "axis", "-1"), 4, SHAPE(2, 7, 3, 5), -1, 1, -1);
    check_vectors(op, ATTRS(op, "axis", "3"), 4, SHAPE(2, 7, 3, 5), 3, 1, -1);
    check_vectors(op, ATTRS(op, "axis", "0"), 3, SHAPE(11, 3, 2), 0, 1, -1);
    check_vectors(op, ATTRS(op, "axis", "-2"), 3, SHAPE(2, 17, 3), -2, 1, -1);
    check_vectors(op, ATTRS(op, "axis", "0"), 1, SHAPE(19), 0, 1, -1);
  }
}

static void test_bias_add_lowered_text(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(2))};
  const char *text =
      lowered_text(&kiln_op_bias_add, ATTRS(&kiln_op_bias_add, "axis", "0"), 2, types, 128);
  assert_string_equal(text, "@T.prim_func\n"
                            "def main(p0: T.Buffer((2, 3), \"float32\"), p1: T.Buffer((2,), "
                            "\"float32\"), T_bias_add: T.Buffer((2, 3), \"float32\")):\n"
                            "    for i_j_fused_outer in T.parallel(2):\n"
                            "        for i_j_fused_inner in T.vectorized(4):\n"
                            "            if i_j_fused_outer * 4 + i_j_fused_inner < 6:\n"
                            "                T_bias_add[(i_j_fused_outer * 4 + i_j_fused_inner) // "
                            "3, (i_j_fused_outer * 4 + i_j_fused_inner) % 3] = p0[(i_j_fused_outer "
                            "* 4 + i_j_fused_inner) // 3, (i_j_fused_outer * 4 + i_j_fused_inner) "
                            "% 3] + p1[(i_j_fused_outer * 4 + i_j_fused_inner) // 3]\n");
}

static void test_dtype_errors(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *f64[] = {ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(3, 5)),
                              ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(5)),
                              ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(5))};
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_layer_norm, ATTRS(&kiln_op_layer_norm, "axis", "1"), 3,
                                   f64, &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.layer_norm: no compute rule for dtype float64");
  const kiln_type_t *i32[] = {ttype(KILN_DTYPE_INT32, 2, SHAPE(3, 5)),
                              ttype(KILN_DTYPE_INT32, 1, SHAPE(5))};
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_bias_add, ATTRS(&kiln_op_bias_add, "axis", "1"), 2, i32,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.bias_add: no compute rule for dtype int32");
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_prelu, ATTRS(&kiln_op_prelu, "axis", "1"), 2, i32,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.prelu: no compute rule for dtype int32");
  assert_null(func);
}

/* te takes at most 8 reduce axes: instance_norm of rank 11 reduces 9 dims. */
static void test_instance_norm_rank_limit(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *types[] = {
      ttype(KILN_DTYPE_FLOAT32, 11, SHAPE(1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 3)),
      ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(2)), ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(2))};
  KILN_ASSERT_STATUS(
      kiln_op_lower(&kiln_op_instance_norm, ATTRS(&kiln_op_instance_norm, "axis", "1"), 3, types,
                    &target, &kiln_op_test_arena, "main", &func),
      UNIMPLEMENTED, "nn.instance_norm: data of rank 11 has more than 8 dims to reduce");
  /* Rank 10 (8 dims reduced) lowers and runs. */
  kiln_tensor_t *inputs[3] = {
      random_tensor(KILN_DTYPE_FLOAT32, 10, SHAPE(1, 2, 1, 3, 1, 1, 1, 1, 2, 1), -2.0, 2.0),
      random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(2), -2.0, 2.0),
      random_tensor(KILN_DTYPE_FLOAT32, 1, SHAPE(2), -2.0, 2.0)};
  check_compute(&kiln_op_instance_norm, ATTRS(&kiln_op_instance_norm, "axis", "1"), 3, inputs);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

typedef struct lower_case_t {
  const kiln_op_t *op;
  const void *attrs;
  int num_inputs;
  const kiln_type_t *const *types;
} lower_case_t;

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  const lower_case_t *c = context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {256};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status =
      kiln_op_lower(c->op, c->attrs, c->num_inputs, c->types, &target, &arena, "f", &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 5)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(3)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(3))};
  lower_case_t instance = {&kiln_op_instance_norm, ATTRS(&kiln_op_instance_norm, "axis", "1"), 3,
                           types};
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, &instance) > 10);
  lower_case_t prelu = {&kiln_op_prelu, ATTRS(&kiln_op_prelu, "axis", "1"), 2, types};
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, &prelu) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_norm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layer_norm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layer_norm_lanes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_instance_norm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bias_add_and_prelu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bias_add_lowered_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dtype_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_instance_norm_rank_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
