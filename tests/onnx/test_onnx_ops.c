/*
 * Tests of the operator converters where the mapping is a choice: which
 * registry operators an ONNX operator becomes (counted in the IR) and what
 * numbers come out (inputs as initializers, so the graph folds through the
 * reference kernels; expected values computed by hand). ONNX's own node
 * tests cover the common semantics (test_onnx_models); these pin what they
 * do not: the converter table's opset forms (Softmax's flattening before
 * opset 13, Resize at opset 10, Clip's attributes, TopK and Scatter), the
 * two PRelu paths, 1-D windows lifted to 2-D, auto_pad placement, folded
 * activations and Mean, LayerNorm over several axes, Reshape's allowzero,
 * and the forms that are refused. test_onnx_elemwise, test_onnx_gather and
 * test_onnx_nn run the other converters on the interpreter.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "interp/interp.h"
#include "kiln_test.h"
#include "onnx_builder.h"
#include "op/nn_common.h"

static kiln_module_t *import_ok(ob_t *ob) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(ob, NULL, kiln_allocator_system(), &module));
  return module;
}

/* ---- the table ---- */

/* Forms of one operator never overlap, and the lookup picks by opset. */
static void test_converter_table(void **state) {
  (void)state;
  int count = 0;
  const kiln_onnx_converter_t *table = kiln_onnx_converters(&count);
  assert_true(count >= 140);
  for (int i = 0; i < count; ++i) {
    assert_true(table[i].since >= 1);
    assert_true(table[i].until == 0 || table[i].until >= table[i].since);
    for (int j = i + 1; j < count; ++j) {
      if (strcmp(table[i].op_type, table[j].op_type) != 0) {
        continue;
      }
      int i_end = table[i].until ? table[i].until : 1 << 30;
      int j_end = table[j].until ? table[j].until : 1 << 30;
      assert_true(i_end < table[j].since || j_end < table[i].since);
    }
  }
  assert_ptr_equal(kiln_onnx_converter_find("Squeeze", 12)->convert,
                   kiln_onnx_convert_squeeze_attrs);
  assert_ptr_equal(kiln_onnx_converter_find("Squeeze", 13)->convert,
                   kiln_onnx_convert_squeeze_inputs);
  assert_ptr_equal(kiln_onnx_converter_find("Clip", 10)->convert, kiln_onnx_convert_clip_attrs);
  assert_ptr_equal(kiln_onnx_converter_find("Clip", 11)->convert, kiln_onnx_convert_clip_inputs);
  assert_null(kiln_onnx_converter_find("LayerNormalization", 16));
  assert_non_null(kiln_onnx_converter_find("LayerNormalization", 17));
  assert_null(kiln_onnx_converter_find("Upsample", 10));
  assert_ptr_equal(kiln_onnx_converter_find("Scatter", 10)->convert,
                   kiln_onnx_convert_scatter_elements);
  assert_null(kiln_onnx_converter_find("Scatter", 11));
  assert_null(kiln_onnx_converter_find("ScatterElements", 10));
  assert_null(kiln_onnx_converter_find("Trilu", 13));
  assert_null(kiln_onnx_converter_find("CastLike", 14));
  assert_ptr_equal(kiln_onnx_converter_find("TopK", 9)->convert, kiln_onnx_convert_topk);
  assert_ptr_equal(kiln_onnx_converter_find("Hardmax", 11)->convert, kiln_onnx_convert_hardmax);
  assert_ptr_equal(kiln_onnx_converter_find("Loop", 13)->convert, kiln_onnx_convert_loop);
  assert_null(kiln_onnx_converter_find("SequenceMap", 16));
  assert_true(kiln_onnx_op_type_known("Upsample"));
  assert_false(kiln_onnx_op_type_known("StringNormalizer"));
}

/* ---- softmax ---- */

/* x (1, 2, 2) = (0, 1, 2, 3): axis 1 at opset 11 is a softmax over all four
 * values; at opset 13 over pairs (0, 2) and (1, 3). */
static void test_softmax_by_opset(void **state) {
  (void)state;
  double total = 1 + exp(1) + exp(2) + exp(3);
  float flat[4], pairs[4];
  for (int i = 0; i < 4; ++i) {
    flat[i] = (float)(exp(i) / total);
    pairs[i] = (float)(exp(i) / (exp(i % 2) + exp(i % 2 + 2)));
  }
  const int64_t opsets[2] = {11, 13};
  const float *expected[2] = {flat, pairs};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, opsets[k]);
    ob_init_f32(&ob, "x", 3, OB_DIMS(1, 2, 2), OB_F32(0, 1, 2, 3));
    Onnx__NodeProto *node = ob_node(&ob, "Softmax", "sm", "x", "y");
    ob_attr_int(&ob, node, "axis", 1);
    ob_output(&ob, "y", OB_FLOAT, 3, OB_DIMS(1, 2, 2));
    kiln_module_t *module = import_ok(&ob);
    om_assert_f32(om_folded(module), expected[k], 4, 1e-6);
    kiln_module_destroy(module);
    ob_free(&ob);
  }
}

/* ---- PRelu ---- */

static kiln_module_t *import_prelu(size_t slope_rank, const int64_t *slope_dims, const float *slope,
                                   kiln_tensor_t *x) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 2, 1, 2));
  ob_init_f32(&ob, "slope", slope_rank, slope_dims, slope);
  ob_node(&ob, "PRelu", "p", "x,slope", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_onnx_import_options_t options = {
      .num_input_values = x ? 1 : 0, .input_values = &x, .bind_input_values = true};
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  ob_free(&ob);
  return module;
}

static void test_prelu_paths(void **state) {
  (void)state;
  /* (2, 1, 1): one slope per channel -> nn.prelu */
  kiln_module_t *module = import_prelu(3, OB_DIMS(2, 1, 1), OB_F32(0.5f, 2), NULL);
  assert_int_equal(om_count_calls(module, &kiln_op_prelu), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_where), 0);
  kiln_module_destroy(module);
  /* (2,): a slope per last-dim element -> where(x < 0, x * slope, x) */
  module = import_prelu(1, OB_DIMS(2), OB_F32(0.5f, 2), NULL);
  assert_int_equal(om_count_calls(module, &kiln_op_prelu), 0);
  assert_int_equal(om_count_calls(module, &kiln_op_where), 1);
  kiln_module_destroy(module);

  kiln_tensor_t *x = om_tensor_f32(4, OB_DIMS(1, 2, 1, 2), OB_F32(-2, 3, -4, 5));
  module = import_prelu(3, OB_DIMS(2, 1, 1), OB_F32(0.5f, 2), x);
  om_assert_f32(om_folded(module), OB_F32(-1, 3, -8, 5), 4, 0.0);
  kiln_module_destroy(module);
  module = import_prelu(1, OB_DIMS(2), OB_F32(0.5f, 2), x);
  om_assert_f32(om_folded(module), OB_F32(-1, 3, -2, 5), 4, 0.0);
  kiln_module_destroy(module);
  kiln_tensor_release(x);
}

/* ---- windows ---- */

/* Conv over (1, 1, 5) with kernel (1, 1, 3) = (1, 2, 3), stride 2, pads 1:
 * expand_dims, conv2d, squeeze. */
static void test_conv_1d(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_init_f32(&ob, "x", 3, OB_DIMS(1, 1, 5), OB_F32(1, 2, 3, 4, 5));
  ob_init_f32(&ob, "w", 3, OB_DIMS(1, 1, 3), OB_F32(1, 2, 3));
  Onnx__NodeProto *conv = ob_node(&ob, "Conv", "c", "x,w", "y");
  ob_attr_ints(&ob, conv, "pads", 2, OB_I64(1, 1));
  ob_attr_ints(&ob, conv, "strides", 1, OB_I64(2));
  ob_output(&ob, "y", OB_FLOAT, 3, OB_DIMS(1, 1, 3));
  kiln_module_t *module = import_ok(&ob);
  /* windows (0, 1, 2), (2, 3, 4), (4, 5, 0) . (1, 2, 3) */
  om_assert_f32(om_folded(module), OB_F32(8, 20, 14), 3, 1e-6);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* auto_pad SAME_UPPER puts the odd padding pixel at the end, SAME_LOWER at
 * the start: input 4, kernel 2, stride 1 pads 1 in total. */
static void test_auto_pad_placement(void **state) {
  (void)state;
  const char *modes[2] = {"SAME_UPPER", "SAME_LOWER"};
  const int64_t expected[2][4] = {{0, 0, 1, 1}, {1, 1, 0, 0}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 1, 4, 4));
    ob_init_f32(&ob, "w", 4, OB_DIMS(1, 1, 2, 2), OB_F32(1, 1, 1, 1));
    Onnx__NodeProto *conv = ob_node(&ob, "Conv", "c", "x,w", "y");
    ob_attr_string(&ob, conv, "auto_pad", modes[k]);
    ob_output(&ob, "y", OB_FLOAT, 4, OB_DIMS(1, 1, 4, 4));
    kiln_module_t *module = import_ok(&ob);
    const kiln_call_t *call = kiln_expr_as_call(om_main(module)->body);
    assert_ptr_equal(call->op, &kiln_op_conv2d);
    const kiln_nn_conv2d_attrs_t *attrs = call->attrs;
    assert_int_equal(attrs->padding.count, 4);
    for (int i = 0; i < 4; ++i) {
      assert_int_equal(attrs->padding.values[i], expected[k][i]);
    }
    kiln_module_destroy(module);
    ob_free(&ob);
  }
}

/* ---- Gemm without transB, with transA ---- */

static void test_gemm_forms(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_init_f32(&ob, "a", 2, OB_DIMS(2, 1), OB_F32(1, 2)); /* A^T is (1, 2) */
  ob_init_f32(&ob, "b", 2, OB_DIMS(2, 2), OB_F32(1, 2, 3, 4));
  Onnx__NodeProto *gemm = ob_node(&ob, "Gemm", "g", "a,b", "y");
  ob_attr_int(&ob, gemm, "transA", 1);
  ob_output(&ob, "y", OB_FLOAT, 2, OB_DIMS(1, 2));
  kiln_module_t *module = import_ok(&ob);
  om_assert_f32(om_folded(module), OB_F32(7, 10), 2, 0.0);
  kiln_module_destroy(module);
  ob_free(&ob);
  /* With A as an input the calls stay: transpose, then matmul (no transB). */
  ob_init(&ob, 13);
  ob_input(&ob, "a", OB_FLOAT, 2, OB_DIMS(2, 1));
  ob_init_f32(&ob, "b", 2, OB_DIMS(2, 2), OB_F32(1, 2, 3, 4));
  gemm = ob_node(&ob, "Gemm", "g", "a,b", "y");
  ob_attr_int(&ob, gemm, "transA", 1);
  ob_output(&ob, "y", OB_FLOAT, 2, OB_DIMS(1, 2));
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_transpose), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_matmul), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_dense), 0);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- Clip ---- */

static void test_clip_forms(void **state) {
  (void)state;
  /* opset 6..10: attributes */
  ob_t ob;
  ob_init(&ob, 10);
  ob_init_f32(&ob, "x", 1, OB_DIMS(4), OB_F32(-3, -1, 1, 3));
  Onnx__NodeProto *clip = ob_node(&ob, "Clip", "c", "x", "y");
  ob_attr_float(&ob, clip, "min", -2);
  ob_attr_float(&ob, clip, "max", 2);
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_module_t *module = import_ok(&ob);
  om_assert_f32(om_folded(module), OB_F32(-2, -1, 1, 2), 4, 0.0);
  kiln_module_destroy(module);
  ob_free(&ob);
  /* opset 11+: a bound that is not constant -> maximum then minimum */
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(4));
  ob_input(&ob, "lo", OB_FLOAT, 0, OB_DIMS(0));
  ob_init_f32(&ob, "hi", 0, NULL, OB_F32(2));
  ob_node(&ob, "Clip", "c", "x,lo,hi", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_maximum), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_minimum), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_clip), 0);
  kiln_module_destroy(module);
  ob_free(&ob);
  /* min > max gives max everywhere, as ONNX defines it */
  ob_init(&ob, 13);
  ob_init_f32(&ob, "x", 1, OB_DIMS(3), OB_F32(-5, 0, 5));
  ob_init_f32(&ob, "lo", 0, NULL, OB_F32(3));
  ob_init_f32(&ob, "hi", 0, NULL, OB_F32(1));
  ob_node(&ob, "Clip", "c", "x,lo,hi", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  module = import_ok(&ob);
  om_assert_f32(om_folded(module), OB_F32(1, 1, 1), 3, 0.0);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- Resize and Upsample ---- */

/* (1, 1, 1, 2) = (1, 2) scaled by 2 in W: opset 10 and Upsample pick
 * floor(x / 2) (1, 1, 2, 2); opset 13's default half_pixel with
 * round_prefer_floor picks (1, 1, 2, 2) as well, and linear interpolates. */
static kiln_module_t *import_resize(int64_t opset, const char *op_type, const char *mode) {
  ob_t ob;
  ob_init(&ob, opset);
  ob_init_f32(&ob, "x", 4, OB_DIMS(1, 1, 1, 2), OB_F32(1, 2));
  ob_init_f32(&ob, "scales", 1, OB_DIMS(4), OB_F32(1, 1, 1, 2));
  ob_init_f32(&ob, "roi", 1, OB_DIMS(0), OB_F32(0));
  Onnx__NodeProto *node =
      ob_node(&ob, op_type, "r", opset >= 11 ? "x,roi,scales" : "x,scales", "y");
  ob_attr_string(&ob, node, "mode", mode);
  ob_output(&ob, "y", OB_FLOAT, 4, OB_DIMS(1, 1, 1, 4));
  kiln_module_t *module = import_ok(&ob);
  ob_free(&ob);
  return module;
}

static void test_resize_forms(void **state) {
  (void)state;
  kiln_module_t *module = import_resize(10, "Resize", "nearest");
  om_assert_f32(om_folded(module), OB_F32(1, 1, 2, 2), 4, 0.0);
  kiln_module_destroy(module);
  module = import_resize(9, "Upsample", "nearest");
  om_assert_f32(om_folded(module), OB_F32(1, 1, 2, 2), 4, 0.0);
  kiln_module_destroy(module);
  module = import_resize(13, "Resize", "linear");
  /* half_pixel: sources -0.25, 0.25, 0.75, 1.25 clamped to [0, 1] */
  om_assert_f32(om_folded(module), OB_F32(1, 1.25f, 1.75f, 2), 4, 1e-6);
  kiln_module_destroy(module);

  /* what resize2d does goes to it; cubic, and scales that do not give whole
   * sizes, go through interpolation matrices (float32 only) */
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 1, 4, 4));
  ob_init_f32(&ob, "scales", 1, OB_DIMS(4), OB_F32(1, 1, 2, 2));
  Onnx__NodeProto *node = ob_node(&ob, "Resize", "r", "x,,scales", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_resize2d), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_matmul), 0);
  kiln_module_destroy(module);
  ob_attr_string(&ob, node, "mode", "cubic");
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_resize2d), 0);
  assert_int_equal(om_count_calls(module, &kiln_op_matmul), 2);
  kiln_module_destroy(module);
  ob.initializers[0] = ob_tensor_f32(&ob, "scales", 1, OB_DIMS(4), OB_F32(1, 1, 0.6f, 0.6f));
  node->n_attribute = 0;
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_matmul), 2);
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2));
  kiln_module_destroy(module);
  ob.inputs[0] =
      ob_value_info(&ob, "x", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 4, OB_DIMS(1, 1, 4, 4));
  ob.outputs[0] = ob_value_info(&ob, "y", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), UNIMPLEMENTED,
                     "node \"r\" (Resize): this resize (mode nearest, half_pixel) runs through "
                     "interpolation matrices, which take float32 data, not uint8");
  ob_attr_string(&ob, node, "mode", "bicubic");
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"r\" (Resize): mode \"bicubic\" is not nearest, linear or cubic");
  ob_free(&ob);
}

/* ---- shapes ---- */

static void test_reshape_zero_and_allowzero(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 14);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(2, 3, 4));
  ob_init_i64(&ob, "shape", 1, OB_DIMS(2), OB_I64(0, -1));
  ob_node(&ob, "Reshape", "r", "x,shape", "y");
  ob_output(&ob, "y", OB_FLOAT, 2, OB_DIMS(2, 12));
  kiln_module_t *module = import_ok(&ob);
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 12));
  kiln_module_destroy(module);
  ob_attr_int(&ob, ob.nodes[0], "allowzero", 1);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"r\" (Reshape): shape has -1 and 0 with allowzero=1");
  ob_free(&ob);
  /* allowzero with an empty input: the result is an empty constant */
  ob_init(&ob, 14);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(0, 3));
  ob_init_i64(&ob, "shape", 1, OB_DIMS(3), OB_I64(3, 0, 5));
  Onnx__NodeProto *node = ob_node(&ob, "Reshape", "r", "x,shape", "y");
  ob_attr_int(&ob, node, "allowzero", 1);
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  module = import_ok(&ob);
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 3, OB_DIMS(3, 0, 5));
  assert_int_equal(kiln_tensor_element_count(om_folded(module)), 0);
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_flatten_and_unsqueeze(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 11);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(2, 3, 4));
  Onnx__NodeProto *flatten = ob_node(&ob, "Flatten", "f1", "x", "a");
  ob_attr_int(&ob, flatten, "axis", 1);
  flatten = ob_node(&ob, "Flatten", "f0", "x", "b");
  ob_attr_int(&ob, flatten, "axis", 0);
  flatten = ob_node(&ob, "Flatten", "f2", "x", "c");
  ob_attr_int(&ob, flatten, "axis", -1);
  Onnx__NodeProto *unsqueeze = ob_node(&ob, "Unsqueeze", "u", "x", "d");
  ob_attr_ints(&ob, unsqueeze, "axes", 2, OB_I64(4, 0));
  ob_output(&ob, "a", OB_FLOAT, 0, NULL);
  ob_output(&ob, "b", OB_FLOAT, 0, NULL);
  ob_output(&ob, "c", OB_FLOAT, 0, NULL);
  ob_output(&ob, "d", OB_FLOAT, 0, NULL);
  kiln_module_t *module = import_ok(&ob);
  const kiln_tuple_t *out = kiln_expr_as_tuple(om_main(module)->body);
  om_assert_type(out->fields[0]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 12));
  assert_ptr_equal(kiln_expr_as_call(out->fields[0])->op, &kiln_op_batch_flatten);
  om_assert_type(out->fields[1]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 24));
  om_assert_type(out->fields[2]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(6, 4));
  om_assert_type(out->fields[3]->checked_type, KILN_DTYPE_FLOAT32, 5, OB_DIMS(1, 2, 3, 4, 1));
  kiln_module_destroy(module);
  ob_free(&ob);
  ob_init(&ob, 11);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(2, 3, 4));
  unsqueeze = ob_node(&ob, "Unsqueeze", "u", "x", "d");
  ob_attr_ints(&ob, unsqueeze, "axes", 2, OB_I64(1, -4));
  ob_output(&ob, "d", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"u\" (Unsqueeze): axes names dim 1 twice");
  ob_free(&ob);
}

/* ---- folded activations ---- */

/* Elu, Softplus, Softsign and Reciprocal fold at import through their
 * registry operators; Mean is a chain of adds divided by the count. */
/* A Pad whose pads are all zero is the identity (no nn.pad, whose kernel
 * would copy); any non-zero pad, negative included, stays an nn.pad. */
static void test_zero_pad_is_identity(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 11);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(2, 3));
  ob_init_i64(&ob, "zeros", 1, OB_DIMS(4), OB_I64(0, 0, 0, 0));
  ob_init_i64(&ob, "crop", 1, OB_DIMS(4), OB_I64(0, 0, 0, -1));
  ob_node(&ob, "Pad", "same", "x,zeros", "a");
  ob_node(&ob, "Pad", "cropped", "x,crop", "b");
  ob_output(&ob, "a", OB_FLOAT, 0, NULL);
  ob_output(&ob, "b", OB_FLOAT, 0, NULL);
  kiln_module_t *module = import_ok(&ob);
  const kiln_function_t *main_fn = om_main(module);
  const kiln_tuple_t *out = kiln_expr_as_tuple(main_fn->body);
  assert_ptr_equal(out->fields[0], main_fn->params[0]);
  assert_ptr_equal(kiln_expr_as_call(out->fields[1])->op, &kiln_op_pad);
  om_assert_type(out->fields[1]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2));
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_compositions(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_init_f32(&ob, "x", 1, OB_DIMS(3), OB_F32(-1, 0, 2));
  Onnx__NodeProto *elu = ob_node(&ob, "Elu", "e", "x", "elu");
  ob_attr_float(&ob, elu, "alpha", 2);
  ob_node(&ob, "Softplus", "sp", "x", "softplus");
  ob_node(&ob, "Softsign", "ss", "x", "softsign");
  ob_node(&ob, "Reciprocal", "r", "x", "reciprocal");
  ob_node(&ob, "Mean", "m", "x,x,softsign", "mean");
  ob_output(&ob, "elu", OB_FLOAT, 0, NULL);
  ob_output(&ob, "softplus", OB_FLOAT, 0, NULL);
  ob_output(&ob, "softsign", OB_FLOAT, 0, NULL);
  ob_output(&ob, "reciprocal", OB_FLOAT, 0, NULL);
  ob_output(&ob, "mean", OB_FLOAT, 0, NULL);
  kiln_module_t *module = import_ok(&ob);
  const kiln_tuple_t *out = kiln_expr_as_tuple(om_main(module)->body);
  om_assert_f32(om_constant(out->fields[0]), OB_F32((float)(2 * (exp(-1) - 1)), 0, 2), 3, 1e-6);
  om_assert_f32(om_constant(out->fields[1]),
                OB_F32((float)log(1 + exp(-1)), (float)log(2), (float)log(1 + exp(2))), 3, 1e-6);
  om_assert_f32(om_constant(out->fields[2]), OB_F32(-0.5f, 0, 2.0f / 3), 3, 1e-6);
  om_assert_f32(om_constant(out->fields[3]), OB_F32(-1, INFINITY, 0.5f), 3, 0.0);
  om_assert_f32(om_constant(out->fields[4]), OB_F32(-2.5f / 3, 0, (4 + 2.0f / 3) / 3), 3, 1e-6);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* Not, And, Or and Xor on constants fold through the logical operators. */
static void test_logical(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  const uint8_t a[4] = {0, 0, 1, 1}, b[4] = {0, 1, 0, 1};
  ob_initializer(&ob, ob_tensor_raw(&ob, "a", OB_BOOL, 1, OB_DIMS(4), a, 4));
  ob_initializer(&ob, ob_tensor_raw(&ob, "b", OB_BOOL, 1, OB_DIMS(4), b, 4));
  const char *ops[4] = {"Not", "And", "Or", "Xor"};
  const uint8_t expected[4][4] = {{1, 1, 0, 0}, {0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}};
  for (int k = 0; k < 4; ++k) {
    char out[16];
    snprintf(out, sizeof(out), "o%d", k);
    ob_node(&ob, ops[k], ops[k], k == 0 ? "a" : "a,b", out);
    ob_output(&ob, out, OB_BOOL, 1, OB_DIMS(4));
  }
  kiln_module_t *module = import_ok(&ob);
  const kiln_tuple_t *tuple = kiln_expr_as_tuple(om_main(module)->body);
  for (int k = 0; k < 4; ++k) {
    const kiln_tensor_t *t = om_constant(tuple->fields[k]);
    assert_int_equal(kiln_tensor_dtype(t), KILN_DTYPE_BOOL);
    assert_memory_equal(kiln_tensor_data(t), expected[k], 4);
  }
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* LayerNormalization over the last two axes with a scale that broadcasts
 * (1, 2) onto (2, 2): normalize each row of four, then scale per column. */
static void test_layer_norm_general(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 17);
  ob_init_f32(&ob, "x", 3, OB_DIMS(1, 2, 2), OB_F32(1, 2, 3, 4));
  ob_init_f32(&ob, "scale", 2, OB_DIMS(1, 2), OB_F32(1, 10));
  Onnx__NodeProto *ln = ob_node(&ob, "LayerNormalization", "ln", "x,scale", "y,mean,inv");
  ob_attr_int(&ob, ln, "axis", 1);
  ob_attr_float(&ob, ln, "epsilon", 0);
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  ob_output(&ob, "mean", OB_FLOAT, 3, OB_DIMS(1, 1, 1));
  ob_output(&ob, "inv", OB_FLOAT, 3, OB_DIMS(1, 1, 1));
  kiln_module_t *module = import_ok(&ob);
  const kiln_tuple_t *out = kiln_expr_as_tuple(om_main(module)->body);
  double sd = sqrt(1.25);
  om_assert_f32(om_constant(out->fields[0]),
                OB_F32((float)(-1.5 / sd), (float)(-5 / sd), (float)(0.5 / sd), (float)(15 / sd)),
                4, 1e-5);
  om_assert_f32(om_constant(out->fields[1]), OB_F32(2.5f), 1, 1e-6);
  om_assert_f32(om_constant(out->fields[2]), OB_F32((float)(1 / sd)), 1, 1e-6);
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_values_made_at_import(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_init_i64(&ob, "shape", 1, OB_DIMS(2), OB_I64(2, 1));
  Onnx__NodeProto *fill = ob_node(&ob, "ConstantOfShape", "c", "shape", "filled");
  Onnx__AttributeProto *value =
      ob_attr(&ob, fill, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  value->t = ob_tensor_i64(&ob, "", 1, OB_DIMS(1), OB_I64(7));
  ob_init_i64(&ob, "start", 0, NULL, OB_I64(10));
  ob_init_i64(&ob, "limit", 0, NULL, OB_I64(3));
  ob_init_i64(&ob, "delta", 0, NULL, OB_I64(-3));
  ob_node(&ob, "Range", "r", "start,limit,delta", "range");
  ob_node(&ob, "Size", "s", "filled", "size");
  ob_init_i64(&ob, "repeats", 1, OB_DIMS(2), OB_I64(1, 2));
  ob_node(&ob, "Tile", "t", "filled,repeats", "tiled");
  Onnx__NodeProto *dropout = ob_node(&ob, "Dropout", "d", "tiled", "kept,mask");
  (void)dropout;
  ob_output(&ob, "range", OB_INT64, 1, OB_DIMS(3));
  ob_output(&ob, "size", OB_INT64, 0, OB_DIMS(0));
  ob_output(&ob, "kept", OB_INT64, 2, OB_DIMS(2, 2));
  ob_output(&ob, "mask", OB_BOOL, 2, OB_DIMS(2, 2));
  kiln_module_t *module = import_ok(&ob);
  const kiln_tuple_t *out = kiln_expr_as_tuple(om_main(module)->body);
  om_assert_i64(om_constant(out->fields[0]), OB_I64(10, 7, 4), 3);
  om_assert_i64(om_constant(out->fields[1]), OB_I64(2), 1);
  om_assert_i64(om_constant(out->fields[2]), OB_I64(7, 7, 7, 7), 4);
  const kiln_tensor_t *mask = om_constant(out->fields[3]);
  assert_int_equal(kiln_tensor_dtype(mask), KILN_DTYPE_BOOL);
  assert_memory_equal(kiln_tensor_data(mask), "\1\1\1\1", 4);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- refused forms ---- */

static void test_refused_forms(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 7);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 2, 3, 3));
  ob_init_f32(&ob, "p", 1, OB_DIMS(2), OB_F32(1, 1));
  Onnx__NodeProto *bn = ob_node(&ob, "BatchNormalization", "bn", "x,p,p,p,p", "y");
  ob_attr_int(&ob, bn, "spatial", 0);
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), UNIMPLEMENTED,
                     "node \"bn\" (BatchNormalization): spatial=0 is not supported (only 1)");
  ob_free(&ob);

  /* Dropout in training mode drops at random (unless the ratio is 0): each
   * element is dropped (0, mask false) or kept scaled by 1 / 0.75 */
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(64));
  ob_init_f32(&ob, "ratio", 0, NULL, OB_F32(0.25f));
  ob_initializer(&ob, ob_tensor_raw(&ob, "training", OB_BOOL, 0, NULL, "\1", 1));
  ob_node(&ob, "Dropout", "drop", "x,ratio,training", "y,mask");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  ob_output(&ob, "mask", OB_BOOL, 0, NULL);
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  assert_true(om_count_calls(module, &kiln_op_where) >= 1); /* the mask folds: seeded */
  {
    float ramp[64];
    for (int i = 0; i < 64; ++i) {
      ramp[i] = (float)i + 1.0f;
    }
    kiln_tensor_t *x = om_tensor_f32(1, OB_DIMS(64), ramp), **outputs = NULL;
    int count = 0, kept = 0;
    KILN_ASSERT_OK(
        kiln_interp_run(module, "main", 1, &x, kiln_allocator_system(), &count, &outputs));
    assert_int_equal(count, 2);
    for (int i = 0; i < 64; ++i) {
      bool keep = ((const uint8_t *)kiln_tensor_data(outputs[1]))[i] != 0;
      float y = ((const float *)kiln_tensor_data(outputs[0]))[i];
      assert_float_equal(y, keep ? ramp[i] / 0.75f : 0.0f, 1e-5);
      kept += keep;
    }
    assert_true(kept > 32 && kept < 64); /* about 48 of 64 kept */
    for (int i = 0; i < count; ++i) {
      kiln_tensor_release(outputs[i]);
    }
    kiln_allocator_free(kiln_allocator_system(), outputs);
    kiln_tensor_release(x);
  }
  kiln_module_destroy(module);
  ob.initializers[0] = ob_tensor_f32(&ob, "ratio", 0, NULL, OB_F32(0));
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  assert_int_equal(om_count_calls(module, NULL), 0); /* y is x, the mask a Constant */
  kiln_module_destroy(module);
  ob_free(&ob);

  /* A 3-D window is nn.avg_pool3d with its pads as (front, top, left, back,
   * bottom, right); 4 spatial dims are refused. */
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 5, OB_DIMS(1, 1, 2, 2, 2));
  Onnx__NodeProto *pool = ob_node(&ob, "AveragePool", "p3", "x", "y");
  ob_attr_ints(&ob, pool, "kernel_shape", 3, OB_I64(2, 1, 2));
  ob_attr_ints(&ob, pool, "pads", 6, OB_I64(1, 0, 0, 0, 0, 1));
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  assert_int_equal(om_count_calls(module, &kiln_op_avg_pool3d), 1);
  om_assert_type(om_main(module)->body->checked_type, KILN_DTYPE_FLOAT32, 5,
                 OB_DIMS(1, 1, 2, 2, 2));
  kiln_module_destroy(module);
  ob_free(&ob);
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 6, OB_DIMS(1, 1, 2, 2, 2, 2));
  pool = ob_node(&ob, "MaxPool", "p4", "x", "y");
  ob_attr_ints(&ob, pool, "kernel_shape", 4, OB_I64(1, 1, 1, 1));
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), UNIMPLEMENTED,
                     "node \"p4\" (MaxPool): data (1, 1, 2, 2, 2, 2) has 4 spatial dims; kiln "
                     "supports 1-D to 3-D windows here");
  ob_free(&ob);

  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(3));
  Onnx__NodeProto *cast = ob_node(&ob, "Cast", "c", "x", "y");
  ob_attr_int(&ob, cast, "to", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE);
  ob_output(&ob, "y", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 0, NULL);
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module)); /* cast takes float64 */
  assert_int_equal(kiln_type_as_tensor(kiln_module_get_function(module, "main")->ret_type)->dtype,
                   KILN_DTYPE_FLOAT64);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- GridSample, RoiAlign, DFT, Einsum, Det ---- */

/* The converters of the coverage operators map one to one; what they refuse. */
static void test_coverage_converters(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 16);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 2, 4, 4));
  ob_input(&ob, "grid", OB_FLOAT, 4, OB_DIMS(1, 3, 5, 2));
  Onnx__NodeProto *node = ob_node(&ob, "GridSample", "g", "x,grid", "y");
  ob_output(&ob, "y", OB_FLOAT, 4, OB_DIMS(1, 2, 3, 5));
  kiln_module_t *module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_grid_sample), 1);
  kiln_module_destroy(module);
  ob_attr_string(&ob, node, "mode", "cubic");
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"g\" (GridSample): image.grid_sample: method \"cubic\" is not one of "
                     "bilinear, nearest, bicubic");
  ob_free(&ob);
  /* RoiAlign: opset 10 has no coordinate mode (output_half_pixel). */
  ob_init(&ob, 10);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 2, 4, 4));
  ob_input(&ob, "rois", OB_FLOAT, 2, OB_DIMS(3, 4));
  ob_input(&ob, "index", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, OB_DIMS(3));
  node = ob_node(&ob, "RoiAlign", "r", "x,rois,index", "y");
  ob_attr_int(&ob, node, "output_height", 2);
  ob_attr_int(&ob, node, "output_width", 3);
  ob_output(&ob, "y", OB_FLOAT, 4, OB_DIMS(3, 2, 2, 3));
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_roi_align), 1);
  kiln_module_destroy(module);
  ob.opset.version = 16;
  ob_attr_string(&ob, node, "coordinate_transformation_mode", "corners");
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"r\" (RoiAlign): coordinate_transformation_mode \"corners\" is not "
                     "half_pixel or output_half_pixel");
  ob_free(&ob);
  /* DFT: dft_length as a constant sets the shape; as a graph input it is refused. */
  ob_init(&ob, 17);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(1, 5, 1));
  ob_init_i64(&ob, "n", 0, NULL, OB_I64(8));
  ob_node(&ob, "DFT", "d", "x,n", "y");
  ob_output(&ob, "y", OB_FLOAT, 3, OB_DIMS(1, 8, 2));
  module = import_ok(&ob);
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 8, 2));
  kiln_module_destroy(module);
  ob_free(&ob);
  ob_init(&ob, 17);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(1, 5, 1));
  ob_input(&ob, "n", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, OB_DIMS(1));
  ob_node(&ob, "DFT", "d", "x,n", "y");
  ob_output(&ob, "y", OB_FLOAT, 3, OB_DIMS(1, 8, 2));
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), UNIMPLEMENTED,
                     "node \"d\" (DFT): input 1 (dft_length");
  ob_free(&ob);
  /* Einsum needs its equation; Det converts as it is. */
  ob_init(&ob, 12);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(3, 3));
  node = ob_node(&ob, "Einsum", "e", "x", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"e\" (Einsum): attribute equation is required");
  ob_attr_string(&ob, node, "equation", "ii");
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_einsum), 1);
  kiln_module_destroy(module);
  node->op_type = ob_strdup(&ob, "Det");
  node->n_attribute = 0;
  module = import_ok(&ob);
  assert_int_equal(om_count_calls(module, &kiln_op_det), 1);
  kiln_module_destroy(module);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_coverage_converters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_converter_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_softmax_by_opset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prelu_paths, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_1d, setup, teardown),
      cmocka_unit_test_setup_teardown(test_auto_pad_placement, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_clip_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_zero_and_allowzero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_flatten_and_unsqueeze, setup, teardown),
      cmocka_unit_test_setup_teardown(test_zero_pad_is_identity, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compositions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_logical, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layer_norm_general, setup, teardown),
      cmocka_unit_test_setup_teardown(test_values_made_at_import, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_forms, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
