/*
 * JSON, through jansson.
 *
 * kiln reads and writes JSON (graph.json, the graph executor's file)
 * with jansson, a Debian library chosen over cJSON because its
 * parse errors carry line, column and position in a per-call struct (cJSON
 * keeps one global error pointer, unsafe across threads), values are
 * reference counted, and object keys keep insertion order so dumped files are
 * stable (docs/dependencies.md). This module wraps the calls that can fail in
 * kiln statuses and adds typed getters whose errors name the source, the key
 * and the type found, so a bad file gives "graph.json: key 'nodes': expected
 * array, got string". Values use jansson's own heap; release them with
 * json_decref.
 */
#ifndef KILN_BASE_JSON_H_
#define KILN_BASE_JSON_H_

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

/* Parses `length` bytes; errors read "<source_name>:<line>:<column>: <reason>". */
KILN_MUST_USE_RESULT kiln_status_t kiln_json_parse(const char *text, size_t length,
                                                   const char *source_name, json_t **out_json);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_read_file(const char *path, json_t **out_json);

/* Indented (indent > 0) or compact (0) text with keys in insertion order; the
 * caller frees *out_text with `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_json_dump(kiln_allocator_t allocator, const json_t *json,
                                                  int indent, char **out_text);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_write_file(const char *path, const json_t *json,
                                                        int indent);

/* "object", "array", "string", "integer", "real", "true", "false", "null". */
const char *kiln_json_type_name(const json_t *json);

/* Typed member access; `source_name` prefixes errors. A missing key is
 * NOT_FOUND; a member of another type is INVALID_ARGUMENT. Borrowed results
 * live as long as `object`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_json_get_object(const json_t *object, const char *key,
                                                        const char *source_name,
                                                        json_t **out_value);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_get_array(const json_t *object, const char *key,
                                                       const char *source_name, json_t **out_value);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_get_string(const json_t *object, const char *key,
                                                        const char *source_name,
                                                        const char **out_value);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_get_int(const json_t *object, const char *key,
                                                     const char *source_name, int64_t *out_value);
/* Integers are accepted as numbers too. */
KILN_MUST_USE_RESULT kiln_status_t kiln_json_get_number(const json_t *object, const char *key,
                                                        const char *source_name, double *out_value);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_get_bool(const json_t *object, const char *key,
                                                      const char *source_name, int *out_value);

/* Appends a new value to an array or sets a member, taking the reference of
 * `value` in every case (also on failure, when it is released). */
KILN_MUST_USE_RESULT kiln_status_t kiln_json_array_append_new(json_t *array, json_t *value);
KILN_MUST_USE_RESULT kiln_status_t kiln_json_object_set_new(json_t *object, const char *key,
                                                            json_t *value);

#endif /* KILN_BASE_JSON_H_ */
