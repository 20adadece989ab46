/*
 * simplify_inference: inference-time rewrites of training-shaped operators
 * (Relay's SimplifyInference).
 *
 * nn.batch_norm(x, gamma, beta, mean, var) becomes x * scale + shift with
 *   scale = gamma / sqrt(var + epsilon)   (1 / sqrt(...) when scale=False)
 *   shift = beta - mean * scale           (-mean * scale when center=False)
 * both reshaped to (C, 1, ..., 1) with expand_dims so they broadcast along
 * the batch norm's axis. The arithmetic is built as graph nodes; each node
 * whose arguments are all Constants is evaluated on the spot, so with
 * constant statistics (weights bound as params) scale and shift arrive as
 * two per-channel Constants and the network keeps one multiply and one add
 * per batch norm, which fold_scale_axis can then push into the conv before
 * it. Only float32 batch norms are rewritten (the operator's kernel is
 * float-only). nn.layer_norm and nn.instance_norm normalize by statistics
 * of the data itself and are left alone. kiln has no dropout operator (the
 * ONNX importer drops Dropout at import, as an identity), so "dropout ->
 * identity" has nothing to match here.
 */
#include <stdio.h>

#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

/* `vector` (C,) expanded to (C, 1, ..., 1) with `trailing` ones. */
static kiln_status_t broadcast_along(kiln_module_t *module, kiln_expr_t *vector, int trailing,
                                     kiln_expr_t **out_expr) {
  if (trailing == 0) {
    *out_expr = vector;
    return KILN_OK;
  }
  char count[24];
  snprintf(count, sizeof(count), "%d", trailing);
  const char *const settings[] = {"axis", "1", "num_newaxis", count, NULL};
  return kiln_pass_make_call_folded(module, &kiln_op_expand_dims, 1, &vector, settings, out_expr);
}

static kiln_status_t binary(kiln_module_t *module, const kiln_op_t *op, kiln_expr_t *a,
                            kiln_expr_t *b, kiln_expr_t **out_expr) {
  kiln_expr_t *args[] = {a, b};
  return kiln_pass_make_call_folded(module, op, 2, args, NULL, out_expr);
}

/* scale = gamma * rsqrt(var + epsilon), or rsqrt(var + epsilon) alone. */
static kiln_status_t batch_norm_scale(kiln_module_t *module, const kiln_call_t *call,
                                      const kiln_nn_norm_attrs_t *attrs, kiln_expr_t **out_expr) {
  kiln_expr_t *epsilon = NULL, *shifted = NULL, *inverse = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_make_scalar_f32(module, (float)attrs->epsilon, &epsilon));
  KILN_RETURN_IF_ERROR(binary(module, &kiln_op_add, call->args[4], epsilon, &shifted));
  KILN_RETURN_IF_ERROR(
      kiln_pass_make_call_folded(module, &kiln_op_rsqrt, 1, &shifted, NULL, &inverse));
  if (!attrs->scale) {
    *out_expr = inverse;
    return KILN_OK;
  }
  return binary(module, &kiln_op_multiply, call->args[1], inverse, out_expr);
}

/* shift = beta - mean * scale, or -(mean * scale). */
static kiln_status_t batch_norm_shift(kiln_module_t *module, const kiln_call_t *call,
                                      const kiln_nn_norm_attrs_t *attrs, kiln_expr_t *scale,
                                      kiln_expr_t **out_expr) {
  kiln_expr_t *scaled_mean = NULL;
  KILN_RETURN_IF_ERROR(binary(module, &kiln_op_multiply, call->args[3], scale, &scaled_mean));
  if (!attrs->center) {
    return kiln_pass_make_call_folded(module, &kiln_op_negative, 1, &scaled_mean, NULL, out_expr);
  }
  return binary(module, &kiln_op_subtract, call->args[2], scaled_mean, out_expr);
}

static kiln_status_t simplify_batch_norm(kiln_module_t *module, kiln_call_t *call,
                                         kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *data = kiln_pass_tensor_type(call->args[0]);
  if (!data || data->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_OK;
  }
  const kiln_nn_norm_attrs_t *attrs = call->attrs;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(call->op, attrs->axis, data->ndim, &axis));
  kiln_expr_t *scale = NULL, *shift = NULL, *scale_b = NULL, *shift_b = NULL, *product = NULL;
  KILN_RETURN_IF_ERROR(batch_norm_scale(module, call, attrs, &scale));
  KILN_RETURN_IF_ERROR(batch_norm_shift(module, call, attrs, scale, &shift));
  int trailing = data->ndim - axis - 1;
  KILN_RETURN_IF_ERROR(broadcast_along(module, scale, trailing, &scale_b));
  KILN_RETURN_IF_ERROR(broadcast_along(module, shift, trailing, &shift_b));
  KILN_RETURN_IF_ERROR(binary(module, &kiln_op_multiply, call->args[0], scale_b, &product));
  return binary(module, &kiln_op_add, product, shift_b, out_expr);
}

static kiln_status_t simplify_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                   kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_batch_norm) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(simplify_batch_norm(rewriter->module, call, out_expr));
  rewriter->rewrites += *out_expr != &call->base;
  return KILN_OK;
}

static kiln_status_t simplify_inference_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, simplify_call, NULL, NULL);
}

static const char *const simplify_inference_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_simplify_inference = {
    .info = {.name = "simplify_inference", .opt_level = 0, .required = simplify_inference_required},
    .run = simplify_inference_run,
};
