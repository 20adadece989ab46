/*
 * Expressions of the loop IR as C expressions; see emit.h.
 *
 * Scalars map to C's operators with the IR's semantics: integer results are
 * cast back to their dtype (the file is compiled with -fwrapv, so wrapping
 * is defined), floordiv/floormod, min/max, the shifts and float-to-int
 * casts call the prelude's helpers, which call base/scalar_ops.h's
 * functions (pasted into the prelude), the ones the interpreter calls;
 * comparisons and logic give int32 0/1. Vectors use
 * the C vector operators where they exist and a lane loop otherwise (see
 * lanes_open); loads are a memcpy when the index is a unit-stride ramp and a
 * lane-by-lane gather otherwise. float16 and bfloat16 are float in
 * registers: loads and stores convert lane by lane with base/scalar_ops.h's
 * functions, and every operation that makes a new narrow value is rounded
 * back to the narrow type (kiln_cg_expr), as the interpreter does.
 */
#include <math.h>
#include <stdio.h>

#include "base/scalar_ops.h"
#include "codegen/c/emit.h"

#define A(...) KILN_RETURN_IF_ERROR(kiln_cg_printf(cg, __VA_ARGS__))

static const char *const arg_names[] = {"_a", "_b", "_c"};

/* "({ T0 _a = <args[0]>; ...; RT _r = {0}; for (_l < lanes) _r[_l] = "; the
 * caller writes the lane's value (arguments as _a[_l] or _a) and closes. */
static kiln_status_t lanes_open(kiln_cg_t *cg, kiln_tir_dtype_t result, int count,
                                const kiln_tir_expr_t *const *args) {
  A("({ ");
  for (int i = 0; i < count; ++i) {
    const char *type = NULL;
    KILN_RETURN_IF_ERROR(kiln_cg_type(cg, args[i]->dtype, &type));
    A("%s %s = ", type, arg_names[i]);
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, args[i]));
    A("; ");
  }
  const char *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, result, &type));
  A("%s _r = {0}; for (int _l = 0; _l < %d; ++_l) _r[_l] = ", type, result.lanes);
  return KILN_OK;
}

static kiln_status_t lanes_close(kiln_cg_t *cg) {
  A("; _r; })");
  return KILN_OK;
}

/* Argument i inside a lane loop. */
static const char *lane(const kiln_tir_expr_t *arg, int i) {
  static const char *const vector_lanes[] = {"_a[_l]", "_b[_l]", "_c[_l]"};
  return arg->dtype.lanes > 1 ? vector_lanes[i] : arg_names[i];
}

static const char *op_text(kiln_tir_expr_kind_t kind) {
  switch (kind) {
  case KILN_TIR_EXPR_ADD:
    return "+";
  case KILN_TIR_EXPR_SUB:
    return "-";
  case KILN_TIR_EXPR_MUL:
    return "*";
  case KILN_TIR_EXPR_DIV:
    return "/";
  case KILN_TIR_EXPR_EQ:
    return "==";
  case KILN_TIR_EXPR_NE:
    return "!=";
  case KILN_TIR_EXPR_LT:
    return "<";
  case KILN_TIR_EXPR_LE:
    return "<=";
  case KILN_TIR_EXPR_GT:
    return ">";
  case KILN_TIR_EXPR_GE:
    return ">=";
  case KILN_TIR_EXPR_AND:
    return "&&";
  case KILN_TIR_EXPR_OR:
    return "||";
  case KILN_TIR_EXPR_FLOOR_DIV:
    return "floordiv";
  case KILN_TIR_EXPR_FLOOR_MOD:
    return "floormod";
  case KILN_TIR_EXPR_MIN:
    return "min";
  case KILN_TIR_EXPR_MAX:
    return "max";
  case KILN_TIR_EXPR_INT_IMM:
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
  case KILN_TIR_EXPR_NOT:
  case KILN_TIR_EXPR_SELECT:
  case KILN_TIR_EXPR_CAST:
  case KILN_TIR_EXPR_BUFFER_LOAD:
  case KILN_TIR_EXPR_RAMP:
  case KILN_TIR_EXPR_BROADCAST:
  case KILN_TIR_EXPR_CALL:
  case KILN_TIR_EXPR_LET:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return "?";
}

static int is_helper(kiln_tir_expr_kind_t kind) {
  return kind == KILN_TIR_EXPR_FLOOR_DIV || kind == KILN_TIR_EXPR_FLOOR_MOD ||
         kind == KILN_TIR_EXPR_MIN || kind == KILN_TIR_EXPR_MAX;
}

static int is_compare(kiln_tir_expr_kind_t kind) {
  return kind >= KILN_TIR_EXPR_EQ && kind <= KILN_TIR_EXPR_GE;
}

static kiln_status_t emit_operands(kiln_cg_t *cg, const kiln_tir_binary_t *n, const char *op) {
  A("(");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->a));
  A(" %s ", op);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->b));
  A(")");
  return KILN_OK;
}

static kiln_status_t emit_scalar_binary(kiln_cg_t *cg, const kiln_tir_binary_t *n) {
  kiln_tir_expr_kind_t kind = n->base.kind;
  const char *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->base.dtype, &type));
  if (is_helper(kind)) {
    A("kiln_%s_%s(", op_text(kind), kiln_cg_tag(n->a->dtype.base));
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->a));
    A(", ");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->b));
    A(")");
    return KILN_OK;
  }
  A("((%s)", type);
  KILN_RETURN_IF_ERROR(emit_operands(cg, n, op_text(kind)));
  A(")");
  return KILN_OK;
}

static kiln_status_t emit_vector_binary(kiln_cg_t *cg, const kiln_tir_binary_t *n) {
  kiln_tir_expr_kind_t kind = n->base.kind;
  if (is_helper(kind)) {
    const kiln_tir_expr_t *args[] = {n->a, n->b};
    KILN_RETURN_IF_ERROR(lanes_open(cg, n->base.dtype, 2, args));
    A("kiln_%s_%s(_a[_l], _b[_l])", op_text(kind), kiln_cg_tag(n->a->dtype.base));
    return lanes_close(cg);
  }
  if (is_compare(kind)) {
    A("(-__builtin_convertvector(");
    KILN_RETURN_IF_ERROR(emit_operands(cg, n, op_text(kind)));
    A(", kiln_bx%d))", kiln_cg_padded_lanes(n->base.dtype.lanes));
    return KILN_OK;
  }
  const char *op = kind == KILN_TIR_EXPR_AND ? "&" : kind == KILN_TIR_EXPR_OR ? "|" : op_text(kind);
  return emit_operands(cg, n, op);
}

/* A float to an integer through the prelude's kiln_from_float_<dtype>
 * (base/scalar_ops.h: truncated, saturated, NaN to 0), lane by lane. */
static kiln_status_t emit_float_to_int(kiln_cg_t *cg, const kiln_tir_cast_t *n) {
  const char *tag = kiln_cg_tag(n->base.dtype.base);
  if (n->base.dtype.lanes == 1) {
    A("kiln_from_float_%s(", tag);
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
    A(")");
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(lanes_open(cg, n->base.dtype, 1, &n->value));
  A("kiln_from_float_%s(_a[_l])", tag);
  return lanes_close(cg);
}

static kiln_status_t emit_cast(kiln_cg_t *cg, const kiln_tir_cast_t *n) {
  kiln_tir_dtype_t to = n->base.dtype;
  if (kiln_tir_dtype_is_float(n->value->dtype) && kiln_tir_dtype_is_int(to)) {
    return emit_float_to_int(cg, n);
  }
  const char *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, to, &type));
  int to_bool = kiln_tir_dtype_is_bool(to);
  if (to.lanes == 1) {
    A(to_bool ? "((int32_t)(" : "((%s)(", type);
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
    A(to_bool ? " != 0))" : "))");
    return KILN_OK;
  }
  A(to_bool ? "(-__builtin_convertvector((" : "__builtin_convertvector((");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
  if (to_bool) {
    A(" != 0), %s))", type);
  } else {
    A("), %s)", type);
  }
  return KILN_OK;
}

static kiln_status_t emit_select(kiln_cg_t *cg, const kiln_tir_select_t *n) {
  if (n->condition->dtype.lanes == 1) {
    A("(");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->condition));
    A(" ? ");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->true_value));
    A(" : ");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->false_value));
    A(")");
    return KILN_OK;
  }
  const kiln_tir_expr_t *args[] = {n->condition, n->true_value, n->false_value};
  KILN_RETURN_IF_ERROR(lanes_open(cg, n->base.dtype, 3, args));
  A("%s ? %s : %s", lane(args[0], 0), lane(args[1], 1), lane(args[2], 2));
  return lanes_close(cg);
}

/* The intrinsic on lane values a, b, c of scalar type `type`. */
static kiln_status_t emit_call_text(kiln_cg_t *cg, const kiln_tir_call_t *n, const char *type,
                                    const char *a, const char *b, const char *c) {
  kiln_dtype_t base = n->base.dtype.base;
  const char *f = base == KILN_DTYPE_FLOAT32 || kiln_cg_is_narrow(base) ? "f" : "";
  const char *name = kiln_tir_intrinsic_name(n->op);
  switch (n->op) {
  case KILN_TIR_INTRINSIC_RSQRT:
    A("((%s)1 / sqrt%s(%s))", type, f, a);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_SIGMOID:
    A("((%s)1 / ((%s)1 + exp%s(-%s)))", type, type, f, a);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_ROUND:
    A("nearbyint%s(%s)", f, a);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_SHIFT_LEFT:
    A("kiln_shl_%s(%s, %s)", kiln_cg_tag(n->base.dtype.base), a, b);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_SHIFT_RIGHT:
    A("kiln_shr_%s(%s, %s)", kiln_cg_tag(n->base.dtype.base), a, b);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_BITWISE_XOR:
    A("((%s)(%s ^ %s))", type, a, b);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_POW:
  case KILN_TIR_INTRINSIC_FMOD:
  case KILN_TIR_INTRINSIC_COPYSIGN:
    A("%s%s(%s, %s)", name, f, a, b);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_FMA:
    A("fma%s(%s, %s, %s)", f, a, b, c);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_EXP:
  case KILN_TIR_INTRINSIC_LOG:
  case KILN_TIR_INTRINSIC_SQRT:
  case KILN_TIR_INTRINSIC_ERF:
  case KILN_TIR_INTRINSIC_TANH:
  case KILN_TIR_INTRINSIC_FABS:
  case KILN_TIR_INTRINSIC_FLOOR:
  case KILN_TIR_INTRINSIC_CEIL:
  case KILN_TIR_INTRINSIC_TRUNC:
  case KILN_TIR_INTRINSIC_SIN:
  case KILN_TIR_INTRINSIC_COS:
  case KILN_TIR_INTRINSIC_TAN:
  case KILN_TIR_INTRINSIC_ASIN:
  case KILN_TIR_INTRINSIC_ACOS:
  case KILN_TIR_INTRINSIC_ATAN:
  case KILN_TIR_INTRINSIC_SINH:
  case KILN_TIR_INTRINSIC_COSH:
  case KILN_TIR_INTRINSIC_ASINH:
  case KILN_TIR_INTRINSIC_ACOSH:
  case KILN_TIR_INTRINSIC_ATANH:
  case KILN_TIR_INTRINSIC_LOG1P:
  case KILN_TIR_INTRINSIC_EXPM1:
    A("%s%s(%s)", name, f, a);
    return KILN_OK;
  case KILN_TIR_INTRINSIC_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "%s: invalid intrinsic %d", cg->func->name, (int)n->op);
}

static kiln_status_t emit_call(kiln_cg_t *cg, const kiln_tir_call_t *n) {
  const char *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, kiln_tir_scalar(n->base.dtype.base), &type));
  KILN_RETURN_IF_ERROR(lanes_open(cg, n->base.dtype, n->num_args, n->args));
  KILN_RETURN_IF_ERROR(emit_call_text(cg, n, type, lane(n->args[0], 0),
                                      n->num_args > 1 ? lane(n->args[1], 1) : "0",
                                      n->num_args > 2 ? lane(n->args[2], 2) : "0"));
  return lanes_close(cg);
}

static kiln_status_t emit_scalar_call(kiln_cg_t *cg, const kiln_tir_call_t *n) {
  const char *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->base.dtype, &type));
  A("({ ");
  for (int i = 0; i < n->num_args; ++i) {
    A("%s %s = ", type, arg_names[i]);
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->args[i]));
    A("; ");
  }
  A("(%s)", type);
  KILN_RETURN_IF_ERROR(emit_call_text(cg, n, type, "_a", "_b", "_c"));
  A("; })");
  return KILN_OK;
}

static kiln_status_t emit_int_imm(kiln_cg_t *cg, const kiln_tir_int_imm_t *n) {
  const char *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->base.dtype, &type));
  if (n->value == INT64_MIN) {
    A("((%s)(-INT64_C(9223372036854775807) - 1))", type);
  } else if (n->value >= -2147483647 && n->value <= 2147483647) {
    A("((%s)%lld)", type, (long long)n->value);
  } else {
    A("((%s)INT64_C(%lld))", type, (long long)n->value);
  }
  return KILN_OK;
}

static kiln_status_t emit_float_imm(kiln_cg_t *cg, const kiln_tir_float_imm_t *n) {
  kiln_dtype_t base = n->base.dtype.base;
  int is_f32 = base == KILN_DTYPE_FLOAT32 || kiln_cg_is_narrow(base);
  const char *f = is_f32 ? "f" : "";
  double v = base == KILN_DTYPE_FLOAT16
                 ? kiln_scalar_float16_to_float32(kiln_scalar_float32_to_float16((float)n->value))
             : base == KILN_DTYPE_BFLOAT16
                 ? kiln_scalar_bfloat16_to_float32(kiln_scalar_float32_to_bfloat16((float)n->value))
                 : n->value;
  if (isnan(v)) {
    A("__builtin_nan%s(\"\")", f);
  } else if (isinf(v)) {
    A("(%s__builtin_inf%s())", v < 0 ? "-" : "", f);
  } else {
    A("(%a%s)", v, f);
  }
  return KILN_OK;
}

/* ramp: the lane numbers times the stride plus the start, as vector
 * operations (C converts the scalar operands to vectors). */
static kiln_status_t emit_ramp(kiln_cg_t *cg, const kiln_tir_ramp_t *n) {
  const char *type = NULL, *vector = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, kiln_tir_scalar(n->base.dtype.base), &type));
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->base.dtype, &vector));
  A("((%s){", vector);
  for (int l = 0; l < n->base.dtype.lanes; ++l) {
    A(l ? ", %d" : "%d", l);
  }
  A("} * (%s)", type);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->stride));
  A(" + (%s)", type);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->start));
  A(")");
  return KILN_OK;
}

static kiln_status_t emit_broadcast(kiln_cg_t *cg, const kiln_tir_broadcast_t *n) {
  const char *type = NULL, *vector = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, kiln_tir_scalar(n->base.dtype.base), &type));
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->base.dtype, &vector));
  A("((%s){0} + (%s)", vector, type);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
  A(")");
  return KILN_OK;
}

static kiln_status_t emit_let(kiln_cg_t *cg, const kiln_tir_let_t *n) {
  const char *type = NULL, *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->var->base.dtype, &type));
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, n->var, &name));
  A("({ %s %s = ", type, name);
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->value));
  A("; ");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->body));
  A("; })");
  return KILN_OK;
}

/* Stride of dim d: the buffer's, else the product of the later dims. */
static kiln_status_t emit_stride(kiln_cg_t *cg, const kiln_tir_buffer_t *buffer, int d) {
  if (buffer->strides) {
    A("(int64_t)");
    return kiln_cg_expr(cg, buffer->strides[d]);
  }
  A("(int64_t)1");
  for (int k = d + 1; k < buffer->ndim; ++k) {
    A(" * (int64_t)");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, buffer->shape[k]));
  }
  return KILN_OK;
}

kiln_status_t kiln_cg_offset(kiln_cg_t *cg, const kiln_tir_buffer_t *buffer, int num_indices,
                             const kiln_tir_expr_t *const *indices, int use_temps) {
  A("(");
  if (buffer->elem_offset) {
    A("(int64_t)");
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, buffer->elem_offset));
  } else {
    A("(int64_t)0");
  }
  for (int d = 0; d < num_indices; ++d) {
    A(" + (int64_t)");
    if (use_temps) {
      A("_i%d%s", d, indices[d]->dtype.lanes > 1 ? "[_l]" : "");
    } else {
      KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, indices[d]));
    }
    if (num_indices == buffer->ndim) {
      A(" * (");
      KILN_RETURN_IF_ERROR(emit_stride(cg, buffer, d));
      A(")");
    }
  }
  A(")");
  return KILN_OK;
}

static kiln_status_t emit_scalar_load(kiln_cg_t *cg, const kiln_tir_buffer_load_t *n,
                                      const char *data) {
  kiln_dtype_t dtype = n->buffer->dtype;
  if (kiln_cg_is_narrow(dtype)) {
    A("kiln_scalar_%s_to_float32(((const uint16_t *)%s)[", kiln_cg_narrow_name(dtype), data);
    KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, n->buffer, n->num_indices, n->indices, 0));
    A("])");
    return KILN_OK;
  }
  int is_bool = dtype == KILN_DTYPE_BOOL;
  A(is_bool ? "((int32_t)(((const uint8_t *)%s)[" : "(((const %s *)%s)[",
    is_bool ? data : kiln_cg_mem_type(n->buffer->dtype), data);
  KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, n->buffer, n->num_indices, n->indices, 0));
  A(is_bool ? "] != 0))" : "])");
  return KILN_OK;
}

/* A one-index load or store whose index is ramp(start, 1): contiguous. */
static int is_contiguous(const kiln_tir_buffer_t *buffer, int num_indices,
                         const kiln_tir_expr_t *const *indices) {
  int64_t stride = 0;
  if (num_indices != 1 || buffer->dtype == KILN_DTYPE_BOOL || kiln_cg_is_narrow(buffer->dtype) ||
      indices[0]->kind != KILN_TIR_EXPR_RAMP) {
    return 0;
  }
  if (buffer->ndim == 1 && buffer->strides &&
      !(kiln_tir_expr_as_int(buffer->strides[0], &stride) && stride == 1)) {
    return 0;
  }
  const kiln_tir_ramp_t *ramp = (const void *)indices[0];
  return kiln_tir_expr_as_int(ramp->stride, &stride) && stride == 1;
}

kiln_status_t kiln_cg_index_temps(kiln_cg_t *cg, int num_indices,
                                  const kiln_tir_expr_t *const *indices) {
  for (int d = 0; d < num_indices; ++d) {
    const char *type = NULL;
    KILN_RETURN_IF_ERROR(kiln_cg_type(cg, indices[d]->dtype, &type));
    A("%s _i%d = ", type, d);
    KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, indices[d]));
    A("; ");
  }
  return KILN_OK;
}

static kiln_status_t emit_vector_load(kiln_cg_t *cg, const kiln_tir_buffer_load_t *n,
                                      const char *data) {
  const char *type = NULL, *mem = kiln_cg_mem_type(n->buffer->dtype);
  int lanes = n->base.dtype.lanes;
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, n->base.dtype, &type));
  if (is_contiguous(n->buffer, n->num_indices, n->indices)) {
    const kiln_tir_ramp_t *ramp = (const void *)n->indices[0];
    A("({ %s _r = {0}; __builtin_memcpy(&_r, (const %s *)%s + ", type, mem, data);
    KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, n->buffer, 1, &ramp->start, 0));
    A(", %d * sizeof(%s)); _r; })", lanes, mem);
    return KILN_OK;
  }
  A("({ ");
  KILN_RETURN_IF_ERROR(kiln_cg_index_temps(cg, n->num_indices, n->indices));
  int narrow = kiln_cg_is_narrow(n->buffer->dtype);
  A("%s _r = {0}; for (int _l = 0; _l < %d; ++_l) _r[_l] = ", type, lanes);
  if (narrow) {
    A("kiln_scalar_%s_to_float32(", kiln_cg_narrow_name(n->buffer->dtype));
  }
  A("((const %s *)%s)[", mem, data);
  KILN_RETURN_IF_ERROR(kiln_cg_offset(cg, n->buffer, n->num_indices, n->indices, 1));
  A(n->buffer->dtype == KILN_DTYPE_BOOL ? "] != 0; _r; })" : narrow ? "]); _r; })" : "]; _r; })");
  return KILN_OK;
}

static kiln_status_t emit_load(kiln_cg_t *cg, const kiln_tir_buffer_load_t *n) {
  const char *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_cg_name(cg, n->buffer->data, &data));
  if (!kiln_cg_mem_type(n->buffer->dtype)) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the C backend does not support %s (buffer %s)",
                       cg->func->name, kiln_dtype_name(n->buffer->dtype), n->buffer->name);
  }
  return n->base.dtype.lanes == 1 ? emit_scalar_load(cg, n, data) : emit_vector_load(cg, n, data);
}

static kiln_status_t emit_not(kiln_cg_t *cg, const kiln_tir_not_t *n) {
  A(n->base.dtype.lanes == 1 ? "((int32_t)!" : "(1 ^ ");
  KILN_RETURN_IF_ERROR(kiln_cg_expr(cg, n->a));
  A(")");
  return KILN_OK;
}

/* Whether `e` computes a new value of a narrow dtype, which is rounded
 * to it (loads, immediates, selects, min and max are exact already). */
static int rounds_narrow(const kiln_tir_expr_t *e) {
  kiln_tir_expr_kind_t k = e->kind;
  if (!kiln_cg_is_narrow(e->dtype.base)) {
    return 0;
  }
  if (k == KILN_TIR_EXPR_CAST) {
    return ((const kiln_tir_cast_t *)e)->value->dtype.base != e->dtype.base;
  }
  return k == KILN_TIR_EXPR_ADD || k == KILN_TIR_EXPR_SUB || k == KILN_TIR_EXPR_MUL ||
         k == KILN_TIR_EXPR_DIV || k == KILN_TIR_EXPR_FLOOR_DIV || k == KILN_TIR_EXPR_FLOOR_MOD ||
         k == KILN_TIR_EXPR_CALL || k == KILN_TIR_EXPR_RAMP;
}

static kiln_status_t emit_node(kiln_cg_t *cg, const kiln_tir_expr_t *e);

kiln_status_t kiln_cg_expr(kiln_cg_t *cg, const kiln_tir_expr_t *e) {
  const char *hoisted = kiln_cg_hoisted_name(cg, e);
  if (hoisted) {
    A("%s", hoisted);
    return KILN_OK;
  }
  if (!rounds_narrow(e)) {
    return emit_node(cg, e);
  }
  const char *name = kiln_cg_narrow_name(e->dtype.base), *type = NULL;
  if (e->dtype.lanes == 1) {
    A("kiln_round_%s(", name);
    KILN_RETURN_IF_ERROR(emit_node(cg, e));
    A(")");
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_cg_type(cg, e->dtype, &type));
  A("({ %s _n = ", type);
  KILN_RETURN_IF_ERROR(emit_node(cg, e));
  A("; for (int _l = 0; _l < %d; ++_l) _n[_l] = kiln_round_%s(_n[_l]); _n; })", e->dtype.lanes,
    name);
  return KILN_OK;
}

static kiln_status_t emit_node(kiln_cg_t *cg, const kiln_tir_expr_t *e) {
  if (kiln_tir_expr_kind_is_binary(e->kind)) {
    const kiln_tir_binary_t *n = (const void *)e;
    return n->a->dtype.lanes == 1 ? emit_scalar_binary(cg, n) : emit_vector_binary(cg, n);
  }
  switch (e->kind) {
  case KILN_TIR_EXPR_INT_IMM:
    return emit_int_imm(cg, (const void *)e);
  case KILN_TIR_EXPR_FLOAT_IMM:
    return emit_float_imm(cg, (const void *)e);
  case KILN_TIR_EXPR_VAR: {
    const char *name = NULL;
    KILN_RETURN_IF_ERROR(kiln_cg_name(cg, (const kiln_tir_var_t *)e, &name));
    A("%s", name);
    return KILN_OK;
  }
  case KILN_TIR_EXPR_NOT:
    return emit_not(cg, (const void *)e);
  case KILN_TIR_EXPR_SELECT:
    return emit_select(cg, (const void *)e);
  case KILN_TIR_EXPR_CAST:
    return emit_cast(cg, (const void *)e);
  case KILN_TIR_EXPR_BUFFER_LOAD:
    return emit_load(cg, (const void *)e);
  case KILN_TIR_EXPR_RAMP:
    return emit_ramp(cg, (const void *)e);
  case KILN_TIR_EXPR_BROADCAST:
    return emit_broadcast(cg, (const void *)e);
  case KILN_TIR_EXPR_CALL:
    return e->dtype.lanes == 1 ? emit_scalar_call(cg, (const void *)e)
                               : emit_call(cg, (const void *)e);
  case KILN_TIR_EXPR_LET:
    return emit_let(cg, (const void *)e);
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "%s: invalid expression kind %d", cg->func->name, (int)e->kind);
}
