/*
 * Tests of the arena: alignment of every allocation, blocks of their own for
 * big requests, reset and deinitialize giving memory back, overflowing and bad
 * requests as statuses, the byte counters, the allocator adapter (in-place and
 * copying realloc, no-op free), and a sweep that fails each allocation of a
 * realistic fill in turn.
 */
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "kiln_test.h"

static long long live_blocks(kiln_counting_allocator_t *counting) {
  return (long long)kiln_counting_allocator_counts(counting).live_blocks;
}

static void test_initialize_takes_nothing(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 0);
  assert_int_equal(arena.block_size, KILN_ARENA_DEFAULT_BLOCK_SIZE);
  assert_int_equal(kiln_arena_bytes_used(&arena), 0);
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 0);
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 0);
  kiln_arena_reset(&arena);
  kiln_arena_deinitialize(&arena);
  kiln_arena_deinitialize(&arena);

  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 10);
  assert_int_equal(arena.block_size, KILN_ARENA_MIN_BLOCK_SIZE);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_first_allocation_takes_one_block(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  char *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 10, 1, (void **)&a));
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 20, 1, (void **)&b));
  assert_ptr_equal(b, a + 10); /* bump allocation, no padding at alignment 1 */
  assert_int_equal(live_blocks(&counting), 1);
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 1024);
  assert_int_equal(kiln_arena_bytes_used(&arena), 30);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 0);
}

/* Every allocation at every alignment 1..4096 is aligned, and none overlaps:
 * each is filled with its own byte and all are checked at the end. */
static void test_every_allocation_is_aligned(void **state) {
  (void)state;
  enum { kCount = 600 };
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 512);
  unsigned char *pieces[kCount];
  size_t sizes[kCount];
  size_t used = 0;
  for (size_t i = 0; i < kCount; ++i) {
    size_t alignment = (size_t)1 << (i % 13); /* 1 .. 4096 */
    sizes[i] = (i * 37) % 200;                /* includes 0 and sizes near a block */
    KILN_ASSERT_OK(kiln_arena_allocate(&arena, sizes[i], alignment, (void **)&pieces[i]));
    assert_non_null(pieces[i]);
    assert_int_equal((uintptr_t)pieces[i] % alignment, 0);
    memset(pieces[i], (int)(i & 0xff), sizes[i]);
    used += sizes[i];
  }
  for (size_t i = 0; i < kCount; ++i) {
    for (size_t k = 0; k < sizes[i]; ++k) {
      assert_int_equal(pieces[i][k], i & 0xff);
    }
  }
  assert_int_equal(kiln_arena_bytes_used(&arena), used);
  assert_true(kiln_arena_bytes_reserved(&arena) >= used);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_alignments_one_to_sixty_four_in_one_block(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  for (size_t alignment = 1; alignment <= 64; alignment *= 2) {
    for (size_t size = 1; size <= 9; ++size) {
      void *ptr = NULL;
      KILN_ASSERT_OK(kiln_arena_allocate(&arena, size, alignment, &ptr));
      assert_int_equal((uintptr_t)ptr % alignment, 0);
    }
  }
  assert_int_equal(kiln_arena_bytes_reserved(&arena), KILN_ARENA_DEFAULT_BLOCK_SIZE);
  kiln_arena_deinitialize(&arena);
}

static void test_zero_size_gives_distinct_pointers(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  void *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 0, 8, &a));
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 0, 8, &b));
  assert_non_null(a);
  assert_non_null(b);
  assert_ptr_not_equal(a, b);
  assert_int_equal(kiln_arena_bytes_used(&arena), 0);
  kiln_arena_deinitialize(&arena);
}

static void test_bad_alignment_is_an_error(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  size_t bad[] = {0, 3, 24, 100, KILN_ARENA_MAX_ALIGNMENT * 2};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    void *ptr = (void *)&arena;
    KILN_ASSERT_STATUS(kiln_arena_allocate(&arena, 8, bad[i], &ptr), INVALID_ARGUMENT,
                       "is not a power of two");
    assert_null(ptr);
  }
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 0);
  kiln_arena_deinitialize(&arena);
}

static void test_overflowing_sizes_fail_cleanly(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  int64_t statuses = kiln_status_live_count();
  void *ptr = (void *)&arena;
  KILN_ASSERT_STATUS(kiln_arena_allocate(&arena, SIZE_MAX, 1, &ptr), RESOURCE_EXHAUSTED,
                     "overflows size_t");
  assert_null(ptr);
  KILN_ASSERT_STATUS(kiln_arena_allocate(&arena, SIZE_MAX - 40, 64, &ptr), RESOURCE_EXHAUSTED,
                     "overflows size_t");
  KILN_ASSERT_STATUS(kiln_arena_allocate_zeroed(&arena, SIZE_MAX - 8, 16, &ptr), RESOURCE_EXHAUSTED,
                     "overflows size_t");
  KILN_ASSERT_STATUS(kiln_arena_allocate_array(&arena, SIZE_MAX / 2, 3, 8, &ptr),
                     RESOURCE_EXHAUSTED, "overflows size_t");
  assert_null(ptr);
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts,
                   0); /* caught before asking */
  assert_int_equal(kiln_status_live_count(), statuses);

  /* The arena is still fine. */
  KILN_ASSERT_OK(kiln_arena_allocate_array(&arena, 10, 8, 8, &ptr));
  assert_int_equal(kiln_arena_bytes_used(&arena), 80);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_block_allocation_failure_is_a_status(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  kiln_counting_allocator_fail_attempt(&counting, 0);
  void *ptr = (void *)&arena;
  KILN_ASSERT_STATUS(kiln_arena_allocate(&arena, 8, 8, &ptr), RESOURCE_EXHAUSTED,
                     "arena block: out of memory allocating 1024 bytes");
  assert_null(ptr);
  assert_int_equal(kiln_arena_bytes_used(&arena), 0);
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 0);
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 8, 8, &ptr));
  assert_int_equal(kiln_arena_bytes_used(&arena), 8);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_large_request_gets_its_own_block(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  char *small = NULL, *large = NULL, *after = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 100, 1, (void **)&small));
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 100000, 64, (void **)&large));
  assert_int_equal((uintptr_t)large % 64, 0);
  memset(large, 0x5a, 100000);
  assert_int_equal(live_blocks(&counting), 2);
  assert_true(kiln_arena_bytes_reserved(&arena) >= 1024 + 100000);
  assert_true(kiln_arena_bytes_reserved(&arena) <= 1024 + 100000 + 64 + 32);
  /* The current block stayed current: the next small piece follows the first. */
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 50, 1, (void **)&after));
  assert_ptr_equal(after, small + 100);
  assert_int_equal(live_blocks(&counting), 2);
  /* A big request that fits in the rest of the current block is served there. */
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 300, 1, (void **)&after));
  assert_ptr_equal(after, small + 150);
  assert_int_equal(live_blocks(&counting), 2);
  /* One that does not fit and is over a quarter of a block gets its own... */
  char *own = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 600, 1, (void **)&own));
  assert_int_equal(live_blocks(&counting), 3);
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 8, 1, (void **)&after));
  assert_ptr_equal(after, small + 450);
  /* ...while a small one that does not fit starts a new current block. */
  char *next = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 250, 1, (void **)&after));
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 250, 1, (void **)&next));
  assert_int_equal(live_blocks(&counting), 3);
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 250, 1, (void **)&after));
  assert_int_equal(live_blocks(&counting), 4);
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 250, 1, (void **)&next));
  assert_ptr_equal(next, after + 250);
  assert_int_equal(kiln_arena_bytes_used(&arena), 100 + 100000 + 50 + 300 + 600 + 8 + 4 * 250);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_allocate_zeroed(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 1024);
  unsigned char *dirty = NULL, *clean = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 64, 16, (void **)&dirty));
  memset(dirty, 0xff, 64);
  kiln_arena_reset(&arena);
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(&arena, 64, 16, (void **)&clean));
  assert_ptr_equal(clean, dirty); /* reset reuses the block from its start */
  for (size_t i = 0; i < 64; ++i) {
    assert_int_equal(clean[i], 0);
  }
  kiln_arena_deinitialize(&arena);
}

static void test_strdup(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  char name[] = "conv2d";
  char *copy = NULL, *empty = NULL;
  KILN_ASSERT_OK(kiln_arena_strdup(&arena, name, &copy));
  name[0] = 'X';
  assert_string_equal(copy, "conv2d");
  KILN_ASSERT_OK(kiln_arena_strdup(&arena, "", &empty));
  assert_string_equal(empty, "");
  assert_ptr_not_equal(copy, empty);
  assert_int_equal(kiln_arena_bytes_used(&arena), 8);
  kiln_arena_deinitialize(&arena);
}

static void test_reset_keeps_the_current_block(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  void *ptr;
  for (int i = 0; i < 40; ++i) {
    KILN_ASSERT_OK(kiln_arena_allocate(&arena, 100, 8, &ptr));
  }
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 5000, 8, &ptr));
  assert_true(live_blocks(&counting) >= 5);
  kiln_arena_reset(&arena);
  assert_int_equal(live_blocks(&counting), 1);
  assert_int_equal(kiln_arena_bytes_used(&arena), 0);
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 1024);

  /* The kept block serves the next allocations without asking again. */
  long long allocations = (long long)kiln_counting_allocator_counts(&counting).allocations;
  for (int i = 0; i < 9; ++i) {
    KILN_ASSERT_OK(kiln_arena_allocate(&arena, 100, 8, &ptr));
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).allocations, allocations);
  assert_int_equal(kiln_arena_bytes_used(&arena), 900);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_reset_with_only_a_large_block_frees_it(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  void *ptr;
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 5000, 8, &ptr));
  kiln_arena_reset(&arena);
  assert_int_equal(live_blocks(&counting), 0);
  assert_int_equal(kiln_arena_bytes_reserved(&arena), 0);
  KILN_ASSERT_OK(kiln_arena_allocate(&arena, 10, 8, &ptr));
  assert_int_equal(live_blocks(&counting), 1);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_adapter_allocates_aligned_and_free_is_a_no_op(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 4096);
  kiln_allocator_t allocator = kiln_arena_allocator(&arena);
  void *a = NULL, *b = NULL;
  KILN_ASSERT_OK(kiln_allocator_malloc(allocator, 100, &a));
  assert_int_equal((uintptr_t)a % KILN_DEFAULT_ALIGNMENT, 0);
  KILN_ASSERT_OK(kiln_allocator_malloc_aligned(allocator, 100, 64, &b));
  assert_int_equal((uintptr_t)b % 64, 0);
  memset(a, 1, 100);
  memset(b, 2, 100);
  size_t used = kiln_arena_bytes_used(&arena);
  kiln_allocator_free(allocator, a);
  assert_int_equal(kiln_arena_bytes_used(&arena), used);
  assert_int_equal(((unsigned char *)a)[99], 1); /* still arena memory */
  assert_int_equal(live_blocks(&counting), 1);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_adapter_realloc(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 4096);
  kiln_allocator_t allocator = kiln_arena_allocator(&arena);

  /* From NULL, as kiln_allocator_realloc does. */
  void *last = NULL;
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 40, &last));
  memset(last, 3, 40);
  /* The latest allocation grows in place. */
  void *before = last;
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 400, &last));
  assert_ptr_equal(last, before);
  assert_int_equal(((unsigned char *)last)[39], 3);
  /* Shrinking keeps the block. */
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 10, &last));
  assert_ptr_equal(last, before);

  /* A block that is no longer the latest is copied. */
  void *other = NULL;
  KILN_ASSERT_OK(kiln_allocator_malloc(allocator, 16, &other));
  memset(last, 4, 400);
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 800, &last));
  assert_ptr_not_equal(last, before);
  for (size_t i = 0; i < 400; ++i) {
    assert_int_equal(((unsigned char *)last)[i], 4);
  }
  /* The copy is the latest allocation now, so it grows in place again. */
  before = last;
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 1000, &last));
  assert_ptr_equal(last, before);
  /* Growing past the current block copies into a block of its own. */
  KILN_ASSERT_OK(kiln_allocator_realloc(allocator, 20000, &last));
  assert_ptr_not_equal(last, before);
  assert_int_equal(((unsigned char *)last)[399], 4);
  kiln_arena_deinitialize(&arena);
}

static void test_adapter_failures_are_statuses(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 1024);
  kiln_allocator_t allocator = kiln_arena_allocator(&arena);
  int64_t statuses = kiln_status_live_count();
  void *ptr = NULL;
  KILN_ASSERT_STATUS(kiln_allocator_malloc(allocator, SIZE_MAX - 4, &ptr), RESOURCE_EXHAUSTED,
                     "out of memory allocating");
  assert_null(ptr);
  kiln_counting_allocator_fail_attempt(&counting, 0);
  KILN_ASSERT_STATUS(kiln_allocator_malloc(allocator, 8, &ptr), RESOURCE_EXHAUSTED,
                     "out of memory allocating 8 bytes");
  KILN_ASSERT_OK(kiln_allocator_malloc(allocator, 8, &ptr));
  kiln_counting_allocator_fail_attempt(&counting, 0);
  void *grown = ptr;
  KILN_ASSERT_STATUS(kiln_allocator_realloc(allocator, 5000, &grown), RESOURCE_EXHAUSTED,
                     "5000 bytes");
  assert_ptr_equal(grown, ptr);
  assert_int_equal(kiln_status_live_count(), statuses);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

/* Many small allocations of mixed alignment, a large one, strings and an
 * adapter-grown buffer, all checked; every allocation failure must come back
 * as a status. */
static kiln_status_t fill_arena(kiln_arena_t *arena) {
  enum { kCount = 300 };
  uint32_t *pieces[kCount];
  for (size_t i = 0; i < kCount; ++i) {
    size_t alignment = (size_t)4 << (i % 5); /* 4 .. 64 */
    KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, i % 17 + 1, sizeof(uint32_t), alignment,
                                                   (void **)&pieces[i]));
    assert_int_equal((uintptr_t)pieces[i] % alignment, 0);
    for (size_t k = 0; k < i % 17 + 1; ++k) {
      pieces[i][k] = (uint32_t)(i * 1000 + k);
    }
  }
  unsigned char *large;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(arena, 50000, 64, (void **)&large));
  char *name;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, "resnet50/layer4/conv3", &name));
  kiln_allocator_t allocator = kiln_arena_allocator(arena);
  void *buffer = NULL;
  for (size_t size = 16; size <= 4096; size *= 2) {
    KILN_RETURN_IF_ERROR(kiln_allocator_realloc(allocator, size, &buffer));
    memset((char *)buffer + size / 2, (int)(size & 0x7f), size / 2);
  }
  for (size_t i = 0; i < kCount; ++i) {
    for (size_t k = 0; k < i % 17 + 1; ++k) {
      assert_int_equal(pieces[i][k], i * 1000 + k);
    }
  }
  assert_int_equal(large[0], 0);
  assert_int_equal(large[49999], 0);
  assert_string_equal(name, "resnet50/layer4/conv3");
  assert_int_equal(((unsigned char *)buffer)[8], 16);
  assert_int_equal(((unsigned char *)buffer)[4095], 4096 & 0x7f);
  return KILN_OK;
}

static kiln_status_t arena_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 2048);
  kiln_status_t status = fill_arena(&arena);
  if (status == KILN_OK) {
    kiln_arena_reset(&arena);
    status = fill_arena(&arena);
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

static void test_every_allocation_failure_is_reported(void **state) {
  (void)state;
  int64_t attempts = kiln_test_sweep_allocation_failures(arena_scenario, NULL);
  assert_true(attempts > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_initialize_takes_nothing),
      cmocka_unit_test(test_first_allocation_takes_one_block),
      cmocka_unit_test(test_every_allocation_is_aligned),
      cmocka_unit_test(test_alignments_one_to_sixty_four_in_one_block),
      cmocka_unit_test(test_zero_size_gives_distinct_pointers),
      cmocka_unit_test(test_bad_alignment_is_an_error),
      cmocka_unit_test(test_overflowing_sizes_fail_cleanly),
      cmocka_unit_test(test_block_allocation_failure_is_a_status),
      cmocka_unit_test(test_large_request_gets_its_own_block),
      cmocka_unit_test(test_allocate_zeroed),
      cmocka_unit_test(test_strdup),
      cmocka_unit_test(test_reset_keeps_the_current_block),
      cmocka_unit_test(test_reset_with_only_a_large_block_frees_it),
      cmocka_unit_test(test_adapter_allocates_aligned_and_free_is_a_no_op),
      cmocka_unit_test(test_adapter_realloc),
      cmocka_unit_test(test_adapter_failures_are_statuses),
      cmocka_unit_test(test_every_allocation_failure_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
