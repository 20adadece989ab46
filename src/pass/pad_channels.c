/*
 * pad_channels: a conv whose output channels the vector block does not
 * divide computes whole blocks instead, and the padding is sliced off only
 * where the channels stop being independent.
 *
 * alter_op_layout blocks the channels by the largest power of two that
 * divides them: 1000 channels in blocks of 8, 24 in 8, 58 in 2. A block of
 * 8 float32 lanes is half an AVX-512 vector, so such a conv runs at half
 * speed or worse (squeezenet1_1's last conv, 1000 channels, took a third of
 * the model at 82 GFLOP/s). Here nn.conv2d (NCHW data, OIHW constant
 * float32 weight, groups 1) with O output channels, O % b != 0 and O >=
 * b / 2 (b: the option "pad_channels.block", default the target's float32 lanes, as
 * alter_op_layout's block) gets zero filters up to O' = the next multiple of b, and its result
 * becomes strided_slice(conv', channels [0, O)). The padded channels hold zeros, and then whatever
 * the ops below make of them: never read.
 *
 * The slice then moves down past every operator that treats each channel
 * on its own, so that it lands where the tensor is small or is absorbed:
 * - a unary elementwise operator (relu, clip, sigmoid...);
 * - add, subtract, multiply, divide, maximum and minimum with both operands
 *   sliced the same way (a residual add), or with a constant that
 *   broadcasts per channel ((C, 1, 1), (1, C, 1, 1), padded with zeros) or
 *   not over channels at all (a scalar, (1, 1, 1));
 * - NCHW max, average and global pooling;
 * - a conv reading the sliced data absorbs the slice: a groups-1 conv gets
 *   zero input channels in its weight (the padded data's channels meet
 *   zero weights), a depthwise conv (groups == C) runs over the O'
 *   channels (zero filters for the padding) and is sliced after.
 * Anything else reads the slice itself: strided_slice, which costs one
 * copy of the tensor (after a layout_transform, in a blocked graph). Every
 * constant is padded now, with nn.pad's reference kernel.
 */
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "ir/order.h"
#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

typedef struct padder_t {
  int64_t block;
  kiln_array_t slices; /* const kiln_expr_t *: the slices made here */
  kiln_array_t padded; /* const kiln_expr_t *: the convs (as they were) to pad */
} padder_t;

static bool contains(const kiln_array_t *array, const kiln_expr_t *expr) {
  const kiln_expr_t *const *items = array->data;
  for (size_t i = 0; i < array->count; ++i) {
    if (items[i] == expr) {
      return true;
    }
  }
  return false;
}

/* The padded value under `expr` when it is a slice made here, else NULL. */
static kiln_expr_t *padded_under(const padder_t *p, const kiln_expr_t *expr) {
  return contains(&p->slices, expr) ? kiln_expr_as_call(expr)->args[0] : NULL;
}

/* strided_slice(padded, channels [0, channels)), remembered. */
static kiln_status_t slice_channels(kiln_pass_rewriter_t *rw, kiln_expr_t *padded, int64_t channels,
                                    kiln_expr_t **out_expr) {
  padder_t *p = rw->state;
  char end[32];
  snprintf(end, sizeof(end), "[%lld]", (long long)channels);
  const char *const settings[] = {"begin", "[0]", "end", end, "axes", "[1]", NULL};
  KILN_RETURN_IF_ERROR(
      kiln_pass_make_call(rw->module, &kiln_op_strided_slice, 1, &padded, settings, out_expr));
  rw->rewrites++;
  return kiln_array_push(&p->slices, out_expr);
}

/* `constant` with `amount` zeros after axis `axis`, evaluated now. */
static kiln_status_t pad_axis(kiln_module_t *module, kiln_expr_t *constant, int axis,
                              int64_t amount, kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *t = kiln_pass_tensor_type(constant);
  char widths[160];
  size_t used = 0;
  for (int d = 0; d < t->ndim; ++d) {
    used += (size_t)snprintf(widths + used, sizeof(widths) - used, "%s0, %lld", d ? ", " : "[",
                             (long long)(d == axis ? amount : 0));
  }
  snprintf(widths + used, sizeof(widths) - used, "]");
  const char *const settings[] = {"pad_width", widths, NULL};
  return kiln_pass_make_call_folded(module, &kiln_op_pad, 1, &constant, settings, out_expr);
}

/* Whether `call` is an NCHW/OIHW conv2d of float32 data with a constant
 * 4-d weight (output channels: weight dim 0). */
static bool plain_conv(const kiln_call_t *call) {
  if (call->op != &kiln_op_conv2d) {
    return false;
  }
  const kiln_nn_conv2d_attrs_t *a = call->attrs;
  const kiln_tensor_type_t *w = kiln_pass_tensor_type(call->args[1]);
  const kiln_tensor_type_t *d = kiln_pass_tensor_type(call->args[0]);
  return kiln_nn_conv2d_is_nchw(a) && call->args[1]->kind == KILN_EXPR_KIND_CONSTANT && w && d &&
         w->ndim == 4 && d->ndim == 4 && w->dtype == KILN_DTYPE_FLOAT32 &&
         d->dtype == KILN_DTYPE_FLOAT32;
}

/* The conv again with `data`, `weight`, `groups` and `channels`. */
static kiln_status_t remake_conv(kiln_pass_rewriter_t *rw, const kiln_call_t *call,
                                 kiln_expr_t *data, kiln_expr_t *weight, int64_t groups,
                                 int64_t channels, kiln_expr_t **out_expr) {
  kiln_nn_conv2d_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(&kiln_op_conv2d, kiln_module_arena(rw->module),
                                                    (void **)&attrs));
  *attrs = *(const kiln_nn_conv2d_attrs_t *)call->attrs;
  attrs->groups = groups;
  attrs->channels = channels;
  kiln_expr_t *args[2] = {data, weight};
  return kiln_pass_make_call_attrs(rw->module, &kiln_op_conv2d, 2, args, attrs, out_expr);
}

/* A conv over sliced data: the slice absorbed (see the top). Leaves
 * *out_expr NULL when it cannot be. */
static kiln_status_t absorb_into_conv(kiln_pass_rewriter_t *rw, kiln_call_t *call,
                                      kiln_expr_t *padded, kiln_expr_t **out_expr) {
  *out_expr = NULL;
  const kiln_nn_conv2d_attrs_t *a = call->attrs;
  int64_t c = kiln_pass_tensor_type(call->args[0])->shape[1];
  int64_t cp = kiln_pass_tensor_type(padded)->shape[1];
  const kiln_tensor_type_t *w = kiln_pass_tensor_type(call->args[1]);
  kiln_expr_t *weight = NULL;
  if (a->groups == 1) {
    KILN_RETURN_IF_ERROR(pad_axis(rw->module, call->args[1], 1, cp - c, &weight));
    if (weight->kind == KILN_EXPR_KIND_CONSTANT) {
      rw->rewrites++;
      return remake_conv(rw, call, padded, weight, 1, a->channels, out_expr);
    }
    return KILN_OK;
  }
  if (a->groups != c || w->shape[0] != c || w->shape[1] != 1) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(pad_axis(rw->module, call->args[1], 0, cp - c, &weight));
  if (weight->kind != KILN_EXPR_KIND_CONSTANT) {
    return KILN_OK;
  }
  kiln_expr_t *conv = NULL;
  KILN_RETURN_IF_ERROR(remake_conv(rw, call, padded, weight, cp, a->channels ? cp : 0, &conv));
  return slice_channels(rw, conv, c, out_expr);
}

/* A conv whose output channels the block does not divide: zero filters up
 * to a whole block, the result sliced. */
static kiln_status_t pad_conv_output(kiln_pass_rewriter_t *rw, kiln_call_t *call,
                                     kiln_expr_t **out_expr) {
  const padder_t *p = rw->state;
  const kiln_nn_conv2d_attrs_t *a = call->attrs;
  int64_t o = kiln_pass_tensor_type(call->args[1])->shape[0];
  int64_t padded_o = (o + p->block - 1) / p->block * p->block;
  if (a->groups != 1 || o % p->block == 0 || !contains(&p->padded, rw->original)) {
    return KILN_OK;
  }
  kiln_expr_t *weight = NULL, *conv = NULL;
  KILN_RETURN_IF_ERROR(pad_axis(rw->module, call->args[1], 0, padded_o - o, &weight));
  if (weight->kind != KILN_EXPR_KIND_CONSTANT) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(
      remake_conv(rw, call, call->args[0], weight, 1, a->channels ? padded_o : 0, &conv));
  return slice_channels(rw, conv, o, out_expr);
}

static kiln_status_t pad_conv(kiln_pass_rewriter_t *rw, kiln_call_t *call, kiln_expr_t **out_expr) {
  kiln_expr_t *padded = padded_under(rw->state, call->args[0]);
  if (padded) {
    kiln_expr_t *absorbed = NULL;
    KILN_RETURN_IF_ERROR(absorb_into_conv(rw, call, padded, &absorbed));
    if (absorbed && kiln_expr_as_call(absorbed)->op != &kiln_op_conv2d) {
      *out_expr = absorbed; /* a depthwise conv, sliced after */
      return KILN_OK;
    }
    if (absorbed) {
      call = kiln_expr_as_call(absorbed);
      *out_expr = absorbed;
    }
  }
  return pad_conv_output(rw, call, out_expr);
}

/* Whether `op` treats each channel on its own given per-channel operands. */
static bool channelwise_binary(const kiln_op_t *op) {
  return op == &kiln_op_add || op == &kiln_op_subtract || op == &kiln_op_multiply ||
         op == &kiln_op_divide || op == &kiln_op_maximum || op == &kiln_op_minimum;
}

static bool nchw_pool(const kiln_call_t *call) {
  bool pool = call->op == &kiln_op_max_pool2d || call->op == &kiln_op_avg_pool2d ||
              call->op == &kiln_op_global_avg_pool2d || call->op == &kiln_op_global_max_pool2d;
  return pool && kiln_layout_text_equal(kiln_nn_pool_layout_text(call->op, call->attrs), "NCHW");
}

/* The operand of a binary op beside a sliced 4-d value of the output's
 * shape, padded to cp channels, in the padded space: another such slice's
 * padded value of cp channels, a constant broadcasting per channel
 * (padded with zeros) or over no channel; NULL when it is none of these. */
static kiln_status_t padded_operand(kiln_pass_rewriter_t *rw, kiln_expr_t *operand,
                                    const kiln_tensor_type_t *out, int64_t cp,
                                    kiln_expr_t **out_expr) {
  *out_expr = NULL;
  int64_t c = out->shape[1];
  kiln_expr_t *under = padded_under(rw->state, operand);
  const kiln_tensor_type_t *t = kiln_pass_tensor_type(operand);
  if (under) {
    bool same = memcmp(t->shape, out->shape, sizeof(int64_t) * 4) == 0;
    *out_expr = same && kiln_pass_tensor_type(under)->shape[1] == cp ? under : NULL;
    return KILN_OK;
  }
  if (operand->kind != KILN_EXPR_KIND_CONSTANT || !t || t->ndim > 4) {
    return KILN_OK;
  }
  int axis = t->ndim - 3; /* the channel axis, right-aligned with NCHW */
  if (axis < 0 || t->shape[axis] == 1) {
    *out_expr = operand;
    return KILN_OK;
  }
  if (t->shape[axis] != c || t->shape[t->ndim - 1] != 1 || t->shape[t->ndim - 2] != 1) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(pad_axis(rw->module, operand, axis, cp - c, out_expr));
  if ((*out_expr)->kind != KILN_EXPR_KIND_CONSTANT) {
    *out_expr = NULL;
  }
  return KILN_OK;
}

/* A binary channel-wise op with a sliced operand, in the padded space. */
static kiln_status_t sink_binary(kiln_pass_rewriter_t *rw, kiln_call_t *call,
                                 kiln_expr_t **out_expr) {
  int sliced = padded_under(rw->state, call->args[0]) ? 0 : 1;
  kiln_expr_t *padded = padded_under(rw->state, call->args[sliced]);
  const kiln_tensor_type_t *out = kiln_pass_tensor_type(&call->base);
  if (!padded || !out || out->ndim != 4 ||
      memcmp(out->shape, kiln_pass_tensor_type(call->args[sliced])->shape, sizeof(int64_t) * 4)) {
    return KILN_OK;
  }
  kiln_expr_t *args[2] = {NULL, NULL};
  args[sliced] = padded;
  int64_t cp = kiln_pass_tensor_type(padded)->shape[1];
  KILN_RETURN_IF_ERROR(padded_operand(rw, call->args[1 - sliced], out, cp, &args[1 - sliced]));
  if (!args[1 - sliced]) {
    return KILN_OK;
  }
  kiln_expr_t *op = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_make_call_attrs(rw->module, call->op, 2, args, call->attrs, &op));
  return slice_channels(rw, op, out->shape[1], out_expr);
}

/* A unary channel-wise op (elementwise, or NCHW pooling) of a slice. */
static kiln_status_t sink_unary(kiln_pass_rewriter_t *rw, kiln_call_t *call,
                                kiln_expr_t **out_expr) {
  kiln_expr_t *padded = padded_under(rw->state, call->args[0]);
  const kiln_tensor_type_t *out = kiln_pass_tensor_type(&call->base);
  if (!padded || !out || out->ndim != 4) {
    return KILN_OK;
  }
  kiln_expr_t *op = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_pass_make_call_attrs(rw->module, call->op, 1, &padded, call->attrs, &op));
  return slice_channels(rw, op, out->shape[1], out_expr);
}

/* ---- which convs to pad: where their slice would land ---- */

/* The elements of a tensor-typed expr; 0 for any other (a tuple). */
static int64_t elements(const kiln_expr_t *expr) {
  const kiln_tensor_type_t *t = kiln_pass_tensor_type(expr);
  int64_t n = 0;
  return t && kiln_status_consume_ok(kiln_shape_element_count(t->ndim, t->shape, &n)) ? n : 0;
}

/* Whether a constant operand broadcasts per channel or over none, beside
 * a 4-d NCHW value. */
static bool per_channel_constant(const kiln_expr_t *operand) {
  const kiln_tensor_type_t *t = kiln_pass_tensor_type(operand);
  if (operand->kind != KILN_EXPR_KIND_CONSTANT || !t || t->ndim > 4) {
    return false;
  }
  int axis = t->ndim - 3;
  return axis < 0 || t->shape[axis] == 1 ||
         (t->shape[t->ndim - 1] == 1 && t->shape[t->ndim - 2] == 1);
}

/* What `user` does with `from` (sliced): 0 reads the slice, 1 carries it
 * on (its own result is sliced), 2 absorbs it (a groups-1 conv, or, with
 * `concat_free`, a concatenate: the slice fuses into its copy). */
static int slice_passes(const kiln_call_t *user, const kiln_expr_t *from, bool concat_free) {
  if (!user->op || elements(&user->base) == 0 || kiln_pass_tensor_type(&user->base)->ndim != 4) {
    return 0;
  }
  if (plain_conv(user) && user->args[0] == from) {
    const kiln_nn_conv2d_attrs_t *a = user->attrs;
    int64_t c = kiln_pass_tensor_type(from)->shape[1];
    const kiln_tensor_type_t *w = kiln_pass_tensor_type(user->args[1]);
    return a->groups == 1 ? 2 : (a->groups == c && w->shape[0] == c && w->shape[1] == 1);
  }
  if (user->op == &kiln_op_concatenate && concat_free) {
    return 2;
  }
  if (user->num_args == 1) {
    return user->op->pattern == KILN_OP_PATTERN_ELEMWISE || nchw_pool(user);
  }
  if (user->num_args == 2 && channelwise_binary(user->op) &&
      elements(&user->base) == elements(from)) {
    return per_channel_constant(user->args[user->args[0] == from ? 1 : 0]);
  }
  return 0;
}

/* What `node` does with `value`: slice_passes for a call that reads it,
 * 0 for a tuple holding it (a tuple reads it whole), 2 (nothing to do)
 * for a node that does not read it. */
static int reads(const kiln_expr_t *node, const kiln_expr_t *value, bool concat_free) {
  const kiln_call_t *call = kiln_expr_as_call(node);
  const kiln_tuple_t *tuple = kiln_expr_as_tuple(node);
  for (int i = 0; call && i < call->num_args; ++i) {
    if (call->args[i] == value) {
      return slice_passes(call, value, concat_free);
    }
  }
  for (int i = 0; tuple && i < tuple->num_fields; ++i) {
    if (tuple->fields[i] == value) {
      return 0;
    }
  }
  return 2;
}

/* The elements of the slices padding `conv` would leave in place (each
 * value where some reader cannot carry the slice on, or which the function
 * returns), following the rules above through `order`. */
static kiln_status_t slice_cost(const kiln_ir_order_t *order, const kiln_function_t *function,
                                const kiln_expr_t *conv, bool concat_free,
                                kiln_allocator_t allocator, int64_t *out_cost) {
  kiln_array_t frontier;
  kiln_array_initialize(&frontier, allocator, sizeof(kiln_expr_t *));
  kiln_status_t status = kiln_array_push(&frontier, &conv);
  int64_t cost = 0;
  for (size_t f = 0; status == KILN_OK && f < frontier.count; ++f) {
    const kiln_expr_t *value = ((const kiln_expr_t *const *)frontier.data)[f];
    bool read = value == function->body;
    for (size_t n = 0; status == KILN_OK && n < kiln_ir_order_count(order); ++n) {
      const kiln_expr_t *node = kiln_ir_order_node(order, n);
      int passes = reads(node, value, concat_free);
      read = read || passes == 0;
      if (passes == 1 && !contains(&frontier, node)) {
        status = kiln_array_push(&frontier, &node);
      }
    }
    cost += read ? elements(value) : 0;
  }
  kiln_array_deinitialize(&frontier);
  *out_cost = cost;
  return status;
}

/* The convs of `function` worth padding: O % block != 0, O >= block / 2,
 * and the slices left in place at most 1/8 of the conv's output (the
 * classifier conv before a global pool: yes; a DenseNet layer's 8 new
 * channels before a concatenate: no, its slice would be a copy as big).
 * A concatenate reading the slice costs nothing when the padding adds at
 * most 1/8 to the conv's work: the slice fuses into the concatenation's
 * copy, and the conv runs on whole blocks instead of the largest power of
 * two dividing O (ShuffleNetV2's 58, 116 and 232 channels: blocks of 2, 4
 * and 8, at a sixth of the speed). With more padding (cnn_mix's 9 to 24
 * channels) the extra work costs more than the narrow blocks. */
static kiln_status_t plan_function(padder_t *p, const kiln_function_t *function,
                                   kiln_allocator_t allocator) {
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(kiln_ir_order_compute(function, allocator, &order));
  kiln_status_t status = KILN_OK;
  for (size_t n = 0; status == KILN_OK && n < kiln_ir_order_count(&order); ++n) {
    const kiln_expr_t *node = kiln_ir_order_node(&order, n);
    const kiln_call_t *call = kiln_expr_as_call(node);
    if (!call || !plain_conv(call) || ((const kiln_nn_conv2d_attrs_t *)call->attrs)->groups != 1) {
      continue;
    }
    int64_t o = kiln_pass_tensor_type(call->args[1])->shape[0], cost = 0;
    if (o % p->block == 0 || 2 * o < p->block) {
      continue;
    }
    int64_t padded_o = (o + p->block - 1) / p->block * p->block;
    status = slice_cost(&order, function, node, 8 * padded_o <= 9 * o, allocator, &cost);
    if (status == KILN_OK && 8 * cost <= elements(node)) {
      status = kiln_array_push(&p->padded, &node);
    }
  }
  kiln_ir_order_deinitialize(&order);
  return status;
}

static kiln_status_t plan_module(padder_t *p, kiln_module_t *module) {
  for (int i = 0; i < kiln_module_function_count(module); ++i) {
    const kiln_function_t *function = kiln_module_function_at(module, i);
    if (!function->primitive) {
      KILN_RETURN_IF_ERROR(plan_function(p, function, kiln_module_allocator(module)));
    }
  }
  return KILN_OK;
}

static kiln_status_t pad_channels_call(kiln_pass_rewriter_t *rw, kiln_call_t *call,
                                       kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (!call->op) {
    return KILN_OK;
  }
  if (plain_conv(call)) {
    return pad_conv(rw, call, out_expr);
  }
  if (call->num_args == 2 && channelwise_binary(call->op)) {
    return sink_binary(rw, call, out_expr);
  }
  if (call->num_args == 1 && (call->op->pattern == KILN_OP_PATTERN_ELEMWISE || nchw_pool(call))) {
    return sink_unary(rw, call, out_expr);
  }
  return KILN_OK;
}

static kiln_status_t pad_channels_run(kiln_module_t *module, kiln_pass_context_t *context) {
  padder_t padder = {0};
  int64_t block = 0;
  int64_t lanes = kiln_schedule_lanes(kiln_pass_context_target(context), KILN_DTYPE_FLOAT32);
  KILN_RETURN_IF_ERROR(kiln_pass_context_option_int(context, "pad_channels.block", lanes, &block));
  if (block < 1 || block > 1024) {
    return KILN_STATUS(INVALID_ARGUMENT, "option pad_channels.block must be in [1, 1024], got %lld",
                       (long long)block);
  }
  padder.block = block;
  kiln_array_initialize(&padder.slices, kiln_module_allocator(module), sizeof(kiln_expr_t *));
  kiln_array_initialize(&padder.padded, kiln_module_allocator(module), sizeof(kiln_expr_t *));
  kiln_status_t status = plan_module(&padder, module);
  if (status == KILN_OK && padder.padded.count > 0) {
    status = kiln_pass_rewrite_module(module, context, pad_channels_call, &padder, NULL);
  }
  kiln_array_deinitialize(&padder.slices);
  kiln_array_deinitialize(&padder.padded);
  return status;
}

static const char *const pad_channels_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_pad_channels = {
    .info = {.name = "pad_channels", .opt_level = 3, .required = pad_channels_required},
    .run = pad_channels_run,
};
