/*
 * Tests of storage_flatten: the te lowering of a split 7x13 elementwise and
 * of a cache_write/compute_at reduction (a local 1x4 Allocate) flatten to
 * one-index accesses with row-major strides, printed exactly, and compute
 * bit-identical results; a hand-built parameter with explicit strides and an
 * element offset, and an access that already has one index, use the
 * documented formula; vector indices are an error naming the buffer; then
 * an allocation-failure sweep.
 */
#include "pass_fixture.h"

static const kiln_tir_prim_func_t *flatten(fixture_t *f, const kiln_tir_prim_func_t *func) {
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_storage_flatten(&f->arena, func, &out));
  return out;
}

static void test_split(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_split(&f.arena), *out = flatten(&f, func);
  pass_check_text(out, "@T.prim_func\n"
                       "def split(A: T.Buffer((7, 13), \"float32\"), B: T.Buffer((7, 13), "
                       "\"float32\"), C: T.Buffer((7, 13), \"float32\")):\n"
                       "    for i in T.parallel(7):\n"
                       "        for j_outer in T.serial(4):\n"
                       "            for j_inner in T.vectorized(4):\n"
                       "                if j_outer * 4 + j_inner < 13:\n"
                       "                    C[i * 13 + j_outer * 4 + j_inner] = A[i * 13 + j_outer "
                       "* 4 + j_inner] * B[i * 13 + j_outer * 4 + j_inner] + A[i * 13 + j_outer * "
                       "4 + j_inner]\n");
  /* Parameters keep their shape; accesses use a flat alias of the same data. */
  const kiln_tir_for_t *i = (const void *)out->body;
  const kiln_tir_for_t *jo = (const void *)i->body;
  const kiln_tir_for_t *ji = (const void *)jo->body;
  const kiln_tir_if_then_else_t *guard = (const void *)ji->body;
  const kiln_tir_buffer_store_t *store = (const void *)guard->then_case;
  assert_ptr_equal(out->params[2], func->params[2]);
  assert_int_equal(store->buffer->ndim, 1);
  assert_ptr_equal(store->buffer->data, func->params[2]->data);
  int64_t extent = 0;
  assert_true(kiln_tir_expr_as_int(store->buffer->shape[0], &extent));
  assert_int_equal(extent, 91);
  pass_check_same(func, out, 11);
  /* Flat already: nothing changes. */
  assert_ptr_equal(flatten(&f, out), out);
  fixture_done(&f);
}

static void test_allocate(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_cached(&f.arena), *out = flatten(&f, func);
  pass_check_text(
      out, "@T.prim_func\n"
           "def cached(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), \"float32\"), C: "
           "T.Buffer((7, 13), \"float32\")):\n"
           "    for i in T.serial(7):\n"
           "        for j_outer in T.serial(4):\n"
           "            C_local = T.decl_buffer((4,), \"float32\", scope=\"local\")\n"
           "            for i_c in T.serial(1):\n"
           "                for j_c_init in T.vectorized(4):\n"
           "                    if j_outer * 4 + j_c_init < 13:\n"
           "                        C_local[i_c * 4 + j_c_init] = T.float32(0.0)\n"
           "                for k in T.serial(5):\n"
           "                    for j_c in T.vectorized(4):\n"
           "                        if j_outer * 4 + j_c < 13:\n"
           "                            C_local[i_c * 4 + j_c] = C_local[i_c * 4 + j_c] + A[i * 5 "
           "+ i_c * 5 + k] * B[k * 13 + j_outer * 4 + j_c]\n"
           "            for j_inner in T.vectorized(4):\n"
           "                if j_outer * 4 + j_inner < 13:\n"
           "                    C[i * 13 + j_outer * 4 + j_inner] = C_local[j_inner]\n");
  pass_check_same(func, out, 12);
  fixture_done(&f);
}

/* A view S of A's 12 elements as 2x3 with strides (6, 2), offset 1: S[i, j]
 * is A[1 + 6i + 2j]; B[v] = S[v // 3, v % 3] + A[v] (A accessed flat). The flat
 * index 6 * (v // 3) + 2 * (v % 3) + 1 simplifies to 2v + 1. */
static const kiln_tir_prim_func_t *strided(fixture_t *f) {
  kiln_tir_builder_t *b = &f->b;
  const int64_t n = 12, m = 6;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_buffer_t *out = kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 1, &m);
  const kiln_tir_expr_t *shape[] = {kiln_tir_b_i32(b, 2), kiln_tir_b_i32(b, 3)};
  const kiln_tir_expr_t *strides[] = {kiln_tir_b_i32(b, 6), kiln_tir_b_i32(b, 2)};
  const kiln_tir_buffer_t *view = NULL;
  KILN_ASSERT_OK(kiln_tir_buffer_create(&f->arena, "S", KILN_DTYPE_FLOAT32, 2, shape, strides,
                                        kiln_tir_b_i32(b, 1), &view));
  kiln_tir_buffer_t *shared = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(&f->arena, sizeof(*shared), 8, (void **)&shared));
  *shared = *view;
  shared->data = a->data; /* S views A's storage */
  const kiln_tir_var_t *v = kiln_tir_b_var(b, "v", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *x = kiln_tir_b_v(v);
  const kiln_tir_expr_t *ix[] = {kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, shape[1]),
                                 kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, shape[1])};
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(b, kiln_tir_b_load(b, shared, 2, ix), pass_load1(b, a, x));
  const kiln_tir_stmt_t *loop = kiln_tir_b_for(b, v, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, 6),
                                               KILN_TIR_FOR_SERIAL, pass_store1(b, out, x, value));
  const kiln_tir_buffer_t *params[] = {a, out};
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(b, "strided", 2, params, loop);
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  return func;
}

static void test_strides_and_offset(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = strided(&f), *out = flatten(&f, func);
  pass_check_text(out, "@T.prim_func\n"
                       "def strided(A: T.Buffer((12,), \"float32\"), B: T.Buffer((6,), "
                       "\"float32\")):\n"
                       "    for v in T.serial(6):\n"
                       "        B[v] = S[v * 2 + 1] + A[v]\n");
  const kiln_tir_for_t *loop = (const void *)out->body;
  const kiln_tir_buffer_store_t *store = (const void *)loop->body;
  const kiln_tir_binary_t *sum = (const void *)store->value;
  const kiln_tir_buffer_load_t *load = (const void *)sum->a;
  int64_t extent = 0;
  assert_true(kiln_tir_expr_as_int(load->buffer->shape[0], &extent));
  assert_int_equal(extent, 1 + 6 + 4 + 1); /* offset + (2-1)*6 + (3-1)*2 + 1 */
  pass_check_same(func, out, 13);
  fixture_done(&f);
}

static void test_vector_index_error(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_split(&f.arena), *vec = NULL, *out = NULL;
  KILN_ASSERT_OK(kiln_tir_loop_partition(&f.arena, func, &func));
  KILN_ASSERT_OK(kiln_tir_vectorize(&f.arena, func, &vec));
  KILN_ASSERT_STATUS(kiln_tir_storage_flatten(&f.arena, vec, &out), INVALID_ARGUMENT,
                     "storage_flatten split: load of A: index 1 is a vector of 4 lanes "
                     "(flatten before vectorize)");
  KILN_ASSERT_STATUS(kiln_tir_storage_flatten(&f.arena, NULL, &out), INVALID_ARGUMENT,
                     "storage_flatten: null function");
  fixture_done(&f);
}

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 64);
  const kiln_tir_prim_func_t *const *func = context, *out = NULL;
  kiln_status_t status = kiln_tir_storage_flatten(&arena, *func, &out);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = pass_workload_cached(&f.arena);
  assert_true(kiln_test_sweep_allocation_failures(sweep_scenario, (void *)&func) > 5);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_allocate),
      cmocka_unit_test(test_strides_and_offset),
      cmocka_unit_test(test_vector_index_error),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
