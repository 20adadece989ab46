/*
 * nn.conv2d_transpose and nn.conv3d_transpose: the gradient of conv2d
 * (conv3d) with respect to its data, as Relay, ONNX ConvTranspose and
 * PyTorch define it.
 *
 * Data is logical (N, C_in, H, W) and the weight (C_in, C_out / groups, KH,
 * KW), Relay's IOHW; both may be stored in any order of their primal axes
 * (no split), read through layout views as conv2d does. Input element
 * (n, i, h, w) scatters x * w[i, o, kh, kw] onto output (n, g C_out/groups +
 * o, h s + kh d - pad_top, w s + kw d - pad_left), g being i's group. The
 * output extent is (in - 1) s - pad_lo - pad_hi + d (k - 1) + output_padding
 * + 1 per spatial dim; output_padding must be below the stride or the
 * dilation (PyTorch's rule), so it only adds what the strided scatter could
 * reach. The reference kernel computes each output element as a gather of
 * exactly those terms (an output row oh takes kernel row kh from input row
 * (oh + pad_top - kh d) / s when that division is exact and in range),
 * summing in double over input channels, then KH, then KW, and rounding
 * once. One plan serves the type relation and the kernel.
 *
 * The 3-D form is the same over (N, C_in, D, H, W) data and (C_in,
 * C_out / groups, KD, KH, KW) weights (IODHW): the plan and the kernel run
 * over `spatial` dims (2 or 3), the taps in row-major order.
 */
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"

/* ---- attributes ---- */

#define TCONV_FIELD(field, kind, text) \
  KILN_ATTR_FIELD(kiln_nn_conv2d_transpose_attrs_t, field, kind, text)

/* The fields of one operator: the defaults of strides and dilation (ones),
 * of padding and output_padding (zeros) and of the data and kernel layouts. */
#define TCONV_FIELDS(ones, zeros, output_zeros, data, kernel)                               \
  {                                                                                         \
    TCONV_FIELD(strides, INTS, ones), TCONV_FIELD(padding, INTS, zeros),                    \
        TCONV_FIELD(output_padding, INTS, output_zeros), TCONV_FIELD(dilation, INTS, ones), \
        TCONV_FIELD(groups, INT, "1"), TCONV_FIELD(channels, INT, "0"),                     \
        TCONV_FIELD(kernel_size, INTS, "[]"), TCONV_FIELD(data_layout, STRING, data),       \
        TCONV_FIELD(kernel_layout, STRING, kernel), TCONV_FIELD(out_layout, STRING, "\"\"") \
  }

static const kiln_attr_field_t conv2d_transpose_fields[] =
    TCONV_FIELDS("[1, 1]", "[0, 0, 0, 0]", "[0, 0]", "\"NCHW\"", "\"IOHW\"");
static const kiln_attr_field_t conv3d_transpose_fields[] =
    TCONV_FIELDS("[1, 1, 1]", "[0, 0, 0, 0, 0, 0]", "[0, 0, 0]", "\"NCDHW\"", "\"IODHW\"");

/* The number of spatial dims: 3 for nn.conv3d_transpose, else 2. */
static int tconv_spatial(const kiln_op_t *op) {
  return op->id == KILN_OP_CONV3D_TRANSPOSE ? 3 : 2;
}

/* The primal axes of the data and of the kernel. */
static const char *tconv_data_order(const kiln_op_t *op) {
  return tconv_spatial(op) == 3 ? "NCDHW" : "NCHW";
}

static const char *tconv_kernel_order(const kiln_op_t *op) {
  return tconv_spatial(op) == 3 ? "IODHW" : "IOHW";
}

static kiln_status_t tconv_layouts(const kiln_op_t *op, const kiln_nn_conv2d_transpose_attrs_t *a,
                                   kiln_layout_t *out_data, kiln_layout_t *out_kernel,
                                   kiln_layout_t *out_out) {
  KILN_RETURN_IF_ERROR(kiln_nn_layout_require(op, "data_layout", a->data_layout,
                                              tconv_data_order(op), "", "", out_data));
  KILN_RETURN_IF_ERROR(kiln_nn_layout_require(op, "kernel_layout", a->kernel_layout,
                                              tconv_kernel_order(op), "", "", out_kernel));
  if (!a->out_layout || !*a->out_layout) {
    *out_out = *out_data;
    return KILN_OK;
  }
  return kiln_nn_layout_require(op, "out_layout", a->out_layout, tconv_data_order(op), "", "",
                                out_out);
}

static kiln_status_t tconv_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_nn_conv2d_transpose_attrs_t *a = attrs;
  int n = tconv_spatial(op);
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "strides", a->strides, n, -1, 1));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "padding", a->padding, 2 * n, -1, 0));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "output_padding", a->output_padding, n, -1, 0));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "dilation", a->dilation, n, -1, 1));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "kernel_size", a->kernel_size, n, 0, 1));
  for (int i = 0; i < n; ++i) {
    int64_t limit =
        a->strides.values[i] > a->dilation.values[i] ? a->strides.values[i] : a->dilation.values[i];
    if (a->output_padding.values[i] >= limit) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: output_padding[%d] is %lld; it must be smaller than the stride "
                         "(%lld) or the dilation (%lld)",
                         op->name, i, (long long)a->output_padding.values[i],
                         (long long)a->strides.values[i], (long long)a->dilation.values[i]);
    }
  }
  if (a->groups < 1 || a->groups > KILN_NN_WINDOW_ATTR_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: groups is %lld; it must be positive", op->name,
                       (long long)a->groups);
  }
  if (a->channels < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: channels is %lld; it must be 0 or positive", op->name,
                       (long long)a->channels);
  }
  kiln_layout_t data, kernel, out;
  return tconv_layouts(op, a, &data, &kernel, &out);
}

/* ---- the plan shared by relation and kernel ---- */

typedef struct tconv_plan_t {
  int spatial;
  kiln_layout_t out_layout;
  kiln_nn_axis_view_t data[KILN_NN_MAX_SPATIAL + 2];   /* N, C, (D,) H, W */
  kiln_nn_axis_view_t weight[KILN_NN_MAX_SPATIAL + 2]; /* I, O, (KD,) KH, KW */
  int64_t groups;
  int64_t stride[KILN_NN_MAX_SPATIAL];
  int64_t dilation[KILN_NN_MAX_SPATIAL];
  int64_t pad[KILN_NN_MAX_SPATIAL]; /* the begin pads (front,) top, left */
  int64_t kernel[KILN_NN_MAX_SPATIAL];
  int64_t out_logical[KILN_NN_MAX_SPATIAL + 2];
  int64_t out_shape[KILN_LAYOUT_MAX_AXES];
} tconv_plan_t;

/* Channels against groups, and the optional channels and kernel_size attrs. */
static kiln_status_t tconv_check_channels(const kiln_op_t *op,
                                          const kiln_nn_conv2d_transpose_attrs_t *a,
                                          const tconv_plan_t *plan, const kiln_tensor_type_t *data,
                                          const kiln_tensor_type_t *weight) {
  char data_text[KILN_SHAPE_TEXT_CAPACITY], weight_text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_op_shape_text(data, data_text);
  kiln_op_shape_text(weight, weight_text);
  if (plan->weight[0].extent != plan->data[1].extent) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data %s has %lld channels but weight %s (%s) expects %lld", op->name,
                       data_text, (long long)plan->data[1].extent, weight_text,
                       tconv_kernel_order(op), (long long)plan->weight[0].extent);
  }
  if (plan->data[1].extent % a->groups != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: groups %lld does not divide the %lld input channels of data %s",
                       op->name, (long long)a->groups, (long long)plan->data[1].extent, data_text);
  }
  if (a->channels != 0 && a->channels != plan->out_logical[1]) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: channels %lld does not match the %lld output channels of weight %s "
                       "(groups %lld)",
                       op->name, (long long)a->channels, (long long)plan->out_logical[1],
                       weight_text, (long long)a->groups);
  }
  return kiln_nn_check_kernel_size(op, a->kernel_size, plan->weight + 2, weight_text);
}

/* The output extent of one spatial dim, or 0 when it is not positive. */
static int64_t tconv_extent(const kiln_nn_conv2d_transpose_attrs_t *a, int spatial, int dim,
                            int64_t in, int64_t kernel) {
  int64_t span = 0, reach = 0, out = 0;
  if (in < 1 || __builtin_mul_overflow(in - 1, a->strides.values[dim], &span) ||
      __builtin_mul_overflow(kernel - 1, a->dilation.values[dim], &reach) ||
      __builtin_add_overflow(span, reach + a->output_padding.values[dim] + 1, &out)) {
    return 0;
  }
  out -= a->padding.values[dim] + a->padding.values[dim + spatial];
  return out > 0 ? out : 0;
}

static kiln_status_t tconv_plan_make(const kiln_op_t *op, const kiln_nn_conv2d_transpose_attrs_t *a,
                                     const kiln_tensor_type_t *data,
                                     const kiln_tensor_type_t *weight, tconv_plan_t *out_plan) {
  kiln_layout_t data_layout, kernel_layout;
  KILN_RETURN_IF_ERROR(tconv_layouts(op, a, &data_layout, &kernel_layout, &out_plan->out_layout));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_view(&data_layout, tconv_data_order(op), data->ndim,
                                                    data->shape, out_plan->data),
                                "%s: data", op->name);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_view(&kernel_layout, tconv_kernel_order(op),
                                                    weight->ndim, weight->shape, out_plan->weight),
                                "%s: weight", op->name);
  out_plan->groups = a->groups;
  out_plan->out_logical[0] = out_plan->data[0].extent;
  if (__builtin_mul_overflow(out_plan->weight[1].extent, a->groups, &out_plan->out_logical[1])) {
    out_plan->out_logical[1] = INT64_MAX;
  }
  KILN_RETURN_IF_ERROR(tconv_check_channels(op, a, out_plan, data, weight));
  int n = out_plan->spatial = tconv_spatial(op);
  for (int dim = 0; dim < n; ++dim) {
    out_plan->stride[dim] = a->strides.values[dim];
    out_plan->dilation[dim] = a->dilation.values[dim];
    out_plan->pad[dim] = a->padding.values[dim];
    out_plan->kernel[dim] = out_plan->weight[2 + dim].extent;
    int64_t in = out_plan->data[2 + dim].extent;
    out_plan->out_logical[2 + dim] = tconv_extent(a, n, dim, in, out_plan->kernel[dim]);
    if (out_plan->out_logical[2 + dim] < 1) {
      static const char *const names[3] = {"planes", "rows", "columns"};
      char text[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s gives no output %s (padding %lld+%lld)",
                         op->name, kiln_op_shape_text(data, text), names[dim + 3 - n],
                         (long long)a->padding.values[dim], (long long)a->padding.values[dim + n]);
    }
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_shape(&out_plan->out_layout, tconv_data_order(op),
                                                     out_plan->out_logical, out_plan->out_shape),
                                "%s: output", op->name);
  return KILN_OK;
}

/* ---- rules ---- */

static kiln_status_t tconv_infer(const kiln_type_relation_t *relation,
                                 const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, relation->attrs));
  const kiln_tensor_type_t *inputs[2];
  KILN_RETURN_IF_ERROR(kiln_nn_input_tensors(relation, 2, inputs));
  KILN_RETURN_IF_ERROR(kiln_nn_same_dtype(op, "data", inputs[0], "weight", inputs[1]));
  tconv_plan_t plan;
  KILN_RETURN_IF_ERROR(tconv_plan_make(op, relation->attrs, inputs[0], inputs[1], &plan));
  return kiln_tensor_type_create(relation->arena, inputs[0]->dtype, plan.out_layout.ndim,
                                 plan.out_shape, out_type);
}

/* Data in data_layout, weight in kernel_layout; the output in out_layout. */
static kiln_status_t tconv_correct_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(relation->op, relation->attrs));
  const kiln_nn_conv2d_transpose_attrs_t *a = relation->attrs;
  return kiln_nn_layout_rule_conv(relation, a->data_layout, a->kernel_layout, a->out_layout);
}

/* ---- reference kernel ---- */

typedef struct tconv_run_t {
  const tconv_plan_t *plan;
  const float *data;
  const float *weight;
} tconv_run_t;

/* The input position x that kernel tap k sends to output position y on one
 * dim, or -1 when none does. */
static int64_t tconv_source(const tconv_plan_t *plan, int dim, int64_t y, int64_t k) {
  int64_t t = y + plan->pad[dim] - k * plan->dilation[dim];
  if (t < 0 || t % plan->stride[dim] != 0) {
    return -1;
  }
  int64_t x = t / plan->stride[dim];
  return x < plan->data[2 + dim].extent ? x : -1;
}

/* The data and weight offsets of kernel tap k for the output at spatial
 * coordinates `out`; false when no input position sends that tap there. */
static bool tconv_tap(const tconv_plan_t *plan, const int64_t *out, const int64_t *k,
                      int64_t *out_data, int64_t *out_weight) {
  int64_t data = 0, weight = 0;
  for (int s = 0; s < plan->spatial; ++s) {
    int64_t x = tconv_source(plan, s, out[s], k[s]);
    if (x < 0) {
      return false;
    }
    data += kiln_nn_axis_offset(&plan->data[2 + s], x);
    weight += kiln_nn_axis_offset(&plan->weight[2 + s], k[s]);
  }
  *out_data = data;
  *out_weight = weight;
  return true;
}

/* Output element c = (n, oc, then the spatial output coordinates): the sum
 * over the input channels of oc's group, then the kernel taps in row-major
 * order, of data * weight, in double. */
static double tconv_point(const void *context, const int64_t *c) {
  const tconv_run_t *run = context;
  const tconv_plan_t *plan = run->plan;
  const kiln_nn_axis_view_t *d = plan->data, *w = plan->weight;
  int64_t per_group_out = w[1].extent;
  int64_t per_group_in = d[1].extent / plan->groups;
  int64_t group = c[1] / per_group_out;
  int64_t o = c[1] % per_group_out;
  double sum = 0.0;
  for (int64_t i = group * per_group_in; i < (group + 1) * per_group_in; ++i) {
    int64_t data_ni = kiln_nn_axis_offset(&d[0], c[0]) + kiln_nn_axis_offset(&d[1], i);
    int64_t weight_io = kiln_nn_axis_offset(&w[0], i) + kiln_nn_axis_offset(&w[1], o);
    int64_t k[KILN_NN_MAX_SPATIAL] = {0}, at_data = 0, at_weight = 0;
    do {
      if (tconv_tap(plan, c + 2, k, &at_data, &at_weight)) {
        sum += (double)run->data[data_ni + at_data] * run->weight[weight_io + at_weight];
      }
    } while (kiln_nn_next_index(plan->spatial, plan->kernel, k));
  }
  return (float)sum;
}

static kiln_status_t tconv_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_begin_float32(args));
  kiln_tensor_type_t data = kiln_nn_tensor_type(args->inputs[0]);
  kiln_tensor_type_t weight = kiln_nn_tensor_type(args->inputs[1]);
  tconv_plan_t plan;
  KILN_RETURN_IF_ERROR(tconv_plan_make(args->op, args->attrs, &data, &weight, &plan));
  tconv_run_t run = {.plan = &plan,
                     .data = kiln_tensor_data(args->inputs[0]),
                     .weight = kiln_tensor_data(args->inputs[1])};
  return kiln_nn_fill(args->outputs[0], &plan.out_layout, tconv_data_order(args->op),
                      plan.out_logical, tconv_point, &run);
}

/* ---- the operators ---- */

#define TCONV_OP(symbol, op_name, op_id, fields)                                           \
  KILN_NN_CONV_OP(symbol, op_name, op_id, kiln_nn_conv2d_transpose_attrs_t, fields, tconv, \
                  kiln_compute_conv2d_transpose, NULL)

TCONV_OP(kiln_op_conv2d_transpose, "nn.conv2d_transpose", KILN_OP_CONV2D_TRANSPOSE,
         conv2d_transpose_fields);
TCONV_OP(kiln_op_conv3d_transpose, "nn.conv3d_transpose", KILN_OP_CONV3D_TRANSPOSE,
         conv3d_transpose_fields);
