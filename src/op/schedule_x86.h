/*
 * The pieces of the x86 schedules that the convolution schedules
 * (schedule_x86.c) and the matrix-product schedules (schedule_x86_dense.c)
 * share: the output a fused group writes, its inlined epilogue, the local
 * accumulator, and fusing a run of leaves (their contracts are described
 * at the top of schedule_x86.c).
 */
#ifndef KILN_OP_SCHEDULE_X86_H_
#define KILN_OP_SCHEDULE_X86_H_

#include "te/schedule.h"

/* The output a fused schedule writes when the anchor's tuned loops can
 * carry it (the anchor itself, or one output of the anchor's shape), else
 * NULL. */
const kiln_te_tensor_t *kiln_schedule_x86_fused_output(const kiln_te_schedule_t *s,
                                                       const kiln_te_tensor_t *anchor);
/* Inlines every stage but the anchor, `final` and reductions. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_x86_inline_epilogue(kiln_te_schedule_t *s,
                                                                     const kiln_te_tensor_t *anchor,
                                                                     const kiln_te_tensor_t *final);
/* The stage of `final` and the local accumulating stage: a local cache of
 * the anchor when the anchor is `final`, else the anchor itself. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_x86_accumulator(kiln_te_schedule_t *s,
                                                                 const kiln_te_tensor_t *anchor,
                                                                 const kiln_te_tensor_t *final,
                                                                 kiln_te_stage_t **out_stage,
                                                                 kiln_te_stage_t **out_accumulator);
/* A split of an extent `n` by at most `widest`: n itself when narrower,
 * else the widest divisor of n from `widest` down to half of it (no tail),
 * else `widest` (te lowering's guarded tail). */
int64_t kiln_schedule_x86_split_width(int64_t n, int64_t widest);
/* Fuses the adjacent leaves axes[0..count) (outer first) into one. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_x86_fuse_all(kiln_te_schedule_t *s,
                                                              kiln_te_stage_t *st, int count,
                                                              const kiln_te_iter_var_t *const *axes,
                                                              const kiln_te_iter_var_t **out_fused);

#endif /* KILN_OP_SCHEDULE_X86_H_ */
