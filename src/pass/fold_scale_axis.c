/*
 * fold_scale_axis: a multiply by a per-output-channel constant right after
 * a conv2d or dense is folded into the weights (the backward half of
 * Relay's FoldScaleAxis):
 *
 *   multiply(nn.conv2d(x, W), s)           -> nn.conv2d(x, W * s')
 *   multiply(add(nn.conv2d(x, W), b), s)   -> add(nn.conv2d(x, W * s'), b * s)
 *   multiply(nn.bias_add(conv, b), s)      -> nn.bias_add(conv', b * s)
 *   multiply(nn.dense(x, W), s)            -> nn.dense(x, W * s')
 *
 * s' is s reshaped to broadcast over the weight's output-channel axis (O of
 * OIHW: (C, 1, 1, 1); U of dense's (U, K): (C, 1)). That is exactly what a
 * batch norm leaves after simplify_inference (multiply by a (C, 1, 1)
 * constant, then add a (C, 1, 1) constant), so a conv + batch norm becomes
 * a conv with scaled weights and an add, the add staying as the bias.
 *
 * Legal when: s is a Constant whose only non-unit axis (aligned to the
 * output's rank) is the output-channel axis, dtype float32; the conv is
 * NCHW / OIHW (any groups: every output channel has its own filter); the
 * scaled value (the conv, and the add or bias_add) has no other reader,
 * judged on the graph as it was before the pass (use counts), since another
 * reader would need the unscaled value; a bias is a per-channel Constant
 * too. When the weight is a Constant the products are evaluated at once, so
 * the pass leaves new weight Constants, not multiplies. The forward
 * direction (a scale on the input side, pushed into the conv's input
 * channels) is not done.
 */
#include <stdio.h>
#include <string.h>

#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

typedef struct scale_state_t {
  kiln_pass_uses_t uses;
} scale_state_t;

/* Whether a constant of `type` varies only along `axis` of a result of rank
 * `rank` with `channels` channels there; its element count goes to *out_count. */
static bool per_channel(const kiln_tensor_type_t *type, int rank, int axis, int64_t channels,
                        int64_t *out_count) {
  if (!type || type->dtype != KILN_DTYPE_FLOAT32 || type->ndim > rank) {
    return false;
  }
  *out_count = 1;
  for (int d = 0; d < type->ndim; ++d) {
    int out_axis = rank - type->ndim + d;
    int64_t extent = type->shape[d];
    if (extent != 1 && !(out_axis == axis && extent == channels)) {
      return false;
    }
    *out_count *= extent;
  }
  return true;
}

static bool is_constant_per_channel(const kiln_expr_t *expr, const kiln_tensor_type_t *out,
                                    int axis, int64_t *out_count) {
  return kiln_expr_as_constant(expr) &&
         per_channel(kiln_pass_tensor_type(expr), out->ndim, axis, out->shape[axis], out_count);
}

static bool single_use(const scale_state_t *state, const kiln_expr_t *original) {
  return kiln_pass_uses_count(&state->uses, original) == 1;
}

/* The scaled producer: a conv2d (NCHW, OIHW) or dense with a float32 result. */
static bool scalable_producer(const kiln_expr_t *expr, int *out_axis) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  const kiln_tensor_type_t *type = kiln_pass_tensor_type(expr);
  if (!call || !type || type->dtype != KILN_DTYPE_FLOAT32) {
    return false;
  }
  if (call->op == &kiln_op_conv2d) {
    const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
    *out_axis = 1;
    return kiln_nn_conv2d_is_nchw(attrs);
  }
  *out_axis = type->ndim - 1;
  return call->op == &kiln_op_dense;
}

/* s reshaped to `rank` dims: [count, 1, ...] (count is C or 1). */
static kiln_status_t reshape_scale(kiln_module_t *module, kiln_expr_t *scale, int64_t count,
                                   int rank, kiln_expr_t **out_expr) {
  char shape[96];
  int used = snprintf(shape, sizeof(shape), "[%lld", (long long)count);
  for (int d = 1; d < rank; ++d) {
    used += snprintf(shape + used, sizeof(shape) - (size_t)used, ", 1");
  }
  snprintf(shape + used, sizeof(shape) - (size_t)used, "]");
  const char *const settings[] = {"newshape", shape, NULL};
  return kiln_pass_make_call_folded(module, &kiln_op_reshape, 1, &scale, settings, out_expr);
}

/* producer(x, W * s') with the producer's own attributes. */
static kiln_status_t scale_producer(kiln_module_t *module, const kiln_call_t *producer,
                                    kiln_expr_t *scale, int64_t count, kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(producer->args[1]);
  kiln_expr_t *scale_w = NULL, *new_weight = NULL;
  KILN_RETURN_IF_ERROR(reshape_scale(module, scale, count, weight->ndim, &scale_w));
  kiln_expr_t *product[] = {producer->args[1], scale_w};
  KILN_RETURN_IF_ERROR(
      kiln_pass_make_call_folded(module, &kiln_op_multiply, 2, product, NULL, &new_weight));
  kiln_expr_t *args[] = {producer->args[0], new_weight};
  return kiln_pass_make_call_attrs(module, producer->op, 2, args, producer->attrs, out_expr);
}

/* multiply(add/bias_add(producer, b), s): the bias scaled too. */
static kiln_status_t scale_through_bias(kiln_pass_rewriter_t *rewriter, kiln_call_t *bias_call,
                                        const kiln_expr_t *original_bias_call, kiln_expr_t *scale,
                                        int64_t count, kiln_expr_t **out_expr) {
  scale_state_t *state = rewriter->state;
  const kiln_call_t *original = kiln_expr_as_call(original_bias_call);
  int axis = 0;
  int64_t bias_count = 0;
  const kiln_tensor_type_t *out = kiln_pass_tensor_type(&bias_call->base);
  if (!original || original->num_args != 2 || !single_use(state, original->args[0]) ||
      !scalable_producer(bias_call->args[0], &axis)) {
    return KILN_OK;
  }
  bool is_bias_add = bias_call->op == &kiln_op_bias_add;
  if (is_bias_add ? ((const kiln_nn_axis_attrs_t *)bias_call->attrs)->axis != axis &&
                        ((const kiln_nn_axis_attrs_t *)bias_call->attrs)->axis != axis - out->ndim
                  : !is_constant_per_channel(bias_call->args[1], out, axis, &bias_count)) {
    return KILN_OK;
  }
  if (!kiln_expr_as_constant(bias_call->args[1]) ||
      !is_constant_per_channel(scale, out, axis, &count)) {
    return KILN_OK;
  }
  kiln_expr_t *producer = NULL, *bias_scale = scale, *new_bias = NULL;
  KILN_RETURN_IF_ERROR(scale_producer(rewriter->module, kiln_expr_as_call(bias_call->args[0]),
                                      scale, count, &producer));
  if (is_bias_add) {
    KILN_RETURN_IF_ERROR(reshape_scale(rewriter->module, scale, count, 1, &bias_scale));
  }
  kiln_expr_t *bias_product[] = {bias_call->args[1], bias_scale};
  KILN_RETURN_IF_ERROR(kiln_pass_make_call_folded(rewriter->module, &kiln_op_multiply, 2,
                                                  bias_product, NULL, &new_bias));
  kiln_expr_t *args[] = {producer, new_bias};
  return kiln_pass_make_call_attrs(rewriter->module, bias_call->op, 2, args, bias_call->attrs,
                                   out_expr);
}

/* multiply(value, s) with the value at argument `index` of `call`. */
static kiln_status_t fold_multiply(kiln_pass_rewriter_t *rewriter, kiln_call_t *call, int index,
                                   kiln_expr_t **out_expr) {
  scale_state_t *state = rewriter->state;
  const kiln_call_t *original = kiln_expr_as_call(rewriter->original);
  kiln_expr_t *value = call->args[index];
  kiln_expr_t *scale = call->args[1 - index];
  const kiln_tensor_type_t *out = kiln_pass_tensor_type(&call->base);
  const kiln_tensor_type_t *value_type = kiln_pass_tensor_type(value);
  if (!original || !single_use(state, original->args[index]) || !value_type ||
      !kiln_type_equal(&out->base, &value_type->base)) {
    return KILN_OK;
  }
  int axis = 0;
  int64_t count = 0;
  kiln_call_t *value_call = kiln_expr_as_call(value);
  if (scalable_producer(value, &axis)) {
    if (!is_constant_per_channel(scale, out, axis, &count)) {
      return KILN_OK;
    }
    return scale_producer(rewriter->module, value_call, scale, count, out_expr);
  }
  if (value_call && (value_call->op == &kiln_op_add || value_call->op == &kiln_op_bias_add)) {
    return scale_through_bias(rewriter, value_call, original->args[index], scale, count, out_expr);
  }
  return KILN_OK;
}

static kiln_status_t scale_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_multiply) {
    return KILN_OK;
  }
  for (int index = 0; index < 2 && *out_expr == &call->base; ++index) {
    KILN_RETURN_IF_ERROR(fold_multiply(rewriter, call, index, out_expr));
  }
  rewriter->rewrites += *out_expr != &call->base;
  return KILN_OK;
}

static kiln_status_t fold_scale_axis_run(kiln_module_t *module, kiln_pass_context_t *context) {
  scale_state_t state;
  KILN_RETURN_IF_ERROR(kiln_pass_uses_compute(module, kiln_module_allocator(module), &state.uses));
  kiln_status_t status = kiln_pass_rewrite_module(module, context, scale_call, &state, NULL);
  kiln_pass_uses_deinitialize(&state.uses);
  return status;
}

static const char *const fold_scale_axis_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_fold_scale_axis = {
    .info = {.name = "fold_scale_axis", .opt_level = 3, .required = fold_scale_axis_required},
    .run = fold_scale_axis_run,
};
