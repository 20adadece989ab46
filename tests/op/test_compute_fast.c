/*
 * The fast approximations (elemwise_fast.c): accuracy of the reference
 * kernels against libm over each function's range (exp relative 2e-7,
 * tanh and erf absolute 5e-7), clamped tails (saturation, no inf/NaN from
 * large inputs), the type relation (float32 only, named), the compute rules
 * against the reference through check_compute (loop-IR interpreter and C
 * backend), and a dtype the compute rule rejects.
 */
#include <math.h>
#include <stdlib.h>

#include "kiln_compute_test.h"

static void sweep(const kiln_op_t *op, double (*exact)(double), double lo, double hi, double rel,
                  double abs_tol) {
  enum { N = 4001 };
  float *values = malloc(N * sizeof(float));
  for (int i = 0; i < N; ++i) {
    values[i] = (float)(lo + (hi - lo) * i / (N - 1));
  }
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(N), values);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, NULL, in, &out));
  const float *y = kiln_tensor_data(out);
  double worst = 0.0;
  for (int i = 0; i < N; ++i) {
    double want = exact((double)values[i]);
    double err = fabs((double)y[i] - want);
    double allowed = abs_tol + rel * fabs(want);
    if (err > allowed) {
      fail_msg("%s(%.9g) = %.9g, libm %.9g", op->name, (double)values[i], (double)y[i], want);
    }
    worst = fmax(worst, err / (abs_tol + rel * fabs(want)));
  }
  print_message("%s: worst error %.3f of the tolerance\n", op->name, worst);
  kiln_tensor_release(in);
  kiln_tensor_release(out);
  free(values);
}

static void test_accuracy_against_libm(void **state) {
  (void)state;
  sweep(&kiln_op_fast_exp, exp, -87, 88, 2e-7, 0.0);
  sweep(&kiln_op_fast_tanh, tanh, -10, 10, 0.0, 5e-7);
  sweep(&kiln_op_fast_erf, erf, -6, 6, 0.0, 5e-7);
}

static void test_tails_saturate(void **state) {
  (void)state;
  const float values[] = {-1000.0f, -100.0f, 100.0f, 1000.0f};
  kiln_tensor_t *in = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(4), values);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(&kiln_op_fast_tanh, NULL, in, &out));
  const float *y = kiln_tensor_data(out);
  for (int i = 0; i < 4; ++i) {
    assert_float_equal(y[i], values[i] < 0 ? -1.0 : 1.0, 1e-6);
  }
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run1(&kiln_op_fast_exp, NULL, in, &out));
  y = kiln_tensor_data(out);
  assert_true(y[0] > 0.0f && y[0] < 1e-37f); /* clamped at exp(-87.3), not 0 or denormal */
  assert_true(isfinite(y[3]) && y[3] > 1e38f);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_type_relation(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer1(&kiln_op_fast_erf, NULL, ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3)), &out));
  assert_type(out, KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  KILN_ASSERT_STATUS(infer1(&kiln_op_fast_exp, NULL, ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(2)), &out),
                     INVALID_ARGUMENT, "fast_exp: data must be float32, not float64");
}

static void test_compute_rules_match_the_reference(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 37));
  check_compute_random(&kiln_op_fast_exp, NULL, 1, &type, -100, 100);
  check_compute_random(&kiln_op_fast_exp, NULL, 1, &type, -3, 3);
  check_compute_random(&kiln_op_fast_tanh, NULL, 1, &type, -9, 9);
  check_compute_random(&kiln_op_fast_erf, NULL, 1, &type, -5, 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_accuracy_against_libm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tails_saturate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_type_relation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compute_rules_match_the_reference, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
