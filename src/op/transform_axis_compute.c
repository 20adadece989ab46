/*
 * Compute rules of cumsum and topk (transform_axis.c is the reference).
 *
 * Both are extern ops: a scan carries a running value from one element to
 * the next and a selection compares every pair along the line, neither of
 * which one expression per element can say. Each is a serial nest over the
 * dims other than the axis, with a line loop inside, written with the
 * builder.
 *
 * cumsum walks the line forward or (reverse) backward keeping its running
 * sums in the extern's output, float64 (floats) or int64 (integers,
 * wrapping), each from the one before: the sum before (exclusive) or after
 * adding each element. te rejects an extern that writes a buffer of its
 * own, so the running value lives there; a T_cumsum stage then casts it to
 * the dtype once per element (rounding a float once, wrapping a narrower
 * integer as the reference's uint64 sum truncated does), or the extern is
 * T_cumsum itself for float64 and int64.
 *
 * topk is the reference's selection, so ties and NaN agree by construction:
 * k times, the first element (in the total order: NaN above every number,
 * then value, larger first when `largest`, then the smaller index) that
 * comes after the previous pick. The picks live in the indices output (te
 * rejects an extern that writes a buffer of its own): the one being chosen
 * (-1 until found) at j and the previous at j - 1. Loads use max(pick, 0)
 * and max(j - 1, 0), since And, Or and Select evaluate both sides and a
 * load at -1 would be out of range; the conditions mask those cases.
 */
#include <stdio.h>

#include "op/compute.h"
#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/transform_common.h"

static bool dtype_is_float(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64 ||
         dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16;
}

/* The dims of `data` other than `axis`, as a nest, and the index of the
 * data at line position `x` (int32). */
typedef struct line_t {
  const kiln_te_tensor_t *data;
  int axis;
  int64_t shape[KILN_MAX_RANK];
  kiln_gather_nest_t nest;
} line_t;

static void line_begin(kiln_tir_builder_t *b, const kiln_te_tensor_t *data, int axis,
                       line_t *out_line) {
  out_line->data = data;
  out_line->axis = axis;
  for (int d = 0, k = 0; d < data->ndim; ++d) {
    if (d != axis) {
      out_line->shape[k++] = data->shape[d];
    }
  }
  kiln_gather_nest_begin(b, "i", data->ndim - 1, out_line->shape, &out_line->nest);
}

static void line_at(const line_t *line, const kiln_tir_expr_t *x, const kiln_tir_expr_t **out_at) {
  for (int d = 0, k = 0; d < line->data->ndim; ++d) {
    out_at[d] = d == line->axis ? x : line->nest.index[k++];
  }
}

/* ---- cumsum ---- */

typedef struct cumsum_t {
  const kiln_compute_args_t *args;
  int axis; /* -1: read from input 1 at run time (dyn.cumsum) */
  bool exclusive;
  bool reverse;
} cumsum_t;

/* Running sums in the output (the wide dtype): element i of the walk is
 * the sum of elements 0..i (inclusive) or 0..i-1 (exclusive) of the walk,
 * from element i-1's sum; the first element's guarded by an IfThenElse so
 * that no load reaches before the line. */
static const kiln_tir_stmt_t *cumsum_extern(kiln_tir_builder_t *b,
                                            const kiln_tir_buffer_t *const *inputs,
                                            const kiln_tir_buffer_t *const *outputs, void *user) {
  const cumsum_t *c = user;
  const kiln_te_tensor_t *data = c->args->inputs[0];
  const kiln_tir_buffer_t *acc = outputs[0];
  line_t line;
  line_begin(b, data, c->axis, &line);
  int64_t extent = data->shape[c->axis];
  const kiln_tir_var_t *step = kiln_tir_b_var(b, "x", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *i = kiln_tir_b_v(step);
  const kiln_tir_expr_t *one = kiln_tir_b_i32(b, 1);
  /* The line position of walk step i and of step i - 1. */
  const kiln_tir_expr_t *x = i;
  const kiln_tir_expr_t *x_prev = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, i, one);
  if (c->reverse) {
    x = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_i32(b, extent - 1), i);
    x_prev = kiln_tir_b_add(b, x, one);
  }
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *at_prev[KILN_TIR_MAX_DIMS];
  line_at(&line, x, at);
  line_at(&line, x_prev, at_prev);
  int n = data->ndim;
  const kiln_tir_expr_t *value =
      kiln_tir_b_cast(b, kiln_tir_scalar(acc->dtype), kiln_tir_b_load(b, inputs[0], n, at));
  const kiln_tir_expr_t *value_prev =
      kiln_tir_b_cast(b, kiln_tir_scalar(acc->dtype), kiln_tir_b_load(b, inputs[0], n, at_prev));
  const kiln_tir_expr_t *sum_prev = kiln_tir_b_load(b, acc, n, at_prev);
  const kiln_tir_expr_t *zero = dtype_is_float(acc->dtype) ? kiln_tir_b_float(b, acc->dtype, 0.0)
                                                           : kiln_tir_b_int(b, acc->dtype, 0);
  const kiln_tir_expr_t *first = c->exclusive ? zero : value;
  const kiln_tir_expr_t *next = kiln_tir_b_add(b, sum_prev, c->exclusive ? value_prev : value);
  const kiln_tir_stmt_t *body =
      kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, i, kiln_tir_b_i32(b, 0)),
                    kiln_tir_b_store(b, acc, first, n, at), kiln_tir_b_store(b, acc, next, n, at));
  const kiln_tir_stmt_t *walk = kiln_tir_b_for(
      b, step, kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, extent), KILN_TIR_FOR_SERIAL, body);
  return kiln_gather_nest_end(b, &line.nest, walk);
}

static const kiln_tir_expr_t *cast_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const kiln_te_tensor_t *const *pair = user; /* {source, the output's dtype as a tensor} */
  const kiln_tir_expr_t *x = kiln_te_read(b, pair[0], pair[0]->ndim, indices);
  return kiln_tir_b_cast(b, kiln_tir_scalar(pair[1]->dtype), x);
}

/* The walk along the axis input 1 holds at run time (negative counting
 * from the rank): one walk per axis, chosen by an if chain, under an
 * assertion that the axis is in range. */
static const kiln_tir_stmt_t *cumsum_any_axis(kiln_tir_builder_t *b,
                                              const kiln_tir_buffer_t *const *inputs,
                                              const kiln_tir_buffer_t *const *outputs, void *user) {
  cumsum_t c = *(const cumsum_t *)user;
  int rank = c.args->inputs[0]->ndim;
  const kiln_tir_buffer_t *axis_buffer = inputs[1]; /* one value: one index (rank 0 too) */
  const kiln_tir_expr_t *zeros[1] = {kiln_tir_b_i32(b, 0)};
  const kiln_tir_expr_t *axis = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64),
                                                kiln_tir_b_load(b, axis_buffer, 1, zeros));
  const kiln_tir_expr_t *negative =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, axis, kiln_tir_b_int(b, KILN_DTYPE_INT64, 0));
  axis = kiln_tir_b_select(
      b, negative, kiln_tir_b_add(b, axis, kiln_tir_b_int(b, KILN_DTYPE_INT64, rank)), axis);
  const kiln_tir_stmt_t *chain = NULL;
  for (int d = rank - 1; d >= 0; --d) {
    c.axis = d;
    const kiln_tir_stmt_t *walk = cumsum_extern(b, inputs, outputs, &c);
    chain = chain ? kiln_tir_b_if(b,
                                  kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, axis,
                                                 kiln_tir_b_int(b, KILN_DTYPE_INT64, d)),
                                  walk, chain)
                  : walk;
  }
  const kiln_tir_expr_t *in_range = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_AND,
      kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, axis, kiln_tir_b_int(b, KILN_DTYPE_INT64, 0)),
      kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, axis, kiln_tir_b_int(b, KILN_DTYPE_INT64, rank)));
  char message[128];
  snprintf(message, sizeof(message), "%s: axis is out of range for rank %d", c.args->op->name,
           rank);
  return kiln_tir_b_assert(b, in_range, message, chain);
}

/* The running sums (an extern walking c's axis, or any axis), cast to the
 * data's dtype when they are wider. */
static kiln_status_t cumsum_compute(const kiln_compute_args_t *args, cumsum_t *c,
                                    kiln_compute_result_t *out_result) {
  const kiln_te_tensor_t *data = args->inputs[0];
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  kiln_dtype_t wide = dtype_is_float(data->dtype) ? KILN_DTYPE_FLOAT64 : KILN_DTYPE_INT64;
  char base[64];
  char name[80];
  kiln_compute_tensor_name(args->op, base, sizeof(base));
  snprintf(name, sizeof(name), "%s%s", base, wide == data->dtype ? "" : "_acc");
  kiln_te_extern_output_t output = {name, out->ndim, out->shape, wide};
  out_result->num_outputs = 1;
  const kiln_te_tensor_t *sums = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_extern(args->arena, name, 1, &output, c->axis < 0 ? 2 : 1,
                                      args->inputs, c->axis < 0 ? cumsum_any_axis : cumsum_extern,
                                      c, &sums));
  if (wide == data->dtype) {
    out_result->outputs[0] = sums;
    return KILN_OK;
  }
  const kiln_te_tensor_t *pair[2] = {sums, data};
  return kiln_te_compute(args->arena, base, out->ndim, out->shape, 1, &sums, cast_body,
                         (void *)pair, &out_result->outputs[0]);
}

kiln_status_t kiln_compute_cumsum(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  const kiln_cumsum_attrs_t *attrs = args->attrs;
  const kiln_te_tensor_t *data = args->inputs[0];
  kiln_tensor_type_t type = {.dtype = data->dtype, .ndim = data->ndim, .shape = data->shape};
  cumsum_t c = {args, 0, attrs->exclusive, attrs->reverse};
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &type, 0, &c.axis));
  return cumsum_compute(args, &c, out_result);
}

kiln_status_t kiln_compute_cumsum_any_axis(const kiln_compute_args_t *args, bool exclusive,
                                           bool reverse, kiln_compute_result_t *out_result) {
  if (args->num_inputs != 2 || args->inputs[0]->ndim < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected data of rank >= 1 and an axis",
                       args->op->name);
  }
  cumsum_t c = {args, -1, exclusive, reverse};
  return cumsum_compute(args, &c, out_result);
}

/* ---- topk ---- */

typedef struct topk_t {
  const kiln_compute_args_t *args;
  int axis;
} topk_t;

/* x > y in the total order (NaN above every number, equal to NaN). */
static const kiln_tir_expr_t *above(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                    const kiln_tir_expr_t *y, bool is_float) {
  const kiln_tir_expr_t *gt = kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, y);
  if (!is_float) {
    return gt;
  }
  const kiln_tir_expr_t *x_nan = kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, x, x);
  const kiln_tir_expr_t *y_nan = kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, y, y);
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, gt,
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, x_nan, kiln_tir_b_not(b, y_nan)));
}

/* Whether line element a comes before element b in the output order. */
static const kiln_tir_expr_t *before(kiln_tir_builder_t *b, const topk_t *t, const line_t *line,
                                     const kiln_tir_buffer_t *in, const kiln_tir_expr_t *a,
                                     const kiln_tir_expr_t *c) {
  const kiln_topk_attrs_t *attrs = t->args->attrs;
  bool is_float = dtype_is_float(line->data->dtype);
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  line_at(line, a, at);
  const kiln_tir_expr_t *x = kiln_tir_b_load(b, in, line->data->ndim, at);
  line_at(line, c, at);
  const kiln_tir_expr_t *y = kiln_tir_b_load(b, in, line->data->ndim, at);
  const kiln_tir_expr_t *x_above = above(b, x, y, is_float);
  const kiln_tir_expr_t *y_above = above(b, y, x, is_float);
  const kiln_tir_expr_t *equal =
      kiln_tir_b_not(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, x_above, y_above));
  const kiln_tir_expr_t *wins = attrs->largest ? x_above : y_above;
  return kiln_tir_b_bin(
      b, KILN_TIR_EXPR_OR, wins,
      kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, equal, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, a, c)));
}

/* Picks live in the indices output: the one being chosen at position j
 * (-1 until the scan finds one) and the previous one at j - 1. */
static const kiln_tir_stmt_t *topk_extern(kiln_tir_builder_t *b,
                                          const kiln_tir_buffer_t *const *inputs,
                                          const kiln_tir_buffer_t *const *outputs, void *user) {
  const topk_t *t = user;
  const kiln_topk_attrs_t *attrs = t->args->attrs;
  const kiln_te_tensor_t *data = t->args->inputs[0];
  int n = data->ndim;
  line_t line;
  line_begin(b, data, t->axis, &line);
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  const kiln_tir_var_t *jv = kiln_tir_b_var(b, "j", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *j = kiln_tir_b_v(jv);
  const kiln_tir_expr_t *at_j[KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *at_prev[KILN_TIR_MAX_DIMS];
  line_at(&line, j, at_j);
  line_at(&line,
          kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX,
                         kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, j, kiln_tir_b_i32(b, 1)), zero),
          at_prev);
  const kiln_tir_dtype_t i32 = kiln_tir_scalar(KILN_DTYPE_INT32);
  const kiln_tir_expr_t *best = kiln_tir_b_cast(b, i32, kiln_tir_b_load(b, outputs[1], n, at_j));
  const kiln_tir_expr_t *previous =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX,
                     kiln_tir_b_cast(b, i32, kiln_tir_b_load(b, outputs[1], n, at_prev)), zero);
  const kiln_tir_expr_t *safe_best = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, best, zero);
  /* The scan for pick j. */
  const kiln_tir_var_t *xv = kiln_tir_b_var(b, "x", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *x = kiln_tir_b_v(xv);
  const kiln_tir_expr_t *after =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, j, zero),
                     before(b, t, &line, inputs[0], previous, x));
  const kiln_tir_expr_t *better =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, best, zero),
                     before(b, t, &line, inputs[0], x, safe_best));
  const kiln_tir_dtype_t i64 = kiln_tir_scalar(KILN_DTYPE_INT64);
  const kiln_tir_stmt_t *scan = kiln_tir_b_for(
      b, xv, zero, kiln_tir_b_i32(b, data->shape[t->axis]), KILN_TIR_FOR_SERIAL,
      kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, after, better),
                    kiln_tir_b_store(b, outputs[1], kiln_tir_b_cast(b, i64, x), n, at_j), NULL));
  const kiln_tir_expr_t *at_best[KILN_TIR_MAX_DIMS];
  line_at(&line, safe_best, at_best);
  const kiln_tir_stmt_t *pick[3] = {
      kiln_tir_b_store(b, outputs[1], kiln_tir_b_int(b, KILN_DTYPE_INT64, -1), n, at_j),
      scan,
      kiln_tir_b_store(b, outputs[0], kiln_tir_b_load(b, inputs[0], n, at_best), n, at_j),
  };
  const kiln_tir_stmt_t *picks = kiln_tir_b_for(b, jv, zero, kiln_tir_b_i32(b, attrs->k),
                                                KILN_TIR_FOR_SERIAL, kiln_tir_b_seq(b, 3, pick));
  return kiln_gather_nest_end(b, &line.nest, picks);
}

kiln_status_t kiln_compute_topk(const kiln_compute_args_t *args,
                                kiln_compute_result_t *out_result) {
  const kiln_topk_attrs_t *attrs = args->attrs;
  const kiln_te_tensor_t *data = args->inputs[0];
  kiln_tensor_type_t type = {.dtype = data->dtype, .ndim = data->ndim, .shape = data->shape};
  topk_t t = {args, 0};
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &type, 0, &t.axis));
  if (attrs->k < 1) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: k is %lld; the loop IR has no empty tensors",
                       args->op->name, (long long)attrs->k);
  }
  const kiln_tensor_type_t *values = NULL, *indices = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &values));
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 1, &indices));
  char base[64];
  char names[2][80];
  kiln_compute_tensor_name(args->op, base, sizeof(base));
  snprintf(names[0], sizeof(names[0]), "%s_values", base);
  snprintf(names[1], sizeof(names[1]), "%s_indices", base);
  kiln_te_extern_output_t outputs[2] = {
      {names[0], values->ndim, values->shape, values->dtype},
      {names[1], indices->ndim, indices->shape, indices->dtype},
  };
  out_result->num_outputs = 2;
  return kiln_te_extern(args->arena, base, 2, outputs, 1, args->inputs, topk_extern, &t,
                        out_result->outputs);
}
