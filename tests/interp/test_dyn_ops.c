/*
 * The dyn operators (op/dyn.c) through the reference interpreter: each
 * one's import-time type (rank known, dims "?"), its run-time shape and
 * values against the static operator with the same values as attributes,
 * and the errors: a rank that depends on data, inputs of the wrong length,
 * values the static operator rejects. dyn.resize against ONNX's rule worked
 * by hand; nonzero, unique and vision.non_max_suppression counting at run
 * time; the graph compiler refusing them.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/build.h"
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
                     INVALID_ARGUMENT,
                     "in @main, %0 = dyn.reshape: dyn.reshape: cannot reshape data (2, 6) of 12 "
                     "elements into [5, 5]");
  kiln_tensor_release(in[1]);
  in[1] = i64(2, (const int64_t[]){0, 1});
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(2, 6), float32], %k: Tensor[(2), int64]) { "
                              "dyn.topk(%x, %k) }",
                              2, in),
                     INVALID_ARGUMENT, "dyn.topk: input 1 (k) has 2 values; expected one");
  release_all(2, in);
}

static kiln_tensor_t *f32(int ndim, const int64_t *shape, const float *values) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &t));
  memcpy(kiln_tensor_data(t), values, (size_t)kiln_tensor_element_count(t) * sizeof(float));
  return t;
}

/* dyn.split, dyn.one_hot and dyn.pad against their static operators. */
static void test_split_one_hot_pad(void **state) {
  (void)state;
  kiln_tensor_t *in[3] = {f32_iota(2, (const int64_t[]){5, 2}), i64(2, (const int64_t[]){2, 3}),
                          NULL};
  kiln_module_t *m = parse("def @main(%x: Tensor[(5, 2), float32], %s: Tensor[(2), int64]) { "
                           "dyn.split(%x, %s) }");
  assert_ret_type(m, "(Tensor[(?, ?), float32], Tensor[(?, ?), float32])");
  kiln_module_destroy(m);
  assert_like_static("def @main(%x: Tensor[(5, 2), float32], %s: Tensor[(2), int64]) { "
                     "dyn.split(%x, %s) }",
                     "def @main(%x: Tensor[(5, 2), float32]) { split(%x, indices=[2]) }", 2, in, 1);
  kiln_tensor_release(in[1]);
  in[1] = i64(4, (const int64_t[]){1, 0, 0, 2});
  in[2] = f32(0, NULL, (const float[]){7.5f});
  assert_like_static("def @main(%x: Tensor[(5, 2), float32], %p: Tensor[(4), int64], %v: "
                     "Tensor[(), float32]) { dyn.pad(%x, %p, %v) }",
                     "def @main(%x: Tensor[(5, 2), float32]) { nn.pad(%x, pad_width=[1, 0, 0, 2], "
                     "pad_value=7.5) }",
                     3, in, 1);
  release_all(3, in);
  kiln_tensor_t *hot[3] = {i64(3, (const int64_t[]){0, -1, 2}), i64(1, (const int64_t[]){4}),
                           f32(1, (const int64_t[]){2}, (const float[]){-1.0f, 3.0f})};
  assert_like_static("def @main(%i: Tensor[(3), int64], %d: Tensor[(1), int64], %v: Tensor[(2), "
                     "float32]) { dyn.one_hot(%i, %d, %v, axis=0) }",
                     "def @main(%i: Tensor[(3), int64]) { one_hot(%i, depth=4, axis=0, "
                     "off_value=-1.0, on_value=3.0) }",
                     3, hot, 1);
  release_all(3, hot);
  /* sizes that do not add up to the dim, when it runs */
  kiln_tensor_t *bad[2] = {f32_iota(2, (const int64_t[]){5, 2}), i64(2, (const int64_t[]){2, 2})};
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(5, 2), float32], %s: Tensor[(2), int64]) { "
                              "dyn.split(%x, %s) }",
                              2, bad),
                     INVALID_ARGUMENT, "dyn.split: the split sizes add up to 4 but dim 0 is 5");
  release_all(2, bad);
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(5, 2), float32], %s: Tensor[(n), int64]) { "
                              "dyn.split(%x, %s) }",
                              0, NULL),
                     INVALID_ARGUMENT,
                     "dyn.split: the output's type depends on the length of input 1");
}

/* dyn.resize against the same rule by hand: (1, 2) upsampled by 2 along
 * the last axis, linear half_pixel: sources -0.25, 0.25, 0.75, 1.25 give
 * 1, 1.25, 1.75, 2; by sizes the same. */
static void test_resize(void **state) {
  (void)state;
  kiln_tensor_t *in[4] = {f32(2, (const int64_t[]){1, 2}, (const float[]){1.0f, 2.0f}),
                          f32(1, (const int64_t[]){0}, (const float[]){0.0f}),
                          f32(1, (const int64_t[]){2}, (const float[]){1.0f, 2.0f}),
                          i64(0, (const int64_t[]){0})};
  const char *text = "def @main(%x: Tensor[(1, 2), float32], %r: Tensor[(0), float32], %s: "
                     "Tensor[(?), float32], %z: Tensor[(?), int64]) { dyn.resize(%x, %r, %s, %z, "
                     "mode=\"linear\") }";
  kiln_module_t *m = parse(text);
  assert_ret_type(m, "Tensor[(?, ?), float32]");
  int n = 0;
  kiln_tensor_t **out = NULL;
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 4, in, kiln_allocator_system(), &n, &out));
  const float expected[4] = {1.0f, 1.25f, 1.75f, 2.0f};
  assert_int_equal(kiln_tensor_shape(out[0])[1], 4);
  for (int i = 0; i < 4; ++i) {
    assert_float_equal(((const float *)kiln_tensor_data(out[0]))[i], expected[i], 1e-6);
  }
  release_all(n, out);
  kiln_allocator_free(kiln_allocator_system(), out);
  kiln_tensor_release(in[3]);
  in[3] = i64(2, (const int64_t[]){1, 4});
  kiln_tensor_release(in[2]);
  in[2] = f32(1, (const int64_t[]){0}, (const float[]){0.0f});
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 4, in, kiln_allocator_system(), &n, &out));
  for (int i = 0; i < 4; ++i) {
    assert_float_equal(((const float *)kiln_tensor_data(out[0]))[i], expected[i], 1e-6);
  }
  release_all(n, out);
  kiln_allocator_free(kiln_allocator_system(), out);
  kiln_module_destroy(m);
  release_all(4, in);
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(1, 2), float32], %r: Tensor[(0), float32], "
                              "%s: Tensor[(2), int64], %z: Tensor[(0), int64]) { dyn.resize(%x, "
                              "%r, %s, %z) }",
                              0, NULL),
                     INVALID_ARGUMENT,
                     "dyn.resize: input 2 (scales) is int64 (2,); expected a 1-D float tensor");
  KILN_ASSERT_STATUS(run_text("def @main(%x: Tensor[(1, 2), float32], %r: Tensor[(0), float32], "
                              "%s: Tensor[(2), float32], %z: Tensor[(0), int64]) { dyn.resize(%x, "
                              "%r, %s, %z, mode=\"area\") }",
                              0, NULL),
                     INVALID_ARGUMENT, "mode \"area\" is not nearest, linear or cubic");
}

/* nonzero, unique and vision.non_max_suppression: counts at run time. */
static void test_value_shapes(void **state) {
  (void)state;
  kiln_tensor_t *x = f32(2, (const int64_t[]){2, 3}, (const float[]){0, 2, 0, 3, 3, 0});
  kiln_module_t *m = parse("def @main(%x: Tensor[(2, 3), float32]) { nonzero(%x) }");
  assert_ret_type(m, "Tensor[(2, ?), int64]");
  int n = 0;
  kiln_tensor_t **out = NULL;
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 1, &x, kiln_allocator_system(), &n, &out));
  const int64_t coordinates[6] = {0, 1, 1, 1, 0, 1};
  assert_int_equal(kiln_tensor_shape(out[0])[1], 3);
  assert_memory_equal(kiln_tensor_data(out[0]), coordinates, sizeof(coordinates));
  release_all(n, out);
  kiln_allocator_free(kiln_allocator_system(), out);
  kiln_module_destroy(m);
  m = parse("def @main(%x: Tensor[(2, 3), float32]) { unique(%x) }");
  assert_ret_type(m, "(Tensor[(?), float32], Tensor[(?), int64], Tensor[(6), int64], "
                     "Tensor[(?), int64])");
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 1, &x, kiln_allocator_system(), &n, &out));
  assert_int_equal(n, 4);
  const float values[3] = {0, 2, 3};
  const int64_t first[3] = {0, 1, 3}, inverse[6] = {0, 1, 0, 2, 2, 0}, counts[3] = {3, 1, 2};
  assert_memory_equal(kiln_tensor_data(out[0]), values, sizeof(values));
  assert_memory_equal(kiln_tensor_data(out[1]), first, sizeof(first));
  assert_memory_equal(kiln_tensor_data(out[2]), inverse, sizeof(inverse));
  assert_memory_equal(kiln_tensor_data(out[3]), counts, sizeof(counts));
  release_all(n, out);
  kiln_allocator_free(kiln_allocator_system(), out);
  kiln_module_destroy(m);
  kiln_tensor_release(x);
  /* two overlapping boxes and one apart; IoU 1/3 is not above 0.5 */
  kiln_tensor_t *nms[5] = {
      f32(3, (const int64_t[]){1, 3, 4}, (const float[]){0, 0, 2, 2, 0, 1, 2, 3, 5, 5, 6, 6}),
      f32(3, (const int64_t[]){1, 1, 3}, (const float[]){0.5f, 0.9f, 0.1f}),
      i64(1, (const int64_t[]){5}), f32(1, (const int64_t[]){1}, (const float[]){0.3f}),
      f32(1, (const int64_t[]){1}, (const float[]){0.2f})};
  m = parse("def @main(%b: Tensor[(1, 3, 4), float32], %s: Tensor[(1, 1, 3), float32], %m: "
            "Tensor[(1), int64], %i: Tensor[(1), float32], %t: Tensor[(1), float32]) { "
            "vision.non_max_suppression(%b, %s, %m, %i, %t) }");
  assert_ret_type(m, "Tensor[(?, 3), int64]");
  KILN_ASSERT_OK(kiln_interp_run(m, "main", 5, nms, kiln_allocator_system(), &n, &out));
  /* by score: box 1 (0.9), then box 0 (0.5, IoU 1/3 with box 1: over 0.3,
   * suppressed); box 2 scores 0.1, under 0.2 */
  const int64_t rows[3] = {0, 0, 1};
  assert_int_equal(kiln_tensor_shape(out[0])[0], 1);
  assert_memory_equal(kiln_tensor_data(out[0]), rows, sizeof(rows));
  release_all(n, out);
  kiln_allocator_free(kiln_allocator_system(), out);
  kiln_module_destroy(m);
  release_all(5, nms);
}

/* The graph compiler refuses the operators that read values at run time,
 * naming them, and those whose output shape depends on values by their
 * symbolic dims. */
static void test_compiler_refuses(void **state) {
  (void)state;
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = "c";
  options.executor = KILN_EXECUTOR_GRAPH;
  kiln_compiled_t *compiled = NULL;
  kiln_module_t *m = parse("def @main(%x: Tensor[(2, 3), float32]) { nonzero(%x) }");
  KILN_ASSERT_STATUS(kiln_compiler_build(kiln_allocator_system(), m, &options, &compiled),
                     UNIMPLEMENTED, "nonzero has the type Tensor[(2, ?), int64]");
  assert_null(compiled);
  kiln_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape_broadcast_tile),
      cmocka_unit_test(test_slice_squeeze_sum),
      cmocka_unit_test(test_cumsum_topk_arange),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_trilu_k_input),
      cmocka_unit_test(test_split_one_hot_pad),
      cmocka_unit_test(test_resize),
      cmocka_unit_test(test_value_shapes),
      cmocka_unit_test(test_compiler_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
