/*
 * combine_parallel_conv2d: convolutions of one input that differ only in
 * their number of output channels become one convolution over the
 * concatenated weights, each original result a strided_slice of its
 * channels (Relay's CombineParallelConv2D; relay.build runs it at opt_level 4,
 * so here too it is opt-in: opt_level 4, run when required).
 *
 *   %a = nn.conv2d(%x, %wa); %b = nn.conv2d(%x, %wb); %c = nn.conv2d(%x, %wc)
 *   -> %w = concatenate(%wa, %wb, %wc); %y = nn.conv2d(%x, %w)
 *      %a' = strided_slice(%y, begin=[0], end=[Ca], axes=[1]); ...
 *
 * Two convs are combinable when they read the same data node, have
 * groups = 1, NCHW data and OIHW kernels, equal strides, padding, dilation
 * and layouts, and weights of one dtype with the same input channels and
 * kernel height and width. A first walk over every function buckets the
 * conv2d calls by that key; buckets of at least
 * "combine_parallel_conv2d.min_branches" (default 3, as TVM) become groups.
 * The rewrite then meets each member: the first one met builds the
 * combined conv from the rewritten data and every member's rewritten
 * weight (the mutator is memoized, so asking for a weight early gives the
 * node the walk will give later), and every member becomes its slice.
 * Constant weights are concatenated at once. The elementwise ops after the
 * convs (TVM also widens those) are left to fusion.
 */
#include <stdio.h>
#include <string.h>

#include "ir/order.h"
#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

#define COMBINE_MAX_BRANCHES 256

typedef struct combine_group_t {
  int count;
  kiln_call_t *members[COMBINE_MAX_BRANCHES]; /* the original convs */
  kiln_expr_t *combined;                      /* the new conv, once built */
} combine_group_t;

typedef struct combine_state_t {
  kiln_hashmap_t buckets;   /* key text -> combine_group_t * */
  kiln_hashmap_t member_of; /* original conv -> combine_group_t * (groups that qualify) */
  kiln_strbuf_t key;
  kiln_arena_t *arena;
} combine_state_t;

static bool combinable(const kiln_call_t *call) {
  if (call->op != &kiln_op_conv2d) {
    return false;
  }
  const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(call->args[1]);
  return attrs->groups == 1 && kiln_nn_conv2d_is_nchw(attrs) && weight && weight->ndim == 4;
}

static kiln_status_t append_ints(kiln_strbuf_t *sb, const kiln_ints_t *ints) {
  for (int i = 0; i < ints->count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%lld,", (long long)ints->values[i]));
  }
  return kiln_strbuf_append(sb, "|");
}

/* Data node, strides, padding, dilation, weight dtype and (I, KH, KW). */
static kiln_status_t conv_key(kiln_strbuf_t *sb, const kiln_call_t *call) {
  const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(call->args[1]);
  kiln_strbuf_reset(sb);
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "%p|", (const void *)call->args[0]));
  KILN_RETURN_IF_ERROR(append_ints(sb, &attrs->strides));
  KILN_RETURN_IF_ERROR(append_ints(sb, &attrs->padding));
  KILN_RETURN_IF_ERROR(append_ints(sb, &attrs->dilation));
  return kiln_strbuf_appendf(sb, "%s|%lld,%lld,%lld", kiln_dtype_name(weight->dtype),
                             (long long)weight->shape[1], (long long)weight->shape[2],
                             (long long)weight->shape[3]);
}

static kiln_status_t bucket_conv(combine_state_t *state, kiln_call_t *call) {
  KILN_RETURN_IF_ERROR(conv_key(&state->key, call));
  void *found = NULL;
  if (!kiln_hashmap_get(&state->buckets, kiln_strbuf_c_str(&state->key), &found)) {
    KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(state->arena, sizeof(combine_group_t),
                                                    _Alignof(combine_group_t), &found));
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&state->buckets, kiln_strbuf_c_str(&state->key), found));
  }
  combine_group_t *group = found;
  for (int i = 0; i < group->count; ++i) {
    if (group->members[i] == call) {
      return KILN_OK; /* a node shared by two walks */
    }
  }
  if (group->count < COMBINE_MAX_BRANCHES) {
    group->members[group->count++] = call;
  }
  return KILN_OK;
}

static kiln_status_t find_groups(kiln_module_t *module, combine_state_t *state,
                                 int64_t min_branches) {
  for (int f = 0; f < kiln_module_function_count(module); ++f) {
    kiln_ir_order_t order;
    KILN_RETURN_IF_ERROR(kiln_ir_order_compute(kiln_module_function_at(module, f),
                                               kiln_module_allocator(module), &order));
    kiln_status_t status = KILN_OK;
    for (size_t i = 0; i < kiln_ir_order_count(&order) && !status; ++i) {
      kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
      if (call && combinable(call)) {
        status = bucket_conv(state, call);
      }
    }
    kiln_ir_order_deinitialize(&order);
    KILN_RETURN_IF_ERROR(status);
  }
  kiln_hashmap_iterator_t it;
  kiln_hashmap_iterator_initialize(&it, &state->buckets);
  const void *key = NULL;
  void *value = NULL;
  while (kiln_hashmap_iterator_next(&it, &key, &value)) {
    combine_group_t *group = value;
    for (int i = 0; group->count >= min_branches && i < group->count; ++i) {
      KILN_RETURN_IF_ERROR(kiln_hashmap_put(&state->member_of, group->members[i], group));
    }
  }
  return KILN_OK;
}

/* The conv over all members' weights, from the rewritten data and weights. */
static kiln_status_t build_combined(kiln_pass_rewriter_t *rewriter, combine_group_t *group,
                                    kiln_expr_t *data) {
  kiln_module_t *module = rewriter->module;
  kiln_expr_t *weights[COMBINE_MAX_BRANCHES];
  int64_t channels = 0;
  for (int i = 0; i < group->count; ++i) {
    KILN_RETURN_IF_ERROR(
        kiln_expr_mutator_mutate(&rewriter->mutator, group->members[i]->args[1], &weights[i]));
    KILN_RETURN_IF_ERROR(kiln_pass_type_node(module, weights[i]));
    channels += kiln_pass_tensor_type(weights[i])->shape[0];
  }
  kiln_expr_t *weight = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_make_call_folded(module, &kiln_op_concatenate, group->count,
                                                  weights, NULL, &weight));
  kiln_nn_conv2d_attrs_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(kiln_module_arena(module), sizeof(*attrs),
                                           _Alignof(kiln_nn_conv2d_attrs_t), (void **)&attrs));
  memcpy(attrs, group->members[0]->attrs, sizeof(*attrs));
  attrs->channels = channels;
  kiln_expr_t *args[] = {data, weight};
  return kiln_pass_make_call_attrs(module, &kiln_op_conv2d, 2, args, attrs, &group->combined);
}

static kiln_status_t member_slice(kiln_module_t *module, const combine_group_t *group,
                                  const kiln_call_t *member, kiln_expr_t **out_expr) {
  int64_t begin = 0;
  for (int i = 0; i < group->count && group->members[i] != member; ++i) {
    begin += kiln_pass_tensor_type(group->members[i]->args[1])->shape[0];
  }
  int64_t end = begin + kiln_pass_tensor_type(member->args[1])->shape[0];
  char begin_text[32], end_text[32];
  snprintf(begin_text, sizeof(begin_text), "[%lld]", (long long)begin);
  snprintf(end_text, sizeof(end_text), "[%lld]", (long long)end);
  const char *const settings[] = {"begin", begin_text, "end", end_text, "axes", "[1]", NULL};
  kiln_expr_t *combined = group->combined;
  return kiln_pass_make_call(module, &kiln_op_strided_slice, 1, &combined, settings, out_expr);
}

static kiln_status_t combine_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                  kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  combine_state_t *state = rewriter->state;
  void *found = NULL;
  if (!kiln_hashmap_get(&state->member_of, rewriter->original, &found)) {
    return KILN_OK;
  }
  combine_group_t *group = found;
  if (!group->combined) {
    KILN_RETURN_IF_ERROR(build_combined(rewriter, group, call->args[0]));
  }
  rewriter->rewrites++;
  return member_slice(rewriter->module, group, kiln_expr_as_call(rewriter->original), out_expr);
}

static kiln_status_t combine_parallel_conv2d_run(kiln_module_t *module,
                                                 kiln_pass_context_t *context) {
  int64_t min_branches = 0;
  KILN_RETURN_IF_ERROR(kiln_pass_context_option_int(context, "combine_parallel_conv2d.min_branches",
                                                    3, &min_branches));
  if (min_branches < 2) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "option combine_parallel_conv2d.min_branches = %lld: at least 2 convs make "
                       "a group",
                       (long long)min_branches);
  }
  kiln_allocator_t allocator = kiln_module_allocator(module);
  combine_state_t state;
  kiln_hashmap_initialize(&state.buckets, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_hashmap_initialize(&state.member_of, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_strbuf_initialize(&state.key, allocator);
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, allocator, 0);
  state.arena = &arena;
  kiln_status_t status = find_groups(module, &state, min_branches);
  if (!status && kiln_hashmap_count(&state.member_of) > 0) {
    status = kiln_pass_rewrite_module(module, context, combine_call, &state, NULL);
  }
  kiln_arena_deinitialize(&arena);
  kiln_strbuf_deinitialize(&state.key);
  kiln_hashmap_deinitialize(&state.member_of);
  kiln_hashmap_deinitialize(&state.buckets);
  return status;
}

static const char *const combine_parallel_conv2d_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_combine_parallel_conv2d = {
    .info = {.name = "combine_parallel_conv2d",
             .opt_level = 4,
             .required = combine_parallel_conv2d_required},
    .run = combine_parallel_conv2d_run,
};
