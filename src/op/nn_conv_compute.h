/*
 * Compute rules and tuned x86 schedules of the convolution and matrix
 * product operators: nn.conv2d, nn.contrib_conv2d_NCHWc, nn.conv3d,
 * nn.conv2d_transpose, nn.conv3d_transpose (nn_conv_compute.c), nn.dense, nn.matmul,
 * nn.batch_matmul (nn_dense_compute.c), and the schedules of
 * schedule_x86.c, named by the family files' operator definitions.
 *
 * The rules build the reference kernels' computation as one sum reduction
 * per output element, indexed through the operators' layouts (any order of
 * the primal axes, and the channel splits of the NCHWc form), with the
 * zero padding of conv2d as a separate stage T_<op>_pad. The reference
 * kernels handle float32 only, so the rules return UNIMPLEMENTED for any
 * other dtype, naming the operator.
 *
 * The schedules follow TVM's topi x86: conv2d_NCHWc as in
 * conv2d_avx_common.py (a register tile of reg_n output columns by the
 * output-channel block, accumulated in a local buffer), and dense as a
 * blocked GEMM (4 rows by one vector of columns per tile). Shapes the
 * schedule does not cover (other layouts, outputs that are not matrices)
 * get the default schedule.
 */
#ifndef KILN_OP_NN_CONV_COMPUTE_H_
#define KILN_OP_NN_CONV_COMPUTE_H_

#include "op/op.h"
#include "op/schedule_config.h"

/* Columns of the conv2d_NCHWc register tile (TVM's reg_n). */
#define KILN_SCHEDULE_NCHWC_REG_N 8
/* The widest depthwise register tile (accumulators; with the 9 weights of a
 * 3x3 kernel and the data in flight they fill AVX-512's 32 registers). */
#define KILN_SCHEDULE_DEPTHWISE_REG_N 14
/* The GEMM register tile's limits: accumulators (vectors), rows, and
 * vectors of columns. */
#define KILN_SCHEDULE_GEMM_MAX_ACCUMULATORS 16
#define KILN_SCHEDULE_GEMM_MAX_ROWS         8
#define KILN_SCHEDULE_GEMM_MAX_VECTORS      8

/* The conv2d_NCHWc register tile's accumulators (vectors) at most. */
#define KILN_SCHEDULE_NCHWC_ACCUMULATORS 16
/* A row block's accumulator at most (bytes: it stays in the L1 cache), the
 * parallel tasks it keeps at least, and the reduction per input chunk
 * (kh * kw * ic block) below which a conv keeps the register tile alone
 * (a 1x1 conv: loading and storing its accumulators per chunk would cost
 * more than its weights' reuse saves). */
#define KILN_SCHEDULE_NCHWC_BLOCK_BYTES (32 * 1024)
#define KILN_SCHEDULE_NCHWC_MIN_TASKS   8
#define KILN_SCHEDULE_NCHWC_ROW_REDUCE  64
/* How many input chunks ahead a row block fetches its weights (and data):
 * two chunks give the L2 cache a chunk's compute time to bring them. */
#define KILN_SCHEDULE_NCHWC_PREFETCH 2
/* The wide register tiles: 24 accumulators, 4 output chunks by 6 columns
 * (or 3 by 8), each broadcast feeding 3 or 4 multiply-adds. A row block
 * takes 4 x 6 for stride-1 convs at least KILN_SCHEDULE_NCHWC_WIDE_MIN_OW
 * wide (4 whole tiles: the tail of a narrower row costs more than the
 * wider tile saves); the register tile alone takes either for any
 * stride-1 conv whose chunks they divide. */
#define KILN_SCHEDULE_NCHWC_WIDE_ACCUMULATORS 24
#define KILN_SCHEDULE_NCHWC_WIDE_TILE_OC      4
#define KILN_SCHEDULE_NCHWC_WIDE_TILE_OW      6
#define KILN_SCHEDULE_NCHWC_WIDE_MIN_OW       24
/* The input channels of a row block's reduction unrolled per step. */
#define KILN_SCHEDULE_NCHWC_UNROLL_IC 4
/* The most output-channel tiles (n x oc_chunks / tile_oc) whose row blocks
 * each copy the padded rows they read (pad_rows): each copies one block of
 * input rows per input chunk, so more tiles copy the same rows more often.
 * The copied rows of one input chunk must fit
 * KILN_SCHEDULE_NCHWC_PAD_ROWS_BYTES (a stack buffer). */
#define KILN_SCHEDULE_NCHWC_PAD_ROWS_TILES 2
#define KILN_SCHEDULE_NCHWC_PAD_ROWS_BYTES (32 * 1024)
/* The tuning spaces' bounds (op/schedule_config.h): accumulator vectors of
 * a register tile at most (of 32 vector registers, the rest hold weights
 * and broadcasts), and a row block's accumulator bytes at most (beyond the
 * default's, a workspace instead of the stack). */
#define KILN_SCHEDULE_TUNE_MAX_ACCUMULATORS 28
#define KILN_SCHEDULE_TUNE_MAX_BLOCK_BYTES  (2 * KILN_SCHEDULE_NCHWC_BLOCK_BYTES)

/* The knobs of the conv2d_NCHWc schedule (schedule_x86.c). */
typedef struct kiln_schedule_conv_config_t {
  int64_t tile_ow;   /* output columns per register tile */
  int64_t tile_oc;   /* output channel chunks per register tile */
  int64_t block_oh;  /* rows of the row block (0: the register tile alone) */
  int64_t prefetch;  /* (row block) input chunks ahead whose weights and data
                        are fetched while this one computes (0: none) */
  int64_t unroll_ic; /* (row block) input channels of the block unrolled per
                        step of the reduction (0 or 1: none; divides the block) */
  int64_t pad_rows;  /* (row block, padded conv) 1: the padded input rows a
                        block reads are copied per input chunk into a stack
                        buffer inside the block; 0: the padded input is made
                        whole first, in a parallel loop of its own */
} kiln_schedule_conv_config_t;

/* The shape facts of a conv2d_NCHWc the default knobs depend on. */
typedef struct kiln_schedule_conv_shape_t {
  int64_t n, oc_chunks, oh, ow, oc_block, groups;
  int64_t reduce_per_chunk; /* kh * kw * the input-channel block */
  int64_t ic_chunks;        /* the reduction's input-channel chunks (per group) */
  int64_t ic_block;         /* the reduction's input-channel block */
  int64_t stride_w;         /* the horizontal stride */
  int64_t stride_h;         /* the vertical stride */
  int64_t kh;               /* the kernel's height */
  int64_t padded_w;         /* the input's width with its pads (0: no padding) */
} kiln_schedule_conv_shape_t;

/* The knobs of the GEMM schedule (schedule_x86_dense.c). */
typedef struct kiln_schedule_gemm_config_t {
  int64_t tile_rows;     /* output rows per register tile */
  int64_t tile_cols;     /* output columns per register tile */
  int64_t columns_outer; /* 1: the parallel loop runs column blocks outside row blocks */
  int64_t unroll_k;      /* reduction steps per unrolled iteration (1: not unrolled) */
} kiln_schedule_gemm_config_t;

/* nn.conv2d, nn.contrib_conv2d_NCHWc and nn.conv3d. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_conv2d(const kiln_compute_args_t *args,
                                                       kiln_compute_result_t *out_result);
/* nn.conv2d_transpose and nn.conv3d_transpose. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_conv2d_transpose(const kiln_compute_args_t *args,
                                                                 kiln_compute_result_t *out_result);
/* nn.dense, nn.matmul and nn.batch_matmul. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_gemm(const kiln_compute_args_t *args,
                                                     kiln_compute_result_t *out_result);

/* TVM's x86 conv2d_NCHWc schedule (data NCHW{c}c, kernel OIHW{i}i{o}o,
 * output NCHW{c}c; other layouts: the default schedule). */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_conv2d_nchwc_x86(
    const kiln_schedule_target_t *target, const kiln_compute_args_t *args,
    const kiln_compute_result_t *result, struct kiln_te_schedule_t *schedule);
/* The default knobs of the conv2d_NCHWc schedule for a conv's shape. */
kiln_schedule_conv_config_t kiln_schedule_conv_x86_config(const kiln_schedule_target_t *target,
                                                          const kiln_schedule_conv_shape_t *shape);
/* The tuning space of a conv2d_NCHWc of `shape` around its default knobs. */
void kiln_schedule_conv_x86_space(const kiln_schedule_target_t *target,
                                  const kiln_schedule_conv_shape_t *shape,
                                  const kiln_schedule_conv_config_t *default_config,
                                  kiln_schedule_space_t *out_space);
/* The conv2d_NCHWc schedule (plain, or grouped with blocks inside groups)
 * with the given knobs: `anchor` is the conv's output, `out` the group's
 * output of the same shape (or the anchor), `ic_block` the reduction's
 * split of the input channels. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_conv2d_nchwc_x86_apply(
    const kiln_schedule_conv_config_t *config, int64_t ic_block,
    const struct kiln_te_tensor_t *anchor, const struct kiln_te_tensor_t *out,
    struct kiln_te_schedule_t *schedule);
/* The register-tiled GEMM schedule of nn.dense, nn.matmul and
 * nn.batch_matmul with an output of rank >= 2 (others: the default), with
 * the knobs of kiln_schedule_gemm_x86_config. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_dense_x86(const kiln_schedule_target_t *target,
                                                           const kiln_compute_args_t *args,
                                                           const kiln_compute_result_t *result,
                                                           struct kiln_te_schedule_t *schedule);
/* The default knobs for an output of m rows and n columns over k. */
kiln_schedule_gemm_config_t kiln_schedule_gemm_x86_config(const kiln_schedule_target_t *target,
                                                          int64_t m, int64_t n, int64_t k);
/* The tuning space of a GEMM of m rows by n columns over k around its
 * default knobs; `fixed_cols` (a packed weight's block) is the only column
 * choice when above 0; unroll_k takes the powers of two up to 8 that
 * divide k. */
void kiln_schedule_gemm_x86_space(const kiln_schedule_target_t *target, int64_t m, int64_t n,
                                  int64_t k, int64_t fixed_cols,
                                  const kiln_schedule_gemm_config_t *default_config,
                                  kiln_schedule_space_t *out_space);
/* The text a dense_pack record is keyed by: a float32 product of m rows by
 * n columns over k (m 0 when not known: no record applies). */
#define KILN_SCHEDULE_WORKLOAD_CHARS 96
void kiln_schedule_dense_pack_workload(int64_t m, int64_t n, int64_t k,
                                       char out_text[KILN_SCHEDULE_WORKLOAD_CHARS]);
/* The space of pack_dense's column block for such a product: whole vectors
 * up to KILN_SCHEDULE_GEMM_MAX_VECTORS of them that N needs (N itself below
 * one vector), and `default_block`. */
void kiln_schedule_dense_pack_space(const kiln_schedule_target_t *target, int64_t n,
                                    int64_t default_block, kiln_schedule_space_t *out_space);
/* The GEMM schedule with the given knobs, the tile's rows along output dim
 * `row`, its columns in vectors of `lanes`: `anchor` is the product's
 * output, `out` the group's output of the same shape (or the anchor).
 * `shared_batch`: the other leading dims read one right operand, so the
 * column blocks may run outside them. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_gemm_x86_apply(
    const kiln_schedule_gemm_config_t *config, int row, bool shared_batch, int64_t lanes,
    const struct kiln_te_tensor_t *anchor, const struct kiln_te_tensor_t *out,
    struct kiln_te_schedule_t *schedule);

#endif /* KILN_OP_NN_CONV_COMPUTE_H_ */
