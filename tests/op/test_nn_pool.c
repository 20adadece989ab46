/*
 * Tests of nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d and
 * nn.global_max_pool2d: attributes and validation, output extents (floor and
 * ceil mode, including the rule that drops a last window starting in the
 * trailing padding), every relation error, the layout rule, and the kernels
 * on hand-computed windows: padding ignored by max, both avg divisors
 * (ONNX's count_include_pad, clipped to the padded input), dilation, empty
 * windows, NaN, and NHWC / NCHW{c}c against NCHW.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "kiln_test.h"
#include "op/nn_common.h"

#define DIMS(...)                                                                \
  (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]) { \
    __VA_ARGS__                                                                  \
  }

static kiln_arena_t arena;

static int group_setup(void **state) {
  (void)state;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  kiln_arena_deinitialize(&arena);
  return 0;
}

static const kiln_type_t *ty(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(&arena, dtype, ndim, shape, &type));
  return type;
}
#define F32(...) ty(KILN_DTYPE_FLOAT32, DIMS(__VA_ARGS__))

/* Default attrs with (name, text) pairs set, NULL-terminated; not validated. */
static void *attrs(const kiln_op_t *op, ...) {
  void *a = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(op, &arena, &a));
  va_list args;
  va_start(args, op);
  for (const char *name = va_arg(args, const char *); name; name = va_arg(args, const char *)) {
    KILN_ASSERT_OK(kiln_op_attrs_set_text(op, a, name, va_arg(args, const char *), &arena));
  }
  va_end(args);
  return a;
}

static kiln_status_t infer(const kiln_op_t *op, const void *a, const kiln_type_t *input,
                           const kiln_type_t **out) {
  return kiln_op_infer_type(op, a, 1, &input, &arena, out);
}

static void assert_type(const kiln_type_t *type, kiln_dtype_t dtype, int ndim,
                        const int64_t *shape) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  assert_non_null(tensor);
  assert_int_equal(tensor->dtype, dtype);
  assert_int_equal(tensor->ndim, ndim);
  for (int i = 0; i < ndim; ++i) {
    assert_int_equal(tensor->shape[i], shape[i]);
  }
}
#define ASSERT_F32(type, ...) assert_type(type, KILN_DTYPE_FLOAT32, DIMS(__VA_ARGS__))

static void assert_attrs_text(const kiln_op_t *op, const void *a, const char *expected) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_op_attrs_format(op, a, &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), expected);
  kiln_strbuf_deinitialize(&sb);
}

static kiln_tensor_t *tensor(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &t));
  return t;
}

static kiln_tensor_t *f32_tensor(int ndim, const int64_t *shape, const float *values) {
  kiln_tensor_t *t = tensor(KILN_DTYPE_FLOAT32, ndim, shape);
  memcpy(kiln_tensor_data(t), values, kiln_tensor_byte_size(t));
  return t;
}

/* Element i is i + 1. */
static kiln_tensor_t *counting(int ndim, const int64_t *shape) {
  kiln_tensor_t *t = tensor(KILN_DTYPE_FLOAT32, ndim, shape);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    ((float *)kiln_tensor_data(t))[i] = (float)(i + 1);
  }
  return t;
}

/* Runs the one-input kernel into a new output of the inferred type. */
static kiln_status_t run(const kiln_op_t *op, const void *a, kiln_tensor_t *input,
                         kiln_tensor_t **out) {
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      infer(op, a, ty(kiln_tensor_dtype(input), kiln_tensor_ndim(input), kiln_tensor_shape(input)),
            &type));
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  *out = tensor(t->dtype, t->ndim, t->shape);
  kiln_kernel_args_t args = {
      .op = op, .attrs = a, .num_inputs = 1, .inputs = &input, .num_outputs = 1, .outputs = out};
  kiln_status_t status = op->reference(&args);
  if (status) {
    kiln_tensor_release(*out);
    *out = NULL;
  }
  return status;
}

/* Runs and compares with `want`, then releases the output. */
static void check(const kiln_op_t *op, const void *a, kiln_tensor_t *input, const float *want,
                  int64_t count) {
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(op, a, input, &out));
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
  assert_attrs_text(&kiln_op_max_pool2d, attrs(&kiln_op_max_pool2d, NULL),
                    "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0, 0, 0], "
                    "layout=\"NCHW\", ceil_mode=False");
  assert_attrs_text(&kiln_op_avg_pool2d, attrs(&kiln_op_avg_pool2d, NULL),
                    "pool_size=[1, 1], strides=[1, 1], dilation=[1, 1], padding=[0, 0, 0, 0], "
                    "layout=\"NCHW\", ceil_mode=False, count_include_pad=False");
  assert_attrs_text(&kiln_op_global_avg_pool2d, attrs(&kiln_op_global_avg_pool2d, NULL),
                    "layout=\"NCHW\"");
  assert_attrs_text(&kiln_op_global_max_pool2d, attrs(&kiln_op_global_max_pool2d, NULL),
                    "layout=\"NCHW\"");
}

static void assert_invalid(const kiln_op_t *op, const char *name, const char *text,
                           kiln_status_code_t code, const char *message) {
  kiln_test_assert_status(kiln_op_attrs_validate(op, attrs(op, name, text, NULL)), code, message,
                          name, __FILE__, __LINE__);
}

static void test_validation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_max_pool2d;
  const kiln_status_code_t bad = KILN_STATUS_CODE_INVALID_ARGUMENT;
  assert_invalid(op, "pool_size", "[0, 1]", bad, "nn.max_pool2d: pool_size[0] is 0");
  assert_invalid(op, "pool_size", "[3]", bad, "nn.max_pool2d: pool_size must have 2 values");
  assert_invalid(op, "strides", "[1, 0]", bad, "nn.max_pool2d: strides[1] is 0");
  assert_invalid(op, "dilation", "[1, 1, 1]", bad, "nn.max_pool2d: dilation must have 2 values");
  assert_invalid(op, "padding", "[1, 1, 1]", bad, "nn.max_pool2d: padding must have 4 values");
  assert_invalid(&kiln_op_avg_pool2d, "padding", "[0, -1, 0, 0]", bad,
                 "nn.avg_pool2d: padding[1] is -1");
  assert_invalid(op, "layout", "\"NCW\"", bad,
                 "nn.max_pool2d: layout NCW must have the primal axes NCHW");
  assert_invalid(op, "layout", "\"NCHW4h\"", KILN_STATUS_CODE_UNIMPLEMENTED,
                 "nn.max_pool2d: layout NCHW4h is not supported");
  assert_invalid(&kiln_op_global_avg_pool2d, "layout", "\"\"", bad,
                 "nn.global_avg_pool2d: layout: layout is empty");
  KILN_ASSERT_OK(kiln_op_attrs_validate(op, attrs(op, "layout", "\"NHWC\"", NULL)));
  KILN_ASSERT_OK(kiln_op_attrs_validate(op, attrs(op, "layout", "\"NCHW8c\"", NULL)));
}

/* ---- relations ---- */

static void test_relation(void **state) {
  (void)state;
  const kiln_op_t *max = &kiln_op_max_pool2d;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer(max, attrs(max, "pool_size", "[3, 3]", "strides", "[2, 2]", NULL),
                       F32(1, 3, 7, 7), &out));
  ASSERT_F32(out, 1, 3, 3, 3);
  /* H: (6 - 3) / 2 + 1 = 2 floor, 3 ceil; W: (5 - 2) / 2 + 1 = 2 floor, 3 ceil. */
  KILN_ASSERT_OK(infer(max, attrs(max, "pool_size", "[3, 2]", "strides", "[2, 2]", NULL),
                       F32(2, 1, 6, 5), &out));
  ASSERT_F32(out, 2, 1, 2, 2);
  KILN_ASSERT_OK(
      infer(max, attrs(max, "pool_size", "[3, 2]", "strides", "[2, 2]", "ceil_mode", "True", NULL),
            F32(2, 1, 6, 5), &out));
  ASSERT_F32(out, 2, 1, 3, 3);
  /* W = 5, pad 1+1, pool 2, stride 3: ceil(5 / 3) + 1 = 3, but window 2 would
   * start at 6 = W + pad_left, inside the trailing padding: dropped, 2. */
  KILN_ASSERT_OK(infer(max,
                       attrs(max, "pool_size", "[1, 2]", "strides", "[1, 3]", "padding",
                             "[0, 1, 0, 1]", "ceil_mode", "True", NULL),
                       F32(1, 1, 1, 5), &out));
  ASSERT_F32(out, 1, 1, 1, 2);
  /* Dilation 2 on 7: effective window 5, (7 - 5) / 1 + 1 = 3. */
  KILN_ASSERT_OK(
      infer(&kiln_op_avg_pool2d,
            attrs(&kiln_op_avg_pool2d, "pool_size", "[3, 1]", "dilation", "[2, 1]", NULL),
            F32(1, 2, 7, 13), &out));
  ASSERT_F32(out, 1, 2, 3, 13);
  void *nhwc = attrs(max, "pool_size", "[3, 3]", "strides", "[2, 2]", "layout", "\"NHWC\"", NULL);
  KILN_ASSERT_OK(infer(max, nhwc, F32(1, 7, 7, 3), &out));
  ASSERT_F32(out, 1, 3, 3, 3);
  void *blocked =
      attrs(max, "pool_size", "[3, 3]", "strides", "[2, 2]", "layout", "\"NCHW4c\"", NULL);
  KILN_ASSERT_OK(infer(max, blocked, F32(1, 2, 7, 7, 4), &out));
  ASSERT_F32(out, 1, 2, 3, 3, 4);
  const kiln_op_t *global = &kiln_op_global_avg_pool2d;
  KILN_ASSERT_OK(infer(global, attrs(global, NULL), F32(2, 3, 5, 7), &out));
  ASSERT_F32(out, 2, 3, 1, 1);
  KILN_ASSERT_OK(infer(&kiln_op_global_max_pool2d,
                       attrs(&kiln_op_global_max_pool2d, "layout", "\"NHWC\"", NULL),
                       ty(KILN_DTYPE_FLOAT16, DIMS(2, 5, 7, 3)), &out));
  assert_type(out, KILN_DTYPE_FLOAT16, DIMS(2, 1, 1, 3));
}

static void test_relation_errors(void **state) {
  (void)state;
  const kiln_op_t *max = &kiln_op_max_pool2d;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer(max, attrs(max, NULL), F32(3, 7, 7), &out), INVALID_ARGUMENT,
                     "nn.max_pool2d: data: (3, 7, 7) must have rank 4 for layout NCHW, not 3");
  KILN_ASSERT_STATUS(infer(max, attrs(max, "pool_size", "[5, 5]", NULL), F32(1, 1, 3, 3), &out),
                     INVALID_ARGUMENT,
                     "nn.max_pool2d: data (1, 1, 3, 3) is too small: height 3 with padding 0+0 has "
                     "no room for a window of 5 (dilation 1)");
  KILN_ASSERT_STATUS(infer(max, attrs(max, "layout", "\"NCHW4c\"", NULL), F32(1, 2, 7, 7, 3), &out),
                     INVALID_ARGUMENT, "has 3 at axis 'c' of layout NCHW4c, not 4");
  KILN_ASSERT_STATUS(infer(max, attrs(max, "strides", "[0, 1]", NULL), F32(1, 1, 3, 3), &out),
                     INVALID_ARGUMENT, "nn.max_pool2d: strides[0] is 0");
  KILN_ASSERT_STATUS(infer(max, NULL, F32(1, 1, 3, 3), &out), INVALID_ARGUMENT,
                     "nn.max_pool2d: attributes are missing");
  const kiln_op_t *global = &kiln_op_global_max_pool2d;
  KILN_ASSERT_STATUS(infer(global, attrs(global, NULL), F32(1, 3, 0, 5), &out), INVALID_ARGUMENT,
                     "nn.global_max_pool2d: data (1, 3, 0, 5) is too small: height 0");
  KILN_ASSERT_STATUS(infer(global, attrs(global, NULL), F32(1, 3, 5), &out), INVALID_ARGUMENT,
                     "nn.global_max_pool2d: data: (1, 3, 5) must have rank 4");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[1] = {"NCHW"};
  const char *required[1] = {NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_avg_pool2d,
                                     .attrs =
                                         attrs(&kiln_op_avg_pool2d, "layout", "\"NCHW16c\"", NULL),
                                     .num_inputs = 1,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &arena};
  KILN_ASSERT_OK(kiln_op_avg_pool2d.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW16c");
  assert_string_equal(relation.output_layout, "NCHW16c");
  relation.op = &kiln_op_global_max_pool2d;
  relation.attrs = attrs(&kiln_op_global_max_pool2d, "layout", "\"NHWC\"", NULL);
  KILN_ASSERT_OK(kiln_op_global_max_pool2d.correct_layout(&relation));
  assert_string_equal(required[0], "NHWC");
  assert_string_equal(relation.output_layout, "NHWC");
}

/* ---- kernels ---- */

static void test_max_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = counting(DIMS(1, 1, 4, 4)); /* rows 1..4, 5..8, 9..12, 13..16 */
  const kiln_op_t *max = &kiln_op_max_pool2d;
  CHECK(max, attrs(max, "pool_size", "[2, 2]", "strides", "[2, 2]", NULL), x, 6, 8, 14, 16);
  /* 3x1 windows, stride (1, 3): rows 0..2 and 1..3 of columns 0 and 3. */
  CHECK(max, attrs(max, "pool_size", "[3, 1]", "strides", "[1, 3]", NULL), x, 9, 12, 13, 16);
  kiln_tensor_release(x);
  /* All negative, padding 1: the padded cells must not contribute a 0. */
  x = f32_tensor(DIMS(1, 1, 2, 2), (const float[]){-4, -3, -2, -1});
  CHECK(max, attrs(max, "pool_size", "[2, 2]", "padding", "[1, 1, 1, 1]", NULL), x, -4, -3, -3, -2,
        -1, -1, -2, -1, -1);
  kiln_tensor_release(x);
}

/* Data 1..9 (3x3), pool 3, pad 1: corner windows hold 4 cells, edges 6, the center 9. */
static void test_avg_padding(void **state) {
  (void)state;
  kiln_tensor_t *x = counting(DIMS(1, 1, 3, 3));
  const kiln_op_t *avg = &kiln_op_avg_pool2d;
  void *exclude = attrs(avg, "pool_size", "[3, 3]", "padding", "[1, 1, 1, 1]", NULL);
  CHECK(avg, exclude, x, 12 / 4.0f, 21 / 6.0f, 16 / 4.0f, 27 / 6.0f, 45 / 9.0f, 33 / 6.0f,
        24 / 4.0f, 39 / 6.0f, 28 / 4.0f);
  void *include = attrs(avg, "pool_size", "[3, 3]", "padding", "[1, 1, 1, 1]", "count_include_pad",
                        "True", NULL);
  CHECK(avg, include, x, 12 / 9.0f, 21 / 9.0f, 16 / 9.0f, 27 / 9.0f, 45 / 9.0f, 33 / 9.0f,
        24 / 9.0f, 39 / 9.0f, 28 / 9.0f);
  kiln_tensor_release(x);
}

/* Width 4 = [1, 2, 3, 4], pool 3, stride 2, pad 1+1, ceil: windows start at
 * -1, 1, 3. The last covers 3, 4, 5: cell 4 is padding, cell 5 lies past the
 * padded input, so ONNX's divisor with padding counted is 2, not 3. */
static void test_avg_ceil_clipping(void **state) {
  (void)state;
  kiln_tensor_t *x = counting(DIMS(1, 1, 1, 4));
  const kiln_op_t *avg = &kiln_op_avg_pool2d;
  const char *window[] = {"pool_size", "[1, 3]",       "strides",   "[1, 2]",
                          "padding",   "[0, 1, 0, 1]", "ceil_mode", "True"};
  void *include = attrs(avg, window[0], window[1], window[2], window[3], window[4], window[5],
                        window[6], window[7], "count_include_pad", "True", NULL);
  CHECK(avg, include, x, (1 + 2) / 3.0f, (2 + 3 + 4) / 3.0f, 4 / 2.0f);
  void *exclude = attrs(avg, window[0], window[1], window[2], window[3], window[4], window[5],
                        window[6], window[7], NULL);
  CHECK(avg, exclude, x, (1 + 2) / 2.0f, (2 + 3 + 4) / 3.0f, 4 / 1.0f);
  CHECK(&kiln_op_max_pool2d,
        attrs(&kiln_op_max_pool2d, window[0], window[1], window[2], window[3], window[4], window[5],
              window[6], window[7], NULL),
        x, 2, 4, 4);
  kiln_tensor_release(x);
}

static void test_dilation_and_empty_windows(void **state) {
  (void)state;
  kiln_tensor_t *x = f32_tensor(DIMS(1, 1, 1, 5), (const float[]){3, 1, 4, 1, 5});
  const kiln_op_t *max = &kiln_op_max_pool2d, *avg = &kiln_op_avg_pool2d;
  /* Cells j and j + 2. */
  CHECK(max, attrs(max, "pool_size", "[1, 2]", "dilation", "[1, 2]", NULL), x, 4, 1, 5);
  CHECK(avg, attrs(avg, "pool_size", "[1, 2]", "dilation", "[1, 2]", NULL), x, 3.5f, 1, 4.5f);
  kiln_tensor_release(x);
  /* One cell, pool 2 with dilation 2 and padding 1+1: the only window covers
   * -1 and 1, both outside the input. */
  x = f32_tensor(DIMS(1, 1, 1, 1), (const float[]){7});
  const char *w[] = {"pool_size", "[1, 2]", "dilation", "[1, 2]", "padding", "[0, 1, 0, 1]"};
  CHECK(max, attrs(max, w[0], w[1], w[2], w[3], w[4], w[5], NULL), x, -INFINITY);
  CHECK(avg, attrs(avg, w[0], w[1], w[2], w[3], w[4], w[5], NULL), x, 0);
  CHECK(avg, attrs(avg, w[0], w[1], w[2], w[3], w[4], w[5], "count_include_pad", "True", NULL), x,
        0);
  kiln_tensor_release(x);
}

static void test_nan_propagates_through_max(void **state) {
  (void)state;
  kiln_tensor_t *x = f32_tensor(DIMS(1, 1, 1, 3), (const float[]){1, NAN, 2});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(&kiln_op_global_max_pool2d, attrs(&kiln_op_global_max_pool2d, NULL), x, &out));
  assert_true(isnan(((const float *)kiln_tensor_data(out))[0]));
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

static void test_global(void **state) {
  (void)state;
  /* (2, 3, 1, 5): channel k of batch n holds 5 consecutive values. */
  kiln_tensor_t *x = counting(DIMS(2, 3, 1, 5));
  CHECK(&kiln_op_global_avg_pool2d, attrs(&kiln_op_global_avg_pool2d, NULL), x, 3, 8, 13, 18, 23,
        28);
  CHECK(&kiln_op_global_max_pool2d, attrs(&kiln_op_global_max_pool2d, NULL), x, 5, 10, 15, 20, 25,
        30);
  kiln_tensor_release(x);
}

/* The same pooling in NCHW, NHWC and NCHW2c, on data rearranged here. */
static void test_layouts_agree(void **state) {
  (void)state;
  enum { N = 1, C = 4, H = 5, W = 7 };
  kiln_tensor_t *nchw = tensor(KILN_DTYPE_FLOAT32, DIMS(N, C, H, W));
  kiln_tensor_t *nhwc = tensor(KILN_DTYPE_FLOAT32, DIMS(N, H, W, C));
  kiln_tensor_t *blocked = tensor(KILN_DTYPE_FLOAT32, DIMS(N, C / 2, H, W, 2));
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
    void *at = attrs(avg, "pool_size", "[3, 2]", "strides", "[2, 3]", "padding", "[1, 0, 1, 1]",
                     "layout", layouts[i], NULL);
    KILN_ASSERT_OK(run(avg, at, inputs[i], &outs[i]));
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

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor(KILN_DTYPE_FLOAT64, DIMS(1, 1, 2, 2));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(run(&kiln_op_max_pool2d, attrs(&kiln_op_max_pool2d, NULL), x, &out),
                     UNIMPLEMENTED,
                     "nn.max_pool2d: the reference kernel does not handle dtype float64");
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
      cmocka_unit_test(test_kernel_errors),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
