/*
 * eliminate_common_subexpr: two calls of the same operator with the same
 * attributes and the same arguments become one node (Relay's
 * EliminateCommonSubexpr).
 *
 * The rewriter visits children first, so when a call is reached its
 * arguments are already their canonical representatives, and equality of
 * arguments is pointer equality. A call's key is its operator's name, its
 * attributes as kiln_op_attrs_format prints them (every field, in order) and
 * its arguments' addresses; the first call with a key is the
 * representative, later ones are replaced by it. Constants count as equal
 * by content when they are small (at most 1 KiB): two Constant nodes holding
 * the same scalar (say, the epsilon of two batch norms) are merged first,
 * so calls over them merge too; large constants (weights) are compared by
 * identity only, as hashing megabytes to find equal weights is rarely worth
 * it. Function calls (fused groups) are not merged.
 */
#include <string.h>

#include "pass/passes.h"
#include "pass/rewrite.h"

#define CSE_MAX_CONSTANT_BYTES 1024

typedef struct cse_state_t {
  kiln_hashmap_t seen; /* key text -> representative kiln_expr_t * */
  kiln_strbuf_t key;
} cse_state_t;

static kiln_status_t constant_key(kiln_strbuf_t *key, const kiln_tensor_t *tensor) {
  KILN_RETURN_IF_ERROR(
      kiln_strbuf_appendf(key, "const %s (", kiln_dtype_name(kiln_tensor_dtype(tensor))));
  for (int d = 0; d < kiln_tensor_ndim(tensor); ++d) {
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(key, "%lld,", (long long)kiln_tensor_shape(tensor)[d]));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(key, ") "));
  const unsigned char *bytes = kiln_tensor_data(tensor);
  for (size_t i = 0; i < kiln_tensor_byte_size(tensor); ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(key, "%02x", bytes[i]));
  }
  return KILN_OK;
}

/* The representative of `key` (kept in state->key), or `expr` itself when
 * the key is new. */
static kiln_status_t representative(cse_state_t *state, kiln_expr_t *expr, kiln_expr_t **out_expr) {
  void *found = NULL;
  if (kiln_hashmap_get(&state->seen, kiln_strbuf_c_str(&state->key), &found)) {
    *out_expr = found;
    return KILN_OK;
  }
  *out_expr = expr;
  return kiln_hashmap_put(&state->seen, kiln_strbuf_c_str(&state->key), expr);
}

/* Small Constant arguments replaced by their representatives; *out_changed
 * when one was. */
static kiln_status_t merge_constants(cse_state_t *state, kiln_call_t *call, kiln_expr_t **args,
                                     bool *out_changed) {
  *out_changed = false;
  for (int i = 0; i < call->num_args; ++i) {
    args[i] = call->args[i];
    const kiln_constant_t *constant = kiln_expr_as_constant(args[i]);
    if (!constant || kiln_tensor_byte_size(constant->value) > CSE_MAX_CONSTANT_BYTES) {
      continue;
    }
    kiln_strbuf_reset(&state->key);
    KILN_RETURN_IF_ERROR(constant_key(&state->key, constant->value));
    KILN_RETURN_IF_ERROR(representative(state, args[i], &args[i]));
    *out_changed |= args[i] != call->args[i];
  }
  return KILN_OK;
}

static kiln_status_t call_key(kiln_strbuf_t *key, const kiln_call_t *call) {
  kiln_strbuf_reset(key);
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(key, "%s(", call->op->name));
  for (int i = 0; i < call->num_args; ++i) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(key, "%p,", (const void *)call->args[i]));
  }
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(key, ") "));
  return call->attrs ? kiln_op_attrs_format(call->op, call->attrs, key) : KILN_OK;
}

static kiln_status_t cse_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                              kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (!call->op) {
    return KILN_OK;
  }
  cse_state_t *state = rewriter->state;
  kiln_expr_t *stack_args[16];
  kiln_expr_t **args = stack_args;
  if (call->num_args > 16) {
    KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(kiln_module_arena(rewriter->module),
                                                   (size_t)call->num_args, sizeof(*args),
                                                   _Alignof(kiln_expr_t *), (void **)&args));
  }
  bool changed = false;
  KILN_RETURN_IF_ERROR(merge_constants(state, call, args, &changed));
  if (changed) {
    KILN_RETURN_IF_ERROR(kiln_pass_make_call_attrs(rewriter->module, call->op, call->num_args, args,
                                                   call->attrs, out_expr));
    call = kiln_expr_as_call(*out_expr);
  }
  KILN_RETURN_IF_ERROR(call_key(&state->key, call));
  KILN_RETURN_IF_ERROR(representative(state, &call->base, out_expr));
  rewriter->rewrites += *out_expr != &call->base;
  return KILN_OK;
}

static kiln_status_t eliminate_common_subexpr_run(kiln_module_t *module,
                                                  kiln_pass_context_t *context) {
  kiln_allocator_t allocator = kiln_module_allocator(module);
  cse_state_t state;
  kiln_hashmap_initialize(&state.seen, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_strbuf_initialize(&state.key, allocator);
  kiln_status_t status = kiln_pass_rewrite_module(module, context, cse_call, &state, NULL);
  kiln_strbuf_deinitialize(&state.key);
  kiln_hashmap_deinitialize(&state.seen);
  return status;
}

static const char *const eliminate_common_subexpr_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_eliminate_common_subexpr = {
    .info = {.name = "eliminate_common_subexpr",
             .opt_level = 3,
             .required = eliminate_common_subexpr_required},
    .run = eliminate_common_subexpr_run,
};
