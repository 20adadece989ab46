/*
 * The optimizers of ai.onnx.preview.training (opset 1): Adagrad, Adam and
 * Momentum, each expanded at import into elementwise registry calls.
 *
 * Each takes a learning rate R (a float scalar), an update count T (an
 * int64 scalar) and n groups of equally long tensor lists (X, G, then H for
 * Adagrad, V for Momentum, V and H for Adam), and gives n updated tensors per
 * list after the first two inputs' kinds: X_new..., then the new state
 * lists. Tensor i of every list shares one shape. The updates are ONNX's
 * definitions, one formula per output, computed in X's dtype (R is cast to
 * it, T too where it enters as a number):
 *
 * - Adagrad: r = R / (1 + T decay_factor); g = norm_coefficient X + G;
 *   H' = H + g g; X' = X - r g / (sqrt(H') + epsilon);
 * - Momentum: g = norm_coefficient X + G; b = beta when T > 0, else 1;
 *   V' = alpha V + b g; X' = X - R V' (standard) or X - R (g + alpha V')
 *   (nesterov);
 * - Adam: g = norm_coefficient X + G; V' = alpha V + (1 - alpha) g;
 *   H' = beta H + (1 - beta) g g; r = R sqrt(1 - beta^T) / (1 - alpha^T)
 *   when T > 0, else R; X' = (1 - norm_coefficient_post)(X - r V' /
 *   (sqrt(H') + epsilon)).
 *
 * Why expansions and not operators: every step is an elementwise call the
 * registry has, so the interpreter, fold_constant and every compiled path
 * run them with no new kernel, fuse_ops puts each update into one loop, and
 * the result is exact to float rounding. T > 0 is a where() on the run-time
 * T, so a graph input T is fine (both arms are computed; the one not taken
 * may be NaN at T = 0 and is dropped).
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* One optimizer node being expanded: its inputs' layout and X's dtype. */
typedef struct kiln_onnx_optimizer_t {
  kiln_onnx_node_t *node;
  int count; /* n: tensors per list */
  kiln_dtype_t dtype;
  kiln_expr_t *rate;     /* R in dtype */
  kiln_expr_t *step;     /* T, int64 */
  kiln_expr_t *positive; /* T > 0, bool */
} kiln_onnx_optimizer_t;

static kiln_status_t kiln_onnx_opt_const(const kiln_onnx_optimizer_t *opt, double value,
                                         kiln_expr_t **out_expr) {
  return kiln_onnx_scalar(opt->node, opt->dtype, value, out_expr);
}

/* a op b. */
static kiln_status_t kiln_onnx_opt_binary(const kiln_onnx_optimizer_t *opt, const kiln_op_t *op,
                                          kiln_expr_t *a, kiln_expr_t *b, kiln_expr_t **out_expr) {
  return kiln_onnx_emit2(opt->node, op, a, b, NULL, out_expr);
}

/* a * x; a factor of 1 is no multiplication. */
static kiln_status_t kiln_onnx_opt_scaled(const kiln_onnx_optimizer_t *opt, double a,
                                          kiln_expr_t *x, kiln_expr_t **out_expr) {
  if (a == 1.0) {
    *out_expr = x;
    return KILN_OK;
  }
  kiln_expr_t *factor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_const(opt, a, &factor));
  return kiln_onnx_opt_binary(opt, &kiln_op_multiply, factor, x, out_expr);
}

/* a * x + b * y, a term left out when its factor is 0 (0 * x when both are). */
static kiln_status_t kiln_onnx_opt_axpby(const kiln_onnx_optimizer_t *opt, double a, kiln_expr_t *x,
                                         double b, kiln_expr_t *y, kiln_expr_t **out_expr) {
  kiln_expr_t *ax = NULL, *by = NULL;
  if (a != 0.0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_scaled(opt, a, x, &ax));
  }
  if (b != 0.0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_scaled(opt, b, y, &by));
  }
  if (ax && by) {
    return kiln_onnx_opt_binary(opt, &kiln_op_add, ax, by, out_expr);
  }
  if (ax || by) {
    *out_expr = ax ? ax : by;
    return KILN_OK;
  }
  return kiln_onnx_opt_scaled(opt, 0.0, x, out_expr);
}

/* where(T > 0, when_positive, otherwise). */
static kiln_status_t kiln_onnx_opt_if_positive(const kiln_onnx_optimizer_t *opt,
                                               kiln_expr_t *when_positive, kiln_expr_t *otherwise,
                                               kiln_expr_t **out_expr) {
  kiln_expr_t *args[3] = {opt->positive, when_positive, otherwise};
  return kiln_onnx_emit(opt->node, &kiln_op_where, 3, args, NULL, out_expr);
}

/* Input `list` * n + i after R and T, which must have X_i's shape. */
static kiln_status_t kiln_onnx_opt_input(const kiln_onnx_optimizer_t *opt, int list, int i,
                                         kiln_expr_t **out_expr) {
  int index = 2 + list * opt->count + i;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(opt->node, index, out_expr));
  const kiln_tensor_type_t *x = NULL, *t = kiln_onnx_type_of(*out_expr);
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(opt->node, 2 + i, &x));
  if (!t || t->dtype != x->dtype || !kiln_shape_equal(t->ndim, t->shape, x->ndim, x->shape)) {
    char have[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "input %d is %s %s; expected X%d's type, %s %s", index,
                       t ? kiln_dtype_name(t->dtype) : "a tuple",
                       t ? kiln_op_shape_text(t, have) : "", i + 1, kiln_dtype_name(x->dtype),
                       kiln_op_shape_text(x, want));
  }
  return KILN_OK;
}

/* A scalar input (one element, any rank up to 1). */
static kiln_status_t kiln_onnx_opt_scalar_input(kiln_onnx_node_t *node, int index, const char *what,
                                                kiln_expr_t **out_expr) {
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, index, out_expr));
  const kiln_tensor_type_t *type = kiln_onnx_type_of(*out_expr);
  int64_t count = 0;
  if (type && !kiln_status_consume_ok(kiln_shape_element_count(type->ndim, type->shape, &count))) {
    count = 0;
  }
  if (!type || count != 1) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "input %d (%s) must be a scalar; it is %s", index, what,
                       type ? kiln_op_shape_text(type, text) : "a tuple");
  }
  return KILN_OK;
}

/* Reads R and T and checks that the node has 2 + lists * n inputs and
 * (lists - 1) * n outputs. */
static kiln_status_t kiln_onnx_opt_begin(kiln_onnx_node_t *node, int lists,
                                         kiln_onnx_optimizer_t *out_opt) {
  int tensors = node->num_inputs - 2;
  if (tensors < lists || tensors % lists != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "expected R, T and %d lists of n tensors each (2 + %d n inputs); got %d "
                       "inputs",
                       lists, lists, node->num_inputs);
  }
  int n = tensors / lists;
  if (node->num_outputs != (lists - 1) * n) {
    return KILN_STATUS(INVALID_ARGUMENT, "with %d tensors per list expected %d outputs; got %d", n,
                       (lists - 1) * n, node->num_outputs);
  }
  kiln_onnx_optimizer_t opt = {.node = node, .count = n};
  kiln_expr_t *r = NULL, *zero = NULL;
  const kiln_tensor_type_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 2, &x));
  if (x->dtype != KILN_DTYPE_FLOAT32 && x->dtype != KILN_DTYPE_FLOAT64 &&
      x->dtype != KILN_DTYPE_FLOAT16 && x->dtype != KILN_DTYPE_BFLOAT16) {
    return KILN_STATUS(INVALID_ARGUMENT, "X1 has dtype %s; expected a floating-point dtype",
                       kiln_dtype_name(x->dtype));
  }
  opt.dtype = x->dtype;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_scalar_input(node, 0, "R", &r));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_scalar_input(node, 1, "T", &opt.step));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, r, 0, NULL, &r));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, opt.step, 0, NULL, &opt.step));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, r, opt.dtype, &opt.rate));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, opt.step, KILN_DTYPE_INT64, &opt.step));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 0.0, &zero));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(&opt, &kiln_op_greater, opt.step, zero, &opt.positive));
  *out_opt = opt;
  return KILN_OK;
}

/* g = norm_coefficient X + G. */
static kiln_status_t kiln_onnx_opt_gradient(const kiln_onnx_optimizer_t *opt, double norm,
                                            kiln_expr_t *x, kiln_expr_t *g,
                                            kiln_expr_t **out_expr) {
  return kiln_onnx_opt_axpby(opt, norm, x, 1.0, g, out_expr);
}

/* X - scale * step / (sqrt(h) + epsilon). */
static kiln_status_t kiln_onnx_opt_adaptive_step(const kiln_onnx_optimizer_t *opt, kiln_expr_t *x,
                                                 kiln_expr_t *scale, kiln_expr_t *step,
                                                 kiln_expr_t *h, double epsilon,
                                                 kiln_expr_t **out_expr) {
  kiln_expr_t *root = NULL, *eps = NULL, *update = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(opt->node, &kiln_op_sqrt, h, NULL, &root));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_const(opt, epsilon, &eps));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(opt, &kiln_op_add, root, eps, &root));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(opt, &kiln_op_divide, step, root, &update));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(opt, &kiln_op_multiply, scale, update, &update));
  return kiln_onnx_opt_binary(opt, &kiln_op_subtract, x, update, out_expr);
}

/* T in the optimizer's dtype. */
static kiln_status_t kiln_onnx_opt_step_value(const kiln_onnx_optimizer_t *opt,
                                              kiln_expr_t **out_expr) {
  return kiln_onnx_cast(opt->node, opt->step, opt->dtype, out_expr);
}

/* ---- Adagrad ---- */

/* r = R / (1 + T decay_factor). */
static kiln_status_t kiln_onnx_adagrad_rate(const kiln_onnx_optimizer_t *opt, double decay,
                                            kiln_expr_t **out_expr) {
  kiln_expr_t *t = NULL, *one = NULL, *denominator = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_step_value(opt, &t));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_const(opt, 1.0, &one));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_axpby(opt, decay, t, 1.0, one, &denominator));
  return kiln_onnx_opt_binary(opt, &kiln_op_divide, opt->rate, denominator, out_expr);
}

kiln_status_t kiln_onnx_convert_adagrad(kiln_onnx_node_t *node) {
  double decay = 0.0, epsilon = 0.0, norm = 0.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "decay_factor", 0.0, &decay));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "epsilon", 0.0, &epsilon));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "norm_coefficient", 0.0, &norm));
  kiln_onnx_optimizer_t opt;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_begin(node, 3, &opt));
  kiln_expr_t *rate = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_adagrad_rate(&opt, decay, &rate));
  for (int i = 0; i < opt.count; ++i) {
    kiln_expr_t *x = NULL, *g = NULL, *h = NULL, *squared = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 0, i, &x));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 1, i, &g));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 2, i, &h));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_gradient(&opt, norm, x, g, &g));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(&opt, &kiln_op_multiply, g, g, &squared));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(&opt, &kiln_op_add, h, squared, &h));
    node->outputs[opt.count + i] = h;
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_adaptive_step(&opt, x, rate, g, h, epsilon, &x));
    node->outputs[i] = x;
  }
  return KILN_OK;
}

/* ---- Momentum ---- */

typedef struct kiln_onnx_momentum_t {
  double alpha, beta, norm;
  bool nesterov;
} kiln_onnx_momentum_t;

static kiln_status_t kiln_onnx_momentum_read(const kiln_onnx_node_t *node,
                                             kiln_onnx_momentum_t *out_momentum) {
  static const char *const required[3] = {"alpha", "beta", "norm_coefficient"};
  for (int i = 0; i < 3; ++i) {
    if (!kiln_onnx_attr(node, required[i])) {
      return KILN_STATUS(INVALID_ARGUMENT, "attribute %s is required", required[i]);
    }
  }
  const char *mode = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 0.0, &out_momentum->alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "beta", 0.0, &out_momentum->beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "norm_coefficient", 0.0, &out_momentum->norm));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "", &mode));
  out_momentum->nesterov = strcmp(mode, "nesterov") == 0;
  if (!out_momentum->nesterov && strcmp(mode, "standard") != 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute mode is \"%s\"; expected standard or nesterov",
                       mode);
  }
  return KILN_OK;
}

/* V' = alpha V + b g, b = beta when T > 0, else 1. */
static kiln_status_t kiln_onnx_momentum_velocity(const kiln_onnx_optimizer_t *opt,
                                                 const kiln_onnx_momentum_t *m, kiln_expr_t *v,
                                                 kiln_expr_t *g, kiln_expr_t **out_expr) {
  kiln_expr_t *later = NULL, *first = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_axpby(opt, m->alpha, v, m->beta, g, &later));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_axpby(opt, m->alpha, v, 1.0, g, &first));
  return kiln_onnx_opt_if_positive(opt, later, first, out_expr);
}

kiln_status_t kiln_onnx_convert_momentum(kiln_onnx_node_t *node) {
  kiln_onnx_momentum_t m;
  KILN_RETURN_IF_ERROR(kiln_onnx_momentum_read(node, &m));
  kiln_onnx_optimizer_t opt;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_begin(node, 3, &opt));
  for (int i = 0; i < opt.count; ++i) {
    kiln_expr_t *x = NULL, *g = NULL, *v = NULL, *step = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 0, i, &x));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 1, i, &g));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 2, i, &v));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_gradient(&opt, m.norm, x, g, &g));
    KILN_RETURN_IF_ERROR(kiln_onnx_momentum_velocity(&opt, &m, v, g, &v));
    node->outputs[opt.count + i] = v;
    step = v;
    if (m.nesterov) {
      KILN_RETURN_IF_ERROR(kiln_onnx_opt_axpby(&opt, 1.0, g, m.alpha, v, &step));
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(&opt, &kiln_op_multiply, opt.rate, step, &step));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(&opt, &kiln_op_subtract, x, step, &node->outputs[i]));
  }
  return KILN_OK;
}

/* ---- Adam ---- */

typedef struct kiln_onnx_adam_t {
  double alpha, beta, epsilon, norm, norm_post;
} kiln_onnx_adam_t;

static kiln_status_t kiln_onnx_adam_read(const kiln_onnx_node_t *node, kiln_onnx_adam_t *out_adam) {
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 0.9, &out_adam->alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "beta", 0.999, &out_adam->beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "epsilon", 1e-6, &out_adam->epsilon));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "norm_coefficient", 0.0, &out_adam->norm));
  return kiln_onnx_attr_float(node, "norm_coefficient_post", 0.0, &out_adam->norm_post);
}

/* 1 - base^T. */
static kiln_status_t kiln_onnx_adam_bias(const kiln_onnx_optimizer_t *opt, double base,
                                         kiln_expr_t **out_expr) {
  kiln_expr_t *b = NULL, *t = NULL, *power = NULL, *one = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_const(opt, base, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_step_value(opt, &t));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(opt, &kiln_op_power, b, t, &power));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_const(opt, 1.0, &one));
  return kiln_onnx_opt_binary(opt, &kiln_op_subtract, one, power, out_expr);
}

/* r = R sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R. */
static kiln_status_t kiln_onnx_adam_rate(const kiln_onnx_optimizer_t *opt,
                                         const kiln_onnx_adam_t *adam, kiln_expr_t **out_expr) {
  kiln_expr_t *beta = NULL, *alpha = NULL, *rate = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_adam_bias(opt, adam->beta, &beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_adam_bias(opt, adam->alpha, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(opt->node, &kiln_op_sqrt, beta, NULL, &beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(opt, &kiln_op_multiply, opt->rate, beta, &rate));
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(opt, &kiln_op_divide, rate, alpha, &rate));
  return kiln_onnx_opt_if_positive(opt, rate, opt->rate, out_expr);
}

kiln_status_t kiln_onnx_convert_adam(kiln_onnx_node_t *node) {
  kiln_onnx_adam_t a;
  KILN_RETURN_IF_ERROR(kiln_onnx_adam_read(node, &a));
  kiln_onnx_optimizer_t opt;
  KILN_RETURN_IF_ERROR(kiln_onnx_opt_begin(node, 4, &opt));
  kiln_expr_t *rate = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_adam_rate(&opt, &a, &rate));
  for (int i = 0, n = opt.count; i < n; ++i) {
    kiln_expr_t *x = NULL, *g = NULL, *v = NULL, *h = NULL, *squared = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 0, i, &x));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 1, i, &g));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 2, i, &v));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_input(&opt, 3, i, &h));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_gradient(&opt, a.norm, x, g, &g));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_axpby(&opt, a.alpha, v, 1.0 - a.alpha, g, &v));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_binary(&opt, &kiln_op_multiply, g, g, &squared));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_axpby(&opt, a.beta, h, 1.0 - a.beta, squared, &h));
    node->outputs[n + i] = v;
    node->outputs[2 * n + i] = h;
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_adaptive_step(&opt, x, rate, v, h, a.epsilon, &x));
    KILN_RETURN_IF_ERROR(kiln_onnx_opt_scaled(&opt, 1.0 - a.norm_post, x, &node->outputs[i]));
  }
  return KILN_OK;
}
