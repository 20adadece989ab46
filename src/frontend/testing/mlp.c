/*
 * The MLP of the shared mlp.onnx: data (batch, 784) -> fc1 784->512, relu ->
 * fc2 512->512, relu -> fc3 512->10, each dense with a bias (nn.dense then
 * nn.bias_add), 669,706 parameters. Names follow the PyTorch module that
 * exported it: fc1_weight, fc1_bias, ..., fc3_bias. image_size is ignored.
 */
#include "frontend/testing/networks.h"

kiln_status_t kiln_network_mlp(kiln_builder_t *builder, const kiln_workload_options_t *options,
                               int variant, kiln_expr_t **out_body) {
  (void)variant;
  static const int64_t widths[] = {784, 512, 512, 10};
  const int64_t shape[2] = {options->batch_size, widths[0]};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_input(builder, "data", 2, shape, &x));
  for (int layer = 1; layer <= 3; ++layer) {
    char prefix[KILN_BUILDER_NAME_CAPACITY];
    KILN_RETURN_IF_ERROR(kiln_builder_prefix(prefix, "fc%d", layer));
    KILN_RETURN_IF_ERROR(
        kiln_builder_dense(builder, prefix, widths[layer - 1], widths[layer], x, &x));
    if (layer < 3) {
      KILN_RETURN_IF_ERROR(kiln_builder_relu(builder, x, &x));
    }
  }
  *out_body = x;
  return KILN_OK;
}
