/*
 * The converters whose output depends on values, on the interpreter:
 * Compress, NonZero, Unique (sorted or in order of first occurrence,
 * flattened or along an axis, all four outputs), ReverseSequence (a gather
 * along the time axis with indices computed from sequence_lens) and
 * NonMaxSuppression, with those values known at import (inputs with values
 * stay parameters) and known only at run time (the same results, from
 * nonzero, unique and vision.non_max_suppression counting when they run, or
 * from the index computed by the graph); the errors say what does not fit.
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
  /* a condition known only at run time: the positions from nonzero */
  node = or_start(&ob, 11, "Compress", "a,b", 2, values);
  ob_attr_int(&ob, node, "axis", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_late(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_nonzero), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 1), OR_D(2, 4, 6), 0.0);
  or_run_free(&run);
  /* one longer than the dim selects past it: an error when it runs */
  ob_free(&ob);
  kiln_tensor_t *longer[2] = {values[0], or_tensor(KILN_DTYPE_BOOL, 1, OB_DIMS(3), OR_D(0, 0, 1))};
  node = or_start(&ob, 11, "Compress", "a,b", 2, longer);
  ob_attr_int(&ob, node, "axis", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_try_late(&ob, 2, longer), OUT_OF_RANGE,
                     "take: index 2 is out of range for axis 1 of size 2");
  kiln_tensor_release(longer[1]);
  /* known at import, it must not be longer than the dim */
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
  /* X known only at run time: nonzero counts when it runs */
  or_run_late(&ob, 1, &x, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_nonzero), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT64, 2, OB_DIMS(2, 3), OR_D(0, 1, 1, 0, 0, 1), 0.0);
  or_run_free(&run);
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
  /* X known only at run time: unique counts when it runs, with the same results */
  or_run_late(&ob, 1, &x, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_unique), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 2, OB_DIMS(2, 2), OR_D(0, 1, 1, 0), 0.0);
  or_assert(run.outputs[1], KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(2, 0), 0.0);
  or_assert(run.outputs[2], KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(1, 1, 0), 0.0);
  or_assert(run.outputs[3], KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(1, 2), 0.0);
  or_run_free(&run);
  node->n_attribute = 0;
  ob_attr_int(&ob, node, "axis", 2);
  kiln_onnx_import_options_t options = {.num_input_values = 1, .input_values = &x};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"u\" (Unique): unique: axis 2 is out of range for rank 2");
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* Unique of a scalar: one value, flattened (found by the importer's fuzzer:
 * a scalar's shape array is NULL, and memcpy from NULL is undefined). */
static void test_unique_scalar(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(2.5));
  ob_t ob;
  ob_init(&ob, 11);
  or_input(&ob, "x", x);
  ob_node(&ob, "Unique", "u", "x", "y,indices,inverse,counts");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_output(&ob, "indices", KILN_DTYPE_INT64);
  or_output(&ob, "inverse", KILN_DTYPE_INT64);
  or_output(&ob, "counts", KILN_DTYPE_INT64);
  or_run_t run;
  or_run_late(&ob, 1, &x, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(2.5), 0.0);
  or_assert(run.outputs[3], KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(1), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(x);
}

/* sequence_lens known only at run time: the index computed by the graph,
 * the same result as test_reverse_sequence's. */
static void test_reverse_sequence_late(void **state) {
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
  or_run_late(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_where), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(4, 2),
            OR_D(30, 11, 20, 1, 10, 21, 0, 31), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(4, 2));
  or_start(&ob, 10, "ReverseSequence", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (ReverseSequence): input 1 (sequence_lens) is float32");
  ob_free(&ob);
  or_release(2, values);
}

/* ONNX's suppress-by-IoU example: of six boxes (two clusters of three and
 * one far away) with max 3, IoU 0.5, the best of each cluster and the far
 * one, by score: boxes 3, 0, 5. */
static const double nms_boxes[] = {0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                   0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101};
static const double nms_centers[] = {0.5, 0.5,  1, 1, 0.5, 0.6,  1, 1, 0.5, 0.4,   1, 1,
                                     0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1};

static void nms_run(bool late, bool center, int count, kiln_tensor_t **values, const int64_t *dims,
                    const double *expected) {
  ob_t ob;
  const char *inputs[] = {"a,b", "a,b,c", "a,b,c,d", "a,b,c,d,e"};
  Onnx__NodeProto *node = or_start(&ob, 11, "NonMaxSuppression", inputs[count - 2], count, values);
  ob_attr_int(&ob, node, "center_point_box", center);
  or_output(&ob, "y", KILN_DTYPE_INT64);
  or_run_t run;
  if (late) {
    or_run_late(&ob, count, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_non_max_suppression), 1);
  } else {
    or_run(&ob, count, values, &run);
  }
  or_assert(run.outputs[0], KILN_DTYPE_INT64, 2, dims, expected, 0.0);
  or_run_free(&run);
  ob_free(&ob);
}

static void test_non_max_suppression(void **state) {
  (void)state;
  kiln_tensor_t *values[5] = {
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 6, 4), nms_boxes),
      or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 1, 6), OR_D(0.9, 0.75, 0.6, 0.95, 0.5, 0.3)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(3)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0.5)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0.0)),
  };
  const double three[] = {0, 0, 3, 0, 0, 0, 0, 0, 5};
  for (int late = 0; late < 2; ++late) {
    nms_run(late, false, 5, values, OB_DIMS(3, 3), three);
  }
  /* the same boxes as centers and sizes */
  kiln_tensor_t *corners = values[0];
  values[0] = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 6, 4), nms_centers);
  nms_run(true, true, 5, values, OB_DIMS(3, 3), three);
  kiln_tensor_release(values[0]);
  values[0] = corners;
  /* a score threshold of 0.7 leaves boxes 3 and 0; at most 1 keeps 3 */
  kiln_tensor_release(values[4]);
  values[4] = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0.7));
  nms_run(true, false, 5, values, OB_DIMS(2, 3), OR_D(0, 0, 3, 0, 0, 0));
  kiln_tensor_release(values[2]);
  values[2] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(1));
  nms_run(true, false, 5, values, OB_DIMS(1, 3), OR_D(0, 0, 3));
  /* no max_output_boxes_per_class: no boxes */
  nms_run(true, false, 2, values, OB_DIMS(0, 3), OR_D(0));
  /* boxes that are not (batches, boxes, 4) */
  ob_t ob;
  kiln_tensor_t *bad = or_tensor(KILN_DTYPE_FLOAT32, 3, OB_DIMS(1, 8, 3), nms_boxes);
  kiln_tensor_t *pair[2] = {bad, values[1]};
  or_start(&ob, 11, "NonMaxSuppression", "a,b", 2, pair);
  or_output(&ob, "y", KILN_DTYPE_INT64);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (NonMaxSuppression): vision.non_max_suppression: boxes float32 "
                     "(1, 8, 3)");
  ob_free(&ob);
  kiln_tensor_release(bad);
  or_release(5, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_compress, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nonzero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reverse_sequence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unique_flat, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unique_axis, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unique_scalar, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reverse_sequence_late, setup, teardown),
      cmocka_unit_test_setup_teardown(test_non_max_suppression, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
