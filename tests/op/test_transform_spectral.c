/*
 * Tests of stft and mel_weight_matrix (transform_spectral.c): attribute
 * defaults, every type-relation error, the types at import (the dims that
 * depend on values anonymous), the shape functions on values, the
 * reference kernels on transforms worked by hand, each run-time error,
 * and the compute rules' refusal.
 */
#include <math.h>
#include <string.h>

#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/compute.h"
#include "op/op.h"

static const kiln_type_t *i64_scalar(void) {
  return ttype(KILN_DTYPE_INT64, 0, NULL);
}

static kiln_tensor_t *i64_value(int64_t value) {
  return tensor_of(KILN_DTYPE_INT64, 0, NULL, &value);
}

static kiln_tensor_t *f32_value(float value) {
  return tensor_of(KILN_DTYPE_FLOAT32, 0, NULL, &value);
}

static void assert_type_text(const kiln_type_t *type, const char *expected) {
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(type, text), expected);
}

/* ---- stft ---- */

static void test_stft_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_stft;
  assert_defaults(op, "onesided=True");
  const void *onesided = ATTRS(op, "onesided", "True");
  const kiln_type_t *signal = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 64, 1));
  const kiln_type_t *window = ttype(KILN_DTYPE_FLOAT32, 1, SHAPE(16));
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, onesided, &out, signal, i64_scalar(), i64_scalar()));
  assert_type_text(out, "Tensor[(2, ?, ?, 2), float32]");
  KILN_ASSERT_OK(INFER(op, onesided, &out, signal, i64_scalar(), i64_scalar(), window));
  assert_type_text(out, "Tensor[(2, ?, 9, 2), float32]");
  const void *twosided = ATTRS(op, "onesided", "False");
  KILN_ASSERT_OK(INFER(op, twosided, &out, signal, i64_scalar(), i64_scalar(), window));
  assert_type_text(out, "Tensor[(2, ?, 16, 2), float32]");
  const kiln_type_t *complex = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 64, 2));
  KILN_ASSERT_OK(INFER(op, twosided, &out, complex, i64_scalar(), i64_scalar()));
  KILN_ASSERT_STATUS(INFER(op, onesided, &out, complex, i64_scalar(), i64_scalar()),
                     INVALID_ARGUMENT, "stft: onesided takes a real signal");
  KILN_ASSERT_STATUS(INFER(op, onesided, &out, ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(64, 1)),
                           i64_scalar(), i64_scalar()),
                     INVALID_ARGUMENT,
                     "stft: signal Tensor[(64, 1), float32] must be (batch, length, 1 or 2)");
  KILN_ASSERT_STATUS(INFER(op, onesided, &out, ttype(KILN_DTYPE_INT32, 3, SHAPE(1, 8, 1)),
                           i64_scalar(), i64_scalar()),
                     INVALID_ARGUMENT, "stft: signal is int32; expected float32 or float64");
  KILN_ASSERT_STATUS(
      INFER(op, onesided, &out, signal, ttype(KILN_DTYPE_FLOAT32, 0, NULL), i64_scalar()),
      INVALID_ARGUMENT,
      "stft: frame_step (input 1) must be one signed integer value, not "
      "Tensor[(), float32]");
  KILN_ASSERT_STATUS(
      INFER(op, onesided, &out, signal, i64_scalar(), ttype(KILN_DTYPE_INT64, 1, SHAPE(2))),
      INVALID_ARGUMENT, "stft: frame_length (input 2) must be one signed integer");
  KILN_ASSERT_STATUS(
      INFER(op, onesided, &out, signal, i64_scalar(), i64_scalar(),
            ttype(KILN_DTYPE_FLOAT64, 1, SHAPE(16))),
      INVALID_ARGUMENT,
      "stft: window Tensor[(16), float64] must be 1-D of the signal's dtype float32");
}

/* Runs stft on the signal through its shape function and kernel, taking
 * the window (may be NULL). */
static kiln_status_t run_stft(const void *attrs, const float *signal, int64_t length, int64_t step,
                              int64_t frame_length, kiln_tensor_t *window, kiln_tensor_t **out) {
  kiln_tensor_t *inputs[4] = {tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(1, length, 1), signal),
                              i64_value(step), i64_value(frame_length), window};
  kiln_shape_func_args_t args = {&kiln_op_stft,
                                 attrs ? attrs : ATTRS(&kiln_op_stft, "onesided", "True"),
                                 window ? 4 : 3, inputs, &kiln_op_test_arena};
  const kiln_type_t *type = NULL;
  kiln_status_t status = kiln_op_stft.shape_func(&args, &type);
  *out = NULL;
  if (status == NULL) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), t->dtype, t->ndim, t->shape, out));
    kiln_kernel_args_t kernel = {&kiln_op_stft, args.attrs, args.num_inputs, inputs, 1, out};
    status = kiln_op_reference_get(kiln_op_stft.id)(&kernel);
  }
  for (int i = 0; i < 4; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  return status;
}

/* Frames of [1, 2, 3, 4] every 2 samples, 2 long: [1, 2] -> [3, -1] and
 * [3, 4] -> [7, -1]; weighed by [1, 0.5]: [1, 1] -> [2, 0], [3, 2] -> [5,
 * 1]; one frame of 4, onesided: [10, -2 + 2i, -2]; frame_length 0 takes the
 * window's length. */
static void test_stft_kernel(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_stft;
  const float signal[4] = {1, 2, 3, 4};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run_stft(NULL, signal, 4, 2, 2, NULL, &out));
  assert_int_equal(kiln_tensor_shape(out)[1], 2);
  assert_f32(out, (const double[]){3, 0, -1, 0, 7, 0, -1, 0}, 8);
  kiln_tensor_release(out);
  const float half[2] = {1, 0.5f};
  KILN_ASSERT_OK(
      run_stft(NULL, signal, 4, 2, 0, tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(2), half), &out));
  assert_f32(out, (const double[]){2, 0, 0, 0, 5, 0, 1, 0}, 8);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run_stft(NULL, signal, 4, 3, 4, NULL, &out));
  assert_f32(out, (const double[]){10, 0, -2, 2, -2, 0}, 6);
  kiln_tensor_release(out);
  KILN_ASSERT_OK(run_stft(ATTRS(op, "onesided", "False"), signal, 4, 1, 3, NULL, &out));
  assert_int_equal(kiln_tensor_shape(out)[1], 2);
  assert_int_equal(kiln_tensor_shape(out)[2], 3);
  kiln_tensor_release(out);
}

static void test_stft_errors(void **state) {
  (void)state;
  const float signal[4] = {1, 2, 3, 4};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_STATUS(run_stft(NULL, signal, 4, 0, 2, NULL, &out), INVALID_ARGUMENT,
                     "stft: frame_step is 0; expected a count in [1, 2147483647]");
  KILN_ASSERT_STATUS(run_stft(NULL, signal, 4, 1, 5, NULL, &out), INVALID_ARGUMENT,
                     "stft: frame_length 5 is not in [1, 4] (the signal's length)");
  KILN_ASSERT_STATUS(run_stft(NULL, signal, 4, 1, -1, NULL, &out), INVALID_ARGUMENT,
                     "stft: frame_length is -1; expected a count in [0, 2147483647]");
  const float three[3] = {1, 1, 1};
  KILN_ASSERT_STATUS(
      run_stft(NULL, signal, 4, 1, 2, tensor_of(KILN_DTYPE_FLOAT32, 1, SHAPE(3), three), &out),
      INVALID_ARGUMENT, "stft: the window has 3 samples but frame_length is 2");
  /* An output of another shape than the values give. */
  kiln_tensor_t *inputs[3] = {tensor_of(KILN_DTYPE_FLOAT32, 3, SHAPE(1, 4, 1), signal),
                              i64_value(2), i64_value(2)};
  out = tensor_zeros(KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, 2, 2));
  kiln_kernel_args_t kernel = {
      &kiln_op_stft, ATTRS(&kiln_op_stft, "onesided", "True"), 3, inputs, 1, &out};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_stft.id)(&kernel), INVALID_ARGUMENT,
                     "stft: the inputs give a float32 output (1, 2, 2, 2), not float32 (1, 3, 2, "
                     "2)");
  kiln_tensor_release(out);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

/* ---- mel_weight_matrix ---- */

static void test_mel_types(void **state) {
  (void)state;
  const kiln_op_t *op = &kiln_op_mel_weight_matrix;
  assert_defaults(op, "dtype=\"float32\"");
  const void *f32_out = ATTRS(op, "dtype", "\"float32\"");
  const kiln_type_t *i32 = ttype(KILN_DTYPE_INT32, 0, NULL);
  const kiln_type_t *f32 = ttype(KILN_DTYPE_FLOAT32, 0, NULL);
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(INFER(op, f32_out, &out, i32, i32, i32, f32, f32));
  assert_type_text(out, "Tensor[(?, ?), float32]");
  KILN_ASSERT_OK(INFER(op, ATTRS(op, "dtype", "\"float64\""), &out, i32, i32, i32, f32, f32));
  assert_type_text(out, "Tensor[(?, ?), float64]");
  KILN_ASSERT_STATUS(INFER(op, f32_out, &out, f32, i32, i32, f32, f32), INVALID_ARGUMENT,
                     "mel_weight_matrix: num_mel_bins (input 0) must be one signed integer value");
  KILN_ASSERT_STATUS(INFER(op, f32_out, &out, i32, i32, i32, f32, i32), INVALID_ARGUMENT,
                     "mel_weight_matrix: upper_edge_hertz (input 4) must be one float value");
}

/* Runs mel_weight_matrix on the values through its shape function. */
static kiln_status_t run_mel(int32_t mel_bins, int32_t dft_length, int32_t sample_rate, float lower,
                             float upper, kiln_tensor_t **out) {
  kiln_tensor_t *inputs[5] = {tensor_of(KILN_DTYPE_INT32, 0, NULL, &mel_bins),
                              tensor_of(KILN_DTYPE_INT32, 0, NULL, &dft_length),
                              tensor_of(KILN_DTYPE_INT32, 0, NULL, &sample_rate), f32_value(lower),
                              f32_value(upper)};
  const kiln_op_t *op = &kiln_op_mel_weight_matrix;
  kiln_shape_func_args_t args = {op, ATTRS(op, "dtype", "\"float32\""), 5, inputs,
                                 &kiln_op_test_arena};
  const kiln_type_t *type = NULL;
  kiln_status_t status = op->shape_func(&args, &type);
  *out = NULL;
  if (status == NULL) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(type);
    KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), t->dtype, t->ndim, t->shape, out));
    kiln_kernel_args_t kernel = {op, args.attrs, 5, inputs, 1, out};
    status = kiln_op_reference_get(op->id)(&kernel);
    if (status != NULL) { /* no output on an error */
      kiln_tensor_release(*out);
      *out = NULL;
    }
  }
  for (int i = 0; i < 5; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  return status;
}

/* 3 filters, dft_length 8 (5 bins), 1000 Hz, 0 to 500 Hz: mel(500) =
 * 2595 log10(1 + 500 / 700) = 607.45, steps of 607.45 / 5 = 121.49 mel;
 * the points 0, 121.5, 243.0, 364.5, 486.0 mel are 0, 79.7, 168.5, 267.4,
 * 377.5 Hz, bins floor(9 f / 1000) = 0, 0, 1, 2, 3. Filter 0 has its left
 * and center both at bin 0 (1 there), filter 1 peaks at bin 1, filter 2 at
 * bin 2, each falling to 0 at the next point. */
static void test_mel_kernel(void **state) {
  (void)state;
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run_mel(3, 8, 1000, 0.0f, 500.0f, &out));
  assert_int_equal(kiln_tensor_shape(out)[0], 5);
  assert_int_equal(kiln_tensor_shape(out)[1], 3);
  assert_f32(out, (const double[]){1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, 15);
  kiln_tensor_release(out);
  KILN_ASSERT_STATUS(run_mel(3, 8, 1000, 0.0f, 2000.0f, &out), INVALID_ARGUMENT,
                     "mel_weight_matrix: filter 1 reaches the spectrogram bin 5, outside the 5 "
                     "bins of dft_length 8");
  KILN_ASSERT_STATUS(run_mel(0, 8, 1000, 0.0f, 500.0f, &out), INVALID_ARGUMENT,
                     "mel_weight_matrix: num_mel_bins is 0; expected a count in [1, ");
  KILN_ASSERT_STATUS(run_mel(3, 8, 1000, 600.0f, 500.0f, &out), INVALID_ARGUMENT,
                     "mel_weight_matrix: the edges 600 and 500 hertz must be finite with 0 <= "
                     "lower <= upper");
}

static void test_compute_rules_refuse(void **state) {
  (void)state;
  const kiln_op_t *ops[2] = {&kiln_op_stft, &kiln_op_mel_weight_matrix};
  for (int i = 0; i < 2; ++i) {
    kiln_compute_args_t args = {.op = ops[i]};
    kiln_compute_result_t result;
    KILN_ASSERT_STATUS(kiln_op_compute_get(ops[i]->id)(&args, &result), UNIMPLEMENTED,
                       "its output's shape depends on its inputs' values");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stft_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stft_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stft_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mel_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mel_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_compute_rules_refuse, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
