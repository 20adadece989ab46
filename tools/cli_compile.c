/*
 * The kiln tool's compiler commands (docs/cli.md):
 *   compile MODEL -o DIR   build the three artifacts into DIR (-o FILE.so:
 *                          one library that embeds the graph and params);
 *   run DIR --input X.npy  run them (or FILE.so) with the graph executor alone;
 *   bench MODEL            compile in memory, report compile time and the
 *                          median latency of runs.
 * MODEL is an ONNX file or a built-in workload, as for `show` and `interp`.
 * Options shared by compile and bench are parsed by one function; a
 * mistake exits with code 2 and the usage.
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

#define KILN_CLI_MAX_VALUES 16

typedef struct compile_args_t {
  const char *model;
  const char *out_dir;
  kiln_compiler_options_t options;
  const char *input_shapes[KILN_CLI_MAX_VALUES];
  int num_inputs; /* bench --input FILE.npy, in main's input order */
  const char *inputs[KILN_CLI_MAX_VALUES];
  int threads;
  int runs;
  int check;
} compile_args_t;

/* kiln_cli_parse_int, for the options that are ints. */
static kiln_status_t parse_count(const char *flag, const char *text, int minimum, int *out) {
  int64_t value = 0;
  KILN_RETURN_IF_ERROR(kiln_cli_parse_int(flag, text, minimum, &value));
  if (value > 1000000) {
    return kiln_cli_usage("expected at most 1000000 after", flag);
  }
  *out = (int)value;
  return KILN_OK;
}

static kiln_status_t parse_compile_option(int argc, char **argv, int *i, compile_args_t *a) {
  const char *flag = argv[*i];
  const char *value = *i + 1 < argc ? argv[*i + 1] : NULL;
  ++*i;
  if (strcmp(flag, "-o") == 0 || strcmp(flag, "--output-dir") == 0) {
    a->out_dir = value;
    return value ? KILN_OK : kiln_cli_usage("missing DIR or FILE.so after", flag);
  }
  if (strcmp(flag, "--target") == 0) {
    a->options.target = value;
    return value ? KILN_OK : kiln_cli_usage("missing target after", flag);
  }
  if (strcmp(flag, "--opt-level") == 0) {
    KILN_RETURN_IF_ERROR(parse_count(flag, value, 0, &a->options.opt_level));
    return a->options.opt_level <= 3 ? KILN_OK : kiln_cli_usage("expected 0 to 3 after", flag);
  }
  if (strcmp(flag, "--input-shape") == 0) {
    if (!value || a->options.num_input_shapes == KILN_CLI_MAX_VALUES) {
      return kiln_cli_usage("expected NAME=DIMS after", flag);
    }
    a->input_shapes[a->options.num_input_shapes++] = value;
    return KILN_OK;
  }
  if (strcmp(flag, "--input") == 0) {
    if (!value || a->num_inputs == KILN_CLI_MAX_VALUES) {
      return kiln_cli_usage(value ? "too many files for" : "missing FILE.npy after", flag);
    }
    a->inputs[a->num_inputs++] = value;
    return KILN_OK;
  }
  if (strcmp(flag, "--batch") == 0) {
    return parse_count(flag, value, 1, &a->options.batch);
  }
  if (strcmp(flag, "--max-constant-bytes") == 0) {
    return kiln_cli_parse_int(flag, value, 1, &a->options.max_constant_bytes);
  }
  if (strcmp(flag, "--image-size") == 0) {
    return parse_count(flag, value, 1, &a->options.image_size);
  }
  if (strcmp(flag, "--threads") == 0) {
    return parse_count(flag, value, 1, &a->threads);
  }
  if (strcmp(flag, "--check") == 0) {
    --*i;
    a->check = 1;
    return KILN_OK;
  }
  if (strcmp(flag, "--runs") == 0) {
    return parse_count(flag, value, 1, &a->runs);
  }
  --*i;
  return kiln_cli_usage("unknown option", flag);
}

static kiln_status_t parse_compile_args(int argc, char **argv, compile_args_t *a) {
  memset(a, 0, sizeof(*a));
  a->options = kiln_compiler_options_default();
  a->options.input_shapes = a->input_shapes;
  a->runs = 20;
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

static void print_stats(const char *model, const char *target, const kiln_compiled_t *compiled) {
  kiln_compile_stats_t s;
  kiln_compiled_get_stats(compiled, &s);
  printf("%s: compiled for %s in %.2f s (import %.2f, passes %.2f, lowering %.2f, code "
         "generation %.2f)\n",
         model, target, s.seconds_total, s.seconds_import, s.seconds_passes, s.seconds_lower,
         s.seconds_codegen);
  printf("  %d kernels, %d kernel calls, %d params, %.2f GFLOP per run\n", s.num_kernels,
         s.num_kernel_calls, s.num_params, (double)s.flops * 1e-9);
  printf("  intermediate tensors: %.2f MiB planned, %.2f MiB without reuse\n",
         (double)s.planned_bytes / 1048576.0, (double)s.tensor_bytes / 1048576.0);
}

kiln_status_t kiln_cli_compile(int argc, char **argv) {
  compile_args_t a;
  KILN_RETURN_IF_ERROR(parse_compile_args(argc, argv, &a));
  if (!a.out_dir) {
    return kiln_cli_usage("missing -o DIR (or -o FILE.so)", NULL);
  }
  size_t length = strlen(a.out_dir);
  int one_file = length > 3 && strcmp(a.out_dir + length - 3, ".so") == 0;
  kiln_compiled_t *compiled = NULL;
  KILN_RETURN_IF_ERROR(kiln_compile(kiln_allocator_system(), a.model, &a.options, &compiled));
  kiln_status_t status = one_file ? kiln_compiled_export_library(compiled, a.out_dir)
                                  : kiln_compiled_save(compiled, a.out_dir);
  if (!status) {
    print_stats(a.model, a.options.target ? a.options.target : kiln_compiler_default_target(),
                compiled);
    if (one_file) {
      printf("  wrote %s (kernels, graph and params in one library)\n", a.out_dir);
    } else {
      printf("  wrote %s/graph.json, %s/lib.so, %s/params.bin\n", a.out_dir, a.out_dir, a.out_dir);
    }
  }
  kiln_compiled_destroy(compiled);
  return status;
}

/* ---- run ---- */

typedef struct run_args_t {
  const char *dir;
  int num_inputs;
  const char *inputs[KILN_CLI_MAX_VALUES];
  int num_outputs;
  const char *outputs[KILN_CLI_MAX_VALUES];
  int threads;
  int profile;
  const char *debug_dir;
} run_args_t;

static kiln_status_t parse_run_args(int argc, char **argv, run_args_t *a) {
  memset(a, 0, sizeof(*a));
  for (int i = 1; i < argc; ++i) {
    const char *flag = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(flag, "--profile") == 0) {
      a->profile = 1;
    } else if ((strcmp(flag, "--input") == 0 || strcmp(flag, "--output") == 0) && value) {
      int *count = flag[2] == 'i' ? &a->num_inputs : &a->num_outputs;
      const char **list = flag[2] == 'i' ? a->inputs : a->outputs;
      if (*count == KILN_CLI_MAX_VALUES) {
        return kiln_cli_usage("too many files for", flag);
      }
      list[(*count)++] = argv[++i];
    } else if (strcmp(flag, "--threads") == 0) {
      KILN_RETURN_IF_ERROR(parse_count(flag, value, 1, &a->threads));
      ++i;
    } else if (strcmp(flag, "--debug-dir") == 0 && value) {
      a->debug_dir = argv[++i];
    } else if (flag[0] != '-' && !a->dir) {
      a->dir = flag;
    } else {
      return kiln_cli_usage("unexpected argument", flag);
    }
  }
  return a->dir ? KILN_OK
                : kiln_cli_usage("missing the compiled model (its folder, or FILE.so)", NULL);
}

static kiln_status_t set_inputs(kiln_graph_executor_t *gx, const run_args_t *a) {
  int expected = kiln_graph_executor_num_inputs(gx);
  if (a->num_inputs != expected) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s takes %d inputs, %d given with --input", a->dir,
                       expected, a->num_inputs);
  }
  for (int i = 0; i < a->num_inputs; ++i) {
    kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_npy_read_file(kiln_allocator_system(), a->inputs[i], &tensor));
    kiln_status_t status = kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(tensor));
    kiln_tensor_release(tensor);
    KILN_RETURN_IF_ERROR_ANNOTATE(status, "%s", a->inputs[i]);
  }
  return KILN_OK;
}

static kiln_status_t report_outputs(kiln_graph_executor_t *gx, const run_args_t *a) {
  for (int o = 0; o < kiln_graph_executor_num_outputs(gx); ++o) {
    kiln_tensor_t *out = NULL;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_copy_output(gx, o, kiln_allocator_system(), &out));
    char label[32];
    snprintf(label, sizeof(label), "output %d", o);
    kiln_cli_print_summary(label, out);
    kiln_status_t status = KILN_OK;
    if (o < a->num_outputs) {
      status = kiln_npy_write_file(kiln_allocator_system(), out, a->outputs[o]);
    }
    kiln_tensor_release(out);
    KILN_RETURN_IF_ERROR(status);
  }
  return KILN_OK;
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

kiln_status_t kiln_cli_run(int argc, char **argv) {
  run_args_t a;
  KILN_RETURN_IF_ERROR(parse_run_args(argc, argv, &a));
  if (a.threads > 0) {
    KILN_RETURN_IF_ERROR(kiln_parallel_set_num_threads(a.threads));
  }
  kiln_graph_executor_t *gx = NULL;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_load(kiln_allocator_system(), a.dir, &gx));
  kiln_status_t status = set_inputs(gx, &a);
  if (!status) {
    status =
        a.debug_dir ? kiln_graph_executor_run_debug(gx, a.debug_dir) : kiln_graph_executor_run(gx);
  }
  if (!status) {
    status = report_outputs(gx, &a);
  }
  if (!status && a.profile) {
    status = run_profile(gx);
  }
  kiln_graph_executor_destroy(gx);
  return status;
}

/* ---- bench ---- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

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

/* The inputs, from --input files in main's order or made up from a fixed
 * seed; kept for --check. */
static kiln_status_t fill_inputs(const compile_args_t *a, kiln_graph_executor_t *gx,
                                 kiln_tensor_t **inputs) {
  int count = kiln_graph_executor_num_inputs(gx);
  if (count > KILN_CLI_MAX_VALUES || (a->num_inputs > 0 && a->num_inputs != count)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s takes %d inputs, %d given with --input%s", a->model,
                       count, a->num_inputs,
                       count > KILN_CLI_MAX_VALUES ? " (bench takes at most 16)" : "");
  }
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < count; ++i) {
    kiln_graph_executor_tensor_info_t info;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_input_info(gx, i, &info));
    if (a->num_inputs > 0) {
      KILN_RETURN_IF_ERROR(kiln_npy_read_file(kiln_allocator_system(), a->inputs[i], &inputs[i]));
    } else {
      KILN_RETURN_IF_ERROR(made_up_input(&info, &state, &inputs[i]));
    }
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(inputs[i])), "input %d (%s)%s%s", i,
        info.name, a->num_inputs > 0 ? " from " : "", a->num_inputs > 0 ? a->inputs[i] : "");
  }
  return KILN_OK;
}

static kiln_status_t time_runs(kiln_graph_executor_t *gx, int runs, double *out_median) {
  double *times = calloc((size_t)runs, sizeof(double));
  if (!times) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "bench: out of memory");
  }
  kiln_status_t status = kiln_graph_executor_run(gx); /* warm-up */
  for (int r = 0; !status && r < runs; ++r) {
    double start = now_ms();
    status = kiln_graph_executor_run(gx);
    times[r] = now_ms() - start;
  }
  qsort(times, (size_t)runs, sizeof(double), compare_doubles);
  *out_median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
  free(times);
  return status;
}

/* The five largest values of the first output, with their indices. */
static void print_top5(const kiln_tensor_t *out) {
  int64_t n = kiln_tensor_element_count(out);
  int64_t best[5] = {-1, -1, -1, -1, -1};
  for (int k = 0; k < 5 && k < n; ++k) {
    for (int64_t e = 0; e < n; ++e) {
      int taken = 0;
      for (int j = 0; j < k; ++j) {
        taken |= best[j] == e;
      }
      if (!taken && (best[k] < 0 || kiln_tensor_element_as_double(out, e) >
                                        kiln_tensor_element_as_double(out, best[k]))) {
        best[k] = e;
      }
    }
  }
  printf("  top-5 classes:");
  for (int k = 0; k < 5 && best[k] >= 0; ++k) {
    printf(" %lld (%.4g)", (long long)best[k], kiln_tensor_element_as_double(out, best[k]));
  }
  printf("\n");
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
  KILN_RETURN_IF_ERROR(kiln_model_load(kiln_allocator_system(), a->model, &load, out_model));
  kiln_status_t status = kiln_model_bind_params(*out_model);
  if (status) {
    kiln_model_destroy(*out_model);
    *out_model = NULL;
  }
  return status;
}

/* Runs the model on the reference interpreter on the same inputs and prints
 * the largest difference from the compiled outputs; a difference beyond
 * rtol 1e-3, atol 1e-4 fails. */
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
      bad |= !(fabs(g - w) <= 1e-4 + 1e-3 * fabs(w)) && !(isnan(g) && isnan(w));
    }
    kiln_tensor_release(got);
    if (!status && o == 0) {
      print_top5(want[o]);
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
                           "interpreter beyond rtol 1e-3, atol 1e-4",
                           a->model)
             : KILN_OK;
}

static kiln_status_t bench_executor(const compile_args_t *a, kiln_graph_executor_t *gx,
                                    const kiln_compiled_t *compiled) {
  kiln_tensor_t *inputs[KILN_CLI_MAX_VALUES] = {NULL};
  double median = 0;
  kiln_status_t status = fill_inputs(a, gx, inputs);
  if (!status) {
    status = time_runs(gx, a->runs, &median);
  }
  if (!status) {
    print_stats(a->model, a->options.target ? a->options.target : kiln_compiler_default_target(),
                compiled);
    printf("  latency: median %.3f ms over %d runs, %d threads\n", median, a->runs,
           kiln_parallel_get_num_threads());
  }
  if (!status && a->check) {
    status = check_against_interpreter(a, gx, inputs);
  }
  for (int i = 0; i < KILN_CLI_MAX_VALUES; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  return status;
}

kiln_status_t kiln_cli_bench(int argc, char **argv) {
  compile_args_t a;
  KILN_RETURN_IF_ERROR(parse_compile_args(argc, argv, &a));
  if (a.out_dir) {
    return kiln_cli_usage("bench compiles in memory; use compile for", "-o");
  }
  if (a.threads > 0) {
    KILN_RETURN_IF_ERROR(kiln_parallel_set_num_threads(a.threads));
  }
  kiln_compiled_t *compiled = NULL;
  KILN_RETURN_IF_ERROR(kiln_compile(kiln_allocator_system(), a.model, &a.options, &compiled));
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = kiln_compiled_create_executor(compiled, &gx);
  if (!status) {
    status = bench_executor(&a, gx, compiled);
  }
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  return status;
}

/* ---- graph ---- */

/* The model through the default pipeline (fusion included), as dot. */
static kiln_status_t fused_graph_dot(const compile_args_t *a, char **out_dot) {
  kiln_model_t *model = NULL;
  KILN_RETURN_IF_ERROR(load_model(a, &model));
  kiln_model_optimize_options_t optimize = kiln_model_optimize_options_default();
  optimize.opt_level = a->options.opt_level;
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
