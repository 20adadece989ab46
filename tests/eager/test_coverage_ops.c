/*
 * The operators added for ONNX coverage (image.grid_sample, einsum, dft,
 * vision.roi_align, det) through the eager VM: each call runs in a context
 * on compiled kernels (the default eager target) and in one on reference
 * kernels, on the same inputs, and the outputs agree within rtol 1e-4 and
 * atol 1e-5; the compiled context's kernel cache must have compiled every
 * one of them (none fell back to a reference kernel).
 *
 * An operator whose output shape depends on its inputs' values: the call
 * waits for the shape-like input (here written by an earlier, queued
 * shape_of) and makes outputs of the shape its values give; call_into
 * checks given outputs against that shape.
 */
#include <math.h>
#include <string.h>

#include "kiln/eager.h"
#include "kiln_test.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

enum { MAX_ELEMENTS = 256 };

typedef struct input_t {
  kiln_dtype_t dtype;
  int ndim;
  const int64_t *shape;
  double lo, hi; /* float data spread over [lo, hi]; int64 data cycles 0, 1 */
} input_t;

typedef struct op_case_t {
  const char *op;
  int num_inputs;
  input_t inputs[3];
  int num_attrs;
  kiln_eager_attr_t attrs[3];
} op_case_t;

static int64_t count_of(const input_t *in) {
  int64_t n = 1;
  for (int d = 0; d < in->ndim; ++d) {
    n *= in->shape[d];
  }
  return n;
}

static kiln_eager_tensor_t *make_input(kiln_eager_context_t *context, const input_t *in) {
  int64_t n = count_of(in);
  assert_true(n <= MAX_ELEMENTS);
  float f[MAX_ELEMENTS];
  int64_t l[MAX_ELEMENTS];
  for (int64_t i = 0; i < n; ++i) {
    double t = 0.5 + 0.5 * sin(0.7 * (double)i + 0.3);
    f[i] = (float)(in->lo + t * (in->hi - in->lo));
    l[i] = i % 2;
  }
  bool is_int = in->dtype == KILN_DTYPE_INT64;
  kiln_eager_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_eager_context_tensor_from_host(
      context, in->dtype, in->ndim, in->shape, is_int ? (const void *)l : (const void *)f,
      (size_t)n * (is_int ? sizeof(int64_t) : sizeof(float)), &tensor));
  return tensor;
}

/* Runs the case in `context` and copies its float32 output to `out`. */
static int64_t run_case(kiln_eager_context_t *context, const op_case_t *c, float *out) {
  kiln_eager_tensor_t *inputs[3] = {NULL, NULL, NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    inputs[i] = make_input(context, &c->inputs[i]);
  }
  kiln_eager_tensor_t *result = NULL;
  int count = 0;
  KILN_ASSERT_OK(kiln_eager_context_call(context, c->op, c->num_inputs, inputs, c->num_attrs,
                                         c->attrs, 1, &count, &result));
  assert_int_equal(count, 1);
  int64_t n = 1;
  for (int d = 0; d < kiln_eager_tensor_ndim(result); ++d) {
    n *= kiln_eager_tensor_shape(result)[d];
  }
  assert_true(n <= MAX_ELEMENTS);
  KILN_ASSERT_OK(kiln_eager_tensor_copy_to_host(result, out, (size_t)n * sizeof(float)));
  kiln_eager_tensor_release(result);
  for (int i = 0; i < c->num_inputs; ++i) {
    kiln_eager_tensor_release(inputs[i]);
  }
  return n;
}

static const op_case_t cases[] = {
    {"image.grid_sample",
     2,
     {{KILN_DTYPE_FLOAT32, 4, SHAPE(1, 2, 4, 5), -2, 2},
      {KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 3, 2), -1.3, 1.3}},
     2,
     {{"method", "\"bicubic\""}, {"padding_mode", "\"reflection\""}}},
    {"einsum",
     2,
     {{KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4), -1, 1},
      {KILN_DTYPE_FLOAT32, 3, SHAPE(2, 4, 5), -1, 1}},
     1,
     {{"equation", "\"bij,bjk->bik\""}}},
    {"dft",
     1,
     {{KILN_DTYPE_FLOAT32, 3, SHAPE(2, 6, 2), -1, 1}},
     2,
     {{"axis", "1"}, {"inverse", "True"}}},
    {"vision.roi_align",
     3,
     {{KILN_DTYPE_FLOAT32, 4, SHAPE(2, 1, 4, 4), -2, 2},
      {KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4), 0, 3},
      {KILN_DTYPE_INT64, 1, SHAPE(2), 0, 0}},
     2,
     {{"pooled_size", "[2, 2]"}, {"sample_ratio", "2"}}},
    {"det", 1, {{KILN_DTYPE_FLOAT32, 3, SHAPE(3, 3, 3), -2, 2}}, 0, {{NULL, NULL}}},
};

static void test_compiled_matches_reference(void **state) {
  (void)state;
  kiln_eager_options_t options = kiln_eager_options_default();
  options.reference_kernels = false;
  kiln_eager_context_t *compiled = NULL, *reference = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &compiled));
  options.reference_kernels = true;
  KILN_ASSERT_OK(kiln_eager_context_create(&options, &reference));
  int num_cases = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int c = 0; c < num_cases; ++c) {
    float got[MAX_ELEMENTS], want[MAX_ELEMENTS];
    int64_t n = run_case(compiled, &cases[c], got);
    assert_int_equal(run_case(reference, &cases[c], want), n);
    for (int64_t i = 0; i < n; ++i) {
      if (!(fabs((double)got[i] - want[i]) <= 1e-5 + 1e-4 * fabs((double)want[i]))) {
        fail_msg("%s: element %lld is %g compiled, %g on the reference kernel", cases[c].op,
                 (long long)i, (double)got[i], (double)want[i]);
      }
    }
  }
  kiln_eager_kernel_stats_t stats;
  KILN_ASSERT_OK(kiln_eager_context_get_kernel_stats(compiled, &stats));
  assert_int_equal(stats.reference, 0);
  assert_int_equal(stats.entries, num_cases);
  KILN_ASSERT_OK(kiln_eager_context_get_kernel_stats(reference, &stats));
  assert_int_equal(stats.reference, num_cases);
  kiln_eager_context_destroy(reference);
  kiln_eager_context_destroy(compiled);
}

static kiln_eager_tensor_t *floats(kiln_eager_context_t *context, int ndim, const int64_t *shape,
                                   int64_t n) {
  float data[MAX_ELEMENTS];
  for (int64_t i = 0; i < n; ++i) {
    data[i] = (float)i * 0.5f - 3.0f;
  }
  kiln_eager_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_eager_context_tensor_from_host(context, KILN_DTYPE_FLOAT32, ndim, shape, data,
                                                     (size_t)n * sizeof(float), &t));
  return t;
}

static void test_value_dependent_shapes(void **state) {
  (void)state;
  kiln_eager_context_t *context = NULL;
  KILN_ASSERT_OK(kiln_eager_context_create(NULL, &context));
  kiln_eager_tensor_t *x = floats(context, 3, SHAPE(2, 3, 4), 24);
  kiln_eager_tensor_t *like = floats(context, 2, SHAPE(4, 6), 24);
  kiln_eager_tensor_t *shape = NULL, *r = NULL;
  int count = 0;
  KILN_ASSERT_OK(
      kiln_eager_context_call(context, "shape_of", 1, &like, 0, NULL, 1, &count, &shape));
  kiln_eager_tensor_t *args[2] = {x, shape};
  KILN_ASSERT_OK(kiln_eager_context_call(context, "dyn.reshape", 2, args, 0, NULL, 1, &count, &r));
  assert_int_equal(kiln_eager_tensor_ndim(r), 2);
  assert_int_equal(kiln_eager_tensor_shape(r)[0], 4);
  assert_int_equal(kiln_eager_tensor_shape(r)[1], 6);
  float got[24];
  KILN_ASSERT_OK(kiln_eager_tensor_copy_to_host(r, got, sizeof(got)));
  for (int i = 0; i < 24; ++i) {
    assert_true(got[i] == (float)i * 0.5f - 3.0f);
  }
  kiln_eager_tensor_t *wrong = floats(context, 2, SHAPE(6, 4), 24);
  KILN_ASSERT_STATUS(
      kiln_eager_context_call_into(context, "dyn.reshape", 2, args, 0, NULL, 1, &wrong),
      INVALID_ARGUMENT, "dyn.reshape: output 0 is float32 (6, 4), expected float32 (4, 6)");
  KILN_ASSERT_OK(kiln_eager_context_call_into(context, "dyn.reshape", 2, args, 0, NULL, 1, &like));
  KILN_ASSERT_OK(kiln_eager_tensor_copy_to_host(like, got, sizeof(got)));
  assert_true(got[23] == 8.5f);
  kiln_eager_tensor_t *all[] = {x, like, shape, r, wrong};
  for (int i = 0; i < 5; ++i) {
    kiln_eager_tensor_release(all[i]);
  }
  kiln_eager_context_destroy(context);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compiled_matches_reference),
      cmocka_unit_test(test_value_dependent_shapes),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
