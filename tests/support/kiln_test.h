/*
 * Shared test support: cmocka plus status-aware assertions and the
 * allocation-failure sweep.
 *
 * KILN_ASSERT_OK prints the failing status in full before failing, so a red
 * test says what went wrong. KILN_ASSERT_STATUS checks a failure's code and a
 * substring of its message, then frees it. kiln_test_sweep_allocation_failures
 * runs a scenario once with each of its allocations made to fail in turn and
 * checks that every run either succeeds or returns RESOURCE_EXHAUSTED, and that
 * no run leaks a block or a status.
 */
#ifndef KILN_TESTS_SUPPORT_KILN_TEST_H_
#define KILN_TESTS_SUPPORT_KILN_TEST_H_

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the three headers above first. */
#include <cmocka.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

/* Fails the test with the status text when `expr` is not OK. */
#define KILN_ASSERT_OK(expr) kiln_test_assert_ok((expr), #expr, __FILE__, __LINE__)

/* Asserts that `expr` fails with status code `code` and a message containing
 * `substring` (may be ""), then frees the status. */
#define KILN_ASSERT_STATUS(expr, code, substring) \
  kiln_test_assert_status((expr), KILN_STATUS_CODE_##code, (substring), #expr, __FILE__, __LINE__)

void kiln_test_assert_ok(kiln_status_t status, const char *expression, const char *file, int line);
void kiln_test_assert_status(kiln_status_t status, kiln_status_code_t code, const char *substring,
                             const char *expression, const char *file, int line);

/* A scenario builds something with `allocator`, checks it, and releases
 * everything it made before returning. It returns the first failing status. */
typedef kiln_status_t (*kiln_test_scenario_fn)(kiln_allocator_t allocator, void *context);

/* Runs `scenario` with allocation attempt 0, 1, 2, ... failing until a run
 * makes no allocation fail; asserts no leaks on every run and returns the
 * number of allocation attempts the clean run made. */
int64_t kiln_test_sweep_allocation_failures(kiln_test_scenario_fn scenario, void *context);

/* A fresh temporary directory (mkdtemp) for files a test writes; the caller
 * frees the returned path with free(). */
char *kiln_test_make_temp_dir(void);
/* `directory`/`name` in a buffer the caller frees with free(). */
char *kiln_test_path_join(const char *directory, const char *name);
/* Writes bytes to a file, failing the test on error. */
void kiln_test_write_file(const char *path, const void *data, size_t size);
/* Removes a directory and its files (one level deep). */
void kiln_test_remove_dir(const char *path);

/* The folder of the shared models, or NULL when it is not there. */
const char *kiln_test_shared_models_dir(void);

/* Exit code that ctest reports as "skipped" (SKIP_RETURN_CODE). */
#define KILN_TEST_SKIP_EXIT_CODE 77

/* Skips the running cmocka test, saying why, and remembers that something
 * was skipped, so that kiln_test_exit_code reports the program to ctest as
 * skipped (never as passed) when nothing failed. */
#define KILN_SKIP(reason)        \
  do {                           \
    kiln_test_note_skip(reason); \
    skip();                      \
  } while (0)
void kiln_test_note_skip(const char *reason);
/* main's return: the failures, else KILN_TEST_SKIP_EXIT_CODE when a test
 * was skipped (the reasons printed again), else 0. */
int kiln_test_exit_code(int failures);

#endif /* KILN_TESTS_SUPPORT_KILN_TEST_H_ */
