/*
 * Compute rule of layout_transform (nn_layout_compute.c), lowered with the
 * default schedule and run on the loop-IR interpreter against the
 * reference kernel (kiln_compute_test.h): NCHW <-> NCHW16c, block to block,
 * permutations, both axes of a kernel split, the identity, on every dtype
 * the interpreter runs; the error for a C that the block does not divide;
 * the lowered text (a permuted read: the rows schedule of
 * kiln_schedule_default); an allocation failure sweep over lowering.
 */
#include <stdio.h>

#include "kiln_compute_test.h"
#include "op/nn_common.h"

static const kiln_op_t *const op = &kiln_op_layout_transform;

static void test_every_operator_has_a_rule(void **state) {
  (void)state;
  assert_non_null(kiln_op_compute_get(kiln_op_layout_transform.id));
}

static void check_transform(const char *src, const char *dst, kiln_dtype_t dtype, int ndim,
                            const int64_t *shape) {
  char src_text[32], dst_text[32];
  snprintf(src_text, sizeof(src_text), "\"%s\"", src);
  snprintf(dst_text, sizeof(dst_text), "\"%s\"", dst);
  const kiln_type_t *type = ttype(dtype, ndim, shape);
  check_compute_random(op, ATTRS(op, "src_layout", src_text, "dst_layout", dst_text), 1, &type,
                       -100.0, 100.0);
}

static void test_blocking(void **state) {
  (void)state;
  check_transform("NCHW", "NCHW16c", KILN_DTYPE_FLOAT32, 4, SHAPE(2, 32, 3, 5));
  check_transform("NCHW16c", "NCHW", KILN_DTYPE_FLOAT32, 5, SHAPE(1, 3, 5, 3, 16));
  check_transform("NCHW4c", "NCHW8c", KILN_DTYPE_FLOAT32, 5, SHAPE(1, 6, 3, 5, 4));
  check_transform("NCHW8c", "NCHW4c", KILN_DTYPE_FLOAT32, 5, SHAPE(2, 3, 1, 7, 8));
  check_transform("NHWC", "NCHW4c", KILN_DTYPE_FLOAT32, 4, SHAPE(1, 5, 3, 12));
  check_transform("OIHW", "OIHW4i8o", KILN_DTYPE_FLOAT32, 4, SHAPE(16, 8, 3, 1));
  check_transform("OIHW4i8o", "OIHW", KILN_DTYPE_FLOAT32, 6, SHAPE(2, 3, 3, 1, 4, 8));
}

static void test_permutations(void **state) {
  (void)state;
  check_transform("NCHW", "NHWC", KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 5, 7));
  check_transform("NHWC", "NCHW", KILN_DTYPE_FLOAT32, 4, SHAPE(2, 5, 7, 3));
  check_transform("NCHW", "NCHW", KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 5, 7));
  check_transform("NC", "CN", KILN_DTYPE_FLOAT32, 2, SHAPE(13, 17));
}

static void test_every_dtype(void **state) {
  (void)state;
  const kiln_dtype_t dtypes[] = {KILN_DTYPE_FLOAT64, KILN_DTYPE_INT8,   KILN_DTYPE_INT16,
                                 KILN_DTYPE_INT32,   KILN_DTYPE_INT64,  KILN_DTYPE_UINT8,
                                 KILN_DTYPE_UINT16,  KILN_DTYPE_UINT32, KILN_DTYPE_BOOL};
  for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); ++i) {
    check_transform("NCHW", "NCHW4c", dtypes[i], 4, SHAPE(1, 8, 3, 5));
    check_transform("NCHW4c", "NHWC", dtypes[i], 5, SHAPE(1, 3, 3, 5, 4));
  }
}

static void test_indivisible_channels(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 24, 3, 5));
  KILN_ASSERT_STATUS(
      kiln_op_lower(op, ATTRS(op, "src_layout", "\"NCHW\"", "dst_layout", "\"NCHW16c\""), 1, &type,
                    &target, &kiln_op_test_arena, "main", &func),
      INVALID_ARGUMENT, "axis C of extent 24 is not divisible by the block 16 of layout NCHW16c");
  assert_null(func);
}

/* The rule's own check, reached only by a caller that skips the type
 * relation: data whose rank does not fit src_layout. */
static void test_rule_rejects_mismatched_data(void **state) {
  (void)state;
  const kiln_te_tensor_t *data = NULL;
  KILN_ASSERT_OK(
      kiln_te_placeholder(&kiln_op_test_arena, "p0", 3, SHAPE(2, 4, 5), KILN_DTYPE_FLOAT32, &data));
  kiln_compute_args_t args = {op,
                              ATTRS(op, "src_layout", "\"NCHW\"", "dst_layout", "\"NCHW4c\""),
                              &kiln_op_test_arena,
                              1,
                              &data,
                              ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(2, 1, 5, 1, 4))};
  kiln_compute_result_t result;
  KILN_ASSERT_STATUS(kiln_op_compute(&args, &result), INVALID_ARGUMENT,
                     "layout_transform: layouts NCHW -> NCHW4c do not fit data of rank 3");
}

static void test_lowered_text(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 4, 1, 3));
  const char *text = lowered_text(
      op, ATTRS(op, "src_layout", "\"NCHW\"", "dst_layout", "\"NCHW2c\""), 1, &type, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((1, 4, 1, 3), \"float32\"), T_layout_transform: T.Buffer((1, 2, "
            "1, 3, 2), \"float32\")):\n"
            "    for i_j_fused_k_fused in T.parallel(2):\n"
            "        for l_m_fused_outer in T.serial(2):\n"
            "            for l_m_fused_inner in T.vectorized(4):\n"
            "                if l_m_fused_outer * 4 + l_m_fused_inner < 6:\n"
            "                    T_layout_transform[0, i_j_fused_k_fused, 0, l_m_fused_outer * 2 + "
            "l_m_fused_inner // 2, l_m_fused_inner % 2] = p0[0, i_j_fused_k_fused * 2 + "
            "l_m_fused_inner % 2, 0, l_m_fused_outer * 2 + l_m_fused_inner // 2]\n");
}

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  const kiln_type_t *type = context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {256};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_nn_layout_transform_attrs_t attrs = {"NCHW", "NCHW4c"};
  kiln_status_t status = kiln_op_lower(op, &attrs, 1, &type, &target, &arena, "f", &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 8, 3, 5));
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, (void *)(uintptr_t)type) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_blocking, setup, teardown),
      cmocka_unit_test_setup_teardown(test_permutations, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_indivisible_channels, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rule_rejects_mismatched_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lowered_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
