/*
 * The converter table: every ONNX operator kiln imports, by op_type and the
 * opsets each form covers, in one list (docs/onnx.md is written from it).
 * An operator whose signature changed (attributes became inputs) has one
 * row per form; the lookup picks the row whose [since, until] holds the
 * model's opset. A row's `since` is the opset the operator (or that form of
 * it) appeared in, so a model that names an operator before its opset gets
 * "unsupported" rather than a guess. A row marked true takes inputs with
 * symbolic dims (its converter reads no dim of its inputs' types). The one
 * other domain kiln imports, ai.onnx.preview.training, has its own (small)
 * table, looked up at the opset the model imports for that domain.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

static const kiln_onnx_converter_t kiln_onnx_table[] = {
    /* elementwise */
    {"Abs", 1, 0, kiln_onnx_convert_unary, true},
    {"Acos", 7, 0, kiln_onnx_convert_unary, true},
    {"Acosh", 9, 0, kiln_onnx_convert_unary, true},
    {"Add", 1, 0, kiln_onnx_convert_binary, true},
    {"And", 1, 0, kiln_onnx_convert_binary, true},
    {"Asin", 7, 0, kiln_onnx_convert_unary, true},
    {"Asinh", 9, 0, kiln_onnx_convert_unary, true},
    {"Atan", 7, 0, kiln_onnx_convert_unary, true},
    {"Atanh", 9, 0, kiln_onnx_convert_unary, true},
    {"BitShift", 11, 0, kiln_onnx_convert_bit_shift},
    {"Ceil", 1, 0, kiln_onnx_convert_unary, true},
    {"Celu", 12, 0, kiln_onnx_convert_activation, true},
    {"Clip", 1, 10, kiln_onnx_convert_clip_attrs},
    {"Clip", 11, 0, kiln_onnx_convert_clip_inputs},
    {"Cos", 7, 0, kiln_onnx_convert_unary, true},
    {"Cosh", 9, 0, kiln_onnx_convert_unary, true},
    {"Div", 1, 0, kiln_onnx_convert_binary, true},
    {"Elu", 1, 0, kiln_onnx_convert_activation, true},
    {"Equal", 1, 0, kiln_onnx_convert_binary, true},
    {"Erf", 9, 0, kiln_onnx_convert_unary, true},
    {"Exp", 1, 0, kiln_onnx_convert_unary, true},
    {"Floor", 1, 0, kiln_onnx_convert_unary, true},
    {"Gelu", 1, 0, kiln_onnx_convert_gelu, true},
    {"Greater", 1, 0, kiln_onnx_convert_binary, true},
    {"GreaterOrEqual", 12, 0, kiln_onnx_convert_binary, true},
    {"HardSigmoid", 1, 0, kiln_onnx_convert_activation, true},
    {"HardSwish", 14, 0, kiln_onnx_convert_unary, true},
    {"IsInf", 10, 0, kiln_onnx_convert_isinf},
    {"IsNaN", 9, 0, kiln_onnx_convert_unary, true},
    {"LeakyRelu", 1, 0, kiln_onnx_convert_activation, true},
    {"Less", 1, 0, kiln_onnx_convert_binary, true},
    {"LessOrEqual", 12, 0, kiln_onnx_convert_binary, true},
    {"Log", 1, 0, kiln_onnx_convert_unary, true},
    {"Max", 1, 0, kiln_onnx_convert_variadic},
    {"Mean", 1, 0, kiln_onnx_convert_variadic},
    {"Min", 1, 0, kiln_onnx_convert_variadic},
    {"Mod", 10, 0, kiln_onnx_convert_mod},
    {"Mul", 1, 0, kiln_onnx_convert_binary, true},
    {"Neg", 1, 0, kiln_onnx_convert_unary, true},
    {"Not", 1, 0, kiln_onnx_convert_unary, true},
    {"Or", 1, 0, kiln_onnx_convert_binary, true},
    {"Pow", 1, 0, kiln_onnx_convert_pow},
    {"PRelu", 1, 0, kiln_onnx_convert_prelu},
    {"Reciprocal", 1, 0, kiln_onnx_convert_unary, true},
    {"Relu", 1, 0, kiln_onnx_convert_unary, true},
    {"Round", 11, 0, kiln_onnx_convert_unary, true},
    {"Selu", 1, 0, kiln_onnx_convert_activation, true},
    {"Shrink", 9, 0, kiln_onnx_convert_activation, true},
    {"Sigmoid", 1, 0, kiln_onnx_convert_unary, true},
    {"Sign", 9, 0, kiln_onnx_convert_unary, true},
    {"Sin", 7, 0, kiln_onnx_convert_unary, true},
    {"Sinh", 9, 0, kiln_onnx_convert_unary, true},
    {"Softplus", 1, 0, kiln_onnx_convert_unary, true},
    {"Softsign", 1, 0, kiln_onnx_convert_unary, true},
    {"Sqrt", 1, 0, kiln_onnx_convert_unary, true},
    {"Sub", 1, 0, kiln_onnx_convert_binary, true},
    {"Sum", 1, 0, kiln_onnx_convert_variadic},
    {"Tan", 7, 0, kiln_onnx_convert_unary, true},
    {"Tanh", 1, 0, kiln_onnx_convert_unary, true},
    {"ThresholdedRelu", 10, 0, kiln_onnx_convert_activation, true},
    {"Where", 9, 0, kiln_onnx_convert_where, true},
    {"Xor", 1, 0, kiln_onnx_convert_binary, true},
    /* nn */
    {"AveragePool", 1, 0, kiln_onnx_convert_pool},
    {"Conv", 1, 0, kiln_onnx_convert_conv},
    {"ConvTranspose", 1, 0, kiln_onnx_convert_conv_transpose},
    {"Det", 11, 0, kiln_onnx_convert_det},
    {"Einsum", 12, 0, kiln_onnx_convert_einsum},
    {"Gemm", 1, 0, kiln_onnx_convert_gemm},
    {"GlobalAveragePool", 1, 0, kiln_onnx_convert_global_pool},
    {"GlobalMaxPool", 1, 0, kiln_onnx_convert_global_pool},
    {"LogSoftmax", 1, 12, kiln_onnx_convert_softmax_flat},
    {"LogSoftmax", 13, 0, kiln_onnx_convert_softmax, true},
    {"MatMul", 1, 0, kiln_onnx_convert_matmul, true},
    {"MaxPool", 1, 0, kiln_onnx_convert_pool},
    {"Softmax", 1, 12, kiln_onnx_convert_softmax_flat},
    {"Softmax", 13, 0, kiln_onnx_convert_softmax, true},
    /* normalization */
    {"BatchNormalization", 1, 0, kiln_onnx_convert_batch_norm},
    {"InstanceNormalization", 1, 0, kiln_onnx_convert_instance_norm},
    {"LayerNormalization", 17, 0, kiln_onnx_convert_layer_norm},
    {"LRN", 1, 0, kiln_onnx_convert_lrn},
    {"MeanVarianceNormalization", 9, 0, kiln_onnx_convert_mean_variance_norm},
    /* shapes */
    {"DepthToSpace", 1, 0, kiln_onnx_convert_depth_space},
    {"Expand", 8, 0, kiln_onnx_convert_expand},
    {"EyeLike", 9, 0, kiln_onnx_convert_eye_like},
    {"Flatten", 1, 0, kiln_onnx_convert_flatten},
    {"Reshape", 5, 0, kiln_onnx_convert_reshape},
    {"Shape", 1, 0, kiln_onnx_convert_shape, true},
    {"Size", 1, 0, kiln_onnx_convert_size},
    {"SpaceToDepth", 1, 0, kiln_onnx_convert_depth_space},
    {"Squeeze", 1, 12, kiln_onnx_convert_squeeze_attrs},
    {"Squeeze", 13, 0, kiln_onnx_convert_squeeze_inputs},
    {"Tile", 6, 0, kiln_onnx_convert_tile},
    {"Transpose", 1, 0, kiln_onnx_convert_transpose, true},
    {"Trilu", 14, 0, kiln_onnx_convert_trilu},
    {"Unsqueeze", 1, 12, kiln_onnx_convert_unsqueeze_attrs},
    {"Unsqueeze", 13, 0, kiln_onnx_convert_unsqueeze_inputs},
    /* indexing */
    {"Concat", 1, 0, kiln_onnx_convert_concat},
    {"Gather", 1, 0, kiln_onnx_convert_gather},
    {"Pad", 1, 10, kiln_onnx_convert_pad_attrs},
    {"Pad", 11, 0, kiln_onnx_convert_pad_inputs},
    {"GridSample", 16, 0, kiln_onnx_convert_grid_sample},
    {"Resize", 10, 0, kiln_onnx_convert_resize},
    {"RoiAlign", 10, 0, kiln_onnx_convert_roi_align},
    {"Slice", 1, 9, kiln_onnx_convert_slice_attrs},
    {"Slice", 10, 0, kiln_onnx_convert_slice_inputs},
    {"Split", 1, 12, kiln_onnx_convert_split_attrs},
    {"Split", 13, 0, kiln_onnx_convert_split_inputs},
    {"Upsample", 7, 9, kiln_onnx_convert_upsample},
    /* gather, scatter, along an axis */
    {"Compress", 9, 0, kiln_onnx_convert_compress},
    {"CumSum", 11, 0, kiln_onnx_convert_cumsum},
    {"GatherElements", 11, 0, kiln_onnx_convert_gather_elements},
    {"GatherND", 11, 0, kiln_onnx_convert_gather_nd},
    {"NonMaxSuppression", 10, 0, kiln_onnx_convert_non_max_suppression},
    {"NonZero", 9, 0, kiln_onnx_convert_nonzero},
    {"MaxUnpool", 9, 0, kiln_onnx_convert_max_unpool},
    {"OneHot", 9, 0, kiln_onnx_convert_one_hot},
    {"Scatter", 9, 10, kiln_onnx_convert_scatter_elements},
    {"ScatterElements", 11, 0, kiln_onnx_convert_scatter_elements},
    {"ReverseSequence", 10, 0, kiln_onnx_convert_reverse_sequence},
    {"ScatterND", 11, 0, kiln_onnx_convert_scatter_nd},
    {"TopK", 1, 0, kiln_onnx_convert_topk},
    {"Unique", 11, 0, kiln_onnx_convert_unique},
    /* reductions */
    {"ArgMax", 1, 0, kiln_onnx_convert_arg},
    {"ArgMin", 1, 0, kiln_onnx_convert_arg},
    {"Hardmax", 1, 0, kiln_onnx_convert_hardmax},
    {"ReduceL1", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceL2", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceLogSum", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceLogSumExp", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceMax", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceMean", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceMin", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceProd", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceSum", 1, 12, kiln_onnx_convert_reduce_attrs},
    {"ReduceSum", 13, 0, kiln_onnx_convert_reduce_inputs},
    {"ReduceSumSquare", 1, 0, kiln_onnx_convert_reduce_attrs},
    /* quantization */
    {"ConvInteger", 10, 0, kiln_onnx_convert_conv_integer},
    {"DequantizeLinear", 10, 0, kiln_onnx_convert_dequantize_linear},
    {"DynamicQuantizeLinear", 11, 0, kiln_onnx_convert_dynamic_quantize_linear},
    {"MatMulInteger", 10, 0, kiln_onnx_convert_matmul_integer},
    {"QLinearConv", 10, 0, kiln_onnx_convert_qlinear_conv},
    {"QLinearMatMul", 10, 0, kiln_onnx_convert_qlinear_matmul},
    {"QuantizeLinear", 10, 0, kiln_onnx_convert_quantize_linear},
    /* recurrent */
    {"GRU", 7, 0, kiln_onnx_convert_gru},
    {"LSTM", 7, 0, kiln_onnx_convert_lstm},
    {"RNN", 7, 0, kiln_onnx_convert_rnn},
    /* losses */
    {"NegativeLogLikelihoodLoss", 12, 0, kiln_onnx_convert_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, 0, kiln_onnx_convert_softmax_cross_entropy},
    /* text features */
    {"TfIdfVectorizer", 9, 0, kiln_onnx_convert_tfidf_vectorizer},
    /* values */
    {"Cast", 1, 0, kiln_onnx_convert_cast, true},
    {"CastLike", 15, 0, kiln_onnx_convert_cast_like},
    {"Constant", 1, 0, kiln_onnx_convert_constant},
    {"ConstantOfShape", 9, 0, kiln_onnx_convert_constant_of_shape},
    {"Dropout", 1, 0, kiln_onnx_convert_dropout},
    {"Identity", 1, 0, kiln_onnx_convert_identity, true, true},
    {"Range", 11, 0, kiln_onnx_convert_range},
    {"BlackmanWindow", 17, 0, kiln_onnx_convert_window},
    {"DFT", 17, 0, kiln_onnx_convert_dft},
    {"HammingWindow", 17, 0, kiln_onnx_convert_window},
    {"HannWindow", 17, 0, kiln_onnx_convert_window},
    {"MelWeightMatrix", 17, 0, kiln_onnx_convert_mel_weight_matrix},
    {"STFT", 17, 0, kiln_onnx_convert_stft, true},
    /* random */
    {"Bernoulli", 15, 0, kiln_onnx_convert_bernoulli},
    {"RandomNormal", 1, 0, kiln_onnx_convert_random_normal},
    {"RandomNormalLike", 1, 0, kiln_onnx_convert_random_normal_like},
    {"RandomUniform", 1, 0, kiln_onnx_convert_random_uniform},
    {"RandomUniformLike", 1, 0, kiln_onnx_convert_random_uniform_like},
    /* control flow, sequences and optionals (onnx_control.c) */
    {"If", 1, 0, kiln_onnx_convert_if, true, true},
    {"Loop", 1, 0, kiln_onnx_convert_loop, true, true},
    {"Scan", 8, 8, kiln_onnx_convert_scan8},
    {"Scan", 9, 0, kiln_onnx_convert_scan},
    {"SequenceMap", 17, 0, kiln_onnx_convert_sequence_map, true, true},
    {"SequenceEmpty", 11, 0, kiln_onnx_convert_sequence_empty, true, true},
    {"SequenceConstruct", 11, 0, kiln_onnx_convert_sequence_op, true, true},
    {"SequenceInsert", 11, 0, kiln_onnx_convert_sequence_op, true, true},
    {"SequenceAt", 11, 0, kiln_onnx_convert_sequence_op, true, true},
    {"SequenceErase", 11, 0, kiln_onnx_convert_sequence_op, true, true},
    {"SequenceLength", 11, 0, kiln_onnx_convert_sequence_op, true, true},
    {"SplitToSequence", 11, 0, kiln_onnx_convert_split_to_sequence},
    {"ConcatFromSequence", 11, 0, kiln_onnx_convert_concat_from_sequence, true, true},
    {"Optional", 15, 0, kiln_onnx_convert_optional, true, true},
    {"OptionalHasElement", 15, 0, kiln_onnx_convert_optional_has_element, true, true},
    {"OptionalGetElement", 15, 0, kiln_onnx_convert_sequence_op, true, true},
};

/* ai.onnx.preview.training (KILN_ONNX_TRAINING_DOMAIN): the optimizers. */
static const kiln_onnx_converter_t kiln_onnx_training_table[] = {
    {"Adagrad", 1, 0, kiln_onnx_convert_adagrad},
    {"Adam", 1, 0, kiln_onnx_convert_adam},
    {"Momentum", 1, 0, kiln_onnx_convert_momentum},
};

#define KILN_ONNX_TABLE_SIZE ((int)(sizeof(kiln_onnx_table) / sizeof(kiln_onnx_table[0])))
#define KILN_ONNX_TRAINING_TABLE_SIZE \
  ((int)(sizeof(kiln_onnx_training_table) / sizeof(kiln_onnx_training_table[0])))

/* The row of `table` for `op_type` whose opsets hold `opset`, or NULL. */
static const kiln_onnx_converter_t *kiln_onnx_table_find(const kiln_onnx_converter_t *table,
                                                         int size, const char *op_type,
                                                         int64_t opset) {
  for (int i = 0; i < size; ++i) {
    const kiln_onnx_converter_t *row = &table[i];
    if (strcmp(row->op_type, op_type) == 0 && opset >= row->since &&
        (row->until == 0 || opset <= row->until)) {
      return row;
    }
  }
  return NULL;
}

const kiln_onnx_converter_t *kiln_onnx_converter_find(const char *op_type, int64_t opset) {
  return kiln_onnx_table_find(kiln_onnx_table, KILN_ONNX_TABLE_SIZE, op_type, opset);
}

bool kiln_onnx_domain_is_default(const char *domain) {
  return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

const kiln_onnx_converter_t *kiln_onnx_node_converter(const kiln_onnx_importer_t *importer,
                                                      const char *domain, const char *op_type) {
  if (kiln_onnx_domain_is_default(domain)) {
    return kiln_onnx_converter_find(op_type, importer->opset);
  }
  if (strcmp(domain, KILN_ONNX_TRAINING_DOMAIN) == 0) {
    return kiln_onnx_table_find(kiln_onnx_training_table, KILN_ONNX_TRAINING_TABLE_SIZE, op_type,
                                importer->training_opset);
  }
  return NULL;
}

bool kiln_onnx_op_type_known(const char *op_type) {
  for (int i = 0; i < KILN_ONNX_TABLE_SIZE; ++i) {
    if (strcmp(kiln_onnx_table[i].op_type, op_type) == 0) {
      return true;
    }
  }
  return false;
}

const kiln_onnx_converter_t *kiln_onnx_converters(int *out_count) {
  *out_count = KILN_ONNX_TABLE_SIZE;
  return kiln_onnx_table;
}
