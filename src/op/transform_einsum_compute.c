/*
 * The compute rule of einsum (transform_einsum.c): the plan of the
 * equation against the placeholders' shapes, then one output whose element
 * is the product of one element of each input, each input read at the
 * index of its dims' labels: an output label is the output's index on that
 * dim, a summed label a reduce axis of its own (a sum reduction over all of
 * them), a broadcast dim 0. With nothing summed it is a plain compute (a
 * transpose or a diagonal), so the default schedule vectorizes it. The
 * product is in the inputs' dtype (float32 or float64, as the reference
 * handles), summed in it too.
 */
#include <stdio.h>

#include "op/transform_attrs.h"
#include "op/transform_compute.h"

typedef struct einsum_t {
  const kiln_compute_args_t *args;
  kiln_einsum_plan_t plan;
  const kiln_te_iter_var_t *axes[KILN_TE_MAX_REDUCE_AXES];
} einsum_t;

static const kiln_tir_expr_t *einsum_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const einsum_t *s = user;
  const kiln_tir_expr_t *label_index[KILN_EINSUM_MAX_LABELS] = {NULL};
  for (int d = 0; d < s->plan.out_ndim; ++d) {
    label_index[s->plan.out_labels[d]] = indices[d];
  }
  for (int k = 0; k < s->plan.num_summed; ++k) {
    label_index[s->plan.summed[k]] = kiln_tir_b_v(s->axes[k]->var);
  }
  const kiln_tir_expr_t *value = NULL;
  for (int i = 0; i < s->plan.num_inputs; ++i) {
    const kiln_tir_expr_t *at[KILN_MAX_RANK];
    for (int d = 0; d < s->plan.ndim[i]; ++d) {
      at[d] = s->plan.broadcast[i][d] ? kiln_tir_b_i32(b, 0) : label_index[s->plan.labels[i][d]];
    }
    const kiln_tir_expr_t *read = kiln_te_read(b, s->args->inputs[i], s->plan.ndim[i], at);
    value = value ? kiln_tir_b_mul(b, value, read) : read;
  }
  return value;
}

static kiln_status_t einsum_plan(const kiln_compute_args_t *args, einsum_t *s) {
  int ndims[KILN_EINSUM_MAX_INPUTS];
  const int64_t *shapes[KILN_EINSUM_MAX_INPUTS];
  if (args->num_inputs > KILN_EINSUM_MAX_INPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d inputs; kiln takes at most %d", args->op->name,
                       args->num_inputs, KILN_EINSUM_MAX_INPUTS);
  }
  for (int i = 0; i < args->num_inputs; ++i) {
    ndims[i] = args->inputs[i]->ndim;
    shapes[i] = args->inputs[i]->shape;
  }
  const kiln_einsum_attrs_t *attrs = args->attrs;
  return kiln_einsum_plan_of(args->op, attrs->equation, args->num_inputs, ndims, shapes, &s->plan);
}

kiln_status_t kiln_compute_einsum(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  kiln_dtype_t dtype = args->num_inputs > 0 ? args->inputs[0]->dtype : KILN_DTYPE_FLOAT32;
  if (dtype != KILN_DTYPE_FLOAT32 && dtype != KILN_DTYPE_FLOAT64) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the compute rule does not handle %s (only float32 and "
                       "float64)",
                       args->op->name, kiln_dtype_name(dtype));
  }
  einsum_t s = {.args = args};
  KILN_RETURN_IF_ERROR(einsum_plan(args, &s));
  if (s.plan.num_summed > KILN_TE_MAX_REDUCE_AXES) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d summed labels; the compute rule takes at most %d",
                       args->op->name, s.plan.num_summed, KILN_TE_MAX_REDUCE_AXES);
  }
  for (int k = 0; k < s.plan.num_summed; ++k) {
    int64_t extent = s.plan.extent[s.plan.summed[k]];
    if (extent == 0) {
      return KILN_STATUS(UNIMPLEMENTED, "%s: a summed label has extent 0", args->op->name);
    }
    char name[16];
    snprintf(name, sizeof(name), "rk%d", k);
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(args->arena, name, 0, extent, &s.axes[k]));
  }
  if (s.plan.num_summed == 0) {
    return kiln_compute_one(args, einsum_body, &s, out_result);
  }
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  char name[64];
  out_result->num_outputs = 1;
  return kiln_te_compute_reduce(args->arena, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                                type->ndim, type->shape, KILN_TE_REDUCE_SUM, NULL,
                                s.plan.num_summed, s.axes, args->num_inputs, args->inputs,
                                einsum_body, &s, &out_result->outputs[0]);
}
