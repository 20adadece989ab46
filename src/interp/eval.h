/*
 * The interpreter's evaluation loop: one function body at a time.
 *
 * kiln_interp_eval_function evaluates a planned function (interp/plan.h) with
 * its parameters bound to argument values: it walks the plan's order, gives
 * every evaluated node a value (interp/value.h) and, after each node, drops
 * one use of each operand, releasing a value whose uses are spent. A Call to a
 * Function recurses into the callee's plan, made on its first call and kept
 * in the run's context for the next ones; the recursion follows call nesting
 * (a fused group inside main), never graph depth.
 *
 * Errors are annotated with the failing node as the printer names it in the
 * function the run started from, so nodes inside a callee keep the numbers
 * `kiln show` gives them: "in @main, %4 = call of %3: %2 = nn.relu: ...".
 */
#ifndef KILN_INTERP_EVAL_H_
#define KILN_INTERP_EVAL_H_

#include <stdbool.h>

#include "base/hashmap.h"
#include "interp/interp.h"
#include "interp/plan.h"
#include "interp/value.h"

typedef struct kiln_interp_context_t {
  kiln_allocator_t allocator;
  const char *function_name;     /* the function the run started from */
  kiln_interp_node_hook_fn hook; /* may be NULL */
  void *hook_data;
  bool timed;                    /* a hook or debug logging wants kernel times */
  const kiln_interp_plan_t *top; /* its plan: its order names every node */
  kiln_hashmap_t callee_plans;   /* kiln_function_t * -> kiln_interp_plan_t * */
} kiln_interp_context_t;

/* Sets up a context (no allocation); `top` is set by the caller. */
void kiln_interp_context_initialize(kiln_interp_context_t *context,
                                    const kiln_interp_options_t *options,
                                    const char *function_name);
/* Destroys the callee plans made during the run. */
void kiln_interp_context_deinitialize(kiln_interp_context_t *context);

/* Evaluates `plan`'s function with parameter j bound to *args[j] (borrowed)
 * into *out_value (owned by the caller). */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_eval_function(kiln_interp_context_t *context,
                                                             const kiln_interp_plan_t *plan,
                                                             const kiln_interp_value_t *const *args,
                                                             kiln_interp_value_t *out_value);

/* Calls `function` (a branch or a loop body) with parameter j bound to
 * *args[j] (borrowed); its plan is made on the first call and kept. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_call(kiln_interp_context_t *context,
                                                    const kiln_function_t *function,
                                                    const kiln_interp_value_t *const *args,
                                                    kiln_interp_value_t *out_value);

/* The values of the arguments of call `index` of `plan`, as an array the
 * caller frees with `allocator` (the values are borrowed from `values`). */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_operand_values(
    kiln_allocator_t allocator, const kiln_interp_plan_t *plan, size_t index,
    const kiln_interp_value_t *values, const kiln_interp_value_t ***out_args);

/* Evaluates node `index` of `plan`, a call of an operator of op/control.c
 * (if, loop, scan, seq.*, optional.*), from its operands in `values`
 * (interp/control.c). */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_eval_control(kiln_interp_context_t *context,
                                                            const kiln_interp_plan_t *plan,
                                                            size_t index,
                                                            const kiln_interp_value_t *values,
                                                            kiln_interp_value_t *out_value);

#endif /* KILN_INTERP_EVAL_H_ */
