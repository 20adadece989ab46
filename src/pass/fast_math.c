/*
 * fast_math: exp, erf and tanh become fast_exp, fast_erf and fast_tanh, the
 * polynomial and rational approximations of op/elemwise_fast.c (Relay's
 * FastMath). Opt-in, as in TVM (opt_level 4): Sequential's opt_level stops
 * at 3, so the pass runs only when required by name, or, in the default
 * pipeline, when the option "fast_math" is "1" (pipeline.c then requires
 * it). Only float32 calls are replaced: the fast operators take float32
 * only. The approximations are within about 3e-7 of libm (absolute for
 * tanh and erf, relative for exp), so a network's numbers move by float
 * rounding, not more.
 */
#include "pass/passes.h"
#include "pass/rewrite.h"

static const kiln_op_t *fast_version(const kiln_op_t *op) {
  if (op == &kiln_op_exp) {
    return &kiln_op_fast_exp;
  }
  if (op == &kiln_op_erf) {
    return &kiln_op_fast_erf;
  }
  return op == &kiln_op_tanh ? &kiln_op_fast_tanh : NULL;
}

static kiln_status_t fast_math_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                    kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  const kiln_op_t *fast = call->op ? fast_version(call->op) : NULL;
  const kiln_tensor_type_t *type = kiln_pass_tensor_type(&call->base);
  if (!fast || !type || type->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_OK;
  }
  rewriter->rewrites++;
  return kiln_pass_make_call_attrs(rewriter->module, fast, 1, call->args, NULL, out_expr);
}

static kiln_status_t fast_math_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, fast_math_call, NULL, NULL);
}

static const char *const fast_math_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_fast_math = {
    .info = {.name = "fast_math", .opt_level = 4, .required = fast_math_required},
    .run = fast_math_run,
};
