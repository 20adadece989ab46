/*
 * The kiln tool's compiler commands (docs/cli.md):
 *   compile MODEL -o DIR   build the three artifacts into DIR (-o FILE.so:
 *                          one library that embeds the graph and params;
 *                          --dump: the graph IR, LLVM IR, assembly or C);
 *   run DIR --input X.npy  run them (or FILE.so) with the runtime alone (the graph
 *                          executor, or the VM for a model compiled for it);
 *   bench MODEL|DIR        compile in memory (or load a compiled folder),
 *                          report the compile time and the latency of runs
 *                          (median, p50, p90, p99, min);
 *   graph MODEL -o F.dot   draw the fused graph.
 * MODEL is an ONNX file or a built-in workload, as for `show` and `interp`.
 * The options of compile, bench and graph are parsed by one function that
 * records which were given (a bit each); each command, and bench for a
 * compiled folder, refuses those that do not apply to it. A compiled model
 * is opened in one place (load_compiled), so another form of it is one
 * more branch there. A mistake exits with code 2 and the usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kiln/compiler.h"
#include "kiln/model.h"
#include "kiln/npy.h"
#include "kiln/parallel.h"

/* The options of compile, bench and graph, one bit each: a command
 * refuses those that do not apply to it (or to its MODEL). */
enum {
  FLAG_OUT = 1 << 0,
  FLAG_TARGET = 1 << 1,
  FLAG_OPT_LEVEL = 1 << 2,
  FLAG_INPUT_SHAPE = 1 << 3,
  FLAG_INPUT = 1 << 4,
  FLAG_BATCH = 1 << 5,
  FLAG_MAX_CONSTANT = 1 << 6,
  FLAG_IMAGE_SIZE = 1 << 7,
  FLAG_THREADS = 1 << 8,
  FLAG_CHECK = 1 << 9,
  FLAG_RUNS = 1 << 10,
  FLAG_DURATION = 1 << 11,
  FLAG_DISABLED_PASS = 1 << 12,
  FLAG_DUMP = 1 << 13,
  FLAG_TUNING = 1 << 14,
  FLAG_EXECUTOR = 1 << 15,
  FLAG_COMPARE = 1 << 16,
  FLAG_ROUNDS = 1 << 17,
};

static const struct {
  unsigned bit;
  const char *name;
} flag_names[] = {
    {FLAG_OUT, "-o"},
    {FLAG_TARGET, "--target"},
    {FLAG_OPT_LEVEL, "--opt-level"},
    {FLAG_INPUT_SHAPE, "--input-shape"},
    {FLAG_INPUT, "--input"},
    {FLAG_BATCH, "--batch"},
    {FLAG_MAX_CONSTANT, "--max-constant-bytes"},
    {FLAG_IMAGE_SIZE, "--image-size"},
    {FLAG_THREADS, "--threads"},
    {FLAG_CHECK, "--check"},
    {FLAG_RUNS, "--runs"},
    {FLAG_DURATION, "--duration"},
    {FLAG_DISABLED_PASS, "--disabled-pass"},
    {FLAG_DUMP, "--dump"},
    {FLAG_TUNING, "--tuning"},
    {FLAG_EXECUTOR, "--executor"},
    {FLAG_COMPARE, "--compare-untuned"},
    {FLAG_ROUNDS, "--rounds"},
};

/* What the options of a compiled model's compile and load are. */
#define FLAGS_COMPILE                                                                 \
  (FLAG_TARGET | FLAG_OPT_LEVEL | FLAG_INPUT_SHAPE | FLAG_BATCH | FLAG_MAX_CONSTANT | \
   FLAG_IMAGE_SIZE | FLAG_DISABLED_PASS | FLAG_TUNING | FLAG_EXECUTOR)
#define FLAGS_TIMING (FLAG_INPUT | FLAG_THREADS | FLAG_RUNS | FLAG_DURATION)

/* The code --dump writes beside the artifact: its name, the module source
 * format it comes from (NULL: the graph IR) and the file it goes to. */
typedef struct dump_kind_t {
  const char *name;
  const char *format;
  const char *file;
} dump_kind_t;

static const dump_kind_t dump_kinds[] = {
    {"ir", NULL, "graph.ir"},
    {"ll", "ll", "lib.ll"},
    {"asm", "asm", "lib.s"},
    {"c", "c", "lib.c"},
};
#define NUM_DUMP_KINDS ((int)(sizeof(dump_kinds) / sizeof(dump_kinds[0])))

typedef struct compile_args_t {
  const char *model;
  const char *out_dir;
  kiln_compiler_options_t options;
  const char *input_shapes[KILN_CLI_MAX_FILES];
  const char *disabled_passes[KILN_CLI_MAX_FILES];
  kiln_cli_io_t io; /* bench --input */
  unsigned given;   /* FLAG_* of the options given */
  bool dump[NUM_DUMP_KINDS];
  int threads;
  int runs;
  double duration; /* bench: seconds to run for (0: --runs runs) */
  int check;
  int rounds; /* bench --compare-untuned: rounds of --runs runs each side */
} compile_args_t;

static kiln_status_t parse_count(const char *flag, const char *text, int minimum, int *out) {
  return kiln_cli_parse_count(flag, text, minimum, out);
}

static kiln_status_t parse_seconds(const char *flag, const char *text, double *out) {
  return kiln_cli_parse_positive(flag, text, 86400,
                                 "expected a number of seconds in (0, 86400] after", out);
}

static kiln_status_t push_name(const char *flag, const char *value, int *count,
                               const char **names) {
  if (!value || *count == KILN_CLI_MAX_FILES) {
    return kiln_cli_usage(value ? "too many values for" : "missing value after", flag);
  }
  names[(*count)++] = value;
  return KILN_OK;
}

/* --dump KIND: one of dump_kinds. */
static kiln_status_t parse_dump(const char *flag, const char *value, compile_args_t *a) {
  for (int k = 0; value && k < NUM_DUMP_KINDS; ++k) {
    if (strcmp(value, dump_kinds[k].name) == 0) {
      a->dump[k] = true;
      return KILN_OK;
    }
  }
  return kiln_cli_usage(value ? "expected ir, ll, asm or c after '--dump', got"
                              : "missing kind after",
                        value ? value : flag);
}

/* The options that take no value. */
static bool parse_switch(const char *flag, compile_args_t *a) {
  if (strcmp(flag, "--check") == 0) {
    a->check = 1;
    a->given |= FLAG_CHECK;
    return true;
  }
  if (strcmp(flag, "--compare-untuned") == 0) {
    a->given |= FLAG_COMPARE;
    return true;
  }
  return false;
}

/* The model-loading options and the file flags. */
static kiln_status_t parse_load_option(const char *flag, const char *value, compile_args_t *a,
                                       bool *out_matched) {
  *out_matched = true;
  if (strcmp(flag, "--input-shape") == 0) {
    a->given |= FLAG_INPUT_SHAPE;
    return push_name(flag, value, &a->options.num_input_shapes, a->input_shapes);
  }
  if (strcmp(flag, "--batch") == 0) {
    a->given |= FLAG_BATCH;
    return parse_count(flag, value, 1, &a->options.batch);
  }
  if (strcmp(flag, "--max-constant-bytes") == 0) {
    a->given |= FLAG_MAX_CONSTANT;
    return kiln_cli_parse_int(flag, value, 1, &a->options.max_constant_bytes);
  }
  if (strcmp(flag, "--image-size") == 0) {
    a->given |= FLAG_IMAGE_SIZE;
    return parse_count(flag, value, 1, &a->options.image_size);
  }
  KILN_RETURN_IF_ERROR(kiln_cli_parse_io_option(flag, value, &a->io, out_matched));
  if (*out_matched && strcmp(flag, "--input") != 0) {
    return kiln_cli_usage("bench takes --input alone of the file options (kiln run takes "
                          "--output, --expect and --print-top); it takes no",
                          flag);
  }
  a->given |= *out_matched ? FLAG_INPUT : 0;
  return KILN_OK;
}

/* --executor graph|vm|auto (docs/vm.md). */
static kiln_status_t parse_executor(const char *flag, const char *value,
                                    kiln_executor_kind_t *out_kind) {
  static const struct {
    const char *name;
    kiln_executor_kind_t kind;
  } kinds[] = {
      {"graph", KILN_EXECUTOR_GRAPH}, {"vm", KILN_EXECUTOR_VM}, {"auto", KILN_EXECUTOR_AUTO}};
  for (size_t k = 0; value && k < sizeof(kinds) / sizeof(kinds[0]); ++k) {
    if (strcmp(value, kinds[k].name) == 0) {
      *out_kind = kinds[k].kind;
      return KILN_OK;
    }
  }
  return kiln_cli_usage("expected graph, vm or auto after", flag);
}

static kiln_status_t parse_compile_option(int argc, char **argv, int *i, compile_args_t *a) {
  const char *flag = argv[*i];
  const char *value = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (parse_switch(flag, a)) {
    return KILN_OK;
  }
  ++*i;
  bool matched = false;
  KILN_RETURN_IF_ERROR(parse_load_option(flag, value, a, &matched));
  if (matched) {
    return KILN_OK;
  }
  if (strcmp(flag, "-o") == 0 || strcmp(flag, "--output-dir") == 0) {
    a->out_dir = value;
    a->given |= FLAG_OUT;
    return value ? KILN_OK : kiln_cli_usage("missing DIR or FILE.so after", flag);
  }
  if (strcmp(flag, "--target") == 0) {
    a->options.target = value;
    a->given |= FLAG_TARGET;
    return value ? KILN_OK : kiln_cli_usage("missing target after", flag);
  }
  if (strcmp(flag, "--opt-level") == 0) {
    a->given |= FLAG_OPT_LEVEL;
    KILN_RETURN_IF_ERROR(parse_count(flag, value, 0, &a->options.opt_level));
    return a->options.opt_level <= 3 ? KILN_OK : kiln_cli_usage("expected 0 to 3 after", flag);
  }
  if (strcmp(flag, "--threads") == 0) {
    a->given |= FLAG_THREADS;
    return parse_count(flag, value, 1, &a->threads);
  }
  if (strcmp(flag, "--runs") == 0) {
    a->given |= FLAG_RUNS;
    return parse_count(flag, value, 1, &a->runs);
  }
  if (strcmp(flag, "--rounds") == 0) {
    a->given |= FLAG_ROUNDS;
    return parse_count(flag, value, 1, &a->rounds);
  }
  if (strcmp(flag, "--tuning") == 0) {
    a->given |= FLAG_TUNING;
    a->options.tuning_records = value;
    return value ? KILN_OK : kiln_cli_usage("missing RECORDS file after", flag);
  }
  if (strcmp(flag, "--executor") == 0) {
    a->given |= FLAG_EXECUTOR;
    return parse_executor(flag, value, &a->options.executor);
  }
  if (strcmp(flag, "--duration") == 0) {
    a->given |= FLAG_DURATION;
    return parse_seconds(flag, value, &a->duration);
  }
  if (strcmp(flag, "--disabled-pass") == 0) {
    a->given |= FLAG_DISABLED_PASS;
    return push_name(flag, value, &a->options.num_disabled_passes, a->disabled_passes);
  }
  if (strcmp(flag, "--dump") == 0) {
    a->given |= FLAG_DUMP;
    return parse_dump(flag, value, a);
  }
  --*i;
  return kiln_cli_usage("unknown option", flag);
}

static kiln_status_t parse_compile_args(int argc, char **argv, compile_args_t *a) {
  memset(a, 0, sizeof(*a));
  a->options = kiln_compiler_options_default();
  a->options.input_shapes = a->input_shapes;
  a->options.disabled_passes = a->disabled_passes;
  a->runs = 20;
  a->rounds = 10;
  for (int i = 1; i < argc;) {
    if (argv[i][0] == '-') {
      KILN_RETURN_IF_ERROR(parse_compile_option(argc, argv, &i, a));
      ++i;
    } else if (!a->model) {
      a->model = argv[i++];
    } else {
      return kiln_cli_usage("unexpected argument", argv[i]);
    }
  }
  if (!a->model) {
    return kiln_cli_usage("missing the model (FILE.onnx or a workload name)", NULL);
  }
  a->options.progress = isatty(STDERR_FILENO) ? stderr : NULL;
  return KILN_OK;
}

/* A usage error for the first option given that is not in `allowed`,
 * saying what `command` takes it on (`why`). */
static kiln_status_t check_allowed(const compile_args_t *a, unsigned allowed, const char *why) {
  for (size_t f = 0; f < sizeof(flag_names) / sizeof(flag_names[0]); ++f) {
    if ((a->given & flag_names[f].bit) && !(allowed & flag_names[f].bit)) {
      char message[256];
      snprintf(message, sizeof(message), "%s; it takes no", why);
      return kiln_cli_usage(message, flag_names[f].name);
    }
  }
  return KILN_OK;
}

/* The options given that load a model, for kiln_cli_check_model_flags. */
static kiln_status_t check_model_flags(const compile_args_t *a) {
  kiln_cli_given_t given = {.batch = (a->given & FLAG_BATCH) != 0,
                            .image_size = (a->given & FLAG_IMAGE_SIZE) != 0,
                            .input_shape = (a->given & FLAG_INPUT_SHAPE) != 0};
  return kiln_cli_check_model_flags(a->model, &given);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *target_of(const compile_args_t *a) {
  return a->options.target ? a->options.target : kiln_compiler_default_target();
}

static void print_stats(const compile_args_t *a, const kiln_compiled_t *compiled,
                        double seconds_import) {
  kiln_compile_stats_t s;
  kiln_compiled_get_stats(compiled, &s);
  printf("%s: compiled for %s in %.2f s (import %.2f, passes %.2f, lowering %.2f, code "
         "generation %.2f)\n",
         a->model, target_of(a), s.seconds_total + seconds_import, seconds_import, s.seconds_passes,
         s.seconds_lower, s.seconds_codegen);
  printf("  executor: %s\n", kiln_compiled_executor(compiled) == KILN_EXECUTOR_VM
                                 ? "vm (vm.json)"
                                 : "graph (graph.json)");
  if (kiln_compiled_executor(compiled) == KILN_EXECUTOR_VM &&
      a->options.executor != KILN_EXECUTOR_VM) {
    printf("  note: the model has symbolic dims, so it runs on the VM with kernels over run-time "
           "extents (docs/dynamic-shapes.md, \"Performance\"); --input-shape fixes the dims for "
           "a static compile\n");
  }
  printf("  %d kernels, %d kernel calls, %d params, %.2f GFLOP per run\n", s.num_kernels,
         s.num_kernel_calls, s.num_params, (double)s.flops * 1e-9);
  printf("  intermediate tensors: %.2f MiB planned, %.2f MiB without reuse\n",
         (double)s.planned_bytes / 1048576.0, (double)s.tensor_bytes / 1048576.0);
  if (s.num_kernels_tuned > 0) {
    printf("  %d kernels scheduled by tuning records\n", s.num_kernels_tuned);
  }
}

/* The model as kiln_compile loads it: the options' input shapes, batch and
 * image size and constant cap; a workload's weights bound. */
static kiln_status_t load_model(const compile_args_t *a, kiln_model_t **out_model) {
  kiln_model_options_t load = kiln_model_options_default();
  load.num_input_shapes = a->options.num_input_shapes;
  load.input_shapes = a->options.input_shapes;
  load.max_constant_bytes = a->options.max_constant_bytes;
  load.batch = a->options.batch;
  load.image_size = a->options.image_size;
  /* symbolic dims compile for the VM (docs/dynamic-shapes.md) */
  load.symbolic_input_shapes = a->options.executor != KILN_EXECUTOR_GRAPH;
  KILN_RETURN_IF_ERROR(kiln_model_load(kiln_allocator_system(), a->model, &load, out_model));
  kiln_status_t status = kiln_model_bind_params(*out_model);
  if (status) {
    kiln_model_destroy(*out_model);
    *out_model = NULL;
  }
  return status;
}

/* A compile: the model loaded (timed) and compiled, left optimized (its
 * final graph IR); the caller destroys both. */
typedef struct compile_result_t {
  kiln_model_t *model;
  kiln_compiled_t *compiled;
  double seconds_import;
} compile_result_t;

static void compile_result_destroy(compile_result_t *r) {
  kiln_compiled_destroy(r->compiled);
  kiln_model_destroy(r->model);
}

static kiln_status_t compile_model(const compile_args_t *a, compile_result_t *out) {
  memset(out, 0, sizeof(*out));
  double start = now_seconds();
  KILN_RETURN_IF_ERROR(load_model(a, &out->model));
  out->seconds_import = now_seconds() - start;
  if (a->options.progress) {
    fprintf(a->options.progress, "kiln: %s loaded\n", a->model);
  }
  kiln_status_t status = kiln_model_compile(out->model, &a->options, &out->compiled);
  if (status) {
    compile_result_destroy(out);
  }
  return kiln_status_annotate(status, "%s", a->model);
}

/* ---- compile ---- */

/* Whether the target (its first word) makes the code `kind` dumps. */
static bool dump_applies(const compile_args_t *a, const dump_kind_t *kind) {
  const char *target = target_of(a);
  bool c_target = strncmp(target, "c", 1) == 0 && (target[1] == '\0' || target[1] == ' ');
  return !kind->format || (strcmp(kind->format, "c") == 0) == c_target;
}

static kiln_status_t check_dumps(const compile_args_t *a) {
  for (int k = 0; k < NUM_DUMP_KINDS; ++k) {
    if (a->dump[k] && !dump_applies(a, &dump_kinds[k])) {
      char message[256];
      snprintf(message, sizeof(message),
               "target '%.64s' makes no %s code (ll and asm are the llvm targets', c the c "
               "targets'); it takes no --dump",
               target_of(a), dump_kinds[k].name);
      return kiln_cli_usage(message, dump_kinds[k].name);
    }
  }
  return KILN_OK;
}

/* The text `kind` dumps from a compile, borrowed or (the IR) in *out_owned. */
static kiln_status_t dump_text(const compile_result_t *r, const dump_kind_t *kind,
                               const char *target, const char **out_text, char **out_owned) {
  *out_owned = NULL;
  if (!kind->format) {
    KILN_RETURN_IF_ERROR(kiln_model_print(r->model, false, kiln_allocator_system(), out_owned));
    *out_text = *out_owned;
    return KILN_OK;
  }
  *out_text = kiln_runtime_module_source(kiln_compiled_library(r->compiled), kind->format);
  if (*out_text) {
    return KILN_OK;
  }
  return KILN_STATUS(FAILED_PRECONDITION,
                     "--dump %s: the library keeps no %s code (target '%s'; -noasm skips the "
                     "assembly)",
                     kind->name, kind->name, target);
}

/* Writes each --dump beside the artifacts: DIR/graph.ir, lib.ll, ... */
static kiln_status_t write_dumps(const compile_args_t *a, const compile_result_t *r) {
  for (int k = 0; k < NUM_DUMP_KINDS; ++k) {
    if (!a->dump[k]) {
      continue;
    }
    const char *text = NULL;
    char *owned = NULL, *path = NULL;
    kiln_status_t status = dump_text(r, &dump_kinds[k], target_of(a), &text, &owned);
    if (!status) {
      status = kiln_cli_path_join(a->out_dir, dump_kinds[k].file, &path);
    }
    if (!status) {
      status = kiln_cli_write_file(path, text, strlen(text));
    }
    if (!status) {
      printf("  wrote %s (--dump %s)\n", path, dump_kinds[k].name);
    }
    free(path);
    kiln_allocator_free(kiln_allocator_system(), owned);
    KILN_RETURN_IF_ERROR(status);
  }
  return KILN_OK;
}

kiln_status_t kiln_cli_compile(int argc, char **argv) {
  compile_args_t a;
  KILN_RETURN_IF_ERROR(parse_compile_args(argc, argv, &a));
  KILN_RETURN_IF_ERROR(check_allowed(&a, FLAGS_COMPILE | FLAG_OUT | FLAG_DUMP,
                                     "compile builds and saves (kiln bench runs)"));
  KILN_RETURN_IF_ERROR(check_model_flags(&a));
  if (!a.out_dir) {
    return kiln_cli_usage("missing -o DIR (or -o FILE.so)", NULL);
  }
  KILN_RETURN_IF_ERROR(check_dumps(&a));
  a.options.private_kernels = a.given & FLAG_DUMP; /* one library, with its sources */
  int one_file = kiln_cli_is_library_name(a.out_dir);
  compile_result_t r;
  KILN_RETURN_IF_ERROR(compile_model(&a, &r));
  kiln_status_t status = one_file ? kiln_compiled_export_library(r.compiled, a.out_dir)
                                  : kiln_compiled_save(r.compiled, a.out_dir);
  if (!status) {
    print_stats(&a, r.compiled, r.seconds_import);
    if (one_file) {
      printf("  wrote %s (kernels, graph and params in one library)\n", a.out_dir);
    } else {
      printf("  wrote %s/%s, %s/lib.so, %s/params.bin\n", a.out_dir,
             kiln_compiled_executor(r.compiled) == KILN_EXECUTOR_VM ? "vm.json" : "graph.json",
             a.out_dir, a.out_dir);
    }
    status = write_dumps(&a, &r);
  }
  compile_result_destroy(&r);
  return status;
}

/* ---- compiled models ---- */

/* Whether `path` is a compiled model rather than a model to compile: a
 * folder kiln compile wrote, or one library (a name ending in .so). */
static bool is_compiled_model(const char *path) {
  return kiln_cli_is_directory(path) || kiln_cli_is_library_name(path);
}

/* An executor over the compiled model at `path`: a folder written by kiln
 * compile (graph.json or vm.json, lib.so, params.bin) or one library
 * (FILE.so), both loaded by the runtime, which picks the graph executor or
 * the VM from what the model holds. */
static kiln_status_t load_compiled(const char *path, kiln_graph_executor_t **out_executor) {
  return kiln_graph_executor_load(kiln_allocator_system(), path, out_executor);
}

/* Sets the executor's inputs from the --input values; errors name the
 * input and the file. */
static kiln_status_t set_inputs(const char *model, kiln_graph_executor_t *gx,
                                const kiln_cli_inputs_t *inputs) {
  for (int i = 0; i < kiln_graph_executor_num_inputs(gx); ++i) {
    kiln_graph_executor_tensor_info_t info;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_input_info(gx, i, &info));
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(inputs->tensors[i])),
        "%s: input %d (%s) from %s", model, i, info.name,
        inputs->sources[i] ? inputs->sources[i] : "(made up)");
  }
  return KILN_OK;
}

/* ---- run ---- */

typedef struct run_args_t {
  const char *dir;
  kiln_cli_io_t io;
  int threads;
  int profile;
  int disassemble;
  const char *debug_dir;
} run_args_t;

static kiln_status_t parse_run_option(int argc, char **argv, int *i, run_args_t *a) {
  const char *flag = argv[*i];
  const char *value = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (strcmp(flag, "--profile") == 0 || strcmp(flag, "--disassemble") == 0) {
    *(strcmp(flag, "--profile") == 0 ? &a->profile : &a->disassemble) = 1;
    return KILN_OK;
  }
  ++*i;
  bool matched = false;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_io_option(flag, value, &a->io, &matched));
  if (matched) {
    return KILN_OK;
  }
  if (strcmp(flag, "--threads") == 0) {
    return parse_count(flag, value, 1, &a->threads);
  }
  if (strcmp(flag, "--debug-dir") == 0 && value) {
    a->debug_dir = value;
    return KILN_OK;
  }
  return kiln_cli_usage("unexpected argument", flag);
}

static kiln_status_t parse_run_args(int argc, char **argv, run_args_t *a) {
  memset(a, 0, sizeof(*a));
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      KILN_RETURN_IF_ERROR(parse_run_option(argc, argv, &i, a));
    } else if (!a->dir) {
      a->dir = argv[i];
    } else {
      return kiln_cli_usage("unexpected argument", argv[i]);
    }
  }
  return a->dir ? KILN_OK
                : kiln_cli_usage("missing the compiled model (its folder, or FILE.so)", NULL);
}

/* Copies the outputs out and reports them (kiln_cli_report_outputs). */
static kiln_status_t report_outputs(kiln_graph_executor_t *gx, const run_args_t *a) {
  int count = kiln_graph_executor_num_outputs(gx);
  kiln_tensor_t **outputs = calloc((size_t)count + 1, sizeof(*outputs));
  if (!outputs) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "out of memory for %d outputs", count);
  }
  kiln_status_t status = KILN_OK;
  for (int o = 0; o < count && !status; ++o) {
    status = kiln_graph_executor_copy_output(gx, o, kiln_allocator_system(), &outputs[o]);
  }
  if (!status) {
    status = kiln_cli_report_outputs(&a->io, count, outputs);
  }
  for (int o = 0; o < count; ++o) {
    kiln_tensor_release(outputs[o]);
  }
  free(outputs);
  return status;
}

static kiln_status_t run_profile(kiln_graph_executor_t *gx) {
  kiln_graph_profile_t *profile = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_profile(gx, 10, &profile));
  char *text = NULL;
  kiln_status_t status = kiln_graph_profile_format(profile, kiln_allocator_system(), &text);
  if (!status) {
    fputs(text, stdout);
    kiln_allocator_free(kiln_allocator_system(), text);
  }
  kiln_graph_profile_destroy(profile);
  return status;
}

static kiln_status_t run_executor(kiln_graph_executor_t *gx, const run_args_t *a) {
  kiln_cli_signature_t signature;
  KILN_RETURN_IF_ERROR(kiln_cli_signature_from_executor(gx, &signature));
  kiln_cli_inputs_t inputs;
  KILN_RETURN_IF_ERROR(kiln_cli_inputs_read(a->dir, &signature, &a->io, &inputs));
  kiln_status_t status = set_inputs(a->dir, gx, &inputs);
  kiln_cli_inputs_release(&inputs);
  if (!status) {
    status = a->debug_dir ? kiln_graph_executor_run_debug(gx, a->debug_dir)
                          : kiln_graph_executor_run(gx);
  }
  if (!status) {
    status = report_outputs(gx, a);
  }
  if (!status && a->profile) {
    status = run_profile(gx);
  }
  return status;
}

/* --disassemble: a VM program's listing, instead of a run (docs/vm.md). */
static kiln_status_t print_disassembly(const kiln_graph_executor_t *gx) {
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_disassemble(gx, kiln_allocator_system(), &text));
  fputs(text, stdout);
  kiln_allocator_free(kiln_allocator_system(), text);
  return KILN_OK;
}

kiln_status_t kiln_cli_run(int argc, char **argv) {
  run_args_t a;
  KILN_RETURN_IF_ERROR(parse_run_args(argc, argv, &a));
  if (a.threads > 0) {
    KILN_RETURN_IF_ERROR(kiln_parallel_set_num_threads(a.threads));
  }
  kiln_graph_executor_t *gx = NULL;
  KILN_RETURN_IF_ERROR(load_compiled(a.dir, &gx));
  kiln_status_t status = a.disassemble ? print_disassembly(gx) : run_executor(gx, &a);
  kiln_graph_executor_destroy(gx);
  return status;
}

/* ---- bench ---- */

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* An input made up: float32 uniform in [-1, 1) from `state`; other dtypes
 * (token ids, masks) zeros, a valid index and a valid mask. */
static kiln_status_t made_up_input(const kiln_graph_executor_tensor_info_t *info, uint64_t *state,
                                   kiln_tensor_t **out_tensor) {
  KILN_RETURN_IF_ERROR(kiln_tensor_create(kiln_allocator_system(), info->dtype, info->ndim,
                                          info->shape, out_tensor));
  if (info->dtype != KILN_DTYPE_FLOAT32) {
    return KILN_OK;
  }
  float *data = kiln_tensor_data(*out_tensor);
  for (int64_t e = 0; e < kiln_tensor_element_count(*out_tensor); ++e) {
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    data[e] = (float)((double)(*state >> 40) / (double)(1u << 24) * 2.0 - 1.0);
  }
  return KILN_OK;
}

/* The inputs, from the --input values or made up from a fixed seed. */
static kiln_status_t bench_inputs(const compile_args_t *a, kiln_graph_executor_t *gx,
                                  kiln_cli_inputs_t *inputs) {
  kiln_cli_signature_t signature;
  KILN_RETURN_IF_ERROR(kiln_cli_signature_from_executor(gx, &signature));
  if (a->io.num_inputs > 0) {
    return kiln_cli_inputs_read(a->model, &signature, &a->io, inputs);
  }
  memset(inputs, 0, sizeof(*inputs));
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < signature.count; ++i) {
    kiln_graph_executor_tensor_info_t info;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_input_info(gx, i, &info));
    KILN_RETURN_IF_ERROR(made_up_input(&info, &state, &inputs->tensors[i]));
  }
  return KILN_OK;
}

/* Run times (ms) in a growing array. */
typedef struct times_t {
  double *ms;
  int count, capacity;
} times_t;

static kiln_status_t times_push(times_t *t, double ms) {
  if (t->count == t->capacity) {
    int capacity = t->capacity ? 2 * t->capacity : 64;
    double *grown = realloc(t->ms, (size_t)capacity * sizeof(double));
    if (!grown) {
      return KILN_STATUS(RESOURCE_EXHAUSTED, "bench: out of memory for %d run times", capacity);
    }
    t->ms = grown;
    t->capacity = capacity;
  }
  t->ms[t->count++] = ms;
  return KILN_OK;
}

/* The p-th percentile of the sorted times by nearest rank: the time at
 * rank ceil(p/100 * n), the least time that at least p% of the runs do
 * not exceed. */
static double percentile(const times_t *t, int p) {
  int rank = (int)(((int64_t)p * t->count + 99) / 100);
  return t->ms[(rank < 1 ? 1 : rank) - 1];
}

/* The median: the middle time (the mean of the two middle ones). */
static double median(const times_t *t) {
  int n = t->count;
  return n % 2 ? t->ms[n / 2] : 0.5 * (t->ms[n / 2 - 1] + t->ms[n / 2]);
}

/* One warm-up, then --runs runs, or runs until --duration seconds. */
static kiln_status_t time_runs(kiln_graph_executor_t *gx, const compile_args_t *a, times_t *t) {
  KILN_RETURN_IF_ERROR(kiln_graph_executor_run(gx)); /* warm-up */
  double start = now_seconds();
  for (;;) {
    double run_start = now_seconds();
    KILN_RETURN_IF_ERROR(kiln_graph_executor_run(gx));
    double end = now_seconds();
    KILN_RETURN_IF_ERROR(times_push(t, (end - run_start) * 1e3));
    if (a->duration > 0 ? end - start >= a->duration : t->count == a->runs) {
      break;
    }
  }
  qsort(t->ms, (size_t)t->count, sizeof(double), compare_doubles);
  return KILN_OK;
}

static void print_latency(const compile_args_t *a, const times_t *t) {
  double total = 0;
  for (int r = 0; r < t->count; ++r) {
    total += t->ms[r];
  }
  printf("  latency: median %.3f ms over %d runs, %d threads\n", median(t), t->count,
         kiln_parallel_get_num_threads());
  printf("  latency: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, min %.3f ms (%.2f s of runs%s)\n",
         percentile(t, 50), percentile(t, 90), percentile(t, 99), t->ms[0], total * 1e-3,
         a->duration > 0 ? ", --duration" : "");
}

/* Runs the model on the reference interpreter on the same inputs and prints
 * the largest difference from the compiled outputs; a difference beyond
 * the whole-model tolerances fails. */
static kiln_status_t check_against_interpreter(const compile_args_t *a, kiln_graph_executor_t *gx,
                                               kiln_tensor_t *const *inputs) {
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(load_model(a, &model));
  int num_want = 0;
  kiln_tensor_t **want = NULL;
  kiln_status_t status = kiln_model_interpret(model, kiln_graph_executor_num_inputs(gx), inputs,
                                              kiln_allocator_system(), &num_want, &want);
  double worst = 0;
  int bad = 0;
  for (int o = 0; !status && o < num_want; ++o) {
    kiln_tensor_t *got = NULL;
    status = kiln_graph_executor_copy_output(gx, o, kiln_allocator_system(), &got);
    for (int64_t e = 0; !status && e < kiln_tensor_element_count(want[o]); ++e) {
      double w = kiln_tensor_element_as_double(want[o], e);
      double g = kiln_tensor_element_as_double(got, e);
      worst = fabs(g - w) > worst ? fabs(g - w) : worst;
      bad |= !(fabs(g - w) <= KILN_CLI_MODEL_ATOL + KILN_CLI_MODEL_RTOL * fabs(w)) &&
             !(isnan(g) && isnan(w));
    }
    kiln_tensor_release(got);
    if (!status && o == 0) {
      kiln_cli_print_top(want[o], 5);
    }
  }
  for (int o = 0; o < num_want; ++o) {
    kiln_tensor_release(want[o]);
  }
  kiln_allocator_free(kiln_allocator_system(), want);
  kiln_model_destroy(model);
  KILN_RETURN_IF_ERROR(status);
  printf("  largest difference from the reference interpreter: %.3g\n", worst);
  return bad ? KILN_STATUS(INTERNAL,
                           "%s: the compiled model differs from the reference "
                           "interpreter beyond rtol %g, atol %g",
                           a->model, KILN_CLI_MODEL_RTOL, KILN_CLI_MODEL_ATOL)
             : KILN_OK;
}

/* Times the executor (and, --check, compares it with the interpreter);
 * `print_header` prints what was compiled or loaded first. */
static kiln_status_t bench_executor(const compile_args_t *a, kiln_graph_executor_t *gx,
                                    void (*print_header)(const void *), const void *header) {
  kiln_cli_inputs_t inputs = {0};
  times_t times = {0};
  kiln_status_t status = bench_inputs(a, gx, &inputs);
  if (!status) {
    status = set_inputs(a->model, gx, &inputs);
  }
  if (!status) {
    status = time_runs(gx, a, &times);
  }
  if (!status) {
    print_header(header);
    print_latency(a, &times);
  }
  if (!status && a->check) {
    status = check_against_interpreter(a, gx, inputs.tensors);
  }
  free(times.ms);
  kiln_cli_inputs_release(&inputs);
  return status;
}

typedef struct compiled_header_t {
  const compile_args_t *a;
  const compile_result_t *r;
} compiled_header_t;

static void print_compiled_header(const void *header) {
  const compiled_header_t *h = header;
  print_stats(h->a, h->r->compiled, h->r->seconds_import);
}

typedef struct loaded_header_t {
  const char *path;
  double seconds;
} loaded_header_t;

static void print_loaded_header(const void *header) {
  const loaded_header_t *h = header;
  printf("%s: compiled model loaded in %.2f s\n", h->path, h->seconds);
}

/* bench DIR: a compiled model, loaded and timed. */
static kiln_status_t bench_compiled(const compile_args_t *a) {
  KILN_RETURN_IF_ERROR(check_allowed(a, FLAGS_TIMING,
                                     "a compiled model's target, passes and shapes are fixed, "
                                     "and --check needs the model itself"));
  loaded_header_t header = {.path = a->model};
  double start = now_seconds();
  kiln_graph_executor_t *gx = NULL;
  KILN_RETURN_IF_ERROR(load_compiled(a->model, &gx));
  header.seconds = now_seconds() - start;
  kiln_status_t status = bench_executor(a, gx, print_loaded_header, &header);
  kiln_graph_executor_destroy(gx);
  return status;
}

/* bench MODEL: compiled in memory and timed. */
static kiln_status_t bench_model(const compile_args_t *a) {
  KILN_RETURN_IF_ERROR(check_allowed(a, FLAGS_COMPILE | FLAGS_TIMING | FLAG_CHECK,
                                     "bench compiles in memory (kiln compile -o writes, and "
                                     "dumps)"));
  KILN_RETURN_IF_ERROR(check_model_flags(a));
  compile_result_t r;
  KILN_RETURN_IF_ERROR(compile_model(a, &r));
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = kiln_compiled_create_executor(r.compiled, &gx);
  compiled_header_t header = {.a = a, .r = &r};
  if (!status) {
    status = bench_executor(a, gx, print_compiled_header, &header);
  }
  kiln_graph_executor_destroy(gx);
  compile_result_destroy(&r);
  return status;
}

/* ---- bench --compare-untuned ---- */

/* One side of a comparison: its compile, executor and inputs, and the
 * median of each round's runs. */
typedef struct side_t {
  compile_result_t r;
  kiln_graph_executor_t *gx;
  kiln_cli_inputs_t inputs;
  times_t round_medians;
} side_t;

static kiln_status_t side_create(const compile_args_t *a, const char *tuning, side_t *s) {
  compile_args_t copy = *a;
  copy.options.tuning_records = tuning;
  kiln_status_t status = compile_model(&copy, &s->r);
  if (status) {
    memset(&s->r, 0, sizeof(s->r)); /* compile_model freed what it made */
    return status;
  }
  KILN_RETURN_IF_ERROR(kiln_compiled_create_executor(s->r.compiled, &s->gx));
  KILN_RETURN_IF_ERROR(bench_inputs(a, s->gx, &s->inputs));
  return set_inputs(a->model, s->gx, &s->inputs);
}

static void side_destroy(side_t *s) {
  kiln_graph_executor_destroy(s->gx);
  kiln_cli_inputs_release(&s->inputs);
  if (s->r.compiled || s->r.model) {
    compile_result_destroy(&s->r);
  }
  free(s->round_medians.ms);
}

/* One round of a side: --runs runs after a warm-up; their median kept. */
static kiln_status_t side_round(const compile_args_t *a, side_t *s) {
  times_t t = {0}; /* --runs runs: bench_compare refuses --duration */
  kiln_status_t status = time_runs(s->gx, a, &t);
  if (!status) {
    status = times_push(&s->round_medians, median(&t));
  }
  free(t.ms);
  return status;
}

/* The rounds, the untuned side first in even rounds and the tuned in odd
 * ones, so that neither always runs on a cache the other left. */
static kiln_status_t compare_rounds(const compile_args_t *a, side_t *untuned, side_t *tuned) {
  for (int round = 0; round < a->rounds; ++round) {
    side_t *first = round % 2 ? tuned : untuned, *second = round % 2 ? untuned : tuned;
    KILN_RETURN_IF_ERROR(side_round(a, first));
    KILN_RETURN_IF_ERROR(side_round(a, second));
  }
  return KILN_OK;
}

/* Prints each side's median of round medians and the median of the rounds'
 * ratios (tuned / untuned) with their range. */
static kiln_status_t print_comparison(const compile_args_t *a, side_t *untuned, side_t *tuned) {
  times_t ratios = {0};
  for (int round = 0; round < a->rounds; ++round) {
    kiln_status_t status =
        times_push(&ratios, tuned->round_medians.ms[round] / untuned->round_medians.ms[round]);
    if (status) {
      free(ratios.ms);
      return status;
    }
  }
  qsort(ratios.ms, (size_t)ratios.count, sizeof(double), compare_doubles);
  qsort(untuned->round_medians.ms, (size_t)a->rounds, sizeof(double), compare_doubles);
  qsort(tuned->round_medians.ms, (size_t)a->rounds, sizeof(double), compare_doubles);
  printf("  untuned: median %.3f ms (the median of %d rounds of %d runs), %d threads\n",
         median(&untuned->round_medians), a->rounds, a->runs, kiln_parallel_get_num_threads());
  printf("  tuned:   median %.3f ms (%s)\n", median(&tuned->round_medians),
         a->options.tuning_records);
  printf("  tuned / untuned: %.3f, the median of the rounds' ratios (least %.3f, most %.3f)\n",
         median(&ratios), ratios.ms[0], ratios.ms[ratios.count - 1]);
  free(ratios.ms);
  return KILN_OK;
}

/* bench MODEL --tuning R --compare-untuned: the model compiled with the
 * records and without, timed in alternating rounds in this one process
 * (processes differ from one another by more than tuning gains,
 * docs/tuning.md). */
static kiln_status_t bench_compare(const compile_args_t *a) {
  KILN_RETURN_IF_ERROR(check_allowed(a, FLAGS_COMPILE | FLAGS_TIMING | FLAG_COMPARE | FLAG_ROUNDS,
                                     "bench --compare-untuned times two compiles in rounds"));
  if (!(a->given & FLAG_TUNING)) {
    return kiln_cli_usage("--compare-untuned compares a compile with tuning records against "
                          "one without: give them with --tuning RECORDS",
                          NULL);
  }
  if (a->given & FLAG_DURATION) {
    return kiln_cli_usage("--compare-untuned times --runs runs a round; it takes no", "--duration");
  }
  KILN_RETURN_IF_ERROR(check_model_flags(a));
  side_t untuned = {0}, tuned = {0};
  kiln_status_t status = side_create(a, NULL, &untuned);
  if (!status) {
    status = side_create(a, a->options.tuning_records, &tuned);
  }
  if (!status) {
    status = compare_rounds(a, &untuned, &tuned);
  }
  if (!status) {
    print_stats(a, tuned.r.compiled, tuned.r.seconds_import);
    status = print_comparison(a, &untuned, &tuned);
  }
  side_destroy(&untuned);
  side_destroy(&tuned);
  return status;
}

kiln_status_t kiln_cli_bench(int argc, char **argv) {
  compile_args_t a;
  KILN_RETURN_IF_ERROR(parse_compile_args(argc, argv, &a));
  if ((a.given & FLAG_RUNS) && (a.given & FLAG_DURATION)) {
    return kiln_cli_usage("give --runs or --duration, not both", NULL);
  }
  if ((a.given & FLAG_ROUNDS) && !(a.given & FLAG_COMPARE)) {
    return kiln_cli_usage("--rounds goes with --compare-untuned; it was given without", NULL);
  }
  if (a.threads > 0) {
    KILN_RETURN_IF_ERROR(kiln_parallel_set_num_threads(a.threads));
  }
  if (a.given & FLAG_COMPARE) {
    return is_compiled_model(a.model)
               ? kiln_cli_usage("--compare-untuned compiles the model twice, so it takes a "
                                "model, not the compiled",
                                a.model)
               : bench_compare(&a);
  }
  return is_compiled_model(a.model) ? bench_compiled(&a) : bench_model(&a);
}

/* ---- graph ---- */

/* The model through the default pipeline (fusion included), as dot. */
static kiln_status_t fused_graph_dot(const compile_args_t *a, char **out_dot) {
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(load_model(a, &model));
  kiln_model_optimize_options_t optimize = kiln_model_optimize_options_default();
  optimize.opt_level = a->options.opt_level;
  optimize.num_disabled_passes = a->options.num_disabled_passes;
  optimize.disabled_passes = a->options.disabled_passes;
  kiln_status_t status = kiln_model_optimize(model, &optimize);
  if (!status) {
    status = kiln_model_print_dot(model, kiln_allocator_system(), out_dot);
  }
  kiln_model_destroy(model);
  return status;
}

kiln_status_t kiln_cli_graph(int argc, char **argv) {
  compile_args_t a;
  KILN_RETURN_IF_ERROR(parse_compile_args(argc, argv, &a));
  KILN_RETURN_IF_ERROR(check_allowed(&a,
                                     FLAG_OUT | FLAG_OPT_LEVEL | FLAG_INPUT_SHAPE | FLAG_BATCH |
                                         FLAG_IMAGE_SIZE | FLAG_MAX_CONSTANT | FLAG_DISABLED_PASS,
                                     "graph draws the fused graph (no code is generated or run)"));
  KILN_RETURN_IF_ERROR(check_model_flags(&a));
  if (!a.out_dir) {
    return kiln_cli_usage("missing -o FILE.dot", NULL);
  }
  char *dot = NULL;
  kiln_status_t status = fused_graph_dot(&a, &dot);
  if (!status) {
    status = kiln_cli_write_file(a.out_dir, dot, strlen(dot));
  }
  if (!status) {
    printf("wrote %s (render with: dot -Tsvg %s -o graph.svg)\n", a.out_dir, a.out_dir);
  }
  kiln_allocator_free(kiln_allocator_system(), dot);
  return status;
}
