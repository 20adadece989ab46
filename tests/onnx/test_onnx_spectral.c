/*
 * STFT and MelWeightMatrix (onnx_ops_misc.c) on the interpreter with their
 * scalar inputs given at run time, as the conformance runner feeds them:
 * STFT without a window (frame_length given) and with one (frame_length
 * omitted: the window's length), its type at import (the frame count
 * anonymous); MelWeightMatrix whose shape comes from its values, and the
 * same with every input bound, which folds at import to a Constant of the
 * concrete type; a run-time error naming the node; the converters'
 * errors. Expected numbers worked out by hand (test_transform_spectral.c
 * derives them).
 */
#include "onnx_run.h"

static kiln_tensor_t *signal_1234(void) {
  return or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 4, 1), OR_D(1, 2, 3, 4));
}

static kiln_tensor_t *i64(double value) {
  return or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(value));
}

/* Frames of 2 every 2 samples, twosided: [3, -1] and [7, -1]. */
static void test_stft_frame_length_at_run_time(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {signal_1234(), i64(2), i64(2)};
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 17, "STFT", "a,b,,c", 3, values);
  ob_attr_int(&ob, node, "onesided", 0);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 3, values, &run);
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(om_main(run.module)->body->checked_type, text),
                      "Tensor[(1, ?, ?, 2), float32]");
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 2, 2),
            OR_D(3, 0, -1, 0, 7, 0, -1, 0), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  or_release(3, values);
}

/* A window [1, 0.5] of frames 2 long (frame_length omitted), onesided:
 * [1, 1] -> [2, 0], [3, 2] -> [5, 1]. */
static void test_stft_with_window(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {signal_1234(), i64(2),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 0.5))};
  ob_t ob;
  or_start(&ob, 17, "STFT", "a,b,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 3, values, &run);
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(om_main(run.module)->body->checked_type, text),
                      "Tensor[(1, ?, 2, 2), float32]");
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 2, 2),
            OR_D(2, 0, 0, 0, 5, 0, 1, 0), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  or_release(3, values);
}

static void test_stft_errors(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {signal_1234(), i64(0), i64(2)};
  ob_t ob;
  or_start(&ob, 17, "STFT", "a,b,,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  kiln_onnx_import_options_t options = {.num_input_values = 3, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, &options, kiln_allocator_system(), &module));
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_STATUS(
      kiln_interp_run(module, "main", 3, values, kiln_allocator_system(), &count, &outputs),
      INVALID_ARGUMENT, "= stft: stft: frame_step is 0; expected a count in [1, 2147483647]");
  kiln_module_destroy(module);
  ob_free(&ob);
  /* A float frame_step is refused at import, naming the node. */
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(2));
  or_start(&ob, 17, "STFT", "a,b,,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (STFT): stft: frame_step (input 1) must be one signed integer "
                     "value");
  ob_free(&ob);
  or_release(3, values);
}

/* 3 filters, dft_length 8, 1000 Hz, 0 to 500 Hz: the identity's 3 columns
 * over the first 3 of 5 bins. */
static kiln_tensor_t *mel_values[5];

static void mel_model(ob_t *ob, int64_t elem_type) {
  mel_values[0] = or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(3));
  mel_values[1] = or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(8));
  mel_values[2] = or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(1000));
  mel_values[3] = or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0));
  mel_values[4] = or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(500));
  Onnx__NodeProto *node = or_start(ob, 17, "MelWeightMatrix", "a,b,c,d,e", 5, mel_values);
  ob_attr_int(ob, node, "output_datatype", elem_type);
  or_output(ob, "y", KILN_DTYPE_FLOAT64);
}

static const double mel_expected[15] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};

static void test_mel_weight_matrix(void **state) {
  (void)state;
  ob_t ob;
  mel_model(&ob, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE);
  or_run_t run;
  or_run(&ob, 5, mel_values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT64, 2, OB_DIMS(5, 3), mel_expected, 1e-12);
  or_run_free(&run);
  kiln_module_t *module = ob_import_folded(&ob, 5, mel_values);
  const kiln_tensor_t *folded = om_folded(module);
  or_assert(folded, KILN_DTYPE_FLOAT64, 2, OB_DIMS(5, 3), mel_expected, 1e-12);
  kiln_module_destroy(module);
  ob_free(&ob);
  or_release(5, mel_values);
}

static void test_mel_weight_matrix_errors(void **state) {
  (void)state;
  ob_t ob;
  mel_model(&ob, ONNX__TENSOR_PROTO__DATA_TYPE__STRING);
  KILN_ASSERT_STATUS(or_import_plain(&ob), UNIMPLEMENTED,
                     "node \"n\" (MelWeightMatrix): attribute output_datatype");
  ob_free(&ob);
  or_release(5, mel_values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stft_frame_length_at_run_time, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stft_with_window, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stft_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mel_weight_matrix, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mel_weight_matrix_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
