/*
 * The compute rule of det (transform_det.c): the reference's elimination as
 * an extern op (TVM's te.extern), since each step depends on the last.
 *
 * The extern has three outputs: T_det_acc (float64, the batch's shape),
 * the running determinant; T_det_lu (float64, data's shape), the matrices
 * being eliminated; T_det_piv (int32, the batch's shape), the pivot row of
 * the current column. Only the first leaves the function (cast to float32
 * by a second stage when the data is float32, as cumsum's accumulator);
 * the other two are scratch buffers the lowering allocates. For every
 * matrix of the batch (serial loops): copy it into T_det_lu, start at 1,
 * then for each column k find the pivot (the first row of largest
 * magnitude at or below k), swap it up and negate when it moved, multiply
 * by the pivot, and when the pivot is not 0 subtract row k's multiple from
 * each row below (loops whose bounds run from k + 1: a triangle).
 */
#include <stdio.h>

#include "op/transform_compute.h"

typedef struct det_t {
  const kiln_te_tensor_t *data;
  int batch_ndim;
  int64_t n;
  const kiln_te_tensor_t *acc; /* the extern's first output */
} det_t;

/* Loads and stores at (batch..., i, j) or (batch...). */
typedef struct det_view_t {
  const kiln_tir_expr_t *batch[KILN_TIR_MAX_DIMS];
  int batch_ndim;
} det_view_t;

static const kiln_tir_expr_t *at_ij(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                    const det_view_t *v, const kiln_tir_expr_t *i,
                                    const kiln_tir_expr_t *j) {
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < v->batch_ndim; ++d) {
    at[d] = v->batch[d];
  }
  at[v->batch_ndim] = i;
  at[v->batch_ndim + 1] = j;
  return kiln_tir_b_load(b, buffer, v->batch_ndim + 2, at);
}

static const kiln_tir_stmt_t *store_ij(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                       const det_view_t *v, const kiln_tir_expr_t *i,
                                       const kiln_tir_expr_t *j, const kiln_tir_expr_t *value) {
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < v->batch_ndim; ++d) {
    at[d] = v->batch[d];
  }
  at[v->batch_ndim] = i;
  at[v->batch_ndim + 1] = j;
  return kiln_tir_b_store(b, buffer, value, v->batch_ndim + 2, at);
}

/* A rank-0 buffer (a batch of one matrix) takes one flat index 0. */
static const kiln_tir_expr_t *at_batch(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                       const det_view_t *v) {
  const kiln_tir_expr_t *flat = kiln_tir_b_i32(b, 0);
  return v->batch_ndim ? kiln_tir_b_load(b, buffer, v->batch_ndim, v->batch)
                       : kiln_tir_b_load(b, buffer, 1, &flat);
}

static const kiln_tir_stmt_t *store_batch(kiln_tir_builder_t *b, const kiln_tir_buffer_t *buffer,
                                          const det_view_t *v, const kiln_tir_expr_t *value) {
  const kiln_tir_expr_t *flat = kiln_tir_b_i32(b, 0);
  return v->batch_ndim ? kiln_tir_b_store(b, buffer, value, v->batch_ndim, v->batch)
                       : kiln_tir_b_store(b, buffer, value, 1, &flat);
}

/* for var in [from, n): body(var) */
static const kiln_tir_stmt_t *loop(kiln_tir_builder_t *b, const kiln_tir_var_t *var,
                                   const kiln_tir_expr_t *from, int64_t n,
                                   const kiln_tir_stmt_t *body) {
  const kiln_tir_expr_t *extent = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_i32(b, n), from);
  return kiln_tir_b_for(b, var, from, extent, KILN_TIR_FOR_SERIAL, body);
}

static const kiln_tir_expr_t *magnitude(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  return kiln_tir_b_call(b, KILN_TIR_INTRINSIC_FABS, 1, &x);
}

typedef struct det_buffers_t {
  const kiln_tir_buffer_t *data, *acc, *lu, *piv;
} det_buffers_t;

/* Column k's pivot into piv, the swap (negating acc) when it moved. */
static const kiln_tir_stmt_t *pivot_step(kiln_tir_builder_t *b, const det_t *d,
                                         const det_buffers_t *f, const det_view_t *v,
                                         const kiln_tir_expr_t *k) {
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "det_i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "det_j", KILN_DTYPE_INT32);
  const kiln_tir_var_t *t = kiln_tir_b_var(b, "det_t", KILN_DTYPE_FLOAT64);
  const kiln_tir_expr_t *p = at_batch(b, f->piv, v);
  const kiln_tir_expr_t *better =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, magnitude(b, at_ij(b, f->lu, v, kiln_tir_b_v(i), k)),
                     magnitude(b, at_ij(b, f->lu, v, p, k)));
  const kiln_tir_stmt_t *search =
      loop(b, i, kiln_tir_b_add(b, k, kiln_tir_b_i32(b, 1)), d->n,
           kiln_tir_b_if(b, better, store_batch(b, f->piv, v, kiln_tir_b_v(i)), NULL));
  const kiln_tir_stmt_t *swap_pair[2] = {
      store_ij(b, f->lu, v, k, kiln_tir_b_v(j), at_ij(b, f->lu, v, p, kiln_tir_b_v(j))),
      store_ij(b, f->lu, v, p, kiln_tir_b_v(j), kiln_tir_b_v(t))};
  const kiln_tir_stmt_t *swap =
      loop(b, j, kiln_tir_b_i32(b, 0), d->n,
           kiln_tir_b_let_stmt(b, t, at_ij(b, f->lu, v, k, kiln_tir_b_v(j)),
                               kiln_tir_b_seq(b, 2, swap_pair)));
  const kiln_tir_expr_t *negated =
      kiln_tir_b_mul(b, at_batch(b, f->acc, v), kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, -1.0));
  const kiln_tir_stmt_t *moved[2] = {swap, store_batch(b, f->acc, v, negated)};
  const kiln_tir_stmt_t *steps[3] = {store_batch(b, f->piv, v, k), search,
                                     kiln_tir_b_if(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, p, k),
                                                   kiln_tir_b_seq(b, 2, moved), NULL)};
  return kiln_tir_b_seq(b, 3, steps);
}

/* acc *= the pivot; the rows below k lose their multiple of row k. */
static const kiln_tir_stmt_t *eliminate_step(kiln_tir_builder_t *b, const det_t *d,
                                             const det_buffers_t *f, const det_view_t *v,
                                             const kiln_tir_expr_t *k) {
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "det_i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "det_j", KILN_DTYPE_INT32);
  const kiln_tir_var_t *factor = kiln_tir_b_var(b, "det_f", KILN_DTYPE_FLOAT64);
  const kiln_tir_expr_t *pivot = at_ij(b, f->lu, v, k, k);
  const kiln_tir_expr_t *next = kiln_tir_b_add(b, k, kiln_tir_b_i32(b, 1));
  const kiln_tir_expr_t *updated = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_SUB, at_ij(b, f->lu, v, kiln_tir_b_v(i), kiln_tir_b_v(j)),
      kiln_tir_b_mul(b, kiln_tir_b_v(factor), at_ij(b, f->lu, v, k, kiln_tir_b_v(j))));
  const kiln_tir_stmt_t *row =
      loop(b, j, next, d->n, store_ij(b, f->lu, v, kiln_tir_b_v(i), kiln_tir_b_v(j), updated));
  const kiln_tir_expr_t *ratio =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, at_ij(b, f->lu, v, kiln_tir_b_v(i), k), pivot);
  const kiln_tir_stmt_t *rows = loop(b, i, next, d->n, kiln_tir_b_let_stmt(b, factor, ratio, row));
  const kiln_tir_expr_t *nonzero =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, pivot, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, 0.0));
  const kiln_tir_stmt_t *steps[2] = {
      store_batch(b, f->acc, v, kiln_tir_b_mul(b, at_batch(b, f->acc, v), pivot)),
      kiln_tir_b_if(b, nonzero, rows, NULL)};
  return kiln_tir_b_seq(b, 2, steps);
}

/* One matrix: copy, start at 1, every column. */
static const kiln_tir_stmt_t *det_matrix(kiln_tir_builder_t *b, const det_t *d,
                                         const det_buffers_t *f, const det_view_t *v) {
  const kiln_tir_var_t *i = kiln_tir_b_var(b, "det_i", KILN_DTYPE_INT32);
  const kiln_tir_var_t *j = kiln_tir_b_var(b, "det_j", KILN_DTYPE_INT32);
  const kiln_tir_var_t *k = kiln_tir_b_var(b, "det_k", KILN_DTYPE_INT32);
  const kiln_tir_expr_t *x =
      kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT64),
                      at_ij(b, f->data, v, kiln_tir_b_v(i), kiln_tir_b_v(j)));
  const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
  const kiln_tir_stmt_t *copy =
      loop(b, i, zero, d->n,
           loop(b, j, zero, d->n, store_ij(b, f->lu, v, kiln_tir_b_v(i), kiln_tir_b_v(j), x)));
  const kiln_tir_stmt_t *column[2] = {pivot_step(b, d, f, v, kiln_tir_b_v(k)),
                                      eliminate_step(b, d, f, v, kiln_tir_b_v(k))};
  const kiln_tir_stmt_t *steps[3] = {
      copy, store_batch(b, f->acc, v, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, 1.0)),
      loop(b, k, zero, d->n, kiln_tir_b_seq(b, 2, column))};
  return kiln_tir_b_seq(b, 3, steps);
}

static const kiln_tir_stmt_t *det_extern(kiln_tir_builder_t *b,
                                         const kiln_tir_buffer_t *const *inputs,
                                         const kiln_tir_buffer_t *const *outputs, void *user) {
  const det_t *d = user;
  det_buffers_t f = {inputs[0], outputs[0], outputs[1], outputs[2]};
  det_view_t v = {.batch_ndim = d->batch_ndim};
  const kiln_tir_var_t *vars[KILN_TIR_MAX_DIMS];
  for (int a = 0; a < d->batch_ndim; ++a) {
    char name[24];
    snprintf(name, sizeof(name), "det_b%d", a);
    vars[a] = kiln_tir_b_var(b, name, KILN_DTYPE_INT32);
    v.batch[a] = kiln_tir_b_v(vars[a]);
  }
  const kiln_tir_stmt_t *body = det_matrix(b, d, &f, &v);
  for (int a = d->batch_ndim - 1; a >= 0; --a) {
    body = loop(b, vars[a], kiln_tir_b_i32(b, 0), d->data->shape[a], body);
  }
  return body;
}

static const kiln_tir_expr_t *cast_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const kiln_te_tensor_t *acc = ((const det_t *)user)->acc;
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32),
                         kiln_te_read(b, acc, acc->ndim, indices));
}

kiln_status_t kiln_compute_det(const kiln_compute_args_t *args, kiln_compute_result_t *out_result) {
  det_t d = {.data = args->inputs[0]};
  kiln_dtype_t dtype = d.data->dtype;
  if (dtype != KILN_DTYPE_FLOAT32 && dtype != KILN_DTYPE_FLOAT64) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the compute rule does not handle %s (only float32 and float64)",
                       args->op->name, kiln_dtype_name(dtype));
  }
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  if (d.data->ndim < 2 || d.data->ndim - 2 != out->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the data is not a batch of matrices", args->op->name);
  }
  d.batch_ndim = out->ndim;
  d.n = d.data->shape[d.data->ndim - 1];
  if (d.n == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the compute rule needs matrices of at least 1 x 1",
                       args->op->name);
  }
  char base[48], acc_name[64];
  kiln_compute_tensor_name(args->op, base, sizeof(base));
  snprintf(acc_name, sizeof(acc_name), "%s%s", base, dtype == KILN_DTYPE_FLOAT64 ? "" : "_acc");
  kiln_te_extern_output_t outputs[3] = {
      {acc_name, out->ndim, out->shape, KILN_DTYPE_FLOAT64},
      {"T_det_lu", d.data->ndim, d.data->shape, KILN_DTYPE_FLOAT64},
      {"T_det_piv", out->ndim, out->shape, KILN_DTYPE_INT32}};
  const kiln_te_tensor_t *results[3] = {NULL, NULL, NULL};
  KILN_RETURN_IF_ERROR(
      kiln_te_extern(args->arena, acc_name, 3, outputs, 1, args->inputs, det_extern, &d, results));
  out_result->num_outputs = 1;
  if (dtype == KILN_DTYPE_FLOAT64) {
    out_result->outputs[0] = results[0];
    return KILN_OK;
  }
  d.acc = results[0];
  return kiln_te_compute(args->arena, base, out->ndim, out->shape, 1, &results[0], cast_body, &d,
                         &out_result->outputs[0]);
}
