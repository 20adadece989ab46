/*
 * Loop-IR expressions: dtypes, names, the checking constructors and
 * structural equality; see tir.h.
 *
 * Each constructor checks its operands first and allocates last, so a
 * rejected node costs no arena space. Error messages start with the node's
 * kind name and spell the dtypes involved.
 */
#include <stdio.h>
#include <string.h>

#include "tir/functor.h"
#include "tir/tir.h"

kiln_tir_dtype_t kiln_tir_scalar(kiln_dtype_t base) {
  return kiln_tir_vector(base, 1);
}

kiln_tir_dtype_t kiln_tir_vector(kiln_dtype_t base, int lanes) {
  kiln_tir_dtype_t dtype = {base, lanes};
  return dtype;
}

int kiln_tir_dtype_equal(kiln_tir_dtype_t a, kiln_tir_dtype_t b) {
  return a.base == b.base && a.lanes == b.lanes;
}

int kiln_tir_dtype_is_int(kiln_tir_dtype_t dtype) {
  DLDataType dl = kiln_dtype_to_dl(dtype.base);
  return dtype.base != KILN_DTYPE_BOOL && (dl.code == kDLInt || dl.code == kDLUInt) && dl.bits > 0;
}

int kiln_tir_dtype_is_float(kiln_tir_dtype_t dtype) {
  DLDataType dl = kiln_dtype_to_dl(dtype.base);
  return (dl.code == kDLFloat || dl.code == kDLBfloat) && dl.bits > 0;
}

int kiln_tir_dtype_is_bool(kiln_tir_dtype_t dtype) {
  return dtype.base == KILN_DTYPE_BOOL;
}

const char *kiln_tir_dtype_format(kiln_tir_dtype_t dtype, char buffer[24]) {
  if (dtype.lanes == 1) {
    snprintf(buffer, 24, "%s", kiln_dtype_name(dtype.base));
  } else {
    snprintf(buffer, 24, "%sx%d", kiln_dtype_name(dtype.base), dtype.lanes);
  }
  return buffer;
}

static const char *const expr_kind_names[] = {
#define KILN_TIR_EXPR_KIND_NAME_(e, name) name,
    KILN_TIR_EXPR_KIND_LIST(KILN_TIR_EXPR_KIND_NAME_)
#undef KILN_TIR_EXPR_KIND_NAME_
};

const char *kiln_tir_expr_kind_name(kiln_tir_expr_kind_t kind) {
  return (unsigned)kind < KILN_TIR_EXPR_KIND_COUNT_ ? expr_kind_names[kind] : "invalid";
}

int kiln_tir_expr_kind_is_binary(kiln_tir_expr_kind_t kind) {
  return kind >= KILN_TIR_EXPR_ADD && kind <= KILN_TIR_EXPR_OR;
}

static const struct {
  const char *name;
  int arity;
  kiln_tir_intrinsic_class_t cls;
} intrinsics[] = {
#define KILN_TIR_INTRINSIC_ROW_(e, name, arity, cls) {name, arity, KILN_TIR_INTRINSIC_CLASS_##cls},
    KILN_TIR_INTRINSIC_LIST(KILN_TIR_INTRINSIC_ROW_)
#undef KILN_TIR_INTRINSIC_ROW_
};

const char *kiln_tir_intrinsic_name(kiln_tir_intrinsic_t op) {
  return (unsigned)op < KILN_TIR_INTRINSIC_COUNT_ ? intrinsics[op].name : "invalid";
}

int kiln_tir_intrinsic_arity(kiln_tir_intrinsic_t op) {
  return (unsigned)op < KILN_TIR_INTRINSIC_COUNT_ ? intrinsics[op].arity : 0;
}

kiln_tir_intrinsic_class_t kiln_tir_intrinsic_class(kiln_tir_intrinsic_t op) {
  return (unsigned)op < KILN_TIR_INTRINSIC_COUNT_ ? intrinsics[op].cls
                                                  : KILN_TIR_INTRINSIC_CLASS_FLOAT;
}

/* ---- helpers ---- */

static kiln_status_t check_dtype(const char *what, kiln_tir_dtype_t dtype) {
  if ((unsigned)dtype.base >= KILN_DTYPE_COUNT_ || dtype.lanes < 1 ||
      dtype.lanes > KILN_TIR_MAX_LANES) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: invalid dtype (base %d, %d lanes)", what,
                       (int)dtype.base, dtype.lanes);
  }
  return KILN_OK;
}

static kiln_status_t check_operand(const char *what, const kiln_tir_expr_t *expr) {
  if (!expr) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: operand is null", what);
  }
  return KILN_OK;
}

static kiln_status_t allocate_expr(kiln_arena_t *arena, size_t size, kiln_tir_expr_kind_t kind,
                                   kiln_tir_dtype_t dtype, void **out_node) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(arena, size, _Alignof(max_align_t), out_node));
  kiln_tir_expr_t *header = *out_node;
  header->kind = kind;
  header->dtype = dtype;
  return KILN_OK;
}

static kiln_status_t copy_exprs(kiln_arena_t *arena, int count, const kiln_tir_expr_t *const *in,
                                const kiln_tir_expr_t *const **out) {
  const kiln_tir_expr_t **copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(count > 0 ? count : 0),
                                                 sizeof(*copy), _Alignof(max_align_t),
                                                 (void **)&copy));
  for (int i = 0; i < count; ++i) {
    copy[i] = in[i];
  }
  *out = copy;
  return KILN_OK;
}

/* ---- constructors ---- */

void kiln_tir_dtype_int_range(kiln_dtype_t base, int64_t *out_min, int64_t *out_max) {
  DLDataType dl = kiln_dtype_to_dl(base);
  if (base == KILN_DTYPE_BOOL) {
    *out_min = 0;
    *out_max = 1;
  } else if (dl.code == kDLInt) {
    *out_max = dl.bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (dl.bits - 1)) - 1);
    *out_min = -*out_max - 1;
  } else {
    *out_min = 0;
    *out_max = dl.bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << dl.bits) - 1);
  }
}

kiln_status_t kiln_tir_int_imm_create(kiln_arena_t *arena, kiln_tir_dtype_t dtype, int64_t value,
                                      const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_dtype("IntImm", dtype));
  char text[24];
  if ((!kiln_tir_dtype_is_int(dtype) && !kiln_tir_dtype_is_bool(dtype)) || dtype.lanes != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "IntImm: dtype %s is not a scalar integer or bool",
                       kiln_tir_dtype_format(dtype, text));
  }
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(dtype.base, &lo, &hi);
  if (value < lo || value > hi) {
    return KILN_STATUS(OUT_OF_RANGE, "IntImm: %lld does not fit %s", (long long)value,
                       kiln_tir_dtype_format(dtype, text));
  }
  kiln_tir_int_imm_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_INT_IMM, dtype, (void **)&node));
  node->value = value;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_float_imm_create(kiln_arena_t *arena, kiln_tir_dtype_t dtype, double value,
                                        const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_dtype("FloatImm", dtype));
  char text[24];
  if (!kiln_tir_dtype_is_float(dtype) || dtype.lanes != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "FloatImm: dtype %s is not a scalar float",
                       kiln_tir_dtype_format(dtype, text));
  }
  kiln_tir_float_imm_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_FLOAT_IMM, dtype, (void **)&node));
  node->value = dtype.base == KILN_DTYPE_FLOAT32 ? (double)(float)value : value;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_var_create(kiln_arena_t *arena, const char *name, kiln_tir_dtype_t dtype,
                                  const kiln_tir_var_t **out_var) {
  *out_var = NULL;
  KILN_RETURN_IF_ERROR(check_dtype("Var", dtype));
  if (!name || !name[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "Var: empty name");
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &copy));
  kiln_tir_var_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_VAR, dtype, (void **)&node));
  node->name = copy;
  *out_var = node;
  return KILN_OK;
}

/* Which operand dtypes a binary kind accepts, and what it yields. */
static kiln_status_t binary_result(kiln_tir_expr_kind_t kind, kiln_tir_dtype_t t,
                                   kiln_tir_dtype_t *out_dtype) {
  const char *name = kiln_tir_expr_kind_name(kind);
  char text[24];
  int is_int = kiln_tir_dtype_is_int(t), is_float = kiln_tir_dtype_is_float(t);
  switch (kind) {
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
    if (!is_int && !is_float) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: operands must be numbers, not %s", name,
                         kiln_tir_dtype_format(t, text));
    }
    *out_dtype = t;
    return KILN_OK;
  case KILN_TIR_EXPR_DIV:
    if (!is_float) {
      return KILN_STATUS(INVALID_ARGUMENT, "Div: operands must be floats, not %s (use FloorDiv)",
                         kiln_tir_dtype_format(t, text));
    }
    *out_dtype = t;
    return KILN_OK;
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
    if (!is_int) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: operands must be integers, not %s", name,
                         kiln_tir_dtype_format(t, text));
    }
    *out_dtype = t;
    return KILN_OK;
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
    *out_dtype = kiln_tir_vector(KILN_DTYPE_BOOL, t.lanes);
    return KILN_OK;
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
    if (!kiln_tir_dtype_is_bool(t)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: operands must be bool, not %s", name,
                         kiln_tir_dtype_format(t, text));
    }
    *out_dtype = t;
    return KILN_OK;
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
  return KILN_STATUS(INVALID_ARGUMENT, "binary: %s is not a binary kind", name);
}

kiln_status_t kiln_tir_binary_create(kiln_arena_t *arena, kiln_tir_expr_kind_t kind,
                                     const kiln_tir_expr_t *a, const kiln_tir_expr_t *b,
                                     const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  const char *name = kiln_tir_expr_kind_name(kind);
  KILN_RETURN_IF_ERROR(check_operand(name, a));
  KILN_RETURN_IF_ERROR(check_operand(name, b));
  if (!kiln_tir_dtype_equal(a->dtype, b->dtype)) {
    char ta[24], tb[24];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: operand dtypes differ: %s and %s", name,
                       kiln_tir_dtype_format(a->dtype, ta), kiln_tir_dtype_format(b->dtype, tb));
  }
  kiln_tir_dtype_t dtype = a->dtype;
  KILN_RETURN_IF_ERROR(binary_result(kind, a->dtype, &dtype));
  kiln_tir_binary_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_expr(arena, sizeof(*node), kind, dtype, (void **)&node));
  node->a = a;
  node->b = b;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_not_create(kiln_arena_t *arena, const kiln_tir_expr_t *a,
                                  const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_operand("Not", a));
  if (!kiln_tir_dtype_is_bool(a->dtype)) {
    char text[24];
    return KILN_STATUS(INVALID_ARGUMENT, "Not: operand must be bool, not %s",
                       kiln_tir_dtype_format(a->dtype, text));
  }
  kiln_tir_not_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_NOT, a->dtype, (void **)&node));
  node->a = a;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_select_create(kiln_arena_t *arena, const kiln_tir_expr_t *condition,
                                     const kiln_tir_expr_t *true_value,
                                     const kiln_tir_expr_t *false_value,
                                     const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_operand("Select", condition));
  KILN_RETURN_IF_ERROR(check_operand("Select", true_value));
  KILN_RETURN_IF_ERROR(check_operand("Select", false_value));
  char ta[24], tb[24];
  if (!kiln_tir_dtype_equal(true_value->dtype, false_value->dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "Select: value dtypes differ: %s and %s",
                       kiln_tir_dtype_format(true_value->dtype, ta),
                       kiln_tir_dtype_format(false_value->dtype, tb));
  }
  if (!kiln_tir_dtype_is_bool(condition->dtype) ||
      (condition->dtype.lanes != 1 && condition->dtype.lanes != true_value->dtype.lanes)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "Select: condition must be bool (scalar or %d lanes), not %s",
                       true_value->dtype.lanes, kiln_tir_dtype_format(condition->dtype, ta));
  }
  kiln_tir_select_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_SELECT, true_value->dtype, (void **)&node));
  node->condition = condition;
  node->true_value = true_value;
  node->false_value = false_value;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_cast_create(kiln_arena_t *arena, kiln_tir_dtype_t dtype,
                                   const kiln_tir_expr_t *value, const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_dtype("Cast", dtype));
  KILN_RETURN_IF_ERROR(check_operand("Cast", value));
  if (dtype.lanes != value->dtype.lanes) {
    char ta[24], tb[24];
    return KILN_STATUS(INVALID_ARGUMENT, "Cast: lanes differ: %s to %s",
                       kiln_tir_dtype_format(value->dtype, ta), kiln_tir_dtype_format(dtype, tb));
  }
  kiln_tir_cast_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_CAST, dtype, (void **)&node));
  node->value = value;
  *out_expr = &node->base;
  return KILN_OK;
}

/* Checks indices against `buffer` and returns their common lane count. */
static kiln_status_t check_indices(const char *what, const kiln_tir_buffer_t *buffer,
                                   int num_indices, const kiln_tir_expr_t *const *indices,
                                   int *out_lanes) {
  if (!buffer) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: buffer is null", what);
  }
  if (num_indices < 1 || num_indices > KILN_TIR_MAX_DIMS ||
      (num_indices != buffer->ndim && num_indices != 1)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: buffer %s has %d dims but %d indices were given",
                       what, buffer->name, buffer->ndim, num_indices);
  }
  int lanes = 1;
  for (int i = 0; i < num_indices; ++i) {
    KILN_RETURN_IF_ERROR(check_operand(what, indices[i]));
    char text[24];
    if (!kiln_tir_dtype_is_int(indices[i]->dtype)) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: index %d of buffer %s must be an integer, not %s",
                         what, i, buffer->name, kiln_tir_dtype_format(indices[i]->dtype, text));
    }
    if (indices[i]->dtype.lanes != 1) {
      if (lanes != 1 && lanes != indices[i]->dtype.lanes) {
        return KILN_STATUS(INVALID_ARGUMENT, "%s: indices of buffer %s have different lanes", what,
                           buffer->name);
      }
      lanes = indices[i]->dtype.lanes;
    }
  }
  *out_lanes = lanes;
  return KILN_OK;
}

kiln_status_t kiln_tir_buffer_load_create(kiln_arena_t *arena, const kiln_tir_buffer_t *buffer,
                                          int num_indices, const kiln_tir_expr_t *const *indices,
                                          const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  int lanes = 1;
  KILN_RETURN_IF_ERROR(check_indices("BufferLoad", buffer, num_indices, indices, &lanes));
  const kiln_tir_expr_t *const *copy = NULL;
  KILN_RETURN_IF_ERROR(copy_exprs(arena, num_indices, indices, &copy));
  kiln_tir_buffer_load_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_BUFFER_LOAD,
                                     kiln_tir_vector(buffer->dtype, lanes), (void **)&node));
  node->buffer = buffer;
  node->num_indices = num_indices;
  node->indices = copy;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_ramp_create(kiln_arena_t *arena, const kiln_tir_expr_t *start,
                                   const kiln_tir_expr_t *stride, int lanes,
                                   const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_operand("Ramp", start));
  KILN_RETURN_IF_ERROR(check_operand("Ramp", stride));
  char ta[24], tb[24];
  if (!kiln_tir_dtype_equal(start->dtype, stride->dtype) || !kiln_tir_dtype_is_int(start->dtype) ||
      start->dtype.lanes != 1) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "Ramp: start and stride must be scalar integers of one dtype, not %s and %s",
                       kiln_tir_dtype_format(start->dtype, ta),
                       kiln_tir_dtype_format(stride->dtype, tb));
  }
  if (lanes < 2 || lanes > KILN_TIR_MAX_LANES) {
    return KILN_STATUS(INVALID_ARGUMENT, "Ramp: %d lanes is outside [2, %d]", lanes,
                       KILN_TIR_MAX_LANES);
  }
  kiln_tir_ramp_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_RAMP,
                                     kiln_tir_vector(start->dtype.base, lanes), (void **)&node));
  node->start = start;
  node->stride = stride;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_broadcast_create(kiln_arena_t *arena, const kiln_tir_expr_t *value,
                                        int lanes, const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_operand("Broadcast", value));
  if (value->dtype.lanes != 1) {
    char text[24];
    return KILN_STATUS(INVALID_ARGUMENT, "Broadcast: value must be a scalar, not %s",
                       kiln_tir_dtype_format(value->dtype, text));
  }
  if (lanes < 2 || lanes > KILN_TIR_MAX_LANES) {
    return KILN_STATUS(INVALID_ARGUMENT, "Broadcast: %d lanes is outside [2, %d]", lanes,
                       KILN_TIR_MAX_LANES);
  }
  kiln_tir_broadcast_t *node = NULL;
  KILN_RETURN_IF_ERROR(allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_BROADCAST,
                                     kiln_tir_vector(value->dtype.base, lanes), (void **)&node));
  node->value = value;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_call_create(kiln_arena_t *arena, kiln_tir_intrinsic_t op, int num_args,
                                   const kiln_tir_expr_t *const *args,
                                   const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  int arity = kiln_tir_intrinsic_arity(op);
  if (arity == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "Call: %d is not an intrinsic", (int)op);
  }
  const char *name = kiln_tir_intrinsic_name(op);
  if (num_args != arity) {
    return KILN_STATUS(INVALID_ARGUMENT, "Call: %s takes %d arguments, got %d", name, arity,
                       num_args);
  }
  for (int i = 0; i < num_args; ++i) {
    KILN_RETURN_IF_ERROR(check_operand("Call", args[i]));
    char ta[24], tb[24];
    int is_int = kiln_tir_intrinsic_class(op) == KILN_TIR_INTRINSIC_CLASS_INT;
    if (is_int ? !kiln_tir_dtype_is_int(args[i]->dtype)
               : !kiln_tir_dtype_is_float(args[i]->dtype)) {
      return KILN_STATUS(INVALID_ARGUMENT, "Call: %s argument %d must be %s, not %s", name, i,
                         is_int ? "an integer" : "a float",
                         kiln_tir_dtype_format(args[i]->dtype, ta));
    }
    if (!kiln_tir_dtype_equal(args[i]->dtype, args[0]->dtype)) {
      return KILN_STATUS(INVALID_ARGUMENT, "Call: %s argument dtypes differ: %s and %s", name,
                         kiln_tir_dtype_format(args[0]->dtype, ta),
                         kiln_tir_dtype_format(args[i]->dtype, tb));
    }
  }
  const kiln_tir_expr_t *const *copy = NULL;
  KILN_RETURN_IF_ERROR(copy_exprs(arena, num_args, args, &copy));
  kiln_tir_call_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_CALL, args[0]->dtype, (void **)&node));
  node->op = op;
  node->num_args = num_args;
  node->args = copy;
  *out_expr = &node->base;
  return KILN_OK;
}

kiln_status_t kiln_tir_let_create(kiln_arena_t *arena, const kiln_tir_var_t *var,
                                  const kiln_tir_expr_t *value, const kiln_tir_expr_t *body,
                                  const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  KILN_RETURN_IF_ERROR(check_operand("Let", var ? &var->base : NULL));
  KILN_RETURN_IF_ERROR(check_operand("Let", value));
  KILN_RETURN_IF_ERROR(check_operand("Let", body));
  if (!kiln_tir_dtype_equal(var->base.dtype, value->dtype)) {
    char ta[24], tb[24];
    return KILN_STATUS(INVALID_ARGUMENT, "Let: variable %s is %s but its value is %s", var->name,
                       kiln_tir_dtype_format(var->base.dtype, ta),
                       kiln_tir_dtype_format(value->dtype, tb));
  }
  kiln_tir_let_t *node = NULL;
  KILN_RETURN_IF_ERROR(
      allocate_expr(arena, sizeof(*node), KILN_TIR_EXPR_LET, body->dtype, (void **)&node));
  node->var = var;
  node->value = value;
  node->body = body;
  *out_expr = &node->base;
  return KILN_OK;
}

/* ---- queries ---- */

int kiln_tir_expr_as_int(const kiln_tir_expr_t *expr, int64_t *out_value) {
  if (!expr || expr->kind != KILN_TIR_EXPR_INT_IMM) {
    return 0;
  }
  *out_value = ((const kiln_tir_int_imm_t *)expr)->value;
  return 1;
}

/* What a node holds besides its operands: constants, and the buffer,
 * intrinsic or variable it names (compared by identity). A variable is
 * equal only to itself, which the caller has checked. */
static int attributes_equal(const kiln_tir_expr_t *a, const kiln_tir_expr_t *b) {
  if (a->kind == KILN_TIR_EXPR_VAR) {
    return 0;
  }
  if (a->kind == KILN_TIR_EXPR_INT_IMM) {
    return ((const kiln_tir_int_imm_t *)a)->value == ((const kiln_tir_int_imm_t *)b)->value;
  }
  if (a->kind == KILN_TIR_EXPR_FLOAT_IMM) {
    double x = ((const kiln_tir_float_imm_t *)a)->value;
    double y = ((const kiln_tir_float_imm_t *)b)->value;
    return memcmp(&x, &y, sizeof(x)) == 0;
  }
  if (a->kind == KILN_TIR_EXPR_BUFFER_LOAD) {
    return ((const kiln_tir_buffer_load_t *)a)->buffer ==
           ((const kiln_tir_buffer_load_t *)b)->buffer;
  }
  if (a->kind == KILN_TIR_EXPR_CALL) {
    return ((const kiln_tir_call_t *)a)->op == ((const kiln_tir_call_t *)b)->op;
  }
  if (a->kind == KILN_TIR_EXPR_LET) {
    return ((const kiln_tir_let_t *)a)->var == ((const kiln_tir_let_t *)b)->var;
  }
  return 1;
}

int kiln_tir_expr_equal(const kiln_tir_expr_t *a, const kiln_tir_expr_t *b) {
  if (a == b) {
    return 1;
  }
  if (!a || !b || a->kind != b->kind || !kiln_tir_dtype_equal(a->dtype, b->dtype) ||
      !attributes_equal(a, b)) {
    return 0;
  }
  const kiln_tir_expr_t *x[KILN_TIR_MAX_OPERANDS], *y[KILN_TIR_MAX_OPERANDS];
  int n = kiln_tir_expr_operands(a, x);
  if (kiln_tir_expr_operands(b, y) != n) {
    return 0;
  }
  for (int i = 0; i < n; ++i) {
    if (!kiln_tir_expr_equal(x[i], y[i])) {
      return 0;
    }
  }
  return 1;
}
