/*
 * The reference interpreter: runs a typed module with the operators'
 * reference kernels. It is the ground truth every fast path is tested
 * against, so it is written to be obviously correct rather than fast.
 *
 * A run walks the function's nodes in the canonical order (ir/order.h:
 * children first, iterative, so a network's depth costs no C stack) and
 * keeps one value per node: a tensor, or a tuple of values. A Var takes the
 * input bound to its parameter, a Constant its tensor (shared, not copied),
 * a Call to an operator gets fresh output tensors shaped by the node's
 * checked type and runs the operator's reference kernel on them, a Call to a
 * Function evaluates the callee's body with its parameters bound to the
 * arguments (once per call), a Tuple gathers its fields and a TupleGetItem
 * picks one. Types come from type inference, which must have run: the
 * interpreter checks that every node has a type before it computes
 * anything, and that each input matches its parameter's annotation.
 *
 * Symbolic dims (docs/dynamic-shapes.md): a parameter's symbolic dim takes
 * its size from the input (one size per named variable, within its upper
 * bound), and a call whose type is not static gets its concrete output type
 * at run time, from the operator's shape function or its type relation on
 * the concrete input types (interp/shapes.h).
 *
 * The interpreter handles every dtype, since it only allocates and hands
 * tensors to kernels; which dtypes work is the kernels' business (float32
 * everywhere; int64 and bool in the elementwise, comparison, selection and
 * data-movement kernels; any dtype in the pure copies). Values are freed as
 * soon as their last reader has run, so peak memory follows the live set of
 * the network, not its size. An error names the node that failed as the text
 * printer does ("in @main, %7 = nn.conv2d: ..."), and on any error every
 * tensor the run made is released.
 */
#ifndef KILN_INTERP_INTERP_H_
#define KILN_INTERP_INTERP_H_

#include "ir/expr.h"
#include "kiln/allocator.h"
#include "kiln/tensor.h"

/* Runs function `function_name` of a typed module (kiln_ir_infer_types has
 * run) on `inputs`, one per parameter in order. Each input must match its
 * parameter's annotation in dtype and shape (INVALID_ARGUMENT naming the
 * parameter otherwise). The results are new tensors made with `allocator`:
 * one for a tensor-typed body, one per field, flattened, for a tuple. The
 * caller releases each and frees the array with kiln_allocator_free. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_run(kiln_module_t *module, const char *function_name,
                                                   int num_inputs, kiln_tensor_t *const *inputs,
                                                   kiln_allocator_t allocator, int *out_num_outputs,
                                                   kiln_tensor_t ***out_outputs);

/* ---- tracing every operator call (debugging, per-node comparisons) ---- */

/* What the node hook sees after an operator's kernel has run. Everything is
 * borrowed for the duration of the call; retain an output to keep it. */
typedef struct kiln_interp_node_event_t {
  const char *function_name; /* the function the run started from: "main" */
  const kiln_expr_t *node;   /* the Call */
  const char *description;   /* "%7 = nn.conv2d", as errors name the node */
  int num_inputs;
  kiln_tensor_t *const *inputs;
  int num_outputs; /* tuple-typed results flattened */
  kiln_tensor_t *const *outputs;
  double seconds; /* the kernel's wall time */
} kiln_interp_node_event_t;

/* A failing hook stops the run; its status comes back annotated with the
 * node. */
typedef kiln_status_t (*kiln_interp_node_hook_fn)(void *user_data,
                                                  const kiln_interp_node_event_t *event);

typedef struct kiln_interp_options_t {
  kiln_allocator_t allocator;         /* results, intermediates and bookkeeping */
  kiln_interp_node_hook_fn node_hook; /* optional: after every operator call */
  void *node_hook_data;
} kiln_interp_options_t;

/* kiln_interp_run with options. With KILN_LOG_LEVEL=debug each operator call
 * also logs a line with the node and the kernel's time. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_run_with_options(
    kiln_module_t *module, const char *function_name, int num_inputs, kiln_tensor_t *const *inputs,
    const kiln_interp_options_t *options, int *out_num_outputs, kiln_tensor_t ***out_outputs);

/* ---- values: sequences and optionals ---- */

struct kiln_interp_value_t;

/* kiln_interp_run on values (interp/value.h), for functions whose inputs or
 * results are sequences, optionals or tuples: each input must be of its
 * parameter's type (a sequence's elements of its dtype, and of its element
 * type when that is known). *out_result is the body's value, made with the
 * options' allocator; the caller releases it with
 * kiln_interp_value_release. The inputs are borrowed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_run_values(kiln_module_t *module,
                                                          const char *function_name, int num_inputs,
                                                          const struct kiln_interp_value_t *inputs,
                                                          const kiln_interp_options_t *options,
                                                          struct kiln_interp_value_t *out_result);

#endif /* KILN_INTERP_INTERP_H_ */
