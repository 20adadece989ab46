/*
 * Types of the graph IR: tensor types and tuple types.
 *
 * A tensor type is a dtype and a static shape (int64 dims; symbolic dims are
 * resolved at import). A tuple type is a list of field types, for operators
 * with several outputs (split) and for Tuple nodes. Types are immutable and
 * live in an arena (the module's), so they are shared freely between nodes.
 * Every type starts with a kiln_type_t header holding its kind; kiln_type_as_*
 * are the checked downcasts.
 */
#ifndef KILN_IR_TYPE_H_
#define KILN_IR_TYPE_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

typedef enum kiln_type_kind_e {
  KILN_TYPE_KIND_TENSOR,
  KILN_TYPE_KIND_TUPLE,
} kiln_type_kind_t;

typedef struct kiln_type_t {
  kiln_type_kind_t kind;
} kiln_type_t;

typedef struct kiln_tensor_type_t {
  kiln_type_t base;
  kiln_dtype_t dtype;
  int ndim;
  const int64_t *shape; /* ndim dims, in the arena */
} kiln_tensor_type_t;

typedef struct kiln_tuple_type_t {
  kiln_type_t base;
  int count;
  const kiln_type_t *const *fields;
} kiln_tuple_type_t;

/* Validates dtype, rank and dims (non-negative, element count fits int64)
 * and copies the shape into the arena. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_type_create(kiln_arena_t *arena, kiln_dtype_t dtype,
                                                           int ndim, const int64_t *shape,
                                                           const kiln_type_t **out_type);
/* The tensor type of a tensor value: its dtype and shape. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_type_of(kiln_arena_t *arena,
                                                       const kiln_tensor_t *tensor,
                                                       const kiln_type_t **out_type);

/* Copies the field list into the arena; fields must be non-NULL. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tuple_type_create(kiln_arena_t *arena, int count,
                                                          const kiln_type_t *const *fields,
                                                          const kiln_type_t **out_type);

/* NULL when `type` is NULL or of the other kind. */
const kiln_tensor_type_t *kiln_type_as_tensor(const kiln_type_t *type);
const kiln_tuple_type_t *kiln_type_as_tuple(const kiln_type_t *type);

/* Structural equality; NULL equals only NULL. */
bool kiln_type_equal(const kiln_type_t *a, const kiln_type_t *b);

/* Relay's spelling: "Tensor[(1, 64, 112, 112), float32]", tuples as
 * "(Tensor[(2), float32], Tensor[(3), float32])"; NULL as "?". */
KILN_MUST_USE_RESULT kiln_status_t kiln_type_format(const kiln_type_t *type, kiln_strbuf_t *sb);

/* kiln_type_format into a caller buffer of KILN_IR_TYPE_TEXT_CAPACITY bytes,
 * cut with "..." when longer (for error messages); returns the buffer. */
#define KILN_IR_TYPE_TEXT_CAPACITY 256
const char *kiln_type_text(const kiln_type_t *type, char *buffer);

#endif /* KILN_IR_TYPE_H_ */
