/*
 * The graph executor (as TVM's GraphExecutor): create, inputs,
 * outputs and the run; see include/kiln/runtime.h and graph_executor.h.
 *
 * Create does all the work a run must not: graph_parse.c reads the file into
 * nodes and entries in the executor's arena; then every storage id gets one
 * zeroed, 64-byte-aligned block of its largest entry's size and every entry
 * points into its block (entries sharing an id share the memory, as the plan
 * intends); the null nodes found in the params become params, their values
 * copied in (a param must own its storage, since a run must not overwrite
 * it), the rest inputs, in arg_nodes order; each kernel node's function is
 * looked up once, its argument count checked against the one the library
 * records for it (kiln_runtime_module_function_num_args: a mismatch is
 * refused here, at load, naming node, function and both counts), and its
 * packed argument array built over the entries' DLTensors. A run then checks that every input was
 * set and calls the nodes in order, prefixing a kernel's error with the source, node and name.
 *
 * Zero-copy inputs swap the input entry's data pointer for the caller's
 * (kernels see the entry's DLTensor, so nothing else changes); a later
 * set_input copies into the storage and points the entry back at it. Outputs
 * are views of the head entries' DLTensors, or copies on request.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "runtime/graph_executor.h"

/* ---- create ---- */

/* Where an entry's tensor lives: its storage at its offset. */
static void *entry_data(const kiln_graph_executor_t *gx, const kiln_gx_entry_t *entry) {
  return (char *)gx->storages[entry->storage_id] + entry->offset;
}

static kiln_status_t allocate_storage(kiln_graph_executor_t *gx) {
  size_t count = gx->num_storages > 0 ? (size_t)gx->num_storages : 1;
  size_t *sizes = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&gx->arena, count * sizeof(size_t),
                                                  _Alignof(size_t), (void **)&sizes));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&gx->arena, count * sizeof(void *),
                                                  _Alignof(void *), (void **)&gx->storages));
  for (int e = 0; e < gx->num_entries; ++e) {
    size_t *size = &sizes[gx->entries[e].storage_id];
    size_t end = gx->entries[e].offset + gx->entries[e].bytes;
    *size = end > *size ? end : *size;
  }
  for (int s = 0; s < gx->num_storages; ++s) {
    KILN_RETURN_IF_ERROR(
        kiln_arena_allocate_zeroed(&gx->arena, sizes[s], KILN_TENSOR_ALIGNMENT, &gx->storages[s]));
  }
  for (int e = 0; e < gx->num_entries; ++e) {
    gx->entries[e].dl.data = entry_data(gx, &gx->entries[e]);
  }
  return KILN_OK;
}

static kiln_status_t check_param(const kiln_graph_executor_t *gx, int node,
                                 const kiln_tensor_t *value) {
  const kiln_gx_node_t *n = &gx->nodes[node];
  const kiln_gx_entry_t *entry = &gx->entries[n->first_entry];
  if (kiln_tensor_dtype(value) != entry->dtype ||
      !kiln_shape_equal(kiln_tensor_ndim(value), kiln_tensor_shape(value), entry->dl.ndim,
                        entry->dl.shape)) {
    char got[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(value), kiln_tensor_shape(value), got, sizeof(got));
    kiln_shape_format(entry->dl.ndim, entry->dl.shape, want, sizeof(want));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s node %d: param '%s' is %s %s in the params, the graph expects %s %s",
                       gx->source, node, n->name, kiln_dtype_name(kiln_tensor_dtype(value)), got,
                       kiln_dtype_name(entry->dtype), want);
  }
  for (int e = 0; e < gx->num_entries; ++e) {
    if (e != n->first_entry && gx->entries[e].storage_id == entry->storage_id) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s node %d: param '%s' shares storage %d with entry %d; a param needs "
                         "a storage of its own",
                         gx->source, node, n->name, entry->storage_id, e);
    }
  }
  return KILN_OK;
}

/* Params into their storage; the other null nodes become the inputs. */
static kiln_status_t bind_params(kiln_graph_executor_t *gx, const kiln_runtime_params_t *params) {
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(&gx->arena, gx->num_arg_nodes > 0 ? (size_t)gx->num_arg_nodes : 1,
                                sizeof(int), _Alignof(int), (void **)&gx->input_nodes));
  for (int i = 0; i < gx->num_arg_nodes; ++i) {
    int node = gx->arg_nodes[i];
    kiln_tensor_t *value = params ? kiln_runtime_params_get(params, gx->nodes[node].name) : NULL;
    if (!value) {
      gx->input_nodes[gx->num_inputs++] = node;
      continue;
    }
    KILN_RETURN_IF_ERROR(check_param(gx, node, value));
    gx->nodes[node].kind = KILN_GX_NODE_PARAM;
    const kiln_gx_entry_t *entry = &gx->entries[gx->nodes[node].first_entry];
    if (entry->bytes > 0) {
      memcpy(entry->dl.data, kiln_tensor_data(value), entry->bytes);
    }
  }
  return kiln_arena_allocate_zeroed(&gx->arena, gx->num_inputs > 0 ? (size_t)gx->num_inputs : 1, 1,
                                    (void **)&gx->input_set);
}

/* A node must pass its function the argument count the function checks,
 * when the library records it: the kernel would refuse the call at the
 * first run, and a plan built over the wrong function is no plan at all. */
static kiln_status_t check_num_args(const kiln_graph_executor_t *gx, int index) {
  const kiln_gx_node_t *n = &gx->nodes[index];
  int expected = kiln_runtime_module_function_num_args(gx->module, n->func_name);
  int passed = n->num_inputs + n->num_outputs;
  if (expected >= 0 && expected != passed) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s node %d %s: function %s takes %d arguments, the node passes %d (%d "
                       "inputs, %d outputs)",
                       gx->source, index, n->name, n->func_name, expected, passed, n->num_inputs,
                       n->num_outputs);
  }
  return KILN_OK;
}

static kiln_status_t bind_kernel(kiln_graph_executor_t *gx, int index) {
  kiln_gx_node_t *n = &gx->nodes[index];
  kiln_status_t status = kiln_runtime_module_get_function(gx->module, n->func_name, &n->fn);
  if (status) {
    kiln_status_free(status);
    return KILN_STATUS(NOT_FOUND, "%s node %d %s: the library has no function %s", gx->source,
                       index, n->name, n->func_name);
  }
  KILN_RETURN_IF_ERROR(check_num_args(gx, index));
  size_t count = (size_t)(n->num_inputs + n->num_outputs);
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&gx->arena, count, sizeof(kiln_value_t),
                                                 _Alignof(kiln_value_t), (void **)&n->args));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&gx->arena, count, sizeof(int), _Alignof(int),
                                                 (void **)&n->type_codes));
  for (size_t i = 0; i < count; ++i) {
    int entry =
        (int)i < n->num_inputs ? n->input_entries[i] : n->first_entry + (int)i - n->num_inputs;
    n->args[i].v_handle = &gx->entries[entry].dl;
    n->type_codes[i] = KILN_ARG_DLTENSOR;
  }
  return KILN_OK;
}

/* Whether two entries' bytes overlap in one storage. */
static bool entries_overlap(const kiln_graph_executor_t *gx, int a, int b) {
  const kiln_gx_entry_t *x = &gx->entries[a], *y = &gx->entries[b];
  return x->storage_id == y->storage_id && x->offset < y->offset + y->bytes &&
         y->offset < x->offset + x->bytes;
}

/* A kernel (or __copy) must not write over one of its own inputs: a plan
 * that says so would compute with clobbered data, a silent wrong answer. */
static kiln_status_t check_no_clobber(const kiln_graph_executor_t *gx, int index) {
  const kiln_gx_node_t *n = &gx->nodes[index];
  for (int o = n->first_entry; o < n->first_entry + n->num_outputs; ++o) {
    for (int i = 0; i < n->num_inputs; ++i) {
      int in = n->input_entries[i];
      if (gx->entries[o].bytes > 0 && gx->entries[in].bytes > 0 && entries_overlap(gx, o, in)) {
        return KILN_STATUS(INVALID_ARGUMENT,
                           "%s node %d %s: output entry %d shares storage %d with its input entry "
                           "%d; a kernel cannot write over its own input",
                           gx->source, index, n->name, o, gx->entries[o].storage_id, in);
      }
    }
  }
  return KILN_OK;
}

static kiln_status_t check_copy(const kiln_graph_executor_t *gx, int index) {
  const kiln_gx_node_t *n = &gx->nodes[index];
  size_t in = gx->entries[n->input_entries[0]].bytes, out = gx->entries[n->first_entry].bytes;
  if (in != out) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s node %d %s: __copy of %zu bytes into an output of %zu bytes", gx->source,
                       index, n->name, in, out);
  }
  return KILN_OK;
}

static kiln_status_t bind_nodes(kiln_graph_executor_t *gx) {
  for (int i = 0; i < gx->num_nodes; ++i) {
    switch (gx->nodes[i].kind) {
    case KILN_GX_NODE_KERNEL:
      KILN_RETURN_IF_ERROR(check_no_clobber(gx, i));
      KILN_RETURN_IF_ERROR(bind_kernel(gx, i));
      break;
    case KILN_GX_NODE_COPY:
      KILN_RETURN_IF_ERROR(check_no_clobber(gx, i));
      KILN_RETURN_IF_ERROR(check_copy(gx, i));
      break;
    case KILN_GX_NODE_INPUT:
    case KILN_GX_NODE_PARAM:
    case KILN_GX_NODE_NOP:
    case KILN_GX_NODE_KIND_COUNT_:
      break;
    }
  }
  return KILN_OK;
}

static kiln_status_t build(kiln_graph_executor_t *gx, const char *graph_json,
                           const kiln_runtime_params_t *params) {
  json_t *root = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_parse(graph_json, strlen(graph_json), gx->source, &root));
  if (kiln_vm_is_program(root)) {
    kiln_status_t status =
        kiln_vm_create(gx->allocator, root, gx->source, gx->module, params, &gx->vm);
    json_decref(root);
    return status;
  }
  kiln_status_t status = kiln_gx_parse(gx, root);
  json_decref(root);
  KILN_RETURN_IF_ERROR(status);
  KILN_RETURN_IF_ERROR(allocate_storage(gx));
  KILN_RETURN_IF_ERROR(bind_params(gx, params));
  return bind_nodes(gx);
}

kiln_status_t kiln_graph_executor_create(kiln_allocator_t allocator, const char *graph_json,
                                         const char *source_name, kiln_runtime_module_t *module,
                                         const kiln_runtime_params_t *params,
                                         kiln_graph_executor_t **out_executor) {
  *out_executor = NULL;
  const char *source = source_name ? source_name : "graph.json";
  if (!graph_json || !module) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the graph executor needs the JSON and a module",
                       source);
  }
  kiln_graph_executor_t *gx = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*gx), (void **)&gx));
  gx->allocator = allocator;
  kiln_arena_initialize(&gx->arena, allocator, 0);
  kiln_runtime_module_retain(module);
  gx->module = module;
  char *source_copy = NULL;
  kiln_status_t status = kiln_arena_strdup(&gx->arena, source, &source_copy);
  gx->source = source_copy ? source_copy : source;
  if (!status) {
    status = build(gx, graph_json, params);
  }
  if (status) {
    kiln_graph_executor_destroy(gx);
    return status;
  }
  *out_executor = gx;
  return KILN_OK;
}

void kiln_graph_executor_destroy(kiln_graph_executor_t *executor) {
  if (!executor) {
    return;
  }
  kiln_vm_destroy(executor->vm);
  kiln_runtime_module_release(executor->module);
  kiln_arena_deinitialize(&executor->arena);
  kiln_allocator_free(executor->allocator, executor);
}

/* ---- load from a folder or one file ---- */

typedef struct folder_parts_t {
  char *graph_path;
  char *library_path;
  char *params_path;
  void *graph_json;
  kiln_runtime_module_t *module;
  kiln_runtime_params_t *params;
} folder_parts_t;

static kiln_status_t artifact_path(kiln_allocator_t allocator, const char *folder, const char *name,
                                   const char *hint, char **out_path) {
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, folder, name, out_path));
  if (!kiln_file_exists(*out_path)) {
    return KILN_STATUS(NOT_FOUND, "graph executor: %s has no %s%s", folder, name, hint);
  }
  return KILN_OK;
}

/* The folder's program: graph.json (the graph executor's) or vm.json (the
 * VM's); both at once is ambiguous. */
static kiln_status_t program_path(kiln_allocator_t allocator, const char *folder, char **out_path) {
  char *graph = NULL, *vm = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, folder, "graph.json", &graph));
  kiln_status_t status = kiln_path_join(allocator, folder, "vm.json", &vm);
  int has_graph = !status && kiln_file_exists(graph), has_vm = !status && kiln_file_exists(vm);
  if (!status && has_graph == has_vm) {
    status = has_graph ? KILN_STATUS(INVALID_ARGUMENT,
                                     "executor: %s holds both graph.json and vm.json; keep the "
                                     "one of the executor you compiled for",
                                     folder)
                       : KILN_STATUS(NOT_FOUND,
                                     "graph executor: %s has no graph.json (nor vm.json, the VM's "
                                     "program)",
                                     folder);
  }
  if (!status) {
    *out_path = has_vm ? vm : graph;
    kiln_allocator_free(allocator, has_vm ? graph : vm);
    return KILN_OK;
  }
  kiln_allocator_free(allocator, graph);
  kiln_allocator_free(allocator, vm);
  return status;
}

static kiln_status_t load_parts(kiln_allocator_t allocator, const char *folder,
                                folder_parts_t *parts) {
  if (!kiln_file_is_directory(folder)) {
    return KILN_STATUS(NOT_FOUND,
                       "graph executor: %s is not a folder (of graph.json, lib.so and "
                       "params.bin) nor a file (a one-file model, FILE.so)",
                       folder);
  }
  KILN_RETURN_IF_ERROR(program_path(allocator, folder, &parts->graph_path));
  KILN_RETURN_IF_ERROR(artifact_path(allocator, folder, "lib.so", "", &parts->library_path));
  KILN_RETURN_IF_ERROR(artifact_path(allocator, folder, "params.bin",
                                     " (a build writes one, empty when the model has no params)",
                                     &parts->params_path));
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, parts->graph_path, &parts->graph_json, &size));
  if (strlen(parts->graph_json) != size) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: holds a NUL byte: not JSON text", parts->graph_path);
  }
  KILN_RETURN_IF_ERROR(kiln_runtime_module_load(allocator, parts->library_path, &parts->module));
  return kiln_runtime_params_load(allocator, parts->params_path, &parts->params);
}

/* A one-file model: the library loaded (its target checked), then the
 * model it embeds read from the file. */
static kiln_status_t load_one_file(kiln_allocator_t allocator, const char *path,
                                   folder_parts_t *parts) {
  char **graph_json = (char **)&parts->graph_json;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(allocator, path, &parts->library_path));
  KILN_RETURN_IF_ERROR(kiln_runtime_module_load(allocator, path, &parts->module));
  KILN_RETURN_IF_ERROR(kiln_runtime_model_file_read(allocator, path, graph_json, &parts->params));
  char source[4200];
  snprintf(source, sizeof(source), "%.4096s(graph.json)", path);
  return kiln_allocator_strdup(allocator, source, &parts->graph_path);
}

kiln_status_t kiln_graph_executor_load(kiln_allocator_t allocator, const char *path,
                                       kiln_graph_executor_t **out_executor) {
  *out_executor = NULL;
  folder_parts_t parts = {0};
  kiln_status_t status = KILN_OK;
  if (!path) {
    status = KILN_STATUS(INVALID_ARGUMENT, "graph executor: no folder or file");
  } else if (!kiln_file_is_directory(path) && kiln_file_exists(path)) {
    status = load_one_file(allocator, path, &parts);
  } else {
    status = load_parts(allocator, path, &parts);
  }
  if (!status) {
    status = kiln_graph_executor_create(allocator, parts.graph_json, parts.graph_path, parts.module,
                                        parts.params, out_executor);
  }
  kiln_runtime_params_destroy(parts.params);
  kiln_runtime_module_release(parts.module);
  kiln_allocator_free(allocator, parts.graph_json);
  kiln_allocator_free(allocator, parts.graph_path);
  kiln_allocator_free(allocator, parts.library_path);
  kiln_allocator_free(allocator, parts.params_path);
  return status;
}

/* ---- inputs and outputs ---- */

int kiln_graph_executor_num_inputs(const kiln_graph_executor_t *executor) {
  if (executor->vm) {
    return executor->vm->num_inputs;
  }
  return executor->num_inputs;
}

int kiln_graph_executor_num_outputs(const kiln_graph_executor_t *executor) {
  if (executor->vm) {
    return executor->vm->num_outputs;
  }
  return executor->num_outputs;
}

static kiln_status_t check_index(const kiln_graph_executor_t *gx, const char *what, int index,
                                 int count) {
  if (index < 0 || index >= count) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: %s %d does not exist (the graph has %d)", gx->source,
                       what, index, count);
  }
  return KILN_OK;
}

static void entry_info(const kiln_graph_executor_t *gx, int node, int entry,
                       kiln_graph_executor_tensor_info_t *out_info) {
  const kiln_gx_entry_t *e = &gx->entries[entry];
  *out_info = (kiln_graph_executor_tensor_info_t){gx->nodes[node].name, e->dtype, e->dl.ndim,
                                                  e->dl.shape, KILN_VALUE_KIND_TENSOR};
}

kiln_status_t kiln_graph_executor_input_info(const kiln_graph_executor_t *executor, int index,
                                             kiln_graph_executor_tensor_info_t *out_info) {
  if (executor->vm) {
    return kiln_vm_input_info(executor->vm, index, out_info);
  }
  KILN_RETURN_IF_ERROR(check_index(executor, "input", index, executor->num_inputs));
  int node = executor->input_nodes[index];
  entry_info(executor, node, executor->nodes[node].first_entry, out_info);
  return KILN_OK;
}

kiln_status_t kiln_graph_executor_output_info(const kiln_graph_executor_t *executor, int index,
                                              kiln_graph_executor_tensor_info_t *out_info) {
  if (executor->vm) {
    return kiln_vm_output_info(executor->vm, index, out_info);
  }
  KILN_RETURN_IF_ERROR(check_index(executor, "output", index, executor->num_outputs));
  entry_info(executor, executor->output_nodes[index], executor->output_entries[index], out_info);
  return KILN_OK;
}

/* NOT_FOUND for a name that is no input: the inputs listed, and a param said so. */
static kiln_status_t no_such_input(const kiln_graph_executor_t *gx, const char *name) {
  char list[1024] = "";
  size_t used = 0;
  for (int i = 0; i < gx->num_inputs && used < sizeof(list); ++i) {
    int written = snprintf(list + used, sizeof(list) - used, "%s'%s'", i > 0 ? ", " : "",
                           gx->nodes[gx->input_nodes[i]].name);
    used += written > 0 ? (size_t)written : 0;
  }
  for (int i = 0; i < gx->num_arg_nodes; ++i) {
    const kiln_gx_node_t *n = &gx->nodes[gx->arg_nodes[i]];
    if (n->kind == KILN_GX_NODE_PARAM && strcmp(n->name, name) == 0) {
      return KILN_STATUS(NOT_FOUND, "%s: '%s' is a param, not an input; the inputs are %s",
                         gx->source, name, list);
    }
  }
  return KILN_STATUS(NOT_FOUND, "%s: no input is named '%s'; the inputs are %s", gx->source, name,
                     gx->num_inputs > 0 ? list : "none");
}

kiln_status_t kiln_graph_executor_input_index(const kiln_graph_executor_t *executor,
                                              const char *name, int *out_index) {
  if (executor->vm) {
    return kiln_vm_input_index(executor->vm, name, out_index);
  }
  *out_index = -1;
  for (int i = 0; name && i < executor->num_inputs; ++i) {
    if (strcmp(executor->nodes[executor->input_nodes[i]].name, name) == 0) {
      *out_index = i;
      return KILN_OK;
    }
  }
  return no_such_input(executor, name ? name : "(null)");
}

/* The caller's tensor against input `index`: CPU, dtype, shape, compact. */
static kiln_status_t check_input_tensor(const kiln_graph_executor_t *gx, int index,
                                        const DLTensor *t) {
  KILN_RETURN_IF_ERROR(check_index(gx, "input", index, gx->num_inputs));
  const kiln_gx_node_t *n = &gx->nodes[gx->input_nodes[index]];
  const kiln_gx_entry_t *e = &gx->entries[n->first_entry];
  if (!t || (!t->data && e->bytes > 0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s': no tensor or no data", gx->source,
                       n->name);
  }
  if (t->device.device_type != kDLCPU) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' is on device type %d, expected the CPU",
                       gx->source, n->name, (int)t->device.device_type);
  }
  DLDataType want = e->dl.dtype;
  if (t->dtype.code != want.code || t->dtype.bits != want.bits || t->dtype.lanes != want.lanes) {
    char got[KILN_DTYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' has dtype %s, expected %s", gx->source,
                       n->name, kiln_dl_dtype_format(t->dtype, got, sizeof(got)),
                       kiln_dtype_name(e->dtype));
  }
  if (t->ndim < 0 || t->ndim > KILN_MAX_RANK ||
      !kiln_shape_equal(t->ndim, t->shape, e->dl.ndim, e->dl.shape)) {
    char got[KILN_SHAPE_TEXT_CAPACITY] = "(bad rank)", want_text[KILN_SHAPE_TEXT_CAPACITY];
    if (t->ndim >= 0 && t->ndim <= KILN_MAX_RANK) {
      kiln_shape_format(t->ndim, t->shape, got, sizeof(got));
    }
    kiln_shape_format(e->dl.ndim, e->dl.shape, want_text, sizeof(want_text));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' has shape %s, expected %s", gx->source,
                       n->name, got, want_text);
  }
  if (!kiln_dl_is_compact(t)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input '%s' is not compact (strides not row-major)",
                       gx->source, n->name);
  }
  return KILN_OK;
}

kiln_status_t kiln_graph_executor_set_input(kiln_graph_executor_t *executor, int index,
                                            const DLTensor *tensor) {
  if (executor->vm) {
    return kiln_vm_set_input(executor->vm, index, tensor, 0);
  }
  KILN_RETURN_IF_ERROR(check_input_tensor(executor, index, tensor));
  kiln_gx_entry_t *e =
      &executor->entries[executor->nodes[executor->input_nodes[index]].first_entry];
  e->dl.data = entry_data(executor, e);
  if (e->bytes > 0) {
    memcpy(e->dl.data, (const char *)tensor->data + tensor->byte_offset, e->bytes);
  }
  executor->input_set[index] = 1;
  return KILN_OK;
}

kiln_status_t kiln_graph_executor_set_input_by_name(kiln_graph_executor_t *executor,
                                                    const char *name, const DLTensor *tensor) {
  int index = -1;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_input_index(executor, name, &index));
  return kiln_graph_executor_set_input(executor, index, tensor);
}

kiln_status_t kiln_graph_executor_set_input_zero_copy(kiln_graph_executor_t *executor, int index,
                                                      const DLTensor *tensor) {
  if (executor->vm) {
    return kiln_vm_set_input(executor->vm, index, tensor, 1);
  }
  KILN_RETURN_IF_ERROR(check_input_tensor(executor, index, tensor));
  const char *data = (const char *)tensor->data + tensor->byte_offset;
  const kiln_gx_node_t *n = &executor->nodes[executor->input_nodes[index]];
  if ((uintptr_t)data % KILN_TENSOR_ALIGNMENT != 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: input '%s': zero-copy data must be %d-byte aligned (copy it with "
                       "set_input instead)",
                       executor->source, n->name, KILN_TENSOR_ALIGNMENT);
  }
  kiln_gx_entry_t *e = &executor->entries[n->first_entry];
  e->dl.data = (void *)(uintptr_t)data;
  executor->input_set[index] = 1;
  return KILN_OK;
}

kiln_status_t kiln_graph_executor_get_output(const kiln_graph_executor_t *executor, int index,
                                             const DLTensor **out_view) {
  *out_view = NULL;
  if (executor->vm) {
    return kiln_vm_get_output(executor->vm, index, out_view);
  }
  KILN_RETURN_IF_ERROR(check_index(executor, "output", index, executor->num_outputs));
  *out_view = &executor->entries[executor->output_entries[index]].dl;
  return KILN_OK;
}

static kiln_status_t no_lists(const kiln_graph_executor_t *executor) {
  return KILN_STATUS(UNIMPLEMENTED,
                     "%s: the graph executor takes and returns tensors only (sequences and "
                     "optionals need the VM)",
                     executor->source);
}

kiln_status_t kiln_graph_executor_set_input_list(kiln_graph_executor_t *executor, int index,
                                                 int count, const DLTensor *const *elements) {
  return executor->vm ? kiln_vm_set_input_list(executor->vm, index, count, elements)
                      : no_lists(executor);
}

kiln_status_t kiln_graph_executor_get_output_list(const kiln_graph_executor_t *executor, int index,
                                                  int *out_count) {
  *out_count = 0;
  return executor->vm ? kiln_vm_get_output_list(executor->vm, index, out_count)
                      : no_lists(executor);
}

kiln_status_t kiln_graph_executor_get_output_element(const kiln_graph_executor_t *executor,
                                                     int index, int element,
                                                     const DLTensor **out_view) {
  *out_view = NULL;
  return executor->vm ? kiln_vm_get_output_element(executor->vm, index, element, out_view)
                      : no_lists(executor);
}

kiln_status_t kiln_graph_executor_copy_output(const kiln_graph_executor_t *executor, int index,
                                              kiln_allocator_t allocator,
                                              kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  if (executor->vm) {
    const DLTensor *view = NULL;
    KILN_RETURN_IF_ERROR(kiln_vm_get_output(executor->vm, index, &view));
    return kiln_tensor_create_copy(allocator, executor->vm->outputs[index].dtype, view->ndim,
                                   view->shape, view->data, executor->vm->outputs[index].bytes,
                                   out_tensor);
  }
  KILN_RETURN_IF_ERROR(check_index(executor, "output", index, executor->num_outputs));
  const kiln_gx_entry_t *e = &executor->entries[executor->output_entries[index]];
  return kiln_tensor_create_copy(allocator, e->dtype, e->dl.ndim, e->dl.shape, e->dl.data, e->bytes,
                                 out_tensor);
}

/* ---- run ---- */

kiln_status_t kiln_gx_check_inputs(const kiln_graph_executor_t *executor) {
  for (int i = 0; i < executor->num_inputs; ++i) {
    if (!executor->input_set[i]) {
      int node = executor->input_nodes[i];
      return KILN_STATUS(FAILED_PRECONDITION,
                         "%s: input '%s' (node %d) was never set (kiln_graph_executor_set_input); "
                         "if it is a param, the params lack it",
                         executor->source, executor->nodes[node].name, node);
    }
  }
  return KILN_OK;
}

/* "<source> node <i> <name>: <the kernel's message>", the kernel's own
 * "<func>: " left out when the node has the kernel's name. */
static kiln_status_t kernel_error(const kiln_graph_executor_t *gx, int index) {
  const kiln_gx_node_t *n = &gx->nodes[index];
  const char *error = kiln_get_last_error();
  size_t length = strlen(n->func_name);
  if (strcmp(n->name, n->func_name) == 0 && strncmp(error, n->func_name, length) == 0 &&
      error[length] == ':') {
    error += length + 1 + (error[length + 1] == ' ');
  }
  return KILN_STATUS(INTERNAL, "%s node %d %s: %s", gx->source, index, n->name,
                     *error ? error : "failed (no message)");
}

kiln_status_t kiln_gx_run_node(kiln_graph_executor_t *executor, int index) {
  const kiln_gx_node_t *n = &executor->nodes[index];
  switch (n->kind) {
  case KILN_GX_NODE_KERNEL: {
    int result = n->fn(n->args, n->type_codes, n->num_inputs + n->num_outputs, NULL, NULL, NULL);
    return result == 0 ? KILN_OK : kernel_error(executor, index);
  }
  case KILN_GX_NODE_COPY: {
    const kiln_gx_entry_t *in = &executor->entries[n->input_entries[0]];
    const kiln_gx_entry_t *out = &executor->entries[n->first_entry];
    if (in->bytes > 0 && in->dl.data != out->dl.data) {
      memmove(out->dl.data, in->dl.data, in->bytes);
    }
    return KILN_OK;
  }
  case KILN_GX_NODE_INPUT:
  case KILN_GX_NODE_PARAM:
  case KILN_GX_NODE_NOP:
  case KILN_GX_NODE_KIND_COUNT_:
    return KILN_OK;
  }
  return KILN_OK;
}

kiln_status_t kiln_graph_executor_run(kiln_graph_executor_t *executor) {
  if (executor->vm) {
    return kiln_vm_run(executor->vm);
  }
  KILN_RETURN_IF_ERROR(kiln_gx_check_inputs(executor));
  for (int i = 0; i < executor->num_nodes; ++i) {
    KILN_RETURN_IF_ERROR(kiln_gx_run_node(executor, i));
  }
  return KILN_OK;
}

/* ---- which executor ---- */

kiln_executor_kind_t kiln_graph_executor_kind(const kiln_graph_executor_t *executor) {
  return executor->vm ? KILN_EXECUTOR_VM : KILN_EXECUTOR_GRAPH;
}

kiln_status_t kiln_graph_executor_disassemble(const kiln_graph_executor_t *executor,
                                              kiln_allocator_t allocator, char **out_text) {
  *out_text = NULL;
  if (!executor->vm) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "%s: a graph executor's program is graph.json itself; only a VM program "
                       "(vm.json) has a disassembly",
                       executor->source);
  }
  return kiln_vm_disassemble(executor->vm, allocator, out_text);
}
