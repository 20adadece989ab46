/*
 * Tests of extern ops and rank-0 tensors: an extern running sum (a loop
 * over its output, reading back what it wrote) feeding a compute, lowered
 * with the extern's output allocated as an intermediate, printed and run;
 * a compute inlined into an extern's loads; a sum of a 3x4 tensor into a
 * rank-0 tensor read by a rank-0 compute; and every error path of extern
 * bodies and of schedule primitives on extern stages.
 */
#include <string.h>

#include "kiln_test.h"
#include "te/lower.h"
#include "tir/interp.h"
#include "tir/printer.h"

typedef struct fixture_t {
  kiln_arena_t arena;
} fixture_t;

static void fixture_init(fixture_t *f) {
  kiln_arena_initialize(&f->arena, kiln_allocator_system(), 0);
}

static void fixture_done(fixture_t *f) {
  kiln_arena_deinitialize(&f->arena);
}

static kiln_tensor_t *f32_tensor(int ndim, const int64_t *shape, const float *data) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &t));
  if (data) {
    memcpy(kiln_tensor_data(t), data, kiln_tensor_byte_size(t));
  }
  return t;
}

/* out[0] = in[0]; for i in 1..n: out[i] = out[i - 1] + in[i]. */
static const kiln_tir_stmt_t *running_sum(kiln_tir_builder_t *b, const kiln_tir_buffer_t *const *in,
                                          const kiln_tir_buffer_t *const *out, void *user) {
  int64_t n = *(const int64_t *)user;
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  const kiln_tir_stmt_t *first =
      kiln_tir_b_store(b, out[0], kiln_tir_b_load(b, in[0], 1, &zero), 1, &zero);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *at = kiln_tir_b_v(i);
  const kiln_tir_expr_t *prev = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, at, kiln_tir_b_i32(b, 1));
  const kiln_tir_stmt_t *step = kiln_tir_b_store(
      b, out[0],
      kiln_tir_b_add(b, kiln_tir_b_load(b, out[0], 1, &prev), kiln_tir_b_load(b, in[0], 1, &at)), 1,
      &at);
  const kiln_tir_stmt_t *loop = kiln_tir_b_for(b, i, kiln_tir_b_i32(b, 1), kiln_tir_b_i32(b, n - 1),
                                               KILN_TIR_FOR_SERIAL, step);
  const kiln_tir_stmt_t *both[] = {first, loop};
  return kiln_tir_b_seq(b, 2, both);
}

/* The same running sum through a one-element local accumulator the body
 * allocates itself: acc = 0; for i: acc += in[i]; out[i] = acc. */
static const kiln_tir_stmt_t *running_sum_local(kiln_tir_builder_t *b,
                                                const kiln_tir_buffer_t *const *in,
                                                const kiln_tir_buffer_t *const *out, void *user) {
  int64_t n = *(const int64_t *)user, one = 1;
  const kiln_tir_buffer_t *acc = kiln_tir_b_buffer(b, "acc", KILN_DTYPE_FLOAT32, 1, &one);
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *at = kiln_tir_b_v(i);
  const kiln_tir_stmt_t *step[] = {
      kiln_tir_b_store(
          b, acc,
          kiln_tir_b_add(b, kiln_tir_b_load(b, acc, 1, &zero), kiln_tir_b_load(b, in[0], 1, &at)),
          1, &zero),
      kiln_tir_b_store(b, out[0], kiln_tir_b_load(b, acc, 1, &zero), 1, &at)};
  const kiln_tir_stmt_t *body[] = {kiln_tir_b_store(b, acc, kiln_tir_b_f32(b, 0.0), 1, &zero),
                                   kiln_tir_b_for(b, i, zero, kiln_tir_b_i32(b, n),
                                                  KILN_TIR_FOR_SERIAL, kiln_tir_b_seq(b, 2, step))};
  return kiln_tir_b_allocate(b, acc, KILN_TIR_SCOPE_LOCAL, KILN_TIR_INIT_NONE,
                             kiln_tir_b_seq(b, 2, body));
}

typedef struct pair_t {
  const kiln_te_tensor_t *a;
  double scale;
} pair_t;

static const kiln_tir_expr_t *scaled(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                     void *user) {
  const pair_t *p = user;
  return kiln_tir_b_mul(b, kiln_te_read(b, p->a, 1, ix), kiln_tir_b_f32(b, p->scale));
}

static void test_extern_feeds_compute(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  int64_t n = 5;
  const kiln_te_tensor_t *x = NULL, *sums = NULL, *y = NULL;
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "x", 1, &n, KILN_DTYPE_FLOAT32, &x));
  kiln_te_extern_output_t out = {"sums", 1, &n, KILN_DTYPE_FLOAT32};
  KILN_ASSERT_OK(kiln_te_extern(&f.arena, "running_sum", 1, &out, 1, &x, running_sum, &n, &sums));
  pair_t p = {sums, 2.0};
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "y", 1, &n, 1, &sums, scaled, &p, &y));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &y, &s));
  assert_int_equal(s->num_stages, 2);
  const kiln_te_tensor_t *args[] = {x, y};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "main", 2, args, &func));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_prim_func_to_text(kiln_arena_allocator(&f.arena), func, &text));
  assert_string_equal(text,
                      "@T.prim_func\n"
                      "def main(x: T.Buffer((5,), \"float32\"), y: T.Buffer((5,), \"float32\")):\n"
                      "    sums = T.decl_buffer((5,), \"float32\", scope=\"global\")\n"
                      "    sums[0] = x[0]\n"
                      "    for i in T.serial(1, 1 + 4):\n"
                      "        sums[i] = sums[i - 1] + x[i]\n"
                      "    for i in T.serial(5):\n"
                      "        y[i] = sums[i] * T.float32(2.0)\n");
  const float xs[] = {1, 2, 3, 4, 5};
  kiln_tensor_t *tx = f32_tensor(1, &n, xs), *ty = f32_tensor(1, &n, NULL);
  kiln_tensor_t *targs[] = {tx, ty};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 2, targs));
  const float want[] = {2, 6, 12, 20, 30};
  assert_memory_equal(kiln_tensor_data(ty), want, sizeof(want));
  kiln_tensor_release(tx);
  kiln_tensor_release(ty);
  fixture_done(&f);
}

static void test_compute_inlines_into_extern(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  int64_t n = 4;
  const kiln_te_tensor_t *x = NULL, *tripled = NULL, *sums = NULL;
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "x", 1, &n, KILN_DTYPE_FLOAT32, &x));
  pair_t p = {x, 3.0};
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "tripled", 1, &n, 1, &x, scaled, &p, &tripled));
  kiln_te_extern_output_t out = {"sums", 1, &n, KILN_DTYPE_FLOAT32};
  KILN_ASSERT_OK(
      kiln_te_extern(&f.arena, "running_sum", 1, &out, 1, &tripled, running_sum, &n, &sums));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &sums, &s));
  kiln_te_stage_t *stage = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, tripled, &stage));
  KILN_ASSERT_OK(kiln_te_compute_inline(stage));
  const kiln_te_tensor_t *args[] = {x, sums};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "main", 2, args, &func));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_arena_allocator(&f.arena), func->body, &text));
  assert_string_equal(text, "sums[0] = x[0] * T.float32(3.0)\n"
                            "for i in T.serial(1, 1 + 3):\n"
                            "    sums[i] = sums[i - 1] + x[i] * T.float32(3.0)\n");
  const float xs[] = {1, -1, 2, 0.5f};
  kiln_tensor_t *tx = f32_tensor(1, &n, xs), *ts = f32_tensor(1, &n, NULL);
  kiln_tensor_t *targs[] = {tx, ts};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 2, targs));
  const float want[] = {3, 0, 6, 7.5f};
  assert_memory_equal(kiln_tensor_data(ts), want, sizeof(want));
  kiln_tensor_release(tx);
  kiln_tensor_release(ts);
  fixture_done(&f);
}

static void test_extern_with_local_accumulator(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  int64_t n = 4;
  const kiln_te_tensor_t *x = NULL, *sums = NULL;
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "x", 1, &n, KILN_DTYPE_FLOAT32, &x));
  kiln_te_extern_output_t out = {"sums", 1, &n, KILN_DTYPE_FLOAT32};
  KILN_ASSERT_OK(
      kiln_te_extern(&f.arena, "running_sum", 1, &out, 1, &x, running_sum_local, &n, &sums));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &sums, &s));
  const kiln_te_tensor_t *args[] = {x, sums};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "main", 2, args, &func));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_arena_allocator(&f.arena), func->body, &text));
  assert_string_equal(text, "acc = T.decl_buffer((1,), \"float32\", scope=\"local\")\n"
                            "acc[0] = T.float32(0.0)\n"
                            "for i in T.serial(4):\n"
                            "    acc[0] = acc[0] + x[i]\n"
                            "    sums[i] = acc[0]\n");
  const float xs[] = {1, -1, 2, 0.5f};
  kiln_tensor_t *tx = f32_tensor(1, &n, xs), *ts = f32_tensor(1, &n, NULL);
  kiln_tensor_t *targs[] = {tx, ts};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 2, targs));
  const float want[] = {1, 0, 2, 2.5f};
  assert_memory_equal(kiln_tensor_data(ts), want, sizeof(want));
  kiln_tensor_release(tx);
  kiln_tensor_release(ts);
  fixture_done(&f);
}

typedef struct reduce_t {
  const kiln_te_tensor_t *a;
  const kiln_te_iter_var_t *r, *c;
} reduce_t;

static const kiln_tir_expr_t *all_elements(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                           void *user) {
  (void)ix;
  const reduce_t *r = user;
  const kiln_tir_expr_t *at[] = {kiln_tir_b_v(r->r->var), kiln_tir_b_v(r->c->var)};
  return kiln_te_read(b, r->a, 2, at);
}

static const kiln_tir_expr_t *plus_one(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *ix,
                                       void *user) {
  return kiln_tir_b_add(b, kiln_te_read(b, user, 0, ix), kiln_tir_b_f32(b, 1.0));
}

static void test_rank0_reduction(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {3, 4};
  const kiln_te_tensor_t *a = NULL, *total = NULL, *next = NULL;
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "a", 2, shape, KILN_DTYPE_FLOAT32, &a));
  reduce_t r = {a, NULL, NULL};
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f.arena, "r", 0, 3, &r.r));
  KILN_ASSERT_OK(kiln_te_reduce_axis(&f.arena, "c", 0, 4, &r.c));
  const kiln_te_iter_var_t *axes[] = {r.r, r.c};
  KILN_ASSERT_OK(kiln_te_compute_reduce(&f.arena, "total", 0, NULL, KILN_TE_REDUCE_SUM, NULL, 2,
                                        axes, 1, &a, all_elements, &r, &total));
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "next", 0, NULL, 1, &total, plus_one,
                                 (void *)(uintptr_t)total, &next));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &next, &s));
  const kiln_te_tensor_t *args[] = {a, next};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_OK(kiln_te_lower(s, "main", 2, args, &func));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_arena_allocator(&f.arena), func->body, &text));
  assert_string_equal(text, "total = T.decl_buffer((), \"float32\", scope=\"global\")\n"
                            "total[0] = T.float32(0.0)\n"
                            "for r in T.serial(3):\n"
                            "    for c in T.serial(4):\n"
                            "        total[0] = total[0] + a[r, c]\n"
                            "next[0] = total[0] + T.float32(1.0)\n");
  const float as[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  kiln_tensor_t *ta = f32_tensor(2, shape, as), *tn = f32_tensor(0, NULL, NULL);
  kiln_tensor_t *targs[] = {ta, tn};
  KILN_ASSERT_OK(kiln_tir_interp_run(kiln_allocator_system(), func, 2, targs));
  assert_true(*(const float *)kiln_tensor_data(tn) == 79.0f);
  kiln_tensor_release(ta);
  kiln_tensor_release(tn);
  fixture_done(&f);
}

/* Writes its input: not allowed. */
static const kiln_tir_stmt_t *writes_input(kiln_tir_builder_t *b,
                                           const kiln_tir_buffer_t *const *in,
                                           const kiln_tir_buffer_t *const *out, void *user) {
  (void)out;
  (void)user;
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  return kiln_tir_b_store(b, in[0], kiln_tir_b_f32(b, 1.0), 1, &zero);
}

/* Reads a buffer that is neither input nor output. */
static const kiln_tir_stmt_t *reads_stranger(kiln_tir_builder_t *b,
                                             const kiln_tir_buffer_t *const *in,
                                             const kiln_tir_buffer_t *const *out, void *user) {
  (void)in;
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  return kiln_tir_b_store(
      b, out[0], kiln_tir_b_load(b, *(const kiln_tir_buffer_t **)user, 1, &zero), 1, &zero);
}

static const kiln_tir_stmt_t *nothing(kiln_tir_builder_t *b, const kiln_tir_buffer_t *const *in,
                                      const kiln_tir_buffer_t *const *out, void *user) {
  (void)b;
  (void)in;
  (void)out;
  (void)user;
  return NULL;
}

static void test_extern_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  int64_t n = 4;
  const kiln_te_tensor_t *x = NULL, *t = NULL;
  KILN_ASSERT_OK(kiln_te_placeholder(&f.arena, "x", 1, &n, KILN_DTYPE_FLOAT32, &x));
  kiln_te_extern_output_t out = {"o", 1, &n, KILN_DTYPE_FLOAT32};
  KILN_ASSERT_STATUS(kiln_te_extern(&f.arena, "bad", 1, &out, 1, &x, writes_input, NULL, &t),
                     INVALID_ARGUMENT,
                     "extern bad: the body writes buffer x, which is not one of its outputs");
  const kiln_tir_buffer_t *stranger = NULL;
  KILN_ASSERT_OK(
      kiln_tir_buffer_create_const(&f.arena, "stranger", KILN_DTYPE_FLOAT32, 1, &n, &stranger));
  KILN_ASSERT_STATUS(kiln_te_extern(&f.arena, "bad", 1, &out, 1, &x, reads_stranger, &stranger, &t),
                     INVALID_ARGUMENT,
                     "extern bad: the body reads buffer stranger, which is none of its inputs");
  KILN_ASSERT_STATUS(kiln_te_extern(&f.arena, "bad", 1, &out, 1, &x, nothing, NULL, &t),
                     INVALID_ARGUMENT, "extern bad: fbody returned no statement");
  KILN_ASSERT_STATUS(kiln_te_extern(&f.arena, "bad", 0, &out, 1, &x, nothing, NULL, &t),
                     INVALID_ARGUMENT, "extern bad: 0 outputs and 1 inputs");
  kiln_te_extern_output_t negative = {"o", 1, (const int64_t[]){-1}, KILN_DTYPE_FLOAT32};
  KILN_ASSERT_STATUS(kiln_te_extern(&f.arena, "bad", 1, &negative, 1, &x, nothing, NULL, &t),
                     INVALID_ARGUMENT, "extern bad: extent -1 of dim 0");
  /* Schedule primitives refuse extern stages. */
  const kiln_te_tensor_t *sums = NULL, *y = NULL;
  KILN_ASSERT_OK(kiln_te_extern(&f.arena, "running_sum", 1, &out, 1, &x, running_sum, &n, &sums));
  pair_t p = {sums, 2.0};
  KILN_ASSERT_OK(kiln_te_compute(&f.arena, "y", 1, &n, 1, &sums, scaled, &p, &y));
  kiln_te_schedule_t *s = NULL;
  KILN_ASSERT_OK(kiln_te_create_schedule(&f.arena, 1, &y, &s));
  kiln_te_stage_t *ext = NULL, *ys = NULL;
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, sums, &ext));
  KILN_ASSERT_OK(kiln_te_schedule_stage(s, y, &ys));
  KILN_ASSERT_STATUS(kiln_te_compute_inline(ext), INVALID_ARGUMENT,
                     "compute_inline: stage running_sum is an extern op");
  KILN_ASSERT_STATUS(kiln_te_compute_at(ext, ys, kiln_te_tensor_axis(y, 0)), INVALID_ARGUMENT,
                     "compute_at: stage running_sum is an extern op");
  const kiln_te_tensor_t *cache = NULL;
  KILN_ASSERT_STATUS(kiln_te_cache_write(s, sums, KILN_TIR_SCOPE_LOCAL, &cache), INVALID_ARGUMENT,
                     "cache_write: stage running_sum is an extern op");
  fixture_done(&f);
}

static kiln_status_t extern_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 512);
  int64_t n = 5;
  const kiln_te_tensor_t *x = NULL, *sums = NULL, *y = NULL;
  kiln_te_schedule_t *s = NULL;
  const kiln_tir_prim_func_t *func = NULL;
  kiln_te_extern_output_t out = {"sums", 1, &n, KILN_DTYPE_FLOAT32};
  pair_t p = {NULL, 2.0};
  kiln_status_t status = kiln_te_placeholder(&arena, "x", 1, &n, KILN_DTYPE_FLOAT32, &x);
  if (!status) {
    status = kiln_te_extern(&arena, "running_sum", 1, &out, 1, &x, running_sum, &n, &sums);
  }
  if (!status) {
    p.a = sums;
    status = kiln_te_compute(&arena, "y", 1, &n, 1, &sums, scaled, &p, &y);
  }
  if (!status) {
    status = kiln_te_create_schedule(&arena, 1, &y, &s);
  }
  if (!status) {
    const kiln_te_tensor_t *args[] = {x, y};
    status = kiln_te_lower(s, "main", 2, args, &func);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  KILN_ASSERT_OK(extern_scenario(kiln_allocator_system(), NULL));
  assert_true(kiln_test_sweep_allocation_failures(extern_scenario, NULL) > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_extern_feeds_compute),
      cmocka_unit_test(test_compute_inlines_into_extern),
      cmocka_unit_test(test_extern_with_local_accumulator),
      cmocka_unit_test(test_rank0_reduction),
      cmocka_unit_test(test_extern_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
