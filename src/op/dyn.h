/*
 * Helpers the operators whose output shape depends on input values share
 * (dyn.c, dyn_resize.c, value_shape.c): the import-time type of `rank`
 * anonymous dims, and the compute rule that refuses them on the graph
 * compiler's path.
 */
#ifndef KILN_OP_DYN_H_
#define KILN_OP_DYN_H_

#include "op/compute.h"
#include "op/op.h"

/* A tensor type of `rank` anonymous symbolic dims ("?"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_symbolic_type(kiln_arena_t *arena, kiln_dtype_t dtype,
                                                          int rank, const kiln_type_t **out_type);

/* UNIMPLEMENTED naming the operator: it reads values at run time that the
 * graph compiler would need at build time. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_compute_refuse(const kiln_compute_args_t *args,
                                                           kiln_compute_result_t *out_result);

/* INVALID_ARGUMENT unless input `index` is a tensor of rank <= 1 (a list
 * or one value) of a float dtype (want_float) or an integer one, naming the
 * operator, the input and `what`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_check_list(const kiln_type_relation_t *relation,
                                                       int index, const char *what,
                                                       bool want_float);

#endif /* KILN_OP_DYN_H_ */
