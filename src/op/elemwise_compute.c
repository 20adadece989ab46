/*
 * Compute rules of the elementwise operators: one scalar expression per
 * operator, through the elementwise template of op/compute.h (inputs read
 * with NumPy broadcasting, the result cast to the output dtype). The
 * expressions follow the reference kernels' semantics (elemwise_unary.c,
 * elemwise_binary.c) so the two agree on every dtype the loop IR runs.
 */
#include "op/elemwise_compute.h"

#include "op/compute.h"

static const kiln_tir_expr_t *zero_like(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  return kiln_tir_dtype_is_float(x->dtype) ? kiln_tir_b_float(b, x->dtype.base, 0.0)
                                           : kiln_tir_b_int(b, x->dtype.base, 0);
}

/* relu: max(x, 0), with NaN kept (x < 0 ? 0 : x). */
static const kiln_tir_expr_t *relu(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *v,
                                   const kiln_compute_args_t *args) {
  (void)args;
  const kiln_tir_expr_t *zero = zero_like(b, v[0]);
  return kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, v[0], zero), zero, v[0]);
}

static const kiln_tir_expr_t *add(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *v,
                                  const kiln_compute_args_t *args) {
  (void)args;
  return kiln_tir_b_add(b, v[0], v[1]);
}

static const kiln_compute_scalar_fn scalar_rules[KILN_OP_COUNT_] = {
    [KILN_OP_RELU] = relu,
    [KILN_OP_ADD] = add,
};

static kiln_status_t compute_scalar(const kiln_compute_args_t *args,
                                    kiln_compute_result_t *out_result) {
  kiln_compute_scalar_fn fn = scalar_rules[args->op->id];
  if (!fn) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: no compute rule yet", args->op->name);
  }
  char name[64];
  return kiln_compute_elemwise(args, kiln_compute_tensor_name(args->op, name, sizeof(name)), fn,
                               out_result);
}

kiln_status_t kiln_compute_unary(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  return compute_scalar(args, out_result);
}

kiln_status_t kiln_compute_binary(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  return compute_scalar(args, out_result);
}
