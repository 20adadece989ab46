/*
 * kiln/compiler.h: a model file or workload in, a compiled model out; its
 * accessors, saving the three artifacts or one library, and an executor
 * over it in memory.
 *
 * A one-file model is linked from the object file the backend kept in
 * the library's module (runtime/module_built.h) and the embedded model
 * (graph.json's text and params.bin's bytes, kiln_runtime_model_serialize)
 * by kiln_codegen_link (codegen/toolchain.h), for the target's triple; the
 * result is not loaded here, only saved.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/json.h"
#include "codegen/target.h"
#include "codegen/target_record.h"
#include "codegen/toolchain.h"
#include "compiler/build.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/testing/workloads.h"
#include "ir/params.h"
#include "runtime/module_built.h"

kiln_compiler_options_t kiln_compiler_options_default(void) {
  kiln_compiler_options_t options;
  memset(&options, 0, sizeof(options));
  options.opt_level = 3;
  options.batch = 1;
  return options;
}

const char *kiln_compiler_default_target(void) {
  return kiln_codegen_default_target();
}

const char *kiln_compiler_llvm_version(void) {
  return kiln_codegen_llvm_version();
}

kiln_status_t kiln_compile(kiln_allocator_t allocator, const char *model,
                           const kiln_compiler_options_t *options, kiln_compiled_t **out_compiled) {
  *out_compiled = NULL;
  kiln_compiler_options_t defaults = kiln_compiler_options_default();
  options = options ? options : &defaults;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiler_load_model(allocator, model, options, &module));
  clock_gettime(CLOCK_MONOTONIC, &end);
  if (options->progress) {
    fprintf(options->progress, "kiln: %s loaded\n", model);
  }
  kiln_status_t status = kiln_compiler_build(allocator, module, options, out_compiled);
  kiln_module_destroy(module);
  if (!status) {
    kiln_compile_stats_t *stats = &(*out_compiled)->stats;
    stats->seconds_import =
        (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
    stats->seconds_total += stats->seconds_import;
  }
  return kiln_status_annotate(status, "%s", model);
}

void kiln_compiled_destroy(kiln_compiled_t *compiled) {
  if (!compiled) {
    return;
  }
  kiln_allocator_free(compiled->allocator, compiled->vm_json);
  kiln_graph_codegen_deinitialize(&compiled->graph);
  kiln_runtime_module_release(compiled->library);
  kiln_kernel_cache_destroy(compiled->kernels);
  kiln_arena_deinitialize(&compiled->arena);
  kiln_allocator_free(compiled->allocator, compiled->target);
  kiln_allocator_free(compiled->allocator, compiled);
}

const char *kiln_compiled_graph_json(const kiln_compiled_t *compiled) {
  return compiled->graph.graph_json;
}

kiln_executor_kind_t kiln_compiled_executor(const kiln_compiled_t *compiled) {
  return compiled->executor;
}

const char *kiln_compiled_program_json(const kiln_compiled_t *compiled) {
  return compiled->vm_json ? compiled->vm_json : compiled->graph.graph_json;
}

/* The name of the program's file: what a folder holds, what errors say. */
static const char *program_name(const kiln_compiled_t *compiled) {
  return compiled->vm_json ? "vm.json" : "graph.json";
}

kiln_runtime_module_t *kiln_compiled_library(const kiln_compiled_t *compiled) {
  return compiled->library;
}

void kiln_compiled_get_stats(const kiln_compiled_t *compiled, kiln_compile_stats_t *out_stats) {
  *out_stats = compiled->stats;
}

kiln_status_t kiln_compiled_params(const kiln_compiled_t *compiled,
                                   kiln_runtime_params_t **out_params) {
  return kiln_runtime_params_create(compiled->allocator, compiled->graph.num_params,
                                    compiled->graph.param_names, compiled->graph.params,
                                    out_params);
}

static kiln_status_t write_text(const char *path, const char *text) {
  return kiln_file_write_all(path, text, strlen(text));
}

kiln_status_t kiln_compiled_save(const kiln_compiled_t *compiled, const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    return KILN_STATUS(IO_ERROR, "%s: cannot make the folder: %s", dir, strerror(errno));
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/lib.so", dir);
  kiln_runtime_module_t *library = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiler_build_standalone(compiled, &library));
  kiln_status_t status = kiln_runtime_module_save(library, path);
  kiln_runtime_module_release(library);
  KILN_RETURN_IF_ERROR(status);
  /* a folder holds one program: the other executor's goes */
  snprintf(path, sizeof(path), "%s/%s", dir, compiled->vm_json ? "graph.json" : "vm.json");
  if (unlink(path) != 0 && errno != ENOENT) {
    return KILN_STATUS(IO_ERROR, "%s: cannot remove it: %s", path, strerror(errno));
  }
  snprintf(path, sizeof(path), "%s/%s", dir, program_name(compiled));
  KILN_RETURN_IF_ERROR(write_text(path, kiln_compiled_program_json(compiled)));
  snprintf(path, sizeof(path), "%s/params.bin", dir);
  return kiln_runtime_params_save(path, compiled->graph.num_params, compiled->graph.param_names,
                                  compiled->graph.params);
}

/* The library `library` linked again with the compiled model embedded. */
static kiln_status_t link_one_file(const kiln_compiled_t *compiled,
                                   const kiln_runtime_module_t *library,
                                   kiln_runtime_module_t **out_linked) {
  kiln_allocator_t allocator = compiled->allocator;
  size_t object_size = 0;
  const void *object = kiln_runtime_module_object(library, &object_size);
  if (!object) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "target \"%s\" built the kernels in memory (no object file to link): "
                       "build with an object-file target to save a one-file model",
                       compiled->target);
  }
  char triple[160];
  KILN_RETURN_IF_ERROR(kiln_codegen_target_triple(compiled->target, triple, sizeof(triple)));
  void *params = NULL, *model = NULL;
  size_t params_size = 0, model_size = 0;
  kiln_status_t status = kiln_runtime_params_serialize(
      allocator, compiled->graph.num_params, compiled->graph.param_names, compiled->graph.params,
      &params, &params_size);
  if (!status) {
    status = kiln_runtime_model_serialize(allocator, kiln_compiled_program_json(compiled), params,
                                          params_size, &model, &model_size);
  }
  kiln_allocator_free(allocator, params);
  if (!status) {
    status = kiln_codegen_link(allocator, triple[0] ? triple : NULL, object, object_size, model,
                               model_size, false, out_linked);
  }
  kiln_allocator_free(allocator, model);
  return status;
}

kiln_status_t kiln_compiled_export_library(const kiln_compiled_t *compiled, const char *path) {
  kiln_runtime_module_t *library = NULL, *linked = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiler_build_standalone(compiled, &library));
  kiln_status_t status = link_one_file(compiled, library, &linked);
  kiln_runtime_module_release(library);
  if (!status) {
    status = kiln_runtime_module_save(linked, path);
  }
  kiln_runtime_module_release(linked);
  return status;
}

kiln_status_t kiln_compiled_create_executor(const kiln_compiled_t *compiled,
                                            kiln_graph_executor_t **out_executor) {
  *out_executor = NULL;
  /* code built for another CPU is saved and run there, not here */
  KILN_RETURN_IF_ERROR(kiln_codegen_target_check_host(compiled->target));
  kiln_runtime_params_t *params = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiled_params(compiled, &params));
  kiln_status_t status =
      kiln_graph_executor_create(compiled->allocator, kiln_compiled_program_json(compiled),
                                 program_name(compiled), compiled->library, params, out_executor);
  kiln_runtime_params_destroy(params);
  return status;
}
