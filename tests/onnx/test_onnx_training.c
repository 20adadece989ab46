/*
 * The optimizers of ai.onnx.preview.training (onnx_ops_training.c):
 * Adagrad, Momentum (standard and nesterov) and Adam, imported from models
 * that import that domain alone and run on the interpreter with every input
 * (R and T too) given at run time, so T > 0 and T = 0 both go through the
 * where() the converters build. Expected numbers are the ONNX formulas
 * worked out by hand (in double precision; the tolerance covers float32).
 * Then the errors: list lengths that do not divide, too few outputs, a
 * missing or unknown attribute, tensors of different shapes, R that is not
 * a scalar, an integer X, and an opset of the domain kiln does not import.
 */
#include <string.h>

#include "onnx_run.h"

#define TOL 2e-6

static const char *const training = KILN_ONNX_TRAINING_DOMAIN;

/* A model importing the training domain alone, one node `op_type` over
 * graph inputs named by `inputs` (each of the value's type) into `outputs`. */
static Onnx__NodeProto *start(ob_t *ob, const char *op_type, const char *inputs,
                              const char *outputs, int count, kiln_tensor_t *const *values) {
  ob_init(ob, 1);
  ob->opset.domain = ob_strdup(ob, training);
  char names[256];
  snprintf(names, sizeof(names), "%s", inputs);
  int i = 0;
  for (char *name = strtok(names, ","); name && i < count; name = strtok(NULL, ","), ++i) {
    or_input(ob, name, values[i]);
  }
  Onnx__NodeProto *node = ob_node(ob, op_type, "opt", inputs, outputs);
  node->domain = ob_strdup(ob, training);
  char list[256];
  snprintf(list, sizeof(list), "%s", outputs);
  for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
    or_output(ob, name, KILN_DTYPE_FLOAT32);
  }
  return node;
}

static kiln_tensor_t *scalar_f32(double value) {
  return or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(value));
}

static kiln_tensor_t *scalar_i64(double value) {
  return or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(value));
}

static kiln_tensor_t *vec2(double a, double b) {
  return or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(a, b));
}

/* ---- Adagrad ---- */

static void test_adagrad(void **state) {
  (void)state;
  kiln_tensor_t *v[5] = {scalar_f32(0.1), scalar_i64(1), vec2(1.0, -2.0), vec2(-0.5, 1.5),
                         vec2(0.25, 4.0)};
  ob_t ob;
  Onnx__NodeProto *node = start(&ob, "Adagrad", "R,T,X,G,H", "X_new,H_new", 5, v);
  ob_attr_float(&ob, node, "decay_factor", 0.1f);
  ob_attr_float(&ob, node, "epsilon", 1e-5f);
  ob_attr_float(&ob, node, "norm_coefficient", 0.001f);
  or_run_t run;
  or_run(&ob, 5, v, &run);
  assert_int_equal(run.num_outputs, 2);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2),
            OR_D(1.0642171466223354, -2.0544986574669974), TOL);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0.499001, 6.244004), TOL);
  or_run_free(&run);
  ob_free(&ob);
  or_release(5, v);
}

/* Two tensors per list, of different shapes: X1, X2, G1, G2, H1, H2. */
static void test_adagrad_two_tensors(void **state) {
  (void)state;
  kiln_tensor_t *v[8] = {scalar_f32(0.1),
                         scalar_i64(1),
                         or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(1.0)),
                         vec2(1.0, -2.0),
                         or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(-0.5)),
                         vec2(-0.5, 1.5),
                         or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0.25)),
                         vec2(0.25, 4.0)};
  ob_t ob;
  Onnx__NodeProto *node =
      start(&ob, "Adagrad", "R,T,X1,X2,G1,G2,H1,H2", "X1_new,X2_new,H1_new,H2_new", 8, v);
  ob_attr_float(&ob, node, "decay_factor", 0.1f);
  ob_attr_float(&ob, node, "epsilon", 1e-5f);
  ob_attr_float(&ob, node, "norm_coefficient", 0.001f);
  or_run_t run;
  or_run(&ob, 8, v, &run);
  assert_int_equal(run.num_outputs, 4);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 0, NULL, OR_D(1.0642171466223354), TOL);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2),
            OR_D(1.0642171466223354, -2.0544986574669974), TOL);
  or_assert(run.outputs[2], KILN_DTYPE_FLOAT32, 0, NULL, OR_D(0.499001), TOL);
  or_assert(run.outputs[3], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0.499001, 6.244004), TOL);
  or_run_free(&run);
  ob_free(&ob);
  or_release(8, v);
}

/* ---- Momentum ---- */

static void run_momentum(const char *mode, double norm, double alpha, double beta, int64_t t,
                         const double *x_new, const double *v_new) {
  kiln_tensor_t *v[5] = {scalar_f32(0.1), scalar_i64((double)t), vec2(1.2, 2.8), vec2(-0.94, -2.5),
                         vec2(1.7, 3.6)};
  ob_t ob;
  Onnx__NodeProto *node = start(&ob, "Momentum", "R,T,X,G,V", "X_new,V_new", 5, v);
  ob_attr_float(&ob, node, "norm_coefficient", (float)norm);
  ob_attr_float(&ob, node, "alpha", (float)alpha);
  ob_attr_float(&ob, node, "beta", (float)beta);
  ob_attr_string(&ob, node, "mode", mode);
  or_run_t run;
  or_run(&ob, 5, v, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), x_new, TOL);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), v_new, TOL);
  or_run_free(&run);
  ob_free(&ob);
  or_release(5, v);
}

static void test_momentum(void **state) {
  (void)state;
  /* T = 0: the gradient's coefficient is 1, not beta. */
  run_momentum("standard", 0.001, 0.95, 0.1, 0, OR_D(1.13238, 2.70772), OR_D(0.6762, 0.9228));
  run_momentum("standard", 0.001, 0.95, 0.1, 2, OR_D(1.047888, 2.482972), OR_D(1.52112, 3.17028));
  run_momentum("nesterov", 0.01, 0.9, 0.5, 2, OR_D(1.19686, 2.86684), OR_D(1.066, 2.004));
}

/* ---- Adam ---- */

static void run_adam(int64_t t, double norm, double post, double alpha, double beta, double epsilon,
                     const double *x_new, const double *v_new, const double *h_new) {
  kiln_tensor_t *v[6] = {scalar_f32(0.1),   scalar_i64((double)t), vec2(1.2, 2.8),
                         vec2(-0.94, -2.5), vec2(1.7, 3.6),        vec2(0.1, 0.1)};
  ob_t ob;
  Onnx__NodeProto *node = start(&ob, "Adam", "R,T,X,G,V,H", "X_new,V_new,H_new", 6, v);
  ob_attr_float(&ob, node, "norm_coefficient", (float)norm);
  ob_attr_float(&ob, node, "norm_coefficient_post", (float)post);
  ob_attr_float(&ob, node, "alpha", (float)alpha);
  ob_attr_float(&ob, node, "beta", (float)beta);
  ob_attr_float(&ob, node, "epsilon", (float)epsilon);
  or_run_t run;
  or_run(&ob, 6, v, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), x_new, 1e-5);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), v_new, TOL);
  or_assert(run.outputs[2], KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), h_new, 1e-5);
  or_run_free(&run);
  ob_free(&ob);
  or_release(6, v);
}

static void test_adam(void **state) {
  (void)state;
  /* T = 0: no bias correction (its arm would divide 0 by 0). */
  run_adam(0, 0.001, 0.0, 0.95, 0.1, 1e-7, OR_D(1.0250363491167394, 2.6610326709788175),
           OR_D(1.56806, 3.29514), OR_D(0.803210896, 5.622407056));
  run_adam(3, 0.001, 0.1, 0.9, 0.8, 1e-2, OR_D(0.43459787348187967, 1.9230017871226952),
           OR_D(1.43612, 2.99028), OR_D(0.256269088, 1.327201568));
}

/* ---- errors ---- */

static void expect_error(ob_t *ob, kiln_status_code_t code, const char *message) {
  kiln_status_t status = or_import_plain(ob);
  assert_non_null(status);
  if (kiln_status_code(status) != code || !strstr(kiln_status_message(status), message)) {
    fail_msg("got \"%s\", expected \"%s\"", kiln_status_message(status), message);
  }
  kiln_status_free(status);
  ob_free(ob);
}

static void test_errors(void **state) {
  (void)state;
  kiln_tensor_t *v[6] = {
      scalar_f32(0.1), scalar_i64(1), vec2(1, 2),
      vec2(1, 2),      vec2(1, 2),    or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(1, 2, 3))};
  ob_t ob;
  start(&ob, "Adagrad", "R,T,X,G", "X_new", 4, v);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "node \"opt\" (Adagrad): expected R, T and 3 lists of n tensors each (2 + 3 n "
               "inputs); got 4 inputs");
  start(&ob, "Adagrad", "R,T,X,G,H", "X_new", 5, v);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "with 1 tensors per list expected 2 outputs; got 1");
  start(&ob, "Momentum", "R,T,X,G,V", "X_new,V_new", 5, v);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT, "attribute alpha is required");
  Onnx__NodeProto *node = start(&ob, "Momentum", "R,T,X,G,V", "X_new,V_new", 5, v);
  ob_attr_float(&ob, node, "alpha", 0.9f);
  ob_attr_float(&ob, node, "beta", 0.9f);
  ob_attr_float(&ob, node, "norm_coefficient", 0.0f);
  ob_attr_string(&ob, node, "mode", "heavy");
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "attribute mode is \"heavy\"; expected standard or nesterov");
  kiln_tensor_t *mismatched[5] = {v[0], v[1], v[2], v[5], v[4]};
  start(&ob, "Adagrad", "R,T,X,G,H", "X_new,H_new", 5, mismatched);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "input 3 is float32 (3,); expected X1's type, float32 (2,)");
  kiln_tensor_t *wide_rate[5] = {v[2], v[1], v[2], v[3], v[4]};
  start(&ob, "Adagrad", "R,T,X,G,H", "X_new,H_new", 5, wide_rate);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT, "input 0 (R) must be a scalar; it is (2,)");
  kiln_tensor_t *ints = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(1, 2));
  kiln_tensor_t *int_x[5] = {v[0], v[1], ints, ints, ints};
  start(&ob, "Adagrad", "R,T,X,G,H", "X_new,H_new", 5, int_x);
  expect_error(&ob, KILN_STATUS_CODE_INVALID_ARGUMENT,
               "X1 has dtype int64; expected a floating-point dtype");
  start(&ob, "Adagrad", "R,T,X,G,H", "X_new,H_new", 5, v);
  ob.opset.version = 2;
  expect_error(&ob, KILN_STATUS_CODE_UNIMPLEMENTED,
               "the model uses opset 2 of ai.onnx.preview.training; kiln imports opset 1");
  kiln_tensor_release(ints);
  or_release(6, v);
}

/* A default-domain operator in a model that imports only the training
 * domain is reported as unsupported, not guessed at an opset. */
static void test_default_domain_without_opset(void **state) {
  (void)state;
  kiln_tensor_t *x = vec2(1, 2);
  ob_t ob;
  ob_init(&ob, 1);
  ob.opset.domain = ob_strdup(&ob, training);
  or_input(&ob, "x", x);
  ob_node(&ob, "Relu", "r", "x", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  expect_error(&ob, KILN_STATUS_CODE_UNIMPLEMENTED,
               "unsupported operators: Relu (no opset of the default domain imported) (node r)");
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_adagrad),  cmocka_unit_test(test_adagrad_two_tensors),
      cmocka_unit_test(test_momentum), cmocka_unit_test(test_adam),
      cmocka_unit_test(test_errors),   cmocka_unit_test(test_default_domain_without_opset),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
