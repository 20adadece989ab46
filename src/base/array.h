/*
 * Growable arrays of fixed-size elements.
 *
 * A kiln_array_t is a caller-owned struct holding `count` elements of
 * `element_size` bytes in one block from the allocator it was given (an arena
 * allocator works too). Elements are copied in and out with memcpy, so any
 * plain-data type can be stored; kiln_array_at returns a pointer into the
 * block, which stays valid until the next call that may grow the array.
 * Capacity doubles when it runs out (starting at 8), with every size
 * computation checked for overflow, so growth is amortized O(1) and an absurd
 * request is a RESOURCE_EXHAUSTED status. A failed growth leaves the array as
 * it was. Elements passed to push, push_n and insert must not point into the
 * array itself, since growth may move it.
 *
 * Indexes out of range in kiln_array_at and kiln_array_remove are programming
 * errors and assert; kiln_array_insert, which may fail anyway, reports them.
 */
#ifndef KILN_BASE_ARRAY_H_
#define KILN_BASE_ARRAY_H_

#include <stdbool.h>
#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

typedef struct kiln_array_t {
  kiln_allocator_t allocator;
  void *data;
  size_t count;
  size_t capacity; /* elements */
  size_t element_size;
} kiln_array_t;

/* Makes an empty array (no allocation); `element_size` must not be 0. */
void kiln_array_initialize(kiln_array_t *array, kiln_allocator_t allocator, size_t element_size);
/* Frees the elements' block; the array is left empty and usable. */
void kiln_array_deinitialize(kiln_array_t *array);

/* Makes room for at least `capacity` elements in total. */
KILN_MUST_USE_RESULT kiln_status_t kiln_array_reserve(kiln_array_t *array, size_t capacity);
/* Appends a copy of one element. */
KILN_MUST_USE_RESULT kiln_status_t kiln_array_push(kiln_array_t *array, const void *element);
/* Appends copies of `n` consecutive elements (`elements` may be NULL when n is 0). */
KILN_MUST_USE_RESULT kiln_status_t kiln_array_push_n(kiln_array_t *array, const void *elements,
                                                     size_t n);
/* Inserts a copy of `element` before position `index` (0..count; count
 * appends); OUT_OF_RANGE when index > count. */
KILN_MUST_USE_RESULT kiln_status_t kiln_array_insert(kiln_array_t *array, size_t index,
                                                     const void *element);

/* Removes the last element, copying it to `out_element` when that is not
 * NULL; returns false (and copies nothing) when the array is empty. */
bool kiln_array_pop(kiln_array_t *array, void *out_element);
/* Removes the element at `index` (< count), shifting the rest down, copying it
 * to `out_element` when that is not NULL. */
void kiln_array_remove(kiln_array_t *array, size_t index, void *out_element);
/* Removes every element; the capacity is kept. */
void kiln_array_clear(kiln_array_t *array);

/* The element at `index` (< count). */
void *kiln_array_at(const kiln_array_t *array, size_t index);
size_t kiln_array_count(const kiln_array_t *array);
size_t kiln_array_capacity(const kiln_array_t *array);
/* The first element, or NULL when nothing was ever allocated. */
void *kiln_array_data(const kiln_array_t *array);

/* The element at `index` as an lvalue of `type`, whose size must be the
 * array's element size: KILN_ARRAY_AT(&ints, int, 3) = 7; */
#define KILN_ARRAY_AT(array, type, index) \
  (*(type *)kiln_array_at_sized((array), (index), sizeof(type)))
/* kiln_array_at that also asserts `element_size` is the array's; for KILN_ARRAY_AT. */
void *kiln_array_at_sized(const kiln_array_t *array, size_t index, size_t element_size);

#endif /* KILN_BASE_ARRAY_H_ */
