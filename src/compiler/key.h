/*
 * Keys of kernels: the text that decides a kernel's code, so two functions
 * with equal keys compile to the same kernel (TVM's structural hash of a
 * primitive function in the compile engine's cache).
 *
 * A function's key lists its parameters' types, then each node of its body
 * in the canonical order: an operator call as "name(attrs)[arg numbers]",
 * a one-element constant by its value and type, tuples and TupleGetItem by
 * their operands. Variable names do not take part; constants bigger than one
 * element are refused by lowering anyway and keyed by their address.
 */
#ifndef KILN_COMPILER_KEY_H_
#define KILN_COMPILER_KEY_H_

#include "base/strbuf.h"
#include "ir/expr.h"

/* Appends the key of `function` to `sb`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_function_key(const kiln_function_t *function,
                                                              kiln_strbuf_t *sb);

#endif /* KILN_COMPILER_KEY_H_ */
