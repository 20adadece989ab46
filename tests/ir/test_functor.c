/*
 * Tests of the graph IR's nodes, module, functor, visitor and mutator: what
 * ir/functor.h promises. Calls use a test-local operator so these tests do not
 * depend on the operator families.
 */
#include <string.h>

#include "ir/functor.h"
#include "kiln_test.h"
#include "op/op.h"

static const kiln_op_t test_op = {
    .name = "test.any",
    .min_inputs = 1,
    .max_inputs = -1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
};

typedef struct diamond_t {
  kiln_module_t *module;
  kiln_var_t *x;
  kiln_constant_t *k;
  kiln_call_t *a, *b, *c, *e;
  kiln_tuple_t *d;
  kiln_function_t *f;
} diamond_t;

static kiln_expr_t *as_expr(void *node) {
  return (kiln_expr_t *)node;
}

/* a = op(x, k); b = op(a); c = op(a); e = op(x); d = (b, c, e); f = fn(x) { d } */
static kiln_status_t diamond_build(kiln_allocator_t allocator, diamond_t *g) {
  memset(g, 0, sizeof(*g));
  KILN_RETURN_IF_ERROR(kiln_module_create(allocator, &g->module));
  kiln_module_t *m = g->module;
  const int64_t shape[] = {2};
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_type_create(kiln_module_arena(m), KILN_DTYPE_FLOAT32, 1, shape, &type));
  KILN_RETURN_IF_ERROR(kiln_ir_var_create(m, "x", type, &g->x));
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 1, shape, &tensor));
  kiln_status_t status = kiln_ir_constant_create(m, tensor, &g->k);
  kiln_tensor_release(tensor); /* the module holds its own reference */
  KILN_RETURN_IF_ERROR(status);
  kiln_expr_t *a_args[] = {as_expr(g->x), as_expr(g->k)};
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(m, &test_op, 2, a_args, NULL, &g->a));
  kiln_expr_t *a_only[] = {as_expr(g->a)};
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(m, &test_op, 1, a_only, NULL, &g->b));
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(m, &test_op, 1, a_only, NULL, &g->c));
  kiln_expr_t *x_only[] = {as_expr(g->x)};
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(m, &test_op, 1, x_only, NULL, &g->e));
  kiln_expr_t *fields[] = {as_expr(g->b), as_expr(g->c), as_expr(g->e)};
  KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(m, 3, fields, &g->d));
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(m, 1, &g->x, as_expr(g->d), &g->f));
  return kiln_module_add_function(m, "main", g->f);
}

static void test_functor_dispatch_rules(void **state) {
  (void)state;
  kiln_expr_functor_t functor;
  kiln_expr_functor_initialize(&functor);
  diamond_t g;
  KILN_ASSERT_OK(diamond_build(kiln_allocator_system(), &g));
  KILN_ASSERT_STATUS(kiln_expr_functor_call(&functor, as_expr(g.d), NULL), UNIMPLEMENTED,
                     "no visit rule for Tuple");
  kiln_tuple_get_item_t *item = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(g.module, as_expr(g.d), 1, &item));
  KILN_ASSERT_STATUS(kiln_expr_functor_call(&functor, as_expr(item), NULL), UNIMPLEMENTED,
                     "no visit rule for TupleGetItem");
  KILN_ASSERT_STATUS(kiln_expr_functor_call(&functor, NULL, NULL), INVALID_ARGUMENT, "null node");

  kiln_expr_visitor_t visitor; /* borrow a ready-made rule */
  kiln_expr_visitor_initialize(&visitor, kiln_allocator_system());
  KILN_ASSERT_OK(
      kiln_expr_functor_set_dispatch(&functor, KILN_EXPR_KIND_CALL, visitor.functor.rules[0]));
  KILN_ASSERT_STATUS(
      kiln_expr_functor_set_dispatch(&functor, KILN_EXPR_KIND_CALL, visitor.functor.rules[0]),
      ALREADY_EXISTS, "dispatch for Call is already set");
  kiln_expr_functor_clear_dispatch(&functor, KILN_EXPR_KIND_CALL);
  KILN_ASSERT_OK(
      kiln_expr_functor_set_dispatch(&functor, KILN_EXPR_KIND_CALL, visitor.functor.rules[0]));
  KILN_ASSERT_STATUS(kiln_expr_functor_set_dispatch(&functor, KILN_EXPR_KIND_COUNT_, NULL),
                     INVALID_ARGUMENT, "not a node kind");
  kiln_expr_visitor_deinitialize(&visitor);
  kiln_module_destroy(g.module);
  assert_string_equal(kiln_expr_kind_name(KILN_EXPR_KIND_TUPLE_GET_ITEM), "TupleGetItem");
  assert_string_equal(kiln_expr_kind_name(KILN_EXPR_KIND_COUNT_), "invalid");
}

/* A visitor pass that counts how many times its Call rule runs. */
typedef struct call_counter_t {
  kiln_expr_visitor_t visitor;
  int calls;
} call_counter_t;

static kiln_status_t count_call(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  (void)result;
  call_counter_t *counter = (call_counter_t *)self;
  counter->calls++;
  return kiln_expr_visitor_visit_children(&counter->visitor, expr);
}

static void test_visitor_walks_shared_nodes_once(void **state) {
  (void)state;
  diamond_t g;
  KILN_ASSERT_OK(diamond_build(kiln_allocator_system(), &g));
  call_counter_t counter = {.calls = 0};
  kiln_expr_visitor_initialize(&counter.visitor, kiln_allocator_system());
  kiln_expr_functor_override(&counter.visitor.functor, KILN_EXPR_KIND_CALL, count_call);
  KILN_ASSERT_OK(kiln_expr_visitor_visit(&counter.visitor, as_expr(g.f)));
  assert_int_equal(counter.calls, 4); /* a, b, c, e: a is reached twice, walked once */
  assert_int_equal(kiln_expr_visitor_visit_count(&counter.visitor, as_expr(g.a)), 2);
  assert_int_equal(kiln_expr_visitor_visit_count(&counter.visitor, as_expr(g.b)), 1);
  /* x: as a parameter, from a and from e. */
  assert_int_equal(kiln_expr_visitor_visit_count(&counter.visitor, as_expr(g.x)), 3);
  assert_int_equal(kiln_expr_visitor_visit_count(&counter.visitor, as_expr(g.k)), 1);
  assert_int_equal(kiln_expr_visitor_visit_count(&counter.visitor, as_expr(g.f)), 1);
  /* Visiting again walks nothing new. */
  KILN_ASSERT_OK(kiln_expr_visitor_visit(&counter.visitor, as_expr(g.f)));
  assert_int_equal(counter.calls, 4);
  assert_int_equal(kiln_expr_visitor_visit_count(&counter.visitor, as_expr(g.f)), 2);
  kiln_expr_visitor_deinitialize(&counter.visitor);
  kiln_module_destroy(g.module);
}

static void test_identity_mutator_returns_the_same_graph(void **state) {
  (void)state;
  diamond_t g;
  KILN_ASSERT_OK(diamond_build(kiln_allocator_system(), &g));
  uint32_t nodes = kiln_module_node_count(g.module);
  kiln_expr_mutator_t mutator;
  kiln_expr_mutator_initialize(&mutator, g.module, kiln_allocator_system());
  kiln_expr_t *out = NULL;
  KILN_ASSERT_OK(kiln_expr_mutator_mutate(&mutator, as_expr(g.f), &out));
  assert_ptr_equal(out, as_expr(g.f));
  assert_int_equal(kiln_module_node_count(g.module), nodes);
  kiln_expr_mutator_deinitialize(&mutator);
  kiln_module_destroy(g.module);
}

/* A mutator pass that replaces one constant by another. */
typedef struct replace_constant_t {
  kiln_expr_mutator_t mutator;
  kiln_constant_t *from, *to;
  int rule_runs;
} replace_constant_t;

static kiln_status_t replace_rule(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  replace_constant_t *pass = (replace_constant_t *)self;
  pass->rule_runs++;
  *(kiln_expr_t **)result = expr == as_expr(pass->from) ? as_expr(pass->to) : expr;
  return KILN_OK;
}

static void test_mutator_keeps_the_dag_and_untouched_subgraphs(void **state) {
  (void)state;
  diamond_t g;
  KILN_ASSERT_OK(diamond_build(kiln_allocator_system(), &g));
  const int64_t shape[] = {2};
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 1, shape, &tensor));
  replace_constant_t pass = {.from = g.k};
  KILN_ASSERT_OK(kiln_ir_constant_create(g.module, tensor, &pass.to));
  kiln_tensor_release(tensor);
  kiln_expr_mutator_initialize(&pass.mutator, g.module, kiln_allocator_system());
  kiln_expr_functor_override(&pass.mutator.functor, KILN_EXPR_KIND_CONSTANT, replace_rule);

  kiln_expr_t *out = NULL;
  KILN_ASSERT_OK(kiln_expr_mutator_mutate(&pass.mutator, as_expr(g.f), &out));
  kiln_function_t *f2 = kiln_expr_as_function(out);
  assert_non_null(f2);
  assert_ptr_not_equal(f2, g.f);
  assert_ptr_equal(f2->params[0], g.x); /* parameters are kept */
  kiln_tuple_t *d2 = kiln_expr_as_tuple(f2->body);
  assert_non_null(d2);
  assert_ptr_not_equal(d2, g.d);
  kiln_call_t *b2 = kiln_expr_as_call(d2->fields[0]);
  kiln_call_t *c2 = kiln_expr_as_call(d2->fields[1]);
  assert_ptr_not_equal(b2, g.b);
  assert_ptr_not_equal(c2, g.c);
  /* The shared node was rewritten once and is still shared. */
  assert_ptr_equal(b2->args[0], c2->args[0]);
  kiln_call_t *a2 = kiln_expr_as_call(b2->args[0]);
  assert_ptr_not_equal(a2, g.a);
  assert_ptr_equal(a2->args[0], as_expr(g.x));
  assert_ptr_equal(a2->args[1], as_expr(pass.to));
  assert_ptr_equal(a2->attrs, g.a->attrs);
  /* The untouched subgraph e = op(x) comes back as the same node. */
  assert_ptr_equal(d2->fields[2], as_expr(g.e));
  assert_int_equal(pass.rule_runs, 1); /* one constant, memoized */
  kiln_expr_mutator_deinitialize(&pass.mutator);
  kiln_module_destroy(g.module);
}

static void test_module_functions_and_errors(void **state) {
  (void)state;
  diamond_t g;
  KILN_ASSERT_OK(diamond_build(kiln_allocator_system(), &g));
  assert_ptr_equal(kiln_module_get_function(g.module, "main"), g.f);
  assert_null(kiln_module_get_function(g.module, "other"));
  KILN_ASSERT_STATUS(kiln_module_add_function(g.module, "main", g.f), ALREADY_EXISTS,
                     "already has a function named 'main'");
  KILN_ASSERT_STATUS(kiln_module_set_function(g.module, "other", g.f), NOT_FOUND, "'other'");
  KILN_ASSERT_OK(kiln_module_add_function(g.module, "second", g.f));
  assert_int_equal(kiln_module_function_count(g.module), 2);
  assert_string_equal(kiln_module_function_name(g.module, 1), "second");

  kiln_call_t *call = NULL;
  kiln_status_t arity = kiln_ir_call_create(g.module, &test_op, 0, NULL, NULL, &call);
  assert_string_equal(kiln_status_message(arity), "test.any: 0 arguments, expected 1 or more");
  kiln_status_free(arity);
  kiln_expr_t *holes[] = {as_expr(g.x), NULL};
  KILN_ASSERT_STATUS(kiln_ir_call_create(g.module, &test_op, 2, holes, NULL, &call),
                     INVALID_ARGUMENT, "child 1 is NULL");
  KILN_ASSERT_STATUS(kiln_ir_call_function_create(g.module, g.f, 2, holes, &call), INVALID_ARGUMENT,
                     "function of 1 parameters with 2 arguments");
  kiln_var_t *var = NULL;
  KILN_ASSERT_STATUS(kiln_ir_var_create(g.module, "", NULL, &var), INVALID_ARGUMENT, "name");
  kiln_function_t *function = NULL;
  KILN_ASSERT_STATUS(kiln_ir_function_create(g.module, 0, NULL, NULL, &function), INVALID_ARGUMENT,
                     "body");
  /* Downcasts check the kind. */
  assert_null(kiln_expr_as_call(as_expr(g.d)));
  assert_ptr_equal(kiln_expr_as_tuple(as_expr(g.d)), g.d);
  assert_null(kiln_expr_as_var(NULL));
  kiln_module_destroy(g.module);
}

static kiln_status_t diamond_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  diamond_t g;
  kiln_status_t status = diamond_build(allocator, &g);
  if (!status) {
    kiln_expr_mutator_t mutator;
    kiln_expr_mutator_initialize(&mutator, g.module, allocator);
    kiln_expr_t *out = NULL;
    status = kiln_expr_mutator_mutate(&mutator, as_expr(g.f), &out);
    kiln_expr_mutator_deinitialize(&mutator);
  }
  kiln_module_destroy(g.module);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(diamond_scenario, NULL) > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_functor_dispatch_rules),
      cmocka_unit_test(test_visitor_walks_shared_nodes_once),
      cmocka_unit_test(test_identity_mutator_returns_the_same_graph),
      cmocka_unit_test(test_mutator_keeps_the_dag_and_untouched_subgraphs),
      cmocka_unit_test(test_module_functions_and_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
