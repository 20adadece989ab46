/*
 * Kernel keys (key.h). Nodes are numbered by their position in the
 * canonical order, so the key of a function does not depend on the names
 * of its variables or on where its nodes live in memory.
 */
#include <stdint.h>
#include <string.h>

#include "base/hashmap.h"
#include "compiler/key.h"
#include "ir/order.h"
#include "op/op.h"

typedef struct keyer_t {
  const kiln_function_t *function;
  kiln_ir_order_t order;
  kiln_hashmap_t numbers; /* node -> position + 1 */
  kiln_strbuf_t *sb;
} keyer_t;

static kiln_status_t append_type(kiln_strbuf_t *sb, const kiln_type_t *type) {
  if (!type) {
    return kiln_strbuf_append(sb, "?");
  }
  return kiln_type_format(type, sb);
}

static kiln_status_t append_operand(const keyer_t *k, const kiln_expr_t *expr) {
  void *value = NULL;
  if (!kiln_hashmap_get(&k->numbers, expr, &value)) {
    return KILN_STATUS(INTERNAL, "key: an operand outside the function's order");
  }
  return kiln_strbuf_appendf(k->sb, "$%zu", (size_t)(uintptr_t)value - 1);
}

static kiln_status_t append_param(const keyer_t *k, const kiln_var_t *var) {
  for (int p = 0; p < k->function->num_params; ++p) {
    if (k->function->params[p] == var) {
      return kiln_strbuf_appendf(k->sb, "param %d", p);
    }
  }
  return kiln_strbuf_appendf(k->sb, "free %s", var->name);
}

static kiln_status_t append_constant(const keyer_t *k, const kiln_constant_t *constant) {
  const kiln_tensor_t *value = constant->value;
  if (kiln_tensor_element_count(value) == 1) {
    return kiln_strbuf_appendf(k->sb, "const %.17g %s", kiln_tensor_element_as_double(value, 0),
                               kiln_dtype_name(kiln_tensor_dtype(value)));
  }
  return kiln_strbuf_appendf(k->sb, "const@%p", (const void *)value);
}

static kiln_status_t append_call(const keyer_t *k, const kiln_call_t *call) {
  if (!call->op) {
    return kiln_strbuf_append(k->sb, "call fn");
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(k->sb, "%s(", call->op->name));
  if (call->attrs) {
    KILN_RETURN_IF_ERROR(kiln_op_attrs_format(call->op, call->attrs, k->sb));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(k->sb, ")["));
  for (int a = 0; a < call->num_args; ++a) {
    KILN_RETURN_IF_ERROR(append_operand(k, call->args[a]));
  }
  return kiln_strbuf_append(k->sb, "]");
}

static kiln_status_t append_node(const keyer_t *k, const kiln_expr_t *expr) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
    return append_param(k, kiln_expr_as_var(expr));
  case KILN_EXPR_KIND_CONSTANT:
    return append_constant(k, kiln_expr_as_constant(expr));
  case KILN_EXPR_KIND_CALL:
    return append_call(k, kiln_expr_as_call(expr));
  case KILN_EXPR_KIND_TUPLE: {
    const kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(k->sb, "tuple["));
    for (int f = 0; f < tuple->num_fields; ++f) {
      KILN_RETURN_IF_ERROR(append_operand(k, tuple->fields[f]));
    }
    return kiln_strbuf_append(k->sb, "]");
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM: {
    const kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(k->sb, "item %d of ", item->index));
    return append_operand(k, item->tuple);
  }
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return kiln_strbuf_append(k->sb, "function");
}

static kiln_status_t append_key(keyer_t *k) {
  for (int p = 0; p < k->function->num_params; ++p) {
    const kiln_var_t *var = k->function->params[p];
    KILN_RETURN_IF_ERROR(
        append_type(k->sb, var->type_annotation ? var->type_annotation : var->base.checked_type));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(k->sb, ";"));
  }
  for (size_t i = 0; i < kiln_ir_order_count(&k->order); ++i) {
    const kiln_expr_t *expr = kiln_ir_order_node(&k->order, i);
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&k->numbers, expr, (void *)(uintptr_t)(i + 1)));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(k->sb, "|"));
    KILN_RETURN_IF_ERROR(append_node(k, expr));
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(k->sb, ":"));
    KILN_RETURN_IF_ERROR(append_type(k->sb, expr->checked_type));
  }
  return KILN_OK;
}

kiln_status_t kiln_compiler_function_key(const kiln_function_t *function, kiln_strbuf_t *sb) {
  keyer_t k = {.function = function, .sb = sb};
  kiln_hashmap_initialize(&k.numbers, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = kiln_ir_order_compute(function, kiln_allocator_system(), &k.order);
  if (!status) {
    status = append_key(&k);
    kiln_ir_order_deinitialize(&k.order);
  }
  kiln_hashmap_deinitialize(&k.numbers);
  return status;
}
