/*
 * Graph code generation (TVM's GraphCodegen / GraphExecutorCodegen):
 * from a fused module to the graph executor's JSON, its kernels and its
 * params.
 *
 * main's body must be dataflow over its parameters, constants and calls of
 * primitive functions (what fuse_ops leaves), routed by tuples and
 * TupleGetItem. Walking it in the canonical order:
 * - a parameter becomes an input node ("op": "null", its name);
 * - a constant becomes a param node named p0, p1, ... in order of first use,
 *   its tensor kept for params.bin;
 * - a call of a primitive function becomes a "tvm_op" node whose inputs are
 *   the entries of its arguments and whose outputs are the function's
 *   (one, or a tuple's fields); the function is lowered to a PrimFunc
 *   (compiler/lower.h) named after its operators (fused_nn_conv2d_add_nn_relu),
 *   once per distinct function: two calls of functions with the same key
 *   (compiler/key.h: operators, attributes, types) share one kernel;
 * - a tuple and TupleGetItem only select entries.
 * Every entry (one output of a node) has a dtype, a shape and a storage id:
 * a call's output takes its storage from the memory plan when one is given
 * (pass/plan_memory.h: ids 0 .. num_storages - 1); inputs, params, main's
 * results and everything without a plan get storages of their own, numbered
 * after the plan's. A call of an operator left in main is refused ("run fuse_ops
 * first"). The JSON layout is docs/formats.md's ("graph.json").
 */
#ifndef KILN_COMPILER_GRAPH_CODEGEN_H_
#define KILN_COMPILER_GRAPH_CODEGEN_H_

#include "ir/expr.h"
#include "op/compute.h"
#include "pass/plan_memory.h"
#include "tir/tir.h"

struct kiln_tuning_t;

typedef struct kiln_graph_codegen_t {
  char *graph_json; /* made with the allocator given */
  int num_funcs;
  const kiln_tir_prim_func_t **funcs; /* as lowered (before the lowering passes), in the arena */
  const char **func_keys;             /* each func's key (key.h), in the arena */
  const kiln_function_t **functions;  /* each func's fused function (in the module) */
  int *func_calls;                    /* each func's calls in the graph */
  int num_params;
  const char **param_names; /* in the arena */
  kiln_tensor_t **params;   /* references held: kiln_graph_codegen_deinitialize drops them */
  int num_nodes;
  int num_entries;
  int num_kernel_calls; /* tvm_op nodes */
  int64_t total_flops;  /* of the conv, dense and matmul calls */
  kiln_allocator_t allocator;
} kiln_graph_codegen_t;

/* Generates the graph of `module`'s main (typed; fuse_ops has run), with
 * the storages of `plan` (NULL: a storage per entry). */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_codegen(
    kiln_allocator_t allocator, kiln_module_t *module, const kiln_schedule_target_t *target,
    const kiln_memory_plan_t *plan, kiln_arena_t *arena, kiln_graph_codegen_t *out_graph);
/* As kiln_graph_codegen, each kernel scheduled with its best configuration
 * in `tuning` (compiler/tuning.h; NULL: none): its key then ends with
 * " @tuned " and the configuration, so a tuned and an untuned kernel of one
 * function are two kernels. */
KILN_MUST_USE_RESULT kiln_status_t kiln_graph_codegen_tuned(
    kiln_allocator_t allocator, kiln_module_t *module, const kiln_schedule_target_t *target,
    const struct kiln_tuning_t *tuning, const kiln_memory_plan_t *plan, kiln_arena_t *arena,
    kiln_graph_codegen_t *out_graph);
void kiln_graph_codegen_deinitialize(kiln_graph_codegen_t *graph);

#endif /* KILN_COMPILER_GRAPH_CODEGEN_H_ */
