/*
 * Implementation of the shared test support; see kiln_test.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "kiln_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void kiln_test_assert_ok(kiln_status_t status, const char *expression, const char *file, int line) {
  if (status == NULL) {
    return;
  }
  char *text = kiln_status_to_string(status);
  print_error("%s:%d: %s failed: %s\n", file, line, expression, text ? text : "?");
  free(text);
  kiln_status_free(status);
  _fail(file, line);
}

void kiln_test_assert_status(kiln_status_t status, kiln_status_code_t code, const char *substring,
                             const char *expression, const char *file, int line) {
  if (status == NULL) {
    print_error("%s:%d: %s succeeded; expected %s\n", file, line, expression,
                kiln_status_code_name(code));
    _fail(file, line);
    return;
  }
  int code_ok = kiln_status_code(status) == code;
  int text_ok = strstr(kiln_status_message(status), substring) != NULL;
  if (!code_ok || !text_ok) {
    char *text = kiln_status_to_string(status);
    print_error("%s:%d: %s: expected %s containing \"%s\", got %s\n", file, line, expression,
                kiln_status_code_name(code), substring, text ? text : "?");
    free(text);
    kiln_status_free(status);
    _fail(file, line);
    return;
  }
  kiln_status_free(status);
}

int64_t kiln_test_sweep_allocation_failures(kiln_test_scenario_fn scenario, void *context) {
  for (int64_t attempt = 0;; ++attempt) {
    kiln_counting_allocator_t counting;
    kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
    kiln_counting_allocator_fail_attempt(&counting, attempt);
    int64_t statuses_before = kiln_status_live_count();
    kiln_status_t status = scenario(kiln_counting_allocator_get(&counting), context);
    int injected = kiln_counting_allocator_counts(&counting).injected_failures > 0;
    if (injected) {
      if (kiln_status_code(status) != KILN_STATUS_CODE_RESOURCE_EXHAUSTED) {
        char *text = kiln_status_to_string(status);
        print_error("allocation attempt %lld failed but the scenario returned %s\n",
                    (long long)attempt, text ? text : "?");
        free(text);
        kiln_status_free(status);
        fail();
      }
      kiln_status_free(status);
    } else {
      kiln_test_assert_ok(status, "scenario", __FILE__, __LINE__);
    }
    if (kiln_counting_allocator_counts(&counting).live_blocks != 0) {
      print_error("with allocation attempt %lld failing, %lld blocks (%lld bytes) leaked\n",
                  (long long)attempt,
                  (long long)kiln_counting_allocator_counts(&counting).live_blocks,
                  (long long)kiln_counting_allocator_counts(&counting).live_bytes);
      fail();
    }
    assert_int_equal(kiln_status_live_count(), statuses_before);
    if (!injected) {
      return attempt;
    }
  }
}

char *kiln_test_make_temp_dir(void) {
  const char *base = getenv("TMPDIR");
  char *templ = kiln_test_path_join(base && *base ? base : "/tmp", "kiln-test-XXXXXX");
  assert_non_null(mkdtemp(templ));
  return templ;
}

char *kiln_test_path_join(const char *directory, const char *name) {
  size_t length = strlen(directory) + strlen(name) + 2;
  char *path = malloc(length);
  assert_non_null(path);
  snprintf(path, length, "%s/%s", directory, name);
  return path;
}

void kiln_test_write_file(const char *path, const void *data, size_t size) {
  FILE *file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(data, 1, size, file), size);
  assert_int_equal(fclose(file), 0);
}

void kiln_test_remove_dir(const char *path) {
  DIR *dir = opendir(path);
  if (!dir) {
    return;
  }
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
      continue;
    }
    char *child = kiln_test_path_join(path, entry->d_name);
    unlink(child);
    free(child);
  }
  closedir(dir);
  rmdir(path);
}

const char *kiln_test_shared_models_dir(void) {
  static const char dir[] = KILN_SHARED_MODELS_DIR;
  struct stat info;
  if (stat(dir, &info) != 0 || !S_ISDIR(info.st_mode)) {
    return NULL;
  }
  return dir;
}

/* ---- skips ---- */

static const char *kiln_test_skip_reasons[16];
static int kiln_test_skip_count;

void kiln_test_note_skip(const char *reason) {
  printf("skipped: %s\n", reason);
  if (kiln_test_skip_count < 16) {
    kiln_test_skip_reasons[kiln_test_skip_count] = reason;
  }
  ++kiln_test_skip_count;
}

int kiln_test_exit_code(int failures) {
  if (failures != 0 || kiln_test_skip_count == 0) {
    return failures;
  }
  printf("%d test(s) skipped:\n", kiln_test_skip_count);
  for (int i = 0; i < kiln_test_skip_count && i < 16; ++i) {
    printf("  %s\n", kiln_test_skip_reasons[i]);
  }
  return KILN_TEST_SKIP_EXIT_CODE;
}
