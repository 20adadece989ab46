/*
 * What the kiln tool's command files share: the command table's entry type
 * and the usage-error helper (a usage mistake exits with code 2 and prints
 * the command's usage).
 */
#ifndef KILN_TOOLS_CLI_H_
#define KILN_TOOLS_CLI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kiln/model.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

#define KILN_EXIT_USAGE 2
/* Most files a repeatable flag takes, and most inputs a model may have. */
#define KILN_CLI_MAX_FILES 16
/* Whole-model tolerances (ONNX's model zoo checks): --expect, bench --check. */
#define KILN_CLI_MODEL_RTOL 1e-3
#define KILN_CLI_MODEL_ATOL 1e-4

typedef kiln_status_t (*kiln_cli_command_fn)(int argc, char **argv);

typedef struct kiln_cli_command_t {
  const char *name;
  const char *usage;
  const char *summary;
  kiln_cli_command_fn run;
} kiln_cli_command_t;

/* Marks the error as a usage mistake: "message 'argument'". */
kiln_status_t kiln_cli_usage(const char *message, const char *argument);
/* Writes `text` with its control characters (but newlines and tabs) as \xNN. */
void kiln_cli_print_escaped(FILE *stream, const char *text);

/* Prints "label: dtype (shape), N bytes, min/max/mean" of a tensor. */
void kiln_cli_print_summary(const char *label, const kiln_tensor_t *tensor);

/* The integer after `flag` (at least `minimum`), or a usage error. */
kiln_status_t kiln_cli_parse_int(const char *flag, const char *text, int64_t minimum,
                                 int64_t *out_value);
/* kiln_cli_parse_int into an int, at most 1000000 (a count option). */
kiln_status_t kiln_cli_parse_count(const char *flag, const char *text, int64_t minimum, int *out);
/* A number above 0 and at most `highest` (fractions allowed); otherwise
 * the usage error "`expected` after FLAG". */
kiln_status_t kiln_cli_parse_positive(const char *flag, const char *text, double highest,
                                      const char *expected, double *out);
/* Whether `path` names a one-file compiled model (it ends in ".so"). */
int kiln_cli_is_library_name(const char *path);

/* ---- the tool's own helpers (cli_util.c, libc only) ---- */

int kiln_cli_is_directory(const char *path);
/* "a/b" in a new string the caller frees (b alone when it is absolute). */
kiln_status_t kiln_cli_path_join(const char *a, const char *b, char **out_path);
/* A regular file's bytes in a new NUL-terminated string the caller frees. */
kiln_status_t kiln_cli_read_file(const char *path, char **out_text, size_t *out_size);
/* Replaces `path` atomically (a character device is written through). */
kiln_status_t kiln_cli_write_file(const char *path, const char *data, size_t size);

/* Text built by appends; the first failure sticks and later appends do
 * nothing. Zero-initialized; kiln_cli_text_save writes and frees it. */
typedef struct kiln_cli_text_t {
  char *data;
  size_t length;
  size_t capacity;
  kiln_status_t status;
} kiln_cli_text_t;

void kiln_cli_text_append(kiln_cli_text_t *text, const char *format, ...) KILN_PRINTF_FORMAT(2, 3);
/* Writes the text to `path` (or returns its failure) and frees it. */
kiln_status_t kiln_cli_text_save(kiln_cli_text_t *text, const char *path);

/* With KILN_LOG_LEVEL=debug (or trace), a log line saying where `status`
 * was made, as kiln's debug log writes it. */
void kiln_cli_log_error_origin(const char *file, int line, kiln_status_t status);

/* ---- inputs and outputs of the commands that run a model (cli_io.c) ---- */

/* The file flags: --input (NAME=FILE.npy, FILE.npz or FILE.npy), --output,
 * --expect, --print-top K. */
typedef struct kiln_cli_io_t {
  int num_inputs;
  const char *inputs[KILN_CLI_MAX_FILES];
  int num_outputs;
  const char *outputs[KILN_CLI_MAX_FILES];
  int num_expects;
  const char *expects[KILN_CLI_MAX_FILES];
  int print_top; /* 0: none */
} kiln_cli_io_t;

/* Takes `flag` (and its value) when it is one of the file flags;
 * *out_matched says whether it was. */
kiln_status_t kiln_cli_parse_io_option(const char *flag, const char *value, kiln_cli_io_t *io,
                                       bool *out_matched);

/* What a model takes: its inputs' names and types, in order. */
typedef struct kiln_cli_signature_t {
  int count;
  const char *names[KILN_CLI_MAX_FILES]; /* borrowed from the model or executor */
  char types[KILN_CLI_MAX_FILES][KILN_MODEL_TYPE_TEXT_CAPACITY];
} kiln_cli_signature_t;

kiln_status_t kiln_cli_signature_from_model(const kiln_model_t *model,
                                            kiln_cli_signature_t *out_signature);
kiln_status_t kiln_cli_signature_from_executor(const kiln_graph_executor_t *executor,
                                               kiln_cli_signature_t *out_signature);

/* One tensor per input, and the file it came from. */
typedef struct kiln_cli_inputs_t {
  kiln_tensor_t *tensors[KILN_CLI_MAX_FILES];
  const char *sources[KILN_CLI_MAX_FILES];
} kiln_cli_inputs_t;

/* Reads io's --input values into one tensor per input of `signature`
 * (the rules: cli_io.c, docs/cli.md); errors name `model`. */
kiln_status_t kiln_cli_inputs_read(const char *model, const kiln_cli_signature_t *signature,
                                   const kiln_cli_io_t *io, kiln_cli_inputs_t *inputs);
void kiln_cli_inputs_release(kiln_cli_inputs_t *inputs);

/* Prints a summary of each output, the top --print-top classes of the
 * first, writes the --output files and checks the --expect files. */
kiln_status_t kiln_cli_report_outputs(const kiln_cli_io_t *io, int num_outputs,
                                      kiln_tensor_t *const *outputs);
/* The k largest values of each row (the first dim) of `out`, by index. */
void kiln_cli_print_top(const kiln_tensor_t *out, int k);

/* Which options that load a model were given. */
typedef struct kiln_cli_given_t {
  bool batch, image_size, seed, input_shape;
} kiln_cli_given_t;

bool kiln_cli_is_onnx(const char *model);
/* A usage error for an option that does not apply to `model`: --batch,
 * --image-size, --seed on an ONNX file, --input-shape on a workload. */
kiln_status_t kiln_cli_check_model_flags(const char *model, const kiln_cli_given_t *given);

/* Commands on models (cli_model.c). */
kiln_status_t kiln_cli_show(int argc, char **argv);
kiln_status_t kiln_cli_interp(int argc, char **argv);

/* The compiler commands (cli_compile.c). */
kiln_status_t kiln_cli_compile(int argc, char **argv);
kiln_status_t kiln_cli_run(int argc, char **argv);
kiln_status_t kiln_cli_bench(int argc, char **argv);
kiln_status_t kiln_cli_graph(int argc, char **argv);

/* ONNX's backend node tests through the importer and the interpreter
 * (cli_conformance.c). */
kiln_status_t kiln_cli_conformance(int argc, char **argv);
kiln_status_t kiln_cli_tune(int argc, char **argv);

#endif /* KILN_TOOLS_CLI_H_ */
