/*
 * Type inference over functions: fills every node's checked_type and every
 * function's ret_type (Relay's InferType, with NNVM's per-operator
 * FInferShape/FInferType rules doing the work at each Call).
 *
 * Nodes are visited in the canonical order (ir/order.h): a Var takes its
 * annotation, a Constant the type of its tensor, a Call to an operator the
 * result of the operator's type relation over its arguments' types, a Call to
 * a Function the function's return type after checking each argument against
 * the parameter's annotation, a Tuple the tuple of its fields' types and a
 * TupleGetItem its field's type. An error names the failing node as the
 * printer does, with its operator: "in @main, %7 = nn.conv2d: ...".
 *
 * A Function node's result is its ret_type; its own checked_type stays NULL
 * (the IR has no function type). Inference overwrites what was there, so it
 * can rerun after a pass; the verifier is what compares stored types with
 * the rules (ir/verify.h).
 */
#ifndef KILN_IR_INFER_H_
#define KILN_IR_INFER_H_

#include "ir/expr.h"

/* Infers every function of the module, in the order they were added. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_infer_types(kiln_module_t *module);

/* Infers one function (and the primitive functions it calls); `name` is
 * used in error messages ("main"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_infer_function(kiln_module_t *module, const char *name,
                                                          kiln_function_t *function);

/* The type the rules give `expr` from its inputs' checked types (which must
 * be set): the single step of inference, which the verifier reruns to check
 * stored types. Types are made in `arena`. A Function yields NULL. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_infer_node(kiln_arena_t *arena, kiln_expr_t *expr,
                                                      const kiln_type_t **out_type);

/* The function type of `function`: its parameters' annotations and its
 * ret_type (NULL when not inferred yet), as an operator taking it sees it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_infer_func_type(kiln_arena_t *arena,
                                                           const kiln_function_t *function,
                                                           const kiln_type_t **out_type);

#endif /* KILN_IR_INFER_H_ */
