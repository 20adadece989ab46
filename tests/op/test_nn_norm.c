/*
 * Tests of nn.batch_norm, nn.layer_norm, nn.bias_add, nn.prelu and
 * nn.instance_norm: attributes and their validation, the shared type
 * relation with every error (vector shapes, dtypes, axes), the primal-form
 * layout rule, and the kernels against the formulas evaluated here on odd
 * shapes, a middle axis, negative axes, rank-1 data, center/scale switched
 * off, and instance_norm on ONNX's example and on channels-last planes.
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
#define COUNT(type, ...) (int)(sizeof((type[]){__VA_ARGS__}) / sizeof(type))

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

#define INFER(op, a, out, ...)                                       \
  kiln_op_infer_type(op, a, COUNT(const kiln_type_t *, __VA_ARGS__), \
                     (const kiln_type_t *const[]){__VA_ARGS__}, &arena, out)

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

/* Distinct values spread over [-3, 3) (positive when `positive`, for variances). */
static kiln_tensor_t *filled(int seed, bool positive, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = tensor(KILN_DTYPE_FLOAT32, ndim, shape);
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    float v = (float)((i * 37 + seed * 11) % 29 - 14) / 4.7f;
    data[i] = positive ? fabsf(v) + 0.25f : v;
  }
  return t;
}

/* Runs the kernel into a new output of the inferred type. */
static kiln_status_t run(const kiln_op_t *op, const void *a, int n, kiln_tensor_t *const *inputs,
                         kiln_tensor_t **out) {
  const kiln_type_t *types[8];
  for (int i = 0; i < n; ++i) {
    types[i] =
        ty(kiln_tensor_dtype(inputs[i]), kiln_tensor_ndim(inputs[i]), kiln_tensor_shape(inputs[i]));
  }
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_infer_type(op, a, n, types, &arena, &type));
  const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
  *out = tensor(t->dtype, t->ndim, t->shape);
  kiln_kernel_args_t args = {
      .op = op, .attrs = a, .num_inputs = n, .inputs = inputs, .num_outputs = 1, .outputs = out};
  kiln_status_t status = op->reference(&args);
  if (status) {
    kiln_tensor_release(*out);
    *out = NULL;
  }
  return status;
}
#define RUN(op, a, out, ...) \
  run(op, a, COUNT(kiln_tensor_t *, __VA_ARGS__), (kiln_tensor_t *const[]){__VA_ARGS__}, out)

static void assert_close(const kiln_tensor_t *got, const float *want) {
  const float *data = kiln_tensor_data(got);
  for (int64_t i = 0; i < kiln_tensor_element_count(got); ++i) {
    double tolerance = 1e-5 * fmax(1.0, fabs(want[i]));
    if (!(fabs((double)data[i] - want[i]) <= tolerance)) {
      fail_msg("element %lld: got %.9g, want %.9g", (long long)i, data[i], want[i]);
    }
  }
}

static float *scratch(int64_t count) {
  float *p = NULL;
  KILN_ASSERT_OK(
      kiln_arena_allocate_zeroed(&arena, sizeof(float) * (size_t)count, 16, (void **)&p));
  return p;
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
  assert_attrs_text(&kiln_op_batch_norm, attrs(&kiln_op_batch_norm, NULL),
                    "axis=1, epsilon=1e-05, center=True, scale=True");
  assert_attrs_text(&kiln_op_layer_norm, attrs(&kiln_op_layer_norm, NULL),
                    "axis=-1, epsilon=1e-05, center=True, scale=True");
  assert_attrs_text(&kiln_op_bias_add, attrs(&kiln_op_bias_add, NULL), "axis=1");
  assert_attrs_text(&kiln_op_prelu, attrs(&kiln_op_prelu, NULL), "axis=1");
  const kiln_nn_norm_attrs_t *bn = attrs(&kiln_op_batch_norm, NULL);
  assert_true(bn->epsilon == 1e-05);
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_batch_norm,
                                            attrs(&kiln_op_batch_norm, "epsilon", "-0.001", NULL)),
                     INVALID_ARGUMENT,
                     "nn.batch_norm: epsilon is -0.001; it must be finite and >= 0");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_layer_norm,
                                            attrs(&kiln_op_layer_norm, "epsilon", "inf", NULL)),
                     INVALID_ARGUMENT, "nn.layer_norm: epsilon is inf");
  const kiln_op_t *in = &kiln_op_instance_norm;
  assert_string_equal(in->name, "nn.instance_norm");
  assert_int_equal(in->id, KILN_OP_INSTANCE_NORM);
  assert_int_equal(in->pattern, KILN_OP_PATTERN_OPAQUE);
  assert_int_equal(in->min_inputs, 3);
  assert_int_equal(in->max_inputs, 3);
  assert_attrs_text(in, attrs(in, NULL), "axis=1, epsilon=1e-05, center=True, scale=True");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(in, attrs(in, "epsilon", "nan", NULL)),
                     INVALID_ARGUMENT, "nn.instance_norm: epsilon is nan");
}

/* ---- relations ---- */

static void test_batch_norm_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_norm;
  void *a = attrs(op, NULL);
  const kiln_type_t *out = NULL;
  const kiln_type_t *c3 = F32(3);
  KILN_ASSERT_OK(INFER(op, a, &out, F32(2, 3, 5, 7), c3, c3, c3, c3));
  ASSERT_F32(out, 2, 3, 5, 7);
  const kiln_type_t *c7 = F32(7);
  KILN_ASSERT_OK(INFER(op, attrs(op, "axis", "-1", NULL), &out, F32(2, 3, 5, 7), c7, c7, c7, c7));
  ASSERT_F32(out, 2, 3, 5, 7);
  KILN_ASSERT_OK(INFER(op, attrs(op, "axis", "0", NULL), &out, F32(3), c3, c3, c3, c3));
  ASSERT_F32(out, 3);
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3, 5, 7), F32(4), c3, c3, c3), INVALID_ARGUMENT,
                     "nn.batch_norm: gamma (4,) must have shape (3,) to match axis 1 of data "
                     "(2, 3, 5, 7)");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3, 5, 7), c3, c3, c3, F32(3, 1)), INVALID_ARGUMENT,
                     "nn.batch_norm: moving_var (3, 1) must have shape (3,)");
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, F32(2, 3, 5, 7), c3, ty(KILN_DTYPE_FLOAT16, DIMS(3)), c3, c3),
      INVALID_ARGUMENT,
      "nn.batch_norm: beta (3,) has dtype float16 but data (2, 3, 5, 7) has dtype float32");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, "axis", "4", NULL), &out, F32(2, 3, 5, 7), c3, c3, c3, c3),
                     INVALID_ARGUMENT, "nn.batch_norm: axis 4 is out of range for rank 4");
  const kiln_type_t *i3 = ty(KILN_DTYPE_INT32, DIMS(3));
  KILN_ASSERT_STATUS(INFER(op, a, &out, ty(KILN_DTYPE_INT32, DIMS(2, 3)), i3, i3, i3, i3),
                     INVALID_ARGUMENT,
                     "nn.batch_norm: data (2, 3) has dtype int32; expected a floating-point dtype");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3, 5, 7), c3, c3, c3), INVALID_ARGUMENT,
                     "nn.batch_norm: expected 5 inputs, got 4");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, "epsilon", "-1", NULL), &out, F32(2, 3), c3, c3, c3, c3),
                     INVALID_ARGUMENT, "nn.batch_norm: epsilon is -1");
}

static void test_other_relations(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const kiln_op_t *ln = &kiln_op_layer_norm;
  KILN_ASSERT_OK(INFER(ln, attrs(ln, NULL), &out, F32(2, 5), F32(5), F32(5)));
  ASSERT_F32(out, 2, 5);
  KILN_ASSERT_STATUS(
      INFER(ln, attrs(ln, NULL), &out, F32(2, 5), F32(2), F32(5)), INVALID_ARGUMENT,
      "nn.layer_norm: gamma (2,) must have shape (5,) to match axis 1 of data (2, 5)");
  KILN_ASSERT_STATUS(
      INFER(ln, attrs(ln, NULL), &out, ty(KILN_DTYPE_FLOAT32, 0, NULL), F32(1), F32(1)),
      INVALID_ARGUMENT, "nn.layer_norm: axis -1 is out of range for rank 0");
  const kiln_op_t *bias = &kiln_op_bias_add;
  KILN_ASSERT_OK(INFER(bias, attrs(bias, NULL), &out, F32(2, 3), F32(3)));
  ASSERT_F32(out, 2, 3);
  KILN_ASSERT_OK(INFER(bias, attrs(bias, "axis", "-1", NULL), &out, F32(2, 3, 5), F32(5)));
  ASSERT_F32(out, 2, 3, 5);
  KILN_ASSERT_OK(INFER(bias, attrs(bias, NULL), &out, ty(KILN_DTYPE_INT32, DIMS(2, 3)),
                       ty(KILN_DTYPE_INT32, DIMS(3))));
  assert_type(out, KILN_DTYPE_INT32, DIMS(2, 3));
  KILN_ASSERT_STATUS(INFER(bias, attrs(bias, NULL), &out, F32(2, 3), F32(2)), INVALID_ARGUMENT,
                     "nn.bias_add: bias (2,) must have shape (3,) to match axis 1 of data (2, 3)");
  KILN_ASSERT_STATUS(INFER(bias, attrs(bias, NULL), &out, F32(3), F32(3)), INVALID_ARGUMENT,
                     "nn.bias_add: axis 1 is out of range for rank 1");
  const kiln_op_t *prelu = &kiln_op_prelu;
  KILN_ASSERT_OK(INFER(prelu, attrs(prelu, NULL), &out, F32(1, 4, 3, 3), F32(4)));
  ASSERT_F32(out, 1, 4, 3, 3);
  KILN_ASSERT_STATUS(INFER(prelu, attrs(prelu, NULL), &out, F32(1, 4, 3, 3), F32(1)),
                     INVALID_ARGUMENT, "nn.prelu: alpha (1,) must have shape (4,)");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[5] = {"NCHW16c", "", "", "", ""};
  const char *required[5] = {NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_batch_norm,
                                     .attrs = attrs(&kiln_op_batch_norm, NULL),
                                     .num_inputs = 5,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &arena};
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
  kiln_tensor_t *x = filled(1, false, DIMS(N, C, W));
  kiln_tensor_t *gamma = filled(2, false, DIMS(C));
  kiln_tensor_t *beta = filled(3, false, DIMS(C));
  kiln_tensor_t *mean = filled(4, false, DIMS(C));
  kiln_tensor_t *var = filled(5, true, DIMS(C));
  for (int flags = 0; flags < 4; ++flags) {
    bool center = flags & 1, scale = flags & 2;
    void *a = attrs(&kiln_op_batch_norm, "epsilon", "0.01", "center", center ? "True" : "False",
                    "scale", scale ? "True" : "False", NULL);
    kiln_tensor_t *out = NULL;
    KILN_ASSERT_OK(RUN(&kiln_op_batch_norm, a, &out, x, gamma, beta, mean, var));
    float *want = scratch(N * C * W);
    for (int i = 0; i < N * C * W; ++i) {
      int c = (i / W) % C;
      double g = scale ? data_of(gamma)[c] : 1.0, b = center ? data_of(beta)[c] : 0.0;
      want[i] = (float)((data_of(x)[i] - data_of(mean)[c]) / sqrt(data_of(var)[c] + 0.01) * g + b);
    }
    assert_close(out, want);
    kiln_tensor_release(out);
  }
  kiln_tensor_t *all[] = {x, gamma, beta, mean, var};
  release_all(all, 5);
}

/* By hand: [1, 2, 3, 4] has mean 2.5 and variance 1.25. */
static void test_layer_norm_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = f32_tensor(DIMS(1, 4), (const float[]){1, 2, 3, 4});
  kiln_tensor_t *gamma = f32_tensor(DIMS(4), (const float[]){1, 1, 2, -1});
  kiln_tensor_t *beta = f32_tensor(DIMS(4), (const float[]){0, 0.5f, 0, 1});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_layer_norm, attrs(&kiln_op_layer_norm, "epsilon", "0", NULL), &out, x,
                     gamma, beta));
  double s = 1.0 / sqrt(1.25);
  assert_close(out, (const float[]){(float)(-1.5 * s), (float)(-0.5 * s + 0.5), (float)(1.0 * s),
                                    (float)(-1.5 * s + 1.0)});
  kiln_tensor_release(out);
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

/* (3, 7, 5) along axis 1 (lines 5 apart), with and without center/scale. */
static void test_layer_norm_middle_axis(void **state) {
  (void)state;
  enum { A = 3, D = 7, B = 5 };
  kiln_tensor_t *x = filled(6, false, DIMS(A, D, B));
  kiln_tensor_t *gamma = filled(7, false, DIMS(D));
  kiln_tensor_t *beta = filled(8, false, DIMS(D));
  for (int affine = 0; affine < 2; ++affine) {
    void *a = attrs(&kiln_op_layer_norm, "axis", "1", "center", affine ? "True" : "False", "scale",
                    affine ? "True" : "False", NULL);
    kiln_tensor_t *out = NULL;
    KILN_ASSERT_OK(RUN(&kiln_op_layer_norm, a, &out, x, gamma, beta));
    float *want = scratch(A * D * B);
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
    assert_close(out, want);
    kiln_tensor_release(out);
  }
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

static void test_bias_add_kernel(void **state) {
  (void)state;
  /* Rank-1 data, axis 0. */
  kiln_tensor_t *x = f32_tensor(DIMS(3), (const float[]){1, 2, 3});
  kiln_tensor_t *b = f32_tensor(DIMS(3), (const float[]){10, -20, 0.5f});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_bias_add, attrs(&kiln_op_bias_add, "axis", "0", NULL), &out, x, b));
  assert_close(out, (const float[]){11, -18, 3.5f});
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  /* (2, 3, 1, 1) with the default axis 1; (2, 1, 3) with axis -1. */
  x = f32_tensor(DIMS(2, 3, 1, 1), (const float[]){1, 2, 3, 4, 5, 6});
  KILN_ASSERT_OK(RUN(&kiln_op_bias_add, attrs(&kiln_op_bias_add, NULL), &out, x, b));
  assert_close(out, (const float[]){11, -18, 3.5f, 14, -15, 6.5f});
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  x = f32_tensor(DIMS(2, 1, 3), (const float[]){1, 2, 3, 4, 5, 6});
  KILN_ASSERT_OK(RUN(&kiln_op_bias_add, attrs(&kiln_op_bias_add, "axis", "-1", NULL), &out, x, b));
  assert_close(out, (const float[]){11, -18, 3.5f, 14, -15, 6.5f});
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  kiln_tensor_release(b);
}

static void test_prelu_kernel(void **state) {
  (void)state;
  /* (1, 2, 1, 3): channel 0 alpha 0.5, channel 1 alpha -2. */
  kiln_tensor_t *x = f32_tensor(DIMS(1, 2, 1, 3), (const float[]){-2, 0, 3, -1, 4, -0.25f});
  kiln_tensor_t *alpha = f32_tensor(DIMS(2), (const float[]){0.5f, -2});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_prelu, attrs(&kiln_op_prelu, NULL), &out, x, alpha));
  assert_close(out, (const float[]){-1, 0, 3, 2, 4, 0.5f});
  kiln_tensor_t *all[] = {x, alpha, out};
  release_all(all, 3);
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = tensor(KILN_DTYPE_INT32, DIMS(2, 3));
  kiln_tensor_t *b = tensor(KILN_DTYPE_INT32, DIMS(3));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(RUN(&kiln_op_bias_add, attrs(&kiln_op_bias_add, NULL), &out, x, b),
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
  KILN_ASSERT_OK(INFER(op, attrs(op, NULL), &out, F32(2, 3, 4, 5), F32(3), F32(3)));
  ASSERT_F32(out, 2, 3, 4, 5);
  KILN_ASSERT_OK(INFER(op, attrs(op, "axis", "-1", NULL), &out, F32(2, 4, 5, 3), F32(3), F32(3)));
  ASSERT_F32(out, 2, 4, 5, 3);
  KILN_ASSERT_STATUS(
      INFER(op, attrs(op, NULL), &out, F32(2, 3, 4, 5), F32(4), F32(3)), INVALID_ARGUMENT,
      "nn.instance_norm: gamma (4,) must have shape (3,) to match axis 1 of data (2, 3, 4, 5)");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, NULL), &out, F32(2, 3, 4, 5), F32(3), F32(3, 1)),
                     INVALID_ARGUMENT, "nn.instance_norm: beta (3, 1) must have shape (3,)");
  KILN_ASSERT_STATUS(
      INFER(op, attrs(op, "axis", "0", NULL), &out, F32(2, 3), F32(2), F32(2)), INVALID_ARGUMENT,
      "nn.instance_norm: the channel axis of data (2, 3) cannot be 0, the batch axis");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, NULL), &out, F32(3), F32(3), F32(3)), INVALID_ARGUMENT,
                     "nn.instance_norm: axis 1 is out of range for rank 1");
  const kiln_type_t *i3 = ty(KILN_DTYPE_INT32, DIMS(3));
  KILN_ASSERT_STATUS(INFER(op, attrs(op, NULL), &out, ty(KILN_DTYPE_INT32, DIMS(2, 3)), i3, i3),
                     INVALID_ARGUMENT,
                     "nn.instance_norm: data (2, 3) has dtype int32; expected a floating-point "
                     "dtype");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, NULL), &out, F32(2, 3), F32(3)), INVALID_ARGUMENT,
                     "nn.instance_norm: expected 3 inputs, got 2");
}

/* ONNX test_instancenorm_example: planes [-1, 0, 1] and [2, 3, 4], both of
 * variance 2/3; scale [1, 1.5], bias [0, 1]. */
static void test_instance_norm_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *x = f32_tensor(DIMS(1, 2, 1, 3), (const float[]){-1, 0, 1, 2, 3, 4});
  kiln_tensor_t *gamma = f32_tensor(DIMS(2), (const float[]){1, 1.5f});
  kiln_tensor_t *beta = f32_tensor(DIMS(2), (const float[]){0, 1});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(
      RUN(&kiln_op_instance_norm, attrs(&kiln_op_instance_norm, NULL), &out, x, gamma, beta));
  double s = 1.0 / sqrt(2.0 / 3.0 + 1e-5); /* about 1.22473 */
  assert_close(
      out, (const float[]){(float)-s, 0, (float)s, (float)(1 - 1.5 * s), 1, (float)(1 + 1.5 * s)});
  kiln_tensor_release(out);
  kiln_tensor_t *all[] = {x, gamma, beta};
  release_all(all, 3);
}

/* (2, 3, 4, 5) with channels on `axis`, each (n, c) plane normalized, against loops. */
static void check_instance_norm_loop(int axis, const char *axis_text, bool affine) {
  const int64_t shape[4] = {2, axis == 1 ? 3 : 4, axis == 1 ? 4 : 5, axis == 1 ? 5 : 3};
  const int64_t strides[4] = {60, shape[2] * shape[3], shape[3], 1};
  kiln_tensor_t *x = filled(9, false, 4, shape);
  kiln_tensor_t *gamma = filled(10, false, DIMS(3));
  kiln_tensor_t *beta = filled(11, false, DIMS(3));
  float *want = scratch(120);
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
                     attrs(&kiln_op_instance_norm, "axis", axis_text, "epsilon", "0.001", "center",
                           flag, "scale", flag, NULL),
                     &out, x, gamma, beta));
  assert_close(out, want);
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
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
