/*
 * The graph compiler refuses a module with symbolic dims (compiler/build.c,
 * ir/static_shapes.h): UNIMPLEMENTED naming the node, the type and the dim,
 * before any pass runs, so nothing downstream sees a -1 dim; and the same
 * module with the dim fixed builds.
 */
#include <string.h>

#include "compiler/build.h"
#include "ir/text.h"
#include "kiln_test.h"

static kiln_module_t *parse(const char *text) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("t", text, kiln_allocator_system(), &module));
  return module;
}

static void test_graph_executor_refuses_symbolic(void **state) {
  (void)state;
  kiln_module_t *module = parse("def @main(%x: Tensor[(n, 4), float32]) { nn.relu(%x) }");
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = "c";
  options.executor = KILN_EXECUTOR_GRAPH;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_STATUS(
      kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled), UNIMPLEMENTED,
      "--executor graph (the VM takes symbolic dims and dyn operators: --executor vm "
      "or auto): the "
      "graph compiler: in @main, parameter %x has the type Tensor[(n, 4), "
      "float32] with the symbolic dim n (dim 0); the graph compiler needs static "
      "shapes (fix the dim with --input-shape, or run the module on the "
      "interpreter)");
  assert_null(compiled);
  kiln_module_destroy(module);
  module = parse("def @main(%x: Tensor[(3, 4), float32]) { nn.relu(%x) }");
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(module);
}

/* dyn.cumsum has a static type and reads its axis in the kernel: it
 * builds (C target too); dyn.split, whose parts' dims depend on the sizes,
 * builds for the VM as the runtime's extern kernel (call_extern). */
static void test_dyn_operators_build(void **state) {
  (void)state;
  kiln_module_t *module = parse("def @main(%x: Tensor[(3, 4), float32], %a: Tensor[(1), int64]) "
                                "{ dyn.cumsum(%x, %a) }");
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = "c";
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(module);
  module = parse("def @main(%x: Tensor[(3, 4), float32], %k: Tensor[(2), int64]) "
                 "{ dyn.split(%x, %k) }");
  compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  assert_non_null(compiled->vm_json);
  assert_non_null(strstr(compiled->vm_json, "\"dyn.split\""));
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_executor_refuses_symbolic),
      cmocka_unit_test(test_dyn_operators_build),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
