/*
 * Graph-building helpers for IR tests; see kiln_ir_test.h. Every helper
 * asserts success, so a failure points at the line that built the node.
 */
#include "kiln_ir_test.h"

#include <math.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/text.h"
#include "op/op.h"

kiln_module_t *irt_module(void) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_module_create(kiln_allocator_system(), &module));
  return module;
}

const kiln_type_t *irt_type(kiln_module_t *module, kiln_dtype_t dtype, int ndim,
                            const int64_t *shape) {
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(kiln_module_arena(module), dtype, ndim, shape, &type));
  return type;
}

kiln_var_t *irt_var(kiln_module_t *module, const char *name, kiln_dtype_t dtype, int ndim,
                    const int64_t *shape) {
  kiln_var_t *var = NULL;
  KILN_ASSERT_OK(kiln_ir_var_create(module, name, irt_type(module, dtype, ndim, shape), &var));
  return var;
}

kiln_expr_t *irt_constant_f32(kiln_module_t *module, int ndim, const int64_t *shape,
                              const float *data) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, ndim, shape, &tensor));
  memcpy(kiln_tensor_data(tensor), data, kiln_tensor_byte_size(tensor));
  kiln_constant_t *constant = NULL;
  KILN_ASSERT_OK(kiln_ir_constant_create(module, tensor, &constant));
  kiln_tensor_release(tensor);
  return &constant->base;
}

kiln_expr_t *irt_call(kiln_module_t *module, const char *op_name, const char *const *settings,
                      int num_args, kiln_expr_t *const *args) {
  const kiln_op_t *op = NULL;
  KILN_ASSERT_OK(kiln_op_find(op_name, &op));
  void *attrs = NULL;
  kiln_arena_t *arena = kiln_module_arena(module);
  KILN_ASSERT_OK(kiln_op_attrs_create_default(op, arena, &attrs));
  for (int i = 0; settings != NULL && settings[i] != NULL; i += 2) {
    KILN_ASSERT_OK(kiln_op_attrs_set_text(op, attrs, settings[i], settings[i + 1], arena));
  }
  kiln_call_t *call = NULL;
  KILN_ASSERT_OK(kiln_ir_call_create(module, op, num_args, args, attrs, &call));
  return &call->base;
}

kiln_function_t *irt_function(kiln_module_t *module, int num_params, kiln_var_t *const *params,
                              kiln_expr_t *body) {
  kiln_function_t *function = NULL;
  KILN_ASSERT_OK(kiln_ir_function_create(module, num_params, params, body, &function));
  return function;
}

kiln_function_t *irt_add_function(kiln_module_t *module, const char *name, int num_params,
                                  kiln_var_t *const *params, kiln_expr_t *body) {
  kiln_function_t *function = irt_function(module, num_params, params, body);
  KILN_ASSERT_OK(kiln_module_add_function(module, name, function));
  return function;
}

kiln_module_t *irt_parse(const char *name, const char *text) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module(name, text, kiln_allocator_system(), &module));
  return module;
}

kiln_compiled_t *irt_compile(const char *name, const char *text) {
  kiln_module_t *module = irt_parse(name, text);
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  kiln_module_destroy(module);
  return compiled;
}

kiln_compiled_t *irt_compile_vm(const char *name, const char *text) {
  kiln_compiled_t *compiled = irt_compile(name, text);
  assert_int_equal(kiln_compiled_executor(compiled), KILN_EXECUTOR_VM);
  return compiled;
}

vm_pair_t vm_pair_open(const char *name, const char *text) {
  vm_pair_t pair = {irt_parse(name, text), irt_compile_vm(name, text), NULL};
  KILN_ASSERT_OK(kiln_ir_infer_types(pair.reference));
  KILN_ASSERT_OK(kiln_compiled_create_executor(pair.compiled, &pair.vm));
  return pair;
}

void vm_pair_close(vm_pair_t *pair) {
  kiln_graph_executor_destroy(pair->vm);
  kiln_compiled_destroy(pair->compiled);
  kiln_module_destroy(pair->reference);
}

void irt_assert_close(const kiln_tensor_t *got, const kiln_tensor_t *want, const char *what,
                      int output) {
  assert_int_equal(kiln_tensor_dtype(got), kiln_tensor_dtype(want));
  assert_int_equal(kiln_tensor_ndim(got), kiln_tensor_ndim(want));
  for (int d = 0; d < kiln_tensor_ndim(want); ++d) {
    if (kiln_tensor_shape(got)[d] != kiln_tensor_shape(want)[d]) {
      fail_msg("%s output %d dim %d: %lld, %lld in the reference", what, output, d,
               (long long)kiln_tensor_shape(got)[d], (long long)kiln_tensor_shape(want)[d]);
    }
  }
  for (int64_t i = 0; i < kiln_tensor_element_count(want); ++i) {
    double g = kiln_tensor_element_as_double(got, i), w = kiln_tensor_element_as_double(want, i);
    if (!(fabs(g - w) <= 1e-6 + 1e-5 * fabs(w))) {
      fail_msg("%s output %d element %lld: %.9g, %.9g in the reference", what, output, (long long)i,
               g, w);
    }
  }
}

int irt_run_against_interp(kiln_module_t *reference, kiln_graph_executor_t *executor, int n,
                           kiln_tensor_t *const *inputs, const char *what) {
  int count = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_OK(
      kiln_interp_run(reference, "main", n, inputs, kiln_allocator_system(), &count, &want));
  for (int i = 0; i < n; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(executor, i, kiln_tensor_dl(inputs[i])));
  }
  KILN_ASSERT_OK(kiln_graph_executor_run(executor));
  assert_int_equal(kiln_graph_executor_num_outputs(executor), count);
  for (int o = 0; o < count; ++o) {
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_copy_output(executor, o, kiln_allocator_system(), &got));
    irt_assert_close(got, want[o], what, o);
    kiln_tensor_release(got);
  }
  for (int o = 0; o < count; ++o) {
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  return count;
}
