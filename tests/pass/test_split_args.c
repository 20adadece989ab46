/*
 * split_args (pass/split_args.c): a 17-way concatenate as a before/after
 * text (parts of 8 and 9, joined), wider ones (40: three parts; 300: parts
 * joined by a concatenate that is split again) with every concatenate
 * within KILN_OP_MAX_FUNCTION_ARGS and the interpreter's numbers unchanged,
 * and concatenates within the limit left alone.
 */
#include <stdio.h>

#include "ir/infer.h"
#include "ir/order.h"
#include "kiln_ir_test.h"
#include "kiln_pass_test.h"
#include "op/op.h"

/* main(x: (1, 2)) = concatenate(x + 0, x + 1, ..., axis=1) of `count`. */
static kiln_module_t *concatenate_module(int count) {
  kiln_module_t *m = irt_module();
  kiln_var_t *x = irt_var(m, "x", KILN_DTYPE_FLOAT32, 2, SHAPE(1, 2));
  kiln_expr_t **parts = calloc((size_t)count, sizeof(*parts));
  assert_non_null(parts);
  for (int i = 0; i < count; ++i) {
    kiln_expr_t *shift = irt_constant_f32(m, 0, NULL, (const float[]){(float)i});
    parts[i] = IRT_CALL(m, "add", NULL, &x->base, shift);
  }
  irt_add_function(m, "main", 1, &x,
                   irt_call(m, "concatenate", IRT_ATTRS("axis", "1"), count, parts));
  free(parts);
  return m;
}

/* The argument counts of main's concatenates, and how many there are. */
static int concatenates(const kiln_module_t *m, int *widest) {
  kiln_ir_order_t order;
  KILN_ASSERT_OK(
      kiln_ir_order_compute(kiln_module_get_function(m, "main"), kiln_allocator_system(), &order));
  int count = 0;
  *widest = 0;
  for (size_t i = 0; i < kiln_ir_order_count(&order); ++i) {
    kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&order, i));
    if (call && call->op == &kiln_op_concatenate) {
      count += 1;
      *widest = call->num_args > *widest ? call->num_args : *widest;
    }
  }
  kiln_ir_order_deinitialize(&order);
  return count;
}

/* Splits a `count`-way concatenate; returns how many concatenates there are
 * after, checking their width and the numbers. */
static int split(int count, int *widest) {
  kiln_module_t *reference = concatenate_module(count);
  KILN_ASSERT_OK(kiln_ir_infer_types(reference));
  kiln_module_t *m = concatenate_module(count);
  kiln_pass_context_t *context = kpt_context(0);
  KILN_ASSERT_OK(kpt_run(m, context, "split_args"));
  kiln_pass_context_destroy(context);
  int result = concatenates(m, widest);
  assert_in_range(*widest, 1, KILN_OP_MAX_FUNCTION_ARGS);
  kpt_assert_same_numbers(reference, m, 3);
  kiln_module_destroy(reference);
  kiln_module_destroy(m);
  return result;
}

static const char split_17_after[] =
    "def @main(%x: Tensor[(1, 2), float32]) -> Tensor[(1, 34), float32] {\n"
    "  %0 = add(%x, meta[Constant][0]) /* Tensor[(1, 2), float32] */;\n"
    "  %1 = add(%x, meta[Constant][1]) /* Tensor[(1, 2), float32] */;\n"
    "  %2 = add(%x, meta[Constant][2]) /* Tensor[(1, 2), float32] */;\n"
    "  %3 = add(%x, meta[Constant][3]) /* Tensor[(1, 2), float32] */;\n"
    "  %4 = add(%x, meta[Constant][4]) /* Tensor[(1, 2), float32] */;\n"
    "  %5 = add(%x, meta[Constant][5]) /* Tensor[(1, 2), float32] */;\n"
    "  %6 = add(%x, meta[Constant][6]) /* Tensor[(1, 2), float32] */;\n"
    "  %7 = add(%x, meta[Constant][7]) /* Tensor[(1, 2), float32] */;\n"
    "  %8 = concatenate(%0, %1, %2, %3, %4, %5, %6, %7, axis=1) /* Tensor[(1, 16), float32] */;\n"
    "  %9 = add(%x, meta[Constant][8]) /* Tensor[(1, 2), float32] */;\n"
    "  %10 = add(%x, meta[Constant][9]) /* Tensor[(1, 2), float32] */;\n"
    "  %11 = add(%x, meta[Constant][10]) /* Tensor[(1, 2), float32] */;\n"
    "  %12 = add(%x, meta[Constant][11]) /* Tensor[(1, 2), float32] */;\n"
    "  %13 = add(%x, meta[Constant][12]) /* Tensor[(1, 2), float32] */;\n"
    "  %14 = add(%x, meta[Constant][13]) /* Tensor[(1, 2), float32] */;\n"
    "  %15 = add(%x, meta[Constant][14]) /* Tensor[(1, 2), float32] */;\n"
    "  %16 = add(%x, meta[Constant][15]) /* Tensor[(1, 2), float32] */;\n"
    "  %17 = add(%x, meta[Constant][16]) /* Tensor[(1, 2), float32] */;\n"
    "  %18 = concatenate(%9, %10, %11, %12, %13, %14, %15, %16, %17, axis=1) /* Tensor[(1, 18), "
    "float32] */;\n"
    "  %19 = concatenate(%8, %18, axis=1) /* Tensor[(1, 34), float32] */;\n"
    "  %19\n"
    "}\n";

static void test_17_way(void **state) {
  (void)state;
  kiln_module_t *m = concatenate_module(17);
  kiln_pass_context_t *context = kpt_context(0);
  kpt_expect_in(m, context, "split_args", split_17_after);
  kiln_pass_context_destroy(context);
  kiln_module_destroy(m);
}

static void test_wide(void **state) {
  (void)state;
  int widest = 0;
  assert_int_equal(split(17, &widest), 3);
  assert_int_equal(widest, 9);
  assert_int_equal(split(40, &widest), 4); /* parts of 13, 13, 14 and the join */
  assert_int_equal(widest, 14);
  /* 300: 19 parts of 15 or 16, joined by 19 -> parts of 9 and 10, joined. */
  assert_int_equal(split(300, &widest), 19 + 2 + 1);
  assert_int_equal(widest, 16);
}

static void test_within_the_limit_unchanged(void **state) {
  (void)state;
  int widest = 0;
  assert_int_equal(split(KILN_OP_MAX_FUNCTION_ARGS, &widest), 1);
  assert_int_equal(widest, KILN_OP_MAX_FUNCTION_ARGS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_17_way),
      cmocka_unit_test(test_wide),
      cmocka_unit_test(test_within_the_limit_unchanged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
