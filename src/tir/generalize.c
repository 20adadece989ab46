/*
 * Generalizing probe-size kernels over run-time extents (generalize.h).
 *
 * One mutator does both halves: in record mode it walks a run and lists
 * its integer constants, float constants and buffers (parameters first,
 * then each buffer at its first use) in visiting order, changing nothing;
 * in apply mode it walks the first run again and replaces the constants
 * the fits name, and every buffer whose shape was generalized. Since the
 * same code walks every run, position i of one run's list is position i
 * of the others' once the structures are known equal.
 */
#include "tir/generalize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "tir/functor.h"
#include "tir/printer.h"

#define RUNS     KILN_TIR_GENERALIZE_RUNS
#define MAX_FITS 64
#define MAX_DIV  4096
/* The most variables a monomial multiplies (a rank-4 output whose dims are
 * all run-time ones flattens to the product of four). */
#define MAX_DEGREE 4

typedef enum fit_kind_e { FIT_KEEP, FIT_AFFINE, FIT_CEIL, FIT_FLOOR, FIT_NONE } fit_kind_t;

/* value = a * m + b (m: the product of variables vars[0..degree)), then
 * for the divided kinds ceil or floor divided by d and multiplied by f;
 * floats: cast, or 1 / it. */
typedef struct fit_t {
  fit_kind_t kind;
  int degree;
  int vars[MAX_DEGREE];
  int64_t a, b, d, f;
  bool reciprocal;
} fit_t;

typedef struct walk_t {
  kiln_tir_mutator_t m; /* first: rules get &walk->m */
  bool apply;
  kiln_array_t ints;    /* int64_t */
  kiln_array_t floats;  /* double */
  kiln_array_t buffers; /* const kiln_tir_buffer_t * */
  /* apply mode */
  size_t next_int, next_float;
  const fit_t *int_fits, *float_fits;
  const kiln_tir_buffer_t **mapped; /* parallel to buffers */
  const kiln_tir_var_t *const *vars;
} walk_t;

typedef struct fits_t {
  const kiln_tir_generalize_vars_t *vars;
  int count;
  fit_t candidates[MAX_FITS]; /* affine fits seen, for the divided forms */
} fits_t;

/* ---- fitting ---- */

static int64_t monomial(const kiln_tir_generalize_vars_t *vars, int run, const fit_t *f) {
  int64_t p = 1;
  for (int i = 0; i < f->degree; ++i) {
    p *= vars->probes[run][f->vars[i]];
  }
  return p;
}

static int64_t fit_value(const kiln_tir_generalize_vars_t *vars, const fit_t *f, int run) {
  int64_t e = f->a * monomial(vars, run, f) + f->b;
  if (f->kind == FIT_CEIL) {
    return f->f * ((e + f->d - 1) / f->d);
  }
  return f->kind == FIT_FLOOR ? f->f * (e / f->d) : e;
}

static bool fit_holds(const kiln_tir_generalize_vars_t *vars, const fit_t *f, const int64_t *v) {
  for (int r = 0; r < RUNS; ++r) {
    if (fit_value(vars, f, r) != v[r]) {
      return false;
    }
  }
  return true;
}

/* a and b of `m`'s monomial from runs 0 and 1, checked on the others. */
static bool fit_monomial(const kiln_tir_generalize_vars_t *vars, const fit_t *m, const int64_t *v,
                         fit_t *out) {
  int64_t dm = monomial(vars, 1, m) - monomial(vars, 0, m), dv = v[1] - v[0];
  if (dm == 0 || dv % dm != 0 || dv == 0) {
    return false;
  }
  *out = *m;
  out->kind = FIT_AFFINE;
  out->a = dv / dm;
  out->b = v[0] - out->a * monomial(vars, 0, m);
  return fit_holds(vars, out, v);
}

/* The monomials of m->degree variables from position `at` on, each index
 * at least the one before (so each product is tried once). */
static bool fit_monomials(const kiln_tir_generalize_vars_t *vars, fit_t *m, int at,
                          const int64_t *v, fit_t *out) {
  if (at == m->degree) {
    return fit_monomial(vars, m, v, out);
  }
  for (int k = at > 0 ? m->vars[at - 1] : 0; k < vars->count; ++k) {
    m->vars[at] = k;
    if (fit_monomials(vars, m, at + 1, v, out)) {
      return true;
    }
  }
  return false;
}

/* a * m + b for m a variable, or a product of two to MAX_DEGREE. */
static bool fit_affine(const kiln_tir_generalize_vars_t *vars, const int64_t *v, fit_t *out) {
  for (int degree = 1; degree <= MAX_DEGREE; ++degree) {
    fit_t m = {.degree = degree};
    if (fit_monomials(vars, &m, 0, v, out)) {
      return true;
    }
  }
  return false;
}

static void remember(fits_t *fits, const fit_t *f) {
  for (int i = 0; i < fits->count; ++i) {
    const fit_t *c = &fits->candidates[i];
    if (c->degree == f->degree && memcmp(c->vars, f->vars, sizeof(c->vars)) == 0 && c->a == f->a &&
        c->b == f->b) {
      return;
    }
  }
  if (fits->count < MAX_FITS) {
    fits->candidates[fits->count++] = *f;
  }
}

/* First pass: equal values stay, affine ones are fitted (and remembered). */
static bool all_equal(const int64_t *v) {
  for (int r = 1; r < RUNS; ++r) {
    if (v[r] != v[0]) {
      return false;
    }
  }
  return true;
}

static void fit_first(fits_t *fits, const int64_t *v, fit_t *out) {
  if (all_equal(v)) {
    *out = (fit_t){.kind = FIT_KEEP};
  } else if (fit_affine(fits->vars, v, out)) {
    remember(fits, out);
  } else {
    *out = (fit_t){.kind = FIT_NONE};
  }
}

/* Second pass: f * ceil(E / d) or f * floor(E / d) of a remembered E (a
 * split's outer extent, times the extents fused with it), the smallest d
 * first over every E: a large d fits four runs by coincidence more easily
 * (a softmax row of n split by 16 lanes fitted as (12 n + 190) // 191,
 * the first E remembered, before ceil(n / 16) was tried). */
static bool fit_divided(const fits_t *fits, const int64_t *v, fit_t *out) {
  for (int64_t d = 2; d <= MAX_DIV; ++d) {
    for (int i = 0; i < fits->count; ++i) {
      for (int kind = FIT_CEIL; kind <= FIT_FLOOR; ++kind) {
        *out = fits->candidates[i];
        out->kind = (fit_kind_t)kind;
        out->d = d;
        out->f = 1;
        int64_t q = fit_value(fits->vars, out, 0);
        if (q <= 0 || v[0] % q != 0) {
          continue;
        }
        out->f = v[0] / q;
        if (out->f != 0 && fit_holds(fits->vars, out, v)) {
          return true;
        }
      }
    }
  }
  return false;
}

static kiln_status_t unfitted(const char *what, const double *v) {
  _Static_assert(RUNS == 4, "the message prints four runs");
  return KILN_STATUS(
      UNIMPLEMENTED,
      "%s %.9g, %.9g, %.9g, %.9g in the probe runs is not an expression of the "
      "symbolic dims kiln can fit (a * n + b for n a dim or a product of up to four, or such an "
      "expression divided by a constant)",
      what, v[0], v[1], v[2], v[3]);
}

static kiln_status_t fit_second(const fits_t *fits, const int64_t *v, fit_t *f) {
  if (f->kind == FIT_NONE && !fit_divided(fits, v, f)) {
    double d[RUNS];
    for (int r = 0; r < RUNS; ++r) {
      d[r] = (double)v[r];
    }
    return unfitted("the integer constant", d);
  }
  return KILN_OK;
}

static bool is_integral(double x) {
  return fabs(x) < 2147483647.0 && x == floor(x);
}

static bool fit_float(fits_t *fits, const double *v, fit_t *out) {
  int64_t iv[RUNS];
  bool integral = true, reciprocal = true;
  for (int r = 0; r < RUNS; ++r) {
    integral = integral && is_integral(v[r]);
    double inverse = v[r] != 0 ? 1.0 / v[r] : 0;
    reciprocal = reciprocal && is_integral(nearbyint(inverse)) && nearbyint(inverse) != 0 &&
                 fabs(1.0 / nearbyint(inverse) - v[r]) <= 1e-6 * fabs(v[r]);
  }
  if (!integral && !reciprocal) {
    return false;
  }
  for (int r = 0; r < RUNS; ++r) {
    iv[r] = integral ? (int64_t)v[r] : (int64_t)nearbyint(1.0 / v[r]);
  }
  if (!fit_affine(fits->vars, iv, out)) {
    return false;
  }
  out->reciprocal = !integral;
  return true;
}

/* ---- expressions of a fit ---- */

static kiln_status_t int_imm(kiln_arena_t *arena, kiln_tir_dtype_t dtype, int64_t value,
                             const kiln_tir_expr_t **out) {
  return kiln_tir_int_imm_create(arena, dtype, value, out);
}

static kiln_status_t binary(kiln_arena_t *arena, kiln_tir_expr_kind_t kind,
                            const kiln_tir_expr_t *a, const kiln_tir_expr_t *b,
                            const kiln_tir_expr_t **out) {
  return kiln_tir_binary_create(arena, kind, a, b, out);
}

/* Variable k in `dtype` (a cast of the int32 variable when it differs). */
static kiln_status_t var_as(kiln_arena_t *arena, const kiln_tir_var_t *var, kiln_tir_dtype_t dtype,
                            const kiln_tir_expr_t **out) {
  if (kiln_tir_dtype_equal(dtype, var->base.dtype)) {
    *out = &var->base;
    return KILN_OK;
  }
  return kiln_tir_cast_create(arena, dtype, &var->base, out);
}

static kiln_status_t build_affine(kiln_arena_t *arena, const kiln_tir_var_t *const *vars,
                                  const fit_t *f, kiln_tir_dtype_t dtype,
                                  const kiln_tir_expr_t **out) {
  const kiln_tir_expr_t *e = NULL, *other = NULL, *c = NULL;
  KILN_RETURN_IF_ERROR(var_as(arena, vars[f->vars[0]], dtype, &e));
  for (int i = 1; i < f->degree; ++i) {
    KILN_RETURN_IF_ERROR(var_as(arena, vars[f->vars[i]], dtype, &other));
    KILN_RETURN_IF_ERROR(binary(arena, KILN_TIR_EXPR_MUL, e, other, &e));
  }
  if (f->a != 1) {
    KILN_RETURN_IF_ERROR(int_imm(arena, dtype, f->a, &c));
    KILN_RETURN_IF_ERROR(binary(arena, KILN_TIR_EXPR_MUL, e, c, &e));
  }
  if (f->b != 0) {
    KILN_RETURN_IF_ERROR(int_imm(arena, dtype, f->b < 0 ? -f->b : f->b, &c));
    KILN_RETURN_IF_ERROR(binary(arena, f->b < 0 ? KILN_TIR_EXPR_SUB : KILN_TIR_EXPR_ADD, e, c, &e));
  }
  *out = e;
  return KILN_OK;
}

static kiln_status_t build_int(kiln_arena_t *arena, const kiln_tir_var_t *const *vars,
                               const fit_t *f, kiln_tir_dtype_t dtype,
                               const kiln_tir_expr_t **out) {
  KILN_RETURN_IF_ERROR(build_affine(arena, vars, f, dtype, out));
  if (f->kind == FIT_AFFINE) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *c = NULL;
  if (f->kind == FIT_CEIL) {
    KILN_RETURN_IF_ERROR(int_imm(arena, dtype, f->d - 1, &c));
    KILN_RETURN_IF_ERROR(binary(arena, KILN_TIR_EXPR_ADD, *out, c, out));
  }
  KILN_RETURN_IF_ERROR(int_imm(arena, dtype, f->d, &c));
  KILN_RETURN_IF_ERROR(binary(arena, KILN_TIR_EXPR_FLOOR_DIV, *out, c, out));
  if (f->f == 1) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(int_imm(arena, dtype, f->f, &c));
  return binary(arena, KILN_TIR_EXPR_MUL, *out, c, out);
}

static kiln_status_t build_float(kiln_arena_t *arena, const kiln_tir_var_t *const *vars,
                                 const fit_t *f, kiln_tir_dtype_t dtype,
                                 const kiln_tir_expr_t **out) {
  KILN_RETURN_IF_ERROR(build_affine(arena, vars, f, kiln_tir_scalar(KILN_DTYPE_INT32), out));
  KILN_RETURN_IF_ERROR(kiln_tir_cast_create(arena, dtype, *out, out));
  if (!f->reciprocal) {
    return KILN_OK;
  }
  const kiln_tir_expr_t *one = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_float_imm_create(arena, dtype, 1.0, &one));
  return binary(arena, KILN_TIR_EXPR_DIV, one, *out, out);
}

/* ---- the walk ---- */

static size_t buffer_index(const walk_t *w, const kiln_tir_buffer_t *buffer) {
  for (size_t i = 0; i < kiln_array_count(&w->buffers); ++i) {
    if (KILN_ARRAY_AT(&w->buffers, const kiln_tir_buffer_t *, i) == buffer) {
      return i;
    }
  }
  return SIZE_MAX;
}

/* Record: lists the buffer at its first use. Apply: its generalization. */
static kiln_status_t note_buffer(walk_t *w, const kiln_tir_buffer_t *buffer,
                                 const kiln_tir_buffer_t **out) {
  *out = buffer;
  size_t i = buffer_index(w, buffer);
  if (w->apply) {
    if (i == SIZE_MAX) {
      return KILN_STATUS(INTERNAL, "generalize: buffer %s was not recorded", buffer->name);
    }
    *out = w->mapped[i];
    return KILN_OK;
  }
  return i == SIZE_MAX ? kiln_array_push(&w->buffers, &buffer) : KILN_OK;
}

static kiln_status_t on_int(kiln_tir_mutator_t *self, const kiln_tir_expr_t *e,
                            const kiln_tir_expr_t **out) {
  walk_t *w = (walk_t *)self;
  *out = e;
  if (!w->apply) {
    return kiln_array_push(&w->ints, &((const kiln_tir_int_imm_t *)e)->value);
  }
  const fit_t *f = &w->int_fits[w->next_int++];
  return f->kind == FIT_KEEP ? KILN_OK : build_int(self->arena, w->vars, f, e->dtype, out);
}

static kiln_status_t on_float(kiln_tir_mutator_t *self, const kiln_tir_expr_t *e,
                              const kiln_tir_expr_t **out) {
  walk_t *w = (walk_t *)self;
  *out = e;
  if (!w->apply) {
    return kiln_array_push(&w->floats, &((const kiln_tir_float_imm_t *)e)->value);
  }
  const fit_t *f = &w->float_fits[w->next_float++];
  return f->kind == FIT_KEEP ? KILN_OK : build_float(self->arena, w->vars, f, e->dtype, out);
}

static kiln_status_t mutate_indices(kiln_tir_mutator_t *self, int n,
                                    const kiln_tir_expr_t *const *in, const kiln_tir_expr_t **out,
                                    bool *changed) {
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, in[i], &out[i]));
    *changed = *changed || out[i] != in[i];
  }
  return KILN_OK;
}

static kiln_status_t on_load(kiln_tir_mutator_t *self, const kiln_tir_expr_t *e,
                             const kiln_tir_expr_t **out) {
  const kiln_tir_buffer_load_t *n = (const void *)e;
  const kiln_tir_buffer_t *buffer = NULL;
  const kiln_tir_expr_t *indices[KILN_TIR_MAX_DIMS + 1];
  KILN_RETURN_IF_ERROR(note_buffer((walk_t *)self, n->buffer, &buffer));
  bool changed = buffer != n->buffer;
  KILN_RETURN_IF_ERROR(mutate_indices(self, n->num_indices, n->indices, indices, &changed));
  *out = e;
  return changed ? kiln_tir_buffer_load_create(self->arena, buffer, n->num_indices, indices, out)
                 : KILN_OK;
}

static kiln_status_t on_store(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *s,
                              const kiln_tir_stmt_t **out) {
  const kiln_tir_buffer_store_t *n = (const void *)s;
  const kiln_tir_buffer_t *buffer = NULL;
  const kiln_tir_expr_t *value = NULL, *indices[KILN_TIR_MAX_DIMS + 1];
  KILN_RETURN_IF_ERROR(note_buffer((walk_t *)self, n->buffer, &buffer));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_expr(self, n->value, &value));
  bool changed = buffer != n->buffer || value != n->value;
  KILN_RETURN_IF_ERROR(mutate_indices(self, n->num_indices, n->indices, indices, &changed));
  *out = s;
  return changed ? kiln_tir_buffer_store_create(self->arena, buffer, value, n->num_indices, indices,
                                                out)
                 : KILN_OK;
}

static kiln_status_t on_allocate(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *s,
                                 const kiln_tir_stmt_t **out) {
  const kiln_tir_allocate_t *n = (const void *)s;
  const kiln_tir_buffer_t *buffer = NULL;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(note_buffer((walk_t *)self, n->buffer, &buffer));
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(self, n->body, &body));
  *out = s;
  return buffer != n->buffer || body != n->body
             ? kiln_tir_allocate_create(self->arena, buffer, n->scope, n->init, body, out)
             : KILN_OK;
}

static void walk_initialize(walk_t *w, kiln_arena_t *arena) {
  memset(w, 0, sizeof(*w));
  kiln_tir_mutator_initialize(&w->m, arena);
  w->m.expr_rules[KILN_TIR_EXPR_INT_IMM] = on_int;
  w->m.expr_rules[KILN_TIR_EXPR_FLOAT_IMM] = on_float;
  w->m.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = on_load;
  w->m.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = on_store;
  w->m.stmt_rules[KILN_TIR_STMT_ALLOCATE] = on_allocate;
  kiln_array_initialize(&w->ints, kiln_allocator_system(), sizeof(int64_t));
  kiln_array_initialize(&w->floats, kiln_allocator_system(), sizeof(double));
  kiln_array_initialize(&w->buffers, kiln_allocator_system(), sizeof(const kiln_tir_buffer_t *));
}

static void walk_deinitialize(walk_t *w) {
  kiln_array_deinitialize(&w->ints);
  kiln_array_deinitialize(&w->floats);
  kiln_array_deinitialize(&w->buffers);
}

static kiln_status_t record(walk_t *w, const kiln_tir_prim_func_t *func) {
  for (int p = 0; p < func->num_params; ++p) {
    KILN_RETURN_IF_ERROR(kiln_array_push(&w->buffers, &func->params[p]));
  }
  const kiln_tir_stmt_t *same = NULL;
  return kiln_tir_mutator_mutate_stmt(&w->m, func->body, &same);
}

/* ---- structure ---- */

static bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The end of the number literal starting at `c` (digits, a point, an
 * exponent). */
static const char *number_end(const char *c) {
  while ((*c >= '0' && *c <= '9') || *c == '.') {
    ++c;
  }
  if ((*c == 'e' || *c == 'E') && (c[1] == '+' || c[1] == '-' || (c[1] >= '0' && c[1] <= '9'))) {
    c += 2;
    while (*c >= '0' && *c <= '9') {
      ++c;
    }
  }
  return c;
}

/* The printed function with every number literal replaced by '#' (digits
 * inside names by '#' each). */
static kiln_status_t masked_text(const kiln_tir_prim_func_t *func, char **out_text) {
  KILN_RETURN_IF_ERROR(kiln_tir_prim_func_to_text(kiln_allocator_system(), func, out_text));
  char *to = *out_text, previous = ' ';
  for (const char *from = *out_text; *from;) {
    bool digit = *from >= '0' && *from <= '9';
    char c = *from;
    if (digit && !is_word(previous)) {
      const char *end = number_end(from);
      previous = end[-1];
      from = end;
      *to++ = '#';
    } else {
      *to++ = digit ? '#' : c;
      previous = c;
      ++from;
    }
  }
  *to = '\0';
  return KILN_OK;
}

static kiln_status_t differ(const char *a, const char *b) {
  size_t at = 0;
  while (a[at] && a[at] == b[at]) {
    ++at;
  }
  size_t from = at > 60 ? at - 60 : 0;
  return KILN_STATUS(UNIMPLEMENTED,
                     "the probe sizes lower to different loop structures (the compute rule or "
                     "schedule depends on the sizes of symbolic dims), first at \"%.100s\"",
                     a + from);
}

static kiln_status_t same_structure(const kiln_tir_prim_func_t *const *runs) {
  char *texts[RUNS] = {0};
  kiln_status_t status = KILN_OK;
  for (int r = 0; r < RUNS && !status; ++r) {
    status = masked_text(runs[r], &texts[r]);
  }
  for (int r = 1; r < RUNS && !status; ++r) {
    status = strcmp(texts[0], texts[r]) ? differ(texts[0], texts[r]) : KILN_OK;
  }
  for (int r = 0; r < RUNS; ++r) {
    kiln_allocator_free(kiln_allocator_system(), texts[r]);
  }
  return status;
}

/* ---- buffers ---- */

typedef struct context_t {
  kiln_arena_t *arena;
  walk_t walks[RUNS];
  fits_t fits;
  const kiln_tir_var_t *vars[KILN_TIR_GENERALIZE_MAX_VARS];
  size_t num_ints, num_floats, num_buffers;
  fit_t *int_fits, *float_fits;
  fit_t *dim_fits; /* num_buffers * KILN_TIR_MAX_DIMS */
} context_t;

static const kiln_tir_buffer_t *run_buffer(const context_t *c, int r, size_t i) {
  return KILN_ARRAY_AT(&c->walks[r].buffers, const kiln_tir_buffer_t *, i);
}

static kiln_status_t dim_values(const context_t *c, size_t i, int d, int64_t *v, bool *out_int) {
  *out_int = true;
  for (int r = 0; r < RUNS; ++r) {
    *out_int = *out_int && kiln_tir_expr_as_int(run_buffer(c, r, i)->shape[d], &v[r]);
  }
  if (!*out_int) {
    for (int r = 1; r < RUNS; ++r) {
      if (!kiln_tir_expr_equal(run_buffer(c, 0, i)->shape[d], run_buffer(c, r, i)->shape[d])) {
        return KILN_STATUS(UNIMPLEMENTED, "buffer %s: dim %d differs between the probe runs",
                           run_buffer(c, 0, i)->name, d);
      }
    }
  }
  return KILN_OK;
}

static kiln_status_t check_buffers(const context_t *c, size_t i) {
  const kiln_tir_buffer_t *b0 = run_buffer(c, 0, i);
  for (int r = 1; r < RUNS; ++r) {
    const kiln_tir_buffer_t *b = run_buffer(c, r, i);
    if (b->ndim != b0->ndim || b->dtype != b0->dtype) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "buffer %s: its rank or dtype differs between the probe runs", b0->name);
    }
  }
  return KILN_OK;
}

/* First-pass fits of every buffer dim (FIT_KEEP for non-constant dims). */
static kiln_status_t fit_dims_first(context_t *c) {
  for (size_t i = 0; i < c->num_buffers; ++i) {
    KILN_RETURN_IF_ERROR(check_buffers(c, i));
    for (int d = 0; d < run_buffer(c, 0, i)->ndim; ++d) {
      int64_t v[RUNS];
      bool constant = false;
      KILN_RETURN_IF_ERROR(dim_values(c, i, d, v, &constant));
      fit_t *f = &c->dim_fits[i * KILN_TIR_MAX_DIMS + (size_t)d];
      if (constant) {
        fit_first(&c->fits, v, f);
      } else {
        *f = (fit_t){.kind = FIT_KEEP};
      }
    }
  }
  return KILN_OK;
}

static kiln_status_t fit_dims_second(context_t *c) {
  for (size_t i = 0; i < c->num_buffers; ++i) {
    for (int d = 0; d < run_buffer(c, 0, i)->ndim; ++d) {
      int64_t v[RUNS];
      bool constant = false;
      KILN_RETURN_IF_ERROR(dim_values(c, i, d, v, &constant));
      KILN_RETURN_IF_ERROR_ANNOTATE(
          fit_second(&c->fits, v, &c->dim_fits[i * KILN_TIR_MAX_DIMS + (size_t)d]),
          "buffer %s dim %d", run_buffer(c, 0, i)->name, d);
    }
  }
  return KILN_OK;
}

static kiln_status_t generalize_buffer(context_t *c, size_t i, const kiln_tir_buffer_t **out) {
  const kiln_tir_buffer_t *b = run_buffer(c, 0, i);
  const kiln_tir_expr_t *dims[KILN_TIR_MAX_DIMS];
  bool changed = false;
  for (int d = 0; d < b->ndim; ++d) {
    const fit_t *f = &c->dim_fits[i * KILN_TIR_MAX_DIMS + (size_t)d];
    dims[d] = b->shape[d];
    if (f->kind != FIT_KEEP) {
      KILN_RETURN_IF_ERROR(build_int(c->arena, c->vars, f, b->shape[d]->dtype, &dims[d]));
      changed = true;
    }
  }
  *out = b;
  if (!changed) {
    return KILN_OK;
  }
  if (b->strides) {
    return KILN_STATUS(UNIMPLEMENTED, "buffer %s: strides over symbolic dims", b->name);
  }
  return kiln_tir_buffer_create(c->arena, b->name, b->dtype, b->ndim, dims, NULL, b->elem_offset,
                                out);
}

/* ---- constants ---- */

static kiln_status_t fit_ints(context_t *c) {
  c->num_ints = kiln_array_count(&c->walks[0].ints);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(c->arena, c->num_ints + 1, sizeof(fit_t),
                                                 _Alignof(fit_t), (void **)&c->int_fits));
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < c->num_ints; ++i) {
      int64_t v[RUNS];
      for (int r = 0; r < RUNS; ++r) {
        v[r] = KILN_ARRAY_AT(&c->walks[r].ints, int64_t, i);
      }
      if (pass == 0) {
        fit_first(&c->fits, v, &c->int_fits[i]);
      } else {
        KILN_RETURN_IF_ERROR(fit_second(&c->fits, v, &c->int_fits[i]));
      }
    }
    KILN_RETURN_IF_ERROR(pass == 0 ? fit_dims_first(c) : fit_dims_second(c));
  }
  return KILN_OK;
}

static kiln_status_t fit_floats(context_t *c) {
  c->num_floats = kiln_array_count(&c->walks[0].floats);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(c->arena, c->num_floats + 1, sizeof(fit_t),
                                                 _Alignof(fit_t), (void **)&c->float_fits));
  for (size_t i = 0; i < c->num_floats; ++i) {
    double v[RUNS];
    for (int r = 0; r < RUNS; ++r) {
      v[r] = KILN_ARRAY_AT(&c->walks[r].floats, double, i);
    }
    bool same = true;
    for (int r = 1; r < RUNS; ++r) {
      same = same && (v[r] == v[0] || (isnan(v[r]) && isnan(v[0])));
    }
    c->float_fits[i] = (fit_t){.kind = FIT_KEEP};
    if (!same && !fit_float(&c->fits, v, &c->float_fits[i])) {
      return unfitted("the float constant", v);
    }
  }
  return KILN_OK;
}

static kiln_status_t check_counts(const context_t *c) {
  for (int r = 1; r < RUNS; ++r) {
    const walk_t *w = &c->walks[r];
    if (kiln_array_count(&w->ints) != c->num_ints ||
        kiln_array_count(&w->floats) != kiln_array_count(&c->walks[0].floats) ||
        kiln_array_count(&w->buffers) != c->num_buffers) {
      return KILN_STATUS(UNIMPLEMENTED, "the probe runs differ in their constants or buffers");
    }
  }
  return KILN_OK;
}

/* ---- parameters bind the variables ---- */

static int var_index(const context_t *c, const kiln_tir_expr_t *e, int count) {
  for (int k = 0; k < count; ++k) {
    if (e == &c->vars[k]->base) {
      return k;
    }
  }
  return -1;
}

static kiln_status_t check_binding(const context_t *c, const kiln_tir_prim_func_t *func,
                                   int count) {
  bool bound[KILN_TIR_GENERALIZE_MAX_VARS] = {0};
  for (int p = 0; p < func->num_params; ++p) {
    const kiln_tir_buffer_t *b = func->params[p];
    for (int d = 0; d < b->ndim; ++d) {
      int k = var_index(c, b->shape[d], count);
      bound[k < 0 ? 0 : k] |= k >= 0;
    }
    for (int d = 0; d < b->ndim; ++d) {
      for (int k = 0; k < count; ++k) {
        if (!bound[k] && kiln_tir_expr_uses_vars(b->shape[d], 1, &c->vars[k])) {
          return KILN_STATUS(UNIMPLEMENTED,
                             "parameter %s: dim %d uses the symbolic dim %s before a parameter "
                             "gives it",
                             b->name, d, c->vars[k]->name);
        }
      }
    }
  }
  for (int k = 0; k < count; ++k) {
    if (!bound[k]) {
      return KILN_STATUS(UNIMPLEMENTED, "the symbolic dim %s is no parameter's dim",
                         c->vars[k]->name);
    }
  }
  return KILN_OK;
}

static kiln_status_t apply(context_t *c, const kiln_tir_prim_func_t *run0,
                           const kiln_tir_prim_func_t **out_func) {
  walk_t *w = &c->walks[0];
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(c->arena, c->num_buffers + 1, sizeof(*w->mapped),
                                                 _Alignof(void *), (void **)&w->mapped));
  for (size_t i = 0; i < c->num_buffers; ++i) {
    KILN_RETURN_IF_ERROR(generalize_buffer(c, i, &w->mapped[i]));
  }
  w->apply = true;
  w->int_fits = c->int_fits;
  w->float_fits = c->float_fits;
  w->vars = c->vars;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&w->m, run0->body, &body));
  return kiln_tir_prim_func_create(c->arena, run0->name, run0->num_params, w->mapped, body,
                                   run0->num_attrs, run0->attrs, out_func);
}

static kiln_status_t make_vars(context_t *c, const kiln_tir_generalize_vars_t *vars) {
  if (vars->count < 1 || vars->count > KILN_TIR_GENERALIZE_MAX_VARS) {
    return KILN_STATUS(INVALID_ARGUMENT, "generalize: %d variables (1 to %d)", vars->count,
                       KILN_TIR_GENERALIZE_MAX_VARS);
  }
  for (int k = 0; k < vars->count; ++k) {
    KILN_RETURN_IF_ERROR(kiln_tir_var_create(c->arena, vars->names[k],
                                             kiln_tir_scalar(KILN_DTYPE_INT32), &c->vars[k]));
  }
  return KILN_OK;
}

static kiln_status_t run_all(context_t *c, const kiln_tir_prim_func_t *const *runs,
                             const kiln_tir_generalize_vars_t *vars,
                             const kiln_tir_prim_func_t **out_func) {
  KILN_RETURN_IF_ERROR(make_vars(c, vars));
  KILN_RETURN_IF_ERROR(same_structure(runs));
  for (int r = 0; r < RUNS; ++r) {
    KILN_RETURN_IF_ERROR(record(&c->walks[r], runs[r]));
  }
  c->num_ints = kiln_array_count(&c->walks[0].ints);
  c->num_buffers = kiln_array_count(&c->walks[0].buffers);
  KILN_RETURN_IF_ERROR(check_counts(c));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(c->arena, c->num_buffers * KILN_TIR_MAX_DIMS + 1,
                                                 sizeof(fit_t), _Alignof(fit_t),
                                                 (void **)&c->dim_fits));
  KILN_RETURN_IF_ERROR(fit_ints(c));
  KILN_RETURN_IF_ERROR(fit_floats(c));
  KILN_RETURN_IF_ERROR(apply(c, runs[0], out_func));
  return check_binding(c, *out_func, vars->count);
}

kiln_status_t kiln_tir_generalize(kiln_arena_t *arena, const kiln_tir_prim_func_t *const *runs,
                                  const kiln_tir_generalize_vars_t *vars,
                                  const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  context_t *c = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(arena, sizeof(*c), _Alignof(context_t), (void **)&c));
  memset(c, 0, sizeof(*c));
  c->arena = arena;
  c->fits.vars = vars;
  for (int r = 0; r < RUNS; ++r) {
    walk_initialize(&c->walks[r], arena);
  }
  kiln_status_t status = run_all(c, runs, vars, out_func);
  for (int r = 0; r < RUNS; ++r) {
    walk_deinitialize(&c->walks[r]);
  }
  if (status) {
    *out_func = NULL;
  }
  return kiln_status_annotate(status, "generalize %s", runs[0]->name);
}
