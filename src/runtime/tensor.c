/*
 * Reference-counted tensors in one allocation.
 *
 * A tensor is a single block from its allocator, aligned to
 * KILN_TENSOR_ALIGNMENT:
 *
 *   [kiln_tensor_t | shape[ndim] | strides[ndim] | padding][storage ...]
 *
 * The header part is rounded up to a multiple of the alignment, so the storage
 * is aligned too, and one free releases everything. The DLTensor inside the
 * header points at the shape, strides and storage of the same block; its
 * strides are explicit and compact (never NULL), its device is {kDLCPU, 0} and
 * its byte_offset 0. The allocator is kept in the header so the last release
 * frees with the allocator that made the block. The reference count is atomic:
 * retains are relaxed, and the release that reaches zero acquires every other
 * thread's writes before freeing.
 *
 * An external tensor (kiln_tensor_create_external) is the header block alone;
 * its DLTensor points at storage someone else owns, and the last release
 * frees the header, then calls the owner's release function.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "kiln/tensor.h"

struct kiln_tensor_t {
  atomic_long reference_count;
  kiln_allocator_t allocator;
  kiln_dtype_t dtype;
  int64_t element_count;
  size_t byte_size;
  kiln_tensor_release_fn release_storage; /* external storage only */
  void *storage_owner;
  DLTensor dl;
  int64_t dims[]; /* shape[ndim] then strides[ndim] */
};

static size_t kiln_tensor_header_size(int ndim) {
  size_t size = sizeof(kiln_tensor_t) + 2 * (size_t)ndim * sizeof(int64_t);
  return (size + KILN_TENSOR_ALIGNMENT - 1) & ~(size_t)(KILN_TENSOR_ALIGNMENT - 1);
}

/* How kiln_tensor_allocate provides the storage. */
typedef enum kiln_tensor_storage_e {
  KILN_TENSOR_STORAGE_UNINITIALIZED, /* in the block, for the caller to fill */
  KILN_TENSOR_STORAGE_ZEROED,        /* in the block, zero-filled */
  KILN_TENSOR_STORAGE_EXTERNAL,      /* none: the caller points dl.data elsewhere */
} kiln_tensor_storage_t;

/* Validates the arguments and allocates the block (the header, and the
 * storage unless it is external). */
static kiln_status_t kiln_tensor_allocate(kiln_allocator_t allocator, kiln_dtype_t dtype, int ndim,
                                          const int64_t *shape, kiln_tensor_storage_t storage,
                                          kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  size_t byte_size = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_byte_size(dtype, ndim, shape, &byte_size));
  int64_t element_count = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(ndim, shape, &element_count));
  size_t header_size = kiln_tensor_header_size(ndim);
  size_t total = header_size;
  if (storage != KILN_TENSOR_STORAGE_EXTERNAL && !kiln_size_add(header_size, byte_size, &total)) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "a tensor of %zu bytes is too large to allocate",
                       byte_size);
  }
  void *block = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_aligned(allocator, total, KILN_TENSOR_ALIGNMENT, &block));
  memset(block, 0, storage == KILN_TENSOR_STORAGE_ZEROED ? total : header_size);

  kiln_tensor_t *tensor = block;
  atomic_init(&tensor->reference_count, 1);
  tensor->allocator = allocator;
  tensor->dtype = dtype;
  tensor->element_count = element_count;
  tensor->byte_size = byte_size;
  int64_t *dl_shape = tensor->dims;
  int64_t *dl_strides = tensor->dims + ndim;
  if (ndim > 0) {
    memcpy(dl_shape, shape, (size_t)ndim * sizeof(int64_t));
  }
  kiln_shape_compact_strides(ndim, dl_shape, dl_strides);
  tensor->dl = (DLTensor){
      .data = (char *)block + header_size,
      .device = {kDLCPU, 0},
      .ndim = ndim,
      .dtype = kiln_dtype_to_dl(dtype),
      .shape = dl_shape,
      .strides = dl_strides,
      .byte_offset = 0,
  };
  *out_tensor = tensor;
  return KILN_OK;
}

kiln_status_t kiln_tensor_create(kiln_allocator_t allocator, kiln_dtype_t dtype, int ndim,
                                 const int64_t *shape, kiln_tensor_t **out_tensor) {
  return kiln_tensor_allocate(allocator, dtype, ndim, shape, KILN_TENSOR_STORAGE_ZEROED,
                              out_tensor);
}

kiln_status_t kiln_tensor_create_copy(kiln_allocator_t allocator, kiln_dtype_t dtype, int ndim,
                                      const int64_t *shape, const void *data, size_t data_size,
                                      kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  size_t byte_size = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_byte_size(dtype, ndim, shape, &byte_size));
  if (data_size != byte_size) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(ndim, shape, text, sizeof(text));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "data is %zu bytes but a %s tensor of shape %s needs %zu bytes", data_size,
                       kiln_dtype_name(dtype), text, byte_size);
  }
  if (data == NULL && data_size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "data of %zu bytes is NULL", data_size);
  }
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_allocate(allocator, dtype, ndim, shape,
                                            KILN_TENSOR_STORAGE_UNINITIALIZED, &tensor));
  if (byte_size > 0) {
    memcpy(tensor->dl.data, data, byte_size);
  }
  *out_tensor = tensor;
  return KILN_OK;
}

kiln_status_t kiln_tensor_create_external(kiln_allocator_t allocator, kiln_dtype_t dtype, int ndim,
                                          const int64_t *shape, void *data,
                                          kiln_tensor_release_fn release, void *owner,
                                          kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  size_t byte_size = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_byte_size(dtype, ndim, shape, &byte_size));
  if (data == NULL && byte_size > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "external data of %zu bytes is NULL", byte_size);
  }
  size_t element_size = kiln_dtype_size(dtype);
  if (element_size > 0 && (uintptr_t)data % element_size != 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "external %s data at %p is not aligned to %zu bytes",
                       kiln_dtype_name(dtype), data, element_size);
  }
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_allocate(allocator, dtype, ndim, shape, KILN_TENSOR_STORAGE_EXTERNAL, &tensor));
  tensor->dl.data = data;
  tensor->release_storage = release;
  tensor->storage_owner = owner;
  *out_tensor = tensor;
  return KILN_OK;
}

void kiln_tensor_retain(kiln_tensor_t *tensor) {
  atomic_fetch_add_explicit(&tensor->reference_count, 1, memory_order_relaxed);
}

void kiln_tensor_release(kiln_tensor_t *tensor) {
  if (tensor == NULL) {
    return;
  }
  if (atomic_fetch_sub_explicit(&tensor->reference_count, 1, memory_order_release) != 1) {
    return;
  }
  atomic_thread_fence(memory_order_acquire);
  kiln_allocator_t allocator = tensor->allocator;
  kiln_tensor_release_fn release_storage = tensor->release_storage;
  void *storage_owner = tensor->storage_owner;
  kiln_allocator_free(allocator, tensor);
  if (release_storage != NULL) {
    release_storage(storage_owner);
  }
}

const DLTensor *kiln_tensor_dl(const kiln_tensor_t *tensor) {
  return &tensor->dl;
}

void *kiln_tensor_data(const kiln_tensor_t *tensor) {
  return tensor->dl.data;
}

kiln_dtype_t kiln_tensor_dtype(const kiln_tensor_t *tensor) {
  return tensor->dtype;
}

int kiln_tensor_ndim(const kiln_tensor_t *tensor) {
  return tensor->dl.ndim;
}

const int64_t *kiln_tensor_shape(const kiln_tensor_t *tensor) {
  return tensor->dl.shape;
}

int64_t kiln_tensor_element_count(const kiln_tensor_t *tensor) {
  return tensor->element_count;
}

size_t kiln_tensor_byte_size(const kiln_tensor_t *tensor) {
  return tensor->byte_size;
}

double kiln_tensor_element_as_double(const kiln_tensor_t *tensor, int64_t index) {
  const void *data = kiln_tensor_data(tensor);
  switch (kiln_tensor_dtype(tensor)) {
  case KILN_DTYPE_FLOAT32:
    return ((const float *)data)[index];
  case KILN_DTYPE_FLOAT16:
    return kiln_float16_to_float32(((const uint16_t *)data)[index]);
  case KILN_DTYPE_BFLOAT16:
    return kiln_bfloat16_to_float32(((const uint16_t *)data)[index]);
  case KILN_DTYPE_FLOAT64:
    return ((const double *)data)[index];
  case KILN_DTYPE_INT8:
    return ((const int8_t *)data)[index];
  case KILN_DTYPE_INT16:
    return ((const int16_t *)data)[index];
  case KILN_DTYPE_INT32:
    return ((const int32_t *)data)[index];
  case KILN_DTYPE_INT64:
    return (double)((const int64_t *)data)[index];
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_BOOL:
    return ((const uint8_t *)data)[index];
  case KILN_DTYPE_UINT16:
    return ((const uint16_t *)data)[index];
  case KILN_DTYPE_UINT32:
    return ((const uint32_t *)data)[index];
  case KILN_DTYPE_UINT64:
    return (double)((const uint64_t *)data)[index];
  case KILN_DTYPE_COUNT_:
    break;
  }
  return NAN;
}

bool kiln_dl_is_compact(const DLTensor *t) {
  int64_t expected = 1;
  for (int d = 0; d < t->ndim; ++d) {
    if (t->shape[d] == 0) {
      return true;
    }
  }
  for (int d = t->ndim - 1; t->strides && d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expected) {
      return false;
    }
    expected *= t->shape[d];
  }
  return true;
}
