/*
 * Loop partition: peel the tails that guarded splits leave (TVM's
 * LoopPartition for constant loops).
 *
 * Tensor lowering guards a split that does not divide its extent with
 * `if outer * f + inner < E` around the store, innermost. For a loop over v
 * in [min, min + extent), every IfThenElse without else below it (at any
 * depth, inside nested loops) is a candidate; its condition is split into
 * conjuncts (And), and each comparison conjunct a < b (<=, >, >= likewise)
 * is written as a linear form lin < 0 (analysis.h) with lin = c * v + rest.
 * With c > 0 and rest bounded by the ranges of the loops around it and
 * below v (the analyzer's intervals), the conjunct holds for every inner
 * iteration as long as c * v + max(rest) < 0, that is for v up to
 * floor((-max(rest) - 1) / c): a prefix. The loop splits at the shortest
 * proper prefix among the candidates into a main loop (same variable, same
 * kind: parallel stays parallel) and a tail loop. Both pieces are then
 * rewritten with v's range narrowed to the piece: a conjunct the bounds
 * prove true is dropped (an If left with none becomes its then-case), one
 * they prove false removes its If, a piece left with nothing to do is
 * dropped, and a piece of one iteration becomes its body with v substituted
 * by that value (no loop). Rewriting recurses into the pieces, so inner
 * loops (a split reduce axis, the tail's inner loop) partition in turn.
 *
 * Comparisons are only trusted when both sides' linear bounds fit their
 * dtype (no wrap-around), and non-linear conditions (v * v < E, v % 3 < 2:
 * v inside an atom) are no candidates, so the loop stays as it was. A
 * vectorized loop is never partitioned: its lanes are one instruction, and
 * a guard on its lanes makes vectorize keep it serial, which is exactly the
 * peeled tail TVM produces. Empty statements are the empty SeqStmt.
 *
 * A loop over [0, E) whose E is not constant (a kernel over run-time
 * extents, tir/generalize.h) splits at its first guard conjunct c * v +
 * inner + S < 0 whose S uses variables no loop binds: a main loop up to
 * the symbolic cut (clamped to [0, E]) without that conjunct, and the rest
 * with it (see partition_symbolic).
 */
#include "tir/analysis.h"
#include "tir/functor.h"
#include "tir/substitute.h"
#include "tir/transform.h"

#define MAX_CONJUNCTS 16

typedef struct partitioner_t {
  kiln_tir_mutator_t mutator; /* first: rules get &partitioner->mutator */
  kiln_tir_analyzer_t analyzer;
} partitioner_t;

/* ---- conditions ---- */

/* The conjuncts of `cond` (And flattened), or 0 when there are too many. */
static int conjuncts(const kiln_tir_expr_t *cond, const kiln_tir_expr_t **out, int count) {
  if (cond->kind == KILN_TIR_EXPR_AND) {
    const kiln_tir_binary_t *n = (const void *)cond;
    count = conjuncts(n->a, out, count);
    return count ? conjuncts(n->b, out, count) : 0;
  }
  if (count >= MAX_CONJUNCTS) {
    return 0;
  }
  out[count] = cond;
  return count + 1;
}

/* The linear form of `side` when its bound fits its dtype (no wrap-around). */
static int exact_side(const kiln_tir_analyzer_t *analyzer, const kiln_tir_expr_t *side,
                      kiln_tir_linear_t *out) {
  return kiln_tir_linear_from_expr(side, out) &&
         kiln_tir_interval_fits(kiln_tir_linear_bound(analyzer, out), side->dtype);
}

/* `cond` as lin < 0, for an integer comparison whose sides cannot wrap. */
static int comparison_linear(const kiln_tir_analyzer_t *analyzer, const kiln_tir_expr_t *cond,
                             kiln_tir_linear_t *out) {
  int swap = 0;
  int64_t adjust = 0;
  switch (cond->kind) {
  case KILN_TIR_EXPR_LT:
    break;
  case KILN_TIR_EXPR_LE: /* a <= b: a - b - 1 < 0 */
    adjust = -1;
    break;
  case KILN_TIR_EXPR_GT:
    swap = 1;
    break;
  case KILN_TIR_EXPR_GE:
    swap = 1;
    adjust = -1;
    break;
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
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
  case KILN_TIR_EXPR_NOT:
  case KILN_TIR_EXPR_SELECT:
  case KILN_TIR_EXPR_CAST:
  case KILN_TIR_EXPR_BUFFER_LOAD:
  case KILN_TIR_EXPR_RAMP:
  case KILN_TIR_EXPR_BROADCAST:
  case KILN_TIR_EXPR_CALL:
  case KILN_TIR_EXPR_LET:
  case KILN_TIR_EXPR_KIND_COUNT_:
    return 0;
  }
  const kiln_tir_binary_t *n = (const void *)cond;
  kiln_tir_linear_t a, b;
  if (!kiln_tir_dtype_is_int(n->a->dtype) || n->a->dtype.lanes != 1 ||
      !exact_side(analyzer, swap ? n->b : n->a, &a) ||
      !exact_side(analyzer, swap ? n->a : n->b, &b)) {
    return 0;
  }
  *out = a;
  kiln_tir_linear_t one = {.dtype = a.dtype, .constant = 1};
  return kiln_tir_linear_add_scaled(out, &b, -1) && kiln_tir_linear_add_scaled(out, &one, adjust);
}

/* ---- finding the prefix ---- */

typedef struct finder_t {
  kiln_tir_visitor_t visitor; /* first */
  kiln_tir_analyzer_t *analyzer;
  const kiln_tir_var_t *var;
  int64_t min;
  int64_t extent;
  int64_t best; /* shortest proper prefix so far, or extent */
} finder_t;

/* How many iterations from min `cond` (lin < 0) surely holds for. */
static void consider(finder_t *f, const kiln_tir_expr_t *cond) {
  kiln_tir_linear_t lin;
  if (!comparison_linear(f->analyzer, cond, &lin)) {
    return;
  }
  int64_t c = 0;
  kiln_tir_linear_t rest = lin;
  rest.count = 0;
  for (int i = 0; i < lin.count; ++i) {
    if (lin.terms[i].atom == &f->var->base) {
      c = lin.terms[i].coeff;
    } else {
      rest.terms[rest.count++] = lin.terms[i];
    }
  }
  kiln_tir_interval_t r = kiln_tir_linear_bound(f->analyzer, &rest);
  if (c <= 0 || !r.exact || r.max == INT64_MIN) {
    return;
  }
  /* c * v + r.max < 0  <=>  v <= floor((-r.max - 1) / c) */
  int64_t num = -r.max - 1;
  int64_t last = num / c - (num % c != 0 && num < 0);
  int64_t length = 0;
  if (last >= f->min && !__builtin_sub_overflow(last, f->min, &length) && length < f->extent) {
    length += 1;
    if (length < f->best) {
      f->best = length;
    }
  }
}

static kiln_status_t find_skip_expr(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  (void)self;
  (void)expr;
  return KILN_OK;
}

/* Binds a loop's range when it is constant; *out_bound says whether it did. */
static kiln_status_t bind_loop(kiln_tir_analyzer_t *analyzer, const kiln_tir_for_t *loop,
                               int *out_bound) {
  int64_t min = 0, extent = 0, last = 0;
  *out_bound = kiln_tir_expr_as_int(loop->min, &min) &&
               kiln_tir_expr_as_int(loop->extent, &extent) && extent > 0 &&
               !__builtin_add_overflow(min, extent - 1, &last);
  return *out_bound ? kiln_tir_analyzer_bind(analyzer, loop->var, min, last) : KILN_OK;
}

/* Visits a loop's body with its variable's range bound in `analyzer`. */
static kiln_status_t visit_loop_body(kiln_tir_visitor_t *self, kiln_tir_analyzer_t *analyzer,
                                     const kiln_tir_stmt_t *stmt) {
  int bound = 0;
  KILN_RETURN_IF_ERROR(bind_loop(analyzer, (const void *)stmt, &bound));
  kiln_status_t status = kiln_tir_visitor_visit_stmt(self, ((const kiln_tir_for_t *)stmt)->body);
  if (bound) {
    kiln_tir_analyzer_unbind(analyzer);
  }
  return status;
}

static kiln_status_t find_for(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  return visit_loop_body(self, ((finder_t *)self)->analyzer, stmt);
}

static kiln_status_t find_if(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  const kiln_tir_if_then_else_t *n = (const void *)stmt;
  const kiln_tir_expr_t *parts[MAX_CONJUNCTS];
  int count = n->else_case ? 0 : conjuncts(n->condition, parts, 0);
  for (int i = 0; i < count; ++i) {
    consider((finder_t *)self, parts[i]);
  }
  return kiln_tir_visitor_stmt_children(self, stmt);
}

/* The shortest proper prefix of `loop` (min, extent constant) that some
 * guard below holds for, or extent. */
static kiln_status_t find_prefix(partitioner_t *p, const kiln_tir_for_t *loop, int64_t min,
                                 int64_t extent, int64_t *out_length) {
  finder_t f = {.analyzer = &p->analyzer, .var = loop->var, .min = min, .extent = extent};
  f.best = extent;
  kiln_tir_visitor_initialize(&f.visitor);
  for (int i = 0; i < KILN_TIR_EXPR_KIND_COUNT_; ++i) {
    f.visitor.expr_rules[i] = find_skip_expr;
  }
  f.visitor.stmt_rules[KILN_TIR_STMT_FOR] = find_for;
  f.visitor.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = find_if;
  KILN_RETURN_IF_ERROR(kiln_tir_analyzer_bind(&p->analyzer, loop->var, min, min + extent - 1));
  kiln_status_t status = kiln_tir_visitor_visit_stmt(&f.visitor, loop->body);
  kiln_tir_analyzer_unbind(&p->analyzer);
  *out_length = f.best;
  return status;
}

/* ---- rewriting ---- */

static int is_nop(const kiln_tir_stmt_t *stmt) {
  return stmt->kind == KILN_TIR_STMT_SEQ && ((const kiln_tir_seq_t *)stmt)->count == 0;
}

static kiln_status_t nop(kiln_arena_t *arena, const kiln_tir_stmt_t **out) {
  return kiln_tir_seq_create(arena, 0, NULL, out);
}

/* The conjuncts of a guard the ranges do not decide; *out_false when one is false. */
static kiln_status_t decide_guard(partitioner_t *p, const kiln_tir_expr_t *cond,
                                  const kiln_tir_expr_t **out_cond, int *out_false) {
  const kiln_tir_expr_t *parts[MAX_CONJUNCTS];
  int count = conjuncts(cond, parts, 0);
  *out_cond = cond;
  *out_false = 0;
  const kiln_tir_expr_t *kept = NULL;
  int dropped = 0;
  for (int i = 0; i < count; ++i) {
    kiln_tir_linear_t lin;
    kiln_tir_interval_t r = {0, 0, 0};
    if (comparison_linear(&p->analyzer, parts[i], &lin)) {
      r = kiln_tir_linear_bound(&p->analyzer, &lin);
    }
    if (r.exact && r.min >= 0) {
      *out_false = 1;
      return KILN_OK;
    }
    if (r.exact && r.max < 0) {
      dropped = 1;
      continue;
    }
    if (kept) {
      KILN_RETURN_IF_ERROR(
          kiln_tir_binary_create(p->mutator.arena, KILN_TIR_EXPR_AND, kept, parts[i], &kept));
    } else {
      kept = parts[i];
    }
  }
  if (dropped) {
    *out_cond = kept; /* NULL: every conjunct holds */
  }
  return KILN_OK;
}

static kiln_status_t partition_if(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                  const kiln_tir_stmt_t **out) {
  partitioner_t *p = (partitioner_t *)self;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_if_then_else_t *n = (const void *)*out;
  if (n->else_case) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *cond = NULL;
  int is_false = 0;
  KILN_RETURN_IF_ERROR(decide_guard(p, n->condition, &cond, &is_false));
  if (is_false || is_nop(n->then_case)) {
    return nop(self->arena, out);
  }
  if (!cond) {
    *out = n->then_case;
  } else if (cond != n->condition) {
    return kiln_tir_if_then_else_create(self->arena, cond, n->then_case, NULL, out);
  }
  return KILN_OK;
}

static kiln_status_t partition_seq(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                   const kiln_tir_stmt_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_seq_t *n = (const void *)*out;
  int kept = 0;
  for (int i = 0; i < n->count; ++i) {
    kept += !is_nop(n->stmts[i]);
  }
  if (kept == n->count) {
    return KILN_OK;
  }
  const kiln_tir_stmt_t **stmts = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(self->arena, (size_t)kept, sizeof(*stmts),
                                                 _Alignof(max_align_t), (void **)&stmts));
  kept = 0;
  for (int i = 0; i < n->count; ++i) {
    if (!is_nop(n->stmts[i])) {
      stmts[kept++] = n->stmts[i];
    }
  }
  return kept == 1 ? (*out = stmts[0], KILN_OK)
                   : kiln_tir_seq_create(self->arena, kept, stmts, out);
}

/* `loop` over [lo, lo + count), its body rewritten with that range: NULL
 * when nothing is left to do, the body at v = lo when count is 1 and
 * `peeled`, else a loop (the same node when nothing changed). */
static kiln_status_t piece(partitioner_t *p, const kiln_tir_for_t *loop, int64_t lo, int64_t count,
                           int peeled, const kiln_tir_stmt_t **out) {
  kiln_arena_t *arena = p->mutator.arena;
  const kiln_tir_stmt_t *body = NULL;
  *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_analyzer_bind(&p->analyzer, loop->var, lo, lo + count - 1));
  kiln_status_t status = kiln_tir_mutator_mutate_stmt(&p->mutator, loop->body, &body);
  kiln_tir_analyzer_unbind(&p->analyzer);
  KILN_RETURN_IF_ERROR(status);
  if (is_nop(body)) {
    return KILN_OK;
  }
  kiln_tir_dtype_t dtype = loop->var->base.dtype;
  if (peeled && count == 1) {
    kiln_tir_var_value_t map = {loop->var, NULL};
    KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, dtype, lo, &map.value));
    return kiln_tir_substitute_stmt(arena, 1, &map, body, out);
  }
  if (!peeled && body == loop->body) {
    *out = &loop->base;
    return KILN_OK;
  }
  const kiln_tir_expr_t *min = loop->min, *extent = loop->extent;
  if (peeled) {
    KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, dtype, lo, &min));
    KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, dtype, count, &extent));
  }
  return kiln_tir_for_create(arena, loop->var, min, extent, loop->for_kind, body,
                             loop->num_annotations, loop->annotations, out);
}

static kiln_status_t split(partitioner_t *p, const kiln_tir_for_t *loop, int64_t min,
                           int64_t length, int64_t extent, const kiln_tir_stmt_t **out) {
  const kiln_tir_stmt_t *pieces[2] = {NULL, NULL};
  KILN_RETURN_IF_ERROR(piece(p, loop, min, length, 1, &pieces[0]));
  KILN_RETURN_IF_ERROR(piece(p, loop, min + length, extent - length, 1, &pieces[1]));
  int count = 0;
  for (int i = 0; i < 2; ++i) {
    if (pieces[i]) {
      pieces[count++] = pieces[i];
    }
  }
  if (count == 1) {
    *out = pieces[0];
    return KILN_OK;
  }
  return kiln_tir_seq_create(p->mutator.arena, count, pieces, out);
}

/* ---- loops of symbolic extent ---- */

/* A guard conjunct c * v + inner + S < 0 of a loop over v in [0, E) with E
 * not constant: inner bounded by the loops inside, S over variables no loop
 * binds (the symbolic dims of a kernel over run-time extents). It holds
 * for every inner iteration while v < cut = floor((-S - max(inner) - 1) /
 * c) + 1, so the loop splits into [0, clamp(cut)) without the conjunct and
 * [clamp(cut), E) with it (clamp to [0, E]). S is trusted not to wrap: its
 * variables are tensor extents, whose products the kernel indexes with. */
typedef struct symbolic_finder_t {
  kiln_tir_visitor_t visitor; /* first */
  kiln_tir_analyzer_t *analyzer;
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *conjunct; /* the first candidate, or NULL */
  int64_t c;
  int64_t max_inner;
  kiln_tir_linear_t symbolic;
} symbolic_finder_t;

typedef struct unbound_t {
  kiln_tir_visitor_t visitor; /* first */
  const kiln_tir_analyzer_t *analyzer;
  int found;
} unbound_t;

static kiln_status_t note_unbound(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  unbound_t *u = (unbound_t *)self;
  for (size_t i = 0; i < kiln_array_count(&u->analyzer->ranges); ++i) {
    const kiln_tir_var_range_t *r = kiln_array_at(&u->analyzer->ranges, i);
    if (&r->var->base == expr) {
      return KILN_OK;
    }
  }
  u->found = 1;
  return KILN_OK;
}

/* Whether `atom` uses a variable the analyzer does not bind. */
static int uses_unbound(const kiln_tir_analyzer_t *analyzer, const kiln_tir_expr_t *atom) {
  unbound_t u = {.analyzer = analyzer};
  kiln_tir_visitor_initialize(&u.visitor);
  u.visitor.expr_rules[KILN_TIR_EXPR_VAR] = note_unbound;
  kiln_status_t status = kiln_tir_visitor_visit_expr(&u.visitor, atom);
  if (status) {
    kiln_status_free(status);
    return 1;
  }
  return u.found;
}

static void consider_symbolic(symbolic_finder_t *f, const kiln_tir_expr_t *cond) {
  kiln_tir_linear_t lin;
  if (f->conjunct || !kiln_tir_linear_from_comparison(cond, &lin) ||
      !kiln_tir_dtype_equal(lin.dtype, f->var->base.dtype)) {
    return;
  }
  kiln_tir_linear_t inner = {.dtype = lin.dtype, .constant = lin.constant};
  kiln_tir_linear_t symbolic = {.dtype = lin.dtype};
  int64_t c = 0;
  for (int i = 0; i < lin.count; ++i) {
    const kiln_tir_linear_term_t *t = &lin.terms[i];
    if (t->atom == &f->var->base) {
      c = t->coeff;
    } else if (kiln_tir_expr_uses_vars(t->atom, 1, &f->var)) {
      return; /* v inside an atom: not linear in v */
    } else if (uses_unbound(f->analyzer, t->atom)) {
      symbolic.terms[symbolic.count++] = *t;
    } else {
      inner.terms[inner.count++] = *t;
    }
  }
  kiln_tir_interval_t r = kiln_tir_linear_bound(f->analyzer, &inner);
  if (c <= 0 || symbolic.count == 0 || !r.exact || r.max == INT64_MIN || r.max > INT32_MAX) {
    return;
  }
  f->conjunct = cond;
  f->c = c;
  f->max_inner = r.max;
  f->symbolic = symbolic;
}

static kiln_status_t find_symbolic_for(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  return visit_loop_body(self, ((symbolic_finder_t *)self)->analyzer, stmt);
}

static kiln_status_t find_symbolic_if(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  const kiln_tir_if_then_else_t *n = (const void *)stmt;
  const kiln_tir_expr_t *parts[MAX_CONJUNCTS];
  int count = n->else_case ? 0 : conjuncts(n->condition, parts, 0);
  for (int i = 0; i < count; ++i) {
    consider_symbolic((symbolic_finder_t *)self, parts[i]);
  }
  return kiln_tir_visitor_stmt_children(self, stmt);
}

/* Removes one conjunct (by identity) from every If that has it. */
typedef struct dropper_t {
  kiln_tir_mutator_t mutator; /* first */
  const kiln_tir_expr_t *conjunct;
} dropper_t;

static kiln_status_t drop_if(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                             const kiln_tir_stmt_t **out) {
  dropper_t *d = (dropper_t *)self;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_if_then_else_t *n = (const void *)*out;
  const kiln_tir_expr_t *parts[MAX_CONJUNCTS], *kept = NULL;
  int count = n->else_case ? 0 : conjuncts(n->condition, parts, 0), dropped = 0;
  for (int i = 0; i < count; ++i) {
    if (parts[i] == d->conjunct) {
      dropped = 1;
    } else if (kept) {
      KILN_RETURN_IF_ERROR(
          kiln_tir_binary_create(self->arena, KILN_TIR_EXPR_AND, kept, parts[i], &kept));
    } else {
      kept = parts[i];
    }
  }
  if (!dropped) {
    return KILN_OK;
  }
  if (!kept) {
    *out = n->then_case;
    return KILN_OK;
  }
  return kiln_tir_if_then_else_create(self->arena, kept, n->then_case, NULL, out);
}

/* max(0, min(floor((-S - max_inner - 1) / c) + 1, extent)). */
static kiln_status_t symbolic_cut(kiln_arena_t *arena, const symbolic_finder_t *f,
                                  const kiln_tir_expr_t *extent, const kiln_tir_expr_t **out) {
  kiln_tir_linear_t num = {.dtype = f->symbolic.dtype, .constant = -f->max_inner - 1};
  if (!kiln_tir_linear_add_scaled(&num, &f->symbolic, -1)) {
    return KILN_STATUS(OUT_OF_RANGE, "symbolic cut: coefficient overflow");
  }
  const kiln_tir_expr_t *e = NULL, *c = NULL, *one = NULL, *zero = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(arena, &num, &e));
  KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, num.dtype, f->c, &c));
  KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, num.dtype, 1, &one));
  KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, num.dtype, 0, &zero));
  if (f->c != 1) {
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, KILN_TIR_EXPR_FLOOR_DIV, e, c, &e));
  }
  KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, KILN_TIR_EXPR_ADD, e, one, &e));
  KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, KILN_TIR_EXPR_MIN, e, extent, &e));
  return kiln_tir_binary_create(arena, KILN_TIR_EXPR_MAX, zero, e, out);
}

static kiln_status_t split_symbolic(partitioner_t *p, const kiln_tir_for_t *loop,
                                    const symbolic_finder_t *f, const kiln_tir_stmt_t **out) {
  kiln_arena_t *arena = p->mutator.arena;
  dropper_t d = {.conjunct = f->conjunct};
  kiln_tir_mutator_initialize(&d.mutator, arena);
  d.mutator.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = drop_if;
  const kiln_tir_stmt_t *dropped = NULL, *main_body = NULL, *tail_body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&d.mutator, loop->body, &dropped));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&p->mutator, dropped, &main_body));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&p->mutator, loop->body, &tail_body));
  const kiln_tir_expr_t *cut = NULL, *rest = NULL;
  KILN_RETURN_IF_ERROR(symbolic_cut(arena, f, loop->extent, &cut));
  KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, KILN_TIR_EXPR_SUB, loop->extent, cut, &rest));
  const kiln_tir_stmt_t *pieces[2];
  KILN_RETURN_IF_ERROR(kiln_tir_for_create(arena, loop->var, loop->min, cut, loop->for_kind,
                                           main_body, loop->num_annotations, loop->annotations,
                                           &pieces[0]));
  KILN_RETURN_IF_ERROR(kiln_tir_for_create(arena, loop->var, cut, rest, loop->for_kind, tail_body,
                                           loop->num_annotations, loop->annotations, &pieces[1]));
  return kiln_tir_seq_create(arena, 2, pieces, out);
}

/* A loop over [0, E) with E not constant: split at its first symbolic
 * guard (above), else rebuilt as it is. */
static kiln_status_t partition_symbolic(partitioner_t *p, const kiln_tir_for_t *loop,
                                        const kiln_tir_stmt_t **out) {
  int64_t min = -1;
  symbolic_finder_t f = {.analyzer = &p->analyzer, .var = loop->var};
  if (kiln_tir_expr_as_int(loop->min, &min) && min == 0 &&
      loop->for_kind != KILN_TIR_FOR_VECTORIZED) {
    kiln_tir_visitor_initialize(&f.visitor);
    for (int i = 0; i < KILN_TIR_EXPR_KIND_COUNT_; ++i) {
      f.visitor.expr_rules[i] = find_skip_expr;
    }
    f.visitor.stmt_rules[KILN_TIR_STMT_FOR] = find_symbolic_for;
    f.visitor.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = find_symbolic_if;
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_stmt(&f.visitor, loop->body));
  }
  if (!f.conjunct) {
    return kiln_tir_mutator_rebuild_stmt(&p->mutator, &loop->base, out);
  }
  return split_symbolic(p, loop, &f, out);
}

static kiln_status_t partition_for(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                   const kiln_tir_stmt_t **out) {
  partitioner_t *p = (partitioner_t *)self;
  const kiln_tir_for_t *loop = (const void *)stmt;
  int64_t min = 0, extent = 0, last = 0;
  if (kiln_tir_expr_as_int(loop->min, &min) && !kiln_tir_expr_as_int(loop->extent, &extent)) {
    return kiln_status_annotate(partition_symbolic(p, loop, out), "loop %s", loop->var->name);
  }
  if (!kiln_tir_expr_as_int(loop->min, &min) || !kiln_tir_expr_as_int(loop->extent, &extent) ||
      extent <= 0 || __builtin_add_overflow(min, extent - 1, &last)) {
    return kiln_tir_mutator_rebuild_stmt(self, stmt, out);
  }
  int64_t length = extent;
  if (loop->for_kind != KILN_TIR_FOR_VECTORIZED) {
    KILN_RETURN_IF_ERROR_ANNOTATE(find_prefix(p, loop, min, extent, &length), "loop %s",
                                  loop->var->name);
  }
  if (length < extent) {
    KILN_RETURN_IF_ERROR_ANNOTATE(split(p, loop, min, length, extent, out), "loop %s",
                                  loop->var->name);
  } else {
    KILN_RETURN_IF_ERROR_ANNOTATE(piece(p, loop, min, extent, 0, out), "loop %s", loop->var->name);
  }
  return *out ? KILN_OK : nop(self->arena, out);
}

kiln_status_t kiln_tir_loop_partition(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                      const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "loop_partition: null function");
  }
  partitioner_t p;
  kiln_tir_mutator_initialize(&p.mutator, arena);
  p.mutator.stmt_rules[KILN_TIR_STMT_FOR] = partition_for;
  p.mutator.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = partition_if;
  p.mutator.stmt_rules[KILN_TIR_STMT_SEQ] = partition_seq;
  kiln_tir_analyzer_initialize(&p.analyzer, kiln_arena_allocator(arena));
  const kiln_tir_stmt_t *body = NULL;
  kiln_status_t status = kiln_tir_mutator_mutate_stmt(&p.mutator, func->body, &body);
  kiln_tir_analyzer_deinitialize(&p.analyzer);
  KILN_RETURN_IF_ERROR_ANNOTATE(status, "loop_partition %s", func->name);
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
