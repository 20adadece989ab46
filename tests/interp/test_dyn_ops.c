/*
 * The dyn operators (op/dyn.c) through the reference interpreter: each
 * one's import-time type (rank known, dims "?"), its run-time shape and
 * values against the static operator with the same values as attributes,
 * and the errors: a rank that depends on data, inputs of the wrong length,
 * values the static operator rejects.
 */
#include <stdio.h>
#include <string.h>

#include "interp/interp.h"
#include "ir/text.h"
#include "kiln_test.h"

static kiln_tensor_t *i64(int64_t count, const int64_t *values) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 1,
                                         (const int64_t[]){count}, values,
                                         (size_t)count * sizeof(int64_t), &t));
  return t;
}

static kiln_tensor_t *f32_iota(int ndim, const int64_t *shape) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &t));
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    data[i] = (float)(i * 3 % 7) - 2.5f;
  }
  return t;
}

static kiln_module_t *parse(const char *text) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("t", text, kiln_allocator_system(), &module));
  return module;
}

static void assert_ret_type(kiln_module_t *module, const char *expected) {
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(kiln_module_get_function(module, "main")->ret_type, text),
                      expected);
}

static void release_all(int count, kiln_tensor_t **tensors) {
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* Runs `dyn_text` on `inputs` and `static_text` on inputs[0] alone (or on
 * none, num_data 0), and checks that the outputs are the same. */
static void assert_like_static(const char *dyn_text, const char *static_text, int num_inputs,
                               kiln_tensor_t **inputs, int num_data) {
  kiln_module_t *dyn = parse(dyn_text), *fixed = parse(static_text);
  int na = 0, nb = 0;
  kiln_tensor_t **a = NULL, **b = NULL;
  KILN_ASSERT_OK(
      kiln_interp_run(dyn, "main", num_inputs, inputs, kiln_allocator_system(), &na, &a));
  KILN_ASSERT_OK(
      kiln_interp_run(fixed, "main", num_data, inputs, kiln_allocator_system(), &nb, &b));
  assert_int_equal(na, nb);
  for (int i = 0; i < na; ++i) {
    assert_int_equal(kiln_tensor_dtype(a[i]), kiln_tensor_dtype(b[i]));
    assert_true(kiln_shape_equal(kiln_tensor_ndim(a[i]), kiln_tensor_shape(a[i]),
                                 kiln_tensor_ndim(b[i]), kiln_tensor_shape(b[i])));
    size_t bytes =
        (size_t)kiln_tensor_element_count(a[i]) * kiln_dtype_size(kiln_tensor_dtype(a[i]));
    assert_memory_equal(kiln_tensor_data(a[i]), kiln_tensor_data(b[i]), bytes);
  }
  release_all(na, a);
  release_all(nb, b);
  kiln_allocator_free(kiln_allocator_system(), a);
  kiln_allocator_free(kiln_allocator_system(), b);
  kiln_module_destroy(dyn);
  kiln_module_destroy(fixed);
}

static void test_reshape_broadcast_tile(void **state) {
  (void)state;
  kiln_tensor_t *in[2] = {f32_iota(2, (const int64_t[]){2, 6}),
                          i64(3, (const int64_t[]){3, -1, 2})};
  kiln_module_t *m = parse("def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(3), int64]) { "
                           "dyn.reshape(%x, %s) }");
  assert_ret_type(m, "Tensor[(?, ?, ?), float32]");
  kiln_module_destroy(m);
  assert_like_static(
      "def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(3), int64]) { dyn.reshape(%x, %s) }",
      "def @main(%x: Tensor[(2, 6), float32]) { reshape(%x, newshape=[3, -1, 2]) }", 2, in, 1);
  kiln_tensor_release(in[1]);
  in[1] = i64(3, (const int64_t[]){3, 2, 6});
  assert_like_static("def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(3), int64]) { "
                     "dyn.broadcast_to(%x, %s) }",
                     "def @main(%x: Tensor[(2, 6), float32]) { broadcast_to(%x, shape=[3, 2, 6]) }",
                     2, in, 1);
  assert_like_static(
      "def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(3), int64]) { dyn.tile(%x, %s) }",
      "def @main(%x: Tensor[(2, 6), float32]) { tile(%x, reps=[3, 2, 6]) }", 2, in, 1);
  release_all(2, in);
}

static void test_slice_squeeze_sum(void **state) {
  (void)state;
  kiln_tensor_t *in[5] = {f32_iota(3, (const int64_t[]){4, 1, 5}), i64(2, (const int64_t[]){1, -1}),
                          i64(2, (const int64_t[]){4, 0}), i64(2, (const int64_t[]){2, -2}),
                          i64(2, (const int64_t[]){0, 2})};
  assert_like_static(
      "def @main(%x: Tensor[(4, 1, 5), float32], %b: Tensor[(2), int64], %e: Tensor[(2), int64], "
      "%s: Tensor[(2), int64], %a: Tensor[(2), int64]) { dyn.strided_slice(%x, %b, %e, %s, %a) }",
      "def @main(%x: Tensor[(4, 1, 5), float32]) { strided_slice(%x, begin=[1, -1], end=[4, 0], "
      "strides=[2, -2], axes=[0, 2]) }",
      5, in, 1);
  kiln_tensor_t *axes[2] = {in[0], i64(1, (const int64_t[]){1})};
  assert_like_static("def @main(%x: Tensor[(4, 1, 5), float32], %a: Tensor[(1), int64]) { "
                     "dyn.squeeze(%x, %a) }",
                     "def @main(%x: Tensor[(4, 1, 5), float32]) { squeeze(%x, axis=[1]) }", 2, axes,
                     1);
  assert_like_static("def @main(%x: Tensor[(4, 1, 5), float32], %a: Tensor[(1), int64]) { "
                     "dyn.sum(%x, %a, keepdims=True) }",
                     "def @main(%x: Tensor[(4, 1, 5), float32]) { sum(%x, axis=[1], keepdims=True) "
                     "}",
                     2, axes, 1);
  kiln_tensor_t *where[2] = {in[0], i64(2, (const int64_t[]){-1, 1})};
  assert_like_static("def @main(%x: Tensor[(4, 1, 5), float32], %a: Tensor[(2), int64]) { "
                     "dyn.unsqueeze(%x, %a) }",
                     "def @main(%x: Tensor[(4, 1, 5), float32]) { reshape(%x, newshape=[4, 1, 1, "
                     "5, 1]) }",
                     2, where, 1);
  kiln_tensor_release(where[1]);
  kiln_module_t *m = parse("def @main(%x: Tensor[(4, 1, 5), float32], %a: Tensor[(2), int64]) { "
                           "dyn.sum(%x, %a) }");
  assert_ret_type(m, "Tensor[(?), float32]");
  kiln_module_destroy(m);
  kiln_tensor_release(axes[1]);
  release_all(5, in);
}

static void test_cumsum_topk_arange(void **state) {
  (void)state;
  kiln_tensor_t *in[3] = {f32_iota(2, (const int64_t[]){3, 4}), i64(1, (const int64_t[]){0}), NULL};
  kiln_module_t *m = parse("def @main(%x: Tensor[(3, 4), float32], %a: Tensor[(1), int64]) { "
                           "dyn.cumsum(%x, %a, reverse=True) }");
  assert_ret_type(m, "Tensor[(3, 4), float32]"); /* the axis moves no dim */
  kiln_module_destroy(m);
  assert_like_static("def @main(%x: Tensor[(3, 4), float32], %a: Tensor[(1), int64]) { "
                     "dyn.cumsum(%x, %a, reverse=True) }",
                     "def @main(%x: Tensor[(3, 4), float32]) { cumsum(%x, axis=0, reverse=True) }",
                     2, in, 1);
  kiln_tensor_release(in[1]);
  in[1] = i64(1, (const int64_t[]){2});
  assert_like_static("def @main(%x: Tensor[(3, 4), float32], %k: Tensor[(1), int64]) { "
                     "dyn.topk(%x, %k, largest=False) }",
                     "def @main(%x: Tensor[(3, 4), float32]) { topk(%x, k=2, largest=False) }", 2,
                     in, 1);
  kiln_tensor_t *range[3] = {i64(1, (const int64_t[]){2}), i64(1, (const int64_t[]){11}),
                             i64(1, (const int64_t[]){3})};
  assert_like_static("def @main(%a: Tensor[(1), int64], %b: Tensor[(1), int64], %c: Tensor[(1), "
                     "int64]) { dyn.arange(%a, %b, %c, dtype=\"int64\") }",
                     "def @main() { arange(start=2, stop=11, step=3, dtype=\"int64\") }", 3, range,
                     0);
  release_all(3, range);
  release_all(2, in);
}

static kiln_status_t run_text(const char *text, int count, kiln_tensor_t **inputs);

/* trilu reads k from a second input at run time; its type is static. */
static void test_trilu_k_input(void **state) {
  (void)state;
  kiln_tensor_t *in[2] = {f32_iota(3, (const int64_t[]){2, 3, 4}), NULL};
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 0, NULL,
                                         (const int64_t[]){-1}, sizeof(int64_t), &in[1]));
  kiln_module_t *m = parse("def @main(%x: Tensor[(2, 3, 4), float32], %k: Tensor[(), int64]) { "
                           "trilu(%x, %k, upper=False) }");
  assert_ret_type(m, "Tensor[(2, 3, 4), float32]");
  kiln_module_destroy(m);
  assert_like_static("def @main(%x: Tensor[(2, 3, 4), float32], %k: Tensor[(), int64]) { "
                     "trilu(%x, %k, upper=False) }",
                     "def @main(%x: Tensor[(2, 3, 4), float32]) { trilu(%x, upper=False, k=-1) }",
                     2, in, 1);
  release_all(2, in);
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 3, 4), float32], %k: Tensor[(2), int64]) "
                              "{ trilu(%x, %k) }",
                              0, NULL),
                     INVALID_ARGUMENT, "trilu: k must be one int64, not int64 (2,)");
}

static kiln_status_t run_text(const char *text, int count, kiln_tensor_t **inputs) {
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_ir_parse_module("t", text, kiln_allocator_system(), &module);
  if (status) {
    return status;
  }
  int n = 0;
  kiln_tensor_t **outputs = NULL;
  status = kiln_interp_run(module, "main", count, inputs, kiln_allocator_system(), &n, &outputs);
  release_all(n, outputs);
  kiln_allocator_free(kiln_allocator_system(), outputs);
  kiln_module_destroy(module);
  return status;
}

static void test_errors(void **state) {
  (void)state;
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(n), int64]) { "
                              "dyn.reshape(%x, %s) }",
                              0, NULL),
                     INVALID_ARGUMENT,
                     "dyn.reshape: the output's rank depends on the length of input 1, which is "
                     "known only at run time");
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(2, 2), int64]) "
                              "{ dyn.reshape(%x, %s) }",
                              0, NULL),
                     INVALID_ARGUMENT, "dyn.reshape: input 1 has rank 2; expected 0 or 1");
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %b: Tensor[(1), int64], "
                              "%e: Tensor[(2), int64], %s: Tensor[(1), int64], %a: Tensor[(0), "
                              "int64]) { dyn.strided_slice(%x, %b, %e, %s, %a) }",
                              0, NULL),
                     INVALID_ARGUMENT,
                     "dyn.strided_slice: begin, end, strides and axes have 1, 2, 1 and 0 values");
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %a: Tensor[(0), int64]) { "
                              "dyn.squeeze(%x, %a) }",
                              0, NULL),
                     INVALID_ARGUMENT,
                     "dyn.squeeze: with no axes the output's rank depends on the data's dims");
  /* A value the static operator rejects, at run time. */
  kiln_tensor_t *in[2] = {f32_iota(2, (const int64_t[]){2, 6}), i64(2, (const int64_t[]){5, 5})};
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(2), int64]) { "
                              "dyn.reshape(%x, %s) }",
                              2, in),
                     INVALID_ARGUMENT, "in @main, %0 = dyn.reshape: reshape");
  kiln_tensor_release(in[1]);
  in[1] = i64(2, (const int64_t[]){0, 1});
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %k: Tensor[(2), int64]) { "
                              "dyn.topk(%x, %k) }",
                              2, in),
                     INVALID_ARGUMENT, "dyn.topk: input 1 (k) has 2 values; expected one");
  release_all(2, in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape_broadcast_tile), cmocka_unit_test(test_slice_squeeze_sum),
      cmocka_unit_test(test_cumsum_topk_arange),     cmocka_unit_test(test_errors),
      cmocka_unit_test(test_trilu_k_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
