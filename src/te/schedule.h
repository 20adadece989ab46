/*
 * Schedules: how the loops of each compute are ordered and annotated.
 *
 * As in TVM, a schedule has one stage per compute operation reachable from
 * its outputs (placeholders have none), in producer-before-consumer order.
 * A stage keeps every iteration variable it has seen (all_iter_vars: the
 * op's axes and reduce axes, then those split and fuse made), the current
 * loop order (leaf_iter_vars, outermost first) and the relations that link
 * them: split(parent -> outer, inner, by factor or by nparts) and
 * fuse(outer, inner -> fused). Bound inference (lower.h) walks the relations
 * forward to give every derived variable its extent; lowering walks them
 * backward to rebuild each original axis from the loop variables (outer *
 * factor + inner; fused // extent and fused % extent). Per leaf it keeps a
 * loop kind (serial, parallel, vectorized, unrolled) and pragmas, which
 * become the For's kind and annotations.
 *
 * Primitives check their arguments and fail without changing the stage:
 * an axis that is not a leaf of this stage (a split axis, or another
 * stage's) is INVALID_ARGUMENT naming the axis and the stage; so are a
 * factor or nparts <= 0, fusing axes that are not adjacent outer-then-inner
 * leaves or that mix data-parallel and reduction axes, vectorizing or
 * parallelizing a reduction axis, compute_inline of a reduction or an
 * output, compute_at of an output or into a stage that does not read it,
 * and cache_write of a stage already scheduled. compute_at records the
 * consumer stage and leaf (lowering computes the region); cache_write adds
 * a stage. The schedule and its stages live in the arena given at creation.
 */
#ifndef KILN_TE_SCHEDULE_H_
#define KILN_TE_SCHEDULE_H_

#include <stdbool.h>

#include "te/te.h"

#define KILN_TE_MAX_STAGES    32
#define KILN_TE_MAX_ITER_VARS 48
#define KILN_TE_MAX_RELATIONS 32
#define KILN_TE_MAX_PRAGMAS   4

typedef enum kiln_te_relation_kind_e {
  KILN_TE_RELATION_SPLIT,
  KILN_TE_RELATION_FUSE,
  KILN_TE_RELATION_COUNT_
} kiln_te_relation_kind_t;

typedef struct kiln_te_relation_t {
  kiln_te_relation_kind_t kind;
  /* split: parent -> outer, inner; fuse: outer, inner -> fused (= parent). */
  const kiln_te_iter_var_t *parent;
  const kiln_te_iter_var_t *outer;
  const kiln_te_iter_var_t *inner;
  int64_t factor; /* split by factor: > 0, else 0 */
  int64_t nparts; /* split by nparts: > 0, else 0 */
} kiln_te_relation_t;

typedef struct kiln_te_iter_attr_t {
  kiln_tir_for_kind_t for_kind;
  int num_pragmas;
  kiln_tir_annotation_t pragmas[KILN_TE_MAX_PRAGMAS];
} kiln_te_iter_attr_t;

typedef struct kiln_te_stage_t {
  const kiln_te_operation_t *op;
  const kiln_te_tensor_t *output;
  int is_output;          /* one of the schedule's outputs */
  int inlined;            /* compute_inline */
  kiln_tir_scope_t scope; /* of its buffer when it is allocated (cache_write: local) */
  /* compute_at: the consumer stage and its leaf inside whose loop this stage
   * is computed, or NULL (root). */
  const struct kiln_te_stage_t *attach_stage;
  const kiln_te_iter_var_t *attach_ivar;
  int num_all;
  const kiln_te_iter_var_t *all_iter_vars[KILN_TE_MAX_ITER_VARS];
  kiln_te_iter_attr_t attrs[KILN_TE_MAX_ITER_VARS]; /* parallel to all_iter_vars */
  int num_leaves;
  const kiln_te_iter_var_t *leaf_iter_vars[KILN_TE_MAX_ITER_VARS];
  int num_relations;
  kiln_te_relation_t relations[KILN_TE_MAX_RELATIONS];
} kiln_te_stage_t;

typedef struct kiln_te_schedule_t {
  kiln_arena_t *arena;
  int num_outputs;
  const kiln_te_tensor_t *outputs[KILN_TE_MAX_STAGES];
  int num_stages;
  kiln_te_stage_t *stages[KILN_TE_MAX_STAGES]; /* producers first */
  /* Lowering one probe run of a kernel over symbolic dims
   * (compiler/lower_symbolic.c, tir/generalize.h): every split gets its
   * guard, even where the extent divides, and lowering does not simplify,
   * so the runs' loop structure does not depend on what the probe sizes
   * divide. */
  bool probe;
} kiln_te_schedule_t;

/* A schedule over every compute reachable from `outputs` (computes). */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_create_schedule(kiln_arena_t *arena, int num_outputs,
                                                           const kiln_te_tensor_t *const *outputs,
                                                           kiln_te_schedule_t **out_schedule);
/* The stage of a compute tensor; NOT_FOUND when the schedule has none. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_schedule_stage(const kiln_te_schedule_t *schedule,
                                                          const kiln_te_tensor_t *tensor,
                                                          kiln_te_stage_t **out_stage);

/* Splits leaf `axis` into outer * factor + inner (inner extent = factor). */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_split(kiln_te_schedule_t *schedule,
                                                 kiln_te_stage_t *stage,
                                                 const kiln_te_iter_var_t *axis, int64_t factor,
                                                 const kiln_te_iter_var_t **out_outer,
                                                 const kiln_te_iter_var_t **out_inner);
/* Splits leaf `axis` into `nparts` outer iterations (inner extent =
 * ceil(extent / nparts)). */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_split_nparts(
    kiln_te_schedule_t *schedule, kiln_te_stage_t *stage, const kiln_te_iter_var_t *axis,
    int64_t nparts, const kiln_te_iter_var_t **out_outer, const kiln_te_iter_var_t **out_inner);
/* Fuses adjacent leaves outer, inner (in that order) into one. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_fuse(kiln_te_schedule_t *schedule,
                                                kiln_te_stage_t *stage,
                                                const kiln_te_iter_var_t *outer,
                                                const kiln_te_iter_var_t *inner,
                                                const kiln_te_iter_var_t **out_fused);
/* Puts the given leaves, in the given order, into the positions they hold. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_reorder(kiln_te_stage_t *stage, int count,
                                                   const kiln_te_iter_var_t *const *axes);
KILN_MUST_USE_RESULT kiln_status_t kiln_te_vectorize(kiln_te_stage_t *stage,
                                                     const kiln_te_iter_var_t *axis);
KILN_MUST_USE_RESULT kiln_status_t kiln_te_parallel(kiln_te_stage_t *stage,
                                                    const kiln_te_iter_var_t *axis);
KILN_MUST_USE_RESULT kiln_status_t kiln_te_unroll(kiln_te_stage_t *stage,
                                                  const kiln_te_iter_var_t *axis);
/* An annotation key = value on the leaf's loop (strings are copied). */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_pragma(kiln_te_schedule_t *schedule,
                                                  kiln_te_stage_t *stage,
                                                  const kiln_te_iter_var_t *axis, const char *key,
                                                  const char *value);
/* Inlines a non-output, non-reduction stage into its consumers. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_compute_inline(kiln_te_stage_t *stage);

/* Computes `stage` inside the loop of leaf `axis` of `consumer`, over the
 * region of its output the consumer's loops inside that one read (lower.h).
 * The stage must not be an output, inlined or a placeholder's, and `consumer`
 * must come after it in the schedule. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_compute_at(kiln_te_stage_t *stage,
                                                      const kiln_te_stage_t *consumer,
                                                      const kiln_te_iter_var_t *axis);
/* TVM's cache_write: the stage of `tensor` (a compute not yet split, fused
 * or reordered) is split in two: a new stage `<name>_<scope>` computes the
 * body (with the reduce axes) into a buffer of `scope`, and the original
 * stage copies it to `tensor` over the same axes. The new tensor is
 * returned; its stage comes just before. Its axes are named `<axis>_c`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_te_cache_write(kiln_te_schedule_t *schedule,
                                                       const kiln_te_tensor_t *tensor,
                                                       kiln_tir_scope_t scope,
                                                       const kiln_te_tensor_t **out_cache);

#endif /* KILN_TE_SCHEDULE_H_ */
