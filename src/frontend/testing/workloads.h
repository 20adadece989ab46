/*
 * Built-in workloads, as relay.testing: networks built directly in the graph
 * IR, with deterministic random weights, for tests and benchmarks that need
 * a real model without an importer.
 *
 * The networks follow torchvision's architectures layer for layer (resnet18,
 * resnet34, resnet50 v1.5, mobilenet_v2, squeezenet1_1), so their parameter
 * counts and shapes line up with the ONNX exports in the shared models;
 * batch norm stays a separate nn.batch_norm after each conv, as in
 * relay.testing, so the inference simplifications have work to do. "mlp" is
 * the shared mlp.onnx (784-512-512-10) and "transformer" one post-LN encoder
 * layer (d_model 256, 4 heads, FFN 1024, GELU, sequence 128). Each network is
 * one file over a small graph builder (builder.h) that creates a weight Var,
 * its random tensor and its params entry together, so main's parameters and
 * the params always agree. Parameter names are torchvision's state-dict keys
 * with '.' as '_' ("layer1_0_bn1_running_var"). Weights are uniform random
 * values drawn from a stream keyed by (seed, parameter name) (random.h), so
 * they do not depend on the batch or image size, nor on the other layers;
 * ranges keep activations finite and non-degenerate through the deep
 * networks (docs/workloads.md lists them). The module lives in its own
 * arena; the params own their tensors; a failed build leaves neither a
 * module nor new params entries behind.
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
 * options out of range (batch_size in [1, 4096]; image_size, for the CNNs
 * only, from the network's smallest workable size, 1 or 25 for
 * squeezenet1_1, to 4096) and for a NULL argument; ALREADY_EXISTS when
 * `params` already holds one of the workload's names. On failure `params`
 * is left as it was. */
KILN_MUST_USE_RESULT kiln_status_t kiln_workload_build(const char *name,
                                                       const kiln_workload_options_t *options,
                                                       kiln_allocator_t allocator,
                                                       kiln_params_t *params,
                                                       kiln_module_t **out_module);

#endif /* KILN_FRONTEND_TESTING_WORKLOADS_H_ */
