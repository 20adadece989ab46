/*
 * kiln_tune_layouts (tune_layout.h): graph-level knobs, searched before
 * the kernels' own.
 *
 * A pass that lays a constant out for the kernel after it (pack_dense's
 * column block) asks the target's find_layout for a record of its
 * workload (build.c), and the compile notes every workload asked with its
 * space. Such a knob changes which kernels the model has, and the kernels
 * around them (a product's block decides which core wrote which columns
 * the next kernel reads), so a point, a block per workload, is measured
 * on the whole model: compiled (the model with a records file holding the
 * point's blocks), run on made-up inputs with --threads threads, and timed
 * in LAYOUT_ROUNDS rounds against the other points of its stage, every
 * point once a round. A point's score is the median over the rounds of
 * its time over the stage's first point's (the current state) in the same
 * round: the machine drifts between rounds, not within one. The best
 * point is taken when its score is below LAYOUT_MIN_GAIN.
 *
 * Stages: first every workload at one block (where that block is among
 * its choices), each whole number of vectors against the rules' blocks
 * (the products of one model tend to want the same tile, and a joint
 * change is what a greedy search one workload at a time would miss); then
 * each workload in the graph's order, its other blocks against the state
 * so far. At the end each workload gets a verified record of its block
 * (the model's times with the chosen blocks and with the rules'), and the
 * chosen ones also go to a temporary file of their own, which the kernel
 * search compiles with, so that the kernels it tunes are those of the
 * chosen layouts and the kernels' records match a later compile with the
 * user's file. The compiled kernels are the compiler's own default
 * schedules, so they run in this process; only the kernel search runs
 * candidates in children. TVM takes its alter-layout choices (dense_pack's
 * tile_x, conv2d_NCHWc's tile_ic and tile_oc) from the tuning records the
 * same way.
 */
#define _POSIX_C_SOURCE 200809L

#include "compiler/tune_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/tune_measure.h"
#include "compiler/tuning.h"
#include "kiln/compiler.h"
#include "kiln/model.h"
#include "kiln/parallel.h"
#include "kiln/runtime.h"
#include "kiln/version.h"
#include "op/nn_conv_compute.h"

/* Rounds of runs each choice gets, and a round's runs. */
#define LAYOUT_ROUNDS        15
#define LAYOUT_ROUND_SECONDS 0.05
#define LAYOUT_MIN_RUNS      3
#define LAYOUT_MAX_RUNS      200
/* A choice is taken when the model runs in less than this share of the
 * default's time (the median of the rounds' ratios): at least 1% faster. */
#define LAYOUT_MIN_GAIN 0.995
/* Workloads searched at most (the first in the graph). */
#define LAYOUT_MAX_WORKLOADS 64

double kiln_tune_layout_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* An empty temporary file; its path in `path`. */
static kiln_status_t temp_file(char path[64]) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, 64, "%s/kiln-tune-XXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    return KILN_STATUS(INTERNAL, "kiln tune: cannot make a temporary file %s", path);
  }
  close(fd);
  return KILN_OK;
}

static kiln_tuning_record_t layout_record(const kiln_tune_layout_search_t *s, const char *task,
                                          const char *workload,
                                          const kiln_schedule_config_t *config) {
  return (kiln_tuning_record_t){.task = task,
                                .kernel = workload,
                                .target = s->target,
                                .version = kiln_version_string(),
                                .config = *config};
}

kiln_status_t kiln_tune_layout_compile(const kiln_tune_layout_search_t *s,
                                       const kiln_compiler_options_t *compile,
                                       kiln_model_t **out_model, kiln_compiled_t **out_compiled) {
  *out_compiled = NULL;
  KILN_RETURN_IF_ERROR(kiln_model_load(s->allocator, s->model, s->model_options, out_model));
  kiln_status_t status = kiln_model_compile(*out_model, compile, out_compiled);
  if (status) {
    kiln_model_destroy(*out_model);
    *out_model = NULL;
  }
  return status;
}

/* The state of the search: the workloads in the graph's order, the block
 * chosen for each so far, and the model's time with them. */
typedef struct state_t {
  kiln_tune_layout_search_t *s;
  const char *path; /* a temporary records file for each compile */
  const kiln_compiled_layout_t *layouts[LAYOUT_MAX_WORKLOADS];
  int count;
  int64_t chosen[LAYOUT_MAX_WORKLOADS];
  double model_ms, default_model_ms;
} state_t;

/* One point: a block per workload, its compile and executor, and the
 * model's run time (ms, a median of runs) in each round. */
typedef struct choice_t {
  int64_t blocks[LAYOUT_MAX_WORKLOADS];
  kiln_model_t *model;
  kiln_compiled_t *compiled;
  kiln_graph_executor_t *gx;
  double round_ms[LAYOUT_ROUNDS];
} choice_t;

static int64_t default_block(const state_t *st, int i) {
  return st->layouts[i]->space.default_config.values[0];
}

static kiln_schedule_config_t block_config(int64_t block) {
  return (kiln_schedule_config_t){.template_id = KILN_SCHEDULE_TEMPLATE_DENSE_PACK,
                                  .values = {block}};
}

/* `path` rewritten with a record per workload whose block is not its
 * default; `verified` and the times for the user's file. */
static kiln_status_t write_records(const state_t *st, const char *path, const int64_t *blocks,
                                   bool all, double ms, double default_ms) {
  for (int i = 0; i < st->count; ++i) {
    if (!all && blocks[i] == default_block(st, i)) {
      continue;
    }
    char task[KILN_TUNING_TASK_CHARS];
    kiln_tuning_task_of(st->layouts[i]->workload, task);
    kiln_schedule_config_t config = block_config(blocks[i]);
    kiln_tuning_record_t record = layout_record(st->s, task, st->layouts[i]->workload, &config);
    record.time_ms = blocks[i] == default_block(st, i) ? default_ms : ms;
    record.default_ms = default_ms;
    record.verified = all;
    KILN_RETURN_IF_ERROR(kiln_tuning_append(path, &record));
  }
  return KILN_OK;
}

static kiln_status_t empty_file(const char *path) {
  FILE *f = fopen(path, "w"); /* our own temporary file */
  if (!f || fclose(f) != 0) {
    return KILN_STATUS(INTERNAL, "kiln tune: cannot write %s", path);
  }
  return KILN_OK;
}

static void choice_destroy(choice_t *c) {
  kiln_graph_executor_destroy(c->gx);
  kiln_compiled_destroy(c->compiled);
  kiln_model_destroy(c->model);
}

/* Input `i` made up: float32 uniform in [-1, 1) from `state`, other dtypes
 * zeros; UNIMPLEMENTED for a dim known only at run time. */
static kiln_status_t set_made_up_input(kiln_graph_executor_t *gx, int i, uint64_t *state) {
  kiln_graph_executor_tensor_info_t info;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_input_info(gx, i, &info));
  for (int d = 0; d < info.ndim; ++d) {
    if (info.shape[d] < 0) {
      return KILN_STATUS(UNIMPLEMENTED, "input %s has a dim known only at run time", info.name);
    }
  }
  kiln_tensor_t *t = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(kiln_allocator_system(), info.dtype, info.ndim, info.shape, &t));
  kiln_tune_fill_uniform(t, state);
  kiln_status_t status = kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(t));
  kiln_tensor_release(t);
  return status;
}

/* The point compiled (the model with its records) and ready to run. */
static kiln_status_t choice_create(state_t *st, choice_t *c) {
  KILN_RETURN_IF_ERROR(empty_file(st->path));
  KILN_RETURN_IF_ERROR(write_records(st, st->path, c->blocks, false, 0, 0));
  kiln_compiler_options_t options = *st->s->compile;
  options.tuning_records = st->path;
  KILN_RETURN_IF_ERROR(kiln_tune_layout_compile(st->s, &options, &c->model, &c->compiled));
  st->s->trials++;
  KILN_RETURN_IF_ERROR(kiln_compiled_create_executor(c->compiled, &c->gx));
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < kiln_graph_executor_num_inputs(c->gx); ++i) {
    KILN_RETURN_IF_ERROR(set_made_up_input(c->gx, i, &state));
  }
  return kiln_graph_executor_run(c->gx); /* a warm-up */
}

/* One round of a choice: runs for LAYOUT_ROUND_SECONDS (LAYOUT_MIN_RUNS to
 * LAYOUT_MAX_RUNS of them); their median. */
static kiln_status_t time_round(choice_t *c, double *out_ms) {
  double ms[LAYOUT_MAX_RUNS];
  int n = 0;
  double start = kiln_tune_layout_now();
  while (n < LAYOUT_MIN_RUNS ||
         (n < LAYOUT_MAX_RUNS && kiln_tune_layout_now() - start < LAYOUT_ROUND_SECONDS)) {
    double t0 = kiln_tune_layout_now();
    KILN_RETURN_IF_ERROR(kiln_graph_executor_run(c->gx));
    ms[n++] = (kiln_tune_layout_now() - t0) * 1e3;
  }
  *out_ms = kiln_tune_median(ms, n);
  return KILN_OK;
}

/* The rounds: every point once a round, from a different first point
 * each round, so that none always follows the same one. */
static kiln_status_t time_rounds(choice_t *choices, int count) {
  for (int r = 0; r < LAYOUT_ROUNDS; ++r) {
    for (int j = 0; j < count; ++j) {
      choice_t *c = &choices[(r + j) % count];
      KILN_RETURN_IF_ERROR(time_round(c, &c->round_ms[r]));
    }
  }
  return KILN_OK;
}

/* The median over the rounds of the point's time against the first's
 * (the current state) in the same round. */
static double ratio_to_first(const choice_t *choices, const choice_t *c) {
  double ratios[LAYOUT_ROUNDS];
  for (int r = 0; r < LAYOUT_ROUNDS; ++r) {
    ratios[r] = c->round_ms[r] / choices[0].round_ms[r];
  }
  return kiln_tune_median(ratios, LAYOUT_ROUNDS);
}

static double median_ms(const choice_t *c) {
  double ms[LAYOUT_ROUNDS];
  memcpy(ms, c->round_ms, sizeof(ms));
  return kiln_tune_median(ms, LAYOUT_ROUNDS);
}

static bool out_of_time(const kiln_tune_layout_search_t *s) {
  return kiln_tune_layout_now() >= s->deadline || (s->options->stop && *s->options->stop) ||
         (s->options->trials > 0 && s->trials >= s->options->trials);
}

/* Whether `c`'s outputs are `first`'s (rtol 1e-3, atol 1e-4: a block
 * changes the order of the sums); a point whose outputs differ is never
 * taken, and is named on the progress stream. */
static kiln_status_t same_outputs(const kiln_tune_layout_search_t *s, const choice_t *first,
                                  const choice_t *c, bool *out_same) {
  *out_same = true;
  for (int o = 0; *out_same && o < kiln_graph_executor_num_outputs(first->gx); ++o) {
    kiln_tensor_t *want = NULL, *got = NULL;
    kiln_status_t status =
        kiln_graph_executor_copy_output(first->gx, o, kiln_allocator_system(), &want);
    if (!status) {
      status = kiln_graph_executor_copy_output(c->gx, o, kiln_allocator_system(), &got);
    }
    kiln_status_t differ = status ? KILN_OK : kiln_tensor_allclose(want, got, 1e-3, 1e-4);
    *out_same = !differ;
    if (differ && s->options->progress) {
      fprintf(s->options->progress,
              "kiln tune: a block point's output %d differs from the "
              "rule's: %s\n",
              o, kiln_status_message(differ));
    }
    kiln_status_free(differ);
    kiln_tensor_release(want);
    kiln_tensor_release(got);
    KILN_RETURN_IF_ERROR(status);
  }
  return KILN_OK;
}

/* The points compiled, timed in rounds, and the best taken when it makes
 * the model at least 1 - LAYOUT_MIN_GAIN faster than the first (the
 * current state); the model's times kept. */
static kiln_status_t run_stage(state_t *st, choice_t *choices, int count) {
  kiln_status_t status = KILN_OK;
  int made = 0;
  for (; !status && made < count && (made < 2 || !out_of_time(st->s)); ++made) {
    status = choice_create(st, &choices[made]);
  }
  if (!status && made > 1) {
    status = time_rounds(choices, made);
  }
  int best = 0;
  double best_ratio = 1;
  for (int j = 1; !status && j < made; ++j) {
    bool same = false;
    status = same_outputs(st->s, &choices[0], &choices[j], &same);
    double ratio = same ? ratio_to_first(choices, &choices[j]) : 2;
    best = ratio < best_ratio ? j : best;
    best_ratio = ratio < best_ratio ? ratio : best_ratio;
  }
  if (!status && made > 1) {
    best = best_ratio < LAYOUT_MIN_GAIN ? best : 0;
    memcpy(st->chosen, choices[best].blocks, sizeof(st->chosen));
    st->model_ms = median_ms(&choices[best]);
    st->default_model_ms = st->default_model_ms > 0 ? st->default_model_ms : median_ms(&choices[0]);
  }
  for (int j = 0; j < made; ++j) {
    choice_destroy(&choices[j]);
  }
  return status;
}

/* Stage one: every workload at the same block (where it is one of its
 * choices), against every workload at its rule's: the products of a
 * model tend to want the same tile. */
static int uniform_points(const state_t *st, choice_t *choices) {
  int count = 1;
  memcpy(choices[0].blocks, st->chosen, sizeof(st->chosen));
  for (int64_t v = 1; v <= KILN_SCHEDULE_GEMM_MAX_VECTORS; ++v) {
    choice_t *c = &choices[count];
    bool changes = false;
    for (int i = 0; i < st->count; ++i) {
      const kiln_schedule_space_t *space = &st->layouts[i]->space;
      int64_t block = v * space->lanes;
      bool among = false;
      for (int k = 0; k < space->num_choices[0]; ++k) {
        among |= space->choices[0][k] == block;
      }
      c->blocks[i] = among ? block : st->chosen[i];
      changes |= c->blocks[i] != st->chosen[i];
    }
    count += changes;
  }
  return count;
}

/* Stage two, per workload in the graph's order: each other block of its
 * space, the others' blocks as chosen so far. */
static int workload_points(const state_t *st, int i, choice_t *choices) {
  const kiln_schedule_space_t *space = &st->layouts[i]->space;
  int count = 1;
  memcpy(choices[0].blocks, st->chosen, sizeof(st->chosen));
  for (int k = 0; k < space->num_choices[0]; ++k) {
    if (space->choices[0][k] != st->chosen[i]) {
      memcpy(choices[count].blocks, st->chosen, sizeof(st->chosen));
      choices[count++].blocks[i] = space->choices[0][k];
    }
  }
  return count;
}

static kiln_status_t search(state_t *st, choice_t *choices) {
  int count = uniform_points(st, choices);
  KILN_RETURN_IF_ERROR(run_stage(st, choices, count));
  for (int i = 0; i < st->count && !out_of_time(st->s); ++i) {
    memset(choices, 0, sizeof(choice_t) * (KILN_SCHEDULE_MAX_CHOICES + 1));
    count = workload_points(st, i, choices);
    KILN_RETURN_IF_ERROR(run_stage(st, choices, count));
  }
  return KILN_OK;
}

/* The verified records, one per workload (its chosen block, the model's
 * time with the choices and with every rule's block), to the user's file,
 * and the chosen ones alone to chosen_path. */
static kiln_status_t finish(state_t *st) {
  kiln_tune_layout_search_t *s = st->s;
  for (int i = 0; i < st->count; ++i) {
    s->num_chosen += st->chosen[i] != default_block(st, i);
    if (s->options->progress) {
      fprintf(s->options->progress, "kiln tune: %-40.40s block %lld (rule %lld)\n",
              st->layouts[i]->workload, (long long)st->chosen[i], (long long)default_block(st, i));
    }
  }
  if (s->options->progress) {
    fprintf(s->options->progress,
            "kiln tune: model %.4f ms with these blocks, %.4f ms with the "
            "rule's\n",
            st->model_ms, st->default_model_ms);
  }
  if (st->default_model_ms <= 0) {
    return KILN_OK; /* nothing measured */
  }
  KILN_RETURN_IF_ERROR(
      write_records(st, s->records, st->chosen, true, st->model_ms, st->default_model_ms));
  return write_records(st, s->chosen_path, st->chosen, false, st->model_ms, st->default_model_ms);
}

/* The workloads in the graph's order (the compile's list is the last
 * asked first), each at its rule's block. */
static void collect(state_t *st) {
  for (const kiln_compiled_layout_t *l = st->s->baseline->layouts; l; l = l->next) {
    st->count += st->count < LAYOUT_MAX_WORKLOADS;
  }
  int i = st->count;
  for (const kiln_compiled_layout_t *l = st->s->baseline->layouts; l && i > 0; l = l->next) {
    st->layouts[--i] = l;
  }
  for (i = 0; i < st->count; ++i) {
    st->chosen[i] = default_block(st, i);
  }
}

kiln_status_t kiln_tune_layouts(kiln_tune_layout_search_t *s) {
  s->num_chosen = 0;
  KILN_RETURN_IF_ERROR(
      kiln_parallel_set_num_threads(s->options->threads > 0 ? s->options->threads : 1));
  KILN_RETURN_IF_ERROR(temp_file(s->chosen_path));
  char path[64];
  KILN_RETURN_IF_ERROR(temp_file(path));
  state_t st = {.s = s, .path = path};
  collect(&st);
  choice_t *choices = NULL;
  kiln_status_t status = kiln_allocator_malloc_zeroed(
      kiln_allocator_system(), sizeof(choice_t) * (KILN_SCHEDULE_MAX_CHOICES + 1),
      (void **)&choices);
  if (!status) {
    status = search(&st, choices);
  }
  if (status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
    kiln_status_free(status); /* run-time input dims: not searched */
    status = KILN_OK;
    st.default_model_ms = 0;
  }
  if (!status) {
    status = finish(&st);
  }
  kiln_allocator_free(kiln_allocator_system(), choices);
  remove(path);
  return status;
}
