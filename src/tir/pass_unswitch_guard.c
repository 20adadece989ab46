/*
 * unswitch_guard: a split's guard that the loops inside a loop's body can
 * only make false where it is false at one corner of their ranges becomes
 * one branch around the body (loop unswitching for guards).
 *
 * Tensor lowering guards a split whose tiles may overshoot the extent, and
 * a kernel over run-time extents (tir/generalize.h) keeps every such
 * guard. Where the split's outer loop is fused with others, the guard
 * reads the fused variable through a division (`f % ((n + 7) // 8) * 8 +
 * r < n`: row r of the tile of rows f % ...), and the iterations it fails
 * for are not a prefix, so loop_partition cannot cut them off. In a GEMM
 * tile that guard sits in the reduction loop around every multiply-add:
 * the columns do not vectorize, the accumulators stay in memory and every
 * step computes the division. Yet for all but the last tile it holds for
 * the whole tile, which one test before the tile can tell.
 *
 * For the body B of a loop over v (and for the function's body, with no
 * v), the candidates are the conjuncts (And flattened) of the guards
 * (IfThenElse without else) that lie inside at least one loop of B. A
 * conjunct, written lin < 0 (analysis.h), qualifies when each term of lin
 * is either an inner variable: the variable of a loop inside B whose every
 * loop there has a constant, non-empty range (the union of those ranges is
 * its range), or an outer atom: one that uses no variable bound inside B
 * (loop or let) and reads no buffer (B may write it); and some outer atom
 * uses v (otherwise the conjunct belongs to a loop further out). Linear in
 * the inner variables over a box, lin is largest at the corner that takes
 * each inner variable at its maximum where its coefficient is positive and
 * at its minimum elsewhere, so the conjunct with those values substituted
 * (an expression of v, the outer loops and the kernel's extents) implies
 * the conjunct at every inner iteration. B becomes
 *
 *     if corner_1 and ... and corner_k: B without those conjuncts
 *     else: B
 *
 * the first copy being what a static kernel with whole tiles runs. The
 * corner test costs one evaluation per iteration of v. Nothing changes a
 * result: a conjunct is only dropped where the test proved it, and the
 * test reads no memory. As loop_partition's symbolic cut, it trusts the
 * outer atoms not to wrap around their dtype (index arithmetic over tensor
 * extents); the inner ranges are exact. The pass walks top-down, so a loop
 * inside a copy unswitches its own guards in turn; at most
 * KILN_TIR_UNSWITCH_GUARD_MAX_COPIES bodies are copied per function. It
 * runs after the first loop_partition (which removes the guards a prefix
 * cut settles) and before vectorize, so the first copy's columns
 * vectorize.
 */
#include "tir/analysis.h"
#include "tir/functor.h"
#include "tir/substitute.h"
#include "tir/transform.h"

#define KILN_TIR_UNSWITCH_GUARD_MAX_COPIES 16
#define MAX_INNER                          64
#define MAX_PARTS                          64

/* ---- scanning a body ---- */

typedef struct inner_t {
  const kiln_tir_var_t *var;
  int64_t min, max;
  int bounded; /* every loop binding it has a constant, non-empty range */
} inner_t;

typedef struct scan_t {
  kiln_tir_visitor_t visitor; /* first: rules get &scan->visitor */
  int depth;                  /* loops entered inside the body */
  int overflow;
  int num_inner;
  inner_t inner[MAX_INNER];
  const kiln_tir_var_t *inner_vars[MAX_INNER];
  int num_parts;
  const kiln_tir_expr_t *parts[MAX_PARTS];
} scan_t;

static inner_t *find_inner(scan_t *s, const kiln_tir_expr_t *atom) {
  for (int i = 0; i < s->num_inner; ++i) {
    if (&s->inner[i].var->base == atom) {
      return &s->inner[i];
    }
  }
  return NULL;
}

static void note_inner(scan_t *s, const kiln_tir_var_t *var, int bounded, int64_t min,
                       int64_t max) {
  inner_t *in = find_inner(s, &var->base);
  if (!in && s->num_inner == MAX_INNER) {
    s->overflow = 1;
    return;
  }
  if (!in) {
    s->inner_vars[s->num_inner] = var;
    s->inner[s->num_inner++] = (inner_t){var, min, max, bounded};
    return;
  }
  in->bounded = in->bounded && bounded;
  in->min = min < in->min ? min : in->min;
  in->max = max > in->max ? max : in->max;
}

static kiln_status_t scan_skip_expr(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  (void)self;
  (void)expr;
  return KILN_OK;
}

static kiln_status_t scan_for(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  scan_t *s = (scan_t *)self;
  const kiln_tir_for_t *loop = (const void *)stmt;
  int64_t min = 0, extent = 0, last = 0;
  int bounded = kiln_tir_expr_as_int(loop->min, &min) &&
                kiln_tir_expr_as_int(loop->extent, &extent) && extent > 0 &&
                !__builtin_add_overflow(min, extent - 1, &last);
  note_inner(s, loop->var, bounded, min, last);
  ++s->depth;
  kiln_status_t status = kiln_tir_visitor_visit_stmt(self, loop->body);
  --s->depth;
  return status;
}

static kiln_status_t scan_let(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  note_inner((scan_t *)self, ((const kiln_tir_let_stmt_t *)stmt)->var, 0, 0, 0);
  return kiln_tir_visitor_stmt_children(self, stmt);
}

static void note_parts(scan_t *s, const kiln_tir_expr_t *cond) {
  if (cond->kind == KILN_TIR_EXPR_AND) {
    note_parts(s, ((const kiln_tir_binary_t *)cond)->a);
    note_parts(s, ((const kiln_tir_binary_t *)cond)->b);
    return;
  }
  for (int i = 0; i < s->num_parts; ++i) {
    if (s->parts[i] == cond) {
      return;
    }
  }
  if (s->num_parts == MAX_PARTS) {
    s->overflow = 1;
    return;
  }
  s->parts[s->num_parts++] = cond;
}

static kiln_status_t scan_if(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  scan_t *s = (scan_t *)self;
  const kiln_tir_if_then_else_t *n = (const void *)stmt;
  if (!n->else_case && s->depth > 0) {
    note_parts(s, n->condition);
  }
  return kiln_tir_visitor_stmt_children(self, stmt);
}

static kiln_status_t scan_body(const kiln_tir_stmt_t *body, scan_t *s) {
  kiln_tir_visitor_initialize(&s->visitor);
  for (int i = 0; i < KILN_TIR_EXPR_KIND_COUNT_; ++i) {
    s->visitor.expr_rules[i] = scan_skip_expr;
  }
  s->visitor.stmt_rules[KILN_TIR_STMT_FOR] = scan_for;
  s->visitor.stmt_rules[KILN_TIR_STMT_LET_STMT] = scan_let;
  s->visitor.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = scan_if;
  return kiln_tir_visitor_visit_stmt(&s->visitor, body);
}

/* ---- a conjunct's corner ---- */

typedef struct load_finder_t {
  kiln_tir_visitor_t visitor; /* first */
  int found;
} load_finder_t;

static kiln_status_t note_load(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  (void)expr;
  ((load_finder_t *)self)->found = 1;
  return KILN_OK;
}

static int reads_buffer(const kiln_tir_expr_t *expr) {
  load_finder_t f = {.found = 0};
  kiln_tir_visitor_initialize(&f.visitor);
  f.visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = note_load;
  kiln_status_t status = kiln_tir_visitor_visit_expr(&f.visitor, expr);
  int failed = status != KILN_OK;
  kiln_status_free(status);
  return failed || f.found;
}

/* Whether `atom` is an outer atom of the body `s` scanned. */
static int outer_atom(const scan_t *s, const kiln_tir_expr_t *atom) {
  return !kiln_tir_expr_uses_vars(atom, s->num_inner, s->inner_vars) && !reads_buffer(atom);
}

/* `part` at the corner of the inner ranges that maximizes its linear form,
 * or *out_corner NULL when it does not qualify (above). */
static kiln_status_t corner(kiln_arena_t *arena, scan_t *s, const kiln_tir_var_t *v,
                            const kiln_tir_expr_t *part, const kiln_tir_expr_t **out_corner) {
  *out_corner = NULL;
  kiln_tir_linear_t lin;
  if (!kiln_tir_linear_from_comparison(part, &lin)) {
    return KILN_OK;
  }
  kiln_tir_var_value_t map[KILN_TIR_LINEAR_MAX_TERMS];
  int count = 0, outer = 0, uses_v = v == NULL;
  for (int i = 0; i < lin.count; ++i) {
    const kiln_tir_linear_term_t *t = &lin.terms[i];
    const inner_t *in = find_inner(s, t->atom);
    if (in && !in->bounded) {
      return KILN_OK;
    }
    if (in) {
      map[count].var = in->var;
      KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(
          arena, in->var->base.dtype, t->coeff > 0 ? in->max : in->min, &map[count].value));
      ++count;
      continue;
    }
    if (!outer_atom(s, t->atom)) {
      return KILN_OK;
    }
    outer = 1;
    uses_v = uses_v || kiln_tir_expr_uses_vars(t->atom, 1, &v);
  }
  if (!outer || !uses_v) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *c = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_substitute_expr(arena, count, map, part, &c));
  /* an inner variable the linear form cancelled is still in the text */
  *out_corner = kiln_tir_expr_uses_vars(c, s->num_inner, s->inner_vars) ? NULL : c;
  return KILN_OK;
}

/* ---- dropping the proven conjuncts ---- */

typedef struct dropper_t {
  kiln_tir_mutator_t mutator; /* first */
  int count;
  const kiln_tir_expr_t *const *parts;
} dropper_t;

static int dropped(const dropper_t *d, const kiln_tir_expr_t *part) {
  for (int i = 0; i < d->count; ++i) {
    if (d->parts[i] == part) {
      return 1;
    }
  }
  return 0;
}

/* `cond` without the dropped conjuncts; NULL when none is left. */
static kiln_status_t kept_conjuncts(dropper_t *d, const kiln_tir_expr_t *cond,
                                    const kiln_tir_expr_t **out) {
  if (cond->kind != KILN_TIR_EXPR_AND) {
    *out = dropped(d, cond) ? NULL : cond;
    return KILN_OK;
  }
  const kiln_tir_binary_t *n = (const void *)cond;
  const kiln_tir_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kept_conjuncts(d, n->a, &a));
  KILN_RETURN_IF_ERROR(kept_conjuncts(d, n->b, &b));
  if (a == n->a && b == n->b) {
    *out = cond;
    return KILN_OK;
  }
  if (!a || !b) {
    *out = a ? a : b;
    return KILN_OK;
  }
  return kiln_tir_binary_create(d->mutator.arena, KILN_TIR_EXPR_AND, a, b, out);
}

static kiln_status_t drop_if(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                             const kiln_tir_stmt_t **out) {
  dropper_t *d = (dropper_t *)self;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_if_then_else_t *n = (const void *)*out;
  if (n->else_case) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *cond = NULL;
  KILN_RETURN_IF_ERROR(kept_conjuncts(d, n->condition, &cond));
  if (!cond) {
    *out = n->then_case;
    return KILN_OK;
  }
  if (cond == n->condition) {
    return KILN_OK;
  }
  return kiln_tir_if_then_else_create(self->arena, cond, n->then_case, NULL, out);
}

static kiln_status_t drop_parts(kiln_arena_t *arena, int count, const kiln_tir_expr_t *const *parts,
                                const kiln_tir_stmt_t *body, const kiln_tir_stmt_t **out) {
  dropper_t d = {.count = count, .parts = parts};
  kiln_tir_mutator_initialize(&d.mutator, arena);
  d.mutator.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = drop_if;
  return kiln_tir_mutator_mutate_stmt(&d.mutator, body, out);
}

/* ---- the pass ---- */

typedef struct unswitcher_t {
  kiln_tir_mutator_t mutator; /* first */
  int copies;
} unswitcher_t;

/* Appends `test` to tests unless an equal one is there. */
static int add_test(int count, const kiln_tir_expr_t **tests, const kiln_tir_expr_t *test) {
  for (int i = 0; i < count; ++i) {
    if (kiln_tir_expr_equal(tests[i], test)) {
      return count;
    }
  }
  tests[count] = test;
  return count + 1;
}

/* The proven conjuncts of `body` (of a loop over v, or the function's when
 * v is NULL) into parts, their corner tests into tests. */
static kiln_status_t find_tests(kiln_arena_t *arena, const kiln_tir_var_t *v,
                                const kiln_tir_stmt_t *body, int *out_parts,
                                const kiln_tir_expr_t **parts, int *out_tests,
                                const kiln_tir_expr_t **tests) {
  scan_t s;
  s.depth = s.overflow = s.num_inner = s.num_parts = 0;
  *out_parts = *out_tests = 0;
  KILN_RETURN_IF_ERROR(scan_body(body, &s));
  for (int i = 0; i < s.num_parts && !s.overflow; ++i) {
    const kiln_tir_expr_t *c = NULL;
    KILN_RETURN_IF_ERROR(corner(arena, &s, v, s.parts[i], &c));
    if (c) {
      parts[(*out_parts)++] = s.parts[i];
      *out_tests = add_test(*out_tests, tests, c);
    }
  }
  return KILN_OK;
}

/* `body` as `if tests: body without the proven conjuncts else: body`, or
 * itself when nothing is proven. */
static kiln_status_t unswitch_body(unswitcher_t *u, const kiln_tir_var_t *v,
                                   const kiln_tir_stmt_t *body, const kiln_tir_stmt_t **out) {
  kiln_arena_t *arena = u->mutator.arena;
  *out = body;
  if (u->copies >= KILN_TIR_UNSWITCH_GUARD_MAX_COPIES) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *parts[MAX_PARTS], *tests[MAX_PARTS];
  int num_parts = 0, num_tests = 0;
  KILN_RETURN_IF_ERROR(find_tests(arena, v, body, &num_parts, parts, &num_tests, tests));
  if (num_parts == 0) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *cond = tests[0];
  for (int i = 1; i < num_tests; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, KILN_TIR_EXPR_AND, cond, tests[i], &cond));
  }
  const kiln_tir_stmt_t *then_case = NULL;
  KILN_RETURN_IF_ERROR(drop_parts(arena, num_parts, parts, body, &then_case));
  ++u->copies;
  return kiln_tir_if_then_else_create(arena, cond, then_case, body, out);
}

static kiln_status_t unswitch_for(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                  const kiln_tir_stmt_t **out) {
  unswitcher_t *u = (unswitcher_t *)self;
  const kiln_tir_for_t *loop = (const void *)stmt;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(unswitch_body(u, loop->var, loop->body, &body), "loop %s",
                                loop->var->name);
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(self, body, &body));
  if (body == loop->body) {
    *out = stmt;
    return KILN_OK;
  }
  return kiln_tir_for_create(self->arena, loop->var, loop->min, loop->extent, loop->for_kind, body,
                             loop->num_annotations, loop->annotations, out);
}

kiln_status_t kiln_tir_unswitch_guard(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                      const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "unswitch_guard: null function");
  }
  unswitcher_t u = {.copies = 0};
  kiln_tir_mutator_initialize(&u.mutator, arena);
  u.mutator.stmt_rules[KILN_TIR_STMT_FOR] = unswitch_for;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(unswitch_body(&u, NULL, func->body, &body), "unswitch_guard %s",
                                func->name);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_mutator_mutate_stmt(&u.mutator, body, &body),
                                "unswitch_guard %s", func->name);
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
