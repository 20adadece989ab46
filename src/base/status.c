/*
 * Status objects.
 *
 * A failed status is one malloc'd block: the struct followed by its message.
 * Annotating reallocates the block with the context in front. Statuses use the
 * C heap rather than a passed-in allocator because they must be creatable
 * anywhere, including inside an allocator that has just failed. When even that
 * heap fails, the status becomes a static out-of-memory status whose free is a
 * no-op. A process-wide atomic counter tracks live statuses so tests can prove
 * that every error path frees what it made.
 */
#include "kiln/status.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kiln_status_s {
  kiln_status_code_t code;
  int line;
  const char *file;
  size_t message_length;
  char message[]; /* NUL-terminated */
};

static struct kiln_status_s kiln_status_out_of_memory_ = {
    .code = KILN_STATUS_CODE_RESOURCE_EXHAUSTED,
    .line = __LINE__,
    .file = __FILE__,
    .message_length = 0,
};
/* The flexible message of the static status is empty; its text lives here. */
static const char kiln_status_out_of_memory_message_[] = "out of memory while reporting an error";

static atomic_llong kiln_status_live_;

static int kiln_status_is_static(kiln_status_t status) {
  return status == &kiln_status_out_of_memory_;
}

static const char *kiln_status_basename(const char *file) {
  /* Keep paths short and stable: "src/base/npy.c" rather than an absolute path. */
  const char *src = strstr(file, "/src/");
  if (src) {
    return src + 1;
  }
  const char *tests = strstr(file, "/tests/");
  return tests ? tests + 1 : file;
}

kiln_status_t kiln_status_make_v(kiln_status_code_t code, const char *file, int line,
                                 const char *format, va_list args) {
  if (code == KILN_STATUS_CODE_OK) {
    return KILN_OK;
  }
  va_list measure;
  va_copy(measure, args);
  int length = vsnprintf(NULL, 0, format, measure);
  va_end(measure);
  if (length < 0) {
    length = 0;
  }
  struct kiln_status_s *status = malloc(sizeof(*status) + (size_t)length + 1);
  if (!status) {
    return &kiln_status_out_of_memory_;
  }
  status->code = code;
  status->file = kiln_status_basename(file);
  status->line = line;
  status->message_length = (size_t)length;
  vsnprintf(status->message, (size_t)length + 1, format, args);
  atomic_fetch_add(&kiln_status_live_, 1);
  return status;
}

kiln_status_t kiln_status_make(kiln_status_code_t code, const char *file, int line,
                               const char *format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = kiln_status_make_v(code, file, line, format, args);
  va_end(args);
  return status;
}

kiln_status_t kiln_status_annotate(kiln_status_t status, const char *format, ...) {
  if (status == NULL || kiln_status_is_static(status)) {
    return status;
  }
  va_list args;
  va_start(args, format);
  va_list measure;
  va_copy(measure, args);
  int context_length = vsnprintf(NULL, 0, format, measure);
  va_end(measure);
  if (context_length < 0) {
    va_end(args);
    return status;
  }
  size_t prefix = (size_t)context_length + 2; /* "context: " */
  size_t total = prefix + status->message_length;
  struct kiln_status_s *grown = realloc(status, sizeof(*status) + total + 1);
  if (!grown) {
    va_end(args);
    return status; /* keep the original message rather than lose the error */
  }
  memmove(grown->message + prefix, grown->message, grown->message_length + 1);
  /* Writes context_length characters and a NUL that the separator replaces. */
  vsnprintf(grown->message, (size_t)context_length + 1, format, args);
  grown->message[context_length] = ':';
  grown->message[context_length + 1] = ' ';
  grown->message_length = total;
  va_end(args);
  return grown;
}

kiln_status_code_t kiln_status_code(kiln_status_t status) {
  return status ? status->code : KILN_STATUS_CODE_OK;
}

const char *kiln_status_message(kiln_status_t status) {
  if (!status) {
    return "";
  }
  return kiln_status_is_static(status) ? kiln_status_out_of_memory_message_ : status->message;
}

const char *kiln_status_file(kiln_status_t status) {
  return status ? status->file : "";
}

int kiln_status_line(kiln_status_t status) {
  return status ? status->line : 0;
}

const char *kiln_status_code_name(kiln_status_code_t code) {
  static const char *const names[] = {
#define KILN_STATUS_CODE_NAME_(name, text) #name,
      KILN_STATUS_CODE_LIST(KILN_STATUS_CODE_NAME_)
#undef KILN_STATUS_CODE_NAME_
  };
  _Static_assert(sizeof(names) / sizeof(names[0]) == KILN_STATUS_CODE_COUNT_,
                 "one name per status code");
  if ((unsigned)code >= KILN_STATUS_CODE_COUNT_) {
    return "UNKNOWN";
  }
  return names[code];
}

size_t kiln_status_format(kiln_status_t status, char *buffer, size_t capacity) {
  int n;
  if (!status) {
    n = snprintf(buffer, capacity, "OK");
  } else {
    n = snprintf(buffer, capacity, "%s: %s (%s:%d)", kiln_status_code_name(status->code),
                 kiln_status_message(status), status->file, status->line);
  }
  return n < 0 ? 0 : (size_t)n;
}

char *kiln_status_to_string(kiln_status_t status) {
  size_t length = kiln_status_format(status, NULL, 0);
  char *text = malloc(length + 1);
  if (text) {
    kiln_status_format(status, text, length + 1);
  }
  return text;
}

void kiln_status_free(kiln_status_t status) {
  if (status == NULL || kiln_status_is_static(status)) {
    return;
  }
  atomic_fetch_sub(&kiln_status_live_, 1);
  free(status);
}

int kiln_status_consume_ok(kiln_status_t status) {
  int ok = status == NULL;
  kiln_status_free(status);
  return ok;
}

int64_t kiln_status_live_count(void) {
  return (int64_t)atomic_load(&kiln_status_live_);
}
