/*
 * Hash map implementation.
 *
 * A slot is empty when its key is NULL. The home slot of a key is its hash
 * masked by capacity - 1; a lookup probes forward from home until it meets the
 * key or an empty slot, which the 3/4 load limit guarantees exists. Both hash
 * functions end with the splitmix64 finalizer, so the low bits used as the
 * index depend on every bit of the key (plain FNV-1a's low bits see only the
 * low bits of each byte, which would make "a" and "A" collide in small
 * tables).
 *
 * Removal empties the slot and then walks the rest of the probe chain: each
 * entry whose home is at or before the hole (cyclically) moves back into it,
 * and the hole moves to where that entry was; the walk ends at an empty slot.
 * This keeps every entry reachable from its home without tombstones.
 *
 * A slot's key is a union so that copied string keys are held as `char *` (to
 * be freed) and pointer keys as `const void *` without casting away const;
 * both members have the same representation, and comparisons read `pointer`.
 */
#include "base/hashmap.h"

#include <assert.h>
#include <string.h>

#define KILN_HASHMAP_MIN_CAPACITY 16

struct kiln_hashmap_slot_t {
  union {
    const void *pointer; /* NULL for an empty slot */
    char *string;        /* the map's copy, for KILN_HASHMAP_KEY_STRING */
  } key;
  void *value;
  uint64_t hash;
};

static uint64_t kiln_hashmap_mix(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

uint64_t kiln_hashmap_hash_string(const char *text) {
  uint64_t hash = UINT64_C(0xcbf29ce484222325);
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    hash ^= *p;
    hash *= UINT64_C(0x100000001b3);
  }
  return kiln_hashmap_mix(hash);
}

uint64_t kiln_hashmap_hash_pointer(const void *pointer) {
  return kiln_hashmap_mix((uint64_t)(uintptr_t)pointer);
}

static uint64_t kiln_hashmap_hash_key(const kiln_hashmap_t *map, const void *key) {
  return map->key_kind == KILN_HASHMAP_KEY_STRING ? kiln_hashmap_hash_string(key)
                                                  : kiln_hashmap_hash_pointer(key);
}

static bool kiln_hashmap_slot_matches(const kiln_hashmap_t *map, const kiln_hashmap_slot_t *slot,
                                      const void *key, uint64_t hash) {
  if (slot->hash != hash) {
    return false;
  }
  if (map->key_kind == KILN_HASHMAP_KEY_STRING) {
    return strcmp(slot->key.pointer, key) == 0;
  }
  return slot->key.pointer == key;
}

/* The slot holding `key`, or the empty slot where it would go. The table must
 * have been allocated. */
static size_t kiln_hashmap_probe(const kiln_hashmap_t *map, const void *key, uint64_t hash,
                                 bool *out_found) {
  size_t mask = map->capacity - 1;
  for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
    const kiln_hashmap_slot_t *slot = &map->slots[i];
    if (slot->key.pointer == NULL) {
      *out_found = false;
      return i;
    }
    if (kiln_hashmap_slot_matches(map, slot, key, hash)) {
      *out_found = true;
      return i;
    }
  }
}

/* The slot holding `key`, or NULL. */
static kiln_hashmap_slot_t *kiln_hashmap_find(const kiln_hashmap_t *map, const void *key) {
  if (key == NULL || map->capacity == 0) {
    return NULL;
  }
  bool found;
  size_t index = kiln_hashmap_probe(map, key, kiln_hashmap_hash_key(map, key), &found);
  return found ? &map->slots[index] : NULL;
}

void kiln_hashmap_initialize(kiln_hashmap_t *map, kiln_allocator_t allocator,
                             kiln_hashmap_key_kind_t key_kind) {
  *map = (kiln_hashmap_t){.allocator = allocator, .key_kind = key_kind};
}

static void kiln_hashmap_free_keys(kiln_hashmap_t *map) {
  if (map->key_kind != KILN_HASHMAP_KEY_STRING) {
    return;
  }
  for (size_t i = 0; i < map->capacity; ++i) {
    kiln_allocator_free(map->allocator, map->slots[i].key.string);
  }
}

void kiln_hashmap_deinitialize(kiln_hashmap_t *map) {
  kiln_hashmap_free_keys(map);
  kiln_allocator_free(map->allocator, map->slots);
  map->slots = NULL;
  map->capacity = 0;
  map->count = 0;
}

void kiln_hashmap_clear(kiln_hashmap_t *map) {
  kiln_hashmap_free_keys(map);
  if (map->slots) {
    memset(map->slots, 0, map->capacity * sizeof(*map->slots));
  }
  map->count = 0;
}

/* Moves every entry into a new table twice the size; on failure nothing changes. */
static kiln_status_t kiln_hashmap_grow(kiln_hashmap_t *map) {
  size_t capacity = KILN_HASHMAP_MIN_CAPACITY;
  if (map->capacity > 0 && !kiln_size_mul(map->capacity, 2, &capacity)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "hash map of %zu slots cannot double", map->capacity);
  }
  void *raw = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(map->allocator, capacity, sizeof(kiln_hashmap_slot_t), &raw));
  kiln_hashmap_slot_t *slots = raw;
  memset(slots, 0, capacity * sizeof(*slots));
  size_t mask = capacity - 1;
  for (size_t i = 0; i < map->capacity; ++i) {
    if (map->slots[i].key.pointer == NULL) {
      continue;
    }
    size_t j = (size_t)map->slots[i].hash & mask;
    while (slots[j].key.pointer != NULL) {
      j = (j + 1) & mask;
    }
    slots[j] = map->slots[i];
  }
  kiln_allocator_free(map->allocator, map->slots);
  map->slots = slots;
  map->capacity = capacity;
  return KILN_OK;
}

static bool kiln_hashmap_is_full(const kiln_hashmap_t *map) {
  /* Grow before the count would pass 3/4 of the capacity. */
  return map->count + 1 > map->capacity - map->capacity / 4;
}

kiln_status_t kiln_hashmap_put(kiln_hashmap_t *map, const void *key, void *value) {
  if (key == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "hash map key is NULL");
  }
  kiln_hashmap_slot_t *existing = kiln_hashmap_find(map, key);
  if (existing) {
    existing->value = value;
    return KILN_OK;
  }
  kiln_hashmap_slot_t slot = {.key.pointer = key, .value = value};
  slot.hash = kiln_hashmap_hash_key(map, key);
  if (map->key_kind == KILN_HASHMAP_KEY_STRING) {
    KILN_RETURN_IF_ERROR(kiln_allocator_strdup(map->allocator, key, &slot.key.string));
  }
  if (kiln_hashmap_is_full(map)) {
    kiln_status_t status = kiln_hashmap_grow(map);
    if (status) {
      if (map->key_kind == KILN_HASHMAP_KEY_STRING) {
        kiln_allocator_free(map->allocator, slot.key.string);
      }
      return status;
    }
  }
  bool found;
  size_t index = kiln_hashmap_probe(map, key, slot.hash, &found);
  assert(!found && "a new key is not in the map");
  (void)found;
  map->slots[index] = slot;
  map->count++;
  return KILN_OK;
}

bool kiln_hashmap_get(const kiln_hashmap_t *map, const void *key, void **out_value) {
  const kiln_hashmap_slot_t *slot = kiln_hashmap_find(map, key);
  if (!slot) {
    return false;
  }
  if (out_value) {
    *out_value = slot->value;
  }
  return true;
}

bool kiln_hashmap_contains(const kiln_hashmap_t *map, const void *key) {
  return kiln_hashmap_find(map, key) != NULL;
}

/* Empties slot `hole` and moves later entries of its probe chain back. */
static void kiln_hashmap_shift_back(kiln_hashmap_t *map, size_t hole) {
  size_t mask = map->capacity - 1;
  for (size_t j = (hole + 1) & mask; map->slots[j].key.pointer != NULL; j = (j + 1) & mask) {
    size_t home = (size_t)map->slots[j].hash & mask;
    /* The entry may move back if the hole lies on its path from home to j. */
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      map->slots[hole] = map->slots[j];
      hole = j;
    }
  }
  map->slots[hole] = (kiln_hashmap_slot_t){.key.pointer = NULL};
}

bool kiln_hashmap_remove(kiln_hashmap_t *map, const void *key, void **out_value) {
  kiln_hashmap_slot_t *slot = kiln_hashmap_find(map, key);
  if (!slot) {
    return false;
  }
  if (out_value) {
    *out_value = slot->value;
  }
  if (map->key_kind == KILN_HASHMAP_KEY_STRING) {
    kiln_allocator_free(map->allocator, slot->key.string);
  }
  kiln_hashmap_shift_back(map, (size_t)(slot - map->slots));
  map->count--;
  return true;
}

size_t kiln_hashmap_count(const kiln_hashmap_t *map) {
  return map->count;
}

void kiln_hashmap_iterator_initialize(kiln_hashmap_iterator_t *iterator,
                                      const kiln_hashmap_t *map) {
  *iterator = (kiln_hashmap_iterator_t){.map = map, .next_slot = 0};
}

bool kiln_hashmap_iterator_next(kiln_hashmap_iterator_t *iterator, const void **out_key,
                                void **out_value) {
  const kiln_hashmap_t *map = iterator->map;
  while (iterator->next_slot < map->capacity) {
    const kiln_hashmap_slot_t *slot = &map->slots[iterator->next_slot++];
    if (slot->key.pointer == NULL) {
      continue;
    }
    if (out_key) {
      *out_key = slot->key.pointer;
    }
    if (out_value) {
      *out_value = slot->value;
    }
    return true;
  }
  return false;
}
