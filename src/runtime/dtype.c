/*
 * The dtype table and the 16-bit float conversions.
 *
 * Every per-dtype fact (name, DLPack code and bits, NumPy descr, element size)
 * lives in one table expanded from KILN_DTYPE_LIST, indexed by the enum; a
 * _Static_assert keeps the table and the enum the same length. Lookups by name
 * and by DLPack type are linear scans of that table (13 entries).
 *
 * The float16 and bfloat16 conversions are base/scalar_ops.h's, which the
 * interpreters and both code generators share; they work on bit patterns,
 * without relying on _Float16 or F16C, so they behave the same on every
 * compiler and target: round to nearest with ties to even, gradual underflow
 * to subnormals, overflow to infinity. A NaN keeps its sign and the top bits
 * of its payload; when the kept payload bits are all zero the quiet bit is
 * set so it stays a NaN. Hence every float16 and bfloat16 bit pattern
 * survives a trip through float32.
 */
#include <stdio.h>
#include <string.h>

#include "base/scalar_ops.h"
#include "kiln/tensor.h"

typedef struct kiln_dtype_info_t {
  const char *name;
  uint8_t dl_code;
  uint8_t bits;
  const char *numpy_descr;
} kiln_dtype_info_t;

static const kiln_dtype_info_t kiln_dtype_table[] = {
#define KILN_DTYPE_INFO_(e, name, code, bits, descr) {name, (uint8_t)(code), bits, descr},
    KILN_DTYPE_LIST(KILN_DTYPE_INFO_)
#undef KILN_DTYPE_INFO_
};

_Static_assert(sizeof(kiln_dtype_table) / sizeof(kiln_dtype_table[0]) == KILN_DTYPE_COUNT_,
               "one table entry per dtype");

static int kiln_dtype_is_valid(kiln_dtype_t dtype) {
  return (unsigned)dtype < (unsigned)KILN_DTYPE_COUNT_;
}

const char *kiln_dtype_name(kiln_dtype_t dtype) {
  return kiln_dtype_is_valid(dtype) ? kiln_dtype_table[dtype].name : "invalid";
}

size_t kiln_dtype_size(kiln_dtype_t dtype) {
  return kiln_dtype_is_valid(dtype) ? (size_t)kiln_dtype_table[dtype].bits / 8 : 0;
}

DLDataType kiln_dtype_to_dl(kiln_dtype_t dtype) {
  DLDataType dl = {0, 0, 0}; /* bits and lanes 0: no such type */
  if (kiln_dtype_is_valid(dtype)) {
    dl.code = kiln_dtype_table[dtype].dl_code;
    dl.bits = kiln_dtype_table[dtype].bits;
    dl.lanes = 1;
  }
  return dl;
}

const char *kiln_dtype_numpy_descr(kiln_dtype_t dtype) {
  return kiln_dtype_is_valid(dtype) ? kiln_dtype_table[dtype].numpy_descr : NULL;
}

kiln_status_t kiln_dtype_from_name(const char *name, kiln_dtype_t *out_dtype) {
  if (name == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "dtype name is NULL");
  }
  for (int i = 0; i < KILN_DTYPE_COUNT_; ++i) {
    if (strcmp(kiln_dtype_table[i].name, name) == 0) {
      *out_dtype = (kiln_dtype_t)i;
      return KILN_OK;
    }
  }
  char known[256];
  size_t length = 0;
  for (int i = 0; i < KILN_DTYPE_COUNT_ && length < sizeof(known); ++i) {
    int n = snprintf(known + length, sizeof(known) - length, "%s%s", i ? ", " : "",
                     kiln_dtype_table[i].name);
    length += n > 0 ? (size_t)n : 0;
  }
  return KILN_STATUS(NOT_FOUND, "unknown dtype \"%.64s\" (kiln has %s)", name, known);
}

static const char *kiln_dl_code_name(uint8_t code) {
  switch (code) {
  case kDLInt:
    return "kDLInt";
  case kDLUInt:
    return "kDLUInt";
  case kDLFloat:
    return "kDLFloat";
  case kDLOpaqueHandle:
    return "kDLOpaqueHandle";
  case kDLBfloat:
    return "kDLBfloat";
  case kDLComplex:
    return "kDLComplex";
  default:
    return "unknown code";
  }
}

/* The table's dtype for {code, bits, 1}; -1 when there is none. The first
 * match wins, so {kDLUInt, 8} is UINT8 and never BOOL. */
static int kiln_dtype_find_dl(DLDataType dl) {
  for (int i = 0; i < KILN_DTYPE_COUNT_ && dl.lanes == 1; ++i) {
    if (kiln_dtype_table[i].dl_code == dl.code && kiln_dtype_table[i].bits == dl.bits) {
      return i;
    }
  }
  return -1;
}

const char *kiln_dl_dtype_format(DLDataType dl, char *buffer, size_t capacity) {
  int found = kiln_dtype_find_dl(dl);
  if (found >= 0) {
    snprintf(buffer, capacity, "%s", kiln_dtype_table[found].name);
  } else {
    snprintf(buffer, capacity, "DLPack {%s (%u), bits %u, lanes %u}", kiln_dl_code_name(dl.code),
             dl.code, dl.bits, dl.lanes);
  }
  return buffer;
}

kiln_status_t kiln_dtype_from_dl(DLDataType dl, kiln_dtype_t *out_dtype) {
  char text[KILN_DTYPE_TEXT_CAPACITY];
  kiln_dl_dtype_format(dl, text, sizeof(text));
  if (dl.lanes != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: kiln has no vector dtypes (lanes must be 1)", text);
  }
  int found = kiln_dtype_find_dl(dl);
  if (found < 0) {
    return KILN_STATUS(NOT_FOUND, "no kiln dtype for %s", text);
  }
  *out_dtype = (kiln_dtype_t)found;
  return KILN_OK;
}

/* ---- 16-bit floats: base/scalar_ops.h's, the one definition ---- */

uint16_t kiln_float32_to_float16(float value) {
  return kiln_scalar_float32_to_float16(value);
}

float kiln_float16_to_float32(uint16_t half) {
  return kiln_scalar_float16_to_float32(half);
}

uint16_t kiln_float32_to_bfloat16(float value) {
  return kiln_scalar_float32_to_bfloat16(value);
}

float kiln_bfloat16_to_float32(uint16_t bits) {
  return kiln_scalar_bfloat16_to_float32(bits);
}
