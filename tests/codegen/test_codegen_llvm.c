/*
 * Tests of the LLVM backend (codegen/llvm/codegen_llvm.h): the printed IR
 * of a parallel loop (argument checks with unlikely branch weights, the
 * lambda, its closure struct, the launch), the loop run through the object
 * file and the JIT with 1, 2 and 3 threads under both chunkings, every
 * argument check's message (the C backend's), the fast exp/erf/tanh/sigmoid
 * against libm on vectors and scalars (edge values included) with object
 * and JIT giving the same bits, libm's float32 functions never folded by
 * LLVM (a constant's and a loaded value's call give libm's bits, fuzzer seed
 * 1000691), -mcpu/-mattr honoured and bad options
 * refused, strided vector loads as one span load and a shuffle, the
 * conv2d NCHWc kernel's assembly using 512-bit FMAs on an
 * AVX-512 host, and kiln's allocations swept (LLVM's are not kiln's). Every
 * operator goes through the backend in tests/op (check_compute).
 *
 * `test_codegen_llvm --compile-time` instead reports the compile time of
 * one conv2d NCHWc kernel and of one module of 20 conv2d/dense/pool/
 * elementwise kernels of resnet-18's shapes (median of 5; docs/codegen-llvm.md).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tir/tir_fixture.h"
#include "codegen/target.h"
#include "kiln/module.h"
#include "kiln/parallel.h"
#include "kiln_op_test.h"
#include "op/compute.h"
#include "op/op_list.h"
#include "tir/transform.h"

#ifdef KILN_HAVE_LLVM

#include "codegen/llvm/codegen_llvm.h"

/* B[i] = A[i] * 2 + 1 for i in parallel(n), float32 buffers of n. */
static const kiln_tir_prim_func_t *parallel_func(fixture_t *f, int64_t n) {
  kiln_tir_builder_t *b = &f->b;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *index = kiln_tir_b_v(i);
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(b,
                     kiln_tir_b_mul(b, kiln_tir_b_load(b, a, 1, &index),
                                    kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 2)),
                     kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 1));
  const kiln_tir_stmt_t *loop = kiln_tir_b_for(
      b, i, kiln_tir_b_int(b, KILN_DTYPE_INT32, 0), kiln_tir_b_int(b, KILN_DTYPE_INT32, n),
      KILN_TIR_FOR_PARALLEL, kiln_tir_b_store(b, out, value, 1, &index));
  const kiln_tir_buffer_t *params[] = {a, out};
  return kiln_tir_b_func(b, "scale", 2, params, loop);
}

static void assert_contains(const char *text, const char *part) {
  if (!text || !strstr(text, part)) {
    fail_msg("expected to find:\n%s\nin:\n%.4000s", part, text ? text : "(null)");
  }
}

static void test_printed_ir(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 10);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "llvm", &func, 1, &module));
  const char *ll = kiln_runtime_module_source(module, "ll");
  /* The packed signature and the argument-count check, failure unlikely. */
  assert_contains(ll, "define i32 @scale(%kiln.value* ");
  assert_contains(ll, "%num_args, 2\n  br i1 ");
  assert_contains(ll, "!prof !");
  assert_contains(ll, "!{!\"branch_weights\", i32 1048576, i32 1}");
  assert_contains(ll, "scale: expected 2 arguments, got %d");
  /* The closure, the lambda and the launch. */
  assert_contains(ll, "%__kiln_closure_0 = type { i8*, i8* }");
  assert_contains(ll, "define internal i32 @__kiln_parallel_lambda_0(i32 ");
  assert_contains(ll, "load i32 (i32 (i32, %kiln.penv*, i8*)*, i8*, i32)*, i32 (i32 (i32, "
                      "%kiln.penv*, i8*)*, i8*, i32)** @__kiln_parallel_launch");
  assert_contains(ll, "(i32 (i32, %kiln.penv*, i8*)* nonnull @__kiln_parallel_lambda_0, i8* ");
  /* The assembly is kept too. */
  assert_contains(kiln_runtime_module_source(module, "asm"), "scale:");
  assert_null(kiln_runtime_module_source(module, "c"));
  kiln_runtime_module_release(module);
  /* -noasm keeps the IR only. */
  KILN_ASSERT_OK(
      kiln_codegen_build(kiln_allocator_system(), "llvm -jit -noasm", &func, 1, &module));
  assert_contains(kiln_runtime_module_source(module, "ll"), "@__kiln_parallel_lambda_0");
  assert_null(kiln_runtime_module_source(module, "asm"));
  kiln_runtime_module_release(module);
  fixture_done(&f);
}

static kiln_tensor_t *vector_tensor(int64_t n, float start) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, &n, &t));
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = start + (float)i;
  }
  return t;
}

static void run_scale(const char *target) {
  fixture_t f;
  fixture_init(&f);
  const int64_t n = 37;
  const kiln_tir_prim_func_t *func = parallel_func(&f, n);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, &func, 1, &module));
  kiln_tensor_t *args[] = {vector_tensor(n, -3), vector_tensor(n, 1000)};
  int before = kiln_parallel_get_num_threads();
  for (int threads = 1; threads <= 3; ++threads) {
    KILN_ASSERT_OK(kiln_parallel_set_num_threads(threads));
    memset(kiln_tensor_data(args[1]), 0x7f, kiln_tensor_byte_size(args[1]));
    KILN_ASSERT_OK(kiln_runtime_module_call(module, "scale", 2, args));
    const float *out = kiln_tensor_data(args[1]);
    for (int64_t i = 0; i < n; ++i) {
      if (out[i] != (float)(-3 + i) * 2 + 1) {
        fail_msg("%s, %d threads: element %lld is %g", target, threads, (long long)i, out[i]);
      }
    }
  }
  KILN_ASSERT_OK(kiln_parallel_set_num_threads(before));
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
  kiln_runtime_module_release(module);
  fixture_done(&f);
}

static void test_parallel_loop_runs_with_1_2_3_threads(void **state) {
  (void)state;
  run_scale("llvm");
  run_scale("llvm -jit");
  run_scale("llvm -opt=0 chunk=stride");
  run_scale("llvm -jit -opt=1 chunk=stride");
}

/* Calls `fn` with the packed arguments and returns the last error. */
static const char *call_error(kiln_packed_fn fn, int num_args, const kiln_value_t *values,
                              const int *codes) {
  kiln_backend_set_last_error("");
  assert_int_equal(fn(values, codes, num_args, NULL, NULL, NULL), -1);
  return kiln_get_last_error();
}

static void check_arguments(const char *target) {
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 10);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, &func, 1, &module));
  kiln_packed_fn fn = NULL;
  KILN_ASSERT_OK(kiln_runtime_module_get_function(module, "scale", &fn));
  kiln_tensor_t *a = vector_tensor(10, 0), *b = vector_tensor(10, 0);
  DLTensor da = *kiln_tensor_dl(a), db = *kiln_tensor_dl(b);
  kiln_value_t values[2];
  values[0].v_handle = &da;
  values[1].v_handle = &db;
  int codes[2] = {KILN_ARG_DLTENSOR, KILN_ARG_DLTENSOR};
  assert_int_equal(fn(values, codes, 2, NULL, NULL, NULL), 0);
  assert_string_equal(call_error(fn, 1, values, codes), "scale: expected 2 arguments, got 1");
  codes[1] = KILN_ARG_INT;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has type code 0, expected a DLTensor (7)");
  codes[1] = KILN_ARG_DLTENSOR;
  db.device.device_type = kDLCUDA;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 is on device type 2, expected the CPU (1)");
  db.device.device_type = kDLCPU;
  db.dtype.bits = 64;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has dtype float64, expected float32");
  db.dtype.bits = 32;
  db.dtype.lanes = 4;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has dtype float32x4, expected float32");
  db.dtype.lanes = 1;
  db.dtype.code = 9;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has dtype code32, expected float32");
  db.dtype.code = kDLFloat;
  int64_t shape2[2] = {2, 5};
  db.ndim = 2;
  db.shape = shape2;
  assert_string_equal(call_error(fn, 2, values, codes), "scale: argument 1 has rank 2, expected 1");
  int64_t shape1 = 9;
  db.ndim = 1;
  db.shape = &shape1;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 has shape (9,), expected (10,)");
  db.shape = kiln_tensor_dl(b)->shape;
  int64_t stride = 2;
  db.strides = &stride;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 is not compact (its strides are not row-major)");
  stride = 1;
  assert_int_equal(fn(values, codes, 2, NULL, NULL, NULL), 0);
  db.strides = NULL;
  db.byte_offset = 2;
  assert_string_equal(call_error(fn, 2, values, codes),
                      "scale: argument 1 is not aligned to 4 bytes");
  db.byte_offset = 0;
  values[0].v_handle = NULL;
  assert_string_equal(call_error(fn, 2, values, codes), "scale: argument 0 is null");
  kiln_tensor_t *wrong[] = {a};
  KILN_ASSERT_STATUS(kiln_runtime_module_call(module, "scale", 1, wrong), INTERNAL,
                     "scale: expected 2 arguments, got 1");
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  kiln_runtime_module_release(module);
  fixture_done(&f);
}

/* B[ramp(8 * i, 1, 8)] = A[ramp(16 * i + 1, 2, 8)] + A[ramp(24 * i, 3, 8)]
 * for i < 3, over A of 70 elements: the last lane of the step-3 ramp is
 * A's last element, so a load past the lanes' span would show. */
static const kiln_tir_prim_func_t *strided_func(fixture_t *f) {
  kiln_tir_builder_t *b = &f->b;
  const int64_t n = 70, m = 24;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 1, &m);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *iv = kiln_tir_b_v(i);
  const kiln_tir_expr_t *two = kiln_tir_b_ramp(
      b, kiln_tir_b_add(b, kiln_tir_b_mul(b, iv, kiln_tir_b_i32(b, 16)), kiln_tir_b_i32(b, 1)),
      kiln_tir_b_i32(b, 2), 8);
  const kiln_tir_expr_t *three =
      kiln_tir_b_ramp(b, kiln_tir_b_mul(b, iv, kiln_tir_b_i32(b, 24)), kiln_tir_b_i32(b, 3), 8);
  const kiln_tir_expr_t *dst =
      kiln_tir_b_ramp(b, kiln_tir_b_mul(b, iv, kiln_tir_b_i32(b, 8)), kiln_tir_b_i32(b, 1), 8);
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(b, kiln_tir_b_load(b, a, 1, &two), kiln_tir_b_load(b, a, 1, &three));
  const kiln_tir_stmt_t *loop =
      kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 3), KILN_TIR_FOR_SERIAL,
                     kiln_tir_b_store(b, out, value, 1, &dst));
  const kiln_tir_buffer_t *params[] = {a, out};
  return kiln_tir_b_func(b, "strided", 2, params, loop);
}

/* Builds `make`'s function `name` (B[ramp(8 * i, 1, 8)] = ... over A of 70
 * and B of 24) for the object and the JIT, checks that its LLVM IR holds
 * each of `present` and no per-lane insertelement, runs it on A = 0, 1, ...
 * and checks B[8 * i + l] against `expected(i, l)`. */
static void check_vector_loads(const kiln_tir_prim_func_t *(*make)(fixture_t *), const char *name,
                               int num_present, const char *const *present,
                               float (*expected)(int i, int l)) {
  const char *const targets[] = {"llvm", "llvm -jit"};
  for (int t = 0; t < 2; ++t) {
    fixture_t f;
    fixture_init(&f);
    const kiln_tir_prim_func_t *func = make(&f);
    kiln_runtime_module_t *module = NULL;
    KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), targets[t], &func, 1, &module));
    const char *ll = kiln_runtime_module_source(module, "ll");
    for (int p = 0; ll && p < num_present; ++p) {
      assert_contains(ll, present[p]);
    }
    assert_null(ll ? strstr(ll, "insertelement <8 x float>") : NULL);
    kiln_tensor_t *args[] = {vector_tensor(70, 0), vector_tensor(24, 1000)};
    KILN_ASSERT_OK(kiln_runtime_module_call(module, name, 2, args));
    const float *out = kiln_tensor_data(args[1]);
    for (int i = 0; i < 3; ++i) {
      for (int l = 0; l < 8; ++l) {
        assert_float_equal(out[8 * i + l], expected(i, l), 0.0);
      }
    }
    kiln_tensor_release(args[0]);
    kiln_tensor_release(args[1]);
    kiln_runtime_module_release(module);
    fixture_done(&f);
  }
}

static float strided_expected(int i, int l) {
  return (float)(16 * i + 1 + 2 * l + 24 * i + 3 * l);
}

/* Loads of a ramp with step 2 and 3 are one load of the lanes' span and a
 * shuffle (no per-lane insertelement), through the object and the JIT. */
static void test_strided_loads(void **state) {
  (void)state;
  const char *const present[] = {"load <15 x float>", "load <22 x float>",
                                 "shufflevector <22 x float>"};
  check_vector_loads(strided_func, "strided", 3, present, strided_expected);
}

/* B[ramp(8 * i, 1, 8)] = A[ramp(i, 9, 8)] for i < 3, over A of 70: a step
 * too long for one span load is a gather. */
static const kiln_tir_prim_func_t *gather_func(fixture_t *f) {
  kiln_tir_builder_t *b = &f->b;
  const int64_t n = 70, m = 24;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 1, &m);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *iv = kiln_tir_b_v(i);
  const kiln_tir_expr_t *src = kiln_tir_b_ramp(b, iv, kiln_tir_b_i32(b, 9), 8);
  const kiln_tir_expr_t *dst =
      kiln_tir_b_ramp(b, kiln_tir_b_mul(b, iv, kiln_tir_b_i32(b, 8)), kiln_tir_b_i32(b, 1), 8);
  const kiln_tir_stmt_t *loop =
      kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 3), KILN_TIR_FOR_SERIAL,
                     kiln_tir_b_store(b, out, kiln_tir_b_load(b, a, 1, &src), 1, &dst));
  const kiln_tir_buffer_t *params[] = {a, out};
  return kiln_tir_b_func(b, "gather", 2, params, loop);
}

static float gather_expected(int i, int l) {
  return (float)(i + 9 * l);
}

/* A load whose lanes follow no short ramp is llvm.masked.gather (no
 * per-lane insertelement), through the object and the JIT. */
static void test_gather_loads(void **state) {
  (void)state;
  const char *const present[] = {"@llvm.masked.gather.v8f32"};
  check_vector_loads(gather_func, "gather", 1, present, gather_expected);
}

static void test_argument_checks(void **state) {
  (void)state;
  check_arguments("llvm");
  check_arguments("llvm -jit");
}

/* Out[i] = op(In[i]) for 64 floats: 16-lane vectors (ramp loads) when
 * `vector`, else a scalar loop. */
static const kiln_tir_prim_func_t *math_func(fixture_t *f, kiln_tir_intrinsic_t op, int vector) {
  kiln_tir_builder_t *b = &f->b;
  int64_t n = 64;
  const kiln_tir_buffer_t *in = kiln_tir_b_buffer(b, "In", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "Out", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  int lanes = vector ? 16 : 1;
  const kiln_tir_expr_t *index =
      vector ? kiln_tir_b_ramp(b, kiln_tir_b_mul(b, kiln_tir_b_v(i), kiln_tir_b_i32(b, 16)),
                               kiln_tir_b_i32(b, 1), 16)
             : kiln_tir_b_v(i);
  const kiln_tir_expr_t *x = kiln_tir_b_load(b, in, 1, &index);
  const kiln_tir_expr_t *value = kiln_tir_b_call(b, op, 1, &x);
  const kiln_tir_stmt_t *loop =
      kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, n / lanes), KILN_TIR_FOR_SERIAL,
                     kiln_tir_b_store(b, out, value, 1, &index));
  const kiln_tir_buffer_t *params[] = {in, out};
  return kiln_tir_b_func(b, vector ? "math_v" : "math_s", 2, params, loop);
}

static double reference(kiln_tir_intrinsic_t op, float x) {
  double v = (double)x;
  return op == KILN_TIR_INTRINSIC_EXP    ? exp(v)
         : op == KILN_TIR_INTRINSIC_ERF  ? erf(v)
         : op == KILN_TIR_INTRINSIC_TANH ? tanh(v)
                                         : 1.0 / (1.0 + exp(-v));
}

/* 64 inputs: edge values, then a sweep of the interesting range. */
static void fill_inputs(kiln_tensor_t *t, kiln_tir_intrinsic_t op) {
  static const float edges[] = {0.0f,   -0.0f, INFINITY, -INFINITY, NAN,    88.7f,   -88.7f, 1e-30f,
                                -1e-7f, 20.0f, -20.0f,   87.0f,     -103.f, -110.0f, 3.9f,   -5.0f};
  float *data = kiln_tensor_data(t);
  for (int i = 0; i < 64; ++i) {
    double range = op == KILN_TIR_INTRINSIC_EXP ? 80.0 : 8.0;
    data[i] = i < 16 ? edges[i] : (float)(-range + 2.0 * range * (i - 16) / 47.0);
  }
}

static void check_math(kiln_tir_intrinsic_t op) {
  const char *targets[] = {"llvm -noasm", "llvm -jit -noasm"};
  int64_t n = 64;
  kiln_tensor_t *in = vector_tensor(n, 0), *outs[2][2];
  fill_inputs(in, op);
  for (int vector = 0; vector < 2; ++vector) {
    fixture_t f;
    fixture_init(&f);
    const kiln_tir_prim_func_t *func = math_func(&f, op, vector);
    for (int t = 0; t < 2; ++t) {
      kiln_runtime_module_t *module = NULL;
      KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), targets[t], &func, 1, &module));
      outs[vector][t] = vector_tensor(n, 0);
      kiln_tensor_t *args[] = {in, outs[vector][t]};
      KILN_ASSERT_OK(kiln_runtime_module_call(module, func->name, 2, args));
      if (vector && t == 0) { /* no libm call in the vector loop */
        const char *ll = kiln_runtime_module_source(module, "ll");
        const char *name = kiln_tir_intrinsic_name(op);
        char call[32];
        snprintf(call, sizeof(call), "@%sf(", name);
        assert_null(strstr(ll, call));
      }
      kiln_runtime_module_release(module);
    }
    fixture_done(&f);
    const float *x = kiln_tensor_data(in);
    for (int i = 0; i < n; ++i) {
      float got = ((const float *)kiln_tensor_data(outs[vector][0]))[i];
      float jit = ((const float *)kiln_tensor_data(outs[vector][1]))[i];
      double want = reference(op, x[i]);
      double error = fabs(got - want) / fmax(fabs(want), 1e-37);
      int ok = isnan(want) ? isnan(got) : isinf(want) ? got == want : error <= 1e-6;
      if (!ok || memcmp(&got, &jit, sizeof(got)) != 0) {
        fail_msg("%s(%.9g) (%s) is %.9g (JIT %.9g), libm says %.9g (relative error %g)",
                 kiln_tir_intrinsic_name(op), x[i], vector ? "16 lanes" : "scalar", got, jit, want,
                 error);
      }
    }
    kiln_tensor_release(outs[vector][0]);
    kiln_tensor_release(outs[vector][1]);
  }
  kiln_tensor_release(in);
}

static void test_fast_math(void **state) {
  (void)state;
  check_math(KILN_TIR_INTRINSIC_EXP);
  check_math(KILN_TIR_INTRINSIC_ERF);
  check_math(KILN_TIR_INTRINSIC_TANH);
  check_math(KILN_TIR_INTRINSIC_SIGMOID);
}

/* The float32 functions the backend calls libm for, with libm's float
 * and double functions and a range of their domain. */
typedef struct libm_case_t {
  kiln_tir_intrinsic_t op;
  float (*f32)(float);
  double (*f64)(double);
  float lo;
} libm_case_t;

/* An x >= `lo` where libm's float function is not the double one rounded
 * (what LLVM's constant folder computes), else lo. */
static float folding_differs_at(const libm_case_t *c) {
  float x = c->lo;
  for (int i = 0; i < 200000; ++i, x = nextafterf(x, INFINITY)) {
    volatile float v = x;
    float f = c->f32(v), d = (float)c->f64((double)v);
    if (memcmp(&f, &d, sizeof(f)) != 0 && !(isnan(f) && isnan(d))) {
      return x;
    }
  }
  return c->lo;
}

static float powf_of(float x) {
  return powf(x, 1.3f);
}
static double pow_of(double x) {
  return pow(x, (double)1.3f);
}

/* Out[0] = op(x) of the constant x, Out[1] = op(In[0]) with In[0] = x
 * (pow: second argument 1.3, constant and In[1]): both must be libm's
 * float function's bits. Before libm calls were marked nobuiltin, LLVM
 * folded Out[0] with the double function (an ulp off for some x), so one
 * expression had two values in a kernel: max(atan(clip(x))) said NaN when
 * its `x != x` check compared a folded copy with a called one (fuzzer seed
 * 1000691). */
static void check_libm_not_folded(const libm_case_t *c, const char *target) {
  float x = folding_differs_at(c);
  fixture_t f;
  fixture_init(&f);
  kiln_tir_builder_t *b = &f.b;
  int64_t n = 2;
  const kiln_tir_buffer_t *in = kiln_tir_b_buffer(b, "In", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "Out", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0), *one = kiln_tir_b_i32(b, 1);
  int arity = c->op == KILN_TIR_INTRINSIC_POW ? 2 : 1;
  const kiln_tir_expr_t *constants[] = {kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, x),
                                        kiln_tir_b_float(b, KILN_DTYPE_FLOAT32, 1.3f)};
  const kiln_tir_expr_t *loads[] = {kiln_tir_b_load(b, in, 1, &zero),
                                    kiln_tir_b_load(b, in, 1, &one)};
  const kiln_tir_stmt_t *stores[] = {
      kiln_tir_b_store(b, out, kiln_tir_b_call(b, c->op, arity, constants), 1, &zero),
      kiln_tir_b_store(b, out, kiln_tir_b_call(b, c->op, arity, loads), 1, &one)};
  const kiln_tir_buffer_t *params[] = {in, out};
  const kiln_tir_prim_func_t *func =
      kiln_tir_b_func(b, "libm_once", 2, params, kiln_tir_b_seq(b, 2, stores));
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, &func, 1, &module));
  kiln_tensor_t *args[] = {vector_tensor(n, 0), vector_tensor(n, 0)};
  float *input = kiln_tensor_data(args[0]);
  input[0] = x;
  input[1] = 1.3f;
  KILN_ASSERT_OK(kiln_runtime_module_call(module, func->name, 2, args));
  const float *got = kiln_tensor_data(args[1]);
  volatile float v = x;
  float want = c->f32(v);
  if (memcmp(&got[0], &want, sizeof(want)) != 0 || memcmp(&got[1], &want, sizeof(want)) != 0) {
    fail_msg("%s: %s(%.9g) is %.9g of a constant, %.9g of a loaded value; libm says %.9g", target,
             kiln_tir_intrinsic_name(c->op), x, got[0], got[1], want);
  }
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
  kiln_runtime_module_release(module);
  fixture_done(&f);
}

static void test_libm_calls_not_folded(void **state) {
  (void)state;
  static const libm_case_t cases[] = {
      {KILN_TIR_INTRINSIC_ATAN, atanf, atan, -1.2f},
      {KILN_TIR_INTRINSIC_SIN, sinf, sin, -10},
      {KILN_TIR_INTRINSIC_COS, cosf, cos, -10},
      {KILN_TIR_INTRINSIC_LOG, logf, log, 1e-3f},
      {KILN_TIR_INTRINSIC_POW, powf_of, pow_of, 0.1f},
      {KILN_TIR_INTRINSIC_TAN, tanf, tan, -1.5f},
      {KILN_TIR_INTRINSIC_ASIN, asinf, asin, -1},
      {KILN_TIR_INTRINSIC_ACOS, acosf, acos, -1},
      {KILN_TIR_INTRINSIC_SINH, sinhf, sinh, -10},
      {KILN_TIR_INTRINSIC_COSH, coshf, cosh, -10},
      {KILN_TIR_INTRINSIC_ASINH, asinhf, asinh, -10},
      {KILN_TIR_INTRINSIC_ACOSH, acoshf, acosh, 1},
      {KILN_TIR_INTRINSIC_ATANH, atanhf, atanh, -0.99f},
      {KILN_TIR_INTRINSIC_LOG1P, log1pf, log1p, -0.9f},
      {KILN_TIR_INTRINSIC_EXPM1, expm1f, expm1, -10},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    check_libm_not_folded(&cases[i], "llvm -noasm");
    check_libm_not_folded(&cases[i], "llvm -jit -noasm");
  }
}

/* The conv2d NCHWc kernel of test_compute_conv.c with 16-channel blocks. */
static const kiln_tir_prim_func_t *conv_nchwc(const char *name, int64_t c, int64_t hw, int64_t o,
                                              int64_t k) {
  const kiln_op_t *op = &kiln_op_conv2d_nchwc;
  char kernel_layout[32];
  snprintf(kernel_layout, sizeof(kernel_layout), "\"OIHW16i16o\"");
  const void *attrs =
      ATTRS(op, "padding", k == 3 ? "[1, 1, 1, 1]" : "[0, 0, 0, 0]", "data_layout", "\"NCHW16c\"",
            "kernel_layout", kernel_layout, "out_layout", "\"NCHW16c\"");
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 5, SHAPE(1, c / 16, hw, hw, 16)),
                                ttype(KILN_DTYPE_FLOAT32, 6, SHAPE(o / 16, c / 16, k, k, 16, 16))};
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *lowered = NULL, *passed = NULL;
  KILN_ASSERT_OK(kiln_op_lower(op, attrs, 2, types, &target, &kiln_op_test_arena, name, &lowered));
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&kiln_op_test_arena, lowered, &options, &passed));
  return passed;
}

static int host_has_avx512f(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[4096];
  int found = 0;
  while (f && !found && fgets(line, sizeof(line), f)) {
    found = strncmp(line, "flags", 5) == 0 && strstr(line, " avx512f");
  }
  if (f) {
    fclose(f);
  }
  return found;
}

static void test_conv2d_nchwc_uses_zmm_fma(void **state) {
  (void)state;
  if (!host_has_avx512f()) {
    KILN_SKIP("/proc/cpuinfo has no avx512f, so no 512-bit FMA to look for");
  }
  const kiln_tir_prim_func_t *func = conv_nchwc("conv", 32, 14, 32, 3);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "llvm", &func, 1, &module));
  const char *assembly = kiln_runtime_module_source(module, "asm");
  assert_non_null(strstr(assembly, "vfmadd"));
  assert_non_null(strstr(assembly, "ps\t"));
  int found = 0;
  for (const char *p = strstr(assembly, "vfmadd"); p && !found; p = strstr(p + 1, "vfmadd")) {
    const char *end = strchr(p, '\n');
    found = end && memmem(p, (size_t)(end - p), "%zmm", 4) && memmem(p, 12, "ps", 2);
  }
  if (!found) {
    fail_msg("no vfmadd...ps on %%zmm registers in the assembly of the NCHW16c conv2d");
  }
  kiln_runtime_module_release(module);
  /* A CPU without AVX-512 gets no zmm. */
  KILN_ASSERT_OK(
      kiln_codegen_build(kiln_allocator_system(), "llvm -mcpu=haswell", &func, 1, &module));
  assembly = kiln_runtime_module_source(module, "asm");
  assert_null(strstr(assembly, "%zmm"));
  assert_non_null(strstr(assembly, "%ymm"));
  kiln_runtime_module_release(module);
}

/* Whether a sign extension (movslq) sits between two multiply-adds at
 * most 40 lines apart: inside the register tile's loop. */
static int movslq_among_fmas(const char *assembly) {
  const char *last_fma = NULL;
  int lines_since = 0, pending = 0;
  for (const char *line = assembly; line && *line;
       line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    if (memmem(line, n, "vfmadd", 6)) {
      if (pending && last_fma && lines_since <= 40) {
        return 1;
      }
      last_fma = line, lines_since = 0, pending = 0;
    } else {
      ++lines_since;
      pending |= memmem(line, n, "movslq", 6) != NULL;
    }
  }
  return 0;
}

/* A conv2d NCHWc register tile addresses with i64 arithmetic of its loops'
 * counters, stepped by loop strength reduction: no sign extension between
 * its multiply-adds (int32 indices left one per access in the loop,
 * scalar work competing with the multiply-adds for their ports). */
static void test_indices_are_i64(void **state) {
  (void)state;
  const kiln_tir_prim_func_t *func = conv_nchwc("conv", 32, 14, 32, 3);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "llvm", &func, 1, &module));
  const char *assembly = kiln_runtime_module_source(module, "asm");
  if (!strstr(assembly, "vfmadd")) {
    kiln_runtime_module_release(module);
    KILN_SKIP("the host has no FMA instructions to look between");
  }
  if (movslq_among_fmas(assembly)) {
    fail_msg("a movslq between the conv's multiply-adds:\n%.4000s", strstr(assembly, "vfmadd"));
  }
  kiln_runtime_module_release(module);
}

static void test_target_options(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = math_func(&f, KILN_TIR_INTRINSIC_EXP, 1);
  kiln_runtime_module_t *module = NULL;
  /* -mattr=-avx removes AVX: 16 lanes in xmm registers only. */
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "llvm -mcpu=x86-64 -mattr=-avx", &func,
                                    1, &module));
  const char *assembly = kiln_runtime_module_source(module, "asm");
  assert_null(strstr(assembly, "%ymm"));
  assert_non_null(strstr(assembly, "%xmm"));
  kiln_runtime_module_release(module);
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), "llvm -mcpu=x86-64 -mattr=+avx2",
                                    &func, 1, &module));
  assert_non_null(strstr(kiln_runtime_module_source(module, "asm"), "%ymm"));
  kiln_runtime_module_release(module);
  KILN_ASSERT_STATUS(
      kiln_codegen_build(kiln_allocator_system(), "llvm -mcpu=pentium9", &func, 1, &module),
      INVALID_ARGUMENT, "'pentium9' is not a recognized processor for this target");
  assert_null(module);
  KILN_ASSERT_STATUS(
      kiln_codegen_build(kiln_allocator_system(), "llvm -jit -mattr=+warp9", &func, 1, &module),
      INVALID_ARGUMENT, "'+warp9' is not a recognized feature for this target");
  KILN_ASSERT_STATUS(
      kiln_codegen_build(kiln_allocator_system(), "llvm -O3", &func, 1, &module), INVALID_ARGUMENT,
      "llvm backend: unknown option \"-O3\" (known: -mcpu=NAME, -mattr=+a,-b, -opt=0..3");
  KILN_ASSERT_STATUS(kiln_codegen_build(kiln_allocator_system(), "llvm -opt=4", &func, 1, &module),
                     INVALID_ARGUMENT, "unknown option \"-opt=4\"");
  fixture_done(&f);
}

static void test_default_target_and_errors(void **state) {
  (void)state;
  assert_string_equal(kiln_codegen_default_target(), "llvm");
  fixture_t f;
  fixture_init(&f);
  int64_t n = 2;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(&f.b, "A", KILN_DTYPE_FLOAT16, 1, &n);
  const kiln_tir_stmt_t *body =
      kiln_tir_b_evaluate(&f.b, kiln_tir_b_int(&f.b, KILN_DTYPE_INT32, 0));
  const kiln_tir_prim_func_t *bad_name = kiln_tir_b_func(&f.b, "nn.relu", 1, &a, body);
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_codegen_build(kiln_allocator_system(), "llvm", &bad_name, 1, &module),
                     INVALID_ARGUMENT,
                     "llvm backend: function name \"nn.relu\" is not a C identifier");
  const kiln_tir_prim_func_t *twice[] = {parallel_func(&f, 4), parallel_func(&f, 5)};
  KILN_ASSERT_STATUS(kiln_codegen_build(kiln_allocator_system(), "llvm", twice, 2, &module),
                     INVALID_ARGUMENT, "llvm backend: two functions are named scale");
  assert_null(module);
  fixture_done(&f);
}

/* A build with `allocator`: kiln's allocations fail in turn. */
static kiln_status_t build_scenario(kiln_allocator_t allocator, void *context) {
  const kiln_tir_prim_func_t *func = context;
  kiln_runtime_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_codegen_llvm_build(allocator, &func, 1, "-jit -opt=0", &module));
  assert_non_null(kiln_runtime_module_source(module, "asm"));
  kiln_runtime_module_release(module);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = parallel_func(&f, 10);
  assert_true(kiln_test_sweep_allocation_failures(build_scenario, (void *)(uintptr_t)func) > 0);
  fixture_done(&f);
}

/* ---- --compile-time ---- */

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of 5 builds of `funcs` with `target`. */
static double median_build(const char *target, const kiln_tir_prim_func_t *const *funcs, int n) {
  double times[5];
  for (int r = 0; r < 5; ++r) {
    kiln_runtime_module_t *module = NULL;
    double start = seconds();
    KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, funcs, n, &module));
    times[r] = seconds() - start;
    kiln_runtime_module_release(module);
  }
  qsort(times, 5, sizeof(double), compare_doubles);
  return times[2];
}

static const kiln_tir_prim_func_t *lower(const kiln_op_t *op, const void *attrs, int num_inputs,
                                         const kiln_type_t *const *types, const char *name) {
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *lowered = NULL, *passed = NULL;
  KILN_ASSERT_OK(
      kiln_op_lower(op, attrs, num_inputs, types, &target, &kiln_op_test_arena, name, &lowered));
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&kiln_op_test_arena, lowered, &options, &passed));
  return passed;
}

/* resnet-18's distinct kernels at batch 1: its 12 distinct conv2d
 * (NCHW16c), max pool, global average pool, dense, add, relu, add + relu
 * shapes (the ops its graph lowers to). */
static int resnet18_kernels(const kiln_tir_prim_func_t **funcs) {
  static const int64_t convs[][4] = {
      /* c, hw, o, k: stem as 3x3 on 16 channels (NCHWc needs blocks) */
      {16, 112, 64, 3},  {64, 56, 64, 3},   {64, 56, 128, 3},  {128, 28, 128, 3},
      {64, 56, 128, 1},  {128, 28, 256, 3}, {256, 14, 256, 3}, {128, 28, 256, 1},
      {256, 14, 512, 3}, {512, 7, 512, 3},  {256, 14, 512, 1}, {64, 56, 64, 1}};
  int n = 0;
  char *name = NULL;
  for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); ++i) {
    KILN_ASSERT_OK(kiln_arena_allocate(&kiln_op_test_arena, 32, 1, (void **)&name));
    snprintf(name, 32, "conv%zu", i);
    funcs[n++] = conv_nchwc(name, convs[i][0], convs[i][1], convs[i][2], convs[i][3]);
  }
  const kiln_type_t *act = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 64, 56, 56));
  const kiln_type_t *act2[] = {act, act};
  funcs[n++] =
      lower(&kiln_op_max_pool2d,
            ATTRS(&kiln_op_max_pool2d, "pool_size", "[3, 3]", "strides", "[2, 2]", "padding",
                  "[1, 1, 1, 1]"),
            1, (const kiln_type_t *const[]){ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 64, 112, 112))},
            "max_pool");
  funcs[n++] = lower(
      &kiln_op_global_avg_pool2d, ATTRS(&kiln_op_global_avg_pool2d, "layout", "\"NCHW\""), 1,
      (const kiln_type_t *const[]){ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 512, 7, 7))}, "avg_pool");
  funcs[n++] = lower(&kiln_op_dense, ATTRS(&kiln_op_dense, "units", "1000"), 2,
                     (const kiln_type_t *const[]){ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(1, 512)),
                                                  ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(1000, 512))},
                     "dense");
  funcs[n++] = lower(&kiln_op_add, attrs_with(&kiln_op_add, NULL), 2, act2, "add");
  funcs[n++] = lower(&kiln_op_relu, attrs_with(&kiln_op_relu, NULL), 1, &act, "relu");
  funcs[n++] =
      lower(&kiln_op_bias_add, ATTRS(&kiln_op_bias_add, "axis", "1"), 2,
            (const kiln_type_t *const[]){act, ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(64))}, "bias_add");
  funcs[n++] =
      lower(&kiln_op_softmax, attrs_with(&kiln_op_softmax, NULL), 1,
            (const kiln_type_t *const[]){ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(1, 1000))}, "softmax");
  funcs[n++] = lower(
      &kiln_op_batch_flatten, attrs_with(&kiln_op_batch_flatten, NULL), 1,
      (const kiln_type_t *const[]){ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 512, 1, 1))}, "flatten");
  return n;
}

static int report_compile_time(void) {
  void *state = NULL;
  setup(&state);
  const kiln_tir_prim_func_t *conv = conv_nchwc("conv", 64, 56, 64, 3);
  const kiln_tir_prim_func_t *funcs[32];
  int n = resnet18_kernels(funcs);
  const char *targets[] = {"llvm", "llvm -noasm", "llvm -jit -noasm", "c -march=native"};
  printf("compile time, median of 5 (s):\n");
  for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); ++t) {
    printf("  %-18s conv2d NCHW16c 64x56x56->64 3x3: %.3f   resnet-18 (%d kernels): %.3f\n",
           targets[t], median_build(targets[t], &conv, 1), n, median_build(targets[t], funcs, n));
  }
  teardown(&state);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--compile-time") == 0) {
    return report_compile_time();
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_printed_ir),
      cmocka_unit_test(test_parallel_loop_runs_with_1_2_3_threads),
      cmocka_unit_test(test_strided_loads),
      cmocka_unit_test(test_gather_loads),
      cmocka_unit_test(test_argument_checks),
      cmocka_unit_test(test_fast_math),
      cmocka_unit_test(test_libm_calls_not_folded),
      cmocka_unit_test_setup_teardown(test_conv2d_nchwc_uses_zmm_fma, setup, teardown),
      cmocka_unit_test_setup_teardown(test_indices_are_i64, setup, teardown),
      cmocka_unit_test(test_target_options),
      cmocka_unit_test(test_default_target_and_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}

#else /* !KILN_HAVE_LLVM */

int main(void) {
  puts("skipped: kiln was built without LLVM (cmake/KilnLlvm.cmake)");
  const kiln_codegen_target_t *target = NULL;
  const char *options = NULL;
  kiln_status_t status = kiln_codegen_target_find("llvm", &target, &options);
  int ok = status && strstr(kiln_status_message(status), "kiln was built without LLVM");
  kiln_status_free(status);
  return ok ? 77 : 1;
}

#endif
