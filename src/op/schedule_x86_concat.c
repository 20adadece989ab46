/*
 * The x86 schedule of concatenate and the injective group it anchors
 * (transform_compute.h).
 *
 * concatenate reads, at each output element, the input whose range on the
 * axis holds it: a chain of selects over every input, each read at a
 * clamped index. Under the default schedule (every axis fused, then split
 * by the lanes) the conditions and the indices are per lane, so each input
 * costs a gather per vector. Here the output's axes through the
 * concatenated one are fused into the parallel loop (more while they make
 * fewer than 8 tasks), the others stay loops inside it and the last is
 * vectorized (split by the lanes when longer): along a channel axis that is
 * not the last (NCHW, or the chunks of NCHW{b}c), the conditions are then
 * the same for the whole inner nest, unswitch_select (loop-ir.md) gives
 * each input its own copy of the nest, and each copy reads its input with
 * contiguous vector loads. Along the last axis, all the others are fused.
 * The stages before the output (the epilogue of a fused group) are
 * inlined; a group with a reduction or an extern stage (gather_nd's index
 * check) gets the default schedule.
 */
#include "op/compute.h"
#include "op/schedule_x86.h"
#include "op/transform_attrs.h"
#include "op/transform_compute.h"

/* The fewest parallel tasks the concatenation's parallel loop makes when
 * the axes through the concatenated one give fewer. */
#define KILN_SCHEDULE_CONCAT_MIN_TASKS 8

/* How many leading axes the parallel loop fuses: through the concatenated
 * axis when it is not the last (the selects over the inputs are then the
 * same across the inner loops, and unswitch_select gives each input its
 * own copy of them), and further while they make fewer than
 * KILN_SCHEDULE_CONCAT_MIN_TASKS tasks; all but the last otherwise. */
static int parallel_axes(const kiln_te_tensor_t *out, int64_t axis) {
  if (axis < 0 || axis >= out->ndim - 1) {
    return out->ndim - 1;
  }
  int count = (int)axis + 1;
  int64_t tasks = 1;
  for (int d = 0; d < count; ++d) {
    tasks *= out->shape[d];
  }
  while (count < out->ndim - 1 && tasks < KILN_SCHEDULE_CONCAT_MIN_TASKS) {
    tasks *= out->shape[count++];
  }
  return count;
}

kiln_status_t kiln_schedule_concatenate_x86(const kiln_schedule_target_t *target,
                                            const kiln_compute_args_t *args,
                                            const kiln_compute_result_t *result,
                                            kiln_te_schedule_t *schedule) {
  (void)result;
  if (schedule->num_outputs != 1 || schedule->outputs[0]->ndim < 2) {
    return kiln_schedule_default(target, schedule);
  }
  const kiln_te_tensor_t *out = schedule->outputs[0];
  kiln_te_stage_t *stage = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, out, &stage));
  for (int i = 0; i < schedule->num_stages; ++i) {
    kiln_te_stage_t *st = schedule->stages[i];
    if (st != stage &&
        (st->op->reducer != KILN_TE_REDUCE_NONE || st->op->kind == KILN_TE_OP_EXTERN)) {
      return kiln_schedule_default(target, schedule);
    }
    if (st != stage) {
      KILN_RETURN_IF_ERROR(kiln_te_compute_inline(st));
    }
  }
  const kiln_concatenate_attrs_t *attrs = args->attrs;
  int count = parallel_axes(out, attrs->axis < 0 ? attrs->axis + out->ndim : attrs->axis);
  const kiln_te_iter_var_t *axes[KILN_TIR_MAX_DIMS], *fused = NULL;
  for (int d = 0; d < count; ++d) {
    axes[d] = kiln_te_tensor_axis(out, d);
  }
  KILN_RETURN_IF_ERROR(kiln_schedule_x86_fuse_all(schedule, stage, count, axes, &fused));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(stage, fused));
  const kiln_te_iter_var_t *last = kiln_te_tensor_axis(out, out->ndim - 1);
  int lanes = kiln_schedule_lanes(target, out->dtype);
  if (out->shape[out->ndim - 1] <= lanes) {
    return kiln_te_vectorize(stage, last);
  }
  const kiln_te_iter_var_t *outer = NULL, *inner = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_split(schedule, stage, last, lanes, &outer, &inner));
  return kiln_te_vectorize(stage, inner);
}
