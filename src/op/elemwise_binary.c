/*
 * Binary elementwise operators with NumPy broadcasting (add, subtract,
 * multiply, divide, power, maximum, minimum, mod, floor_mod, the six
 * comparisons, logical_and, logical_or, logical_xor, left_shift and
 * right_shift), and where(cond, x, y).
 *
 * The binary operators share everything but a scalar function, so they are
 * one table indexed by operator id: a float function (every float dtype,
 * computed in double and rounded once to float32 or float64), a signed
 * integer function (int8 to int64, computed in int64 and stored wrapping to
 * the input's width), an unsigned one (uint8 to uint64, in uint64), whether
 * the result is bool (comparisons, logical operators), whether bool inputs
 * are allowed (equal, not_equal, which compare them as 0/1) and whether they
 * are required (the logical operators, checked by the type relation). A NULL
 * function means the kernel does not take that class of dtype. One type
 * relation, one layout rule (broadcast.h's) and one kernel serve them all;
 * the kernel walks the output with the shared broadcast walker and moves
 * elements through kiln_scalar_t (scalar.h). Integer arithmetic wraps on
 * overflow as NumPy's does (done in uint64, so it is defined C); integer
 * division truncates toward zero as C and ONNX do. mod is C's fmod and %
 * (the sign of the dividend), floor_mod Python's % (the sign of the
 * divisor). Integer power wraps; to a negative exponent it is the truncated
 * reciprocal (0 unless the base is 1 or -1). The integer cases C leaves
 * undefined are base/scalar_ops.h's, shared with the loop IR and the
 * compiled code: a zero divisor gives 0 (x / 0, x % 0, 0 ** -1), INT_MIN /
 * -1 wraps, a shift by the width or more gives 0. maximum and minimum
 * propagate NaN as NumPy's do.
 *
 * where copies elements of x or y by their byte size, so its kernel takes
 * every dtype.
 */
#include <math.h>
#include <string.h>

#include "op/broadcast.h"
#include "op/elemwise_compute.h"
#include "op/impl.h"
#include "op/op.h"
#include "runtime/scalar.h"

/* ---- scalar functions ---- */

/* The functions that are one expression of a and b. */
#define FLOAT_FN_(name, expr)                  \
  static double f_##name(double a, double b) { \
    return (expr);                             \
  }
#define INT_FN_(name, expr)                       \
  static int64_t i_##name(int64_t a, int64_t b) { \
    return (expr);                                \
  }
#define UINT_FN_(name, expr)                         \
  static uint64_t u_##name(uint64_t a, uint64_t b) { \
    return (expr);                                   \
  }
/* The same expression on both integer classes. */
#define INTS_FN_(name, expr) INT_FN_(name, expr) UINT_FN_(name, expr)

FLOAT_FN_(add, a + b)
FLOAT_FN_(subtract, a - b)
FLOAT_FN_(multiply, (a * b))
FLOAT_FN_(divide, a / b)
FLOAT_FN_(power, pow(a, b))
FLOAT_FN_(maximum, isnan(a) || isnan(b) ? NAN : (a > b ? a : b))
FLOAT_FN_(minimum, isnan(a) || isnan(b) ? NAN : (a < b ? a : b))
FLOAT_FN_(mod, fmod(a, b))
FLOAT_FN_(equal, a == b)
FLOAT_FN_(not_equal, a != b)
FLOAT_FN_(less, a < b)
FLOAT_FN_(less_equal, a <= b)
FLOAT_FN_(greater, a > b)
FLOAT_FN_(greater_equal, a >= b)

/* Python's float %: fmod moved into the divisor's sign; a zero result takes
 * the divisor's sign too (NumPy). */
static double f_floor_mod(double a, double b) {
  double r = fmod(a, b);
  if (r != 0.0 && (r < 0.0) != (b < 0.0)) {
    return r + b;
  }
  return r == 0.0 ? copysign(0.0, b) : r;
}

/* Arithmetic in uint64 wraps instead of overflowing. */
INT_FN_(add, (int64_t)((uint64_t)a + (uint64_t)b))
INT_FN_(subtract, (int64_t)((uint64_t)a - (uint64_t)b))
INT_FN_(multiply, (int64_t)(((uint64_t)a) * (uint64_t)b))
UINT_FN_(add, a + b)
UINT_FN_(subtract, a - b)
UINT_FN_(multiply, a *b)
INTS_FN_(maximum, a > b ? a : b)
INTS_FN_(minimum, a < b ? a : b)
INTS_FN_(equal, a == b)
INTS_FN_(not_equal, a != b)
INTS_FN_(less, a < b)
INTS_FN_(less_equal, a <= b)
INTS_FN_(greater, a > b)
INTS_FN_(greater_equal, a >= b)
INT_FN_(logical_and, a &&b)
INT_FN_(logical_or, a || b)
INT_FN_(logical_xor, (a != 0) != (b != 0))
/* In uint64, then wrapped by the store: a shift by the width or more gives 0. */
UINT_FN_(left_shift, kiln_scalar_bits_shift_left(a, b > 64 ? 64 : (int64_t)b, 64))
UINT_FN_(right_shift, kiln_scalar_bits_shift_right(a, b > 64 ? 64 : (int64_t)b, 64))

/* The operations C leaves undefined, total as base/scalar_ops.h defines
 * them for every path (x / 0 = 0, INT_MIN / -1 wraps, 0 ** -1 = 0). */
INT_FN_(divide, kiln_scalar_int_divide(a, b))
UINT_FN_(divide, kiln_scalar_uint_divide(a, b))
INT_FN_(mod, kiln_scalar_int_mod(a, b))
INT_FN_(floor_mod, kiln_scalar_int_floor_mod(a, b))
UINT_FN_(mod, kiln_scalar_uint_mod(a, b))
INT_FN_(power, kiln_scalar_int_power(a, b))
UINT_FN_(power, kiln_scalar_uint_power(a, b))

typedef double (*binary_float_fn)(double a, double b);
typedef int64_t (*binary_int_fn)(int64_t a, int64_t b);
typedef uint64_t (*binary_uint_fn)(uint64_t a, uint64_t b);

typedef struct binary_rule_t {
  binary_float_fn f; /* float dtypes; NULL: none */
  binary_int_fn i;   /* signed integer dtypes (and bool inputs); NULL: none */
  binary_uint_fn u;  /* unsigned integer dtypes; NULL: none */
  bool compare;      /* the output is bool */
  bool accepts_bool; /* bool inputs, compared as 0/1 */
  bool bool_only;    /* the inputs must be bool (logical operators) */
} binary_rule_t;

static const binary_rule_t binary_rules[KILN_OP_COUNT_] = {
    [KILN_OP_ADD] = {f_add, i_add, u_add, false, false, false},
    [KILN_OP_SUBTRACT] = {f_subtract, i_subtract, u_subtract, false, false, false},
    [KILN_OP_MULTIPLY] = {f_multiply, i_multiply, u_multiply, false, false, false},
    [KILN_OP_DIVIDE] = {f_divide, i_divide, u_divide, false, false, false},
    [KILN_OP_POWER] = {f_power, i_power, u_power, false, false, false},
    [KILN_OP_MAXIMUM] = {f_maximum, i_maximum, u_maximum, false, false, false},
    [KILN_OP_MINIMUM] = {f_minimum, i_minimum, u_minimum, false, false, false},
    [KILN_OP_MOD] = {f_mod, i_mod, u_mod, false, false, false},
    [KILN_OP_FLOOR_MOD] = {f_floor_mod, i_floor_mod, u_mod, false, false, false},
    [KILN_OP_EQUAL] = {f_equal, i_equal, u_equal, true, true, false},
    [KILN_OP_NOT_EQUAL] = {f_not_equal, i_not_equal, u_not_equal, true, true, false},
    [KILN_OP_LESS] = {f_less, i_less, u_less, true, false, false},
    [KILN_OP_LESS_EQUAL] = {f_less_equal, i_less_equal, u_less_equal, true, false, false},
    [KILN_OP_GREATER] = {f_greater, i_greater, u_greater, true, false, false},
    [KILN_OP_GREATER_EQUAL] = {f_greater_equal, i_greater_equal, u_greater_equal, true, false,
                               false},
    [KILN_OP_LOGICAL_AND] = {NULL, i_logical_and, NULL, true, true, true},
    [KILN_OP_LOGICAL_OR] = {NULL, i_logical_or, NULL, true, true, true},
    [KILN_OP_LOGICAL_XOR] = {NULL, i_logical_xor, NULL, true, true, true},
    [KILN_OP_LEFT_SHIFT] = {NULL, NULL, u_left_shift, false, false, false},
    [KILN_OP_RIGHT_SHIFT] = {NULL, NULL, u_right_shift, false, false, false},
};

static const binary_rule_t *binary_rule(const kiln_op_t *op) {
  const binary_rule_t *rule = (unsigned)op->id < KILN_OP_COUNT_ ? &binary_rules[op->id] : NULL;
  return rule && (rule->f || rule->i || rule->u) ? rule : NULL;
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
  if (rule->bool_only && a->dtype != KILN_DTYPE_BOOL) {
    char a_text[KILN_SHAPE_TEXT_CAPACITY];
    char b_text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: inputs must be bool, got %s %s and %s %s",
                       relation->op->name, kiln_dtype_name(a->dtype), kiln_op_shape_text(a, a_text),
                       kiln_dtype_name(b->dtype), kiln_op_shape_text(b, b_text));
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

/* The rule's function for one class of inputs, or false when it has none. */
static bool binary_takes(const binary_rule_t *rule, kiln_scalar_class_t class) {
  switch (class) {
  case KILN_SCALAR_CLASS_FLOAT:
    return rule->f != NULL;
  case KILN_SCALAR_CLASS_SIGNED:
    return rule->i != NULL && !rule->bool_only;
  case KILN_SCALAR_CLASS_UNSIGNED:
    return rule->u != NULL;
  case KILN_SCALAR_CLASS_BOOL:
    return rule->accepts_bool;
  case KILN_SCALAR_CLASS_NONE:
    break;
  }
  return false;
}

/* a op b in the class of the inputs. */
static kiln_scalar_t binary_apply(const binary_rule_t *rule, kiln_scalar_t a, kiln_scalar_t b) {
  if (a.is_float) {
    return kiln_scalar_float(rule->f(a.f, b.f));
  }
  return a.is_unsigned ? kiln_scalar_uint(rule->u(a.u, b.u)) : kiln_scalar_int(rule->i(a.i, b.i));
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
  if (!binary_takes(rule, kiln_scalar_class(dtype))) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not take dtype %s", op->name,
                       kiln_dtype_name(dtype));
  }
  kiln_broadcast_walker_t walker;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_broadcast_walker_initialize_tensors(&walker, args->outputs[0], 2, args->inputs), "%s",
      op->name);
  kiln_scalar_kind_t kind = kiln_scalar_kind(dtype);
  kiln_scalar_kind_t out_kind = kiln_scalar_kind(kiln_tensor_dtype(args->outputs[0]));
  const void *a = kiln_tensor_data(args->inputs[0]);
  const void *b = kiln_tensor_data(args->inputs[1]);
  void *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t i = 0; i < walker.count; ++i, kiln_broadcast_walker_next(&walker)) {
    kiln_scalar_t x = kiln_scalar_load(kind, a, walker.offsets[0]);
    kiln_scalar_t y = kiln_scalar_load(kind, b, walker.offsets[1]);
    kiln_scalar_store(out_kind, out, i, binary_apply(rule, x, y));
  }
  return KILN_OK;
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

#define KILN_BINARY_OP_(symbol, op_name, op_id)                        \
  const kiln_op_t symbol = {                                           \
      .name = op_name,                                                 \
      .id = KILN_OP_##op_id,                                           \
      .min_inputs = 2,                                                 \
      .max_inputs = 2,                                                 \
      .pattern = KILN_OP_PATTERN_BROADCAST,                            \
      .infer_type = binary_infer_type,                                 \
      .symbolic_dims = true,                                           \
      .correct_layout = kiln_broadcast_correct_layout,                 \
  };                                                                   \
  const kiln_op_impl_t symbol##_impl = {.reference = binary_reference, \
                                        .compute = kiln_compute_binary}

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
KILN_BINARY_OP_(kiln_op_mod, "mod", MOD);
KILN_BINARY_OP_(kiln_op_floor_mod, "floor_mod", FLOOR_MOD);
KILN_BINARY_OP_(kiln_op_logical_and, "logical_and", LOGICAL_AND);
KILN_BINARY_OP_(kiln_op_logical_or, "logical_or", LOGICAL_OR);
KILN_BINARY_OP_(kiln_op_logical_xor, "logical_xor", LOGICAL_XOR);
KILN_BINARY_OP_(kiln_op_left_shift, "left_shift", LEFT_SHIFT);
KILN_BINARY_OP_(kiln_op_right_shift, "right_shift", RIGHT_SHIFT);

const kiln_op_t kiln_op_where = {
    .name = "where",
    .id = KILN_OP_WHERE,
    .min_inputs = 3,
    .max_inputs = 3,
    .pattern = KILN_OP_PATTERN_BROADCAST,
    .infer_type = where_infer_type,
    .symbolic_dims = true,
    .correct_layout = kiln_broadcast_correct_layout,
};

const kiln_op_impl_t kiln_op_where_impl = {
    .reference = where_reference,
    .compute = kiln_compute_where,
};
