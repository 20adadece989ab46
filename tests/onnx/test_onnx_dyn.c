/*
 * Shape-like inputs known only at run time, on the interpreter: Split's
 * split, OneHot's depth and values, Pad's pads and constant_value,
 * ConstantOfShape's shape, the window functions' size, Reshape's shape
 * with allowzero and MaxUnpool's output_shape. Each model runs
 * twice, once imported with its inputs' values (the import-time path,
 * static operators and Constants) and once imported with nothing known
 * (dyn.split, dyn.one_hot, dyn.pad, dyn.broadcast_to, dyn.arange reading
 * the values when they run); both must give the same outputs. Bad values
 * are refused naming the node and the operator.
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

/* The model run with its inputs known at import and known only at run
 * time gives the same outputs; the late import calls `dyn_op`. */
static void assert_late_like_known(ob_t *ob, int count, kiln_tensor_t *const *values,
                                   const kiln_op_t *dyn_op) {
  or_run_t known, late;
  or_run(ob, count, values, &known);
  or_run_late(ob, count, values, &late);
  assert_int_equal(om_count_calls(known.module, dyn_op), 0);
  assert_true(om_count_calls(late.module, dyn_op) >= 1);
  assert_int_equal(known.num_outputs, late.num_outputs);
  for (int i = 0; i < known.num_outputs; ++i) {
    const kiln_tensor_t *want = known.outputs[i];
    int64_t n = kiln_tensor_element_count(want);
    double expected[256];
    assert_true(n <= 256);
    for (int64_t k = 0; k < n; ++k) {
      expected[k] = kiln_tensor_element_as_double(want, k);
    }
    or_assert(late.outputs[i], kiln_tensor_dtype(want), kiln_tensor_ndim(want),
              kiln_tensor_shape(want), expected, 1e-6);
  }
  or_run_free(&known);
  or_run_free(&late);
}

static kiln_tensor_t *iota(kiln_dtype_t dtype, int ndim, const int64_t *dims) {
  double values[256];
  for (int k = 0; k < 256; ++k) {
    values[k] = (double)(k * 7 % 13) - 4.0;
  }
  return or_tensor(dtype, ndim, dims, values);
}

static void test_split(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {iota(KILN_DTYPE_FLOAT32, 2, OB_DIMS(6, 2)),
                              or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 0, 5))};
  ob_t ob;
  or_start(&ob, 13, "Split", "a,b", 2, values);
  ob.nodes[0]->n_output = ob_names(&ob, "y,z,w", &ob.nodes[0]->output);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_output(&ob, "z", KILN_DTYPE_FLOAT32);
  or_output(&ob, "w", KILN_DTYPE_FLOAT32);
  assert_late_like_known(&ob, 2, values, &kiln_op_dyn_split);
  /* sizes that do not add up to the dim, when the model runs */
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 0, 4));
  KILN_ASSERT_STATUS(or_try_late(&ob, 2, values), INVALID_ARGUMENT,
                     "dyn.split: the split sizes add up to 5 but dim 0 is 6");
  ob_free(&ob);
  /* sizes that are not integers, at import */
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(3, 3));
  or_start(&ob, 13, "Split", "a,b", 2, values);
  ob.nodes[0]->n_output = ob_names(&ob, "y,z", &ob.nodes[0]->output);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_output(&ob, "z", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (Split): dyn.split: input 1 (split) is float32");
  ob_free(&ob);
  or_release(2, values);
}

static void test_one_hot(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {or_tensor(KILN_DTYPE_INT64, 2, OB_DIMS(2, 2), OR_D(0, -1, 2, 1)),
                              or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(3)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(-1, 5))};
  for (int axis = -1; axis < 2; ++axis) {
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 11, "OneHot", "a,b,c", 3, values);
    ob_attr_int(&ob, node, "axis", axis);
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    assert_late_like_known(&ob, 3, values, &kiln_op_dyn_one_hot);
    ob_free(&ob);
  }
  /* values must be (off, on) */
  kiln_tensor_release(values[2]);
  values[2] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(0, 1, 2));
  ob_t ob;
  or_start(&ob, 11, "OneHot", "a,b,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (OneHot): dyn.one_hot: input 2 (values) is (3,); expected 2 "
                     "values (off, on)");
  ob_free(&ob);
  or_release(3, values);
}

static void test_pad(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {iota(KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 4)),
                              or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 0, 2, 3)),
                              or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(9))};
  const char *const modes[] = {"constant", "edge", "reflect"};
  for (int m = 0; m < 3; ++m) {
    ob_t ob;
    Onnx__NodeProto *node =
        or_start(&ob, 13, "Pad", m == 0 ? "a,b,c" : "a,b", m == 0 ? 3 : 2, values);
    ob_attr_string(&ob, node, "mode", modes[m]);
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    assert_late_like_known(&ob, m == 0 ? 3 : 2, values, &kiln_op_dyn_pad);
    ob_free(&ob);
  }
  /* pads of the wrong length, at import */
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 0, 2));
  ob_t ob;
  or_start(&ob, 13, "Pad", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (Pad): dyn.pad: pads has 3 values; rank 2 needs 4");
  ob_free(&ob);
  or_release(3, values);
}

static void test_constant_of_shape(void **state) {
  (void)state;
  kiln_tensor_t *shape = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(2, 3));
  for (int empty = 0; empty < 2; ++empty) {
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 9, "ConstantOfShape", "a", 1, &shape);
    Onnx__AttributeProto *value =
        ob_attr(&ob, node, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    value->t = ob_tensor_raw(&ob, "v", OB_INT32, 1, OB_DIMS(1), "\7\0\0\0", 4);
    or_output(&ob, "y", KILN_DTYPE_INT32);
    assert_late_like_known(&ob, 1, &shape, &kiln_op_dyn_broadcast_to);
    ob_free(&ob);
    kiln_tensor_release(shape);
    shape = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(4, 0, 2));
  }
  kiln_tensor_release(shape);
}

static void test_windows(void **state) {
  (void)state;
  const char *const ops[] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
  for (int op = 0; op < 3; ++op) {
    for (int periodic = 0; periodic < 2; ++periodic) {
      for (int64_t size = 1; size <= 7; size += 3) {
        kiln_tensor_t *n = or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D((double)size));
        ob_t ob;
        Onnx__NodeProto *node = or_start(&ob, 17, ops[op], "a", 1, &n);
        ob_attr_int(&ob, node, "periodic", periodic);
        or_output(&ob, "y", KILN_DTYPE_FLOAT32);
        assert_late_like_known(&ob, 1, &n, &kiln_op_dyn_arange);
        ob_free(&ob);
        kiln_tensor_release(n);
      }
    }
  }
}

/* Reshape with allowzero and a shape known only at run time: a 0 is a 0 */
static void test_reshape_allowzero(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(0, 3, 4), OR_D(0)),
                              or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(3, 4, 0))};
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 14, "Reshape", "a,b", 2, values);
  ob_attr_int(&ob, node, "allowzero", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  assert_late_like_known(&ob, 2, values, &kiln_op_dyn_reshape);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(-1, 4, 0));
  KILN_ASSERT_STATUS(or_try_late(&ob, 2, values), INVALID_ARGUMENT,
                     "dyn.reshape: shape [-1, 4, 0] has -1 and 0 with allowzero");
  ob_free(&ob);
  or_release(2, values);
}

/* MaxUnpool with output_shape known only at run time: (2, 2) values at
 * their positions in the unpooled (4, 4), placed by coordinates in (5, 5). */
static void test_max_unpool(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_INT64, 4, OB_DIMS(1, 1, 2, 2), OR_D(5, 7, 13, 15)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 1, 5, 5))};
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 11, "MaxUnpool", "a,b,c", 3, values);
  ob_attr_ints(&ob, node, "kernel_shape", 2, OB_I64(2, 2));
  ob_attr_ints(&ob, node, "strides", 2, OB_I64(2, 2));
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  assert_late_like_known(&ob, 3, values, &kiln_op_dyn_reshape);
  ob_free(&ob);
  /* an output_shape of the wrong rank, at import */
  kiln_tensor_release(values[2]);
  values[2] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 5, 5));
  node = or_start(&ob, 11, "MaxUnpool", "a,b,c", 3, values);
  ob_attr_ints(&ob, node, "kernel_shape", 2, OB_I64(2, 2));
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (MaxUnpool): input 2 (output_shape) is int64 (3,); expected 4 "
                     "int64 values");
  ob_free(&ob);
  or_release(3, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_split, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_hot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pad, setup, teardown),
      cmocka_unit_test_setup_teardown(test_constant_of_shape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_allowzero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_unpool, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
