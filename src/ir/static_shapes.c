/*
 * The check that a module has static shapes only, for the consumers that
 * need every dim as a number (the graph compiler, whose memory planner,
 * lowering and graph executor size every tensor at build time).
 *
 * It walks each function's parameters and then its nodes in the canonical
 * order (ir/order.h), so the node an error names is the one `kiln show`
 * prints with that %N, and reports the first symbolic dim it meets with its
 * variable's name and the type holding it. Types must have been inferred.
 */
#include "ir/static_shapes.h"

#include <stdio.h>

#include "ir/order.h"

static kiln_status_t symbolic_error(const char *who, const char *function, const char *node,
                                    const kiln_type_t *type) {
  int dim = 0;
  const kiln_dim_var_t *var = kiln_type_first_symbolic(type, &dim);
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  return KILN_STATUS(UNIMPLEMENTED,
                     "%s: in @%s, %s has the type %s with the symbolic dim %s (dim %d); %s needs "
                     "static shapes (fix the dim with --input-shape, or run the module on the "
                     "interpreter)",
                     who, function, node, kiln_type_text(type, text), kiln_dim_var_text(var), dim,
                     who);
}

static kiln_status_t check_nodes(const char *who, const char *name, const kiln_function_t *function,
                                 kiln_allocator_t allocator) {
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, allocator, &order));
  kiln_status_t status = KILN_OK;
  for (size_t i = 0; i < kiln_ir_order_count(&order) && !status; ++i) {
    const kiln_type_t *type = kiln_ir_order_node(&order, i)->checked_type;
    if (!kiln_type_is_static(type)) {
      char node[KILN_IR_ORDER_NAME_CAPACITY];
      status = symbolic_error(who, name, kiln_ir_order_describe(&order, i, node), type);
    }
  }
  kiln_ir_order_deinitialize(&order);
  return status;
}

static kiln_status_t check_function(const char *who, const char *name,
                                    const kiln_function_t *function, kiln_allocator_t allocator) {
  for (int p = 0; p < function->num_params; ++p) {
    const kiln_var_t *param = function->params[p];
    if (!kiln_type_is_static(param->base.checked_type)) {
      char node[KILN_IR_ORDER_NAME_CAPACITY];
      snprintf(node, sizeof(node), "parameter %%%s", param->name);
      return symbolic_error(who, name, node, param->base.checked_type);
    }
  }
  return check_nodes(who, name, function, allocator);
}

kiln_status_t kiln_ir_module_require_static(const kiln_module_t *module, const char *who) {
  for (int f = 0; f < kiln_module_function_count(module); ++f) {
    KILN_RETURN_IF_ERROR(check_function(who, kiln_module_function_name(module, f),
                                        kiln_module_function_at(module, f),
                                        kiln_module_allocator(module)));
  }
  return KILN_OK;
}
