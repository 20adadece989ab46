/*
 * Tests of the hash map: the empty map, one entry, string keys copied and
 * freed, replacing a value, thousands of keys across many doublings, removal
 * from the middle of constructed probe chains (including one that wraps
 * around the table) with every remaining key checked, re-insertion after
 * removal, iteration, clear, the hash functions' spread, a failed growth
 * leaving the map unchanged, and a sweep that fails each allocation of a
 * 1000-entry build in turn.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/hashmap.h"
#include "kiln_test.h"

static long long live_blocks(kiln_counting_allocator_t *counting) {
  return (long long)kiln_counting_allocator_counts(counting).live_blocks;
}

static void *value_of(intptr_t i) {
  return (void *)(i + 1); /* never NULL, so a found NULL would show */
}

static void key_name(char *buffer, size_t size, const char *prefix, int i) {
  snprintf(buffer, size, "%s%d", prefix, i);
}

static void test_empty_map(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_STRING);
  assert_int_equal(kiln_hashmap_count(&map), 0);
  void *value = (void *)&map;
  assert_false(kiln_hashmap_get(&map, "x", &value));
  assert_ptr_equal(value, &map); /* untouched */
  assert_false(kiln_hashmap_contains(&map, "x"));
  assert_false(kiln_hashmap_remove(&map, "x", &value));
  assert_false(kiln_hashmap_get(&map, NULL, &value));
  kiln_hashmap_iterator_t iterator;
  kiln_hashmap_iterator_initialize(&iterator, &map);
  assert_false(kiln_hashmap_iterator_next(&iterator, NULL, NULL));
  kiln_hashmap_clear(&map);
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts, 0);
  kiln_hashmap_deinitialize(&map);
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_null_key_is_an_error(void **state) {
  (void)state;
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  KILN_ASSERT_STATUS(kiln_hashmap_put(&map, NULL, value_of(0)), INVALID_ARGUMENT,
                     "hash map key is NULL");
  assert_int_equal(kiln_hashmap_count(&map), 0);
  assert_false(kiln_hashmap_remove(&map, NULL, NULL));
  kiln_hashmap_deinitialize(&map);
}

static void test_one_entry(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_STRING);
  int relu = 0;
  KILN_ASSERT_OK(kiln_hashmap_put(&map, "relu", &relu));
  assert_int_equal(kiln_hashmap_count(&map), 1);
  assert_int_equal(live_blocks(&counting), 2); /* the table and the key's copy */
  void *value = NULL;
  assert_true(kiln_hashmap_get(&map, "relu", &value));
  assert_ptr_equal(value, &relu);
  assert_true(kiln_hashmap_get(&map, "relu", NULL));
  assert_true(kiln_hashmap_contains(&map, "relu"));
  assert_false(kiln_hashmap_contains(&map, "rel"));
  assert_false(kiln_hashmap_contains(&map, "relu6"));
  assert_false(kiln_hashmap_contains(&map, ""));

  value = NULL;
  assert_true(kiln_hashmap_remove(&map, "relu", &value));
  assert_ptr_equal(value, &relu);
  assert_int_equal(kiln_hashmap_count(&map), 0);
  assert_false(kiln_hashmap_contains(&map, "relu"));
  assert_false(kiln_hashmap_remove(&map, "relu", NULL));
  assert_int_equal(live_blocks(&counting), 1); /* the key's copy was freed */
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_empty_string_is_a_key(void **state) {
  (void)state;
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_allocator_system(), KILN_HASHMAP_KEY_STRING);
  KILN_ASSERT_OK(kiln_hashmap_put(&map, "", value_of(5)));
  void *value = NULL;
  assert_true(kiln_hashmap_get(&map, "", &value));
  assert_ptr_equal(value, value_of(5));
  kiln_hashmap_deinitialize(&map);
}

static void test_string_keys_are_copied(void **state) {
  (void)state;
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_allocator_system(), KILN_HASHMAP_KEY_STRING);
  char buffer[16] = "conv";
  KILN_ASSERT_OK(kiln_hashmap_put(&map, buffer, value_of(1)));
  strcpy(buffer, "gemm");
  KILN_ASSERT_OK(kiln_hashmap_put(&map, buffer, value_of(2)));
  strcpy(buffer, "xxxx");
  void *value = NULL;
  assert_true(kiln_hashmap_get(&map, "conv", &value));
  assert_ptr_equal(value, value_of(1));
  assert_true(kiln_hashmap_get(&map, "gemm", &value));
  assert_ptr_equal(value, value_of(2));
  assert_false(kiln_hashmap_contains(&map, "xxxx"));

  kiln_hashmap_iterator_t iterator;
  kiln_hashmap_iterator_initialize(&iterator, &map);
  const void *key = NULL;
  while (kiln_hashmap_iterator_next(&iterator, &key, NULL)) {
    assert_ptr_not_equal(key, buffer);
  }
  kiln_hashmap_deinitialize(&map);
}

static void test_pointer_keys_compare_addresses(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_POINTER);
  char first[] = "same", second[] = "same";
  KILN_ASSERT_OK(kiln_hashmap_put(&map, first, value_of(1)));
  KILN_ASSERT_OK(kiln_hashmap_put(&map, second, value_of(2)));
  assert_int_equal(kiln_hashmap_count(&map), 2);
  assert_int_equal(live_blocks(&counting), 1); /* nothing copied */
  void *value = NULL;
  assert_true(kiln_hashmap_get(&map, first, &value));
  assert_ptr_equal(value, value_of(1));
  assert_true(kiln_hashmap_get(&map, second, &value));
  assert_ptr_equal(value, value_of(2));
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_replace_keeps_one_entry(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_STRING);
  KILN_ASSERT_OK(kiln_hashmap_put(&map, "add", value_of(1)));
  long long attempts = (long long)kiln_counting_allocator_counts(&counting).attempts;
  char again[] = "add";
  KILN_ASSERT_OK(kiln_hashmap_put(&map, again, value_of(2)));
  KILN_ASSERT_OK(kiln_hashmap_put(&map, "add", NULL)); /* NULL values are fine */
  assert_int_equal(kiln_counting_allocator_counts(&counting).attempts,
                   attempts); /* no new key copy */
  assert_int_equal(kiln_hashmap_count(&map), 1);
  void *value = value_of(9);
  assert_true(kiln_hashmap_get(&map, "add", &value));
  assert_null(value);
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

/* Puts "key0".."key<n-1>" with values value_of(i). */
static void put_range(kiln_hashmap_t *map, int n) {
  char name[32];
  for (int i = 0; i < n; ++i) {
    key_name(name, sizeof(name), "key", i);
    KILN_ASSERT_OK(kiln_hashmap_put(map, name, value_of(i)));
  }
}

static void test_many_keys_remove_and_reinsert(void **state) {
  (void)state;
  enum { kCount = 10000 };
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_STRING);
  put_range(&map, kCount);
  assert_int_equal(kiln_hashmap_count(&map), kCount);
  assert_int_equal(map.capacity, 16384); /* 16 doubled ten times; 10000 <= 3/4 of it */
  assert_int_equal(live_blocks(&counting), kCount + 1);

  char name[32];
  for (int i = 0; i < kCount; i += 3) {
    key_name(name, sizeof(name), "key", i);
    void *value = NULL;
    assert_true(kiln_hashmap_remove(&map, name, &value));
    assert_ptr_equal(value, value_of(i));
  }
  int removed = (kCount + 2) / 3;
  assert_int_equal(kiln_hashmap_count(&map), kCount - removed);
  for (int i = 0; i < kCount; ++i) {
    key_name(name, sizeof(name), "key", i);
    void *value = NULL;
    bool found = kiln_hashmap_get(&map, name, &value);
    assert_int_equal(found, i % 3 != 0);
    if (found) {
      assert_ptr_equal(value, value_of(i));
    }
  }
  /* Re-insert the removed keys with new values. */
  for (int i = 0; i < kCount; i += 3) {
    key_name(name, sizeof(name), "key", i);
    KILN_ASSERT_OK(kiln_hashmap_put(&map, name, value_of(-i - 100)));
  }
  assert_int_equal(kiln_hashmap_count(&map), kCount);
  assert_int_equal(map.capacity, 16384);
  for (int i = 0; i < kCount; ++i) {
    key_name(name, sizeof(name), "key", i);
    void *value = NULL;
    assert_true(kiln_hashmap_get(&map, name, &value));
    assert_ptr_equal(value, i % 3 == 0 ? value_of(-i - 100) : value_of(i));
  }
  assert_false(kiln_hashmap_contains(&map, "key10000"));
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_many_pointer_keys(void **state) {
  (void)state;
  enum { kCount = 5000 };
  static int64_t objects[kCount];
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  for (int i = 0; i < kCount; ++i) {
    KILN_ASSERT_OK(kiln_hashmap_put(&map, &objects[i], value_of(i)));
  }
  for (int i = 0; i < kCount; i += 2) {
    assert_true(kiln_hashmap_remove(&map, &objects[i], NULL));
  }
  for (int i = 0; i < kCount; ++i) {
    void *value = NULL;
    assert_int_equal(kiln_hashmap_get(&map, &objects[i], &value), i % 2 == 1);
    if (i % 2 == 1) {
      assert_ptr_equal(value, value_of(i));
    }
  }
  assert_int_equal(kiln_hashmap_count(&map), kCount / 2);
  kiln_hashmap_deinitialize(&map);
}

/* ---- constructed collisions ---- */

enum { kChainKeys = 11 };

typedef struct chain_t {
  char names[kChainKeys][16];
} chain_t;

/* Finds string keys with chosen home slots in a 16-slot table, so that the
 * probe chains are: four keys homed at 14 (filling 14, 15, 0, 1: the chain
 * wraps), two homed at 15 (pushed to 2, 3), one homed at 0 (to 4), three
 * homed at 2 (to 5, 6, 7) and one homed at 9 (alone). */
static void find_chain_keys(chain_t *chain) {
  static const size_t homes[kChainKeys] = {14, 14, 14, 14, 15, 15, 0, 2, 2, 2, 9};
  int next = 0;
  for (size_t k = 0; k < kChainKeys; ++k) {
    for (;; ++next) {
      key_name(chain->names[k], sizeof(chain->names[k]), "c", next);
      if ((kiln_hashmap_hash_string(chain->names[k]) & 15) == homes[k]) {
        ++next;
        break;
      }
    }
  }
}

static void put_chain(kiln_hashmap_t *map, const chain_t *chain) {
  kiln_hashmap_initialize(map, kiln_allocator_system(), KILN_HASHMAP_KEY_STRING);
  for (size_t k = 0; k < kChainKeys; ++k) {
    KILN_ASSERT_OK(kiln_hashmap_put(map, chain->names[k], value_of((intptr_t)k)));
  }
  assert_int_equal(map->capacity, 16); /* 11 keys stay under 3/4 of 16 */
}

static void assert_chain(const kiln_hashmap_t *map, const chain_t *chain, const bool *present) {
  size_t expected = 0;
  for (size_t k = 0; k < kChainKeys; ++k) {
    void *value = NULL;
    assert_int_equal(kiln_hashmap_get(map, chain->names[k], &value), present[k]);
    if (present[k]) {
      assert_ptr_equal(value, value_of((intptr_t)k));
      ++expected;
    }
  }
  assert_int_equal(kiln_hashmap_count(map), expected);
}

static void test_removal_inside_probe_chains(void **state) {
  (void)state;
  chain_t chain;
  find_chain_keys(&chain);
  /* From each starting key, remove every key in turn, checking all the rest
   * after each removal. */
  for (size_t start = 0; start < kChainKeys; ++start) {
    kiln_hashmap_t map;
    put_chain(&map, &chain);
    bool present[kChainKeys];
    for (size_t k = 0; k < kChainKeys; ++k) {
      present[k] = true;
    }
    for (size_t step = 0; step < kChainKeys; ++step) {
      size_t k = (start + step * 3) % kChainKeys; /* 3 is coprime to 11: visits all */
      assert_true(kiln_hashmap_remove(&map, chain.names[k], NULL));
      present[k] = false;
      assert_chain(&map, &chain, present);
    }
    /* Everything back, after the chains were taken apart. */
    for (size_t k = 0; k < kChainKeys; ++k) {
      KILN_ASSERT_OK(kiln_hashmap_put(&map, chain.names[k], value_of((intptr_t)k)));
      present[k] = true;
      assert_chain(&map, &chain, present);
    }
    kiln_hashmap_deinitialize(&map);
  }
}

static void test_reinsert_into_a_shifted_chain(void **state) {
  (void)state;
  chain_t chain;
  find_chain_keys(&chain);
  kiln_hashmap_t map;
  put_chain(&map, &chain);
  bool present[kChainKeys];
  for (size_t k = 0; k < kChainKeys; ++k) {
    present[k] = true;
  }
  /* Remove and re-insert the middle of the wrapping chain many times. */
  for (int round = 0; round < 20; ++round) {
    size_t k = 1 + (size_t)round % 5;
    assert_true(kiln_hashmap_remove(&map, chain.names[k], NULL));
    present[k] = false;
    assert_chain(&map, &chain, present);
    KILN_ASSERT_OK(kiln_hashmap_put(&map, chain.names[k], value_of((intptr_t)k)));
    present[k] = true;
    assert_chain(&map, &chain, present);
  }
  kiln_hashmap_deinitialize(&map);
}

/* ---- iteration, clear, hashes ---- */

static void test_iterator_visits_each_entry_once(void **state) {
  (void)state;
  enum { kCount = 300 };
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_allocator_system(), KILN_HASHMAP_KEY_STRING);
  put_range(&map, kCount);
  int seen[kCount] = {0};
  kiln_hashmap_iterator_t iterator;
  kiln_hashmap_iterator_initialize(&iterator, &map);
  const void *key;
  void *value;
  size_t visits = 0;
  while (kiln_hashmap_iterator_next(&iterator, &key, &value)) {
    intptr_t i = (intptr_t)value - 1;
    assert_true(i >= 0 && i < kCount);
    char name[32];
    key_name(name, sizeof(name), "key", (int)i);
    assert_string_equal(key, name);
    seen[i]++;
    visits++;
  }
  assert_int_equal(visits, kCount);
  for (int i = 0; i < kCount; ++i) {
    assert_int_equal(seen[i], 1);
  }
  assert_false(kiln_hashmap_iterator_next(&iterator, &key, &value));
  kiln_hashmap_deinitialize(&map);
}

static void test_clear_frees_keys_and_keeps_the_table(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_STRING);
  put_range(&map, 100);
  size_t capacity = map.capacity;
  kiln_hashmap_clear(&map);
  assert_int_equal(kiln_hashmap_count(&map), 0);
  assert_int_equal(map.capacity, capacity);
  assert_int_equal(live_blocks(&counting), 1);
  assert_false(kiln_hashmap_contains(&map, "key5"));
  put_range(&map, 50);
  assert_true(kiln_hashmap_contains(&map, "key49"));
  assert_int_equal(kiln_hashmap_count(&map), 50);
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_hashes_spread_over_small_tables(void **state) {
  (void)state;
  assert_true(kiln_hashmap_hash_string("conv") == kiln_hashmap_hash_string("conv"));
  assert_true(kiln_hashmap_hash_string("a") != kiln_hashmap_hash_string("A"));
  assert_true(kiln_hashmap_hash_string("") != kiln_hashmap_hash_string("a"));
  /* Keys differing only in one bit of one byte still differ in the low bits
   * most of the time; and 1600 keys fill 16 buckets evenly. */
  size_t buckets[16] = {0};
  size_t pointer_buckets[16] = {0};
  static int64_t objects[1600];
  for (int i = 0; i < 1600; ++i) {
    char name[32];
    key_name(name, sizeof(name), "node_", i);
    buckets[kiln_hashmap_hash_string(name) & 15]++;
    pointer_buckets[kiln_hashmap_hash_pointer(&objects[i]) & 15]++;
  }
  for (size_t b = 0; b < 16; ++b) {
    assert_true(buckets[b] > 50 && buckets[b] < 150);
    assert_true(pointer_buckets[b] > 50 && pointer_buckets[b] < 150);
  }
  size_t same_low_bits = 0;
  for (int c = 0; c < 64; ++c) {
    char lower[2] = {(char)('@' + c % 32 + 32), 0}, upper[2] = {(char)('@' + c % 32), 0};
    if ((kiln_hashmap_hash_string(lower) & 15) == (kiln_hashmap_hash_string(upper) & 15)) {
      same_low_bits++;
    }
  }
  assert_true(same_low_bits < 16);
}

/* ---- allocation failures ---- */

static void test_failed_growth_leaves_the_map_unchanged(void **state) {
  (void)state;
  static int64_t objects[13];
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_POINTER);
  for (int i = 0; i < 12; ++i) {
    KILN_ASSERT_OK(kiln_hashmap_put(&map, &objects[i], value_of(i)));
  }
  assert_int_equal(map.capacity, 16);
  kiln_counting_allocator_fail_attempt(&counting, 0);
  KILN_ASSERT_STATUS(kiln_hashmap_put(&map, &objects[12], value_of(12)), RESOURCE_EXHAUSTED,
                     "out of memory");
  assert_int_equal(kiln_hashmap_count(&map), 12);
  assert_int_equal(map.capacity, 16);
  assert_false(kiln_hashmap_contains(&map, &objects[12]));
  for (int i = 0; i < 12; ++i) {
    void *value = NULL;
    assert_true(kiln_hashmap_get(&map, &objects[i], &value));
    assert_ptr_equal(value, value_of(i));
  }
  /* Replacing needs no growth, so it works at the limit. */
  kiln_counting_allocator_fail_attempt(&counting, 0);
  KILN_ASSERT_OK(kiln_hashmap_put(&map, &objects[3], value_of(33)));
  kiln_counting_allocator_fail_attempt(&counting, -1);
  KILN_ASSERT_OK(kiln_hashmap_put(&map, &objects[12], value_of(12)));
  assert_int_equal(map.capacity, 32);
  assert_true(kiln_hashmap_get(&map, &objects[12], NULL));
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static void test_failed_key_copy_or_growth_with_string_keys(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_hashmap_t map;
  kiln_hashmap_initialize(&map, kiln_counting_allocator_get(&counting), KILN_HASHMAP_KEY_STRING);
  put_range(&map, 12);
  for (int64_t attempt = 0; attempt < 2; ++attempt) { /* 0: the key copy; 1: the table */
    kiln_counting_allocator_fail_attempt(&counting, attempt);
    KILN_ASSERT_STATUS(kiln_hashmap_put(&map, "key12", value_of(12)), RESOURCE_EXHAUSTED,
                       "out of memory");
    assert_int_equal(kiln_hashmap_count(&map), 12);
    assert_int_equal(map.capacity, 16);
    assert_int_equal(live_blocks(&counting), 13); /* nothing leaked */
    assert_false(kiln_hashmap_contains(&map, "key12"));
  }
  kiln_counting_allocator_fail_attempt(&counting, -1);
  put_range(&map, 13);
  assert_int_equal(kiln_hashmap_count(&map), 13);
  kiln_hashmap_deinitialize(&map);
  assert_int_equal(live_blocks(&counting), 0);
}

static kiln_status_t build_maps(kiln_hashmap_t *names, kiln_hashmap_t *nodes) {
  static int64_t objects[1000];
  char name[32];
  for (int i = 0; i < 1000; ++i) {
    key_name(name, sizeof(name), "layer/", i);
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(names, name, value_of(i)));
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(nodes, &objects[i], value_of(i)));
  }
  for (int i = 0; i < 1000; i += 4) {
    key_name(name, sizeof(name), "layer/", i);
    assert_true(kiln_hashmap_remove(names, name, NULL));
  }
  for (int i = 0; i < 100; ++i) {
    key_name(name, sizeof(name), "extra/", i);
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(names, name, value_of(-i)));
  }
  assert_int_equal(kiln_hashmap_count(names), 850);
  assert_int_equal(kiln_hashmap_count(nodes), 1000);
  for (int i = 0; i < 1000; ++i) {
    key_name(name, sizeof(name), "layer/", i);
    void *value = NULL;
    assert_int_equal(kiln_hashmap_get(names, name, &value), i % 4 != 0);
    assert_true(kiln_hashmap_get(nodes, &objects[i], &value));
    assert_ptr_equal(value, value_of(i));
  }
  assert_true(kiln_hashmap_contains(names, "extra/99"));
  return KILN_OK;
}

static kiln_status_t hashmap_scenario(kiln_allocator_t allocator, void *context) {
  (void)context;
  kiln_hashmap_t names, nodes;
  kiln_hashmap_initialize(&names, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_hashmap_initialize(&nodes, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = build_maps(&names, &nodes);
  kiln_hashmap_deinitialize(&names);
  kiln_hashmap_deinitialize(&nodes);
  return status;
}

static void test_every_allocation_failure_is_reported(void **state) {
  (void)state;
  /* 1100 key copies; each map's table grows 16 -> 2048 (8 allocations). */
  assert_int_equal(kiln_test_sweep_allocation_failures(hashmap_scenario, NULL), 1100 + 8 + 8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_map),
      cmocka_unit_test(test_null_key_is_an_error),
      cmocka_unit_test(test_one_entry),
      cmocka_unit_test(test_empty_string_is_a_key),
      cmocka_unit_test(test_string_keys_are_copied),
      cmocka_unit_test(test_pointer_keys_compare_addresses),
      cmocka_unit_test(test_replace_keeps_one_entry),
      cmocka_unit_test(test_many_keys_remove_and_reinsert),
      cmocka_unit_test(test_many_pointer_keys),
      cmocka_unit_test(test_removal_inside_probe_chains),
      cmocka_unit_test(test_reinsert_into_a_shifted_chain),
      cmocka_unit_test(test_iterator_visits_each_entry_once),
      cmocka_unit_test(test_clear_frees_keys_and_keeps_the_table),
      cmocka_unit_test(test_hashes_spread_over_small_tables),
      cmocka_unit_test(test_failed_growth_leaves_the_map_unchanged),
      cmocka_unit_test(test_failed_key_copy_or_growth_with_string_keys),
      cmocka_unit_test(test_every_allocation_failure_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
