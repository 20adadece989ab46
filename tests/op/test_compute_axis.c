/*
 * Compute rules of cumsum and topk (extern ops), lowered with the default
 * schedule and run on the loop-IR interpreter against the reference
 * kernels (kiln_compute_test.h): every axis, exclusive and reverse, integer
 * wrap-around, k from 1 to the whole axis, largest and smallest, ties and
 * NaN, several dtypes.
 */
#include <math.h>

#include "kiln_compute_test.h"

static void test_cumsum_every_variant(void **state) {
  (void)state;
  const char *axes[] = {"0", "1", "-1", "-3"};
  const char *flags[] = {"False", "True"};
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 7, 5));
  for (int a = 0; a < 4; ++a) {
    for (int e = 0; e < 2; ++e) {
      for (int r = 0; r < 2; ++r) {
        check_compute_random(
            &kiln_op_cumsum,
            ATTRS(&kiln_op_cumsum, "axis", axes[a], "exclusive", flags[e], "reverse", flags[r]), 1,
            &f32, -2.0, 2.0);
      }
    }
  }
}

static void test_cumsum_dtypes(void **state) {
  (void)state;
  /* int8 and uint32 sums wrap; int64 and float64 are their own accumulators. */
  struct {
    kiln_dtype_t dtype;
    double lo, hi;
  } cases[] = {{KILN_DTYPE_INT8, -100, 100},
               {KILN_DTYPE_UINT32, 1e9, 4e9},
               {KILN_DTYPE_INT64, -1e18, 1e18},
               {KILN_DTYPE_FLOAT64, -1.0, 1.0},
               {KILN_DTYPE_INT32, -5, 5}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    const kiln_type_t *type = ttype(cases[c].dtype, 2, SHAPE(4, 13));
    check_compute_random(&kiln_op_cumsum, ATTRS(&kiln_op_cumsum, "axis", "1", "reverse", "True"), 1,
                         &type, cases[c].lo, cases[c].hi);
    check_compute_random(&kiln_op_cumsum, ATTRS(&kiln_op_cumsum, "axis", "0", "exclusive", "True"),
                         1, &type, cases[c].lo, cases[c].hi);
  }
  const kiln_type_t *one = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(1));
  check_compute_random(&kiln_op_cumsum, ATTRS(&kiln_op_cumsum, "exclusive", "True"), 1, &one, -1.0,
                       1.0);
}

static void check_topk(const kiln_type_t *type, const char *k, const char *axis,
                       const char *largest, double lo, double hi) {
  check_compute_random(&kiln_op_topk,
                       ATTRS(&kiln_op_topk, "k", k, "axis", axis, "largest", largest), 1, &type, lo,
                       hi);
}

static void test_topk_every_variant(void **state) {
  (void)state;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 11, 4));
  const char *largest[] = {"True", "False"};
  for (int l = 0; l < 2; ++l) {
    check_topk(f32, "1", "1", largest[l], -1.0, 1.0);
    check_topk(f32, "5", "1", largest[l], -1.0, 1.0);
    check_topk(f32, "11", "-2", largest[l], -1.0, 1.0);
    check_topk(f32, "3", "-1", largest[l], -1.0, 1.0);
    check_topk(f32, "2", "0", largest[l], -1.0, 1.0);
    /* Few distinct values: ties are broken by the smaller index. */
    const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 2, SHAPE(5, 17));
    check_topk(i32, "9", "1", largest[l], -2, 2);
    const kiln_type_t *u8 = ttype(KILN_DTYPE_UINT8, 1, SHAPE(19));
    check_topk(u8, "19", "0", largest[l], 0, 255);
    const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(7, 3));
    check_topk(f64, "2", "0", largest[l], -1.0, 1.0);
  }
  check_compute_random(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", "4", "sorted", "False"), 1, &f32,
                       -1.0, 1.0);
}

static void test_topk_nan_and_ties(void **state) {
  (void)state;
  float rows[] = {1.0f, NAN,  3.0f, NAN,       -1.0f, 3.0f, /* two NaN, a tie */
                  2.0f, 2.0f, 2.0f, -INFINITY, 2.0f,  INFINITY};
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 6), rows);
  const char *ks[] = {"1", "3", "6"};
  for (int k = 0; k < 3; ++k) {
    check_compute(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", ks[k], "largest", "True"), 1, &data);
    check_compute(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", ks[k], "largest", "False"), 1, &data);
  }
  check_compute(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", "2", "axis", "0"), 1, &data);
  kiln_tensor_release(data);
}

static void test_topk_of_nothing_is_unimplemented(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", "0"), 1, &type, &target,
                                   &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "topk: k is 0; the loop IR has no empty tensors");
}

static void test_every_operator_has_a_compute_rule(void **state) {
  (void)state;
  assert_non_null(kiln_op_compute_get(kiln_op_cumsum.id));
  assert_non_null(kiln_op_compute_get(kiln_op_topk.id));
}

static void test_cumsum_lowers_to_a_scan_and_a_cast(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const char *text = lowered_text(
      &kiln_op_cumsum, ATTRS(&kiln_op_cumsum, "axis", "1", "exclusive", "True"), 1, &type, 128);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((2, 3), \"float32\"), T_cumsum: T.Buffer((2, 3), \"float32\")):\n"
      "    T_cumsum_acc = T.decl_buffer((2, 3), \"float64\", scope=\"global\")\n"
      "    for i0 in T.serial(2):\n"
      "        for x in T.serial(3):\n"
      "            if x == 0:\n"
      "                T_cumsum_acc[i0, x] = T.float64(0.0)\n"
      "            else:\n"
      "                T_cumsum_acc[i0, x] = T_cumsum_acc[i0, x - 1] + T.Cast(\"float64\", p0[i0, "
      "x - 1])\n"
      "    for i_j_fused_outer in T.parallel(2):\n"
      "        for i_j_fused_inner in T.vectorized(4):\n"
      "            if i_j_fused_outer * 4 + i_j_fused_inner < 6:\n"
      "                T_cumsum[(i_j_fused_outer * 4 + i_j_fused_inner) // 3, (i_j_fused_outer * 4 "
      "+ i_j_fused_inner) % 3] = T.Cast(\"float32\", T_cumsum_acc[(i_j_fused_outer * 4 + "
      "i_j_fused_inner) // 3, (i_j_fused_outer * 4 + i_j_fused_inner) % 3])\n");
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
    status = kiln_op_lower(&kiln_op_topk, ATTRS(&kiln_op_topk, "k", "2"), 1, types, &target, &arena,
                           "main", &func);
  }
  if (!status) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_INT8, 2, SHAPE(3, 5))};
    status = kiln_op_lower(&kiln_op_cumsum, ATTRS(&kiln_op_cumsum, "axis", "1"), 1, types, &target,
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
      cmocka_unit_test_setup_teardown(test_cumsum_every_variant, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cumsum_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_every_variant, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_nan_and_ties, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_of_nothing_is_unimplemented, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_compute_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cumsum_lowers_to_a_scan_and_a_cast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lowering_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
