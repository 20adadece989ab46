/*
 * Tests of the canonical node order (ir/order.h) and type inference
 * (ir/infer.h): the order's numbering and sharing, cycles, deep graphs,
 * inferred types of every node kind, and errors that name the node as the
 * printer does.
 */
#include <string.h>

#include "ir/infer.h"
#include "ir/order.h"
#include "kiln_ir_test.h"
#include "op/op.h"

/* x: [2]; a = add(x, k); b = relu(a); c = negative(a); e = exp(x); (b, c, e) */
typedef struct shared_graph_t {
  kiln_module_t *module;
  kiln_var_t *x;
  kiln_expr_t *k, *a, *b, *c, *e, *d;
  kiln_function_t *main;
} shared_graph_t;

static void shared_graph_build(shared_graph_t *g) {
  g->module = irt_module();
  g->x = irt_var(g->module, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  g->k = irt_constant_f32(g->module, 1, SHAPE(2), (const float[]){1, 2});
  g->a = IRT_CALL(g->module, "add", NULL, &g->x->base, g->k);
  g->b = IRT_CALL(g->module, "nn.relu", NULL, g->a);
  g->c = IRT_CALL(g->module, "negative", NULL, g->a);
  g->e = IRT_CALL(g->module, "exp", NULL, &g->x->base);
  kiln_tuple_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(g->module, 3, (kiln_expr_t *[]){g->b, g->c, g->e}, &tuple));
  g->d = &tuple->base;
  g->main = irt_add_function(g->module, "main", 1, &g->x, g->d);
}

static void test_order_numbers_children_first_each_node_once(void **state) {
  (void)state;
  shared_graph_t g;
  shared_graph_build(&g);
  kiln_ir_order_t order;
  KILN_ASSERT_OK(kiln_ir_order_compute(g.main, kiln_allocator_system(), &order));
  kiln_expr_t *expected[] = {&g.x->base, g.k, g.a, g.b, g.c, g.e, g.d};
  int numbers[] = {-1, -1, 0, 1, 2, 3, 4};
  assert_int_equal(kiln_ir_order_count(&order), 7);
  for (size_t i = 0; i < 7; i++) {
    assert_ptr_equal(kiln_ir_order_node(&order, i), expected[i]);
    assert_int_equal(kiln_ir_order_number(&order, i), numbers[i]);
  }
  char name[KILN_IR_ORDER_NAME_CAPACITY];
  assert_string_equal(kiln_ir_order_describe(&order, 0, name), "%x");
  assert_string_equal(kiln_ir_order_describe(&order, 1, name), "a Constant");
  assert_string_equal(kiln_ir_order_describe(&order, 3, name), "%1 = nn.relu");
  assert_string_equal(kiln_ir_order_describe(&order, 6, name), "%4 = Tuple");
  kiln_ir_order_deinitialize(&order);
  kiln_module_destroy(g.module);
}

/* fn (%p0, %p1) { relu(add(p0, p1)) } called as f(x, x). */
static void test_order_puts_a_callee_body_before_the_function(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_var_t *p[2] = {irt_var(m, "p0", KILN_DTYPE_FLOAT32, 1, SHAPE(3)),
                      irt_var(m, "p1", KILN_DTYPE_FLOAT32, 1, SHAPE(3))};
  kiln_expr_t *sum = IRT_CALL(m, "add", NULL, &p[0]->base, &p[1]->base);
  kiln_expr_t *relu = IRT_CALL(m, "nn.relu", NULL, sum);
  kiln_function_t *fused = irt_function(m, 2, p, relu);
  fused->primitive = true;
  kiln_call_t *call = NULL;
  KILN_ASSERT_OK(
      kiln_ir_call_function_create(m, fused, 2, (kiln_expr_t *[]){&x->base, &x->base}, &call));
  kiln_function_t *main = irt_add_function(m, "main", 1, &x, &call->base);
  kiln_ir_order_t order;
  KILN_ASSERT_OK(kiln_ir_order_compute(main, kiln_allocator_system(), &order));
  kiln_expr_t *expected[] = {&p[0]->base,  &p[1]->base, sum,        relu,
                             &fused->base, &x->base,    &call->base};
  assert_int_equal(kiln_ir_order_count(&order), 7);
  for (size_t i = 0; i < 7; i++) {
    assert_ptr_equal(kiln_ir_order_node(&order, i), expected[i]);
  }
  char name[KILN_IR_ORDER_NAME_CAPACITY];
  assert_string_equal(kiln_ir_order_describe(&order, 4, name), "%2 = fn");
  assert_string_equal(kiln_ir_order_describe(&order, 6, name), "%3 = call of %2");
  kiln_ir_order_deinitialize(&order);

  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  assert_true(kiln_type_equal(main->ret_type, x->type_annotation));
  assert_true(kiln_type_equal(fused->ret_type, x->type_annotation));
  assert_null(fused->base.checked_type); /* functions have no type of their own */
  kiln_module_destroy(m);
}

static void test_order_detects_a_cycle(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(2));
  kiln_expr_t *a = IRT_CALL(m, "nn.relu", NULL, &x->base);
  kiln_expr_t *b = IRT_CALL(m, "exp", NULL, a);
  kiln_function_t *main = irt_add_function(m, "main", 1, &x, b);
  kiln_expr_as_call(a)->args[0] = b; /* corrupt the graph by hand: a -> b -> a */
  kiln_ir_order_t order;
  KILN_ASSERT_STATUS(kiln_ir_order_compute(main, kiln_allocator_system(), &order), INVALID_ARGUMENT,
                     "cycle through a Call node");
  KILN_ASSERT_STATUS(kiln_ir_infer_types(m), INVALID_ARGUMENT, "cycle");
  kiln_module_destroy(m);
}

static void test_order_and_inference_handle_deep_chains(void **state) {
  (void)state;
  enum { DEPTH = 100000 };
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(1, 8));
  kiln_expr_t *node = &x->base;
  for (int i = 0; i < DEPTH; i++) {
    node = IRT_CALL(m, i % 2 ? "nn.relu" : "negative", NULL, node);
  }
  kiln_function_t *main = irt_add_function(m, "main", 1, &x, node);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  assert_true(kiln_type_equal(main->ret_type, x->type_annotation));
  kiln_module_destroy(m);
}

static void test_inference_types_every_kind(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 6));
  kiln_expr_t *parts = IRT_CALL(m, "split", IRT_ATTRS("indices", "[1, 4]", "axis", "1"), &x->base);
  kiln_tuple_get_item_t *second = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, parts, 1, &second));
  kiln_expr_t *mask = IRT_CALL(m, "greater", NULL, &second->base, &second->base);
  kiln_tuple_t *out = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, 2, (kiln_expr_t *[]){&second->base, mask}, &out));
  kiln_function_t *main = irt_add_function(m, "main", 1, &x, &out->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));

  const kiln_tuple_type_t *split_type = kiln_type_as_tuple(parts->checked_type);
  assert_non_null(split_type);
  assert_int_equal(split_type->count, 3);
  assert_true(kiln_type_equal(split_type->fields[1], second->base.checked_type));
  const kiln_tensor_type_t *middle = kiln_type_as_tensor(second->base.checked_type);
  assert_int_equal(middle->ndim, 2);
  assert_int_equal(middle->shape[0], 2);
  assert_int_equal(middle->shape[1], 3);
  assert_int_equal(kiln_type_as_tensor(mask->checked_type)->dtype, KILN_DTYPE_BOOL);
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(main->ret_type, text),
                      "(Tensor[(2, 3), float32], Tensor[(2, 3), bool])");
  kiln_module_destroy(m);
}

static void test_inference_errors_name_the_node(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  kiln_var_t *y = irt_var(m, "y", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_expr_t *relu = IRT_CALL(m, "nn.relu", NULL, &x->base);
  kiln_expr_t *sum = IRT_CALL(m, "add", NULL, relu, &y->base);
  irt_add_function(m, "main", 2, (kiln_var_t *[]){x, y}, sum);
  KILN_ASSERT_STATUS(kiln_ir_infer_types(m), INVALID_ARGUMENT,
                     "in @main, %1 = add: add: cannot broadcast (2, 3) and (4,)");
  kiln_module_destroy(m);

  m = irt_module();
  kiln_var_t *bare = NULL;
  KILN_ASSERT_OK(kiln_ir_var_create(m, "bare", NULL, &bare));
  irt_add_function(m, "f", 1, &bare, IRT_CALL(m, "exp", NULL, &bare->base));
  KILN_ASSERT_STATUS(kiln_ir_infer_types(m), INVALID_ARGUMENT,
                     "in @f, %bare: the parameter has no type annotation");
  kiln_module_destroy(m);

  m = irt_module();
  x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_expr_t *parts = IRT_CALL(m, "split", IRT_ATTRS("sections", "2"), &x->base);
  kiln_tuple_get_item_t *item = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, parts, 1, &item));
  item->index = 5; /* past the end: the constructor cannot know the arity */
  irt_add_function(m, "main", 1, &x, &item->base);
  KILN_ASSERT_STATUS(kiln_ir_infer_types(m), OUT_OF_RANGE,
                     "in @main, %1 = TupleGetItem: index 5 is out of range for a tuple of 2");
  kiln_module_destroy(m);
}

static void test_inference_checks_function_call_arguments(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_var_t *p = irt_var(m, "p0", KILN_DTYPE_FLOAT32, 1, SHAPE(4));
  kiln_function_t *fused = irt_function(m, 1, &p, IRT_CALL(m, "exp", NULL, &p->base));
  kiln_call_t *call = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, fused, 1, (kiln_expr_t *[]){&x->base}, &call));
  irt_add_function(m, "main", 1, &x, &call->base);
  KILN_ASSERT_STATUS(kiln_ir_infer_types(m), INVALID_ARGUMENT,
                     "in @main, %2 = call of %1: argument 0 is Tensor[(3), float32] but parameter "
                     "%p0 is Tensor[(4), float32]");
  kiln_module_destroy(m);
}

static void test_inference_types_constants_and_reruns(void **state) {
  (void)state;
  shared_graph_t g;
  shared_graph_build(&g);
  KILN_ASSERT_OK(kiln_ir_infer_types(g.module));
  assert_true(kiln_type_equal(g.k->checked_type, g.x->type_annotation));
  const kiln_type_t *first = g.main->ret_type;
  KILN_ASSERT_OK(kiln_ir_infer_types(g.module)); /* idempotent */
  assert_true(kiln_type_equal(first, g.main->ret_type));
  kiln_module_destroy(g.module);
}

static kiln_status_t infer_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_module_t *m = NULL;
  KILN_RETURN_IF_ERROR(kiln_module_create(allocator, &m));
  const kiln_type_t *type = NULL;
  kiln_var_t *x = NULL;
  kiln_call_t *relu = NULL;
  kiln_function_t *f = NULL;
  kiln_status_t status =
      kiln_tensor_type_create(kiln_module_arena(m), KILN_DTYPE_FLOAT32, 1, SHAPE(5), &type);
  if (status == KILN_OK)
    status = kiln_ir_var_create(m, "x", type, &x);
  const kiln_op_t *op = kiln_op_get(KILN_OP_RELU);
  if (status == KILN_OK)
    status = kiln_ir_call_create(m, op, 1, (kiln_expr_t *[]){&x->base}, NULL, &relu);
  if (status == KILN_OK)
    status = kiln_ir_function_create(m, 1, &x, &relu->base, &f);
  if (status == KILN_OK)
    status = kiln_module_add_function(m, "main", f);
  if (status == KILN_OK)
    status = kiln_ir_infer_types(m);
  kiln_module_destroy(m);
  return status;
}

static void test_inference_survives_allocation_failures(void **state) {
  (void)state;
  assert_true(kiln_test_sweep_allocation_failures(infer_scenario, NULL) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_order_numbers_children_first_each_node_once),
      cmocka_unit_test(test_order_puts_a_callee_body_before_the_function),
      cmocka_unit_test(test_order_detects_a_cycle),
      cmocka_unit_test(test_order_and_inference_handle_deep_chains),
      cmocka_unit_test(test_inference_types_every_kind),
      cmocka_unit_test(test_inference_errors_name_the_node),
      cmocka_unit_test(test_inference_checks_function_call_arguments),
      cmocka_unit_test(test_inference_types_constants_and_reruns),
      cmocka_unit_test(test_inference_survives_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
