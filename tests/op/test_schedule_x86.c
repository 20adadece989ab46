/*
 * The tuned x86 schedules of op/schedule_x86.c: TVM's conv2d_NCHWc
 * (register tile of reg_n output columns by the vectorized output-channel
 * block, accumulated locally, reduction ic_chunk, kh, kw, ic_block,
 * ow_block, oc_block, parallel over the fused n, oc_chunk, oh), its
 * depthwise form (a row accumulator per fused n, oc_chunk, oh, register
 * tiles of ow's divisor up to 14 or 8 with a tail, kh and kw unrolled, the
 * padding folded into the reads) and the GEMM of schedule_x86_dense.c
 * on small cases (its own tests are test_schedule_x86_dense.c).
 * Each is lowered and run against the reference kernel on shapes its
 * blocks divide and on shapes they do not, and a small case is checked as
 * printed loop IR so the loop structure itself is pinned.
 */
#include <string.h>

#include "kiln_compute_test.h"
#include "op/nn_conv_compute.h"

static const void *nchwc_attrs(const char *padding, const char *data, const char *kernel,
                               const char *out) {
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  return ATTRS(op, "padding", padding, "data_layout", data, "kernel_layout", kernel, "out_layout",
               out);
}

static void check_pair(const kiln_op_t *op, const void *attrs, int a_ndim, const int64_t *a_shape,
                       int b_ndim, const int64_t *b_shape) {
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, a_ndim, a_shape),
                                ttype(KILN_DTYPE_FLOAT32, b_ndim, b_shape)};
  check_compute_random(op, attrs, 2, types, -1.0, 1.0);
}

/* 64 input and 32 output channels in blocks of 16, ow 16 = two register
 * tiles. */
static void test_nchwc_blocks_divide(void **state) {
  (void)state;
  check_pair(&kiln_op_conv2d_nchwc,
             nchwc_attrs("[1, 1, 1, 1]", "\"NCHW16c\"", "\"OIHW16i16o\"", "\"NCHW16c\""), 5,
             SHAPE(1, 4, 6, 16, 16), 6, SHAPE(2, 4, 3, 3, 16, 16));
}

/* ow 17: two full tiles of 8 and a tail of 1; 20 output channels (5 blocks
 * of 4) with input blocks of 2. */
static void test_nchwc_tail(void **state) {
  (void)state;
  check_pair(&kiln_op_conv2d_nchwc,
             nchwc_attrs("[1, 1, 1, 1]", "\"NCHW16c\"", "\"OIHW16i16o\"", "\"NCHW16c\""), 5,
             SHAPE(1, 1, 5, 17, 16), 6, SHAPE(2, 1, 3, 3, 16, 16));
  check_pair(&kiln_op_conv2d_nchwc,
             nchwc_attrs("[0, 2, 1, 0]", "\"NCHW2c\"", "\"OIHW2i4o\"", "\"NCHW4c\""), 5,
             SHAPE(2, 3, 6, 15, 2), 6, SHAPE(5, 3, 2, 3, 2, 4));
}

/* ow 9: one register tile of 9 columns (tile_ow), no tail. */
static void test_nchwc_golden(void **state) {
  (void)state;
  check_compute_pin(
      "conv2d_nchwc tile_ow=9 tile_oc=1 block_oh=0 prefetch=0 unroll_ic=0 pad_rows=0");
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 1, 2, 9, 4)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(1, 1, 1, 2, 4, 4))};
  const char *text = lowered_text(
      &kiln_op_conv2d_nchwc,
      nchwc_attrs("[0, 0, 0, 1]", "\"NCHW4c\"", "\"OIHW4i4o\"", "\"NCHW4c\""), 2, types, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((1, 1, 2, 9, 4), \"float32\"), p1: T.Buffer((1, 1, 1, 2, 4, 4), "
            "\"float32\"), T_contrib_conv2d_NCHWc: T.Buffer((1, 1, 2, 9, 4), \"float32\")):\n"
            "    T_contrib_conv2d_NCHWc_pad = T.decl_buffer((1, 1, 2, 10, 4), \"float32\", "
            "scope=\"global\")\n"
            "    for i_j_fused_k_fused in T.parallel(2):\n"
            "        for l in T.serial(10):\n"
            "            for m in T.vectorized(4):\n"
            "                T_contrib_conv2d_NCHWc_pad[0, 0, i_j_fused_k_fused, l, m] = "
            "T.Select(l < 9, p0[0, 0, i_j_fused_k_fused, T.min(l, 8), m], T.float32(0.0))\n"
            "    for i_j_outer_fused_k_outer_fused in T.parallel(2):\n"
            "        for k_inner in T.serial(1):\n"
            "            for l_outer in T.serial(1):\n"
            "                T_contrib_conv2d_NCHWc_local = T.decl_buffer((1, 1, 1, 9, 4), "
            "\"float32\", scope=\"local\")\n"
            "                for i_c in T.serial(1):\n"
            "                    for k_c in T.serial(1):\n"
            "                        for j_c_init in T.unroll(1):\n"
            "                            for l_c_init in T.unroll(9):\n"
            "                                for m_c_init in T.vectorized(4):\n"
            "                                    T_contrib_conv2d_NCHWc_local[i_c, j_c_init, k_c, "
            "l_c_init, m_c_init] = T.float32(0.0)\n"
            "                        for ic_outer in T.serial(1):\n"
            "                            for kh in T.serial(1):\n"
            "                                for kw in T.serial(2):\n"
            "                                    for ic_inner in T.serial(4):\n"
            "                                        for j_c in T.unroll(1):\n"
            "                                            for l_c in T.unroll(9):\n"
            "                                                for m_c in T.vectorized(4):\n"
            "                                                    T_contrib_conv2d_NCHWc_local[i_c, "
            "j_c, k_c, l_c, m_c] = T_contrib_conv2d_NCHWc_local[i_c, j_c, k_c, l_c, m_c] + "
            "T_contrib_conv2d_NCHWc_pad[i_c, ic_outer, i_j_outer_fused_k_outer_fused + k_inner + "
            "k_c + kh, l_c + kw, ic_inner] * p1[j_c, ic_outer, kh, kw, ic_inner, m_c]\n"
            "                for j_inner in T.serial(1):\n"
            "                    for l_inner in T.serial(9):\n"
            "                        for m in T.vectorized(4):\n"
            "                            T_contrib_conv2d_NCHWc[0, j_inner, "
            "i_j_outer_fused_k_outer_fused + k_inner, l_outer * 9 + l_inner, m] = "
            "T_contrib_conv2d_NCHWc_local[0, j_inner, 0, l_outer * 9 + l_inner, m]\n");
}

/* The default knobs on ResNet's layers: two output chunks by up to 8
 * columns (16 accumulators), rows blocked when the kernel reduces enough
 * per input chunk (3x3 by 16: yes; 1x1: the register tile alone), as many
 * rows as 32 KiB of accumulator hold while 8 tasks remain; a row block of a
 * wide stride-1 conv with chunks in fours takes the 4 x 6 tile, and every
 * row block unrolls its input channels by 4; the register tile alone of a
 * stride-1 conv takes 4 x 6 or 3 x 8 where those fill the row. */
static void test_nchwc_default_config(void **state) {
  (void)state;
  kiln_schedule_target_t avx512 = {512};
  kiln_schedule_conv_shape_t c = {.n = 1,
                                  .oc_chunks = 4,
                                  .oh = 56,
                                  .ow = 56,
                                  .oc_block = 16,
                                  .groups = 1,
                                  .reduce_per_chunk = 144,
                                  .ic_chunks = 4,
                                  .ic_block = 16,
                                  .stride_w = 1};
  kiln_schedule_conv_config_t k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 4);
  assert_int_equal(k.tile_ow, 6);  /* 9 tiles and a tail of 2 */
  assert_int_equal(k.block_oh, 2); /* 2 rows x 56 x 4 x 64 bytes = 28 KiB */
  assert_int_equal(k.prefetch, KILN_SCHEDULE_NCHWC_PREFETCH);
  assert_int_equal(k.unroll_ic, 4);
  assert_int_equal(k.pad_rows, 0); /* no padding */
  c.stride_h = 1, c.kh = 3, c.padded_w = 58;
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.pad_rows, 1); /* one output tile; 4 rows x 58 x 64 bytes = 14.5 KiB */
  c.oc_chunks = 16, c.ow = 14, c.oh = 14, c.padded_w = 16; /* 8 output tiles of 2 chunks */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.pad_rows, 0);
  c.stride_w = 2, c.stride_h = 2, c.oc_chunks = 8, c.oh = 28, c.ow = 28, c.padded_w = 0;
  k = kiln_schedule_conv_x86_config(&avx512, &c); /* strided: the 2 x 8 tile */
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.tile_ow, 7);
  assert_int_equal(k.block_oh, 7); /* 7 rows x 28 x 2 x 64 bytes = 24.5 KiB, 16 tasks */
  c.stride_w = 1, c.oc_chunks = 32, c.oh = 7, c.ow = 7; /* narrow: the 2 x 7 tile */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.tile_ow, 7);
  assert_int_equal(k.block_oh, 7);
  c.oc_chunks = 4, c.reduce_per_chunk = 16; /* a 1x1 conv, 7 wide: 4 x 6 fills 58% */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.block_oh, 0);
  assert_int_equal(k.prefetch, 0);
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.tile_ow, 7);
  c.ow = 55; /* 55 wide: 9 tiles of 6 and a tail of 1 */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 4);
  assert_int_equal(k.tile_ow, 6);
  c.oc_chunks = 63, c.ow = 13; /* a 1000-class classifier: 3 x 8, a tail of 5 */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 3);
  assert_int_equal(k.tile_ow, 8);
  c.oc_chunks = 4, c.reduce_per_chunk = 147, c.ic_chunks = 1, c.stride_w = 2, c.ow = 112;
  k = kiln_schedule_conv_x86_config(&avx512, &c); /* a 7x7 stem: one chunk, strided */
  assert_int_equal(k.block_oh, 0);
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.tile_ow, 8);
  c.oc_chunks = 3, c.groups = 1, c.ow = 17; /* odd chunks: one; no divisor in 7..14 */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 1);
  assert_int_equal(k.tile_ow, 14);
  c.oc_chunks = 4, c.reduce_per_chunk = 144, c.ic_chunks = 2, c.stride_w = 1;
  c.oh = 147, c.ow = 147; /* Inception v3: a row of the wide tile's 4 chunks is 37 KiB */
  k = kiln_schedule_conv_x86_config(&avx512, &c);
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.tile_ow, 7); /* 147 = 21 x 7 */
  assert_int_equal(k.block_oh, 1);
}

/* AVX2's 16 vector registers: the accumulators halve (the wide tile 2
 * chunks by 6 columns, the default tile 12 accumulators), an output chunk
 * of 16 lanes on 8-lane vectors counts twice, and a target with more cores
 * keeps more row-block tasks. */
static void test_nchwc_config_registers(void **state) {
  (void)state;
  kiln_schedule_target_t avx2 = {256};
  kiln_schedule_conv_shape_t c = {.n = 1,
                                  .oc_chunks = 8,
                                  .oh = 56,
                                  .ow = 56,
                                  .oc_block = 8,
                                  .groups = 1,
                                  .reduce_per_chunk = 72,
                                  .ic_chunks = 8,
                                  .ic_block = 8,
                                  .stride_w = 1};
  assert_int_equal(kiln_schedule_vector_registers(&avx2), 16);
  kiln_schedule_conv_config_t k = kiln_schedule_conv_x86_config(&avx2, &c);
  assert_int_equal(k.tile_oc, 2);
  assert_int_equal(k.tile_ow, 6);
  c.oh = 14, c.ow = 14, c.oc_chunks = 32; /* 2 x 7: 14 accumulators do not fit, 2 x 2 do */
  k = kiln_schedule_conv_x86_config(&avx2, &c);
  assert_int_equal(k.tile_oc, 2);
  assert_true(k.tile_oc * k.tile_ow <= 12);
  c.oc_block = 16; /* two vectors a chunk: 6 chunk columns */
  k = kiln_schedule_conv_x86_config(&avx2, &c);
  assert_true(k.tile_oc * k.tile_ow <= 6);
  kiln_schedule_target_t many = {512, .num_cores = 8};
  c.oc_block = 16, c.oc_chunks = 4, c.oh = 56, c.ow = 56, c.reduce_per_chunk = 144;
  k = kiln_schedule_conv_x86_config(&many, &c); /* 32 tasks: 56 / 2 rows = 28 is too few */
  assert_int_equal(k.block_oh, 1);
}

/* Row blocks: 2 images, 2 input chunks, 4 output chunks in pairs, 9 rows
 * in blocks of 3, 12 columns in tiles of 6; strides 2 over 19 rows; 3
 * output chunks (one per tile) over 7 rows of 5 columns; and the row
 * block's loops pinned, its input-chunk loop marked for prefetch. */
static void test_nchwc_row_blocks(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  const void *same = nchwc_attrs("[1, 1, 1, 1]", "\"NCHW16c\"", "\"OIHW16i16o\"", "\"NCHW16c\"");
  check_pair(op, same, 5, SHAPE(2, 2, 9, 12, 16), 6, SHAPE(4, 2, 3, 3, 16, 16));
  check_pair(op,
             ATTRS(op, "strides", "[2, 2]", "padding", "[1, 1, 1, 1]", "data_layout", "\"NCHW16c\"",
                   "kernel_layout", "\"OIHW16i16o\"", "out_layout", "\"NCHW16c\""),
             5, SHAPE(1, 2, 19, 13, 16), 6, SHAPE(2, 2, 3, 3, 16, 16));
  check_pair(op, same, 5, SHAPE(1, 2, 7, 5, 16), 6, SHAPE(3, 2, 3, 3, 16, 16));
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(2, 2, 9, 12, 16)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(4, 2, 3, 3, 16, 16))};
  check_compute_pin(
      "conv2d_nchwc tile_ow=6 tile_oc=2 block_oh=3 prefetch=2 unroll_ic=4 pad_rows=0");
  const char *text = lowered_text(op, same, 2, types, 512);
  assert_non_null(strstr(text, "T.decl_buffer((1, 2, 3, 12, 16), \"float32\", scope=\"local\")"));
  assert_non_null(strstr(text, "T.parallel(12)"));
  assert_non_null(strstr(text, "for ic_outer in T.serial(2, annotations={\"prefetch\": \"2\"}):\n"
                               "                for k_c in T.serial(3):"));
  assert_non_null(strstr(text, "for l_c_inner in T.unroll(6):"));
}

/* pad_rows: each row block copies the padded rows of one input chunk it
 * reads into a local buffer at its input-chunk loop (no whole padded
 * tensor); against the reference with symmetric, asymmetric and strided
 * padding, and a row block's copy pinned: 3 rows + 2 of the kernel, 12
 * columns + 2 of padding, one chunk. */
static void test_nchwc_pad_rows(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  const void *same = nchwc_attrs("[1, 1, 1, 1]", "\"NCHW16c\"", "\"OIHW16i16o\"", "\"NCHW16c\"");
  check_compute_pin(
      "conv2d_nchwc tile_ow=6 tile_oc=2 block_oh=3 prefetch=2 unroll_ic=4 pad_rows=1");
  check_pair(op, same, 5, SHAPE(2, 2, 9, 12, 16), 6, SHAPE(4, 2, 3, 3, 16, 16));
  check_pair(op, nchwc_attrs("[0, 2, 1, 0]", "\"NCHW4c\"", "\"OIHW4i4o\"", "\"NCHW4c\""), 5,
             SHAPE(1, 3, 7, 15, 4), 6, SHAPE(4, 3, 3, 3, 4, 4));
  check_pair(op,
             ATTRS(op, "strides", "[2, 2]", "padding", "[1, 1, 1, 1]", "data_layout", "\"NCHW16c\"",
                   "kernel_layout", "\"OIHW16i16o\"", "out_layout", "\"NCHW16c\""),
             5, SHAPE(1, 2, 19, 13, 16), 6, SHAPE(2, 2, 3, 3, 16, 16));
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(2, 2, 9, 12, 16)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(4, 2, 3, 3, 16, 16))};
  const char *text = lowered_text(op, same, 2, types, 512);
  assert_non_null(strstr(text, "T.decl_buffer((1, 1, 5, 14, 16), \"float32\", scope=\"local\")"));
  assert_null(strstr(text, "T.decl_buffer((2, 2, 11, 14, 16)"));
}

static const void *depthwise_attrs(const char *strides, const char *padding, const char *groups,
                                   const char *data, const char *kernel) {
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  return ATTRS(op, "strides", strides, "padding", padding, "groups", groups, "data_layout", data,
               "kernel_layout", kernel, "out_layout", data);
}

/* Depthwise: 64 channels in blocks of 16, ow 16 = two register tiles, with
 * strides 1 and 2. */
static void test_depthwise_blocks_divide(void **state) {
  (void)state;
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[1, 1]", "[1, 1, 1, 1]", "64", "\"NCHW16c\"", "\"OIHW1i16o\""), 5,
             SHAPE(1, 4, 6, 16, 16), 6, SHAPE(4, 1, 3, 3, 1, 16));
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[2, 2]", "[0, 0, 1, 1]", "64", "\"NCHW16c\"", "\"OIHW1i16o\""), 5,
             SHAPE(1, 4, 8, 32, 16), 6, SHAPE(4, 1, 3, 3, 1, 16));
}

/* ow 17 and 19 (no divisor from 14 down to 7): tiles of 8 and a tail; ow
 * 13, one tile of 13; odd heights and blocks. */
static void test_depthwise_tail(void **state) {
  (void)state;
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[1, 1]", "[1, 1, 1, 1]", "16", "\"NCHW16c\"", "\"OIHW1i16o\""), 5,
             SHAPE(1, 1, 5, 17, 16), 6, SHAPE(1, 1, 3, 3, 1, 16));
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[2, 2]", "[1, 1, 1, 1]", "15", "\"NCHW5c\"", "\"OIHW1i5o\""), 5,
             SHAPE(2, 3, 7, 37, 5), 6, SHAPE(3, 1, 3, 3, 1, 5));
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[1, 1]", "[0, 1, 2, 1]", "32", "\"NCHW16c\"", "\"OIHW1i16o\""), 5,
             SHAPE(1, 2, 6, 13, 16), 6, SHAPE(2, 1, 3, 3, 1, 16));
}

/* Grouped convs with blocks inside groups (alter_op_layout's ResNeXt form:
 * data NCHW{ib}c, weight OIHW1i{ob}o, output NCHW{ob}c): the register-tile
 * schedule with ic split by the data block. 8 groups of 4 (ResNeXt
 * 32x4d's width), 2 groups of 16 with stride 2, 3 groups of 4 inputs and
 * 8 outputs with ow 13 (a tile and a tail), blocks below the group sizes. */
static void test_grouped_blocks_inside_groups(void **state) {
  (void)state;
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[1, 1]", "[1, 1, 1, 1]", "8", "\"NCHW4c\"", "\"OIHW1i4o\""), 5,
             SHAPE(1, 8, 6, 16, 4), 6, SHAPE(8, 4, 3, 3, 1, 4));
  check_pair(&kiln_op_conv2d_nchwc,
             depthwise_attrs("[2, 2]", "[1, 1, 1, 1]", "2", "\"NCHW16c\"", "\"OIHW1i16o\""), 5,
             SHAPE(1, 2, 9, 18, 16), 6, SHAPE(2, 16, 3, 3, 1, 16));
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  check_pair(op,
             ATTRS(op, "groups", "3", "padding", "[0, 1, 2, 1]", "data_layout", "\"NCHW4c\"",
                   "kernel_layout", "\"OIHW1i8o\"", "out_layout", "\"NCHW8c\""),
             5, SHAPE(2, 3, 5, 13, 4), 6, SHAPE(3, 4, 3, 3, 1, 8));
  check_pair(op,
             ATTRS(op, "groups", "2", "data_layout", "\"NCHW4c\"", "kernel_layout", "\"OIHW1i2o\"",
                   "out_layout", "\"NCHW2c\""),
             5, SHAPE(1, 4, 4, 9, 4), 6, SHAPE(4, 8, 1, 1, 1, 2));
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 8, 6, 16, 4)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(8, 4, 3, 3, 1, 4))};
  const char *text =
      passed_text(op, depthwise_attrs("[1, 1]", "[1, 1, 1, 1]", "8", "\"NCHW4c\"", "\"OIHW1i4o\""),
                  2, types, 512);
  assert_non_null(strstr(text, "T_contrib_conv2d_NCHWc_local"));
}

/* The depthwise loop nest: per (n, oc_chunk, oh) a local row accumulator,
 * its ow split into register tiles of 9 (ow's divisor), each reducing kh
 * and kw (unrolled) over the unrolled ow_block and the vectorized oc_block,
 * the padding folded into the reads (no pad stage); then the row copied
 * out. */
static void test_depthwise_golden(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 1, 2, 9, 4)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(1, 1, 1, 2, 1, 4))};
  check_compute_pin(
      "conv2d_nchwc tile_ow=8 tile_oc=1 block_oh=0 prefetch=0 unroll_ic=0 pad_rows=0");
  const char *text = lowered_text(
      &kiln_op_conv2d_nchwc,
      depthwise_attrs("[1, 1]", "[0, 0, 0, 1]", "4", "\"NCHW4c\"", "\"OIHW1i4o\""), 2, types, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((1, 1, 2, 9, 4), \"float32\"), p1: T.Buffer((1, 1, 1, 2, 1, 4), "
            "\"float32\"), T_contrib_conv2d_NCHWc: T.Buffer((1, 1, 2, 9, 4), \"float32\")):\n"
            "    for i_j_fused_k_fused in T.parallel(2):\n"
            "        T_contrib_conv2d_NCHWc_local = T.decl_buffer((1, 1, 1, 9, 4), \"float32\", "
            "scope=\"local\")\n"
            "        for i_c in T.serial(1):\n"
            "            for j_c in T.serial(1):\n"
            "                for k_c in T.serial(1):\n"
            "                    for l_c_outer in T.serial(1):\n"
            "                        for l_c_inner_init in T.unroll(9):\n"
            "                            for m_c_init in T.vectorized(4):\n"
            "                                T_contrib_conv2d_NCHWc_local[i_c, j_c, k_c, l_c_outer "
            "* 9 + l_c_inner_init, m_c_init] = T.float32(0.0)\n"
            "                        for ic in T.serial(1):\n"
            "                            for kh in T.unroll(1):\n"
            "                                for kw in T.unroll(2):\n"
            "                                    for l_c_inner in T.unroll(9):\n"
            "                                        for m_c in T.vectorized(4):\n"
            "                                            T_contrib_conv2d_NCHWc_local[i_c, j_c, "
            "k_c, l_c_outer * 9 + l_c_inner, m_c] = T_contrib_conv2d_NCHWc_local[i_c, j_c, k_c, "
            "l_c_outer * 9 + l_c_inner, m_c] + T.Select(l_c_outer * 9 + l_c_inner + kw < 9, "
            "p0[i_c, j_c, i_j_fused_k_fused + k_c + kh, T.min(l_c_outer * 9 + l_c_inner + kw, 8), "
            "m_c], T.float32(0.0)) * p1[j_c, ic, kh, kw, 0, m_c]\n"
            "        for l in T.serial(9):\n"
            "            for m in T.vectorized(4):\n"
            "                T_contrib_conv2d_NCHWc[0, 0, i_j_fused_k_fused, l, m] = "
            "T_contrib_conv2d_NCHWc_local[0, 0, 0, l, m]\n");
}

/* 32x64 . (48x64)^T: 4 x 2 tiles of 8 x 32 (the last half full). */
static void test_dense_blocks_divide(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense;
  check_pair(op, ATTRS(op, "units", "48"), 2, SHAPE(32, 64), 2, SHAPE(48, 64));
}

/* 7x13 with 5 units, and 23 x 37 by 29: tails in rows and columns. */
static void test_dense_tail(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense;
  check_pair(op, ATTRS(op, "units", "5"), 2, SHAPE(7, 13), 2, SHAPE(5, 13));
  check_pair(op, ATTRS(op, "units", "0"), 2, SHAPE(23, 29), 2, SHAPE(37, 29));
  check_pair(&kiln_op_matmul, NULL, 2, SHAPE(9, 6), 2, SHAPE(6, 19));
}

static void test_dense_golden(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=6 tile_cols=4 columns_outer=1");
  const kiln_op_t *op = &kiln_op_dense;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 3)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 3))};
  const char *text = lowered_text(op, ATTRS(op, "units", "0"), 2, types, 128);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((6, 3), \"float32\"), p1: T.Buffer((5, 3), \"float32\"), "
            "T_dense: T.Buffer((6, 5), \"float32\")):\n"
            "    for j_outer_i_outer_fused in T.parallel(2):\n"
            "        T_dense_local = T.decl_buffer((6, 4), \"float32\", scope=\"local\")\n"
            "        for i_c_init in T.unroll(6):\n"
            "            for j_c_init in T.vectorized(4):\n"
            "                if j_outer_i_outer_fused * 4 + j_c_init < 5:\n"
            "                    T_dense_local[i_c_init, j_c_init] = T.float32(0.0)\n"
            "        for rk in T.serial(3):\n"
            "            for i_c in T.unroll(6):\n"
            "                for j_c in T.vectorized(4):\n"
            "                    if j_outer_i_outer_fused * 4 + j_c < 5:\n"
            "                        T_dense_local[i_c, j_c] = T_dense_local[i_c, j_c] + p0[i_c, "
            "rk] * p1[j_outer_i_outer_fused * 4 + j_c, rk]\n"
            "        for i_inner in T.serial(6):\n"
            "            for j_inner in T.vectorized(4):\n"
            "                if j_outer_i_outer_fused * 4 + j_inner < 5:\n"
            "                    T_dense[i_inner, j_outer_i_outer_fused * 4 + j_inner] = "
            "T_dense_local[i_inner, j_inner]\n");
}

/* Layouts other than NCHW{c}c / OIHW{i}i{o}o, and products whose output
 * has rank 1 (a vector's), take the default schedule: no local buffer. */
static void test_fallback_default(void **state) {
  (void)state;
  check_compute_pin("gemm tile_rows=3 tile_cols=5 columns_outer=1");
  const kiln_type_t *conv[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 3, 3, 1, 4)),
                               ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(1, 1, 1, 1, 4, 4))};
  const char *text = lowered_text(
      &kiln_op_conv2d_nchwc,
      nchwc_attrs("[0, 0, 0, 0]", "\"NHWC4c\"", "\"OIHW4i4o\"", "\"NHWC4c\""), 2, conv, 512);
  assert_null(strstr(text, "local"));
  const kiln_type_t *dense[] = {ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(4)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 4))};
  text = lowered_text(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "0"), 2, dense, 512);
  assert_null(strstr(text, "local"));
  const kiln_type_t *matrix[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4)),
                                 ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 4))};
  text = lowered_text(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "0"), 2, matrix, 512);
  assert_non_null(strstr(text, "scope=\"local\""));
}

/* Lowering through the three schedules (and the conv2d and gemm rules) with
 * every allocation of the arena made to fail in turn. */
typedef struct lower_case_t {
  const kiln_op_t *op;
  const void *attrs;
  const kiln_type_t *types[2];
} lower_case_t;

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  const lower_case_t *cases = context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {512};
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < 3 && !status; ++i) {
    const kiln_tir_prim_func_t *func = NULL;
    status = kiln_op_lower(cases[i].op, cases[i].attrs, 2, cases[i].types, &target, &arena, "main",
                           &func);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  lower_case_t cases[3] = {
      {&kiln_op_conv2d_nchwc,
       nchwc_attrs("[1, 0, 0, 1]", "\"NCHW4c\"", "\"OIHW4i4o\"", "\"NCHW4c\""),
       {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 1, 3, 9, 4)),
        ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(1, 1, 2, 2, 4, 4))}},
      {&kiln_op_conv2d_nchwc,
       depthwise_attrs("[2, 2]", "[1, 1, 1, 1]", "8", "\"NCHW4c\"", "\"OIHW1i4o\""),
       {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, 2, 5, 9, 4)),
        ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(2, 1, 3, 3, 1, 4))}},
      {&kiln_op_dense,
       ATTRS(&kiln_op_dense, "units", "0"),
       {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(7, 13)), ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 13))}},
  };
  KILN_ASSERT_OK(lower_scenario(kiln_allocator_system(), cases));
  assert_true(kiln_test_sweep_allocation_failures(lower_scenario, cases) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_depthwise_blocks_divide, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depthwise_tail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depthwise_golden, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grouped_blocks_inside_groups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_blocks_divide, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_tail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_golden, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_default_config, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_config_registers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_row_blocks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nchwc_pad_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_blocks_divide, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_tail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_golden, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fallback_default, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
