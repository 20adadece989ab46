/*
 * The kernel cache: one compiled kernel per (code target, function key),
 * shared by everything in the process that compiles kernels: the eager VM's
 * single operator calls and the graph compiler's fused functions.
 *
 * Entries live in a store. The process has one shared store, made by the
 * first cache that asks for it (options.shared) and freed when the last one
 * is destroyed: the eager environment holds one for its life, the graph
 * compiler one per compiled model, so kernels live while anything that
 * could use them again does. A cache that is not shared has a store of its
 * own (tests that count compiles). A cache is a view on a store with its
 * own target, reference-only switch and counts.
 *
 * A key is "code target|function key": the target string without the words
 * that only say how code is delivered (kiln_codegen_target_code: "llvm
 * -jit" and "llvm" make the same code) and the graph compiler's key of a
 * primitive function (key.h). An operator call is keyed as the function of
 * that one call (call_function.h), so an eager call and a graph-compiler
 * kernel of one operator over the same types are one entry, whichever came
 * first.
 *
 * Looking a call up (kiln_kernel_cache_lookup) finds its entry or makes one
 * after the operator's type relation accepted the inputs; the entry keeps
 * its own copies of the attributes (parsed again from their text spelling
 * into the store's arena) and input types, and the output types, so
 * callers need neither after the lookup. Nothing is compiled then.
 *
 * An entry is compiled on its first run (kiln_kernel_cache_prepare), on
 * whichever thread runs it: the call's function lowered by the graph
 * compiler's lowering with the host's schedule target,
 * kiln_tir_lower_pipeline, then kiln_codegen_build for the cache's target
 * into a runtime module the entry keeps. A second thread that wants the
 * same entry while it compiles waits for that compile instead of starting
 * its own, so a key compiles once. A kernel that cannot be compiled
 * (UNIMPLEMENTED: an operator or dtype a code generator refuses) falls back
 * to the operator's reference kernel, and the entry records the fallback so
 * the compile is not tried again; any other compile error comes back to the
 * caller and the next run tries again. A reference-only cache
 * (KILN_KERNELS=reference, read by the eager environment) runs every
 * call's reference kernel and never compiles or touches an entry's path:
 * tests and overhead benchmarks that must not spend their time compiling.
 *
 * The graph compiler offers what it compiled (kiln_kernel_cache_add_compiled)
 * and takes what is there (kiln_kernel_cache_find_compiled) by function key.
 *
 * One mutex per store guards its table; a lookup that hits costs the key
 * (the call's function built and keyed) and one hash lookup; the eager VM
 * keeps a memo in front of it. Entries live until their store is freed.
 */
#ifndef KILN_COMPILER_KERNEL_CACHE_H_
#define KILN_COMPILER_KERNEL_CACHE_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "ir/type.h"
#include "kiln/module.h"
#include "op/op.h"

/* The default code-generation target of kernels: kiln_codegen_default_jit_target(). */

typedef struct kiln_kernel_cache_t kiln_kernel_cache_t;

typedef struct kiln_kernel_cache_options_t {
  const char *target;  /* a codegen target string; NULL: the default */
  bool reference_only; /* never compile: every kernel is the reference one */
  bool shared;         /* the process's shared store, not one of its own */
} kiln_kernel_cache_options_t;

/* How an entry runs once prepared. */
typedef enum kiln_kernel_path_e {
  KILN_KERNEL_PATH_UNRESOLVED, /* not compiled yet */
  KILN_KERNEL_PATH_COMPILED,   /* generated code from the target */
  KILN_KERNEL_PATH_REFERENCE,  /* the operator's reference kernel */
  KILN_KERNEL_PATH_COUNT_
} kiln_kernel_path_t;

const char *kiln_kernel_path_name(kiln_kernel_path_t path);

/* One entry. The public fields are set by the first call lookup that meets
 * it and never change after (an entry the graph compiler added has none
 * before). */
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

/* What one cache (view) did; not the store's totals. */
typedef struct kiln_kernel_cache_stats_t {
  int64_t lookups;   /* call lookups and kiln_kernel_cache_find_compiled */
  int64_t entries;   /* entries its lookups made */
  int64_t hits;      /* lookups that met an entry compiled already (by anyone) */
  int64_t compiled;  /* entries it compiled */
  int64_t reference; /* entries it saw fall back to the reference (or all, reference-only) */
  int64_t compiles;  /* code-generator builds it ran (failed ones included) */
} kiln_kernel_cache_stats_t;

/* `options` may be NULL: the defaults. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_kernel_cache_create(kiln_allocator_t allocator, const kiln_kernel_cache_options_t *options,
                         kiln_kernel_cache_t **out_cache);
/* Drops the view; the store's entries and modules go with the last view
 * of the store. NULL is a no-op. */
void kiln_kernel_cache_destroy(kiln_kernel_cache_t *cache);

const char *kiln_kernel_cache_target(const kiln_kernel_cache_t *cache);
bool kiln_kernel_cache_reference_only(const kiln_kernel_cache_t *cache);
bool kiln_kernel_cache_shared(const kiln_kernel_cache_t *cache);
/* Entries in the cache's store (every view's). */
int64_t kiln_kernel_cache_store_entries(kiln_kernel_cache_t *cache);

/* Appends the key of an operator call: "code target|function key" of the
 * call's function. The graph compiler's keys are the same text over its
 * functions (kiln_compiler_function_key), the cache adding the prefix. */
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
/* The entry's path now as this cache runs it (UNRESOLVED before the first
 * prepare; REFERENCE always for a reference-only cache). */
kiln_kernel_path_t kiln_kernel_cache_path(const kiln_kernel_cache_t *cache,
                                          const kiln_kernel_t *kernel);

/* Prepares, then runs the kernel on tensors of the entry's input and output
 * types (outputs written in place). Errors name the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_kernel_cache_run(kiln_kernel_cache_t *cache,
                                                         const kiln_kernel_t *kernel,
                                                         kiln_tensor_t *const *inputs,
                                                         kiln_tensor_t *const *outputs);

/* The compiled kernel of the graph compiler's function key (key.h), when
 * an entry has one: *out_module is retained for the caller, *out_fn lives
 * as long as it. False (and NULLs) otherwise, and always for a
 * reference-only cache. */
bool kiln_kernel_cache_find_compiled(kiln_kernel_cache_t *cache, const char *function_key,
                                     kiln_runtime_module_t **out_module, kiln_packed_fn *out_fn);
/* Offers a compiled kernel under a function key: the entry is made or
 * given the kernel when it has none (the store retains `module`); an
 * entry that has one keeps it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_kernel_cache_add_compiled(kiln_kernel_cache_t *cache,
                                                                  const char *function_key,
                                                                  kiln_runtime_module_t *module,
                                                                  kiln_packed_fn fn);

void kiln_kernel_cache_get_stats(kiln_kernel_cache_t *cache, kiln_kernel_cache_stats_t *out_stats);

#endif /* KILN_COMPILER_KERNEL_CACHE_H_ */
