/*
 * The canonical node order; see order.h.
 *
 * An explicit stack of (node, next child) frames replaces recursion. A node's
 * state lives in a pointer map: absent (not reached), ON_STACK (its subtree
 * is being walked: meeting it again is a cycle) or DONE (already emitted:
 * meeting it again is sharing, and it is skipped).
 */
#include "ir/order.h"

#include <stdio.h>

#include "base/hashmap.h"
#include "op/op.h"

enum { KILN_IR_ORDER_ON_STACK = 1, KILN_IR_ORDER_DONE = 2 };

typedef struct kiln_ir_order_frame_t {
  kiln_expr_t *expr;
  int next_child;
} kiln_ir_order_frame_t;

bool kiln_ir_expr_is_numbered(const kiln_expr_t *expr) {
  return expr->kind != KILN_EXPR_KIND_VAR && expr->kind != KILN_EXPR_KIND_CONSTANT;
}

/* Child `index` of `expr` in walk order, or NULL past the last one. */
static kiln_expr_t *kiln_ir_order_child(const kiln_expr_t *expr, int index) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL: {
    const kiln_call_t *call = kiln_expr_as_call(expr);
    if (call->callee != NULL) {
      if (index == 0)
        return &call->callee->base;
      index--;
    }
    return index < call->num_args ? call->args[index] : NULL;
  }
  case KILN_EXPR_KIND_TUPLE: {
    const kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    return index < tuple->num_fields ? tuple->fields[index] : NULL;
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return index == 0 ? kiln_expr_as_tuple_get_item(expr)->tuple : NULL;
  case KILN_EXPR_KIND_FUNCTION:
    return index == 0 ? kiln_expr_as_function(expr)->body : NULL;
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return NULL;
}

static kiln_status_t kiln_ir_order_emit(kiln_ir_order_t *order, kiln_expr_t *expr,
                                        int *next_number) {
  int number = kiln_ir_expr_is_numbered(expr) ? (*next_number)++ : -1;
  KILN_RETURN_IF_ERROR(kiln_array_push(&order->nodes, &expr));
  return kiln_array_push(&order->numbers, &number);
}

/* Pushes `expr` unless it is done; a node on the stack is a cycle. */
static kiln_status_t kiln_ir_order_enter(kiln_hashmap_t *state, kiln_array_t *stack,
                                         kiln_expr_t *expr) {
  void *seen = NULL;
  if (kiln_hashmap_get(state, expr, &seen)) {
    if ((uintptr_t)seen == KILN_IR_ORDER_ON_STACK) {
      return KILN_STATUS(INVALID_ARGUMENT, "the graph has a cycle through a %s node (id %u)",
                         kiln_expr_kind_name(expr->kind), (unsigned)expr->id);
    }
    return NULL;
  }
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(state, expr, (void *)(uintptr_t)KILN_IR_ORDER_ON_STACK));
  kiln_ir_order_frame_t frame = {expr, 0};
  return kiln_array_push(stack, &frame);
}

static kiln_status_t kiln_ir_order_walk(kiln_ir_order_t *order, kiln_hashmap_t *state,
                                        kiln_array_t *stack, kiln_expr_t *root) {
  int next_number = 0;
  KILN_RETURN_IF_ERROR(kiln_ir_order_enter(state, stack, root));
  while (kiln_array_count(stack) > 0) {
    kiln_ir_order_frame_t *top = kiln_array_at(stack, kiln_array_count(stack) - 1);
    kiln_expr_t *child = kiln_ir_order_child(top->expr, top->next_child);
    if (child != NULL) {
      top->next_child++;
      KILN_RETURN_IF_ERROR(kiln_ir_order_enter(state, stack, child));
      continue;
    }
    kiln_expr_t *done = top->expr;
    kiln_array_pop(stack, NULL);
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(state, done, (void *)(uintptr_t)KILN_IR_ORDER_DONE));
    KILN_RETURN_IF_ERROR(kiln_ir_order_emit(order, done, &next_number));
  }
  return NULL;
}

kiln_status_t kiln_ir_order_compute(const kiln_function_t *function, kiln_allocator_t allocator,
                                    kiln_ir_order_t *out_order) {
  kiln_array_initialize(&out_order->nodes, allocator, sizeof(kiln_expr_t *));
  kiln_array_initialize(&out_order->numbers, allocator, sizeof(int));
  if (function == NULL || function->body == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "cannot order a missing function or body");
  }
  kiln_hashmap_t state;
  kiln_hashmap_initialize(&state, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_array_t stack;
  kiln_array_initialize(&stack, allocator, sizeof(kiln_ir_order_frame_t));
  kiln_status_t status = kiln_ir_order_walk(out_order, &state, &stack, function->body);
  kiln_array_deinitialize(&stack);
  kiln_hashmap_deinitialize(&state);
  if (status != NULL)
    kiln_ir_order_deinitialize(out_order);
  return status;
}

void kiln_ir_order_deinitialize(kiln_ir_order_t *order) {
  kiln_array_deinitialize(&order->nodes);
  kiln_array_deinitialize(&order->numbers);
}

size_t kiln_ir_order_count(const kiln_ir_order_t *order) {
  return kiln_array_count(&order->nodes);
}

kiln_expr_t *kiln_ir_order_node(const kiln_ir_order_t *order, size_t index) {
  return KILN_ARRAY_AT(&order->nodes, kiln_expr_t *, index);
}

int kiln_ir_order_number(const kiln_ir_order_t *order, size_t index) {
  return KILN_ARRAY_AT(&order->numbers, int, index);
}

/* The number of `expr` if it is in the order (a linear search: only for
 * error messages). */
static int kiln_ir_order_number_of(const kiln_ir_order_t *order, const kiln_expr_t *expr) {
  for (size_t i = 0; i < kiln_ir_order_count(order); i++) {
    if (kiln_ir_order_node(order, i) == expr)
      return kiln_ir_order_number(order, i);
  }
  return -1;
}

const char *kiln_ir_order_describe(const kiln_ir_order_t *order, size_t index, char *buffer) {
  const kiln_expr_t *expr = kiln_ir_order_node(order, index);
  int number = kiln_ir_order_number(order, index);
  const kiln_call_t *call = kiln_expr_as_call(expr);
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
    snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "%%%s", kiln_expr_as_var(expr)->name);
    break;
  case KILN_EXPR_KIND_CONSTANT:
    snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "a Constant");
    break;
  case KILN_EXPR_KIND_CALL:
    if (call->op != NULL) {
      snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "%%%d = %s", number, call->op->name);
    } else {
      snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "%%%d = call of %%%d", number,
               kiln_ir_order_number_of(order, &call->callee->base));
    }
    break;
  case KILN_EXPR_KIND_FUNCTION:
    snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "%%%d = fn", number);
    break;
  case KILN_EXPR_KIND_TUPLE:
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
  case KILN_EXPR_KIND_COUNT_:
    snprintf(buffer, KILN_IR_ORDER_NAME_CAPACITY, "%%%d = %s", number,
             kiln_expr_kind_name(expr->kind));
    break;
  }
  return buffer;
}
