/*
 * The kiln tool's model commands: `show` prints a model's typed IR and
 * `interp` runs it on the reference interpreter.
 *
 * A MODEL argument is an ONNX file (a name ending in ".onnx", imported with
 * --input-shape values for symbolic dims) or a built-in workload
 * (kiln_model_workload_names), loaded through kiln/model.h. Both commands
 * share one option parser
 * (kiln_cli_model_options_t) and one loader. `interp` binds a workload's
 * weights as constants (an ONNX model's initializers already are), so the
 * inputs it reads from --input values (cli_io.c: by name, from an .npz, or
 * in the order of @main's parameters) or makes with --random-input are the
 * data inputs only; a missing or mismatched input is an error that names
 * the parameter and its type. Options that do not apply to the MODEL
 * (--batch on an ONNX file, --input-shape on a workload) are usage errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kiln/model.h"
#include "kiln/npy.h"

typedef struct kiln_cli_model_options_t {
  const char *model;
  kiln_model_options_t load; /* workload options, --max-constant-bytes */
  kiln_cli_given_t given;    /* which of the loading options were given */
  kiln_cli_io_t io;          /* --input, --output, --expect, --print-top */
  int num_input_shapes;
  const char *input_shapes[KILN_CLI_MAX_FILES];
  int random_input;
  int metadata;
  const char *after; /* show: the IR after this pass of the default pipeline */
  int64_t opt_level; /* show --after: the pipeline's opt_level (default 3) */
  bool opt_level_given;
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
  bool matched = false;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_io_option(flag, value, &options->io, &matched));
  if (matched) {
    return KILN_OK;
  }
  if (strcmp(flag, "--input-shape") == 0) {
    options->given.input_shape = true;
    return kiln_cli_push_file(flag, value, &options->num_input_shapes, options->input_shapes);
  }
  if (strcmp(flag, "--batch") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 1, &number));
    options->load.batch = (int)number;
    options->given.batch = true;
    return KILN_OK;
  }
  if (strcmp(flag, "--image-size") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 1, &number));
    options->load.image_size = (int)number;
    options->given.image_size = true;
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
    options->opt_level_given = true;
    return KILN_OK;
  }
  if (strcmp(flag, "--max-constant-bytes") == 0) {
    return kiln_cli_parse_int(flag, value, 1, &options->load.max_constant_bytes);
  }
  if (strcmp(flag, "--seed") == 0) {
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 0, &number));
    options->load.seed = (uint64_t)number;
    options->given.seed = true;
    return KILN_OK;
  }
  return kiln_cli_usage("unknown option", flag);
}

static kiln_status_t kiln_cli_parse_model_options(int argc, char **argv,
                                                  kiln_cli_model_options_t *options) {
  memset(options, 0, sizeof(*options));
  options->load = kiln_model_options_default();
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
  return kiln_cli_check_model_flags(options->model, &options->given);
}

/* Loads the model; with `bind`, a workload's weights become constants. */
static kiln_status_t kiln_cli_load(const kiln_cli_model_options_t *options, int bind,
                                   kiln_model_t **out_model) {
  kiln_model_options_t load = options->load;
  load.num_input_shapes = options->num_input_shapes;
  load.input_shapes = options->input_shapes;
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(kiln_model_load(kiln_allocator_system(), options->model, &load, &model));
  kiln_status_t status = bind ? kiln_model_bind_params(model) : KILN_OK;
  if (status != KILN_OK) {
    kiln_model_destroy(model);
    return status;
  }
  *out_model = model;
  return KILN_OK;
}

/* Prints the model after the pass `after` names (with the pass manager's
 * header line); the first failure to print is kept. */
typedef struct kiln_cli_printer_t {
  const char *after;
  int printed;
  kiln_status_t error;
} kiln_cli_printer_t;

static void kiln_cli_print_after(void *user, const char *pass_name, const kiln_model_t *model,
                                 bool failed, double seconds) {
  (void)seconds;
  kiln_cli_printer_t *printer = user;
  if (failed || printer->error || strcmp(pass_name, printer->after) != 0) {
    return;
  }
  char *text = NULL;
  printer->error = kiln_model_print(model, false, kiln_allocator_system(), &text);
  if (printer->error) {
    printer->error = kiln_status_annotate(printer->error, "IR printer: after %s", pass_name);
    return;
  }
  printf("// after %s\n%s", pass_name, text);
  kiln_allocator_free(kiln_allocator_system(), text);
  printer->printed++;
}

/* Runs the default pass pipeline on the model (weights bound) and prints
 * the module after pass `options->after`. */
static kiln_status_t kiln_cli_show_after(const kiln_cli_model_options_t *options) {
  int from_level = 0;
  KILN_RETURN_IF_ERROR(kiln_model_pass_opt_level(options->after, &from_level));
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_load(options, 1, &model));
  kiln_cli_printer_t printer = {.after = options->after};
  kiln_model_optimize_options_t optimize = kiln_model_optimize_options_default();
  optimize.opt_level = (int)options->opt_level;
  optimize.after_pass = kiln_cli_print_after;
  optimize.user = &printer;
  kiln_status_t status = kiln_model_optimize(model, &optimize);
  if (!status && printer.error == KILN_OK && printer.printed == 0) {
    status = KILN_STATUS(FAILED_PRECONDITION,
                         "pass %s did not run at opt_level %d (it runs from opt_level %d)",
                         options->after, (int)options->opt_level, from_level);
  }
  if (status)
    kiln_status_free(printer.error);
  else
    status = printer.error;
  kiln_model_destroy(model);
  return status;
}

kiln_status_t kiln_cli_show(int argc, char **argv) {
  kiln_cli_model_options_t options;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_model_options(argc, argv, &options));
  if (options.io.num_inputs || options.io.num_outputs || options.io.num_expects ||
      options.io.print_top || options.random_input) {
    return kiln_cli_usage(
        "show runs nothing: it takes no --input, --output, --expect, --print-top or --random-input",
        NULL);
  }
  if (options.opt_level_given && !options.after)
    return kiln_cli_usage("--opt-level is the pipeline's for --after (show alone prints the model "
                          "as imported); it takes no",
                          "--opt-level");
  if (options.metadata && options.after)
    return kiln_cli_usage("--metadata prints the model as imported, not with", "--after");
  if (options.after)
    return kiln_cli_show_after(&options);
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_load(&options, 0, &model));
  char *text = NULL;
  kiln_status_t status =
      kiln_model_print(model, options.metadata != 0, kiln_allocator_system(), &text);
  if (status == KILN_OK)
    fputs(text, stdout);
  kiln_allocator_free(kiln_allocator_system(), text);
  kiln_model_destroy(model);
  return status;
}

/* ---- interp ---- */

/* Uniform values in [-1, 1) from a fixed generator (float32 inputs only). */
static kiln_status_t kiln_cli_random_tensor(const kiln_model_input_info_t *info, uint64_t seed,
                                            kiln_tensor_t **out_tensor) {
  if (!info->is_tensor || info->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(INVALID_ARGUMENT, "--random-input makes float32 tensors; %%%s is not one",
                       info->name);
  }
  KILN_RETURN_IF_ERROR(kiln_tensor_create(kiln_allocator_system(), info->dtype, info->ndim,
                                          info->shape, out_tensor));
  float *data = kiln_tensor_data(*out_tensor);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < kiln_tensor_element_count(*out_tensor); i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    data[i] = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
  return KILN_OK;
}

/* The inputs: --random-input's, or the --input files'. */
static kiln_status_t kiln_cli_read_inputs(const kiln_cli_model_options_t *options,
                                          const kiln_model_t *model, kiln_cli_inputs_t *inputs) {
  kiln_cli_signature_t signature;
  KILN_RETURN_IF_ERROR(kiln_cli_signature_from_model(model, &signature));
  if (!options->random_input) {
    return kiln_cli_inputs_read(options->model, &signature, &options->io, inputs);
  }
  if (options->io.num_inputs) {
    return kiln_cli_usage("give either --input files or --random-input", NULL);
  }
  memset(inputs, 0, sizeof(*inputs));
  for (int i = 0; i < signature.count; i++) {
    kiln_model_input_info_t info;
    KILN_RETURN_IF_ERROR(kiln_model_input_info(model, i, &info));
    KILN_RETURN_IF_ERROR(kiln_cli_random_tensor(&info, (uint64_t)i, &inputs->tensors[i]));
  }
  return KILN_OK;
}

static kiln_status_t kiln_cli_interp_run(const kiln_cli_model_options_t *options,
                                         kiln_model_t *model, kiln_cli_inputs_t *inputs) {
  KILN_RETURN_IF_ERROR(kiln_cli_read_inputs(options, model, inputs));
  int num_outputs = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_RETURN_IF_ERROR(kiln_model_interpret(model, kiln_model_num_inputs(model), inputs->tensors,
                                            kiln_allocator_system(), &num_outputs, &outputs));
  kiln_status_t status = kiln_cli_report_outputs(&options->io, num_outputs, outputs);
  for (int i = 0; i < num_outputs; i++)
    kiln_tensor_release(outputs[i]);
  kiln_allocator_free(kiln_allocator_system(), outputs);
  return status;
}

kiln_status_t kiln_cli_interp(int argc, char **argv) {
  kiln_cli_model_options_t options;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_model_options(argc, argv, &options));
  const char *printing = options.after             ? "--after"
                         : options.metadata        ? "--metadata"
                         : options.opt_level_given ? "--opt-level"
                                                   : NULL;
  if (printing) {
    return kiln_cli_usage("interp runs the model as imported (no passes; kiln show prints); it "
                          "takes no",
                          printing);
  }
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(kiln_cli_load(&options, 1, &model));
  kiln_cli_inputs_t inputs = {0};
  kiln_status_t status = kiln_cli_interp_run(&options, model, &inputs);
  kiln_cli_inputs_release(&inputs);
  kiln_model_destroy(model);
  return status;
}
