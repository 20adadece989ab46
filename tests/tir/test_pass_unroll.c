/*
 * Tests of unroll: the matmul with its reduce axis split by 4 and the inner
 * part unrolled becomes four guarded copies (printed exactly) computing
 * bit-identical numbers; with a maximum of 3 the loop stays, as a serial
 * loop; a loop of extent 0 unrolls to nothing; a negative maximum and a null
 * function are errors naming what is wrong; an allocation-failure sweep.
 */
#include "pass_fixture.h"

static const kiln_tir_prim_func_t *unroll(fixture_t *f, const kiln_tir_prim_func_t *func,
                                          int64_t max_extent) {
  kiln_tir_unroll_options_t options = {max_extent};
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_unroll(&f->arena, func, max_extent < 0 ? NULL : &options, &out));
  return out;
}

static void test_matmul(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_matmul(&f.arena), *out = unroll(&f, func, -1);
  pass_check_text(out,
                  "@T.prim_func\n"
                  "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), "
                  "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                  "    for i in T.serial(7):\n"
                  "        for j in T.serial(13):\n"
                  "            C[i, j] = T.float32(0.0)\n"
                  "            for k_outer in T.serial(2):\n"
                  "                if k_outer * 4 + 0 < 5:\n"
                  "                    C[i, j] = C[i, j] + A[i, k_outer * 4 + 0] * B[k_outer * "
                  "4 + 0, j]\n"
                  "                if k_outer * 4 + 1 < 5:\n"
                  "                    C[i, j] = C[i, j] + A[i, k_outer * 4 + 1] * B[k_outer * "
                  "4 + 1, j]\n"
                  "                if k_outer * 4 + 2 < 5:\n"
                  "                    C[i, j] = C[i, j] + A[i, k_outer * 4 + 2] * B[k_outer * "
                  "4 + 2, j]\n"
                  "                if k_outer * 4 + 3 < 5:\n"
                  "                    C[i, j] = C[i, j] + A[i, k_outer * 4 + 3] * B[k_outer * "
                  "4 + 3, j]\n");
  pass_check_same(func, out, 31);
  /* Nothing left to unroll: the same function. */
  assert_ptr_equal(unroll(&f, out, -1), out);
  fixture_done(&f);
}

static void test_over_the_maximum(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_matmul(&f.arena), *out = unroll(&f, func, 3);
  pass_check_text(out, "@T.prim_func\n"
                       "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), "
                       "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                       "    for i in T.serial(7):\n"
                       "        for j in T.serial(13):\n"
                       "            C[i, j] = T.float32(0.0)\n"
                       "            for k_outer in T.serial(2):\n"
                       "                for k_inner in T.serial(4):\n"
                       "                    if k_outer * 4 + k_inner < 5:\n"
                       "                        C[i, j] = C[i, j] + A[i, k_outer * 4 + k_inner] * "
                       "B[k_outer * 4 + k_inner, j]\n");
  pass_check_same(func, out, 32);
  /* Exactly the maximum still unrolls. */
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), unroll(&f, func, 4), &text));
  assert_null(strstr(text, "for k_inner"));
  free(text);
  fixture_done(&f);
}

/* B[v] = A[v] */
static const kiln_tir_stmt_t *copy_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                        const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  return pass_store1(b, out, kiln_tir_b_v(v), pass_load1(b, a, kiln_tir_b_v(v)));
}

static void test_small_loops(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "copy", 3, 3, KILN_TIR_FOR_UNROLLED, 3, copy_body);
  const kiln_tir_prim_func_t *out = unroll(&f, func, -1);
  pass_check_text(out, "@T.prim_func\n"
                       "def copy(A: T.Buffer((3,), \"float32\"), B: T.Buffer((3,), \"float32\")):\n"
                       "    B[0] = A[0]\n"
                       "    B[1] = A[1]\n"
                       "    B[2] = A[2]\n");
  pass_check_same(func, out, 33);
  func = pass_loop_func(&f.b, "empty", 1, 1, KILN_TIR_FOR_UNROLLED, 0, copy_body);
  pass_check_text(unroll(&f, func, -1), "@T.prim_func\n"
                                        "def empty(A: T.Buffer((1,), \"float32\"), B: "
                                        "T.Buffer((1,), \"float32\")):\n"
                                        "    pass\n");
  fixture_done(&f);
}

static void test_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_matmul(&f.arena), *out = NULL;
  kiln_tir_unroll_options_t options = {-2};
  KILN_ASSERT_STATUS(kiln_tir_unroll(&f.arena, func, &options, &out), INVALID_ARGUMENT,
                     "unroll matmul: max extent -2 is negative");
  assert_null(out);
  KILN_ASSERT_STATUS(kiln_tir_unroll(&f.arena, NULL, NULL, &out), INVALID_ARGUMENT,
                     "unroll: null function");
  assert_int_equal(kiln_tir_unroll_options_default().max_extent, KILN_TIR_UNROLL_DEFAULT_MAX);
  fixture_done(&f);
}

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 64);
  const kiln_tir_prim_func_t *const *func = context, *out = NULL;
  kiln_status_t status = kiln_tir_unroll(&arena, *func, NULL, &out);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_matmul(&f.arena);
  assert_true(kiln_test_sweep_allocation_failures(sweep_scenario, (void *)&func) > 5);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_over_the_maximum),
      cmocka_unit_test(test_small_loops),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
