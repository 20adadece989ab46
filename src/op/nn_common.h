/*
 * Shared pieces of the nn operator family (nn_*.c): the attrs structs, the
 * layout-string machinery and small helpers used by several rules.
 *
 * The attrs structs live here, not in their .c files, so that passes which
 * read them (alter_op_layout reads conv2d's strides and layouts) can include
 * one header. Layouts are parsed once into a kiln_layout_t (layout.h);
 * a kiln_nn_axis_view_t then says where logical coordinate x of one primal
 * axis lives in a tensor stored in that layout, so conv2d, its NCHWc form,
 * pooling and layout_transform all address their tensors through views and
 * one loop serves every layout. Small helpers are static inline so that each
 * file takes what it uses; those with a body worth sharing (layout views
 * and rules) are defined once in nn_layout.c.
 */
#ifndef KILN_OP_NN_COMMON_H_
#define KILN_OP_NN_COMMON_H_

#include <stdbool.h>
#include <stdint.h>

#include "op/impl.h"
#include "op/layout.h"
#include "op/op.h"
#include "runtime/scalar.h"

/* ---- attrs structs ---- */

/* nn.conv2d and nn.contrib_conv2d_NCHWc (which differ only in their layout
 * defaults); padding is (top, left, bottom, right). nn.conv3d too: 3 values
 * of strides, dilation and kernel_size, 6 of padding (front, top, left,
 * back, bottom, right), layouts NCDHW and OIDHW. */
typedef struct kiln_nn_conv2d_attrs_t {
  kiln_ints_t strides;
  kiln_ints_t padding;
  kiln_ints_t dilation;
  int64_t groups;
  int64_t channels;        /* 0: unchecked */
  kiln_ints_t kernel_size; /* []: unchecked */
  const char *data_layout;
  const char *kernel_layout;
  const char *out_layout; /* "": data_layout (conv2d only) */
} kiln_nn_conv2d_attrs_t;

/* nn.conv2d_transpose and nn.conv3d_transpose: padding (top, left, bottom,
 * right; 3-D: front, top, left, back, bottom, right) is taken off the full
 * output; output_padding (h, w; 3-D: d, h, w) adds rows and columns at its
 * end. */
typedef struct kiln_nn_conv2d_transpose_attrs_t {
  kiln_ints_t strides;
  kiln_ints_t padding;
  kiln_ints_t output_padding;
  kiln_ints_t dilation;
  int64_t groups;
  int64_t channels;        /* 0: unchecked */
  kiln_ints_t kernel_size; /* []: unchecked */
  const char *data_layout;
  const char *kernel_layout; /* IOHW: (C_in, C_out / groups, KH, KW) */
  const char *out_layout;    /* "": data_layout */
} kiln_nn_conv2d_transpose_attrs_t;

/* nn.lrn: y = x / (bias + alpha / size * sum of x^2 over the window)^beta. */
typedef struct kiln_nn_lrn_attrs_t {
  int64_t size;
  int64_t axis;
  double bias;
  double alpha;
  double beta;
} kiln_nn_lrn_attrs_t;

/* nn.max_pool2d and nn.avg_pool2d, nn.max_pool3d and nn.avg_pool3d (max's
 * field table has no count_include_pad; it stays False). The 3-D forms have
 * 3 values of pool_size, strides and dilation and 6 of padding (front, top,
 * left, back, bottom, right). */
typedef struct kiln_nn_pool2d_attrs_t {
  kiln_ints_t pool_size;
  kiln_ints_t strides;
  kiln_ints_t dilation;
  kiln_ints_t padding;
  const char *layout;
  bool ceil_mode;
  bool count_include_pad;
} kiln_nn_pool2d_attrs_t;

/* nn.global_avg_pool2d and nn.global_max_pool2d. */
typedef struct kiln_nn_global_pool2d_attrs_t {
  const char *layout;
} kiln_nn_global_pool2d_attrs_t;

/* nn.dense. */
typedef struct kiln_nn_dense_attrs_t {
  int64_t units; /* 0: unchecked */
} kiln_nn_dense_attrs_t;

/* nn.batch_matmul. */
typedef struct kiln_nn_batch_matmul_attrs_t {
  bool transpose_a;
  bool transpose_b;
} kiln_nn_batch_matmul_attrs_t;

/* nn.batch_norm, nn.layer_norm and nn.instance_norm. */
typedef struct kiln_nn_norm_attrs_t {
  int64_t axis;
  double epsilon;
  bool center;
  bool scale;
} kiln_nn_norm_attrs_t;

/* nn.bias_add, nn.prelu, nn.softmax, nn.log_softmax. */
typedef struct kiln_nn_axis_attrs_t {
  int64_t axis;
} kiln_nn_axis_attrs_t;

/* layout_transform. */
typedef struct kiln_nn_layout_transform_attrs_t {
  const char *src_layout;
  const char *dst_layout;
} kiln_nn_layout_transform_attrs_t;

/* ---- layouts (nn_layout.c; the layout value itself is op/layout.h) ---- */

/* Where logical coordinate x (0 <= x < extent) of one primal axis lives:
 * x * outer_stride when the axis is whole (block 0), else
 * (x / block) * outer_stride + (x % block) * inner_stride. */
typedef struct kiln_nn_axis_view_t {
  int64_t extent;
  int64_t outer_stride;
  int64_t block;
  int64_t inner_stride;
} kiln_nn_axis_view_t;

/* Parses attribute `attr` of `op` and checks that its primal axes are exactly
 * those of `primal_axes` (any order; INVALID_ARGUMENT otherwise) and that its
 * split axes are among `allowed_splits` and include `required_splits`
 * (UNIMPLEMENTED otherwise). Errors name the operator and the attribute. */
KILN_MUST_USE_RESULT kiln_status_t kiln_nn_layout_require(const kiln_op_t *op, const char *attr,
                                                          const char *text, const char *primal_axes,
                                                          const char *allowed_splits,
                                                          const char *required_splits,
                                                          kiln_layout_t *out_layout);
/* The view of every primal axis named in `order` of a tensor of `shape`
 * stored in `layout`; checks the rank and that split dims equal their factor.
 * Errors name the shape and layout (the caller adds the operator). */
KILN_MUST_USE_RESULT kiln_status_t kiln_nn_layout_view(const kiln_layout_t *layout,
                                                       const char *order, int ndim,
                                                       const int64_t *shape,
                                                       kiln_nn_axis_view_t *out_axes);
/* The storage shape (layout->ndim dims) of a tensor whose logical extents,
 * per primal axis named in `order`, are `logical`; a split axis must be
 * divisible by its factor. */
KILN_MUST_USE_RESULT kiln_status_t kiln_nn_layout_shape(const kiln_layout_t *layout,
                                                        const char *order, const int64_t *logical,
                                                        int64_t *out_shape);
/* Layout rule of operators that index axes by number (softmax, bias_add, the
 * norms, dense, matmul): each input is required in the primal form of the
 * layout it arrives in ("NCHW" for "NCHW16c", "" stays ""), since a split
 * would move the axis the attributes name; the output takes input 0's
 * required layout when `output_follows`, else "". */
KILN_MUST_USE_RESULT kiln_status_t kiln_nn_layout_rule_primal(kiln_layout_relation_t *relation,
                                                              bool output_follows);
/* Layout rule of the convolutions (conv2d, its NCHWc form, conv2d_transpose),
 * from their validated attributes: data in data_layout, weight in
 * kernel_layout, the output in out_layout ("" or NULL: data_layout); two
 * inputs or INVALID_ARGUMENT naming the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_nn_layout_rule_conv(kiln_layout_relation_t *relation,
                                                            const char *data_layout,
                                                            const char *kernel_layout,
                                                            const char *out_layout);

/* Whether a conv's layouts are the plain ones: data NCHW, kernel OIHW, the
 * output NCHW (or "", data's). The passes that rewrite a conv by its
 * channels (alter_op_layout, fold_scale_axis, pad_channels,
 * combine_parallel_conv2d) take only these. */
bool kiln_nn_conv2d_is_nchw(const kiln_nn_conv2d_attrs_t *attrs);
/* The layout attribute of a pool's attrs, window (kiln_nn_pool2d_attrs_t)
 * or global (kiln_nn_global_pool2d_attrs_t) by `op` (nn_pool.c). */
const char *kiln_nn_pool_layout_text(const kiln_op_t *op, const void *attrs);

static inline int64_t kiln_nn_axis_offset(const kiln_nn_axis_view_t *axis, int64_t x) {
  if (axis->block == 0) {
    return x * axis->outer_stride;
  }
  return (x / axis->block) * axis->outer_stride + (x % axis->block) * axis->inner_stride;
}

/* ---- sliding windows (conv and pooling) ---- */

/* The most spatial dims a window has (D, H, W). */
#define KILN_NN_MAX_SPATIAL 3

/* One spatial window over `spatial` dims (2: H, W; 3: D, H, W); pad holds
 * the begin paddings of every dim, then the end paddings (2-D: top, left,
 * bottom, right). */
typedef struct kiln_nn_window_t {
  int spatial;
  int64_t kernel[KILN_NN_MAX_SPATIAL];
  int64_t stride[KILN_NN_MAX_SPATIAL];
  int64_t dilation[KILN_NN_MAX_SPATIAL];
  int64_t pad[2 * KILN_NN_MAX_SPATIAL];
  bool ceil_mode;
} kiln_nn_window_t;

/* Output extent along spatial dim `dim` of an input of extent `in`:
 * floor (or ceil) ((in + pad_lo + pad_hi - dilation * (kernel - 1) - 1) /
 * stride) + 1; with ceil_mode the last window must start inside the input or
 * the leading padding (PyTorch, ONNX). 0 when no window fits, which includes
 * an empty window and a window or padded input too large for int64. */
static inline int64_t kiln_nn_window_extent(const kiln_nn_window_t *window, int dim, int64_t in) {
  int64_t reach = 0, padded = 0, span = 0;
  int64_t pad_hi = window->pad[dim + window->spatial];
  if (window->kernel[dim] < 1 ||
      __builtin_mul_overflow(window->dilation[dim], window->kernel[dim] - 1, &reach) ||
      __builtin_add_overflow(in, window->pad[dim] + pad_hi, &padded) ||
      __builtin_sub_overflow(padded - 1, reach, &span) || span < 0) {
    return 0;
  }
  int64_t stride = window->stride[dim];
  if (!window->ceil_mode) {
    return span / stride + 1;
  }
  int64_t out = span / stride + (span % stride != 0) + 1;
  if ((out - 1) * stride >= in + window->pad[dim]) {
    --out;
  }
  return out;
}

/* Largest value an attribute that sizes a window (stride, padding, pool
 * size, dilation) may take. */
#define KILN_NN_WINDOW_ATTR_MAX ((int64_t)1 << 30)

/* The window of attributes already validated by kiln_nn_check_ints:
 * `spatial` values of kernel, strides and dilation, 2 * spatial of padding. */
static inline kiln_nn_window_t kiln_nn_window_of(int spatial, const int64_t *kernel,
                                                 kiln_ints_t strides, kiln_ints_t dilation,
                                                 kiln_ints_t padding, bool ceil_mode) {
  kiln_nn_window_t window = {.spatial = spatial, .ceil_mode = ceil_mode};
  for (int d = 0; d < spatial; ++d) {
    window.kernel[d] = kernel[d];
    window.stride[d] = strides.values[d];
    window.dilation[d] = dilation.values[d];
    window.pad[d] = padding.values[d];
    window.pad[d + spatial] = padding.values[d + spatial];
  }
  return window;
}

/* The 2-D window (strides and dilation of 2 values, padding of 4). */
static inline kiln_nn_window_t kiln_nn_window_make(int64_t kernel_h, int64_t kernel_w,
                                                   kiln_ints_t strides, kiln_ints_t dilation,
                                                   kiln_ints_t padding, bool ceil_mode) {
  const int64_t kernel[2] = {kernel_h, kernel_w};
  return kiln_nn_window_of(2, kernel, strides, dilation, padding, ceil_mode);
}

/* The window of a whole input of `spatial` dims `extents` (a global pool). */
static inline kiln_nn_window_t kiln_nn_window_whole(int spatial, const int64_t *extents) {
  kiln_nn_window_t window = {.spatial = spatial};
  for (int d = 0; d < spatial; ++d) {
    window.kernel[d] = extents[d];
    window.stride[d] = window.dilation[d] = 1;
  }
  return window;
}

/* Output extents of `window` over `data` (whose logical spatial extents are
 * `in`); INVALID_ARGUMENT naming the operator and the shape when no window
 * fits. */
static inline kiln_status_t kiln_nn_window_outputs(const kiln_op_t *op,
                                                   const kiln_nn_window_t *window,
                                                   const kiln_tensor_type_t *data,
                                                   const int64_t *in, int64_t *out_extents) {
  static const char *const names2[2] = {"height", "width"};
  static const char *const names3[3] = {"depth", "height", "width"};
  for (int dim = 0; dim < window->spatial; ++dim) {
    out_extents[dim] = kiln_nn_window_extent(window, dim, in[dim]);
    if (out_extents[dim] < 1) {
      char text[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: data %s is too small: %s %lld with padding %lld+%lld has no room for "
                         "a window of %lld (dilation %lld)",
                         op->name, kiln_op_shape_text(data, text),
                         window->spatial == 3 ? names3[dim] : names2[dim], (long long)in[dim],
                         (long long)window->pad[dim], (long long)window->pad[dim + window->spatial],
                         (long long)window->kernel[dim], (long long)window->dilation[dim]);
    }
  }
  return KILN_OK;
}

/* The definition of a convolution operator (two inputs, out-elemwise
 * fusable) and, apart from it, its implementation entry (op/impl.h):
 * `prefix` names its rules prefix_validate, prefix_infer and
 * prefix_correct_layout and its kernel prefix_reference; `schedule_fn` is
 * its CPU strategy (NULL: the default schedule). */
#define KILN_NN_CONV_OP(symbol, op_name, op_id, attrs_type, fields, prefix, compute_fn, \
                        schedule_fn)                                                    \
  const kiln_op_t symbol = {                                                            \
      .name = op_name,                                                                  \
      .id = op_id,                                                                      \
      .min_inputs = 2,                                                                  \
      .max_inputs = 2,                                                                  \
      .pattern = KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE,                                  \
      .attrs_size = sizeof(attrs_type),                                                 \
      .num_attr_fields = sizeof(fields) / sizeof(kiln_attr_field_t),                    \
      .attr_fields = fields,                                                            \
      .validate_attrs = prefix##_validate,                                              \
      .infer_type = prefix##_infer,                                                     \
      .correct_layout = prefix##_correct_layout,                                        \
  };                                                                                    \
  const kiln_op_impl_t symbol##_impl = {.reference = prefix##_reference,                \
                                        .compute = compute_fn,                          \
                                        .strategies = {[KILN_TARGET_KIND_CPU] = schedule_fn}}

/* ---- attribute validation ---- */

/* INVALID_ARGUMENT unless `ints` has `count` values (or, when `or_count` is
 * not -1, that many) each in [min_value, KILN_NN_WINDOW_ATTR_MAX]. */
static inline kiln_status_t kiln_nn_check_ints(const kiln_op_t *op, const char *attr,
                                               kiln_ints_t ints, int count, int or_count,
                                               int64_t min_value) {
  if (ints.count != count && ints.count != or_count) {
    if (or_count >= 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %s must have %d or %d values, got %d", op->name,
                         attr, or_count, count, (int)ints.count);
    }
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s must have %d values, got %d", op->name, attr,
                       count, (int)ints.count);
  }
  for (int32_t i = 0; i < ints.count; ++i) {
    if (ints.values[i] < min_value || ints.values[i] > KILN_NN_WINDOW_ATTR_MAX) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %s[%d] is %lld; it must be in [%lld, %lld]",
                         op->name, attr, (int)i, (long long)ints.values[i], (long long)min_value,
                         (long long)KILN_NN_WINDOW_ATTR_MAX);
    }
  }
  return KILN_OK;
}

/* INVALID_ARGUMENT unless kernel_size (when given: [] leaves it unchecked)
 * equals the extents of the weight's spatial `axes`, naming the weight. */
static inline kiln_status_t kiln_nn_check_kernel_size(const kiln_op_t *op, kiln_ints_t kernel_size,
                                                      const kiln_nn_axis_view_t *axes,
                                                      const char *weight_text) {
  for (int32_t d = 0; d < kernel_size.count; ++d) {
    if (kernel_size.values[d] != axes[d].extent) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: kernel_size[%d] is %lld but weight %s has a kernel extent of %lld",
                         op->name, (int)d, (long long)kernel_size.values[d], weight_text,
                         (long long)axes[d].extent);
    }
  }
  return KILN_OK;
}

/* ---- type relations ---- */

/* Checks that an operator with attributes got them, and validates them (a
 * relation must not read a list shorter than it expects). */
static inline kiln_status_t kiln_nn_relation_attrs(const kiln_op_t *op, const void *attrs) {
  if (op->attrs_size > 0 && !attrs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attributes are missing", op->name);
  }
  return kiln_op_attrs_validate(op, attrs);
}

/* Input tensor types 0..count-1 of a relation. */
static inline kiln_status_t kiln_nn_input_tensors(const kiln_type_relation_t *relation, int count,
                                                  const kiln_tensor_type_t **out_types) {
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, i, &out_types[i]));
  }
  return KILN_OK;
}

/* INVALID_ARGUMENT unless `b` has the dtype of `a`, naming both. */
static inline kiln_status_t kiln_nn_same_dtype(const kiln_op_t *op, const char *name_a,
                                               const kiln_tensor_type_t *a, const char *name_b,
                                               const kiln_tensor_type_t *b) {
  if (a->dtype == b->dtype) {
    return KILN_OK;
  }
  char text_a[KILN_SHAPE_TEXT_CAPACITY], text_b[KILN_SHAPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s has dtype %s but %s %s has dtype %s", op->name,
                     name_b, kiln_op_shape_text(b, text_b), kiln_dtype_name(b->dtype), name_a,
                     kiln_op_shape_text(a, text_a), kiln_dtype_name(a->dtype));
}

static inline bool kiln_nn_dtype_is_float(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT16 ||
         dtype == KILN_DTYPE_BFLOAT16 || dtype == KILN_DTYPE_FLOAT64;
}

/* The dtypes max pooling runs on (reference kernel and compute rule):
 * float32 and the integers of up to 32 bits, which a double holds exactly. */
static inline bool kiln_nn_max_pool_dtype(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_INT8 || dtype == KILN_DTYPE_UINT8 ||
         dtype == KILN_DTYPE_INT16 || dtype == KILN_DTYPE_UINT16 || dtype == KILN_DTYPE_INT32 ||
         dtype == KILN_DTYPE_UINT32;
}

/* INVALID_ARGUMENT unless `type` has a floating-point dtype. */
static inline kiln_status_t kiln_nn_require_float(const kiln_op_t *op, const char *name,
                                                  const kiln_tensor_type_t *type) {
  if (kiln_nn_dtype_is_float(type->dtype)) {
    return KILN_OK;
  }
  char text[KILN_SHAPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s has dtype %s; expected a floating-point dtype",
                     op->name, name, kiln_op_shape_text(type, text), kiln_dtype_name(type->dtype));
}

/* (outer, extent, inner) of a shape split around `axis`: element
 * (o, x, i) is at (o * extent + x) * inner + i. */
static inline void kiln_nn_axis_split(int ndim, const int64_t *shape, int axis, int64_t *out_outer,
                                      int64_t *out_extent, int64_t *out_inner) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) {
    outer *= shape[i];
  }
  for (int i = axis + 1; i < ndim; ++i) {
    inner *= shape[i];
  }
  *out_outer = outer;
  *out_extent = shape[axis];
  *out_inner = inner;
}

/* ---- reference kernels ---- */

/* The type of a tensor, as a relation sees it (shape borrowed). */
static inline kiln_tensor_type_t kiln_nn_tensor_type(const kiln_tensor_t *tensor) {
  kiln_tensor_type_t type = {.base = {.kind = KILN_TYPE_KIND_TENSOR},
                             .dtype = kiln_tensor_dtype(tensor),
                             .ndim = kiln_tensor_ndim(tensor),
                             .shape = kiln_tensor_shape(tensor)};
  return type;
}

#define KILN_NN_MAX_INPUTS 8

/* The checks every nn reference kernel starts with: one output, every input
 * present, attributes valid, and the output tensor of exactly the type the
 * relation infers from the input tensors. After it, a kernel may index its
 * tensors by the shapes the relation derived without re-checking them. */
static inline kiln_status_t kiln_nn_kernel_check(const kiln_kernel_args_t *args) {
  const kiln_op_t *op = args->op;
  if (args->num_outputs != 1 || !args->outputs || !args->outputs[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 1 output tensor, got %d", op->name,
                       args->num_outputs);
  }
  if (args->num_inputs < 0 || args->num_inputs > KILN_NN_MAX_INPUTS || !args->inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected %d to %d inputs, got %d", op->name,
                       op->min_inputs, op->max_inputs, args->num_inputs);
  }
  kiln_tensor_type_t types[KILN_NN_MAX_INPUTS];
  const kiln_type_t *pointers[KILN_NN_MAX_INPUTS];
  for (int i = 0; i < args->num_inputs; ++i) {
    if (!args->inputs[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input tensor %d is missing", op->name, i);
    }
    types[i] = kiln_nn_tensor_type(args->inputs[i]);
    pointers[i] = &types[i].base;
  }
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 4096);
  const kiln_type_t *inferred = NULL;
  kiln_status_t status =
      kiln_op_infer_type(op, args->attrs, args->num_inputs, pointers, &arena, &inferred);
  kiln_tensor_type_t output = kiln_nn_tensor_type(args->outputs[0]);
  const kiln_tensor_type_t *expected = kiln_type_as_tensor(inferred);
  if (!status && !expected) {
    status = KILN_STATUS(INTERNAL, "%s: the relation gave a tuple", op->name);
  } else if (!status && !kiln_type_equal(inferred, &output.base)) {
    char have[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
    status = KILN_STATUS(INVALID_ARGUMENT, "%s: output tensor %s %s does not match the type %s %s",
                         op->name, kiln_op_shape_text(&output, have), kiln_dtype_name(output.dtype),
                         kiln_op_shape_text(expected, want), kiln_dtype_name(expected->dtype));
  }
  kiln_arena_deinitialize(&arena);
  return status;
}

/* The start of every float32 kernel: kiln_nn_kernel_check, then
 * UNIMPLEMENTED unless input 0 (and so, by the relation, every input) is
 * float32. */
static inline kiln_status_t kiln_nn_kernel_begin_float32(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_check(args));
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  if (dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not handle dtype %s",
                       args->op->name, kiln_dtype_name(dtype));
  }
  return KILN_OK;
}

/* Advances `coords` through the box `extents` in row-major order; false
 * after the last index. */
static inline bool kiln_nn_next_index(int ndim, const int64_t *extents, int64_t *coords) {
  for (int i = ndim - 1; i >= 0; --i) {
    if (++coords[i] < extents[i]) {
      return true;
    }
    coords[i] = 0;
  }
  return false;
}

/* The value of the output element at logical coordinates (n, c, h, w), or
 * (n, c, d, h, w). */
typedef double (*kiln_nn_point_fn)(const void *context, const int64_t *coords);

/* Writes point(context, coords) for every logical coordinate below
 * `extents` of the primal axes named in `order` ("NCHW", "NCDHW") into
 * `output`, a tensor stored in `layout`, converting each value to the
 * output's dtype as cast does (runtime/scalar.h): the output loop of conv and
 * pooling, whatever the layout and dtype. */
static inline kiln_status_t kiln_nn_fill(kiln_tensor_t *output, const kiln_layout_t *layout,
                                         const char *order, const int64_t *extents,
                                         kiln_nn_point_fn point, const void *context) {
  int n = 0;
  while (order[n] != '\0') {
    ++n;
  }
  kiln_nn_axis_view_t axes[KILN_NN_MAX_SPATIAL + 2];
  KILN_RETURN_IF_ERROR(kiln_nn_layout_view(layout, order, kiln_tensor_ndim(output),
                                           kiln_tensor_shape(output), axes));
  if (kiln_tensor_element_count(output) == 0) {
    return KILN_OK;
  }
  kiln_scalar_kind_t kind = kiln_scalar_kind(kiln_tensor_dtype(output));
  void *out = kiln_tensor_data(output);
  int64_t coords[KILN_NN_MAX_SPATIAL + 2] = {0};
  do {
    int64_t at = 0;
    for (int i = 0; i < n; ++i) {
      at += kiln_nn_axis_offset(&axes[i], coords[i]);
    }
    kiln_scalar_store(kind, out, at, kiln_scalar_float(point(context, coords)));
  } while (kiln_nn_next_index(n, extents, coords));
  return KILN_OK;
}

/* kiln_nn_fill over (N, C, H, W). */
static inline kiln_status_t kiln_nn_fill_nchw(kiln_tensor_t *output, const kiln_layout_t *layout,
                                              const int64_t *extents, kiln_nn_point_fn point,
                                              const void *context) {
  return kiln_nn_fill(output, layout, "NCHW", extents, point, context);
}

#endif /* KILN_OP_NN_COMMON_H_ */
