/*
 * Tests of nn.conv2d_transpose: attribute defaults and validation, the type
 * relation on the shapes of the ONNX ConvTranspose tests and every error,
 * the layout rule, and the reference kernel on ONNX's example (numbers
 * written out by hand) and against a direct scatter loop written here (each
 * input element adds x * w to the outputs it reaches), which is a different
 * algorithm from the kernel's gather: strides, asymmetric padding,
 * output_padding, dilation and groups on odd shapes, and NHWC/HWIO storage
 * against NCHW/IOHW. nn.conv3d_transpose: defaults, validation, relation
 * shapes and errors, and the kernel by hand (groups with stride, dilation
 * with padding, output_padding).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kiln_op_test.h"
#include "op/impl.h"

#define F32 KILN_DTYPE_FLOAT32

static const kiln_op_t *const op = &kiln_op_conv2d_transpose;

/* ---- attributes ---- */

static void test_defaults_and_validation(void **state) {
  (void)state;
  assert_string_equal(op->name, "nn.conv2d_transpose");
  assert_int_equal(op->id, KILN_OP_CONV2D_TRANSPOSE);
  assert_int_equal(op->pattern, KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE);
  assert_defaults(op, "strides=[1, 1], padding=[0, 0, 0, 0], output_padding=[0, 0], "
                      "dilation=[1, 1], groups=1, channels=0, kernel_size=[], "
                      "data_layout=\"NCHW\", kernel_layout=\"IOHW\", out_layout=\"\"");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "strides", "[0, 1]")), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: strides[0] is 0; it must be in [1, 1073741824]");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "padding", "[0, 0, 0]")),
                     INVALID_ARGUMENT, "nn.conv2d_transpose: padding must have 4 values, got 3");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "output_padding", "[1, 0, 0]")),
                     INVALID_ARGUMENT,
                     "nn.conv2d_transpose: output_padding must have 2 values, got 3");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "output_padding", "[1, 0]")),
                     INVALID_ARGUMENT,
                     "nn.conv2d_transpose: output_padding[0] is 1; it must be smaller than the "
                     "stride (1) or the dilation (1)");
  KILN_ASSERT_OK(kiln_op_attrs_validate(
      op, ATTRS(op, "output_padding", "[1, 1]", "strides", "[2, 1]", "dilation", "[1, 2]")));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "dilation", "[1, 0]")), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: dilation[1] is 0");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "kernel_size", "[3]")), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: kernel_size must have 0 or 2 values, got 1");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "groups", "0")), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: groups is 0; it must be positive");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "channels", "-1")), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: channels is -1; it must be 0 or positive");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "kernel_layout", "\"OIHW16o\"")),
                     UNIMPLEMENTED, "nn.conv2d_transpose: kernel_layout OIHW16o is not supported");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "data_layout", "\"NCH\"")),
                     INVALID_ARGUMENT,
                     "nn.conv2d_transpose: data_layout NCH must have the primal axes NCHW");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, ATTRS(op, "out_layout", "\"NCDHW\"")),
                     INVALID_ARGUMENT, "nn.conv2d_transpose: out_layout NCDHW must have");
}

/* ---- type relation ---- */

static void test_relation_shapes(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const kiln_type_t *x = ttype(F32, 4, SHAPE(1, 1, 3, 3));
  const kiln_type_t *w = ttype(F32, 4, SHAPE(1, 2, 3, 3));
  /* ONNX test_convtranspose */
  KILN_ASSERT_OK(INFER(op, attrs_with(op, NULL), &out, x, w));
  assert_type(out, F32, 4, SHAPE(1, 2, 5, 5));
  /* test_convtranspose_pad: strides [3, 2], output_padding [1, 1] */
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "strides", "[3, 2]", "output_padding", "[1, 1]"), &out, x, w));
  assert_type(out, F32, 4, SHAPE(1, 2, 10, 8));
  /* test_convtranspose_pads: strides [3, 2], pads (top 1, left 2, bottom 1, right 2) */
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "strides", "[3, 2]", "padding", "[1, 2, 1, 2]"), &out, x, w));
  assert_type(out, F32, 4, SHAPE(1, 2, 7, 3));
  /* test_convtranspose_dilations */
  KILN_ASSERT_OK(
      INFER(op, ATTRS(op, "dilation", "[2, 2]"), &out, x, ttype(F32, 4, SHAPE(1, 1, 2, 2))));
  assert_type(out, F32, 4, SHAPE(1, 1, 5, 5));
  /* groups: C_out = weight O x groups */
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "groups", "2", "channels", "6"), &out,
                       ttype(F32, 4, SHAPE(1, 4, 3, 3)), ttype(F32, 4, SHAPE(4, 3, 2, 2))));
  assert_type(out, F32, 4, SHAPE(1, 6, 4, 4));
  /* NHWC data, HWIO weight, NCHW output */
  KILN_ASSERT_OK(INFER(
      op,
      ATTRS(op, "data_layout", "\"NHWC\"", "kernel_layout", "\"HWIO\"", "out_layout", "\"NCHW\""),
      &out, ttype(F32, 4, SHAPE(1, 3, 3, 1)), ttype(F32, 4, SHAPE(3, 3, 1, 2))));
  assert_type(out, F32, 4, SHAPE(1, 2, 5, 5));
}

static void test_relation_errors(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const kiln_type_t *x = ttype(F32, 4, SHAPE(1, 2, 3, 3));
  const kiln_type_t *w = ttype(F32, 4, SHAPE(1, 2, 3, 3));
  const void *none = attrs_with(op, NULL);
  KILN_ASSERT_STATUS(INFER(op, none, &out, x, w), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: data (1, 2, 3, 3) has 2 channels but weight (1, 2, 3, "
                     "3) (IOHW) expects 1");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "groups", "2"), &out, ttype(F32, 4, SHAPE(1, 3, 3, 3)),
                           ttype(F32, 4, SHAPE(3, 1, 1, 1))),
                     INVALID_ARGUMENT,
                     "nn.conv2d_transpose: groups 2 does not divide the 3 input channels of data "
                     "(1, 3, 3, 3)");
  const kiln_type_t *x1 = ttype(F32, 4, SHAPE(1, 1, 3, 3));
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "channels", "3"), &out, x1, w), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: channels 3 does not match the 2 output channels of "
                     "weight (1, 2, 3, 3) (groups 1)");
  KILN_ASSERT_STATUS(
      INFER(op, ATTRS(op, "kernel_size", "[3, 2]"), &out, x1, w), INVALID_ARGUMENT,
      "nn.conv2d_transpose: kernel_size[1] is 2 but weight (1, 2, 3, 3) has a kernel "
      "extent of 3");
  KILN_ASSERT_STATUS(INFER(op, none, &out, x1, ttype(KILN_DTYPE_FLOAT16, 4, SHAPE(1, 2, 3, 3))),
                     INVALID_ARGUMENT,
                     "nn.conv2d_transpose: weight (1, 2, 3, 3) has dtype float16 but data (1, 1, "
                     "3, 3) has dtype float32");
  KILN_ASSERT_STATUS(INFER(op, none, &out, ttype(F32, 3, SHAPE(1, 1, 3)), w), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: data: (1, 1, 3) must have rank 4 for layout NCHW");
  KILN_ASSERT_STATUS(INFER(op, none, &out, x1, ttype(F32, 3, SHAPE(1, 2, 3))), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: weight: (1, 2, 3) must have rank 4 for layout IOHW");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "padding", "[1, 0, 0, 0]"), &out,
                           ttype(F32, 4, SHAPE(1, 1, 1, 1)), ttype(F32, 4, SHAPE(1, 1, 1, 1))),
                     INVALID_ARGUMENT,
                     "nn.conv2d_transpose: data (1, 1, 1, 1) gives no output rows (padding 1+0)");
  KILN_ASSERT_STATUS(
      INFER(op, ATTRS(op, "padding", "[0, 2, 0, 1]"), &out, ttype(F32, 4, SHAPE(1, 1, 2, 2)),
            ttype(F32, 4, SHAPE(1, 1, 1, 2))),
      INVALID_ARGUMENT,
      "nn.conv2d_transpose: data (1, 1, 2, 2) gives no output columns (padding 2+1)");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "strides", "[0, 1]"), &out, x1, w), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: strides[0] is 0");
  const kiln_type_t *types[] = {x1};
  KILN_ASSERT_STATUS(infer(op, none, 1, types, &out), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: expected 2 inputs, got 1");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[2] = {"NCHW16c", "OIHW"};
  const char *required[2] = {NULL, NULL};
  kiln_layout_relation_t relation = {.op = op,
                                     .attrs = ATTRS(op, "data_layout", "\"NHWC\""),
                                     .num_inputs = 2,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(op->correct_layout(&relation));
  assert_string_equal(required[0], "NHWC");
  assert_string_equal(required[1], "IOHW");
  assert_string_equal(relation.output_layout, "NHWC");
  relation.attrs = ATTRS(op, "out_layout", "\"NHWC\"");
  KILN_ASSERT_OK(op->correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(relation.output_layout, "NHWC");
  relation.num_inputs = 1;
  KILN_ASSERT_STATUS(op->correct_layout(&relation), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: expected 2 inputs, got 1");
}

/* ---- kernel ---- */

/* ONNX test_convtranspose: X = 0..8, W = ones (1, 2, 3, 3). */
static void test_kernel_by_hand(void **state) {
  (void)state;
  float x[9];
  float w[18];
  for (int i = 0; i < 9; ++i) {
    x[i] = (float)i;
  }
  for (int i = 0; i < 18; ++i) {
    w[i] = 1.0f;
  }
  kiln_tensor_t *data = tensor_of(F32, 4, SHAPE(1, 1, 3, 3), x);
  kiln_tensor_t *weight = tensor_of(F32, 4, SHAPE(1, 2, 3, 3), w);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(op, attrs_with(op, NULL), &out, data, weight));
  const double plane[25] = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                            27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  double expected[50];
  memcpy(expected, plane, sizeof(plane));
  memcpy(expected + 25, plane, sizeof(plane));
  assert_f32(out, expected, 50);
  kiln_tensor_release(out);
  /* test_convtranspose_pads, by hand: the full (9, 7) output has rows 3h..3h+2 from x row
   * h and, in row h, columns x[h][0], x[h][0], x[h][0] + x[h][1], x[h][1], x[h][1] + x[h][2],
   * x[h][2], x[h][2]; the pads keep rows 1..7 and columns 2..4: [1, 1, 3] twice, [7, 4, 9]
   * three times, [13, 7, 15] twice */
  KILN_ASSERT_OK(
      RUN(op, ATTRS(op, "strides", "[3, 2]", "padding", "[1, 2, 1, 2]"), &out, data, weight));
  const float *y = kiln_tensor_data(out);
  assert_true(y[0] == 1.0f && y[1] == 1.0f && y[2] == 3.0f);
  assert_true(y[3] == 1.0f && y[6] == 7.0f && y[15] == 13.0f);
  kiln_tensor_release(out);
  kiln_tensor_release(weight);
  kiln_tensor_release(data);
}

typedef struct tconv_case_t {
  int64_t n, c, h, w; /* data */
  int64_t o, kh, kw;  /* weight (c, o, kh, kw) */
  int64_t groups;
  int64_t stride[2];
  int64_t dilation[2];
  int64_t pad[4]; /* top, left, bottom, right */
  int64_t output_padding[2];
} tconv_case_t;

static int64_t tconv_extent(const tconv_case_t *k, int dim, int64_t in, int64_t kernel) {
  return (in - 1) * k->stride[dim] - k->pad[dim] - k->pad[dim + 2] +
         k->dilation[dim] * (kernel - 1) + k->output_padding[dim] + 1;
}

/* The scatter definition: every input element adds x * w where it lands. */
static void tconv_scatter(const tconv_case_t *k, const float *x, const float *w, int64_t oh_count,
                          int64_t ow_count, double *out) {
  int64_t outputs = k->o * k->groups;
  int64_t per_group = k->c / k->groups;
  memset(out, 0, sizeof(double) * (size_t)(k->n * outputs * oh_count * ow_count));
  for (int64_t n = 0; n < k->n; ++n) {
    for (int64_t i = 0; i < k->c; ++i) {
      int64_t g = i / per_group;
      for (int64_t h = 0; h < k->h; ++h) {
        for (int64_t v = 0; v < k->w; ++v) {
          double xv = x[((n * k->c + i) * k->h + h) * k->w + v];
          for (int64_t o = 0; o < k->o; ++o) {
            for (int64_t a = 0; a < k->kh; ++a) {
              for (int64_t b = 0; b < k->kw; ++b) {
                int64_t y = h * k->stride[0] + a * k->dilation[0] - k->pad[0];
                int64_t z = v * k->stride[1] + b * k->dilation[1] - k->pad[1];
                if (y < 0 || y >= oh_count || z < 0 || z >= ow_count) {
                  continue;
                }
                double wv = w[((i * k->o + o) * k->kh + a) * k->kw + b];
                out[((n * outputs + g * k->o + o) * oh_count + y) * ow_count + z] += xv * wv;
              }
            }
          }
        }
      }
    }
  }
}

static void check_case(const tconv_case_t *k) {
  float x[600];
  float w[600];
  int64_t xs = k->n * k->c * k->h * k->w;
  int64_t ws = k->c * k->o * k->kh * k->kw;
  for (int64_t i = 0; i < xs; ++i) {
    x[i] = (float)((i * 13) % 17 - 8) / 4.0f;
  }
  for (int64_t i = 0; i < ws; ++i) {
    w[i] = (float)((i * 7) % 11 - 5) / 3.0f;
  }
  char strides[64], dilation[64], padding[96], output_padding[64], groups[32];
  snprintf(strides, sizeof(strides), "[%lld, %lld]", (long long)k->stride[0],
           (long long)k->stride[1]);
  snprintf(dilation, sizeof(dilation), "[%lld, %lld]", (long long)k->dilation[0],
           (long long)k->dilation[1]);
  snprintf(padding, sizeof(padding), "[%lld, %lld, %lld, %lld]", (long long)k->pad[0],
           (long long)k->pad[1], (long long)k->pad[2], (long long)k->pad[3]);
  snprintf(output_padding, sizeof(output_padding), "[%lld, %lld]", (long long)k->output_padding[0],
           (long long)k->output_padding[1]);
  snprintf(groups, sizeof(groups), "%lld", (long long)k->groups);
  int64_t oh = tconv_extent(k, 0, k->h, k->kh);
  int64_t ow = tconv_extent(k, 1, k->w, k->kw);
  double expected[4096];
  tconv_scatter(k, x, w, oh, ow, expected);
  kiln_tensor_t *data = tensor_of(F32, 4, SHAPE(k->n, k->c, k->h, k->w), x);
  kiln_tensor_t *weight = tensor_of(F32, 4, SHAPE(k->c, k->o, k->kh, k->kw), w);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(op,
                     ATTRS(op, "strides", strides, "dilation", dilation, "padding", padding,
                           "output_padding", output_padding, "groups", groups),
                     &out, data, weight));
  assert_int_equal(kiln_tensor_shape(out)[2], oh);
  assert_int_equal(kiln_tensor_shape(out)[3], ow);
  assert_f32(out, expected, k->n * k->o * k->groups * oh * ow);
  kiln_tensor_release(out);
  kiln_tensor_release(weight);
  kiln_tensor_release(data);
}

static void test_kernel_against_scatter(void **state) {
  (void)state;
  const tconv_case_t cases[] = {
      /* n c h w  o kh kw groups stride dilation pad output_padding */
      {1, 1, 3, 3, 2, 3, 3, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}},
      {1, 1, 3, 3, 2, 3, 3, 1, {3, 2}, {1, 1}, {1, 2, 1, 2}, {0, 0}},
      {1, 1, 3, 3, 2, 3, 3, 1, {3, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {2, 3, 4, 5, 2, 2, 3, 1, {2, 3}, {1, 2}, {1, 0, 2, 1}, {1, 2}},
      {1, 4, 3, 2, 3, 3, 2, 2, {2, 1}, {2, 1}, {0, 1, 1, 0}, {1, 0}},
      {1, 3, 5, 4, 1, 1, 3, 3, {1, 2}, {1, 1}, {0, 0, 0, 2}, {0, 1}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    check_case(&cases[i]);
  }
}

/* NHWC data and HWIO weights give the NCHW/IOHW numbers in the NHWC order. */
static void test_kernel_nhwc(void **state) {
  (void)state;
  enum { N = 1, C = 2, H = 3, W = 4, O = 3, KH = 2, KW = 3 };
  float x[N * C * H * W], w[C * O * KH * KW];
  float x_nhwc[N * H * W * C], w_hwio[KH * KW * C * O];
  for (int i = 0; i < N * C * H * W; ++i) {
    x[i] = (float)((i * 5) % 9) - 4.0f;
  }
  for (int i = 0; i < C * O * KH * KW; ++i) {
    w[i] = (float)((i * 3) % 7) - 3.0f;
  }
  for (int c = 0; c < C; ++c) {
    for (int h = 0; h < H; ++h) {
      for (int v = 0; v < W; ++v) {
        x_nhwc[(h * W + v) * C + c] = x[(c * H + h) * W + v];
      }
    }
  }
  for (int i = 0; i < C; ++i) {
    for (int o = 0; o < O; ++o) {
      for (int a = 0; a < KH; ++a) {
        for (int b = 0; b < KW; ++b) {
          w_hwio[((a * KW + b) * C + i) * O + o] = w[((i * O + o) * KH + a) * KW + b];
        }
      }
    }
  }
  const char *strides = "[2, 1]";
  kiln_tensor_t *data = tensor_of(F32, 4, SHAPE(N, C, H, W), x);
  kiln_tensor_t *weight = tensor_of(F32, 4, SHAPE(C, O, KH, KW), w);
  kiln_tensor_t *reference = NULL;
  KILN_ASSERT_OK(RUN(op, ATTRS(op, "strides", strides), &reference, data, weight));
  kiln_tensor_t *data_nhwc = tensor_of(F32, 4, SHAPE(N, H, W, C), x_nhwc);
  kiln_tensor_t *weight_hwio = tensor_of(F32, 4, SHAPE(KH, KW, C, O), w_hwio);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(op,
                     ATTRS(op, "strides", strides, "data_layout", "\"NHWC\"", "kernel_layout",
                           "\"HWIO\"", "out_layout", "\"NCHW\""),
                     &out, data_nhwc, weight_hwio));
  assert_memory_equal(kiln_tensor_data(out), kiln_tensor_data(reference),
                      kiln_tensor_byte_size(reference));
  kiln_tensor_release(out);
  kiln_tensor_release(weight_hwio);
  kiln_tensor_release(data_nhwc);
  kiln_tensor_release(reference);
  kiln_tensor_release(weight);
  kiln_tensor_release(data);
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT64, 4, SHAPE(1, 1, 1, 1), (double[]){1});
  kiln_tensor_t *weight = tensor_of(KILN_DTYPE_FLOAT64, 4, SHAPE(1, 1, 1, 1), (double[]){2});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(RUN(op, attrs_with(op, NULL), &out, data, weight), UNIMPLEMENTED,
                     "nn.conv2d_transpose: the reference kernel does not handle dtype float64");
  kiln_tensor_release(weight);
  kiln_tensor_release(data);
  data = tensor_of(F32, 4, SHAPE(1, 1, 1, 1), (float[]){1});
  weight = tensor_of(F32, 4, SHAPE(1, 1, 1, 1), (float[]){2});
  kiln_tensor_t *wrong = tensor_of(F32, 4, SHAPE(1, 1, 2, 1), (float[]){0, 0});
  kiln_tensor_t *inputs[] = {data, weight};
  kiln_kernel_args_t args = {op, attrs_with(op, NULL), 2, inputs, 1, &wrong};
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "nn.conv2d_transpose: output tensor (1, 1, 2, 1) float32 does not match the "
                     "type (1, 1, 1, 1) float32");
  kiln_tensor_release(wrong);
  kiln_tensor_release(weight);
  kiln_tensor_release(data);
}

/* ---- nn.conv3d_transpose ---- */

static void test_conv3d_transpose_rules(void **state) {
  (void)state;
  const kiln_op_t *op3 = &kiln_op_conv3d_transpose;
  assert_string_equal(op3->name, "nn.conv3d_transpose");
  assert_int_equal(op3->id, KILN_OP_CONV3D_TRANSPOSE);
  assert_defaults(op3, "strides=[1, 1, 1], padding=[0, 0, 0, 0, 0, 0], output_padding=[0, 0, 0], "
                       "dilation=[1, 1, 1], groups=1, channels=0, kernel_size=[], "
                       "data_layout=\"NCDHW\", kernel_layout=\"IODHW\", out_layout=\"\"");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op3, ATTRS(op3, "padding", "[0, 0, 0, 0]")),
                     INVALID_ARGUMENT, "nn.conv3d_transpose: padding must have 6 values, got 4");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op3, ATTRS(op3, "output_padding", "[0, 0, 1]")),
                     INVALID_ARGUMENT,
                     "nn.conv3d_transpose: output_padding[2] is 1; it must be smaller than the "
                     "stride (1) or the dilation (1)");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op3, ATTRS(op3, "kernel_layout", "\"IOHW\"")),
                     INVALID_ARGUMENT,
                     "nn.conv3d_transpose: kernel_layout IOHW must have the primal axes IODHW");
  /* kernel 2: D (3 - 1) 2 - 1 + 1 + 1 (output_padding) + 1 = 6,
   * H (4 - 1) + 1 + 1 = 5, W (5 - 1) - 1 + 1 + 1 = 5; groups 2: 3 outputs
   * each */
  const kiln_type_t *out = NULL;
  void *a = ATTRS(op3, "strides", "[2, 1, 1]", "padding", "[1, 0, 0, 0, 0, 1]", "output_padding",
                  "[1, 0, 0]", "groups", "2");
  KILN_ASSERT_OK(INFER(op3, a, &out, ttype(F32, 5, SHAPE(1, 2, 3, 4, 5)),
                       ttype(F32, 5, SHAPE(2, 3, 2, 2, 2))));
  assert_type(out, F32, 5, SHAPE(1, 6, 6, 5, 5));
  KILN_ASSERT_STATUS(INFER(op3, attrs_with(op3, NULL), &out, ttype(F32, 5, SHAPE(1, 2, 3, 4, 5)),
                           ttype(F32, 5, SHAPE(3, 1, 2, 2, 2))),
                     INVALID_ARGUMENT,
                     "nn.conv3d_transpose: data (1, 2, 3, 4, 5) has 2 channels but weight (3, 1, "
                     "2, 2, 2) (IODHW) expects 3");
  KILN_ASSERT_STATUS(INFER(op3, ATTRS(op3, "padding", "[1, 0, 0, 1, 0, 0]"), &out,
                           ttype(F32, 5, SHAPE(1, 1, 1, 4, 5)),
                           ttype(F32, 5, SHAPE(1, 1, 1, 1, 1))),
                     INVALID_ARGUMENT,
                     "nn.conv3d_transpose: data (1, 1, 1, 4, 5) gives no output planes (padding "
                     "1+1)");
}

static void test_conv3d_transpose_by_hand(void **state) {
  (void)state;
  const kiln_op_t *op3 = &kiln_op_conv3d_transpose;
  /* groups 2, stride 2 along W: channel 0 (1, 2) scatters (1, 10) to
   * (1, 10, 2, 20), channel 1 (3, 4) scatters (1, -1) to (3, -3, 4, -4) */
  assert_run2_f32(op3, ATTRS(op3, "groups", "2", "strides", "[1, 1, 2]"), 5, SHAPE(1, 2, 1, 1, 2),
                  (const float[]){1, 2, 3, 4}, SHAPE(2, 1, 1, 1, 2), (const float[]){1, 10, 1, -1},
                  (const double[]){1, 10, 2, 20, 3, -3, 4, -4}, 8);
  /* D (1, 2), kernel (1, 10) with dilation 3: the full output (1, 2, 0, 10,
   * 20), the front pad of 1 taken off */
  assert_run2_f32(op3, ATTRS(op3, "dilation", "[3, 1, 1]", "padding", "[1, 0, 0, 0, 0, 0]"), 5,
                  SHAPE(1, 1, 2, 1, 1), (const float[]){1, 2}, SHAPE(1, 1, 2, 1, 1),
                  (const float[]){1, 10}, (const double[]){2, 0, 10, 20}, 4);
  /* a (2, 2, 2) cube of ones through a (1, 1, 1) kernel of 2, stride 2 and
   * output_padding 1 along H: input row h lands on row 2h; rows 1 and 3
   * (the output padding) stay 0 */
  const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  double expected[16] = {0};
  for (int d = 0; d < 2; ++d) {
    for (int h = 0; h < 2; ++h) {
      expected[d * 8 + h * 4 + 0] = expected[d * 8 + h * 4 + 1] = 2;
    }
  }
  assert_run2_f32(op3, ATTRS(op3, "strides", "[1, 2, 1]", "output_padding", "[0, 1, 0]"), 5,
                  SHAPE(1, 1, 2, 2, 2), ones, SHAPE(1, 1, 1, 1, 1), (const float[]){2}, expected,
                  16);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults_and_validation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relation_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relation_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layout_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_against_scatter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_nhwc, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv3d_transpose_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv3d_transpose_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
