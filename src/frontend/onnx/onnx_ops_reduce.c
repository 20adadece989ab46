/*
 * Reduction converters: the Reduce* family, ArgMax and ArgMin.
 *
 * Each Reduce* operator is a row of one table: an optional elementwise step
 * before (abs, exp, or squaring as x * x), the registry reduction (sum,
 * mean, max, min), and an optional step after (sqrt, log). So ReduceL2 is
 * sqrt(sum(x * x)) and ReduceLogSumExp log(sum(exp(x))). Axes come from the
 * attribute (every opset kiln imports, except ReduceSum from 13) or from a
 * constant input; no axes reduce every dim, unless noop_with_empty_axes
 * asks for the input unchanged. ArgMin is ArgMax of the negated input
 * (first or last index, as select_last_index says, is kept by negation).
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
};

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
  if (row->before == &kiln_op_multiply) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, x, x, NULL, &x));
  } else if (row->before) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, row->before, x, NULL, &x));
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, row->reduce, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, row->reduce, attrs, "axis", axes->count, axes->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(row->reduce, attrs, "keepdims", keepdims != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, row->reduce, x, attrs, &x));
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

kiln_status_t kiln_onnx_convert_reduce_inputs(kiln_onnx_node_t *node) {
  kiln_ints_t axes = {0, NULL};
  int64_t noop = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "noop_with_empty_axes", 0, &noop));
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "axes", &axes));
  }
  if (axes.count == 0 && noop) {
    return kiln_onnx_input(node, 0, &node->outputs[0]);
  }
  return kiln_onnx_reduce(node, &axes);
}

static kiln_status_t kiln_onnx_argmax_of(kiln_onnx_node_t *node, kiln_expr_t *x) {
  int64_t axis = 0, keepdims = 1, last = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "keepdims", 1, &keepdims));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "select_last_index", 0, &last));
  const kiln_op_t *op = &kiln_op_argmax;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "keepdims", keepdims != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "select_last_index", last != 0));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_argmax(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  return kiln_onnx_argmax_of(node, x);
}

kiln_status_t kiln_onnx_convert_argmin(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_negative, x, NULL, &x));
  return kiln_onnx_argmax_of(node, x);
}
