/*
 * NumPy .npy files, and .npz files (zips of them; at the end).
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

/* ---- .npz: NumPy's zip of .npy files (numpy.savez, savez_compressed) ----
 *
 * kiln reads the members a zip stores (numpy.savez) or deflates
 * (numpy.savez_compressed), zip64 records included, each checked against
 * its CRC-32 and parsed as .npy; a member is named as NumPy's load names it,
 * its file name without ".npy". Errors name the file and the member: a
 * file that is not a zip or is cut short (INVALID_ARGUMENT, DATA_LOSS), a
 * member that is encrypted, compressed another way or not a .npy
 * (UNIMPLEMENTED), corrupt deflate data or a CRC mismatch (DATA_LOSS). */

typedef struct kiln_npz_t kiln_npz_t;

/* Parses .npz bytes; `source_name` (a path, or "<memory>") prefixes errors. */
KILN_MUST_USE_RESULT kiln_status_t kiln_npz_parse(kiln_allocator_t allocator, const void *bytes,
                                                  size_t size, const char *source_name,
                                                  kiln_npz_t **out_npz);
KILN_MUST_USE_RESULT kiln_status_t kiln_npz_read_file(kiln_allocator_t allocator, const char *path,
                                                      kiln_npz_t **out_npz);
/* Releases the arrays; NULL is a no-op. */
void kiln_npz_destroy(kiln_npz_t *npz);
int kiln_npz_count(const kiln_npz_t *npz);
/* The name of array `index` ("x" for the member "x.npy"), or NULL outside
 * [0, count). */
const char *kiln_npz_name(const kiln_npz_t *npz, int index);
/* Array `index`, borrowed (retain it to keep it past the npz), or NULL. */
kiln_tensor_t *kiln_npz_tensor(const kiln_npz_t *npz, int index);
/* The index of the array named `name`, or -1. */
int kiln_npz_find(const kiln_npz_t *npz, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* KILN_NPY_H_ */
