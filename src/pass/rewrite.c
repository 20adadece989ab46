/*
 * The passes' shared tools (rewrite.h).
 *
 * The rewriter overrides every rule of a mutator with one that rebuilds the
 * node (the default rule: children first, memoized), types the result when
 * it is new, and for an operator call hands it to the pass's rule. Typing
 * node by node keeps the invariant the rules rely on: every node they see is
 * typed. A rebuilt Function gets its body's type as ret_type, so calls of it
 * type too. Evaluation is the importer's folding (frontend/onnx/onnx_fold.c)
 * restated over the module: output tensors shaped by the checked type, the
 * reference kernel, Constants of the results.
 */
#include "pass/rewrite.h"

#include <stdint.h>

#include "ir/infer.h"
#include "ir/order.h"

bool kiln_pass_is_call_of(const kiln_expr_t *expr, const kiln_op_t *op) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  return call && call->op == op;
}

const kiln_tensor_type_t *kiln_pass_tensor_type(const kiln_expr_t *expr) {
  return expr->checked_type ? kiln_type_as_tensor(expr->checked_type) : NULL;
}

kiln_status_t kiln_pass_type_node(kiln_module_t *module, kiln_expr_t *expr) {
  if (expr->checked_type) {
    return KILN_OK;
  }
  kiln_function_t *function = kiln_expr_as_function(expr);
  if (function) {
    function->ret_type = function->body->checked_type;
    return KILN_OK;
  }
  return kiln_ir_infer_node(kiln_module_arena(module), expr, &expr->checked_type);
}

kiln_status_t kiln_pass_make_call_attrs(kiln_module_t *module, const kiln_op_t *op, int num_args,
                                        kiln_expr_t *const *args, const void *attrs,
                                        kiln_expr_t **out_expr) {
  *out_expr = NULL;
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(module, op, num_args, args, attrs, &call));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_pass_type_node(module, &call->base), "a new %s", op->name);
  *out_expr = &call->base;
  return KILN_OK;
}

kiln_status_t kiln_pass_make_call(kiln_module_t *module, const kiln_op_t *op, int num_args,
                                  kiln_expr_t *const *args, const char *const *settings,
                                  kiln_expr_t **out_expr) {
  *out_expr = NULL;
  void *attrs = NULL;
  kiln_arena_t *arena = kiln_module_arena(module);
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, arena, &attrs));
  for (const char *const *setting = settings; setting && setting[0]; setting += 2) {
    KILN_RETURN_IF_ERROR(kiln_op_attrs_set_text(op, attrs, setting[0], setting[1], arena));
  }
  if (attrs) {
    KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(op, attrs));
  }
  return kiln_pass_make_call_attrs(module, op, num_args, args, attrs, out_expr);
}

kiln_status_t kiln_pass_make_constant(kiln_module_t *module, kiln_tensor_t *tensor,
                                      kiln_expr_t **out_expr) {
  *out_expr = NULL;
  kiln_constant_t *constant = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_constant_create(module, tensor, &constant));
  KILN_RETURN_IF_ERROR(kiln_pass_type_node(module, &constant->base));
  *out_expr = &constant->base;
  return KILN_OK;
}

bool kiln_pass_constant_scalar_f32(const kiln_expr_t *expr, float *out_value) {
  if (expr->kind != KILN_EXPR_KIND_CONSTANT) {
    return false;
  }
  const kiln_tensor_t *t = kiln_expr_as_constant(expr)->value;
  if (kiln_tensor_dtype(t) != KILN_DTYPE_FLOAT32 || kiln_tensor_element_count(t) != 1) {
    return false;
  }
  *out_value = *(const float *)kiln_tensor_data(t);
  return true;
}

bool kiln_pass_args_constant(const kiln_call_t *call) {
  for (int i = 0; i < call->num_args; ++i) {
    if (!kiln_expr_as_constant(call->args[i])) {
      return false;
    }
  }
  return true;
}

kiln_status_t kiln_pass_make_call_folded(kiln_module_t *module, const kiln_op_t *op, int num_args,
                                         kiln_expr_t *const *args, const char *const *settings,
                                         kiln_expr_t **out_expr) {
  KILN_RETURN_IF_ERROR(kiln_pass_make_call(module, op, num_args, args, settings, out_expr));
  kiln_call_t *call = kiln_expr_as_call(*out_expr);
  if (!kiln_pass_args_constant(call)) {
    return KILN_OK;
  }
  kiln_expr_t *folded = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_evaluate_call(module, call, &folded));
  if (folded) {
    *out_expr = folded;
  }
  return KILN_OK;
}

kiln_status_t kiln_pass_make_scalar_f32(kiln_module_t *module, float value,
                                        kiln_expr_t **out_expr) {
  *out_expr = NULL;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(kiln_module_allocator(module), KILN_DTYPE_FLOAT32, 0,
                                               NULL, &value, sizeof(value), &tensor));
  kiln_status_t status = kiln_pass_make_constant(module, tensor, out_expr);
  kiln_tensor_release(tensor);
  return status;
}

/* ---- the rewriter ---- */

static kiln_status_t rewrite_rule(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  kiln_pass_rewriter_t *rewriter = (kiln_pass_rewriter_t *)self;
  kiln_expr_t *rebuilt = NULL;
  KILN_RETURN_IF_ERROR(kiln_expr_mutator_rebuild(&rewriter->mutator, expr, &rebuilt));
  KILN_RETURN_IF_ERROR(kiln_pass_type_node(rewriter->module, rebuilt));
  kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(rebuilt);
  kiln_tuple_t *tuple = item ? kiln_expr_as_tuple(item->tuple) : NULL;
  if (tuple && rewriter->forward_items) {
    rewriter->forwarded++;
    *(kiln_expr_t **)result = tuple->fields[item->index];
    return KILN_OK;
  }
  kiln_call_t *call = kiln_expr_as_call(rebuilt);
  if (call && rewriter->call_rule) {
    kiln_expr_t *replaced = NULL;
    rewriter->original = expr;
    KILN_RETURN_IF_ERROR_ANNOTATE(rewriter->call_rule(rewriter, call, &replaced), "at %s",
                                  call->op ? call->op->name : "a function call");
    KILN_RETURN_IF_ERROR(kiln_pass_type_node(rewriter->module, replaced));
    rebuilt = replaced;
  }
  *(kiln_expr_t **)result = rebuilt;
  return KILN_OK;
}

kiln_status_t kiln_pass_rewrite_module_with(kiln_module_t *module, kiln_pass_context_t *context,
                                            kiln_pass_rewriter_t *rewriter) {
  rewriter->module = module;
  rewriter->context = context;
  kiln_expr_mutator_initialize(&rewriter->mutator, module, kiln_module_allocator(module));
  for (int kind = 0; kind < KILN_EXPR_KIND_COUNT_; ++kind) {
    kiln_expr_functor_override(&rewriter->mutator.functor, (kiln_expr_kind_t)kind, rewrite_rule);
  }
  kiln_status_t status = KILN_OK;
  int count = kiln_module_function_count(module);
  for (int i = 0; i < count && !status; ++i) {
    kiln_function_t *function = kiln_module_function_at(module, i);
    const char *name = kiln_module_function_name(module, i);
    kiln_expr_t *fresh = NULL;
    status = kiln_status_annotate(
        kiln_expr_mutator_mutate(&rewriter->mutator, &function->base, &fresh), "in @%s", name);
    if (!status && fresh != &function->base) {
      kiln_function_t *fresh_function = kiln_expr_as_function(fresh);
      fresh_function->ret_type = NULL;
      status = kiln_module_set_function(module, name, fresh_function);
    }
  }
  kiln_expr_mutator_deinitialize(&rewriter->mutator);
  KILN_RETURN_IF_ERROR(status);
  return kiln_ir_infer_types(module);
}

kiln_status_t kiln_pass_rewrite_module(kiln_module_t *module, kiln_pass_context_t *context,
                                       kiln_pass_call_rule_fn call_rule, void *state,
                                       int64_t *out_rewrites) {
  if (out_rewrites) {
    *out_rewrites = 0;
  }
  kiln_pass_rewriter_t rewriter = {.call_rule = call_rule, .state = state};
  KILN_RETURN_IF_ERROR(kiln_pass_rewrite_module_with(module, context, &rewriter));
  if (out_rewrites) {
    *out_rewrites = rewriter.rewrites;
  }
  return KILN_OK;
}

/* ---- evaluation ---- */

static kiln_status_t evaluate_result(kiln_module_t *module, const kiln_type_t *type,
                                     kiln_tensor_t *const *outputs, int count,
                                     kiln_expr_t **out_expr) {
  if (kiln_type_as_tensor(type)) {
    return kiln_pass_make_constant(module, outputs[0], out_expr);
  }
  kiln_expr_t *fields[KILN_OP_EVALUATE_MAX_TENSORS];
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_pass_make_constant(module, outputs[i], &fields[i]));
  }
  kiln_tuple_t *tuple = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(module, count, fields, &tuple));
  KILN_RETURN_IF_ERROR(kiln_pass_type_node(module, &tuple->base));
  *out_expr = &tuple->base;
  return KILN_OK;
}

kiln_status_t kiln_pass_evaluate_call(kiln_module_t *module, const kiln_call_t *call,
                                      kiln_expr_t **out_expr) {
  *out_expr = NULL;
  if (!call->op || !kiln_op_can_evaluate(call->op) ||
      call->num_args > KILN_OP_EVALUATE_MAX_TENSORS) {
    return KILN_OK;
  }
  kiln_tensor_t *inputs[KILN_OP_EVALUATE_MAX_TENSORS];
  for (int i = 0; i < call->num_args; ++i) {
    const kiln_constant_t *constant = kiln_expr_as_constant(call->args[i]);
    if (!constant) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: argument %d is a %s, not a Constant",
                         call->op->name, i, kiln_expr_kind_name(call->args[i]->kind));
    }
    inputs[i] = constant->value;
  }
  kiln_op_evaluation_t e;
  kiln_status_t status = kiln_op_evaluate(kiln_module_allocator(module), call->op, call->attrs,
                                          call->num_args, inputs, call->base.checked_type, &e);
  if (!status) {
    status = evaluate_result(module, call->base.checked_type, e.outputs, e.count, out_expr);
    kiln_op_evaluation_release(&e);
  }
  if (kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
    kiln_status_free(status);
    *out_expr = NULL;
    return KILN_OK;
  }
  return status;
}

/* ---- use counts and call counts ---- */

static kiln_status_t uses_add(kiln_pass_uses_t *uses, const kiln_expr_t *expr) {
  void *value = NULL;
  kiln_hashmap_get(&uses->counts, expr, &value);
  return kiln_hashmap_put(&uses->counts, expr, (void *)((uintptr_t)value + 1));
}

static kiln_status_t uses_add_children(kiln_pass_uses_t *uses, const kiln_expr_t *expr) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_COUNT_:
    return KILN_OK;
  case KILN_EXPR_KIND_CALL: {
    const kiln_call_t *call = kiln_expr_as_call(expr);
    if (call->callee) {
      KILN_RETURN_IF_ERROR(uses_add(uses, &call->callee->base));
    }
    for (int i = 0; i < call->num_args; ++i) {
      KILN_RETURN_IF_ERROR(uses_add(uses, call->args[i]));
    }
    return KILN_OK;
  }
  case KILN_EXPR_KIND_TUPLE: {
    const kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    for (int i = 0; i < tuple->num_fields; ++i) {
      KILN_RETURN_IF_ERROR(uses_add(uses, tuple->fields[i]));
    }
    return KILN_OK;
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return uses_add(uses, kiln_expr_as_tuple_get_item(expr)->tuple);
  case KILN_EXPR_KIND_FUNCTION:
    return uses_add(uses, kiln_expr_as_function(expr)->body);
  }
  return KILN_OK;
}

/* Calls `visit` on every node of every function of the module, each once. */
typedef kiln_status_t (*node_visit_fn)(void *user, const kiln_expr_t *expr);

static kiln_status_t for_each_node(const kiln_module_t *module, kiln_allocator_t allocator,
                                   node_visit_fn visit, void *user) {
  kiln_hashmap_t seen;
  kiln_hashmap_initialize(&seen, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = KILN_OK;
  for (int f = 0; f < kiln_module_function_count(module) && !status; ++f) {
    const kiln_function_t *function = kiln_module_function_at(module, f);
    kiln_ir_order_t order;
    status = kiln_ir_order_compute(function, allocator, &order);
    for (size_t i = 0; !status && i < kiln_ir_order_count(&order); ++i) {
      kiln_expr_t *node = kiln_ir_order_node(&order, i);
      if (!kiln_hashmap_contains(&seen, node)) {
        status = kiln_hashmap_put(&seen, node, NULL);
        status = status ? status : visit(user, node);
      }
    }
    if (!status && !kiln_hashmap_contains(&seen, function)) {
      status = kiln_hashmap_put(&seen, function, NULL);
      status = status ? status : visit(user, &function->base);
    }
    kiln_ir_order_deinitialize(&order);
  }
  kiln_hashmap_deinitialize(&seen);
  return status;
}

static kiln_status_t uses_visit(void *user, const kiln_expr_t *expr) {
  return uses_add_children(user, expr);
}

kiln_status_t kiln_pass_uses_compute(const kiln_module_t *module, kiln_allocator_t allocator,
                                     kiln_pass_uses_t *out_uses) {
  kiln_hashmap_initialize(&out_uses->counts, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = for_each_node(module, allocator, uses_visit, out_uses);
  if (status) {
    kiln_pass_uses_deinitialize(out_uses);
  }
  return status;
}

void kiln_pass_uses_deinitialize(kiln_pass_uses_t *uses) {
  kiln_hashmap_deinitialize(&uses->counts);
}

size_t kiln_pass_uses_count(const kiln_pass_uses_t *uses, const kiln_expr_t *expr) {
  void *value = NULL;
  kiln_hashmap_get(&uses->counts, expr, &value);
  return (size_t)(uintptr_t)value;
}

typedef struct call_count_t {
  const kiln_op_t *op;
  int64_t count;
} call_count_t;

static kiln_status_t count_visit(void *user, const kiln_expr_t *expr) {
  call_count_t *counter = user;
  const kiln_call_t *call = kiln_expr_as_call(expr);
  if (call && (!counter->op || call->op == counter->op)) {
    counter->count++;
  }
  return KILN_OK;
}

kiln_status_t kiln_pass_count_calls(const kiln_module_t *module, const kiln_op_t *op,
                                    kiln_allocator_t allocator, int64_t *out_count) {
  call_count_t counter = {.op = op, .count = 0};
  *out_count = 0;
  KILN_RETURN_IF_ERROR(for_each_node(module, allocator, count_visit, &counter));
  *out_count = counter.count;
  return KILN_OK;
}
