/*
 * kiln_status_t: errors as values.
 *
 * Every call that can fail at run time returns a kiln_status_t. NULL means
 * success and costs nothing; a failure is a heap object carrying a code, a
 * printf-style message, and the file and line where it was made. As the status
 * travels up the stack, callers may annotate it with context ("while reading
 * model.onnx: ..."), which prepends to the message without losing the origin.
 * Whoever receives a non-NULL status owns it and must either return it,
 * annotate and return it, or free it. Functions that return a status are
 * marked KILN_MUST_USE_RESULT so the compiler reports a dropped one.
 *
 * A status that cannot be allocated (the process is out of memory) becomes a
 * static out-of-memory status; freeing it is a no-op, so callers need not care.
 */
#ifndef KILN_STATUS_H_
#define KILN_STATUS_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define KILN_MUST_USE_RESULT     __attribute__((warn_unused_result))
#define KILN_PRINTF_FORMAT(f, a) __attribute__((format(printf, f, a)))
#define KILN_LIKELY(x)           __builtin_expect(!!(x), 1)
#define KILN_UNLIKELY(x)         __builtin_expect(!!(x), 0)
#else
#define KILN_MUST_USE_RESULT
#define KILN_PRINTF_FORMAT(f, a)
#define KILN_LIKELY(x)   (x)
#define KILN_UNLIKELY(x) (x)
#endif

/* The status codes, as an X-macro so names and values are written once. */
#define KILN_STATUS_CODE_LIST(X)                \
  X(OK, "ok")                                   \
  X(INVALID_ARGUMENT, "invalid argument")       \
  X(NOT_FOUND, "not found")                     \
  X(ALREADY_EXISTS, "already exists")           \
  X(OUT_OF_RANGE, "out of range")               \
  X(RESOURCE_EXHAUSTED, "resource exhausted")   \
  X(FAILED_PRECONDITION, "failed precondition") \
  X(DATA_LOSS, "data loss")                     \
  X(UNIMPLEMENTED, "unimplemented")             \
  X(UNAVAILABLE, "unavailable")                 \
  X(IO_ERROR, "i/o error")                      \
  X(CANCELLED, "cancelled")                     \
  X(INTERNAL, "internal error")

typedef enum kiln_status_code_e {
#define KILN_STATUS_CODE_ENUM_(name, text) KILN_STATUS_CODE_##name,
  KILN_STATUS_CODE_LIST(KILN_STATUS_CODE_ENUM_)
#undef KILN_STATUS_CODE_ENUM_
      KILN_STATUS_CODE_COUNT_
} kiln_status_code_t;

typedef struct kiln_status_s *kiln_status_t;

#define KILN_OK ((kiln_status_t)NULL)

/* Makes a status. Prefer the KILN_STATUS macro, which fills in file and line. */
KILN_MUST_USE_RESULT kiln_status_t kiln_status_make(kiln_status_code_t code, const char *file,
                                                    int line, const char *format, ...)
    KILN_PRINTF_FORMAT(4, 5);
KILN_MUST_USE_RESULT kiln_status_t kiln_status_make_v(kiln_status_code_t code, const char *file,
                                                      int line, const char *format, va_list args)
    KILN_PRINTF_FORMAT(4, 0);

#define KILN_STATUS(code, ...) \
  kiln_status_make(KILN_STATUS_CODE_##code, __FILE__, __LINE__, __VA_ARGS__)

/* Prepends context to the message: "context: original message". Takes
 * ownership of `status` and returns it (NULL stays NULL). */
KILN_MUST_USE_RESULT kiln_status_t kiln_status_annotate(kiln_status_t status, const char *format,
                                                        ...) KILN_PRINTF_FORMAT(2, 3);

/* Returns `expr`'s status from the enclosing function when it failed. */
#define KILN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    kiln_status_t kiln_status_tmp_ = (expr);     \
    if (KILN_UNLIKELY(kiln_status_tmp_ != NULL)) \
      return kiln_status_tmp_;                   \
  } while (0)

/* As KILN_RETURN_IF_ERROR, adding context to the message on the way out. */
#define KILN_RETURN_IF_ERROR_ANNOTATE(expr, ...)                  \
  do {                                                            \
    kiln_status_t kiln_status_tmp_ = (expr);                      \
    if (KILN_UNLIKELY(kiln_status_tmp_ != NULL))                  \
      return kiln_status_annotate(kiln_status_tmp_, __VA_ARGS__); \
  } while (0)

kiln_status_code_t kiln_status_code(kiln_status_t status);
/* The message with all annotations; "" for NULL. Valid until the status is freed. */
const char *kiln_status_message(kiln_status_t status);
/* Where the status was made; "" and 0 for NULL. */
const char *kiln_status_file(kiln_status_t status);
int kiln_status_line(kiln_status_t status);
const char *kiln_status_code_name(kiln_status_code_t code);

/* "INVALID_ARGUMENT: message (src/foo.c:12)" into `buffer`; returns the length
 * the full text needs, as snprintf does. */
size_t kiln_status_format(kiln_status_t status, char *buffer, size_t capacity);
/* The same text in a new heap string the caller frees with free(); NULL when
 * out of memory. */
char *kiln_status_to_string(kiln_status_t status);

void kiln_status_free(kiln_status_t status);

/* Frees the status and returns whether it was OK; for callers that handle a
 * failure by falling back (use sparingly, never to hide an error). */
int kiln_status_consume_ok(kiln_status_t status);

/* Number of statuses made and not yet freed, process-wide; tests assert it
 * returns to where it started. */
int64_t kiln_status_live_count(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_STATUS_H_ */
