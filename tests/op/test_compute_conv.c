/*
 * Compute rules of nn.conv2d, nn.contrib_conv2d_NCHWc, nn.conv3d,
 * nn.conv2d_transpose and nn.conv3d_transpose (op/nn_conv_compute.h), lowered (the default
 * schedule; the NCHWc form with its x86 schedule) and run on the loop-IR
 * interpreter against the reference kernels, on odd shapes and every
 * attribute the references take: strides, four-sided padding, dilation,
 * groups (depthwise included), NHWC/HWIO layouts, channel blocks; the
 * NCHWc form with groups: depthwise on its x86 tile (strides 1 and 2,
 * padding, odd sizes, ow tails), other blocks and general groups; the 3-D
 * forms with strides, six-sided padding, dilation, groups, output_padding
 * and NDHWC / DHWIO storage.
 */
#include "kiln_compute_test.h"
#include "op/nn_conv_compute.h"

static void check_conv(const kiln_op_t *op, const void *attrs, const int64_t *data_shape,
                       int data_ndim, const int64_t *weight_shape, int weight_ndim) {
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, data_ndim, data_shape),
                                ttype(KILN_DTYPE_FLOAT32, weight_ndim, weight_shape)};
  check_compute_random(op, attrs, 2, types, -1.0, 1.0);
}

static void test_conv2d_stride_padding(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d;
  const void *attrs = ATTRS(op, "strides", "[2, 2]", "padding", "[1, 1, 1, 1]");
  check_conv(op, attrs, SHAPE(1, 3, 17, 23), 4, SHAPE(5, 3, 3, 3), 4);
  /* no padding: no pad stage */
  check_conv(op, ATTRS(op, "strides", "[2, 1]"), SHAPE(2, 3, 9, 8), 4, SHAPE(4, 3, 2, 3), 4);
}

static void test_conv2d_groups(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d;
  /* groups 3, two outputs per group */
  check_conv(op, ATTRS(op, "strides", "[2, 2]", "padding", "[1, 1, 1, 1]", "groups", "3"),
             SHAPE(1, 3, 17, 23), 4, SHAPE(6, 1, 3, 3), 4);
  /* depthwise */
  check_conv(op, ATTRS(op, "padding", "[1, 1, 1, 1]", "groups", "3"), SHAPE(1, 3, 17, 23), 4,
             SHAPE(3, 1, 3, 3), 4);
  /* groups 2 with 2 input channels each */
  check_conv(op, ATTRS(op, "groups", "2", "padding", "[0, 1, 2, 0]"), SHAPE(2, 4, 7, 5), 4,
             SHAPE(6, 2, 2, 3), 4);
}

static void test_conv2d_dilation_asymmetric(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d;
  /* 17 output channels (not a multiple of 16), dilation 2, pads t1 l2 b0 r3 */
  check_conv(op, ATTRS(op, "strides", "[1, 2]", "dilation", "[2, 2]", "padding", "[1, 2, 0, 3]"),
             SHAPE(2, 6, 11, 13), 4, SHAPE(17, 6, 3, 2), 4);
}

static void test_conv2d_layouts(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d;
  check_conv(op,
             ATTRS(op, "padding", "[1, 0, 1, 2]", "strides", "[2, 1]", "data_layout", "\"NHWC\"",
                   "kernel_layout", "\"HWIO\""),
             SHAPE(1, 9, 7, 5), 4, SHAPE(3, 3, 5, 4), 4);
  check_conv(op,
             ATTRS(op, "padding", "[1, 1, 1, 1]", "groups", "5", "data_layout", "\"NHWC\"",
                   "kernel_layout", "\"HWOI\"", "out_layout", "\"NCHW\""),
             SHAPE(1, 6, 7, 5), 4, SHAPE(3, 3, 5, 1), 4);
}

static void test_conv2d_nchwc(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  /* C 8 in blocks of 4, O 16 in blocks of 8; ow 9 (a tail of the register tile) */
  check_conv(op,
             ATTRS(op, "padding", "[1, 1, 1, 1]", "data_layout", "\"NCHW4c\"", "kernel_layout",
                   "\"OIHW4i8o\"", "out_layout", "\"NCHW8c\""),
             SHAPE(1, 2, 7, 9, 4), 5, SHAPE(2, 2, 3, 3, 4, 8), 6);
  /* strides, dilation, no padding */
  check_conv(op,
             ATTRS(op, "strides", "[2, 1]", "dilation", "[1, 2]", "data_layout", "\"NCHW2c\"",
                   "kernel_layout", "\"OIHW2i4o\"", "out_layout", "\"NCHW4c\""),
             SHAPE(2, 3, 9, 11, 2), 5, SHAPE(3, 3, 2, 3, 2, 4), 6);
  /* the wide row-block tile: 4 output chunks by 6 columns over ow 25 (4
   * tiles and a tail of 1), 2 input chunks of 16 (3x3: a row block), the
   * input-channel loop unrolled by 4 */
  check_conv(op,
             ATTRS(op, "padding", "[1, 1, 1, 1]", "data_layout", "\"NCHW16c\"", "kernel_layout",
                   "\"OIHW16i4o\"", "out_layout", "\"NCHW4c\""),
             SHAPE(1, 2, 3, 25, 16), 5, SHAPE(4, 2, 3, 3, 16, 4), 6);
  /* another primal order: the default schedule */
  check_conv(op,
             ATTRS(op, "padding", "[1, 1, 1, 1]", "data_layout", "\"NHWC4c\"", "kernel_layout",
                   "\"OIHW4i4o\"", "out_layout", "\"NHWC4c\""),
             SHAPE(1, 5, 6, 1, 4), 5, SHAPE(2, 1, 3, 3, 4, 4), 6);
}

/* Depthwise NCHWc (groups == C == O, weight OIHW1i{b}o): with data and
 * output in one block, the x86 depthwise tile; other blocks and general
 * groups, the default schedule. */
static void test_conv2d_nchwc_depthwise(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  /* 32 channels in blocks of 16, stride 1, pad 1, ow 9 (a tail of the tile) */
  check_conv(op,
             ATTRS(op, "padding", "[1, 1, 1, 1]", "groups", "32", "data_layout", "\"NCHW16c\"",
                   "kernel_layout", "\"OIHW1i16o\"", "out_layout", "\"NCHW16c\""),
             SHAPE(1, 2, 7, 9, 16), 5, SHAPE(2, 1, 3, 3, 1, 16), 6);
  /* stride 2, odd sizes, 12 channels in blocks of 4, batch 2 */
  check_conv(op,
             ATTRS(op, "strides", "[2, 2]", "padding", "[1, 1, 1, 1]", "groups", "12",
                   "data_layout", "\"NCHW4c\"", "kernel_layout", "\"OIHW1i4o\"", "out_layout",
                   "\"NCHW4c\""),
             SHAPE(2, 3, 11, 13, 4), 5, SHAPE(3, 1, 3, 3, 1, 4), 6);
  /* asymmetric pads, strides 2 and 1, dilation, a 5x3 kernel */
  check_conv(op,
             ATTRS(op, "strides", "[2, 1]", "dilation", "[1, 2]", "padding", "[0, 2, 1, 0]",
                   "groups", "8", "data_layout", "\"NCHW8c\"", "kernel_layout", "\"OIHW1i8o\"",
                   "out_layout", "\"NCHW8c\""),
             SHAPE(1, 1, 9, 10, 8), 5, SHAPE(1, 1, 5, 3, 1, 8), 6);
  /* no padding: no pad stage */
  check_conv(op,
             ATTRS(op, "groups", "6", "data_layout", "\"NCHW2c\"", "kernel_layout", "\"OIHW1i2o\"",
                   "out_layout", "\"NCHW2c\""),
             SHAPE(1, 3, 5, 6, 2), 5, SHAPE(3, 1, 3, 3, 1, 2), 6);
  /* data in blocks of 4, output in blocks of 8: the default schedule */
  check_conv(op,
             ATTRS(op, "padding", "[1, 1, 1, 1]", "groups", "16", "data_layout", "\"NCHW4c\"",
                   "kernel_layout", "\"OIHW1i8o\"", "out_layout", "\"NCHW8c\""),
             SHAPE(1, 4, 5, 7, 4), 5, SHAPE(2, 1, 3, 3, 1, 8), 6);
  /* groups 2 with 4 input and 6 output channels each (not depthwise) */
  check_conv(op,
             ATTRS(op, "padding", "[1, 0, 0, 1]", "groups", "2", "data_layout", "\"NCHW4c\"",
                   "kernel_layout", "\"OIHW1i4o\"", "out_layout", "\"NCHW4c\""),
             SHAPE(1, 2, 5, 6, 4), 5, SHAPE(3, 4, 3, 2, 1, 4), 6);
}

static void test_conv2d_transpose(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_transpose;
  check_conv(op,
             ATTRS(op, "strides", "[2, 2]", "padding", "[1, 0, 1, 1]", "output_padding", "[1, 0]"),
             SHAPE(1, 4, 5, 7), 4, SHAPE(4, 3, 3, 3), 4);
  check_conv(op, ATTRS(op, "groups", "2", "dilation", "[2, 1]", "strides", "[1, 3]"),
             SHAPE(2, 4, 5, 3), 4, SHAPE(4, 3, 2, 3), 4);
  /* depthwise, NHWC data and HWIO weight */
  check_conv(op,
             ATTRS(op, "groups", "3", "strides", "[3, 2]", "padding", "[2, 1, 0, 0]", "data_layout",
                   "\"NHWC\"", "kernel_layout", "\"HWIO\""),
             SHAPE(1, 4, 5, 3), 4, SHAPE(3, 3, 3, 1), 4);
}

static void test_conv3d(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv3d;
  /* strides, dilation, six different pads */
  check_conv(
      op,
      ATTRS(op, "strides", "[2, 1, 2]", "dilation", "[1, 2, 1]", "padding", "[1, 0, 2, 0, 1, 1]"),
      SHAPE(1, 3, 5, 6, 7), 5, SHAPE(4, 3, 2, 3, 2), 5);
  /* groups 2 with 2 outputs each, no padding: no pad stage */
  check_conv(op, ATTRS(op, "groups", "2"), SHAPE(2, 4, 3, 4, 5), 5, SHAPE(4, 2, 2, 2, 3), 5);
  /* depthwise in NDHWC / DHWIO */
  check_conv(op,
             ATTRS(op, "groups", "3", "padding", "[1, 1, 1, 1, 1, 1]", "data_layout", "\"NDHWC\"",
                   "kernel_layout", "\"DHWIO\""),
             SHAPE(1, 4, 5, 3, 3), 5, SHAPE(3, 3, 2, 1, 3), 5);
}

static void test_conv3d_transpose(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv3d_transpose;
  check_conv(op,
             ATTRS(op, "strides", "[2, 1, 2]", "padding", "[1, 0, 1, 0, 1, 0]", "output_padding",
                   "[1, 0, 1]"),
             SHAPE(1, 3, 3, 4, 3), 5, SHAPE(3, 2, 3, 2, 3), 5);
  check_conv(op, ATTRS(op, "groups", "2", "dilation", "[2, 1, 1]", "strides", "[1, 3, 1]"),
             SHAPE(2, 4, 3, 2, 3), 5, SHAPE(4, 2, 2, 3, 2), 5);
  /* NDHWC data, DHWIO weight */
  check_conv(op,
             ATTRS(op, "strides", "[1, 2, 2]", "padding", "[0, 1, 0, 1, 0, 1]", "data_layout",
                   "\"NDHWC\"", "kernel_layout", "\"DHWIO\""),
             SHAPE(1, 2, 3, 4, 2), 5, SHAPE(2, 3, 3, 2, 3), 5);
}

static void test_dtype_unimplemented(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_conv2d, &kiln_op_conv2d_transpose, &kiln_op_conv2d_nchwc};
  const char *messages[] = {"nn.conv2d: no compute rule for dtype int32",
                            "nn.conv2d_transpose: no compute rule for dtype int32",
                            "nn.contrib_conv2d_NCHWc: no compute rule for dtype int32"};
  for (int i = 0; i < 3; ++i) {
    const kiln_type_t *types[] = {i < 2 ? ttype(KILN_DTYPE_INT32, 4, SHAPE(1, 3, 5, 5))
                                        : ttype(KILN_DTYPE_INT32, 5, SHAPE(1, 1, 5, 5, 16)),
                                  i < 2 ? ttype(KILN_DTYPE_INT32, 4, SHAPE(3, 3, 3, 3))
                                        : ttype(KILN_DTYPE_INT32, 6, SHAPE(1, 1, 3, 3, 16, 16))};
    kiln_schedule_target_t target = {512};
    const kiln_tir_prim_func_t *func = NULL;
    KILN_ASSERT_STATUS(kiln_op_lower(ops[i], ATTRS(ops[i], "groups", "1"), 2, types, &target,
                                     &kiln_op_test_arena, "main", &func),
                       UNIMPLEMENTED, messages[i]);
    assert_null(func);
  }
  const kiln_op_t *ops3[] = {&kiln_op_conv3d, &kiln_op_conv3d_transpose};
  for (int i = 0; i < 2; ++i) {
    const kiln_type_t *types[] = {ttype(KILN_DTYPE_INT32, 5, SHAPE(1, 2, 3, 3, 3)),
                                  ttype(KILN_DTYPE_INT32, 5, SHAPE(2, 2, 1, 1, 1))};
    kiln_schedule_target_t target = {512};
    const kiln_tir_prim_func_t *func = NULL;
    KILN_ASSERT_STATUS(kiln_op_lower(ops3[i], attrs_with(ops3[i], NULL), 2, types, &target,
                                     &kiln_op_test_arena, "main", &func),
                       UNIMPLEMENTED, "no compute rule for dtype int32");
    assert_null(func);
  }
}

static void test_golden_conv2d(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 3, 3)),
                                ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 2, 2))};
  const char *text =
      lowered_text(op, ATTRS(op, "padding", "[1, 0, 0, 0]", "strides", "[1, 2]"), 2, types, 512);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((1, 1, 3, 3), \"float32\"), p1: T.Buffer((2, 1, 2, 2), "
            "\"float32\"), T_conv2d: T.Buffer((1, 2, 3, 1), \"float32\")):\n"
            "    for i_j_fused_k_fused_l_fused in T.parallel(6):\n"
            "        T_conv2d[0, i_j_fused_k_fused_l_fused // 3, i_j_fused_k_fused_l_fused % 3, 0] "
            "= T.float32(0.0)\n"
            "        for ic in T.serial(1):\n"
            "            for kh in T.serial(2):\n"
            "                for kw in T.serial(2):\n"
            "                    T_conv2d[0, i_j_fused_k_fused_l_fused // 3, "
            "i_j_fused_k_fused_l_fused % 3, 0] = T_conv2d[0, i_j_fused_k_fused_l_fused // 3, "
            "i_j_fused_k_fused_l_fused % 3, 0] + T.Select(i_j_fused_k_fused_l_fused % 3 + kh - 1 "
            ">= 0, p0[0, ic, T.max(i_j_fused_k_fused_l_fused % 3 + kh - 1, 0), kw], "
            "T.float32(0.0)) * p1[i_j_fused_k_fused_l_fused // 3, ic, kh, kw]\n");
}

static void test_every_op_has_a_rule(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_conv2d, &kiln_op_conv2d_nchwc,     &kiln_op_conv2d_transpose,
                            &kiln_op_conv3d, &kiln_op_conv3d_transpose, &kiln_op_dense,
                            &kiln_op_matmul, &kiln_op_batch_matmul};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    assert_non_null(kiln_op_compute_get(ops[i]->id));
  }
  assert_ptr_equal(kiln_op_strategy_get(kiln_op_conv2d_nchwc.id, KILN_TARGET_KIND_CPU),
                   kiln_schedule_conv2d_nchwc_x86);
  assert_ptr_equal(kiln_op_strategy_get(kiln_op_dense.id, KILN_TARGET_KIND_CPU),
                   kiln_schedule_dense_x86);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_conv2d_stride_padding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv2d_groups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv2d_dilation_asymmetric, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv2d_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv2d_nchwc, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv2d_nchwc_depthwise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv2d_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv3d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv3d_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dtype_unimplemented, setup, teardown),
      cmocka_unit_test_setup_teardown(test_golden_conv2d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_op_has_a_rule, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
