/*
 * Logging; see log.h.
 *
 * The level is an atomic int that starts at -1 ("not read yet"); the first
 * reader parses KILN_LOG_LEVEL and publishes the result, and a racing second
 * reader at worst parses it again to the same value. The sink is swapped under
 * a mutex, and each message is formatted into one buffer and written with one
 * call, so lines from different threads do not interleave.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static atomic_int kiln_log_level_ = -1;
static pthread_mutex_t kiln_log_mutex_ = PTHREAD_MUTEX_INITIALIZER;
static kiln_log_sink_fn kiln_log_sink_ = NULL;
static void *kiln_log_sink_self_ = NULL;

static const char *const kiln_log_level_names_[] = {"error", "warn", "info", "debug", "trace"};

const char *kiln_log_level_name(kiln_log_level_t level) {
  if ((unsigned)level > KILN_LOG_LEVEL_TRACE) {
    return "invalid";
  }
  return kiln_log_level_names_[level];
}

kiln_status_t kiln_log_level_parse(const char *text, kiln_log_level_t *out_level) {
  for (int level = KILN_LOG_LEVEL_ERROR; level <= KILN_LOG_LEVEL_TRACE; ++level) {
    char digit[2] = {(char)('0' + level), '\0'};
    if (strcasecmp(text, kiln_log_level_names_[level]) == 0 || strcmp(text, digit) == 0) {
      *out_level = (kiln_log_level_t)level;
      return KILN_OK;
    }
  }
  if (strcasecmp(text, "warning") == 0) {
    *out_level = KILN_LOG_LEVEL_WARN;
    return KILN_OK;
  }
  return KILN_STATUS(INVALID_ARGUMENT,
                     "log level '%s' is not one of error, warn, info, debug, trace, 0-4", text);
}

static kiln_log_level_t kiln_log_level_from_environment(void) {
  const char *text = getenv("KILN_LOG_LEVEL");
  kiln_log_level_t level = KILN_LOG_LEVEL_WARN;
  if (text && *text) {
    kiln_status_t status = kiln_log_level_parse(text, &level);
    if (status) {
      fprintf(stderr, "kiln: KILN_LOG_LEVEL: %s; using warn\n", kiln_status_message(status));
      kiln_status_free(status);
      level = KILN_LOG_LEVEL_WARN;
    }
  }
  return level;
}

kiln_log_level_t kiln_log_level(void) {
  int level = atomic_load_explicit(&kiln_log_level_, memory_order_relaxed);
  if (KILN_UNLIKELY(level < 0)) {
    level = (int)kiln_log_level_from_environment();
    int expected = -1;
    atomic_compare_exchange_strong(&kiln_log_level_, &expected, level);
    level = atomic_load(&kiln_log_level_);
  }
  return (kiln_log_level_t)level;
}

void kiln_log_set_level(kiln_log_level_t level) {
  atomic_store(&kiln_log_level_, (int)level);
}

void kiln_log_set_sink(kiln_log_sink_fn sink, void *self) {
  pthread_mutex_lock(&kiln_log_mutex_);
  kiln_log_sink_ = sink;
  kiln_log_sink_self_ = self;
  pthread_mutex_unlock(&kiln_log_mutex_);
}

static const char *kiln_log_short_file(const char *file) {
  const char *src = strstr(file, "/src/");
  if (src) {
    return src + 1;
  }
  const char *tools = strstr(file, "/tools/");
  return tools ? tools + 1 : file;
}

void kiln_log_write(kiln_log_level_t level, const char *file, int line, const char *format, ...) {
  char message[2048];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (length >= (int)sizeof(message)) {
    memcpy(message + sizeof(message) - 4, "...", 4); /* mark the cut */
  }
  file = kiln_log_short_file(file);
  pthread_mutex_lock(&kiln_log_mutex_);
  if (kiln_log_sink_) {
    kiln_log_sink_(kiln_log_sink_self_, level, file, line, message);
  } else {
    static const char letters[] = "EWIDT";
    char letter = (unsigned)level <= KILN_LOG_LEVEL_TRACE ? letters[level] : '?';
    fprintf(stderr, "kiln %c %s:%d] %s\n", letter, file, line, message);
  }
  pthread_mutex_unlock(&kiln_log_mutex_);
}
