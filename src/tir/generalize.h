/*
 * Generalizing kernels lowered at probe sizes into one kernel over
 * run-time extents (the loop-IR half of compiling symbolic dims).
 *
 * The compiler lowers a kernel whose inputs have symbolic dims several
 * times, each time with every dimension variable replaced by a different
 * probe size (compiler/lower.c), so that every compute rule, schedule and
 * te lowering works on the static shapes it was written for. This pass
 * takes those PrimFuncs and makes one whose extents are expressions over
 * int32 variables, one per dimension variable, which the code generators
 * bind at kernel entry from the argument tensors' shapes (a parameter
 * buffer's dim that is a bare variable binds it; docs/codegen-c.md).
 *
 * The runs must have the same structure: their printed text, with every
 * digit masked, must be equal (a schedule that chose other loops for other
 * sizes is refused). Integer constants are then compared position by
 * position (a mutator's visiting order; buffers in order of first use,
 * parameters first). A constant equal in every run stays. One that differs
 * is fitted: first as a * m + b, m a variable or a product of two or three, a
 * and b integers, fitted on two runs and checked on the others; else as
 * ceil(E / d) or floor(E / d) of such an E fitted elsewhere in the same
 * functions (a split's outer extent), d in [2, 4096], checked on every
 * run. Float constants that differ must be an integer (a count, cast) or
 * the reciprocal of one (a mean's 1/n) fitted the same way. Anything else
 * is UNIMPLEMENTED naming the value in each run.
 *
 * Soundness: the probe runs are lowered with every split guarded and
 * nothing simplified (te/schedule.h's probe), so no guard is left out
 * because a probe size happened to divide an extent; the pipeline's
 * simplifier and loop partition (symbolic cuts, pass_loop_partition.c)
 * then remove what they can prove for every size. Fits are checked on all
 * four runs (two large and two small probes), which catches a divided form
 * matching by chance; tests run the results at several sizes against the
 * reference.
 */
#ifndef KILN_TIR_GENERALIZE_H_
#define KILN_TIR_GENERALIZE_H_

#include "tir/tir.h"

/* How many probe runs the pass takes. */
#define KILN_TIR_GENERALIZE_RUNS 4
/* Most variables. */
#define KILN_TIR_GENERALIZE_MAX_VARS 16

typedef struct kiln_tir_generalize_vars_t {
  int count;
  const char *names[KILN_TIR_GENERALIZE_MAX_VARS];
  /* probes[r][k]: the size variable k took in run r; distinct per run. */
  int64_t probes[KILN_TIR_GENERALIZE_RUNS][KILN_TIR_GENERALIZE_MAX_VARS];
} kiln_tir_generalize_vars_t;

/* One PrimFunc over the variables from the runs' (see above). The result
 * is made in `arena` and shares the first run's unchanged nodes, so that
 * run must live in `arena` too. Every variable must appear as a bare dim of
 * a parameter, and a parameter's derived dims may use only variables bound
 * by it or by earlier parameters. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_generalize(kiln_arena_t *arena,
                                                       const kiln_tir_prim_func_t *const *runs,
                                                       const kiln_tir_generalize_vars_t *vars,
                                                       const kiln_tir_prim_func_t **out_func);

#endif /* KILN_TIR_GENERALIZE_H_ */
