/*
 * Type inference; see infer.h.
 *
 * One loop over the canonical order: by the time a node is reached, all of
 * its inputs have types, so each rule only reads its inputs' checked_type.
 * The rule per kind is kiln_ir_infer_node; the loop adds the node's printed
 * name to any error. A Function passed to an operator (if, loop, scan,
 * seq.map) reaches the operator's type relation as its function type.
 */
#include "ir/infer.h"

#include "ir/order.h"
#include "op/op.h"

kiln_status_t kiln_ir_infer_func_type(kiln_arena_t *arena, const kiln_function_t *function,
                                      const kiln_type_t **out_type) {
  const kiln_type_t **params = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(
      arena, (size_t)(function->num_params > 0 ? function->num_params : 1), sizeof(*params),
      _Alignof(const kiln_type_t *), (void **)&params));
  for (int i = 0; i < function->num_params; i++) {
    params[i] = function->params[i]->type_annotation;
    if (params[i] == NULL) {
      return KILN_STATUS(INVALID_ARGUMENT, "parameter %%%s of a function argument has no type",
                         function->params[i]->name);
    }
  }
  return kiln_func_type_create(arena, function->num_params, params, function->ret_type, out_type);
}

/* Collects the checked types of `count` nodes into an arena array. */
static kiln_status_t kiln_ir_infer_gather(kiln_arena_t *arena, int count, kiln_expr_t *const *nodes,
                                          const kiln_type_t ***out_types) {
  const kiln_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(count > 0 ? count : 1),
                                                 sizeof(*types), _Alignof(const kiln_type_t *),
                                                 (void **)&types));
  for (int i = 0; i < count; i++) {
    types[i] = nodes[i]->checked_type;
    const kiln_function_t *function = kiln_expr_as_function(nodes[i]);
    if (function != NULL)
      KILN_RETURN_IF_ERROR(kiln_ir_infer_func_type(arena, function, &types[i]));
  }
  *out_types = types;
  return NULL;
}

static kiln_status_t kiln_ir_infer_function_call(const kiln_call_t *call,
                                                 const kiln_type_t **out_type) {
  const kiln_function_t *callee = call->callee;
  if (call->num_args != callee->num_params) {
    return KILN_STATUS(INVALID_ARGUMENT, "the function takes %d arguments, not %d",
                       callee->num_params, call->num_args);
  }
  for (int i = 0; i < call->num_args; i++) {
    const kiln_type_t *expected = callee->params[i]->type_annotation;
    if (!kiln_type_equal(call->args[i]->checked_type, expected)) {
      char actual_text[KILN_IR_TYPE_TEXT_CAPACITY];
      char expected_text[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "argument %d is %s but parameter %%%s is %s", i,
                         kiln_type_text(call->args[i]->checked_type, actual_text),
                         callee->params[i]->name, kiln_type_text(expected, expected_text));
    }
  }
  *out_type = callee->ret_type;
  return NULL;
}

static kiln_status_t kiln_ir_infer_tuple_get_item(const kiln_tuple_get_item_t *item,
                                                  const kiln_type_t **out_type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(item->tuple->checked_type);
  if (tuple == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "the indexed value is not a tuple");
  }
  if (item->index < 0 || item->index >= tuple->count) {
    return KILN_STATUS(OUT_OF_RANGE, "index %d is out of range for a tuple of %d fields",
                       item->index, tuple->count);
  }
  *out_type = tuple->fields[item->index];
  return NULL;
}

kiln_status_t kiln_ir_infer_node(kiln_arena_t *arena, kiln_expr_t *expr,
                                 const kiln_type_t **out_type) {
  const kiln_type_t **types = NULL;
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR: {
    const kiln_var_t *var = kiln_expr_as_var(expr);
    if (var->type_annotation == NULL) {
      return KILN_STATUS(INVALID_ARGUMENT, "the parameter has no type annotation");
    }
    *out_type = var->type_annotation;
    return NULL;
  }
  case KILN_EXPR_KIND_CONSTANT:
    return kiln_tensor_type_of(arena, kiln_expr_as_constant(expr)->value, out_type);
  case KILN_EXPR_KIND_CALL: {
    const kiln_call_t *call = kiln_expr_as_call(expr);
    if (call->callee != NULL)
      return kiln_ir_infer_function_call(call, out_type);
    KILN_RETURN_IF_ERROR(kiln_ir_infer_gather(arena, call->num_args, call->args, &types));
    return kiln_op_infer_type(call->op, call->attrs, call->num_args, types, arena, out_type);
  }
  case KILN_EXPR_KIND_TUPLE: {
    const kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    KILN_RETURN_IF_ERROR(kiln_ir_infer_gather(arena, tuple->num_fields, tuple->fields, &types));
    return kiln_tuple_type_create(arena, tuple->num_fields, types, out_type);
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return kiln_ir_infer_tuple_get_item(kiln_expr_as_tuple_get_item(expr), out_type);
  case KILN_EXPR_KIND_FUNCTION:
    *out_type = NULL; /* the result is the ret_type; see infer.h */
    return NULL;
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "no type rule for node kind %d", (int)expr->kind);
}

static kiln_status_t kiln_ir_infer_order(kiln_module_t *module, const char *name,
                                         const kiln_ir_order_t *order) {
  kiln_arena_t *arena = kiln_module_arena(module);
  for (size_t i = 0; i < kiln_ir_order_count(order); i++) {
    kiln_expr_t *expr = kiln_ir_order_node(order, i);
    const kiln_type_t *type = NULL;
    kiln_status_t status = kiln_ir_infer_node(arena, expr, &type);
    if (status != NULL) {
      char node[KILN_IR_ORDER_NAME_CAPACITY];
      return kiln_status_annotate(status, "in @%s, %s", name,
                                  kiln_ir_order_describe(order, i, node));
    }
    expr->checked_type = type;
    kiln_function_t *function = kiln_expr_as_function(expr);
    if (function != NULL)
      function->ret_type = function->body->checked_type;
  }
  return NULL;
}

kiln_status_t kiln_ir_infer_function(kiln_module_t *module, const char *name,
                                     kiln_function_t *function) {
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, kiln_module_allocator(module), &order));
  kiln_status_t status = kiln_ir_infer_order(module, name, &order);
  kiln_ir_order_deinitialize(&order);
  KILN_RETURN_IF_ERROR(status);
  function->ret_type = function->body->checked_type;
  return NULL;
}

kiln_status_t kiln_ir_infer_types(kiln_module_t *module) {
  for (int i = 0; i < kiln_module_function_count(module); i++) {
    KILN_RETURN_IF_ERROR(kiln_ir_infer_function(module, kiln_module_function_name(module, i),
                                                kiln_module_function_at(module, i)));
  }
  return NULL;
}
