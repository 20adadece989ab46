/*
 * The default pipeline: every pass of KILN_PASS_LIST (passes.h), in its
 * order, which follows relay.build's Optimize: remove unused
 * functions, simplify inference, common subexpressions, parallel convs,
 * constant folding, scale folding, canonical ops, fast math, dead code.
 * Sequential (pass.h) decides which run by opt_level, disabled and required
 * passes; the graph compiler runs this list.
 */
#ifndef KILN_PASS_PIPELINE_H_
#define KILN_PASS_PIPELINE_H_

#include "pass/pass.h"

/* The passes in order; the array is static. */
void kiln_pass_default_pipeline(const kiln_pass_t *const **out_passes, int *out_count);

/* Runs the default pipeline on `module` under `context`. An opt-in pass
 * (opt_level 4: fast_math, combine_parallel_conv2d) whose name is set as an
 * option to "1" is required first (added to the context's required passes). */
/* UNIMPLEMENTED naming the first node of the module that the pipeline and
 * the graph compiler do not take: a control-flow, sequence or optional
 * operator, or a value of a sequence or optional type
 * (docs/control-flow.md). kiln_pass_run_default_pipeline and
 * kiln_compiler_build check it first. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_check_static(kiln_module_t *module);

KILN_MUST_USE_RESULT kiln_status_t kiln_pass_run_default_pipeline(kiln_module_t *module,
                                                                  kiln_pass_context_t *context);

#endif /* KILN_PASS_PIPELINE_H_ */
