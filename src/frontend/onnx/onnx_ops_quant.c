/*
 * Quantization converters: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, and the integer products MatMulInteger,
 * ConvInteger, QLinearMatMul and QLinearConv, composed from elementwise
 * operators, cast, nn.matmul and nn.conv2d.
 *
 * QuantizeLinear is cast(round(x / scale) + zero_point) to the zero
 * point's dtype (uint8 when it is omitted): round is half to even, as ONNX
 * says, and cast saturates at the target's range, which is ONNX's
 * saturation. DequantizeLinear is (cast(x) - cast(zero_point)) * scale in
 * the scale's dtype. A 1-D scale (and zero point) applies along `axis`
 * (default 1): it is reshaped to (C, 1, ..., 1) so that broadcasting lines
 * it up with that axis. DynamicQuantizeLinear computes its uint8 scale and
 * zero point from the data as ONNX's function does: the range [min(0, min
 * x), max(0, max x)] mapped onto [0, 255].
 *
 * The integer products subtract the zero points and run the float32
 * nn.matmul or nn.conv2d (the Conv converter itself, so every Conv
 * attribute applies). The kernels sum in double and round once to float32,
 * so the integer results are exact while every sum stays below 2^24 in
 * magnitude (uint8 products over up to 258 terms). MatMulInteger and
 * ConvInteger cast the result to int32; the QLinear forms multiply it by
 * a_scale · b_scale / y_scale (a per-channel weight scale along the output
 * channels), round half to even in float64 as ONNX's reference does, add
 * the output zero point and saturate.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* `v` (a scale or zero point of x) in a shape that broadcasts along `axis`
 * of x: a scalar as it is, a 1-D vector as (C, 1, ..., 1). */
static kiln_status_t kiln_onnx_quant_along(const kiln_onnx_node_t *node, kiln_expr_t *v,
                                           const kiln_tensor_type_t *xt, kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *vt = kiln_onnx_type_of(v);
  int64_t count = 1;
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(vt->ndim, vt->shape, &count));
  if (vt->ndim == 0 || (vt->ndim == 1 && count == 1)) {
    *out_expr = v;
    return KILN_OK;
  }
  int64_t axis_attr = 1;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 1, &axis_attr));
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(axis_attr, xt->ndim, &axis));
  if (vt->ndim != 1 || count != xt->shape[axis]) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(vt->ndim, vt->shape, shape, sizeof(shape));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "a scale or zero point of shape %s does not fit axis %d (size %lld)", shape,
                       axis, (long long)xt->shape[axis]);
  }
  int64_t shape[KILN_MAX_RANK];
  for (int d = axis; d < xt->ndim; ++d) {
    shape[d - axis] = d == axis ? count : 1;
  }
  return kiln_onnx_reshape(node, v, xt->ndim - axis, shape, out_expr);
}

/* cast(round(x / scale) + zero_point, dtype of the zero point). */
static kiln_status_t kiln_onnx_quantize(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                        kiln_expr_t *scale, kiln_expr_t *zero_point,
                                        kiln_dtype_t dtype, kiln_expr_t **out_expr) {
  kiln_expr_t *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_divide, x, scale, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_round, y, NULL, &y));
  if (zero_point) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_cast(node, zero_point, kiln_onnx_type_of(y)->dtype, &zero_point));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, y, zero_point, NULL, &y));
  }
  return kiln_onnx_cast(node, y, dtype, out_expr);
}

kiln_status_t kiln_onnx_convert_quantize_linear(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *scale = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &scale));
  kiln_expr_t *zero_point = kiln_onnx_input_optional(node, 2);
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  kiln_dtype_t dtype = zero_point ? kiln_onnx_type_of(zero_point)->dtype : KILN_DTYPE_UINT8;
  if (dtype != KILN_DTYPE_UINT8 && dtype != KILN_DTYPE_INT8) {
    return KILN_STATUS(UNIMPLEMENTED, "a zero point of dtype %s is not supported (uint8, int8)",
                       kiln_dtype_name(dtype));
  }
  kiln_dtype_t scale_dtype = kiln_onnx_type_of(scale)->dtype;
  if (xt->dtype != scale_dtype) { /* opset 10 takes int32 x */
    KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, x, scale_dtype, &x));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_quant_along(node, scale, xt, &scale));
  if (zero_point) {
    KILN_RETURN_IF_ERROR(kiln_onnx_quant_along(node, zero_point, xt, &zero_point));
  }
  return kiln_onnx_quantize(node, x, scale, zero_point, dtype, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_dequantize_linear(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *scale = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &scale));
  kiln_expr_t *zero_point = kiln_onnx_input_optional(node, 2);
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  kiln_dtype_t dtype = kiln_onnx_type_of(scale)->dtype;
  KILN_RETURN_IF_ERROR(kiln_onnx_quant_along(node, scale, xt, &scale));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, x, dtype, &y));
  if (zero_point) {
    KILN_RETURN_IF_ERROR(kiln_onnx_quant_along(node, zero_point, xt, &zero_point));
    KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, zero_point, dtype, &zero_point));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, y, zero_point, NULL, &y));
  }
  return kiln_onnx_emit2(node, &kiln_op_multiply, y, scale, NULL, &node->outputs[0]);
}

/* `op` (max or min) over every axis of x, then against 0 with `pick`. */
static kiln_status_t kiln_onnx_extreme_with_zero(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                                 const kiln_op_t *pick, kiln_expr_t *x,
                                                 kiln_expr_t **out_expr) {
  kiln_expr_t *zero = NULL, *y = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(x)->dtype, 0.0, &zero));
  return kiln_onnx_emit2(node, pick, y, zero, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_dynamic_quantize_linear(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *low = NULL, *high = NULL, *scale = NULL, *levels = NULL;
  kiln_expr_t *zero_point = NULL, *minus_low = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  kiln_dtype_t dtype = kiln_onnx_type_of(x)->dtype;
  KILN_RETURN_IF_ERROR(kiln_onnx_extreme_with_zero(node, &kiln_op_min, &kiln_op_minimum, x, &low));
  KILN_RETURN_IF_ERROR(kiln_onnx_extreme_with_zero(node, &kiln_op_max, &kiln_op_maximum, x, &high));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, 255.0, &levels));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, high, low, NULL, &scale));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_divide, scale, levels, NULL, &scale));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_negative, low, NULL, &minus_low));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_quantize(node, minus_low, scale, NULL, KILN_DTYPE_UINT8, &zero_point));
  if (node->num_outputs > 1) {
    node->outputs[1] = scale;
  }
  if (node->num_outputs > 2) {
    node->outputs[2] = zero_point;
  }
  return kiln_onnx_quantize(node, x, scale, zero_point, KILN_DTYPE_UINT8, &node->outputs[0]);
}

/* ---- integer products ---- */

/* (x - zero_point) as float32; zero_point may be NULL. A 1-D zero point of
 * a weight applies per output channel (axis 0), of a matrix per row or
 * column as `along` says (its rank - 1 is the axis it runs along). */
static kiln_status_t kiln_onnx_integer_operand(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                               kiln_expr_t *zero_point, int along,
                                               kiln_expr_t **out_expr) {
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, x, KILN_DTYPE_FLOAT32, out_expr));
  if (!zero_point) {
    return KILN_OK;
  }
  const kiln_tensor_type_t *zt = kiln_onnx_type_of(zero_point);
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, zero_point, KILN_DTYPE_FLOAT32, &zero_point));
  if (zt->ndim == 1 && zt->shape[0] != 1 && along > 0) {
    int64_t shape[KILN_MAX_RANK];
    shape[0] = zt->shape[0];
    for (int d = 1; d < along; ++d) {
      shape[d] = 1;
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, zero_point, along, shape, &zero_point));
  }
  return kiln_onnx_emit2(node, &kiln_op_subtract, *out_expr, zero_point, NULL, out_expr);
}

/* Conv over (x, w) with the node's attributes, through the Conv converter. */
static kiln_status_t kiln_onnx_integer_conv(const kiln_onnx_node_t *node, kiln_expr_t *x,
                                            kiln_expr_t *w, kiln_expr_t **out_expr) {
  kiln_expr_t *inputs[2] = {x, w}, *outputs[2] = {NULL, NULL};
  kiln_onnx_node_t conv = *node;
  conv.num_inputs = 2;
  conv.inputs = inputs;
  conv.num_outputs = 1;
  conv.outputs = outputs;
  KILN_RETURN_IF_ERROR(kiln_onnx_convert_conv(&conv));
  *out_expr = outputs[0];
  return KILN_OK;
}

/* round(y · multiplier) + zero_point, saturated to the zero point's dtype
 * (uint8 when it is omitted), in float64 as ONNX's reference computes it. */
static kiln_status_t kiln_onnx_requantize(const kiln_onnx_node_t *node, kiln_expr_t *y,
                                          kiln_expr_t *multiplier, kiln_expr_t *zero_point,
                                          kiln_expr_t **out_expr) {
  kiln_dtype_t dtype = zero_point ? kiln_onnx_type_of(zero_point)->dtype : KILN_DTYPE_UINT8;
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, y, KILN_DTYPE_FLOAT64, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, multiplier, KILN_DTYPE_FLOAT64, &multiplier));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, y, multiplier, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_round, y, NULL, &y));
  if (zero_point) {
    KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, zero_point, KILN_DTYPE_FLOAT64, &zero_point));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, y, zero_point, NULL, &y));
  }
  return kiln_onnx_cast(node, y, dtype, out_expr);
}

/* a_scale · b_scale / y_scale (float32, as the inputs), a per-channel b
 * scale of `channels` values reshaped to (C, 1, ..., 1) of rank `along`. */
static kiln_status_t kiln_onnx_multiplier(const kiln_onnx_node_t *node, kiln_expr_t *a_scale,
                                          kiln_expr_t *b_scale, kiln_expr_t *y_scale, int along,
                                          kiln_expr_t **out_expr) {
  const kiln_tensor_type_t *bt = kiln_onnx_type_of(b_scale);
  if (bt->ndim == 1 && bt->shape[0] != 1 && along > 0) {
    int64_t shape[KILN_MAX_RANK];
    shape[0] = bt->shape[0];
    for (int d = 1; d < along; ++d) {
      shape[d] = 1;
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, b_scale, along, shape, &b_scale));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, a_scale, b_scale, NULL, out_expr));
  return kiln_onnx_emit2(node, &kiln_op_divide, *out_expr, y_scale, NULL, out_expr);
}

kiln_status_t kiln_onnx_convert_matmul_integer(kiln_onnx_node_t *node) {
  kiln_expr_t *a = NULL, *b = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &b));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_integer_operand(node, a, kiln_onnx_input_optional(node, 2), 2, &a));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_integer_operand(node, b, kiln_onnx_input_optional(node, 3), 0, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_matmul, a, b, NULL, &y));
  return kiln_onnx_cast(node, y, KILN_DTYPE_INT32, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_conv_integer(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *w = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &w));
  int rank = kiln_onnx_type_of(w)->ndim;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_integer_operand(node, x, kiln_onnx_input_optional(node, 2), 0, &x));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_integer_operand(node, w, kiln_onnx_input_optional(node, 3), rank, &w));
  KILN_RETURN_IF_ERROR(kiln_onnx_integer_conv(node, x, w, &y));
  return kiln_onnx_cast(node, y, KILN_DTYPE_INT32, &node->outputs[0]);
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp). */
kiln_status_t kiln_onnx_convert_qlinear_matmul(kiln_onnx_node_t *node) {
  kiln_expr_t *in[8], *y = NULL, *multiplier = NULL;
  for (int i = 0; i < 8; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &in[i]));
  }
  kiln_expr_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_integer_operand(node, in[0], in[2], 2, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_integer_operand(node, in[3], in[5], 0, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_matmul, a, b, NULL, &y));
  KILN_RETURN_IF_ERROR(kiln_onnx_multiplier(node, in[1], in[4], in[6], 0, &multiplier));
  return kiln_onnx_requantize(node, y, multiplier, in[7], &node->outputs[0]);
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B). */
kiln_status_t kiln_onnx_convert_qlinear_conv(kiln_onnx_node_t *node) {
  kiln_expr_t *in[8], *x = NULL, *w = NULL, *y = NULL, *multiplier = NULL;
  for (int i = 0; i < 8; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &in[i]));
  }
  int rank = kiln_onnx_type_of(in[3])->ndim;
  KILN_RETURN_IF_ERROR(kiln_onnx_integer_operand(node, in[0], in[2], 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_integer_operand(node, in[3], in[5], rank, &w));
  KILN_RETURN_IF_ERROR(kiln_onnx_integer_conv(node, x, w, &y));
  kiln_expr_t *bias = kiln_onnx_input_optional(node, 8);
  if (bias) {
    KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, bias, KILN_DTYPE_FLOAT32, &bias));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_bias_add, y, bias, NULL, &y));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_multiplier(node, in[1], in[4], in[6], rank - 1, &multiplier));
  return kiln_onnx_requantize(node, y, multiplier, in[7], &node->outputs[0]);
}
