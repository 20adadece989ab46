/*
 * Tests of inject_prefetch and the Prefetch statement: a matmul whose
 * reduction chunk loop asks for prefetch distance 1 gets fetches of A's
 * and B's next chunk spread over its column loop (printed exactly), with
 * the chunk clamped to the last and every index clamped to the buffer
 * (the split's tail reads past B's rows); it computes the same numbers on
 * the interpreter (which checks every fetch's index) and through the c and
 * llvm backends; a loop without the annotation, or whose loads do not move
 * with it, is left as it is; Prefetch takes only a scalar load.
 */
#include <math.h>

#include "codegen/target.h"
#include "kiln/module.h"
#include "pass_fixture.h"

/* C[i, j] = sum_k A[i, k] * B[k, j] (7xK, Kx13), k split by 4, the loops
 * i, k_outer (annotated "prefetch" = `distance`), j, k_inner. */
static const kiln_tir_prim_func_t *matmul(kiln_arena_t *arena, int64_t k, const char *distance) {
  const int64_t ashape[] = {7, k}, bshape[] = {k, 13}, cshape[] = {7, 13};
  pass_rule_t *r = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(arena, sizeof(*r), 8, (void **)&r));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r->a));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "B", 2, bshape, KILN_DTYPE_FLOAT32, &r->b));
  KILN_ASSERT_OK(kiln_te_reduce_axis(arena, "k", 0, k, &r->k));
  const kiln_te_tensor_t *inputs[] = {r->a, r->b}, *c = NULL;
  KILN_ASSERT_OK(kiln_te_compute_reduce(arena, "C", 2, cshape, KILN_TE_REDUCE_SUM, NULL, 1, &r->k,
                                        2, inputs, pass_matmul_rule, r, &c));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 1, &c, &s));
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, s->stages[0], r->k, 4, &o, &i));
  const kiln_te_iter_var_t *order[] = {kiln_te_tensor_axis(c, 0), o, kiln_te_tensor_axis(c, 1), i};
  KILN_ASSERT_OK(kiln_te_reorder(s->stages[0], 4, order));
  if (distance) {
    KILN_ASSERT_OK(kiln_te_pragma(s, s->stages[0], o, KILN_TIR_PREFETCH_ANNOTATION, distance));
  }
  const kiln_te_tensor_t *args[] = {r->a, r->b, c};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "matmul", 3, args, &func));
  return func;
}

static const kiln_tir_prim_func_t *inject(fixture_t *f, const kiln_tir_prim_func_t *func) {
  KILN_ASSERT_OK(kiln_tir_storage_flatten(&f->arena, func, &func));
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_inject_prefetch(&f->arena, func, &out));
  return out;
}

static void test_matmul_fetches_the_next_chunk(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = matmul(&f.arena, 5, "1"), *out = inject(&f, func);
  /* B's chunk: 4 rows of 13 (a run of 52 floats, 5 lines) and A's: 4
   * floats (2 lines); one of each per column j. */
  pass_check_text(
      out,
      "@T.prim_func\n"
      "def matmul(A: T.Buffer((7, 5), \"float32\"), B: T.Buffer((5, 13), \"float32\"), C: "
      "T.Buffer((7, 13), \"float32\")):\n"
      "    for i in T.serial(7):\n"
      "        for j_init in T.serial(13):\n"
      "            C[i * 13 + j_init] = T.float32(0.0)\n"
      "        for k_outer in T.serial(2, annotations={\"prefetch\": \"1\"}):\n"
      "            for j in T.serial(13):\n"
      "                T.prefetch(A[T.max(T.min(i * 5 + T.min(k_outer + 1, 0 + 2 - 1) * 4 + 0 + "
      "T.min((j - 0) * 16 + 0, 3), 34), 0)])\n"
      "                T.prefetch(B[T.max(T.min(0 + T.min(k_outer + 1, 0 + 2 - 1) * 52 + 0 + "
      "T.min((j - 0) * 16 + 0, 51), 64), 0)])\n"
      "                for k_inner in T.serial(4):\n"
      "                    if k_outer * 4 + k_inner < 5:\n"
      "                        C[i * 13 + j] = C[i * 13 + j] + A[i * 5 + k_outer * 4 + k_inner] * "
      "B[k_outer * 52 + k_inner * 13 + j]\n");
  pass_check_same(func, out, 7);
  fixture_done(&f);
}

/* The whole pipeline (K = 16: no tail for loop_partition to peel), then
 * each backend against the interpreter. */
static void check_backend(const kiln_tir_prim_func_t *func, const char *target) {
  kiln_runtime_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_codegen_build(kiln_allocator_system(), target, &func, 1, &module));
  kiln_tensor_t *x[3] = {0}, *y[3] = {0};
  pass_make_args(func, 11, x);
  pass_make_args(func, 11, y);
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 3, x));
  KILN_ASSERT_OK(kiln_runtime_module_call(module, "matmul", 3, y));
  const float *want = kiln_tensor_data(x[2]), *got = kiln_tensor_data(y[2]);
  for (int64_t i = 0; i < kiln_tensor_element_count(x[2]); ++i) {
    if (fabsf(want[i] - got[i]) > 1e-5f * (1 + fabsf(want[i]))) {
      fail_msg("%s: element %lld is %g, the interpreter gives %g", target, (long long)i, got[i],
               want[i]);
    }
  }
  for (int p = 0; p < 3; ++p) {
    kiln_tensor_release(x[p]);
    kiln_tensor_release(y[p]);
  }
  kiln_runtime_module_release(module);
}

static void test_backends(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_tir_lower_pipeline(&f.arena, matmul(&f.arena, 16, "2"), NULL, &func));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, &text));
  if (!strstr(text, "T.prefetch(B[")) {
    fail_msg("no fetch of B in:\n%s", text);
  }
  free(text);
  check_backend(func, "c");
#ifdef KILN_HAVE_LLVM
  check_backend(func, "llvm");
#endif
  fixture_done(&f);
}

static void test_left_alone(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  /* No annotation, a distance that is not a positive integer. */
  const char *distances[] = {NULL, "0", "-1", "x"};
  for (size_t i = 0; i < sizeof(distances) / sizeof(distances[0]); ++i) {
    const kiln_tir_prim_func_t *func = NULL, *out = NULL;
    KILN_ASSERT_OK(kiln_tir_storage_flatten(&f.arena, matmul(&f.arena, 5, distances[i]), &func));
    KILN_ASSERT_OK(kiln_tir_inject_prefetch(&f.arena, func, &out));
    assert_ptr_equal(out, func);
  }
  fixture_done(&f);
}

/* for v in serial(4) (annotated): B[v] = A[0]: A does not move with v. */
static const kiln_tir_stmt_t *fixed_body(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                         const kiln_tir_buffer_t *out, const kiln_tir_var_t *v) {
  return pass_store1(b, out, kiln_tir_b_v(v), pass_load1(b, a, kiln_tir_b_i32(b, 0)));
}

static void test_loads_that_do_not_move(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_prim_func_t *func =
      pass_loop_func(&f.b, "fixed", 4, 4, KILN_TIR_FOR_SERIAL, 4, fixed_body);
  const kiln_tir_for_t *loop = (const void *)func->body;
  kiln_tir_annotation_t note = {KILN_TIR_PREFETCH_ANNOTATION, "1"};
  const kiln_tir_stmt_t *annotated = NULL;
  KILN_ASSERT_OK(kiln_tir_for_create(&f.arena, loop->var, loop->min, loop->extent, loop->for_kind,
                                     loop->body, 1, &note, &annotated));
  KILN_ASSERT_OK(kiln_tir_prim_func_with_body(&f.arena, func, annotated, &func));
  const kiln_tir_prim_func_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_inject_prefetch(&f.arena, func, &out));
  assert_ptr_equal(out->body, func->body);
  fixture_done(&f);
}

static void test_prefetch_takes_a_scalar_load(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t n = 8;
  const kiln_tir_buffer_t *a = kiln_tir_b_buffer(&f.b, "A", KILN_DTYPE_FLOAT32, 1, &n);
  const kiln_tir_stmt_t *stmt = NULL;
  KILN_ASSERT_STATUS(kiln_tir_prefetch_create(&f.arena, kiln_tir_b_f32(&f.b, 1), &stmt),
                     INVALID_ARGUMENT, "Prefetch: takes a scalar BufferLoad, not a FloatImm");
  assert_null(stmt);
  const kiln_tir_expr_t *ramp =
      kiln_tir_b_ramp(&f.b, kiln_tir_b_i32(&f.b, 0), kiln_tir_b_i32(&f.b, 1), 4);
  KILN_ASSERT_STATUS(kiln_tir_prefetch_create(&f.arena, kiln_tir_b_load(&f.b, a, 1, &ramp), &stmt),
                     INVALID_ARGUMENT, "scalar BufferLoad");
  KILN_ASSERT_STATUS(kiln_tir_prefetch_create(&f.arena, NULL, &stmt), INVALID_ARGUMENT, "load");
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_fetches_the_next_chunk),
      cmocka_unit_test(test_backends),
      cmocka_unit_test(test_left_alone),
      cmocka_unit_test(test_loads_that_do_not_move),
      cmocka_unit_test(test_prefetch_takes_a_scalar_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
