/*
 * Compute rules of the elementwise operators, lowered with the default
 * schedule and run on the loop-IR interpreter against the reference
 * kernels (kiln_compute_test.h), on odd shapes with broadcasting.
 */
#include "kiln_compute_test.h"

static void test_relu_matches_reference(void **state) {
  (void)state;
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 17, 23));
  check_compute_random(&kiln_op_relu, NULL, 1, &f32, -2.0, 2.0);
  const kiln_type_t *i8 = ttype(KILN_DTYPE_INT8, 2, SHAPE(7, 13));
  check_compute_random(&kiln_op_relu, NULL, 1, &i8, -100, 100);
}

static void test_add_broadcasts(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(7, 1, 13)),
                                ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(5, 1))};
  check_compute_random(&kiln_op_add, NULL, 2, types, -2.0, 2.0);
  const kiln_type_t *ints[] = {ttype(KILN_DTYPE_INT32, 1, SHAPE(33)),
                               ttype(KILN_DTYPE_INT32, 0, NULL)};
  check_compute_random(&kiln_op_add, NULL, 2, ints, -1000, 1000);
}

static void test_default_schedule_shape(void **state) {
  (void)state;
  const kiln_type_t *types[] = {ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(7, 13)),
                                ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(13))};
  const char *text = lowered_text(&kiln_op_add, NULL, 2, types, 512);
  assert_string_equal(
      text, "@T.prim_func\n"
            "def main(p0: T.Buffer((7, 13), \"float32\"), p1: T.Buffer((13,), \"float32\"), T_add: "
            "T.Buffer((7, 13), \"float32\")):\n"
            "    for i_j_fused_outer in T.parallel(6):\n"
            "        for i_j_fused_inner in T.vectorized(16):\n"
            "            if i_j_fused_outer * 16 + i_j_fused_inner < 91:\n"
            "                T_add[(i_j_fused_outer * 16 + i_j_fused_inner) // 13, "
            "(i_j_fused_outer * 16 + "
            "i_j_fused_inner) % 13] = p0[(i_j_fused_outer * 16 + i_j_fused_inner) // 13, "
            "(i_j_fused_outer * 16 + i_j_fused_inner) % 13] + p1[(i_j_fused_outer * 16 + "
            "i_j_fused_inner) % 13]\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_relu_matches_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_add_broadcasts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_schedule_shape, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
