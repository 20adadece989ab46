/*
 * Compute rules of the reductions (sum, mean, max, min, prod, argmax,
 * argmin), lowered with the default schedule and run on the loop-IR
 * interpreter against the reference kernels (kiln_compute_test.h): several
 * axes, all axes to rank 0, keepdims, negative axes, odd shapes, float32,
 * float64 and int64, and hand-made rows with NaN, infinities and ties.
 */
#include <math.h>

#include "kiln_compute_test.h"

static const kiln_op_t *const reducers[] = {&kiln_op_sum, &kiln_op_mean, &kiln_op_max, &kiln_op_min,
                                            &kiln_op_prod};
#define NUM_REDUCERS (int)(sizeof(reducers) / sizeof(reducers[0]))

static void check_reduce(const kiln_op_t *op, const kiln_type_t *type, const char *axis,
                         const char *keepdims, double lo, double hi) {
  void *attrs = ATTRS(op, "axis", axis, "keepdims", keepdims);
  check_compute_random(op, attrs, 1, &type, lo, hi);
}

static void test_reductions_over_axes(void **state) {
  (void)state;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 7, 17));
  const char *axes[] = {"[]", "[1]", "[-1]", "[0, 2]", "[2, 0, 1]", "[-3]"};
  for (int r = 0; r < NUM_REDUCERS; ++r) {
    for (size_t a = 0; a < sizeof(axes) / sizeof(axes[0]); ++a) {
      check_reduce(reducers[r], f32, axes[a], "False", -1.5, 1.5);
      check_reduce(reducers[r], f32, axes[a], "True", -1.5, 1.5);
    }
  }
}

static void test_reductions_other_dtypes(void **state) {
  (void)state;
  const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(5, 19));
  const kiln_type_t *i64 = ttype(KILN_DTYPE_INT64, 3, SHAPE(2, 3, 11));
  for (int r = 0; r < NUM_REDUCERS; ++r) {
    check_reduce(reducers[r], f64, "[1]", "False", -2.0, 2.0);
    check_reduce(reducers[r], f64, "[]", "True", -2.0, 2.0);
    if (reducers[r] != &kiln_op_mean) {
      check_reduce(reducers[r], i64, "[0, -1]", "False", -1000, 1000);
      check_reduce(reducers[r], i64, "[]", "False", -1000, 1000);
    }
  }
  /* int64 products wrap as the reference's do. */
  const kiln_type_t *wide = ttype(KILN_DTYPE_INT64, 1, SHAPE(40));
  check_reduce(&kiln_op_prod, wide, "[0]", "False", 1e6, 1e9);
  check_reduce(&kiln_op_sum, wide, "[0]", "False", 1e17, 4e17);
}

static void test_rank_one_and_scalar_outputs(void **state) {
  (void)state;
  const kiln_type_t *one = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(1));
  const kiln_type_t *row = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(37));
  for (int r = 0; r < NUM_REDUCERS; ++r) {
    check_reduce(reducers[r], one, "[]", "False", -1.0, 1.0);
    check_reduce(reducers[r], row, "[0]", "False", -1.0, 1.0);
    check_reduce(reducers[r], row, "[0]", "True", -1.0, 1.0);
  }
}

/* NaN wins max and min; a row of infinities stays infinite; -inf for max. */
static void test_nan_and_infinities(void **state) {
  (void)state;
  float rows[] = {1.0f,      NAN,       3.0f,      -2.0f, /* NaN in the middle */
                  1.0f,      2.0f,      3.0f,      NAN,   /* NaN last */
                  NAN,       1.0f,      2.0f,      -1.0f, /* NaN first */
                  -INFINITY, -INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY,
                  INFINITY,  INFINITY,  2.0f,      7.0f,      7.0f,     2.0f}; /* ties */
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 4), rows);
  for (int r = 0; r < NUM_REDUCERS; ++r) {
    check_compute(reducers[r], ATTRS(reducers[r], "axis", "[1]"), 1, &data);
    check_compute(reducers[r], ATTRS(reducers[r], "axis", "[0]"), 1, &data);
  }
  const kiln_op_t *args[] = {&kiln_op_argmax, &kiln_op_argmin};
  for (int a = 0; a < 2; ++a) {
    for (int last = 0; last < 2; ++last) {
      const char *last_text = last ? "True" : "False";
      check_compute(args[a], ATTRS(args[a], "axis", "1", "select_last_index", last_text), 1, &data);
      check_compute(args[a], ATTRS(args[a], "axis", "-2", "select_last_index", last_text), 1,
                    &data);
    }
  }
  kiln_tensor_release(data);
}

static void test_argreduce_matches_reference(void **state) {
  (void)state;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 13, 5));
  /* Few distinct integers, so ties are common. */
  const kiln_type_t *i64 = ttype(KILN_DTYPE_INT64, 2, SHAPE(7, 11));
  const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(23));
  const kiln_op_t *ops[] = {&kiln_op_argmax, &kiln_op_argmin};
  const char *axes[] = {"0", "1", "-1"};
  for (int o = 0; o < 2; ++o) {
    for (int a = 0; a < 3; ++a) {
      for (int keep = 0; keep < 2; ++keep) {
        for (int last = 0; last < 2; ++last) {
          void *attrs = ATTRS(ops[o], "axis", axes[a], "keepdims", keep ? "True" : "False",
                              "select_last_index", last ? "True" : "False");
          check_compute_random(ops[o], attrs, 1, &f32, -3.0, 3.0);
          if (a < 2) {
            check_compute_random(ops[o], attrs, 1, &i64, -2, 2);
          }
        }
      }
    }
    check_compute_random(ops[o], ATTRS(ops[o], "axis", "0", "keepdims", "False"), 1, &f64, -1.0,
                         1.0);
  }
}

static void test_unsupported_dtypes(void **state) {
  (void)state;
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 2, SHAPE(3, 4));
  const kiln_type_t *i64 = ttype(KILN_DTYPE_INT64, 2, SHAPE(3, 4));
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_sum, ATTRS(&kiln_op_sum, "axis", "[1]"), 1, &i32,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "sum: the reference kernel does not handle int32");
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_mean, ATTRS(&kiln_op_mean, "axis", "[1]"), 1, &i64,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "mean: the reference kernel does not handle int64");
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_argmin, ATTRS(&kiln_op_argmin, "axis", "0"), 1, &i32,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "argmin: the reference kernel does not handle int32");
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[0]"), 1, &i32,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "prod: the reference kernel does not handle int32");
}

static void test_every_reduction_has_a_compute_rule(void **state) {
  (void)state;
  for (int r = 0; r < NUM_REDUCERS; ++r) {
    assert_non_null(kiln_op_compute_get(reducers[r]->id));
  }
  assert_non_null(kiln_op_compute_get(kiln_op_argmax.id));
  assert_non_null(kiln_op_compute_get(kiln_op_argmin.id));
}

static void test_max_lowers_to_parallel_reductions(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5));
  const char *text = lowered_text(&kiln_op_max, ATTRS(&kiln_op_max, "axis", "[1]"), 1, &type, 512);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((3, 5), \"float32\"), T_max: T.Buffer((3,), \"float32\")):\n"
      "    T_max_acc = T.decl_buffer((3,), \"float32\", scope=\"global\")\n"
      "    T_max_nan = T.decl_buffer((3,), \"int32\", scope=\"global\")\n"
      "    for i in T.parallel(3):\n"
      "        T_max_acc[i] = T.float32(\"-inf\")\n"
      "        for k0 in T.serial(5):\n"
      "            T_max_acc[i] = T.max(T_max_acc[i], T.Select(p0[i, k0] != p0[i, k0], "
      "T.float32(\"-inf\"), p0[i, k0]))\n"
      "    for i in T.parallel(3):\n"
      "        T_max_nan[i] = -2147483648\n"
      "        for k0 in T.serial(5):\n"
      "            T_max_nan[i] = T.max(T_max_nan[i], T.Select(p0[i, k0] != p0[i, k0], 1, 0))\n"
      "    for i in T.serial(3):\n"
      "        T_max[i] = T.Select(T_max_nan[i] > 0, T.float32(\"nan\"), T_max_acc[i])\n");
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
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5))};
    status = kiln_op_lower(&kiln_op_argmax, ATTRS(&kiln_op_argmax, "axis", "1"), 1, types, &target,
                           &arena, "main", &func);
  }
  if (!status) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5))};
    status = kiln_op_lower(&kiln_op_prod, ATTRS(&kiln_op_prod, "axis", "[0]"), 1, types, &target,
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
      cmocka_unit_test_setup_teardown(test_reductions_over_axes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reductions_other_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rank_one_and_scalar_outputs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nan_and_infinities, setup, teardown),
      cmocka_unit_test_setup_teardown(test_argreduce_matches_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_reduction_has_a_compute_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_lowers_to_parallel_reductions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lowering_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
