/*
 * Loss converters: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
 * composed from registry operators.
 *
 * NLL over input (N, C, d1, ...) and target (N, d1, ...): each position
 * picks input[n, target, d...] with gather (GatherElements) along axis 1 of
 * the target as (N, 1, d1, ...), then squeeze; the loss is its negation
 * times the class weight (take of the weight vector by the target). With
 * ignore_index the target is first replaced by 0 where it equals the index
 * (so the gather stays in range, whatever the index is) and the weight of
 * those positions is 0. Reduction none returns the per-position losses, sum
 * their sum, mean their sum divided by the sum of the weights of the
 * positions that count (with neither weights nor ignore_index, the plain
 * mean), which is ONNX's definition. SoftmaxCrossEntropyLoss is NLL of
 * log_softmax(scores) over axis 1, whose value is the optional second
 * output.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

typedef struct kiln_onnx_nll_t {
  const char *reduction; /* none | sum | mean */
  bool ignore;
  int64_t ignore_index;
} kiln_onnx_nll_t;

static kiln_status_t kiln_onnx_nll_read(const kiln_onnx_node_t *node, kiln_onnx_nll_t *out_nll) {
  out_nll->ignore = kiln_onnx_attr(node, "ignore_index") != NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "ignore_index", 0, &out_nll->ignore_index));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "reduction", "mean", &out_nll->reduction));
  const char *r = out_nll->reduction;
  if (strcmp(r, "none") != 0 && strcmp(r, "sum") != 0 && strcmp(r, "mean") != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "attribute reduction is \"%s\"; expected none, sum or mean", r);
  }
  return KILN_OK;
}

/* sum over every axis. */
static kiln_status_t kiln_onnx_sum_all(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                       kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_sum, &attrs));
  return kiln_onnx_emit1(node, &kiln_op_sum, x, attrs, out_expr);
}

/* input[n, target[n, d...], d...] as (N, d1, ...). */
static kiln_status_t kiln_onnx_nll_pick(const kiln_onnx_node_t *node, kiln_expr_t *input,
                                        kiln_expr_t *target, kiln_expr_t **out_expr) {
  kiln_expr_t *index = NULL, *picked = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_expand_dims(node, target, 1, &index));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_gather, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_gather, attrs, "axis", 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_gather, input, index, attrs, &picked));
  const int64_t axis = 1;
  return kiln_onnx_squeeze(node, picked, 1, &axis, out_expr);
}

/* The weight of each position (N, d1, ...), or NULL when every position
 * weighs 1: weight[target], 0 where the target is ignored. */
static kiln_status_t kiln_onnx_nll_weights(const kiln_onnx_node_t *node, kiln_expr_t *weight,
                                           kiln_expr_t *target, kiln_expr_t *ignored,
                                           kiln_dtype_t dtype, kiln_expr_t **out_expr) {
  kiln_expr_t *w = NULL, *zero = NULL, *one = NULL;
  *out_expr = NULL;
  if (!weight && !ignored) {
    return KILN_OK;
  }
  if (weight) {
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_take, weight, target, attrs, &w));
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, 1.0, &one));
    w = one;
  }
  if (ignored) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, 0.0, &zero));
    kiln_expr_t *args[3] = {ignored, zero, w};
    KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &w));
  }
  *out_expr = w;
  return KILN_OK;
}

/* The NLL loss of log-probabilities `input` into node->outputs[0]. */
static kiln_status_t kiln_onnx_nll(kiln_onnx_node_t *node, kiln_expr_t *input, kiln_expr_t *target,
                                   kiln_expr_t *weight) {
  kiln_onnx_nll_t nll;
  KILN_RETURN_IF_ERROR(kiln_onnx_nll_read(node, &nll));
  const kiln_tensor_type_t *it = kiln_onnx_type_of(input), *tt = kiln_onnx_type_of(target);
  if (it->ndim < 2 || tt->ndim != it->ndim - 1) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "input has rank %d and target rank %d; expected (N, C, d1, ...) and (N, "
                       "d1, ...)",
                       it->ndim, tt->ndim);
  }
  kiln_expr_t *ignored = NULL, *loss = NULL, *w = NULL;
  if (nll.ignore) {
    kiln_expr_t *index = NULL, *zero = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, tt->dtype, (double)nll.ignore_index, &index));
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, tt->dtype, 0.0, &zero));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_equal, target, index, NULL, &ignored));
    kiln_expr_t *args[3] = {ignored, zero, target};
    KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &target));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_nll_pick(node, input, target, &loss));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_negative, loss, NULL, &loss));
  KILN_RETURN_IF_ERROR(kiln_onnx_nll_weights(node, weight, target, ignored, it->dtype, &w));
  if (w) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, loss, w, NULL, &loss));
  }
  if (strcmp(nll.reduction, "none") == 0) {
    node->outputs[0] = loss;
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_sum_all(node, loss, &loss));
  if (strcmp(nll.reduction, "sum") == 0) {
    node->outputs[0] = loss;
    return KILN_OK;
  }
  kiln_expr_t *total = NULL;
  if (w) {
    const kiln_tensor_type_t *wt = kiln_onnx_type_of(w);
    if (wt->ndim != tt->ndim) { /* a scalar weight of 1: broadcast it to the positions */
      KILN_RETURN_IF_ERROR(kiln_onnx_filled(node, it->dtype, tt->ndim, tt->shape, 1.0, &total));
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, total, w, NULL, &w));
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_sum_all(node, w, &total));
  } else {
    int64_t count = 1;
    KILN_RETURN_IF_ERROR(kiln_shape_element_count(tt->ndim, tt->shape, &count));
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, it->dtype, (double)count, &total));
  }
  return kiln_onnx_emit2(node, &kiln_op_divide, loss, total, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_nll_loss(kiln_onnx_node_t *node) {
  kiln_expr_t *input = NULL, *target = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &input));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &target));
  return kiln_onnx_nll(node, input, target, kiln_onnx_input_optional(node, 2));
}

kiln_status_t kiln_onnx_convert_softmax_cross_entropy(kiln_onnx_node_t *node) {
  kiln_expr_t *scores = NULL, *labels = NULL, *log_prob = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &scores));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &labels));
  if (kiln_onnx_type_of(scores)->ndim < 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "scores has rank %d; expected (N, C, d1, ...)",
                       kiln_onnx_type_of(scores)->ndim);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_log_softmax, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_log_softmax, attrs, "axis", 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_log_softmax, scores, attrs, &log_prob));
  if (node->num_outputs > 1) {
    node->outputs[1] = log_prob;
  }
  return kiln_onnx_nll(node, log_prob, labels, kiln_onnx_input_optional(node, 2));
}
