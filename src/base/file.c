/*
 * File and path helpers; see file.h.
 *
 * Reads grow nothing: the file is opened without blocking (a FIFO or a
 * device never hangs the open) and refused unless it is a regular file,
 * the size comes from fstat, then one read fills the buffer, and a short
 * read is an error rather than silent truncation.
 *
 * Writes never replace what is not a regular file: a character device
 * (/dev/null, /dev/stdout) is written through, and is reported when the
 * write fails (/dev/full); any other target that exists and is not a
 * regular file (a FIFO, a folder, a socket) is refused. A regular file, or
 * a new one, is written to a temporary file beside it and renamed over it,
 * so a crash mid-write leaves the old file intact. The temporary name has
 * a random part and is created with O_EXCL (a planted file or symlink at
 * that name makes the create fail, and another name is tried), with mode
 * 0666 under the umask, as a new file would have.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens `path` for reading when it is a regular file (never waiting on a
 * FIFO or a device): the descriptor and its stat, or an error naming the
 * file (NOT_FOUND when it is missing). */
static kiln_status_t open_regular(const char *path, int *out_fd, struct stat *out_info) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return kiln_status_make(error == ENOENT ? KILN_STATUS_CODE_NOT_FOUND
                                            : KILN_STATUS_CODE_IO_ERROR,
                            __FILE__, __LINE__, "%s: cannot open: %s", path, strerror(error));
  }
  kiln_status_t status = KILN_OK;
  if (fstat(fd, out_info) != 0) {
    status = KILN_STATUS(IO_ERROR, "%s: cannot stat: %s", path, strerror(errno));
  } else if (!S_ISREG(out_info->st_mode)) {
    status = KILN_STATUS(IO_ERROR, "%s: not a regular file (a %s); kiln reads regular files only",
                         path, kiln_file_kind_name(out_info->st_mode));
  }
  if (status) {
    close(fd);
    return status;
  }
  *out_fd = fd;
  return KILN_OK;
}

kiln_status_t kiln_file_read_all(kiln_allocator_t allocator, const char *path, void **out_data,
                                 size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  int fd = -1;
  struct stat info;
  KILN_RETURN_IF_ERROR(open_regular(path, &fd, &info));
  FILE *file = fdopen(fd, "rb");
  if (!file) {
    int error = errno;
    close(fd);
    return KILN_STATUS(IO_ERROR, "%s: cannot open: %s", path, strerror(error));
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

/* Writes all of `data` to `fd`; errno is kept on failure. */
static int write_fully(int fd, const void *data, size_t size) {
  const char *p = data;
  while (size > 0) {
    ssize_t put = write(fd, p, size);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      return -1;
    }
    p += put;
    size -= (size_t)put;
  }
  return 0;
}

/* An existing character device: written through, never replaced. */
static kiln_status_t write_through(const char *path, const void *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return KILN_STATUS(IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  }
  int failed = write_fully(fd, data, size);
  int error = errno;
  if (close(fd) != 0 && !failed) {
    failed = 1;
    error = errno;
  }
  return failed ? KILN_STATUS(IO_ERROR, "%s: cannot write: %s", path, strerror(error)) : KILN_OK;
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

kiln_status_t kiln_file_write_all(const char *path, const void *data, size_t size) {
  struct stat info;
  if (stat(path, &info) == 0 && !S_ISREG(info.st_mode)) {
    if (S_ISCHR(info.st_mode)) {
      return write_through(path, data, size);
    }
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: exists and is not a regular file (a %s); kiln replaces regular files "
                       "only",
                       path, kiln_file_kind_name(info.st_mode));
  }
  char temp[4096];
  int fd = -1;
  KILN_RETURN_IF_ERROR(create_temp(path, temp, sizeof(temp), &fd));
  int failed = write_fully(fd, data, size);
  int error = errno;
  if (close(fd) != 0 && !failed) {
    failed = 1;
    error = errno;
  }
  if (failed) {
    unlink(temp);
    return KILN_STATUS(IO_ERROR, "%s: cannot write: %s", path, strerror(error));
  }
  if (rename(temp, path) != 0) {
    error = errno;
    unlink(temp);
    return KILN_STATUS(IO_ERROR, "%s: cannot replace: %s", path, strerror(error));
  }
  return KILN_OK;
}

const char *kiln_file_kind_name(unsigned mode) {
  if (S_ISDIR(mode)) {
    return "folder";
  }
  if (S_ISFIFO(mode)) {
    return "FIFO";
  }
  if (S_ISCHR(mode)) {
    return "character device";
  }
  if (S_ISBLK(mode)) {
    return "block device";
  }
  return S_ISSOCK(mode) ? "socket" : S_ISREG(mode) ? "regular file" : "special file";
}

kiln_status_t kiln_file_map(const char *path, kiln_file_mapping_t *out_mapping) {
  out_mapping->data = NULL;
  out_mapping->size = 0;
  int fd = -1;
  struct stat info;
  KILN_RETURN_IF_ERROR(open_regular(path, &fd, &info));
  kiln_status_t status = KILN_OK;
  if (info.st_size > 0) {
    void *data = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      status = KILN_STATUS(IO_ERROR, "%s: cannot map: %s", path, strerror(errno));
    } else {
      out_mapping->data = data;
      out_mapping->size = (size_t)info.st_size;
    }
  }
  close(fd);
  return status;
}

void kiln_file_unmap(kiln_file_mapping_t *mapping) {
  if (mapping->data) {
    munmap((void *)(uintptr_t)mapping->data, mapping->size);
  }
  mapping->data = NULL;
  mapping->size = 0;
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
