/*
 * The x86 schedule of the row operators softmax, log_softmax and
 * layer_norm along the data's last axis (nn_compute.h), whose compute
 * rules reduce each row in vector lanes (nn_line_compute.c).
 *
 * The output's leading axes (the rows) are fused into one parallel loop;
 * its last axis is split by the target's lanes and vectorized. Each row
 * reduction is its own parallel loop over the rows, with its partial
 * stage (rows..., lanes) computed within the row: the row's vectors
 * outside the lanes, which are vectorized (exp included); folding the
 * lanes is a short scalar loop. (Computing the reductions at the output's
 * row loop would keep the row in the first-level cache, but the second
 * reduction reads the first from within its partial stage, which te's
 * compute_at cannot retarget to the region buffer.) Other stages are
 * inlined. A fused group, or an operator along another axis, gets the
 * default schedule.
 */
#include <string.h>

#include "op/nn_common.h"
#include "op/nn_compute.h"
#include "op/schedule_x86.h"

bool kiln_nn_line_axis_is_last(const kiln_compute_args_t *args) {
  int64_t axis = 0;
  int ndim = args->inputs[0]->ndim;
  if (args->op->id == KILN_OP_LAYER_NORM) {
    axis = ((const kiln_nn_norm_attrs_t *)args->attrs)->axis;
  } else if (args->op->id == KILN_OP_SOFTMAX || args->op->id == KILN_OP_LOG_SOFTMAX) {
    axis = ((const kiln_nn_axis_attrs_t *)args->attrs)->axis;
  } else {
    return false;
  }
  return axis == -1 || axis == ndim - 1;
}

/* Fuses the first `count` axes of `st`'s output into one parallel loop
 * (none when count is 0). */
static kiln_status_t parallel_rows(kiln_te_schedule_t *s, kiln_te_stage_t *st, int count,
                                   const kiln_te_iter_var_t **out_rows) {
  *out_rows = NULL;
  if (count == 0) {
    return KILN_OK;
  }
  const kiln_te_iter_var_t *axes[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < count; ++d) {
    axes[d] = kiln_te_tensor_axis(st->output, d);
  }
  KILN_RETURN_IF_ERROR(kiln_schedule_x86_fuse_all(s, st, count, axes, out_rows));
  return kiln_te_parallel(st, *out_rows);
}

/* The output: its rows fused and parallel, each row vectorized. */
static kiln_status_t schedule_rows(const kiln_schedule_target_t *target, kiln_te_schedule_t *s,
                                   kiln_te_stage_t *stage) {
  const kiln_te_tensor_t *out = stage->output;
  int last = out->ndim - 1;
  const kiln_te_iter_var_t *rows = NULL;
  KILN_RETURN_IF_ERROR(parallel_rows(s, stage, last, &rows));
  const kiln_te_iter_var_t *outer = NULL, *inner = NULL;
  int lanes = kiln_schedule_lanes(target, out->dtype);
  KILN_RETURN_IF_ERROR(
      kiln_te_split(s, stage, kiln_te_tensor_axis(out, last), lanes, &outer, &inner));
  return kiln_te_vectorize(stage, inner);
}

/* The stage that reads `st`'s output, or NULL. */
static kiln_te_stage_t *consumer(const kiln_te_schedule_t *s, const kiln_te_stage_t *st) {
  for (int i = 0; i < s->num_stages; ++i) {
    const kiln_te_operation_t *op = s->stages[i]->op;
    for (int k = 0; k < op->num_inputs; ++k) {
      if (op->inputs[k] == st->output) {
        return s->stages[i];
      }
    }
  }
  return NULL;
}

/* A partial stage (its last axis the lanes): computed within its fold's
 * row, its vectors of the row outside its vectorized lanes. */
static kiln_status_t schedule_partial(kiln_te_schedule_t *s, kiln_te_stage_t *st) {
  kiln_te_stage_t *fold = consumer(s, st);
  const kiln_te_iter_var_t *rows = NULL;
  KILN_RETURN_IF_ERROR(parallel_rows(s, fold, fold->output->ndim, &rows));
  if (rows) {
    KILN_RETURN_IF_ERROR(kiln_te_compute_at(st, fold, rows));
    st->scope = KILN_TIR_SCOPE_LOCAL; /* a stack buffer per row, not a workspace */
  }
  const kiln_te_iter_var_t *lanes = kiln_te_tensor_axis(st->output, st->output->ndim - 1);
  const kiln_te_iter_var_t *order[] = {st->op->reduce_axes[0], lanes};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(st, 2, order));
  return kiln_te_vectorize(st, lanes);
}

kiln_status_t kiln_schedule_line_x86(const kiln_schedule_target_t *target,
                                     const kiln_compute_args_t *args,
                                     const kiln_compute_result_t *result,
                                     kiln_te_schedule_t *schedule) {
  const kiln_te_tensor_t *out = result->outputs[0];
  if (!kiln_nn_line_axis_is_last(args) || schedule->num_outputs != 1 ||
      schedule->outputs[0] != out || out->ndim < 1) {
    return kiln_schedule_default(target, schedule);
  }
  kiln_te_stage_t *stage = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, out, &stage));
  KILN_RETURN_IF_ERROR(schedule_rows(target, schedule, stage));
  for (int i = 0; i < schedule->num_stages; ++i) {
    kiln_te_stage_t *st = schedule->stages[i];
    if (st == stage) {
      continue;
    }
    if (st->op->reducer == KILN_TE_REDUCE_NONE) {
      KILN_RETURN_IF_ERROR(kiln_te_compute_inline(st));
      continue;
    }
    kiln_te_stage_t *reader = consumer(schedule, st);
    if (reader && reader != stage && st->output->ndim == out->ndim) {
      KILN_RETURN_IF_ERROR(schedule_partial(schedule, st));
    }
  }
  return KILN_OK;
}
