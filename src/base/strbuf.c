/*
 * String builder implementation.
 *
 * Every append goes through kiln_strbuf_grow_for, which checks length + extra
 * + 1 for overflow, doubles the capacity (or takes exactly what is needed when
 * that is more), and reallocates; the NUL is rewritten after each append, so
 * the buffer is a valid C string between calls. appendf formats twice: once
 * with vsnprintf into nothing to measure, then into the grown buffer.
 */
#include "base/strbuf.h"

#include <stdio.h>
#include <string.h>

#define KILN_STRBUF_MIN_CAPACITY 64

void kiln_strbuf_initialize(kiln_strbuf_t *sb, kiln_allocator_t allocator) {
  *sb = (kiln_strbuf_t){.allocator = allocator};
}

void kiln_strbuf_deinitialize(kiln_strbuf_t *sb) {
  kiln_allocator_free(sb->allocator, sb->data);
  sb->data = NULL;
  sb->length = 0;
  sb->capacity = 0;
}

/* Makes the buffer at least `capacity` bytes; on failure nothing changes. */
static kiln_status_t kiln_strbuf_set_capacity(kiln_strbuf_t *sb, size_t capacity) {
  void *data = sb->data;
  KILN_RETURN_IF_ERROR(kiln_allocator_realloc(sb->allocator, capacity, &data));
  sb->data = data;
  if (sb->capacity == 0) {
    sb->data[0] = '\0';
  }
  sb->capacity = capacity;
  return KILN_OK;
}

/* Makes room for `extra` more bytes of text and the NUL. */
static kiln_status_t kiln_strbuf_grow_for(kiln_strbuf_t *sb, size_t extra) {
  size_t needed;
  if (!kiln_size_add(sb->length, extra, &needed) || !kiln_size_add(needed, 1, &needed)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "string of %zu bytes cannot grow by %zu bytes",
                       sb->length, extra);
  }
  if (KILN_LIKELY(needed <= sb->capacity)) {
    return KILN_OK;
  }
  size_t capacity = KILN_STRBUF_MIN_CAPACITY;
  if (sb->capacity > 0 && !kiln_size_mul(sb->capacity, 2, &capacity)) {
    capacity = needed;
  }
  if (capacity < needed) {
    capacity = needed;
  }
  return kiln_strbuf_set_capacity(sb, capacity);
}

kiln_status_t kiln_strbuf_reserve(kiln_strbuf_t *sb, size_t length) {
  size_t needed;
  if (!kiln_size_add(length, 1, &needed)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "string of %zu bytes overflows size_t", length);
  }
  if (needed <= sb->capacity) {
    return KILN_OK;
  }
  return kiln_strbuf_set_capacity(sb, needed);
}

kiln_status_t kiln_strbuf_append_n(kiln_strbuf_t *sb, const char *text, size_t n) {
  if (n == 0) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_grow_for(sb, n));
  memcpy(sb->data + sb->length, text, n);
  sb->length += n;
  sb->data[sb->length] = '\0';
  return KILN_OK;
}

kiln_status_t kiln_strbuf_append(kiln_strbuf_t *sb, const char *text) {
  return kiln_strbuf_append_n(sb, text, strlen(text));
}

kiln_status_t kiln_strbuf_append_char(kiln_strbuf_t *sb, char c) {
  return kiln_strbuf_append_n(sb, &c, 1);
}

kiln_status_t kiln_strbuf_appendf_v(kiln_strbuf_t *sb, const char *format, va_list args) {
  va_list measure;
  va_copy(measure, args);
  int length = vsnprintf(NULL, 0, format, measure);
  va_end(measure);
  if (length < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "formatting \"%s\" failed", format);
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_grow_for(sb, (size_t)length));
  vsnprintf(sb->data + sb->length, (size_t)length + 1, format, args);
  sb->length += (size_t)length;
  return KILN_OK;
}

kiln_status_t kiln_strbuf_appendf(kiln_strbuf_t *sb, const char *format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = kiln_strbuf_appendf_v(sb, format, args);
  va_end(args);
  return status;
}

const char *kiln_strbuf_c_str(const kiln_strbuf_t *sb) {
  return sb->data ? sb->data : "";
}

size_t kiln_strbuf_length(const kiln_strbuf_t *sb) {
  return sb->length;
}

void kiln_strbuf_reset(kiln_strbuf_t *sb) {
  sb->length = 0;
  if (sb->data) {
    sb->data[0] = '\0';
  }
}

kiln_status_t kiln_strbuf_take(kiln_strbuf_t *sb, char **out_text) {
  *out_text = NULL;
  if (!sb->data) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_set_capacity(sb, 1));
  }
  *out_text = sb->data;
  sb->data = NULL;
  sb->length = 0;
  sb->capacity = 0;
  return KILN_OK;
}
