/*
 * The .npy reader and writer.
 *
 * A .npy file is a preamble (the magic "\x93NUMPY", a major and a minor
 * version byte, and the header length: 2 bytes little-endian in version 1.0,
 * 4 bytes in 2.0 and 3.0), a header that is a Python dict literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
 * padded with spaces and ending in '\n', and then the raw data. Reading walks
 * the preamble with a bounds check before every field, then parses the header
 * with a small recursive-descent parser that accepts exactly the Python subset
 * NumPy writes and reads (keys in any order, either quote style, a trailing
 * comma, Python 2's "3L" ints) and reports anything else with what it
 * expected and the file offset where it found something else. Header bytes
 * are treated as bytes, so latin1 (1.0, 2.0) and UTF-8 (3.0) need no decoding.
 * fortran_order True is accepted only where it lays out the same bytes as C
 * order (at most one dim above 1).
 *
 * Status codes: a file cut short is DATA_LOSS; a file that is not a valid
 * .npy (bad magic, malformed header, unknown descr, negative dim, trailing
 * bytes) is INVALID_ARGUMENT; a valid file kiln does not support (another
 * version, big-endian data, Fortran order, a structured dtype) is
 * UNIMPLEMENTED; a shape whose dims or size overflow is OUT_OF_RANGE. Every
 * error is prefixed with the source name.
 *
 * Writing reproduces numpy.save byte for byte: keys in sorted order, the
 * shape as Python's tuple repr, 21 - len(repr(shape[0])) spare spaces after
 * the dict (NumPy's room to grow the first axis in place), then spaces and a
 * '\n' so that the data starts at a multiple of 64 bytes (a full 64 bytes of
 * padding when it would already be aligned, as NumPy does).
 *
 * Data is copied as raw bytes, so the host must be little-endian.
 */
#include "kiln/npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kiln's .npy reader and writer assume a little-endian host"
#endif
#endif

#define KILN_NPY_MAGIC_SIZE 6
#define KILN_NPY_ALIGNMENT  64 /* numpy.lib.format.ARRAY_ALIGN */
/* numpy.lib.format.GROWTH_AXIS_MAX_DIGITS */
#define KILN_NPY_GROWTH_DIGITS 21

static const unsigned char kiln_npy_magic[KILN_NPY_MAGIC_SIZE] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- reading the header dict ---- */

typedef struct kiln_npy_cursor_t {
  const unsigned char *text; /* the header */
  size_t length;
  size_t position;
  size_t file_offset; /* of text[0], for messages */
} kiln_npy_cursor_t;

/* The header's keys, all required, in the order NumPy writes them. */
enum { KILN_NPY_DESCR, KILN_NPY_FORTRAN_ORDER, KILN_NPY_SHAPE, KILN_NPY_KEY_COUNT };
static const char *const kiln_npy_keys[KILN_NPY_KEY_COUNT] = {"descr", "fortran_order", "shape"};

typedef struct kiln_npy_header_t {
  int seen[KILN_NPY_KEY_COUNT];
  kiln_dtype_t dtype;
  int fortran_order;
  int ndim;
  int64_t shape[KILN_MAX_RANK];
} kiln_npy_header_t;

static int kiln_npy_at_end(const kiln_npy_cursor_t *cursor) {
  return cursor->position >= cursor->length;
}

static int kiln_npy_peek(const kiln_npy_cursor_t *cursor) {
  return kiln_npy_at_end(cursor) ? -1 : cursor->text[cursor->position];
}

static void kiln_npy_skip_space(kiln_npy_cursor_t *cursor) {
  while (!kiln_npy_at_end(cursor)) {
    int c = kiln_npy_peek(cursor);
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return;
    }
    cursor->position += 1;
  }
}

/* INVALID_ARGUMENT saying what was expected, where, and what was there. */
static kiln_status_t kiln_npy_expected(const kiln_npy_cursor_t *cursor, const char *what) {
  char found[32];
  int c = kiln_npy_peek(cursor);
  if (c < 0) {
    snprintf(found, sizeof(found), "the end of the header");
  } else if (c >= 0x20 && c < 0x7f) {
    snprintf(found, sizeof(found), "'%c'", c);
  } else {
    snprintf(found, sizeof(found), "byte 0x%02x", (unsigned)c);
  }
  return KILN_STATUS(INVALID_ARGUMENT, "malformed header: expected %s at byte %zu, found %s", what,
                     cursor->file_offset + cursor->position, found);
}

static kiln_status_t kiln_npy_expect_char(kiln_npy_cursor_t *cursor, char c, const char *what) {
  if (kiln_npy_peek(cursor) != (unsigned char)c) {
    return kiln_npy_expected(cursor, what);
  }
  cursor->position += 1;
  return KILN_OK;
}

/* A Python string literal in either quote style, without escapes. */
static kiln_status_t kiln_npy_parse_string(kiln_npy_cursor_t *cursor, const char *what,
                                           const char **out_text, size_t *out_length) {
  int quote = kiln_npy_peek(cursor);
  if (quote != '\'' && quote != '"') {
    return kiln_npy_expected(cursor, what);
  }
  size_t start = cursor->position + 1;
  for (size_t i = start; i < cursor->length; ++i) {
    int c = cursor->text[i];
    if (c == '\\') {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "malformed header: escape sequence at byte %zu in the string starting at "
                         "byte %zu (kiln reads the strings NumPy writes, which have none)",
                         cursor->file_offset + i, cursor->file_offset + start - 1);
    }
    if (c == quote) {
      *out_text = (const char *)cursor->text + start;
      *out_length = i - start;
      cursor->position = i + 1;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT,
                     "malformed header: the string starting at byte %zu has no closing quote",
                     cursor->file_offset + start - 1);
}

/* Appends each NumPy descr of the dtype table to `buffer`, for messages. */
static void kiln_npy_list_descrs(char *buffer, size_t capacity) {
  size_t length = 0;
  buffer[0] = '\0';
  for (int i = 0; i < KILN_DTYPE_COUNT_; ++i) {
    const char *descr = kiln_dtype_numpy_descr((kiln_dtype_t)i);
    if (descr == NULL || length >= capacity) {
      continue;
    }
    int n = snprintf(buffer + length, capacity - length, "%s'%s'", length ? ", " : "", descr);
    length += n > 0 ? (size_t)n : 0;
  }
}

/* Maps a descr to a dtype. The type part ("f4") must be one in the dtype
 * table; the byte-order character may be '<', '=' or '|' (all little-endian on
 * a little-endian host) or absent, and for one-byte types also '>'. */
static kiln_status_t kiln_npy_decode_descr(const char *text, size_t length,
                                           kiln_dtype_t *out_dtype) {
  char order = 0;
  const char *type = text;
  size_t type_length = length;
  if (length > 0 && (text[0] == '<' || text[0] == '>' || text[0] == '=' || text[0] == '|')) {
    order = text[0];
    type += 1;
    type_length -= 1;
  }
  for (int i = 0; i < KILN_DTYPE_COUNT_; ++i) {
    const char *descr = kiln_dtype_numpy_descr((kiln_dtype_t)i);
    if (descr == NULL || strlen(descr + 1) != type_length ||
        memcmp(descr + 1, type, type_length) != 0) {
      continue;
    }
    if (order == '>' && kiln_dtype_size((kiln_dtype_t)i) > 1) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "descr '%.*s' is big-endian, and big-endian .npy files are not supported "
                         "(save the array as '%s' instead)",
                         (int)length, text, descr);
    }
    *out_dtype = (kiln_dtype_t)i;
    return KILN_OK;
  }
  char known[256];
  kiln_npy_list_descrs(known, sizeof(known));
  return KILN_STATUS(INVALID_ARGUMENT, "unsupported dtype descr '%.*s' (kiln reads %s)",
                     length > 64 ? 64 : (int)length, text, known);
}

static kiln_status_t kiln_npy_parse_descr(kiln_npy_cursor_t *cursor, kiln_npy_header_t *header) {
  if (kiln_npy_peek(cursor) == '[') {
    return KILN_STATUS(UNIMPLEMENTED,
                       "descr at byte %zu is a list: structured dtypes are not supported",
                       cursor->file_offset + cursor->position);
  }
  const char *text = NULL;
  size_t length = 0;
  KILN_RETURN_IF_ERROR(kiln_npy_parse_string(cursor, "a string value for 'descr'", &text, &length));
  return kiln_npy_decode_descr(text, length, &header->dtype);
}

static kiln_status_t kiln_npy_parse_fortran_order(kiln_npy_cursor_t *cursor,
                                                  kiln_npy_header_t *header) {
  static const char *const words[] = {"False", "True"};
  for (int value = 0; value < 2; ++value) {
    size_t length = strlen(words[value]);
    if (cursor->length - cursor->position >= length &&
        memcmp(cursor->text + cursor->position, words[value], length) == 0) {
      cursor->position += length;
      header->fortran_order = value;
      return KILN_OK;
    }
  }
  return kiln_npy_expected(cursor, "True or False for 'fortran_order'");
}

static int kiln_npy_is_digit(int c) {
  return c >= '0' && c <= '9';
}

/* A Python int literal: optional sign, decimal digits, optional 'L'. */
static kiln_status_t kiln_npy_parse_dim(kiln_npy_cursor_t *cursor, int index, int64_t *out_dim) {
  size_t start = cursor->position;
  int negative = 0;
  int sign = kiln_npy_peek(cursor);
  if (sign == '-' || sign == '+') {
    negative = sign == '-';
    cursor->position += 1;
  }
  if (!kiln_npy_is_digit(kiln_npy_peek(cursor))) {
    return kiln_npy_expected(cursor, "an integer dim in 'shape'");
  }
  size_t digits_start = cursor->position;
  uint64_t magnitude = 0;
  int overflow = 0;
  while (kiln_npy_is_digit(kiln_npy_peek(cursor))) {
    uint64_t digit = (uint64_t)(kiln_npy_peek(cursor) - '0');
    overflow |= __builtin_mul_overflow(magnitude, 10u, &magnitude);
    overflow |= __builtin_add_overflow(magnitude, digit, &magnitude);
    cursor->position += 1;
  }
  if (overflow || magnitude > (uint64_t)INT64_MAX) {
    return KILN_STATUS(OUT_OF_RANGE, "shape dim %d (%.*s) at byte %zu is out of range", index,
                       (int)(cursor->position - start > 40 ? 40 : cursor->position - start),
                       (const char *)cursor->text + start, cursor->file_offset + start);
  }
  if (cursor->text[digits_start] == '0' && magnitude != 0) {
    /* Python 3 reads "00" but rejects "03", and so does NumPy. */
    cursor->position = digits_start;
    return kiln_npy_expected(cursor, "a dim without leading zeros");
  }
  int suffix = kiln_npy_peek(cursor);
  if (suffix == 'L' || suffix == 'l') {
    cursor->position += 1;
  }
  *out_dim = negative ? -(int64_t)magnitude : (int64_t)magnitude;
  return KILN_OK;
}

/* A Python tuple of ints: "()", "(5,)", "(1, 3, 224, 224)". */
static kiln_status_t kiln_npy_parse_shape(kiln_npy_cursor_t *cursor, kiln_npy_header_t *header) {
  KILN_RETURN_IF_ERROR(kiln_npy_expect_char(cursor, '(', "a tuple '(' for 'shape'"));
  int ndim = 0;
  kiln_npy_skip_space(cursor);
  int seen_comma = 0;
  while (kiln_npy_peek(cursor) != ')') {
    if (ndim == KILN_MAX_RANK) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "shape at byte %zu has more than %d dims (kiln's KILN_MAX_RANK)",
                         cursor->file_offset + cursor->position, KILN_MAX_RANK);
    }
    KILN_RETURN_IF_ERROR(kiln_npy_parse_dim(cursor, ndim, &header->shape[ndim]));
    ndim += 1;
    kiln_npy_skip_space(cursor);
    if (kiln_npy_peek(cursor) == ',') {
      seen_comma = 1;
      cursor->position += 1;
      kiln_npy_skip_space(cursor);
    } else if (kiln_npy_peek(cursor) != ')') {
      return kiln_npy_expected(cursor, "',' or ')' in 'shape'");
    }
  }
  if (ndim == 1 && !seen_comma) {
    /* "(5)" is the int 5 in Python, not a tuple; NumPy rejects it too. */
    return kiln_npy_expected(cursor, "',' after the only dim of 'shape' (a 1-tuple is \"(5,)\")");
  }
  cursor->position += 1;
  header->ndim = ndim;
  return KILN_OK;
}

static kiln_status_t kiln_npy_parse_entry(kiln_npy_cursor_t *cursor, kiln_npy_header_t *header) {
  size_t key_offset = cursor->file_offset + cursor->position;
  const char *text = NULL;
  size_t key_length = 0;
  KILN_RETURN_IF_ERROR(kiln_npy_parse_string(cursor, "a quoted key or '}'", &text, &key_length));
  kiln_npy_skip_space(cursor);
  KILN_RETURN_IF_ERROR(kiln_npy_expect_char(cursor, ':', "':' after a key"));
  kiln_npy_skip_space(cursor);

  int key = -1;
  for (int i = 0; i < KILN_NPY_KEY_COUNT; ++i) {
    if (strlen(kiln_npy_keys[i]) == key_length && memcmp(kiln_npy_keys[i], text, key_length) == 0) {
      key = i;
    }
  }
  if (key < 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "malformed header: unexpected key '%.*s' at byte %zu (a .npy header has "
                       "exactly 'descr', 'fortran_order' and 'shape')",
                       key_length > 64 ? 64 : (int)key_length, text, key_offset);
  }
  if (header->seen[key]) {
    return KILN_STATUS(INVALID_ARGUMENT, "malformed header: duplicate key '%s' at byte %zu",
                       kiln_npy_keys[key], key_offset);
  }
  static kiln_status_t (*const parse_value[KILN_NPY_KEY_COUNT])(kiln_npy_cursor_t *,
                                                                kiln_npy_header_t *) = {
      kiln_npy_parse_descr, kiln_npy_parse_fortran_order, kiln_npy_parse_shape};
  KILN_RETURN_IF_ERROR(parse_value[key](cursor, header));
  header->seen[key] = 1;
  return KILN_OK;
}

static kiln_status_t kiln_npy_parse_dict(kiln_npy_cursor_t *cursor, kiln_npy_header_t *header) {
  kiln_npy_skip_space(cursor);
  KILN_RETURN_IF_ERROR(kiln_npy_expect_char(cursor, '{', "'{' opening the header dict"));
  for (;;) {
    kiln_npy_skip_space(cursor);
    if (kiln_npy_peek(cursor) == '}') {
      break;
    }
    KILN_RETURN_IF_ERROR(kiln_npy_parse_entry(cursor, header));
    kiln_npy_skip_space(cursor);
    if (kiln_npy_peek(cursor) == ',') {
      cursor->position += 1;
    } else if (kiln_npy_peek(cursor) != '}') {
      return kiln_npy_expected(cursor, "',' or '}' after a value");
    }
  }
  cursor->position += 1;
  kiln_npy_skip_space(cursor);
  if (!kiln_npy_at_end(cursor)) {
    return kiln_npy_expected(cursor, "only spaces and '\\n' after the header dict");
  }
  for (int i = 0; i < KILN_NPY_KEY_COUNT; ++i) {
    if (!header->seen[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "malformed header: missing key '%s'", kiln_npy_keys[i]);
    }
  }
  return KILN_OK;
}

/* ---- reading the file ---- */

/* Reads the preamble: sets the header's offset and length. */
static kiln_status_t kiln_npy_parse_preamble(const unsigned char *bytes, size_t size,
                                             size_t *out_header_offset, size_t *out_header_length) {
  if (size == 0) {
    return KILN_STATUS(DATA_LOSS, "truncated .npy file: it is empty");
  }
  size_t magic_present = size < KILN_NPY_MAGIC_SIZE ? size : KILN_NPY_MAGIC_SIZE;
  if (memcmp(bytes, kiln_npy_magic, magic_present) != 0) {
    char found[3 * KILN_NPY_MAGIC_SIZE + 1] = "";
    for (size_t i = 0; i < magic_present; ++i) {
      snprintf(found + 3 * i, sizeof(found) - 3 * i, "%02x ", bytes[i]);
    }
    found[3 * magic_present - 1] = '\0'; /* drop the last space */
    return KILN_STATUS(INVALID_ARGUMENT,
                       "not a .npy file: bad magic (expected 93 4e 55 4d 50 59 = \"\\x93NUMPY\", "
                       "found %s)",
                       found);
  }
  if (size < KILN_NPY_MAGIC_SIZE + 2) {
    return KILN_STATUS(DATA_LOSS, "truncated .npy file: %zu bytes end inside the %s", size,
                       size < KILN_NPY_MAGIC_SIZE ? "magic" : "version");
  }
  unsigned major = bytes[6], minor = bytes[7];
  size_t length_bytes;
  if (major == 1 && minor == 0) {
    length_bytes = 2;
  } else if ((major == 2 || major == 3) && minor == 0) {
    length_bytes = 4;
  } else {
    return KILN_STATUS(UNIMPLEMENTED,
                       "unsupported .npy version %u.%u (kiln reads 1.0, 2.0 and 3.0)", major,
                       minor);
  }
  size_t header_offset = KILN_NPY_MAGIC_SIZE + 2 + length_bytes;
  if (size < header_offset) {
    return KILN_STATUS(DATA_LOSS, "truncated .npy file: %zu bytes end inside the header length",
                       size);
  }
  size_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_length |= (size_t)bytes[8 + i] << (8 * i);
  }
  if (header_length > size - header_offset) {
    return KILN_STATUS(DATA_LOSS,
                       "truncated header: the header length %zu runs past the end of the file "
                       "(%zu bytes follow the %zu-byte preamble)",
                       header_length, size - header_offset, header_offset);
  }
  *out_header_offset = header_offset;
  *out_header_length = header_length;
  return KILN_OK;
}

/* Fortran and C order lay out the same bytes when at most one dim exceeds 1. */
static int kiln_npy_order_matters(const kiln_npy_header_t *header) {
  int long_dims = 0;
  for (int i = 0; i < header->ndim; ++i) {
    long_dims += header->shape[i] > 1;
  }
  return long_dims > 1;
}

static kiln_status_t kiln_npy_parse_bytes(kiln_allocator_t allocator, const unsigned char *bytes,
                                          size_t size, kiln_tensor_t **out_tensor) {
  size_t header_offset = 0, header_length = 0;
  KILN_RETURN_IF_ERROR(kiln_npy_parse_preamble(bytes, size, &header_offset, &header_length));
  kiln_npy_cursor_t cursor = {bytes + header_offset, header_length, 0, header_offset};
  kiln_npy_header_t header = {0};
  KILN_RETURN_IF_ERROR(kiln_npy_parse_dict(&cursor, &header));

  char shape_text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(header.ndim, header.shape, shape_text, sizeof(shape_text));
  if (header.fortran_order && kiln_npy_order_matters(&header)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "Fortran order (fortran_order: True) with shape %s is not supported; save "
                       "a C-ordered array (numpy.ascontiguousarray)",
                       shape_text);
  }
  size_t byte_size = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_byte_size(header.dtype, header.ndim, header.shape, &byte_size));
  size_t data_offset = header_offset + header_length;
  size_t data_size = size - data_offset;
  if (data_size < byte_size) {
    return KILN_STATUS(DATA_LOSS,
                       "truncated data: %s shape %s needs %zu bytes, the file has %zu after its "
                       "%zu-byte header",
                       kiln_dtype_name(header.dtype), shape_text, byte_size, data_size,
                       data_offset);
  }
  if (data_size > byte_size) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%zu trailing bytes: %s shape %s needs %zu bytes, the file has %zu after "
                       "its %zu-byte header",
                       data_size - byte_size, kiln_dtype_name(header.dtype), shape_text, byte_size,
                       data_size, data_offset);
  }
  return kiln_tensor_create_copy(allocator, header.dtype, header.ndim, header.shape,
                                 bytes + data_offset, data_size, out_tensor);
}

kiln_status_t kiln_npy_parse(kiln_allocator_t allocator, const void *bytes, size_t size,
                             const char *source_name, kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  const char *name = source_name ? source_name : "<memory>";
  if (bytes == NULL && size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: bytes are NULL", name);
  }
  kiln_status_t status = kiln_npy_parse_bytes(allocator, bytes, size, out_tensor);
  return kiln_status_annotate(status, "%s", name);
}

kiln_status_t kiln_npy_read_file(kiln_allocator_t allocator, const char *path,
                                 kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, path, &bytes, &size));
  kiln_status_t status = kiln_npy_parse(allocator, bytes, size, path, out_tensor);
  kiln_allocator_free(allocator, bytes);
  return status;
}

/* ---- writing ---- */

kiln_status_t kiln_npy_serialize(kiln_allocator_t allocator, const kiln_tensor_t *tensor,
                                 void **out_bytes, size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  kiln_dtype_t dtype = kiln_tensor_dtype(tensor);
  const char *descr = kiln_dtype_numpy_descr(dtype);
  if (descr == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "a %s tensor cannot be written to .npy: NumPy has no %s dtype (convert it "
                       "to float32 first)",
                       kiln_dtype_name(dtype), kiln_dtype_name(dtype));
  }
  int ndim = kiln_tensor_ndim(tensor);
  const int64_t *shape = kiln_tensor_shape(tensor);
  char shape_text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(ndim, shape, shape_text, sizeof(shape_text));
  char dict[KILN_SHAPE_TEXT_CAPACITY + 64];
  int dict_length =
      snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
               shape_text);
  size_t growth = 0;
  if (ndim > 0) {
    int digits = snprintf(NULL, 0, "%" PRId64, shape[0]);
    growth = digits < KILN_NPY_GROWTH_DIGITS ? (size_t)(KILN_NPY_GROWTH_DIGITS - digits) : 0;
  }
  /* The dict, the growth spaces and the final '\n', before alignment padding. */
  size_t text_length = (size_t)dict_length + growth + 1;
  size_t preamble = KILN_NPY_MAGIC_SIZE + 2 + 2;
  size_t padding = KILN_NPY_ALIGNMENT - (preamble + text_length) % KILN_NPY_ALIGNMENT;
  unsigned char major = 1;
  if (text_length + padding > UINT16_MAX) {
    major = 2;
    preamble = KILN_NPY_MAGIC_SIZE + 2 + 4;
    padding = KILN_NPY_ALIGNMENT - (preamble + text_length) % KILN_NPY_ALIGNMENT;
  }
  size_t header_length = text_length + padding;
  size_t byte_size = kiln_tensor_byte_size(tensor);
  size_t total;
  if (!kiln_size_add(preamble + header_length, byte_size, &total)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, ".npy of a %zu-byte tensor is too large", byte_size);
  }
  void *block = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, total, &block));
  unsigned char *out = block;
  memcpy(out, kiln_npy_magic, KILN_NPY_MAGIC_SIZE);
  out[6] = major;
  out[7] = 0;
  for (size_t i = 0; i < preamble - 8; ++i) {
    out[8 + i] = (unsigned char)(header_length >> (8 * i));
  }
  memcpy(out + preamble, dict, (size_t)dict_length);
  memset(out + preamble + dict_length, ' ', header_length - (size_t)dict_length - 1);
  out[preamble + header_length - 1] = '\n';
  if (byte_size > 0) {
    memcpy(out + preamble + header_length, kiln_tensor_data(tensor), byte_size);
  }
  *out_bytes = block;
  *out_size = total;
  return KILN_OK;
}

kiln_status_t kiln_npy_write_file(kiln_allocator_t allocator, const kiln_tensor_t *tensor,
                                  const char *path) {
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_npy_serialize(allocator, tensor, &bytes, &size), "%s", path);
  kiln_status_t status = kiln_file_write_all(path, bytes, size);
  kiln_allocator_free(allocator, bytes);
  return status;
}
