/*
 * Arithmetic analysis of integer index expressions: bounds and linear forms.
 *
 * The analyzer keeps a scoped stack of known variable ranges (var -> [min,
 * max], pushed by loops and lets, popped when their body is done). Bound
 * analysis walks an integer scalar expression with interval arithmetic in
 * int64: constants, bound variables, + - *, min/max, floordiv and floormod
 * by constants, select, widening casts. A variable with no known range, and
 * any node the rules do not cover, gets its dtype's full range. The result
 * says `exact` when it was computed without int64 overflow; callers that
 * reason about values (the simplifier) also check that the interval fits the
 * expression's dtype, which proves no wrap-around happened on the way.
 *
 * A linear form writes an integer expression as sum(coeff * atom) + constant,
 * where an atom is any subexpression that is not + - or a multiplication by a
 * constant (a variable, a load, a floordiv, ...). Equal atoms (structural
 * equality) merge, so (i*4 + j) - (j + i*4) has no terms and constant 0.
 * Since + - * on wrapping integers form a ring, rewriting an expression into
 * its linear form never changes its value, overflow or not; only the rules
 * that compare or divide need the bounds.
 */
#ifndef KILN_TIR_ANALYSIS_H_
#define KILN_TIR_ANALYSIS_H_

#include "base/array.h"
#include "tir/tir.h"

typedef struct kiln_tir_interval_t {
  int64_t min;
  int64_t max;
  int exact; /* 0: int64 overflowed or not an integer; min/max then mean nothing */
} kiln_tir_interval_t;

typedef struct kiln_tir_analyzer_t {
  kiln_array_t ranges; /* kiln_tir_var_range_t, innermost last */
  /* Index arithmetic over run-time extents is trusted not to wrap (a
   * kernel whose buffers have symbolic dims indexes them in int32: were an
   * index to wrap, the kernel would be wrong before any rewrite). 0 after
   * initialize; see kiln_tir_linear_trusted. */
  int trust_index;
} kiln_tir_analyzer_t;

typedef struct kiln_tir_var_range_t {
  const kiln_tir_var_t *var;
  int64_t min;
  int64_t max;
  const kiln_tir_expr_t *extent; /* a loop over [0, extent) of run-time extent, or NULL */
} kiln_tir_var_range_t;

void kiln_tir_analyzer_initialize(kiln_tir_analyzer_t *analyzer, kiln_allocator_t allocator);
void kiln_tir_analyzer_deinitialize(kiln_tir_analyzer_t *analyzer);
/* Pushes var in [min, max] (inclusive); INVALID_ARGUMENT when min > max. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_analyzer_bind(kiln_tir_analyzer_t *analyzer,
                                                          const kiln_tir_var_t *var, int64_t min,
                                                          int64_t max);
/* Pushes the variable of a loop over [0, extent) whose extent is not a
 * constant (a kernel over run-time extents): var in [0, dtype max - 1],
 * and, as TVM's analyzer does with a fused loop's extent, the extent
 * itself: when it is c * d (c a positive constant, as a linear form), var
 * // d is in [0, c - 1] and var % d in [0, dtype max - 1] (d is positive
 * since the loop runs; the extent is trusted not to wrap, as tensor
 * extents are). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_analyzer_bind_extent(kiln_tir_analyzer_t *analyzer,
                                                                 const kiln_tir_var_t *var,
                                                                 const kiln_tir_expr_t *extent);
/* Pops the innermost binding. */
void kiln_tir_analyzer_unbind(kiln_tir_analyzer_t *analyzer);

/* The values `expr` (an integer or bool scalar) can take. */
kiln_tir_interval_t kiln_tir_analyzer_bound(const kiln_tir_analyzer_t *analyzer,
                                            const kiln_tir_expr_t *expr);
/* Whether `interval` is exact and inside `dtype`'s range. */
int kiln_tir_interval_fits(kiln_tir_interval_t interval, kiln_tir_dtype_t dtype);

#define KILN_TIR_LINEAR_MAX_TERMS 16

typedef struct kiln_tir_linear_term_t {
  const kiln_tir_expr_t *atom;
  int64_t coeff; /* never 0 */
} kiln_tir_linear_term_t;

typedef struct kiln_tir_linear_t {
  kiln_tir_dtype_t dtype;
  int64_t constant;
  int count;
  kiln_tir_linear_term_t terms[KILN_TIR_LINEAR_MAX_TERMS];
} kiln_tir_linear_t;

/* The linear form of an integer scalar `expr`; 0 when it has none (too many
 * terms, or a coefficient overflows int64). */
int kiln_tir_linear_from_expr(const kiln_tir_expr_t *expr, kiln_tir_linear_t *out);
/* An integer scalar comparison a < b (<=, >, >= likewise) as lin < 0 with
 * lin = a - b (a - b - 1 for <=; b - a and b - a - 1 for > and >=), the sides
 * not bounded (a caller that compares must check they cannot wrap); 0 for
 * any other node or a side without a linear form. */
int kiln_tir_linear_from_comparison(const kiln_tir_expr_t *cond, kiln_tir_linear_t *out);
/* Whether `linear`'s value is its exact integer value: its bound fits its
 * dtype, or the analyzer trusts index arithmetic (trust_index) and the
 * bound is exact in int64 with every atom made of variables, constants,
 * + - * and floordiv/floormod only (no load, cast, call or let: data
 * arithmetic that wraps is never trusted). */
int kiln_tir_linear_trusted(const kiln_tir_analyzer_t *analyzer, const kiln_tir_linear_t *linear);
/* a + scale * b (same dtype); 0 on overflow or too many terms. */
int kiln_tir_linear_add_scaled(kiln_tir_linear_t *a, const kiln_tir_linear_t *b, int64_t scale);
/* The interval of a linear form given its atoms' bounds. */
kiln_tir_interval_t kiln_tir_linear_bound(const kiln_tir_analyzer_t *analyzer,
                                          const kiln_tir_linear_t *linear);
/* Builds the canonical expression: terms in order, coefficient 1 bare,
 * negative coefficients subtracted, the constant last; 0 when empty. Fails
 * (OUT_OF_RANGE) when a coefficient or the constant does not fit the dtype. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_linear_to_expr(kiln_arena_t *arena,
                                                           const kiln_tir_linear_t *linear,
                                                           const kiln_tir_expr_t **out_expr);

#endif /* KILN_TIR_ANALYSIS_H_ */
