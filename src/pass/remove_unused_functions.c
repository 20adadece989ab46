/*
 * remove_unused_functions: drops the module functions that the entry
 * function ("main", or option "remove_unused_functions.entry") cannot reach
 * (Relay's RemoveUnusedFunctions).
 *
 * A function is reached when it is the entry or the callee of a call in a
 * reached function; the canonical order of a function (ir/order.h) lists the
 * Function nodes of its callees, primitive ones included, so one order per
 * reached function finds every edge, and a worklist follows them to any
 * depth. Module functions are matched by node identity. The dropped
 * functions' nodes stay in the module's arena (nodes are never freed one by
 * one); they are just no longer part of the module.
 */
#include "base/hashmap.h"
#include "ir/order.h"
#include "pass/passes.h"

static kiln_status_t mark_callees(const kiln_function_t *function, kiln_allocator_t allocator,
                                  kiln_hashmap_t *reached, kiln_array_t *worklist) {
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, allocator, &order));
  kiln_status_t status = KILN_OK;
  for (size_t i = 0; i < kiln_ir_order_count(&order) && !status; ++i) {
    kiln_function_t *callee = kiln_expr_as_function(kiln_ir_order_node(&order, i));
    if (callee && !kiln_hashmap_contains(reached, callee)) {
      status = kiln_hashmap_put(reached, callee, NULL);
      status = status ? status : kiln_array_push(worklist, &callee);
    }
  }
  kiln_ir_order_deinitialize(&order);
  return status;
}

static kiln_status_t find_reached(kiln_function_t *entry, kiln_allocator_t allocator,
                                  kiln_hashmap_t *reached) {
  kiln_array_t worklist;
  kiln_array_initialize(&worklist, allocator, sizeof(kiln_function_t *));
  kiln_status_t status = kiln_hashmap_put(reached, entry, NULL);
  status = status ? status : kiln_array_push(&worklist, &entry);
  kiln_function_t *function = NULL;
  while (!status && kiln_array_pop(&worklist, &function)) {
    status = mark_callees(function, allocator, reached, &worklist);
  }
  kiln_array_deinitialize(&worklist);
  return status;
}

static kiln_status_t remove_unreached(kiln_module_t *module, const kiln_hashmap_t *reached) {
  for (int i = kiln_module_function_count(module) - 1; i >= 0; --i) {
    if (!kiln_hashmap_contains(reached, kiln_module_function_at(module, i))) {
      KILN_RETURN_IF_ERROR(
          kiln_module_remove_function(module, kiln_module_function_name(module, i)));
    }
  }
  return KILN_OK;
}

static kiln_status_t remove_unused_functions_run(kiln_module_t *module,
                                                 kiln_pass_context_t *context) {
  const char *entry_name =
      kiln_pass_context_option(context, "remove_unused_functions.entry", "main");
  kiln_function_t *entry = kiln_module_get_function(module, entry_name);
  if (!entry) {
    return KILN_STATUS(NOT_FOUND, "the module has no entry function @%s", entry_name);
  }
  kiln_allocator_t allocator = kiln_module_allocator(module);
  kiln_hashmap_t reached;
  kiln_hashmap_initialize(&reached, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = find_reached(entry, allocator, &reached);
  status = status ? status : remove_unreached(module, &reached);
  kiln_hashmap_deinitialize(&reached);
  return status;
}

const kiln_pass_t kiln_pass_remove_unused_functions = {
    .info = {.name = "remove_unused_functions", .opt_level = 1, .required = NULL},
    .run = remove_unused_functions_run,
};
