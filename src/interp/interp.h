/*
 * The reference interpreter: runs a typed module with the operators'
 * reference kernels. It is the ground truth every fast path is tested
 * against, so it is written to be obviously correct rather than fast.
 *
 * (Design paragraph: to be completed by the implementation.)
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
                                                   kiln_allocator_t allocator,
                                                   int *out_num_outputs,
                                                   kiln_tensor_t ***out_outputs);

#endif /* KILN_INTERP_INTERP_H_ */
