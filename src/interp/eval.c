/*
 * The interpreter's evaluation loop; see eval.h.
 *
 * One function per node kind. An operator call borrows its inputs from the
 * operands' values, allocates its outputs from the node's checked type (a
 * tuple type flattened, as kiln_kernel_args_t wants) — or, when that (or an
 * argument's) has a symbolic dim, from the concrete type computed at run
 * time (interp/shapes.h), and when an input's shape is not its static
 * type's (a loop body's carried values), from the same run-time typing
 * without the check against the checked type — runs the reference
 * kernel and rebuilds the tuple nesting; whatever fails on the way releases
 * the outputs made so far. Kernel times are taken only when a hook or debug
 * logging will use them.
 */
#include "interp/eval.h"

#include <string.h>
#include <time.h>

#include "base/log.h"
#include "interp/shapes.h"
#include "op/control_attrs.h"
#include "op/op.h"

void kiln_interp_context_initialize(kiln_interp_context_t *context,
                                    const kiln_interp_options_t *options,
                                    const char *function_name) {
  memset(context, 0, sizeof(*context));
  context->allocator = options->allocator;
  context->function_name = function_name;
  context->hook = options->node_hook;
  context->hook_data = options->node_hook_data;
  context->timed = options->node_hook != NULL || kiln_log_level() >= KILN_LOG_LEVEL_DEBUG;
  kiln_hashmap_initialize(&context->callee_plans, options->allocator, KILN_HASHMAP_KEY_POINTER);
}

void kiln_interp_context_deinitialize(kiln_interp_context_t *context) {
  kiln_hashmap_iterator_t iterator;
  kiln_hashmap_iterator_initialize(&iterator, &context->callee_plans);
  void *plan = NULL;
  while (kiln_hashmap_iterator_next(&iterator, NULL, &plan)) {
    kiln_interp_plan_destroy(context->allocator, plan);
  }
  kiln_hashmap_deinitialize(&context->callee_plans);
}

static double kiln_interp_now(void) {
  struct timespec now;
  if (timespec_get(&now, TIME_UTC) != TIME_UTC)
    return 0;
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* Node `index` of `plan` as the run's top-level order names it. */
static const char *kiln_interp_node_name(const kiln_interp_context_t *context,
                                         const kiln_interp_plan_t *plan, size_t index,
                                         char *buffer) {
  if (plan == context->top)
    return kiln_ir_order_describe(&plan->order, index, buffer);
  return kiln_interp_describe(&context->top->order, kiln_ir_order_node(&plan->order, index),
                              buffer);
}

/* ---- operator calls ---- */

/* Logs and reports a kernel that ran in `seconds`. */
static kiln_status_t kiln_interp_trace(kiln_interp_context_t *context,
                                       const kiln_interp_plan_t *plan, size_t index,
                                       const kiln_kernel_args_t *args, double seconds) {
  char name[KILN_IR_ORDER_NAME_CAPACITY];
  kiln_interp_node_name(context, plan, index, name);
  KILN_LOG_DEBUG("interp @%s %s: %.3f ms", context->function_name, name, seconds * 1e3);
  if (context->hook == NULL)
    return KILN_OK;
  kiln_interp_node_event_t event = {
      .function_name = context->function_name,
      .node = kiln_ir_order_node(&plan->order, index),
      .description = name,
      .num_inputs = args->num_inputs,
      .inputs = args->inputs,
      .num_outputs = args->num_outputs,
      .outputs = args->outputs,
      .seconds = seconds,
  };
  return context->hook(context->hook_data, &event);
}

static kiln_status_t kiln_interp_run_kernel(kiln_interp_context_t *context,
                                            const kiln_interp_plan_t *plan, size_t index,
                                            const kiln_kernel_args_t *args) {
  double start = context->timed ? kiln_interp_now() : 0;
  KILN_RETURN_IF_ERROR(kiln_op_evaluate_into(args));
  if (!context->timed)
    return KILN_OK;
  return kiln_interp_trace(context, plan, index, args, kiln_interp_now() - start);
}

/* Borrows the operands' tensors into inputs[0..num_args). */
static kiln_status_t kiln_interp_gather_inputs(const kiln_interp_plan_t *plan, size_t index,
                                               const kiln_interp_value_t *values,
                                               const kiln_call_t *call, kiln_tensor_t **inputs) {
  const size_t *operands = &plan->operands[plan->operand_start[index]];
  for (int k = 0; k < call->num_args; k++) {
    const kiln_interp_value_t *value = &values[operands[k]];
    if (value->kind != KILN_INTERP_VALUE_TENSOR) {
      return KILN_STATUS(INVALID_ARGUMENT, "argument %d of %s is not a tensor", k, call->op->name);
    }
    inputs[k] = value->tensor;
  }
  return KILN_OK;
}

/* Whether each input has its argument's checked type, as in a static graph
 * (a shape known only at run time, as in a loop body, may not). */
static bool kiln_interp_inputs_typed(const kiln_call_t *call, kiln_tensor_t *const *inputs) {
  for (int k = 0; k < call->num_args; k++) {
    const kiln_tensor_type_t *type = kiln_type_as_tensor(call->args[k]->checked_type);
    if (type == NULL || type->dtype != kiln_tensor_dtype(inputs[k]) ||
        !kiln_shape_equal(type->ndim, type->shape, kiln_tensor_ndim(inputs[k]),
                          kiln_tensor_shape(inputs[k]))) {
      return false;
    }
  }
  return true;
}

/* Allocates the outputs of `type`, runs the kernel and builds the node's value. */
static kiln_status_t kiln_interp_run_typed(kiln_interp_context_t *context,
                                           const kiln_interp_plan_t *plan, size_t index,
                                           const kiln_call_t *call, const kiln_type_t *type,
                                           kiln_tensor_t **tensors, size_t num_outputs,
                                           kiln_interp_value_t *out_value) {
  kiln_tensor_t **outputs = tensors + call->num_args;
  size_t made = 0;
  KILN_RETURN_IF_ERROR(kiln_interp_type_create_tensors(context->allocator, type, outputs, &made));
  kiln_kernel_args_t args = {
      .op = call->op,
      .attrs = call->attrs,
      .num_inputs = call->num_args,
      .inputs = tensors,
      .num_outputs = (int)num_outputs,
      .outputs = outputs,
  };
  KILN_RETURN_IF_ERROR(kiln_interp_run_kernel(context, plan, index, &args));
  size_t position = 0;
  return kiln_interp_value_from_type(context->allocator, type, outputs, &position, out_value);
}

/* Runs the kernel on outputs of the node's checked type; of the concrete
 * type its inputs give when the call has symbolic dims (interp/shapes.h);
 * or, when the inputs' shapes are not those of the static types (shapes
 * known only at run time in a loop body), of the type the operator's
 * relation gives the actual inputs. */
static kiln_status_t kiln_interp_call_kernel(kiln_interp_context_t *context,
                                             const kiln_interp_plan_t *plan, size_t index,
                                             const kiln_call_t *call, kiln_tensor_t **tensors,
                                             size_t num_outputs, kiln_interp_value_t *out_value) {
  bool dynamic = kiln_interp_call_is_dynamic(call);
  if (!dynamic && kiln_interp_inputs_typed(call, tensors)) {
    return kiln_interp_run_typed(context, plan, index, call, call->base.checked_type, tensors,
                                 num_outputs, out_value);
  }
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, context->allocator, 1024);
  const kiln_type_t *type = NULL;
  kiln_status_t status = kiln_interp_call_type(&arena, call, tensors, dynamic, &type);
  if (status == NULL && kiln_interp_type_leaf_count(type) != num_outputs) {
    status = KILN_STATUS(INTERNAL, "%s gives %zu outputs at run time, %zu at import",
                         call->op->name, kiln_interp_type_leaf_count(type), num_outputs);
  }
  if (status == NULL)
    status =
        kiln_interp_run_typed(context, plan, index, call, type, tensors, num_outputs, out_value);
  kiln_arena_deinitialize(&arena);
  return status;
}

static kiln_status_t kiln_interp_eval_op_call(kiln_interp_context_t *context,
                                              const kiln_interp_plan_t *plan, size_t index,
                                              const kiln_interp_value_t *values,
                                              kiln_interp_value_t *out_value) {
  const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&plan->order, index));
  if (!kiln_op_can_evaluate(call->op)) {
    return KILN_STATUS(UNIMPLEMENTED, "%s has no reference kernel", call->op->name);
  }
  size_t num_outputs = kiln_interp_type_leaf_count(call->base.checked_type);
  size_t total = (size_t)call->num_args + num_outputs;
  kiln_tensor_t **tensors = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(context->allocator, total > 0 ? total : 1,
                                                   sizeof(*tensors), (void **)&tensors));
  memset(tensors, 0, (total > 0 ? total : 1) * sizeof(*tensors));
  kiln_status_t status = kiln_interp_gather_inputs(plan, index, values, call, tensors);
  if (status == NULL) {
    status = kiln_interp_call_kernel(context, plan, index, call, tensors, num_outputs, out_value);
  }
  for (size_t i = (size_t)call->num_args; i < total; i++) {
    kiln_tensor_release(tensors[i]); /* outputs not taken by the value */
  }
  kiln_allocator_free(context->allocator, tensors);
  return status;
}

/* ---- function calls ---- */

static kiln_status_t kiln_interp_callee_plan(kiln_interp_context_t *context,
                                             const kiln_function_t *callee,
                                             const kiln_interp_plan_t **out_plan) {
  void *found = NULL;
  if (kiln_hashmap_get(&context->callee_plans, callee, &found)) {
    *out_plan = found;
    return KILN_OK;
  }
  kiln_interp_plan_t *plan = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_interp_plan_create(context->allocator, callee, &context->top->order, &plan));
  kiln_status_t status = kiln_hashmap_put(&context->callee_plans, callee, plan);
  if (status != NULL) {
    kiln_interp_plan_destroy(context->allocator, plan);
    return status;
  }
  *out_plan = plan;
  return KILN_OK;
}

kiln_status_t kiln_interp_call(kiln_interp_context_t *context, const kiln_function_t *function,
                               const kiln_interp_value_t *const *args,
                               kiln_interp_value_t *out_value) {
  const kiln_interp_plan_t *plan = NULL;
  KILN_RETURN_IF_ERROR(kiln_interp_callee_plan(context, function, &plan));
  return kiln_interp_eval_function(context, plan, args, out_value);
}

kiln_status_t kiln_interp_operand_values(kiln_allocator_t allocator, const kiln_interp_plan_t *plan,
                                         size_t index, const kiln_interp_value_t *values,
                                         const kiln_interp_value_t ***out_args) {
  const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&plan->order, index));
  size_t count = call->num_args > 0 ? (size_t)call->num_args : 1;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, count, sizeof(**out_args), (void **)out_args));
  const size_t *operands = &plan->operands[plan->operand_start[index]];
  for (int k = 0; k < call->num_args; k++) {
    (*out_args)[k] = &values[operands[k]];
  }
  return KILN_OK;
}

static kiln_status_t kiln_interp_eval_function_call(kiln_interp_context_t *context,
                                                    const kiln_interp_plan_t *plan, size_t index,
                                                    const kiln_interp_value_t *values,
                                                    kiln_interp_value_t *out_value) {
  const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&plan->order, index));
  const kiln_interp_plan_t *callee = NULL;
  KILN_RETURN_IF_ERROR(kiln_interp_callee_plan(context, call->callee, &callee));
  const kiln_interp_value_t **args = NULL;
  KILN_RETURN_IF_ERROR(kiln_interp_operand_values(context->allocator, plan, index, values, &args));
  kiln_status_t status = kiln_interp_eval_function(context, callee, args, out_value);
  kiln_allocator_free(context->allocator, (void *)args);
  return status;
}

/* ---- tuples ---- */

static kiln_status_t kiln_interp_eval_tuple(kiln_allocator_t allocator,
                                            const kiln_interp_plan_t *plan, size_t index,
                                            const kiln_interp_value_t *values,
                                            kiln_interp_value_t *out_value) {
  size_t first = plan->operand_start[index];
  int count = (int)(plan->operand_start[index + 1] - first);
  KILN_RETURN_IF_ERROR(kiln_interp_value_tuple_create(allocator, count, out_value));
  for (int k = 0; k < count; k++) {
    kiln_status_t status = kiln_interp_value_copy(
        allocator, &values[plan->operands[first + (size_t)k]], &out_value->fields[k]);
    if (status != NULL) {
      kiln_interp_value_release(allocator, out_value);
      return status;
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_interp_eval_tuple_get_item(kiln_allocator_t allocator,
                                                     const kiln_interp_plan_t *plan, size_t index,
                                                     const kiln_interp_value_t *values,
                                                     kiln_interp_value_t *out_value) {
  const kiln_tuple_get_item_t *item =
      kiln_expr_as_tuple_get_item(kiln_ir_order_node(&plan->order, index));
  const kiln_interp_value_t *tuple = &values[plan->operands[plan->operand_start[index]]];
  if (tuple->kind != KILN_INTERP_VALUE_TUPLE || item->index < 0 ||
      item->index >= tuple->num_fields) {
    return KILN_STATUS(INTERNAL, "field %d of a value that is not a tuple of that many fields",
                       item->index);
  }
  return kiln_interp_value_copy(allocator, &tuple->fields[item->index], out_value);
}

/* ---- the loop ---- */

static kiln_status_t kiln_interp_eval_node(kiln_interp_context_t *context,
                                           const kiln_interp_plan_t *plan, size_t index,
                                           const kiln_interp_value_t *values,
                                           const kiln_interp_value_t *const *args,
                                           kiln_interp_value_t *out_value) {
  const kiln_expr_t *expr = kiln_ir_order_node(&plan->order, index);
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
    return kiln_interp_value_copy(context->allocator, args[plan->param_index[index]], out_value);
  case KILN_EXPR_KIND_CONSTANT: {
    kiln_tensor_t *tensor = kiln_expr_as_constant(expr)->value;
    kiln_tensor_retain(tensor);
    *out_value = kiln_interp_value_of_tensor(tensor);
    return KILN_OK;
  }
  case KILN_EXPR_KIND_CALL:
    if (kiln_expr_as_call(expr)->callee != NULL) {
      return kiln_interp_eval_function_call(context, plan, index, values, out_value);
    }
    if (kiln_op_is_control(kiln_expr_as_call(expr)->op)) {
      return kiln_interp_eval_control(context, plan, index, values, out_value);
    }
    return kiln_interp_eval_op_call(context, plan, index, values, out_value);
  case KILN_EXPR_KIND_TUPLE:
    return kiln_interp_eval_tuple(context->allocator, plan, index, values, out_value);
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return kiln_interp_eval_tuple_get_item(context->allocator, plan, index, values, out_value);
  case KILN_EXPR_KIND_FUNCTION: /* an argument of a control operator, which calls it */
    memset(out_value, 0, sizeof(*out_value));
    return KILN_OK;
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "the interpreter cannot evaluate a %s node",
                     kiln_expr_kind_name(expr->kind));
}

/* Drops one use of each operand of node `index`, releasing spent values. */
static void kiln_interp_release_operands(kiln_allocator_t allocator, const kiln_interp_plan_t *plan,
                                         size_t index, kiln_interp_value_t *values,
                                         int32_t *remaining) {
  for (size_t k = plan->operand_start[index]; k < plan->operand_start[index + 1]; k++) {
    size_t operand = plan->operands[k];
    if (--remaining[operand] == 0)
      kiln_interp_value_release(allocator, &values[operand]);
  }
}

static kiln_status_t kiln_interp_eval_loop(kiln_interp_context_t *context,
                                           const kiln_interp_plan_t *plan,
                                           const kiln_interp_value_t *const *args,
                                           kiln_interp_value_t *values, int32_t *remaining) {
  for (size_t i = 0; i < plan->count; i++) {
    if (!plan->evaluated[i])
      continue;
    kiln_status_t status = kiln_interp_eval_node(context, plan, i, values, args, &values[i]);
    if (status != NULL) {
      char name[KILN_IR_ORDER_NAME_CAPACITY];
      kiln_interp_node_name(context, plan, i, name);
      if (plan != context->top)
        return kiln_status_annotate(status, "%s", name);
      return kiln_status_annotate(status, "in @%s, %s", context->function_name, name);
    }
    kiln_interp_release_operands(context->allocator, plan, i, values, remaining);
  }
  return KILN_OK;
}

kiln_status_t kiln_interp_eval_function(kiln_interp_context_t *context,
                                        const kiln_interp_plan_t *plan,
                                        const kiln_interp_value_t *const *args,
                                        kiln_interp_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  kiln_allocator_t allocator = context->allocator;
  kiln_interp_value_t *values = NULL;
  int32_t *remaining = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, plan->count, sizeof(*values), (void **)&values));
  memset(values, 0, plan->count * sizeof(*values));
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, plan->count, sizeof(*remaining), (void **)&remaining);
  if (status == NULL) {
    memcpy(remaining, plan->uses, plan->count * sizeof(*remaining));
    status = kiln_interp_eval_loop(context, plan, args, values, remaining);
  }
  if (status == NULL) {
    *out_value = values[plan->count - 1]; /* the body; nothing reads it */
    memset(&values[plan->count - 1], 0, sizeof(*values));
  }
  for (size_t i = 0; i < plan->count; i++) {
    kiln_interp_value_release(allocator, &values[i]);
  }
  kiln_allocator_free(allocator, remaining);
  kiln_allocator_free(allocator, values);
  return status;
}
