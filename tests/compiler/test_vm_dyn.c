/*
 * Dyn views compiled for the VM (compiler/graph_codegen.c, vm_symbolic.c,
 * runtime/shape_func.c): a module whose dyn.reshape, dyn.unsqueeze and
 * dyn.squeeze read their shape and axes from run-time inputs compiles once
 * (AUTO picks the VM, since their outputs have dims known only at run
 * time), with no kernel for the views (shape_func and reshape_tensor
 * instructions) and a kernel over run-time extents for the exp between them,
 * and matches the reference interpreter at several shape values on one
 * executor. Values the rules reject (a reshape whose element count differs,
 * an axis out of range, a squeezed dim that is not 1) fail the run with the
 * rule's message, never a crash; the graph executor refuses the module.
 * dyn.broadcast_to (ONNX Expand, ConstantOfShape) is a kernel over run-time
 * output extents whose output the runtime's shape function sizes, and
 * dyn.strided_slice (ONNX Slice) one that reads begin, strides and axes in
 * the kernel; so do dyn.arange (start and step), dyn.one_hot (depth and
 * values) and dyn.sum (the axes), each at several values against the
 * interpreter, with the values their rules refuse. dyn.split (ONNX Split
 * with run-time sizes) is the runtime's extern kernel, checked the same way.
 * dyn.cumsum's output is
 * static: the graph executor runs its kernel, which walks the axis read at
 * run time and asserts it is in range.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "ir/infer.h"
#include "ir/text.h"
#include "kiln/compiler.h"
#include "kiln_compute_test.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"

/* %1 = exp of a reshape of x; %3 drops the dim %2 added back. */
static const char views[] = "def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64],\n"
                            "          %a: Tensor[(1), int64], %b: Tensor[(1), int64]) {\n"
                            "  %0 = dyn.reshape(%x, %s);\n"
                            "  %1 = exp(%0);\n"
                            "  %2 = dyn.unsqueeze(%1, %a);\n"
                            "  %3 = dyn.squeeze(%2, %b);\n"
                            "  (%0, %3)\n"
                            "}\n";

static kiln_module_t *parse(void) {
  return irt_parse("views", views);
}

static kiln_compiled_t *compile(void) {
  return irt_compile_vm("views", views);
}

static kiln_tensor_t *ints(int count, const int64_t *values) {
  kiln_tensor_t *t = NULL;
  int64_t shape[1] = {count};
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 1, shape,
                                         values, sizeof(int64_t) * (size_t)count, &t));
  return t;
}

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

/* The inputs of one case: x, then the reshape's shape and the axes. */
static void make_inputs(const int64_t *shape, int64_t a, int64_t b, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){2, 3, 4}, -1, 1);
  in[1] = ints(2, shape);
  in[2] = ints(1, &a);
  in[3] = ints(1, &b);
}

static void set_inputs(kiln_graph_executor_t *vm, kiln_tensor_t **in) {
  for (int i = 0; i < 4; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
}

/* Case c: the `num_inputs` inputs `in` on the reference and on `vm`, every
 * output compared. */
static void compare_run(kiln_module_t *reference, kiln_graph_executor_t *vm, int num_inputs,
                        kiln_tensor_t **in, int c) {
  char what[32];
  snprintf(what, sizeof(what), "case %d", c);
  assert_true(irt_run_against_interp(reference, vm, num_inputs, in, what) > 0);
}

static void run_case(kiln_module_t *reference, kiln_graph_executor_t *vm, kiln_tensor_t **in,
                     int c) {
  compare_run(reference, vm, 4, in, c);
}

static void test_views_at_several_shapes(void **state) {
  (void)state;
  kiln_module_t *reference = parse();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_compiled_t *compiled = compile();
  const char *program = compiled->vm_json;
  assert_non_null(strstr(program, "\"shape_func\""));
  assert_non_null(strstr(program, "\"dyn.reshape\""));
  assert_null(strstr(program, "fused_dyn")); /* no kernel for a view */
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  /* shape, unsqueeze's axis, squeeze's axis: 0 copies x's dim, -1 is inferred */
  const int64_t cases[][4] = {{6, 4, 0, 0},  {-1, 2, 2, -1}, {0, -1, -1, 2},
                              {24, 1, 1, 1}, {3, 8, -3, 0},  {4, 6, 1, -2}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[4];
    make_inputs(cases[c], cases[c][2], cases[c][3], in);
    run_case(reference, vm, in, c);
    release_all(4, in);
  }
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
}

/* A run whose values the rules reject fails with `message`, and the next
 * good run still works. */
static void expect_run_error(kiln_graph_executor_t *vm, const int64_t *shape, int64_t a, int64_t b,
                             const char *message) {
  kiln_tensor_t *in[4];
  make_inputs(shape, a, b, in);
  set_inputs(vm, in);
  kiln_status_t status = kiln_graph_executor_run(vm);
  if (kiln_status_code(status) != KILN_STATUS_CODE_INVALID_ARGUMENT ||
      !strstr(kiln_status_message(status), message)) {
    fail_msg("got \"%s\", expected \"%s\"", status ? kiln_status_message(status) : "OK", message);
  }
  kiln_status_free(status);
  release_all(4, in);
}

static void test_bad_values(void **state) {
  (void)state;
  kiln_compiled_t *compiled = compile();
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  expect_run_error(vm, (const int64_t[]){5, 5}, 0, 0,
                   "(shape_func): dyn.reshape: cannot reshape data (2, 3, 4) of 24 elements into "
                   "[5, 5]");
  expect_run_error(vm, (const int64_t[]){-1, -1}, 0, 0,
                   "dyn.reshape: shape [-1, -1] is not a shape for data (2, 3, 4)");
  expect_run_error(vm, (const int64_t[]){6, 4}, 3, 0,
                   "dyn.unsqueeze: axis 3 of axes [3] is out of range or repeated for rank 3");
  expect_run_error(vm, (const int64_t[]){6, 4}, 0, 1,
                   "dyn.squeeze: axis 1 of data (1, 6, 4) has size 6, not 1");
  kiln_module_t *reference = parse();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_tensor_t *in[4];
  make_inputs((const int64_t[]){12, 2}, 1, 1, in);
  run_case(reference, vm, in, 0);
  release_all(4, in);
  kiln_module_destroy(reference);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
}

static void test_graph_executor_refuses(void **state) {
  (void)state;
  kiln_module_t *module = parse();
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.executor = KILN_EXECUTOR_GRAPH;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_STATUS(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled),
                     UNIMPLEMENTED,
                     "--executor graph (the VM takes symbolic dims and dyn operators: --executor "
                     "vm or auto): the graph compiler: in @main, %0 = dyn.reshape has the type "
                     "Tensor[(?, ?), float32] with the symbolic dim ? (dim 0)");
  assert_null(compiled);
  kiln_module_destroy(module);
}

/* ---- dyn.broadcast_to: a kernel over run-time output extents ---- */

/* ONNX Expand of x, and ConstantOfShape's form (a rank-0 value broadcast to
 * a run-time shape), each followed by a kernel over their "?" dims. */
static const char expand[] =
    "def @main(%x: Tensor[(3, 1), float32], %s: Tensor[(3), int64], %v: Tensor[(), float32],\n"
    "          %t: Tensor[(2), int64]) {\n"
    "  %0 = dyn.broadcast_to(%x, %s);\n"
    "  %1 = add(%0, %0);\n"
    "  %2 = dyn.broadcast_to(%v, %t);\n"
    "  (%1, %2)\n"
    "}\n";

static kiln_module_t *parse_expand(void) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("expand", expand, kiln_allocator_system(), &module));
  return module;
}

static void expand_inputs(const int64_t *s, const int64_t *t, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){3, 1}, -1, 1);
  in[1] = ints(3, s);
  in[2] = random_tensor(KILN_DTYPE_FLOAT32, 0, NULL, -1, 1);
  in[3] = ints(2, t);
}

static void test_broadcast_to_at_several_shapes(void **state) {
  (void)state;
  kiln_module_t *reference = parse_expand();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_module_t *module = parse_expand();
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  kiln_module_destroy(module);
  assert_int_equal(kiln_compiled_executor(compiled), KILN_EXECUTOR_VM);
  assert_non_null(strstr(compiled->vm_json, "\"dyn.broadcast_to\""));
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  const int64_t cases[][5] = {
      {2, 1, 6, 4, 5}, {1, 3, 4, 1, 1}, {5, 3, 1, 7, 2}, {2, 1, 17, 3, 0}, {1, 1, 1, 9, 9}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[4];
    expand_inputs(cases[c], cases[c] + 3, in);
    run_case(reference, vm, in, c);
    release_all(4, in);
  }
  kiln_tensor_t *in[4];
  expand_inputs((const int64_t[]){2, 2, 6}, (const int64_t[]){1, 1}, in);
  set_inputs(vm, in);
  kiln_status_t status = kiln_graph_executor_run(vm);
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(kiln_status_message(status),
                         "(shape_func): dyn.broadcast_to: cannot broadcast data (3, 1) to shape "
                         "[2, 2, 6]"));
  kiln_status_free(status);
  release_all(4, in);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
}

/* ---- dyn.strided_slice: a kernel reading begin, strides and axes ---- */

static const char slice[] =
    "def @main(%x: Tensor[(5, 6), float32], %b: Tensor[(2), int64], %e: Tensor[(2), int64],\n"
    "          %s: Tensor[(2), int64], %a: Tensor[(2), int64]) {\n"
    "  %0 = dyn.strided_slice(%x, %b, %e, %s, %a);\n"
    "  negative(%0)\n"
    "}\n";

static kiln_module_t *parse_slice(void) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("slice", slice, kiln_allocator_system(), &module));
  return module;
}

/* values: begin, end, strides, axes (two each). */
static void slice_inputs(const int64_t *values, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){5, 6}, -1, 1);
  for (int k = 0; k < 4; ++k) {
    in[1 + k] = ints(2, values + 2 * k);
  }
}

static void run_slice_case(kiln_module_t *reference, kiln_graph_executor_t *vm,
                           const int64_t *values, int c) {
  kiln_tensor_t *in[5];
  slice_inputs(values, in);
  compare_run(reference, vm, 5, in, c);
  release_all(5, in);
}

static void test_strided_slice_at_several_values(void **state) {
  (void)state;
  kiln_module_t *reference = parse_slice();
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_module_t *module = parse_slice();
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled));
  kiln_module_destroy(module);
  assert_int_equal(kiln_compiled_executor(compiled), KILN_EXECUTOR_VM);
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  /* begin, end, strides, axes */
  const int64_t cases[][8] = {{1, 0, 4, 6, 1, 2, 0, 1},       {-1, 5, -6, -7, -2, -1, 0, 1},
                              {0, 1, 6, 3, 2, 1, 1, 0},       {2, -3, 3, 100, 1, 1, -1, 0},
                              {1000, 0, 2000, 6, 1, 1, 0, 1}, {0, 0, 5, 6, 1, 1, 0, 1}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    run_slice_case(reference, vm, cases[c], c);
  }
  kiln_tensor_t *in[5];
  slice_inputs((const int64_t[]){0, 0, 5, 6, 0, 1, 0, 1}, in);
  for (int i = 0; i < 5; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
  kiln_status_t status = kiln_graph_executor_run(vm);
  assert_int_equal(kiln_status_code(status), KILN_STATUS_CODE_INVALID_ARGUMENT);
  assert_non_null(
      strstr(kiln_status_message(status), "(shape_func): dyn.strided_slice: strides[0] is 0"));
  kiln_status_free(status);
  release_all(5, in);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
}

/* ---- kernels reading run-time values: each against the interpreter ---- */

/* Runs `num_inputs` inputs on `vm` and expects an error with `message`
 * (INVALID_ARGUMENT from a shape function; a kernel's assertion has the
 * code of any failed kernel call). */
static void expect_values_error(kiln_graph_executor_t *vm, int num_inputs, kiln_tensor_t **in,
                                const char *message) {
  for (int i = 0; i < num_inputs; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
  kiln_status_t status = kiln_graph_executor_run(vm);
  if (!status || !strstr(kiln_status_message(status), message)) {
    fail_msg("got \"%s\", expected \"%s\"", status ? kiln_status_message(status) : "OK", message);
  }
  kiln_status_free(status);
}

/* A rank-0 float64 tensor. */
static kiln_tensor_t *number(double value) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT64, 0, NULL,
                                         &value, sizeof(value), &t));
  return t;
}

/* ONNX Range's form in float32 (then a kernel over its run-time extent)
 * and int32 (truncated), from float64 start, stop and step. */
static const char arange[] =
    "def @main(%a: Tensor[(), float64], %b: Tensor[(), float64], %c: Tensor[(), float64]) {\n"
    "  %0 = dyn.arange(%a, %b, %c, dtype=\"float32\");\n"
    "  %1 = multiply(%0, %0);\n"
    "  %2 = dyn.arange(%a, %b, %c, dtype=\"int32\");\n"
    "  (%1, %2)\n"
    "}\n";

static void test_arange_at_several_values(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("arange", arange);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  assert_non_null(strstr(pair.compiled->vm_json, "\"dyn.arange\""));
  /* start, stop, step: one element, many, negative steps, fractions */
  const double cases[][3] = {{0, 1, 1},    {0, 37, 1},       {1.5, -3, -0.7},
                             {-4, 100, 3}, {2.25, 2.5, 0.1}, {10, -10, -2.5}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[3] = {number(cases[c][0]), number(cases[c][1]), number(cases[c][2])};
    compare_run(reference, vm, 3, in, c);
    release_all(3, in);
  }
  kiln_tensor_t *in[3] = {number(0), number(1), number(0)};
  expect_values_error(vm, 3, in,
                      "(shape_func): dyn.arange: start 0, stop 1 and step 0 must be finite, and "
                      "step nonzero");
  release_all(3, in);
  kiln_tensor_t *huge[3] = {number(0), number(1e300), number(1)};
  expect_values_error(vm, 3, huge, "dyn.arange: start 0, stop 1e+300, step 1 give more than");
  release_all(3, huge);
  vm_pair_close(&pair);
}

/* ONNX CumSum with a run-time axis: a static output, so the graph executor
 * runs it; the kernel walks the axis the input holds. */
static const char cumsum[] = "def @main(%x: Tensor[(3, 4, 5), float32], %a: Tensor[(), int64]) {\n"
                             "  %0 = dyn.cumsum(%x, %a);\n"
                             "  %1 = dyn.cumsum(%x, %a, exclusive=True, reverse=True);\n"
                             "  (%0, %1)\n"
                             "}\n";

static kiln_tensor_t *one_int(int64_t value) {
  kiln_tensor_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 0, NULL, &value,
                                         sizeof(value), &t));
  return t;
}

static void test_cumsum_at_every_axis(void **state) {
  (void)state;
  kiln_module_t *reference = irt_parse("cumsum", cumsum);
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_compiled_t *compiled = irt_compile("cumsum", cumsum);
  kiln_graph_executor_t *executor = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &executor));
  for (int axis = -3; axis < 3; ++axis) {
    kiln_tensor_t *in[2] = {random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){3, 4, 5}, -1, 1),
                            one_int(axis)};
    compare_run(reference, executor, 2, in, axis);
    release_all(2, in);
  }
  kiln_tensor_t *in[2] = {random_tensor(KILN_DTYPE_FLOAT32, 3, (const int64_t[]){3, 4, 5}, -1, 1),
                          one_int(3)};
  expect_values_error(executor, 2, in, "dyn.cumsum: axis is out of range for rank 3");
  release_all(2, in);
  kiln_graph_executor_destroy(executor);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
}

/* ONNX OneHot with run-time depth and values: the new dim (axis 1) is the
 * depth, the off and on values are read in the kernel. */
static const char one_hot[] =
    "def @main(%i: Tensor[(2, 3), int64], %d: Tensor[(), float64], %v: Tensor[(2), float64]) {\n"
    "  dyn.one_hot(%i, %d, %v, axis=1, dtype=\"float32\")\n"
    "}\n";

static void one_hot_inputs(double depth, double off, double on, kiln_tensor_t **in) {
  const int64_t indices[6] = {0, 2, -1, 5, -3, 1};
  int64_t shape[2] = {2, 3}, two = 2;
  double values[2] = {off, on};
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT64, 2, shape,
                                         indices, sizeof(indices), &in[0]));
  in[1] = number(depth);
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT64, 1, &two,
                                         values, sizeof(values), &in[2]));
}

static void test_one_hot_at_several_depths(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("one_hot", one_hot);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  /* depth (a fraction truncates), off, on */
  const double cases[][3] = {{1, 0, 1}, {3, -1, 2.5}, {6.7, 4, -4}, {17, 0.25, 1e30}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[3];
    one_hot_inputs(cases[c][0], cases[c][1], cases[c][2], in);
    compare_run(reference, vm, 3, in, c);
    release_all(3, in);
  }
  kiln_tensor_t *in[3];
  one_hot_inputs(0.5, 0, 1, in);
  expect_values_error(vm, 3, in,
                      "(shape_func): dyn.one_hot: depth has 1 values, the first 0.5; expected one "
                      "number >= 1");
  release_all(3, in);
  vm_pair_close(&pair);
}

/* ONNX ReduceSum with run-time axes, keeping the dims and not: float32
 * (accumulated in float64, as the reference) and int64. */
static const char sum[] = "def @main(%x: Tensor[(3, 4, 5), float32], %a: Tensor[(2), int64],\n"
                          "          %y: Tensor[(3, 4, 5), int64], %b: Tensor[(1), int64]) {\n"
                          "  %0 = dyn.sum(%x, %a, keepdims=True);\n"
                          "  %1 = dyn.sum(%x, %a);\n"
                          "  %2 = dyn.sum(%y, %b);\n"
                          "  (%0, %1, %2)\n"
                          "}\n";

static void sum_inputs(const int64_t *axes, kiln_tensor_t **in) {
  const int64_t shape[3] = {3, 4, 5};
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 3, shape, -1, 1);
  in[1] = ints(2, axes);
  in[2] = random_tensor(KILN_DTYPE_INT64, 3, shape, -100, 100);
  in[3] = ints(1, axes + 2);
}

static void test_sum_at_several_axes(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("sum", sum);
  kiln_module_t *reference = pair.reference;
  kiln_graph_executor_t *vm = pair.vm;
  /* two axes for %x, one for %y */
  const int64_t cases[][3] = {{0, 1, 0}, {1, 2, 1}, {0, 2, 2}, {-1, -3, -2}, {2, 1, -1}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[4];
    sum_inputs(cases[c], in);
    compare_run(reference, vm, 4, in, c);
    release_all(4, in);
  }
  kiln_tensor_t *in[4];
  sum_inputs((const int64_t[]){1, 1, 0}, in);
  expect_values_error(vm, 4, in,
                      "(shape_func): dyn.sum: axis 1 of axes [1, 1] is out of range or repeated "
                      "for rank 3");
  release_all(4, in);
  sum_inputs((const int64_t[]){0, 3, 0}, in);
  expect_values_error(vm, 4, in, "dyn.sum: axis 3 of axes [0, 3] is out of range");
  release_all(4, in);
  vm_pair_close(&pair);
}

/* ONNX Pad with run-time pads and value in its three modes; a rank-4 pad
 * of four run-time dims takes the smaller probe sizes. */
static const char pad[] =
    "def @main(%x: Tensor[(3, 4), float32], %p: Tensor[(4), int64], %v: Tensor[(), float64],\n"
    "          %y: Tensor[(1, 2, 3, 4), int32], %q: Tensor[(8), int64]) {\n"
    "  %0 = dyn.pad(%x, %p, %v);\n"
    "  %1 = dyn.pad(%x, %p, %v, pad_mode=\"edge\");\n"
    "  %2 = dyn.pad(%x, %p, %v, pad_mode=\"reflect\");\n"
    "  %3 = dyn.pad(%y, %q, %v);\n"
    "  (%0, %1, %2, %3)\n"
    "}\n";

static void pad_inputs(const int64_t *pads, double value, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){3, 4}, -1, 1);
  in[1] = ints(4, pads);
  in[2] = number(value);
  in[3] = random_tensor(KILN_DTYPE_INT32, 4, (const int64_t[]){1, 2, 3, 4}, -50, 50);
  const int64_t wide[8] = {pads[0], 1, pads[1], 0, pads[2], 0, pads[3], 2};
  in[4] = ints(8, wide);
}

static void test_pad_at_several_values(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("pad", pad);
  /* befores then afters (ONNX), in reflect's range; a negative one crops */
  const int64_t cases[][4] = {{1, 2, 2, 3}, {0, 0, 0, 0}, {2, 0, 0, 1}, {0, -1, 1, 2}};
  const double values[] = {0, -2.5, 7, 1e10};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[5];
    pad_inputs(cases[c], values[c], in);
    compare_run(pair.reference, pair.vm, 5, in, c);
    release_all(5, in);
  }
  kiln_tensor_t *in[5];
  pad_inputs((const int64_t[]){3, 0, 0, 0}, 0, in);
  expect_values_error(pair.vm, 5, in,
                      "(shape_func): dyn.pad: reflect pad 3 of dim 0 must be smaller than its size "
                      "3 (data (3, 4))");
  release_all(5, in);
  pad_inputs((const int64_t[]){-4, 0, 0, 0}, 0, in);
  expect_values_error(pair.vm, 5, in,
                      "dyn.pad: pad_width (-4, 0) crops dim 0 of data (3, 4) below 0");
  release_all(5, in);
  vm_pair_close(&pair);
}

/* A value broadcast to a run-time rank-4 shape (ONNX MaxUnpool's zeros):
 * the kernel's flattened extent is the product of four run-time dims, which
 * generalize fits as such. */
static const char broadcast4[] = "def @main(%v: Tensor[(1), float32], %s: Tensor[(4), int64]) {\n"
                                 "  %0 = dyn.broadcast_to(%v, %s);\n"
                                 "  add(%0, %0)\n"
                                 "}\n";

static void test_broadcast_to_rank_4(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("broadcast4", broadcast4);
  const int64_t cases[][4] = {{1, 1, 1, 1}, {2, 3, 4, 5}, {1, 17, 3, 2}, {3, 1, 0, 2}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[2] = {random_tensor(KILN_DTYPE_FLOAT32, 1, (const int64_t[]){1}, -1, 1),
                            ints(4, cases[c])};
    compare_run(pair.reference, pair.vm, 2, in, c);
    release_all(2, in);
  }
  vm_pair_close(&pair);
}

/* ONNX Tile with run-time repeats (one more than the data's rank: a new
 * leading dim), then a kernel over the tiled output's run-time dims. */
static const char tile[] = "def @main(%x: Tensor[(2, 3), float32], %r: Tensor[(3), int64]) {\n"
                           "  %0 = dyn.tile(%x, %r);\n"
                           "  negative(%0)\n"
                           "}\n";

static void tile_inputs(const int64_t *reps, kiln_tensor_t **in) {
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){2, 3}, -1, 1);
  in[1] = ints(3, reps);
}

static void test_tile_at_several_reps(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("tile", tile);
  /* a 0 empties the output (the kernels run over no elements) */
  const int64_t cases[][3] = {{1, 1, 1}, {2, 3, 1}, {1, 1, 4}, {3, 2, 5}, {1, 0, 2}, {0, 1, 1}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    kiln_tensor_t *in[2];
    tile_inputs(cases[c], in);
    compare_run(pair.reference, pair.vm, 2, in, c);
    release_all(2, in);
  }
  kiln_tensor_t *in[2];
  tile_inputs((const int64_t[]){1, -2, 1}, in);
  expect_values_error(
      pair.vm, 2, in,
      "(shape_func): dyn.tile: reps [1, -2, 1] holds -2; a repetition count is >= 0");
  release_all(2, in);
  vm_pair_close(&pair);
}

/* ONNX TopK with a run-time k, largest on the last axis and smallest on a
 * negative axis, then a kernel over the values' run-time dims. */
static const char topk[] = "def @main(%x: Tensor[(3, 5), float32], %k: Tensor[(1), int64]) {\n"
                           "  %0 = dyn.topk(%x, %k);\n"
                           "  %1 = exp(%0.0);\n"
                           "  %2 = dyn.topk(%x, %k, axis=-2, largest=False);\n"
                           "  (%1, %0.1, %2.0, %2.1)\n"
                           "}\n";

static void test_topk_at_several_k(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("topk", topk);
  /* k = 0 gives empty outputs; 3 is the most both axes take */
  for (int64_t k = 0; k <= 3; ++k) {
    kiln_tensor_t *in[2] = {random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){3, 5}, -1, 1),
                            ints(1, &k)};
    compare_run(pair.reference, pair.vm, 2, in, (int)k);
    release_all(2, in);
  }
  const int64_t bad[] = {4, -1};
  const char *messages[] = {"(shape_func): dyn.topk: k is 4; it must be in [0, 3], axis 0 of data "
                            "(3, 5)",
                            "(shape_func): dyn.topk: k is -1; it must be in [0, 5], axis 1"};
  for (int b = 0; b < 2; ++b) {
    kiln_tensor_t *in[2] = {random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){3, 5}, -1, 1),
                            ints(1, &bad[b])};
    expect_values_error(pair.vm, 2, in, messages[b]);
    release_all(2, in);
  }
  vm_pair_close(&pair);
}

/* ONNX Split with run-time sizes: the runtime's extern kernel (call_extern
 * "dyn.split", one output per size) on either axis, int64 and int32 sizes,
 * empty parts, then a kernel over a part's run-time dims. */
static const char split[] =
    "def @main(%x: Tensor[(4, 6), float32], %s: Tensor[(3), int64], %t: Tensor[(2), int32]) {\n"
    "  %0 = dyn.split(%x, %s, axis=1);\n"
    "  %1 = exp(%0.1);\n"
    "  %2 = dyn.split(%x, %t, axis=-2);\n"
    "  (%0.0, %1, %0.2, %2.0, %2.1)\n"
    "}\n";

static void split_inputs(const int64_t *s, const int32_t *t, kiln_tensor_t **in) {
  int64_t two[1] = {2};
  in[0] = random_tensor(KILN_DTYPE_FLOAT32, 2, (const int64_t[]){4, 6}, -1, 1);
  in[1] = ints(3, s);
  KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_INT32, 1, two, t,
                                         2 * sizeof(int32_t), &in[2]));
}

static void test_split_at_several_sizes(void **state) {
  (void)state;
  vm_pair_t pair = vm_pair_open("split", split);
  assert_non_null(strstr(pair.compiled->vm_json, "\"dyn.split\""));
  const int64_t s[][3] = {{1, 2, 3}, {0, 6, 0}, {2, 2, 2}, {6, 0, 0}};
  const int32_t t[][2] = {{4, 0}, {1, 3}, {2, 2}, {0, 4}};
  for (int c = 0; c < 4; ++c) {
    kiln_tensor_t *in[3];
    split_inputs(s[c], t[c], in);
    compare_run(pair.reference, pair.vm, 3, in, c);
    release_all(3, in);
  }
  const int64_t bad_s[][3] = {{1, 2, 4}, {-1, 3, 4}, {1, 2, 3}};
  const int32_t bad_t[][2] = {{2, 2}, {2, 2}, {5, -1}};
  const char *messages[] = {
      "(call_extern): dyn.split: the split sizes add up to 7 but dim 1 is 6",
      "(call_extern): dyn.split: split[0] is -1; dim 1 is 6",
      "(call_extern): dyn.split: split[0] is 5; dim 0 is 4",
  };
  for (int b = 0; b < 3; ++b) {
    kiln_tensor_t *in[3];
    split_inputs(bad_s[b], bad_t[b], in);
    expect_values_error(pair.vm, 3, in, messages[b]);
    release_all(3, in);
  }
  vm_pair_close(&pair);
}

/* A probe beyond int32 even at the smaller probe sizes (a rank-5 output
 * all of whose dims are symbolic) is refused before lowering, naming it. */
static void test_refused(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("big",
                                      "def @main(%v: Tensor[(), float32], %s: Tensor[(5), "
                                      "int64]) { dyn.broadcast_to(%v, %s) }",
                                      kiln_allocator_system(), &module));
  KILN_ASSERT_STATUS(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled),
                     UNIMPLEMENTED, "has too many symbolic dims for the probe runs");
  assert_null(compiled);
  kiln_module_destroy(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_views_at_several_shapes),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_graph_executor_refuses),
      cmocka_unit_test(test_broadcast_to_at_several_shapes),
      cmocka_unit_test(test_strided_slice_at_several_values),
      cmocka_unit_test(test_arange_at_several_values),
      cmocka_unit_test(test_cumsum_at_every_axis),
      cmocka_unit_test(test_one_hot_at_several_depths),
      cmocka_unit_test(test_sum_at_several_axes),
      cmocka_unit_test(test_pad_at_several_values),
      cmocka_unit_test(test_tile_at_several_reps),
      cmocka_unit_test(test_broadcast_to_rank_4),
      cmocka_unit_test(test_topk_at_several_k),
      cmocka_unit_test(test_split_at_several_sizes),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
