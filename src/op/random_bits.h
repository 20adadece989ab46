/*
 * kiln's random numbers: a counter-based generator, so that element n of a
 * random tensor is a pure function of the seed and n. The reference kernels
 * (transform_random.c) call these functions; the compute rules
 * (transform_random_compute.c) build the same integer operations in the
 * loop IR, so every execution path gives the same numbers for a seed, in
 * any order and on any number of threads.
 *
 * The mixing function is the 32-bit integer hash "lowbias32" (C. Wellons,
 * "Prospecting for hash functions", 2018): x ^= x >> 16, x *= 0x7feb352d,
 * x ^= x >> 15, x *= 0x846ca68b, x ^= x >> 16, every step a bijection of
 * 32-bit words. The seed (ONNX's float attribute, as a double) becomes a
 * 32-bit key: hash(low word ^ hash(high word ^ 0x9e3779b9)). Draw d of
 * element n (d = 0, 1) takes the 64-bit counter c = 2n + d and gives the
 * word hash(hash(key ^ low32(c)) ^ high32(c)), and the unit value
 * word / 2^32, in [0, 1), exactly representable as a double.
 */
#ifndef KILN_OP_RANDOM_BITS_H_
#define KILN_OP_RANDOM_BITS_H_

#include <stdint.h>
#include <string.h>

#define KILN_RANDOM_MUL1      0x7feb352du
#define KILN_RANDOM_MUL2      0x846ca68bu
#define KILN_RANDOM_SEED_SALT 0x9e3779b9u
#define KILN_RANDOM_UNIT      (1.0 / 4294967296.0)

static inline uint32_t kiln_random_hash(uint32_t x) {
  x ^= x >> 16;
  x *= KILN_RANDOM_MUL1;
  x ^= x >> 15;
  x *= KILN_RANDOM_MUL2;
  x ^= x >> 16;
  return x;
}

/* The 32-bit key of a seed. */
static inline uint32_t kiln_random_key(double seed) {
  uint64_t bits = 0;
  memcpy(&bits, &seed, sizeof(bits));
  uint32_t high = kiln_random_hash((uint32_t)(bits >> 32) ^ KILN_RANDOM_SEED_SALT);
  return kiln_random_hash((uint32_t)bits ^ high);
}

/* Draw `draw` (0 or 1) of element `n`, as a word. */
static inline uint32_t kiln_random_word(uint32_t key, uint64_t n, int draw) {
  uint64_t counter = 2 * n + (uint64_t)draw;
  return kiln_random_hash(kiln_random_hash(key ^ (uint32_t)counter) ^ (uint32_t)(counter >> 32));
}

/* Draw `draw` of element `n` in [0, 1). */
static inline double kiln_random_unit(uint32_t key, uint64_t n, int draw) {
  return (double)kiln_random_word(key, n, draw) * KILN_RANDOM_UNIT;
}

#endif /* KILN_OP_RANDOM_BITS_H_ */
