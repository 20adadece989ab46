/*
 * Robustness of the importer on damaged files: every truncation of a small
 * model, and thousands of models with one to four bytes overwritten at
 * random (a fixed seed, so a failure reproduces), must each end in a status
 * or a module, never a crash, a hang or a leak (the sanitizer build checks
 * memory). The model has initializers in raw_data and float_data,
 * attributes of several types, a folded shape computation and a split, so
 * damage reaches every stage of the import.
 */
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_import.h"
#include "kiln_test.h"
#include "onnx_builder.h"

static void build_model(ob_t *ob) {
  ob_init(ob, 13);
  float w[2 * 3 * 3 * 3];
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); ++i) {
    w[i] = (float)i * 0.01f;
  }
  ob_initializer(ob, ob_tensor_raw(ob, "W", OB_FLOAT, 4, OB_DIMS(2, 3, 3, 3), w, sizeof(w)));
  ob_init_f32(ob, "B", 1, OB_DIMS(2), OB_F32(0.5f, -0.5f));
  ob_init_i64(ob, "axes", 1, OB_DIMS(1), OB_I64(0));
  ob_init_i64(ob, "minus1", 1, OB_DIMS(1), OB_I64(-1));
  ob_init_i64(ob, "zero", 0, NULL, OB_I64(0));
  ob_input(ob, "x", OB_FLOAT, 4, OB_DIMS(1, 3, 6, 6));
  Onnx__NodeProto *conv = ob_node(ob, "Conv", "conv", "x,W,B", "c");
  ob_attr_ints(ob, conv, "pads", 4, OB_I64(1, 1, 1, 1));
  ob_attr_ints(ob, conv, "strides", 2, OB_I64(2, 2));
  Onnx__NodeProto *clip = ob_node(ob, "Clip", "clip", "c", "r");
  (void)clip;
  Onnx__NodeProto *pool = ob_node(ob, "MaxPool", "pool", "r", "p");
  ob_attr_ints(ob, pool, "kernel_shape", 2, OB_I64(2, 2));
  ob_attr_string(ob, pool, "auto_pad", "SAME_UPPER");
  ob_node(ob, "Shape", "shape", "p", "s");
  ob_node(ob, "Gather", "gather", "s,zero", "n");
  ob_node(ob, "Unsqueeze", "unsqueeze", "n,axes", "n1");
  Onnx__NodeProto *concat = ob_node(ob, "Concat", "concat", "n1,minus1", "target");
  ob_attr_int(ob, concat, "axis", 0);
  ob_node(ob, "Reshape", "reshape", "p,target", "flat");
  Onnx__NodeProto *softmax = ob_node(ob, "Softmax", "softmax", "flat", "prob");
  ob_attr_int(ob, softmax, "axis", 1);
  Onnx__NodeProto *split = ob_node(ob, "Split", "split", "prob", "a,b");
  ob_attr_int(ob, split, "axis", 1);
  ob_output(ob, "a", OB_FLOAT, 2, OB_DIMS(1, 9));
  ob_output(ob, "b", OB_FLOAT, 0, NULL);
}

/* Imports and releases whatever comes out. */
static void try_import(const uint8_t *bytes, size_t size) {
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_onnx_import_buffer("fuzz.onnx", bytes, size, NULL, NULL,
                                                 kiln_allocator_system(), &module);
  if (status) {
    assert_null(module);
    assert_true(kiln_status_code(status) != KILN_STATUS_CODE_INTERNAL);
    assert_true(strstr(kiln_status_message(status), "fuzz.onnx") != NULL);
    kiln_status_free(status);
  } else {
    assert_non_null(kiln_module_get_function(module, "main"));
  }
  kiln_module_destroy(module);
}

static void test_intact_model_imports(void **state) {
  (void)state;
  ob_t ob;
  build_model(&ob);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  const kiln_tuple_t *outputs = kiln_expr_as_tuple(om_main(module)->body);
  assert_non_null(outputs);
  om_assert_type(outputs->fields[0]->checked_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 9));
  kiln_module_destroy(module);
  ob_free(&ob);
}

static void test_every_truncation(void **state) {
  (void)state;
  ob_t ob;
  build_model(&ob);
  size_t size = 0;
  uint8_t *bytes = ob_pack(&ob, &size);
  int64_t before = kiln_status_live_count();
  for (size_t length = 0; length < size; ++length) {
    uint8_t *copy = malloc(length ? length : 1);
    memcpy(copy, bytes, length);
    try_import(copy, length);
    free(copy);
  }
  assert_int_equal(kiln_status_live_count(), before);
  ob_free(&ob);
}

static void test_random_byte_changes(void **state) {
  (void)state;
  ob_t ob;
  build_model(&ob);
  size_t size = 0;
  uint8_t *bytes = ob_pack(&ob, &size);
  uint8_t *copy = malloc(size);
  uint64_t seed = 0x9e3779b97f4a7c15u;
  int64_t before = kiln_status_live_count();
  int imported = 0;
  for (int round = 0; round < 3000; ++round) {
    memcpy(copy, bytes, size);
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    int changes = 1 + (int)((seed >> 60) % 4);
    for (int c = 0; c < changes; ++c) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      copy[(seed >> 20) % size] = (uint8_t)(seed >> 52);
    }
    kiln_module_t *module = NULL;
    kiln_status_t status = kiln_onnx_import_buffer("fuzz.onnx", copy, size, NULL, NULL,
                                                   kiln_allocator_system(), &module);
    imported += status == NULL;
    kiln_status_free(status);
    kiln_module_destroy(module);
  }
  /* Some damage lands in names or values and still imports; most does not. */
  assert_true(imported > 0);
  assert_true(imported < 3000);
  assert_int_equal(kiln_status_live_count(), before);
  free(copy);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_intact_model_imports),
      cmocka_unit_test(test_every_truncation),
      cmocka_unit_test(test_random_byte_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
