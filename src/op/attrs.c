/*
 * Operator attributes: defaults, text values, validation and printing, all
 * driven by each operator's field table (kiln_attr_field_t).
 *
 * One spelling serves the defaults in the field tables, the IR text format
 * and the printer: integers (3, -1), floats in their shortest round-trip form
 * (1e-05), True/False, double-quoted strings ("NCHW"), dtypes as quoted names
 * ("float32") and bracketed lists ([1, 1], []). Parsing a printed value gives
 * back the same bits, so print -> parse -> print is the identity.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op/op.h"

/* ---- scalar spellings ---- */

static const char *kiln_attr_skip_space(const char *text) {
  while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r') {
    ++text;
  }
  return text;
}

static kiln_status_t kiln_attr_parse_int(const char *text, const char **out_end,
                                         int64_t *out_value) {
  errno = 0;
  char *end = NULL;
  long long value = strtoll(text, &end, 10);
  if (end == text || errno == ERANGE) {
    return KILN_STATUS(INVALID_ARGUMENT, "expected an integer at '%.20s'", text);
  }
  *out_end = end;
  *out_value = value;
  return KILN_OK;
}

static kiln_status_t kiln_attr_parse_float(const char *text, const char **out_end,
                                           double *out_value) {
  char *end = NULL;
  double value = strtod(text, &end);
  if (end == text) {
    return KILN_STATUS(INVALID_ARGUMENT, "expected a number at '%.20s'", text);
  }
  *out_end = end;
  *out_value = value;
  return KILN_OK;
}

/* Shortest "%.{p}g" that reads back to the same double. */
static kiln_status_t kiln_attr_format_float(double value, kiln_strbuf_t *sb) {
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (strtod(buffer, NULL) == value || isnan(value)) {
      break;
    }
  }
  return kiln_strbuf_append(sb, buffer);
}

/* A double-quoted string without escapes, copied into the arena. */
static kiln_status_t kiln_attr_parse_string(const char *text, const char **out_end,
                                            kiln_arena_t *arena, char **out_value) {
  if (*text != '"') {
    return KILN_STATUS(INVALID_ARGUMENT, "expected a double-quoted string at '%.20s'", text);
  }
  const char *close = strchr(text + 1, '"');
  if (!close) {
    return KILN_STATUS(INVALID_ARGUMENT, "unterminated string %.20s", text);
  }
  size_t length = (size_t)(close - text - 1);
  char *value = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, length + 1, 1, (void **)&value));
  memcpy(value, text + 1, length);
  value[length] = '\0';
  *out_end = close + 1;
  *out_value = value;
  return KILN_OK;
}

/* [a, b, ...] of ints (as_float 0) or floats (as_float 1) into the arena. */
static kiln_status_t kiln_attr_parse_list(const char *text, const char **out_end, int as_float,
                                          kiln_arena_t *arena, int32_t *out_count,
                                          void **out_values) {
  if (*text != '[') {
    return KILN_STATUS(INVALID_ARGUMENT, "expected a list [...] at '%.20s'", text);
  }
  /* Count the elements first: commas + 1 unless empty. */
  const char *close = strchr(text, ']');
  if (!close) {
    return KILN_STATUS(INVALID_ARGUMENT, "unterminated list %.20s", text);
  }
  int32_t capacity = 1;
  for (const char *p = text + 1; p < close; ++p) {
    capacity += *p == ',';
  }
  void *values = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(int64_t) * (size_t)capacity, 8, &values));
  int32_t count = 0;
  const char *p = kiln_attr_skip_space(text + 1);
  while (*p != ']') {
    if (count > 0) {
      if (*p != ',') {
        return KILN_STATUS(INVALID_ARGUMENT, "expected ',' or ']' in list at '%.20s'", p);
      }
      p = kiln_attr_skip_space(p + 1);
    }
    if (as_float) {
      KILN_RETURN_IF_ERROR(kiln_attr_parse_float(p, &p, &((double *)values)[count]));
    } else {
      KILN_RETURN_IF_ERROR(kiln_attr_parse_int(p, &p, &((int64_t *)values)[count]));
    }
    ++count;
    p = kiln_attr_skip_space(p);
  }
  *out_end = p + 1;
  *out_count = count;
  *out_values = values;
  return KILN_OK;
}

static kiln_status_t kiln_attr_parse_value(const kiln_attr_field_t *field, const char *text,
                                           kiln_arena_t *arena, void *slot) {
  const char *p = kiln_attr_skip_space(text);
  const char *end = p;
  switch (field->kind) {
  case KILN_ATTR_KIND_INT:
    KILN_RETURN_IF_ERROR(kiln_attr_parse_int(p, &end, (int64_t *)slot));
    break;
  case KILN_ATTR_KIND_FLOAT:
    KILN_RETURN_IF_ERROR(kiln_attr_parse_float(p, &end, (double *)slot));
    break;
  case KILN_ATTR_KIND_BOOL:
    if (strncmp(p, "True", 4) == 0 || strncmp(p, "False", 5) == 0) {
      *(bool *)slot = *p == 'T';
      end = p + (*p == 'T' ? 4 : 5);
    } else {
      return KILN_STATUS(INVALID_ARGUMENT, "expected True or False at '%.20s'", p);
    }
    break;
  case KILN_ATTR_KIND_STRING:
    KILN_RETURN_IF_ERROR(kiln_attr_parse_string(p, &end, arena, (char **)slot));
    break;
  case KILN_ATTR_KIND_DTYPE: {
    char *name = NULL;
    KILN_RETURN_IF_ERROR(kiln_attr_parse_string(p, &end, arena, &name));
    KILN_RETURN_IF_ERROR(kiln_dtype_from_name(name, (kiln_dtype_t *)slot));
    break;
  }
  case KILN_ATTR_KIND_INTS: {
    kiln_ints_t *ints = slot;
    void *values = NULL;
    KILN_RETURN_IF_ERROR(kiln_attr_parse_list(p, &end, 0, arena, &ints->count, &values));
    ints->values = values;
    break;
  }
  case KILN_ATTR_KIND_FLOATS: {
    kiln_floats_t *floats = slot;
    void *values = NULL;
    KILN_RETURN_IF_ERROR(kiln_attr_parse_list(p, &end, 1, arena, &floats->count, &values));
    floats->values = values;
    break;
  }
  }
  end = kiln_attr_skip_space(end);
  if (*end != '\0') {
    return KILN_STATUS(INVALID_ARGUMENT, "unexpected '%.20s' after the value", end);
  }
  return KILN_OK;
}

/* ---- public ---- */

const kiln_attr_field_t *kiln_op_attr_field(const kiln_op_t *op, const char *name) {
  for (int i = 0; i < op->num_attr_fields; ++i) {
    if (strcmp(op->attr_fields[i].name, name) == 0) {
      return &op->attr_fields[i];
    }
  }
  return NULL;
}

kiln_status_t kiln_op_attrs_set_text(const kiln_op_t *op, void *attrs, const char *name,
                                     const char *text, kiln_arena_t *arena) {
  const kiln_attr_field_t *field = kiln_op_attr_field(op, name);
  if (!field) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s has no attribute '%s'", op->name, name);
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_attr_parse_value(field, text, arena, (char *)attrs + field->offset),
      "%s attribute %s=%s", op->name, name, text);
  return KILN_OK;
}

kiln_status_t kiln_op_attrs_validate(const kiln_op_t *op, const void *attrs) {
  if (!op->validate_attrs) {
    return KILN_OK;
  }
  return op->validate_attrs(op, attrs);
}

kiln_status_t kiln_op_attrs_create_default(const kiln_op_t *op, kiln_arena_t *arena,
                                           void **out_attrs) {
  *out_attrs = NULL;
  if (op->attrs_size == 0) {
    return KILN_OK;
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(arena, op->attrs_size, 16, &attrs));
  for (int i = 0; i < op->num_attr_fields; ++i) {
    const kiln_attr_field_t *field = &op->attr_fields[i];
    KILN_RETURN_IF_ERROR(
        kiln_op_attrs_set_text(op, attrs, field->name, field->default_text, arena));
  }
  KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(op, attrs));
  *out_attrs = attrs;
  return KILN_OK;
}

_Static_assert(sizeof(kiln_ints_t) == sizeof(kiln_floats_t) &&
                   offsetof(kiln_ints_t, values) == offsetof(kiln_floats_t, values) &&
                   sizeof(int64_t) == sizeof(double),
               "kiln_attr_copy_value copies both lists as kiln_ints_t");

/* Copies one field's value from `from` into `to`, its strings and lists
 * into `arena`. */
static kiln_status_t kiln_attr_copy_value(const kiln_attr_field_t *field, const void *from,
                                          void *to, kiln_arena_t *arena) {
  if (field->kind == KILN_ATTR_KIND_STRING) {
    const char *text = *(const char *const *)from;
    return text ? kiln_arena_strdup(arena, text, (char **)to) : KILN_OK;
  }
  if (field->kind == KILN_ATTR_KIND_INTS || field->kind == KILN_ATTR_KIND_FLOATS) {
    /* kiln_ints_t and kiln_floats_t: a count and 8-byte values */
    const kiln_ints_t *list = from;
    kiln_ints_t *copy = to;
    copy->count = list->count;
    void *values = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(list->count ? list->count : 1),
                                                   sizeof(int64_t), 8, &values));
    if (list->count > 0) {
      memcpy(values, list->values, (size_t)list->count * sizeof(int64_t));
    }
    copy->values = values;
    return KILN_OK;
  }
  size_t size = field->kind == KILN_ATTR_KIND_BOOL    ? sizeof(bool)
                : field->kind == KILN_ATTR_KIND_DTYPE ? sizeof(kiln_dtype_t)
                                                      : sizeof(int64_t); /* int, double */
  memcpy(to, from, size);
  return KILN_OK;
}

kiln_status_t kiln_op_attrs_copy(const kiln_op_t *op, const void *attrs, kiln_arena_t *arena,
                                 void **out_attrs) {
  void *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, arena, &copy));
  for (int i = 0; copy && attrs && i < op->num_attr_fields; ++i) {
    const kiln_attr_field_t *field = &op->attr_fields[i];
    KILN_RETURN_IF_ERROR(kiln_attr_copy_value(field, (const char *)attrs + field->offset,
                                              (char *)copy + field->offset, arena));
  }
  *out_attrs = copy;
  return KILN_OK;
}

static kiln_status_t kiln_attr_format_value(const kiln_attr_field_t *field, const void *slot,
                                            kiln_strbuf_t *sb) {
  switch (field->kind) {
  case KILN_ATTR_KIND_INT:
    return kiln_strbuf_appendf(sb, "%lld", (long long)*(const int64_t *)slot);
  case KILN_ATTR_KIND_FLOAT:
    return kiln_attr_format_float(*(const double *)slot, sb);
  case KILN_ATTR_KIND_BOOL:
    return kiln_strbuf_append(sb, *(const bool *)slot ? "True" : "False");
  case KILN_ATTR_KIND_STRING: {
    const char *text = *(const char *const *)slot;
    return kiln_strbuf_appendf(sb, "\"%s\"", text ? text : "");
  }
  case KILN_ATTR_KIND_DTYPE:
    return kiln_strbuf_appendf(sb, "\"%s\"", kiln_dtype_name(*(const kiln_dtype_t *)slot));
  case KILN_ATTR_KIND_INTS: {
    const kiln_ints_t *ints = slot;
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '['));
    for (int32_t i = 0; i < ints->count; ++i) {
      KILN_RETURN_IF_ERROR(
          kiln_strbuf_appendf(sb, "%s%lld", i ? ", " : "", (long long)ints->values[i]));
    }
    return kiln_strbuf_append_char(sb, ']');
  }
  case KILN_ATTR_KIND_FLOATS: {
    const kiln_floats_t *floats = slot;
    KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '['));
    for (int32_t i = 0; i < floats->count; ++i) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, i ? ", " : ""));
      KILN_RETURN_IF_ERROR(kiln_attr_format_float(floats->values[i], sb));
    }
    return kiln_strbuf_append_char(sb, ']');
  }
  }
  return KILN_STATUS(INTERNAL, "attribute %s has kind %d", field->name, (int)field->kind);
}

kiln_status_t kiln_op_attrs_format(const kiln_op_t *op, const void *attrs, kiln_strbuf_t *sb) {
  for (int i = 0; i < op->num_attr_fields; ++i) {
    const kiln_attr_field_t *field = &op->attr_fields[i];
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%s%s=", i ? ", " : "", field->name));
    KILN_RETURN_IF_ERROR(kiln_attr_format_value(field, (const char *)attrs + field->offset, sb));
  }
  return KILN_OK;
}

kiln_status_t kiln_op_attrs_format_field(const kiln_op_t *op, const void *attrs,
                                         const kiln_attr_field_t *field, kiln_strbuf_t *sb) {
  (void)op;
  return kiln_attr_format_value(field, (const char *)attrs + field->offset, sb);
}

/* Room for a value of any kind, to read a default into. */
typedef union kiln_attr_slot_t {
  int64_t i;
  double f;
  bool b;
  const char *s;
  kiln_dtype_t t;
  kiln_ints_t ints;
  kiln_floats_t floats;
} kiln_attr_slot_t;

/* Formats the field's value and its default into `value` and `fallback`. */
static kiln_status_t kiln_attr_format_both(const kiln_attr_field_t *field, const void *attrs,
                                           kiln_arena_t *arena, kiln_strbuf_t *value,
                                           kiln_strbuf_t *fallback) {
  kiln_attr_slot_t slot;
  memset(&slot, 0, sizeof(slot));
  KILN_RETURN_IF_ERROR(kiln_attr_parse_value(field, field->default_text, arena, &slot));
  KILN_RETURN_IF_ERROR(kiln_attr_format_value(field, &slot, fallback));
  return kiln_attr_format_value(field, (const char *)attrs + field->offset, value);
}

kiln_status_t kiln_op_attrs_field_is_default(const kiln_op_t *op, const void *attrs,
                                             const kiln_attr_field_t *field,
                                             kiln_allocator_t allocator, bool *out_is_default) {
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, KILN_ARENA_MIN_BLOCK_SIZE);
  kiln_strbuf_t value, fallback;
  kiln_strbuf_initialize(&value, allocator);
  kiln_strbuf_initialize(&fallback, allocator);
  kiln_status_t status = kiln_attr_format_both(field, attrs, &arena, &value, &fallback);
  if (status == KILN_OK) {
    *out_is_default = strcmp(kiln_strbuf_c_str(&value), kiln_strbuf_c_str(&fallback)) == 0;
  } else {
    status = kiln_status_annotate(status, "%s attribute %s", op->name, field->name);
  }
  kiln_strbuf_deinitialize(&fallback);
  kiln_strbuf_deinitialize(&value);
  kiln_arena_deinitialize(&arena);
  return status;
}
