/*
 * Compute rules of nn.softmax, nn.log_softmax and nn.lrn (nn_softmax.c).
 *
 * softmax is three stages, as TVM's topi: T_softmax_maxelem, the maximum of
 * each line along the axis (a max reduction whose init is -inf, the
 * reference's start, not the dtype's lowest value); T_softmax_expsum, the
 * sum of exp(x - max) over the line; and the output, exp(x - max) / sum, or
 * (x - max) - log(sum) for log_softmax. The two reductions have the data's
 * shape without the axis (rank 0 for a vector). A line holding +inf or NaN
 * gives NaN throughout, as in the reference: exp(inf - inf) and exp(NaN)
 * poison the sum.
 *
 * lrn is two: T_lrn_sqsum, the sum of x^2 over the channel window
 * c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2), a reduction over
 * `size` cells whose cells outside the channels are masked to 0 (read at a
 * clamped channel), and the output x / (bias + alpha / size * sum)^beta.
 *
 * Along the last axis (the usual case), the two reductions are made in
 * vector lanes (kiln_nn_line_reduce, nn_line_compute.c) and scheduled by
 * kiln_schedule_line_x86: one row per parallel task, its partial
 * reductions and its output vectorized. Along another axis, the default
 * schedule runs the reductions' data-parallel axes fused and parallel
 * with the line inside, and the output stage fused, parallel and
 * vectorized. The reference kernels handle float32 only, so do
 * these rules (UNIMPLEMENTED otherwise).
 */
#include <math.h>
#include <stdio.h>

#include "op/nn_common.h"
#include "op/nn_compute.h"

typedef struct line_t {
  const kiln_compute_args_t *args;
  const kiln_te_tensor_t *data;
  int ndim;
  int axis;
  const kiln_te_iter_var_t *k; /* the reduction's axis */
  const kiln_te_tensor_t *max;
  const kiln_te_tensor_t *sum;
} line_t;

/* data at the reduced tensor's `indices` with the reduce axis at `axis`. */
static const kiln_tir_expr_t *line_read(kiln_tir_builder_t *b, const line_t *line,
                                        const kiln_tir_expr_t *const *indices,
                                        const kiln_tir_expr_t *at_axis) {
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  kiln_nn_c_insert_index(line->ndim - 1, indices, line->axis, at_axis, at);
  return kiln_te_read(b, line->data, line->ndim, at);
}

/* A reduced tensor (the line's max or sum) at the full `indices`. */
static const kiln_tir_expr_t *line_reduced(kiln_tir_builder_t *b, const line_t *line,
                                           const kiln_te_tensor_t *reduced,
                                           const kiln_tir_expr_t *const *indices) {
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  kiln_nn_c_replace_index(line->ndim, indices, line->axis, NULL, at);
  return kiln_te_read(b, reduced, line->ndim - 1, at);
}

/* The data's shape without the axis. */
static void line_reduced_shape(const line_t *line, int64_t *out_shape) {
  for (int d = 0, k = 0; d < line->ndim; ++d) {
    if (d != line->axis) {
      out_shape[k++] = line->data->shape[d];
    }
  }
}

static kiln_status_t line_make(const kiln_compute_args_t *args, int64_t axis_attr,
                               line_t *out_line) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  *out_line = (line_t){.args = args, .data = args->inputs[0], .ndim = args->inputs[0]->ndim};
  return kiln_op_normalize_axis(args->op, axis_attr, out_line->ndim, &out_line->axis);
}

/* A reduction over the line's axis of `body`, named T_<op>_<stage>. */
static kiln_status_t line_reduce(line_t *line, const char *stage, kiln_te_reducer_t reducer,
                                 const kiln_tir_expr_t *init, int num_inputs,
                                 const kiln_te_tensor_t *const *inputs, kiln_te_fcompute_fn body,
                                 const kiln_te_tensor_t **out_tensor) {
  const kiln_compute_args_t *args = line->args;
  KILN_RETURN_IF_ERROR(
      kiln_te_reduce_axis(args->arena, "k", 0, line->data->shape[line->axis], &line->k));
  int64_t shape[KILN_TIR_MAX_DIMS];
  line_reduced_shape(line, shape);
  char base[48], name[64];
  snprintf(name, sizeof(name), "%s_%s", kiln_compute_tensor_name(args->op, base, sizeof(base)),
           stage);
  return kiln_te_compute_reduce(args->arena, name, line->ndim - 1, shape, reducer, init, 1,
                                &line->k, num_inputs, inputs, body, line, out_tensor);
}

/* The output stage: `body` at every index of the data. */
static kiln_status_t line_output(line_t *line, int num_inputs,
                                 const kiln_te_tensor_t *const *inputs, kiln_te_fcompute_fn body,
                                 kiln_compute_result_t *out_result) {
  char name[64];
  out_result->num_outputs = 1;
  return kiln_te_compute(
      line->args->arena, kiln_compute_tensor_name(line->args->op, name, sizeof(name)), line->ndim,
      line->data->shape, num_inputs, inputs, body, line, &out_result->outputs[0]);
}

/* ---- softmax and log_softmax ---- */

static const kiln_tir_expr_t *softmax_max_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const line_t *line = user;
  return line_read(b, line, indices, kiln_tir_b_v(line->k->var));
}

static const kiln_tir_expr_t *softmax_sum_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const line_t *line = user;
  const kiln_tir_expr_t *x = line_read(b, line, indices, kiln_tir_b_v(line->k->var));
  const kiln_tir_expr_t *max = kiln_te_read(b, line->max, line->ndim - 1, indices);
  return kiln_nn_c_call1(b, KILN_TIR_INTRINSIC_EXP, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, max));
}

static const kiln_tir_expr_t *softmax_out_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const line_t *line = user;
  const kiln_tir_expr_t *x = kiln_te_read(b, line->data, line->ndim, indices);
  const kiln_tir_expr_t *shifted =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, line_reduced(b, line, line->max, indices));
  const kiln_tir_expr_t *sum = line_reduced(b, line, line->sum, indices);
  if (line->args->op->id == KILN_OP_LOG_SOFTMAX) {
    return kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, shifted,
                          kiln_nn_c_call1(b, KILN_TIR_INTRINSIC_LOG, sum));
  }
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, kiln_nn_c_call1(b, KILN_TIR_INTRINSIC_EXP, shifted),
                        sum);
}

/* The line's element at `c` of the row at reduced `row`, and its exp
 * shifted by the row's max: the elements of the two lane reductions. */
static const kiln_tir_expr_t *line_element(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *row,
                                           const kiln_tir_expr_t *c, void *user) {
  return line_read(b, user, row, c);
}

static const kiln_tir_expr_t *line_exp_element(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *row,
                                               const kiln_tir_expr_t *c, void *user) {
  const line_t *line = user;
  const kiln_tir_expr_t *max = kiln_te_read(b, line->max, line->ndim - 1, row);
  return kiln_nn_c_call1(b, KILN_TIR_INTRINSIC_EXP,
                         kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, line_read(b, line, row, c), max));
}

/* The max and the sum of exps of each row in lanes (the axis is last). */
static kiln_status_t softmax_lanes(line_t *line, const kiln_tir_expr_t *minus_inf) {
  int64_t shape[KILN_TIR_MAX_DIMS];
  line_reduced_shape(line, shape);
  kiln_nn_line_reduce_t r = {.args = line->args,
                             .stage = "maxelem",
                             .rows_ndim = line->ndim - 1,
                             .rows_shape = shape,
                             .extent = line->data->shape[line->axis],
                             .reducer = KILN_TE_REDUCE_MAX,
                             .init = minus_inf,
                             .identity = -(double)INFINITY,
                             .num_inputs = 1,
                             .inputs = &line->data,
                             .element = line_element,
                             .user = line};
  KILN_RETURN_IF_ERROR(kiln_nn_line_reduce(&r, &line->max));
  const kiln_te_tensor_t *sum_inputs[2] = {line->data, line->max};
  r.stage = "expsum";
  r.reducer = KILN_TE_REDUCE_SUM;
  r.init = NULL;
  r.identity = 0.0;
  r.num_inputs = 2;
  r.inputs = sum_inputs;
  r.element = line_exp_element;
  return kiln_nn_line_reduce(&r, &line->sum);
}

kiln_status_t kiln_compute_nn_softmax(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  line_t line;
  KILN_RETURN_IF_ERROR(line_make(args, ((const kiln_nn_axis_attrs_t *)args->attrs)->axis, &line));
  const kiln_tir_expr_t *minus_inf = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_nn_c_float_const(args->arena, line.data->dtype, -(double)INFINITY, &minus_inf));
  const kiln_te_tensor_t *out_inputs[3] = {line.data, NULL, NULL};
  if (line.axis == line.ndim - 1) {
    KILN_RETURN_IF_ERROR(softmax_lanes(&line, minus_inf));
    out_inputs[1] = line.max;
    out_inputs[2] = line.sum;
    return line_output(&line, 3, out_inputs, softmax_out_body, out_result);
  }
  KILN_RETURN_IF_ERROR(line_reduce(&line, "maxelem", KILN_TE_REDUCE_MAX, minus_inf, 1, &line.data,
                                   softmax_max_body, &line.max));
  const kiln_te_tensor_t *sum_inputs[2] = {line.data, line.max};
  KILN_RETURN_IF_ERROR(line_reduce(&line, "expsum", KILN_TE_REDUCE_SUM, NULL, 2, sum_inputs,
                                   softmax_sum_body, &line.sum));
  out_inputs[1] = line.max;
  out_inputs[2] = line.sum;
  return line_output(&line, 3, out_inputs, softmax_out_body, out_result);
}

/* ---- lrn ---- */

/* The channel the reduce axis stands for at output channel `c`. */
static const kiln_tir_expr_t *lrn_channel(kiln_tir_builder_t *b, const line_t *line,
                                          const kiln_tir_expr_t *c) {
  const kiln_nn_lrn_attrs_t *a = line->args->attrs;
  int64_t below = (a->size - 1) / 2;
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_add(b, c, kiln_tir_b_v(line->k->var)),
                        kiln_tir_b_i32(b, below));
}

static const kiln_tir_expr_t *lrn_sum_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const line_t *line = user;
  int64_t channels = line->data->shape[line->axis];
  const kiln_tir_expr_t *ch = lrn_channel(b, line, indices[line->axis]);
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  kiln_nn_c_replace_index(line->ndim, indices, line->axis,
                          kiln_compute_clamp(b, ch, 0, channels - 1), at);
  const kiln_tir_expr_t *x = kiln_te_read(b, line->data, line->ndim, at);
  return kiln_tir_b_select(b, kiln_compute_in_range(b, ch, 0, channels), kiln_tir_b_mul(b, x, x),
                           kiln_tir_b_float(b, line->data->dtype, 0.0));
}

static const kiln_tir_expr_t *lrn_out_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const line_t *line = user;
  const kiln_nn_lrn_attrs_t *a = line->args->attrs;
  kiln_dtype_t dtype = line->data->dtype;
  const kiln_tir_expr_t *x = kiln_te_read(b, line->data, line->ndim, indices);
  const kiln_tir_expr_t *sum = kiln_te_read(b, line->sum, line->ndim, indices);
  const kiln_tir_expr_t *base = kiln_tir_b_add(
      b, kiln_tir_b_float(b, dtype, a->bias),
      kiln_tir_b_mul(b, kiln_tir_b_float(b, dtype, a->alpha / (double)a->size), sum));
  const kiln_tir_expr_t *pow_args[2] = {base, kiln_tir_b_float(b, dtype, a->beta)};
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, x,
                        kiln_tir_b_call(b, KILN_TIR_INTRINSIC_POW, 2, pow_args));
}

kiln_status_t kiln_compute_nn_lrn(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  const kiln_nn_lrn_attrs_t *a = args->attrs;
  line_t line;
  KILN_RETURN_IF_ERROR(line_make(args, a->axis, &line));
  KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(args->arena, "k", 0, a->size, &line.k));
  char base[48], name[64];
  snprintf(name, sizeof(name), "%s_sqsum", kiln_compute_tensor_name(args->op, base, sizeof(base)));
  KILN_RETURN_IF_ERROR(kiln_te_compute_reduce(args->arena, name, line.ndim, line.data->shape,
                                              KILN_TE_REDUCE_SUM, NULL, 1, &line.k, 1, &line.data,
                                              lrn_sum_body, &line, &line.sum));
  const kiln_te_tensor_t *out_inputs[2] = {line.data, line.sum};
  return line_output(&line, 2, out_inputs, lrn_out_body, out_result);
}
