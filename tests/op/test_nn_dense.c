/*
 * Tests of nn.dense, nn.matmul, nn.batch_matmul and nn.contrib_dense_pack
 * (dense with its weight in column blocks): attributes, the type
 * relations with every error (NumPy's 1-D promotion and batch broadcasting
 * for matmul, Relay's transposes for batch_matmul), the layout rule, and the
 * reference kernels against hand-computed products and against direct loops
 * written here on odd shapes.
 */

#include "kiln_op_test.h"
#include "op/nn_common.h"

#define F32 KILN_DTYPE_FLOAT32

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
  assert_defaults(&kiln_op_dense, "units=0");
  assert_defaults(&kiln_op_batch_matmul, "transpose_a=False, transpose_b=True");
  void *none = &kiln_op_test_arena;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(&kiln_op_matmul, &kiln_op_test_arena, &none));
  assert_null(none);
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "-2")),
                     INVALID_ARGUMENT, "nn.dense: units is -2");
}

/* ---- relations ---- */

static void test_dense_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense;
  void *a = attrs_with(op, NULL);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 2, SHAPE(4, 3))));
  assert_type(out, F32, 2, SHAPE(2, 4));
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "units", "13"), &out, ttype(F32, 3, SHAPE(5, 7, 3)),
                       ttype(F32, 2, SHAPE(13, 3))));
  assert_type(out, F32, 3, SHAPE(5, 7, 13));
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 1, SHAPE(3)), ttype(F32, 2, SHAPE(1, 3))));
  assert_type(out, F32, 1, SHAPE(1));
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 2, SHAPE(4, 5))),
                     INVALID_ARGUMENT,
                     "nn.dense: data (2, 3) has 3 features but weight (4, 5) expects 5");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "units", "7"), &out, ttype(F32, 2, SHAPE(2, 3)),
                           ttype(F32, 2, SHAPE(4, 3))),
                     INVALID_ARGUMENT,
                     "nn.dense: units 7 does not match the 4 rows of weight (4, 3)");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 1, SHAPE(3))),
                     INVALID_ARGUMENT,
                     "nn.dense: data (2, 3) must have rank >= 1 and weight (3,) rank 2");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 0, NULL), ttype(F32, 2, SHAPE(4, 3))),
                     INVALID_ARGUMENT, "nn.dense: data () must have rank >= 1");
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(KILN_DTYPE_FLOAT16, 2, SHAPE(4, 3))),
      INVALID_ARGUMENT,
      "nn.dense: weight (4, 3) has dtype float16 but data (2, 3) has dtype float32");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "units", "-1"), &out, ttype(F32, 2, SHAPE(2, 3)),
                           ttype(F32, 2, SHAPE(4, 3))),
                     INVALID_ARGUMENT, "nn.dense: units is -1");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 2, SHAPE(2, 3))), INVALID_ARGUMENT,
                     "nn.dense: expected 2 inputs, got 1");
}

static void test_matmul_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_matmul;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, NULL, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 2, SHAPE(3, 4))));
  assert_type(out, F32, 2, SHAPE(2, 4));
  KILN_ASSERT_OK(INFER(op, NULL, &out, ttype(F32, 1, SHAPE(3)), ttype(F32, 2, SHAPE(3, 4))));
  assert_type(out, F32, 1, SHAPE(4));
  KILN_ASSERT_OK(INFER(op, NULL, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 1, SHAPE(3))));
  assert_type(out, F32, 1, SHAPE(2));
  KILN_ASSERT_OK(INFER(op, NULL, &out, ttype(F32, 1, SHAPE(3)), ttype(F32, 1, SHAPE(3))));
  assert_type(out, F32, 0, NULL);
  KILN_ASSERT_OK(
      INFER(op, NULL, &out, ttype(F32, 4, SHAPE(5, 1, 2, 3)), ttype(F32, 3, SHAPE(7, 3, 4))));
  assert_type(out, F32, 4, SHAPE(5, 7, 2, 4));
  KILN_ASSERT_OK(INFER(op, NULL, &out, ttype(F32, 1, SHAPE(3)), ttype(F32, 3, SHAPE(5, 3, 4))));
  assert_type(out, F32, 2, SHAPE(5, 4));
  KILN_ASSERT_OK(INFER(op, NULL, &out, ttype(F32, 3, SHAPE(5, 2, 3)), ttype(F32, 1, SHAPE(3))));
  assert_type(out, F32, 2, SHAPE(5, 2));
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(F32, 2, SHAPE(4, 5))),
                     INVALID_ARGUMENT,
                     "nn.matmul: (2, 3) and (4, 5) do not match: contraction dim 3 vs 4");
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, ttype(F32, 1, SHAPE(3)), ttype(F32, 1, SHAPE(4))),
                     INVALID_ARGUMENT,
                     "nn.matmul: (3,) and (4,) do not match: contraction dim 3 vs 4");
  KILN_ASSERT_STATUS(
      INFER(op, NULL, &out, ttype(F32, 3, SHAPE(2, 2, 3)), ttype(F32, 3, SHAPE(5, 3, 4))),
      INVALID_ARGUMENT,
      "nn.matmul: cannot broadcast the batch dims of (2, 2, 3) and (5, 3, 4): 2 vs 5");
  KILN_ASSERT_STATUS(INFER(op, NULL, &out, ttype(F32, 0, NULL), ttype(F32, 1, SHAPE(3))),
                     INVALID_ARGUMENT, "nn.matmul: operands () and (3,) must have rank >= 1");
  KILN_ASSERT_STATUS(
      INFER(op, NULL, &out, ttype(F32, 2, SHAPE(2, 3)), ttype(KILN_DTYPE_INT64, 2, SHAPE(3, 4))),
      INVALID_ARGUMENT, "nn.matmul: b (3, 4) has dtype int64 but a (2, 3)");
}

static void test_batch_matmul_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_batch_matmul;
  void *a = attrs_with(op, NULL);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 3, SHAPE(2, 3, 4)), ttype(F32, 3, SHAPE(2, 5, 4))));
  assert_type(out, F32, 3, SHAPE(2, 3, 5));
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 3, SHAPE(1, 3, 4)), ttype(F32, 3, SHAPE(6, 5, 4))));
  assert_type(out, F32, 3, SHAPE(6, 3, 5));
  KILN_ASSERT_OK(INFER(op, a, &out, ttype(F32, 3, SHAPE(7, 3, 4)), ttype(F32, 3, SHAPE(1, 5, 4))));
  assert_type(out, F32, 3, SHAPE(7, 3, 5));
  void *plain = ATTRS(op, "transpose_b", "False");
  KILN_ASSERT_OK(
      INFER(op, plain, &out, ttype(F32, 3, SHAPE(2, 3, 4)), ttype(F32, 3, SHAPE(2, 4, 5))));
  assert_type(out, F32, 3, SHAPE(2, 3, 5));
  void *both = ATTRS(op, "transpose_a", "True");
  KILN_ASSERT_OK(
      INFER(op, both, &out, ttype(F32, 3, SHAPE(2, 4, 3)), ttype(F32, 3, SHAPE(2, 5, 4))));
  assert_type(out, F32, 3, SHAPE(2, 3, 5));
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, ttype(F32, 3, SHAPE(2, 3, 4)), ttype(F32, 3, SHAPE(2, 5, 6))),
      INVALID_ARGUMENT,
      "nn.batch_matmul: x (2, 3, 4) and y (2, 5, 6) do not match: contraction dim "
      "4 vs 6 (transpose_a False, transpose_b True)");
  KILN_ASSERT_STATUS(
      INFER(op, a, &out, ttype(F32, 3, SHAPE(2, 3, 4)), ttype(F32, 3, SHAPE(3, 5, 4))),
      INVALID_ARGUMENT,
      "nn.batch_matmul: cannot broadcast the batch dims of (2, 3, 4) and (3, 5, 4): "
      "2 vs 3");
  KILN_ASSERT_STATUS(INFER(op, a, &out, ttype(F32, 2, SHAPE(3, 4)), ttype(F32, 3, SHAPE(2, 5, 4))),
                     INVALID_ARGUMENT,
                     "nn.batch_matmul: x (3, 4) and y (2, 5, 4) must have rank 3");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[2] = {"NC", ""};
  const char *required[2] = {NULL, NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_dense,
                                     .attrs = attrs_with(&kiln_op_dense, NULL),
                                     .num_inputs = 2,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
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
  kiln_tensor_t *data = tensor_of(F32, 2, SHAPE(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *weight = tensor_of(F32, 2, SHAPE(2, 3), (const float[]){1, 0, -1, 2, 1, 0});
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_dense, attrs_with(&kiln_op_dense, NULL), &out, data, weight));
  assert_f32(out, (const double[]){1 - 3, 2 + 2, 4 - 6, 8 + 5}, 4);
  kiln_tensor_t *all[] = {data, weight, out};
  release_all(all, 3);
}

static void test_dense_odd_shapes(void **state) {
  (void)state;
  enum { B = 3, R = 5, K = 7, N = 13 };
  kiln_tensor_t *data = f32_filled(1, 3, SHAPE(B, R, K));
  kiln_tensor_t *weight = f32_filled(2, 2, SHAPE(N, K));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_dense, attrs_with(&kiln_op_dense, NULL), &out, data, weight));
  const float *x = kiln_tensor_data(data), *w = kiln_tensor_data(weight);
  float *want = f32_scratch(B * R * N);
  for (int r = 0; r < B * R; ++r) {
    for (int n = 0; n < N; ++n) {
      for (int k = 0; k < K; ++k) {
        want[r * N + n] += x[r * K + k] * w[n * K + k];
      }
    }
  }
  assert_f32_floats(out, want, B * R * N);
  kiln_tensor_t *all[] = {data, weight, out};
  release_all(all, 3);
}

/* contrib_dense_pack: the relation and its errors, and the kernel against
 * dense on the unpacked weight, 11 columns in blocks of 4 (one padded). */
static void test_dense_pack_relation(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dense_pack;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "units", "11"), &out, ttype(F32, 3, SHAPE(2, 5, 7)),
                       ttype(F32, 3, SHAPE(3, 7, 4))));
  assert_type(out, F32, 3, SHAPE(2, 5, 11));
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "units", "0"), &out, ttype(F32, 2, SHAPE(2, 7)),
                       ttype(F32, 3, SHAPE(3, 7, 4))));
  assert_type(out, F32, 2, SHAPE(2, 12));
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "units", "8"), &out, ttype(F32, 2, SHAPE(2, 7)),
                           ttype(F32, 3, SHAPE(3, 7, 4))),
                     INVALID_ARGUMENT,
                     "nn.contrib_dense_pack: units 8 does not fill the last of the 3 blocks of 4 "
                     "columns of weight (3, 7, 4)");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "units", "0"), &out, ttype(F32, 2, SHAPE(2, 6)),
                           ttype(F32, 3, SHAPE(3, 7, 4))),
                     INVALID_ARGUMENT,
                     "nn.contrib_dense_pack: data (2, 6) has 6 features but weight (3, 7, 4) "
                     "expects 7");
  KILN_ASSERT_STATUS(INFER(op, ATTRS(op, "units", "0"), &out, ttype(F32, 2, SHAPE(2, 6)),
                           ttype(F32, 2, SHAPE(4, 6))),
                     INVALID_ARGUMENT, "weight (4, 6) rank 3 (N/b, K, b)");
}

static void test_dense_pack_against_dense(void **state) {
  (void)state;
  enum { R = 5, K = 7, N = 11, B = 4, NB = 3 };
  kiln_tensor_t *data = f32_filled(1, 2, SHAPE(R, K));
  kiln_tensor_t *weight = f32_filled(2, 2, SHAPE(N, K));
  kiln_tensor_t *packed = tensor_zeros(F32, 3, SHAPE(NB, K, B));
  const float *w = kiln_tensor_data(weight);
  float *p = kiln_tensor_data(packed);
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < K; ++k) {
      p[(n / B) * K * B + k * B + n % B] = w[n * K + k];
    }
  }
  kiln_tensor_t *want = NULL, *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_dense, attrs_with(&kiln_op_dense, NULL), &want, data, weight));
  KILN_ASSERT_OK(
      RUN(&kiln_op_dense_pack, ATTRS(&kiln_op_dense_pack, "units", "11"), &out, data, packed));
  assert_f32_floats(out, kiln_tensor_data(want), R * N);
  kiln_tensor_t *all[] = {data, weight, packed, want, out};
  release_all(all, 5);
}

static void test_matmul_vectors(void **state) {
  (void)state;
  kiln_tensor_t *v = tensor_of(F32, 1, SHAPE(3), (const float[]){1, 2, 3});
  kiln_tensor_t *u = tensor_of(F32, 1, SHAPE(3), (const float[]){4, -5, 6});
  kiln_tensor_t *m = tensor_of(F32, 2, SHAPE(3, 2), (const float[]){1, 2, 3, 4, 5, 6});
  kiln_tensor_t *mt = tensor_of(F32, 2, SHAPE(2, 3), (const float[]){1, 3, 5, 2, 4, 6});
  kiln_tensor_t *dot = NULL, *vm = NULL, *mv = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &dot, v, u));
  assert_int_equal(kiln_tensor_ndim(dot), 0);
  assert_f32(dot, (const double[]){4 - 10 + 18}, 1);
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &vm, v, m));
  assert_f32(vm, (const double[]){1 + 6 + 15, 2 + 8 + 18}, 2);
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &mv, mt, v));
  assert_f32(mv, (const double[]){1 + 6 + 15, 2 + 8 + 18}, 2);
  kiln_tensor_t *all[] = {v, u, m, mt, dot, vm, mv};
  release_all(all, 7);
}

/* (2, 1, 3, 5) @ (4, 5, 7) -> (2, 4, 3, 7): a's batch dim 1 and b's missing
 * leading dim broadcast. */
static void test_matmul_broadcast(void **state) {
  (void)state;
  enum { P = 2, Q = 4, M = 3, K = 5, N = 7 };
  kiln_tensor_t *a = f32_filled(3, 4, SHAPE(P, 1, M, K));
  kiln_tensor_t *b = f32_filled(4, 3, SHAPE(Q, K, N));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_matmul, NULL, &out, a, b));
  assert_int_equal(kiln_tensor_ndim(out), 4);
  const float *x = kiln_tensor_data(a), *y = kiln_tensor_data(b);
  float *want = f32_scratch(P * Q * M * N);
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
  assert_f32_floats(out, want, P * Q * M * N);
  kiln_tensor_t *all[] = {a, b, out};
  release_all(all, 3);
}

/* Every transpose combination, with x's batch of 1 broadcast against y's 3. */
static void test_batch_matmul(void **state) {
  (void)state;
  enum { B = 3, M = 5, K = 7, N = 1 };
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      kiln_tensor_t *x = ta ? f32_filled(5, 3, SHAPE(1, K, M)) : f32_filled(5, 3, SHAPE(1, M, K));
      kiln_tensor_t *y = tb ? f32_filled(6, 3, SHAPE(B, N, K)) : f32_filled(6, 3, SHAPE(B, K, N));
      void *a = ATTRS(&kiln_op_batch_matmul, "transpose_a", ta ? "True" : "False", "transpose_b",
                      tb ? "True" : "False");
      kiln_tensor_t *out = NULL;
      KILN_ASSERT_OK(RUN(&kiln_op_batch_matmul, a, &out, x, y));
      const float *xd = kiln_tensor_data(x), *yd = kiln_tensor_data(y);
      float *want = f32_scratch(B * M * N);
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
      assert_f32_floats(out, want, B * M * N);
      kiln_tensor_t *all[] = {x, y, out};
      release_all(all, 3);
    }
  }
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *a = tensor_zeros(KILN_DTYPE_INT32, 2, SHAPE(2, 3));
  kiln_tensor_t *b = tensor_zeros(KILN_DTYPE_INT32, 2, SHAPE(3, 2));
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(RUN(&kiln_op_matmul, NULL, &out, a, b), UNIMPLEMENTED,
                     "nn.matmul: the reference kernel does not handle dtype int32");
  kiln_tensor_t *all[] = {a, b};
  release_all(all, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata_and_attrs),
      cmocka_unit_test(test_dense_relation),
      cmocka_unit_test(test_matmul_relation),
      cmocka_unit_test(test_batch_matmul_relation),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_dense_by_hand),
      cmocka_unit_test(test_dense_odd_shapes),
      cmocka_unit_test(test_matmul_vectors),
      cmocka_unit_test(test_matmul_broadcast),
      cmocka_unit_test(test_batch_matmul),
      cmocka_unit_test(test_kernel_errors),
      cmocka_unit_test(test_dense_pack_relation),
      cmocka_unit_test(test_dense_pack_against_dense),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
