/*
 * Control flow compiled for the VM (compiler/vm_control.c): If, Loop and
 * Scan modules compile once (AUTO picks the VM), and their runs match the
 * reference interpreter for inputs given at run time: both branches of an
 * If with dataflow before and after it, a Loop whose trip count is an input
 * (0, 1, 5 trips) and one its condition ends, with a carried value, a
 * captured one and a scan output stacked per trip, and Scan in both
 * directions on either axis. Scan outputs that differ
 * per trip fail the run with the VM's message (as on the interpreter), and
 * the graph executor refuses the module naming the VM.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "interp/value.h"
#include "ir/infer.h"
#include "kiln/compiler.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"

/* x * x, then add or subtract y by the branch, then exp. */
static const char if_text[] =
    "def @main(%c: Tensor[(), bool], %x: Tensor[(2), float32], %y: Tensor[(2), float32]) {\n"
    "  %0 = multiply(%x, %x);\n"
    "  %1 = fn (%a: Tensor[(2), float32], %b: Tensor[(2), float32]) { add(%a, %b) };\n"
    "  %2 = fn (%a: Tensor[(2), float32], %b: Tensor[(2), float32]) { subtract(%a, %b) };\n"
    "  %3 = if(%c, %1, %2, %0, %y);\n"
    "  exp(%3)\n"
    "}\n";

/* acc += x per trip while i + one < stop, for n trips at most; each trip's
 * acc * 2 is a scan output. */
static const char loop_text[] =
    "def @main(%n: Tensor[(), int64], %stop: Tensor[(), int64], %acc: Tensor[(2), float32],\n"
    "          %x: Tensor[(2), float32], %one: Tensor[(), int64], %t: Tensor[(), bool]) {\n"
    "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %a: Tensor[(2), float32],\n"
    "           %s: Tensor[(), int64], %v: Tensor[(2), float32], %k: Tensor[(), int64]) {\n"
    "    %1 = add(%i, %k);\n"
    "    %2 = less(%1, %s);\n"
    "    %3 = add(%a, %v);\n"
    "    %4 = add(%3, %3);\n"
    "    (%2, %3, %4)\n"
    "  };\n"
    "  %5 = loop(%0, %n, %t, %acc, %stop, %x, %one, num_captured=3);\n"
    "  (%5.0, %5.1)\n"
    "}\n";

static kiln_tensor_t *scalar(kiln_dtype_t dtype, const void *value, int ndim, int64_t extent) {
  kiln_tensor_t *t = NULL;
  int64_t shape[1] = {extent};
  size_t bytes = kiln_dtype_size(dtype) * (size_t)(ndim ? extent : 1);
  KILN_ASSERT_OK(
      kiln_tensor_create_copy(kiln_allocator_system(), dtype, ndim, shape, value, bytes, &t));
  return t;
}

static kiln_tensor_t *floats2(float a, float b) {
  float values[2] = {a, b};
  return scalar(KILN_DTYPE_FLOAT32, values, 1, 2);
}

static void release_all(int n, kiln_tensor_t **tensors) {
  for (int i = 0; i < n; ++i) {
    kiln_tensor_release(tensors[i]);
  }
}

static kiln_graph_executor_t *compile(const char *name, const char *text,
                                      kiln_module_t **out_reference) {
  *out_reference = irt_parse(name, text);
  KILN_ASSERT_OK(kiln_ir_infer_types(*out_reference));
  kiln_compiled_t *compiled = irt_compile_vm(name, text);
  assert_non_null(strstr(compiled->vm_json, "\"invoke\""));
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  kiln_compiled_destroy(compiled);
  return vm;
}

static void test_if_takes_either_branch(void **state) {
  (void)state;
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("if", if_text, &reference);
  for (int c = 0; c < 2; ++c) {
    bool cond = c == 1;
    kiln_tensor_t *in[3] = {scalar(KILN_DTYPE_BOOL, &cond, 0, 1), floats2(0.5f, -1.0f),
                            floats2(0.25f, 2.0f)};
    assert_int_equal(irt_run_against_interp(reference, vm, 3, in, cond ? "then" : "else"), 1);
    release_all(3, in);
  }
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* Trip counts 0, 1 and 5 (stop far), then 5 trips ended by the condition
 * after 3 and after 1: on one executor, inputs given at run time. */
static void test_loop_trip_counts_and_condition(void **state) {
  (void)state;
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("loop", loop_text, &reference);
  const int64_t cases[][2] = {{0, 100}, {1, 100}, {5, 100}, {5, 3}, {5, 1}, {1000, 100}};
  for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); ++c) {
    int64_t one = 1;
    bool yes = true;
    kiln_tensor_t *in[6] = {scalar(KILN_DTYPE_INT64, &cases[c][0], 0, 1),
                            scalar(KILN_DTYPE_INT64, &cases[c][1], 0, 1),
                            floats2(1, 1),
                            floats2(2, 3),
                            scalar(KILN_DTYPE_INT64, &one, 0, 1),
                            scalar(KILN_DTYPE_BOOL, &yes, 0, 1)};
    char what[64];
    snprintf(what, sizeof(what), "trips %lld stop %lld", (long long)cases[c][0],
             (long long)cases[c][1]);
    assert_int_equal(irt_run_against_interp(reference, vm, 6, in, what), 2);
    const DLTensor *scans = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output(vm, 1, &scans));
    int64_t trips = cases[c][0] < cases[c][1] ? cases[c][0] : cases[c][1];
    assert_int_equal(scans->shape[0], trips);
    release_all(6, in);
  }
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* A scan output that grows per trip (a slice [0, i + 1) of x) cannot be
 * stacked: the run fails naming the instruction, as the interpreter fails. */
static void test_scan_outputs_of_two_shapes(void **state) {
  (void)state;
  static const char text[] =
      "def @main(%n: Tensor[(), int64], %t: Tensor[(), bool], %x: Tensor[(4), float32],\n"
      "          %b: Tensor[(1), int64], %s: Tensor[(1), int64], %ax: Tensor[(1), int64]) {\n"
      "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %v: Tensor[(4), float32],\n"
      "           %b1: Tensor[(1), int64], %s1: Tensor[(1), int64], %a1: Tensor[(1), int64]) {\n"
      "    %1 = add(%i, %s1);\n"
      "    %2 = reshape(%1, newshape=[1]);\n"
      "    %3 = dyn.strided_slice(%v, %b1, %2, %s1, %a1);\n"
      "    (%c, %v, %3)\n"
      "  };\n"
      "  %4 = loop(%0, %n, %t, %x, %b, %s, %ax, num_captured=3);\n"
      "  %4.1\n"
      "}\n";
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("grow", text, &reference);
  int64_t trips = 3, zero = 0, one = 1;
  bool yes = true;
  float x[4] = {1, 2, 3, 4};
  kiln_tensor_t *in[6] = {
      scalar(KILN_DTYPE_INT64, &trips, 0, 1), scalar(KILN_DTYPE_BOOL, &yes, 0, 1),
      scalar(KILN_DTYPE_FLOAT32, x, 1, 4),    scalar(KILN_DTYPE_INT64, &zero, 1, 1),
      scalar(KILN_DTYPE_INT64, &one, 1, 1),   scalar(KILN_DTYPE_INT64, &zero, 1, 1)};
  for (int i = 0; i < 6; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
  KILN_ASSERT_STATUS(kiln_graph_executor_run(vm), INVALID_ARGUMENT,
                     "(adt_concat): element 1 is float32 (2,) but element 0 is float32 (1,) "
                     "(joined as float32 on axis 0, a new one)");
  int count = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_STATUS(
      kiln_interp_run(reference, "main", 6, in, kiln_allocator_system(), &count, &want),
      INVALID_ARGUMENT, "element 1 is float32 (2,) but element 0 is float32 (1,)");
  trips = 1; /* one trip stacks */
  kiln_tensor_release(in[0]);
  in[0] = scalar(KILN_DTYPE_INT64, &trips, 0, 1);
  irt_run_against_interp(reference, vm, 6, in, "one trip");
  release_all(6, in);
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* Running sums of x's columns (axis 1), input forward or reverse, output
 * forward or reverse, stacked on axis 0 or 1, and a captured scale. */
static void test_scan_directions_and_axes(void **state) {
  (void)state;
  for (int c = 0; c < 8; ++c) {
    char text[1024];
    snprintf(text, sizeof(text),
             "def @main(%%s0: Tensor[(2), float32], %%x: Tensor[(2, 3), float32],\n"
             "          %%w: Tensor[(2), float32]) {\n"
             "  %%0 = fn (%%s: Tensor[(2), float32], %%r: Tensor[(2), float32],\n"
             "           %%k: Tensor[(2), float32]) {\n"
             "    %%1 = add(%%s, %%r);\n"
             "    (%%1, multiply(%%1, %%k))\n"
             "  };\n"
             "  scan(%%0, %%s0, %%x, %%w, num_scan_inputs=1, num_captured=1,\n"
             "       scan_input_axes=[1], scan_input_directions=[%d],\n"
             "       scan_output_directions=[%d], scan_output_axes=[%d])\n"
             "}\n",
             c & 1, (c >> 1) & 1, (c >> 2) & 1);
    kiln_module_t *reference = NULL;
    kiln_graph_executor_t *vm = compile("scan", text, &reference);
    float x[6] = {1, 2, 3, 4, 5, 6};
    kiln_tensor_t *in[3] = {floats2(0, 10), scalar(KILN_DTYPE_FLOAT32, x, 1, 6), floats2(2, -1)};
    kiln_tensor_release(in[1]);
    KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, 2,
                                           (const int64_t[]){2, 3}, x, sizeof(x), &in[1]));
    char what[32];
    snprintf(what, sizeof(what), "scan case %d", c);
    assert_int_equal(irt_run_against_interp(reference, vm, 3, in, what), 2);
    release_all(3, in);
    kiln_graph_executor_destroy(vm);
    kiln_module_destroy(reference);
  }
}

/* Sequences and optionals inside a model of tensor inputs and outputs:
 * construct, insert at a run-time position, map with a tensor input,
 * length, at, erase, optional and its reads. */
static const char seq_text[] =
    "def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32], %p: Tensor[(), int64]) {\n"
    "  %0 = seq.construct(%x, %y);\n"
    "  %1 = exp(%x);\n"
    "  %2 = seq.insert(%0, %1, %p);\n"
    "  %3 = fn (%e: Tensor[(2), float32], %k: Tensor[(2), float32]) { multiply(%e, %k) };\n"
    "  %4 = seq.map(%3, %2, %y);\n"
    "  %5 = seq.at(%4.0, %p);\n"
    "  %6 = seq.erase(%2, %p);\n"
    "  %7 = optional(%x);\n"
    "  %8 = optional.get_element(%7);\n"
    "  %9 = add(%8, seq.at(%6, %p));\n"
    "  (%5, seq.length(%6), seq.at(%2, %p), %9, optional.has_element(%7))\n"
    "}\n";

static void test_sequences_and_optionals(void **state) {
  (void)state;
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("seq", seq_text, &reference);
  const int64_t positions[] = {0, 1, -1, -2};
  for (int c = 0; c < 4; ++c) {
    kiln_tensor_t *in[3] = {floats2(0.5f, -1), floats2(2, 3),
                            scalar(KILN_DTYPE_INT64, &positions[c], 0, 1)};
    char what[32];
    snprintf(what, sizeof(what), "position %lld", (long long)positions[c]);
    assert_int_equal(irt_run_against_interp(reference, vm, 3, in, what), 5);
    release_all(3, in);
  }
  int64_t five = 5;
  kiln_tensor_t *in[3] = {floats2(0.5f, -1), floats2(2, 3), scalar(KILN_DTYPE_INT64, &five, 0, 1)};
  for (int i = 0; i < 3; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
  KILN_ASSERT_STATUS(kiln_graph_executor_run(vm), OUT_OF_RANGE,
                     "(adt_insert): position 5 is outside a sequence of 2 elements (0 to 2)");
  release_all(3, in);
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* A sequence input and a sequence output (kiln_graph_executor_set_input_list
 * and _get_output_list): each element mapped through exp, against the
 * interpreter's values, for 0, 1 and 3 elements of their own lengths. */
static const char list_text[] =
    "def @main(%s: Sequence[Tensor[(?), float32]], %o: Optional[Tensor[(2), float32]]) {\n"
    "  %0 = fn (%e: Tensor[(?), float32]) { exp(%e) };\n"
    "  %1 = seq.map(%0, %s);\n"
    "  (%1.0, seq.length(%s), optional.has_element(%o))\n"
    "}\n";

static kiln_tensor_t *ramp(int64_t n) {
  float values[8] = {0.5f, -1, 2, 0.25f, 3, -2, 1, 0};
  return scalar(KILN_DTYPE_FLOAT32, values, 1, n);
}

/* The interpreter's result for the elements, against the VM's outputs. */
static void check_lists(kiln_module_t *reference, kiln_graph_executor_t *vm, int count,
                        kiln_tensor_t **elements, kiln_tensor_t *present) {
  kiln_allocator_t a = kiln_allocator_system();
  kiln_interp_value_t in[2], result;
  KILN_ASSERT_OK(kiln_interp_value_list_create(a, KILN_INTERP_VALUE_SEQUENCE, count, &in[0]));
  KILN_ASSERT_OK(
      kiln_interp_value_list_create(a, KILN_INTERP_VALUE_OPTIONAL, present ? 1 : 0, &in[1]));
  const DLTensor *views[8];
  for (int i = 0; i < count; ++i) {
    kiln_tensor_retain(elements[i]);
    in[0].fields[i] = kiln_interp_value_of_tensor(elements[i]);
    views[i] = kiln_tensor_dl(elements[i]);
  }
  if (present) {
    kiln_tensor_retain(present);
    in[1].fields[0] = kiln_interp_value_of_tensor(present);
  }
  kiln_interp_options_t options = {.allocator = a};
  KILN_ASSERT_OK(kiln_interp_run_values(reference, "main", 2, in, &options, &result));
  KILN_ASSERT_OK(kiln_graph_executor_set_input_list(vm, 0, count, views));
  const DLTensor *present_view = present ? kiln_tensor_dl(present) : NULL;
  KILN_ASSERT_OK(kiln_graph_executor_set_input_list(vm, 1, present ? 1 : 0, &present_view));
  KILN_ASSERT_OK(kiln_graph_executor_run(vm));
  int n = -1;
  KILN_ASSERT_OK(kiln_graph_executor_get_output_list(vm, 0, &n));
  assert_int_equal(n, result.fields[0].num_fields);
  for (int i = 0; i < n; ++i) {
    const DLTensor *view = NULL;
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output_element(vm, 0, i, &view));
    KILN_ASSERT_OK(kiln_tensor_create_copy(a, KILN_DTYPE_FLOAT32, view->ndim, view->shape,
                                           view->data, sizeof(float) * (size_t)view->shape[0],
                                           &got));
    irt_assert_close(got, result.fields[0].fields[i].tensor, "element", i);
    kiln_tensor_release(got);
  }
  for (int o = 1; o < 3; ++o) {
    kiln_tensor_t *got = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_copy_output(vm, o, a, &got));
    irt_assert_close(got, result.fields[o].tensor, "scalar", o);
    kiln_tensor_release(got);
  }
  kiln_interp_value_release(a, &result);
  kiln_interp_value_release(a, &in[0]);
  kiln_interp_value_release(a, &in[1]);
}

static void test_sequence_and_optional_inputs_and_outputs(void **state) {
  (void)state;
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("lists", list_text, &reference);
  kiln_tensor_t *elements[3] = {ramp(3), ramp(1), ramp(5)}, *present = floats2(1, 2);
  check_lists(reference, vm, 0, elements, present);
  check_lists(reference, vm, 1, elements, NULL);
  check_lists(reference, vm, 3, elements, present);
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input(vm, 0, kiln_tensor_dl(elements[0])),
                     INVALID_ARGUMENT,
                     "input 0 's' is a sequence or an optional: set it with "
                     "kiln_graph_executor_set_input_list");
  const DLTensor *two[2] = {kiln_tensor_dl(present), kiln_tensor_dl(present)};
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_list(vm, 1, 2, two), INVALID_ARGUMENT,
                     "input 1 'o' is an optional (-1, 0 or 1 elements), given 2 elements");
  const DLTensor *wrong[1] = {kiln_tensor_dl(elements[0])};
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_list(vm, 1, 1, wrong), INVALID_ARGUMENT,
                     "input 'o' has shape (3,), expected (2,)");
  const DLTensor *view = NULL;
  KILN_ASSERT_STATUS(kiln_graph_executor_get_output(vm, 0, &view), INVALID_ARGUMENT,
                     "output 0 'output0' is a sequence or an optional: read it with "
                     "kiln_graph_executor_get_output_list and _element");
  release_all(3, elements);
  kiln_tensor_release(present);
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* acc += x per trip, both of a length given at run time (two anonymous
 * dims the add needs equal: probed as one, checked by the kernel). */
static const char any_text[] =
    "def @main(%n: Tensor[(), int64], %t: Tensor[(), bool], %acc: Tensor[(?), float32],\n"
    "          %x: Tensor[(?), float32]) {\n"
    "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %a: Tensor[(?), float32],\n"
    "           %v: Tensor[(?), float32]) {\n"
    "    %1 = add(%a, %v);\n"
    "    (%c, %1)\n"
    "  };\n"
    "  %2 = loop(%0, %n, %t, %acc, %x, num_captured=1);\n"
    "  %2.0\n"
    "}\n";

static void set_inputs(kiln_graph_executor_t *vm, int n, kiln_tensor_t **in) {
  for (int i = 0; i < n; ++i) {
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, i, kiln_tensor_dl(in[i])));
  }
}

/* Lengths 1, 3 and 5 for 0, 1 and 4 trips against the interpreter; then
 * lengths that differ: the VM's kernel refuses them naming the shapes. */
static void test_loop_over_equal_anonymous_dims(void **state) {
  (void)state;
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("any", any_text, &reference);
  bool yes = true;
  const int64_t trips[] = {0, 1, 4};
  for (int64_t length = 1; length <= 5; length += 2) {
    for (int c = 0; c < 3; ++c) {
      kiln_tensor_t *in[4] = {scalar(KILN_DTYPE_INT64, &trips[c], 0, 1),
                              scalar(KILN_DTYPE_BOOL, &yes, 0, 1), ramp(length), ramp(length)};
      char what[64];
      snprintf(what, sizeof(what), "length %lld trips %lld", (long long)length,
               (long long)trips[c]);
      assert_int_equal(irt_run_against_interp(reference, vm, 4, in, what), 1);
      release_all(4, in);
    }
  }
  kiln_tensor_t *in[4] = {scalar(KILN_DTYPE_INT64, &trips[1], 0, 1),
                          scalar(KILN_DTYPE_BOOL, &yes, 0, 1), ramp(3), ramp(2)};
  set_inputs(vm, 4, in);
  KILN_ASSERT_STATUS(kiln_graph_executor_run(vm), INTERNAL,
                     "_fused_add_shape0: argument 1 has shape (2,), expected (dim0,)");
  int count = 0;
  kiln_tensor_t **want = NULL;
  KILN_ASSERT_STATUS(
      kiln_interp_run(reference, "main", 4, in, kiln_allocator_system(), &count, &want),
      INVALID_ARGUMENT, "cannot broadcast");
  release_all(4, in);
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* The carried value is x[0, i + 1), sliced with begin and axes one value
 * (so the fused slice's parameter is passed twice and the VM's shape
 * function takes the call's arguments, not the kernel's parameters):
 * 0, 1 and 3 trips against the interpreter. */
static void test_loop_slice_with_a_repeated_argument(void **state) {
  (void)state;
  static const char text[] =
      "def @main(%n: Tensor[(), int64], %t: Tensor[(), bool], %acc: Tensor[(?), float32],\n"
      "          %x: Tensor[(4), float32], %b: Tensor[(1), int64], %s: Tensor[(1), int64]) {\n"
      "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %a: Tensor[(?), float32],\n"
      "           %v: Tensor[(4), float32], %b1: Tensor[(1), int64], %s1: Tensor[(1), int64]) {\n"
      "    %1 = add(%i, %s1);\n"
      "    %2 = reshape(%1, newshape=[1]);\n"
      "    %3 = dyn.strided_slice(%v, %b1, %2, %s1, %b1);\n"
      "    (%c, %3)\n"
      "  };\n"
      "  %4 = loop(%0, %n, %t, %acc, %x, %b, %s, num_captured=3);\n"
      "  %4.0\n"
      "}\n";
  kiln_module_t *reference = NULL;
  kiln_graph_executor_t *vm = compile("slice", text, &reference);
  const int64_t trips[] = {0, 1, 3};
  int64_t zero = 0, one = 1;
  bool yes = true;
  for (int c = 0; c < 3; ++c) {
    kiln_tensor_t *in[6] = {scalar(KILN_DTYPE_INT64, &trips[c], 0, 1),
                            scalar(KILN_DTYPE_BOOL, &yes, 0, 1),
                            ramp(2),
                            ramp(4),
                            scalar(KILN_DTYPE_INT64, &zero, 1, 1),
                            scalar(KILN_DTYPE_INT64, &one, 1, 1)};
    assert_int_equal(irt_run_against_interp(reference, vm, 6, in, "slice"), 1);
    const DLTensor *out = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output(vm, 0, &out));
    assert_int_equal(out->shape[0], trips[c] ? trips[c] : 2);
    release_all(6, in);
  }
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

/* The loop's memory does not grow with its trip count: what the VM holds
 * after 1000 trips (the pool's blocks, counted by the allocator the
 * executor was made with) is what it held after 100, and the result is the
 * interpreter's. */
static void test_loop_memory_bounded(void **state) {
  (void)state;
  kiln_counting_allocator_t counting;
  kiln_counting_allocator_initialize(&counting, kiln_allocator_system());
  kiln_module_t *reference = irt_parse("any", any_text);
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_compiler_options_t options = kiln_compiler_options_default();
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_OK(
      kiln_compiler_build(kiln_counting_allocator_get(&counting), reference, &options, &compiled));
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  bool yes = true;
  int64_t held[2] = {0, 0};
  const int64_t trips[2] = {100, 1000};
  for (int c = 0; c < 2; ++c) {
    kiln_tensor_t *in[4] = {scalar(KILN_DTYPE_INT64, &trips[c], 0, 1),
                            scalar(KILN_DTYPE_BOOL, &yes, 0, 1), ramp(8), ramp(8)};
    assert_int_equal(irt_run_against_interp(reference, vm, 4, in, "many trips"), 1);
    held[c] = kiln_counting_allocator_counts(&counting).live_bytes;
    release_all(4, in);
  }
  assert_int_equal(held[1], held[0]);
  kiln_graph_executor_destroy(vm);
  kiln_compiled_destroy(compiled);
  kiln_module_destroy(reference);
  assert_int_equal(kiln_counting_allocator_counts(&counting).live_blocks, 0);
}

static void test_graph_executor_refuses(void **state) {
  (void)state;
  kiln_module_t *module = irt_parse("if", if_text);
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.executor = KILN_EXECUTOR_GRAPH;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_STATUS(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled),
                     UNIMPLEMENTED,
                     "--executor graph (control flow compiles for the VM: --executor vm or "
                     "auto): control flow, sequences and optionals run on the interpreter and "
                     "compile for the VM only");
  assert_null(compiled);
  kiln_module_destroy(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_if_takes_either_branch),
      cmocka_unit_test(test_loop_trip_counts_and_condition),
      cmocka_unit_test(test_scan_outputs_of_two_shapes),
      cmocka_unit_test(test_scan_directions_and_axes),
      cmocka_unit_test(test_sequences_and_optionals),
      cmocka_unit_test(test_sequence_and_optional_inputs_and_outputs),
      cmocka_unit_test(test_loop_over_equal_anonymous_dims),
      cmocka_unit_test(test_loop_slice_with_a_repeated_argument),
      cmocka_unit_test(test_loop_memory_bounded),
      cmocka_unit_test(test_graph_executor_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
