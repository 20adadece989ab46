/*
 * One-file models: the embedded model's bytes (serialize, parse) and
 * reading them from a library's file; see include/kiln/runtime.h and
 * docs/formats.md.
 *
 * The embedded model is a fixed header and the two files of a folder
 * model as they are: graph.json's text, then params.bin's bytes. Every
 * size in the header is checked against the bytes there are before
 * anything is read or allocated by it: a size past the end is DATA_LOSS,
 * bytes left after params.bin are refused, as are a NUL in graph.json and
 * a reserved field that is not 0; params.bin goes through
 * kiln_runtime_params_parse, graph.json (later) through the graph
 * executor's parser, the checks of the folder's files. A library's file
 * is mapped, read with the strict ELF reader (elf.h) for the symbol's
 * bytes, and unmapped: nothing of it is loaded or run.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "kiln/runtime.h"
#include "runtime/elf.h"
#include "runtime/model_file.h"

static uint64_t read_le(const unsigned char *bytes, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = (value << 8) | bytes[i];
  }
  return value;
}

static void write_le(unsigned char *bytes, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) {
    bytes[i] = (unsigned char)(value >> (8 * i));
  }
}

kiln_status_t kiln_runtime_model_serialize(kiln_allocator_t allocator, const char *graph_json,
                                           const void *params_bytes, size_t params_size,
                                           void **out_bytes, size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  if (!graph_json || (!params_bytes && params_size > 0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "embedded model: the graph's JSON and params are needed");
  }
  size_t graph_size = strlen(graph_json);
  size_t total = KILN_RUNTIME_MODEL_HEADER_SIZE + graph_size;
  if (total < graph_size || total + params_size < total) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "embedded model: too large");
  }
  total += params_size;
  unsigned char *bytes = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, total, (void **)&bytes));
  memcpy(bytes, KILN_RUNTIME_MODEL_MAGIC, 8); /* with its NUL */
  write_le(bytes + 8, KILN_RUNTIME_MODEL_VERSION, 4);
  write_le(bytes + 12, 0, 4);
  write_le(bytes + 16, graph_size, 8);
  write_le(bytes + 24, params_size, 8);
  memcpy(bytes + KILN_RUNTIME_MODEL_HEADER_SIZE, graph_json, graph_size);
  if (params_size > 0) {
    memcpy(bytes + KILN_RUNTIME_MODEL_HEADER_SIZE + graph_size, params_bytes, params_size);
  }
  *out_bytes = bytes;
  *out_size = total;
  return KILN_OK;
}

/* The header's checks; the graph's and the params' sizes. */
static kiln_status_t check_header(const unsigned char *b, size_t size, const char *source,
                                  uint64_t *out_graph_size, uint64_t *out_params_size) {
  if (size < KILN_RUNTIME_MODEL_HEADER_SIZE) {
    return KILN_STATUS(DATA_LOSS,
                       "%s: the embedded model is %zu bytes, cut short inside its %d-byte header",
                       source, size, KILN_RUNTIME_MODEL_HEADER_SIZE);
  }
  if (memcmp(b, KILN_RUNTIME_MODEL_MAGIC, 8) != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the embedded model does not start with \"%s\": not a kiln model",
                       source, KILN_RUNTIME_MODEL_MAGIC);
  }
  uint64_t version = read_le(b + 8, 4);
  if (version != KILN_RUNTIME_MODEL_VERSION) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: embedded model version %llu; this kiln reads version %d",
                       source, (unsigned long long)version, KILN_RUNTIME_MODEL_VERSION);
  }
  if (read_le(b + 12, 4) != 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the embedded model's reserved field is %llu, not 0",
                       source, (unsigned long long)read_le(b + 12, 4));
  }
  uint64_t left = size - KILN_RUNTIME_MODEL_HEADER_SIZE;
  *out_graph_size = read_le(b + 16, 8);
  *out_params_size = read_le(b + 24, 8);
  if (*out_graph_size > left) {
    return KILN_STATUS(DATA_LOSS,
                       "%s: truncated: graph.json's %llu bytes run past the embedded model's "
                       "end (%llu bytes after the header)",
                       source, (unsigned long long)*out_graph_size, (unsigned long long)left);
  }
  left -= *out_graph_size;
  if (*out_params_size > left) {
    return KILN_STATUS(DATA_LOSS,
                       "%s: truncated: params.bin's %llu bytes run past the embedded model's end "
                       "(%llu bytes after graph.json)",
                       source, (unsigned long long)*out_params_size, (unsigned long long)left);
  }
  if (*out_params_size < left) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: %llu bytes after params.bin at the end of the embedded model", source,
                       (unsigned long long)(left - *out_params_size));
  }
  return KILN_OK;
}

kiln_status_t kiln_runtime_model_parse_embedded(kiln_allocator_t allocator, const void *bytes,
                                                size_t size, const char *source_name,
                                                char **out_graph_json,
                                                kiln_runtime_params_t **out_params) {
  *out_graph_json = NULL;
  *out_params = NULL;
  const char *source = source_name ? source_name : "<memory>";
  const unsigned char *b = bytes;
  if (!b && size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %zu bytes at NULL", source, size);
  }
  uint64_t graph_size = 0, params_size = 0;
  KILN_RETURN_IF_ERROR(check_header(b, size, source, &graph_size, &params_size));
  const unsigned char *graph = b + KILN_RUNTIME_MODEL_HEADER_SIZE;
  if (memchr(graph, '\0', (size_t)graph_size)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s(graph.json): holds a NUL byte: not JSON text", source);
  }
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, (size_t)graph_size + 1, (void **)&text));
  memcpy(text, graph, (size_t)graph_size);
  text[graph_size] = '\0';
  char params_source[600];
  snprintf(params_source, sizeof(params_source), "%.500s(params.bin)", source);
  kiln_status_t status = kiln_runtime_params_parse(allocator, graph + graph_size,
                                                   (size_t)params_size, params_source, out_params);
  if (status) {
    kiln_allocator_free(allocator, text);
    return status;
  }
  *out_graph_json = text;
  return KILN_OK;
}

kiln_status_t kiln_runtime_model_file_parse(kiln_allocator_t allocator, const void *bytes,
                                            size_t size, const char *source_name,
                                            char **out_graph_json,
                                            kiln_runtime_params_t **out_params) {
  *out_graph_json = NULL;
  *out_params = NULL;
  const char *source = source_name ? source_name : "<memory>";
  kiln_elf_t elf;
  KILN_RETURN_IF_ERROR(kiln_elf_parse(bytes, size, source, &elf));
  const void *embedded = NULL;
  size_t embedded_size = 0;
  kiln_status_t status =
      kiln_elf_symbol(&elf, KILN_RUNTIME_MODEL_SYMBOL, &embedded, &embedded_size);
  if (kiln_status_code(status) == KILN_STATUS_CODE_NOT_FOUND) {
    kiln_status_free(status);
    return KILN_STATUS(NOT_FOUND,
                       "%s holds no model (no %s symbol): a library of kernels alone, as a "
                       "folder's lib.so is; load the folder, or compile with -o FILE.so",
                       source, KILN_RUNTIME_MODEL_SYMBOL);
  }
  KILN_RETURN_IF_ERROR(status);
  return kiln_runtime_model_parse_embedded(allocator, embedded, embedded_size, source,
                                           out_graph_json, out_params);
}

kiln_status_t kiln_runtime_model_file_read(kiln_allocator_t allocator, const char *path,
                                           char **out_graph_json,
                                           kiln_runtime_params_t **out_params) {
  *out_graph_json = NULL;
  *out_params = NULL;
  if (!path) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_runtime_model_file_read: null path");
  }
  kiln_file_mapping_t mapping;
  KILN_RETURN_IF_ERROR(kiln_file_map(path, &mapping));
  kiln_status_t status = kiln_runtime_model_file_parse(allocator, mapping.data, mapping.size, path,
                                                       out_graph_json, out_params);
  kiln_file_unmap(&mapping);
  return status;
}
