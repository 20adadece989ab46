/*
 * Tests of symbolic dims in tensor types (ir/type.h): dimension variables,
 * construction, equality, printing and the text parser reading them back,
 * the verifier's checks, the guard that refuses them at an operator without
 * a symbolic-aware relation (op/symbolic.c) and the static-shape check the
 * graph compiler runs (ir/static_shapes.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "ir/static_shapes.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "kiln_ir_test.h"
#include "op/op.h"

static char *copy_text(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = malloc(size);
  assert_non_null(copy);
  memcpy(copy, text, size);
  return copy;
}

static const kiln_dim_var_t *var(kiln_arena_t *arena, const char *name, int64_t bound) {
  const kiln_dim_var_t *v = NULL;
  KILN_ASSERT_OK(kiln_dim_var_create(arena, name, bound, &v));
  return v;
}

static void assert_type_text(const kiln_type_t *type, const char *expected) {
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  assert_string_equal(kiln_type_text(type, text), expected);
}

static void test_dim_vars_and_types(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 4096);
  const kiln_dim_var_t *n = var(&arena, "n", -1);
  const kiln_dim_var_t *n2 = var(&arena, "n", -1);
  const kiln_dim_var_t *b = var(&arena, "batch_1", 128);
  const kiln_dim_var_t *any = var(&arena, "", -1);
  const kiln_type_t *t = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 3, SHAPE(7, 0, 384),
                                                  (const kiln_dim_var_t *[]){b, n, NULL}, &t));
  assert_type_text(t, "Tensor[(batch_1<=128, n, 384), float32]");
  assert_false(kiln_type_is_static(t));
  assert_false(kiln_tensor_type_is_static(kiln_type_as_tensor(t)));
  assert_int_equal(kiln_type_as_tensor(t)->shape[0], -1); /* the 7 is not kept */
  assert_int_equal(kiln_type_as_tensor(t)->shape[2], 384);
  int dim = 0;
  assert_ptr_equal(kiln_type_first_symbolic(t, &dim), b);
  assert_int_equal(dim, 0);
  const kiln_type_t *same = NULL, *other = NULL, *anon = NULL, *anon2 = NULL, *fixed = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 1, SHAPE(-1),
                                                  (const kiln_dim_var_t *[]){n}, &same));
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 1, SHAPE(-1),
                                                  (const kiln_dim_var_t *[]){n2}, &other));
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 1, SHAPE(-1),
                                                  (const kiln_dim_var_t *[]){any}, &anon));
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 1, SHAPE(-1),
                                                  (const kiln_dim_var_t *[]){b}, &anon2));
  KILN_ASSERT_OK(kiln_tensor_type_create(&arena, KILN_DTYPE_FLOAT32, 1, SHAPE(5), &fixed));
  assert_true(kiln_type_equal(same, other)); /* by name */
  assert_false(kiln_type_equal(same, anon2));
  assert_false(kiln_type_equal(same, anon));
  assert_false(kiln_type_equal(same, fixed));
  assert_true(kiln_type_is_static(fixed));
  assert_null(kiln_type_first_symbolic(fixed, &dim));
  assert_int_equal(dim, -1);
  assert_type_text(anon, "Tensor[(?), float32]");
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&arena, 2, (const kiln_type_t *[]){fixed, anon}, &tuple));
  assert_false(kiln_type_is_static(tuple));
  assert_ptr_equal(kiln_type_first_symbolic(tuple, &dim), any);
  /* Static types made through the symbolic constructor stay static. */
  const kiln_type_t *plain = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_INT64, 2, SHAPE(2, 3),
                                                  (const kiln_dim_var_t *[]){NULL, NULL}, &plain));
  assert_null(kiln_type_as_tensor(plain)->vars);
  kiln_arena_deinitialize(&arena);
}

static void test_dim_var_errors(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 4096);
  const kiln_dim_var_t *v = NULL;
  KILN_ASSERT_STATUS(kiln_dim_var_create(&arena, "2n", -1, &v), INVALID_ARGUMENT,
                     "dim var: \"2n\" is not an identifier");
  KILN_ASSERT_STATUS(kiln_dim_var_create(&arena, "a b", -1, &v), INVALID_ARGUMENT,
                     "is not an identifier");
  KILN_ASSERT_STATUS(kiln_dim_var_create(&arena, "n", -2, &v), INVALID_ARGUMENT,
                     "dim var n: upper bound -2 is negative");
  KILN_ASSERT_STATUS(kiln_dim_var_create(&arena, NULL, -1, &v), INVALID_ARGUMENT, "no name");
  const kiln_type_t *t = NULL;
  const kiln_dim_var_t *n = var(&arena, "n", -1);
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 2, SHAPE(-3, 1),
                                                  (const kiln_dim_var_t *[]){n, NULL}, &t));
  KILN_ASSERT_STATUS(kiln_tensor_type_create_symbolic(&arena, KILN_DTYPE_FLOAT32, 2, SHAPE(1, -3),
                                                      (const kiln_dim_var_t *[]){n, NULL}, &t),
                     INVALID_ARGUMENT, "tensor type");
  kiln_arena_deinitialize(&arena);
}

static char *print(const kiln_module_t *module) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_ir_print_module(module, NULL, &sb));
  char *text = copy_text(kiln_strbuf_c_str(&sb));
  kiln_strbuf_deinitialize(&sb);
  return text;
}

static const char round_trip[] =
    "def @main(%x: Tensor[(batch<=8, n, 384), float32], %w: Tensor[(16, 384), float32]) -> "
    "Tensor[(batch<=8, n, 16), float32] {\n"
    "  %0 = nn.dense(%x, %w, units=16) /* Tensor[(batch<=8, n, 16), float32] */;\n"
    "  %0\n"
    "}\n";

static void test_text_round_trip(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("t", round_trip, kiln_allocator_system(), &module));
  char *text = print(module);
  assert_string_equal(text, round_trip);
  free(text);
  KILN_ASSERT_OK(kiln_ir_verify(module));
  kiln_module_destroy(module);
  KILN_ASSERT_OK(kiln_ir_parse_module("t", "def @main(%x: Tensor[(?, 4), float32]) { nn.relu(%x) }",
                                      kiln_allocator_system(), &module));
  text = print(module);
  assert_non_null(strstr(text, "nn.relu(%x) /* Tensor[(?, 4), float32] */"));
  free(text);
  kiln_module_destroy(module);
}

static void assert_parse_error(const char *text, const char *message) {
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(kiln_ir_parse_module("t", text, kiln_allocator_system(), &module),
                     INVALID_ARGUMENT, message);
  assert_null(module);
}

static void test_text_errors(void **state) {
  (void)state;
  assert_parse_error("def @main(%x: Tensor[(n<4), float32]) { %x }",
                     "t:1:25: expected '=' after '<' in a dim's upper bound");
  assert_parse_error("def @main(%x: Tensor[(n<=m), float32]) { %x }",
                     "expected an upper bound (an integer)");
  assert_parse_error("def @main(%x: Tensor[(n m), float32]) { %x }",
                     "expected ',' or ')' after a dimension");
  assert_parse_error("def @main(%x: Tensor[(-1), float32]) { %x }",
                     "a dimension cannot be negative");
}

static void test_verifier_checks_bounds(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module(
      "t", "def @main(%x: Tensor[(n<=4), float32], %y: Tensor[(n<=8), float32]) { add(%x, %y) }",
      kiln_allocator_system(), &module));
  KILN_ASSERT_STATUS(kiln_ir_verify(module), INVALID_ARGUMENT,
                     "in @main, %y: the dim variable n has the upper bounds 4 and 8");
  kiln_module_destroy(module);
}

static void test_guard_refuses_static_only_operators(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_STATUS(
      kiln_ir_parse_module("t",
                           "def @main(%x: Tensor[(1, 3, h, 8), float32], "
                           "%w: Tensor[(4, 3, 3, 3), float32]) { nn.conv2d(%x, %w) }",
                           kiln_allocator_system(), &module),
      INVALID_ARGUMENT,
      "in @main, %0 = nn.conv2d: nn.conv2d: input 0 has the symbolic dim h (dim 2); this "
      "operator needs static shapes");
  assert_null(module);
  /* The guard itself, as every caller of a relation meets it. */
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 4096);
  const kiln_type_t *x = NULL, *w = NULL, *out = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(&arena, KILN_DTYPE_FLOAT32, 4, SHAPE(4, 3, 3, 3), &w));
  KILN_ASSERT_OK(kiln_tensor_type_create_symbolic(
      &arena, KILN_DTYPE_FLOAT32, 4, SHAPE(1, 3, -1, 8),
      (const kiln_dim_var_t *[]){NULL, NULL, var(&arena, "", -1), NULL}, &x));
  const kiln_op_t *conv = NULL;
  KILN_ASSERT_OK(kiln_op_find("nn.conv2d", &conv));
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(conv, &arena, &attrs));
  KILN_ASSERT_STATUS(
      kiln_op_infer_type(conv, attrs, 2, (const kiln_type_t *[]){w, x}, &arena, &out),
      UNIMPLEMENTED, "nn.conv2d: input 1 has the symbolic dim ? (dim 2)");
  assert_null(out);
  kiln_arena_deinitialize(&arena);
}

static void test_require_static(void **state) {
  (void)state;
  kiln_module_t *module = NULL;
  KILN_ASSERT_OK(kiln_ir_parse_module("t", round_trip, kiln_allocator_system(), &module));
  KILN_ASSERT_STATUS(kiln_ir_module_require_static(module, "the graph compiler"), UNIMPLEMENTED,
                     "the graph compiler: in @main, parameter %x has the type Tensor[(batch<=8, n, "
                     "384), float32] with the symbolic dim batch (dim 0); the graph compiler "
                     "needs static shapes");
  kiln_module_destroy(module);
  KILN_ASSERT_OK(kiln_ir_parse_module(
      "t", "def @main(%x: Tensor[(2, 4), float32]) { reshape(%x, newshape=[8]) }",
      kiln_allocator_system(), &module));
  KILN_ASSERT_OK(kiln_ir_module_require_static(module, "the graph compiler"));
  kiln_module_destroy(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dim_vars_and_types),
      cmocka_unit_test(test_dim_var_errors),
      cmocka_unit_test(test_text_round_trip),
      cmocka_unit_test(test_text_errors),
      cmocka_unit_test(test_verifier_checks_bounds),
      cmocka_unit_test(test_guard_refuses_static_only_operators),
      cmocka_unit_test(test_require_static),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
