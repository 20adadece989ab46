/*
 * The operator converters, one function per ONNX operator form; the table
 * that maps op_type and opset to them is onnx_ops.c. Each family file says
 * how its operators map onto the registry; docs/onnx.md lists them all.
 * Several ONNX operators share one converter where the mapping is a lookup
 * by op_type (the unary and binary elementwise operators, the reductions).
 */
#ifndef KILN_FRONTEND_ONNX_ONNX_CONVERT_H_
#define KILN_FRONTEND_ONNX_ONNX_CONVERT_H_

#include "frontend/onnx/onnx_importer.h"

/* onnx_legacy.c: opsets 1 to 6 */
/* Adapts or refuses a node of opset < 7 whose meaning differs from the
 * later form its converter builds (nothing at opset 7 and up). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_legacy_prepare(kiln_onnx_node_t *node);
/* Cast's `to`: before opset 6 it may be a name ("FLOAT"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_legacy_cast_to(const kiln_onnx_node_t *node,
                                                            int64_t *out_to);
/* The default of attribute `name` at the node's opset, `fallback` when it
 * did not change (Selu's constants before 6, Concat's axis before 4). */
double kiln_onnx_legacy_default(const kiln_onnx_node_t *node, const char *name, double fallback);

/* onnx_ops_elemwise.c */
kiln_status_t kiln_onnx_convert_unary(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_binary(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_variadic(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_pow(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_where(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_activation(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_gelu(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_isinf(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_mod(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_bit_shift(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_clip_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_clip_inputs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_prelu(kiln_onnx_node_t *node);

/* onnx_ops_nn.c */
kiln_status_t kiln_onnx_convert_conv(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_conv_transpose(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_gemm(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_matmul(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_einsum(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_det(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_pool(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_global_pool(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_softmax_flat(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_softmax(kiln_onnx_node_t *node);

/* onnx_ops_norm.c */
kiln_status_t kiln_onnx_convert_batch_norm(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_layer_norm(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_instance_norm(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_mean_variance_norm(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_lrn(kiln_onnx_node_t *node);

/* onnx_ops_shape.c */
kiln_status_t kiln_onnx_convert_reshape(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_flatten(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_transpose(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_squeeze_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_squeeze_inputs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_unsqueeze_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_unsqueeze_inputs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_shape(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_size(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_expand(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_tile(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_depth_space(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_trilu(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_eye_like(kiln_onnx_node_t *node);

/* onnx_ops_index.c */
kiln_status_t kiln_onnx_convert_concat(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_split_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_split_inputs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_slice_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_slice_inputs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_gather(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_pad_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_pad_inputs(kiln_onnx_node_t *node);

/* onnx_ops_resize.c */
kiln_status_t kiln_onnx_convert_resize(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_upsample(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_grid_sample(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_roi_align(kiln_onnx_node_t *node);

/* onnx_ops_gather.c */
kiln_status_t kiln_onnx_convert_gather_elements(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_gather_nd(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_scatter_elements(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_scatter_nd(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_one_hot(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_topk(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_cumsum(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_max_unpool(kiln_onnx_node_t *node);

/* onnx_ops_select.c */
kiln_status_t kiln_onnx_convert_compress(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_nonzero(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_unique(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_reverse_sequence(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_non_max_suppression(kiln_onnx_node_t *node);

/* onnx_ops_reduce.c */
kiln_status_t kiln_onnx_convert_reduce_attrs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_reduce_inputs(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_arg(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_hardmax(kiln_onnx_node_t *node);

/* onnx_ops_rnn.c */
kiln_status_t kiln_onnx_convert_rnn(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_gru(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_lstm(kiln_onnx_node_t *node);

/* onnx_ops_loss.c */
kiln_status_t kiln_onnx_convert_nll_loss(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_softmax_cross_entropy(kiln_onnx_node_t *node);

/* onnx_ops_tfidf.c */
kiln_status_t kiln_onnx_convert_tfidf_vectorizer(kiln_onnx_node_t *node);

/* onnx_ops_training.c: ai.onnx.preview.training */
kiln_status_t kiln_onnx_convert_adagrad(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_adam(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_momentum(kiln_onnx_node_t *node);

/* onnx_ops_quant.c */
kiln_status_t kiln_onnx_convert_quantize_linear(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_dequantize_linear(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_dynamic_quantize_linear(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_matmul_integer(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_conv_integer(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_qlinear_matmul(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_qlinear_conv(kiln_onnx_node_t *node);

/* onnx_ops_random.c */
kiln_status_t kiln_onnx_convert_random_uniform(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_random_normal(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_random_uniform_like(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_random_normal_like(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_bernoulli(kiln_onnx_node_t *node);

/* onnx_ops_misc.c */
kiln_status_t kiln_onnx_convert_identity(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_dropout(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_cast(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_cast_like(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_constant(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_constant_of_shape(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_range(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_window(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_dft(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_stft(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_mel_weight_matrix(kiln_onnx_node_t *node);

/* onnx_control.c */
kiln_status_t kiln_onnx_convert_if(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_loop(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_scan(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_scan8(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_sequence_map(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_sequence_empty(kiln_onnx_node_t *node);
/* SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
 * SequenceLength and OptionalGetElement: one IR operator each, on the
 * inputs given. */
kiln_status_t kiln_onnx_convert_sequence_op(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_split_to_sequence(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_concat_from_sequence(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_optional(kiln_onnx_node_t *node);
kiln_status_t kiln_onnx_convert_optional_has_element(kiln_onnx_node_t *node);

#endif /* KILN_FRONTEND_ONNX_ONNX_CONVERT_H_ */
