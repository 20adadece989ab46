/*
 * The random operators' attributes and compute rule (transform_random.c,
 * transform_random_compute.c). One struct serves the three: uniform reads
 * shape, dtype, low, high and seed; normal shape, dtype, mean, scale and
 * seed; bernoulli dtype and seed.
 */
#ifndef KILN_OP_RANDOM_ATTRS_H_
#define KILN_OP_RANDOM_ATTRS_H_

#include "op/compute.h"
#include "op/op.h"

typedef struct kiln_random_attrs_t {
  kiln_ints_t shape;
  kiln_dtype_t dtype;
  double low, high;
  double mean, scale;
  double seed;
} kiln_random_attrs_t;

/* 2 pi, as the reference and the compute rule both write it. */
#define KILN_RANDOM_TWO_PI 6.283185307179586

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_random(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);

#endif /* KILN_OP_RANDOM_ATTRS_H_ */
