/*
 * Bound inference, schedule_ops and lower (the contract is in lower.h).
 *
 * Per stage, a "nest" context holds the ranges from bound inference and,
 * for one walk, the value of every iteration variable as a loop-IR
 * expression: leaves get their loop variables, then the relations are
 * walked backward (PassUpIndex) to give the parents theirs, skipping a
 * relation whose children have no value (the reduction leaves, in the init
 * nest). The same walk collects the guards of the splits that overshoot.
 * The body then has the root axes substituted (tir/substitute.h) and the
 * loads of inlined stages replaced by their bodies (a mutator), and the
 * loops are wrapped around it innermost first. Stages attached with
 * compute_at are lowered recursively while their consumer is: once the
 * consumer's values are known, the region its body reads is inferred, the
 * producer's nest is built over it (an "attach" giving per-dim bases and
 * extents, and the region buffer), and inserted with its Allocate inside the
 * loop of the attach leaf; the consumer's loads (and a reduction's own
 * accumulator loads) are then retargeted to the region buffer. Nodes are
 * built with the sticky-status builder on the schedule's arena. Every
 * Allocate is KILN_TIR_INIT_NONE, as TVM's are: a compute op defines every
 * element of the region its consumers read before they read it, and an
 * extern op's body must write its outputs; the loop-IR interpreter reports
 * a read before the write, so the tests that run lowered kernels there
 * check it.
 */
#include "te/lower.h"

#include <stdio.h>
#include <string.h>

#include "tir/functor.h"
#include "tir/simplify.h"
#include "tir/substitute.h"
#include "tir/verify.h"

static int index_of(const kiln_te_stage_t *stage, const kiln_te_iter_var_t *iv) {
  for (int i = 0; i < stage->num_all; ++i) {
    if (stage->all_iter_vars[i] == iv) {
      return i;
    }
  }
  return -1;
}

static int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/* `root_extents` (may be NULL) overrides the output axes' domains with
 * [0, extent): the region a compute_at stage computes, as offsets. */
static kiln_status_t infer_ranges(const kiln_te_stage_t *stage, const int64_t *root_extents,
                                  kiln_te_range_t *out_ranges) {
  for (int i = 0; i < stage->num_all; ++i) {
    out_ranges[i] =
        (kiln_te_range_t){stage->all_iter_vars[i]->min, stage->all_iter_vars[i]->extent};
  }
  for (int d = 0; root_extents && d < stage->op->num_axes; ++d) {
    out_ranges[index_of(stage, stage->op->axes[d])] = (kiln_te_range_t){0, root_extents[d]};
  }
  for (int r = 0; r < stage->num_relations; ++r) {
    const kiln_te_relation_t *rel = &stage->relations[r];
    int p = index_of(stage, rel->parent);
    int o = index_of(stage, rel->outer);
    int n = index_of(stage, rel->inner);
    if (p < 0 || o < 0 || n < 0) {
      return KILN_STATUS(INTERNAL, "infer_bound: stage %s: relation %d names a foreign axis",
                         stage->op->name, r);
    }
    if (rel->kind == KILN_TE_RELATION_SPLIT) {
      int64_t e = out_ranges[p].extent;
      int64_t inner = rel->factor ? rel->factor : ceil_div(e, rel->nparts);
      int64_t outer = rel->factor ? ceil_div(e, rel->factor) : rel->nparts;
      out_ranges[o] = (kiln_te_range_t){0, outer};
      out_ranges[n] = (kiln_te_range_t){0, inner};
    } else {
      int64_t fused = out_ranges[o].extent * out_ranges[n].extent;
      if (fused > INT32_MAX) {
        return KILN_STATUS(OUT_OF_RANGE, "infer_bound: stage %s: fused extent %lld exceeds int32",
                           stage->op->name, (long long)fused);
      }
      out_ranges[p] = (kiln_te_range_t){0, fused};
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_te_infer_bound(const kiln_te_stage_t *stage, kiln_te_range_t *out_ranges) {
  return infer_ranges(stage, NULL, out_ranges);
}

/* ---- the lowering context ---- */

typedef struct inline_body_t {
  const kiln_tir_buffer_t *buffer;
  const kiln_te_operation_t *op;
  const kiln_tir_expr_t *body; /* with its own inlined loads replaced */
} inline_body_t;

/* Where a compute_at stage stores: a buffer of the region's shape, indexed
 * by offsets from `base` (NULL: 0) in each output dim. */
typedef struct attach_t {
  const kiln_te_stage_t *stage;
  const kiln_tir_buffer_t *buffer;
  const kiln_tir_expr_t *base[KILN_TIR_MAX_DIMS];
  int64_t extent[KILN_TIR_MAX_DIMS];
} attach_t;

typedef struct lowerer_t {
  const kiln_te_schedule_t *schedule;
  kiln_tir_builder_t b;
  int num_inlined;
  inline_body_t inlined[KILN_TE_MAX_STAGES];
  const kiln_tir_expr_t *bodies[KILN_TE_MAX_STAGES]; /* per stage, inlining applied */
} lowerer_t;

typedef struct nest_t {
  const kiln_te_stage_t *stage;
  const attach_t *attach; /* this stage's region, or NULL at root */
  int num_retargets;      /* the consumers' side: loads to move to tiles */
  const attach_t *retargets[KILN_TE_MAX_STAGES];
  const kiln_tir_expr_t *offsets[KILN_TIR_MAX_DIMS]; /* attached: store indices */
  kiln_te_range_t ranges[KILN_TE_MAX_ITER_VARS];
  const kiln_tir_expr_t *values[KILN_TE_MAX_ITER_VARS];
  const kiln_tir_var_t *loop_vars[KILN_TE_MAX_ITER_VARS]; /* per leaf position */
  int num_guards;
  const kiln_tir_expr_t *guards[KILN_TE_MAX_RELATIONS + 2 * KILN_TIR_MAX_DIMS];
} nest_t;

/* ---- inlining ---- */

typedef struct inliner_t {
  kiln_tir_mutator_t mutator; /* first */
  const lowerer_t *lowerer;
} inliner_t;

static kiln_status_t inline_load(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                 const kiln_tir_expr_t **out_expr) {
  const inliner_t *in = (const inliner_t *)self;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_expr(self, expr, out_expr));
  const kiln_tir_buffer_load_t *load = (const kiln_tir_buffer_load_t *)*out_expr;
  for (int i = 0; i < in->lowerer->num_inlined; ++i) {
    const inline_body_t *ib = &in->lowerer->inlined[i];
    if (ib->buffer == load->buffer) {
      kiln_tir_var_value_t map[KILN_TIR_MAX_DIMS];
      for (int d = 0; d < ib->op->num_axes; ++d) {
        map[d] = (kiln_tir_var_value_t){ib->op->axes[d]->var, load->indices[d]};
      }
      return kiln_tir_substitute_expr(self->arena, ib->op->num_axes, map, ib->body, out_expr);
    }
  }
  return KILN_OK;
}

static void inliner_initialize(inliner_t *in, const lowerer_t *l) {
  kiln_tir_mutator_initialize(&in->mutator, l->schedule->arena);
  in->mutator.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = inline_load;
  in->lowerer = l;
}

static kiln_status_t apply_inline(const lowerer_t *l, const kiln_tir_expr_t *expr,
                                  const kiln_tir_expr_t **out_expr) {
  if (l->num_inlined == 0) {
    *out_expr = expr;
    return KILN_OK;
  }
  inliner_t in;
  inliner_initialize(&in, l);
  return kiln_tir_mutator_mutate_expr(&in.mutator, expr, out_expr);
}

/* ---- PassUpIndex ---- */

/* An attached stage computes its region: each output axis is base + offset,
 * and the offset is the store index into the region's buffer. Where the
 * region is not the whole dim, guards keep the index inside the tensor. */
static void apply_attach(lowerer_t *l, nest_t *n) {
  kiln_tir_builder_t *b = &l->b;
  const kiln_te_stage_t *st = n->stage;
  for (int d = 0; n->attach && d < st->op->num_axes; ++d) {
    int idx = index_of(st, st->op->axes[d]);
    const kiln_tir_expr_t *base = n->attach->base[d];
    n->offsets[d] = n->values[idx];
    if (!base || !n->values[idx]) {
      continue;
    }
    const kiln_tir_expr_t *v = kiln_tir_b_add(b, base, n->values[idx]);
    n->values[idx] = v;
    n->guards[n->num_guards++] = kiln_tir_b_bin(b, KILN_TIR_EXPR_LE, kiln_tir_b_i32(b, 0), v);
    n->guards[n->num_guards++] =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, v, kiln_tir_b_i32(b, st->output->shape[d]));
  }
}

static void pass_up(lowerer_t *l, nest_t *n) {
  kiln_tir_builder_t *b = &l->b;
  const kiln_te_stage_t *st = n->stage;
  n->num_guards = 0;
  for (int r = st->num_relations - 1; r >= 0; --r) {
    const kiln_te_relation_t *rel = &st->relations[r];
    int p = index_of(st, rel->parent), o = index_of(st, rel->outer), i = index_of(st, rel->inner);
    if (rel->kind == KILN_TE_RELATION_SPLIT) {
      if (!n->values[o] || !n->values[i]) {
        continue;
      }
      const kiln_tir_expr_t *offset = kiln_tir_b_add(
          b, kiln_tir_b_mul(b, n->values[o], kiln_tir_b_i32(b, n->ranges[i].extent)), n->values[i]);
      if (l->schedule->probe || n->ranges[o].extent * n->ranges[i].extent > n->ranges[p].extent) {
        n->guards[n->num_guards++] =
            kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, offset, kiln_tir_b_i32(b, n->ranges[p].extent));
      }
      n->values[p] = n->ranges[p].min == 0
                         ? offset
                         : kiln_tir_b_add(b, kiln_tir_b_i32(b, n->ranges[p].min), offset);
    } else if (n->values[p]) {
      const kiln_tir_expr_t *extent = kiln_tir_b_i32(b, n->ranges[i].extent);
      const kiln_tir_expr_t *q = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, n->values[p], extent);
      const kiln_tir_expr_t *m = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, n->values[p], extent);
      n->values[o] =
          n->ranges[o].min == 0 ? q : kiln_tir_b_add(b, kiln_tir_b_i32(b, n->ranges[o].min), q);
      n->values[i] =
          n->ranges[i].min == 0 ? m : kiln_tir_b_add(b, kiln_tir_b_i32(b, n->ranges[i].min), m);
    }
  }
  apply_attach(l, n);
}

static void keep_first_error(lowerer_t *l, kiln_status_t s) {
  if (s != KILN_OK && l->b.status == KILN_OK) {
    l->b.status = s;
  } else if (s != KILN_OK) {
    kiln_status_free(s);
  }
}

/* Leaves [from, num_leaves) get loop variables; `init` makes fresh `_init`
 * variables for the data-parallel ones and leaves the reduction ones out. */
static void bind_leaves(lowerer_t *l, nest_t *n, int from, int init) {
  const kiln_te_stage_t *st = n->stage;
  for (int k = from; k < st->num_leaves; ++k) {
    const kiln_te_iter_var_t *iv = st->leaf_iter_vars[k];
    int idx = index_of(st, iv);
    const kiln_tir_var_t *var = iv->var;
    if (init && iv->kind == KILN_TE_ITER_REDUCE) {
      var = NULL;
    } else if (init) {
      char name[128];
      snprintf(name, sizeof(name), "%s_init", iv->var->name);
      char *copy = NULL;
      keep_first_error(l, kiln_arena_strdup(l->schedule->arena, name, &copy));
      var = copy ? kiln_tir_b_var(&l->b, copy, KILN_DTYPE_INT32) : NULL;
    }
    n->loop_vars[k] = var;
    n->values[idx] = kiln_tir_b_v(var);
  }
}

/* The guard conjunction around `body` (body itself when there is none). */
static const kiln_tir_stmt_t *guard(lowerer_t *l, const nest_t *n, const kiln_tir_stmt_t *body) {
  const kiln_tir_expr_t *cond = NULL;
  for (int g = n->num_guards - 1; g >= 0; --g) {
    cond = cond ? kiln_tir_b_bin(&l->b, KILN_TIR_EXPR_AND, n->guards[g], cond) : n->guards[g];
  }
  return cond ? kiln_tir_b_if(&l->b, cond, body, NULL) : body;
}

/* The compute_at stages of a consumer: where each goes and its nest. */
typedef struct attachments_t {
  int count;
  int leaf[KILN_TE_MAX_STAGES];
  const attach_t *attach[KILN_TE_MAX_STAGES];
  const kiln_tir_stmt_t *stmt[KILN_TE_MAX_STAGES];
} attachments_t;

/* Inside the loop of leaf k: the attached nests, then `body`, inside the
 * Allocates of their region buffers. */
static const kiln_tir_stmt_t *insert_attached(lowerer_t *l, const attachments_t *a, int k,
                                              const kiln_tir_stmt_t *body) {
  const kiln_tir_stmt_t *seq[KILN_TE_MAX_STAGES + 1];
  int count = 0;
  for (int i = 0; a && i < a->count; ++i) {
    if (a->leaf[i] == k) {
      seq[count++] = a->stmt[i];
    }
  }
  if (count == 0) {
    return body;
  }
  seq[count++] = body;
  body = kiln_tir_b_seq(&l->b, count, seq);
  for (int i = a->count - 1; i >= 0; --i) {
    if (a->leaf[i] == k) {
      body = kiln_tir_b_allocate(&l->b, a->attach[i]->buffer, a->attach[i]->stage->scope,
                                 KILN_TIR_INIT_NONE, body);
    }
  }
  return body;
}

/* For loops over leaves [from, to) around `body`, innermost first; leaves
 * without a loop variable (reductions, in the init nest) are skipped. */
static const kiln_tir_stmt_t *wrap_loops(lowerer_t *l, const nest_t *n, int from, int to,
                                         const attachments_t *attached,
                                         const kiln_tir_stmt_t *body) {
  const kiln_te_stage_t *st = n->stage;
  for (int k = to - 1; k >= from; --k) {
    if (!n->loop_vars[k]) {
      continue;
    }
    body = insert_attached(l, attached, k, body);
    int idx = index_of(st, st->leaf_iter_vars[k]);
    const kiln_te_iter_attr_t *attr = &st->attrs[idx];
    const kiln_tir_stmt_t *loop = NULL;
    if (body && l->b.status == KILN_OK) {
      keep_first_error(l, kiln_tir_for_create(l->b.arena, n->loop_vars[k],
                                              kiln_tir_b_i32(&l->b, n->ranges[idx].min),
                                              kiln_tir_b_i32(&l->b, n->ranges[idx].extent),
                                              attr->for_kind, body, attr->num_pragmas,
                                              attr->pragmas, &loop));
    }
    body = loop;
  }
  return body;
}

/* ---- loads of attached stages move to their region buffers ---- */

typedef struct retargeter_t {
  kiln_tir_mutator_t mutator; /* first */
  const nest_t *nest;
} retargeter_t;

static kiln_status_t retarget_load(kiln_tir_mutator_t *self, const kiln_tir_expr_t *expr,
                                   const kiln_tir_expr_t **out_expr) {
  const nest_t *n = ((const retargeter_t *)self)->nest;
  KILN_RETURN_IF_ERROR(kiln_tir_mutator_rebuild_expr(self, expr, out_expr));
  const kiln_tir_buffer_load_t *load = (const kiln_tir_buffer_load_t *)*out_expr;
  for (int i = 0; i < n->num_retargets; ++i) {
    const attach_t *a = n->retargets[i];
    if (a->stage->output->buffer != load->buffer) {
      continue;
    }
    const kiln_tir_expr_t *indices[KILN_TIR_MAX_DIMS];
    for (int d = 0; d < load->num_indices; ++d) {
      indices[d] = load->indices[d];
      if (a->base[d]) {
        KILN_RETURN_IF_ERROR(kiln_tir_binary_create(self->arena, KILN_TIR_EXPR_SUB, indices[d],
                                                    a->base[d], &indices[d]));
      }
    }
    return kiln_tir_buffer_load_create(self->arena, a->buffer, load->num_indices, indices,
                                       out_expr);
  }
  return KILN_OK;
}

/* `value` with the root axes replaced by their values in `n` and the loads
 * of attached stages retargeted. */
static const kiln_tir_expr_t *substitute_roots(lowerer_t *l, const nest_t *n,
                                               const kiln_tir_expr_t *value) {
  const kiln_te_stage_t *st = n->stage;
  kiln_tir_var_value_t map[KILN_TE_MAX_ITER_VARS];
  int count = 0;
  for (int a = 0; a < st->op->num_axes + st->op->num_reduce_axes; ++a) {
    const kiln_te_iter_var_t *iv =
        a < st->op->num_axes ? st->op->axes[a] : st->op->reduce_axes[a - st->op->num_axes];
    const kiln_tir_expr_t *v = n->values[index_of(st, iv)];
    if (v && v != &iv->var->base) {
      map[count++] = (kiln_tir_var_value_t){iv->var, v};
    }
  }
  const kiln_tir_expr_t *out = NULL;
  if (!value || l->b.status != KILN_OK) {
    return NULL;
  }
  keep_first_error(l, kiln_tir_substitute_expr(l->b.arena, count, map, value, &out));
  if (out && n->num_retargets > 0) {
    retargeter_t r;
    kiln_tir_mutator_initialize(&r.mutator, l->b.arena);
    r.mutator.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = retarget_load;
    r.nest = n;
    const kiln_tir_expr_t *moved = NULL;
    keep_first_error(l, kiln_tir_mutator_mutate_expr(&r.mutator, out, &moved));
    out = moved;
  }
  return out;
}

/* The store target of `n`: the output at the axes, or the region buffer at
 * the offsets. */
static const kiln_tir_buffer_t *target(const nest_t *n, const kiln_tir_expr_t **indices) {
  const kiln_te_stage_t *st = n->stage;
  for (int d = 0; d < st->op->num_axes; ++d) {
    indices[d] = n->attach ? n->offsets[d] : n->values[index_of(st, st->op->axes[d])];
  }
  return n->attach ? n->attach->buffer : st->output->buffer;
}

/* A rank-0 tensor is accessed at the flat index 0. */
static int rank0_index(lowerer_t *l, int num_axes, const kiln_tir_expr_t **indices) {
  if (num_axes > 0) {
    return num_axes;
  }
  indices[0] = kiln_tir_b_i32(&l->b, 0);
  return 1;
}

static const kiln_tir_stmt_t *store_at(lowerer_t *l, const nest_t *n,
                                       const kiln_tir_expr_t *value) {
  const kiln_tir_expr_t *indices[KILN_TIR_MAX_DIMS];
  const kiln_tir_buffer_t *buffer = target(n, indices);
  int count = rank0_index(l, n->stage->op->num_axes, indices);
  return kiln_tir_b_store(&l->b, buffer, substitute_roots(l, n, value), count, indices);
}

static const kiln_tir_expr_t *combine(lowerer_t *l, kiln_te_reducer_t reducer,
                                      const kiln_tir_expr_t *acc, const kiln_tir_expr_t *x) {
  kiln_tir_expr_kind_t kind = reducer == KILN_TE_REDUCE_SUM   ? KILN_TIR_EXPR_ADD
                              : reducer == KILN_TE_REDUCE_MAX ? KILN_TIR_EXPR_MAX
                                                              : KILN_TIR_EXPR_MIN;
  return kiln_tir_b_bin(&l->b, kind, acc, x);
}

/* ---- region inference for compute_at ---- */

typedef struct load_collector_t {
  kiln_tir_visitor_t visitor; /* first */
  const kiln_tir_buffer_t *buffer;
  int count; /* may exceed the array: then the region is the whole tensor */
  const kiln_tir_buffer_load_t *loads[16];
} load_collector_t;

static kiln_status_t collect_load(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  load_collector_t *c = (load_collector_t *)self;
  const kiln_tir_buffer_load_t *load = (const kiln_tir_buffer_load_t *)expr;
  if (load->buffer == c->buffer) {
    if (c->count < 16) {
      c->loads[c->count] = load;
    }
    c->count++;
  }
  return kiln_tir_visitor_expr_children(self, expr);
}

static int inner_leaf(const nest_t *n, int from, const kiln_tir_expr_t *expr) {
  for (int k = from; k < n->stage->num_leaves; ++k) {
    if (n->loop_vars[k] && expr == &n->loop_vars[k]->base) {
      return k;
    }
  }
  return -1;
}

static int mentions_inner(const nest_t *n, int from, const kiln_tir_expr_t *expr) {
  return kiln_tir_expr_uses_vars(expr, n->stage->num_leaves - from, n->loop_vars + from);
}

static int64_t floordiv_i64(int64_t a, int64_t c) {
  return a / c - (a % c != 0 && a < 0);
}

/* Adds coeff * [lo, hi] to the interval [*out_lo, *out_hi]. */
static void add_scaled_interval(int64_t coeff, int64_t lo, int64_t hi, int64_t *out_lo,
                                int64_t *out_hi) {
  int64_t a = coeff * lo, b = coeff * hi;
  *out_lo += a < b ? a : b;
  *out_hi += a < b ? b : a;
}

static int split_index(const nest_t *n, int from, const kiln_tir_expr_t *e,
                       kiln_tir_linear_t *out_symbolic, int64_t *out_lo, int64_t *out_hi);

/* A term coeff * floordiv(x, c) or coeff * floormod(x, c) (c > 0 constant)
 * whose x splits into outer terms that c divides plus an inner interval
 * [lo, hi]: floordiv adds coeff * (the outer terms / c) and coeff *
 * [lo // c, hi // c]; floormod adds coeff * [lo % c, hi % c] when lo and hi
 * share a quotient, else coeff * [0, c - 1] (the NCHWc data chunk
 * floordiv(ic_outer * 16 + ic_inner, 16) is the one chunk ic_outer). 0:
 * another form. */
static int split_div_term(const nest_t *n, int from, const kiln_tir_linear_term_t *term,
                          kiln_tir_linear_t *symbolic, int64_t *out_lo, int64_t *out_hi) {
  kiln_tir_expr_kind_t kind = term->atom->kind;
  const kiln_tir_binary_t *bin = (const kiln_tir_binary_t *)term->atom;
  int64_t c = 0, lo = 0, hi = 0;
  kiln_tir_linear_t x;
  if ((kind != KILN_TIR_EXPR_FLOOR_DIV && kind != KILN_TIR_EXPR_FLOOR_MOD) ||
      !kiln_tir_expr_as_int(bin->b, &c) || c <= 0 || !split_index(n, from, bin->a, &x, &lo, &hi)) {
    return 0;
  }
  for (int t = 0; t < x.count; ++t) {
    if (x.terms[t].coeff % c != 0) {
      return 0;
    }
  }
  if (kind == KILN_TIR_EXPR_FLOOR_MOD) {
    int64_t q = floordiv_i64(lo, c);
    int one = q == floordiv_i64(hi, c);
    add_scaled_interval(term->coeff, one ? lo - q * c : 0, one ? hi - q * c : c - 1, out_lo,
                        out_hi);
    return 1;
  }
  for (int t = 0; t < x.count; ++t) {
    x.terms[t].coeff = x.terms[t].coeff / c * term->coeff;
  }
  x.constant = 0;
  add_scaled_interval(term->coeff, floordiv_i64(lo, c), floordiv_i64(hi, c), out_lo, out_hi);
  return kiln_tir_linear_add_scaled(symbolic, &x, 1);
}

/* Splits index `e` into a symbolic part (terms of the outer loops) and the
 * interval of the inner loops' part plus the constant. 0: not linear. */
static int split_index(const nest_t *n, int from, const kiln_tir_expr_t *e,
                       kiln_tir_linear_t *out_symbolic, int64_t *out_lo, int64_t *out_hi) {
  kiln_tir_linear_t lin;
  if (!kiln_tir_linear_from_expr(e, &lin)) {
    return 0;
  }
  *out_symbolic = lin;
  out_symbolic->count = 0;
  out_symbolic->constant = 0;
  *out_lo = *out_hi = lin.constant;
  for (int t = 0; t < lin.count; ++t) {
    int k = inner_leaf(n, from, lin.terms[t].atom);
    if (k >= 0) {
      int idx = index_of(n->stage, n->stage->leaf_iter_vars[k]);
      add_scaled_interval(lin.terms[t].coeff, n->ranges[idx].min,
                          n->ranges[idx].min + n->ranges[idx].extent - 1, out_lo, out_hi);
    } else if (!mentions_inner(n, from, lin.terms[t].atom)) {
      if (out_symbolic->count == KILN_TIR_LINEAR_MAX_TERMS) {
        return 0; /* split_div_term's terms filled it */
      }
      out_symbolic->terms[out_symbolic->count++] = lin.terms[t];
    } else if (!split_div_term(n, from, &lin.terms[t], out_symbolic, out_lo, out_hi)) {
      return 0;
    }
  }
  return 1;
}

/* The region of `producer` that consumer `n`'s loops inside leaf `leaf`
 * read in `body` (roots substituted): per dim, base (outer loops) + [lo, hi]
 * when every read agrees on the outer part, else the whole dim. */
static kiln_status_t infer_region(lowerer_t *l, const nest_t *n, int leaf,
                                  const kiln_tir_expr_t *body, attach_t *a) {
  const kiln_te_tensor_t *t = a->stage->output;
  load_collector_t c;
  kiln_tir_visitor_initialize(&c.visitor);
  c.visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = collect_load;
  c.buffer = t->buffer;
  c.count = 0;
  KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(&c.visitor, body));
  if (c.count == 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "compute_at: stage %s reads %s only through stages that are not inlined",
                       n->stage->op->name, t->name);
  }
  for (int d = 0; d < t->ndim; ++d) {
    a->base[d] = NULL;
    a->extent[d] = t->shape[d];
    int ok = c.count > 0 && c.count <= 16;
    kiln_tir_linear_t sym, first;
    int64_t lo = 0, hi = 0;
    const kiln_tir_expr_t *sym_expr = NULL, *first_expr = NULL;
    for (int i = 0; ok && i < c.count; ++i) {
      int64_t l0 = 0, h0 = 0;
      ok = split_index(n, leaf + 1, c.loads[i]->indices[d], &sym, &l0, &h0);
      if (!ok) {
        break;
      }
      KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(l->b.arena, &sym, &sym_expr));
      if (i == 0) {
        first = sym;
        first_expr = sym_expr;
        lo = l0;
        hi = h0;
      } else {
        ok = kiln_tir_expr_equal(sym_expr, first_expr);
        lo = l0 < lo ? l0 : lo;
        hi = h0 > hi ? h0 : hi;
      }
    }
    if (!ok || hi - lo + 1 >= t->shape[d]) {
      continue; /* the whole dim */
    }
    first.constant = lo;
    KILN_RETURN_IF_ERROR(kiln_tir_linear_to_expr(l->b.arena, &first, &a->base[d]));
    a->extent[d] = hi - lo + 1;
  }
  return kiln_tir_buffer_create_const(l->b.arena, t->name, t->dtype, t->ndim, a->extent,
                                      &a->buffer);
}

/* ---- one stage ---- */

static int stage_index(const kiln_te_schedule_t *s, const kiln_te_stage_t *st) {
  for (int i = 0; i < s->num_stages; ++i) {
    if (s->stages[i] == st) {
      return i;
    }
  }
  return -1;
}

static kiln_status_t lower_stage(lowerer_t *l, const kiln_te_stage_t *st, const attach_t *attach,
                                 const kiln_tir_stmt_t **out);

/* Lowers the stages attached to `n`'s stage, each over its region. */
static kiln_status_t lower_attached(lowerer_t *l, nest_t *n, const kiln_tir_expr_t *body,
                                    attachments_t *a) {
  const kiln_te_schedule_t *s = l->schedule;
  const kiln_tir_expr_t *sub = substitute_roots(l, n, body);
  KILN_RETURN_IF_ERROR(kiln_tir_builder_finish(&l->b));
  a->count = 0;
  for (int i = 0; i < s->num_stages; ++i) {
    const kiln_te_stage_t *p = s->stages[i];
    if (p->attach_stage != n->stage) {
      continue;
    }
    int leaf = -1;
    for (int k = 0; k < n->stage->num_leaves; ++k) {
      leaf = n->stage->leaf_iter_vars[k] == p->attach_ivar ? k : leaf;
    }
    if (leaf < 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "compute_at: stage %s is attached at axis %s of stage %s, which is no "
                         "longer a leaf",
                         p->op->name, p->attach_ivar->var->name, n->stage->op->name);
    }
    attach_t *at = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_arena_allocate_zeroed(s->arena, sizeof(*at), _Alignof(attach_t), (void **)&at));
    at->stage = p;
    KILN_RETURN_IF_ERROR(infer_region(l, n, leaf, sub, at));
    a->leaf[a->count] = leaf;
    a->attach[a->count] = at;
    KILN_RETURN_IF_ERROR(lower_stage(l, p, at, &a->stmt[a->count]));
    a->count++;
    n->retargets[n->num_retargets++] = at;
  }
  return KILN_OK;
}

static kiln_status_t new_nest(lowerer_t *l, const kiln_te_stage_t *st, const attach_t *attach,
                              nest_t **out) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(l->schedule->arena, sizeof(**out),
                                                  _Alignof(nest_t), (void **)out));
  (*out)->stage = st;
  (*out)->attach = attach;
  if (attach) {
    /* The accumulator's loads of its own output move to the region too. */
    (*out)->retargets[(*out)->num_retargets++] = attach;
  }
  return infer_ranges(st, attach ? attach->extent : NULL, (*out)->ranges);
}

static kiln_status_t lower_reduction(lowerer_t *l, nest_t *n, const kiln_tir_expr_t *body,
                                     const attachments_t *attached, const kiln_tir_stmt_t **out) {
  const kiln_te_stage_t *st = n->stage;
  int begin = 0;
  while (begin < st->num_leaves && st->leaf_iter_vars[begin]->kind != KILN_TE_ITER_REDUCE) {
    ++begin;
  }
  /* The accumulation, in the full nest; the accumulator is read at the root
   * axes, which substitute_roots rewrites like the body. */
  const kiln_tir_expr_t *indices[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < st->op->num_axes; ++d) {
    indices[d] = &st->op->axes[d]->var->base;
  }
  const kiln_tir_expr_t *acc = kiln_tir_b_load(&l->b, st->output->buffer,
                                               rank0_index(l, st->op->num_axes, indices), indices);
  const kiln_tir_stmt_t *update =
      guard(l, n, store_at(l, n, combine(l, st->op->reducer, acc, body)));
  const kiln_tir_stmt_t *main_nest = wrap_loops(l, n, begin, st->num_leaves, attached, update);
  /* The init, over the data-parallel leaves from `begin` on, fresh variables. */
  nest_t *init = NULL;
  KILN_RETURN_IF_ERROR(new_nest(l, st, n->attach, &init));
  for (int k = 0; k < begin; ++k) {
    int idx = index_of(st, st->leaf_iter_vars[k]);
    init->loop_vars[k] = n->loop_vars[k];
    init->values[idx] = kiln_tir_b_v(n->loop_vars[k]);
  }
  bind_leaves(l, init, begin, 1);
  pass_up(l, init);
  const kiln_tir_stmt_t *init_nest = wrap_loops(l, init, begin, st->num_leaves, NULL,
                                                guard(l, init, store_at(l, init, st->op->init)));
  const kiln_tir_stmt_t *pair[] = {init_nest, main_nest};
  *out = wrap_loops(l, n, 0, begin, attached, kiln_tir_b_seq(&l->b, 2, pair));
  return kiln_tir_builder_finish(&l->b);
}

/* An extern op's statement, with the loads of inlined stages replaced. */
static kiln_status_t lower_extern(const lowerer_t *l, const kiln_te_stage_t *st,
                                  const kiln_tir_stmt_t **out) {
  if (l->num_inlined == 0) {
    *out = st->op->extern_body;
    return KILN_OK;
  }
  inliner_t in;
  inliner_initialize(&in, l);
  return kiln_tir_mutator_mutate_stmt(&in.mutator, st->op->extern_body, out);
}

static kiln_status_t lower_stage(lowerer_t *l, const kiln_te_stage_t *st, const attach_t *attach,
                                 const kiln_tir_stmt_t **out) {
  if (st->op->kind == KILN_TE_OP_EXTERN) {
    return lower_extern(l, st, out);
  }
  const kiln_tir_expr_t *body = l->bodies[stage_index(l->schedule, st)];
  nest_t *n = NULL;
  KILN_RETURN_IF_ERROR(new_nest(l, st, attach, &n));
  bind_leaves(l, n, 0, 0);
  pass_up(l, n);
  attachments_t *attached = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(l->schedule->arena, sizeof(*attached),
                                                  _Alignof(attachments_t), (void **)&attached));
  KILN_RETURN_IF_ERROR(lower_attached(l, n, body, attached));
  if (st->op->reducer != KILN_TE_REDUCE_NONE) {
    return lower_reduction(l, n, body, attached, out);
  }
  *out = wrap_loops(l, n, 0, st->num_leaves, attached, guard(l, n, store_at(l, n, body)));
  return kiln_tir_builder_finish(&l->b);
}

kiln_status_t kiln_te_schedule_ops(const kiln_te_schedule_t *schedule,
                                   const kiln_tir_stmt_t **out_stmt) {
  *out_stmt = NULL;
  lowerer_t *l = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(schedule->arena, sizeof(*l), _Alignof(lowerer_t), (void **)&l));
  l->schedule = schedule;
  kiln_tir_builder_initialize(&l->b, schedule->arena);
  for (int i = 0; i < schedule->num_stages; ++i) {
    const kiln_te_stage_t *st = schedule->stages[i];
    if (st->op->kind == KILN_TE_OP_EXTERN) {
      continue;
    }
    KILN_RETURN_IF_ERROR(apply_inline(l, st->op->body, &l->bodies[i]));
    if (st->inlined) {
      l->inlined[l->num_inlined++] = (inline_body_t){st->output->buffer, st->op, l->bodies[i]};
    }
  }
  const kiln_tir_stmt_t *stmts[KILN_TE_MAX_STAGES];
  int count = 0;
  for (int i = 0; i < schedule->num_stages; ++i) {
    const kiln_te_stage_t *st = schedule->stages[i];
    if (!st->inlined && !st->attach_stage) {
      KILN_RETURN_IF_ERROR(lower_stage(l, st, NULL, &stmts[count]));
      ++count;
    }
  }
  if (count == 1) {
    *out_stmt = stmts[0];
    return KILN_OK;
  }
  return kiln_tir_seq_create(schedule->arena, count, stmts, out_stmt);
}

/* ---- lower ---- */

static int in_args(const kiln_te_tensor_t *t, int num_args, const kiln_te_tensor_t *const *args) {
  for (int i = 0; i < num_args; ++i) {
    if (args[i] == t) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t check_args(const kiln_te_schedule_t *s, const char *name, int num_args,
                                const kiln_te_tensor_t *const *args) {
  for (int o = 0; o < s->num_outputs; ++o) {
    if (!in_args(s->outputs[o], num_args, args)) {
      return KILN_STATUS(INVALID_ARGUMENT, "lower %s: output %s is not among the arguments", name,
                         s->outputs[o]->name);
    }
  }
  for (int i = 0; i < s->num_stages; ++i) {
    const kiln_te_stage_t *st = s->stages[i];
    if (st->attach_stage && in_args(st->output, num_args, args)) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "lower %s: %s is computed at a loop of %s (compute_at) and cannot be an "
                         "argument",
                         name, st->output->name, st->attach_stage->op->name);
    }
    for (int k = 0; k < st->op->num_inputs; ++k) {
      const kiln_te_tensor_t *t = st->op->inputs[k];
      if (t->op->kind == KILN_TE_OP_PLACEHOLDER && !in_args(t, num_args, args)) {
        return KILN_STATUS(INVALID_ARGUMENT,
                           "lower %s: placeholder %s (read by %s) is not among the arguments", name,
                           t->name, st->op->name);
      }
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_te_lower(const kiln_te_schedule_t *schedule, const char *name, int num_args,
                            const kiln_te_tensor_t *const *args,
                            const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (num_args > KILN_TE_MAX_STAGES * 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "lower %s: %d arguments, at most %d", name, num_args,
                       KILN_TE_MAX_STAGES * 2);
  }
  KILN_RETURN_IF_ERROR(check_args(schedule, name, num_args, args));
  const kiln_tir_stmt_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_ops(schedule, &body));
  for (int i = schedule->num_stages - 1; i >= 0; --i) {
    const kiln_te_stage_t *st = schedule->stages[i];
    if (st->inlined || st->attach_stage) {
      continue;
    }
    int extern_op = st->op->kind == KILN_TE_OP_EXTERN;
    for (int k = 0; k < (extern_op ? st->op->num_outputs : 1); ++k) {
      const kiln_te_tensor_t *t = extern_op ? st->op->outputs[k] : st->output;
      if (!in_args(t, num_args, args)) {
        KILN_RETURN_IF_ERROR(kiln_tir_allocate_create(schedule->arena, t->buffer, st->scope,
                                                      KILN_TIR_INIT_NONE, body, &body));
      }
    }
  }
  const kiln_tir_buffer_t *params[KILN_TE_MAX_STAGES * 2];
  for (int i = 0; i < num_args; ++i) {
    params[i] = args[i]->buffer;
  }
  const kiln_tir_prim_func_t *func = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tir_prim_func_create(schedule->arena, name, num_args, params, body, 0, NULL, &func));
  if (!schedule->probe) { /* a probe's guards must stay whatever its extents divide */
    KILN_RETURN_IF_ERROR(kiln_tir_simplify_prim_func(schedule->arena, func, &func));
  }
  KILN_RETURN_IF_ERROR(kiln_tir_verify_prim_func(kiln_arena_allocator(schedule->arena), func));
  *out_func = func;
  return KILN_OK;
}
