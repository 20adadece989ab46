/*
 * fold_constant: every operator call whose arguments are all Constants is
 * evaluated at compile time with the operator's reference kernel and
 * replaced by a Constant (Relay's FoldConstant; NNVM's precompute prune
 * is this pass run after kiln_ir_bind_params turned the weights
 * into Constants: every subgraph that depends on weights alone is computed
 * once here and leaves the graph).
 *
 * The rewriter visits children first, so a chain of constant calls folds
 * from the leaves up in one walk, and TupleGetItem of a Tuple (what a
 * folded split leaves) is forwarded to the field. A call is not folded when
 * its result would be larger than both the option "fold_constant.max_bytes"
 * (default 1 MiB) and the sum of its inputs: a broadcast_to or tile of a
 * tiny tensor stays a cheap computation instead of a huge constant, while
 * the weight-sized results of folding scales into weights always fold. A
 * kernel that does not support the dtypes (UNIMPLEMENTED) leaves the call
 * alone; any other kernel error is the graph's and is returned.
 */
#include "pass/passes.h"
#include "pass/rewrite.h"

#define FOLD_CONSTANT_DEFAULT_MAX_BYTES (1 << 20)

typedef struct fold_state_t {
  int64_t max_bytes;
} fold_state_t;

static size_t type_bytes(const kiln_type_t *type) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  if (tensor) {
    size_t bytes = 0;
    kiln_status_t status = kiln_shape_byte_size(tensor->dtype, tensor->ndim, tensor->shape, &bytes);
    if (status) {
      kiln_status_free(status);
      return SIZE_MAX;
    }
    return bytes;
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  size_t total = 0;
  for (int i = 0; tuple && i < tuple->count; ++i) {
    size_t field = type_bytes(tuple->fields[i]);
    total = field > SIZE_MAX - total ? SIZE_MAX : total + field;
  }
  return total;
}

static bool too_large(const fold_state_t *state, const kiln_call_t *call) {
  size_t output = type_bytes(call->base.checked_type);
  if (output <= (size_t)state->max_bytes) {
    return false;
  }
  size_t inputs = 0;
  for (int i = 0; i < call->num_args; ++i) {
    inputs += kiln_tensor_byte_size(kiln_expr_as_constant(call->args[i])->value);
  }
  return output > inputs;
}

static kiln_status_t fold_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                               kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (!kiln_pass_args_constant(call) || too_large(rewriter->state, call)) {
    return KILN_OK;
  }
  kiln_expr_t *folded = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_evaluate_call(rewriter->module, call, &folded));
  if (folded) {
    *out_expr = folded;
    rewriter->rewrites++;
  }
  return KILN_OK;
}

static kiln_status_t fold_constant_run(kiln_module_t *module, kiln_pass_context_t *context) {
  fold_state_t state;
  KILN_RETURN_IF_ERROR(kiln_pass_context_option_int(
      context, "fold_constant.max_bytes", FOLD_CONSTANT_DEFAULT_MAX_BYTES, &state.max_bytes));
  if (state.max_bytes < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "option fold_constant.max_bytes = %lld is negative",
                       (long long)state.max_bytes);
  }
  kiln_pass_rewriter_t rewriter = {.call_rule = fold_call, .state = &state, .forward_items = true};
  return kiln_pass_rewrite_module_with(module, context, &rewriter);
}

static const char *const fold_constant_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_fold_constant = {
    .info = {.name = "fold_constant", .opt_level = 2, .required = fold_constant_required},
    .run = fold_constant_run,
};
