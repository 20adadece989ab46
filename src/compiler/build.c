/*
 * The graph compiler's driver (build.h): passes, memory plan, graph
 * codegen, loop-IR passes and target code generation, timed phase by phase.
 * Kernels are looked up in the shared kernel cache by their function keys
 * (graph_codegen keeps one per kernel); only the missing ones are built,
 * in one module, and the library holds a reference to each module it
 * calls into. A module with control flow compiles for the VM
 * (vm_control.c): each dataflow stage between control calls goes through
 * the passes and the symbolic-dims codegen on its own, and its kernels and
 * params join the build's under a prefix of the stage's; --executor graph
 * refuses it (kiln_pass_check_static names the node). A module with dims known only at run time
 * (symbolic dims in main's parameters, dyn operators' outputs) compiles for
 * the VM: a memory plan of the values with static or bounded dims, kernels
 * over run-time extents (lower_symbolic.c) and the program of vm_symbolic.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "codegen/target.h"
#include "compiler/build.h"
#include "compiler/lower.h"
#include "compiler/tuning.h"
#include "compiler/vm_codegen.h"
#include "ir/infer.h"
#include "ir/static_shapes.h"
#include "kiln/version.h"
#include "pass/pipeline.h"
#include "pass/plan_memory.h"
#include "runtime/module_built.h"
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

/* Disables pass `name`: NOT_FOUND listing the passes for an unknown name;
 * FAILED_PRECONDITION for a pass that runs at every opt_level (opt_level
 * 0), which the build needs (types, fusion, the memory plan; the passes
 * that others require are among them). */
static kiln_status_t disable_pass(kiln_pass_context_t *context, const char *name) {
  const kiln_pass_t *pass = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_find(name, &pass));
  if (pass->info.opt_level == 0) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "pass %s cannot be disabled: the build requires it (it runs at every "
                       "opt_level; the passes from opt_level 1 up can be disabled)",
                       name);
  }
  return kiln_pass_context_disable(context, name);
}

static kiln_status_t make_context(kiln_allocator_t allocator,
                                  const kiln_compiler_options_t *options,
                                  const kiln_schedule_target_t *target,
                                  kiln_pass_context_t **out_context) {
  KILN_RETURN_IF_ERROR(kiln_pass_context_create(allocator, options->opt_level, out_context));
  kiln_pass_context_set_verify(*out_context, options->verify);
  kiln_pass_context_set_target(*out_context, target);
  for (int i = 0; i < options->num_disabled_passes; ++i) {
    KILN_RETURN_IF_ERROR(disable_pass(*out_context, options->disabled_passes[i]));
  }
  return KILN_OK;
}

/* A module with dims known only at run time (symbolic dims in main's
 * parameters, a dyn operator's output) compiles for the VM only; the graph
 * executor refuses it. */
static kiln_status_t check_symbolic(kiln_module_t *module, const kiln_compiler_options_t *options) {
  if (options->executor == KILN_EXECUTOR_GRAPH) {
    kiln_status_t status = kiln_ir_module_require_static(module, "the graph compiler");
    return status ? kiln_status_annotate(status, "--executor graph (the VM takes symbolic dims and "
                                                 "dyn operators: --executor vm or auto)")
                  : KILN_OK;
  }
  return KILN_OK;
}

static kiln_status_t run_passes(kiln_allocator_t allocator, kiln_module_t *module,
                                const kiln_compiler_options_t *options,
                                const kiln_schedule_target_t *target) {
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(module));
  KILN_RETURN_IF_ERROR(check_symbolic(module, options));
  kiln_pass_context_t *context = NULL;
  kiln_status_t status = make_context(allocator, options, target, &context);
  if (!status) {
    status = kiln_pass_run_default_pipeline(module, context);
  }
  kiln_pass_context_destroy(context);
  return status;
}

/* The kernels the graph has with a tuned configuration. */
static int count_tuned(const kiln_graph_codegen_t *graph) {
  int tuned = 0;
  for (int i = 0; i < graph->num_funcs; ++i) {
    tuned += strstr(graph->func_keys[i], " @tuned ") != NULL;
  }
  return tuned;
}

/* The records of options->tuning_records for the target (NULL: none), and
 * a warning for those ignored. */
static kiln_status_t load_tuning(const kiln_compiled_t *c, const kiln_compiler_options_t *options,
                                 kiln_tuning_t **out_tuning) {
  *out_tuning = NULL;
  if (!options->tuning_records) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(
      kiln_tuning_load(c->allocator, options->tuning_records, c->target, out_tuning));
  int tasks = 0, other_target = 0, other_version = 0;
  kiln_tuning_counts(*out_tuning, &tasks, &other_target, &other_version);
  if (other_target + other_version > 0) {
    KILN_LOG_WARN("%s: ignored %d records of another target than '%s' and %d of another kiln "
                  "version than %s",
                  options->tuning_records, other_target, c->target, other_version,
                  kiln_version_string());
  }
  return KILN_OK;
}

/* What find_layout reads: the records, and the compile that notes each
 * workload asked for (kiln_tune searches them). */
typedef struct layout_lookup_t {
  const kiln_tuning_t *tuning;
  kiln_compiled_t *c;
} layout_lookup_t;

/* Notes `workload` and its space in the compile, once per workload (an
 * allocation that fails leaves it out: the note is for the tuner). */
static void note_layout(kiln_compiled_t *c, const char *workload,
                        const kiln_schedule_space_t *space) {
  for (const kiln_compiled_layout_t *l = c->layouts; l; l = l->next) {
    if (strcmp(l->workload, workload) == 0) {
      return;
    }
  }
  kiln_compiled_layout_t *l = NULL;
  char *text = NULL;
  if (kiln_arena_allocate_array(&c->arena, 1, sizeof(*l), _Alignof(kiln_compiled_layout_t),
                                (void **)&l) ||
      kiln_arena_allocate_array(&c->arena, strlen(workload) + 1, 1, 1, (void **)&text)) {
    return;
  }
  memcpy(text, workload, strlen(workload) + 1);
  *l = (kiln_compiled_layout_t){.workload = text, .space = *space, .next = c->layouts};
  c->layouts = l;
}

/* The target's find_layout: the record of the workload's task (the hash
 * of its text, as a kernel's task is of its key), if of the space's
 * template and one of its choices. */
static const kiln_schedule_config_t *find_layout(const void *records, const char *workload,
                                                 const kiln_schedule_space_t *space) {
  const layout_lookup_t *lookup = records;
  note_layout(lookup->c, workload, space);
  char task[KILN_TUNING_TASK_CHARS];
  kiln_tuning_task_of(workload, task);
  const kiln_schedule_config_t *config =
      lookup->tuning ? kiln_tuning_find(lookup->tuning, task) : NULL;
  return config && kiln_schedule_space_valid(space, config) ? config : NULL;
}

/* The memory plan (its figures in the stats) and the kernels, with the
 * plan's storage ids per graph entry (graph_codegen.h); the caller
 * destroys the plan. */
static kiln_status_t plan_and_codegen(kiln_compiled_t *c, kiln_module_t *module,
                                      const kiln_schedule_target_t *target,
                                      const kiln_tuning_t *tuning, kiln_memory_plan_t **out_plan) {
  KILN_RETURN_IF_ERROR(kiln_pass_plan_memory_compute(module, c->allocator, out_plan));
  c->stats.planned_bytes = (*out_plan)->planned_bytes;
  c->stats.tensor_bytes = (*out_plan)->tensor_bytes;
  return kiln_graph_codegen_tuned(c->allocator, module, target, tuning, *out_plan, &c->arena,
                                  &c->graph);
}

static kiln_status_t plan_and_generate(kiln_compiled_t *c, kiln_module_t *module,
                                       const kiln_schedule_target_t *target,
                                       const kiln_tuning_t *tuning) {
  kiln_memory_plan_t *plan = NULL;
  kiln_status_t status = plan_and_codegen(c, module, target, tuning, &plan);
  c->stats.num_kernels_tuned = status ? 0 : count_tuned(&c->graph);
  kiln_pass_plan_memory_destroy(plan);
  return status;
}

/* A module with symbolic dims: kernels over run-time extents, the plan of
 * the values whose dims are static or bounded (plan_memory.h), a storage
 * per run for the others, and the VM program (vm_symbolic.c). */
static kiln_status_t generate_symbolic(kiln_compiled_t *c, kiln_module_t *module,
                                       const kiln_schedule_target_t *target,
                                       const kiln_tuning_t *tuning) {
  kiln_memory_plan_t *plan = NULL;
  kiln_status_t status = plan_and_codegen(c, module, target, tuning, &plan);
  if (!status) {
    status =
        kiln_vm_codegen_symbolic(c->allocator, &c->arena, module, &c->graph, plan, &c->vm_json);
  }
  kiln_pass_plan_memory_destroy(plan);
  return status;
}

/* ---- control flow (vm_control.c) ---- */

typedef struct stage_context_t {
  kiln_compiled_t *c;
  const kiln_compiler_options_t *options;
  const kiln_schedule_target_t *target;
} stage_context_t;

/* A copy of `count` pointers of `old` followed by `add`'s, in the arena. */
static kiln_status_t join_pointers(kiln_arena_t *arena, const void *old, int old_count,
                                   const void *add, int add_count, void *out_array) {
  void **joined = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, (size_t)(old_count + add_count) + 1,
                                                 sizeof(void *), _Alignof(void *),
                                                 (void **)&joined));
  if (old_count) {
    memcpy(joined, old, (size_t)old_count * sizeof(void *));
  }
  if (add_count) {
    memcpy(joined + old_count, add, (size_t)add_count * sizeof(void *));
  }
  *(void ***)out_array = joined;
  return KILN_OK;
}

static kiln_status_t prefixed_name(kiln_arena_t *arena, const char *prefix, const char *name,
                                   const char **out_name) {
  size_t length = strlen(prefix) + strlen(name) + 1;
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(arena, length, 1, 1, (void **)&text));
  snprintf(text, length, "%s%s", prefix, name);
  *out_name = text;
  return KILN_OK;
}

/* The stage's kernels, renamed with `prefix`, join the build's. */
static kiln_status_t join_kernels(kiln_compiled_t *c, const kiln_graph_codegen_t *stage,
                                  const char *prefix) {
  kiln_graph_codegen_t *g = &c->graph;
  int old = g->num_funcs, n = stage->num_funcs;
  KILN_RETURN_IF_ERROR(join_pointers(&c->arena, g->funcs, old, stage->funcs, n, &g->funcs));
  KILN_RETURN_IF_ERROR(
      join_pointers(&c->arena, g->func_keys, old, stage->func_keys, n, &g->func_keys));
  KILN_RETURN_IF_ERROR(
      join_pointers(&c->arena, g->functions, old, stage->functions, n, &g->functions));
  memset((void *)(g->functions + old), 0, (size_t)n * sizeof(void *)); /* the stage's module goes */
  int *calls = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)(old + n) + 1, sizeof(int),
                                                 _Alignof(int), (void **)&calls));
  for (int i = 0; i < old + n; ++i) {
    calls[i] = i < old ? g->func_calls[i] : stage->func_calls[i - old];
  }
  g->func_calls = calls;
  for (int i = 0; i < n; ++i) {
    kiln_tir_prim_func_t *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_allocate(&c->arena, sizeof(*copy),
                                             _Alignof(kiln_tir_prim_func_t), (void **)&copy));
    *copy = *stage->funcs[i];
    KILN_RETURN_IF_ERROR(prefixed_name(&c->arena, prefix, copy->name, &copy->name));
    g->funcs[old + i] = copy;
  }
  g->num_funcs = old + n;
  g->num_kernel_calls += stage->num_kernel_calls;
  g->total_flops += stage->total_flops;
  return KILN_OK;
}

/* Appends a param (a reference of the build's) named `name`. */
static kiln_status_t add_param(kiln_compiled_t *c, const char *name, kiln_tensor_t *value) {
  kiln_graph_codegen_t *g = &c->graph;
  int n = g->num_params;
  KILN_RETURN_IF_ERROR(join_pointers(&c->arena, g->params, n, &value, 1, &g->params));
  KILN_RETURN_IF_ERROR(join_pointers(&c->arena, g->param_names, n, &name, 1, &g->param_names));
  kiln_tensor_retain(value);
  g->num_params = n + 1;
  return KILN_OK;
}

static kiln_status_t join_stage(kiln_compiled_t *c, const kiln_graph_codegen_t *stage,
                                const char *prefix) {
  KILN_RETURN_IF_ERROR(join_kernels(c, stage, prefix));
  for (int i = 0; i < stage->num_params; ++i) {
    const char *name = NULL;
    KILN_RETURN_IF_ERROR(prefixed_name(&c->arena, prefix, stage->param_names[i], &name));
    KILN_RETURN_IF_ERROR(add_param(c, name, stage->params[i]));
  }
  return KILN_OK;
}

static kiln_status_t compile_stage(void *context, kiln_module_t *module, const char *prefix,
                                   char **out_vm_json) {
  stage_context_t *s = context;
  kiln_compiled_t *c = s->c;
  KILN_RETURN_IF_ERROR(run_passes(c->allocator, module, s->options, s->target));
  kiln_graph_codegen_t graph = {.allocator = c->allocator};
  kiln_status_t status =
      kiln_graph_codegen_tuned(c->allocator, module, s->target, NULL, NULL, &c->arena, &graph);
  if (!status) {
    status = kiln_vm_codegen_symbolic(c->allocator, &c->arena, module, &graph, NULL, out_vm_json);
  }
  if (!status) {
    status = join_stage(c, &graph, prefix);
  }
  kiln_graph_codegen_deinitialize(&graph);
  return status;
}

static kiln_status_t add_constant(void *context, kiln_tensor_t *value, const char **out_name) {
  kiln_compiled_t *c = ((stage_context_t *)context)->c;
  char name[32];
  snprintf(name, sizeof(name), "%d", c->graph.num_params);
  KILN_RETURN_IF_ERROR(prefixed_name(&c->arena, "g", name, out_name));
  return add_param(c, *out_name, value);
}

/* Whether the module has control flow, sequences or optionals: with
 * --executor graph an error naming the node and the VM. */
static kiln_status_t find_control(kiln_module_t *module, const kiln_compiler_options_t *options,
                                  bool *out_control) {
  kiln_status_t status = kiln_pass_check_static(module);
  *out_control = status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED &&
                 options->executor != KILN_EXECUTOR_GRAPH;
  if (*out_control) {
    kiln_status_free(status);
    return KILN_OK;
  }
  return status ? kiln_status_annotate(status, "--executor graph (control flow compiles for the "
                                               "VM: --executor vm or auto)")
                : KILN_OK;
}

static kiln_status_t generate_control(kiln_compiled_t *c, kiln_module_t *module,
                                      const kiln_schedule_target_t *target,
                                      const kiln_compiler_options_t *options) {
  stage_context_t context = {.c = c, .options = options, .target = target};
  kiln_vm_stage_compiler_t stages = {&context, compile_stage, add_constant};
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(module));
  c->executor = KILN_EXECUTOR_VM;
  return kiln_vm_codegen_control(c->allocator, module, &stages, &c->vm_json);
}

/* The loop-IR passes over every kernel, into c->lowered; a progress line
 * per kernel. */
static kiln_status_t lower_all(kiln_compiled_t *c, const kiln_compiler_options_t *options) {
  int n = c->graph.num_funcs;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)n + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&c->lowered));
  kiln_tir_pipeline_options_t pipeline = kiln_tir_pipeline_options_default();
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_tir_lower_pipeline(&c->arena, c->graph.funcs[i], &pipeline, &c->lowered[i]),
        "kernel %s", c->graph.funcs[i]->name);
    if (options->progress) {
      fprintf(options->progress, "kiln: kernel %d/%d %s lowered\n", i + 1, n,
              c->graph.funcs[i]->name);
      fflush(options->progress);
    }
  }
  if (options->progress) {
    fprintf(options->progress, "kiln: generating code for %d kernels (%s)\n", n, c->target);
    fflush(options->progress);
  }
  return KILN_OK;
}

/* The modules a library over shared kernels holds. */
typedef struct held_modules_t {
  kiln_allocator_t allocator;
  int count;
  kiln_runtime_module_t *modules[];
} held_modules_t;

static void release_held(void *owner) {
  held_modules_t *held = owner;
  for (int i = 0; i < held->count; ++i) {
    kiln_runtime_module_release(held->modules[i]);
  }
  kiln_allocator_free(held->allocator, held);
}

/* The library over each kernel's function, found in `modules` (one per
 * kernel, references handed over: each goes to the library, or is
 * released on failure). */
static kiln_status_t make_library(kiln_compiled_t *c, kiln_runtime_module_t **modules,
                                  const kiln_packed_fn *fns) {
  int n = c->graph.num_funcs;
  held_modules_t *held = NULL;
  kiln_runtime_module_entry_t *entries = NULL;
  kiln_status_t status = kiln_allocator_malloc_zeroed(
      c->allocator, sizeof(*held) + (size_t)n * sizeof(held->modules[0]), (void **)&held);
  if (!status) {
    held->allocator = c->allocator;
    held->count = n;
    memcpy(held->modules, modules, (size_t)n * sizeof(modules[0]));
    memset(modules, 0, (size_t)n * sizeof(modules[0]));
    status = kiln_arena_allocate_array(&c->arena, (size_t)n + 1, sizeof(*entries),
                                       _Alignof(kiln_runtime_module_entry_t), (void **)&entries);
  }
  for (int i = 0; i < n && !status; ++i) {
    entries[i].name = c->lowered[i]->name;
    entries[i].fn = fns[i];
    entries[i].num_args = c->lowered[i]->num_params;
  }
  if (!status) {
    status = kiln_runtime_module_create_in_memory(c->allocator, "kernels (shared)", n, entries,
                                                  release_held, held, &c->library);
  }
  if (status && held) {
    release_held(held);
  }
  for (int i = 0; i < n; ++i) {
    kiln_runtime_module_release(modules[i]);
  }
  return status;
}

/* Builds the kernels `missing` (indices into c->lowered) into one module
 * and offers each to the cache; fills their modules and fns. */
static kiln_status_t build_missing(kiln_compiled_t *c, int num_missing, const int *missing,
                                   kiln_runtime_module_t **modules, kiln_packed_fn *fns) {
  const kiln_tir_prim_func_t **funcs = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)num_missing + 1, sizeof(void *),
                                                 _Alignof(void *), (void **)&funcs));
  for (int m = 0; m < num_missing; ++m) {
    funcs[m] = c->lowered[missing[m]];
  }
  kiln_runtime_module_t *built = NULL;
  KILN_RETURN_IF_ERROR(kiln_codegen_build(c->allocator, c->target, funcs, num_missing, &built));
  if (!kiln_runtime_module_is_loaded(built)) {
    /* another architecture's: nothing to call here, nothing for the cache
     * (whose kernels for this target are then none: all were missing) */
    c->library = built;
    return KILN_OK;
  }
  kiln_status_t status = KILN_OK;
  for (int m = 0; m < num_missing && !status; ++m) {
    int i = missing[m];
    status = kiln_runtime_module_get_function(built, funcs[m]->name, &fns[i]);
    if (!status) {
      status = kiln_kernel_cache_add_compiled(c->kernels, c->graph.func_keys[i], built, fns[i]);
    }
    if (!status) {
      kiln_runtime_module_retain(built);
      modules[i] = built;
    }
  }
  if (!status && num_missing == c->graph.num_funcs) {
    kiln_runtime_module_retain(built); /* nothing reused: the built module is the library */
    c->library = built;
  }
  kiln_runtime_module_release(built);
  return status;
}

/* Takes what the kernel cache has, builds the rest, makes the library. */
static kiln_status_t generate_shared(kiln_compiled_t *c) {
  int n = c->graph.num_funcs;
  kiln_kernel_cache_options_t options = {.target = c->target, .shared = true};
  KILN_RETURN_IF_ERROR(kiln_kernel_cache_create(c->allocator, &options, &c->kernels));
  kiln_runtime_module_t **modules = NULL;
  kiln_packed_fn *fns = NULL;
  int *missing = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)n + 1, sizeof(*modules),
                                                 _Alignof(void *), (void **)&modules));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)n + 1, sizeof(*fns),
                                                 _Alignof(kiln_packed_fn), (void **)&fns));
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&c->arena, (size_t)n + 1, sizeof(*missing),
                                                 _Alignof(int), (void **)&missing));
  int num_missing = 0;
  for (int i = 0; i < n; ++i) {
    modules[i] = NULL;
    if (!kiln_kernel_cache_find_compiled(c->kernels, c->graph.func_keys[i], &modules[i], &fns[i])) {
      missing[num_missing++] = i;
    }
  }
  c->stats.num_kernels_reused = n - num_missing;
  kiln_status_t status = KILN_OK;
  if (num_missing > 0) {
    status = build_missing(c, num_missing, missing, modules, fns);
  }
  if (!status && !c->library) {
    return make_library(c, modules, fns);
  }
  for (int i = 0; i < n; ++i) {
    kiln_runtime_module_release(modules[i]);
  }
  return status;
}

static kiln_status_t lower_and_generate(kiln_compiled_t *c,
                                        const kiln_compiler_options_t *options) {
  KILN_RETURN_IF_ERROR(lower_all(c, options));
  c->stats.num_kernels = c->graph.num_funcs;
  c->stats.num_kernel_calls = c->graph.num_kernel_calls;
  c->stats.num_params = c->graph.num_params;
  c->stats.flops = c->graph.total_flops;
  if (options->private_kernels || c->graph.num_funcs == 0) {
    return kiln_codegen_build(c->allocator, c->target, c->lowered, c->graph.num_funcs, &c->library);
  }
  return generate_shared(c);
}

kiln_status_t kiln_compiler_build_standalone(const kiln_compiled_t *compiled,
                                             kiln_runtime_module_t **out_library) {
  *out_library = NULL;
  if (compiled->stats.num_kernels_reused == 0) { /* one module, as the target built it */
    kiln_runtime_module_retain(compiled->library);
    *out_library = compiled->library;
    return KILN_OK;
  }
  return kiln_codegen_build(compiled->allocator, compiled->target, compiled->lowered,
                            compiled->graph.num_funcs, out_library);
}

/* The passes (unless control flow, which compiles stage by stage), then
 * the kernels and the executor's program. */
static kiln_status_t passes_and_generate(kiln_compiled_t *c, kiln_module_t *module,
                                         const kiln_compiler_options_t *options,
                                         const kiln_schedule_target_t *target, bool control,
                                         double start, double *out_passed) {
  if (!control) {
    KILN_RETURN_IF_ERROR(run_passes(c->allocator, module, options, target));
  }
  *out_passed = now_seconds();
  progress(options, "passes done", *out_passed - start);
  const kiln_tuning_t *tuning = ((const layout_lookup_t *)target->layout_records)->tuning;
  if (control) {
    return generate_control(c, module, target, options);
  }
  if (kiln_vm_codegen_has_dynamic_shapes(module)) {
    return generate_symbolic(c, module, target, tuning);
  }
  return plan_and_generate(c, module, target, tuning);
}

static kiln_status_t build(kiln_compiled_t *c, kiln_module_t *module,
                           const kiln_compiler_options_t *options) {
  double start = now_seconds();
  bool control = false;
  KILN_RETURN_IF_ERROR(find_control(module, options, &control));
  kiln_schedule_target_t target;
  KILN_RETURN_IF_ERROR(kiln_compiler_schedule_target(c->target, &target));
  kiln_tuning_t *tuning = NULL;
  KILN_RETURN_IF_ERROR(load_tuning(c, options, &tuning));
  layout_lookup_t lookup = {.tuning = tuning, .c = c};
  target.find_layout = find_layout;
  target.layout_records = &lookup;
  double passed = start;
  kiln_status_t status = passes_and_generate(c, module, options, &target, control, start, &passed);
  kiln_tuning_destroy(tuning);
  KILN_RETURN_IF_ERROR(status);
  c->executor = control ? KILN_EXECUTOR_VM : kiln_vm_codegen_choose(module, options->executor);
  if (c->executor == KILN_EXECUTOR_VM && !c->vm_json) {
    KILN_RETURN_IF_ERROR(kiln_vm_codegen(c->allocator, c->graph.graph_json, c->graph.num_params,
                                         c->graph.param_names, &c->vm_json));
  }
  double lowered = now_seconds();
  KILN_RETURN_IF_ERROR(lower_and_generate(c, options));
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
