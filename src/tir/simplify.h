/*
 * The arithmetic simplifier of the loop IR (TVM's arith::Analyzer plus
 * tir.Simplify, in small).
 *
 * A mutator (functor.h) that rewrites bottom-up, children first, with these
 * rules, each exact under the interpreter's semantics:
 *
 * - constant folding of every arithmetic, comparison, logic, select and cast
 *   node whose operands are constants; integers fold in int64 and only when
 *   the result fits the dtype (otherwise the node stays as written), floats
 *   fold in their own precision (a float division by zero never folds); an
 *   integer zero divisor folds to 0 and a float-to-int cast saturates, as
 *   they run (base/scalar_ops.h), and shifts of constants fold;
 * - canonical linear form of integer + - * (analysis.h): like terms merge,
 *   so (i*4 + j) - (j + i*4) becomes 0 and i + 0 becomes i;
 * - with the ranges of the enclosing loop variables (and of lets whose value
 *   is bounded): min/max whose operands are ordered, floordiv and floormod of
 *   c*Q + R by c when R is provably in [0, c) (and the dividend cannot wrap),
 *   comparisons the bounds decide;
 * - Select and IfThenElse with a constant condition keep one side, an
 *   assertion that holds is dropped, And/Or/Not with a constant operand.
 *
 * Rules that cannot prove their precondition leave the node as it was.
 */
#ifndef KILN_TIR_SIMPLIFY_H_
#define KILN_TIR_SIMPLIFY_H_

#include "tir/analysis.h"

/* Simplifies `expr` with the ranges `analyzer` knows (may be NULL: none).
 * New nodes come from `arena`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_simplify_expr(kiln_arena_t *arena,
                                                          kiln_tir_analyzer_t *analyzer,
                                                          const kiln_tir_expr_t *expr,
                                                          const kiln_tir_expr_t **out_expr);
/* Simplifies a statement, learning loop ranges on the way down. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_simplify_stmt(kiln_arena_t *arena,
                                                          kiln_tir_analyzer_t *analyzer,
                                                          const kiln_tir_stmt_t *stmt,
                                                          const kiln_tir_stmt_t **out_stmt);
/* A function with its body simplified (the same function when nothing changed). */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_simplify_prim_func(
    kiln_arena_t *arena, const kiln_tir_prim_func_t *func, const kiln_tir_prim_func_t **out_func);

#endif /* KILN_TIR_SIMPLIFY_H_ */
