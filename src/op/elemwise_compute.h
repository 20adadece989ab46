/*
 * Compute rules of the elementwise operators (elemwise_compute.c), named by
 * the family files' operator definitions: one for the unary operators of
 * elemwise_unary.c, one for the binary ones of elemwise_binary.c (each
 * dispatching on the operator id), and one for where.
 */
#ifndef KILN_OP_ELEMWISE_COMPUTE_H_
#define KILN_OP_ELEMWISE_COMPUTE_H_

#include "op/op.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_unary(const kiln_compute_args_t *args,
                                                      kiln_compute_result_t *out_result);
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_binary(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_compute_where(const kiln_compute_args_t *args,
                                                      kiln_compute_result_t *out_result);

#endif /* KILN_OP_ELEMWISE_COMPUTE_H_ */
