/*
 * Tests of the file and path helpers: round trips, empty files, the NUL
 * after the data, atomic replacement, and the errors for missing files,
 * folders and unwritable paths, each naming the path; targets that are not
 * regular files (a character device written through and never replaced,
 * /dev/full reported, a FIFO refused for reading without hanging and for
 * writing without being replaced), and a symlink planted where the old
 * predictable temporary name was, which must not be followed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);

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

/* /dev/null is written through and stays a device; /dev/full's failure is
 * reported. */
static void test_character_devices_written_through(void **state) {
  (void)state;
  KILN_ASSERT_OK(kiln_file_write_all("/dev/null", "data", 4));
  struct stat info;
  assert_int_equal(stat("/dev/null", &info), 0);
  assert_true(S_ISCHR(info.st_mode));
  if (stat("/dev/full", &info) == 0 && S_ISCHR(info.st_mode)) {
    KILN_ASSERT_STATUS(kiln_file_write_all("/dev/full", "data", 4), IO_ERROR,
                       "/dev/full: cannot write: No space left on device");
  }
}

/* A FIFO is refused for reading at once (no reader is waiting on it) and
 * for writing, and stays a FIFO. */
static void test_fifo_refused(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "pipe.npy");
  assert_int_equal(mkfifo(path, 0600), 0);
  void *data = NULL;
  size_t size = 0;
  KILN_ASSERT_STATUS(kiln_file_read_all(kiln_allocator_system(), path, &data, &size), IO_ERROR,
                     "pipe.npy: not a regular file (a FIFO)");
  KILN_ASSERT_STATUS(kiln_file_write_all(path, "x", 1), INVALID_ARGUMENT,
                     "pipe.npy: exists and is not a regular file (a FIFO)");
  struct stat info;
  assert_int_equal(stat(path, &info), 0);
  assert_true(S_ISFIFO(info.st_mode));
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
}

/* A symlink planted at "<path>.tmp.<pid>" (the old temporary name) to a
 * victim file: the write leaves the victim as it was. */
static void test_planted_symlink_not_followed(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "out.npy");
  char *victim = kiln_test_path_join(dir, "victim");
  kiln_test_write_file(victim, "keep", 4);
  char planted[4096];
  snprintf(planted, sizeof(planted), "%s.tmp.%ld", path, (long)getpid());
  assert_int_equal(symlink(victim, planted), 0);
  KILN_ASSERT_OK(kiln_file_write_all(path, "new data", 8));
  void *data = NULL;
  size_t size = 0;
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(), victim, &data, &size));
  assert_int_equal(size, 4);
  assert_memory_equal(data, "keep", 4);
  kiln_allocator_free(kiln_allocator_system(), data);
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(), path, &data, &size));
  assert_int_equal(size, 8);
  kiln_allocator_free(kiln_allocator_system(), data);
  kiln_test_remove_dir(dir);
  free(path);
  free(victim);
  free(dir);
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
      cmocka_unit_test(test_character_devices_written_through),
      cmocka_unit_test(test_fifo_refused),
      cmocka_unit_test(test_planted_symlink_not_followed),
      cmocka_unit_test(test_empty_file),
      cmocka_unit_test(test_errors_name_the_path),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
