/*
 * Tests of the backend-test case loader and the comparison (onnx_case.h) on
 * cases written here into a temporary folder, so they run without
 * libonnx-testdata: inputs and outputs read in order, symbolic dims and
 * must-be-constant inputs fed from the inputs (READ), the conformance mode
 * that tells the import nothing about the inputs (AT_RUN), the type check,
 * the folded path (BOUND), ONNX's tolerance rule, and the errors; sequence
 * and optional values read from SequenceProto and OptionalProto files.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/onnx/onnx_case.h"
#include "kiln_test.h"
#include "onnx_builder.h"
#include "onnx_data.pb-c.h"

/* `message` serialized as file `name` of `dir`. */
static void write_message(const char *dir, const char *name, const ProtobufCMessage *message) {
  size_t size = protobuf_c_message_get_packed_size(message);
  uint8_t *bytes = malloc(size ? size : 1);
  protobuf_c_message_pack(message, bytes);
  char *path = kiln_test_path_join(dir, name);
  kiln_test_write_file(path, bytes, size);
  free(path);
  free(bytes);
}

static void write_tensor(const char *dir, const char *name, const Onnx__TensorProto *proto) {
  write_message(dir, name, &proto->base);
}

/* A new case folder: `ob`'s model as model.onnx, and the `count` tensors
 * under `files` ("input_0.pb", ...) in test_data_set_0. */
static char *save_case(ob_t *ob, int count, const char *const *files,
                       Onnx__TensorProto *const *tensors) {
  char *dir = kiln_test_make_temp_dir();
  size_t size = 0;
  uint8_t *bytes = ob_pack(ob, &size);
  char *model = kiln_test_path_join(dir, "model.onnx");
  kiln_test_write_file(model, bytes, size);
  free(model);
  char *data = kiln_test_path_join(dir, "test_data_set_0");
  assert_int_equal(mkdir(data, 0700), 0);
  for (int i = 0; i < count; ++i) {
    write_tensor(data, files[i], tensors[i]);
  }
  free(data);
  return dir;
}

/* case/model.onnx: y = Reshape(x, shape) * 2, x (N, 4) symbolic, shape an
 * input; test_data_set_0 with x (2, 4), shape (4, 2) and y. */
static char *write_case(const float *expected) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(OB_SYMBOLIC, 4));
  ob_input(&ob, "shape", OB_INT64, 1, OB_DIMS(2));
  ob_init_f32(&ob, "two", 0, NULL, OB_F32(2));
  ob_node(&ob, "Reshape", "r", "x,shape", "t");
  ob_node(&ob, "Mul", "m", "t,two", "y");
  ob_output(&ob, "y", OB_FLOAT, 2, OB_DIMS(OB_SYMBOLIC, 2));
  static const char *const files[] = {"input_0.pb", "input_1.pb", "output_0.pb"};
  Onnx__TensorProto *tensors[] = {
      ob_tensor_f32(&ob, "x", 2, OB_DIMS(2, 4), OB_F32(0, 1, 2, 3, 4, 5, 6, 7)),
      ob_tensor_i64(&ob, "shape", 1, OB_DIMS(2), OB_I64(4, 2)),
      ob_tensor_f32(&ob, "y", 2, OB_DIMS(4, 2), expected)};
  char *dir = save_case(&ob, 3, files, tensors);
  ob_free(&ob);
  return dir;
}

/* case/model.onnx: y = NonZero(x), x (4,); test_data_set_0 with x = 0, 3,
 * 0, 5 and y (1, 2) = 1, 3. */
static char *write_nonzero_case(void) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 1, OB_DIMS(4));
  ob_node(&ob, "NonZero", "n", "x", "y");
  ob_output(&ob, "y", OB_INT64, 2, OB_DIMS(1, OB_SYMBOLIC));
  static const char *const files[] = {"input_0.pb", "output_0.pb"};
  Onnx__TensorProto *tensors[] = {ob_tensor_f32(&ob, "x", 1, OB_DIMS(4), OB_F32(0, 3, 0, 5)),
                                  ob_tensor_i64(&ob, "y", 2, OB_DIMS(1, 2), OB_I64(1, 3))};
  char *dir = save_case(&ob, 2, files, tensors);
  ob_free(&ob);
  return dir;
}

static void remove_case(char *dir) {
  char *data = kiln_test_path_join(dir, "test_data_set_0");
  kiln_test_remove_dir(data);
  free(data);
  kiln_test_remove_dir(dir);
  free(dir);
}

static void test_load_case(void **state) {
  (void)state;
  char *dir = write_case(OB_F32(0, 2, 4, 6, 8, 10, 12, 14));
  kiln_onnx_case_t onnx_case;
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_READ, kiln_allocator_system(), &onnx_case));
  assert_int_equal(onnx_case.num_inputs, 2);
  assert_int_equal(onnx_case.num_outputs, 1);
  kiln_function_t *main = om_main(onnx_case.module);
  assert_int_equal(main->num_params, 2);
  om_assert_type(main->params[0]->type_annotation, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 4));
  om_assert_type(main->ret_type, KILN_DTYPE_FLOAT32, 2, OB_DIMS(4, 2));
  assert_int_equal(om_count_calls(onnx_case.module, &kiln_op_reshape), 1);
  KILN_ASSERT_OK(kiln_onnx_case_check_types(&onnx_case));
  KILN_ASSERT_STATUS(kiln_onnx_case_check_folded(&onnx_case), UNIMPLEMENTED,
                     "output 0 did not fold to a constant");
  kiln_onnx_case_deinitialize(&onnx_case);
  assert_null(onnx_case.module);

  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_BOUND, kiln_allocator_system(), &onnx_case));
  assert_int_equal(om_main(onnx_case.module)->num_params, 0);
  KILN_ASSERT_OK(kiln_onnx_case_check_folded(&onnx_case));
  kiln_onnx_case_deinitialize(&onnx_case);
  remove_case(dir);
}

/* case/model.onnx: y = x * 2, x (dim0, 4) (dim0 2 or OB_SYMBOLIC, the
 * dim_param N); test_data_set_0 with x and y (2, 4). */
static char *write_mul_case(int64_t dim0) {
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", OB_FLOAT, 2, OB_DIMS(dim0, 4));
  ob_init_f32(&ob, "two", 0, NULL, OB_F32(2));
  ob_node(&ob, "Mul", "m", "x,two", "y");
  ob_output(&ob, "y", OB_FLOAT, 2, OB_DIMS(dim0, 4));
  static const char *const files[] = {"input_0.pb", "output_0.pb"};
  Onnx__TensorProto *tensors[] = {
      ob_tensor_f32(&ob, "x", 2, OB_DIMS(2, 4), OB_F32(0, 1, 2, 3, 4, 5, 6, 7)),
      ob_tensor_f32(&ob, "y", 2, OB_DIMS(2, 4), OB_F32(0, 2, 4, 6, 8, 10, 12, 14))};
  char *dir = save_case(&ob, 2, files, tensors);
  ob_free(&ob);
  return dir;
}

/* AT_RUN, the conformance mode: the import is told nothing about the
 * inputs. A value-dependent output (NonZero) that READ computes at import
 * is refused; a symbolic dim READ takes from the input stays symbolic; a
 * model that needs neither keeps its calls, to be run on the inputs. */
static void test_load_at_run(void **state) {
  (void)state;
  kiln_onnx_case_t onnx_case;
  char *dir = write_nonzero_case();
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_READ, kiln_allocator_system(), &onnx_case));
  KILN_ASSERT_OK(kiln_onnx_case_check_folded(&onnx_case));
  kiln_onnx_case_deinitialize(&onnx_case);
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, kiln_allocator_system(), &onnx_case));
  assert_int_equal(om_count_calls(onnx_case.module, &kiln_op_nonzero), 1); /* counts at run time */
  kiln_onnx_case_deinitialize(&onnx_case);
  remove_case(dir);

  /* The dim_param N stays symbolic past the inputs; Reshape's converter,
   * which needs static shapes, then refuses it, naming the node. */
  dir = write_case(OB_F32(0, 2, 4, 6, 8, 10, 12, 14));
  KILN_ASSERT_STATUS(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, kiln_allocator_system(), &onnx_case),
      UNIMPLEMENTED, "node \"r\" (Reshape): input 0 has the symbolic dim N (dim 0)");
  assert_null(onnx_case.module);
  remove_case(dir);

  /* A model whose operators take symbolic dims keeps N: the interpreter
   * runs it at the inputs' size (the graph compiler refuses it). */
  dir = write_mul_case(OB_SYMBOLIC);
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, kiln_allocator_system(), &onnx_case));
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(om_main(onnx_case.module)->params[0]->type_annotation, text),
                      "Tensor[(N, 4), float32]");
  assert_string_equal(kiln_type_text(om_main(onnx_case.module)->ret_type, text),
                      "Tensor[(N, 4), float32]");
  assert_int_equal(om_count_calls(onnx_case.module, &kiln_op_multiply), 1);
  kiln_onnx_case_deinitialize(&onnx_case);
  remove_case(dir);

  dir = write_mul_case(2);
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, kiln_allocator_system(), &onnx_case));
  kiln_function_t *main = om_main(onnx_case.module);
  assert_int_equal(main->num_params, 1);
  om_assert_type(main->params[0]->type_annotation, KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 4));
  assert_int_equal(om_count_calls(onnx_case.module, &kiln_op_multiply), 1);
  KILN_ASSERT_OK(kiln_onnx_case_check_types(&onnx_case));
  KILN_ASSERT_STATUS(kiln_onnx_case_check_folded(&onnx_case), UNIMPLEMENTED,
                     "output 0 did not fold to a constant");
  kiln_onnx_case_deinitialize(&onnx_case);
  remove_case(dir);
}

static void test_folded_mismatch(void **state) {
  (void)state;
  char *dir = write_case(OB_F32(0, 2, 4, 6, 8, 10, 12, 15));
  kiln_onnx_case_t onnx_case;
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_BOUND, kiln_allocator_system(), &onnx_case));
  KILN_ASSERT_STATUS(kiln_onnx_case_check_folded(&onnx_case), OUT_OF_RANGE,
                     "output 0: 1 of 8 elements differ; the first is element 7: 14, expected 15");
  kiln_onnx_case_deinitialize(&onnx_case);
  remove_case(dir);
}

static void test_case_errors(void **state) {
  (void)state;
  kiln_onnx_case_t onnx_case;
  char *dir = kiln_test_make_temp_dir();
  KILN_ASSERT_STATUS(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_READ, kiln_allocator_system(), &onnx_case),
      NOT_FOUND, "model.onnx: cannot open");
  assert_null(onnx_case.module);
  kiln_onnx_case_deinitialize(&onnx_case);
  remove_case(dir);

  /* An input file that does not parse: the import (without values) then
   * decides; here it fails on the symbolic dim the values would have given. */
  dir = write_case(OB_F32(0, 2, 4, 6, 8, 10, 12, 14));
  char *input = kiln_test_path_join(dir, "test_data_set_0/input_0.pb");
  kiln_test_write_file(input, "\x0a", 1);
  KILN_ASSERT_STATUS(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_READ, kiln_allocator_system(), &onnx_case),
      INVALID_ARGUMENT, "input \"x\" has a symbolic dimension \"N\" (dim 0)");
  free(input);
  remove_case(dir);

  /* The wrong expected type is caught by the type check. */
  dir = write_case(OB_F32(0, 2, 4, 6, 8, 10, 12, 14));
  char *output = kiln_test_path_join(dir, "test_data_set_0/output_0.pb");
  ob_t ob;
  ob_init(&ob, 13);
  Onnx__TensorProto *wrong = ob_tensor_i64(&ob, "y", 1, OB_DIMS(2), OB_I64(1, 2));
  size_t size = onnx__tensor_proto__get_packed_size(wrong);
  uint8_t *bytes = ob_alloc(&ob, size);
  onnx__tensor_proto__pack(wrong, bytes);
  kiln_test_write_file(output, bytes, size);
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_READ, kiln_allocator_system(), &onnx_case));
  KILN_ASSERT_STATUS(kiln_onnx_case_check_types(&onnx_case), INVALID_ARGUMENT,
                     "output 0 is (4, 2) float32; expected (2,) int64");
  kiln_onnx_case_deinitialize(&onnx_case);
  ob_free(&ob);
  free(output);
  remove_case(dir);
}

/* ---- comparison ---- */

static kiln_tensor_t *f32(int64_t count, const float *values) {
  return om_tensor_f32(1, OB_DIMS(count), values);
}

static void test_compare(void **state) {
  (void)state;
  kiln_tensor_t *expected = f32(4, OB_F32(1, -1000, NAN, INFINITY));
  kiln_tensor_t *close = f32(4, OB_F32(1.0009f, -1000.9f, NAN, INFINITY));
  kiln_tensor_t *far = f32(4, OB_F32(1.0011f, -1001.1f, 0, -INFINITY));
  KILN_ASSERT_OK(kiln_onnx_compare(expected, close, 1e-3, 1e-7));
  KILN_ASSERT_STATUS(kiln_onnx_compare(expected, far, 1e-3, 1e-7), OUT_OF_RANGE,
                     "4 of 4 elements differ; the first is element 0: 1.00109994, expected 1 "
                     "(rtol 0.001, atol 1e-07)");
  /* atol covers values near zero */
  kiln_tensor_t *zero = f32(1, OB_F32(0));
  kiln_tensor_t *tiny = f32(1, OB_F32(5e-8f));
  KILN_ASSERT_OK(kiln_onnx_compare(zero, tiny, 1e-3, 1e-7));
  KILN_ASSERT_STATUS(kiln_onnx_compare(tiny, zero, 0, 1e-9), OUT_OF_RANGE,
                     "element 0: 0, expected 5.00000006e-08");
  kiln_tensor_t *longer = f32(5, OB_F32(1, 2, 3, 4, 5));
  KILN_ASSERT_STATUS(kiln_onnx_compare(expected, longer, 1e-3, 1e-7), INVALID_ARGUMENT,
                     "the result is (5,) float32; expected (4,) float32");
  kiln_tensor_t *ints = NULL;
  const int64_t values[4] = {1, 2, 3, 4};
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 1, OB_DIMS(4),
                                         values, sizeof(values), &ints));
  KILN_ASSERT_STATUS(kiln_onnx_compare(expected, ints, 1e-3, 1e-7), INVALID_ARGUMENT,
                     "the result is (4,) int64; expected (4,) float32");
  KILN_ASSERT_OK(kiln_onnx_compare(ints, ints, 0, 0));
  kiln_tensor_t *tensors[] = {expected, close, far, zero, tiny, longer, ints};
  for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* ---- sequences and optionals ---- */

/* A ValueInfo of a sequence of float tensors of unknown shape. */
static Onnx__ValueInfoProto *sequence_info(ob_t *ob, const char *name) {
  Onnx__ValueInfoProto *info = ob_value_info(ob, name, OB_FLOAT, 0, NULL);
  Onnx__TypeProto *element = info->type;
  Onnx__TypeProto *type = ob_alloc(ob, sizeof(*type));
  onnx__type_proto__init(type);
  Onnx__TypeProto__Sequence *sequence = ob_alloc(ob, sizeof(*sequence));
  onnx__type_proto__sequence__init(sequence);
  sequence->elem_type = element;
  type->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  type->sequence_type = sequence;
  info->type = type;
  return info;
}

static Onnx__SequenceProto *sequence_of(ob_t *ob, size_t count, Onnx__TensorProto **tensors) {
  Onnx__SequenceProto *sequence = ob_alloc(ob, sizeof(*sequence));
  onnx__sequence_proto__init(sequence);
  sequence->has_elem_type = 1;
  sequence->elem_type = 1;
  sequence->n_tensor_values = count;
  sequence->tensor_values = tensors;
  return sequence;
}

/* case: out = SequenceInsert(seq, t); seq holds (1, 2) and (3,), t is (4). */
static char *write_sequence_case(ob_t *ob) {
  ob_init(ob, 13);
  ob->inputs[ob->graph.n_input++] = sequence_info(ob, "seq");
  ob_input(ob, "t", OB_FLOAT, 1, OB_DIMS(1));
  ob_node(ob, "SequenceInsert", "insert", "seq,t", "out");
  ob->outputs[ob->graph.n_output++] = sequence_info(ob, "out");
  static const char *const files[] = {"input_1.pb"};
  Onnx__TensorProto *t[] = {ob_tensor_f32(ob, "t", 1, OB_DIMS(1), OB_F32(4))};
  char *dir = save_case(ob, 1, files, t);
  Onnx__TensorProto **in = ob_alloc(ob, sizeof(*in) * 2);
  in[0] = ob_tensor_f32(ob, "", 1, OB_DIMS(2), OB_F32(1, 2));
  in[1] = ob_tensor_f32(ob, "", 1, OB_DIMS(1), OB_F32(3));
  Onnx__TensorProto **out = ob_alloc(ob, sizeof(*out) * 3);
  memcpy(out, in, sizeof(*in) * 2);
  out[2] = t[0];
  char *data = kiln_test_path_join(dir, "test_data_set_0");
  write_message(data, "input_0.pb", &sequence_of(ob, 2, in)->base);
  write_message(data, "output_0.pb", &sequence_of(ob, 3, out)->base);
  free(data);
  return dir;
}

static void test_sequence_case(void **state) {
  (void)state;
  ob_t ob;
  char *dir = write_sequence_case(&ob);
  kiln_onnx_case_t onnx_case;
  KILN_ASSERT_OK(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, kiln_allocator_system(), &onnx_case));
  assert_true(onnx_case.has_values);
  assert_int_equal(onnx_case.num_inputs, 2);
  assert_null(onnx_case.inputs[0]);
  assert_non_null(onnx_case.inputs[1]);
  assert_int_equal(onnx_case.input_values[0].kind, KILN_ONNX_VALUE_SEQUENCE);
  assert_int_equal(onnx_case.input_values[0].count, 2);
  assert_int_equal(kiln_tensor_shape(onnx_case.input_values[0].elements[0].tensor)[0], 2);
  assert_int_equal(onnx_case.output_values[0].count, 3);
  KILN_ASSERT_OK(kiln_onnx_case_check_types(&onnx_case));
  KILN_ASSERT_OK(kiln_onnx_value_compare(&onnx_case.output_values[0], &onnx_case.output_values[0],
                                         1e-3, 1e-7));
  KILN_ASSERT_STATUS(
      kiln_onnx_value_compare(&onnx_case.output_values[0], &onnx_case.input_values[0], 1e-3, 1e-7),
      INVALID_ARGUMENT, "the result has 2 elements; expected 3");
  KILN_ASSERT_STATUS(
      kiln_onnx_value_compare(&onnx_case.output_values[0], &onnx_case.input_values[1], 1e-3, 1e-7),
      INVALID_ARGUMENT, "the result is a tensor; expected a sequence");
  kiln_onnx_case_deinitialize(&onnx_case);
  KILN_ASSERT_STATUS(
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_READ, kiln_allocator_system(), &onnx_case),
      UNIMPLEMENTED, "an input is a sequence or an optional");
  remove_case(dir);
  ob_free(&ob);
}

static void test_optional_files(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 15);
  char *dir = kiln_test_make_temp_dir();
  Onnx__OptionalProto empty, full;
  onnx__optional_proto__init(&empty);
  empty.has_elem_type = 1;
  empty.elem_type = 0;
  onnx__optional_proto__init(&full);
  full.has_elem_type = 1;
  full.elem_type = 1;
  full.tensor_value = ob_tensor_f32(&ob, "", 1, OB_DIMS(2), OB_F32(5, 6));
  write_message(dir, "empty.pb", &empty.base);
  write_message(dir, "full.pb", &full.base);
  char *path = kiln_test_path_join(dir, "empty.pb");
  kiln_onnx_value_t value;
  KILN_ASSERT_OK(
      kiln_onnx_value_read_file(path, KILN_ONNX_VALUE_OPTIONAL, kiln_allocator_system(), &value));
  assert_int_equal(value.kind, KILN_ONNX_VALUE_OPTIONAL);
  assert_int_equal(value.count, 0);
  kiln_onnx_value_release(kiln_allocator_system(), &value);
  free(path);
  path = kiln_test_path_join(dir, "full.pb");
  KILN_ASSERT_OK(
      kiln_onnx_value_read_file(path, KILN_ONNX_VALUE_OPTIONAL, kiln_allocator_system(), &value));
  assert_int_equal(value.count, 1);
  assert_float_equal(((const float *)kiln_tensor_data(value.elements[0].tensor))[1], 6, 0);
  kiln_onnx_value_release(kiln_allocator_system(), &value);
  kiln_test_write_file(path, "\xff\xff\xff", 3);
  KILN_ASSERT_STATUS(
      kiln_onnx_value_read_file(path, KILN_ONNX_VALUE_SEQUENCE, kiln_allocator_system(), &value),
      DATA_LOSS, "full.pb");
  free(path);
  kiln_test_remove_dir(dir);
  free(dir);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_load_case, setup, teardown),
      cmocka_unit_test_setup_teardown(test_load_at_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_folded_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_case_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compare, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_case, setup, teardown),
      cmocka_unit_test_setup_teardown(test_optional_files, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
