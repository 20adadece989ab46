/*
 * The fused graph as dot (compiler/dot.h): a main of two fused calls, one
 * of two outputs picked by TupleGetItem into a tuple result; inputs as
 * ellipses, kernels as boxes with their operators, params counted, fields
 * on edges, the result node; and the error without main.
 */
#include <string.h>

#include "compiler/dot.h"
#include "ir/infer.h"
#include "kiln_ir_test.h"

static kiln_expr_t *call(kiln_module_t *m, kiln_function_t *f, int n, kiln_expr_t **args) {
  kiln_call_t *c = NULL;
  KILN_ASSERT_OK(kiln_ir_call_function_create(m, f, n, args, &c));
  return &c->base;
}

static void test_dot(void **state) {
  (void)state;
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 8));
  kiln_var_t *p[2] = {irt_var(m, "p0", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 8)),
                      irt_var(m, "p1", KILN_DTYPE_FLOAT32, 1, SHAPE(8))};
  kiln_function_t *bias_relu = irt_function(
      m, 2, p, IRT_CALL(m, "nn.relu", NULL, IRT_CALL(m, "add", NULL, &p[0]->base, &p[1]->base)));
  bias_relu->primitive = true;
  const float bias[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  kiln_expr_t *args[2] = {&x->base, irt_constant_f32(m, 1, SHAPE(8), bias)};
  kiln_expr_t *h = call(m, bias_relu, 2, args);
  kiln_var_t *y = irt_var(m, "y", KILN_DTYPE_FLOAT32, 2, SHAPE(4, 8));
  kiln_function_t *halves = irt_function(
      m, 1, &y, IRT_CALL(m, "split", IRT_ATTRS("sections", "2", "axis", "0"), &y->base));
  halves->primitive = true;
  kiln_expr_t *parts = call(m, halves, 1, &h);
  kiln_tuple_get_item_t *second = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_get_item_create(m, parts, 1, &second));
  kiln_expr_t *fields[2] = {&second->base, h};
  kiln_tuple_t *result = NULL;
  KILN_ASSERT_OK(kiln_ir_tuple_create(m, 2, fields, &result));
  irt_add_function(m, "main", 1, &x, &result->base);
  KILN_ASSERT_OK(kiln_ir_infer_types(m));
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_compiler_graph_dot(m, &sb));
  const char *text = kiln_strbuf_c_str(&sb);
  assert_non_null(strstr(text, "digraph kiln {\n"));
  assert_non_null(strstr(text, "n0 [shape=ellipse, label=\"%x\\nTensor[(4, 8), float32]\"];"));
  assert_non_null(strstr(text, "[shape=box, label=\"add\\nnn.relu\\n+1 params\\nTensor[(4, 8), "
                               "float32]\"];"));
  assert_non_null(strstr(text, "label=\"split\\n"));
  assert_non_null(strstr(text, "[label=\"1\"];")); /* field 1 of the split into the result */
  assert_non_null(strstr(text, "result [shape=doubleoctagon];"));
  kiln_strbuf_deinitialize(&sb);
  kiln_module_destroy(m);

  m = irt_module();
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_STATUS(kiln_compiler_graph_dot(m, &sb), INVALID_ARGUMENT,
                     "the module has no main function");
  kiln_strbuf_deinitialize(&sb);
  kiln_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_dot)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
