/*
 * Tests of the PrimFunc verifier: a well-formed function with a symbolic
 * shape, a let and a local allocation passes; each kind of ill-formed
 * function fails with a message naming the function and the culprit.
 */
#include "kiln_test.h"
#include "tir/verify.h"
#include "tir_fixture.h"

typedef struct parts_t {
  const kiln_tir_buffer_t *A;   /* (n,) int32, n symbolic */
  const kiln_tir_buffer_t *tmp; /* (4,) int32, allocated locally */
  const kiln_tir_var_t *n, *i, *j, *t;
} parts_t;

static void make_parts(fixture_t *f, parts_t *p) {
  kiln_tir_builder_t *b = &f->b;
  p->n = kiln_tir_b_var(b, "n", KILN_DTYPE_INT32);
  p->i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  p->j = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  p->t = kiln_tir_b_var(b, "t", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *shape[] = {kiln_tir_b_v(p->n)};
  KILN_ASSERT_OK(
      kiln_tir_buffer_create(&f->arena, "A", KILN_DTYPE_INT32, 1, shape, NULL, NULL, &p->A));
  const int64_t four[] = {4};
  p->tmp = kiln_tir_b_buffer(b, "tmp", KILN_DTYPE_INT32, 1, four);
}

static const kiln_tir_stmt_t *store(fixture_t *f, const kiln_tir_buffer_t *buffer,
                                    const kiln_tir_expr_t *index, const kiln_tir_expr_t *value) {
  return kiln_tir_b_store(&f->b, buffer, value, 1, &index);
}

static const kiln_tir_stmt_t *loop(fixture_t *f, const kiln_tir_var_t *var,
                                   const kiln_tir_expr_t *extent, kiln_tir_for_kind_t kind,
                                   const kiln_tir_stmt_t *body) {
  return kiln_tir_b_for(&f->b, var, kiln_tir_b_i32(&f->b, 0), extent, kind, body);
}

static void expect(fixture_t *f, const parts_t *p, const kiln_tir_stmt_t *body, const char *error) {
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(&f->b, "g", 1, &p->A, body);
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f->b));
  if (error) {
    KILN_ASSERT_STATUS(kiln_tir_verify_prim_func(kiln_allocator_system(), func), INVALID_ARGUMENT,
                       error);
  } else {
    KILN_ASSERT_OK(kiln_tir_verify_prim_func(kiln_allocator_system(), func));
  }
}

static void test_verify(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  parts_t p;
  make_parts(&f, &p);
  kiln_tir_builder_t *b = &f.b;
  const kiln_tir_expr_t *i = kiln_tir_b_v(p.i), *n = kiln_tir_b_v(p.n), *t = kiln_tir_b_v(p.t);
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0), *four = kiln_tir_b_i32(b, 4);
  /* for i in T.parallel(n): tmp = decl_buffer((4,)); t = i * 2; tmp[0] = t; A[i] = tmp[0] */
  const kiln_tir_expr_t *z[] = {zero};
  const kiln_tir_stmt_t *steps[] = {store(&f, p.tmp, zero, t),
                                    store(&f, p.A, i, kiln_tir_b_load(b, p.tmp, 1, z))};
  const kiln_tir_stmt_t *inner = kiln_tir_b_let_stmt(
      b, p.t, kiln_tir_b_mul(b, i, kiln_tir_b_i32(b, 2)), kiln_tir_b_seq(b, 2, steps));
  const kiln_tir_stmt_t *good =
      loop(&f, p.i, n, KILN_TIR_FOR_PARALLEL,
           kiln_tir_b_allocate(b, p.tmp, KILN_TIR_SCOPE_LOCAL, KILN_TIR_INIT_NONE, inner));
  expect(&f, &p, good, NULL);

  /* A variable used outside its loop. */
  const kiln_tir_stmt_t *two[] = {loop(&f, p.i, n, KILN_TIR_FOR_SERIAL, store(&f, p.A, i, i)),
                                  store(&f, p.A, i, zero)};
  expect(&f, &p, kiln_tir_b_seq(b, 2, two),
         "g: variable i is used outside the scope that binds it");
  /* A buffer stored outside its Allocate. */
  expect(&f, &p, store(&f, p.tmp, zero, zero), "g: store of buffer tmp outside its allocation");
  const kiln_tir_stmt_t *reads = store(&f, p.A, zero, kiln_tir_b_load(b, p.tmp, 1, z));
  expect(&f, &p, reads, "g: load of buffer tmp outside its allocation");
  /* A loop variable bound twice. */
  expect(&f, &p,
         loop(&f, p.i, four, KILN_TIR_FOR_SERIAL,
              loop(&f, p.i, four, KILN_TIR_FOR_SERIAL, store(&f, p.A, i, i))),
         "g: variable i is bound twice");
  /* Nested parallel loops. */
  expect(&f, &p,
         loop(&f, p.i, four, KILN_TIR_FOR_PARALLEL,
              loop(&f, p.j, four, KILN_TIR_FOR_SERIAL,
                   loop(&f, p.t, four, KILN_TIR_FOR_PARALLEL, store(&f, p.A, i, t)))),
         "g: parallel loop t is nested in parallel loop i: fuse them instead");
  /* Parallel loops one after the other are fine. */
  const kiln_tir_stmt_t *siblings[] = {
      loop(&f, p.i, four, KILN_TIR_FOR_PARALLEL, store(&f, p.A, i, i)),
      loop(&f, p.j, four, KILN_TIR_FOR_PARALLEL, store(&f, p.A, kiln_tir_b_v(p.j), zero))};
  expect(&f, &p, kiln_tir_b_seq(b, 2, siblings), NULL);
  /* A let's variable outside its body. */
  const kiln_tir_expr_t *let = kiln_tir_b_let(b, p.t, four, kiln_tir_b_add(b, t, t));
  expect(&f, &p, store(&f, p.A, zero, kiln_tir_b_add(b, let, t)),
         "g: variable t is used outside the scope that binds it");
  fixture_done(&f);
}

typedef struct verify_context_t {
  const kiln_tir_prim_func_t *func;
} verify_context_t;

static kiln_status_t verify_scenario(kiln_allocator_t allocator, void *context) {
  return kiln_tir_verify_prim_func(allocator, ((const verify_context_t *)context)->func);
}

static void test_verify_allocation_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  parts_t p;
  make_parts(&f, &p);
  const kiln_tir_expr_t *i = kiln_tir_b_v(p.i);
  const kiln_tir_stmt_t *body =
      loop(&f, p.i, kiln_tir_b_v(p.n), KILN_TIR_FOR_PARALLEL, store(&f, p.A, i, i));
  verify_context_t context = {kiln_tir_b_func(&f.b, "g", 1, &p.A, body)};
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));
  assert_true(kiln_test_sweep_allocation_failures(verify_scenario, &context) >= 2);
  fixture_done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_verify),
      cmocka_unit_test(test_verify_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
