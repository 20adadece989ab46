/*
 * The fused graph for graphviz (`kiln graph MODEL -o FILE.dot`): main's
 * dataflow after fuse_ops, one node per input (an ellipse), per call of a
 * primitive function (a box listing its operators and its output type) and
 * per call of an operator left in main; constants are counted in their
 * consumer's label ("+2 params") rather than drawn; tuples and TupleGetItem
 * become edges labelled with the field. main's result is a double octagon.
 */
#ifndef KILN_COMPILER_DOT_H_
#define KILN_COMPILER_DOT_H_

#include "base/strbuf.h"
#include "ir/expr.h"

/* Appends the dot text of `module`'s main (typed) to `sb`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_graph_dot(const kiln_module_t *module,
                                                           kiln_strbuf_t *sb);

#endif /* KILN_COMPILER_DOT_H_ */
