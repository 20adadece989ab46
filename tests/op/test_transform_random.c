/*
 * The random operators (op/transform_random.c): their relations and
 * attribute checks; the generator pinned on values computed by hand from
 * its definition (op/random_bits.h); the reference kernels' numbers tested
 * as numbers from a distribution can be (range, mean, variance, the share
 * of ones, a Kolmogorov-Smirnov distance to the uniform law), the same for
 * a seed and different for another; and the compute rules against the
 * reference on every path (kiln_compute_test.h), bit for bit for uniform
 * and bernoulli.
 */
#include <math.h>
#include <stdlib.h>

#include "kiln_compute_test.h"
#include "op/random_bits.h"

static kiln_tensor_t *no_inputs[1];

static kiln_tensor_t *draw(const kiln_op_t *op, void *attrs) {
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(op, attrs, 0, no_inputs, &out));
  return out;
}

static void test_generator_pinned(void **state) {
  (void)state;
  /* lowbias32 of 1: 1 ^ 0 = 1; * 0x7feb352d = 0x7feb352d; ^ >> 15 = 0x7feb352d ^ 0xffd6 =
   * 0x7febcafb; * 0x846ca68b (mod 2^32); ^ >> 16 */
  uint32_t x = 0x7febcafbu * 0x846ca68bu;
  assert_int_equal(kiln_random_hash(1), x ^ (x >> 16));
  assert_int_equal(kiln_random_hash(0), 0);
  uint32_t key = kiln_random_key(0.0);
  assert_int_equal(key, kiln_random_hash(0 ^ kiln_random_hash(KILN_RANDOM_SEED_SALT)));
  assert_int_equal(kiln_random_word(key, 5, 1), kiln_random_hash(kiln_random_hash(key ^ 11) ^ 0));
  uint64_t big = (uint64_t)1 << 40;
  assert_int_equal(kiln_random_word(key, big, 0),
                   kiln_random_hash(kiln_random_hash(key ^ 0) ^ (uint32_t)(2 * big >> 32)));
  assert_true(kiln_random_unit(key, 3, 0) >= 0.0 && kiln_random_unit(key, 3, 0) < 1.0);
  assert_true(kiln_random_key(1.0) != kiln_random_key(2.0));
}

static void test_relations_and_attrs(void **state) {
  (void)state;
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(infer(&kiln_op_random_uniform,
                       ATTRS(&kiln_op_random_uniform, "shape", "[2, 3]", "dtype", "\"float64\""), 0,
                       NULL, &type));
  assert_type(type, KILN_DTYPE_FLOAT64, 2, SHAPE(2, 3));
  KILN_ASSERT_OK(
      infer(&kiln_op_random_normal, ATTRS(&kiln_op_random_normal, "shape", "[]"), 0, NULL, &type));
  assert_type(type, KILN_DTYPE_FLOAT32, 0, NULL);
  KILN_ASSERT_STATUS(infer(&kiln_op_random_uniform,
                           ATTRS(&kiln_op_random_uniform, "shape", "[2, -1]"), 0, NULL, &type),
                     INVALID_ARGUMENT, "random.uniform: shape dim 1 is -1; dims must be >= 0");
  KILN_ASSERT_OK(INFER(&kiln_op_random_bernoulli,
                       ATTRS(&kiln_op_random_bernoulli, "dtype", "\"bool\""), &type,
                       ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5))));
  assert_type(type, KILN_DTYPE_BOOL, 2, SHAPE(4, 5));
  KILN_ASSERT_STATUS(
      INFER(&kiln_op_random_bernoulli, ATTRS(&kiln_op_random_bernoulli, "seed", "1.0"), &type,
            ttype(KILN_DTYPE_INT32, 1, SHAPE(4))),
      INVALID_ARGUMENT, "random.bernoulli: the probabilities are int32; expected a float type");
  assert_attr_invalid(&kiln_op_random_uniform, "dtype", "\"int32\"",
                      KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "random.uniform: dtype int32 is not a float type");
  assert_attr_invalid(&kiln_op_random_uniform, "low", "2.0", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "random.uniform: low 2 and high 1 must be finite, low <= high");
  assert_attr_invalid(&kiln_op_random_normal, "scale", "inf", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "random.normal: mean 0 and scale inf must be finite");
  assert_attr_invalid(&kiln_op_random_normal, "seed", "nan", KILN_STATUS_CODE_INVALID_ARGUMENT,
                      "random.normal: seed nan is not finite");
  assert_defaults(&kiln_op_random_normal, "shape=[], dtype=\"float32\", mean=0, scale=1, seed=0");
}

/* The largest distance between the sample's distribution and U(0, 1). */
static double ks_uniform(const double *sorted, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double below = fabs(sorted[i] - (double)i / (double)n);
    double above = fabs((double)(i + 1) / (double)n - sorted[i]);
    worst = fmax(worst, fmax(below, above));
  }
  return worst;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void test_uniform_distribution(void **state) {
  (void)state;
  enum { N = 20000 };
  kiln_tensor_t *t = draw(&kiln_op_random_uniform,
                          ATTRS(&kiln_op_random_uniform, "shape", "[100, 200]", "dtype",
                                "\"float64\"", "low", "-2.0", "high", "3.0", "seed", "7.0"));
  const double *v = kiln_tensor_data(t);
  double *unit = malloc(N * sizeof(double));
  assert_non_null(unit);
  double sum = 0;
  for (int i = 0; i < N; ++i) {
    assert_true(v[i] >= -2.0 && v[i] < 3.0);
    unit[i] = (v[i] + 2.0) / 5.0;
    sum += v[i];
  }
  qsort(unit, N, sizeof(double), compare_doubles);
  assert_true(fabs(sum / N - 0.5) < 0.05);
  /* 1.63 / sqrt(N): the 1% critical value of the Kolmogorov-Smirnov test */
  assert_true(ks_uniform(unit, N) < 1.63 / sqrt((double)N));
  free(unit);
  kiln_tensor_release(t);
}

static void test_normal_distribution(void **state) {
  (void)state;
  enum { N = 20000 };
  kiln_tensor_t *t =
      draw(&kiln_op_random_normal, ATTRS(&kiln_op_random_normal, "shape", "[20000]", "mean", "1.5",
                                         "scale", "2.0", "seed", "3.0"));
  const float *v = kiln_tensor_data(t);
  double sum = 0, squares = 0;
  int within_one = 0;
  for (int i = 0; i < N; ++i) {
    sum += v[i];
    squares += (v[i] - 1.5) * (v[i] - 1.5);
    within_one += fabs(v[i] - 1.5) < 2.0;
  }
  assert_true(fabs(sum / N - 1.5) < 0.05);
  assert_true(fabs(sqrt(squares / N) - 2.0) < 0.05);
  assert_true(fabs((double)within_one / N - 0.6827) < 0.015); /* one sigma */
  kiln_tensor_release(t);
}

static void test_bernoulli_share_of_ones(void **state) {
  (void)state;
  enum { N = 20000 };
  float *p = f32_scratch(N);
  for (int i = 0; i < N; ++i) {
    p[i] = i < N / 2 ? 0.3f : (i % 2 ? 0.0f : 1.0f);
  }
  kiln_tensor_t *probabilities = tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(N), p);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_random_bernoulli,
                     ATTRS(&kiln_op_random_bernoulli, "dtype", "\"int32\"", "seed", "11.0"), &out,
                     probabilities));
  const int32_t *v = kiln_tensor_data(out);
  int ones = 0;
  for (int i = 0; i < N; ++i) {
    assert_true(v[i] == 0 || v[i] == 1);
    if (i < N / 2) {
      ones += v[i];
    } else {
      assert_int_equal(v[i], i % 2 ? 0 : 1); /* p = 0 and p = 1 are certain */
    }
  }
  assert_true(fabs((double)ones / (N / 2) - 0.3) < 0.02);
  kiln_tensor_release(out);
  kiln_tensor_release(probabilities);
}

static void test_seed_decides(void **state) {
  (void)state;
  kiln_tensor_t *a =
      draw(&kiln_op_random_uniform, ATTRS(&kiln_op_random_uniform, "shape", "[64]", "seed", "5.0"));
  kiln_tensor_t *b =
      draw(&kiln_op_random_uniform, ATTRS(&kiln_op_random_uniform, "shape", "[64]", "seed", "5.0"));
  kiln_tensor_t *c =
      draw(&kiln_op_random_uniform, ATTRS(&kiln_op_random_uniform, "shape", "[64]", "seed", "6.0"));
  assert_memory_equal(kiln_tensor_data(a), kiln_tensor_data(b), 64 * sizeof(float));
  int same = 0;
  for (int i = 0; i < 64; ++i) {
    same += ((const float *)kiln_tensor_data(a))[i] == ((const float *)kiln_tensor_data(c))[i];
  }
  assert_true(same < 4);
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  kiln_tensor_release(c);
}

static void test_compute_matches_reference(void **state) {
  (void)state;
  check_compute(&kiln_op_random_uniform,
                ATTRS(&kiln_op_random_uniform, "shape", "[3, 5, 7]", "low", "-1.0", "high", "4.0",
                      "seed", "2.5"),
                0, no_inputs);
  check_compute(&kiln_op_random_uniform,
                ATTRS(&kiln_op_random_uniform, "shape", "[37]", "dtype", "\"float64\""), 0,
                no_inputs);
  check_compute(&kiln_op_random_uniform,
                ATTRS(&kiln_op_random_uniform, "shape", "[2, 9]", "dtype", "\"float16\""), 0,
                no_inputs);
  check_compute(&kiln_op_random_normal,
                ATTRS(&kiln_op_random_normal, "shape", "[4, 33]", "mean", "-3.0", "scale", "0.5",
                      "seed", "-8.0"),
                0, no_inputs);
  check_compute(&kiln_op_random_normal, ATTRS(&kiln_op_random_normal, "shape", "[]"), 0, no_inputs);
  const char *dtypes[] = {"\"float32\"", "\"bool\"", "\"int64\"", "\"uint8\"", "\"float64\""};
  kiln_tensor_t *p = random_tensor(KILN_DTYPE_FLOAT32, 2, SHAPE(6, 19), 0.0, 1.0);
  for (int i = 0; i < 5; ++i) {
    check_compute(&kiln_op_random_bernoulli,
                  ATTRS(&kiln_op_random_bernoulli, "dtype", dtypes[i], "seed", "4.0"), 1, &p);
  }
  kiln_tensor_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_generator_pinned, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relations_and_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_uniform_distribution, setup, teardown),
      cmocka_unit_test_setup_teardown(test_normal_distribution, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bernoulli_share_of_ones, setup, teardown),
      cmocka_unit_test_setup_teardown(test_seed_decides, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compute_matches_reference, setup, teardown),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
