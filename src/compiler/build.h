/*
 * The graph compiler's driver for a module in memory (TVM's
 * relay.build → BuildRelay: Optimize, then GraphCodegen, then the target's
 * code generation), what kiln/compiler.h wraps for model files.
 *
 * kiln_compiler_build runs, in order:
 * 1. the default pass pipeline (pass/pipeline.h) under a context at the
 *    options' opt_level, with the verifier between passes when asked; it
 *    ends with fuse_ops, so main calls primitive functions only;
 * 2. the memory plan of main's tensors (pass/plan_memory.h);
 * 3. graph code generation (graph_codegen.h): the JSON with the plan's
 *    storage ids, one PrimFunc per distinct fused function, the params;
 * 4. the lowering passes on each PrimFunc (tir/transform.h);
 * 5. the target's code generation of all of them into one runtime module
 *    (codegen/target.h), but for the kernels the process's kernel cache
 *    has compiled already (kernel_cache.h), which are taken from it; the
 *    ones built are offered to it. With any taken, the library is an
 *    in-memory module over the functions of every module involved.
 * The module is consumed: passes rewrite it in place. Each phase's time is
 * kept for the report.
 */
#ifndef KILN_COMPILER_BUILD_H_
#define KILN_COMPILER_BUILD_H_

#include "compiler/graph_codegen.h"
#include "compiler/kernel_cache.h"
#include "kiln/compiler.h"

/* A graph-level knob a pass asked the records for (the target's
 * find_layout): its workload text and space, for kiln_tune. */
typedef struct kiln_compiled_layout_t {
  const char *workload;
  kiln_schedule_space_t space;
  struct kiln_compiled_layout_t *next;
} kiln_compiled_layout_t;

struct kiln_compiled_t {
  kiln_allocator_t allocator;
  kiln_arena_t arena; /* the PrimFuncs, names */
  kiln_graph_codegen_t graph;
  kiln_runtime_module_t *library;       /* one built module, or one over kernels of several */
  const kiln_tir_prim_func_t **lowered; /* every kernel after the loop-IR passes */
  kiln_kernel_cache_t *kernels;         /* the shared cache's view; NULL: private kernels */
  char *target;
  kiln_executor_kind_t executor; /* GRAPH or VM */
  char *vm_json;                 /* the VM's program; NULL for the graph executor */
  kiln_compile_stats_t stats;
  kiln_compiled_layout_t *layouts; /* in the arena; the last asked first */
};

/* Builds `module` (typed or not; kiln_ir_infer_types runs first) with
 * `options` (NULL: kiln_compiler_options_default()). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_build(kiln_allocator_t allocator,
                                                       kiln_module_t *module,
                                                       const kiln_compiler_options_t *options,
                                                       kiln_compiled_t **out_compiled);

/* The library as one module of its own: the library itself when it is
 * one built module (with its file, or in memory by a JIT target), else the
 * kernels built again into one (a library over kernels reused from the
 * kernel cache has no file of its own). A reference for the caller. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_build_standalone(
    const kiln_compiled_t *compiled, kiln_runtime_module_t **out_library);

/* The module kiln_compile builds from `model`: an ONNX file imported with
 * the options' input shapes, or a workload with its weights bound as
 * constants (the options' batch and image size). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_load_model(kiln_allocator_t allocator,
                                                            const char *model,
                                                            const kiln_compiler_options_t *options,
                                                            kiln_module_t **out_module);

#endif /* KILN_COMPILER_BUILD_H_ */
