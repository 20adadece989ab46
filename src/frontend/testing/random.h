/*
 * Deterministic random numbers for the built-in workloads' weights.
 *
 * The generator is splitmix64 (Steele, Lea and Flood; the seeder of
 * xoshiro): a 64-bit counter advanced by the golden-ratio increment and
 * passed through a bijective mixer. It is tiny, has no bad seeds and its
 * output is the same on every platform, which is all the weights need; it
 * is not for cryptography. Every parameter draws from its own stream, keyed
 * by the workload seed and the parameter's name (FNV-1a of the name, mixed
 * with the seed), so a weight is a pure function of (seed, name, shape):
 * adding a layer to a network changes no other layer's values, and the
 * order in which a network creates its parameters does not matter. Floats
 * take the top 24 bits of a draw, so [0, 1) is sampled on a grid that
 * float32 holds exactly.
 */
#ifndef KILN_FRONTEND_TESTING_RANDOM_H_
#define KILN_FRONTEND_TESTING_RANDOM_H_

#include <stdint.h>

typedef struct kiln_random_t {
  uint64_t state;
} kiln_random_t;

/* The stream of parameter `name` under workload seed `seed`. */
void kiln_random_initialize(kiln_random_t *random, uint64_t seed, const char *name);

/* The next 64 random bits. */
uint64_t kiln_random_next(kiln_random_t *random);

/* A float in [lo, hi]: lo + (hi - lo) * u with u uniform on {0, 2^-24, ..., 1 - 2^-24}
 * (the rounding to float may reach hi). */
float kiln_random_uniform(kiln_random_t *random, float lo, float hi);

/* Fills `count` floats with kiln_random_uniform(lo, hi), in order. */
void kiln_random_fill_uniform(kiln_random_t *random, float *data, int64_t count, float lo,
                              float hi);

#endif /* KILN_FRONTEND_TESTING_RANDOM_H_ */
