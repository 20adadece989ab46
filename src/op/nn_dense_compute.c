/*
 * Compute rules of nn.dense, nn.matmul and nn.batch_matmul
 * (nn_conv_compute.h).
 *
 * As in the reference kernel (nn_dense.c), the three are one rule: out =
 * sum over k of A[..., m, k] * B[..., k, n], where each operator only says
 * which dims of each operand hold its batch, m (or n) and k:
 * - dense: data (..., K), weight (N, K): data's leading dims are the
 *   output's leading dims as they are (TVM's dense is x . W^T);
 * - matmul: NumPy's: a 1-D operand has no m (or n) dim, which the output
 *   then lacks; the batch dims broadcast, aligned from the right, a dim of
 *   1 read at 0;
 * - batch_matmul: x (B, M, K) or (B, K, M) with transpose_a, y (B, N, K)
 *   with transpose_b or (B, K, N); a batch of 1 broadcasts;
 * - contrib_dense_pack: dense with the weight packed in column blocks of
 *   b, read at weight[n / b, k, n % b] (the schedule's column tiles are
 *   whole blocks, so the simplifier reduces both to the tile's indices).
 * The sum is float32 (the reference's is double, rounded once); the
 * reduce axis is named rk so that it cannot be confused with the output's
 * axis k of a rank-3 result.
 */
#include <string.h>

#include "op/compute.h"
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"

/* Which dims of one operand hold what; -1 for none. */
typedef struct gemm_operand_t {
  const kiln_te_tensor_t *tensor;
  int batch_ndim; /* its leading dims, aligned to the right of the output's batch */
  int row_dim;    /* m for A, n for B */
  int k_dim;
} gemm_operand_t;

typedef struct gemm_rule_t {
  gemm_operand_t operand[2];
  int out_batch_ndim;
  int64_t pack;   /* contrib_dense_pack's column block, else 0 */
  int has_row[2]; /* the output has an m dim, an n dim */
  const kiln_te_iter_var_t *k;
} gemm_rule_t;

static void gemm_layout(const kiln_compute_args_t *args, int out_ndim, gemm_rule_t *g) {
  const kiln_te_tensor_t *a = args->inputs[0], *b = args->inputs[1];
  if (args->op->id == KILN_OP_DENSE_PACK) {
    g->operand[0] = (gemm_operand_t){a, a->ndim - 1, -1, a->ndim - 1};
    g->operand[1] = (gemm_operand_t){b, 0, 0, 1};
    g->pack = b->shape[2];
  } else if (args->op->id == KILN_OP_DENSE) {
    g->operand[0] = (gemm_operand_t){a, a->ndim - 1, -1, a->ndim - 1};
    g->operand[1] = (gemm_operand_t){b, 0, 0, 1};
  } else if (args->op->id == KILN_OP_BATCH_MATMUL) {
    const kiln_nn_batch_matmul_attrs_t *attrs = args->attrs;
    g->operand[0] = (gemm_operand_t){a, 1, attrs->transpose_a ? 2 : 1, attrs->transpose_a ? 1 : 2};
    g->operand[1] = (gemm_operand_t){b, 1, attrs->transpose_b ? 1 : 2, attrs->transpose_b ? 2 : 1};
  } else if (a->ndim >= 2) {
    g->operand[0] = (gemm_operand_t){a, a->ndim - 2, a->ndim - 2, a->ndim - 1};
  } else {
    g->operand[0] = (gemm_operand_t){a, 0, -1, 0};
  }
  if (args->op->id == KILN_OP_MATMUL) {
    g->operand[1] = b->ndim >= 2 ? (gemm_operand_t){b, b->ndim - 2, b->ndim - 1, b->ndim - 2}
                                 : (gemm_operand_t){b, 0, -1, 0};
  }
  for (int i = 0; i < 2; ++i) {
    g->has_row[i] = g->operand[i].row_dim >= 0;
  }
  g->out_batch_ndim = out_ndim - g->has_row[0] - g->has_row[1];
}

/* The packed weight's element (k, n): weight[n / b, k, n % b]. */
static const kiln_tir_expr_t *gemm_read_packed(kiln_tir_builder_t *b, const gemm_rule_t *g,
                                               const kiln_tir_expr_t *n) {
  const kiln_tir_expr_t *block = kiln_tir_b_i32(b, g->pack);
  const kiln_tir_expr_t *at[3] = {kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, n, block),
                                  kiln_tir_b_v(g->k->var),
                                  kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, n, block)};
  return kiln_te_read(b, g->operand[1].tensor, 3, at);
}

/* The load of one operand at output indices `indices` and k. */
static const kiln_tir_expr_t *gemm_read(kiln_tir_builder_t *b, const gemm_rule_t *g, int which,
                                        const kiln_tir_expr_t *const *indices) {
  const gemm_operand_t *p = &g->operand[which];
  if (which == 1 && g->pack) {
    return gemm_read_packed(b, g, indices[g->out_batch_ndim + g->has_row[0]]);
  }
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  int offset = g->out_batch_ndim - p->batch_ndim;
  for (int d = 0; d < p->batch_ndim; ++d) {
    at[d] = p->tensor->shape[d] == 1 ? kiln_tir_b_i32(b, 0) : indices[d + offset];
  }
  if (p->row_dim >= 0) {
    at[p->row_dim] = indices[g->out_batch_ndim + (which == 0 ? 0 : g->has_row[0])];
  }
  at[p->k_dim] = kiln_tir_b_v(g->k->var);
  return kiln_te_read(b, p->tensor, p->tensor->ndim, at);
}

static const kiln_tir_expr_t *gemm_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const gemm_rule_t *g = user;
  return kiln_tir_b_mul(b, gemm_read(b, g, 0, indices), gemm_read(b, g, 1, indices));
}

kiln_status_t kiln_compute_gemm(const kiln_compute_args_t *args,
                                kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  gemm_rule_t g;
  memset(&g, 0, sizeof(g));
  gemm_layout(args, type->ndim, &g);
  const gemm_operand_t *a = &g.operand[0];
  KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(args->arena, "rk", 0, a->tensor->shape[a->k_dim], &g.k));
  char name[64];
  out_result->num_outputs = 1;
  return kiln_te_compute_reduce(args->arena, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                                type->ndim, type->shape, KILN_TE_REDUCE_SUM, NULL, 1, &g.k, 2,
                                args->inputs, gemm_body, &g, &out_result->outputs[0]);
}
