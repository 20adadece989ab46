/*
 * The kiln command-line tool.
 *
 * One table of subcommands (name, usage, summary, function); main looks the
 * first argument up in it. A command returns a status: an error is printed to
 * stderr as "kiln <command>: <message>" with exit code 1; a usage mistake
 * prints the command's usage with exit code 2. Nothing here aborts.
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kiln/compiler.h"
#include "kiln/npy.h"
#include "kiln/tensor.h"
#include "kiln/version.h"

/* Set by a command that wants its usage printed with exit code 2. */
static int kiln_cli_usage_error;

kiln_status_t kiln_cli_usage(const char *message, const char *argument) {
  kiln_cli_usage_error = 1;
  return KILN_STATUS(INVALID_ARGUMENT, "%s%s%s%s", message, argument ? " '" : "",
                     argument ? argument : "", argument ? "'" : "");
}

/* Text from a model or the command line goes to the terminal with its
 * control characters (an escape sequence, a newline in a node name) as
 * \xNN, so it cannot move the cursor, recolor or forge lines; a line
 * break of kiln's own messages (several errors, one per line) is kept. */
void kiln_cli_print_escaped(FILE *stream, const char *text) {
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
    if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f) {
      fprintf(stream, "\\x%02x", *c);
    } else {
      fputc(*c, stream);
    }
  }
}

/* ---- tensor summaries ---- */

void kiln_cli_print_summary(const char *label, const kiln_tensor_t *tensor) {
  char shape[256];
  kiln_shape_format(kiln_tensor_ndim(tensor), kiln_tensor_shape(tensor), shape, sizeof(shape));
  int64_t count = kiln_tensor_element_count(tensor);
  printf("%s: %s %s, %zu bytes", label, kiln_dtype_name(kiln_tensor_dtype(tensor)), shape,
         kiln_tensor_byte_size(tensor));
  if (count > 0) {
    double min = INFINITY, max = -INFINITY, sum = 0;
    for (int64_t i = 0; i < count; ++i) {
      double value = kiln_tensor_element_as_double(tensor, i);
      min = value < min ? value : min;
      max = value > max ? value : max;
      sum += value;
    }
    printf(", min %.6g, max %.6g, mean %.6g", min, max, sum / (double)count);
  }
  printf("\n");
}

/* ---- commands ---- */

static kiln_status_t kiln_cli_version(int argc, char **argv) {
  (void)argv;
  if (argc > 1) {
    return kiln_cli_usage("unexpected argument", argv[1]);
  }
  printf("kiln %s\n", kiln_version_string());
  printf("built with %s, DLPack %d, jansson %s\n",
#ifdef __VERSION__
         "cc " __VERSION__,
#else
         "an unknown compiler",
#endif
         DLPACK_VERSION, JANSSON_VERSION);
  const char *llvm = kiln_compiler_llvm_version();
  if (llvm) {
    printf("LLVM %s (the llvm targets; default target %s)\n", llvm, kiln_compiler_default_target());
  } else {
    printf("without LLVM (the C backend alone; default target %s)\n",
           kiln_compiler_default_target());
  }
  return KILN_OK;
}

static kiln_status_t kiln_cli_npy_info(int argc, char **argv) {
  if (argc < 2) {
    return kiln_cli_usage("expected at least one .npy file", NULL);
  }
  kiln_allocator_t allocator = kiln_allocator_system();
  for (int i = 1; i < argc; ++i) {
    kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_npy_read_file(allocator, argv[i], &tensor));
    kiln_cli_print_summary(argv[i], tensor);
    kiln_tensor_release(tensor);
  }
  return KILN_OK;
}

/* Writes a tensor of every dtype to .npy, reads it back and compares bytes. */
static kiln_status_t kiln_cli_demo_round_trip(kiln_allocator_t allocator, const char *dir,
                                              kiln_dtype_t dtype) {
  const int64_t shape[] = {2, 3, 4};
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create(allocator, dtype, 3, shape, &tensor));
  unsigned char *bytes = kiln_tensor_data(tensor);
  for (size_t i = 0; i < kiln_tensor_byte_size(tensor); ++i) {
    bytes[i] = (unsigned char)(dtype == KILN_DTYPE_BOOL ? i % 2 : i * 7 % 61);
  }
  char *path = NULL;
  char name[64];
  snprintf(name, sizeof(name), "demo_%s.npy", kiln_dtype_name(dtype));
  kiln_status_t status = kiln_cli_path_join(dir, name, &path);
  if (!status) {
    status = kiln_npy_write_file(allocator, tensor, path);
  }
  kiln_tensor_t *again = NULL;
  if (!status) {
    status = kiln_npy_read_file(allocator, path, &again);
  }
  if (!status && (kiln_tensor_byte_size(again) != kiln_tensor_byte_size(tensor) ||
                  memcmp(kiln_tensor_data(again), bytes, kiln_tensor_byte_size(tensor)) != 0)) {
    status = KILN_STATUS(INTERNAL, "%s: read back different bytes", path);
  }
  if (!status) {
    printf("  %-9s %s: wrote and read back %zu bytes\n", kiln_dtype_name(dtype), name,
           kiln_tensor_byte_size(tensor));
    remove(path);
  }
  kiln_tensor_release(again);
  kiln_tensor_release(tensor);
  free(path);
  return status;
}

/* Imports each shared model, runs it on the reference interpreter and checks
 * the output against the expected one (kiln interp ... --expect ...). */
static kiln_status_t kiln_cli_demo_models(const char *dir) {
  static const char *const names[] = {"mlp", "squeezenet1_1", "mobilenet_v2", "resnet18"};
  if (!kiln_cli_is_directory(dir)) {
    printf("shared models: %s not found; skipping\n", dir);
    return KILN_OK;
  }
  printf("shared models in %s, imported and run on the reference interpreter:\n", dir);
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    char *paths[3] = {NULL, NULL, NULL};
    static const char *const suffixes[] = {".onnx", ".input.npy", ".output.npy"};
    kiln_status_t status = KILN_OK;
    for (int k = 0; k < 3 && !status; ++k) {
      char file[128];
      snprintf(file, sizeof(file), "%s%s", names[i], suffixes[k]);
      status = kiln_cli_path_join(dir, file, &paths[k]);
    }
    if (!status) {
      printf("%s:\n", names[i]);
      char interp[] = "interp", input[] = "--input", expect[] = "--expect";
      char *argv[] = {interp, paths[0], input, paths[1], expect, paths[2], NULL};
      status = kiln_cli_interp(6, argv);
    }
    for (int k = 0; k < 3; ++k) {
      free(paths[k]);
    }
    KILN_RETURN_IF_ERROR(status);
  }
  return KILN_OK;
}

static kiln_status_t kiln_cli_demo(int argc, char **argv) {
  const char *models_dir = argc > 1 ? argv[1] : "../shared/models";
  if (argc > 2) {
    return kiln_cli_usage("unexpected argument", argv[2]);
  }
  printf("kiln %s: what is built so far: the foundation (tensors, .npy I/O), the graph\n"
         "IR, the operator registry, the ONNX importer and the reference interpreter.\n"
         "The compiler comes next.\n\n",
         kiln_version_string());
  kiln_allocator_t allocator = kiln_allocator_system();
  char temp[] = "/tmp/kiln-demo-XXXXXX";
  if (!mkdtemp(temp)) {
    return KILN_STATUS(IO_ERROR, "cannot make a temporary folder in /tmp");
  }
  printf(".npy round trip of a (2, 3, 4) tensor of every dtype NumPy has:\n");
  kiln_status_t status = KILN_OK;
  for (int dtype = 0; dtype < KILN_DTYPE_COUNT_ && !status; ++dtype) {
    if (kiln_dtype_numpy_descr((kiln_dtype_t)dtype)) {
      status = kiln_cli_demo_round_trip(allocator, temp, (kiln_dtype_t)dtype);
    }
  }
  rmdir(temp);
  KILN_RETURN_IF_ERROR(status);
  printf("\n");
  return kiln_cli_demo_models(models_dir);
}

static kiln_status_t kiln_cli_help(int argc, char **argv);

static const kiln_cli_command_t kiln_cli_commands[] = {
    {"help", "kiln help [COMMAND]", "show this help, or one command's (also: kiln COMMAND --help)",
     kiln_cli_help},
    {"version", "kiln version", "print the version and what kiln was built with", kiln_cli_version},
    {"demo", "kiln demo [MODELS_DIR]",
     "show what is built: .npy round trips, and the shared models run and checked", kiln_cli_demo},
    {"npy-info", "kiln npy-info FILE.npy...", "print dtype, shape and value range of .npy files",
     kiln_cli_npy_info},
    {"show",
     "kiln show MODEL [--input-shape NAME=1x3x224x224] [--batch N] [--image-size N] [--seed N] "
     "[--metadata] [--after PASS [--opt-level N]] [--max-constant-bytes N]",
     "print a model's typed IR (MODEL: FILE.onnx or a built-in workload)", kiln_cli_show},
    {"interp",
     "kiln interp MODEL (--input [NAME=]X.npy|X.npz... | --random-input) [--output Y.npy...] "
     "[--expect Y.npy...] [--print-top K] [--input-shape NAME=DIMS...] [--batch N] "
     "[--image-size N] [--seed N] [--max-constant-bytes N]",
     "run a model on the reference interpreter", kiln_cli_interp},
    {"compile",
     "kiln compile MODEL -o DIR|FILE.so [--target llvm|c|\"llvm -mcpu=...\"|"
     "\"llvm -mtriple=aarch64-linux-gnu\"] [--opt-level 0..3] [--disabled-pass NAME...] "
     "[--dump ir|ll|asm|c...] [--input-shape NAME=DIMS...] [--batch N] [--image-size N] "
     "[--max-constant-bytes N] [--tuning RECORDS] [--executor graph|vm|auto]",
     "compile a model into DIR/graph.json (vm.json for the VM), lib.so and params.bin, or into "
     "one library FILE.so",
     kiln_cli_compile},
    {"run",
     "kiln run DIR|FILE.so --input [NAME=]X.npy|X.npz... [--output Y.npy...] [--expect Y.npy...] "
     "[--print-top K] [--threads N] [--profile] [--debug-dir D] [--disassemble]",
     "run a compiled model with the executor it was compiled for (graph or VM)", kiln_cli_run},
    {"bench",
     "kiln bench MODEL|DIR|FILE.so [--input [NAME=]X.npy|X.npz...] [--threads N] "
     "[--runs N | --duration S] [--check] [--target T] [--opt-level N] [--disabled-pass NAME...] "
     "[--input-shape NAME=DIMS...] [--batch N] [--image-size N] [--max-constant-bytes N] "
     "[--tuning RECORDS [--compare-untuned [--rounds N]]] [--executor graph|vm|auto]",
     "time a model compiled in memory, or a compiled model: compile time, median, p50, p90, p99 "
     "and min latency (--check: top-5 and the difference from the interpreter; "
     "--compare-untuned: the compile with the records against the one without, in alternating "
     "rounds of --runs runs in one process, and the median of the rounds' ratios)",
     kiln_cli_bench},
    {"graph",
     "kiln graph MODEL -o FILE.dot [--opt-level N] [--disabled-pass NAME...] "
     "[--input-shape NAME=DIMS...] [--batch N] [--image-size N] [--max-constant-bytes N]",
     "write the fused graph (after the passes) for graphviz", kiln_cli_graph},
    {"conformance",
     "kiln conformance [CASES_DIR] [--report FILE.md] [--pass-list FILE] [--write-pass-list FILE] "
     "[--filter TEXT] [--jobs N] [--timeout SECONDS] [--target T [--executor graph|vm]] "
     "[--verbose]",
     "run ONNX's backend node tests on the importer and interpreter (--target: compiled)",
     kiln_cli_conformance},
    {"tune",
     "kiln tune MODEL -o RECORDS [--minutes M] [--trials N] [--threads N] [--timeout S] "
     "[--cache auto|memory|shared|private] "
     "[--target T] [--opt-level N] [--input-shape NAME=DIMS...] [--batch N] [--image-size N]",
     "measure schedule configurations of the model's kernels; append the records (JSON lines) "
     "that compile --tuning uses",
     kiln_cli_tune},
};

static const size_t kiln_cli_command_count =
    sizeof(kiln_cli_commands) / sizeof(kiln_cli_commands[0]);

static void kiln_cli_print_help(FILE *stream) {
  fprintf(stream, "kiln %s: a deep-learning compiler and runtime\n\n", kiln_version_string());
  fprintf(stream, "usage: kiln COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < kiln_cli_command_count; ++i) {
    fprintf(stream, "  %-28s %s\n", kiln_cli_commands[i].usage, kiln_cli_commands[i].summary);
  }
  fprintf(stream, "\nenvironment: KILN_LOG_LEVEL=error|warn|info|debug|trace (default warn)\n");
}

static const kiln_cli_command_t *kiln_cli_find(const char *name) {
  for (size_t i = 0; i < kiln_cli_command_count; ++i) {
    if (strcmp(kiln_cli_commands[i].name, name) == 0) {
      return &kiln_cli_commands[i];
    }
  }
  return NULL;
}

/* One command's help on stdout: its usage and what it does. */
static void kiln_cli_print_command_help(const kiln_cli_command_t *command) {
  printf("usage: %s\n\n%s\n\nThe options and their defaults: docs/cli.md.\n", command->usage,
         command->summary);
}

/* `kiln help` (every command) or `kiln help COMMAND`. */
static kiln_status_t kiln_cli_help(int argc, char **argv) {
  if (argc > 2) {
    return kiln_cli_usage("unexpected argument", argv[2]);
  }
  if (argc == 2) {
    const kiln_cli_command_t *command = kiln_cli_find(argv[1]);
    if (!command) {
      return kiln_cli_usage("unknown command", argv[1]);
    }
    kiln_cli_print_command_help(command);
    return KILN_OK;
  }
  kiln_cli_print_help(stdout);
  return KILN_OK;
}

/* Whether a command's arguments ask for its help (--help or -h). */
static bool kiln_cli_asks_help(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      return true;
    }
  }
  return false;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    kiln_cli_print_help(stderr);
    return KILN_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    name = "help";
  } else if (strcmp(name, "--version") == 0) {
    name = "version";
  }
  const kiln_cli_command_t *command = kiln_cli_find(name);
  if (!command) {
    fprintf(stderr, "kiln: unknown command '");
    kiln_cli_print_escaped(stderr, name);
    fprintf(stderr, "'; run 'kiln --help' for the list\n");
    return KILN_EXIT_USAGE;
  }
  if (kiln_cli_asks_help(argc - 1, argv + 1)) {
    kiln_cli_print_command_help(command);
    return 0;
  }
  kiln_status_t status = command->run(argc - 1, argv + 1);
  if (!status) {
    return 0;
  }
  fprintf(stderr, "kiln %s: ", command->name);
  kiln_cli_print_escaped(stderr, kiln_status_message(status));
  fputc('\n', stderr);
  kiln_cli_log_error_origin(__FILE__, __LINE__, status);
  kiln_status_free(status);
  if (kiln_cli_usage_error) {
    fprintf(stderr, "usage: %s\n", command->usage);
    return KILN_EXIT_USAGE;
  }
  return 1;
}
