/*
 * The pass context and Sequential (pass.h).
 *
 * The context owns copies of every string it is given: the disabled and
 * required pass names and the options, in small arrays searched linearly (a
 * run has a handful of each). kiln_pass_sequential_run keeps the names of
 * the passes that ran in this sequence, so a pass's required passes run once,
 * before the first pass that needs them, and never again in the same run;
 * requirements are followed recursively with a depth limit that turns a
 * cycle into an error instead of a stack overflow.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/array.h"
#include "ir/verify.h"
#include "pass/pass.h"

/* Deeper requirement chains than this are a cycle. */
#define KILN_PASS_MAX_REQUIRE_DEPTH 16

typedef struct option_t {
  char *key;
  char *value;
} option_t;

struct kiln_pass_context_t {
  kiln_allocator_t allocator;
  int opt_level;
  bool verify;
  kiln_array_t disabled;    /* char * */
  kiln_array_t required;    /* char * */
  kiln_array_t options;     /* option_t */
  kiln_array_t instruments; /* kiln_pass_instrument_t */
  kiln_schedule_target_t target;
};

kiln_status_t kiln_pass_context_create(kiln_allocator_t allocator, int opt_level,
                                       kiln_pass_context_t **out_context) {
  *out_context = NULL;
  if (opt_level < 0 || opt_level > 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "opt_level %d is out of range: expected 0 to 3",
                       opt_level);
  }
  kiln_pass_context_t *context = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_zeroed(allocator, sizeof(*context), (void **)&context));
  context->allocator = allocator;
  context->opt_level = opt_level;
  context->target = kiln_schedule_target_host();
  kiln_array_initialize(&context->disabled, allocator, sizeof(char *));
  kiln_array_initialize(&context->required, allocator, sizeof(char *));
  kiln_array_initialize(&context->options, allocator, sizeof(option_t));
  kiln_array_initialize(&context->instruments, allocator, sizeof(kiln_pass_instrument_t));
  *out_context = context;
  return KILN_OK;
}

static void free_names(kiln_pass_context_t *context, kiln_array_t *names) {
  for (size_t i = 0; i < kiln_array_count(names); ++i) {
    kiln_allocator_free(context->allocator, *(char **)kiln_array_at(names, i));
  }
  kiln_array_deinitialize(names);
}

void kiln_pass_context_set_target(kiln_pass_context_t *context,
                                  const kiln_schedule_target_t *target) {
  context->target = *target;
  context->target.config = NULL;
  context->target.out_space = NULL;
}

const kiln_schedule_target_t *kiln_pass_context_target(const kiln_pass_context_t *context) {
  return &context->target;
}

void kiln_pass_context_destroy(kiln_pass_context_t *context) {
  if (!context) {
    return;
  }
  free_names(context, &context->disabled);
  free_names(context, &context->required);
  for (size_t i = 0; i < kiln_array_count(&context->options); ++i) {
    option_t *option = kiln_array_at(&context->options, i);
    kiln_allocator_free(context->allocator, option->key);
    kiln_allocator_free(context->allocator, option->value);
  }
  kiln_array_deinitialize(&context->options);
  kiln_array_deinitialize(&context->instruments);
  kiln_allocator_free(context->allocator, context);
}

int kiln_pass_context_opt_level(const kiln_pass_context_t *context) {
  return context->opt_level;
}

static bool names_contain(const kiln_array_t *names, const char *name) {
  for (size_t i = 0; i < kiln_array_count(names); ++i) {
    if (strcmp(*(char **)kiln_array_at(names, i), name) == 0) {
      return true;
    }
  }
  return false;
}

/* Adds a copy of `name` to `names` once; the pass must exist. */
static kiln_status_t add_pass_name(kiln_pass_context_t *context, kiln_array_t *names,
                                   const char *name) {
  const kiln_pass_t *pass = NULL;
  KILN_RETURN_IF_ERROR(kiln_pass_find(name, &pass));
  if (names_contain(names, name)) {
    return KILN_OK;
  }
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(context->allocator, name, &copy));
  kiln_status_t status = kiln_array_push(names, &copy);
  if (status) {
    kiln_allocator_free(context->allocator, copy);
  }
  return status;
}

kiln_status_t kiln_pass_context_disable(kiln_pass_context_t *context, const char *pass_name) {
  return add_pass_name(context, &context->disabled, pass_name);
}

kiln_status_t kiln_pass_context_require(kiln_pass_context_t *context, const char *pass_name) {
  return add_pass_name(context, &context->required, pass_name);
}

static option_t *find_option(const kiln_pass_context_t *context, const char *key) {
  for (size_t i = 0; i < kiln_array_count(&context->options); ++i) {
    option_t *option = kiln_array_at(&context->options, i);
    if (strcmp(option->key, key) == 0) {
      return option;
    }
  }
  return NULL;
}

kiln_status_t kiln_pass_context_set_option(kiln_pass_context_t *context, const char *key,
                                           const char *value) {
  char *value_copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(context->allocator, value, &value_copy));
  option_t *existing = find_option(context, key);
  if (existing) {
    kiln_allocator_free(context->allocator, existing->value);
    existing->value = value_copy;
    return KILN_OK;
  }
  option_t option = {.key = NULL, .value = value_copy};
  kiln_status_t status = kiln_allocator_strdup(context->allocator, key, &option.key);
  if (!status) {
    status = kiln_array_push(&context->options, &option);
  }
  if (status) {
    kiln_allocator_free(context->allocator, option.key);
    kiln_allocator_free(context->allocator, value_copy);
  }
  return status;
}

const char *kiln_pass_context_option(const kiln_pass_context_t *context, const char *key,
                                     const char *fallback) {
  const option_t *option = find_option(context, key);
  return option ? option->value : fallback;
}

kiln_status_t kiln_pass_context_option_int(const kiln_pass_context_t *context, const char *key,
                                           int64_t fallback, int64_t *out_value) {
  *out_value = fallback;
  const option_t *option = find_option(context, key);
  if (!option) {
    return KILN_OK;
  }
  char *end = NULL;
  errno = 0;
  long long value = strtoll(option->value, &end, 10);
  if (errno != 0 || end == option->value || *end != '\0') {
    return KILN_STATUS(INVALID_ARGUMENT, "option %s = \"%s\" is not an integer", key,
                       option->value);
  }
  *out_value = value;
  return KILN_OK;
}

void kiln_pass_context_set_verify(kiln_pass_context_t *context, bool verify) {
  context->verify = verify;
}

kiln_status_t kiln_pass_context_add_instrument(kiln_pass_context_t *context,
                                               const kiln_pass_instrument_t *instrument) {
  return kiln_array_push(&context->instruments, instrument);
}

/* ---- Sequential ---- */

typedef struct sequence_t {
  kiln_module_t *module;
  kiln_pass_context_t *context;
  const kiln_pass_t *done[64]; /* passes that ran in this sequence */
  int num_done;
} sequence_t;

static bool has_run(const sequence_t *sequence, const kiln_pass_t *pass) {
  for (int i = 0; i < sequence->num_done; ++i) {
    if (sequence->done[i] == pass) {
      return true;
    }
  }
  return false;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one pass with the instruments around it and the verifier after it. */
static kiln_status_t run_instrumented(sequence_t *sequence, const kiln_pass_t *pass) {
  kiln_pass_context_t *context = sequence->context;
  size_t num_instruments = kiln_array_count(&context->instruments);
  for (size_t i = 0; i < num_instruments; ++i) {
    const kiln_pass_instrument_t *instrument = kiln_array_at(&context->instruments, i);
    if (instrument->before) {
      instrument->before(instrument->user, pass, sequence->module);
    }
  }
  double start = now_seconds();
  kiln_status_t status = pass->run(sequence->module, context);
  double seconds = now_seconds() - start;
  for (size_t i = 0; i < num_instruments; ++i) {
    const kiln_pass_instrument_t *instrument = kiln_array_at(&context->instruments, i);
    if (instrument->after) {
      instrument->after(instrument->user, pass, sequence->module, status, seconds);
    }
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(status, "%s", pass->info.name);
  if (context->verify) {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_ir_verify(sequence->module), "IR after pass %s",
                                  pass->info.name);
  }
  if (sequence->num_done == (int)(sizeof(sequence->done) / sizeof(sequence->done[0]))) {
    return KILN_STATUS(RESOURCE_EXHAUSTED, "more than %d passes in one sequence",
                       sequence->num_done);
  }
  sequence->done[sequence->num_done++] = pass;
  return KILN_OK;
}

/* Runs `pass` after whichever of its required passes have not run yet. */
static kiln_status_t run_with_requirements(sequence_t *sequence, const kiln_pass_t *pass,
                                           int depth) {
  if (depth > KILN_PASS_MAX_REQUIRE_DEPTH) {
    return KILN_STATUS(FAILED_PRECONDITION, "pass %s: required passes form a cycle",
                       pass->info.name);
  }
  for (const char *const *name = pass->info.required; name && *name; ++name) {
    const kiln_pass_t *required = NULL;
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_pass_find(*name, &required), "required by pass %s",
                                  pass->info.name);
    if (!has_run(sequence, required)) {
      KILN_RETURN_IF_ERROR(run_with_requirements(sequence, required, depth + 1));
    }
  }
  return run_instrumented(sequence, pass);
}

static bool should_run(const kiln_pass_context_t *context, const kiln_pass_t *pass) {
  if (names_contain(&context->required, pass->info.name)) {
    return true;
  }
  return pass->info.opt_level <= context->opt_level &&
         !names_contain(&context->disabled, pass->info.name);
}

kiln_status_t kiln_pass_sequential_run(kiln_module_t *module, kiln_pass_context_t *context,
                                       const kiln_pass_t *const *passes, int num_passes) {
  sequence_t sequence = {.module = module, .context = context, .num_done = 0};
  for (int i = 0; i < num_passes; ++i) {
    if (should_run(context, passes[i])) {
      KILN_RETURN_IF_ERROR(run_with_requirements(&sequence, passes[i], 0));
    }
  }
  return KILN_OK;
}
