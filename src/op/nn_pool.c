/*
 * Pooling: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d,
 * nn.global_max_pool2d, and the 3-D windows nn.max_pool3d and
 * nn.avg_pool3d.
 *
 * The six operators are one computation: a window slides over the logical
 * spatial axes (H and W of (N, C, H, W) data; D, H and W of (N, C, D, H, W)
 * for the 3-D forms) and each output element is the max or the mean of the
 * cells it covers. The plan, the relation and the kernel are written once
 * for any number of spatial dims (kiln_nn_window_t holds up to three); an
 * operator only says how many it has. A global pool is the window of the whole input
 * (pool (H, W), stride 1, no padding), so one plan (pool_plan_make) serves
 * the four type relations and one loop the four kernels. The data is read
 * through the layout view of the `layout` attribute, so NCHW, NHWC and the
 * blocked NCHW{c}c all run the same loop.
 *
 * Padding follows ONNX. Max ignores padded cells. Avg sums the cells inside
 * the input and divides by their number (count_include_pad False) or by the
 * number of window cells inside the padded input (True), so a ceil_mode
 * window that runs past the bottom or right padding is clipped to it. Output
 * extents with ceil_mode are PyTorch's and ONNX's: the last window must start
 * inside the input or the top/left padding. A window with no cell inside the
 * input (possible with dilation or padding at least the pool size) gives
 * -inf for max (as PyTorch; an integer dtype's lowest value) and 0 for avg
 * without padding counted.
 *
 * Max runs on float32 and the integers of up to 32 bits (ONNX's MaxPool
 * takes int8 and uint8): the cells are read as doubles, which hold all of
 * them exactly, and the result is stored back as cast stores it. Avg is
 * float32 only.
 */
#include <math.h>

#include "op/impl.h"
#include "op/nn_common.h"
#include "op/nn_compute.h"

/* ---- attributes ---- */

#define POOL2D_FIELD(field, kind, text) KILN_ATTR_FIELD(kiln_nn_pool2d_attrs_t, field, kind, text)

#define POOL2D_FIELDS                                                                      \
  POOL2D_FIELD(pool_size, INTS, "[1, 1]"), POOL2D_FIELD(strides, INTS, "[1, 1]"),          \
      POOL2D_FIELD(dilation, INTS, "[1, 1]"), POOL2D_FIELD(padding, INTS, "[0, 0, 0, 0]"), \
      POOL2D_FIELD(layout, STRING, "\"NCHW\""), POOL2D_FIELD(ceil_mode, BOOL, "False")

#define POOL3D_FIELDS                                                                   \
  POOL2D_FIELD(pool_size, INTS, "[1, 1, 1]"), POOL2D_FIELD(strides, INTS, "[1, 1, 1]"), \
      POOL2D_FIELD(dilation, INTS, "[1, 1, 1]"),                                        \
      POOL2D_FIELD(padding, INTS, "[0, 0, 0, 0, 0, 0]"),                                \
      POOL2D_FIELD(layout, STRING, "\"NCDHW\""), POOL2D_FIELD(ceil_mode, BOOL, "False")

static const kiln_attr_field_t max_pool2d_fields[] = {POOL2D_FIELDS};

static const kiln_attr_field_t avg_pool2d_fields[] = {
    POOL2D_FIELDS,
    POOL2D_FIELD(count_include_pad, BOOL, "False"),
};

static const kiln_attr_field_t max_pool3d_fields[] = {POOL3D_FIELDS};

static const kiln_attr_field_t avg_pool3d_fields[] = {
    POOL3D_FIELDS,
    POOL2D_FIELD(count_include_pad, BOOL, "False"),
};

static const kiln_attr_field_t global_pool2d_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_global_pool2d_attrs_t, layout, STRING, "\"NCHW\""),
};

static bool pool_is_global(const kiln_op_t *op) {
  return op->id == KILN_OP_GLOBAL_AVG_POOL2D || op->id == KILN_OP_GLOBAL_MAX_POOL2D;
}

static bool pool_is_max(const kiln_op_t *op) {
  return op->id == KILN_OP_MAX_POOL2D || op->id == KILN_OP_GLOBAL_MAX_POOL2D ||
         op->id == KILN_OP_MAX_POOL3D;
}

/* The number of spatial dims: 3 for the 3-D forms, else 2. */
static int pool_spatial(const kiln_op_t *op) {
  return op->id == KILN_OP_MAX_POOL3D || op->id == KILN_OP_AVG_POOL3D ? 3 : 2;
}

/* The primal axes of the operator's data, in logical order. */
static const char *pool_order(const kiln_op_t *op) {
  return pool_spatial(op) == 3 ? "NCDHW" : "NCHW";
}

const char *kiln_nn_pool_layout_text(const kiln_op_t *op, const void *attrs) {
  if (pool_is_global(op)) {
    return ((const kiln_nn_global_pool2d_attrs_t *)attrs)->layout;
  }
  return ((const kiln_nn_pool2d_attrs_t *)attrs)->layout;
}

/* NCHW (NCDHW) in any order, C optionally split. */
static kiln_status_t pool_layout(const kiln_op_t *op, const void *attrs,
                                 kiln_layout_t *out_layout) {
  return kiln_nn_layout_require(op, "layout", kiln_nn_pool_layout_text(op, attrs), pool_order(op),
                                "c", "", out_layout);
}

static kiln_status_t pool_validate(const kiln_op_t *op, const void *attrs) {
  if (!pool_is_global(op)) {
    const kiln_nn_pool2d_attrs_t *a = attrs;
    int n = pool_spatial(op);
    KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "pool_size", a->pool_size, n, -1, 1));
    KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "strides", a->strides, n, -1, 1));
    KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "dilation", a->dilation, n, -1, 1));
    KILN_RETURN_IF_ERROR(kiln_nn_check_ints(op, "padding", a->padding, 2 * n, -1, 0));
  }
  kiln_layout_t layout;
  return pool_layout(op, attrs, &layout);
}

/* ---- the plan shared by relation and kernel ---- */

typedef struct pool_plan_t {
  kiln_layout_t layout;
  const char *order;                                 /* "NCHW" or "NCDHW" */
  kiln_nn_axis_view_t data[KILN_NN_MAX_SPATIAL + 2]; /* N, C, then the spatial axes */
  kiln_nn_window_t window;
  bool is_max;
  bool count_include_pad;
  int64_t out_logical[KILN_NN_MAX_SPATIAL + 2]; /* N, C, then the output's spatial extents */
  int64_t out_shape[KILN_LAYOUT_MAX_AXES];
} pool_plan_t;

static kiln_status_t pool_plan_make(const kiln_op_t *op, const void *attrs,
                                    const kiln_tensor_type_t *data, pool_plan_t *out_plan) {
  int n = pool_spatial(op);
  out_plan->order = pool_order(op);
  KILN_RETURN_IF_ERROR(pool_layout(op, attrs, &out_plan->layout));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_view(&out_plan->layout, out_plan->order, data->ndim,
                                                    data->shape, out_plan->data),
                                "%s: data", op->name);
  int64_t in[KILN_NN_MAX_SPATIAL];
  for (int d = 0; d < n; ++d) {
    in[d] = out_plan->data[2 + d].extent;
  }
  out_plan->is_max = pool_is_max(op);
  out_plan->count_include_pad = false;
  if (pool_is_global(op)) {
    out_plan->window = kiln_nn_window_whole(n, in);
  } else {
    const kiln_nn_pool2d_attrs_t *a = attrs;
    out_plan->window = kiln_nn_window_of(n, a->pool_size.values, a->strides, a->dilation,
                                         a->padding, a->ceil_mode);
    out_plan->count_include_pad = a->count_include_pad;
  }
  out_plan->out_logical[0] = out_plan->data[0].extent;
  out_plan->out_logical[1] = out_plan->data[1].extent;
  KILN_RETURN_IF_ERROR(
      kiln_nn_window_outputs(op, &out_plan->window, data, in, &out_plan->out_logical[2]));
  return kiln_nn_layout_shape(&out_plan->layout, out_plan->order, out_plan->out_logical,
                              out_plan->out_shape);
}

/* ---- rules ---- */

static kiln_status_t pool_infer(const kiln_type_relation_t *relation,
                                const kiln_type_t **out_type) {
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(relation->op, relation->attrs));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  pool_plan_t plan;
  KILN_RETURN_IF_ERROR(pool_plan_make(relation->op, relation->attrs, data, &plan));
  return kiln_tensor_type_create(relation->arena, data->dtype, plan.layout.ndim, plan.out_shape,
                                 out_type);
}

/* The data in the layout attribute; the output in the same. */
static kiln_status_t pool_correct_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(relation->op, relation->attrs));
  const char *layout = kiln_nn_pool_layout_text(relation->op, relation->attrs);
  relation->required_layouts[0] = layout;
  relation->output_layout = layout;
  return KILN_OK;
}

/* ---- reference kernel ---- */

typedef struct pool_run_t {
  const pool_plan_t *plan;
  const void *data;
  kiln_scalar_kind_t kind;
} pool_run_t;

/* How many of the window's cells along `dim`, starting at `start`, fall
 * inside the padded input (whose end is the input extent plus the trailing
 * padding). */
static int64_t pool_padded_cells(const kiln_nn_window_t *window, int dim, int64_t start,
                                 int64_t extent) {
  int64_t end = extent + window->pad[dim + window->spatial], count = 0;
  for (int64_t k = 0; k < window->kernel[dim]; ++k) {
    count += start + k * window->dilation[dim] < end;
  }
  return count;
}

/* The offset of window cell `k` of output element `c`, or -1 when the cell
 * is outside the input. */
static int64_t pool_cell_offset(const pool_plan_t *plan, const int64_t *c, const int64_t *k) {
  const kiln_nn_window_t *win = &plan->window;
  int64_t at =
      kiln_nn_axis_offset(&plan->data[0], c[0]) + kiln_nn_axis_offset(&plan->data[1], c[1]);
  for (int d = 0; d < win->spatial; ++d) {
    int64_t i = c[2 + d] * win->stride[d] - win->pad[d] + k[d] * win->dilation[d];
    if (i < 0 || i >= plan->data[2 + d].extent) {
      return -1;
    }
    at += kiln_nn_axis_offset(&plan->data[2 + d], i);
  }
  return at;
}

/* Output element c = (n, c, then the spatial output coordinates). */
static double pool_point(const void *context, const int64_t *c) {
  const pool_run_t *run = context;
  const pool_plan_t *plan = run->plan;
  const kiln_nn_window_t *win = &plan->window;
  double best = -INFINITY, sum = 0.0;
  int64_t inside = 0, k[KILN_NN_MAX_SPATIAL] = {0};
  do {
    int64_t at = pool_cell_offset(plan, c, k);
    if (at < 0) {
      continue;
    }
    double x = kiln_scalar_to_double(kiln_scalar_load(run->kind, run->data, at));
    best = isnan(x) || x > best ? x : best;
    sum += x;
    ++inside;
  } while (kiln_nn_next_index(win->spatial, win->kernel, k));
  if (plan->is_max) {
    return best;
  }
  int64_t divisor = inside;
  if (plan->count_include_pad) {
    divisor = 1;
    for (int d = 0; d < win->spatial; ++d) {
      int64_t start = c[2 + d] * win->stride[d] - win->pad[d];
      divisor *= pool_padded_cells(win, d, start, plan->data[2 + d].extent);
    }
  }
  return divisor > 0 ? (double)(float)(sum / (double)divisor) : 0.0;
}

static kiln_status_t pool_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_check(args));
  kiln_tensor_type_t data = kiln_nn_tensor_type(args->inputs[0]);
  bool handled =
      pool_is_max(args->op) ? kiln_nn_max_pool_dtype(data.dtype) : data.dtype == KILN_DTYPE_FLOAT32;
  if (!handled) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not handle dtype %s",
                       args->op->name, kiln_dtype_name(data.dtype));
  }
  pool_plan_t plan;
  KILN_RETURN_IF_ERROR(pool_plan_make(args->op, args->attrs, &data, &plan));
  pool_run_t run = {.plan = &plan,
                    .data = kiln_tensor_data(args->inputs[0]),
                    .kind = kiln_scalar_kind(data.dtype)};
  return kiln_nn_fill(args->outputs[0], &plan.layout, plan.order, plan.out_logical, pool_point,
                      &run);
}

/* ---- the operators ---- */

#define POOL_OP(symbol, op_name, op_id, fields, attrs_type, schedule_fn) \
  const kiln_op_t symbol = {                                             \
      .name = op_name,                                                   \
      .id = op_id,                                                       \
      .min_inputs = 1,                                                   \
      .max_inputs = 1,                                                   \
      .pattern = KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE,                   \
      .attrs_size = sizeof(attrs_type),                                  \
      .num_attr_fields = sizeof(fields) / sizeof(kiln_attr_field_t),     \
      .attr_fields = fields,                                             \
      .validate_attrs = pool_validate,                                   \
      .infer_type = pool_infer,                                          \
      .correct_layout = pool_correct_layout,                             \
  };                                                                     \
  const kiln_op_impl_t symbol##_impl = {.reference = pool_reference,     \
                                        .compute = kiln_compute_nn_pool, \
                                        .strategies = {[KILN_TARGET_KIND_CPU] = schedule_fn}}

/* The x86 pool schedule is written for 2-D windows; the 3-D forms take the
 * default schedule (NULL). */
POOL_OP(kiln_op_max_pool2d, "nn.max_pool2d", KILN_OP_MAX_POOL2D, max_pool2d_fields,
        kiln_nn_pool2d_attrs_t, kiln_schedule_pool_x86);
POOL_OP(kiln_op_avg_pool2d, "nn.avg_pool2d", KILN_OP_AVG_POOL2D, avg_pool2d_fields,
        kiln_nn_pool2d_attrs_t, kiln_schedule_pool_x86);
POOL_OP(kiln_op_global_avg_pool2d, "nn.global_avg_pool2d", KILN_OP_GLOBAL_AVG_POOL2D,
        global_pool2d_fields, kiln_nn_global_pool2d_attrs_t, kiln_schedule_pool_x86);
POOL_OP(kiln_op_global_max_pool2d, "nn.global_max_pool2d", KILN_OP_GLOBAL_MAX_POOL2D,
        global_pool2d_fields, kiln_nn_global_pool2d_attrs_t, kiln_schedule_pool_x86);
POOL_OP(kiln_op_max_pool3d, "nn.max_pool3d", KILN_OP_MAX_POOL3D, max_pool3d_fields,
        kiln_nn_pool2d_attrs_t, NULL);
POOL_OP(kiln_op_avg_pool3d, "nn.avg_pool3d", KILN_OP_AVG_POOL3D, avg_pool3d_fields,
        kiln_nn_pool2d_attrs_t, NULL);
