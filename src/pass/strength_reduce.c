/*
 * strength_reduce: elementwise arithmetic by a constant that has a cheaper
 * equal form (TVM's SimplifyExpr for these cases).
 *
 * - power(x, c) with c a one-element float32 Constant of 1, 2, 3 or 4
 *   becomes x, x*x, x*x*x or (x*x)*(x*x) (0.5 stays: sqrt differs from
 *   pow at -0 and -inf). A power is a
 *   libm call per element that vector code cannot inline; the tanh GELU
 *   (x + 0.044715 x^3) and the squares of exported normalizations are
 *   written with it.
 * - divide(x, c) with c a one-element float32 Constant whose reciprocal is
 *   a power of two (so x * (1/c) is exactly x / c) becomes multiply(x,
 *   1/c): attention's scores divided by sqrt(d) for d = 4^k, and any
 *   halving; a multiply fuses and vectorizes as the divide does but costs
 *   a fraction of it. Other divisors stay divides, keeping the numbers
 *   bit for bit.
 * Only float32 data is rewritten; the operand order is the exporter's
 * (the constant on the right, as power and divide have it).
 */
#include <math.h>
#include <stdbool.h>

#include "pass/passes.h"
#include "pass/rewrite.h"

static kiln_status_t square(kiln_module_t *module, kiln_expr_t *x, kiln_expr_t **out_expr) {
  kiln_expr_t *args[] = {x, x};
  return kiln_pass_make_call(module, &kiln_op_multiply, 2, args, NULL, out_expr);
}

/* x^c for c in {1, 2, 3, 4}; *out_expr untouched for another c. */
static kiln_status_t reduce_power(kiln_module_t *module, kiln_expr_t *x, float c,
                                  kiln_expr_t **out_expr) {
  kiln_expr_t *x2 = NULL;
  if (c == 1.0f) {
    *out_expr = x;
    return KILN_OK;
  }
  if (c != 2.0f && c != 3.0f && c != 4.0f) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(square(module, x, &x2));
  if (c == 2.0f) {
    *out_expr = x2;
    return KILN_OK;
  }
  if (c == 4.0f) {
    return square(module, x2, out_expr);
  }
  kiln_expr_t *args[] = {x2, x};
  return kiln_pass_make_call(module, &kiln_op_multiply, 2, args, NULL, out_expr);
}

/* Whether 1 / c is a power of two (c = 2^k, k an integer, normal). */
static bool exact_reciprocal(float c) {
  int exponent = 0;
  float mantissa = frexpf(c, &exponent);
  return isnormal(c) && isnormal(1.0f / c) && fabsf(mantissa) == 0.5f;
}

static kiln_status_t strength_reduce_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                          kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  float c = 0.0f;
  bool power = call->op == &kiln_op_power, divide = call->op == &kiln_op_divide;
  const kiln_tensor_type_t *x = (power || divide) ? kiln_pass_tensor_type(call->args[0]) : NULL;
  if (!x || x->dtype != KILN_DTYPE_FLOAT32 || !kiln_pass_constant_scalar_f32(call->args[1], &c)) {
    return KILN_OK;
  }
  const kiln_tensor_type_t *out = kiln_pass_tensor_type(&call->base);
  if (!out || out->ndim != x->ndim) {
    return KILN_OK; /* the constant broadcasts the shape up: keep the call */
  }
  if (power) {
    KILN_RETURN_IF_ERROR(reduce_power(rewriter->module, call->args[0], c, out_expr));
  } else if (exact_reciprocal(c)) {
    kiln_expr_t *inverse = NULL;
    KILN_RETURN_IF_ERROR(kiln_pass_make_scalar_f32(rewriter->module, 1.0f / c, &inverse));
    kiln_expr_t *args[] = {call->args[0], inverse};
    KILN_RETURN_IF_ERROR(
        kiln_pass_make_call(rewriter->module, &kiln_op_multiply, 2, args, NULL, out_expr));
  }
  rewriter->rewrites += *out_expr != &call->base;
  return KILN_OK;
}

static kiln_status_t strength_reduce_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, strength_reduce_call, NULL, NULL);
}

static const char *const strength_reduce_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_strength_reduce = {
    .info = {.name = "strength_reduce", .opt_level = 3, .required = strength_reduce_required},
    .run = strength_reduce_run,
};
