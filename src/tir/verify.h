/*
 * Well-formedness of a PrimFunc, checked before it is run or compiled.
 *
 * Constructors check each node's dtypes; this checks what only the whole
 * function shows: every variable is used inside the scope that binds it (a
 * loop, a let, or a parameter's symbolic shape), no variable is bound twice
 * (lowering makes fresh variables, so a repeat is a bug), every buffer is
 * accessed where its storage exists (a parameter, or inside its Allocate),
 * and no parallel loop is nested in another (as in TVM, the code generator
 * outlines one level; "fuse them instead"). Errors are INVALID_ARGUMENT and
 * start with the function's name.
 */
#ifndef KILN_TIR_VERIFY_H_
#define KILN_TIR_VERIFY_H_

#include "tir/tir.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_tir_verify_prim_func(kiln_allocator_t allocator,
                                                             const kiln_tir_prim_func_t *func);

#endif /* KILN_TIR_VERIFY_H_ */
