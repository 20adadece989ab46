/*
 * A small decoder of raw DEFLATE data (RFC 1951), what a .npz member
 * written by numpy.savez_compressed holds, and the CRC-32 a zip file
 * records per member: kiln reads .npz without a zlib dependency.
 *
 * The decoder follows zlib's puff.c (Mark Adler's reference inflater):
 * canonical Huffman codes decoded a bit at a time from counts per length,
 * the three block kinds (stored, fixed codes, dynamic codes), and a bound
 * check before every read and every write, so malformed data is an error
 * string and never a read or write outside the buffers. The output size is
 * known (the zip records it), so the caller gives a buffer of exactly that
 * size and the data must fill it.
 */
#ifndef KILN_RUNTIME_INFLATE_H_
#define KILN_RUNTIME_INFLATE_H_

#include <stddef.h>
#include <stdint.h>

/* Decodes `in` into exactly `out_size` bytes of `out`; NULL on success,
 * else what was wrong ("data cut short", "bad distance", ...). */
const char *kiln_inflate(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

/* The CRC-32 of zip and gzip (polynomial 0xEDB88320). */
uint32_t kiln_crc32(const uint8_t *data, size_t size);

#endif /* KILN_RUNTIME_INFLATE_H_ */
