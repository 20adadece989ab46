/*
 * Tests of kiln_status_t: making, annotating, formatting, freeing, the
 * early-return macros, and the live counter that other tests rely on.
 */
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"

static kiln_status_t fail_with(int value) {
  if (value < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "value %d is negative", value);
  }
  return KILN_OK;
}

static kiln_status_t caller(int value, int *out_reached_end) {
  *out_reached_end = 0;
  KILN_RETURN_IF_ERROR(fail_with(value));
  *out_reached_end = 1;
  return KILN_OK;
}

static kiln_status_t annotating_caller(int value) {
  KILN_RETURN_IF_ERROR_ANNOTATE(fail_with(value), "while checking input %s", "x");
  return KILN_OK;
}

static void test_ok_is_null(void **state) {
  (void)state;
  kiln_status_t status = fail_with(1);
  assert_null(status);
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_OK);
  assert_string_equal(kiln_status_message(status), "");
  char buffer[16];
  kiln_status_format(status, buffer, sizeof(buffer));
  assert_string_equal(buffer, "OK");
  kiln_status_free(status);
}

static void test_make_carries_code_message_file_line(void **state) {
  (void)state;
  int64_t live = kiln_status_live_count();
  int line = __LINE__ + 1;
  kiln_status_t status = KILN_STATUS(NOT_FOUND, "no tensor named '%s' (%d)", "w", 3);
  assert_non_null(status);
  assert_int_equal(kiln_status_live_count(), live + 1);
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_NOT_FOUND);
  assert_string_equal(kiln_status_message(status), "no tensor named 'w' (3)");
  assert_string_equal(kiln_status_file(status), "tests/base/test_status.c");
  assert_int_equal(kiln_status_line(status), line);
  kiln_status_free(status);
  assert_int_equal(kiln_status_live_count(), live);
}

static void test_make_with_ok_code_is_ok(void **state) {
  (void)state;
  assert_null(kiln_status_make(KILN_STATUS_CODE_OK, __FILE__, __LINE__, "ignored"));
}

static void test_return_if_error(void **state) {
  (void)state;
  int reached = -1;
  assert_null(caller(5, &reached));
  assert_int_equal(reached, 1);
  KILN_ASSERT_STATUS(caller(-2, &reached), INVALID_ARGUMENT, "value -2 is negative");
  assert_int_equal(reached, 0);
}

static void test_annotate_prepends_context(void **state) {
  (void)state;
  kiln_status_t status = annotating_caller(-1);
  status = kiln_status_annotate(status, "in model %s", "m.onnx");
  assert_string_equal(kiln_status_message(status),
                      "in model m.onnx: while checking input x: value -1 is negative");
  /* The origin stays where the error was made. */
  assert_string_equal(kiln_status_file(status), "tests/base/test_status.c");
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
  kiln_status_free(status);
  assert_null(kiln_status_annotate(NULL, "nothing to annotate"));
}

static void test_format_and_to_string(void **state) {
  (void)state;
  kiln_status_t status = KILN_STATUS(DATA_LOSS, "truncated after %d bytes", 10);
  char *text = kiln_status_to_string(status);
  assert_non_null(text);
  assert_non_null(strstr(text, "DATA_LOSS: truncated after 10 bytes (tests/base/test_status.c:"));
  size_t needed = kiln_status_format(status, NULL, 0);
  assert_int_equal(needed, strlen(text));
  char small[8];
  kiln_status_format(status, small, sizeof(small));
  assert_string_equal(small, "DATA_LO");
  free(text);
  kiln_status_free(status);
}

static void test_code_names(void **state) {
  (void)state;
  assert_string_equal(kiln_status_code_name(KILN_STATUS_CODE_OK), "OK");
  assert_string_equal(kiln_status_code_name(KILN_STATUS_CODE_INTERNAL), "INTERNAL");
  assert_string_equal(kiln_status_code_name(KILN_STATUS_CODE_IO_ERROR), "IO_ERROR");
  assert_string_equal(kiln_status_code_name((kiln_status_code_t)999), "UNKNOWN");
}

static void test_consume_ok(void **state) {
  (void)state;
  assert_true(kiln_status_consume_ok(KILN_OK));
  int64_t live = kiln_status_live_count();
  assert_false(kiln_status_consume_ok(KILN_STATUS(INTERNAL, "x")));
  assert_int_equal(kiln_status_live_count(), live);
}

static void test_long_message(void **state) {
  (void)state;
  char big[5000];
  memset(big, 'a', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  kiln_status_t status = KILN_STATUS(INTERNAL, "%s", big);
  status = kiln_status_annotate(status, "ctx");
  assert_int_equal(strlen(kiln_status_message(status)), 5 + sizeof(big) - 1);
  kiln_status_free(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ok_is_null),
      cmocka_unit_test(test_make_carries_code_message_file_line),
      cmocka_unit_test(test_make_with_ok_code_is_ok),
      cmocka_unit_test(test_return_if_error),
      cmocka_unit_test(test_annotate_prepends_context),
      cmocka_unit_test(test_format_and_to_string),
      cmocka_unit_test(test_code_names),
      cmocka_unit_test(test_consume_ok),
      cmocka_unit_test(test_long_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
