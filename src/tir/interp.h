/*
 * The loop-IR interpreter: runs a PrimFunc on kiln tensors, slowly and
 * exactly.
 *
 * It is the reference every lowering and code generator is tested against:
 * it walks the statements and evaluates every expression node as written,
 * vector lanes as arrays, float32 arithmetic rounded as C float arithmetic
 * is, integers wrapped to their dtype's width (two's complement, as the
 * generated code's wrapping arithmetic), floordiv/floormod rounding toward
 * -inf. Bad programs are errors, never crashes: a load or store outside its
 * buffer is OUT_OF_RANGE naming the buffer and the index, a failed assertion
 * is INVALID_ARGUMENT with its message. Every error names the function.
 * The operations C leaves undefined are values, as compiled code computes
 * them (base/scalar_ops.h): an integer zero divisor gives 0, a float-to-int
 * cast truncates and saturates (NaN gives 0).
 *
 * Arguments are one tensor per parameter buffer, checked for dtype, rank and
 * shape; a shape dimension that is a variable not yet bound is bound to the
 * tensor's dimension (symbolic shapes). Allocate makes a zeroed scratch
 * buffer for its body from the allocator. Parallel loops run serially: that
 * their iterations are independent is the schedule's business. Select
 * evaluates both values (as in TVM); IfThenElse only the branch taken.
 * Supported dtypes: float32, float64, int8..int64, uint8..uint32, bool.
 */
#ifndef KILN_TIR_INTERP_H_
#define KILN_TIR_INTERP_H_

#include "kiln/tensor.h"
#include "tir/tir.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_tir_interp_run(kiln_allocator_t allocator,
                                                       const kiln_tir_prim_func_t *func,
                                                       int num_args, kiln_tensor_t *const *args);

#endif /* KILN_TIR_INTERP_H_ */
