/*
 * String builders.
 *
 * A kiln_strbuf_t accumulates text in one growable, always NUL-terminated
 * buffer from the allocator it was given; code generators and error reports
 * build their output with it. Capacity doubles as needed (starting at 64
 * bytes), with overflow checks, and a failed growth leaves the text as it was.
 * kiln_strbuf_c_str is "" before anything is appended, without allocating.
 * kiln_strbuf_take hands the buffer to the caller and leaves the builder
 * empty, so a finished string is not copied. Text appended must not point
 * into the builder itself, since growth may move it.
 */
#ifndef KILN_BASE_STRBUF_H_
#define KILN_BASE_STRBUF_H_

#include <stdarg.h>
#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

typedef struct kiln_strbuf_t {
  kiln_allocator_t allocator;
  char *data;      /* NULL until the first growth */
  size_t length;   /* bytes before the terminating NUL */
  size_t capacity; /* bytes of `data`, NUL included */
} kiln_strbuf_t;

/* Makes an empty builder (no allocation). */
void kiln_strbuf_initialize(kiln_strbuf_t *sb, kiln_allocator_t allocator);
/* Frees the buffer; the builder is left empty and usable. */
void kiln_strbuf_deinitialize(kiln_strbuf_t *sb);

/* Makes room for `length` bytes of text in total (plus the NUL). */
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_reserve(kiln_strbuf_t *sb, size_t length);
/* Appends a NUL-terminated string. */
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_append(kiln_strbuf_t *sb, const char *text);
/* Appends `n` bytes of `text` (`text` may be NULL when n is 0). */
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_append_n(kiln_strbuf_t *sb, const char *text,
                                                        size_t n);
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_append_char(kiln_strbuf_t *sb, char c);
/* Appends printf-style formatted text; INVALID_ARGUMENT when formatting fails. */
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_appendf(kiln_strbuf_t *sb, const char *format, ...)
    KILN_PRINTF_FORMAT(2, 3);
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_appendf_v(kiln_strbuf_t *sb, const char *format,
                                                         va_list args) KILN_PRINTF_FORMAT(2, 0);

/* The text so far, NUL-terminated; valid until the builder next changes. */
const char *kiln_strbuf_c_str(const kiln_strbuf_t *sb);
size_t kiln_strbuf_length(const kiln_strbuf_t *sb);
/* Empties the text and keeps the capacity. */
void kiln_strbuf_reset(kiln_strbuf_t *sb);
/* Hands the text to the caller, who frees it with the builder's allocator; the
 * builder is left empty and usable. Allocates a 1-byte "" when nothing was
 * ever appended, so *out_text is never NULL on success. */
KILN_MUST_USE_RESULT kiln_status_t kiln_strbuf_take(kiln_strbuf_t *sb, char **out_text);

#endif /* KILN_BASE_STRBUF_H_ */
