/*
 * Elementwise converters: unary and binary operators, comparisons, where,
 * the logical operators, and activations that are one registry operator or
 * a short composition of them.
 *
 * Unary and binary operators that are one registry operator each are a
 * lookup table by op_type. Variadic Sum, Max, Min and Mean fold left into a
 * chain of binary calls (Mean divides by the count at the end). What the
 * registry lacks is composed from what it has, with NumPy broadcasting doing
 * the work of ONNX's: Not is equal(x, false), And where(a, b, false), Or
 * where(a, true, b), Xor not_equal; Elu, Selu, Celu and ThresholdedRelu are a
 * where over a comparison with zero; Softplus is log(exp(x) + 1); Softsign
 * x / (1 + |x|); Sign nested wheres. PRelu is nn.prelu when the slope is one
 * value per channel of axis 1, else where(x < 0, x * slope, x). Clip is
 * clip when its bounds are constants in order, else maximum then minimum.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

typedef struct kiln_onnx_op_map_t {
  const char *op_type;
  const kiln_op_t *op;
} kiln_onnx_op_map_t;

static const kiln_op_t *kiln_onnx_map_find(const kiln_onnx_op_map_t *map, const char *op_type) {
  for (; map->op_type; ++map) {
    if (strcmp(map->op_type, op_type) == 0) {
      return map->op;
    }
  }
  return NULL;
}

static kiln_status_t kiln_onnx_map_op(const kiln_onnx_node_t *node, const kiln_onnx_op_map_t *map,
                                      const kiln_op_t **out_op) {
  *out_op = kiln_onnx_map_find(map, node->proto->op_type);
  if (!*out_op) {
    return KILN_STATUS(INTERNAL, "no registry operator for %s", node->proto->op_type);
  }
  return KILN_OK;
}

/* ---- one operator each ---- */

static const kiln_onnx_op_map_t kiln_onnx_unary_ops[] = {{"Relu", &kiln_op_relu},
                                                         {"Sigmoid", &kiln_op_sigmoid},
                                                         {"Tanh", &kiln_op_tanh},
                                                         {"Erf", &kiln_op_erf},
                                                         {"Exp", &kiln_op_exp},
                                                         {"Log", &kiln_op_log},
                                                         {"Sqrt", &kiln_op_sqrt},
                                                         {"Abs", &kiln_op_abs},
                                                         {"Neg", &kiln_op_negative},
                                                         {"Floor", &kiln_op_floor},
                                                         {"Ceil", &kiln_op_ceil},
                                                         {"HardSwish", &kiln_op_hard_swish},
                                                         {NULL, NULL}};

static const kiln_onnx_op_map_t kiln_onnx_binary_ops[] = {
    {"Add", &kiln_op_add},
    {"Sub", &kiln_op_subtract},
    {"Mul", &kiln_op_multiply},
    {"Div", &kiln_op_divide},
    {"Equal", &kiln_op_equal},
    {"Less", &kiln_op_less},
    {"LessOrEqual", &kiln_op_less_equal},
    {"Greater", &kiln_op_greater},
    {"GreaterOrEqual", &kiln_op_greater_equal},
    {NULL, NULL}};

kiln_status_t kiln_onnx_convert_unary(kiln_onnx_node_t *node) {
  const kiln_op_t *op = NULL;
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_map_op(node, kiln_onnx_unary_ops, &op));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  return kiln_onnx_emit1(node, op, x, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_binary(kiln_onnx_node_t *node) {
  const kiln_op_t *op = NULL;
  kiln_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_map_op(node, kiln_onnx_binary_ops, &op));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  return kiln_onnx_emit2(node, op, a, b, NULL, &node->outputs[0]);
}

static const kiln_onnx_op_map_t kiln_onnx_variadic_ops[] = {{"Sum", &kiln_op_add},
                                                            {"Mean", &kiln_op_add},
                                                            {"Max", &kiln_op_maximum},
                                                            {"Min", &kiln_op_minimum},
                                                            {NULL, NULL}};

kiln_status_t kiln_onnx_convert_variadic(kiln_onnx_node_t *node) {
  const kiln_op_t *op = NULL;
  kiln_expr_t *result = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_map_op(node, kiln_onnx_variadic_ops, &op));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &result));
  for (int i = 1; i < node->num_inputs; ++i) {
    kiln_expr_t *next = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &next));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, op, result, next, NULL, &result));
  }
  if (strcmp(node->proto->op_type, "Mean") == 0 && node->num_inputs > 1) {
    kiln_expr_t *count = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_onnx_scalar(node, kiln_onnx_type_of(result)->dtype, node->num_inputs, &count));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_divide, result, count, NULL, &result));
  }
  node->outputs[0] = result;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_pow(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &y));
  kiln_dtype_t base = kiln_onnx_type_of(x)->dtype;
  if (kiln_onnx_type_of(y)->dtype != base) { /* opset 12+: the exponent may differ */
    KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, y, base, &y));
  }
  return kiln_onnx_emit2(node, &kiln_op_power, x, y, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_where(kiln_onnx_node_t *node) {
  kiln_expr_t *args[3];
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  return kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &node->outputs[0]);
}

/* where(cond, a, b), with NULL a or b meaning a bool constant `fill`. */
static kiln_status_t kiln_onnx_where_with(const kiln_onnx_node_t *node, kiln_expr_t *cond,
                                          kiln_expr_t *a, kiln_expr_t *b, double fill,
                                          kiln_expr_t **out_expr) {
  kiln_expr_t *constant = NULL;
  if (!a || !b) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_BOOL, fill, &constant));
  }
  kiln_expr_t *args[3] = {cond, a ? a : constant, b ? b : constant};
  return kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_logical(kiln_onnx_node_t *node) {
  const char *op_type = node->proto->op_type;
  kiln_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  if (strcmp(op_type, "Not") == 0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_BOOL, 0.0, &b));
    return kiln_onnx_emit2(node, &kiln_op_equal, a, b, NULL, &node->outputs[0]);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  if (strcmp(op_type, "Xor") == 0) {
    return kiln_onnx_emit2(node, &kiln_op_not_equal, a, b, NULL, &node->outputs[0]);
  }
  if (strcmp(op_type, "And") == 0) {
    return kiln_onnx_where_with(node, a, b, NULL, 0.0, &node->outputs[0]);
  }
  return kiln_onnx_where_with(node, a, NULL, b, 1.0, &node->outputs[0]); /* Or */
}

kiln_status_t kiln_onnx_convert_reciprocal(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *one = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, 1.0, &one));
  return kiln_onnx_emit2(node, &kiln_op_divide, one, x, NULL, &node->outputs[0]);
}

/* ---- activations with attributes ---- */

kiln_status_t kiln_onnx_convert_leaky_relu(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  double alpha = 0.01;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 0.01, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_leaky_relu, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_leaky_relu, attrs, "alpha", alpha));
  return kiln_onnx_emit1(node, &kiln_op_leaky_relu, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_hard_sigmoid(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  double alpha = 0.2, beta = 0.5;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 0.2, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "beta", 0.5, &beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_hard_sigmoid, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_hard_sigmoid, attrs, "alpha", alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_hard_sigmoid, attrs, "beta", beta));
  return kiln_onnx_emit1(node, &kiln_op_hard_sigmoid, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_gelu(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  const char *approximate = "none";
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "approximate", "none", &approximate));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_gelu, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(&kiln_op_gelu, attrs, "approximate", approximate));
  return kiln_onnx_emit1(node, &kiln_op_gelu, x, attrs, &node->outputs[0]);
}

/* ---- clip ---- */

/* clip(x, lo, hi) when lo <= hi, else minimum(maximum(x, lo), hi) (ONNX
 * gives hi everywhere then). */
static kiln_status_t kiln_onnx_clip_constant(kiln_onnx_node_t *node, kiln_expr_t *x, double lo,
                                             double hi) {
  if (lo <= hi) {
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_clip, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_clip, attrs, "a_min", lo));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_float(&kiln_op_clip, attrs, "a_max", hi));
    return kiln_onnx_emit1(node, &kiln_op_clip, x, attrs, &node->outputs[0]);
  }
  kiln_dtype_t dtype = kiln_onnx_type_of(x)->dtype;
  kiln_expr_t *low = NULL, *high = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, lo, &low));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, hi, &high));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_maximum, x, low, NULL, &y));
  return kiln_onnx_emit2(node, &kiln_op_minimum, y, high, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_clip_attrs(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  double lo = -FLT_MAX, hi = FLT_MAX;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "min", -FLT_MAX, &lo));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "max", FLT_MAX, &hi));
  return kiln_onnx_clip_constant(node, x, lo, hi);
}

kiln_status_t kiln_onnx_convert_clip_inputs(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  kiln_expr_t *lo = kiln_onnx_input_optional(node, 1), *hi = kiln_onnx_input_optional(node, 2);
  bool constant = (!lo || kiln_expr_as_constant(lo)) && (!hi || kiln_expr_as_constant(hi));
  if (constant) {
    double low = -INFINITY, high = INFINITY;
    if (lo) {
      KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "min", &low));
    }
    if (hi) {
      KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "max", &high));
    }
    return kiln_onnx_clip_constant(node, x, low, high);
  }
  kiln_expr_t *y = x;
  if (lo) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_maximum, y, lo, NULL, &y));
  }
  if (hi) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_minimum, y, hi, NULL, &y));
  }
  node->outputs[0] = y;
  return KILN_OK;
}

/* ---- compositions ---- */

/* x < 0 (or `compare` against scalar `at`) as a bool tensor. */
static kiln_status_t kiln_onnx_compare_scalar(const kiln_onnx_node_t *node,
                                              const kiln_op_t *compare, kiln_expr_t *x, double at,
                                              kiln_expr_t **out_expr) {
  kiln_expr_t *scalar = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, at, &scalar));
  return kiln_onnx_emit2(node, compare, x, scalar, NULL, out_expr);
}

/* `op`(x, scalar value) for a binary `op`. */
static kiln_status_t kiln_onnx_with_scalar(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                           kiln_expr_t *x, double value, kiln_expr_t **out_expr) {
  kiln_expr_t *scalar = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, value, &scalar));
  return kiln_onnx_emit2(node, op, x, scalar, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_prelu(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *slope = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &slope));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x), *st = kiln_onnx_type_of(slope);
  bool per_channel = xt->ndim >= 2 && st->ndim <= xt->ndim && st->ndim >= xt->ndim - 1;
  int64_t count = 1;
  for (int d = 0; per_channel && d < st->ndim; ++d) {
    int axis = xt->ndim - st->ndim + d;
    per_channel = st->shape[d] == 1 || axis == 1;
    count *= st->shape[d];
  }
  if (per_channel && count == xt->shape[1]) {
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, slope, 1, &count, &slope));
    return kiln_onnx_emit2(node, &kiln_op_prelu, x, slope, NULL, &node->outputs[0]);
  }
  kiln_expr_t *negative = NULL, *scaled = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_compare_scalar(node, &kiln_op_less, x, 0.0, &negative));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, x, slope, NULL, &scaled));
  kiln_expr_t *args[3] = {negative, scaled, x};
  return kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &node->outputs[0]);
}

/* where(x `compare` 0, x, alpha * (exp(x / divisor) - 1)), times gamma:
 * Elu (gamma 1, divisor 1), Selu, Celu (divisor alpha). */
static kiln_status_t kiln_onnx_exponential_unit(kiln_onnx_node_t *node, double alpha, double gamma,
                                                double divisor) {
  kiln_expr_t *x = NULL, *positive = NULL, *e = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_compare_scalar(node, &kiln_op_greater, x, 0.0, &positive));
  e = x;
  if (divisor != 1.0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_with_scalar(node, &kiln_op_divide, e, divisor, &e));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_exp, e, NULL, &e));
  KILN_RETURN_IF_ERROR(kiln_onnx_with_scalar(node, &kiln_op_subtract, e, 1.0, &e));
  KILN_RETURN_IF_ERROR(kiln_onnx_with_scalar(node, &kiln_op_multiply, e, alpha, &e));
  kiln_expr_t *args[3] = {positive, x, e};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &y));
  if (gamma != 1.0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_with_scalar(node, &kiln_op_multiply, y, gamma, &y));
  }
  node->outputs[0] = y;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_elu(kiln_onnx_node_t *node) {
  double alpha = 1.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 1.0, &alpha));
  return kiln_onnx_exponential_unit(node, alpha, 1.0, 1.0);
}

kiln_status_t kiln_onnx_convert_selu(kiln_onnx_node_t *node) {
  double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", alpha, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "gamma", gamma, &gamma));
  return kiln_onnx_exponential_unit(node, alpha, gamma, 1.0);
}

kiln_status_t kiln_onnx_convert_celu(kiln_onnx_node_t *node) {
  double alpha = 1.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 1.0, &alpha));
  if (alpha == 0.0) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute alpha must not be 0");
  }
  return kiln_onnx_exponential_unit(node, alpha, 1.0, alpha);
}

kiln_status_t kiln_onnx_convert_thresholded_relu(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *above = NULL, *zero = NULL;
  double alpha = 1.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 1.0, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_compare_scalar(node, &kiln_op_greater, x, alpha, &above));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, 0.0, &zero));
  kiln_expr_t *args[3] = {above, x, zero};
  return kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_softplus(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_exp, x, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_with_scalar(node, &kiln_op_add, y, 1.0, &y));
  return kiln_onnx_emit1(node, &kiln_op_log, y, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_softsign(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_abs, x, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_with_scalar(node, &kiln_op_add, y, 1.0, &y));
  return kiln_onnx_emit2(node, &kiln_op_divide, x, y, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_sign(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *positive = NULL, *negative = NULL;
  kiln_expr_t *one = NULL, *minus_one = NULL, *zero = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  kiln_dtype_t dtype = kiln_onnx_type_of(x)->dtype;
  KILN_RETURN_IF_ERROR(kiln_onnx_compare_scalar(node, &kiln_op_greater, x, 0.0, &positive));
  KILN_RETURN_IF_ERROR(kiln_onnx_compare_scalar(node, &kiln_op_less, x, 0.0, &negative));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, 1.0, &one));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, -1.0, &minus_one));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, 0.0, &zero));
  /* where(x < 0, -1, x * 0) keeps NaN as NaN, as ONNX's sign does. */
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, x, zero, NULL, &zero));
  kiln_expr_t *inner[3] = {negative, minus_one, zero};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, inner, NULL, &y));
  kiln_expr_t *outer[3] = {positive, one, y};
  return kiln_onnx_emit(node, &kiln_op_where, 3, outer, NULL, &node->outputs[0]);
}
