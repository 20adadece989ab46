/*
 * Arithmetic on interpreter values; see interp_value.h.
 *
 * Integer + - * are done in uint64 (defined wrap-around) and wrapped to the
 * dtype; a uint64 lane holds its bits, and its compares, min, max,
 * division and conversions treat them as unsigned. float16 and bfloat16
 * lanes hold the narrow value as a double: each operation is computed as
 * float32 and rounded to the narrow type with base/scalar_ops.h's
 * conversions (as the backends compute). floordiv and floormod, the shifts and float-to-int casts
 * are base/scalar_ops.h's, which the simplifier and both backends share: a zero divisor gives 0,
 * INT64_MIN / -1 wraps, a shift by the width or more (or by a negative amount) gives 0, and a float
 * becomes an integer truncated and saturated at the target's range (NaN gives 0).
 */
#include "tir/interp_value.h"

#include <math.h>

#include "base/scalar_ops.h"

kiln_status_t kiln_tir_value_check_dtype(kiln_tir_dtype_t dtype) {
  switch (dtype.base) {
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_FLOAT64:
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_INT64:
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_UINT32:
  case KILN_DTYPE_BOOL:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_UINT64:
    return KILN_OK;
  case KILN_DTYPE_COUNT_:
    break;
  }
  return KILN_STATUS(UNIMPLEMENTED, "the loop-IR interpreter does not support %s",
                     kiln_dtype_name(dtype.base));
}

int64_t kiln_tir_value_wrap_int(kiln_dtype_t base, int64_t v) {
  if (base == KILN_DTYPE_BOOL) {
    return v != 0;
  }
  DLDataType dl = kiln_dtype_to_dl(base);
  if (dl.bits >= 64) {
    return v;
  }
  uint64_t mask = (UINT64_C(1) << dl.bits) - 1;
  uint64_t low = (uint64_t)v & mask;
  if (dl.code == kDLInt && (low >> (dl.bits - 1))) {
    low |= ~mask; /* sign-extend */
  }
  return (int64_t)low;
}

double kiln_tir_value_round_float(kiln_dtype_t base, double v) {
  if (base == KILN_DTYPE_FLOAT16) { /* through float32, as the backends compute */
    return kiln_scalar_float16_to_float32(kiln_scalar_float32_to_float16((float)v));
  }
  if (base == KILN_DTYPE_BFLOAT16) {
    return kiln_scalar_bfloat16_to_float32(kiln_scalar_float32_to_bfloat16((float)v));
  }
  return base == KILN_DTYPE_FLOAT32 ? (double)(float)v : v;
}

/* uint64's operations that differ from int64's on the same bits: the
 * compares, min and max, division and remainder. Sets *out_done. */
static int64_t uint64_binary(kiln_tir_expr_kind_t kind, uint64_t x, uint64_t y, int *out_done) {
  *out_done = 1;
  switch (kind) {
  case KILN_TIR_EXPR_FLOOR_DIV:
    return (int64_t)kiln_scalar_uint_divide(x, y);
  case KILN_TIR_EXPR_FLOOR_MOD:
    return (int64_t)kiln_scalar_uint_mod(x, y);
  case KILN_TIR_EXPR_MIN:
    return (int64_t)(x < y ? x : y);
  case KILN_TIR_EXPR_MAX:
    return (int64_t)(x > y ? x : y);
  case KILN_TIR_EXPR_LT:
    return x < y;
  case KILN_TIR_EXPR_LE:
    return x <= y;
  case KILN_TIR_EXPR_GT:
    return x > y;
  case KILN_TIR_EXPR_GE:
    return x >= y;
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
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
  *out_done = 0; /* the same on the bits as int64's */
  return 0;
}

static int64_t int_binary(kiln_tir_expr_kind_t kind, int64_t x, int64_t y) {
  switch (kind) {
  case KILN_TIR_EXPR_ADD:
    return (int64_t)((uint64_t)x + (uint64_t)y);
  case KILN_TIR_EXPR_SUB:
    return (int64_t)((uint64_t)x - (uint64_t)y);
  case KILN_TIR_EXPR_MUL:
    return (int64_t)((uint64_t)x * (uint64_t)y);
  case KILN_TIR_EXPR_FLOOR_DIV:
    return kiln_scalar_int_floor_divide(x, y);
  case KILN_TIR_EXPR_FLOOR_MOD:
    return kiln_scalar_int_floor_mod(x, y);
  case KILN_TIR_EXPR_MIN:
    return x < y ? x : y;
  case KILN_TIR_EXPR_MAX:
    return x > y ? x : y;
  case KILN_TIR_EXPR_EQ:
    return x == y;
  case KILN_TIR_EXPR_NE:
    return x != y;
  case KILN_TIR_EXPR_LT:
    return x < y;
  case KILN_TIR_EXPR_LE:
    return x <= y;
  case KILN_TIR_EXPR_GT:
    return x > y;
  case KILN_TIR_EXPR_GE:
    return x >= y;
  case KILN_TIR_EXPR_AND:
    return x && y;
  case KILN_TIR_EXPR_OR:
    return x || y;
  case KILN_TIR_EXPR_DIV:
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
  return 0; /* constructors admit no other kind on integers */
}

/* Float arithmetic kinds give a float; comparisons give 0/1 in *out_bool. */
static double float_binary(kiln_tir_expr_kind_t kind, double x, double y, int64_t *out_bool) {
  switch (kind) {
  case KILN_TIR_EXPR_ADD:
    return x + y;
  case KILN_TIR_EXPR_SUB:
    return x - y;
  case KILN_TIR_EXPR_MUL:
    return x * y;
  case KILN_TIR_EXPR_DIV:
    return x / y;
  case KILN_TIR_EXPR_MIN:
    return x < y ? x : y;
  case KILN_TIR_EXPR_MAX:
    return x > y ? x : y;
  case KILN_TIR_EXPR_EQ:
    *out_bool = x == y;
    return 0;
  case KILN_TIR_EXPR_NE:
    *out_bool = x != y;
    return 0;
  case KILN_TIR_EXPR_LT:
    *out_bool = x < y;
    return 0;
  case KILN_TIR_EXPR_LE:
    *out_bool = x <= y;
    return 0;
  case KILN_TIR_EXPR_GT:
    *out_bool = x > y;
    return 0;
  case KILN_TIR_EXPR_GE:
    *out_bool = x >= y;
    return 0;
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
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
  return 0;
}

kiln_status_t kiln_tir_value_binary(kiln_tir_expr_kind_t kind, const kiln_tir_value_t *a,
                                    const kiln_tir_value_t *b, kiln_tir_dtype_t out_dtype,
                                    kiln_tir_value_t *out) {
  out->dtype = out_dtype;
  int is_float = kiln_tir_dtype_is_float(a->dtype);
  for (int l = 0; l < a->dtype.lanes; ++l) {
    if (is_float) {
      int64_t flag = 0;
      double r = float_binary(kind, a->lanes.f[l], b->lanes.f[l], &flag);
      if (kiln_tir_dtype_is_bool(out_dtype)) {
        out->lanes.i[l] = flag;
      } else {
        out->lanes.f[l] = kiln_tir_value_round_float(out_dtype.base, r);
      }
      continue;
    }
    int done = 0;
    int64_t r = a->dtype.base == KILN_DTYPE_UINT64
                    ? uint64_binary(kind, (uint64_t)a->lanes.i[l], (uint64_t)b->lanes.i[l], &done)
                    : 0;
    r = done ? r : int_binary(kind, a->lanes.i[l], b->lanes.i[l]);
    out->lanes.i[l] = kiln_tir_value_wrap_int(out_dtype.base, r);
  }
  return KILN_OK;
}

/* An integer lane as a double (uint64's bits unsigned). */
static double int_to_double(kiln_dtype_t base, int64_t v) {
  return base == KILN_DTYPE_UINT64 ? (double)(uint64_t)v : (double)v;
}

kiln_status_t kiln_tir_value_cast(kiln_tir_dtype_t dtype, const kiln_tir_value_t *a,
                                  kiln_tir_value_t *out) {
  KILN_RETURN_IF_ERROR(kiln_tir_value_check_dtype(dtype));
  out->dtype = dtype;
  int from_float = kiln_tir_dtype_is_float(a->dtype), to_float = kiln_tir_dtype_is_float(dtype);
  for (int l = 0; l < dtype.lanes; ++l) {
    if (to_float) {
      double v = from_float ? a->lanes.f[l] : int_to_double(a->dtype.base, a->lanes.i[l]);
      out->lanes.f[l] = kiln_tir_value_round_float(dtype.base, v);
    } else if (!from_float) {
      out->lanes.i[l] = kiln_tir_value_wrap_int(dtype.base, a->lanes.i[l]);
    } else if (kiln_tir_dtype_is_bool(dtype)) {
      out->lanes.i[l] = a->lanes.f[l] != 0;
    } else if (dtype.base == KILN_DTYPE_UINT64) {
      out->lanes.i[l] = (int64_t)kiln_scalar_float_to_uint(a->lanes.f[l], UINT64_MAX);
    } else {
      int64_t lo = 0, hi = 0;
      kiln_tir_dtype_int_range(dtype.base, &lo, &hi);
      out->lanes.i[l] = kiln_scalar_float_to_int(a->lanes.f[l], lo, hi);
    }
  }
  return KILN_OK;
}

/* One libm call per float intrinsic, in float (F = f) or double (F empty). */
#define KILN_TIR_CALL_FLOAT_(T, F)                            \
  static T call_##T(kiln_tir_intrinsic_t op, T x, T y, T z) { \
    switch (op) {                                             \
    case KILN_TIR_INTRINSIC_EXP:                              \
      return exp##F(x);                                       \
    case KILN_TIR_INTRINSIC_LOG:                              \
      return log##F(x);                                       \
    case KILN_TIR_INTRINSIC_SQRT:                             \
      return sqrt##F(x);                                      \
    case KILN_TIR_INTRINSIC_RSQRT:                            \
      return (T)1 / sqrt##F(x);                               \
    case KILN_TIR_INTRINSIC_ERF:                              \
      return erf##F(x);                                       \
    case KILN_TIR_INTRINSIC_TANH:                             \
      return tanh##F(x);                                      \
    case KILN_TIR_INTRINSIC_SIGMOID:                          \
      return (T)1 / ((T)1 + exp##F(-x));                      \
    case KILN_TIR_INTRINSIC_FABS:                             \
      return fabs##F(x);                                      \
    case KILN_TIR_INTRINSIC_FLOOR:                            \
      return floor##F(x);                                     \
    case KILN_TIR_INTRINSIC_CEIL:                             \
      return ceil##F(x);                                      \
    case KILN_TIR_INTRINSIC_ROUND:                            \
      return nearbyint##F(x);                                 \
    case KILN_TIR_INTRINSIC_TRUNC:                            \
      return trunc##F(x);                                     \
    case KILN_TIR_INTRINSIC_POW:                              \
      return pow##F(x, y);                                    \
    case KILN_TIR_INTRINSIC_FMA:                              \
      return fma##F(x, y, z);                                 \
    case KILN_TIR_INTRINSIC_SIN:                              \
      return sin##F(x);                                       \
    case KILN_TIR_INTRINSIC_COS:                              \
      return cos##F(x);                                       \
    case KILN_TIR_INTRINSIC_TAN:                              \
      return tan##F(x);                                       \
    case KILN_TIR_INTRINSIC_ASIN:                             \
      return asin##F(x);                                      \
    case KILN_TIR_INTRINSIC_ACOS:                             \
      return acos##F(x);                                      \
    case KILN_TIR_INTRINSIC_ATAN:                             \
      return atan##F(x);                                      \
    case KILN_TIR_INTRINSIC_SINH:                             \
      return sinh##F(x);                                      \
    case KILN_TIR_INTRINSIC_COSH:                             \
      return cosh##F(x);                                      \
    case KILN_TIR_INTRINSIC_ASINH:                            \
      return asinh##F(x);                                     \
    case KILN_TIR_INTRINSIC_ACOSH:                            \
      return acosh##F(x);                                     \
    case KILN_TIR_INTRINSIC_ATANH:                            \
      return atanh##F(x);                                     \
    case KILN_TIR_INTRINSIC_LOG1P:                            \
      return log1p##F(x);                                     \
    case KILN_TIR_INTRINSIC_EXPM1:                            \
      return expm1##F(x);                                     \
    case KILN_TIR_INTRINSIC_FMOD:                             \
      return fmod##F(x, y);                                   \
    case KILN_TIR_INTRINSIC_COPYSIGN:                         \
      return copysign##F(x, y);                               \
    case KILN_TIR_INTRINSIC_SHIFT_LEFT:                       \
    case KILN_TIR_INTRINSIC_SHIFT_RIGHT:                      \
    case KILN_TIR_INTRINSIC_BITWISE_XOR:                      \
    case KILN_TIR_INTRINSIC_COUNT_:                           \
      break;                                                  \
    }                                                         \
    return 0;                                                 \
  }

KILN_TIR_CALL_FLOAT_(float, f)
KILN_TIR_CALL_FLOAT_(double, )
#undef KILN_TIR_CALL_FLOAT_

/* The integer intrinsics on the value's bits, of a dtype `bits` wide. */
static int64_t call_int(kiln_tir_intrinsic_t op, int bits, int64_t x, int64_t y) {
  if (op == KILN_TIR_INTRINSIC_BITWISE_XOR) {
    return (int64_t)kiln_scalar_bits_xor((uint64_t)x, (uint64_t)y, bits);
  }
  return (int64_t)(op == KILN_TIR_INTRINSIC_SHIFT_LEFT
                       ? kiln_scalar_bits_shift_left((uint64_t)x, y, bits)
                       : kiln_scalar_bits_shift_right((uint64_t)x, y, bits));
}

void kiln_tir_value_call(kiln_tir_intrinsic_t op, int num_args, const kiln_tir_value_t *args,
                         kiln_tir_value_t *out) {
  out->dtype = args[0].dtype;
  if (kiln_tir_intrinsic_class(op) == KILN_TIR_INTRINSIC_CLASS_INT) {
    int bits = kiln_dtype_to_dl(out->dtype.base).bits;
    for (int l = 0; l < out->dtype.lanes; ++l) {
      int64_t r = call_int(op, bits, args[0].lanes.i[l], args[1].lanes.i[l]);
      out->lanes.i[l] = kiln_tir_value_wrap_int(out->dtype.base, r);
    }
    return;
  }
  for (int l = 0; l < out->dtype.lanes; ++l) {
    double x = args[0].lanes.f[l];
    double y = num_args > 1 ? args[1].lanes.f[l] : 0;
    double z = num_args > 2 ? args[2].lanes.f[l] : 0;
    double r = out->dtype.base == KILN_DTYPE_FLOAT64
                   ? call_double(op, x, y, z)
                   : (double)call_float(op, (float)x, (float)y, (float)z);
    out->lanes.f[l] = kiln_tir_value_round_float(out->dtype.base, r);
  }
}
