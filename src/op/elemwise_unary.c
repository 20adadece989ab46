/*
 * Unary elementwise operators: activations (nn.relu, nn.leaky_relu, clip,
 * sigmoid, tanh, erf, nn.gelu, nn.hard_sigmoid, nn.hard_swish) and math
 * (exp, log, sqrt, rsqrt, abs, negative, floor, ceil).
 *
 * Every one has the same rules: one tensor input, an output of the same type,
 * pattern ELEMWISE, no layout rule (the layout pass keeps the input's), and one
 * reference kernel. What differs is a scalar function, so the operators are
 * one table indexed by operator id: a float function (computed in double,
 * rounded once to float32) and, for the few that take int64 (abs, negative,
 * relu, clip), an integer function. Scalar functions receive the operator's
 * attrs struct. Integer negation wraps at INT64_MIN, as NumPy's does.
 */
#include <math.h>
#include <string.h>

#include "op/op.h"

/* ---- attributes ---- */

typedef struct kiln_leaky_relu_attrs_t {
  double alpha;
} kiln_leaky_relu_attrs_t;

typedef struct kiln_clip_attrs_t {
  double a_min;
  double a_max;
} kiln_clip_attrs_t;

typedef struct kiln_gelu_attrs_t {
  const char *approximate; /* "none" or "tanh" */
} kiln_gelu_attrs_t;

typedef struct kiln_hard_sigmoid_attrs_t {
  double alpha;
  double beta;
} kiln_hard_sigmoid_attrs_t;

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
  unary_float_fn f;
  unary_int_fn i; /* NULL: the kernel takes float32 only */
} unary_rule_t;

static const unary_rule_t unary_rules[KILN_OP_COUNT_] = {
    [KILN_OP_RELU] = {f_relu, i_relu},
    [KILN_OP_LEAKY_RELU] = {f_leaky_relu, NULL},
    [KILN_OP_CLIP] = {f_clip, i_clip},
    [KILN_OP_SIGMOID] = {f_sigmoid, NULL},
    [KILN_OP_TANH] = {f_tanh, NULL},
    [KILN_OP_ERF] = {f_erf, NULL},
    [KILN_OP_GELU] = {f_gelu, NULL},
    [KILN_OP_HARD_SIGMOID] = {f_hard_sigmoid, NULL},
    [KILN_OP_HARD_SWISH] = {f_hard_swish, NULL},
    [KILN_OP_EXP] = {f_exp, NULL},
    [KILN_OP_LOG] = {f_log, NULL},
    [KILN_OP_SQRT] = {f_sqrt, NULL},
    [KILN_OP_RSQRT] = {f_rsqrt, NULL},
    [KILN_OP_ABS] = {f_abs, i_abs},
    [KILN_OP_NEGATIVE] = {f_negative, i_negative},
    [KILN_OP_FLOOR] = {f_floor, NULL},
    [KILN_OP_CEIL] = {f_ceil, NULL},
};

/* ---- rules ---- */

static kiln_status_t unary_infer_type(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  const kiln_tensor_type_t *input = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &input));
  return kiln_tensor_type_create(relation->arena, input->dtype, input->ndim, input->shape,
                                 out_type);
}

static kiln_status_t unary_check_args(const kiln_kernel_args_t *args) {
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
  if (kiln_tensor_dtype(in) != kiln_tensor_dtype(out) ||
      !kiln_shape_equal(kiln_tensor_ndim(in), kiln_tensor_shape(in), kiln_tensor_ndim(out),
                        kiln_tensor_shape(out))) {
    char in_text[KILN_SHAPE_TEXT_CAPACITY];
    char out_text[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(in), kiln_tensor_shape(in), in_text, sizeof(in_text));
    kiln_shape_format(kiln_tensor_ndim(out), kiln_tensor_shape(out), out_text, sizeof(out_text));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %s %s does not match input %s %s", name,
                       kiln_dtype_name(kiln_tensor_dtype(out)), out_text,
                       kiln_dtype_name(kiln_tensor_dtype(in)), in_text);
  }
  return KILN_OK;
}

static kiln_status_t unary_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(unary_check_args(args));
  const kiln_op_t *op = args->op;
  const unary_rule_t *rule = (unsigned)op->id < KILN_OP_COUNT_ ? &unary_rules[op->id] : NULL;
  if (!rule || !rule->f) {
    return KILN_STATUS(INTERNAL, "%s: no unary scalar function", op->name);
  }
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  int64_t count = kiln_tensor_element_count(args->inputs[0]);
  if (dtype == KILN_DTYPE_FLOAT32) {
    const float *in = kiln_tensor_data(args->inputs[0]);
    float *out = kiln_tensor_data(args->outputs[0]);
    for (int64_t i = 0; i < count; ++i) {
      out[i] = (float)rule->f(in[i], args->attrs);
    }
    return KILN_OK;
  }
  if (dtype == KILN_DTYPE_INT64 && rule->i) {
    const int64_t *in = kiln_tensor_data(args->inputs[0]);
    int64_t *out = kiln_tensor_data(args->outputs[0]);
    for (int64_t i = 0; i < count; ++i) {
      out[i] = rule->i(in[i], args->attrs);
    }
    return KILN_OK;
  }
  return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not take dtype %s", op->name,
                     kiln_dtype_name(dtype));
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
                            .correct_layout = NULL,              \
                            .reference = unary_reference,        \
                            __VA_ARGS__}

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
