/*
 * Substitution of variables by expressions in the loop IR.
 *
 * Schedules rewrite loop nests by replacing a loop variable with an
 * expression of new ones (split: i -> io * 4 + ii; fuse: i -> f // n); this
 * is that rewrite, a mutator (functor.h) whose Var rule looks the variable up
 * in a small map. Each value must have its variable's dtype (checked up
 * front, INVALID_ARGUMENT naming the variable). Binding sites are left alone:
 * a loop or let that binds a mapped variable keeps its own variable, and uses
 * inside it are replaced like any other (loop-IR variables are unique by
 * construction, so this does not arise from lowering). Untouched subtrees
 * come back as the same nodes.
 */
#ifndef KILN_TIR_SUBSTITUTE_H_
#define KILN_TIR_SUBSTITUTE_H_

#include "tir/tir.h"

typedef struct kiln_tir_var_value_t {
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *value;
} kiln_tir_var_value_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_tir_substitute_expr(kiln_arena_t *arena, int count,
                                                            const kiln_tir_var_value_t *map,
                                                            const kiln_tir_expr_t *expr,
                                                            const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_substitute_stmt(kiln_arena_t *arena, int count,
                                                            const kiln_tir_var_value_t *map,
                                                            const kiln_tir_stmt_t *stmt,
                                                            const kiln_tir_stmt_t **out_stmt);

#endif /* KILN_TIR_SUBSTITUTE_H_ */
