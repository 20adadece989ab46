/*
 * Tests of the allocator interface: the system allocator's alignment, the
 * status-returning wrappers (including size overflow), and the counting
 * allocator's accounting and failure injection, also from several threads
 * at once (run under ThreadSanitizer by `make test-tsan`).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "kiln_test.h"

static void test_system_alignment(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  for (size_t alignment = 1; alignment <= 4096; alignment *= 2) {
    void *ptr = NULL;
    KILN_ASSERT_OK(kiln_allocator_malloc_aligned(system, 100, alignment, &ptr));
    assert_int_equal((uintptr_t)ptr % alignment, 0);
    memset(ptr, 1, 100);
    kiln_allocator_free(system, ptr);
  }
  void *zero = NULL;
  KILN_ASSERT_OK(kiln_allocator_malloc(system, 0, &zero));
  assert_non_null(zero);
  kiln_allocator_free(system, zero);
  kiln_allocator_free(system, NULL);
}

/* A block of 2 MiB or more starts on a 2 MiB boundary (where a huge page can
 * back it), can be written whole, grown, and freed. */
static void test_system_large_blocks_on_huge_page_boundaries(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  size_t sizes[] = {(size_t)2 << 20, ((size_t)5 << 20) + 3};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    void *ptr = NULL;
    KILN_ASSERT_OK(kiln_allocator_malloc_aligned(system, sizes[i], 64, &ptr));
    assert_int_equal((uintptr_t)ptr % ((size_t)2 << 20), 0);
    memset(ptr, 7, sizes[i]);
    KILN_ASSERT_OK(kiln_allocator_realloc(system, sizes[i] * 2, &ptr));
    assert_int_equal(((unsigned char *)ptr)[sizes[i] - 1], 7);
    kiln_allocator_free(system, ptr);
  }
}

static void test_bad_alignment_is_an_error(void **state) {
  (void)state;
  void *ptr = (void *)1;
  KILN_ASSERT_STATUS(kiln_allocator_malloc_aligned(kiln_allocator_system(), 8, 24, &ptr),
                     INVALID_ARGUMENT, "alignment 24 is not a power of two");
  assert_null(ptr);
}

static void test_array_overflow(void **state) {
  (void)state;
  void *ptr = (void *)1;
  KILN_ASSERT_STATUS(kiln_allocator_malloc_array(kiln_allocator_system(), SIZE_MAX / 2, 3, &ptr),
                     RESOURCE_EXHAUSTED, "overflows");
  assert_null(ptr);
  size_t out = 7;
  assert_false(kiln_size_mul(SIZE_MAX, 2, &out));
  assert_false(kiln_size_add(SIZE_MAX, 1, &out));
  assert_int_equal(out, 7);
  assert_true(kiln_size_mul(6, 7, &out));
  assert_int_equal(out, 42);
}

static void test_huge_request_fails_cleanly(void **state) {
  (void)state;
  void *ptr = NULL;
  KILN_ASSERT_STATUS(kiln_allocator_malloc(kiln_allocator_system(), SIZE_MAX - 64, &ptr),
                     RESOURCE_EXHAUSTED, "out of memory allocating");
}

static void test_counting_accounts_blocks_and_bytes(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_allocator_t allocator = kiln_counting_allocator_get(&counting);

  void *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_allocator_malloc(allocator, 100, &a));
  KILN_ASSERT_OK(kiln_allocator_malloc_aligned(allocator, 1000, 64, &b));
  assert_int_equal((uintptr_t)b % 64, 0);
  assert_int_equal((uintptr_t)a % KILN_DEFAULT_ALIGNMENT, 0);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 2);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_bytes, 1100);

  memset(a, 7, 100);
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 300, &a));
  assert_int_equal(((unsigned char *)a)[99], 7);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_bytes, 1300);
  assert_int_equal(kiln_counting_allocator_counts(&counting).peak_bytes, 1300);

  kiln_allocator_free(allocator, b);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_bytes, 300);
  kiln_allocator_free(allocator, a);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_bytes, 0);
  assert_int_equal(kiln_counting_allocator_counts(&counting).allocations, 2);
  assert_int_equal(kiln_counting_allocator_counts(&counting).frees, 2);
  assert_int_equal(kiln_counting_allocator_counts(&counting).peak_bytes, 1300);
}

static void test_counting_injects_exactly_one_failure(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_allocator_t allocator = kiln_counting_allocator_get(&counting);
  kiln_counting_allocator_fail_attempt(&counting, 1);

  void *a = NULL, *b = NULL, *c = NULL;
  KILN_ASSERT_OK(kiln_allocator_malloc(allocator, 8, &a));
  KILN_ASSERT_STATUS(kiln_allocator_malloc(allocator, 8, &b), RESOURCE_EXHAUSTED, "8 bytes");
  assert_null(b);
  KILN_ASSERT_OK(kiln_allocator_malloc(allocator, 8, &c));
  assert_int_equal(kiln_counting_allocator_counts(&counting).injected_failures, 1);

  /* A failed realloc leaves the block as it was. */
  kiln_counting_allocator_fail_attempt(&counting, 0);
  void *before = a;
  KILN_ASSERT_STATUS(kiln_allocator_realloc(allocator, 64, &a), RESOURCE_EXHAUSTED, "64 bytes");
  assert_ptr_equal(a, before);
  kiln_allocator_free(allocator, a);
  kiln_allocator_free(allocator, c);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

enum { kThreads = 4, kRounds = 2000 };

/* Allocates, resizes and frees blocks in rounds through a shared counting
 * allocator, keeping the last few alive until the end. */
static void *counting_worker(void *arg) {
  kiln_allocator_t allocator = kiln_counting_allocator_get(arg);
  void *kept[8] = {0};
  for (int round = 0; round < kRounds; round++) {
    void *block = NULL;
    if (kiln_allocator_malloc(allocator, 16 + (size_t)round % 64, &block) != KILN_OK)
      return arg;
    if (kiln_allocator_realloc(allocator, 32 + (size_t)round % 64, &block) != KILN_OK)
      return arg;
    kiln_allocator_free(allocator, kept[round % 8]);
    kept[round % 8] = block;
  }
  for (int i = 0; i < 8; i++)
    kiln_allocator_free(allocator, kept[i]);
  return NULL;
}

static void test_counting_from_several_threads(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; i++)
    assert_int_equal(pthread_create(&threads[i], NULL, counting_worker, &counting), 0);
  for (int i = 0; i < kThreads; i++) {
    void *result = &counting;
    assert_int_equal(pthread_join(threads[i], &result), 0);
    assert_null(result);
  }
  kiln_allocation_counts_t counts = kiln_counting_allocator_counts(&counting);
  assert_int_equal(counts.allocations, kThreads * kRounds);
  assert_int_equal(counts.frees, kThreads * kRounds);
  assert_int_equal(counts.attempts, 2 * kThreads * kRounds);
  assert_int_equal(counts.live_blocks, 0);
  assert_int_equal(counts.live_bytes, 0);
  assert_true(counts.peak_bytes >= 8 * 32 && counts.peak_bytes <= kThreads * 9 * 96);
  assert_int_equal(counts.injected_failures, 0);
}

static void test_strdup(void **state) {
  (void)state;
  char *copy = NULL;
  KILN_ASSERT_OK(kiln_allocator_strdup(kiln_allocator_system(), "conv2d", &copy));
  assert_string_equal(copy, "conv2d");
  kiln_allocator_free(kiln_allocator_system(), copy);
}

typedef struct two_blocks_t {
  size_t first, second;
} two_blocks_t;

/* A scenario with two allocations and correct cleanup, for the sweep. */
static kiln_status_t two_block_scenario(kiln_allocator_t allocator, void *context) {
  two_blocks_t *sizes = context;
  void *first = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, sizes->first, &first));
  void *second = NULL;
  kiln_status_t status = kiln_allocator_malloc(allocator, sizes->second, &second);
  kiln_allocator_free(allocator, second);
  kiln_allocator_free(allocator, first);
  return status;
}

static void test_sweep_counts_attempts(void **state) {
  (void)state;
  two_blocks_t sizes = {16, 32};
  assert_int_equal(kiln_test_sweep_allocation_failures(two_block_scenario, &sizes), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_system_alignment),
      cmocka_unit_test(test_system_large_blocks_on_huge_page_boundaries),
      cmocka_unit_test(test_bad_alignment_is_an_error),
      cmocka_unit_test(test_array_overflow),
      cmocka_unit_test(test_huge_request_fails_cleanly),
      cmocka_unit_test(test_counting_accounts_blocks_and_bytes),
      cmocka_unit_test(test_counting_injects_exactly_one_failure),
      cmocka_unit_test(test_counting_from_several_threads),
      cmocka_unit_test(test_strdup),
      cmocka_unit_test(test_sweep_counts_attempts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
