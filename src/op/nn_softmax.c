/*
 * Operators that treat each line along one axis on its own: nn.softmax,
 * nn.log_softmax and nn.lrn (local response normalization across channels).
 *
 * All three see the data as (outer, D, inner) around the axis and treat each
 * line of D elements, `inner` apart, on its own. The softmax kernel is numerically stable:
 * it subtracts the line's maximum before exponentiating, sums in double, and
 * then writes exp(x - max) / sum or (x - max) - log(sum). A line holding
 * +inf or NaN gives NaN, as exp(inf - inf) does in NumPy. lrn divides each
 * element x of channel c by (bias + alpha / size * s)^beta, s being the sum
 * of squares over channels c - floor((size - 1) / 2) .. c + ceil((size - 1)
 * / 2) that exist (ONNX LRN's window; Relay's for odd sizes), in double. The
 * relations accept floating-point data only; the kernels handle float32.
 */
#include <math.h>

#include "op/impl.h"
#include "op/nn_common.h"
#include "op/nn_compute.h"

static const kiln_attr_field_t softmax_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_axis_attrs_t, axis, INT, "-1"),
};

static kiln_status_t softmax_infer(const kiln_type_relation_t *relation,
                                   const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, relation->attrs));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_nn_require_float(op, "data", data));
  const kiln_nn_axis_attrs_t *a = relation->attrs;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(op, a->axis, data->ndim, &axis));
  return kiln_tensor_type_create(relation->arena, data->dtype, data->ndim, data->shape, out_type);
}

static kiln_status_t softmax_correct_layout(kiln_layout_relation_t *relation) {
  return kiln_nn_layout_rule_primal(relation, true);
}

/* What a kernel does with one line of `count` elements, `step` apart. */
typedef void (*line_fn)(const kiln_kernel_args_t *args, const float *in, float *out, int64_t count,
                        int64_t step);

/* The shared kernel: checks, then `line` on every line along the axis. */
static kiln_status_t line_reference(const kiln_kernel_args_t *args, line_fn line) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_begin_float32(args));
  const kiln_tensor_t *data = args->inputs[0];
  int64_t axis_attr = args->op->id == KILN_OP_LRN
                          ? ((const kiln_nn_lrn_attrs_t *)args->attrs)->axis
                          : ((const kiln_nn_axis_attrs_t *)args->attrs)->axis;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(args->op, axis_attr, kiln_tensor_ndim(data), &axis));
  int64_t outer = 0, extent = 0, inner = 0;
  kiln_nn_axis_split(kiln_tensor_ndim(data), kiln_tensor_shape(data), axis, &outer, &extent,
                     &inner);
  const float *in = kiln_tensor_data(data);
  float *out = kiln_tensor_data(args->outputs[0]);
  if (kiln_tensor_element_count(data) == 0) {
    return KILN_OK;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * extent * inner + i;
      line(args, in + base, out + base, extent, inner);
    }
  }
  return KILN_OK;
}

static void softmax_line(const kiln_kernel_args_t *args, const float *in, float *out, int64_t count,
                         int64_t step) {
  bool take_log = args->op->id == KILN_OP_LOG_SOFTMAX;
  float max = -INFINITY;
  for (int64_t x = 0; x < count; ++x) {
    max = isnan(in[x * step]) || in[x * step] > max ? in[x * step] : max;
  }
  double sum = 0.0;
  for (int64_t x = 0; x < count; ++x) {
    sum += exp((double)in[x * step] - max);
  }
  double log_sum = log(sum);
  for (int64_t x = 0; x < count; ++x) {
    double shifted = (double)in[x * step] - max;
    out[x * step] = (float)(take_log ? shifted - log_sum : exp(shifted) / sum);
  }
}

static kiln_status_t softmax_reference(const kiln_kernel_args_t *args) {
  return line_reference(args, softmax_line);
}

/* ---- nn.lrn ---- */

static const kiln_attr_field_t lrn_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_lrn_attrs_t, size, INT, "5"),
    KILN_ATTR_FIELD(kiln_nn_lrn_attrs_t, axis, INT, "1"),
    KILN_ATTR_FIELD(kiln_nn_lrn_attrs_t, bias, FLOAT, "2.0"),
    KILN_ATTR_FIELD(kiln_nn_lrn_attrs_t, alpha, FLOAT, "1e-05"),
    KILN_ATTR_FIELD(kiln_nn_lrn_attrs_t, beta, FLOAT, "0.75"),
};

static kiln_status_t lrn_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_nn_lrn_attrs_t *a = attrs;
  if (a->size < 1 || a->size > KILN_NN_WINDOW_ATTR_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: size is %lld; it must be in [1, %lld]", op->name,
                       (long long)a->size, (long long)KILN_NN_WINDOW_ATTR_MAX);
  }
  if (!isfinite(a->bias) || !isfinite(a->alpha) || !isfinite(a->beta)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: bias %g, alpha %g and beta %g must be finite",
                       op->name, a->bias, a->alpha, a->beta);
  }
  return KILN_OK;
}

static kiln_status_t lrn_infer(const kiln_type_relation_t *relation, const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, relation->attrs));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_nn_require_float(op, "data", data));
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(
      op, ((const kiln_nn_lrn_attrs_t *)relation->attrs)->axis, data->ndim, &axis));
  return kiln_tensor_type_create(relation->arena, data->dtype, data->ndim, data->shape, out_type);
}

/* One line of `count` channels, `step` apart. */
static void lrn_line(const kiln_kernel_args_t *args, const float *in, float *out, int64_t count,
                     int64_t step) {
  const kiln_nn_lrn_attrs_t *a = args->attrs;
  int64_t below = (a->size - 1) / 2;
  int64_t above = a->size - 1 - below;
  for (int64_t c = 0; c < count; ++c) {
    double sum = 0.0;
    for (int64_t k = c - below; k <= c + above; ++k) {
      if (k >= 0 && k < count) {
        sum += (double)in[k * step] * in[k * step];
      }
    }
    out[c * step] =
        (float)(in[c * step] / pow(a->bias + a->alpha / (double)a->size * sum, a->beta));
  }
}

static kiln_status_t lrn_reference(const kiln_kernel_args_t *args) {
  return line_reference(args, lrn_line);
}

const kiln_op_t kiln_op_lrn = {
    .name = "nn.lrn",
    .id = KILN_OP_LRN,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_nn_lrn_attrs_t),
    .num_attr_fields = sizeof(lrn_fields) / sizeof(lrn_fields[0]),
    .attr_fields = lrn_fields,
    .validate_attrs = lrn_validate,
    .infer_type = lrn_infer,
    .correct_layout = softmax_correct_layout,
};

const kiln_op_impl_t kiln_op_lrn_impl = {
    .reference = lrn_reference,
    .compute = kiln_compute_nn_lrn,
};

/* ---- the softmax operators ---- */

#define SOFTMAX_OP(symbol, op_name, op_id)                                   \
  const kiln_op_t symbol = {                                                 \
      .name = op_name,                                                       \
      .id = op_id,                                                           \
      .min_inputs = 1,                                                       \
      .max_inputs = 1,                                                       \
      .pattern = KILN_OP_PATTERN_OPAQUE,                                     \
      .attrs_size = sizeof(kiln_nn_axis_attrs_t),                            \
      .num_attr_fields = sizeof(softmax_fields) / sizeof(softmax_fields[0]), \
      .attr_fields = softmax_fields,                                         \
      .infer_type = softmax_infer,                                           \
      .symbolic_dims = true,                                                 \
      .correct_layout = softmax_correct_layout,                              \
  };                                                                         \
  const kiln_op_impl_t symbol##_impl = {                                     \
      .reference = softmax_reference,                                        \
      .compute = kiln_compute_nn_softmax,                                    \
      .strategies = {[KILN_TARGET_KIND_CPU] = kiln_schedule_line_x86}}

SOFTMAX_OP(kiln_op_softmax, "nn.softmax", KILN_OP_SOFTMAX);
SOFTMAX_OP(kiln_op_log_softmax, "nn.log_softmax", KILN_OP_LOG_SOFTMAX);
