/*
 * The pass manager (Relay's Sequential with opt_level and required
 * passes; NNVM's ApplyPasses over a graph).
 *
 * A pass is a const kiln_pass_t: its info (name, the lowest opt_level at
 * which it runs, the passes it requires) and a function that rewrites a
 * module in place (kiln_module_set_function with the new body; the old nodes
 * stay in the module's arena until the module is destroyed). Each pass lives
 * in its own file src/pass/<name>.c and exports `kiln_pass_<name>`; the list
 * of every pass, by name, is kiln_pass_find's table (pass_registry.c).
 *
 * A context carries what a run is configured with: the opt_level (0..3,
 * default 2), passes disabled by name, passes required by name (run whatever
 * the opt_level), named options ("fuse_ops.max_depth" = "256",
 * "fast_math" = "1"), and instruments called before and after each pass
 * (a timer, an IR printer). kiln_pass_sequential_run runs a list of passes
 * as Sequential does: a pass is skipped when its opt_level is above the
 * context's, or it is disabled, unless it is required; a pass's own required
 * passes run before it when they have not run yet in this sequence; with
 * verification on (tests and CI turn it on) the IR verifier
 * (ir/verify.h) runs after every pass and a failure names the pass.
 */
#ifndef KILN_PASS_PASS_H_
#define KILN_PASS_PASS_H_

#include "ir/expr.h"
#include "op/compute.h"

typedef struct kiln_pass_context_t kiln_pass_context_t;

typedef struct kiln_pass_info_t {
  const char *name;            /* "fuse_ops" */
  int opt_level;               /* runs when the context's opt_level >= this */
  const char *const *required; /* names of passes to run first; NULL-terminated, or NULL */
} kiln_pass_info_t;

typedef struct kiln_pass_t {
  kiln_pass_info_t info;
  kiln_status_t (*run)(kiln_module_t *module, kiln_pass_context_t *context);
} kiln_pass_t;

/* Instruments: called around every pass that runs (not around skipped ones).
 * `after` gets the pass's status and the seconds it took. */
typedef struct kiln_pass_instrument_t {
  void *user;
  void (*before)(void *user, const kiln_pass_t *pass, const kiln_module_t *module);
  void (*after)(void *user, const kiln_pass_t *pass, const kiln_module_t *module,
                kiln_status_t status, double seconds);
} kiln_pass_instrument_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_pass_context_create(kiln_allocator_t allocator,
                                                            int opt_level,
                                                            kiln_pass_context_t **out_context);
void kiln_pass_context_destroy(kiln_pass_context_t *context);
int kiln_pass_context_opt_level(const kiln_pass_context_t *context);
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_context_disable(kiln_pass_context_t *context,
                                                             const char *pass_name);
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_context_require(kiln_pass_context_t *context,
                                                             const char *pass_name);
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_context_set_option(kiln_pass_context_t *context,
                                                                const char *key, const char *value);
/* The option's value, or `fallback` when it is not set. */
const char *kiln_pass_context_option(const kiln_pass_context_t *context, const char *key,
                                     const char *fallback);
/* The option as an integer; INVALID_ARGUMENT naming the key when it is not one. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_context_option_int(const kiln_pass_context_t *context,
                                                                const char *key, int64_t fallback,
                                                                int64_t *out_value);
void kiln_pass_context_set_verify(kiln_pass_context_t *context, bool verify);
/* The CPU the module is compiled for (op/compute.h), which the layout
 * passes block and pack for; the host until set. */
void kiln_pass_context_set_target(kiln_pass_context_t *context,
                                  const kiln_schedule_target_t *target);
const kiln_schedule_target_t *kiln_pass_context_target(const kiln_pass_context_t *context);
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_context_add_instrument(
    kiln_pass_context_t *context, const kiln_pass_instrument_t *instrument);

/* The pass named `name`; NOT_FOUND listing the known names. */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_find(const char *name, const kiln_pass_t **out_pass);

/* Runs `passes` in order under `context` (see the top of the file). An error
 * is prefixed with the pass's name: "fuse_ops: ...". */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_sequential_run(kiln_module_t *module,
                                                            kiln_pass_context_t *context,
                                                            const kiln_pass_t *const *passes,
                                                            int num_passes);

#endif /* KILN_PASS_PASS_H_ */
