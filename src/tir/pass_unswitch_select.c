/*
 * unswitch_select: a select that a loop nest evaluates with the same
 * condition at every iteration becomes a branch around the nest (loop
 * unswitching, for Select expressions).
 *
 * A perfect nest is a chain of For loops whose innermost body is one
 * BufferStore. When the stored value holds a Select whose condition uses
 * none of the nest's loop variables (and the value binds no Let), the nest
 * becomes IfThenElse(condition, nest with the select's true value, nest
 * with its false value), and each copy is unswitched again. Concatenation
 * is the case in point: its output reads, at every element, the input whose
 * range holds it, a chain of selects over all inputs, each input read at a
 * clamped index; a Select evaluates both values, so every output vector
 * loaded every input. Scheduled with the concatenated axis in the parallel
 * loop and the rest inside, the chain's conditions are the same for the
 * whole inner nest, and after this pass each copy of the nest reads one
 * input, with contiguous loads the vectorizer sees. A nest grows at most
 * KILN_TIR_UNSWITCH_MAX_COPIES copies (the rest of a longer chain stays
 * selects). A Select and the IfThenElse it becomes compute the same values
 * (expressions have no side effects, and the unused value is no longer
 * computed), so the pass never changes a result. It runs after
 * storage_flatten, before vectorize, so the copies' inner loops vectorize
 * without conditions.
 */
#include "tir/functor.h"
#include "tir/transform.h"

#define KILN_TIR_UNSWITCH_MAX_COPIES 64
#define MAX_NEST                     KILN_TIR_MAX_DIMS

typedef struct nest_t {
  int depth;
  const kiln_tir_var_t *vars[MAX_NEST];
  const kiln_tir_buffer_store_t *store;
} nest_t;

/* Whether `s` is a perfect nest of at most MAX_NEST loops. */
static int perfect_nest(const kiln_tir_stmt_t *s, nest_t *out) {
  out->depth = 0;
  while (s->kind == KILN_TIR_STMT_FOR && out->depth < MAX_NEST) {
    const kiln_tir_for_t *loop = (const void *)s;
    out->vars[out->depth++] = loop->var;
    s = loop->body;
  }
  out->store = (const void *)s;
  return out->depth > 0 && s->kind == KILN_TIR_STMT_BUFFER_STORE;
}

/* ---- finding an invariant select ---- */

typedef struct finder_t {
  kiln_tir_visitor_t visitor; /* first: rules get &finder->visitor */
  const nest_t *nest;
  const kiln_tir_select_t *found;
  int has_let;
} finder_t;

static kiln_status_t find_select(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  finder_t *f = (finder_t *)self;
  const kiln_tir_select_t *n = (const void *)expr;
  if (!f->found && n->condition->dtype.lanes == 1 &&
      !kiln_tir_expr_uses_vars(n->condition, f->nest->depth, f->nest->vars)) {
    f->found = n;
    return KILN_OK;
  }
  return kiln_tir_visitor_expr_children(self, expr);
}

static kiln_status_t note_let(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  ((finder_t *)self)->has_let = 1;
  return kiln_tir_visitor_expr_children(self, expr);
}

/* The first (outermost, then leftmost) invariant select of the stored
 * value, or NULL. */
static const kiln_tir_select_t *invariant_select(const nest_t *nest) {
  finder_t f = {.nest = nest};
  kiln_tir_visitor_initialize(&f.visitor);
  f.visitor.expr_rules[KILN_TIR_EXPR_SELECT] = find_select;
  f.visitor.expr_rules[KILN_TIR_EXPR_LET] = note_let;
  kiln_status_t status = kiln_tir_visitor_visit_expr(&f.visitor, nest->store->value);
  int failed = status != KILN_OK;
  kiln_status_free(status);
  return failed || f.has_let ? NULL : f.found;
}

/* ---- replacing it ---- */

typedef struct replacer_t {
  kiln_tir_mutator_t mutator; /* first */
  const kiln_tir_expr_t *from;
  const kiln_tir_expr_t *to;
} replacer_t;

static kiln_status_t replace_select(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                    const kiln_tir_expr_t **out) {
  replacer_t *r = (replacer_t *)self;
  if (expr == r->from) {
    *out = r->to;
    return KILN_OK;
  }
  return kiln_tir_mutator_rebuild_expr(self, expr, out);
}

static kiln_status_t replace(kiln_arena_t *arena, const kiln_tir_stmt_t *nest,
                             const kiln_tir_select_t *from, const kiln_tir_expr_t *to,
                             const kiln_tir_stmt_t **out) {
  replacer_t r = {.from = &from->base, .to = to};
  kiln_tir_mutator_initialize(&r.mutator, arena);
  r.mutator.expr_rules[KILN_TIR_EXPR_SELECT] = replace_select;
  return kiln_tir_mutator_mutate_stmt(&r.mutator, nest, out);
}

/* ---- the pass ---- */

typedef struct unswitcher_t {
  kiln_tir_mutator_t mutator; /* first */
  int copies;                 /* of the nest being unswitched */
} unswitcher_t;

static kiln_status_t unswitch(unswitcher_t *u, const kiln_tir_stmt_t *stmt,
                              const kiln_tir_stmt_t **out) {
  nest_t nest;
  const kiln_tir_select_t *select = NULL;
  if (u->copies >= KILN_TIR_UNSWITCH_MAX_COPIES || !perfect_nest(stmt, &nest) ||
      !(select = invariant_select(&nest))) {
    *out = stmt;
    return KILN_OK;
  }
  ++u->copies;
  kiln_arena_t *arena = u->mutator.arena;
  const kiln_tir_stmt_t *then_case = NULL, *else_case = NULL;
  KILN_RETURN_IF_ERROR(replace(arena, stmt, select, select->true_value, &then_case));
  KILN_RETURN_IF_ERROR(replace(arena, stmt, select, select->false_value, &else_case));
  KILN_RETURN_IF_ERROR(unswitch(u, then_case, &then_case));
  KILN_RETURN_IF_ERROR(unswitch(u, else_case, &else_case));
  return kiln_tir_if_then_else_create(arena, select->condition, then_case, else_case, out);
}

static kiln_status_t unswitch_for(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                  const kiln_tir_stmt_t **out) {
  unswitcher_t *u = (unswitcher_t *)self;
  nest_t nest;
  if (perfect_nest(stmt, &nest) && invariant_select(&nest)) {
    u->copies = 1;
    return unswitch(u, stmt, out);
  }
  return kiln_tir_mutator_rebuild_stmt(self, stmt, out);
}

kiln_status_t kiln_tir_unswitch_select(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                       const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  unswitcher_t u = {.copies = 0};
  kiln_tir_mutator_initialize(&u.mutator, arena);
  u.mutator.stmt_rules[KILN_TIR_STMT_FOR] = unswitch_for;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&u.mutator, func->body, &body));
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
