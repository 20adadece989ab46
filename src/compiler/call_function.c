/*
 * The function of one operator call (call_function.h): parameters made
 * from the input types, the call, the function, then type inference over
 * the module so every node carries its checked type as after the graph
 * compiler's passes.
 */
#include <stdio.h>

#include "compiler/call_function.h"
#include "ir/infer.h"
#include "op/op.h"

static kiln_status_t build(kiln_module_t *module, const kiln_op_t *op, const void *attrs,
                           int num_inputs, const kiln_type_t *const *input_types,
                           kiln_function_t **out_function) {
  kiln_arena_t *arena = kiln_module_arena(module);
  const kiln_type_t *output = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_infer_type(op, attrs, num_inputs, input_types, arena, &output));
  kiln_var_t **params = NULL;
  kiln_expr_t **args = NULL;
  size_t count = (size_t)(num_inputs ? num_inputs : 1);
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, count, sizeof(*params), _Alignof(void *), (void **)&params));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(arena, count, sizeof(*args), _Alignof(void *), (void **)&args));
  for (int i = 0; i < num_inputs; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "p%d", i);
    KILN_RETURN_IF_ERROR(kiln_ir_var_create(module, name, input_types[i], &params[i]));
    args[i] = &params[i]->base;
  }
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(module, op, num_inputs, args, attrs, &call));
  KILN_RETURN_IF_ERROR(
      kiln_ir_function_create(module, num_inputs, params, &call->base, out_function));
  KILN_RETURN_IF_ERROR(kiln_module_add_function(module, "main", *out_function));
  return kiln_ir_infer_function(module, "main", *out_function);
}

kiln_status_t kiln_compiler_call_function(kiln_allocator_t allocator, const kiln_op_t *op,
                                          const void *attrs, int num_inputs,
                                          const kiln_type_t *const *input_types,
                                          kiln_module_t **out_module,
                                          kiln_function_t **out_function) {
  *out_module = NULL;
  *out_function = NULL;
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_module_create(allocator, &module));
  kiln_status_t status = build(module, op, attrs, num_inputs, input_types, out_function);
  if (status) {
    kiln_module_destroy(module);
    *out_function = NULL;
    return status;
  }
  *out_module = module;
  return KILN_OK;
}
