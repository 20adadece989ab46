/*
 * The networks behind kiln_workload_build, one file each (resnet.c,
 * mobilenet.c, squeezenet.c, mlp.c, transformer.c), all with one signature
 * so that workloads.c can keep them in a table: given a builder and options
 * already checked against the workload's limits, make the "data" input and
 * every layer, and return the network's output expression (the builder then
 * makes main). `variant` selects a member of a family (the ResNet depth); the
 * others ignore it.
 */
#ifndef KILN_FRONTEND_TESTING_NETWORKS_H_
#define KILN_FRONTEND_TESTING_NETWORKS_H_

#include "frontend/testing/builder.h"
#include "frontend/testing/workloads.h"

typedef kiln_status_t (*kiln_network_build_fn)(kiln_builder_t *builder,
                                               const kiln_workload_options_t *options, int variant,
                                               kiln_expr_t **out_body);

/* ResNet v1 of depth 18, 34 (basic blocks) or 50 (bottlenecks, stride on the 3x3). */
KILN_MUST_USE_RESULT kiln_status_t kiln_network_resnet(kiln_builder_t *builder,
                                                       const kiln_workload_options_t *options,
                                                       int variant, kiln_expr_t **out_body);
KILN_MUST_USE_RESULT kiln_status_t kiln_network_mobilenet_v2(kiln_builder_t *builder,
                                                             const kiln_workload_options_t *options,
                                                             int variant, kiln_expr_t **out_body);
KILN_MUST_USE_RESULT kiln_status_t
kiln_network_squeezenet1_1(kiln_builder_t *builder, const kiln_workload_options_t *options,
                           int variant, kiln_expr_t **out_body);
KILN_MUST_USE_RESULT kiln_status_t kiln_network_mlp(kiln_builder_t *builder,
                                                    const kiln_workload_options_t *options,
                                                    int variant, kiln_expr_t **out_body);
KILN_MUST_USE_RESULT kiln_status_t kiln_network_transformer(kiln_builder_t *builder,
                                                            const kiln_workload_options_t *options,
                                                            int variant, kiln_expr_t **out_body);

#endif /* KILN_FRONTEND_TESTING_NETWORKS_H_ */
