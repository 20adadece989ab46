/*
 * Tests of nn.softmax, nn.log_softmax and nn.lrn: the attributes, the type
 * relation with its errors, the layout rule, and the kernel against
 * exp(x) / sum(exp(x)) evaluated here, on every axis of an odd 3-D shape,
 * rank-1 data, large inputs (stability), -inf entries and NaN; lrn against
 * numbers worked by hand (odd and even window sizes) and against ONNX's
 * formula evaluated by a loop here on an odd shape.
 */
#include <math.h>
#include <stdio.h>

#include "kiln_op_test.h"
#include "op/nn_common.h"

#define F32 KILN_DTYPE_FLOAT32

/* Default attrs with the axis set when given. */
static void *axis_attrs(const kiln_op_t *op, const char *axis) {
  return axis ? ATTRS(op, "axis", axis) : attrs_with(op, NULL);
}

/* ---- attributes, relation, rule ---- */

static void test_metadata_and_attrs(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_softmax, &kiln_op_log_softmax};
  const char *names[] = {"nn.softmax", "nn.log_softmax"};
  const kiln_op_id_t ids[] = {KILN_OP_SOFTMAX, KILN_OP_LOG_SOFTMAX};
  for (int i = 0; i < 2; ++i) {
    assert_string_equal(ops[i]->name, names[i]);
    assert_int_equal(ops[i]->id, ids[i]);
    assert_int_equal(ops[i]->pattern, KILN_OP_PATTERN_OPAQUE);
    assert_int_equal(ops[i]->min_inputs, 1);
    assert_int_equal(ops[i]->max_inputs, 1);
    const kiln_nn_axis_attrs_t *a = attrs_with(ops[i], NULL);
    assert_int_equal(a->axis, -1);
    assert_attrs_text(ops[i], a, "axis=-1");
  }
}

static void test_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_softmax;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(F32, 3, SHAPE(2, 3, 5)), &out));
  assert_true(kiln_type_equal(out, ttype(F32, 3, SHAPE(2, 3, 5))));
  KILN_ASSERT_OK(infer1(op, ATTRS(op, "axis", "-3"), ttype(F32, 3, SHAPE(2, 3, 5)), &out));
  assert_true(kiln_type_equal(out, ttype(F32, 3, SHAPE(2, 3, 5))));
  KILN_ASSERT_OK(infer1(&kiln_op_log_softmax, ATTRS(&kiln_op_log_softmax, "axis", "0"),
                        ttype(KILN_DTYPE_FLOAT16, 1, SHAPE(7)), &out));
  assert_true(kiln_type_equal(out, ttype(KILN_DTYPE_FLOAT16, 1, SHAPE(7))));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "3"), ttype(F32, 3, SHAPE(2, 3, 5)), &out),
                     INVALID_ARGUMENT, "nn.softmax: axis 3 is out of range for rank 3");
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "-4"), ttype(F32, 3, SHAPE(2, 3, 5)), &out),
                     INVALID_ARGUMENT, "nn.softmax: axis -4 is out of range for rank 3");
  KILN_ASSERT_STATUS(infer1(op, attrs_with(op, NULL), ttype(F32, 0, NULL), &out), INVALID_ARGUMENT,
                     "nn.softmax: axis -1 is out of range for rank 0");
  KILN_ASSERT_STATUS(
      infer1(&kiln_op_log_softmax, attrs_with(&kiln_op_log_softmax, NULL),
             ttype(KILN_DTYPE_INT64, 2, SHAPE(2, 3)), &out),
      INVALID_ARGUMENT,
      "nn.log_softmax: data (2, 3) has dtype int64; expected a floating-point dtype");
  KILN_ASSERT_STATUS(infer1(op, NULL, ttype(F32, 2, SHAPE(2, 3)), &out), INVALID_ARGUMENT,
                     "nn.softmax: attributes are missing");
  const kiln_type_t *inputs[2] = {ttype(F32, 1, SHAPE(2)), ttype(F32, 1, SHAPE(2))};
  KILN_ASSERT_STATUS(infer(op, attrs_with(op, NULL), 2, inputs, &out), INVALID_ARGUMENT,
                     "nn.softmax: expected 1 inputs, got 2");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[1] = {"NCHW8c"};
  const char *required[1] = {NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_softmax,
                                     .attrs = ATTRS(&kiln_op_softmax, "axis", "1"),
                                     .num_inputs = 1,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_op_softmax.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(relation.output_layout, "NCHW");
  arriving[0] = "";
  KILN_ASSERT_OK(kiln_op_log_softmax.correct_layout(&relation));
  assert_string_equal(required[0], "");
  assert_string_equal(relation.output_layout, "");
}

/* ---- kernel ---- */

static void test_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 1, SHAPE(3), (const float[]){1, 2, 3});
  kiln_tensor_t *out = NULL;
  double sum = exp(1) + exp(2) + exp(3);
  KILN_ASSERT_OK(run1(&kiln_op_softmax, attrs_with(&kiln_op_softmax, NULL), x, &out));
  assert_f32(out, (const double[]){exp(1) / sum, exp(2) / sum, exp(3) / sum}, 3);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_log_softmax, attrs_with(&kiln_op_log_softmax, NULL), x, &out));
  assert_f32(out, (const double[]){1 - log(sum), 2 - log(sum), 3 - log(sum)}, 3);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

/* (3, 5, 7) along each axis, both operators, against the formula. */
static void test_every_axis(void **state) {
  (void)state;
  enum { A = 3, B = 5, C = 7 };
  const int64_t shape[3] = {A, B, C};
  kiln_tensor_t *x = tensor_zeros(F32, 3, shape);
  float *v = kiln_tensor_data(x);
  for (int i = 0; i < A * B * C; ++i) {
    v[i] = (float)((i * 37) % 31 - 15) / 3.0f;
  }
  double want[A * B * C];
  for (int axis = 0; axis < 3; ++axis) {
    int64_t stride = axis == 0 ? B * C : axis == 1 ? C : 1;
    for (int take_log = 0; take_log < 2; ++take_log) {
      for (int i = 0; i < A * B * C; ++i) {
        int64_t first = i - ((i / stride) % shape[axis]) * stride;
        double sum = 0;
        for (int64_t k = 0; k < shape[axis]; ++k) {
          sum += exp(v[first + k * stride]);
        }
        want[i] = take_log ? v[i] - log(sum) : exp(v[i]) / sum;
      }
      const kiln_op_t *op = take_log ? &kiln_op_log_softmax : &kiln_op_softmax;
      char text[8];
      snprintf(text, sizeof(text), "%d", axis - 3 * (axis == 2)); /* axis 2 as -1 */
      kiln_tensor_t *out = NULL;
      KILN_ASSERT_OK(run1(op, ATTRS(op, "axis", text), x, &out));
      assert_f32(out, want, A * B * C);
      kiln_tensor_release(out);
    }
  }
  kiln_tensor_release(x);
}

static void test_stability_and_special_values(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 2, SHAPE(2, 2), (const float[]){1000, 1001, -INFINITY, 5});
  kiln_tensor_t *out = NULL;
  double e = exp(1);
  KILN_ASSERT_OK(run1(&kiln_op_softmax, attrs_with(&kiln_op_softmax, NULL), x, &out));
  assert_f32(out, (const double[]){1 / (1 + e), e / (1 + e), 0, 1}, 4);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_log_softmax, attrs_with(&kiln_op_log_softmax, NULL), x, &out));
  const float *y = kiln_tensor_data(out);
  assert_true(fabs(y[0] - (-log(1 + e))) < 1e-5);
  assert_true(fabs(y[1] - (1 - log(1 + e))) < 1e-5);
  assert_true(isinf(y[2]) && y[2] < 0);
  assert_true(y[3] == 0.0f);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  x = tensor_of(F32, 2, SHAPE(1, 3), (const float[]){1, NAN, 2});
  KILN_ASSERT_OK(run1(&kiln_op_softmax, attrs_with(&kiln_op_softmax, NULL), x, &out));
  y = kiln_tensor_data(out);
  assert_true(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_zeros(KILN_DTYPE_FLOAT64, 2, SHAPE(2, 3));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(run1(&kiln_op_softmax, attrs_with(&kiln_op_softmax, NULL), x, &out),
                     UNIMPLEMENTED,
                     "nn.softmax: the reference kernel does not handle dtype float64");
  kiln_tensor_release(x);
}

/* ---- nn.lrn ---- */

static void *lrn_attrs(const char *size, const char *alpha, const char *beta, const char *bias,
                       const char *axis) {
  void *a = axis_attrs(&kiln_op_lrn, axis);
  const char *names[] = {"size", "alpha", "beta", "bias"};
  const char *values[] = {size, alpha, beta, bias};
  for (int i = 0; i < 4; ++i) {
    if (values[i]) {
      KILN_ASSERT_OK(
          kiln_op_attrs_set_text(&kiln_op_lrn, a, names[i], values[i], &kiln_op_test_arena));
    }
  }
  return a;
}

static void test_lrn_attrs_and_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_lrn;
  assert_string_equal(op->name, "nn.lrn");
  assert_int_equal(op->id, KILN_OP_LRN);
  assert_int_equal(op->pattern, KILN_OP_PATTERN_OPAQUE);
  assert_defaults(op, "size=5, axis=1, bias=2, alpha=1e-05, beta=0.75");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, lrn_attrs("0", NULL, NULL, NULL, NULL)),
                     INVALID_ARGUMENT, "nn.lrn: size is 0; it must be in [1, 1073741824]");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, lrn_attrs(NULL, NULL, "inf", NULL, NULL)),
                     INVALID_ARGUMENT, "nn.lrn: bias 2, alpha 1e-05 and beta inf must be finite");
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(op, attrs_with(op, NULL), ttype(F32, 4, SHAPE(5, 5, 5, 5)), &out));
  assert_true(kiln_type_equal(out, ttype(F32, 4, SHAPE(5, 5, 5, 5))));
  KILN_ASSERT_STATUS(infer1(op, ATTRS(op, "axis", "4"), ttype(F32, 4, SHAPE(5, 5, 5, 5)), &out),
                     INVALID_ARGUMENT, "nn.lrn: axis 4 is out of range for rank 4");
  KILN_ASSERT_STATUS(
      infer1(op, attrs_with(op, NULL), ttype(KILN_DTYPE_INT64, 2, SHAPE(1, 3)), &out),
      INVALID_ARGUMENT, "nn.lrn: data (1, 3) has dtype int64; expected a floating-point dtype");
  KILN_ASSERT_STATUS(
      infer1(op, lrn_attrs("-1", NULL, NULL, NULL, NULL), ttype(F32, 2, SHAPE(1, 3)), &out),
      INVALID_ARGUMENT, "nn.lrn: size is -1");
  const char *arriving[1] = {"NCHW16c"};
  const char *required[1] = {NULL};
  kiln_layout_relation_t relation = {.op = op,
                                     .attrs = attrs_with(op, NULL),
                                     .num_inputs = 1,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(op->correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(relation.output_layout, "NCHW");
}

static void test_lrn_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 4, SHAPE(1, 3, 1, 1), (const float[]){1, 2, 3});
  kiln_tensor_t *out = NULL;
  /* size 3, alpha / size = 1, beta 1, bias 1: squares 1, 4, 9 summed over c-1..c+1 */
  KILN_ASSERT_OK(run1(&kiln_op_lrn, lrn_attrs("3", "3", "1", "1", NULL), x, &out));
  assert_f32(out, (const double[]){1.0 / 6, 2.0 / 15, 3.0 / 14}, 3);
  kiln_tensor_release(out);
  /* size 2 looks one channel up (c - 0 .. c + 1), as ONNX's floor and ceil say */
  KILN_ASSERT_OK(run1(&kiln_op_lrn, lrn_attrs("2", "2", "1", "1", NULL), x, &out));
  assert_f32(out, (const double[]){1.0 / 6, 2.0 / 14, 3.0 / 10}, 3);
  kiln_tensor_release(out);
  /* beta 0.5 is a square root; bias 2 */
  KILN_ASSERT_OK(run1(&kiln_op_lrn, lrn_attrs("1", "1", "0.5", "2", NULL), x, &out));
  assert_f32(out, (const double[]){1 / sqrt(3.0), 2 / sqrt(6.0), 3 / sqrt(11.0)}, 3);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
}

/* ONNX LRN's formula on (2, 5, 3, 4) along `axis`, by a loop here. */
static void check_lrn_loop(int axis, const char *axis_text) {
  const int64_t shape[4] = {2, 5, 3, 4};
  float x[120];
  double want[120];
  for (int i = 0; i < 120; ++i) {
    x[i] = (float)((i * 29) % 31 - 15) / 3.0f;
  }
  int64_t strides[4] = {60, 12, 4, 1};
  for (int i = 0; i < 120; ++i) {
    int64_t c = (i / strides[axis]) % shape[axis];
    double sum = 0.0;
    for (int64_t k = c - 1; k <= c + 1; ++k) {
      if (k >= 0 && k < shape[axis]) {
        double v = x[i + (k - c) * strides[axis]];
        sum += v * v;
      }
    }
    want[i] = x[i] / pow(1.0 + 0.0002 / 3 * sum, 0.5);
  }
  kiln_tensor_t *input = tensor_of(F32, 4, shape, x);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_lrn, lrn_attrs("3", "0.0002", "0.5", "1", axis_text), input, &out));
  assert_f32(out, want, 120);
  kiln_tensor_release(out);
  kiln_tensor_release(input);
}

static void test_lrn_against_loops(void **state) {
  (void)state;
  check_lrn_loop(1, "1");
  check_lrn_loop(3, "-1");
  check_lrn_loop(0, "0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata_and_attrs),
      cmocka_unit_test(test_relation),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_by_hand),
      cmocka_unit_test(test_every_axis),
      cmocka_unit_test(test_stability_and_special_values),
      cmocka_unit_test(test_kernel_errors),
      cmocka_unit_test(test_lrn_attrs_and_relation),
      cmocka_unit_test(test_lrn_by_hand),
      cmocka_unit_test(test_lrn_against_loops),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
