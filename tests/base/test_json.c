/*
 * Tests of the JSON wrapper: parse errors with line and column, typed getters
 * and their errors, dump with stable key order, and file round trips.
 */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "kiln_test.h"

static const char graph_text[] = "{\n"
                                 "  \"nodes\": [{\"op\": \"null\", \"name\": \"x\"}],\n"
                                 "  \"version\": 3,\n"
                                 "  \"scale\": 0.5,\n"
                                 "  \"fused\": true\n"
                                 "}\n";

static void test_parse_and_get(void **state) {
  (void)state;
  json_t *json = NULL;
  KILN_ASSERT_OK(kiln_json_parse(graph_text, strlen(graph_text), "graph.json", &json));
  json_t *nodes = NULL;
  KILN_ASSERT_OK(kiln_json_get_array(json, "nodes", "graph.json", &nodes));
  assert_int_equal(json_array_size(nodes), 1);
  const char *name = NULL;
  KILN_ASSERT_OK(kiln_json_get_string(json_array_get(nodes, 0), "name", "graph.json", &name));
  assert_string_equal(name, "x");
  int64_t version = 0;
  KILN_ASSERT_OK(kiln_json_get_int(json, "version", "graph.json", &version));
  assert_int_equal(version, 3);
  double scale = 0;
  KILN_ASSERT_OK(kiln_json_get_number(json, "scale", "graph.json", &scale));
  assert_true(scale == 0.5);
  KILN_ASSERT_OK(kiln_json_get_number(json, "version", "graph.json", &scale));
  assert_true(scale == 3.0);
  int fused = 0;
  KILN_ASSERT_OK(kiln_json_get_bool(json, "fused", "graph.json", &fused));
  assert_true(fused);

  json_t *not_object = NULL;
  KILN_ASSERT_STATUS(kiln_json_get_array(json, "edges", "graph.json", &not_object), NOT_FOUND,
                     "graph.json: missing key 'edges'");
  KILN_ASSERT_STATUS(kiln_json_get_string(json, "version", "graph.json", &name), INVALID_ARGUMENT,
                     "graph.json: key 'version': expected string, got integer");
  KILN_ASSERT_STATUS(kiln_json_get_int(json, "scale", "graph.json", &version), INVALID_ARGUMENT,
                     "expected integer, got real");
  KILN_ASSERT_STATUS(kiln_json_get_object(json, "nodes", "graph.json", &not_object),
                     INVALID_ARGUMENT, "expected object, got array");
  assert_null(not_object);
  KILN_ASSERT_STATUS(kiln_json_get_bool(nodes, "x", "graph.json", &fused), INVALID_ARGUMENT,
                     "looking up key 'x': expected object, got array");
  json_decref(json);
}

static void test_parse_errors_have_line_and_column(void **state) {
  (void)state;
  json_t *json = (json_t *)1;
  const char bad[] = "{\n  \"a\": 1,\n  \"b\": }\n";
  KILN_ASSERT_STATUS(kiln_json_parse(bad, strlen(bad), "cache.json", &json), INVALID_ARGUMENT,
                     "cache.json:3:");
  assert_null(json);
  const char duplicate[] = "{\"a\": 1, \"a\": 2}";
  KILN_ASSERT_STATUS(kiln_json_parse(duplicate, strlen(duplicate), "d.json", &json),
                     INVALID_ARGUMENT, "duplicate");
  KILN_ASSERT_STATUS(kiln_json_parse("", 0, "empty.json", &json), INVALID_ARGUMENT, "empty.json");
}

static void test_dump_keeps_order(void **state) {
  (void)state;
  json_t *object = json_object();
  KILN_ASSERT_OK(kiln_json_object_set_new(object, "zeta", json_integer(1)));
  KILN_ASSERT_OK(kiln_json_object_set_new(object, "alpha", json_string("conv")));
  json_t *list = json_array();
  KILN_ASSERT_OK(kiln_json_array_append_new(list, json_real(1.5)));
  KILN_ASSERT_OK(kiln_json_object_set_new(object, "list", list));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_json_dump(kiln_allocator_system(), object, 0, &text));
  assert_string_equal(text, "{\"zeta\":1,\"alpha\":\"conv\",\"list\":[1.5]}");
  kiln_allocator_free(kiln_allocator_system(), text);
  KILN_ASSERT_OK(kiln_json_dump(kiln_allocator_system(), object, 2, &text));
  assert_non_null(strstr(text, "\n  \"alpha\": \"conv\""));
  kiln_allocator_free(kiln_allocator_system(), text);

  KILN_ASSERT_STATUS(kiln_json_array_append_new(object, json_integer(2)), INVALID_ARGUMENT,
                     "cannot append to a JSON object");
  KILN_ASSERT_STATUS(kiln_json_object_set_new(list, "k", json_integer(2)), INVALID_ARGUMENT,
                     "cannot set key 'k' on a JSON array");
  KILN_ASSERT_STATUS(kiln_json_object_set_new(object, "k", NULL), RESOURCE_EXHAUSTED, "'k'");
  json_decref(object);
}

static void test_file_round_trip(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "g.json");
  json_t *json = NULL;
  KILN_ASSERT_OK(kiln_json_parse(graph_text, strlen(graph_text), "graph.json", &json));
  KILN_ASSERT_OK(kiln_json_write_file(path, json, 1));
  json_t *again = NULL;
  KILN_ASSERT_OK(kiln_json_read_file(path, &again));
  assert_true(json_equal(json, again));
  json_decref(again);
  json_decref(json);
  KILN_ASSERT_STATUS(kiln_json_read_file("/nonexistent/g.json", &again), NOT_FOUND,
                     "/nonexistent/g.json");
  kiln_test_write_file(path, "[1, 2", 5);
  KILN_ASSERT_STATUS(kiln_json_read_file(path, &again), INVALID_ARGUMENT, "g.json:1:");
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

static void test_type_names(void **state) {
  (void)state;
  json_t *values[] = {json_object(), json_array(), json_string("s"), json_integer(1),
                      json_real(1),  json_true(),  json_false(),     json_null()};
  const char *names[] = {"object", "array", "string", "integer", "real", "true", "false", "null"};
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); ++i) {
    assert_string_equal(kiln_json_type_name(values[i]), names[i]);
    json_decref(values[i]);
  }
  assert_string_equal(kiln_json_type_name(NULL), "nothing");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_and_get),
      cmocka_unit_test(test_parse_errors_have_line_and_column),
      cmocka_unit_test(test_dump_keeps_order),
      cmocka_unit_test(test_file_round_trip),
      cmocka_unit_test(test_type_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
