/*
 * What the kiln tool's command files share: the command table's entry type
 * and the usage-error helper (a usage mistake exits with code 2 and prints
 * the command's usage).
 */
#ifndef KILN_TOOLS_CLI_H_
#define KILN_TOOLS_CLI_H_

#include "kiln/status.h"
#include "kiln/tensor.h"
#include <stdio.h>

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

#endif /* KILN_TOOLS_CLI_H_ */
