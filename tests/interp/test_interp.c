/*
 * Tests of the reference interpreter (src/interp/): small graphs whose
 * results are written by hand or computed in the test with plain loops,
 * tuples and function calls, int64 and bool tensors, every error path with
 * the node or input it names, freeing of intermediates (a counting
 * allocator watches the live set), and an allocation-failure sweep.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/order.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"
#include "op/op.h"

/* ---- building graphs ---- */

#define SETTINGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int64_t statuses_at_start;

static int setup(void **state) {
  (void)state;
  statuses_at_start = kiln_status_live_count();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  assert_int_equal(kiln_status_live_count(), statuses_at_start);
  return 0;
}

static kiln_expr_t *as_expr(void *node) {
  return (kiln_expr_t *)node;
}

static kiln_tensor_t *tensor_of(kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                const void *data) {
  size_t size = 0;
  KILN_ASSERT_OK(kiln_shape_byte_size(dtype, ndim, shape, &size));
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create_copy(kiln_allocator_system(), dtype, ndim, shape, data, size, &tensor));
  return tensor;
}

/* A zero-filled tensor. */
static kiln_tensor_t *zeros(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &tensor));
  return tensor;
}

static void release_tensors(int count, kiln_tensor_t *const *tensors) {
  for (int i = 0; i < count; i++) {
    kiln_tensor_release(tensors[i]);
  }
}

static kiln_expr_t *constant(kiln_module_t *m, kiln_dtype_t dtype, int ndim, const int64_t *shape,
                             const void *data) {
  kiln_tensor_t *tensor = tensor_of(dtype, ndim, shape, data);
  kiln_constant_t *c = NULL;
  KILN_ASSERT_OK(kiln_ir_constant_create(m, tensor, &c));
  kiln_tensor_release(tensor);
  return as_expr(c);
}

/* A call of operator `name` with attributes set from (name, text) pairs. */
static kiln_expr_t *call_with(kiln_module_t *m, const char *op_name, int count,
                              kiln_expr_t *const *args, const char *const *settings) {
  return irt_call(m, op_name, settings, count, args);
}

static kiln_expr_t *call1(kiln_module_t *m, const char *op_name, kiln_expr_t *a) {
  return call_with(m, op_name, 1, &a, NULL);
}

static kiln_expr_t *call2(kiln_module_t *m, const char *op_name, kiln_expr_t *a, kiln_expr_t *b) {
  kiln_expr_t *args[] = {a, b};
  return call_with(m, op_name, 2, args, NULL);
}

static kiln_expr_t *tuple(kiln_module_t *m, int count, kiln_expr_t *const *fields) {
  kiln_tuple_t *t = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, count, fields, &t));
  return as_expr(t);
}

static kiln_expr_t *get_item(kiln_module_t *m, kiln_expr_t *tuple_expr, int index) {
  kiln_tuple_get_item_t *item = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, tuple_expr, index, &item));
  return as_expr(item);
}

static kiln_expr_t *call_function(kiln_module_t *m, kiln_function_t *f, int count,
                                  kiln_expr_t *const *args) {
  kiln_call_t *c = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, f, count, args, &c));
  return as_expr(c);
}

/* Adds `body` over `params` as @main and infers types. */
static void finish_main(kiln_module_t *m, int count, kiln_var_t *const *params, kiln_expr_t *body) {
  KILN_ASSERT_OK(kiln_module_add_function(m, "main", irt_function(m, count, params, body)));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
}

/* ---- running and checking ---- */

typedef struct results_t {
  int count;
  kiln_tensor_t **tensors;
} results_t;

static results_t run_main(kiln_module_t *m, int count, kiln_tensor_t *const *inputs) {
  results_t results = {0, NULL};
  KILN_ASSERT_OK(kiln_interp_run(m, "main", count, inputs, kiln_allocator_system(), &results.count,
                                 &results.tensors));
  return results;
}

static void results_release(results_t *results) {
  for (int i = 0; i < results->count; i++) {
    kiln_tensor_release(results->tensors[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), results->tensors);
  results->count = 0;
  results->tensors = NULL;
}

/* Releases the results, the inputs and the module at the end of a test. */
static void cleanup(kiln_module_t *m, results_t *results, int count, kiln_tensor_t *const *inputs) {
  results_release(results);
  release_tensors(count, inputs);
  kiln_module_destroy(m);
}

static void assert_shape(const kiln_tensor_t *tensor, kiln_dtype_t dtype, int ndim,
                         const int64_t *shape) {
  assert_int_equal(kiln_tensor_dtype(tensor), dtype);
  assert_int_equal(kiln_tensor_ndim(tensor), ndim);
  for (int i = 0; i < ndim; i++) {
    assert_int_equal(kiln_tensor_shape(tensor)[i], shape[i]);
  }
}

/* Float elements within 1e-5 relative (and 1e-6 absolute). */
static void assert_f32(const kiln_tensor_t *tensor, const float *expected, int64_t count) {
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_FLOAT32);
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const float *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; i++) {
    double tolerance = 1e-6 + 1e-5 * fabs((double)expected[i]);
    if (fabs((double)data[i] - (double)expected[i]) > tolerance) {
      fail_msg("element %lld is %.9g, expected %.9g", (long long)i, (double)data[i],
               (double)expected[i]);
    }
  }
}

static void assert_i64(const kiln_tensor_t *tensor, const int64_t *expected, int64_t count) {
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_INT64);
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const int64_t *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; i++) {
    assert_int_equal(data[i], expected[i]);
  }
}

static void assert_bool(const kiln_tensor_t *tensor, const uint8_t *expected, int64_t count) {
  assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_BOOL);
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const uint8_t *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; i++) {
    assert_int_equal(data[i], expected[i]);
  }
}

/* ---- conv2d + bias_add + relu against a naive loop ---- */

/* out[o][y][x] = relu(b[o] + sum_{ky,kx} in[y+ky-1][x+kx-1] * w[o][ky][kx]),
 * zero outside the 4x4 input (padding 1). */
static void naive_conv_bias_relu(const float *in, const float *w, const float *b, float *out) {
  for (int o = 0; o < 2; o++) {
    for (int y = 0; y < 4; y++) {
      for (int x = 0; x < 4; x++) {
        double sum = b[o];
        for (int ky = 0; ky < 3; ky++) {
          for (int kx = 0; kx < 3; kx++) {
            int iy = y + ky - 1, ix = x + kx - 1;
            if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4)
              continue;
            sum += (double)in[iy * 4 + ix] * (double)w[o * 9 + ky * 3 + kx];
          }
        }
        out[(o * 4 + y) * 4 + x] = sum > 0 ? (float)sum : 0.0f;
      }
    }
  }
}

static void test_conv_bias_relu(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[] = {irt_var(m, "x", KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 4)),
                          irt_var(m, "w", KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 3, 3))};
  const float bias[] = {0.5f, -2.0f};
  kiln_expr_t *conv_args[] = {as_expr(params[0]), as_expr(params[1])};
  kiln_expr_t *conv = call_with(m, "nn.conv2d", 2, conv_args, SETTINGS("padding", "[1, 1, 1, 1]"));
  kiln_expr_t *biased =
      call2(m, "nn.bias_add", conv, constant(m, KILN_DTYPE_FLOAT32, 1, SHAPE(2), bias));
  finish_main(m, 2, params, call1(m, "nn.relu", biased));

  float x[16], w[18];
  for (int i = 0; i < 16; i++)
    x[i] = (float)((i * 7) % 11) - 5.0f;
  for (int i = 0; i < 18; i++)
    w[i] = (float)((i * 5) % 7) * 0.25f - 0.75f;
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 4), x),
                             tensor_of(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 3, 3), w)};
  results_t results = run_main(m, 2, inputs);
  assert_int_equal(results.count, 1);
  assert_shape(results.tensors[0], KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 4, 4));
  float expected[32];
  naive_conv_bias_relu(x, w, bias, expected);
  int zeros = 0, positives = 0;
  for (int i = 0; i < 32; i++) {
    zeros += expected[i] == 0.0f;
    positives += expected[i] > 0.0f;
  }
  assert_true(zeros > 0 && positives > 0); /* relu and the bias both matter */
  assert_f32(results.tensors[0], expected, 32);
  cleanup(m, &results, 2, inputs);
}

/* ---- dense + softmax ---- */

static void test_dense_softmax(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[] = {irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)),
                          irt_var(m, "w", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 3))};
  kiln_expr_t *dense = call2(m, "nn.dense", as_expr(params[0]), as_expr(params[1]));
  finish_main(m, 2, params, call1(m, "nn.softmax", dense));

  const float x[] = {1, 2, 3, -1, 0.5f, 2};
  const float w[] = {0.1f, 0.2f, 0.3f, -0.4f, 0.5f, 0.0f, 1.0f, -1.0f, 0.5f, 0.25f, 0.25f, 0.25f};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3), x),
                             tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 3), w)};
  results_t results = run_main(m, 2, inputs);
  assert_int_equal(results.count, 1);
  assert_shape(results.tensors[0], KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4));
  float expected[8];
  for (int n = 0; n < 2; n++) {
    double logits[4], total = 0;
    for (int u = 0; u < 4; u++) {
      logits[u] = 0;
      for (int k = 0; k < 3; k++)
        logits[u] += (double)x[n * 3 + k] * (double)w[u * 3 + k];
      total += exp(logits[u]);
    }
    for (int u = 0; u < 4; u++)
      expected[n * 4 + u] = (float)(exp(logits[u]) / total);
  }
  assert_f32(results.tensors[0], expected, 8);
  cleanup(m, &results, 2, inputs);
}

/* ---- a shared node ---- */

/* y = relu(x) feeds three readers: q = y * (-y) and r = q + y + y. */
static void test_shared_node(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_expr_t *y = call1(m, "nn.relu", as_expr(x));
  kiln_expr_t *q = call2(m, "multiply", y, call1(m, "negative", y));
  kiln_expr_t *r = call2(m, "add", q, call2(m, "add", y, y));
  finish_main(m, 1, &x, r);

  const float data[] = {-1.0f, 0.5f, 2.0f, 3.0f};
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(4), data);
  results_t results = run_main(m, 1, &input);
  /* y = 0, 0.5, 2, 3; -y^2 + 2y = 0, 0.75, 0, -3 */
  const float expected[] = {0.0f, 0.75f, 0.0f, -3.0f};
  assert_int_equal(results.count, 1);
  assert_f32(results.tensors[0], expected, 4);
  results_release(&results);
  /* The input is the caller's, untouched. */
  assert_f32(input, data, 4);
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

/* ---- split, TupleGetItem, concatenate ---- */

static void test_split_get_item_concatenate(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 6));
  kiln_expr_t *x_only[] = {as_expr(x)};
  kiln_expr_t *parts = call_with(m, "split", 1, x_only, SETTINGS("sections", "3", "axis", "1"));
  kiln_expr_t *reordered[] = {get_item(m, parts, 2), get_item(m, parts, 0), get_item(m, parts, 1)};
  kiln_expr_t *joined = call_with(m, "concatenate", 3, reordered, SETTINGS("axis", "1"));
  finish_main(m, 1, &x, joined);

  const float data[] = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 6), data);
  results_t results = run_main(m, 1, &input);
  assert_int_equal(results.count, 1);
  assert_shape(results.tensors[0], KILN_DTYPE_FLOAT32, 2, SHAPE(2, 6));
  const float expected[] = {4, 5, 0, 1, 2, 3, 14, 15, 10, 11, 12, 13};
  assert_f32(results.tensors[0], expected, 12);
  cleanup(m, &results, 1, &input);
}

/* A split's tuple as the body is flattened into its fields. */
static void test_split_as_body(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(5));
  kiln_expr_t *x_only[] = {as_expr(x)};
  finish_main(m, 1, &x, call_with(m, "split", 1, x_only, SETTINGS("indices", "[2]")));
  const float data[] = {1, 2, 3, 4, 5};
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(5), data);
  results_t results = run_main(m, 1, &input);
  assert_int_equal(results.count, 2);
  assert_f32(results.tensors[0], data, 2);
  assert_f32(results.tensors[1], data + 2, 3);
  cleanup(m, &results, 1, &input);
}

/* ---- tuple-typed bodies ---- */

/* ((relu(x), -x), x, c) is flattened depth-first into four results; the
 * parameter and the Constant come back as new references. */
static void test_tuple_body(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  const int64_t c_data[] = {7, -7};
  kiln_expr_t *c = constant(m, KILN_DTYPE_INT64, 1, SHAPE(2), c_data);
  kiln_expr_t *inner[] = {call1(m, "nn.relu", as_expr(x)), call1(m, "negative", as_expr(x))};
  kiln_expr_t *outer[] = {tuple(m, 2, inner), as_expr(x), c};
  finish_main(m, 1, &x, tuple(m, 3, outer));

  const float data[] = {-1.5f, 0.0f, 2.5f};
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), data);
  results_t results = run_main(m, 1, &input);
  assert_int_equal(results.count, 4);
  const float relu[] = {0.0f, 0.0f, 2.5f};
  const float negated[] = {1.5f, 0.0f, -2.5f};
  assert_f32(results.tensors[0], relu, 3);
  assert_f32(results.tensors[1], negated, 3);
  assert_ptr_equal(results.tensors[2], input); /* the same tensor, one more reference */
  assert_i64(results.tensors[3], c_data, 2);
  results_release(&results);
  kiln_tensor_release(input); /* the last reference: ASan sees a double free otherwise */
  kiln_module_destroy(m);
}

/* A body that is a parameter, or a Constant, is returned as a new reference
 * the caller owns beyond the module's life. */
static void test_body_is_param_or_constant(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  finish_main(m, 1, &x, as_expr(x));
  const float data[] = {3, 4};
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(2), data);
  results_t results = run_main(m, 1, &input);
  assert_int_equal(results.count, 1);
  assert_ptr_equal(results.tensors[0], input);
  cleanup(m, &results, 1, &input);

  m = irt_module();
  const int64_t c_data[] = {1, 2, 3};
  finish_main(m, 0, NULL, constant(m, KILN_DTYPE_INT64, 1, SHAPE(3), c_data));
  results = run_main(m, 0, NULL);
  kiln_module_destroy(m); /* the result outlives the module */
  assert_int_equal(results.count, 1);
  assert_i64(results.tensors[0], c_data, 3);
  results_release(&results);
}

/* An empty tuple body gives no results. */
static void test_empty_tuple_body(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  finish_main(m, 0, NULL, tuple(m, 0, NULL));
  results_t results = run_main(m, 0, NULL);
  assert_int_equal(results.count, 0);
  assert_null(results.tensors);
  kiln_module_destroy(m);
}

/* ---- functions called from main ---- */

/* f(a, b) = a * b + b, primitive, called twice: f(f(x, y), x). */
static kiln_module_t *build_called_twice(kiln_function_t **out_f) {
  kiln_module_t *m = irt_module();
  kiln_var_t *fp[] = {irt_var(m, "a", KILN_DTYPE_FLOAT32, 1, SHAPE(3)),
                      irt_var(m, "b", KILN_DTYPE_FLOAT32, 1, SHAPE(3))};
  kiln_expr_t *fbody =
      call2(m, "add", call2(m, "multiply", as_expr(fp[0]), as_expr(fp[1])), as_expr(fp[1]));
  kiln_function_t *f = irt_function(m, 2, fp, fbody);
  f->primitive = true;
  kiln_var_t *params[] = {irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3)),
                          irt_var(m, "y", KILN_DTYPE_FLOAT32, 1, SHAPE(3))};
  kiln_expr_t *first_args[] = {as_expr(params[0]), as_expr(params[1])};
  kiln_expr_t *first = call_function(m, f, 2, first_args);
  kiln_expr_t *second_args[] = {first, as_expr(params[0])};
  finish_main(m, 2, params, call_function(m, f, 2, second_args));
  *out_f = f;
  return m;
}

static void test_function_called_twice(void **state) {
  (void)state;
  kiln_function_t *f = NULL;
  kiln_module_t *m = build_called_twice(&f);
  const float x[] = {1, 2, -3};
  const float y[] = {4, -1, 0.5f};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), x),
                             tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), y)};
  results_t results = run_main(m, 2, inputs);
  /* f(x, y) = 8, -3, -1; f(that, x) = 8*1+1, -3*2+2, -1*-3-3 = 9, -4, 0 */
  const float expected[] = {9, -4, 0};
  assert_int_equal(results.count, 1);
  assert_f32(results.tensors[0], expected, 3);
  cleanup(m, &results, 2, inputs);
}

/* A callee returning a tuple, its fields picked by TupleGetItem. */
static void test_function_returning_tuple(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *p = irt_var(m, "p", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_expr_t *fields[] = {call1(m, "exp", as_expr(p)), call1(m, "negative", as_expr(p))};
  kiln_function_t *f = irt_function(m, 1, &p, tuple(m, 2, fields));
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_expr_t *args[] = {as_expr(x)};
  kiln_expr_t *c = call_function(m, f, 1, args);
  finish_main(m, 1, &x, call2(m, "add", get_item(m, c, 1), get_item(m, c, 0)));
  const float data[] = {0.0f, 1.0f};
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(2), data);
  results_t results = run_main(m, 1, &input);
  const float expected[] = {1.0f, (float)(exp(1.0) - 1.0)};
  assert_f32(results.tensors[0], expected, 2);
  cleanup(m, &results, 1, &input);
}

/* Another function of the module can be run by name. */
static void test_run_other_function(void **state) {
  (void)state;
  kiln_function_t *f = NULL;
  kiln_module_t *m = build_called_twice(&f);
  KILN_ASSERT_OK(kiln_module_add_function(m, "f", f));
  const float a[] = {1, 2, 3};
  const float b[] = {2, 2, 2};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), a),
                             tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), b)};
  results_t results = {0, NULL};
  KILN_ASSERT_OK(kiln_interp_run(m, "f", 2, inputs, kiln_allocator_system(), &results.count,
                                 &results.tensors));
  const float expected[] = {4, 6, 8};
  assert_f32(results.tensors[0], expected, 3);
  cleanup(m, &results, 2, inputs);
}

/* ---- int64 and bool ---- */

/* reshape an int64 [2, 3] to [3, 2], add a broadcast row, and take rows of
 * a float table with int64 indices. */
static void test_int64_path(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[] = {irt_var(m, "ids", KILN_DTYPE_INT64, 2, SHAPE(2, 3)),
                          irt_var(m, "table", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 2))};
  kiln_expr_t *ids_only[] = {as_expr(params[0])};
  kiln_expr_t *reshaped = call_with(m, "reshape", 1, ids_only, SETTINGS("newshape", "[3, -1]"));
  const int64_t row[] = {10, 20};
  kiln_expr_t *sum = call2(m, "add", reshaped, constant(m, KILN_DTYPE_INT64, 1, SHAPE(2), row));
  kiln_expr_t *take_args[] = {as_expr(params[1]), as_expr(params[0])};
  kiln_expr_t *taken = call_with(m, "take", 2, take_args, SETTINGS("axis", "0"));
  kiln_expr_t *fields[] = {sum, taken};
  finish_main(m, 2, params, tuple(m, 2, fields));

  const int64_t ids[] = {3, 0, 1, 2, 2, 0};
  const float table[] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_INT64, 2, SHAPE(2, 3), ids),
                             tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 2), table)};
  results_t results = run_main(m, 2, inputs);
  assert_int_equal(results.count, 2);
  assert_shape(results.tensors[0], KILN_DTYPE_INT64, 2, SHAPE(3, 2));
  const int64_t sums[] = {13, 20, 11, 22, 12, 20};
  assert_i64(results.tensors[0], sums, 6);
  assert_shape(results.tensors[1], KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 2));
  const float rows[] = {6.5f, 7.5f, 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 4.5f, 5.5f, 0.5f, 1.5f};
  assert_f32(results.tensors[1], rows, 12);
  cleanup(m, &results, 2, inputs);
}

/* cond = a > b; (cond, where(cond, a, b)). */
static void test_bool_path(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[] = {irt_var(m, "a", KILN_DTYPE_FLOAT32, 1, SHAPE(4)),
                          irt_var(m, "b", KILN_DTYPE_FLOAT32, 1, SHAPE(4))};
  kiln_expr_t *cond = call2(m, "greater", as_expr(params[0]), as_expr(params[1]));
  kiln_expr_t *where_args[] = {cond, as_expr(params[0]), as_expr(params[1])};
  kiln_expr_t *fields[] = {cond, call_with(m, "where", 3, where_args, NULL)};
  finish_main(m, 2, params, tuple(m, 2, fields));

  const float a[] = {1, 5, -2, 3};
  const float b[] = {2, 4, -3, 3};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(4), a),
                             tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(4), b)};
  results_t results = run_main(m, 2, inputs);
  assert_int_equal(results.count, 2);
  const uint8_t greater[] = {0, 1, 1, 0};
  assert_bool(results.tensors[0], greater, 4);
  const float maxima[] = {2, 5, -2, 3};
  assert_f32(results.tensors[1], maxima, 4);
  cleanup(m, &results, 2, inputs);
}

/* ---- errors ---- */

/* main(x: [1, 1, 4, 4], w: [2, 1, 3, 3]) = conv2d(x, w) */
static kiln_module_t *build_conv(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *params[] = {irt_var(m, "x", KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 4)),
                          irt_var(m, "w", KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 3, 3))};
  finish_main(m, 2, params, call2(m, "nn.conv2d", as_expr(params[0]), as_expr(params[1])));
  return m;
}

static kiln_status_t run_status(kiln_module_t *m, const char *name, int count,
                                kiln_tensor_t *const *inputs) {
  int num_outputs = -1;
  kiln_tensor_t **outputs = (kiln_tensor_t **)&num_outputs; /* must be reset */
  kiln_status_t status =
      kiln_interp_run(m, name, count, inputs, kiln_allocator_system(), &num_outputs, &outputs);
  if (status != NULL) {
    assert_int_equal(num_outputs, 0);
    assert_null(outputs);
  }
  return status;
}

static void test_input_count_mismatch(void **state) {
  (void)state;
  kiln_module_t *m = build_conv();
  kiln_tensor_t *x = zeros(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 4));
  kiln_tensor_t *three[] = {x, x, x};
  KILN_ASSERT_STATUS(run_status(m, "main", 1, three), INVALID_ARGUMENT,
                     "@main takes 2 inputs, got 1: input 1 (%w) is missing");
  KILN_ASSERT_STATUS(run_status(m, "main", 3, three), INVALID_ARGUMENT,
                     "@main takes 2 inputs, got 3");
  KILN_ASSERT_STATUS(run_status(m, "main", -1, three), INVALID_ARGUMENT,
                     "@main takes 2 inputs, got -1");
  KILN_ASSERT_STATUS(run_status(m, "main", 2, NULL), INVALID_ARGUMENT, "input array is NULL");
  kiln_tensor_t *with_null[] = {x, NULL};
  KILN_ASSERT_STATUS(run_status(m, "main", 2, with_null), INVALID_ARGUMENT,
                     "in @main, input 1 (%w) is NULL");
  kiln_tensor_release(x);
  kiln_module_destroy(m);
}

static void test_input_dtype_and_shape_mismatch(void **state) {
  (void)state;
  kiln_module_t *m = build_conv();
  kiln_tensor_t *x = zeros(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 1, 4, 4));
  kiln_tensor_t *w_int = zeros(KILN_DTYPE_INT64, 4, SHAPE(2, 1, 3, 3));
  kiln_tensor_t *w_small = zeros(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 3));
  kiln_tensor_t *wrong_dtype[] = {x, w_int};
  KILN_ASSERT_STATUS(run_status(m, "main", 2, wrong_dtype), INVALID_ARGUMENT,
                     "in @main, input 1 (%w) is Tensor[(2, 1, 3, 3), int64] but the parameter is "
                     "Tensor[(2, 1, 3, 3), float32]");
  kiln_tensor_t *wrong_shape[] = {x, w_small};
  KILN_ASSERT_STATUS(run_status(m, "main", 2, wrong_shape), INVALID_ARGUMENT,
                     "in @main, input 1 (%w) is Tensor[(3, 3), float32] but the parameter is "
                     "Tensor[(2, 1, 3, 3), float32]");
  kiln_tensor_t *swapped[] = {w_small, x};
  KILN_ASSERT_STATUS(run_status(m, "main", 2, swapped), INVALID_ARGUMENT,
                     "input 0 (%x) is Tensor[(3, 3), float32] but the parameter is "
                     "Tensor[(1, 1, 4, 4), float32]");
  release_tensors(3, (kiln_tensor_t *[]){x, w_int, w_small});
  kiln_module_destroy(m);
}

static void test_module_without_types(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_expr_t *body = call1(m, "nn.relu", call1(m, "exp", as_expr(x)));
  KILN_ASSERT_OK(kiln_module_add_function(m, "main", irt_function(m, 1, &x, body)));
  kiln_tensor_t *input = zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  KILN_ASSERT_STATUS(run_status(m, "main", 1, &input), FAILED_PRECONDITION,
                     "in @main, %x has no type: run type inference (kiln_ir_infer_types)");
  /* Inferred, it runs. */
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  results_t results = run_main(m, 1, &input);
  const float ones[] = {1, 1};
  assert_f32(results.tensors[0], ones, 2);
  cleanup(m, &results, 1, &input);
}

static void test_unknown_function(void **state) {
  (void)state;
  kiln_module_t *m = build_conv();
  KILN_ASSERT_STATUS(run_status(m, "mian", 0, NULL), NOT_FOUND,
                     "the module has no function @mian (it has @main)");
  kiln_module_t *empty = irt_module();
  KILN_ASSERT_STATUS(run_status(empty, "main", 0, NULL), NOT_FOUND, "(it has none)");
  kiln_module_destroy(empty);
  KILN_ASSERT_STATUS(run_status(m, NULL, 0, NULL), INVALID_ARGUMENT, "needs a module");
  KILN_ASSERT_STATUS(run_status(NULL, "main", 0, NULL), INVALID_ARGUMENT, "needs a module");
  kiln_module_destroy(m);
}

/* gather of an index out of range: the relation accepts it, the kernel
 * refuses. (An integer division by zero gives 0: base/scalar_ops.h.) */
static void test_kernel_error_names_node(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[] = {irt_var(m, "a", KILN_DTYPE_INT64, 1, SHAPE(3)),
                          irt_var(m, "b", KILN_DTYPE_INT64, 1, SHAPE(3))};
  kiln_expr_t *sum = call2(m, "add", as_expr(params[0]), as_expr(params[1]));
  kiln_expr_t *gathered = call2(m, "gather", sum, as_expr(params[1]));
  finish_main(m, 2, params, call1(m, "negative", gathered));

  const int64_t a[] = {4, 5, 6};
  const int64_t b[] = {2, 5, 0};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), a),
                             tensor_of(KILN_DTYPE_INT64, 1, SHAPE(3), b)};
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  int num_outputs = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_STATUS(kiln_interp_run(m, "main", 2, inputs, kiln_counting_allocator_get(&counting),
                                     &num_outputs, &outputs),
                     OUT_OF_RANGE,
                     "in @main, %1 = gather: gather: index 5 is out of range for axis 0 of size 3");
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks,
                   0); /* the sum was released */
  assert_true(kiln_counting_allocator_counts(&counting).allocations > 0);
  release_tensors(2, inputs);
  kiln_module_destroy(m);
}

/* float64 passes the type relation of nn.softmax, but its kernel is float32 only. */
static void test_kernel_unimplemented_dtype(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT64, 2, SHAPE(1, 2));
  finish_main(m, 1, &x, call1(m, "nn.softmax", as_expr(x)));
  kiln_tensor_t *input = zeros(KILN_DTYPE_FLOAT64, 2, SHAPE(1, 2));
  KILN_ASSERT_STATUS(run_status(m, "main", 1, &input), UNIMPLEMENTED,
                     "in @main, %0 = nn.softmax: nn.softmax: the reference kernel does not handle "
                     "dtype float64");
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

/* An error inside a callee names the call and the callee's node, with the
 * numbers the printer gives them in @main. */
static void test_kernel_error_in_callee(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *p = irt_var(m, "p", KILN_DTYPE_INT64, 1, SHAPE(2));
  kiln_expr_t *bad = constant(m, KILN_DTYPE_INT64, 1, SHAPE(2), ((const int64_t[]){1, 7}));
  kiln_function_t *f = irt_function(m, 1, &p, call2(m, "gather", as_expr(p), bad));
  f->primitive = true;
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_INT64, 1, SHAPE(2));
  kiln_expr_t *args[] = {call1(m, "negative", as_expr(x))};
  finish_main(m, 1, &x, call_function(m, f, 1, args));
  /* Order: %0 = gather, %1 = fn, %2 = negative, %3 = call of %1. */
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(2), ((const int64_t[]){8, 9}));
  KILN_ASSERT_STATUS(run_status(m, "main", 1, &input), OUT_OF_RANGE,
                     "in @main, %3 = call of %1: %0 = gather: gather: index 7 is out of range for "
                     "axis 0 of size 2");
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

/* A callee reading a variable of its caller is not a closed function. */
static void test_callee_with_free_variable(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_var_t *p = irt_var(m, "p", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_function_t *f = irt_function(m, 1, &p, call2(m, "add", as_expr(p), as_expr(x)));
  kiln_expr_t *args[] = {as_expr(x)};
  finish_main(m, 1, &x, call_function(m, f, 1, args));
  kiln_tensor_t *input = zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  KILN_ASSERT_STATUS(run_status(m, "main", 1, &input), INVALID_ARGUMENT,
                     "in @main, %2 = call of %1: %x is not a parameter of the function");
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

/* A function as the body, or a tuple-typed parameter: not interpretable. */
static void test_unsupported_signatures(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *p = irt_var(m, "p", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_function_t *inner = irt_function(m, 1, &p, call1(m, "nn.relu", as_expr(p)));
  finish_main(m, 0, NULL, as_expr(inner));
  KILN_ASSERT_STATUS(run_status(m, "main", 0, NULL), UNIMPLEMENTED,
                     "in @main: %1 = fn is used as a value; the interpreter only calls functions");
  kiln_module_destroy(m);

  m = irt_module();
  const kiln_type_t *fields[] = {irt_type(m, KILN_DTYPE_FLOAT32, 1, SHAPE(2)),
                                 irt_type(m, KILN_DTYPE_INT64, 0, NULL)};
  const kiln_type_t *pair = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(kiln_module_arena(m), 2, fields, &pair));
  kiln_var_t *t = NULL;
  KILN_ASSERT_OK(kiln_ir_var_create(m, "t", pair, &t));
  finish_main(m, 1, &t, get_item(m, as_expr(t), 0));
  kiln_tensor_t *input = zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  KILN_ASSERT_STATUS(run_status(m, "main", 1, &input), UNIMPLEMENTED,
                     "in @main, parameter 0 (%t) is (Tensor[(2), float32], Tensor[(), int64]); "
                     "kiln_interp_run takes tensor inputs (kiln_interp_run_values takes any)");
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

/* ---- the node hook ---- */

typedef struct trace_t {
  int calls;
  char descriptions[8][KILN_IR_ORDER_NAME_CAPACITY];
  float first_outputs[8];
  int fail_at; /* -1: never */
} trace_t;

static kiln_status_t record_node(void *user_data, const kiln_interp_node_event_t *event) {
  trace_t *trace = user_data;
  if (trace->calls == trace->fail_at) {
    return KILN_STATUS(CANCELLED, "stopped by the hook");
  }
  assert_string_equal(event->function_name, "main");
  assert_true(event->seconds >= 0);
  assert_int_equal(event->num_outputs, 1);
  snprintf(trace->descriptions[trace->calls], KILN_IR_ORDER_NAME_CAPACITY, "%s",
           event->description);
  trace->first_outputs[trace->calls] = ((const float *)kiln_tensor_data(event->outputs[0]))[0];
  trace->calls++;
  return KILN_OK;
}

static void test_node_hook(void **state) {
  (void)state;
  kiln_function_t *f = NULL;
  kiln_module_t *m = build_called_twice(&f);
  const float x[] = {1, 2, -3};
  const float y[] = {4, -1, 0.5f};
  kiln_tensor_t *inputs[] = {tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), x),
                             tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), y)};
  trace_t trace = {.calls = 0, .fail_at = -1};
  kiln_interp_options_t options = {
      .allocator = kiln_allocator_system(), .node_hook = record_node, .node_hook_data = &trace};
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_OK(kiln_interp_run_with_options(m, "main", 2, inputs, &options, &count, &outputs));
  /* Two calls of f, each running multiply then add, named as in @main. */
  assert_int_equal(trace.calls, 4);
  assert_string_equal(trace.descriptions[0], "%0 = multiply");
  assert_string_equal(trace.descriptions[1], "%1 = add");
  assert_string_equal(trace.descriptions[2], "%0 = multiply");
  assert_string_equal(trace.descriptions[3], "%1 = add");
  assert_true(trace.first_outputs[0] == 4.0f && trace.first_outputs[1] == 8.0f);
  assert_true(trace.first_outputs[2] == 8.0f && trace.first_outputs[3] == 9.0f);
  for (int i = 0; i < count; i++)
    kiln_tensor_release(outputs[i]);
  kiln_allocator_free(kiln_allocator_system(), outputs);

  trace = (trace_t){.calls = 0, .fail_at = 2};
  KILN_ASSERT_STATUS(kiln_interp_run_with_options(m, "main", 2, inputs, &options, &count, &outputs),
                     CANCELLED, "in @main, %4 = call of %2: %0 = multiply: stopped by the hook");
  release_tensors(2, inputs);
  kiln_module_destroy(m);
}

/* ---- debug logging ---- */

typedef struct log_capture_t {
  int lines;
  char last[256];
} log_capture_t;

static void capture_log(void *self, kiln_log_level_t level, const char *file, int line,
                        const char *message) {
  (void)file;
  (void)line;
  log_capture_t *capture = self;
  if (level != KILN_LOG_LEVEL_DEBUG || strncmp(message, "interp ", 7) != 0)
    return;
  capture->lines++;
  snprintf(capture->last, sizeof(capture->last), "%s", message);
}

static void test_debug_log_line_per_node(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  finish_main(m, 1, &x, call1(m, "exp", call1(m, "nn.relu", as_expr(x))));
  kiln_tensor_t *input = zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  log_capture_t capture = {0, ""};
  kiln_log_level_t level = kiln_log_level();
  kiln_log_set_sink(capture_log, &capture);
  kiln_log_set_level(KILN_LOG_LEVEL_DEBUG);
  results_t results = run_main(m, 1, &input);
  kiln_log_set_level(level);
  kiln_log_set_sink(NULL, NULL);
  assert_int_equal(capture.lines, 2);
  assert_non_null(strstr(capture.last, "interp @main %1 = exp: "));
  assert_non_null(strstr(capture.last, " ms"));
  results_release(&results);
  /* At the default level (warn), nothing is logged. */
  capture.lines = 0;
  kiln_log_set_sink(capture_log, &capture);
  kiln_log_set_level(KILN_LOG_LEVEL_WARN);
  results = run_main(m, 1, &input);
  kiln_log_set_level(level);
  kiln_log_set_sink(NULL, NULL);
  assert_int_equal(capture.lines, 0);
  cleanup(m, &results, 1, &input);
}

/* ---- depth ---- */

/* 20000 nodes in a row: the walk and the evaluation use no C recursion on
 * graph depth. */
static void test_deep_chain(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_INT64, 1, SHAPE(1));
  kiln_expr_t *node = as_expr(x);
  for (int i = 0; i < 20000; i++) {
    node = call1(m, "negative", node);
  }
  finish_main(m, 1, &x, call2(m, "add", node, as_expr(x)));
  kiln_tensor_t *input = tensor_of(KILN_DTYPE_INT64, 1, SHAPE(1), ((const int64_t[]){21}));
  results_t results = run_main(m, 1, &input);
  const int64_t expected[] = {42};
  assert_i64(results.tensors[0], expected, 1);
  cleanup(m, &results, 1, &input);
}

/* ---- memory ---- */

enum { CHAIN_LENGTH = 50, CHAIN_ELEMENTS = 1 << 18 };

typedef struct live_watch_t {
  kiln_counting_allocator_t *counting;
  long long fewest_live_blocks;
  long long most_live_blocks;
  int calls;
} live_watch_t;

/* Called after each kernel: the live set the interpreter holds right then. */
static kiln_status_t watch_live(void *user_data, const kiln_interp_node_event_t *event) {
  (void)event;
  live_watch_t *watch = user_data;
  long long live = kiln_counting_allocator_counts(watch->counting).live_blocks;
  /* The first node reads the caller's input, which is not counted: one
   * tensor fewer. From the second on, each reads an intermediate. */
  if (watch->calls++ == 0)
    return KILN_OK;
  if (watch->calls == 2 || live < watch->fewest_live_blocks)
    watch->fewest_live_blocks = live;
  if (live > watch->most_live_blocks)
    watch->most_live_blocks = live;
  return KILN_OK;
}

/* 50 relus (alternating with negative, so every step changes the data) on a
 * 1 MB tensor: only about two tensors are ever live. */
static void test_intermediates_are_freed(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(CHAIN_ELEMENTS));
  kiln_expr_t *node = as_expr(x);
  for (int i = 0; i < CHAIN_LENGTH; i++) {
    node = call1(m, i % 2 == 0 ? "nn.relu" : "negative", node);
  }
  finish_main(m, 1, &x, node);

  kiln_tensor_t *input = zeros(KILN_DTYPE_FLOAT32, 1, SHAPE(CHAIN_ELEMENTS));
  float *data = kiln_tensor_data(input);
  for (int i = 0; i < CHAIN_ELEMENTS; i++)
    data[i] = (float)(i % 5) - 2.0f;

  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  live_watch_t watch = {.counting = &counting};
  kiln_interp_options_t options = {.allocator = kiln_counting_allocator_get(&counting),
                                   .node_hook = watch_live,
                                   .node_hook_data = &watch};
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_OK(kiln_interp_run_with_options(m, "main", 1, &input, &options, &count, &outputs));
  assert_int_equal(watch.calls, CHAIN_LENGTH);
  long long tensor_bytes = (long long)CHAIN_ELEMENTS * 4;
  /* Two tensors (the one being read, the one being written) and bookkeeping;
   * keeping every intermediate would be 50 tensors. */
  assert_true(kiln_counting_allocator_counts(&counting).peak_bytes < 3 * tensor_bytes);
  /* The live set is the same after every node: it does not grow with the
   * chain. About 15 blocks: two tensors, the plan's arrays, the frame's. */
  assert_int_equal(watch.most_live_blocks, watch.fewest_live_blocks);
  assert_true(watch.most_live_blocks <= 20);
  assert_true(kiln_counting_allocator_counts(&counting).allocations >= CHAIN_LENGTH);
  /* 25 relu/negative pairs: relu(-relu(v)) = 0 for every v. */
  assert_int_equal(count, 1);
  const float *result = kiln_tensor_data(outputs[0]);
  for (int i = 0; i < CHAIN_ELEMENTS; i++) {
    if (result[i] != 0.0f)
      fail_msg("element %d is %g", i, (double)result[i]);
  }
  /* Only the result (and the array holding it) is left. */
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 2);
  kiln_tensor_release(outputs[0]);
  kiln_allocator_free(kiln_counting_allocator_get(&counting), outputs);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
  kiln_tensor_release(input);
  kiln_module_destroy(m);
}

/* ---- allocation failures ---- */

/* main(x, w): s = split(f(x, w), 2) with f primitive; (s.0, relu(s.1)). */
static kiln_module_t *build_sweep_graph(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *fp[] = {irt_var(m, "a", KILN_DTYPE_FLOAT32, 1, SHAPE(4)),
                      irt_var(m, "b", KILN_DTYPE_FLOAT32, 1, SHAPE(4))};
  kiln_function_t *f = irt_function(m, 2, fp, call2(m, "multiply", as_expr(fp[0]), as_expr(fp[1])));
  f->primitive = true;
  kiln_var_t *params[] = {irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(4)),
                          irt_var(m, "w", KILN_DTYPE_FLOAT32, 1, SHAPE(4))};
  kiln_expr_t *args[] = {as_expr(params[0]), as_expr(params[1])};
  kiln_expr_t *c_only[] = {call_function(m, f, 2, args)};
  kiln_expr_t *parts = call_with(m, "split", 1, c_only, SETTINGS("sections", "2"));
  kiln_expr_t *fields[] = {get_item(m, parts, 0), call1(m, "nn.relu", get_item(m, parts, 1))};
  finish_main(m, 2, params, tuple(m, 2, fields));
  return m;
}

typedef struct sweep_t {
  kiln_module_t *module;
  kiln_tensor_t *inputs[2];
} sweep_t;

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  sweep_t *sweep = context;
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_interp_run(sweep->module, "main", 2, sweep->inputs, allocator, &count, &outputs));
  assert_int_equal(count, 2);
  const float first[] = {-2, 6};
  const float second[] = {0, 20};
  assert_f32(outputs[0], first, 2);
  assert_f32(outputs[1], second, 2);
  for (int i = 0; i < count; i++)
    kiln_tensor_release(outputs[i]);
  kiln_allocator_free(allocator, outputs);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  sweep_t sweep = {.module = build_sweep_graph()};
  const float x[] = {1, 2, 3, 4};
  const float w[] = {-2, 3, -1, 5};
  sweep.inputs[0] = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(4), x);
  sweep.inputs[1] = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(4), w);
  int64_t attempts = kiln_test_sweep_allocation_failures(sweep_scenario, &sweep);
  assert_true(attempts > 10); /* plans, values, tensors, tuples, the result array */
  kiln_tensor_release(sweep.inputs[0]);
  kiln_tensor_release(sweep.inputs[1]);
  kiln_module_destroy(sweep.module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_conv_bias_relu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dense_softmax, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shared_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_get_item_concatenate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_as_body, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tuple_body, setup, teardown),
      cmocka_unit_test_setup_teardown(test_body_is_param_or_constant, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_tuple_body, setup, teardown),
      cmocka_unit_test_setup_teardown(test_function_called_twice, setup, teardown),
      cmocka_unit_test_setup_teardown(test_function_returning_tuple, setup, teardown),
      cmocka_unit_test_setup_teardown(test_run_other_function, setup, teardown),
      cmocka_unit_test_setup_teardown(test_int64_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bool_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_count_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_dtype_and_shape_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_module_without_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unknown_function, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_error_names_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_unimplemented_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_error_in_callee, setup, teardown),
      cmocka_unit_test_setup_teardown(test_callee_with_free_variable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_signatures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_node_hook, setup, teardown),
      cmocka_unit_test_setup_teardown(test_debug_log_line_per_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deep_chain, setup, teardown),
      cmocka_unit_test_setup_teardown(test_intermediates_are_freed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
