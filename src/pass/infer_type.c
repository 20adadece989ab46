/*
 * infer_type: fills every node's checked type and every function's return
 * type (ir/infer.h); the pass other passes require when they read types of
 * nodes they did not make.
 */
#include "ir/infer.h"
#include "pass/passes.h"

static kiln_status_t infer_type_run(kiln_module_t *module, kiln_pass_context_t *context) {
  (void)context;
  return kiln_ir_infer_types(module);
}

const kiln_pass_t kiln_pass_infer_type = {
    .info = {.name = "infer_type", .opt_level = 0, .required = NULL},
    .run = infer_type_run,
};
