/*
 * Tests of nn.conv2d and nn.contrib_conv2d_NCHWc: attribute defaults and
 * validation, the type relation with every error, the layout rule, and the
 * reference kernel against hand-computed numbers and against a direct
 * seven-loop convolution written here (odd shapes, strides, asymmetric
 * padding, dilation, groups, depthwise), NHWC/HWIO against NCHW/OIHW, and
 * the NCHWc kernel against conv2d bit for bit on data blocked by
 * layout_transform, with groups too (depthwise and general, weight
 * OIHW1i{b}o); the grouped NCHWc relation and its errors. nn.conv3d: its
 * defaults, validation, relation (shapes and errors), layout rule, and
 * kernel by hand (a box sum, groups, stride with dilation and padding,
 * NDHWC / DHWIO against NCDHW / OIDHW).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kiln_op_test.h"
#include "op/impl.h"
#include "op/nn_common.h"

#define F32 KILN_DTYPE_FLOAT32

/* ---- attributes ---- */

static void test_metadata(void **state) {
  (void)state;
  assert_string_equal(kiln_op_conv2d.name, "nn.conv2d");
  assert_int_equal(kiln_op_conv2d.id, KILN_OP_CONV2D);
  assert_int_equal(kiln_op_conv2d.pattern, KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE);
  assert_int_equal(kiln_op_conv2d.min_inputs, 2);
  assert_int_equal(kiln_op_conv2d.max_inputs, 2);
  assert_string_equal(kiln_op_conv2d_nchwc.name, "nn.contrib_conv2d_NCHWc");
  assert_int_equal(kiln_op_conv2d_nchwc.id, KILN_OP_CONV2D_NCHWC);
  assert_int_equal(kiln_op_conv2d_nchwc.pattern, KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE);
}

static void test_defaults(void **state) {
  (void)state;
  const kiln_nn_conv2d_attrs_t *a = attrs_with(&kiln_op_conv2d, NULL);
  assert_int_equal(a->groups, 1);
  assert_int_equal(a->padding.count, 4);
  assert_int_equal(a->kernel_size.count, 0);
  assert_attrs_text(&kiln_op_conv2d, a,
                    "strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, "
                    "channels=0, kernel_size=[], data_layout=\"NCHW\", kernel_layout=\"OIHW\", "
                    "out_layout=\"\"");
  assert_defaults(&kiln_op_conv2d_nchwc,
                  "strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, "
                  "channels=0, kernel_size=[], data_layout=\"NCHW16c\", "
                  "kernel_layout=\"OIHW16i16o\", out_layout=\"NCHW16c\"");
}

static void test_validation(void **state) {
  (void)state;
  const kiln_op_t *conv = &kiln_op_conv2d;
  const kiln_status_code_t bad = KILN_STATUS_CODE_INVALID_ARGUMENT;
  const kiln_status_code_t unsupported = KILN_STATUS_CODE_UNIMPLEMENTED;
  assert_attr_invalid(conv, "strides", "[1]", bad, "nn.conv2d: strides must have 2 values, got 1");
  assert_attr_invalid(conv, "strides", "[0, 1]", bad, "nn.conv2d: strides[0] is 0");
  assert_attr_invalid(conv, "padding", "[1, 1]", bad,
                      "nn.conv2d: padding must have 4 values, got 2");
  assert_attr_invalid(conv, "padding", "[0, 0, -1, 0]", bad, "nn.conv2d: padding[2] is -1");
  assert_attr_invalid(conv, "dilation", "[1, 0]", bad, "nn.conv2d: dilation[1] is 0");
  assert_attr_invalid(conv, "groups", "0", bad, "nn.conv2d: groups is 0");
  assert_attr_invalid(conv, "channels", "-1", bad, "nn.conv2d: channels is -1");
  assert_attr_invalid(conv, "kernel_size", "[3]", bad,
                      "nn.conv2d: kernel_size must have 0 or 2 values, got 1");
  assert_attr_invalid(conv, "data_layout", "\"NCXW\"", bad,
                      "nn.conv2d: data_layout NCXW must have the primal axes NCHW");
  assert_attr_invalid(conv, "data_layout", "\"NCHH\"", bad, "axis 'H' appears twice");
  assert_attr_invalid(conv, "data_layout", "\"\"", bad, "nn.conv2d: data_layout: layout is empty");
  assert_attr_invalid(conv, "data_layout", "\"NCHW16c\"", unsupported,
                      "nn.conv2d: data_layout NCHW16c");
  assert_attr_invalid(conv, "kernel_layout", "\"OIHW4o\"", unsupported,
                      "nn.conv2d: kernel_layout OIHW4o");
  const kiln_op_t *nchwc = &kiln_op_conv2d_nchwc;
  assert_attr_invalid(nchwc, "groups", "0", bad, "nn.contrib_conv2d_NCHWc: groups is 0");
  assert_attr_invalid(nchwc, "data_layout", "\"NCHW\"", unsupported,
                      "nn.contrib_conv2d_NCHWc: data_layout NCHW is not supported");
  assert_attr_invalid(nchwc, "kernel_layout", "\"OIHW4i\"", unsupported, "kernel_layout OIHW4i");
  assert_attr_invalid(nchwc, "out_layout", "\"\"", bad, "out_layout: layout is empty");
  /* Accepted: NHWC / HWIO for conv2d, any order of the NCHWc axes. */
  KILN_ASSERT_OK(kiln_op_attrs_validate(
      conv, ATTRS(conv, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWIO\"")));
  /* The NCHWc form takes groups (depthwise). */
  KILN_ASSERT_OK(kiln_op_attrs_validate(
      nchwc, ATTRS(nchwc, "groups", "32", "kernel_layout", "\"OIHW1i16o\"")));
}

/* ---- type relation ---- */

static void test_relation_shapes(void **state) {
  (void)state;
  const kiln_op_t *conv = &kiln_op_conv2d;
  const kiln_type_t *out = NULL;
  void *a = ATTRS(conv, "strides", "[2, 2]", "padding", "[3, 3, 3, 3]");
  KILN_ASSERT_OK(INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 3, 224, 224)),
                       ttype(F32, 4, SHAPE(64, 3, 7, 7))));
  assert_type(out, F32, 4, SHAPE(1, 64, 112, 112));
  /* Odd, non-square, asymmetric padding, stride and dilation per axis:
   * H = (5 + 1 + 2 - 1*(3-1) - 1) / 2 + 1 = 3, W = (7 + 0 + 1 - 2*(2-1) - 1) / 1 + 1 = 6. */
  a = ATTRS(conv, "strides", "[2, 1]", "padding", "[1, 0, 2, 1]", "dilation", "[1, 2]", "channels",
            "4", "kernel_size", "[3, 2]");
  KILN_ASSERT_OK(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), ttype(F32, 4, SHAPE(4, 3, 3, 2))));
  assert_type(out, F32, 4, SHAPE(2, 4, 3, 6));
  /* Depthwise: groups == C, O a multiple of C. */
  a = ATTRS(conv, "groups", "6");
  KILN_ASSERT_OK(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 6, 5, 5)), ttype(F32, 4, SHAPE(12, 1, 3, 3))));
  assert_type(out, F32, 4, SHAPE(1, 12, 3, 3));
  /* NHWC data with HWIO weights, and with an NCHW output. */
  a = ATTRS(conv, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWIO\"");
  KILN_ASSERT_OK(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 5, 7, 3)), ttype(F32, 4, SHAPE(3, 3, 3, 4))));
  assert_type(out, F32, 4, SHAPE(1, 3, 5, 4));
  a = ATTRS(conv, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWIO\"", "out_layout", "\"NCHW\"");
  KILN_ASSERT_OK(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 5, 7, 3)), ttype(F32, 4, SHAPE(3, 3, 3, 4))));
  assert_type(out, F32, 4, SHAPE(1, 4, 3, 5));
  /* int8 in, int8 out: the relation is dtype-generic. */
  KILN_ASSERT_OK(INFER(conv, attrs_with(conv, NULL), &out,
                       ttype(KILN_DTYPE_INT8, 4, SHAPE(1, 1, 3, 3)),
                       ttype(KILN_DTYPE_INT8, 4, SHAPE(1, 1, 3, 3))));
  assert_type(out, KILN_DTYPE_INT8, 4, SHAPE(1, 1, 1, 1));
}

static void test_relation_nchwc(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  const kiln_type_t *out = NULL;
  void *a = ATTRS(op, "data_layout", "\"NCHW3c\"", "kernel_layout", "\"OIHW3i4o\"", "out_layout",
                  "\"NCHW4c\"", "padding", "[1, 1, 1, 1]");
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 5, 7, 3)),
                       ttype(F32, 6, SHAPE(2, 2, 3, 3, 3, 4))));
  assert_type(out, F32, 5, SHAPE(1, 2, 5, 7, 4));
  KILN_ASSERT_OK(INFER(op, attrs_with(op, NULL), &out, ttype(F32, 5, SHAPE(1, 4, 9, 9, 16)),
                       ttype(F32, 6, SHAPE(2, 4, 1, 1, 16, 16))));
  assert_type(out, F32, 5, SHAPE(1, 2, 9, 9, 16));
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 5, 7, 4)),
                           ttype(F32, 6, SHAPE(2, 2, 3, 3, 3, 4))),
                     INVALID_ARGUMENT,
                     "nn.contrib_conv2d_NCHWc: data: (1, 2, 5, 7, 4) has 4 at axis 'c' of layout "
                     "NCHW3c, not 3");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 5, 7, 3)),
                           ttype(F32, 6, SHAPE(2, 3, 3, 3, 3, 4))),
                     INVALID_ARGUMENT,
                     "data (1, 2, 5, 7, 3) has 6 channels but weight (2, 3, 3, 3, 3, 4) expects 9");
  a = ATTRS(op, "data_layout", "\"NCHW3c\"", "kernel_layout", "\"OIHW2i4o\"", "out_layout",
            "\"NCHW4c\"");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 5, 7, 3)),
                           ttype(F32, 6, SHAPE(2, 3, 3, 3, 2, 4))),
                     INVALID_ARGUMENT, "split the input channels differently");
  a = ATTRS(op, "data_layout", "\"NCHW3c\"", "kernel_layout", "\"OIHW3i4o\"", "out_layout",
            "\"NCHW2c\"");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 5, 7, 3)),
                           ttype(F32, 6, SHAPE(2, 2, 3, 3, 3, 4))),
                     INVALID_ARGUMENT, "split the output channels differently");
}

/* Depthwise NCHWc: weight OIHW1i{b}o (C / b, 1, KH, KW, 1, b). */
static void test_relation_nchwc_depthwise(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  const kiln_type_t *out = NULL;
  void *a = ATTRS(op, "groups", "32", "strides", "[2, 2]", "padding", "[1, 1, 1, 1]",
                  "kernel_layout", "\"OIHW1i16o\"");
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 7, 9, 16)),
                       ttype(F32, 6, SHAPE(2, 1, 3, 3, 1, 16))));
  assert_type(out, F32, 5, SHAPE(1, 2, 4, 5, 16));
  /* groups 2, 8 input and 8 output channels each, data in blocks of 4 */
  a = ATTRS(op, "groups", "2", "data_layout", "\"NCHW4c\"", "kernel_layout", "\"OIHW1i8o\"",
            "out_layout", "\"NCHW8c\"");
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 4, 5, 5, 4)),
                       ttype(F32, 6, SHAPE(2, 8, 3, 3, 1, 8))));
  assert_type(out, F32, 5, SHAPE(1, 2, 3, 3, 8));
  /* an input-channel block above 1 would straddle groups */
  a = ATTRS(op, "groups", "32");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 7, 9, 16)),
                           ttype(F32, 6, SHAPE(2, 1, 3, 3, 16, 16))),
                     INVALID_ARGUMENT,
                     "nn.contrib_conv2d_NCHWc: groups 32 needs an input-channel block of 1 in "
                     "kernel_layout (OIHW1i{o}o), not OIHW16i16o");
  /* the weight's input channels against groups */
  a = ATTRS(op, "groups", "32", "kernel_layout", "\"OIHW1i16o\"");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 7, 9, 16)),
                           ttype(F32, 6, SHAPE(2, 2, 3, 3, 1, 16))),
                     INVALID_ARGUMENT,
                     "nn.contrib_conv2d_NCHWc: data (1, 2, 7, 9, 16) has 32 channels but weight "
                     "(2, 2, 3, 3, 1, 16) expects 64 (groups 32)");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 7, 9, 16)),
                           ttype(F32, 6, SHAPE(2, 1, 3, 3, 2, 16))),
                     INVALID_ARGUMENT,
                     "nn.contrib_conv2d_NCHWc: weight: (2, 1, 3, 3, 2, 16) has 2 at axis 'i' of "
                     "layout OIHW1i16o, not 1");
  /* groups that do not divide the output channels */
  a = ATTRS(op, "groups", "3", "data_layout", "\"NCHW3c\"", "kernel_layout", "\"OIHW1i4o\"",
            "out_layout", "\"NCHW4c\"");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 5, 5, 3)),
                           ttype(F32, 6, SHAPE(1, 2, 3, 3, 1, 4))),
                     INVALID_ARGUMENT,
                     "nn.contrib_conv2d_NCHWc: groups 3 does not divide the 4 output channels");
  a = ATTRS(op, "groups", "32", "kernel_layout", "\"OIHW1i16o\"", "out_layout", "\"NCHW8c\"");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 5, SHAPE(1, 2, 7, 9, 16)),
                           ttype(F32, 6, SHAPE(2, 1, 3, 3, 1, 16))),
                     INVALID_ARGUMENT,
                     "out_layout NCHW8c and kernel_layout OIHW1i16o split the output channels "
                     "differently");
}

static void test_relation_errors(void **state) {
  (void)state;
  const kiln_op_t *conv = &kiln_op_conv2d;
  void *a = attrs_with(conv, NULL);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 3, 224, 224)), ttype(F32, 4, SHAPE(64, 4, 7, 7))),
      INVALID_ARGUMENT,
      "nn.conv2d: data (1, 3, 224, 224) has 3 channels but weight (64, 4, 7, 7) "
      "expects 4 (groups 1)");
  KILN_ASSERT_STATUS(INFER(conv, ATTRS(conv, "groups", "2"), &out, ttype(F32, 4, SHAPE(1, 6, 5, 5)),
                           ttype(F32, 4, SHAPE(4, 2, 3, 3))),
                     INVALID_ARGUMENT, "weight (4, 2, 3, 3) expects 4 (groups 2)");
  KILN_ASSERT_STATUS(INFER(conv, ATTRS(conv, "groups", "2"), &out, ttype(F32, 4, SHAPE(1, 4, 5, 5)),
                           ttype(F32, 4, SHAPE(3, 2, 3, 3))),
                     INVALID_ARGUMENT,
                     "nn.conv2d: groups 2 does not divide the 3 output channels of weight "
                     "(3, 2, 3, 3)");
  KILN_ASSERT_STATUS(INFER(conv, ATTRS(conv, "channels", "8"), &out,
                           ttype(F32, 4, SHAPE(1, 3, 5, 5)), ttype(F32, 4, SHAPE(4, 3, 3, 3))),
                     INVALID_ARGUMENT,
                     "nn.conv2d: channels 8 does not match the 4 output channels of weight "
                     "(4, 3, 3, 3)");
  KILN_ASSERT_STATUS(
      INFER(conv, ATTRS(conv, "kernel_size", "[3, 5]"), &out, ttype(F32, 4, SHAPE(1, 3, 5, 5)),
            ttype(F32, 4, SHAPE(4, 3, 3, 3))),
      INVALID_ARGUMENT,
      "nn.conv2d: kernel_size[1] is 5 but weight (4, 3, 3, 3) has a kernel extent of 3");
  KILN_ASSERT_STATUS(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 1, 2, 5)), ttype(F32, 4, SHAPE(1, 1, 3, 3))),
      INVALID_ARGUMENT, "nn.conv2d: data (1, 1, 2, 5) is too small: height 2 with padding 0+0");
  KILN_ASSERT_STATUS(INFER(conv, ATTRS(conv, "dilation", "[1, 3]"), &out,
                           ttype(F32, 4, SHAPE(1, 1, 5, 6)), ttype(F32, 4, SHAPE(1, 1, 3, 3))),
                     INVALID_ARGUMENT, "width 6 with padding 0+0 has no room for a window of 3");
  KILN_ASSERT_STATUS(
      INFER(conv, a, &out, ttype(F32, 3, SHAPE(1, 3, 5)), ttype(F32, 4, SHAPE(4, 3, 3, 3))),
      INVALID_ARGUMENT, "nn.conv2d: data: (1, 3, 5) must have rank 4 for layout NCHW, not 3");
  KILN_ASSERT_STATUS(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 3, 5, 5)), ttype(F32, 3, SHAPE(4, 3, 3))),
      INVALID_ARGUMENT, "nn.conv2d: weight: (4, 3, 3) must have rank 4 for layout OIHW");
  KILN_ASSERT_STATUS(INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 3, 5, 5)),
                           ttype(KILN_DTYPE_INT64, 4, SHAPE(4, 3, 3, 3))),
                     INVALID_ARGUMENT,
                     "nn.conv2d: weight (4, 3, 3, 3) has dtype int64 but data (1, 3, 5, 5) has "
                     "dtype float32");
  KILN_ASSERT_STATUS(INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 3, 5, 5))), INVALID_ARGUMENT,
                     "nn.conv2d: expected 2 inputs, got 1");
  KILN_ASSERT_STATUS(
      INFER(conv, NULL, &out, ttype(F32, 4, SHAPE(1, 3, 5, 5)), ttype(F32, 4, SHAPE(4, 3, 3, 3))),
      INVALID_ARGUMENT, "nn.conv2d: attributes are missing");
  KILN_ASSERT_STATUS(INFER(conv, ATTRS(conv, "strides", "[1]"), &out,
                           ttype(F32, 4, SHAPE(1, 3, 5, 5)), ttype(F32, 4, SHAPE(4, 3, 3, 3))),
                     INVALID_ARGUMENT, "nn.conv2d: strides must have 2 values");
  const kiln_type_t *tuple = NULL;
  const kiln_type_t *fields[1] = {ttype(F32, 1, SHAPE(1))};
  KILN_ASSERT_OK(kiln_tuple_type_create(&kiln_op_test_arena, 1, fields, &tuple));
  KILN_ASSERT_STATUS(INFER(conv, a, &out, tuple, ttype(F32, 4, SHAPE(4, 3, 3, 3))),
                     INVALID_ARGUMENT, "nn.conv2d: input 0 must be a tensor");
}

/* ---- layout rule ---- */

static void test_layout_rule(void **state) {
  (void)state;
  const char *required[2] = {NULL, NULL};
  const char *arriving[2] = {"NCHW", ""};
  kiln_layout_relation_t relation = {.op = &kiln_op_conv2d,
                                     .attrs = attrs_with(&kiln_op_conv2d, NULL),
                                     .num_inputs = 2,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_op_conv2d.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[1], "OIHW");
  assert_string_equal(relation.output_layout, "NCHW");
  relation.attrs = ATTRS(&kiln_op_conv2d, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWIO\"");
  KILN_ASSERT_OK(kiln_op_conv2d.correct_layout(&relation));
  assert_string_equal(required[0], "NHWC");
  assert_string_equal(required[1], "HWIO");
  assert_string_equal(relation.output_layout, "NHWC");
  relation.op = &kiln_op_conv2d_nchwc;
  relation.attrs = attrs_with(&kiln_op_conv2d_nchwc, NULL);
  KILN_ASSERT_OK(kiln_op_conv2d_nchwc.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW16c");
  assert_string_equal(required[1], "OIHW16i16o");
  assert_string_equal(relation.output_layout, "NCHW16c");
}

/* ---- reference kernel ---- */

/* Out (1, 1, 2, 2) of data 1..9 (3x3) and weight [[1, 0], [0, 1]]: x[i][j] + x[i+1][j+1]. */
static void test_kernel_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *data = tensor_zeros(F32, 4, SHAPE(1, 1, 3, 3));
  kiln_tensor_t *weight = tensor_zeros(F32, 4, SHAPE(1, 1, 2, 2));
  float *x = kiln_tensor_data(data), *w = kiln_tensor_data(weight);
  for (int i = 0; i < 9; ++i) {
    x[i] = (float)(i + 1);
  }
  w[0] = 1.0f;
  w[3] = 1.0f;
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_conv2d, attrs_with(&kiln_op_conv2d, NULL), &out, data, weight));
  assert_f32(out, (const double[]){6, 8, 12, 14}, 4);
  kiln_tensor_release(out);
  /* Padding 1 on every side, stride 2: 2x2 outputs over the 5x5 padded grid,
   * out[i][j] = x[2i-1][2j-1] + x[2i][2j], a padded cell counting 0. */
  void *a = ATTRS(&kiln_op_conv2d, "padding", "[1, 1, 1, 1]", "strides", "[2, 2]");
  KILN_ASSERT_OK(RUN(&kiln_op_conv2d, a, &out, data, weight));
  assert_f32(out, (const double[]){1, 3, 7, 5 + 9}, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(data);
  kiln_tensor_release(weight);
}

typedef struct conv_case_t {
  int64_t n, c, h, w, o, kh, kw, groups;
  int64_t stride[2], dilation[2], pad[4];
} conv_case_t;

/* The convolution written out directly over NCHW / OIHW. */
static void conv_direct(const conv_case_t *k, const float *x, const float *w, int64_t oh_count,
                        int64_t ow_count, float *out) {
  int64_t cg = k->c / k->groups, og = k->o / k->groups;
  for (int64_t n = 0; n < k->n; ++n) {
    for (int64_t o = 0; o < k->o; ++o) {
      for (int64_t oh = 0; oh < oh_count; ++oh) {
        for (int64_t ow = 0; ow < ow_count; ++ow) {
          double sum = 0.0;
          for (int64_t i = 0; i < cg; ++i) {
            int64_t c = (o / og) * cg + i;
            for (int64_t r = 0; r < k->kh; ++r) {
              for (int64_t s = 0; s < k->kw; ++s) {
                int64_t h = oh * k->stride[0] - k->pad[0] + r * k->dilation[0];
                int64_t v = ow * k->stride[1] - k->pad[1] + s * k->dilation[1];
                if (h >= 0 && h < k->h && v >= 0 && v < k->w) {
                  sum += (double)x[((n * k->c + c) * k->h + h) * k->w + v] *
                         w[((o * cg + i) * k->kh + r) * k->kw + s];
                }
              }
            }
          }
          out[((n * k->o + o) * oh_count + oh) * ow_count + ow] = (float)sum;
        }
      }
    }
  }
}

static void *conv_case_attrs(const conv_case_t *k) {
  char strides[64], dilation[64], padding[96], groups[32];
  snprintf(strides, sizeof(strides), "[%lld, %lld]", (long long)k->stride[0],
           (long long)k->stride[1]);
  snprintf(dilation, sizeof(dilation), "[%lld, %lld]", (long long)k->dilation[0],
           (long long)k->dilation[1]);
  snprintf(padding, sizeof(padding), "[%lld, %lld, %lld, %lld]", (long long)k->pad[0],
           (long long)k->pad[1], (long long)k->pad[2], (long long)k->pad[3]);
  snprintf(groups, sizeof(groups), "%lld", (long long)k->groups);
  return ATTRS(&kiln_op_conv2d, "strides", strides, "dilation", dilation, "padding", padding,
               "groups", groups);
}

static void check_conv_case(const conv_case_t *k) {
  kiln_tensor_t *data = f32_filled(1, 4, SHAPE(k->n, k->c, k->h, k->w));
  kiln_tensor_t *weight = f32_filled(2, 4, SHAPE(k->o, k->c / k->groups, k->kh, k->kw));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_conv2d, conv_case_attrs(k), &out, data, weight));
  const int64_t *shape = kiln_tensor_shape(out);
  float *want = f32_scratch(kiln_tensor_element_count(out));
  conv_direct(k, kiln_tensor_data(data), kiln_tensor_data(weight), shape[2], shape[3], want);
  assert_f32_floats(out, want, kiln_tensor_element_count(out));
  kiln_tensor_release(out);
  kiln_tensor_release(data);
  kiln_tensor_release(weight);
}

static void test_kernel_odd_shapes(void **state) {
  (void)state;
  static const conv_case_t cases[] = {
      {.n = 2,
       .c = 3,
       .h = 5,
       .w = 7,
       .o = 4,
       .kh = 3,
       .kw = 2,
       .groups = 1,
       .stride = {2, 1},
       .dilation = {1, 2},
       .pad = {1, 0, 2, 1}},
      {.n = 1,
       .c = 1,
       .h = 13,
       .w = 1,
       .o = 5,
       .kh = 3,
       .kw = 1,
       .groups = 1,
       .stride = {3, 1},
       .dilation = {2, 1},
       .pad = {2, 0, 1, 0}},
      {.n = 1,
       .c = 6,
       .h = 7,
       .w = 5,
       .o = 4,
       .kh = 3,
       .kw = 3,
       .groups = 2,
       .stride = {1, 2},
       .dilation = {1, 1},
       .pad = {1, 1, 1, 1}},
      /* depthwise, channel multiplier 2 */
      {.n = 1,
       .c = 3,
       .h = 5,
       .w = 5,
       .o = 6,
       .kh = 3,
       .kw = 3,
       .groups = 3,
       .stride = {1, 1},
       .dilation = {1, 1},
       .pad = {1, 1, 1, 1}},
      {.n = 3,
       .c = 5,
       .h = 1,
       .w = 1,
       .o = 7,
       .kh = 1,
       .kw = 1,
       .groups = 1,
       .stride = {1, 1},
       .dilation = {1, 1},
       .pad = {0, 0, 0, 0}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    check_conv_case(&cases[i]);
  }
}

/* NHWC / HWIO on transposed copies gives the NCHW / OIHW numbers, transposed. */
static void test_kernel_nhwc(void **state) {
  (void)state;
  enum { N = 2, C = 3, H = 5, W = 7, O = 4, KH = 3, KW = 2 };
  kiln_tensor_t *nchw = f32_filled(3, 4, SHAPE(N, C, H, W));
  kiln_tensor_t *oihw = f32_filled(4, 4, SHAPE(O, C, KH, KW));
  kiln_tensor_t *nhwc = tensor_zeros(F32, 4, SHAPE(N, H, W, C));
  kiln_tensor_t *hwio = tensor_zeros(F32, 4, SHAPE(KH, KW, C, O));
  const float *x = kiln_tensor_data(nchw), *w = kiln_tensor_data(oihw);
  float *xt = kiln_tensor_data(nhwc), *wt = kiln_tensor_data(hwio);
  for (int n = 0; n < N; ++n) {
    for (int c = 0; c < C; ++c) {
      for (int h = 0; h < H; ++h) {
        for (int v = 0; v < W; ++v) {
          xt[((n * H + h) * W + v) * C + c] = x[((n * C + c) * H + h) * W + v];
        }
      }
    }
  }
  for (int o = 0; o < O; ++o) {
    for (int c = 0; c < C; ++c) {
      for (int r = 0; r < KH * KW; ++r) {
        wt[(r * C + c) * O + o] = w[(o * C + c) * KH * KW + r];
      }
    }
  }
  const char *padding = "[1, 0, 0, 1]";
  kiln_tensor_t *want = NULL, *got = NULL;
  KILN_ASSERT_OK(
      RUN(&kiln_op_conv2d, ATTRS(&kiln_op_conv2d, "padding", padding), &want, nchw, oihw));
  void *a = ATTRS(&kiln_op_conv2d, "padding", padding, "data_layout", "\"NHWC\"", "kernel_layout",
                  "\"HWIO\"", "out_layout", "\"NCHW\"");
  KILN_ASSERT_OK(RUN(&kiln_op_conv2d, a, &got, nhwc, hwio));
  assert_memory_equal(kiln_tensor_data(got), kiln_tensor_data(want), kiln_tensor_byte_size(want));
  kiln_tensor_release(got);
  kiln_tensor_release(want);
  kiln_tensor_release(nchw);
  kiln_tensor_release(oihw);
  kiln_tensor_release(nhwc);
  kiln_tensor_release(hwio);
}

static kiln_tensor_t *transform(kiln_tensor_t *input, const char *src, const char *dst) {
  void *a = ATTRS(&kiln_op_layout_transform, "src_layout", src, "dst_layout", dst);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_layout_transform, a, &out, input));
  return out;
}

/* C=6 blocked by 3, O=8 blocked by 4: NCHWc on transformed tensors, transformed
 * back, is conv2d bit for bit. */
static void test_kernel_nchwc_matches_conv2d(void **state) {
  (void)state;
  kiln_tensor_t *data = f32_filled(5, 4, SHAPE(2, 6, 5, 7));
  kiln_tensor_t *weight = tensor_zeros(F32, 4, SHAPE(8, 6, 3, 2));
  float *w = kiln_tensor_data(weight);
  for (int64_t i = 0; i < kiln_tensor_element_count(weight); ++i) {
    w[i] = sinf((float)i * 0.37f); /* inexact values: the order of the sum matters */
  }
  const char *window[] = {"strides", "[2, 1]", "padding", "[1, 2, 0, 1]", "dilation", "[1, 2]"};
  kiln_tensor_t *want = NULL;
  KILN_ASSERT_OK(
      RUN(&kiln_op_conv2d,
          ATTRS(&kiln_op_conv2d, window[0], window[1], window[2], window[3], window[4], window[5]),
          &want, data, weight));
  kiln_tensor_t *blocked_data = transform(data, "\"NCHW\"", "\"NCHW3c\"");
  kiln_tensor_t *blocked_weight = transform(weight, "\"OIHW\"", "\"OIHW3i4o\"");
  void *a = ATTRS(&kiln_op_conv2d_nchwc, window[0], window[1], window[2], window[3], window[4],
                  window[5], "data_layout", "\"NCHW3c\"", "kernel_layout", "\"OIHW3i4o\"",
                  "out_layout", "\"NCHW4c\"", "channels", "8");
  kiln_tensor_t *blocked_out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_conv2d_nchwc, a, &blocked_out, blocked_data, blocked_weight));
  assert_int_equal(kiln_tensor_ndim(blocked_out), 5);
  assert_int_equal(kiln_tensor_shape(blocked_out)[1], 2);
  assert_int_equal(kiln_tensor_shape(blocked_out)[4], 4);
  kiln_tensor_t *got = transform(blocked_out, "\"NCHW4c\"", "\"NCHW\"");
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  assert_memory_equal(kiln_tensor_data(got), kiln_tensor_data(want), kiln_tensor_byte_size(want));
  kiln_tensor_t *tensors[] = {data, weight, want, blocked_data, blocked_weight, blocked_out, got};
  for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* Grouped NCHWc against grouped conv2d bit for bit: `groups` over C
 * channels of data (2, C, 7, 9) blocked by b, O outputs blocked by ob with
 * weight OIHW1i{ob}o, stride 2 and asymmetric padding. */
static void check_grouped_nchwc(int64_t c, int64_t o, int64_t b, int64_t ob, const char *groups) {
  int64_t g = atoll(groups);
  kiln_tensor_t *data = f32_filled(5, 4, SHAPE(2, c, 7, 9));
  kiln_tensor_t *weight = tensor_zeros(F32, 4, SHAPE(o, c / g, 3, 3));
  float *w = kiln_tensor_data(weight);
  for (int64_t i = 0; i < kiln_tensor_element_count(weight); ++i) {
    w[i] = sinf((float)i * 0.53f);
  }
  const char *window[] = {"strides", "[2, 2]", "padding", "[1, 0, 1, 2]", "groups", groups};
  kiln_tensor_t *want = NULL;
  KILN_ASSERT_OK(
      RUN(&kiln_op_conv2d,
          ATTRS(&kiln_op_conv2d, window[0], window[1], window[2], window[3], window[4], window[5]),
          &want, data, weight));
  char data_layout[32], kernel_layout[32], out_layout[32];
  snprintf(data_layout, sizeof(data_layout), "\"NCHW%lldc\"", (long long)b);
  snprintf(kernel_layout, sizeof(kernel_layout), "\"OIHW1i%lldo\"", (long long)ob);
  snprintf(out_layout, sizeof(out_layout), "\"NCHW%lldc\"", (long long)ob);
  kiln_tensor_t *blocked_data = transform(data, "\"NCHW\"", data_layout);
  kiln_tensor_t *blocked_weight = transform(weight, "\"OIHW\"", kernel_layout);
  void *a =
      ATTRS(&kiln_op_conv2d_nchwc, window[0], window[1], window[2], window[3], window[4], window[5],
            "data_layout", data_layout, "kernel_layout", kernel_layout, "out_layout", out_layout);
  kiln_tensor_t *blocked_out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_conv2d_nchwc, a, &blocked_out, blocked_data, blocked_weight));
  kiln_tensor_t *got = transform(blocked_out, out_layout, "\"NCHW\"");
  assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(want));
  assert_memory_equal(kiln_tensor_data(got), kiln_tensor_data(want), kiln_tensor_byte_size(want));
  kiln_tensor_t *tensors[] = {data, weight, want, blocked_data, blocked_weight, blocked_out, got};
  for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

static void test_kernel_nchwc_grouped_matches_conv2d(void **state) {
  (void)state;
  check_grouped_nchwc(12, 12, 4, 4, "12"); /* depthwise */
  check_grouped_nchwc(8, 8, 4, 4, "2");    /* 4 channels per group */
  /* blocks inside groups of 4 inputs and 8 outputs, and of 8 and 4 */
  check_grouped_nchwc(12, 24, 4, 8, "3");
  check_grouped_nchwc(16, 8, 8, 4, "2");
  check_grouped_nchwc(16, 8, 4, 2, "2"); /* blocks below the group sizes */
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *data = tensor_zeros(KILN_DTYPE_INT64, 4, SHAPE(1, 1, 3, 3));
  kiln_tensor_t *weight = tensor_zeros(KILN_DTYPE_INT64, 4, SHAPE(1, 1, 3, 3));
  kiln_tensor_t *out = NULL;
  void *a = attrs_with(&kiln_op_conv2d, NULL);
  KILN_ASSERT_STATUS(RUN(&kiln_op_conv2d, a, &out, data, weight), UNIMPLEMENTED,
                     "nn.conv2d: the reference kernel does not handle dtype int64");
  kiln_tensor_release(data);
  kiln_tensor_release(weight);
  /* An output of the wrong shape is refused, never written out of bounds. */
  data = tensor_zeros(F32, 4, SHAPE(1, 1, 3, 3));
  weight = tensor_zeros(F32, 4, SHAPE(1, 1, 3, 3));
  out = tensor_zeros(F32, 4, SHAPE(1, 1, 2, 2));
  kiln_tensor_t *inputs[] = {data, weight};
  kiln_kernel_args_t args = {.op = &kiln_op_conv2d,
                             .attrs = a,
                             .num_inputs = 2,
                             .inputs = inputs,
                             .num_outputs = 1,
                             .outputs = &out};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_conv2d.id)(&args), INVALID_ARGUMENT,
                     "nn.conv2d: output tensor (1, 1, 2, 2) float32 does not match the type "
                     "(1, 1, 1, 1) float32");
  args.num_outputs = 0;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_conv2d.id)(&args), INVALID_ARGUMENT,
                     "nn.conv2d: expected 1 output tensor, got 0");
  kiln_tensor_release(out);
  kiln_tensor_release(data);
  kiln_tensor_release(weight);
}

/* ---- nn.conv3d ---- */

static void test_conv3d_rules(void **state) {
  (void)state;
  const kiln_op_t *conv = &kiln_op_conv3d;
  assert_string_equal(conv->name, "nn.conv3d");
  assert_int_equal(conv->id, KILN_OP_CONV3D);
  assert_int_equal(conv->pattern, KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE);
  assert_defaults(conv, "strides=[1, 1, 1], padding=[0, 0, 0, 0, 0, 0], dilation=[1, 1, 1], "
                        "groups=1, channels=0, kernel_size=[], data_layout=\"NCDHW\", "
                        "kernel_layout=\"OIDHW\", out_layout=\"\"");
  const kiln_status_code_t bad = KILN_STATUS_CODE_INVALID_ARGUMENT;
  assert_attr_invalid(conv, "strides", "[1, 1]", bad,
                      "nn.conv3d: strides must have 3 values, got 2");
  assert_attr_invalid(conv, "padding", "[0, 0, 0, 0]", bad,
                      "nn.conv3d: padding must have 6 values, got 4");
  assert_attr_invalid(conv, "dilation", "[1, 1, 0]", bad, "nn.conv3d: dilation[2] is 0");
  assert_attr_invalid(conv, "kernel_size", "[3, 3]", bad,
                      "nn.conv3d: kernel_size must have 0 or 3 values, got 2");
  assert_attr_invalid(conv, "data_layout", "\"NCHW\"", bad,
                      "nn.conv3d: data_layout NCHW must have the primal axes NCDHW");
  assert_attr_invalid(conv, "kernel_layout", "\"OIDHW4o\"", KILN_STATUS_CODE_UNIMPLEMENTED,
                      "nn.conv3d: kernel_layout OIDHW4o");
  /* D (5 + 1 + 0 - 1 - 1) / 2 + 1 = 3, H (6 + 0 + 1 - 2 * 2 - 1) / 1 + 1 = 3,
   * W (7 - 3) / 2 + 1 = 3, groups 2 with 3 outputs each */
  const kiln_type_t *out = NULL;
  void *a = ATTRS(conv, "strides", "[2, 1, 2]", "padding", "[1, 0, 0, 0, 1, 0]", "dilation",
                  "[1, 2, 1]", "groups", "2", "kernel_size", "[2, 3, 3]");
  KILN_ASSERT_OK(INFER(conv, a, &out, ttype(F32, 5, SHAPE(2, 4, 5, 6, 7)),
                       ttype(F32, 5, SHAPE(6, 2, 2, 3, 3))));
  assert_type(out, F32, 5, SHAPE(2, 6, 3, 3, 3));
  a = ATTRS(conv, "data_layout", "\"NDHWC\"", "kernel_layout", "\"DHWIO\"");
  KILN_ASSERT_OK(INFER(conv, a, &out, ttype(F32, 5, SHAPE(1, 4, 5, 6, 3)),
                       ttype(F32, 5, SHAPE(2, 2, 2, 3, 8))));
  assert_type(out, F32, 5, SHAPE(1, 3, 4, 5, 8));
  a = attrs_with(conv, NULL);
  KILN_ASSERT_STATUS(INFER(conv, a, &out, ttype(F32, 5, SHAPE(1, 3, 4, 4, 4)),
                           ttype(F32, 5, SHAPE(2, 2, 1, 1, 1))),
                     INVALID_ARGUMENT,
                     "nn.conv3d: data (1, 3, 4, 4, 4) has 3 channels but weight (2, 2, 1, 1, 1) "
                     "expects 2 (groups 1)");
  KILN_ASSERT_STATUS(INFER(conv, a, &out, ttype(F32, 5, SHAPE(1, 1, 2, 4, 4)),
                           ttype(F32, 5, SHAPE(1, 1, 3, 1, 1))),
                     INVALID_ARGUMENT,
                     "nn.conv3d: data (1, 1, 2, 4, 4) is too small: depth 2 with padding 0+0 has "
                     "no room for a window of 3 (dilation 1)");
  KILN_ASSERT_STATUS(
      INFER(conv, ATTRS(conv, "kernel_size", "[1, 1, 2]"), &out,
            ttype(F32, 5, SHAPE(1, 1, 2, 4, 4)), ttype(F32, 5, SHAPE(1, 1, 1, 1, 1))),
      INVALID_ARGUMENT,
      "nn.conv3d: kernel_size[2] is 2 but weight (1, 1, 1, 1, 1) has a kernel extent "
      "of 1");
  KILN_ASSERT_STATUS(
      INFER(conv, a, &out, ttype(F32, 4, SHAPE(1, 1, 4, 4)), ttype(F32, 5, SHAPE(1, 1, 1, 1, 1))),
      INVALID_ARGUMENT, "nn.conv3d: data: (1, 1, 4, 4) must have rank 5 for layout NCDHW, not 4");
  const char *required[2] = {NULL, NULL};
  const char *arriving[2] = {"NCDHW", ""};
  kiln_layout_relation_t relation = {.op = conv,
                                     .attrs = a,
                                     .num_inputs = 2,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(conv->correct_layout(&relation));
  assert_string_equal(required[0], "NCDHW");
  assert_string_equal(required[1], "OIDHW");
  assert_string_equal(relation.output_layout, "NCDHW");
}

static void test_conv3d_by_hand(void **state) {
  (void)state;
  const kiln_op_t *conv = &kiln_op_conv3d;
  /* data 1..12 as (D 2, H 2, W 3), weight ones (2, 2, 2): the two box sums
   * 1+2+4+5+7+8+10+11 and 2+3+5+6+8+9+11+12 */
  float x[12], ones[8];
  for (int i = 0; i < 12; ++i) {
    x[i] = (float)(i + 1);
  }
  for (int i = 0; i < 8; ++i) {
    ones[i] = 1.0f;
  }
  assert_run2_f32(conv, attrs_with(conv, NULL), 5, SHAPE(1, 1, 2, 2, 3), x, SHAPE(1, 1, 2, 2, 2),
                  ones, (const double[]){48, 56}, 2);
  /* the same in NDHWC / DHWIO (one channel: the same storage) */
  assert_run2_f32(conv, ATTRS(conv, "data_layout", "\"NDHWC\"", "kernel_layout", "\"DHWIO\""), 5,
                  SHAPE(1, 2, 2, 3, 1), x, SHAPE(2, 2, 2, 1, 1), ones, (const double[]){48, 56}, 2);
  /* groups 2: channel 0 (1, 2, 3) with (1, 1), channel 1 (10, 20, 30) with
   * (1, -1) along W */
  assert_run2_f32(conv, ATTRS(conv, "groups", "2"), 5, SHAPE(1, 2, 1, 1, 3),
                  (const float[]){1, 2, 3, 10, 20, 30}, SHAPE(2, 1, 1, 1, 2),
                  (const float[]){1, 1, 1, -1}, (const double[]){3, 5, -10, -10}, 4);
  /* D 1..5, kernel (1, 1) with dilation 2, stride 2, padding 1 front and
   * back: out[d] = x[2d - 1] + x[2d + 1], padding 0: (0 + 2, 2 + 4, 4 + 0) */
  assert_run2_f32(
      conv,
      ATTRS(conv, "strides", "[2, 1, 1]", "dilation", "[2, 1, 1]", "padding", "[1, 0, 0, 1, 0, 0]"),
      5, SHAPE(1, 1, 5, 1, 1), x, SHAPE(1, 1, 2, 1, 1), ones, (const double[]){2, 6, 4}, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata),
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_relation_shapes),
      cmocka_unit_test(test_relation_nchwc),
      cmocka_unit_test(test_relation_nchwc_depthwise),
      cmocka_unit_test(test_relation_errors),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_kernel_by_hand),
      cmocka_unit_test(test_kernel_odd_shapes),
      cmocka_unit_test(test_kernel_nhwc),
      cmocka_unit_test(test_kernel_nchwc_matches_conv2d),
      cmocka_unit_test(test_kernel_nchwc_grouped_matches_conv2d),
      cmocka_unit_test(test_conv3d_rules),
      cmocka_unit_test(test_conv3d_by_hand),
      cmocka_unit_test(test_kernel_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
