/*
 * kiln's graph compiler: a model in, the three artifacts of a build out
 * (docs/graph-compiler.md): graph.json, lib.so and params.bin, which the
 * graph executor (kiln/runtime.h) runs with the runtime alone; or the
 * same in one shared library (kiln_compiled_export_library).
 *
 *   kiln_compiler_options_t options = kiln_compiler_options_default();
 *   options.opt_level = 3;
 *   kiln_compiled_t *compiled = NULL;
 *   KILN_RETURN_IF_ERROR(kiln_compile(allocator, "resnet18.onnx", &options, &compiled));
 *   KILN_RETURN_IF_ERROR(kiln_compiled_save(compiled, "out/"));
 *   kiln_compiled_destroy(compiled);
 *
 * kiln_model_compile builds a model already in memory (kiln/model.h).
 *
 * A model is an ONNX file (a path ending in ".onnx") or the name of a
 * built-in workload (resnet18, mobilenet_v2, ...; docs/workloads.md), whose
 * weights become params. The target is a code-generation target string
 * ("llvm", "llvm -mcpu=skylake-avx512", "c", "c -march=native", or
 * "llvm -mtriple=aarch64-linux-gnu" to build for another machine);
 * kiln_compiler_default_target() is LLVM's host target when kiln was built
 * with LLVM, else the C backend's.
 */
#ifndef KILN_COMPILER_H_
#define KILN_COMPILER_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kiln/allocator.h"
#include "kiln/model.h"
#include "kiln/module.h"
#include "kiln/runtime.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_compiler_options_t {
  const char *target;   /* NULL: kiln_compiler_default_target() */
  int opt_level;        /* 0 to 3 (default 3) */
  int num_input_shapes; /* ONNX: "name=1x3x224x224" for symbolic dims */
  const char *const *input_shapes;
  /* Passes not to run, by name: NOT_FOUND listing the passes for an
   * unknown one; FAILED_PRECONDITION for one the build requires (a pass
   * of opt_level 0, which runs at every level; docs/passes.md). */
  int num_disabled_passes;
  const char *const *disabled_passes;
  bool verify;    /* the IR verifier after every pass */
  int batch;      /* workloads: batch size (default 1) */
  int image_size; /* workloads: image side (default: the network's) */
  FILE *progress; /* a line per phase and per kernel lowered, when not NULL */
  /* Compile every kernel here instead of taking (and offering) kernels
   * through the process's kernel cache (docs/graph-compiler.md). */
  bool private_kernels;
  /* ONNX: the largest constant the importer may compute (bytes; 0: 1 GiB).
   * A model over it is refused, naming the node and the size. */
  int64_t max_constant_bytes;
  /* `kiln tune`'s records (JSON lines, docs/tuning.md): each kernel with a
   * record of this target and kiln version is scheduled with its best
   * configuration; NULL: the default rules. A missing or bad file is an
   * error; records of other targets or versions are ignored with a
   * warning. */
  const char *tuning_records;
  /* The executor the build is for (kiln/runtime.h, docs/vm.md): the graph
   * executor (graph.json) or the VM (vm.json, bytecode over the same
   * kernels and plan). AUTO (the default) picks the VM when the module has
   * dynamic shapes or control flow, else the graph executor. */
  kiln_executor_kind_t executor;
} kiln_compiler_options_t;

typedef struct kiln_compile_stats_t {
  double seconds_import;  /* reading the model */
  double seconds_passes;  /* the pass pipeline */
  double seconds_lower;   /* the memory plan, graph codegen, te lowering */
  double seconds_codegen; /* the loop-IR passes, the target's code generation */
  double seconds_total;
  int num_kernels;        /* distinct kernels in the library */
  int num_kernels_reused; /* of those, taken compiled from the process's kernel cache */
  int num_kernel_calls;   /* kernel calls in the graph */
  int num_kernels_tuned;  /* kernels scheduled by a tuning record */
  int num_params;
  int64_t flops;        /* of the conv, dense and matmul calls */
  size_t planned_bytes; /* the intermediate tensors' storage after the plan */
  size_t tensor_bytes;  /* the same without reuse */
} kiln_compile_stats_t;

typedef struct kiln_compiled_t kiln_compiled_t;

kiln_compiler_options_t kiln_compiler_options_default(void);
/* "llvm" when built with LLVM, else "c -march=native". */
const char *kiln_compiler_default_target(void);
/* The version of the LLVM kiln was built with ("14.0.6"); NULL when it was
 * built without LLVM (the C backend alone). */
const char *kiln_compiler_llvm_version(void);

/* Imports (or builds) `model` and compiles it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compile(kiln_allocator_t allocator, const char *model,
                                                const kiln_compiler_options_t *options,
                                                kiln_compiled_t **out_compiled);
/* Compiles a model in memory (kiln/model.h), as kiln_compile compiles a
 * file: binds its weights, then runs the pass pipeline on it in place
 * (the model is left optimized, fused: compile a model once) and builds. */
KILN_MUST_USE_RESULT kiln_status_t kiln_model_compile(kiln_model_t *model,
                                                      const kiln_compiler_options_t *options,
                                                      kiln_compiled_t **out_compiled);
void kiln_compiled_destroy(kiln_compiled_t *compiled);

const char *kiln_compiled_graph_json(const kiln_compiled_t *compiled);
/* KILN_EXECUTOR_GRAPH or KILN_EXECUTOR_VM: what the build chose. */
kiln_executor_kind_t kiln_compiled_executor(const kiln_compiled_t *compiled);
/* The program the chosen executor runs: graph.json's text, or vm.json's
 * (the VM's bytecode, docs/vm.md). */
const char *kiln_compiled_program_json(const kiln_compiled_t *compiled);
/* Borrowed: retain it to keep it past the compiled model. */
kiln_runtime_module_t *kiln_compiled_library(const kiln_compiled_t *compiled);
void kiln_compiled_get_stats(const kiln_compiled_t *compiled, kiln_compile_stats_t *out_stats);
/* A copy of the params (the caller destroys it). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiled_params(const kiln_compiled_t *compiled,
                                                        kiln_runtime_params_t **out_params);
/* Writes DIR/graph.json (DIR/vm.json for the VM, the other one removed
 * when there), DIR/lib.so and DIR/params.bin (DIR is made when
 * missing). FAILED_PRECONDITION when the library was built in memory (a
 * JIT target): build with an object-file target to save. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiled_save(const kiln_compiled_t *compiled,
                                                      const char *dir);
/* Writes one shared library at `path` (replaced atomically): the kernels
 * linked with the program's JSON (graph.json's or vm.json's) and the params embedded (a one-file
 * model: kiln/runtime.h, docs/formats.md), which kiln_graph_executor_load loads as it loads a
 * folder. For a target of another architecture
 * ("llvm -mtriple=aarch64-linux-gnu") it is linked with GNU binutils for
 * it. FAILED_PRECONDITION when the kernels were built in memory (a JIT
 * target); UNAVAILABLE when the linker is missing, naming the package. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiled_export_library(const kiln_compiled_t *compiled,
                                                                const char *path);
/* An executor (the graph executor or the VM, as compiled) over the
 * compiled model, in memory (nothing written). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiled_create_executor(
    const kiln_compiled_t *compiled, kiln_graph_executor_t **out_executor);

#ifdef __cplusplus
}
#endif

#endif /* KILN_COMPILER_H_ */
