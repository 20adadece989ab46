/*
 * The gather, scatter, selection and shape converters on the interpreter:
 * GatherElements, GatherND, ScatterElements and Scatter, ScatterND, OneHot,
 * TopK in both forms, CumSum, MaxUnpool, Trilu, Tile, Expand,
 * DepthToSpace, SpaceToDepth, EyeLike, Range and the window functions, and
 * constants computed at import from inputs with values. Each checks the registry
 * operator chosen, the attributes read from inputs at import, the output
 * type and hand-computed numbers (most from the examples of ONNX's operator
 * documentation), and the errors name the node and what is wrong.
 */
#include <math.h>
#include <string.h>

#include "kiln_test.h"
#include "onnx_run.h"

/* Imports `ob` without options (a module made by mistake leaks; the
 * assertion using it fails first). */
/* ---- gather and scatter ---- */

static void test_gather_elements_and_nd(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(1, 2, 3, 4)),
      or_tensor(KILN_DTYPE_INT64, 2, OB_DIMS(2, 2), OR_D(0, 0, 1, 0)),
  };
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 13, "GatherElements", "a,b", 2, values);
  ob_attr_int(&ob, node, "axis", 1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_gather), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(1, 1, 4, 3), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);

  /* batch_dims 1: data (2, 2, 2), indices (2, 1) pick row [1] of batch 0, [0] of batch 1 */
  values[0] = or_tensor(KILN_DTYPE_INT32, 3, OB_DIMS(2, 2, 2), OR_D(0, 1, 2, 3, 4, 5, 6, 7));
  values[1] = or_tensor(KILN_DTYPE_INT64, 2, OB_DIMS(2, 1), OR_D(1, 0));
  node = or_start(&ob, 13, "GatherND", "a,b", 2, values);
  ob_attr_int(&ob, node, "batch_dims", 1);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_gather_nd), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 2, OB_DIMS(2, 2), OR_D(2, 3, 4, 5), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);
}

/* ScatterElements (opset 16, reduction add) and Scatter (opset 10). */
static void test_scatter_elements_forms(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 5), OR_D(1, 2, 3, 4, 5)),
      or_tensor(KILN_DTYPE_INT64, 2, OB_DIMS(1, 2), OR_D(1, 1)),
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 2), OR_D(1.1, 2.1)),
  };
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 16, "ScatterElements", "a,b,c", 3, values);
  ob_attr_int(&ob, node, "axis", 1);
  ob_attr_string(&ob, node, "reduction", "add");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 3, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_scatter_elements), 1);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 5), OR_D(1, 5.2, 3, 4, 5), 1e-6);
  or_run_free(&run);
  ob_free(&ob);

  node = or_start(&ob, 10, "Scatter", "a,b,c", 3, values);
  ob_attr_int(&ob, node, "axis", -1);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run(&ob, 3, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(1, 5), OR_D(1, 2.1, 3, 4, 5), 1e-6);
  or_run_free(&run);
  ob_free(&ob);

  node = or_start(&ob, 16, "ScatterElements", "a,b,c", 3, values);
  ob_attr_string(&ob, node, "reduction", "max");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(
      or_import_plain(&ob), UNIMPLEMENTED,
      "node \"n\" (ScatterElements): reduction \"max\" is not supported (none, add, mul)");
  ob_free(&ob);
  or_release(3, values);
}

static void test_scatter_nd(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(8), OR_D(1, 2, 3, 4, 5, 6, 7, 8)),
      or_tensor(KILN_DTYPE_INT64, 2, OB_DIMS(4, 1), OR_D(4, 3, 1, 7)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(9, 10, 11, 12)),
  };
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 16, "ScatterND", "a,b,c", 3, values);
    if (k == 1) {
      ob_attr_string(&ob, node, "reduction", "mul");
    }
    or_output(&ob, "y", KILN_DTYPE_INT64);
    or_run_t run;
    or_run(&ob, 3, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_scatter_nd), 1);
    const double *expected =
        k == 0 ? OR_D(1, 11, 3, 10, 9, 6, 7, 12) : OR_D(1, 22, 3, 40, 45, 6, 7, 96);
    or_assert(run.outputs[0], KILN_DTYPE_INT64, 1, OB_DIMS(8), expected, 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(3, values);
}

/* ---- OneHot, TopK, CumSum ---- */

static void test_one_hot(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(0, 2, -1)),
      or_tensor(KILN_DTYPE_FLOAT32, 0, NULL, OR_D(3)),
      or_tensor(KILN_DTYPE_INT32, 1, OB_DIMS(2), OR_D(2, 5)),
  };
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 11, "OneHot", "a,b,c", 3, values);
  ob_attr_int(&ob, node, "axis", 0);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  or_run_t run;
  or_run(&ob, 3, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_one_hot), 1);
  /* axis 0: (depth, 3); column j is the one-hot line of index j */
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 2, OB_DIMS(3, 3), OR_D(5, 2, 2, 2, 2, 2, 2, 5, 5),
            0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[2]);
  values[2] = or_tensor(KILN_DTYPE_INT32, 1, OB_DIMS(3), OR_D(0, 1, 2));
  or_start(&ob, 11, "OneHot", "a,b,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  kiln_onnx_import_options_t options = {.num_input_values = 3, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"n\" (OneHot): input 2 (values) has 3 elements; expected 2 (off, on)");
  ob_free(&ob);
  or_release(3, values);
}

/* TopK with k as an attribute (opset 1-9) and as input K (10+), largest and
 * smallest; both outputs. */
static void test_topk_forms(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 3), OR_D(3, 1, 2, 0, 5, 5)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(2)),
  };
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, k == 0 ? 9 : 11);
    or_input(&ob, "a", values[0]);
    if (k == 1) {
      or_input(&ob, "b", values[1]);
    }
    Onnx__NodeProto *node = ob_node(&ob, "TopK", "top", k == 0 ? "a" : "a,b", "v,i");
    if (k == 0) {
      ob_attr_int(&ob, node, "k", 2);
    } else {
      ob_attr_int(&ob, node, "largest", 0);
    }
    or_output(&ob, "v", KILN_DTYPE_FLOAT32);
    or_output(&ob, "i", KILN_DTYPE_INT64);
    or_run_t run;
    or_run(&ob, k + 1, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_topk), 1);
    assert_int_equal(run.num_outputs, 2);
    if (k == 0) { /* largest; the tie (5, 5) keeps the smaller index first */
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(3, 2, 5, 5), 0.0);
      or_assert(run.outputs[1], KILN_DTYPE_INT64, 2, OB_DIMS(2, 2), OR_D(0, 2, 1, 2), 0.0);
    } else {
      or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 2), OR_D(1, 2, 0, 5), 0.0);
      or_assert(run.outputs[1], KILN_DTYPE_INT64, 2, OB_DIMS(2, 2), OR_D(1, 2, 0, 1), 0.0);
    }
    or_run_free(&run);
    ob_free(&ob);
  }
  ob_t ob;
  or_start(&ob, 9, "TopK", "a", 1, values);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (TopK): attribute k is required");
  ob_free(&ob);
  or_release(2, values);
}

static void test_cumsum(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT64, 2, OB_DIMS(2, 3), OR_D(1, 2, 3, 4, 5, 6)),
      or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(1)),
  };
  const double expected[2][6] = {{1, 3, 6, 4, 9, 15}, {5, 3, 0, 11, 6, 0}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 14, "CumSum", "a,b", 2, values);
    if (k == 1) {
      ob_attr_int(&ob, node, "exclusive", 1);
      ob_attr_int(&ob, node, "reverse", 1);
    }
    or_output(&ob, "y", KILN_DTYPE_FLOAT64);
    or_run_t run;
    or_run(&ob, 2, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_cumsum), 1);
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT64, 2, OB_DIMS(2, 3), expected[k], 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  or_release(2, values);
}

/* ---- MaxUnpool ---- */

/* (1, 1, 2, 2) = (5, 6, 7, 8) at flat indices 5, 7, 13, 15 of the 4x4
 * unpooled plane (kernel 2, stride 2); with output_shape 5x5 the same
 * coordinates (1, 1), (1, 3), (3, 1), (3, 3) are 6, 8, 16, 18. */
static void test_max_unpool(void **state) {
  (void)state;
  kiln_tensor_t *values[3] = {
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, 2, 2), OR_D(5, 6, 7, 8)),
      or_tensor(KILN_DTYPE_INT64, 4, OB_DIMS(1, 1, 2, 2), OR_D(5, 7, 13, 15)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(1, 1, 5, 5)),
  };
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 11, "MaxUnpool", k ? "a,b,c" : "a,b", 2 + k, values);
    ob_attr_ints(&ob, node, "kernel_shape", 2, OB_I64(2, 2));
    ob_attr_ints(&ob, node, "strides", 2, OB_I64(2, 2));
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 2 + k, values, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_scatter_elements), 1);
    int64_t side = k ? 5 : 4;
    double expected[25] = {0};
    const int64_t at[2][4] = {{5, 7, 13, 15}, {6, 8, 16, 18}};
    for (int i = 0; i < 4; ++i) {
      expected[at[k][i]] = 5 + i;
    }
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 1, side, side), expected, 0.0);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(values[2]);
  values[2] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(4), OR_D(2, 1, 5, 5));
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 11, "MaxUnpool", "a,b,c", 3, values);
  ob_attr_ints(&ob, node, "kernel_shape", 2, OB_I64(2, 2));
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  kiln_onnx_import_options_t options = {.num_input_values = 3, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"n\" (MaxUnpool): output_shape has 4 values; expected 4 that keep N "
                     "and C");
  ob_free(&ob);
  or_release(3, values);
}

/* ---- shapes ---- */

static void test_trilu(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_INT64, 2, OB_DIMS(3, 3), OR_D(1, 2, 3, 4, 5, 6, 7, 8, 9)),
      or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(-1)),
  };
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 14, "Trilu", "a,b", 2, values);
  ob_attr_int(&ob, node, "upper", 0);
  or_output(&ob, "y", KILN_DTYPE_INT64);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_trilu), 1);
  or_assert(run.outputs[0], KILN_DTYPE_INT64, 2, OB_DIMS(3, 3), OR_D(0, 0, 0, 4, 0, 0, 7, 8, 0),
            0.0);
  or_run_free(&run);
  ob_free(&ob);
  /* no k: upper triangle with the diagonal */
  or_start(&ob, 14, "Trilu", "a", 1, values);
  or_output(&ob, "y", KILN_DTYPE_INT64);
  or_run(&ob, 1, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_INT64, 2, OB_DIMS(3, 3), OR_D(1, 2, 3, 0, 5, 6, 0, 0, 9),
            0.0);
  or_run_free(&run);
  ob_free(&ob);
  or_release(2, values);
}

static void test_tile_and_expand(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_UINT8, 2, OB_DIMS(2, 1), OR_D(1, 2)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(2, 3)),
  };
  ob_t ob;
  or_start(&ob, 13, "Tile", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_tile), 1);
  or_assert(run.outputs[0], KILN_DTYPE_UINT8, 2, OB_DIMS(4, 3),
            OR_D(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  /* Expand (2, 1) to [2, 3]: the broadcast of both shapes */
  or_start(&ob, 13, "Expand", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  or_run(&ob, 2, values, &run);
  assert_int_equal(om_count_calls(run.module, &kiln_op_broadcast_to), 1);
  or_assert(run.outputs[0], KILN_DTYPE_UINT8, 2, OB_DIMS(2, 3), OR_D(1, 1, 1, 2, 2, 2), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[1]);
  values[1] = or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(3), OR_D(2, 3, 4));
  or_start(&ob, 13, "Tile", "a,b", 2, values);
  or_output(&ob, "y", KILN_DTYPE_UINT8);
  kiln_onnx_import_options_t options = {.num_input_values = 2, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"n\" (Tile): repeats has 3 values; the input has rank 2");
  ob_free(&ob);
  or_release(2, values);
}

/* (1, 8, 1, 1) = 0..7 with blocksize 2 gives two 2x2 planes: DCR takes
 * channels c, c + 2, c + 4, c + 6 for plane c, CRD channels 4c .. 4c + 3;
 * SpaceToDepth undoes DCR. */
static void test_depth_space(void **state) {
  (void)state;
  kiln_tensor_t *x =
      or_tensor(KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 8, 1, 1), OR_D(0, 1, 2, 3, 4, 5, 6, 7));
  const char *modes[2] = {"DCR", "CRD"};
  const double expected[2][8] = {{0, 2, 4, 6, 1, 3, 5, 7}, {0, 1, 2, 3, 4, 5, 6, 7}};
  for (int k = 0; k < 2; ++k) {
    ob_t ob;
    ob_init(&ob, 13);
    or_input(&ob, "x", x);
    Onnx__NodeProto *node = ob_node(&ob, "DepthToSpace", "d2s", "x", "s");
    ob_attr_int(&ob, node, "blocksize", 2);
    ob_attr_string(&ob, node, "mode", modes[k]);
    node = ob_node(&ob, "SpaceToDepth", "s2d", "s", "back");
    ob_attr_int(&ob, node, "blocksize", 2);
    or_output(&ob, "s", KILN_DTYPE_FLOAT32);
    or_output(&ob, "back", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 1, &x, &run);
    assert_int_equal(om_count_calls(run.module, &kiln_op_depth_to_space), 1);
    assert_int_equal(om_count_calls(run.module, &kiln_op_space_to_depth), 1);
    /* channel c of the output, then the 2x2 block of each: (1, 2, 2, 2) */
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 2, 2, 2), expected[k], 0.0);
    if (k == 0) { /* SpaceToDepth is DCR's inverse */
      or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 4, OB_DIMS(1, 8, 1, 1),
                OR_D(0, 1, 2, 3, 4, 5, 6, 7), 0.0);
    }
    or_run_free(&run);
    ob_free(&ob);
  }
  ob_t ob;
  or_start(&ob, 13, "DepthToSpace", "a", 1, &x);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (DepthToSpace): attribute blocksize is required");
  ob_free(&ob);
  kiln_tensor_release(x);
}

static void test_eye_like_and_range(void **state) {
  (void)state;
  kiln_tensor_t *x = or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 3), OR_D(9, 9, 9, 9, 9, 9));
  ob_t ob;
  Onnx__NodeProto *node = or_start(&ob, 13, "EyeLike", "a", 1, &x);
  ob_attr_int(&ob, node, "k", 1);
  ob_attr_int(&ob, node, "dtype", OB_INT32);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  or_run_t run;
  or_run(&ob, 1, &x, &run);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 2, OB_DIMS(2, 3), OR_D(0, 1, 0, 0, 0, 1), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(x);
  x = or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2));
  or_start(&ob, 13, "EyeLike", "a", 1, &x);
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"n\" (EyeLike): the input has rank 1; EyeLike needs a 2-D input");
  ob_free(&ob);
  kiln_tensor_release(x);

  /* Range: arange with the inputs as attributes; int32 from 10 down to 3 */
  kiln_tensor_t *values[3] = {or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(10)),
                              or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(3)),
                              or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(-3))};
  or_start(&ob, 11, "Range", "a,b,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  or_run(&ob, 3, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_INT32, 1, OB_DIMS(3), OR_D(10, 7, 4), 0.0);
  or_run_free(&run);
  ob_free(&ob);
  kiln_tensor_release(values[2]);
  values[2] = or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(0));
  or_start(&ob, 11, "Range", "a,b,c", 3, values);
  or_output(&ob, "y", KILN_DTYPE_INT32);
  kiln_onnx_import_options_t options = {.num_input_values = 3, .input_values = values};
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(ob_import(&ob, &options, kiln_allocator_system(), &module), INVALID_ARGUMENT,
                     "node \"n\" (Range): arange: ");
  ob_free(&ob);
  or_release(3, values);
}

/* Hann, Hamming and Blackman windows of size 4: periodic (N = 4) and
 * symmetric (N = 3). */
static void test_windows(void **state) {
  (void)state;
  kiln_tensor_t *size = or_tensor(KILN_DTYPE_INT32, 0, NULL, OR_D(4));
  const char *ops[3] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
  const double a0[3] = {0.5, 25.0 / 46, 0.42}, a1[3] = {0.5, 21.0 / 46, 0.5};
  const double a2[3] = {0, 0, 0.08};
  for (int k = 0; k < 6; ++k) {
    int f = k % 3;
    bool periodic = k < 3;
    ob_t ob;
    Onnx__NodeProto *node = or_start(&ob, 17, ops[f], "a", 1, &size);
    if (!periodic) {
      ob_attr_int(&ob, node, "periodic", 0);
    }
    or_output(&ob, "y", KILN_DTYPE_FLOAT32);
    or_run_t run;
    or_run(&ob, 1, &size, &run);
    double expected[4], n = periodic ? 4 : 3;
    for (int i = 0; i < 4; ++i) {
      double angle = 2 * 3.14159265358979323846 * i / n;
      expected[i] = a0[f] - a1[f] * cos(angle) + a2[f] * cos(2 * angle);
    }
    or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(4), expected, 1e-7);
    or_run_free(&run);
    ob_free(&ob);
  }
  kiln_tensor_release(size);
}

/* Reshape's shape computed from a graph input: evaluated at import when the
 * options give the input's value (the input stays a parameter), refused
 * naming the input when they do not. */
static void test_constant_computed_from_inputs(void **state) {
  (void)state;
  kiln_tensor_t *values[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(6), OR_D(1, 2, 3, 4, 5, 6)),
      or_tensor(KILN_DTYPE_INT64, 1, OB_DIMS(2), OR_D(3, 1)),
  };
  ob_t ob;
  ob_init(&ob, 13);
  or_input(&ob, "x", values[0]);
  or_input(&ob, "s", values[1]);
  ob_init_i64(&ob, "scale", 1, OB_DIMS(2), OB_I64(1, 2));
  ob_node(&ob, "Mul", "m", "s,scale", "shape");
  ob_node(&ob, "Reshape", "r", "x,shape", "y");
  or_output(&ob, "y", KILN_DTYPE_FLOAT32);
  or_run_t run;
  or_run(&ob, 2, values, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 2), OR_D(1, 2, 3, 4, 5, 6), 0.0);
  or_run_free(&run);
  /* Without the values the shape is known only at run time: dyn.reshape. */
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  assert_int_equal(om_count_calls(module, &kiln_op_dyn_reshape), 1);
  kiln_module_destroy(module);
  ob_free(&ob);
  or_release(2, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_gather_elements_and_nd, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_elements_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_nd, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_hot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk_forms, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cumsum, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_unpool, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trilu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tile_and_expand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depth_space, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eye_like_and_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_constant_computed_from_inputs, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
