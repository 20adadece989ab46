/*
 * Tests of the loop-IR interpreter: hand-written PrimFuncs (a vectorized
 * elementwise add, a matmul with a local accumulator, a reduction with a
 * guarded tail) checked against plain C loops; integer and float semantics;
 * and every error: arguments, out-of-bounds accesses, assertions; and the
 * total operations (a zero divisor gives 0, float-to-int casts saturate).
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "tir/builder.h"
#include "tir/interp.h"
#include "tir_fixture.h"

static kiln_tensor_t *make_tensor(kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                  const void *data) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &t));
  if (data) {
    memcpy(kiln_tensor_data(t), data, kiln_tensor_byte_size(t));
  }
  return t;
}

static float test_value(int i) {
  return (float)((i * 37) % 23) / 7.0f - 1.5f;
}

static const kiln_tir_expr_t *imm(kiln_tir_builder_t *b, int64_t v) {
  return kiln_tir_b_i32(b, v);
}

static const kiln_tir_stmt_t *loop(kiln_tir_builder_t *b, const kiln_tir_var_t *v, int64_t extent,
                                   kiln_tir_for_kind_t kind, const kiln_tir_stmt_t *body) {
  return kiln_tir_b_for(b, v, imm(b, 0), imm(b, extent), kind, body);
}

/* C[i, T.ramp(jo*4, 1, 4)] = A[i, ramp] + B[i, ramp] * T.broadcast(2.0, 4) */
static const kiln_tir_prim_func_t *build_vector_add(kiln_tir_builder_t *b) {
  const int64_t shape[] = {3, 8};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_buffer_t *B = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_buffer_t *C = kiln_tir_b_buffer(b, "C", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *jo = kiln_tir_b_var(b, "jo", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *idx[] = {
      kiln_tir_b_v(i),
      kiln_tir_b_ramp(b, kiln_tir_b_mul(b, kiln_tir_b_v(jo), imm(b, 4)), imm(b, 1), 4)};
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(b, kiln_tir_b_load(b, A, 2, idx),
                     kiln_tir_b_mul(b, kiln_tir_b_load(b, B, 2, idx),
                                    kiln_tir_b_broadcast(b, kiln_tir_b_f32(b, 2.0), 4)));
  const kiln_tir_stmt_t *s = kiln_tir_b_store(b, C, value, 2, idx);
  s = loop(b, i, 3, KILN_TIR_FOR_PARALLEL, loop(b, jo, 2, KILN_TIR_FOR_SERIAL, s));
  const kiln_tir_buffer_t *params[] = {A, B, C};
  return kiln_tir_b_func(b, "vector_add", 3, params, s);
}

static void test_vector_add(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = build_vector_add(&f.b);
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  float a[24], bb[24], expected[24];
  for (int k = 0; k < 24; ++k) {
    a[k] = test_value(k);
    bb[k] = test_value(k + 5);
    expected[k] = a[k] + bb[k] * 2.0f;
  }
  const int64_t shape[] = {3, 8};
  kiln_tensor_t *args[] = {make_tensor(KILN_DTYPE_FLOAT32, 2, shape, a),
                           make_tensor(KILN_DTYPE_FLOAT32, 2, shape, bb),
                           make_tensor(KILN_DTYPE_FLOAT32, 2, shape, NULL)};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 3, args));
  assert_memory_equal(kiln_tensor_data(args[2]), expected, sizeof(expected));
  /* Argument checks. */
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), func, 2, args), INVALID_ARGUMENT,
                     "vector_add: expected 3 arguments, got 2");
  const int64_t other[] = {3, 7};
  kiln_tensor_t *wrong_shape = make_tensor(KILN_DTYPE_FLOAT32, 2, other, NULL);
  kiln_tensor_t *wrong_dtype = make_tensor(KILN_DTYPE_INT32, 2, shape, NULL);
  kiln_tensor_t *bad1[] = {args[0], wrong_shape, args[2]};
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), func, 3, bad1), INVALID_ARGUMENT,
                     "vector_add: buffer B dim 1 is 8 but its tensor's is 7");
  kiln_tensor_t *bad2[] = {args[0], args[1], wrong_dtype};
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), func, 3, bad2), INVALID_ARGUMENT,
                     "buffer C is float32 but its tensor is int32");
  kiln_tensor_t *bad3[] = {args[0], args[1], wrong_shape};
  kiln_tensor_release(wrong_shape);
  wrong_shape = make_tensor(KILN_DTYPE_FLOAT32, 1, other, NULL);
  bad3[2] = wrong_shape;
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), func, 3, bad3), INVALID_ARGUMENT,
                     "buffer C has 2 dims but its tensor has 1");
  kiln_tensor_release(wrong_shape);
  kiln_tensor_release(wrong_dtype);
  for (int k = 0; k < 3; ++k) {
    kiln_tensor_release(args[k]);
  }
  fixture_done(&f);
}

/* C[i, j] = sum_k A[i, k] * B[k, j], accumulated in a local buffer. */
static const kiln_tir_prim_func_t *build_matmul(kiln_tir_builder_t *b, int64_t m, int64_t n,
                                                int64_t kk) {
  const int64_t sa[] = {m, kk}, sb[] = {kk, n}, sc[] = {m, n}, one[] = {1};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 2, sa);
  const kiln_tir_buffer_t *B = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 2, sb);
  const kiln_tir_buffer_t *C = kiln_tir_b_buffer(b, "C", KILN_DTYPE_FLOAT32, 2, sc);
  const kiln_tir_buffer_t *acc = kiln_tir_b_buffer(b, "acc", KILN_DTYPE_FLOAT32, 1, one);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  const kiln_tir_var_t *k = kiln_tir_b_var(b, "k", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *z[] = {imm(b, 0)};
  const kiln_tir_expr_t *ik[] = {kiln_tir_b_v(i), kiln_tir_b_v(k)};
  const kiln_tir_expr_t *kj[] = {kiln_tir_b_v(k), kiln_tir_b_v(j)};
  const kiln_tir_expr_t *ij[] = {kiln_tir_b_v(i), kiln_tir_b_v(j)};
  const kiln_tir_stmt_t *update = kiln_tir_b_store(
      b, acc,
      kiln_tir_b_add(b, kiln_tir_b_load(b, acc, 1, z),
                     kiln_tir_b_mul(b, kiln_tir_b_load(b, A, 2, ik), kiln_tir_b_load(b, B, 2, kj))),
      1, z);
  const kiln_tir_stmt_t *steps[] = {
      kiln_tir_b_store(b, acc, kiln_tir_b_f32(b, 0.0), 1, z),
      loop(b, k, kk, KILN_TIR_FOR_SERIAL, update),
      kiln_tir_b_store(b, C, kiln_tir_b_load(b, acc, 1, z), 2, ij),
  };
  const kiln_tir_stmt_t *s = kiln_tir_b_allocate(b, acc, KILN_TIR_SCOPE_LOCAL, KILN_TIR_INIT_NONE,
                                                 kiln_tir_b_seq(b, 3, steps));
  s = loop(b, i, m, KILN_TIR_FOR_PARALLEL, loop(b, j, n, KILN_TIR_FOR_SERIAL, s));
  const kiln_tir_buffer_t *params[] = {A, B, C};
  return kiln_tir_b_func(b, "matmul", 3, params, s);
}

static void test_matmul_local_accumulator(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  enum { M = 3, N = 5, K = 7 };
  const kiln_tir_prim_func_t *func = build_matmul(&f.b, M, N, K);
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  float a[M * K], bb[K * N], expected[M * N];
  for (int x = 0; x < M * K; ++x) {
    a[x] = test_value(x);
  }
  for (int x = 0; x < K * N; ++x) {
    bb[x] = test_value(x + 11);
  }
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        acc = acc + a[i * K + k] * bb[k * N + j];
      }
      expected[i * N + j] = acc;
    }
  }
  const int64_t sa[] = {M, K}, sb[] = {K, N}, sc[] = {M, N};
  kiln_tensor_t *args[] = {make_tensor(KILN_DTYPE_FLOAT32, 2, sa, a),
                           make_tensor(KILN_DTYPE_FLOAT32, 2, sb, bb),
                           make_tensor(KILN_DTYPE_FLOAT32, 2, sc, NULL)};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 3, args));
  assert_memory_equal(kiln_tensor_data(args[2]), expected, sizeof(expected));
  for (int x = 0; x < 3; ++x) {
    kiln_tensor_release(args[x]);
  }
  fixture_done(&f);
}

/* out[0] = acc[0] + acc[1] after storing acc[0] only: with an Allocate that
 * zeros, acc[1] reads 0; with one that does not, the read of acc[1] is an
 * error naming the buffer. */
static const kiln_tir_prim_func_t *build_half_written(kiln_tir_builder_t *b, kiln_tir_init_t init) {
  const int64_t two[] = {2}, one[] = {1};
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "out", KILN_DTYPE_FLOAT32, 1, one);
  const kiln_tir_buffer_t *acc = kiln_tir_b_buffer(b, "acc", KILN_DTYPE_FLOAT32, 1, two);
  const kiln_tir_expr_t *i0[] = {imm(b, 0)}, *i1[] = {imm(b, 1)};
  const kiln_tir_stmt_t *steps[] = {
      kiln_tir_b_store(b, acc, kiln_tir_b_f32(b, 2.5), 1, i0),
      kiln_tir_b_store(
          b, out, kiln_tir_b_add(b, kiln_tir_b_load(b, acc, 1, i0), kiln_tir_b_load(b, acc, 1, i1)),
          1, i0),
  };
  const kiln_tir_stmt_t *s =
      kiln_tir_b_allocate(b, acc, KILN_TIR_SCOPE_GLOBAL, init, kiln_tir_b_seq(b, 2, steps));
  return kiln_tir_b_func(b, "half_written", 1, &out, s);
}

static void test_allocate_init(void **state) {
  (void)state;
  for (int init = KILN_TIR_INIT_ZERO; init <= KILN_TIR_INIT_NONE; ++init) {
    fixture_t f;
    fixture_init(&f);
    const kiln_tir_prim_func_t *func = build_half_written(&f.b, (kiln_tir_init_t)init);
    KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
    const int64_t so[] = {1};
    kiln_tensor_t *out = make_tensor(KILN_DTYPE_FLOAT32, 1, so, NULL);
    kiln_status_t status = kiln_tir_interp_run(kiln_allocator_system(), func, 1, &out);
    if (init == KILN_TIR_INIT_ZERO) {
      KILN_ASSERT_OK(status);
      assert_true(((const float *)kiln_tensor_data(out))[0] == 2.5f);
    } else {
      KILN_ASSERT_STATUS(status, FAILED_PRECONDITION,
                         "flat index 1 of buffer acc is read before it is written");
    }
    kiln_tensor_release(out);
    fixture_done(&f);
  }
}

/* out[0] = sum of A[i*4 + j] for i < 3, j < 4, guarded by i*4 + j < 10. */
static const kiln_tir_prim_func_t *build_guarded_sum(kiln_tir_builder_t *b, int guarded) {
  const int64_t sa[] = {10}, so[] = {1};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, sa);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "out", KILN_DTYPE_FLOAT32, 1, so);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *flat =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, kiln_tir_b_v(i), imm(b, 4)), kiln_tir_b_v(j));
  const kiln_tir_expr_t *z[] = {imm(b, 0)}, *fi[] = {flat};
  const kiln_tir_stmt_t *update = kiln_tir_b_store(
      b, out, kiln_tir_b_add(b, kiln_tir_b_load(b, out, 1, z), kiln_tir_b_load(b, A, 1, fi)), 1, z);
  if (guarded) {
    update = kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, flat, imm(b, 10)), update, NULL);
  }
  const kiln_tir_stmt_t *steps[] = {
      kiln_tir_b_store(b, out, kiln_tir_b_f32(b, 0.0), 1, z),
      loop(b, i, 3, KILN_TIR_FOR_SERIAL, loop(b, j, 4, KILN_TIR_FOR_UNROLLED, update)),
  };
  const kiln_tir_buffer_t *params[] = {A, out};
  return kiln_tir_b_func(b, "guarded_sum", 2, params, kiln_tir_b_seq(b, 2, steps));
}

static void test_guarded_reduction_and_out_of_bounds(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *good = build_guarded_sum(&f.b, 1);
  const kiln_tir_prim_func_t *bad = build_guarded_sum(&f.b, 0);
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  float a[10], expected = 0.0f;
  for (int x = 0; x < 10; ++x) {
    a[x] = test_value(x);
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (i * 4 + j < 10) {
        expected = expected + a[i * 4 + j];
      }
    }
  }
  const int64_t sa[] = {10}, so[] = {1};
  kiln_tensor_t *args[] = {make_tensor(KILN_DTYPE_FLOAT32, 1, sa, a),
                           make_tensor(KILN_DTYPE_FLOAT32, 1, so, NULL)};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), good, 2, args));
  assert_memory_equal(kiln_tensor_data(args[1]), &expected, sizeof(expected));
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), bad, 2, args), OUT_OF_RANGE,
                     "guarded_sum: BufferLoad: index 10 of dim 0 of buffer A is outside [0, 10)");
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
  fixture_done(&f);
}

/* Runs `value` stored into a one-element buffer of its dtype and returns the element bits. */
static kiln_status_t eval_into(fixture_t *f, const kiln_tir_expr_t *value, void *out, size_t size) {
  KILN_RETURN_IF_ERROR(kiln_tir_builder_finish(&f->b));
  const int64_t one[] = {1};
  const kiln_tir_buffer_t *R = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_buffer_create_const(&f->arena, "R", value->dtype.base, 1, one, &R));
  const kiln_tir_expr_t *z[] = {kiln_tir_b_i32(&f->b, 0)};
  const kiln_tir_prim_func_t *func =
      kiln_tir_b_func(&f->b, "expr", 1, &R, kiln_tir_b_store(&f->b, R, value, 1, z));
  KILN_RETURN_IF_ERROR(kiln_tir_builder_finish(&f->b));
  kiln_tensor_t *t = make_tensor(value->dtype.base, 1, one, NULL);
  kiln_status_t status = kiln_tir_interp_run(kiln_allocator_system(), func, 1, &t);
  if (!status) {
    memcpy(out, kiln_tensor_data(t), size);
  }
  kiln_tensor_release(t);
  return status;
}

static int32_t eval_i32(fixture_t *f, const kiln_tir_expr_t *value) {
  int32_t out = 0;
  KILN_ASSERT_OK(eval_into(f, value, &out, sizeof(out)));
  return out;
}

static float eval_f32(fixture_t *f, const kiln_tir_expr_t *value) {
  float out = 0;
  KILN_ASSERT_OK(eval_into(f, value, &out, sizeof(out)));
  return out;
}

static void test_integer_semantics(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, imm(b, -7), imm(b, 2))),
                   -4);
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, imm(b, -7), imm(b, 2))),
                   1);
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, imm(b, 7), imm(b, -2))),
                   -4);
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, imm(b, 7), imm(b, -2))),
                   -1);
  assert_int_equal(
      eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, imm(b, INT32_MIN), imm(b, -1))),
      INT32_MIN); /* wraps */
  assert_int_equal(eval_i32(&f, kiln_tir_b_add(b, imm(b, INT32_MAX), imm(b, 1))), INT32_MIN);
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, imm(b, -3), imm(b, 2))), -3);
  const kiln_tir_var_t *t = kiln_tir_b_var(b, "t", KILN_DTYPE_INT32);
  assert_int_equal(
      eval_i32(
          &f, kiln_tir_b_let(b, t, imm(b, 6), kiln_tir_b_mul(b, kiln_tir_b_v(t), kiln_tir_b_v(t)))),
      36);
  const kiln_tir_expr_t *c = kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, imm(b, 3), imm(b, 4));
  assert_int_equal(eval_i32(&f, kiln_tir_b_select(b, kiln_tir_b_not(b, c), imm(b, 10), imm(b, 20))),
                   10);
  int8_t small = 0;
  KILN_ASSERT_OK(
      eval_into(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT8), imm(b, 200)), &small, 1));
  assert_int_equal(small, -56);
  assert_int_equal(
      eval_i32(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), kiln_tir_b_f32(b, -2.75))),
      -2);
  int64_t wide = 0;
  const kiln_tir_expr_t *big = kiln_tir_b_int(b, KILN_DTYPE_INT64, INT64_C(3000000000));
  KILN_ASSERT_OK(eval_into(&f, kiln_tir_b_mul(b, big, kiln_tir_b_int(b, KILN_DTYPE_INT64, -3)),
                           &wide, sizeof(wide)));
  assert_int_equal(wide, INT64_C(-9000000000));
  uint8_t flag = 7;
  const kiln_tir_expr_t *no = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, big, big);
  const kiln_tir_expr_t *yes = kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, imm(b, 1), imm(b, 2));
  KILN_ASSERT_OK(eval_into(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, no, yes), &flag, 1));
  assert_int_equal(flag, 1);
  KILN_ASSERT_OK(eval_into(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, no, yes), &flag, 1));
  assert_int_equal(flag, 0);
  /* Total, as base/scalar_ops.h defines them on every path: a zero divisor
   * gives 0, a float-to-int cast saturates and NaN gives 0. */
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, imm(b, 5), imm(b, 0))),
                   0);
  assert_int_equal(eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, imm(b, 5), imm(b, 0))),
                   0);
  assert_int_equal(
      eval_i32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, imm(b, INT32_MIN), imm(b, -1))),
      INT32_MIN);
  assert_int_equal(
      eval_i32(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), kiln_tir_b_f32(b, 3e9))),
      INT32_MAX);
  assert_int_equal(eval_i32(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32),
                                                kiln_tir_b_f32(b, (double)NAN))),
                   0);
  assert_int_equal(eval_i32(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32),
                                                kiln_tir_b_f32(b, -(double)INFINITY))),
                   INT32_MIN);
  fixture_done(&f);
}

/* R[T.ramp(0, 1, 8)] = T.Select(ramp < T.broadcast(3, 8), ramp * ramp, T.broadcast(-1, 8)) */
static void test_vector_select(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const int64_t shape[] = {8};
  const kiln_tir_buffer_t *R = kiln_tir_b_buffer(b, "R", KILN_DTYPE_INT32, 1, shape);
  const kiln_tir_expr_t *ramp = kiln_tir_b_ramp(b, imm(b, 0), imm(b, 1), 8);
  const kiln_tir_expr_t *value = kiln_tir_b_select(
      b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, ramp, kiln_tir_b_broadcast(b, imm(b, 3), 8)),
      kiln_tir_b_mul(b, ramp, ramp), kiln_tir_b_broadcast(b, imm(b, -1), 8));
  const kiln_tir_expr_t *idx[] = {ramp};
  const kiln_tir_prim_func_t *func =
      kiln_tir_b_func(b, "vselect", 1, &R, kiln_tir_b_store(b, R, value, 1, idx));
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  kiln_tensor_t *t = make_tensor(KILN_DTYPE_INT32, 1, shape, NULL);
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 1, &t));
  const int32_t expected[] = {0, 1, 4, -1, -1, -1, -1, -1};
  assert_memory_equal(kiln_tensor_data(t), expected, sizeof(expected));
  kiln_tensor_release(t);
  fixture_done(&f);
}

static void test_float_semantics(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  const kiln_tir_expr_t *x = kiln_tir_b_f32(b, 0.1), *y = kiln_tir_b_f32(b, 0.2);
  assert_true(eval_f32(&f, kiln_tir_b_add(b, x, y)) == 0.1f + 0.2f);
  assert_true(eval_f32(&f, kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, x, kiln_tir_b_f32(b, 3.0))) ==
              0.1f / 3.0f);
  const kiln_tir_expr_t *args[] = {kiln_tir_b_f32(b, 0.7)};
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_EXP, 1, args)) == expf(0.7f));
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_ERF, 1, args)) == erff(0.7f));
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SIGMOID, 1, args)) ==
              1.0f / (1.0f + expf(-0.7f)));
  const kiln_tir_expr_t *half[] = {kiln_tir_b_f32(b, 2.5)};
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_ROUND, 1, half)) == 2.0f);
  const kiln_tir_expr_t *fma_args[] = {x, y, kiln_tir_b_f32(b, 1.0)};
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_FMA, 3, fma_args)) ==
              fmaf(0.1f, 0.2f, 1.0f));
  assert_true(eval_f32(&f, kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32),
                                           imm(b, 16777217))) == 16777216.0f);
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_ATANH, 1, args)) == atanhf(0.7f));
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_EXPM1, 1, args)) == expm1f(0.7f));
  const kiln_tir_expr_t *fmod_args[] = {kiln_tir_b_f32(b, -7.5), kiln_tir_b_f32(b, 2.0)};
  assert_true(eval_f32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_FMOD, 2, fmod_args)) == -1.5f);
  /* Shifts see the bits as unsigned; shifting by the width or more gives 0. */
  const kiln_tir_expr_t *shl[] = {imm(b, 3), imm(b, 30)};
  assert_int_equal(eval_i32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SHIFT_LEFT, 2, shl)),
                   INT32_MIN + (1 << 30));
  const kiln_tir_expr_t *shr[] = {imm(b, -1), imm(b, 28)};
  assert_int_equal(eval_i32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SHIFT_RIGHT, 2, shr)), 15);
  const kiln_tir_expr_t *wide[] = {imm(b, 1), imm(b, 32)};
  assert_int_equal(eval_i32(&f, kiln_tir_b_call(b, KILN_TIR_INTRINSIC_SHIFT_LEFT, 2, wide)), 0);

  double d = 0;
  KILN_ASSERT_OK(
      eval_into(&f,
                kiln_tir_b_bin(b, KILN_TIR_EXPR_ADD, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, 0.1),
                               kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, 0.2)),
                &d, sizeof(d)));
  assert_true(d == 0.1 + 0.2);
  /* float16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10, which rounds to
   * even (1.0, bits 0x3c00); stored as its bits. */
  uint16_t h = 0;
  KILN_ASSERT_OK(
      eval_into(&f,
                kiln_tir_b_bin(b, KILN_TIR_EXPR_ADD, kiln_tir_b_float(b, KILN_DTYPE_FLOAT16, 1.0),
                               kiln_tir_b_float(b, KILN_DTYPE_FLOAT16, 0.00048828125)),
                &h, sizeof(h)));
  assert_int_equal(h, 0x3c00);
  fixture_done(&f);
}

static void test_assert_flat_index_and_symbolic_shape(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  /* def f(A: (n,) int32): assert n > 2; for i in n: A[i] = i * i; A[n] (flat) = 0 */
  const kiln_tir_var_t *n = kiln_tir_b_var(b, "n", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *shape[] = {kiln_tir_b_v(n)};
  const kiln_tir_buffer_t *A = NULL;
  KILN_ASSERT_OK(kiln_tir_buffer_create(&f.arena, "A", KILN_DTYPE_INT32, 1, shape, NULL, NULL, &A));
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *idx[] = {kiln_tir_b_v(i)};
  const kiln_tir_stmt_t *fill = kiln_tir_b_for(
      b, i, imm(b, 0), kiln_tir_b_v(n), KILN_TIR_FOR_SERIAL,
      kiln_tir_b_store(b, A, kiln_tir_b_mul(b, kiln_tir_b_v(i), kiln_tir_b_v(i)), 1, idx));
  const kiln_tir_stmt_t *body = kiln_tir_b_assert(
      b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, kiln_tir_b_v(n), imm(b, 2)), "n must exceed 2", fill);
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(b, "squares", 1, &A, body);
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  const int64_t five[] = {5}, two[] = {2};
  kiln_tensor_t *t = make_tensor(KILN_DTYPE_INT32, 1, five, NULL);
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 1, &t));
  const int32_t expected[] = {0, 1, 4, 9, 16};
  assert_memory_equal(kiln_tensor_data(t), expected, sizeof(expected));
  kiln_tensor_release(t);
  t = make_tensor(KILN_DTYPE_INT32, 1, two, NULL);
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), func, 1, &t), INVALID_ARGUMENT,
                     "squares: assertion failed: n must exceed 2");
  kiln_tensor_release(t);

  /* A 2-d buffer stored through one flat index past its end. */
  const int64_t s23[] = {2, 3};
  const kiln_tir_buffer_t *B = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 2, s23);
  const kiln_tir_expr_t *flat[] = {imm(b, 6)};
  const kiln_tir_prim_func_t *oob =
      kiln_tir_b_func(b, "oob", 1, &B, kiln_tir_b_store(b, B, kiln_tir_b_f32(b, 1), 1, flat));
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  t = make_tensor(KILN_DTYPE_FLOAT32, 2, s23, NULL);
  KILN_ASSERT_STATUS(kiln_tir_interp_run(kiln_allocator_system(), oob, 1, &t), OUT_OF_RANGE,
                     "oob: BufferStore: flat index 6 of buffer B is outside [0, 6)");
  kiln_tensor_release(t);
  fixture_done(&f);
}

typedef struct interp_context_t {
  const kiln_tir_prim_func_t *func;
} interp_context_t;

static kiln_status_t interp_scenario(kiln_allocator_t allocator, void *context) {
  const interp_context_t *c = context;
  enum { M = 2, N = 3, K = 4 };
  const int64_t sa[] = {M, K}, sb[] = {K, N}, sc[] = {M, N};
  kiln_tensor_t *args[3] = {NULL, NULL, NULL};
  kiln_status_t status = kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 2, sa, &args[0]);
  if (!status) {
    status = kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 2, sb, &args[1]);
  }
  if (!status) {
    status = kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 2, sc, &args[2]);
  }
  if (!status) {
    ((float *)kiln_tensor_data(args[0]))[0] = 2.0f;
    ((float *)kiln_tensor_data(args[1]))[0] = 3.0f;
    status = kiln_tir_interp_run(allocator, c->func, 3, args);
  }
  if (!status && ((float *)kiln_tensor_data(args[2]))[0] != 6.0f) {
    status =
        KILN_STATUS(INTERNAL, "matmul gave %g", (double)((float *)kiln_tensor_data(args[2]))[0]);
  }
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(args[i]);
  }
  return status;
}

static void test_interp_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  interp_context_t context = {build_matmul(&f.b, 2, 3, 4)};
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  assert_true(kiln_test_sweep_allocation_failures(interp_scenario, &context) > 4);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vector_add),
      cmocka_unit_test(test_matmul_local_accumulator),
      cmocka_unit_test(test_allocate_init),
      cmocka_unit_test(test_guarded_reduction_and_out_of_bounds),
      cmocka_unit_test(test_integer_semantics),
      cmocka_unit_test(test_vector_select),
      cmocka_unit_test(test_float_semantics),
      cmocka_unit_test(test_assert_flat_index_and_symbolic_shape),
      cmocka_unit_test(test_interp_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
