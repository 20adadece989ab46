/*
 * The compute rule of dft (transform_dft.c): two stages, as the reference
 * computes in double and rounds once.
 *
 * T_dft_sum is a float64 sum reduction over the samples n (one reduce axis
 * of extent min(size, L)) at every output index: with k the index on the
 * signal axis and c on the last dim, theta = 2 pi fmod(k n, L) / L (k n is
 * exact in float64), s = -sin(theta) (forward) or sin(theta) (inverse), and
 * the term is xr cos - xi s for c = 0 and xi cos + xr s for c = 1 (xi = 0
 * for a real signal; a Select picks the part). T_dft casts it to the data's
 * dtype after the inverse's 1 / L.
 */
#include <stdio.h>

#include "op/transform_attrs.h"
#include "op/transform_compute.h"

typedef struct dft_t {
  const kiln_te_tensor_t *data;
  const kiln_te_tensor_t *sum;
  kiln_dft_plan_t plan;
  const kiln_te_iter_var_t *n;
} dft_t;

static const kiln_tir_expr_t *call(kiln_tir_builder_t *b, kiln_tir_intrinsic_t op, int n,
                                   const kiln_tir_expr_t *const *args) {
  return kiln_tir_b_call(b, op, n, args);
}

/* Part `part` (0 real, 1 imaginary) of sample n, as float64. */
static const kiln_tir_expr_t *sample(kiln_tir_builder_t *b, const dft_t *d,
                                     const kiln_tir_expr_t *const *indices, int part) {
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  int ndim = d->data->ndim;
  for (int i = 0; i < ndim; ++i) {
    at[i] = indices[i];
  }
  at[d->plan.axis] = kiln_tir_b_v(d->n->var);
  at[ndim - 1] = kiln_tir_b_i32(b, part);
  return kiln_tcompute_as_f64(b, kiln_te_read(b, d->data, ndim, at));
}

static const kiln_tir_expr_t *dft_sum_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const dft_t *d = user;
  const kiln_tir_expr_t *kn = kiln_tir_b_mul(b, kiln_tcompute_as_f64(b, indices[d->plan.axis]),
                                             kiln_tcompute_as_f64(b, kiln_tir_b_v(d->n->var)));
  const kiln_tir_expr_t *mod_args[2] = {kn, kiln_tcompute_f64(b, (double)d->plan.length)};
  const kiln_tir_expr_t *theta =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV,
                     kiln_tir_b_mul(b, kiln_tcompute_f64(b, KILN_DFT_TWO_PI),
                                    call(b, KILN_TIR_INTRINSIC_FMOD, 2, mod_args)),
                     kiln_tcompute_f64(b, (double)d->plan.length));
  const kiln_tir_expr_t *cosine = call(b, KILN_TIR_INTRINSIC_COS, 1, &theta);
  const kiln_tir_expr_t *s = kiln_tir_b_mul(b, kiln_tcompute_f64(b, d->plan.inverse ? 1.0 : -1.0),
                                            call(b, KILN_TIR_INTRINSIC_SIN, 1, &theta));
  const kiln_tir_expr_t *xr = sample(b, d, indices, 0);
  const kiln_tir_expr_t *re = kiln_tir_b_mul(b, xr, cosine);
  const kiln_tir_expr_t *im = kiln_tir_b_mul(b, xr, s);
  if (d->plan.complex_input) {
    const kiln_tir_expr_t *xi = sample(b, d, indices, 1);
    re = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, re, kiln_tir_b_mul(b, xi, s));
    im = kiln_tir_b_add(b, kiln_tir_b_mul(b, xi, cosine), im);
  }
  const kiln_tir_expr_t *real_part =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, indices[d->data->ndim - 1], kiln_tir_b_i32(b, 0));
  return kiln_tir_b_select(b, real_part, re, im);
}

static const kiln_tir_expr_t *dft_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const dft_t *d = user;
  const kiln_tir_expr_t *value = kiln_te_read(b, d->sum, d->sum->ndim, indices);
  if (d->plan.inverse) {
    value = kiln_tir_b_mul(b, value, kiln_tcompute_f64(b, 1.0 / (double)d->plan.length));
  }
  return kiln_tir_b_cast(b, kiln_tir_scalar(d->data->dtype), value);
}

kiln_status_t kiln_compute_dft(const kiln_compute_args_t *args, kiln_compute_result_t *out_result) {
  dft_t d = {.data = args->inputs[0]};
  if (d.data->dtype != KILN_DTYPE_FLOAT32 && d.data->dtype != KILN_DTYPE_FLOAT64) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the compute rule does not handle %s (only float32 and float64)",
                       args->op->name, kiln_dtype_name(d.data->dtype));
  }
  KILN_RETURN_IF_ERROR(
      kiln_dft_plan_of(args->op, args->attrs, d.data->ndim, d.data->shape, &d.plan));
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(args->arena, "n", 0, d.plan.samples, &d.n));
  char base[48], name[64];
  snprintf(name, sizeof(name), "%s_sum", kiln_compute_tensor_name(args->op, base, sizeof(base)));
  KILN_RETURN_IF_ERROR(kiln_te_compute_reduce(args->arena, name, type->ndim, type->shape,
                                              KILN_TE_REDUCE_SUM, NULL, 1, &d.n, 1, &d.data,
                                              dft_sum_body, &d, &d.sum));
  out_result->num_outputs = 1;
  return kiln_te_compute(args->arena, kiln_compute_tensor_name(args->op, base, sizeof(base)),
                         type->ndim, type->shape, 1, &d.sum, dft_body, &d, &out_result->outputs[0]);
}
