/*
 * One value of any dtype (kiln_scalar_t), read from and written to tensor
 * elements; shared by the reference kernels that are written once for every
 * dtype (cast, pad, the elementwise tables, cumsum, scatter, topk, ...),
 * and by the runtime's extern kernels (dyn.resize's): it lives in the
 * runtime, which needs it without the operator library.
 *
 * A value keeps the class of the dtype it came from: a double for the float
 * dtypes (float16, bfloat16, float32, float64), an int64 for the signed ones
 * and bool (0 or 1), a uint64 for the unsigned ones, so every element of
 * every dtype is held exactly. kiln_scalar_kind maps a dtype to a kind once,
 * and one switch per direction loads or stores it. Storing converts as
 * NumPy's astype does, with defined C: a float becomes an integer by
 * truncation toward zero, saturated at the target's range (NaN gives 0: the
 * one definition of base/scalar_ops.h, which compiled code shares); an
 * integer becomes a narrower integer by wrapping (two's complement); any
 * value becomes bool as value != 0; an integer becomes a float by rounding to
 * nearest. float16 and bfloat16 are stored through float32 (a double value
 * is rounded twice; every float16 result of an exact operation is exact).
 * Everything is static inline: small helpers used by several families.
 */
#ifndef KILN_RUNTIME_SCALAR_H_
#define KILN_RUNTIME_SCALAR_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/scalar_ops.h"
#include "kiln/tensor.h"

/* A value read from an element: exactly one of f, i, u is meaningful. */
typedef struct kiln_scalar_t {
  bool is_float;
  bool is_unsigned; /* (when not is_float) the value is u, else i */
  double f;
  int64_t i;
  uint64_t u;
} kiln_scalar_t;

typedef enum kiln_scalar_kind_e {
  KILN_SCALAR_KIND_NONE,
  KILN_SCALAR_KIND_F32,
  KILN_SCALAR_KIND_F16,
  KILN_SCALAR_KIND_BF16,
  KILN_SCALAR_KIND_F64,
  KILN_SCALAR_KIND_I8,
  KILN_SCALAR_KIND_I16,
  KILN_SCALAR_KIND_I32,
  KILN_SCALAR_KIND_I64,
  KILN_SCALAR_KIND_U8,
  KILN_SCALAR_KIND_U16,
  KILN_SCALAR_KIND_U32,
  KILN_SCALAR_KIND_U64,
  KILN_SCALAR_KIND_BOOL,
} kiln_scalar_kind_t;

/* What arithmetic a dtype gets: its class. */
typedef enum kiln_scalar_class_e {
  KILN_SCALAR_CLASS_NONE,
  KILN_SCALAR_CLASS_FLOAT,    /* float16, bfloat16, float32, float64 */
  KILN_SCALAR_CLASS_SIGNED,   /* int8, int16, int32, int64 */
  KILN_SCALAR_CLASS_UNSIGNED, /* uint8, uint16, uint32, uint64 */
  KILN_SCALAR_CLASS_BOOL,
} kiln_scalar_class_t;

/* The kind of a dtype; NONE only for a value outside the dtype enum. */
static inline kiln_scalar_kind_t kiln_scalar_kind(kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    return KILN_SCALAR_KIND_F32;
  case KILN_DTYPE_FLOAT16:
    return KILN_SCALAR_KIND_F16;
  case KILN_DTYPE_BFLOAT16:
    return KILN_SCALAR_KIND_BF16;
  case KILN_DTYPE_FLOAT64:
    return KILN_SCALAR_KIND_F64;
  case KILN_DTYPE_INT8:
    return KILN_SCALAR_KIND_I8;
  case KILN_DTYPE_INT16:
    return KILN_SCALAR_KIND_I16;
  case KILN_DTYPE_INT32:
    return KILN_SCALAR_KIND_I32;
  case KILN_DTYPE_INT64:
    return KILN_SCALAR_KIND_I64;
  case KILN_DTYPE_UINT8:
    return KILN_SCALAR_KIND_U8;
  case KILN_DTYPE_UINT16:
    return KILN_SCALAR_KIND_U16;
  case KILN_DTYPE_UINT32:
    return KILN_SCALAR_KIND_U32;
  case KILN_DTYPE_UINT64:
    return KILN_SCALAR_KIND_U64;
  case KILN_DTYPE_BOOL:
    return KILN_SCALAR_KIND_BOOL;
  case KILN_DTYPE_COUNT_:
    break;
  }
  return KILN_SCALAR_KIND_NONE;
}

static inline kiln_scalar_class_t kiln_scalar_class(kiln_dtype_t dtype) {
  switch (kiln_scalar_kind(dtype)) {
  case KILN_SCALAR_KIND_F32:
  case KILN_SCALAR_KIND_F16:
  case KILN_SCALAR_KIND_BF16:
  case KILN_SCALAR_KIND_F64:
    return KILN_SCALAR_CLASS_FLOAT;
  case KILN_SCALAR_KIND_I8:
  case KILN_SCALAR_KIND_I16:
  case KILN_SCALAR_KIND_I32:
  case KILN_SCALAR_KIND_I64:
    return KILN_SCALAR_CLASS_SIGNED;
  case KILN_SCALAR_KIND_U8:
  case KILN_SCALAR_KIND_U16:
  case KILN_SCALAR_KIND_U32:
  case KILN_SCALAR_KIND_U64:
    return KILN_SCALAR_CLASS_UNSIGNED;
  case KILN_SCALAR_KIND_BOOL:
    return KILN_SCALAR_CLASS_BOOL;
  case KILN_SCALAR_KIND_NONE:
    break;
  }
  return KILN_SCALAR_CLASS_NONE;
}

static inline kiln_scalar_t kiln_scalar_float(double value) {
  return (kiln_scalar_t){.is_float = true, .f = value};
}

static inline kiln_scalar_t kiln_scalar_int(int64_t value) {
  return (kiln_scalar_t){.is_float = false, .i = value};
}

static inline kiln_scalar_t kiln_scalar_uint(uint64_t value) {
  return (kiln_scalar_t){.is_float = false, .is_unsigned = true, .u = value};
}

/* Element `index` of `data`, of a dtype whose kind is not NONE. */
static inline kiln_scalar_t kiln_scalar_load(kiln_scalar_kind_t kind, const void *data,
                                             int64_t index) {
  switch (kind) {
  case KILN_SCALAR_KIND_F32:
    return kiln_scalar_float(((const float *)data)[index]);
  case KILN_SCALAR_KIND_F16:
    return kiln_scalar_float(kiln_float16_to_float32(((const uint16_t *)data)[index]));
  case KILN_SCALAR_KIND_BF16:
    return kiln_scalar_float(kiln_bfloat16_to_float32(((const uint16_t *)data)[index]));
  case KILN_SCALAR_KIND_F64:
    return kiln_scalar_float(((const double *)data)[index]);
  case KILN_SCALAR_KIND_I8:
    return kiln_scalar_int(((const int8_t *)data)[index]);
  case KILN_SCALAR_KIND_I16:
    return kiln_scalar_int(((const int16_t *)data)[index]);
  case KILN_SCALAR_KIND_I32:
    return kiln_scalar_int(((const int32_t *)data)[index]);
  case KILN_SCALAR_KIND_I64:
    return kiln_scalar_int(((const int64_t *)data)[index]);
  case KILN_SCALAR_KIND_U8:
    return kiln_scalar_uint(((const uint8_t *)data)[index]);
  case KILN_SCALAR_KIND_U16:
    return kiln_scalar_uint(((const uint16_t *)data)[index]);
  case KILN_SCALAR_KIND_U32:
    return kiln_scalar_uint(((const uint32_t *)data)[index]);
  case KILN_SCALAR_KIND_U64:
    return kiln_scalar_uint(((const uint64_t *)data)[index]);
  case KILN_SCALAR_KIND_BOOL:
    return kiln_scalar_int(((const uint8_t *)data)[index] != 0);
  case KILN_SCALAR_KIND_NONE:
    break;
  }
  return kiln_scalar_int(0);
}

/* The value as a double (an integer rounds to nearest). */
static inline double kiln_scalar_to_double(kiln_scalar_t value) {
  if (value.is_float) {
    return value.f;
  }
  return value.is_unsigned ? (double)value.u : (double)value.i;
}

/* The value as a float, rounded once. */
static inline float kiln_scalar_to_float(kiln_scalar_t value) {
  if (value.is_float) {
    return (float)value.f;
  }
  return value.is_unsigned ? (float)value.u : (float)value.i;
}

/* An integer in [lo, hi] for a signed target: a float truncates toward zero
 * and saturates, NaN giving 0 (base/scalar_ops.h); an integer keeps its bits
 * (the store wraps). */
static inline int64_t kiln_scalar_to_int(kiln_scalar_t value, int64_t lo, int64_t hi) {
  if (!value.is_float) {
    return value.is_unsigned ? (int64_t)value.u : value.i;
  }
  return kiln_scalar_float_to_int(value.f, lo, hi);
}

/* An integer in [0, hi] for an unsigned target, by the same rules. */
static inline uint64_t kiln_scalar_to_uint(kiln_scalar_t value, uint64_t hi) {
  if (!value.is_float) {
    return value.is_unsigned ? value.u : (uint64_t)value.i;
  }
  return kiln_scalar_float_to_uint(value.f, hi);
}

static inline bool kiln_scalar_is_nonzero(kiln_scalar_t value) {
  if (value.is_float) {
    return value.f != 0.0;
  }
  return value.is_unsigned ? value.u != 0 : value.i != 0;
}

/* Stores `value` as element `index` of `data`, of a dtype whose kind is not NONE. */
static inline void kiln_scalar_store(kiln_scalar_kind_t kind, void *data, int64_t index,
                                     kiln_scalar_t value) {
  switch (kind) {
  case KILN_SCALAR_KIND_F32:
    ((float *)data)[index] = kiln_scalar_to_float(value);
    break;
  case KILN_SCALAR_KIND_F16:
    ((uint16_t *)data)[index] = kiln_float32_to_float16(kiln_scalar_to_float(value));
    break;
  case KILN_SCALAR_KIND_BF16:
    ((uint16_t *)data)[index] = kiln_float32_to_bfloat16(kiln_scalar_to_float(value));
    break;
  case KILN_SCALAR_KIND_F64:
    ((double *)data)[index] = kiln_scalar_to_double(value);
    break;
  case KILN_SCALAR_KIND_I8:
    ((int8_t *)data)[index] = (int8_t)kiln_scalar_to_int(value, INT8_MIN, INT8_MAX);
    break;
  case KILN_SCALAR_KIND_I16:
    ((int16_t *)data)[index] = (int16_t)kiln_scalar_to_int(value, INT16_MIN, INT16_MAX);
    break;
  case KILN_SCALAR_KIND_I32:
    ((int32_t *)data)[index] = (int32_t)kiln_scalar_to_int(value, INT32_MIN, INT32_MAX);
    break;
  case KILN_SCALAR_KIND_I64:
    ((int64_t *)data)[index] = kiln_scalar_to_int(value, INT64_MIN, INT64_MAX);
    break;
  case KILN_SCALAR_KIND_U8:
    ((uint8_t *)data)[index] = (uint8_t)kiln_scalar_to_uint(value, UINT8_MAX);
    break;
  case KILN_SCALAR_KIND_U16:
    ((uint16_t *)data)[index] = (uint16_t)kiln_scalar_to_uint(value, UINT16_MAX);
    break;
  case KILN_SCALAR_KIND_U32:
    ((uint32_t *)data)[index] = (uint32_t)kiln_scalar_to_uint(value, UINT32_MAX);
    break;
  case KILN_SCALAR_KIND_U64:
    ((uint64_t *)data)[index] = kiln_scalar_to_uint(value, UINT64_MAX);
    break;
  case KILN_SCALAR_KIND_BOOL:
    ((uint8_t *)data)[index] = kiln_scalar_is_nonzero(value);
    break;
  case KILN_SCALAR_KIND_NONE:
    break;
  }
}

/* Orders two values of one class: -1, 0 or 1; NaN is above every number and
 * equal to NaN (NumPy's sort order). */
static inline int kiln_scalar_compare(kiln_scalar_t a, kiln_scalar_t b) {
  if (a.is_float) {
    if (isnan(a.f) || isnan(b.f)) {
      return isnan(a.f) ? (isnan(b.f) ? 0 : 1) : -1;
    }
    return a.f < b.f ? -1 : (a.f > b.f ? 1 : 0);
  }
  if (a.is_unsigned) {
    return a.u < b.u ? -1 : (a.u > b.u ? 1 : 0);
  }
  return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
}

#endif /* KILN_RUNTIME_SCALAR_H_ */
