/*
 * The embedded model of a one-file model (internal to kiln; the format is
 * in include/kiln/runtime.h and docs/formats.md): the __kiln_model
 * symbol's bytes alone, without the library around them. The fuzzer and
 * the tests reach the parser through this header.
 */
#ifndef KILN_RUNTIME_MODEL_FILE_H_
#define KILN_RUNTIME_MODEL_FILE_H_

#include "kiln/runtime.h"

/* magic (8) + version (4) + reserved (4) + graph size (8) + params size (8). */
#define KILN_RUNTIME_MODEL_HEADER_SIZE 32

/* Parses the embedded bytes: graph.json's text (a NUL-terminated copy the
 * caller frees with `allocator`) and the params. Errors start with
 * `source_name`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_model_parse_embedded(
    kiln_allocator_t allocator, const void *bytes, size_t size, const char *source_name,
    char **out_graph_json, kiln_runtime_params_t **out_params);

#endif /* KILN_RUNTIME_MODEL_FILE_H_ */
