/*
 * Optionals of sequences compiled for the VM (compiler/vm_control.c and the
 * VM's "optional_sequence" declarations): a loop carrying an optional of a
 * sequence whose body gives back a bare sequence (the IR lets a value stand
 * for an optional holding it; the VM wraps it), an optional of a sequence
 * passed through as an output, and its has_element. Inputs go in with
 * kiln_graph_executor_set_input_list (-1 an empty optional, else the
 * sequence's elements) and outputs come back the same way, checked against
 * the reference interpreter for an empty optional, an empty sequence and a
 * sequence of two, over 0, 1 and 3 trips; then the count's and the kind's
 * checks.
 */
#include <string.h>

#include "compiler/build.h"
#include "interp/interp.h"
#include "interp/value.h"
#include "ir/infer.h"
#include "kiln/compiler.h"
#include "kiln_ir_test.h"
#include "kiln_test.h"

/* Per trip: the optional's sequence, or [v] when it has none, then v * v
 * appended; the loop's result, the input itself and whether it holds one. */
static const char opt_seq_text[] =
    "def @main(%o: Optional[Sequence[Tensor[(2), float32]]], %n: Tensor[(), int64],\n"
    "          %t: Tensor[(), bool], %x: Tensor[(2), float32]) {\n"
    "  %0 = fn (%i: Tensor[(), int64], %c: Tensor[(), bool],\n"
    "           %s: Optional[Sequence[Tensor[(2), float32]]], %v: Tensor[(2), float32]) {\n"
    "    %1 = optional.has_element(%s);\n"
    "    %2 = fn (%a: Optional[Sequence[Tensor[(2), float32]]], %b: Tensor[(2), float32]) {\n"
    "      optional.get_element(%a)\n"
    "    };\n"
    "    %3 = fn (%a: Optional[Sequence[Tensor[(2), float32]]], %b: Tensor[(2), float32]) {\n"
    "      seq.construct(%b)\n"
    "    };\n"
    "    %4 = if(%1, %2, %3, %s, %v);\n"
    "    %5 = multiply(%v, %v);\n"
    "    (%c, seq.insert(%4, %5))\n"
    "  };\n"
    "  %6 = loop(%0, %n, %t, %o, %x, num_captured=1);\n"
    "  (%6.0, %o, optional.has_element(%o))\n"
    "}\n";

static kiln_tensor_t *tensor_of(kiln_dtype_t dtype, int ndim, const void *values) {
  kiln_tensor_t *t = NULL;
  int64_t shape[1] = {2};
  size_t bytes = kiln_dtype_size(dtype) * (size_t)(ndim ? 2 : 1);
  KILN_ASSERT_OK(
      kiln_tensor_create_copy(kiln_allocator_system(), dtype, ndim, shape, values, bytes, &t));
  return t;
}

static kiln_tensor_t *pair(float a, float b) {
  float values[2] = {a, b};
  return tensor_of(KILN_DTYPE_FLOAT32, 1, values);
}

/* The interpreter's value as (count, elements): -1 for an empty optional,
 * a sequence's count (bare or in an optional) otherwise. */
static const kiln_interp_value_t *reference_list(const kiln_interp_value_t *value, int *out_count) {
  if (value->kind == KILN_INTERP_VALUE_OPTIONAL) {
    if (value->num_fields == 0) {
      *out_count = -1;
      return NULL;
    }
    value = &value->fields[0];
  }
  assert_int_equal(value->kind, KILN_INTERP_VALUE_SEQUENCE);
  *out_count = value->num_fields;
  return value;
}

static void check_list_output(kiln_graph_executor_t *vm, int index,
                              const kiln_interp_value_t *want) {
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_OK(kiln_graph_executor_output_info(vm, index, &info));
  assert_int_equal(info.kind, KILN_VALUE_KIND_OPTIONAL_SEQUENCE);
  int count = 0, got = -2;
  const kiln_interp_value_t *list = reference_list(want, &count);
  KILN_ASSERT_OK(kiln_graph_executor_get_output_list(vm, index, &got));
  assert_int_equal(got, count);
  for (int i = 0; i < count; ++i) {
    const DLTensor *view = NULL;
    kiln_tensor_t *copy = NULL;
    KILN_ASSERT_OK(kiln_graph_executor_get_output_element(vm, index, i, &view));
    KILN_ASSERT_OK(kiln_tensor_create_copy(kiln_allocator_system(), KILN_DTYPE_FLOAT32, view->ndim,
                                           view->shape, view->data, 2 * sizeof(float), &copy));
    irt_assert_close(copy, list->fields[i].tensor, "element", i);
    kiln_tensor_release(copy);
  }
}

/* The optional input: -1 (empty) or `count` elements of `elements`. */
static void check_run(kiln_module_t *reference, kiln_graph_executor_t *vm, int count,
                      kiln_tensor_t **elements, int64_t trips) {
  kiln_allocator_t a = kiln_allocator_system();
  bool yes = true;
  float x[2] = {1.5f, -2};
  kiln_tensor_t *scalars[3] = {tensor_of(KILN_DTYPE_INT64, 0, &trips),
                               tensor_of(KILN_DTYPE_BOOL, 0, &yes),
                               tensor_of(KILN_DTYPE_FLOAT32, 1, x)};
  kiln_interp_value_t in[4], result;
  KILN_ASSERT_OK(kiln_interp_value_list_create(a, KILN_INTERP_VALUE_OPTIONAL, count >= 0, &in[0]));
  const DLTensor *views[4];
  if (count >= 0) {
    KILN_ASSERT_OK(
        kiln_interp_value_list_create(a, KILN_INTERP_VALUE_SEQUENCE, count, &in[0].fields[0]));
  }
  for (int i = 0; i < count; ++i) {
    kiln_tensor_retain(elements[i]);
    in[0].fields[0].fields[i] = kiln_interp_value_of_tensor(elements[i]);
    views[i] = kiln_tensor_dl(elements[i]);
  }
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_retain(scalars[i]);
    in[1 + i] = kiln_interp_value_of_tensor(scalars[i]);
    KILN_ASSERT_OK(kiln_graph_executor_set_input(vm, 1 + i, kiln_tensor_dl(scalars[i])));
  }
  kiln_interp_options_t options = {.allocator = a};
  KILN_ASSERT_OK(kiln_interp_run_values(reference, "main", 4, in, &options, &result));
  KILN_ASSERT_OK(kiln_graph_executor_set_input_list(vm, 0, count, views));
  KILN_ASSERT_OK(kiln_graph_executor_run(vm));
  check_list_output(vm, 0, &result.fields[0]);
  check_list_output(vm, 1, &result.fields[1]);
  kiln_tensor_t *has = NULL;
  KILN_ASSERT_OK(kiln_graph_executor_copy_output(vm, 2, a, &has));
  irt_assert_close(has, result.fields[2].tensor, "has_element", 0);
  kiln_tensor_release(has);
  kiln_interp_value_release(a, &result);
  for (int i = 0; i < 4; ++i) {
    kiln_interp_value_release(a, &in[i]);
  }
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_release(scalars[i]);
  }
}

static void test_optional_of_a_sequence(void **state) {
  (void)state;
  kiln_module_t *reference = irt_parse("opt_seq", opt_seq_text);
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_compiled_t *compiled = irt_compile_vm("opt_seq", opt_seq_text);
  assert_non_null(strstr(compiled->vm_json, "\"optional_sequence\""));
  kiln_graph_executor_t *vm = NULL;
  KILN_ASSERT_OK(kiln_compiled_create_executor(compiled, &vm));
  kiln_compiled_destroy(compiled);
  kiln_tensor_t *elements[2] = {pair(0.5f, 3), pair(-1, 2)};
  for (int64_t trips = 0; trips < 4; trips += 1 + (trips > 0)) {
    check_run(reference, vm, -1, elements, trips);
    check_run(reference, vm, 0, elements, trips);
    check_run(reference, vm, 2, elements, trips);
  }
  kiln_graph_executor_tensor_info_t info;
  KILN_ASSERT_OK(kiln_graph_executor_input_info(vm, 0, &info));
  assert_int_equal(info.kind, KILN_VALUE_KIND_OPTIONAL_SEQUENCE);
  KILN_ASSERT_OK(kiln_graph_executor_input_info(vm, 1, &info));
  assert_int_equal(info.kind, KILN_VALUE_KIND_TENSOR);
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_list(vm, 0, -2, NULL), INVALID_ARGUMENT,
                     "input 0 'o' is an optional of a sequence (-1: empty, or the sequence's "
                     "elements), given -2 elements");
  KILN_ASSERT_STATUS(kiln_graph_executor_set_input_list(vm, 1, -1, NULL), INVALID_ARGUMENT,
                     "input 1 'n' is a tensor (kiln_graph_executor_set_input), given -1 elements");
  kiln_tensor_release(elements[0]);
  kiln_tensor_release(elements[1]);
  kiln_graph_executor_destroy(vm);
  kiln_module_destroy(reference);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_optional_of_a_sequence),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
