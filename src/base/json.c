/*
 * JSON wrapper over jansson; see json.h.
 *
 * Every getter goes through kiln_json_member, which finds the key and checks
 * the type against a jansson type mask, so the error wording is written once.
 */
#include "base/json.h"

#include <string.h>

#include "base/file.h"

kiln_status_t kiln_json_parse(const char *text, size_t length, const char *source_name,
                              json_t **out_json) {
  *out_json = NULL;
  json_error_t error;
  json_t *json = json_loadb(text, length, JSON_REJECT_DUPLICATES, &error);
  if (!json) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s:%d:%d: %s", source_name, error.line, error.column,
                       error.text);
  }
  *out_json = json;
  return KILN_OK;
}

kiln_status_t kiln_json_read_file(const char *path, json_t **out_json) {
  kiln_allocator_t system = kiln_allocator_system();
  void *text = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(system, path, &text, &size));
  kiln_status_t status = kiln_json_parse(text, size, path, out_json);
  kiln_allocator_free(system, text);
  return status;
}

kiln_status_t kiln_json_dump(kiln_allocator_t allocator, const json_t *json, int indent,
                             char **out_text) {
  *out_text = NULL;
  size_t flags = JSON_PRESERVE_ORDER | JSON_ENCODE_ANY;
  if (indent > 0) {
    flags |= JSON_INDENT(indent > 31 ? 31 : indent);
  } else {
    flags |= JSON_COMPACT;
  }
  size_t length = json_dumpb(json, NULL, 0, flags);
  if (length == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "cannot encode a JSON %s", kiln_json_type_name(json));
  }
  void *buffer = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, length + 1, &buffer));
  json_dumpb(json, buffer, length, flags);
  ((char *)buffer)[length] = '\0';
  *out_text = buffer;
  return KILN_OK;
}

kiln_status_t kiln_json_write_file(const char *path, const json_t *json, int indent) {
  kiln_allocator_t system = kiln_allocator_system();
  char *text = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_json_dump(system, json, indent, &text), "%s", path);
  kiln_status_t status = kiln_file_write_all(path, text, strlen(text));
  kiln_allocator_free(system, text);
  return status;
}

const char *kiln_json_type_name(const json_t *json) {
  if (!json) {
    return "nothing";
  }
  switch (json_typeof(json)) {
  case JSON_OBJECT:
    return "object";
  case JSON_ARRAY:
    return "array";
  case JSON_STRING:
    return "string";
  case JSON_INTEGER:
    return "integer";
  case JSON_REAL:
    return "real";
  case JSON_TRUE:
    return "true";
  case JSON_FALSE:
    return "false";
  case JSON_NULL:
    return "null";
  }
  return "unknown";
}

/* Bits of the jansson types a getter accepts. */
enum {
  KILN_JSON_ACCEPT_OBJECT = 1 << JSON_OBJECT,
  KILN_JSON_ACCEPT_ARRAY = 1 << JSON_ARRAY,
  KILN_JSON_ACCEPT_STRING = 1 << JSON_STRING,
  KILN_JSON_ACCEPT_INTEGER = 1 << JSON_INTEGER,
  KILN_JSON_ACCEPT_REAL = 1 << JSON_REAL,
  KILN_JSON_ACCEPT_BOOL = (1 << JSON_TRUE) | (1 << JSON_FALSE),
};

static kiln_status_t kiln_json_member(const json_t *object, const char *key,
                                      const char *source_name, unsigned accept,
                                      const char *expected, json_t **out_value) {
  *out_value = NULL;
  if (!json_is_object(object)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: looking up key '%s': expected object, got %s",
                       source_name, key, kiln_json_type_name(object));
  }
  json_t *value = json_object_get(object, key);
  if (!value) {
    return KILN_STATUS(NOT_FOUND, "%s: missing key '%s'", source_name, key);
  }
  if (!(accept & (1u << json_typeof(value)))) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: key '%s': expected %s, got %s", source_name, key,
                       expected, kiln_json_type_name(value));
  }
  *out_value = value;
  return KILN_OK;
}

kiln_status_t kiln_json_get_object(const json_t *object, const char *key, const char *source_name,
                                   json_t **out_value) {
  return kiln_json_member(object, key, source_name, KILN_JSON_ACCEPT_OBJECT, "object", out_value);
}

kiln_status_t kiln_json_get_array(const json_t *object, const char *key, const char *source_name,
                                  json_t **out_value) {
  return kiln_json_member(object, key, source_name, KILN_JSON_ACCEPT_ARRAY, "array", out_value);
}

kiln_status_t kiln_json_get_string(const json_t *object, const char *key, const char *source_name,
                                   const char **out_value) {
  json_t *value = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_json_member(object, key, source_name, KILN_JSON_ACCEPT_STRING, "string", &value));
  *out_value = json_string_value(value);
  return KILN_OK;
}

kiln_status_t kiln_json_get_int(const json_t *object, const char *key, const char *source_name,
                                int64_t *out_value) {
  json_t *value = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_json_member(object, key, source_name, KILN_JSON_ACCEPT_INTEGER, "integer", &value));
  *out_value = (int64_t)json_integer_value(value);
  return KILN_OK;
}

kiln_status_t kiln_json_get_number(const json_t *object, const char *key, const char *source_name,
                                   double *out_value) {
  json_t *value = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_member(object, key, source_name,
                                        KILN_JSON_ACCEPT_INTEGER | KILN_JSON_ACCEPT_REAL, "number",
                                        &value));
  *out_value = json_number_value(value);
  return KILN_OK;
}

kiln_status_t kiln_json_get_bool(const json_t *object, const char *key, const char *source_name,
                                 int *out_value) {
  json_t *value = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_json_member(object, key, source_name, KILN_JSON_ACCEPT_BOOL, "true or false", &value));
  *out_value = json_is_true(value);
  return KILN_OK;
}

kiln_status_t kiln_json_array_append_new(json_t *array, json_t *value) {
  if (!value) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory making a JSON value");
  }
  if (json_array_append_new(array, value) != 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "cannot append to a JSON %s", kiln_json_type_name(array));
  }
  return KILN_OK;
}

kiln_status_t kiln_json_object_set_new(json_t *object, const char *key, json_t *value) {
  if (!value) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory making JSON member '%s'", key);
  }
  if (json_object_set_new(object, key, value) != 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "cannot set key '%s' on a JSON %s", key,
                       kiln_json_type_name(object));
  }
  return KILN_OK;
}
