/*
 * nn.conv2d, nn.contrib_conv2d_NCHWc and nn.conv3d.
 *
 * Both operators are one computation on logical (N, C, H, W) data and
 * (O, I, KH, KW) weights; they differ only in how the tensors are stored.
 * conv2d takes any order of the primal axes (NCHW, NHWC; OIHW, HWIO, ...)
 * and no split; the NCHWc form takes data NCHW{ic}c, weight OIHW{ic}i{oc}o
 * and output NCHW{oc}c; with groups (depthwise: groups == C == O) its
 * weight is OIHW1i{oc}o, an input-channel block of 1 as TVM's
 * depthwise_conv2d_NCHWc has, since a wider block would straddle groups.
 * So one plan (conv_plan_make: layouts, axis views, channel and group
 * checks, output extents and storage shape) serves both
 * type relations and both kernels, and one loop computes both: for every
 * output element, a double accumulator sums data * weight over the input
 * channels of its group, then KH, then KW, reading every tensor through its
 * layout view. The NCHWc kernel therefore gives bit for bit the numbers of
 * conv2d on the same data transformed back, which its tests check.
 *
 * nn.conv3d is the same computation over (N, C, D, H, W) data and
 * (O, I, KD, KH, KW) weights (any order of the primal axes, no split): the
 * plan, the kernel and the compute rule run over `spatial` dims (2 or 3),
 * the window in a kiln_nn_window_t as pooling's, and the kernel sums the
 * kernel taps in row-major order (KD, then KH, then KW).
 */
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"

/* ---- attributes ---- */

#define CONV2D_FIELD(field, kind, text) KILN_ATTR_FIELD(kiln_nn_conv2d_attrs_t, field, kind, text)

/* The fields of one operator: the defaults of strides and dilation (ones),
 * of padding (zeros) and of the three layouts. */
#define CONV_FIELDS(ones, zeros, data, kernel, out)                                           \
  {                                                                                           \
    CONV2D_FIELD(strides, INTS, ones), CONV2D_FIELD(padding, INTS, zeros),                    \
        CONV2D_FIELD(dilation, INTS, ones), CONV2D_FIELD(groups, INT, "1"),                   \
        CONV2D_FIELD(channels, INT, "0"), CONV2D_FIELD(kernel_size, INTS, "[]"),              \
        CONV2D_FIELD(data_layout, STRING, data), CONV2D_FIELD(kernel_layout, STRING, kernel), \
        CONV2D_FIELD(out_layout, STRING, out)                                                 \
  }

static const kiln_attr_field_t conv2d_fields[] =
    CONV_FIELDS("[1, 1]", "[0, 0, 0, 0]", "\"NCHW\"", "\"OIHW\"", "\"\"");
static const kiln_attr_field_t conv3d_fields[] =
    CONV_FIELDS("[1, 1, 1]", "[0, 0, 0, 0, 0, 0]", "\"NCDHW\"", "\"OIDHW\"", "\"\"");
static const kiln_attr_field_t conv2d_nchwc_fields[] =
    CONV_FIELDS("[1, 1]", "[0, 0, 0, 0]", "\"NCHW16c\"", "\"OIHW16i16o\"", "\"NCHW16c\"");

/* Which splits each operator's layouts must have (kiln_nn_layout_require),
 * and the primal axes of its data and kernel. */
typedef struct conv_form_t {
  const char *data_splits;
  const char *kernel_splits;
  const char *out_splits;
  bool out_may_be_empty; /* "" means data_layout */
  int spatial;
  const char *data_order;
  const char *kernel_order;
} conv_form_t;

static const conv_form_t conv2d_form = {"", "", "", true, 2, "NCHW", "OIHW"};
static const conv_form_t conv2d_nchwc_form = {"c", "io", "c", false, 2, "NCHW", "OIHW"};
static const conv_form_t conv3d_form = {"", "", "", true, 3, "NCDHW", "OIDHW"};

static const conv_form_t *conv_form(const kiln_op_t *op) {
  if (op->id == KILN_OP_CONV3D) {
    return &conv3d_form;
  }
  return op->id == KILN_OP_CONV2D_NCHWC ? &conv2d_nchwc_form : &conv2d_form;
}

/* The three layouts, parsed and checked against the operator's form. */
static kiln_status_t conv_layouts(const kiln_op_t *op, const kiln_nn_conv2d_attrs_t *a,
                                  kiln_layout_t *out_data, kiln_layout_t *out_kernel,
                                  kiln_layout_t *out_out) {
  const conv_form_t *form = conv_form(op);
  KILN_RETURN_IF_ERROR(kiln_nn_layout_require(op, "data_layout", a->data_layout, form->data_order,
                                              form->data_splits, form->data_splits, out_data));
  KILN_RETURN_IF_ERROR(kiln_nn_layout_require(op, "kernel_layout", a->kernel_layout,
                                              form->kernel_order, form->kernel_splits,
                                              form->kernel_splits, out_kernel));
  if (form->out_may_be_empty && (!a->out_layout || !*a->out_layout)) {
    *out_out = *out_data;
    return KILN_OK;
  }
  return kiln_nn_layout_require(op, "out_layout", a->out_layout, form->data_order, form->out_splits,
                                form->out_splits, out_out);
}

static kiln_status_t conv_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_nn_conv2d_attrs_t *a = attrs;
  int n = conv_form(op)->spatial;
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "strides", a->strides, n, -1, 1));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "padding", a->padding, 2 * n, -1, 0));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "dilation", a->dilation, n, -1, 1));
  KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "kernel_size", a->kernel_size, n, 0, 1));
  if (a->groups < 1 || a->groups > KILN_NN_WINDOW_ATTR_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: groups is %lld; it must be positive", op->name,
                       (long long)a->groups);
  }
  if (a->channels < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: channels is %lld; it must be 0 or positive", op->name,
                       (long long)a->channels);
  }
  kiln_layout_t data, kernel, out;
  return conv_layouts(op, a, &data, &kernel, &out);
}

/* ---- the plan shared by relation and kernel ---- */

typedef struct conv_plan_t {
  const conv_form_t *form;
  kiln_layout_t out_layout;
  kiln_nn_axis_view_t data[KILN_NN_MAX_SPATIAL + 2];   /* N, C, (D,) H, W */
  kiln_nn_axis_view_t weight[KILN_NN_MAX_SPATIAL + 2]; /* O, I, (KD,) KH, KW */
  kiln_nn_window_t window;
  int64_t groups;
  int64_t out_logical[KILN_NN_MAX_SPATIAL + 2]; /* N, O, (OD,) OH, OW */
  int64_t out_shape[KILN_LAYOUT_MAX_AXES];
} conv_plan_t;

/* The blocks of output C and kernel O agree; without groups the blocks of
 * data C and kernel I agree too, and with groups the kernel's I block is 1
 * (depthwise OIHW1i{o}o: a block of input channels would straddle groups). */
static kiln_status_t conv_check_blocks(const kiln_op_t *op, int64_t groups,
                                       const kiln_layout_t *data, const kiln_layout_t *kernel,
                                       const kiln_layout_t *out) {
  int64_t kernel_i = kiln_layout_factor(kernel, 'I');
  if (groups == 1 && kiln_layout_factor(data, 'C') != kernel_i) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data_layout %s and kernel_layout %s split the input channels "
                       "differently",
                       op->name, data->text, kernel->text);
  }
  if (groups > 1 && kernel_i > 1) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: groups %lld needs an input-channel block of 1 in kernel_layout "
                       "(OIHW1i{o}o), not %s",
                       op->name, (long long)groups, kernel->text);
  }
  if (kiln_layout_factor(out, 'C') != kiln_layout_factor(kernel, 'O')) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: out_layout %s and kernel_layout %s split the output channels "
                       "differently",
                       op->name, out->text, kernel->text);
  }
  return KILN_OK;
}

/* Channels against groups, and the optional channels and kernel_size attrs. */
static kiln_status_t conv_check_channels(const kiln_op_t *op, const kiln_nn_conv2d_attrs_t *a,
                                         const conv_plan_t *plan, const kiln_tensor_type_t *data,
                                         const kiln_tensor_type_t *weight) {
  char data_text[KILN_SHAPE_TEXT_CAPACITY], weight_text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_op_shape_text(data, data_text);
  kiln_op_shape_text(weight, weight_text);
  long long channels = plan->data[1].extent, outputs = plan->weight[0].extent;
  int64_t expected = 0;
  if (__builtin_mul_overflow(plan->weight[1].extent, a->groups, &expected) ||
      expected != channels) {
    return KILN_STATUS(
        INVALID_ARGUMENT, "%s: data %s has %lld channels but weight %s expects %lld (groups %lld)",
        op->name, data_text, channels, weight_text, (long long)expected, (long long)a->groups);
  }
  if (outputs % a->groups != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: groups %lld does not divide the %lld output channels of weight %s",
                       op->name, (long long)a->groups, outputs, weight_text);
  }
  if (a->channels != 0 && a->channels != outputs) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: channels %lld does not match the %lld output channels of weight %s",
                       op->name, (long long)a->channels, outputs, weight_text);
  }
  return kiln_nn_check_kernel_size(op, a->kernel_size, plan->weight + 2, weight_text);
}

static kiln_status_t conv_plan_make(const kiln_op_t *op, const kiln_nn_conv2d_attrs_t *a,
                                    const kiln_tensor_type_t *data,
                                    const kiln_tensor_type_t *weight, conv_plan_t *out_plan) {
  kiln_layout_t data_layout, kernel_layout;
  KILN_RETURN_IF_ERROR(conv_layouts(op, a, &data_layout, &kernel_layout, &out_plan->out_layout));
  KILN_RETURN_IF_ERROR(
      conv_check_blocks(op, a->groups, &data_layout, &kernel_layout, &out_plan->out_layout));
  const conv_form_t *form = out_plan->form = conv_form(op);
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_nn_layout_view(&data_layout, form->data_order, data->ndim, data->shape, out_plan->data),
      "%s: data", op->name);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_view(&kernel_layout, form->kernel_order,
                                                    weight->ndim, weight->shape, out_plan->weight),
                                "%s: weight", op->name);
  KILN_RETURN_IF_ERROR(conv_check_channels(op, a, out_plan, data, weight));
  out_plan->groups = a->groups;
  int64_t kernel[KILN_NN_MAX_SPATIAL], in[KILN_NN_MAX_SPATIAL];
  for (int d = 0; d < form->spatial; ++d) {
    kernel[d] = out_plan->weight[2 + d].extent;
    in[d] = out_plan->data[2 + d].extent;
  }
  out_plan->window =
      kiln_nn_window_of(form->spatial, kernel, a->strides, a->dilation, a->padding, false);
  out_plan->out_logical[0] = out_plan->data[0].extent;
  out_plan->out_logical[1] = out_plan->weight[0].extent;
  KILN_RETURN_IF_ERROR(
      kiln_nn_window_outputs(op, &out_plan->window, data, in, &out_plan->out_logical[2]));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_shape(&out_plan->out_layout, form->data_order,
                                                     out_plan->out_logical, out_plan->out_shape),
                                "%s: output", op->name);
  return KILN_OK;
}

/* ---- rules ---- */

static kiln_status_t conv_infer(const kiln_type_relation_t *relation,
                                const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, relation->attrs));
  const kiln_tensor_type_t *inputs[2];
  KILN_RETURN_IF_ERROR(kiln_nn_input_tensors(relation, 2, inputs));
  KILN_RETURN_IF_ERROR(kiln_nn_same_dtype(op, "data", inputs[0], "weight", inputs[1]));
  conv_plan_t plan;
  KILN_RETURN_IF_ERROR(conv_plan_make(op, relation->attrs, inputs[0], inputs[1], &plan));
  return kiln_tensor_type_create(relation->arena, inputs[0]->dtype, plan.out_layout.ndim,
                                 plan.out_shape, out_type);
}

/* Data in data_layout, weight in kernel_layout; the output in out_layout. */
static kiln_status_t conv_correct_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(relation->op, relation->attrs));
  const kiln_nn_conv2d_attrs_t *a = relation->attrs;
  return kiln_nn_layout_rule_conv(relation, a->data_layout, a->kernel_layout, a->out_layout);
}

/* ---- reference kernel ---- */

typedef struct conv_run_t {
  const conv_plan_t *plan;
  const float *data;
  const float *weight;
} conv_run_t;

/* The data and weight offsets of kernel tap k for the output at spatial
 * coordinates `out`; false when the tap reads the padding. */
static bool conv_tap(const conv_plan_t *plan, const int64_t *out, const int64_t *k,
                     int64_t *out_data, int64_t *out_weight) {
  const kiln_nn_window_t *win = &plan->window;
  int64_t data = 0, weight = 0;
  for (int s = 0; s < win->spatial; ++s) {
    int64_t x = out[s] * win->stride[s] - win->pad[s] + k[s] * win->dilation[s];
    if (x < 0 || x >= plan->data[2 + s].extent) {
      return false;
    }
    data += kiln_nn_axis_offset(&plan->data[2 + s], x);
    weight += kiln_nn_axis_offset(&plan->weight[2 + s], k[s]);
  }
  *out_data = data;
  *out_weight = weight;
  return true;
}

/* Output element c = (n, o, then the spatial output coordinates): the sum
 * over the input channels of o's group, then the kernel taps in row-major
 * order, of data * weight, in double. */
static double conv_point(const void *context, const int64_t *c) {
  const conv_run_t *run = context;
  const conv_plan_t *plan = run->plan;
  const kiln_nn_axis_view_t *d = plan->data, *w = plan->weight;
  const kiln_nn_window_t *win = &plan->window;
  int64_t group_inputs = w[1].extent;
  int64_t first = (c[1] / (w[0].extent / plan->groups)) * group_inputs;
  double sum = 0.0;
  for (int64_t i = 0; i < group_inputs; ++i) {
    int64_t data_nc = kiln_nn_axis_offset(&d[0], c[0]) + kiln_nn_axis_offset(&d[1], first + i);
    int64_t weight_oi = kiln_nn_axis_offset(&w[0], c[1]) + kiln_nn_axis_offset(&w[1], i);
    int64_t k[KILN_NN_MAX_SPATIAL] = {0}, at_data = 0, at_weight = 0;
    do {
      if (conv_tap(plan, c + 2, k, &at_data, &at_weight)) {
        sum += (double)run->data[data_nc + at_data] * run->weight[weight_oi + at_weight];
      }
    } while (kiln_nn_next_index(win->spatial, win->kernel, k));
  }
  return (float)sum;
}

static kiln_status_t conv_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_begin_float32(args));
  kiln_tensor_type_t data = kiln_nn_tensor_type(args->inputs[0]);
  kiln_tensor_type_t weight = kiln_nn_tensor_type(args->inputs[1]);
  conv_plan_t plan;
  KILN_RETURN_IF_ERROR(conv_plan_make(args->op, args->attrs, &data, &weight, &plan));
  conv_run_t run = {.plan = &plan,
                    .data = kiln_tensor_data(args->inputs[0]),
                    .weight = kiln_tensor_data(args->inputs[1])};
  return kiln_nn_fill(args->outputs[0], &plan.out_layout, plan.form->data_order, plan.out_logical,
                      conv_point, &run);
}

/* ---- the operators ---- */

#define CONV_OP(symbol, op_name, op_id, fields, schedule_fn)                    \
  KILN_NN_CONV_OP(symbol, op_name, op_id, kiln_nn_conv2d_attrs_t, fields, conv, \
                  kiln_compute_conv2d, schedule_fn)

CONV_OP(kiln_op_conv2d, "nn.conv2d", KILN_OP_CONV2D, conv2d_fields, NULL);
CONV_OP(kiln_op_conv3d, "nn.conv3d", KILN_OP_CONV3D, conv3d_fields, NULL);
CONV_OP(kiln_op_conv2d_nchwc, "nn.contrib_conv2d_NCHWc", KILN_OP_CONV2D_NCHWC, conv2d_nchwc_fields,
        kiln_schedule_conv2d_nchwc_x86);
