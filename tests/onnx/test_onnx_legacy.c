/*
 * Opsets 1 to 6 (frontend/onnx/onnx_legacy.c): the binary operators'
 * `broadcast` and `axis`, Cast's `to` spelled as a name, Concat's default
 * axis, Selu-1's constants, and the training forms and old signatures that
 * are refused by name. Models run on the interpreter with inputs that stay
 * parameters; expected numbers are written by hand.
 */
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

/* Add at `opset` of A (2, 3, 2) and B of `b_dims`, with the attributes set
 * when not negative; returns the import's status, or runs it into `run`. */
static kiln_status_t run_add(int64_t opset, int b_ndim, const int64_t *b_dims, int64_t broadcast,
                             int64_t axis, or_run_t *run) {
  double a_values[12], b_values[12];
  for (int i = 0; i < 12; ++i) {
    a_values[i] = i;
    b_values[i] = 100 * (i + 1);
  }
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 3, 2), a_values),
                              or_tensor(KILN_DTYPE_FLOAT32, b_ndim, b_dims, b_values)};
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, opset, "Add", "a,b", 2, values);
  if (broadcast >= 0) {
    ob_attr_int(&ob, node, "broadcast", broadcast);
  }
  if (axis >= 0) {
    ob_attr_int(&ob, node, "axis", axis);
  }
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  kiln_onnx_import_options_t options = {.num_input_values = 2, .input_values = values};
  kiln_status_t status = ob_import(&ob, &options, kiln_allocator_system(), &run->module);
  if (!status) {
    KILN_ASSERT_OK(kiln_interp_run(run->module, "main", 2, values, kiln_allocator_system(),
                                   &run->num_outputs, &run->outputs));
  }
  or_release(2, values);
  ob_free(&ob);
  return status;
}

static void test_binary_broadcast(void **state) {
  (void)state;
  or_run_t run;
  /* B (3) at axis 1: B[j] added to A[i, j, k]. */
  KILN_ASSERT_OK(run_add(6, 1, OB_DIMS(3), 1, 1, &run));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 3, 2),
            OR_D(100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311), 0);
  or_run_free(&run);
  /* B (2) without axis: A's last dim, as NumPy. */
  KILN_ASSERT_OK(run_add(1, 1, OB_DIMS(2), 1, -1, &run));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 3, 2),
            OR_D(100, 201, 102, 203, 104, 205, 106, 207, 108, 209, 110, 211), 0);
  or_run_free(&run);
  /* broadcast = 0 with equal shapes is plain addition. */
  KILN_ASSERT_OK(run_add(6, 3, OB_DIMS(2, 3, 2), -1, -1, &run));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 3, OB_DIMS(2, 3, 2),
            OR_D(100, 201, 302, 403, 504, 605, 706, 807, 908, 1009, 1110, 1211), 0);
  or_run_free(&run);
}

static void test_binary_broadcast_errors(void **state) {
  (void)state;
  or_run_t run;
  KILN_ASSERT_STATUS(run_add(6, 1, OB_DIMS(2), -1, -1, &run), INVALID_ARGUMENT,
                     "inputs (2, 3, 2) and (2,): the shapes differ and attribute broadcast is 0");
  KILN_ASSERT_STATUS(run_add(6, 1, OB_DIMS(2), 1, 1, &run), INVALID_ARGUMENT,
                     "B's dims must be A's (or 1) from axis");
  KILN_ASSERT_STATUS(run_add(6, 2, OB_DIMS(3, 2), 1, 2, &run), INVALID_ARGUMENT,
                     "B does not fit in A from attribute axis");
}

/* One node over input "a" at `opset`, run or refused. */
static kiln_status_t run_one(int64_t opset, const char *op_type, kiln_tensor_t *x,
                             void (*attrs)(ob_t *, Onnx__NodeProto *), kiln_dtype_t out_dtype,
                             or_run_t *run) {
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, opset, op_type, "a", 1, &x);
  attrs(&ob, node);
  or_output(&ob, "y", out_dtype);
  kiln_onnx_import_options_t options = {.num_input_values = 1, .input_values = &x};
  kiln_status_t status = ob_import(&ob, &options, kiln_allocator_system(), &run->module);
  if (!status) {
    KILN_ASSERT_OK(kiln_interp_run(run->module, "main", 1, &x, kiln_allocator_system(),
                                   &run->num_outputs, &run->outputs));
  }
  ob_free(&ob);
  return status;
}

static void cast_to_name(ob_t *ob, Onnx__NodeProto *node) {
  ob_attr_string(ob, node, "to", "INT32");
}

static void no_attrs(ob_t *ob, Onnx__NodeProto *node) {
  (void)ob;
  (void)node;
}

static void is_test(ob_t *ob, Onnx__NodeProto *node) {
  ob_attr_int(ob, node, "is_test", 1);
}

static void paddings(ob_t *ob, Onnx__NodeProto *node) {
  ob_attr_ints(ob, node, "paddings", 2, OB_I64(1, 1));
}

static void test_cast_names_and_defaults(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(-2.5, 0.5, 7.75));
  or_run_t run;
  KILN_ASSERT_OK(run_one(1, "Cast", x, cast_to_name, KILN_DTYPE_INT32, &run));
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 1, OB_DIMS(3), OR_D(-2, 0, 7), 0);
  or_run_free(&run);
  /* Selu-1's constants are 1.6732 and 1.0507, Selu-6's the precise ones. */
  KILN_ASSERT_OK(run_one(1, "Selu", x, no_attrs, KILN_DTYPE_FLOAT32, &run));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3),
            OR_D(1.0507 * 1.6732 * expm1(-2.5), 1.0507 * 0.5, 1.0507 * 7.75), 1e-6);
  or_run_free(&run);
  KILN_ASSERT_OK(run_one(6, "Selu", x, no_attrs, KILN_DTYPE_FLOAT32, &run));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3),
            OR_D(1.05070102214813232421875 * 1.67326319217681884765625 * expm1(-2.5),
                 1.05070102214813232421875 * 0.5, 1.05070102214813232421875 * 7.75),
            1e-6);
  or_run_free(&run);
  KILN_ASSERT_OK(run_one(6, "Dropout", x, is_test, KILN_DTYPE_FLOAT32, &run));
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(-2.5, 0.5, 7.75), 0);
  or_run_free(&run);
  KILN_ASSERT_STATUS(run_one(6, "Dropout", x, no_attrs, KILN_DTYPE_FLOAT32, &run), UNIMPLEMENTED,
                     "(Dropout): is_test = 0 (the default before opset 7) is training "
                     "mode, which is not supported");
  KILN_ASSERT_STATUS(run_one(1, "Pad", x, paddings, KILN_DTYPE_FLOAT32, &run), UNIMPLEMENTED,
                     "Pad of opset 1 (attribute paddings) is not supported");
  kiln_tensor_release(x);
}

/* Concat-1 without axis joins along axis 1. */
static void test_concat_default_axis(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 1), OR_D(1, 2)),
                              or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 1), OR_D(3, 4))};
  ob_t ob;
  or_start(&ob, 1, "Concat", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(1, 3, 2, 4), 0);
  or_run_free(&run);
  ob_free(&ob);
  or_start(&ob, 4, "Concat", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT, "attribute axis is required");
  ob_free(&ob);
  or_release(2, values);
}

/* PRelu before opset 7: one slope value, or X's shape; nothing else. */
static void test_prelu(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(-1, 2, -3, 4)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0.5))};
  ob_t ob;
  or_start(&ob, 6, "PRelu", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(-0.5, 2, -1.5, 4), 0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0.5, 0.25));
  or_start(&ob, 6, "PRelu", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), UNIMPLEMENTED,
                     "a slope of other than one value or X's shape is not supported before "
                     "opset 7");
  ob_free(&ob);
  or_release(2, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_binary_broadcast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary_broadcast_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cast_names_and_defaults, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concat_default_axis, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prelu, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
