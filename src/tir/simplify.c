/*
 * The simplifier; see simplify.h.
 *
 * One mutator whose expression rule for every kind first rebuilds the node
 * from simplified children (the default rule) and then tries the rewrite for
 * its kind. Loops, lets and let statements have their own rules: they bind
 * the variable's range in the analyzer around their body. Every rule that
 * needs a fact gets it from analysis.h and returns the node unchanged when
 * the fact cannot be proved, so a rule "not firing" is the default path.
 */
#include "tir/simplify.h"

#include "base/scalar_ops.h"

#include "tir/functor.h"
#include "tir/interp_value.h"

typedef struct simplifier_t {
  kiln_tir_mutator_t mutator; /* first: rules get &simplifier->mutator */
  kiln_tir_analyzer_t *analyzer;
} simplifier_t;

static kiln_arena_t *arena_of(simplifier_t *s) {
  return s->mutator.arena;
}

static int as_float(const kiln_tir_expr_t *e, double *out) {
  if (e->kind != KILN_TIR_EXPR_FLOAT_IMM) {
    return 0;
  }
  *out = ((const kiln_tir_float_imm_t *)e)->value;
  return 1;
}

static int fits(kiln_tir_dtype_t dtype, int64_t v) {
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(dtype.base, &lo, &hi);
  return v >= lo && v <= hi;
}

static kiln_status_t make_int(simplifier_t *s, kiln_tir_dtype_t dtype, int64_t v,
                              const kiln_tir_expr_t **out) {
  return kiln_tir_int_imm_create(arena_of(s), dtype, v, out);
}

static kiln_status_t make_bool(simplifier_t *s, int v, const kiln_tir_expr_t **out) {
  return make_int(s, kiln_tir_scalar(KILN_DTYPE_BOOL), v != 0, out);
}

/* ---- constant folding ---- */

/* 1 and *out set when the integer operation folds exactly. */
static int fold_int(kiln_tir_expr_kind_t kind, int64_t x, int64_t y, int64_t *out) {
  switch (kind) {
  case KILN_TIR_EXPR_ADD:
    return !__builtin_add_overflow(x, y, out);
  case KILN_TIR_EXPR_SUB:
    return !__builtin_sub_overflow(x, y, out);
  case KILN_TIR_EXPR_MUL:
    return !__builtin_mul_overflow(x, y, out);
  case KILN_TIR_EXPR_FLOOR_DIV:
    /* A zero divisor folds to 0, as it runs (base/scalar_ops.h); INT64_MIN
     * / -1 wraps at run time, which the int64 fold does not express. */
    *out = kiln_scalar_int_floor_divide(x, y);
    return !(x == INT64_MIN && y == -1);
  case KILN_TIR_EXPR_FLOOR_MOD:
    *out = kiln_scalar_int_floor_mod(x, y);
    return 1;
  case KILN_TIR_EXPR_MIN:
    *out = x < y ? x : y;
    return 1;
  case KILN_TIR_EXPR_MAX:
    *out = x > y ? x : y;
    return 1;
  case KILN_TIR_EXPR_EQ:
    *out = x == y;
    return 1;
  case KILN_TIR_EXPR_NE:
    *out = x != y;
    return 1;
  case KILN_TIR_EXPR_LT:
    *out = x < y;
    return 1;
  case KILN_TIR_EXPR_LE:
    *out = x <= y;
    return 1;
  case KILN_TIR_EXPR_GT:
    *out = x > y;
    return 1;
  case KILN_TIR_EXPR_GE:
    *out = x >= y;
    return 1;
  case KILN_TIR_EXPR_AND:
    *out = x && y;
    return 1;
  case KILN_TIR_EXPR_OR:
    *out = x || y;
    return 1;
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_INT_IMM:
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
  case KILN_TIR_EXPR_NOT:
  case KILN_TIR_EXPR_SELECT:
  case KILN_TIR_EXPR_CAST:
  case KILN_TIR_EXPR_BUFFER_LOAD:
  case KILN_TIR_EXPR_RAMP:
  case KILN_TIR_EXPR_BROADCAST:
  case KILN_TIR_EXPR_CALL:
  case KILN_TIR_EXPR_LET:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return 0;
}

static kiln_status_t fold_float(simplifier_t *s, const kiln_tir_binary_t *n, double x, double y,
                                const kiln_tir_expr_t **out) {
  kiln_tir_dtype_t dtype = n->a->dtype;
  if (dtype.base != KILN_DTYPE_FLOAT32 && dtype.base != KILN_DTYPE_FLOAT64) {
    *out = &n->base;
    return KILN_OK;
  }
  kiln_tir_value_t a = {.dtype = dtype}, b = {.dtype = dtype}, r;
  a.lanes.f[0] = x;
  b.lanes.f[0] = y;
  if (n->base.kind == KILN_TIR_EXPR_DIV && y == 0) {
    *out = &n->base; /* never fold a division by zero */
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_tir_value_binary(n->base.kind, &a, &b, n->base.dtype, &r));
  if (kiln_tir_dtype_is_bool(n->base.dtype)) {
    return make_bool(s, (int)r.lanes.i[0], out);
  }
  return kiln_tir_float_imm_create(arena_of(s), n->base.dtype, r.lanes.f[0], out);
}

/* Folds a binary node with two constant operands; *out = the node otherwise. */
static kiln_status_t fold_binary(simplifier_t *s, const kiln_tir_binary_t *n,
                                 const kiln_tir_expr_t **out) {
  *out = &n->base;
  int64_t x = 0, y = 0, r = 0;
  double fx = 0, fy = 0;
  if (kiln_tir_expr_as_int(n->a, &x) && kiln_tir_expr_as_int(n->b, &y)) {
    /* uint64 above INT64_MAX is a negative int64 here: left to run time. */
    int unsigned_top = n->a->dtype.base == KILN_DTYPE_UINT64 && (x < 0 || y < 0);
    if (!unsigned_top && fold_int(n->base.kind, x, y, &r) && fits(n->base.dtype, r)) {
      return make_int(s, n->base.dtype, r, out);
    }
    return KILN_OK;
  }
  if (as_float(n->a, &fx) && as_float(n->b, &fy)) {
    return fold_float(s, n, fx, fy, out);
  }
  return KILN_OK;
}

static kiln_status_t fold_cast(simplifier_t *s, const kiln_tir_cast_t *n,
                               const kiln_tir_expr_t **out) {
  *out = &n->base;
  kiln_tir_dtype_t to = n->base.dtype;
  int64_t x = 0;
  double f = 0;
  int from_int = kiln_tir_expr_as_int(n->value, &x), from_float = as_float(n->value, &f);
  if ((!from_int && !from_float) ||
      (to.base != KILN_DTYPE_FLOAT32 && to.base != KILN_DTYPE_FLOAT64 &&
       !kiln_tir_dtype_is_int(to) && !kiln_tir_dtype_is_bool(to)) ||
      (from_float && n->value->dtype.base != KILN_DTYPE_FLOAT32 &&
       n->value->dtype.base != KILN_DTYPE_FLOAT64)) {
    return KILN_OK;
  }
  kiln_tir_value_t v = {.dtype = n->value->dtype}, r;
  if (from_int) {
    v.lanes.i[0] = x;
  } else {
    v.lanes.f[0] = f;
  }
  /* Saturating, NaN to 0, as it runs (base/scalar_ops.h). */
  KILN_RETURN_IF_ERROR(kiln_tir_value_cast(to, &v, &r));
  if (kiln_tir_dtype_is_float(to)) {
    return kiln_tir_float_imm_create(arena_of(s), to, r.lanes.f[0], out);
  }
  if (!fits(to, r.lanes.i[0])) {
    return KILN_OK; /* uint64 above INT64_MAX: no constant holds it; left to run time */
  }
  return make_int(s, to, r.lanes.i[0], out);
}

/* An integer intrinsic (the shifts) of constants, as it runs. */
static kiln_status_t fold_call(simplifier_t *s, const kiln_tir_call_t *n,
                               const kiln_tir_expr_t **out) {
  *out = &n->base;
  kiln_tir_dtype_t dtype = n->base.dtype;
  if (kiln_tir_intrinsic_class(n->op) != KILN_TIR_INTRINSIC_CLASS_INT ||
      !kiln_tir_dtype_is_int(dtype) || dtype.lanes != 1 || dtype.base == KILN_DTYPE_UINT64) {
    return KILN_OK;
  }
  kiln_tir_value_t args[2] = {{.dtype = dtype}, {.dtype = dtype}}, r;
  for (int i = 0; i < n->num_args && i < 2; ++i) {
    if (!kiln_tir_expr_as_int(n->args[i], &args[i].lanes.i[0])) {
      return KILN_OK;
    }
  }
  kiln_tir_value_call(n->op, n->num_args, args, &r);
  return make_int(s, dtype, r.lanes.i[0], out);
}

/* ---- linear forms ---- */

static int linear_emittable(const kiln_tir_linear_t *l) {
  if (!fits(l->dtype, l->constant) || l->constant == INT64_MIN) {
    return 0;
  }
  for (int i = 0; i < l->count; ++i) {
    if (!fits(l->dtype, l->terms[i].coeff) || l->terms[i].coeff == INT64_MIN ||
        !fits(l->dtype, -l->terms[i].coeff)) {
      return 0;
    }
  }
  return 1;
}

/* The canonical expression of `l`, or `fallback` when it cannot be written
 * in the dtype or is the same as `fallback`. */
static kiln_status_t emit_linear(simplifier_t *s, const kiln_tir_linear_t *l,
                                 const kiln_tir_expr_t *fallback, const kiln_tir_expr_t **out) {
  *out = fallback;
  if (!linear_emittable(l)) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *e = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(arena_of(s), l, &e));
  if (!kiln_tir_expr_equal(e, fallback)) {
    *out = e;
  }
  return KILN_OK;
}

/* The linear form of `e` when its value provably equals it (no wrap). */
static int exact_linear(simplifier_t *s, const kiln_tir_expr_t *e, kiln_tir_linear_t *out) {
  return kiln_tir_linear_from_expr(e, out) && kiln_tir_linear_trusted(s->analyzer, out);
}

/* Bounds of a - b, when both are exact; 0 otherwise. */
static int difference_bound(simplifier_t *s, const kiln_tir_expr_t *a, const kiln_tir_expr_t *b,
                            kiln_tir_interval_t *out) {
  kiln_tir_linear_t la, lb;
  if (!kiln_tir_dtype_is_int(a->dtype) || a->dtype.lanes != 1 || !exact_linear(s, a, &la) ||
      !exact_linear(s, b, &lb) || !kiln_tir_linear_add_scaled(&la, &lb, -1)) {
    return 0;
  }
  *out = kiln_tir_linear_bound(s->analyzer, &la);
  return out->exact;
}

/* `e` as floordiv or floormod (by `kind`) of some x by a constant c > 0. */
static int as_div_mod(const kiln_tir_expr_t *e, kiln_tir_expr_kind_t kind,
                      const kiln_tir_expr_t **out_x, int64_t *out_c) {
  if (e->kind != kind) {
    return 0;
  }
  const kiln_tir_binary_t *n = (const kiln_tir_binary_t *)e;
  *out_x = n->a;
  return kiln_tir_expr_as_int(n->b, out_c) && *out_c > 0;
}

/* Removes term `index` of `l`. */
static void linear_remove(kiln_tir_linear_t *l, int index) {
  for (int i = index; i + 1 < l->count; ++i) {
    l->terms[i] = l->terms[i + 1];
  }
  l->count--;
}

/* Whether `atom` is (x // d) * e or e * (x // d) with e = q * d (q a
 * constant, as a linear form); its x // d and q. */
static int as_scaled_div(const kiln_tir_expr_t *atom, const kiln_tir_expr_t **out_div,
                         int64_t *out_q) {
  if (atom->kind != KILN_TIR_EXPR_MUL) {
    return 0;
  }
  const kiln_tir_binary_t *m = (const void *)atom;
  for (int side = 0; side < 2; ++side) {
    const kiln_tir_expr_t *div = side ? m->b : m->a, *e = side ? m->a : m->b;
    kiln_tir_linear_t le;
    if (div->kind == KILN_TIR_EXPR_FLOOR_DIV && kiln_tir_linear_from_expr(e, &le) &&
        le.count == 1 && le.constant == 0 &&
        kiln_tir_expr_equal(le.terms[0].atom, ((const kiln_tir_binary_t *)div)->b)) {
      *out_div = div;
      *out_q = le.terms[0].coeff;
      return 1;
    }
  }
  return 0;
}

/* The symbolic-divisor form of the fold below: k*(x % d) and c*((x // d) *
 * (q*d)) with c*q = k fold into k*x, for d not a constant that is
 * nonzero in scope (the identity x = d*(x // d) + x % d holds for d != 0,
 * and in wrapping arithmetic). Flattening a (B, N, 32) index leaves
 * (f // N) * (N * 32) + (f % N) * 32: it is f * 32. */
static int fold_symbolic_div_mod_pair(simplifier_t *s, kiln_tir_linear_t *l) {
  for (int m = 0; m < l->count; ++m) {
    const kiln_tir_binary_t *mod = (const void *)l->terms[m].atom;
    int64_t k = l->terms[m].coeff, q = 0, c = 0;
    if (mod->base.kind != KILN_TIR_EXPR_FLOOR_MOD || kiln_tir_expr_as_int(mod->b, &c)) {
      continue;
    }
    kiln_tir_interval_t d = kiln_tir_analyzer_bound(s->analyzer, mod->b);
    if (!d.exact || (d.min <= 0 && d.max >= 0)) {
      continue;
    }
    for (int t = 0; t < l->count; ++t) {
      const kiln_tir_expr_t *div = NULL;
      if (t == m || !as_scaled_div(l->terms[t].atom, &div, &q) ||
          !kiln_tir_expr_equal(((const kiln_tir_binary_t *)div)->a, mod->a) ||
          !kiln_tir_expr_equal(((const kiln_tir_binary_t *)div)->b, mod->b) ||
          __builtin_mul_overflow(l->terms[t].coeff, q, &c) || c != k) {
        continue;
      }
      kiln_tir_linear_t folded = *l, lx;
      linear_remove(&folded, m > t ? m : t);
      linear_remove(&folded, m > t ? t : m);
      if (!kiln_tir_linear_from_expr(mod->a, &lx)) {
        lx = (kiln_tir_linear_t){.dtype = mod->a->dtype, .count = 1};
        lx.terms[0] = (kiln_tir_linear_term_t){mod->a, 1};
      }
      if (!kiln_tir_linear_add_scaled(&folded, &lx, k)) {
        return 0;
      }
      *l = folded;
      return 1;
    }
  }
  return 0;
}

/* Folds k*c*(x // c) + k*(x % c) into k*x wherever a linear form has both
 * terms (the identity holds for every x, c > 0, in integers); 1 when it did.
 * x joins as its own linear form when that is exact, else as an atom. */
static int fold_div_mod_pair(simplifier_t *s, kiln_tir_linear_t *l) {
  for (int m = 0; m < l->count; ++m) {
    const kiln_tir_expr_t *x = NULL;
    int64_t c = 0;
    if (!as_div_mod(l->terms[m].atom, KILN_TIR_EXPR_FLOOR_MOD, &x, &c)) {
      continue;
    }
    int64_t k = l->terms[m].coeff;
    for (int d = 0; d < l->count; ++d) {
      const kiln_tir_expr_t *y = NULL;
      int64_t c2 = 0;
      if (!as_div_mod(l->terms[d].atom, KILN_TIR_EXPR_FLOOR_DIV, &y, &c2) || c2 != c ||
          !kiln_tir_expr_equal(x, y) || k > INT64_MAX / c || k < INT64_MIN / c ||
          l->terms[d].coeff != k * c) {
        continue;
      }
      kiln_tir_linear_t folded = *l;
      linear_remove(&folded, m > d ? m : d);
      linear_remove(&folded, m > d ? d : m);
      kiln_tir_linear_t lx;
      if (!exact_linear(s, x, &lx)) {
        lx = (kiln_tir_linear_t){.dtype = x->dtype, .count = 1};
        lx.terms[0] = (kiln_tir_linear_term_t){x, 1};
      }
      if (!kiln_tir_linear_add_scaled(&folded, &lx, k)) {
        return 0;
      }
      *l = folded;
      return 1;
    }
  }
  return 0;
}

/* ---- bound-based rules ---- */

/* (q c + r) // c as q + r // c, and (q c + r) % c as r % c: exact in
 * integers whatever r is, so the multiples of c leave the division (a
 * reshape's flat index i * 196 + r over 14 columns: i * 14 + r // 14).
 * Only when q has a term, and both parts' bounds fit the dtype. */
static kiln_status_t split_div_mod(simplifier_t *s, const kiln_tir_binary_t *n,
                                   const kiln_tir_linear_t *q, const kiln_tir_linear_t *r,
                                   const kiln_tir_expr_t **out) {
  if ((q->count == 0 && q->constant == 0) || r->count == 0 ||
      !kiln_tir_linear_trusted(s->analyzer, q) || !kiln_tir_linear_trusted(s->analyzer, r)) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *rest = NULL, *part = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(arena_of(s), r, &rest));
  KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena_of(s), n->base.kind, rest, n->b, &part));
  if (n->base.kind == KILN_TIR_EXPR_FLOOR_MOD) {
    *out = part;
    return KILN_OK;
  }
  kiln_tir_linear_t sum = *q;
  if (sum.count >= KILN_TIR_LINEAR_MAX_TERMS) {
    return KILN_OK;
  }
  sum.terms[sum.count++] = (kiln_tir_linear_term_t){part, 1};
  return emit_linear(s, &sum, &n->base, out);
}

/* p when `atom` is p * e or e * p, else NULL. */
static const kiln_tir_expr_t *multiple_of(const kiln_tir_expr_t *atom, const kiln_tir_expr_t *e) {
  if (atom->kind != KILN_TIR_EXPR_MUL) {
    return NULL;
  }
  const kiln_tir_binary_t *m = (const void *)atom;
  return kiln_tir_expr_equal(m->b, e) ? m->a : kiln_tir_expr_equal(m->a, e) ? m->b : NULL;
}

/* x // d or x % d for d = g * e (g > 0 constant, e positive in scope):
 * with x = g*Q + R, R in [0, g), x // d is Q // e and x % d is g*(Q % e) +
 * R (mixed radix: a flat index 32 * f + j over 32 * N columns is f // N
 * rows in), plus W for the terms (k g) * (p * e) of x, k p whole
 * divisors (W = the sum of k p); then Q // e is 0 and Q % e is Q when Q is in [0, e), which a
 * loop over [0, e) gives. */
static kiln_status_t rewrite_symbolic_div_mod(simplifier_t *s, const kiln_tir_binary_t *n,
                                              const kiln_tir_expr_t **out) {
  kiln_tir_linear_t a, d;
  if (!kiln_tir_linear_from_expr(n->b, &d) || d.count != 1 || d.constant != 0 ||
      d.terms[0].coeff <= 0 || kiln_tir_analyzer_bound(s->analyzer, d.terms[0].atom).min < 1 ||
      !exact_linear(s, n->a, &a)) {
    return KILN_OK;
  }
  int64_t g = d.terms[0].coeff;
  const kiln_tir_expr_t *e = d.terms[0].atom;
  kiln_tir_linear_t q = {.dtype = a.dtype}, r = {.dtype = a.dtype}, w = {.dtype = a.dtype};
  q.constant = kiln_scalar_int_floor_divide(a.constant, g);
  r.constant = kiln_scalar_int_floor_mod(a.constant, g);
  for (int i = 0; i < a.count; ++i) {
    const kiln_tir_expr_t *whole = multiple_of(a.terms[i].atom, e);
    if (whole && a.terms[i].coeff % g == 0) { /* (k g) * (p * e): k p whole divisors */
      w.terms[w.count++] = (kiln_tir_linear_term_t){whole, a.terms[i].coeff / g};
      continue;
    }
    kiln_tir_linear_t *part = a.terms[i].coeff % g == 0 ? &q : &r;
    part->terms[part->count] = a.terms[i];
    part->terms[part->count].coeff = part == &q ? a.terms[i].coeff / g : a.terms[i].coeff;
    part->count++;
  }
  kiln_tir_interval_t rb = kiln_tir_linear_bound(s->analyzer, &r);
  kiln_tir_interval_t qb = kiln_tir_linear_bound(s->analyzer, &q);
  if (!rb.exact || rb.min < 0 || rb.max >= g || !kiln_tir_linear_trusted(s->analyzer, &q)) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *qe = NULL, *part = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(arena_of(s), &q, &qe));
  KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena_of(s), KILN_TIR_EXPR_FLOOR_DIV, qe, e, &part));
  kiln_tir_interval_t quotient = kiln_tir_analyzer_bound(s->analyzer, part);
  int below = qb.exact && qb.min >= 0 && quotient.exact && quotient.max == 0;
  if (n->base.kind == KILN_TIR_EXPR_FLOOR_DIV) {
    if (!below && w.count < KILN_TIR_LINEAR_MAX_TERMS) {
      w.terms[w.count++] = (kiln_tir_linear_term_t){part, 1};
    } else if (!below) {
      return KILN_OK;
    }
    return emit_linear(s, &w, &n->base, out);
  }
  if (!below) {
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena_of(s), KILN_TIR_EXPR_FLOOR_MOD, qe, e, &qe));
  }
  kiln_tir_linear_t sum = r;
  if (sum.count >= KILN_TIR_LINEAR_MAX_TERMS) {
    return KILN_OK;
  }
  sum.terms[sum.count++] = (kiln_tir_linear_term_t){qe, g};
  return emit_linear(s, &sum, &n->base, out);
}

static kiln_status_t rewrite_div_mod(simplifier_t *s, const kiln_tir_binary_t *n,
                                     const kiln_tir_expr_t **out) {
  *out = &n->base;
  int64_t c = 0;
  kiln_tir_linear_t a;
  if (!kiln_tir_expr_as_int(n->b, &c)) {
    return rewrite_symbolic_div_mod(s, n, out);
  }
  if (c <= 0 || !exact_linear(s, n->a, &a)) {
    return KILN_OK;
  }
  int div = n->base.kind == KILN_TIR_EXPR_FLOOR_DIV;
  kiln_tir_linear_t q = {.dtype = a.dtype}, r = {.dtype = a.dtype};
  q.constant = kiln_scalar_int_floor_divide(a.constant, c);
  r.constant = kiln_scalar_int_floor_mod(a.constant, c);
  for (int i = 0; i < a.count; ++i) {
    kiln_tir_linear_t *part = a.terms[i].coeff % c == 0 ? &q : &r;
    part->terms[part->count] = a.terms[i];
    part->terms[part->count].coeff = part == &q ? a.terms[i].coeff / c : a.terms[i].coeff;
    part->count++;
  }
  kiln_tir_interval_t rb = kiln_tir_linear_bound(s->analyzer, &r);
  if (!rb.exact || rb.min < 0 || rb.max >= c) {
    return split_div_mod(s, n, &q, &r, out); /* the remainder may leave [0, c) */
  }
  return emit_linear(s, div ? &q : &r, &n->base, out);
}

static kiln_status_t rewrite_min_max(simplifier_t *s, const kiln_tir_binary_t *n,
                                     const kiln_tir_expr_t **out) {
  *out = &n->base;
  kiln_tir_interval_t d;
  if (!difference_bound(s, n->a, n->b, &d)) {
    return KILN_OK;
  }
  int is_min = n->base.kind == KILN_TIR_EXPR_MIN;
  if (d.max <= 0) { /* a <= b */
    *out = is_min ? n->a : n->b;
  } else if (d.min >= 0) { /* a >= b */
    *out = is_min ? n->b : n->a;
  }
  return KILN_OK;
}

/* -1: unknown, else the truth of `kind` given the bounds of a - b. */
static int decide_compare(kiln_tir_expr_kind_t kind, kiln_tir_interval_t d) {
  switch (kind) {
  case KILN_TIR_EXPR_LT:
    return d.max < 0 ? 1 : d.min >= 0 ? 0 : -1;
  case KILN_TIR_EXPR_LE:
    return d.max <= 0 ? 1 : d.min > 0 ? 0 : -1;
  case KILN_TIR_EXPR_GT:
    return d.min > 0 ? 1 : d.max <= 0 ? 0 : -1;
  case KILN_TIR_EXPR_GE:
    return d.min >= 0 ? 1 : d.max < 0 ? 0 : -1;
  case KILN_TIR_EXPR_EQ:
    return (d.min == 0 && d.max == 0) ? 1 : (d.min > 0 || d.max < 0) ? 0 : -1;
  case KILN_TIR_EXPR_NE:
    return (d.min == 0 && d.max == 0) ? 0 : (d.min > 0 || d.max < 0) ? 1 : -1;
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
    break;
  }
  return -1;
}

static kiln_status_t rewrite_compare(simplifier_t *s, const kiln_tir_binary_t *n,
                                     const kiln_tir_expr_t **out) {
  *out = &n->base;
  kiln_tir_interval_t d;
  if (!difference_bound(s, n->a, n->b, &d)) {
    return KILN_OK;
  }
  int truth = decide_compare(n->base.kind, d);
  return truth < 0 ? KILN_OK : make_bool(s, truth, out);
}

/* And/Or with one constant operand. */
static kiln_status_t rewrite_logic(const kiln_tir_binary_t *n, const kiln_tir_expr_t **out) {
  *out = &n->base;
  int is_and = n->base.kind == KILN_TIR_EXPR_AND;
  const kiln_tir_expr_t *sides[] = {n->a, n->b};
  for (int i = 0; i < 2; ++i) {
    int64_t v = 0;
    if (n->base.dtype.lanes == 1 && kiln_tir_expr_as_int(sides[i], &v)) {
      /* true and x = x; false and x = false; true or x = true; false or x = x */
      *out = (v != 0) == is_and ? sides[1 - i] : sides[i];
      return KILN_OK;
    }
  }
  return KILN_OK;
}

/* In a trusted kernel, p * (h * e) (p and e not constants, h a constant
 * other than 1) as (p * e) * h, so that linear forms see the factor h: a
 * flattened index's (j // 32) * (n * 32) is a multiple of 32 and of n. */
static kiln_status_t scale_out_of_product(simplifier_t *s, const kiln_tir_binary_t *n,
                                          const kiln_tir_expr_t **out) {
  *out = &n->base;
  int64_t c = 0;
  if (kiln_tir_expr_as_int(n->a, &c) || kiln_tir_expr_as_int(n->b, &c)) {
    return KILN_OK;
  }
  for (int side = 0; side < 2; ++side) {
    const kiln_tir_expr_t *p = side ? n->b : n->a, *e = side ? n->a : n->b;
    kiln_tir_linear_t le;
    if (!kiln_tir_linear_from_expr(e, &le) || le.count != 1 || le.constant != 0 ||
        le.terms[0].coeff == 1 || !fits(n->base.dtype, le.terms[0].coeff)) {
      continue;
    }
    const kiln_tir_expr_t *product = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_tir_binary_create(arena_of(s), KILN_TIR_EXPR_MUL, p, le.terms[0].atom, &product));
    KILN_RETURN_IF_ERROR(make_int(s, n->base.dtype, le.terms[0].coeff, &e));
    return kiln_tir_binary_create(arena_of(s), KILN_TIR_EXPR_MUL, product, e, out);
  }
  return KILN_OK;
}

static kiln_status_t rewrite_binary(simplifier_t *s, const kiln_tir_binary_t *n,
                                    const kiln_tir_expr_t **out) {
  KILN_RETURN_IF_ERROR(fold_binary(s, n, out));
  if (*out != &n->base) {
    return KILN_OK;
  }
  kiln_tir_linear_t l;
  if (n->base.kind == KILN_TIR_EXPR_MUL && s->analyzer->trust_index) {
    KILN_RETURN_IF_ERROR(scale_out_of_product(s, n, out));
    if (*out != &n->base) {
      return KILN_OK;
    }
  }
  switch (n->base.kind) {
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
  case KILN_TIR_EXPR_MUL:
    if (kiln_tir_linear_from_expr(&n->base, &l)) {
      while (fold_div_mod_pair(s, &l) || fold_symbolic_div_mod_pair(s, &l)) {
      }
      return emit_linear(s, &l, &n->base, out);
    }
    return KILN_OK;
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
    return rewrite_div_mod(s, n, out);
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX:
    return rewrite_min_max(s, n, out);
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
    return rewrite_compare(s, n, out);
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
    return rewrite_logic(n, out);
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_INT_IMM:
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
  case KILN_TIR_EXPR_NOT:
  case KILN_TIR_EXPR_SELECT:
  case KILN_TIR_EXPR_CAST:
  case KILN_TIR_EXPR_BUFFER_LOAD:
  case KILN_TIR_EXPR_RAMP:
  case KILN_TIR_EXPR_BROADCAST:
  case KILN_TIR_EXPR_CALL:
  case KILN_TIR_EXPR_LET:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return KILN_OK;
}

static kiln_status_t rewrite(simplifier_t *s, const kiln_tir_expr_t *e,
                             const kiln_tir_expr_t **out) {
  *out = e;
  int64_t v = 0;
  if (kiln_tir_expr_kind_is_binary(e->kind)) {
    return rewrite_binary(s, (const void *)e, out);
  }
  if (e->kind == KILN_TIR_EXPR_NOT && kiln_tir_expr_as_int(((const kiln_tir_not_t *)e)->a, &v)) {
    return make_bool(s, !v, out);
  }
  if (e->kind == KILN_TIR_EXPR_CAST) {
    return fold_cast(s, (const void *)e, out);
  }
  if (e->kind == KILN_TIR_EXPR_CALL) {
    return fold_call(s, (const void *)e, out);
  }
  if (e->kind == KILN_TIR_EXPR_SELECT) {
    const kiln_tir_select_t *n = (const void *)e;
    if (kiln_tir_expr_as_int(n->condition, &v)) {
      *out = v ? n->true_value : n->false_value;
    } else if (kiln_tir_expr_equal(n->true_value, n->false_value)) {
      *out = n->true_value;
    }
  }
  return KILN_OK;
}

/* ---- rules ---- */

static kiln_status_t simplify_expr_rule(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                        const kiln_tir_expr_t **out) {
  const kiln_tir_expr_t *rebuilt = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_expr(self, expr, &rebuilt));
  return rewrite((simplifier_t *)self, rebuilt, out);
}

/* Binds `var` to the bound of `value` (when it has one) and reports it. */
static kiln_status_t bind_value(simplifier_t *s, const kiln_tir_var_t *var,
                                const kiln_tir_expr_t *value, int *out_bound) {
  *out_bound = 0;
  if (!kiln_tir_dtype_is_int(value->dtype) || value->dtype.lanes != 1) {
    return KILN_OK;
  }
  kiln_tir_interval_t r = kiln_tir_analyzer_bound(s->analyzer, value);
  if (!r.exact) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_tir_analyzer_bind(s->analyzer, var, r.min, r.max));
  *out_bound = 1;
  return KILN_OK;
}

static kiln_status_t simplify_let_rule(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                       const kiln_tir_expr_t **out) {
  simplifier_t *s = (simplifier_t *)self;
  const kiln_tir_let_t *n = (const void *)expr;
  const kiln_tir_expr_t *value = NULL, *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->value, &value));
  int bound = 0;
  KILN_RETURN_IF_ERROR(bind_value(s, n->var, value, &bound));
  kiln_status_t status = kiln_tir_mutator_mutate_expr(self, n->body, &body);
  if (bound) {
    kiln_tir_analyzer_unbind(s->analyzer);
  }
  KILN_RETURN_IF_ERROR(status);
  if (value == n->value && body == n->body) {
    *out = expr;
    return KILN_OK;
  }
  return kiln_tir_let_create(self->arena, n->var, value, body, out);
}

/* Binds a loop's variable: its range when min and extent are constant, a
 * run-time extent's facts when min is 0 (analysis.h); *out_bound says
 * whether it did. */
static kiln_status_t bind_loop(simplifier_t *s, const kiln_tir_var_t *var,
                               const kiln_tir_expr_t *min, const kiln_tir_expr_t *extent,
                               int *out_bound) {
  int64_t lo = 0, count = 0, hi = 0;
  *out_bound = 0;
  if (!kiln_tir_expr_as_int(min, &lo)) {
    return KILN_OK;
  }
  if (!kiln_tir_expr_as_int(extent, &count)) {
    *out_bound = lo == 0 && kiln_tir_dtype_equal(extent->dtype, var->base.dtype);
    return *out_bound ? kiln_tir_analyzer_bind_extent(s->analyzer, var, extent) : KILN_OK;
  }
  *out_bound = count > 0 && !__builtin_add_overflow(lo, count - 1, &hi);
  return *out_bound ? kiln_tir_analyzer_bind(s->analyzer, var, lo, hi) : KILN_OK;
}

static kiln_status_t simplify_for_rule(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                       const kiln_tir_stmt_t **out) {
  simplifier_t *s = (simplifier_t *)self;
  const kiln_tir_for_t *n = (const void *)stmt;
  const kiln_tir_expr_t *min = NULL, *extent = NULL;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->min, &min));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->extent, &extent));
  int bound = 0;
  KILN_RETURN_IF_ERROR(bind_loop(s, n->var, min, extent, &bound));
  kiln_status_t status = kiln_tir_mutator_mutate_stmt(self, n->body, &body);
  if (bound) {
    kiln_tir_analyzer_unbind(s->analyzer);
  }
  KILN_RETURN_IF_ERROR(status);
  if (min == n->min && extent == n->extent && body == n->body) {
    *out = stmt;
    return KILN_OK;
  }
  return kiln_tir_for_create(self->arena, n->var, min, extent, n->for_kind, body,
                             n->num_annotations, n->annotations, out);
}

static kiln_status_t simplify_let_stmt_rule(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                            const kiln_tir_stmt_t **out) {
  simplifier_t *s = (simplifier_t *)self;
  const kiln_tir_let_stmt_t *n = (const void *)stmt;
  const kiln_tir_expr_t *value = NULL;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->value, &value));
  int bound = 0;
  KILN_RETURN_IF_ERROR(bind_value(s, n->var, value, &bound));
  kiln_status_t status = kiln_tir_mutator_mutate_stmt(self, n->body, &body);
  if (bound) {
    kiln_tir_analyzer_unbind(s->analyzer);
  }
  KILN_RETURN_IF_ERROR(status);
  if (value == n->value && body == n->body) {
    *out = stmt;
    return KILN_OK;
  }
  return kiln_tir_let_stmt_create(self->arena, n->var, value, body, out);
}

static kiln_status_t simplify_if_rule(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                      const kiln_tir_stmt_t **out) {
  const kiln_tir_stmt_t *rebuilt = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, &rebuilt));
  const kiln_tir_if_then_else_t *n = (const void *)rebuilt;
  int64_t v = 0;
  *out = rebuilt;
  if (!kiln_tir_expr_as_int(n->condition, &v)) {
    return KILN_OK;
  }
  if (v) {
    *out = n->then_case;
  } else if (n->else_case) {
    *out = n->else_case;
  } else {
    return kiln_tir_seq_create(self->arena, 0, NULL, out); /* nothing to do */
  }
  return KILN_OK;
}

static kiln_status_t simplify_assert_rule(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                          const kiln_tir_stmt_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, out));
  const kiln_tir_assert_t *n = (const void *)*out;
  int64_t v = 0;
  if (kiln_tir_expr_as_int(n->condition, &v) && v) {
    *out = n->body; /* holds: drop it (a false one stays, to fail at run time) */
  }
  return KILN_OK;
}

static void simplifier_initialize(simplifier_t *s, kiln_arena_t *arena,
                                  kiln_tir_analyzer_t *analyzer) {
  kiln_tir_mutator_initialize(&s->mutator, arena);
  for (int i = 0; i < KILN_TIR_EXPR_KIND_COUNT_; ++i) {
    s->mutator.expr_rules[i] = simplify_expr_rule;
  }
  s->mutator.expr_rules[KILN_TIR_EXPR_LET] = simplify_let_rule;
  s->mutator.stmt_rules[KILN_TIR_STMT_FOR] = simplify_for_rule;
  s->mutator.stmt_rules[KILN_TIR_STMT_LET_STMT] = simplify_let_stmt_rule;
  s->mutator.stmt_rules[KILN_TIR_STMT_IF_THEN_ELSE] = simplify_if_rule;
  s->mutator.stmt_rules[KILN_TIR_STMT_ASSERT] = simplify_assert_rule;
  s->analyzer = analyzer;
}

/* ---- entry points ---- */

typedef struct run_t {
  const void *in;
  const void **out;
  int is_stmt;
} run_t;

static kiln_status_t run(kiln_arena_t *arena, kiln_tir_analyzer_t *analyzer, run_t job) {
  kiln_tir_analyzer_t local;
  if (!analyzer) {
    kiln_tir_analyzer_initialize(&local, kiln_arena_allocator(arena));
    analyzer = &local;
  }
  simplifier_t s;
  simplifier_initialize(&s, arena, analyzer);
  kiln_status_t status =
      job.is_stmt
          ? kiln_tir_mutator_mutate_stmt(&s.mutator, job.in, (const kiln_tir_stmt_t **)job.out)
          : kiln_tir_mutator_mutate_expr(&s.mutator, job.in, (const kiln_tir_expr_t **)job.out);
  if (analyzer == &local) {
    kiln_tir_analyzer_deinitialize(&local);
  }
  return status;
}

kiln_status_t kiln_tir_simplify_expr(kiln_arena_t *arena, kiln_tir_analyzer_t *analyzer,
                                     const kiln_tir_expr_t *expr,
                                     const kiln_tir_expr_t **out_expr) {
  run_t job = {expr, (const void **)out_expr, 0};
  return run(arena, analyzer, job);
}

kiln_status_t kiln_tir_simplify_stmt(kiln_arena_t *arena, kiln_tir_analyzer_t *analyzer,
                                     const kiln_tir_stmt_t *stmt,
                                     const kiln_tir_stmt_t **out_stmt) {
  run_t job = {stmt, (const void **)out_stmt, 1};
  return run(arena, analyzer, job);
}

/* Whether a parameter of `func` has a dim that is not a constant. */
static int has_run_time_extents(const kiln_tir_prim_func_t *func) {
  for (int p = 0; p < func->num_params; ++p) {
    for (int d = 0; d < func->params[p]->ndim; ++d) {
      int64_t v = 0;
      if (!kiln_tir_expr_as_int(func->params[p]->shape[d], &v)) {
        return 1;
      }
    }
  }
  return 0;
}

kiln_status_t kiln_tir_simplify_prim_func(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                          const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  const kiln_tir_stmt_t *body = NULL;
  kiln_tir_analyzer_t analyzer;
  kiln_tir_analyzer_initialize(&analyzer, kiln_arena_allocator(arena));
  analyzer.trust_index = has_run_time_extents(func);
  kiln_status_t status = kiln_tir_simplify_stmt(arena, &analyzer, func->body, &body);
  kiln_tir_analyzer_deinitialize(&analyzer);
  KILN_RETURN_IF_ERROR(status);
  if (body == func->body) {
    *out_func = func;
    return KILN_OK;
  }
  return kiln_tir_prim_func_create(arena, func->name, func->num_params, func->params, body,
                                   func->num_attrs, func->attrs, out_func);
}
