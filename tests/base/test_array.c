/*
 * Tests of the growable array: the empty array, one element, growth across
 * many doublings, push_n, insert and remove at every position, pop, clear and
 * reserve keeping capacity, overflowing sizes, a failed growth leaving the
 * array unchanged, an array living in an arena, KILN_ARRAY_AT, and a sweep
 * that fails each allocation of a realistic build in turn.
 */
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "kiln_test.h"

static long long live_blocks(kiln_counting_allocator_t *counting) {
  return (long long)kiln_counting_allocator_counts(counting).live_blocks;
}

static int int_at(const kiln_array_t *array, size_t index) {
  return *(const int *)kiln_array_at(array, index);
}

/* Pushes 0, 1, ..., n-1. */
static void push_range(kiln_array_t *array, int n) {
  for (int i = 0; i < n; ++i) {
    KILN_ASSERT_OK(kiln_array_push(array, &i));
  }
}

static void test_empty_array(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_counting_allocator_get(&counting), sizeof(int));
  assert_int_equal(kiln_array_count(&array), 0);
  assert_int_equal(kiln_array_capacity(&array), 0);
  assert_null(kiln_array_data(&array));
  int out = 42;
  assert_false(kiln_array_pop(&array, &out));
  assert_int_equal(out, 42);
  KILN_ASSERT_OK(kiln_array_push_n(&array, NULL, 0));
  kiln_array_clear(&array);
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 0);
  kiln_array_deinitialize(&array);
  kiln_array_deinitialize(&array);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_one_element(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_counting_allocator_get(&counting), sizeof(int));
  int seven = 7;
  KILN_ASSERT_OK(kiln_array_push(&array, &seven));
  assert_int_equal(kiln_array_count(&array), 1);
  assert_int_equal(kiln_array_capacity(&array), 8);
  assert_int_equal(int_at(&array, 0), 7);
  assert_ptr_equal(kiln_array_data(&array), kiln_array_at(&array, 0));
  assert_int_equal(live_blocks(&counting), 1);
  int out = 0;
  assert_true(kiln_array_pop(&array, &out));
  assert_int_equal(out, 7);
  assert_int_equal(kiln_array_count(&array), 0);
  assert_false(kiln_array_pop(&array, NULL));
  kiln_array_deinitialize(&array);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_growth_doubles(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_counting_allocator_get(&counting), sizeof(int));
  size_t capacities[16];
  size_t changes = 0;
  size_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    KILN_ASSERT_OK(kiln_array_push(&array, &i));
    if (kiln_array_capacity(&array) != last) {
      last = kiln_array_capacity(&array);
      assert_true(changes < 16);
      capacities[changes++] = last;
    }
  }
  /* 8, 16, 32, ..., 1024: eight growths, each doubling. */
  assert_int_equal(changes, 8);
  for (size_t i = 0; i < changes; ++i) {
    assert_int_equal(capacities[i], (size_t)8 << i);
  }
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 8);
  assert_int_equal(kiln_array_count(&array), 1000);
  const int *data = kiln_array_data(&array);
  for (int i = 0; i < 1000; ++i) {
    assert_int_equal(data[i], i);
  }
  kiln_array_deinitialize(&array);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_push_n(void **state) {
  (void)state;
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_allocator_system(), sizeof(int));
  int five[] = {10, 11, 12, 13, 14};
  KILN_ASSERT_OK(kiln_array_push_n(&array, five, 5));
  assert_int_equal(kiln_array_capacity(&array), 8);
  int hundred[100];
  for (int i = 0; i < 100; ++i) {
    hundred[i] = 100 + i;
  }
  /* Doubling (16) is not enough for 105, so exactly 105 is taken. */
  KILN_ASSERT_OK(kiln_array_push_n(&array, hundred, 100));
  assert_int_equal(kiln_array_count(&array), 105);
  assert_int_equal(kiln_array_capacity(&array), 105);
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(int_at(&array, (size_t)i), 10 + i);
  }
  for (int i = 0; i < 100; ++i) {
    assert_int_equal(int_at(&array, (size_t)i + 5), 100 + i);
  }
  KILN_ASSERT_OK(kiln_array_push_n(&array, five, 1));
  assert_int_equal(kiln_array_capacity(&array), 210);
  assert_int_equal(int_at(&array, 105), 10);
  kiln_array_deinitialize(&array);
}

static void test_insert_at_every_position(void **state) {
  (void)state;
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_allocator_system(), sizeof(int));
  int value = 1;
  KILN_ASSERT_OK(kiln_array_insert(&array, 0, &value)); /* into the empty array */
  value = 3;
  KILN_ASSERT_OK(kiln_array_insert(&array, 1, &value)); /* at the end */
  value = 0;
  KILN_ASSERT_OK(kiln_array_insert(&array, 0, &value)); /* at the front */
  value = 2;
  KILN_ASSERT_OK(kiln_array_insert(&array, 2, &value)); /* in the middle */
  assert_int_equal(kiln_array_count(&array), 4);
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(int_at(&array, (size_t)i), i);
  }
  value = 99;
  KILN_ASSERT_STATUS(kiln_array_insert(&array, 5, &value), OUT_OF_RANGE,
                     "array insert at 5 is past the end (count 4)");
  assert_int_equal(kiln_array_count(&array), 4);
  /* Inserting at the front across growth keeps order. */
  for (int i = -1; i >= -20; --i) {
    KILN_ASSERT_OK(kiln_array_insert(&array, 0, &i));
  }
  assert_int_equal(kiln_array_count(&array), 24);
  for (int i = 0; i < 24; ++i) {
    assert_int_equal(int_at(&array, (size_t)i), i - 20);
  }
  kiln_array_deinitialize(&array);
}

static void test_remove_at_every_position(void **state) {
  (void)state;
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_allocator_system(), sizeof(int));
  push_range(&array, 10);
  int out = -1;
  kiln_array_remove(&array, 0, &out); /* front */
  assert_int_equal(out, 0);
  kiln_array_remove(&array, 8, &out); /* back: 9 */
  assert_int_equal(out, 9);
  kiln_array_remove(&array, 3, NULL); /* middle: 4 */
  int expected[] = {1, 2, 3, 5, 6, 7, 8};
  assert_int_equal(kiln_array_count(&array), 7);
  assert_memory_equal(kiln_array_data(&array), expected, sizeof(expected));
  while (kiln_array_count(&array) > 0) {
    kiln_array_remove(&array, 0, &out);
  }
  assert_int_equal(out, 8);
  assert_int_equal(kiln_array_capacity(&array), 16);
  kiln_array_deinitialize(&array);
}

static void test_pop_returns_in_reverse(void **state) {
  (void)state;
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_allocator_system(), sizeof(int));
  push_range(&array, 50);
  int out;
  for (int i = 49; i >= 0; --i) {
    assert_true(kiln_array_pop(&array, &out));
    assert_int_equal(out, i);
  }
  assert_false(kiln_array_pop(&array, &out));
  kiln_array_deinitialize(&array);
}

static void test_clear_keeps_capacity(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_counting_allocator_get(&counting), sizeof(int));
  push_range(&array, 20);
  void *data = kiln_array_data(&array);
  kiln_array_clear(&array);
  assert_int_equal(kiln_array_count(&array), 0);
  assert_int_equal(kiln_array_capacity(&array), 32);
  long long attempts = (long long)kiln_counting_allocator_counts(&counting).attempts;
  push_range(&array, 32);
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, attempts);
  assert_ptr_equal(kiln_array_data(&array), data);
  assert_int_equal(int_at(&array, 31), 31);
  kiln_array_deinitialize(&array);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_reserve(void **state) {
  (void)state;
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_allocator_system(), sizeof(double));
  KILN_ASSERT_OK(kiln_array_reserve(&array, 100));
  assert_int_equal(kiln_array_capacity(&array), 100);
  void *data = kiln_array_data(&array);
  for (int i = 0; i < 100; ++i) {
    double value = i * 0.5;
    KILN_ASSERT_OK(kiln_array_push(&array, &value));
  }
  assert_ptr_equal(kiln_array_data(&array), data);
  KILN_ASSERT_OK(kiln_array_reserve(&array, 10)); /* smaller: nothing happens */
  assert_int_equal(kiln_array_capacity(&array), 100);
  assert_true(*(double *)kiln_array_at(&array, 99) == 49.5);
  /* The next push doubles. */
  double value = -1.0;
  KILN_ASSERT_OK(kiln_array_push(&array, &value));
  assert_int_equal(kiln_array_capacity(&array), 200);
  kiln_array_deinitialize(&array);
}

typedef struct wide_t {
  char bytes[4096];
} wide_t;

static void test_overflowing_sizes_fail_cleanly(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_counting_allocator_get(&counting), sizeof(wide_t));
  KILN_ASSERT_STATUS(kiln_array_reserve(&array, SIZE_MAX / 1024), RESOURCE_EXHAUSTED,
                     "overflows size_t");
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 0);
  static wide_t element;
  element.bytes[4095] = 9;
  KILN_ASSERT_OK(kiln_array_push(&array, &element));
  KILN_ASSERT_STATUS(kiln_array_push_n(&array, &element, SIZE_MAX), RESOURCE_EXHAUSTED,
                     "cannot grow by");
  KILN_ASSERT_STATUS(kiln_array_push_n(&array, &element, SIZE_MAX / 4096), RESOURCE_EXHAUSTED,
                     "overflows size_t");
  assert_int_equal(kiln_array_count(&array), 1);
  assert_int_equal(kiln_array_capacity(&array), 8);
  assert_int_equal(KILN_ARRAY_AT(&array, wide_t, 0).bytes[4095], 9);
  kiln_array_deinitialize(&array);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_failed_growth_leaves_the_array_unchanged(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_counting_allocator_get(&counting), sizeof(int));
  push_range(&array, 8);
  void *data = kiln_array_data(&array);
  kiln_counting_allocator_fail_attempt(&counting, 0);
  int value = 8;
  KILN_ASSERT_STATUS(kiln_array_push(&array, &value), RESOURCE_EXHAUSTED, "out of memory");
  kiln_counting_allocator_fail_attempt(&counting, 0);
  KILN_ASSERT_STATUS(kiln_array_insert(&array, 0, &value), RESOURCE_EXHAUSTED, "out of memory");
  assert_int_equal(kiln_array_count(&array), 8);
  assert_int_equal(kiln_array_capacity(&array), 8);
  assert_ptr_equal(kiln_array_data(&array), data);
  for (int i = 0; i < 8; ++i) {
    assert_int_equal(int_at(&array, (size_t)i), i);
  }
  KILN_ASSERT_OK(kiln_array_push(&array, &value));
  assert_int_equal(int_at(&array, 8), 8);
  kiln_array_deinitialize(&array);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_typed_access_macro(void **state) {
  (void)state;
  kiln_array_t array;
  kiln_array_initialize(&array, kiln_allocator_system(), sizeof(int64_t));
  for (int64_t i = 0; i < 5; ++i) {
    KILN_ASSERT_OK(kiln_array_push(&array, &i));
  }
  KILN_ARRAY_AT(&array, int64_t, 3) = INT64_C(1) << 40;
  KILN_ARRAY_AT(&array, int64_t, 4) += 10;
  assert_int_equal(KILN_ARRAY_AT(&array, int64_t, 3), INT64_C(1) << 40);
  assert_int_equal(KILN_ARRAY_AT(&array, int64_t, 4), 14);
  assert_int_equal(((int64_t *)kiln_array_data(&array))[3], INT64_C(1) << 40);
  kiln_array_deinitialize(&array);
}

/* Two arrays growing in turn inside an arena: their blocks leapfrog, so the
 * adapter's realloc both grows in place and copies. */
static void test_arrays_in_an_arena(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_counting_allocator_get(&counting), 4096);
  kiln_array_t a, b;
  kiln_array_initialize(&a, kiln_arena_allocator(&arena), sizeof(int));
  kiln_array_initialize(&b, kiln_arena_allocator(&arena), sizeof(int));
  for (int i = 0; i < 5000; ++i) {
    KILN_ASSERT_OK(kiln_array_push(&a, &i));
    int negative = -i;
    KILN_ASSERT_OK(kiln_array_push(&b, &negative));
  }
  for (int i = 0; i < 5000; ++i) {
    assert_int_equal(int_at(&a, (size_t)i), i);
    assert_int_equal(int_at(&b, (size_t)i), -i);
  }
  kiln_array_deinitialize(&a); /* a no-op free */
  kiln_array_deinitialize(&b);
  assert_true(live_blocks(&counting) > 0);
  kiln_arena_deinitialize(&arena);
  assert_int_equal(live_blocks(&counting), 0);
}

typedef struct edge_t {
  int32_t from, to;
  double weight;
} edge_t;

static kiln_status_t build_edges(kiln_array_t *edges) {
  for (int32_t i = 0; i < 1000; ++i) {
    edge_t edge = {i, i + 1, i * 0.25};
    KILN_RETURN_IF_ERROR(kiln_array_push(edges, &edge));
  }
  edge_t batch[64];
  for (int32_t i = 0; i < 64; ++i) {
    batch[i] = (edge_t){-i, -i - 1, -1.0};
  }
  KILN_RETURN_IF_ERROR(kiln_array_push_n(edges, batch, 64));
  edge_t first = {-1000, -1000, 0.0};
  KILN_RETURN_IF_ERROR(kiln_array_insert(edges, 0, &first));
  KILN_RETURN_IF_ERROR(kiln_array_reserve(edges, 5000));
  kiln_array_remove(edges, 500, NULL);

  assert_int_equal(kiln_array_count(edges), 1064);
  assert_int_equal(KILN_ARRAY_AT(edges, edge_t, 0).from, -1000);
  assert_int_equal(KILN_ARRAY_AT(edges, edge_t, 1).to, 1);
  assert_int_equal(KILN_ARRAY_AT(edges, edge_t, 500).from, 500); /* 499 was removed */
  assert_true(KILN_ARRAY_AT(edges, edge_t, 999).weight == 999 * 0.25);
  assert_int_equal(KILN_ARRAY_AT(edges, edge_t, 1063).to, -64);
  return KILN_OK;
}

static kiln_status_t array_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_array_t edges;
  kiln_array_initialize(&edges, allocator, sizeof(edge_t));
  kiln_status_t status = build_edges(&edges);
  kiln_array_deinitialize(&edges);
  return status;
}

static void test_every_allocation_failure_is_reported(void **state) {
  (void)state;
  /* 8, 16, ..., 1024, 2048 by doubling, then the reserve of 5000. */
  assert_int_equal(kiln_test_sweep_allocation_failures(array_scenario, NULL), 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_array),
      cmocka_unit_test(test_one_element),
      cmocka_unit_test(test_growth_doubles),
      cmocka_unit_test(test_push_n),
      cmocka_unit_test(test_insert_at_every_position),
      cmocka_unit_test(test_remove_at_every_position),
      cmocka_unit_test(test_pop_returns_in_reverse),
      cmocka_unit_test(test_clear_keeps_capacity),
      cmocka_unit_test(test_reserve),
      cmocka_unit_test(test_overflowing_sizes_fail_cleanly),
      cmocka_unit_test(test_failed_growth_leaves_the_array_unchanged),
      cmocka_unit_test(test_typed_access_macro),
      cmocka_unit_test(test_arrays_in_an_arena),
      cmocka_unit_test(test_every_allocation_failure_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
