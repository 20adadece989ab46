/*
 * Vectorize: a vectorized loop becomes its body over vector lanes (TVM's
 * VectorizeLoop).
 *
 * A loop marked vectorized with constant extent L in [2, KILN_TIR_MAX_LANES]
 * is replaced by its body with the loop variable v replaced by
 * Ramp(min, 1, L). A second mutator (the lane rewriter) carries that
 * through the body bottom-up: an expression that does not use v stays the
 * same scalar node, one that does becomes an L-lane vector; a scalar meeting
 * a vector in a binary operation, select or intrinsic call is Broadcast;
 * ramp arithmetic folds (Ramp(b, s) + x = Ramp(b + x, s), likewise -, *
 * and ramp + ramp), so an index linear in v stays a Ramp; casts keep the
 * lanes; loads with a vector index become vector loads; stores with a vector
 * index become vector stores of a (broadcast if needed) vector value. Inner
 * loops stay loops with vectorized bodies: for k: C[ramp] = C[ramp] + ...
 * runs each lane's iterations in order, as the serial loop did, provided
 * each store writes one location per lane.
 *
 * When that cannot be shown, or the body needs a per-lane control flow, the
 * loop stays a serial loop with its body unchanged (TVM scalarizes): a
 * condition (IfThenElse, assertion) that depends on v; a let whose value
 * does; a loop bound that does; a store whose location does not depend on v
 * (every lane would write it: a reduction across lanes); a store whose
 * location is not provably lane-wise; an expression that is already a
 * vector. A store is lane-wise when one of its indices, in linear form
 * (analysis.h), has a key term whose value differs between any two lanes by
 * less than the gcd G of the coefficients of the other terms that use v (so
 * the index differs mod G): the term c * v (difference at most |c|(L-1)) or
 * c * (e % m) with e linear in v with coefficient ce and |ce|(L-1) < m
 * (difference at most |c|(m-1)); this covers flat indices of fused loops
 * such as (f // 23) * 23 + f % 23. Inside inner loops a store's indices must
 * not use the variables those loops (or lets) bind: for k: B[v + k] = ...
 * writes B[1] at (v=0, k=1) and (v=1, k=0), in the other order once the
 * lanes run together, so it stays serial. As in TVM, loads are not checked: that a
 * vectorized loop's iterations are independent is the schedule's promise,
 * as for parallel loops. Loops marked vectorized with a non-constant or too
 * large extent become serial.
 */
#include "tir/analysis.h"
#include "tir/functor.h"
#include "tir/transform.h"

#define MAX_INNER 32

typedef struct lanes_t {
  kiln_tir_mutator_t mutator; /* first: rules get &lanes->mutator */
  const kiln_tir_var_t *var;
  const kiln_tir_expr_t *ramp;
  int lanes;
  int failed;    /* the body cannot be vectorized */
  int num_inner; /* variables bound inside the body (loops, lets), innermost last */
  const kiln_tir_var_t *inner[MAX_INNER];
} lanes_t;

static int uses_var(const kiln_tir_expr_t *expr, const kiln_tir_var_t *var) {
  return kiln_tir_expr_uses_vars(expr, 1, &var);
}

/* ---- lane-wise stores ---- */

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int64_t magnitude(int64_t x) {
  return x < 0 ? (x == INT64_MIN ? INT64_MAX : -x) : x;
}

/* The coefficient of v in `lin` when v appears in no other atom, else 0. */
static int64_t only_coefficient(const kiln_tir_linear_t *lin, const kiln_tir_var_t *v) {
  int64_t c = 0;
  for (int i = 0; i < lin->count; ++i) {
    if (lin->terms[i].atom == &v->base) {
      c = lin->terms[i].coeff;
    } else if (uses_var(lin->terms[i].atom, v)) {
      return 0;
    }
  }
  return c;
}

/* The largest difference between two lanes of `atom` (0 when it has no
 * injective key form). */
static int64_t key_spread(const kiln_tir_expr_t *atom, const kiln_tir_var_t *v, int lanes) {
  int64_t spread = 0, m = 0;
  if (atom == &v->base) {
    return lanes - 1;
  }
  if (atom->kind != KILN_TIR_EXPR_FLOOR_MOD) {
    return 0;
  }
  const kiln_tir_binary_t *n = (const void *)atom;
  kiln_tir_linear_t e;
  if (!kiln_tir_expr_as_int(n->b, &m) || m <= 0 || !kiln_tir_linear_from_expr(n->a, &e)) {
    return 0;
  }
  int64_t ce = only_coefficient(&e, v);
  if (ce == 0 || __builtin_mul_overflow(magnitude(ce), (int64_t)(lanes - 1), &spread) ||
      spread >= m) {
    return 0;
  }
  return m - 1;
}

static int index_is_lanewise(const kiln_tir_expr_t *index, const kiln_tir_var_t *v, int lanes) {
  kiln_tir_linear_t lin;
  if (!kiln_tir_linear_from_expr(index, &lin)) {
    return 0;
  }
  for (int k = 0; k < lin.count; ++k) {
    int64_t spread = key_spread(lin.terms[k].atom, v, lanes), total = 0, g = 0;
    if (spread == 0 || __builtin_mul_overflow(spread, magnitude(lin.terms[k].coeff), &total)) {
      continue;
    }
    for (int i = 0; i < lin.count; ++i) {
      if (i != k && uses_var(lin.terms[i].atom, v)) {
        g = gcd(g, magnitude(lin.terms[i].coeff));
      }
    }
    if (g == 0 || total < g) {
      return 1;
    }
  }
  return 0;
}

/* ---- the lane rewriter ---- */

static const kiln_tir_expr_t *broadcast_to(lanes_t *l, const kiln_tir_expr_t *x, int lanes,
                                           kiln_status_t *status) {
  if (*status || x->dtype.lanes == lanes) {
    return x;
  }
  const kiln_tir_expr_t *out = x;
  *status = kiln_tir_broadcast_create(l->mutator.arena, x, lanes, &out);
  return out;
}

static kiln_status_t lanes_var(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                               const kiln_tir_expr_t **out) {
  lanes_t *l = (lanes_t *)self;
  *out = expr == &l->var->base ? l->ramp : expr;
  return KILN_OK;
}

static kiln_status_t lanes_fail_expr(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                     const kiln_tir_expr_t **out) {
  ((lanes_t *)self)->failed = 1; /* already a vector */
  *out = expr;
  return KILN_OK;
}

static kiln_status_t lanes_cast(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                const kiln_tir_expr_t **out) {
  const kiln_tir_expr_t *value = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tir_mutator_mutate_expr(self, ((const kiln_tir_cast_t *)expr)->value, &value));
  if (value == ((const kiln_tir_cast_t *)expr)->value) {
    *out = expr;
    return KILN_OK;
  }
  return kiln_tir_cast_create(self->arena, kiln_tir_vector(expr->dtype.base, value->dtype.lanes),
                              value, out);
}

static kiln_status_t lanes_let(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                               const kiln_tir_expr_t **out) {
  const kiln_tir_expr_t *value = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tir_mutator_mutate_expr(self, ((const kiln_tir_let_t *)expr)->value, &value));
  if (value->dtype.lanes != 1) {
    return lanes_fail_expr(self, expr, out);
  }
  return kiln_tir_mutator_rebuild_expr(self, expr, out);
}

/* Ramp arithmetic: ramp op scalar, scalar op ramp, ramp +- ramp; *out NULL
 * when no rule applies. */
static kiln_status_t fold_ramp(kiln_arena_t *arena, kiln_tir_expr_kind_t kind,
                               const kiln_tir_expr_t *a, const kiln_tir_expr_t *b,
                               const kiln_tir_expr_t **out) {
  *out = NULL;
  int ra = a->kind == KILN_TIR_EXPR_RAMP, rb = b->kind == KILN_TIR_EXPR_RAMP;
  const kiln_tir_ramp_t *x = ra ? (const void *)a : (const void *)b;
  const kiln_tir_expr_t *base = NULL, *stride = x->stride, *zero = NULL;
  int lanes = x->base.dtype.lanes;
  if (ra && rb && (kind == KILN_TIR_EXPR_ADD || kind == KILN_TIR_EXPR_SUB)) {
    const kiln_tir_ramp_t *y = (const void *)b;
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, kind, x->start, y->start, &base));
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, kind, x->stride, y->stride, &stride));
  } else if ((ra && b->dtype.lanes == 1) || (rb && a->dtype.lanes == 1)) {
    const kiln_tir_expr_t *s = ra ? b : a;
    if (kind == KILN_TIR_EXPR_MUL) {
      KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, kind, x->start, s, &base));
      KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, kind, x->stride, s, &stride));
    } else if (kind == KILN_TIR_EXPR_ADD || kind == KILN_TIR_EXPR_SUB) {
      KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, kind, a == &x->base ? x->start : s,
                                                  a == &x->base ? s : x->start, &base));
      if (!ra && kind == KILN_TIR_EXPR_SUB) { /* s - ramp: the stride changes sign */
        KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, stride->dtype, 0, &zero));
        KILN_RETURN_IF_ERROR(
            kiln_tir_binary_create(arena, KILN_TIR_EXPR_SUB, zero, x->stride, &stride));
      }
    } else {
      return KILN_OK;
    }
  } else {
    return KILN_OK;
  }
  return kiln_tir_ramp_create(arena, base, stride, lanes, out);
}

static kiln_status_t lanes_binary(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                  const kiln_tir_expr_t **out) {
  const kiln_tir_binary_t *n = (const void *)expr;
  const kiln_tir_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->a, &a));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->b, &b));
  if (a == n->a && b == n->b) {
    *out = expr;
    return KILN_OK;
  }
  if (kiln_tir_dtype_is_int(a->dtype) && kiln_tir_dtype_is_int(b->dtype)) {
    KILN_RETURN_IF_ERROR(fold_ramp(self->arena, expr->kind, a, b, out));
    if (*out) {
      return KILN_OK;
    }
  }
  int lanes = a->dtype.lanes > b->dtype.lanes ? a->dtype.lanes : b->dtype.lanes;
  kiln_status_t status = KILN_OK;
  a = broadcast_to((lanes_t *)self, a, lanes, &status);
  b = broadcast_to((lanes_t *)self, b, lanes, &status);
  KILN_RETURN_IF_ERROR(status);
  return kiln_tir_binary_create(self->arena, expr->kind, a, b, out);
}

static kiln_status_t lanes_select(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                  const kiln_tir_expr_t **out) {
  const kiln_tir_select_t *n = (const void *)expr;
  const kiln_tir_expr_t *c = NULL, *t = NULL, *f = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->condition, &c));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->true_value, &t));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->false_value, &f));
  if (c == n->condition && t == n->true_value && f == n->false_value) {
    *out = expr;
    return KILN_OK;
  }
  int lanes = ((lanes_t *)self)->lanes;
  kiln_status_t status = KILN_OK;
  t = broadcast_to((lanes_t *)self, t, lanes, &status);
  f = broadcast_to((lanes_t *)self, f, lanes, &status);
  KILN_RETURN_IF_ERROR(status);
  return kiln_tir_select_create(self->arena, c, t, f, out);
}

static kiln_status_t lanes_call(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                const kiln_tir_expr_t **out) {
  const kiln_tir_call_t *n = (const void *)expr;
  const kiln_tir_expr_t *args[8];
  int changed = 0, lanes = 1;
  if (n->num_args > 8) {
    return lanes_fail_expr(self, expr, out);
  }
  for (int i = 0; i < n->num_args; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->args[i], &args[i]));
    changed |= args[i] != n->args[i];
    lanes = args[i]->dtype.lanes > lanes ? args[i]->dtype.lanes : lanes;
  }
  if (!changed) {
    *out = expr;
    return KILN_OK;
  }
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < n->num_args; ++i) {
    args[i] = broadcast_to((lanes_t *)self, args[i], lanes, &status);
  }
  KILN_RETURN_IF_ERROR(status);
  return kiln_tir_call_create(self->arena, n->op, n->num_args, args, out);
}

static kiln_status_t lanes_store(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                 const kiln_tir_stmt_t **out) {
  lanes_t *l = (lanes_t *)self;
  const kiln_tir_buffer_store_t *n = (const void *)stmt;
  int lanewise = 0, varies = 0;
  for (int i = 0; i < n->num_indices; ++i) {
    varies |= uses_var(n->indices[i], l->var);
    lanewise |= index_is_lanewise(n->indices[i], l->var, l->lanes);
  }
  for (int i = 0; i < n->num_indices; ++i) {
    for (int k = 0; k < l->num_inner; ++k) {
      lanewise &= !uses_var(n->indices[i], l->inner[k]);
    }
  }
  *out = stmt;
  if (!varies || !lanewise) {
    l->failed = 1;
    return KILN_OK;
  }
  const kiln_tir_expr_t *value = NULL, *indices[KILN_TIR_MAX_DIMS];
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->value, &value));
  for (int i = 0; i < n->num_indices; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->indices[i], &indices[i]));
  }
  kiln_status_t status = KILN_OK;
  value = broadcast_to(l, value, l->lanes, &status);
  KILN_RETURN_IF_ERROR(status);
  return kiln_tir_buffer_store_create(self->arena, n->buffer, value, n->num_indices, indices, out);
}

/* A statement whose expressions must stay scalar: rebuilt, or failed. */
static kiln_status_t lanes_scalar_control(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                          const kiln_tir_stmt_t **out) {
  lanes_t *l = (lanes_t *)self;
  const kiln_tir_expr_t *control[2] = {NULL, NULL};
  switch (stmt->kind) {
  case KILN_TIR_STMT_FOR:
    control[0] = ((const kiln_tir_for_t *)stmt)->min;
    control[1] = ((const kiln_tir_for_t *)stmt)->extent;
    break;
  case KILN_TIR_STMT_IF_THEN_ELSE:
    control[0] = ((const kiln_tir_if_then_else_t *)stmt)->condition;
    break;
  case KILN_TIR_STMT_LET_STMT:
    control[0] = ((const kiln_tir_let_stmt_t *)stmt)->value;
    break;
  case KILN_TIR_STMT_ASSERT:
    control[0] = ((const kiln_tir_assert_t *)stmt)->condition;
    break;
  case KILN_TIR_STMT_BUFFER_STORE:
  case KILN_TIR_STMT_ALLOCATE:
  case KILN_TIR_STMT_SEQ:
  case KILN_TIR_STMT_EVALUATE:
  case KILN_TIR_STMT_PREFETCH:
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  for (int i = 0; i < 2; ++i) {
    if (control[i] && uses_var(control[i], l->var)) {
      l->failed = 1;
      *out = stmt;
      return KILN_OK;
    }
  }
  const kiln_tir_var_t *bound =
      stmt->kind == KILN_TIR_STMT_FOR        ? ((const kiln_tir_for_t *)stmt)->var
      : stmt->kind == KILN_TIR_STMT_LET_STMT ? ((const kiln_tir_let_stmt_t *)stmt)->var
                                             : NULL;
  if (bound && l->num_inner == MAX_INNER) {
    l->failed = 1;
    *out = stmt;
    return KILN_OK;
  }
  if (bound) {
    l->inner[l->num_inner++] = bound;
  }
  kiln_status_t status = kiln_tir_mutator_rebuild_stmt(self, stmt, out);
  l->num_inner -= bound != NULL;
  return status;
}

/* The body of `loop` over L lanes, or NULL when it cannot be vectorized. */
static kiln_status_t vectorize_body(kiln_arena_t *arena, const kiln_tir_for_t *loop, int lanes,
                                    const kiln_tir_stmt_t **out) {
  *out = NULL;
  lanes_t l = {.var = loop->var, .lanes = lanes, .failed = 0};
  kiln_tir_mutator_initialize(&l.mutator, arena);
  for (int k = KILN_TIR_EXPR_ADD; k <= KILN_TIR_EXPR_OR; ++k) {
    l.mutator.expr_rules[k] = lanes_binary;
  }
  l.mutator.expr_rules[KILN_TIR_EXPR_VAR] = lanes_var;
  l.mutator.expr_rules[KILN_TIR_EXPR_RAMP] = lanes_fail_expr;
  l.mutator.expr_rules[KILN_TIR_EXPR_BROADCAST] = lanes_fail_expr;
  l.mutator.expr_rules[KILN_TIR_EXPR_CAST] = lanes_cast;
  l.mutator.expr_rules[KILN_TIR_EXPR_LET] = lanes_let;
  l.mutator.expr_rules[KILN_TIR_EXPR_SELECT] = lanes_select;
  l.mutator.expr_rules[KILN_TIR_EXPR_CALL] = lanes_call;
  l.mutator.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = lanes_store;
  l.mutator.stmt_rules[KILN_TIR_STMT_FOR] = lanes_scalar_control;
  l.mutator.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = lanes_scalar_control;
  l.mutator.stmt_rules[KILN_TIR_STMT_LET_STMT] = lanes_scalar_control;
  l.mutator.stmt_rules[KILN_TIR_STMT_ASSERT] = lanes_scalar_control;
  const kiln_tir_expr_t *one = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_int_imm_create(arena, loop->var->base.dtype, 1, &one));
  KILN_RETURN_IF_ERROR(kiln_tir_ramp_create(arena, loop->min, one, lanes, &l.ramp));
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&l.mutator, loop->body, &body));
  *out = l.failed ? NULL : body;
  return KILN_OK;
}

static kiln_status_t vectorize_for(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                   const kiln_tir_stmt_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_for_t *loop = (const void *)*out;
  if (loop->for_kind != KILN_TIR_FOR_VECTORIZED) {
    return KILN_OK;
  }
  int64_t extent = 0;
  if (kiln_tir_expr_as_int(loop->extent, &extent) && extent >= 2 && extent <= KILN_TIR_MAX_LANES) {
    const kiln_tir_stmt_t *body = NULL;
    KILN_RETURN_IF_ERROR_ANNOTATE(vectorize_body(self->arena, loop, (int)extent, &body), "loop %s",
                                  loop->var->name);
    if (body) {
      *out = body;
      return KILN_OK;
    }
  }
  return kiln_tir_for_create(self->arena, loop->var, loop->min, loop->extent, KILN_TIR_FOR_SERIAL,
                             loop->body, loop->num_annotations, loop->annotations, out);
}

kiln_status_t kiln_tir_vectorize(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                 const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "vectorize: null function");
  }
  kiln_tir_mutator_t m;
  kiln_tir_mutator_initialize(&m, arena);
  m.stmt_rules[KILN_TIR_STMT_FOR] = vectorize_for;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_mutator_mutate_stmt(&m, func->body, &body), "vectorize %s",
                                func->name);
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
