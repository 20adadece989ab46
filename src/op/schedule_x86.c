/*
 * Tuned x86 schedules (nn_conv_compute.h): TVM topi's conv2d_NCHWc
 * (topi/x86/conv2d_avx_common.py) and a blocked dense.
 *
 * conv2d_NCHWc, output (n, oc_chunk, oh, ow, oc_block):
 * - the padded data, when there is padding, is materialized in parallel
 *   over its fused (n, ic_chunk, ih) loops, as TVM does;
 * - the output is cached in a local buffer (cache_write); the output's ow
 *   is split by reg_n into (ow_chunk, ow_block), its (n, oc_chunk, oh) are
 *   fused into one parallel loop and oc_block is vectorized;
 * - the local stage is computed at ow_chunk (a register tile of reg_n
 *   columns by the oc block), its reduction ordered ic_chunk, kh, kw,
 *   ic_block, ow_block, oc_block (ic split by the input-channel block),
 *   ow_block unrolled and oc_block vectorized.
 * reg_n is KILN_SCHEDULE_NCHWC_REG_N; a width it does not divide gets the
 * guarded tail of te lowering.
 *
 * dense (any rank-2 output (M, N)): cache_write to local; the output tiled
 * by KILN_SCHEDULE_DENSE_ROWS rows and one vector of the target's lanes of
 * columns, the tile loops fused into one parallel loop, the columns
 * vectorized; the local accumulator computed at the fused loop with k
 * outside its rows (unrolled) and columns (vectorized).
 */
#include <string.h>

#include "op/compute.h"
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"

/* ---- conv2d_NCHWc ---- */

/* Whether the layouts are exactly NCHW{c}c, OIHW{i}i{o}o, NCHW{c}c. */
static bool nchwc_layouts(const kiln_nn_conv2d_attrs_t *a, int64_t *out_ic_block) {
  kiln_nn_layout_t data, kernel, out;
  if (kiln_nn_layout_parse(a->data_layout, &data) ||
      kiln_nn_layout_parse(a->kernel_layout, &kernel) ||
      kiln_nn_layout_parse(a->out_layout, &out)) {
    return false; /* validation has rejected these already */
  }
  *out_ic_block = kiln_nn_layout_factor(&kernel, 'I');
  return data.ndim == 5 && memcmp(data.axes, "NCHWc", 5) == 0 && kernel.ndim == 6 &&
         memcmp(kernel.axes, "OIHWio", 6) == 0 && out.ndim == 5 &&
         memcmp(out.axes, "NCHWc", 5) == 0;
}

/* Fuses leaves axes[0..count) (adjacent, outer first) into one. */
static kiln_status_t fuse_all(kiln_te_schedule_t *s, kiln_te_stage_t *st, int count,
                              const kiln_te_iter_var_t *const *axes,
                              const kiln_te_iter_var_t **out_fused) {
  const kiln_te_iter_var_t *fused = axes[0];
  for (int i = 1; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_te_fuse(s, st, fused, axes[i], &fused));
  }
  *out_fused = fused;
  return KILN_OK;
}

static const kiln_te_iter_var_t *axis(const kiln_te_tensor_t *t, int i) {
  return kiln_te_tensor_axis(t, i);
}

/* The padded data stage (the one that is neither the output nor its cache),
 * in parallel over (n, ic_chunk, ih). */
static kiln_status_t schedule_pad(kiln_te_schedule_t *s, const kiln_te_tensor_t *output) {
  for (int i = 0; i < s->num_stages; ++i) {
    kiln_te_stage_t *st = s->stages[i];
    if (st->output != output && st->op->reducer == KILN_TE_REDUCE_NONE) {
      const kiln_te_iter_var_t *outer[3] = {axis(st->output, 0), axis(st->output, 1),
                                            axis(st->output, 2)};
      const kiln_te_iter_var_t *fused = NULL;
      KILN_RETURN_IF_ERROR(fuse_all(s, st, 3, outer, &fused));
      KILN_RETURN_IF_ERROR(kiln_te_parallel(st, fused));
      KILN_RETURN_IF_ERROR(kiln_te_vectorize(st, axis(st->output, 4)));
    }
  }
  return KILN_OK;
}

/* The register tile: the local stage at ow_chunk of the output. */
static kiln_status_t schedule_nchwc_tile(kiln_te_schedule_t *s, kiln_te_stage_t *local,
                                         int64_t ic_block) {
  const kiln_te_tensor_t *cc = local->output;
  const kiln_te_iter_var_t *ic_chunk = NULL, *ic_inner = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_split(s, local, local->op->reduce_axes[0], ic_block, &ic_chunk, &ic_inner));
  const kiln_te_iter_var_t *order[] = {axis(cc, 0),
                                       axis(cc, 1),
                                       axis(cc, 2),
                                       ic_chunk,
                                       local->op->reduce_axes[1],
                                       local->op->reduce_axes[2],
                                       ic_inner,
                                       axis(cc, 3),
                                       axis(cc, 4)};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(local, 9, order));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, axis(cc, 3)));
  return kiln_te_vectorize(local, axis(cc, 4));
}

kiln_status_t kiln_schedule_conv2d_nchwc_x86(const kiln_schedule_target_t *target,
                                             const kiln_compute_args_t *args,
                                             const kiln_compute_result_t *result,
                                             kiln_te_schedule_t *schedule) {
  int64_t ic_block = 0;
  if (!nchwc_layouts(args->attrs, &ic_block)) {
    return kiln_schedule_default(target, schedule);
  }
  const kiln_te_tensor_t *out = result->outputs[0];
  KILN_RETURN_IF_ERROR(schedule_pad(schedule, out));
  const kiln_te_tensor_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_cache_write(schedule, out, KILN_TIR_SCOPE_LOCAL, &cache));
  kiln_te_stage_t *stage = NULL, *local = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, out, &stage));
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, cache, &local));
  const kiln_te_iter_var_t *ow_chunk = NULL, *ow_block = NULL, *fused = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_split(schedule, stage, axis(out, 3), KILN_SCHEDULE_NCHWC_REG_N,
                                     &ow_chunk, &ow_block));
  const kiln_te_iter_var_t *outer[3] = {axis(out, 0), axis(out, 1), axis(out, 2)};
  KILN_RETURN_IF_ERROR(fuse_all(schedule, stage, 3, outer, &fused));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(stage, fused));
  KILN_RETURN_IF_ERROR(kiln_te_vectorize(stage, axis(out, 4)));
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(local, stage, ow_chunk));
  return schedule_nchwc_tile(schedule, local, ic_block);
}

/* ---- dense ---- */

kiln_status_t kiln_schedule_dense_x86(const kiln_schedule_target_t *target,
                                      const kiln_compute_args_t *args,
                                      const kiln_compute_result_t *result,
                                      kiln_te_schedule_t *schedule) {
  (void)args;
  const kiln_te_tensor_t *out = result->outputs[0];
  if (out->ndim != 2) {
    return kiln_schedule_default(target, schedule);
  }
  const kiln_te_tensor_t *cache = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_cache_write(schedule, out, KILN_TIR_SCOPE_LOCAL, &cache));
  kiln_te_stage_t *stage = NULL, *local = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, out, &stage));
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, cache, &local));
  const kiln_te_iter_var_t *io = NULL, *ii = NULL, *jo = NULL, *ji = NULL, *fused = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_split(schedule, stage, axis(out, 0), KILN_SCHEDULE_DENSE_ROWS, &io, &ii));
  KILN_RETURN_IF_ERROR(kiln_te_split(schedule, stage, axis(out, 1),
                                     kiln_schedule_lanes(target, out->dtype), &jo, &ji));
  const kiln_te_iter_var_t *order[] = {io, jo, ii, ji};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(stage, 4, order));
  KILN_RETURN_IF_ERROR(kiln_te_fuse(schedule, stage, io, jo, &fused));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(stage, fused));
  KILN_RETURN_IF_ERROR(kiln_te_vectorize(stage, ji));
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(local, stage, fused));
  const kiln_te_iter_var_t *inner[] = {local->op->reduce_axes[0], axis(cache, 0), axis(cache, 1)};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(local, 3, inner));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, axis(cache, 0)));
  return kiln_te_vectorize(local, axis(cache, 1));
}
