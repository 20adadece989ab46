/*
 * Elementwise converters: unary and binary operators, comparisons, where,
 * the logical operators, and activations.
 *
 * Most ONNX elementwise operators are one registry operator each, found in
 * a lookup table by op_type: the unary table (Relu ... Atanh, Sign, Round,
 * Reciprocal, IsNaN, Softplus, Softsign, Not), the binary table (Add ...
 * GreaterOrEqual, And, Or, Xor), and the activation table for operators
 * whose float attributes map one to one onto the registry operator's fields
 * of the same name (LeakyRelu, HardSigmoid, Elu, Selu, Celu,
 * ThresholdedRelu, Shrink), each with ONNX's default. IsInf's int flags,
 * Mod's fmod (mod or floor_mod) and BitShift's direction (left_shift or
 * right_shift) pick or fill an operator. Variadic Sum, Max, Min and Mean
 * fold left into a chain of binary calls (Mean divides by the count at the
 * end). PRelu is nn.prelu when the slope is one value per channel of axis
 * 1, else where(x < 0, x * slope, x). Clip is clip when its bounds are
 * constants in order, else maximum then minimum.
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
                                                         {"Sin", &kiln_op_sin},
                                                         {"Cos", &kiln_op_cos},
                                                         {"Tan", &kiln_op_tan},
                                                         {"Asin", &kiln_op_asin},
                                                         {"Acos", &kiln_op_acos},
                                                         {"Atan", &kiln_op_atan},
                                                         {"Sinh", &kiln_op_sinh},
                                                         {"Cosh", &kiln_op_cosh},
                                                         {"Asinh", &kiln_op_asinh},
                                                         {"Acosh", &kiln_op_acosh},
                                                         {"Atanh", &kiln_op_atanh},
                                                         {"Sign", &kiln_op_sign},
                                                         {"Round", &kiln_op_round},
                                                         {"Reciprocal", &kiln_op_reciprocal},
                                                         {"IsNaN", &kiln_op_isnan},
                                                         {"Softplus", &kiln_op_softplus},
                                                         {"Softsign", &kiln_op_softsign},
                                                         {"Not", &kiln_op_logical_not},
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
    {"And", &kiln_op_logical_and},
    {"Or", &kiln_op_logical_or},
    {"Xor", &kiln_op_logical_xor},
    {NULL, NULL}};

kiln_status_t kiln_onnx_convert_unary(kiln_onnx_node_t *node) {
  const kiln_op_t *op = NULL;
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_map_op(node, kiln_onnx_unary_ops, &op));
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  return kiln_onnx_emit1(node, op, x, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_binary(kiln_onnx_node_t *node) {
  const kiln_op_t *op = NULL;
  kiln_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_map_op(node, kiln_onnx_binary_ops, &op));
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 2));
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

/* ---- operators with attributes ---- */

/* An ONNX float attribute that is the registry operator's field of the same
 * name, with ONNX's default. */
typedef struct kiln_onnx_float_attr_t {
  const char *name;
  double fallback;
} kiln_onnx_float_attr_t;

typedef struct kiln_onnx_activation_t {
  const char *op_type;
  const kiln_op_t *op;
  kiln_onnx_float_attr_t attrs[2]; /* name NULL: unused */
} kiln_onnx_activation_t;

/* Selu's constants are ONNX's float32 values. */
static const kiln_onnx_activation_t kiln_onnx_activations[] = {
    {"LeakyRelu", &kiln_op_leaky_relu, {{"alpha", 0.01}, {NULL, 0}}},
    {"HardSigmoid", &kiln_op_hard_sigmoid, {{"alpha", 0.2}, {"beta", 0.5}}},
    {"Elu", &kiln_op_elu, {{"alpha", 1.0}, {NULL, 0}}},
    {"Selu",
     &kiln_op_selu,
     {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}}},
    {"Celu", &kiln_op_celu, {{"alpha", 1.0}, {NULL, 0}}},
    {"ThresholdedRelu", &kiln_op_thresholded_relu, {{"alpha", 1.0}, {NULL, 0}}},
    {"Shrink", &kiln_op_shrink, {{"bias", 0.0}, {"lambd", 0.5}}},
};

kiln_status_t kiln_onnx_convert_activation(kiln_onnx_node_t *node) {
  const kiln_onnx_activation_t *row = NULL;
  for (size_t i = 0; i < sizeof(kiln_onnx_activations) / sizeof(kiln_onnx_activations[0]); ++i) {
    if (strcmp(kiln_onnx_activations[i].op_type, node->proto->op_type) == 0) {
      row = &kiln_onnx_activations[i];
    }
  }
  if (!row) {
    return KILN_STATUS(INTERNAL, "no registry operator for %s", node->proto->op_type);
  }
  kiln_expr_t *x = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, row->op, &attrs));
  for (int i = 0; i < 2 && row->attrs[i].name; ++i) {
    double value = kiln_onnx_legacy_default(node, row->attrs[i].name, row->attrs[i].fallback);
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, row->attrs[i].name, value, &value));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_float(row->op, attrs, row->attrs[i].name, value));
  }
  return kiln_onnx_emit1(node, row->op, x, attrs, &node->outputs[0]);
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

kiln_status_t kiln_onnx_convert_isinf(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t positive = 1, negative = 1;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "detect_positive", 1, &positive));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "detect_negative", 1, &negative));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_isinf, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_isinf, attrs, "detect_positive", positive != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_isinf, attrs, "detect_negative", negative != 0));
  return kiln_onnx_emit1(node, &kiln_op_isinf, x, attrs, &node->outputs[0]);
}

/* Mod: fmod=1 is C's fmod (the dividend's sign, `mod`), fmod=0 Python's %
 * (the divisor's sign, `floor_mod`); ONNX requires fmod=1 for floats. */
kiln_status_t kiln_onnx_convert_mod(kiln_onnx_node_t *node) {
  kiln_expr_t *a = NULL, *b = NULL;
  int64_t fmod = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "fmod", 0, &fmod));
  if (fmod != 0 && fmod != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute fmod is %lld; expected 0 or 1",
                       (long long)fmod);
  }
  kiln_dtype_t dtype = kiln_onnx_type_of(a)->dtype;
  if (!fmod && kiln_onnx_is_float(dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "fmod=0 on %s inputs; ONNX requires fmod=1 for floats",
                       kiln_dtype_name(dtype));
  }
  const kiln_op_t *op = fmod ? &kiln_op_mod : &kiln_op_floor_mod;
  return kiln_onnx_emit2(node, op, a, b, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_bit_shift(kiln_onnx_node_t *node) {
  kiln_expr_t *a = NULL, *b = NULL;
  const char *direction = "";
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "direction", "", &direction));
  const kiln_op_t *op = NULL;
  if (strcmp(direction, "LEFT") == 0) {
    op = &kiln_op_left_shift;
  } else if (strcmp(direction, "RIGHT") == 0) {
    op = &kiln_op_right_shift;
  } else {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute direction is \"%s\"; expected LEFT or RIGHT",
                       direction);
  }
  return kiln_onnx_emit2(node, op, a, b, NULL, &node->outputs[0]);
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

/* ---- PRelu ---- */

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
  kiln_expr_t *zero = NULL, *negative = NULL, *scaled = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, 0.0, &zero));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_less, x, zero, NULL, &negative));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, x, slope, NULL, &scaled));
  kiln_expr_t *args[3] = {negative, scaled, x};
  return kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &node->outputs[0]);
}
