/*
 * Shape helpers: validation, sizes, strides and formatting of dim arrays.
 *
 * Shapes arrive from files and models, so every size computation checks its
 * input: the rank must be in [0, KILN_MAX_RANK], no dim may be negative, and
 * neither the element count (int64) nor the byte size (size_t) may overflow.
 * Errors name the offending dim and show the whole shape. A shape with a zero
 * dim has zero elements whatever its other dims are.
 *
 * Compact strides are in elements, row-major, computed as PyTorch does with
 * each zero dim counted as one, so a zero-sized tensor still gets distinct
 * non-zero strides; a stride that would overflow int64 (possible only in a
 * zero-sized tensor) saturates at INT64_MAX.
 */
#include <inttypes.h>
#include <stdio.h>

#include "kiln/tensor.h"

kiln_status_t kiln_shape_element_count(int ndim, const int64_t *shape, int64_t *out_count) {
  if (ndim < 0 || ndim > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "rank %d is outside [0, %d]", ndim, KILN_MAX_RANK);
  }
  if (ndim > 0 && shape == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "shape of rank %d is NULL", ndim);
  }
  char text[KILN_SHAPE_TEXT_CAPACITY];
  int has_zero = 0;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      kiln_shape_format(ndim, shape, text, sizeof(text));
      return KILN_STATUS(INVALID_ARGUMENT, "dim %d is %" PRId64 " in shape %s", i, shape[i], text);
    }
    has_zero |= shape[i] == 0;
  }
  if (has_zero) {
    *out_count = 0;
    return KILN_OK;
  }
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) {
    if (__builtin_mul_overflow(count, shape[i], &count)) {
      kiln_shape_format(ndim, shape, text, sizeof(text));
      return KILN_STATUS(OUT_OF_RANGE, "element count of shape %s overflows int64 at dim %d", text,
                         i);
    }
  }
  *out_count = count;
  return KILN_OK;
}

kiln_status_t kiln_shape_byte_size(kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                   size_t *out_size) {
  size_t element_size = kiln_dtype_size(dtype);
  if (element_size == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "dtype %d is not a kiln dtype", (int)dtype);
  }
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(ndim, shape, &count));
  size_t size;
  if ((uint64_t)count > SIZE_MAX || !kiln_size_mul((size_t)count, element_size, &size)) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(ndim, shape, text, sizeof(text));
    return KILN_STATUS(OUT_OF_RANGE, "byte size of %s shape %s (%" PRId64 " elements) overflows",
                       kiln_dtype_name(dtype), text, count);
  }
  *out_size = size;
  return KILN_OK;
}

void kiln_shape_compact_strides(int ndim, const int64_t *shape, int64_t *out_strides) {
  int64_t stride = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    out_strides[i] = stride;
    int64_t dim = shape[i] > 0 ? shape[i] : 1;
    if (__builtin_mul_overflow(stride, dim, &stride)) {
      stride = INT64_MAX;
    }
  }
}

int kiln_shape_equal(int ndim_a, const int64_t *shape_a, int ndim_b, const int64_t *shape_b) {
  if (ndim_a != ndim_b || ndim_a < 0) {
    return 0;
  }
  for (int i = 0; i < ndim_a; ++i) {
    if (shape_a[i] != shape_b[i]) {
      return 0;
    }
  }
  return 1;
}

/* Appends `prefix` and, when `with_value`, `value`, as snprintf would at
 * `*length`; `*length` counts what did not fit too. */
static void kiln_shape_append(char *buffer, size_t capacity, size_t *length, const char *prefix,
                              int with_value, int64_t value) {
  char *at = *length < capacity ? buffer + *length : NULL;
  size_t room = *length < capacity ? capacity - *length : 0;
  int n = with_value ? snprintf(at, room, "%s%" PRId64, prefix, value)
                     : snprintf(at, room, "%s", prefix);
  *length += n > 0 ? (size_t)n : 0;
}

size_t kiln_shape_format(int ndim, const int64_t *shape, char *buffer, size_t capacity) {
  if (buffer == NULL) {
    capacity = 0;
  }
  if (capacity > 0) {
    buffer[0] = '\0';
  }
  size_t length = 0;
  if (ndim < 0 || ndim > KILN_MAX_RANK || (ndim > 0 && shape == NULL)) {
    kiln_shape_append(buffer, capacity, &length, "(invalid rank ", 1, ndim);
    kiln_shape_append(buffer, capacity, &length, ")", 0, 0);
    return length;
  }
  kiln_shape_append(buffer, capacity, &length, "(", 0, 0);
  for (int i = 0; i < ndim; ++i) {
    kiln_shape_append(buffer, capacity, &length, i ? ", " : "", 1, shape[i]);
  }
  kiln_shape_append(buffer, capacity, &length, ndim == 1 ? ",)" : ")", 0, 0);
  return length;
}
