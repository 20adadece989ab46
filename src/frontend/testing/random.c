/*
 * splitmix64 streams keyed by (seed, name); see random.h. The constants are
 * splitmix64's (the golden-ratio increment and the two multipliers of its
 * mixer) and FNV-1a's 64-bit offset basis and prime.
 */
#include "frontend/testing/random.h"

#define KILN_RANDOM_GOLDEN UINT64_C(0x9E3779B97F4A7C15)
#define KILN_FNV_OFFSET    UINT64_C(0xCBF29CE484222325)
#define KILN_FNV_PRIME     UINT64_C(0x100000001B3)

/* splitmix64's output function: a bijection of 64-bit words. */
static uint64_t kiln_random_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static uint64_t kiln_random_hash_name(const char *name) {
  uint64_t hash = KILN_FNV_OFFSET;
  for (const unsigned char *p = (const unsigned char *)name; *p; ++p) {
    hash = (hash ^ *p) * KILN_FNV_PRIME;
  }
  return hash;
}

void kiln_random_initialize(kiln_random_t *random, uint64_t seed, const char *name) {
  /* Mixing the seed first keeps seeds 0, 1, 2, ... from giving streams that
   * differ in one bit of their starting state. */
  random->state =
      kiln_random_mix(kiln_random_mix(seed + KILN_RANDOM_GOLDEN) ^ kiln_random_hash_name(name));
}

uint64_t kiln_random_next(kiln_random_t *random) {
  random->state += KILN_RANDOM_GOLDEN;
  return kiln_random_mix(random->state);
}

float kiln_random_uniform(kiln_random_t *random, float lo, float hi) {
  double unit = (double)(kiln_random_next(random) >> 40) * 0x1.0p-24;
  return (float)((double)lo + ((double)hi - (double)lo) * unit);
}

void kiln_random_fill_uniform(kiln_random_t *random, float *data, int64_t count, float lo,
                              float hi) {
  for (int64_t i = 0; i < count; ++i) {
    data[i] = kiln_random_uniform(random, lo, hi);
  }
}
