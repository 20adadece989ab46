/*
 * The params file and named tensors in memory; see include/kiln/runtime.h.
 *
 * A params object is arrays of names (copied) and tensors (one reference
 * each) plus a string hash map from name to index, which also catches a name
 * given twice as it is filled. Creating from memory and parsing a file both
 * fill it through params_add, so the two agree on what a valid name is.
 *
 * The file is a fixed header and length-prefixed records (layout in
 * docs/formats.md), with every integer read and written byte by byte as
 * little-endian, so the format does not depend on the host. Each tensor is
 * stored as a whole .npy file, so kiln_npy_parse checks its dtype, shape and
 * length and the npy code is the only tensor serializer. The reader checks
 * every length against the bytes left before reading, so a file cut short is
 * a DATA_LOSS naming the tensor and the offset, never a read past the end;
 * a declared count the remaining bytes cannot hold is refused before any
 * allocation sized by it. Writing builds the file in a string builder
 * (binary-safe through append_n) and saves it with the atomic file write.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/hashmap.h"
#include "base/strbuf.h"
#include "kiln/npy.h"
#include "kiln/runtime.h"

/* magic (8) + version (4) + count (4). */
#define KILN_RUNTIME_PARAMS_HEADER_SIZE 16
/* A record's name length (4) and npy length (8). */
#define KILN_RUNTIME_PARAMS_RECORD_OVERHEAD 12

struct kiln_runtime_params_t {
  kiln_allocator_t allocator;
  int count;
  int capacity;
  char **names;
  kiln_tensor_t **tensors;
  kiln_hashmap_t index; /* name -> index + 1 */
};

static kiln_status_t params_new(kiln_allocator_t allocator, int capacity,
                                kiln_runtime_params_t **out_params) {
  *out_params = NULL;
  kiln_runtime_params_t *params = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*params), (void **)&params));
  params->allocator = allocator;
  params->capacity = capacity;
  kiln_hashmap_initialize(&params->index, allocator, KILN_HASHMAP_KEY_STRING);
  size_t slots = capacity > 0 ? (size_t)capacity : 1;
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, slots, sizeof(char *), (void **)&params->names);
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, slots, sizeof(kiln_tensor_t *),
                                         (void **)&params->tensors);
  }
  if (status) {
    kiln_runtime_params_destroy(params);
    return status;
  }
  *out_params = params;
  return KILN_OK;
}

void kiln_runtime_params_destroy(kiln_runtime_params_t *params) {
  if (!params) {
    return;
  }
  for (int i = 0; i < params->count; ++i) {
    kiln_allocator_free(params->allocator, params->names[i]);
    kiln_tensor_release(params->tensors[i]);
  }
  kiln_hashmap_deinitialize(&params->index);
  kiln_allocator_free(params->allocator, params->names);
  kiln_allocator_free(params->allocator, params->tensors);
  kiln_allocator_free(params->allocator, params);
}

/* The name check shared by create, serialize and parse; `where` starts the
 * message ("params", or the file's name). */
static kiln_status_t check_name(const kiln_hashmap_t *seen, const char *where, int index,
                                const char *name) {
  if (!name || !*name) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: tensor %d has %s name", where, index,
                       name ? "an empty" : "no");
  }
  void *first = NULL;
  if (kiln_hashmap_get(seen, name, &first)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the name '%s' is given twice (tensors %d and %d)",
                       where, name, (int)((intptr_t)first - 1), index);
  }
  return KILN_OK;
}

/* Appends `tensor` (taking over the caller's reference) as `name` (copied). */
static kiln_status_t params_add(kiln_runtime_params_t *params, const char *where, const char *name,
                                kiln_tensor_t *tensor) {
  kiln_status_t status = check_name(&params->index, where, params->count, name);
  char *copy = NULL;
  if (!status) {
    status = kiln_allocator_strdup(params->allocator, name, &copy);
  }
  if (!status) {
    status = kiln_hashmap_put(&params->index, copy, (void *)(intptr_t)(params->count + 1));
  }
  if (status) {
    kiln_allocator_free(params->allocator, copy);
    kiln_tensor_release(tensor);
    return status;
  }
  params->names[params->count] = copy;
  params->tensors[params->count] = tensor;
  ++params->count;
  return KILN_OK;
}

kiln_status_t kiln_runtime_params_create(kiln_allocator_t allocator, int count,
                                         const char *const *names, kiln_tensor_t *const *tensors,
                                         kiln_runtime_params_t **out_params) {
  *out_params = NULL;
  if (count < 0 || (count > 0 && (!names || !tensors))) {
    return KILN_STATUS(INVALID_ARGUMENT, "params: %d names and tensors are needed", count);
  }
  kiln_runtime_params_t *params = NULL;
  KILN_RETURN_IF_ERROR(params_new(allocator, count, &params));
  for (int i = 0; i < count; ++i) {
    kiln_status_t status = tensors[i]
                               ? KILN_OK
                               : KILN_STATUS(INVALID_ARGUMENT, "params: tensor %d (%s) is NULL", i,
                                             names[i] ? names[i] : "no name");
    if (!status) {
      kiln_tensor_retain(tensors[i]);
      status = params_add(params, "params", names[i], tensors[i]);
    }
    if (status) {
      kiln_runtime_params_destroy(params);
      return status;
    }
  }
  *out_params = params;
  return KILN_OK;
}

int kiln_runtime_params_count(const kiln_runtime_params_t *params) {
  return params->count;
}

const char *kiln_runtime_params_name(const kiln_runtime_params_t *params, int index) {
  return params->names[index];
}

kiln_tensor_t *kiln_runtime_params_tensor(const kiln_runtime_params_t *params, int index) {
  return params->tensors[index];
}

kiln_tensor_t *kiln_runtime_params_get(const kiln_runtime_params_t *params, const char *name) {
  void *found = NULL;
  if (!name || !kiln_hashmap_get(&params->index, name, &found)) {
    return NULL;
  }
  return params->tensors[(intptr_t)found - 1];
}

/* ---- the file ---- */

static uint64_t read_le(const unsigned char *bytes, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = (value << 8) | bytes[i];
  }
  return value;
}

static kiln_status_t append_le(kiln_strbuf_t *sb, uint64_t value, int width) {
  char bytes[8];
  for (int i = 0; i < width; ++i) {
    bytes[i] = (char)(unsigned char)(value >> (8 * i));
  }
  return kiln_strbuf_append_n(sb, bytes, (size_t)width);
}

/* A reader over the file's bytes. */
typedef struct reader_t {
  const unsigned char *bytes;
  size_t size;
  size_t offset;
  const char *source;
} reader_t;

/* DATA_LOSS unless `need` bytes are left; `what` says what they are. */
static kiln_status_t reader_need(const reader_t *r, uint64_t need, int index, const char *what) {
  if ((uint64_t)(r->size - r->offset) >= need) {
    return KILN_OK;
  }
  return KILN_STATUS(DATA_LOSS,
                     "%s: truncated: tensor %d's %s needs %llu bytes at offset %zu, the file has "
                     "%zu",
                     r->source, index, what, (unsigned long long)need, r->offset, r->size);
}

static kiln_status_t read_header(reader_t *r, uint32_t *out_count) {
  static const char magic[8] = KILN_RUNTIME_PARAMS_MAGIC;
  if (r->size < sizeof(magic) || memcmp(r->bytes, magic, sizeof(magic)) != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: not a kiln params file (it does not start with \"KILNPRM\\0\")",
                       r->source);
  }
  if (r->size < KILN_RUNTIME_PARAMS_HEADER_SIZE) {
    return KILN_STATUS(DATA_LOSS, "%s: truncated: the header needs %d bytes, the file has %zu",
                       r->source, KILN_RUNTIME_PARAMS_HEADER_SIZE, r->size);
  }
  uint64_t version = read_le(r->bytes + 8, 4);
  if (version != KILN_RUNTIME_PARAMS_VERSION) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: params file version %llu, kiln reads version %d",
                       r->source, (unsigned long long)version, KILN_RUNTIME_PARAMS_VERSION);
  }
  uint64_t count = read_le(r->bytes + 12, 4);
  r->offset = KILN_RUNTIME_PARAMS_HEADER_SIZE;
  if (count > (r->size - r->offset) / KILN_RUNTIME_PARAMS_RECORD_OVERHEAD || count > INT32_MAX) {
    return KILN_STATUS(DATA_LOSS, "%s: truncated: it declares %llu tensors in %zu bytes", r->source,
                       (unsigned long long)count, r->size - r->offset);
  }
  *out_count = (uint32_t)count;
  return KILN_OK;
}

/* Reads record `index` into a new tensor and its name (in the caller's buffer). */
static kiln_status_t read_record(kiln_allocator_t allocator, reader_t *r, int index,
                                 char **out_name, kiln_tensor_t **out_tensor) {
  *out_name = NULL;
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(reader_need(r, 4, index, "name length"));
  size_t name_length = (size_t)read_le(r->bytes + r->offset, 4);
  r->offset += 4;
  KILN_RETURN_IF_ERROR(reader_need(r, name_length, index, "name"));
  char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, name_length + 1, (void **)&name));
  memcpy(name, r->bytes + r->offset, name_length);
  name[name_length] = '\0';
  r->offset += name_length;
  kiln_status_t status =
      strlen(name) == name_length
          ? reader_need(r, 8, index, "npy length")
          : KILN_STATUS(INVALID_ARGUMENT, "%s: tensor %d's name holds a NUL", r->source, index);
  uint64_t npy_length = status ? 0 : read_le(r->bytes + r->offset, 8);
  if (!status) {
    r->offset += 8;
    status = reader_need(r, npy_length, index, "npy data");
  }
  if (!status) {
    char where[512]; /* the npy parser's errors start with it */
    snprintf(where, sizeof(where), "%s: tensor %d '%s'", r->source, index, name);
    status = kiln_npy_parse(allocator, r->bytes + r->offset, (size_t)npy_length, where, out_tensor);
    r->offset += (size_t)npy_length;
  }
  if (status) {
    kiln_allocator_free(allocator, name);
    return status;
  }
  *out_name = name;
  return KILN_OK;
}

static kiln_status_t parse_records(reader_t *r, kiln_runtime_params_t *params, int count) {
  for (int i = 0; i < count; ++i) {
    char *name = NULL;
    kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(read_record(params->allocator, r, i, &name, &tensor));
    kiln_status_t status = params_add(params, r->source, name, tensor);
    kiln_allocator_free(params->allocator, name);
    KILN_RETURN_IF_ERROR(status);
  }
  if (r->offset != r->size) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %zu bytes after the last of %d tensors", r->source,
                       r->size - r->offset, count);
  }
  return KILN_OK;
}

kiln_status_t kiln_runtime_params_parse(kiln_allocator_t allocator, const void *bytes, size_t size,
                                        const char *source_name,
                                        kiln_runtime_params_t **out_params) {
  *out_params = NULL;
  reader_t r = {bytes, size, 0, source_name ? source_name : "<memory>"};
  if (!bytes && size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %zu bytes at NULL", r.source, size);
  }
  uint32_t count = 0;
  KILN_RETURN_IF_ERROR(read_header(&r, &count));
  kiln_runtime_params_t *params = NULL;
  KILN_RETURN_IF_ERROR(params_new(allocator, (int)count, &params));
  kiln_status_t status = parse_records(&r, params, (int)count);
  if (status) {
    kiln_runtime_params_destroy(params);
    return status;
  }
  *out_params = params;
  return KILN_OK;
}

kiln_status_t kiln_runtime_params_load(kiln_allocator_t allocator, const char *path,
                                       kiln_runtime_params_t **out_params) {
  *out_params = NULL;
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, path, &bytes, &size));
  kiln_status_t status = kiln_runtime_params_parse(allocator, bytes, size, path, out_params);
  kiln_allocator_free(allocator, bytes);
  return status;
}

/* Appends one record: name length, name, npy length, npy bytes. */
static kiln_status_t append_record(kiln_strbuf_t *sb, const char *name,
                                   const kiln_tensor_t *tensor) {
  void *npy = NULL;
  size_t npy_size = 0;
  KILN_RETURN_IF_ERROR(kiln_npy_serialize(sb->allocator, tensor, &npy, &npy_size));
  size_t name_length = strlen(name);
  kiln_status_t status = name_length <= UINT32_MAX ? append_le(sb, name_length, 4)
                                                   : KILN_STATUS(INVALID_ARGUMENT,
                                                                 "params: the name of %zu bytes is "
                                                                 "too long",
                                                                 name_length);
  if (!status) {
    status = kiln_strbuf_append_n(sb, name, name_length);
  }
  if (!status) {
    status = append_le(sb, npy_size, 8);
  }
  if (!status) {
    status = kiln_strbuf_append_n(sb, npy, npy_size);
  }
  kiln_allocator_free(sb->allocator, npy);
  return status;
}

static kiln_status_t serialize_into(kiln_strbuf_t *sb, kiln_hashmap_t *seen, int count,
                                    const char *const *names, kiln_tensor_t *const *tensors) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_n(sb, KILN_RUNTIME_PARAMS_MAGIC, 8)); /* with its NUL */
  KILN_RETURN_IF_ERROR(append_le(sb, KILN_RUNTIME_PARAMS_VERSION, 4));
  KILN_RETURN_IF_ERROR(append_le(sb, (uint64_t)count, 4));
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(check_name(seen, "params", i, names[i]));
    if (!tensors[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "params: tensor %d (%s) is NULL", i, names[i]);
    }
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(seen, names[i], (void *)(intptr_t)(i + 1)));
    KILN_RETURN_IF_ERROR(append_record(sb, names[i], tensors[i]));
  }
  return KILN_OK;
}

kiln_status_t kiln_runtime_params_serialize(kiln_allocator_t allocator, int count,
                                            const char *const *names, kiln_tensor_t *const *tensors,
                                            void **out_bytes, size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  if (count < 0 || (count > 0 && (!names || !tensors))) {
    return KILN_STATUS(INVALID_ARGUMENT, "params: %d names and tensors are needed", count);
  }
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_hashmap_t seen;
  kiln_hashmap_initialize(&seen, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_status_t status = serialize_into(&sb, &seen, count, names, tensors);
  kiln_hashmap_deinitialize(&seen);
  size_t size = kiln_strbuf_length(&sb);
  char *text = NULL;
  if (!status) {
    status = kiln_strbuf_take(&sb, &text);
  }
  kiln_strbuf_deinitialize(&sb);
  if (status) {
    return status;
  }
  *out_bytes = text;
  *out_size = size;
  return KILN_OK;
}

kiln_status_t kiln_runtime_params_save(const char *path, int count, const char *const *names,
                                       kiln_tensor_t *const *tensors) {
  kiln_allocator_t system = kiln_allocator_system();
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_runtime_params_serialize(system, count, names, tensors, &bytes, &size), "%s", path);
  kiln_status_t status = kiln_file_write_all(path, bytes, size);
  kiln_allocator_free(system, bytes);
  return status;
}
