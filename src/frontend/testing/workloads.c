/*
 * kiln_workload_build: the table of built-in workloads, the checks of their
 * options, and the one build sequence they share; see workloads.h.
 *
 * Each row names a workload, the network function that builds it (with the
 * variant it passes, the ResNet depth) and the smallest image size for which
 * every layer keeps at least one pixel (0 for the networks without images,
 * which ignore image_size). The minimum is derived in each network's file:
 * resnet and mobilenet_v2 only halve sizes with ceil, so 1 works;
 * squeezenet1_1 has unpadded windows and needs 25. The sequence is: check
 * the options, start a builder (a new module), let the network add its
 * layers, make main, infer types, verify. Any failure destroys the module
 * and takes back the params the build added, and the error is prefixed with
 * the workload's name.
 */
#include "frontend/testing/workloads.h"

#include <stdio.h>
#include <string.h>

#include "frontend/testing/builder.h"
#include "frontend/testing/networks.h"

/* Bounds that keep every shape and element count far from int64 overflow. */
#define KILN_WORKLOAD_MAX_BATCH_SIZE 4096
#define KILN_WORKLOAD_MAX_IMAGE_SIZE 4096

typedef struct kiln_workload_info_t {
  const char *name;
  kiln_network_build_fn build;
  int variant;
  int64_t min_image_size; /* 0: the workload takes no image */
} kiln_workload_info_t;

static const kiln_workload_info_t kiln_workload_infos[] = {
    {"resnet18", kiln_network_resnet, 18, 1},
    {"resnet34", kiln_network_resnet, 34, 1},
    {"resnet50", kiln_network_resnet, 50, 1},
    {"mobilenet_v2", kiln_network_mobilenet_v2, 0, 1},
    {"squeezenet1_1", kiln_network_squeezenet1_1, 0, 25},
    {"mlp", kiln_network_mlp, 0, 0},
    {"transformer", kiln_network_transformer, 0, 0},
};

#define KILN_WORKLOAD_COUNT (sizeof(kiln_workload_infos) / sizeof(kiln_workload_infos[0]))

static const char *const kiln_workload_name_list[KILN_WORKLOAD_COUNT + 1] = {
    "resnet18", "resnet34", "resnet50", "mobilenet_v2", "squeezenet1_1", "mlp", "transformer", NULL,
};

kiln_workload_options_t kiln_workload_options_default(void) {
  kiln_workload_options_t options = {.batch_size = 1, .image_size = 224, .seed = 0};
  return options;
}

const char *const *kiln_workload_names(void) {
  return kiln_workload_name_list;
}

static kiln_status_t kiln_workload_find(const char *name, const kiln_workload_info_t **out_info) {
  for (size_t i = 0; i < KILN_WORKLOAD_COUNT; ++i) {
    if (strcmp(kiln_workload_infos[i].name, name) == 0) {
      *out_info = &kiln_workload_infos[i];
      return KILN_OK;
    }
  }
  char known[256];
  size_t used = 0;
  for (size_t i = 0; i < KILN_WORKLOAD_COUNT && used < sizeof(known); ++i) {
    used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                             kiln_workload_infos[i].name);
  }
  return KILN_STATUS(NOT_FOUND, "no built-in workload \"%s\"; the workloads are %s", name, known);
}

static kiln_status_t kiln_workload_check_options(const kiln_workload_info_t *info,
                                                 const kiln_workload_options_t *options) {
  if (options->batch_size < 1 || options->batch_size > KILN_WORKLOAD_MAX_BATCH_SIZE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: batch_size %lld is outside [1, %d]", info->name,
                       (long long)options->batch_size, KILN_WORKLOAD_MAX_BATCH_SIZE);
  }
  if (info->min_image_size > 0 && (options->image_size < info->min_image_size ||
                                   options->image_size > KILN_WORKLOAD_MAX_IMAGE_SIZE)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: image_size %lld is outside [%lld, %d] (the smallest image that "
                       "keeps every layer at least 1x1 is %lld)",
                       info->name, (long long)options->image_size, (long long)info->min_image_size,
                       KILN_WORKLOAD_MAX_IMAGE_SIZE, (long long)info->min_image_size);
  }
  return KILN_OK;
}

static kiln_status_t kiln_workload_run(const kiln_workload_info_t *info,
                                       const kiln_workload_options_t *options,
                                       kiln_builder_t *builder, kiln_module_t **out_module) {
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(info->build(builder, options, info->variant, &body));
  return kiln_builder_finish(builder, body, out_module);
}

kiln_status_t kiln_workload_build(const char *name, const kiln_workload_options_t *options,
                                  kiln_allocator_t allocator, kiln_params_t *params,
                                  kiln_module_t **out_module) {
  if (!name || !options || !params || !out_module) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "kiln_workload_build needs a name, options, params and out_module");
  }
  *out_module = NULL;
  const kiln_workload_info_t *info = NULL;
  KILN_RETURN_IF_ERROR(kiln_workload_find(name, &info));
  KILN_RETURN_IF_ERROR(kiln_workload_check_options(info, options));
  kiln_builder_t builder;
  kiln_status_t status = kiln_builder_initialize(&builder, allocator, params, options->seed);
  if (status == KILN_OK) {
    status = kiln_workload_run(info, options, &builder, out_module);
  }
  kiln_builder_deinitialize(&builder);
  return status ? kiln_status_annotate(status, "workload %s", info->name) : KILN_OK;
}
