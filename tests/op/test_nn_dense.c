/*
 * Tests of nn.dense, nn.matmul and nn.batch_matmul: attributes, the type
 * relations with every error (NumPy's 1-D promotion and batch broadcasting
 * for matmul, Relay's transposes for batch_matmul), the layout rule, and the
 * reference kernels against hand-computed products and against direct loops
 * written here on odd shapes.
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

/* k/8 for k in [-11, 11]. */
static kiln_tensor_t *filled(int seed, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = tensor(KILN_DTYPE_FLOAT32, ndim, shape);
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    data[i] = (float)((i * 37 + seed * 11) % 23 - 11) / 8.0f;
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

/* ---- attributes ---- */

static void test_metadata_and_attrs(void **state) {
  (void)state;
  const kiln_op_t *ops[] = {&kiln_op_dense, &kiln_op_matmul, &kiln_op_batch_matmul};
  const char *names[] = {"nn.dense", "nn.matmul", "nn.batch_matmul"};
  const kiln_op_id_t ids[] = {KILN_OP_DENSE, KILN_OP_MATMUL, KILN_OP_BATCH_MATMUL};
  for (int i = 0; i < 3; ++i) {
    assert_string_equal(ops[i]->name, names[i]);
    assert_int_equal(ops[i]->id, ids[i]);
    assert_int_equal(ops[i]->pattern, KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE);
    assert_int_equal(ops[i]->min_inputs, 2);
    assert_int_equal(ops[i]->max_inputs, 2);
  }
  assert_attrs_text(&kiln_op_dense, attrs(&kiln_op_dense, NULL), "units=0");
  assert_attrs_text(&kiln_op_batch_matmul, attrs(&kiln_op_batch_matmul, NULL),
                    "transpose_a=False, transpose_b=True");
  void *none = &arena;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(&kiln_op_matmul, &arena, &none));
  assert_null(none);
  KILN_ASSERT_STATUS(
      kiln_op_attrs_validate(&kiln_op_dense, attrs(&kiln_op_dense, "units", "-2", NULL)),
      INVALID_ARGUMENT, "nn.dense: units is -2");
}

/* ---- relations ---- */

static void test_dense_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense;
  void *a = attrs(op, NULL);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, a, &out, F32(2, 3), F32(4, 3)));
  ASSERT_F32(out, 2, 4);
  KILN_ASSERT_OK(INFER(op, attrs(op, "units", "13", NULL), &out, F32(5, 7, 3), F32(13, 3)));
  ASSERT_F32(out, 5, 7, 13);
  KILN_ASSERT_OK(INFER(op, a, &out, F32(3), F32(1, 3)));
  ASSERT_F32(out, 1);
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3), F32(4, 5)), INVALID_ARGUMENT,
                     "nn.dense: data (2, 3) has 3 features but weight (4, 5) expects 5");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, "units", "7", NULL), &out, F32(2, 3), F32(4, 3)),
                     INVALID_ARGUMENT,
                     "nn.dense: units 7 does not match the 4 rows of weight (4, 3)");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3), F32(3)), INVALID_ARGUMENT,
                     "nn.dense: data (2, 3) must have rank >= 1 and weight (3,) rank 2");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ty(KILN_DTYPE_FLOAT32, 0, NULL), F32(4, 3)),
                     INVALID_ARGUMENT, "nn.dense: data () must have rank >= 1");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3), ty(KILN_DTYPE_FLOAT16, DIMS(4, 3))),
                     INVALID_ARGUMENT,
                     "nn.dense: weight (4, 3) has dtype float16 but data (2, 3) has dtype float32");
  KILN_ASSERT_STATUS(INFER(op, attrs(op, "units", "-1", NULL), &out, F32(2, 3), F32(4, 3)),
                     INVALID_ARGUMENT, "nn.dense: units is -1");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3)), INVALID_ARGUMENT,
                     "nn.dense: expected 2 inputs, got 1");
}

static void test_matmul_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_matmul;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(2, 3), F32(3, 4)));
  ASSERT_F32(out, 2, 4);
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(3), F32(3, 4)));
  ASSERT_F32(out, 4);
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(2, 3), F32(3)));
  ASSERT_F32(out, 2);
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(3), F32(3)));
  assert_type(out, KILN_DTYPE_FLOAT32, 0, NULL);
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(5, 1, 2, 3), F32(7, 3, 4)));
  ASSERT_F32(out, 5, 7, 2, 4);
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(3), F32(5, 3, 4)));
  ASSERT_F32(out, 5, 4);
  KILN_ASSERT_OK(INFER(op, NULL, &out, F32(5, 2, 3), F32(3)));
  ASSERT_F32(out, 5, 2);
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, F32(2, 3), F32(4, 5)), INVALID_ARGUMENT,
                     "nn.matmul: (2, 3) and (4, 5) do not match: contraction dim 3 vs 4");
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, F32(3), F32(4)), INVALID_ARGUMENT,
                     "nn.matmul: (3,) and (4,) do not match: contraction dim 3 vs 4");
  KILN_ASSERT_STATUS(
      INFER(op, NULL, &out, F32(2, 2, 3), F32(5, 3, 4)), INVALID_ARGUMENT,
      "nn.matmul: cannot broadcast the batch dims of (2, 2, 3) and (5, 3, 4): 2 vs 5");
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, ty(KILN_DTYPE_FLOAT32, 0, NULL), F32(3)),
                     INVALID_ARGUMENT, "nn.matmul: operands () and (3,) must have rank >= 1");
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, F32(2, 3), ty(KILN_DTYPE_INT64, DIMS(3, 4))),
                     INVALID_ARGUMENT, "nn.matmul: b (3, 4) has dtype int64 but a (2, 3)");
}

static void test_batch_matmul_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_matmul;
  void *a = attrs(op, NULL);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, a, &out, F32(2, 3, 4), F32(2, 5, 4)));
  ASSERT_F32(out, 2, 3, 5);
  KILN_ASSERT_OK(INFER(op, a, &out, F32(1, 3, 4), F32(6, 5, 4)));
  ASSERT_F32(out, 6, 3, 5);
  KILN_ASSERT_OK(INFER(op, a, &out, F32(7, 3, 4), F32(1, 5, 4)));
  ASSERT_F32(out, 7, 3, 5);
  void *plain = attrs(op, "transpose_b", "False", NULL);
  KILN_ASSERT_OK(INFER(op, plain, &out, F32(2, 3, 4), F32(2, 4, 5)));
  ASSERT_F32(out, 2, 3, 5);
  void *both = attrs(op, "transpose_a", "True", NULL);
  KILN_ASSERT_OK(INFER(op, both, &out, F32(2, 4, 3), F32(2, 5, 4)));
  ASSERT_F32(out, 2, 3, 5);
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3, 4), F32(2, 5, 6)), INVALID_ARGUMENT,
                     "nn.batch_matmul: x (2, 3, 4) and y (2, 5, 6) do not match: contraction dim "
                     "4 vs 6 (transpose_a False, transpose_b True)");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(2, 3, 4), F32(3, 5, 4)), INVALID_ARGUMENT,
                     "nn.batch_matmul: cannot broadcast the batch dims of (2, 3, 4) and (3, 5, 4): "
                     "2 vs 3");
  KILN_ASSERT_STATUS(INFER(op, a, &out, F32(3, 4), F32(2, 5, 4)), INVALID_ARGUMENT,
                     "nn.batch_matmul: x (3, 4) and y (2, 5, 4) must have rank 3");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[2] = {"NC", ""};
  const char *required[2] = {NULL, NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_dense,
                                     .attrs = attrs(&kiln_op_dense, NULL),
                                     .num_inputs = 2,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &arena};
  KILN_ASSERT_OK(kiln_op_dense.correct_layout(&relation));
  assert_string_equal(required[0], "NC");
  assert_string_equal(required[1], "");
  assert_string_equal(relation.output_layout, "NC");
  relation.op = &kiln_op_matmul;
  relation.attrs = NULL;
  arriving[0] = "NC4c";
  KILN_ASSERT_OK(kiln_op_matmul.correct_layout(&relation));
  assert_string_equal(required[0], "NC");
  assert_string_equal(relation.output_layout, "");
}

/* ---- kernels ---- */

static void test_dense_by_hand(void **state) {
  (void)state;
  kiln_tensor_t *data = f32_tensor(DIMS(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *weight = f32_tensor(DIMS(2, 3), (const float[]){1, 0, -1, 2, 1, 0});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_dense, attrs(&kiln_op_dense, NULL), &out, data, weight));
  assert_close(out, (const float[]){1 - 3, 2 + 2, 4 - 6, 8 + 5});
  kiln_tensor_t *all[] = {data, weight, out};
  release_all(all, 3);
}

static void test_dense_odd_shapes(void **state) {
  (void)state;
  enum { B = 3, R = 5, K = 7, N = 13 };
  kiln_tensor_t *data = filled(1, DIMS(B, R, K));
  kiln_tensor_t *weight = filled(2, DIMS(N, K));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_dense, attrs(&kiln_op_dense, NULL), &out, data, weight));
  const float *x = kiln_tensor_data(data), *w = kiln_tensor_data(weight);
  float *want = scratch(B * R * N);
  for (int r = 0; r < B * R; ++r) {
    for (int n = 0; n < N; ++n) {
      for (int k = 0; k < K; ++k) {
        want[r * N + n] += x[r * K + k] * w[n * K + k];
      }
    }
  }
  assert_close(out, want);
  kiln_tensor_t *all[] = {data, weight, out};
  release_all(all, 3);
}

static void test_matmul_vectors(void **state) {
  (void)state;
  kiln_tensor_t *v = f32_tensor(DIMS(3), (const float[]){1, 2, 3});
  kiln_tensor_t *u = f32_tensor(DIMS(3), (const float[]){4, -5, 6});
  kiln_tensor_t *m = f32_tensor(DIMS(3, 2), (const float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *mt = f32_tensor(DIMS(2, 3), (const float[]){1, 3, 5, 2, 4, 6});
  kiln_tensor_t *dot = NULL, *vm = NULL, *mv = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &dot, v, u));
  assert_int_equal(kiln_tensor_ndim(dot), 0);
  assert_close(dot, (const float[]){4 - 10 + 18});
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &vm, v, m));
  assert_close(vm, (const float[]){1 + 6 + 15, 2 + 8 + 18});
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &mv, mt, v));
  assert_close(mv, (const float[]){1 + 6 + 15, 2 + 8 + 18});
  kiln_tensor_t *all[] = {v, u, m, mt, dot, vm, mv};
  release_all(all, 7);
}

/* (2, 1, 3, 5) @ (4, 5, 7) -> (2, 4, 3, 7): a's batch dim 1 and b's missing
 * leading dim broadcast. */
static void test_matmul_broadcast(void **state) {
  (void)state;
  enum { P = 2, Q = 4, M = 3, K = 5, N = 7 };
  kiln_tensor_t *a = filled(3, DIMS(P, 1, M, K));
  kiln_tensor_t *b = filled(4, DIMS(Q, K, N));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &out, a, b));
  assert_int_equal(kiln_tensor_ndim(out), 4);
  const float *x = kiln_tensor_data(a), *y = kiln_tensor_data(b);
  float *want = scratch(P * Q * M * N);
  for (int p = 0; p < P; ++p) {
    for (int q = 0; q < Q; ++q) {
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          for (int k = 0; k < K; ++k) {
            want[((p * Q + q) * M + i) * N + j] += x[(p * M + i) * K + k] * y[(q * K + k) * N + j];
          }
        }
      }
    }
  }
  assert_close(out, want);
  kiln_tensor_t *all[] = {a, b, out};
  release_all(all, 3);
}

/* Every transpose combination, with x's batch of 1 broadcast against y's 3. */
static void test_batch_matmul(void **state) {
  (void)state;
  enum { B = 3, M = 5, K = 7, N = 1 };
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      kiln_tensor_t *x = ta ? filled(5, DIMS(1, K, M)) : filled(5, DIMS(1, M, K));
      kiln_tensor_t *y = tb ? filled(6, DIMS(B, N, K)) : filled(6, DIMS(B, K, N));
      void *a = attrs(&kiln_op_batch_matmul, "transpose_a", ta ? "True" : "False", "transpose_b",
                      tb ? "True" : "False", NULL);
      kiln_tensor_t *out = NULL;
      KILN_ASSERT_OK(RUN(&kiln_op_batch_matmul, a, &out, x, y));
      const float *xd = kiln_tensor_data(x), *yd = kiln_tensor_data(y);
      float *want = scratch(B * M * N);
      for (int t = 0; t < B; ++t) {
        for (int i = 0; i < M; ++i) {
          for (int j = 0; j < N; ++j) {
            for (int k = 0; k < K; ++k) {
              float xv = ta ? xd[k * M + i] : xd[i * K + k];
              float yv = tb ? yd[(t * N + j) * K + k] : yd[(t * K + k) * N + j];
              want[(t * M + i) * N + j] += xv * yv;
            }
          }
        }
      }
      assert_close(out, want);
      kiln_tensor_t *all[] = {x, y, out};
      release_all(all, 3);
    }
  }
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *a = tensor(KILN_DTYPE_INT32, DIMS(2, 3));
  kiln_tensor_t *b = tensor(KILN_DTYPE_INT32, DIMS(3, 2));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(RUN(&kiln_op_matmul, NULL, &out, a, b), UNIMPLEMENTED,
                     "nn.matmul: the reference kernel does not handle dtype int32");
  kiln_tensor_t *all[] = {a, b};
  release_all(all, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata_and_attrs), cmocka_unit_test(test_dense_relation),
      cmocka_unit_test(test_matmul_relation),    cmocka_unit_test(test_batch_matmul_relation),
      cmocka_unit_test(test_layout_rule),        cmocka_unit_test(test_dense_by_hand),
      cmocka_unit_test(test_dense_odd_shapes),   cmocka_unit_test(test_matmul_vectors),
      cmocka_unit_test(test_matmul_broadcast),   cmocka_unit_test(test_batch_matmul),
      cmocka_unit_test(test_kernel_errors),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
