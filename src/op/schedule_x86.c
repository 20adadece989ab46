/*
 * Tuned x86 schedules (nn_conv_compute.h): TVM topi's conv2d_NCHWc
 * (topi/x86/conv2d_avx_common.py), its depthwise form
 * (topi/x86/depthwise_conv2d.py) and its grouped form.
 *
 * conv2d_NCHWc, output (n, oc_chunk, oh, ow, oc_block):
 * - the padded data, when there is padding, is materialized in parallel
 *   over its fused (n, ic_chunk, ih) loops, as TVM does, or (pad_rows)
 *   copied by each row block, one input chunk's rows at a time, into a
 *   stack buffer at the block's ic_chunk loop;
 * - the output is cached in a local buffer (cache_write); the knobs
 *   (kiln_schedule_conv_config_t) split the output's oc_chunk by tile_oc,
 *   oh by block_oh and ow by tile_ow; (n, oc_outer, oh_outer) are fused
 *   into one parallel loop and oc_block is vectorized;
 * - register tile (block_oh 0): the local stage is computed at ow_chunk
 *   (tile_oc chunks by tile_ow columns), its reduction ordered ic_chunk,
 *   kh, kw, ic_block (ic split by the input-channel block), then the tile's
 *   chunks and columns (unrolled) and oc_block (vectorized);
 * - row block: the local stage is computed at the parallel loop over
 *   block_oh rows of the whole width, ic_chunk outermost, then the rows and
 *   ow tiles, then the register tile's reduction: one input chunk's
 *   weights serve every row of the block from the L1 cache.
 * The default rule (kiln_schedule_conv_x86_config, docs/compute-conv.md):
 * two chunks by up to 8 columns (16 accumulators; more spill), one chunk
 * by up to 14 when the chunks are odd or the conv grouped; row blocks for
 * convs with several input chunks that reduce at least 64 products per
 * chunk (3x3: yes, 1x1: no), as many rows as 32 KiB of accumulator hold
 * while 8 parallel tasks (4 per core, on more than 2 cores) remain. The
 * accumulator counts are for AVX-512's 32 vector registers and an output
 * chunk of one vector; a target with 16 registers (AVX2) gets half as
 * many (the wide tile 2 chunks by 6 columns), and a chunk of several
 * vectors counts as that many.
 *
 * Depthwise conv2d_NCHWc (groups == C == O, data and output in one block;
 * TVM's depthwise_conv2d_NCHWc): the output's (n, oc_chunk, oh) fused and
 * parallel, oc_block vectorized; the accumulator computed at that loop over
 * one output row, its ow split into register tiles of the widest divisor of
 * ow from KILN_SCHEDULE_DEPTHWISE_REG_N down to half of it (else reg_n and
 * a tail), each tile reducing kh and kw, both unrolled, over its unrolled
 * ow_block and vectorized oc_block. The padding is folded into the reads
 * (the pad stage inlined: a select on the row and column bounds, which the
 * simplifier drops for the columns inside): materialized, the padded copy
 * of a depthwise layer's input cost more than its nine multiply-adds per
 * output (measured on mobilenet_v2).
 *
 * Grouped conv2d_NCHWc with blocks inside groups (ResNeXt, RegNet,
 * ShuffleNet as alter_op_layout converts them: kernel OIHW1i{o}o, the data
 * block dividing the input channels per group, the output block the output
 * channels per group) gets the plain schedule above: the groups are spread
 * over the fused parallel (n, oc_chunk, oh) loop, each output block lies in
 * one group, and the tile's reduction over the group's input channels is
 * split by the data block (the compute rule reads the group's data chunk
 * at g * (group_in / ib) + ic_chunk, one broadcast element per
 * multiply-add with the vector of oc_block weights). Other grouped convs
 * get the default schedule.
 *
 * The accumulating stage is always in local scope (a stack buffer where it
 * is computed), so a fused group's anchor is not a workspace allocated and
 * zeroed per tile.
 *
 * Fused groups (the graph compiler lowers a conv or dense with the
 * elementwise and broadcast ops after it as one function): when the
 * schedule's single output is not the anchor's (the conv's or dense's)
 * output but has its shape, the epilogue stages are inlined into that
 * output, the output gets the loops the anchor's copy stage would have had,
 * and the anchor itself takes the place of the local cache: computed at
 * the output's tile, so the epilogue runs on the tile while it is in
 * registers (TVM's _schedule_conv_NCHWc with C != O). An output of another
 * shape falls back to the default schedule.
 *
 * The matrix products' schedule is in schedule_x86_dense.c; the helpers it
 * shares with the convolutions (the fused output, the inlined epilogue, the
 * accumulator stage) are declared in schedule_x86.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "op/compute.h"
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"
#include "op/schedule_x86.h"
#include "tir/transform.h"

/* ---- conv2d_NCHWc ---- */

/* Whether `layout` is `primal` with the primal axes of `splits` split, in
 * that order, by whatever factors it has ("NCHW16c" is "NCHW" split "C"). */
static bool layout_is_blocked_form(const kiln_layout_t *layout, const char *primal,
                                   const char *splits) {
  kiln_layout_t expected;
  kiln_status_t status = kiln_layout_parse(primal, &expected);
  for (const char *p = splits; status == KILN_OK && *p; ++p) {
    status = kiln_layout_split(&expected, *p, kiln_layout_factor(layout, *p), &expected);
  }
  if (status != KILN_OK) {
    kiln_status_free(status);
    return false;
  }
  return kiln_layout_equal(layout, &expected);
}

/* Whether the layouts are exactly NCHW{c}c, OIHW{i}i{o}o, NCHW{c}c. */
static bool nchwc_layouts(const kiln_nn_conv2d_attrs_t *a, int64_t *out_ic_block) {
  kiln_layout_t data, kernel, out;
  if (kiln_layout_parse(a->data_layout, &data) || kiln_layout_parse(a->kernel_layout, &kernel) ||
      kiln_layout_parse(a->out_layout, &out)) {
    return false; /* validation has rejected these already */
  }
  *out_ic_block = kiln_layout_factor(&kernel, 'I');
  return layout_is_blocked_form(&data, "NCHW", "C") &&
         layout_is_blocked_form(&kernel, "OIHW", "IO") && layout_is_blocked_form(&out, "NCHW", "C");
}

static const kiln_te_iter_var_t *axis(const kiln_te_tensor_t *t, int i) {
  return kiln_te_tensor_axis(t, i);
}

/* Whether `stage` computes one of the anchor's inputs (the padded data). */
static bool feeds(const kiln_te_stage_t *stage, const kiln_te_tensor_t *anchor) {
  for (int i = 0; i < anchor->op->num_inputs; ++i) {
    if (anchor->op->inputs[i] == stage->output) {
      return true;
    }
  }
  return false;
}

/* With `pad`, the stage computing the anchor's (padded NCHWc) input is
 * materialized in parallel over (n, ic_chunk, ih), or, given
 * `out_pad_rows`, left to the caller there (to compute at its row blocks);
 * every other stage but the anchor, `final` and reductions (the epilogue
 * between the anchor and `final` when they differ) is inlined. */
static kiln_status_t schedule_pad_and_epilogue(kiln_te_schedule_t *s,
                                               const kiln_te_tensor_t *anchor,
                                               const kiln_te_tensor_t *final, bool pad,
                                               kiln_te_stage_t **out_pad_rows) {
  for (int i = 0; i < s->num_stages; ++i) {
    kiln_te_stage_t *st = s->stages[i];
    if (st->output == anchor || st->output == final || st->op->reducer != KILN_TE_REDUCE_NONE) {
      continue;
    }
    if (pad && out_pad_rows && feeds(st, anchor)) {
      *out_pad_rows = st;
      continue;
    }
    if (!pad || !feeds(st, anchor)) {
      KILN_RETURN_IF_ERROR(kiln_te_compute_inline(st));
      continue;
    }
    const kiln_te_iter_var_t *outer[3] = {axis(st->output, 0), axis(st->output, 1),
                                          axis(st->output, 2)};
    const kiln_te_iter_var_t *fused = NULL;
    KILN_RETURN_IF_ERROR(kiln_schedule_fuse_axes(s, st, 3, outer, &fused));
    KILN_RETURN_IF_ERROR(kiln_te_parallel(st, fused));
    KILN_RETURN_IF_ERROR(kiln_te_vectorize(st, axis(st->output, 4)));
  }
  return KILN_OK;
}

/* The output a fused schedule writes, when the anchor's tuned loops can
 * carry it: NULL for a group of another shape (the default schedule then). */
static const kiln_te_tensor_t *fused_output(const kiln_te_schedule_t *s,
                                            const kiln_te_tensor_t *anchor) {
  if (s->num_outputs != 1) {
    return NULL;
  }
  const kiln_te_tensor_t *final = s->outputs[0];
  if (final == anchor) {
    return final;
  }
  if (final->ndim != anchor->ndim || final->op->kind != KILN_TE_OP_COMPUTE ||
      final->op->reducer != KILN_TE_REDUCE_NONE ||
      memcmp(final->shape, anchor->shape, (size_t)anchor->ndim * sizeof(int64_t)) != 0) {
    return NULL;
  }
  return final;
}

/* The stage that accumulates, in local scope: a local cache of the anchor
 * when the anchor is the output, else the anchor itself (its consumers are
 * inlined into the final output). */
static kiln_status_t accumulator_stage(kiln_te_schedule_t *s, const kiln_te_tensor_t *anchor,
                                       const kiln_te_tensor_t *final, kiln_te_stage_t **out_stage,
                                       kiln_te_stage_t **out_accumulator) {
  const kiln_te_tensor_t *accumulator = anchor;
  if (final == anchor) {
    KILN_RETURN_IF_ERROR(kiln_te_cache_write(s, anchor, KILN_TIR_SCOPE_LOCAL, &accumulator));
  }
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(s, final, out_stage));
  KILN_RETURN_IF_ERROR(kiln_te_schedule_stage(s, accumulator, out_accumulator));
  /* the anchor as accumulator lives where it is computed, in a local buffer
   * (the stack), as the cache would: not a workspace allocated per tile */
  (*out_accumulator)->scope = KILN_TIR_SCOPE_LOCAL;
  return KILN_OK;
}

/* The register tile: the local stage at the output's ow_chunk (tile_oc
 * output chunks by tile_ow columns), its whole reduction inside: ic_chunk,
 * kh, kw, ic_block, then the tile's chunks and columns (unrolled) and the
 * oc block (vectorized). */
static kiln_status_t schedule_nchwc_tile(kiln_te_schedule_t *s, kiln_te_stage_t *local,
                                         int64_t ic_block) {
  const kiln_te_tensor_t *cc = local->output;
  const kiln_te_iter_var_t *ic_chunk = NULL, *ic_inner = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_split(s, local, local->op->reduce_axes[0], ic_block, &ic_chunk, &ic_inner));
  const kiln_te_iter_var_t *const *reduce = local->op->reduce_axes;
  const kiln_te_iter_var_t *order[] = {axis(cc, 0), axis(cc, 2), ic_chunk,    reduce[1],  reduce[2],
                                       ic_inner,    axis(cc, 1), axis(cc, 3), axis(cc, 4)};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(local, 9, order));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, axis(cc, 1)));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, axis(cc, 3)));
  return kiln_te_vectorize(local, axis(cc, 4));
}

/* The padded rows one input chunk of a row block reads, copied into a
 * stack buffer at the block's ic_chunk loop (pad_rows): the copy runs
 * inside the block's task, just before the rows are read, instead of as a
 * parallel pass of its own over the whole padded input. */
static kiln_status_t schedule_pad_rows(kiln_te_stage_t *pad, const kiln_te_stage_t *local,
                                       const kiln_te_iter_var_t *ic_chunk) {
  pad->scope = KILN_TIR_SCOPE_LOCAL;
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(pad, local, ic_chunk));
  return kiln_te_vectorize(pad, axis(pad->output, 4));
}

/* The row block: the local stage at the output's fused (n, oc_outer,
 * oh_outer) loop, covering block_oh rows of the whole width; the input
 * channels' chunks outermost, so one chunk's weights serve every row of the
 * block from the L1 cache, and within each row the register tiles of
 * tile_ow columns reduce kh, kw and the ic block as above. `pad`, when
 * given, is the padded data's stage (pad_rows). */
static kiln_status_t schedule_nchwc_rows(kiln_te_schedule_t *s, kiln_te_stage_t *local,
                                         int64_t ic_block,
                                         const kiln_schedule_conv_config_t *config,
                                         kiln_te_stage_t *pad) {
  int64_t tile_ow = config->tile_ow;
  const kiln_te_tensor_t *cc = local->output;
  const kiln_te_iter_var_t *ic_chunk = NULL, *ic_inner = NULL, *ow_chunk = NULL, *ow_block = NULL;
  const kiln_te_iter_var_t *const *reduce = local->op->reduce_axes;
  KILN_RETURN_IF_ERROR(kiln_te_split(s, local, reduce[0], ic_block, &ic_chunk, &ic_inner));
  KILN_RETURN_IF_ERROR(kiln_te_split(s, local, axis(cc, 3), tile_ow, &ow_chunk, &ow_block));
  const kiln_te_iter_var_t *order[] = {axis(cc, 0), ic_chunk, axis(cc, 2), ow_chunk, reduce[1],
                                       reduce[2],   ic_inner, axis(cc, 1), ow_block, axis(cc, 4)};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(local, 10, order));
  if (pad) {
    KILN_RETURN_IF_ERROR(schedule_pad_rows(pad, local, ic_chunk));
  }
  if (config->unroll_ic > 1) {
    const kiln_te_iter_var_t *ic_step = NULL, *ic_unrolled = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_te_split(s, local, ic_inner, config->unroll_ic, &ic_step, &ic_unrolled));
    KILN_RETURN_IF_ERROR(kiln_te_unroll(local, ic_unrolled));
  }
  if (config->prefetch > 0) {
    char distance[24];
    snprintf(distance, sizeof(distance), "%" PRId64, config->prefetch);
    KILN_RETURN_IF_ERROR(
        kiln_te_pragma(s, local, ic_chunk, KILN_TIR_PREFETCH_ANNOTATION, distance));
  }
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, axis(cc, 1)));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, ow_block));
  return kiln_te_vectorize(local, axis(cc, 4));
}

/* The register tile's width, for every NCHWc schedule: the widest divisor
 * of the output width from KILN_SCHEDULE_DEPTHWISE_REG_N down to half of
 * it (TVM's tile_ow, a factor of ow: no tail; 14 columns for the 56, 28
 * and 14 wide layers of a ResNet, which keeps more multiply-adds in
 * flight than 8), else KILN_SCHEDULE_NCHWC_REG_N with a tail. */
static int64_t tile_ow(int64_t ow) {
  int64_t n = kiln_schedule_x86_split_width(ow, KILN_SCHEDULE_DEPTHWISE_REG_N);
  return ow % n == 0 && 2 * n >= KILN_SCHEDULE_DEPTHWISE_REG_N ? n : KILN_SCHEDULE_NCHWC_REG_N;
}

static kiln_status_t schedule_depthwise(kiln_te_schedule_t *s, const kiln_te_tensor_t *anchor,
                                        const kiln_te_tensor_t *out) {
  kiln_te_stage_t *stage = NULL, *local = NULL;
  KILN_RETURN_IF_ERROR(schedule_pad_and_epilogue(s, anchor, out, false, NULL));
  KILN_RETURN_IF_ERROR(accumulator_stage(s, anchor, out, &stage, &local));
  const kiln_te_iter_var_t *fused = NULL;
  const kiln_te_iter_var_t *outer[3] = {axis(out, 0), axis(out, 1), axis(out, 2)};
  KILN_RETURN_IF_ERROR(kiln_schedule_fuse_axes(s, stage, 3, outer, &fused));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(stage, fused));
  KILN_RETURN_IF_ERROR(kiln_te_vectorize(stage, axis(out, 4)));
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(local, stage, fused));
  const kiln_te_tensor_t *cc = local->output;
  const kiln_te_iter_var_t *ow_chunk = NULL, *ow_block = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_split(s, local, axis(cc, 3), tile_ow(cc->shape[3]), &ow_chunk, &ow_block));
  const kiln_te_iter_var_t *const *reduce = local->op->reduce_axes;
  const kiln_te_iter_var_t *order[] = {axis(cc, 0), axis(cc, 1), axis(cc, 2), ow_chunk,   reduce[0],
                                       reduce[1],   reduce[2],   ow_block,    axis(cc, 4)};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(local, 9, order));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, reduce[1]));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, reduce[2]));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, ow_block));
  return kiln_te_vectorize(local, axis(cc, 4));
}

/* Whether the conv is depthwise in one block: groups == C == O and the data
 * and output blocks equal (the kernel's I block is 1 by validation), so
 * output block lane l reads lane l of the same data chunk. */
static bool depthwise_nchwc(const kiln_nn_conv2d_attrs_t *a, const kiln_te_tensor_t *data,
                            const kiln_te_tensor_t *out) {
  int64_t channels = data->shape[1] * data->shape[4];
  return a->groups > 1 && data->shape[4] == out->shape[4] && a->groups == channels &&
         out->shape[1] * out->shape[4] == channels;
}

/* Whether a grouped conv (not depthwise) keeps its blocks inside groups:
 * kernel OIHW1i{o}o, the data's block divides the input channels per group
 * and the output's block the output channels per group (the compute rule
 * then reads one data element per output block). */
static bool grouped_nchwc(const kiln_nn_conv2d_attrs_t *a, int64_t kernel_i_block,
                          const kiln_te_tensor_t *data, const kiln_te_tensor_t *out) {
  int64_t channels = data->shape[1] * data->shape[4];
  int64_t outputs = out->shape[1] * out->shape[4];
  if (a->groups < 2 || kernel_i_block != 1 || depthwise_nchwc(a, data, out) ||
      channels % a->groups != 0 || outputs % a->groups != 0) {
    return false;
  }
  return (channels / a->groups) % data->shape[4] == 0 && (outputs / a->groups) % out->shape[4] == 0;
}

/* Which conv2d_NCHWc schedule fits: 0 none (the default), 1 plain or
 * grouped with blocks inside groups (the register tile; `out_ic_block` the
 * split of the reduction's ic), 2 depthwise. */
static int nchwc_kind(const kiln_nn_conv2d_attrs_t *a, const kiln_te_tensor_t *data,
                      const kiln_te_tensor_t *anchor, int64_t *out_ic_block) {
  int64_t kernel_i_block = 0;
  if (!nchwc_layouts(a, &kernel_i_block)) {
    return 0;
  }
  *out_ic_block = kernel_i_block;
  if (a->groups == 1) {
    return 1;
  }
  if (depthwise_nchwc(a, data, anchor)) {
    return 2;
  }
  *out_ic_block = data->shape[4];
  return grouped_nchwc(a, kernel_i_block, data, anchor) ? 1 : 0;
}

/* Output chunks' worth of accumulators out of `count32` a rule states for
 * 32 vector registers: scaled to the target's registers, divided by the
 * vectors one output chunk takes (16 lanes on 8-lane AVX2 vectors: two). */
static int64_t chunk_accumulators(const kiln_schedule_target_t *target,
                                  const kiln_schedule_conv_shape_t *c, int64_t count32) {
  int64_t lanes = kiln_schedule_lanes(target, KILN_DTYPE_FLOAT32);
  int64_t vectors = c->oc_block > lanes ? (c->oc_block + lanes - 1) / lanes : 1;
  int64_t count = kiln_schedule_scale_registers(target, count32) / vectors;
  return count < 1 ? 1 : count;
}

/* The register tile's columns for tile_oc chunks: the widest divisor of ow
 * up to the accumulators per chunk (at most the depthwise width); the
 * accumulators KILN_SCHEDULE_NCHWC_ACCUMULATORS, or the wide tile's when
 * the target has fewer (12 on AVX2). */
static int64_t tile_columns(const kiln_schedule_target_t *target,
                            const kiln_schedule_conv_shape_t *c, int64_t tile_oc) {
  int64_t ow = c->ow;
  int64_t most = chunk_accumulators(target, c, KILN_SCHEDULE_NCHWC_WIDE_ACCUMULATORS);
  int64_t widest =
      (most < KILN_SCHEDULE_NCHWC_ACCUMULATORS ? most : KILN_SCHEDULE_NCHWC_ACCUMULATORS) / tile_oc;
  widest = widest < 1 ? 1 : widest;
  return kiln_schedule_x86_split_width(
      ow, widest < KILN_SCHEDULE_DEPTHWISE_REG_N ? widest : KILN_SCHEDULE_DEPTHWISE_REG_N);
}

/* The parallel tasks a row block keeps: KILN_SCHEDULE_NCHWC_MIN_TASKS, or
 * four per core on a target with more cores. */
static int64_t min_tasks(const kiln_schedule_target_t *target) {
  int64_t per_cores = 4 * (int64_t)target->num_cores;
  return per_cores > KILN_SCHEDULE_NCHWC_MIN_TASKS ? per_cores : KILN_SCHEDULE_NCHWC_MIN_TASKS;
}

/* The most rows (a divisor of oh) whose accumulator fits
 * KILN_SCHEDULE_NCHWC_BLOCK_BYTES while the parallel loop keeps
 * min_tasks tasks; at least one. */
/* The bytes of one output row of tile_oc chunks: a row block's
 * accumulator per row. */
static int64_t row_bytes(const kiln_schedule_conv_shape_t *c, int64_t tile_oc) {
  return c->ow * tile_oc * c->oc_block * (int64_t)sizeof(float);
}

static int64_t block_rows(const kiln_schedule_target_t *target, const kiln_schedule_conv_shape_t *c,
                          int64_t tile_oc) {
  int64_t chunks = c->n * (c->oc_chunks / tile_oc);
  for (int64_t rows = c->oh; rows > 1; --rows) {
    if (c->oh % rows == 0 && rows * row_bytes(c, tile_oc) <= KILN_SCHEDULE_NCHWC_BLOCK_BYTES &&
        chunks * (c->oh / rows) >= min_tasks(target)) {
      return rows;
    }
  }
  return 1;
}

/* The wide register tile's output chunks: KILN_SCHEDULE_NCHWC_WIDE_TILE_OC
 * by KILN_SCHEDULE_NCHWC_WIDE_TILE_OW columns with 32 registers and a
 * chunk a vector, fewer chunks with fewer accumulators (2 on AVX2). */
static int64_t wide_tile_oc(const kiln_schedule_target_t *target,
                            const kiln_schedule_conv_shape_t *c) {
  return chunk_accumulators(target, c, KILN_SCHEDULE_NCHWC_WIDE_ACCUMULATORS) /
         KILN_SCHEDULE_NCHWC_WIDE_TILE_OW;
}

/* Whether a row-blocked conv takes the wide register tile: plain, stride 1,
 * its output chunks in multiples of the wide tile's, at least
 * KILN_SCHEDULE_NCHWC_WIDE_MIN_OW wide, and one row of the wide tile's
 * chunks within KILN_SCHEDULE_NCHWC_BLOCK_BYTES (Inception v3's 147-wide
 * 3x3 conv: a row of 4 chunks is 37 KB, and the accumulator left the
 * first-level cache: 9.8 ms, against 4.6 with 2 chunks by 7 columns). */
static bool wide_tile(const kiln_schedule_target_t *target, const kiln_schedule_conv_shape_t *c) {
  int64_t chunks = wide_tile_oc(target, c);
  return c->groups == 1 && c->stride_w == 1 && c->ow >= KILN_SCHEDULE_NCHWC_WIDE_MIN_OW &&
         chunks > 0 && c->oc_chunks % chunks == 0 &&
         row_bytes(c, chunks) <= KILN_SCHEDULE_NCHWC_BLOCK_BYTES;
}

/* Whether a row block copies the padded rows it reads (pad_rows): a padded
 * stride-1 conv with at most KILN_SCHEDULE_NCHWC_PAD_ROWS_TILES output
 * tiles per row block, whose rows of one input chunk fit
 * KILN_SCHEDULE_NCHWC_PAD_ROWS_BYTES. */
static bool wants_pad_rows(const kiln_schedule_conv_shape_t *c,
                           const kiln_schedule_conv_config_t *k) {
  int64_t rows = (k->block_oh - 1) * c->stride_h + c->kh;
  int64_t bytes = rows * c->padded_w * c->ic_block * (int64_t)sizeof(float);
  return c->padded_w > 0 && c->stride_h == 1 && c->stride_w == 1 && c->ic_block > 0 &&
         c->oc_chunks / k->tile_oc <= KILN_SCHEDULE_NCHWC_PAD_ROWS_TILES &&
         bytes <= KILN_SCHEDULE_NCHWC_PAD_ROWS_BYTES;
}

/* The row block's knobs: the wide tile where it fits, rows, prefetch, the
 * unrolled share of the input-channel block, and the padded rows' copy. */
static void row_block_config(const kiln_schedule_target_t *target,
                             const kiln_schedule_conv_shape_t *c,
                             kiln_schedule_conv_config_t *config) {
  if (wide_tile(target, c)) {
    config->tile_oc = wide_tile_oc(target, c);
    config->tile_ow = KILN_SCHEDULE_NCHWC_WIDE_TILE_OW;
  }
  config->block_oh = block_rows(target, c, config->tile_oc);
  config->prefetch = KILN_SCHEDULE_NCHWC_PREFETCH;
  if (c->ic_block > 0 && c->ic_block % KILN_SCHEDULE_NCHWC_UNROLL_IC == 0) {
    config->unroll_ic = KILN_SCHEDULE_NCHWC_UNROLL_IC;
  }
  config->pad_rows = wants_pad_rows(c, config);
}

/* Whether tiles of `columns` use at least 70% of their columns over a row
 * of ow (7 columns in tiles of 6: 58%, no; 13 in 8s: 81%; 55 in 6s: 92%). */
static bool tiles_fill(int64_t ow, int64_t columns) {
  int64_t tiles = (ow + columns - 1) / columns;
  return 10 * ow >= 7 * tiles * columns;
}

/* The register tile alone (a 1x1 conv, or one input chunk) of a plain
 * stride-1 conv: 24 accumulators (with 32 registers), 4 chunks by 6
 * columns when the chunks come in fours, else 3 by 8 when in threes (the
 * 63 chunks of a 1000-class 1x1 classifier), when those tiles fill the
 * row; else the default. Fewer registers: the wide tile's chunks alone. */
static void register_tile_config(const kiln_schedule_target_t *target,
                                 const kiln_schedule_conv_shape_t *c,
                                 kiln_schedule_conv_config_t *config) {
  int64_t most = wide_tile_oc(target, c);
  if (c->groups != 1 || c->stride_w != 1 || most < 1) {
    return;
  }
  for (int64_t chunks = most; chunks >= 3 || chunks == most; --chunks) {
    int64_t columns = chunk_accumulators(target, c, KILN_SCHEDULE_NCHWC_WIDE_ACCUMULATORS) / chunks;
    if (c->oc_chunks % chunks == 0 && tiles_fill(c->ow, columns)) {
      config->tile_oc = chunks;
      config->tile_ow = c->ow < columns ? c->ow : columns;
      return;
    }
  }
}

kiln_schedule_conv_config_t kiln_schedule_conv_x86_config(const kiln_schedule_target_t *target,
                                                          const kiln_schedule_conv_shape_t *c) {
  kiln_schedule_conv_config_t config = {.tile_oc = 1};
  if (c->groups == 1 && c->oc_chunks % 2 == 0) {
    config.tile_oc = 2;
  }
  config.tile_ow = tile_columns(target, c, config.tile_oc);
  if (c->ic_chunks > 1 && c->reduce_per_chunk >= KILN_SCHEDULE_NCHWC_ROW_REDUCE) {
    row_block_config(target, c, &config);
  } else {
    register_tile_config(target, c, &config);
  }
  return config;
}

/* Knob i's choices: `values` (count of them) within [lo, hi], then the
 * default's value. */
static void add_choices(kiln_schedule_space_t *space, int knob, const int64_t *values, int count,
                        int64_t lo, int64_t hi) {
  for (int i = 0; i < count; ++i) {
    if (values[i] >= lo && values[i] <= hi) {
      kiln_schedule_space_add(space, knob, values[i]);
    }
  }
  kiln_schedule_space_add(space, knob, space->default_config.values[knob]);
}

void kiln_schedule_conv_x86_space(const kiln_schedule_target_t *target,
                                  const kiln_schedule_conv_shape_t *c,
                                  const kiln_schedule_conv_config_t *default_config,
                                  kiln_schedule_space_t *out_space) {
  static const int64_t widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 28};
  static const int64_t chunks[] = {1, 2, 3, 4};
  static const int64_t prefetch[] = {0, 1, 2, 4};
  static const int64_t unroll[] = {0, 2, 4, 8};
  kiln_schedule_space_t *s = out_space;
  *s = (kiln_schedule_space_t){
      .default_config =
          kiln_schedule_config_of(KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC, default_config),
      .max_accumulators = chunk_accumulators(target, c, KILN_SCHEDULE_TUNE_MAX_ACCUMULATORS),
      .max_block_bytes = KILN_SCHEDULE_TUNE_MAX_BLOCK_BYTES,
      .block_row_bytes = c->ow * c->oc_block * (int64_t)sizeof(float)};
  add_choices(s, 0, widths, 13, 1, c->ow);
  add_choices(s, 1, chunks, 4, 1, c->groups == 1 ? c->oc_chunks : 1);
  kiln_schedule_space_add(s, 2, 0);
  for (int64_t rows = 1; c->ic_chunks > 1 && rows <= c->oh && rows <= 16; ++rows) {
    if (c->oh % rows == 0) {
      kiln_schedule_space_add(s, 2, rows);
    }
  }
  kiln_schedule_space_add(s, 2, default_config->block_oh);
  add_choices(s, 3, prefetch, 4, 0, c->ic_chunks > 1 ? 4 : 0);
  for (int i = 0; i < 4; ++i) {
    if (unroll[i] == 0 || (c->ic_block > 0 && c->ic_block % unroll[i] == 0)) {
      kiln_schedule_space_add(s, 4, unroll[i]);
    }
  }
  kiln_schedule_space_add(s, 4, default_config->unroll_ic);
  kiln_schedule_space_add(s, 5, 0);
  if (c->padded_w > 0 && c->ic_chunks > 1) {
    kiln_schedule_space_add(s, 5, 1);
  }
}

/* The knobs: the default rule's, or the target's configuration of this
 * template (refused outside the template's bounds); the space written
 * when asked. */
static kiln_status_t conv_config(const kiln_schedule_target_t *target,
                                 const kiln_schedule_conv_shape_t *shape,
                                 kiln_schedule_conv_config_t *out_config) {
  *out_config = kiln_schedule_conv_x86_config(target, shape);
  if (target->out_space) {
    kiln_schedule_conv_x86_space(target, shape, out_config, target->out_space);
  }
  if (target->config && target->config->template_id == KILN_SCHEDULE_TEMPLATE_CONV2D_NCHWC) {
    KILN_RETURN_IF_ERROR(kiln_schedule_config_check(target->config));
    kiln_schedule_config_to(target->config, out_config);
  }
  return KILN_OK;
}

/* The shape facts the default knobs depend on. */
static kiln_schedule_conv_shape_t conv_shape(const kiln_nn_conv2d_attrs_t *a,
                                             const kiln_te_tensor_t *out, int64_t ic_block,
                                             const kiln_te_tensor_t *data,
                                             const kiln_te_tensor_t *kernel) {
  kiln_schedule_conv_shape_t c = {.n = out->shape[0],
                                  .oc_chunks = out->shape[1],
                                  .oh = out->shape[2],
                                  .ow = out->shape[3],
                                  .oc_block = out->shape[4],
                                  .groups = a->groups};
  c.reduce_per_chunk = kernel->shape[2] * kernel->shape[3] * ic_block;
  c.ic_chunks = kernel->shape[1] * kernel->shape[4] / ic_block;
  c.ic_block = ic_block;
  c.stride_w = a->strides.count > 1 ? a->strides.values[1] : 1;
  c.stride_h = a->strides.count > 0 ? a->strides.values[0] : 1;
  c.kh = kernel->shape[2];
  const int64_t *pad = a->padding.values;
  if (a->padding.count == 4 && (pad[0] || pad[1] || pad[2] || pad[3])) {
    c.padded_w = data->shape[3] + pad[1] + pad[3];
  }
  return c;
}

kiln_status_t kiln_schedule_conv2d_nchwc_x86_apply(const kiln_schedule_conv_config_t *config,
                                                   int64_t ic_block, const kiln_te_tensor_t *anchor,
                                                   const kiln_te_tensor_t *out,
                                                   kiln_te_schedule_t *schedule) {
  kiln_te_stage_t *stage = NULL, *local = NULL, *pad = NULL;
  bool pad_rows = config->block_oh > 0 && config->pad_rows;
  KILN_RETURN_IF_ERROR(
      schedule_pad_and_epilogue(schedule, anchor, out, true, pad_rows ? &pad : NULL));
  KILN_RETURN_IF_ERROR(accumulator_stage(schedule, anchor, out, &stage, &local));
  const kiln_te_iter_var_t *oc_outer = NULL, *oc_inner = NULL, *oh_outer = NULL, *oh_inner = NULL;
  const kiln_te_iter_var_t *ow_chunk = NULL, *ow_block = NULL, *fused = NULL;
  int64_t rows = config->block_oh > 0 ? config->block_oh : 1;
  KILN_RETURN_IF_ERROR(
      kiln_te_split(schedule, stage, axis(out, 1), config->tile_oc, &oc_outer, &oc_inner));
  KILN_RETURN_IF_ERROR(kiln_te_split(schedule, stage, axis(out, 2), rows, &oh_outer, &oh_inner));
  KILN_RETURN_IF_ERROR(
      kiln_te_split(schedule, stage, axis(out, 3), config->tile_ow, &ow_chunk, &ow_block));
  const kiln_te_iter_var_t *order[] = {axis(out, 0), oc_outer, oh_outer, oh_inner,
                                       ow_chunk,     oc_inner, ow_block, axis(out, 4)};
  KILN_RETURN_IF_ERROR(kiln_te_reorder(stage, 8, order));
  KILN_RETURN_IF_ERROR(kiln_schedule_fuse_axes(schedule, stage, 3, order, &fused));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(stage, fused));
  KILN_RETURN_IF_ERROR(kiln_te_vectorize(stage, axis(out, 4)));
  if (config->block_oh > 0) {
    KILN_RETURN_IF_ERROR(kiln_te_compute_at(local, stage, fused));
    return schedule_nchwc_rows(schedule, local, ic_block, config, pad);
  }
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(local, stage, ow_chunk));
  return schedule_nchwc_tile(schedule, local, ic_block);
}

kiln_status_t kiln_schedule_conv2d_nchwc_x86(const kiln_schedule_target_t *target,
                                             const kiln_compute_args_t *args,
                                             const kiln_compute_result_t *result,
                                             kiln_te_schedule_t *schedule) {
  int64_t ic_block = 0;
  const kiln_te_tensor_t *anchor = result->outputs[0];
  int kind = nchwc_kind(args->attrs, args->inputs[0], anchor, &ic_block);
  const kiln_te_tensor_t *out = kind ? fused_output(schedule, anchor) : NULL;
  if (!out) {
    return kiln_schedule_default(target, schedule);
  }
  if (kind == 2) {
    return schedule_depthwise(schedule, anchor, out);
  }
  kiln_schedule_conv_shape_t shape =
      conv_shape(args->attrs, anchor, ic_block, args->inputs[0], args->inputs[1]);
  kiln_schedule_conv_config_t config;
  KILN_RETURN_IF_ERROR(conv_config(target, &shape, &config));
  return kiln_schedule_conv2d_nchwc_x86_apply(&config, ic_block, anchor, out, schedule);
}

/* ---- shared with the other x86 schedules (schedule_x86.h) ---- */

int64_t kiln_schedule_x86_split_width(int64_t n, int64_t widest) {
  if (n <= widest) {
    return n;
  }
  for (int64_t d = widest; 2 * d >= widest; --d) {
    if (n % d == 0) {
      return d;
    }
  }
  return widest;
}

const kiln_te_tensor_t *kiln_schedule_x86_fused_output(const kiln_te_schedule_t *s,
                                                       const kiln_te_tensor_t *anchor) {
  return fused_output(s, anchor);
}

kiln_status_t kiln_schedule_x86_inline_epilogue(kiln_te_schedule_t *s,
                                                const kiln_te_tensor_t *anchor,
                                                const kiln_te_tensor_t *final) {
  return schedule_pad_and_epilogue(s, anchor, final, false, NULL);
}

kiln_status_t kiln_schedule_x86_accumulator(kiln_te_schedule_t *s, const kiln_te_tensor_t *anchor,
                                            const kiln_te_tensor_t *final,
                                            kiln_te_stage_t **out_stage,
                                            kiln_te_stage_t **out_accumulator) {
  return accumulator_stage(s, anchor, final, out_stage, out_accumulator);
}

kiln_status_t kiln_schedule_x86_fuse_all(kiln_te_schedule_t *s, kiln_te_stage_t *st, int count,
                                         const kiln_te_iter_var_t *const *axes,
                                         const kiln_te_iter_var_t **out_fused) {
  return kiln_schedule_fuse_axes(s, st, count, axes, out_fused);
}
