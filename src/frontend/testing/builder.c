/*
 * The graph builder of the built-in networks; see builder.h for the design.
 *
 * Each layer call is: make its weights (builder_weight: Var, tensor, params
 * entry), make its attrs (defaults, then field writes or text), make the
 * Call. Integer lists for public attrs structs are copied into the module's
 * arena (builder_ints); private ones are spelled as text ("[1, 128, 4, 64]")
 * and parsed by the registry, the same path the text format takes.
 */
#include "frontend/testing/builder.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "frontend/testing/random.h"
#include "ir/infer.h"
#include "ir/verify.h"
#include "op/nn_common.h"

kiln_status_t kiln_builder_initialize(kiln_builder_t *builder, kiln_allocator_t allocator,
                                      kiln_params_t *params, uint64_t seed) {
  memset(builder, 0, sizeof(*builder));
  builder->allocator = allocator;
  builder->params = params;
  builder->params_at_start = kiln_params_count(params);
  builder->seed = seed;
  builder->weight_gain = sqrt(2.0);
  kiln_array_initialize(&builder->vars, allocator, sizeof(kiln_var_t *));
  return kiln_module_create(allocator, &builder->module);
}

/* Removes the params entries added since the builder started. */
static void kiln_builder_rollback_params(kiln_builder_t *builder) {
  kiln_params_t *params = builder->params;
  kiln_param_entry_t entry;
  while (kiln_params_count(params) > builder->params_at_start &&
         kiln_array_pop(&params->entries, &entry)) {
    kiln_allocator_free(params->allocator, entry.name);
    kiln_tensor_release(entry.tensor);
  }
}

void kiln_builder_deinitialize(kiln_builder_t *builder) {
  if (builder->module) {
    kiln_module_destroy(builder->module);
    builder->module = NULL;
    kiln_builder_rollback_params(builder);
  }
  kiln_array_deinitialize(&builder->vars);
}

kiln_status_t kiln_builder_prefix(char *buffer, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int length = vsnprintf(buffer, KILN_BUILDER_NAME_CAPACITY, format, args);
  va_end(args);
  if (length < 0 || length >= KILN_BUILDER_NAME_CAPACITY) {
    return KILN_STATUS(INVALID_ARGUMENT, "name prefix \"%s...\" is longer than %d characters",
                       buffer, KILN_BUILDER_NAME_CAPACITY - 1);
  }
  return KILN_OK;
}

/* ---- parameters ---- */

static kiln_status_t kiln_builder_var(kiln_builder_t *builder, const char *name, int ndim,
                                      const int64_t *shape, kiln_var_t **out_var) {
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_type_create(kiln_module_arena(builder->module),
                                               KILN_DTYPE_FLOAT32, ndim, shape, &type));
  KILN_RETURN_IF_ERROR(kiln_ir_var_create(builder->module, name, type, out_var));
  return kiln_array_push(&builder->vars, out_var);
}

kiln_status_t kiln_builder_input(kiln_builder_t *builder, const char *name, int ndim,
                                 const int64_t *shape, kiln_expr_t **out_expr) {
  kiln_var_t *var = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_var(builder, name, ndim, shape, &var));
  *out_expr = &var->base;
  return KILN_OK;
}

kiln_status_t kiln_builder_image_input(kiln_builder_t *builder, int64_t batch_size,
                                       int64_t image_size, kiln_expr_t **out_expr) {
  const int64_t shape[4] = {batch_size, 3, image_size, image_size};
  return kiln_builder_input(builder, "data", 4, shape, out_expr);
}

/* A random tensor for parameter `name`, added to the params. */
static kiln_status_t kiln_builder_tensor(kiln_builder_t *builder, const char *name, int ndim,
                                         const int64_t *shape, float lo, float hi) {
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(builder->allocator, KILN_DTYPE_FLOAT32, ndim, shape, &tensor));
  kiln_random_t random;
  kiln_random_initialize(&random, builder->seed, name);
  kiln_random_fill_uniform(&random, kiln_tensor_data(tensor), kiln_tensor_element_count(tensor), lo,
                           hi);
  kiln_status_t status = kiln_params_add(builder->params, name, tensor);
  kiln_tensor_release(tensor); /* the params hold their own reference */
  return status;
}

kiln_status_t kiln_builder_weight(kiln_builder_t *builder, const char *prefix, const char *suffix,
                                  int ndim, const int64_t *shape, float lo, float hi,
                                  kiln_expr_t **out_expr) {
  char name[KILN_BUILDER_NAME_CAPACITY];
  int length = snprintf(name, sizeof(name), "%s%s", prefix, suffix);
  if (length < 0 || (size_t)length >= sizeof(name)) {
    return KILN_STATUS(INVALID_ARGUMENT, "parameter name \"%s%s\" is longer than %d characters",
                       prefix, suffix, KILN_BUILDER_NAME_CAPACITY - 1);
  }
  kiln_var_t *var = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_var(builder, name, ndim, shape, &var));
  KILN_RETURN_IF_ERROR(kiln_builder_tensor(builder, name, ndim, shape, lo, hi));
  *out_expr = &var->base;
  return KILN_OK;
}

/* A weight matrix or kernel with `fan_in` inputs per output. */
static kiln_status_t kiln_builder_fan_in_weight(kiln_builder_t *builder, const char *prefix,
                                                int ndim, const int64_t *shape, int64_t fan_in,
                                                kiln_expr_t **out_expr) {
  float bound = (float)(builder->weight_gain * sqrt(3.0 / (double)fan_in));
  return kiln_builder_weight(builder, prefix, "_weight", ndim, shape, -bound, bound, out_expr);
}

static kiln_status_t kiln_builder_vector(kiln_builder_t *builder, const char *prefix,
                                         const char *suffix, int64_t length, float lo, float hi,
                                         kiln_expr_t **out_expr) {
  return kiln_builder_weight(builder, prefix, suffix, 1, &length, lo, hi, out_expr);
}

/* ---- calls and attrs ---- */

kiln_status_t kiln_builder_call(kiln_builder_t *builder, const kiln_op_t *op, int num_args,
                                kiln_expr_t *const *args, const void *attrs,
                                kiln_expr_t **out_expr) {
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(builder->module, op, num_args, args, attrs, &call));
  *out_expr = &call->base;
  return KILN_OK;
}

static kiln_status_t kiln_builder_call1(kiln_builder_t *builder, const kiln_op_t *op,
                                        kiln_expr_t *data, const void *attrs,
                                        kiln_expr_t **out_expr) {
  return kiln_builder_call(builder, op, 1, &data, attrs, out_expr);
}

static kiln_status_t kiln_builder_attrs(kiln_builder_t *builder, const kiln_op_t *op,
                                        void **out_attrs) {
  return kiln_op_attrs_create_default(op, kiln_module_arena(builder->module), out_attrs);
}

/* `count` values copied into the module's arena. */
static kiln_status_t kiln_builder_ints(kiln_builder_t *builder, int32_t count,
                                       const int64_t *values, kiln_ints_t *out_ints) {
  int64_t *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(kiln_module_arena(builder->module), (size_t)count,
                                                 sizeof(int64_t), _Alignof(int64_t),
                                                 (void **)&copy));
  memcpy(copy, values, (size_t)count * sizeof(int64_t));
  *out_ints = (kiln_ints_t){count, copy};
  return KILN_OK;
}

/* Sets a private attrs field of integer list kind from `count` values. */
static kiln_status_t kiln_builder_set_ints_text(kiln_builder_t *builder, const kiln_op_t *op,
                                                void *attrs, const char *field, int count,
                                                const int64_t *values) {
  char text[KILN_MAX_RANK * 24 + 4];
  size_t used = 0;
  text[used++] = '[';
  for (int i = 0; i < count; ++i) {
    used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%lld", i ? ", " : "",
                             (long long)values[i]);
  }
  snprintf(text + used, sizeof(text) - used, "]");
  return kiln_op_attrs_set_text(op, attrs, field, text, kiln_module_arena(builder->module));
}

/* ---- layers with weights ---- */

static kiln_status_t kiln_builder_conv_attrs(kiln_builder_t *builder,
                                             const kiln_builder_conv_t *conv,
                                             kiln_nn_conv2d_attrs_t **out_attrs) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_conv2d, &attrs));
  kiln_nn_conv2d_attrs_t *a = attrs;
  const int64_t strides[2] = {conv->stride, conv->stride};
  const int64_t padding[4] = {conv->padding, conv->padding, conv->padding, conv->padding};
  const int64_t kernel_size[2] = {conv->kernel, conv->kernel};
  KILN_RETURN_IF_ERROR(kiln_builder_ints(builder, 2, strides, &a->strides));
  KILN_RETURN_IF_ERROR(kiln_builder_ints(builder, 4, padding, &a->padding));
  KILN_RETURN_IF_ERROR(kiln_builder_ints(builder, 2, kernel_size, &a->kernel_size));
  a->groups = conv->groups;
  a->channels = conv->out_channels;
  *out_attrs = a;
  return KILN_OK;
}

/* nn.bias_add of "<prefix>_bias" (length,) on `axis`. */
static kiln_status_t kiln_builder_bias_add(kiln_builder_t *builder, const char *prefix,
                                           int64_t length, int64_t axis, kiln_expr_t *data,
                                           kiln_expr_t **out_expr) {
  kiln_expr_t *args[2] = {data, NULL};
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_bias", length, -0.1f, 0.1f, &args[1]));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_bias_add, &attrs));
  ((kiln_nn_axis_attrs_t *)attrs)->axis = axis;
  return kiln_builder_call(builder, &kiln_op_bias_add, 2, args, attrs, out_expr);
}

kiln_status_t kiln_builder_conv2d(kiln_builder_t *builder, const kiln_builder_conv_t *conv,
                                  kiln_expr_t *data, kiln_expr_t **out_expr) {
  int64_t in_per_group = conv->in_channels / conv->groups;
  const int64_t shape[4] = {conv->out_channels, in_per_group, conv->kernel, conv->kernel};
  kiln_expr_t *args[2] = {data, NULL};
  KILN_RETURN_IF_ERROR(kiln_builder_fan_in_weight(
      builder, conv->prefix, 4, shape, in_per_group * conv->kernel * conv->kernel, &args[1]));
  kiln_nn_conv2d_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_conv_attrs(builder, conv, &attrs));
  if (!conv->bias) {
    return kiln_builder_call(builder, &kiln_op_conv2d, 2, args, attrs, out_expr);
  }
  kiln_expr_t *convolved = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_call(builder, &kiln_op_conv2d, 2, args, attrs, &convolved));
  return kiln_builder_bias_add(builder, conv->prefix, conv->out_channels, 1, convolved, out_expr);
}

kiln_status_t kiln_builder_batch_norm(kiln_builder_t *builder, const char *prefix, int64_t channels,
                                      kiln_expr_t *data, kiln_expr_t **out_expr) {
  kiln_expr_t *args[5] = {data, NULL, NULL, NULL, NULL};
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_weight", channels, 0.8f, 1.2f, &args[1]));
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_bias", channels, -0.1f, 0.1f, &args[2]));
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_running_mean", channels, -0.1f, 0.1f, &args[3]));
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_running_var", channels, 0.5f, 1.5f, &args[4]));
  /* The defaults are axis 1, epsilon 1e-5, center and scale: torchvision's. */
  return kiln_builder_call(builder, &kiln_op_batch_norm, 5, args, NULL, out_expr);
}

kiln_status_t kiln_builder_dense(kiln_builder_t *builder, const char *prefix, int64_t in_features,
                                 int64_t out_features, kiln_expr_t *data, kiln_expr_t **out_expr) {
  const int64_t shape[2] = {out_features, in_features};
  kiln_expr_t *args[2] = {data, NULL};
  KILN_RETURN_IF_ERROR(
      kiln_builder_fan_in_weight(builder, prefix, 2, shape, in_features, &args[1]));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_dense, &attrs));
  ((kiln_nn_dense_attrs_t *)attrs)->units = out_features;
  kiln_expr_t *product = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_call(builder, &kiln_op_dense, 2, args, attrs, &product));
  return kiln_builder_bias_add(builder, prefix, out_features, -1, product, out_expr);
}

kiln_status_t kiln_builder_layer_norm(kiln_builder_t *builder, const char *prefix, int64_t features,
                                      kiln_expr_t *data, kiln_expr_t **out_expr) {
  kiln_expr_t *args[3] = {data, NULL, NULL};
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_weight", features, 0.9f, 1.1f, &args[1]));
  KILN_RETURN_IF_ERROR(
      kiln_builder_vector(builder, prefix, "_bias", features, -0.1f, 0.1f, &args[2]));
  /* The defaults are axis -1 and epsilon 1e-5: PyTorch's nn.LayerNorm. */
  return kiln_builder_call(builder, &kiln_op_layer_norm, 3, args, NULL, out_expr);
}

/* ---- layers without weights ---- */

kiln_status_t kiln_builder_relu(kiln_builder_t *builder, kiln_expr_t *data,
                                kiln_expr_t **out_expr) {
  return kiln_builder_call1(builder, &kiln_op_relu, data, NULL, out_expr);
}

kiln_status_t kiln_builder_relu6(kiln_builder_t *builder, kiln_expr_t *data,
                                 kiln_expr_t **out_expr) {
  void *attrs = NULL;
  kiln_arena_t *arena = kiln_module_arena(builder->module);
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_clip, &attrs));
  KILN_RETURN_IF_ERROR(kiln_op_attrs_set_text(&kiln_op_clip, attrs, "a_min", "0.0", arena));
  KILN_RETURN_IF_ERROR(kiln_op_attrs_set_text(&kiln_op_clip, attrs, "a_max", "6.0", arena));
  return kiln_builder_call1(builder, &kiln_op_clip, data, attrs, out_expr);
}

kiln_status_t kiln_builder_add(kiln_builder_t *builder, kiln_expr_t *lhs, kiln_expr_t *rhs,
                               kiln_expr_t **out_expr) {
  kiln_expr_t *args[2] = {lhs, rhs};
  return kiln_builder_call(builder, &kiln_op_add, 2, args, NULL, out_expr);
}

kiln_status_t kiln_builder_scale(kiln_builder_t *builder, kiln_expr_t *data, float value,
                                 kiln_expr_t **out_expr) {
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(builder->allocator, KILN_DTYPE_FLOAT32, 0, NULL,
                                               &value, sizeof(value), &tensor));
  kiln_constant_t *constant = NULL;
  kiln_status_t status = kiln_ir_constant_create(builder->module, tensor, &constant);
  kiln_tensor_release(tensor); /* the module holds its own reference */
  KILN_RETURN_IF_ERROR(status);
  kiln_expr_t *args[2] = {data, &constant->base};
  return kiln_builder_call(builder, &kiln_op_multiply, 2, args, NULL, out_expr);
}

kiln_status_t kiln_builder_max_pool2d(kiln_builder_t *builder, kiln_expr_t *data, int64_t pool,
                                      int64_t stride, int64_t padding, bool ceil_mode,
                                      kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_max_pool2d, &attrs));
  kiln_nn_pool2d_attrs_t *a = attrs;
  const int64_t pool_size[2] = {pool, pool};
  const int64_t strides[2] = {stride, stride};
  const int64_t pads[4] = {padding, padding, padding, padding};
  KILN_RETURN_IF_ERROR(kiln_builder_ints(builder, 2, pool_size, &a->pool_size));
  KILN_RETURN_IF_ERROR(kiln_builder_ints(builder, 2, strides, &a->strides));
  KILN_RETURN_IF_ERROR(kiln_builder_ints(builder, 4, pads, &a->padding));
  a->ceil_mode = ceil_mode;
  return kiln_builder_call1(builder, &kiln_op_max_pool2d, data, a, out_expr);
}

kiln_status_t kiln_builder_pool_flatten(kiln_builder_t *builder, kiln_expr_t *data,
                                        kiln_expr_t **out_expr) {
  kiln_expr_t *pooled = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_builder_call1(builder, &kiln_op_global_avg_pool2d, data, NULL, &pooled));
  return kiln_builder_call1(builder, &kiln_op_batch_flatten, pooled, NULL, out_expr);
}

kiln_status_t kiln_builder_concatenate(kiln_builder_t *builder, int count,
                                       kiln_expr_t *const *inputs, int64_t axis,
                                       kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_concatenate, &attrs));
  char text[24];
  snprintf(text, sizeof(text), "%lld", (long long)axis);
  KILN_RETURN_IF_ERROR(kiln_op_attrs_set_text(&kiln_op_concatenate, attrs, "axis", text,
                                              kiln_module_arena(builder->module)));
  return kiln_builder_call(builder, &kiln_op_concatenate, count, inputs, attrs, out_expr);
}

/* A one-input operator whose one attribute `field` is a list of integers. */
static kiln_status_t kiln_builder_ints_call(kiln_builder_t *builder, const kiln_op_t *op,
                                            const char *field, int count, const int64_t *values,
                                            kiln_expr_t *data, kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_builder_set_ints_text(builder, op, attrs, field, count, values));
  return kiln_builder_call1(builder, op, data, attrs, out_expr);
}

kiln_status_t kiln_builder_reshape(kiln_builder_t *builder, kiln_expr_t *data, int ndim,
                                   const int64_t *shape, kiln_expr_t **out_expr) {
  return kiln_builder_ints_call(builder, &kiln_op_reshape, "newshape", ndim, shape, data, out_expr);
}

kiln_status_t kiln_builder_transpose(kiln_builder_t *builder, kiln_expr_t *data, int ndim,
                                     const int64_t *axes, kiln_expr_t **out_expr) {
  return kiln_builder_ints_call(builder, &kiln_op_transpose, "axes", ndim, axes, data, out_expr);
}

kiln_status_t kiln_builder_batch_matmul(kiln_builder_t *builder, kiln_expr_t *x, kiln_expr_t *y,
                                        bool transpose_b, kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_attrs(builder, &kiln_op_batch_matmul, &attrs));
  kiln_nn_batch_matmul_attrs_t *a = attrs;
  a->transpose_a = false;
  a->transpose_b = transpose_b;
  kiln_expr_t *args[2] = {x, y};
  return kiln_builder_call(builder, &kiln_op_batch_matmul, 2, args, a, out_expr);
}

/* ---- the result ---- */

kiln_status_t kiln_builder_finish(kiln_builder_t *builder, kiln_expr_t *body,
                                  kiln_module_t **out_module) {
  kiln_function_t *main_function = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_function_create(builder->module, (int)kiln_array_count(&builder->vars),
                              kiln_array_data(&builder->vars), body, &main_function));
  KILN_RETURN_IF_ERROR(kiln_module_add_function(builder->module, "main", main_function));
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(builder->module));
  KILN_RETURN_IF_ERROR(kiln_ir_verify(builder->module));
  *out_module = builder->module;
  builder->module = NULL;
  return KILN_OK;
}
