/*
 * The graph compiler's driver (build.h): passes, memory plan, graph
 * codegen, loop-IR passes and target code generation, timed phase by phase.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "codegen/target.h"
#include "compiler/build.h"
#include "ir/infer.h"
#include "pass/pipeline.h"
#include "pass/plan_memory.h"
#include "tir/transform.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(const kiln_compiler_options_t *options, const char *phase, double seconds) {
  if (options->progress) {
    fprintf(options->progress, "kiln: %s (%.2f s)\n", phase, seconds);
    fflush(options->progress);
  }
}

static kiln_status_t make_context(kiln_allocator_t allocator,
                                  const kiln_compiler_options_t *options,
                                  kiln_pass_context_t **out_context) {
  KILN_RETURN_IF_ERROR(kiln_pass_context_create(allocator, options->opt_level, out_context));
  kiln_pass_context_set_verify(*out_context, options->verify);
  for (int i = 0; i < options->num_disabled_passes; ++i) {
    KILN_RETURN_IF_ERROR(kiln_pass_context_disable(*out_context, options->disabled_passes[i]));
  }
  return KILN_OK;
}

static kiln_status_t run_passes(kiln_allocator_t allocator, kiln_module_t *module,
                                const kiln_compiler_options_t *options) {
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(module));
  kiln_pass_context_t *context = NULL;
  kiln_status_t status = make_context(allocator, options, &context);
  if (!status) {
    status = kiln_pass_run_default_pipeline(module, context);
  }
  kiln_pass_context_destroy(context);
  return status;
}

/* Storage ids per graph entry from the plan (graph_codegen.h). */
static kiln_status_t plan_and_generate(kiln_compiled_t *c, kiln_module_t *module,
                                       const kiln_schedule_target_t *target) {
  kiln_memory_plan_t *plan = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_plan_memory_compute(module, c->allocator, &plan));
  c->stats.planned_bytes = plan->planned_bytes;
  c->stats.tensor_bytes = plan->tensor_bytes;
  kiln_status_t status =
      kiln_graph_codegen(c->allocator, module, target, plan, &c->arena, &c->graph);
  kiln_pass_plan_memory_destroy(plan);
  return status;
}

static kiln_status_t lower_and_generate(kiln_compiled_t *c) {
  int n = c->graph.num_funcs;
  const kiln_tir_prim_func_t **passed = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)n + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&passed));
  kiln_tir_pipeline_options_t pipeline = kiln_tir_pipeline_options_default();
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_tir_lower_pipeline(&c->arena, c->graph.funcs[i], &pipeline, &passed[i]), "kernel %s",
        c->graph.funcs[i]->name);
  }
  c->stats.num_kernels = n;
  c->stats.num_kernel_calls = c->graph.num_kernel_calls;
  c->stats.num_params = c->graph.num_params;
  c->stats.flops = c->graph.total_flops;
  return kiln_codegen_build(c->allocator, c->target, passed, n, &c->library);
}

static kiln_status_t build(kiln_compiled_t *c, kiln_module_t *module,
                           const kiln_compiler_options_t *options) {
  double start = now_seconds();
  KILN_RETURN_IF_ERROR(run_passes(c->allocator, module, options));
  double passed = now_seconds();
  progress(options, "passes done", passed - start);
  kiln_schedule_target_t target = kiln_schedule_target_host();
  KILN_RETURN_IF_ERROR(plan_and_generate(c, module, &target));
  double lowered = now_seconds();
  KILN_RETURN_IF_ERROR(lower_and_generate(c));
  double generated = now_seconds();
  progress(options, "code generated", generated - start);
  c->stats.seconds_passes = passed - start;
  c->stats.seconds_lower = lowered - passed;
  c->stats.seconds_codegen = generated - lowered;
  c->stats.seconds_total = generated - start;
  return KILN_OK;
}

kiln_status_t kiln_compiler_build(kiln_allocator_t allocator, kiln_module_t *module,
                                  const kiln_compiler_options_t *options,
                                  kiln_compiled_t **out_compiled) {
  *out_compiled = NULL;
  kiln_compiler_options_t defaults = kiln_compiler_options_default();
  options = options ? options : &defaults;
  kiln_compiled_t *c = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*c), (void **)&c));
  c->allocator = allocator;
  c->graph.allocator = allocator;
  kiln_arena_initialize(&c->arena, allocator, 1 << 16);
  kiln_status_t status = kiln_allocator_strdup(
      allocator, options->target ? options->target : kiln_compiler_default_target(), &c->target);
  if (!status) {
    status = build(c, module, options);
  }
  if (status) {
    kiln_compiled_destroy(c);
    return status;
  }
  *out_compiled = c;
  return KILN_OK;
}
