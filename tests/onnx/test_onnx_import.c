/*
 * Tests of the ONNX importer's mechanism: models built in C with the
 * protobuf-c structs, imported, and checked in the IR (parameters, types,
 * the calls left after folding) and in numbers (by importing with the input
 * values bound, so the graph folds to Constants through the reference
 * kernels, compared with values computed here by plain loops). Covers
 * initializers in raw_data and float_data, Gemm with transB, a shape
 * subgraph that must fold away, opset-dependent Squeeze, graph inputs that
 * are initializers, tuple outputs, parameter names, --input-shape, and an
 * allocation-failure sweep.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_import.h"
#include "kiln_test.h"
#include "onnx_builder.h"

/* ---- Conv + Relu ---- */

/* x (1, 1, 4, 4) = 1..16; W (2, 1, 3, 3): filter 0 all ones, filter 1 the
 * identity; B = (0.5, -100) in raw_data or float_data; pads 1. */
static void build_conv_relu(ob_t *ob, int bias_raw) {
  ob_init(ob, 13);
  float w[18];
  for (int i = 0; i < 9; ++i) {
    w[i] = 1.0f;
    w[9 + i] = i == 4 ? 1.0f : 0.0f;
  }
  ob_initializer(ob, ob_tensor_raw(ob, "W", OB_FLOAT, 4, OB_DIMS(2, 1, 3, 3), w, sizeof(w)));
  const float b[2] = {0.5f, -100.0f};
  if (bias_raw) {
    ob_initializer(ob, ob_tensor_raw(ob, "B", OB_FLOAT, 1, OB_DIMS(2), b, sizeof(b)));
  } else {
    ob_init_f32(ob, "B", 1, OB_DIMS(2), b);
  }
  ob_input(ob, "x", OB_FLOAT, 4, OB_DIMS(1, 1, 4, 4));
  Onnx__NodeProto *conv = ob_node(ob, "Conv", "conv1", "x,W,B", "c");
  ob_attr_ints(ob, conv, "pads", 4, OB_I64(1, 1, 1, 1));
  ob_attr_ints(ob, conv, "kernel_shape", 2, OB_I64(3, 3));
  ob_node(ob, "Relu", "relu1", "c", "y");
  ob_output(ob, "y", OB_FLOAT, 4, OB_DIMS(1, 2, 4, 4));
}

static void expected_conv_relu(float *out) {
  for (int h = 0; h < 4; ++h) {
    for (int w = 0; w < 4; ++w) {
      double sum = 0.5;
      for (int dh = -1; dh <= 1; ++dh) {
        for (int dw = -1; dw <= 1; ++dw) {
          int y = h + dh, x = w + dw;
          sum += (y >= 0 && y < 4 && x >= 0 && x < 4) ? (double)(y * 4 + x + 1) : 0.0;
        }
      }
      out[h * 4 + w] = (float)sum;
      out[16 + h * 4 + w] = 0.0f; /* identity - 100 < 0 */
    }
  }
}

static void test_conv_relu_ir(void **state) {
  (void)state;
  for (int raw = 0; raw < 2; ++raw) {
    ob_t ob;
    build_conv_relu(&ob, raw);
    kiln_module_t *module = NULL;
    KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
    kiln_function_t *main = om_main(module);
    assert_int_equal(main->num_params, 1);
    assert_string_equal(main->params[0]->name, "x");
    om_assert_type(main->params[0]->type_annotation, KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 4, 4));
    om_assert_type(main->ret_type, KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 4, 4));
    assert_int_equal(om_count_calls(module, &kiln_op_conv2d), 1);
    assert_int_equal(om_count_calls(module, &kiln_op_bias_add), 1);
    assert_int_equal(om_count_calls(module, &kiln_op_relu), 1);
    assert_int_equal(om_count_calls(module, NULL), 3);
    kiln_module_destroy(module);
    ob_free(&ob);
  }
}

static void test_conv_relu_numbers(void **state) {
  (void)state;
  float x[16], expected[32];
  for (int i = 0; i < 16; ++i) {
    x[i] = (float)(i + 1);
  }
  expected_conv_relu(expected);
  for (int raw = 0; raw < 2; ++raw) {
    ob_t ob;
    build_conv_relu(&ob, raw);
    kiln_tensor_t *input = om_tensor_f32(4, OB_DIMS(1, 1, 4, 4), x);
    kiln_module_t *module = ob_import_folded(&ob, 1, &input);
    assert_int_equal(om_main(module)->num_params, 0);
    om_assert_f32(om_folded(module), expected, 32, 1e-4);
    kiln_module_destroy(module);
    kiln_tensor_release(input);
    ob_free(&ob);
  }
}

/* ---- Gemm ---- */

/* Y = 2 * A (2, 3) @ B^T (B is (4, 3)) + 0.5 * C (4,). */
static void test_gemm_trans_b(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  const float b[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  ob_init_f32(&ob, "B", 2, OB_DIMS(4, 3), b);
  ob_init_f32(&ob, "C", 1, OB_DIMS(4), OB_F32(2, 4, 6, 8));
  ob_input(&ob, "A", OB_FLOAT, 2, OB_DIMS(2, 3));
  Onnx__NodeProto *gemm = ob_node(&ob, "Gemm", "fc", "A,B,C", "Y");
  ob_attr_int(&ob, gemm, "transB", 1);
  ob_attr_float(&ob, gemm, "alpha", 2.0f);
  ob_attr_float(&ob, gemm, "beta", 0.5f);
  ob_output(&ob, "Y", OB_FLOAT, 2, OB_DIMS(2, 4));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  assert_int_equal(om_count_calls(module, &kiln_op_dense), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_matmul), 0);
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 4));
  kiln_module_destroy(module);

  const float a[6] = {1, 2, 3, 4, 5, 6};
  kiln_tensor_t *input = om_tensor_f32(2, OB_DIMS(2, 3), a);
  module = ob_import_folded(&ob, 1, &input);
  /* rows of A @ B^T: (1, 2, 3, 6) and (4, 5, 6, 15); then * 2 + (1, 2, 3, 4) */
  const float expected[8] = {3, 6, 9, 16, 9, 12, 15, 34};
  om_assert_f32(om_folded(module), expected, 8, 1e-5);
  kiln_module_destroy(module);
  kiln_tensor_release(input);
  ob_free(&ob);
}

/* ---- folding ---- */

/* The shape of a scalar is the empty int64 vector, with any start
 * and end (found by the importer's fuzzer: a rank-0 type's shape array is
 * NULL, and NULL + 0 is undefined). */
static void test_shape_of_a_scalar(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 15);
  ob_init_f32(&ob, "x", 0, NULL, OB_F32(1.5f));
  Onnx__NodeProto *shape = ob_node(&ob, "Shape", "shape", "x", "y");
  ob_attr_int(&ob, shape, "end", -1);
  ob_output(&ob, "y", OB_INT64, 1, OB_DIMS(0));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_INT64, 1, OB_DIMS(0));
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): the shape
 * subgraph folds away, leaving one reshape to (2, 12). */
static void test_shape_subgraph_folds(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 3, OB_DIMS(OB_SYMBOLIC, 3, 4));
  ob_init_i64(&ob, "zero", 0, NULL, OB_I64(0));
  ob_init_i64(&ob, "axes", 1, OB_DIMS(1), OB_I64(0));
  ob_init_i64(&ob, "rest", 1, OB_DIMS(1), OB_I64(-1));
  ob_node(&ob, "Shape", "shape", "x", "s");
  ob_node(&ob, "Gather", "batch", "s,zero", "n");
  ob_node(&ob, "Unsqueeze", "unsq", "n,axes", "n1");
  Onnx__NodeProto *concat = ob_node(&ob, "Concat", "cat", "n1,rest", "target");
  ob_attr_int(&ob, concat, "axis", 0);
  ob_node(&ob, "Reshape", "flat", "x,target", "y");
  ob_output(&ob, "y", OB_FLOAT, 2, OB_DIMS(OB_SYMBOLIC, 12));
  const char *specs[] = {"x=2x3x4"};
  kiln_onnx_import_options_t options = {.num_input_shapes = 1, .input_shape_specs = specs};
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  assert_int_equal(om_count_calls(module, NULL), 1);
  assert_int_equal(om_count_calls(module, &kiln_op_reshape), 1);
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 12));
  const kiln_call_t *reshape = kiln_expr_as_call(om_main(module)->body);
  assert_non_null(reshape);
  assert_true(kiln_expr_as_var(reshape->args[0]) != NULL);
  kiln_module_destroy(module);

  /* Without folding the shape is a computation: a dyn.reshape reads it. */
  options.no_constant_folding = true;
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  assert_int_equal(om_count_calls(module, &kiln_op_dyn_reshape), 1);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- opset-dependent forms ---- */

static kiln_module_t *import_squeeze(int64_t opset, int axes_as_input, int axes_initializer) {
  ob_t ob;
  ob_init(&ob, opset);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 3, 1, 2));
  Onnx__NodeProto *node = NULL;
  if (axes_as_input) {
    if (axes_initializer) {
      ob_init_i64(&ob, "axes", 1, OB_DIMS(1), OB_I64(-2));
    } else {
      ob_input(&ob, "axes", OB_INT64, 1, OB_DIMS(1));
    }
    node = ob_node(&ob, "Squeeze", "sq", "x,axes", "y");
  } else {
    node = ob_node(&ob, "Squeeze", "sq", "x", "y");
    ob_attr_ints(&ob, node, "axes", 1, OB_I64(-2));
  }
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_module_t *module = NULL;
  kiln_status_t status = ob_import(&ob, NULL, kiln_allocator_system(), &module);
  ob_free(&ob);
  if (status) {
    KILN_ASSERT_STATUS(status, UNIMPLEMENTED,
                       "node \"sq\" (Squeeze): input 1 (axes, \"axes\") must be a constant known "
                       "at import, but it depends on the graph's inputs");
    return NULL;
  }
  return module;
}

static void test_squeeze_by_opset(void **state) {
  (void)state;
  kiln_module_t *attr_form = import_squeeze(11, 0, 0);
  om_assert_type(om_main(attr_form)->ret_type, KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 3, 2));
  kiln_module_destroy(attr_form);
  kiln_module_t *input_form = import_squeeze(13, 1, 1);
  om_assert_type(om_main(input_form)->ret_type, KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 3, 2));
  kiln_module_destroy(input_form);
  /* Axes known only at run time: dyn.squeeze, the rank from their count. */
  kiln_module_t *run_time = import_squeeze(13, 1, 0);
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(om_main(run_time)->ret_type, text),
                      "Tensor[(?, ?, ?), float32]");
  assert_int_equal(om_count_calls(run_time, &kiln_op_dyn_squeeze), 1);
  kiln_module_destroy(run_time);
  /* The attribute form at opset 13 is ignored: no axes squeezes every 1. */
  kiln_module_t *all = import_squeeze(13, 0, 0);
  om_assert_type(om_main(all)->ret_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 2));
  kiln_module_destroy(all);
}

/* ---- inputs, initializers, outputs ---- */

static void test_initializer_inputs_are_constants(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(3));
  ob_input(&ob, "w", OB_FLOAT, 1, OB_DIMS(3));
  ob_init_f32(&ob, "w", 1, OB_DIMS(3), OB_F32(1, 2, 3));
  ob_node(&ob, "Add", "add", "x,w", "y");
  ob_output(&ob, "y", OB_FLOAT, 1, OB_DIMS(3));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_function_t *main = om_main(module);
  assert_int_equal(main->num_params, 1);
  assert_string_equal(main->params[0]->name, "x");
  const kiln_call_t *add = kiln_expr_as_call(main->body);
  assert_non_null(add);
  om_assert_f32(om_constant(add->args[1]), OB_F32(1, 2, 3), 3, 0.0);
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_tuple_outputs_in_order(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(2, 3));
  ob_node(&ob, "Relu", "r", "x", "a");
  Onnx__NodeProto *reduce = ob_node(&ob, "ReduceMean", "m", "x", "b");
  ob_attr_ints(&ob, reduce, "axes", 1, OB_I64(1));
  ob_attr_int(&ob, reduce, "keepdims", 0);
  ob_output(&ob, "b", OB_FLOAT, 1, OB_DIMS(2));
  ob_output(&ob, "a", OB_FLOAT, 0, NULL);
  ob_output(&ob, "x", OB_FLOAT, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_function_t *main = om_main(module);
  const kiln_tuple_t *tuple = kiln_expr_as_tuple(main->body);
  assert_non_null(tuple);
  assert_int_equal(tuple->num_fields, 3);
  om_assert_type(tuple->fields[0]->checked_type, KILN_DTYPE_FLOAT32, 1, OB_DIMS(2));
  om_assert_type(tuple->fields[1]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 3));
  assert_ptr_equal(tuple->fields[2], &main->params[0]->base);
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_parameter_names(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  const char *names[] = {"input:0", "0x", "a.b_9", "a_0", "", ":"};
  const char *expected[] = {"input_0", "_0x", "a.b_9", "a_0", "_", "_"};
  for (int i = 0; i < 6; ++i) {
    ob_input(&ob, names[i], OB_FLOAT, 1, OB_DIMS(2));
  }
  ob_node(&ob, "Identity", "id", "input:0", "y");
  ob_output(&ob, "y", OB_FLOAT, 1, OB_DIMS(2));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_function_t *main = om_main(module);
  assert_int_equal(main->num_params, 6);
  for (int i = 0; i < 5; ++i) {
    assert_string_equal(main->params[i]->name, expected[i]);
  }
  assert_string_equal(main->params[5]->name, "__1"); /* "_" is taken */
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- input shapes ---- */

static kiln_status_t import_dims(const char *spec, bool static_shapes, const int64_t *dims,
                                 kiln_module_t **out_module) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "image", OB_FLOAT, 4, dims);
  ob_node(&ob, "Relu", "r", "image", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  const char *specs[] = {spec};
  kiln_onnx_import_options_t options = {.num_input_shapes = spec ? 1 : 0,
                                        .input_shape_specs = specs,
                                        .static_input_shapes = static_shapes};
  kiln_status_t status = ob_import(&ob, &options, kiln_allocator_system(), out_module);
  ob_free(&ob);
  return status;
}

static kiln_status_t import_symbolic(const char *spec, kiln_module_t **out_module) {
  return import_dims(spec, false, OB_DIMS(OB_SYMBOLIC, 3, 8, 8), out_module);
}

static void assert_main_type(kiln_module_t *module, const char *expected) {
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  const kiln_function_t *main = om_main(module);
  assert_string_equal(kiln_type_text(main->params[0]->base.checked_type, text), expected);
  assert_string_equal(kiln_type_text(main->ret_type, text), expected);
}

/* A dim_param stays a named symbolic dim, an unknown dim an anonymous one;
 * static_input_shapes (the compiling tools) refuses both, naming the fix. */
static void test_symbolic_input_dims(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(import_symbolic(NULL, &module));
  assert_main_type(module, "Tensor[(N, 3, 8, 8), float32]");
  kiln_module_destroy(module);
  KILN_ASSERT_OK(import_dims(NULL, false, OB_DIMS(OB_UNKNOWN, 3, OB_SYMBOLIC, 8), &module));
  assert_main_type(module, "Tensor[(?, 3, N, 8), float32]");
  kiln_module_destroy(module);
  KILN_ASSERT_STATUS(import_dims(NULL, true, OB_DIMS(OB_SYMBOLIC, 3, 8, 8), &module),
                     INVALID_ARGUMENT,
                     "test.onnx: input \"image\" has a symbolic dimension \"N\" (dim 0); give its "
                     "shape with --input-shape image=...");
  assert_null(module);
  KILN_ASSERT_STATUS(import_dims(NULL, true, OB_DIMS(1, OB_UNKNOWN, 8, 8), &module),
                     INVALID_ARGUMENT,
                     "input \"image\" has an unknown dimension (dim 1); give its shape with "
                     "--input-shape image=...");
  KILN_ASSERT_OK(import_dims("image=2x3x8x8", true, OB_DIMS(OB_SYMBOLIC, 3, 8, 8), &module));
  assert_main_type(module, "Tensor[(2, 3, 8, 8), float32]");
  kiln_module_destroy(module);
  /* A converter that reads its input's dims refuses a symbolic one. */
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "image", OB_FLOAT, 4, OB_DIMS(OB_SYMBOLIC, 3, 8, 8));
  ob_node(&ob, "Flatten", "f", "image", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(
      ob_import(&ob, NULL, kiln_allocator_system(), &module), UNIMPLEMENTED,
      "node \"f\" (Flatten): input 0 has the symbolic dim N (dim 0); this operator's "
      "converter needs static shapes (fix the dim with --input-shape)");
  ob_free(&ob);
}

static void test_input_shapes(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(import_symbolic("image=5x3x8x8", &module));
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 4, OB_DIMS(5, 3, 8, 8));
  kiln_module_destroy(module);
  KILN_ASSERT_STATUS(import_symbolic("img=5x3x8x8", &module), INVALID_ARGUMENT,
                     "--input-shape \"img=5x3x8x8\" names no input of the graph");
  KILN_ASSERT_STATUS(import_symbolic("image=5x3x9x8", &module), INVALID_ARGUMENT,
                     "--input-shape gives dim 2 of input \"image\" as 9 but the model fixes it "
                     "at 8");
  KILN_ASSERT_STATUS(import_symbolic("image=5x3x8", &module), INVALID_ARGUMENT,
                     "--input-shape gives input \"image\" 3 dims but the model gives it 4");
  KILN_ASSERT_STATUS(import_symbolic("image=5x3xx8", &module), INVALID_ARGUMENT,
                     "--input-shape \"image=5x3xx8\": a dim is not a non-negative integer or "
                     "NAME[<=BOUND]; write NAME=D1xD2x...");
  KILN_ASSERT_STATUS(import_symbolic("image=5,3,8,8", &module), INVALID_ARGUMENT,
                     "dims must be separated by 'x'");
  KILN_ASSERT_STATUS(import_symbolic("5x3x8x8", &module), INVALID_ARGUMENT,
                     "no NAME= before the dims");
}

/* A spec's dim may be symbolic, NAME or NAME<=BOUND (the VM plans bounded
 * values' memory at their bounds; NAME has no 'x', the separator); not
 * where the model fixes the dim. */
static void test_symbolic_input_shapes(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(import_symbolic("image=batch<=16x3x8x8", &module));
  assert_main_type(module, "Tensor[(batch<=16, 3, 8, 8), float32]");
  kiln_module_destroy(module);
  KILN_ASSERT_OK(import_symbolic("image=M_2x3x8x8", &module));
  assert_main_type(module, "Tensor[(M_2, 3, 8, 8), float32]");
  kiln_module_destroy(module);
  KILN_ASSERT_STATUS(import_symbolic("image=5x3xH<=4x8", &module), INVALID_ARGUMENT,
                     "--input-shape gives dim 2 of input \"image\" as the symbolic H but the "
                     "model fixes it at 8");
  KILN_ASSERT_STATUS(import_symbolic("image=N<=x3x8x8", &module), INVALID_ARGUMENT,
                     "--input-shape \"image=N<=x3x8x8\": a dim is not a non-negative integer");
  KILN_ASSERT_STATUS(import_symbolic("image=N<8x3x8x8", &module), INVALID_ARGUMENT,
                     "dims must be separated by 'x'");
}

static void test_input_without_shape(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 0, NULL);
  ob_node(&ob, "Relu", "r", "x", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "input \"x\" has no shape; give it with --input-shape x=...");
  const char *specs[] = {"x="};
  kiln_onnx_import_options_t options = {.num_input_shapes = 1, .input_shape_specs = specs};
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 0, NULL);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* Input values give symbolic dims their size and feed must-be-constant inputs. */
static void test_input_values(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(OB_SYMBOLIC, 6));
  ob_input(&ob, "shape", OB_INT64, 1, OB_DIMS(2));
  ob_node(&ob, "Reshape", "rs", "x,shape", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  kiln_tensor_t *values[2] = {
      om_tensor_f32(2, OB_DIMS(2, 6), OB_F32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)), NULL};
  const int64_t target[2] = {3, -1};
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 1, OB_DIMS(2),
                                         target, sizeof(target), &values[1]));
  kiln_onnx_import_options_t options = {.num_input_values = 2, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  assert_int_equal(om_main(module)->num_params, 2);
  om_assert_type(om_main(module)->params[0]->type_annotation, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 6));
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 4));
  kiln_module_destroy(module);

  options.num_input_values = 3;
  kiln_tensor_t *three[3] = {values[0], values[1], values[1]};
  options.input_values = three;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "3 input values are given but the graph has 2 inputs");
  kiln_tensor_t *swapped[2] = {values[1], values[0]};
  options.num_input_values = 2;
  options.input_values = swapped;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "the value given for input \"x\" is int64; the model says float32");
  kiln_tensor_t *flat = om_tensor_f32(1, OB_DIMS(6), OB_F32(0, 1, 2, 3, 4, 5));
  kiln_tensor_t *wrong_rank[2] = {flat, values[1]};
  options.input_values = wrong_rank;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "the value given gives input \"x\" 1 dims but the model gives it 2");
  kiln_tensor_release(flat);
  kiln_tensor_release(values[0]);
  kiln_tensor_release(values[1]);
  ob_free(&ob);
}

/* ---- Constant nodes ---- */

static void test_constant_node_forms(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  Onnx__NodeProto *tensor = ob_node(&ob, "Constant", "c0", "", "t");
  Onnx__AttributeProto *attr =
      ob_attr(&ob, tensor, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  attr->t = ob_tensor_f32(&ob, "", 2, OB_DIMS(1, 2), OB_F32(1.5f, -2));
  Onnx__NodeProto *f = ob_node(&ob, "Constant", "c1", "", "f");
  ob_attr_float(&ob, f, "value_float", 0.25f);
  Onnx__NodeProto *fs = ob_node(&ob, "Constant", "c2", "", "fs");
  ob_attr_floats(&ob, fs, "value_floats", 3, OB_F32(1, 2, 3));
  Onnx__NodeProto *i = ob_node(&ob, "Constant", "c3", "", "i");
  ob_attr_int(&ob, i, "value_int", -7);
  Onnx__NodeProto *is = ob_node(&ob, "Constant", "c4", "", "is");
  ob_attr_ints(&ob, is, "value_ints", 2, OB_I64(4, 5));
  const char *outputs[] = {"t", "f", "fs", "i", "is"};
  for (int k = 0; k < 5; ++k) {
    ob_output(&ob, outputs[k], k < 3 ? OB_FLOAT : OB_INT64, 0, NULL);
  }
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  const kiln_tuple_t *tuple = kiln_expr_as_tuple(om_main(module)->body);
  assert_non_null(tuple);
  om_assert_type(tuple->fields[0]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 2));
  om_assert_f32(om_constant(tuple->fields[0]), OB_F32(1.5f, -2), 2, 0.0);
  om_assert_type(tuple->fields[1]->checked_type, KILN_DTYPE_FLOAT32, 0, NULL);
  om_assert_f32(om_constant(tuple->fields[1]), OB_F32(0.25f), 1, 0.0);
  om_assert_f32(om_constant(tuple->fields[2]), OB_F32(1, 2, 3), 3, 0.0);
  om_assert_type(tuple->fields[3]->checked_type, KILN_DTYPE_INT64, 0, NULL);
  om_assert_i64(om_constant(tuple->fields[3]), OB_I64(-7), 1);
  om_assert_i64(om_constant(tuple->fields[4]), OB_I64(4, 5), 2);
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- files ---- */

static void test_import_file(void **state) {
  (void)state;
  ob_t ob;
  build_conv_relu(&ob, 1);
  size_t size = 0;
  uint8_t *bytes = ob_pack(&ob, &size);
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "conv.onnx");
  kiln_test_write_file(path, bytes, size);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_onnx_import_file(path, NULL, kiln_allocator_system(), &module));
  om_assert_type(om_main(module)->ret_type, KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 4, 4));
  kiln_module_destroy(module);
  char *missing = kiln_test_path_join(dir, "missing.onnx");
  KILN_ASSERT_STATUS(kiln_onnx_import_file(missing, NULL, kiln_allocator_system(), &module),
                     NOT_FOUND, "missing.onnx: cannot open");
  free(missing);
  kiln_test_remove_dir(dir);
  free(path);
  free(dir);
  ob_free(&ob);
}

/* ---- allocation failures ---- */

static kiln_status_t import_scenario(kiln_allocator_t allocator, void *context) {
  const ob_t *ob = context;
  size_t size = onnx__model_proto__get_packed_size(&ob->model);
  uint8_t *bytes = malloc(size);
  onnx__model_proto__pack(&ob->model, bytes);
  kiln_module_t *module = NULL;
  kiln_status_t status =
      kiln_onnx_import_buffer("sweep.onnx", bytes, size, NULL, NULL, allocator, &module);
  free(bytes);
  if (!status) {
    kiln_function_t *main = kiln_module_get_function(module, "main");
    status = main && main->num_params == 1 ? KILN_OK : KILN_STATUS(INTERNAL, "wrong module");
  }
  kiln_module_destroy(module);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  ob_t ob;
  build_conv_relu(&ob, 1);
  /* plus a folded shape computation, a split and a tuple output */
  ob_init_i64(&ob, "two", 1, OB_DIMS(1), OB_I64(2));
  ob_node(&ob, "Shape", "s", "y", "shape");
  ob_node(&ob, "Mul", "m", "shape,two", "twice");
  Onnx__NodeProto *split = ob_node(&ob, "Split", "sp", "y", "p0,p1");
  ob_attr_int(&ob, split, "axis", 1);
  ob_output(&ob, "twice", OB_INT64, 0, NULL);
  ob_output(&ob, "p1", OB_FLOAT, 0, NULL);
  int64_t attempts = kiln_test_sweep_allocation_failures(import_scenario, &ob);
  assert_true(attempts > 20);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_conv_relu_ir, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_relu_numbers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm_trans_b, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shape_of_a_scalar, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shape_subgraph_folds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_squeeze_by_opset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_initializer_inputs_are_constants, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tuple_outputs_in_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_parameter_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symbolic_input_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symbolic_input_dims, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_without_shape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_constant_node_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_import_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
