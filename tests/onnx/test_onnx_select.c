/*
 * The converters whose output depends on values known at import, on the
 * interpreter: Compress, NonZero, Unique (sorted or in order of first
 * occurrence, flattened or along an axis, all four outputs) and
 * ReverseSequence (a gather along the time axis with indices computed from
 * sequence_lens). Inputs with values stay parameters; the errors say which
 * input must be known and what does not fit.
 */
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

static void test_compress(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 2), OR_D(1, 2, 3, 4, 5, 6)),
      or_tensor(KILN_DTYPE_BOOL, 1, OB_DIMS(2), OR_D(0, 1)),
  };
  /* axis 0 with a condition shorter than the dim: row 1 only */
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 11, "Compress", "a,b", 2, values);
  ob_attr_int(&ob, node, "axis", 0);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_take), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 2), OR_D(3, 4), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  /* no axis: the flattened input */
  or_start(&ob, 11, "Compress", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run(&ob, 2, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(2), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  /* the condition must be known at import, and not longer than the dim */
  node = or_start(&ob, 11, "Compress", "a,b", 2, values);
  ob_attr_int(&ob, node, "axis", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(
      or_import_plain(&ob), UNIMPLEMENTED,
      "node \"n\" (Compress): input 1 (condition, \"b\") must be a constant known at "
      "import");
  ob.graph.n_input = 1;
  ob_initializer(&ob, ob_tensor_raw(&ob, "b", OB_BOOL, 1, OB_DIMS(3), "\1\1\1", 3));
  KILN_ASSERT_STATUS(
      or_import_plain(&ob), INVALID_ARGUMENT,
      "node \"n\" (Compress): condition has 3 elements in 1 dims; expected a 1-D tensor "
      "of at most 2 (the dim compressed)");
  ob_free(&ob);
  or_release(2, values);
}

static void test_nonzero(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_INT32, 2, OB_DIMS(2, 2), OR_D(1, 0, 3, -1));
  ob_t ob;
  or_start(&ob, 13, "NonZero", "a", 1, &x);
  or_output(&ob, "y", KILN_DTYPE_INT64);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  assert_int_equal(om_count_calls(run.module, NULL), 0); /* a Constant */
  or_assert(run.outputs[0], KILN_DTYPE_INT64, 2, OB_DIMS(2, 3), OR_D(0, 1, 1, 0, 0, 1), 0.0);
  or_run_free(&run);
  KILN_ASSERT_STATUS(or_import_plain(&ob), UNIMPLEMENTED,
                     "node \"n\" (NonZero): input 0 (X, \"a\") must be a constant known at import");
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* x[t][b] = 10 t + b over (4, 2), sequence_lens (4, 2): batch 0 reversed
 * whole, batch 1 in its first two steps. */
static void test_reverse_sequence(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(4, 2), OR_D(0, 1, 10, 11, 20, 21, 30, 31)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(4, 2)),
  };
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 10, "ReverseSequence", "a,b", 2, values);
  ob_attr_int(&ob, node, "time_axis", 0);
  ob_attr_int(&ob, node, "batch_axis", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_gather), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(4, 2),
            OR_D(30, 11, 20, 1, 10, 21, 0, 31), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(5, 1));
  or_start(&ob, 10, "ReverseSequence", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  kiln_onnx_import_options_t options = {.num_input_values = 2, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"n\" (ReverseSequence): sequence_lens[0] is 5; the time axis has 4");
  ob_free(&ob);
  or_release(2, values);
}

static void test_unique_flat(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(6), OR_D(2, 1, 1, 3, 4, 3));
  for (int sorted = 0; sorted < 2; ++sorted) {
    ob_t ob;
    ob_init(&ob, 11);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, "Unique", "u", "x", "y,indices,inverse,counts");
    ob_attr_int(&ob, node, "sorted", sorted);
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_output(&ob, "indices", KILN_DTYPE_INT64);
    or_output(&ob, "inverse", KILN_DTYPE_INT64);
    or_output(&ob, "counts", KILN_DTYPE_INT64);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, NULL), 0);
    if (sorted) {
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(1, 2, 3, 4), 0.0);
      or_assert(run.outputs[1], KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 0, 3, 4), 0.0);
      or_assert(run.outputs[2], KILN_DTYPE_INT64, 1, OB_DIMS(6), OR_D(1, 0, 0, 2, 3, 2), 0.0);
      or_assert(run.outputs[3], KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(2, 1, 2, 1), 0.0);
    } else {
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), OR_D(2, 1, 3, 4), 0.0);
      or_assert(run.outputs[1], KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(0, 1, 3, 4), 0.0);
      or_assert(run.outputs[2], KILN_DTYPE_INT64, 1, OB_DIMS(6), OR_D(0, 1, 1, 2, 3, 2), 0.0);
      or_assert(run.outputs[3], KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 2, 2, 1), 0.0);
    }
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(x);
}

/* Rows of (3, 2) = ((1, 0), (1, 0), (0, 1)) along axis 0: two unique rows,
 * (0, 1) sorting first. */
static void test_unique_axis(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_INT32, 2, OB_DIMS(3, 2), OR_D(1, 0, 1, 0, 0, 1));
  ob_t ob;
  ob_init(&ob, 11);
  or_input(&ob, "x", x);
  Onnx__NodeProto *node = ob_node(&ob, "Unique", "u", "x", "y,indices,inverse,counts");
  ob_attr_int(&ob, node, "axis", -2);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  or_output(&ob, "indices", KILN_DTYPE_INT64);
  or_output(&ob, "inverse", KILN_DTYPE_INT64);
  or_output(&ob, "counts", KILN_DTYPE_INT64);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 2, OB_DIMS(2, 2), OR_D(0, 1, 1, 0), 0.0);
  or_assert(run.outputs[1], KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(2, 0), 0.0);
  or_assert(run.outputs[2], KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 1, 0), 0.0);
  or_assert(run.outputs[3], KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(1, 2), 0.0);
  or_run_free(&run);
  KILN_ASSERT_STATUS(or_import_plain(&ob), UNIMPLEMENTED,
                     "node \"u\" (Unique): input 0 (X, \"x\") must be a constant known at import");
  node->n_attribute = 0;
  ob_attr_int(&ob, node, "axis", 2);
  kiln_onnx_import_options_t options = {.num_input_values = 1, .input_values = &x};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"u\" (Unique): axis 2 is out of range for rank 2");
  ob_free(&ob);
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_compress, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nonzero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reverse_sequence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unique_flat, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unique_axis, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
