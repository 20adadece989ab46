/*
 * The function of one operator call: fn(%p0: T0, %p1: T1, ...) { op(%p0,
 * %p1, ..., attrs) }, typed, in a graph-IR module of its own. It is how a
 * single call (an eager call) becomes the same kind of primitive function
 * fuse_ops makes, so the kernel cache keys it with the graph compiler's key
 * (key.h) and lowers it with the graph compiler's lowering (lower.h): an
 * eager call and a graph-compiler kernel of one operator over the same types
 * are one kernel.
 *
 * Each input is its own parameter, even when the caller passes one tensor
 * twice (the kernel then reads one buffer through two arguments).
 */
#ifndef KILN_COMPILER_CALL_FUNCTION_H_
#define KILN_COMPILER_CALL_FUNCTION_H_

#include "ir/expr.h"
#include "op/op.h"

/* Makes the module and its function "main". The operator's type relation
 * runs first: its error (naming the operator and the types) comes back
 * unchanged when it refuses the inputs. The caller destroys *out_module;
 * *out_function lives in it. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_compiler_call_function(kiln_allocator_t allocator, const kiln_op_t *op, const void *attrs,
                            int num_inputs, const kiln_type_t *const *input_types,
                            kiln_module_t **out_module, kiln_function_t **out_function);

#endif /* KILN_COMPILER_CALL_FUNCTION_H_ */
