/*
 * Compute rules of nn.conv2d, nn.contrib_conv2d_NCHWc, nn.conv3d,
 * nn.conv2d_transpose and nn.conv3d_transpose (nn_conv_compute.h).
 *
 * Every tensor is addressed through its layout, as the reference kernels
 * do with axis views: the output compute runs over the output's storage
 * dims, rebuilds the logical (N, C, H, W) coordinates from them (an axis
 * split into X and x is X * factor + x), and reads the inputs at the
 * storage indices of logical coordinates (X = floordiv(x, factor),
 * x = floormod(x, factor)). So one rule serves NCHW, NHWC, OIHW, HWIO and
 * the NCHW16c / OIHW16i16o form, and the NCHWc output axes come out as
 * TVM's (n, oc_chunk, oh, ow, oc_block) for its schedule.
 *
 * conv2d: out = sum over ic (the input channels of the output channel's
 * group), kh, kw of pad[n, g * ic_per_group + ic, oh * sh + kh * dh,
 * ow * sw + kw * dw] * w[o, ic, kh, kw], where the padded data T_<op>_pad
 * is its own stage (as TVM's topi pad): the data in its own layout with H
 * and W grown by the four pads, zero outside. The loop IR's select
 * evaluates both sides, so the load inside it reads at clamped indices.
 * Without padding the conv reads the data directly. The NCHWc form takes
 * groups too (weight OIHW1i{oc}o); depthwise with data and output split by
 * the same block reads the data at the output's own (C, c) indices, so
 * bound inference sees one data chunk per output chunk. A grouped conv
 * whose data and output blocks divide the channels per group reads the
 * data chunk g * (group_in / ib) + ic / ib with g from the output's chunk
 * index, so the group is visibly one per output block (no floordiv of the
 * vectorized lane to see through).
 *
 * conv2d_transpose: the reference's gather, in one body: output row oh
 * takes kernel row kh from input row (oh + pad_top - kh * dh) / sh when
 * that is exact and in range; a select zeroes the other terms (loads again
 * at clamped indices).
 *
 * The 3-D operators are the same rules over (N, C, D, H, W): every step
 * runs over the rule's `spatial` dims (the padding stage grows D too, the
 * reduction is ic, kd, kh, kw).
 */
#include "op/nn_conv_compute.h"

#include <stdio.h>
#include <string.h>

#include "op/compute.h"
#include "op/nn_common.h"

/* ---- layouts as index maps ---- */

static const kiln_tir_expr_t *imm(kiln_tir_builder_t *b, int64_t value) {
  return kiln_tir_b_i32(b, value);
}

/* x clamped into [0, extent). */
static const kiln_tir_expr_t *clamp(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                    int64_t extent) {
  return kiln_compute_clamp(b, x, 0, extent - 1);
}

/* 0 <= x < extent. */
static const kiln_tir_expr_t *in_range(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                       int64_t extent) {
  return kiln_compute_in_range(b, x, 0, extent);
}

/* Storage indices of the element at logical coordinates `logical` (one per
 * primal axis named in `order`). */
static void storage_indices(kiln_tir_builder_t *b, const kiln_layout_t *layout, const char *order,
                            const kiln_tir_expr_t *const *logical,
                            const kiln_tir_expr_t **out_indices) {
  for (int d = 0; d < layout->ndim; ++d) {
    char primal = kiln_layout_axis_primal(layout, d);
    const kiln_tir_expr_t *x = logical[strchr(order, primal) - order];
    int64_t factor = kiln_layout_factor(layout, primal);
    if (kiln_layout_axis_is_split(layout, d)) {
      out_indices[d] = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, x, imm(b, factor));
    } else {
      out_indices[d] = factor ? kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, x, imm(b, factor)) : x;
    }
  }
}

/* Logical coordinates (per primal axis of `order`) of storage indices. */
static void logical_indices(kiln_tir_builder_t *b, const kiln_layout_t *layout, const char *order,
                            const kiln_tir_expr_t *const *indices,
                            const kiln_tir_expr_t **out_logical) {
  for (int d = 0; d < layout->ndim; ++d) {
    if (!kiln_layout_axis_is_split(layout, d)) {
      char axis = layout->axes[d];
      int inner = kiln_layout_split_index(layout, axis);
      const kiln_tir_expr_t *x = indices[d];
      if (inner >= 0) {
        x = kiln_tir_b_add(b, kiln_tir_b_mul(b, x, imm(b, layout->factors[inner])), indices[inner]);
      }
      out_logical[strchr(order, axis) - order] = x;
    }
  }
}

/* The logical extent of primal axis `primal` of a tensor of `shape`. */
static int64_t logical_extent(const kiln_layout_t *layout, const int64_t *shape, char primal) {
  int d = kiln_layout_axis_index(layout, primal);
  if (d < 0) {
    return 1;
  }
  int64_t factor = kiln_layout_factor(layout, primal);
  return shape[d] * (factor ? factor : 1);
}

static int storage_dim(const kiln_layout_t *layout, char axis) {
  int at = kiln_layout_axis_index(layout, axis);
  return at < 0 ? 0 : at;
}

static kiln_status_t parse_layouts(const char *data_text, const char *kernel_text,
                                   const char *out_text, kiln_layout_t *out_layouts) {
  KILN_RETURN_IF_ERROR(kiln_layout_parse(data_text, &out_layouts[0]));
  KILN_RETURN_IF_ERROR(kiln_layout_parse(kernel_text, &out_layouts[1]));
  if (!out_text || !*out_text) {
    out_layouts[2] = out_layouts[0];
    return KILN_OK;
  }
  return kiln_layout_parse(out_text, &out_layouts[2]);
}

/* ---- conv2d and conv3d ---- */

typedef struct conv_rule_t {
  int spatial;                   /* 2 or 3 */
  const char *data_order;        /* "NCHW" or "NCDHW" */
  const char *kernel_order;      /* "OIHW", "IOHW", "OIDHW" or "IODHW" */
  kiln_layout_t layouts[3];      /* data, kernel, out */
  const kiln_te_tensor_t *input; /* the data */
  const kiln_te_tensor_t *data;  /* padded, or the input */
  const kiln_te_tensor_t *weight;
  int64_t in[KILN_NN_MAX_SPATIAL];
  int64_t pad[2 * KILN_NN_MAX_SPATIAL]; /* the begins, then the ends */
  int64_t stride[KILN_NN_MAX_SPATIAL];
  int64_t dilation[KILN_NN_MAX_SPATIAL];
  int64_t groups, group_in, group_out;
  const kiln_te_iter_var_t *reduce[KILN_NN_MAX_SPATIAL + 1]; /* ic, then (kd,) kh, kw */
} conv_rule_t;

/* The primal axis of spatial dim s (D, H or W). */
static char spatial_axis(const conv_rule_t *r, int s) {
  return r->data_order[2 + s];
}

static const kiln_tir_expr_t *pad_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const conv_rule_t *r = user;
  const kiln_layout_t *layout = &r->layouts[0];
  const kiln_tir_expr_t *at[KILN_LAYOUT_MAX_AXES];
  memcpy(at, indices, (size_t)layout->ndim * sizeof(*at));
  const kiln_tir_expr_t *inside = NULL;
  for (int s = 0; s < r->spatial; ++s) {
    int dim = storage_dim(layout, spatial_axis(r, s));
    const kiln_tir_expr_t *x =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, indices[dim], imm(b, r->pad[s]));
    at[dim] = clamp(b, x, r->in[s]);
    const kiln_tir_expr_t *ok = in_range(b, x, r->in[s]);
    inside = inside ? kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, inside, ok) : ok;
  }
  return kiln_tir_b_select(b, inside, kiln_te_read(b, r->input, layout->ndim, at),
                           kiln_tir_b_f32(b, 0.0));
}

/* T_<op>_pad: the data with its spatial dims grown by the pads, zero
 * outside. */
static kiln_status_t conv_pad(const kiln_compute_args_t *args, conv_rule_t *r) {
  const kiln_te_tensor_t *data = r->input;
  const kiln_layout_t *layout = &r->layouts[0];
  int64_t shape[KILN_LAYOUT_MAX_AXES];
  memcpy(shape, data->shape, (size_t)data->ndim * sizeof(*shape));
  for (int s = 0; s < r->spatial; ++s) {
    shape[storage_dim(layout, spatial_axis(r, s))] += r->pad[s] + r->pad[s + r->spatial];
  }
  char name[64], pad_name[80];
  snprintf(pad_name, sizeof(pad_name), "%s_pad",
           kiln_compute_tensor_name(args->op, name, sizeof(name)));
  return kiln_te_compute(args->arena, pad_name, data->ndim, shape, 1, &data, pad_body, r, &r->data);
}

/* Whether data channel c is output channel c (depthwise: one input and one
 * output channel per group) and both split C by the same block, so the data
 * is read at the output's own (C, c) storage indices. */
static bool same_channel_split(const conv_rule_t *r) {
  int64_t block = kiln_layout_factor(&r->layouts[0], 'C');
  return r->groups > 1 && r->group_in == 1 && r->group_out == 1 && block > 0 &&
         kiln_layout_factor(&r->layouts[2], 'C') == block;
}

/* Whether a grouped conv's blocks stay inside groups: the data's C block
 * divides the input channels per group and the output's C block the output
 * channels per group (alter_op_layout's grouped NCHWc). */
static bool blocks_inside_groups(const conv_rule_t *r) {
  int64_t ib = kiln_layout_factor(&r->layouts[0], 'C');
  int64_t ob = kiln_layout_factor(&r->layouts[2], 'C');
  return r->groups > 1 && !same_channel_split(r) && ib > 0 && ob > 0 && r->group_in % ib == 0 &&
         r->group_out % ob == 0;
}

/* The data's (C, c) storage indices of input channel `ic` of the output
 * chunk's group, from the output's chunk index (g = oc_chunk / (group_out /
 * ob)): the group is one for the whole output block, so the vectorized
 * output lanes read one data element, and ic splits by the data block with
 * no floordiv over a sum. */
static void grouped_data_indices(kiln_tir_builder_t *b, const conv_rule_t *r,
                                 const kiln_tir_expr_t *const *indices, const kiln_tir_expr_t *ic,
                                 const kiln_tir_expr_t **at) {
  int64_t ib = kiln_layout_factor(&r->layouts[0], 'C');
  int64_t ob = kiln_layout_factor(&r->layouts[2], 'C');
  const kiln_tir_expr_t *chunk = indices[storage_dim(&r->layouts[2], 'C')];
  const kiln_tir_expr_t *group =
      r->group_out == ob
          ? chunk
          : kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, chunk, imm(b, r->group_out / ob));
  at[storage_dim(&r->layouts[0], 'C')] =
      kiln_tir_b_add(b, kiln_tir_b_mul(b, group, imm(b, r->group_in / ib)),
                     kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, ic, imm(b, ib)));
  at[storage_dim(&r->layouts[0], 'c')] = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, ic, imm(b, ib));
}

static const kiln_tir_expr_t *conv_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const conv_rule_t *r = user;
  const kiln_tir_expr_t *out[KILN_NN_MAX_SPATIAL + 2]; /* n, o, then the spatial coordinates */
  logical_indices(b, &r->layouts[2], r->data_order, indices, out);
  const kiln_tir_expr_t *ic = kiln_tir_b_v(r->reduce[0]->var);
  const kiln_tir_expr_t *channel = ic;
  if (r->groups > 1) { /* g * group_in + ic, g = o / group_out; o itself for depthwise */
    const kiln_tir_expr_t *group = r->group_out == 1 ? out[1]
                                                     : kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV,
                                                                      out[1], imm(b, r->group_out));
    channel = r->group_in == 1
                  ? group
                  : kiln_tir_b_add(b, kiln_tir_b_mul(b, group, imm(b, r->group_in)), ic);
  }
  const kiln_tir_expr_t *logical[KILN_NN_MAX_SPATIAL + 2] = {out[0], channel};
  const kiln_tir_expr_t *wl[KILN_NN_MAX_SPATIAL + 2] = {out[1], ic};
  for (int s = 0; s < r->spatial; ++s) {
    wl[2 + s] = kiln_tir_b_v(r->reduce[1 + s]->var);
    logical[2 + s] = kiln_tir_b_add(b, kiln_tir_b_mul(b, out[2 + s], imm(b, r->stride[s])),
                                    kiln_tir_b_mul(b, wl[2 + s], imm(b, r->dilation[s])));
  }
  const kiln_tir_expr_t *at[KILN_LAYOUT_MAX_AXES];
  storage_indices(b, &r->layouts[0], r->data_order, logical, at);
  if (same_channel_split(r)) { /* the output's own chunk and lane, no floordiv to see through */
    at[storage_dim(&r->layouts[0], 'C')] = indices[storage_dim(&r->layouts[2], 'C')];
    at[storage_dim(&r->layouts[0], 'c')] = indices[storage_dim(&r->layouts[2], 'c')];
  } else if (blocks_inside_groups(r)) {
    grouped_data_indices(b, r, indices, ic, at);
  }
  const kiln_tir_expr_t *x = kiln_te_read(b, r->data, r->data->ndim, at);
  storage_indices(b, &r->layouts[1], r->kernel_order, wl, at);
  const kiln_tir_expr_t *y = kiln_te_read(b, r->weight, r->weight->ndim, at);
  return kiln_tir_b_mul(b, x, y);
}

/* The reduction ic, then (kd,) kh, kw over the kernel's spatial extents. */
static kiln_status_t conv_reduce_axes(kiln_arena_t *arena, conv_rule_t *r) {
  static const char *const names[KILN_NN_MAX_SPATIAL] = {"kd", "kh", "kw"};
  KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(arena, "ic", 0, r->group_in, &r->reduce[0]));
  for (int s = 0; s < r->spatial; ++s) {
    int64_t extent = logical_extent(&r->layouts[1], r->weight->shape, spatial_axis(r, s));
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(arena, names[s + KILN_NN_MAX_SPATIAL - r->spatial], 0,
                                             extent, &r->reduce[1 + s]));
  }
  return KILN_OK;
}

/* The part of a convolution rule both directions share: the dtype check,
 * the operands, the layouts, the window's attributes (strides, padding and
 * dilation of `spatial` dims, the kernel's primal axes `kernel_order`) and
 * the input's spatial extents. */
static kiln_status_t conv_rule_start(const kiln_compute_args_t *args, int spatial,
                                     const char *kernel_order, const kiln_nn_conv2d_attrs_t *a,
                                     conv_rule_t *out_rule) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  memset(out_rule, 0, sizeof(*out_rule));
  out_rule->spatial = spatial;
  out_rule->data_order = spatial == 3 ? "NCDHW" : "NCHW";
  out_rule->kernel_order = kernel_order;
  out_rule->input = out_rule->data = args->inputs[0];
  out_rule->weight = args->inputs[1];
  out_rule->groups = a->groups;
  KILN_RETURN_IF_ERROR(
      parse_layouts(a->data_layout, a->kernel_layout, a->out_layout, out_rule->layouts));
  for (int s = 0; s < spatial; ++s) {
    out_rule->in[s] =
        logical_extent(&out_rule->layouts[0], out_rule->data->shape, spatial_axis(out_rule, s));
    out_rule->stride[s] = a->strides.values[s];
    out_rule->dilation[s] = a->dilation.values[s];
    out_rule->pad[s] = a->padding.values[s];
    out_rule->pad[s + spatial] = a->padding.values[s + spatial];
  }
  return KILN_OK;
}

/* The sum over (ic, kh, kw) of `body`, the operator's one output. */
static kiln_status_t conv_rule_finish(const kiln_compute_args_t *args, conv_rule_t *r,
                                      kiln_te_fcompute_fn body, kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  KILN_RETURN_IF_ERROR(conv_reduce_axes(args->arena, r));
  const kiln_te_tensor_t *inputs[2] = {r->data, r->weight};
  char name[64];
  out_result->num_outputs = 1;
  return kiln_te_compute_reduce(args->arena, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                                type->ndim, type->shape, KILN_TE_REDUCE_SUM, NULL, 1 + r->spatial,
                                r->reduce, 2, inputs, body, r, out_result->outputs);
}

kiln_status_t kiln_compute_conv2d(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  const kiln_nn_conv2d_attrs_t *a = args->attrs;
  bool is_3d = args->op->id == KILN_OP_CONV3D;
  conv_rule_t r;
  KILN_RETURN_IF_ERROR(conv_rule_start(args, is_3d ? 3 : 2, is_3d ? "OIDHW" : "OIHW", a, &r));
  const int64_t *wshape = r.weight->shape;
  r.group_in = logical_extent(&r.layouts[1], wshape, 'I');
  r.group_out = logical_extent(&r.layouts[1], wshape, 'O') / a->groups;
  bool padded = false;
  for (int i = 0; i < 2 * r.spatial; ++i) {
    padded = padded || r.pad[i] != 0;
  }
  if (padded) {
    KILN_RETURN_IF_ERROR(conv_pad(args, &r));
  }
  return conv_rule_finish(args, &r, conv_body, out_result);
}

/* ---- conv2d_transpose and conv3d_transpose ---- */

/* Whether kernel tap k reaches output position y along one dim from input
 * position floordiv(t, stride), t = y + pad - k * dilation; *out_x is that
 * position clamped into the input. */
static const kiln_tir_expr_t *tconv_source(kiln_tir_builder_t *b, const kiln_tir_expr_t *y,
                                           const kiln_tir_expr_t *k, int64_t pad, int64_t stride,
                                           int64_t dilation, int64_t extent,
                                           const kiln_tir_expr_t **out_x) {
  const kiln_tir_expr_t *t = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_add(b, y, imm(b, pad)),
                                            kiln_tir_b_mul(b, k, imm(b, dilation)));
  const kiln_tir_expr_t *x =
      stride > 1 ? kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, t, imm(b, stride)) : t;
  const kiln_tir_expr_t *valid = in_range(b, x, extent);
  if (stride > 1) {
    valid = kiln_tir_b_bin(
        b, KILN_TIR_EXPR_AND, valid,
        kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ,
                       kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, t, imm(b, stride)), imm(b, 0)));
  }
  *out_x = clamp(b, x, extent);
  return valid;
}

static const kiln_tir_expr_t *tconv_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const conv_rule_t *r = user;
  const kiln_tir_expr_t *out[KILN_NN_MAX_SPATIAL + 2]; /* n, oc, then the spatial coordinates */
  logical_indices(b, &r->layouts[2], r->data_order, indices, out);
  const kiln_tir_expr_t *ic = kiln_tir_b_v(r->reduce[0]->var);
  const kiln_tir_expr_t *channel = ic, *o = out[1];
  if (r->groups > 1) {
    const kiln_tir_expr_t *group =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, out[1], imm(b, r->group_out));
    channel = kiln_tir_b_add(b, kiln_tir_b_mul(b, group, imm(b, r->group_in)), ic);
    o = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, out[1], imm(b, r->group_out));
  }
  const kiln_tir_expr_t *dl[KILN_NN_MAX_SPATIAL + 2] = {out[0], channel};
  const kiln_tir_expr_t *wl[KILN_NN_MAX_SPATIAL + 2] = {channel, o};
  const kiln_tir_expr_t *valid = NULL;
  for (int s = 0; s < r->spatial; ++s) {
    wl[2 + s] = kiln_tir_b_v(r->reduce[1 + s]->var);
    const kiln_tir_expr_t *ok = tconv_source(b, out[2 + s], wl[2 + s], r->pad[s], r->stride[s],
                                             r->dilation[s], r->in[s], &dl[2 + s]);
    valid = valid ? kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, valid, ok) : ok;
  }
  const kiln_tir_expr_t *at[KILN_LAYOUT_MAX_AXES];
  storage_indices(b, &r->layouts[0], r->data_order, dl, at);
  const kiln_tir_expr_t *x = kiln_te_read(b, r->data, r->data->ndim, at);
  storage_indices(b, &r->layouts[1], r->kernel_order, wl, at);
  const kiln_tir_expr_t *y = kiln_te_read(b, r->weight, r->weight->ndim, at);
  return kiln_tir_b_select(b, valid, kiln_tir_b_mul(b, x, y), kiln_tir_b_f32(b, 0.0));
}

kiln_status_t kiln_compute_conv2d_transpose(const kiln_compute_args_t *args,
                                            kiln_compute_result_t *out_result) {
  const kiln_nn_conv2d_transpose_attrs_t *a = args->attrs;
  bool is_3d = args->op->id == KILN_OP_CONV3D_TRANSPOSE;
  /* the window's fields as conv's (output_padding only sizes the output) */
  const kiln_nn_conv2d_attrs_t window = {.strides = a->strides,
                                         .padding = a->padding,
                                         .dilation = a->dilation,
                                         .groups = a->groups,
                                         .data_layout = a->data_layout,
                                         .kernel_layout = a->kernel_layout,
                                         .out_layout = a->out_layout};
  conv_rule_t r;
  KILN_RETURN_IF_ERROR(conv_rule_start(args, is_3d ? 3 : 2, is_3d ? "IODHW" : "IOHW", &window, &r));
  const int64_t *wshape = r.weight->shape;
  r.group_in = logical_extent(&r.layouts[0], r.data->shape, 'C') / a->groups;
  r.group_out = logical_extent(&r.layouts[1], wshape, 'O');
  return conv_rule_finish(args, &r, tconv_body, out_result);
}
