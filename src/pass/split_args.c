/*
 * split_args: a concatenate of more tensors than a kernel takes
 * (KILN_OP_MAX_FUNCTION_ARGS) becomes a tree of concatenates on the same
 * axis, each within the limit, as TVM's SplitArgs does before FuseOps:
 * DenseNet-style blocks concatenate 20 to 60 tensors, and a valid model
 * must never fail to compile because one operator call has too many
 * arguments. concatenate is the only operator whose argument count is not
 * bounded (max_inputs -1), so it is the only one this pass touches.
 *
 * The N inputs are cut, in order, into k consecutive parts of near-equal
 * size, and the parts' concatenates are concatenated. k is the smallest
 * count for which a part's inputs plus the other k - 1 parts fit one kernel,
 * so that fuse_ops (which keeps every group within the limit too) can still
 * fuse one part into the concatenate that joins them, and that one into the
 * elementwise ops after it; when no k does (N over about L * L / 4), k is
 * ceil(N / L) and the join is split again the same way. Each element is
 * then copied twice at most for N up to 72 at L = 16. opt_level 0, and
 * fuse_ops requires it, so that every build path runs it.
 */
#include <stdio.h>

#include "pass/passes.h"
#include "pass/rewrite.h"

/* The number of parts for `count` inputs (count > the limit). */
static int part_count(int count) {
  const int limit = KILN_OP_MAX_FUNCTION_ARGS;
  for (int k = 2; k <= limit; ++k) {
    if ((count + k - 1) / k + k - 1 <= limit) {
      return k;
    }
  }
  return (count + limit - 1) / limit;
}

static kiln_status_t split_concatenate(kiln_module_t *module, const kiln_call_t *call, int count,
                                       kiln_expr_t *const *args, kiln_expr_t **out_expr);

/* The concatenate of args[begin, end), split again when it is too long. */
static kiln_status_t concatenate_range(kiln_module_t *module, const kiln_call_t *call,
                                       kiln_expr_t *const *args, int begin, int end,
                                       kiln_expr_t **out_expr) {
  if (end - begin == 1) {
    *out_expr = args[begin];
    return KILN_OK;
  }
  return split_concatenate(module, call, end - begin, args + begin, out_expr);
}

static kiln_status_t split_concatenate(kiln_module_t *module, const kiln_call_t *call, int count,
                                       kiln_expr_t *const *args, kiln_expr_t **out_expr) {
  if (count <= KILN_OP_MAX_FUNCTION_ARGS) {
    return kiln_pass_make_call_attrs(module, call->op, count, args, call->attrs, out_expr);
  }
  int parts = part_count(count);
  kiln_expr_t **joined = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(kiln_module_arena(module), (size_t)parts,
                                                 sizeof(*joined), _Alignof(kiln_expr_t *),
                                                 (void **)&joined));
  for (int p = 0; p < parts; ++p) {
    int begin = (int)((int64_t)count * p / parts), end = (int)((int64_t)count * (p + 1) / parts);
    KILN_RETURN_IF_ERROR(concatenate_range(module, call, args, begin, end, &joined[p]));
  }
  return split_concatenate(module, call, parts, joined, out_expr);
}

static kiln_status_t split_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_concatenate || call->num_args <= KILN_OP_MAX_FUNCTION_ARGS) {
    return KILN_OK;
  }
  rewriter->rewrites++;
  return split_concatenate(rewriter->module, call, call->num_args, call->args, out_expr);
}

static kiln_status_t split_args_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, split_call, NULL, NULL);
}

static const char *const split_args_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_split_args = {
    .info = {.name = "split_args", .opt_level = 0, .required = split_args_required},
    .run = split_args_run,
};
