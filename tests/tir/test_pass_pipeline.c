/*
 * Tests of the lowering pipeline (loop_partition -> storage_flatten ->
 * vectorize -> unroll -> simplify -> verify) on the four te workloads: the
 * 7x13 split vectorized with a parallel outer loop, the fused 1x3x17x23
 * split by 16, the matmul with its reduce axis split and unrolled, and the
 * cache_write/compute_at reduction. Each result is printed exactly and
 * computes bit-identical numbers to the te lowering on the interpreter.
 * Then the errors (a null function, bad options, a function verify rejects)
 * and an allocation-failure sweep over the whole pipeline.
 */
#include "pass_fixture.h"

static const char *const golden_split =
    "@T.prim_func\n"
    "def split(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), \"float32\"), C: "
    "T.Buffer((7, 13), \"float32\")):\n"
    "    for i in T.parallel(7):\n"
    "        for j_outer in T.serial(3):\n"
    "            C[T.ramp(i * 13 + j_outer * 4, 1, 4)] = A[T.ramp(i * 13 + j_outer * 4, 1, 4)] * "
    "B[T.ramp(i * 13 + j_outer * 4, 1, 4)] + A[T.ramp(i * 13 + j_outer * 4, 1, 4)]\n"
    "        C[i * 13 + 12] = A[i * 13 + 12] * B[i * 13 + 12] + A[i * 13 + 12]\n";

static const char *const golden_fused =
    "@T.prim_func\n"
    "def fused(A: T.Buffer((1, 3, 17, 23), \"float32\"), B: T.Buffer((1, 3, 17, 23), \"float32\"), "
    "C: T.Buffer((1, 3, 17, 23), \"float32\")):\n"
    "    for i_j_fused_k_fused_l_fused_outer in T.parallel(73):\n"
    "        C[T.ramp(i_j_fused_k_fused_l_fused_outer * 16, 1, 16)] = "
    "A[T.ramp(i_j_fused_k_fused_l_fused_outer * 16, 1, 16)] * "
    "B[T.ramp(i_j_fused_k_fused_l_fused_outer * 16, 1, 16)] + "
    "A[T.ramp(i_j_fused_k_fused_l_fused_outer * 16, 1, 16)]\n"
    "    for i_j_fused_k_fused_l_fused_inner in T.serial(5):\n"
    "        C[i_j_fused_k_fused_l_fused_inner + 1168] = A[i_j_fused_k_fused_l_fused_inner + 1168] "
    "* B[i_j_fused_k_fused_l_fused_inner + 1168] + A[i_j_fused_k_fused_l_fused_inner + 1168]\n";

static const char *const golden_matmul =
    "@T.prim_func\n"
    "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), \"float32\"), C: "
    "T.Buffer((7, 13), \"float32\")):\n"
    "    for i in T.serial(7):\n"
    "        for j in T.serial(13):\n"
    "            C[i * 13 + j] = T.float32(0.0)\n"
    "            C[i * 13 + j] = C[i * 13 + j] + A[i * 5] * B[j]\n"
    "            C[i * 13 + j] = C[i * 13 + j] + A[i * 5 + 1] * B[j + 13]\n"
    "            C[i * 13 + j] = C[i * 13 + j] + A[i * 5 + 2] * B[j + 26]\n"
    "            C[i * 13 + j] = C[i * 13 + j] + A[i * 5 + 3] * B[j + 39]\n"
    "            C[i * 13 + j] = C[i * 13 + j] + A[i * 5 + 4] * B[j + 52]\n";

static const char *const golden_cached =
    "@T.prim_func\n"
    "def cached(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), \"float32\"), C: "
    "T.Buffer((7, 13), \"float32\")):\n"
    "    for i in T.serial(7):\n"
    "        for j_outer in T.serial(3):\n"
    "            C_local = T.decl_buffer((4,), \"float32\", scope=\"local\")\n"
    "            for i_c in T.serial(1):\n"
    "                C_local[T.ramp(i_c * 4, 1, 4)] = T.broadcast(T.float32(0.0), 4)\n"
    "                for k in T.serial(5):\n"
    "                    C_local[T.ramp(i_c * 4, 1, 4)] = C_local[T.ramp(i_c * 4, 1, 4)] + "
    "T.broadcast(A[i * 5 + i_c * 5 + k], 4) * B[T.ramp(k * 13 + j_outer * 4, 1, 4)]\n"
    "            C[T.ramp(i * 13 + j_outer * 4, 1, 4)] = C_local[T.ramp(0, 1, 4)]\n"
    "        C_local = T.decl_buffer((4,), \"float32\", scope=\"local\")\n"
    "        for i_c in T.serial(1):\n"
    "            C_local[i_c * 4] = T.float32(0.0)\n"
    "            for k in T.serial(5):\n"
    "                C_local[i_c * 4] = C_local[i_c * 4] + A[i * 5 + i_c * 5 + k] * B[k * 13 + "
    "12]\n"
    "        C[i * 13 + 12] = C_local[0]\n";

static void check_workload(const kiln_tir_prim_func_t *(*make)(kiln_arena_t *), const char *golden,
                           uint32_t seed) {
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = make(&f.arena), *out = NULL;
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&f.arena, func, NULL, &out));
  pass_check_text(out, golden);
  pass_check_same(func, out, seed);
  fixture_done(&f);
}

static void test_split(void **state) {
  (void)state;
  check_workload(pass_workload_split, golden_split, 41);
}

static void test_fused(void **state) {
  (void)state;
  check_workload(pass_workload_fused, golden_fused, 42);
}

static void test_matmul(void **state) {
  (void)state;
  check_workload(pass_workload_matmul, golden_matmul, 43);
}

static void test_cached(void **state) {
  (void)state;
  check_workload(pass_workload_cached, golden_cached, 44);
}

/* B[v] = A[w] with w bound nowhere. */
static const kiln_tir_stmt_t *unbound_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                           const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  const kiln_tir_var_t *w = kiln_tir_b_var(b, "w", KILN_DTYPE_INT32);
  return pass_store1(b, out, kiln_tir_b_v(v), pass_load1(b, a, kiln_tir_b_v(w)));
}

static void test_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_matmul(&f.arena), *out = NULL;
  KILN_ASSERT_STATUS(kiln_tir_lower_pipeline(&f.arena, NULL, NULL, &out), INVALID_ARGUMENT,
                     "lower_pipeline: null function");
  kiln_tir_pipeline_options_t options = kiln_tir_pipeline_options_default();
  assert_int_equal(options.unroll.max_extent, KILN_TIR_UNROLL_DEFAULT_MAX);
  options.unroll.max_extent = -1;
  KILN_ASSERT_STATUS(kiln_tir_lower_pipeline(&f.arena, func, &options, &out), INVALID_ARGUMENT,
                     "unroll matmul: max extent -1 is negative");
  assert_null(out);
  func = pass_loop_func(&f.b, "unbound", 4, 4, KILN_TIR_FOR_SERIAL, 4, unbound_body);
  KILN_ASSERT_STATUS(kiln_tir_lower_pipeline(&f.arena, func, NULL, &out), INVALID_ARGUMENT,
                     "lower_pipeline: verify: unbound: variable w is used outside the scope that "
                     "binds it");
  fixture_done(&f);
}

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 64);
  const kiln_tir_prim_func_t *const *func = context, *out = NULL;
  kiln_status_t status = kiln_tir_lower_pipeline(&arena, *func, NULL, &out);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *funcs[] = {pass_workload_cached(&f.arena),
                                         pass_workload_matmul(&f.arena)};
  for (int i = 0; i < 2; ++i) {
    assert_true(kiln_test_sweep_allocation_failures(sweep_scenario, (void *)&funcs[i]) > 10);
  }
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),  cmocka_unit_test(test_fused),
      cmocka_unit_test(test_matmul), cmocka_unit_test(test_cached),
      cmocka_unit_test(test_errors), cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
