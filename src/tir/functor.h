/*
 * Visitors and mutators over the loop IR: tables of rules indexed by kind.
 *
 * As for the graph IR (ir/functor.h), a pass is a table of function
 * pointers, one per expression kind and one per statement kind, filled with
 * the default rules at initialization; a pass overrides only the kinds it
 * cares about and calls the default rule (visit or rebuild the children) to
 * keep walking. The pass embeds the visitor or mutator as the first member of
 * its own struct and reaches its state from `self`. A kind whose rule was
 * cleared (set to NULL) is an UNIMPLEMENTED error naming the kind.
 *
 * The mutator's default rules rebuild a node only when a child changed, so an
 * untouched subtree comes back as the very same nodes; rebuilt nodes go
 * through the checking constructors. Unlike the graph IR's, loop-IR mutators
 * do not memoize: loop nests are trees in practice and rules (the simplifier's)
 * depend on the loop ranges in scope, so the same node may rewrite differently
 * in two places. Binding sites (loop, let and buffer variables) are not
 * children: rules see them through the node.
 */
#ifndef KILN_TIR_FUNCTOR_H_
#define KILN_TIR_FUNCTOR_H_

#include "tir/tir.h"

/* ---- visitor ---- */

/* Most operands an expression has (a load with one index per dim). */
#define KILN_TIR_MAX_OPERANDS (KILN_TIR_MAX_DIMS + 2)

/* The operands of `e` in order into `out` (KILN_TIR_MAX_OPERANDS entries):
 * a binary node's a and b; Not's a; Select's condition and both values;
 * Cast's value; a load's indices; Ramp's start and stride; Broadcast's
 * value; a Call's arguments; Let's value and body. Returns their count (0
 * for immediates and variables). */
int kiln_tir_expr_operands(const kiln_tir_expr_t *e, const kiln_tir_expr_t **out);

typedef struct kiln_tir_visitor_t kiln_tir_visitor_t;
typedef kiln_status_t (*kiln_tir_visit_expr_fn)(kiln_tir_visitor_t *self,
                                                const kiln_tir_expr_t *expr);
typedef kiln_status_t (*kiln_tir_visit_stmt_fn)(kiln_tir_visitor_t *self,
                                                const kiln_tir_stmt_t *stmt);

struct kiln_tir_visitor_t {
  kiln_tir_visit_expr_fn expr_rules[KILN_TIR_EXPR_KIND_COUNT_];
  kiln_tir_visit_stmt_fn stmt_rules[KILN_TIR_STMT_KIND_COUNT_];
};

/* Fills every kind with the default rule (visit the children). */
void kiln_tir_visitor_initialize(kiln_tir_visitor_t *visitor);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_visitor_visit_expr(kiln_tir_visitor_t *visitor,
                                                               const kiln_tir_expr_t *expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_visitor_visit_stmt(kiln_tir_visitor_t *visitor,
                                                               const kiln_tir_stmt_t *stmt);
/* The default rules: visit every child expression and statement. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_visitor_expr_children(kiln_tir_visitor_t *visitor,
                                                                  const kiln_tir_expr_t *expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_visitor_stmt_children(kiln_tir_visitor_t *visitor,
                                                                  const kiln_tir_stmt_t *stmt);
/* Whether `expr` mentions any of vars[0..count) (NULL entries are skipped);
 * 1 when the walk fails, which only a malformed tree makes it do, so a
 * caller that moves or drops code on a 0 stays safe. */
int kiln_tir_expr_uses_vars(const kiln_tir_expr_t *expr, int count,
                            const kiln_tir_var_t *const *vars);

/* ---- mutator ---- */

typedef struct kiln_tir_mutator_t kiln_tir_mutator_t;
typedef kiln_status_t (*kiln_tir_mutate_expr_fn)(kiln_tir_mutator_t *self,
                                                 const kiln_tir_expr_t *expr,
                                                 const kiln_tir_expr_t **out_expr);
typedef kiln_status_t (*kiln_tir_mutate_stmt_fn)(kiln_tir_mutator_t *self,
                                                 const kiln_tir_stmt_t *stmt,
                                                 const kiln_tir_stmt_t **out_stmt);

struct kiln_tir_mutator_t {
  kiln_tir_mutate_expr_fn expr_rules[KILN_TIR_EXPR_KIND_COUNT_];
  kiln_tir_mutate_stmt_fn stmt_rules[KILN_TIR_STMT_KIND_COUNT_];
  kiln_arena_t *arena; /* where new nodes are made */
};

void kiln_tir_mutator_initialize(kiln_tir_mutator_t *mutator, kiln_arena_t *arena);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_mutator_mutate_expr(kiln_tir_mutator_t *mutator,
                                                                const kiln_tir_expr_t *expr,
                                                                const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_mutator_mutate_stmt(kiln_tir_mutator_t *mutator,
                                                                const kiln_tir_stmt_t *stmt,
                                                                const kiln_tir_stmt_t **out_stmt);
/* The default rules: mutate the children, rebuild only when one changed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_mutator_rebuild_expr(kiln_tir_mutator_t *mutator,
                                                                 const kiln_tir_expr_t *expr,
                                                                 const kiln_tir_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_mutator_rebuild_stmt(kiln_tir_mutator_t *mutator,
                                                                 const kiln_tir_stmt_t *stmt,
                                                                 const kiln_tir_stmt_t **out_stmt);

#endif /* KILN_TIR_FUNCTOR_H_ */
