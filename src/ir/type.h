/*
 * Types of the graph IR: tensor, tuple, sequence, optional and function types.
 *
 * A tensor type is a dtype and a shape. A dim is static (a non-negative
 * int64) or symbolic: a dimension variable (TVM's tir.Var in a relax shape,
 * Relay's Any when anonymous) with a name and an optional upper bound. The
 * shape array keeps one int64 per dim, -1 for a symbolic dim, and a parallel
 * array `vars` names the variable of each symbolic dim; `vars` is NULL when
 * every dim is static, so every user of static shapes reads `shape` as before
 * once it has checked kiln_tensor_type_is_static. Two symbolic dims are the
 * same when they are one variable or have the same name; anonymous dims ("?")
 * compare equal to each other, as Relay's Any does. A tuple type is a list
 * of field types, for operators with several outputs (split) and for Tuple
 * nodes. Types are immutable and live in an arena (the module's), so they
 * are shared freely between nodes. Every type starts with a kiln_type_t
 * header holding its kind; kiln_type_as_* are the checked downcasts.
 *
 * A sequence type (ONNX's seq(tensor)) is an element dtype and, when every
 * element is known to have it, the elements' tensor type; otherwise the
 * element shapes are left to run time (a SequenceEmpty, an insert of another
 * shape). An optional type wraps one tensor or sequence type. A function
 * type (Relay's FuncType) is what a Function passed to a control-flow
 * operator (if, loop, scan, seq.map) looks like to that operator's type
 * relation: its parameter types and its result type. docs/control-flow.md.
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
  KILN_TYPE_KIND_SEQUENCE,
  KILN_TYPE_KIND_OPTIONAL,
  KILN_TYPE_KIND_FUNC,
} kiln_type_kind_t;

typedef struct kiln_type_t {
  kiln_type_kind_t kind;
} kiln_type_t;

/* A dimension variable. Named ones print as their name, anonymous ones
 * (name "") as "?"; upper_bound is -1 when there is none. */
typedef struct kiln_dim_var_t {
  const char *name;
  int64_t upper_bound;
} kiln_dim_var_t;

typedef struct kiln_tensor_type_t {
  kiln_type_t base;
  kiln_dtype_t dtype;
  int ndim;
  const int64_t *shape;              /* ndim dims, in the arena; -1 where symbolic */
  const kiln_dim_var_t *const *vars; /* NULL when static; else ndim entries, NULL when static */
} kiln_tensor_type_t;

typedef struct kiln_tuple_type_t {
  kiln_type_t base;
  int count;
  const kiln_type_t *const *fields;
} kiln_tuple_type_t;

typedef struct kiln_sequence_type_t {
  kiln_type_t base;
  kiln_dtype_t dtype;
  const kiln_type_t *element; /* every element's tensor type, or NULL: known at run time */
} kiln_sequence_type_t;

typedef struct kiln_optional_type_t {
  kiln_type_t base;
  const kiln_type_t *element; /* a tensor or sequence type */
} kiln_optional_type_t;

typedef struct kiln_func_type_t {
  kiln_type_t base;
  int num_params;
  const kiln_type_t *const *params;
  const kiln_type_t *ret; /* NULL until the function's body is typed */
} kiln_func_type_t;

/* Validates dtype, rank and dims (non-negative, element count fits int64)
 * and copies the shape into the arena. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_type_create(kiln_arena_t *arena, kiln_dtype_t dtype,
                                                           int ndim, const int64_t *shape,
                                                           const kiln_type_t **out_type);
/* A dimension variable in the arena: `name` is "" (anonymous) or an
 * identifier ([A-Za-z_][A-Za-z0-9_]*); upper_bound is -1 (none) or >= 0. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dim_var_create(kiln_arena_t *arena, const char *name,
                                                       int64_t upper_bound,
                                                       const kiln_dim_var_t **out_var);
/* A tensor type whose dim i is symbolic when vars[i] is not NULL (shape[i] is
 * then ignored); vars NULL, or all NULL, gives a static type. Static dims are
 * validated as kiln_tensor_type_create does. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_type_create_symbolic(
    kiln_arena_t *arena, kiln_dtype_t dtype, int ndim, const int64_t *shape,
    const kiln_dim_var_t *const *vars, const kiln_type_t **out_type);
/* Whether every dim is static. */
bool kiln_tensor_type_is_static(const kiln_tensor_type_t *type);
/* Whether a type (tensor, or every field of a tuple, recursively) is static;
 * NULL is static. */
bool kiln_type_is_static(const kiln_type_t *type);
/* The first symbolic dim of `type` (tuples searched in order): its variable
 * and index, or NULL when the type is static. */
const kiln_dim_var_t *kiln_type_first_symbolic(const kiln_type_t *type, int *out_dim);
/* Whether two dimension variables are the same (see above). */
bool kiln_dim_var_equal(const kiln_dim_var_t *a, const kiln_dim_var_t *b);
/* The variable's name, or "?" when anonymous. */
const char *kiln_dim_var_text(const kiln_dim_var_t *var);

/* The tensor type of a tensor value: its dtype and shape. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tensor_type_of(kiln_arena_t *arena,
                                                       const kiln_tensor_t *tensor,
                                                       const kiln_type_t **out_type);

/* Copies the field list into the arena; fields must be non-NULL. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tuple_type_create(kiln_arena_t *arena, int count,
                                                          const kiln_type_t *const *fields,
                                                          const kiln_type_t **out_type);

/* A sequence of `dtype` tensors; `element` (a tensor type of that dtype) or
 * NULL when the elements' shapes are known only at run time. */
KILN_MUST_USE_RESULT kiln_status_t kiln_sequence_type_create(kiln_arena_t *arena,
                                                             kiln_dtype_t dtype,
                                                             const kiln_type_t *element,
                                                             const kiln_type_t **out_type);
/* An optional of `element`, a tensor or sequence type. */
KILN_MUST_USE_RESULT kiln_status_t kiln_optional_type_create(kiln_arena_t *arena,
                                                             const kiln_type_t *element,
                                                             const kiln_type_t **out_type);
/* A function type; `ret` may be NULL (not inferred yet). */
KILN_MUST_USE_RESULT kiln_status_t kiln_func_type_create(kiln_arena_t *arena, int num_params,
                                                         const kiln_type_t *const *params,
                                                         const kiln_type_t *ret,
                                                         const kiln_type_t **out_type);

/* NULL when `type` is NULL or of another kind. */
const kiln_tensor_type_t *kiln_type_as_tensor(const kiln_type_t *type);
const kiln_tuple_type_t *kiln_type_as_tuple(const kiln_type_t *type);
const kiln_sequence_type_t *kiln_type_as_sequence(const kiln_type_t *type);
const kiln_optional_type_t *kiln_type_as_optional(const kiln_type_t *type);
const kiln_func_type_t *kiln_type_as_func(const kiln_type_t *type);

/* Whether `type` is or holds (in a tuple) a sequence or optional type: a
 * value the graph compiler cannot plan (docs/control-flow.md). */
bool kiln_type_has_sequence_or_optional(const kiln_type_t *type);

/* Structural equality; NULL equals only NULL. */
bool kiln_type_equal(const kiln_type_t *a, const kiln_type_t *b);

/* The most specific type that values of `a` and of `b` both have: `a` when
 * they are equal; tensors of one dtype and rank with an anonymous symbolic
 * dim where their dims differ; a sequence of the same dtype whose element
 * type is known only when both know the same one; optionals and tuples of
 * joined parts (an optional and a value: an optional of their join, since a
 * value is passed where an optional is taken, as ONNX does). INVALID_ARGUMENT when they differ
 * otherwise (other dtypes or ranks). */
KILN_MUST_USE_RESULT kiln_status_t kiln_type_join(kiln_arena_t *arena, const kiln_type_t *a,
                                                  const kiln_type_t *b,
                                                  const kiln_type_t **out_type);

/* Relay's spelling: "Tensor[(1, 64, 112, 112), float32]", a symbolic dim
 * by its name ("Tensor[(n, 384), float32]"), "?" when anonymous, and
 * "n<=128" when it has an upper bound; tuples as
 * "(Tensor[(2), float32], Tensor[(3), float32])"; sequences as
 * "Sequence[Tensor[(2), float32]]" or "Sequence[float32]" (shapes known at
 * run time), optionals as "Optional[...]", function types as
 * "fn (Tensor[(2), float32]) -> Tensor[(2), float32]"; NULL as "?". */
KILN_MUST_USE_RESULT kiln_status_t kiln_type_format(const kiln_type_t *type, kiln_strbuf_t *sb);

/* kiln_type_format into a caller buffer of KILN_IR_TYPE_TEXT_CAPACITY bytes,
 * cut with "..." when longer (for error messages); returns the buffer. */
#define KILN_IR_TYPE_TEXT_CAPACITY 256
const char *kiln_type_text(const kiln_type_t *type, char *buffer);

#endif /* KILN_IR_TYPE_H_ */
