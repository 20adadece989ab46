/*
 * Tests of nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d and
 * nn.global_max_pool2d: attributes and validation, output extents (floor and
 * ceil mode, including the rule that drops a last window starting in the
 * trailing padding), every relation error, the layout rule, and the kernels
 * on hand-computed windows: padding ignored by max, both avg divisors
 * (ONNX's count_include_pad, clipped to the padded input), dilation, empty
 * windows, NaN, NHWC / NCHW{c}c against NCHW, max over uint8 and int8
 * (padding and empty windows too), and the 3-D forms (defaults, validation,
 * extents, errors, both divisors by hand).
 */
#include <math.h>

#include "kiln_op_test.h"
#include "op/nn_common.h"

#define F32 KILN_DTYPE_FLOAT32

/* Element i is i + 1. */
static kiln_tensor_t *counting(int ndim, const int64_t *shape) {
  kiln_tensor_t *t = tensor_zeros(F32, ndim, shape);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    ((float *)kiln_tensor_data(t))[i] = (float)(i + 1);
  }
  return t;
}

/* Runs and compares with `want`, then releases the output. */
static void check(const kiln_op_t *op, const void *a, kiln_tensor_t *input, const float *want,
                  int64_t count) {
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, a, input, &out));
  assert_int_equal(kiln_tensor_element_count(out), count);
  const float *got = kiln_tensor_data(out);
  for (int64_t i = 0; i < count; ++i) {
    double tolerance = 1e-5 * fmax(1.0, fabs(want[i]));
    if (!(fabs((double)got[i] - want[i]) <= tolerance) && !(isinf(want[i]) && got[i] == want[i])) {
      fail_msg("element %lld: got %.9g, want %.9g", (long long)i, got[i], want[i]);
    }
  }
  kiln_tensor_release(out);
}
#define CHECK(op, a, input, ...)                    \
  check(op, a, input, (const float[]){__VA_ARGS__}, \
        (int64_t)(sizeof((const float[]){__VA_ARGS__}) / sizeof(float)))

/* ---- attributes ---- */

static void test_metadata_and_attrs(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_max_pool2d, &kiln_op_avg_pool2d, &kiln_op_global_avg_pool2d,
                            &kiln_op_global_max_pool2d};
  const char *names[] = {"nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
                         "nn.global_max_pool2d"};
  for (int i = 0; i < 4; ++i) {
    assert_string_equal(ops[i]->name, names[i]);
    assert_int_equal(ops[i]->id, KILN_OP_MAX_POOL2D + i);
    assert_int_equal(ops[i]->pattern, KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE);
    assert_int_equal(ops[i]->min_inputs, 1);
    assert_int_equal(ops[i]->max_inputs, 1);
  }
  assert_defaults(&kiln_op_max_pool2d,
                  "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0, 0, 0], "
                  "layout=\"NCHW\", ceil_mode=False");
  assert_defaults(&kiln_op_avg_pool2d,
                  "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0, 0, 0], "
                  "layout=\"NCHW\", ceil_mode=False, count_include_pad=False");
  assert_defaults(&kiln_op_global_avg_pool2d, "layout=\"NCHW\"");
  assert_defaults(&kiln_op_global_max_pool2d, "layout=\"NCHW\"");
}

static void test_validation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_max_pool2d;
  const kiln_status_code_t bad = KILN_STATUS_CODE_INVALID_ARGUMENT;
  assert_attr_invalid(op, "pool_size", "[0, 1]", bad, "nn.max_pool2d: pool_size[0] is 0");
  assert_attr_invalid(op, "pool_size", "[3]", bad, "nn.max_pool2d: pool_size must have 2 values");
  assert_attr_invalid(op, "strides", "[1, 0]", bad, "nn.max_pool2d: strides[1] is 0");
  assert_attr_invalid(op, "dilation", "[1, 1, 1]", bad,
                      "nn.max_pool2d: dilation must have 2 values");
  assert_attr_invalid(op, "padding", "[1, 1, 1]", bad, "nn.max_pool2d: padding must have 4 values");
  assert_attr_invalid(&kiln_op_avg_pool2d, "padding", "[0, -1, 0, 0]", bad,
                      "nn.avg_pool2d: padding[1] is -1");
  assert_attr_invalid(op, "layout", "\"NCW\"", bad,
                      "nn.max_pool2d: layout NCW must have the primal axes NCHW");
  assert_attr_invalid(op, "layout", "\"NCHW4h\"", KILN_STATUS_CODE_UNIMPLEMENTED,
                      "nn.max_pool2d: layout NCHW4h is not supported");
  assert_attr_invalid(&kiln_op_global_avg_pool2d, "layout", "\"\"", bad,
                      "nn.global_avg_pool2d: layout: layout is empty");
  KILN_ASSERT_OK(kiln_op_attrs_validate(op, ATTRS(op, "layout", "\"NHWC\"")));
  KILN_ASSERT_OK(kiln_op_attrs_validate(op, ATTRS(op, "layout", "\"NCHW8c\"")));
}

/* ---- relations ---- */

static void test_relation(void **state) {
  (void)state;
  const kiln_op_t *max = &kiln_op_max_pool2d;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(max, ATTRS(max, "pool_size", "[3, 3]", "strides", "[2, 2]"),
                        ttype(F32, 4, SHAPE(1, 3, 7, 7)), &out));
  assert_type(out, F32, 4, SHAPE(1, 3, 3, 3));
  /* H: (6 - 3) / 2 + 1 = 2 floor, 3 ceil; W: (5 - 2) / 2 + 1 = 2 floor, 3 ceil. */
  KILN_ASSERT_OK(infer1(max, ATTRS(max, "pool_size", "[3, 2]", "strides", "[2, 2]"),
                        ttype(F32, 4, SHAPE(2, 1, 6, 5)), &out));
  assert_type(out, F32, 4, SHAPE(2, 1, 2, 2));
  KILN_ASSERT_OK(infer1(max,
                        ATTRS(max, "pool_size", "[3, 2]", "strides", "[2, 2]", "ceil_mode", "True"),
                        ttype(F32, 4, SHAPE(2, 1, 6, 5)), &out));
  assert_type(out, F32, 4, SHAPE(2, 1, 3, 3));
  /* W = 5, pad 1+1, pool 2, stride 3: ceil(5 / 3) + 1 = 3, but window 2 would
   * start at 6 = W + pad_left, inside the trailing padding: dropped, 2. */
  KILN_ASSERT_OK(infer1(max,
                        ATTRS(max, "pool_size", "[1, 2]", "strides", "[1, 3]", "padding",
                              "[0, 1, 0, 1]", "ceil_mode", "True"),
                        ttype(F32, 4, SHAPE(1, 1, 1, 5)), &out));
  assert_type(out, F32, 4, SHAPE(1, 1, 1, 2));
  /* Dilation 2 on 7: effective window 5, (7 - 5) / 1 + 1 = 3. */
  KILN_ASSERT_OK(infer1(&kiln_op_avg_pool2d,
                        ATTRS(&kiln_op_avg_pool2d, "pool_size", "[3, 1]", "dilation", "[2, 1]"),
                        ttype(F32, 4, SHAPE(1, 2, 7, 13)), &out));
  assert_type(out, F32, 4, SHAPE(1, 2, 3, 13));
  void *nhwc = ATTRS(max, "pool_size", "[3, 3]", "strides", "[2, 2]", "layout", "\"NHWC\"");
  KILN_ASSERT_OK(infer1(max, nhwc, ttype(F32, 4, SHAPE(1, 7, 7, 3)), &out));
  assert_type(out, F32, 4, SHAPE(1, 3, 3, 3));
  void *blocked = ATTRS(max, "pool_size", "[3, 3]", "strides", "[2, 2]", "layout", "\"NCHW4c\"");
  KILN_ASSERT_OK(infer1(max, blocked, ttype(F32, 5, SHAPE(1, 2, 7, 7, 4)), &out));
  assert_type(out, F32, 5, SHAPE(1, 2, 3, 3, 4));
  const kiln_op_t *global = &kiln_op_global_avg_pool2d;
  KILN_ASSERT_OK(infer1(global, attrs_with(global, NULL), ttype(F32, 4, SHAPE(2, 3, 5, 7)), &out));
  assert_type(out, F32, 4, SHAPE(2, 3, 1, 1));
  KILN_ASSERT_OK(infer1(&kiln_op_global_max_pool2d,
                        ATTRS(&kiln_op_global_max_pool2d, "layout", "\"NHWC\""),
                        ttype(KILN_DTYPE_FLOAT16, 4, SHAPE(2, 5, 7, 3)), &out));
  assert_type(out, KILN_DTYPE_FLOAT16, 4, SHAPE(2, 1, 1, 3));
}

static void test_relation_errors(void **state) {
  (void)state;
  const kiln_op_t *max = &kiln_op_max_pool2d;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer1(max, attrs_with(max, NULL), ttype(F32, 3, SHAPE(3, 7, 7)), &out),
                     INVALID_ARGUMENT,
                     "nn.max_pool2d: data: (3, 7, 7) must have rank 4 for layout NCHW, not 3");
  KILN_ASSERT_STATUS(
      infer1(max, ATTRS(max, "pool_size", "[5, 5]"), ttype(F32, 4, SHAPE(1, 1, 3, 3)), &out),
      INVALID_ARGUMENT,
      "nn.max_pool2d: data (1, 1, 3, 3) is too small: height 3 with padding 0+0 has "
      "no room for a window of 5 (dilation 1)");
  KILN_ASSERT_STATUS(
      infer1(max, ATTRS(max, "layout", "\"NCHW4c\""), ttype(F32, 5, SHAPE(1, 2, 7, 7, 3)), &out),
      INVALID_ARGUMENT, "has 3 at axis 'c' of layout NCHW4c, not 4");
  KILN_ASSERT_STATUS(
      infer1(max, ATTRS(max, "strides", "[0, 1]"), ttype(F32, 4, SHAPE(1, 1, 3, 3)), &out),
      INVALID_ARGUMENT, "nn.max_pool2d: strides[0] is 0");
  KILN_ASSERT_STATUS(infer1(max, NULL, ttype(F32, 4, SHAPE(1, 1, 3, 3)), &out), INVALID_ARGUMENT,
                     "nn.max_pool2d: attributes are missing");
  const kiln_op_t *global = &kiln_op_global_max_pool2d;
  KILN_ASSERT_STATUS(
      infer1(global, attrs_with(global, NULL), ttype(F32, 4, SHAPE(1, 3, 0, 5)), &out),
      INVALID_ARGUMENT, "nn.global_max_pool2d: data (1, 3, 0, 5) is too small: height 0");
  KILN_ASSERT_STATUS(infer1(global, attrs_with(global, NULL), ttype(F32, 3, SHAPE(1, 3, 5)), &out),
                     INVALID_ARGUMENT, "nn.global_max_pool2d: data: (1, 3, 5) must have rank 4");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[1] = {"NCHW"};
  const char *required[1] = {NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_avg_pool2d,
                                     .attrs = ATTRS(&kiln_op_avg_pool2d, "layout", "\"NCHW16c\""),
                                     .num_inputs = 1,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_op_avg_pool2d.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW16c");
  assert_string_equal(relation.output_layout, "NCHW16c");
  relation.op = &kiln_op_global_max_pool2d;
  relation.attrs = ATTRS(&kiln_op_global_max_pool2d, "layout", "\"NHWC\"");
  KILN_ASSERT_OK(kiln_op_global_max_pool2d.correct_layout(&relation));
  assert_string_equal(required[0], "NHWC");
  assert_string_equal(relation.output_layout, "NHWC");
}

/* ---- kernels ---- */

static void test_max_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = counting(4, SHAPE(1, 1, 4, 4)); /* rows 1..4, 5..8, 9..12, 13..16 */
  const kiln_op_t *max = &kiln_op_max_pool2d;
  CHECK(max, ATTRS(max, "pool_size", "[2, 2]", "strides", "[2, 2]"), x, 6, 8, 14, 16);
  /* 3x1 windows, stride (1, 3): rows 0..2 and 1..3 of columns 0 and 3. */
  CHECK(max, ATTRS(max, "pool_size", "[3, 1]", "strides", "[1, 3]"), x, 9, 12, 13, 16);
  kiln_tensor_release(x);
  /* All negative, padding 1: the padded cells must not contribute a 0. */
  x = tensor_of(F32, 4, SHAPE(1, 1, 2, 2), (const float[]){-4, -3, -2, -1});
  CHECK(max, ATTRS(max, "pool_size", "[2, 2]", "padding", "[1, 1, 1, 1]"), x, -4, -3, -3, -2, -1,
        -1, -2, -1, -1);
  kiln_tensor_release(x);
}

/* Data 1..9 (3x3), pool 3, pad 1: corner windows hold 4 cells, edges 6, the center 9. */
static void test_avg_padding(void **state) {
  (void)state;
  kiln_tensor_t *x = counting(4, SHAPE(1, 1, 3, 3));
  const kiln_op_t *avg = &kiln_op_avg_pool2d;
  void *exclude = ATTRS(avg, "pool_size", "[3, 3]", "padding", "[1, 1, 1, 1]");
  CHECK(avg, exclude, x, 12 / 4.0f, 21 / 6.0f, 16 / 4.0f, 27 / 6.0f, 45 / 9.0f, 33 / 6.0f,
        24 / 4.0f, 39 / 6.0f, 28 / 4.0f);
  void *include =
      ATTRS(avg, "pool_size", "[3, 3]", "padding", "[1, 1, 1, 1]", "count_include_pad", "True");
  CHECK(avg, include, x, 12 / 9.0f, 21 / 9.0f, 16 / 9.0f, 27 / 9.0f, 45 / 9.0f, 33 / 9.0f,
        24 / 9.0f, 39 / 9.0f, 28 / 9.0f);
  kiln_tensor_release(x);
}

/* Width 4 = [1, 2, 3, 4], pool 3, stride 2, pad 1+1, ceil: windows start at
 * -1, 1, 3. The last covers 3, 4, 5: cell 4 is padding, cell 5 lies past the
 * padded input, so ONNX's divisor with padding counted is 2, not 3. */
static void test_avg_ceil_clipping(void **state) {
  (void)state;
  kiln_tensor_t *x = counting(4, SHAPE(1, 1, 1, 4));
  const kiln_op_t *avg = &kiln_op_avg_pool2d;
  const char *window[] = {"pool_size", "[1, 3]",       "strides",   "[1, 2]",
                          "padding",   "[0, 1, 0, 1]", "ceil_mode", "True"};
  void *include = ATTRS(avg, window[0], window[1], window[2], window[3], window[4], window[5],
                        window[6], window[7], "count_include_pad", "True");
  CHECK(avg, include, x, (1 + 2) / 3.0f, (2 + 3 + 4) / 3.0f, 4 / 2.0f);
  void *exclude = ATTRS(avg, window[0], window[1], window[2], window[3], window[4], window[5],
                        window[6], window[7]);
  CHECK(avg, exclude, x, (1 + 2) / 2.0f, (2 + 3 + 4) / 3.0f, 4 / 1.0f);
  CHECK(&kiln_op_max_pool2d,
        ATTRS(&kiln_op_max_pool2d, window[0], window[1], window[2], window[3], window[4], window[5],
              window[6], window[7]),
        x, 2, 4, 4);
  kiln_tensor_release(x);
}

static void test_dilation_and_empty_windows(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 4, SHAPE(1, 1, 1, 5), (const float[]){3, 1, 4, 1, 5});
  const kiln_op_t *max = &kiln_op_max_pool2d, *avg = &kiln_op_avg_pool2d;
  /* Cells j and j + 2. */
  CHECK(max, ATTRS(max, "pool_size", "[1, 2]", "dilation", "[1, 2]"), x, 4, 1, 5);
  CHECK(avg, ATTRS(avg, "pool_size", "[1, 2]", "dilation", "[1, 2]"), x, 3.5f, 1, 4.5f);
  kiln_tensor_release(x);
  /* One cell, pool 2 with dilation 2 and padding 1+1: the only window covers
   * -1 and 1, both outside the input. */
  x = tensor_of(F32, 4, SHAPE(1, 1, 1, 1), (const float[]){7});
  const char *w[] = {"pool_size", "[1, 2]", "dilation", "[1, 2]", "padding", "[0, 1, 0, 1]"};
  CHECK(max, ATTRS(max, w[0], w[1], w[2], w[3], w[4], w[5]), x, -INFINITY);
  CHECK(avg, ATTRS(avg, w[0], w[1], w[2], w[3], w[4], w[5]), x, 0);
  CHECK(avg, ATTRS(avg, w[0], w[1], w[2], w[3], w[4], w[5], "count_include_pad", "True"), x, 0);
  kiln_tensor_release(x);
}

static void test_nan_propagates_through_max(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 4, SHAPE(1, 1, 1, 3), (const float[]){1, NAN, 2});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      run1(&kiln_op_global_max_pool2d, attrs_with(&kiln_op_global_max_pool2d, NULL), x, &out));
  assert_true(isnan(((const float *)kiln_tensor_data(out))[0]));
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

static void test_global(void **state) {
  (void)state;
  /* (2, 3, 1, 5): channel k of batch n holds 5 consecutive values. */
  kiln_tensor_t *x = counting(4, SHAPE(2, 3, 1, 5));
  CHECK(&kiln_op_global_avg_pool2d, attrs_with(&kiln_op_global_avg_pool2d, NULL), x, 3, 8, 13, 18,
        23, 28);
  CHECK(&kiln_op_global_max_pool2d, attrs_with(&kiln_op_global_max_pool2d, NULL), x, 5, 10, 15, 20,
        25, 30);
  kiln_tensor_release(x);
}

/* The same pooling in NCHW, NHWC and NCHW2c, on data rearranged here. */
static void test_layouts_agree(void **state) {
  (void)state;
  enum { N = 1, C = 4, H = 5, W = 7 };
  kiln_tensor_t *nchw = tensor_zeros(F32, 4, SHAPE(N, C, H, W));
  kiln_tensor_t *nhwc = tensor_zeros(F32, 4, SHAPE(N, H, W, C));
  kiln_tensor_t *blocked = tensor_zeros(F32, 5, SHAPE(N, C / 2, H, W, 2));
  float *a = kiln_tensor_data(nchw), *b = kiln_tensor_data(nhwc), *c = kiln_tensor_data(blocked);
  for (int ch = 0; ch < C; ++ch) {
    for (int h = 0; h < H; ++h) {
      for (int w = 0; w < W; ++w) {
        float v = sinf((float)(ch * 100 + h * 10 + w));
        a[(ch * H + h) * W + w] = v;
        b[(h * W + w) * C + ch] = v;
        c[(((ch / 2) * H + h) * W + w) * 2 + ch % 2] = v;
      }
    }
  }
  const kiln_op_t *avg = &kiln_op_avg_pool2d;
  const char *layouts[] = {"\"NCHW\"", "\"NHWC\"", "\"NCHW2c\""};
  kiln_tensor_t *inputs[] = {nchw, nhwc, blocked};
  kiln_tensor_t *outs[3] = {NULL};
  for (int i = 0; i < 3; ++i) {
    void *at = ATTRS(avg, "pool_size", "[3, 2]", "strides", "[2, 3]", "padding", "[1, 0, 1, 1]",
                     "layout", layouts[i]);
    KILN_ASSERT_OK(run1(avg, at, inputs[i], &outs[i]));
  }
  const int64_t *shape = kiln_tensor_shape(outs[0]);
  int64_t oh = shape[2], ow = shape[3];
  const float *ra = kiln_tensor_data(outs[0]), *rb = kiln_tensor_data(outs[1]),
              *rc = kiln_tensor_data(outs[2]);
  for (int ch = 0; ch < C; ++ch) {
    for (int64_t h = 0; h < oh; ++h) {
      for (int64_t w = 0; w < ow; ++w) {
        float want = ra[(ch * oh + h) * ow + w];
        assert_true(rb[(h * ow + w) * C + ch] == want);
        assert_true(rc[(((ch / 2) * oh + h) * ow + w) * 2 + ch % 2] == want);
      }
    }
  }
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(outs[i]);
    kiln_tensor_release(inputs[i]);
  }
}

/* uint8 and int8 max by hand: 2x2 windows, stride 1, padding 1 on the top
 * and left of a 2x3 input, so the first row and column of outputs see
 * padding, which max ignores; the padding of 2 around a 1x1 input makes a
 * window with no cell inside, whose max is the dtype's lowest value. */
static void test_integer_max(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_max_pool2d;
  void *a = ATTRS(op, "pool_size", "[2, 2]", "padding", "[1, 1, 0, 0]");
  kiln_tensor_t *x =
      tensor_of(KILN_DTYPE_UINT8, 4, SHAPE(1, 1, 2, 3), (const uint8_t[]){7, 200, 3, 255, 0, 9});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, a, x, &out));
  assert_int_equal(kiln_tensor_dtype(out), KILN_DTYPE_UINT8);
  const uint8_t want[6] = {7, 200, 200, 255, 255, 200};
  assert_memory_equal(kiln_tensor_data(out), want, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  x = tensor_of(KILN_DTYPE_INT8, 4, SHAPE(1, 1, 2, 3), (const int8_t[]){-7, -128, 3, -1, 0, -9});
  KILN_ASSERT_OK(run1(op, a, x, &out));
  const int8_t want_signed[6] = {-7, -7, 3, -1, 0, 3};
  assert_memory_equal(kiln_tensor_data(out), want_signed, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  x = tensor_of(KILN_DTYPE_INT8, 4, SHAPE(1, 1, 1, 1), (const int8_t[]){5});
  void *wide = ATTRS(op, "pool_size", "[2, 2]", "strides", "[2, 2]", "padding", "[2, 2, 2, 2]");
  KILN_ASSERT_OK(run1(op, wide, x, &out));
  const int8_t want_empty[4] = {-128, -128, -128, 5};
  assert_int_equal(kiln_tensor_element_count(out), 4);
  assert_memory_equal(kiln_tensor_data(out), want_empty, 4);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

/* nn.max_pool3d and nn.avg_pool3d: the same rules over D, H and W. */
static void test_pool3d_rules(void **state) {
  (void)state;
  const kiln_op_t *max = &kiln_op_max_pool3d, *avg = &kiln_op_avg_pool3d;
  assert_string_equal(max->name, "nn.max_pool3d");
  assert_string_equal(avg->name, "nn.avg_pool3d");
  assert_defaults(max, "pool_size=[1, 1, 1], strides=[1, 1, 1], dilation=[1, 1, 1], "
                       "padding=[0, 0, 0, 0, 0, 0], layout=\"NCDHW\", ceil_mode=False");
  assert_defaults(avg, "pool_size=[1, 1, 1], strides=[1, 1, 1], dilation=[1, 1, 1], "
                       "padding=[0, 0, 0, 0, 0, 0], layout=\"NCDHW\", ceil_mode=False, "
                       "count_include_pad=False");
  const kiln_status_code_t bad = KILN_STATUS_CODE_INVALID_ARGUMENT;
  assert_attr_invalid(max, "pool_size", "[2, 2]", bad,
                      "nn.max_pool3d: pool_size must have 3 values");
  assert_attr_invalid(max, "padding", "[0, 0, 0, 0]", bad,
                      "nn.max_pool3d: padding must have 6 values");
  assert_attr_invalid(max, "layout", "\"NCHW\"", bad, "nn.max_pool3d");
  /* D 5, H 6, W 7; pool (2, 3, 3), strides (1, 2, 2), front padding 1 and
   * ceil_mode: D (5 + 1 - 2) / 1 + 1 = 5, H ceil(3 / 2) + 1 = 3, W 3. */
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(max,
                        ATTRS(max, "pool_size", "[2, 3, 3]", "strides", "[1, 2, 2]", "padding",
                              "[1, 0, 0, 0, 0, 0]", "ceil_mode", "True"),
                        ttype(F32, 5, SHAPE(2, 3, 5, 6, 7)), &out));
  assert_type(out, F32, 5, SHAPE(2, 3, 5, 3, 3));
  KILN_ASSERT_OK(infer1(avg, ATTRS(avg, "pool_size", "[1, 2, 2]", "layout", "\"NDHWC\""),
                        ttype(F32, 5, SHAPE(1, 4, 5, 6, 3)), &out));
  assert_type(out, F32, 5, SHAPE(1, 4, 4, 5, 3));
  KILN_ASSERT_STATUS(
      infer1(max, ATTRS(max, "pool_size", "[3, 1, 1]"), ttype(F32, 5, SHAPE(1, 1, 2, 3, 3)), &out),
      INVALID_ARGUMENT,
      "nn.max_pool3d: data (1, 1, 2, 3, 3) is too small: depth 2 with padding 0+0 has no room "
      "for a window of 3 (dilation 1)");
  KILN_ASSERT_STATUS(infer1(max, attrs_with(max, NULL), ttype(F32, 4, SHAPE(1, 1, 3, 3)), &out),
                     INVALID_ARGUMENT, "must have rank 5 for layout NCDHW, not 4");
}

/* Data 1..12 as (1, 1, 2, 2, 3) (D, H, W). Pool (2, 2, 2): the max and the
 * mean of the two 2x2x2 boxes; with W padded by 1 on both sides the mean
 * counts the cells inside (count_include_pad False) or all 8 (True). */
static void test_pool3d_by_hand(void **state) {
  (void)state;
  const kiln_op_t *max = &kiln_op_max_pool3d, *avg = &kiln_op_avg_pool3d;
  kiln_tensor_t *x = counting(5, SHAPE(1, 1, 2, 2, 3));
  CHECK(max, ATTRS(max, "pool_size", "[2, 2, 2]"), x, 11, 12);
  CHECK(avg, ATTRS(avg, "pool_size", "[2, 2, 2]"), x, 6, 7);
  const char *padded[] = {"pool_size", "[2, 2, 2]", "padding", "[0, 0, 1, 0, 0, 1]", NULL};
  CHECK(avg, attrs_with(avg, padded), x, 5.5, 6, 7, 7.5);
  CHECK(avg,
        ATTRS(avg, "pool_size", "[2, 2, 2]", "padding", "[0, 0, 1, 0, 0, 1]", "count_include_pad",
              "True"),
        x, 2.75, 6, 7, 3.75);
  CHECK(max, attrs_with(max, padded), x, 10, 11, 12, 12);
  kiln_tensor_release(x);
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_zeros(KILN_DTYPE_FLOAT64, 4, SHAPE(1, 1, 2, 2));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(run1(&kiln_op_max_pool2d, attrs_with(&kiln_op_max_pool2d, NULL), x, &out),
                     UNIMPLEMENTED,
                     "nn.max_pool2d: the reference kernel does not handle dtype float64");
  kiln_tensor_release(x);
  x = tensor_zeros(KILN_DTYPE_UINT8, 4, SHAPE(1, 1, 2, 2));
  KILN_ASSERT_STATUS(run1(&kiln_op_avg_pool2d, attrs_with(&kiln_op_avg_pool2d, NULL), x, &out),
                     UNIMPLEMENTED,
                     "nn.avg_pool2d: the reference kernel does not handle dtype uint8");
  kiln_tensor_release(x);
  x = tensor_zeros(KILN_DTYPE_INT64, 4, SHAPE(1, 1, 2, 2));
  KILN_ASSERT_STATUS(run1(&kiln_op_max_pool2d, attrs_with(&kiln_op_max_pool2d, NULL), x, &out),
                     UNIMPLEMENTED,
                     "nn.max_pool2d: the reference kernel does not handle dtype int64");
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata_and_attrs),
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_relation),
      cmocka_unit_test(test_relation_errors),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_max_by_hand),
      cmocka_unit_test(test_avg_padding),
      cmocka_unit_test(test_avg_ceil_clipping),
      cmocka_unit_test(test_dilation_and_empty_windows),
      cmocka_unit_test(test_nan_propagates_through_max),
      cmocka_unit_test(test_global),
      cmocka_unit_test(test_layouts_agree),
      cmocka_unit_test(test_integer_max),
      cmocka_unit_test(test_pool3d_rules),
      cmocka_unit_test(test_pool3d_by_hand),
      cmocka_unit_test(test_kernel_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
