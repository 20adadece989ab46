/*
 * Binary elementwise operators with NumPy broadcasting (add, subtract,
 * multiply, divide, power, maximum, minimum and the six comparisons), and
 * where(cond, x, y).
 *
 * The binary operators share everything but a scalar function, so they are
 * one table indexed by operator id: a float function (float32 inputs computed
 * in double and rounded once), an int64 function where the operator takes
 * int64, whether the result is bool (comparisons) and whether bool inputs are
 * allowed (equal, not_equal, which compare them as 0/1). One type relation,
 * one layout rule (broadcast.h's) and one kernel serve them all; the kernel
 * walks the output with the shared broadcast walker. Integer arithmetic wraps
 * on overflow as NumPy's does (done in uint64, so it is defined C); integer
 * division truncates toward zero as C and ONNX do, and a zero divisor is an
 * error rather than a trap. maximum and minimum propagate NaN as NumPy's do.
 *
 * where copies elements of x or y by their byte size, so its kernel takes
 * every dtype.
 */
#include <math.h>
#include <string.h>

#include "op/broadcast.h"
#include "op/op.h"

/* ---- scalar functions ---- */

/* The functions that are one expression of a and b. Integer functions return
 * false when the result is undefined (a zero divisor). */
#define FLOAT_FN_(name, expr)                  \
  static double f_##name(double a, double b) { \
    return (expr);                             \
  }
#define INT_FN_(name, expr)                                  \
  static bool i_##name(int64_t a, int64_t b, int64_t *out) { \
    *out = (expr);                                           \
    return true;                                             \
  }

FLOAT_FN_(add, a + b)
FLOAT_FN_(subtract, a - b)
FLOAT_FN_(multiply, (a * b))
FLOAT_FN_(divide, a / b)
FLOAT_FN_(power, pow(a, b))
FLOAT_FN_(maximum, isnan(a) || isnan(b) ? NAN : (a > b ? a : b))
FLOAT_FN_(minimum, isnan(a) || isnan(b) ? NAN : (a < b ? a : b))
FLOAT_FN_(equal, a == b)
FLOAT_FN_(not_equal, a != b)
FLOAT_FN_(less, a < b)
FLOAT_FN_(less_equal, a <= b)
FLOAT_FN_(greater, a > b)
FLOAT_FN_(greater_equal, a >= b)

/* Arithmetic in uint64 wraps instead of overflowing. */
INT_FN_(add, (int64_t)((uint64_t)a + (uint64_t)b))
INT_FN_(subtract, (int64_t)((uint64_t)a - (uint64_t)b))
INT_FN_(multiply, (int64_t)(((uint64_t)a) * (uint64_t)b))
INT_FN_(maximum, a > b ? a : b)
INT_FN_(minimum, a < b ? a : b)
INT_FN_(equal, a == b)
INT_FN_(not_equal, a != b)
INT_FN_(less, a < b)
INT_FN_(less_equal, a <= b)
INT_FN_(greater, a > b)
INT_FN_(greater_equal, a >= b)

static bool i_divide(int64_t a, int64_t b, int64_t *out) {
  if (b == 0) {
    return false;
  }
  /* INT64_MIN / -1 overflows in C; it wraps to INT64_MIN. */
  *out = b == -1 ? (int64_t)(0u - (uint64_t)a) : a / b;
  return true;
}

typedef double (*binary_float_fn)(double a, double b);
typedef bool (*binary_int_fn)(int64_t a, int64_t b, int64_t *out);

typedef struct binary_rule_t {
  binary_float_fn f;
  binary_int_fn i;   /* NULL: the kernel takes no int64 */
  bool compare;      /* the output is bool */
  bool accepts_bool; /* bool inputs, compared as 0/1 */
} binary_rule_t;

static const binary_rule_t binary_rules[KILN_OP_COUNT_] = {
    [KILN_OP_ADD] = {f_add, i_add, false, false},
    [KILN_OP_SUBTRACT] = {f_subtract, i_subtract, false, false},
    [KILN_OP_MULTIPLY] = {f_multiply, i_multiply, false, false},
    [KILN_OP_DIVIDE] = {f_divide, i_divide, false, false},
    [KILN_OP_POWER] = {f_power, NULL, false, false},
    [KILN_OP_MAXIMUM] = {f_maximum, i_maximum, false, false},
    [KILN_OP_MINIMUM] = {f_minimum, i_minimum, false, false},
    [KILN_OP_EQUAL] = {f_equal, i_equal, true, true},
    [KILN_OP_NOT_EQUAL] = {f_not_equal, i_not_equal, true, true},
    [KILN_OP_LESS] = {f_less, i_less, true, false},
    [KILN_OP_LESS_EQUAL] = {f_less_equal, i_less_equal, true, false},
    [KILN_OP_GREATER] = {f_greater, i_greater, true, false},
    [KILN_OP_GREATER_EQUAL] = {f_greater_equal, i_greater_equal, true, false},
};

static const binary_rule_t *binary_rule(const kiln_op_t *op) {
  const binary_rule_t *rule = (unsigned)op->id < KILN_OP_COUNT_ ? &binary_rules[op->id] : NULL;
  return rule && rule->f ? rule : NULL;
}

/* ---- type relations ---- */

static kiln_status_t dtype_mismatch(const char *name, const char *what, const kiln_tensor_type_t *a,
                                    const kiln_tensor_type_t *b) {
  char a_text[KILN_SHAPE_TEXT_CAPACITY];
  char b_text[KILN_SHAPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: %s have different dtypes: %s %s and %s %s", name, what,
                     kiln_dtype_name(a->dtype), kiln_op_shape_text(a, a_text),
                     kiln_dtype_name(b->dtype), kiln_op_shape_text(b, b_text));
}

static kiln_status_t binary_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  const binary_rule_t *rule = binary_rule(relation->op);
  if (!rule) {
    return KILN_STATUS(INTERNAL, "%s: no binary scalar function", relation->op->name);
  }
  const kiln_tensor_type_t *a = NULL;
  const kiln_tensor_type_t *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 1, &b));
  if (a->dtype != b->dtype) {
    return dtype_mismatch(relation->op->name, "inputs", a, b);
  }
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(kiln_broadcast_infer_shape(relation, 0, 2, &ndim, shape));
  kiln_dtype_t dtype = rule->compare ? KILN_DTYPE_BOOL : a->dtype;
  return kiln_tensor_type_create(relation->arena, dtype, ndim, shape, out_type);
}

static kiln_status_t where_infer_type(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  const char *name = relation->op->name;
  const kiln_tensor_type_t *cond = NULL;
  const kiln_tensor_type_t *x = NULL;
  const kiln_tensor_type_t *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &cond));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 1, &x));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 2, &y));
  if (cond->dtype != KILN_DTYPE_BOOL) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: condition must be bool, got %s %s", name,
                       kiln_dtype_name(cond->dtype), kiln_op_shape_text(cond, text));
  }
  if (x->dtype != y->dtype) {
    return dtype_mismatch(name, "x and y", x, y);
  }
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(kiln_broadcast_infer_shape(relation, 0, 3, &ndim, shape));
  return kiln_tensor_type_create(relation->arena, x->dtype, ndim, shape, out_type);
}

/* ---- kernels ---- */

/* Counts, presence and dtypes of a kernel's tensors: every input but the
 * first `free_inputs` has `dtype`, and the output has `out_dtype`. */
static kiln_status_t check_args(const kiln_kernel_args_t *args, int num_inputs, int free_inputs,
                                kiln_dtype_t dtype, kiln_dtype_t out_dtype) {
  const char *name = args->op->name;
  if (args->num_inputs != num_inputs || args->num_outputs != 1 || !args->outputs[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected %d inputs and 1 output, got %d and %d", name,
                       num_inputs, args->num_inputs, args->num_outputs);
  }
  for (int k = 0; k < num_inputs; ++k) {
    if (!args->inputs[k]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d is missing", name, k);
    }
    if (k >= free_inputs && kiln_tensor_dtype(args->inputs[k]) != dtype) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d is %s, expected %s", name, k,
                         kiln_dtype_name(kiln_tensor_dtype(args->inputs[k])),
                         kiln_dtype_name(dtype));
    }
  }
  kiln_dtype_t actual = kiln_tensor_dtype(args->outputs[0]);
  if (actual != out_dtype) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output is %s, expected %s", name,
                       kiln_dtype_name(actual), kiln_dtype_name(out_dtype));
  }
  return KILN_OK;
}

static void store_float(void *out, kiln_dtype_t dtype, int64_t i, double value) {
  if (dtype == KILN_DTYPE_BOOL) {
    ((uint8_t *)out)[i] = value != 0.0;
  } else {
    ((float *)out)[i] = (float)value;
  }
}

static void store_int(void *out, kiln_dtype_t dtype, int64_t i, int64_t value) {
  if (dtype == KILN_DTYPE_BOOL) {
    ((uint8_t *)out)[i] = value != 0;
  } else {
    ((int64_t *)out)[i] = value;
  }
}

static int64_t load_int(const void *data, kiln_dtype_t dtype, int64_t i) {
  return dtype == KILN_DTYPE_BOOL ? (((const uint8_t *)data)[i] != 0) : ((const int64_t *)data)[i];
}

static kiln_status_t binary_walk_float(const kiln_kernel_args_t *args, const binary_rule_t *rule,
                                       kiln_broadcast_walker_t *walker) {
  const float *a = kiln_tensor_data(args->inputs[0]);
  const float *b = kiln_tensor_data(args->inputs[1]);
  void *out = kiln_tensor_data(args->outputs[0]);
  kiln_dtype_t out_dtype = kiln_tensor_dtype(args->outputs[0]);
  for (int64_t i = 0; i < walker->count; ++i, kiln_broadcast_walker_next(walker)) {
    store_float(out, out_dtype, i, rule->f(a[walker->offsets[0]], b[walker->offsets[1]]));
  }
  return KILN_OK;
}

static kiln_status_t binary_walk_int(const kiln_kernel_args_t *args, const binary_rule_t *rule,
                                     kiln_broadcast_walker_t *walker) {
  const void *a = kiln_tensor_data(args->inputs[0]);
  const void *b = kiln_tensor_data(args->inputs[1]);
  void *out = kiln_tensor_data(args->outputs[0]);
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  kiln_dtype_t out_dtype = kiln_tensor_dtype(args->outputs[0]);
  for (int64_t i = 0; i < walker->count; ++i, kiln_broadcast_walker_next(walker)) {
    int64_t x = load_int(a, dtype, walker->offsets[0]);
    int64_t y = load_int(b, dtype, walker->offsets[1]);
    int64_t value = 0;
    if (!rule->i(x, y, &value)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: division by zero (%lld / %lld at element %lld)",
                         args->op->name, (long long)x, (long long)y, (long long)i);
    }
    store_int(out, out_dtype, i, value);
  }
  return KILN_OK;
}

static kiln_status_t binary_reference(const kiln_kernel_args_t *args) {
  const kiln_op_t *op = args->op;
  const binary_rule_t *rule = binary_rule(op);
  if (!rule) {
    return KILN_STATUS(INTERNAL, "%s: no binary scalar function", op->name);
  }
  if (args->num_inputs < 1 || !args->inputs[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 2 inputs, got none", op->name);
  }
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  KILN_RETURN_IF_ERROR(check_args(args, 2, 0, dtype, rule->compare ? KILN_DTYPE_BOOL : dtype));
  kiln_broadcast_walker_t walker;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_broadcast_walker_initialize_tensors(&walker, args->outputs[0], 2, args->inputs), "%s",
      op->name);
  if (dtype == KILN_DTYPE_FLOAT32) {
    return binary_walk_float(args, rule, &walker);
  }
  if ((dtype == KILN_DTYPE_INT64 && rule->i) || (dtype == KILN_DTYPE_BOOL && rule->accepts_bool)) {
    return binary_walk_int(args, rule, &walker);
  }
  return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not take dtype %s", op->name,
                     kiln_dtype_name(dtype));
}

static kiln_status_t where_reference(const kiln_kernel_args_t *args) {
  const char *name = args->op->name;
  if (args->num_inputs < 2 || !args->inputs[1]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 3 inputs, got %d", name, args->num_inputs);
  }
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[1]);
  KILN_RETURN_IF_ERROR(check_args(args, 3, 1, dtype, dtype));
  if (kiln_tensor_dtype(args->inputs[0]) != KILN_DTYPE_BOOL) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: condition is %s, expected bool", name,
                       kiln_dtype_name(kiln_tensor_dtype(args->inputs[0])));
  }
  kiln_broadcast_walker_t walker;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_broadcast_walker_initialize_tensors(&walker, args->outputs[0], 3, args->inputs), "%s",
      name);
  size_t size = kiln_dtype_size(dtype);
  const uint8_t *cond = kiln_tensor_data(args->inputs[0]);
  const char *x = kiln_tensor_data(args->inputs[1]);
  const char *y = kiln_tensor_data(args->inputs[2]);
  char *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t i = 0; i < walker.count; ++i, kiln_broadcast_walker_next(&walker)) {
    const char *from = cond[walker.offsets[0]] ? x + (size_t)walker.offsets[1] * size
                                               : y + (size_t)walker.offsets[2] * size;
    memcpy(out + (size_t)i * size, from, size);
  }
  return KILN_OK;
}

/* ---- the operators ---- */

#define KILN_BINARY_OP_(symbol, op_name, op_id)                              \
  const kiln_op_t symbol = {.name = op_name,                                 \
                            .id = KILN_OP_##op_id,                           \
                            .min_inputs = 2,                                 \
                            .max_inputs = 2,                                 \
                            .pattern = KILN_OP_PATTERN_BROADCAST,            \
                            .infer_type = binary_infer_type,                 \
                            .correct_layout = kiln_broadcast_correct_layout, \
                            .reference = binary_reference}

KILN_BINARY_OP_(kiln_op_add, "add", ADD);
KILN_BINARY_OP_(kiln_op_subtract, "subtract", SUBTRACT);
KILN_BINARY_OP_(kiln_op_multiply, "multiply", MULTIPLY);
KILN_BINARY_OP_(kiln_op_divide, "divide", DIVIDE);
KILN_BINARY_OP_(kiln_op_power, "power", POWER);
KILN_BINARY_OP_(kiln_op_maximum, "maximum", MAXIMUM);
KILN_BINARY_OP_(kiln_op_minimum, "minimum", MINIMUM);
KILN_BINARY_OP_(kiln_op_equal, "equal", EQUAL);
KILN_BINARY_OP_(kiln_op_not_equal, "not_equal", NOT_EQUAL);
KILN_BINARY_OP_(kiln_op_less, "less", LESS);
KILN_BINARY_OP_(kiln_op_less_equal, "less_equal", LESS_EQUAL);
KILN_BINARY_OP_(kiln_op_greater, "greater", GREATER);
KILN_BINARY_OP_(kiln_op_greater_equal, "greater_equal", GREATER_EQUAL);

const kiln_op_t kiln_op_where = {.name = "where",
                                 .id = KILN_OP_WHERE,
                                 .min_inputs = 3,
                                 .max_inputs = 3,
                                 .pattern = KILN_OP_PATTERN_BROADCAST,
                                 .infer_type = where_infer_type,
                                 .correct_layout = kiln_broadcast_correct_layout,
                                 .reference = where_reference};
