/*
 * What the interpreter precomputes once per function: which nodes to
 * evaluate, in what order, what each reads, and how often each is read.
 *
 * The order is the canonical one (ir/order.h). It also holds the nodes of
 * the functions that calls reach (a callee's body comes before its Function
 * node), but those are evaluated per call, with the call's arguments, by the
 * callee's own plan. So a node is "evaluated" here only when the body reaches
 * it through operands (call arguments, tuple fields, the indexed tuple)
 * without entering a callee: a walk over the order from the body backwards,
 * which works because every node comes after everything it reads.
 *
 * For each evaluated node the plan lists its operands as positions in the
 * order, and counts how many operand slots read each node (`uses`). The
 * interpreter copies these counts per evaluation and frees a value when its
 * count reaches zero, which keeps the live set small. A Var is matched to its
 * parameter position once; a Var that is not a parameter of this function
 * (a callee that reads its caller's variables) is an error.
 */
#ifndef KILN_INTERP_PLAN_H_
#define KILN_INTERP_PLAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/expr.h"
#include "ir/order.h"

typedef struct kiln_interp_plan_t {
  const kiln_function_t *function;
  kiln_ir_order_t order;
  size_t count;          /* nodes in the order; the body is the last */
  bool *evaluated;       /* count flags */
  int32_t *uses;         /* count: operand slots of evaluated nodes that read the node */
  size_t *operand_start; /* count + 1: operands of node i are operands[start[i]..start[i+1]) */
  size_t *operands;      /* positions in the order */
  int *param_index;      /* count: a Var's parameter position, -1 for other nodes */
} kiln_interp_plan_t;

/* Plans `function`. Errors name nodes as `naming` (the order of the function
 * the run started from, which contains this one's nodes) numbers them:
 * INVALID_ARGUMENT for a Var that is not one of the function's parameters,
 * UNIMPLEMENTED for a Function used as a value rather than called. */
KILN_MUST_USE_RESULT kiln_status_t kiln_interp_plan_create(kiln_allocator_t allocator,
                                                           const kiln_function_t *function,
                                                           const kiln_ir_order_t *naming,
                                                           kiln_interp_plan_t **out_plan);
void kiln_interp_plan_destroy(kiln_allocator_t allocator, kiln_interp_plan_t *plan);

/* Operand `k` of `expr` (call arguments, tuple fields, the indexed tuple),
 * or NULL past the last one. A call's callee is not an operand. */
kiln_expr_t *kiln_interp_operand(const kiln_expr_t *expr, int k);

/* How errors name `expr`: as kiln_ir_order_describe names it in `naming`
 * ("%7 = nn.conv2d"), or by its kind when it is not there. */
const char *kiln_interp_describe(const kiln_ir_order_t *naming, const kiln_expr_t *expr,
                                 char *buffer);

#endif /* KILN_INTERP_PLAN_H_ */
