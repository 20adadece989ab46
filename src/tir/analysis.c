/*
 * Bounds and linear forms of integer index expressions; see analysis.h.
 *
 * Interval arithmetic runs on int64 with the compiler's overflow builtins;
 * any overflow makes the interval inexact, which no rule trusts. floordiv
 * and floormod reuse the interpreter's exact helpers, so the analysis and
 * the execution agree on rounding.
 */
#include "tir/analysis.h"

#include "base/scalar_ops.h"
#include "tir/functor.h"
#include "tir/interp_value.h"

void kiln_tir_analyzer_initialize(kiln_tir_analyzer_t *analyzer, kiln_allocator_t allocator) {
  kiln_array_initialize(&analyzer->ranges, allocator, sizeof(kiln_tir_var_range_t));
  analyzer->trust_index = 0;
}

void kiln_tir_analyzer_deinitialize(kiln_tir_analyzer_t *analyzer) {
  kiln_array_deinitialize(&analyzer->ranges);
}

kiln_status_t kiln_tir_analyzer_bind(kiln_tir_analyzer_t *analyzer, const kiln_tir_var_t *var,
                                     int64_t min, int64_t max) {
  if (!var || min > max) {
    return KILN_STATUS(INVALID_ARGUMENT, "analyzer: empty range [%lld, %lld] for %s",
                       (long long)min, (long long)max, var ? var->name : "a null variable");
  }
  kiln_tir_var_range_t range = {var, min, max, NULL};
  return kiln_array_push(&analyzer->ranges, &range);
}

kiln_status_t kiln_tir_analyzer_bind_extent(kiln_tir_analyzer_t *analyzer,
                                            const kiln_tir_var_t *var,
                                            const kiln_tir_expr_t *extent) {
  int64_t lo = 0, hi = 0;
  if (!var || !extent || !kiln_tir_dtype_is_int(var->base.dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "analyzer: no integer variable and extent to bind");
  }
  kiln_tir_dtype_int_range(var->base.dtype.base, &lo, &hi);
  kiln_tir_var_range_t range = {var, 0, hi - 1, extent};
  return kiln_array_push(&analyzer->ranges, &range);
}

void kiln_tir_analyzer_unbind(kiln_tir_analyzer_t *analyzer) {
  (void)kiln_array_pop(&analyzer->ranges, NULL);
}

/* ---- intervals ---- */

static kiln_tir_interval_t interval(int64_t min, int64_t max) {
  kiln_tir_interval_t r = {min, max, 1};
  return r;
}

static kiln_tir_interval_t inexact(void) {
  kiln_tir_interval_t r = {0, 0, 0};
  return r;
}

static kiln_tir_interval_t dtype_range(kiln_tir_dtype_t dtype) {
  if (dtype.lanes != 1 || (!kiln_tir_dtype_is_int(dtype) && !kiln_tir_dtype_is_bool(dtype))) {
    return inexact();
  }
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(dtype.base, &lo, &hi);
  return interval(lo, hi);
}

int kiln_tir_interval_fits(kiln_tir_interval_t r, kiln_tir_dtype_t dtype) {
  kiln_tir_interval_t full = dtype_range(dtype);
  return r.exact && full.exact && r.min >= full.min && r.max <= full.max;
}

static kiln_tir_interval_t interval_add(kiln_tir_interval_t a, kiln_tir_interval_t b) {
  kiln_tir_interval_t r = {0, 0, a.exact && b.exact};
  if (!r.exact || __builtin_add_overflow(a.min, b.min, &r.min) ||
      __builtin_add_overflow(a.max, b.max, &r.max)) {
    return inexact();
  }
  return r;
}

static kiln_tir_interval_t interval_scale(kiln_tir_interval_t a, int64_t c) {
  int64_t x = 0, y = 0;
  if (!a.exact || __builtin_mul_overflow(a.min, c, &x) || __builtin_mul_overflow(a.max, c, &y)) {
    return inexact();
  }
  return x <= y ? interval(x, y) : interval(y, x);
}

static kiln_tir_interval_t interval_mul(kiln_tir_interval_t a, kiln_tir_interval_t b) {
  if (!a.exact || !b.exact) {
    return inexact();
  }
  kiln_tir_interval_t lo = interval_scale(a, b.min), hi = interval_scale(a, b.max);
  if (!lo.exact || !hi.exact) {
    return inexact();
  }
  return interval(lo.min < hi.min ? lo.min : hi.min, lo.max > hi.max ? lo.max : hi.max);
}

static kiln_tir_interval_t interval_union(kiln_tir_interval_t a, kiln_tir_interval_t b) {
  if (!a.exact || !b.exact) {
    return inexact();
  }
  return interval(a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max);
}

static const kiln_tir_var_range_t *find_range(const kiln_tir_analyzer_t *analyzer,
                                              const kiln_tir_expr_t *expr) {
  for (size_t i = kiln_array_count(&analyzer->ranges); i-- > 0;) {
    const kiln_tir_var_range_t *r = kiln_array_at(&analyzer->ranges, i);
    if (&r->var->base == expr) {
      return r;
    }
  }
  return NULL;
}

/* v // d and v % d for a loop variable v over [0, c * d) (see
 * kiln_tir_analyzer_bind_extent); the dtype's range otherwise. */
static kiln_tir_interval_t bound_fused_div_mod(const kiln_tir_analyzer_t *analyzer,
                                               const kiln_tir_binary_t *n) {
  const kiln_tir_var_range_t *r = find_range(analyzer, n->a);
  kiln_tir_linear_t extent;
  if (!r || !r->extent || !kiln_tir_linear_from_expr(r->extent, &extent) || extent.count != 1 ||
      extent.constant != 0 || extent.terms[0].coeff <= 0 ||
      !kiln_tir_expr_equal(extent.terms[0].atom, n->b)) {
    return dtype_range(n->base.dtype);
  }
  if (n->base.kind == KILN_TIR_EXPR_FLOOR_DIV) {
    return interval(0, extent.terms[0].coeff - 1);
  }
  return interval(0, r->max);
}

static kiln_tir_interval_t bound_div_mod(const kiln_tir_analyzer_t *analyzer,
                                         const kiln_tir_binary_t *n) {
  int64_t c = 0;
  if (!kiln_tir_expr_as_int(n->b, &c)) {
    return bound_fused_div_mod(analyzer, n);
  }
  kiln_tir_interval_t a = kiln_tir_analyzer_bound(analyzer, n->a);
  if (c <= 0 || !a.exact) {
    return dtype_range(n->base.dtype);
  }
  if (n->base.kind == KILN_TIR_EXPR_FLOOR_DIV) {
    return interval(kiln_scalar_int_floor_divide(a.min, c), kiln_scalar_int_floor_divide(a.max, c));
  }
  if (a.min >= 0 && a.max < c) {
    return a;
  }
  return interval(0, c - 1);
}

static kiln_tir_interval_t bound_node(const kiln_tir_analyzer_t *analyzer,
                                      const kiln_tir_expr_t *expr) {
  const kiln_tir_binary_t *n = (const void *)expr;
  switch (expr->kind) {
  case KILN_TIR_EXPR_INT_IMM: {
    int64_t v = ((const kiln_tir_int_imm_t *)expr)->value;
    return interval(v, v);
  }
  case KILN_TIR_EXPR_VAR: {
    const kiln_tir_var_range_t *r = find_range(analyzer, expr);
    return r ? interval(r->min, r->max) : dtype_range(expr->dtype);
  }
  case KILN_TIR_EXPR_ADD:
    return interval_add(kiln_tir_analyzer_bound(analyzer, n->a),
                        kiln_tir_analyzer_bound(analyzer, n->b));
  case KILN_TIR_EXPR_SUB: {
    kiln_tir_interval_t b = kiln_tir_analyzer_bound(analyzer, n->b);
    if (!b.exact || b.min == INT64_MIN) {
      return inexact();
    }
    return interval_add(kiln_tir_analyzer_bound(analyzer, n->a), interval(-b.max, -b.min));
  }
  case KILN_TIR_EXPR_MUL:
    return interval_mul(kiln_tir_analyzer_bound(analyzer, n->a),
                        kiln_tir_analyzer_bound(analyzer, n->b));
  case KILN_TIR_EXPR_FLOOR_DIV:
  case KILN_TIR_EXPR_FLOOR_MOD:
    return bound_div_mod(analyzer, n);
  case KILN_TIR_EXPR_MIN:
  case KILN_TIR_EXPR_MAX: {
    kiln_tir_interval_t a = kiln_tir_analyzer_bound(analyzer, n->a);
    kiln_tir_interval_t b = kiln_tir_analyzer_bound(analyzer, n->b);
    if (!a.exact || !b.exact) {
      return inexact();
    }
    if (expr->kind == KILN_TIR_EXPR_MIN) {
      return interval(a.min < b.min ? a.min : b.min, a.max < b.max ? a.max : b.max);
    }
    return interval(a.min > b.min ? a.min : b.min, a.max > b.max ? a.max : b.max);
  }
  case KILN_TIR_EXPR_SELECT: {
    const kiln_tir_select_t *s = (const void *)expr;
    return interval_union(kiln_tir_analyzer_bound(analyzer, s->true_value),
                          kiln_tir_analyzer_bound(analyzer, s->false_value));
  }
  case KILN_TIR_EXPR_CAST: {
    kiln_tir_interval_t v =
        kiln_tir_analyzer_bound(analyzer, ((const kiln_tir_cast_t *)expr)->value);
    return kiln_tir_interval_fits(v, expr->dtype) ? v : dtype_range(expr->dtype);
  }
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_DIV:
  case KILN_TIR_EXPR_EQ:
  case KILN_TIR_EXPR_NE:
  case KILN_TIR_EXPR_LT:
  case KILN_TIR_EXPR_LE:
  case KILN_TIR_EXPR_GT:
  case KILN_TIR_EXPR_GE:
  case KILN_TIR_EXPR_AND:
  case KILN_TIR_EXPR_OR:
  case KILN_TIR_EXPR_NOT:
  case KILN_TIR_EXPR_BUFFER_LOAD:
  case KILN_TIR_EXPR_RAMP:
  case KILN_TIR_EXPR_BROADCAST:
  case KILN_TIR_EXPR_CALL:
  case KILN_TIR_EXPR_LET:
  case KILN_TIR_EXPR_KIND_COUNT_:
    break;
  }
  return dtype_range(expr->dtype);
}

/* Whether some loop in scope runs over [0, c * expr) (c > 0): expr is
 * positive wherever that loop's body runs. */
static int positive_by_extent(const kiln_tir_analyzer_t *analyzer, const kiln_tir_expr_t *expr) {
  for (size_t i = 0; i < kiln_array_count(&analyzer->ranges); ++i) {
    const kiln_tir_var_range_t *r = kiln_array_at(&analyzer->ranges, i);
    kiln_tir_linear_t extent;
    if (r->extent && kiln_tir_linear_from_expr(r->extent, &extent) && extent.count == 1 &&
        extent.constant == 0 && extent.terms[0].coeff > 0 &&
        kiln_tir_expr_equal(extent.terms[0].atom, expr)) {
      return 1;
    }
  }
  return 0;
}

kiln_tir_interval_t kiln_tir_analyzer_bound(const kiln_tir_analyzer_t *analyzer,
                                            const kiln_tir_expr_t *expr) {
  if (!expr || expr->dtype.lanes != 1) {
    return inexact();
  }
  kiln_tir_interval_t r = bound_node(analyzer, expr);
  if (r.exact && r.min < 1 && r.max >= 1 && expr->kind != KILN_TIR_EXPR_INT_IMM &&
      positive_by_extent(analyzer, expr)) {
    r.min = 1;
  }
  /* A value outside its dtype may have wrapped: all the dtype's values are possible. */
  return kiln_tir_interval_fits(r, expr->dtype) ? r : dtype_range(expr->dtype);
}

/* ---- linear forms ---- */

static int add_term(kiln_tir_linear_t *l, const kiln_tir_expr_t *atom, int64_t coeff) {
  for (int i = 0; i < l->count; ++i) {
    if (kiln_tir_expr_equal(l->terms[i].atom, atom)) {
      if (__builtin_add_overflow(l->terms[i].coeff, coeff, &l->terms[i].coeff)) {
        return 0;
      }
      if (l->terms[i].coeff == 0) {
        for (int j = i + 1; j < l->count; ++j) {
          l->terms[j - 1] = l->terms[j];
        }
        l->count--;
      }
      return 1;
    }
  }
  if (coeff == 0) {
    return 1;
  }
  if (l->count == KILN_TIR_LINEAR_MAX_TERMS) {
    return 0;
  }
  l->terms[l->count].atom = atom;
  l->terms[l->count].coeff = coeff;
  l->count++;
  return 1;
}

int kiln_tir_linear_add_scaled(kiln_tir_linear_t *a, const kiln_tir_linear_t *b, int64_t scale) {
  int64_t c = 0;
  if (__builtin_mul_overflow(b->constant, scale, &c) ||
      __builtin_add_overflow(a->constant, c, &a->constant)) {
    return 0;
  }
  for (int i = 0; i < b->count; ++i) {
    if (__builtin_mul_overflow(b->terms[i].coeff, scale, &c) || !add_term(a, b->terms[i].atom, c)) {
      return 0;
    }
  }
  return 1;
}

static void linear_empty(kiln_tir_dtype_t dtype, kiln_tir_linear_t *out) {
  out->dtype = dtype;
  out->constant = 0;
  out->count = 0;
}

int kiln_tir_linear_from_expr(const kiln_tir_expr_t *expr, kiln_tir_linear_t *out) {
  linear_empty(expr->dtype, out);
  if (!kiln_tir_dtype_is_int(expr->dtype) || expr->dtype.lanes != 1) {
    return 0;
  }
  const kiln_tir_binary_t *n = (const void *)expr;
  kiln_tir_linear_t a, b;
  switch (expr->kind) {
  case KILN_TIR_EXPR_INT_IMM:
    out->constant = ((const kiln_tir_int_imm_t *)expr)->value;
    return 1;
  case KILN_TIR_EXPR_ADD:
  case KILN_TIR_EXPR_SUB:
    return kiln_tir_linear_from_expr(n->a, &a) && kiln_tir_linear_from_expr(n->b, &b) &&
           kiln_tir_linear_add_scaled(out, &a, 1) &&
           kiln_tir_linear_add_scaled(out, &b, expr->kind == KILN_TIR_EXPR_ADD ? 1 : -1);
  case KILN_TIR_EXPR_MUL:
    if (!kiln_tir_linear_from_expr(n->a, &a) || !kiln_tir_linear_from_expr(n->b, &b)) {
      return 0;
    }
    if (b.count == 0) {
      return kiln_tir_linear_add_scaled(out, &a, b.constant);
    }
    if (a.count == 0) {
      return kiln_tir_linear_add_scaled(out, &b, a.constant);
    }
    break; /* a product of two non-constants is an atom */
  case KILN_TIR_EXPR_FLOAT_IMM:
  case KILN_TIR_EXPR_VAR:
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
  return add_term(out, expr, 1);
}

kiln_tir_interval_t kiln_tir_linear_bound(const kiln_tir_analyzer_t *analyzer,
                                          const kiln_tir_linear_t *linear) {
  kiln_tir_interval_t r = interval(linear->constant, linear->constant);
  for (int i = 0; i < linear->count && r.exact; ++i) {
    kiln_tir_interval_t atom = kiln_tir_analyzer_bound(analyzer, linear->terms[i].atom);
    r = interval_add(r, interval_scale(atom, linear->terms[i].coeff));
  }
  return r;
}

static kiln_status_t constant(kiln_arena_t *arena, kiln_tir_dtype_t dtype, int64_t value,
                              const kiln_tir_expr_t **out) {
  return kiln_tir_int_imm_create(arena, dtype, value, out);
}

/* sum + coeff * atom, where sum may be NULL (the first term). */
static kiln_status_t append_term(kiln_arena_t *arena, const kiln_tir_expr_t *sum,
                                 const kiln_tir_expr_t *atom, int64_t coeff,
                                 const kiln_tir_expr_t **out) {
  kiln_tir_dtype_t dtype = atom->dtype;
  int subtract = sum && coeff < 0 && coeff != INT64_MIN;
  int64_t magnitude = subtract ? -coeff : coeff;
  const kiln_tir_expr_t *term = atom;
  if (magnitude != 1) {
    const kiln_tir_expr_t *c = NULL;
    KILN_RETURN_IF_ERROR(constant(arena, dtype, magnitude, &c));
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(arena, KILN_TIR_EXPR_MUL, atom, c, &term));
  }
  if (!sum) {
    *out = term;
    return KILN_OK;
  }
  return kiln_tir_binary_create(arena, subtract ? KILN_TIR_EXPR_SUB : KILN_TIR_EXPR_ADD, sum, term,
                                out);
}

kiln_status_t kiln_tir_linear_to_expr(kiln_arena_t *arena, const kiln_tir_linear_t *linear,
                                      const kiln_tir_expr_t **out_expr) {
  *out_expr = NULL;
  const kiln_tir_expr_t *sum = NULL;
  for (int i = 0; i < linear->count; ++i) {
    KILN_RETURN_IF_ERROR(
        append_term(arena, sum, linear->terms[i].atom, linear->terms[i].coeff, &sum));
  }
  int64_t c = linear->constant;
  if (!sum) {
    return constant(arena, linear->dtype, c, out_expr);
  }
  if (c != 0) {
    const kiln_tir_expr_t *k = NULL;
    int subtract = c < 0 && c != INT64_MIN;
    KILN_RETURN_IF_ERROR(constant(arena, linear->dtype, subtract ? -c : c, &k));
    KILN_RETURN_IF_ERROR(kiln_tir_binary_create(
        arena, subtract ? KILN_TIR_EXPR_SUB : KILN_TIR_EXPR_ADD, sum, k, &sum));
  }
  *out_expr = sum;
  return KILN_OK;
}

int kiln_tir_linear_from_comparison(const kiln_tir_expr_t *cond, kiln_tir_linear_t *out) {
  kiln_tir_expr_kind_t kind = cond->kind;
  if (kind != KILN_TIR_EXPR_LT && kind != KILN_TIR_EXPR_LE && kind != KILN_TIR_EXPR_GT &&
      kind != KILN_TIR_EXPR_GE) {
    return 0;
  }
  const kiln_tir_binary_t *n = (const void *)cond;
  int swap = kind == KILN_TIR_EXPR_GT || kind == KILN_TIR_EXPR_GE;
  int64_t adjust = kind == KILN_TIR_EXPR_LE || kind == KILN_TIR_EXPR_GE ? 1 : 0;
  kiln_tir_linear_t b;
  if (!kiln_tir_dtype_is_int(n->a->dtype) || n->a->dtype.lanes != 1 ||
      !kiln_tir_linear_from_expr(swap ? n->b : n->a, out) ||
      !kiln_tir_linear_from_expr(swap ? n->a : n->b, &b)) {
    return 0;
  }
  kiln_tir_linear_t one = {.dtype = out->dtype, .constant = 1};
  return kiln_tir_linear_add_scaled(out, &b, -1) && kiln_tir_linear_add_scaled(out, &one, -adjust);
}

typedef struct index_checker_t {
  kiln_tir_visitor_t visitor; /* first */
  int other;
} index_checker_t;

static kiln_status_t note_other(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  (void)expr;
  ((index_checker_t *)self)->other = 1;
  return KILN_OK;
}

/* Whether `atom` is made of variables, integer constants, + - * // % only. */
static int index_atom(const kiln_tir_expr_t *atom) {
  index_checker_t c = {.other = 0};
  kiln_tir_visitor_initialize(&c.visitor);
  for (int k = 0; k < KILN_TIR_EXPR_KIND_COUNT_; ++k) {
    if (k != KILN_TIR_EXPR_VAR && k != KILN_TIR_EXPR_INT_IMM && k != KILN_TIR_EXPR_ADD &&
        k != KILN_TIR_EXPR_SUB && k != KILN_TIR_EXPR_MUL && k != KILN_TIR_EXPR_FLOOR_DIV &&
        k != KILN_TIR_EXPR_FLOOR_MOD) {
      c.visitor.expr_rules[k] = note_other;
    }
  }
  kiln_status_t status = kiln_tir_visitor_visit_expr(&c.visitor, atom);
  int failed = status != KILN_OK;
  kiln_status_free(status);
  return !failed && !c.other;
}

int kiln_tir_linear_trusted(const kiln_tir_analyzer_t *analyzer, const kiln_tir_linear_t *linear) {
  kiln_tir_interval_t r = kiln_tir_linear_bound(analyzer, linear);
  if (kiln_tir_interval_fits(r, linear->dtype)) {
    return 1;
  }
  if (!analyzer->trust_index || !r.exact) {
    return 0;
  }
  for (int i = 0; i < linear->count; ++i) {
    if (!index_atom(linear->terms[i].atom)) {
      return 0;
    }
  }
  return 1;
}
