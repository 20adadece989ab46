/*
 * The post order, the dataflow graph and its post-dominator tree; see
 * dominator.h.
 *
 * Edges are gathered into one array and sorted by source with a counting
 * sort into compressed rows (edge_begin), which keeps each node's readers in
 * the order they were added. The tree is built from the last node to the
 * first, so every reader of a node (a later node) already has its place in
 * the tree; the least common ancestor of two tree nodes walks the deeper one
 * up until both meet, as TVM's DominatorTree::LeastCommonAncestor does, and
 * folds every pattern it passes into the edge pattern (the largest wins:
 * OpPatternKind is ordered from the most to the least fusable).
 */
#include "pass/dominator.h"

#include <string.h>

int kiln_dataflow_child_count(const kiln_expr_t *expr) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL:
    return ((const kiln_call_t *)expr)->num_args;
  case KILN_EXPR_KIND_TUPLE:
    return ((const kiln_tuple_t *)expr)->num_fields;
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return 1;
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return 0;
}

kiln_expr_t *kiln_dataflow_child_at(const kiln_expr_t *expr, int index) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL:
    return ((const kiln_call_t *)expr)->args[index];
  case KILN_EXPR_KIND_TUPLE:
    return ((const kiln_tuple_t *)expr)->fields[index];
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    return ((const kiln_tuple_get_item_t *)expr)->tuple;
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  return NULL;
}

int32_t kiln_dataflow_order_index(const kiln_hashmap_t *index, const kiln_expr_t *expr) {
  void *value = NULL;
  kiln_hashmap_get(index, expr, &value);
  return (int32_t)(uintptr_t)value - 1;
}

typedef struct frame_t {
  kiln_expr_t *expr;
  int next;
} frame_t;

/* A node is put in the index with no position (NULL) when its walk starts,
 * so that it is entered once; it gets its position when it is done. */
static kiln_status_t push_frame(kiln_array_t *frames, kiln_hashmap_t *index, kiln_expr_t *expr) {
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(index, expr, NULL));
  frame_t frame = {.expr = expr, .next = 0};
  return kiln_array_push(frames, &frame);
}

static kiln_status_t walk_frames(const kiln_function_t *function, kiln_array_t *frames,
                                 kiln_array_t *nodes, kiln_hashmap_t *index) {
  KILN_RETURN_IF_ERROR(push_frame(frames, index, function->body));
  while (kiln_array_count(frames) > 0) {
    frame_t *top = kiln_array_at(frames, kiln_array_count(frames) - 1);
    if (top->next < kiln_dataflow_child_count(top->expr)) {
      kiln_expr_t *child = kiln_dataflow_child_at(top->expr, top->next++);
      if (!kiln_hashmap_contains(index, child)) {
        KILN_RETURN_IF_ERROR(push_frame(frames, index, child));
      }
      continue;
    }
    kiln_expr_t *done = top->expr;
    kiln_array_pop(frames, NULL);
    size_t position = kiln_array_count(nodes);
    if (position >= INT32_MAX / 2) {
      return KILN_STATUS(RESOURCE_EXHAUSTED, "too many nodes in one function: %zu", position);
    }
    KILN_RETURN_IF_ERROR(kiln_array_push(nodes, &done));
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(index, done, (void *)(uintptr_t)(position + 1)));
  }
  return KILN_OK;
}

kiln_status_t kiln_dataflow_order_compute(const kiln_function_t *function, kiln_array_t *nodes,
                                          kiln_hashmap_t *index) {
  kiln_array_t frames;
  kiln_array_initialize(&frames, nodes->allocator, sizeof(frame_t));
  kiln_status_t status = walk_frames(function, &frames, nodes, index);
  kiln_array_deinitialize(&frames);
  return status;
}

static kiln_op_pattern_t combine(kiln_op_pattern_t a, kiln_op_pattern_t b) {
  return a > b ? a : b;
}

kiln_status_t kiln_dataflow_graph_initialize(kiln_dataflow_graph_t *graph,
                                             kiln_allocator_t allocator, int32_t num_nodes) {
  memset(graph, 0, sizeof(*graph));
  graph->allocator = allocator;
  kiln_array_initialize(&graph->edges, allocator, sizeof(kiln_dataflow_edge_t));
  size_t count = num_nodes > 0 ? (size_t)num_nodes : 1;
  kiln_status_t status = kiln_allocator_malloc_array(allocator, count, sizeof(kiln_op_pattern_t),
                                                     (void **)&graph->patterns);
  if (!status) {
    status =
        kiln_allocator_malloc_zeroed(allocator, count * sizeof(bool), (void **)&graph->extern_ref);
  }
  if (!status) {
    status = kiln_allocator_malloc_zeroed(allocator, (count + 1) * sizeof(int32_t),
                                          (void **)&graph->edge_begin);
  }
  if (status) {
    kiln_dataflow_graph_deinitialize(graph);
    return status;
  }
  graph->num_nodes = num_nodes;
  for (int32_t i = 0; i < num_nodes; ++i) {
    graph->patterns[i] = KILN_OP_PATTERN_OPAQUE;
  }
  return KILN_OK;
}

void kiln_dataflow_graph_deinitialize(kiln_dataflow_graph_t *graph) {
  kiln_allocator_free(graph->allocator, graph->patterns);
  kiln_allocator_free(graph->allocator, graph->extern_ref);
  kiln_allocator_free(graph->allocator, graph->edge_begin);
  kiln_array_deinitialize(&graph->edges);
  graph->patterns = NULL;
  graph->extern_ref = NULL;
  graph->edge_begin = NULL;
  graph->num_nodes = 0;
}

kiln_status_t kiln_dataflow_graph_add_edge(kiln_dataflow_graph_t *graph, int32_t source,
                                           int32_t node, kiln_op_pattern_t pattern) {
  if (source < 0 || node >= graph->num_nodes || source >= node) {
    return KILN_STATUS(INTERNAL,
                       "dataflow edge %d -> %d of a graph of %d nodes does not go forward", source,
                       node, graph->num_nodes);
  }
  kiln_dataflow_edge_t edge = {.source = source, .node = node, .pattern = pattern};
  return kiln_array_push(&graph->edges, &edge);
}

kiln_status_t kiln_dataflow_graph_finalize(kiln_dataflow_graph_t *graph) {
  size_t count = kiln_array_count(&graph->edges);
  kiln_dataflow_edge_t *sorted = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(graph->allocator, count > 0 ? count : 1,
                                                   sizeof(*sorted), (void **)&sorted));
  int32_t *begin = graph->edge_begin;
  memset(begin, 0, ((size_t)graph->num_nodes + 1) * sizeof(int32_t));
  const kiln_dataflow_edge_t *edges = kiln_array_data(&graph->edges);
  for (size_t i = 0; i < count; ++i) {
    begin[edges[i].source + 1] += 1;
  }
  for (int32_t i = 0; i < graph->num_nodes; ++i) {
    begin[i + 1] += begin[i];
  }
  /* Place each edge at its source's next free slot, using begin[] as the
   * cursor, then shift the offsets back. */
  for (size_t i = 0; i < count; ++i) {
    sorted[begin[edges[i].source]++] = edges[i];
  }
  for (int32_t i = graph->num_nodes; i > 0; --i) {
    begin[i] = begin[i - 1];
  }
  begin[0] = 0;
  if (count > 0) {
    memcpy(kiln_array_data(&graph->edges), sorted, count * sizeof(*sorted));
  }
  kiln_allocator_free(graph->allocator, sorted);
  return KILN_OK;
}

int32_t kiln_dataflow_graph_output_count(const kiln_dataflow_graph_t *graph, int32_t node) {
  return graph->edge_begin[node + 1] - graph->edge_begin[node];
}

const kiln_dataflow_edge_t *kiln_dataflow_graph_output(const kiln_dataflow_graph_t *graph,
                                                       int32_t node, int32_t index) {
  const kiln_dataflow_edge_t *edges = kiln_array_data(&graph->edges);
  return &edges[graph->edge_begin[node] + index];
}

/* The least common ancestor of tree nodes a and b (-1: none), folding the
 * patterns of the nodes passed into *pattern. */
static int32_t common_ancestor(const kiln_postdom_tree_t *tree, int32_t a, int32_t b,
                               kiln_op_pattern_t *pattern) {
  while (a != b) {
    if (a < 0 || b < 0) {
      return -1;
    }
    if (tree->depth[a] < tree->depth[b]) {
      *pattern = combine(*pattern, tree->patterns[b]);
      b = tree->parent[b];
    } else if (tree->depth[b] < tree->depth[a]) {
      *pattern = combine(*pattern, tree->patterns[a]);
      a = tree->parent[a];
    } else {
      *pattern = combine(*pattern, combine(tree->patterns[a], tree->patterns[b]));
      a = tree->parent[a];
      b = tree->parent[b];
    }
  }
  return a;
}

static void place_node(const kiln_dataflow_graph_t *graph, kiln_postdom_tree_t *tree,
                       int32_t node) {
  int32_t count = kiln_dataflow_graph_output_count(graph, node);
  if (graph->extern_ref[node] || count == 0) {
    tree->parent[node] = -1;
    tree->depth[node] = 1;
    tree->patterns[node] = KILN_OP_PATTERN_OPAQUE;
    return;
  }
  kiln_op_pattern_t pattern = KILN_OP_PATTERN_ELEMWISE;
  const kiln_dataflow_edge_t *first = kiln_dataflow_graph_output(graph, node, 0);
  int32_t parent = first->node;
  pattern = combine(pattern, first->pattern);
  for (int32_t i = 1; i < count && parent >= 0; ++i) {
    const kiln_dataflow_edge_t *edge = kiln_dataflow_graph_output(graph, node, i);
    parent = common_ancestor(tree, parent, edge->node, &pattern);
    pattern = combine(pattern, edge->pattern);
  }
  tree->parent[node] = parent;
  tree->depth[node] = parent >= 0 ? tree->depth[parent] + 1 : 1;
  tree->patterns[node] = pattern;
}

kiln_status_t kiln_postdom_tree_compute(const kiln_dataflow_graph_t *graph,
                                        kiln_allocator_t allocator, kiln_postdom_tree_t *out_tree) {
  memset(out_tree, 0, sizeof(*out_tree));
  out_tree->allocator = allocator;
  size_t count = graph->num_nodes > 0 ? (size_t)graph->num_nodes : 1;
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, count, sizeof(int32_t), (void **)&out_tree->parent);
  if (!status) {
    status =
        kiln_allocator_malloc_array(allocator, count, sizeof(int32_t), (void **)&out_tree->depth);
  }
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, count, sizeof(kiln_op_pattern_t),
                                         (void **)&out_tree->patterns);
  }
  if (status) {
    kiln_postdom_tree_deinitialize(out_tree);
    return status;
  }
  out_tree->num_nodes = graph->num_nodes;
  for (int32_t node = graph->num_nodes - 1; node >= 0; --node) {
    place_node(graph, out_tree, node);
  }
  return KILN_OK;
}

void kiln_postdom_tree_deinitialize(kiln_postdom_tree_t *tree) {
  kiln_allocator_free(tree->allocator, tree->parent);
  kiln_allocator_free(tree->allocator, tree->depth);
  kiln_allocator_free(tree->allocator, tree->patterns);
  tree->parent = NULL;
  tree->depth = NULL;
  tree->patterns = NULL;
  tree->num_nodes = 0;
}
