/*
 * Growable array implementation.
 *
 * All growth goes through kiln_array_grow_for, which computes the new capacity
 * (double the old, at least what is needed, at least 8) and its size in bytes
 * with overflow checks, then reallocates; on failure nothing changes. Element
 * addresses are computed as data + index * element_size; that product cannot
 * overflow for an index below capacity, because capacity * element_size was
 * checked when the block was allocated.
 */
#include "base/array.h"

#include <assert.h>
#include <string.h>

#define KILN_ARRAY_MIN_CAPACITY 8

static char *kiln_array_slot(const kiln_array_t *array, size_t index) {
  return (char *)array->data + index * array->element_size;
}

void kiln_array_initialize(kiln_array_t *array, kiln_allocator_t allocator, size_t element_size) {
  assert(element_size > 0 && "an array's elements have a size");
  *array = (kiln_array_t){.allocator = allocator, .element_size = element_size};
}

void kiln_array_deinitialize(kiln_array_t *array) {
  kiln_allocator_free(array->allocator, array->data);
  array->data = NULL;
  array->count = 0;
  array->capacity = 0;
}

kiln_status_t kiln_array_reserve(kiln_array_t *array, size_t capacity) {
  if (capacity <= array->capacity) {
    return KILN_OK;
  }
  size_t bytes;
  if (!kiln_size_mul(capacity, array->element_size, &bytes)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "array of %zu elements of %zu bytes overflows size_t",
                       capacity, array->element_size);
  }
  void *data = array->data;
  KILN_RETURN_IF_ERROR(kiln_allocator_realloc(array->allocator, bytes, &data));
  array->data = data;
  array->capacity = capacity;
  return KILN_OK;
}

/* Makes room for `extra` more elements, doubling the capacity when it grows. */
static kiln_status_t kiln_array_grow_for(kiln_array_t *array, size_t extra) {
  size_t needed;
  if (!kiln_size_add(array->count, extra, &needed)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "array of %zu elements cannot grow by %zu", array->count,
                       extra);
  }
  if (KILN_LIKELY(needed <= array->capacity)) {
    return KILN_OK;
  }
  size_t capacity = KILN_ARRAY_MIN_CAPACITY;
  if (array->capacity > 0 && !kiln_size_mul(array->capacity, 2, &capacity)) {
    capacity = needed;
  }
  if (capacity < needed) {
    capacity = needed;
  }
  return kiln_array_reserve(array, capacity);
}

kiln_status_t kiln_array_push(kiln_array_t *array, const void *element) {
  KILN_RETURN_IF_ERROR(kiln_array_grow_for(array, 1));
  memcpy(kiln_array_slot(array, array->count), element, array->element_size);
  array->count++;
  return KILN_OK;
}

kiln_status_t kiln_array_push_n(kiln_array_t *array, const void *elements, size_t n) {
  if (n == 0) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_array_grow_for(array, n));
  memcpy(kiln_array_slot(array, array->count), elements, n * array->element_size);
  array->count += n;
  return KILN_OK;
}

kiln_status_t kiln_array_insert(kiln_array_t *array, size_t index, const void *element) {
  if (index > array->count) {
    return KILN_STATUS(OUT_OF_RANGE, "array insert at %zu is past the end (count %zu)", index,
                       array->count);
  }
  KILN_RETURN_IF_ERROR(kiln_array_grow_for(array, 1));
  char *slot = kiln_array_slot(array, index);
  memmove(slot + array->element_size, slot, (array->count - index) * array->element_size);
  memcpy(slot, element, array->element_size);
  array->count++;
  return KILN_OK;
}

bool kiln_array_pop(kiln_array_t *array, void *out_element) {
  if (array->count == 0) {
    return false;
  }
  array->count--;
  if (out_element) {
    memcpy(out_element, kiln_array_slot(array, array->count), array->element_size);
  }
  return true;
}

void kiln_array_remove(kiln_array_t *array, size_t index, void *out_element) {
  assert(index < array->count && "array index in range");
  char *slot = kiln_array_slot(array, index);
  if (out_element) {
    memcpy(out_element, slot, array->element_size);
  }
  memmove(slot, slot + array->element_size, (array->count - index - 1) * array->element_size);
  array->count--;
}

void kiln_array_clear(kiln_array_t *array) {
  array->count = 0;
}

void *kiln_array_at(const kiln_array_t *array, size_t index) {
  assert(index < array->count && "array index in range");
  return kiln_array_slot(array, index);
}

void *kiln_array_at_sized(const kiln_array_t *array, size_t index, size_t element_size) {
  assert(element_size == array->element_size && "KILN_ARRAY_AT type matches the element size");
  (void)element_size;
  return kiln_array_at(array, index);
}

size_t kiln_array_count(const kiln_array_t *array) {
  return array->count;
}

size_t kiln_array_capacity(const kiln_array_t *array) {
  return array->capacity;
}

void *kiln_array_data(const kiln_array_t *array) {
  return array->data;
}
