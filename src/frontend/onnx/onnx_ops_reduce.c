/*
 * Reduction converters: the Reduce* family, ArgMax, ArgMin and Hardmax.
 *
 * Each Reduce* operator is a row of one table: an optional elementwise step
 * before (abs, or squaring as x * x), the registry reduction (sum, mean,
 * max, min, prod), and an optional step after (sqrt, log). So ReduceL2 is
 * sqrt(sum(x * x)). ReduceLogSumExp is computed stably: m = max(x) over the
 * axes (kept), log(sum(exp(x - m))) + m, so large inputs do not overflow.
 * Axes come from the attribute (every opset kiln imports, except ReduceSum
 * from 13) or from a constant input; no axes reduce every dim, unless
 * noop_with_empty_axes asks for the input unchanged. ArgMax and ArgMin are
 * the registry's (select_last_index included). Hardmax is one_hot of the
 * argmax along its axis, in the input's dtype; before opset 13 the input is
 * seen as 2-D, split at the axis, as that opset defines it.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

typedef struct kiln_onnx_reduce_t {
  const char *op_type;
  const kiln_op_t *before; /* NULL: none; &kiln_op_multiply: x * x */
  const kiln_op_t *reduce;
  const kiln_op_t *after;
} kiln_onnx_reduce_t;

static const kiln_onnx_reduce_t kiln_onnx_reductions[] = {
    {"ReduceSum", NULL, &kiln_op_sum, NULL},
    {"ReduceMean", NULL, &kiln_op_mean, NULL},
    {"ReduceMax", NULL, &kiln_op_max, NULL},
    {"ReduceMin", NULL, &kiln_op_min, NULL},
    {"ReduceSumSquare", &kiln_op_multiply, &kiln_op_sum, NULL},
    {"ReduceL1", &kiln_op_abs, &kiln_op_sum, NULL},
    {"ReduceL2", &kiln_op_multiply, &kiln_op_sum, &kiln_op_sqrt},
    {"ReduceLogSum", NULL, &kiln_op_sum, &kiln_op_log},
    {"ReduceLogSumExp", &kiln_op_exp, &kiln_op_sum, &kiln_op_log},
    {"ReduceProd", NULL, &kiln_op_prod, NULL},
};

/* `op` (a registry reduction) of x over `axes`. */
static kiln_status_t kiln_onnx_reduce_call(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                           kiln_expr_t *x, const kiln_ints_t *axes, bool keepdims,
                                           kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axis", axes->count, axes->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "keepdims", keepdims));
  return kiln_onnx_emit1(node, op, x, attrs, out_expr);
}

/* log(sum(exp(x - m))) + m with m = max(x) over the axes. */
static kiln_status_t kiln_onnx_log_sum_exp(kiln_onnx_node_t *node, kiln_expr_t *x,
                                           const kiln_ints_t *axes, bool keepdims) {
  kiln_expr_t *m = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_reduce_call(node, &kiln_op_max, x, axes, true, &m));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, x, m, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_exp, y, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_reduce_call(node, &kiln_op_sum, y, axes, keepdims, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_log, y, NULL, &y));
  if (!keepdims) {
    const kiln_tensor_type_t *yt = kiln_onnx_type_of(y);
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, m, yt->ndim, yt->shape, &m));
  }
  return kiln_onnx_emit2(node, &kiln_op_add, y, m, NULL, &node->outputs[0]);
}

static kiln_status_t kiln_onnx_reduce(kiln_onnx_node_t *node, const kiln_ints_t *axes) {
  const kiln_onnx_reduce_t *row = NULL;
  for (size_t i = 0; i < sizeof(kiln_onnx_reductions) / sizeof(kiln_onnx_reductions[0]); ++i) {
    if (strcmp(kiln_onnx_reductions[i].op_type, node->proto->op_type) == 0) {
      row = &kiln_onnx_reductions[i];
    }
  }
  if (!row) {
    return KILN_STATUS(INTERNAL, "no reduction for %s", node->proto->op_type);
  }
  kiln_expr_t *x = NULL;
  int64_t keepdims = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "keepdims", 1, &keepdims));
  if (strcmp(row->op_type, "ReduceLogSumExp") == 0) {
    return kiln_onnx_log_sum_exp(node, x, axes, keepdims != 0);
  }
  if (row->before == &kiln_op_multiply) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, x, x, NULL, &x));
  } else if (row->before) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, row->before, x, NULL, &x));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_reduce_call(node, row->reduce, x, axes, keepdims != 0, &x));
  if (row->after) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, row->after, x, NULL, &x));
  }
  node->outputs[0] = x;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_reduce_attrs(kiln_onnx_node_t *node) {
  kiln_ints_t axes;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "axes", &axes, NULL));
  return kiln_onnx_reduce(node, &axes);
}

/* ReduceSum over axes known only at run time: dyn.sum (an empty axes list
 * with noop_with_empty_axes: the identity). */
static kiln_status_t kiln_onnx_reduce_dyn(kiln_onnx_node_t *node, bool noop) {
  int64_t keepdims = 1;
  void *attrs = NULL;
  const kiln_tensor_type_t *axes = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &axes));
  bool empty = kiln_tensor_type_is_static(axes) && axes->ndim == 1 && axes->shape[0] == 0;
  if (noop && empty) {
    return kiln_onnx_input(node, 0, &node->outputs[0]);
  }
  if (noop) {
    return KILN_STATUS(UNIMPLEMENTED, "noop_with_empty_axes=1 with axes of a length known only "
                                      "at run time is not supported");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "keepdims", 1, &keepdims));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_dyn_sum, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_dyn_sum, attrs, "keepdims", keepdims != 0));
  return kiln_onnx_emit_dyn(node, &kiln_op_dyn_sum, 2, attrs);
}

kiln_status_t kiln_onnx_convert_reduce_inputs(kiln_onnx_node_t *node) {
  kiln_ints_t axes = {0, NULL};
  int64_t noop = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "noop_with_empty_axes", 0, &noop));
  bool known = true;
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  }
  if (!known && strcmp(node->proto->op_type, "ReduceSum") == 0) {
    return kiln_onnx_reduce_dyn(node, noop != 0);
  }
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "axes", &axes));
  }
  if (axes.count == 0 && noop) {
    return kiln_onnx_input(node, 0, &node->outputs[0]);
  }
  return kiln_onnx_reduce(node, &axes);
}

kiln_status_t kiln_onnx_convert_arg(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t axis = 0, keepdims = 1, last = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "keepdims", 1, &keepdims));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "select_last_index", 0, &last));
  const kiln_op_t *op =
      strcmp(node->proto->op_type, "ArgMin") == 0 ? &kiln_op_argmin : &kiln_op_argmax;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "keepdims", keepdims != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "select_last_index", last != 0));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* ---- Hardmax ---- */

/* one_hot(argmax(x, axis), depth = dim axis, at axis) in x's dtype: 1 at
 * the first maximum of each line along `axis`, 0 elsewhere. */
static kiln_status_t kiln_onnx_hardmax_along(const kiln_onnx_node_t *node, kiln_expr_t *x, int axis,
                                             kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  kiln_expr_t *index = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_argmax, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_argmax, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_argmax, attrs, "keepdims", false));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_argmax, x, attrs, &index));
  const kiln_op_t *op = &kiln_op_one_hot;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "depth", xt->shape[axis]));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(op, attrs, "dtype", xt->dtype));
  return kiln_onnx_emit1(node, op, index, attrs, out_expr);
}

kiln_status_t kiln_onnx_convert_hardmax(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *y = NULL;
  bool flat = node->importer->opset < 13;
  int64_t axis_attr = flat ? 1 : -1;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", axis_attr, &axis_attr));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->ndim == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "the input is a scalar; Hardmax needs rank >= 1");
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(axis_attr, xt->ndim, &axis));
  for (int d = 0; d < xt->ndim; ++d) {
    if (xt->shape[d] == 0) { /* nothing to pick: the (empty) input's shape */
      return kiln_onnx_filled(node, xt->dtype, xt->ndim, xt->shape, 0.0, &node->outputs[0]);
    }
  }
  if (!flat || axis == xt->ndim - 1) {
    return kiln_onnx_hardmax_along(node, x, axis, &node->outputs[0]);
  }
  int64_t shape[2] = {1, 1};
  for (int d = 0; d < xt->ndim; ++d) {
    shape[d < axis ? 0 : 1] *= xt->shape[d];
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 2, shape, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_hardmax_along(node, y, 1, &y));
  return kiln_onnx_reshape(node, y, xt->ndim, xt->shape, &node->outputs[0]);
}
