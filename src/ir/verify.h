/*
 * The IR verifier: structural checks that hold between any two passes.
 *
 * - every Var used in a function's body is a parameter of that function (a
 *   primitive function is closed: it sees only its own parameters), and a
 *   parameter belongs to one function only;
 * - the graph is acyclic (ir/order.h detects cycles);
 * - every node has a checked type, and it is what the type rules compute
 *   from the node's inputs (Var: its annotation; Call: the operator's
 *   relation; Function: the body's type is the ret_type; ...);
 * - the module has a `main` function.
 *
 * Errors name the function and the node as the printer does ("in @main,
 * %3 = add: ...").
 */
#ifndef KILN_IR_VERIFY_H_
#define KILN_IR_VERIFY_H_

#include "ir/expr.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_ir_verify(kiln_module_t *module);

#endif /* KILN_IR_VERIFY_H_ */
