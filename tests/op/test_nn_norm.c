/*
 * Tests of nn.batch_norm, nn.layer_norm, nn.bias_add, nn.prelu and
 * nn.instance_norm: attributes and their validation, the shared type
 * relation with every error (vector shapes, dtypes, axes), the primal-form
 * layout rule, and the kernels against the formulas evaluated here on odd
 * shapes, a middle axis, negative axes, rank-1 data, center/scale switched
 * off, and instance_norm on ONNX's example and on channels-last planes.
 */
#include <math.h>
#include <stdbool.h>

#include "kiln_op_test.h"
#include "op/nn_common.h"

#define F32 KILN_DTYPE_FLOAT32

/* Distinct values spread over [-3, 3) (positive when `positive`, for variances). */
static kiln_tensor_t *filled(int seed, bool positive, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = tensor_zeros(F32, ndim, shape);
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    float v = (float)((i * 37 + seed * 11) % 29 - 14) / 4.7f;
    data[i] = positive ? fabsf(v) + 0.25f : v;
  }
  return t;
}

static void release_all(kiln_tensor_t **tensors, int count) {
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

static const float *data_of(const kiln_tensor_t *t) {
  return kiln_tensor_data(t);
}

/* ---- attributes ---- */

static void test_metadata_and_attrs(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_batch_norm, &kiln_op_layer_norm, &kiln_op_bias_add,
                            &kiln_op_prelu};
  const char *names[] = {"nn.batch_norm", "nn.layer_norm", "nn.bias_add", "nn.prelu"};
  const kiln_op_pattern_t patterns[] = {KILN_OP_PATTERN_BROADCAST, KILN_OP_PATTERN_OPAQUE,
                                        KILN_OP_PATTERN_BROADCAST, KILN_OP_PATTERN_BROADCAST};
  const int inputs[] = {5, 3, 2, 2};
  for (int i = 0; i < 4; ++i) {
    assert_string_equal(ops[i]->name, names[i]);
    assert_int_equal(ops[i]->id, KILN_OP_BATCH_NORM + i);
    assert_int_equal(ops[i]->pattern, patterns[i]);
    assert_int_equal(ops[i]->min_inputs, inputs[i]);
    assert_int_equal(ops[i]->max_inputs, inputs[i]);
  }
  assert_defaults(&kiln_op_batch_norm, "axis=1, epsilon=1e-05, center=True, scale=True");
  assert_defaults(&kiln_op_layer_norm, "axis=-1, epsilon=1e-05, center=True, scale=True");
  assert_defaults(&kiln_op_bias_add, "axis=1");
  assert_defaults(&kiln_op_prelu, "axis=1");
  const kiln_nn_norm_attrs_t *bn = attrs_with(&kiln_op_batch_norm, NULL);
  assert_true(bn->epsilon == 1e-05);
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_batch_norm, ATTRS(&kiln_op_batch_norm, "epsilon", "-0.001")),
      INVALID_ARGUMENT, "nn.batch_norm: epsilon is -0.001; it must be finite and >= 0");
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_layer_norm, ATTRS(&kiln_op_layer_norm, "epsilon", "inf")),
      INVALID_ARGUMENT, "nn.layer_norm: epsilon is inf");
  const kiln_op_t *in = &kiln_op_instance_norm;
  assert_string_equal(in->name, "nn.instance_norm");
  assert_int_equal(in->id, KILN_OP_INSTANCE_NORM);
  assert_int_equal(in->pattern, KILN_OP_PATTERN_OPAQUE);
  assert_int_equal(in->min_inputs, 3);
  assert_int_equal(in->max_inputs, 3);
  assert_defaults(in, "axis=1, epsilon=1e-05, center=True, scale=True");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(in, ATTRS(in, "epsilon", "nan")), INVALID_ARGUMENT,
                     "nn.instance_norm: epsilon is nan");
}

/* ---- relations ---- */

static void test_batch_norm_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_norm;
  void *a = attrs_with(op, NULL);
  const kiln_type_t *out = NULL;
  const kiln_type_t *c3 = ttype(F32, 1, SHAPE(3));
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), c3, c3, c3, c3));
  assert_type(out, F32, 4, SHAPE(2, 3, 5, 7));
  const kiln_type_t *c7 = ttype(F32, 1, SHAPE(7));
  KILN_ASSERT_OK(
      INFER(op, ATTRS(op, "axis", "-1"), &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), c7, c7, c7, c7));
  assert_type(out, F32, 4, SHAPE(2, 3, 5, 7));
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "axis", "0"), &out, ttype(F32, 1, SHAPE(3)), c3, c3, c3, c3));
  assert_type(out, F32, 1, SHAPE(3));
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), ttype(F32, 1, SHAPE(4)), c3, c3, c3),
      INVALID_ARGUMENT,
      "nn.batch_norm: gamma (4,) must have shape (3,) to match axis 1 of data "
      "(2, 3, 5, 7)");
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), c3, c3, c3, ttype(F32, 2, SHAPE(3, 1))),
      INVALID_ARGUMENT, "nn.batch_norm: moving_var (3, 1) must have shape (3,)");
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), c3,
            ttype(KILN_DTYPE_FLOAT16, 1, SHAPE(3)), c3, c3),
      INVALID_ARGUMENT,
      "nn.batch_norm: beta (3,) has dtype float16 but data (2, 3, 5, 7) has dtype float32");
  KILN_ASSERT_STATUS(
      INFER(op, ATTRS(op, "axis", "4"), &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), c3, c3, c3, c3),
      INVALID_ARGUMENT, "nn.batch_norm: axis 4 is out of range for rank 4");
  const kiln_type_t *i3 = ttype(KILN_DTYPE_INT32, 1, SHAPE(3));
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(KILN_DTYPE_INT32, 2, SHAPE(2, 3)), i3, i3, i3, i3),
                     INVALID_ARGUMENT,
                     "nn.batch_norm: data (2, 3) has dtype int32; expected a floating-point dtype");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 4, SHAPE(2, 3, 5, 7)), c3, c3, c3),
                     INVALID_ARGUMENT, "nn.batch_norm: expected 5 inputs, got 4");
  KILN_ASSERT_STATUS(
      INFER(op, ATTRS(op, "epsilon", "-1"), &out, ttype(F32, 2, SHAPE(2, 3)), c3, c3, c3, c3),
      INVALID_ARGUMENT, "nn.batch_norm: epsilon is -1");
}

static void test_other_relations(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const kiln_op_t *ln = &kiln_op_layer_norm;
  KILN_ASSERT_OK(INFER(ln, attrs_with(ln, NULL), &out, ttype(F32, 2, SHAPE(2, 5)),
                       ttype(F32, 1, SHAPE(5)), ttype(F32, 1, SHAPE(5))));
  assert_type(out, F32, 2, SHAPE(2, 5));
  KILN_ASSERT_STATUS(
      INFER(ln, attrs_with(ln, NULL), &out, ttype(F32, 2, SHAPE(2, 5)), ttype(F32, 1, SHAPE(2)),
            ttype(F32, 1, SHAPE(5))),
      INVALID_ARGUMENT,
      "nn.layer_norm: gamma (2,) must have shape (5,) to match axis 1 of data (2, 5)");
  KILN_ASSERT_STATUS(INFER(ln, attrs_with(ln, NULL), &out, ttype(F32, 0, NULL),
                           ttype(F32, 1, SHAPE(1)), ttype(F32, 1, SHAPE(1))),
                     INVALID_ARGUMENT, "nn.layer_norm: axis -1 is out of range for rank 0");
  const kiln_op_t *bias = &kiln_op_bias_add;
  KILN_ASSERT_OK(INFER(bias, attrs_with(bias, NULL), &out, ttype(F32, 2, SHAPE(2, 3)),
                       ttype(F32, 1, SHAPE(3))));
  assert_type(out, F32, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(INFER(bias, ATTRS(bias, "axis", "-1"), &out, ttype(F32, 3, SHAPE(2, 3, 5)),
                       ttype(F32, 1, SHAPE(5))));
  assert_type(out, F32, 3, SHAPE(2, 3, 5));
  KILN_ASSERT_OK(INFER(bias, attrs_with(bias, NULL), &out, ttype(KILN_DTYPE_INT32, 2, SHAPE(2, 3)),
                       ttype(KILN_DTYPE_INT32, 1, SHAPE(3))));
  assert_type(out, KILN_DTYPE_INT32, 2, SHAPE(2, 3));
  KILN_ASSERT_STATUS(INFER(bias, attrs_with(bias, NULL), &out, ttype(F32, 2, SHAPE(2, 3)),
                           ttype(F32, 1, SHAPE(2))),
                     INVALID_ARGUMENT,
                     "nn.bias_add: bias (2,) must have shape (3,) to match axis 1 of data (2, 3)");
  KILN_ASSERT_STATUS(
      INFER(bias, attrs_with(bias, NULL), &out, ttype(F32, 1, SHAPE(3)), ttype(F32, 1, SHAPE(3))),
      INVALID_ARGUMENT, "nn.bias_add: axis 1 is out of range for rank 1");
  const kiln_op_t *prelu = &kiln_op_prelu;
  KILN_ASSERT_OK(INFER(prelu, attrs_with(prelu, NULL), &out, ttype(F32, 4, SHAPE(1, 4, 3, 3)),
                       ttype(F32, 1, SHAPE(4))));
  assert_type(out, F32, 4, SHAPE(1, 4, 3, 3));
  KILN_ASSERT_STATUS(INFER(prelu, attrs_with(prelu, NULL), &out, ttype(F32, 4, SHAPE(1, 4, 3, 3)),
                           ttype(F32, 1, SHAPE(1))),
                     INVALID_ARGUMENT, "nn.prelu: alpha (1,) must have shape (4,)");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[5] = {"NCHW16c", "", "", "", ""};
  const char *required[5] = {NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_batch_norm,
                                     .attrs = attrs_with(&kiln_op_batch_norm, NULL),
                                     .num_inputs = 5,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_op_batch_norm.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[4], "");
  assert_string_equal(relation.output_layout, "NCHW");
  relation.op = &kiln_op_bias_add;
  relation.num_inputs = 2;
  arriving[0] = "NHWC";
  KILN_ASSERT_OK(kiln_op_bias_add.correct_layout(&relation));
  assert_string_equal(required[0], "NHWC");
  assert_string_equal(relation.output_layout, "NHWC");
}

/* ---- kernels ---- */

/* (2, 3, 5) normalized along the middle axis, against the formula. */
static void test_batch_norm_kernel(void **state) {
  (void)state;
  enum { N = 2, C = 3, W = 5 };
  kiln_tensor_t *x = filled(1, false, 3, SHAPE(N, C, W));
  kiln_tensor_t *gamma = filled(2, false, 1, SHAPE(C));
  kiln_tensor_t *beta = filled(3, false, 1, SHAPE(C));
  kiln_tensor_t *mean = filled(4, false, 1, SHAPE(C));
  kiln_tensor_t *var = filled(5, true, 1, SHAPE(C));
  for (int flags = 0; flags < 4; ++flags) {
    bool center = flags & 1, scale = flags & 2;
    void *a = ATTRS(&kiln_op_batch_norm, "epsilon", "0.01", "center", center ? "True" : "False",
                    "scale", scale ? "True" : "False");
    kiln_tensor_t *out = NULL;
    KILN_ASSERT_OK(RUN(&kiln_op_batch_norm, a, &out, x, gamma, beta, mean, var));
    float *want = f32_scratch(N * C * W);
    for (int i = 0; i < N * C * W; ++i) {
      int c = (i / W) % C;
      double g = scale ? data_of(gamma)[c] : 1.0, b = center ? data_of(beta)[c] : 0.0;
      want[i] = (float)((data_of(x)[i] - data_of(mean)[c]) / sqrt(data_of(var)[c] + 0.01) * g + b);
    }
    assert_f32_floats(out, want, N * C * W);
    kiln_tensor_release(out);
  }
  kiln_tensor_t *all[] = {x, gamma, beta, mean, var};
  release_all(all, 5);
}

/* By hand: [1, 2, 3, 4] has mean 2.5 and variance 1.25. */
static void test_layer_norm_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 2, SHAPE(1, 4), (const float[]){1, 2, 3, 4});
  kiln_tensor_t *gamma = tensor_of(F32, 1, SHAPE(4), (const float[]){1, 1, 2, -1});
  kiln_tensor_t *beta = tensor_of(F32, 1, SHAPE(4), (const float[]){0, 0.5f, 0, 1});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      RUN(&kiln_op_layer_norm, ATTRS(&kiln_op_layer_norm, "epsilon", "0"), &out, x, gamma, beta));
  double s = 1.0 / sqrt(1.25);
  assert_f32(out,
             (const double[]){(float)(-1.5 * s), (float)(-0.5 * s + 0.5), (float)(1.0 * s),
                              (float)(-1.5 * s + 1.0)},
             4);
  kiln_tensor_release(out);
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

/* (3, 7, 5) along axis 1 (lines 5 apart), with and without center/scale. */
static void test_layer_norm_middle_axis(void **state) {
  (void)state;
  enum { A = 3, D = 7, B = 5 };
  kiln_tensor_t *x = filled(6, false, 3, SHAPE(A, D, B));
  kiln_tensor_t *gamma = filled(7, false, 1, SHAPE(D));
  kiln_tensor_t *beta = filled(8, false, 1, SHAPE(D));
  for (int affine = 0; affine < 2; ++affine) {
    void *a = ATTRS(&kiln_op_layer_norm, "axis", "1", "center", affine ? "True" : "False", "scale",
                    affine ? "True" : "False");
    kiln_tensor_t *out = NULL;
    KILN_ASSERT_OK(RUN(&kiln_op_layer_norm, a, &out, x, gamma, beta));
    float *want = f32_scratch(A * D * B);
    const float *v = data_of(x);
    for (int i = 0; i < A; ++i) {
      for (int k = 0; k < B; ++k) {
        double mean = 0, var = 0;
        for (int d = 0; d < D; ++d) {
          mean += v[(i * D + d) * B + k] / (double)D;
        }
        for (int d = 0; d < D; ++d) {
          var += pow(v[(i * D + d) * B + k] - mean, 2) / D;
        }
        for (int d = 0; d < D; ++d) {
          double y = (v[(i * D + d) * B + k] - mean) / sqrt(var + 1e-5);
          want[(i * D + d) * B + k] =
              (float)(affine ? y * data_of(gamma)[d] + data_of(beta)[d] : y);
        }
      }
    }
    assert_f32_floats(out, want, A * D * B);
    kiln_tensor_release(out);
  }
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

static void test_bias_add_kernel(void **state) {
  (void)state;
  /* Rank-1 data, axis 0. */
  kiln_tensor_t *x = tensor_of(F32, 1, SHAPE(3), (const float[]){1, 2, 3});
  kiln_tensor_t *b = tensor_of(F32, 1, SHAPE(3), (const float[]){10, -20, 0.5f});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_bias_add, ATTRS(&kiln_op_bias_add, "axis", "0"), &out, x, b));
  assert_f32(out, (const double[]){11, -18, 3.5f}, 3);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  /* (2, 3, 1, 1) with the default axis 1; (2, 1, 3) with axis -1. */
  x = tensor_of(F32, 4, SHAPE(2, 3, 1, 1), (const float[]){1, 2, 3, 4, 5, 6});
  KILN_ASSERT_OK(RUN(&kiln_op_bias_add, attrs_with(&kiln_op_bias_add, NULL), &out, x, b));
  assert_f32(out, (const double[]){11, -18, 3.5f, 14, -15, 6.5f}, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  x = tensor_of(F32, 3, SHAPE(2, 1, 3), (const float[]){1, 2, 3, 4, 5, 6});
  KILN_ASSERT_OK(RUN(&kiln_op_bias_add, ATTRS(&kiln_op_bias_add, "axis", "-1"), &out, x, b));
  assert_f32(out, (const double[]){11, -18, 3.5f, 14, -15, 6.5f}, 6);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  kiln_tensor_release(b);
}

static void test_prelu_kernel(void **state) {
  (void)state;
  /* (1, 2, 1, 3): channel 0 alpha 0.5, channel 1 alpha -2. */
  kiln_tensor_t *x = tensor_of(F32, 4, SHAPE(1, 2, 1, 3), (const float[]){-2, 0, 3, -1, 4, -0.25f});
  kiln_tensor_t *alpha = tensor_of(F32, 1, SHAPE(2), (const float[]){0.5f, -2});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_prelu, attrs_with(&kiln_op_prelu, NULL), &out, x, alpha));
  assert_f32(out, (const double[]){-1, 0, 3, 2, 4, 0.5f}, 6);
  kiln_tensor_t *all[] = {x, alpha, out};
  release_all(all, 3);
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_zeros(KILN_DTYPE_INT32, 2, SHAPE(2, 3));
  kiln_tensor_t *b = tensor_zeros(KILN_DTYPE_INT32, 1, SHAPE(3));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(RUN(&kiln_op_bias_add, attrs_with(&kiln_op_bias_add, NULL), &out, x, b),
                     UNIMPLEMENTED,
                     "nn.bias_add: the reference kernel does not handle dtype int32");
  kiln_tensor_t *all[] = {x, b};
  release_all(all, 2);
}

/* ---- nn.instance_norm ---- */

static void test_instance_norm_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_instance_norm;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, attrs_with(op, NULL), &out, ttype(F32, 4, SHAPE(2, 3, 4, 5)),
                       ttype(F32, 1, SHAPE(3)), ttype(F32, 1, SHAPE(3))));
  assert_type(out, F32, 4, SHAPE(2, 3, 4, 5));
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "axis", "-1"), &out, ttype(F32, 4, SHAPE(2, 4, 5, 3)),
                       ttype(F32, 1, SHAPE(3)), ttype(F32, 1, SHAPE(3))));
  assert_type(out, F32, 4, SHAPE(2, 4, 5, 3));
  KILN_ASSERT_STATUS(
      INFER(op, attrs_with(op, NULL), &out, ttype(F32, 4, SHAPE(2, 3, 4, 5)),
            ttype(F32, 1, SHAPE(4)), ttype(F32, 1, SHAPE(3))),
      INVALID_ARGUMENT,
      "nn.instance_norm: gamma (4,) must have shape (3,) to match axis 1 of data (2, 3, 4, 5)");
  KILN_ASSERT_STATUS(INFER(op, attrs_with(op, NULL), &out, ttype(F32, 4, SHAPE(2, 3, 4, 5)),
                           ttype(F32, 1, SHAPE(3)), ttype(F32, 2, SHAPE(3, 1))),
                     INVALID_ARGUMENT, "nn.instance_norm: beta (3, 1) must have shape (3,)");
  KILN_ASSERT_STATUS(
      INFER(op, ATTRS(op, "axis", "0"), &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 1, SHAPE(2)),
            ttype(F32, 1, SHAPE(2))),
      INVALID_ARGUMENT,
      "nn.instance_norm: the channel axis of data (2, 3) cannot be 0, the batch axis");
  KILN_ASSERT_STATUS(INFER(op, attrs_with(op, NULL), &out, ttype(F32, 1, SHAPE(3)),
                           ttype(F32, 1, SHAPE(3)), ttype(F32, 1, SHAPE(3))),
                     INVALID_ARGUMENT, "nn.instance_norm: axis 1 is out of range for rank 1");
  const kiln_type_t *i3 = ttype(KILN_DTYPE_INT32, 1, SHAPE(3));
  KILN_ASSERT_STATUS(
      INFER(op, attrs_with(op, NULL), &out, ttype(KILN_DTYPE_INT32, 2, SHAPE(2, 3)), i3, i3),
      INVALID_ARGUMENT,
      "nn.instance_norm: data (2, 3) has dtype int32; expected a floating-point "
      "dtype");
  KILN_ASSERT_STATUS(
      INFER(op, attrs_with(op, NULL), &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 1, SHAPE(3))),
      INVALID_ARGUMENT, "nn.instance_norm: expected 3 inputs, got 2");
}

/* ONNX test_instancenorm_example: planes [-1, 0, 1] and [2, 3, 4], both of
 * variance 2/3; scale [1, 1.5], bias [0, 1]. */
static void test_instance_norm_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor_of(F32, 4, SHAPE(1, 2, 1, 3), (const float[]){-1, 0, 1, 2, 3, 4});
  kiln_tensor_t *gamma = tensor_of(F32, 1, SHAPE(2), (const float[]){1, 1.5f});
  kiln_tensor_t *beta = tensor_of(F32, 1, SHAPE(2), (const float[]){0, 1});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      RUN(&kiln_op_instance_norm, attrs_with(&kiln_op_instance_norm, NULL), &out, x, gamma, beta));
  double s = 1.0 / sqrt(2.0 / 3.0 + 1e-5); /* about 1.22473 */
  assert_f32(
      out, (const double[]){(float)-s, 0, (float)s, (float)(1 - 1.5 * s), 1, (float)(1 + 1.5 * s)},
      6);
  kiln_tensor_release(out);
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

/* (2, 3, 4, 5) with channels on `axis`, each (n, c) plane normalized, against loops. */
static void check_instance_norm_loop(int axis, const char *axis_text, bool affine) {
  const int64_t shape[4] = {2, axis == 1 ? 3 : 4, axis == 1 ? 4 : 5, axis == 1 ? 5 : 3};
  const int64_t strides[4] = {60, shape[2] * shape[3], shape[3], 1};
  kiln_tensor_t *x = filled(9, false, 4, shape);
  kiln_tensor_t *gamma = filled(10, false, 1, SHAPE(3));
  kiln_tensor_t *beta = filled(11, false, 1, SHAPE(3));
  float *want = f32_scratch(120);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      double sum = 0.0, squares = 0.0;
      int count = 0;
      for (int i = 0; i < 120; ++i) {
        if (i / 60 == n && (i / strides[axis]) % 3 == c) {
          sum += data_of(x)[i];
          ++count;
        }
      }
      double mean = sum / count;
      for (int i = 0; i < 120; ++i) {
        if (i / 60 == n && (i / strides[axis]) % 3 == c) {
          squares += (data_of(x)[i] - mean) * (data_of(x)[i] - mean);
        }
      }
      double inv = 1.0 / sqrt(squares / count + 0.001);
      for (int i = 0; i < 120; ++i) {
        if (i / 60 == n && (i / strides[axis]) % 3 == c) {
          double g = affine ? data_of(gamma)[c] : 1.0, b = affine ? data_of(beta)[c] : 0.0;
          want[i] = (float)((data_of(x)[i] - mean) * inv * g + b);
        }
      }
    }
  }
  const char *flag = affine ? "True" : "False";
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_instance_norm,
                     ATTRS(&kiln_op_instance_norm, "axis", axis_text, "epsilon", "0.001", "center",
                           flag, "scale", flag),
                     &out, x, gamma, beta));
  assert_f32_floats(out, want, 120);
  kiln_tensor_release(out);
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

static void test_instance_norm_against_loops(void **state) {
  (void)state;
  check_instance_norm_loop(1, "1", true);
  check_instance_norm_loop(1, "1", false);
  check_instance_norm_loop(3, "-1", true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata_and_attrs),
      cmocka_unit_test(test_batch_norm_relation),
      cmocka_unit_test(test_other_relations),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_batch_norm_kernel),
      cmocka_unit_test(test_layer_norm_by_hand),
      cmocka_unit_test(test_layer_norm_middle_axis),
      cmocka_unit_test(test_bias_add_kernel),
      cmocka_unit_test(test_prelu_kernel),
      cmocka_unit_test(test_kernel_errors),
      cmocka_unit_test(test_instance_norm_relation),
      cmocka_unit_test(test_instance_norm_by_hand),
      cmocka_unit_test(test_instance_norm_against_loops),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
