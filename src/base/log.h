/*
 * Logging with levels.
 *
 * Messages below the current level cost one atomic load and a branch: the
 * KILN_LOG_* macros test the level before formatting anything. The level comes
 * from the KILN_LOG_LEVEL environment variable the first time it is needed
 * (error, warn, info, debug, trace, or 0 to 4; default warn) and can be set at
 * run time. Output goes to stderr as "kiln W src/base/npy.c:42] message", or to
 * a sink that a program or test installs.
 */
#ifndef KILN_BASE_LOG_H_
#define KILN_BASE_LOG_H_

#include "kiln/status.h"

typedef enum kiln_log_level_e {
  KILN_LOG_LEVEL_ERROR = 0,
  KILN_LOG_LEVEL_WARN = 1,
  KILN_LOG_LEVEL_INFO = 2,
  KILN_LOG_LEVEL_DEBUG = 3,
  KILN_LOG_LEVEL_TRACE = 4,
} kiln_log_level_t;

typedef void (*kiln_log_sink_fn)(void *self, kiln_log_level_t level, const char *file, int line,
                                 const char *message);

kiln_log_level_t kiln_log_level(void);
void kiln_log_set_level(kiln_log_level_t level);
/* Parses "warn", "WARN", "1"...; INVALID_ARGUMENT naming the text otherwise. */
KILN_MUST_USE_RESULT kiln_status_t kiln_log_level_parse(const char *text,
                                                        kiln_log_level_t *out_level);
const char *kiln_log_level_name(kiln_log_level_t level);
/* Installs a sink (NULL restores stderr). */
void kiln_log_set_sink(kiln_log_sink_fn sink, void *self);
void kiln_log_write(kiln_log_level_t level, const char *file, int line, const char *format, ...)
    KILN_PRINTF_FORMAT(4, 5);

#define KILN_LOG(level, ...)                                    \
  do {                                                          \
    if ((level) <= kiln_log_level())                            \
      kiln_log_write((level), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define KILN_LOG_ERROR(...) KILN_LOG(KILN_LOG_LEVEL_ERROR, __VA_ARGS__)
#define KILN_LOG_WARN(...)  KILN_LOG(KILN_LOG_LEVEL_WARN, __VA_ARGS__)
#define KILN_LOG_INFO(...)  KILN_LOG(KILN_LOG_LEVEL_INFO, __VA_ARGS__)
#define KILN_LOG_DEBUG(...) KILN_LOG(KILN_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define KILN_LOG_TRACE(...) KILN_LOG(KILN_LOG_LEVEL_TRACE, __VA_ARGS__)

#endif /* KILN_BASE_LOG_H_ */
