/*
 * kiln_tune (kiln/tune.h): the tasks, the budget and the search.
 *
 * Tasks. The model is compiled once with the given options; each distinct
 * kernel (graph_codegen's kernels, by key) whose schedule reports a space
 * (op/schedule_config.h) is a task, weighted by its calls per run. Its
 * default configuration is measured first (tune_measure.h), so that every
 * task has a baseline and a record.
 *
 * Budget. The next measurement goes to the task with the largest
 * weight / (1 + trials), the weight being the default's time times the
 * calls: each task gets trials in proportion to its share of the run,
 * the simplest form of Ansor's task scheduler (which also weighs the
 * recent improvement; docs/tuning.md says why not yet). The run ends at
 * the time budget, the trial budget, the stop flag, or when every task's
 * space is spent.
 *
 * Search. A candidate is, with even odds once a task has a best, a
 * mutation of that best (one knob, sometimes two, moved to another of
 * their choices) or a uniform random point; points that are invalid for
 * the space or already measured are drawn again (a bounded number of
 * times: a small space ends). An evolutionary search without a cost
 * model: one kernel's measurement costs about a second, so a few hundred
 * per run are affordable and a model trained on so few points would
 * guide little (docs/tuning.md).
 *
 * Verification. The least of many noisy measurements is biased low, and
 * the machine drifts over a run, so a candidate's win over a default
 * measured minutes earlier may be noise. The search stops at 85% of the
 * time budget; then each task's best and its default are measured again,
 * interleaved, three times each, and a verified record keeps the best only
 * when its median beats the default's (else the default). A compile
 * prefers verified records.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/hashmap.h"
#include "base/strbuf.h"
#include "compiler/build.h"
#include "compiler/tune_layout.h"
#include "compiler/tune_measure.h"
#include "compiler/tuning.h"
#include "kiln/tune.h"
#include "kiln/version.h"

#define DRAWS_PER_CANDIDATE 400
/* Measurements of the default and of the best each, interleaved, when a
 * task's best is verified; and the share of the time budget kept for it. */
#define VERIFY_ROUNDS 3
#define VERIFY_SHARE  0.15
/* The share of the time budget the graph-level knobs may take first. */
#define LAYOUT_SHARE 0.25

typedef struct task_t {
  kiln_tune_kernel_t kernel;
  kiln_schedule_space_t space;
  char id[KILN_TUNING_TASK_CHARS];
  int calls;
  kiln_hashmap_t seen; /* formatted configs measured */
  bool spent;
  kiln_schedule_config_t best;
  bool have_best;
  kiln_tune_task_report_t *report;
} task_t;

typedef struct tuner_t {
  const kiln_tune_options_t *options;
  const char *records;
  const char *target;
  uint64_t random;
  double start;
  int num_tasks;
  task_t *tasks;
  kiln_tune_report_t *report;
  int64_t evict_bytes; /* per thread, for KILN_TUNE_CACHE_SHARED */
} tuner_t;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t next_random(tuner_t *t) {
  t->random ^= t->random << 13;
  t->random ^= t->random >> 7;
  t->random ^= t->random << 17;
  return t->random;
}

kiln_tune_options_t kiln_tune_options_default(void) {
  kiln_tune_options_t options;
  memset(&options, 0, sizeof(options));
  options.model = kiln_model_options_default();
  options.compile = kiln_compiler_options_default();
  options.minutes = 10;
  options.threads = 1;
  options.timeout_seconds = 20;
  return options;
}

/* ---- records and progress ---- */

/* Appends the task's record of `config` measured at `ms` against the
 * default at `default_ms`. */
static kiln_status_t append_record(const tuner_t *t, const task_t *task,
                                   const kiln_schedule_config_t *config, double ms,
                                   double default_ms, bool verified) {
  kiln_tuning_record_t record = {.task = task->id,
                                 .kernel = task->kernel.name,
                                 .target = t->target,
                                 .version = kiln_version_string(),
                                 .config = *config,
                                 .time_ms = ms,
                                 .default_ms = default_ms,
                                 .verified = verified};
  return kiln_tuning_append(t->records, &record);
}

static void progress(const tuner_t *t, const task_t *task, const kiln_tune_result_t *r) {
  FILE *out = t->options->progress;
  if (!out) {
    return;
  }
  const kiln_tune_task_report_t *rep = task->report;
  double minutes = t->options->minutes;
  double left = minutes > 0 ? minutes * 60 - (now_seconds() - t->start) : 0;
  if (r->ok) {
    fprintf(out, "kiln tune: %-40.40s trial %3d: %8.4f ms  best %8.4f  default %8.4f", rep->kernel,
            rep->trials, r->median_ms, rep->best_ms, rep->default_ms);
  } else {
    fprintf(out, "kiln tune: %-40.40s trial %3d: failed (%.80s)", rep->kernel, rep->trials,
            r->message);
  }
  fprintf(out, minutes > 0 ? "  | %d trials, %.0f s left\n" : "  | %d trials\n", t->report->trials,
          left > 0 ? left : 0);
  fflush(out);
}

/* ---- one measurement ---- */

/* Marks `config` as measured for the task; false when it already was. */
static kiln_status_t mark_seen(task_t *task, const kiln_schedule_config_t *config, bool *out_new) {
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, kiln_allocator_system());
  kiln_status_t status = kiln_schedule_config_format(config, &text);
  *out_new = !status && !kiln_hashmap_contains(&task->seen, kiln_strbuf_c_str(&text));
  if (*out_new) {
    status = kiln_hashmap_put(&task->seen, kiln_strbuf_c_str(&text), NULL);
  }
  kiln_strbuf_deinitialize(&text);
  return status;
}

static void set_best(task_t *task, const kiln_schedule_config_t *config, double ms) {
  kiln_strbuf_t text;
  kiln_strbuf_initialize(&text, kiln_allocator_system());
  task->best = *config;
  task->have_best = true;
  task->report->best_ms = ms;
  if (!kiln_schedule_config_format(config, &text)) {
    snprintf(task->report->config, sizeof(task->report->config), "%s", kiln_strbuf_c_str(&text));
  }
  kiln_strbuf_deinitialize(&text);
}

static kiln_status_t measure(tuner_t *t, task_t *task, const kiln_schedule_config_t *config) {
  kiln_tune_result_t r;
  KILN_RETURN_IF_ERROR(kiln_tune_measure(&task->kernel, config, &r));
  ++task->report->trials;
  ++t->report->trials;
  if (!r.ok) {
    ++task->report->failed;
  } else {
    if (task->report->trials == 1) {
      task->report->default_ms = r.median_ms;
    }
    KILN_RETURN_IF_ERROR(
        append_record(t, task, config, r.median_ms, task->report->default_ms, false));
    if (!task->have_best || r.median_ms < task->report->best_ms) {
      set_best(task, config, r.median_ms);
    }
  }
  progress(t, task, &r);
  return KILN_OK;
}

/* ---- candidates ---- */

static kiln_schedule_config_t random_point(tuner_t *t, const kiln_schedule_space_t *space) {
  kiln_schedule_config_t c = space->default_config;
  int n = kiln_schedule_template_num_knobs(c.template_id);
  for (int i = 0; i < n; ++i) {
    c.values[i] = space->choices[i][next_random(t) % (uint64_t)space->num_choices[i]];
  }
  return c;
}

static kiln_schedule_config_t mutate(tuner_t *t, const task_t *task) {
  kiln_schedule_config_t c = task->best;
  int n = kiln_schedule_template_num_knobs(c.template_id);
  int moves = next_random(t) % 4 == 0 ? 2 : 1;
  for (int m = 0; m < moves; ++m) {
    int knob = (int)(next_random(t) % (uint64_t)n);
    int choices = task->space.num_choices[knob];
    c.values[knob] = task->space.choices[knob][next_random(t) % (uint64_t)choices];
  }
  return c;
}

/* A valid point not measured yet; false when the draws ran out. */
static kiln_status_t propose(tuner_t *t, task_t *task, kiln_schedule_config_t *out_config,
                             bool *out_found) {
  *out_found = false;
  for (int draw = 0; draw < DRAWS_PER_CANDIDATE && !*out_found; ++draw) {
    bool mutated = task->have_best && next_random(t) % 2 == 0;
    *out_config = mutated ? mutate(t, task) : random_point(t, &task->space);
    if (kiln_schedule_space_valid(&task->space, out_config)) {
      KILN_RETURN_IF_ERROR(mark_seen(task, out_config, out_found));
    }
  }
  return KILN_OK;
}

/* ---- the budget ---- */

static bool out_of_budget(const tuner_t *t) {
  const kiln_tune_options_t *o = t->options;
  if (o->stop && *o->stop) {
    t->report->stopped = 1;
    return true;
  }
  if (o->trials > 0 && t->report->trials >= o->trials) {
    return true;
  }
  return o->minutes > 0 && now_seconds() - t->start >= o->minutes * 60 * (1 - VERIFY_SHARE);
}

/* The task whose share of trials lags its share of the run most, or NULL. */
static task_t *next_task(tuner_t *t) {
  task_t *pick = NULL;
  double pick_score = -1;
  for (int i = 0; i < t->num_tasks; ++i) {
    task_t *task = &t->tasks[i];
    double weight = task->report->default_ms * task->calls;
    double score = weight / (1.0 + task->report->trials);
    if (!task->spent && task->have_best && score > pick_score) {
      pick = task;
      pick_score = score;
    }
  }
  return pick;
}

static kiln_status_t search(tuner_t *t) {
  for (task_t *task = NULL; !out_of_budget(t) && (task = next_task(t)) != NULL;) {
    kiln_schedule_config_t config;
    bool found = false;
    KILN_RETURN_IF_ERROR(propose(t, task, &config, &found));
    if (!found) {
      task->spent = true;
      continue;
    }
    KILN_RETURN_IF_ERROR(measure(t, task, &config));
  }
  return KILN_OK;
}

/* ---- tasks ---- */

static kiln_status_t add_task(tuner_t *t, const kiln_compiled_t *compiled, int i,
                              const kiln_schedule_space_t *space) {
  task_t *task = &t->tasks[t->num_tasks];
  kiln_tune_task_report_t *report = &t->report->tasks[t->num_tasks++];
  memset(task, 0, sizeof(*task));
  task->space = *space;
  task->calls = compiled->graph.func_calls[i];
  task->report = report;
  kiln_tuning_task_of(compiled->graph.func_keys[i], task->id);
  kiln_hashmap_initialize(&task->seen, kiln_allocator_system(), KILN_HASHMAP_KEY_STRING);
  snprintf(report->task, sizeof(report->task), "%s", task->id);
  snprintf(report->kernel, sizeof(report->kernel), "%s", compiled->graph.funcs[i]->name);
  report->calls = task->calls;
  task->kernel.function = compiled->graph.functions[i];
  task->kernel.name = compiled->graph.funcs[i]->name;
  task->kernel.target = t->target;
  task->kernel.threads = t->options->threads;
  task->kernel.timeout_seconds = t->options->timeout_seconds;
  task->kernel.cache = t->report->cache;
  task->kernel.evict_bytes = t->evict_bytes;
  KILN_RETURN_IF_ERROR(kiln_tune_kernel_prepare(kiln_allocator_system(),
                                                t->options->seed + (uint64_t)i, &task->kernel));
  bool fresh = false;
  KILN_RETURN_IF_ERROR(mark_seen(task, &space->default_config, &fresh));
  return measure(t, task, &space->default_config);
}

/* The tunable kernels of `compiled` as tasks, each with its default measured. */
static kiln_status_t make_tasks(tuner_t *t, const kiln_compiled_t *compiled) {
  int n = compiled->graph.num_funcs;
  t->report->kernels = n;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(
      kiln_allocator_system(), (size_t)(n + 1) * sizeof(task_t), (void **)&t->tasks));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(
      t->report->allocator, (size_t)(n + 1) * sizeof(kiln_tune_task_report_t),
      (void **)&t->report->tasks));
  for (int i = 0; i < n && !out_of_budget(t); ++i) {
    kiln_tune_kernel_t probe = {.function = compiled->graph.functions[i],
                                .name = compiled->graph.funcs[i]->name};
    kiln_schedule_space_t space;
    KILN_RETURN_IF_ERROR(kiln_tune_kernel_space(&probe, &space));
    if (space.default_config.template_id != KILN_SCHEDULE_TEMPLATE_NONE) {
      KILN_RETURN_IF_ERROR_ANNOTATE(add_task(t, compiled, i, &space), "kernel %s",
                                    compiled->graph.funcs[i]->name);
    }
  }
  t->report->num_tasks = t->num_tasks;
  return KILN_OK;
}

static void free_tasks(tuner_t *t) {
  for (int i = 0; i < t->num_tasks; ++i) {
    kiln_tune_kernel_deinitialize(&t->tasks[i].kernel);
    kiln_hashmap_deinitialize(&t->tasks[i].seen);
  }
  kiln_allocator_free(kiln_allocator_system(), t->tasks);
}

/* ---- verification ---- */

/* Measures `config` once more into values[*count] when it succeeds. */
static kiln_status_t remeasure(const task_t *task, const kiln_schedule_config_t *config,
                               double *values, int *count) {
  kiln_tune_result_t r;
  KILN_RETURN_IF_ERROR(kiln_tune_measure(&task->kernel, config, &r));
  if (r.ok) {
    values[(*count)++] = r.median_ms;
  }
  return KILN_OK;
}

/* The verified record: the best if it beat the default measured at the same
 * time, else the default. */
static kiln_status_t append_verified(tuner_t *t, task_t *task, double default_ms,
                                     const kiln_schedule_config_t *config, double ms) {
  task->report->default_ms = default_ms;
  set_best(task, config, ms);
  if (t->options->progress) {
    fprintf(t->options->progress, "kiln tune: %-40.40s verified: %8.4f ms, default %8.4f\n",
            task->report->kernel, ms, default_ms);
  }
  return append_record(t, task, config, ms, default_ms, true);
}

/* The task's best and its default measured again, interleaved: the least
 * of many noisy measurements is biased low, and the machine drifts over a
 * run. */
static kiln_status_t verify(tuner_t *t, task_t *task) {
  const kiln_schedule_config_t *def = &task->space.default_config;
  bool same = kiln_schedule_config_equal(&task->best, def);
  double d[VERIFY_ROUNDS], b[VERIFY_ROUNDS];
  int nd = 0, nb = 0;
  for (int r = 0; r < VERIFY_ROUNDS; ++r) {
    KILN_RETURN_IF_ERROR(remeasure(task, def, d, &nd));
    if (!same) {
      KILN_RETURN_IF_ERROR(remeasure(task, &task->best, b, &nb));
    }
  }
  if (nd == 0) {
    return KILN_OK;
  }
  double default_ms = kiln_tune_median(d, nd);
  double best_ms = nb > 0 ? kiln_tune_median(b, nb) : default_ms;
  bool better = !same && nb > 0 && best_ms < default_ms;
  kiln_schedule_config_t best = task->best;
  return append_verified(t, task, default_ms, better ? &best : def, better ? best_ms : default_ms);
}

static kiln_status_t verify_all(tuner_t *t) {
  for (int i = 0; i < t->num_tasks; ++i) {
    if (t->options->stop && *t->options->stop) {
      t->report->stopped = 1;
      return KILN_OK;
    }
    if (t->tasks[i].have_best) {
      KILN_RETURN_IF_ERROR(verify(t, &t->tasks[i]));
    }
  }
  return KILN_OK;
}

/* ---- the cache the weights come from ---- */

/* The bytes of the model's constants (its params). */
static int64_t constant_bytes(const kiln_compiled_t *compiled) {
  int64_t bytes = 0;
  for (int i = 0; i < compiled->graph.num_params; ++i) {
    bytes += (int64_t)kiln_tensor_byte_size(compiled->graph.params[i]);
  }
  return bytes;
}

/* Resolves AUTO: in a model, a kernel's weights were last read a run ago;
 * they are still in the cores' private caches when all the model's
 * constants fit in them, else in the last-level cache when they fit in
 * half of it, else they come from memory. A thread overwrites its core's
 * private caches with twice the L2 (4 MiB when it is not known). */
static void resolve_cache(tuner_t *t, const kiln_compiled_t *compiled) {
  kiln_tune_report_t *r = t->report;
  kiln_schedule_target_t host = kiln_schedule_target_host(); /* candidates run here */
  int64_t l2 = host.l2_bytes;
  int threads = t->options->threads > 0 ? t->options->threads : 1;
  r->constant_bytes = constant_bytes(compiled);
  r->private_cache_bytes = l2 * threads;
  r->shared_cache_bytes = host.shared_cache_bytes;
  r->cache = t->options->cache;
  if (r->cache == KILN_TUNE_CACHE_AUTO) {
    bool shared = r->shared_cache_bytes > 0 && 2 * r->constant_bytes <= r->shared_cache_bytes;
    r->cache = l2 > 0 && r->constant_bytes <= r->private_cache_bytes ? KILN_TUNE_CACHE_PRIVATE
               : shared                                              ? KILN_TUNE_CACHE_SHARED
                                                                     : KILN_TUNE_CACHE_MEMORY;
  }
  t->evict_bytes = 2 * (l2 > 0 ? l2 : (int64_t)2 << 20);
}

static kiln_status_t tune_compiled(tuner_t *t, const kiln_compiled_t *compiled) {
  resolve_cache(t, compiled);
  kiln_status_t status = make_tasks(t, compiled);
  if (!status) {
    status = search(t);
  }
  if (!status) {
    status = verify_all(t);
  }
  free_tasks(t);
  return status;
}

/* The layout search's deadline: LAYOUT_SHARE of the time budget, none
 * without one; --trials bounds its choices instead. */
static double layout_deadline(const tuner_t *t) {
  const kiln_tune_options_t *o = t->options;
  return o->minutes > 0 ? t->start + o->minutes * 60 * LAYOUT_SHARE : t->start + 1e9;
}

/* The graph-level knobs (tune_layout.c) searched first; when some beat
 * their default, the model is compiled again with them, so the kernels
 * tuned next are those of the chosen layouts. */
static kiln_status_t tune_layouts(tuner_t *t, const char *model,
                                  const kiln_compiler_options_t *compile, kiln_model_t **inout_m,
                                  kiln_compiled_t **inout_compiled) {
  if (!(*inout_compiled)->layouts) {
    return KILN_OK;
  }
  resolve_cache(t, *inout_compiled);
  kiln_tune_layout_search_t s = {.allocator = t->report->allocator,
                                 .model = model,
                                 .model_options = &t->options->model,
                                 .compile = compile,
                                 .baseline = *inout_compiled,
                                 .options = t->options,
                                 .records = t->records,
                                 .target = t->target,
                                 .cache = t->report->cache,
                                 .evict_bytes = t->evict_bytes,
                                 .deadline = layout_deadline(t)};
  for (const kiln_compiled_layout_t *l = s.baseline->layouts; l; l = l->next) {
    t->report->layouts++;
  }
  kiln_status_t status = kiln_tune_layouts(&s);
  t->report->layouts_tuned = s.num_chosen;
  t->report->layout_trials = s.trials;
  if (!status && s.num_chosen > 0) {
    kiln_compiler_options_t chosen = *compile;
    chosen.tuning_records = s.chosen_path;
    kiln_compiled_destroy(*inout_compiled);
    kiln_model_destroy(*inout_m);
    *inout_compiled = NULL;
    *inout_m = NULL;
    status = kiln_tune_layout_compile(&s, &chosen, inout_m, inout_compiled);
  }
  if (s.chosen_path[0]) {
    remove(s.chosen_path);
  }
  return status;
}

static kiln_status_t check_options(const kiln_tune_options_t *o) {
  if (o->minutes < 0 || !isfinite(o->minutes) || o->trials < 0 || o->threads < 0 ||
      o->timeout_seconds < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "tune: minutes, trials, threads and timeout must not "
                                         "be negative");
  }
  if (o->cache < KILN_TUNE_CACHE_AUTO || o->cache > KILN_TUNE_CACHE_PRIVATE) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "tune: cache must be auto, memory, shared or private, got %d",
                       (int)o->cache);
  }
  if (o->compile.target && strstr(o->compile.target, "-mtriple")) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "tune: target '%s' names another machine; kiln tune measures on this "
                       "one (tune on the machine you deploy to)",
                       o->compile.target);
  }
  if (o->compile.target && strstr(o->compile.target, "-jit")) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "tune: target '%s' is a JIT; tune for the target you compile with "
                       "(llvm, llvm -mcpu=..., c ...)",
                       o->compile.target);
  }
  return KILN_OK;
}

kiln_status_t kiln_tune(kiln_allocator_t allocator, const char *model, const char *records_path,
                        const kiln_tune_options_t *options, kiln_tune_report_t *out_report) {
  memset(out_report, 0, sizeof(*out_report));
  out_report->allocator = allocator;
  kiln_tune_options_t defaults = kiln_tune_options_default();
  options = options ? options : &defaults;
  KILN_RETURN_IF_ERROR(check_options(options));
  kiln_model_t *m = NULL;
  kiln_compiled_t *compiled = NULL;
  tuner_t t = {.options = options, .records = records_path, .report = out_report};
  t.start = now_seconds();
  t.random = options->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  t.target = options->compile.target ? options->compile.target : kiln_compiler_default_target();
  kiln_compiler_options_t compile = options->compile;
  compile.private_kernels = true;
  compile.tuning_records = NULL; /* each task starts from its default */
  kiln_status_t status = kiln_model_load(allocator, model, &options->model, &m);
  if (!status) {
    status = kiln_model_compile(m, &compile, &compiled);
  }
  if (!status) {
    status = tune_layouts(&t, model, &compile, &m, &compiled);
  }
  if (!status) {
    status = tune_compiled(&t, compiled);
  }
  out_report->seconds = now_seconds() - t.start;
  kiln_compiled_destroy(compiled);
  kiln_model_destroy(m);
  return status;
}

void kiln_tune_report_deinitialize(kiln_tune_report_t *report) {
  kiln_allocator_free(report->allocator, report->tasks);
  report->tasks = NULL;
  report->num_tasks = 0;
}
