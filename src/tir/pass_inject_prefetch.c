/*
 * inject_prefetch: software prefetch of what a later iteration of a loop
 * reads (TVM's prefetch schedule primitive, spread over an inner loop).
 *
 * A schedule marks a serial loop `v` with the annotation "prefetch" = "D"
 * (kiln_te_pragma): iteration v then fetches, towards the core, the lines
 * of the function's parameters that iteration v + D will read. The pass
 * runs on flat accesses (after storage_flatten). For each scalar load of a
 * parameter in v's body, whose buffer the body does not store, its index is
 * written as a linear form: terms of the loop variables inside the body
 * (each with a constant range), and outer terms (anything that uses none of
 * them, v among them with a nonzero coefficient). The inner terms, sorted by
 * coefficient, make a contiguous run of elements while each coefficient is
 * at most the run so far (a weight slice [kh][kw][i][o], an input window);
 * the remaining terms make rows, each a copy of the run at its own offset.
 * The lines of every row, at v + D, are then fetched: spread evenly over
 * the iterations of the first loop inside v (the rows of a conv's row block),
 * so that the fetches overlap with the arithmetic instead of arriving as
 * one burst. The last D iterations fetch the last one's lines again (v + D
 * is clamped to the loop's last value: a guard would make loop_partition
 * copy the whole nest). Offsets within a run are clamped to its last
 * element, and the index to the buffer (a guarded load, a split's tail or
 * padding, spans more than the loop reads), so no fetch is ever outside
 * the buffer (the interpreter checks that). Loads that do not fit this form (a non-linear index, an
 * inner loop with a variable range, more than KILN_TIR_PREFETCH_MAX_ROWS rows
 * or KILN_TIR_PREFETCH_MAX_LINES lines) are left to the hardware.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tir/analysis.h"
#include "tir/builder.h"
#include "tir/functor.h"
#include "tir/transform.h"

#define KILN_TIR_PREFETCH_LINE_BYTES 64
#define KILN_TIR_PREFETCH_MAX_LINES  1024
#define KILN_TIR_PREFETCH_MAX_ROWS   16
#define MAX_INNER                    32
#define MAX_LOADS                    16

typedef struct inner_loop_t {
  int64_t min, max;
  int known; /* constant min and extent */
} inner_loop_t;

/* What the body of the annotated loop reads and stores. */
typedef struct collector_t {
  kiln_tir_visitor_t visitor; /* first: rules get &collector->visitor */
  const kiln_tir_prim_func_t *func;
  int num_loops, num_loads, num_stored, overflow;
  const kiln_tir_var_t *loop_vars[MAX_INNER];
  inner_loop_t loops[MAX_INNER]; /* loop_vars[i]'s range */
  const kiln_tir_buffer_load_t *loads[MAX_LOADS];
  const kiln_tir_var_t *stored[MAX_LOADS];
} collector_t;

/* One load's lines per iteration: rows of `run` contiguous elements, each
 * at outer + row_offsets[r] (outer: the linear form of the outer terms and
 * the run's first offset). */
typedef struct stream_t {
  const kiln_tir_buffer_load_t *load;
  kiln_tir_linear_t outer;
  int64_t run, lines, elements_per_line;
  int64_t size; /* the buffer's elements */
  int num_rows;
  int64_t row_offsets[KILN_TIR_PREFETCH_MAX_ROWS];
} stream_t;

typedef struct coefficient_t {
  int64_t coeff, span;
} coefficient_t;

static int is_param(const kiln_tir_prim_func_t *func, const kiln_tir_var_t *data) {
  for (int i = 0; i < func->num_params; ++i) {
    if (func->params[i]->data == data) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t collect_for(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  collector_t *c = (collector_t *)self;
  const kiln_tir_for_t *n = (const void *)stmt;
  int64_t min = 0, extent = 0;
  if (c->num_loops == MAX_INNER) {
    c->overflow = 1;
    return KILN_OK;
  }
  int known =
      kiln_tir_expr_as_int(n->min, &min) && kiln_tir_expr_as_int(n->extent, &extent) && extent > 0;
  c->loop_vars[c->num_loops] = n->var;
  c->loops[c->num_loops++] = (inner_loop_t){min, min + extent - 1, known};
  return kiln_tir_visitor_stmt_children(self, stmt);
}

static kiln_status_t collect_store(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  collector_t *c = (collector_t *)self;
  const kiln_tir_buffer_store_t *n = (const void *)stmt;
  if (c->num_stored == MAX_LOADS) {
    c->overflow = 1;
  } else {
    c->stored[c->num_stored++] = n->buffer->data;
  }
  return kiln_tir_visitor_stmt_children(self, stmt);
}

static kiln_status_t collect_load(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  collector_t *c = (collector_t *)self;
  const kiln_tir_buffer_load_t *n = (const void *)expr;
  if (n->num_indices == 1 && expr->dtype.lanes == 1 && is_param(c->func, n->buffer->data)) {
    for (int i = 0; i < c->num_loads; ++i) {
      if (kiln_tir_expr_equal(&c->loads[i]->base, expr)) {
        return kiln_tir_visitor_expr_children(self, expr);
      }
    }
    if (c->num_loads == MAX_LOADS) {
      c->overflow = 1;
    } else {
      c->loads[c->num_loads++] = n;
    }
  }
  return kiln_tir_visitor_expr_children(self, expr);
}

static kiln_status_t collect(collector_t *c, const kiln_tir_stmt_t *body) {
  kiln_tir_visitor_initialize(&c->visitor);
  c->visitor.stmt_rules[KILN_TIR_STMT_FOR] = collect_for;
  c->visitor.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = collect_store;
  c->visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = collect_load;
  return kiln_tir_visitor_visit_stmt(&c->visitor, body);
}

/* ---- one load's stream ---- */

static const inner_loop_t *inner_loop(const collector_t *c, const kiln_tir_expr_t *atom) {
  for (int i = 0; i < c->num_loops; ++i) {
    if (&c->loop_vars[i]->base == atom) {
      return &c->loops[i];
    }
  }
  return NULL;
}

static int by_coefficient(const void *a, const void *b) {
  int64_t x = ((const coefficient_t *)a)->coeff, y = ((const coefficient_t *)b)->coeff;
  return (x > y) - (x < y);
}

/* Moves the inner terms of `lin` into `out` (|coeff|, span), adding each
 * term's smallest value to the constant; 0 when a term cannot be bounded. */
static int split_inner(const collector_t *c, kiln_tir_linear_t *lin, coefficient_t *out,
                       int *out_count) {
  int kept = 0, count = 0;
  for (int i = 0; i < lin->count; ++i) {
    kiln_tir_linear_term_t t = lin->terms[i];
    const inner_loop_t *loop = inner_loop(c, t.atom);
    if (!loop) {
      if (kiln_tir_expr_uses_vars(t.atom, c->num_loops, c->loop_vars)) {
        return 0;
      }
      lin->terms[kept++] = t;
      continue;
    }
    if (!loop->known) {
      return 0;
    }
    lin->constant += t.coeff * (t.coeff > 0 ? loop->min : loop->max);
    out[count++] = (coefficient_t){llabs(t.coeff), loop->max - loop->min};
  }
  lin->count = kept;
  *out_count = count;
  return 1;
}

/* The run (terms whose coefficient is at most the run so far) and the rows
 * (every combination of the other terms). */
static int runs_and_rows(coefficient_t *terms, int count, stream_t *s) {
  qsort(terms, (size_t)count, sizeof(*terms), by_coefficient);
  s->run = 1;
  int i = 0;
  for (; i < count && terms[i].coeff <= s->run; ++i) {
    s->run += terms[i].coeff * terms[i].span;
  }
  s->num_rows = 1;
  s->row_offsets[0] = 0;
  for (; i < count; ++i) {
    int rows = s->num_rows;
    if ((int64_t)rows * (terms[i].span + 1) > KILN_TIR_PREFETCH_MAX_ROWS) {
      return 0;
    }
    for (int64_t k = 1; k <= terms[i].span; ++k) {
      for (int r = 0; r < rows; ++r) {
        s->row_offsets[s->num_rows++] = s->row_offsets[r] + k * terms[i].coeff;
      }
    }
  }
  return 1;
}

static int uses_loop_var(const kiln_tir_linear_t *lin, const kiln_tir_var_t *v) {
  for (int i = 0; i < lin->count; ++i) {
    if (lin->terms[i].atom == &v->base) {
      return 1;
    }
  }
  return 0;
}

/* The elements of `buffer` (a parameter: its own shape); 0 when not constant. */
static int64_t buffer_size(const kiln_tir_buffer_t *buffer) {
  int64_t size = 1, extent = 0;
  for (int d = 0; d < buffer->ndim; ++d) {
    if (!kiln_tir_expr_as_int(buffer->shape[d], &extent) || extent <= 0 ||
        size > INT64_MAX / extent) {
      return 0;
    }
    size *= extent;
  }
  return size;
}

/* The stream of `load` for loop `v`; 0 when it does not fit. */
static int stream_of(const collector_t *c, const kiln_tir_var_t *v,
                     const kiln_tir_buffer_load_t *load, stream_t *s) {
  coefficient_t terms[KILN_TIR_LINEAR_MAX_TERMS];
  int count = 0;
  s->load = load;
  s->size = buffer_size(load->buffer);
  if (s->size == 0 || !kiln_tir_linear_from_expr(load->indices[0], &s->outer) ||
      !split_inner(c, &s->outer, terms, &count) || !uses_loop_var(&s->outer, v) ||
      !runs_and_rows(terms, count, s)) {
    return 0;
  }
  int64_t bytes = (int64_t)kiln_dtype_size(load->buffer->dtype);
  s->elements_per_line =
      bytes < KILN_TIR_PREFETCH_LINE_BYTES ? KILN_TIR_PREFETCH_LINE_BYTES / bytes : 1;
  s->lines = s->run > 1 ? (s->run - 1) / s->elements_per_line + 2 : 1;
  return s->lines * s->num_rows <= KILN_TIR_PREFETCH_MAX_LINES;
}

/* ---- the fetches ---- */

typedef struct spread_t {
  const kiln_tir_expr_t *step; /* (u - u.min): which share of the lines */
  int64_t iterations;          /* u's extent (1: no spread loop) */
} spread_t;

/* Row r's share p: outer(v + D) + row + min(step * per * epl + p * epl,
 * run - 1), clamped to the buffer (a load under a guard, such as a split's
 * tail or a padding condition, can span more than the loop reads). */
static const kiln_tir_stmt_t *fetch(kiln_tir_builder_t *b, const stream_t *s,
                                    const kiln_tir_expr_t *outer, const spread_t *spread,
                                    int64_t per, int r, int64_t p) {
  kiln_dtype_t dtype = outer->dtype.base;
  const kiln_tir_expr_t *offset = kiln_tir_b_int(b, dtype, p * s->elements_per_line);
  if (spread->step) {
    const kiln_tir_expr_t *share =
        kiln_tir_b_mul(b, spread->step, kiln_tir_b_int(b, dtype, per * s->elements_per_line));
    offset = kiln_tir_b_add(b, share, offset);
  }
  offset = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, offset, kiln_tir_b_int(b, dtype, s->run - 1));
  const kiln_tir_expr_t *index = kiln_tir_b_add(
      b, kiln_tir_b_add(b, outer, kiln_tir_b_int(b, dtype, s->row_offsets[r])), offset);
  index = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_MAX,
      kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, index, kiln_tir_b_int(b, dtype, s->size - 1)),
      kiln_tir_b_int(b, dtype, 0));
  return kiln_tir_b_prefetch(b, kiln_tir_b_load(b, s->load->buffer, 1, &index));
}

/* The outer terms at iteration min(v + D, last): the last iterations fetch
 * the last one's lines again, where a guard would make the loop
 * partitioner copy the whole loop nest. */
static kiln_status_t outer_ahead(kiln_tir_builder_t *b, stream_t *s, const kiln_tir_for_t *v,
                                 int64_t distance, const kiln_tir_expr_t **out) {
  int64_t coeff = 0;
  int kept = 0;
  for (int i = 0; i < s->outer.count; ++i) {
    if (s->outer.terms[i].atom == &v->var->base) {
      coeff += s->outer.terms[i].coeff;
    } else {
      s->outer.terms[kept++] = s->outer.terms[i];
    }
  }
  s->outer.count = kept;
  const kiln_tir_expr_t *rest = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(b->arena, &s->outer, &rest));
  kiln_dtype_t dtype = v->var->base.dtype.base;
  const kiln_tir_expr_t *one = kiln_tir_b_int(b, dtype, 1);
  const kiln_tir_expr_t *last =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_add(b, v->min, v->extent), one);
  const kiln_tir_expr_t *ahead = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_MIN,
      kiln_tir_b_add(b, kiln_tir_b_v(v->var), kiln_tir_b_int(b, dtype, distance)), last);
  *out = kiln_tir_b_add(b, rest, kiln_tir_b_mul(b, ahead, kiln_tir_b_int(b, dtype, coeff)));
  return b->status;
}

/* Appends a stream's fetches for one iteration of the spread loop. */
static kiln_status_t stream_fetches(kiln_tir_builder_t *b, stream_t *s, const kiln_tir_for_t *v,
                                    int64_t distance, const spread_t *spread, kiln_array_t *out) {
  const kiln_tir_expr_t *outer = NULL;
  KILN_RETURN_IF_ERROR(outer_ahead(b, s, v, distance, &outer));
  int64_t per = (s->lines + spread->iterations - 1) / spread->iterations;
  for (int r = 0; r < s->num_rows; ++r) {
    for (int64_t p = 0; p < per; ++p) {
      const kiln_tir_stmt_t *stmt = fetch(b, s, outer, spread, per, r, p);
      KILN_RETURN_IF_ERROR(b->status);
      KILN_RETURN_IF_ERROR(kiln_array_push(out, &stmt));
    }
  }
  return KILN_OK;
}

/* The spread loop: the first statement of v's body when it is a serial
 * loop of constant range. */
static spread_t spread_of(kiln_tir_builder_t *b, const kiln_tir_stmt_t *body) {
  spread_t spread = {NULL, 1};
  const kiln_tir_for_t *u = (const void *)body;
  int64_t extent = 0;
  if (body->kind == KILN_TIR_STMT_FOR && u->for_kind == KILN_TIR_FOR_SERIAL &&
      kiln_tir_expr_as_int(u->extent, &extent) && extent > 1) {
    spread.step = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_v(u->var), u->min);
    spread.iterations = extent;
  }
  return spread;
}

/* The fetches, first in the spread loop's body (or v's). */
static kiln_status_t place(kiln_tir_builder_t *b, const kiln_tir_for_t *v, const spread_t *spread,
                           kiln_array_t *fetches, const kiln_tir_stmt_t **out_body) {
  const kiln_tir_stmt_t *inner = spread->step ? ((const kiln_tir_for_t *)v->body)->body : v->body;
  const kiln_tir_stmt_t *pair[2] = {
      kiln_tir_b_seq(b, (int)kiln_array_count(fetches), kiln_array_data(fetches)), inner};
  const kiln_tir_stmt_t *body = kiln_tir_b_seq(b, 2, pair);
  if (spread->step) {
    const kiln_tir_for_t *u = (const void *)v->body;
    body = kiln_tir_b_for(b, u->var, u->min, u->extent, u->for_kind, body);
  }
  KILN_RETURN_IF_ERROR(b->status);
  *out_body = body;
  return KILN_OK;
}

/* ---- the pass ---- */

typedef struct injector_t {
  kiln_tir_mutator_t mutator; /* first */
  const kiln_tir_prim_func_t *func;
} injector_t;

/* The loop's prefetch distance: its annotation's positive integer, else 0. */
static int64_t distance_of(const kiln_tir_for_t *n) {
  for (int i = 0; i < n->num_annotations; ++i) {
    if (strcmp(n->annotations[i].key, KILN_TIR_PREFETCH_ANNOTATION) == 0) {
      int64_t d = strtoll(n->annotations[i].value, NULL, 10);
      return d > 0 ? d : 0;
    }
  }
  return 0;
}

static int is_stored(const collector_t *c, const kiln_tir_var_t *data) {
  for (int i = 0; i < c->num_stored; ++i) {
    if (c->stored[i] == data) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t inject(injector_t *in, const kiln_tir_for_t *n, int64_t distance,
                            const kiln_tir_stmt_t **out) {
  collector_t c = {.func = in->func};
  KILN_RETURN_IF_ERROR(collect(&c, n->body));
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, in->mutator.arena);
  spread_t spread = spread_of(&b, n->body);
  kiln_array_t fetches;
  kiln_array_initialize(&fetches, kiln_arena_allocator(in->mutator.arena),
                        sizeof(const kiln_tir_stmt_t *));
  for (int i = 0; i < c.num_loads && !c.overflow; ++i) {
    stream_t s;
    if (!is_stored(&c, c.loads[i]->buffer->data) && stream_of(&c, n->var, c.loads[i], &s)) {
      KILN_RETURN_IF_ERROR(stream_fetches(&b, &s, n, distance, &spread, &fetches));
    }
  }
  if (kiln_array_count(&fetches) == 0) {
    *out = &n->base;
    return KILN_OK;
  }
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(place(&b, n, &spread, &fetches, &body));
  return kiln_tir_for_create(in->mutator.arena, n->var, n->min, n->extent, n->for_kind, body,
                             n->num_annotations, n->annotations, out);
}

static kiln_status_t inject_for(kiln_tir_mutator_t *self, const kiln_tir_stmt_t *stmt,
                                const kiln_tir_stmt_t **out) {
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_stmt(self, stmt, &stmt));
  const kiln_tir_for_t *n = (const void *)stmt;
  int64_t distance = distance_of(n);
  if (distance == 0 || n->for_kind != KILN_TIR_FOR_SERIAL) {
    *out = stmt;
    return KILN_OK;
  }
  return inject((injector_t *)self, n, distance, out);
}

kiln_status_t kiln_tir_inject_prefetch(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                       const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  injector_t in = {.func = func};
  kiln_tir_mutator_initialize(&in.mutator, arena);
  in.mutator.stmt_rules[KILN_TIR_STMT_FOR] = inject_for;
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_mutate_stmt(&in.mutator, func->body, &body));
  return kiln_tir_prim_func_with_body(arena, func, body, out_func);
}
