/*
 * From a schedule to a loop-IR PrimFunc: bound inference, schedule_ops,
 * lower (as in TVM: schedule -> InferBound -> ScheduleOps -> loop nest).
 *
 * Bound inference gives every iteration variable of a stage its range: the
 * root axes keep their domains (the output shape, the reduce axes' ranges),
 * and the relations, walked in the order they were made, give the rest:
 * split by factor f of extent E: inner [0, f), outer [0, ceil(E/f));
 * by nparts p: outer [0, p), inner [0, ceil(E/p)); fuse: [0, outer * inner).
 *
 * schedule_ops emits one loop nest per stage that is not inlined, producers
 * first: one For per leaf in leaf order, with the leaf's kind and pragmas;
 * the original axes rebuilt from the leaves (root.min + outer * f + inner;
 * outer.min + fused // inner_extent, inner.min + fused % inner_extent); and,
 * for each split whose outer * inner extent exceeds its parent's, a guard
 * `if outer * f + inner < extent` around the store, so no access is ever out
 * of bounds. A reduction stores its init value in a nest over the
 * data-parallel leaves that follow the first reduction leaf (fresh `_init`
 * variables), placed just before the loop of that leaf, then accumulates
 * T[idx] = combine(T[idx], source) in the full nest; a reduction split's
 * guard covers the accumulation only. Inlined stages have their body
 * substituted for every load of their buffer, recursively.
 *
 * A compute_at stage is lowered inside its consumer's loop of the attach
 * leaf, over the region the consumer's inner loops read: per output dim,
 * the loads' indices in linear form give a base (the outer loops' terms)
 * plus an interval (the inner loops'), or the whole dim when the loads
 * disagree or are not linear in the inner loops. It stores into a buffer of
 * the region's shape, allocated in its scope at that level, indexed by
 * offsets from the base; guards keep base + offset inside the tensor; the
 * consumer's loads move to that buffer at index - base.
 *
 * lower makes the PrimFunc: `args` (placeholders, outputs, and any
 * intermediate the caller wants to see) are its parameters in order; the
 * other intermediates are Allocated (global scope) around the whole body.
 * A placeholder the body reads that is not among the arguments, or an
 * output missing from them, is INVALID_ARGUMENT naming it. The function is
 * simplified (kiln_tir_simplify_prim_func) and verified.
 */
#ifndef KILN_TE_LOWER_H_
#define KILN_TE_LOWER_H_

#include "te/schedule.h"

typedef struct kiln_te_range_t {
  int64_t min;
  int64_t extent;
} kiln_te_range_t;

/* out_ranges[i] is the range of stage->all_iter_vars[i]. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_infer_bound(const kiln_te_stage_t *stage,
                                                       kiln_te_range_t *out_ranges);

/* The loop nests of every stage, producers first (no Allocates). */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_schedule_ops(const kiln_te_schedule_t *schedule,
                                                        const kiln_tir_stmt_t **out_stmt);

/* The PrimFunc `name` with parameters `args`, simplified and verified. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_lower(const kiln_te_schedule_t *schedule,
                                                 const char *name, int num_args,
                                                 const kiln_te_tensor_t *const *args,
                                                 const kiln_tir_prim_func_t **out_func);

#endif /* KILN_TE_LOWER_H_ */
