/*
 * Run-time shapes in the reference interpreter: fitting inputs to parameter
 * types with symbolic dims, and the concrete type of a call whose checked
 * type is not static; see shapes.c.
 */
#ifndef KILN_INTERP_SHAPES_H_
#define KILN_INTERP_SHAPES_H_

#include "ir/expr.h"
#include "kiln/tensor.h"

/* Sizes the named dimension variables took from a run's inputs. */
#define KILN_INTERP_MAX_BINDINGS 64
typedef struct kiln_interp_bindings_t {
  int count;
  const char *names[KILN_INTERP_MAX_BINDINGS];
  int64_t sizes[KILN_INTERP_MAX_BINDINGS];
} kiln_interp_bindings_t;

/* Whether `tensor` fits `type`: its dtype and rank, every static dim, every
 * symbolic dim within its upper bound and, for a named one, the size the
 * variable took from an earlier input (a new variable is bound here). */
KILN_MUST_USE_RESULT bool kiln_interp_tensor_fits(kiln_interp_bindings_t *bindings,
                                                  const kiln_tensor_type_t *type,
                                                  const kiln_tensor_t *tensor);

/* Whether a call's outputs must be typed at run time: its checked type or
 * an argument's has a symbolic dim. */
bool kiln_interp_call_is_dynamic(const kiln_call_t *call);

/* The concrete output type of operator call `call` on `inputs`: the
 * operator's shape function when it has one, else its type relation on the
 * inputs' concrete types. With `check` (the call has symbolic dims), it is
 * then checked against the call's checked type (structure, dtypes, ranks,
 * static dims, upper bounds), INVALID_ARGUMENT showing both types when they
 * disagree; without (a static call whose inputs came in other shapes, as a
 * loop body's carried values may), it is taken as it is. Made in `arena`.
 * The interpreter's one way of typing a call at run time. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_call_type(kiln_arena_t *arena,
                                                         const kiln_call_t *call,
                                                         kiln_tensor_t *const *inputs, bool check,
                                                         const kiln_type_t **out_type);

#endif /* KILN_INTERP_SHAPES_H_ */
