/*
 * Tests of the string builder: "" before anything is appended (without
 * allocating), each append form, growth across many doublings, formatted text
 * longer than the buffer, reset keeping capacity, take handing the buffer over
 * and leaving the builder usable, reserve, overflowing lengths, a failed growth
 * leaving the text unchanged, a formatting error, a builder in an arena, and a
 * sweep that fails each allocation of a many-appendf build in turn.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "kiln_test.h"

static long long live_blocks(kiln_counting_allocator_t *counting) {
  return (long long)kiln_counting_allocator_counts(counting).live_blocks;
}

static void test_empty_builder(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_counting_allocator_get(&counting));
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  assert_int_equal(kiln_strbuf_length(&sb), 0);
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, ""));
  KILN_ASSERT_OK(kiln_strbuf_append_n(&sb, NULL, 0));
  kiln_strbuf_reset(&sb);
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 0);
  kiln_strbuf_deinitialize(&sb);
  kiln_strbuf_deinitialize(&sb);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_append_forms(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "conv"));
  assert_string_equal(kiln_strbuf_c_str(&sb), "conv");
  KILN_ASSERT_OK(kiln_strbuf_append_char(&sb, '2'));
  KILN_ASSERT_OK(kiln_strbuf_append_n(&sb, "dxyz", 1));
  KILN_ASSERT_OK(
      kiln_strbuf_appendf(&sb, "(%d, %s, %.3f, %zu, %x)", -3, "nchw", 0.5, (size_t)64, 255u));
  KILN_ASSERT_OK(kiln_strbuf_appendf(&sb, "%s", ""));
  const char *expected = "conv2d(-3, nchw, 0.500, 64, ff)";
  assert_string_equal(kiln_strbuf_c_str(&sb), expected);
  assert_int_equal(kiln_strbuf_length(&sb), strlen(expected));
  kiln_strbuf_deinitialize(&sb);
}

static void test_append_n_keeps_embedded_bytes(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_strbuf_append_n(&sb, "a\0b", 3));
  assert_int_equal(kiln_strbuf_length(&sb), 3);
  assert_memory_equal(kiln_strbuf_c_str(&sb), "a\0b", 4); /* and the final NUL */
  kiln_strbuf_deinitialize(&sb);
}

static void test_growth_doubles(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_counting_allocator_get(&counting));
  size_t capacities[16];
  size_t changes = 0;
  for (int i = 0; i < 10000; ++i) {
    KILN_ASSERT_OK(kiln_strbuf_append_char(&sb, (char)('a' + i % 26)));
    if (changes == 0 || sb.capacity != capacities[changes - 1]) {
      assert_true(changes < 16);
      capacities[changes++] = sb.capacity;
    }
  }
  /* 64, 128, ..., 16384: nine growths, each doubling. */
  assert_int_equal(changes, 9);
  for (size_t i = 0; i < changes; ++i) {
    assert_int_equal(capacities[i], (size_t)64 << i);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 9);
  assert_int_equal(kiln_strbuf_length(&sb), 10000);
  const char *text = kiln_strbuf_c_str(&sb);
  assert_int_equal(strlen(text), 10000);
  for (int i = 0; i < 10000; ++i) {
    assert_int_equal(text[i], 'a' + i % 26);
  }
  kiln_strbuf_deinitialize(&sb);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_appendf_longer_than_the_buffer(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "x="));
  KILN_ASSERT_OK(kiln_strbuf_appendf(&sb, "%5000d|", 42));
  assert_int_equal(kiln_strbuf_length(&sb), 2 + 5000 + 1);
  const char *text = kiln_strbuf_c_str(&sb);
  assert_int_equal(text[2], ' ');
  assert_memory_equal(text + 2 + 4998, "42|", 4);
  /* Exactly filling the buffer, then one more byte. */
  kiln_strbuf_t exact;
  kiln_strbuf_initialize(&exact, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_strbuf_appendf(&exact, "%63s", "end"));
  assert_int_equal(exact.capacity, 64);
  KILN_ASSERT_OK(kiln_strbuf_appendf(&exact, "%c", '!'));
  assert_int_equal(exact.capacity, 128);
  assert_int_equal(kiln_strbuf_length(&exact), 64);
  assert_string_equal(kiln_strbuf_c_str(&exact) + 60, "end!");
  kiln_strbuf_deinitialize(&exact);
  kiln_strbuf_deinitialize(&sb);
}

static kiln_status_t append_both(kiln_strbuf_t *sb, const char *format, ...)
    KILN_PRINTF_FORMAT(2, 3);

static kiln_status_t append_both(kiln_strbuf_t *sb, const char *format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status_t status = kiln_strbuf_appendf_v(sb, format, args);
  va_end(args);
  KILN_RETURN_IF_ERROR(status);
  va_start(args, format);
  status = kiln_strbuf_appendf_v(sb, format, args);
  va_end(args);
  return status;
}

static void test_appendf_v(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(append_both(&sb, "[%s:%d]", "node", 7));
  assert_string_equal(kiln_strbuf_c_str(&sb), "[node:7][node:7]");
  kiln_strbuf_deinitialize(&sb);
}

static void test_formatting_error_is_a_status(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "keep"));
  /* In the C locale a wide character outside ASCII cannot be converted. */
  static const wchar_t wide[] = {0x4e2d, 0};
  KILN_ASSERT_STATUS(kiln_strbuf_appendf(&sb, "%ls", wide), INVALID_ARGUMENT,
                     "formatting \"%ls\" failed");
  assert_string_equal(kiln_strbuf_c_str(&sb), "keep");
  kiln_strbuf_deinitialize(&sb);
}

static void test_reset_keeps_capacity(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_counting_allocator_get(&counting));
  for (int i = 0; i < 100; ++i) {
    KILN_ASSERT_OK(kiln_strbuf_appendf(&sb, "%d,", i));
  }
  size_t capacity = sb.capacity;
  kiln_strbuf_reset(&sb);
  assert_int_equal(kiln_strbuf_length(&sb), 0);
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  assert_int_equal(sb.capacity, capacity);
  long long attempts = (long long)kiln_counting_allocator_counts(&counting).attempts;
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "again"));
  assert_string_equal(kiln_strbuf_c_str(&sb), "again");
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, attempts);
  kiln_strbuf_deinitialize(&sb);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_take_hands_over_the_buffer(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_allocator_t allocator = kiln_counting_allocator_get(&counting);
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  KILN_ASSERT_OK(kiln_strbuf_appendf(&sb, "%s=%d", "axis", 1));
  const char *inside = kiln_strbuf_c_str(&sb);
  char *text = NULL;
  KILN_ASSERT_OK(kiln_strbuf_take(&sb, &text));
  assert_ptr_equal(text, inside); /* no copy */
  assert_string_equal(text, "axis=1");
  /* The builder is empty and usable. */
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  assert_int_equal(kiln_strbuf_length(&sb), 0);
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "next"));
  assert_string_equal(kiln_strbuf_c_str(&sb), "next");
  assert_string_equal(text, "axis=1");
  kiln_allocator_free(allocator, text);
  kiln_strbuf_reset(&sb);
  char *second = NULL;
  KILN_ASSERT_OK(kiln_strbuf_take(&sb, &second));
  assert_string_equal(second, "");
  kiln_allocator_free(allocator, second);
  /* Taking from a builder that never allocated gives a fresh "". */
  char *empty = NULL;
  KILN_ASSERT_OK(kiln_strbuf_take(&sb, &empty));
  assert_non_null(empty);
  assert_string_equal(empty, "");
  kiln_allocator_free(allocator, empty);
  kiln_strbuf_deinitialize(&sb);
  assert_int_equal(live_blocks(&counting), 0);

  kiln_counting_allocator_fail_attempt(&counting, 0);
  char *failed = (char *)(uintptr_t)1;
  KILN_ASSERT_STATUS(kiln_strbuf_take(&sb, &failed), RESOURCE_EXHAUSTED, "out of memory");
  assert_null(failed);
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_reserve(void **state) {
  (void)state;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_strbuf_reserve(&sb, 1000));
  assert_int_equal(sb.capacity, 1001);
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  const char *data = kiln_strbuf_c_str(&sb);
  for (int i = 0; i < 1000; ++i) {
    KILN_ASSERT_OK(kiln_strbuf_append_char(&sb, 'z'));
  }
  assert_ptr_equal(kiln_strbuf_c_str(&sb), data);
  KILN_ASSERT_OK(kiln_strbuf_reserve(&sb, 10));
  assert_int_equal(sb.capacity, 1001);
  KILN_ASSERT_OK(kiln_strbuf_append_char(&sb, '!'));
  assert_int_equal(sb.capacity, 2002);
  assert_int_equal(kiln_strbuf_c_str(&sb)[1000], '!');
  kiln_strbuf_deinitialize(&sb);
}

static void test_overflowing_lengths_fail_cleanly(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_counting_allocator_get(&counting));
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "abc"));
  long long attempts = (long long)kiln_counting_allocator_counts(&counting).attempts;
  KILN_ASSERT_STATUS(kiln_strbuf_append_n(&sb, "x", SIZE_MAX), RESOURCE_EXHAUSTED,
                     "string of 3 bytes cannot grow by");
  KILN_ASSERT_STATUS(kiln_strbuf_append_n(&sb, "x", SIZE_MAX - 3), RESOURCE_EXHAUSTED,
                     "cannot grow by");
  KILN_ASSERT_STATUS(kiln_strbuf_reserve(&sb, SIZE_MAX), RESOURCE_EXHAUSTED, "overflows size_t");
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, attempts);
  assert_string_equal(kiln_strbuf_c_str(&sb), "abc");
  assert_int_equal(kiln_strbuf_length(&sb), 3);
  kiln_strbuf_deinitialize(&sb);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_failed_growth_leaves_the_text_unchanged(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_counting_allocator_get(&counting));
  kiln_counting_allocator_fail_attempt(&counting, 0);
  KILN_ASSERT_STATUS(kiln_strbuf_append(&sb, "first"), RESOURCE_EXHAUSTED, "out of memory");
  assert_string_equal(kiln_strbuf_c_str(&sb), "");
  KILN_ASSERT_OK(kiln_strbuf_append(&sb, "first"));
  kiln_counting_allocator_fail_attempt(&counting, 0);
  KILN_ASSERT_STATUS(kiln_strbuf_appendf(&sb, "%100d", 1), RESOURCE_EXHAUSTED, "out of memory");
  assert_string_equal(kiln_strbuf_c_str(&sb), "first");
  assert_int_equal(kiln_strbuf_length(&sb), 5);
  assert_int_equal(sb.capacity, 64);
  KILN_ASSERT_OK(kiln_strbuf_append_char(&sb, '!'));
  assert_string_equal(kiln_strbuf_c_str(&sb), "first!");
  kiln_strbuf_deinitialize(&sb);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_builder_in_an_arena(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 1024);
  kiln_strbuf_t a, b;
  kiln_strbuf_initialize(&a, kiln_arena_allocator(&arena));
  kiln_strbuf_initialize(&b, kiln_arena_allocator(&arena));
  for (int i = 0; i < 500; ++i) {
    KILN_ASSERT_OK(kiln_strbuf_appendf(&a, "%d ", i % 10));
    KILN_ASSERT_OK(kiln_strbuf_append_char(&b, (char)('0' + i % 10)));
  }
  assert_int_equal(kiln_strbuf_length(&a), 1000);
  assert_int_equal(kiln_strbuf_length(&b), 500);
  assert_memory_equal(kiln_strbuf_c_str(&a) + 990, "5 6 7 8 9 ", 11);
  assert_memory_equal(kiln_strbuf_c_str(&b) + 495, "56789", 6);
  kiln_strbuf_deinitialize(&a);
  kiln_strbuf_deinitialize(&b);
  kiln_arena_deinitialize(&arena);
}

/* Builds a C-like listing with many appendf calls and checks it against the
 * same text made with snprintf. */
static kiln_status_t build_listing(kiln_strbuf_t *sb, char **out_text) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, "void kernel(float *out) {\n"));
  for (int i = 0; i < 500; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "  out[%d] = %.2f * in_%s[%d];\n", i, i * 0.5,
                                             i % 2 ? "odd" : "even", i / 2));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append_char(sb, '}'));
  return kiln_strbuf_take(sb, out_text);
}

static void expected_listing(char *buffer, size_t capacity) {
  size_t length = (size_t)snprintf(buffer, capacity, "void kernel(float *out) {\n");
  for (int i = 0; i < 500; ++i) {
    length +=
        (size_t)snprintf(buffer + length, capacity - length, "  out[%d] = %.2f * in_%s[%d];\n", i,
                         i * 0.5, i % 2 ? "odd" : "even", i / 2);
  }
  snprintf(buffer + length, capacity - length, "}");
}

static kiln_status_t strbuf_scenario(kiln_allocator_t allocator, void *context) {
  const char *expected = context;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  char *text = NULL;
  kiln_status_t status = build_listing(&sb, &text);
  if (status == KILN_OK) {
    assert_string_equal(text, expected);
    assert_string_equal(kiln_strbuf_c_str(&sb), "");
  }
  kiln_allocator_free(allocator, text);
  kiln_strbuf_deinitialize(&sb);
  return status;
}

static void test_every_allocation_failure_is_reported(void **state) {
  (void)state;
  static char expected[64 * 1024];
  expected_listing(expected, sizeof(expected));
  assert_true(strlen(expected) > 10000);
  /* 64 -> 32768 by doubling: ten allocations. */
  assert_int_equal(kiln_test_sweep_allocation_failures(strbuf_scenario, expected), 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_builder),
      cmocka_unit_test(test_append_forms),
      cmocka_unit_test(test_append_n_keeps_embedded_bytes),
      cmocka_unit_test(test_growth_doubles),
      cmocka_unit_test(test_appendf_longer_than_the_buffer),
      cmocka_unit_test(test_appendf_v),
      cmocka_unit_test(test_formatting_error_is_a_status),
      cmocka_unit_test(test_reset_keeps_capacity),
      cmocka_unit_test(test_take_hands_over_the_buffer),
      cmocka_unit_test(test_reserve),
      cmocka_unit_test(test_overflowing_lengths_fail_cleanly),
      cmocka_unit_test(test_failed_growth_leaves_the_text_unchanged),
      cmocka_unit_test(test_builder_in_an_arena),
      cmocka_unit_test(test_every_allocation_failure_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
