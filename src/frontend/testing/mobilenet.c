/*
 * MobileNet v2 (width 1.0) as torchvision builds it.
 *
 * features_0: conv 3x3/2 3->32, bn, ReLU6. Then 17 inverted residual blocks
 * (features_1 .. features_17) from the table (expansion t, channels c,
 * repeats n, stride s of the first repeat): hidden = in * t channels; when
 * t != 1 a 1x1 expansion conv, bn, ReLU6 (conv_0_0, conv_0_1); a 3x3
 * depthwise conv (groups = hidden) with the stride, bn, ReLU6; a 1x1 linear
 * projection conv and bn with no activation; and the input added back when
 * the stride is 1 and the channels match. features_18: 1x1 conv 320->1280,
 * bn, ReLU6. Head: global average pool, batch_flatten, dense 1280->1000 with
 * bias (classifier_1; torchvision's dropout, classifier_0, is the identity
 * at inference and is omitted). Convs have no bias; batch norm is a separate
 * nn.batch_norm; ReLU6 is clip(0, 6). Names are torchvision's state-dict
 * keys with '.' as '_' ("features_2_conv_1_0_weight" is block 2's depthwise
 * conv). Every stride-2 3x3 conv with padding 1 maps n to ceil(n / 2), so
 * any image size >= 1 works.
 */
#include "frontend/testing/networks.h"

typedef struct kiln_mobilenet_stage_t {
  int64_t expansion;
  int64_t channels;
  int repeats;
  int64_t stride;
} kiln_mobilenet_stage_t;

static const kiln_mobilenet_stage_t kiln_mobilenet_stages[] = {
    {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
    {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
};

/* conv "<prefix>_0" (k x k, padding k / 2, groups, no bias), bn "<prefix>_1",
 * ReLU6: torchvision's Conv2dNormActivation. */
static kiln_status_t kiln_mobilenet_conv_bn_relu6(kiln_builder_t *builder, const char *prefix,
                                                  int64_t in_channels, int64_t out_channels,
                                                  int64_t kernel, int64_t stride, int64_t groups,
                                                  kiln_expr_t *data, kiln_expr_t **out_expr) {
  char name[KILN_BUILDER_NAME_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "%s_0", prefix));
  kiln_builder_conv_t conv = {name,   in_channels, out_channels, kernel,
                              stride, kernel / 2,  groups,       false};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_conv2d(builder, &conv, data, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "%s_1", prefix));
  KILN_RETURN_IF_ERROR(kiln_builder_batch_norm(builder, name, out_channels, x, &x));
  return kiln_builder_relu6(builder, x, out_expr);
}

/* The 1x1 linear projection of block `prefix`: conv "<prefix>_conv_<k>", bn "<prefix>_conv_<k+1>".
 */
static kiln_status_t kiln_mobilenet_project(kiln_builder_t *builder, const char *prefix, int k,
                                            int64_t hidden, int64_t out_channels, kiln_expr_t *data,
                                            kiln_expr_t **out_expr) {
  char name[KILN_BUILDER_NAME_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "%s_conv_%d", prefix, k));
  kiln_builder_conv_t conv = {name, hidden, out_channels, 1, 1, 0, 1, false};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_conv2d(builder, &conv, data, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "%s_conv_%d", prefix, k + 1));
  return kiln_builder_batch_norm(builder, name, out_channels, x, out_expr);
}

/* Block features_<index>: expand (when t != 1), depthwise, project, add. */
static kiln_status_t kiln_mobilenet_block(kiln_builder_t *builder, int index, int64_t in_channels,
                                          int64_t out_channels, int64_t stride, int64_t expansion,
                                          kiln_expr_t *data, kiln_expr_t **out_expr) {
  char prefix[KILN_BUILDER_NAME_CAPACITY], name[KILN_BUILDER_NAME_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(prefix, "features_%d", index));
  int64_t hidden = in_channels * expansion;
  int k = 0;
  kiln_expr_t *x = data;
  if (expansion != 1) {
    KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "%s_conv_%d", prefix, k++));
    KILN_RETURN_IF_ERROR(
        kiln_mobilenet_conv_bn_relu6(builder, name, in_channels, hidden, 1, 1, 1, x, &x));
  }
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(name, "%s_conv_%d", prefix, k++));
  KILN_RETURN_IF_ERROR(
      kiln_mobilenet_conv_bn_relu6(builder, name, hidden, hidden, 3, stride, hidden, x, &x));
  KILN_RETURN_IF_ERROR(kiln_mobilenet_project(builder, prefix, k, hidden, out_channels, x, &x));
  if (stride == 1 && in_channels == out_channels) {
    return kiln_builder_add(builder, data, x, out_expr);
  }
  *out_expr = x;
  return KILN_OK;
}

kiln_status_t kiln_network_mobilenet_v2(kiln_builder_t *builder,
                                        const kiln_workload_options_t *options, int variant,
                                        kiln_expr_t **out_body) {
  (void)variant;
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_builder_image_input(builder, options->batch_size, options->image_size, &x));
  KILN_RETURN_IF_ERROR(kiln_mobilenet_conv_bn_relu6(builder, "features_0", 3, 32, 3, 2, 1, x, &x));
  int64_t channels = 32;
  int index = 1;
  for (size_t s = 0; s < sizeof(kiln_mobilenet_stages) / sizeof(kiln_mobilenet_stages[0]); ++s) {
    const kiln_mobilenet_stage_t *stage = &kiln_mobilenet_stages[s];
    for (int i = 0; i < stage->repeats; ++i) {
      KILN_RETURN_IF_ERROR(kiln_mobilenet_block(builder, index++, channels, stage->channels,
                                                i == 0 ? stage->stride : 1, stage->expansion, x,
                                                &x));
      channels = stage->channels;
    }
  }
  KILN_RETURN_IF_ERROR(
      kiln_mobilenet_conv_bn_relu6(builder, "features_18", channels, 1280, 1, 1, 1, x, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_pool_flatten(builder, x, &x));
  return kiln_builder_dense(builder, "classifier_1", 1280, 1000, x, out_body);
}
