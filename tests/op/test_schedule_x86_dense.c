/*
 * The register-tiled GEMM schedule of op/schedule_x86_dense.c, on the
 * shapes a model's matrix products take: every M, N and K of
 * {1, 7, 17, 63, 65, 127, 1000} (tiles that divide and tails in rows,
 * columns and both), rank-3 dense data, a matmul whose batch broadcasts
 * its right operand, the sequence-first (S, 1, K) @ (K, N) whose tile rows
 * run along S, attention's batched Q.K^T and softmax.V, and the packed
 * dense (nn.contrib_dense_pack) with whole and padded blocks. Each is
 * lowered and run through every execution path (check_compute_random: the
 * loop-IR interpreter, C, LLVM and the JIT with 1 to 3 threads) against the
 * reference kernel; the default knobs and the tile's row dim are pinned
 * as printed loop IR.
 */
#include <string.h>

#include "kiln_compute_test.h"
#include "op/nn_conv_compute.h"

static void check_pair(const kiln_op_t *op, const void *attrs, int a_ndim, const int64_t *a_shape,
                       int b_ndim, const int64_t *b_shape) {
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, a_ndim, a_shape),
                                ttype(KILN_DTYPE_FLOAT32, b_ndim, b_shape)};
  check_compute_random(op, attrs, 2, types, -1.0, 1.0);
}

/* Each size of the list once as M, as N and as K, the other two cycling
 * through the list, for dense and for matmul. */
static void test_gemm_sizes(void **state) {
  (void)state;
  static const int64_t sizes[] = {1, 7, 17, 63, 65, 127, 1000};
  const int count = (int)(sizeof(sizes) / sizeof(sizes[0]));
  for (int i = 0; i < count; ++i) {
    int64_t m = sizes[i], n = sizes[(i + 2) % count], k = sizes[(i + 5) % count];
    check_pair(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "0"), 2, SHAPE(m, k), 2, SHAPE(n, k));
    check_pair(&kiln_op_matmul, NULL, 2, SHAPE(m, k), 2, SHAPE(k, n));
  }
}

/* Rank-3 data: dense over (2, 9, 13), a matmul whose (1, 13, 40) right
 * operand broadcasts over a batch of 3, and the sequence-first forms whose
 * M is 1: (17, 1, 13) . (33, 13)^T and (20, 1, 24) @ (24, 50). */
static void test_gemm_batch_and_sequence_first(void **state) {
  (void)state;
  const void *dense = ATTRS(&kiln_op_dense, "units", "0");
  check_pair(&kiln_op_dense, dense, 3, SHAPE(2, 9, 13), 2, SHAPE(33, 13));
  check_pair(&kiln_op_matmul, NULL, 3, SHAPE(3, 10, 13), 3, SHAPE(1, 13, 40));
  check_pair(&kiln_op_dense, dense, 3, SHAPE(17, 1, 13), 2, SHAPE(33, 13));
  check_pair(&kiln_op_matmul, NULL, 3, SHAPE(20, 1, 24), 2, SHAPE(24, 50));
}

/* Attention: (heads, S, d) @ (heads, d, S) and back, with S 19 (tails),
 * as matmul and as batch_matmul with either operand transposed. */
static void test_gemm_attention(void **state) {
  (void)state;
  check_pair(&kiln_op_matmul, NULL, 3, SHAPE(3, 19, 8), 3, SHAPE(3, 8, 19));
  check_pair(&kiln_op_matmul, NULL, 4, SHAPE(1, 3, 19, 19), 4, SHAPE(1, 3, 19, 8));
  const kiln_op_t *op = &kiln_op_batch_matmul;
  check_pair(op, ATTRS(op, "transpose_b", "False"), 3, SHAPE(3, 19, 8), 3, SHAPE(3, 8, 19));
  check_pair(op, ATTRS(op, "transpose_a", "True"), 3, SHAPE(3, 8, 19), 3, SHAPE(3, 21, 8));
}

/* contrib_dense_pack, whose column tiles are its blocks: blocks of 32
 * over 1000 columns (the last a quarter full), of 16 over 48, one block of
 * 5, over rank-2, rank-3 and sequence-first data. */
static void test_dense_pack(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense_pack;
  check_pair(op, ATTRS(op, "units", "1000"), 2, SHAPE(3, 17), 3, SHAPE(32, 17, 32));
  check_pair(op, ATTRS(op, "units", "48"), 3, SHAPE(2, 9, 13), 3, SHAPE(3, 13, 16));
  check_pair(op, ATTRS(op, "units", "5"), 2, SHAPE(65, 7), 3, SHAPE(1, 7, 5));
  check_pair(op, ATTRS(op, "units", "40"), 3, SHAPE(19, 1, 8), 3, SHAPE(2, 8, 32));
}

/* unroll_k: the reduction in steps of 4 unrolled, over k that 4 divides
 * and k that it does not (the guarded tail), for dense, matmul and a
 * packed weight; and the loop the golden shows. */
static void test_gemm_unroll_k(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=3 tile_cols=16 columns_outer=1 unroll_k=4");
  check_pair(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "0"), 2, SHAPE(7, 12), 2,
             SHAPE(20, 12));
  check_pair(&kiln_op_matmul, NULL, 2, SHAPE(5, 13), 2, SHAPE(13, 33));
  const kiln_op_t *op = &kiln_op_dense_pack;
  check_pair(op, ATTRS(op, "units", "40"), 2, SHAPE(9, 10), 3, SHAPE(3, 10, 16));
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 8)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(8, 32))};
  const char *text = lowered_text(&kiln_op_matmul, NULL, 2, types, 512);
  assert_non_null(strstr(text, "for rk_outer in T.serial(2):"));
  assert_non_null(strstr(text, "for rk_inner in T.unroll(4):"));
}

/* The default knobs: two vectors of columns, rows up to 8 that divide M
 * when they can, one vector or N itself when N is narrower. */
static void test_gemm_default_config(void **state) {
  (void)state;
  kiln_schedule_target_t avx512 = {512};
  kiln_schedule_gemm_config_t c = kiln_schedule_gemm_x86_config(&avx512, 64, 1152, 384);
  assert_int_equal(c.tile_rows, 8);
  assert_int_equal(c.tile_cols, 32);
  assert_true(c.columns_outer);
  assert_int_equal(c.unroll_k, 4); /* 4 divides k */
  c = kiln_schedule_gemm_x86_config(&avx512, 1, 10, 784);
  assert_int_equal(c.tile_rows, 1);
  assert_int_equal(c.tile_cols, 10);
  c = kiln_schedule_gemm_x86_config(&avx512, 196, 20, 7);
  assert_int_equal(c.tile_rows, 7); /* 196 = 28 x 7 */
  assert_int_equal(c.unroll_k, 1);  /* 4 does not divide k */
  assert_int_equal(c.tile_cols, 16);
  c = kiln_schedule_gemm_x86_config(&avx512, 127, 64, 7);
  assert_int_equal(c.tile_rows, 8);    /* no divisor in 4..8: a tail */
  kiln_schedule_target_t avx2 = {256}; /* 16 registers: 12 accumulators, 6 rows by 2 */
  c = kiln_schedule_gemm_x86_config(&avx2, 64, 1152, 384);
  assert_true(c.tile_rows <= 6);
  assert_true(c.tile_rows * (c.tile_cols / 8) <= 12);
  c = kiln_schedule_gemm_x86_config(&avx2, 60, 1152, 384);
  assert_int_equal(c.tile_rows, 6);
  assert_int_equal(c.tile_cols, 16);
}

/* A sequence-first dense (6, 1, 3) . (5, 3)^T at 128 bits: the tile's
 * six rows run along dim 0, the columns (one vector of 4 and a tail). */
static void test_gemm_sequence_first_golden(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=6 tile_cols=4 columns_outer=1");
  const kiln_op_t *op = &kiln_op_dense;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(6, 1, 3)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 3))};
  const char *text = lowered_text(op, ATTRS(op, "units", "0"), 2, types, 128);
  assert_non_null(strstr(text, "T_dense_local = T.decl_buffer((6, 1, 4), \"float32\", "
                               "scope=\"local\")"));
  assert_non_null(strstr(text, "for i_c in T.unroll(6):"));
  assert_non_null(strstr(text, "T.parallel(2)"));
}

/* A batched matmul (3, 20, 8) . (3, 8, 37) at 512 bits, whose 37 columns
 * leave a tail of 5 after a 32-column tile: the column blocks run serially
 * inside the 12 parallel tasks (3 batches x 4 row blocks), and loop
 * partition peels the last block, so the first stays vectorized (the
 * fused form kept every tile serial: 5 GFLOP/s on ViT's attention). */
static void test_gemm_column_tail_golden(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=5 tile_cols=32 columns_outer=1");
  const kiln_op_t *op = &kiln_op_matmul;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 20, 8)),
                                ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 8, 37))};
  const char *text = passed_text(op, NULL, 2, types, 512);
  assert_non_null(strstr(text, "for i_j_outer_fused in T.parallel(12):"));
  assert_non_null(strstr(text,
                         "p1[T.ramp(i_j_outer_fused // 4 * 296 + i_c * 296 + rk * 37 + 16, 1, "
                         "16)]"));                          /* the first block's second vector */
  assert_non_null(strstr(text, "if k_c_inner + 32 < 37:")); /* the tail, peeled */
}

/* A dense over rank-3 data (4, 3, 8) . (32, 8)^T at 512 bits: the tile's
 * rows run along dim 0 (M = 3 is narrower than a tile), and the weight is
 * the same for each index of dim 1, so the column blocks (k_outer) run
 * outside it and consecutive tasks share a panel of the weight. */
static void test_gemm_columns_outside_batch_golden(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=3 tile_cols=16 columns_outer=1");
  const kiln_op_t *op = &kiln_op_dense;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(4, 3, 8)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(32, 8))};
  const char *text = lowered_text(op, ATTRS(op, "units", "0"), 2, types, 512);
  assert_non_null(strstr(text, "for k_outer_j_fused_i_outer_fused in T.parallel(12):"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_gemm_sizes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_batch_and_sequence_first, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_attention, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_pack, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_unroll_k, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_default_config, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_sequence_first_golden, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_column_tail_golden, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_columns_outside_batch_golden, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
