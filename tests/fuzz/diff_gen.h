/*
 * The graph generator of the differential fuzzer (diff_fuzz.c): from a seed,
 * a small valid random graph as IR text (docs/text-format.md), and its
 * inputs' specs.
 *
 * A graph is grown one operator call at a time. Each step picks an
 * operator from the registry's table (op_list.h) and asks its recipe (a
 * table in diff_gen.c, keyed by the registry's name) for the call: inputs
 * picked among the values made so far or fresh parameters (or, for
 * weights, constants), shapes and attributes drawn at random within what
 * the operator accepts. The registry then judges the call: the text so far
 * plus the call is parsed, which runs the operator's type relation, and a
 * call it refuses is dropped (counted as rejected) with the parameters and
 * constants it made; a call it accepts gets its output type from the
 * relation, not from the recipe. The body returns the values nothing reads
 * (a tuple of up to four).
 *
 * Values carry an "exact" flag: parameters, and what exact-preserving
 * operators (data movement, relu, abs, max, comparisons, ...) make of exact
 * values. Operators with jumps (floor, round, sign, comparisons, mod,
 * argmax, thresholds) only take exact values, so one ulp of difference in
 * a compiled intermediate cannot flip their result; argmax, argmin and topk
 * take parameters only (distinct values, no ties). Operators with a
 * restricted domain (log, sqrt, asin, acosh, division, power, ...) take
 * their input through a clip into the domain, so every value is finite.
 * Whether a graph holds a transcendental operator is reported for the
 * comparison's tolerance. Everything comes from the seed alone.
 */
#ifndef KILN_TESTS_FUZZ_DIFF_GEN_H_
#define KILN_TESTS_FUZZ_DIFF_GEN_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "kiln/tensor.h"

enum { KILN_DIFF_MAX_VARS = 32, KILN_DIFF_MAX_RANK = 5 };

/* How a parameter's values are drawn. */
typedef enum kiln_diff_range_e {
  KILN_DIFF_RANGE_FLOAT,    /* uniform in [-2, 2) */
  KILN_DIFF_RANGE_POSITIVE, /* uniform in [0.5, 2) (variances) */
  KILN_DIFF_RANGE_INDEX,    /* integers in [lo, hi] */
} kiln_diff_range_t;

typedef struct kiln_diff_var_t {
  char name[16]; /* without the % */
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[KILN_DIFF_MAX_RANK];
  kiln_diff_range_t range;
  int64_t lo, hi;
} kiln_diff_var_t;

typedef struct kiln_diff_graph_t {
  char *text; /* the module's IR text (allocator's) */
  int num_vars;
  kiln_diff_var_t vars[KILN_DIFF_MAX_VARS];
  int num_calls;       /* operator calls in the graph */
  int num_rejected;    /* calls the type relations refused */
  bool transcendental; /* exp, log, trig, pow, erf, ...: a looser tolerance */
  char ops[512];       /* the operators called, space separated */
} kiln_diff_graph_t;

/* Generates the graph of `seed` with up to `max_calls` calls. */
KILN_MUST_USE_RESULT kiln_status_t kiln_diff_generate(kiln_allocator_t allocator, uint64_t seed,
                                                      int max_calls, kiln_diff_graph_t *out_graph);
void kiln_diff_graph_deinitialize(kiln_allocator_t allocator, kiln_diff_graph_t *graph);

/* Operators of the registry the generator has no recipe for, with why, one
 * per call of `visit` (for the docs and the report). */
void kiln_diff_uncovered(void (*visit)(void *user, const char *op, const char *why), void *user);

/* splitmix64: the one random stream, for the generator and the inputs. */
uint64_t kiln_diff_next(uint64_t *state);

#endif /* KILN_TESTS_FUZZ_DIFF_GEN_H_ */
