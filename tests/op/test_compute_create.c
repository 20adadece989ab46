/*
 * Compute rules of arange, one_hot and trilu, lowered with the default
 * schedule and run on the loop-IR interpreter against the reference
 * kernels (kiln_compute_test.h): negative steps, saturating integer
 * conversions, indices out of range, float indices with NaN, every axis,
 * diagonals inside and beyond the matrix, several dtypes.
 */
#include <math.h>

#include "kiln_compute_test.h"

static kiln_tensor_t *no_inputs[1];

static void check_arange(const char *start, const char *stop, const char *step, const char *dtype) {
  check_compute(&kiln_op_arange,
                ATTRS(&kiln_op_arange, "start", start, "stop", stop, "step", step, "dtype", dtype),
                0, no_inputs);
}

static void test_arange(void **state) {
  (void)state;
  check_arange("0.0", "10.5", "0.7", "\"float32\"");
  check_arange("3.25", "-40.0", "-1.5", "\"float64\"");
  check_arange("-5.0", "37.0", "3.0", "\"int32\"");
  check_arange("-5.5", "37.0", "2.25", "\"int64\"");
  /* Truncation toward zero and saturation, as the reference's store. */
  check_arange("100.0", "200.0", "7.0", "\"int8\"");
  check_arange("-10.5", "300.0", "9.75", "\"uint8\"");
  check_arange("-3.0", "3.0", "0.5", "\"int16\"");
  check_arange("0.0", "1.0", "1.0", "\"float32\"");
}

static void test_arange_without_elements_is_an_error(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_arange,
                                   ATTRS(&kiln_op_arange, "start", "5.0", "stop", "1.0"), 0, NULL,
                                   &target, &kiln_op_test_arena, "main", &func),
                     INVALID_ARGUMENT, "arange: compute T_arange: extent 0 of dim 0");
}

static void test_one_hot_integer_indices(void **state) {
  (void)state;
  const char *axes[] = {"-1", "0", "1", "-3"};
  for (int a = 0; a < 4; ++a) {
    /* Indices in [-depth - 2, depth + 1]: some out of range. */
    kiln_tensor_t *indices =
        random_tensor(a % 2 ? KILN_DTYPE_INT32 : KILN_DTYPE_INT64, 2, SHAPE(3, 7), -7, 6);
    check_compute(&kiln_op_one_hot,
                  ATTRS(&kiln_op_one_hot, "depth", "5", "axis", axes[a], "on_value", "2.5",
                        "off_value", "-1.0"),
                  1, &indices);
    kiln_tensor_release(indices);
  }
  kiln_tensor_t *indices = random_tensor(KILN_DTYPE_UINT8, 1, SHAPE(17), 0, 20);
  check_compute(&kiln_op_one_hot,
                ATTRS(&kiln_op_one_hot, "depth", "13", "dtype", "\"int8\"", "on_value", "300.0",
                      "off_value", "-7.9"),
                1, &indices);
  check_compute(&kiln_op_one_hot, ATTRS(&kiln_op_one_hot, "depth", "13", "dtype", "\"bool\""), 1,
                &indices);
  kiln_tensor_release(indices);
}

static void test_one_hot_float_indices(void **state) {
  (void)state;
  float values[] = {0.0f,  1.9f,  -1.2f,  -0.5f,    NAN,   3.0f,
                    -4.0f, 1e30f, -1e30f, INFINITY, 2.99f, -3.5f};
  kiln_tensor_t *indices = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4), values);
  check_compute(&kiln_op_one_hot, ATTRS(&kiln_op_one_hot, "depth", "4", "axis", "1"), 1, &indices);
  check_compute(&kiln_op_one_hot,
                ATTRS(&kiln_op_one_hot, "depth", "4", "dtype", "\"float64\"", "axis", "-1"), 1,
                &indices);
  kiln_tensor_release(indices);
}

static void test_trilu(void **state) {
  (void)state;
  const char *ks[] = {"0", "2", "-3", "100", "-100", "6"};
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_FLOAT32, KILN_DTYPE_INT32, KILN_DTYPE_BOOL};
  for (int d = 0; d < 3; ++d) {
    kiln_tensor_t *data = random_tensor(dtypes[d], 3, SHAPE(2, 5, 7), -50, 50);
    for (int k = 0; k < 6; ++k) {
      check_compute(&kiln_op_trilu, ATTRS(&kiln_op_trilu, "upper", "True", "k", ks[k]), 1, &data);
      check_compute(&kiln_op_trilu, ATTRS(&kiln_op_trilu, "upper", "False", "k", ks[k]), 1, &data);
    }
    kiln_tensor_release(data);
  }
  kiln_tensor_t *tall = random_tensor(KILN_DTYPE_FLOAT64, 2, SHAPE(11, 3), -1.0, 1.0);
  check_compute(&kiln_op_trilu, ATTRS(&kiln_op_trilu, "upper", "False", "k", "-1"), 1, &tall);
  kiln_tensor_release(tall);
}

static void test_every_operator_has_a_compute_rule(void **state) {
  (void)state;
  assert_non_null(kiln_op_compute_get(kiln_op_arange.id));
  assert_non_null(kiln_op_compute_get(kiln_op_one_hot.id));
  assert_non_null(kiln_op_compute_get(kiln_op_trilu.id));
}

static void test_trilu_lowers_to_one_vector_loop(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_INT32, 2, SHAPE(3, 3));
  const char *text = lowered_text(&kiln_op_trilu, ATTRS(&kiln_op_trilu, "k", "1"), 1, &type, 256);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((3, 3), \"int32\"), T_trilu: T.Buffer((3, 3), \"int32\")):\n"
      "    for i_j_fused_outer in T.parallel(2):\n"
      "        for i_j_fused_inner in T.vectorized(8):\n"
      "            if i_j_fused_outer * 8 + i_j_fused_inner < 9:\n"
      "                T_trilu[(i_j_fused_outer * 8 + i_j_fused_inner) // 3, (i_j_fused_outer * 8 "
      "+ i_j_fused_inner) % 3] = T.Select((i_j_fused_outer * 8 + i_j_fused_inner) % 3 - "
      "(i_j_fused_outer * 8 + i_j_fused_inner) // 3 >= 1, p0[(i_j_fused_outer * 8 + "
      "i_j_fused_inner) // 3, (i_j_fused_outer * 8 + i_j_fused_inner) % 3], 0)\n");
}

/* Lowering with every allocation failing in turn: an error, never a leak. */
static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = KILN_OK;
  if (!status) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_INT64, 1, SHAPE(5))};
    status = kiln_op_lower(&kiln_op_one_hot, ATTRS(&kiln_op_one_hot, "depth", "3"), 1, types,
                           &target, &arena, "main", &func);
  }
  if (!status) {
    status = kiln_op_lower(&kiln_op_arange, ATTRS(&kiln_op_arange, "stop", "5.0"), 0, NULL, &target,
                           &arena, "main", &func);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_lowering_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_arange, setup, teardown),
      cmocka_unit_test_setup_teardown(test_arange_without_elements_is_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_hot_integer_indices, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_hot_float_indices, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trilu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_compute_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trilu_lowers_to_one_vector_loop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lowering_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
