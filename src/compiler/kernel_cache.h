/*
 * The kernel cache: one compiled kernel per (target, operator, attributes,
 * input types), shared by every executor that runs single operators (the
 * eager VM now, the graph compiler's per-operator kernels later).
 *
 * A key is the text "target|op|attrs|input types" built by one function
 * (kiln_kernel_cache_key), so that a later kind of key (a fused function)
 * is one more case there. Looking a key up (kiln_kernel_cache_lookup) finds
 * its entry or makes one: the entry keeps its own copies of the attributes
 * (parsed again from their text spelling into the cache's arena) and of the
 * input types, and the output types the type relation infers, so callers
 * need neither after the lookup. Nothing is compiled then.
 *
 * An entry is compiled on its first run (kiln_kernel_cache_prepare), on
 * whichever thread runs it: kiln_op_lower with the host's schedule target,
 * kiln_tir_lower_pipeline, then kiln_codegen_build for the cache's target
 * into a runtime module the entry keeps. A second thread that wants the
 * same entry while it compiles waits for that compile instead of starting
 * its own (a state word and a condition variable), so a key compiles once.
 * A kernel that cannot be compiled (UNIMPLEMENTED: an operator or dtype a
 * code generator refuses) falls back to the operator's reference kernel,
 * and the entry records the fallback so the compile is not tried again;
 * any other compile error comes back to the caller and the next run tries
 * again. With `reference_only` (or KILN_KERNELS=reference, read by the
 * eager environment) every entry takes the reference kernel at once: tests
 * and overhead benchmarks that must not spend their time in a C compiler.
 *
 * One mutex guards the table; a lookup that hits costs the key's text and
 * one hash lookup. Entries live until the cache is destroyed.
 */
#ifndef KILN_COMPILER_KERNEL_CACHE_H_
#define KILN_COMPILER_KERNEL_CACHE_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "ir/type.h"
#include "kiln/module.h"
#include "op/op.h"

/* The default code-generation target of kernels. */
#define KILN_KERNEL_CACHE_DEFAULT_TARGET "c -march=native"

typedef struct kiln_kernel_cache_t kiln_kernel_cache_t;

typedef struct kiln_kernel_cache_options_t {
  const char *target;  /* a codegen target string; NULL: the default */
  bool reference_only; /* never compile: every kernel is the reference one */
} kiln_kernel_cache_options_t;

/* How an entry runs once prepared. */
typedef enum kiln_kernel_path_e {
  KILN_KERNEL_PATH_UNRESOLVED, /* not compiled yet */
  KILN_KERNEL_PATH_COMPILED,   /* generated code from the target */
  KILN_KERNEL_PATH_REFERENCE,  /* the operator's reference kernel */
  KILN_KERNEL_PATH_COUNT_
} kiln_kernel_path_t;

const char *kiln_kernel_path_name(kiln_kernel_path_t path);

/* One entry. The public fields never change after the lookup that made it. */
typedef struct kiln_kernel_t {
  const char *key;
  const kiln_op_t *op;
  const void *attrs; /* the cache's copy; NULL for an operator with none */
  int num_inputs;
  const kiln_type_t *const *input_types;
  const kiln_type_t *output_type;                /* a tensor or a tuple */
  int num_outputs;                               /* tuple fields flattened */
  const kiln_tensor_type_t *const *output_types; /* num_outputs */
} kiln_kernel_t;

typedef struct kiln_kernel_cache_stats_t {
  int64_t entries;
  int64_t compiled;  /* entries that run generated code */
  int64_t reference; /* entries that fell back (or were told) to the reference */
  int64_t compiles;  /* code-generator builds run (failed ones included) */
} kiln_kernel_cache_stats_t;

/* `options` may be NULL: the defaults. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_kernel_cache_create(kiln_allocator_t allocator, const kiln_kernel_cache_options_t *options,
                         kiln_kernel_cache_t **out_cache);
/* Frees every entry and its module. NULL is a no-op. */
void kiln_kernel_cache_destroy(kiln_kernel_cache_t *cache);

const char *kiln_kernel_cache_target(const kiln_kernel_cache_t *cache);
bool kiln_kernel_cache_reference_only(const kiln_kernel_cache_t *cache);

/* Appends the key of an operator call: "target|op|attrs|type,type". Every
 * kind of key is built here. */
KILN_MUST_USE_RESULT kiln_status_t kiln_kernel_cache_key(const char *target, const kiln_op_t *op,
                                                         const void *attrs, int num_inputs,
                                                         const kiln_type_t *const *input_types,
                                                         kiln_strbuf_t *sb);

/* The entry of the call, made on a miss after its type relation accepted
 * the inputs (its error, naming the operator, comes back otherwise). */
KILN_MUST_USE_RESULT kiln_status_t kiln_kernel_cache_lookup(kiln_kernel_cache_t *cache,
                                                            const kiln_op_t *op, const void *attrs,
                                                            int num_inputs,
                                                            const kiln_type_t *const *input_types,
                                                            const kiln_kernel_t **out_kernel);

/* Compiles the entry when that has not been done (once, whatever the
 * threads); its path after. */
KILN_MUST_USE_RESULT kiln_status_t kiln_kernel_cache_prepare(kiln_kernel_cache_t *cache,
                                                             const kiln_kernel_t *kernel,
                                                             kiln_kernel_path_t *out_path);
/* The entry's path now (UNRESOLVED before the first prepare). */
kiln_kernel_path_t kiln_kernel_cache_path(const kiln_kernel_t *kernel);

/* Prepares, then runs the kernel on tensors of the entry's input and output
 * types (outputs written in place). Errors name the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_kernel_cache_run(kiln_kernel_cache_t *cache,
                                                         const kiln_kernel_t *kernel,
                                                         kiln_tensor_t *const *inputs,
                                                         kiln_tensor_t *const *outputs);

void kiln_kernel_cache_get_stats(kiln_kernel_cache_t *cache, kiln_kernel_cache_stats_t *out_stats);

#endif /* KILN_COMPILER_KERNEL_CACHE_H_ */
