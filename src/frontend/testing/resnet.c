/*
 * ResNet v1 as torchvision builds it (resnet18, resnet34, resnet50).
 *
 * Stem: conv 7x7/2 pad 3 (no bias), batch norm, relu, max pool 3x3/2 pad 1.
 * Four stages of 64, 128, 256 and 512 planes with [2, 2, 2, 2] (18) or
 * [3, 4, 6, 3] (34, 50) blocks; the first block of stages 2-4 has stride 2.
 * A basic block (18, 34) is conv 3x3/stride - bn - relu - conv 3x3 - bn, a
 * bottleneck (50) is conv 1x1 - bn - relu - conv 3x3/stride - bn - relu -
 * conv 1x1 to 4x the planes - bn (torchvision's "v1.5": the stride sits on
 * the 3x3 conv). A block whose stride or channel count changes gets a
 * downsample shortcut, conv 1x1/stride (no bias) then bn; the sum is
 * followed by relu. Head: global average pool, batch_flatten, dense to 1000
 * with bias. Batch norm stays a separate operator (nn.batch_norm) after
 * every conv, as relay.testing builds it, so simplify_inference and fusion
 * have work to do. Parameter names are torchvision's state-dict keys with
 * '.' as '_', created in the state dict's order: conv1_weight, bn1_weight,
 * bn1_bias, bn1_running_mean, bn1_running_var, layer1_0_conv1_weight, ...,
 * layer2_0_downsample_0_weight, layer2_0_downsample_1_weight, ...,
 * fc_weight, fc_bias. Every downsampling step (stride 2 with padding 1 for
 * a 3x3 window, 0 for 1x1, 3 for 7x7) maps a size n to ceil(n / 2), so any
 * image size >= 1 keeps every stage at least 1x1.
 */
#include <stdbool.h>

#include "frontend/testing/networks.h"

typedef struct kiln_resnet_config_t {
  int depth;
  bool bottleneck;
  int blocks[4];
} kiln_resnet_config_t;

static const kiln_resnet_config_t kiln_resnet_configs[] = {
    {18, false, {2, 2, 2, 2}},
    {34, false, {3, 4, 6, 3}},
    {50, true, {3, 4, 6, 3}},
};

/* One block: its name prefix ("layer2_0"), channels in, planes and stride. */
typedef struct kiln_resnet_block_t {
  const char *prefix;
  int64_t in_channels;
  int64_t planes;
  int64_t stride;
} kiln_resnet_block_t;

/* conv "<block>_<conv>" (k x k, stride, padding k / 2, no bias) then bn
 * "<block>_<bn>", then relu when `relu`. */
static kiln_status_t kiln_resnet_conv_bn(kiln_builder_t *builder, const char *block,
                                         const char *conv, const char *bn, int64_t in_channels,
                                         int64_t out_channels, int64_t kernel, int64_t stride,
                                         bool relu, kiln_expr_t *data, kiln_expr_t **out_expr) {
  char prefix[KILN_BUILDER_NAME_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(prefix, "%s%s%s", block, *block ? "_" : "", conv));
  kiln_builder_conv_t spec = {prefix,     in_channels, out_channels, kernel, stride,
                              kernel / 2, 1,           false};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_conv2d(builder, &spec, data, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(prefix, "%s%s%s", block, *block ? "_" : "", bn));
  KILN_RETURN_IF_ERROR(kiln_builder_batch_norm(builder, prefix, out_channels, x, &x));
  if (relu) {
    KILN_RETURN_IF_ERROR(kiln_builder_relu(builder, x, &x));
  }
  *out_expr = x;
  return KILN_OK;
}

/* The residual branch of a basic block: two 3x3 convs. */
static kiln_status_t kiln_resnet_basic_branch(kiln_builder_t *builder,
                                              const kiln_resnet_block_t *block, kiln_expr_t *data,
                                              kiln_expr_t **out_expr) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_resnet_conv_bn(builder, block->prefix, "conv1", "bn1",
                                           block->in_channels, block->planes, 3, block->stride,
                                           true, data, &x));
  return kiln_resnet_conv_bn(builder, block->prefix, "conv2", "bn2", block->planes, block->planes,
                             3, 1, false, x, out_expr);
}

/* The residual branch of a bottleneck: 1x1 down, 3x3 with the stride, 1x1 up. */
static kiln_status_t kiln_resnet_bottleneck_branch(kiln_builder_t *builder,
                                                   const kiln_resnet_block_t *block,
                                                   kiln_expr_t *data, kiln_expr_t **out_expr) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_resnet_conv_bn(builder, block->prefix, "conv1", "bn1",
                                           block->in_channels, block->planes, 1, 1, true, data,
                                           &x));
  KILN_RETURN_IF_ERROR(kiln_resnet_conv_bn(builder, block->prefix, "conv2", "bn2", block->planes,
                                           block->planes, 3, block->stride, true, x, &x));
  return kiln_resnet_conv_bn(builder, block->prefix, "conv3", "bn3", block->planes,
                             block->planes * 4, 1, 1, false, x, out_expr);
}

static kiln_status_t kiln_resnet_block(kiln_builder_t *builder, bool bottleneck,
                                       const kiln_resnet_block_t *block, kiln_expr_t *data,
                                       kiln_expr_t **out_expr) {
  int64_t out_channels = bottleneck ? block->planes * 4 : block->planes;
  kiln_expr_t *branch = NULL;
  if (bottleneck) {
    KILN_RETURN_IF_ERROR(kiln_resnet_bottleneck_branch(builder, block, data, &branch));
  } else {
    KILN_RETURN_IF_ERROR(kiln_resnet_basic_branch(builder, block, data, &branch));
  }
  kiln_expr_t *shortcut = data;
  if (block->stride != 1 || block->in_channels != out_channels) {
    KILN_RETURN_IF_ERROR(kiln_resnet_conv_bn(builder, block->prefix, "downsample_0", "downsample_1",
                                             block->in_channels, out_channels, 1, block->stride,
                                             false, data, &shortcut));
  }
  kiln_expr_t *sum = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_add(builder, branch, shortcut, &sum));
  return kiln_builder_relu(builder, sum, out_expr);
}

/* Stage `stage` (0-3): its blocks, the first with the stage's stride. */
static kiln_status_t kiln_resnet_stage(kiln_builder_t *builder, const kiln_resnet_config_t *config,
                                       int stage, int64_t *in_out_channels,
                                       kiln_expr_t **in_out_expr) {
  int64_t planes = (int64_t)64 << stage;
  for (int i = 0; i < config->blocks[stage]; ++i) {
    char prefix[KILN_BUILDER_NAME_CAPACITY];
    KILN_RETURN_IF_ERROR(kiln_builder_prefix(prefix, "layer%d_%d", stage + 1, i));
    kiln_resnet_block_t block = {prefix, *in_out_channels, planes, i == 0 && stage > 0 ? 2 : 1};
    KILN_RETURN_IF_ERROR(
        kiln_resnet_block(builder, config->bottleneck, &block, *in_out_expr, in_out_expr));
    *in_out_channels = config->bottleneck ? planes * 4 : planes;
  }
  return KILN_OK;
}

static const kiln_resnet_config_t *kiln_resnet_config(int depth) {
  for (size_t i = 0; i < sizeof(kiln_resnet_configs) / sizeof(kiln_resnet_configs[0]); ++i) {
    if (kiln_resnet_configs[i].depth == depth) {
      return &kiln_resnet_configs[i];
    }
  }
  return NULL;
}

kiln_status_t kiln_network_resnet(kiln_builder_t *builder, const kiln_workload_options_t *options,
                                  int variant, kiln_expr_t **out_body) {
  const kiln_resnet_config_t *config = kiln_resnet_config(variant);
  if (!config) {
    return KILN_STATUS(INVALID_ARGUMENT, "resnet: no configuration of depth %d (18, 34 or 50)",
                       variant);
  }
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_builder_image_input(builder, options->batch_size, options->image_size, &x));
  KILN_RETURN_IF_ERROR(kiln_resnet_conv_bn(builder, "", "conv1", "bn1", 3, 64, 7, 2, true, x, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_max_pool2d(builder, x, 3, 2, 1, false, &x));
  int64_t channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    KILN_RETURN_IF_ERROR(kiln_resnet_stage(builder, config, stage, &channels, &x));
  }
  KILN_RETURN_IF_ERROR(kiln_builder_pool_flatten(builder, x, &x));
  return kiln_builder_dense(builder, "fc", channels, 1000, x, out_body);
}
