/*
 * Variable substitution; see substitute.h. The map is searched linearly:
 * schedules substitute a handful of variables at a time.
 */
#include "tir/substitute.h"

#include "tir/functor.h"

typedef struct substituter_t {
  kiln_tir_mutator_t mutator; /* first: rules get &substituter->mutator */
  int count;
  const kiln_tir_var_value_t *map;
} substituter_t;

static kiln_status_t substitute_var(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                    const kiln_tir_expr_t **out) {
  const substituter_t *s = (const substituter_t *)self;
  *out = expr;
  for (int i = 0; i < s->count; ++i) {
    if (&s->map[i].var->base == expr) {
      *out = s->map[i].value;
      break;
    }
  }
  return KILN_OK;
}

static kiln_status_t substituter_initialize(substituter_t *s, kiln_arena_t *arena, int count,
                                            const kiln_tir_var_value_t *map) {
  if (count < 0 || (count > 0 && !map)) {
    return KILN_STATUS(INVALID_ARGUMENT, "substitute: invalid map of %d entries", count);
  }
  for (int i = 0; i < count; ++i) {
    if (!map[i].var || !map[i].value) {
      return KILN_STATUS(INVALID_ARGUMENT, "substitute: entry %d has a null variable or value", i);
    }
    if (!kiln_tir_dtype_equal(map[i].var->base.dtype, map[i].value->dtype)) {
      char tv[24], te[24];
      return KILN_STATUS(INVALID_ARGUMENT, "substitute: variable %s is %s but its value is %s",
                         map[i].var->name, kiln_tir_dtype_format(map[i].var->base.dtype, tv),
                         kiln_tir_dtype_format(map[i].value->dtype, te));
    }
  }
  kiln_tir_mutator_initialize(&s->mutator, arena);
  s->mutator.expr_rules[KILN_TIR_EXPR_VAR] = substitute_var;
  s->count = count;
  s->map = map;
  return KILN_OK;
}

kiln_status_t kiln_tir_substitute_expr(kiln_arena_t *arena, int count,
                                       const kiln_tir_var_value_t *map, const kiln_tir_expr_t *expr,
                                       const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  substituter_t s;
  KILN_RETURN_IF_ERROR(substituter_initialize(&s, arena, count, map));
  return kiln_tir_mutator_mutate_expr(&s.mutator, expr, out_expr);
}

kiln_status_t kiln_tir_substitute_stmt(kiln_arena_t *arena, int count,
                                       const kiln_tir_var_value_t *map, const kiln_tir_stmt_t *stmt,
                                       const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  substituter_t s;
  KILN_RETURN_IF_ERROR(substituter_initialize(&s, arena, count, map));
  return kiln_tir_mutator_mutate_stmt(&s.mutator, stmt, out_stmt);
}
