/*
 * Tests of the loop-IR nodes: the checking constructors and their errors,
 * structural equality, the sticky builder, and the visitor and mutator.
 */
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "tir/builder.h"
#include "tir/functor.h"
#include "tir/printer.h"
#include "tir_fixture.h"

static kiln_tir_dtype_t i32(void) {
  return kiln_tir_scalar(KILN_DTYPE_INT32);
}

static kiln_tir_dtype_t f32(void) {
  return kiln_tir_scalar(KILN_DTYPE_FLOAT32);
}

static void test_immediates(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_expr_t *e = NULL;
  KILN_ASSERT_OK(kiln_tir_int_imm_create(&f.arena, i32(), 2147483647, &e));
  int64_t v = 0;
  assert_true(kiln_tir_expr_as_int(e, &v));
  assert_int_equal(v, 2147483647);
  KILN_ASSERT_STATUS(kiln_tir_int_imm_create(&f.arena, i32(), 2147483648LL, &e), OUT_OF_RANGE,
                     "IntImm: 2147483648 does not fit int32");
  assert_null(e);
  KILN_ASSERT_STATUS(kiln_tir_int_imm_create(&f.arena, kiln_tir_scalar(KILN_DTYPE_UINT8), -1, &e),
                     OUT_OF_RANGE, "-1 does not fit uint8");
  KILN_ASSERT_STATUS(kiln_tir_int_imm_create(&f.arena, f32(), 1, &e), INVALID_ARGUMENT,
                     "IntImm: dtype float32 is not a scalar integer or bool");
  KILN_ASSERT_STATUS(kiln_tir_int_imm_create(&f.arena, kiln_tir_vector(KILN_DTYPE_INT32, 4), 1, &e),
                     INVALID_ARGUMENT, "int32x4 is not a scalar");
  KILN_ASSERT_STATUS(kiln_tir_float_imm_create(&f.arena, i32(), 1.0, &e), INVALID_ARGUMENT,
                     "FloatImm: dtype int32 is not a scalar float");
  KILN_ASSERT_OK(kiln_tir_float_imm_create(&f.arena, f32(), 0.1, &e));
  assert_true(((const kiln_tir_float_imm_t *)e)->value == (double)0.1f); /* rounded to float */
  KILN_ASSERT_STATUS(kiln_tir_int_imm_create(&f.arena, kiln_tir_vector(KILN_DTYPE_INT32, 0), 1, &e),
                     INVALID_ARGUMENT, "IntImm: invalid dtype");
  fixture_done(&f);
}

static void test_binary_dtype_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_expr_t *i = kiln_tir_b_v(kiln_tir_b_var(&f.b, "i", KILN_DTYPE_INT32));
  const kiln_tir_expr_t *x = kiln_tir_b_v(kiln_tir_b_var(&f.b, "x", KILN_DTYPE_FLOAT32));
  const kiln_tir_expr_t *p = kiln_tir_b_v(kiln_tir_b_var(&f.b, "p", KILN_DTYPE_BOOL));
  const kiln_tir_expr_t *e = NULL;
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_ADD, i, x, &e),
                     INVALID_ARGUMENT, "Add: operand dtypes differ: int32 and float32");
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_DIV, i, i, &e),
                     INVALID_ARGUMENT, "Div: operands must be floats, not int32");
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_FLOOR_MOD, x, x, &e),
                     INVALID_ARGUMENT, "FloorMod: operands must be integers, not float32");
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_AND, i, i, &e),
                     INVALID_ARGUMENT, "And: operands must be bool, not int32");
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_MUL, p, p, &e),
                     INVALID_ARGUMENT, "Mul: operands must be numbers, not bool");
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_NOT, p, p, &e),
                     INVALID_ARGUMENT, "Not is not a binary kind");
  KILN_ASSERT_STATUS(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_ADD, i, NULL, &e),
                     INVALID_ARGUMENT, "Add: operand is null");
  KILN_ASSERT_OK(kiln_tir_binary_create(&f.arena, KILN_TIR_EXPR_LT, x, x, &e));
  assert_int_equal(e->dtype.base, KILN_DTYPE_BOOL);
  KILN_ASSERT_STATUS(kiln_tir_not_create(&f.arena, i, &e), INVALID_ARGUMENT,
                     "Not: operand must be bool, not int32");
  fixture_done(&f);
}

static void test_other_dtype_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_var_t *iv = kiln_tir_b_var(&f.b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *i = kiln_tir_b_v(iv);
  const kiln_tir_expr_t *x = kiln_tir_b_v(kiln_tir_b_var(&f.b, "x", KILN_DTYPE_FLOAT32));
  const kiln_tir_expr_t *i64 = kiln_tir_b_int(&f.b, KILN_DTYPE_INT64, 1);
  const kiln_tir_expr_t *c = kiln_tir_b_bin(&f.b, KILN_TIR_EXPR_LT, i, i);
  const kiln_tir_expr_t *e = NULL;
  KILN_ASSERT_STATUS(kiln_tir_select_create(&f.arena, c, i, x, &e), INVALID_ARGUMENT,
                     "Select: value dtypes differ: int32 and float32");
  KILN_ASSERT_STATUS(kiln_tir_select_create(&f.arena, i, x, x, &e), INVALID_ARGUMENT,
                     "Select: condition must be bool");
  KILN_ASSERT_STATUS(
      kiln_tir_ramp_create(&f.arena, i, i64, 4, &e), INVALID_ARGUMENT,
      "Ramp: start and stride must be scalar integers of one dtype, not int32 and int64");
  KILN_ASSERT_STATUS(kiln_tir_ramp_create(&f.arena, i, i, 1, &e), INVALID_ARGUMENT,
                     "Ramp: 1 lanes is outside [2, 64]");
  const kiln_tir_expr_t *r = kiln_tir_b_ramp(&f.b, i, kiln_tir_b_i32(&f.b, 1), 4);
  assert_int_equal(r->dtype.lanes, 4);
  KILN_ASSERT_STATUS(kiln_tir_broadcast_create(&f.arena, r, 4, &e), INVALID_ARGUMENT,
                     "Broadcast: value must be a scalar, not int32x4");
  KILN_ASSERT_STATUS(kiln_tir_cast_create(&f.arena, f32(), r, &e), INVALID_ARGUMENT,
                     "Cast: lanes differ: int32x4 to float32");
  const kiln_tir_expr_t *args[] = {x, x};
  KILN_ASSERT_STATUS(kiln_tir_call_create(&f.arena, KILN_TIR_INTRINSIC_EXP, 2, args, &e),
                     INVALID_ARGUMENT, "Call: exp takes 1 arguments, got 2");
  const kiln_tir_expr_t *int_args[] = {i};
  KILN_ASSERT_STATUS(kiln_tir_call_create(&f.arena, KILN_TIR_INTRINSIC_SQRT, 1, int_args, &e),
                     INVALID_ARGUMENT, "Call: sqrt argument 0 must be a float, not int32");
  const kiln_tir_expr_t *float_args[] = {args[0], args[0]};
  KILN_ASSERT_STATUS(
      kiln_tir_call_create(&f.arena, KILN_TIR_INTRINSIC_SHIFT_LEFT, 2, float_args, &e),
      INVALID_ARGUMENT, "Call: shift_left argument 0 must be an integer, not float32");
  KILN_ASSERT_STATUS(kiln_tir_let_create(&f.arena, iv, x, x, &e), INVALID_ARGUMENT,
                     "Let: variable i is int32 but its value is float32");
  fixture_done(&f);
}

static void test_buffer_and_stmt_errors(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {4, 5};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(&f.b, "A", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_var_t *iv = kiln_tir_b_var(&f.b, "i", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *i = kiln_tir_b_v(iv);
  const kiln_tir_expr_t *x = kiln_tir_b_f32(&f.b, 1.0);
  const kiln_tir_expr_t *one[] = {i}, *two[] = {i, i}, *three[] = {i, i, i}, *bad[] = {i, x};
  const kiln_tir_expr_t *e = NULL;
  KILN_ASSERT_OK(kiln_tir_buffer_load_create(&f.arena, A, 1, one, &e)); /* flattened */
  KILN_ASSERT_STATUS(kiln_tir_buffer_load_create(&f.arena, A, 3, three, &e), INVALID_ARGUMENT,
                     "BufferLoad: buffer A has 2 dims but 3 indices were given");
  KILN_ASSERT_STATUS(kiln_tir_buffer_load_create(&f.arena, A, 2, bad, &e), INVALID_ARGUMENT,
                     "BufferLoad: index 1 of buffer A must be an integer, not float32");
  const kiln_tir_stmt_t *s = NULL;
  KILN_ASSERT_STATUS(kiln_tir_buffer_store_create(&f.arena, A, i, 2, two, &s), INVALID_ARGUMENT,
                     "BufferStore: buffer A takes float32, the value is int32");
  const kiln_tir_stmt_t *store = kiln_tir_b_store(&f.b, A, x, 2, two);
  const kiln_tir_expr_t *i64 = kiln_tir_b_int(&f.b, KILN_DTYPE_INT64, 4);
  KILN_ASSERT_STATUS(kiln_tir_for_create(&f.arena, iv, kiln_tir_b_i32(&f.b, 0), i64,
                                         KILN_TIR_FOR_SERIAL, store, 0, NULL, &s),
                     INVALID_ARGUMENT,
                     "For i: loop variable is int32 but min is int32, extent int64");
  KILN_ASSERT_STATUS(kiln_tir_if_then_else_create(&f.arena, i, store, NULL, &s), INVALID_ARGUMENT,
                     "IfThenElse: condition must be a scalar bool, not int32");
  KILN_ASSERT_STATUS(kiln_tir_assert_create(&f.arena, i, "m", store, &s), INVALID_ARGUMENT,
                     "AssertStmt: condition must be a scalar bool");
  const kiln_tir_expr_t *dims[] = {x};
  const kiln_tir_buffer_t *buffer = NULL;
  KILN_ASSERT_STATUS(
      kiln_tir_buffer_create(&f.arena, "B", KILN_DTYPE_FLOAT32, 1, dims, NULL, NULL, &buffer),
      INVALID_ARGUMENT, "buffer B: Buffer: shape must be a scalar integer, not float32");
  const kiln_tir_buffer_t *params[] = {A, A};
  const kiln_tir_prim_func_t *func = NULL;
  KILN_ASSERT_STATUS(kiln_tir_prim_func_create(&f.arena, "f", 2, params, store, 0, NULL, &func),
                     INVALID_ARGUMENT, "PrimFunc f: buffer A is parameter 0 and 1");
  fixture_done(&f);
}

static void test_builder_keeps_first_error(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_expr_t *i = kiln_tir_b_i32(&f.b, 1);
  const kiln_tir_expr_t *x = kiln_tir_b_f32(&f.b, 1.0);
  assert_null(kiln_tir_b_add(&f.b, i, x));                    /* fails: recorded */
  assert_null(kiln_tir_b_bin(&f.b, KILN_TIR_EXPR_DIV, i, i)); /* skipped */
  assert_null(kiln_tir_b_i32(&f.b, 2));
  KILN_ASSERT_STATUS(kiln_tir_builder_finish(&f.b), INVALID_ARGUMENT,
                     "Add: operand dtypes differ: int32 and float32");
  assert_non_null(kiln_tir_b_i32(&f.b, 2)); /* usable again */
  fixture_done(&f);
}

static void test_expr_equal(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const kiln_tir_expr_t *i = kiln_tir_b_v(kiln_tir_b_var(&f.b, "i", KILN_DTYPE_INT32));
  const kiln_tir_expr_t *i2 = kiln_tir_b_v(kiln_tir_b_var(&f.b, "i", KILN_DTYPE_INT32));
  const kiln_tir_expr_t *a = kiln_tir_b_add(&f.b, kiln_tir_b_mul(&f.b, i, kiln_tir_b_i32(&f.b, 4)),
                                            kiln_tir_b_i32(&f.b, 1));
  const kiln_tir_expr_t *b = kiln_tir_b_add(&f.b, kiln_tir_b_mul(&f.b, i, kiln_tir_b_i32(&f.b, 4)),
                                            kiln_tir_b_i32(&f.b, 1));
  const kiln_tir_expr_t *c = kiln_tir_b_add(&f.b, kiln_tir_b_mul(&f.b, i2, kiln_tir_b_i32(&f.b, 4)),
                                            kiln_tir_b_i32(&f.b, 1));
  assert_true(kiln_tir_expr_equal(a, b));
  assert_false(kiln_tir_expr_equal(a, c)); /* variables by identity, not name */
  assert_false(
      kiln_tir_expr_equal(kiln_tir_b_i32(&f.b, 1), kiln_tir_b_int(&f.b, KILN_DTYPE_INT64, 1)));
  fixture_done(&f);
}

/* A visitor that counts Var visits. */
typedef struct var_counter_t {
  kiln_tir_visitor_t visitor;
  int vars;
} var_counter_t;

static kiln_status_t count_var(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  (void)expr;
  ((var_counter_t *)self)->vars++;
  return KILN_OK;
}

/* A mutator that replaces one variable by a constant. */
typedef struct substitute_t {
  kiln_tir_mutator_t mutator;
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *value;
} substitute_t;

static kiln_status_t substitute_var(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                    const kiln_tir_expr_t **out) {
  substitute_t *s = (substitute_t *)self;
  *out = expr == &s->var->base ? s->value : expr;
  return KILN_OK;
}

static void test_visitor_and_mutator(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const int64_t shape[] = {8};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(&f.b, "A", KILN_DTYPE_INT32, 1, shape);
  const kiln_tir_var_t *iv = kiln_tir_b_var(&f.b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *nv = kiln_tir_b_var(&f.b, "n", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *i = kiln_tir_b_v(iv), *n = kiln_tir_b_v(nv);
  const kiln_tir_expr_t *idx[] = {i};
  const kiln_tir_stmt_t *store = kiln_tir_b_store(&f.b, A, kiln_tir_b_add(&f.b, i, n), 1, idx);
  const kiln_tir_stmt_t *loop =
      kiln_tir_b_for(&f.b, iv, kiln_tir_b_i32(&f.b, 0), n, KILN_TIR_FOR_SERIAL, store);
  KILN_ASSERT_OK(kiln_tir_builder_finish(&f.b));

  var_counter_t counter = {.vars = 0};
  kiln_tir_visitor_initialize(&counter.visitor);
  counter.visitor.expr_rules[KILN_TIR_EXPR_VAR] = count_var;
  KILN_ASSERT_OK(kiln_tir_visitor_visit_stmt(&counter.visitor, loop));
  assert_int_equal(counter.vars, 4); /* extent n; value i + n; index i */
  counter.visitor.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = NULL;
  KILN_ASSERT_STATUS(kiln_tir_visitor_visit_stmt(&counter.visitor, loop), UNIMPLEMENTED,
                     "no visit rule for BufferStore");

  substitute_t sub = {.var = nv, .value = kiln_tir_b_i32(&f.b, 8)};
  kiln_tir_mutator_initialize(&sub.mutator, &f.arena);
  sub.mutator.expr_rules[KILN_TIR_EXPR_VAR] = substitute_var;
  const kiln_tir_stmt_t *out = NULL;
  KILN_ASSERT_OK(kiln_tir_mutator_mutate_stmt(&sub.mutator, loop, &out));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_tir_stmt_to_text(kiln_allocator_system(), out, &text));
  assert_string_equal(text, "for i in T.serial(8):\n    A[i] = i + 8\n");
  free(text);
  /* Nothing to change: the very same node comes back. */
  sub.var = kiln_tir_b_var(&f.b, "unused", KILN_DTYPE_INT32);
  KILN_ASSERT_OK(kiln_tir_mutator_mutate_stmt(&sub.mutator, loop, &out));
  assert_ptr_equal(out, loop);
  fixture_done(&f);
}

static kiln_status_t build_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 256);
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, &arena);
  const int64_t shape[] = {4, 5};
  const kiln_tir_buffer_t *A = kiln_tir_b_buffer(&b, "A", KILN_DTYPE_FLOAT32, 2, shape);
  const kiln_tir_var_t *iv = kiln_tir_b_var(&b, "i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *jv = kiln_tir_b_var(&b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *idx[] = {kiln_tir_b_v(iv), kiln_tir_b_v(jv)};
  const kiln_tir_expr_t *value =
      kiln_tir_b_add(&b, kiln_tir_b_load(&b, A, 2, idx), kiln_tir_b_f32(&b, 1.0));
  const kiln_tir_stmt_t *body = kiln_tir_b_store(&b, A, value, 2, idx);
  body = kiln_tir_b_for(&b, jv, kiln_tir_b_i32(&b, 0), kiln_tir_b_i32(&b, 5), KILN_TIR_FOR_SERIAL,
                        body);
  body = kiln_tir_b_for(&b, iv, kiln_tir_b_i32(&b, 0), kiln_tir_b_i32(&b, 4), KILN_TIR_FOR_PARALLEL,
                        body);
  const kiln_tir_prim_func_t *func = kiln_tir_b_func(&b, "inc", 1, &A, body);
  kiln_status_t status = kiln_tir_builder_finish(&b);
  char *text = NULL;
  if (!status) {
    status = kiln_tir_prim_func_to_text(allocator, func, &text);
  }
  kiln_allocator_free(allocator, text);
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_build_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(build_scenario, NULL) > 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_immediates),
      cmocka_unit_test(test_binary_dtype_errors),
      cmocka_unit_test(test_other_dtype_errors),
      cmocka_unit_test(test_buffer_and_stmt_errors),
      cmocka_unit_test(test_builder_keeps_first_error),
      cmocka_unit_test(test_expr_equal),
      cmocka_unit_test(test_visitor_and_mutator),
      cmocka_unit_test(test_build_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
