/*
 * pack_dense: nn.dense with a constant weight becomes nn.contrib_dense_pack,
 * its weight re-laid out once at compile time in column blocks (TVM's
 * dense_pack alter-layout rule for x86).
 *
 * The weight (N, K) becomes (ceil(N / b), K, b): each block of b output
 * columns is one contiguous panel over K, which the GEMM schedule
 * (src/op/schedule_x86_dense.c) streams through its register tile, one
 * cache line after the next, where the unpacked weight would be read with
 * a stride of K per column. b is the schedule's own tile width for N
 * (kiln_schedule_gemm_x86_config for the pass context's target: two vectors, one,
 * or N itself), or the option "pack_dense.block" when set, or the block a
 * tuning record gives the product (template dense_pack, found through the
 * target's find_layout by the product's workload text: docs/tuning.md,
 * "Graph-level knobs"). The packing
 * is nn.pad (zero columns up to a whole number of blocks), reshape and
 * transpose, each evaluated on the spot by its reference kernel; units
 * keeps N, so padded columns are never read. A dense whose weight is
 * computed at run time is left alone.
 */
#include <stdio.h>

#include "op/compute.h"
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"
#include "pass/passes.h"
#include "pass/rewrite.h"

#define KILN_PACK_DENSE_MAX_BLOCK 1024

typedef struct packer_t {
  int64_t block; /* 0: the schedule's rule */
  const kiln_schedule_target_t *target;
} packer_t;

/* The tuned block for the product, when the target's records have one of
 * its space; else `rule`. */
static int64_t tuned_block(const kiln_schedule_target_t *target, int64_t m, int64_t n, int64_t k,
                           int64_t rule) {
  if (!target || !target->find_layout || m <= 0) {
    return rule;
  }
  char workload[KILN_SCHEDULE_WORKLOAD_CHARS];
  kiln_schedule_dense_pack_workload(m, n, k, workload);
  kiln_schedule_space_t space;
  kiln_schedule_dense_pack_space(target, n, rule, &space);
  const kiln_schedule_config_t *config =
      target->find_layout(target->layout_records, workload, &space);
  bool valid = config && config->template_id == KILN_SCHEDULE_TEMPLATE_DENSE_PACK &&
               config->values[0] >= 1 && config->values[0] <= KILN_PACK_DENSE_MAX_BLOCK;
  return valid ? config->values[0] : rule;
}

/* The block for a product of m rows (data's leading dims) by n by k: the
 * option's, a tuning record's, or the schedule's rule. */
static int64_t pack_block(const packer_t *p, const kiln_tensor_type_t *data, int64_t n, int64_t k) {
  if (p->block > 0) {
    return p->block;
  }
  int64_t m = 1;
  bool known = true; /* no symbolic dim */
  for (int d = 0; d + 1 < data->ndim; ++d) {
    m *= data->shape[d];
    known &= data->shape[d] >= 0;
  }
  int64_t rule = kiln_schedule_gemm_x86_config(p->target, m, n, k).tile_cols;
  return tuned_block(p->target, known ? m : 0, n, k, rule);
}

/* weight (N, K) -> (ceil(N / b), K, b), evaluated now. */
static kiln_status_t pack_weight(kiln_module_t *module, kiln_expr_t *weight, int64_t n, int64_t k,
                                 int64_t b, kiln_expr_t **out_expr) {
  int64_t blocks = (n + b - 1) / b;
  char pad[96], shape[96];
  snprintf(pad, sizeof(pad), "[0, %lld, 0, 0]", (long long)(blocks * b - n));
  snprintf(shape, sizeof(shape), "[%lld, %lld, %lld]", (long long)blocks, (long long)b,
           (long long)k);
  const char *const pad_settings[] = {"pad_width", pad, NULL};
  const char *const reshape_settings[] = {"newshape", shape, NULL};
  const char *const transpose_settings[] = {"axes", "[0, 2, 1]", NULL};
  kiln_expr_t *padded = weight, *blocked = NULL;
  if (blocks * b != n) {
    KILN_RETURN_IF_ERROR(
        kiln_pass_make_call_folded(module, &kiln_op_pad, 1, &weight, pad_settings, &padded));
  }
  KILN_RETURN_IF_ERROR(
      kiln_pass_make_call_folded(module, &kiln_op_reshape, 1, &padded, reshape_settings, &blocked));
  return kiln_pass_make_call_folded(module, &kiln_op_transpose, 1, &blocked, transpose_settings,
                                    out_expr);
}

static kiln_status_t pack_dense_call(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                     kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  if (call->op != &kiln_op_dense) {
    return KILN_OK;
  }
  const kiln_tensor_type_t *weight = kiln_pass_tensor_type(call->args[1]);
  const kiln_tensor_type_t *data = kiln_pass_tensor_type(call->args[0]);
  if (call->args[1]->kind != KILN_EXPR_KIND_CONSTANT || !weight ||
      weight->dtype != KILN_DTYPE_FLOAT32 || !data) {
    return KILN_OK;
  }
  int64_t n = weight->shape[0], k = weight->shape[1];
  kiln_expr_t *packed = NULL;
  KILN_RETURN_IF_ERROR(pack_weight(rewriter->module, call->args[1], n, k,
                                   pack_block(rewriter->state, data, n, k), &packed));
  if (packed->kind != KILN_EXPR_KIND_CONSTANT) {
    return KILN_OK; /* not evaluated here: keep the dense */
  }
  char units[24];
  snprintf(units, sizeof(units), "%lld", (long long)n);
  const char *const settings[] = {"units", units, NULL};
  kiln_expr_t *args[] = {call->args[0], packed};
  rewriter->rewrites++;
  return kiln_pass_make_call(rewriter->module, &kiln_op_dense_pack, 2, args, settings, out_expr);
}

static kiln_status_t pack_dense_run(kiln_module_t *module, kiln_pass_context_t *context) {
  packer_t packer = {.target = kiln_pass_context_target(context)};
  KILN_RETURN_IF_ERROR(kiln_pass_context_option_int(context, "pack_dense.block", 0, &packer.block));
  if (packer.block < 0 || packer.block > KILN_PACK_DENSE_MAX_BLOCK) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "option pack_dense.block must be in [1, 1024] (0: the schedule's rule), got "
                       "%lld",
                       (long long)packer.block);
  }
  return kiln_pass_rewrite_module(module, context, pack_dense_call, &packer, NULL);
}

static const char *const pack_dense_required[] = {"infer_type", NULL};

const kiln_pass_t kiln_pass_pack_dense = {
    .info = {.name = "pack_dense", .opt_level = 3, .required = pack_dense_required},
    .run = pack_dense_run,
};
