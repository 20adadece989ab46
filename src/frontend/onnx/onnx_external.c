/*
 * External tensor data: the bytes of a TensorProto kept in a file beside the
 * model (data_location EXTERNAL; entries location, offset, length; checksum
 * and unknown keys are ignored).
 *
 * The location is a path relative to the model's folder and must stay in
 * it. It is checked twice: as text (not absolute, no ".." component, with
 * '/' and '\\' both counted as separators) and after resolution (realpath of
 * the file must lie under realpath of the folder, so a symbolic link cannot
 * lead out). Then offset and length are checked against the file's size
 * before anything is read; a caller may ask for the checks alone (data NULL)
 * before it allocates the tensor.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/onnx/onnx_tensor.h"

typedef struct kiln_onnx_external_t {
  const char *location;
  uint64_t offset;
  uint64_t length;
  int has_length;
} kiln_onnx_external_t;

/* A decimal integer that fits in int64 (ONNX writes offsets as text). */
static kiln_status_t kiln_onnx_external_number(const char *key, const char *text,
                                               uint64_t *out_value) {
  uint64_t value = 0;
  if (!text || !*text) {
    return KILN_STATUS(INVALID_ARGUMENT, "external data %s is empty", key);
  }
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9' || value > (uint64_t)INT64_MAX / 10) {
      return KILN_STATUS(INVALID_ARGUMENT, "external data %s \"%s\" is not a non-negative integer",
                         key, text);
    }
    value = value * 10 + (uint64_t)(*p - '0');
  }
  if (value > (uint64_t)INT64_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "external data %s \"%s\" is too large", key, text);
  }
  *out_value = value;
  return KILN_OK;
}

static kiln_status_t kiln_onnx_external_entries(const Onnx__TensorProto *proto,
                                                kiln_onnx_external_t *out) {
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < proto->n_external_data; ++i) {
    const Onnx__StringStringEntryProto *entry = proto->external_data[i];
    const char *key = entry->key ? entry->key : "";
    if (strcmp(key, "location") == 0) {
      out->location = entry->value;
    } else if (strcmp(key, "offset") == 0) {
      KILN_RETURN_IF_ERROR(kiln_onnx_external_number("offset", entry->value, &out->offset));
    } else if (strcmp(key, "length") == 0) {
      KILN_RETURN_IF_ERROR(kiln_onnx_external_number("length", entry->value, &out->length));
      out->has_length = 1;
    }
  }
  if (!out->location || !*out->location) {
    return KILN_STATUS(INVALID_ARGUMENT, "has external data without a location");
  }
  return KILN_OK;
}

/* The textual rules: relative, no ".." component. */
static kiln_status_t kiln_onnx_external_check_text(const char *location) {
  if (location[0] == '/' || location[0] == '\\') {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "external data location \"%s\" is an absolute path; it must be relative "
                       "to the model's folder",
                       location);
  }
  const char *start = location;
  for (const char *p = location;; ++p) {
    if (*p == '/' || *p == '\\' || *p == '\0') {
      if (p - start == 2 && start[0] == '.' && start[1] == '.') {
        return KILN_STATUS(INVALID_ARGUMENT,
                           "external data location \"%s\" has a \"..\" component; it must stay "
                           "in the model's folder",
                           location);
      }
      if (*p == '\0') {
        break;
      }
      start = p + 1;
    }
  }
  return KILN_OK;
}

/* Resolves the file and checks that it is a regular file inside the folder. */
static kiln_status_t kiln_onnx_external_resolve(const char *model_dir, const char *location,
                                                char *out_path, uint64_t *out_size) {
  char joined[PATH_MAX], folder[PATH_MAX];
  int length = snprintf(joined, sizeof(joined), "%s/%s", model_dir, location);
  if (length < 0 || (size_t)length >= sizeof(joined)) {
    return KILN_STATUS(INVALID_ARGUMENT, "external data location \"%s\" is too long", location);
  }
  if (!realpath(model_dir, folder)) {
    return KILN_STATUS(IO_ERROR, "cannot resolve the model's folder \"%s\": %s", model_dir,
                       strerror(errno));
  }
  if (!realpath(joined, out_path)) {
    return KILN_STATUS(NOT_FOUND, "external data file \"%s\" cannot be opened in \"%s\": %s",
                       location, model_dir, strerror(errno));
  }
  size_t folder_length = strlen(folder);
  int inside = strncmp(out_path, folder, folder_length) == 0 &&
               (out_path[folder_length] == '/' || strcmp(folder, "/") == 0);
  if (!inside) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "external data location \"%s\" resolves to \"%s\", outside the model's "
                       "folder \"%s\"",
                       location, out_path, folder);
  }
  struct stat info;
  if (stat(out_path, &info) != 0 || !S_ISREG(info.st_mode)) {
    return KILN_STATUS(INVALID_ARGUMENT, "external data location \"%s\" is not a regular file",
                       location);
  }
  *out_size = (uint64_t)info.st_size;
  return KILN_OK;
}

/* offset and length against the file and the tensor. */
static kiln_status_t kiln_onnx_external_check_range(const kiln_onnx_external_t *external,
                                                    uint64_t file_size, size_t size) {
  if (external->offset > file_size) {
    return KILN_STATUS(
        DATA_LOSS, "external data offset %llu is beyond the end of \"%s\" (%llu bytes)",
        (unsigned long long)external->offset, external->location, (unsigned long long)file_size);
  }
  uint64_t length = external->has_length ? external->length : file_size - external->offset;
  if (length > file_size - external->offset) {
    return KILN_STATUS(DATA_LOSS,
                       "external data [offset %llu, length %llu] runs past the end of \"%s\" "
                       "(%llu bytes)",
                       (unsigned long long)external->offset, (unsigned long long)length,
                       external->location, (unsigned long long)file_size);
  }
  if (length != size) {
    return KILN_STATUS(DATA_LOSS, "external data in \"%s\" has %llu bytes; the tensor needs %zu",
                       external->location, (unsigned long long)length, size);
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_external_copy(const char *path, const char *location,
                                             uint64_t offset, void *data, size_t size) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    return KILN_STATUS(IO_ERROR, "cannot open external data \"%s\": %s", location, strerror(errno));
  }
  kiln_status_t status = KILN_OK;
  if (fseeko(file, (off_t)offset, SEEK_SET) != 0 || fread(data, 1, size, file) != size) {
    status = KILN_STATUS(IO_ERROR, "cannot read %zu bytes at offset %llu of \"%s\"", size,
                         (unsigned long long)offset, location);
  }
  fclose(file);
  return status;
}

kiln_status_t kiln_onnx_external_read(const Onnx__TensorProto *proto, const char *model_dir,
                                      void *data, size_t size) {
  kiln_onnx_external_t external;
  KILN_RETURN_IF_ERROR(kiln_onnx_external_entries(proto, &external));
  KILN_RETURN_IF_ERROR(kiln_onnx_external_check_text(external.location));
  if (!model_dir) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "has external data (\"%s\") but the model was not read from a folder",
                       external.location);
  }
  char path[PATH_MAX];
  uint64_t file_size = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_external_resolve(model_dir, external.location, path, &file_size));
  KILN_RETURN_IF_ERROR(kiln_onnx_external_check_range(&external, file_size, size));
  if (!data || size == 0) {
    return KILN_OK;
  }
  return kiln_onnx_external_copy(path, external.location, external.offset, data, size);
}
