/*
 * The kiln tool's model commands: `show` prints a model's typed IR and
 * `interp` runs it on the reference interpreter.
 *
 * A MODEL argument is an ONNX file (a name ending in ".onnx", imported with
 * --input-shape values for symbolic dims) or a built-in workload
 * (kiln_workload_names). Both commands share one option parser
 * (kiln_cli_model_options_t) and one loader. `interp` binds a workload's
 * weights as constants (an ONNX model's initializers already are), so the
 * inputs it reads from --input files (or makes with --random-input) are the
 * data inputs only, in the order of @main's parameters; a missing or
 * mismatched input is an error that names the parameter and its type.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "cli.h"
#include "frontend/onnx/onnx_case.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/testing/workloads.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/params.h"
#include "ir/text.h"
#include "kiln/npy.h"
#include "pass/instrument.h"
#include "pass/pipeline.h"

#define KILN_CLI_MAX_FILES 16

typedef struct kiln_cli_model_options_t {
  const char *model;
  kiln_workload_options_t workload;
  int num_inputs;
  const char *inputs[KILN_CLI_MAX_FILES];
  int num_outputs;
  const char *outputs[KILN_CLI_MAX_FILES];
  int num_input_shapes;
  const char *input_shapes[KILN_CLI_MAX_FILES];
  int num_expects;
  const char *expects[KILN_CLI_MAX_FILES];
  int random_input;
  int metadata;
  const char *after;          /* show: the IR after this pass of the default pipeline */
  int64_t opt_level;          /* show --after: the pipeline's opt_level (default 3) */
  int64_t max_constant_bytes; /* ONNX import's constant cap (0: the default) */
} kiln_cli_model_options_t;

kiln_status_t kiln_cli_parse_int(const char *flag, const char *text, int64_t minimum,
                                 int64_t *out_value) {
  if (text == NULL)
    return kiln_cli_usage("missing value after", flag);
  char *end = NULL;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < minimum) {
    char message[96];
    snprintf(message, sizeof(message), "expected an integer of at least %lld, got '%.24s', for",
             (long long)minimum, text);
    return kiln_cli_usage(message, flag);
  }
  *out_value = value;
  return KILN_OK;
}

static kiln_status_t kiln_cli_push_file(const char *flag, const char *path, int *count,
                                        const char **files) {
  if (path == NULL)
    return kiln_cli_usage("missing file after", flag);
  if (*count == KILN_CLI_MAX_FILES)
    return kiln_cli_usage("too many files for", flag);
  files[(*count)++] = path;
  return KILN_OK;
}

/* One option at argv[*index]; advances past its value. */
static kiln_status_t kiln_cli_parse_option(int argc, char **argv, int *index,
                                           kiln_cli_model_options_t *options) {
  const char *flag = argv[*index];
  const char *value = *index + 1 < argc ? argv[*index + 1] : NULL;
  int64_t number = 0;
  if (strcmp(flag, "--random-input") == 0) {
    options->random_input = 1;
    return KILN_OK;
  }
  if (strcmp(flag, "--metadata") == 0) {
    options->metadata = 1;
    return KILN_OK;
  }
  (*index)++;
  if (strcmp(flag, "--input") == 0) {
    return kiln_cli_push_file(flag, value, &options->num_inputs, options->inputs);
  }
  if (strcmp(flag, "--input-shape") == 0) {
    return kiln_cli_push_file(flag, value, &options->num_input_shapes, options->input_shapes);
  }
  if (strcmp(flag, "--expect") == 0) {
    return kiln_cli_push_file(flag, value, &options->num_expects, options->expects);
  }
  if (strcmp(flag, "--output") == 0) {
    return kiln_cli_push_file(flag, value, &options->num_outputs, options->outputs);
  }
  if (strcmp(flag, "--batch") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 1, &number));
    options->workload.batch_size = number;
    return KILN_OK;
  }
  if (strcmp(flag, "--image-size") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 1, &number));
    options->workload.image_size = number;
    return KILN_OK;
  }
  if (strcmp(flag, "--after") == 0) {
    if (value == NULL)
      return kiln_cli_usage("missing pass name after", flag);
    options->after = value;
    return KILN_OK;
  }
  if (strcmp(flag, "--opt-level") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 0, &number));
    if (number > 3)
      return kiln_cli_usage("expected 0 to 3 after", flag);
    options->opt_level = number;
    return KILN_OK;
  }
  if (strcmp(flag, "--max-constant-bytes") == 0) {
    return kiln_cli_parse_int(flag, value, 1, &options->max_constant_bytes);
  }
  if (strcmp(flag, "--seed") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 0, &number));
    options->workload.seed = (uint64_t)number;
    return KILN_OK;
  }
  return kiln_cli_usage("unknown option", flag);
}

static kiln_status_t kiln_cli_parse_model_options(int argc, char **argv,
                                                  kiln_cli_model_options_t *options) {
  memset(options, 0, sizeof(*options));
  options->workload = kiln_workload_options_default();
  options->opt_level = 3;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--", 2) == 0) {
      KILN_RETURN_IF_ERROR(kiln_cli_parse_option(argc, argv, &i, options));
    } else if (options->model == NULL) {
      options->model = argv[i];
    } else {
      return kiln_cli_usage("unexpected argument", argv[i]);
    }
  }
  if (options->model == NULL)
    return kiln_cli_usage("expected a MODEL", NULL);
  return KILN_OK;
}

static int kiln_cli_is_onnx(const char *model) {
  size_t length = strlen(model);
  return length > 5 && strcmp(model + length - 5, ".onnx") == 0;
}

/* Builds the model; with `bind`, a workload's weights become constants. */
static kiln_status_t kiln_cli_load(const kiln_cli_model_options_t *options, int bind,
                                   kiln_module_t **out_module) {
  kiln_allocator_t allocator = kiln_allocator_system();
  if (kiln_cli_is_onnx(options->model)) {
    kiln_onnx_import_options_t import = {.num_input_shapes = options->num_input_shapes,
                                         .input_shape_specs = options->input_shapes,
                                         .max_constant_bytes = options->max_constant_bytes};
    return kiln_onnx_import_file(options->model, &import, allocator, out_module);
  }
  if (options->num_input_shapes > 0) {
    return kiln_cli_usage("--input-shape is for ONNX models; workloads take --batch and "
                          "--image-size",
                          NULL);
  }
  kiln_params_t params;
  kiln_params_initialize(&params, allocator);
  kiln_module_t *module = NULL;
  kiln_status_t status =
      kiln_workload_build(options->model, &options->workload, allocator, &params, &module);
  if (status == KILN_OK && bind)
    status = kiln_ir_bind_params(module, "main", &params);
  kiln_params_deinitialize(&params);
  if (status != KILN_OK) {
    kiln_module_destroy(module);
    return status;
  }
  *out_module = module;
  return KILN_OK;
}

/* Runs the default pass pipeline on the model (weights bound) and prints
 * the module after pass `options->after`. */
static kiln_status_t kiln_cli_show_after(const kiln_cli_model_options_t *options) {
  const kiln_pass_t *pass = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_find(options->after, &pass));
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_load(options, 1, &module));
  kiln_pass_context_t *context = NULL;
  kiln_pass_printer_t printer;
  kiln_pass_printer_initialize(&printer, stdout, options->after, kiln_allocator_system());
  kiln_status_t status = kiln_ir_infer_types(module);
  if (!status)
    status = kiln_pass_context_create(kiln_allocator_system(), (int)options->opt_level, &context);
  if (!status) {
    kiln_pass_instrument_t instrument = kiln_pass_printer_instrument(&printer);
    status = kiln_pass_context_add_instrument(context, &instrument);
  }
  if (!status)
    status = kiln_pass_run_default_pipeline(module, context);
  kiln_status_t printed = kiln_pass_printer_finish(&printer);
  if (!status && printed == KILN_OK && printer.printed == 0) {
    status = KILN_STATUS(FAILED_PRECONDITION,
                         "pass %s did not run at opt_level %d (it runs from opt_level %d)",
                         options->after, (int)options->opt_level, pass->info.opt_level);
  }
  if (status)
    kiln_status_free(printed);
  else
    status = printed;
  kiln_pass_context_destroy(context);
  kiln_module_destroy(module);
  return status;
}

kiln_status_t kiln_cli_show(int argc, char **argv) {
  kiln_cli_model_options_t options;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_model_options(argc, argv, &options));
  if (options.num_inputs || options.num_outputs || options.random_input) {
    return kiln_cli_usage("show takes no --input, --output or --random-input", NULL);
  }
  if (options.after)
    return kiln_cli_show_after(&options);
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_load(&options, 0, &module));
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, kiln_allocator_system());
  kiln_ir_print_options_t print = {.include_metadata = options.metadata != 0};
  kiln_status_t status = kiln_ir_print_module(module, &print, &text);
  if (status == KILN_OK)
    fputs(kiln_strbuf_c_str(&text), stdout);
  kiln_strbuf_deinitialize(&text);
  kiln_module_destroy(module);
  return status;
}

/* ---- interp ---- */

/* Uniform values in [-1, 1) from a fixed generator (float32 inputs only). */
static kiln_status_t kiln_cli_random_tensor(const kiln_var_t *param, uint64_t seed,
                                            kiln_tensor_t **out_tensor) {
  const kiln_tensor_type_t *type = kiln_type_as_tensor(param->type_annotation);
  if (type == NULL || type->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(INVALID_ARGUMENT, "--random-input makes float32 tensors; %%%s is not one",
                       param->name);
  }
  KILN_RETURN_IF_ERROR(kiln_tensor_create(kiln_allocator_system(), type->dtype, type->ndim,
                                          type->shape, out_tensor));
  float *data = kiln_tensor_data(*out_tensor);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < kiln_tensor_element_count(*out_tensor); i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    data[i] = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
  return KILN_OK;
}

static kiln_status_t kiln_cli_missing_inputs(const kiln_function_t *main, int given) {
  kiln_strbuf_t list;
  kiln_strbuf_initialize(&list, kiln_allocator_system());
  for (int i = 0; i < main->num_params; i++) {
    char type[KILN_IR_TYPE_TEXT_CAPACITY];
    kiln_status_free(kiln_strbuf_appendf(&list, "%s%%%s: %s", i ? ", " : "", main->params[i]->name,
                                         kiln_type_text(main->params[i]->type_annotation, type)));
  }
  kiln_status_t status = KILN_STATUS(INVALID_ARGUMENT,
                                     "the model takes %d input(s) (%s) but %d --input file(s) "
                                     "were given",
                                     main->num_params, kiln_strbuf_c_str(&list), given);
  kiln_strbuf_deinitialize(&list);
  return status;
}

static kiln_status_t kiln_cli_read_inputs(const kiln_cli_model_options_t *options,
                                          const kiln_function_t *main, kiln_tensor_t **inputs) {
  if (!options->random_input && options->num_inputs != main->num_params) {
    return kiln_cli_missing_inputs(main, options->num_inputs);
  }
  if (options->random_input && options->num_inputs) {
    return kiln_cli_usage("give either --input files or --random-input", NULL);
  }
  for (int i = 0; i < main->num_params; i++) {
    if (options->random_input) {
      KILN_RETURN_IF_ERROR(kiln_cli_random_tensor(main->params[i], (uint64_t)i, &inputs[i]));
    } else {
      KILN_RETURN_IF_ERROR(
          kiln_npy_read_file(kiln_allocator_system(), options->inputs[i], &inputs[i]));
    }
  }
  return KILN_OK;
}

/* Whole-model tolerances (ONNX's model zoo checks): rtol 1e-3, atol 1e-4. */
static kiln_status_t kiln_cli_check_expected(const char *path, int index,
                                             const kiln_tensor_t *actual) {
  kiln_tensor_t *expected = NULL;
  KILN_RETURN_IF_ERROR(kiln_npy_read_file(kiln_allocator_system(), path, &expected));
  kiln_status_t status = kiln_onnx_compare(expected, actual, 1e-3, 1e-4);
  kiln_tensor_release(expected);
  KILN_RETURN_IF_ERROR_ANNOTATE(status, "output %d differs from %s", index, path);
  printf("output %d matches %s (rtol 1e-3, atol 1e-4)\n", index, path);
  return KILN_OK;
}

static kiln_status_t kiln_cli_write_outputs(const kiln_cli_model_options_t *options,
                                            int num_outputs, kiln_tensor_t *const *outputs) {
  if (options->num_expects > num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "the model has %d output(s) but %d --expect files were given", num_outputs,
                       options->num_expects);
  }
  if (options->num_outputs > num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "the model has %d output(s) but %d --output files "
                       "were given",
                       num_outputs, options->num_outputs);
  }
  for (int i = 0; i < num_outputs; i++) {
    char label[64];
    snprintf(label, sizeof(label), "output %d", i);
    kiln_cli_print_summary(label, outputs[i]);
    if (i < options->num_outputs) {
      KILN_RETURN_IF_ERROR(
          kiln_npy_write_file(kiln_allocator_system(), outputs[i], options->outputs[i]));
    }
    if (i < options->num_expects) {
      KILN_RETURN_IF_ERROR(kiln_cli_check_expected(options->expects[i], i, outputs[i]));
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_cli_interp_run(const kiln_cli_model_options_t *options,
                                         kiln_module_t *module, kiln_tensor_t **inputs) {
  kiln_function_t *main = kiln_module_get_function(module, "main");
  KILN_RETURN_IF_ERROR(kiln_cli_read_inputs(options, main, inputs));
  int num_outputs = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_interp_run(module, "main", main->num_params, inputs,
                                       kiln_allocator_system(), &num_outputs, &outputs));
  kiln_status_t status = kiln_cli_write_outputs(options, num_outputs, outputs);
  for (int i = 0; i < num_outputs; i++)
    kiln_tensor_release(outputs[i]);
  kiln_allocator_free(kiln_allocator_system(), outputs);
  return status;
}

kiln_status_t kiln_cli_interp(int argc, char **argv) {
  kiln_cli_model_options_t options;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_model_options(argc, argv, &options));
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_load(&options, 1, &module));
  kiln_tensor_t *inputs[KILN_CLI_MAX_FILES] = {NULL};
  kiln_status_t status = KILN_OK;
  if (kiln_module_get_function(module, "main")->num_params > KILN_CLI_MAX_FILES) {
    status = KILN_STATUS(UNIMPLEMENTED, "models with more than %d inputs", KILN_CLI_MAX_FILES);
  } else {
    status = kiln_cli_interp_run(&options, module, inputs);
  }
  for (int i = 0; i < KILN_CLI_MAX_FILES; i++)
    kiln_tensor_release(inputs[i]);
  kiln_module_destroy(module);
  return status;
}
