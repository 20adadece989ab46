/*
 * A small graph builder shared by the built-in networks: one call per layer
 * (conv2d with its weight, batch_norm with its four vectors, dense with its
 * bias, ...), each returning the layer's output expression.
 *
 * The builder owns the module while a network is being built and the list
 * of main's parameters: the data input first, then one Var per weight in the
 * order the layers create them. A weight is a Var annotated with its exact
 * type plus a float32 tensor of the same shape added to the caller's params
 * under the same name, filled from its own random stream (random.h), so the
 * Var list and the params list always agree. Layer calls take a name prefix
 * (torchvision's state-dict path with '.' as '_': "layer1_0_conv1") and add
 * the suffix ("_weight", "_bias", "_running_mean", ...). Attribute structs
 * are made with the operator's defaults and then changed: by direct field
 * writes where the struct is public (nn_common.h), by their text spelling
 * where it is private to the operator's file (reshape, transpose, clip).
 * Operators and attrs are not checked as they are added; kiln_builder_finish
 * runs type inference and the verifier once over the whole function, whose
 * errors name the failing node. On any failure the caller deinitializes the
 * builder, which destroys the module and removes from the params whatever
 * this builder added, so a failed build leaves the caller's params as they
 * were.
 *
 * Weight initialization (documented in docs/workloads.md): conv and dense
 * weights are uniform in +-gain * sqrt(3 / fan_in) (fan_in = in_channels /
 * groups * kh * kw, or in_features), Kaiming-uniform for gain sqrt(2);
 * biases are uniform in +-0.1; batch-norm gamma in [0.8, 1.2], beta and
 * running_mean in [-0.1, 0.1], running_var in [0.5, 1.5]; layer-norm gamma
 * in [0.9, 1.1] and beta in [-0.1, 0.1].
 */
#ifndef KILN_FRONTEND_TESTING_BUILDER_H_
#define KILN_FRONTEND_TESTING_BUILDER_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/array.h"
#include "ir/expr.h"
#include "ir/params.h"
#include "op/op.h"

/* Longest parameter name, terminator included. */
#define KILN_BUILDER_NAME_CAPACITY 96

typedef struct kiln_builder_t {
  kiln_module_t *module; /* NULL once finished */
  kiln_allocator_t allocator;
  kiln_params_t *params;
  size_t params_at_start; /* the caller's params count before the build */
  uint64_t seed;
  double weight_gain; /* conv/dense weights: +-weight_gain * sqrt(3 / fan_in) */
  kiln_array_t vars;  /* kiln_var_t *: main's parameters, data first */
} kiln_builder_t;

/* A conv2d layer: weight "<prefix>_weight" (out, in / groups, k, k) and,
 * with `bias`, "<prefix>_bias" (out,) added by nn.bias_add. Square kernel,
 * stride and symmetric padding. */
typedef struct kiln_builder_conv_t {
  const char *prefix;
  int64_t in_channels;
  int64_t out_channels;
  int64_t kernel;
  int64_t stride;
  int64_t padding;
  int64_t groups;
  bool bias;
} kiln_builder_conv_t;

/* Creates the module; weights are drawn with `seed` and go into `params`
 * (allocated with `allocator`). weight_gain starts at sqrt(2). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_initialize(kiln_builder_t *builder,
                                                           kiln_allocator_t allocator,
                                                           kiln_params_t *params, uint64_t seed);
/* After a failure (the module is still held): destroys it and removes the
 * params this builder added. After kiln_builder_finish: frees the Var list. */
void kiln_builder_deinitialize(kiln_builder_t *builder);

/* Formats a name prefix into `buffer` (KILN_BUILDER_NAME_CAPACITY bytes);
 * INVALID_ARGUMENT when it does not fit. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_prefix(char *buffer, const char *format, ...)
    KILN_PRINTF_FORMAT(2, 3);

/* ---- parameters ---- */

/* A float32 input Var of `shape` that gets no tensor ("data"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_input(kiln_builder_t *builder, const char *name,
                                                      int ndim, const int64_t *shape,
                                                      kiln_expr_t **out_expr);
/* "data" of (batch_size, 3, image_size, image_size): an RGB image batch. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_image_input(kiln_builder_t *builder,
                                                            int64_t batch_size, int64_t image_size,
                                                            kiln_expr_t **out_expr);
/* A weight "<prefix><suffix>" of `shape`, uniform in [lo, hi]. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_weight(kiln_builder_t *builder, const char *prefix,
                                                       const char *suffix, int ndim,
                                                       const int64_t *shape, float lo, float hi,
                                                       kiln_expr_t **out_expr);

/* ---- layers with weights ---- */

KILN_MUST_USE_RESULT kiln_status_t kiln_builder_conv2d(kiln_builder_t *builder,
                                                       const kiln_builder_conv_t *conv,
                                                       kiln_expr_t *data, kiln_expr_t **out_expr);
/* nn.batch_norm over axis 1 (epsilon 1e-5) with "<prefix>_weight" (gamma),
 * "_bias" (beta), "_running_mean" and "_running_var", each (channels,). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_batch_norm(kiln_builder_t *builder,
                                                           const char *prefix, int64_t channels,
                                                           kiln_expr_t *data,
                                                           kiln_expr_t **out_expr);
/* nn.dense with "<prefix>_weight" (out, in) then nn.bias_add of
 * "<prefix>_bias" (out,) on the last axis; data (..., in). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_dense(kiln_builder_t *builder, const char *prefix,
                                                      int64_t in_features, int64_t out_features,
                                                      kiln_expr_t *data, kiln_expr_t **out_expr);
/* nn.layer_norm over the last axis (epsilon 1e-5) with "<prefix>_weight"
 * (gamma) and "<prefix>_bias" (beta), each (features,). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_layer_norm(kiln_builder_t *builder,
                                                           const char *prefix, int64_t features,
                                                           kiln_expr_t *data,
                                                           kiln_expr_t **out_expr);

/* ---- layers without weights ---- */

/* An operator with its default attrs applied to `num_args` arguments. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_call(kiln_builder_t *builder, const kiln_op_t *op,
                                                     int num_args, kiln_expr_t *const *args,
                                                     const void *attrs, kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_relu(kiln_builder_t *builder, kiln_expr_t *data,
                                                     kiln_expr_t **out_expr);
/* clip(data, 0, 6). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_relu6(kiln_builder_t *builder, kiln_expr_t *data,
                                                      kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_add(kiln_builder_t *builder, kiln_expr_t *lhs,
                                                    kiln_expr_t *rhs, kiln_expr_t **out_expr);
/* multiply(data, a float32 scalar Constant `value`). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_scale(kiln_builder_t *builder, kiln_expr_t *data,
                                                      float value, kiln_expr_t **out_expr);
/* nn.max_pool2d, square window, symmetric padding. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_max_pool2d(kiln_builder_t *builder,
                                                           kiln_expr_t *data, int64_t pool,
                                                           int64_t stride, int64_t padding,
                                                           bool ceil_mode, kiln_expr_t **out_expr);
/* nn.global_avg_pool2d then nn.batch_flatten: (N, C, H, W) -> (N, C). */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_pool_flatten(kiln_builder_t *builder,
                                                             kiln_expr_t *data,
                                                             kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_concatenate(kiln_builder_t *builder, int count,
                                                            kiln_expr_t *const *inputs,
                                                            int64_t axis, kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_reshape(kiln_builder_t *builder, kiln_expr_t *data,
                                                        int ndim, const int64_t *shape,
                                                        kiln_expr_t **out_expr);
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_transpose(kiln_builder_t *builder,
                                                          kiln_expr_t *data, int ndim,
                                                          const int64_t *axes,
                                                          kiln_expr_t **out_expr);
/* nn.batch_matmul(x, y) with transpose_a False. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_batch_matmul(kiln_builder_t *builder,
                                                             kiln_expr_t *x, kiln_expr_t *y,
                                                             bool transpose_b,
                                                             kiln_expr_t **out_expr);

/* ---- the result ---- */

/* Makes main(vars...) { body }, type-checks and verifies the module and
 * hands it to the caller. */
KILN_MUST_USE_RESULT kiln_status_t kiln_builder_finish(kiln_builder_t *builder, kiln_expr_t *body,
                                                       kiln_module_t **out_module);

#endif /* KILN_FRONTEND_TESTING_BUILDER_H_ */
