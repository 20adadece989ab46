/*
 * nn.softmax and nn.log_softmax along one axis.
 *
 * Both see the data as (outer, D, inner) around the axis and treat each line
 * of D elements, `inner` apart, on its own. The kernel is numerically stable:
 * it subtracts the line's maximum before exponentiating, sums in double, and
 * then writes exp(x - max) / sum or (x - max) - log(sum). A line holding
 * +inf or NaN gives NaN, as exp(inf - inf) does in NumPy. The relation
 * accepts floating-point data only; the kernel handles float32.
 */
#include <math.h>

#include "op/nn_common.h"

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

/* One line of `count` elements, `step` apart. */
static void softmax_line(const float *in, float *out, int64_t count, int64_t step, bool take_log) {
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
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_begin_float32(args));
  const kiln_tensor_t *data = args->inputs[0];
  const kiln_nn_axis_attrs_t *a = args->attrs;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(args->op, a->axis, kiln_tensor_ndim(data), &axis));
  int64_t outer = 0, extent = 0, inner = 0;
  kiln_nn_axis_split(kiln_tensor_ndim(data), kiln_tensor_shape(data), axis, &outer, &extent,
                     &inner);
  const float *in = kiln_tensor_data(data);
  float *out = kiln_tensor_data(args->outputs[0]);
  bool take_log = args->op->id == KILN_OP_LOG_SOFTMAX;
  if (kiln_tensor_element_count(data) == 0) {
    return KILN_OK;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * extent * inner + i;
      softmax_line(in + base, out + base, extent, inner, take_log);
    }
  }
  return KILN_OK;
}

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
      .correct_layout = softmax_correct_layout,                              \
      .reference = softmax_reference,                                        \
  }

SOFTMAX_OP(kiln_op_softmax, "nn.softmax", KILN_OP_SOFTMAX);
SOFTMAX_OP(kiln_op_log_softmax, "nn.log_softmax", KILN_OP_LOG_SOFTMAX);
