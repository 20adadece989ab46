/*
 * The nn, normalization, reduction, loss and quantization converters on the
 * interpreter: ConvTranspose (padding from pads, output_shape and auto_pad,
 * 1-D lifted to 2-D, 3-D refused), LRN, InstanceNormalization,
 * MeanVarianceNormalization, BatchNormalization in training mode, Hardmax
 * before and from opset 13, ReduceProd, the stable ReduceLogSumExp, ArgMin,
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with weights,
 * ignore_index and every reduction, QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv, CastLike and MaxPool's Indices (row and column major, 1-D,
 * ceil_mode on int8, dilation; 3-D refused). Numbers are computed by hand in the
 * comments. Last, an allocation-failure sweep over an import that uses many
 * of these converters and folds them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"
#include "op/nn_common.h"

/* Imports `ob` without options (a module made by mistake leaks; the
 * assertion using it fails first). */
/* The attrs of the first call of `op` in @main's body chain. */
static const kiln_nn_conv2d_transpose_attrs_t *tconv_attrs(kiln_module_t *module) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(kiln_ir_order_compute(om_main(module), kiln_allocator_system(), &order));
  const kiln_nn_conv2d_transpose_attrs_t *attrs = NULL;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
    if (call && call->op == &kiln_op_conv2d_transpose) {
      attrs = call->attrs;
    }
  }
  kiln_ir_order_deinitialize(&order);
  assert_non_null(attrs);
  return attrs;
}

static void assert_ints(kiln_ints_t ints, int count, const int64_t *expected) {
  assert_int_equal(ints.count, count);
  for (int i = 0; i < count; ++i) {
    assert_int_equal(ints.values[i], expected[i]);
  }
}

/* ---- ConvTranspose ---- */

/* x (1, 1, 2, 2) = 1..4 under a 2x2 kernel of ones, stride 1, bias 0.5:
 * each input adds itself to a 2x2 block of the (3, 3) output. */
static void test_conv_transpose_basic(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 1, 1, 1)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0.5)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "w", values[1]);
  or_input(&ob, "b", values[2]);
  ob_node(&ob, "ConvTranspose", "ct", "x,w,b", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 3, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_conv2d_transpose), 1);
  assert_int_equal(om_count_calls(run.module, &kiln_op_bias_add), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 3, 3),
            OR_D(1.5, 3.5, 2.5, 4.5, 10.5, 6.5, 3.5, 7.5, 4.5), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  or_release(3, values);
}

/* Stride 2: output_shape (5, 5) is one more than the strides reach (4), so
 * ONNX's total padding is -1: the end pad becomes output_padding 1. */
static void test_conv_transpose_output_shape(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 1, 1, 1)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "w", values[1]);
  Onnx__NodeProto *node = ob_node(&ob, "ConvTranspose", "ct", "x,w", "y");
  ob_attr_ints(&ob, node, "strides", 2, OB_I64(2, 2));
  ob_attr_ints(&ob, node, "output_shape", 2, OB_I64(5, 5));
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  const kiln_nn_conv2d_transpose_attrs_t *attrs = tconv_attrs(run.module);
  assert_ints(attrs->padding, 4, OB_I64(0, 0, 0, 0));
  assert_ints(attrs->output_padding, 2, OB_I64(1, 1));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 5, 5),
            OR_D(1, 1, 2, 2, 0, 1, 1, 2, 2, 0, 3, 3, 4, 4, 0, 3, 3, 4, 4, 0, 0, 0, 0, 0, 0), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);
}

/* Kernel 3x3 of ones, stride 2 over (2, 2): the strides reach 5, SAME asks
 * for 4, so one pixel of padding goes at the end (SAME_UPPER) or at the
 * start (SAME_LOWER). */
static void test_conv_transpose_auto_pad(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 3, 3), OR_D(1, 1, 1, 1, 1, 1, 1, 1, 1)),
  };
  const char *modes[2] = {"SAME_UPPER", "SAME_LOWER"};
  const int64_t pads[2][4] = {{0, 0, 1, 1}, {1, 1, 0, 0}};
  const double expected[2][16] = {{1, 1, 3, 2, 1, 1, 3, 2, 4, 4, 10, 6, 3, 3, 7, 4},
                                  {1, 3, 2, 2, 4, 10, 6, 6, 3, 7, 4, 4, 3, 7, 4, 4}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", values[0]);
    or_input(&ob, "w", values[1]);
    Onnx__NodeProto *node = ob_node(&ob, "ConvTranspose", "ct", "x,w", "y");
    ob_attr_ints(&ob, node, "strides", 2, OB_I64(2, 2));
    ob_attr_string(&ob, node, "auto_pad", modes[k]);
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 2, values, &run);
    assert_ints(tconv_attrs(run.module)->padding, 4, pads[k]);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 4, 4), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(2, values);
}

/* 1-D: x (1, 1, 3) = (1, 2, 3), two output channels with kernels (1, 1)
 * and (1, -1); 4-D is refused. */
static void test_conv_transpose_1d_and_4d(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 3), OR_D(1, 2, 3)),
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 2), OR_D(1, 1, 1, -1)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "w", values[1]);
  ob_node(&ob, "ConvTranspose", "ct", "x,w", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_expand_dims), 2);
  assert_int_equal(om_count_calls(run.module, &kiln_op_squeeze), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 4), OR_D(1, 3, 5, 3, 1, 1, 1, -3),
            0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);

  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 6, OB_DIMS(1, 1, 2, 2, 2, 2));
  ob_input(&ob, "w", OB_FLOAT, 6, OB_DIMS(1, 1, 1, 1, 1, 1));
  ob_node(&ob, "ConvTranspose", "ct4", "x,w", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(or_import_plain(&ob), UNIMPLEMENTED,
                     "node \"ct4\" (ConvTranspose): data (1, 1, 2, 2, 2, 2) has 4 spatial dims; "
                     "kiln supports 1-D to 3-D windows here");
  ob.inputs[1] = ob_value_info(&ob, "w", OB_FLOAT, 4, OB_DIMS(1, 1, 1, 1));
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"ct4\" (ConvTranspose): weight has rank 4 but data has rank 6");
  ob_free(&ob);
}

/* 3-D ConvTranspose is nn.conv3d_transpose: x (1, 1, 2, 1, 1) = (1, 2)
 * along D, stride 2 there, kernel (1, 1, 2, 1, 1) = (1, 10), output_padding
 * 1 along D, or output_shape (5, 1, 1) (an end pad of -1, which becomes
 * that output_padding): (1, 10, 2, 20, 0). */
static void test_conv_transpose_3d(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 2, 1, 1), OR_D(1, 2)),
      or_tensor(KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 2, 1, 1), OR_D(1, 10)),
  };
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", values[0]);
    or_input(&ob, "w", values[1]);
    Onnx__NodeProto *node = ob_node(&ob, "ConvTranspose", "ct3", "x,w", "y");
    ob_attr_ints(&ob, node, "strides", 3, OB_I64(2, 1, 1));
    if (k == 0) {
      ob_attr_ints(&ob, node, "output_padding", 3, OB_I64(1, 0, 0));
    } else {
      ob_attr_ints(&ob, node, "output_shape", 3, OB_I64(5, 1, 1));
    }
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 2, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_conv3d_transpose), 1);
    assert_int_equal(om_count_calls(run.module, &kiln_op_expand_dims), 0);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 5, 1, 1), OR_D(1, 10, 2, 20, 0),
              0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(2, values);
}

/* 3-D Conv is nn.conv3d: x (1, 1, 3, 1, 2) = ((1, 2), (3, 4), (5, 6)) along
 * D then W, kernel (1, 1, 2, 1, 1) = (2, 1) and a bias of 0.5. pads 1 at
 * the front of D: y[d] = 2 x[d - 1] + x[d] + 0.5; auto_pad SAME_UPPER pads
 * the back: y[d] = 2 x[d] + x[d + 1] + 0.5. */
static void test_conv_3d(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 3, 1, 2), OR_D(1, 2, 3, 4, 5, 6)),
      or_tensor(KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 2, 1, 1), OR_D(2, 1)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0.5)),
  };
  const double expected[2][6] = {{1.5, 2.5, 5.5, 8.5, 11.5, 14.5},
                                 {5.5, 8.5, 11.5, 14.5, 10.5, 12.5}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", values[0]);
    or_input(&ob, "w", values[1]);
    or_input(&ob, "b", values[2]);
    Onnx__NodeProto *node = ob_node(&ob, "Conv", "c3", "x,w,b", "y");
    if (k == 0) {
      ob_attr_ints(&ob, node, "pads", 6, OB_I64(1, 0, 0, 0, 0, 0));
    } else {
      ob_attr_string(&ob, node, "auto_pad", "SAME_UPPER");
    }
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 3, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_conv3d), 1);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 3, 1, 2), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(3, values);
}

/* ---- normalization ---- */

static void test_lrn_and_instance_norm(void **state) {
  (void)state;
  /* LRN size 3, alpha 3 (alpha / size = 1), beta 1, bias 1 over channels
   * (1, 2, 3): windows {0, 1}, {0, 1, 2}, {1, 2} */
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 3, 1, 1), OR_D(1, 2, 3));
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", x);
  Onnx__NodeProto *node = ob_node(&ob, "LRN", "lrn", "x", "y");
  ob_attr_int(&ob, node, "size", 3);
  ob_attr_float(&ob, node, "alpha", 3);
  ob_attr_float(&ob, node, "beta", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_lrn), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 3, 1, 1),
            OR_D(1.0 / 6, 2.0 / 15, 3.0 / 14), 1e-7);
  or_run_free(&run);
  node->n_attribute = 0;
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"lrn\" (LRN): attribute size is required");
  ob_free(&ob);
  kiln_tensor_release(x);

  /* InstanceNormalization over (1, 2, 2): channel 0 (1, 3) has mean 2 and
   * variance 1, channel 1 (2, 6) mean 4 and variance 4; scale (1, 2), bias
   * (0, 1) */
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 2), OR_D(1, 3, 2, 6)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0, 1)),
  };
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  or_input(&ob, "b", values[2]);
  node = ob_node(&ob, "InstanceNormalization", "in", "x,s,b", "y");
  ob_attr_float(&ob, node, "epsilon", 0);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run(&ob, 3, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_instance_norm), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 2), OR_D(-1, 1, -1, 3), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  or_release(3, values);
}

/* (x - mean) / sqrt(variance + 1e-9) over the default axes (0, 2, 3): mean
 * 2.5 and variance 1.25 over 1..4; over axis 3 alone each row is (-1, 1). */
static void test_mean_variance_normalization(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 2, 3, 4));
  double sd = sqrt(1.25);
  const double expected[2][4] = {{-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd}, {-1, 1, -1, 1}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, "MeanVarianceNormalization", "mvn", "x", "y");
    if (k == 1) {
      ob_attr_ints(&ob, node, "axes", 1, OB_I64(3));
    }
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), expected[k], 1e-5);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* Training mode over x (2, 1, 2) = (1, 2, 3, 6): batch mean 3, variance
 * (4 + 1 + 0 + 9) / 4 = 3.5; momentum 0.5 blends running (1, 1) into
 * mean 2 and variance 2.25. */
static void test_batch_norm_training(void **state) {
  (void)state;
  kiln_tensor_t *values[5] = {
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 2), OR_D(1, 2, 3, 6)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(2)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(1)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(1)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(1)),
  };
  ob_t ob;
  ob_init(&ob, 15);
  const char *names[5] = {"x", "s", "b", "m", "v"};
  for (int i = 0; i < 5; ++i) {
    or_input(&ob, names[i], values[i]);
  }
  Onnx__NodeProto *node = ob_node(&ob, "BatchNormalization", "bn", "x,s,b,m,v", "y,rm,rv");
  ob_attr_int(&ob, node, "training_mode", 1);
  ob_attr_float(&ob, node, "momentum", 0.5f);
  ob_attr_float(&ob, node, "epsilon", 0);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_output(&ob, "rm", KILN_DTYPE_FLOAT32);
  or_output(&ob, "rv", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 5, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_batch_norm), 0);
  double sd = sqrt(3.5);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 2),
            OR_D(-4 / sd + 1, -2 / sd + 1, 1, 6 / sd + 1), 1e-6);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(2), 1e-6);
  or_assert(run.outputs[2], KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(2.25), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  or_release(5, values);
}

/* ---- reductions ---- */

/* x (1, 2, 2) = (1, 3, 2, 0), axis 1: before opset 13 the input is (1, 4)
 * and the maximum is element 1; from 13 each column of dim 1 has its own. */
static void test_hardmax_by_opset(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 2), OR_D(1, 3, 2, 0));
  const int64_t opsets[2] = {11, 13};
  const double expected[2][4] = {{0, 1, 0, 0}, {0, 1, 1, 0}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, opsets[k]);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, "Hardmax", "hm", "x", "y");
    ob_attr_int(&ob, node, "axis", 1);
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_argmax), 1);
    assert_int_equal(om_count_calls(run.module, &kiln_op_one_hot), 1);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 2), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* A reduction node over x with axes and keepdims; runs it. */
static void run_reduce(const char *op_type, kiln_tensor_t *x, int axes_count, const int64_t *axes,
                       int64_t keepdims, or_run_t *run) {
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", x);
  Onnx__NodeProto *node = ob_node(&ob, op_type, "r", "x", "y");
  if (axes_count > 0) {
    ob_attr_ints(&ob, node, "axes", (size_t)axes_count, axes);
  }
  ob_attr_int(&ob, node, "keepdims", keepdims);
  or_output(&ob, "y", kiln_tensor_dtype(x));
  or_run(&ob, 1, &x, run);
  ob_free(&ob);
}

static void test_reductions(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(1, 2, 3, 4));
  or_run_t run;
  run_reduce("ReduceProd", x, 1, OB_I64(1), 0, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_prod), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(2, 12), 0.0);
  or_run_free(&run);
  kiln_tensor_release(x);
  /* log(e^1000 + e^1000) = 1000 + log 2, not inf: the max is taken out first */
  x = or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(1000, 1000, -1, 1));
  run_reduce("ReduceLogSumExp", x, 1, OB_I64(1), 0, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_max), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2),
            OR_D(1000 + log(2.0), 1 + log1p(exp(-2))), 1e-4);
  or_run_free(&run);
  run_reduce("ReduceLogSumExp", x, 0, NULL, 1, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 1), OR_D(1000 + log(2.0)), 1e-4);
  or_run_free(&run);
  kiln_tensor_release(x);
  /* ArgMin: the first minimum, or the last with select_last_index */
  x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(1, 0, 0));
  for (int last = 0; last < 2; ++last) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, "ArgMin", "a", "x", "y");
    ob_attr_int(&ob, node, "select_last_index", last);
    or_output(&ob, "y", KILN_DTYPE_INT64);
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_argmin), 1);
    or_assert(run.outputs[0], KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(last ? 2 : 1), 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* ---- losses ---- */

/* NLL over log-probabilities ((-1, -2, -3), (-4, -5, -6)) with targets
 * (2, 1): the picked values are -3 and -5. */
static void run_nll(const char *reduction, bool weighted, int64_t ignore_index, or_run_t *run,
                    kiln_tensor_t **values) {
  values[0] = or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 3), OR_D(-1, -2, -3, -4, -5, -6));
  values[1] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(2, 1));
  values[2] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(1, 2, 3));
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "t", values[1]);
  if (weighted) {
    or_input(&ob, "w", values[2]);
  }
  Onnx__NodeProto *node =
      ob_node(&ob, "NegativeLogLikelihoodLoss", "nll", weighted ? "x,t,w" : "x,t", "y");
  if (reduction) {
    ob_attr_string(&ob, node, "reduction", reduction);
  }
  if (ignore_index >= 0) {
    ob_attr_int(&ob, node, "ignore_index", ignore_index);
  }
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run(&ob, weighted ? 3 : 2, values, run);
  ob_free(&ob);
}

static void test_nll_loss(void **state) {
  (void)state;
  typedef struct {
    const char *reduction;
    bool weighted;
    int64_t ignore;
    int ndim;
    double expected[2];
  } nll_case_t;
  const nll_case_t cases[] = {
      {"none", true, -1, 1, {9, 10}},                             /* weights 3 and 2 */
      {"sum", true, -1, 0, {19}},     {NULL, true, -1, 0, {3.8}}, /* mean: 19 / (3 + 2) */
      {NULL, false, -1, 0, {4}},                                  /* (3 + 5) / 2 */
      {NULL, true, 2, 0, {5}},                                    /* target 2 ignored: 10 / 2 */
      {NULL, false, 2, 0, {5}},                                   /* 5 / 1 */
      {"none", false, 1, 1, {3, 0}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    kiln_tensor_t *values[3];
    or_run_t run;
    run_nll(cases[i].reduction, cases[i].weighted, cases[i].ignore, &run, values);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, cases[i].ndim, OB_DIMS(2), cases[i].expected,
              1e-6);
    or_run_free(&run);
    or_release(3, values);
  }
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(2, 3));
  ob_input(&ob, "t", OB_INT64, 1, OB_DIMS(2));
  Onnx__NodeProto *node = ob_node(&ob, "NegativeLogLikelihoodLoss", "nll", "x,t", "y");
  ob_attr_string(&ob, node, "reduction", "max");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"nll\" (NegativeLogLikelihoodLoss): attribute reduction is \"max\"; "
                     "expected none, sum or mean");
  node->n_attribute = 0;
  ob.inputs[1] = ob_value_info(&ob, "t", OB_INT64, 2, OB_DIMS(2, 3));
  KILN_ASSERT_STATUS(
      or_import_plain(&ob), INVALID_ARGUMENT,
      "node \"nll\" (NegativeLogLikelihoodLoss): input has rank 2 and target rank 2; "
      "expected (N, C, d1, ...) and (N, d1, ...)");
  ob_free(&ob);
}

/* Scores ((0, 0), (1, 1)): every log-probability is -log 2, so the mean
 * loss is log 2; the second output is log_softmax itself. */
static void test_softmax_cross_entropy(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(0, 0, 1, 1)),
      or_tensor(KILN_DTYPE_INT32, 1, OB_DIMS(2), OR_D(0, 1)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "s", values[0]);
  or_input(&ob, "l", values[1]);
  ob_node(&ob, "SoftmaxCrossEntropyLoss", "sce", "s,l", "loss,log_prob");
  or_output(&ob, "loss", KILN_DTYPE_FLOAT32);
  or_output(&ob, "log_prob", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_log_softmax), 1);
  double l2 = log(2.0);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 0, NULL, OR_D(l2), 1e-6);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(-l2, -l2, -l2, -l2), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);
}

/* ---- quantization ---- */

static void test_quantize_linear(void **state) {
  (void)state;
  /* scale 0.5, zero point 128 (uint8) or -1 (int8): round(x / 0.5) + zp,
   * half to even (0.25 / 0.5 = 0.5 -> 0, 0.75 / 0.5 = 1.5 -> 2), saturated */
  const kiln_dtype_t dtypes[2] = {KILN_DTYPE_UINT8, KILN_DTYPE_INT8};
  const double zero_points[2] = {128, -1};
  const double expected[2][5] = {{128, 130, 131, 122, 255}, {-1, 1, 2, -7, 127}};
  for (int k = 0; k < 2; ++k) {
    kiln_tensor_t *values[3] = {
        or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(5), OR_D(0.25, 0.75, 1.5, -3, 1000)),
        or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0.5)),
        or_tensor(dtypes[k], 0, NULL, &zero_points[k]),
    };
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", values[0]);
    or_input(&ob, "s", values[1]);
    or_input(&ob, "z", values[2]);
    ob_node(&ob, "QuantizeLinear", "q", "x,s,z", "y");
    or_output(&ob, "y", dtypes[k]);
    or_run_t run;
    or_run(&ob, 3, values, &run);
    or_assert(run.outputs[0], dtypes[k], 1, OB_DIMS(5), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
    or_release(3, values);
  }
  /* per-axis scale (1, 2) along axis 1 of (1, 2, 1), no zero point: uint8 */
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 1), OR_D(3, 3)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  ob_node(&ob, "QuantizeLinear", "q", "x,s", "y");
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_UINT8, 3, OB_DIMS(1, 2, 1), OR_D(3, 2), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(1, 2, 1));
  ob_init_f32(&ob, "s", 1, OB_DIMS(3), OB_F32(1, 2, 3));
  ob_node(&ob, "QuantizeLinear", "q", "x,s", "y");
  ob_output(&ob, "y", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
  KILN_ASSERT_STATUS(
      or_import_plain(&ob), INVALID_ARGUMENT,
      "node \"q\" (QuantizeLinear): a scale or zero point of shape (3,) does not fit "
      "axis 1 (size 2)");
  ob_free(&ob);
}

static void test_dequantize_and_dynamic(void **state) {
  (void)state;
  /* (x - 3) * 2 */
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_UINT8, 1, OB_DIMS(3), OR_D(0, 3, 255)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(2)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(3)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  or_input(&ob, "z", values[2]);
  ob_node(&ob, "DequantizeLinear", "dq", "x,s,z", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 3, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(-6, 0, 504), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(3, values);
  /* x (0, 2, -1, 1): range [-1, 2], scale 3 / 255, zero point 85 */
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(0, 2, -1, 1));
  ob_init(&ob, 13);
  or_input(&ob, "x", x);
  ob_node(&ob, "DynamicQuantizeLinear", "dql", "x", "y,scale,zp");
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  or_output(&ob, "scale", KILN_DTYPE_FLOAT32);
  or_output(&ob, "zp", KILN_DTYPE_UINT8);
  or_run(&ob, 1, &x, &run);
  or_assert(run.outputs[0], KILN_DTYPE_UINT8, 1, OB_DIMS(4), OR_D(85, 255, 0, 170), 0.0);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 0, NULL, OR_D(3.0 / 255), 1e-9);
  or_assert(run.outputs[2], KILN_DTYPE_UINT8, 0, NULL, OR_D(85), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* MatMulInteger: (A - 1) (B - 5) = ((0, 1), (2, 3)) ((0), (1)); with a
 * zero point per row (1, 3): ((0, 1), (0, 1)) ((0), (1)). ConvInteger:
 * (x - 1) * 3. */
static void test_integer_products(void **state) {
  (void)state;
  kiln_tensor_t *values[4] = {
      or_tensor(KILN_DTYPE_UINT8, 2, OB_DIMS(2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_UINT8, 2, OB_DIMS(2, 1), OR_D(5, 6)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(1)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(5)),
  };
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    const char *names[4] = {"a", "b", "za", "zb"};
    for (int i = 0; i < 4; ++i) {
      or_input(&ob, names[i], values[i]);
    }
    ob_node(&ob, "MatMulInteger", "mm", "a,b,za,zb", "y");
    or_output(&ob, "y", KILN_DTYPE_INT32);
    or_run_t run;
    or_run(&ob, 4, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_matmul), 1);
    or_assert(run.outputs[0], KILN_DTYPE_INT32, 2, OB_DIMS(2, 1), k ? OR_D(1, 1) : OR_D(1, 3), 0.0);
    or_run_free(&run);
    ob_free(&ob);
    kiln_tensor_release(values[2]);
    values[2] = or_tensor(KILN_DTYPE_UINT8, 1, OB_DIMS(2), OR_D(1, 3));
  }
  or_release(4, values);
  kiln_tensor_t *conv[3] = {
      or_tensor(KILN_DTYPE_UINT8, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_UINT8, 4, OB_DIMS(1, 1, 1, 1), OR_D(3)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(1)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", conv[0]);
  or_input(&ob, "w", conv[1]);
  or_input(&ob, "zx", conv[2]);
  ob_node(&ob, "ConvInteger", "ci", "x,w,zx", "y");
  or_output(&ob, "y", KILN_DTYPE_INT32);
  or_run_t run;
  or_run(&ob, 3, conv, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_conv2d), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(0, 3, 6, 9), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(3, conv);
}

/* QLinearMatMul: (a - 10)(b - 2) = (0, 10) ((2), (4)) = 40, times 0.5 ·
 * 0.25 / 0.3, rounded (16.67 -> 17), plus 1. QLinearConv with a weight
 * scale per output channel (0.5, 0.25) and a bias (1, -2): channel 0 is
 * ((2, 4) · 2 + 1) · 0.5 = (2.5, 4.5), channel 1 ((2, 4) · 4 - 2) · 0.25 =
 * (1.5, 3.5), both rounding half to even to (2, 4). */
static void test_qlinear_products(void **state) {
  (void)state;
  kiln_tensor_t *mm[8] = {
      or_tensor(KILN_DTYPE_UINT8, 2, OB_DIMS(1, 2), OR_D(10, 20)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0.5)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(10)),
      or_tensor(KILN_DTYPE_UINT8, 2, OB_DIMS(2, 1), OR_D(4, 6)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0.25)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(2)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0.3)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(1)),
  };
  ob_t ob;
  or_start(&ob, 13, "QLinearMatMul", "a,b,c,d,e,f,g,h", 8, mm);
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  or_run_t run;
  or_run(&ob, 8, mm, &run);
  or_assert(run.outputs[0], KILN_DTYPE_UINT8, 2, OB_DIMS(1, 1), OR_D(18), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(8, mm);
  kiln_tensor_t *conv[9] = {
      or_tensor(KILN_DTYPE_UINT8, 4, OB_DIMS(1, 1, 1, 2), OR_D(3, 5)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(1)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(1)),
      or_tensor(KILN_DTYPE_UINT8, 4, OB_DIMS(2, 1, 1, 1), OR_D(2, 4)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0.5, 0.25)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(0)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(1)),
      or_tensor(KILN_DTYPE_UINT8, 0, NULL, OR_D(0)),
      or_tensor(KILN_DTYPE_INT32, 1, OB_DIMS(2), OR_D(1, -2)),
  };
  or_start(&ob, 13, "QLinearConv", "a,b,c,d,e,f,g,h,i", 9, conv);
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  or_run(&ob, 9, conv, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_conv2d), 1);
  or_assert(run.outputs[0], KILN_DTYPE_UINT8, 4, OB_DIMS(1, 2, 1, 2), OR_D(2, 4, 2, 4), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(9, conv);
}

static void test_cast_like(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_INT32, 1, OB_DIMS(2), OR_D(1, -2)),
      or_tensor(KILN_DTYPE_FLOAT64, 0, NULL, OR_D(0)),
  };
  ob_t ob;
  ob_init(&ob, 15);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "like", values[1]);
  ob_node(&ob, "CastLike", "cl", "x,like", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT64);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_cast), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT64, 1, OB_DIMS(2), OR_D(1, -2), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);
}

/* ---- allocation failures ---- */

static kiln_status_t import_scenario(kiln_allocator_t allocator, void *context) {
  ob_t *ob = context;
  size_t size = onnx__model_proto__get_packed_size(&ob->model);
  uint8_t *bytes = malloc(size);
  onnx__model_proto__pack(&ob->model, bytes);
  kiln_module_t *module = NULL;
  kiln_status_t status =
      kiln_onnx_import_buffer("sweep.onnx", bytes, size, NULL, NULL, allocator, &module);
  free(bytes);
  kiln_module_destroy(module);
  return status;
}

/* ConvTranspose, TopK (a tuple), SoftmaxCrossEntropyLoss, Compress,
 * QuantizeLinear and Hardmax, all folded at import, with each allocation
 * failing in turn. */
/* ---- MaxPool's Indices ---- */

/* A MaxPool of x into y and the indices z, run on the interpreter. */
static Onnx__NodeProto *max_pool_model(ob_t *ob, kiln_tensor_t *x, int rank,
                                       const int64_t *kernel) {
  ob_init(ob, 12);
  or_input(ob, "x", x);
  Onnx__NodeProto *node = ob_node(ob, "MaxPool", "p", "x", "y,z");
  ob_attr_ints(ob, node, "kernel_shape", (size_t)rank, kernel);
  or_output(ob, "y", kiln_tensor_dtype(x));
  or_output(ob, "z", KILN_DTYPE_INT64);
  return node;
}

static void run_indices(ob_t *ob, kiln_tensor_t *x, int ndim, const int64_t *dims,
                        const double *values, const double *indices) {
  or_run_t run;
  or_run(ob, 1, &x, &run);
  assert_int_equal(run.num_outputs, 2);
  or_assert(run.outputs[0], kiln_tensor_dtype(x), ndim, dims, values, 0.0);
  or_assert(run.outputs[1], KILN_DTYPE_INT64, ndim, dims, indices, 0.0);
  or_run_free(&run);
  ob_free(ob);
}

/* Channel 0 [[1, 5, 2], [7, 3, 9]], channel 1 [[4, 4, 0], [-1, 8, 8]],
 * 2x2 windows: 7 at (1, 0), 9 at (1, 2); 8 at (1, 1) in both windows of
 * channel 1 (the first largest cell, row by row), offset by H W = 6.
 * storage_order 1 counts ih + iw H. */
static void test_max_pool_indices(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 2, 3),
                               OR_D(1, 5, 2, 7, 3, 9, 4, 4, 0, -1, 8, 8));
  ob_t ob;
  max_pool_model(&ob, x, 2, OB_I64(2, 2));
  run_indices(&ob, x, 4, OB_DIMS(1, 2, 1, 2), OR_D(7, 9, 8, 8), OR_D(3, 5, 10, 10));
  Onnx__NodeProto *node = max_pool_model(&ob, x, 2, OB_I64(2, 2));
  ob_attr_int(&ob, node, "storage_order", 1);
  run_indices(&ob, x, 4, OB_DIMS(1, 2, 1, 2), OR_D(7, 9, 8, 8), OR_D(1, 5, 9, 9));
  kiln_tensor_release(x);
  /* 1-D, stride 2, padding 1 each side: windows [-1, 0], [1, 2], [3, 4]. */
  x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 5), OR_D(3, 1, 4, 1, 5));
  node = max_pool_model(&ob, x, 1, OB_I64(2));
  ob_attr_ints(&ob, node, "strides", 1, OB_I64(2));
  ob_attr_ints(&ob, node, "pads", 2, OB_I64(1, 1));
  run_indices(&ob, x, 3, OB_DIMS(1, 1, 3), OR_D(3, 4, 5), OR_D(0, 2, 4));
  kiln_tensor_release(x);
  /* int8, stride 2 with ceil_mode: the last row and column of windows run
   * past the input. */
  x = or_tensor(KILN_DTYPE_INT8, 4, OB_DIMS(1, 1, 3, 3), OR_D(1, 2, 3, 4, 5, 6, 7, 8, -9));
  node = max_pool_model(&ob, x, 2, OB_I64(2, 2));
  ob_attr_ints(&ob, node, "strides", 2, OB_I64(2, 2));
  ob_attr_int(&ob, node, "ceil_mode", 1);
  run_indices(&ob, x, 4, OB_DIMS(1, 1, 2, 2), OR_D(5, 6, 8, -9), OR_D(4, 5, 7, 8));
  kiln_tensor_release(x);
  /* Dilation 2: the four corners. */
  x = or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 3, 3), OR_D(1, 2, 3, 4, 5, 6, 9, 8, 7));
  node = max_pool_model(&ob, x, 2, OB_I64(2, 2));
  ob_attr_ints(&ob, node, "dilations", 2, OB_I64(2, 2));
  run_indices(&ob, x, 4, OB_DIMS(1, 1, 1, 1), OR_D(9), OR_D(6));
  kiln_tensor_release(x);
  /* A 3-D window has no Indices. */
  x = or_tensor(KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 1, 1, 1, 2), OR_D(1, 2));
  max_pool_model(&ob, x, 3, OB_I64(1, 1, 2));
  kiln_status_t status = or_import_plain(&ob);
  assert_non_null(status);
  assert_non_null(strstr(kiln_status_message(status),
                         "node \"p\" (MaxPool): output 1 (Indices) is supported for 1-D and 2-D "
                         "windows"));
  kiln_status_free(status);
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* A pool node that names no output at all (found by the importer's
 * fuzzer: the 1-D window's second output was read past the node's outputs)
 * imports, and the graph output it does not make is named. */
static void test_pool_without_outputs(void **state) {
  (void)state;
  const char *ops[] = {"MaxPool", "AveragePool"};
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 4), OR_D(1, 2, 3, 4));
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 13, ops[i], "a", 1, &x);
    ob_attr_ints(&ob, node, "kernel_shape", 1, OB_I64(2));
    node->n_output = 0;
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                       "graph output \"y\" is produced by no node");
    ob_free(&ob);
    kiln_tensor_release(x);
  }
}

static void test_allocation_failures(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_init_f32(&ob, "x", 4, OB_DIMS(1, 1, 2, 2), OB_F32(1, 2, 3, 4));
  ob_init_f32(&ob, "w", 4, OB_DIMS(1, 2, 2, 2), OB_F32(1, 1, 1, 1, 1, -1, 1, -1));
  ob_init_i64(&ob, "k", 1, OB_DIMS(1), OB_I64(2));
  ob_init_i64(&ob, "labels", 3, OB_DIMS(1, 4, 2), OB_I64(0, 1, 1, 0, 0, 1, 1, 0));
  ob_initializer(&ob, ob_tensor_raw(&ob, "cond", OB_BOOL, 1, OB_DIMS(2), "\1\0", 2));
  ob_init_f32(&ob, "scale", 0, NULL, OB_F32(0.5f));
  Onnx__NodeProto *node = ob_node(&ob, "ConvTranspose", "ct", "x,w", "t");
  ob_attr_ints(&ob, node, "strides", 2, OB_I64(2, 2));
  ob_node(&ob, "Compress", "c", "t,cond", "picked");
  ob_node(&ob, "TopK", "top", "t,k", "values,indices");
  ob_node(&ob, "SoftmaxCrossEntropyLoss", "sce", "values,labels", "loss");
  ob_node(&ob, "QuantizeLinear", "q", "t,scale", "quantized");
  ob_node(&ob, "Hardmax", "hm", "t", "hard");
  ob_output(&ob, "loss", OB_FLOAT, 0, NULL);
  ob_output(&ob, "picked", OB_FLOAT, 1, OB_DIMS(1));
  ob_output(&ob, "indices", OB_INT64, 0, NULL);
  ob_output(&ob, "quantized", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
  ob_output(&ob, "hard", OB_FLOAT, 0, NULL);
  KILN_ASSERT_OK(import_scenario(kiln_allocator_system(), &ob));
  int64_t attempts = kiln_test_sweep_allocation_failures(import_scenario, &ob);
  assert_true(attempts > 50);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_pool_without_outputs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_transpose_basic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_transpose_output_shape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_transpose_auto_pad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_transpose_1d_and_4d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_transpose_3d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_3d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lrn_and_instance_norm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mean_variance_normalization, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_norm_training, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hardmax_by_opset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reductions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nll_loss, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_cross_entropy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_quantize_linear, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dequantize_and_dynamic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_integer_products, setup, teardown),
      cmocka_unit_test_setup_teardown(test_qlinear_products, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_like, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_pool_indices, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
