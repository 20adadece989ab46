/*
 * The kiln tool's own small helpers, on libc alone: the tool builds
 * against kiln's public headers only (include/kiln/), and these are not
 * kiln's API.
 *
 * Files follow docs/cli.md ("Files kiln reads and writes"), as kiln's own
 * writers (kiln_npy_write_file, params.bin) do: reads open without
 * blocking and refuse anything but a regular file; a write goes to a
 * temporary file beside the target, created exclusively (O_EXCL) under a
 * random name, and is renamed over it, so a crash leaves the old file
 * whole; a character device is written through; another target that is
 * not a regular file (a FIFO, a folder, a socket) is refused. A text
 * builder grows a heap string and keeps its first failure, so a report is
 * written in many small appends and checked once.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- paths ---- */

int kiln_cli_is_directory(const char *path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

kiln_status_t kiln_cli_path_join(const char *a, const char *b, char **out_path) {
  size_t length = strlen(a) + strlen(b) + 2;
  *out_path = malloc(length);
  if (!*out_path) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory joining %s and %s", a, b);
  }
  bool slash = a[0] != '\0' && a[strlen(a) - 1] != '/';
  snprintf(*out_path, length, "%s%s%s", b[0] == '/' ? "" : a, b[0] != '/' && slash ? "/" : "", b);
  return KILN_OK;
}

static const char *kind_name(mode_t mode) {
  return S_ISDIR(mode)    ? "folder"
         : S_ISFIFO(mode) ? "FIFO"
         : S_ISCHR(mode)  ? "character device"
         : S_ISBLK(mode)  ? "block device"
         : S_ISSOCK(mode) ? "socket"
                          : "special file";
}

/* ---- reading ---- */

/* Reads what the open regular file `fd` holds into a new string. */
static kiln_status_t read_fd(int fd, const char *path, size_t size, char **out_text) {
  char *text = malloc(size + 1);
  if (!text) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "%s: out of memory for %zu bytes", path, size);
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, text + got, size - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    got += (size_t)n;
  }
  if (got != size) {
    free(text);
    return KILN_STATUS(IO_ERROR, "%s: read %zu of %zu bytes", path, got, size);
  }
  text[size] = '\0';
  *out_text = text;
  return KILN_OK;
}

kiln_status_t kiln_cli_read_file(const char *path, char **out_text, size_t *out_size) {
  *out_text = NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return kiln_status_make(error == ENOENT ? KILN_STATUS_CODE_NOT_FOUND
                                            : KILN_STATUS_CODE_IO_ERROR,
                            __FILE__, __LINE__, "%s: cannot open: %s", path, strerror(error));
  }
  struct stat info;
  kiln_status_t status = KILN_OK;
  if (fstat(fd, &info) != 0) {
    status = KILN_STATUS(IO_ERROR, "%s: cannot stat: %s", path, strerror(errno));
  } else if (!S_ISREG(info.st_mode)) {
    status = KILN_STATUS(IO_ERROR, "%s: not a regular file (a %s); kiln reads regular files only",
                         path, kind_name(info.st_mode));
  } else {
    *out_size = (size_t)info.st_size;
    status = read_fd(fd, path, *out_size, out_text);
  }
  close(fd);
  return status;
}

/* ---- writing ---- */

static int write_fully(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t put = write(fd, data, size);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      return -1;
    }
    data += put;
    size -= (size_t)put;
  }
  return 0;
}

/* Writes and closes `fd`; the errno of the first failure, or 0. */
static int write_and_close(int fd, const char *data, size_t size) {
  int error = write_fully(fd, data, size) != 0 ? errno : 0;
  if (close(fd) != 0 && error == 0) {
    error = errno;
  }
  return error;
}

/* An existing character device: written through, never replaced. */
static kiln_status_t write_through(const char *path, const char *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return KILN_STATUS(IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  }
  int error = write_and_close(fd, data, size);
  return error ? KILN_STATUS(IO_ERROR, "%s: cannot write: %s", path, strerror(error)) : KILN_OK;
}

/* Creates "<path>.tmp.<random>" with O_EXCL: its fd, the name in `temp`. */
static kiln_status_t create_temp(const char *path, char *temp, size_t capacity, int *out_fd) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    unsigned long long bits = 0;
    if (getrandom(&bits, sizeof(bits), 0) != (ssize_t)sizeof(bits)) {
      bits ^= (unsigned long long)getpid() << 32 ^ (unsigned long long)attempt;
    }
    int n = snprintf(temp, capacity, "%s.tmp.%016llx", path, bits);
    if (n < 0 || (size_t)n >= capacity) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: path too long", path);
    }
    *out_fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (*out_fd >= 0) {
      return KILN_OK;
    }
    if (errno != EEXIST) {
      return KILN_STATUS(IO_ERROR, "%s: cannot create: %s", path, strerror(errno));
    }
  }
  return KILN_STATUS(IO_ERROR, "%s: cannot create a temporary file beside it", path);
}

kiln_status_t kiln_cli_write_file(const char *path, const char *data, size_t size) {
  struct stat info;
  if (stat(path, &info) == 0 && !S_ISREG(info.st_mode)) {
    if (S_ISCHR(info.st_mode)) {
      return write_through(path, data, size);
    }
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: exists and is not a regular file (a %s); kiln replaces regular files "
                       "only",
                       path, kind_name(info.st_mode));
  }
  char temp[4096];
  int fd = -1;
  KILN_RETURN_IF_ERROR(create_temp(path, temp, sizeof(temp), &fd));
  int error = write_and_close(fd, data, size);
  if (error == 0 && rename(temp, path) == 0) {
    return KILN_OK;
  }
  const char *what = error ? "write" : "replace";
  error = error ? error : errno;
  unlink(temp);
  return KILN_STATUS(IO_ERROR, "%s: cannot %s: %s", path, what, strerror(error));
}

/* ---- a text builder ---- */

void kiln_cli_text_append(kiln_cli_text_t *text, const char *format, ...) {
  if (text->status) {
    return;
  }
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  size_t need = text->length + (size_t)(n > 0 ? n : 0) + 1;
  if (need > text->capacity) {
    size_t capacity = need > 2 * text->capacity ? need : 2 * text->capacity;
    char *grown = realloc(text->data, capacity);
    if (!grown) {
      text->status = KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory for %zu bytes of text", need);
      va_end(again);
      return;
    }
    text->data = grown;
    text->capacity = capacity;
  }
  vsnprintf(text->data + text->length, text->capacity - text->length, format, again);
  va_end(again);
  text->length += (size_t)(n > 0 ? n : 0);
}

kiln_status_t kiln_cli_text_save(kiln_cli_text_t *text, const char *path) {
  kiln_status_t status = text->status;
  if (!status) {
    status = kiln_cli_write_file(path, text->data ? text->data : "", text->length);
  }
  free(text->data);
  *text = (kiln_cli_text_t){0};
  return status;
}

/* ---- logging ---- */

/* KILN_LOG_LEVEL at debug or trace (as kiln's log reads it). */
static bool debug_logging(void) {
  const char *level = getenv("KILN_LOG_LEVEL");
  return level && (strcasecmp(level, "debug") == 0 || strcasecmp(level, "trace") == 0 ||
                   strcmp(level, "3") == 0 || strcmp(level, "4") == 0);
}

void kiln_cli_log_error_origin(const char *file, int line, kiln_status_t status) {
  if (debug_logging()) {
    const char *tools = strstr(file, "/tools/");
    fprintf(stderr, "kiln D %s:%d] %s:%d: error made here\n", tools ? tools + 1 : file, line,
            kiln_status_file(status), kiln_status_line(status));
  }
}

kiln_status_t kiln_cli_parse_count(const char *flag, const char *text, int64_t minimum, int *out) {
  int64_t value = 0;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, text, minimum, &value));
  if (value > 1000000) {
    return kiln_cli_usage("expected at most 1000000 after", flag);
  }
  *out = (int)value;
  return KILN_OK;
}

kiln_status_t kiln_cli_parse_positive(const char *flag, const char *text, double highest,
                                      const char *expected, double *out) {
  char *end = NULL;
  double value = text ? strtod(text, &end) : 0;
  if (!text || end == text || *end != '\0' || !(value > 0) || value > highest) {
    return kiln_cli_usage(expected, flag);
  }
  *out = value;
  return KILN_OK;
}

int kiln_cli_is_library_name(const char *path) {
  size_t length = strlen(path);
  return length > 3 && strcmp(path + length - 3, ".so") == 0;
}
