/*
 * Compute rules of nn.softmax, nn.log_softmax and nn.lrn
 * (nn_softmax_compute.c), lowered with the default schedule and run on the
 * loop-IR interpreter against the reference kernels (kiln_compute_test.h):
 * a line of 1000, the first, a middle and a negative axis, a vector, lines
 * holding inf and NaN, lrn with odd and even window sizes over odd channel
 * counts; the lowered text of softmax; the dtype error; an allocation
 * failure sweep over lowering.
 */
#include <math.h>

#include "kiln_compute_test.h"
#include "op/nn_common.h"

static const kiln_op_t *const softmax_ops[] = {&kiln_op_softmax, &kiln_op_log_softmax};

static void test_every_operator_has_a_rule(void **state) {
  (void)state;
  assert_non_null(kiln_op_compute_get(kiln_op_softmax.id));
  assert_non_null(kiln_op_compute_get(kiln_op_log_softmax.id));
  assert_non_null(kiln_op_compute_get(kiln_op_lrn.id));
}

static void test_softmax_over_1000(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 1000));
  for (int i = 0; i < 2; ++i) {
    check_compute_random(softmax_ops[i], ATTRS(softmax_ops[i], "axis", "-1"), 1, &type, -8.0, 8.0);
    check_compute_random(softmax_ops[i], ATTRS(softmax_ops[i], "axis", "1"), 1, &type, -8.0, 8.0);
  }
}

static void test_softmax_axes(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 7, 5));
  const char *const axes[] = {"0", "1", "2", "-2", "-3"};
  for (int i = 0; i < 2; ++i) {
    for (int a = 0; a < 5; ++a) {
      check_compute_random(softmax_ops[i], ATTRS(softmax_ops[i], "axis", axes[a]), 1, &type, -3.0,
                           3.0);
    }
  }
  const kiln_type_t *vector = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(13));
  const kiln_type_t *four = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(3, 5, 2, 17));
  for (int i = 0; i < 2; ++i) {
    check_compute_random(softmax_ops[i], ATTRS(softmax_ops[i], "axis", "0"), 1, &vector, -3.0, 3.0);
    check_compute_random(softmax_ops[i], ATTRS(softmax_ops[i], "axis", "-3"), 1, &four, -3.0, 3.0);
  }
}

/* Along the last axis the max and the sum are made in 16 lanes: rows of
 * 1, 15, 16, 17, 64 and 100 (whole vectors and masked tails), rank 1 to
 * 4; a row of 20 with +inf, NaN and -inf past the first vector. */
static void test_softmax_lanes(void **state) {
  (void)state;
  static const int64_t lengths[] = {1, 15, 16, 17, 64, 100};
  for (int i = 0; i < 2; ++i) {
    const void *attrs = ATTRS(softmax_ops[i], "axis", "-1");
    for (int n = 0; n < 6; ++n) {
      const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, lengths[n]));
      check_compute_random(softmax_ops[i], attrs, 1, &type, -8.0, 8.0);
    }
    const kiln_type_t *vector = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(33));
    const kiln_type_t *four = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 3, 5, 19));
    check_compute_random(softmax_ops[i], attrs, 1, &vector, -3.0, 3.0);
    check_compute_random(softmax_ops[i], attrs, 1, &four, -3.0, 3.0);
  }
  float values[4 * 20];
  for (int i = 0; i < 80; ++i) {
    values[i] = (float)(i % 7) - 3.0f;
  }
  values[20 + 18] = INFINITY;
  values[40 + 17] = NAN;
  for (int i = 0; i < 20; ++i) {
    values[60 + i] = i == 19 ? 1.0f : -INFINITY;
  }
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 20), values);
  for (int i = 0; i < 2; ++i) {
    check_compute(softmax_ops[i], ATTRS(softmax_ops[i], "axis", "-1"), 1, &data);
  }
  kiln_tensor_release(data);
}

/* A line with +inf, one with NaN and one of -inf give NaN; the others not. */
static void test_softmax_inf_and_nan(void **state) {
  (void)state;
  float values[4 * 3] = {1.0f, 2.0f, 3.0f, INFINITY,  0.0f,      1.0f,
                         NAN,  1.0f, 2.0f, -INFINITY, -INFINITY, -INFINITY};
  kiln_tensor_t *data = tensor_of(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 3), values);
  for (int i = 0; i < 2; ++i) {
    check_compute(softmax_ops[i], ATTRS(softmax_ops[i], "axis", "1"), 1, &data);
  }
  kiln_tensor_release(data);
}

static void test_lrn_windows(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(2, 7, 3, 5));
  check_compute_random(&kiln_op_lrn, ATTRS(&kiln_op_lrn, "size", "5"), 1, &type, -2.0, 2.0);
  check_compute_random(&kiln_op_lrn, ATTRS(&kiln_op_lrn, "size", "4", "alpha", "0.3"), 1, &type,
                       -2.0, 2.0);
  check_compute_random(
      &kiln_op_lrn,
      ATTRS(&kiln_op_lrn, "size", "3", "axis", "-1", "bias", "1.5", "alpha", "0.5", "beta", "0.6"),
      1, &type, -2.0, 2.0);
  /* A window wider than the channels. */
  check_compute_random(&kiln_op_lrn, ATTRS(&kiln_op_lrn, "size", "9", "alpha", "0.2"), 1, &type,
                       -2.0, 2.0);
  const kiln_type_t *odd = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(3, 11, 1));
  check_compute_random(&kiln_op_lrn, ATTRS(&kiln_op_lrn, "size", "1", "alpha", "1.0"), 1, &odd,
                       -2.0, 2.0);
}

static void test_softmax_lowered_text(void **state) {
  (void)state;
  const kiln_type_t *type = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const char *text =
      lowered_text(&kiln_op_softmax, ATTRS(&kiln_op_softmax, "axis", "1"), 1, &type, 128);
  assert_string_equal(
      text,
      "@T.prim_func\n"
      "def main(p0: T.Buffer((2, 3), \"float32\"), T_softmax: T.Buffer((2, 3), \"float32\")):\n"
      "    T_softmax_maxelem = T.decl_buffer((2,), \"float32\", scope=\"global\")\n"
      "    T_softmax_expsum = T.decl_buffer((2,), \"float32\", scope=\"global\")\n"
      "    for i in T.parallel(2):\n"
      "        T_softmax_maxelem_lanes = T.decl_buffer((1, 16), \"float32\", scope=\"local\")\n"
      "        for i in T.serial(1):\n"
      "            for j_init in T.vectorized(16):\n"
      "                T_softmax_maxelem_lanes[i, j_init] = T.float32(\"-inf\")\n"
      "            for p in T.serial(1):\n"
      "                for j in T.vectorized(16):\n"
      "                    T_softmax_maxelem_lanes[i, j] = T.max(T_softmax_maxelem_lanes[i, j], "
      "T.Select(p * 16 + j < 3, p0[i + i, T.min(p * 16 + j, 2)], T.float32(\"-inf\")))\n"
      "        T_softmax_maxelem[i] = T.float32(\"-inf\")\n"
      "        for l in T.serial(16):\n"
      "            T_softmax_maxelem[i] = T.max(T_softmax_maxelem[i], T_softmax_maxelem_lanes[0, "
      "l])\n"
      "    for i in T.parallel(2):\n"
      "        T_softmax_expsum_lanes = T.decl_buffer((1, 16), \"float32\", scope=\"local\")\n"
      "        for i in T.serial(1):\n"
      "            for j_init in T.vectorized(16):\n"
      "                T_softmax_expsum_lanes[i, j_init] = T.float32(0.0)\n"
      "            for p in T.serial(1):\n"
      "                for j in T.vectorized(16):\n"
      "                    T_softmax_expsum_lanes[i, j] = T_softmax_expsum_lanes[i, j] + "
      "T.Select(p * 16 + j < 3, T.exp(p0[i + i, T.min(p * 16 + j, 2)] - T_softmax_maxelem[i + i]), "
      "T.float32(0.0))\n"
      "        T_softmax_expsum[i] = T.float32(0.0)\n"
      "        for l in T.serial(16):\n"
      "            T_softmax_expsum[i] = T_softmax_expsum[i] + T_softmax_expsum_lanes[0, l]\n"
      "    for i in T.parallel(2):\n"
      "        for j_outer in T.serial(1):\n"
      "            for j_inner in T.vectorized(4):\n"
      "                if j_outer * 4 + j_inner < 3:\n"
      "                    T_softmax[i, j_outer * 4 + j_inner] = T.exp(p0[i, j_outer * 4 + "
      "j_inner] - T_softmax_maxelem[i]) / T_softmax_expsum[i]\n");
}

static void test_dtype_errors(void **state) {
  (void)state;
  kiln_schedule_target_t target = {512};
  const kiln_tir_prim_func_t *func = NULL;
  const kiln_type_t *f64 = ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(3, 5));
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_softmax, ATTRS(&kiln_op_softmax, "axis", "1"), 1, &f64,
                                   &target, &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.softmax: no compute rule for dtype float64");
  KILN_ASSERT_STATUS(kiln_op_lower(&kiln_op_lrn, ATTRS(&kiln_op_lrn, "size", "3"), 1, &f64, &target,
                                   &kiln_op_test_arena, "main", &func),
                     UNIMPLEMENTED, "nn.lrn: no compute rule for dtype float64");
  assert_null(func);
}

typedef struct lower_case_t {
  const kiln_op_t *op;
  const void *attrs;
  const kiln_type_t *type;
} lower_case_t;

static kiln_status_t lower_scenario(kiln_allocator_t allocator, void *context) {
  const lower_case_t *c = context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 1024);
  kiln_schedule_target_t target = {256};
  const kiln_tir_prim_func_t *func = NULL;
  kiln_status_t status = kiln_op_lower(c->op, c->attrs, 1, &c->type, &target, &arena, "f", &func);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  lower_case_t cases[] = {
      {&kiln_op_log_softmax, ATTRS(&kiln_op_log_softmax, "axis", "0"),
       ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5))},
      {&kiln_op_lrn, ATTRS(&kiln_op_lrn, "size", "3"), ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 5))},
  };
  for (int i = 0; i < 2; ++i) {
    assert_true(kiln_test_sweep_allocation_failures(lower_scenario, &cases[i]) > 10);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_operator_has_a_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_over_1000, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_axes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_inf_and_nan, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_lanes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lrn_windows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_lowered_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dtype_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
