/*
 * The graph executor's insides, shared by its three files: graph_parse.c
 * (graph.json into nodes and entries), graph_executor.c (storage, params,
 * kernels, the API and the run) and graph_profile.c (timing and the debug
 * dump). The public API is in include/kiln/runtime.h.
 *
 * An entry is one output of one node (TVM's data entry): its DLTensor
 * (shape in the executor's arena, strides NULL since every entry is compact,
 * data pointing into its storage, or at a zero-copied input's data), its
 * dtype, byte size and storage id. A node lists the entries it reads; its
 * outputs are the entries first_entry .. first_entry + num_outputs - 1
 * (node_row_ptr). A kernel node keeps its packed function and its argument
 * array (inputs then outputs, each the address of an entry's DLTensor), made
 * once at create, so a run calls the kernels with no allocation. Everything
 * lives in the executor's arena, freed at once by destroy.
 */
#ifndef KILN_RUNTIME_GRAPH_EXECUTOR_H_
#define KILN_RUNTIME_GRAPH_EXECUTOR_H_

#include "base/arena.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "kiln/runtime.h"
#include "runtime/vm.h"

typedef enum kiln_gx_node_kind_e {
  KILN_GX_NODE_INPUT,  /* a null node the caller sets */
  KILN_GX_NODE_PARAM,  /* a null node whose value came with the params */
  KILN_GX_NODE_KERNEL, /* a tvm_op calling a function of the module */
  KILN_GX_NODE_NOP,    /* "__nop": nothing to do */
  KILN_GX_NODE_COPY,   /* "__copy": its input's bytes into its output */
  KILN_GX_NODE_KIND_COUNT_
} kiln_gx_node_kind_t;

typedef struct kiln_gx_entry_t {
  DLTensor dl;
  kiln_dtype_t dtype;
  int storage_id;
  size_t offset; /* bytes into its storage ("storage_offset"; 0 without it) */
  size_t bytes;
} kiln_gx_entry_t;

typedef struct kiln_gx_node_t {
  const char *name;
  const char *func_name; /* NULL for a null node */
  kiln_gx_node_kind_t kind;
  int num_inputs;
  int num_outputs;
  int first_entry;
  int *input_entries;
  int64_t flops; /* kiln_flops, 0 when unknown */
  /* Kernel nodes: */
  kiln_packed_fn fn;
  kiln_value_t *args; /* num_inputs + num_outputs */
  int *type_codes;
} kiln_gx_node_t;

struct kiln_graph_executor_t {
  kiln_allocator_t allocator;
  kiln_arena_t arena;
  const char *source; /* "graph.json" or its path: starts every error */
  kiln_runtime_module_t *module;
  int num_nodes;
  kiln_gx_node_t *nodes;
  int num_entries;
  kiln_gx_entry_t *entries;
  int num_storages;
  void **storages; /* 64-byte aligned, zeroed at create */
  int num_arg_nodes;
  int *arg_nodes;
  int num_inputs;
  int *input_nodes;
  unsigned char *input_set;
  int num_outputs;
  int *output_entries;
  int *output_nodes;
  /* A VM program's executor: every call goes to it (vm.h). */
  kiln_vm_t *vm;
};

/* Reads nodes, node_row_ptr, arg_nodes, heads and the per-entry attrs of
 * `root` into `executor` (its arena and source set): every index checked,
 * every node's inputs earlier in the list, entries' dtypes and shapes
 * known, storage ids in [0, entries). */
KILN_MUST_USE_RESULT kiln_status_t kiln_gx_parse(kiln_graph_executor_t *executor,
                                                 const json_t *root);

/* Runs node `index` (a no-op for null nodes and __nop). */
KILN_MUST_USE_RESULT kiln_status_t kiln_gx_run_node(kiln_graph_executor_t *executor, int index);
/* FAILED_PRECONDITION naming the first input never set. */
KILN_MUST_USE_RESULT kiln_status_t kiln_gx_check_inputs(const kiln_graph_executor_t *executor);

/* Shared by both executors' profiles and debug runs (graph_profile.c): the
 * monotonic clock in milliseconds, the median of `values` (sorted in
 * place), and `name` appended with every character but letters, digits,
 * '.', '-' and '_' made '_' (a dump file's name). */
double kiln_gx_now_milliseconds(void);
double kiln_gx_median(double *values, int count);
KILN_MUST_USE_RESULT kiln_status_t kiln_gx_append_safe_name(kiln_strbuf_t *sb, const char *name);

#endif /* KILN_RUNTIME_GRAPH_EXECUTOR_H_ */
