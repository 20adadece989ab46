/*
 * Eager tensor objects (tensor.h) and the tensor half of the public API:
 * creation from host memory, zeros, .npy files or an existing tensor, in
 * a given context or the default one; reads that wait for the last
 * writer; queued writes and copies (both tensors of one context).
 *
 * A new tensor's contents are complete when it is returned (from_host
 * copies on the caller's thread: nothing else can use the tensor yet), so
 * creation needs no instruction. A read waits on the VM's host notifier
 * until the tensor's pending writes are zero.
 */
#include "eager/tensor.h"

#include <string.h>

#include "eager/builder.h"
#include "eager/context.h"
#include "eager/vm.h"
#include "kiln/npy.h"

kiln_status_t kiln_eager_tensor_create(kiln_eager_context_t *context, kiln_tensor_t *storage,
                                       kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_allocator_t allocator = context->options.allocator;
  kiln_eager_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*tensor), (void **)&tensor));
  atomic_init(&tensor->refs, 1);
  atomic_init(&tensor->pending_writes, 0);
  tensor->allocator = allocator;
  if (!context->is_default) {
    kiln_eager_context_retain(context);
    tensor->context = context;
  }
  kiln_tensor_retain(storage);
  tensor->storage = storage;
  *out_tensor = tensor;
  return KILN_OK;
}

kiln_status_t kiln_eager_tensor_create_empty(kiln_eager_context_t *context, kiln_dtype_t dtype,
                                             int ndim, const int64_t *shape,
                                             kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_tensor_t *storage = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(context->options.allocator, dtype, ndim, shape, &storage));
  kiln_status_t status = kiln_eager_tensor_create(context, storage, out_tensor);
  kiln_tensor_release(storage);
  return status;
}

void kiln_eager_tensor_finish_write(kiln_eager_tensor_t *tensor, kiln_status_t status) {
  kiln_status_t old = tensor->failure;
  tensor->failure =
      status ? kiln_status_make(kiln_status_code(status), kiln_status_file(status),
                                kiln_status_line(status), "%s", kiln_status_message(status))
             : NULL;
  kiln_status_free(old);
  atomic_fetch_sub_explicit(&tensor->pending_writes, 1, memory_order_release);
}

kiln_status_t kiln_eager_tensor_failure(const kiln_eager_tensor_t *tensor) {
  kiln_status_t failure = tensor->failure;
  if (!failure) {
    return KILN_OK;
  }
  return kiln_status_make(kiln_status_code(failure), kiln_status_file(failure),
                          kiln_status_line(failure), "%s", kiln_status_message(failure));
}

void kiln_eager_tensor_retain(kiln_eager_tensor_t *tensor) {
  atomic_fetch_add_explicit(&tensor->refs, 1, memory_order_relaxed);
}

void kiln_eager_tensor_release(kiln_eager_tensor_t *tensor) {
  if (!tensor || atomic_fetch_sub_explicit(&tensor->refs, 1, memory_order_acq_rel) != 1) {
    return;
  }
  kiln_status_free(tensor->failure);
  kiln_tensor_release(tensor->storage);
  kiln_eager_context_t *context = tensor->context;
  kiln_allocator_free(tensor->allocator, tensor);
  kiln_eager_context_release(context);
}

kiln_dtype_t kiln_eager_tensor_dtype(const kiln_eager_tensor_t *tensor) {
  return kiln_tensor_dtype(tensor->storage);
}

int kiln_eager_tensor_ndim(const kiln_eager_tensor_t *tensor) {
  return kiln_tensor_ndim(tensor->storage);
}

const int64_t *kiln_eager_tensor_shape(const kiln_eager_tensor_t *tensor) {
  return kiln_tensor_shape(tensor->storage);
}

/* ---- creation ---- */

kiln_eager_context_t *kiln_eager_tensor_context(const kiln_eager_tensor_t *tensor) {
  return tensor->context; /* NULL: the default context */
}

kiln_status_t kiln_eager_context_tensor_wrap(kiln_eager_context_t *context, kiln_tensor_t *storage,
                                             kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_check(context, "kiln_eager_tensor_wrap"));
  return kiln_eager_tensor_create(context, storage, out_tensor);
}

kiln_status_t kiln_eager_context_tensor_zeros(kiln_eager_context_t *context, kiln_dtype_t dtype,
                                              int ndim, const int64_t *shape,
                                              kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_check(context, "kiln_eager_tensor_zeros"));
  return kiln_eager_tensor_create_empty(context, dtype, ndim, shape, out_tensor);
}

/* Takes `storage` (made by the caller, or NULL after `status`) into a new tensor. */
static kiln_status_t adopt(kiln_eager_context_t *context, kiln_status_t status,
                           kiln_tensor_t *storage, kiln_eager_tensor_t **out_tensor) {
  if (!status) {
    status = kiln_eager_tensor_create(context, storage, out_tensor);
  }
  kiln_tensor_release(storage);
  return status;
}

kiln_status_t kiln_eager_context_tensor_from_host(kiln_eager_context_t *context, kiln_dtype_t dtype,
                                                  int ndim, const int64_t *shape, const void *data,
                                                  size_t data_size,
                                                  kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_check(context, "kiln_eager_tensor_from_host"));
  kiln_tensor_t *storage = NULL;
  kiln_status_t status =
      kiln_status_annotate(kiln_tensor_create_copy(context->options.allocator, dtype, ndim, shape,
                                                   data, data_size, &storage),
                           "kiln_eager_tensor_from_host");
  return adopt(context, status, storage, out_tensor);
}

kiln_status_t kiln_eager_context_tensor_from_npy(kiln_eager_context_t *context, const char *path,
                                                 kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_check(context, "kiln_eager_tensor_from_npy"));
  kiln_tensor_t *storage = NULL;
  kiln_status_t status = kiln_npy_read_file(context->options.allocator, path, &storage);
  return adopt(context, status, storage, out_tensor);
}

kiln_status_t kiln_eager_tensor_wrap(kiln_tensor_t *storage, kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_default(&context));
  return kiln_eager_context_tensor_wrap(context, storage, out_tensor);
}

kiln_status_t kiln_eager_tensor_zeros(kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                      kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_default(&context));
  return kiln_eager_context_tensor_zeros(context, dtype, ndim, shape, out_tensor);
}

kiln_status_t kiln_eager_tensor_from_host(kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                          const void *data, size_t data_size,
                                          kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_default(&context));
  return kiln_eager_context_tensor_from_host(context, dtype, ndim, shape, data, data_size,
                                             out_tensor);
}

kiln_status_t kiln_eager_tensor_from_npy(const char *path, kiln_eager_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_default(&context));
  return kiln_eager_context_tensor_from_npy(context, path, out_tensor);
}

/* ---- reading ---- */

static bool no_pending_writes(void *context) {
  const kiln_eager_tensor_t *tensor = context;
  return atomic_load(&tensor->pending_writes) == 0;
}

/* Waits for the tensor's writers; its failure, or OK. */
static kiln_status_t wait_for_writers(kiln_eager_tensor_t *tensor) {
  if (atomic_load_explicit(&tensor->pending_writes, memory_order_acquire) != 0) {
    kiln_eager_context_t *context = NULL;
    KILN_RETURN_IF_ERROR(kiln_eager_context_of(tensor->context, &context));
    kiln_eager_vm_wait_host(context->vm, no_pending_writes, tensor);
  }
  return kiln_eager_tensor_failure(tensor);
}

kiln_status_t kiln_eager_tensor_read(kiln_eager_tensor_t *tensor, kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(wait_for_writers(tensor));
  kiln_tensor_retain(tensor->storage);
  *out_tensor = tensor->storage;
  return KILN_OK;
}

static kiln_status_t check_size(const char *what, const kiln_eager_tensor_t *tensor,
                                size_t data_size) {
  size_t size = kiln_tensor_byte_size(tensor->storage);
  if (size != data_size) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the tensor holds %zu bytes, the buffer %zu", what,
                       size, data_size);
  }
  return KILN_OK;
}

kiln_status_t kiln_eager_tensor_copy_to_host(kiln_eager_tensor_t *tensor, void *data,
                                             size_t data_size) {
  KILN_RETURN_IF_ERROR(check_size("kiln_eager_tensor_copy_to_host", tensor, data_size));
  KILN_RETURN_IF_ERROR(wait_for_writers(tensor));
  memcpy(data, kiln_tensor_data(tensor->storage), data_size);
  return KILN_OK;
}

/* ---- queued writes ---- */

kiln_status_t kiln_eager_tensor_write(kiln_eager_tensor_t *tensor, const void *data,
                                      size_t data_size) {
  KILN_RETURN_IF_ERROR(check_size("kiln_eager_tensor_write", tensor, data_size));
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_of(tensor->context, &context));
  kiln_eager_builder_t builder;
  KILN_RETURN_IF_ERROR(kiln_eager_builder_initialize(&builder, context, "kiln_eager_tensor_write"));
  KILN_RETURN_IF_ERROR(kiln_eager_builder_copy(&builder, NULL, data, data_size, tensor));
  kiln_eager_builder_submit(&builder);
  return KILN_OK;
}

kiln_status_t kiln_eager_copy(kiln_eager_tensor_t *source, kiln_eager_tensor_t *destination) {
  if (source == destination) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_eager_copy: the source is the destination");
  }
  if (source->context != destination->context) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "kiln_eager_copy: the source and the destination belong to different "
                       "eager contexts");
  }
  if (kiln_eager_tensor_dtype(source) != kiln_eager_tensor_dtype(destination) ||
      !kiln_shape_equal(kiln_eager_tensor_ndim(source), kiln_eager_tensor_shape(source),
                        kiln_eager_tensor_ndim(destination),
                        kiln_eager_tensor_shape(destination))) {
    char a[KILN_SHAPE_TEXT_CAPACITY], b[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_eager_tensor_ndim(source), kiln_eager_tensor_shape(source), a,
                      sizeof(a));
    kiln_shape_format(kiln_eager_tensor_ndim(destination), kiln_eager_tensor_shape(destination), b,
                      sizeof(b));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "kiln_eager_copy: the source is %s %s, the destination %s %s",
                       kiln_dtype_name(kiln_eager_tensor_dtype(source)), a,
                       kiln_dtype_name(kiln_eager_tensor_dtype(destination)), b);
  }
  kiln_eager_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_context_of(source->context, &context));
  kiln_eager_builder_t builder;
  KILN_RETURN_IF_ERROR(kiln_eager_builder_initialize(&builder, context, "kiln_eager_copy"));
  KILN_RETURN_IF_ERROR(kiln_eager_builder_copy(&builder, source, NULL, 0, destination));
  kiln_eager_builder_submit(&builder);
  return KILN_OK;
}
