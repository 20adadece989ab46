/*
 * The expression functor, visitor and mutator (TVM's NodeFunctor,
 * ExprFunctor, ExprVisitor and ExprMutator, in C).
 *
 * A functor is a table of function pointers indexed by node kind (the
 * runtime type index in every node's header). set_dispatch fills an entry
 * and refuses to fill one twice; calling the functor on a kind with no entry
 * is an error naming the kind ("no visit rule for TupleGetItem"). Rules get
 * the functor itself as `self`, so a pass embeds the functor (or a visitor or
 * mutator, whose first member is the functor) at the start of its own struct
 * and reaches its state from `self`: C's version of overriding VisitExpr_.
 *
 * The visitor's default rules walk every child. kiln_expr_visitor_visit keeps
 * a visit counter per node: a node already visited only has its count
 * incremented, so a shared node is walked once however many parents it has.
 *
 * The mutator's default rules rebuild a node only when one of its children
 * changed, and kiln_expr_mutator_mutate memoizes old node -> new node, so a
 * DAG stays a DAG (a shared node is rewritten once and stays shared) and an
 * untouched subgraph comes back as the very same nodes.
 */
#ifndef KILN_IR_FUNCTOR_H_
#define KILN_IR_FUNCTOR_H_

#include <stddef.h>

#include "base/hashmap.h"
#include "ir/expr.h"

typedef struct kiln_expr_functor_t kiln_expr_functor_t;

/* A rule: `result` points at whatever the functor's users agreed on (NULL for
 * visitors, a kiln_expr_t * slot for mutators). */
typedef kiln_status_t (*kiln_expr_rule_fn)(kiln_expr_functor_t *self, kiln_expr_t *expr,
                                           void *result);

struct kiln_expr_functor_t {
  kiln_expr_rule_fn rules[KILN_EXPR_KIND_COUNT_];
};

void kiln_expr_functor_initialize(kiln_expr_functor_t *functor);
/* ALREADY_EXISTS ("dispatch for Call is already set") when the kind has a rule. */
KILN_MUST_USE_RESULT kiln_status_t kiln_expr_functor_set_dispatch(kiln_expr_functor_t *functor,
                                                                  kiln_expr_kind_t kind,
                                                                  kiln_expr_rule_fn rule);
void kiln_expr_functor_clear_dispatch(kiln_expr_functor_t *functor, kiln_expr_kind_t kind);
/* clear_dispatch then set_dispatch: how a pass replaces a default rule. */
void kiln_expr_functor_override(kiln_expr_functor_t *functor, kiln_expr_kind_t kind,
                                kiln_expr_rule_fn rule);
/* Dispatches on expr->kind. */
KILN_MUST_USE_RESULT kiln_status_t kiln_expr_functor_call(kiln_expr_functor_t *functor,
                                                          kiln_expr_t *expr, void *result);

/* ---- visitor ---- */

typedef struct kiln_expr_visitor_t {
  kiln_expr_functor_t functor;  /* first: rules get &visitor->functor */
  kiln_hashmap_t visit_counter; /* kiln_expr_t * -> count */
} kiln_expr_visitor_t;

/* Fills every kind with the default rule (visit the children). */
void kiln_expr_visitor_initialize(kiln_expr_visitor_t *visitor, kiln_allocator_t allocator);
void kiln_expr_visitor_deinitialize(kiln_expr_visitor_t *visitor);
/* Visits `expr` unless it was visited before; counts the visit either way. */
KILN_MUST_USE_RESULT kiln_status_t kiln_expr_visitor_visit(kiln_expr_visitor_t *visitor,
                                                           kiln_expr_t *expr);
/* Visits every child of `expr` (the default rule; overriding rules call it
 * to keep walking). */
KILN_MUST_USE_RESULT kiln_status_t kiln_expr_visitor_visit_children(kiln_expr_visitor_t *visitor,
                                                                    kiln_expr_t *expr);
/* How many times `expr` was reached (0: never). */
size_t kiln_expr_visitor_visit_count(const kiln_expr_visitor_t *visitor, const kiln_expr_t *expr);

/* ---- mutator ---- */

typedef struct kiln_expr_mutator_t {
  kiln_expr_functor_t functor; /* first: rules get &mutator->functor */
  kiln_hashmap_t memo;         /* old kiln_expr_t * -> new kiln_expr_t * */
  kiln_module_t *module;       /* where new nodes are made */
} kiln_expr_mutator_t;

void kiln_expr_mutator_initialize(kiln_expr_mutator_t *mutator, kiln_module_t *module,
                                  kiln_allocator_t allocator);
void kiln_expr_mutator_deinitialize(kiln_expr_mutator_t *mutator);
/* The rewritten `expr`, memoized. */
KILN_MUST_USE_RESULT kiln_status_t kiln_expr_mutator_mutate(kiln_expr_mutator_t *mutator,
                                                            kiln_expr_t *expr,
                                                            kiln_expr_t **out_expr);
/* The default rule: mutate the children; rebuild only if one changed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_expr_mutator_rebuild(kiln_expr_mutator_t *mutator,
                                                             kiln_expr_t *expr,
                                                             kiln_expr_t **out_expr);

#endif /* KILN_IR_FUNCTOR_H_ */
