/*
 * graph.json into the executor's nodes and entries; see graph_executor.h.
 *
 * The file is TVM's graph-executor JSON (docs/graph-executor.md): nodes,
 * arg_nodes, node_row_ptr, heads and attrs holding per-entry lists, each a
 * [tag, values] pair ("list_str", "list_int", "list_shape"). Parsing goes
 * in the order the data depends on: the nodes' kinds and output counts
 * first, which give the entry count; node_row_ptr is then checked against
 * the counts rather than trusted; then each node's inputs (a reference must
 * point at an earlier node and one of its outputs, which also proves the
 * list is in topological order), the arg nodes, the heads and the per-entry
 * attrs. Every failure names the source, the node (index and name) or the
 * attr, and what was expected. Counts in TVM's node attrs are strings
 * ("num_inputs": "3"); integers are accepted too. Everything parsed lives in
 * the executor's arena.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/graph_executor.h"

/* Room for "<source> node <i> <name>" in messages and json getters. */
#define KILN_GX_WHERE_SIZE 512

static void node_where(const kiln_graph_executor_t *gx, int index, const char *name, char *buffer) {
  snprintf(buffer, KILN_GX_WHERE_SIZE, "%s node %d%s%s", gx->source, index, name ? " " : "",
           name ? name : "");
}

static kiln_status_t arena_ints(kiln_graph_executor_t *gx, size_t count, int **out) {
  return kiln_arena_allocate_array(&gx->arena, count > 0 ? count : 1, sizeof(int), _Alignof(int),
                                   (void **)out);
}

/* An integer in [lo, hi] from a JSON value; `what` names it in errors. */
static kiln_status_t int_in_range(const json_t *value, int64_t lo, int64_t hi, const char *where,
                                  const char *what, int64_t *out) {
  if (!json_is_integer(value)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s: expected an integer, got %s", where, what,
                       kiln_json_type_name(value));
  }
  int64_t v = (int64_t)json_integer_value(value);
  if (v < lo || v > hi) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: %s is %lld, expected %lld to %lld", where, what,
                       (long long)v, (long long)lo, (long long)hi);
  }
  *out = v;
  return KILN_OK;
}

/* A count in a tvm_op's attrs: "3" or 3. */
static kiln_status_t attr_count(const json_t *attrs, const char *key, const char *where, int *out) {
  json_t *value = json_object_get(attrs, key);
  if (!value) {
    return KILN_STATUS(NOT_FOUND, "%s: attrs: missing key '%s'", where, key);
  }
  long long v = -1;
  char end = 0;
  if (json_is_integer(value)) {
    v = (long long)json_integer_value(value);
  } else if (!json_is_string(value) || sscanf(json_string_value(value), "%lld%c", &v, &end) != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attrs: key '%s': expected a count, got %s", where,
                       key, kiln_json_type_name(value));
  }
  if (v < 0 || v > 65536) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: attrs: key '%s' is %lld, expected 0 to 65536", where, key,
                       v);
  }
  *out = (int)v;
  return KILN_OK;
}

static kiln_status_t parse_op_attrs(kiln_graph_executor_t *gx, const json_t *node,
                                    kiln_gx_node_t *out, const char *where) {
  json_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_object(node, "attrs", where, &attrs));
  const char *func_name = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_string(attrs, "func_name", where, &func_name));
  KILN_RETURN_IF_ERROR(attr_count(attrs, "num_inputs", where, &out->num_inputs));
  KILN_RETURN_IF_ERROR(attr_count(attrs, "num_outputs", where, &out->num_outputs));
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(&gx->arena, func_name, &copy));
  out->func_name = copy;
  out->kind = strcmp(func_name, "__nop") == 0    ? KILN_GX_NODE_NOP
              : strcmp(func_name, "__copy") == 0 ? KILN_GX_NODE_COPY
                                                 : KILN_GX_NODE_KERNEL;
  if (out->kind == KILN_GX_NODE_COPY && (out->num_inputs != 1 || out->num_outputs != 1)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: __copy has %d inputs and %d outputs, expected 1 and 1", where,
                       out->num_inputs, out->num_outputs);
  }
  if (out->kind == KILN_GX_NODE_KERNEL && out->num_outputs == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: a kernel node needs at least one output", where);
  }
  return KILN_OK;
}

/* The node's op, name, kind and counts (its inputs come later). */
static kiln_status_t parse_node_head(kiln_graph_executor_t *gx, const json_t *node, int index,
                                     kiln_gx_node_t *out) {
  char where[KILN_GX_WHERE_SIZE];
  node_where(gx, index, NULL, where);
  if (!json_is_object(node)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected an object, got %s", where,
                       kiln_json_type_name(node));
  }
  const char *op = NULL, *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_string(node, "op", where, &op));
  KILN_RETURN_IF_ERROR(kiln_json_get_string(node, "name", where, &name));
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(&gx->arena, name, &copy));
  out->name = copy;
  node_where(gx, index, name, where);
  if (strcmp(op, "null") == 0) {
    out->kind = KILN_GX_NODE_INPUT; /* or a param: decided with the params */
    out->num_outputs = 1;
    return KILN_OK;
  }
  if (strcmp(op, "tvm_op") != 0) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: op '%s' is not supported (expected \"null\" or \"tvm_op\")", where, op);
  }
  return parse_op_attrs(gx, node, out, where);
}

/* A [node, output(, version)] reference into an entry id. */
static kiln_status_t parse_ref(const kiln_graph_executor_t *gx, const json_t *ref, int before,
                               const char *where, const char *what, int *out_entry) {
  size_t size = json_array_size(ref);
  if (!json_is_array(ref) || size < 2 || size > 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s: expected [node, output, version], got %s", where,
                       what, kiln_json_type_name(ref));
  }
  int64_t node = 0, output = 0;
  KILN_RETURN_IF_ERROR(
      int_in_range(json_array_get(ref, 0), 0, gx->num_nodes - 1, where, what, &node));
  if (node >= before) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: %s refers to node %d %s, which does not come before it (nodes are "
                       "listed in the order they run)",
                       where, what, (int)node, gx->nodes[node].name);
  }
  const kiln_gx_node_t *source = &gx->nodes[node];
  char output_what[KILN_GX_WHERE_SIZE];
  snprintf(output_what, sizeof(output_what), "%s: the output index of node %d %s", what, (int)node,
           source->name);
  KILN_RETURN_IF_ERROR(int_in_range(json_array_get(ref, 1), 0, source->num_outputs - 1, where,
                                    output_what, &output));
  *out_entry = source->first_entry + (int)output;
  return KILN_OK;
}

static kiln_status_t parse_node_inputs(kiln_graph_executor_t *gx, const json_t *node, int index) {
  kiln_gx_node_t *n = &gx->nodes[index];
  char where[KILN_GX_WHERE_SIZE];
  node_where(gx, index, n->name, where);
  json_t *inputs = json_object_get(node, "inputs");
  if (!inputs && n->func_name == NULL) {
    return KILN_OK; /* a null node may leave its empty list out */
  }
  KILN_RETURN_IF_ERROR(kiln_json_get_array(node, "inputs", where, &inputs));
  size_t count = json_array_size(inputs);
  if (count != (size_t)n->num_inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %zu inputs, expected %d (%s)", where, count,
                       n->num_inputs, n->func_name ? "attrs num_inputs" : "none for a null node");
  }
  KILN_RETURN_IF_ERROR(arena_ints(gx, count, &n->input_entries));
  for (size_t i = 0; i < count; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "input %zu", i);
    KILN_RETURN_IF_ERROR(
        parse_ref(gx, json_array_get(inputs, i), index, where, what, &n->input_entries[i]));
  }
  return KILN_OK;
}

/* node_row_ptr must be the running sum of the output counts. */
static kiln_status_t check_row_ptr(kiln_graph_executor_t *gx, const json_t *root) {
  json_t *rows = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, "node_row_ptr", gx->source, &rows));
  if (json_array_size(rows) != (size_t)gx->num_nodes + 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: node_row_ptr has %zu values, expected %d (nodes + 1)",
                       gx->source, json_array_size(rows), gx->num_nodes + 1);
  }
  for (int i = 0; i <= gx->num_nodes; ++i) {
    int expected = i < gx->num_nodes ? gx->nodes[i].first_entry : gx->num_entries;
    json_t *value = json_array_get(rows, (size_t)i);
    if (!json_is_integer(value) || json_integer_value(value) != expected) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: node_row_ptr[%d] is not %d (the outputs of the nodes before it)",
                         gx->source, i, expected);
    }
  }
  return KILN_OK;
}

static kiln_status_t parse_nodes(kiln_graph_executor_t *gx, const json_t *root) {
  json_t *nodes = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, "nodes", gx->source, &nodes));
  size_t count = json_array_size(nodes);
  if (count == 0 || count > INT32_MAX / 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: 'nodes' has %zu nodes", gx->source, count);
  }
  gx->num_nodes = (int)count;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&gx->arena, count * sizeof(kiln_gx_node_t),
                                                  _Alignof(kiln_gx_node_t), (void **)&gx->nodes));
  int64_t entries = 0;
  for (size_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(parse_node_head(gx, json_array_get(nodes, i), (int)i, &gx->nodes[i]));
    gx->nodes[i].first_entry = (int)entries;
    entries += gx->nodes[i].num_outputs;
    if (entries > INT32_MAX / 2) {
      return KILN_STATUS(OUT_OF_RANGE, "%s: more than %d entries", gx->source, INT32_MAX / 2);
    }
  }
  gx->num_entries = (int)entries;
  KILN_RETURN_IF_ERROR(check_row_ptr(gx, root));
  for (size_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(parse_node_inputs(gx, json_array_get(nodes, i), (int)i));
  }
  return KILN_OK;
}

/* arg_nodes: every null node, once each. */
static kiln_status_t parse_arg_nodes(kiln_graph_executor_t *gx, const json_t *root) {
  json_t *args = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, "arg_nodes", gx->source, &args));
  size_t count = json_array_size(args);
  KILN_RETURN_IF_ERROR(arena_ints(gx, count, &gx->arg_nodes));
  unsigned char *listed = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_zeroed(&gx->arena, (size_t)gx->num_nodes, 1, (void **)&listed));
  for (size_t i = 0; i < count; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "arg_nodes[%zu]", i);
    int64_t node = 0;
    KILN_RETURN_IF_ERROR(
        int_in_range(json_array_get(args, i), 0, gx->num_nodes - 1, gx->source, what, &node));
    if (gx->nodes[node].func_name || listed[node]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %s is node %d %s, which is %s", gx->source, what,
                         (int)node, gx->nodes[node].name,
                         listed[node] ? "listed twice" : "not a null node");
    }
    listed[node] = 1;
    gx->arg_nodes[i] = (int)node;
  }
  gx->num_arg_nodes = (int)count;
  for (int i = 0; i < gx->num_nodes; ++i) {
    if (!gx->nodes[i].func_name && !listed[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: null node %d %s is not in arg_nodes", gx->source, i,
                         gx->nodes[i].name);
    }
  }
  return KILN_OK;
}

static kiln_status_t parse_heads(kiln_graph_executor_t *gx, const json_t *root) {
  json_t *heads = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_array(root, "heads", gx->source, &heads));
  size_t count = json_array_size(heads);
  if (count == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: 'heads' is empty: the graph has no output",
                       gx->source);
  }
  KILN_RETURN_IF_ERROR(arena_ints(gx, count, &gx->output_entries));
  KILN_RETURN_IF_ERROR(arena_ints(gx, count, &gx->output_nodes));
  for (size_t i = 0; i < count; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "heads[%zu]", i);
    KILN_RETURN_IF_ERROR(parse_ref(gx, json_array_get(heads, i), gx->num_nodes, gx->source, what,
                                   &gx->output_entries[i]));
    gx->output_nodes[i] = (int)json_integer_value(json_array_get(json_array_get(heads, i), 0));
  }
  gx->num_outputs = (int)count;
  return KILN_OK;
}

/* attrs[key] as ["tag", [values]] with `expected` values; NULL when absent
 * and not required. */
static kiln_status_t attr_list(const kiln_graph_executor_t *gx, const json_t *attrs,
                               const char *key, const char *tag, size_t expected, int required,
                               json_t **out_values) {
  *out_values = NULL;
  json_t *pair = json_object_get(attrs, key);
  if (!pair) {
    return required ? KILN_STATUS(NOT_FOUND, "%s: attrs: missing key '%s'", gx->source, key)
                    : KILN_OK;
  }
  json_t *values = json_array_get(pair, 1);
  if (json_array_size(pair) != 2 || !json_is_string(json_array_get(pair, 0)) ||
      strcmp(json_string_value(json_array_get(pair, 0)), tag) != 0 || !json_is_array(values)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attrs '%s': expected [\"%s\", [...]]", gx->source,
                       key, tag);
  }
  if (json_array_size(values) != expected) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attrs '%s' has %zu values, expected %zu (one per %s)",
                       gx->source, key, json_array_size(values), expected,
                       strcmp(key, "kiln_flops") == 0 ? "node" : "entry");
  }
  *out_values = values;
  return KILN_OK;
}

/* Entry `e`'s shape from a JSON list of dims. */
static kiln_status_t parse_shape(kiln_graph_executor_t *gx, const json_t *dims, int e) {
  char where[KILN_GX_WHERE_SIZE];
  snprintf(where, sizeof(where), "%s: attrs 'shape'", gx->source);
  size_t ndim = json_array_size(dims);
  if (!json_is_array(dims) || ndim > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: entry %d: expected a list of at most %d dims", where,
                       e, KILN_MAX_RANK);
  }
  int64_t *shape = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&gx->arena, ndim > 0 ? ndim : 1, sizeof(int64_t),
                                                 _Alignof(int64_t), (void **)&shape));
  for (size_t d = 0; d < ndim; ++d) {
    char what[64];
    snprintf(what, sizeof(what), "entry %d dim %zu", e, d);
    KILN_RETURN_IF_ERROR(
        int_in_range(json_array_get(dims, d), 0, INT64_MAX, where, what, &shape[d]));
  }
  kiln_gx_entry_t *entry = &gx->entries[e];
  entry->dl.shape = shape;
  entry->dl.ndim = (int)ndim;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_shape_byte_size(entry->dtype, (int)ndim, shape, &entry->bytes),
                                "%s: entry %d", where, e);
  return KILN_OK;
}

static kiln_status_t parse_entry(kiln_graph_executor_t *gx, const json_t *dtypes,
                                 const json_t *storage_ids, const json_t *shapes, int e) {
  kiln_gx_entry_t *entry = &gx->entries[e];
  json_t *dtype = json_array_get(dtypes, (size_t)e);
  if (!json_is_string(dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: attrs 'dltype': entry %d: expected a string, got %s",
                       gx->source, e, kiln_json_type_name(dtype));
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_dtype_from_name(json_string_value(dtype), &entry->dtype),
                                "%s: attrs 'dltype': entry %d", gx->source, e);
  int64_t storage = 0;
  char what[64];
  snprintf(what, sizeof(what), "entry %d", e);
  char where[KILN_GX_WHERE_SIZE];
  snprintf(where, sizeof(where), "%s: attrs 'storage_id'", gx->source);
  KILN_RETURN_IF_ERROR(int_in_range(json_array_get(storage_ids, (size_t)e), 0, gx->num_entries - 1,
                                    where, what, &storage));
  entry->storage_id = (int)storage;
  if (entry->storage_id >= gx->num_storages) {
    gx->num_storages = entry->storage_id + 1;
  }
  entry->dl.device = (DLDevice){kDLCPU, 0};
  entry->dl.dtype = kiln_dtype_to_dl(entry->dtype);
  entry->dl.strides = NULL;
  entry->dl.byte_offset = 0;
  return parse_shape(gx, json_array_get(shapes, (size_t)e), e);
}

/* device_index, when present, must put every entry on the CPU. */
static kiln_status_t check_devices(const kiln_graph_executor_t *gx, const json_t *devices) {
  for (size_t e = 0; devices && e < json_array_size(devices); ++e) {
    json_t *device = json_array_get(devices, e);
    if (!json_is_integer(device) || json_integer_value(device) != kDLCPU) {
      return KILN_STATUS(
          UNIMPLEMENTED,
          "%s: attrs 'device_index': entry %zu is not on the CPU (device type %d expected): "
          "kiln runs on the CPU only",
          gx->source, e, kDLCPU);
    }
  }
  return KILN_OK;
}

static kiln_status_t parse_flops(kiln_graph_executor_t *gx, const json_t *flops) {
  for (int i = 0; flops && i < gx->num_nodes; ++i) {
    char where[KILN_GX_WHERE_SIZE];
    snprintf(where, sizeof(where), "%s: attrs 'kiln_flops'", gx->source);
    char what[64];
    snprintf(what, sizeof(what), "node %d", i);
    KILN_RETURN_IF_ERROR(int_in_range(json_array_get(flops, (size_t)i), 0, INT64_MAX, where, what,
                                      &gx->nodes[i].flops));
  }
  return KILN_OK;
}

/* storage_offset (kiln's own, optional): bytes into each entry's storage,
 * a multiple of the tensor alignment, at most 2^40. */
static kiln_status_t parse_offsets(kiln_graph_executor_t *gx, const json_t *offsets) {
  for (int e = 0; offsets && e < gx->num_entries; ++e) {
    char where[KILN_GX_WHERE_SIZE], what[64];
    snprintf(where, sizeof(where), "%s: attrs 'storage_offset'", gx->source);
    snprintf(what, sizeof(what), "entry %d", e);
    int64_t offset = 0;
    KILN_RETURN_IF_ERROR(int_in_range(json_array_get(offsets, (size_t)e), 0, (int64_t)1 << 40,
                                      where, what, &offset));
    if (offset % KILN_TENSOR_ALIGNMENT != 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: entry %d: offset %lld is not a multiple of %d (the tensor alignment)",
                         where, e, (long long)offset, KILN_TENSOR_ALIGNMENT);
    }
    gx->entries[e].offset = (size_t)offset;
  }
  return KILN_OK;
}

static kiln_status_t parse_attrs(kiln_graph_executor_t *gx, const json_t *root) {
  json_t *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_get_object(root, "attrs", gx->source, &attrs));
  size_t n = (size_t)gx->num_entries;
  json_t *dtypes = NULL, *storage_ids = NULL, *shapes = NULL, *devices = NULL, *flops = NULL,
         *offsets = NULL;
  KILN_RETURN_IF_ERROR(attr_list(gx, attrs, "dltype", "list_str", n, 1, &dtypes));
  KILN_RETURN_IF_ERROR(attr_list(gx, attrs, "storage_id", "list_int", n, 1, &storage_ids));
  KILN_RETURN_IF_ERROR(attr_list(gx, attrs, "shape", "list_shape", n, 1, &shapes));
  KILN_RETURN_IF_ERROR(attr_list(gx, attrs, "device_index", "list_int", n, 0, &devices));
  KILN_RETURN_IF_ERROR(
      attr_list(gx, attrs, "kiln_flops", "list_int", (size_t)gx->num_nodes, 0, &flops));
  KILN_RETURN_IF_ERROR(attr_list(gx, attrs, "storage_offset", "list_int", n, 0, &offsets));
  KILN_RETURN_IF_ERROR(check_devices(gx, devices));
  KILN_RETURN_IF_ERROR(parse_flops(gx, flops));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(
      &gx->arena, n * sizeof(kiln_gx_entry_t), _Alignof(kiln_gx_entry_t), (void **)&gx->entries));
  for (int e = 0; e < gx->num_entries; ++e) {
    KILN_RETURN_IF_ERROR(parse_entry(gx, dtypes, storage_ids, shapes, e));
  }
  return parse_offsets(gx, offsets);
}

kiln_status_t kiln_gx_parse(kiln_graph_executor_t *gx, const json_t *root) {
  if (!json_is_object(root)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected an object, got %s", gx->source,
                       kiln_json_type_name(root));
  }
  KILN_RETURN_IF_ERROR(parse_nodes(gx, root));
  KILN_RETURN_IF_ERROR(parse_arg_nodes(gx, root));
  KILN_RETURN_IF_ERROR(parse_heads(gx, root));
  return parse_attrs(gx, root);
}
