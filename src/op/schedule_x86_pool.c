/*
 * The x86 schedule of pooling: nn.max_pool2d, nn.avg_pool2d,
 * nn.global_avg_pool2d and nn.global_max_pool2d (nn_pool_compute.c), after
 * TVM's topi/x86/pooling.py (schedule_pool: the output's outer loops fused
 * and parallel, the innermost vectorized, the pool computed inside).
 *
 * The compute rule makes one or two window reductions (max: T_*_max and
 * T_*_nan; avg: T_*_sum) and an output stage that reads them. Here the
 * output (or, in a fused group, the last elementwise stage of the pool's
 * shape, with the pool's output and the epilogue inlined into it, as the
 * conv2d_NCHWc schedule does) gets the loops, and the reductions become
 * local accumulators computed inside them:
 * - the axes before W (n, c_chunk, oh in NCHW{c}c; n, oh in NHWC; n, c, oh
 *   in NCHW) are fused into one parallel loop;
 * - channel-innermost layouts (NCHW{c}c, NHWC): the innermost axis is
 *   vectorized (the channel block is one vector on AVX-512 with the
 *   default block 16) and ow is split into register tiles of ow when it is
 *   at most KILN_SCHEDULE_POOL_REG_N, else of the widest divisor of ow
 *   from that down to half of it (else that many with a guarded tail);
 *   the accumulators are computed at the tile, its columns unrolled inside
 *   the window loops, so the cells that neighbouring windows share are
 *   loaded once;
 * - NCHW: ow is split as the tiles are, by the target's vector lanes in
 *   place of KILN_SCHEDULE_POOL_REG_N (ow 27 by 9, 55 by 11, 13 whole), the
 *   inner part vectorized, and the accumulators are computed at the outer
 *   part over that many columns (a stride-2 window reads strided vectors,
 *   which the LLVM backend loads as one span and a shuffle);
 * - each accumulator reduces rh and rw outside its vectorized axis, both
 *   unrolled when the window has at most KILN_SCHEDULE_POOL_UNROLL_CELLS
 *   cells (3x3 and smaller windows; a global pool keeps its loops).
 * The padding is folded into the reads as the rule builds them (a select
 * on the row and column bounds, no padded copy). A group whose output has
 * another shape, or with reductions of other operators, gets the default
 * schedule.
 */
#include <string.h>

#include "op/nn_common.h"
#include "op/nn_compute.h"
#include "op/schedule_x86.h"

/* Storage position of the W axis in a layout of rank `ndim`, or -1 (the
 * layout was validated with the attributes; -1 only guards). */
static int pool_w_position(const kiln_compute_args_t *args, int ndim) {
  kiln_layout_t layout;
  kiln_status_t status =
      kiln_layout_parse(kiln_nn_pool_layout_text(args->op, args->attrs), &layout);
  if (status || layout.ndim != ndim) {
    kiln_status_free(status);
    return -1;
  }
  return kiln_layout_axis_index(&layout, 'W');
}

/* Whether `tensor` is one of `anchor`'s inputs (the pool's reductions). */
static bool pool_reads(const kiln_te_tensor_t *anchor, const kiln_te_tensor_t *tensor) {
  for (int i = 0; i < anchor->op->num_inputs; ++i) {
    if (anchor->op->inputs[i] == tensor) {
      return true;
    }
  }
  return false;
}

/* Whether every reduction of the group is one of the pool's own. */
static bool pool_only_reductions(const kiln_te_schedule_t *s, const kiln_te_tensor_t *anchor) {
  for (int i = 0; i < s->num_stages; ++i) {
    const kiln_te_stage_t *st = s->stages[i];
    if (st->op->reducer != KILN_TE_REDUCE_NONE && !pool_reads(anchor, st->output)) {
      return false;
    }
    if (st->op->kind != KILN_TE_OP_COMPUTE) {
      return false;
    }
  }
  return true;
}

/* Fuses the leaves before position `count` (the axes outside W) into one
 * parallel loop. */
static kiln_status_t pool_parallel_outer(kiln_te_schedule_t *s, kiln_te_stage_t *st, int count) {
  const kiln_te_iter_var_t *fused = kiln_te_tensor_axis(st->output, 0);
  for (int i = 1; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_te_fuse(s, st, fused, kiln_te_tensor_axis(st->output, i), &fused));
  }
  return count > 0 ? kiln_te_parallel(st, fused) : KILN_OK;
}

/* The accumulator's loop order: its other axes, the window, then the
 * unrolled register-tile axis `tile_axis` (-1: none) and the vectorized
 * `vector_axis`, innermost. */
static kiln_status_t pool_accumulator_order(kiln_te_stage_t *red, int tile_axis, int vector_axis) {
  const kiln_te_iter_var_t *order[KILN_TE_MAX_ITER_VARS];
  int n = 0;
  for (int i = 0; i < red->output->ndim; ++i) {
    if (i != vector_axis && i != tile_axis) {
      order[n++] = kiln_te_tensor_axis(red->output, i);
    }
  }
  order[n++] = red->op->reduce_axes[0];
  order[n++] = red->op->reduce_axes[1];
  if (tile_axis >= 0) {
    order[n++] = kiln_te_tensor_axis(red->output, tile_axis);
  }
  order[n++] = kiln_te_tensor_axis(red->output, vector_axis);
  return kiln_te_reorder(red, n, order);
}

/* One accumulator: local, computed at `at` of the output stage, its window
 * loops outside the tile and vector axes, unrolled for a small window. */
static kiln_status_t pool_accumulator(kiln_te_stage_t *red, const kiln_te_stage_t *out,
                                      const kiln_te_iter_var_t *at, int tile_axis,
                                      int vector_axis) {
  red->scope = KILN_TIR_SCOPE_LOCAL;
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(red, out, at));
  KILN_RETURN_IF_ERROR(pool_accumulator_order(red, tile_axis, vector_axis));
  const kiln_te_iter_var_t *const *r = red->op->reduce_axes;
  if (r[0]->extent * r[1]->extent <= KILN_SCHEDULE_POOL_UNROLL_CELLS) {
    KILN_RETURN_IF_ERROR(kiln_te_unroll(red, r[0]));
    KILN_RETURN_IF_ERROR(kiln_te_unroll(red, r[1]));
  }
  if (tile_axis >= 0) {
    KILN_RETURN_IF_ERROR(kiln_te_unroll(red, kiln_te_tensor_axis(red->output, tile_axis)));
  }
  return kiln_te_vectorize(red, kiln_te_tensor_axis(red->output, vector_axis));
}

/* The output's loops: outer axes parallel, ow split into register tiles
 * (channels innermost) or vectors (NCHW); `out_at` is the leaf the
 * accumulators are computed at. */
static kiln_status_t pool_output_loops(const kiln_schedule_target_t *target, kiln_te_schedule_t *s,
                                       kiln_te_stage_t *out, int w,
                                       const kiln_te_iter_var_t **out_at) {
  const kiln_te_tensor_t *t = out->output;
  bool blocked = w + 1 < t->ndim;
  int64_t widest = blocked ? KILN_SCHEDULE_POOL_REG_N : kiln_schedule_lanes(target, t->dtype);
  int64_t factor = kiln_schedule_x86_split_width(t->shape[w], widest);
  const kiln_te_iter_var_t *inner = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_split(s, out, kiln_te_tensor_axis(t, w), factor, out_at, &inner));
  KILN_RETURN_IF_ERROR(pool_parallel_outer(s, out, w));
  return kiln_te_vectorize(out, blocked ? kiln_te_tensor_axis(t, t->ndim - 1) : inner);
}

/* The pool's reductions computed at `at`; every other stage but `final`
 * inlined. */
static kiln_status_t pool_stages(kiln_te_schedule_t *s, const kiln_te_tensor_t *final,
                                 kiln_te_stage_t *out, const kiln_te_iter_var_t *at, int w) {
  int ndim = final->ndim;
  bool blocked = w + 1 < ndim;
  for (int i = 0; i < s->num_stages; ++i) {
    kiln_te_stage_t *st = s->stages[i];
    if (st->output == final) {
      continue;
    }
    if (st->op->reducer == KILN_TE_REDUCE_NONE) {
      KILN_RETURN_IF_ERROR(kiln_te_compute_inline(st));
      continue;
    }
    KILN_RETURN_IF_ERROR(pool_accumulator(st, out, at, blocked ? w : -1, blocked ? ndim - 1 : w));
  }
  return KILN_OK;
}

kiln_status_t kiln_schedule_pool_x86(const kiln_schedule_target_t *target,
                                     const kiln_compute_args_t *args,
                                     const kiln_compute_result_t *result,
                                     kiln_te_schedule_t *schedule) {
  const kiln_te_tensor_t *anchor = result->outputs[0];
  const kiln_te_tensor_t *final = kiln_schedule_x86_fused_output(schedule, anchor);
  int w = final ? pool_w_position(args, final->ndim) : -1;
  if (w < 1 || !pool_only_reductions(schedule, anchor)) {
    return kiln_schedule_default(target, schedule);
  }
  kiln_te_stage_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(schedule, final, &out));
  const kiln_te_iter_var_t *at = NULL;
  KILN_RETURN_IF_ERROR(pool_output_loops(target, schedule, out, w, &at));
  return pool_stages(schedule, final, out, at, w);
}
