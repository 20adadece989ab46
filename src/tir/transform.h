/*
 * Lowering passes of the loop IR (TVM's tir.transform), and the pipeline
 * that runs them between tensor-expression lowering and code generation.
 *
 * Each pass is a pure function from a PrimFunc to a new PrimFunc: it never
 * mutates its input, builds new nodes in `arena` and shares the untouched
 * ones (a function nothing changed comes back as the same pointer). Errors
 * are statuses that start with the pass's and the function's name
 * ("vectorize add: ...") and name the node involved.
 *
 * - loop_partition peels the tail of a loop whose body holds a guard
 *   `lin(v, inner loop vars) < E` (an IfThenElse without else) that is
 *   provably true for a prefix of v's range: a main loop over the prefix
 *   without the guard, then a tail loop that keeps it. Pieces of one
 *   iteration become their body with v substituted (no loop).
 * - unswitch_guard turns the guards a loop's inner loops cannot break
 *   unless they break them at one corner of their ranges into one test
 *   before the loop's body, with a copy of the body without those guards
 *   (pass_unswitch_guard.c): a tiled kernel's whole tiles run unguarded.
 * - storage_flatten rewrites every multi-dimensional load and store into a
 *   one-index access of a flat view of the buffer (docs/loop-ir.md,
 *   "Lowering passes", for the convention).
 * - vectorize turns a vectorized loop of constant extent 2..KILN_TIR_MAX_LANES
 *   into its body over vector lanes (ramp, broadcast, vector loads and
 *   stores); a body it cannot vectorize stays a serial loop.
 * - unroll replaces an unrolled loop of constant extent <= max_extent by a
 *   SeqStmt of copies of its body; longer ones stay serial.
 * - inject_prefetch fetches, in a loop annotated "prefetch" = D, the lines
 *   iteration v + D will read of the parameters (pass_inject_prefetch.c).
 * - unswitch_select turns a select whose condition a loop nest does not
 *   change into a branch around copies of the nest (pass_unswitch_select.c).
 * - kiln_tir_lower_pipeline runs loop_partition, unswitch_guard, storage_flatten,
 *   inject_prefetch, unswitch_select, vectorize, loop_partition, unroll,
 *   simplify and verify, in that order.
 */
#ifndef KILN_TIR_TRANSFORM_H_
#define KILN_TIR_TRANSFORM_H_

#include "tir/tir.h"

/* Default largest extent unroll expands. */
#define KILN_TIR_UNROLL_DEFAULT_MAX 16

typedef struct kiln_tir_unroll_options_t {
  int64_t max_extent; /* >= 0; KILN_TIR_UNROLL_DEFAULT_MAX by default */
} kiln_tir_unroll_options_t;

typedef struct kiln_tir_pipeline_options_t {
  kiln_tir_unroll_options_t unroll;
} kiln_tir_pipeline_options_t;

/* {KILN_TIR_UNROLL_DEFAULT_MAX}. */
kiln_tir_unroll_options_t kiln_tir_unroll_options_default(void);
kiln_tir_pipeline_options_t kiln_tir_pipeline_options_default(void);

KILN_MUST_USE_RESULT kiln_status_t kiln_tir_loop_partition(kiln_arena_t *arena,
                                                           const kiln_tir_prim_func_t *func,
                                                           const kiln_tir_prim_func_t **out_func);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_unswitch_guard(kiln_arena_t *arena,
                                                           const kiln_tir_prim_func_t *func,
                                                           const kiln_tir_prim_func_t **out_func);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_storage_flatten(kiln_arena_t *arena,
                                                            const kiln_tir_prim_func_t *func,
                                                            const kiln_tir_prim_func_t **out_func);
/* The For annotation asking inject_prefetch to fetch what iteration v + D
 * reads during iteration v; its value is D (a positive integer). */
#define KILN_TIR_PREFETCH_ANNOTATION "prefetch"

KILN_MUST_USE_RESULT kiln_status_t kiln_tir_inject_prefetch(kiln_arena_t *arena,
                                                            const kiln_tir_prim_func_t *func,
                                                            const kiln_tir_prim_func_t **out_func);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_unswitch_select(kiln_arena_t *arena,
                                                            const kiln_tir_prim_func_t *func,
                                                            const kiln_tir_prim_func_t **out_func);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_vectorize(kiln_arena_t *arena,
                                                      const kiln_tir_prim_func_t *func,
                                                      const kiln_tir_prim_func_t **out_func);
/* `options` may be NULL: the defaults. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_unroll(kiln_arena_t *arena,
                                                   const kiln_tir_prim_func_t *func,
                                                   const kiln_tir_unroll_options_t *options,
                                                   const kiln_tir_prim_func_t **out_func);
/* `func` with `body` (`func` itself when `body` is its body), for the passes. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_tir_prim_func_with_body(kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
                             const kiln_tir_stmt_t *body, const kiln_tir_prim_func_t **out_func);
/* loop_partition -> unswitch_guard -> storage_flatten -> inject_prefetch ->
 * unswitch_select -> simplify -> vectorize -> loop_partition -> unroll ->
 * simplify -> verify. `options` may be NULL: the defaults. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_lower_pipeline(
    kiln_arena_t *arena, const kiln_tir_prim_func_t *func,
    const kiln_tir_pipeline_options_t *options, const kiln_tir_prim_func_t **out_func);

#endif /* KILN_TIR_TRANSFORM_H_ */
