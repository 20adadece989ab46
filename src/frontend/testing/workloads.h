/*
 * Built-in workloads, as relay.testing: networks built directly in the graph
 * IR, with deterministic random weights, for tests and benchmarks that need
 * a real model without an importer.
 *
 * (Design paragraph: to be completed by the implementation.)
 */
#ifndef KILN_FRONTEND_TESTING_WORKLOADS_H_
#define KILN_FRONTEND_TESTING_WORKLOADS_H_

#include <stdint.h>

#include "ir/expr.h"
#include "ir/params.h"

typedef struct kiln_workload_options_t {
  int64_t batch_size; /* default 1 */
  int64_t image_size; /* CNNs: height = width; default 224 */
  uint64_t seed;      /* weights are a pure function of the seed; default 0 */
} kiln_workload_options_t;

/* The defaults above. */
kiln_workload_options_t kiln_workload_options_default(void);

/* Names of the workloads, NULL-terminated: "resnet18", "resnet34",
 * "resnet50", "mobilenet_v2", "squeezenet1_1", "mlp", "transformer". */
const char *const *kiln_workload_names(void);

/* Builds workload `name` into a new module whose `main` takes the data input
 * first (named "data") and then one parameter per weight, and fills `params`
 * (initialized by the caller) with a tensor for every weight parameter. The
 * module is type-checked and verified before it is returned. NOT_FOUND
 * listing the known names for an unknown workload; INVALID_ARGUMENT for
 * options out of range. */
KILN_MUST_USE_RESULT kiln_status_t kiln_workload_build(const char *name,
                                                       const kiln_workload_options_t *options,
                                                       kiln_allocator_t allocator,
                                                       kiln_params_t *params,
                                                       kiln_module_t **out_module);

#endif /* KILN_FRONTEND_TESTING_WORKLOADS_H_ */
