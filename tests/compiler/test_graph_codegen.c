/*
 * Graph code generation (compiler/graph_codegen.h) on hand-fused modules:
 * the JSON's nodes, arg_nodes, node_row_ptr, heads and attrs; params from
 * constants; one kernel for two calls of equal functions; names of
 * kernels; flops of dense; tuple outputs through TupleGetItem; the errors.
 */
#include <jansson.h>
#include <string.h>

#include "compiler/graph_codegen.h"
#include "ir/infer.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"

#define arena kiln_op_test_arena

/* fn(x, w, b) = relu(add(dense(x, w), b)), primitive. */
static kiln_function_t *dense_relu(kiln_module_t *m) {
  kiln_var_t *p[3] = {irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 8)),
                      irt_var(m, "w", KILN_DTYPE_FLOAT32, 2, SHAPE(8, 8)),
                      irt_var(m, "b", KILN_DTYPE_FLOAT32, 1, SHAPE(8))};
  kiln_expr_t *dense = IRT_CALL(m, "nn.dense", NULL, &p[0]->base, &p[1]->base);
  kiln_expr_t *add = IRT_CALL(m, "add", NULL, dense, &p[2]->base);
  kiln_function_t *f = irt_function(m, 3, p, IRT_CALL(m, "nn.relu", NULL, add));
  f->primitive = true;
  return f;
}

static kiln_expr_t *call(kiln_module_t *m, kiln_function_t *f, int n, kiln_expr_t **args) {
  kiln_call_t *c = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, f, n, args, &c));
  return &c->base;
}

static kiln_expr_t *weights(kiln_module_t *m, int ndim, const int64_t *shape, float scale) {
  float data[64];
  for (int i = 0; i < 64; ++i) {
    data[i] = scale * (float)(i % 7 - 3);
  }
  return irt_constant_f32(m, ndim, shape, data);
}

/* main(x) = two dense layers (equal fused functions) then a split into a
 * tuple of two halves, one negated. */
static kiln_module_t *two_layers(void) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "data", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 8));
  kiln_expr_t *a1[3] = {&x->base, weights(m, 2, SHAPE(8, 8), 0.1f), weights(m, 1, SHAPE(8), 1)};
  kiln_expr_t *h = call(m, dense_relu(m), 3, a1);
  kiln_expr_t *a2[3] = {h, weights(m, 2, SHAPE(8, 8), 0.2f), weights(m, 1, SHAPE(8), 2)};
  kiln_expr_t *h2 = call(m, dense_relu(m), 3, a2);
  /* split into two (2, 8) halves and negate the second, one kernel of two outputs */
  kiln_var_t *y = irt_var(m, "y", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 8));
  kiln_expr_t *split = IRT_CALL(m, "split", IRT_ATTRS("sections", "2", "axis", "0"), &y->base);
  kiln_tuple_get_item_t *first = NULL, *second = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, split, 0, &first));
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, split, 1, &second));
  kiln_expr_t *fields[2] = {&first->base, IRT_CALL(m, "negative", NULL, &second->base)};
  kiln_tuple_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, 2, fields, &tuple));
  kiln_function_t *halves = irt_function(m, 1, &y, &tuple->base);
  halves->primitive = true;
  kiln_expr_t *parts = call(m, halves, 1, &h2);
  kiln_tuple_get_item_t *out0 = NULL, *out1 = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, parts, 1, &out1));
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, parts, 0, &out0));
  kiln_expr_t *heads[2] = {&out1->base, &out0->base};
  kiln_tuple_t *result = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, 2, heads, &result));
  irt_add_function(m, "main", 1, &x, &result->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  return m;
}

static const char *node_field(json_t *nodes, size_t n, const char *key) {
  return json_string_value(json_object_get(json_array_get(nodes, n), key));
}

static void test_graph_json(void **state) {
  (void)state;
  kiln_module_t *m = two_layers();
  kiln_schedule_target_t target = kiln_schedule_target_host();
  kiln_graph_codegen_t g;
  KILN_ASSERT_OK(kiln_graph_codegen(kiln_allocator_system(), m, &target, NULL, &arena, &g));
  /* data, p0, p1, layer 1, p2, p3, layer 2, halves */
  assert_int_equal(g.num_nodes, 8);
  assert_int_equal(g.num_entries, 9);
  assert_int_equal(g.num_kernel_calls, 3);
  assert_int_equal(g.num_funcs, 2); /* the two dense layers share a kernel */
  assert_string_equal(g.funcs[0]->name, "fused_nn_dense_add_nn_relu");
  assert_string_equal(g.funcs[1]->name, "fused_split_negative");
  assert_int_equal(g.num_params, 4);
  assert_string_equal(g.param_names[3], "p3");
  assert_int_equal(kiln_tensor_ndim(g.params[3]), 1);
  assert_int_equal(g.total_flops, 2 * (2 * 4 * 8 * 8));

  json_error_t error;
  json_t *root = json_loads(g.graph_json, 0, &error);
  assert_non_null(root);
  json_t *nodes = json_object_get(root, "nodes");
  assert_string_equal(node_field(nodes, 0, "op"), "null");
  assert_string_equal(node_field(nodes, 0, "name"), "data");
  assert_string_equal(node_field(nodes, 1, "name"), "p0");
  assert_string_equal(node_field(nodes, 3, "op"), "tvm_op");
  assert_string_equal(node_field(nodes, 6, "name"), "fused_nn_dense_add_nn_relu");
  json_t *attrs = json_object_get(json_array_get(nodes, 7), "attrs");
  assert_string_equal(json_string_value(json_object_get(attrs, "func_name")),
                      "fused_split_negative");
  assert_string_equal(json_string_value(json_object_get(attrs, "num_outputs")), "2");
  /* layer 2 reads layer 1's output (entry of node 3) and its params p2, p3 */
  char *inputs = json_dumps(json_object_get(json_array_get(nodes, 6), "inputs"), JSON_COMPACT);
  assert_string_equal(inputs, "[[3,0,0],[4,0,0],[5,0,0]]");
  free(inputs);
  char *text = json_dumps(json_object_get(root, "arg_nodes"), JSON_COMPACT);
  assert_string_equal(text, "[0,1,2,4,5]");
  free(text);
  text = json_dumps(json_object_get(root, "node_row_ptr"), JSON_COMPACT);
  assert_string_equal(text, "[0,1,2,3,4,5,6,7,9]");
  free(text);
  text = json_dumps(json_object_get(root, "heads"), JSON_COMPACT);
  assert_string_equal(text, "[[7,1,0],[7,0,0]]");
  free(text);
  json_t *graph_attrs = json_object_get(root, "attrs");
  text = json_dumps(json_object_get(graph_attrs, "shape"), JSON_COMPACT);
  assert_string_equal(text, "[\"list_shape\",[[4,8],[8,8],[8],[4,8],[8,8],[8],[4,8],[2,8],[2,8]]]");
  free(text);
  text = json_dumps(json_object_get(graph_attrs, "storage_id"), JSON_COMPACT);
  assert_string_equal(text, "[\"list_int\",[0,1,2,3,4,5,6,7,8]]");
  free(text);
  text = json_dumps(json_object_get(graph_attrs, "kiln_flops"), JSON_COMPACT);
  assert_string_equal(text, "[\"list_int\",[0,0,0,512,0,0,512,0]]");
  free(text);
  assert_string_equal(json_string_value(json_array_get(
                          json_array_get(json_object_get(graph_attrs, "dltype"), 1), 8)),
                      "float32");
  json_decref(root);
  kiln_graph_codegen_deinitialize(&g);
  kiln_module_destroy(m);
}

/* The plan's storages for the two layers' outputs; inputs, params and
 * main's results (the halves) get their own, numbered after. */
static void test_storage_plan_is_used(void **state) {
  (void)state;
  kiln_module_t *m = two_layers();
  kiln_schedule_target_t target = kiln_schedule_target_host();
  kiln_memory_plan_t *plan = NULL;
  KILN_ASSERT_OK(kiln_pass_plan_memory_compute(m, kiln_allocator_system(), &plan));
  assert_int_equal(plan->num_storages, 2);
  kiln_graph_codegen_t g;
  KILN_ASSERT_OK(kiln_graph_codegen(kiln_allocator_system(), m, &target, plan, &arena, &g));
  json_error_t error;
  json_t *root = json_loads(g.graph_json, 0, &error);
  char *text =
      json_dumps(json_object_get(json_object_get(root, "attrs"), "storage_id"), JSON_COMPACT);
  assert_string_equal(text, "[\"list_int\",[2,3,4,0,5,6,1,7,8]]");
  free(text);
  json_decref(root);
  kiln_graph_codegen_deinitialize(&g);
  kiln_pass_plan_memory_destroy(plan);
  kiln_module_destroy(m);
}

/* Inputs are main's parameters in their order, an unused one included,
 * whatever order the body reads them in. */
static void test_inputs_in_parameter_order(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *params[3] = {irt_var(m, "a", KILN_DTYPE_FLOAT32, 1, SHAPE(3)),
                           irt_var(m, "unused", KILN_DTYPE_INT64, 1, SHAPE(2)),
                           irt_var(m, "c", KILN_DTYPE_FLOAT32, 1, SHAPE(3))};
  kiln_var_t *y = irt_var(m, "y", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  kiln_function_t *f = irt_function(m, 1, &y, IRT_CALL(m, "exp", NULL, &y->base));
  f->primitive = true;
  kiln_expr_t *first = call(m, f, 1, (kiln_expr_t *[]){&params[2]->base});
  irt_add_function(m, "main", 3, params, first);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  kiln_schedule_target_t target = kiln_schedule_target_host();
  kiln_graph_codegen_t g;
  KILN_ASSERT_OK(kiln_graph_codegen(kiln_allocator_system(), m, &target, NULL, &arena, &g));
  json_error_t error;
  json_t *root = json_loads(g.graph_json, 0, &error);
  json_t *nodes = json_object_get(root, "nodes");
  assert_string_equal(node_field(nodes, 0, "name"), "a");
  assert_string_equal(node_field(nodes, 1, "name"), "unused");
  assert_string_equal(node_field(nodes, 2, "name"), "c");
  char *text = json_dumps(json_object_get(json_array_get(nodes, 3), "inputs"), JSON_COMPACT);
  assert_string_equal(text, "[[2,0,0]]");
  free(text);
  text = json_dumps(json_object_get(json_object_get(root, "attrs"), "dltype"), JSON_COMPACT);
  assert_string_equal(text, "[\"list_str\",[\"float32\",\"int64\",\"float32\",\"float32\"]]");
  free(text);
  json_decref(root);
  kiln_graph_codegen_deinitialize(&g);
  kiln_module_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  kiln_schedule_target_t target = kiln_schedule_target_host();
  kiln_graph_codegen_t g;
  /* An operator left in main. */
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 1, SHAPE(3));
  irt_add_function(m, "main", 1, &x, IRT_CALL(m, "exp", NULL, &x->base));
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  KILN_ASSERT_STATUS(kiln_graph_codegen(kiln_allocator_system(), m, &target, NULL, &arena, &g),
                     INVALID_ARGUMENT,
                     "in @main, %0 = exp: main calls exp directly: kernels are made from "
                     "primitive functions (run fuse_ops first)");
  assert_null(g.graph_json);
  kiln_module_destroy(m);
  /* No main. */
  m = irt_module();
  KILN_ASSERT_STATUS(kiln_graph_codegen(kiln_allocator_system(), m, &target, NULL, &arena, &g),
                     INVALID_ARGUMENT, "the module has no main function");
  kiln_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_graph_json, setup, teardown),
      cmocka_unit_test_setup_teardown(test_storage_plan_is_used, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inputs_in_parameter_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
