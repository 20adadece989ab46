/*
 * Tests of the importer's bad-input errors: every way a file can fail to be
 * an importable model gets a status whose code and message say what is
 * wrong, naming the file and, for a node, its name and op_type. Empty,
 * truncated and random bytes, a protobuf that is not a model, messages
 * nested absurdly deep, unsupported operators (all listed at once), opsets
 * outside 1..17 and other domains, an input nobody produces, inconsistent
 * shapes, values defined twice, a missing graph output, attributes of the
 * wrong type, outputs kiln cannot produce, and declared output types the
 * graph does not compute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_import.h"
#include "kiln_test.h"
#include "onnx_builder.h"

static kiln_status_t import_bytes(const void *bytes, size_t size) {
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_onnx_import_buffer("bad.onnx", bytes, size, NULL, NULL,
                                                 kiln_allocator_system(), &module);
  assert_null(module);
  kiln_module_destroy(module);
  return status;
}

static kiln_status_t import_model(ob_t *ob) {
  kiln_module_t *module = NULL;
  kiln_status_t status = ob_import(ob, NULL, kiln_allocator_system(), &module);
  kiln_module_destroy(module);
  ob_free(ob);
  return status;
}

/* x (2, 3) -> Relu -> y: a valid model to break. */
static void build_relu(ob_t *ob, int64_t opset) {
  ob_init(ob, opset);
  ob_input(ob, "x", OB_FLOAT, 2, OB_DIMS(2, 3));
  ob_node(ob, "Relu", "relu", "x", "y");
  ob_output(ob, "y", OB_FLOAT, 2, OB_DIMS(2, 3));
}

/* ---- bytes ---- */

static void test_empty_file(void **state) {
  (void)state;
  KILN_ASSERT_STATUS(import_bytes("", 0), DATA_LOSS,
                     "bad.onnx: the file is empty; expected an ONNX ModelProto");
}

static void test_truncated_file(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  size_t size = 0;
  uint8_t *bytes = ob_pack(&ob, &size);
  KILN_ASSERT_STATUS(import_bytes(bytes, size - 3), DATA_LOSS,
                     "bytes do not parse as an ONNX ModelProto (truncated, corrupt, or another "
                     "format)");
  ob_free(&ob);
}

static void test_random_bytes(void **state) {
  (void)state;
  uint8_t bytes[512];
  uint32_t seed = 12345;
  for (size_t i = 0; i < sizeof(bytes); ++i) {
    seed = seed * 1103515245u + 12345u;
    bytes[i] = (uint8_t)(seed >> 16);
  }
  KILN_ASSERT_STATUS(import_bytes(bytes, sizeof(bytes)), DATA_LOSS,
                     "bad.onnx: 512 bytes do not parse as an ONNX ModelProto");
  const char text[] = "this is not a protobuf at all";
  KILN_ASSERT_STATUS(import_bytes(text, sizeof(text) - 1), DATA_LOSS, "do not parse");
}

static void test_protobuf_without_graph(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob.model.graph = NULL;
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "test.onnx: the protobuf has no graph: it is not an ONNX model");
}

/* ModelProto.graph -> GraphProto.input -> ValueInfoProto.type -> TypeProto
 * nested `depth` times through sequence_type.elem_type. */
static void test_deep_nesting(void **state) {
  (void)state;
  size_t capacity = 16 * 1024, size = 0;
  uint8_t *buffer = malloc(capacity);
  uint8_t *inner = malloc(capacity);
  for (int level = 0; level < 300; ++level) {
    /* TypeProto { sequence_type (4) { elem_type (1) { inner } } } */
    uint8_t field = level % 2 == 1 ? (4 << 3 | 2) : (1 << 3 | 2);
    size_t header = 1;
    inner[0] = field;
    size_t length = size;
    do {
      inner[header++] = (uint8_t)((length & 0x7f) | (length > 0x7f ? 0x80 : 0));
      length >>= 7;
    } while (length);
    memcpy(inner + header, buffer, size);
    size += header;
    memcpy(buffer, inner, size);
  }
  /* wrap in ValueInfo.type (2), Graph.input (11), Model.graph (7) */
  const uint8_t tags[3] = {2 << 3 | 2, 11 << 3 | 2, 7 << 3 | 2};
  for (int k = 0; k < 3; ++k) {
    size_t header = 1, length = size;
    inner[0] = tags[k];
    do {
      inner[header++] = (uint8_t)((length & 0x7f) | (length > 0x7f ? 0x80 : 0));
      length >>= 7;
    } while (length);
    memcpy(inner + header, buffer, size);
    size += header;
    memcpy(buffer, inner, size);
  }
  KILN_ASSERT_STATUS(import_bytes(buffer, size), DATA_LOSS,
                     "bad.onnx: messages are nested more than 64 deep; not an ONNX ModelProto");
  free(inner);
  free(buffer);
}

/* ---- opsets and operators ---- */

static void test_opset_outside_range(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 0);
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "test.onnx: the model uses opset 0 of the default domain; kiln imports "
                     "opsets 1 to 17");
  build_relu(&ob, 18);
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED, "uses opset 18 of the default domain");
  build_relu(&ob, 13);
  ob.opset.domain = ob_strdup(&ob, "com.example");
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "the model imports no opset of the default ONNX domain (it imports "
                     "com.example version 13; kiln imports only the default domain and "
                     "ai.onnx.preview.training)");
  build_relu(&ob, 13);
  ob.opset.domain = ob_strdup(&ob, "ai.onnx");
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_unsupported_operators_listed(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob_node(&ob, "Zzz", "z_1", "y", "a");
  ob_node(&ob, "StringNormalizer", "norm0", "a", "b");
  ob_node(&ob, "Relu", "fine", "b", "c");
  ob_node(&ob, "StringNormalizer", "norm3", "c", "d");
  Onnx__NodeProto *fused = ob_node(&ob, "FusedConv", "", "d", "e");
  fused->domain = ob_strdup(&ob, "com.microsoft");
  ob_node(&ob, "LayerNormalization", "ln", "e", "f");
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "test.onnx: unsupported operators: Zzz (node z_1), StringNormalizer "
                     "(nodes norm0, norm3), com.microsoft.FusedConv (node #5), "
                     "LayerNormalization at opset 13 (node ln)");
}

static void test_unsupported_list_is_bounded(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  for (int i = 0; i < 12; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "t%d", i);
    ob_node(&ob, "StringNormalizer", name, "y", name);
  }
  KILN_ASSERT_STATUS(
      import_model(&ob), UNIMPLEMENTED,
      "unsupported operators: StringNormalizer (nodes t0, t1, t2, t3, t4, t5, t6, t7, ...) "
      "[12 nodes]");
}

/* ---- graph structure ---- */

static void test_missing_initializer(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob_node(&ob, "Add", "add_w", "y,w", "z");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "test.onnx: node \"add_w\" (Add): input 1 names \"w\", which no earlier "
                     "node, graph input or initializer produces");
}

static void test_inconsistent_shapes(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob_init_f32(&ob, "w", 2, OB_DIMS(4, 5),
              OB_F32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  ob_node(&ob, "Add", "", "y,w", "z");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "test.onnx: node #1 (Add): add: cannot broadcast (2, 3) and (4, 5)");
  build_relu(&ob, 13);
  ob_init_f32(&ob, "w", 4, OB_DIMS(1, 1, 1, 1), OB_F32(1));
  Onnx__NodeProto *conv = ob_node(&ob, "Conv", "conv", "y,w", "z");
  ob_attr_ints(&ob, conv, "kernel_shape", 2, OB_I64(1, 1));
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"conv\" (Conv): weight has rank 4 but data has rank 2");
}

static void test_value_defined_twice(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob_node(&ob, "Relu", "again", "x", "y");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"again\" (Relu): value \"y\" is defined twice");
}

static void test_missing_graph_output(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob_output(&ob, "nowhere", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "test.onnx: graph output \"nowhere\" is produced by no node");
  build_relu(&ob, 13);
  ob.graph.n_output = 0;
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT, "the graph has 0 outputs");
}

static void test_declared_output_type(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob.outputs[0] = ob_value_info(&ob, "y", OB_FLOAT, 2, OB_DIMS(3, 2));
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "graph output \"y\" is declared FLOAT (3, 2) (-1: symbolic) but the graph "
                     "computes Tensor[(2, 3), float32]");
  build_relu(&ob, 13);
  ob.outputs[0] = ob_value_info(&ob, "y", OB_INT64, 2, OB_DIMS(2, OB_SYMBOLIC));
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "graph output \"y\" is declared INT64 (2, -1)");
}

/* Invalid ONNX that must be refused: two graph inputs of one name, an
 * attribute given twice, more inputs than the operator's schema allows,
 * an initializer with both raw_data and typed data, and the default
 * domain imported twice. */
static void test_invalid_onnx_refused(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(2, 3));
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "test.onnx: graph input \"x\" is declared twice");
  build_relu(&ob, 13);
  Onnx__NodeProto *softmax = ob_node(&ob, "Softmax", "sm", "y", "z");
  ob_attr_int(&ob, softmax, "axis", 1);
  ob_attr_int(&ob, softmax, "axis", 0);
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"sm\" (Softmax): attribute axis is given twice");
  build_relu(&ob, 13);
  ob_node(&ob, "Relu", "two", "y,x", "z");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"two\" (Relu): 2 inputs; Relu takes at most 1");
  build_relu(&ob, 13);
  Onnx__TensorProto *w = ob_tensor_raw(&ob, "w", OB_FLOAT, 1, OB_DIMS(1), OB_F32(1), 4);
  w->n_float_data = 1;
  w->float_data = ob_alloc(&ob, sizeof(float));
  w->float_data[0] = 2;
  ob_initializer(&ob, w);
  ob_node(&ob, "Add", "add_w", "y,w", "z");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "tensor \"w\": has both raw_data and typed data (float_data)");
  build_relu(&ob, 13);
  Onnx__OperatorSetIdProto *again = ob_alloc(&ob, sizeof(*again));
  onnx__operator_set_id_proto__init(again);
  again->domain = ob_strdup(&ob, "ai.onnx");
  again->has_version = 1;
  again->version = 11;
  ob.opsets[1] = again;
  ob.model.n_opset_import = 2;
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "the model imports the default domain twice (opsets 13 and 11)");
}

/* A tiny model whose constant computation would allocate gigabytes: a
 * ConstantOfShape of (1000, 1000, 1000, 1000) floats (4 TB), a Range of
 * 2^40 steps; and the cap as an import option (16 bytes refuse a Range of
 * 5 int64). */
static void test_huge_constants_refused(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_init_i64(&ob, "shape", 1, OB_DIMS(4), OB_I64(1000, 1000, 1000, 1000));
  ob_node(&ob, "ConstantOfShape", "huge", "shape", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(import_model(&ob), RESOURCE_EXHAUSTED,
                     "node \"huge\" (ConstantOfShape): ConstantOfShape at import would make a "
                     "constant float32 (1000, 1000, 1000, 1000) of 4000000000000 bytes, over the "
                     "limit of 1073741824 bytes (the import option max_constant_bytes)");
  ob_init(&ob, 13);
  ob_init_i64(&ob, "start", 0, NULL, OB_I64(0));
  ob_init_i64(&ob, "limit", 0, NULL, OB_I64((int64_t)1 << 40));
  ob_init_i64(&ob, "delta", 0, NULL, OB_I64(1));
  ob_node(&ob, "Range", "steps", "start,limit,delta", "y");
  ob_output(&ob, "y", OB_INT64, 0, NULL);
  KILN_ASSERT_STATUS(import_model(&ob), RESOURCE_EXHAUSTED,
                     "node \"steps\" (Range): arange at import would make a constant "
                     "Tensor[(1099511627776), int64] of 8796093022208 bytes, over the limit");
  ob_init(&ob, 13);
  ob_init_i64(&ob, "start", 0, NULL, OB_I64(0));
  ob_init_i64(&ob, "limit", 0, NULL, OB_I64(5));
  ob_init_i64(&ob, "delta", 0, NULL, OB_I64(1));
  ob_node(&ob, "Range", "five", "start,limit,delta", "y");
  ob_output(&ob, "y", OB_INT64, 0, NULL);
  kiln_onnx_import_options_t options = {.max_constant_bytes = 16};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), RESOURCE_EXHAUSTED,
                     "of 40 bytes, over the limit of 16 bytes");
  options.max_constant_bytes = 40;
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_bad_attributes(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  Onnx__NodeProto *softmax = ob_node(&ob, "Softmax", "sm", "y", "z");
  ob_attr_float(&ob, softmax, "axis", 1.0f);
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"sm\" (Softmax): attribute axis is FLOAT; expected INT");
  build_relu(&ob, 13);
  ob_node(&ob, "Concat", "cat", "y,y", "z");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"cat\" (Concat): attribute axis is required");
  build_relu(&ob, 13);
  Onnx__NodeProto *cast = ob_node(&ob, "Cast", "c", "y", "z");
  ob_attr_int(&ob, cast, "to", 8);
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "node \"c\" (Cast): attribute to: element type STRING is not supported");
  build_relu(&ob, 13);
  Onnx__NodeProto *pool = ob_node(&ob, "MaxPool", "p", "y", "z");
  ob_attr_ints(&ob, pool, "kernel_shape", 2, OB_I64(1, 1));
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "node \"p\" (MaxPool): data (2, 3) has 0 spatial dims; kiln supports 1-D "
                     "to 3-D windows here");
}

static void test_unsupported_output(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 4, OB_DIMS(1, 1, 4, 4));
  ob_node(&ob, "Relu", "relu", "x", "y,extra");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "node \"relu\" (Relu): output 1 (\"extra\") is not supported");
}

static void test_must_be_constant(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 17);
  ob_input(&ob, "n", OB_INT64, 1, OB_DIMS(1));
  ob_node(&ob, "DFT", "dft1", "y,n", "z");
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "test.onnx: node \"dft1\" (DFT): input 1 (dft_length, \"n\") must be a "
                     "constant known at import, but it depends on the graph's inputs");
  build_relu(&ob, 13);
  ob_init_f32(&ob, "shape", 1, OB_DIMS(2), OB_F32(3, 2));
  ob_node(&ob, "Reshape", "r", "y,shape", "z");
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "node \"r\" (Reshape): input 1 (shape) is float32 (2,); expected a 1-D int64 "
                     "tensor");
}

static void test_unsupported_input_types(void **state) {
  (void)state;
  ob_t ob;
  build_relu(&ob, 13);
  ob.inputs[0] = ob_value_info(&ob, "x", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, 2, OB_DIMS(2, 3));
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED,
                     "input \"x\": element type STRING is not supported");
  build_relu(&ob, 13);
  ob.inputs[0]->type->value_case = ONNX__TYPE_PROTO__VALUE__NOT_SET;
  KILN_ASSERT_STATUS(import_model(&ob), UNIMPLEMENTED, "input \"x\" is not a tensor");
  build_relu(&ob, 13);
  ob.inputs[0] = ob_value_info(&ob, "x", 99, 2, OB_DIMS(2, 3));
  KILN_ASSERT_STATUS(import_model(&ob), INVALID_ARGUMENT,
                     "input \"x\": element type type 99 is not an ONNX type");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_empty_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncated_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_random_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_protobuf_without_graph, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deep_nesting, setup, teardown),
      cmocka_unit_test_setup_teardown(test_opset_outside_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_operators_listed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_list_is_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_initializer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inconsistent_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_value_defined_twice, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_graph_output, setup, teardown),
      cmocka_unit_test_setup_teardown(test_declared_output_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_attributes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invalid_onnx_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_huge_constants_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_output, setup, teardown),
      cmocka_unit_test_setup_teardown(test_must_be_constant, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_input_types, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
