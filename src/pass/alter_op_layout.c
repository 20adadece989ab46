/*
 * alter_op_layout: nn.conv2d in NCHW/OIHW becomes nn.contrib_conv2d_NCHWc
 * with data NCHW{ic}c, weight OIHW{ic}i{oc}o and output NCHW{oc}c, and the
 * blocked layout flows on through the operators that can work in it, so
 * layout_transform appears only at the edges (TVM's AlterOpLayout with the
 * x86 conv2d_NCHWc rule, and the layout rules of NNVM's CorrectLayout).
 *
 * Blocks (channel_block): the largest power of two not above the option
 * "alter_op_layout.block" (default: the target's float32 lanes, 16 on AVX-512 and 8 on
 * AVX2), or half of it, that divides the
 * channel count, so that a block is whole vectors (1000 channels in 8s, not
 * 10s: a 10-lane vector ran the last conv of squeezenet1_1 at a fraction
 * of the speed); else the largest divisor not above the option; separately
 * for the input and the output channels; a conv whose output channels have no divisor above 1 in
 * that range or a conv in other layouts stays as it is. A conv on plain
 * data with fewer than 4 channels (an RGB stem) gets ic = 1: NCHW1c is NCHW's
 * own memory order.
 * A depthwise conv (groups == C == O, TVM's depthwise_conv2d_NCHWc) becomes
 * the NCHWc form with its groups: data and output in one block b, weight
 * OIHW1i{b}o (transformed at compile time like the others), where b is the
 * block its data already has when that divides C (so the chain blocked 1x1
 * conv -> depthwise -> 1x1 conv of MobileNet has no layout_transform), else
 * the block as above. Any other grouped conv (ResNeXt, RegNet,
 * ShuffleNet) becomes the NCHWc form with its groups when its blocks can
 * stay inside groups: data NCHW{ic}c and output NCHW{oc}c with ic and oc
 * the blocks as above of the input and output channels per group, weight OIHW1i{oc}o; when either
 * is 1 it stays NCHW.
 *
 * The rewrite walks the nodes in post order and keeps, per node, its new
 * value in the original layout and/or in a blocked layout, making each from
 * the other on demand with one layout_transform (memoized, so a value is
 * transformed once however many readers want it, and a value that has a
 * blocked form is never transformed to plain and back: back-to-back
 * transforms cannot arise, and an explicit pair already in the graph
 * cancels). A reader chooses by its registry rules:
 * - the NCHWc conv wants its data blocked by its ic;
 * - a layout-agnostic elementwise operator (no layout rule) follows a
 *   blocked input;
 * - a broadcast operator (kiln_broadcast_correct_layout) follows its
 *   blocked 4-d input: other 4-d inputs are blocked the same way, lower-rank
 *   ones (per-channel (C, 1, 1) scales and shifts) are blocked as "CHW{c}c"
 *   or, without a channel axis to split, get a trailing axis of 1 so they
 *   still line up from the right; constants are transformed right here
 *   with layout_transform's reference kernel, so the weights are re-laid
 *   out once, at compile time;
 * - pooling takes the blocked layout through its layout attribute;
 * - a concatenate on the channel axis with a blocked input, whose blocked
 *   inputs share one block b and every input has a multiple of b channels,
 *   concatenates the blocked values (the plain ones transformed to b, once
 *   each: a DenseNet block's first input is often a plain reshape) on
 *   their axis 1 (the chunks of b channels: the chunks of each
 *   input follow those of the one before, as its channels do) and stays
 *   blocked, so a fire module's or a DenseNet block's concatenate needs no
 *   layout_transform on either side;
 * - channel slices of a blocked input whose cuts fall on chunk boundaries
 *   slice whole chunks and stay blocked: a split on the channel axis whose
 *   parts each hold a multiple of b channels splits the blocked value on
 *   axis 1 (its TupleGetItems pick blocked parts; the plain split is kept
 *   for readers of the whole tuple), and a strided_slice that only takes
 *   channels [begin, begin + C') with step 1, begin and C' multiples of b,
 *   takes chunks [begin / b, (begin + C') / b);
 * - anything else reads the original layout.
 * The function's results are returned in their original layouts.
 */
#include <stdio.h>
#include <string.h>

#include "ir/infer.h"
#include "op/broadcast.h"
#include "op/nn_common.h"
#include "op/transform_attrs.h"
#include "pass/dominator.h"
#include "pass/passes.h"

/* Plain data with fewer channels than this stays in its own order (block
 * 1, NCHW1c) for a conv: blocking 3 channels into NCHW3c is a transpose
 * of the whole input (0.15 ms of a 224x224 image) for a reduction of 3. */
#define ALTER_MIN_DATA_BLOCK 4

typedef struct value_t {
  kiln_expr_t *plain;   /* in the original layout, or NULL while only blocked */
  kiln_expr_t *blocked; /* in `layout`, or NULL */
  kiln_layout_t layout; /* NCHW16c, while `blocked` */
} value_t;

typedef struct alterer_t {
  kiln_module_t *module;
  kiln_arena_t *arena;
  kiln_allocator_t allocator;
  kiln_array_t nodes;   /* kiln_expr_t *, post order */
  kiln_hashmap_t index; /* node -> position */
  value_t *values;
  kiln_array_t args; /* kiln_expr_t *, scratch */
  int64_t block;
  int converted;
  kiln_layout_t nchw; /* the plain layouts, parsed once */
  kiln_layout_t oihw;
} alterer_t;

/* ---- helpers ---- */

static kiln_expr_t *node_at(const alterer_t *a, int32_t index) {
  return KILN_ARRAY_AT(&a->nodes, kiln_expr_t *, (size_t)index);
}

static value_t *value_of(const alterer_t *a, const kiln_expr_t *expr) {
  return &a->values[kiln_dataflow_order_index(&a->index, expr)];
}

/* The block of n channels: the largest power of two up to `limit`, or
 * half of it, that divides n (whole vectors: 1000 channels in blocks of 8,
 * not 10; 24 in 8, not 12), else the largest divisor up to `limit`. */
static int64_t channel_block(int64_t n, int64_t limit) {
  int64_t top = 1;
  while (2 * top <= limit) {
    top *= 2;
  }
  for (int64_t p = top; p > 1 && 2 * p >= top; p /= 2) {
    if (p <= n && n % p == 0) {
      return p;
    }
  }
  for (int64_t b = limit < n ? limit : n; b > 1; --b) {
    if (n % b == 0) {
      return b;
    }
  }
  return 1;
}

/* NCHW{c}c, or with o > 0 the weight's OIHW{c}i{o}o. */
static kiln_status_t blocked_layout(const alterer_t *a, int64_t c, int64_t o,
                                    kiln_layout_t *out_layout) {
  if (o == 0) {
    return kiln_layout_split(&a->nchw, 'C', c, out_layout);
  }
  KILN_RETURN_IF_ERROR(kiln_layout_split(&a->oihw, 'I', c, out_layout));
  return kiln_layout_split(out_layout, 'O', o, out_layout);
}

/* The text of `layout`, for an attribute, in the arena. */
static kiln_status_t layout_attr(alterer_t *a, const kiln_layout_t *layout, const char **out_text) {
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(a->arena, layout->text, &copy));
  *out_text = copy;
  return KILN_OK;
}

static kiln_status_t call_op(alterer_t *a, const kiln_op_t *op, int num_args,
                             kiln_expr_t *const *args, const void *attrs, kiln_expr_t **out) {
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(a->module, op, num_args, args, attrs, &call));
  *out = &call->base;
  return KILN_OK;
}

/* layout_transform(src -> dst) of `input`; computed now when it is a
 * constant, by layout_transform's reference kernel. */
static kiln_status_t fold_transform(alterer_t *a, kiln_constant_t *constant,
                                    const kiln_nn_layout_transform_attrs_t *attrs,
                                    kiln_expr_t **out) {
  const kiln_type_t *in_type = NULL, *out_type = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_type_of(a->arena, constant->value, &in_type));
  KILN_RETURN_IF_ERROR(
      kiln_op_infer_type(&kiln_op_layout_transform, attrs, 1, &in_type, a->arena, &out_type));
  kiln_op_evaluation_t e;
  KILN_RETURN_IF_ERROR(kiln_op_evaluate(a->allocator, &kiln_op_layout_transform, attrs, 1,
                                        &constant->value, out_type, &e));
  kiln_constant_t *folded = NULL;
  kiln_status_t status = kiln_ir_constant_create(a->module, e.outputs[0], &folded);
  kiln_op_evaluation_release(&e);
  KILN_RETURN_IF_ERROR(status);
  *out = &folded->base;
  return KILN_OK;
}

static kiln_status_t transform(alterer_t *a, kiln_expr_t *input, const kiln_layout_t *src,
                               const kiln_layout_t *dst, kiln_expr_t **out) {
  kiln_nn_layout_transform_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_op_attrs_create_default(&kiln_op_layout_transform, a->arena, (void **)&attrs));
  KILN_RETURN_IF_ERROR(layout_attr(a, src, &attrs->src_layout));
  KILN_RETURN_IF_ERROR(layout_attr(a, dst, &attrs->dst_layout));
  kiln_constant_t *constant = kiln_expr_as_constant(input);
  if (constant) {
    return fold_transform(a, constant, attrs, out);
  }
  return call_op(a, &kiln_op_layout_transform, 1, &input, attrs, out);
}

/* `input` with a trailing axis of 1 (a constant is reshaped right here). */
static kiln_status_t append_unit_axis(alterer_t *a, kiln_expr_t *input, int rank,
                                      kiln_expr_t **out) {
  kiln_constant_t *constant = kiln_expr_as_constant(input);
  if (constant) {
    int64_t shape[KILN_MAX_RANK + 1];
    const int64_t *old = kiln_tensor_shape(constant->value);
    for (int i = 0; i < rank; ++i) {
      shape[i] = old[i];
    }
    shape[rank] = 1;
    kiln_tensor_t *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(a->allocator, kiln_tensor_dtype(constant->value),
                                                 rank + 1, shape, kiln_tensor_data(constant->value),
                                                 kiln_tensor_byte_size(constant->value), &copy));
    kiln_constant_t *reshaped = NULL;
    kiln_status_t status = kiln_ir_constant_create(a->module, copy, &reshaped);
    kiln_tensor_release(copy);
    KILN_RETURN_IF_ERROR(status);
    *out = &reshaped->base;
    return KILN_OK;
  }
  void *attrs = NULL;
  char axis[16];
  snprintf(axis, sizeof(axis), "%d", rank);
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(&kiln_op_expand_dims, a->arena, &attrs));
  KILN_RETURN_IF_ERROR(kiln_op_attrs_set_text(&kiln_op_expand_dims, attrs, "axis", axis, a->arena));
  return call_op(a, &kiln_op_expand_dims, 1, &input, attrs, out);
}

/* ---- values in either layout ---- */

static kiln_status_t plain_of(alterer_t *a, const kiln_expr_t *expr, kiln_expr_t **out) {
  value_t *v = value_of(a, expr);
  if (!v->plain) {
    KILN_RETURN_IF_ERROR(transform(a, v->blocked, &v->layout, &a->nchw, &v->plain));
  }
  *out = v->plain;
  return KILN_OK;
}

/* `expr` (a 4-d NCHW tensor) in `layout` (NCHW{b}c). */
static kiln_status_t blocked_of(alterer_t *a, const kiln_expr_t *expr, const kiln_layout_t *layout,
                                kiln_expr_t **out) {
  value_t *v = value_of(a, expr);
  if (v->blocked && kiln_layout_equal(&v->layout, layout)) {
    *out = v->blocked;
    return KILN_OK;
  }
  const kiln_tensor_type_t *type = kiln_type_as_tensor(expr->checked_type);
  if (type->shape[1] == 1) { /* a channel broadcast: a trailing unit axis lines it up */
    kiln_expr_t *plain = NULL;
    KILN_RETURN_IF_ERROR(plain_of(a, expr, &plain));
    return append_unit_axis(a, plain, 4, out);
  }
  if (v->blocked) {
    return transform(a, v->blocked, &v->layout, layout, out);
  }
  KILN_RETURN_IF_ERROR(transform(a, v->plain, &a->nchw, layout, &v->blocked));
  v->layout = *layout;
  *out = v->blocked;
  return KILN_OK;
}

static bool is_nchw_float(const kiln_expr_t *expr) {
  const kiln_tensor_type_t *type = kiln_type_as_tensor(expr->checked_type);
  return type && type->ndim == 4 && type->dtype == KILN_DTYPE_FLOAT32;
}

/* ---- the rules ---- */

static kiln_status_t set_blocked(alterer_t *a, int32_t node, kiln_expr_t *expr,
                                 const kiln_layout_t *layout) {
  a->values[node].blocked = expr;
  a->values[node].layout = *layout;
  return KILN_OK;
}

/* The conv in the NCHWc form: data in blocks of `ic`, weight
 * OIHW{weight_ic}i{oc}o (transformed now when it is a constant), output in
 * blocks of `oc`. */
static kiln_status_t convert_blocked(alterer_t *a, int32_t node, const kiln_call_t *call,
                                     int64_t ic, int64_t weight_ic, int64_t oc) {
  kiln_nn_conv2d_attrs_t *blocked = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_op_attrs_create_default(&kiln_op_conv2d_nchwc, a->arena, (void **)&blocked));
  *blocked = *(const kiln_nn_conv2d_attrs_t *)call->attrs;
  kiln_layout_t data, kernel, out;
  KILN_RETURN_IF_ERROR(blocked_layout(a, ic, 0, &data));
  KILN_RETURN_IF_ERROR(blocked_layout(a, weight_ic, oc, &kernel));
  KILN_RETURN_IF_ERROR(blocked_layout(a, oc, 0, &out));
  KILN_RETURN_IF_ERROR(layout_attr(a, &data, &blocked->data_layout));
  KILN_RETURN_IF_ERROR(layout_attr(a, &kernel, &blocked->kernel_layout));
  KILN_RETURN_IF_ERROR(layout_attr(a, &out, &blocked->out_layout));
  kiln_expr_t *args[2] = {NULL, NULL};
  KILN_RETURN_IF_ERROR(blocked_of(a, call->args[0], &data, &args[0]));
  kiln_expr_t *weight = NULL;
  KILN_RETURN_IF_ERROR(plain_of(a, call->args[1], &weight));
  KILN_RETURN_IF_ERROR(transform(a, weight, &a->oihw, &kernel, &args[1]));
  kiln_expr_t *conv = NULL;
  KILN_RETURN_IF_ERROR(call_op(a, &kiln_op_conv2d_nchwc, 2, args, blocked, &conv));
  a->converted += 1;
  return set_blocked(a, node, conv, &out);
}

/* Whether the conv is depthwise: groups == C == O, one input channel each. */
static bool is_depthwise(const kiln_call_t *call) {
  const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
  const kiln_tensor_type_t *data = kiln_type_as_tensor(call->args[0]->checked_type);
  const kiln_tensor_type_t *weight = kiln_type_as_tensor(call->args[1]->checked_type);
  return attrs->groups > 1 && attrs->groups == data->shape[1] &&
         weight->shape[0] == data->shape[1] && weight->shape[1] == 1;
}

/* The data block of a conv: its data's block when the data is blocked
 * already and the block divides the channels (a blocked chain goes on with
 * no transform), for a plain conv only when that block is at least half
 * the preferred one (8 for 16: the input-channel block only sets the
 * reduction's inner extent); else channel_block. */
static int64_t data_block(const alterer_t *a, const kiln_call_t *call, bool any_size) {
  const kiln_tensor_type_t *data = kiln_type_as_tensor(call->args[0]->checked_type);
  int64_t preferred = channel_block(data->shape[1], a->block);
  const value_t *v = value_of(a, call->args[0]);
  if (!v->blocked && data->shape[1] < ALTER_MIN_DATA_BLOCK) {
    return 1; /* NCHW1c: the plain data's own order, no transpose */
  }
  if (v->blocked) {
    int64_t factor = kiln_layout_factor(&v->layout, 'C');
    if (factor > 1 && data->shape[1] % factor == 0 && (any_size || 2 * factor >= preferred)) {
      return factor;
    }
  }
  return preferred;
}

static kiln_status_t convert_conv(alterer_t *a, int32_t node, const kiln_call_t *call) {
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  int64_t ic = data_block(a, call, false);
  return convert_blocked(a, node, call, ic, ic, channel_block(out->shape[1], a->block));
}

/* A depthwise conv becomes the NCHWc form with groups: data and output in
 * blocks of b, weight OIHW1i{b}o. */
static kiln_status_t convert_depthwise(alterer_t *a, int32_t node, const kiln_call_t *call) {
  int64_t b = data_block(a, call, true);
  return convert_blocked(a, node, call, b, 1, b);
}

/* The blocks of a grouped conv that is not depthwise: the largest divisors
 * of the input and of the output channels per group, so no block straddles
 * two groups. */
static void grouped_blocks(const alterer_t *a, const kiln_call_t *call, int64_t *out_ic,
                           int64_t *out_oc) {
  const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
  const kiln_tensor_type_t *weight = kiln_type_as_tensor(call->args[1]->checked_type);
  *out_ic = channel_block(weight->shape[1], a->block);
  *out_oc = channel_block(weight->shape[0] / attrs->groups, a->block);
}

/* A grouped conv becomes the NCHWc form with its groups: data in blocks of
 * ic, weight OIHW1i{oc}o, output in blocks of oc (blocks inside groups). */
static kiln_status_t convert_grouped(alterer_t *a, int32_t node, const kiln_call_t *call) {
  int64_t ic = 0, oc = 0;
  grouped_blocks(a, call, &ic, &oc);
  return convert_blocked(a, node, call, ic, 1, oc);
}

static bool convertible_conv(const alterer_t *a, const kiln_call_t *call) {
  if (call->op != &kiln_op_conv2d) {
    return false;
  }
  const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  if (!kiln_nn_conv2d_is_nchw(attrs) || !is_nchw_float(call->args[0]) ||
      !is_nchw_float(call->args[1])) {
    return false;
  }
  if (attrs->groups > 1 && is_depthwise(call)) {
    return data_block(a, call, true) > 1;
  }
  if (attrs->groups > 1) {
    int64_t ic = 0, oc = 0;
    grouped_blocks(a, call, &ic, &oc);
    return ic > 1 && oc > 1;
  }
  return out->shape[1] == 1 || channel_block(out->shape[1], a->block) > 1;
}

/* The first input that has a blocked form, or -1. */
static int blocked_input(const alterer_t *a, const kiln_call_t *call) {
  for (int i = 0; i < call->num_args; ++i) {
    if (value_of(a, call->args[i])->blocked && is_nchw_float(call->args[i])) {
      return i;
    }
  }
  return -1;
}

/* A lower-rank operand of a broadcast whose main input is in `layout`. */
static kiln_status_t broadcast_operand(alterer_t *a, const kiln_expr_t *arg,
                                       const kiln_layout_t *layout, kiln_expr_t **out) {
  const kiln_tensor_type_t *type = kiln_type_as_tensor(arg->checked_type);
  kiln_expr_t *plain = NULL;
  KILN_RETURN_IF_ERROR(plain_of(a, arg, &plain));
  if (type->ndim == 0) {
    *out = plain;
    return KILN_OK;
  }
  if (type->ndim == 3 && type->shape[0] > 1) {
    /* (C, H, W): split C as the main input does (NCHW16c -> CHW16c) */
    kiln_layout_t chw, blocked;
    KILN_RETURN_IF_ERROR(kiln_layout_sub(&a->nchw, 1, 3, &chw));
    KILN_RETURN_IF_ERROR(kiln_layout_sub(layout, 1, layout->ndim - 1, &blocked));
    return transform(a, plain, &chw, &blocked, out);
  }
  return append_unit_axis(a, plain, type->ndim, out);
}

static kiln_status_t make_ints(alterer_t *a, int count, kiln_ints_t *out, int64_t **out_values) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(a->arena, (size_t)(count ? count : 1),
                                                 sizeof(int64_t), _Alignof(int64_t),
                                                 (void **)out_values));
  *out = (kiln_ints_t){count, *out_values};
  return KILN_OK;
}

/* Whether an nn.pad of a 4-d NCHW value leaves the channels alone (pads N,
 * H and W only): then it pads the blocked form the same way, per lane. */
static bool pad_keeps_channels(const kiln_call_t *call) {
  const kiln_pad_attrs_t *attrs = call->attrs;
  return attrs->pad_width.count == 8 && attrs->pad_width.values[2] == 0 &&
         attrs->pad_width.values[3] == 0;
}

static bool follows_layout(const kiln_call_t *call, int main_input) {
  const kiln_op_t *op = call->op;
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  if (!out || out->ndim != 4) {
    return false;
  }
  if (!op->correct_layout) {
    return call->num_args == 1;
  }
  if (op->correct_layout == kiln_broadcast_correct_layout) {
    for (int i = 0; i < call->num_args; ++i) {
      const kiln_tensor_type_t *t = kiln_type_as_tensor(call->args[i]->checked_type);
      if (!t || t->ndim > 4 || (t->ndim == 4 && i != main_input && !is_nchw_float(call->args[i]))) {
        return false;
      }
    }
    return true;
  }
  if (op == &kiln_op_pad) {
    return pad_keeps_channels(call);
  }
  return op == &kiln_op_max_pool2d || op == &kiln_op_avg_pool2d ||
         op == &kiln_op_global_avg_pool2d || op == &kiln_op_global_max_pool2d;
}

/* The attributes of a channel-keeping nn.pad of the blocked form: the same
 * widths and a (0, 0) pair for the block axis. */
static kiln_status_t blocked_pad_attrs(alterer_t *a, const kiln_pad_attrs_t *plain,
                                       const void **out_attrs) {
  kiln_pad_attrs_t *pad = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(a->arena, sizeof(*pad), 8, (void **)&pad));
  *pad = *plain;
  int64_t *widths = NULL;
  KILN_RETURN_IF_ERROR(make_ints(a, 10, &pad->pad_width, &widths));
  memcpy(widths, plain->pad_width.values, 8 * sizeof(int64_t));
  widths[8] = widths[9] = 0;
  *out_attrs = pad;
  return KILN_OK;
}

/* Rebuilds `call` reading its inputs in `layout`; the pools get the layout
 * in their attributes. */
static kiln_status_t follow(alterer_t *a, int32_t node, const kiln_call_t *call,
                            const kiln_layout_t *layout) {
  kiln_array_clear(&a->args);
  for (int i = 0; i < call->num_args; ++i) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(call->args[i]->checked_type);
    kiln_expr_t *arg = NULL;
    if (t->ndim == 4) {
      KILN_RETURN_IF_ERROR(blocked_of(a, call->args[i], layout, &arg));
    } else {
      KILN_RETURN_IF_ERROR(broadcast_operand(a, call->args[i], layout, &arg));
    }
    KILN_RETURN_IF_ERROR(kiln_array_push(&a->args, &arg));
  }
  const void *attrs = call->attrs;
  if (call->op == &kiln_op_max_pool2d || call->op == &kiln_op_avg_pool2d) {
    kiln_nn_pool2d_attrs_t *pool = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(a->arena, sizeof(*pool), 8, (void **)&pool));
    *pool = *(const kiln_nn_pool2d_attrs_t *)call->attrs;
    KILN_RETURN_IF_ERROR(layout_attr(a, layout, &pool->layout));
    attrs = pool;
  } else if (call->op == &kiln_op_pad) {
    KILN_RETURN_IF_ERROR(blocked_pad_attrs(a, call->attrs, &attrs));
  } else if (call->op == &kiln_op_global_avg_pool2d || call->op == &kiln_op_global_max_pool2d) {
    kiln_nn_global_pool2d_attrs_t *pool = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(a->arena, sizeof(*pool), 8, (void **)&pool));
    KILN_RETURN_IF_ERROR(layout_attr(a, layout, &pool->layout));
    attrs = pool;
  }
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(
      call_op(a, call->op, call->num_args, kiln_array_data(&a->args), attrs, &expr));
  return set_blocked(a, node, expr, layout);
}

/* The channel block of `expr`'s blocked form ("NCHW{b}c"), or 0. */
static int64_t blocked_factor(const alterer_t *a, const kiln_expr_t *expr) {
  const value_t *v = value_of(a, expr);
  if (!v->blocked || !is_nchw_float(expr)) {
    return 0;
  }
  return kiln_layout_factor(&v->layout, 'C');
}

/* The input of `call` whose blocked form gives the concatenate its layout:
 * a channel concatenate with at least one blocked input, whose blocked
 * inputs share one block b, b dividing every input's channels; else -1. */
static int concatenate_layout_input(const alterer_t *a, const kiln_call_t *call) {
  if (call->op != &kiln_op_concatenate || !is_nchw_float(&call->base)) {
    return -1;
  }
  int64_t axis = ((const kiln_concatenate_attrs_t *)call->attrs)->axis;
  int64_t block = 0;
  int first = -1;
  for (int i = 0; (axis == 1 || axis == -3) && i < call->num_args; ++i) {
    int64_t b = blocked_factor(a, call->args[i]);
    if (b > 1 && (block == 0 || b == block)) {
      block = b;
      first = first < 0 ? i : first;
    } else if (b > 1) {
      return -1;
    }
  }
  for (int i = 0; block > 1 && i < call->num_args; ++i) {
    if (kiln_type_as_tensor(call->args[i]->checked_type)->shape[1] % block != 0) {
      return -1;
    }
  }
  return block > 1 ? first : -1;
}

/* The concatenate on the chunk axis (1) of the inputs in the block of
 * input `first`: plain inputs are transformed to it (once each). */
static kiln_status_t concatenate_blocked(alterer_t *a, int32_t node, const kiln_call_t *call,
                                         int first) {
  kiln_layout_t layout = value_of(a, call->args[first])->layout;
  kiln_array_clear(&a->args);
  for (int i = 0; i < call->num_args; ++i) {
    kiln_expr_t *blocked = NULL;
    KILN_RETURN_IF_ERROR(blocked_of(a, call->args[i], &layout, &blocked));
    KILN_RETURN_IF_ERROR(kiln_array_push(&a->args, &blocked));
  }
  kiln_concatenate_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_op_attrs_create_default(&kiln_op_concatenate, a->arena, (void **)&attrs));
  attrs->axis = 1;
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(
      call_op(a, call->op, call->num_args, kiln_array_data(&a->args), attrs, &expr));
  return set_blocked(a, node, expr, &layout);
}

/* ---- channel slices ---- */

/* An attribute list of `count` integers, *out_values to fill them. */

/* The block of a split on the channels of a blocked input whose parts each
 * hold whole chunks, or 0. */
static int64_t split_block(const alterer_t *a, const kiln_call_t *call) {
  if (call->op != &kiln_op_split) {
    return 0;
  }
  const kiln_split_attrs_t *attrs = call->attrs;
  const kiln_tuple_type_t *parts = kiln_type_as_tuple(call->base.checked_type);
  int64_t block = blocked_factor(a, call->args[0]);
  if ((attrs->axis != 1 && attrs->axis != -3) || !parts || block < 2) {
    return 0;
  }
  for (int i = 0; i < parts->count; ++i) {
    const kiln_tensor_type_t *part = kiln_type_as_tensor(parts->fields[i]);
    if (!part || part->ndim != 4 || part->shape[1] == 0 || part->shape[1] % block != 0) {
      return 0;
    }
  }
  return block;
}

/* The split of the blocked input at the same cuts, in chunks, on axis 1;
 * the plain split stays the tuple's plain form. */
static kiln_status_t split_blocked(alterer_t *a, int32_t node, const kiln_call_t *call,
                                   int64_t block) {
  const kiln_tuple_type_t *parts = kiln_type_as_tuple(call->base.checked_type);
  kiln_split_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(&kiln_op_split, a->arena, (void **)&attrs));
  attrs->axis = 1;
  attrs->sections = parts->count == 1 ? 1 : 0;
  int64_t *cuts = NULL;
  KILN_RETURN_IF_ERROR(make_ints(a, parts->count - 1, &attrs->indices, &cuts));
  for (int i = 0; i + 1 < parts->count; ++i) {
    cuts[i] = (i ? cuts[i - 1] : 0) + kiln_type_as_tensor(parts->fields[i])->shape[1] / block;
  }
  kiln_expr_t *plain = NULL, *blocked = value_of(a, call->args[0])->blocked;
  KILN_RETURN_IF_ERROR(plain_of(a, call->args[0], &plain));
  KILN_RETURN_IF_ERROR(call_op(a, call->op, 1, &plain, call->attrs, &a->values[node].plain));
  KILN_RETURN_IF_ERROR(call_op(a, call->op, 1, &blocked, attrs, &blocked));
  return set_blocked(a, node, blocked, &value_of(a, call->args[0])->layout);
}

/* A TupleGetItem of a blocked split picks the blocked part. */
static kiln_status_t pick_blocked(alterer_t *a, int32_t node, const kiln_tuple_get_item_t *item) {
  const value_t *tuple = value_of(a, item->tuple);
  kiln_tuple_get_item_t *picked = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_tuple_get_item_create(a->module, tuple->blocked, item->index, &picked));
  return set_blocked(a, node, &picked->base, &tuple->layout);
}

static bool picks_blocked(const alterer_t *a, const kiln_expr_t *expr) {
  const kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
  return item && !kiln_type_as_tensor(item->tuple->checked_type) &&
         value_of(a, item->tuple)->blocked;
}

/* The first channel a strided_slice takes (step 1 everywhere), or -1 when
 * a step is not 1. */
static int64_t slice_begin(const kiln_strided_slice_attrs_t *attrs, int64_t channels) {
  for (int k = 0; k < attrs->strides.count; ++k) {
    if (attrs->strides.values[k] != 1) {
      return -1;
    }
  }
  for (int k = 0; k < attrs->begin.count; ++k) {
    int64_t axis = attrs->axes.count ? attrs->axes.values[k] : k;
    if (axis == 1 || axis == -3) {
      int64_t begin =
          attrs->begin.values[k] < 0 ? attrs->begin.values[k] + channels : attrs->begin.values[k];
      return begin < 0 ? 0 : (begin > channels ? channels : begin);
    }
  }
  return 0;
}

/* The block of a strided_slice that takes whole chunks of a blocked input's
 * channels and nothing else, or 0. */
static int64_t slice_block(const alterer_t *a, const kiln_call_t *call) {
  if (call->op != &kiln_op_strided_slice) {
    return 0;
  }
  const kiln_tensor_type_t *in = kiln_type_as_tensor(call->args[0]->checked_type);
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  int64_t block = blocked_factor(a, call->args[0]);
  if (block < 2 || !is_nchw_float(&call->base) || in->shape[0] != out->shape[0] ||
      in->shape[2] != out->shape[2] || in->shape[3] != out->shape[3] || out->shape[1] == 0 ||
      out->shape[1] % block != 0) {
    return 0;
  }
  int64_t begin = slice_begin(call->attrs, in->shape[1]);
  return begin >= 0 && begin % block == 0 ? block : 0;
}

/* The strided_slice of the blocked input's chunks. */
static kiln_status_t slice_blocked(alterer_t *a, int32_t node, const kiln_call_t *call,
                                   int64_t block) {
  const kiln_tensor_type_t *in = kiln_type_as_tensor(call->args[0]->checked_type);
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  kiln_strided_slice_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_op_attrs_create_default(&kiln_op_strided_slice, a->arena, (void **)&attrs));
  int64_t *begin = NULL, *end = NULL, *axes = NULL;
  KILN_RETURN_IF_ERROR(make_ints(a, 1, &attrs->begin, &begin));
  KILN_RETURN_IF_ERROR(make_ints(a, 1, &attrs->end, &end));
  KILN_RETURN_IF_ERROR(make_ints(a, 1, &attrs->axes, &axes));
  begin[0] = slice_begin(call->attrs, in->shape[1]) / block;
  end[0] = begin[0] + out->shape[1] / block;
  axes[0] = 1;
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(call_op(a, call->op, 1, &value_of(a, call->args[0])->blocked, attrs, &expr));
  return set_blocked(a, node, expr, &value_of(a, call->args[0])->layout);
}

/* A node that reads its inputs in their original layouts. */
static kiln_status_t rebuild_plain(alterer_t *a, int32_t node) {
  kiln_expr_t *expr = node_at(a, node);
  kiln_array_clear(&a->args);
  bool same = true;
  for (int i = 0; i < kiln_dataflow_child_count(expr); ++i) {
    kiln_expr_t *arg = NULL;
    KILN_RETURN_IF_ERROR(plain_of(a, kiln_dataflow_child_at(expr, i), &arg));
    same = same && arg == kiln_dataflow_child_at(expr, i);
    KILN_RETURN_IF_ERROR(kiln_array_push(&a->args, &arg));
  }
  kiln_expr_t **args = kiln_array_data(&a->args);
  const kiln_call_t *call = kiln_expr_as_call(expr);
  a->values[node].plain = expr;
  if (same) {
    return KILN_OK;
  }
  kiln_call_t *new_call = NULL;
  if (call && call->op) {
    return call_op(a, call->op, call->num_args, args, call->attrs, &a->values[node].plain);
  } else if (call) {
    KILN_RETURN_IF_ERROR(
        kiln_ir_call_function_create(a->module, call->callee, call->num_args, args, &new_call));
    a->values[node].plain = &new_call->base;
  } else if (expr->kind == KILN_EXPR_KIND_TUPLE) {
    kiln_tuple_t *tuple = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_ir_tuple_create(a->module, (int)kiln_array_count(&a->args), args, &tuple));
    a->values[node].plain = &tuple->base;
  } else if (expr->kind == KILN_EXPR_KIND_TUPLE_GET_ITEM) {
    kiln_tuple_get_item_t *item = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_tuple_get_item_create(
        a->module, args[0], ((const kiln_tuple_get_item_t *)expr)->index, &item));
    a->values[node].plain = &item->base;
  }
  return KILN_OK;
}

/* The 4-d value a channel shuffle reshape(transpose(reshape(x))) reads,
 * when `call` is its last reshape: x is NCHW, the first reshape splits its
 * channels into (g, C/g), the transpose swaps those two axes alone, and the
 * last reshape gives back x's shape (ShuffleNet's channel shuffle); else
 * NULL. */
static const kiln_expr_t *shuffled_input(const kiln_call_t *call) {
  const kiln_call_t *swap = call->op == &kiln_op_reshape ? kiln_expr_as_call(call->args[0]) : NULL;
  const kiln_call_t *split =
      swap && swap->op == &kiln_op_transpose ? kiln_expr_as_call(swap->args[0]) : NULL;
  if (!split || split->op != &kiln_op_reshape || !is_nchw_float(split->args[0])) {
    return NULL;
  }
  const kiln_transpose_attrs_t *t = swap->attrs;
  static const int64_t swapped[5] = {0, 2, 1, 3, 4};
  const kiln_tensor_type_t *x = kiln_type_as_tensor(split->args[0]->checked_type);
  const kiln_tensor_type_t *parts = kiln_type_as_tensor(split->base.checked_type);
  const kiln_tensor_type_t *out = kiln_type_as_tensor(call->base.checked_type);
  if (t->axes.count != 5 || memcmp(t->axes.values, swapped, sizeof(swapped)) != 0 ||
      parts->ndim != 5 || parts->shape[0] != x->shape[0] || parts->shape[3] != x->shape[2] ||
      parts->shape[4] != x->shape[3] || out->ndim != 4 ||
      memcmp(out->shape, x->shape, 4 * sizeof(int64_t)) != 0) {
    return NULL;
  }
  return split->args[0];
}

/* A channel shuffle of a blocked value: computed in NCHW as before, and
 * offered at once in the input's blocked layout too, so that blocked
 * readers (convs, elementwise ops that follow them) take it without a
 * transform of their own and fusion makes the whole round trip (to NCHW,
 * reshape, transpose, reshape, back to the block) one gather kernel. */
static kiln_status_t shuffle_blocked(alterer_t *a, int32_t node, const kiln_expr_t *input) {
  KILN_RETURN_IF_ERROR(rebuild_plain(a, node));
  value_t *v = &a->values[node];
  kiln_layout_t layout = value_of(a, input)->layout;
  KILN_RETURN_IF_ERROR(transform(a, v->plain, &a->nchw, &layout, &v->blocked));
  v->layout = layout;
  return KILN_OK;
}

/* An explicit layout_transform: NCHW -> the blocked layout its input already
 * has is that blocked form; an inverse transform right before cancels. */
static kiln_status_t alter_transform(alterer_t *a, int32_t node, const kiln_call_t *call) {
  const kiln_nn_layout_transform_attrs_t *t = call->attrs;
  value_t *input = value_of(a, call->args[0]);
  if (input->blocked && kiln_layout_text_equal(t->src_layout, a->nchw.text) &&
      kiln_layout_text_equal(t->dst_layout, input->layout.text)) {
    a->values[node].plain = input->blocked;
    return KILN_OK;
  }
  kiln_expr_t *arg = NULL;
  KILN_RETURN_IF_ERROR(plain_of(a, call->args[0], &arg));
  kiln_call_t *inner = kiln_expr_as_call(arg);
  if (inner && inner->op == &kiln_op_layout_transform) {
    const kiln_nn_layout_transform_attrs_t *before = inner->attrs;
    if (kiln_layout_text_equal(before->src_layout, t->dst_layout) &&
        kiln_layout_text_equal(before->dst_layout, t->src_layout)) {
      a->values[node].plain = inner->args[0];
      return KILN_OK;
    }
  }
  if (arg == call->args[0]) {
    a->values[node].plain = node_at(a, node);
    return KILN_OK;
  }
  return call_op(a, &kiln_op_layout_transform, 1, &arg, t, &a->values[node].plain);
}

static kiln_status_t alter_node(alterer_t *a, int32_t node) {
  kiln_expr_t *expr = node_at(a, node);
  const kiln_call_t *call = kiln_expr_as_call(expr);
  if (!expr->checked_type && expr->kind != KILN_EXPR_KIND_FUNCTION) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "alter_op_layout needs types: a %s has no checked type (run infer_type "
                       "first)",
                       kiln_expr_kind_name(expr->kind));
  }
  if (call && call->op && convertible_conv(a, call)) {
    const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
    if (attrs->groups == 1) {
      return convert_conv(a, node, call);
    }
    return is_depthwise(call) ? convert_depthwise(a, node, call) : convert_grouped(a, node, call);
  }
  if (call && call->op == &kiln_op_layout_transform) {
    return alter_transform(a, node, call);
  }
  int first = call ? concatenate_layout_input(a, call) : -1;
  if (first >= 0) {
    return concatenate_blocked(a, node, call, first);
  }
  int64_t block = call && call->op ? split_block(a, call) : 0;
  if (block > 0) {
    return split_blocked(a, node, call, block);
  }
  block = call && call->op ? slice_block(a, call) : 0;
  if (block > 0) {
    return slice_blocked(a, node, call, block);
  }
  if (picks_blocked(a, expr)) {
    return pick_blocked(a, node, kiln_expr_as_tuple_get_item(expr));
  }
  int main_input = call && call->op ? blocked_input(a, call) : -1;
  if (main_input >= 0 && follows_layout(call, main_input)) {
    kiln_layout_t layout = value_of(a, call->args[main_input])->layout;
    return follow(a, node, call, &layout);
  }
  const kiln_expr_t *shuffled = call && call->op ? shuffled_input(call) : NULL;
  if (shuffled && value_of(a, shuffled)->blocked) {
    return shuffle_blocked(a, node, shuffled);
  }
  return rebuild_plain(a, node);
}

static kiln_status_t alter_steps(alterer_t *a, kiln_function_t *function, const char *name) {
  KILN_RETURN_IF_ERROR(kiln_dataflow_order_compute(function, &a->nodes, &a->index));
  size_t count = kiln_array_count(&a->nodes);
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(a->allocator, count * sizeof(value_t), (void **)&a->values));
  for (size_t node = 0; node < count; ++node) {
    KILN_RETURN_IF_ERROR(alter_node(a, (int32_t)node));
  }
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(plain_of(a, function->body, &body));
  if (body == function->body) {
    return KILN_OK;
  }
  kiln_function_t *rewritten = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_function_create(a->module, function->num_params, function->params, body, &rewritten));
  KILN_RETURN_IF_ERROR(kiln_module_set_function(a->module, name, rewritten));
  return kiln_ir_infer_function(a->module, name, rewritten);
}

static kiln_status_t alter_function(kiln_module_t *module, const char *name,
                                    kiln_function_t *function, int64_t block) {
  alterer_t a;
  memset(&a, 0, sizeof(a));
  a.module = module;
  a.arena = kiln_module_arena(module);
  a.allocator = kiln_module_allocator(module);
  a.block = block;
  KILN_RETURN_IF_ERROR(kiln_layout_parse("NCHW", &a.nchw));
  KILN_RETURN_IF_ERROR(kiln_layout_parse("OIHW", &a.oihw));
  kiln_array_initialize(&a.nodes, a.allocator, sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&a.index, a.allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&a.args, a.allocator, sizeof(kiln_expr_t *));
  kiln_status_t status = alter_steps(&a, function, name);
  kiln_allocator_free(a.allocator, a.values);
  kiln_array_deinitialize(&a.nodes);
  kiln_hashmap_deinitialize(&a.index);
  kiln_array_deinitialize(&a.args);
  return status;
}

static kiln_status_t alter_op_layout_run(kiln_module_t *module, kiln_pass_context_t *context) {
  int64_t block = 0;
  int64_t lanes = kiln_schedule_lanes(kiln_pass_context_target(context), KILN_DTYPE_FLOAT32);
  KILN_RETURN_IF_ERROR(
      kiln_pass_context_option_int(context, "alter_op_layout.block", lanes, &block));
  if (block < 1 || block > 1024) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "option alter_op_layout.block must be in [1, 1024], got %lld",
                       (long long)block);
  }
  for (int i = 0; i < kiln_module_function_count(module); ++i) {
    kiln_function_t *function = kiln_module_function_at(module, i);
    if (!function->primitive) {
      KILN_RETURN_IF_ERROR(
          alter_function(module, kiln_module_function_name(module, i), function, block));
    }
  }
  return KILN_OK;
}

static const char *const alter_op_layout_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_alter_op_layout = {
    .info = {.name = "alter_op_layout", .opt_level = 3, .required = alter_op_layout_required},
    .run = alter_op_layout_run,
};
