/*
 * Compute rules of gather, gather_nd, scatter_elements and scatter_nd
 * (transform_gather.c is the reference), and the loop helpers of
 * gather_compute.h that every extern body of this family set uses.
 *
 * The reference rejects an index outside [-dim, dim) with OUT_OF_RANGE, and
 * a tensor expression cannot fail, so the gathers are two stages: an extern
 * T_<op>_index walks the index tensor, asserts (AssertStmt: the loop IR's
 * only error) that each index is in range, naming the operator, the axis
 * and its size, and stores it wrapped to [0, dim) as int32; then the
 * compute T_<op> reads the data at the checked indices, an ordinary
 * elementwise stage that the default schedule vectorizes and parallelizes
 * (it keeps the extern's output materialized, since an extern reads it).
 * gather_nd's index stage walks the tuples and checks each of the m
 * coordinates against its own dim.
 *
 * The scatters are one extern each, since their updates must be applied in
 * order: copy the data to the output, then walk the indices (or tuples) in
 * row-major order, assert each index, and store the update, or combine it
 * with the element already there ("add", "mul"; bool as or / and, which is
 * what the reference's nonzero store of a sum or product gives). float32
 * add and mul in the loop IR round exactly as the reference's double
 * arithmetic rounded at each store does (a sum or product of two floats is
 * exact in double). Integers wrap in both.
 */
#include <stdio.h>
#include <string.h>

#include "op/compute.h"
#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/transform_common.h"

/* ---- loop helpers (gather_compute.h) ---- */

void kiln_gather_nest_begin(kiln_tir_builder_t *b, const char *prefix, int ndim,
                            const int64_t *shape, kiln_gather_nest_t *out_nest) {
  out_nest->ndim = ndim;
  out_nest->shape = shape;
  for (int d = 0; d < ndim; ++d) {
    char name[32];
    snprintf(name, sizeof(name), "%s%d", prefix, d);
    out_nest->vars[d] = kiln_tir_b_var(b, name, KILN_DTYPE_INT32);
    out_nest->index[d] = kiln_tir_b_v(out_nest->vars[d]);
  }
}

const kiln_tir_stmt_t *kiln_gather_nest_end(kiln_tir_builder_t *b, const kiln_gather_nest_t *nest,
                                            const kiln_tir_stmt_t *body) {
  for (int d = nest->ndim - 1; d >= 0; --d) {
    body = kiln_tir_b_for(b, nest->vars[d], kiln_tir_b_i32(b, 0), kiln_tir_b_i32(b, nest->shape[d]),
                          KILN_TIR_FOR_SERIAL, body);
  }
  return body;
}

const kiln_tir_expr_t *kiln_gather_load(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                        int n, const kiln_tir_expr_t *const *indices) {
  if (n == 0) {
    const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
    return kiln_tir_b_load(b, buffer, 1, &zero);
  }
  return kiln_tir_b_load(b, buffer, n, indices);
}

const kiln_tir_stmt_t *kiln_gather_store(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                         const kiln_tir_expr_t *value, int n,
                                         const kiln_tir_expr_t *const *indices) {
  if (n == 0) {
    const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
    return kiln_tir_b_store(b, buffer, value, 1, &zero);
  }
  return kiln_tir_b_store(b, buffer, value, n, indices);
}

const kiln_tir_stmt_t *kiln_gather_seq2(kiln_tir_builder_t *b, const kiln_tir_stmt_t *first,
                                        const kiln_tir_stmt_t *second) {
  if (!first || !second) {
    return first ? first : second;
  }
  const kiln_tir_stmt_t *stmts[2] = {first, second};
  return kiln_tir_b_seq(b, 2, stmts);
}

const kiln_tir_expr_t *kiln_gather_wrap_index(kiln_tir_builder_t *b, const kiln_tir_expr_t *raw,
                                              int64_t dim) {
  const kiln_tir_expr_t *x = raw;
  if (raw && raw->dtype.base != KILN_DTYPE_INT32) {
    x = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), raw);
  }
  return kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, kiln_tir_b_i32(b, 0)),
                           kiln_tir_b_add(b, x, kiln_tir_b_i32(b, dim)), x);
}

const kiln_tir_stmt_t *kiln_gather_assert_index(kiln_tir_builder_t *b, const kiln_op_t *op,
                                                const kiln_tir_expr_t *raw, int axis, int64_t dim,
                                                const kiln_tir_stmt_t *body) {
  kiln_dtype_t dtype = raw ? raw->dtype.base : KILN_DTYPE_INT64;
  const kiln_tir_expr_t *in_range =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_AND,
                     kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, raw, kiln_tir_b_int(b, dtype, -dim)),
                     kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, raw, kiln_tir_b_int(b, dtype, dim)));
  char message[160];
  snprintf(message, sizeof(message), "%s: an index is out of range for axis %d of size %lld",
           op->name, axis, (long long)dim);
  return kiln_tir_b_assert(b, in_range, message, body);
}

/* ---- shared ---- */

static kiln_tensor_type_t type_of(const kiln_te_tensor_t *t) {
  return (kiln_tensor_type_t){.dtype = t->dtype, .ndim = t->ndim, .shape = t->shape};
}

static const char *stage_name(const kiln_op_t *op, const char *suffix, char *buffer, size_t size) {
  char base[64];
  kiln_compute_tensor_name(op, base, sizeof(base));
  snprintf(buffer, size, "%s%s%s", base, suffix[0] ? "_" : "", suffix);
  return buffer;
}

/* ---- gather ---- */

typedef struct gather_t {
  const kiln_compute_args_t *args;
  int axis;
  const kiln_te_tensor_t *checked; /* T_gather_index */
} gather_t;

/* T_gather_index: every index asserted in range and wrapped, int32. */
static const kiln_tir_stmt_t *gather_index_extern(kiln_tir_builder_t *b,
                                                  const kiln_tir_buffer_t *const *inputs,
                                                  const kiln_tir_buffer_t *const *outputs,
                                                  void *user) {
  const gather_t *g = user;
  const kiln_te_tensor_t *data = g->args->inputs[0];
  const kiln_te_tensor_t *indices = g->args->inputs[1];
  int64_t dim = data->shape[g->axis];
  kiln_gather_nest_t nest;
  kiln_gather_nest_begin(b, "i", indices->ndim, indices->shape, &nest);
  const kiln_tir_expr_t *raw = kiln_gather_load(b, inputs[1], indices->ndim, nest.index);
  const kiln_tir_stmt_t *store = kiln_gather_store(
      b, outputs[0], kiln_gather_wrap_index(b, raw, dim), indices->ndim, nest.index);
  return kiln_gather_nest_end(b, &nest,
                              kiln_gather_assert_index(b, g->args->op, raw, g->axis, dim, store));
}

static const kiln_tir_expr_t *gather_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const gather_t *g = user;
  const kiln_te_tensor_t *data = g->args->inputs[0];
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < data->ndim; ++d) {
    at[d] = indices[d];
  }
  at[g->axis] = kiln_te_read(b, g->checked, g->checked->ndim, indices);
  return kiln_te_read(b, data, data->ndim, at);
}

/* The checked-index extern stage of shape `shape`. */
static kiln_status_t index_stage(const kiln_compute_args_t *args, int ndim, const int64_t *shape,
                                 kiln_te_fextern_fn fn, void *user,
                                 const kiln_te_tensor_t **out_tensor) {
  char name[80];
  kiln_te_extern_output_t output = {stage_name(args->op, "index", name, sizeof(name)), ndim, shape,
                                    KILN_DTYPE_INT32};
  return kiln_te_extern(args->arena, output.name, 1, &output, args->num_inputs, args->inputs, fn,
                        user, out_tensor);
}

kiln_status_t kiln_gather_output_stage(const kiln_compute_args_t *args, kiln_te_fcompute_fn fn,
                                       void *user, const kiln_te_tensor_t *checked,
                                       kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  char name[80];
  const kiln_te_tensor_t *inputs[2] = {args->inputs[0], checked};
  out_result->num_outputs = 1;
  return kiln_te_compute(args->arena, stage_name(args->op, "", name, sizeof(name)), out->ndim,
                         out->shape, 2, inputs, fn, user, &out_result->outputs[0]);
}

kiln_status_t kiln_gather_checked_indices(const kiln_compute_args_t *args, int axis,
                                          const kiln_te_tensor_t **out_checked) {
  gather_t g = {args, axis, NULL};
  const kiln_te_tensor_t *indices = args->inputs[1];
  return index_stage(args, indices->ndim, indices->shape, gather_index_extern, &g, out_checked);
}

kiln_status_t kiln_compute_gather(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  const kiln_gather_attrs_t *attrs = args->attrs;
  kiln_tensor_type_t data = type_of(args->inputs[0]);
  gather_t g = {args, 0, NULL};
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &data, 0, &g.axis));
  const kiln_te_tensor_t *indices = args->inputs[1];
  KILN_RETURN_IF_ERROR(
      index_stage(args, indices->ndim, indices->shape, gather_index_extern, &g, &g.checked));
  return kiln_gather_output_stage(args, gather_body, &g, g.checked, out_result);
}

/* ---- gather_nd ---- */

typedef struct gather_nd_t {
  const kiln_compute_args_t *args;
  int batch_dims;
  int length; /* m: coordinates per tuple */
  const kiln_te_tensor_t *checked;
} gather_nd_t;

/* Asserts and wraps the m coordinates of the tuple at `tuple` (q indices)
 * of `in` (data dims from `begin`) into `out`; or, with `inner` non-NULL,
 * asserts them around `inner`. */
static const kiln_tir_stmt_t *check_tuple(kiln_tir_builder_t *b, const kiln_op_t *op,
                                          const kiln_te_tensor_t *data, const kiln_tir_buffer_t *in,
                                          const kiln_tir_buffer_t *out, int q,
                                          const kiln_tir_expr_t *const *tuple, int length,
                                          int begin, const kiln_tir_stmt_t *inner) {
  const kiln_tir_stmt_t *body = inner;
  for (int k = length - 1; k >= 0; --k) {
    const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS + 1];
    for (int d = 0; d < q; ++d) {
      at[d] = tuple[d];
    }
    at[q] = kiln_tir_b_i32(b, k);
    const kiln_tir_expr_t *raw = kiln_tir_b_load(b, in, q + 1, at);
    int64_t dim = data->shape[begin + k];
    const kiln_tir_stmt_t *store =
        out ? kiln_tir_b_store(b, out, kiln_gather_wrap_index(b, raw, dim), q + 1, at) : NULL;
    body = kiln_gather_assert_index(b, op, raw, begin + k, dim, kiln_gather_seq2(b, store, body));
  }
  return body;
}

static const kiln_tir_stmt_t *gather_nd_index_extern(kiln_tir_builder_t *b,
                                                     const kiln_tir_buffer_t *const *inputs,
                                                     const kiln_tir_buffer_t *const *outputs,
                                                     void *user) {
  const gather_nd_t *g = user;
  const kiln_te_tensor_t *indices = g->args->inputs[1];
  int q = indices->ndim - 1;
  kiln_gather_nest_t nest;
  kiln_gather_nest_begin(b, "i", q, indices->shape, &nest);
  const kiln_tir_stmt_t *body =
      check_tuple(b, g->args->op, g->args->inputs[0], inputs[1], outputs[0], q, nest.index,
                  g->length, g->batch_dims, NULL);
  return kiln_gather_nest_end(b, &nest, body);
}

static const kiln_tir_expr_t *gather_nd_body(kiln_tir_builder_t *b,
                                             const kiln_tir_expr_t *const *indices, void *user) {
  const gather_nd_t *g = user;
  const kiln_te_tensor_t *data = g->args->inputs[0];
  int q = g->checked->ndim - 1;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *tuple[KILN_TIR_MAX_DIMS + 1];
  for (int d = 0; d < q; ++d) {
    tuple[d] = indices[d];
  }
  for (int d = 0; d < data->ndim; ++d) {
    if (d < g->batch_dims) {
      at[d] = indices[d];
    } else if (d < g->batch_dims + g->length) {
      tuple[q] = kiln_tir_b_i32(b, d - g->batch_dims);
      at[d] = kiln_te_read(b, g->checked, q + 1, tuple);
    } else {
      at[d] = indices[q + d - (g->batch_dims + g->length)];
    }
  }
  return kiln_te_read(b, data, data->ndim, at);
}

kiln_status_t kiln_compute_gather_nd(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  const kiln_gather_nd_attrs_t *attrs = args->attrs;
  const kiln_te_tensor_t *indices = args->inputs[1];
  if (indices->ndim < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: indices must have rank >= 1", args->op->name);
  }
  gather_nd_t g = {args, (int)attrs->batch_dims, (int)indices->shape[indices->ndim - 1], NULL};
  KILN_RETURN_IF_ERROR(
      index_stage(args, indices->ndim, indices->shape, gather_nd_index_extern, &g, &g.checked));
  return kiln_gather_output_stage(args, gather_nd_body, &g, g.checked, out_result);
}

/* ---- the scatters ---- */

typedef enum reduction_e { REDUCTION_NONE, REDUCTION_ADD, REDUCTION_MUL } reduction_t;

static kiln_status_t parse_reduction(const kiln_op_t *op, const kiln_scatter_attrs_t *attrs,
                                     reduction_t *out_reduction) {
  static const char *const names[] = {"none", "add", "mul"};
  for (int i = 0; i < 3; ++i) {
    if (attrs->reduction && strcmp(attrs->reduction, names[i]) == 0) {
      *out_reduction = (reduction_t)i;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%s: reduction \"%s\" is not one of none, add, mul",
                     op->name, attrs->reduction ? attrs->reduction : "");
}

typedef struct scatter_t {
  const kiln_compute_args_t *args;
  reduction_t reduction;
  int axis; /* scatter_elements */
} scatter_t;

/* The value stored at an output element: the update, or it combined with
 * the element there. */
static const kiln_tir_expr_t *combine(kiln_tir_builder_t *b, reduction_t reduction,
                                      const kiln_tir_expr_t *current,
                                      const kiln_tir_expr_t *update) {
  if (reduction == REDUCTION_NONE) {
    return update;
  }
  bool add = reduction == REDUCTION_ADD;
  if (update && kiln_tir_dtype_is_bool(update->dtype)) {
    return kiln_tir_b_bin(b, add ? KILN_TIR_EXPR_OR : KILN_TIR_EXPR_AND, current, update);
  }
  return add ? kiln_tir_b_add(b, current, update) : kiln_tir_b_mul(b, current, update);
}

/* The output as a copy of the data. */
static const kiln_tir_stmt_t *copy_data(kiln_tir_builder_t *b, const kiln_te_tensor_t *data,
                                        const kiln_tir_buffer_t *in, const kiln_tir_buffer_t *out) {
  kiln_gather_nest_t nest;
  kiln_gather_nest_begin(b, "c", data->ndim, data->shape, &nest);
  const kiln_tir_expr_t *x = kiln_gather_load(b, in, data->ndim, nest.index);
  return kiln_gather_nest_end(b, &nest, kiln_gather_store(b, out, x, data->ndim, nest.index));
}

static const kiln_tir_stmt_t *scatter_elements_extern(kiln_tir_builder_t *b,
                                                      const kiln_tir_buffer_t *const *inputs,
                                                      const kiln_tir_buffer_t *const *outputs,
                                                      void *user) {
  const scatter_t *s = user;
  const kiln_te_tensor_t *data = s->args->inputs[0];
  const kiln_te_tensor_t *indices = s->args->inputs[1];
  int64_t dim = data->shape[s->axis];
  kiln_gather_nest_t nest;
  kiln_gather_nest_begin(b, "i", indices->ndim, indices->shape, &nest);
  const kiln_tir_expr_t *raw = kiln_gather_load(b, inputs[1], indices->ndim, nest.index);
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < data->ndim; ++d) {
    at[d] = nest.index[d];
  }
  at[s->axis] = kiln_gather_wrap_index(b, raw, dim);
  const kiln_tir_expr_t *update = kiln_gather_load(b, inputs[2], indices->ndim, nest.index);
  const kiln_tir_expr_t *current = kiln_gather_load(b, outputs[0], data->ndim, at);
  const kiln_tir_stmt_t *store =
      kiln_gather_store(b, outputs[0], combine(b, s->reduction, current, update), data->ndim, at);
  const kiln_tir_stmt_t *walk = kiln_gather_nest_end(
      b, &nest, kiln_gather_assert_index(b, s->args->op, raw, s->axis, dim, store));
  return kiln_gather_seq2(b, copy_data(b, data, inputs[0], outputs[0]), walk);
}

static const kiln_tir_stmt_t *scatter_nd_extern(kiln_tir_builder_t *b,
                                                const kiln_tir_buffer_t *const *inputs,
                                                const kiln_tir_buffer_t *const *outputs,
                                                void *user) {
  const scatter_t *s = user;
  const kiln_te_tensor_t *data = s->args->inputs[0];
  const kiln_te_tensor_t *indices = s->args->inputs[1];
  int q = indices->ndim - 1;
  int length = (int)indices->shape[q];
  kiln_gather_nest_t tuples, slice;
  kiln_gather_nest_begin(b, "i", q, indices->shape, &tuples);
  kiln_gather_nest_begin(b, "j", data->ndim - length, data->shape + length, &slice);
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *from[2 * KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *tuple[KILN_TIR_MAX_DIMS + 1];
  for (int d = 0; d < q; ++d) {
    tuple[d] = from[d] = tuples.index[d];
  }
  for (int d = 0; d < data->ndim; ++d) {
    if (d < length) {
      tuple[q] = kiln_tir_b_i32(b, d);
      at[d] =
          kiln_gather_wrap_index(b, kiln_tir_b_load(b, inputs[1], q + 1, tuple), data->shape[d]);
    } else {
      at[d] = from[q + d - length] = slice.index[d - length];
    }
  }
  int update_ndim = q + data->ndim - length;
  const kiln_tir_expr_t *update = kiln_gather_load(b, inputs[2], update_ndim, from);
  const kiln_tir_expr_t *current = kiln_tir_b_load(b, outputs[0], data->ndim, at);
  const kiln_tir_stmt_t *store =
      kiln_tir_b_store(b, outputs[0], combine(b, s->reduction, current, update), data->ndim, at);
  const kiln_tir_stmt_t *checked =
      check_tuple(b, s->args->op, data, inputs[1], NULL, q, tuples.index, length, 0,
                  kiln_gather_nest_end(b, &slice, store));
  return kiln_gather_seq2(b, copy_data(b, data, inputs[0], outputs[0]),
                          kiln_gather_nest_end(b, &tuples, checked));
}

static kiln_status_t compute_scatter(const kiln_compute_args_t *args, kiln_te_fextern_fn fn,
                                     scatter_t *s, kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(parse_reduction(args->op, args->attrs, &s->reduction));
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  char name[80];
  kiln_te_extern_output_t output = {stage_name(args->op, "", name, sizeof(name)), out->ndim,
                                    out->shape, out->dtype};
  out_result->num_outputs = 1;
  return kiln_te_extern(args->arena, output.name, 1, &output, args->num_inputs, args->inputs, fn, s,
                        out_result->outputs);
}

kiln_status_t kiln_compute_scatter_elements(const kiln_compute_args_t *args,
                                            kiln_compute_result_t *out_result) {
  const kiln_scatter_attrs_t *attrs = args->attrs;
  kiln_tensor_type_t data = type_of(args->inputs[0]);
  scatter_t s = {args, REDUCTION_NONE, 0};
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &data, 0, &s.axis));
  return compute_scatter(args, scatter_elements_extern, &s, out_result);
}

kiln_status_t kiln_compute_scatter_nd(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  if (args->inputs[1]->ndim < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: indices must have rank >= 1", args->op->name);
  }
  scatter_t s = {args, REDUCTION_NONE, 0};
  return compute_scatter(args, scatter_nd_extern, &s, out_result);
}
