/*
 * The lowering pipeline: the passes of transform.h in their order.
 *
 * loop_partition runs first, on the multi-dimensional accesses tensor
 * lowering makes, where a guard `outer * f + inner < E` is still a plain
 * linear comparison of loop variables; peeling the tail early leaves the
 * main loops without guards, so the vectorizer sees guard-free bodies it can
 * vectorize (only the tails stay scalar). unswitch_guard follows: the
 * guards partition cannot cut (a fused tile loop's, read through a
 * division) are tested once per tile, and the whole tiles get a copy of
 * their loops without them, before vectorize looks at their columns.
 * storage_flatten comes next: every
 * later pass and the code generators see one-index accesses, and the flat
 * index is where vectorize finds the lane-wise (ramp) stride. The schedule's
 * prefetches are injected on the flat indices (their runs are found in the
 * flat linear form), and unswitch_select runs before vectorize so that the
 * copies of a nest it makes vectorize without conditions. simplify runs
 * once before vectorize too: on scalar indices, with the ranges the first
 * partition narrowed, it folds the divisions a reshape or a layout
 * transform writes ((i * 196 + r) // 196 is i when r < 196); made vectors,
 * they would stay a division per lane. vectorize
 * runs before unroll so that an unrolled loop around a vectorized one copies
 * vector statements, and an unrolled loop inside a vectorized body has
 * already become vector code in each copy. A second loop_partition after
 * vectorize trims the loops vectorize left serial because of a tail guard
 * (`for v in 16: if v + 80 < 91` becomes `for v in 11`). simplify then folds what the
 * passes left (substituted constants, ramp bases, guards the tails decide),
 * and verify checks scopes and storage before anyone runs the result. Each
 * pass is pure, so the pipeline is a chain of calls, every intermediate
 * function living in the caller's arena.
 */
#include "tir/simplify.h"
#include "tir/transform.h"
#include "tir/verify.h"

kiln_tir_pipeline_options_t kiln_tir_pipeline_options_default(void) {
  kiln_tir_pipeline_options_t options = {kiln_tir_unroll_options_default()};
  return options;
}

kiln_status_t kiln_tir_prim_func_with_body(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                           const kiln_tir_stmt_t *body,
                                           const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (body == func->body) {
    *out_func = func;
    return KILN_OK;
  }
  return kiln_tir_prim_func_create(arena, func->name, func->num_params, func->params, body,
                                   func->num_attrs, func->attrs, out_func);
}

kiln_status_t kiln_tir_lower_pipeline(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                                      const kiln_tir_pipeline_options_t *options,
                                      const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "lower_pipeline: null function");
  }
  kiln_tir_pipeline_options_t defaults = kiln_tir_pipeline_options_default();
  if (!options) {
    options = &defaults;
  }
  const kiln_tir_prim_func_t *f = func;
  KILN_RETURN_IF_ERROR(kiln_tir_loop_partition(arena, f, &f));
  KILN_RETURN_IF_ERROR(kiln_tir_unswitch_guard(arena, f, &f));
  KILN_RETURN_IF_ERROR(kiln_tir_storage_flatten(arena, f, &f));
  KILN_RETURN_IF_ERROR(kiln_tir_inject_prefetch(arena, f, &f));
  KILN_RETURN_IF_ERROR(kiln_tir_unswitch_select(arena, f, &f));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_simplify_prim_func(arena, f, &f), "simplify %s",
                                func->name);
  KILN_RETURN_IF_ERROR(kiln_tir_vectorize(arena, f, &f));
  KILN_RETURN_IF_ERROR(kiln_tir_loop_partition(arena, f, &f));
  KILN_RETURN_IF_ERROR(kiln_tir_unroll(arena, f, &options->unroll, &f));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_simplify_prim_func(arena, f, &f), "simplify %s",
                                func->name);
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_tir_verify_prim_func(kiln_arena_allocator(arena), f),
                                "lower_pipeline: verify");
  *out_func = f;
  return KILN_OK;
}
