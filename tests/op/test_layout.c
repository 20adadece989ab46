/*
 * Tests of the layout value (op/layout.h): parsing into axes and factors,
 * the canonical text and its round trip through the parser, equality (of
 * values and of texts), where an axis is, a split's factor, the blocked
 * predicate and the primal form, the constructors (split, sub), and every
 * error, each checked for the text it names and what it says was expected.
 */
#include <string.h>

#include "kiln_test.h"
#include "op/layout.h"

static kiln_layout_t parse(const char *text) {
  kiln_layout_t layout;
  KILN_ASSERT_OK(kiln_layout_parse(text, &layout));
  return layout;
}

static void test_parse(void **state) {
  (void)state;
  kiln_layout_t layout = parse("NCHW16c");
  assert_int_equal(layout.ndim, 5);
  assert_memory_equal(layout.axes, "NCHWc", 5);
  assert_int_equal(layout.factors[1], 0);
  assert_int_equal(layout.factors[4], 16);
  assert_string_equal(layout.text, "NCHW16c");
  layout = parse("OIHW3i4o");
  assert_int_equal(layout.ndim, 6);
  assert_memory_equal(layout.axes, "OIHWio", 6);
  assert_int_equal(layout.factors[4], 3);
  assert_int_equal(layout.factors[5], 4);
}

/* format(parse(text)) is text for canonical text, and parse(format(x)) == x. */
static void test_format_round_trip(void **state) {
  (void)state;
  const char *texts[] = {"NCHW", "NHWC",    "NCHW16c",  "OIHW16i16o",  "NC16n",
                         "C",    "NCDHW8c", "OIHW1i1o", "C1073741824c"};
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); ++i) {
    kiln_layout_t layout = parse(texts[i]);
    char text[KILN_LAYOUT_MAX_TEXT];
    KILN_ASSERT_OK(kiln_layout_format(&layout, text, sizeof(text)));
    assert_string_equal(text, texts[i]);
    assert_string_equal(layout.text, texts[i]);
    kiln_layout_t again = parse(text);
    assert_true(kiln_layout_equal(&layout, &again));
  }
  /* leading zeros are not canonical: the text drops them, the value is the same */
  kiln_layout_t padded = parse("NCHW016c");
  assert_string_equal(padded.text, "NCHW16c");
  kiln_layout_t plain = parse("NCHW16c");
  assert_true(kiln_layout_equal(&padded, &plain));
  char small[6];
  KILN_ASSERT_STATUS(kiln_layout_format(&plain, small, sizeof(small)), INVALID_ARGUMENT,
                     "layout of 5 axes does not fit 6 bytes of text");
}

static void test_equal(void **state) {
  (void)state;
  kiln_layout_t a = parse("NCHW16c"), b = parse("NCHW16c"), c = parse("NCHW8c"), d = parse("NHWC"),
                e = parse("NCHW");
  assert_true(kiln_layout_equal(&a, &b));
  assert_false(kiln_layout_equal(&a, &c)); /* factor */
  assert_false(kiln_layout_equal(&d, &e)); /* order */
  assert_false(kiln_layout_equal(&a, &e)); /* rank */
  assert_true(kiln_layout_text_equal("NCHW", "NCHW"));
  assert_true(kiln_layout_text_equal("NCHW08c", "NCHW8c"));
  assert_false(kiln_layout_text_equal("NCHW", "NHWC"));
  assert_false(kiln_layout_text_equal("", "")); /* not layouts */
  assert_false(kiln_layout_text_equal("NCHW", "NC?W"));
  assert_true(kiln_layout_same_axes(&a, &d));
  kiln_layout_t kernel = parse("OIHW");
  assert_false(kiln_layout_same_axes(&a, &kernel));
  kiln_layout_t nch = parse("NCH");
  assert_false(kiln_layout_same_axes(&e, &nch));
}

static void test_axis_index_and_factor(void **state) {
  (void)state;
  kiln_layout_t layout = parse("NHWC8c");
  assert_int_equal(kiln_layout_axis_index(&layout, 'N'), 0);
  assert_int_equal(kiln_layout_axis_index(&layout, 'C'), 3);
  assert_int_equal(kiln_layout_axis_index(&layout, 'c'), 4);
  assert_int_equal(kiln_layout_axis_index(&layout, 'D'), -1);
  assert_int_equal(kiln_layout_split_index(&layout, 'C'), 4);
  assert_int_equal(kiln_layout_split_index(&layout, 'H'), -1);
  assert_int_equal(kiln_layout_split_index(&layout, 'c'), -1);
  assert_int_equal(kiln_layout_factor(&layout, 'C'), 8);
  assert_int_equal(kiln_layout_factor(&layout, 'W'), 0);
  assert_int_equal(kiln_layout_factor(&layout, 'Q'), 0);
  assert_int_equal(kiln_layout_axis_primal(&layout, 4), 'C');
  assert_int_equal(kiln_layout_axis_primal(&layout, 1), 'H');
  assert_true(kiln_layout_axis_is_split(&layout, 4));
  assert_false(kiln_layout_axis_is_split(&layout, 3));
}

static void test_blocked_and_primal(void **state) {
  (void)state;
  kiln_layout_t blocked = parse("OIHW16i4o"), plain = parse("NHWC"), primal;
  assert_true(kiln_layout_is_blocked(&blocked));
  assert_false(kiln_layout_is_blocked(&plain));
  kiln_layout_to_primal(&blocked, &primal);
  assert_string_equal(primal.text, "OIHW");
  assert_int_equal(primal.ndim, 4);
  kiln_layout_t oihw = parse("OIHW");
  assert_true(kiln_layout_equal(&primal, &oihw));
  kiln_layout_to_primal(&plain, &primal);
  assert_true(kiln_layout_equal(&primal, &plain));
}

static void test_split_and_sub(void **state) {
  (void)state;
  kiln_layout_t oihw = parse("OIHW"), layout;
  KILN_ASSERT_OK(kiln_layout_split(&oihw, 'I', 8, &layout));
  KILN_ASSERT_OK(kiln_layout_split(&layout, 'O', 16, &layout));
  kiln_layout_t expected = parse("OIHW8i16o");
  assert_true(kiln_layout_equal(&layout, &expected));
  assert_string_equal(layout.text, "OIHW8i16o");
  KILN_ASSERT_STATUS(kiln_layout_split(&layout, 'O', 2, &layout), INVALID_ARGUMENT,
                     "layout 'OIHW8i16o': axis 'o' appears twice");
  KILN_ASSERT_STATUS(kiln_layout_split(&oihw, 'C', 2, &layout), INVALID_ARGUMENT,
                     "layout 'OIHW' has no primal axis 'C' to split");
  KILN_ASSERT_STATUS(kiln_layout_split(&oihw, 'o', 2, &layout), INVALID_ARGUMENT,
                     "no primal axis 'o'");
  KILN_ASSERT_STATUS(kiln_layout_split(&oihw, 'O', 0, &layout), INVALID_ARGUMENT,
                     "layout 'OIHW': split factor 0 of axis 'O' must be in [1, 2^30]");
  kiln_layout_t nchw16c = parse("NCHW16c"), sub;
  KILN_ASSERT_OK(kiln_layout_sub(&nchw16c, 1, 4, &sub));
  assert_string_equal(sub.text, "CHW16c");
  KILN_ASSERT_OK(kiln_layout_sub(&nchw16c, 0, 2, &sub));
  assert_string_equal(sub.text, "NC");
  KILN_ASSERT_STATUS(kiln_layout_sub(&nchw16c, 2, 3, &sub), INVALID_ARGUMENT,
                     "layout 'NCHW16c': split axis 'c' has no primal axis 'C'");
  KILN_ASSERT_STATUS(kiln_layout_sub(&nchw16c, 3, 3, &sub), INVALID_ARGUMENT,
                     "layout 'NCHW16c' has no axes [3, 6) (it has 5)");
  KILN_ASSERT_STATUS(kiln_layout_sub(&nchw16c, -1, 2, &sub), INVALID_ARGUMENT, "no axes [-1, 1)");
  KILN_ASSERT_STATUS(kiln_layout_sub(&nchw16c, 0, 0, &sub), INVALID_ARGUMENT, "no axes [0, 0)");
}

static void test_parse_errors(void **state) {
  (void)state;
  kiln_layout_t layout;
  KILN_ASSERT_STATUS(kiln_layout_parse("", &layout), INVALID_ARGUMENT, "layout is empty");
  KILN_ASSERT_STATUS(kiln_layout_parse(NULL, &layout), INVALID_ARGUMENT, "layout is empty");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHWc", &layout), INVALID_ARGUMENT,
                     "layout 'NCHWc': split axis 'c' needs a factor (16c)");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHW0c", &layout), INVALID_ARGUMENT,
                     "layout 'NCHW0c': a split factor must be positive");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHW16", &layout), INVALID_ARGUMENT,
                     "layout 'NCHW16': a factor must be followed by a lower-case axis");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHW4C", &layout), INVALID_ARGUMENT,
                     "a factor must be followed by a lower-case axis");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHW16x", &layout), INVALID_ARGUMENT,
                     "layout 'NCHW16x': split axis 'x' has no primal axis 'X'");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHHW", &layout), INVALID_ARGUMENT,
                     "layout 'NCHHW': axis 'H' appears twice");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHW4c4c", &layout), INVALID_ARGUMENT,
                     "axis 'c' appears twice");
  KILN_ASSERT_STATUS(kiln_layout_parse("NC-HW", &layout), INVALID_ARGUMENT,
                     "layout 'NC-HW': unexpected character '-' (expected an upper-case axis or "
                     "a factor and a lower-case axis)");
  KILN_ASSERT_STATUS(kiln_layout_parse("NCHW99999999999c", &layout), INVALID_ARGUMENT,
                     "layout 'NCHW99999999999c': factor too large");
  KILN_ASSERT_STATUS(kiln_layout_parse("ABCDEFGHIJKLMNOPQ", &layout), INVALID_ARGUMENT,
                     "layout 'ABCDEFGHIJKLMNOPQ': more than 16 axes");
  char long_text[KILN_LAYOUT_MAX_TEXT + 8];
  memset(long_text, 'N', sizeof(long_text) - 1);
  long_text[sizeof(long_text) - 1] = '\0';
  KILN_ASSERT_STATUS(kiln_layout_parse(long_text, &layout), INVALID_ARGUMENT, "is too long");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_format_round_trip),
      cmocka_unit_test(test_equal),
      cmocka_unit_test(test_axis_index_and_factor),
      cmocka_unit_test(test_blocked_and_primal),
      cmocka_unit_test(test_split_and_sub),
      cmocka_unit_test(test_parse_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
