/*
 * Differential fuzzing of the graph compiler (docs/fuzzing.md): random
 * valid graphs (diff_gen.h) compiled and run by the graph executor, checked
 * against the reference interpreter on the same inputs.
 *
 *   kiln_diff_fuzz [--seconds S] [--count N] [--seed S] [--corpus FILE]
 *                  [--target T] [--c-every N] [--max-calls N] [--print SEED]
 *                  [--perturb]
 *
 * Graphs have up to 12 calls (--max-calls; the corpus's seeds were found
 * with 12). First the corpus is replayed: one seed a line ("<seed> [known] # what it
 * found"), the seeds that once found a bug. A seed marked known is a bug
 * not fixed yet: it is run and reported, but does not fail the run (and
 * says so when it passes again). Then seeds S, S+1, ... run until the time
 * or the count is used up; every --c-every'th graph is also built with the
 * C backend. For each seed the text is parsed twice (the compiler consumes
 * its module): once for the interpreter, once for kiln_compiler_build at
 * opt_level 3; the inputs come from the seed. A graph the compiler or the
 * executor refuses, or an output element off by more than
 * atol + rtol * |reference|, is a finding: the seed, the operators, the
 * graph's text, and the element in both outputs are printed.
 *
 * Tolerance: rtol 1e-3 and atol 1e-6 + 1e-5 * (the output's largest
 * magnitude), since a compiled sum may round in another order than the
 * reference's and a difference of an ulp of the largest term is no bug;
 * graphs with a transcendental operator (exp, log, trig, pow, erf, softmax,
 * ...) get rtol 1e-2: the compiled code calls other implementations
 * (LLVM's intrinsics, vectorized libm) than the reference's libm, and
 * errors of a few ulps grow through a chain. NaN matches NaN and an
 * infinity one of its sign. The exit status is 1 when a seed outside the
 * known ones failed, else 0. --perturb checks the checker: it moves the
 * reference's first element by 1%, so every graph must be a finding.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/build.h"
#include "diff_gen.h"
#include "interp/interp.h"
#include "ir/text.h"

typedef struct options_t {
  double seconds;
  long count;
  uint64_t seed;
  const char *corpus;
  const char *target;
  int c_every;
  int max_calls;
  bool print_only;
  bool perturb; /* self-check: the reference's first element off by 1% */
} options_t;

typedef struct stats_t {
  long graphs, calls, rejected, c_graphs, failures, known_failures, known_passing;
  long reference_refused;
} stats_t;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- inputs ---- */

static kiln_status_t make_input(const kiln_diff_var_t *var, uint64_t *rng, kiln_tensor_t **out) {
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(kiln_allocator_system(), var->dtype, var->ndim, var->shape, out));
  int64_t count = kiln_tensor_element_count(*out);
  void *data = kiln_tensor_data(*out);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t r = kiln_diff_next(rng);
    double u = (double)(r >> 11) * 0x1.0p-53;
    int64_t k = var->lo + (int64_t)(r % (uint64_t)(var->hi - var->lo + 1));
    if (var->dtype == KILN_DTYPE_FLOAT32) {
      ((float *)data)[i] =
          (float)(var->range == KILN_DIFF_RANGE_POSITIVE ? 0.5 + 1.5 * u : -2.0 + 4.0 * u);
    } else if (var->dtype == KILN_DTYPE_INT32) {
      ((int32_t *)data)[i] = (int32_t)k;
    } else if (var->dtype == KILN_DTYPE_UINT32) {
      ((uint32_t *)data)[i] = (uint32_t)k;
    } else if (var->dtype == KILN_DTYPE_INT64) {
      ((int64_t *)data)[i] = k;
    } else {
      return KILN_STATUS(INTERNAL, "no inputs of dtype %s", kiln_dtype_name(var->dtype));
    }
  }
  return KILN_OK;
}

/* ---- one graph ---- */

typedef struct run_t {
  kiln_diff_graph_t graph;
  kiln_tensor_t *inputs[KILN_DIFF_MAX_VARS];
  int num_want;
  kiln_tensor_t **want;
} run_t;

static void run_free(run_t *r) {
  for (int i = 0; i < r->graph.num_vars; ++i) {
    kiln_tensor_release(r->inputs[i]);
  }
  for (int i = 0; i < r->num_want; ++i) {
    kiln_tensor_release(r->want[i]);
  }
  kiln_allocator_free(kiln_allocator_system(), r->want);
  kiln_diff_graph_deinitialize(kiln_allocator_system(), &r->graph);
}

static kiln_status_t reference(run_t *r) {
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_parse_module("graph", r->graph.text, kiln_allocator_system(), &module));
  kiln_status_t status = kiln_interp_run(module, "main", r->graph.num_vars, r->inputs,
                                         kiln_allocator_system(), &r->num_want, &r->want);
  kiln_module_destroy(module);
  return status;
}

/* Whether `got` is `want` within the tolerance; the first bad element's
 * index in *out_index otherwise. */
static bool close_enough(const kiln_tensor_t *got, const kiln_tensor_t *want, double rtol,
                         int64_t *out_index) {
  int64_t count = kiln_tensor_element_count(want);
  double scale = 0;
  for (int64_t i = 0; i < count; ++i) {
    double w = kiln_tensor_element_as_double(want, i);
    scale = isfinite(w) && fabs(w) > scale ? fabs(w) : scale;
  }
  double atol = 1e-6 + 1e-5 * scale;
  for (int64_t i = 0; i < count; ++i) {
    double g = kiln_tensor_element_as_double(got, i), w = kiln_tensor_element_as_double(want, i);
    bool same =
        (isnan(g) && isnan(w)) || (isinf(w) && g == w) || fabs(g - w) <= atol + rtol * fabs(w);
    if (!same) {
      *out_index = i;
      return false;
    }
  }
  return true;
}

static kiln_status_t check_output(const run_t *r, int o, const kiln_tensor_t *got) {
  const kiln_tensor_t *want = r->want[o];
  if (kiln_tensor_dtype(got) != kiln_tensor_dtype(want) ||
      !kiln_shape_equal(kiln_tensor_ndim(got), kiln_tensor_shape(got), kiln_tensor_ndim(want),
                        kiln_tensor_shape(want))) {
    return KILN_STATUS(INTERNAL, "output %d: dtype or shape differs from the reference's", o);
  }
  double rtol = r->graph.transcendental ? 1e-2 : 1e-3;
  int64_t bad = 0;
  if (close_enough(got, want, rtol, &bad)) {
    return KILN_OK;
  }
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(kiln_tensor_ndim(want), kiln_tensor_shape(want), shape, sizeof(shape));
  return KILN_STATUS(INTERNAL,
                     "output %d %s: element %" PRId64 " is %.9g compiled, %.9g in the reference "
                     "(rtol %g)",
                     o, shape, bad, kiln_tensor_element_as_double(got, bad),
                     kiln_tensor_element_as_double(want, bad), rtol);
}

static kiln_status_t set_inputs(const run_t *r, kiln_graph_executor_t *executor) {
  for (int i = 0; i < r->graph.num_vars; ++i) {
    int index = -1;
    kiln_status_t status = kiln_graph_executor_input_index(executor, r->graph.vars[i].name, &index);
    if (status) { /* an input the compiler found unused */
      kiln_status_free(status);
      continue;
    }
    KILN_RETURN_IF_ERROR(
        kiln_graph_executor_set_input(executor, index, kiln_tensor_dl(r->inputs[i])));
  }
  return KILN_OK;
}

static kiln_status_t run_compiled(const run_t *r, kiln_compiled_t *compiled) {
  kiln_graph_executor_t *executor = NULL;
  KILN_RETURN_IF_ERROR(kiln_compiled_create_executor(compiled, &executor));
  kiln_status_t status = set_inputs(r, executor);
  if (!status) {
    status = kiln_graph_executor_run(executor);
  }
  if (!status && kiln_graph_executor_num_outputs(executor) != r->num_want) {
    status = KILN_STATUS(INTERNAL, "%d outputs, the reference has %d",
                         kiln_graph_executor_num_outputs(executor), r->num_want);
  }
  for (int o = 0; !status && o < r->num_want; ++o) {
    kiln_tensor_t *got = NULL;
    status = kiln_graph_executor_copy_output(executor, o, kiln_allocator_system(), &got);
    if (!status) {
      status = check_output(r, o, got);
    }
    kiln_tensor_release(got);
  }
  kiln_graph_executor_destroy(executor);
  return status;
}

static kiln_status_t compile_and_check(const run_t *r, const char *target) {
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_parse_module("graph", r->graph.text, kiln_allocator_system(), &module));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  kiln_compiled_t *compiled = NULL;
  kiln_status_t status = kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled);
  kiln_module_destroy(module);
  if (!status) {
    status = run_compiled(r, compiled);
  }
  kiln_compiled_destroy(compiled);
  return kiln_status_annotate(status, "target \"%s\"", target);
}

static void report(uint64_t seed, const run_t *r, kiln_status_t status, bool known) {
  printf("%s seed %" PRIu64 " (%s): %s\n", known ? "KNOWN" : "FINDING", seed, r->graph.ops,
         kiln_status_message(status));
  if (!known) {
    printf("--- graph of seed %" PRIu64 " ---\n%s--- end ---\n", seed, r->graph.text);
  }
}

/* The self-check (--perturb): every graph must then be a finding. */
static void perturb(kiln_tensor_t *want) {
  if (kiln_tensor_dtype(want) == KILN_DTYPE_FLOAT32 && kiln_tensor_element_count(want) > 0) {
    float *x = kiln_tensor_data(want);
    x[0] = x[0] * 1.01f + 0.01f;
  } else if (kiln_tensor_element_count(want) > 0 && kiln_tensor_dtype(want) == KILN_DTYPE_BOOL) {
    unsigned char *x = kiln_tensor_data(want);
    x[0] = !x[0];
  }
}

/* Runs seed `seed`; false on a finding. */
static bool run_seed(const options_t *o, uint64_t seed, bool with_c, bool known, stats_t *s) {
  run_t r = {0};
  kiln_status_t status = kiln_diff_generate(kiln_allocator_system(), seed, o->max_calls, &r.graph);
  if (status) { /* no call was accepted: nothing to compare */
    kiln_status_free(status);
    run_free(&r);
    return true;
  }
  uint64_t rng = seed ^ 0x5eedda7a5eedda7aull;
  for (int i = 0; !status && i < r.graph.num_vars; ++i) {
    status = make_input(&r.graph.vars[i], &rng, &r.inputs[i]);
  }
  if (!status && (status = reference(&r)) != NULL) {
    printf("seed %" PRIu64 ": the reference refuses the graph: %s\n", seed,
           kiln_status_message(status));
    s->reference_refused++;
    kiln_status_free(status);
    run_free(&r);
    return true;
  }
  if (!status && o->perturb) {
    perturb(r.want[0]);
  }
  s->graphs++;
  s->calls += r.graph.num_calls;
  s->rejected += r.graph.num_rejected;
  if (!status) {
    status = compile_and_check(&r, o->target);
  }
  if (!status && with_c) {
    s->c_graphs++;
    status = compile_and_check(&r, "c");
  }
  bool ok = status == NULL;
  if (status) {
    report(seed, &r, status, known);
    kiln_status_free(status);
  }
  run_free(&r);
  return ok;
}

/* ---- the corpus ---- */

static void replay_corpus(const options_t *o, stats_t *s) {
  FILE *file = fopen(o->corpus, "r");
  if (!file) {
    printf("corpus %s: cannot open it\n", o->corpus);
    s->failures++;
    return;
  }
  char line[512];
  while (fgets(line, sizeof(line), file)) {
    char *end = NULL;
    if (line[0] < '0' || line[0] > '9') {
      continue;
    }
    uint64_t seed = strtoull(line, &end, 10);
    bool known = strncmp(end, " known", 6) == 0;
    bool ok = run_seed(o, seed, true, known, s);
    s->failures += !ok && !known;
    s->known_failures += !ok && known;
    if (ok && known) {
      printf("corpus seed %" PRIu64 " passes now: drop its 'known'\n", seed);
      s->known_passing++;
    }
  }
  fclose(file);
}

/* ---- main ---- */

static void print_uncovered(void *user, const char *op, const char *why) {
  (void)user;
  printf("  uncovered: %s (%s)\n", op, why);
}

static bool parse_options(int argc, char **argv, options_t *o) {
  *o = (options_t){.seconds = 60,
                   .count = -1,
                   .seed = 1,
                   .target = "llvm -jit -noasm",
                   .c_every = 8,
                   .max_calls = 12};
  for (int i = 1; i < argc; ++i) {
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--perturb") == 0) {
      o->perturb = true;
      continue;
    }
    if (strcmp(argv[i], "--print") == 0 && value) {
      o->print_only = true;
      o->seed = strtoull(value, NULL, 10);
    } else if (value && strcmp(argv[i], "--seconds") == 0) {
      o->seconds = atof(value);
    } else if (value && strcmp(argv[i], "--count") == 0) {
      o->count = atol(value);
    } else if (value && strcmp(argv[i], "--seed") == 0) {
      o->seed = strtoull(value, NULL, 10);
    } else if (value && strcmp(argv[i], "--corpus") == 0) {
      o->corpus = value;
    } else if (value && strcmp(argv[i], "--target") == 0) {
      o->target = value;
    } else if (value && strcmp(argv[i], "--c-every") == 0) {
      o->c_every = atoi(value);
    } else if (value && strcmp(argv[i], "--max-calls") == 0) {
      o->max_calls = atoi(value);
    } else {
      fprintf(stderr, "kiln_diff_fuzz: unknown option %s\n", argv[i]);
      return false;
    }
    ++i;
  }
  return true;
}

int main(int argc, char **argv) {
  options_t o;
  if (!parse_options(argc, argv, &o)) {
    return 2;
  }
  if (strncmp(kiln_compiler_default_target(), "llvm", 4) != 0 &&
      strncmp(o.target, "llvm", 4) == 0) {
    o.target = "c";
  }
  if (o.print_only) {
    kiln_diff_graph_t graph;
    kiln_status_t status = kiln_diff_generate(kiln_allocator_system(), o.seed, o.max_calls, &graph);
    printf("%s", status ? kiln_status_message(status) : graph.text);
    kiln_diff_graph_deinitialize(kiln_allocator_system(), &graph);
    return status ? 1 : 0;
  }
  double start = now();
  stats_t s = {0};
  if (o.corpus) {
    replay_corpus(&o, &s);
  }
  long corpus_graphs = s.graphs;
  for (uint64_t seed = o.seed; (o.count < 0 || (long)(seed - o.seed) < o.count) &&
                               (o.count >= 0 || now() - start < o.seconds);
       ++seed) {
    bool with_c = o.c_every > 0 && (seed - o.seed) % (uint64_t)o.c_every == 0;
    s.failures += !run_seed(&o, seed, with_c, false, &s);
  }
  printf("kiln_diff_fuzz: %ld graphs (%ld from the corpus, %ld also through the C backend), %ld "
         "calls (%ld refused by type relations while generating), %ld refused by the reference; "
         "%ld findings, %ld known still failing, %ld known passing now; %.1f s\n",
         s.graphs, corpus_graphs, s.c_graphs, s.calls, s.rejected, s.reference_refused, s.failures,
         s.known_failures, s.known_passing, now() - start);
  kiln_diff_uncovered(print_uncovered, NULL);
  return s.failures > 0 ? 1 : 0;
}
