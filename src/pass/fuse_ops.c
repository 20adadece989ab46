/*
 * fuse_ops: partitions every function of the module into groups of operator
 * calls and turns each group into a primitive function called from where the
 * group was, as TVM's FuseOps (GraphPartitioner) does. The graph compiler
 * lowers primitive functions only, so afterwards every operator call of a
 * function sits inside a primitive function.
 *
 * 1. Index: the function's nodes in post order (iterative walk, not into
 *    callee functions), each with a pattern and its readers (dominator.h):
 *    a Call has its operator's pattern, and the edge from an argument has the
 *    call's pattern, turned elementwise for a broadcast whose argument already
 *    has the result's shape; a Tuple is TUPLE with injective edges from its
 *    tensor fields; a TupleGetItem is injective; a scalar constant of a simple
 *    dtype is elementwise (it may be fused in); parameters, other constants,
 *    calls of functions and the body are opaque or extern.
 * 2. The post-dominator tree of that graph.
 * 3. Groups, a union-find over the nodes, fused in three phases over the
 *    nodes in post order; a node joins its immediate post-dominator's group
 *    with every node on the paths between them when:
 *    - phase 0: it is out-elementwise-fusable (conv2d, dense, pooling), the
 *      paths to the post-dominator are elementwise and every node on them is
 *      broadcast or simpler: conv + bias + relu, a residual add;
 *    - phases 0 and 1: it is elementwise or broadcast and the post-dominator
 *      is reached through injective or reduction edges; the nodes on the
 *      way are injective or simpler, and the post-dominator itself may be
 *      injective, a reduction, or a conv's group (an elementwise op fuses
 *      into the reduction after it; nothing fuses after a reduction);
 *    - phase 1: it is injective or a tuple, over injective paths;
 *    - phase 2: an injective node fuses into a tuple that was itself fused
 *      into injective ops after it.
 *    Opaque nodes never fuse. A fusion that would make a group larger than
 *    "fuse_ops.max_depth" nodes (default 256) or than
 *    KILN_OP_MAX_FUNCTION_COMPUTES operator calls and scalar constants (what
 *    one kernel's tensor expressions hold) is refused, and so is one
 *    whose function would take more than KILN_OP_MAX_FUNCTION_ARGS
 *    parameters (TVM's max_function_args: the distinct values read from
 *    outside the merged group, counted over its members, which each group
 *    keeps as a ring; the group stays split there, so every kernel keeps
 *    within what the lowering takes; split_args, required before, leaves no
 *    single call over it). At opt_level 0 nothing fuses: each call is alone
 *    in its group.
 * 4. Rewrite: walking the nodes in post order, a group holding an operator
 *    call becomes, at its last node (the only one read outside the group),
 *    a primitive function whose parameters are the group's inputs from
 *    outside (p0, p1, ... annotated with their types; large constants are
 *    inputs too, as TVM keeps weights outside, while scalar constants fused
 *    into the group stay in its body), and a call of it with those inputs.
 *    A group whose last node is a tuple-typed operator (split) returns the
 *    tuple, and the TupleGetItems after it pick the fields. Tuples and
 *    TupleGetItems left alone stay in the function as they are. Types are
 *    inferred again at the end.
 */
#include <stdio.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/log.h"
#include "ir/infer.h"
#include "pass/dominator.h"
#include "pass/passes.h"

#define FUSE_DEFAULT_MAX_DEPTH 256

typedef struct group_t {
  int32_t parent; /* -1 for a root */
  kiln_op_pattern_t pattern;
  int32_t num_nodes;
  int32_t num_computes; /* operator calls and scalar constants among them */
  bool anchored;        /* holds an out-elementwise-fusable op */
} group_t;

typedef struct fuser_t {
  kiln_allocator_t allocator;
  kiln_module_t *module;
  kiln_function_t *function;
  kiln_array_t nodes;   /* kiln_expr_t *, post order */
  kiln_hashmap_t index; /* kiln_expr_t * -> (void *)(uintptr_t)(index + 1); NULL while open */
  kiln_dataflow_graph_t graph;
  kiln_postdom_tree_t tree;
  group_t *groups;
  int32_t *marks; /* visit stamps, per node */
  int32_t stamp;
  int32_t *group_marks; /* per group root, for counting each group once */
  int32_t group_stamp;
  int32_t *ring;          /* per node, the next member of its group (a cycle) */
  kiln_array_t roots_met; /* int32_t, the group roots a fusion would merge */
  kiln_array_t stack;     /* int32_t, for the walks */
  int64_t max_depth;
  /* the rewrite, per node (roots, last and has_op indexed by group root) */
  int32_t *roots;           /* the node's group root */
  int32_t *last;            /* the group's last member: its output */
  bool *has_op;             /* the group holds an operator call */
  int32_t *member_begin;    /* num_nodes + 1 offsets into members, by root */
  int32_t *members;         /* node indices grouped by root, ascending */
  kiln_expr_t **new_exprs;  /* the node's value in the rewritten function */
  kiln_expr_t **inner;      /* the node's copy inside its group's function */
  kiln_array_t children;    /* kiln_expr_t *, scratch */
  kiln_array_t params;      /* kiln_var_t *, of the function being made */
  kiln_array_t args;        /* kiln_expr_t *, its arguments */
  kiln_hashmap_t param_map; /* outside kiln_expr_t * -> its kiln_var_t * */
  int num_functions;        /* primitive functions made */
  int num_calls;            /* operator calls seen */
} fuser_t;

/* ---- post order ---- */

static int32_t node_index(const fuser_t *f, const kiln_expr_t *expr) {
  return kiln_dataflow_order_index(&f->index, expr);
}

static kiln_status_t order_nodes(fuser_t *f) {
  return kiln_dataflow_order_compute(f->function, &f->nodes, &f->index);
}

static kiln_expr_t *node_at(const fuser_t *f, int32_t index) {
  return KILN_ARRAY_AT(&f->nodes, kiln_expr_t *, (size_t)index);
}

/* ---- the dataflow graph ---- */

static bool is_simple_scalar(const kiln_constant_t *constant) {
  if (kiln_tensor_ndim(constant->value) != 0) {
    return false;
  }
  switch (kiln_tensor_dtype(constant->value)) {
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_INT64:
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_FLOAT64:
  case KILN_DTYPE_BOOL:
    return true;
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_UINT32:
  case KILN_DTYPE_UINT64:
  case KILN_DTYPE_COUNT_:
    break;
  }
  return false;
}

/* A broadcast reading an argument of the result's shape reads it elementwise. */
static kiln_op_pattern_t argument_pattern(const kiln_call_t *call, const kiln_expr_t *arg,
                                          kiln_op_pattern_t pattern) {
  const kiln_tensor_type_t *result = kiln_type_as_tensor(call->base.checked_type);
  const kiln_tensor_type_t *input = kiln_type_as_tensor(arg->checked_type);
  if (pattern == KILN_OP_PATTERN_BROADCAST && result && input &&
      kiln_shape_equal(result->ndim, result->shape, input->ndim, input->shape)) {
    return KILN_OP_PATTERN_ELEMWISE;
  }
  return pattern;
}

static kiln_status_t index_call(fuser_t *f, int32_t index, const kiln_call_t *call) {
  kiln_op_pattern_t pattern = call->op ? call->op->pattern : KILN_OP_PATTERN_OPAQUE;
  f->graph.patterns[index] = pattern;
  f->num_calls += call->op ? 1 : 0;
  for (int i = 0; i < call->num_args; ++i) {
    KILN_RETURN_IF_ERROR(
        kiln_dataflow_graph_add_edge(&f->graph, node_index(f, call->args[i]), index,
                                     argument_pattern(call, call->args[i], pattern)));
  }
  return KILN_OK;
}

static kiln_status_t index_tuple(fuser_t *f, int32_t index, const kiln_tuple_t *tuple) {
  f->graph.patterns[index] = KILN_OP_PATTERN_TUPLE;
  for (int i = 0; i < tuple->num_fields; ++i) {
    int32_t field = node_index(f, tuple->fields[i]);
    if (kiln_type_as_tensor(tuple->fields[i]->checked_type)) {
      KILN_RETURN_IF_ERROR(
          kiln_dataflow_graph_add_edge(&f->graph, field, index, KILN_OP_PATTERN_INJECTIVE));
    } else {
      f->graph.extern_ref[field] = true;
    }
  }
  return KILN_OK;
}

static kiln_status_t index_node(fuser_t *f, int32_t index) {
  kiln_expr_t *expr = node_at(f, index);
  switch (expr->kind) {
  case KILN_EXPR_KIND_CALL:
    return index_call(f, index, (const kiln_call_t *)expr);
  case KILN_EXPR_KIND_TUPLE:
    return index_tuple(f, index, (const kiln_tuple_t *)expr);
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    f->graph.patterns[index] = KILN_OP_PATTERN_INJECTIVE;
    return kiln_dataflow_graph_add_edge(&f->graph,
                                        node_index(f, ((const kiln_tuple_get_item_t *)expr)->tuple),
                                        index, KILN_OP_PATTERN_INJECTIVE);
  case KILN_EXPR_KIND_CONSTANT:
    if (is_simple_scalar((const kiln_constant_t *)expr)) {
      f->graph.patterns[index] = KILN_OP_PATTERN_ELEMWISE;
      return KILN_OK;
    }
    break;
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_FUNCTION:
  case KILN_EXPR_KIND_COUNT_:
    break;
  }
  f->graph.patterns[index] = KILN_OP_PATTERN_OPAQUE;
  f->graph.extern_ref[index] = true;
  return KILN_OK;
}

static kiln_status_t check_typed(const kiln_expr_t *expr, const char *function_name) {
  if (expr->checked_type || expr->kind == KILN_EXPR_KIND_FUNCTION) {
    return KILN_OK;
  }
  const kiln_call_t *call = kiln_expr_as_call(expr);
  return KILN_STATUS(FAILED_PRECONDITION,
                     "types are missing in @%s: a %s%s%s has no checked type (run infer_type "
                     "first)",
                     function_name, kiln_expr_kind_name(expr->kind), call && call->op ? " of " : "",
                     call && call->op ? call->op->name : "");
}

static kiln_status_t index_graph(fuser_t *f, const char *function_name) {
  int32_t count = (int32_t)kiln_array_count(&f->nodes);
  KILN_RETURN_IF_ERROR(kiln_dataflow_graph_initialize(&f->graph, f->allocator, count));
  for (int32_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(check_typed(node_at(f, i), function_name));
    KILN_RETURN_IF_ERROR(index_node(f, i));
  }
  f->graph.extern_ref[count - 1] = true; /* the body */
  return kiln_dataflow_graph_finalize(&f->graph);
}

/* ---- groups ---- */

static int32_t find_root(fuser_t *f, int32_t group) {
  int32_t root = group;
  while (f->groups[root].parent >= 0) {
    root = f->groups[root].parent;
  }
  while (f->groups[group].parent >= 0) { /* path compression */
    int32_t next = f->groups[group].parent;
    f->groups[group].parent = root;
    group = next;
  }
  return root;
}

static void merge_into(fuser_t *f, int32_t child, int32_t parent) {
  child = find_root(f, child);
  parent = find_root(f, parent);
  if (child == parent) {
    return;
  }
  group_t *c = &f->groups[child];
  group_t *p = &f->groups[parent];
  int32_t next = f->ring[child]; /* splices the two cycles into one */
  f->ring[child] = f->ring[parent];
  f->ring[parent] = next;
  p->num_nodes += c->num_nodes;
  p->num_computes += c->num_computes;
  c->parent = parent;
  if (c->anchored) {
    p->anchored = true;
    p->pattern = c->pattern > p->pattern ? c->pattern : p->pattern;
  }
}

/* What a path check accepts: the pattern of each node's group on the way,
 * and whether the node is the post-dominator itself. */
typedef bool (*path_condition_fn)(kiln_op_pattern_t pattern, bool is_sink);

static bool up_to_broadcast(kiln_op_pattern_t pattern, bool is_sink) {
  (void)is_sink;
  return pattern <= KILN_OP_PATTERN_BROADCAST;
}

static bool up_to_injective(kiln_op_pattern_t pattern, bool is_sink) {
  (void)is_sink;
  return pattern <= KILN_OP_PATTERN_INJECTIVE;
}

static bool elemwise_into_sink(kiln_op_pattern_t pattern, bool is_sink) {
  if (!is_sink) {
    return pattern <= KILN_OP_PATTERN_INJECTIVE;
  }
  return pattern <= KILN_OP_PATTERN_INJECTIVE || pattern == KILN_OP_PATTERN_COMM_REDUCE ||
         pattern == KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE;
}

static kiln_status_t push_outputs(fuser_t *f, int32_t node) {
  int32_t count = kiln_dataflow_graph_output_count(&f->graph, node);
  for (int32_t i = 0; i < count; ++i) {
    int32_t reader = kiln_dataflow_graph_output(&f->graph, node, i)->node;
    KILN_RETURN_IF_ERROR(kiln_array_push(&f->stack, &reader));
  }
  return KILN_OK;
}

/* Visits each node reachable from `source`'s readers without passing the
 * sink once (the sink itself included), calling `visit`; stops at the first
 * false. */
typedef bool (*path_visit_fn)(fuser_t *f, int32_t node, bool is_sink, void *context);

static kiln_status_t walk_paths(fuser_t *f, int32_t source, int32_t sink, path_visit_fn visit,
                                void *context, bool *out_all) {
  *out_all = true;
  f->stamp += 1;
  kiln_array_clear(&f->stack);
  KILN_RETURN_IF_ERROR(push_outputs(f, source));
  int32_t node = 0;
  while (kiln_array_pop(&f->stack, &node)) {
    if (f->marks[node] == f->stamp) {
      continue;
    }
    f->marks[node] = f->stamp;
    if (!visit(f, node, node == sink, context)) {
      *out_all = false;
      return KILN_OK;
    }
    if (node != sink) {
      KILN_RETURN_IF_ERROR(push_outputs(f, node));
    }
  }
  return KILN_OK;
}

static bool check_visit(fuser_t *f, int32_t node, bool is_sink, void *context) {
  path_condition_fn condition = *(path_condition_fn *)context;
  return condition(f->groups[find_root(f, node)].pattern, is_sink);
}

static bool commit_visit(fuser_t *f, int32_t node, bool is_sink, void *context) {
  if (!is_sink) {
    merge_into(f, node, *(int32_t *)context);
  }
  return true;
}

/* The nodes of a group, and its computes: operator calls and scalar
 * constants, each a stage of tensor expressions when lowered. */
typedef struct group_size_t {
  int64_t nodes;
  int64_t computes;
} group_size_t;

/* Counts the nodes and computes of the groups met on the way (each group once,
 * by a second stamp on its root) into *(group_size_t *)context. */
static bool count_visit(fuser_t *f, int32_t node, bool is_sink, void *context) {
  if (!is_sink) {
    int32_t root = find_root(f, node);
    if (f->group_marks[root] != f->group_stamp) {
      f->group_marks[root] = f->group_stamp;
      ((group_size_t *)context)->nodes += f->groups[root].num_nodes;
      ((group_size_t *)context)->computes += f->groups[root].num_computes;
    }
  }
  return true;
}

/* Whether every path from `source` to `sink` satisfies `condition`. */
static kiln_status_t check_path(fuser_t *f, int32_t source, int32_t sink,
                                path_condition_fn condition, bool *out_ok) {
  return walk_paths(f, source, sink, check_visit, &condition, out_ok);
}

/* Merges `source` and every node on its paths to `sink` into sink's group. */
static kiln_status_t commit_fuse(fuser_t *f, int32_t source, int32_t sink) {
  merge_into(f, source, sink);
  bool all = true;
  return walk_paths(f, source, sink, commit_visit, &sink, &all);
}

/* The size sink's group would have after fusing `source` into it. */
static kiln_status_t fused_size(fuser_t *f, int32_t source, int32_t sink, group_size_t *out_size) {
  f->group_stamp += 1;
  int32_t sink_root = find_root(f, sink);
  f->group_marks[sink_root] = f->group_stamp;
  group_size_t total = {f->groups[sink_root].num_nodes, f->groups[sink_root].num_computes};
  (void)count_visit(f, source, false, &total);
  bool all = true;
  KILN_RETURN_IF_ERROR(walk_paths(f, source, sink, count_visit, &total, &all));
  *out_size = total;
  return KILN_OK;
}

/* Marks the group of `node` with the group stamp and lists its root. */
static kiln_status_t meet_group(fuser_t *f, int32_t node) {
  int32_t root = find_root(f, node);
  if (f->group_marks[root] == f->group_stamp) {
    return KILN_OK;
  }
  f->group_marks[root] = f->group_stamp;
  return kiln_array_push(&f->roots_met, &root);
}

static bool meet_visit(fuser_t *f, int32_t node, bool is_sink, void *context) {
  kiln_status_t *status = context;
  if (!is_sink && *status == KILN_OK) {
    *status = meet_group(f, node);
  }
  return *status == KILN_OK;
}

/* Counts `value` (a node outside the merged group) once, by the node stamp. */
static void count_param(fuser_t *f, int32_t value, int64_t *count) {
  if (f->marks[value] != f->stamp) {
    f->marks[value] = f->stamp;
    *count += 1;
  }
}

/* The parameters the members of group `root` read from outside the groups
 * marked by the group stamp: distinct values, except that a TupleGetItem of
 * an outside tuple is a parameter of its own (fuse_ops ejects it). */
static void count_group_params(fuser_t *f, int32_t root, int64_t *count) {
  int32_t member = root;
  do {
    kiln_expr_t *expr = node_at(f, member);
    for (int i = 0; i < kiln_dataflow_child_count(expr); ++i) {
      int32_t child = node_index(f, kiln_dataflow_child_at(expr, i));
      if (f->group_marks[find_root(f, child)] != f->group_stamp) {
        count_param(f, expr->kind == KILN_EXPR_KIND_TUPLE_GET_ITEM ? member : child, count);
      }
    }
    member = f->ring[member];
  } while (member != root);
}

/* The number of parameters the function of sink's group would take after
 * fusing `source` (and the nodes on its paths to `sink`) into it. */
static kiln_status_t fused_params(fuser_t *f, int32_t source, int32_t sink, int64_t *out_count) {
  f->group_stamp += 1;
  kiln_array_clear(&f->roots_met);
  KILN_RETURN_IF_ERROR(meet_group(f, sink));
  KILN_RETURN_IF_ERROR(meet_group(f, source));
  kiln_status_t status = KILN_OK;
  bool all = true;
  KILN_RETURN_IF_ERROR(walk_paths(f, source, sink, meet_visit, &status, &all));
  KILN_RETURN_IF_ERROR(status);
  f->stamp += 1;
  *out_count = 0;
  for (size_t i = 0; i < kiln_array_count(&f->roots_met); ++i) {
    count_group_params(f, KILN_ARRAY_AT(&f->roots_met, int32_t, i), out_count);
  }
  return KILN_OK;
}

static kiln_status_t try_fuse(fuser_t *f, int32_t source, int32_t sink,
                              path_condition_fn condition) {
  bool ok = false;
  KILN_RETURN_IF_ERROR(check_path(f, source, sink, condition, &ok));
  int64_t params = 0;
  if (ok) {
    KILN_RETURN_IF_ERROR(fused_params(f, source, sink, &params));
  }
  return ok && params <= KILN_OP_MAX_FUNCTION_ARGS ? commit_fuse(f, source, sink) : KILN_OK;
}

/* Phase 2: an injective node joins a tuple already fused into injective ops. */
static kiln_status_t fuse_into_tuple(fuser_t *f, int32_t node, int32_t parent) {
  if (f->groups[node].pattern > KILN_OP_PATTERN_INJECTIVE) {
    return KILN_OK;
  }
  kiln_op_pattern_t parent_pattern = f->groups[parent].pattern;
  kiln_op_pattern_t root_pattern = f->groups[find_root(f, parent)].pattern;
  if (root_pattern == KILN_OP_PATTERN_TUPLE || parent_pattern != KILN_OP_PATTERN_TUPLE ||
      root_pattern > KILN_OP_PATTERN_INJECTIVE) {
    return KILN_OK;
  }
  return try_fuse(f, node, parent, up_to_injective);
}

static kiln_status_t fuse_node(fuser_t *f, int32_t node, int phase) {
  int32_t parent = f->tree.parent[node];
  kiln_op_pattern_t pattern = f->groups[node].pattern;
  if (phase == 2) {
    return fuse_into_tuple(f, node, parent);
  }
  if (find_root(f, node) == find_root(f, parent) ||
      f->groups[parent].pattern == KILN_OP_PATTERN_TUPLE) {
    return KILN_OK;
  }
  kiln_op_pattern_t edges = f->tree.patterns[node];
  switch (pattern) {
  case KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE:
    if (phase == 0 && edges == KILN_OP_PATTERN_ELEMWISE) {
      return try_fuse(f, node, parent, up_to_broadcast);
    }
    return KILN_OK;
  case KILN_OP_PATTERN_ELEMWISE:
  case KILN_OP_PATTERN_BROADCAST:
    if (edges <= KILN_OP_PATTERN_INJECTIVE || edges == KILN_OP_PATTERN_COMM_REDUCE) {
      return try_fuse(f, node, parent, elemwise_into_sink);
    }
    return KILN_OK;
  case KILN_OP_PATTERN_INJECTIVE:
  case KILN_OP_PATTERN_TUPLE:
    return phase == 1 ? try_fuse(f, node, parent, up_to_injective) : KILN_OK;
  case KILN_OP_PATTERN_COMM_REDUCE: /* a reduction ends its group */
  case KILN_OP_PATTERN_OPAQUE:
    break;
  }
  return KILN_OK;
}

static kiln_status_t run_phase(fuser_t *f, int phase) {
  for (int32_t node = 0; node < f->graph.num_nodes; ++node) {
    if (f->groups[node].pattern == KILN_OP_PATTERN_OPAQUE || f->tree.parent[node] < 0) {
      continue;
    }
    group_size_t size = {0, 0};
    KILN_RETURN_IF_ERROR(fused_size(f, node, f->tree.parent[node], &size));
    if (size.nodes > f->max_depth || size.computes > KILN_OP_MAX_FUNCTION_COMPUTES) {
      continue;
    }
    KILN_RETURN_IF_ERROR(fuse_node(f, node, phase));
  }
  return KILN_OK;
}

/* Whether the node lowers to a compute: an operator call, or a constant
 * (only scalar ones are ever members). */
static int is_compute(const kiln_expr_t *expr) {
  const kiln_call_t *call = kiln_expr_as_call(expr);
  return (call && call->op) || expr->kind == KILN_EXPR_KIND_CONSTANT;
}

static kiln_status_t partition(fuser_t *f, bool fuse) {
  int32_t count = f->graph.num_nodes;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(f->allocator, (size_t)count, sizeof(group_t),
                                                   (void **)&f->groups));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(f->allocator, (size_t)count * sizeof(int32_t),
                                                    (void **)&f->marks));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(f->allocator, (size_t)count, sizeof(int32_t), (void **)&f->ring));
  for (int32_t i = 0; i < count; ++i) {
    kiln_op_pattern_t pattern = f->graph.patterns[i];
    f->ring[i] = i;
    f->groups[i] = (group_t){.parent = -1,
                             .pattern = pattern,
                             .num_nodes = 1,
                             .num_computes = is_compute(node_at(f, i)),
                             .anchored = pattern == KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE};
  }
  if (!fuse) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(f->allocator, (size_t)count * sizeof(int32_t),
                                                    (void **)&f->group_marks));
  KILN_RETURN_IF_ERROR(kiln_postdom_tree_compute(&f->graph, f->allocator, &f->tree));
  for (int phase = 0; phase < 3; ++phase) {
    KILN_RETURN_IF_ERROR(run_phase(f, phase));
  }
  return KILN_OK;
}

/* ---- the rewrite ---- */

static kiln_status_t allocate_rewrite(fuser_t *f) {
  size_t count = (size_t)f->graph.num_nodes;
  size_t groups = 2 * count; /* group ids: union-find roots, and count + node for ejected nodes */
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(f->allocator, count, sizeof(int32_t), (void **)&f->roots));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(f->allocator, groups, sizeof(int32_t), (void **)&f->last));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(f->allocator, groups * sizeof(bool), (void **)&f->has_op));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(f->allocator, (groups + 1) * sizeof(int32_t),
                                                    (void **)&f->member_begin));
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(f->allocator, count, sizeof(int32_t), (void **)&f->members));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(f->allocator, count * sizeof(kiln_expr_t *),
                                                    (void **)&f->new_exprs));
  return kiln_allocator_malloc_zeroed(f->allocator, count * sizeof(kiln_expr_t *),
                                      (void **)&f->inner);
}

/* A TupleGetItem whose tuple comes from another group leaves its group: it
 * stays in the calling function, so a primitive function's parameters are
 * tensors, never tuples. */
static bool ejected(const fuser_t *f, int32_t node) {
  const kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(node_at(f, node));
  return item && f->roots[node_index(f, item->tuple)] != f->roots[node];
}

/* Fills roots (the group id of each node), last, has_op and the member lists
 * (a counting sort by group id). */
static void collect_members(fuser_t *f) {
  int32_t count = f->graph.num_nodes;
  int32_t groups = 2 * count;
  for (int32_t i = 0; i < count; ++i) {
    f->roots[i] = find_root(f, i);
  }
  for (int32_t i = 0; i < count; ++i) {
    f->roots[i] = ejected(f, i) ? count + i : f->roots[i];
  }
  for (int32_t i = 0; i < count; ++i) {
    int32_t root = f->roots[i];
    const kiln_call_t *call = kiln_expr_as_call(node_at(f, i));
    f->last[root] = i; /* ascending: the last write is the highest member */
    f->has_op[root] = f->has_op[root] || (call && call->op);
    f->member_begin[root + 1] += 1;
  }
  for (int32_t i = 0; i < groups; ++i) {
    f->member_begin[i + 1] += f->member_begin[i];
  }
  for (int32_t i = 0; i < count; ++i) {
    f->members[f->member_begin[f->roots[i]]++] = i;
  }
  for (int32_t i = groups; i > 0; --i) {
    f->member_begin[i] = f->member_begin[i - 1];
  }
  f->member_begin[0] = 0;
}

/* A copy of `expr` reading `children` instead of its own (expr itself when
 * they are the same nodes). */
static kiln_status_t rebuild_node(kiln_module_t *module, kiln_expr_t *expr,
                                  kiln_expr_t *const *children, kiln_expr_t **out_expr) {
  int count = kiln_dataflow_child_count(expr);
  bool same = true;
  for (int i = 0; i < count; ++i) {
    same = same && children[i] == kiln_dataflow_child_at(expr, i);
  }
  *out_expr = expr;
  if (same) {
    return KILN_OK;
  }
  const kiln_call_t *call = kiln_expr_as_call(expr);
  kiln_call_t *new_call = NULL;
  if (call && call->op) {
    KILN_RETURN_IF_ERROR(
        kiln_ir_call_create(module, call->op, count, children, call->attrs, &new_call));
    *out_expr = &new_call->base;
  } else if (call) {
    KILN_RETURN_IF_ERROR(
        kiln_ir_call_function_create(module, call->callee, count, children, &new_call));
    *out_expr = &new_call->base;
  } else if (expr->kind == KILN_EXPR_KIND_TUPLE) {
    kiln_tuple_t *tuple = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(module, count, children, &tuple));
    *out_expr = &tuple->base;
  } else if (expr->kind == KILN_EXPR_KIND_TUPLE_GET_ITEM) {
    kiln_tuple_get_item_t *item = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_tuple_get_item_create(
        module, children[0], ((const kiln_tuple_get_item_t *)expr)->index, &item));
    *out_expr = &item->base;
  }
  return KILN_OK;
}

/* The parameter standing for outside value `outside` (node `node` of the old
 * function, whose type it has), made on first use. */
static kiln_status_t group_param(fuser_t *f, int32_t node, kiln_expr_t *outside,
                                 kiln_expr_t **out_param) {
  void *found = NULL;
  if (kiln_hashmap_get(&f->param_map, outside, &found)) {
    *out_param = found;
    return KILN_OK;
  }
  char name[32];
  snprintf(name, sizeof(name), "p%zu", kiln_array_count(&f->params));
  kiln_var_t *param = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_var_create(f->module, name, node_at(f, node)->checked_type, &param));
  KILN_RETURN_IF_ERROR(kiln_array_push(&f->params, &param));
  KILN_RETURN_IF_ERROR(kiln_array_push(&f->args, &outside));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&f->param_map, outside, param));
  *out_param = &param->base;
  return KILN_OK;
}

static kiln_status_t missing_value(const fuser_t *f, int32_t node) {
  const kiln_call_t *call = kiln_expr_as_call(node_at(f, node));
  return KILN_STATUS(INTERNAL,
                     "fused group of node %d (%s%s%s) is read from outside before its output", node,
                     kiln_expr_kind_name(node_at(f, node)->kind), call && call->op ? " " : "",
                     call && call->op ? call->op->name : "");
}

/* Gathers the children of `node` as seen from group `root` into f->children:
 * members' copies for a function group, outside values (as parameters when
 * `root` makes a function) otherwise. */
static kiln_status_t gather_children(fuser_t *f, int32_t node, int32_t root, bool in_function) {
  kiln_expr_t *expr = node_at(f, node);
  kiln_array_clear(&f->children);
  for (int i = 0; i < kiln_dataflow_child_count(expr); ++i) {
    int32_t child = node_index(f, kiln_dataflow_child_at(expr, i));
    kiln_expr_t *value = NULL;
    if (in_function && f->roots[child] == root) {
      value = f->inner[child];
    } else if (!f->new_exprs[child]) {
      return missing_value(f, child);
    } else if (in_function) {
      KILN_RETURN_IF_ERROR(group_param(f, child, f->new_exprs[child], &value));
    } else {
      value = f->new_exprs[child];
    }
    KILN_RETURN_IF_ERROR(kiln_array_push(&f->children, &value));
  }
  return KILN_OK;
}

/* Every member but the last is read only inside the group. */
static kiln_status_t check_single_output(const fuser_t *f, int32_t root) {
  for (int32_t k = f->member_begin[root]; k < f->member_begin[root + 1]; ++k) {
    int32_t node = f->members[k];
    if (node == f->last[root]) {
      continue;
    }
    bool outside = f->graph.extern_ref[node];
    for (int32_t i = 0; i < kiln_dataflow_graph_output_count(&f->graph, node); ++i) {
      outside = outside || f->roots[kiln_dataflow_graph_output(&f->graph, node, i)->node] != root;
    }
    if (outside) {
      return missing_value(f, node);
    }
  }
  return KILN_OK;
}

/* The group of `root` as a primitive function, and its call into new_exprs. */
static kiln_status_t make_group_function(fuser_t *f, int32_t root) {
  KILN_RETURN_IF_ERROR(check_single_output(f, root));
  kiln_array_clear(&f->params);
  kiln_array_clear(&f->args);
  kiln_hashmap_clear(&f->param_map);
  for (int32_t k = f->member_begin[root]; k < f->member_begin[root + 1]; ++k) {
    int32_t node = f->members[k];
    KILN_RETURN_IF_ERROR(gather_children(f, node, root, true));
    KILN_RETURN_IF_ERROR(
        rebuild_node(f->module, node_at(f, node), kiln_array_data(&f->children), &f->inner[node]));
  }
  kiln_function_t *function = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(f->module, (int)kiln_array_count(&f->params),
                                               kiln_array_data(&f->params), f->inner[f->last[root]],
                                               &function));
  function->primitive = true;
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_function_create(
      f->module, function, (int)kiln_array_count(&f->args), kiln_array_data(&f->args), &call));
  f->new_exprs[f->last[root]] = &call->base;
  f->num_functions += 1;
  return KILN_OK;
}

static kiln_status_t rewrite_nodes(fuser_t *f) {
  KILN_RETURN_IF_ERROR(allocate_rewrite(f));
  collect_members(f);
  for (int32_t node = 0; node < f->graph.num_nodes; ++node) {
    int32_t root = f->roots[node];
    if (f->has_op[root]) {
      if (node == f->last[root]) {
        KILN_RETURN_IF_ERROR(make_group_function(f, root));
      }
      continue;
    }
    KILN_RETURN_IF_ERROR(gather_children(f, node, root, false));
    KILN_RETURN_IF_ERROR(rebuild_node(f->module, node_at(f, node), kiln_array_data(&f->children),
                                      &f->new_exprs[node]));
  }
  return KILN_OK;
}

/* ---- the pass ---- */

static void fuser_initialize(fuser_t *f, kiln_module_t *module, kiln_function_t *function,
                             int64_t max_depth) {
  memset(f, 0, sizeof(*f));
  f->allocator = kiln_module_allocator(module);
  f->module = module;
  f->function = function;
  f->max_depth = max_depth;
  kiln_array_initialize(&f->nodes, f->allocator, sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&f->index, f->allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_array_initialize(&f->stack, f->allocator, sizeof(int32_t));
  kiln_array_initialize(&f->roots_met, f->allocator, sizeof(int32_t));
  kiln_array_initialize(&f->children, f->allocator, sizeof(kiln_expr_t *));
  kiln_array_initialize(&f->params, f->allocator, sizeof(kiln_var_t *));
  kiln_array_initialize(&f->args, f->allocator, sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&f->param_map, f->allocator, KILN_HASHMAP_KEY_POINTER);
}

static void fuser_deinitialize(fuser_t *f) {
  void *blocks[] = {f->groups, f->marks,        f->group_marks, f->ring,      f->roots, f->last,
                    f->has_op, f->member_begin, f->members,     f->new_exprs, f->inner};
  for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); ++i) {
    kiln_allocator_free(f->allocator, blocks[i]);
  }
  kiln_array_deinitialize(&f->nodes);
  kiln_hashmap_deinitialize(&f->index);
  kiln_dataflow_graph_deinitialize(&f->graph);
  kiln_postdom_tree_deinitialize(&f->tree);
  kiln_array_deinitialize(&f->stack);
  kiln_array_deinitialize(&f->roots_met);
  kiln_array_deinitialize(&f->children);
  kiln_array_deinitialize(&f->params);
  kiln_array_deinitialize(&f->args);
  kiln_hashmap_deinitialize(&f->param_map);
}

typedef struct fuse_stats_t {
  int num_functions;
  int num_calls;
} fuse_stats_t;

static kiln_status_t fuse_steps(fuser_t *f, const char *name, bool fuse) {
  KILN_RETURN_IF_ERROR(order_nodes(f));
  KILN_RETURN_IF_ERROR(index_graph(f, name));
  KILN_RETURN_IF_ERROR(partition(f, fuse));
  KILN_RETURN_IF_ERROR(rewrite_nodes(f));
  kiln_function_t *rewritten = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(f->module, f->function->num_params,
                                               f->function->params,
                                               f->new_exprs[f->graph.num_nodes - 1], &rewritten));
  KILN_RETURN_IF_ERROR(kiln_module_set_function(f->module, name, rewritten));
  return kiln_ir_infer_function(f->module, name, rewritten);
}

static kiln_status_t fuse_function(kiln_module_t *module, const char *name,
                                   kiln_function_t *function, bool fuse, int64_t max_depth,
                                   fuse_stats_t *stats) {
  fuser_t f;
  fuser_initialize(&f, module, function, max_depth);
  kiln_status_t status = fuse_steps(&f, name, fuse);
  stats->num_functions += f.num_functions;
  stats->num_calls += f.num_calls;
  fuser_deinitialize(&f);
  return status;
}

static kiln_status_t fuse_ops_run(kiln_module_t *module, kiln_pass_context_t *context) {
  int64_t max_depth = 0;
  KILN_RETURN_IF_ERROR(kiln_pass_context_option_int(context, "fuse_ops.max_depth",
                                                    FUSE_DEFAULT_MAX_DEPTH, &max_depth));
  if (max_depth < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "option fuse_ops.max_depth must be at least 1, got %lld",
                       (long long)max_depth);
  }
  bool fuse = kiln_pass_context_opt_level(context) >= 1;
  fuse_stats_t stats = {0, 0};
  for (int i = 0; i < kiln_module_function_count(module); ++i) {
    kiln_function_t *function = kiln_module_function_at(module, i);
    if (!function->primitive) {
      KILN_RETURN_IF_ERROR(fuse_function(module, kiln_module_function_name(module, i), function,
                                         fuse, max_depth, &stats));
    }
  }
  KILN_LOG_INFO("fuse_ops: %d operator calls in %d primitive functions", stats.num_calls,
                stats.num_functions);
  return KILN_OK;
}

static const char *const fuse_ops_required[] = {"infer_type", "split_args", NULL};

const kiln_pass_t kiln_pass_fuse_ops = {
    .info = {.name = "fuse_ops", .opt_level = 0, .required = fuse_ops_required},
    .run = fuse_ops_run,
};
