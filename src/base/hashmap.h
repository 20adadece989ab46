/*
 * Hash maps from strings or pointers to `void *` values.
 *
 * Open addressing with linear probing in a power-of-two table of slots, each
 * holding a key, a value and the key's full 64-bit hash. Storing the hash makes
 * growth a rehash-free move, lets lookups skip string compares on a mismatch,
 * and gives each entry's home slot for deletion. Deletion shifts later entries
 * of the probe chain back into the hole (backward-shift deletion), so there
 * are no tombstones and lookups never slow down with churn. The table doubles
 * when an insertion would take it past 3/4 full; the new table is allocated
 * before anything changes, so a failed growth leaves the map as it was.
 *
 * The key kind is chosen at initialize. KILN_HASHMAP_KEY_STRING keys are
 * NUL-terminated strings that the map copies (so the caller's buffer may
 * change) and frees; KILN_HASHMAP_KEY_POINTER keys are compared as addresses.
 * A NULL key is not allowed (it marks an empty slot). Strings hash with
 * 64-bit FNV-1a and pointers with the splitmix64 finalizer; both are exposed
 * for callers that hash their own structures.
 *
 * Iteration visits every entry once in an unspecified order; the map must not
 * be changed while an iterator is in use.
 */
#ifndef KILN_BASE_HASHMAP_H_
#define KILN_BASE_HASHMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

typedef enum kiln_hashmap_key_kind_e {
  KILN_HASHMAP_KEY_STRING,
  KILN_HASHMAP_KEY_POINTER,
} kiln_hashmap_key_kind_t;

typedef struct kiln_hashmap_slot_t kiln_hashmap_slot_t;

typedef struct kiln_hashmap_t {
  kiln_allocator_t allocator;
  kiln_hashmap_key_kind_t key_kind;
  kiln_hashmap_slot_t *slots; /* `capacity` slots, or NULL before the first put */
  size_t capacity;            /* 0 or a power of two */
  size_t count;
} kiln_hashmap_t;

/* Makes an empty map (no allocation). */
void kiln_hashmap_initialize(kiln_hashmap_t *map, kiln_allocator_t allocator,
                             kiln_hashmap_key_kind_t key_kind);
/* Frees the table and every copied key (values are the caller's); the map is
 * left empty and usable. */
void kiln_hashmap_deinitialize(kiln_hashmap_t *map);

/* Inserts `key` with `value`, or replaces the value when the key is there
 * (keeping the stored key). INVALID_ARGUMENT for a NULL key. */
KILN_MUST_USE_RESULT kiln_status_t kiln_hashmap_put(kiln_hashmap_t *map, const void *key,
                                                    void *value);
/* Whether `key` is there; its value goes to *out_value when out_value is not
 * NULL (and is left alone when the key is missing). */
bool kiln_hashmap_get(const kiln_hashmap_t *map, const void *key, void **out_value);
bool kiln_hashmap_contains(const kiln_hashmap_t *map, const void *key);
/* Removes `key`, returning whether it was there; its value goes to *out_value
 * when out_value is not NULL. */
bool kiln_hashmap_remove(kiln_hashmap_t *map, const void *key, void **out_value);
/* Removes every entry; the table's capacity is kept. */
void kiln_hashmap_clear(kiln_hashmap_t *map);
size_t kiln_hashmap_count(const kiln_hashmap_t *map);

typedef struct kiln_hashmap_iterator_t {
  const kiln_hashmap_t *map;
  size_t next_slot;
} kiln_hashmap_iterator_t;

/* Starts an iteration over `map`; the iterator holds nothing to release. */
void kiln_hashmap_iterator_initialize(kiln_hashmap_iterator_t *iterator, const kiln_hashmap_t *map);
/* The next entry's key (the map's copy, for string keys) and value; false when
 * every entry has been seen. Either output may be NULL. */
bool kiln_hashmap_iterator_next(kiln_hashmap_iterator_t *iterator, const void **out_key,
                                void **out_value);

uint64_t kiln_hashmap_hash_string(const char *text);
uint64_t kiln_hashmap_hash_pointer(const void *pointer);

#endif /* KILN_BASE_HASHMAP_H_ */
