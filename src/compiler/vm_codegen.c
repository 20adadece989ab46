/*
 * VM code generation (docs/vm.md): a compiled static model's bytecode,
 * made from the plan graph.json holds, and the rule choosing the executor.
 *
 * The graph's JSON is read with the graph executor's own parser
 * (runtime/graph_executor.h), so both executors start from one plan with
 * one set of checks. Then: the inputs are main's params (registers 0..n-1,
 * in arg_nodes order); each param becomes a constant of the pool and a
 * load_const at the top; each storage id the kernels write becomes one
 * alloc_storage at the top, of the furthest end of its entries; each
 * node, in order, gets an alloc_tensor per output (its entry at its offset
 * in its storage) and then an invoke_packed of its kernel (inputs, outputs,
 * its flops), a copy for "__copy", nothing more for "__nop" (its outputs
 * are views the plan placed over its inputs); the heads are returned. One
 * register per entry. An input or param must own its storage (the VM keeps
 * them apart from the storage it allocates); a plan sharing one is refused.
 *
 * The choice: KILN_EXECUTOR_AUTO takes the VM when the module has dynamic
 * shapes (a symbolic dim in main's parameters or in any value's type, as a
 * dyn operator's output has; their programs come from vm_symbolic.c) or
 * control flow (the driver's choice, before this: vm_control.c), else the
 * graph executor.
 */
#include <string.h>

#include "compiler/vm_codegen.h"
#include "ir/static_shapes.h"
#include "runtime/graph_executor.h"

/* ---- the choice ---- */

bool kiln_vm_codegen_is_symbolic(const kiln_module_t *module) {
  const kiln_function_t *main_fn = kiln_module_get_function(module, "main");
  for (int p = 0; main_fn && p < main_fn->num_params; ++p) {
    const kiln_var_t *param = main_fn->params[p];
    const kiln_type_t *type =
        param->base.checked_type ? param->base.checked_type : param->type_annotation;
    if (!kiln_type_is_static(type)) {
      return true;
    }
  }
  return false;
}

bool kiln_vm_codegen_has_dynamic_shapes(const kiln_module_t *module) {
  if (kiln_vm_codegen_is_symbolic(module)) {
    return true;
  }
  kiln_status_t status = kiln_ir_module_require_static(module, "vm codegen");
  bool dynamic = status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED;
  kiln_status_free(status); /* another error (out of memory) recurs where it matters */
  return dynamic;
}

/* Dynamic shapes (symbolic dims in main's parameters, or a dyn operator's
 * output) need the VM; a module with control flow is taken for the VM by
 * the driver before this (build.c, vm_control.c). */
static bool module_needs_vm(const kiln_module_t *module) {
  return kiln_vm_codegen_has_dynamic_shapes(module);
}

kiln_executor_kind_t kiln_vm_codegen_choose(const kiln_module_t *module,
                                            kiln_executor_kind_t requested) {
  if (requested == KILN_EXECUTOR_GRAPH || requested == KILN_EXECUTOR_VM) {
    return requested;
  }
  return module_needs_vm(module) ? KILN_EXECUTOR_VM : KILN_EXECUTOR_GRAPH;
}

/* ---- the program ---- */

typedef struct vm_gen_t {
  const kiln_graph_executor_t *gx;
  int num_params;
  const char *const *param_names;
  int *entry_reg;   /* per entry */
  int *storage_reg; /* per storage id, -1 when no kernel writes it */
  int num_registers;
  json_t *kernels;
  json_t *code;
} vm_gen_t;

static bool is_param(const vm_gen_t *g, const char *name) {
  for (int i = 0; i < g->num_params; ++i) {
    if (strcmp(g->param_names[i], name) == 0) {
      return true;
    }
  }
  return false;
}

kiln_status_t kiln_vm_codegen_append(json_t *array, json_t *value) {
  if (!value) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  }
  return kiln_json_array_append_new(array, value);
}

static json_t *shape_json(int ndim, const int64_t *shape) {
  json_t *array = json_array();
  for (int d = 0; array && d < ndim; ++d) {
    if (json_array_append_new(array, json_integer(shape[d])) != 0) {
      json_decref(array);
      return NULL;
    }
  }
  return array;
}

static json_t *decl_json(const char *name, const kiln_gx_entry_t *entry) {
  return json_pack("{s:s, s:s, s:o}", "name", name, "dtype", kiln_dtype_name(entry->dtype), "shape",
                   shape_json(entry->dl.ndim, entry->dl.shape));
}

json_t *kiln_vm_codegen_ints_json(const int *regs, int count) {
  json_t *array = json_array();
  for (int i = 0; array && i < count; ++i) {
    if (json_array_append_new(array, json_integer(regs[i])) != 0) {
      json_decref(array);
      return NULL;
    }
  }
  return array;
}

kiln_status_t kiln_vm_codegen_kernel_index(json_t *kernels, const char *name, int *out_index) {
  size_t count = json_array_size(kernels);
  for (size_t k = 0; k < count; ++k) {
    if (strcmp(json_string_value(json_array_get(kernels, k)), name) == 0) {
      *out_index = (int)k;
      return KILN_OK;
    }
  }
  *out_index = (int)count;
  return kiln_vm_codegen_append(kernels, json_string(name));
}

/* Inputs, constants (with their load_const) and storage registers. */
static kiln_status_t gen_arguments(vm_gen_t *g, json_t *inputs, json_t *constants) {
  const kiln_graph_executor_t *gx = g->gx;
  int num_inputs = 0;
  for (int i = 0; i < gx->num_arg_nodes; ++i) {
    const kiln_gx_node_t *n = &gx->nodes[gx->arg_nodes[i]];
    if (!is_param(g, n->name)) {
      g->entry_reg[n->first_entry] = num_inputs++;
      KILN_RETURN_IF_ERROR(
          kiln_vm_codegen_append(inputs, decl_json(n->name, &gx->entries[n->first_entry])));
    }
  }
  g->num_registers = num_inputs;
  for (int i = 0; i < gx->num_arg_nodes; ++i) {
    const kiln_gx_node_t *n = &gx->nodes[gx->arg_nodes[i]];
    if (is_param(g, n->name)) {
      int reg = g->entry_reg[n->first_entry] = g->num_registers++;
      KILN_RETURN_IF_ERROR(
          kiln_vm_codegen_append(constants, decl_json(n->name, &gx->entries[n->first_entry])));
      KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
          g->code, json_pack("[s, i, i]", "load_const", reg, (int)json_array_size(constants) - 1)));
    }
  }
  return KILN_OK;
}

static bool is_argument_entry(const kiln_graph_executor_t *gx, int entry) {
  for (int i = 0; i < gx->num_arg_nodes; ++i) {
    if (gx->nodes[gx->arg_nodes[i]].first_entry == entry) {
      return true;
    }
  }
  return false;
}

/* One alloc_storage per storage id that node outputs use. */
static kiln_status_t gen_storage(vm_gen_t *g) {
  const kiln_graph_executor_t *gx = g->gx;
  for (int s = 0; s < gx->num_storages; ++s) {
    size_t size = 0;
    int used = 0, shared = -1;
    for (int e = 0; e < gx->num_entries; ++e) {
      const kiln_gx_entry_t *entry = &gx->entries[e];
      if (entry->storage_id != s) {
        continue;
      }
      if (is_argument_entry(gx, e)) {
        shared = e;
        continue;
      }
      used = 1;
      size = entry->offset + entry->bytes > size ? entry->offset + entry->bytes : size;
    }
    if (used && shared >= 0) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "vm codegen: storage %d holds input or param entry %d and kernel outputs; "
                         "the VM needs inputs and params in storage of their own",
                         s, shared);
    }
    if (used) {
      g->storage_reg[s] = g->num_registers++;
      KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
          g->code, json_pack("[s, i, I]", "alloc_storage", g->storage_reg[s], (json_int_t)size)));
    }
  }
  return KILN_OK;
}

static kiln_status_t gen_outputs_alloc(vm_gen_t *g, const kiln_gx_node_t *n) {
  for (int o = 0; o < n->num_outputs; ++o) {
    int e = n->first_entry + o;
    const kiln_gx_entry_t *entry = &g->gx->entries[e];
    int reg = g->entry_reg[e] = g->num_registers++;
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
        g->code,
        json_pack("[s, i, i, I, s, o]", "alloc_tensor", reg, g->storage_reg[entry->storage_id],
                  (json_int_t)entry->offset, kiln_dtype_name(entry->dtype),
                  shape_json(entry->dl.ndim, entry->dl.shape))));
  }
  return KILN_OK;
}

static kiln_status_t gen_node(vm_gen_t *g, const kiln_gx_node_t *n, int *scratch) {
  KILN_RETURN_IF_ERROR(gen_outputs_alloc(g, n));
  for (int i = 0; i < n->num_inputs; ++i) {
    scratch[i] = g->entry_reg[n->input_entries[i]];
  }
  if (n->kind == KILN_GX_NODE_COPY) {
    return kiln_vm_codegen_append(
        g->code, json_pack("[s, i, i]", "copy", g->entry_reg[n->first_entry], scratch[0]));
  }
  if (n->kind != KILN_GX_NODE_KERNEL) {
    return KILN_OK; /* __nop: its outputs are views over its inputs */
  }
  int kernel = 0;
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_kernel_index(g->kernels, n->func_name, &kernel));
  return kiln_vm_codegen_append(
      g->code, json_pack("[s, i, o, o, I]", "invoke_packed", kernel,
                         kiln_vm_codegen_ints_json(scratch, n->num_inputs),
                         kiln_vm_codegen_ints_json(g->entry_reg + n->first_entry, n->num_outputs),
                         (json_int_t)n->flops));
}

static kiln_status_t gen_nodes(vm_gen_t *g, kiln_arena_t *arena) {
  const kiln_graph_executor_t *gx = g->gx;
  int max_inputs = 1;
  for (int i = 0; i < gx->num_nodes; ++i) {
    max_inputs = gx->nodes[i].num_inputs > max_inputs ? gx->nodes[i].num_inputs : max_inputs;
  }
  int *scratch = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)max_inputs, sizeof(int),
                                                 _Alignof(int), (void **)&scratch));
  for (int i = 0; i < gx->num_nodes; ++i) {
    if (gx->nodes[i].func_name) {
      KILN_RETURN_IF_ERROR_ANNOTATE(gen_node(g, &gx->nodes[i], scratch), "node %d %s", i,
                                    gx->nodes[i].name);
    }
  }
  return KILN_OK;
}

static kiln_status_t gen_return(vm_gen_t *g, json_t *outputs, kiln_arena_t *arena) {
  const kiln_graph_executor_t *gx = g->gx;
  int *regs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)gx->num_outputs + 1, sizeof(int),
                                                 _Alignof(int), (void **)&regs));
  for (int o = 0; o < gx->num_outputs; ++o) {
    int e = gx->output_entries[o];
    regs[o] = g->entry_reg[e];
    KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(
        outputs, decl_json(gx->nodes[gx->output_nodes[o]].name, &gx->entries[e])));
  }
  return kiln_vm_codegen_append(
      g->code, json_pack("[s, o]", "ret", kiln_vm_codegen_ints_json(regs, gx->num_outputs)));
}

/* Sets each of `count` members (each reference taken, also on failure). */
static kiln_status_t set_members(json_t *root, int count, const char *const *keys,
                                 json_t *const *values) {
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < count; ++i) {
    kiln_status_t set = values[i] ? kiln_json_object_set_new(root, keys[i], values[i])
                                  : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
    if (status) {
      kiln_status_free(set);
    } else {
      status = set;
    }
  }
  return status;
}

static kiln_status_t gen_program(vm_gen_t *g, kiln_arena_t *arena, json_t *root) {
  json_t *inputs = json_array(), *outputs = json_array(), *constants = json_array();
  json_t *functions = json_array();
  g->kernels = json_array();
  g->code = json_array();
  json_t *main_fn = g->code ? json_pack("{s:s, s:i, s:i, s:o}", "name", "main", "params", 0,
                                        "registers", 0, "code", g->code)
                            : NULL;
  static const char *const keys[] = {"kernels", "constants", "inputs", "outputs", "functions"};
  json_t *values[] = {g->kernels, constants, inputs, outputs, functions};
  kiln_status_t status = set_members(root, 5, keys, values);
  if (status || !main_fn) {
    json_decref(main_fn);
    return status ? status : KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  }
  KILN_RETURN_IF_ERROR(kiln_vm_codegen_append(functions, main_fn));
  KILN_RETURN_IF_ERROR(gen_arguments(g, inputs, constants));
  KILN_RETURN_IF_ERROR(gen_storage(g));
  KILN_RETURN_IF_ERROR(gen_nodes(g, arena));
  KILN_RETURN_IF_ERROR(gen_return(g, outputs, arena));
  KILN_RETURN_IF_ERROR(kiln_json_object_set_new(main_fn, "params",
                                                json_integer((json_int_t)json_array_size(inputs))));
  return kiln_json_object_set_new(main_fn, "registers", json_integer(g->num_registers));
}

static kiln_status_t allocate_maps(vm_gen_t *g, kiln_arena_t *arena) {
  const kiln_graph_executor_t *gx = g->gx;
  size_t entries = (size_t)gx->num_entries + 1, storages = (size_t)gx->num_storages + 1;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, entries, sizeof(int), _Alignof(int),
                                                 (void **)&g->entry_reg));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, storages, sizeof(int), _Alignof(int),
                                                 (void **)&g->storage_reg));
  for (size_t s = 0; s < storages; ++s) {
    g->storage_reg[s] = -1;
  }
  return KILN_OK;
}

/* The plan of graph.json, read with the graph executor's parser. */
static kiln_status_t parse_graph(const char *graph_json, kiln_graph_executor_t *gx) {
  json_t *root = NULL;
  KILN_RETURN_IF_ERROR(kiln_json_parse(graph_json, strlen(graph_json), "graph.json", &root));
  kiln_status_t status = kiln_gx_parse(gx, root);
  json_decref(root);
  KILN_RETURN_IF_ERROR(status);
  for (int e = 0; e < gx->num_entries; ++e) {
    if (gx->entries[e].storage_id >= gx->num_storages) {
      return KILN_STATUS(INTERNAL, "vm codegen: entry %d's storage %d is out of range", e,
                         gx->entries[e].storage_id);
    }
  }
  return KILN_OK;
}

static kiln_status_t generate(kiln_graph_executor_t *gx, const char *graph_json, int num_params,
                              const char *const *param_names, char **out_vm_json) {
  KILN_RETURN_IF_ERROR(parse_graph(graph_json, gx));
  vm_gen_t g = {gx, num_params, param_names, NULL, NULL, 0, NULL, NULL};
  KILN_RETURN_IF_ERROR(allocate_maps(&g, &gx->arena));
  json_t *root = json_pack("{s:s, s:i}", "format", KILN_VM_FORMAT, "version", KILN_VM_VERSION);
  if (!root) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "vm codegen: out of memory");
  }
  kiln_status_t status = gen_program(&g, &gx->arena, root);
  if (!status) {
    status = kiln_json_dump(gx->allocator, root, 0, out_vm_json);
  }
  json_decref(root);
  return status;
}

kiln_status_t kiln_vm_codegen(kiln_allocator_t allocator, const char *graph_json, int num_params,
                              const char *const *param_names, char **out_vm_json) {
  *out_vm_json = NULL;
  kiln_graph_executor_t gx;
  memset(&gx, 0, sizeof(gx));
  gx.allocator = allocator;
  gx.source = "graph.json";
  kiln_arena_initialize(&gx.arena, allocator, 0);
  kiln_status_t status = generate(&gx, graph_json, num_params, param_names, out_vm_json);
  kiln_arena_deinitialize(&gx.arena);
  return status;
}
