/*
 * One transformer encoder layer, post-LN (BERT's order): d_model 256, 4
 * heads of 64, feed-forward 1024 with GELU (erf form), sequence 128.
 *
 *   data (B, 128, 256)
 *   q, k, v = dense 256->256 with bias ("attention_{query,key,value}")
 *   each: reshape (B, 128, 4, 64) -> transpose (B, 4, 128, 64)
 *         -> reshape (B*4, 128, 64)
 *   scores = batch_matmul(q, k) (transpose_b: q k^T) * 1/sqrt(64)
 *   context = batch_matmul(softmax(scores), v) (transpose_b False)
 *   context: reshape (B, 4, 128, 64) -> transpose (B, 128, 4, 64)
 *            -> reshape (B, 128, 256)
 *   x = layer_norm(data + dense(context) ("attention_output"), "attention_norm")
 *   y = layer_norm(x + dense(gelu(dense(x) ("ffn_fc1")) ("ffn_fc2"), "ffn_norm")
 *
 * nn.dense takes N-D data (its leading dims fold into rows), so the dense
 * layers apply to (B, 128, features) without a reshape; their bias is an
 * nn.bias_add on the last axis. The scale 1/sqrt(64) = 0.125 is a float32
 * scalar Constant multiplied in. There is no dropout and no mask. Weights
 * use gain 1 (uniform in +-sqrt(3 / fan_in), variance-preserving) since no
 * layer is followed by a relu. image_size is ignored.
 */
#include "frontend/testing/networks.h"

#define KILN_TRANSFORMER_SEQUENCE 128
#define KILN_TRANSFORMER_MODEL    256
#define KILN_TRANSFORMER_HEADS    4
#define KILN_TRANSFORMER_HEAD_DIM 64
#define KILN_TRANSFORMER_FFN      1024

/* (B, S, D) -> (B*H, S, D/H): one matrix per batch entry and head. */
static kiln_status_t kiln_transformer_split_heads(kiln_builder_t *builder, int64_t batch,
                                                  kiln_expr_t *data, kiln_expr_t **out_expr) {
  const int64_t split[4] = {batch, KILN_TRANSFORMER_SEQUENCE, KILN_TRANSFORMER_HEADS,
                            KILN_TRANSFORMER_HEAD_DIM};
  const int64_t swap[4] = {0, 2, 1, 3};
  const int64_t merged[3] = {batch * KILN_TRANSFORMER_HEADS, KILN_TRANSFORMER_SEQUENCE,
                             KILN_TRANSFORMER_HEAD_DIM};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_reshape(builder, data, 4, split, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_transpose(builder, x, 4, swap, &x));
  return kiln_builder_reshape(builder, x, 3, merged, out_expr);
}

/* (B*H, S, D/H) -> (B, S, D): the inverse of split_heads. */
static kiln_status_t kiln_transformer_merge_heads(kiln_builder_t *builder, int64_t batch,
                                                  kiln_expr_t *data, kiln_expr_t **out_expr) {
  const int64_t split[4] = {batch, KILN_TRANSFORMER_HEADS, KILN_TRANSFORMER_SEQUENCE,
                            KILN_TRANSFORMER_HEAD_DIM};
  const int64_t swap[4] = {0, 2, 1, 3};
  const int64_t merged[3] = {batch, KILN_TRANSFORMER_SEQUENCE, KILN_TRANSFORMER_MODEL};
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_reshape(builder, data, 4, split, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_transpose(builder, x, 4, swap, &x));
  return kiln_builder_reshape(builder, x, 3, merged, out_expr);
}

/* A projection "attention_<name>" of data, split into heads. */
static kiln_status_t kiln_transformer_project(kiln_builder_t *builder, int64_t batch,
                                              const char *name, kiln_expr_t *data,
                                              kiln_expr_t **out_expr) {
  char prefix[KILN_BUILDER_NAME_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_builder_prefix(prefix, "attention_%s", name));
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_dense(builder, prefix, KILN_TRANSFORMER_MODEL,
                                          KILN_TRANSFORMER_MODEL, data, &x));
  return kiln_transformer_split_heads(builder, batch, x, out_expr);
}

/* Multi-head self-attention, before the residual: (B, S, D) -> (B, S, D). */
static kiln_status_t kiln_transformer_attention(kiln_builder_t *builder, int64_t batch,
                                                kiln_expr_t *data, kiln_expr_t **out_expr) {
  kiln_expr_t *q = NULL, *k = NULL, *v = NULL;
  KILN_RETURN_IF_ERROR(kiln_transformer_project(builder, batch, "query", data, &q));
  KILN_RETURN_IF_ERROR(kiln_transformer_project(builder, batch, "key", data, &k));
  KILN_RETURN_IF_ERROR(kiln_transformer_project(builder, batch, "value", data, &v));
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_batch_matmul(builder, q, k, true, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_scale(builder, x, 0.125f, &x)); /* 1 / sqrt(64) */
  KILN_RETURN_IF_ERROR(kiln_builder_call(builder, &kiln_op_softmax, 1, &x, NULL, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_batch_matmul(builder, x, v, false, &x));
  KILN_RETURN_IF_ERROR(kiln_transformer_merge_heads(builder, batch, x, &x));
  return kiln_builder_dense(builder, "attention_output", KILN_TRANSFORMER_MODEL,
                            KILN_TRANSFORMER_MODEL, x, out_expr);
}

/* The feed-forward block, before the residual. */
static kiln_status_t kiln_transformer_ffn(kiln_builder_t *builder, kiln_expr_t *data,
                                          kiln_expr_t **out_expr) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_dense(builder, "ffn_fc1", KILN_TRANSFORMER_MODEL,
                                          KILN_TRANSFORMER_FFN, data, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_call(builder, &kiln_op_gelu, 1, &x, NULL, &x));
  return kiln_builder_dense(builder, "ffn_fc2", KILN_TRANSFORMER_FFN, KILN_TRANSFORMER_MODEL, x,
                            out_expr);
}

kiln_status_t kiln_network_transformer(kiln_builder_t *builder,
                                       const kiln_workload_options_t *options, int variant,
                                       kiln_expr_t **out_body) {
  (void)variant;
  builder->weight_gain = 1.0;
  int64_t batch = options->batch_size;
  const int64_t shape[3] = {batch, KILN_TRANSFORMER_SEQUENCE, KILN_TRANSFORMER_MODEL};
  kiln_expr_t *data = NULL, *x = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_builder_input(builder, "data", 3, shape, &data));
  KILN_RETURN_IF_ERROR(kiln_transformer_attention(builder, batch, data, &x));
  KILN_RETURN_IF_ERROR(kiln_builder_add(builder, data, x, &x));
  KILN_RETURN_IF_ERROR(
      kiln_builder_layer_norm(builder, "attention_norm", KILN_TRANSFORMER_MODEL, x, &x));
  KILN_RETURN_IF_ERROR(kiln_transformer_ffn(builder, x, &y));
  KILN_RETURN_IF_ERROR(kiln_builder_add(builder, x, y, &y));
  return kiln_builder_layer_norm(builder, "ffn_norm", KILN_TRANSFORMER_MODEL, y, out_body);
}
