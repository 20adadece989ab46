/*
 * Compute rules of nn.batch_norm, nn.layer_norm, nn.bias_add, nn.prelu and
 * nn.instance_norm (nn_norm.c).
 *
 * batch_norm, bias_add and prelu are one elementwise stage each, reading
 * their per-channel vectors at the output's index along the (normalized)
 * axis: (x - mean) / sqrt(var + epsilon) * gamma + beta (the multiply left
 * out when scale is False, the add when center is False; batch_norm has the
 * one output its type relation gives, not Relay's tuple), x + bias, and
 * x > 0 ? x : alpha * x.
 *
 * layer_norm and instance_norm normalize a group by its mean and biased
 * variance in two passes, as the reference: a sum reduction
 * T_<op>_sum, then T_<op>_varsum, the sum of (x - sum / n)^2 over the same
 * group, then the output (x - sum / n) * rsqrt(varsum / n + epsilon) *
 * gamma + beta. For layer_norm the group is the line along the axis (the
 * reductions have the data's shape without it, and gamma and beta are
 * indexed by the position on the line); for instance_norm the plane of one
 * batch element and one channel (the reductions have shape (N, C) and
 * reduce every other dim; data of rank 2 gets one reduce axis of extent 1).
 *
 * A layer_norm along the last axis (the usual case) makes both reductions
 * in vector lanes (kiln_nn_line_reduce, nn_line_compute.c) and is
 * scheduled by kiln_schedule_line_x86: one row per parallel task, its
 * partial sums and its output vectorized. Otherwise the default schedule
 * runs the reductions parallel over their data axes and the output fused,
 * parallel and vectorized. The reference kernels
 * handle float32 only, so do these rules (UNIMPLEMENTED otherwise).
 */
#include <stdio.h>

#include "op/nn_common.h"
#include "op/nn_compute.h"

typedef struct norm_t {
  const kiln_compute_args_t *args;
  const kiln_nn_norm_attrs_t *norm; /* NULL for bias_add and prelu */
  const kiln_te_tensor_t *data;
  int ndim;
  int axis;
  int num_reduce; /* reduce axes of the group */
  const kiln_te_iter_var_t *reduce[KILN_TE_MAX_REDUCE_AXES];
  int64_t count; /* elements of one group */
  const kiln_te_tensor_t *sum;
  const kiln_te_tensor_t *varsum;
} norm_t;

static const kiln_tir_expr_t *vector_at(kiln_tir_builder_t *b, const norm_t *n, int input,
                                        const kiln_tir_expr_t *c) {
  return kiln_te_read(b, n->args->inputs[input], 1, &c);
}

/* ---- one stage per element: batch_norm, bias_add, prelu ---- */

static const kiln_tir_expr_t *channel_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const norm_t *n = user;
  const kiln_tir_expr_t *x = kiln_te_read(b, n->data, n->ndim, indices);
  const kiln_tir_expr_t *c = indices[n->axis];
  if (n->args->op->id == KILN_OP_BIAS_ADD) {
    return kiln_tir_b_add(b, x, vector_at(b, n, 1, c));
  }
  if (n->args->op->id == KILN_OP_PRELU) {
    const kiln_tir_expr_t *positive =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, x, kiln_tir_b_float(b, n->data->dtype, 0.0));
    return kiln_tir_b_select(b, positive, x, kiln_tir_b_mul(b, vector_at(b, n, 1, c), x));
  }
  const kiln_tir_expr_t *var = kiln_tir_b_add(
      b, vector_at(b, n, 4, c), kiln_tir_b_float(b, n->data->dtype, n->norm->epsilon));
  const kiln_tir_expr_t *y = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_DIV, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, vector_at(b, n, 3, c)),
      kiln_nn_c_call1(b, KILN_TIR_INTRINSIC_SQRT, var));
  if (n->norm->scale) {
    y = kiln_tir_b_mul(b, y, vector_at(b, n, 1, c));
  }
  return n->norm->center ? kiln_tir_b_add(b, y, vector_at(b, n, 2, c)) : y;
}

/* ---- groups: layer_norm and instance_norm ---- */

/* The data indices of the group element at the reduced tensor's `indices`
 * and the reduce axes. */
static void group_indices(const norm_t *n, const kiln_tir_expr_t *const *indices,
                          const kiln_tir_expr_t **out) {
  if (n->args->op->id == KILN_OP_LAYER_NORM) {
    kiln_nn_c_insert_index(n->ndim - 1, indices, n->axis, kiln_tir_b_v(n->reduce[0]->var), out);
    return;
  }
  for (int d = 0, r = 0; d < n->ndim; ++d) {
    out[d] = d == 0 ? indices[0] : d == n->axis ? indices[1] : kiln_tir_b_v(n->reduce[r++]->var);
  }
}

/* The reduced tensor's indices for data `indices`. */
static void reduced_indices(const norm_t *n, const kiln_tir_expr_t *const *indices,
                            const kiln_tir_expr_t **out) {
  if (n->args->op->id == KILN_OP_LAYER_NORM) {
    kiln_nn_c_replace_index(n->ndim, indices, n->axis, NULL, out);
    return;
  }
  out[0] = indices[0];
  out[1] = indices[n->axis];
}

static int reduced_ndim(const norm_t *n) {
  return n->args->op->id == KILN_OP_LAYER_NORM ? n->ndim - 1 : 2;
}

/* sum / count at reduced `at`. */
static const kiln_tir_expr_t *group_mean(kiln_tir_builder_t *b, const norm_t *n,
                                         const kiln_te_tensor_t *sum,
                                         const kiln_tir_expr_t *const *at) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, kiln_te_read(b, sum, reduced_ndim(n), at),
                        kiln_tir_b_float(b, n->data->dtype, (double)n->count));
}

static const kiln_tir_expr_t *sum_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const norm_t *n = user;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  group_indices(n, indices, at);
  return kiln_te_read(b, n->data, n->ndim, at);
}

static const kiln_tir_expr_t *varsum_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const norm_t *n = user;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  group_indices(n, indices, at);
  const kiln_tir_expr_t *d =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_te_read(b, n->data, n->ndim, at),
                     group_mean(b, n, n->sum, indices));
  return kiln_tir_b_mul(b, d, d);
}

static const kiln_tir_expr_t *group_out_body(kiln_tir_builder_t *b,
                                             const kiln_tir_expr_t *const *indices, void *user) {
  const norm_t *n = user;
  kiln_dtype_t dtype = n->data->dtype;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  reduced_indices(n, indices, at);
  const kiln_tir_expr_t *variance = group_mean(b, n, n->varsum, at);
  const kiln_tir_expr_t *inv =
      kiln_nn_c_call1(b, KILN_TIR_INTRINSIC_RSQRT,
                      kiln_tir_b_add(b, variance, kiln_tir_b_float(b, dtype, n->norm->epsilon)));
  const kiln_tir_expr_t *x = kiln_te_read(b, n->data, n->ndim, indices);
  const kiln_tir_expr_t *y =
      kiln_tir_b_mul(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, group_mean(b, n, n->sum, at)), inv);
  const kiln_tir_expr_t *c = indices[n->axis];
  if (n->norm->scale) {
    y = kiln_tir_b_mul(b, y, vector_at(b, n, 1, c));
  }
  return n->norm->center ? kiln_tir_b_add(b, y, vector_at(b, n, 2, c)) : y;
}

/* The reduce axes of one group, and its element count. */
static kiln_status_t group_axes(norm_t *n) {
  kiln_arena_t *arena = n->args->arena;
  const int64_t *shape = n->data->shape;
  n->count = 1;
  n->num_reduce = 0;
  for (int d = 0; d < n->ndim; ++d) {
    bool reduced = n->args->op->id == KILN_OP_LAYER_NORM ? d == n->axis : d != 0 && d != n->axis;
    if (!reduced) {
      continue;
    }
    if (n->num_reduce == KILN_TE_MAX_REDUCE_AXES) {
      return KILN_STATUS(UNIMPLEMENTED, "%s: data of rank %d has more than %d dims to reduce",
                         n->args->op->name, n->ndim, KILN_TE_MAX_REDUCE_AXES);
    }
    char name[16];
    snprintf(name, sizeof(name), "k%d", n->num_reduce);
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(arena, name, 0, shape[d], &n->reduce[n->num_reduce]));
    ++n->num_reduce;
    n->count *= shape[d];
  }
  if (n->num_reduce == 0) { /* instance_norm of (N, C): planes of one element */
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(arena, "k0", 0, 1, &n->reduce[0]));
    n->num_reduce = 1;
  }
  return KILN_OK;
}

static kiln_status_t group_reduce(norm_t *n, const char *stage, int num_inputs,
                                  const kiln_te_tensor_t *const *inputs, kiln_te_fcompute_fn body,
                                  const kiln_te_tensor_t **out_tensor) {
  int64_t shape[KILN_TIR_MAX_DIMS];
  if (n->args->op->id == KILN_OP_LAYER_NORM) {
    for (int d = 0, k = 0; d < n->ndim; ++d) {
      if (d != n->axis) {
        shape[k++] = n->data->shape[d];
      }
    }
  } else {
    shape[0] = n->data->shape[0];
    shape[1] = n->data->shape[n->axis];
  }
  char base[48], name[64];
  snprintf(name, sizeof(name), "%s_%s", kiln_compute_tensor_name(n->args->op, base, sizeof(base)),
           stage);
  return kiln_te_compute_reduce(n->args->arena, name, reduced_ndim(n), shape, KILN_TE_REDUCE_SUM,
                                NULL, n->num_reduce, n->reduce, num_inputs, inputs, body, n,
                                out_tensor);
}

/* The line's element at `c` of the row at reduced `row`, and its squared
 * deviation from the row's mean: the elements of the two lane sums. */
static const kiln_tir_expr_t *line_element(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *row,
                                           const kiln_tir_expr_t *c, void *user) {
  const norm_t *n = user;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  kiln_nn_c_insert_index(n->ndim - 1, row, n->axis, c, at);
  return kiln_te_read(b, n->data, n->ndim, at);
}

static const kiln_tir_expr_t *line_deviation_squared(kiln_tir_builder_t *b,
                                                     const kiln_tir_expr_t *const *row,
                                                     const kiln_tir_expr_t *c, void *user) {
  const norm_t *n = user;
  const kiln_tir_expr_t *d = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, line_element(b, row, c, user),
                                            group_mean(b, n, n->sum, row));
  return kiln_tir_b_mul(b, d, d);
}

/* layer_norm along the last axis: both sums in lanes. */
static kiln_status_t line_stages(norm_t *n) {
  int64_t shape[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < n->ndim - 1; ++d) {
    shape[d] = n->data->shape[d];
  }
  n->count = n->data->shape[n->axis];
  kiln_nn_line_reduce_t r = {.args = n->args,
                             .stage = "sum",
                             .rows_ndim = n->ndim - 1,
                             .rows_shape = shape,
                             .extent = n->count,
                             .reducer = KILN_TE_REDUCE_SUM,
                             .num_inputs = 1,
                             .inputs = &n->data,
                             .element = line_element,
                             .user = n};
  KILN_RETURN_IF_ERROR(kiln_nn_line_reduce(&r, &n->sum));
  const kiln_te_tensor_t *inputs[2] = {n->data, n->sum};
  r.stage = "varsum";
  r.num_inputs = 2;
  r.inputs = inputs;
  r.element = line_deviation_squared;
  return kiln_nn_line_reduce(&r, &n->varsum);
}

/* Fresh reduce axes for the variance pass (an axis belongs to one compute). */
static kiln_status_t group_stages(norm_t *n) {
  if (n->args->op->id == KILN_OP_LAYER_NORM && n->axis == n->ndim - 1) {
    return line_stages(n);
  }
  KILN_RETURN_IF_ERROR(group_axes(n));
  KILN_RETURN_IF_ERROR(group_reduce(n, "sum", 1, &n->data, sum_body, &n->sum));
  KILN_RETURN_IF_ERROR(group_axes(n));
  const kiln_te_tensor_t *inputs[2] = {n->data, n->sum};
  return group_reduce(n, "varsum", 2, inputs, varsum_body, &n->varsum);
}

/* ---- the rule ---- */

static bool norm_has_norm_attrs(const kiln_op_t *op) {
  return op->id == KILN_OP_BATCH_NORM || op->id == KILN_OP_LAYER_NORM ||
         op->id == KILN_OP_INSTANCE_NORM;
}

kiln_status_t kiln_compute_nn_norm(const kiln_compute_args_t *args,
                                   kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  const kiln_op_t *op = args->op;
  norm_t n = {.args = args, .data = args->inputs[0], .ndim = args->inputs[0]->ndim};
  int64_t axis_attr = 0;
  if (norm_has_norm_attrs(op)) {
    n.norm = args->attrs;
    axis_attr = n.norm->axis;
  } else {
    axis_attr = ((const kiln_nn_axis_attrs_t *)args->attrs)->axis;
  }
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(op, axis_attr, n.ndim, &n.axis));
  char name[64];
  kiln_compute_tensor_name(op, name, sizeof(name));
  out_result->num_outputs = 1;
  if (op->id != KILN_OP_LAYER_NORM && op->id != KILN_OP_INSTANCE_NORM) {
    return kiln_te_compute(args->arena, name, n.ndim, n.data->shape, args->num_inputs, args->inputs,
                           channel_body, &n, &out_result->outputs[0]);
  }
  KILN_RETURN_IF_ERROR(group_stages(&n));
  const kiln_te_tensor_t *inputs[5] = {n.data, args->inputs[1], args->inputs[2], n.sum, n.varsum};
  return kiln_te_compute(args->arena, name, n.ndim, n.data->shape, 5, inputs, group_out_body, &n,
                         &out_result->outputs[0]);
}
