/*
 * Tensor-expression operations: placeholders, computes and reductions.
 *
 * A compute makes one int32 variable per output dim (named i, j, k, l, ...
 * then ax<d>), calls fcompute with them through a builder on the caller's
 * arena, and checks the result: a scalar, loading only its inputs' buffers
 * (a visitor over the body). The output's buffer is a compact constant-shape
 * buffer named like the tensor. Reductions check their axes (REDUCE kind)
 * and make the identity init when none is given: 0 for sum, the dtype's
 * lowest value for max and highest for min (float32: -+3.4028234663852886e38,
 * as TVM's min_value/max_value).
 */
#include "te/te.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

#include "tir/functor.h"

const char *kiln_te_reducer_name(kiln_te_reducer_t reducer) {
  switch (reducer) {
  case KILN_TE_REDUCE_SUM:
    return "sum";
  case KILN_TE_REDUCE_MAX:
    return "max";
  case KILN_TE_REDUCE_MIN:
    return "min";
  case KILN_TE_REDUCE_NONE:
  case KILN_TE_REDUCE_COUNT_:
    break;
  }
  return "none";
}

static kiln_status_t check_shape(const char *what, const char *name, int ndim,
                                 const int64_t *shape) {
  if (ndim < 0 || ndim > KILN_TIR_MAX_DIMS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s %s: rank %d is outside [0, %d]", what, name, ndim,
                       KILN_TIR_MAX_DIMS);
  }
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] <= 0 || shape[d] > INT32_MAX) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s %s: extent %lld of dim %d must be in [1, 2^31)",
                         what, name, (long long)shape[d], d);
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_te_tensor_create(kiln_arena_t *arena, const char *name, int ndim,
                                    const int64_t *shape, kiln_dtype_t dtype,
                                    const kiln_te_operation_t *op, const kiln_te_tensor_t **out) {
  kiln_te_tensor_t *t = NULL;
  int64_t *shape_copy = NULL;
  char *name_copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*t), _Alignof(kiln_te_tensor_t), (void **)&t));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)ndim, sizeof(int64_t),
                                                 _Alignof(int64_t), (void **)&shape_copy));
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &name_copy));
  if (ndim > 0) {
    memcpy(shape_copy, shape, (size_t)ndim * sizeof(int64_t));
  }
  KILN_RETURN_IF_ERROR(
      kiln_tir_buffer_create_const(arena, name_copy, dtype, ndim, shape_copy, &t->buffer));
  t->name = name_copy;
  t->dtype = dtype;
  t->ndim = ndim;
  t->shape = shape_copy;
  t->op = op;
  *out = t;
  return KILN_OK;
}

kiln_status_t kiln_te_placeholder(kiln_arena_t *arena, const char *name, int ndim,
                                  const int64_t *shape, kiln_dtype_t dtype,
                                  const kiln_te_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(check_shape("placeholder", name, ndim, shape));
  kiln_te_operation_t *op = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*op), _Alignof(kiln_te_operation_t), (void **)&op));
  op->kind = KILN_TE_OP_PLACEHOLDER;
  op->name = name;
  const kiln_te_tensor_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_tensor_create(arena, name, ndim, shape, dtype, op, &t));
  op->name = t->name;
  *out_tensor = t;
  return KILN_OK;
}

static kiln_status_t make_iter_var(kiln_arena_t *arena, const char *name, int64_t min,
                                   int64_t extent, kiln_te_iter_kind_t kind,
                                   const kiln_te_iter_var_t **out) {
  kiln_te_iter_var_t *iv = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*iv), _Alignof(kiln_te_iter_var_t), (void **)&iv));
  char *name_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &name_copy));
  KILN_RETURN_IF_ERROR(
      kiln_tir_var_create(arena, name_copy, kiln_tir_scalar(KILN_DTYPE_INT32), &iv->var));
  iv->min = min;
  iv->extent = extent;
  iv->kind = kind;
  *out = iv;
  return KILN_OK;
}

kiln_status_t kiln_te_reduce_axis(kiln_arena_t *arena, const char *name, int64_t min,
                                  int64_t extent, const kiln_te_iter_var_t **out_axis) {
  *out_axis = NULL;
  if (extent <= 0 || min < INT32_MIN || extent > INT32_MAX || min + extent - 1 > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "reduce_axis %s: range [%lld, %lld + %lld) must be non-empty and fit int32",
                       name, (long long)min, (long long)min, (long long)extent);
  }
  return make_iter_var(arena, name, min, extent, KILN_TE_ITER_REDUCE, out_axis);
}

/* ---- the input check: which buffers a body loads ---- */

typedef struct load_checker_t {
  kiln_tir_visitor_t visitor; /* first */
  const char *name;
  int num_inputs;
  const kiln_te_tensor_t *const *inputs;
} load_checker_t;

static kiln_status_t check_load(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  const load_checker_t *c = (const load_checker_t *)self;
  const kiln_tir_buffer_load_t *load = (const kiln_tir_buffer_load_t *)expr;
  int found = 0;
  for (int i = 0; i < c->num_inputs && !found; ++i) {
    found = c->inputs[i]->buffer == load->buffer;
  }
  if (!found) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "compute %s: the body reads buffer %s, which is not one of its %d inputs",
                       c->name, load->buffer->name, c->num_inputs);
  }
  return kiln_tir_visitor_expr_children(self, expr);
}

static kiln_status_t check_body(const char *name, int num_inputs,
                                const kiln_te_tensor_t *const *inputs,
                                const kiln_tir_expr_t *body) {
  if (body->dtype.lanes != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute %s: the body must be a scalar, not %d lanes",
                       name, body->dtype.lanes);
  }
  load_checker_t c;
  kiln_tir_visitor_initialize(&c.visitor);
  c.visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = check_load;
  c.name = name;
  c.num_inputs = num_inputs;
  c.inputs = inputs;
  return kiln_tir_visitor_visit_expr(&c.visitor, body);
}

/* ---- computes ---- */

static kiln_status_t make_axes(kiln_arena_t *arena, int ndim, const int64_t *shape,
                               const kiln_te_iter_var_t ***out_axes) {
  static const char *const names[] = {"i", "j", "k", "l", "m", "n"};
  const kiln_te_iter_var_t **axes = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)ndim, sizeof(*axes),
                                                 _Alignof(kiln_te_iter_var_t *), (void **)&axes));
  for (int d = 0; d < ndim; ++d) {
    char name[16];
    if (d < 6) {
      snprintf(name, sizeof(name), "%s", names[d]);
    } else {
      snprintf(name, sizeof(name), "ax%d", d);
    }
    KILN_RETURN_IF_ERROR(make_iter_var(arena, name, 0, shape[d], KILN_TE_ITER_DATA_PAR, &axes[d]));
  }
  *out_axes = axes;
  return KILN_OK;
}

static kiln_status_t identity_init(kiln_arena_t *arena, kiln_te_reducer_t reducer,
                                   kiln_tir_dtype_t dtype, const kiln_tir_expr_t **out) {
  int is_float = kiln_tir_dtype_is_float(dtype);
  if (reducer == KILN_TE_REDUCE_SUM) {
    return is_float ? kiln_tir_float_imm_create(arena, dtype, 0.0, out)
                    : kiln_tir_int_imm_create(arena, dtype, 0, out);
  }
  int lowest = reducer == KILN_TE_REDUCE_MAX;
  if (is_float) {
    double big = dtype.base == KILN_DTYPE_FLOAT32 ? (double)FLT_MAX : DBL_MAX;
    return kiln_tir_float_imm_create(arena, dtype, lowest ? -big : big, out);
  }
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(dtype.base, &lo, &hi);
  return kiln_tir_int_imm_create(arena, dtype, lowest ? lo : hi, out);
}

static kiln_status_t build_body(kiln_arena_t *arena, kiln_te_operation_t *op,
                                kiln_te_fcompute_fn fcompute, void *user) {
  const kiln_tir_expr_t *indices[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < op->num_axes; ++d) {
    indices[d] = &op->axes[d]->var->base;
  }
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, arena);
  const kiln_tir_expr_t *body = fcompute(&b, indices, user);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_builder_finish(&b), "compute %s", op->name);
  if (!body) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute %s: fcompute returned no expression", op->name);
  }
  KILN_RETURN_IF_ERROR(check_body(op->name, op->num_inputs, op->inputs, body));
  op->body = body;
  return KILN_OK;
}

static kiln_status_t check_reduce_axes(const char *name, kiln_te_reducer_t reducer, int count,
                                       const kiln_te_iter_var_t *const *axes) {
  if (reducer <= KILN_TE_REDUCE_NONE || reducer >= KILN_TE_REDUCE_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute %s: invalid reducer %d", name, (int)reducer);
  }
  if (count < 1 || count > KILN_TE_MAX_REDUCE_AXES) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute %s: %d reduce axes, expected 1 to %d", name,
                       count, KILN_TE_MAX_REDUCE_AXES);
  }
  for (int r = 0; r < count; ++r) {
    if (axes[r]->kind != KILN_TE_ITER_REDUCE) {
      return KILN_STATUS(INVALID_ARGUMENT, "compute %s: axis %s is not a reduce axis", name,
                         axes[r]->var->name);
    }
  }
  return KILN_OK;
}

static kiln_status_t make_compute(kiln_arena_t *arena, const char *name, int ndim,
                                  const int64_t *shape, int num_inputs,
                                  const kiln_te_tensor_t *const *inputs,
                                  kiln_te_operation_t **out_op) {
  KILN_RETURN_IF_ERROR(check_shape("compute", name, ndim, shape));
  if (num_inputs < 0 || num_inputs > KILN_TE_MAX_INPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "compute %s: %d inputs, at most %d", name, num_inputs,
                       KILN_TE_MAX_INPUTS);
  }
  kiln_te_operation_t *op = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(arena, sizeof(*op), _Alignof(kiln_te_operation_t), (void **)&op));
  char *name_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(arena, name, &name_copy));
  const kiln_te_tensor_t **inputs_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)num_inputs, sizeof(*inputs_copy),
                                                 _Alignof(kiln_te_tensor_t *),
                                                 (void **)&inputs_copy));
  if (num_inputs > 0) {
    memcpy(inputs_copy, inputs, (size_t)num_inputs * sizeof(*inputs_copy));
  }
  const kiln_te_iter_var_t **axes = NULL;
  KILN_RETURN_IF_ERROR(make_axes(arena, ndim, shape, &axes));
  op->kind = KILN_TE_OP_COMPUTE;
  op->name = name_copy;
  op->num_axes = ndim;
  op->axes = axes;
  op->num_inputs = num_inputs;
  op->inputs = inputs_copy;
  *out_op = op;
  return KILN_OK;
}

kiln_status_t kiln_te_compute(kiln_arena_t *arena, const char *name, int ndim, const int64_t *shape,
                              int num_inputs, const kiln_te_tensor_t *const *inputs,
                              kiln_te_fcompute_fn fcompute, void *user,
                              const kiln_te_tensor_t **out_tensor) {
  *out_tensor = NULL;
  kiln_te_operation_t *op = NULL;
  KILN_RETURN_IF_ERROR(make_compute(arena, name, ndim, shape, num_inputs, inputs, &op));
  KILN_RETURN_IF_ERROR(build_body(arena, op, fcompute, user));
  return kiln_te_tensor_create(arena, op->name, ndim, shape, op->body->dtype.base, op, out_tensor);
}

kiln_status_t kiln_te_compute_reduce(kiln_arena_t *arena, const char *name, int ndim,
                                     const int64_t *shape, kiln_te_reducer_t reducer,
                                     const kiln_tir_expr_t *init, int num_reduce_axes,
                                     const kiln_te_iter_var_t *const *reduce_axes, int num_inputs,
                                     const kiln_te_tensor_t *const *inputs,
                                     kiln_te_fcompute_fn fcompute, void *user,
                                     const kiln_te_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(check_reduce_axes(name, reducer, num_reduce_axes, reduce_axes));
  kiln_te_operation_t *op = NULL;
  KILN_RETURN_IF_ERROR(make_compute(arena, name, ndim, shape, num_inputs, inputs, &op));
  const kiln_te_iter_var_t **raxes = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)num_reduce_axes, sizeof(*raxes),
                                                 _Alignof(kiln_te_iter_var_t *), (void **)&raxes));
  memcpy(raxes, reduce_axes, (size_t)num_reduce_axes * sizeof(*raxes));
  op->num_reduce_axes = num_reduce_axes;
  op->reduce_axes = raxes;
  op->reducer = reducer;
  KILN_RETURN_IF_ERROR(build_body(arena, op, fcompute, user));
  if (init && !kiln_tir_dtype_equal(init->dtype, op->body->dtype)) {
    char a[24], b[24];
    return KILN_STATUS(INVALID_ARGUMENT, "compute %s: init is %s but the body is %s", op->name,
                       kiln_tir_dtype_format(init->dtype, a),
                       kiln_tir_dtype_format(op->body->dtype, b));
  }
  if (!init) {
    KILN_RETURN_IF_ERROR(identity_init(arena, reducer, op->body->dtype, &init));
  }
  op->init = init;
  return kiln_te_tensor_create(arena, op->name, ndim, shape, op->body->dtype.base, op, out_tensor);
}

const kiln_tir_expr_t *kiln_te_read(kiln_tir_builder_t *b, const kiln_te_tensor_t *tensor, int n,
                                    const kiln_tir_expr_t *const *indices) {
  if (tensor && n == 0) {
    const kiln_tir_expr_t *zero = kiln_tir_b_i32(b, 0);
    return kiln_tir_b_load(b, tensor->buffer, 1, &zero);
  }
  return tensor ? kiln_tir_b_load(b, tensor->buffer, n, indices) : NULL;
}

/* ---- extern ops ---- */

/* Largest nesting of Allocates inside one extern body. */
#define KILN_TE_EXTERN_MAX_SCRATCH 16

typedef struct store_checker_t {
  kiln_tir_visitor_t visitor; /* first */
  const kiln_te_operation_t *op;
  int num_scratch; /* the Allocates around the node being visited */
  const kiln_tir_buffer_t *scratch[KILN_TE_EXTERN_MAX_SCRATCH];
} store_checker_t;

static int is_scratch(const store_checker_t *c, const kiln_tir_buffer_t *buffer) {
  for (int i = 0; i < c->num_scratch; ++i) {
    if (c->scratch[i] == buffer) {
      return 1;
    }
  }
  return 0;
}

/* A buffer the body allocates itself is the body's to read and write. */
static kiln_status_t check_extern_allocate(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  store_checker_t *c = (store_checker_t *)self;
  if (c->num_scratch == KILN_TE_EXTERN_MAX_SCRATCH) {
    return KILN_STATUS(INVALID_ARGUMENT, "extern %s: more than %d nested Allocates", c->op->name,
                       KILN_TE_EXTERN_MAX_SCRATCH);
  }
  c->scratch[c->num_scratch++] = ((const kiln_tir_allocate_t *)stmt)->buffer;
  kiln_status_t status = kiln_tir_visitor_stmt_children(self, stmt);
  c->num_scratch--;
  return status;
}

static int op_has_buffer(int count, const kiln_te_tensor_t *const *tensors,
                         const kiln_tir_buffer_t *buffer) {
  for (int i = 0; i < count; ++i) {
    if (tensors[i]->buffer == buffer) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t check_extern_load(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  const store_checker_t *c = (const store_checker_t *)self;
  const kiln_te_operation_t *op = c->op;
  const kiln_tir_buffer_t *buffer = ((const kiln_tir_buffer_load_t *)expr)->buffer;
  if (!is_scratch(c, buffer) && !op_has_buffer(op->num_inputs, op->inputs, buffer) &&
      !op_has_buffer(op->num_outputs, op->outputs, buffer)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "extern %s: the body reads buffer %s, which is none of its inputs or "
                       "outputs",
                       op->name, buffer->name);
  }
  return kiln_tir_visitor_expr_children(self, expr);
}

static kiln_status_t check_extern_store(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  const store_checker_t *c = (const store_checker_t *)self;
  const kiln_te_operation_t *op = c->op;
  const kiln_tir_buffer_t *buffer = ((const kiln_tir_buffer_store_t *)stmt)->buffer;
  if (!is_scratch(c, buffer) && !op_has_buffer(op->num_outputs, op->outputs, buffer)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "extern %s: the body writes buffer %s, which is not one of its outputs",
                       op->name, buffer->name);
  }
  return kiln_tir_visitor_stmt_children(self, stmt);
}

static kiln_status_t build_extern_body(kiln_arena_t *arena, kiln_te_operation_t *op,
                                       kiln_te_fextern_fn fbody, void *user) {
  const kiln_tir_buffer_t *in[KILN_TE_MAX_INPUTS], *out[KILN_TE_MAX_INPUTS];
  for (int i = 0; i < op->num_inputs; ++i) {
    in[i] = op->inputs[i]->buffer;
  }
  for (int i = 0; i < op->num_outputs; ++i) {
    out[i] = op->outputs[i]->buffer;
  }
  kiln_tir_builder_t b;
  kiln_tir_builder_initialize(&b, arena);
  const kiln_tir_stmt_t *body = fbody(&b, in, out, user);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_builder_finish(&b), "extern %s", op->name);
  if (!body) {
    return KILN_STATUS(INVALID_ARGUMENT, "extern %s: fbody returned no statement", op->name);
  }
  store_checker_t c;
  kiln_tir_visitor_initialize(&c.visitor);
  c.visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = check_extern_load;
  c.visitor.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = check_extern_store;
  c.visitor.stmt_rules[KILN_TIR_STMT_ALLOCATE] = check_extern_allocate;
  c.num_scratch = 0;
  c.op = op;
  KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_stmt(&c.visitor, body));
  op->extern_body = body;
  return KILN_OK;
}

kiln_status_t kiln_te_extern(kiln_arena_t *arena, const char *name, int num_outputs,
                             const kiln_te_extern_output_t *outputs, int num_inputs,
                             const kiln_te_tensor_t *const *inputs, kiln_te_fextern_fn fbody,
                             void *user, const kiln_te_tensor_t **out_tensors) {
  if (num_outputs < 1 || num_outputs > KILN_TE_MAX_INPUTS || num_inputs < 0 ||
      num_inputs > KILN_TE_MAX_INPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "extern %s: %d outputs and %d inputs, at most %d each",
                       name, num_outputs, num_inputs, KILN_TE_MAX_INPUTS);
  }
  for (int i = 0; i < num_outputs; ++i) {
    out_tensors[i] = NULL;
    KILN_RETURN_IF_ERROR(check_shape("extern", name, outputs[i].ndim, outputs[i].shape));
  }
  kiln_te_operation_t *op = NULL;
  KILN_RETURN_IF_ERROR(make_compute(arena, name, 0, NULL, num_inputs, inputs, &op));
  op->kind = KILN_TE_OP_EXTERN;
  const kiln_te_tensor_t **outs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)num_outputs, sizeof(*outs),
                                                 _Alignof(kiln_te_tensor_t *), (void **)&outs));
  for (int i = 0; i < num_outputs; ++i) {
    KILN_RETURN_IF_ERROR(kiln_te_tensor_create(arena, outputs[i].name, outputs[i].ndim,
                                               outputs[i].shape, outputs[i].dtype, op, &outs[i]));
  }
  op->num_outputs = num_outputs;
  op->outputs = outs;
  KILN_RETURN_IF_ERROR(build_extern_body(arena, op, fbody, user));
  memcpy(out_tensors, outs, (size_t)num_outputs * sizeof(*outs));
  return KILN_OK;
}

const kiln_te_iter_var_t *kiln_te_tensor_axis(const kiln_te_tensor_t *tensor, int i) {
  if (tensor->op->kind != KILN_TE_OP_COMPUTE || i < 0 || i >= tensor->op->num_axes) {
    return NULL;
  }
  return tensor->op->axes[i];
}
