/*
 * ONNX control flow through the importer and the interpreter
 * (onnx_control.c): Loop with a trip count given only at run time (0, 1 and
 * 5 on one imported module) whose body captures a value of the main graph,
 * an If nested in a Loop body capturing the main graph's value through both
 * bodies, Scan in reverse on axis 1, the sequence operators, and the errors
 * a bad subgraph gives, each naming the node. Shapes known at run time: a
 * SequenceMap over elements of different lengths whose body adds a tensor
 * and takes a Shape, the same adding mismatched elements (an error at run
 * time), and a Loop whose carried value comes back from a Slice of run-time
 * bounds (ONNX's test_loop11).
 */
#include <stdio.h>
#include <string.h>

#include "interp/value.h"
#include "kiln_test.h"
#include "onnx_run.h"
#include "pass/pipeline.h"

#define F32  ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64  ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

/* Runs @main of `module` on `count` tensors; the caller releases. */
static void run_main(kiln_module_t *module, int count, kiln_tensor_t *const *inputs,
                     or_run_t *out_run) {
  out_run->module = module;
  KILN_ASSERT_OK(kiln_interp_run(module, "main", count, inputs, kiln_allocator_system(),
                                 &out_run->num_outputs, &out_run->outputs));
}

/* ---- Loop ---- */

/* acc' = acc + x * (i + 1) for i < n, x captured from the main graph;
 * scan-free, so the outputs are the final accumulator. */
static void build_loop(ob_t *ob, ob_t *body) {
  ob_init(ob, 13);
  ob_input(ob, "n", I64, 0, OB_DIMS(0));
  ob_input(ob, "acc0", F32, 1, OB_DIMS(2));
  ob_input(ob, "x", F32, 1, OB_DIMS(2));
  ob_init(body, 13);
  ob_input(body, "i", I64, 0, OB_DIMS(0));
  ob_input(body, "c", BOOL, 0, OB_DIMS(0));
  ob_input(body, "acc", F32, 1, OB_DIMS(2));
  ob_init_i64(body, "one", 0, OB_DIMS(0), (int64_t[]){1});
  ob_node(body, "Add", "", "i,one", "i1");
  ob_node(body, "Cast", "cast", "i1", "f");
  ob_attr_int(body, body->nodes[1], "to", F32);
  ob_node(body, "Mul", "", "x,f", "step");
  ob_node(body, "Add", "", "acc,step", "acc1");
  ob_node(body, "Identity", "", "c", "c1");
  ob_output(body, "c1", BOOL, 0, NULL);
  ob_output(body, "acc1", F32, 0, NULL);
  Onnx__NodeProto *loop = ob_node(ob, "Loop", "loop", "n,,acc0", "acc_n");
  ob_attr_graph(ob, loop, "body", body);
  ob_output(ob, "acc_n", F32, 0, NULL);
}

static void test_loop_trip_count_at_run_time(void **state) {
  (void)state;
  ob_t ob, body;
  build_loop(&ob, &body);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  static const int64_t trips[] = {0, 1, 5};
  for (int t = 0; t < 3; ++t) {
    kiln_tensor_t *inputs[3] = {
        or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D((double)trips[t])),
        or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, -1)),
        or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(2, 3)),
    };
    or_run_t run;
    run_main(module, 3, inputs, &run);
    double sum = (double)(trips[t] * (trips[t] + 1) / 2); /* 1 + 2 + ... + n */
    assert_int_equal(run.num_outputs, 1);
    const float *out = kiln_tensor_data(run.outputs[0]);
    assert_float_equal(out[0], 1 + 2 * sum, 1e-5);
    assert_float_equal(out[1], -1 + 3 * sum, 1e-5);
    for (int i = 0; i < run.num_outputs; ++i) {
      kiln_tensor_release(run.outputs[i]);
    }
    kiln_allocator_free(kiln_allocator_system(), run.outputs);
    for (int i = 0; i < 3; ++i) {
      kiln_tensor_release(inputs[i]);
    }
  }
  KILN_ASSERT_STATUS(kiln_pass_check_static(module), UNIMPLEMENTED, "= loop");
  kiln_module_destroy(module);
  ob_free(&body);
  ob_free(&ob);
}

/* No trip count: the body's condition i + 1 < limit (limit captured)
 * ends the loop after `limit` iterations. */
static void test_loop_ended_by_its_condition(void **state) {
  (void)state;
  ob_t ob, body;
  build_loop(&ob, &body);
  ob_input(&ob, "limit", I64, 0, OB_DIMS(0));
  ob_input(&ob, "go", BOOL, 0, OB_DIMS(0));
  ob.nodes[0]->input = ob_alloc(&ob, sizeof(char *) * 3);
  ob.nodes[0]->input[0] = ob_strdup(&ob, "");
  ob.nodes[0]->input[1] = ob_strdup(&ob, "go");
  ob.nodes[0]->input[2] = ob_strdup(&ob, "acc0");
  ob_node(&body, "Less", "", "i1,limit", "more");
  body.graph.output[0]->name = ob_strdup(&body, "more");
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_tensor_t *inputs[5] = {or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(0)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0, 0)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2)),
                              or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(4)),
                              or_tensor(KILN_DTYPE_BOOL, 0, NULL, OR_D(1))};
  or_run_t run;
  run_main(module, 5, inputs, &run);
  om_assert_f32(run.outputs[0], (float[]){10, 20}, 2, 1e-6); /* x (1 + 2 + 3 + 4) */
  or_run_free(&run);
  for (int i = 0; i < 5; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  ob_free(&body);
  ob_free(&ob);
}

/* Scan outputs stacked on a dim known only at run time: the body gives
 * x * i at each iteration, for trip counts 0, 1 and 3 on one module. */
static void test_loop_scan_outputs_at_run_time(void **state) {
  (void)state;
  ob_t ob, body;
  build_loop(&ob, &body);
  ob.nodes[0]->n_output = 2;
  ob.nodes[0]->output = ob_alloc(&ob, sizeof(char *) * 2);
  ob.nodes[0]->output[0] = ob_strdup(&ob, "acc_n");
  ob.nodes[0]->output[1] = ob_strdup(&ob, "steps");
  ob_output(&ob, "steps", F32, 0, NULL);
  ob_output(&body, "step", F32, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  for (int64_t n = 0; n < 4; n += n == 1 ? 2 : 1) {
    kiln_tensor_t *inputs[3] = {or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D((double)n)),
                                or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0, 0)),
                                or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2))};
    or_run_t run;
    run_main(module, 3, inputs, &run);
    assert_int_equal(run.num_outputs, 2);
    assert_int_equal(kiln_tensor_ndim(run.outputs[1]), 2);
    assert_int_equal(kiln_tensor_shape(run.outputs[1])[0], n);
    const float *steps = kiln_tensor_data(run.outputs[1]);
    for (int64_t i = 0; i < n; ++i) {
      assert_float_equal(steps[2 * i], (float)(i + 1), 1e-6);
      assert_float_equal(steps[2 * i + 1], (float)(2 * (i + 1)), 1e-6);
    }
    for (int i = 0; i < run.num_outputs; ++i) {
      kiln_tensor_release(run.outputs[i]);
    }
    kiln_allocator_free(kiln_allocator_system(), run.outputs);
    for (int i = 0; i < 3; ++i) {
      kiln_tensor_release(inputs[i]);
    }
  }
  kiln_module_destroy(module);
  ob_free(&body);
  ob_free(&ob);
}

/* A Loop whose body holds an If; the If's branches use the main graph's y,
 * captured through the Loop body: acc' = acc + (i is even ? y : -y). */
static void test_if_in_loop_captures_through_both_bodies(void **state) {
  (void)state;
  ob_t ob, body, then_graph, else_graph;
  ob_init(&ob, 13);
  ob_input(&ob, "n", I64, 0, OB_DIMS(0));
  ob_input(&ob, "acc0", F32, 1, OB_DIMS(1));
  ob_input(&ob, "y", F32, 1, OB_DIMS(1));
  ob_init(&then_graph, 13);
  ob_node(&then_graph, "Identity", "", "y", "t");
  ob_output(&then_graph, "t", F32, 0, NULL);
  ob_init(&else_graph, 13);
  ob_node(&else_graph, "Neg", "", "y", "e");
  ob_output(&else_graph, "e", F32, 0, NULL);
  ob_init(&body, 13);
  ob_input(&body, "i", I64, 0, OB_DIMS(0));
  ob_input(&body, "c", BOOL, 0, OB_DIMS(0));
  ob_input(&body, "acc", F32, 1, OB_DIMS(1));
  ob_init_i64(&body, "two", 0, OB_DIMS(0), (int64_t[]){2});
  ob_init_i64(&body, "zero", 0, OB_DIMS(0), (int64_t[]){0});
  ob_node(&body, "Mod", "", "i,two", "r");
  ob_node(&body, "Equal", "", "r,zero", "even");
  Onnx__NodeProto *branch = ob_node(&body, "If", "pick", "even", "term");
  ob_attr_graph(&body, branch, "then_branch", &then_graph);
  ob_attr_graph(&body, branch, "else_branch", &else_graph);
  ob_node(&body, "Add", "", "acc,term", "acc1");
  ob_node(&body, "Identity", "", "c", "c1");
  ob_output(&body, "c1", BOOL, 0, NULL);
  ob_output(&body, "acc1", F32, 0, NULL);
  Onnx__NodeProto *loop = ob_node(&ob, "Loop", "loop", "n,,acc0", "acc_n");
  ob_attr_graph(&ob, loop, "body", &body);
  ob_output(&ob, "acc_n", F32, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_tensor_t *inputs[3] = {or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(5)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(10)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(3))};
  or_run_t run;
  run_main(module, 3, inputs, &run);
  /* i = 0..4: + - + - + */
  assert_float_equal(((const float *)kiln_tensor_data(run.outputs[0]))[0], 10 + 3, 1e-6);
  or_run_free(&run);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  ob_free(&then_graph);
  ob_free(&else_graph);
  ob_free(&body);
  ob_free(&ob);
}

/* ---- Scan ---- */

/* Running sums of x (2, 3) along axis 1, in reverse; the scan output is
 * stacked on axis 0. */
static void test_scan_reverse_on_axis_1(void **state) {
  (void)state;
  ob_t ob, body;
  ob_init(&ob, 16);
  ob_input(&ob, "s0", F32, 1, OB_DIMS(2));
  ob_input(&ob, "x", F32, 2, OB_DIMS(2, 3));
  ob_init(&body, 16);
  ob_input(&body, "s", F32, 1, OB_DIMS(2));
  ob_input(&body, "xi", F32, 1, OB_DIMS(2));
  ob_node(&body, "Add", "", "s,xi", "s1");
  ob_node(&body, "Identity", "", "s1", "out");
  ob_output(&body, "s1", F32, 0, NULL);
  ob_output(&body, "out", F32, 0, NULL);
  Onnx__NodeProto *scan = ob_node(&ob, "Scan", "scan", "s0,x", "s_n,outs");
  ob_attr_graph(&ob, scan, "body", &body);
  ob_attr_int(&ob, scan, "num_scan_inputs", 1);
  ob_attr_ints(&ob, scan, "scan_input_axes", 1, (int64_t[]){1});
  ob_attr_ints(&ob, scan, "scan_input_directions", 1, (int64_t[]){1});
  ob_output(&ob, "s_n", F32, 0, NULL);
  ob_output(&ob, "outs", F32, 0, NULL);
  kiln_tensor_t *inputs[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(0, 100)),
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(2, 3), OR_D(1, 2, 3, 4, 5, 6))};
  or_run_t run;
  or_run(&ob, 2, inputs, &run);
  om_assert_f32(run.outputs[0], (float[]){6, 115}, 2, 1e-6);
  /* steps take columns 2, 1, 0: sums (3, 106), (5, 111), (6, 115) */
  assert_int_equal(kiln_tensor_shape(run.outputs[1])[0], 3);
  om_assert_f32(run.outputs[1], (float[]){3, 106, 5, 111, 6, 115}, 6, 1e-6);
  or_run_free(&run);
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  ob_free(&body);
  ob_free(&ob);
}

/* ---- sequences ---- */

/* SplitToSequence, SequenceErase, SequenceInsert at a position,
 * SequenceLength and SequenceAt with a negative position. */
static void test_sequence_operators(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", F32, 2, OB_DIMS(3, 2));
  ob_input(&ob, "extra", F32, 1, OB_DIMS(2));
  ob_init_i64(&ob, "first", 0, OB_DIMS(0), (int64_t[]){0});
  ob_init_i64(&ob, "last", 0, OB_DIMS(0), (int64_t[]){-1});
  Onnx__NodeProto *split = ob_node(&ob, "SplitToSequence", "split", "x", "rows");
  ob_attr_int(&ob, split, "keepdims", 0);
  ob_node(&ob, "SequenceErase", "erase", "rows,first", "rest");
  ob_node(&ob, "SequenceInsert", "insert", "rest,extra,first", "more");
  ob_node(&ob, "SequenceLength", "length", "more", "n");
  ob_node(&ob, "SequenceAt", "at", "more,last", "tail");
  ob_node(&ob, "SequenceAt", "at0", "more,first", "head");
  ob_output(&ob, "n", I64, 0, NULL);
  ob_output(&ob, "tail", F32, 0, NULL);
  ob_output(&ob, "head", F32, 0, NULL);
  kiln_tensor_t *inputs[2] = {
      or_tensor(KILN_DTYPE_FLOAT32, 2, OB_DIMS(3, 2), OR_D(1, 2, 3, 4, 5, 6)),
      or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(7, 8))};
  or_run_t run;
  or_run(&ob, 2, inputs, &run);
  om_assert_i64(run.outputs[0], (int64_t[]){3}, 1);
  om_assert_f32(run.outputs[1], (float[]){5, 6}, 2, 0);
  om_assert_f32(run.outputs[2], (float[]){7, 8}, 2, 0);
  or_run_free(&run);
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  ob_free(&ob);
}

/* A position past the end is an error at run time naming the operator. */
static void test_sequence_position_out_of_range(void **state) {
  (void)state;
  ob_t ob;
  ob_init(&ob, 13);
  ob_input(&ob, "x", F32, 1, OB_DIMS(2));
  ob_input(&ob, "p", I64, 0, OB_DIMS(0));
  ob_node(&ob, "SequenceConstruct", "make", "x,x", "s");
  ob_node(&ob, "SequenceAt", "at", "s,p", "y");
  ob_output(&ob, "y", F32, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_tensor_t *inputs[2] = {or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2)),
                              or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(2))};
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_STATUS(
      kiln_interp_run(module, "main", 2, inputs, kiln_allocator_system(), &count, &outputs),
      OUT_OF_RANGE, "seq.at: position 2 is outside a sequence of 2 elements");
  for (int i = 0; i < 2; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  kiln_module_destroy(module);
  ob_free(&ob);
}

/* ---- errors ---- */

/* A sequence where an operator takes tensors is refused at import, naming
 * the node, the input and its type (found by the ONNX importer's fuzzer:
 * Pow read a sequence's tensor type, NULL). */
static void test_sequence_into_a_tensor_operator(void **state) {
  (void)state;
  const char *ops[] = {"Pow", "Add", "Relu"};
  for (int i = 0; i < 3; ++i) {
    ob_t ob;
    ob_init(&ob, 13);
    ob_input(&ob, "x", F32, 1, OB_DIMS(2));
    ob_node(&ob, "SequenceConstruct", "make", "x,x", "s");
    ob_node(&ob, ops[i], "bad", i == 2 ? "s" : "s,x", "y");
    ob_output(&ob, "y", F32, 1, OB_DIMS(2));
    char expected[160];
    snprintf(expected, sizeof(expected),
             "node \"bad\" (%s): input 0 is Sequence[Tensor[(2), float32]]; %s takes tensors",
             ops[i], ops[i]);
    KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT, expected);
    ob_free(&ob);
  }
}

static void test_bad_subgraphs_name_the_node(void **state) {
  (void)state;
  ob_t ob, body;
  build_loop(&ob, &body);
  body.nodes[2]->input[0] = ob_strdup(&body, "nowhere");
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"loop\" (Loop): body: node #2 (Mul): input 0 names \"nowhere\"");
  ob_free(&body);
  ob_free(&ob);

  build_loop(&ob, &body);
  body.graph.n_input = 2; /* the body must take i, c and the carried value */
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"loop\" (Loop): body: the graph has 2 inputs, expected 3");
  ob_free(&body);
  ob_free(&ob);

  build_loop(&ob, &body);
  body.graph.n_output = 1; /* only the condition: the carried value is missing */
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"loop\" (Loop): loop: the body must return the condition (one bool) "
                     "and 1 loop-carried values");
  ob_free(&body);
  ob_free(&ob);

  build_loop(&ob, &body);
  ob.nodes[0]->n_attribute = 0;
  KILN_ASSERT_STATUS(or_import_plain(&ob), INVALID_ARGUMENT,
                     "node \"loop\" (Loop): attribute body (a graph) is missing");
  ob_free(&body);
  ob_free(&ob);
}

/* ---- shapes known at run time in sequences and loops ---- */

/* s = [a (2), b (3)] is Sequence[Tensor[(?), float32]] (r = [b, a] too);
 * SequenceMap adds input `k_name` (the tensor k, or an element of r) to
 * each element and takes each sum's Shape (shape_of, read at run time);
 * the second element's results come out. */
static void build_map(ob_t *ob, ob_t *body, const char *k_name) {
  ob_init(ob, 17);
  ob_input(ob, "a", F32, 1, OB_DIMS(2));
  ob_input(ob, "b", F32, 1, OB_DIMS(3));
  ob_input(ob, "k", F32, 1, OB_DIMS(1));
  ob_init_i64(ob, "one", 0, OB_DIMS(0), (int64_t[]){1});
  ob_node(ob, "SequenceConstruct", "make", "a,b", "s");
  ob_node(ob, "SequenceConstruct", "make_r", "b,a", "r");
  ob_init(body, 17);
  ob_input(body, "x", F32, 1, OB_DIMS(OB_SYMBOLIC));
  ob_input(body, "t", F32, 1, OB_DIMS(OB_SYMBOLIC));
  ob_node(body, "Add", "add", "x,t", "sum");
  ob_node(body, "Shape", "shape", "sum", "n");
  ob_output(body, "sum", F32, 0, NULL);
  ob_output(body, "n", I64, 0, NULL);
  char inputs[16];
  snprintf(inputs, sizeof(inputs), "s,%s", k_name);
  Onnx__NodeProto *map = ob_node(ob, "SequenceMap", "map", inputs, "sums,ns");
  ob_attr_graph(ob, map, "body", body);
  ob_node(ob, "SequenceAt", "at", "sums,one", "second");
  ob_node(ob, "SequenceAt", "at_n", "ns,one", "second_n");
  ob_output(ob, "second", F32, 0, NULL);
  ob_output(ob, "second_n", I64, 0, NULL);
}

static void test_sequence_map_over_run_time_shapes(void **state) {
  (void)state;
  ob_t ob, body;
  build_map(&ob, &body, "k");
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_tensor_t *inputs[3] = {or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(3, 4, 5)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(10))};
  or_run_t run;
  run_main(module, 3, inputs, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(13, 14, 15), 0);
  or_assert(run.outputs[1], KILN_DTYPE_INT64, 1, OB_DIMS(1), OR_D(3), 0);
  or_run_free(&run);
  or_release(3, inputs);
  ob_free(&body);
  ob_free(&ob);
}

/* The same body adding each element to the sequence's other element (b,
 * then a, by a second SequenceMap input): (2) + (3) types at import, the
 * two anonymous dims taken as equal, and fails at run time naming the
 * element and the shapes. */
static void test_sequence_map_shapes_checked_at_run_time(void **state) {
  (void)state;
  ob_t ob, body;
  build_map(&ob, &body, "r");
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_tensor_t *inputs[3] = {or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(2), OR_D(1, 2)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(3), OR_D(3, 4, 5)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(10))};
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  KILN_ASSERT_STATUS(
      kiln_interp_run(module, "main", 3, inputs, kiln_allocator_system(), &count, &outputs),
      INVALID_ARGUMENT, "in element 0");
  KILN_ASSERT_STATUS(
      kiln_interp_run(module, "main", 3, inputs, kiln_allocator_system(), &count, &outputs),
      INVALID_ARGUMENT, "cannot broadcast (2,) and (3,)");
  kiln_module_destroy(module);
  or_release(3, inputs);
  ob_free(&body);
  ob_free(&ob);
}

/* ONNX's test_loop11 in small: y' = y + x[i:i+1] (a Slice whose starts are
 * computed from the iteration number, so its result is (?)); the carried y
 * goes in as (1) and comes back (?), so the body is typed again with y (?)
 * and adds two anonymous dims. y0 = [0], x = [1..5], 5 trips: y = 15, the
 * scan outputs the running sums. */
static void test_loop_carried_value_of_run_time_shape(void **state) {
  (void)state;
  ob_t ob, body;
  ob_init(&ob, 13);
  ob_input(&ob, "n", I64, 0, OB_DIMS(0));
  ob_input(&ob, "y0", F32, 1, OB_DIMS(1));
  ob_input(&ob, "x", F32, 1, OB_DIMS(5));
  ob_init(&body, 13);
  ob_input(&body, "i", I64, 0, OB_DIMS(0));
  ob_input(&body, "c", BOOL, 0, OB_DIMS(0));
  ob_input(&body, "y", F32, 1, OB_DIMS(1));
  ob_init_i64(&body, "one", 0, OB_DIMS(0), (int64_t[]){1});
  ob_init_i64(&body, "axes", 1, OB_DIMS(1), (int64_t[]){0});
  ob_node(&body, "Add", "end", "i,one", "e");
  ob_node(&body, "Unsqueeze", "start1", "i,axes", "s1");
  ob_node(&body, "Unsqueeze", "end1", "e,axes", "e1");
  ob_node(&body, "Slice", "slice", "x,s1,e1", "piece");
  ob_node(&body, "Add", "acc", "y,piece", "y1");
  ob_node(&body, "Identity", "", "c", "c1");
  ob_node(&body, "Identity", "", "y1", "scan");
  ob_output(&body, "c1", BOOL, 0, NULL);
  ob_output(&body, "y1", F32, 0, NULL);
  ob_output(&body, "scan", F32, 0, NULL);
  Onnx__NodeProto *loop = ob_node(&ob, "Loop", "loop", "n,,y0", "y_n,sums");
  ob_attr_graph(&ob, loop, "body", &body);
  ob_output(&ob, "y_n", F32, 0, NULL);
  ob_output(&ob, "sums", F32, 0, NULL);
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(ob_import(&ob, NULL, kiln_allocator_system(), &module));
  kiln_tensor_t *inputs[3] = {or_tensor(KILN_DTYPE_INT64, 0, NULL, OR_D(5)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(0)),
                              or_tensor(KILN_DTYPE_FLOAT32, 1, OB_DIMS(5), OR_D(1, 2, 3, 4, 5))};
  or_run_t run;
  run_main(module, 3, inputs, &run);
  or_assert(run.outputs[0], KILN_DTYPE_FLOAT32, 1, OB_DIMS(1), OR_D(15), 0);
  or_assert(run.outputs[1], KILN_DTYPE_FLOAT32, 2, OB_DIMS(5, 1), OR_D(1, 3, 6, 10, 15), 0);
  or_run_free(&run);
  or_release(3, inputs);
  ob_free(&body);
  ob_free(&ob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_loop_trip_count_at_run_time, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_ended_by_its_condition, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_scan_outputs_at_run_time, setup, teardown),
      cmocka_unit_test_setup_teardown(test_if_in_loop_captures_through_both_bodies, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_scan_reverse_on_axis_1, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_operators, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_position_out_of_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_into_a_tensor_operator, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_subgraphs_name_the_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_map_over_run_time_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_map_shapes_checked_at_run_time, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_loop_carried_value_of_run_time_shape, setup, teardown),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
