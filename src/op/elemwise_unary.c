/*
 * Unary elementwise operators: activations (nn.relu, nn.leaky_relu, clip,
 * sigmoid, tanh, erf, nn.gelu, nn.hard_sigmoid, nn.hard_swish, softplus,
 * softsign, nn.elu, nn.selu, nn.celu, nn.thresholded_relu, nn.shrink), math
 * (exp, log, sqrt, rsqrt, abs, negative, floor, ceil, reciprocal, sign,
 * round, the trigonometric and hyperbolic functions and their inverses),
 * tests (isnan, isinf) and logical_not.
 *
 * Every one has the same rules: one tensor input, an output of the same
 * shape, pattern ELEMWISE, no layout rule (the layout pass keeps the
 * input's), and one reference kernel. What differs is a scalar function, so
 * the operators are one table indexed by operator id: a float function
 * (every float dtype, computed in double and rounded once to float32 or
 * float64; float16 and bfloat16 through float32), an integer function for
 * the operators that take signed integers (computed in int64, stored
 * wrapping to the input's width), and two flags: the input must be bool
 * (logical_not, checked by the type relation) and the output is bool
 * (isnan, isinf). Elements cross dtypes through kiln_scalar_t (scalar.h).
 * Scalar functions receive the operator's attrs struct. Integer negation
 * wraps at INT64_MIN, as NumPy's does; round is half to even (rint in the
 * default rounding mode), as NumPy and ONNX round.
 */
#include <math.h>
#include <string.h>

#include "op/elemwise_attrs.h"
#include "op/elemwise_compute.h"
#include "op/impl.h"
#include "op/op.h"
#include "runtime/scalar.h"

/* ---- attributes ---- */

static const kiln_attr_field_t alpha_one_fields[] = {
    KILN_ATTR_FIELD(kiln_alpha_attrs_t, alpha, FLOAT, "1.0"),
};

/* ONNX Selu's defaults, the float32 values of its constants. */
static const kiln_attr_field_t selu_fields[] = {
    KILN_ATTR_FIELD(kiln_selu_attrs_t, alpha, FLOAT, "1.6732631921768188"),
    KILN_ATTR_FIELD(kiln_selu_attrs_t, gamma, FLOAT, "1.0507010221481323"),
};

static const kiln_attr_field_t shrink_fields[] = {
    KILN_ATTR_FIELD(kiln_shrink_attrs_t, bias, FLOAT, "0.0"),
    KILN_ATTR_FIELD(kiln_shrink_attrs_t, lambd, FLOAT, "0.5"),
};

static const kiln_attr_field_t isinf_fields[] = {
    KILN_ATTR_FIELD(kiln_isinf_attrs_t, detect_positive, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_isinf_attrs_t, detect_negative, BOOL, "True"),
};

static const kiln_attr_field_t leaky_relu_fields[] = {
    KILN_ATTR_FIELD(kiln_leaky_relu_attrs_t, alpha, FLOAT, "0.01"),
};

static const kiln_attr_field_t clip_fields[] = {
    KILN_ATTR_FIELD(kiln_clip_attrs_t, a_min, FLOAT, "-3.4028234663852886e+38"),
    KILN_ATTR_FIELD(kiln_clip_attrs_t, a_max, FLOAT, "3.4028234663852886e+38"),
};

static const kiln_attr_field_t gelu_fields[] = {
    KILN_ATTR_FIELD(kiln_gelu_attrs_t, approximate, STRING, "\"none\""),
};

static const kiln_attr_field_t hard_sigmoid_fields[] = {
    KILN_ATTR_FIELD(kiln_hard_sigmoid_attrs_t, alpha, FLOAT, "0.2"),
    KILN_ATTR_FIELD(kiln_hard_sigmoid_attrs_t, beta, FLOAT, "0.5"),
};

static kiln_status_t clip_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_clip_attrs_t *clip = attrs;
  if (!(clip->a_min <= clip->a_max)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attribute a_min (%g) must be <= a_max (%g)", op->name,
                       clip->a_min, clip->a_max);
  }
  return KILN_OK;
}

static kiln_status_t gelu_validate(const kiln_op_t *op, const void *attrs) {
  const char *approximate = ((const kiln_gelu_attrs_t *)attrs)->approximate;
  if (!approximate || (strcmp(approximate, "none") != 0 && strcmp(approximate, "tanh") != 0)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: attribute approximate must be \"none\" or \"tanh\", got \"%s\"",
                       op->name, approximate ? approximate : "(null)");
  }
  return KILN_OK;
}

static kiln_status_t celu_validate(const kiln_op_t *op, const void *attrs) {
  double alpha = ((const kiln_alpha_attrs_t *)attrs)->alpha;
  if (alpha == 0.0 || isnan(alpha)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attribute alpha (%g) must be a nonzero number",
                       op->name, alpha);
  }
  return KILN_OK;
}

static kiln_status_t shrink_validate(const kiln_op_t *op, const void *attrs) {
  double lambd = ((const kiln_shrink_attrs_t *)attrs)->lambd;
  if (!(lambd >= 0.0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attribute lambd (%g) must be >= 0", op->name, lambd);
  }
  return KILN_OK;
}

/* ---- scalar functions ---- */

/* The functions that are one expression of x alone. */
#define FLOAT_FN_(name, expr)                           \
  static double f_##name(double x, const void *attrs) { \
    (void)attrs;                                        \
    return (expr);                                      \
  }

static double clamp01(double x) {
  return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
}

FLOAT_FN_(relu, x < 0.0 ? 0.0 : x) /* NaN stays NaN */
FLOAT_FN_(sigmoid, 1.0 / (1.0 + exp(-x)))
FLOAT_FN_(tanh, tanh(x))
FLOAT_FN_(erf, erf(x))
FLOAT_FN_(hard_swish, clamp01(x / 6.0 + 0.5) * x)
FLOAT_FN_(exp, exp(x))
FLOAT_FN_(log, log(x))
FLOAT_FN_(sqrt, sqrt(x))
FLOAT_FN_(rsqrt, 1.0 / sqrt(x))
FLOAT_FN_(abs, fabs(x))
FLOAT_FN_(negative, -x)
FLOAT_FN_(floor, floor(x))
FLOAT_FN_(ceil, ceil(x))
FLOAT_FN_(reciprocal, 1.0 / x)
FLOAT_FN_(sign, isnan(x) ? x : (x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x))) /* keeps -0 */
FLOAT_FN_(round, rint(x))                                              /* half to even */
FLOAT_FN_(isnan, isnan(x) ? 1.0 : 0.0)
FLOAT_FN_(softplus, x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x))) /* never overflows */
FLOAT_FN_(softsign, x / (1.0 + fabs(x)))
FLOAT_FN_(sin, sin(x))
FLOAT_FN_(cos, cos(x))
FLOAT_FN_(tan, tan(x))
FLOAT_FN_(asin, asin(x))
FLOAT_FN_(acos, acos(x))
FLOAT_FN_(atan, atan(x))
FLOAT_FN_(sinh, sinh(x))
FLOAT_FN_(cosh, cosh(x))
FLOAT_FN_(asinh, asinh(x))
FLOAT_FN_(acosh, acosh(x))
FLOAT_FN_(atanh, atanh(x))

static double f_leaky_relu(double x, const void *attrs) {
  return x < 0.0 ? ((const kiln_leaky_relu_attrs_t *)attrs)->alpha * x : x;
}

static double f_clip(double x, const void *attrs) {
  const kiln_clip_attrs_t *clip = attrs;
  return x < clip->a_min ? clip->a_min : (x > clip->a_max ? clip->a_max : x); /* NaN stays */
}

static double f_gelu(double x, const void *attrs) {
  const char *approximate = ((const kiln_gelu_attrs_t *)attrs)->approximate;
  if (strcmp(approximate, "tanh") == 0) {
    const double k = 0.79788456080286535588; /* sqrt(2 / pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); /* x / sqrt(2) */
}

static double f_hard_sigmoid(double x, const void *attrs) {
  const kiln_hard_sigmoid_attrs_t *hard = attrs;
  return clamp01(hard->alpha * x + hard->beta);
}

static double f_isinf(double x, const void *attrs) {
  const kiln_isinf_attrs_t *detect = attrs;
  return isinf(x) && (x > 0.0 ? detect->detect_positive : detect->detect_negative) ? 1.0 : 0.0;
}

static double f_elu(double x, const void *attrs) {
  return x < 0.0 ? ((const kiln_alpha_attrs_t *)attrs)->alpha * expm1(x) : x;
}

static double f_selu(double x, const void *attrs) {
  const kiln_selu_attrs_t *selu = attrs;
  return x > 0.0 ? selu->gamma * x : selu->gamma * selu->alpha * expm1(x);
}

static double f_celu(double x, const void *attrs) {
  double alpha = ((const kiln_alpha_attrs_t *)attrs)->alpha;
  double negative = alpha * expm1(x / alpha);
  return (x > 0.0 ? x : 0.0) + (negative < 0.0 ? negative : 0.0);
}

/* NaN gives 0, as ONNX's where(x > alpha, x, 0). */
static double f_thresholded_relu(double x, const void *attrs) {
  return x > ((const kiln_alpha_attrs_t *)attrs)->alpha ? x : 0.0;
}

static double f_shrink(double x, const void *attrs) {
  const kiln_shrink_attrs_t *shrink = attrs;
  if (x < -shrink->lambd) {
    return x + shrink->bias;
  }
  return x > shrink->lambd ? x - shrink->bias : 0.0;
}

/* Two's-complement negation that wraps at INT64_MIN instead of overflowing. */
static int64_t wrap_negate(int64_t x) {
  return (int64_t)(0u - (uint64_t)x);
}

#define INT_FN_(name, expr)                               \
  static int64_t i_##name(int64_t x, const void *attrs) { \
    (void)attrs;                                          \
    return (expr);                                        \
  }

INT_FN_(relu, x < 0 ? 0 : x)
INT_FN_(abs, x < 0 ? wrap_negate(x) : x)
INT_FN_(negative, wrap_negate(x))
INT_FN_(sign, (x > 0) - (x < 0))
INT_FN_(never, x - x) /* isnan and isinf of an integer */
INT_FN_(logical_not, x == 0)

/* clip on int64: the bounds rounded inward to integers (ceil(a_min),
 * floor(a_max)) and saturated to the int64 range. */
static int64_t i_clip(int64_t x, const void *attrs) {
  const kiln_clip_attrs_t *clip = attrs;
  const double two63 = 9223372036854775808.0;
  double lo = ceil(clip->a_min);
  double hi = floor(clip->a_max);
  int64_t low = lo < -two63 ? INT64_MIN : (lo >= two63 ? INT64_MAX : (int64_t)lo);
  int64_t high = hi < -two63 ? INT64_MIN : (hi >= two63 ? INT64_MAX : (int64_t)hi);
  return x < low ? low : (x > high ? high : x);
}

typedef double (*unary_float_fn)(double x, const void *attrs);
typedef int64_t (*unary_int_fn)(int64_t x, const void *attrs);

typedef struct unary_rule_t {
  unary_float_fn f; /* float dtypes; NULL: none */
  unary_int_fn i;   /* signed integer dtypes (bool for bool_in); NULL: none */
  bool bool_in;     /* the input must be bool */
  bool bool_out;    /* the output is bool */
} unary_rule_t;

static const unary_rule_t unary_rules[KILN_OP_COUNT_] = {
    [KILN_OP_RELU] = {f_relu, i_relu, false, false},
    [KILN_OP_LEAKY_RELU] = {f_leaky_relu, NULL, false, false},
    [KILN_OP_CLIP] = {f_clip, i_clip, false, false},
    [KILN_OP_SIGMOID] = {f_sigmoid, NULL, false, false},
    [KILN_OP_TANH] = {f_tanh, NULL, false, false},
    [KILN_OP_ERF] = {f_erf, NULL, false, false},
    [KILN_OP_GELU] = {f_gelu, NULL, false, false},
    [KILN_OP_HARD_SIGMOID] = {f_hard_sigmoid, NULL, false, false},
    [KILN_OP_HARD_SWISH] = {f_hard_swish, NULL, false, false},
    [KILN_OP_EXP] = {f_exp, NULL, false, false},
    [KILN_OP_LOG] = {f_log, NULL, false, false},
    [KILN_OP_SQRT] = {f_sqrt, NULL, false, false},
    [KILN_OP_RSQRT] = {f_rsqrt, NULL, false, false},
    [KILN_OP_ABS] = {f_abs, i_abs, false, false},
    [KILN_OP_NEGATIVE] = {f_negative, i_negative, false, false},
    [KILN_OP_FLOOR] = {f_floor, NULL, false, false},
    [KILN_OP_CEIL] = {f_ceil, NULL, false, false},
    [KILN_OP_SIN] = {f_sin, NULL, false, false},
    [KILN_OP_COS] = {f_cos, NULL, false, false},
    [KILN_OP_TAN] = {f_tan, NULL, false, false},
    [KILN_OP_ASIN] = {f_asin, NULL, false, false},
    [KILN_OP_ACOS] = {f_acos, NULL, false, false},
    [KILN_OP_ATAN] = {f_atan, NULL, false, false},
    [KILN_OP_SINH] = {f_sinh, NULL, false, false},
    [KILN_OP_COSH] = {f_cosh, NULL, false, false},
    [KILN_OP_ASINH] = {f_asinh, NULL, false, false},
    [KILN_OP_ACOSH] = {f_acosh, NULL, false, false},
    [KILN_OP_ATANH] = {f_atanh, NULL, false, false},
    [KILN_OP_SIGN] = {f_sign, i_sign, false, false},
    [KILN_OP_ROUND] = {f_round, NULL, false, false},
    [KILN_OP_RECIPROCAL] = {f_reciprocal, NULL, false, false},
    [KILN_OP_ISNAN] = {f_isnan, i_never, false, true},
    [KILN_OP_ISINF] = {f_isinf, i_never, false, true},
    [KILN_OP_LOGICAL_NOT] = {NULL, i_logical_not, true, true},
    [KILN_OP_SOFTPLUS] = {f_softplus, NULL, false, false},
    [KILN_OP_SOFTSIGN] = {f_softsign, NULL, false, false},
    [KILN_OP_ELU] = {f_elu, NULL, false, false},
    [KILN_OP_SELU] = {f_selu, NULL, false, false},
    [KILN_OP_CELU] = {f_celu, NULL, false, false},
    [KILN_OP_THRESHOLDED_RELU] = {f_thresholded_relu, NULL, false, false},
    [KILN_OP_SHRINK] = {f_shrink, NULL, false, false},
};

static const unary_rule_t *unary_rule(const kiln_op_t *op) {
  const unary_rule_t *rule = (unsigned)op->id < KILN_OP_COUNT_ ? &unary_rules[op->id] : NULL;
  return rule && (rule->f || rule->i) ? rule : NULL;
}

/* ---- rules ---- */

static kiln_status_t unary_infer_type(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  const unary_rule_t *rule = unary_rule(relation->op);
  if (!rule) {
    return KILN_STATUS(INTERNAL, "%s: no unary scalar function", relation->op->name);
  }
  const kiln_tensor_type_t *input = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &input));
  if (rule->bool_in && input->dtype != KILN_DTYPE_BOOL) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: x must be bool, got %s %s", relation->op->name,
                       kiln_dtype_name(input->dtype), kiln_op_shape_text(input, text));
  }
  kiln_dtype_t dtype = rule->bool_out ? KILN_DTYPE_BOOL : input->dtype;
  return kiln_tensor_type_create(relation->arena, dtype, input->ndim, input->shape, out_type);
}

static kiln_status_t unary_check_args(const kiln_kernel_args_t *args, const unary_rule_t *rule) {
  const char *name = args->op->name;
  if (args->num_inputs != 1 || args->num_outputs != 1 || !args->inputs[0] || !args->outputs[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 1 input and 1 output, got %d and %d", name,
                       args->num_inputs, args->num_outputs);
  }
  if (args->op->attrs_size > 0 && !args->attrs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the kernel needs the operator's attributes", name);
  }
  const kiln_tensor_t *in = args->inputs[0];
  const kiln_tensor_t *out = args->outputs[0];
  kiln_dtype_t expected = rule->bool_out ? KILN_DTYPE_BOOL : kiln_tensor_dtype(in);
  if (kiln_tensor_dtype(out) != expected ||
      !kiln_shape_equal(kiln_tensor_ndim(in), kiln_tensor_shape(in), kiln_tensor_ndim(out),
                        kiln_tensor_shape(out))) {
    char in_text[KILN_SHAPE_TEXT_CAPACITY];
    char out_text[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(in), kiln_tensor_shape(in), in_text, sizeof(in_text));
    kiln_shape_format(kiln_tensor_ndim(out), kiln_tensor_shape(out), out_text, sizeof(out_text));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %s %s does not match input %s %s%s", name,
                       kiln_dtype_name(kiln_tensor_dtype(out)), out_text,
                       kiln_dtype_name(kiln_tensor_dtype(in)), in_text,
                       rule->bool_out ? " (the output is bool)" : "");
  }
  return KILN_OK;
}

/* Whether the rule has a function for the input's dtype class. */
static bool unary_takes(const unary_rule_t *rule, kiln_scalar_class_t class) {
  switch (class) {
  case KILN_SCALAR_CLASS_FLOAT:
    return rule->f != NULL;
  case KILN_SCALAR_CLASS_SIGNED:
    return rule->i != NULL && !rule->bool_in;
  case KILN_SCALAR_CLASS_BOOL:
    return rule->bool_in;
  case KILN_SCALAR_CLASS_UNSIGNED:
  case KILN_SCALAR_CLASS_NONE:
    break;
  }
  return false;
}

static kiln_status_t unary_reference(const kiln_kernel_args_t *args) {
  const kiln_op_t *op = args->op;
  const unary_rule_t *rule = unary_rule(op);
  if (!rule) {
    return KILN_STATUS(INTERNAL, "%s: no unary scalar function", op->name);
  }
  KILN_RETURN_IF_ERROR(unary_check_args(args, rule));
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  if (!unary_takes(rule, kiln_scalar_class(dtype))) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not take dtype %s", op->name,
                       kiln_dtype_name(dtype));
  }
  kiln_scalar_kind_t in_kind = kiln_scalar_kind(dtype);
  kiln_scalar_kind_t out_kind = kiln_scalar_kind(kiln_tensor_dtype(args->outputs[0]));
  const void *in = kiln_tensor_data(args->inputs[0]);
  void *out = kiln_tensor_data(args->outputs[0]);
  int64_t count = kiln_tensor_element_count(args->inputs[0]);
  for (int64_t i = 0; i < count; ++i) {
    kiln_scalar_t x = kiln_scalar_load(in_kind, in, i);
    kiln_scalar_t y = x.is_float ? kiln_scalar_float(rule->f(x.f, args->attrs))
                                 : kiln_scalar_int(rule->i(x.i, args->attrs));
    kiln_scalar_store(out_kind, out, i, y);
  }
  return KILN_OK;
}

/* ---- the operators ---- */

/* The trailing arguments are the definition's remaining fields; operators
 * without attributes pass `.attrs_size = 0` (ISO C wants at least one). */
#define KILN_UNARY_OP_(symbol, op_name, op_id, ...)              \
  const kiln_op_t symbol = {.name = op_name,                     \
                            .id = KILN_OP_##op_id,               \
                            .min_inputs = 1,                     \
                            .max_inputs = 1,                     \
                            .pattern = KILN_OP_PATTERN_ELEMWISE, \
                            .infer_type = unary_infer_type,      \
                            .symbolic_dims = true,               \
                            .correct_layout = NULL,              \
                            __VA_ARGS__};                        \
  const kiln_op_impl_t symbol##_impl = {.reference = unary_reference, .compute = kiln_compute_unary}

#define KILN_UNARY_ATTRS_(type, fields)                                                     \
  .attrs_size = sizeof(type), .num_attr_fields = (int)(sizeof(fields) / sizeof(fields[0])), \
  .attr_fields = fields

KILN_UNARY_OP_(kiln_op_relu, "nn.relu", RELU, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_leaky_relu, "nn.leaky_relu", LEAKY_RELU,
               KILN_UNARY_ATTRS_(kiln_leaky_relu_attrs_t, leaky_relu_fields));
KILN_UNARY_OP_(kiln_op_clip, "clip", CLIP, KILN_UNARY_ATTRS_(kiln_clip_attrs_t, clip_fields),
               .validate_attrs = clip_validate);
KILN_UNARY_OP_(kiln_op_sigmoid, "sigmoid", SIGMOID, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_tanh, "tanh", TANH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_erf, "erf", ERF, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_gelu, "nn.gelu", GELU, KILN_UNARY_ATTRS_(kiln_gelu_attrs_t, gelu_fields),
               .validate_attrs = gelu_validate);
KILN_UNARY_OP_(kiln_op_hard_sigmoid, "nn.hard_sigmoid", HARD_SIGMOID,
               KILN_UNARY_ATTRS_(kiln_hard_sigmoid_attrs_t, hard_sigmoid_fields));
KILN_UNARY_OP_(kiln_op_hard_swish, "nn.hard_swish", HARD_SWISH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_exp, "exp", EXP, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_log, "log", LOG, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_sqrt, "sqrt", SQRT, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_rsqrt, "rsqrt", RSQRT, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_abs, "abs", ABS, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_negative, "negative", NEGATIVE, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_floor, "floor", FLOOR, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_ceil, "ceil", CEIL, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_sin, "sin", SIN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_cos, "cos", COS, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_tan, "tan", TAN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_asin, "asin", ASIN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_acos, "acos", ACOS, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_atan, "atan", ATAN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_sinh, "sinh", SINH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_cosh, "cosh", COSH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_asinh, "asinh", ASINH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_acosh, "acosh", ACOSH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_atanh, "atanh", ATANH, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_sign, "sign", SIGN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_round, "round", ROUND, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_reciprocal, "reciprocal", RECIPROCAL, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_isnan, "isnan", ISNAN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_isinf, "isinf", ISINF, KILN_UNARY_ATTRS_(kiln_isinf_attrs_t, isinf_fields));
KILN_UNARY_OP_(kiln_op_logical_not, "logical_not", LOGICAL_NOT, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_softplus, "softplus", SOFTPLUS, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_softsign, "softsign", SOFTSIGN, .attrs_size = 0);
KILN_UNARY_OP_(kiln_op_elu, "nn.elu", ELU, KILN_UNARY_ATTRS_(kiln_alpha_attrs_t, alpha_one_fields));
KILN_UNARY_OP_(kiln_op_selu, "nn.selu", SELU, KILN_UNARY_ATTRS_(kiln_selu_attrs_t, selu_fields));
KILN_UNARY_OP_(kiln_op_celu, "nn.celu", CELU,
               KILN_UNARY_ATTRS_(kiln_alpha_attrs_t, alpha_one_fields),
               .validate_attrs = celu_validate);
KILN_UNARY_OP_(kiln_op_thresholded_relu, "nn.thresholded_relu", THRESHOLDED_RELU,
               KILN_UNARY_ATTRS_(kiln_alpha_attrs_t, alpha_one_fields));
KILN_UNARY_OP_(kiln_op_shrink, "nn.shrink", SHRINK,
               KILN_UNARY_ATTRS_(kiln_shrink_attrs_t, shrink_fields),
               .validate_attrs = shrink_validate);
