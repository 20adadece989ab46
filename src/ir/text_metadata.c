/*
 * Tensor values of the metadata section; see text_metadata.h.
 *
 * Dtypes are handled by their DLPack class and width rather than one by
 * one: a float class (float, bfloat) is read through double, signed
 * integers through int64_t, unsigned integers and bool through uint64_t,
 * with a load and a store per width. The shortest float spelling is found
 * by a binary search over the precision: if "%.{p}g" reads back exactly, so
 * does every longer one (printf rounds correctly), and "%.9g" always does
 * for the 32-bit and narrower forms, "%.17g" for float64.
 */
#include "ir/text_metadata.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum value_class_e {
  VALUE_FLOAT,
  VALUE_SIGNED,
  VALUE_UNSIGNED,
  VALUE_BOOL,
} value_class_t;

static value_class_t value_class(kiln_dtype_t dtype) {
  if (dtype == KILN_DTYPE_BOOL) {
    return VALUE_BOOL;
  }
  DLDataType dl = kiln_dtype_to_dl(dtype);
  if (dl.code == kDLFloat || dl.code == kDLBfloat) {
    return VALUE_FLOAT;
  }
  return dl.code == kDLInt ? VALUE_SIGNED : VALUE_UNSIGNED;
}

static unsigned value_bits(kiln_dtype_t dtype) {
  return kiln_dtype_to_dl(dtype).bits;
}

/* ---- loads and stores by width ---- */

static uint64_t load_unsigned(const unsigned char *p, unsigned bits) {
  if (bits == 8) {
    return p[0];
  }
  if (bits == 16) {
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
  }
  if (bits == 32) {
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
  }
  uint64_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

/* Sign-extends the `bits`-bit two's complement value there. */
static int64_t load_signed(const unsigned char *p, unsigned bits) {
  uint64_t raw = load_unsigned(p, bits);
  if (bits < 64 && (raw >> (bits - 1)) != 0) {
    raw |= ~(uint64_t)0 << bits;
  }
  int64_t value;
  memcpy(&value, &raw, sizeof(value));
  return value;
}

/* Stores the low `bits` bits of `raw` (two's complement for signed values). */
static void store_bits(unsigned char *p, unsigned bits, uint64_t raw) {
  if (bits == 8) {
    p[0] = (unsigned char)raw;
  } else if (bits == 16) {
    uint16_t v = (uint16_t)raw;
    memcpy(p, &v, sizeof(v));
  } else if (bits == 32) {
    uint32_t v = (uint32_t)raw;
    memcpy(p, &v, sizeof(v));
  } else {
    memcpy(p, &raw, sizeof(raw));
  }
}

static double load_float(kiln_dtype_t dtype, const unsigned char *p) {
  if (dtype == KILN_DTYPE_FLOAT64) {
    double v;
    memcpy(&v, p, sizeof(v));
    return v;
  }
  if (dtype == KILN_DTYPE_FLOAT32) {
    float v;
    memcpy(&v, p, sizeof(v));
    return v;
  }
  uint16_t half = (uint16_t)load_unsigned(p, 16);
  return dtype == KILN_DTYPE_BFLOAT16 ? kiln_bfloat16_to_float32(half)
                                      : kiln_float16_to_float32(half);
}

static void store_float(kiln_dtype_t dtype, unsigned char *p, double value) {
  if (dtype == KILN_DTYPE_FLOAT64) {
    memcpy(p, &value, sizeof(value));
  } else if (dtype == KILN_DTYPE_FLOAT32) {
    float v = (float)value;
    memcpy(p, &v, sizeof(v));
  } else if (dtype == KILN_DTYPE_BFLOAT16) {
    store_bits(p, 16, kiln_float32_to_bfloat16((float)value));
  } else {
    store_bits(p, 16, kiln_float32_to_float16((float)value));
  }
}

/* The value a finite number's spelling gets once stored in `dtype`,
 * through strtof for the 32-bit and narrower forms (no double rounding). */
static double float_read(kiln_dtype_t dtype, const char *text, char **out_end) {
  if (dtype == KILN_DTYPE_FLOAT64) {
    return strtod(text, out_end);
  }
  float value = strtof(text, out_end);
  if (dtype == KILN_DTYPE_FLOAT16) {
    return kiln_float16_to_float32(kiln_float32_to_float16(value));
  }
  if (dtype == KILN_DTYPE_BFLOAT16) {
    return kiln_bfloat16_to_float32(kiln_float32_to_bfloat16(value));
  }
  return value;
}

/* ---- printing ---- */

static bool float_round_trips(kiln_dtype_t dtype, double value, int precision, char *buffer,
                              size_t capacity) {
  int length = snprintf(buffer, capacity, "%.*g", precision, value);
  if (length < 0 || (size_t)length >= capacity) {
    return false; /* cannot happen for precision <= 17; keeps the check honest */
  }
  char *end = NULL;
  return float_read(dtype, buffer, &end) == value;
}

static kiln_status_t format_float(kiln_dtype_t dtype, double value, kiln_strbuf_t *sb) {
  if (isnan(value)) {
    return kiln_strbuf_append(sb, "nan");
  }
  if (isinf(value)) {
    return kiln_strbuf_append(sb, value > 0 ? "inf" : "-inf");
  }
  char buffer[48];
  int low = 1;
  int high = dtype == KILN_DTYPE_FLOAT64 ? 17 : 9;
  while (low < high) {
    int middle = (low + high) / 2;
    if (float_round_trips(dtype, value, middle, buffer, sizeof(buffer))) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  snprintf(buffer, sizeof(buffer), "%.*g", high, value);
  return kiln_strbuf_append(sb, buffer);
}

static kiln_status_t format_value(kiln_dtype_t dtype, const unsigned char *p, kiln_strbuf_t *sb) {
  unsigned bits = value_bits(dtype);
  switch (value_class(dtype)) {
  case VALUE_FLOAT:
    return format_float(dtype, load_float(dtype, p), sb);
  case VALUE_SIGNED:
    return kiln_strbuf_appendf(sb, "%lld", (long long)load_signed(p, bits));
  case VALUE_UNSIGNED:
    return kiln_strbuf_appendf(sb, "%llu", (unsigned long long)load_unsigned(p, bits));
  case VALUE_BOOL:
    return kiln_strbuf_append_char(sb, p[0] != 0 ? '1' : '0');
  }
  return KILN_STATUS(INTERNAL, "no spelling for dtype %s", kiln_dtype_name(dtype));
}

kiln_status_t kiln_text_format_tensor_values(const kiln_tensor_t *tensor, kiln_strbuf_t *sb) {
  kiln_dtype_t dtype = kiln_tensor_dtype(tensor);
  size_t size = kiln_dtype_size(dtype);
  const unsigned char *data = kiln_tensor_data(tensor);
  int64_t count = kiln_tensor_element_count(tensor);
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '['));
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, ", "));
    }
    KILN_RETURN_IF_ERROR(format_value(dtype, data + (size_t)i * size, sb));
  }
  return kiln_strbuf_append_char(sb, ']');
}

/* ---- parsing ---- */

static kiln_status_t parse_float(kiln_dtype_t dtype, const char *text, double *out_value) {
  bool negative = text[0] == '-';
  const char *body = text + (negative ? 1 : 0);
  if (strcmp(body, "nan") == 0) {
    *out_value = NAN;
    return KILN_OK;
  }
  if (strcmp(body, "inf") == 0) {
    *out_value = negative ? -INFINITY : INFINITY;
    return KILN_OK;
  }
  char *end = NULL;
  double value = float_read(dtype, text, &end);
  bool decimal = body[0] >= '0' && body[0] <= '9' && strpbrk(body, "xXpP") == NULL;
  if (!decimal || end == text || *end != '\0') {
    return KILN_STATUS(INVALID_ARGUMENT, "'%s' is not a %s value (a number, nan, inf or -inf)",
                       text, kiln_dtype_name(dtype));
  }
  *out_value = value;
  return KILN_OK;
}

/* The magnitude of "[-]digits" and whether it was negative. */
static kiln_status_t parse_integer(kiln_dtype_t dtype, const char *text, bool *out_negative,
                                   uint64_t *out_magnitude) {
  bool negative = text[0] == '-';
  const char *digits = text + (negative ? 1 : 0);
  bool all_digits = digits[0] != '\0';
  for (const char *p = digits; *p != '\0'; ++p) {
    all_digits = all_digits && *p >= '0' && *p <= '9';
  }
  if (!all_digits) {
    return KILN_STATUS(INVALID_ARGUMENT, "'%s' is not a %s value (an integer)", text,
                       kiln_dtype_name(dtype));
  }
  errno = 0;
  unsigned long long magnitude = strtoull(digits, NULL, 10);
  if (errno == ERANGE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s is out of the range of %s", text,
                       kiln_dtype_name(dtype));
  }
  *out_negative = negative;
  *out_magnitude = magnitude;
  return KILN_OK;
}

/* The two's complement bits of a signed `text` that fits in `bits`. */
static kiln_status_t parse_signed(kiln_dtype_t dtype, const char *text, uint64_t *out_raw) {
  bool negative = false;
  uint64_t magnitude = 0;
  KILN_RETURN_IF_ERROR(parse_integer(dtype, text, &negative, &magnitude));
  uint64_t limit = (uint64_t)1 << (value_bits(dtype) - 1); /* |min|; max is limit - 1 */
  if (negative ? magnitude > limit : magnitude >= limit) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s is out of the range of %s", text,
                       kiln_dtype_name(dtype));
  }
  *out_raw = negative ? (uint64_t)0 - magnitude : magnitude;
  return KILN_OK;
}

static kiln_status_t parse_unsigned(kiln_dtype_t dtype, const char *text, uint64_t *out_raw) {
  bool negative = false;
  uint64_t magnitude = 0;
  KILN_RETURN_IF_ERROR(parse_integer(dtype, text, &negative, &magnitude));
  unsigned bits = value_bits(dtype);
  uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if ((negative && magnitude != 0) || magnitude > max) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s is out of the range of %s", text,
                       kiln_dtype_name(dtype));
  }
  *out_raw = magnitude;
  return KILN_OK;
}

kiln_status_t kiln_text_parse_tensor_value(kiln_tensor_t *tensor, int64_t index, const char *text) {
  kiln_dtype_t dtype = kiln_tensor_dtype(tensor);
  unsigned char *p =
      (unsigned char *)kiln_tensor_data(tensor) + (size_t)index * kiln_dtype_size(dtype);
  uint64_t raw = 0;
  switch (value_class(dtype)) {
  case VALUE_FLOAT: {
    double value = 0;
    KILN_RETURN_IF_ERROR(parse_float(dtype, text, &value));
    store_float(dtype, p, value);
    return KILN_OK;
  }
  case VALUE_SIGNED:
    KILN_RETURN_IF_ERROR(parse_signed(dtype, text, &raw));
    break;
  case VALUE_UNSIGNED:
    KILN_RETURN_IF_ERROR(parse_unsigned(dtype, text, &raw));
    break;
  case VALUE_BOOL:
    if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "'%s' is not a bool value (0 or 1)", text);
    }
    raw = text[0] == '1';
    break;
  }
  store_bits(p, value_bits(dtype), raw);
  return KILN_OK;
}
