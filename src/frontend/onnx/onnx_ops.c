/*
 * The converter table: every ONNX operator kiln imports, by op_type and the
 * opsets each form covers, in one list (docs/onnx.md is written from it).
 * An operator whose signature changed (attributes became inputs) has one
 * row per form; the lookup picks the row whose [since, until] holds the
 * model's opset. A row's `since` is the opset the operator (or that form of
 * it) appeared in, so a model that names an operator before its opset gets
 * "unsupported" rather than a guess.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

static const kiln_onnx_converter_t kiln_onnx_table[] = {
    /* elementwise */
    {"Abs", 1, 0, kiln_onnx_convert_unary},
    {"Add", 1, 0, kiln_onnx_convert_binary},
    {"And", 1, 0, kiln_onnx_convert_logical},
    {"Ceil", 1, 0, kiln_onnx_convert_unary},
    {"Celu", 12, 0, kiln_onnx_convert_celu},
    {"Clip", 1, 10, kiln_onnx_convert_clip_attrs},
    {"Clip", 11, 0, kiln_onnx_convert_clip_inputs},
    {"Div", 1, 0, kiln_onnx_convert_binary},
    {"Elu", 1, 0, kiln_onnx_convert_elu},
    {"Equal", 1, 0, kiln_onnx_convert_binary},
    {"Erf", 9, 0, kiln_onnx_convert_unary},
    {"Exp", 1, 0, kiln_onnx_convert_unary},
    {"Floor", 1, 0, kiln_onnx_convert_unary},
    {"Gelu", 1, 0, kiln_onnx_convert_gelu},
    {"Greater", 1, 0, kiln_onnx_convert_binary},
    {"GreaterOrEqual", 12, 0, kiln_onnx_convert_binary},
    {"HardSigmoid", 1, 0, kiln_onnx_convert_hard_sigmoid},
    {"HardSwish", 14, 0, kiln_onnx_convert_unary},
    {"LeakyRelu", 1, 0, kiln_onnx_convert_leaky_relu},
    {"Less", 1, 0, kiln_onnx_convert_binary},
    {"LessOrEqual", 12, 0, kiln_onnx_convert_binary},
    {"Log", 1, 0, kiln_onnx_convert_unary},
    {"Max", 1, 0, kiln_onnx_convert_variadic},
    {"Mean", 1, 0, kiln_onnx_convert_variadic},
    {"Min", 1, 0, kiln_onnx_convert_variadic},
    {"Mul", 1, 0, kiln_onnx_convert_binary},
    {"Neg", 1, 0, kiln_onnx_convert_unary},
    {"Not", 1, 0, kiln_onnx_convert_logical},
    {"Or", 1, 0, kiln_onnx_convert_logical},
    {"Pow", 1, 0, kiln_onnx_convert_pow},
    {"PRelu", 1, 0, kiln_onnx_convert_prelu},
    {"Reciprocal", 1, 0, kiln_onnx_convert_reciprocal},
    {"Relu", 1, 0, kiln_onnx_convert_unary},
    {"Selu", 1, 0, kiln_onnx_convert_selu},
    {"Sigmoid", 1, 0, kiln_onnx_convert_unary},
    {"Sign", 9, 0, kiln_onnx_convert_sign},
    {"Softplus", 1, 0, kiln_onnx_convert_softplus},
    {"Softsign", 1, 0, kiln_onnx_convert_softsign},
    {"Sqrt", 1, 0, kiln_onnx_convert_unary},
    {"Sub", 1, 0, kiln_onnx_convert_binary},
    {"Sum", 1, 0, kiln_onnx_convert_variadic},
    {"Tanh", 1, 0, kiln_onnx_convert_unary},
    {"ThresholdedRelu", 10, 0, kiln_onnx_convert_thresholded_relu},
    {"Where", 9, 0, kiln_onnx_convert_where},
    {"Xor", 1, 0, kiln_onnx_convert_logical},
    /* nn */
    {"AveragePool", 1, 0, kiln_onnx_convert_pool},
    {"BatchNormalization", 1, 0, kiln_onnx_convert_batch_norm},
    {"Conv", 1, 0, kiln_onnx_convert_conv},
    {"Gemm", 1, 0, kiln_onnx_convert_gemm},
    {"GlobalAveragePool", 1, 0, kiln_onnx_convert_global_pool},
    {"GlobalMaxPool", 1, 0, kiln_onnx_convert_global_pool},
    {"LayerNormalization", 17, 0, kiln_onnx_convert_layer_norm},
    {"LogSoftmax", 1, 12, kiln_onnx_convert_softmax_flat},
    {"LogSoftmax", 13, 0, kiln_onnx_convert_softmax},
    {"MatMul", 1, 0, kiln_onnx_convert_matmul},
    {"MaxPool", 1, 0, kiln_onnx_convert_pool},
    {"Softmax", 1, 12, kiln_onnx_convert_softmax_flat},
    {"Softmax", 13, 0, kiln_onnx_convert_softmax},
    /* shapes */
    {"Expand", 8, 0, kiln_onnx_convert_expand},
    {"Flatten", 1, 0, kiln_onnx_convert_flatten},
    {"Reshape", 5, 0, kiln_onnx_convert_reshape},
    {"Shape", 1, 0, kiln_onnx_convert_shape},
    {"Size", 1, 0, kiln_onnx_convert_size},
    {"Squeeze", 1, 12, kiln_onnx_convert_squeeze_attrs},
    {"Squeeze", 13, 0, kiln_onnx_convert_squeeze_inputs},
    {"Tile", 6, 0, kiln_onnx_convert_tile},
    {"Transpose", 1, 0, kiln_onnx_convert_transpose},
    {"Unsqueeze", 1, 12, kiln_onnx_convert_unsqueeze_attrs},
    {"Unsqueeze", 13, 0, kiln_onnx_convert_unsqueeze_inputs},
    /* indexing */
    {"Concat", 1, 0, kiln_onnx_convert_concat},
    {"Gather", 1, 0, kiln_onnx_convert_gather},
    {"Pad", 1, 10, kiln_onnx_convert_pad_attrs},
    {"Pad", 11, 0, kiln_onnx_convert_pad_inputs},
    {"Resize", 10, 0, kiln_onnx_convert_resize},
    {"Slice", 1, 9, kiln_onnx_convert_slice_attrs},
    {"Slice", 10, 0, kiln_onnx_convert_slice_inputs},
    {"Split", 1, 12, kiln_onnx_convert_split_attrs},
    {"Split", 13, 0, kiln_onnx_convert_split_inputs},
    {"Upsample", 7, 9, kiln_onnx_convert_upsample},
    /* reductions */
    {"ArgMax", 1, 0, kiln_onnx_convert_argmax},
    {"ArgMin", 1, 0, kiln_onnx_convert_argmin},
    {"ReduceL1", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceL2", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceLogSum", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceLogSumExp", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceMax", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceMean", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceMin", 1, 0, kiln_onnx_convert_reduce_attrs},
    {"ReduceSum", 1, 12, kiln_onnx_convert_reduce_attrs},
    {"ReduceSum", 13, 0, kiln_onnx_convert_reduce_inputs},
    {"ReduceSumSquare", 1, 0, kiln_onnx_convert_reduce_attrs},
    /* values */
    {"Cast", 1, 0, kiln_onnx_convert_cast},
    {"Constant", 1, 0, kiln_onnx_convert_constant},
    {"ConstantOfShape", 9, 0, kiln_onnx_convert_constant_of_shape},
    {"Dropout", 1, 0, kiln_onnx_convert_dropout},
    {"Identity", 1, 0, kiln_onnx_convert_identity},
    {"Range", 11, 0, kiln_onnx_convert_range},
};

#define KILN_ONNX_TABLE_SIZE ((int)(sizeof(kiln_onnx_table) / sizeof(kiln_onnx_table[0])))

const kiln_onnx_converter_t *kiln_onnx_converter_find(const char *op_type, int64_t opset) {
  for (int i = 0; i < KILN_ONNX_TABLE_SIZE; ++i) {
    const kiln_onnx_converter_t *row = &kiln_onnx_table[i];
    if (strcmp(row->op_type, op_type) == 0 && opset >= row->since &&
        (row->until == 0 || opset <= row->until)) {
      return row;
    }
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
