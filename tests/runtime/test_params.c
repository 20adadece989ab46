/*
 * Tests of the params file and object (include/kiln/runtime.h): a round
 * trip of tensors of several dtypes and ranks (empty and rank 0 too)
 * through bytes and through a file, the byte layout of the header and the
 * first record, lookup by name, and every error: bad magic, another
 * version, every truncation of a valid file, a declared count too large for
 * the file, a name given twice (in memory and in a file), an empty or NUL
 * name, a bad .npy named by its tensor, trailing bytes, a missing file; and
 * allocation-failure sweeps of create, serialize + parse and load.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "kiln_test.h"

typedef struct sample_t {
  kiln_tensor_t *tensors[4];
  const char *names[4];
} sample_t;

static kiln_tensor_t *filled(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &t));
  unsigned char *bytes = kiln_tensor_data(t);
  for (size_t i = 0; i < kiln_tensor_byte_size(t); ++i) {
    bytes[i] = (unsigned char)(i * 7 + 3);
  }
  return t;
}

static void sample_make(sample_t *s) {
  s->tensors[0] = filled(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){2, 3});
  s->tensors[1] = filled(KILN_DTYPE_INT64, 1, (const int64_t[]){5});
  s->tensors[2] = filled(KILN_DTYPE_UINT8, 0, NULL);
  s->tensors[3] = filled(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){0, 3});
  s->names[0] = "conv1.weight";
  s->names[1] = "p1";
  s->names[2] = "scalar";
  s->names[3] = "empty";
}

static void sample_free(sample_t *s) {
  for (int i = 0; i < 4; ++i) {
    kiln_tensor_release(s->tensors[i]);
  }
}

static void assert_same_tensor(const kiln_tensor_t *a, const kiln_tensor_t *b) {
  assert_int_equal(kiln_tensor_dtype(a), kiln_tensor_dtype(b));
  assert_true(kiln_shape_equal(kiln_tensor_ndim(a), kiln_tensor_shape(a), kiln_tensor_ndim(b),
                               kiln_tensor_shape(b)));
  assert_int_equal(kiln_tensor_byte_size(a), kiln_tensor_byte_size(b));
  if (kiln_tensor_byte_size(a) > 0) {
    assert_memory_equal(kiln_tensor_data(a), kiln_tensor_data(b), kiln_tensor_byte_size(a));
  }
}

static void assert_sample(const kiln_runtime_params_t *params, const sample_t *s) {
  assert_int_equal(kiln_runtime_params_count(params), 4);
  for (int i = 0; i < 4; ++i) {
    assert_string_equal(kiln_runtime_params_name(params, i), s->names[i]);
    assert_same_tensor(kiln_runtime_params_tensor(params, i), s->tensors[i]);
    assert_ptr_equal(kiln_runtime_params_get(params, s->names[i]),
                     kiln_runtime_params_tensor(params, i));
  }
  assert_null(kiln_runtime_params_get(params, "conv1"));
  assert_null(kiln_runtime_params_get(params, NULL));
}

static uint64_t le(const unsigned char *p, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) {
    v = v << 8 | p[i];
  }
  return v;
}

static void test_round_trip_and_layout(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  sample_t s;
  sample_make(&s);
  void *bytes = NULL;
  size_t size = 0;
  KILN_ASSERT_OK(kiln_runtime_params_serialize(system, 4, s.names, s.tensors, &bytes, &size));
  const unsigned char *b = bytes;
  assert_memory_equal(b, "KILNPRM\0", 8);
  assert_int_equal(le(b + 8, 4), 1);
  assert_int_equal(le(b + 12, 4), 4);
  assert_int_equal(le(b + 16, 4), strlen("conv1.weight"));
  assert_memory_equal(b + 20, "conv1.weight", 12);
  /* The first record's .npy is kiln_npy_serialize's bytes. */
  void *npy = NULL;
  size_t npy_size = 0;
  KILN_ASSERT_OK(kiln_npy_serialize(system, s.tensors[0], &npy, &npy_size));
  assert_int_equal(le(b + 32, 8), npy_size);
  assert_memory_equal(b + 40, npy, npy_size);
  kiln_allocator_free(system, npy);
  size_t expected = 16;
  for (int i = 0; i < 4; ++i) {
    KILN_ASSERT_OK(kiln_npy_serialize(system, s.tensors[i], &npy, &npy_size));
    expected += 12 + strlen(s.names[i]) + npy_size;
    kiln_allocator_free(system, npy);
  }
  assert_int_equal(size, expected);

  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_OK(kiln_runtime_params_parse(system, bytes, size, "<memory>", &params));
  assert_sample(params, &s);
  kiln_runtime_params_destroy(params);
  kiln_allocator_free(system, bytes);

  /* Through a file. */
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "params.bin");
  KILN_ASSERT_OK(kiln_runtime_params_save(path, 4, s.names, s.tensors));
  KILN_ASSERT_OK(kiln_runtime_params_load(system, path, &params));
  assert_sample(params, &s);
  kiln_runtime_params_destroy(params);
  /* No params at all is a valid file of 16 bytes. */
  KILN_ASSERT_OK(kiln_runtime_params_save(path, 0, NULL, NULL));
  KILN_ASSERT_OK(kiln_runtime_params_load(system, path, &params));
  assert_int_equal(kiln_runtime_params_count(params), 0);
  assert_null(kiln_runtime_params_get(params, "p1"));
  kiln_runtime_params_destroy(params);
  KILN_ASSERT_STATUS(kiln_runtime_params_load(system, dir, &params), IO_ERROR, dir);
  unlink(path);
  KILN_ASSERT_STATUS(kiln_runtime_params_load(system, path, &params), NOT_FOUND, "params.bin");
  assert_null(params);
  free(path);
  kiln_test_remove_dir(dir);
  free(dir);
  sample_free(&s);
}

static void test_create_in_memory(void **state) {
  (void)state;
  sample_t s;
  sample_make(&s);
  kiln_runtime_params_t *params = NULL;
  KILN_ASSERT_OK(
      kiln_runtime_params_create(kiln_allocator_system(), 4, s.names, s.tensors, &params));
  assert_sample(params, &s);
  /* The tensors are shared, not copied. */
  assert_ptr_equal(kiln_runtime_params_get(params, "p1"), s.tensors[1]);
  kiln_runtime_params_destroy(params);
  kiln_runtime_params_destroy(NULL);
  sample_free(&s);
}

static void test_bad_names(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  sample_t s;
  sample_make(&s);
  kiln_runtime_params_t *params = NULL;
  void *bytes = NULL;
  size_t size = 0;
  s.names[2] = "p1";
  KILN_ASSERT_STATUS(kiln_runtime_params_create(system, 4, s.names, s.tensors, &params),
                     INVALID_ARGUMENT, "params: the name 'p1' is given twice (tensors 1 and 2)");
  assert_null(params);
  KILN_ASSERT_STATUS(kiln_runtime_params_serialize(system, 4, s.names, s.tensors, &bytes, &size),
                     INVALID_ARGUMENT, "params: the name 'p1' is given twice (tensors 1 and 2)");
  assert_null(bytes);
  s.names[2] = "";
  KILN_ASSERT_STATUS(kiln_runtime_params_create(system, 4, s.names, s.tensors, &params),
                     INVALID_ARGUMENT, "params: tensor 2 has an empty name");
  KILN_ASSERT_STATUS(kiln_runtime_params_serialize(system, 4, s.names, s.tensors, &bytes, &size),
                     INVALID_ARGUMENT, "params: tensor 2 has an empty name");
  s.names[2] = NULL;
  KILN_ASSERT_STATUS(kiln_runtime_params_create(system, 4, s.names, s.tensors, &params),
                     INVALID_ARGUMENT, "params: tensor 2 has no name");
  s.names[2] = "scalar";
  kiln_tensor_t *keep = s.tensors[3];
  s.tensors[3] = NULL;
  KILN_ASSERT_STATUS(kiln_runtime_params_create(system, 4, s.names, s.tensors, &params),
                     INVALID_ARGUMENT, "params: tensor 3 (empty) is NULL");
  KILN_ASSERT_STATUS(kiln_runtime_params_serialize(system, 4, s.names, s.tensors, &bytes, &size),
                     INVALID_ARGUMENT, "params: tensor 3 (empty) is NULL");
  s.tensors[3] = keep;
  KILN_ASSERT_STATUS(kiln_runtime_params_create(system, -1, s.names, s.tensors, &params),
                     INVALID_ARGUMENT, "-1 names");
  KILN_ASSERT_STATUS(kiln_runtime_params_save("/nonexistent-dir/params.bin", 4, s.names, s.tensors),
                     IO_ERROR, "/nonexistent-dir/params.bin");
  sample_free(&s);
}

/* The sample's bytes, for the file-error tests; free with free(). */
static unsigned char *sample_bytes(const char *const *names, size_t *out_size) {
  sample_t s;
  sample_make(&s);
  void *bytes = NULL;
  KILN_ASSERT_OK(kiln_runtime_params_serialize(kiln_allocator_system(), 4, names ? names : s.names,
                                               s.tensors, &bytes, out_size));
  sample_free(&s);
  return bytes;
}

static void test_file_errors(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  size_t size = 0;
  unsigned char *bytes = sample_bytes(NULL, &size);
  kiln_runtime_params_t *params = NULL;
  /* Every proper prefix fails: bad magic before 8 bytes, then truncation. */
  for (size_t cut = 0; cut < size; ++cut) {
    kiln_status_t status = kiln_runtime_params_parse(system, bytes, cut, "w.bin", &params);
    assert_non_null(status);
    assert_null(params);
    assert_int_equal(kiln_status_code(status),
                     cut < 8 ? KILN_STATUS_CODE_INVALID_ARGUMENT : KILN_STATUS_CODE_DATA_LOSS);
    assert_non_null(strstr(kiln_status_message(status), "w.bin: "));
    kiln_status_free(status);
  }
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, bytes, 12, "w.bin", &params), DATA_LOSS,
                     "w.bin: truncated: the header needs 16 bytes, the file has 12");
  /* Cut inside the second record's npy data. */
  size_t first = 16 + 12 + strlen("conv1.weight") + (size_t)le(bytes + 32, 8);
  size_t second_npy = (size_t)le(bytes + first + 4 + 2, 8);
  size_t cut = first + 4 + 2 + 8 + 10;
  char expected[256];
  snprintf(expected, sizeof(expected),
           "w.bin: truncated: tensor 1's npy data needs %zu bytes at offset %zu, the file has %zu",
           second_npy, first + 14, cut);
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, bytes, cut, "w.bin", &params), DATA_LOSS,
                     expected);

  unsigned char *copy = malloc(size + 3);
  assert_non_null(copy);
  memcpy(copy, bytes, size);
  copy[3] = 'X';
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, copy, size, "w.bin", &params),
                     INVALID_ARGUMENT, "w.bin: not a kiln params file");
  copy[3] = 'N';
  copy[8] = 2;
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, copy, size, "w.bin", &params), UNIMPLEMENTED,
                     "w.bin: params file version 2, kiln reads version 1");
  copy[8] = 1;
  copy[15] = 0x7f; /* a count of about 2^31 */
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, copy, size, "w.bin", &params), DATA_LOSS,
                     "w.bin: truncated: it declares 2130706436 tensors in");
  copy[15] = 0;
  /* Trailing bytes. */
  memcpy(copy + size, "abc", 3);
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, copy, size + 3, "w.bin", &params),
                     INVALID_ARGUMENT, "w.bin: 3 bytes after the last of 4 tensors");
  /* A broken .npy inside names its tensor. */
  copy[40] = 'X'; /* the first npy's magic */
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, copy, size, "w.bin", &params),
                     INVALID_ARGUMENT, "w.bin: tensor 0 'conv1.weight': ");
  memcpy(copy, bytes, size);
  /* A NUL inside a name. */
  copy[20 + 5] = '\0';
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, copy, size, "w.bin", &params),
                     INVALID_ARGUMENT, "w.bin: tensor 0's name holds a NUL");
  free(copy);
  free(bytes);
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, NULL, 4, "w.bin", &params), INVALID_ARGUMENT,
                     "w.bin: 4 bytes at NULL");

  /* A name given twice in a file (the writer refuses to make one). */
  const char *names[] = {"conv1.weight", "p1", "p2", "empty"};
  bytes = sample_bytes(names, &size);
  unsigned char *p2 = memmem(bytes, size, "p2", 2);
  assert_non_null(p2);
  p2[1] = '1';
  KILN_ASSERT_STATUS(kiln_runtime_params_parse(system, bytes, size, "w.bin", &params),
                     INVALID_ARGUMENT, "w.bin: the name 'p1' is given twice (tensors 1 and 2)");
  assert_null(params);
  free(bytes);
}

static kiln_status_t create_scenario(kiln_allocator_t allocator, void *context) {
  sample_t *s = context;
  kiln_runtime_params_t *params = NULL;
  KILN_RETURN_IF_ERROR(kiln_runtime_params_create(allocator, 4, s->names, s->tensors, &params));
  kiln_runtime_params_destroy(params);
  return KILN_OK;
}

static kiln_status_t parse_scenario(kiln_allocator_t allocator, void *context) {
  sample_t *s = context;
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(
      kiln_runtime_params_serialize(allocator, 4, s->names, s->tensors, &bytes, &size));
  kiln_runtime_params_t *params = NULL;
  kiln_status_t status = kiln_runtime_params_parse(allocator, bytes, size, "<memory>", &params);
  kiln_allocator_free(allocator, bytes);
  KILN_RETURN_IF_ERROR(status);
  int ok =
      kiln_runtime_params_count(params) == 4 && kiln_runtime_params_get(params, "empty") != NULL;
  kiln_runtime_params_destroy(params);
  return ok ? KILN_OK : KILN_STATUS(INTERNAL, "parsed params differ");
}

static kiln_status_t load_scenario(kiln_allocator_t allocator, void *context) {
  kiln_runtime_params_t *params = NULL;
  KILN_RETURN_IF_ERROR(kiln_runtime_params_load(allocator, context, &params));
  kiln_runtime_params_destroy(params);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  sample_t s;
  sample_make(&s);
  assert_true(kiln_test_sweep_allocation_failures(create_scenario, &s) >= 9);
  assert_true(kiln_test_sweep_allocation_failures(parse_scenario, &s) >= 12);
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "params.bin");
  KILN_ASSERT_OK(kiln_runtime_params_save(path, 4, s.names, s.tensors));
  assert_true(kiln_test_sweep_allocation_failures(load_scenario, path) >= 10);
  free(path);
  kiln_test_remove_dir(dir);
  free(dir);
  sample_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_and_layout),
      cmocka_unit_test(test_create_in_memory),
      cmocka_unit_test(test_bad_names),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
