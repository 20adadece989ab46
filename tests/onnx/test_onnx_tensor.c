/*
 * Tests of TensorProto decoding (kiln_onnx_tensor_parse and read_file, and
 * initializers through the importer): every storage form (raw_data, and the
 * typed fields float_data, int32_data for the narrow types, int64_data,
 * double_data, uint64_data), the checks that data matches the dims before
 * anything is allocated, and external data beside the model with the path
 * confined to the model's folder.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/onnx/onnx_import.h"
#include "kiln_test.h"
#include "onnx_builder.h"

/* Packs `proto` and parses it back as a kiln tensor. */
static kiln_status_t parse(const Onnx__TensorProto *proto, const char *dir,
                           kiln_tensor_t **out_tensor) {
  size_t size = onnx__tensor_proto__get_packed_size(proto);
  uint8_t *bytes = malloc(size ? size : 1);
  onnx__tensor_proto__pack(proto, bytes);
  kiln_status_t status =
      kiln_onnx_tensor_parse("t.pb", bytes, size, dir, kiln_allocator_system(), out_tensor);
  free(bytes);
  return status;
}

static kiln_tensor_t *parse_ok(const Onnx__TensorProto *proto) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(parse(proto, NULL, &tensor));
  return tensor;
}

/* ---- storage forms ---- */

static void test_raw_data_every_dtype(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  const struct {
    int32_t onnx;
    kiln_dtype_t dtype;
  } types[] = {{1, KILN_DTYPE_FLOAT32},  {2, KILN_DTYPE_UINT8},   {3, KILN_DTYPE_INT8},
               {4, KILN_DTYPE_UINT16},   {5, KILN_DTYPE_INT16},   {6, KILN_DTYPE_INT32},
               {7, KILN_DTYPE_INT64},    {9, KILN_DTYPE_BOOL},    {10, KILN_DTYPE_FLOAT16},
               {11, KILN_DTYPE_FLOAT64}, {12, KILN_DTYPE_UINT32}, {13, KILN_DTYPE_UINT64},
               {16, KILN_DTYPE_BFLOAT16}};
  uint8_t data[3 * 8];
  for (size_t i = 0; i < sizeof(data); ++i) {
    data[i] = (uint8_t)(i * 7 + 1);
  }
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
    size_t bytes = 3 * kiln_dtype_size(types[t].dtype);
    kiln_tensor_t *tensor =
        parse_ok(ob_tensor_raw(&ob, "r", types[t].onnx, 1, OB_DIMS(3), data, bytes));
    assert_int_equal(kiln_tensor_dtype(tensor), types[t].dtype);
    assert_int_equal(kiln_tensor_ndim(tensor), 1);
    assert_int_equal(kiln_tensor_shape(tensor)[0], 3);
    assert_memory_equal(kiln_tensor_data(tensor), data, bytes);
    kiln_tensor_release(tensor);
  }
  ob_free(&ob);
}

static void test_typed_fields(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  kiln_tensor_t *f = parse_ok(ob_tensor_f32(&ob, "f", 2, OB_DIMS(1, 2), OB_F32(1.5f, -3)));
  assert_int_equal(kiln_tensor_dtype(f), KILN_DTYPE_FLOAT32);
  assert_true(((float *)kiln_tensor_data(f))[0] == 1.5f);
  assert_true(((float *)kiln_tensor_data(f))[1] == -3.0f);
  kiln_tensor_release(f);

  kiln_tensor_t *i64 = parse_ok(ob_tensor_i64(&ob, "i", 0, NULL, OB_I64(-9)));
  assert_int_equal(kiln_tensor_ndim(i64), 0);
  assert_int_equal(((int64_t *)kiln_tensor_data(i64))[0], -9);
  kiln_tensor_release(i64);

  /* int32_data holds int8, uint8, int16, uint16, bool and float16 bits. */
  static int32_t narrow[3] = {-2, 1, 300};
  const struct {
    int32_t onnx;
    kiln_dtype_t dtype;
    double expected[3];
  } cases[] = {{3, KILN_DTYPE_INT8, {-2, 1, 44}},   {2, KILN_DTYPE_UINT8, {254, 1, 44}},
               {5, KILN_DTYPE_INT16, {-2, 1, 300}}, {4, KILN_DTYPE_UINT16, {65534, 1, 300}},
               {9, KILN_DTYPE_BOOL, {1, 1, 1}},     {6, KILN_DTYPE_INT32, {-2, 1, 300}}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    Onnx__TensorProto *proto = ob_tensor(&ob, "n", cases[c].onnx, 1, OB_DIMS(3));
    proto->n_int32_data = 3;
    proto->int32_data = narrow;
    kiln_tensor_t *tensor = parse_ok(proto);
    assert_int_equal(kiln_tensor_dtype(tensor), cases[c].dtype);
    for (int k = 0; k < 3; ++k) {
      const void *data = kiln_tensor_data(tensor);
      kiln_dtype_t dtype = cases[c].dtype;
      double value = dtype == KILN_DTYPE_INT8     ? ((const int8_t *)data)[k]
                     : dtype == KILN_DTYPE_INT16  ? ((const int16_t *)data)[k]
                     : dtype == KILN_DTYPE_UINT16 ? ((const uint16_t *)data)[k]
                     : dtype == KILN_DTYPE_INT32  ? ((const int32_t *)data)[k]
                                                  : ((const uint8_t *)data)[k];
      assert_true(value == cases[c].expected[k]);
    }
    kiln_tensor_release(tensor);
  }
  Onnx__TensorProto *half = ob_tensor(&ob, "h", 10, 1, OB_DIMS(1));
  static int32_t bits[1] = {0x3c00}; /* 1.0 */
  half->n_int32_data = 1;
  half->int32_data = bits;
  kiln_tensor_t *h = parse_ok(half);
  assert_int_equal(kiln_tensor_dtype(h), KILN_DTYPE_FLOAT16);
  assert_true(kiln_float16_to_float32(((uint16_t *)kiln_tensor_data(h))[0]) == 1.0f);
  kiln_tensor_release(h);

  Onnx__TensorProto *d = ob_tensor(&ob, "d", 11, 1, OB_DIMS(2));
  static double doubles[2] = {0.1, -2e300};
  d->n_double_data = 2;
  d->double_data = doubles;
  kiln_tensor_t *dt = parse_ok(d);
  assert_int_equal(kiln_tensor_dtype(dt), KILN_DTYPE_FLOAT64);
  assert_memory_equal(kiln_tensor_data(dt), doubles, sizeof(doubles));
  kiln_tensor_release(dt);

  static uint64_t wide[2] = {UINT64_MAX, 4294967297u};
  Onnx__TensorProto *u64 = ob_tensor(&ob, "u", 13, 1, OB_DIMS(2));
  u64->n_uint64_data = 2;
  u64->uint64_data = wide;
  kiln_tensor_t *ut = parse_ok(u64);
  assert_memory_equal(kiln_tensor_data(ut), wide, sizeof(wide));
  kiln_tensor_release(ut);
  u64->data_type = 12; /* uint32 keeps the low 32 bits */
  ut = parse_ok(u64);
  assert_int_equal(kiln_tensor_dtype(ut), KILN_DTYPE_UINT32);
  assert_int_equal(((uint32_t *)kiln_tensor_data(ut))[0], UINT32_MAX);
  assert_int_equal(((uint32_t *)kiln_tensor_data(ut))[1], 1);
  kiln_tensor_release(ut);
  ob_free(&ob);
}

static void test_empty_tensor(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  kiln_tensor_t *empty = parse_ok(ob_tensor(&ob, "e", OB_FLOAT, 2, OB_DIMS(0, 3)));
  assert_int_equal(kiln_tensor_element_count(empty), 0);
  assert_int_equal(kiln_tensor_shape(empty)[1], 3);
  kiln_tensor_release(empty);
  ob_free(&ob);
}

static void test_bad_tensors(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  kiln_tensor_t *tensor = NULL;
  Onnx__TensorProto *short_data = ob_tensor_f32(&ob, "w", 1, OB_DIMS(2), OB_F32(1, 2));
  short_data->dims[0] = 3;
  KILN_ASSERT_STATUS(parse(short_data, NULL, &tensor), DATA_LOSS,
                     "t.pb: tensor \"w\": has 2 values in float_data; shape (3,) needs 3");
  KILN_ASSERT_STATUS(
      parse(ob_tensor_raw(&ob, "r", OB_FLOAT, 2, OB_DIMS(2, 2), "abcdefgh", 8), NULL, &tensor),
      DATA_LOSS, "tensor \"r\": has 8 bytes of raw_data; shape (2, 2) of float32 needs 16");
  /* A huge claimed shape with no data fails on the count, before any allocation. */
  KILN_ASSERT_STATUS(
      parse(ob_tensor(&ob, "big", OB_FLOAT, 2, OB_DIMS(1 << 30, 1 << 30)), NULL, &tensor),
      DATA_LOSS, "has 0 values in float_data; shape (1073741824, 1073741824)");
  KILN_ASSERT_STATUS(
      parse(ob_tensor(&ob, "s", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, 0, NULL), NULL, &tensor),
      UNIMPLEMENTED, "tensor \"s\": element type STRING is not supported");
  KILN_ASSERT_STATUS(
      parse(ob_tensor(&ob, "c", ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64, 0, NULL), NULL, &tensor),
      UNIMPLEMENTED, "element type COMPLEX64 is not supported");
  Onnx__TensorProto *negative = ob_tensor(&ob, "n", OB_FLOAT, 1, OB_DIMS(-1));
  KILN_ASSERT_STATUS(parse(negative, NULL, &tensor), INVALID_ARGUMENT,
                     "tensor \"n\": has a negative dim -1 (dim 0)");
  Onnx__TensorProto *untyped = ob_tensor(&ob, "u", OB_FLOAT, 0, NULL);
  untyped->has_data_type = 0;
  KILN_ASSERT_STATUS(parse(untyped, NULL, &tensor), INVALID_ARGUMENT,
                     "tensor \"u\": has no data_type");
  int64_t dims[33];
  for (int i = 0; i < 33; ++i) {
    dims[i] = 1;
  }
  KILN_ASSERT_STATUS(parse(ob_tensor(&ob, "deep", OB_FLOAT, 33, dims), NULL, &tensor),
                     UNIMPLEMENTED, "has 33 dims; kiln takes at most 32");
  KILN_ASSERT_STATUS(kiln_onnx_tensor_parse("x.pb", "", 0, NULL, kiln_allocator_system(), &tensor),
                     DATA_LOSS, "x.pb: the file is empty; expected an ONNX TensorProto");
  ob_free(&ob);
}

/* ---- initializers through the importer ---- */

static void test_initializer_forms_in_a_model(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  const float raw[3] = {1, 2, 3};
  ob_initializer(&ob, ob_tensor_raw(&ob, "a", OB_FLOAT, 1, OB_DIMS(3), raw, sizeof(raw)));
  ob_init_f32(&ob, "b", 1, OB_DIMS(3), OB_F32(10, 20, 30));
  ob_node(&ob, "Add", "add", "a,b", "y");
  ob_output(&ob, "y", OB_FLOAT, 1, OB_DIMS(3));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  om_assert_f32(om_folded(module), OB_F32(11, 22, 33), 3, 0.0);
  kiln_module_destroy(module);
  ob.initializers[1]->n_float_data = 2;
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), DATA_LOSS,
                     "test.onnx: initializer 1: tensor \"b\": has 2 values in float_data");
  ob_free(&ob);
}

/* ---- external data ---- */

typedef struct external_t {
  char *dir;
  char *outside;
} external_t;

static Onnx__TensorProto *external_tensor(ob_t *ob, const char *location, const char *offset,
                                          const char *length) {
  Onnx__TensorProto *tensor = ob_tensor(ob, "w", OB_FLOAT, 1, OB_DIMS(3));
  tensor->has_data_location = 1;
  tensor->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  tensor->external_data = ob_alloc(ob, sizeof(Onnx__StringStringEntryProto *) * 3);
  const char *keys[3] = {"location", "offset", "length"};
  const char *values[3] = {location, offset, length};
  for (int i = 0; i < 3; ++i) {
    if (!values[i]) {
      continue;
    }
    Onnx__StringStringEntryProto *entry = ob_alloc(ob, sizeof(*entry));
    onnx__string_string_entry_proto__init(entry);
    entry->key = ob_strdup(ob, keys[i]);
    entry->value = ob_strdup(ob, values[i]);
    tensor->external_data[tensor->n_external_data++] = entry;
  }
  return tensor;
}

/* A model reading w from external data, written to dir/model.onnx and imported. */
static kiln_status_t import_external(const char *dir, const char *location, const char *offset,
                                     const char *length, kiln_module_t **out_module) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_initializer(&ob, external_tensor(&ob, location, offset, length));
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(3));
  ob_node(&ob, "Mul", "scale", "x,w", "y");
  ob_output(&ob, "y", OB_FLOAT, 1, OB_DIMS(3));
  size_t size = 0;
  uint8_t *bytes = ob_pack(&ob, &size);
  char *path = kiln_test_path_join(dir, "model.onnx");
  kiln_test_write_file(path, bytes, size);
  kiln_status_t status = kiln_onnx_import_file(path, NULL, kiln_allocator_system(), out_module);
  free(path);
  ob_free(&ob);
  return status;
}

static void test_external_data(void **state) {
  (void)state;
  char *dir = kiln_test_make_temp_dir();
  /* 8 bytes of padding, then 1.0, 2.0, 4.0 */
  float data[5] = {-1, -1, 1, 2, 4};
  char *weights = kiln_test_path_join(dir, "weights.bin");
  kiln_test_write_file(weights, data, sizeof(data));
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(import_external(dir, "weights.bin", "8", "12", &module));
  const kiln_call_t *mul = kiln_expr_as_call(om_main(module)->body);
  assert_non_null(mul);
  om_assert_f32(om_constant(mul->args[1]), OB_F32(1, 2, 4), 3, 0.0);
  kiln_module_destroy(module);
  /* Without a length, the rest of the file from the offset. */
  KILN_ASSERT_OK(import_external(dir, "./weights.bin", "8", NULL, &module));
  kiln_module_destroy(module);

  KILN_ASSERT_OK(import_external(dir, "weights.bin", "4", "12", &module));
  mul = kiln_expr_as_call(om_main(module)->body);
  om_assert_f32(om_constant(mul->args[1]), OB_F32(-1, 1, 2), 3, 0.0);
  kiln_module_destroy(module);
  KILN_ASSERT_STATUS(import_external(dir, "weights.bin", "12", "12", &module), DATA_LOSS,
                     "external data [offset 12, length 12] runs past the end of \"weights.bin\" "
                     "(20 bytes)");
  KILN_ASSERT_STATUS(import_external(dir, "weights.bin", "24", NULL, &module), DATA_LOSS,
                     "external data offset 24 is beyond the end of \"weights.bin\" (20 bytes)");
  KILN_ASSERT_STATUS(import_external(dir, "weights.bin", "0", "8", &module), DATA_LOSS,
                     "external data in \"weights.bin\" has 8 bytes; the tensor needs 12");
  KILN_ASSERT_STATUS(import_external(dir, "weights.bin", "-4", "12", &module), INVALID_ARGUMENT,
                     "external data offset \"-4\" is not a non-negative integer");
  KILN_ASSERT_STATUS(import_external(dir, "nothere.bin", NULL, NULL, &module), NOT_FOUND,
                     "model.onnx: initializer 0: tensor \"w\": external data file "
                     "\"nothere.bin\" cannot be opened");
  KILN_ASSERT_STATUS(import_external(dir, "", NULL, NULL, &module), INVALID_ARGUMENT,
                     "has external data without a location");
  char *sub = kiln_test_path_join(dir, "sub");
  assert_int_equal(mkdir(sub, 0700), 0);
  KILN_ASSERT_STATUS(import_external(dir, "sub", NULL, NULL, &module), INVALID_ARGUMENT,
                     "external data location \"sub\" is not a regular file");
  rmdir(sub);
  free(sub);
  free(weights);
  kiln_test_remove_dir(dir);
  free(dir);
}

static void test_external_data_confined(void **state) {
  (void)state;
  char *parent = kiln_test_make_temp_dir();
  char *dir = kiln_test_path_join(parent, "model");
  assert_int_equal(mkdir(dir, 0700), 0);
  float data[3] = {1, 2, 3};
  char *secret = kiln_test_path_join(parent, "secret.bin");
  kiln_test_write_file(secret, data, sizeof(data));
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(import_external(dir, "../secret.bin", NULL, NULL, &module), INVALID_ARGUMENT,
                     "external data location \"../secret.bin\" has a \"..\" component; it must "
                     "stay in the model's folder");
  KILN_ASSERT_STATUS(import_external(dir, "sub/../../secret.bin", NULL, NULL, &module),
                     INVALID_ARGUMENT, "has a \"..\" component");
  KILN_ASSERT_STATUS(import_external(dir, "..\\secret.bin", NULL, NULL, &module), INVALID_ARGUMENT,
                     "has a \"..\" component");
  KILN_ASSERT_STATUS(import_external(dir, secret, NULL, NULL, &module), INVALID_ARGUMENT,
                     "is an absolute path; it must be relative to the model's folder");
  /* A link inside the folder that leads out of it. */
  char *link = kiln_test_path_join(dir, "link.bin");
  assert_int_equal(symlink(secret, link), 0);
  KILN_ASSERT_STATUS(import_external(dir, "link.bin", NULL, NULL, &module), INVALID_ARGUMENT,
                     "external data location \"link.bin\" resolves to");
  /* Imported from a buffer there is no folder at all. */
  ob_t ob;
  ob_init(&ob, 13);
  ob_initializer(&ob, external_tensor(&ob, "w.bin", NULL, NULL));
  ob_node(&ob, "Identity", "id", "w", "y");
  ob_output(&ob, "y", OB_FLOAT, 0, NULL);
  KILN_ASSERT_STATUS(ob_import(&ob, NULL, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "has external data (\"w.bin\") but the model was not read from a folder");
  ob_free(&ob);
  unlink(link);
  free(link);
  kiln_test_remove_dir(dir);
  free(dir);
  free(secret);
  kiln_test_remove_dir(parent);
  free(parent);
}

static void test_tensor_read_file(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  Onnx__TensorProto *proto = ob_tensor_i64(&ob, "t", 2, OB_DIMS(2, 1), OB_I64(5, -6));
  size_t size = onnx__tensor_proto__get_packed_size(proto);
  uint8_t *bytes = ob_alloc(&ob, size);
  onnx__tensor_proto__pack(proto, bytes);
  char *dir = kiln_test_make_temp_dir();
  char *path = kiln_test_path_join(dir, "input_0.pb");
  kiln_test_write_file(path, bytes, size);
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_onnx_tensor_read_file(path, kiln_allocator_system(), &tensor));
  om_assert_i64(tensor, OB_I64(5, -6), 2);
  assert_int_equal(kiln_tensor_shape(tensor)[0], 2);
  kiln_tensor_release(tensor);
  kiln_test_write_file(path, bytes, size - 1);
  KILN_ASSERT_STATUS(kiln_onnx_tensor_read_file(path, kiln_allocator_system(), &tensor), DATA_LOSS,
                     "input_0.pb: ");
  free(path);
  kiln_test_remove_dir(dir);
  free(dir);
  ob_free(&ob);
}

/* ---- allocation failures ---- */

static kiln_status_t parse_scenario(kiln_allocator_t allocator, void *context) {
  const Onnx__TensorProto *proto = context;
  size_t size = onnx__tensor_proto__get_packed_size(proto);
  uint8_t *bytes = malloc(size);
  onnx__tensor_proto__pack(proto, bytes);
  kiln_tensor_t *tensor = NULL;
  kiln_status_t status = kiln_onnx_tensor_parse("s.pb", bytes, size, NULL, allocator, &tensor);
  free(bytes);
  kiln_tensor_release(tensor);
  return status;
}

static void test_allocation_failures(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  const float raw[4] = {1, 2, 3, 4};
  assert_true(kiln_test_sweep_allocation_failures(
                  parse_scenario,
                  ob_tensor_raw(&ob, "r", OB_FLOAT, 2, OB_DIMS(2, 2), raw, sizeof(raw))) >= 3);
  assert_true(kiln_test_sweep_allocation_failures(
                  parse_scenario, ob_tensor_i64(&ob, "i", 1, OB_DIMS(3), OB_I64(1, 2, 3))) >= 3);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_raw_data_every_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_typed_fields, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_tensor, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_tensors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_initializer_forms_in_a_model, setup, teardown),
      cmocka_unit_test_setup_teardown(test_external_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_external_data_confined, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tensor_read_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
