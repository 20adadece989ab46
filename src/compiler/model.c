/*
 * kiln/model.h: a model in memory as one opaque object over the graph IR.
 *
 * A kiln_model_t is the IR module (ir/expr.h) and, for a workload, its
 * weights kept apart (ir/params.h) until bind_params makes them constants
 * of main, as relay.testing hands back (mod, params). Every call is a thin
 * adapter onto the layer that does the work: the ONNX importer and the
 * workload builder (kiln_compiler_load_model shares the import with
 * kiln_compile), the pass pipeline with one instrument that turns the
 * pass manager's hook into the public one, the text printer, the dot
 * writer, and the reference interpreter. Text comes back as one heap
 * string from the caller's allocator (kiln_strbuf_take).
 */
#include <stdint.h>
#include <string.h>

#include "base/strbuf.h"
#include "compiler/build.h"
#include "compiler/dot.h"
#include "frontend/onnx/onnx_case.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/testing/workloads.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/params.h"
#include "ir/text.h"
#include "kiln/model.h"
#include "pass/pipeline.h"

struct kiln_model_t {
  kiln_allocator_t allocator;
  kiln_module_t *module;
  kiln_params_t params; /* a workload's weights until bound */
};

kiln_model_options_t kiln_model_options_default(void) {
  kiln_model_options_t options;
  memset(&options, 0, sizeof(options));
  return options;
}

const char *const *kiln_model_workload_names(void) {
  return kiln_workload_names();
}

static kiln_status_t build_workload(const char *name, const kiln_model_options_t *options,
                                    kiln_model_t *model) {
  if (options->num_input_shapes > 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: input shapes are for ONNX models; workloads take a batch and an "
                       "image size",
                       name);
  }
  kiln_workload_options_t workload = kiln_workload_options_default();
  workload.batch_size = options->batch > 0 ? options->batch : workload.batch_size;
  workload.image_size = options->image_size > 0 ? options->image_size : workload.image_size;
  workload.seed = options->seed;
  return kiln_workload_build(name, &workload, model->allocator, &model->params, &model->module);
}

static bool is_onnx(const char *model) {
  size_t length = strlen(model);
  return length > 5 && strcmp(model + length - 5, ".onnx") == 0;
}

kiln_status_t kiln_model_load(kiln_allocator_t allocator, const char *name,
                              const kiln_model_options_t *options, kiln_model_t **out_model) {
  *out_model = NULL;
  if (!name) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_model_load: no model given");
  }
  kiln_model_options_t defaults = kiln_model_options_default();
  options = options ? options : &defaults;
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*model), (void **)&model));
  model->allocator = allocator;
  kiln_params_initialize(&model->params, allocator);
  kiln_status_t status = KILN_OK;
  if (is_onnx(name)) {
    kiln_onnx_import_options_t import = {.num_input_shapes = options->num_input_shapes,
                                         .input_shape_specs = options->input_shapes,
                                         .max_constant_bytes = options->max_constant_bytes,
                                         .static_input_shapes = !options->symbolic_input_shapes};
    status = kiln_onnx_import_file(name, &import, allocator, &model->module);
  } else {
    status = build_workload(name, options, model);
  }
  if (status) {
    kiln_model_destroy(model);
    return status;
  }
  *out_model = model;
  return KILN_OK;
}

void kiln_model_destroy(kiln_model_t *model) {
  if (!model) {
    return;
  }
  kiln_params_deinitialize(&model->params);
  kiln_module_destroy(model->module);
  kiln_allocator_free(model->allocator, model);
}

int kiln_model_num_params(const kiln_model_t *model) {
  return (int)kiln_params_count(&model->params);
}

kiln_status_t kiln_model_bind_params(kiln_model_t *model) {
  if (kiln_params_count(&model->params) == 0) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_ir_bind_params(model->module, "main", &model->params));
  kiln_params_deinitialize(&model->params);
  kiln_params_initialize(&model->params, model->allocator);
  return KILN_OK;
}

/* kiln_compile's import (build.h): the model loaded and bound, its module
 * taken out. */
kiln_status_t kiln_compiler_load_model(kiln_allocator_t allocator, const char *name,
                                       const kiln_compiler_options_t *options,
                                       kiln_module_t **out_module) {
  *out_module = NULL;
  kiln_model_options_t load = {.num_input_shapes = options->num_input_shapes,
                               .input_shapes = options->input_shapes,
                               .max_constant_bytes = options->max_constant_bytes,
                               .batch = options->batch,
                               .image_size = options->image_size,
                               .symbolic_input_shapes = options->executor != KILN_EXECUTOR_GRAPH};
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(kiln_model_load(allocator, name, &load, &model));
  kiln_status_t status = kiln_model_bind_params(model);
  if (!status) {
    *out_module = model->module;
    model->module = NULL;
  }
  kiln_model_destroy(model);
  return status;
}

/* ---- inputs ---- */

static const kiln_function_t *main_of(const kiln_model_t *model) {
  return kiln_module_get_function(model->module, "main");
}

int kiln_model_num_inputs(const kiln_model_t *model) {
  const kiln_function_t *main_fn = main_of(model);
  return main_fn ? main_fn->num_params : 0;
}

kiln_status_t kiln_model_input_info(const kiln_model_t *model, int index,
                                    kiln_model_input_info_t *out_info) {
  int count = kiln_model_num_inputs(model);
  if (index < 0 || index >= count) {
    return KILN_STATUS(OUT_OF_RANGE, "input %d of a model of %d inputs", index, count);
  }
  const kiln_var_t *param = main_of(model)->params[index];
  memset(out_info, 0, sizeof(*out_info));
  out_info->name = param->name;
  kiln_type_text(param->type_annotation, out_info->type_text);
  const kiln_tensor_type_t *type = kiln_type_as_tensor(param->type_annotation);
  if (type) {
    out_info->is_tensor = true;
    out_info->dtype = type->dtype;
    out_info->ndim = type->ndim;
    memcpy(out_info->shape, type->shape, (size_t)type->ndim * sizeof(type->shape[0]));
  }
  return KILN_OK;
}

/* ---- the pass pipeline ---- */

kiln_model_optimize_options_t kiln_model_optimize_options_default(void) {
  kiln_model_optimize_options_t options;
  memset(&options, 0, sizeof(options));
  options.opt_level = 3;
  return options;
}

typedef struct hook_t {
  const kiln_model_optimize_options_t *options;
  kiln_allocator_t allocator;
} hook_t;

/* The pass manager's `after` as the public hook, over a view of the module. */
static void hook_after(void *user, const kiln_pass_t *pass, const kiln_module_t *module,
                       kiln_status_t status, double seconds) {
  const hook_t *hook = user;
  kiln_model_t view = {.allocator = hook->allocator, .module = (kiln_module_t *)(uintptr_t)module};
  hook->options->after_pass(hook->options->user, pass->info.name, &view, status != KILN_OK,
                            seconds);
}

static kiln_status_t configure(kiln_pass_context_t *context,
                               const kiln_model_optimize_options_t *options, hook_t *hook) {
  for (int i = 0; i < options->num_disabled_passes; ++i) {
    const kiln_pass_t *pass = NULL;
    KILN_RETURN_IF_ERROR(kiln_pass_find(options->disabled_passes[i], &pass));
    KILN_RETURN_IF_ERROR(kiln_pass_context_disable(context, options->disabled_passes[i]));
  }
  kiln_pass_context_set_verify(context, options->verify);
  if (options->after_pass) {
    kiln_pass_instrument_t instrument = {.user = hook, .after = hook_after};
    KILN_RETURN_IF_ERROR(kiln_pass_context_add_instrument(context, &instrument));
  }
  return KILN_OK;
}

kiln_status_t kiln_model_optimize(kiln_model_t *model,
                                  const kiln_model_optimize_options_t *options) {
  kiln_model_optimize_options_t defaults = kiln_model_optimize_options_default();
  options = options ? options : &defaults;
  if (options->opt_level < 0 || options->opt_level > 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_model_optimize: opt_level %d is not 0 to 3",
                       options->opt_level);
  }
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(model->module));
  kiln_pass_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_context_create(model->allocator, options->opt_level, &context));
  hook_t hook = {options, model->allocator};
  kiln_status_t status = configure(context, options, &hook);
  if (!status) {
    status = kiln_pass_run_default_pipeline(model->module, context);
  }
  kiln_pass_context_destroy(context);
  return status;
}

kiln_status_t kiln_model_pass_opt_level(const char *name, int *out_opt_level) {
  const kiln_pass_t *pass = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_find(name ? name : "(null)", &pass));
  *out_opt_level = pass->info.opt_level;
  return KILN_OK;
}

/* ---- printing ---- */

/* The text `status` left in `sb`, taken into *out_text; `sb` is freed. */
static kiln_status_t take_text(kiln_status_t status, kiln_strbuf_t *sb, char **out_text) {
  if (!status) {
    status = kiln_strbuf_take(sb, out_text);
  }
  kiln_strbuf_deinitialize(sb);
  return status;
}

kiln_status_t kiln_model_print(const kiln_model_t *model, bool metadata, kiln_allocator_t allocator,
                               char **out_text) {
  *out_text = NULL;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  kiln_ir_print_options_t print = {.include_metadata = metadata};
  return take_text(kiln_ir_print_module(model->module, &print, &sb), &sb, out_text);
}

kiln_status_t kiln_model_print_dot(const kiln_model_t *model, kiln_allocator_t allocator,
                                   char **out_text) {
  *out_text = NULL;
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, allocator);
  return take_text(kiln_compiler_graph_dot(model->module, &sb), &sb, out_text);
}

/* ---- running ---- */

kiln_status_t kiln_model_interpret(kiln_model_t *model, int num_inputs,
                                   kiln_tensor_t *const *inputs, kiln_allocator_t allocator,
                                   int *out_num_outputs, kiln_tensor_t ***out_outputs) {
  *out_num_outputs = 0;
  *out_outputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_infer_types(model->module));
  return kiln_interp_run(model->module, "main", num_inputs, inputs, allocator, out_num_outputs,
                         out_outputs);
}

kiln_status_t kiln_model_compile(kiln_model_t *model, const kiln_compiler_options_t *options,
                                 kiln_compiled_t **out_compiled) {
  *out_compiled = NULL;
  KILN_RETURN_IF_ERROR(kiln_model_bind_params(model));
  return kiln_compiler_build(model->allocator, model->module, options, out_compiled);
}

kiln_status_t kiln_tensor_allclose(const kiln_tensor_t *expected, const kiln_tensor_t *actual,
                                   double rtol, double atol) {
  return kiln_onnx_compare(expected, actual, rtol, atol);
}
