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

#include "kiln/status.h"
#include "kiln/tensor.h"

#define KILN_EXIT_USAGE 2

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
