/*
 * RNN, GRU and LSTM unrolled over the sequence, on the interpreter. The
 * models are scalar-sized (hidden 1, input 1, batch 1) so that the expected
 * values are ONNX's step formulas written out in the test: forward,
 * reverse and bidirectional directions (Y in time order, Y_h the last
 * state of each direction), layout 1, a chosen activation, GRU's
 * linear_before_reset both ways (they differ once there is a recurrent
 * bias), LSTM with peepholes and an initial cell state. The errors name the
 * node and what is refused.
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

static double sigmoid(double x) {
  return 1.0 / (1.0 + exp(-x));
}

/* A model of `op_type` over X (2, 1, 1) = (1, 2) [or (1, 2, 1) with layout
 * 1] and W, R, B given as initializers; outputs Y and Y_h. */
static Onnx__NodeProto *build(ob_t *ob, const char *op_type, int gates, int dirs, const float *w,
                              const float *r, const float *b, kiln_tensor_t *x) {
  ob_init(ob, 14);
  or_input(ob, "x", x);
  ob_init_f32(ob, "w", 3, OB_DIMS(dirs, gates, 1), w);
  ob_init_f32(ob, "r", 3, OB_DIMS(dirs, gates, 1), r);
  ob_init_f32(ob, "b", 2, OB_DIMS(dirs, 2 * gates), b);
  Onnx__NodeProto *node = ob_node(ob, op_type, "rec", "x,w,r,b", "y,y_h");
  ob_attr_int(ob, node, "hidden_size", 1);
  or_output(ob, "y", KILN_DTYPE_FLOAT32);
  or_output(ob, "y_h", KILN_DTYPE_FLOAT32);
  return node;
}

/* RNN with W 0.5, R 0.25, Wb 0.1, Rb 0.2: h_t = tanh(0.5 x_t + 0.25 h + 0.3). */
static void test_rnn_directions(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 1), OR_D(1, 2));
  double h1 = tanh(0.5 + 0.3), h2 = tanh(1.0 + 0.25 * h1 + 0.3);
  double g2 = tanh(1.0 + 0.3), g1 = tanh(0.5 + 0.25 * g2 + 0.3);
  const float w[2] = {0.5f, 0.5f}, r[2] = {0.25f, 0.25f}, b[4] = {0.1f, 0.2f, 0.1f, 0.2f};
  const char *directions[3] = {"forward", "reverse", "bidirectional"};
  for (int k = 0; k < 3; ++k) {
    ob_t ob;
    int dirs = k == 2 ? 2 : 1;
    Onnx__NodeProto *node = build(&ob, "RNN", 1, dirs, w, r, b, x);
    ob_attr_string(&ob, node, "direction", directions[k]);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_tanh), 2 * dirs);
    if (k == 0) {
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(2, 1, 1, 1), OR_D(h1, h2), 1e-6);
      or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(h2), 1e-6);
    } else if (k == 1) { /* time order, but the last state is the first step's */
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(2, 1, 1, 1), OR_D(g1, g2), 1e-6);
      or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(g1), 1e-6);
    } else {
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(2, 2, 1, 1), OR_D(h1, g1, h2, g2),
                1e-6);
      or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 1), OR_D(h2, g1), 1e-6);
    }
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* layout 1 (batch first) with Relu: h_t = relu(0.5 x_t - 0.25 h - 0.3). */
static void test_rnn_layout_and_activation(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 1), OR_D(1, 4));
  ob_t ob;
  Onnx__NodeProto *node =
      build(&ob, "RNN", 1, 1, OB_F32(0.5f), OB_F32(-0.25f), OB_F32(-0.1f, -0.2f), x);
  ob_attr_int(&ob, node, "layout", 1);
  Onnx__AttributeProto *names =
      ob_attr(&ob, node, "activations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  names->n_strings = 1;
  names->strings = ob_alloc(&ob, sizeof(ProtobufCBinaryData));
  names->strings[0].data = (uint8_t *)ob_strdup(&ob, "Relu");
  names->strings[0].len = 4;
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  double h1 = fmax(0.5 - 0.3, 0), h2 = fmax(2.0 - 0.25 * h1 - 0.3, 0);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 1, 1), OR_D(h1, h2), 1e-6);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(h2), 1e-6);
  or_run_free(&run);
  names->strings[0].data = (uint8_t *)ob_strdup(&ob, "Elu");
  names->strings[0].len = 3;
  kiln_onnx_import_options_t options = {.num_input_values = 1, .input_values = &x};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), UNIMPLEMENTED,
                     "node \"rec\" (RNN): activation \"Elu\" is not supported (Sigmoid, Tanh, "
                     "Relu)");
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* GRU with W (0.5, 0.3, 0.2) (z, r, h), R (0.1, 0.4, 0.6), Rb_h 0.5. */
static void test_gru_linear_before_reset(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 1), OR_D(1, 2));
  const double wz = 0.5, wr = 0.3, wh = 0.2, rz = 0.1, rr = 0.4, rh = 0.6, bh = 0.5;
  for (int lbr = 0; lbr < 2; ++lbr) {
    double h = 0.0, y[2];
    for (int t = 0; t < 2; ++t) {
      double xt = t + 1.0;
      double z = sigmoid(wz * xt + rz * h), r = sigmoid(wr * xt + rr * h);
      double cand = lbr ? tanh(wh * xt + r * (rh * h + bh)) : tanh(wh * xt + rh * (r * h) + bh);
      h = (1 - z) * cand + z * h;
      y[t] = h;
    }
    ob_t ob;
    Onnx__NodeProto *node = build(&ob, "GRU", 3, 1, OB_F32(0.5f, 0.3f, 0.2f),
                                  OB_F32(0.1f, 0.4f, 0.6f), OB_F32(0, 0, 0, 0, 0, 0.5f), x);
    ob_attr_int(&ob, node, "linear_before_reset", lbr);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_sigmoid), 4);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(2, 1, 1, 1), y, 1e-6);
    or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(y[1]), 1e-6);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* LSTM, one step, W (i, o, f, c) = (0.5, 0.4, 0.3, 0.2), R 0, peepholes
 * (i, o, f) = (0.1, 0.2, 0.3), initial c 1.5: outputs Y_h and Y_c. */
static void test_lstm_peepholes(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(2));
  ob_t ob;
  ob_init(&ob, 14);
  or_input(&ob, "x", x);
  ob_init_f32(&ob, "w", 3, OB_DIMS(1, 4, 1), OB_F32(0.5f, 0.4f, 0.3f, 0.2f));
  ob_init_f32(&ob, "r", 3, OB_DIMS(1, 4, 1), OB_F32(0, 0, 0, 0));
  ob_init_f32(&ob, "h0", 3, OB_DIMS(1, 1, 1), OB_F32(0));
  ob_init_f32(&ob, "c0", 3, OB_DIMS(1, 1, 1), OB_F32(1.5f));
  ob_init_f32(&ob, "p", 2, OB_DIMS(1, 3), OB_F32(0.1f, 0.2f, 0.3f));
  ob_node(&ob, "LSTM", "lstm", "x,w,r,,,h0,c0,p", ",y_h,y_c");
  or_output(&ob, "y_h", KILN_DTYPE_FLOAT32);
  or_output(&ob, "y_c", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  double i = sigmoid(1.0 + 0.1 * 1.5), f = sigmoid(0.6 + 0.3 * 1.5), g = tanh(0.4);
  double c = f * 1.5 + i * g, o = sigmoid(0.8 + 0.2 * c), h = o * tanh(c);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(h), 1e-6);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 1), OR_D(c), 1e-6);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(x);
}

static void test_recurrent_errors(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 1, 1), OR_D(1, 2));
  kiln_onnx_import_options_t options = {.num_input_values = 1, .input_values = &x};
  kiln_module_t *module = NULL;
  ob_t ob;
  Onnx__NodeProto *node =
      build(&ob, "RNN", 1, 1, OB_F32(0.5f), OB_F32(0.25f), OB_F32(0.1f, 0.2f), x);
  ob_attr_float(&ob, node, "clip", 3);
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), UNIMPLEMENTED,
                     "node \"rec\" (RNN): attribute clip is not supported");
  node->n_attribute = 1; /* hidden_size */
  ob_attr_string(&ob, node, "direction", "sideways");
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"rec\" (RNN): attribute direction is \"sideways\"; expected forward, "
                     "reverse or bidirectional");
  node->n_attribute = 0;
  ob_attr_int(&ob, node, "hidden_size", 2);
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"rec\" (RNN): X (2, 1, 1), W (1, 1, 1) and R (1, 1, 1) do not fit 1 "
                     "direction(s), 1 gate(s) and hidden_size 2");
  ob_free(&ob);
  /* sequence_lens longer than the sequence */
  node = build(&ob, "RNN", 1, 1, OB_F32(0.5f), OB_F32(0.25f), OB_F32(0.1f, 0.2f), x);
  ob_initializer(&ob, ob_tensor(&ob, "lens", OB_INT32, 1, OB_DIMS(1)));
  ob.initializers[ob.graph.n_initializer - 1]->n_int32_data = 1;
  ob.initializers[ob.graph.n_initializer - 1]->int32_data = ob_alloc(&ob, sizeof(int32_t));
  ob.initializers[ob.graph.n_initializer - 1]->int32_data[0] = 3;
  node->n_input = ob_names(&ob, "x,w,r,b,lens", &node->input);
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"rec\" (RNN): sequence_lens[0] is 3; the sequence has 2 steps");
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* sequence_lens shorter than the sequence, known only at run time: batch
 * entry 0 runs 1 of 2 steps (its Y_h is the first step's state, its second
 * Y is 0), entry 1 both; forward and reverse (which starts at step 0 for
 * entry 0). The RNN of test_rnn_directions: h_t = tanh(0.5 x_t + 0.25 h +
 * 0.3), X (2, 2, 1) = ((1, 1), (2, 2)). */
static void test_sequence_lens(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 2, 1), OR_D(1, 1, 2, 2)),
                              or_tensor(KILN_DTYPE_INT32, 1, OB_DIMS(2), OR_D(1, 2))};
  double h1 = tanh(0.5 + 0.3), h2 = tanh(1.0 + 0.25 * h1 + 0.3);
  double g2 = tanh(1.0 + 0.3), g1 = tanh(0.5 + 0.25 * g2 + 0.3);
  for (int reverse = 0; reverse < 2; ++reverse) {
    ob_t ob;
    ob_init(&ob, 14);
    or_input(&ob, "x", values[0]);
    or_input(&ob, "lens", values[1]);
    ob_init_f32(&ob, "w", 3, OB_DIMS(1, 1, 1), OB_F32(0.5f));
    ob_init_f32(&ob, "r", 3, OB_DIMS(1, 1, 1), OB_F32(0.25f));
    ob_init_f32(&ob, "b", 2, OB_DIMS(1, 2), OB_F32(0.1f, 0.2f));
    Onnx__NodeProto *node = ob_node(&ob, "RNN", "rec", "x,w,r,b,lens", "y,y_h");
    ob_attr_int(&ob, node, "hidden_size", 1);
    ob_attr_string(&ob, node, "direction", reverse ? "reverse" : "forward");
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_output(&ob, "y_h", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run_late(&ob, 2, values, &run);
    /* entry 0 (length 1) runs step 0 from the initial state either way: h1 */
    double y[4] = {h1, reverse ? g1 : h1, 0.0, reverse ? g2 : h2};
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(2, 1, 2, 1), y, 1e-6);
    or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 2, 1), OR_D(h1, reverse ? g1 : h2),
              1e-6);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(2, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_rnn_directions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rnn_layout_and_activation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gru_linear_before_reset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lstm_peepholes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_recurrent_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_lens, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
