/*
 * rewrite_layer_norm: layer normalization as exporters write it becomes
 * nn.layer_norm, one kernel that reads each line twice, where the pieces
 * would be five kernels and a libm pow per element.
 *
 * The match is by dataflow and meaning, not by names or node order:
 *   d = subtract(x, mean(x, axis=[a], keepdims=True))
 *   v = mean(power(d, 2) | multiply(d, d), axis=[a], keepdims=True)
 *   y = divide(d, sqrt(add(v, eps))) | multiply(d, rsqrt(add(v, eps)))
 * (either order of add's operands; eps a one-element float32 Constant;
 * both means over the same one axis) gives
 *   y = nn.layer_norm(x, ones, zeros, axis=a, epsilon=eps, center=False,
 *                     scale=False),
 * and then multiply(y, gamma) and add(y, beta) with a Constant gamma or
 * beta of one value per element of the axis (shape (C,), or 1s then C,
 * the axis being the last) fold into the layer_norm as its gamma (scale)
 * and beta (center). The pieces stay where something else reads them;
 * dead_code_elimination drops the rest. Only float32 is rewritten.
 */
#include <stdio.h>
#include <string.h>

#include "op/gather_attrs.h"
#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

static kiln_call_t *call_of(kiln_expr_t *expr, const kiln_op_t *op) {
  return kiln_pass_is_call_of(expr, op) ? kiln_expr_as_call(expr) : NULL;
}

/* mean(`of`, axis=[a], keepdims=True) over one axis: its axis, else -1. */
static int mean_axis(kiln_expr_t *expr, kiln_expr_t **out_of) {
  kiln_call_t *mean = call_of(expr, &kiln_op_mean);
  const kiln_tensor_type_t *in = mean ? kiln_pass_tensor_type(mean->args[0]) : NULL;
  if (!in) {
    return -1;
  }
  const kiln_reduce_attrs_t *a = mean->attrs;
  if (!a->keepdims || a->axis.count != 1) {
    return -1;
  }
  int64_t axis = a->axis.values[0] < 0 ? a->axis.values[0] + in->ndim : a->axis.values[0];
  *out_of = mean->args[0];
  return axis >= 0 && axis < in->ndim ? (int)axis : -1;
}

/* d * d, as power(d, 2) or multiply(d, d). */
static bool is_square_of(kiln_expr_t *expr, const kiln_expr_t *d) {
  kiln_call_t *c = call_of(expr, &kiln_op_multiply);
  if (c) {
    return c->args[0] == d && c->args[1] == d;
  }
  float two = 0.0f;
  c = call_of(expr, &kiln_op_power);
  return c && c->args[0] == d && kiln_pass_constant_scalar_f32(c->args[1], &two) && two == 2.0f;
}

/* add(v, eps) or add(eps, v): v and eps. */
static bool plus_epsilon(kiln_expr_t *expr, kiln_expr_t **out_v, float *out_epsilon) {
  kiln_call_t *add = call_of(expr, &kiln_op_add);
  for (int i = 0; add && i < 2; ++i) {
    if (kiln_pass_constant_scalar_f32(add->args[1 - i], out_epsilon)) {
      *out_v = add->args[i];
      return true;
    }
  }
  return false;
}

/* The add(v, eps) under sqrt (as a divisor) or rsqrt (as a factor). */
static kiln_expr_t *variance_term(const kiln_call_t *call) {
  kiln_call_t *root = NULL;
  if (call->op == &kiln_op_divide) {
    root = call_of(call->args[1], &kiln_op_sqrt);
  } else if (call->op == &kiln_op_multiply) {
    root = call_of(call->args[1], &kiln_op_rsqrt);
  }
  return root ? root->args[0] : NULL;
}

typedef struct layer_norm_match_t {
  kiln_expr_t *x;
  int axis;
  float epsilon;
} layer_norm_match_t;

static bool match_normalize(const kiln_call_t *call, layer_norm_match_t *m) {
  kiln_expr_t *term = variance_term(call), *v = NULL, *squared = NULL, *mean_of = NULL;
  kiln_call_t *d = call_of(call->args[0], &kiln_op_subtract);
  if (!term || !d || !plus_epsilon(term, &v, &m->epsilon)) {
    return false;
  }
  m->axis = mean_axis(v, &squared);
  if (m->axis < 0 || !is_square_of(squared, &d->base) ||
      mean_axis(d->args[1], &mean_of) != m->axis || mean_of != d->args[0]) {
    return false;
  }
  m->x = d->args[0];
  const kiln_tensor_type_t *t = kiln_pass_tensor_type(m->x);
  return t && t->dtype == KILN_DTYPE_FLOAT32;
}

/* A Constant of `value`s, one per element of the axis. */
static kiln_status_t filled_vector(kiln_module_t *module, int64_t c, float value,
                                   kiln_expr_t **out_expr) {
  kiln_tensor_t *t = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(kiln_module_allocator(module), KILN_DTYPE_FLOAT32, 1, &c, &t));
  float *data = kiln_tensor_data(t);
  for (int64_t i = 0; i < c; ++i) {
    data[i] = value;
  }
  kiln_status_t status = kiln_pass_make_constant(module, t, out_expr);
  kiln_tensor_release(t);
  return status;
}

static kiln_status_t make_layer_norm(kiln_module_t *module, kiln_expr_t *x, kiln_expr_t *gamma,
                                     kiln_expr_t *beta, const kiln_nn_norm_attrs_t *attrs,
                                     kiln_expr_t **out_expr) {
  char axis[24], epsilon[48];
  snprintf(axis, sizeof(axis), "%lld", (long long)attrs->axis);
  snprintf(epsilon, sizeof(epsilon), "%.9g", attrs->epsilon);
  const char *const settings[] = {"axis",    axis,
                                  "epsilon", epsilon,
                                  "center",  attrs->center ? "True" : "False",
                                  "scale",   attrs->scale ? "True" : "False",
                                  NULL};
  kiln_expr_t *args[] = {x, gamma, beta};
  return kiln_pass_make_call(module, &kiln_op_layer_norm, 3, args, settings, out_expr);
}

static kiln_status_t rewrite_normalize(kiln_module_t *module, const layer_norm_match_t *m,
                                       kiln_expr_t **out_expr) {
  int64_t c = kiln_pass_tensor_type(m->x)->shape[m->axis];
  kiln_expr_t *ones = NULL, *zeros = NULL;
  KILN_RETURN_IF_ERROR(filled_vector(module, c, 1.0f, &ones));
  KILN_RETURN_IF_ERROR(filled_vector(module, c, 0.0f, &zeros));
  kiln_nn_norm_attrs_t attrs = {m->axis, m->epsilon, false, false};
  return make_layer_norm(module, m->x, ones, zeros, &attrs, out_expr);
}

/* A Constant with one value per element of the last axis `c`: (C,) or
 * (1, ..., 1, C), as a (C,) vector. */
static kiln_status_t per_channel(kiln_module_t *module, kiln_expr_t *expr, int64_t c,
                                 kiln_expr_t **out_vector) {
  *out_vector = NULL;
  const kiln_tensor_type_t *t = kiln_pass_tensor_type(expr);
  if (expr->kind != KILN_EXPR_KIND_CONSTANT || !t || t->dtype != KILN_DTYPE_FLOAT32 ||
      t->ndim < 1 || t->shape[t->ndim - 1] != c ||
      kiln_tensor_element_count(kiln_expr_as_constant(expr)->value) != c) {
    return KILN_OK;
  }
  char shape[32];
  snprintf(shape, sizeof(shape), "[%lld]", (long long)c);
  const char *const settings[] = {"newshape", shape, NULL};
  return kiln_pass_make_call_folded(module, &kiln_op_reshape, 1, &expr, settings, out_vector);
}

/* multiply(ln, gamma) / add(ln, beta), either order, of a layer_norm over
 * the last axis without its scale / shift yet. */
static kiln_status_t fold_affine(kiln_module_t *module, const kiln_call_t *call,
                                 kiln_expr_t **out_expr) {
  bool scale = call->op == &kiln_op_multiply;
  for (int i = 0; i < 2; ++i) {
    kiln_call_t *ln = call_of(call->args[i], &kiln_op_layer_norm);
    const kiln_tensor_type_t *t = ln ? kiln_pass_tensor_type(ln->args[0]) : NULL;
    const kiln_nn_norm_attrs_t *a = ln ? ln->attrs : NULL;
    if (!t || (a->axis != -1 && a->axis != t->ndim - 1) || a->center || (scale && a->scale)) {
      continue;
    }
    kiln_expr_t *vector = NULL;
    KILN_RETURN_IF_ERROR(per_channel(module, call->args[1 - i], t->shape[t->ndim - 1], &vector));
    if (!vector || vector->kind != KILN_EXPR_KIND_CONSTANT) {
      continue;
    }
    kiln_nn_norm_attrs_t attrs = *a;
    *(scale ? &attrs.scale : &attrs.center) = true;
    return make_layer_norm(module, ln->args[0], scale ? vector : ln->args[1],
                           scale ? ln->args[2] : vector, &attrs, out_expr);
  }
  return KILN_OK;
}

static kiln_status_t rewrite_layer_norm_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                             kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_divide && call->op != &kiln_op_multiply && call->op != &kiln_op_add) {
    return KILN_OK;
  }
  layer_norm_match_t m;
  if (call->op != &kiln_op_add && match_normalize(call, &m)) {
    rewriter->rewrites++;
    return rewrite_normalize(rewriter->module, &m, out_expr);
  }
  if (call->op != &kiln_op_divide) {
    KILN_RETURN_IF_ERROR(fold_affine(rewriter->module, call, out_expr));
    rewriter->rewrites += *out_expr != &call->base;
  }
  return KILN_OK;
}

static kiln_status_t rewrite_layer_norm_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, rewrite_layer_norm_call, NULL, NULL);
}

static const char *const rewrite_layer_norm_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_rewrite_layer_norm = {
    .info = {.name = "rewrite_layer_norm", .opt_level = 3, .required = rewrite_layer_norm_required},
    .run = rewrite_layer_norm_run,
};
