/*
 * The fused graph as dot (dot.h). Nodes are numbered by their position in
 * main's dataflow order (pass/dominator.h), which does not enter callees;
 * an edge runs from the drawn node an argument comes from (through tuples
 * and TupleGetItem) to its consumer.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/dot.h"
#include "op/op.h"
#include "pass/dominator.h"

typedef struct dot_t {
  kiln_array_t nodes; /* kiln_expr_t *, post order */
  kiln_hashmap_t index;
  kiln_strbuf_t *sb;
} dot_t;

static bool drawn(const kiln_expr_t *expr) {
  return expr->kind == KILN_EXPR_KIND_VAR || expr->kind == KILN_EXPR_KIND_CALL;
}

/* The operators of a call, one per line ("nn.conv2d\nadd\nnn.relu"). */
static kiln_status_t append_ops(const kiln_call_t *call, kiln_strbuf_t *sb) {
  if (call->op) {
    return kiln_strbuf_append(sb, call->op->name);
  }
  kiln_array_t nodes;
  kiln_hashmap_t index;
  kiln_array_initialize(&nodes, kiln_allocator_system(), sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&index, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = kiln_dataflow_order_compute(call->callee, &nodes, &index);
  int written = 0;
  for (size_t i = 0; !status && i < kiln_array_count(&nodes); ++i) {
    const kiln_call_t *inner = kiln_expr_as_call(*(kiln_expr_t **)kiln_array_at(&nodes, i));
    if (inner && inner->op) {
      status = kiln_strbuf_appendf(sb, "%s%s", written++ ? "\\n" : "", inner->op->name);
    }
  }
  kiln_array_deinitialize(&nodes);
  kiln_hashmap_deinitialize(&index);
  return status;
}

static kiln_status_t append_node(dot_t *d, int32_t id, const kiln_expr_t *expr, bool result) {
  kiln_strbuf_t *sb = d->sb;
  char type[KILN_IR_TYPE_TEXT_CAPACITY];
  kiln_type_text(expr->checked_type, type);
  if (expr->kind == KILN_EXPR_KIND_VAR) {
    return kiln_strbuf_appendf(sb, "  n%d [shape=ellipse, label=\"%%%s\\n%s\"];\n", id,
                               kiln_expr_as_var(expr)->name, type);
  }
  const kiln_call_t *call = kiln_expr_as_call(expr);
  KILN_RETURN_IF_ERROR(
      kiln_strbuf_appendf(sb, "  n%d [shape=%s, label=\"", id, result ? "doubleoctagon" : "box"));
  KILN_RETURN_IF_ERROR(append_ops(call, sb));
  int params = 0;
  for (int a = 0; a < call->num_args; ++a) {
    params += call->args[a]->kind == KILN_EXPR_KIND_CONSTANT;
  }
  if (params) {
    KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, "\\n+%d params", params));
  }
  return kiln_strbuf_appendf(sb, "\\n%s\"];\n", type);
}

/* Edges into `to` from the drawn nodes `expr` stands for. */
static kiln_status_t append_edges(dot_t *d, const kiln_expr_t *expr, int32_t to, const char *label,
                                  int depth) {
  if (depth > 64) {
    return KILN_STATUS(INVALID_ARGUMENT, "tuples nested more than 64 deep");
  }
  if (drawn(expr)) {
    return kiln_strbuf_appendf(d->sb, "  n%d -> n%d%s%s%s;\n",
                               kiln_dataflow_order_index(&d->index, expr), to,
                               label[0] ? " [label=\"" : "", label, label[0] ? "\"]" : "");
  }
  if (expr->kind == KILN_EXPR_KIND_TUPLE_GET_ITEM) {
    const kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
    char field[32];
    snprintf(field, sizeof(field), "%d", item->index);
    return append_edges(d, item->tuple, to, field, depth + 1);
  }
  if (expr->kind == KILN_EXPR_KIND_TUPLE) {
    const kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    for (int f = 0; f < tuple->num_fields; ++f) {
      KILN_RETURN_IF_ERROR(append_edges(d, tuple->fields[f], to, label, depth + 1));
    }
  }
  return KILN_OK; /* constants are counted in labels */
}

static kiln_status_t append_graph(dot_t *d, const kiln_function_t *main_fn) {
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(d->sb, "digraph kiln {\n  rankdir=TB;\n"));
  for (size_t i = 0; i < kiln_array_count(&d->nodes); ++i) {
    const kiln_expr_t *expr = *(kiln_expr_t **)kiln_array_at(&d->nodes, i);
    if (!drawn(expr)) {
      continue;
    }
    KILN_RETURN_IF_ERROR(append_node(d, (int32_t)i, expr, expr == main_fn->body));
    for (int c = 0; c < kiln_dataflow_child_count(expr); ++c) {
      KILN_RETURN_IF_ERROR(append_edges(d, kiln_dataflow_child_at(expr, c), (int32_t)i, "", 0));
    }
  }
  if (!drawn(main_fn->body)) { /* a tuple result: an output node */
    KILN_RETURN_IF_ERROR(kiln_strbuf_append(d->sb, "  result [shape=doubleoctagon];\n"));
    int32_t result = (int32_t)kiln_array_count(&d->nodes);
    KILN_RETURN_IF_ERROR(
        kiln_strbuf_appendf(d->sb, "  n%d [shape=point];\n  n%d -> result;\n", result, result));
    KILN_RETURN_IF_ERROR(append_edges(d, main_fn->body, result, "", 0));
  }
  return kiln_strbuf_append(d->sb, "}\n");
}

kiln_status_t kiln_compiler_graph_dot(const kiln_module_t *module, kiln_strbuf_t *sb) {
  const kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  if (!main_fn) {
    return KILN_STATUS(INVALID_ARGUMENT, "the module has no main function");
  }
  dot_t d = {.sb = sb};
  kiln_array_initialize(&d.nodes, kiln_allocator_system(), sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&d.index, kiln_allocator_system(), KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = kiln_dataflow_order_compute(main_fn, &d.nodes, &d.index);
  if (!status) {
    status = append_graph(&d, main_fn);
  }
  kiln_array_deinitialize(&d.nodes);
  kiln_hashmap_deinitialize(&d.index);
  return status;
}
