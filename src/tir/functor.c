/*
 * Loop-IR visitor and mutator; see functor.h.
 *
 * An expression's children are listed once, by kiln_tir_expr_operands, so the
 * visitor, the mutator and every other walker agree on them; rebuild_from_children makes a node of
 * the same kind over new children with the checking constructor. Statements have few kinds with
 * different shapes, so their rules are written out per kind.
 */
#include "tir/functor.h"

#include <string.h>

int kiln_tir_expr_operands(const kiln_tir_expr_t *e, const kiln_tir_expr_t **out) {
  if (kiln_tir_expr_kind_is_binary(e->kind)) {
    const kiln_tir_binary_t *n = (const void *)e;
    out[0] = n->a;
    out[1] = n->b;
    return 2;
  }
  switch (e->kind) {
  case KILN_TIR_EXPR_NOT:
    out[0] = ((const kiln_tir_not_t *)e)->a;
    return 1;
  case KILN_TIR_EXPR_SELECT: {
    const kiln_tir_select_t *n = (const void *)e;
    out[0] = n->condition;
    out[1] = n->true_value;
    out[2] = n->false_value;
    return 3;
  }
  case KILN_TIR_EXPR_CAST:
    out[0] = ((const kiln_tir_cast_t *)e)->value;
    return 1;
  case KILN_TIR_EXPR_BUFFER_LOAD: {
    const kiln_tir_buffer_load_t *n = (const void *)e;
    memcpy(out, n->indices, sizeof(*out) * (size_t)n->num_indices);
    return n->num_indices;
  }
  case KILN_TIR_EXPR_RAMP:
    out[0] = ((const kiln_tir_ramp_t *)e)->start;
    out[1] = ((const kiln_tir_ramp_t *)e)->stride;
    return 2;
  case KILN_TIR_EXPR_BROADCAST:
    out[0] = ((const kiln_tir_broadcast_t *)e)->value;
    return 1;
  case KILN_TIR_EXPR_CALL: {
    const kiln_tir_call_t *n = (const void *)e;
    memcpy(out, n->args, sizeof(*out) * (size_t)n->num_args);
    return n->num_args;
  }
  case KILN_TIR_EXPR_LET:
    out[0] = ((const kiln_tir_let_t *)e)->value;
    out[1] = ((const kiln_tir_let_t *)e)->body;
    return 2;
  case KILN_TIR_EXPR_INT_IMM:
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return 0;
}

static kiln_status_t rebuild_from_children(kiln_arena_t *arena, const kiln_tir_expr_t *e,
                                           const kiln_tir_expr_t *const *c,
                                           const kiln_tir_expr_t **out) {
  if (kiln_tir_expr_kind_is_binary(e->kind)) {
    return kiln_tir_binary_create(arena, e->kind, c[0], c[1], out);
  }
  switch (e->kind) {
  case KILN_TIR_EXPR_NOT:
    return kiln_tir_not_create(arena, c[0], out);
  case KILN_TIR_EXPR_SELECT:
    return kiln_tir_select_create(arena, c[0], c[1], c[2], out);
  case KILN_TIR_EXPR_CAST:
    return kiln_tir_cast_create(arena, e->dtype, c[0], out);
  case KILN_TIR_EXPR_BUFFER_LOAD: {
    const kiln_tir_buffer_load_t *n = (const void *)e;
    return kiln_tir_buffer_load_create(arena, n->buffer, n->num_indices, c, out);
  }
  case KILN_TIR_EXPR_RAMP:
    return kiln_tir_ramp_create(arena, c[0], c[1], e->dtype.lanes, out);
  case KILN_TIR_EXPR_BROADCAST:
    return kiln_tir_broadcast_create(arena, c[0], e->dtype.lanes, out);
  case KILN_TIR_EXPR_CALL: {
    const kiln_tir_call_t *n = (const void *)e;
    return kiln_tir_call_create(arena, n->op, n->num_args, c, out);
  }
  case KILN_TIR_EXPR_LET:
    return kiln_tir_let_create(arena, ((const kiln_tir_let_t *)e)->var, c[0], c[1], out);
  case KILN_TIR_EXPR_INT_IMM:
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  *out = e; /* leaves have no children to change */
  return KILN_OK;
}

/* ---- visitor ---- */

static kiln_status_t visit_expr_default(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  return kiln_tir_visitor_expr_children(self, expr);
}

static kiln_status_t visit_stmt_default(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  return kiln_tir_visitor_stmt_children(self, stmt);
}

void kiln_tir_visitor_initialize(kiln_tir_visitor_t *visitor) {
  for (int i = 0; i < KILN_TIR_EXPR_KIND_COUNT_; ++i) {
    visitor->expr_rules[i] = visit_expr_default;
  }
  for (int i = 0; i < KILN_TIR_STMT_KIND_COUNT_; ++i) {
    visitor->stmt_rules[i] = visit_stmt_default;
  }
}

kiln_status_t kiln_tir_visitor_visit_expr(kiln_tir_visitor_t *visitor,
                                          const kiln_tir_expr_t *expr) {
  if (!expr || (unsigned)expr->kind >= KILN_TIR_EXPR_KIND_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "visit: null or invalid expression");
  }
  if (!visitor->expr_rules[expr->kind]) {
    return KILN_STATUS(UNIMPLEMENTED, "no visit rule for %s", kiln_tir_expr_kind_name(expr->kind));
  }
  return visitor->expr_rules[expr->kind](visitor, expr);
}

kiln_status_t kiln_tir_visitor_visit_stmt(kiln_tir_visitor_t *visitor,
                                          const kiln_tir_stmt_t *stmt) {
  if (!stmt || (unsigned)stmt->kind >= KILN_TIR_STMT_KIND_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "visit: null or invalid statement");
  }
  if (!visitor->stmt_rules[stmt->kind]) {
    return KILN_STATUS(UNIMPLEMENTED, "no visit rule for %s", kiln_tir_stmt_kind_name(stmt->kind));
  }
  return visitor->stmt_rules[stmt->kind](visitor, stmt);
}

kiln_status_t kiln_tir_visitor_expr_children(kiln_tir_visitor_t *visitor,
                                             const kiln_tir_expr_t *expr) {
  const kiln_tir_expr_t *children[KILN_TIR_MAX_OPERANDS];
  int n = kiln_tir_expr_operands(expr, children);
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, children[i]));
  }
  return KILN_OK;
}

static kiln_status_t visit_exprs(kiln_tir_visitor_t *visitor, int n,
                                 const kiln_tir_expr_t *const *exprs) {
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, exprs[i]));
  }
  return KILN_OK;
}

kiln_status_t kiln_tir_visitor_stmt_children(kiln_tir_visitor_t *visitor,
                                             const kiln_tir_stmt_t *stmt) {
  switch (stmt->kind) {
  case KILN_TIR_STMT_FOR: {
    const kiln_tir_for_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, n->min));
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, n->extent));
    return kiln_tir_visitor_visit_stmt(visitor, n->body);
  }
  case KILN_TIR_STMT_BUFFER_STORE: {
    const kiln_tir_buffer_store_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, n->value));
    return visit_exprs(visitor, n->num_indices, n->indices);
  }
  case KILN_TIR_STMT_ALLOCATE:
    return kiln_tir_visitor_visit_stmt(visitor, ((const kiln_tir_allocate_t *)stmt)->body);
  case KILN_TIR_STMT_SEQ: {
    const kiln_tir_seq_t *n = (const void *)stmt;
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_stmt(visitor, n->stmts[i]));
    }
    return KILN_OK;
  }
  case KILN_TIR_STMT_IF_THEN_ELSE: {
    const kiln_tir_if_then_else_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, n->condition));
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_stmt(visitor, n->then_case));
    return n->else_case ? kiln_tir_visitor_visit_stmt(visitor, n->else_case) : KILN_OK;
  }
  case KILN_TIR_STMT_LET_STMT: {
    const kiln_tir_let_stmt_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, n->value));
    return kiln_tir_visitor_visit_stmt(visitor, n->body);
  }
  case KILN_TIR_STMT_EVALUATE:
    return kiln_tir_visitor_visit_expr(visitor, ((const kiln_tir_evaluate_t *)stmt)->value);
  case KILN_TIR_STMT_PREFETCH:
    return kiln_tir_visitor_visit_expr(visitor, ((const kiln_tir_prefetch_t *)stmt)->load);
  case KILN_TIR_STMT_ASSERT: {
    const kiln_tir_assert_t *n = (const void *)stmt;
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(visitor, n->condition));
    return kiln_tir_visitor_visit_stmt(visitor, n->body);
  }
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INVALID_ARGUMENT, "visit: invalid statement kind %d", (int)stmt->kind);
}

typedef struct var_finder_t {
  kiln_tir_visitor_t visitor; /* first: rules get &finder->visitor */
  int count;
  const kiln_tir_var_t *const *vars;
  int found;
} var_finder_t;

static kiln_status_t find_var(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  var_finder_t *f = (var_finder_t *)self;
  for (int i = 0; i < f->count && !f->found; ++i) {
    f->found = f->vars[i] && expr == &f->vars[i]->base;
  }
  return KILN_OK;
}

int kiln_tir_expr_uses_vars(const kiln_tir_expr_t *expr, int count,
                            const kiln_tir_var_t *const *vars) {
  var_finder_t f = {.count = count, .vars = vars};
  kiln_tir_visitor_initialize(&f.visitor);
  f.visitor.expr_rules[KILN_TIR_EXPR_VAR] = find_var;
  kiln_status_t status = kiln_tir_visitor_visit_expr(&f.visitor, expr);
  int failed = status != KILN_OK;
  kiln_status_free(status);
  return f.found || failed;
}

/* ---- mutator ---- */

void kiln_tir_mutator_initialize(kiln_tir_mutator_t *mutator, kiln_arena_t *arena) {
  for (int i = 0; i < KILN_TIR_EXPR_KIND_COUNT_; ++i) {
    mutator->expr_rules[i] = kiln_tir_mutator_rebuild_expr;
  }
  for (int i = 0; i < KILN_TIR_STMT_KIND_COUNT_; ++i) {
    mutator->stmt_rules[i] = kiln_tir_mutator_rebuild_stmt;
  }
  mutator->arena = arena;
}

kiln_status_t kiln_tir_mutator_mutate_expr(kiln_tir_mutator_t *mutator, const kiln_tir_expr_t *expr,
                                           const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  if (!expr || (unsigned)expr->kind >= KILN_TIR_EXPR_KIND_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "mutate: null or invalid expression");
  }
  if (!mutator->expr_rules[expr->kind]) {
    return KILN_STATUS(UNIMPLEMENTED, "no mutate rule for %s", kiln_tir_expr_kind_name(expr->kind));
  }
  return mutator->expr_rules[expr->kind](mutator, expr, out_expr);
}

kiln_status_t kiln_tir_mutator_mutate_stmt(kiln_tir_mutator_t *mutator, const kiln_tir_stmt_t *stmt,
                                           const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  if (!stmt || (unsigned)stmt->kind >= KILN_TIR_STMT_KIND_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "mutate: null or invalid statement");
  }
  if (!mutator->stmt_rules[stmt->kind]) {
    return KILN_STATUS(UNIMPLEMENTED, "no mutate rule for %s", kiln_tir_stmt_kind_name(stmt->kind));
  }
  return mutator->stmt_rules[stmt->kind](mutator, stmt, out_stmt);
}

kiln_status_t kiln_tir_mutator_rebuild_expr(kiln_tir_mutator_t *mutator,
                                            const kiln_tir_expr_t *expr,
                                            const kiln_tir_expr_t **out_expr) {
  const kiln_tir_expr_t *children[KILN_TIR_MAX_OPERANDS], *mutated[KILN_TIR_MAX_OPERANDS];
  int n = kiln_tir_expr_operands(expr, children);
  int changed = 0;
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(mutator, children[i], &mutated[i]));
    changed |= mutated[i] != children[i];
  }
  if (!changed) {
    *out_expr = expr;
    return KILN_OK;
  }
  return rebuild_from_children(mutator->arena, expr, mutated, out_expr);
}

/* Mutates `n` expressions into `out` (a caller array); *out_changed says
 * whether any changed. */
static kiln_status_t mutate_exprs(kiln_tir_mutator_t *m, int n, const kiln_tir_expr_t *const *in,
                                  const kiln_tir_expr_t **out, int *out_changed) {
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, in[i], &out[i]));
    *out_changed |= out[i] != in[i];
  }
  return KILN_OK;
}

static kiln_status_t rebuild_for(kiln_tir_mutator_t *m, const kiln_tir_for_t *n,
                                 const kiln_tir_stmt_t **out) {
  const kiln_tir_expr_t *min = NULL, *extent = NULL;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->min, &min));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->extent, &extent));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(m, n->body, &body));
  if (min == n->min && extent == n->extent && body == n->body) {
    *out = &n->base;
    return KILN_OK;
  }
  return kiln_tir_for_create(m->arena, n->var, min, extent, n->for_kind, body, n->num_annotations,
                             n->annotations, out);
}

static kiln_status_t rebuild_store(kiln_tir_mutator_t *m, const kiln_tir_buffer_store_t *n,
                                   const kiln_tir_stmt_t **out) {
  const kiln_tir_expr_t *value = NULL, *indices[KILN_TIR_MAX_DIMS];
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->value, &value));
  int changed = value != n->value;
  KILN_RETURN_IF_ERROR(mutate_exprs(m, n->num_indices, n->indices, indices, &changed));
  if (!changed) {
    *out = &n->base;
    return KILN_OK;
  }
  return kiln_tir_buffer_store_create(m->arena, n->buffer, value, n->num_indices, indices, out);
}

static kiln_status_t rebuild_seq(kiln_tir_mutator_t *m, const kiln_tir_seq_t *n,
                                 const kiln_tir_stmt_t **out) {
  const kiln_tir_stmt_t **stmts = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(m->arena, (size_t)n->count, sizeof(*stmts),
                                                 _Alignof(max_align_t), (void **)&stmts));
  int changed = 0;
  for (int i = 0; i < n->count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(m, n->stmts[i], &stmts[i]));
    changed |= stmts[i] != n->stmts[i];
  }
  if (!changed) {
    *out = &n->base;
    return KILN_OK;
  }
  return kiln_tir_seq_create(m->arena, n->count, stmts, out);
}

static kiln_status_t rebuild_if(kiln_tir_mutator_t *m, const kiln_tir_if_then_else_t *n,
                                const kiln_tir_stmt_t **out) {
  const kiln_tir_expr_t *condition = NULL;
  const kiln_tir_stmt_t *then_case = NULL, *else_case = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->condition, &condition));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(m, n->then_case, &then_case));
  if (n->else_case) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(m, n->else_case, &else_case));
  }
  if (condition == n->condition && then_case == n->then_case && else_case == n->else_case) {
    *out = &n->base;
    return KILN_OK;
  }
  return kiln_tir_if_then_else_create(m->arena, condition, then_case, else_case, out);
}

static kiln_status_t rebuild_let_stmt(kiln_tir_mutator_t *m, const kiln_tir_let_stmt_t *n,
                                      const kiln_tir_stmt_t **out) {
  const kiln_tir_expr_t *value = NULL;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->value, &value));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(m, n->body, &body));
  if (value == n->value && body == n->body) {
    *out = &n->base;
    return KILN_OK;
  }
  return kiln_tir_let_stmt_create(m->arena, n->var, value, body, out);
}

static kiln_status_t rebuild_assert(kiln_tir_mutator_t *m, const kiln_tir_assert_t *n,
                                    const kiln_tir_stmt_t **out) {
  const kiln_tir_expr_t *condition = NULL;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->condition, &condition));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(m, n->body, &body));
  if (condition == n->condition && body == n->body) {
    *out = &n->base;
    return KILN_OK;
  }
  return kiln_tir_assert_create(m->arena, condition, n->message, body, out);
}

/* A load that mutates into another expression (a constant) has nothing left
 * to fetch: the prefetch goes. */
static kiln_status_t rebuild_prefetch(kiln_tir_mutator_t *m, const kiln_tir_prefetch_t *n,
                                      const kiln_tir_stmt_t **out) {
  const kiln_tir_expr_t *load = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(m, n->load, &load));
  if (load == n->load) {
    *out = &n->base;
    return KILN_OK;
  }
  if (load->kind != KILN_TIR_EXPR_BUFFER_LOAD || load->dtype.lanes != 1) {
    return kiln_tir_seq_create(m->arena, 0, NULL, out);
  }
  return kiln_tir_prefetch_create(m->arena, load, out);
}

kiln_status_t kiln_tir_mutator_rebuild_stmt(kiln_tir_mutator_t *mutator,
                                            const kiln_tir_stmt_t *stmt,
                                            const kiln_tir_stmt_t **out_stmt) {
  switch (stmt->kind) {
  case KILN_TIR_STMT_FOR:
    return rebuild_for(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_BUFFER_STORE:
    return rebuild_store(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_ALLOCATE: {
    const kiln_tir_allocate_t *n = (const void *)stmt;
    const kiln_tir_stmt_t *body = NULL;
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(mutator, n->body, &body));
    if (body == n->body) {
      *out_stmt = stmt;
      return KILN_OK;
    }
    return kiln_tir_allocate_create(mutator->arena, n->buffer, n->scope, n->init, body, out_stmt);
  }
  case KILN_TIR_STMT_SEQ:
    return rebuild_seq(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_IF_THEN_ELSE:
    return rebuild_if(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_LET_STMT:
    return rebuild_let_stmt(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_EVALUATE: {
    const kiln_tir_evaluate_t *n = (const void *)stmt;
    const kiln_tir_expr_t *value = NULL;
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(mutator, n->value, &value));
    if (value == n->value) {
      *out_stmt = stmt;
      return KILN_OK;
    }
    return kiln_tir_evaluate_create(mutator->arena, value, out_stmt);
  }
  case KILN_TIR_STMT_ASSERT:
    return rebuild_assert(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_PREFETCH:
    return rebuild_prefetch(mutator, (const void *)stmt, out_stmt);
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INVALID_ARGUMENT, "mutate: invalid statement kind %d", (int)stmt->kind);
}
