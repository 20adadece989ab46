/*
 * What the kiln tool's commands that run a model share (docs/cli.md,
 * "Inputs and outputs"): the flags that name input and output files, the
 * reading of the inputs, and the report of the outputs, so `interp`, `run`
 * and `bench` read `--input` the same way and `interp` and `run` check
 * `--expect` and print `--print-top` with one definition each.
 *
 * An --input value is one of:
 *   NAME=FILE.npy  the input NAME (an input name holds no '/' and comes
 *                  before the first '='; a path with '=' in a folder name
 *                  stays positional);
 *   FILE.npz       each member (NumPy names it by its array's name) feeds
 *                  the input of that name;
 *   FILE.npy       positional: the next input not given by name, in the
 *                  model's order.
 * Named values are placed first, whatever their order on the command line;
 * then the positional files fill the inputs left, in order. An unknown name,
 * an input given twice, a missing input, or a positional file with no input
 * left is an error listing the model's inputs with their types.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kiln/model.h"
#include "kiln/npy.h"

/* ---- flags ---- */

/* The most classes --print-top prints a row. */
#define KILN_CLI_MAX_TOP      1000
#define KILN_CLI_MAX_TOP_TEXT "1000"

static kiln_status_t push_file(const char *flag, const char *value, int *count,
                               const char **files) {
  if (!value) {
    return kiln_cli_usage("missing FILE.npy after", flag);
  }
  if (*count == KILN_CLI_MAX_FILES) {
    return kiln_cli_usage("too many files for", flag);
  }
  files[(*count)++] = value;
  return KILN_OK;
}

kiln_status_t kiln_cli_parse_io_option(const char *flag, const char *value, kiln_cli_io_t *io,
                                       bool *out_matched) {
  *out_matched = true;
  if (strcmp(flag, "--input") == 0) {
    return push_file(flag, value, &io->num_inputs, io->inputs);
  }
  if (strcmp(flag, "--output") == 0) {
    return push_file(flag, value, &io->num_outputs, io->outputs);
  }
  if (strcmp(flag, "--expect") == 0) {
    return push_file(flag, value, &io->num_expects, io->expects);
  }
  if (strcmp(flag, "--print-top") == 0) {
    int64_t k = 0;
    KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, value, 1, &k));
    if (k > KILN_CLI_MAX_TOP) {
      char message[64];
      snprintf(message, sizeof(message), "expected at most %d after", KILN_CLI_MAX_TOP);
      return kiln_cli_usage(message, flag);
    }
    io->print_top = (int)k;
    return KILN_OK;
  }
  *out_matched = false;
  return KILN_OK;
}

/* ---- what a model takes ---- */

kiln_status_t kiln_cli_signature_from_model(const kiln_model_t *model,
                                            kiln_cli_signature_t *out_signature) {
  memset(out_signature, 0, sizeof(*out_signature));
  int count = kiln_model_num_inputs(model);
  if (count > KILN_CLI_MAX_FILES) {
    return KILN_STATUS(UNIMPLEMENTED, "models with more than %d inputs", KILN_CLI_MAX_FILES);
  }
  for (int i = 0; i < count; ++i) {
    kiln_model_input_info_t info;
    KILN_RETURN_IF_ERROR(kiln_model_input_info(model, i, &info));
    out_signature->names[i] = info.name;
    snprintf(out_signature->types[i], sizeof(out_signature->types[i]), "%s", info.type_text);
  }
  out_signature->count = count;
  return KILN_OK;
}

kiln_status_t kiln_cli_signature_from_executor(const kiln_graph_executor_t *executor,
                                               kiln_cli_signature_t *out_signature) {
  memset(out_signature, 0, sizeof(*out_signature));
  int count = kiln_graph_executor_num_inputs(executor);
  if (count > KILN_CLI_MAX_FILES) {
    return KILN_STATUS(UNIMPLEMENTED, "models with more than %d inputs", KILN_CLI_MAX_FILES);
  }
  for (int i = 0; i < count; ++i) {
    kiln_graph_executor_tensor_info_t info;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_input_info(executor, i, &info));
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(info.ndim, info.shape, shape, sizeof(shape));
    out_signature->names[i] = info.name;
    snprintf(out_signature->types[i], sizeof(out_signature->types[i]), "Tensor[%.200s, %s]", shape,
             kiln_dtype_name(info.dtype));
  }
  out_signature->count = count;
  return KILN_OK;
}

/* "%a: Tensor[...], %b: ..." */
static void list_inputs(const kiln_cli_signature_t *signature, char *list, size_t capacity) {
  size_t used = 0;
  list[0] = '\0';
  for (int i = 0; i < signature->count && used < capacity; ++i) {
    int n = snprintf(list + used, capacity - used, "%s%%%s: %s", i ? ", " : "", signature->names[i],
                     signature->types[i]);
    used += n > 0 ? (size_t)n : 0;
  }
}

#define KILN_CLI_LIST_CAPACITY (KILN_CLI_MAX_FILES * (KILN_MODEL_TYPE_TEXT_CAPACITY + 64))

/* An error about `model`'s inputs, with their list and (`given` >= 0) how
 * many --input values were given. */
static kiln_status_t inputs_error(const char *model, const kiln_cli_signature_t *signature,
                                  int given, const char *what) {
  char *list = malloc(KILN_CLI_LIST_CAPACITY);
  if (!list) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory listing the inputs");
  }
  list_inputs(signature, list, KILN_CLI_LIST_CAPACITY);
  char count[64] = "";
  if (given >= 0) {
    snprintf(count, sizeof(count), " but %d were given with --input", given);
  }
  kiln_status_t status = KILN_STATUS(INVALID_ARGUMENT, "%s takes %d input(s) (%s)%s; %s", model,
                                     signature->count, list, count, what);
  free(list);
  return status;
}

/* ---- reading inputs ---- */

static int signature_find(const kiln_cli_signature_t *signature, const char *name, size_t length) {
  for (int i = 0; i < signature->count; ++i) {
    if (strlen(signature->names[i]) == length && strncmp(signature->names[i], name, length) == 0) {
      return i;
    }
  }
  return -1;
}

static bool is_npz(const char *path) {
  size_t length = strlen(path);
  return length > 4 && strcmp(path + length - 4, ".npz") == 0;
}

/* The length of the NAME in "NAME=FILE", or 0 when the value is a path. */
static size_t name_length(const char *value) {
  const char *equals = strchr(value, '=');
  if (!equals || equals == value || memchr(value, '/', (size_t)(equals - value))) {
    return 0;
  }
  return (size_t)(equals - value);
}

/* Places `tensor` (a reference handed over) as input `index`, from `source`. */
static kiln_status_t place(const char *model, const kiln_cli_signature_t *signature, int index,
                           kiln_tensor_t *tensor, const char *source, kiln_cli_inputs_t *inputs) {
  if (inputs->tensors[index]) {
    kiln_tensor_release(tensor);
    char what[512];
    snprintf(what, sizeof(what), "input %%%s is given twice (%s and %s)", signature->names[index],
             inputs->sources[index], source);
    return inputs_error(model, signature, -1, what);
  }
  inputs->tensors[index] = tensor;
  inputs->sources[index] = source;
  return KILN_OK;
}

/* "name=FILE.npy": the named input. */
static kiln_status_t read_named(const char *model, const kiln_cli_signature_t *signature,
                                const char *value, size_t length, kiln_cli_inputs_t *inputs) {
  int index = signature_find(signature, value, length);
  if (index < 0) {
    char what[512];
    snprintf(what, sizeof(what), "there is no input named '%.*s' (--input %.*s=...)", (int)length,
             value, (int)length, value);
    return inputs_error(model, signature, -1, what);
  }
  const char *path = value + length + 1;
  if (is_npz(path)) {
    return kiln_cli_usage("a .npz names its inputs by its members; give it without NAME= in",
                          value);
  }
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_npy_read_file(kiln_allocator_system(), path, &tensor));
  return place(model, signature, index, tensor, path, inputs);
}

/* "FILE.npz": each member feeds the input of its name. */
static kiln_status_t read_npz(const char *model, const kiln_cli_signature_t *signature,
                              const char *path, kiln_cli_inputs_t *inputs) {
  kiln_npz_t *npz = NULL;
  KILN_RETURN_IF_ERROR(kiln_npz_read_file(kiln_allocator_system(), path, &npz));
  kiln_status_t status = KILN_OK;
  for (int m = 0; m < kiln_npz_count(npz) && !status; ++m) {
    const char *name = kiln_npz_name(npz, m);
    int index = signature_find(signature, name, strlen(name));
    if (index < 0) {
      char what[512];
      snprintf(what, sizeof(what), "%s: member '%.200s' names no input", path, name);
      status = inputs_error(model, signature, -1, what);
    } else {
      kiln_tensor_retain(kiln_npz_tensor(npz, m));
      status = place(model, signature, index, kiln_npz_tensor(npz, m), path, inputs);
    }
  }
  kiln_npz_destroy(npz);
  return status;
}

/* The positional files, into the inputs not given by name, in order. */
static kiln_status_t read_positional(const char *model, const kiln_cli_signature_t *signature,
                                     const kiln_cli_io_t *io, kiln_cli_inputs_t *inputs) {
  int next = 0;
  for (int f = 0; f < io->num_inputs; ++f) {
    const char *path = io->inputs[f];
    if (name_length(path) > 0 || is_npz(path)) {
      continue;
    }
    while (next < signature->count && inputs->tensors[next]) {
      ++next;
    }
    if (next == signature->count) {
      char what[512];
      snprintf(what, sizeof(what), "no input is left for %s", path);
      return inputs_error(model, signature, io->num_inputs, what);
    }
    kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_npy_read_file(kiln_allocator_system(), path, &tensor));
    KILN_RETURN_IF_ERROR(place(model, signature, next, tensor, path, inputs));
  }
  return KILN_OK;
}

/* Every input given, or an error naming the first missing one. */
static kiln_status_t check_complete(const char *model, const kiln_cli_signature_t *signature,
                                    const kiln_cli_io_t *io, const kiln_cli_inputs_t *inputs) {
  for (int i = 0; i < signature->count; ++i) {
    if (!inputs->tensors[i]) {
      char what[512];
      snprintf(what, sizeof(what), "input %%%s is missing", signature->names[i]);
      return inputs_error(model, signature, io->num_inputs, what);
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_cli_inputs_read(const char *model, const kiln_cli_signature_t *signature,
                                   const kiln_cli_io_t *io, kiln_cli_inputs_t *inputs) {
  memset(inputs, 0, sizeof(*inputs));
  kiln_status_t status = KILN_OK;
  for (int f = 0; f < io->num_inputs && !status; ++f) {
    size_t length = name_length(io->inputs[f]);
    if (length > 0) {
      status = read_named(model, signature, io->inputs[f], length, inputs);
    } else if (is_npz(io->inputs[f])) {
      status = read_npz(model, signature, io->inputs[f], inputs);
    }
  }
  if (!status) {
    status = read_positional(model, signature, io, inputs);
  }
  if (!status) {
    status = check_complete(model, signature, io, inputs);
  }
  if (status) {
    kiln_cli_inputs_release(inputs);
  }
  return status;
}

void kiln_cli_inputs_release(kiln_cli_inputs_t *inputs) {
  for (int i = 0; i < KILN_CLI_MAX_FILES; ++i) {
    kiln_tensor_release(inputs->tensors[i]);
    inputs->tensors[i] = NULL;
  }
}

/* ---- reporting outputs ---- */

/* Whole-model tolerances (ONNX's model zoo checks): rtol 1e-3, atol 1e-4. */
static kiln_status_t check_expected(const char *path, int index, const kiln_tensor_t *actual) {
  kiln_tensor_t *expected = NULL;
  KILN_RETURN_IF_ERROR(kiln_npy_read_file(kiln_allocator_system(), path, &expected));
  kiln_status_t status =
      kiln_tensor_allclose(expected, actual, KILN_CLI_MODEL_RTOL, KILN_CLI_MODEL_ATOL);
  kiln_tensor_release(expected);
  KILN_RETURN_IF_ERROR_ANNOTATE(status, "output %d differs from %s", index, path);
  printf("output %d matches %s (rtol %g, atol %g)\n", index, path, KILN_CLI_MODEL_RTOL,
         KILN_CLI_MODEL_ATOL);
  return KILN_OK;
}

/* The index of the largest value of [begin, end) not yet in `taken`. */
static int64_t next_best(const kiln_tensor_t *out, int64_t begin, int64_t end, const int64_t *taken,
                         int num_taken) {
  int64_t best = -1;
  for (int64_t e = begin; e < end; ++e) {
    bool seen = false;
    for (int j = 0; j < num_taken && !seen; ++j) {
      seen = taken[j] == e;
    }
    if (!seen && (best < 0 || kiln_tensor_element_as_double(out, e) >
                                  kiln_tensor_element_as_double(out, best))) {
      best = e;
    }
  }
  return best;
}

void kiln_cli_print_top(const kiln_tensor_t *out, int k) {
  int64_t count = kiln_tensor_element_count(out);
  int64_t rows = kiln_tensor_ndim(out) >= 2 ? kiln_tensor_shape(out)[0] : 1;
  int64_t classes = rows > 0 ? count / rows : 0;
  int64_t taken[KILN_CLI_MAX_TOP];
  k = k > KILN_CLI_MAX_TOP ? KILN_CLI_MAX_TOP : k;
  for (int64_t row = 0; row < rows && classes > 0; ++row) {
    printf("  top-%d classes%s", k, rows > 1 ? "" : ":");
    if (rows > 1) {
      printf(" of row %" PRId64 ":", row);
    }
    int n = 0;
    for (; n < k && n < classes; ++n) {
      taken[n] = next_best(out, row * classes, (row + 1) * classes, taken, n);
      printf(" %" PRId64 " (%.4g)", taken[n] - row * classes,
             kiln_tensor_element_as_double(out, taken[n]));
    }
    printf("\n");
  }
}

static kiln_status_t check_output_counts(const kiln_cli_io_t *io, int num_outputs) {
  if (io->num_expects > num_outputs || io->num_outputs > num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "the model has %d output(s) but %d --output and %d --expect files were "
                       "given",
                       num_outputs, io->num_outputs, io->num_expects);
  }
  return KILN_OK;
}

kiln_status_t kiln_cli_report_outputs(const kiln_cli_io_t *io, int num_outputs,
                                      kiln_tensor_t *const *outputs) {
  KILN_RETURN_IF_ERROR(check_output_counts(io, num_outputs));
  for (int i = 0; i < num_outputs; i++) {
    char label[64];
    snprintf(label, sizeof(label), "output %d", i);
    kiln_cli_print_summary(label, outputs[i]);
    if (i == 0 && io->print_top > 0) {
      kiln_cli_print_top(outputs[0], io->print_top);
    }
    if (i < io->num_outputs) {
      KILN_RETURN_IF_ERROR(
          kiln_npy_write_file(kiln_allocator_system(), outputs[i], io->outputs[i]));
    }
    if (i < io->num_expects) {
      KILN_RETURN_IF_ERROR(check_expected(io->expects[i], i, outputs[i]));
    }
  }
  return KILN_OK;
}

/* ---- options that apply ---- */

bool kiln_cli_is_onnx(const char *model) {
  size_t length = strlen(model);
  return length > 5 && strcmp(model + length - 5, ".onnx") == 0;
}

kiln_status_t kiln_cli_check_model_flags(const char *model, const kiln_cli_given_t *given) {
  if (kiln_cli_is_onnx(model)) {
    const char *flag = given->batch        ? "--batch"
                       : given->image_size ? "--image-size"
                       : given->seed       ? "--seed"
                                           : NULL;
    if (flag) {
      return kiln_cli_usage("not for an ONNX model (its shapes and weights are its own; symbolic "
                            "dims take --input-shape NAME=DIMS); built-in workloads take",
                            flag);
    }
  } else if (given->input_shape) {
    return kiln_cli_usage("--input-shape is for ONNX models; workloads take --batch and "
                          "--image-size",
                          NULL);
  }
  return KILN_OK;
}
