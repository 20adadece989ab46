/*
 * The default pipeline (pipeline.h): KILN_PASS_LIST expanded into a static
 * array, so adding a pass to the list adds it here in the same place. The
 * opt-in passes (opt_level 4, above what a context allows) are required
 * here when the option of their name is "1": "fast_math" = "1",
 * "combine_parallel_conv2d" = "1". A module with control flow, sequences or
 * optionals is refused before any pass runs: the passes rewrite static
 * dataflow graphs (fusion, layouts, the memory plan) and do not look inside
 * a loop body; such a module runs on the interpreter, or compiles for the
 * VM, whose compiler (compiler/vm_control.c) runs this pipeline on each
 * dataflow stage between control calls (docs/control-flow.md).
 */
#include "pass/pipeline.h"

#include <stdint.h>
#include <string.h>

#include "ir/order.h"
#include "op/control_attrs.h"
#include "pass/passes.h"

static const kiln_pass_t *const kiln_pass_pipeline[] = {
#define KILN_PASS_PIPELINE_ENTRY_(name) &kiln_pass_##name,
    KILN_PASS_LIST(KILN_PASS_PIPELINE_ENTRY_)
#undef KILN_PASS_PIPELINE_ENTRY_
};

void kiln_pass_default_pipeline(const kiln_pass_t *const **out_passes, int *out_count) {
  *out_passes = kiln_pass_pipeline;
  *out_count = (int)(sizeof(kiln_pass_pipeline) / sizeof(kiln_pass_pipeline[0]));
}

/* The first node of `order` the pipeline cannot take, or SIZE_MAX. */
static size_t find_control(const kiln_ir_order_t *order) {
  for (size_t i = 0; i < kiln_ir_order_count(order); ++i) {
    const kiln_expr_t *expr = kiln_ir_order_node(order, i);
    const kiln_call_t *call = kiln_expr_as_call(expr);
    const kiln_var_t *var = kiln_expr_as_var(expr);
    if ((call != NULL && kiln_op_is_control(call->op)) ||
        kiln_type_has_sequence_or_optional(expr->checked_type) ||
        (var != NULL && kiln_type_has_sequence_or_optional(var->type_annotation))) {
      return i;
    }
  }
  return SIZE_MAX;
}

kiln_status_t kiln_pass_check_static(kiln_module_t *module) {
  for (int f = 0; f < kiln_module_function_count(module); ++f) {
    kiln_ir_order_t order;
    KILN_RETURN_IF_ERROR(kiln_ir_order_compute(kiln_module_function_at(module, f),
                                               kiln_module_allocator(module), &order));
    size_t found = find_control(&order);
    char node[KILN_IR_ORDER_NAME_CAPACITY] = "";
    if (found != SIZE_MAX)
      kiln_ir_order_describe(&order, found, node);
    kiln_ir_order_deinitialize(&order);
    if (found != SIZE_MAX) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "control flow, sequences and optionals run on the interpreter and "
                         "compile for the VM only (its compiler runs the passes on the dataflow "
                         "between control calls); the pass pipeline and the graph executor "
                         "refuse them (in @%s, %s)",
                         kiln_module_function_name(module, f), node);
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_pass_run_default_pipeline(kiln_module_t *module, kiln_pass_context_t *context) {
  KILN_RETURN_IF_ERROR(kiln_pass_check_static(module));
  const kiln_pass_t *const *passes = NULL;
  int count = 0;
  kiln_pass_default_pipeline(&passes, &count);
  for (int i = 0; i < count; ++i) {
    const char *name = passes[i]->info.name;
    if (passes[i]->info.opt_level > 3 &&
        strcmp(kiln_pass_context_option(context, name, "0"), "1") == 0) {
      KILN_RETURN_IF_ERROR(kiln_pass_context_require(context, name));
    }
  }
  return kiln_pass_sequential_run(module, context, passes, count);
}
