/*
 * Running a built model: the params file and the graph executor.
 *
 * A build (kiln_compile, then kiln_compiled_save; TVM's relay.build) leaves
 * three artifacts in a folder: graph.json (TVM's graph-executor JSON: the nodes, which
 * kernel each runs, and the memory plan), lib.so (the kernels, one packed
 * function per fused group) and params.bin (the weights, in the format
 * below); or the same in one file, a one-file model (below). This header
 * is what a deployed model links: kiln_runtime and kiln_base, no compiler.
 *
 * params.bin (docs/formats.md): "KILNPRM\0", u32 version (1), u32 count, then
 * per tensor a u32 name length, the name's bytes, a u64 length and that many
 * bytes of .npy (kiln_npy_serialize); integers little-endian. A params object
 * holds named tensors, looked up by name; names are unique. (The graph IR's
 * params, relay.testing's dict, are kiln_params_t in src/ir/params.h, so
 * the runtime's are kiln_runtime_params_t, as modules are.)
 *
 * The graph executor (TVM's GraphExecutor) parses graph.json once at create:
 * it allocates every storage of the plan (one 64-byte-aligned block per
 * storage id, the size of its largest entry), copies the params into theirs,
 * finds every node's kernel in the module and prepares its argument list, so
 * a run is one packed call per node and allocates nothing. Inputs are the
 * graph's null nodes that are not params, in arg_nodes order; outputs are the
 * heads. Errors name the file (or the source name given), the node and what
 * was expected.
 *
 * Threads: kernels run their parallel loops on kiln's thread pool
 * (kiln/parallel.h); the executor itself runs one node after the other on the
 * calling thread. An executor must not be used from two threads at once (it
 * holds the intermediate tensors of a run); make one executor per thread, as
 * many as needed, over the same module.
 */
#ifndef KILN_RUNTIME_H_
#define KILN_RUNTIME_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/module.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- params ---- */

#define KILN_RUNTIME_PARAMS_MAGIC   "KILNPRM"
#define KILN_RUNTIME_PARAMS_VERSION 1

typedef struct kiln_runtime_params_t kiln_runtime_params_t;

/* Named tensors in memory: the names are copied, the tensors retained.
 * INVALID_ARGUMENT for a NULL or empty name, or a name given twice. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_params_create(kiln_allocator_t allocator, int count,
                                                              const char *const *names,
                                                              kiln_tensor_t *const *tensors,
                                                              kiln_runtime_params_t **out_params);
/* Parses params.bin bytes; `source_name` (the path, or "<memory>") starts
 * every error: bad magic, another version (UNIMPLEMENTED), a file cut short
 * (DATA_LOSS, naming the tensor and the offset), a bad .npy (naming the
 * tensor), a name given twice, bytes after the last tensor. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_params_parse(kiln_allocator_t allocator,
                                                             const void *bytes, size_t size,
                                                             const char *source_name,
                                                             kiln_runtime_params_t **out_params);
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_params_load(kiln_allocator_t allocator,
                                                            const char *path,
                                                            kiln_runtime_params_t **out_params);
/* The file's bytes for `count` named tensors; the caller frees *out_bytes
 * with `allocator`. The same errors on names as kiln_runtime_params_create. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_runtime_params_serialize(kiln_allocator_t allocator, int count, const char *const *names,
                              kiln_tensor_t *const *tensors, void **out_bytes, size_t *out_size);
/* Writes params.bin at `path` (atomically: a reader never sees half a file). */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_params_save(const char *path, int count,
                                                            const char *const *names,
                                                            kiln_tensor_t *const *tensors);
void kiln_runtime_params_destroy(kiln_runtime_params_t *params);

int kiln_runtime_params_count(const kiln_runtime_params_t *params);
/* Name and tensor `index` (in file order); borrowed, live as long as `params`. */
const char *kiln_runtime_params_name(const kiln_runtime_params_t *params, int index);
kiln_tensor_t *kiln_runtime_params_tensor(const kiln_runtime_params_t *params, int index);
/* The tensor named `name`, or NULL when there is none. */
kiln_tensor_t *kiln_runtime_params_get(const kiln_runtime_params_t *params, const char *name);

/* ---- one-file models ---- */

/* A one-file model (`kiln compile MODEL -o FILE.so`,
 * kiln_compiled_export_library; docs/formats.md) is one shared library: the
 * kernels and the target record (__kiln_target) as a folder's lib.so holds
 * them, and the dynamic symbol __kiln_model, whose bytes are the embedded
 * model: "KILNMDL\0", u32 version (1), u32 reserved (0), u64 graph size,
 * u64 params size, then graph.json's text and params.bin's bytes, as the
 * folder's files hold them; integers little-endian, nothing after. */
#define KILN_RUNTIME_MODEL_SYMBOL  "__kiln_model"
#define KILN_RUNTIME_MODEL_MAGIC   "KILNMDL"
#define KILN_RUNTIME_MODEL_VERSION 1

/* Reads the model a one-file model at `path` embeds, from the file (read
 * as ELF, nothing of it loaded or run): graph.json's text (the caller frees
 * *out_graph_json with `allocator`) and the params. Every size is checked
 * against the file: a library cut short or a size past the end is
 * DATA_LOSS, another version UNIMPLEMENTED, bytes after params.bin or a NUL
 * in graph.json INVALID_ARGUMENT, params.bin's errors as
 * kiln_runtime_params_parse's; NOT_FOUND for a library without a model (a
 * folder's lib.so). Errors start with the path. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_model_file_read(kiln_allocator_t allocator,
                                                                const char *path,
                                                                char **out_graph_json,
                                                                kiln_runtime_params_t **out_params);
/* The same from the library file's bytes in memory. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_model_file_parse(
    kiln_allocator_t allocator, const void *bytes, size_t size, const char *source_name,
    char **out_graph_json, kiln_runtime_params_t **out_params);
/* The embedded model's bytes for graph.json's text and params.bin's bytes
 * (kiln_runtime_params_serialize); the caller frees *out_bytes with
 * `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_model_serialize(kiln_allocator_t allocator,
                                                                const char *graph_json,
                                                                const void *params_bytes,
                                                                size_t params_size,
                                                                void **out_bytes, size_t *out_size);

/* ---- the graph executor ---- */

/* Which executor runs a compiled model (docs/vm.md). The graph executor
 * runs graph.json, a flat list of kernel calls over a static memory plan;
 * the VM runs vm.json, a bytecode program (registers, storage and tensor
 * allocation, kernel calls, if/goto, function and closure calls, shape
 * instructions) for what a flat list cannot express: control flow and
 * shapes known at run time. The calls below serve both: create and load
 * take either program (a VM program is JSON whose "format" is "kiln-vm";
 * a folder holds graph.json or vm.json, a one-file model embeds either), and
 * every other call works on the executor they made. AUTO is for the
 * compiler (kiln/compiler.h): it picks the VM when the module has dynamic
 * shapes or control flow, else the graph executor. */
typedef enum kiln_executor_kind_e {
  KILN_EXECUTOR_AUTO = 0,
  KILN_EXECUTOR_GRAPH = 1,
  KILN_EXECUTOR_VM = 2,
} kiln_executor_kind_t;

typedef struct kiln_graph_executor_t kiln_graph_executor_t;

/* Loads a compiled model from `path`: a folder of graph.json, lib.so and
 * params.bin (all three required; a model without params has an empty
 * params.bin), or a one-file model (a shared library that embeds the graph
 * and the params, above). Either way the library's target record is
 * checked before any of its code can run (kiln_runtime_module_load):
 * FAILED_PRECONDITION naming the feature this CPU lacks, or the
 * architecture, when it was compiled for another. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_load(kiln_allocator_t allocator,
                                                            const char *path,
                                                            kiln_graph_executor_t **out_executor);
/* From parts in memory: graph.json's text, a module (retained; a JIT's
 * in-memory module works) and the params (copied into the executor's
 * storage; NULL when none, and the caller may destroy them after). Errors
 * start with `source_name` ("graph.json"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_create(kiln_allocator_t allocator,
                                                              const char *graph_json,
                                                              const char *source_name,
                                                              kiln_runtime_module_t *module,
                                                              const kiln_runtime_params_t *params,
                                                              kiln_graph_executor_t **out_executor);
/* Frees the storage and releases the module. NULL is a no-op. */
void kiln_graph_executor_destroy(kiln_graph_executor_t *executor);
/* KILN_EXECUTOR_GRAPH or KILN_EXECUTOR_VM: the program it was made from. */
kiln_executor_kind_t kiln_graph_executor_kind(const kiln_graph_executor_t *executor);
/* A VM program's disassembly: every function's instructions, one a line,
 * with their program-wide index (the profile's `node`), kernels and
 * functions by name and jumps with their targets. FAILED_PRECONDITION for
 * the graph executor. The caller frees *out_text with `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_disassemble(
    const kiln_graph_executor_t *executor, kiln_allocator_t allocator, char **out_text);

/* What kind of value an input or output is: a tensor (the graph
 * executor's always are), or (the VM's) a sequence or an optional of
 * tensors, or an optional of a sequence of tensors. */
typedef enum kiln_value_kind_e {
  KILN_VALUE_KIND_TENSOR,
  KILN_VALUE_KIND_SEQUENCE,
  KILN_VALUE_KIND_OPTIONAL,
  KILN_VALUE_KIND_OPTIONAL_SEQUENCE,
} kiln_value_kind_t;

/* What an input or output is. `name` is the null node's name (an output's
 * is its node's name); `shape` lives as long as the executor; dtype and
 * shape are a list's tensors'. */
typedef struct kiln_graph_executor_tensor_info_t {
  const char *name;
  kiln_dtype_t dtype;
  int ndim;
  const int64_t *shape;
  kiln_value_kind_t kind;
} kiln_graph_executor_tensor_info_t;

int kiln_graph_executor_num_inputs(const kiln_graph_executor_t *executor);
int kiln_graph_executor_num_outputs(const kiln_graph_executor_t *executor);
/* OUT_OF_RANGE for an index outside [0, count). */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_input_info(
    const kiln_graph_executor_t *executor, int index, kiln_graph_executor_tensor_info_t *out_info);
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_output_info(
    const kiln_graph_executor_t *executor, int index, kiln_graph_executor_tensor_info_t *out_info);
/* The index of input `name`; NOT_FOUND listing the inputs otherwise (and
 * saying so when `name` is a param). */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_input_index(
    const kiln_graph_executor_t *executor, const char *name, int *out_index);

/* Copies `tensor` (on the CPU, compact: NULL or row-major strides) into
 * input `index`'s storage. INVALID_ARGUMENT naming the input and the
 * expected dtype or shape. Undoes an earlier zero-copy of that input. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_set_input(kiln_graph_executor_t *executor,
                                                                 int index, const DLTensor *tensor);
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_set_input_by_name(
    kiln_graph_executor_t *executor, const char *name, const DLTensor *tensor);
/* Runs on the caller's data directly (no copy): the kernels read
 * `tensor->data + byte_offset`, which must be 64-byte aligned, hold the
 * input's dtype and shape, be compact, and stay alive and unchanged until
 * the next set_input of this index, or the executor's destruction. A kiln
 * tensor qualifies: kiln_tensor_dl(tensor). */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_set_input_zero_copy(
    kiln_graph_executor_t *executor, int index, const DLTensor *tensor);

/* Runs every node once, in order. FAILED_PRECONDITION naming the input when
 * one was never set; a failing kernel's message prefixed with the source
 * name, the node's index and name. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_run(kiln_graph_executor_t *executor);

/* Output `index` as a view of the executor's storage (no copy): valid until
 * the executor is destroyed, its values until the next run or set_input. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_get_output(
    const kiln_graph_executor_t *executor, int index, const DLTensor **out_view);
/* Sequence and optional inputs and outputs (the VM's, of a model whose main
 * takes or returns them; docs/vm.md): a list of tensors of the declared
 * dtype and shape (input_info and output_info give them and the kind), any
 * number for a sequence, 0 (empty) or 1 for an optional of a tensor. An
 * optional of a sequence is its sequence's tensors, or, count -1, empty
 * (-1 is also an empty optional of a tensor); get_output_list gives -1 for
 * an empty optional of a sequence. set_input_list copies the elements;
 * set_input and get_output on such an input or output, and these calls on
 * a tensor one, are INVALID_ARGUMENT naming the call to use; the graph
 * executor has none (UNIMPLEMENTED). The output's element views are valid
 * until the next run. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_set_input_list(
    kiln_graph_executor_t *executor, int index, int count, const DLTensor *const *elements);
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_get_output_list(
    const kiln_graph_executor_t *executor, int index, int *out_count);
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_get_output_element(
    const kiln_graph_executor_t *executor, int index, int element, const DLTensor **out_view);

/* Output `index` copied into a new tensor from `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_graph_executor_copy_output(const kiln_graph_executor_t *executor, int index,
                                kiln_allocator_t allocator, kiln_tensor_t **out_tensor);

/* ---- profile and debug ---- */

/* One kernel node's time in a profile. */
typedef struct kiln_graph_profile_node_t {
  int node;                 /* index in graph.json's nodes */
  const char *name;         /* the node's name */
  const char *func_name;    /* the kernel ("__copy" for a copy) */
  double milliseconds;      /* median over the runs */
  double share;             /* of the sum over nodes, in [0, 1] */
  int64_t flops;            /* graph.json's kiln_flops, 0 when unknown */
  double gflops_per_second; /* flops / time; 0 when flops are unknown */
} kiln_graph_profile_node_t;

typedef struct kiln_graph_profile_t {
  kiln_allocator_t allocator;
  int runs;
  int num_nodes; /* kernel nodes ("tvm_op"), in graph order */
  kiln_graph_profile_node_t *nodes;
  double total_milliseconds; /* sum of the nodes' medians */
  double run_milliseconds;   /* median of whole runs */
  int64_t total_flops;
} kiln_graph_profile_t;

/* Runs `runs` (>= 1) times, timing every kernel node; the profile comes from
 * the executor's allocator and is freed with kiln_graph_profile_destroy. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_profile(kiln_graph_executor_t *executor,
                                                               int runs,
                                                               kiln_graph_profile_t **out_profile);
void kiln_graph_profile_destroy(kiln_graph_profile_t *profile);
/* The profile as a table (one row per kernel node, then the total); the
 * caller frees *out_text with `allocator`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_profile_format(const kiln_graph_profile_t *profile,
                                                             kiln_allocator_t allocator,
                                                             char **out_text);

/* Runs once, writing every node's output to `folder`/<node index>_<name>.npy
 * (<node index>_<name>_<output index>.npy for a node of several outputs;
 * characters other than letters, digits, '.', '-' and '_' in the name become
 * '_'): the inputs and params first, then each kernel's outputs as soon as it
 * has run, so a failing node leaves the outputs of those before it. The
 * folder is made when missing. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_executor_run_debug(kiln_graph_executor_t *executor,
                                                                 const char *folder);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H_ */
