/*
 * Per-function plans of the interpreter; see plan.h.
 *
 * Built in three passes over the canonical order: index the nodes (a pointer
 * map from node to position, dropped when the plan is done), mark the
 * evaluated nodes from the body backwards, then record each evaluated node's
 * operands and count the uses. Every array comes from the run's allocator.
 */
#include "interp/plan.h"

#include <stdio.h>
#include <string.h>

#include "base/hashmap.h"
#include "op/control_attrs.h"

kiln_expr_t *kiln_interp_operand(const kiln_expr_t *expr, int k) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL: {
    const kiln_call_t *call = kiln_expr_as_call(expr);
    return k < call->num_args ? call->args[k] : NULL;
  }
  case KILN_EXPR_KIND_TUPLE: {
    const kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    return k < tuple->num_fields ? tuple->fields[k] : NULL;
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return k == 0 ? kiln_expr_as_tuple_get_item(expr)->tuple : NULL;
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return NULL;
}

const char *kiln_interp_describe(const kiln_ir_order_t *naming, const kiln_expr_t *expr,
                                 char *buffer) {
  for (size_t i = 0; i < kiln_ir_order_count(naming); i++) {
    if (kiln_ir_order_node(naming, i) == expr)
      return kiln_ir_order_describe(naming, i, buffer);
  }
  snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "a %s node", kiln_expr_kind_name(expr->kind));
  return buffer;
}

static size_t kiln_interp_plan_operand_count(const kiln_expr_t *expr) {
  size_t count = 0;
  while (kiln_interp_operand(expr, (int)count) != NULL)
    count++;
  return count;
}

static kiln_status_t kiln_interp_plan_allocate(kiln_allocator_t allocator,
                                               kiln_interp_plan_t *plan) {
  size_t n = plan->count;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, n, sizeof(bool), (void **)&plan->evaluated));
  memset(plan->evaluated, 0, n * sizeof(bool));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, n, sizeof(int32_t), (void **)&plan->uses));
  memset(plan->uses, 0, n * sizeof(int32_t));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, n + 1, sizeof(size_t), (void **)&plan->operand_start));
  return kiln_allocator_malloc_array(allocator, n, sizeof(int), (void **)&plan->param_index);
}

/* Marks the nodes the body reaches through operands, from the body back. */
static kiln_status_t kiln_interp_plan_mark(kiln_interp_plan_t *plan, const kiln_hashmap_t *index,
                                           size_t *out_operand_total) {
  size_t total = 0;
  plan->evaluated[plan->count - 1] = true;
  for (size_t i = plan->count; i-- > 0;) {
    if (!plan->evaluated[i])
      continue;
    const kiln_expr_t *expr = kiln_ir_order_node(&plan->order, i);
    kiln_expr_t *operand = NULL;
    for (int k = 0; (operand = kiln_interp_operand(expr, k)) != NULL; k++) {
      void *position = NULL;
      if (!kiln_hashmap_get(index, operand, &position)) {
        return KILN_STATUS(INTERNAL, "an operand is missing from the canonical order");
      }
      plan->evaluated[(uintptr_t)position - 1] = true;
      total++;
    }
  }
  *out_operand_total = total;
  return KILN_OK;
}

static int kiln_interp_plan_param_position(const kiln_function_t *function,
                                           const kiln_expr_t *var) {
  for (int j = 0; j < function->num_params; j++) {
    if (&function->params[j]->base == var)
      return j;
  }
  return -1;
}

/* Checks a node the plan evaluates and records its parameter position. */
static kiln_status_t kiln_interp_plan_check_node(kiln_interp_plan_t *plan, size_t i,
                                                 const kiln_ir_order_t *naming) {
  const kiln_expr_t *expr = kiln_ir_order_node(&plan->order, i);
  char name[KILN_IR_ORDER_NAME_CAPACITY];
  if (expr->kind == KILN_EXPR_KIND_VAR) {
    plan->param_index[i] = kiln_interp_plan_param_position(plan->function, expr);
    if (plan->param_index[i] < 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s is not a parameter of the function that uses it; the interpreter "
                         "runs closed functions only",
                         kiln_interp_describe(naming, expr, name));
    }
  }
  /* A Function is a value only as an argument of if, loop, scan or seq.map,
   * which call it themselves: it evaluates to nothing. */
  if (expr->kind == KILN_EXPR_KIND_FUNCTION && i + 1 == plan->count) {
    return KILN_STATUS(UNIMPLEMENTED, "%s is used as a value; the interpreter only calls functions",
                       kiln_interp_describe(naming, expr, name));
  }
  const kiln_expr_t *operand = NULL;
  for (int k = 0; (operand = kiln_interp_operand(expr, k)) != NULL; k++) {
    const kiln_call_t *call = kiln_expr_as_call(expr);
    if (operand->kind == KILN_EXPR_KIND_FUNCTION &&
        (call == NULL || !kiln_op_is_control(call->op))) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "%s is used as a value; the interpreter only calls functions, or passes "
                         "them to if, loop, scan and seq.map",
                         kiln_interp_describe(naming, operand, name));
    }
  }
  return KILN_OK;
}

/* Records the operands of every evaluated node and counts their uses. */
static kiln_status_t kiln_interp_plan_link(kiln_allocator_t allocator, kiln_interp_plan_t *plan,
                                           const kiln_hashmap_t *index, size_t operand_total,
                                           const kiln_ir_order_t *naming) {
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(allocator, operand_total > 0 ? operand_total : 1,
                                                   sizeof(size_t), (void **)&plan->operands));
  size_t next = 0;
  for (size_t i = 0; i < plan->count; i++) {
    plan->operand_start[i] = next;
    plan->param_index[i] = -1;
    if (!plan->evaluated[i])
      continue;
    KILN_RETURN_IF_ERROR(kiln_interp_plan_check_node(plan, i, naming));
    const kiln_expr_t *expr = kiln_ir_order_node(&plan->order, i);
    size_t operand_count = kiln_interp_plan_operand_count(expr);
    for (size_t k = 0; k < operand_count; k++) {
      void *position = NULL;
      (void)kiln_hashmap_get(index, kiln_interp_operand(expr, (int)k), &position);
      size_t operand = (uintptr_t)position - 1;
      plan->operands[next++] = operand;
      plan->uses[operand]++;
    }
  }
  plan->operand_start[plan->count] = next;
  return KILN_OK;
}

static kiln_status_t kiln_interp_plan_build(kiln_allocator_t allocator, kiln_interp_plan_t *plan,
                                            const kiln_ir_order_t *naming) {
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(plan->function, allocator, &plan->order));
  plan->count = kiln_ir_order_count(&plan->order);
  KILN_RETURN_IF_ERROR(kiln_interp_plan_allocate(allocator, plan));
  kiln_hashmap_t index;
  kiln_hashmap_initialize(&index, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = KILN_OK;
  for (size_t i = 0; i < plan->count && status == NULL; i++) {
    status =
        kiln_hashmap_put(&index, kiln_ir_order_node(&plan->order, i), (void *)(uintptr_t)(i + 1));
  }
  size_t operand_total = 0;
  if (status == NULL)
    status = kiln_interp_plan_mark(plan, &index, &operand_total);
  if (status == NULL)
    status = kiln_interp_plan_link(allocator, plan, &index, operand_total, naming);
  kiln_hashmap_deinitialize(&index);
  return status;
}

kiln_status_t kiln_interp_plan_create(kiln_allocator_t allocator, const kiln_function_t *function,
                                      const kiln_ir_order_t *naming,
                                      kiln_interp_plan_t **out_plan) {
  *out_plan = NULL;
  kiln_interp_plan_t *plan = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*plan), (void **)&plan));
  plan->function = function;
  kiln_array_initialize(&plan->order.nodes, allocator, sizeof(kiln_expr_t *));
  kiln_array_initialize(&plan->order.numbers, allocator, sizeof(int));
  kiln_status_t status =
      kiln_interp_plan_build(allocator, plan, naming != NULL ? naming : &plan->order);
  if (status != NULL) {
    kiln_interp_plan_destroy(allocator, plan);
    return status;
  }
  *out_plan = plan;
  return KILN_OK;
}

void kiln_interp_plan_destroy(kiln_allocator_t allocator, kiln_interp_plan_t *plan) {
  if (plan == NULL)
    return;
  kiln_ir_order_deinitialize(&plan->order);
  kiln_allocator_free(allocator, plan->evaluated);
  kiln_allocator_free(allocator, plan->uses);
  kiln_allocator_free(allocator, plan->operand_start);
  kiln_allocator_free(allocator, plan->operands);
  kiln_allocator_free(allocator, plan->param_index);
  kiln_allocator_free(allocator, plan);
}
