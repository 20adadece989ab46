/*
 * Compute rules of nn.dense, nn.matmul and nn.batch_matmul
 * (op/nn_conv_compute.h), lowered (dense and matmul with the blocked x86
 * schedule for matrix outputs, the default schedule otherwise) and run on
 * the loop-IR interpreter against the reference kernels: odd shapes,
 * vector operands, broadcast batches and both transpose flags.
 */
#include "kiln_compute_test.h"
#include "op/nn_conv_compute.h"

static void check_pair(const kiln_op_t *op, const void *attrs, int a_ndim, const int64_t *a_shape,
                       int b_ndim, const int64_t *b_shape) {
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, a_ndim, a_shape),
                                ttype(KILN_DTYPE_FLOAT32, b_ndim, b_shape)};
  check_compute_random(op, attrs, 2, types, -1.0, 1.0);
}

static void test_dense(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense;
  check_pair(op, ATTRS(op, "units", "0"), 2, SHAPE(7, 13), 2, SHAPE(5, 13));
  check_pair(op, ATTRS(op, "units", "37"), 2, SHAPE(19, 29), 2, SHAPE(37, 29));
  /* leading dims of data kept (the default schedule), and a vector of data */
  check_pair(op, ATTRS(op, "units", "0"), 3, SHAPE(2, 3, 11), 2, SHAPE(17, 11));
  check_pair(op, ATTRS(op, "units", "0"), 1, SHAPE(11), 2, SHAPE(3, 11));
}

static void test_matmul(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_matmul;
  check_pair(op, NULL, 2, SHAPE(7, 13), 2, SHAPE(13, 5));
  /* vectors on either side, and both */
  check_pair(op, NULL, 1, SHAPE(13), 2, SHAPE(13, 5));
  check_pair(op, NULL, 2, SHAPE(7, 13), 1, SHAPE(13));
  check_pair(op, NULL, 1, SHAPE(13), 1, SHAPE(13));
  /* broadcast batches: (3, 1, 5, 7) @ (4, 7, 3) and (2, 5, 7) @ (7, 3) */
  check_pair(op, NULL, 4, SHAPE(3, 1, 5, 7), 3, SHAPE(4, 7, 3));
  check_pair(op, NULL, 3, SHAPE(2, 5, 7), 2, SHAPE(7, 3));
  check_pair(op, NULL, 1, SHAPE(7), 3, SHAPE(2, 7, 3));
}

static void test_batch_matmul(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_matmul;
  const char *flags[] = {"False", "True"};
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const void *attrs = ATTRS(op, "transpose_a", flags[ta], "transpose_b", flags[tb]);
      /* M 5, K 7, N 3; x's batch of 1 broadcasts against y's 3, then y's */
      const int64_t *x = ta ? SHAPE(1, 7, 5) : SHAPE(1, 5, 7);
      const int64_t *y = tb ? SHAPE(3, 3, 7) : SHAPE(3, 7, 3);
      check_pair(op, attrs, 3, x, 3, y);
      const int64_t *x3 = ta ? SHAPE(3, 7, 5) : SHAPE(3, 5, 7);
      const int64_t *y1 = tb ? SHAPE(1, 3, 7) : SHAPE(1, 7, 3);
      check_pair(op, attrs, 3, x3, 3, y1);
    }
  }
}

static void test_dtype_unimplemented(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_dense, &kiln_op_matmul, &kiln_op_batch_matmul};
  const char *messages[] = {"nn.dense: no compute rule for dtype int8",
                            "nn.matmul: no compute rule for dtype int8",
                            "nn.batch_matmul: no compute rule for dtype int8"};
  const void *attrs[] = {ATTRS(ops[0], "units", "0"), NULL, ATTRS(ops[2], "transpose_b", "False")};
  for (int i = 0; i < 3; ++i) {
    const kiln_type_t *types[] = {
        ttype(KILN_DTYPE_INT8, 3, SHAPE(1, 4, 4)),
        ttype(KILN_DTYPE_INT8, i == 0 ? 2 : 3, i == 0 ? SHAPE(4, 4) : SHAPE(1, 4, 4))};
    kiln_schedule_target_t target = {512};
    const kiln_tir_prim_func_t *func = NULL;
    KILN_ASSERT_STATUS(
        kiln_op_lower(ops[i], attrs[i], 2, types, &target, &kiln_op_test_arena, "main", &func),
        UNIMPLEMENTED, messages[i]);
  }
}

/* batch_matmul with the default schedule: the batch, rows and columns fused
 * in parallel, the reduction inside. */
static void test_golden_batch_matmul(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=2 tile_cols=2 columns_outer=1");
  const kiln_op_t *op = &kiln_op_batch_matmul;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(1, 2, 3)),
                                ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 2))};
  const char *text = lowered_text(op, ATTRS(op, "transpose_b", "False"), 2, types, 512);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((1, 2, 3), \"float32\"), p1: T.Buffer((2, 3, 2), \"float32\"), "
      "T_batch_matmul: T.Buffer((2, 2, 2), \"float32\")):\n"
      "    for i_k_outer_fused_j_outer_fused in T.parallel(2):\n"
      "        T_batch_matmul_local = T.decl_buffer((1, 2, 2), \"float32\", scope=\"local\")\n"
      "        for i_c_init in T.serial(1):\n"
      "            for j_c_init in T.unroll(2):\n"
      "                for k_c_init in T.vectorized(2):\n"
      "                    T_batch_matmul_local[i_c_init, j_c_init, k_c_init] = T.float32(0.0)\n"
      "        for rk in T.serial(3):\n"
      "            for i_c in T.serial(1):\n"
      "                for j_c in T.unroll(2):\n"
      "                    for k_c in T.vectorized(2):\n"
      "                        T_batch_matmul_local[i_c, j_c, k_c] = T_batch_matmul_local[i_c, "
      "j_c, k_c] + p0[0, j_c, rk] * p1[i_k_outer_fused_j_outer_fused + i_c, rk, k_c]\n"
      "        for j_inner in T.serial(2):\n"
      "            for k_inner in T.vectorized(2):\n"
      "                T_batch_matmul[i_k_outer_fused_j_outer_fused, j_inner, k_inner] = "
      "T_batch_matmul_local[0, j_inner, k_inner]\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dense, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_matmul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dtype_unimplemented, setup, teardown),
      cmocka_unit_test_setup_teardown(test_golden_batch_matmul, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
