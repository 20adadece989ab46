/*
 * matmul_to_dense: a matrix product with a constant right operand becomes
 * nn.dense (TVM's ONNX frontend does this at import; here it is a pass, so
 * it also catches products whose weight only became constant by folding).
 *
 * nn.matmul(a, w) where w is a Constant float32 matrix (K, N) and a has any
 * rank becomes nn.dense(a, transpose(w)) with the transpose evaluated at
 * compile time: dense reads data (..., K) as it is, so a (batch..., M, K)
 * left operand needs no reshape and the output (batch..., M, N) is the
 * matmul's. Then fold_scale_axis can fold a per-column scale into the
 * weight, and pack_dense gives the weight its blocked layout. The match is
 * by the operator and the operand being a Constant, nothing else: no
 * exporter's node names or order. A right operand with batch dims (even
 * of 1) and a computed one (attention's Q.K^T) stay matmuls.
 */
#include "op/nn_common.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

static bool constant_matrix(const kiln_expr_t *expr) {
  const kiln_tensor_type_t *type = kiln_pass_tensor_type(expr);
  return expr->kind == KILN_EXPR_KIND_CONSTANT && type && type->ndim == 2 &&
         type->dtype == KILN_DTYPE_FLOAT32;
}

static kiln_status_t matmul_to_dense_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                          kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_matmul || !constant_matrix(call->args[1]) ||
      !kiln_pass_tensor_type(call->args[0])) {
    return KILN_OK;
  }
  const char *const axes[] = {"axes", "[1, 0]", NULL};
  kiln_expr_t *weight = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_make_call_folded(rewriter->module, &kiln_op_transpose, 1,
                                                  &call->args[1], axes, &weight));
  kiln_expr_t *args[] = {call->args[0], weight};
  rewriter->rewrites++;
  return kiln_pass_make_call(rewriter->module, &kiln_op_dense, 2, args, NULL, out_expr);
}

static kiln_status_t matmul_to_dense_run(kiln_module_t *module, kiln_pass_context_t *context) {
  return kiln_pass_rewrite_module(module, context, matmul_to_dense_call, NULL, NULL);
}

static const char *const matmul_to_dense_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_matmul_to_dense = {
    .info = {.name = "matmul_to_dense", .opt_level = 3, .required = matmul_to_dense_required},
    .run = matmul_to_dense_run,
};
