/*
 * Tensors on DLPack.
 *
 * A kiln_tensor_t is a reference-counted, compact, C-ordered n-dimensional
 * array whose description is a DLPack DLTensor, so kernels, generated code and
 * other frameworks read it without conversion. The header, the shape and
 * stride arrays and the storage are one allocation from the allocator the
 * tensor was created with; storage is aligned to KILN_TENSOR_ALIGNMENT (64
 * bytes). Retain and release are atomic, so a tensor can be shared between
 * threads; the last release frees it.
 *
 * dtypes are one table (KILN_DTYPE_LIST): the name, the DLPack code and bits,
 * and the NumPy descr. bool is DLPack {kDLUInt, 8 bits} stored one byte per
 * element (DLPack 0.6 has no bool code); bfloat16 is {kDLBfloat, 16}.
 */
#ifndef KILN_TENSOR_H_
#define KILN_TENSOR_H_

#include <dlpack/dlpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest rank kiln accepts from any input (files, models, API calls). */
#define KILN_MAX_RANK 32

/* X(ENUM, name, DLPack code, bits, NumPy descr or NULL when NumPy has none) */
#define KILN_DTYPE_LIST(X)                     \
  X(FLOAT32, "float32", kDLFloat, 32, "<f4")   \
  X(FLOAT16, "float16", kDLFloat, 16, "<f2")   \
  X(BFLOAT16, "bfloat16", kDLBfloat, 16, NULL) \
  X(FLOAT64, "float64", kDLFloat, 64, "<f8")   \
  X(INT8, "int8", kDLInt, 8, "|i1")            \
  X(INT16, "int16", kDLInt, 16, "<i2")         \
  X(INT32, "int32", kDLInt, 32, "<i4")         \
  X(INT64, "int64", kDLInt, 64, "<i8")         \
  X(UINT8, "uint8", kDLUInt, 8, "|u1")         \
  X(UINT16, "uint16", kDLUInt, 16, "<u2")      \
  X(UINT32, "uint32", kDLUInt, 32, "<u4")      \
  X(UINT64, "uint64", kDLUInt, 64, "<u8")      \
  X(BOOL, "bool", kDLUInt, 8, "|b1")

typedef enum kiln_dtype_e {
#define KILN_DTYPE_ENUM_(e, name, code, bits, descr) KILN_DTYPE_##e,
  KILN_DTYPE_LIST(KILN_DTYPE_ENUM_)
#undef KILN_DTYPE_ENUM_
      KILN_DTYPE_COUNT_
} kiln_dtype_t;

/* "float32"; "invalid" for a value outside the enum. */
const char *kiln_dtype_name(kiln_dtype_t dtype);
/* Bytes per element; 0 for a value outside the enum. */
size_t kiln_dtype_size(kiln_dtype_t dtype);
/* {code, bits, 1}; bits and lanes 0 for a value outside the enum. */
DLDataType kiln_dtype_to_dl(kiln_dtype_t dtype);
/* The NumPy descr ("<f4"), or NULL when NumPy has no such dtype (bfloat16). */
const char *kiln_dtype_numpy_descr(kiln_dtype_t dtype);
KILN_MUST_USE_RESULT kiln_status_t kiln_dtype_from_name(const char *name, kiln_dtype_t *out_dtype);
/* Note: {kDLUInt, 8, 1} maps to UINT8, never BOOL; bool is a kiln-level choice. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dtype_from_dl(DLDataType dl, kiln_dtype_t *out_dtype);
/* Enough room for kiln_dl_dtype_format of any DLPack dtype. */
#define KILN_DTYPE_TEXT_CAPACITY 64
/* The one way kiln names a DLPack dtype in a message: kiln's name when it
 * has the dtype ("float64", "int64"), else the DLPack fields ("DLPack
 * {kDLFloat (2), bits 8, lanes 1}"). Writes into `buffer` and returns it. */
const char *kiln_dl_dtype_format(DLDataType dl, char *buffer, size_t capacity);
/* Whether `t`'s strides (NULL: row-major) lay its elements out row-major;
 * a tensor with no elements always does (no stride addresses anything). */
bool kiln_dl_is_compact(const DLTensor *t);

/* IEEE half and bfloat16 conversions, round to nearest even, NaN and
 * infinities preserved. */
uint16_t kiln_float32_to_float16(float value);
float kiln_float16_to_float32(uint16_t bits);
uint16_t kiln_float32_to_bfloat16(float value);
float kiln_bfloat16_to_float32(uint16_t bits);

/* ---- shapes ---- */

/* Product of the dims; fails on a negative dim, rank outside [0, KILN_MAX_RANK],
 * or overflow of int64. Rank 0 has one element. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_element_count(int ndim, const int64_t *shape,
                                                            int64_t *out_count);
/* element count * dtype size, failing on overflow of size_t. */
KILN_MUST_USE_RESULT kiln_status_t kiln_shape_byte_size(kiln_dtype_t dtype, int ndim,
                                                        const int64_t *shape, size_t *out_size);
/* Row-major strides in elements, as DLPack counts them. A zero dim counts as
 * one (as in PyTorch), so strides stay distinct; an overflowing stride, which
 * only a zero-sized shape can have, saturates at INT64_MAX. */
void kiln_shape_compact_strides(int ndim, const int64_t *shape, int64_t *out_strides);
int kiln_shape_equal(int ndim_a, const int64_t *shape_a, int ndim_b, const int64_t *shape_b);
/* Enough room for kiln_shape_format of any shape (22 characters a dim). */
#define KILN_SHAPE_TEXT_CAPACITY (KILN_MAX_RANK * 22 + 32)
/* "(1, 3, 224, 224)", "()" for rank 0, "(5,)" for rank 1; snprintf's return. */
size_t kiln_shape_format(int ndim, const int64_t *shape, char *buffer, size_t capacity);

/* ---- tensors ---- */

typedef struct kiln_tensor_t kiln_tensor_t;

/* A zero-filled tensor with a reference count of one. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_create(kiln_allocator_t allocator,
                                                      kiln_dtype_t dtype, int ndim,
                                                      const int64_t *shape,
                                                      kiln_tensor_t **out_tensor);
/* A tensor holding a copy of `data`, which must be exactly the tensor's byte size. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_create_copy(kiln_allocator_t allocator,
                                                           kiln_dtype_t dtype, int ndim,
                                                           const int64_t *shape, const void *data,
                                                           size_t data_size,
                                                           kiln_tensor_t **out_tensor);
/* Called once with `owner` when the last reference to an external tensor goes. */
typedef void (*kiln_tensor_release_fn)(void *owner);
/* A tensor over storage it does not own (zero copy; a DLPack producer's):
 * `data` holds a compact, row-major array of `dtype` and `shape`, aligned to
 * the element size, and stays valid until `release(owner)` runs, once, at the
 * tensor's last release (on whichever thread drops it; `release` may be
 * NULL). Only the header comes from `allocator`. INVALID_ARGUMENT for NULL
 * data of a nonzero size or misaligned data; on failure `release` is not
 * called and the storage stays the caller's. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_create_external(
    kiln_allocator_t allocator, kiln_dtype_t dtype, int ndim, const int64_t *shape, void *data,
    kiln_tensor_release_fn release, void *owner, kiln_tensor_t **out_tensor);
void kiln_tensor_retain(kiln_tensor_t *tensor);
/* Drops one reference; frees the tensor at zero. NULL is ignored. */
void kiln_tensor_release(kiln_tensor_t *tensor);

/* The DLPack view: data, device (CPU), ndim, dtype, shape, strides, byte_offset 0. */
const DLTensor *kiln_tensor_dl(const kiln_tensor_t *tensor);
void *kiln_tensor_data(const kiln_tensor_t *tensor);
kiln_dtype_t kiln_tensor_dtype(const kiln_tensor_t *tensor);
int kiln_tensor_ndim(const kiln_tensor_t *tensor);
const int64_t *kiln_tensor_shape(const kiln_tensor_t *tensor);
int64_t kiln_tensor_element_count(const kiln_tensor_t *tensor);
size_t kiln_tensor_byte_size(const kiln_tensor_t *tensor);
/* Element `index` (row-major, in [0, element_count)) as a double: exact for
 * floats and for integers up to 2^53; bool is 0 or 1. For summaries and
 * comparisons, not for kernels. */
double kiln_tensor_element_as_double(const kiln_tensor_t *tensor, int64_t index);

#ifdef __cplusplus
}
#endif

#endif /* KILN_TENSOR_H_ */
