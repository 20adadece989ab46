/*
 * File and path helpers; see file.h.
 *
 * Reads use stdio and grow nothing: the size comes from fstat, then one read
 * fills the buffer, and a short read is an error rather than silent
 * truncation. Writes go to "<path>.tmp.<pid>" and are renamed over the target,
 * so a crash mid-write leaves the old file intact.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

kiln_status_t kiln_file_read_all(kiln_allocator_t allocator, const char *path, void **out_data,
                                 size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  FILE *file = fopen(path, "rb");
  if (!file) {
    int error = errno;
    return kiln_status_make(error == ENOENT ? KILN_STATUS_CODE_NOT_FOUND
                                            : KILN_STATUS_CODE_IO_ERROR,
                            __FILE__, __LINE__, "%s: cannot open: %s", path, strerror(error));
  }
  struct stat info;
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    int error = errno;
    fclose(file);
    return KILN_STATUS(IO_ERROR, "%s: not a regular file%s%s", path, error ? ": " : "",
                       error ? strerror(error) : "");
  }
  size_t size = (size_t)info.st_size;
  void *data = NULL;
  kiln_status_t status = kiln_allocator_malloc(allocator, size + 1, &data);
  if (status) {
    fclose(file);
    return kiln_status_annotate(status, "%s", path);
  }
  size_t got = size ? fread(data, 1, size, file) : 0;
  int read_error = ferror(file);
  fclose(file);
  if (got != size || read_error) {
    kiln_allocator_free(allocator, data);
    return KILN_STATUS(IO_ERROR, "%s: read %zu of %zu bytes", path, got, size);
  }
  ((char *)data)[size] = '\0';
  *out_data = data;
  *out_size = size;
  return KILN_OK;
}

kiln_status_t kiln_file_write_all(const char *path, const void *data, size_t size) {
  char temp[4096];
  int n = snprintf(temp, sizeof(temp), "%s.tmp.%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof(temp)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: path too long", path);
  }
  FILE *file = fopen(temp, "wb");
  if (!file) {
    return KILN_STATUS(IO_ERROR, "%s: cannot create: %s", path, strerror(errno));
  }
  size_t put = size ? fwrite(data, 1, size, file) : 0;
  int write_error = ferror(file);
  int close_error = fclose(file);
  if (put != size || write_error || close_error) {
    remove(temp);
    return KILN_STATUS(IO_ERROR, "%s: wrote %zu of %zu bytes", path, put, size);
  }
  if (rename(temp, path) != 0) {
    int error = errno;
    remove(temp);
    return KILN_STATUS(IO_ERROR, "%s: cannot replace: %s", path, strerror(error));
  }
  return KILN_OK;
}

int kiln_file_exists(const char *path) {
  struct stat info;
  return stat(path, &info) == 0;
}

int kiln_file_is_directory(const char *path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

kiln_status_t kiln_path_join(kiln_allocator_t allocator, const char *a, const char *b,
                             char **out_path) {
  if (b[0] == '/' || a[0] == '\0') {
    return kiln_allocator_strdup(allocator, b, out_path);
  }
  size_t a_length = strlen(a);
  size_t b_length = strlen(b);
  int slash = a[a_length - 1] != '/';
  void *buffer = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc(allocator, a_length + (size_t)slash + b_length + 1, &buffer));
  char *path = buffer;
  memcpy(path, a, a_length);
  if (slash) {
    path[a_length] = '/';
  }
  memcpy(path + a_length + slash, b, b_length + 1);
  *out_path = path;
  return KILN_OK;
}

kiln_status_t kiln_path_dirname(kiln_allocator_t allocator, const char *path, char **out_dirname) {
  size_t length = strlen(path);
  while (length > 1 && path[length - 1] == '/') {
    --length; /* "a/b/" names the folder b */
  }
  while (length > 0 && path[length - 1] != '/') {
    --length;
  }
  if (length == 0) {
    return kiln_allocator_strdup(allocator, ".", out_dirname);
  }
  while (length > 1 && path[length - 1] == '/') {
    --length;
  }
  void *buffer = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, length + 1, &buffer));
  char *dirname = buffer;
  memcpy(dirname, path, length);
  dirname[length] = '\0';
  *out_dirname = dirname;
  return KILN_OK;
}

const char *kiln_path_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}
