/*
 * The random converters (onnx_ops_random.c) on the interpreter:
 * RandomUniformLike and RandomNormalLike take their input's shape and
 * dtype (or the dtype attribute), RandomUniform and RandomNormal their
 * shape attribute, Bernoulli its input's dtype; the seed attribute is the
 * generator's, so the numbers are the registry operator's for that seed
 * (op/random_bits.h); a missing shape names the node.
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"
#include "op/random_bits.h"

static void test_uniform_like_takes_shape_dtype_and_seed(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT64, 2, OB_DIMS(2, 3), OR_D(0, 0, 0, 0, 0, 0));
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 13, "RandomUniformLike", "a", 1, &x);
  ob_attr_float(&ob, node, "low", -1.0f);
  ob_attr_float(&ob, node, "high", 1.0f);
  ob_attr_float(&ob, node, "seed", 4.0f);
  or_output(&ob, "y", KILN_DTYPE_FLOAT64);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  uint32_t key = kiln_random_key(4.0);
  double expected[6];
  for (int i = 0; i < 6; ++i) {
    expected[i] = -1.0 + 2.0 * kiln_random_unit(key, (uint64_t)i, 0);
  }
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT64, 2, OB_DIMS(2, 3), expected, 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(x);
}

static void test_normal_of_a_shape(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  Onnx__NodeProto *node = ob_node(&ob, "RandomNormal", "n", "", "y");
  ob_attr_ints(&ob, node, "shape", 2, OB_I64(4, 250));
  ob_attr_float(&ob, node, "mean", 10.0f);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 0, NULL, &run);
  const kiln_tensor_t *y = run.outputs[0];
  assert_int_equal(kiln_tensor_element_count(y), 1000);
  double sum = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    sum += kiln_tensor_element_as_double(y, i);
  }
  assert_true(fabs(sum / 1000 - 10.0) < 0.15);
  or_run_free(&run);
  ob_free(&ob);
}

static void test_bernoulli_keeps_the_dtype(void **state) {
  (void)state;
  kiln_tensor_t *p = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(0, 1, 0, 1));
  ob_t ob;
  or_start(&ob, 15, "Bernoulli", "a", 1, &p);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 1, &p, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(0, 1, 0, 1), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(p);
}

static void test_missing_shape_named(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_node(&ob, "RandomUniform", "n", "", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "(RandomUniform): the shape attribute is missing");
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_uniform_like_takes_shape_dtype_and_seed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_normal_of_a_shape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bernoulli_keeps_the_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_shape_named, setup, teardown),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
