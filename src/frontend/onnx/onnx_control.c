/*
 * ONNX control flow, sequences and optionals: If, Loop, Scan, SequenceMap
 * with their subgraphs, the Sequence* operators and Optional*.
 *
 * A subgraph becomes a closed Function passed to the operator (op/control.c).
 * Its inputs become the first parameters, typed from the values the
 * operator gives them (the loop-carried values' types, a scan input's slice,
 * a sequence's element), not from the subgraph's declarations, which ONNX
 * lets a model leave out. While its nodes are converted, the importer's value
 * map is the subgraph's own and `scope` points at the enclosing graph's: a
 * name the subgraph does not define is looked up outward (ONNX's scoping
 * rule), and the outer value is captured as a new parameter of the body, or
 * of every body in between for a nested subgraph; the operator then gets the
 * outer values as its last arguments (closure conversion). A Constant is
 * used directly instead, so converters inside the body still see the
 * constants they need (a Slice's starts). The two branches of an If take the
 * union of what either captures, in one order. docs/control-flow.md.
 */
#include <stdint.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "ir/infer.h"
#include "op/control_attrs.h"

typedef struct kiln_onnx_scope_t {
  struct kiln_onnx_scope_t *parent;
  kiln_hashmap_t outer;    /* the enclosing graph's values: name -> kiln_expr_t * */
  kiln_hashmap_t captured; /* name -> the body's kiln_expr_t * for it */
  kiln_array_t params;     /* kiln_var_t *: the captured parameters, in order */
  kiln_array_t arguments;  /* kiln_expr_t *: the outer value of each, in the enclosing graph */
} kiln_onnx_scope_t;

/* ---- lookup and capture ---- */

static kiln_status_t kiln_onnx_capture(kiln_onnx_importer_t *importer, kiln_onnx_scope_t *scope,
                                       const char *name, kiln_expr_t **out_expr) {
  void *found = NULL;
  *out_expr = NULL;
  if (kiln_hashmap_get(&scope->captured, name, &found)) {
    *out_expr = found;
    return KILN_OK;
  }
  kiln_expr_t *outer = NULL;
  if (kiln_hashmap_get(&scope->outer, name, &found)) {
    outer = found;
  } else if (scope->parent != NULL) {
    KILN_RETURN_IF_ERROR(kiln_onnx_capture(importer, scope->parent, name, &outer));
  }
  if (outer == NULL)
    return KILN_OK;
  kiln_expr_t *inner = outer;
  if (kiln_expr_as_constant(outer) == NULL) {
    char *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(importer->arena, name, &copy));
    kiln_var_t *var = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_var_create(importer->module, copy, outer->checked_type, &var));
    var->base.checked_type = outer->checked_type;
    KILN_RETURN_IF_ERROR(kiln_array_push(&scope->params, &var));
    KILN_RETURN_IF_ERROR(kiln_array_push(&scope->arguments, &outer));
    inner = &var->base;
  }
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&scope->captured, name, inner));
  *out_expr = inner;
  return KILN_OK;
}

kiln_status_t kiln_onnx_lookup(kiln_onnx_importer_t *importer, const char *name,
                               kiln_expr_t **out_expr) {
  void *found = NULL;
  *out_expr = NULL;
  if (kiln_hashmap_get(&importer->values, name, &found)) {
    *out_expr = found;
    return KILN_OK;
  }
  if (importer->scope == NULL)
    return KILN_OK;
  return kiln_onnx_capture(importer, importer->scope, name, out_expr);
}

/* ---- subgraphs ---- */

typedef struct kiln_onnx_subgraph_t {
  int num_params; /* the subgraph's own inputs */
  const kiln_type_t *const *param_types;
  kiln_var_t **params; /* out: num_params, then the captured ones */
  int num_captured;    /* out */
  kiln_expr_t **outer; /* out: the captured values, in the enclosing graph */
  kiln_expr_t *body;   /* out */
} kiln_onnx_subgraph_t;

static kiln_status_t kiln_onnx_graph_attr(const kiln_onnx_node_t *node, const char *name,
                                          const Onnx__GraphProto **out_graph) {
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, name);
  if (attr == NULL || attr->g == NULL ||
      (attr->has_type && attr->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s (a graph) is missing", name);
  }
  *out_graph = attr->g;
  return KILN_OK;
}

/* The subgraph's inputs as parameters of the given types. */
static kiln_status_t kiln_onnx_subgraph_inputs(kiln_onnx_importer_t *importer,
                                               const Onnx__GraphProto *graph,
                                               kiln_onnx_subgraph_t *sub) {
  if (graph->n_input != (size_t)sub->num_params) {
    return KILN_STATUS(INVALID_ARGUMENT, "the graph has %zu inputs, expected %d", graph->n_input,
                       sub->num_params);
  }
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(importer->arena, (size_t)sub->num_params + 1,
                                                 sizeof(kiln_var_t *), 8, (void **)&sub->params));
  for (int i = 0; i < sub->num_params; ++i) {
    const char *name = graph->input[i]->name ? graph->input[i]->name : "";
    char *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(importer->arena, name, &copy));
    KILN_RETURN_IF_ERROR(
        kiln_ir_var_create(importer->module, copy, sub->param_types[i], &sub->params[i]));
    sub->params[i]->base.checked_type = sub->param_types[i];
    KILN_RETURN_IF_ERROR(kiln_onnx_define(importer, name, &sub->params[i]->base));
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_subgraph_convert(kiln_onnx_importer_t *importer,
                                                const Onnx__GraphProto *graph,
                                                kiln_onnx_subgraph_t *sub) {
  KILN_RETURN_IF_ERROR(kiln_onnx_check_supported(importer, graph));
  KILN_RETURN_IF_ERROR(kiln_onnx_subgraph_inputs(importer, graph, sub));
  KILN_RETURN_IF_ERROR(kiln_onnx_add_initializers(importer, graph));
  KILN_RETURN_IF_ERROR(kiln_onnx_convert_nodes(importer, graph));
  return kiln_onnx_body(importer, graph, &sub->body);
}

/* The captured parameters and their outer values, after the conversion. */
static kiln_status_t kiln_onnx_subgraph_captured(kiln_onnx_importer_t *importer,
                                                 const kiln_onnx_scope_t *scope,
                                                 kiln_onnx_subgraph_t *sub) {
  sub->num_captured = (int)kiln_array_count(&scope->params);
  size_t total = (size_t)sub->num_params + (size_t)sub->num_captured + 1;
  kiln_var_t **params = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(importer->arena, total, sizeof(*params), 8, (void **)&params));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(importer->arena, total, sizeof(kiln_expr_t *), 8,
                                                 (void **)&sub->outer));
  memcpy(params, sub->params, sizeof(*params) * (size_t)sub->num_params);
  for (int i = 0; i < sub->num_captured; ++i) {
    params[sub->num_params + i] = *(kiln_var_t **)kiln_array_at(&scope->params, (size_t)i);
    sub->outer[i] = *(kiln_expr_t **)kiln_array_at(&scope->arguments, (size_t)i);
  }
  sub->params = params;
  return KILN_OK;
}

/* Converts graph attribute `attr` of `node` with its own value map. */
static kiln_status_t kiln_onnx_subgraph(const kiln_onnx_node_t *node, const char *attr,
                                        kiln_onnx_subgraph_t *sub) {
  kiln_onnx_importer_t *importer = node->importer;
  const Onnx__GraphProto *graph = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_graph_attr(node, attr, &graph));
  kiln_allocator_t allocator = importer->allocator;
  kiln_onnx_scope_t scope = {.parent = importer->scope, .outer = importer->values};
  kiln_hashmap_initialize(&scope.captured, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_array_initialize(&scope.params, allocator, sizeof(kiln_var_t *));
  kiln_array_initialize(&scope.arguments, allocator, sizeof(kiln_expr_t *));
  kiln_hashmap_initialize(&importer->values, allocator, KILN_HASHMAP_KEY_STRING);
  importer->scope = &scope;
  kiln_status_t status = kiln_onnx_subgraph_convert(importer, graph, sub);
  if (status == NULL)
    status = kiln_onnx_subgraph_captured(importer, &scope, sub);
  kiln_hashmap_deinitialize(&importer->values);
  importer->values = scope.outer;
  importer->scope = scope.parent;
  kiln_hashmap_deinitialize(&scope.captured);
  kiln_array_deinitialize(&scope.params);
  kiln_array_deinitialize(&scope.arguments);
  return kiln_status_annotate(status, "%s", attr);
}

/* The Function of a converted subgraph, typed. */
static kiln_status_t kiln_onnx_subgraph_function(const kiln_onnx_node_t *node, int num_params,
                                                 kiln_var_t *const *params, kiln_expr_t *body,
                                                 kiln_function_t **out_function) {
  KILN_RETURN_IF_ERROR(
      kiln_ir_function_create(node->importer->module, num_params, params, body, out_function));
  return kiln_ir_infer_function(node->importer->module, "a subgraph", *out_function);
}

/* Arguments: `fixed` (count of them), then the captured values. */
static kiln_status_t kiln_onnx_control_args(const kiln_onnx_node_t *node, int fixed,
                                            kiln_expr_t *const *first, int captured,
                                            kiln_expr_t *const *outer, kiln_expr_t ***out_args) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena,
                                                 (size_t)(fixed + captured) + 1,
                                                 sizeof(kiln_expr_t *), 8, (void **)out_args));
  memcpy(*out_args, first, sizeof(kiln_expr_t *) * (size_t)fixed);
  memcpy(*out_args + fixed, outer, sizeof(kiln_expr_t *) * (size_t)captured);
  return KILN_OK;
}

/* The node's outputs from a call's tuple result (or the one value). */
static kiln_status_t kiln_onnx_control_outputs(kiln_onnx_node_t *node, kiln_expr_t *result) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(result->checked_type);
  if (tuple == NULL) {
    node->outputs[0] = result;
    return KILN_OK;
  }
  if (node->num_outputs > tuple->count) {
    return KILN_STATUS(INVALID_ARGUMENT, "the node has %d outputs but computes %d",
                       node->num_outputs, tuple->count);
  }
  for (int i = 0; i < node->num_outputs; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, result, i, &node->outputs[i]));
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_scalar_type(const kiln_onnx_node_t *node, kiln_dtype_t dtype,
                                           const kiln_type_t **out_type) {
  return kiln_tensor_type_create(node->importer->arena, dtype, 0, NULL, out_type);
}

/* ---- If ---- */

/* Position of `value` in `list` (count entries), or -1. */
static int kiln_onnx_find_expr(int count, kiln_expr_t *const *list, const kiln_expr_t *value) {
  for (int i = 0; i < count; ++i) {
    if (list[i] == value)
      return i;
  }
  return -1;
}

/* A branch's Function taking every value of `all`: its own captured
 * parameter where it has one, an unused parameter elsewhere. */
static kiln_status_t kiln_onnx_branch(const kiln_onnx_node_t *node, const kiln_onnx_subgraph_t *sub,
                                      int count, kiln_expr_t *const *all,
                                      kiln_function_t **out_function) {
  kiln_var_t **params = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)count + 1,
                                                 sizeof(*params), 8, (void **)&params));
  for (int i = 0; i < count; ++i) {
    int own = kiln_onnx_find_expr(sub->num_captured, sub->outer, all[i]);
    if (own >= 0) {
      params[i] = sub->params[own];
      continue;
    }
    KILN_RETURN_IF_ERROR(
        kiln_ir_var_create(node->importer->module, "unused", all[i]->checked_type, &params[i]));
    params[i]->base.checked_type = all[i]->checked_type;
  }
  return kiln_onnx_subgraph_function(node, count, params, sub->body, out_function);
}

kiln_status_t kiln_onnx_convert_if(kiln_onnx_node_t *node) {
  kiln_onnx_subgraph_t branches[2] = {{.num_params = 0}, {.num_params = 0}};
  KILN_RETURN_IF_ERROR(kiln_onnx_subgraph(node, "then_branch", &branches[0]));
  KILN_RETURN_IF_ERROR(kiln_onnx_subgraph(node, "else_branch", &branches[1]));
  int total = branches[0].num_captured + branches[1].num_captured;
  kiln_expr_t **args = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)total + 3,
                                                 sizeof(*args), 8, (void **)&args));
  int count = 0;
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < branches[b].num_captured; ++i) {
      if (kiln_onnx_find_expr(count, args + 3, branches[b].outer[i]) < 0)
        args[3 + count++] = branches[b].outer[i];
    }
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &args[0]));
  for (int b = 0; b < 2; ++b) {
    kiln_function_t *function = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_branch(node, &branches[b], count, args + 3, &function));
    args[1 + b] = &function->base;
  }
  kiln_expr_t *result = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_if, 3 + count, args, NULL, &result));
  return kiln_onnx_control_outputs(node, result);
}

/* ---- Loop ---- */

/* The trip count and condition, with ONNX's defaults when omitted: no
 * bound (INT64_MAX, exactly) and true. */
static kiln_status_t kiln_onnx_loop_controls(kiln_onnx_node_t *node, kiln_expr_t **out_trips,
                                             kiln_expr_t **out_cond) {
  *out_trips = kiln_onnx_input_optional(node, 0);
  *out_cond = kiln_onnx_input_optional(node, 1);
  if (*out_cond == NULL)
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_BOOL, 1.0, out_cond));
  if (*out_trips != NULL)
    return KILN_OK;
  kiln_tensor_t *unbounded = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_INT64, 0, NULL, &unbounded));
  *(int64_t *)kiln_tensor_data(unbounded) = INT64_MAX;
  kiln_status_t status = kiln_onnx_constant(node->importer, unbounded, out_trips);
  kiln_tensor_release(unbounded);
  return status;
}

/* Widens the carried types of `types` (after the iteration number and the
 * condition) to what the body gives back where it gives back another shape
 * (a slice that grows); *out_changed says whether any changed. */
static kiln_status_t kiln_onnx_loop_widen(const kiln_onnx_node_t *node, const kiln_function_t *body,
                                          int carried, const kiln_type_t **types,
                                          bool *out_changed) {
  *out_changed = false;
  const kiln_tuple_type_t *results = kiln_type_as_tuple(body->ret_type);
  for (int i = 0; results != NULL && i < carried && 1 + i < results->count; ++i) {
    const kiln_type_t *joined = NULL;
    kiln_status_t status =
        kiln_type_join(node->importer->arena, types[2 + i], results->fields[1 + i], &joined);
    if (status != NULL) { /* the relation names the mismatch */
      kiln_status_free(status);
      continue;
    }
    *out_changed = *out_changed || !kiln_type_equal(joined, types[2 + i]);
    types[2 + i] = joined;
  }
  return KILN_OK;
}

/* The body, converted with the carried values' types, and once more with
 * wider ones when it gives back other shapes than it takes. */
static kiln_status_t kiln_onnx_loop_body(kiln_onnx_node_t *node, int carried,
                                         const kiln_type_t **types, kiln_onnx_subgraph_t *sub,
                                         kiln_function_t **out_body) {
  for (int pass = 0; pass < 2; ++pass) {
    *sub = (kiln_onnx_subgraph_t){.num_params = 2 + carried, .param_types = types};
    KILN_RETURN_IF_ERROR(kiln_onnx_subgraph(node, "body", sub));
    KILN_RETURN_IF_ERROR(kiln_onnx_subgraph_function(node, sub->num_params + sub->num_captured,
                                                     sub->params, sub->body, out_body));
    bool changed = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_loop_widen(node, *out_body, carried, types, &changed));
    if (!changed)
      break;
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_loop(kiln_onnx_node_t *node) {
  int carried = node->num_inputs - 2;
  if (carried < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "Loop takes the trip count and the condition inputs "
                                         "(either may be empty)");
  }
  const kiln_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)carried + 2,
                                                 sizeof(*types), 8, (void **)&types));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar_type(node, KILN_DTYPE_INT64, &types[0]));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar_type(node, KILN_DTYPE_BOOL, &types[1]));
  kiln_expr_t **fixed = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)carried + 3,
                                                 sizeof(*fixed), 8, (void **)&fixed));
  KILN_RETURN_IF_ERROR(kiln_onnx_loop_controls(node, &fixed[1], &fixed[2]));
  for (int i = 0; i < carried; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 2 + i, &fixed[3 + i]));
    types[2 + i] = fixed[3 + i]->checked_type;
  }
  kiln_onnx_subgraph_t sub;
  kiln_function_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_loop_body(node, carried, types, &sub, &body));
  fixed[0] = &body->base;
  kiln_expr_t **args = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_control_args(node, 3 + carried, fixed, sub.num_captured, sub.outer, &args));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_loop, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_loop, attrs, "num_captured", sub.num_captured));
  kiln_expr_t *result = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_emit(node, &kiln_op_loop, 3 + carried + sub.num_captured, args, attrs, &result));
  return kiln_onnx_control_outputs(node, result);
}

/* ---- Scan ---- */

/* The slice type of scan input `x` on `axis`. */
static kiln_status_t kiln_onnx_scan_slice(const kiln_onnx_node_t *node, const kiln_expr_t *x,
                                          int64_t axis, const kiln_type_t **out_type) {
  const kiln_tensor_type_t *tensor = kiln_onnx_type_of(x);
  if (tensor == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "a scan input is not a tensor");
  }
  int normalized = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(axis, tensor->ndim, &normalized));
  int64_t dims[KILN_MAX_RANK];
  int ndim = 0;
  for (int d = 0; d < tensor->ndim; ++d) {
    if (d != normalized)
      dims[ndim++] = tensor->shape[d];
  }
  return kiln_tensor_type_create(node->importer->arena, tensor->dtype, ndim, dims, out_type);
}

/* Copies Scan's list attributes into the IR attrs. */
static kiln_status_t kiln_onnx_scan_attrs(const kiln_onnx_node_t *node, void *attrs,
                                          kiln_ints_t *out_input_axes) {
  static const char *const lists[] = {"scan_input_directions", "scan_output_directions",
                                      "scan_input_axes", "scan_output_axes"};
  for (int i = 0; i < 4; ++i) {
    kiln_ints_t ints = {0, NULL};
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, lists[i], &ints, NULL));
    KILN_RETURN_IF_ERROR(
        kiln_onnx_set_ints(node, &kiln_op_scan, attrs, lists[i], ints.count, ints.values));
    if (i == 2)
      *out_input_axes = ints;
  }
  return KILN_OK;
}

/* What a Scan node is converted from: its attrs, and the body once made. */
typedef struct kiln_onnx_scan_t {
  void *attrs;
  kiln_ints_t axes; /* scan_input_axes */
  int states, count;
  kiln_onnx_subgraph_t sub;
  kiln_function_t *body; /* NULL until the first scan call makes it */
} kiln_onnx_scan_t;

/* Reads Scan's attributes into the IR attrs (opset 8: `directions` are the
 * input directions). */
static kiln_status_t kiln_onnx_scan_prepare(kiln_onnx_node_t *node, int first,
                                            kiln_onnx_scan_t *scan) {
  int64_t scans = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "num_scan_inputs", 0, &scans));
  scan->states = node->num_inputs - first - (int)scans;
  if (scans < 1 || scan->states < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "num_scan_inputs %lld with %d inputs", (long long)scans,
                       node->num_inputs);
  }
  scan->count = scan->states + (int)scans;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_scan, &scan->attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_scan, scan->attrs, "num_scan_inputs", scans));
  KILN_RETURN_IF_ERROR(kiln_onnx_scan_attrs(node, scan->attrs, &scan->axes));
  kiln_ints_t directions = {0, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "directions", &directions, NULL));
  if (first > 0 && directions.count > 0) {
    KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_scan, scan->attrs,
                                            "scan_input_directions", directions.count,
                                            directions.values));
  }
  return KILN_OK;
}

/* The body, converted for inputs of the types of `inputs` on first use. */
static kiln_status_t kiln_onnx_scan_body(kiln_onnx_node_t *node, kiln_onnx_scan_t *scan,
                                         kiln_expr_t *const *inputs) {
  if (scan->body != NULL)
    return KILN_OK;
  const kiln_type_t **types = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)scan->count + 1,
                                                 sizeof(*types), 8, (void **)&types));
  for (int i = 0; i < scan->count; ++i) {
    types[i] = inputs[i]->checked_type;
    if (i >= scan->states)
      KILN_RETURN_IF_ERROR(kiln_onnx_scan_slice(
          node, inputs[i], kiln_scan_attr_at(scan->axes, i - scan->states, 0), &types[i]));
  }
  scan->sub.num_params = scan->count;
  scan->sub.param_types = types;
  KILN_RETURN_IF_ERROR(kiln_onnx_subgraph(node, "body", &scan->sub));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_int(&kiln_op_scan, scan->attrs, "num_captured", scan->sub.num_captured));
  return kiln_onnx_subgraph_function(node, scan->count + scan->sub.num_captured, scan->sub.params,
                                     scan->sub.body, &scan->body);
}

/* scan(body, inputs..., captured...). */
static kiln_status_t kiln_onnx_scan_emit(kiln_onnx_node_t *node, kiln_onnx_scan_t *scan,
                                         kiln_expr_t *const *inputs, kiln_expr_t **out_result) {
  KILN_RETURN_IF_ERROR(kiln_onnx_scan_body(node, scan, inputs));
  kiln_expr_t **fixed = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)scan->count + 2,
                                                 sizeof(*fixed), 8, (void **)&fixed));
  fixed[0] = &scan->body->base;
  memcpy(fixed + 1, inputs, sizeof(*fixed) * (size_t)scan->count);
  kiln_expr_t **args = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_control_args(node, 1 + scan->count, fixed, scan->sub.num_captured,
                                              scan->sub.outer, &args));
  return kiln_onnx_emit(node, &kiln_op_scan, 1 + scan->count + scan->sub.num_captured, args,
                        scan->attrs, out_result);
}

kiln_status_t kiln_onnx_convert_scan(kiln_onnx_node_t *node) {
  kiln_onnx_scan_t scan = {.attrs = NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_scan_prepare(node, 0, &scan));
  kiln_expr_t **inputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)scan.count + 1,
                                                 sizeof(*inputs), 8, (void **)&inputs));
  for (int i = 0; i < scan.count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &inputs[i]));
  }
  kiln_expr_t *result = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scan_emit(node, &scan, inputs, &result));
  return kiln_onnx_control_outputs(node, result);
}

/* Opset 8: every input has a batch dim first; each batch row is scanned on
 * its own (one scan call per row, on the rows taken out), and each output
 * stacks the rows' results back on a new dim 0. */
static kiln_status_t kiln_onnx_scan8_row(kiln_onnx_node_t *node, kiln_onnx_scan_t *scan,
                                         int64_t row, kiln_expr_t *const *inputs,
                                         kiln_expr_t **out_result) {
  kiln_expr_t **rows = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)scan->count + 1,
                                                 sizeof(*rows), 8, (void **)&rows));
  kiln_expr_t *index = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, (double)row, &index));
  for (int i = 0; i < scan->count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_take, inputs[i], index, NULL, &rows[i]));
  }
  return kiln_onnx_scan_emit(node, scan, rows, out_result);
}

/* Output `j` of every row, stacked on a new dim 0. */
static kiln_status_t kiln_onnx_scan8_stack(kiln_onnx_node_t *node, int64_t batch,
                                           kiln_expr_t *const *results, int j,
                                           kiln_expr_t **out_expr) {
  kiln_expr_t **parts = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)batch + 1,
                                                 sizeof(*parts), 8, (void **)&parts));
  for (int64_t b = 0; b < batch; ++b) {
    kiln_expr_t *item = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, results[b], j, &item));
    KILN_RETURN_IF_ERROR(kiln_onnx_expand_dims(node, item, 0, &parts[b]));
  }
  return kiln_onnx_emit(node, &kiln_op_concatenate, (int)batch, parts, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_scan8(kiln_onnx_node_t *node) {
  if (kiln_onnx_input_optional(node, 0) != NULL) {
    return KILN_STATUS(UNIMPLEMENTED, "Scan's sequence_lens input is not supported");
  }
  kiln_onnx_scan_t scan = {.attrs = NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_scan_prepare(node, 1, &scan));
  kiln_expr_t **inputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)scan.count + 1,
                                                 sizeof(*inputs), 8, (void **)&inputs));
  const kiln_tensor_type_t *first = NULL;
  for (int i = 0; i < scan.count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1 + i, &inputs[i]));
    first = first ? first : kiln_onnx_type_of(inputs[i]);
  }
  if (first == NULL || first->ndim < 1 || first->shape[0] < 1 || first->shape[0] > 4096) {
    return KILN_STATUS(INVALID_ARGUMENT, "Scan (opset 8) needs inputs with a batch dim of 1 to "
                                         "4096");
  }
  int64_t batch = first->shape[0];
  kiln_expr_t **results = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)batch + 1,
                                                 sizeof(*results), 8, (void **)&results));
  for (int64_t b = 0; b < batch; ++b) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scan8_row(node, &scan, b, inputs, &results[b]));
  }
  for (int j = 0; j < node->num_outputs; ++j) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scan8_stack(node, batch, results, j, &node->outputs[j]));
  }
  return KILN_OK;
}

/* ---- SequenceMap ---- */

kiln_status_t kiln_onnx_convert_sequence_map(kiln_onnx_node_t *node) {
  int count = node->num_inputs;
  const kiln_type_t **types = NULL;
  kiln_expr_t **fixed = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)count + 1,
                                                 sizeof(*types), 8, (void **)&types));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, (size_t)count + 2,
                                                 sizeof(*fixed), 8, (void **)&fixed));
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &fixed[1 + i]));
    types[i] = fixed[1 + i]->checked_type;
    const kiln_sequence_type_t *sequence = kiln_type_as_sequence(types[i]);
    if (sequence != NULL && sequence->element == NULL) {
      char text[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(UNIMPLEMENTED,
                         "input %d is %s, whose elements' shapes are known only at run time; "
                         "symbolic shapes are not supported yet",
                         i, kiln_type_text(types[i], text));
    }
    types[i] = sequence ? sequence->element : types[i];
  }
  kiln_onnx_subgraph_t sub = {.num_params = count, .param_types = types};
  KILN_RETURN_IF_ERROR(kiln_onnx_subgraph(node, "body", &sub));
  kiln_function_t *body = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_subgraph_function(node, count + sub.num_captured, sub.params, sub.body, &body));
  fixed[0] = &body->base;
  kiln_expr_t **args = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_control_args(node, 1 + count, fixed, sub.num_captured, sub.outer, &args));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_seq_map, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_int(&kiln_op_seq_map, attrs, "num_captured", sub.num_captured));
  kiln_expr_t *result = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_emit(node, &kiln_op_seq_map, 1 + count + sub.num_captured, args, attrs, &result));
  return kiln_onnx_control_outputs(node, result);
}

/* ---- sequences ---- */

/* Emits `op` on the node's present inputs. */
static kiln_status_t kiln_onnx_emit_inputs(kiln_onnx_node_t *node, const kiln_op_t *op,
                                           const void *attrs) {
  kiln_expr_t **args = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(
      node->importer->arena, (size_t)node->num_inputs + 1, sizeof(*args), 8, (void **)&args));
  int count = 0;
  for (int i = 0; i < node->num_inputs; ++i) {
    if (node->inputs[i] == NULL && i + 1 < node->num_inputs && node->inputs[i + 1] != NULL) {
      return KILN_STATUS(UNIMPLEMENTED, "input %d is omitted but a later one is given", i);
    }
    if (node->inputs[i] != NULL)
      args[count++] = node->inputs[i];
  }
  return kiln_onnx_emit(node, op, count, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_sequence_empty(kiln_onnx_node_t *node) {
  int64_t elem_type = 1; /* float */
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "dtype", 1, &elem_type));
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR(kiln_onnx_dtype(elem_type, &dtype));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_seq_empty, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(&kiln_op_seq_empty, attrs, "dtype", dtype));
  return kiln_onnx_emit(node, &kiln_op_seq_empty, 0, NULL, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_sequence_op(kiln_onnx_node_t *node) {
  static const struct {
    const char *op_type;
    const kiln_op_t *op;
  } ops[] = {
      {"SequenceConstruct", &kiln_op_seq_construct},
      {"SequenceInsert", &kiln_op_seq_insert},
      {"SequenceAt", &kiln_op_seq_at},
      {"SequenceErase", &kiln_op_seq_erase},
      {"SequenceLength", &kiln_op_seq_length},
      {"OptionalGetElement", &kiln_op_optional_get},
  };
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
    if (strcmp(node->proto->op_type, ops[i].op_type) == 0)
      return kiln_onnx_emit_inputs(node, ops[i].op, NULL);
  }
  return KILN_STATUS(INTERNAL, "no sequence operator for %s", node->proto->op_type);
}

kiln_status_t kiln_onnx_convert_split_to_sequence(kiln_onnx_node_t *node) {
  int64_t axis = 0, keepdims = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "keepdims", 1, &keepdims));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_seq_split, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_seq_split, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_seq_split, attrs, "keepdims", keepdims != 0));
  return kiln_onnx_emit_inputs(node, &kiln_op_seq_split, attrs);
}

kiln_status_t kiln_onnx_convert_concat_from_sequence(kiln_onnx_node_t *node) {
  int64_t axis = 0, new_axis = 0;
  if (kiln_onnx_attr(node, "axis") == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute axis is required");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "new_axis", 0, &new_axis));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_seq_concat, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_seq_concat, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(&kiln_op_seq_concat, attrs, "new_axis", new_axis != 0));
  return kiln_onnx_emit_inputs(node, &kiln_op_seq_concat, attrs);
}

/* ---- optionals ---- */

/* Optional's `type` attribute into the attrs of an empty optional. */
static kiln_status_t kiln_onnx_optional_type_attr(kiln_onnx_node_t *node, void *attrs) {
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, "type");
  if (attr == NULL || attr->tp == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "an Optional without an input needs attribute type");
  }
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_value_type(node->importer, "type", attr->tp, &type));
  if (kiln_type_as_optional(type) != NULL)
    type = kiln_type_as_optional(type)->element;
  const kiln_sequence_type_t *sequence = kiln_type_as_sequence(type);
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  const kiln_op_t *op = &kiln_op_optional;
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "sequence", sequence != NULL));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_dtype(op, attrs, "dtype", sequence ? sequence->dtype : tensor->dtype));
  if (tensor != NULL)
    KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "shape", tensor->ndim, tensor->shape));
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_optional(kiln_onnx_node_t *node) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_optional, &attrs));
  kiln_expr_t *x = kiln_onnx_input_optional(node, 0);
  if (x == NULL)
    KILN_RETURN_IF_ERROR(kiln_onnx_optional_type_attr(node, attrs));
  return kiln_onnx_emit(node, &kiln_op_optional, x ? 1 : 0, &x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_optional_has_element(kiln_onnx_node_t *node) {
  kiln_expr_t *x = kiln_onnx_input_optional(node, 0);
  if (x == NULL) /* opset 18: an omitted input is an empty optional */
    return kiln_onnx_scalar(node, KILN_DTYPE_BOOL, 0.0, &node->outputs[0]);
  return kiln_onnx_emit(node, &kiln_op_optional_has, 1, &x, NULL, &node->outputs[0]);
}
