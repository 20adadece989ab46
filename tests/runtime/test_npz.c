/*
 * Tests of the .npz reader (kiln/npy.h) and its DEFLATE decoder.
 *
 * The fixtures in tests/data/npz were written by make_npz.py there as
 * numpy.savez and numpy.savez_compressed write them (zip64 local headers);
 * two.npz holds float32 a = [[1, 2, 3], [4, 5, 6]], int64 b = [7, -8, 9]
 * and int8 c (1000 skewed bytes), stored; two_compressed.npz deflates them
 * (fixed Huffman codes for a and b, a dynamic code for c) and
 * two_level0.npz in deflate's stored blocks, two_zip64.npz with every
 * zip64 record (sizes and offsets in the central entries' extra fields, the
 * zip64 end record). They must read the same.
 * Then the errors: not a zip, a member that is not a .npy, every
 * truncation, a flipped data byte (CRC), a changed method, corrupt deflate
 * data, a zip-bomb size; and allocation failures, without leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "kiln/npy.h"
#include "kiln_test.h"
#include "runtime/inflate.h"

#define FIXTURE_DIR KILN_TEST_DATA_DIR "/npz"

static unsigned char *read_fixture(const char *name, size_t *out_size) {
  char *path = kiln_test_path_join(FIXTURE_DIR, name);
  void *data = NULL;
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(), path, &data, out_size));
  free(path);
  return data;
}

static void check_two(const kiln_npz_t *npz) {
  assert_int_equal(kiln_npz_count(npz), 3);
  assert_string_equal(kiln_npz_name(npz, 0), "a");
  assert_string_equal(kiln_npz_name(npz, 1), "b");
  assert_null(kiln_npz_name(npz, 3));
  assert_null(kiln_npz_tensor(npz, -1));
  assert_int_equal(kiln_npz_find(npz, "b"), 1);
  assert_int_equal(kiln_npz_find(npz, "z"), -1);
  const kiln_tensor_t *a = kiln_npz_tensor(npz, 0);
  assert_int_equal(kiln_tensor_dtype(a), KILN_DTYPE_FLOAT32);
  assert_int_equal(kiln_tensor_ndim(a), 2);
  assert_int_equal(kiln_tensor_shape(a)[1], 3);
  for (int i = 0; i < 6; ++i) {
    assert_true(kiln_tensor_element_as_double(a, i) == i + 1);
  }
  const kiln_tensor_t *b = kiln_npz_tensor(npz, 1);
  assert_int_equal(kiln_tensor_dtype(b), KILN_DTYPE_INT64);
  assert_true(kiln_tensor_element_as_double(b, 1) == -8);
  const kiln_tensor_t *c = kiln_npz_tensor(npz, kiln_npz_find(npz, "c"));
  assert_int_equal(kiln_tensor_element_count(c), 1000);
}

static void test_read_stored_and_deflated(void **state) {
  (void)state;
  static const char *const names[] = {"two.npz", "two_compressed.npz", "two_level0.npz",
                                      "two_zip64.npz"};
  size_t size = 0;
  unsigned char *stored = read_fixture("two.npz", &size);
  kiln_npz_t *reference = NULL;
  KILN_ASSERT_OK(kiln_npz_parse(kiln_allocator_system(), stored, size, "two.npz", &reference));
  const kiln_tensor_t *c = kiln_npz_tensor(reference, 2);
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); ++k) {
    char *path = kiln_test_path_join(FIXTURE_DIR, names[k]);
    kiln_npz_t *npz = NULL;
    KILN_ASSERT_OK(kiln_npz_read_file(kiln_allocator_system(), path, &npz));
    check_two(npz);
    assert_memory_equal(kiln_tensor_data(kiln_npz_tensor(npz, 2)), kiln_tensor_data(c), 1000);
    kiln_npz_destroy(npz);
    free(path);
  }
  kiln_npz_destroy(reference);
  kiln_npz_destroy(NULL);
  free(stored);
}

static void parse_fails(const unsigned char *bytes, size_t size, kiln_status_code_t code,
                        const char *substring) {
  kiln_npz_t *npz = NULL;
  kiln_test_assert_status(kiln_npz_parse(kiln_allocator_system(), bytes, size, "x.npz", &npz), code,
                          substring, "kiln_npz_parse", __FILE__, __LINE__);
  assert_null(npz);
}

static void test_not_npz(void **state) {
  (void)state;
  parse_fails((const unsigned char *)"not a zip", 9, KILN_STATUS_CODE_INVALID_ARGUMENT,
              "x.npz: not a zip file");
  parse_fails(NULL, 0, KILN_STATUS_CODE_INVALID_ARGUMENT, "not a zip file");
  size_t size = 0;
  unsigned char *bytes = read_fixture("not_npy.npz", &size);
  parse_fails(bytes, size, KILN_STATUS_CODE_UNIMPLEMENTED, "member notes.txt: not a .npy file");
  free(bytes);
  kiln_npz_t *npz = NULL;
  KILN_ASSERT_STATUS(kiln_npz_read_file(kiln_allocator_system(), FIXTURE_DIR "/missing.npz", &npz),
                     NOT_FOUND, "missing.npz");
}

static size_t le16(const unsigned char *p) {
  return p[0] | (size_t)p[1] << 8;
}

/* Offset of member `index`'s data, from the fixture's local headers (whose
 * sizes are in their zip64 extra fields, as numpy.savez writes them). */
static size_t data_offset(const unsigned char *bytes, int index) {
  size_t at = 0;
  for (int i = 0;; ++i) {
    size_t name = le16(bytes + at + 26), extra = le16(bytes + at + 28);
    assert_int_equal(le16(bytes + at + 30 + name), 1); /* the zip64 extra field */
    size_t compressed = le16(bytes + at + 30 + name + 12);
    size_t start = at + 30 + name + extra;
    if (i == index) {
      return start;
    }
    at = start + compressed;
  }
}

static void test_corruptions(void **state) {
  (void)state;
  size_t size = 0;
  unsigned char *bytes = read_fixture("two.npz", &size);
  bytes[data_offset(bytes, 1) + 140] ^= 1; /* b's data */
  parse_fails(bytes, size, KILN_STATUS_CODE_DATA_LOSS, "member b.npy: CRC-32");
  free(bytes);
  bytes = read_fixture("two_compressed.npz", &size);
  size_t method = size - 22 - 3 * 46 - 3 * 5 + 10; /* the first central entry's method */
  assert_int_equal(bytes[method], 8);
  bytes[method] = 12;
  parse_fails(bytes, size, KILN_STATUS_CODE_UNIMPLEMENTED, "member a.npy: compression method 12");
  bytes[method] = 8;
  bytes[data_offset(bytes, 0)] |= 6; /* block type 3 */
  parse_fails(bytes, size, KILN_STATUS_CODE_DATA_LOSS,
              "corrupt deflate data: a block of the reserved");
  free(bytes);
}

/* The end record saturated, as a zip of more than 65535 members or 4 GiB
 * has it: the counts and offsets come from the zip64 end record its
 * locator points at. */
static void test_zip64_end_record(void **state) {
  (void)state;
  size_t size = 0;
  unsigned char *bytes = read_fixture("two_zip64.npz", &size);
  unsigned char *end = bytes + size - 22;
  assert_memory_equal(end, "PK\x05\x06", 4);
  memset(end + 8, 0xff, 4);  /* the member counts */
  memset(end + 12, 0xff, 8); /* the directory's size and offset */
  kiln_npz_t *npz = NULL;
  KILN_ASSERT_OK(kiln_npz_parse(kiln_allocator_system(), bytes, size, "x.npz", &npz));
  check_two(npz);
  kiln_npz_destroy(npz);
  unsigned char *locator = end - 20;
  assert_memory_equal(locator, "PK\x06\x07", 4);
  locator[8] ^= 0x10; /* points elsewhere */
  parse_fails(bytes, size, KILN_STATUS_CODE_INVALID_ARGUMENT,
              "no zip64 end record where its locator points");
  locator[0] = 'X';
  parse_fails(bytes, size, KILN_STATUS_CODE_INVALID_ARGUMENT,
              "a saturated end record without a zip64 locator");
  free(bytes);
}

static void test_every_truncation_fails(void **state) {
  (void)state;
  static const char *const names[] = {"two_compressed.npz", "two.npz"};
  for (size_t k = 0; k < 2; ++k) {
    size_t size = 0;
    unsigned char *bytes = read_fixture(names[k], &size);
    for (size_t cut = 0; cut < size; ++cut) {
      kiln_npz_t *npz = NULL;
      kiln_status_t status = kiln_npz_parse(kiln_allocator_system(), bytes, cut, "x", &npz);
      assert_non_null(status);
      assert_null(npz);
      kiln_status_free(status);
    }
    free(bytes);
  }
}

/* Every single-byte change of a deflated stream fails cleanly or decodes
 * something (then the CRC catches it): never a crash or a read outside. */
static void test_every_deflate_byte_change(void **state) {
  (void)state;
  size_t size = 0;
  unsigned char *bytes = read_fixture("two_compressed.npz", &size);
  size_t start = data_offset(bytes, 2), end = start + 300;
  for (size_t at = start; at < end; ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      bytes[at] ^= (unsigned char)(1u << bit);
      kiln_npz_t *npz = NULL;
      kiln_status_t status = kiln_npz_parse(kiln_allocator_system(), bytes, size, "x", &npz);
      assert_non_null(status);
      kiln_status_free(status);
      bytes[at] ^= (unsigned char)(1u << bit);
    }
  }
  free(bytes);
}

static void test_inflate_errors(void **state) {
  (void)state;
  unsigned char out[8];
  /* a stored block of 3 bytes, complement wrong */
  const unsigned char bad_stored[] = {0x01, 0x03, 0x00, 0xfc, 0xfe, 'a', 'b', 'c'};
  assert_string_equal(kiln_inflate(bad_stored, sizeof(bad_stored), out, 3),
                      "a stored block's length and its complement disagree");
  const unsigned char good_stored[] = {0x01, 0x03, 0x00, 0xfc, 0xff, 'a', 'b', 'c'};
  assert_null(kiln_inflate(good_stored, sizeof(good_stored), out, 3));
  assert_memory_equal(out, "abc", 3);
  assert_string_equal(kiln_inflate(good_stored, sizeof(good_stored), out, 2),
                      "more data than the recorded size");
  assert_string_equal(kiln_inflate(good_stored, sizeof(good_stored), out, 4),
                      "less data than the recorded size");
  assert_string_equal(kiln_inflate(good_stored, 4, out, 3), "data cut short");
  assert_int_equal(kiln_crc32((const uint8_t *)"123456789", 9), 0xcbf43926u);
}

static void test_size_beyond_deflate(void **state) {
  (void)state;
  size_t size = 0;
  unsigned char *bytes = read_fixture("two_compressed.npz", &size);
  size_t entry = size - 22 - 3 * 46 - 3 * 5;
  bytes[entry + 24 + 3] = 0x7f; /* a's size: about 2 GiB from 89 bytes */
  parse_fails(bytes, size, KILN_STATUS_CODE_INVALID_ARGUMENT, "more than DEFLATE can make");
  free(bytes);
}

typedef struct parse_context_t {
  const unsigned char *bytes;
  size_t size;
} parse_context_t;

static kiln_status_t parse_scenario(kiln_allocator_t allocator, void *context) {
  const parse_context_t *c = context;
  kiln_npz_t *npz = NULL;
  KILN_RETURN_IF_ERROR(kiln_npz_parse(allocator, c->bytes, c->size, "x", &npz));
  kiln_npz_destroy(npz);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  parse_context_t context = {0};
  unsigned char *bytes = read_fixture("two_compressed.npz", &context.size);
  context.bytes = bytes;
  assert_true(kiln_test_sweep_allocation_failures(parse_scenario, &context) > 6);
  free(bytes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_stored_and_deflated),
      cmocka_unit_test(test_not_npz),
      cmocka_unit_test(test_corruptions),
      cmocka_unit_test(test_zip64_end_record),
      cmocka_unit_test(test_every_truncation_fails),
      cmocka_unit_test(test_every_deflate_byte_change),
      cmocka_unit_test(test_inflate_errors),
      cmocka_unit_test(test_size_beyond_deflate),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
