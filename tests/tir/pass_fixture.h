/*
 * Shared helpers of the lowering-pass tests (tests/tir/test_pass_*.c), on
 * the fixture of tir_fixture.h: the tensor-expression workloads the passes
 * are tested on (te compute, schedule, lower), hand-built one-loop
 * functions, the printed-IR check, and the numeric check: a function
 * before and after a pass run on the loop-IR interpreter over the same
 * pseudo-random float32 arguments must leave every argument bit-identical.
 */
#ifndef KILN_TESTS_TIR_PASS_FIXTURE_H_
#define KILN_TESTS_TIR_PASS_FIXTURE_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "te/lower.h"
#include "tir/interp.h"
#include "tir/printer.h"
#include "tir/transform.h"
#include "tir_fixture.h"

typedef struct pass_rule_t {
  const kiln_te_tensor_t *a;
  const kiln_te_tensor_t *b;
  const kiln_te_iter_var_t *k;
} pass_rule_t;

/* a[ix] * b[ix] + a[ix], for any rank. */
static inline const kiln_tir_expr_t *pass_fma_rule(kiln_tir_builder_t *b,
                                                   const kiln_tir_expr_t *const *ix, void *user) {
  const pass_rule_t *r = user;
  const kiln_tir_expr_t *x = kiln_te_read(b, r->a, r->a->ndim, ix);
  return kiln_tir_b_add(b, kiln_tir_b_mul(b, x, kiln_te_read(b, r->b, r->b->ndim, ix)), x);
}

/* a[i, k] * b[k, j] */
static inline const kiln_tir_expr_t *
pass_matmul_rule(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix, void *user) {
  const pass_rule_t *r = user;
  const kiln_tir_expr_t *k = kiln_tir_b_v(r->k->var);
  const kiln_tir_expr_t *ai[] = {ix[0], k};
  const kiln_tir_expr_t *bi[] = {k, ix[1]};
  return kiln_tir_b_mul(b, kiln_te_read(b, r->a, 2, ai), kiln_te_read(b, r->b, 2, bi));
}

/* C = A * B + A over `shape`, A and B placeholders. */
static inline const kiln_te_tensor_t *pass_make_elementwise(kiln_arena_t *arena, int ndim,
                                                            const int64_t *shape, pass_rule_t *r) {
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "A", ndim, shape, KILN_DTYPE_FLOAT32, &r->a));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "B", ndim, shape, KILN_DTYPE_FLOAT32, &r->b));
  const kiln_te_tensor_t *inputs[] = {r->a, r->b}, *c = NULL;
  KILN_ASSERT_OK(kiln_te_compute(arena, "C", ndim, shape, 2, inputs, pass_fma_rule, r, &c));
  return c;
}

/* 7x13 elementwise, j split by 4, inner vectorized, i parallel. */
static inline const kiln_tir_prim_func_t *pass_workload_split(kiln_arena_t *arena) {
  const int64_t shape[] = {7, 13};
  pass_rule_t *r = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(arena, sizeof(*r), 8, (void **)&r));
  const kiln_te_tensor_t *c = pass_make_elementwise(arena, 2, shape, r);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 1, &c, &s));
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, s->stages[0], kiln_te_tensor_axis(c, 1), 4, &o, &i));
  KILN_ASSERT_OK(kiln_te_vectorize(s->stages[0], i));
  KILN_ASSERT_OK(kiln_te_parallel(s->stages[0], kiln_te_tensor_axis(c, 0)));
  const kiln_te_tensor_t *args[] = {r->a, r->b, c};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "split", 3, args, &func));
  return func;
}

/* 1x3x17x23 elementwise, all axes fused, split by 16, inner vectorized,
 * outer parallel. */
static inline const kiln_tir_prim_func_t *pass_workload_fused(kiln_arena_t *arena) {
  const int64_t shape[] = {1, 3, 17, 23};
  pass_rule_t *r = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(arena, sizeof(*r), 8, (void **)&r));
  const kiln_te_tensor_t *c = pass_make_elementwise(arena, 4, shape, r);
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 1, &c, &s));
  kiln_te_stage_t *st = s->stages[0];
  const kiln_te_iter_var_t *f = kiln_te_tensor_axis(c, 0), *o = NULL, *i = NULL;
  for (int d = 1; d < 4; ++d) {
    KILN_ASSERT_OK(kiln_te_fuse(s, st, f, kiln_te_tensor_axis(c, d), &f));
  }
  KILN_ASSERT_OK(kiln_te_split(s, st, f, 16, &o, &i));
  KILN_ASSERT_OK(kiln_te_vectorize(st, i));
  KILN_ASSERT_OK(kiln_te_parallel(st, o));
  const kiln_te_tensor_t *args[] = {r->a, r->b, c};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "fused", 3, args, &func));
  return func;
}

/* C[i, j] = sum_k A[i, k] * B[k, j], 7x5 by 5x13; k split by 4, the inner
 * part unrolled. */
static inline const kiln_tir_prim_func_t *pass_workload_matmul(kiln_arena_t *arena) {
  const int64_t ashape[] = {7, 5}, bshape[] = {5, 13}, cshape[] = {7, 13};
  pass_rule_t *r = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(arena, sizeof(*r), 8, (void **)&r));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r->a));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "B", 2, bshape, KILN_DTYPE_FLOAT32, &r->b));
  KILN_ASSERT_OK(kiln_te_reduce_axis(arena, "k", 0, 5, &r->k));
  const kiln_te_tensor_t *inputs[] = {r->a, r->b}, *c = NULL;
  KILN_ASSERT_OK(kiln_te_compute_reduce(arena, "C", 2, cshape, KILN_TE_REDUCE_SUM, NULL, 1, &r->k,
                                        2, inputs, pass_matmul_rule, r, &c));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 1, &c, &s));
  const kiln_te_iter_var_t *o = NULL, *i = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, s->stages[0], r->k, 4, &o, &i));
  KILN_ASSERT_OK(kiln_te_unroll(s->stages[0], i));
  const kiln_te_tensor_t *args[] = {r->a, r->b, c};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "matmul", 3, args, &func));
  return func;
}

/* The matmul with cache_write into a local buffer computed at j_outer of C
 * (j split by 4 and vectorized, k reordered outside the vectorized axis),
 * as in tests/te. */
static inline const kiln_tir_prim_func_t *pass_workload_cached(kiln_arena_t *arena) {
  const int64_t ashape[] = {7, 5}, bshape[] = {5, 13}, cshape[] = {7, 13};
  pass_rule_t *r = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(arena, sizeof(*r), 8, (void **)&r));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "A", 2, ashape, KILN_DTYPE_FLOAT32, &r->a));
  KILN_ASSERT_OK(kiln_te_placeholder(arena, "B", 2, bshape, KILN_DTYPE_FLOAT32, &r->b));
  KILN_ASSERT_OK(kiln_te_reduce_axis(arena, "k", 0, 5, &r->k));
  const kiln_te_tensor_t *inputs[] = {r->a, r->b}, *c = NULL, *cl = NULL;
  KILN_ASSERT_OK(kiln_te_compute_reduce(arena, "C", 2, cshape, KILN_TE_REDUCE_SUM, NULL, 1, &r->k,
                                        2, inputs, pass_matmul_rule, r, &c));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(arena, 1, &c, &s));
  KILN_ASSERT_OK(kiln_te_cache_write(s, c, KILN_TIR_SCOPE_LOCAL, &cl));
  kiln_te_stage_t *sc = NULL, *scl = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, c, &sc));
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, cl, &scl));
  const kiln_te_iter_var_t *jo = NULL, *ji = NULL;
  KILN_ASSERT_OK(kiln_te_split(s, sc, kiln_te_tensor_axis(c, 1), 4, &jo, &ji));
  KILN_ASSERT_OK(kiln_te_vectorize(sc, ji));
  KILN_ASSERT_OK(kiln_te_compute_at(scl, sc, jo));
  const kiln_te_iter_var_t *order[] = {r->k, kiln_te_tensor_axis(cl, 1)};
  KILN_ASSERT_OK(kiln_te_reorder(scl, 2, order));
  KILN_ASSERT_OK(kiln_te_vectorize(scl, kiln_te_tensor_axis(cl, 1)));
  const kiln_te_tensor_t *args[] = {r->a, r->b, c};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "cached", 3, args, &func));
  return func;
}

/* The body of a hand-built one-loop function over variable v. */
typedef const kiln_tir_stmt_t *(*pass_body_fn)(kiln_tir_builder_t *b, const kiln_tir_buffer_t *a,
                                               const kiln_tir_buffer_t *out,
                                               const kiln_tir_var_t *v);

/* name(A: (n_in,), B: (n_out,)): for v in kind(extent): body. */
static inline const kiln_tir_prim_func_t *pass_loop_func(kiln_tir_builder_t *b, const char *name,
                                                         int64_t n_in, int64_t n_out,
                                                         kiln_tir_for_kind_t kind, int64_t extent,
                                                         pass_body_fn body) {
  const kiln_tir_buffer_t *params[] = {kiln_tir_b_buffer(b, "A", KILN_DTYPE_FLOAT32, 1, &n_in),
                                       kiln_tir_b_buffer(b, "B", KILN_DTYPE_FLOAT32, 1, &n_out)};
  const kiln_tir_var_t *v = kiln_tir_b_var(b, "v", KILN_DTYPE_INT32);
  const kiln_tir_stmt_t *loop =
      kiln_tir_b_for(b, v, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, extent), kind,
                     params[0] && params[1] && v ? body(b, params[0], params[1], v) : NULL);
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(b, name, 2, params, loop);
  KILN_ASSERT_OK(kiln_tir_builder_finish(b));
  return func;
}

/* `buffer`[index] as a one-element index list. */
static inline const kiln_tir_expr_t *
pass_load1(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer, const kiln_tir_expr_t *index) {
  return kiln_tir_b_load(b, buffer, 1, &index);
}

static inline const kiln_tir_stmt_t *pass_store1(kiln_tir_builder_t *b,
                                                 const kiln_tir_buffer_t *buffer,
                                                 const kiln_tir_expr_t *index,
                                                 const kiln_tir_expr_t *value) {
  return kiln_tir_b_store(b, buffer, value, 1, &index);
}

static inline void pass_check_text(const kiln_tir_prim_func_t *func, const char *expected) {
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, &text));
  if (strcmp(text, expected) != 0) {
    fprintf(stderr, "got:\n%s\nexpected:\n%s\n", text, expected);
  }
  assert_string_equal(text, expected);
  free(text);
}

/* One float32 tensor per parameter (constant shapes), filled from `seed`. */
static inline void pass_make_args(const kiln_tir_prim_func_t *func, uint32_t seed,
                                  kiln_tensor_t **out) {
  for (int p = 0; p < func->num_params; ++p) {
    const kiln_tir_buffer_t *buffer = func->params[p];
    int64_t shape[KILN_TIR_MAX_DIMS], count = 1;
    for (int d = 0; d < buffer->ndim; ++d) {
      assert_true(kiln_tir_expr_as_int(buffer->shape[d], &shape[d]));
      count *= shape[d];
    }
    KILN_ASSERT_OK(
        kiln_tensor_create(kiln_allocator_system(), buffer->dtype, buffer->ndim, shape, &out[p]));
    float *data = kiln_tensor_data(out[p]);
    for (int64_t i = 0; i < count; ++i) {
      seed = seed * 1664525u + 1013904223u;
      data[i] = (float)(seed >> 8) / (float)(1u << 24) * 4.0f - 2.0f;
    }
  }
}

/* Runs `before` and `after` on the same random arguments; every argument
 * must come out bit-identical (and the outputs must have been written). */
static inline void pass_check_same(const kiln_tir_prim_func_t *before,
                                   const kiln_tir_prim_func_t *after, uint32_t seed) {
  assert_int_equal(before->num_params, after->num_params);
  kiln_tensor_t *x[KILN_TIR_MAX_DIMS * 2] = {0}, *y[KILN_TIR_MAX_DIMS * 2] = {0};
  assert_true(before->num_params <= KILN_TIR_MAX_DIMS * 2);
  pass_make_args(before, seed, x);
  pass_make_args(before, seed, y);
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), before, before->num_params, x));
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), after, after->num_params, y));
  for (int p = 0; p < before->num_params; ++p) {
    size_t bytes = kiln_tensor_byte_size(x[p]);
    assert_int_equal(bytes, kiln_tensor_byte_size(y[p]));
    assert_memory_equal(kiln_tensor_data(x[p]), kiln_tensor_data(y[p]), bytes);
  }
  /* The last parameter is the output: the run wrote every element. */
  kiln_tensor_t *fresh[KILN_TIR_MAX_DIMS * 2] = {0};
  pass_make_args(before, seed, fresh);
  int last = before->num_params - 1;
  const float *initial = kiln_tensor_data(fresh[last]), *written = kiln_tensor_data(y[last]);
  for (int64_t i = 0; i < kiln_tensor_element_count(y[last]); ++i) {
    assert_true(initial[i] != written[i]);
  }
  for (int p = 0; p < before->num_params; ++p) {
    kiln_tensor_release(x[p]);
    kiln_tensor_release(y[p]);
    kiln_tensor_release(fresh[p]);
  }
}

#endif /* KILN_TESTS_TIR_PASS_FIXTURE_H_ */
