/*
 * Tests of the .npy reader and writer.
 *
 * The fixtures in tests/data/npy were written by NumPy (make_fixtures.py
 * there); their values are formulas of the flat index that fixture_value()
 * recomputes. The tests read every fixture, check that kiln writes the same
 * bytes NumPy wrote, round-trip every dtype through serialize and parse, go
 * through files in a temporary folder, and feed the parser crafted and
 * corrupted files: each error must have its status code, a message naming the
 * source and saying what was wrong, and leave nothing allocated. Exhaustive
 * loops over every truncation of a small file and every single-byte change of
 * its header check that no corruption crashes, leaks or is accepted silently.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "kiln/npy.h"
#include "kiln_test.h"

#define FIXTURE_DIR KILN_TEST_DATA_DIR "/npy"

/* ---- helpers ---- */

typedef struct fixture_shape_t {
  const char *label;
  int ndim;
  int64_t shape[3];
} fixture_shape_t;

static const fixture_shape_t fixture_shapes[] = {
    {"scalar", 0, {0}},
    {"5", 1, {5}},
    {"2x3x4", 3, {2, 3, 4}},
    {"0x3", 2, {0, 3}},
};
#define FIXTURE_SHAPE_COUNT (sizeof(fixture_shapes) / sizeof(fixture_shapes[0]))

/* The files NumPy wrote with numpy.save besides <dtype>_<shape>.npy. */
static const char *const other_saved_fixtures[] = {
    "float32_rank32.npy",
    "uint8_wide_empty.npy",
    "uint8_pad1.npy",
    "uint8_pad64.npy",
};

/* Writes element `i` of every fixture of `dtype` (see make_fixtures.py). */
static void fixture_value(kiln_dtype_t dtype, int64_t i, void *out) {
  float half_steps = (float)i * 0.5f - 3.0f;
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    memcpy(out, &half_steps, sizeof(float));
    return;
  case KILN_DTYPE_FLOAT16: {
    uint16_t bits = kiln_float32_to_float16(half_steps);
    memcpy(out, &bits, sizeof(bits));
    return;
  }
  case KILN_DTYPE_FLOAT64: {
    double value = (double)i * 0.5 - 3.0;
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_INT8: {
    int8_t value = (int8_t)(i - 12);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_INT16: {
    int16_t value = (int16_t)((i - 12) * 1000);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_INT32: {
    int32_t value = (int32_t)((i - 12) * 100000000);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_INT64: {
    int64_t value = (i - 12) * INT64_C(100000000000000000);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_UINT8: {
    uint8_t value = (uint8_t)(i * 10);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_UINT16: {
    uint16_t value = (uint16_t)(i * 2000);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_UINT32: {
    uint32_t value = (uint32_t)(i * 100000000);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_UINT64: {
    uint64_t value = (uint64_t)i * UINT64_C(800000000000000000);
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_BOOL: {
    uint8_t value = i % 3 == 0;
    memcpy(out, &value, sizeof(value));
    return;
  }
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_COUNT_:
    break;
  }
  fail_msg("no fixture values for dtype %s", kiln_dtype_name(dtype));
}

static void check_fixture_values(const kiln_tensor_t *tensor) {
  kiln_dtype_t dtype = kiln_tensor_dtype(tensor);
  size_t size = kiln_dtype_size(dtype);
  const unsigned char *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    unsigned char expected[8];
    fixture_value(dtype, i, expected);
    if (memcmp(data + (size_t)i * size, expected, size) != 0) {
      fail_msg("%s element %lld differs from the fixture formula", kiln_dtype_name(dtype),
               (long long)i);
    }
  }
}

static char *fixture_path(const char *name) {
  return kiln_test_path_join(FIXTURE_DIR, name);
}

static char *fixture_name(kiln_dtype_t dtype, const fixture_shape_t *shape) {
  char name[64];
  snprintf(name, sizeof(name), "%s_%s.npy", kiln_dtype_name(dtype), shape->label);
  return fixture_path(name);
}

/* Reads a fixture's bytes into an exactly sized heap block (so ASan sees any
 * read past the end). */
static unsigned char *read_bytes(const char *path, size_t *out_size) {
  void *data = NULL;
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(), path, &data, out_size));
  unsigned char *copy = malloc(*out_size ? *out_size : 1);
  assert_non_null(copy);
  memcpy(copy, data, *out_size);
  kiln_allocator_free(kiln_allocator_system(), data);
  return copy;
}

static kiln_tensor_t *read_fixture(const char *name) {
  char *path = fixture_path(name);
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), path, &tensor));
  free(path);
  return tensor;
}

static void check_shape(const kiln_tensor_t *tensor, int ndim, const int64_t *shape) {
  assert_int_equal(kiln_tensor_ndim(tensor), ndim);
  assert_true(kiln_shape_equal(ndim, kiln_tensor_shape(tensor), ndim, shape));
}

/* Builds a .npy file from a header dict: the preamble of `major`.0, the dict
 * padded with spaces and a '\n' to a multiple of 64, then `data_size` bytes. */
static unsigned char *build_npy(const char *dict, int major, size_t data_size, size_t *out_size) {
  size_t preamble = major == 1 ? 10 : 12;
  size_t dict_length = strlen(dict);
  size_t header_length = dict_length + 1;
  header_length += (64 - (preamble + header_length) % 64) % 64;
  size_t size = preamble + header_length + data_size;
  unsigned char *bytes = malloc(size);
  assert_non_null(bytes);
  memcpy(bytes, "\x93NUMPY", 6);
  bytes[6] = (unsigned char)major;
  bytes[7] = 0;
  for (size_t i = 0; i < preamble - 8; ++i) {
    bytes[8 + i] = (unsigned char)(header_length >> (8 * i));
  }
  memcpy(bytes + preamble, dict, dict_length);
  memset(bytes + preamble + dict_length, ' ', header_length - dict_length - 1);
  bytes[preamble + header_length - 1] = '\n';
  for (size_t i = 0; i < data_size; ++i) {
    bytes[preamble + header_length + i] = (unsigned char)i;
  }
  *out_size = size;
  return bytes;
}

/* Parses with a counting allocator; asserts the status, that its message
 * starts with the source name, and that nothing stays allocated. */
static void expect_parse_failure(const void *bytes, size_t size, kiln_status_code_t code,
                                 const char *substring, const char *file, int line) {
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_tensor_t *tensor = (kiln_tensor_t *)1;
  kiln_status_t status =
      kiln_npy_parse(kiln_counting_allocator_get(&counting), bytes, size, "crafted.npy", &tensor);
  if (status && strncmp(kiln_status_message(status), "crafted.npy: ", 13) != 0) {
    print_error("%s:%d: the message does not start with the source name: %s\n", file, line,
                kiln_status_message(status));
    kiln_status_free(status);
    _fail(file, line);
  }
  kiln_test_assert_status(status, code, substring, "kiln_npy_parse", file, line);
  assert_null(tensor);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

#define EXPECT_PARSE_FAILURE(bytes, size, CODE, substring) \
  expect_parse_failure((bytes), (size), KILN_STATUS_CODE_##CODE, (substring), __FILE__, __LINE__)

static void expect_dict_failure(const char *dict, size_t data_size, kiln_status_code_t code,
                                const char *substring, const char *file, int line) {
  size_t size;
  unsigned char *bytes = build_npy(dict, 1, data_size, &size);
  expect_parse_failure(bytes, size, code, substring, file, line);
  free(bytes);
}

#define EXPECT_DICT_FAILURE(dict, data_size, CODE, substring) \
  expect_dict_failure((dict), (data_size), KILN_STATUS_CODE_##CODE, (substring), __FILE__, __LINE__)

/* Parses a crafted dict that must be accepted; returns the tensor. */
static kiln_tensor_t *parse_dict(const char *dict, size_t data_size) {
  size_t size;
  unsigned char *bytes = build_npy(dict, 1, data_size, &size);
  kiln_tensor_t *tensor = NULL;
  kiln_status_t status =
      kiln_npy_parse(kiln_allocator_system(), bytes, size, "crafted.npy", &tensor);
  free(bytes);
  if (status) {
    print_error("header %s\n", dict);
  }
  KILN_ASSERT_OK(status);
  return tensor;
}

/* ---- reading NumPy's files ---- */

static void test_read_every_dtype_and_shape(void **state) {
  (void)state;
  int read = 0;
  for (int d = 0; d < KILN_DTYPE_COUNT_; ++d) {
    kiln_dtype_t dtype = (kiln_dtype_t)d;
    if (kiln_dtype_numpy_descr(dtype) == NULL) {
      continue;
    }
    for (size_t s = 0; s < FIXTURE_SHAPE_COUNT; ++s) {
      char *path = fixture_name(dtype, &fixture_shapes[s]);
      kiln_counting_allocator_t counting;
      kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
      kiln_tensor_t *tensor = NULL;
      KILN_ASSERT_OK(kiln_npy_read_file(kiln_counting_allocator_get(&counting), path, &tensor));
      assert_int_equal(kiln_tensor_dtype(tensor), dtype);
      check_shape(tensor, fixture_shapes[s].ndim, fixture_shapes[s].shape);
      assert_int_equal((uintptr_t)kiln_tensor_data(tensor) % KILN_TENSOR_ALIGNMENT, 0);
      check_fixture_values(tensor);
      /* The file buffer is freed; only the tensor is left. */
      assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 1);
      kiln_tensor_release(tensor);
      assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
      free(path);
      read += 1;
    }
  }
  assert_int_equal(read, 12 * 4);
}

static void test_read_spot_values(void **state) {
  (void)state;
  /* A few values written out, in case the formula and the files agree on a
   * mistake. */
  kiln_tensor_t *tensor = read_fixture("float32_2x3x4.npy");
  const float *f = kiln_tensor_data(tensor);
  assert_true(f[0] == -3.0f && f[1] == -2.5f && f[23] == 8.5f);
  kiln_tensor_release(tensor);
  tensor = read_fixture("uint64_2x3x4.npy");
  assert_true(((const uint64_t *)kiln_tensor_data(tensor))[23] == UINT64_C(18400000000000000000));
  kiln_tensor_release(tensor);
  tensor = read_fixture("int8_5.npy");
  assert_int_equal(((const int8_t *)kiln_tensor_data(tensor))[0], -12);
  kiln_tensor_release(tensor);
  tensor = read_fixture("bool_2x3x4.npy");
  const uint8_t *b = kiln_tensor_data(tensor);
  assert_true(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 1);
  kiln_tensor_release(tensor);
  tensor = read_fixture("float16_scalar.npy");
  assert_int_equal(*(const uint16_t *)kiln_tensor_data(tensor), 0xc200); /* -3 */
  kiln_tensor_release(tensor);
}

static void test_read_versions_2_and_3(void **state) {
  (void)state;
  const char *names[] = {"float32_2x3x4.v2.npy", "float32_2x3x4.v3.npy"};
  for (size_t i = 0; i < 2; ++i) {
    kiln_tensor_t *tensor = read_fixture(names[i]);
    assert_int_equal(kiln_tensor_dtype(tensor), KILN_DTYPE_FLOAT32);
    check_shape(tensor, 3, (const int64_t[]){2, 3, 4});
    check_fixture_values(tensor);
    kiln_tensor_release(tensor);
  }
}

static void test_read_other_fixtures(void **state) {
  (void)state;
  kiln_tensor_t *tensor = read_fixture("float32_rank32.npy");
  int64_t shape[KILN_MAX_RANK];
  for (int i = 0; i < KILN_MAX_RANK; ++i) {
    shape[i] = i == KILN_MAX_RANK - 1 ? 2 : 1;
  }
  check_shape(tensor, KILN_MAX_RANK, shape);
  const float *ones = kiln_tensor_data(tensor);
  assert_true(ones[0] == 1.0f && ones[1] == 1.0f);
  kiln_tensor_release(tensor);

  tensor = read_fixture("uint8_wide_empty.npy");
  check_shape(tensor, 2, (const int64_t[]){INT64_C(1234567890123), 0});
  assert_int_equal(kiln_tensor_byte_size(tensor), 0);
  kiln_tensor_release(tensor);

  tensor = read_fixture("uint8_pad64.npy");
  check_shape(tensor, 9, (const int64_t[]){0, 100, 100, 100, 100, 100, 100, 100, 1000});
  kiln_tensor_release(tensor);
}

static void test_read_unsupported_fixtures(void **state) {
  (void)state;
  kiln_tensor_t *tensor = NULL;
  char *path = fixture_path("float32_2x3x4.fortran.npy");
  KILN_ASSERT_STATUS(kiln_npy_read_file(kiln_allocator_system(), path, &tensor), UNIMPLEMENTED,
                     "Fortran order");
  KILN_ASSERT_STATUS(kiln_npy_read_file(kiln_allocator_system(), path, &tensor), UNIMPLEMENTED,
                     "float32_2x3x4.fortran.npy: ");
  free(path);
  path = fixture_path("float32_2x3x4.big.npy");
  KILN_ASSERT_STATUS(kiln_npy_read_file(kiln_allocator_system(), path, &tensor), UNIMPLEMENTED,
                     "descr '>f4' is big-endian, and big-endian .npy files are not supported");
  free(path);
  path = fixture_path("no_such_file.npy");
  KILN_ASSERT_STATUS(kiln_npy_read_file(kiln_allocator_system(), path, &tensor), NOT_FOUND,
                     "no_such_file.npy");
  free(path);
  assert_null(tensor);
}

/* ---- writing ---- */

static void check_byte_identical(const char *path) {
  size_t size;
  unsigned char *expected = read_bytes(path, &size);
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_npy_parse(kiln_allocator_system(), expected, size, path, &tensor));
  void *written = NULL;
  size_t written_size = 0;
  KILN_ASSERT_OK(kiln_npy_serialize(kiln_allocator_system(), tensor, &written, &written_size));
  if (written_size != size || memcmp(written, expected, size) != 0) {
    print_error("%s: kiln wrote %zu bytes that differ from NumPy's %zu\n", path, written_size,
                size);
    fail();
  }
  kiln_allocator_free(kiln_allocator_system(), written);
  kiln_tensor_release(tensor);
  free(expected);
}

static void test_serialize_matches_numpy(void **state) {
  (void)state;
  for (int d = 0; d < KILN_DTYPE_COUNT_; ++d) {
    if (kiln_dtype_numpy_descr((kiln_dtype_t)d) == NULL) {
      continue;
    }
    for (size_t s = 0; s < FIXTURE_SHAPE_COUNT; ++s) {
      char *path = fixture_name((kiln_dtype_t)d, &fixture_shapes[s]);
      check_byte_identical(path);
      free(path);
    }
  }
  for (size_t i = 0; i < sizeof(other_saved_fixtures) / sizeof(other_saved_fixtures[0]); ++i) {
    char *path = fixture_path(other_saved_fixtures[i]);
    check_byte_identical(path);
    free(path);
  }
}

static void test_serialize_layout(void **state) {
  (void)state;
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 4,
                                    (const int64_t[]){1, 3, 224, 224}, &tensor));
  void *bytes = NULL;
  size_t size = 0;
  KILN_ASSERT_OK(kiln_npy_serialize(kiln_allocator_system(), tensor, &bytes, &size));
  const char expected[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (1, 3, 224, 224), }";
  assert_memory_equal(bytes, expected, sizeof(expected) - 1);
  const unsigned char *b = bytes;
  assert_int_equal(size, 128 + 602112);
  assert_int_equal(b[127], '\n');
  for (size_t i = sizeof(expected) - 1; i < 127; ++i) {
    assert_int_equal(b[i], ' ');
  }
  kiln_allocator_free(kiln_allocator_system(), bytes);
  kiln_tensor_release(tensor);
}

typedef struct round_trip_shape_t {
  int ndim;
  int64_t shape[6];
} round_trip_shape_t;

static void round_trip(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &tensor));
  unsigned char *data = kiln_tensor_data(tensor);
  for (size_t i = 0; i < kiln_tensor_byte_size(tensor); ++i) {
    data[i] = (unsigned char)(i * 37 + 11);
  }
  if (dtype == KILN_DTYPE_BOOL) {
    for (size_t i = 0; i < kiln_tensor_byte_size(tensor); ++i) {
      data[i] &= 1;
    }
  }
  void *bytes = NULL;
  size_t size = 0;
  KILN_ASSERT_OK(kiln_npy_serialize(kiln_allocator_system(), tensor, &bytes, &size));
  const unsigned char *b = bytes;
  size_t header_end = 10 + (size_t)(b[8] | b[9] << 8);
  assert_int_equal(b[6], 1);
  assert_int_equal(header_end % 64, 0);
  assert_int_equal(b[header_end - 1], '\n');
  assert_int_equal(size, header_end + kiln_tensor_byte_size(tensor));

  kiln_tensor_t *back = NULL;
  KILN_ASSERT_OK(kiln_npy_parse(kiln_allocator_system(), bytes, size, "<round trip>", &back));
  assert_int_equal(kiln_tensor_dtype(back), dtype);
  check_shape(back, ndim, shape);
  assert_int_equal(kiln_tensor_byte_size(back), kiln_tensor_byte_size(tensor));
  if (kiln_tensor_byte_size(tensor) > 0) {
    assert_memory_equal(kiln_tensor_data(back), data, kiln_tensor_byte_size(tensor));
  }
  kiln_tensor_release(back);
  kiln_allocator_free(kiln_allocator_system(), bytes);
  kiln_tensor_release(tensor);
}

static void test_round_trip_every_dtype(void **state) {
  (void)state;
  static const round_trip_shape_t shapes[] = {
      {0, {0}},          {1, {1}},
      {1, {7}},          {2, {3, 5}},
      {3, {2, 0, 4}},    {5, {1, 2, 3, 4, 5}},
      {2, {1, 1000}},    {6, {99999999999, 0, 1, 2, 3, 4}},
      {4, {1, 3, 9, 9}},
  };
  for (int d = 0; d < KILN_DTYPE_COUNT_; ++d) {
    if (kiln_dtype_numpy_descr((kiln_dtype_t)d) == NULL) {
      continue;
    }
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); ++s) {
      round_trip((kiln_dtype_t)d, shapes[s].ndim, shapes[s].shape);
    }
  }
  int64_t max_rank[KILN_MAX_RANK];
  for (int i = 0; i < KILN_MAX_RANK; ++i) {
    max_rank[i] = 1 + i % 2;
  }
  round_trip(KILN_DTYPE_UINT8, KILN_MAX_RANK, max_rank);
}

static void test_serialize_bfloat16_is_an_error(void **state) {
  (void)state;
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), KILN_DTYPE_BFLOAT16, 1,
                                    (const int64_t[]){4}, &tensor));
  void *bytes = (void *)1;
  size_t size = 1;
  KILN_ASSERT_STATUS(kiln_npy_serialize(kiln_allocator_system(), tensor, &bytes, &size),
                     INVALID_ARGUMENT, "NumPy has no bfloat16 dtype");
  assert_null(bytes);
  assert_int_equal(size, 0);
  KILN_ASSERT_STATUS(kiln_npy_write_file(kiln_allocator_system(), tensor, "/nonexistent/x.npy"),
                     INVALID_ARGUMENT, "/nonexistent/x.npy: a bfloat16 tensor cannot be written");
  kiln_tensor_release(tensor);
}

static void test_write_and_read_files(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "tensor.npy");
  kiln_tensor_t *tensor = read_fixture("int32_2x3x4.npy");
  KILN_ASSERT_OK(kiln_npy_write_file(kiln_allocator_system(), tensor, path));

  /* The file is NumPy's byte for byte. */
  size_t written_size, numpy_size;
  unsigned char *written = read_bytes(path, &written_size);
  char *numpy_path = fixture_path("int32_2x3x4.npy");
  unsigned char *numpy = read_bytes(numpy_path, &numpy_size);
  assert_int_equal(written_size, numpy_size);
  assert_memory_equal(written, numpy, numpy_size);
  free(written);
  free(numpy);
  free(numpy_path);

  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_tensor_t *back = NULL;
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_counting_allocator_get(&counting), path, &back));
  assert_int_equal(kiln_tensor_dtype(back), KILN_DTYPE_INT32);
  check_fixture_values(back);
  kiln_tensor_release(back);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);

  /* Overwriting replaces the file. */
  kiln_tensor_t *scalar = read_fixture("float64_scalar.npy");
  KILN_ASSERT_OK(kiln_npy_write_file(kiln_allocator_system(), scalar, path));
  KILN_ASSERT_OK(kiln_npy_read_file(kiln_allocator_system(), path, &back));
  assert_int_equal(kiln_tensor_ndim(back), 0);
  assert_true(*(const double *)kiln_tensor_data(back) == -3.0);
  kiln_tensor_release(back);
  kiln_tensor_release(scalar);

  /* A corrupt file's error names its path. */
  kiln_test_write_file(path, "\x93NUMPY\x01\x00", 8);
  KILN_ASSERT_STATUS(kiln_npy_read_file(kiln_allocator_system(), path, &back), DATA_LOSS, path);
  kiln_test_write_file(path, "", 0);
  KILN_ASSERT_STATUS(kiln_npy_read_file(kiln_allocator_system(), path, &back), DATA_LOSS,
                     "tensor.npy: truncated .npy file: it is empty");

  /* Writing into a missing folder is an I/O error naming the path. */
  char *missing = kiln_test_path_join(dir, "missing/tensor.npy");
  KILN_ASSERT_STATUS(kiln_npy_write_file(kiln_allocator_system(), tensor, missing), IO_ERROR,
                     missing);
  free(missing);
  kiln_tensor_release(tensor);
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

/* ---- crafted and corrupted files ---- */

static unsigned char *valid_file(size_t *out_size) {
  char *path = fixture_path("float32_2x3x4.npy");
  unsigned char *bytes = read_bytes(path, out_size);
  free(path);
  assert_int_equal(*out_size, 128 + 96);
  return bytes;
}

static void test_preamble_errors(void **state) {
  (void)state;
  size_t size;
  unsigned char *bytes = valid_file(&size);

  EXPECT_PARSE_FAILURE(bytes, 0, DATA_LOSS, "truncated .npy file: it is empty");
  EXPECT_PARSE_FAILURE(NULL, 0, DATA_LOSS, "empty");
  EXPECT_PARSE_FAILURE(bytes, 1, DATA_LOSS, "1 bytes end inside the magic");
  EXPECT_PARSE_FAILURE(bytes, 5, DATA_LOSS, "5 bytes end inside the magic");
  EXPECT_PARSE_FAILURE(bytes, 7, DATA_LOSS, "7 bytes end inside the version");
  EXPECT_PARSE_FAILURE(bytes, 9, DATA_LOSS, "9 bytes end inside the header length");
  EXPECT_PARSE_FAILURE(bytes, 10, DATA_LOSS,
                       "truncated header: the header length 118 runs past the end of the file "
                       "(0 bytes follow the 10-byte preamble)");
  EXPECT_PARSE_FAILURE(bytes, 60, DATA_LOSS, "truncated header");
  EXPECT_PARSE_FAILURE(bytes, 127, DATA_LOSS, "(117 bytes follow");
  EXPECT_PARSE_FAILURE(bytes, 128, DATA_LOSS,
                       "truncated data: float32 shape (2, 3, 4) needs 96 bytes, the file has 0 "
                       "after its 128-byte header");
  EXPECT_PARSE_FAILURE(bytes, 200, DATA_LOSS, "needs 96 bytes, the file has 72");
  EXPECT_PARSE_FAILURE(bytes, size - 1, DATA_LOSS, "the file has 95");

  const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0};
  EXPECT_PARSE_FAILURE(png, sizeof(png), INVALID_ARGUMENT,
                       "not a .npy file: bad magic (expected 93 4e 55 4d 50 59 = "
                       "\"\\x93NUMPY\", found 89 50 4e 47 0d 0a)");
  EXPECT_PARSE_FAILURE("\x93NUMPI", 6, INVALID_ARGUMENT, "found 93 4e 55 4d 50 49");
  EXPECT_PARSE_FAILURE("PK", 2, INVALID_ARGUMENT, "bad magic");
  EXPECT_PARSE_FAILURE("\x93NX", 3, INVALID_ARGUMENT, "found 93 4e 58)");

  bytes[6] = 4;
  EXPECT_PARSE_FAILURE(bytes, size, UNIMPLEMENTED,
                       "unsupported .npy version 4.0 (kiln reads 1.0, 2.0 and 3.0)");
  bytes[6] = 0;
  EXPECT_PARSE_FAILURE(bytes, size, UNIMPLEMENTED, "version 0.0");
  bytes[6] = 1;
  bytes[7] = 1;
  EXPECT_PARSE_FAILURE(bytes, size, UNIMPLEMENTED, "version 1.1");
  bytes[7] = 0;

  bytes[8] = 0xff;
  bytes[9] = 0xff;
  EXPECT_PARSE_FAILURE(bytes, size, DATA_LOSS,
                       "the header length 65535 runs past the end of the file (214 bytes follow");
  /* Read as version 2.0, the same bytes make a 4-byte length that is far too long. */
  bytes[6] = 2;
  EXPECT_PARSE_FAILURE(bytes, size, DATA_LOSS, "header length 662437887 runs past the end");
  /* A header length one byte short leaves the '\n' to the data: one stray byte. */
  bytes[6] = 1;
  bytes[8] = 117;
  bytes[9] = 0;
  EXPECT_PARSE_FAILURE(bytes, size, INVALID_ARGUMENT, "1 trailing bytes");
  /* One byte long takes a data byte into the header. */
  bytes[8] = 119;
  EXPECT_PARSE_FAILURE(bytes, size, INVALID_ARGUMENT, "malformed header");
  bytes[8] = 118;

  /* The whole file again, intact, parses. */
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_npy_parse(kiln_allocator_system(), bytes, size, "ok", &tensor));
  kiln_tensor_release(tensor);
  free(bytes);
}

static void test_data_length_errors(void **state) {
  (void)state;
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_DICT_FAILURE(dict, 20, DATA_LOSS, "truncated data: float32 shape (2, 3) needs 24 bytes");
  EXPECT_DICT_FAILURE(dict, 30, INVALID_ARGUMENT,
                      "6 trailing bytes: float32 shape (2, 3) needs 24 bytes, the file has 30");
  EXPECT_DICT_FAILURE("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 0, DATA_LOSS,
                      "int64 shape () needs 8 bytes, the file has 0");
  EXPECT_DICT_FAILURE("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }", 1,
                      INVALID_ARGUMENT, "1 trailing bytes: uint8 shape (0, 5) needs 0 bytes");
}

static void test_malformed_dicts(void **state) {
  (void)state;
  EXPECT_DICT_FAILURE("descr: <f4", 0, INVALID_ARGUMENT,
                      "malformed header: expected '{' opening the header dict at byte 10, found "
                      "'d'");
  EXPECT_DICT_FAILURE("", 0, INVALID_ARGUMENT,
                      "expected '{' opening the header dict at byte 64, found the end of the "
                      "header");
  EXPECT_DICT_FAILURE("{'descr' '<f4', 'fortran_order': False, 'shape': (), }", 4, INVALID_ARGUMENT,
                      "expected ':' after a key at byte 19, found '''");
  EXPECT_DICT_FAILURE("{descr: '<f4', 'fortran_order': False, 'shape': (), }", 4, INVALID_ARGUMENT,
                      "expected a quoted key or '}' at byte 11, found 'd'");
  EXPECT_DICT_FAILURE("{'descr': <f4, 'fortran_order': False, 'shape': (), }", 4, INVALID_ARGUMENT,
                      "expected a string value for 'descr' at byte 20");
  EXPECT_DICT_FAILURE("{'descr': 4, 'fortran_order': False, 'shape': (), }", 4, INVALID_ARGUMENT,
                      "expected a string value for 'descr'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': false, 'shape': (), }", 4,
                      INVALID_ARGUMENT,
                      "expected True or False for 'fortran_order' at byte 44, found 'f'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': 0, 'shape': (), }", 4, INVALID_ARGUMENT,
                      "expected True or False for 'fortran_order'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", 24,
                      INVALID_ARGUMENT, "expected a tuple '(' for 'shape' at byte 60, found '['");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24,
                      INVALID_ARGUMENT, "expected ',' or ')' in 'shape' at byte 63, found '3'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 24,
                      INVALID_ARGUMENT, "expected an integer dim in 'shape' at byte 64");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.0), }", 24,
                      INVALID_ARGUMENT, "expected ',' or ')' in 'shape'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (,), }", 24,
                      INVALID_ARGUMENT, "expected an integer dim");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (2,,), }", 8,
                      INVALID_ARGUMENT, "expected an integer dim");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 03), }", 24,
                      INVALID_ARGUMENT, "expected a dim without leading zeros at byte 64");
  /* A NUL where the byte-order character goes. */
  size_t size;
  unsigned char *bytes =
      build_npy("{'descr': '#i1', 'fortran_order': False, 'shape': (), }", 1, 1, &size);
  bytes[21] = '\0';
  EXPECT_PARSE_FAILURE(bytes, size, INVALID_ARGUMENT, "unsupported dtype descr");
  free(bytes);
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", 20,
                      INVALID_ARGUMENT, "expected ',' after the only dim of 'shape'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5,) ", 20,
                      INVALID_ARGUMENT,
                      "expected ',' or '}' after a value at byte 128, found the "
                      "end of the header");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), } x", 20,
                      INVALID_ARGUMENT, "expected only spaces and '\\n' after the header dict");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }}", 20,
                      INVALID_ARGUMENT, "found '}'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }\x01", 20,
                      INVALID_ARGUMENT, "found byte 0x01");
  EXPECT_DICT_FAILURE("{'descr: '<f4', 'fortran_order': False, 'shape': (5,), }", 20,
                      INVALID_ARGUMENT, "expected ':' after a key");
  EXPECT_DICT_FAILURE("{'descr': '<f4, 'fortran_order': False, 'shape': (5,), }", 20,
                      INVALID_ARGUMENT, "unsupported dtype descr '<f4, '");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), 'x", 20,
                      INVALID_ARGUMENT, "the string starting at byte 66 has no closing quote");
  EXPECT_DICT_FAILURE("{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (5,), }", 20,
                      INVALID_ARGUMENT, "escape sequence at byte 14");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), 'extra': 1, }", 20,
                      INVALID_ARGUMENT,
                      "unexpected key 'extra' at byte 66 (a .npy header has exactly 'descr', "
                      "'fortran_order' and 'shape')");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'shape': (5,), 'fortran_order': False, 'shape': (5,), }",
                      20, INVALID_ARGUMENT, "duplicate key 'shape' at byte 66");
  EXPECT_DICT_FAILURE("{'fortran_order': False, 'shape': (5,), }", 20, INVALID_ARGUMENT,
                      "malformed header: missing key 'descr'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'shape': (5,), }", 20, INVALID_ARGUMENT,
                      "missing key 'fortran_order'");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False}", 4, INVALID_ARGUMENT,
                      "missing key 'shape'");
  EXPECT_DICT_FAILURE("{}", 4, INVALID_ARGUMENT, "missing key 'descr'");
  EXPECT_DICT_FAILURE("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (5,), }", 20,
                      UNIMPLEMENTED, "descr at byte 20 is a list: structured dtypes");
}

static void test_descr_errors(void **state) {
  (void)state;
  EXPECT_DICT_FAILURE("{'descr': '<c8', 'fortran_order': False, 'shape': (), }", 8,
                      INVALID_ARGUMENT,
                      "unsupported dtype descr '<c8' (kiln reads '<f4', '<f2', '<f8', '|i1', "
                      "'<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '|b1')");
  EXPECT_DICT_FAILURE("{'descr': 'float32', 'fortran_order': False, 'shape': (), }", 4,
                      INVALID_ARGUMENT, "unsupported dtype descr 'float32'");
  EXPECT_DICT_FAILURE("{'descr': '', 'fortran_order': False, 'shape': (), }", 4, INVALID_ARGUMENT,
                      "unsupported dtype descr ''");
  EXPECT_DICT_FAILURE("{'descr': '<U10', 'fortran_order': False, 'shape': (), }", 40,
                      INVALID_ARGUMENT, "descr '<U10'");
  EXPECT_DICT_FAILURE("{'descr': '<f16', 'fortran_order': False, 'shape': (), }", 16,
                      INVALID_ARGUMENT, "descr '<f16'");
  EXPECT_DICT_FAILURE("{'descr': '<', 'fortran_order': False, 'shape': (), }", 16, INVALID_ARGUMENT,
                      "descr '<'");
  EXPECT_DICT_FAILURE("{'descr': '>f4', 'fortran_order': False, 'shape': (), }", 4, UNIMPLEMENTED,
                      "descr '>f4' is big-endian, and big-endian .npy files are not supported "
                      "(save the array as '<f4' instead)");
  EXPECT_DICT_FAILURE("{'descr': '>i8', 'fortran_order': False, 'shape': (), }", 8, UNIMPLEMENTED,
                      "'>i8' is big-endian");
  EXPECT_DICT_FAILURE("{'descr': '>f2', 'fortran_order': False, 'shape': (), }", 2, UNIMPLEMENTED,
                      "big-endian");
}

static void test_shape_errors(void **state) {
  (void)state;
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
                      UNIMPLEMENTED,
                      "Fortran order (fortran_order: True) with shape (2, 3) is not supported");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 0,
                      INVALID_ARGUMENT, "crafted.npy: dim 1 is -3 in shape (2, -3)");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0,
                      INVALID_ARGUMENT, "dim 0 is -1");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(4611686018427387904, 4), }",
                      0, OUT_OF_RANGE, "shape (4611686018427387904, 4) overflows int64");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(4611686018427387904,), }",
                      0, OUT_OF_RANGE, "byte size of float32 shape (4611686018427387904,)");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(99999999999999999999, 1), }",
                      0, OUT_OF_RANGE,
                      "shape dim 0 (99999999999999999999) at byte 61 is out of "
                      "range");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(1, 9223372036854775808), }",
                      0, OUT_OF_RANGE, "shape dim 1 (9223372036854775808)");
  EXPECT_DICT_FAILURE("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(1, -9223372036854775808), }",
                      0, OUT_OF_RANGE, "shape dim 1 (-9223372036854775808)");

  char dict[512];
  int n = snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (int i = 0; i <= KILN_MAX_RANK; ++i) {
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "1, ");
  }
  snprintf(dict + n, sizeof(dict) - (size_t)n, "), }");
  EXPECT_DICT_FAILURE(dict, 4, INVALID_ARGUMENT,
                      "shape at byte 157 has more than 32 dims (kiln's KILN_MAX_RANK)");
}

static void test_accepted_variants(void **state) {
  (void)state;
  static const struct {
    const char *dict;
    kiln_dtype_t dtype;
    int ndim;
    int64_t shape[3];
  } cases[] = {
      /* Double quotes, another key order, no trailing comma, odd spacing. */
      {"{\"shape\": (2, 3), \"descr\": \"<f4\", \"fortran_order\": False}",
       KILN_DTYPE_FLOAT32,
       2,
       {2, 3}},
      {"  {'fortran_order':False,'shape':(2,3),'descr':'<i2'}", KILN_DTYPE_INT16, 2, {2, 3}},
      {"{ 'descr' : '<f8' ,\t'fortran_order' : False , 'shape' : ( 4 , ) , }",
       KILN_DTYPE_FLOAT64,
       1,
       {4}},
      /* Python 2's long ints, a plus sign. */
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (0, 00, 1), }",
       KILN_DTYPE_UINT32,
       3,
       {0, 0, 1}},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (2L, +3L), }",
       KILN_DTYPE_UINT32,
       2,
       {2, 3}},
      /* Byte-order markers that are little-endian here. */
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_FLOAT32, 1, {3}},
      {"{'descr': '|f2', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_FLOAT16, 1, {3}},
      {"{'descr': 'i8', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_INT64, 1, {3}},
      {"{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_INT8, 1, {3}},
      {"{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_UINT8, 1, {3}},
      {"{'descr': '<b1', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_BOOL, 1, {3}},
      {"{'descr': '>b1', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_BOOL, 1, {3}},
      {"{'descr': '=u2', 'fortran_order': False, 'shape': (3,), }", KILN_DTYPE_UINT16, 1, {3}},
      /* Fortran order where it lays out the same bytes as C order. */
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (1, 5, 1), }",
       KILN_DTYPE_FLOAT32,
       3,
       {1, 5, 1}},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (), }", KILN_DTYPE_FLOAT32, 0, {0}},
      /* No '\n' needed: only whitespace after the dict. */
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\r\n\t ",
       KILN_DTYPE_FLOAT32,
       1,
       {1}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    size_t size;
    KILN_ASSERT_OK(kiln_shape_byte_size(cases[i].dtype, cases[i].ndim, cases[i].shape, &size));
    kiln_tensor_t *tensor = parse_dict(cases[i].dict, size);
    assert_int_equal(kiln_tensor_dtype(tensor), cases[i].dtype);
    check_shape(tensor, cases[i].ndim, cases[i].shape);
    kiln_tensor_release(tensor);
  }

  /* Version 2.0 and 3.0 files made here, and a NULL source name. */
  for (int major = 2; major <= 3; ++major) {
    size_t size;
    unsigned char *bytes =
        build_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", major, 8, &size);
    kiln_tensor_t *tensor = NULL;
    KILN_ASSERT_OK(kiln_npy_parse(kiln_allocator_system(), bytes, size, NULL, &tensor));
    assert_int_equal(kiln_tensor_element_count(tensor), 2);
    kiln_tensor_release(tensor);
    KILN_ASSERT_STATUS(kiln_npy_parse(kiln_allocator_system(), bytes, size - 1, NULL, &tensor),
                       DATA_LOSS, "<memory>: truncated data");
    free(bytes);
  }
}

/* ---- exhaustive corruption ---- */

/* Parses, frees whatever came back, and checks nothing leaked. */
static int parse_and_discard(const unsigned char *bytes, size_t size) {
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  int64_t statuses = kiln_status_live_count();
  kiln_tensor_t *tensor = NULL;
  kiln_status_t status =
      kiln_npy_parse(kiln_counting_allocator_get(&counting), bytes, size, "fuzz", &tensor);
  int ok = status == NULL;
  if (ok) {
    assert_non_null(tensor);
    kiln_tensor_release(tensor);
  } else {
    assert_null(tensor);
    assert_true(strncmp(kiln_status_message(status), "fuzz: ", 6) == 0);
    kiln_status_free(status);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
  assert_int_equal(kiln_status_live_count(), statuses);
  return ok;
}

static void test_every_truncation_fails(void **state) {
  (void)state;
  const char *names[] = {"int8_2x3x4.npy", "float32_scalar.npy", "float16_5.npy"};
  for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); ++n) {
    char *path = fixture_path(names[n]);
    size_t size;
    unsigned char *bytes = read_bytes(path, &size);
    for (size_t length = 0; length < size; ++length) {
      unsigned char *prefix = malloc(length ? length : 1);
      assert_non_null(prefix);
      memcpy(prefix, bytes, length);
      if (parse_and_discard(prefix, length)) {
        fail_msg("%s cut to %zu of %zu bytes was accepted", names[n], length, size);
      }
      free(prefix);
    }
    assert_true(parse_and_discard(bytes, size));
    free(bytes);
    free(path);
  }
}

static void test_every_header_byte_change(void **state) {
  (void)state;
  char *path = fixture_path("int8_2x3x4.npy");
  size_t size;
  unsigned char *bytes = read_bytes(path, &size);
  size_t header_end = 10 + (size_t)(bytes[8] | bytes[9] << 8);
  int accepted = 0, rejected = 0;
  for (size_t position = 0; position < header_end; ++position) {
    unsigned char original = bytes[position];
    for (int value = 0; value < 256; ++value) {
      if (value == original) {
        continue;
      }
      bytes[position] = (unsigned char)value;
      if (parse_and_discard(bytes, size)) {
        accepted += 1;
      } else {
        rejected += 1;
      }
    }
    bytes[position] = original;
  }
  /* Padding spaces may become other whitespace, and a few dims and descrs
   * stay valid; everything else is rejected. */
  assert_true(accepted > 0);
  assert_true(rejected > accepted);
  print_message("header byte changes: %d accepted, %d rejected\n", accepted, rejected);
  free(bytes);
  free(path);
}

/* ---- allocation failures ---- */

typedef struct sweep_context_t {
  const unsigned char *bytes;
  size_t size;
  const char *path;
} sweep_context_t;

static kiln_status_t parse_scenario(kiln_allocator_t allocator, void *context) {
  const sweep_context_t *c = context;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_npy_parse(allocator, c->bytes, c->size, "sweep", &tensor));
  kiln_tensor_release(tensor);
  return KILN_OK;
}

static kiln_status_t serialize_scenario(kiln_allocator_t allocator, void *context) {
  const sweep_context_t *c = context;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_npy_parse(allocator, c->bytes, c->size, "sweep", &tensor));
  void *bytes = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_npy_serialize(allocator, tensor, &bytes, &size);
  if (status == NULL && (size != c->size || memcmp(bytes, c->bytes, size) != 0)) {
    status = KILN_STATUS(INTERNAL, "serialize changed the bytes");
  }
  kiln_allocator_free(allocator, bytes);
  kiln_tensor_release(tensor);
  return status;
}

static kiln_status_t read_file_scenario(kiln_allocator_t allocator, void *context) {
  const sweep_context_t *c = context;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_npy_read_file(allocator, c->path, &tensor));
  kiln_tensor_release(tensor);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  sweep_context_t context;
  context.path = NULL;
  size_t size;
  unsigned char *bytes = valid_file(&size);
  context.bytes = bytes;
  context.size = size;
  assert_int_equal(kiln_test_sweep_allocation_failures(parse_scenario, &context), 1);
  assert_int_equal(kiln_test_sweep_allocation_failures(serialize_scenario, &context), 2);
  free(bytes);

  char *path = fixture_path("uint16_2x3x4.npy");
  context.path = path;
  assert_true(kiln_test_sweep_allocation_failures(read_file_scenario, &context) >= 2);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_every_dtype_and_shape),
      cmocka_unit_test(test_read_spot_values),
      cmocka_unit_test(test_read_versions_2_and_3),
      cmocka_unit_test(test_read_other_fixtures),
      cmocka_unit_test(test_read_unsupported_fixtures),
      cmocka_unit_test(test_serialize_matches_numpy),
      cmocka_unit_test(test_serialize_layout),
      cmocka_unit_test(test_round_trip_every_dtype),
      cmocka_unit_test(test_serialize_bfloat16_is_an_error),
      cmocka_unit_test(test_write_and_read_files),
      cmocka_unit_test(test_preamble_errors),
      cmocka_unit_test(test_data_length_errors),
      cmocka_unit_test(test_malformed_dicts),
      cmocka_unit_test(test_descr_errors),
      cmocka_unit_test(test_shape_errors),
      cmocka_unit_test(test_accepted_variants),
      cmocka_unit_test(test_every_truncation_fails),
      cmocka_unit_test(test_every_header_byte_change),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
