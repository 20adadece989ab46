/*
 * What the graph passes share: a typed rewriter over a whole module, node
 * builders that type what they make, use counts, and evaluating a call of
 * constants with the reference kernels.
 *
 * The rewriter is the memoized mutator (ir/functor.h) with every rule
 * replaced by "rebuild, then type the rebuilt node": so when a pass's call
 * rule runs, the call's arguments are already rewritten and every node has
 * its checked type, new ones included (kiln_ir_infer_node, one step, since
 * the children are typed). A pass supplies one rule for operator calls; it
 * returns the call unchanged or any typed replacement. One mutator serves
 * every function of the module, so a primitive function that is both a
 * module function and a callee is rewritten once. Changed functions are set
 * back with kiln_module_set_function and re-inferred, so a pass leaves a
 * module that verifies.
 */
#ifndef KILN_PASS_REWRITE_H_
#define KILN_PASS_REWRITE_H_

#include "ir/functor.h"
#include "op/op.h"
#include "pass/pass.h"

typedef struct kiln_pass_rewriter_t kiln_pass_rewriter_t;

/* Called on every call (of an operator, or of a function: check call->op)
 * after its arguments were rewritten; writes
 * the call itself or its replacement (typed) to *out_expr. */
typedef kiln_status_t (*kiln_pass_call_rule_fn)(kiln_pass_rewriter_t *rewriter, kiln_call_t *call,
                                                kiln_expr_t **out_expr);

struct kiln_pass_rewriter_t {
  kiln_expr_mutator_t mutator; /* first: the rules get &mutator.functor */
  kiln_module_t *module;
  kiln_pass_context_t *context;
  kiln_pass_call_rule_fn call_rule; /* may be NULL: rebuild and type only */
  void *state;                      /* the pass's own */
  int64_t rewrites;                 /* the rule counts what it changed here */
  kiln_expr_t *original;            /* the node being rewritten, as it was before */
  bool forward_items;               /* TupleGetItem(Tuple(...), i) -> field i */
  int64_t forwarded;                /* how many TupleGetItems were forwarded */
};

/* Rewrites every function of `module` with `call_rule`, setting the changed
 * ones back and re-inferring types. *out_rewrites (may be NULL) gets the
 * rule's count. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_rewrite_module(kiln_module_t *module,
                                                            kiln_pass_context_t *context,
                                                            kiln_pass_call_rule_fn call_rule,
                                                            void *state, int64_t *out_rewrites);
/* The same with a rewriter the caller set up (call_rule, state,
 * forward_items); module and context are filled in. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_rewrite_module_with(kiln_module_t *module,
                                                                 kiln_pass_context_t *context,
                                                                 kiln_pass_rewriter_t *rewriter);

/* Makes a typed call of `op`. `settings` is NULL or a NULL-terminated list
 * of (attribute name, text) pairs applied over the defaults. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_make_call(kiln_module_t *module, const kiln_op_t *op,
                                                       int num_args, kiln_expr_t *const *args,
                                                       const char *const *settings,
                                                       kiln_expr_t **out_expr);
/* kiln_pass_make_call, then, when every argument is a Constant, the call
 * evaluated (kiln_pass_evaluate_call) in its place when it can be. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_make_call_folded(kiln_module_t *module,
                                                              const kiln_op_t *op, int num_args,
                                                              kiln_expr_t *const *args,
                                                              const char *const *settings,
                                                              kiln_expr_t **out_expr);
/* A rank-0 float32 Constant. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_make_scalar_f32(kiln_module_t *module, float value,
                                                             kiln_expr_t **out_expr);
/* True when every argument of `call` is a Constant. */
bool kiln_pass_args_constant(const kiln_call_t *call);
/* Makes a typed call of `op` with an existing attrs struct (NULL: defaults). */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_make_call_attrs(kiln_module_t *module,
                                                             const kiln_op_t *op, int num_args,
                                                             kiln_expr_t *const *args,
                                                             const void *attrs,
                                                             kiln_expr_t **out_expr);
/* Makes a typed Constant holding `tensor` (the module takes a reference). */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_make_constant(kiln_module_t *module,
                                                           kiln_tensor_t *tensor,
                                                           kiln_expr_t **out_expr);
/* Gives `expr` its checked type when it has none (its inputs are typed). */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_type_node(kiln_module_t *module, kiln_expr_t *expr);

/* True when `expr` is a one-element float32 Constant; its value goes to
 * *out_value. */
bool kiln_pass_constant_scalar_f32(const kiln_expr_t *expr, float *out_value);

/* True when `expr` is a call of `op`. */
bool kiln_pass_is_call_of(const kiln_expr_t *expr, const kiln_op_t *op);
/* The tensor type of a typed node, or NULL (tuple or untyped). */
const kiln_tensor_type_t *kiln_pass_tensor_type(const kiln_expr_t *expr);

/* Evaluates an operator call whose arguments are all Constants with the
 * operator's reference kernel, into a Constant (a Tuple of Constants for a
 * tuple result). *out_expr is NULL when the call cannot be folded here: no
 * reference kernel, nested tuple result, or a kernel that reports
 * UNIMPLEMENTED for its dtypes. Other kernel errors are returned. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_evaluate_call(kiln_module_t *module,
                                                           const kiln_call_t *call,
                                                           kiln_expr_t **out_expr);

/* Use counts: how many times each node is an argument, field, tuple,
 * callee or body in the functions of `module` (each distinct parent edge
 * counts once per occurrence). */
typedef struct kiln_pass_uses_t {
  kiln_hashmap_t counts; /* kiln_expr_t * -> (uintptr_t) count */
} kiln_pass_uses_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_pass_uses_compute(const kiln_module_t *module,
                                                          kiln_allocator_t allocator,
                                                          kiln_pass_uses_t *out_uses);
void kiln_pass_uses_deinitialize(kiln_pass_uses_t *uses);
size_t kiln_pass_uses_count(const kiln_pass_uses_t *uses, const kiln_expr_t *expr);

/* Counts operator calls (op NULL: every call, function calls included) in
 * the functions of `module`, each node once. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_count_calls(const kiln_module_t *module,
                                                         const kiln_op_t *op,
                                                         kiln_allocator_t allocator,
                                                         int64_t *out_count);

#endif /* KILN_PASS_REWRITE_H_ */
