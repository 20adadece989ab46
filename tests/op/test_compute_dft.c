/*
 * The compute rule of dft (transform_dft_compute.c) against the reference
 * kernel (kiln_compute_test.h), through the loop-IR interpreter and every
 * backend: real and complex signals, forward and inverse, onesided, every
 * signal axis of a 3-D signal, dft_length cutting and padding, odd and
 * prime lengths, float32 and float64; and the rule's dtype error.
 */
#include "kiln_compute_test.h"

static void test_dft(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dft;
  static const char *const flags[] = {"False", "True"};
  const kiln_type_t *real = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 7, 5, 1));
  const kiln_type_t *complex = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 7, 5, 2));
  for (int inverse = 0; inverse < 2; ++inverse) {
    for (int onesided = 0; onesided < 2; ++onesided) {
      for (int axis = 1; axis <= 2; ++axis) {
        const char *axis_text = axis == 1 ? "1" : "-2";
        check_compute_random(
            op,
            ATTRS(op, "axis", axis_text, "inverse", flags[inverse], "onesided", flags[onesided]), 1,
            &real, -2, 2);
        check_compute_random(
            op,
            ATTRS(op, "axis", axis_text, "inverse", flags[inverse], "onesided", flags[onesided]), 1,
            &complex, -2, 2);
      }
    }
  }
  check_compute_random(op, ATTRS(op, "axis", "1", "dft_length", "3"), 1, &complex, -2, 2);
  check_compute_random(op, ATTRS(op, "axis", "2", "dft_length", "13"), 1, &real, -2, 2);
  const kiln_type_t *wide = ttype(KILN_DTYPE_FLOAT64, 3, SHAPE(3, 17, 2));
  check_compute_random(op, ATTRS(op, "axis", "1"), 1, &wide, -2, 2);
  check_compute_random(op, ATTRS(op, "axis", "1", "inverse", "True", "onesided", "True"), 1, &wide,
                       -2, 2);
}

static void test_errors(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_dft;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 3, SHAPE(1, 4, 1));
  KILN_ASSERT_STATUS(
      kiln_op_lower(op, ATTRS(op, "axis", "1"), 1, &i32, &target, &kiln_op_test_arena, "f", &func),
      UNIMPLEMENTED, "dft: the compute rule does not handle int32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dft, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
