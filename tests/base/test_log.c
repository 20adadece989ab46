/*
 * Tests of logging: level parsing, filtering by level (a filtered message is
 * never formatted), the sink, and the file:line it reports.
 */
#include <string.h>

#include "base/log.h"
#include "kiln_test.h"

typedef struct captured_t {
  int count;
  kiln_log_level_t level;
  char file[128];
  int line;
  char message[256];
} captured_t;

static void capture_sink(void *self, kiln_log_level_t level, const char *file, int line,
                         const char *message) {
  captured_t *captured = self;
  captured->count++;
  captured->level = level;
  strncpy(captured->file, file, sizeof(captured->file) - 1);
  captured->line = line;
  strncpy(captured->message, message, sizeof(captured->message) - 1);
}

static int formatted_count;
static int counted_argument(void) {
  return ++formatted_count;
}

static void test_parse_levels(void **state) {
  (void)state;
  kiln_log_level_t level;
  KILN_ASSERT_OK(kiln_log_level_parse("debug", &level));
  assert_int_equal(level, KILN_LOG_LEVEL_DEBUG);
  KILN_ASSERT_OK(kiln_log_level_parse("ERROR", &level));
  assert_int_equal(level, KILN_LOG_LEVEL_ERROR);
  KILN_ASSERT_OK(kiln_log_level_parse("warning", &level));
  assert_int_equal(level, KILN_LOG_LEVEL_WARN);
  KILN_ASSERT_OK(kiln_log_level_parse("4", &level));
  assert_int_equal(level, KILN_LOG_LEVEL_TRACE);
  KILN_ASSERT_STATUS(kiln_log_level_parse("loud", &level), INVALID_ARGUMENT, "'loud'");
  KILN_ASSERT_STATUS(kiln_log_level_parse("5", &level), INVALID_ARGUMENT, "'5'");
  assert_string_equal(kiln_log_level_name(KILN_LOG_LEVEL_INFO), "info");
  assert_string_equal(kiln_log_level_name((kiln_log_level_t)9), "invalid");
}

static void test_filter_and_sink(void **state) {
  (void)state;
  captured_t captured = {0};
  kiln_log_set_sink(capture_sink, &captured);
  kiln_log_set_level(KILN_LOG_LEVEL_WARN);
  formatted_count = 0;
  KILN_LOG_INFO("hidden %d", counted_argument());
  assert_int_equal(captured.count, 0);
  assert_int_equal(formatted_count, 0); /* arguments are not evaluated below the level */

  int line = __LINE__ + 1;
  KILN_LOG_WARN("node %s has %d inputs", "conv1", 3);
  assert_int_equal(captured.count, 1);
  assert_int_equal(captured.level, KILN_LOG_LEVEL_WARN);
  assert_string_equal(captured.message, "node conv1 has 3 inputs");
  assert_non_null(strstr(captured.file, "test_log.c"));
  assert_int_equal(captured.line, line);

  kiln_log_set_level(KILN_LOG_LEVEL_TRACE);
  KILN_LOG_TRACE("now shown");
  assert_int_equal(captured.count, 2);
  assert_int_equal(kiln_log_level(), KILN_LOG_LEVEL_TRACE);

  kiln_log_set_sink(NULL, NULL);
  kiln_log_set_level(KILN_LOG_LEVEL_ERROR);
  KILN_LOG_WARN("not captured");
  assert_int_equal(captured.count, 2);
}

static void test_long_message_is_cut(void **state) {
  (void)state;
  captured_t captured = {0};
  kiln_log_set_sink(capture_sink, &captured);
  kiln_log_set_level(KILN_LOG_LEVEL_INFO);
  char big[4000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  KILN_LOG_INFO("%s", big);
  assert_int_equal(captured.count, 1);
  kiln_log_set_sink(NULL, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_levels),
      cmocka_unit_test(test_filter_and_sink),
      cmocka_unit_test(test_long_message_is_cut),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
