/*
 * Normalization converters: BatchNormalization, LayerNormalization,
 * InstanceNormalization, MeanVarianceNormalization and LRN.
 *
 * BatchNormalization (inference), InstanceNormalization and LRN are one
 * registry operator each with the attributes moved across. In training
 * mode BatchNormalization normalizes by the batch's mean and biased
 * variance over every axis but 1 and returns the running statistics
 * blended with them by momentum, as ONNX's reference does (LRN's window is
 * ONNX's in nn.lrn, even sizes included). LayerNormalization over several
 * trailing axes flattens them into one for nn.layer_norm and applies a
 * scale and bias that do not have exactly those dims by broadcasting; its
 * optional Mean and InvStdDev outputs are computed with mean and rsqrt.
 * MeanVarianceNormalization is composed as ONNX's function defines it:
 * (x - mean(x)) / sqrt(mean((x - mean(x))^2) + 1e-9) over its axes (default
 * 0, 2, 3), the means kept as dims of 1 so they broadcast.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* mean(x) over `axes`, kept as dims of 1. */
static kiln_status_t kiln_onnx_mean_kept(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                         const kiln_ints_t *axes, kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_mean, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, &kiln_op_mean, attrs, "axis", axes->count, axes->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_mean, attrs, "keepdims", true));
  return kiln_onnx_emit1(node, &kiln_op_mean, x, attrs, out_expr);
}

/* ---- BatchNormalization ---- */

/* (C,) vector `v` as (C, 1, ..., 1) against data of rank `ndim`. */
static kiln_status_t kiln_onnx_per_channel(const kiln_onnx_node_t *node, kiln_expr_t *v, int ndim,
                                           kiln_expr_t **out_expr) {
  int64_t shape[KILN_MAX_RANK];
  shape[0] = kiln_onnx_type_of(v)->ndim == 1 ? kiln_onnx_type_of(v)->shape[0] : 1;
  for (int d = 1; d < ndim - 1; ++d) {
    shape[d] = 1;
  }
  return kiln_onnx_reshape(node, v, ndim - 1, shape, out_expr);
}

/* running * momentum + current * (1 - momentum). */
static kiln_status_t kiln_onnx_momentum(const kiln_onnx_node_t *node, kiln_expr_t *running,
                                        kiln_expr_t *current, double momentum,
                                        kiln_expr_t **out_expr) {
  kiln_dtype_t dtype = kiln_onnx_type_of(running)->dtype;
  kiln_expr_t *keep = NULL, *take = NULL, *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, momentum, &keep));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, 1.0 - momentum, &take));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, running, keep, NULL, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, current, take, NULL, &b));
  return kiln_onnx_emit2(node, &kiln_op_add, a, b, NULL, out_expr);
}

/* training_mode=1: normalize by the batch's own mean and (biased) variance
 * over every axis but 1, and blend them into the running statistics. */
static kiln_status_t kiln_onnx_batch_norm_training(kiln_onnx_node_t *node, kiln_expr_t *const *args,
                                                   double epsilon) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(args[0]);
  double momentum = 0.9;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "momentum", 0.9, &momentum));
  if (xt->ndim < 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "data has rank %d; expected (N, C, ...)", xt->ndim);
  }
  int64_t axis_values[KILN_MAX_RANK];
  kiln_ints_t axes = {0, axis_values};
  for (int d = 0; d < xt->ndim; ++d) {
    if (d != 1) {
      axis_values[axes.count++] = d;
    }
  }
  kiln_expr_t *mean = NULL, *centered = NULL, *variance = NULL, *eps = NULL, *y = NULL;
  kiln_expr_t *scale = NULL, *bias = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_mean_kept(node, args[0], &axes, &mean));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, args[0], mean, NULL, &centered));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_emit2(node, &kiln_op_multiply, centered, centered, NULL, &variance));
  KILN_RETURN_IF_ERROR(kiln_onnx_mean_kept(node, variance, &axes, &variance));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, epsilon, &eps));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, variance, eps, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_rsqrt, y, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, centered, y, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_per_channel(node, args[1], xt->ndim, &scale));
  KILN_RETURN_IF_ERROR(kiln_onnx_per_channel(node, args[2], xt->ndim, &bias));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, y, scale, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, y, bias, NULL, &node->outputs[0]));
  const int64_t channels = xt->shape[1];
  if (node->num_outputs > 1) {
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, mean, 1, &channels, &mean));
    KILN_RETURN_IF_ERROR(kiln_onnx_momentum(node, args[3], mean, momentum, &node->outputs[1]));
  }
  if (node->num_outputs > 2) {
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, variance, 1, &channels, &variance));
    KILN_RETURN_IF_ERROR(kiln_onnx_momentum(node, args[4], variance, momentum, &node->outputs[2]));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_batch_norm(kiln_onnx_node_t *node) {
  kiln_expr_t *args[5];
  for (int i = 0; i < 5; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  int64_t spatial = 1, training = 0;
  double epsilon = 1e-5;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "spatial", 1, &spatial));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "training_mode", 0, &training));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "epsilon", 1e-5, &epsilon));
  if (spatial != 1) {
    return KILN_STATUS(UNIMPLEMENTED, "spatial=%lld is not supported (only 1)", (long long)spatial);
  }
  if (training != 0) {
    return kiln_onnx_batch_norm_training(node, args, epsilon);
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_batch_norm, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_batch_norm, attrs, "axis", 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_batch_norm, attrs, "epsilon", epsilon));
  return kiln_onnx_emit(node, &kiln_op_batch_norm, 5, args, attrs, &node->outputs[0]);
}

/* ---- LayerNormalization ---- */

/* Whether `t` has exactly the dims x[axis:] of `x`. */
static bool kiln_onnx_is_tail(const kiln_tensor_type_t *t, const kiln_tensor_type_t *x, int axis) {
  return t && kiln_shape_equal(t->ndim, t->shape, x->ndim - axis, x->shape + axis);
}

/* LayerNormalization's optional outputs: Mean, and InvStdDev = 1 /
 * sqrt(variance + epsilon), both over dims [axis, rank) with those dims
 * kept as 1. */
static kiln_status_t kiln_onnx_layer_norm_stats(kiln_onnx_node_t *node, kiln_expr_t *x, int axis,
                                                double epsilon) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int64_t axes[KILN_MAX_RANK];
  for (int d = axis; d < xt->ndim; ++d) {
    axes[d - axis] = d;
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_mean, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, &kiln_op_mean, attrs, "axis", xt->ndim - axis, axes));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_mean, attrs, "keepdims", true));
  kiln_expr_t *mean = NULL, *centered = NULL, *variance = NULL, *eps = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_mean, x, attrs, &mean));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, x, mean, NULL, &centered));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_emit2(node, &kiln_op_multiply, centered, centered, NULL, &centered));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_mean, centered, attrs, &variance));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, epsilon, &eps));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, variance, eps, NULL, &variance));
  node->outputs[1] = mean;
  if (node->num_outputs > 2) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_rsqrt, variance, NULL, &node->outputs[2]));
  }
  return KILN_OK;
}

/* The operator's gamma and beta, of shape (inner,): Scale and B themselves
 * when they have exactly the dims x[axis:] (*out_direct), else ones and
 * zeros, the real ones being applied to the result by broadcasting. */
static kiln_status_t kiln_onnx_layer_norm_affine(const kiln_onnx_node_t *node, kiln_expr_t *scale,
                                                 kiln_expr_t *bias, const kiln_tensor_type_t *xt,
                                                 int axis, int64_t inner, bool *out_direct,
                                                 kiln_expr_t **out_gamma, kiln_expr_t **out_beta) {
  bool direct = kiln_onnx_is_tail(kiln_onnx_type_of(scale), xt, axis) &&
                (!bias || kiln_onnx_is_tail(kiln_onnx_type_of(bias), xt, axis));
  *out_direct = direct;
  if (direct) {
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, scale, 1, &inner, out_gamma));
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_filled(node, xt->dtype, 1, &inner, 1.0, out_gamma));
  }
  if (direct && bias) {
    return kiln_onnx_reshape(node, bias, 1, &inner, out_beta);
  }
  return kiln_onnx_filled(node, xt->dtype, 1, &inner, 0.0, out_beta);
}

/* nn.layer_norm over dims [axis, rank) of x: directly when that is the last
 * dim, else over x reshaped to (outer, inner) and back. */
static kiln_status_t kiln_onnx_layer_norm_call(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                               int axis, kiln_expr_t *gamma, kiln_expr_t *beta,
                                               double epsilon, kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  bool flatten = axis != xt->ndim - 1;
  if (flatten) {
    int64_t flat[2] = {1, 1};
    for (int d = 0; d < xt->ndim; ++d) {
      flat[d < axis ? 0 : 1] *= xt->shape[d];
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 2, flat, &x));
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_layer_norm, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_layer_norm, attrs, "epsilon", epsilon));
  kiln_expr_t *args[3] = {x, gamma, beta};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_layer_norm, 3, args, attrs, out_expr));
  if (flatten) {
    return kiln_onnx_reshape(node, *out_expr, xt->ndim, xt->shape, out_expr);
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_layer_norm(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *scale = NULL, *y = NULL, *gamma = NULL, *beta = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &scale));
  kiln_expr_t *bias = kiln_onnx_input_optional(node, 2);
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int64_t axis_attr = -1, inner = 1;
  double epsilon = 1e-5;
  int axis = 0;
  bool direct = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", -1, &axis_attr));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "epsilon", 1e-5, &epsilon));
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(&kiln_op_layer_norm, axis_attr, xt->ndim, &axis));
  for (int d = axis; d < xt->ndim; ++d) {
    inner *= xt->shape[d];
  }
  KILN_RETURN_IF_ERROR(
      kiln_onnx_layer_norm_affine(node, scale, bias, xt, axis, inner, &direct, &gamma, &beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_layer_norm_call(node, x, axis, gamma, beta, epsilon, &y));
  if (!direct) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, y, scale, NULL, &y));
    if (bias) {
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, y, bias, NULL, &y));
    }
  }
  node->outputs[0] = y;
  if (node->num_outputs > 1) {
    return kiln_onnx_layer_norm_stats(node, x, axis, epsilon);
  }
  return KILN_OK;
}

/* ---- InstanceNormalization, MeanVarianceNormalization, LRN ---- */

kiln_status_t kiln_onnx_convert_instance_norm(kiln_onnx_node_t *node) {
  kiln_expr_t *args[3];
  double epsilon = 1e-5;
  void *attrs = NULL;
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "epsilon", 1e-5, &epsilon));
  const kiln_op_t *op = &kiln_op_instance_norm;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "epsilon", epsilon));
  return kiln_onnx_emit(node, op, 3, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_mean_variance_norm(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *mean = NULL, *centered = NULL, *variance = NULL, *eps = NULL;
  kiln_ints_t axes;
  bool present = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "axes", &axes, &present));
  static const int64_t default_axes[3] = {0, 2, 3};
  if (!present) {
    axes = (kiln_ints_t){3, default_axes};
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_mean_kept(node, x, &axes, &mean));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, x, mean, NULL, &centered));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_emit2(node, &kiln_op_multiply, centered, centered, NULL, &variance));
  KILN_RETURN_IF_ERROR(kiln_onnx_mean_kept(node, variance, &axes, &variance));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, 1e-9, &eps));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, variance, eps, NULL, &variance));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_sqrt, variance, NULL, &variance));
  return kiln_onnx_emit2(node, &kiln_op_divide, centered, variance, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_lrn(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t size = 0;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (!kiln_onnx_attr(node, "size")) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute size is required");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "size", 0, &size));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 1e-4, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "beta", 0.75, &beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "bias", 1.0, &bias));
  const kiln_op_t *op = &kiln_op_lrn;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "size", size));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "alpha", alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "beta", beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "bias", bias));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}
