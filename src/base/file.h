/*
 * File and path helpers.
 *
 * Whole-file reads and writes with errors that name the path and the system's
 * reason. Reads take regular files only (a FIFO or a device is refused, never
 * waited on). Writes go to a temporary file beside the target (a random
 * name created exclusively) and are renamed into place, so a reader never
 * sees half a file; a target that exists and is not a regular file is never
 * replaced: a character device is written through, anything else refused.
 * Path helpers allocate from the allocator they are given.
 */
#ifndef KILN_BASE_FILE_H_
#define KILN_BASE_FILE_H_

#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

/* Reads the whole file. The buffer has one extra NUL byte after the data (not
 * counted in *out_size), so text files can be used as C strings. The caller
 * frees *out_data with `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_file_read_all(kiln_allocator_t allocator, const char *path,
                                                      void **out_data, size_t *out_size);
/* Writes `size` bytes to `path`, replacing a regular file atomically (see
 * the top). */
KILN_MUST_USE_RESULT kiln_status_t kiln_file_write_all(const char *path, const void *data,
                                                       size_t size);
/* A regular file's bytes mapped read-only and private (mmap), for reading a
 * large file in place: the same errors as kiln_file_read_all. An empty
 * file maps to data NULL, size 0. kiln_file_unmap undoes it (a zeroed
 * mapping is a no-op). */
typedef struct kiln_file_mapping_t {
  const void *data;
  size_t size;
} kiln_file_mapping_t;
KILN_MUST_USE_RESULT kiln_status_t kiln_file_map(const char *path,
                                                 kiln_file_mapping_t *out_mapping);
void kiln_file_unmap(kiln_file_mapping_t *mapping);
int kiln_file_exists(const char *path);
/* "folder", "FIFO", "character device", ... for a stat mode. */
const char *kiln_file_kind_name(unsigned mode);
int kiln_file_is_directory(const char *path);

/* "a/b" from "a" and "b" (no doubled slash; an absolute `b` is returned as is). */
KILN_MUST_USE_RESULT kiln_status_t kiln_path_join(kiln_allocator_t allocator, const char *a,
                                                  const char *b, char **out_path);
/* The folder part: "a/b" of "a/b/c.onnx", "." of "c.onnx", "/" of "/c". */
KILN_MUST_USE_RESULT kiln_status_t kiln_path_dirname(kiln_allocator_t allocator, const char *path,
                                                     char **out_dirname);
/* The last component: "c.onnx" of "a/b/c.onnx". Points into `path`. */
const char *kiln_path_basename(const char *path);

#endif /* KILN_BASE_FILE_H_ */
