/*
 * The x86 schedule of the matrix products nn.dense, nn.matmul and
 * nn.batch_matmul (nn_conv_compute.h): a register-tiled GEMM in the manner
 * of TVM's topi/x86/dense.py (dense_pack) and batch_matmul.py.
 *
 * The output (batch..., M, N) (any rank >= 2; a matmul with a 1-D operand
 * has no M or no N and gets the default schedule) is cut into register
 * tiles of tile_rows rows by tile_cols columns. The batch dims and the
 * two tile loops are fused into one parallel loop, column blocks outside
 * row blocks when columns_outer (consecutive tasks then share one panel of
 * the right operand, which stays in the cache), so that threads have work
 * whatever M is: with M = 1 (a GEMV) the column blocks alone are the
 * tasks. Within a tile the accumulator is a local (stack) buffer computed
 * at the fused loop, its reduction k outermost (in steps of unroll_k, the
 * steps unrolled), then the tile's rows (unrolled) and columns
 * (vectorized): each step of k loads tile_cols
 * columns of the right operand once and broadcasts one element of each
 * row of the left, so tile_rows x tile_cols / lanes accumulators stay in
 * vector registers. The epilogue of a fused group (bias, activation,
 * residual add: the elementwise ops of the output's shape) is inlined
 * into the output's copy of the tile, so it runs while the tile is in
 * registers. A tile that overshoots M or N gets the guarded tail of te
 * lowering, never a wrong answer.
 *
 * The right operand is read along N: contiguously for nn.matmul (K, N) and
 * for a packed weight; a dense weight (N, K) that is not a compile-time
 * constant is read with a stride (a gather per vector).
 *
 * The knobs are data (kiln_schedule_gemm_config_t). The default rule
 * (kiln_schedule_gemm_x86_config) takes up to KILN_SCHEDULE_GEMM_MAX_ROWS
 * rows, preferring a count that divides M so that no tile has a tail, then
 * as many vectors of columns as KILN_SCHEDULE_GEMM_MAX_ACCUMULATORS
 * accumulators allow for those rows (2 to KILN_SCHEDULE_GEMM_MAX_VECTORS,
 * preferring a width that divides N): 8 rows by 2 vectors for a GEMM, 1
 * row by 8 vectors for a GEMV (M = 1), whose accumulators would otherwise
 * be too few to hide the latency of the multiply-adds; a narrower N takes
 * its whole vectors, or N itself below one vector. On a target with fewer
 * vector registers than AVX-512's 32 the accumulators are three quarters
 * of them (12 on AVX2), and the rows at most half the accumulators: 6 rows
 * by 2 vectors. unroll_k is 4 when 4 divides k, else 1.
 */
#include <stdio.h>
#include <string.h>

#include "op/compute.h"
#include "op/nn_conv_compute.h"
#include "op/schedule_x86.h"

static const kiln_te_iter_var_t *axis(const kiln_te_tensor_t *t, int i) {
  return kiln_te_tensor_axis(t, i);
}

/* The tile's accumulators: KILN_SCHEDULE_GEMM_MAX_ACCUMULATORS, or three
 * quarters of the target's vector registers when that is fewer (12 of
 * AVX2's 16: the rest hold a row's columns of the weight and a broadcast). */
static int64_t gemm_accumulators(const kiln_schedule_target_t *target) {
  int64_t most = kiln_schedule_scale_registers(target, 24);
  return most < KILN_SCHEDULE_GEMM_MAX_ACCUMULATORS ? most : KILN_SCHEDULE_GEMM_MAX_ACCUMULATORS;
}

/* Vectors of columns per tile: as many as the accumulators allow for
 * `rows` (at least 2, at most KILN_SCHEDULE_GEMM_MAX_VECTORS), the widest
 * from there down to half of it whose tile divides n. */
static int64_t gemm_tile_vectors(const kiln_schedule_target_t *target, int64_t rows, int64_t n,
                                 int64_t lanes) {
  int64_t most = gemm_accumulators(target) / rows;
  most = most < 2                                ? 2
         : most > KILN_SCHEDULE_GEMM_MAX_VECTORS ? KILN_SCHEDULE_GEMM_MAX_VECTORS
                                                 : most;
  for (int64_t v = most; 2 * v >= most; --v) {
    if (n % (v * lanes) == 0) {
      return v;
    }
  }
  return most;
}

/* Reduction steps per unrolled iteration: 4 when they divide k (the
 * encoder's products ran 6 to 11% faster than with none), else none. */
static int64_t gemm_unroll_k(int64_t k) {
  return k % 4 == 0 ? 4 : 1;
}

kiln_schedule_gemm_config_t kiln_schedule_gemm_x86_config(const kiln_schedule_target_t *target,
                                                          int64_t m, int64_t n, int64_t k) {
  int64_t lanes = kiln_schedule_lanes(target, KILN_DTYPE_FLOAT32);
  int64_t max_rows = gemm_accumulators(target) / 2; /* two vectors a row at least */
  if (max_rows > KILN_SCHEDULE_GEMM_MAX_ROWS) {
    max_rows = KILN_SCHEDULE_GEMM_MAX_ROWS;
  }
  int64_t rows = kiln_schedule_x86_split_width(m, max_rows);
  int64_t cols = gemm_tile_vectors(target, rows, n, lanes) * lanes;
  if (n < cols) {
    cols = n < lanes ? n : n / lanes * lanes;
  }
  return (kiln_schedule_gemm_config_t){
      .tile_rows = rows, .tile_cols = cols, .columns_outer = 1, .unroll_k = gemm_unroll_k(k)};
}

void kiln_schedule_gemm_x86_space(const kiln_schedule_target_t *target, int64_t m, int64_t n,
                                  int64_t k, int64_t fixed_cols,
                                  const kiln_schedule_gemm_config_t *default_config,
                                  kiln_schedule_space_t *out_space) {
  static const int64_t rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16};
  int64_t lanes = kiln_schedule_lanes(target, KILN_DTYPE_FLOAT32);
  kiln_schedule_space_t *s = out_space;
  *s = (kiln_schedule_space_t){
      .default_config = kiln_schedule_config_of(KILN_SCHEDULE_TEMPLATE_GEMM, default_config),
      .max_accumulators =
          kiln_schedule_scale_registers(target, KILN_SCHEDULE_TUNE_MAX_ACCUMULATORS),
      .lanes = lanes};
  for (int i = 0; i < 12; ++i) {
    if (rows[i] <= m) {
      kiln_schedule_space_add(s, 0, rows[i]);
    }
  }
  for (int64_t v = 1; fixed_cols == 0 && v <= KILN_SCHEDULE_GEMM_MAX_VECTORS; ++v) {
    if ((v - 1) * lanes < n) {
      kiln_schedule_space_add(s, 1, n < lanes ? n : v * lanes);
    }
  }
  kiln_schedule_space_add(s, 0, default_config->tile_rows);
  kiln_schedule_space_add(s, 1, fixed_cols > 0 ? fixed_cols : default_config->tile_cols);
  kiln_schedule_space_add(s, 2, 1);
  kiln_schedule_space_add(s, 2, 0);
  kiln_schedule_space_add(s, 3, 1);
  for (int64_t u = 2; u <= 8; u *= 2) {
    if (k % u == 0) { /* no guarded tail in the reduction */
      kiln_schedule_space_add(s, 3, u);
    }
  }
  kiln_schedule_space_add(s, 3, default_config->unroll_k);
}

void kiln_schedule_dense_pack_workload(int64_t m, int64_t n, int64_t k,
                                       char out_text[KILN_SCHEDULE_WORKLOAD_CHARS]) {
  snprintf(out_text, KILN_SCHEDULE_WORKLOAD_CHARS, "nn.dense float32 m=%lld n=%lld k=%lld",
           (long long)m, (long long)n, (long long)k);
}

void kiln_schedule_dense_pack_space(const kiln_schedule_target_t *target, int64_t n,
                                    int64_t default_block, kiln_schedule_space_t *out_space) {
  int64_t lanes = kiln_schedule_lanes(target, KILN_DTYPE_FLOAT32);
  *out_space =
      (kiln_schedule_space_t){.default_config = {.template_id = KILN_SCHEDULE_TEMPLATE_DENSE_PACK,
                                                 .values = {default_block}},
                              .lanes = lanes};
  for (int64_t v = 1; v <= KILN_SCHEDULE_GEMM_MAX_VECTORS && (v - 1) * lanes < n; ++v) {
    kiln_schedule_space_add(out_space, 0, n < lanes ? n : v * lanes);
  }
  kiln_schedule_space_add(out_space, 0, default_block);
}

/* Vectorizes a tile's columns: as unrolled vectors of the target's `lanes`
 * when they are a multiple of it (LLVM splits a vector of 3 x 16 floats
 * badly, and of 3 x 8 on AVX2 worse: 5 GFLOP/s; a loop-IR vector has at
 * most KILN_TIR_MAX_LANES), else as one vector. */
static kiln_status_t vectorize_columns(kiln_te_schedule_t *s, kiln_te_stage_t *st,
                                       const kiln_te_iter_var_t *columns, int64_t width,
                                       int64_t lanes) {
  if (width <= lanes || width % lanes != 0) {
    return kiln_te_vectorize(st, columns);
  }
  const kiln_te_iter_var_t *outer = NULL, *inner = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_split(s, st, columns, lanes, &outer, &inner));
  KILN_RETURN_IF_ERROR(kiln_te_unroll(st, outer));
  return kiln_te_vectorize(st, inner);
}

/* Whether the right operand is the same matrix for every index of output
 * dim `d` (a dim before the last two): true for dense, whose weight has no
 * batch, and for a matmul whose right operand has no such dim or a 1. */
static bool right_operand_shared(const kiln_compute_args_t *args, const kiln_te_tensor_t *out,
                                 int d) {
  const kiln_te_tensor_t *b = args->inputs[1];
  if (args->op->id == KILN_OP_DENSE || args->op->id == KILN_OP_DENSE_PACK) {
    return true;
  }
  int j = d - (out->ndim - b->ndim);
  return j < 0 || b->shape[j] == 1;
}

/* Whether every output dim before the last two but `row` (each of more
 * than one index) reads the same right operand: dense over (N, H, W, C)
 * data. The column blocks then run outside those dims, so consecutive
 * tasks share a panel of the weight; inside them, the whole weight went
 * through the cache once per dim index (ConvNeXt's last stage, 7 x 7 rows
 * of a 9.4 MB weight: 55 GFLOP/s). */
static bool batch_shared(const kiln_compute_args_t *args, const kiln_te_tensor_t *out, int row) {
  for (int d = 0; d < out->ndim - 2; ++d) {
    if (d != row && out->shape[d] > 1 && !right_operand_shared(args, out, d)) {
      return false;
    }
  }
  return true;
}

/* The output dim the tile's rows run along: M (the second last), or, when
 * M is narrower than a tile, the widest earlier dim over which the right
 * operand is shared (a sequence-first (S, 1, K) @ (K, N) has M = 1 and its
 * rows along S). */
static int gemm_row_dim(const kiln_compute_args_t *args, const kiln_te_tensor_t *out) {
  int row = out->ndim - 2;
  for (int d = 0; d < out->ndim - 2 && out->shape[row] < KILN_SCHEDULE_GEMM_MAX_ROWS; ++d) {
    if (right_operand_shared(args, out, d) && out->shape[d] > out->shape[row]) {
      row = d;
    }
  }
  return row;
}

/* Whether the column blocks run as a serial loop inside each parallel task
 * rather than in the fused parallel loop: when the tile does not divide N.
 * The last column block's guard is then linear in its own loop, which loop
 * partition peels, so the other blocks stay vectorized; fused, the guard
 * reads the block through a division and keeps every tile serial (a
 * 197 x 64 . 64 x 197 attention product ran at 5 GFLOP/s). Only when the
 * other loops still give KILN_SCHEDULE_NCHWC_MIN_TASKS tasks. */
static bool columns_serial(const kiln_te_tensor_t *out, int row,
                           const kiln_schedule_gemm_config_t *config) {
  int64_t n = out->shape[out->ndim - 1];
  int64_t tasks = (out->shape[row] + config->tile_rows - 1) / config->tile_rows;
  for (int d = 0; d < out->ndim - 2; ++d) {
    tasks *= d == row ? 1 : out->shape[d];
  }
  return n % config->tile_cols != 0 && tasks >= KILN_SCHEDULE_NCHWC_MIN_TASKS;
}

/* The output's loops: the other dims, then the tiles, fused and parallel
 * (the column blocks serial inside when columns_serial); the tile's
 * columns vectorized. Returns the loop the tile's accumulator is computed
 * at: the fused loop, or the column blocks. */
static kiln_status_t gemm_output_loops(kiln_te_schedule_t *s, kiln_te_stage_t *stage,
                                       const kiln_te_tensor_t *out, int row, bool shared_batch,
                                       const kiln_schedule_gemm_config_t *config, int64_t lanes,
                                       const kiln_te_iter_var_t **out_tile) {
  int batch = out->ndim - 2;
  const kiln_te_iter_var_t *mo = NULL, *mi = NULL, *no = NULL, *ni = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_split(s, stage, axis(out, row), config->tile_rows, &mo, &mi));
  KILN_RETURN_IF_ERROR(kiln_te_split(s, stage, axis(out, batch + 1), config->tile_cols, &no, &ni));
  const kiln_te_iter_var_t *order[KILN_TIR_MAX_DIMS + 2];
  bool serial = columns_serial(out, row, config);
  bool columns_first = config->columns_outer && !serial;
  bool first = columns_first && shared_batch; /* the column blocks outside the batch dims */
  int i = 0;
  if (first) {
    order[i++] = no;
  }
  for (int d = 0; d <= batch; ++d) {
    if (d != row) {
      order[i++] = axis(out, d);
    }
  }
  if (!first) {
    order[i++] = columns_first ? no : mo;
  }
  order[i] = columns_first ? mo : no;
  order[batch + 2] = mi;
  order[batch + 3] = ni;
  KILN_RETURN_IF_ERROR(kiln_te_reorder(stage, batch + 4, order));
  const kiln_te_iter_var_t *fused = NULL;
  KILN_RETURN_IF_ERROR(kiln_schedule_x86_fuse_all(s, stage, batch + 2 - serial, order, &fused));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(stage, fused));
  *out_tile = serial ? no : fused;
  return vectorize_columns(s, stage, ni, config->tile_cols, lanes);
}

/* The accumulator's loops within a tile: k (in steps of unroll_k, each
 * step's k unrolled around the rest), then the rows (unrolled) and the
 * columns (vectorized, in unrolled vectors when wider than one loop-IR
 * vector may be). */
static kiln_status_t gemm_tile_loops(kiln_te_schedule_t *s, kiln_te_stage_t *local, int row,
                                     const kiln_schedule_gemm_config_t *config, int64_t lanes) {
  const kiln_te_tensor_t *cache = local->output;
  int ndim = cache->ndim;
  const kiln_te_iter_var_t *order[KILN_TIR_MAX_DIMS + 2];
  const kiln_te_iter_var_t *ko = local->op->reduce_axes[0], *ki = NULL;
  int n = 0;
  if (config->unroll_k > 1) {
    KILN_RETURN_IF_ERROR(kiln_te_split(s, local, ko, config->unroll_k, &ko, &ki));
  }
  order[n++] = ko;
  if (ki) {
    order[n++] = ki;
  }
  for (int d = 0; d < ndim; ++d) {
    order[n++] = axis(cache, d);
  }
  KILN_RETURN_IF_ERROR(kiln_te_reorder(local, n, order));
  if (ki) {
    KILN_RETURN_IF_ERROR(kiln_te_unroll(local, ki));
  }
  KILN_RETURN_IF_ERROR(kiln_te_unroll(local, axis(cache, row)));
  return vectorize_columns(s, local, axis(cache, ndim - 1), config->tile_cols, lanes);
}

kiln_status_t kiln_schedule_gemm_x86_apply(const kiln_schedule_gemm_config_t *config, int row,
                                           bool shared_batch, int64_t lanes,
                                           const kiln_te_tensor_t *anchor,
                                           const kiln_te_tensor_t *out,
                                           kiln_te_schedule_t *schedule) {
  KILN_RETURN_IF_ERROR(kiln_schedule_x86_inline_epilogue(schedule, anchor, out));
  kiln_te_stage_t *stage = NULL, *local = NULL;
  KILN_RETURN_IF_ERROR(kiln_schedule_x86_accumulator(schedule, anchor, out, &stage, &local));
  const kiln_te_iter_var_t *tile = NULL;
  KILN_RETURN_IF_ERROR(
      gemm_output_loops(schedule, stage, out, row, shared_batch, config, lanes, &tile));
  KILN_RETURN_IF_ERROR(kiln_te_compute_at(local, stage, tile));
  return gemm_tile_loops(schedule, local, row, config, lanes);
}

kiln_status_t kiln_schedule_dense_x86(const kiln_schedule_target_t *target,
                                      const kiln_compute_args_t *args,
                                      const kiln_compute_result_t *result,
                                      kiln_te_schedule_t *schedule) {
  const kiln_te_tensor_t *anchor = result->outputs[0];
  const kiln_te_tensor_t *out = kiln_schedule_x86_fused_output(schedule, anchor);
  if (!out || out->ndim < 2 || anchor->op->num_reduce_axes != 1) {
    return kiln_schedule_default(target, schedule);
  }
  int row = gemm_row_dim(args, out);
  int64_t m = out->shape[row], n = out->shape[out->ndim - 1];
  int64_t k = anchor->op->reduce_axes[0]->extent;
  kiln_schedule_gemm_config_t config = kiln_schedule_gemm_x86_config(target, m, n, k);
  int64_t fixed_cols = 0;
  if (args->op->id == KILN_OP_DENSE_PACK) {
    fixed_cols = args->inputs[1]->shape[2]; /* whole blocks */
    config.tile_cols = fixed_cols;
  }
  if (target->out_space) {
    kiln_schedule_gemm_x86_space(target, m, n, k, fixed_cols, &config, target->out_space);
  }
  if (target->config && target->config->template_id == KILN_SCHEDULE_TEMPLATE_GEMM) {
    KILN_RETURN_IF_ERROR(kiln_schedule_config_check(target->config));
    kiln_schedule_config_to(target->config, &config);
    config.tile_cols = fixed_cols > 0 ? fixed_cols : config.tile_cols;
  }
  int64_t lanes = kiln_schedule_lanes(target, KILN_DTYPE_FLOAT32);
  return kiln_schedule_gemm_x86_apply(&config, row, batch_shared(args, out, row),
                                      lanes < 16 ? lanes : 16, anchor, out, schedule);
}
