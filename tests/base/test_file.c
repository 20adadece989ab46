/*
 * Tests of the file and path helpers: round trips, empty files, the NUL
 * after the data, atomic replacement, and the errors for missing files,
 * folders and unwritable paths, each naming the path.
 */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "kiln_test.h"

static void test_write_then_read(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "data.bin");
  const unsigned char bytes[] = {0, 1, 2, 255, 0, 7};
  KILN_ASSERT_OK(kiln_file_write_all(path, bytes, sizeof(bytes)));
  assert_true(kiln_file_exists(path));
  assert_false(kiln_file_is_directory(path));
  assert_true(kiln_file_is_directory(dir));

  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_allocator_t allocator = kiln_counting_allocator_get(&counting);
  void *data = NULL;
  size_t size = 0;
  KILN_ASSERT_OK(kiln_file_read_all(allocator, path, &data, &size));
  assert_int_equal(size, sizeof(bytes));
  assert_memory_equal(data, bytes, sizeof(bytes));
  assert_int_equal(((char *)data)[size], '\0');
  kiln_allocator_free(allocator, data);

  /* Replacing keeps no temporary file behind. */
  KILN_ASSERT_OK(kiln_file_write_all(path, "abc", 3));
  KILN_ASSERT_OK(kiln_file_read_all(allocator, path, &data, &size));
  assert_int_equal(size, 3);
  assert_string_equal(data, "abc");
  kiln_allocator_free(allocator, data);
  assert_int_equal(atomic_load(&counting.live_blocks), 0);

  kiln_test_remove_dir(dir);
  assert_false(kiln_file_exists(path));
  free(path);
  free(dir);
}

static void test_empty_file(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "empty");
  KILN_ASSERT_OK(kiln_file_write_all(path, NULL, 0));
  void *data = NULL;
  size_t size = 99;
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(), path, &data, &size));
  assert_int_equal(size, 0);
  assert_string_equal(data, "");
  kiln_allocator_free(kiln_allocator_system(), data);
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

static void test_errors_name_the_path(void **state) {
  (void)state;
  void *data = (void *)1;
  size_t size = 1;
  KILN_ASSERT_STATUS(
      kiln_file_read_all(kiln_allocator_system(), "/nonexistent/model.onnx", &data, &size),
      NOT_FOUND, "/nonexistent/model.onnx: cannot open: No such file");
  assert_null(data);
  assert_int_equal(size, 0);
  KILN_ASSERT_STATUS(kiln_file_read_all(kiln_allocator_system(), "/tmp", &data, &size), IO_ERROR,
                     "/tmp: not a regular file");
  KILN_ASSERT_STATUS(kiln_file_write_all("/nonexistent/dir/out.bin", "x", 1), IO_ERROR,
                     "/nonexistent/dir/out.bin: cannot create");
}

static kiln_status_t read_scenario(kiln_allocator_t allocator, void *context) {
  void *data = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, context, &data, &size));
  assert_int_equal(size, 5);
  kiln_allocator_free(allocator, data);
  char *joined = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, "a", "b", &joined));
  kiln_allocator_free(allocator, joined);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "five");
  kiln_test_write_file(path, "12345", 5);
  assert_int_equal(kiln_test_sweep_allocation_failures(read_scenario, path), 2);
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

static void check_join(const char *a, const char *b, const char *expected) {
  char *path = NULL;
  KILN_ASSERT_OK(kiln_path_join(kiln_allocator_system(), a, b, &path));
  assert_string_equal(path, expected);
  kiln_allocator_free(kiln_allocator_system(), path);
}

static void check_dirname(const char *path, const char *expected) {
  char *dir = NULL;
  KILN_ASSERT_OK(kiln_path_dirname(kiln_allocator_system(), path, &dir));
  assert_string_equal(dir, expected);
  kiln_allocator_free(kiln_allocator_system(), dir);
}

static void test_paths(void **state) {
  (void)state;
  check_join("models", "resnet18.onnx", "models/resnet18.onnx");
  check_join("models/", "a.bin", "models/a.bin");
  check_join("", "a.bin", "a.bin");
  check_join("models", "/abs/a.bin", "/abs/a.bin");
  check_dirname("a/b/c.onnx", "a/b");
  check_dirname("c.onnx", ".");
  check_dirname("/c.onnx", "/");
  check_dirname("a//c", "a");
  check_dirname("a/b/", "a");
  check_dirname("/", "/");
  assert_string_equal(kiln_path_basename("a/b/c.onnx"), "c.onnx");
  assert_string_equal(kiln_path_basename("c.onnx"), "c.onnx");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_write_then_read),
      cmocka_unit_test(test_empty_file),
      cmocka_unit_test(test_errors_name_the_path),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
