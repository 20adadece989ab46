/*
 * Tests of control flow, sequences and optionals in the IR and the
 * reference interpreter (op/control.c, interp/control.c): modules written in
 * the text format, printed and parsed back, then run on inputs whose
 * expected results are computed by hand: if on both branches, loop with trip
 * counts 0, 1 and 5 given at run time and a condition that stops it early,
 * scan forward and reverse on either axis, the sequence and optional
 * operators on sequence and optional values, and the errors (a bad body
 * type, branches that disagree, scan inputs of other lengths, an empty
 * optional, a sequence input of the wrong element type, a body that is not
 * closed), each naming the operator and the node; and the refusal of the
 * static pipeline and the graph compiler.
 */
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "compiler/build.h"
#include "interp/interp.h"
#include "interp/value.h"
#include "ir/functor.h"
#include "ir/infer.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "kiln_test.h"
#include "op/op.h"
#include "pass/pipeline.h"

static int64_t statuses_at_start;

static int setup(void **state) {
  (void)state;
  statuses_at_start = kiln_status_live_count();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  assert_int_equal(kiln_status_live_count(), statuses_at_start);
  return 0;
}

/* Parses `text` (which types it), verifies it, and checks that printing and
 * parsing again gives the same text. */
static kiln_module_t *parse_round_trip(const char *text) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module));
  KILN_ASSERT_OK(kiln_ir_verify(module));
  kiln_strbuf_t first, second;
  kiln_strbuf_initialize(&first, kiln_allocator_system());
  kiln_strbuf_initialize(&second, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_ir_print_module(module, NULL, &first));
  kiln_module_t *again = NULL;
  KILN_ASSERT_OK(
      kiln_ir_parse_module("again", kiln_strbuf_c_str(&first), kiln_allocator_system(), &again));
  KILN_ASSERT_OK(kiln_ir_print_module(again, NULL, &second));
  assert_string_equal(kiln_strbuf_c_str(&first), kiln_strbuf_c_str(&second));
  kiln_module_destroy(again);
  kiln_strbuf_deinitialize(&first);
  kiln_strbuf_deinitialize(&second);
  return module;
}

static kiln_tensor_t *make_tensor(kiln_dtype_t dtype, int ndim, const int64_t *shape,
                                  const void *data) {
  size_t size = 0;
  KILN_ASSERT_OK(kiln_shape_byte_size(dtype, ndim, shape, &size));
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create_copy(kiln_allocator_system(), dtype, ndim, shape, data, size, &tensor));
  return tensor;
}

static kiln_interp_value_t floats(int ndim, const int64_t *shape, const float *data) {
  return kiln_interp_value_of_tensor(make_tensor(KILN_DTYPE_FLOAT32, ndim, shape, data));
}

static kiln_interp_value_t scalar_i64(int64_t value) {
  return kiln_interp_value_of_tensor(make_tensor(KILN_DTYPE_INT64, 0, NULL, &value));
}

static kiln_interp_value_t scalar_bool(bool value) {
  uint8_t byte = value;
  return kiln_interp_value_of_tensor(make_tensor(KILN_DTYPE_BOOL, 0, NULL, &byte));
}

static kiln_status_t run(kiln_module_t *module, int count, kiln_interp_value_t *inputs,
                         kiln_interp_value_t *out_result) {
  kiln_interp_options_t options = {.allocator = kiln_allocator_system()};
  kiln_status_t status =
      kiln_interp_run_values(module, "main", count, inputs, &options, out_result);
  for (int i = 0; i < count; ++i) {
    kiln_interp_value_release(kiln_allocator_system(), &inputs[i]);
  }
  return status;
}

static void assert_floats(const kiln_interp_value_t *value, int ndim, const int64_t *shape,
                          const float *expected) {
  assert_int_equal(value->kind, KILN_INTERP_VALUE_TENSOR);
  assert_int_equal(kiln_tensor_dtype(value->tensor), KILN_DTYPE_FLOAT32);
  assert_true(kiln_shape_equal(ndim, shape, kiln_tensor_ndim(value->tensor),
                               kiln_tensor_shape(value->tensor)));
  const float *data = kiln_tensor_data(value->tensor);
  for (int64_t i = 0; i < kiln_tensor_element_count(value->tensor); ++i) {
    assert_float_equal(data[i], expected[i], 1e-6);
  }
}

/* ---- if ---- */

static const char *const if_text =
    "def @main(%c: Tensor[(), bool], %x: Tensor[(2), float32], %y: Tensor[(2), float32]) {\n"
    "  %0 = fn (%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {\n"
    "    add(%a, %b)\n"
    "  };\n"
    "  %1 = fn (%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {\n"
    "    subtract(%a, %b)\n"
    "  };\n"
    "  if(%c, %0, %1, %x, %y)\n"
    "}\n";

static void run_if(bool cond, const float *expected) {
  kiln_module_t *module = parse_round_trip(if_text);
  int64_t shape[] = {2};
  kiln_interp_value_t inputs[3] = {scalar_bool(cond), floats(1, shape, (float[]){5, 7}),
                                   floats(1, shape, (float[]){1, 2})};
  kiln_interp_value_t result;
  KILN_ASSERT_OK(run(module, 3, inputs, &result));
  assert_floats(&result, 1, shape, expected);
  kiln_interp_value_release(kiln_allocator_system(), &result);
  kiln_module_destroy(module);
}

static void test_if_runs_the_branch_the_condition_picks(void **state) {
  (void)state;
  run_if(true, (float[]){6, 9});
  run_if(false, (float[]){4, 5});
}

static void test_if_branches_must_agree(void **state) {
  (void)state;
  const char *text = "def @main(%c: Tensor[(), bool], %x: Tensor[(2), float32]) {\n"
                     "  %0 = fn (%a: Tensor[(2), float32]) { %a };\n"
                     "  %1 = fn (%a: Tensor[(2), float32]) { sum(%a) };\n"
                     "  if(%c, %0, %1, %x)\n"
                     "}\n";
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module),
                     INVALID_ARGUMENT,
                     "if: the then branch gives Tensor[(2), float32] but the "
                     "else branch Tensor[(), float32]");
  assert_null(module);
}

/* ---- loop ---- */

/* Sums x into an accumulator `trips` times, and stops once the iteration
 * count reaches `stop` (the body's condition is i + 1 < stop). */
static const char *const loop_text =
    "def @main(%n: Tensor[(), int64], %stop: Tensor[(), int64], %acc: Tensor[(2), float32], "
    "%x: Tensor[(2), float32], %one: Tensor[(), int64], %true: Tensor[(), bool]) {\n"
    "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %a: Tensor[(2), float32], "
    "%s: Tensor[(), int64], %v: Tensor[(2), float32], %k: Tensor[(), int64]) {\n"
    "    %1 = add(%i, %k);\n"
    "    %2 = less(%1, %s);\n"
    "    %3 = add(%a, %v);\n"
    "    (%2, %3)\n"
    "  };\n"
    "  %4 = loop(%0, %n, %true, %acc, %stop, %x, %one, num_captured=3);\n"
    "  %4.0\n"
    "}\n";

static void run_loop(int64_t trips, int64_t stop, float expected) {
  kiln_module_t *module = parse_round_trip(loop_text);
  int64_t shape[] = {2};
  kiln_interp_value_t inputs[6] = {scalar_i64(trips),
                                   scalar_i64(stop),
                                   floats(1, shape, (float[]){1, 1}),
                                   floats(1, shape, (float[]){2, 3}),
                                   scalar_i64(1),
                                   scalar_bool(true)};
  kiln_interp_value_t result;
  KILN_ASSERT_OK(run(module, 6, inputs, &result));
  assert_floats(&result, 1, shape, (float[]){1 + 2 * expected, 1 + 3 * expected});
  kiln_interp_value_release(kiln_allocator_system(), &result);
  kiln_module_destroy(module);
}

static void test_loop_runs_its_trip_count(void **state) {
  (void)state;
  run_loop(0, 100, 0);
  run_loop(1, 100, 1);
  run_loop(5, 100, 5);
}

static void test_loop_stops_when_the_condition_fails(void **state) {
  (void)state;
  run_loop(5, 3, 3);
  run_loop(5, 1, 1);
}

/* A carried Sequence[float32] may come back more specific from the body. */
static void test_loop_carries_a_sequence(void **state) {
  (void)state;
  const char *text = "def @main(%n: Tensor[(), int64], %t: Tensor[(), bool], "
                     "%x: Tensor[(2), float32]) {\n"
                     "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], "
                     "%s: Sequence[float32], %v: Tensor[(2), float32]) {\n"
                     "    (%c, seq.construct(%v, %v))\n"
                     "  };\n"
                     "  %1 = seq.empty();\n"
                     "  %2 = loop(%0, %n, %t, %1, %x, num_captured=1);\n"
                     "  %2.0\n"
                     "}\n";
  for (int64_t trips = 0; trips < 2; ++trips) {
    kiln_module_t *module = parse_round_trip(text);
    int64_t shape[] = {2};
    kiln_interp_value_t inputs[3] = {scalar_i64(trips), scalar_bool(true),
                                     floats(1, shape, (float[]){1, 2})};
    kiln_interp_value_t result;
    KILN_ASSERT_OK(run(module, 3, inputs, &result));
    assert_int_equal(result.kind, KILN_INTERP_VALUE_SEQUENCE);
    assert_int_equal(result.num_fields, trips == 0 ? 0 : 2);
    kiln_interp_value_release(kiln_allocator_system(), &result);
    kiln_module_destroy(module);
  }
}

static void test_loop_body_must_match_the_carried_values(void **state) {
  (void)state;
  const char *text = "def @main(%n: Tensor[(), int64], %acc: Tensor[(2), float32], "
                     "%t: Tensor[(), bool]) {\n"
                     "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], "
                     "%a: Tensor[(2), float32]) {\n"
                     "    (%c, sum(%a))\n"
                     "  };\n"
                     "  %1 = loop(%0, %n, %t, %acc);\n"
                     "  %1.0\n"
                     "}\n";
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module),
                     INVALID_ARGUMENT, "loop-carried value 0 goes in as Tensor[(2), float32]");
}

/* A body that returns nothing: the relation says what it must return (the
 * IR text fuzzer found it reading a result that was not there). */
static void test_loop_body_returns_nothing(void **state) {
  (void)state;
  const char *text = "def @main(%n: Tensor[(), int64], %t: Tensor[(), bool]) {\n"
                     "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool]) {\n"
                     "    ()\n"
                     "  };\n"
                     "  loop(%0, %n, %t)\n"
                     "}\n";
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module),
                     INVALID_ARGUMENT, "loop: the body must return the condition");
}

/* ---- scan ---- */

/* Running sums of the rows of x (3, 2) (axis 0), forward or reverse; the
 * scan outputs stacked on axis `out_axis`. */
static const char *const scan_text =
    "def @main(%%s0: Tensor[(2), float32], %%x: Tensor[(3, 2), float32]) {\n"
    "  %%0 = fn (%%s: Tensor[(2), float32], %%r: Tensor[(2), float32]) {\n"
    "    %%1 = add(%%s, %%r);\n"
    "    (%%1, %%1)\n"
    "  };\n"
    "  scan(%%0, %%s0, %%x, scan_input_directions=[%d], scan_output_axes=[%d])\n"
    "}\n";

static void run_scan(int reverse, int out_axis, const int64_t *shape, const float *outs) {
  char text[1024];
  snprintf(text, sizeof(text), scan_text, reverse, out_axis);
  kiln_module_t *module = parse_round_trip(text);
  int64_t two[] = {2}, three_two[] = {3, 2};
  kiln_interp_value_t inputs[2] = {floats(1, two, (float[]){0, 10}),
                                   floats(2, three_two, (float[]){1, 2, 3, 4, 5, 6})};
  kiln_interp_value_t result;
  KILN_ASSERT_OK(run(module, 2, inputs, &result));
  assert_int_equal(result.kind, KILN_INTERP_VALUE_TUPLE);
  assert_floats(&result.fields[0], 1, two, (float[]){9, 22});
  assert_floats(&result.fields[1], 2, shape, outs);
  kiln_interp_value_release(kiln_allocator_system(), &result);
  kiln_module_destroy(module);
}

static void test_scan_forward_and_reverse(void **state) {
  (void)state;
  int64_t rows[] = {3, 2}, columns[] = {2, 3};
  run_scan(0, 0, rows, (float[]){1, 12, 4, 16, 9, 22});
  run_scan(1, 0, rows, (float[]){5, 16, 8, 20, 9, 22});
  run_scan(0, 1, columns, (float[]){1, 4, 9, 12, 16, 22});
}

static void test_scan_inputs_must_agree(void **state) {
  (void)state;
  const char *text = "def @main(%s0: Tensor[(2), float32], %x: Tensor[(3, 2), float32], "
                     "%y: Tensor[(4, 2), float32]) {\n"
                     "  %0 = fn (%s: Tensor[(2), float32], %a: Tensor[(2), float32], "
                     "%b: Tensor[(2), float32]) { (%s, %a) };\n"
                     "  scan(%0, %s0, %x, %y, num_scan_inputs=2)\n"
                     "}\n";
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module),
                     INVALID_ARGUMENT,
                     "scan: scan input 1 has 4 elements on its axis, input 0 "
                     "has 3");
}

/* ---- sequences and optionals ---- */

static const char *const sequence_text =
    "def @main(%s: Sequence[float32], %x: Tensor[(2), float32], %p: Tensor[(), int64]) {\n"
    "  %0 = seq.insert(%s, %x, %p);\n"
    "  %1 = seq.erase(%0);\n"
    "  %2 = optional(%1);\n"
    "  %3 = optional(dtype=\"float32\", sequence=True);\n"
    "  (seq.length(%0), %2, optional.has_element(%3), optional.get_element(%2))\n"
    "}\n";

static kiln_interp_value_t sequence_of(int count, const float *data) {
  kiln_interp_value_t value;
  KILN_ASSERT_OK(kiln_interp_value_list_create(kiln_allocator_system(), KILN_INTERP_VALUE_SEQUENCE,
                                               count, &value));
  int64_t shape[] = {2};
  for (int i = 0; i < count; ++i) {
    value.fields[i] = floats(1, shape, data + 2 * i);
  }
  return value;
}

static void test_sequences_and_optionals(void **state) {
  (void)state;
  kiln_module_t *module = parse_round_trip(sequence_text);
  int64_t shape[] = {2};
  kiln_interp_value_t inputs[3] = {sequence_of(2, (float[]){1, 2, 3, 4}),
                                   floats(1, shape, (float[]){5, 6}), scalar_i64(-2)};
  kiln_interp_value_t result;
  KILN_ASSERT_OK(run(module, 3, inputs, &result));
  assert_int_equal(result.kind, KILN_INTERP_VALUE_TUPLE);
  assert_int_equal(*(const int64_t *)kiln_tensor_data(result.fields[0].tensor), 3);
  const kiln_interp_value_t *optional = &result.fields[1];
  assert_int_equal(optional->kind, KILN_INTERP_VALUE_OPTIONAL);
  assert_int_equal(optional->num_fields, 1);
  /* [1 2] inserted before position -2: [5 6], [1 2], [3 4]; the last erased */
  const kiln_interp_value_t *sequence = &optional->fields[0];
  assert_int_equal(sequence->num_fields, 2);
  assert_floats(&sequence->fields[0], 1, shape, (float[]){5, 6});
  assert_floats(&sequence->fields[1], 1, shape, (float[]){1, 2});
  assert_int_equal(*(const uint8_t *)kiln_tensor_data(result.fields[2].tensor), 0);
  assert_int_equal(result.fields[3].kind, KILN_INTERP_VALUE_SEQUENCE);
  kiln_interp_value_release(kiln_allocator_system(), &result);
  kiln_module_destroy(module);
}

static void test_empty_optional_has_no_element(void **state) {
  (void)state;
  const char *text = "def @main(%o: Optional[Tensor[(2), float32]]) {\n"
                     "  optional.get_element(%o)\n"
                     "}\n";
  kiln_module_t *module = parse_round_trip(text);
  kiln_interp_value_t inputs[1];
  KILN_ASSERT_OK(kiln_interp_value_list_create(kiln_allocator_system(), KILN_INTERP_VALUE_OPTIONAL,
                                               0, &inputs[0]));
  kiln_interp_value_t result;
  KILN_ASSERT_STATUS(run(module, 1, inputs, &result), INVALID_ARGUMENT,
                     "in @main, %0 = optional.get_element: optional.get_element: the optional "
                     "is empty");
  kiln_module_destroy(module);
}

/* A sequence input whose element does not have the sequence's type. */
static void test_sequence_inputs_are_checked(void **state) {
  (void)state;
  const char *text = "def @main(%s: Sequence[Tensor[(3), float32]]) {\n"
                     "  seq.length(%s)\n"
                     "}\n";
  kiln_module_t *module = parse_round_trip(text);
  kiln_interp_value_t inputs[1] = {sequence_of(1, (float[]){1, 2})};
  kiln_interp_value_t result;
  KILN_ASSERT_STATUS(run(module, 1, inputs, &result), INVALID_ARGUMENT,
                     "in @main, input 0 (%s): Sequence[Tensor[(3), float32]]: element 0 does not "
                     "match");
  kiln_module_destroy(module);
  int count = 0;
  kiln_tensor_t **outputs = NULL;
  module = parse_round_trip(text);
  KILN_ASSERT_STATUS(
      kiln_interp_run(module, "main", 0, NULL, kiln_allocator_system(), &count, &outputs),
      INVALID_ARGUMENT, "@main takes 1 inputs, got 0");
  kiln_module_destroy(module);
}

/* ---- functor: bodies are children of their call ---- */

/* A mutator that turns every add into subtract, inside loop bodies too. */
typedef struct add_to_subtract_t {
  kiln_expr_mutator_t mutator;
  int rewritten;
} add_to_subtract_t;

static kiln_status_t add_to_subtract(kiln_expr_functor_t *self, kiln_expr_t *expr, void *result) {
  add_to_subtract_t *pass = (add_to_subtract_t *)self;
  kiln_expr_t *rebuilt = NULL;
  KILN_RETURN_IF_ERROR(kiln_expr_mutator_rebuild(&pass->mutator, expr, &rebuilt));
  kiln_call_t *call = kiln_expr_as_call(rebuilt);
  if (call->op == NULL || strcmp(call->op->name, "add") != 0) {
    *(kiln_expr_t **)result = rebuilt;
    return KILN_OK;
  }
  const kiln_op_t *subtract = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_find("subtract", &subtract));
  kiln_call_t *made = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_call_create(pass->mutator.module, subtract, call->num_args, call->args, NULL, &made));
  pass->rewritten++;
  *(kiln_expr_t **)result = &made->base;
  return KILN_OK;
}

static void test_mutator_rewrites_inside_loop_bodies(void **state) {
  (void)state;
  kiln_module_t *module = parse_round_trip(loop_text);
  add_to_subtract_t pass = {.rewritten = 0};
  kiln_expr_mutator_initialize(&pass.mutator, module, kiln_allocator_system());
  kiln_expr_functor_override(&pass.mutator.functor, KILN_EXPR_KIND_CALL, add_to_subtract);
  kiln_expr_t *out = NULL;
  KILN_ASSERT_OK(kiln_expr_mutator_mutate(&pass.mutator,
                                          &kiln_module_get_function(module, "main")->base, &out));
  kiln_expr_mutator_deinitialize(&pass.mutator);
  assert_int_equal(pass.rewritten, 2); /* i + 1 and a + v, both in the body */
  KILN_ASSERT_OK(kiln_module_set_function(module, "main", kiln_expr_as_function(out)));
  KILN_ASSERT_OK(kiln_ir_infer_types(module));
  KILN_ASSERT_OK(kiln_ir_verify(module));
  int64_t shape[] = {2};
  /* i - 1 < stop always holds: the trip count (3) ends it; acc - 3 x */
  kiln_interp_value_t inputs[6] = {scalar_i64(3),
                                   scalar_i64(100),
                                   floats(1, shape, (float[]){1, 1}),
                                   floats(1, shape, (float[]){2, 3}),
                                   scalar_i64(1),
                                   scalar_bool(true)};
  kiln_interp_value_t result;
  KILN_ASSERT_OK(run(module, 6, inputs, &result));
  assert_floats(&result, 1, shape, (float[]){1 - 6, 1 - 9});
  kiln_interp_value_release(kiln_allocator_system(), &result);
  kiln_module_destroy(module);
}

/* The IR text fuzzer's seed with control flow (tests/fuzz/seeds/ir_text)
 * parses, prints back the same and runs. */
static void test_fuzz_seed_runs(void **state) {
  (void)state;
  void *bytes = NULL;
  size_t size = 0;
  KILN_ASSERT_OK(kiln_file_read_all(kiln_allocator_system(),
                                    KILN_SOURCE_DIR "/tests/fuzz/seeds/ir_text/control.txt", &bytes,
                                    &size));
  char *text = NULL;
  KILN_ASSERT_OK(kiln_allocator_malloc(kiln_allocator_system(), size + 1, (void **)&text));
  memcpy(text, bytes, size);
  text[size] = '\0';
  kiln_allocator_free(kiln_allocator_system(), bytes);
  kiln_module_t *module = parse_round_trip(text);
  kiln_allocator_free(kiln_allocator_system(), text);
  int64_t two[] = {2}, three_two[] = {3, 2};
  kiln_interp_value_t inputs[4] = {scalar_i64(2), scalar_bool(false),
                                   floats(2, three_two, (float[]){1, 2, 3, 4, 5, 6}),
                                   floats(1, two, (float[]){1, 2})};
  kiln_interp_value_t result;
  KILN_ASSERT_OK(run(module, 4, inputs, &result));
  /* the condition is false: the loop runs nothing, the if gives an empty optional */
  assert_floats(&result.fields[0], 1, two, (float[]){1, 2});
  assert_int_equal(*(const int64_t *)kiln_tensor_data(result.fields[1].tensor), 0);
  assert_floats(&result.fields[2], 2, three_two, (float[]){6, 8, 9, 12, 10, 14});
  assert_int_equal(result.fields[3].kind, KILN_INTERP_VALUE_OPTIONAL);
  assert_int_equal(result.fields[3].num_fields, 0);
  kiln_interp_value_release(kiln_allocator_system(), &result);
  kiln_module_destroy(module);
}

/* ---- running out of memory ---- */

static const char *const sweep_text =
    "def @main(%n: Tensor[(), int64], %t: Tensor[(), bool], %x: Tensor[(3, 2), float32], "
    "%s0: Tensor[(2), float32]) {\n"
    "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool], %a: Tensor[(2), float32], "
    "%s: Sequence[float32], %v: Tensor[(2), float32]) {\n"
    "    %1 = add(%a, %v);\n"
    "    (%c, %1, seq.insert(%s, %1))\n"
    "  };\n"
    "  %2 = seq.empty();\n"
    "  %3 = loop(%0, %n, %t, %s0, %2, %s0, num_captured=1);\n"
    "  %4 = fn (%st: Tensor[(2), float32], %r: Tensor[(2), float32]) {\n"
    "    %5 = add(%st, %r);\n"
    "    (%5, %5)\n"
    "  };\n"
    "  %6 = scan(%4, %s0, %x);\n"
    "  (%3.0, seq.length(%3.1), %6.1, optional(%3.1))\n"
    "}\n";

typedef struct sweep_t {
  kiln_module_t *module;
  kiln_interp_value_t inputs[4];
} sweep_t;

static kiln_status_t sweep_scenario(kiln_allocator_t allocator, void *context) {
  sweep_t *sweep = context;
  kiln_interp_options_t options = {.allocator = allocator};
  kiln_interp_value_t result;
  KILN_RETURN_IF_ERROR(
      kiln_interp_run_values(sweep->module, "main", 4, sweep->inputs, &options, &result));
  int64_t two[] = {2}, three_two[] = {3, 2};
  assert_int_equal(result.kind, KILN_INTERP_VALUE_TUPLE);
  assert_floats(&result.fields[0], 1, two, (float[]){4, 8});
  assert_int_equal(*(const int64_t *)kiln_tensor_data(result.fields[1].tensor), 3);
  assert_floats(&result.fields[2], 2, three_two, (float[]){2, 4, 5, 8, 10, 14});
  assert_int_equal(result.fields[3].fields[0].num_fields, 3);
  kiln_interp_value_release(allocator, &result);
  return KILN_OK;
}

static void test_allocation_failures(void **state) {
  (void)state;
  sweep_t sweep = {.module = parse_round_trip(sweep_text)};
  int64_t two[] = {2}, three_two[] = {3, 2};
  sweep.inputs[0] = scalar_i64(3);
  sweep.inputs[1] = scalar_bool(true);
  sweep.inputs[2] = floats(2, three_two, (float[]){1, 2, 3, 4, 5, 6});
  sweep.inputs[3] = floats(1, two, (float[]){1, 2});
  int64_t attempts = kiln_test_sweep_allocation_failures(sweep_scenario, &sweep);
  assert_true(attempts > 40); /* plans, values, loop and scan state, sequences, slices */
  for (int i = 0; i < 4; ++i) {
    kiln_interp_value_release(kiln_allocator_system(), &sweep.inputs[i]);
  }
  kiln_module_destroy(sweep.module);
}

/* ---- verifier and the refusals of the static pipeline ---- */

/* A body that uses an outer value instead of taking it as a parameter. */
static void test_bodies_must_be_closed(void **state) {
  (void)state;
  const char *text = "def @main(%c: Tensor[(), bool], %x: Tensor[(2), float32]) {\n"
                     "  %0 = fn () { %x };\n"
                     "  if(%c, %0, %0)\n"
                     "}\n";
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("test", text, kiln_allocator_system(), &module));
  KILN_ASSERT_STATUS(kiln_ir_verify(module), INVALID_ARGUMENT,
                     "is not a parameter of the function that uses it");
  int64_t shape[] = {2};
  kiln_interp_value_t inputs[2] = {scalar_bool(true), floats(1, shape, (float[]){1, 2})};
  kiln_interp_value_t result;
  KILN_ASSERT_STATUS(run(module, 2, inputs, &result), INVALID_ARGUMENT,
                     "is not a parameter of the function that uses it");
  kiln_module_destroy(module);
}

/* The pipeline takes dataflow only; the graph executor refuses control
 * flow naming the VM, which compiles it (tests/compiler/test_vm_control.c). */
static void test_static_pipeline_refuses_control_flow(void **state) {
  (void)state;
  kiln_module_t *module = parse_round_trip(if_text);
  KILN_ASSERT_STATUS(kiln_pass_check_static(module), UNIMPLEMENTED,
                     "control flow, sequences and optionals run on the interpreter and compile "
                     "for the VM only (its compiler runs the passes on the dataflow between "
                     "control calls); the pass pipeline and the graph executor refuse them (in "
                     "@main, %4 = if)");
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.executor = KILN_EXECUTOR_GRAPH;
  kiln_compiled_t *compiled = NULL;
  KILN_ASSERT_STATUS(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled),
                     UNIMPLEMENTED, "(in @main, %4 = if)");
  KILN_ASSERT_STATUS(kiln_compiler_build(kiln_allocator_system(), module, &options, &compiled),
                     UNIMPLEMENTED, "--executor graph (control flow compiles for the VM");
  assert_null(compiled);
  kiln_module_destroy(module);
  module = parse_round_trip(sequence_text);
  KILN_ASSERT_STATUS(kiln_pass_check_static(module), UNIMPLEMENTED, "in @main, %s");
  kiln_module_destroy(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_if_runs_the_branch_the_condition_picks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_if_branches_must_agree, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_runs_its_trip_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_stops_when_the_condition_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_carries_a_sequence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_body_must_match_the_carried_values, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_scan_forward_and_reverse, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scan_inputs_must_agree, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequences_and_optionals, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_optional_has_no_element, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sequence_inputs_are_checked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mutator_rewrites_inside_loop_bodies, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fuzz_seed_runs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_body_returns_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bodies_must_be_closed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_static_pipeline_refuses_control_flow, setup, teardown),
  };
  return kiln_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
