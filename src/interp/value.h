/*
 * Values of the reference interpreter: what a node evaluates to.
 *
 * A value is a tensor (one reference held), a tuple of values (an array of
 * fields from the run's allocator, each owning what it holds), a sequence
 * (its elements as the fields) or an optional (no field, or one), or nothing
 * (a Function node, or a slot not computed yet or already freed). Values are
 * small plain structs kept in an array per evaluated function, one per node;
 * copying a value into another node (a Var taking its argument, a
 * TupleGetItem taking its field, a Tuple taking its fields) retains the
 * tensors rather than copying data, so a tuple costs one small array and
 * tensor data is never duplicated. Releasing a value drops every reference
 * it holds and leaves it empty, so releasing twice is harmless.
 *
 * Tuple values mirror tuple types: an operator with a tuple-typed result
 * (split) gets its outputs as a flat list of tensors, leaves of the type in
 * depth-first order, and kiln_interp_value_from_type rebuilds the nesting;
 * the interpreter's results are the same flattening of the body's value.
 */
#ifndef KILN_INTERP_VALUE_H_
#define KILN_INTERP_VALUE_H_

#include <stddef.h>

#include "ir/type.h"
#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

typedef enum kiln_interp_value_kind_e {
  KILN_INTERP_VALUE_NONE = 0,
  KILN_INTERP_VALUE_TENSOR,
  KILN_INTERP_VALUE_TUPLE,
  KILN_INTERP_VALUE_SEQUENCE, /* fields: the elements (tensors), num_fields of them */
  KILN_INTERP_VALUE_OPTIONAL, /* fields: none (empty) or one */
} kiln_interp_value_kind_t;

typedef struct kiln_interp_value_t {
  kiln_interp_value_kind_t kind;
  kiln_tensor_t *tensor;              /* TENSOR: one reference */
  int num_fields;                     /* TUPLE */
  struct kiln_interp_value_t *fields; /* TUPLE: num_fields values, NULL when 0 */
} kiln_interp_value_t;

/* A tensor value that takes over the caller's reference to `tensor`. */
kiln_interp_value_t kiln_interp_value_of_tensor(kiln_tensor_t *tensor);

/* Drops every reference `value` holds, frees its field arrays and leaves it
 * NONE. */
void kiln_interp_value_release(kiln_allocator_t allocator, kiln_interp_value_t *value);

/* A copy sharing the tensors (retained) with new field arrays. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_value_copy(kiln_allocator_t allocator,
                                                          const kiln_interp_value_t *value,
                                                          kiln_interp_value_t *out_value);

/* A tuple value of `count` fields, all NONE, for the caller to fill. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_value_tuple_create(kiln_allocator_t allocator,
                                                                  int count,
                                                                  kiln_interp_value_t *out_value);
/* A tuple, sequence or optional value of `count` fields, all NONE. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_value_list_create(kiln_allocator_t allocator,
                                                                 kiln_interp_value_kind_t kind,
                                                                 int count,
                                                                 kiln_interp_value_t *out_value);

/* Number of tensors in `value`, nested tuples flattened (0 for NONE). */
size_t kiln_interp_value_leaf_count(const kiln_interp_value_t *value);

/* Writes the tensors of `value` depth-first to tensors[*position...],
 * advancing *position, and retains each. */
void kiln_interp_value_flatten(const kiln_interp_value_t *value, kiln_tensor_t **tensors,
                               size_t *position);

/* Number of tensor leaves of `type`, nested tuples flattened. */
size_t kiln_interp_type_leaf_count(const kiln_type_t *type);

/* Creates one zero-filled tensor per leaf of `type`, depth-first, into
 * tensors[*position...]. On failure the tensors made so far stay in the
 * array (NULL after them) for the caller to release. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_type_create_tensors(kiln_allocator_t allocator,
                                                                   const kiln_type_t *type,
                                                                   kiln_tensor_t **tensors,
                                                                   size_t *position);

/* The value of shape `type` over tensors[*position...], taking over their
 * references (each slot taken is set to NULL, so on failure the caller still
 * releases whatever remains in the array). */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_value_from_type(kiln_allocator_t allocator,
                                                               const kiln_type_t *type,
                                                               kiln_tensor_t **tensors,
                                                               size_t *position,
                                                               kiln_interp_value_t *out_value);

#endif /* KILN_INTERP_VALUE_H_ */
