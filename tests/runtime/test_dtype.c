/*
 * Tests of the dtype table (names, sizes, DLPack types, NumPy descrs and the
 * lookups back from names and DLPack types) and of the float16 and bfloat16
 * conversions: exact values, ties to even, subnormals, the largest finite
 * values, overflow, infinities, NaN, and every float16 and bfloat16 bit
 * pattern through float32 and back.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kiln/tensor.h"
#include "kiln_test.h"

typedef struct expected_dtype_t {
  kiln_dtype_t dtype;
  const char *name;
  size_t size;
  uint8_t code;
  uint8_t bits;
  const char *descr;
} expected_dtype_t;

/* Written out by hand rather than from KILN_DTYPE_LIST, so a wrong table entry
 * shows up here. */
static const expected_dtype_t expected_dtypes[] = {
    {KILN_DTYPE_FLOAT32, "float32", 4, kDLFloat, 32, "<f4"},
    {KILN_DTYPE_FLOAT16, "float16", 2, kDLFloat, 16, "<f2"},
    {KILN_DTYPE_BFLOAT16, "bfloat16", 2, kDLBfloat, 16, NULL},
    {KILN_DTYPE_FLOAT64, "float64", 8, kDLFloat, 64, "<f8"},
    {KILN_DTYPE_INT8, "int8", 1, kDLInt, 8, "|i1"},
    {KILN_DTYPE_INT16, "int16", 2, kDLInt, 16, "<i2"},
    {KILN_DTYPE_INT32, "int32", 4, kDLInt, 32, "<i4"},
    {KILN_DTYPE_INT64, "int64", 8, kDLInt, 64, "<i8"},
    {KILN_DTYPE_UINT8, "uint8", 1, kDLUInt, 8, "|u1"},
    {KILN_DTYPE_UINT16, "uint16", 2, kDLUInt, 16, "<u2"},
    {KILN_DTYPE_UINT32, "uint32", 4, kDLUInt, 32, "<u4"},
    {KILN_DTYPE_UINT64, "uint64", 8, kDLUInt, 64, "<u8"},
    {KILN_DTYPE_BOOL, "bool", 1, kDLUInt, 8, "|b1"},
};

_Static_assert(sizeof(expected_dtypes) / sizeof(expected_dtypes[0]) == KILN_DTYPE_COUNT_,
               "the test covers every dtype");

static void test_table(void **state) {
  (void)state;
  for (size_t i = 0; i < KILN_DTYPE_COUNT_; ++i) {
    const expected_dtype_t *e = &expected_dtypes[i];
    assert_int_equal(e->dtype, (int)i);
    assert_string_equal(kiln_dtype_name(e->dtype), e->name);
    assert_int_equal(kiln_dtype_size(e->dtype), e->size);
    DLDataType dl = kiln_dtype_to_dl(e->dtype);
    assert_int_equal(dl.code, e->code);
    assert_int_equal(dl.bits, e->bits);
    assert_int_equal(dl.lanes, 1);
    if (e->descr) {
      assert_string_equal(kiln_dtype_numpy_descr(e->dtype), e->descr);
    } else {
      assert_null(kiln_dtype_numpy_descr(e->dtype));
    }

    kiln_dtype_t back = KILN_DTYPE_COUNT_;
    KILN_ASSERT_OK(kiln_dtype_from_name(e->name, &back));
    assert_int_equal(back, e->dtype);
    back = KILN_DTYPE_COUNT_;
    KILN_ASSERT_OK(kiln_dtype_from_dl(dl, &back));
    /* bool and uint8 share {kDLUInt, 8}; the DLPack lookup gives uint8. */
    assert_int_equal(back, e->dtype == KILN_DTYPE_BOOL ? KILN_DTYPE_UINT8 : e->dtype);
  }
}

static void test_invalid_dtype_values(void **state) {
  (void)state;
  kiln_dtype_t bad[] = {KILN_DTYPE_COUNT_, (kiln_dtype_t)-1, (kiln_dtype_t)1000};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    assert_string_equal(kiln_dtype_name(bad[i]), "invalid");
    assert_int_equal(kiln_dtype_size(bad[i]), 0);
    assert_null(kiln_dtype_numpy_descr(bad[i]));
    DLDataType dl = kiln_dtype_to_dl(bad[i]);
    assert_int_equal(dl.bits, 0);
    assert_int_equal(dl.lanes, 0);
  }
}

static void test_bad_names(void **state) {
  (void)state;
  kiln_dtype_t dtype = KILN_DTYPE_INT8;
  KILN_ASSERT_STATUS(kiln_dtype_from_name("flaot32", &dtype), NOT_FOUND,
                     "unknown dtype \"flaot32\"");
  KILN_ASSERT_STATUS(kiln_dtype_from_name("", &dtype), NOT_FOUND, "unknown dtype \"\"");
  KILN_ASSERT_STATUS(kiln_dtype_from_name("Float32", &dtype), NOT_FOUND, "float32, float16");
  KILN_ASSERT_STATUS(kiln_dtype_from_name("float32 ", &dtype), NOT_FOUND, "bool)");
  KILN_ASSERT_STATUS(kiln_dtype_from_name(NULL, &dtype), INVALID_ARGUMENT, "NULL");
  assert_int_equal(dtype, KILN_DTYPE_INT8);
}

static void test_bad_dl_types(void **state) {
  (void)state;
  kiln_dtype_t dtype = KILN_DTYPE_INT8;
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){kDLFloat, 32, 4}, &dtype), INVALID_ARGUMENT,
                     "lanes 4");
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){kDLFloat, 32, 0}, &dtype), INVALID_ARGUMENT,
                     "lanes must be 1");
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){kDLFloat, 8, 1}, &dtype), NOT_FOUND,
                     "{kDLFloat (2), bits 8, lanes 1}");
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){kDLComplex, 64, 1}, &dtype), NOT_FOUND,
                     "kDLComplex (5)");
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){kDLBfloat, 32, 1}, &dtype), NOT_FOUND,
                     "kDLBfloat (4), bits 32");
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){99, 32, 1}, &dtype), NOT_FOUND,
                     "unknown code (99)");
  KILN_ASSERT_STATUS(kiln_dtype_from_dl((DLDataType){kDLInt, 1, 1}, &dtype), NOT_FOUND,
                     "kDLInt (0), bits 1");
  assert_int_equal(dtype, KILN_DTYPE_INT8);
}

/* Messages name dtypes as kiln does, and DLPack's fields only when kiln
 * has no such dtype. */
static void test_dl_dtype_format(void **state) {
  (void)state;
  char text[KILN_DTYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_dl_dtype_format((DLDataType){kDLFloat, 64, 1}, text, sizeof(text)),
                      "float64");
  assert_string_equal(kiln_dl_dtype_format((DLDataType){kDLInt, 64, 1}, text, sizeof(text)),
                      "int64");
  assert_string_equal(kiln_dl_dtype_format((DLDataType){kDLUInt, 8, 1}, text, sizeof(text)),
                      "uint8");
  assert_string_equal(kiln_dl_dtype_format((DLDataType){kDLFloat, 32, 4}, text, sizeof(text)),
                      "DLPack {kDLFloat (2), bits 32, lanes 4}");
  assert_string_equal(kiln_dl_dtype_format((DLDataType){99, 7, 1}, text, sizeof(text)),
                      "DLPack {unknown code (99), bits 7, lanes 1}");
}

/* ---- 16-bit floats ---- */

static uint32_t bits_of(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float float_of(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

typedef struct conversion_t {
  uint32_t from; /* float32 bits */
  uint16_t to;
} conversion_t;

static void check_to_float16(const conversion_t *cases, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t got = kiln_float32_to_float16(float_of(cases[i].from));
    if (got != cases[i].to) {
      print_error("float32 0x%08x (%.9g) -> float16 0x%04x, expected 0x%04x\n", cases[i].from,
                  (double)float_of(cases[i].from), got, cases[i].to);
      fail();
    }
  }
}

static void test_float16_exact_values(void **state) {
  (void)state;
  static const conversion_t cases[] = {
      {0x00000000u, 0x0000}, /* 0 */
      {0x80000000u, 0x8000}, /* -0 */
      {0x3f800000u, 0x3c00}, /* 1 */
      {0xbf800000u, 0xbc00}, /* -1 */
      {0x40000000u, 0x4000}, /* 2 */
      {0x3f000000u, 0x3800}, /* 0.5 */
      {0x3fc00000u, 0x3e00}, /* 1.5 */
      {0x40490000u, 0x4248}, /* 3.140625 */
      {0xc2f60000u, 0xd7b0}, /* -123 */
      {0x477fe000u, 0x7bff}, /* 65504, the largest finite half */
      {0xc77fe000u, 0xfbff}, /* -65504 */
      {0x38800000u, 0x0400}, /* 2^-14, the smallest normal */
      {0x387fc000u, 0x03ff}, /* the largest subnormal */
      {0x33800000u, 0x0001}, /* 2^-24, the smallest subnormal */
      {0x34000000u, 0x0002}, /* 2^-23 */
      {0x3a800000u, 0x1400}, /* 2^-10 */
  };
  check_to_float16(cases, sizeof(cases) / sizeof(cases[0]));
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    assert_int_equal(bits_of(kiln_float16_to_float32(cases[i].to)), cases[i].from);
  }
}

static void test_float16_rounding(void **state) {
  (void)state;
  static const conversion_t cases[] = {
      /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even, down. */
      {0x3f801000u, 0x3c00},
      /* 1 + 3 * 2^-11 is halfway between 0x3c01 and 0x3c02: to even, up. */
      {0x3f803000u, 0x3c02},
      /* Just above and below the tie. */
      {0x3f801001u, 0x3c01},
      {0x3f800fffu, 0x3c00},
      {0xbf801000u, 0xbc00},
      {0xbf803000u, 0xbc02},
      /* A carry out of the mantissa into the exponent: 2 - 2^-11 (a tie) -> 2. */
      {0x3ffff000u, 0x4000},
      /* 0.1 rounds to the nearest half, 0x2e66. */
      {0x3dcccccdu, 0x2e66},
      /* 65519 rounds down to 65504; 65520 is the tie, whose even side is inf. */
      {0x477fefffu, 0x7bff},
      {0x477ff000u, 0x7c00},
      {0xc77ff000u, 0xfc00},
      /* Overflow. */
      {0x47800000u, 0x7c00}, /* 65536 */
      {0x501502f9u, 0x7c00}, /* 1e10 */
      {0x7f7fffffu, 0x7c00}, /* FLT_MAX */
      {0xff7fffffu, 0xfc00},
  };
  check_to_float16(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_float16_subnormals(void **state) {
  (void)state;
  static const conversion_t cases[] = {
      /* 2^-25 is halfway between 0 and 2^-24: ties to even, zero. */
      {0x33000000u, 0x0000},
      {0xb3000000u, 0x8000},
      {0x33000001u, 0x0001}, /* just above the tie */
      {0x32ffffffu, 0x0000}, /* just below */
      {0x33c00000u, 0x0002}, /* 1.5 * 2^-24: tie between 1 and 2, to even 2 */
      {0x34200000u, 0x0002}, /* 2.5 * 2^-24: tie between 2 and 3, to even 2 */
      {0x34600000u, 0x0004}, /* 3.5 * 2^-24: tie between 3 and 4, to even 4 */
      /* The largest subnormal plus half a unit: tie, to even, the smallest normal. */
      {0x387fe000u, 0x0400},
      /* float32 subnormals and tiny normals flush to a signed zero. */
      {0x00000001u, 0x0000},
      {0x80400000u, 0x8000},
      {0x00800000u, 0x0000},
      {0x2f800000u, 0x0000},
  };
  check_to_float16(cases, sizeof(cases) / sizeof(cases[0]));
  /* Every half subnormal k * 2^-24 is exact in float32. */
  for (uint16_t k = 1; k < 0x400; ++k) {
    assert_true(kiln_float16_to_float32(k) == ldexpf((float)k, -24));
    assert_true(kiln_float16_to_float32((uint16_t)(0x8000u | k)) == -ldexpf((float)k, -24));
  }
}

static void test_float16_infinity_and_nan(void **state) {
  (void)state;
  assert_int_equal(kiln_float32_to_float16(INFINITY), 0x7c00);
  assert_int_equal(kiln_float32_to_float16(-INFINITY), 0xfc00);
  assert_true(isinf(kiln_float16_to_float32(0x7c00)) && kiln_float16_to_float32(0x7c00) > 0);
  assert_true(isinf(kiln_float16_to_float32(0xfc00)) && kiln_float16_to_float32(0xfc00) < 0);

  uint16_t quiet = kiln_float32_to_float16(NAN);
  assert_int_equal(quiet & 0x7c00, 0x7c00);
  assert_int_not_equal(quiet & 0x03ff, 0);
  assert_int_equal(quiet & 0x0200, 0x0200);
  assert_true(isnan(kiln_float16_to_float32(quiet)));
  /* A quiet NaN keeps its sign and the top of its payload. */
  assert_int_equal(kiln_float32_to_float16(float_of(0xffc02000u)), 0xfe01);
  /* A NaN whose payload lies only in bits that float16 drops stays a NaN. */
  assert_int_equal(kiln_float32_to_float16(float_of(0x7f800001u)), 0x7e00);
  assert_int_equal(kiln_float32_to_float16(float_of(0xff800fffu)), 0xfe00);
  assert_true(isnan(kiln_float16_to_float32(0x7c01)));
  assert_true(isnan(kiln_float16_to_float32(0xffff)));
}

static int is_float16_nan(uint16_t bits) {
  return (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff) != 0;
}

static void test_float16_every_pattern_round_trips(void **state) {
  (void)state;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = kiln_float16_to_float32((uint16_t)bits);
    uint16_t back = kiln_float32_to_float16(value);
    if (is_float16_nan((uint16_t)bits)) {
      assert_true(isnan(value));
      assert_true(is_float16_nan(back));
    }
    if (back != bits) {
      print_error("float16 0x%04x -> float32 0x%08x -> float16 0x%04x\n", bits, bits_of(value),
                  back);
      fail();
    }
  }
}

static void test_float16_matches_float_arithmetic(void **state) {
  (void)state;
  /* For every finite half h and its successor, values strictly between them
   * round to the nearer one; check the three interior quarter points. */
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    float low = kiln_float16_to_float32(h);
    float high = kiln_float16_to_float32((uint16_t)(h + 1));
    float quarter = low + (high - low) / 4;
    float three_quarters = low + 3 * (high - low) / 4;
    float middle = low + (high - low) / 2;
    assert_int_equal(kiln_float32_to_float16(quarter), h);
    assert_int_equal(kiln_float32_to_float16(three_quarters), h + 1);
    assert_int_equal(kiln_float32_to_float16(middle), (h & 1) ? h + 1 : h);
  }
}

static void test_bfloat16(void **state) {
  (void)state;
  static const conversion_t cases[] = {
      {0x00000000u, 0x0000},
      {0x80000000u, 0x8000},
      {0x3f800000u, 0x3f80}, /* 1 */
      {0xc0490fdbu, 0xc049}, /* -pi */
      {0x3f808000u, 0x3f80}, /* 1 + 2^-8: tie, to even, down */
      {0x3f818000u, 0x3f82}, /* 1 + 3 * 2^-8: tie, to even, up */
      {0x3f808001u, 0x3f81},
      {0x3f807fffu, 0x3f80},
      {0x3fff8000u, 0x4000}, /* carry into the exponent */
      {0x7f7f0000u, 0x7f7f}, /* the largest finite bfloat16 */
      {0x7f7f7fffu, 0x7f7f},
      {0x7f7f8000u, 0x7f80}, /* tie at the top: to even, infinity */
      {0x7f7fffffu, 0x7f80}, /* FLT_MAX overflows */
      {0xff7fffffu, 0xff80},
      {0x7f800000u, 0x7f80},
      {0xff800000u, 0xff80},
      {0x00000001u, 0x0000}, /* float32 subnormals round like anything else */
      {0x00008000u, 0x0000}, /* tie, to even */
      {0x00018000u, 0x0002}, /* tie, to even */
      {0x00010001u, 0x0001},
      {0x80400000u, 0x8040}, /* a subnormal kept exactly */
      {0x7fc00000u, 0x7fc0}, /* quiet NaN */
      {0xffc12345u, 0xffc1}, /* a NaN keeps its sign and payload top */
      {0x7f800001u, 0x7fc0}, /* a NaN with only dropped payload bits stays a NaN */
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    uint16_t got = kiln_float32_to_bfloat16(float_of(cases[i].from));
    if (got != cases[i].to) {
      print_error("float32 0x%08x -> bfloat16 0x%04x, expected 0x%04x\n", cases[i].from, got,
                  cases[i].to);
      fail();
    }
  }
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = kiln_bfloat16_to_float32((uint16_t)bits);
    assert_int_equal(bits_of(value), bits << 16);
    assert_int_equal(kiln_float32_to_bfloat16(value), bits);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_invalid_dtype_values),
      cmocka_unit_test(test_bad_names),
      cmocka_unit_test(test_bad_dl_types),
      cmocka_unit_test(test_dl_dtype_format),
      cmocka_unit_test(test_float16_exact_values),
      cmocka_unit_test(test_float16_rounding),
      cmocka_unit_test(test_float16_subnormals),
      cmocka_unit_test(test_float16_infinity_and_nan),
      cmocka_unit_test(test_float16_every_pattern_round_trips),
      cmocka_unit_test(test_float16_matches_float_arithmetic),
      cmocka_unit_test(test_bfloat16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
