/*
 * The dataflow graph fuse_ops partitions, and its post-dominator tree (TVM's
 * IndexedForwardGraph and DominatorTree); and the post order of a function's
 * nodes that fuse_ops, plan_memory and alter_op_layout walk.
 *
 * The graph is a function's nodes in post order (children first), each with
 * the fusion pattern of the node and the list of its output edges: which
 * later node reads it, and with what pattern (the reader's pattern, or
 * elementwise for a broadcast whose argument already has the result's
 * shape). A node the function's caller sees (the body, a parameter, a large
 * constant, a tuple field that is not a tensor) is marked extern: fusion
 * must keep it a group's output. Edges always go from a lower index to a
 * higher one, so they are collected in any order and sorted by source once.
 *
 * The post-dominator tree gives each node the closest node that every path
 * from it to the function's result passes through, walking the nodes from
 * the last to the first: a node's parent is the least common ancestor, in
 * the tree built so far, of the nodes reading it, and its pattern the most
 * restrictive (largest) pattern met on the way there. An extern node, or a
 * node whose readers meet only at the root, has no parent.
 */
#ifndef KILN_PASS_DOMINATOR_H_
#define KILN_PASS_DOMINATOR_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/array.h"
#include "base/hashmap.h"
#include "ir/expr.h"
#include "op/op.h"

/* ---- the nodes of a function, in post order ---- */

/* The inputs of a node as dataflow sees them: a Call's arguments (not its
 * callee), a Tuple's fields, a TupleGetItem's tuple; none for the others. */
int kiln_dataflow_child_count(const kiln_expr_t *expr);
kiln_expr_t *kiln_dataflow_child_at(const kiln_expr_t *expr, int index);

/* Appends `function`'s nodes to `nodes` (kiln_expr_t *, children first, each
 * once, the body last; callee functions are not entered) and maps each to
 * its position in `index` (a pointer-keyed map, initialized by the caller;
 * read it with kiln_dataflow_order_index). The walk is iterative. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dataflow_order_compute(const kiln_function_t *function,
                                                               kiln_array_t *nodes,
                                                               kiln_hashmap_t *index);
/* The position of `expr`, or -1 when it is not in the order. */
int32_t kiln_dataflow_order_index(const kiln_hashmap_t *index, const kiln_expr_t *expr);

/* ---- the graph ---- */

typedef struct kiln_dataflow_edge_t {
  int32_t source;
  int32_t node; /* the reader */
  kiln_op_pattern_t pattern;
} kiln_dataflow_edge_t;

typedef struct kiln_dataflow_graph_t {
  kiln_allocator_t allocator;
  int32_t num_nodes;
  kiln_op_pattern_t *patterns; /* per node */
  bool *extern_ref;            /* per node */
  kiln_array_t edges;          /* kiln_dataflow_edge_t; sorted by source after finalize */
  int32_t *edge_begin;         /* num_nodes + 1 offsets into edges, after finalize */
} kiln_dataflow_graph_t;

/* A graph of `num_nodes` nodes, all opaque and not extern, with no edges. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dataflow_graph_initialize(kiln_dataflow_graph_t *graph,
                                                                  kiln_allocator_t allocator,
                                                                  int32_t num_nodes);
void kiln_dataflow_graph_deinitialize(kiln_dataflow_graph_t *graph);
/* An edge from `source` to its reader `node` (source < node, else INTERNAL). */
KILN_MUST_USE_RESULT kiln_status_t kiln_dataflow_graph_add_edge(kiln_dataflow_graph_t *graph,
                                                                int32_t source, int32_t node,
                                                                kiln_op_pattern_t pattern);
/* Sorts the edges by source (stable: readers keep the order they were added). */
KILN_MUST_USE_RESULT kiln_status_t kiln_dataflow_graph_finalize(kiln_dataflow_graph_t *graph);
/* The output edges of `node`, after finalize. */
int32_t kiln_dataflow_graph_output_count(const kiln_dataflow_graph_t *graph, int32_t node);
const kiln_dataflow_edge_t *kiln_dataflow_graph_output(const kiln_dataflow_graph_t *graph,
                                                       int32_t node, int32_t index);

typedef struct kiln_postdom_tree_t {
  kiln_allocator_t allocator;
  int32_t num_nodes;
  int32_t *parent;             /* the immediate post-dominator, or -1 */
  int32_t *depth;              /* 1 for a node without parent */
  kiln_op_pattern_t *patterns; /* the largest pattern on the paths to the parent */
} kiln_postdom_tree_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_postdom_tree_compute(const kiln_dataflow_graph_t *graph,
                                                             kiln_allocator_t allocator,
                                                             kiln_postdom_tree_t *out_tree);
void kiln_postdom_tree_deinitialize(kiln_postdom_tree_t *tree);

#endif /* KILN_PASS_DOMINATOR_H_ */
