/*
 * The loop IR as text, in the style of TVM's TIR script.
 *
 *   @T.prim_func
 *   def add(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4, 5), "float32")):
 *       for i in T.parallel(4):
 *           for j in T.serial(5):
 *               B[i, j] = A[i, j] + T.float32(1.0)
 *
 * Operators print with Python's precedence and only the parentheses it
 * needs (the right operand of a left-associative operator gets them when it
 * binds equally, so the tree shape is always visible). int32 constants print
 * bare, other constants with their dtype (T.int64(3), T.float32(0.5),
 * T.bool(True)); floordiv is `//`, floormod `%`, logic `and`/`or`/`not`.
 * Intrinsics print as T.<name>(...), vectors as T.ramp(start, stride, lanes)
 * and T.broadcast(value, lanes). An Allocate prints as
 * `name = T.decl_buffer(shape, "dtype", scope="local")` followed by its body
 * at the same indentation, as TVM's script sugar does; a LetStmt as
 * `x: T.int32 = value`; an assertion as `assert cond, "message"`. Tests
 * compare this text exactly, so it is stable: four-space indentation, one
 * statement a line, a final newline.
 */
#ifndef KILN_TIR_PRINTER_H_
#define KILN_TIR_PRINTER_H_

#include "base/strbuf.h"
#include "tir/tir.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_tir_print_expr(kiln_strbuf_t *sb,
                                                       const kiln_tir_expr_t *expr);
/* Statements at `indent` levels of four spaces, each line ending in '\n'. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_print_stmt(kiln_strbuf_t *sb,
                                                       const kiln_tir_stmt_t *stmt, int indent);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_print_prim_func(kiln_strbuf_t *sb,
                                                            const kiln_tir_prim_func_t *func);

/* The same into a new string the caller frees with `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_expr_to_text(kiln_allocator_t allocator,
                                                         const kiln_tir_expr_t *expr,
                                                         char **out_text);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_stmt_to_text(kiln_allocator_t allocator,
                                                         const kiln_tir_stmt_t *stmt,
                                                         char **out_text);
KILN_MUST_USE_RESULT kiln_status_t kiln_tir_prim_func_to_text(kiln_allocator_t allocator,
                                                              const kiln_tir_prim_func_t *func,
                                                              char **out_text);

#endif /* KILN_TIR_PRINTER_H_ */
