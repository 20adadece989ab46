/*
 * Whether a module's types are all static (no symbolic dim); see
 * static_shapes.c.
 */
#ifndef KILN_IR_STATIC_SHAPES_H_
#define KILN_IR_STATIC_SHAPES_H_

#include "ir/expr.h"

/* UNIMPLEMENTED when a parameter or node of any function has a symbolic
 * dim: "<who>: in @main, %3 = nn.dense has the type Tensor[(n, 384), float32]
 * with the symbolic dim n (dim 0); <who> needs static shapes ...". Types
 * must have been inferred. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_module_require_static(const kiln_module_t *module,
                                                                 const char *who);

#endif /* KILN_IR_STATIC_SHAPES_H_ */
