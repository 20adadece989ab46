/*
 * rewrite_layer_norm: the exported layer-norm pattern (mean, subtract,
 * power or self-multiply, mean, add epsilon, sqrt and divide or rsqrt and
 * multiply) becomes nn.layer_norm, and a constant per-element scale and
 * shift after it fold into its gamma and beta, whichever operand order the
 * exporter wrote; near misses (another axis for the second mean, an
 * exponent of 3, a shift that varies along another axis) stay as they
 * are. Numbers kept; allocation failures.
 */
#include "op/nn_common.h"
#include "pass_fixture.h"

static const char *const text =
    "def @main(%x: Tensor[(2, 3, 8), float32], %y: Tensor[(2, 3, 8), float32]) {\n"
    "  %0 = mean(%x, axis=[-1], keepdims=True);\n"
    "  %1 = subtract(%x, %0);\n"
    "  %2 = power(%1, meta[Constant][0]);\n"
    "  %3 = mean(%2, axis=[2], keepdims=True);\n"
    "  %4 = add(%3, meta[Constant][1]);\n"
    "  %5 = sqrt(%4);\n"
    "  %6 = divide(%1, %5);\n"
    "  %7 = multiply(%6, meta[Constant][2]);\n"
    "  %8 = add(meta[Constant][3], %7);\n"
    "  %9 = mean(%y, axis=[-1], keepdims=True);\n"
    "  %10 = subtract(%y, %9);\n"
    "  %11 = multiply(%10, %10);\n"
    "  %12 = mean(%11, axis=[-1], keepdims=True);\n"
    "  %13 = add(meta[Constant][1], %12);\n"
    "  %14 = rsqrt(%13);\n"
    "  %15 = multiply(%10, %14);\n"
    "  %16 = power(%1, meta[Constant][4]);\n"
    "  %17 = mean(%16, axis=[-1], keepdims=True);\n"
    "  %18 = add(%17, meta[Constant][1]);\n"
    "  %19 = divide(%1, sqrt(%18));\n"
    "  (%8, %15, %19)\n"
    "}\n"
    "#[metadata]\n"
    "Constant[0] = Tensor[(), float32] [2]\n"
    "Constant[1] = Tensor[(), float32] [0.001]\n"
    "Constant[2] = Tensor[(8), float32] [1, 2, 3, 4, 5, 6, 7, 8]\n"
    "Constant[3] = Tensor[(1, 1, 8), float32] [0, 1, 0, 1, 0, 1, 0, 1]\n"
    "Constant[4] = Tensor[(), float32] [3]\n";

static void test_pattern_becomes_layer_norm(void **state) {
  (void)state;
  kiln_module_t *m = pf_parse(text);
  pf_assert_pass_keeps_numbers(m, "rewrite_layer_norm");
  KILN_ASSERT_OK(pf_run_pass(m, "dead_code_elimination"));
  assert_int_equal(pf_count(m, &kiln_op_layer_norm), 2);
  assert_int_equal(pf_count(m, &kiln_op_rsqrt), 0);
  assert_int_equal(pf_count(m, &kiln_op_sqrt), 1); /* the cube's pattern stays */
  kiln_tuple_t *body = kiln_expr_as_tuple(kiln_module_get_function(m, "main")->body);
  kiln_call_t *first = kiln_expr_as_call(body->fields[0]);
  assert_ptr_equal(first->op, &kiln_op_layer_norm);
  const kiln_nn_norm_attrs_t *a = first->attrs;
  assert_true(a->scale && a->center);
  assert_int_equal(a->axis, 2);
  assert_float_equal(a->epsilon, 0.001, 1e-9);
  kiln_call_t *second = kiln_expr_as_call(body->fields[1]);
  assert_ptr_equal(second->op, &kiln_op_layer_norm);
  a = second->attrs;
  assert_false(a->scale || a->center);
  kiln_module_destroy(m);
}

/* A shift with one value per row, not per element of the axis, stays an
 * add after the layer_norm. */
static void test_shift_along_other_axis_stays(void **state) {
  (void)state;
  static const char *const shifted = "def @main(%x: Tensor[(3, 8), float32]) {\n"
                                     "  %0 = mean(%x, axis=[1], keepdims=True);\n"
                                     "  %1 = subtract(%x, %0);\n"
                                     "  %2 = multiply(%1, %1);\n"
                                     "  %3 = mean(%2, axis=[1], keepdims=True);\n"
                                     "  %4 = add(%3, meta[Constant][0]);\n"
                                     "  %5 = divide(%1, sqrt(%4));\n"
                                     "  add(%5, meta[Constant][1])\n"
                                     "}\n"
                                     "#[metadata]\n"
                                     "Constant[0] = Tensor[(), float32] [0.00001]\n"
                                     "Constant[1] = Tensor[(3, 1), float32] [1, 2, 3]\n";
  kiln_module_t *m = pf_parse(shifted);
  pf_assert_pass_keeps_numbers(m, "rewrite_layer_norm");
  assert_int_equal(pf_count(m, &kiln_op_layer_norm), 1);
  kiln_call_t *add = kiln_expr_as_call(kiln_module_get_function(m, "main")->body);
  assert_ptr_equal(add->op, &kiln_op_add);
  kiln_module_destroy(m);
}

static void test_allocation_failures(void **state) {
  (void)state;
  assert_true(pf_sweep_pass(text, "rewrite_layer_norm") > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pattern_becomes_layer_norm),
      cmocka_unit_test(test_shift_along_other_axis_stays),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
