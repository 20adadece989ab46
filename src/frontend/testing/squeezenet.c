/*
 * SqueezeNet 1.1 as torchvision builds it.
 *
 * features_0: conv 3x3/2 3->64 (no padding) with bias, relu; then max pools
 * (3x3/2, ceil_mode) at features_2, 5 and 8 and fire modules at features_3,
 * 4, 6, 7, 9, 10, 11 and 12. A fire module squeezes with a 1x1 conv and
 * relu ("<fire>_squeeze"), then concatenates on the channel axis a 1x1
 * ("<fire>_expand1x1") and a 3x3 pad 1 ("<fire>_expand3x3") expansion, each
 * with relu. Head: conv 1x1 512->1000 with bias (classifier_1; the dropout,
 * classifier_0, is omitted at inference), relu, global average pool and
 * batch_flatten. Every conv has a bias; there is no batch norm.
 *
 * Smallest image: the stem conv gives s1 = floor((n - 3) / 2) + 1 and a
 * ceil_mode pool gives ceil((s - 3) / 2) + 1, which needs s >= 3. Working
 * back from the last pool's input (>= 3): the second pool needs >= 6, the
 * first >= 12, the conv n >= 25. workloads.c enforces that minimum.
 */
#include "frontend/testing/networks.h"

/* One step of features: a fire module (squeeze > 0) or a max pool. */
typedef struct kiln_squeezenet_step_t {
  int index;
  int64_t squeeze;
  int64_t expand; /* per branch: the module's output has 2 * expand channels */
} kiln_squeezenet_step_t;

static const kiln_squeezenet_step_t kiln_squeezenet_steps[] = {
    {2, 0, 0}, {3, 16, 64},  {4, 16, 64},   {5, 0, 0},     {6, 32, 128},  {7, 32, 128},
    {8, 0, 0}, {9, 48, 192}, {10, 48, 192}, {11, 64, 256}, {12, 64, 256},
};

/* conv "<prefix>" with bias, then relu. */
static kiln_status_t kiln_squeezenet_conv_relu(kiln_builder_t *builder, const char *prefix,
                                               int64_t in_channels, int64_t out_channels,
                                               int64_t kernel, int64_t stride, int64_t padding,
                                               kiln_expr_t *data, kiln_expr_t **out_expr) {
  kiln_builder_conv_t conv = {prefix, in_channels, out_channels, kernel, stride, padding, 1, true};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_conv2d(builder, &conv, data, &x));
  return kiln_builder_relu(builder, x, out_expr);
}

static kiln_status_t kiln_squeezenet_fire(kiln_builder_t *builder,
                                          const kiln_squeezenet_step_t *step, int64_t in_channels,
                                          kiln_expr_t *data, kiln_expr_t **out_expr) {
  char name[KILN_BUILDER_NAME_CAPACITY];
  kiln_expr_t *squeezed = NULL, *branches[2] = {NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "features_%d_squeeze", step->index));
  KILN_RETURN_IF_ERROR(kiln_squeezenet_conv_relu(builder, name, in_channels, step->squeeze, 1, 1, 0,
                                                 data, &squeezed));
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "features_%d_expand1x1", step->index));
  KILN_RETURN_IF_ERROR(kiln_squeezenet_conv_relu(builder, name, step->squeeze, step->expand, 1, 1,
                                                 0, squeezed, &branches[0]));
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "features_%d_expand3x3", step->index));
  KILN_RETURN_IF_ERROR(kiln_squeezenet_conv_relu(builder, name, step->squeeze, step->expand, 3, 1,
                                                 1, squeezed, &branches[1]));
  return kiln_builder_concatenate(builder, 2, branches, 1, out_expr);
}

kiln_status_t kiln_network_squeezenet1_1(kiln_builder_t *builder,
                                         const kiln_workload_options_t *options, int variant,
                                         kiln_expr_t **out_body) {
  (void)variant;
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_builder_image_input(builder, options->batch_size, options->image_size, &x));
  KILN_RETURN_IF_ERROR(kiln_squeezenet_conv_relu(builder, "features_0", 3, 64, 3, 2, 0, x, &x));
  int64_t channels = 64;
  for (size_t i = 0; i < sizeof(kiln_squeezenet_steps) / sizeof(kiln_squeezenet_steps[0]); ++i) {
    const kiln_squeezenet_step_t *step = &kiln_squeezenet_steps[i];
    if (step->squeeze == 0) {
      KILN_RETURN_IF_ERROR(kiln_builder_max_pool2d(builder, x, 3, 2, 0, true, &x));
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_squeezenet_fire(builder, step, channels, x, &x));
    channels = 2 * step->expand;
  }
  KILN_RETURN_IF_ERROR(
      kiln_squeezenet_conv_relu(builder, "classifier_1", channels, 1000, 1, 1, 0, x, &x));
  return kiln_builder_pool_flatten(builder, x, out_body);
}
