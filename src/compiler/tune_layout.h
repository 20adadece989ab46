/*
 * kiln_tune's search of graph-level knobs (tune_layout.c): the layout a
 * pass gives a constant, such as pack_dense's column block, which decides
 * the kernels that follow it and so cannot be a kernel's knob.
 */
#ifndef KILN_COMPILER_TUNE_LAYOUT_H_
#define KILN_COMPILER_TUNE_LAYOUT_H_

#include "compiler/build.h"
#include "kiln/model.h"
#include "kiln/tune.h"

typedef struct kiln_tune_layout_search_t {
  kiln_allocator_t allocator;
  const char *model; /* loaded afresh for each compile (a compile changes its module) */
  const kiln_model_options_t *model_options;
  const kiln_compiler_options_t *compile; /* the model's compile, without records */
  const kiln_compiled_t *baseline;        /* that compile: its layouts and kernels */
  const kiln_tune_options_t *options;
  const char *records; /* where the verified records are appended */
  const char *target;
  kiln_tune_cache_t cache;
  int64_t evict_bytes;
  double deadline; /* kiln_tune_layout_now() seconds when the search stops */
  /* Out: a temporary file holding the chosen records alone (empty when
   * none beat its default), for the compile whose kernels are tuned next;
   * the caller removes it. */
  char chosen_path[64];
  int num_chosen;
  int trials;
} kiln_tune_layout_search_t;

double kiln_tune_layout_now(void);

/* `model` loaded and compiled with `compile`; the compile uses the
 * model's module, so destroy the compile first. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tune_layout_compile(const kiln_tune_layout_search_t *search,
                                                            const kiln_compiler_options_t *compile,
                                                            kiln_model_t **out_model,
                                                            kiln_compiled_t **out_compiled);

/* The blocks of the workloads the baseline compile asked records for,
 * searched on the whole model's run time (one block for all, then each
 * workload's); a verified record per workload appended to `records`, the
 * chosen ones (not the rule's) to chosen_path. */
KILN_MUST_USE_RESULT kiln_status_t kiln_tune_layouts(kiln_tune_layout_search_t *search);

#endif /* KILN_COMPILER_TUNE_LAYOUT_H_ */
