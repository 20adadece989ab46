/*
 * Operators that combine data with per-channel vectors along one axis:
 * nn.batch_norm, nn.layer_norm, nn.bias_add, nn.prelu and nn.instance_norm.
 *
 * All four take data and one or more vectors of shape (D,), D being the
 * data's extent along `axis`, and give a result of the data's type; so one
 * type relation checks them all, driven by a table of input names. Viewed
 * as (outer, D, inner) around the axis (kiln_nn_axis_split), three of them
 * are a function of one element and its channel's vector entries: one loop
 * (channel_walk) applies a per-operator function from the same table.
 * layer_norm instead normalizes each line along the axis by its own mean
 * and biased variance (two passes in double), and instance_norm each plane
 * of one batch element and one channel (every dim but 0 and the axis) the
 * same way; for them the table holds a walk instead of a function.
 *
 * batch_norm is inference-only with ONE output, not Relay's (out, mean, var)
 * tuple: y = (x - moving_mean) / sqrt(moving_var + epsilon) * gamma + beta,
 * gamma taken as 1 when scale is False and beta as 0 when center is False
 * (the vectors are still checked). Being a per-channel affine map, its
 * fusion pattern is BROADCAST, like bias_add's, so it can join a conv's
 * epilogue; layer_norm and instance_norm, reductions and maps, are OPAQUE.
 */
#include <math.h>

#include "op/impl.h"
#include "op/nn_common.h"
#include "op/nn_compute.h"

/* ---- attributes ---- */

#define NORM_FIELDS(axis_default)                                     \
  KILN_ATTR_FIELD(kiln_nn_norm_attrs_t, axis, INT, axis_default),     \
      KILN_ATTR_FIELD(kiln_nn_norm_attrs_t, epsilon, FLOAT, "1e-05"), \
      KILN_ATTR_FIELD(kiln_nn_norm_attrs_t, center, BOOL, "True"),    \
      KILN_ATTR_FIELD(kiln_nn_norm_attrs_t, scale, BOOL, "True")

static const kiln_attr_field_t batch_norm_fields[] = {NORM_FIELDS("1")};
static const kiln_attr_field_t layer_norm_fields[] = {NORM_FIELDS("-1")};
static const kiln_attr_field_t instance_norm_fields[] = {NORM_FIELDS("1")};
static const kiln_attr_field_t channel_axis_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_axis_attrs_t, axis, INT, "1"),
};

static kiln_status_t norm_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_nn_norm_attrs_t *a = attrs;
  if (!(a->epsilon >= 0.0) || isinf(a->epsilon)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: epsilon is %g; it must be finite and >= 0", op->name,
                       a->epsilon);
  }
  return KILN_OK;
}

/* ---- the per-operator table ---- */

/* y for element x of channel c; vectors[i] is input i + 1. */
typedef double (*channel_fn)(double x, const float *const *vectors, int64_t c,
                             const kiln_nn_norm_attrs_t *norm);

static double batch_norm_value(double x, const float *const *vectors, int64_t c,
                               const kiln_nn_norm_attrs_t *norm) {
  double gamma = norm->scale ? vectors[0][c] : 1.0;
  double beta = norm->center ? vectors[1][c] : 0.0;
  return (x - vectors[2][c]) / sqrt((double)vectors[3][c] + norm->epsilon) * gamma + beta;
}

static double bias_add_value(double x, const float *const *vectors, int64_t c,
                             const kiln_nn_norm_attrs_t *norm) {
  (void)norm;
  return x + vectors[0][c];
}

static double prelu_value(double x, const float *const *vectors, int64_t c,
                          const kiln_nn_norm_attrs_t *norm) {
  (void)norm;
  return x > 0.0 ? x : vectors[0][c] * x;
}

typedef struct norm_run_t norm_run_t;
/* A normalization over lines or planes (layer_norm, instance_norm). */
typedef void (*norm_walk_fn)(const norm_run_t *run);

typedef struct norm_info_t {
  const char *const *names; /* input names, data first */
  bool float_only;
  channel_fn value;  /* per element; or NULL and: */
  norm_walk_fn walk; /* the normalization */
} norm_info_t;

static const char *const batch_norm_names[] = {"data", "gamma", "beta", "moving_mean",
                                               "moving_var"};
static const char *const layer_norm_names[] = {"data", "gamma", "beta"};
static const char *const bias_add_names[] = {"data", "bias"};
static const char *const prelu_names[] = {"data", "alpha"};

_Static_assert(KILN_OP_LAYER_NORM == KILN_OP_BATCH_NORM + 1 &&
                   KILN_OP_BIAS_ADD == KILN_OP_BATCH_NORM + 2 &&
                   KILN_OP_PRELU == KILN_OP_BATCH_NORM + 3 &&
                   KILN_OP_INSTANCE_NORM == KILN_OP_BATCH_NORM + 4,
               "norm_infos follows op_list.h");

static void layer_norm_walk(const norm_run_t *run);
static void instance_norm_walk(const norm_run_t *run);

static const norm_info_t norm_infos[5] = {
    {batch_norm_names, true, batch_norm_value, NULL},
    {layer_norm_names, true, NULL, layer_norm_walk},
    {bias_add_names, false, bias_add_value, NULL},
    {prelu_names, false, prelu_value, NULL},
    {layer_norm_names, true, NULL, instance_norm_walk},
};

static const norm_info_t *norm_info(const kiln_op_t *op) {
  return &norm_infos[op->id - KILN_OP_BATCH_NORM];
}

/* The axis attribute of either attrs struct. */
static bool norm_has_norm_attrs(const kiln_op_t *op) {
  return op->id == KILN_OP_BATCH_NORM || op->id == KILN_OP_LAYER_NORM ||
         op->id == KILN_OP_INSTANCE_NORM;
}

static int64_t norm_axis_attr(const kiln_op_t *op, const void *attrs) {
  if (norm_has_norm_attrs(op)) {
    return ((const kiln_nn_norm_attrs_t *)attrs)->axis;
  }
  return ((const kiln_nn_axis_attrs_t *)attrs)->axis;
}

/* ---- rules ---- */

/* Input `index` is a vector (D,) of data's dtype, D = data's extent on `axis`. */
static kiln_status_t norm_check_vector(const kiln_type_relation_t *relation, int index,
                                       const kiln_tensor_type_t *data, int axis) {
  const kiln_op_t *op = relation->op;
  const char *const *names = norm_info(op)->names;
  const kiln_tensor_type_t *vector = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &vector));
  KILN_RETURN_IF_ERROR(kiln_nn_same_dtype(op, names[0], data, names[index], vector));
  if (vector->ndim != 1 || vector->shape[0] != data->shape[axis]) {
    char data_text[KILN_SHAPE_TEXT_CAPACITY], vector_text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: %s %s must have shape (%lld,) to match axis %d of data %s", op->name,
                       names[index], kiln_op_shape_text(vector, vector_text),
                       (long long)data->shape[axis], axis, kiln_op_shape_text(data, data_text));
  }
  return KILN_OK;
}

static kiln_status_t norm_infer(const kiln_type_relation_t *relation,
                                const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, relation->attrs));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  if (norm_info(op)->float_only) {
    KILN_RETURN_IF_ERROR(kiln_nn_require_float(op, "data", data));
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      kiln_op_normalize_axis(op, norm_axis_attr(op, relation->attrs), data->ndim, &axis));
  if (op->id == KILN_OP_INSTANCE_NORM && axis == 0) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the channel axis of data %s cannot be 0, the batch axis", op->name,
                       kiln_op_shape_text(data, text));
  }
  for (int i = 1; i < relation->num_inputs; ++i) {
    KILN_RETURN_IF_ERROR(norm_check_vector(relation, i, data, axis));
  }
  return kiln_tensor_type_create(relation->arena, data->dtype, data->ndim, data->shape, out_type);
}

static kiln_status_t norm_correct_layout(kiln_layout_relation_t *relation) {
  return kiln_nn_layout_rule_primal(relation, true);
}

/* ---- reference kernels ---- */

struct norm_run_t {
  const kiln_nn_norm_attrs_t *norm; /* NULL for bias_add and prelu */
  const float *data;
  const float *vectors[KILN_NN_MAX_INPUTS];
  float *output;
  int64_t outer, extent, inner;
  int64_t batch; /* dim 0 (instance_norm) */
};

static void channel_walk(const norm_run_t *run, channel_fn value) {
  for (int64_t o = 0; o < run->outer; ++o) {
    for (int64_t c = 0; c < run->extent; ++c) {
      int64_t base = (o * run->extent + c) * run->inner;
      for (int64_t i = 0; i < run->inner; ++i) {
        run->output[base + i] = (float)value(run->data[base + i], run->vectors, c, run->norm);
      }
    }
  }
}

/* Normalizes the `count` elements base + k * step for k < count, with
 * step jumps of `gap` after every `run` elements (a plane of instance_norm:
 * count = rows * run), by their mean and biased variance; gamma and beta are
 * those of `channel`, or of each element's position k when channel < 0
 * (layer_norm, where the line is the axis). */
typedef struct norm_group_t {
  int64_t base;
  int64_t count;
  int64_t run;
  int64_t step;
  int64_t gap;
  int64_t channel;
} norm_group_t;

static int64_t norm_group_at(const norm_group_t *group, int64_t k) {
  return group->base + (k / group->run) * group->gap + (k % group->run) * group->step;
}

static void norm_group(const norm_run_t *run, const norm_group_t *group) {
  const kiln_nn_norm_attrs_t *norm = run->norm;
  double mean = 0.0, variance = 0.0;
  for (int64_t k = 0; k < group->count; ++k) {
    mean += run->data[norm_group_at(group, k)];
  }
  mean /= (double)group->count;
  for (int64_t k = 0; k < group->count; ++k) {
    double d = run->data[norm_group_at(group, k)] - mean;
    variance += d * d;
  }
  variance /= (double)group->count;
  double inv = 1.0 / sqrt(variance + norm->epsilon);
  for (int64_t k = 0; k < group->count; ++k) {
    int64_t c = group->channel < 0 ? k : group->channel;
    double gamma = norm->scale ? run->vectors[0][c] : 1.0;
    double beta = norm->center ? run->vectors[1][c] : 0.0;
    int64_t at = norm_group_at(group, k);
    run->output[at] = (float)((run->data[at] - mean) * inv * gamma + beta);
  }
}

/* Each line along the axis. */
static void layer_norm_walk(const norm_run_t *run) {
  if (run->extent == 0) {
    return;
  }
  for (int64_t o = 0; o < run->outer; ++o) {
    for (int64_t i = 0; i < run->inner; ++i) {
      norm_group_t line = {
          o * run->extent * run->inner + i, run->extent, run->extent, run->inner, 0, -1};
      norm_group(run, &line);
    }
  }
}

/* Each plane (n, c): the data is (N, A, C, B) with outer = N A, inner = B,
 * and the plane's A B elements are runs of B, C B apart. */
static void instance_norm_walk(const norm_run_t *run) {
  if (run->batch == 0 || run->inner == 0 || run->outer == 0) {
    return;
  }
  int64_t rows = run->outer / run->batch;
  for (int64_t n = 0; n < run->batch; ++n) {
    for (int64_t c = 0; c < run->extent; ++c) {
      norm_group_t plane = {(n * rows * run->extent + c) * run->inner,
                            rows * run->inner,
                            run->inner,
                            1,
                            run->extent * run->inner,
                            c};
      norm_group(run, &plane);
    }
  }
}

static kiln_status_t norm_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_begin_float32(args));
  const kiln_op_t *op = args->op;
  const kiln_tensor_t *data = args->inputs[0];
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      kiln_op_normalize_axis(op, norm_axis_attr(op, args->attrs), kiln_tensor_ndim(data), &axis));
  norm_run_t run = {.data = kiln_tensor_data(data), .output = kiln_tensor_data(args->outputs[0])};
  if (norm_has_norm_attrs(op)) {
    run.norm = args->attrs;
  }
  run.batch = kiln_tensor_shape(data)[0];
  for (int i = 1; i < args->num_inputs; ++i) {
    run.vectors[i - 1] = kiln_tensor_data(args->inputs[i]);
  }
  kiln_nn_axis_split(kiln_tensor_ndim(data), kiln_tensor_shape(data), axis, &run.outer, &run.extent,
                     &run.inner);
  const norm_info_t *info = norm_info(op);
  if (info->value) {
    channel_walk(&run, info->value);
  } else {
    info->walk(&run);
  }
  return KILN_OK;
}

/* ---- the operators ---- */

#define NORM_OP(symbol, op_name, op_id, inputs, op_pattern, attrs_type, fields, validate) \
  const kiln_op_t symbol = {                                                              \
      .name = op_name,                                                                    \
      .id = op_id,                                                                        \
      .min_inputs = inputs,                                                               \
      .max_inputs = inputs,                                                               \
      .pattern = op_pattern,                                                              \
      .attrs_size = sizeof(attrs_type),                                                   \
      .num_attr_fields = sizeof(fields) / sizeof(kiln_attr_field_t),                      \
      .attr_fields = fields,                                                              \
      .validate_attrs = validate,                                                         \
      .infer_type = norm_infer,                                                           \
      .symbolic_dims = true,                                                              \
      .correct_layout = norm_correct_layout,                                              \
  };                                                                                      \
  const kiln_op_impl_t symbol##_impl = {                                                  \
      .reference = norm_reference,                                                        \
      .compute = kiln_compute_nn_norm,                                                    \
      .strategies = {[KILN_TARGET_KIND_CPU] = kiln_schedule_line_x86}}

NORM_OP(kiln_op_batch_norm, "nn.batch_norm", KILN_OP_BATCH_NORM, 5, KILN_OP_PATTERN_BROADCAST,
        kiln_nn_norm_attrs_t, batch_norm_fields, norm_validate);
NORM_OP(kiln_op_layer_norm, "nn.layer_norm", KILN_OP_LAYER_NORM, 3, KILN_OP_PATTERN_OPAQUE,
        kiln_nn_norm_attrs_t, layer_norm_fields, norm_validate);
NORM_OP(kiln_op_bias_add, "nn.bias_add", KILN_OP_BIAS_ADD, 2, KILN_OP_PATTERN_BROADCAST,
        kiln_nn_axis_attrs_t, channel_axis_fields, NULL);
NORM_OP(kiln_op_prelu, "nn.prelu", KILN_OP_PRELU, 2, KILN_OP_PATTERN_BROADCAST,
        kiln_nn_axis_attrs_t, channel_axis_fields, NULL);
NORM_OP(kiln_op_instance_norm, "nn.instance_norm", KILN_OP_INSTANCE_NORM, 3, KILN_OP_PATTERN_OPAQUE,
        kiln_nn_norm_attrs_t, instance_norm_fields, norm_validate);
