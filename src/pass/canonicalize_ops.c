/*
 * canonicalize_ops: rewrites operators into the simpler ones later passes
 * know (Relay's CanonicalizeOps).
 *
 * nn.bias_add(x, b, axis) becomes add(x, b') with b' = expand_dims(b) of
 * shape (C, 1, ..., 1) so that it broadcasts along `axis` (b itself when the
 * axis is the last one): fuse_ops then sees a BROADCAST add after a conv,
 * the same pattern as the add simplify_inference leaves for a batch norm,
 * and fold_scale_axis sees an add it can scale through. A constant bias is
 * expanded at once (the expand_dims is evaluated). That is the whole list,
 * as in Relay: the other composite operators kiln has (nn.batch_norm, the
 * normalizations, nn.gelu) are either simplify_inference's or kept whole
 * because their compute rules are better than the pieces would be.
 */
#include <stdio.h>

#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

static kiln_status_t canonicalize_bias_add(kiln_module_t *module, kiln_call_t *call,
                                           kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *data = kiln_pass_tensor_type(call->args[0]);
  const kiln_nn_axis_attrs_t *attrs = call->attrs;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(call->op, attrs->axis, data->ndim, &axis));
  kiln_expr_t *bias = call->args[1];
  kiln_expr_t *expanded = bias;
  int trailing = data->ndim - axis - 1;
  if (trailing > 0) {
    char count[24];
    snprintf(count, sizeof(count), "%d", trailing);
    const char *const settings[] = {"axis", "1", "num_newaxis", count, NULL};
    KILN_RETURN_IF_ERROR(
        kiln_pass_make_call_folded(module, &kiln_op_expand_dims, 1, &bias, settings, &expanded));
  }
  kiln_expr_t *args[] = {call->args[0], expanded};
  return kiln_pass_make_call(module, &kiln_op_add, 2, args, NULL, out_expr);
}

static kiln_status_t canonicalize_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                       kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_bias_add || !kiln_pass_tensor_type(call->args[0])) {
    return KILN_OK;
  }
  rewriter->rewrites++;
  return canonicalize_bias_add(rewriter->module, call, out_expr);
}

static kiln_status_t canonicalize_ops_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, canonicalize_call, NULL, NULL);
}

static const char *const canonicalize_ops_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_canonicalize_ops = {
    .info = {.name = "canonicalize_ops", .opt_level = 3, .required = canonicalize_ops_required},
    .run = canonicalize_ops_run,
};
