/*
 * The canonical order of a function's nodes, shared by every walk that must
 * agree on names: the text printer numbers temporaries %0, %1, ... in this
 * order, and type inference and the verifier name a failing node the same
 * way, so an error's "%7" is the line "%7 = ..." of `kiln show`.
 *
 * The order is a post-order over the body: children before parents,
 * arguments left to right, each node once however many parents it has. A
 * Call whose callee is a Function visits the callee first (its body nodes,
 * then the Function node itself), then the arguments. Vars and Constants are
 * part of the order but are not numbered; every other node (Call, Tuple,
 * TupleGetItem, nested Function) gets the next number. The walk is
 * iterative, so deep graphs do not overflow the C stack, and it detects a
 * cycle (possible only in a hand-corrupted graph) as an error.
 */
#ifndef KILN_IR_ORDER_H_
#define KILN_IR_ORDER_H_

#include <stdbool.h>

#include "base/array.h"
#include "ir/expr.h"

typedef struct kiln_ir_order_t {
  kiln_array_t nodes;   /* kiln_expr_t *, children first; the body last */
  kiln_array_t numbers; /* int per node: its %N, or -1 for Var and Constant */
} kiln_ir_order_t;

/* Orders the nodes reachable from `function`'s body (the function's own
 * parameters appear where they are used; the function node itself is not
 * included). INVALID_ARGUMENT "cycle through %N" on a cycle. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_order_compute(const kiln_function_t *function,
                                                         kiln_allocator_t allocator,
                                                         kiln_ir_order_t *out_order);
void kiln_ir_order_deinitialize(kiln_ir_order_t *order);

size_t kiln_ir_order_count(const kiln_ir_order_t *order);
kiln_expr_t *kiln_ir_order_node(const kiln_ir_order_t *order, size_t index);
/* The node's %N, or -1 for Var and Constant. */
int kiln_ir_order_number(const kiln_ir_order_t *order, size_t index);

/* True for the kinds that get a number (everything but Var and Constant). */
bool kiln_ir_expr_is_numbered(const kiln_expr_t *expr);

/* How errors name node `index`, as the printer shows it: "%7 = nn.conv2d",
 * "%8 = Tuple", "%9 = TupleGetItem", "%10 = fn", "%11 = call of %10",
 * "%x" (a Var), "Constant". Writes into `buffer` and returns it. */
#define KILN_IR_ORDER_NAME_CAPACITY 96
const char *kiln_ir_order_describe(const kiln_ir_order_t *order, size_t index, char *buffer);

#endif /* KILN_IR_ORDER_H_ */
