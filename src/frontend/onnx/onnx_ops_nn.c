/*
 * nn converters: Conv, ConvTranspose, Gemm, MatMul, Einsum, Det, pooling and
 * softmax.
 *
 * Einsum is the registry's einsum with the equation as it is (the operator
 * parses it against the inputs' shapes and says what does not fit); Det is
 * det.
 *
 * Convolution and pooling share one reading of ONNX's window attributes
 * (kernel_shape, strides, dilations, pads as [x1_begin, x2_begin, ...,
 * x1_end, x2_end], auto_pad) into kiln's 2-D form (padding top, left,
 * bottom, right). auto_pad SAME_UPPER and SAME_LOWER are resolved here from
 * the static input shape, as ONNX defines them (output ceil(in / stride),
 * the odd pixel at the end or the start). ConvTranspose resolves auto_pad
 * and output_shape the same way from the size it must produce (the total
 * padding split as ONNX's reference splits it; what the strides cannot
 * reach becomes output_padding). A 1-D window is lifted to 2-D: a dim of 1
 * is inserted at axis 2 of the data (and the weight) and squeezed from the
 * result. A 3-D window stays 3-D (padding front, top, left, back, bottom,
 * right): pooling's nn.max_pool3d and nn.avg_pool3d, Conv's nn.conv3d,
 * ConvTranspose's nn.conv3d_transpose. Gemm is dense (transB) or matmul, then the alpha
 * and beta scalings and the C addition as elementwise calls, which fold when constant. Softmax
 * before opset 13 flattens at its axis into 2-D, as that opset defines it. The normalizations are
 * onnx_ops_norm.c.
 */
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "op/nn_common.h"

/* ---- windows ---- */

typedef struct kiln_onnx_window_t {
  int spatial; /* 1, 2, or 3 */
  int64_t kernel[3];
  int64_t stride[3];
  int64_t dilation[3];
  int64_t pad_begin[3];
  int64_t pad_end[3];
} kiln_onnx_window_t;

/* An INTS attribute of `count` values (all `fallback` when absent). */
static kiln_status_t kiln_onnx_window_ints(const kiln_onnx_node_t *node, const char *name,
                                           int count, int64_t fallback, int64_t *out_values) {
  kiln_ints_t ints;
  bool present = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, name, &ints, &present));
  if (present && ints.count != count) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s has %d values; expected %d", name,
                       (int)ints.count, count);
  }
  for (int i = 0; i < count; ++i) {
    out_values[i] = present ? ints.values[i] : fallback;
  }
  return KILN_OK;
}

/* Resolves auto_pad SAME_* for dim `d` over an input of extent `in`. */
static void kiln_onnx_window_same(kiln_onnx_window_t *window, int d, int64_t in, bool upper) {
  int64_t stride = window->stride[d] > 0 ? window->stride[d] : 1;
  int64_t out = (in + stride - 1) / stride;
  int64_t reach = (window->kernel[d] - 1) * window->dilation[d] + 1;
  int64_t total = (out - 1) * stride + reach - in;
  total = total > 0 ? total : 0;
  window->pad_begin[d] = upper ? total / 2 : total - total / 2;
  window->pad_end[d] = total - window->pad_begin[d];
}

/* The pads attribute [x1_begin, x2_begin, ..., x1_end, ...] (default 0). */
static kiln_status_t kiln_onnx_window_explicit_pads(const kiln_onnx_node_t *node,
                                                    kiln_onnx_window_t *window) {
  int n = window->spatial;
  int64_t pads[6];
  KILN_RETURN_IF_ERROR(kiln_onnx_window_ints(node, "pads", 2 * n, 0, pads));
  for (int d = 0; d < n; ++d) {
    window->pad_begin[d] = pads[d];
    window->pad_end[d] = pads[n + d];
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_window_pads(const kiln_onnx_node_t *node,
                                           const kiln_tensor_type_t *x,
                                           kiln_onnx_window_t *window) {
  const char *auto_pad = "NOTSET";
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "auto_pad", "NOTSET", &auto_pad));
  int n = window->spatial;
  if (strcmp(auto_pad, "NOTSET") == 0) {
    return kiln_onnx_window_explicit_pads(node, window);
  }
  bool same_upper = strcmp(auto_pad, "SAME_UPPER") == 0;
  bool same_lower = strcmp(auto_pad, "SAME_LOWER") == 0;
  if (!same_upper && !same_lower && strcmp(auto_pad, "VALID") != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "attribute auto_pad is \"%s\"; expected NOTSET, SAME_UPPER, SAME_LOWER or "
                       "VALID",
                       auto_pad);
  }
  for (int d = 0; d < n; ++d) {
    window->pad_begin[d] = window->pad_end[d] = 0;
    if (same_upper || same_lower) {
      kiln_onnx_window_same(window, d, x->shape[2 + d], same_upper);
    }
  }
  return KILN_OK;
}

/* Data of 1 to `most` spatial dims (rank 3 to most + 2). */
static kiln_status_t kiln_onnx_window_check_rank(const kiln_tensor_type_t *x, int most) {
  if (x->ndim < 3 || x->ndim > most + 2) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(x->ndim, x->shape, shape, sizeof(shape));
    return KILN_STATUS(UNIMPLEMENTED,
                       "data %s has %d spatial dims; kiln supports 1-D to %d-D windows here", shape,
                       x->ndim - 2, most);
  }
  return KILN_OK;
}

/* The window's kernel from the weight's spatial dims, which kernel_shape
 * (when given) must repeat. */
static kiln_status_t kiln_onnx_window_kernel(const kiln_onnx_node_t *node,
                                             const kiln_tensor_type_t *weight,
                                             kiln_onnx_window_t *window) {
  int64_t kernel[3];
  KILN_RETURN_IF_ERROR(kiln_onnx_window_ints(node, "kernel_shape", window->spatial, 0, kernel));
  for (int d = 0; d < window->spatial; ++d) {
    window->kernel[d] = weight->shape[2 + d];
    if (kernel[d] != 0 && kernel[d] != window->kernel[d]) {
      return KILN_STATUS(INVALID_ARGUMENT, "kernel_shape[%d] is %lld but the weight has %lld", d,
                         (long long)kernel[d], (long long)window->kernel[d]);
    }
  }
  return KILN_OK;
}

/* The window of a node over data `x` (1 to `most` spatial dims) with
 * `kernel`. */
static kiln_status_t kiln_onnx_window_read(const kiln_onnx_node_t *node,
                                           const kiln_tensor_type_t *x, const int64_t *kernel,
                                           int most, kiln_onnx_window_t *out_window) {
  KILN_RETURN_IF_ERROR(kiln_onnx_window_check_rank(x, most));
  kiln_onnx_window_t window = {.spatial = x->ndim - 2};
  for (int d = 0; d < window.spatial; ++d) {
    window.kernel[d] = kernel[d];
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_window_ints(node, "strides", window.spatial, 1, window.stride));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_window_ints(node, "dilations", window.spatial, 1, window.dilation));
  KILN_RETURN_IF_ERROR(kiln_onnx_window_pads(node, x, &window));
  *out_window = window;
  return KILN_OK;
}

/* The registry's form of the window, of n = max(2, spatial) dims: a 1-D
 * window gets a leading dim of 1; padding is the n begins, then the n ends.
 * Returns n. */
static int kiln_onnx_window_nd(const kiln_onnx_window_t *window, int64_t *kernel, int64_t *stride,
                               int64_t *dilation, int64_t *padding) {
  int lift = window->spatial == 1, n = window->spatial + lift;
  kernel[0] = stride[0] = dilation[0] = 1;
  padding[0] = padding[n] = 0;
  for (int d = 0; d < window->spatial; ++d) {
    kernel[d + lift] = window->kernel[d];
    stride[d + lift] = window->stride[d];
    dilation[d + lift] = window->dilation[d];
    padding[d + lift] = window->pad_begin[d];
    padding[d + lift + n] = window->pad_end[d];
  }
  return n;
}

/* A 1-D window runs as 2-D: x gets a dim of 1 at axis 2 ... */
static kiln_status_t kiln_onnx_window_lift(const kiln_onnx_node_t *node,
                                           const kiln_onnx_window_t *window, kiln_expr_t **inout) {
  return window->spatial == 1 ? kiln_onnx_expand_dims(node, *inout, 2, inout) : KILN_OK;
}

/* ... which the result loses again. */
static kiln_status_t kiln_onnx_window_drop(const kiln_onnx_node_t *node,
                                           const kiln_onnx_window_t *window, kiln_expr_t **inout) {
  const int64_t axis = 2;
  return window->spatial == 1 ? kiln_onnx_squeeze(node, *inout, 1, &axis, inout) : KILN_OK;
}

/* ---- Conv ---- */

/* The window attributes of conv2d or conv3d and their transposes (a 1-D
 * window in 2-D form), groups and channels. */
static kiln_status_t kiln_onnx_conv_attrs(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                          const kiln_onnx_window_t *window, int64_t groups,
                                          int64_t channels, void **out_attrs) {
  int64_t kernel[3], stride[3], dilation[3], padding[6];
  int n = kiln_onnx_window_nd(window, kernel, stride, dilation, padding);
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, out_attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, *out_attrs, "strides", n, stride));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, *out_attrs, "padding", 2 * n, padding));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, *out_attrs, "dilation", n, dilation));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, *out_attrs, "kernel_size", n, kernel));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, *out_attrs, "groups", groups));
  return kiln_onnx_set_int(op, *out_attrs, "channels", channels);
}

/* Inputs 0 and 1 (data and weight) of the same rank. */
static kiln_status_t kiln_onnx_conv_inputs(const kiln_onnx_node_t *node, kiln_expr_t **out_x,
                                           kiln_expr_t **out_w) {
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, out_x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, out_w));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(*out_x), *wt = kiln_onnx_type_of(*out_w);
  if (wt->ndim != xt->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "weight has rank %d but data has rank %d", wt->ndim,
                       xt->ndim);
  }
  return KILN_OK;
}

/* `op` over x and w (lifted to 2-D for a 1-D window), plus the bias of
 * input 2 when there is one, into node->outputs[0]. */
static kiln_status_t kiln_onnx_conv_emit(kiln_onnx_node_t *node, const kiln_op_t *op,
                                         const kiln_onnx_window_t *window, const void *attrs,
                                         kiln_expr_t *x, kiln_expr_t *w) {
  kiln_expr_t *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_window_lift(node, window, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_window_lift(node, window, &w));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, op, x, w, attrs, &y));
  kiln_expr_t *bias = kiln_onnx_input_optional(node, 2);
  if (bias) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_bias_add, y, bias, NULL, &y));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_window_drop(node, window, &y));
  node->outputs[0] = y;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_conv(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *w = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_conv_inputs(node, &x, &w));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x), *wt = kiln_onnx_type_of(w);
  kiln_onnx_window_t window;
  KILN_RETURN_IF_ERROR(kiln_onnx_window_read(node, xt, wt->shape + 2, 3, &window));
  KILN_RETURN_IF_ERROR(kiln_onnx_window_kernel(node, wt, &window));
  int64_t groups = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "group", 1, &groups));
  const kiln_op_t *op = window.spatial == 3 ? &kiln_op_conv3d : &kiln_op_conv2d;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_conv_attrs(node, op, &window, groups, wt->shape[0], &attrs));
  return kiln_onnx_conv_emit(node, op, &window, attrs, x, w);
}

/* ---- pooling ---- */

/* ---- MaxPool's Indices ---- */

/* The window in the registry's (lifted) form, and the data's and the
 * output's spatial extents: what the Indices expansion reads. */
typedef struct kiln_onnx_argmax_t {
  int64_t kernel[2], stride[2], dilation[2], padding[4];
  int64_t in[2], out[2];
  bool column_major; /* storage_order 1 */
} kiln_onnx_argmax_t;

/* x (N, C, H, W) widened and padded with the lowest value (-inf for floats) at
 * the top and left as the window is, and at the bottom and right as far as
 * the last window reaches (ceil_mode may reach past the padding). */
static kiln_status_t kiln_onnx_argmax_padded(const kiln_onnx_node_t *node,
                                             const kiln_onnx_argmax_t *a, kiln_expr_t *x,
                                             kiln_expr_t **out_expr) {
  int64_t width[8] = {0};
  for (int d = 0; d < 2; ++d) {
    int64_t reach = (a->out[d] - 1) * a->stride[d] + (a->kernel[d] - 1) * a->dilation[d] + 1;
    int64_t end = reach - a->in[d] - a->padding[d];
    width[4 + 2 * d] = a->padding[d];
    width[5 + 2 * d] = end > 0 ? end : 0;
  }
  /* The cells are compared as float32 or float64 (a narrower float widened)
   * or int64 (an integer widened), which argmax takes and which hold every
   * value exactly; the padding is below them all. */
  kiln_dtype_t dtype = kiln_onnx_type_of(x)->dtype;
  kiln_dtype_t wide = KILN_DTYPE_INT64;
  if (kiln_nn_dtype_is_float(dtype)) {
    wide = dtype == KILN_DTYPE_FLOAT64 ? KILN_DTYPE_FLOAT64 : KILN_DTYPE_FLOAT32;
  }
  double lowest = wide == KILN_DTYPE_INT64 ? (double)INT64_MIN : -(double)INFINITY;
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, x, wide, &x));
  const kiln_op_t *op = &kiln_op_pad;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "pad_width", 8, width));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "pad_value", lowest));
  return kiln_onnx_emit1(node, op, x, attrs, out_expr);
}

/* The cells at window offset (r, s) of every output position, as (1, N, C,
 * OH, OW). */
static kiln_status_t kiln_onnx_argmax_cells(const kiln_onnx_node_t *node,
                                            const kiln_onnx_argmax_t *a, kiln_expr_t *padded,
                                            int64_t r, int64_t s, kiln_expr_t **out_expr) {
  const int64_t axes[2] = {2, 3};
  int64_t begin[2] = {r * a->dilation[0], s * a->dilation[1]}, end[2];
  for (int d = 0; d < 2; ++d) {
    end[d] = begin[d] + (a->out[d] - 1) * a->stride[d] + 1;
  }
  const kiln_op_t *op = &kiln_op_strided_slice;
  void *attrs = NULL;
  kiln_expr_t *slice = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "begin", 2, begin));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "end", 2, end));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axes", 2, axes));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "strides", 2, a->stride));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, padded, attrs, &slice));
  return kiln_onnx_expand_dims(node, slice, 0, out_expr);
}

/* The spatial index (ih W + iw, or ih + iw H for storage_order 1) of window
 * cell k at every output position, as an int64 constant (K, 1, 1, OH, OW). */
static kiln_status_t kiln_onnx_argmax_table(const kiln_onnx_node_t *node,
                                            const kiln_onnx_argmax_t *a, kiln_expr_t **out_expr) {
  int64_t cells = a->kernel[0] * a->kernel[1];
  const int64_t shape[5] = {cells, 1, 1, a->out[0], a->out[1]};
  kiln_tensor_t *table = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_INT64, 5, shape, &table));
  int64_t *data = kiln_tensor_data(table), at = 0;
  for (int64_t k = 0; k < cells; ++k) {
    for (int64_t oh = 0; oh < a->out[0]; ++oh) {
      for (int64_t ow = 0; ow < a->out[1]; ++ow) {
        int64_t ih = oh * a->stride[0] - a->padding[0] + (k / a->kernel[1]) * a->dilation[0];
        int64_t iw = ow * a->stride[1] - a->padding[1] + (k % a->kernel[1]) * a->dilation[1];
        data[at++] = a->column_major ? ih + iw * a->in[0] : ih * a->in[1] + iw;
      }
    }
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, table, out_expr);
  kiln_tensor_release(table);
  return status;
}

/* (n C + c) H W, as an int64 constant (N, C, 1, 1). */
static kiln_status_t kiln_onnx_argmax_base(const kiln_onnx_node_t *node,
                                           const kiln_onnx_argmax_t *a, const kiln_tensor_type_t *x,
                                           kiln_expr_t **out_expr) {
  const int64_t shape[4] = {x->shape[0], x->shape[1], 1, 1};
  kiln_tensor_t *base = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_INT64, 4, shape, &base));
  int64_t *data = kiln_tensor_data(base);
  for (int64_t i = 0; i < x->shape[0] * x->shape[1]; ++i) {
    data[i] = i * a->in[0] * a->in[1];
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, base, out_expr);
  kiln_tensor_release(base);
  return status;
}

/* Picks the table's entry of the window cell `which` (1, N, C, OH, OW)
 * names: the sum over k of where(k == which, table, 0). */
static kiln_status_t kiln_onnx_argmax_pick(const kiln_onnx_node_t *node,
                                           const kiln_onnx_argmax_t *a, kiln_expr_t *which,
                                           kiln_expr_t **out_expr) {
  int64_t cells = a->kernel[0] * a->kernel[1];
  int64_t *ks = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(node->importer->arena, sizeof(int64_t) * (size_t)cells, 8, (void **)&ks));
  for (int64_t k = 0; k < cells; ++k) {
    ks[k] = k;
  }
  const int64_t column[5] = {cells, 1, 1, 1, 1};
  kiln_expr_t *k = NULL, *is = NULL, *table = NULL, *zero = NULL, *picked = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_int64s(node, (int)cells, ks, &k));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, k, 5, column, &k));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_equal, k, which, NULL, &is));
  KILN_RETURN_IF_ERROR(kiln_onnx_argmax_table(node, a, &table));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 0.0, &zero));
  kiln_expr_t *args[3] = {is, table, zero};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &picked));
  const int64_t axis = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_sum, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_sum, attrs, "axis", 1, &axis));
  return kiln_onnx_emit1(node, &kiln_op_sum, picked, attrs, out_expr);
}

/* MaxPool's Indices over x (N, C, H, W, a 1-D window lifted): the flat index
 * into x of each window's first largest cell, in row-major order
 * (storage_order 0) or with H and W swapped (1), as ONNX Runtime counts
 * them. The window's K cells are K strided slices of x padded with the
 * lowest value, stacked; argmax over them picks the cell, and a constant
 * table of each cell's spatial index, plus (n C + c) H W, gives the index. */
static kiln_status_t kiln_onnx_pool_indices(const kiln_onnx_node_t *node,
                                            const kiln_onnx_argmax_t *a, kiln_expr_t *x,
                                            kiln_expr_t **out_expr) {
  int64_t cells = a->kernel[0] * a->kernel[1];
  kiln_expr_t *padded = NULL, **stack = NULL, *all = NULL, *which = NULL, *base = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_argmax_padded(node, a, x, &padded));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(
      node->importer->arena, sizeof(kiln_expr_t *) * (size_t)cells, 8, (void **)&stack));
  for (int64_t k = 0; k < cells; ++k) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_argmax_cells(node, a, padded, k / a->kernel[1], k % a->kernel[1], &stack[k]));
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_concatenate, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_concatenate, (int)cells, stack, attrs, &all));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_argmax, all, NULL, &which));
  KILN_RETURN_IF_ERROR(kiln_onnx_argmax_pick(node, a, which, &which));
  KILN_RETURN_IF_ERROR(kiln_onnx_argmax_base(node, a, kiln_onnx_type_of(x), &base));
  return kiln_onnx_emit2(node, &kiln_op_add, which, base, NULL, out_expr);
}

/* Indices (output 1) of a MaxPool with a 1-D or 2-D window, when asked for. */
static kiln_status_t kiln_onnx_pool_indices_output(kiln_onnx_node_t *node, int n,
                                                   const int64_t *kernel, const int64_t *stride,
                                                   const int64_t *dilation, const int64_t *padding,
                                                   kiln_expr_t *x, kiln_expr_t *y) {
  if (node->num_outputs < 2 || !node->proto->output[1] || !*node->proto->output[1]) {
    return KILN_OK;
  }
  if (n != 2) {
    return KILN_STATUS(UNIMPLEMENTED, "output 1 (Indices) is supported for 1-D and 2-D windows");
  }
  int64_t order = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "storage_order", 0, &order));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x), *yt = kiln_onnx_type_of(y);
  kiln_onnx_argmax_t a = {.in = {xt->shape[2], xt->shape[3]},
                          .out = {yt->shape[2], yt->shape[3]},
                          .column_major = order != 0};
  memcpy(a.kernel, kernel, sizeof(a.kernel));
  memcpy(a.stride, stride, sizeof(a.stride));
  memcpy(a.dilation, dilation, sizeof(a.dilation));
  memcpy(a.padding, padding, sizeof(a.padding));
  return kiln_onnx_pool_indices(node, &a, x, &node->outputs[1]);
}

kiln_status_t kiln_onnx_convert_pool(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  bool is_max = strcmp(node->proto->op_type, "MaxPool") == 0;
  int spatial = xt->ndim - 2;
  kiln_ints_t shape;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "kernel_shape", &shape, NULL));
  if (spatial >= 1 && spatial <= 3 && shape.count != spatial) {
    return KILN_STATUS(INVALID_ARGUMENT, "kernel_shape has %d values; the data has %d spatial dims",
                       (int)shape.count, spatial);
  }
  kiln_onnx_window_t window;
  KILN_RETURN_IF_ERROR(kiln_onnx_window_read(node, xt, shape.values, 3, &window));
  int64_t ceil_mode = 0, include_pad = 0, kernel[3], stride[3], dilation[3], padding[6];
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "ceil_mode", 0, &ceil_mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "count_include_pad", 0, &include_pad));
  int n = kiln_onnx_window_nd(&window, kernel, stride, dilation, padding);
  const kiln_op_t *op = is_max ? &kiln_op_max_pool2d : &kiln_op_avg_pool2d;
  if (n == 3) {
    op = is_max ? &kiln_op_max_pool3d : &kiln_op_avg_pool3d;
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "pool_size", n, kernel));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "strides", n, stride));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "dilation", n, dilation));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "padding", 2 * n, padding));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "ceil_mode", ceil_mode != 0));
  if (!is_max) {
    KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "count_include_pad", include_pad != 0));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_window_lift(node, &window, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &y));
  if (is_max) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_pool_indices_output(node, n, kernel, stride, dilation, padding, x, y));
  }
  if (node->num_outputs > 1 && node->outputs[1]) { /* a node may name no output at all */
    KILN_RETURN_IF_ERROR(kiln_onnx_window_drop(node, &window, &node->outputs[1]));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_window_drop(node, &window, &y));
  node->outputs[0] = y;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_global_pool(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  bool is_max = strcmp(node->proto->op_type, "GlobalMaxPool") == 0;
  if (xt->ndim == 4) {
    const kiln_op_t *op = is_max ? &kiln_op_global_max_pool2d : &kiln_op_global_avg_pool2d;
    return kiln_onnx_emit1(node, op, x, NULL, &node->outputs[0]);
  }
  if (xt->ndim < 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "data has rank %d; expected N, C and spatial dims",
                       xt->ndim);
  }
  int64_t axes[KILN_MAX_RANK];
  for (int d = 2; d < xt->ndim; ++d) {
    axes[d - 2] = d;
  }
  const kiln_op_t *op = is_max ? &kiln_op_max : &kiln_op_mean;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axis", xt->ndim - 2, axes));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "keepdims", true));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* ---- Gemm and MatMul ---- */

static kiln_status_t kiln_onnx_scale(const kiln_onnx_node_t *node, kiln_expr_t *x, double factor,
                                     kiln_expr_t **out_expr) {
  if (factor == 1.0) {
    *out_expr = x;
    return KILN_OK;
  }
  kiln_expr_t *scalar = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, factor, &scalar));
  return kiln_onnx_emit2(node, &kiln_op_multiply, x, scalar, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_gemm(kiln_onnx_node_t *node) {
  kiln_expr_t *a = NULL, *b = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  double alpha = 1.0, beta = 1.0;
  int64_t trans_a = 0, trans_b = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "alpha", 1.0, &alpha));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "beta", 1.0, &beta));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "transA", 0, &trans_a));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "transB", 0, &trans_b));
  if (kiln_onnx_type_of(a)->ndim != 2 || kiln_onnx_type_of(b)->ndim != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "A and B must be 2-D; they have rank %d and %d",
                       kiln_onnx_type_of(a)->ndim, kiln_onnx_type_of(b)->ndim);
  }
  if (trans_a) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_transpose, a, NULL, &a));
  }
  const kiln_op_t *product = trans_b ? &kiln_op_dense : &kiln_op_matmul;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, product, a, b, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_scale(node, y, alpha, &y));
  kiln_expr_t *c = kiln_onnx_input_optional(node, 2);
  if (c) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scale(node, c, beta, &c));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, y, c, NULL, &y));
  }
  node->outputs[0] = y;
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_matmul(kiln_onnx_node_t *node) {
  kiln_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  return kiln_onnx_emit2(node, &kiln_op_matmul, a, b, NULL, &node->outputs[0]);
}

/* ---- ConvTranspose ---- */

/* Python's floor division (total padding can be negative). */
static int64_t kiln_onnx_floor_div2(int64_t value) {
  return value >= 0 ? value / 2 : -((-value + 1) / 2);
}

/* ConvTranspose's pads for dim `d`: from the attribute, or (output_shape
 * given, or auto_pad SAME_*) from the total padding that gives the target
 * size, split as ONNX's reference splits it. A negative end pad (a target
 * larger than the strides reach) becomes output padding. */
static kiln_status_t kiln_onnx_tconv_pads(const kiln_onnx_node_t *node, const kiln_tensor_type_t *x,
                                          kiln_onnx_window_t *window, int64_t *output_padding) {
  const char *auto_pad = "NOTSET";
  kiln_ints_t output_shape;
  bool has_shape = false;
  int n = window->spatial;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "auto_pad", "NOTSET", &auto_pad));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "output_shape", &output_shape, &has_shape));
  bool upper = strcmp(auto_pad, "SAME_UPPER") == 0;
  bool same = upper || strcmp(auto_pad, "SAME_LOWER") == 0;
  if (has_shape && output_shape.count != n && output_shape.count != n + 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute output_shape has %d values; expected %d",
                       (int)output_shape.count, n);
  }
  if (!has_shape && !same) {
    if (strcmp(auto_pad, "VALID") == 0) {
      return KILN_OK; /* pads stay 0 */
    }
    return kiln_onnx_window_explicit_pads(node, window);
  }
  for (int d = 0; d < n; ++d) {
    int64_t in = x->shape[2 + d];
    int64_t target =
        has_shape ? output_shape.values[output_shape.count - n + d] : in * window->stride[d];
    int64_t total = window->stride[d] * (in - 1) + output_padding[d] +
                    (window->kernel[d] - 1) * window->dilation[d] + 1 - target;
    int64_t half = kiln_onnx_floor_div2(total);
    window->pad_begin[d] = upper ? half : total - half;
    window->pad_end[d] = upper ? total - half : half;
    if (window->pad_end[d] < 0) {
      output_padding[d] -= window->pad_end[d];
      window->pad_end[d] = 0;
    }
    if (window->pad_begin[d] < 0) {
      return KILN_STATUS(UNIMPLEMENTED, "output size %lld of spatial dim %d needs negative padding",
                         (long long)target, d);
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_conv_transpose(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *w = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_conv_inputs(node, &x, &w));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x), *wt = kiln_onnx_type_of(w);
  KILN_RETURN_IF_ERROR(kiln_onnx_window_check_rank(xt, 3));
  kiln_onnx_window_t window = {.spatial = xt->ndim - 2};
  int64_t output_padding[3], extra[3] = {0, 0, 0}, groups = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_window_kernel(node, wt, &window));
  KILN_RETURN_IF_ERROR(kiln_onnx_window_ints(node, "strides", window.spatial, 1, window.stride));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_window_ints(node, "dilations", window.spatial, 1, window.dilation));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_window_ints(node, "output_padding", window.spatial, 0, output_padding));
  KILN_RETURN_IF_ERROR(kiln_onnx_tconv_pads(node, xt, &window, output_padding));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "group", 1, &groups));
  const kiln_op_t *op = window.spatial == 3 ? &kiln_op_conv3d_transpose : &kiln_op_conv2d_transpose;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_conv_attrs(node, op, &window, groups, wt->shape[1] * groups, &attrs));
  int lift = window.spatial == 1; /* a 1-D window is lifted to dim 1 */
  for (int d = 0; d < window.spatial; ++d) {
    extra[d + lift] = output_padding[d];
  }
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, op, attrs, "output_padding", window.spatial + lift, extra));
  return kiln_onnx_conv_emit(node, op, &window, attrs, x, w);
}

/* ---- softmax ---- */

static const kiln_op_t *kiln_onnx_softmax_op(const kiln_onnx_node_t *node) {
  return strcmp(node->proto->op_type, "LogSoftmax") == 0 ? &kiln_op_log_softmax : &kiln_op_softmax;
}

static kiln_status_t kiln_onnx_softmax_call(kiln_onnx_node_t *node, kiln_expr_t *x, int64_t axis,
                                            kiln_expr_t **out_expr) {
  const kiln_op_t *op = kiln_onnx_softmax_op(node);
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  return kiln_onnx_emit1(node, op, x, attrs, out_expr);
}

/* Opsets before 13: the input is seen as 2-D, split at `axis` (default 1). */
kiln_status_t kiln_onnx_convert_softmax_flat(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *y = NULL;
  int64_t axis_attr = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 1, &axis_attr));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(kiln_onnx_softmax_op(node), axis_attr,
                                              xt->ndim > 0 ? xt->ndim : 1, &axis));
  if (axis == xt->ndim - 1) {
    return kiln_onnx_softmax_call(node, x, -1, &node->outputs[0]);
  }
  int64_t flat[2] = {1, 1};
  for (int d = 0; d < xt->ndim; ++d) {
    flat[d < axis ? 0 : 1] *= xt->shape[d];
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 2, flat, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_softmax_call(node, y, 1, &y));
  return kiln_onnx_reshape(node, y, xt->ndim, xt->shape, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_softmax(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t axis = -1;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", -1, &axis));
  return kiln_onnx_softmax_call(node, x, axis, &node->outputs[0]);
}

/* ---- Einsum ---- */

kiln_status_t kiln_onnx_convert_einsum(kiln_onnx_node_t *node) {
  const char *equation = NULL;
  void *attrs = NULL;
  const kiln_op_t *op = &kiln_op_einsum;
  if (!kiln_onnx_attr(node, "equation")) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute equation is required");
  }
  for (int i = 0; i < node->num_inputs; ++i) {
    kiln_expr_t *input = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &input));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "equation", "", &equation));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "equation", equation));
  return kiln_onnx_emit(node, op, node->num_inputs, node->inputs, attrs, &node->outputs[0]);
}

/* ---- Det ---- */

kiln_status_t kiln_onnx_convert_det(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 1));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  return kiln_onnx_emit1(node, &kiln_op_det, x, NULL, &node->outputs[0]);
}
