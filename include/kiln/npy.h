/*
 * NumPy .npy files.
 *
 * kiln reads versions 1.0, 2.0 and 3.0 of the format (little-endian or
 * byte-order-free dtypes, C order) into kiln tensors and writes version 1.0
 * (2.0 when the header would not fit), with the header padded so the data
 * starts at a multiple of 64 bytes, as NumPy does. Every malformed input is a
 * status naming the source and what was wrong: bad magic, unsupported version,
 * truncated header or data, a header that is not the dict NumPy writes, an
 * unknown or big-endian descr, Fortran order, a shape that overflows, or data
 * whose length does not match the shape. Codes: DATA_LOSS for a file cut
 * short; UNIMPLEMENTED for a valid file kiln does not read (another version,
 * big-endian, Fortran order, a structured dtype); OUT_OF_RANGE for a shape
 * whose dims or size overflow; INVALID_ARGUMENT for anything else malformed.
 */
#ifndef KILN_NPY_H_
#define KILN_NPY_H_

#include <stddef.h>

#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses .npy bytes; `source_name` (a path, or "<memory>") prefixes errors. */
KILN_MUST_USE_RESULT kiln_status_t kiln_npy_parse(kiln_allocator_t allocator, const void *bytes,
                                                  size_t size, const char *source_name,
                                                  kiln_tensor_t **out_tensor);
KILN_MUST_USE_RESULT kiln_status_t kiln_npy_read_file(kiln_allocator_t allocator, const char *path,
                                                      kiln_tensor_t **out_tensor);

/* Serializes a tensor; the caller frees *out_bytes with `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_npy_serialize(kiln_allocator_t allocator,
                                                      const kiln_tensor_t *tensor, void **out_bytes,
                                                      size_t *out_size);
KILN_MUST_USE_RESULT kiln_status_t kiln_npy_write_file(kiln_allocator_t allocator,
                                                       const kiln_tensor_t *tensor,
                                                       const char *path);

#ifdef __cplusplus
}
#endif

#endif /* KILN_NPY_H_ */
