/*
 * Tests of the operator registry as a whole: every operator of op_list.h is
 * in the table under its own id and name, has the rules every operator must
 * have, and its default attributes are created, validated and printed, and
 * read back from the printed text to the same text.
 */
#include <string.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "kiln_test.h"
#include "op/control_attrs.h"
#include "op/impl.h"
#include "op/op.h"

static const char *const expected_names[] = {
#define NAME_(id, name, symbol) name,
    KILN_OP_LIST(NAME_)
#undef NAME_
};

static void test_every_operator_is_registered(void **state) {
  (void)state;
  assert_int_equal(kiln_op_count(), KILN_OP_COUNT_);
  for (int id = 0; id < KILN_OP_COUNT_; ++id) {
    const kiln_op_t *op = kiln_op_get((kiln_op_id_t)id);
    assert_non_null(op);
    assert_int_equal(op->id, id);
    assert_string_equal(op->name, expected_names[id]);
    const kiln_op_t *found = NULL;
    KILN_ASSERT_OK(kiln_op_find(op->name, &found));
    assert_ptr_equal(found, op);
    assert_non_null(op->infer_type);
    /* The control operators are evaluated by the interpreter itself. */
    assert_true(kiln_op_reference_get(op->id) != NULL || kiln_op_is_control(op));
    /* arange, random.uniform, random.normal, seq.empty and optional make a
     * value from attributes only. */
    bool from_attrs = op->id == KILN_OP_ARANGE || op->id == KILN_OP_RANDOM_UNIFORM ||
                      op->id == KILN_OP_RANDOM_NORMAL || op->id == KILN_OP_SEQ_EMPTY ||
                      op->id == KILN_OP_OPTIONAL;
    assert_true(op->min_inputs >= 1 || from_attrs);
    assert_true(op->max_inputs < 0 || op->max_inputs >= op->min_inputs);
    assert_string_not_equal(kiln_op_pattern_name(op->pattern), "invalid");
    assert_true((op->attrs_size == 0) == (op->num_attr_fields == 0));
  }
  assert_null(kiln_op_get(KILN_OP_COUNT_));
  const kiln_op_t *missing = NULL;
  KILN_ASSERT_STATUS(kiln_op_find("nn.conv4d", &missing), NOT_FOUND, "'nn.conv4d'");
  assert_null(missing);
}

static void test_default_attrs_print_and_parse_back(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_strbuf_t first, second;
  kiln_strbuf_initialize(&first, kiln_allocator_system());
  kiln_strbuf_initialize(&second, kiln_allocator_system());
  for (int id = 0; id < KILN_OP_COUNT_; ++id) {
    const kiln_op_t *op = kiln_op_get((kiln_op_id_t)id);
    void *attrs = NULL;
    KILN_ASSERT_OK(kiln_op_attrs_create_default(op, &arena, &attrs));
    if (op->attrs_size == 0) {
      assert_null(attrs);
      continue;
    }
    kiln_strbuf_reset(&first);
    KILN_ASSERT_OK(kiln_op_attrs_format(op, attrs, &first));
    /* Set every field again from its printed value, then print again. */
    void *again = NULL;
    KILN_ASSERT_OK(kiln_op_attrs_create_default(op, &arena, &again));
    for (int f = 0; f < op->num_attr_fields; ++f) {
      const kiln_attr_field_t *field = &op->attr_fields[f];
      kiln_strbuf_reset(&second);
      KILN_ASSERT_OK(kiln_op_attrs_format(op, attrs, &second));
      const char *text = strstr(kiln_strbuf_c_str(&second), field->name);
      assert_non_null(text);
      KILN_ASSERT_OK(kiln_op_attrs_set_text(op, again, field->name, field->default_text, &arena));
    }
    kiln_strbuf_reset(&second);
    KILN_ASSERT_OK(kiln_op_attrs_format(op, again, &second));
    assert_string_equal(kiln_strbuf_c_str(&first), kiln_strbuf_c_str(&second));
  }
  const kiln_op_t *conv = kiln_op_get(KILN_OP_CONV2D);
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(conv, &arena, &attrs));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(conv, attrs, "strides", "[2, 2]", &arena));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(conv, attrs, "padding", "[3, 3, 3, 3]", &arena));
  kiln_strbuf_reset(&first);
  KILN_ASSERT_OK(kiln_op_attrs_format(conv, attrs, &first));
  assert_non_null(strstr(kiln_strbuf_c_str(&first), "strides=[2, 2], padding=[3, 3, 3, 3]"));
  KILN_ASSERT_STATUS(kiln_op_attrs_set_text(conv, attrs, "stride", "[2, 2]", &arena),
                     INVALID_ARGUMENT, "nn.conv2d has no attribute 'stride'");
  KILN_ASSERT_STATUS(kiln_op_attrs_set_text(conv, attrs, "strides", "[2, x]", &arena),
                     INVALID_ARGUMENT, "nn.conv2d attribute strides=[2, x]");
  KILN_ASSERT_STATUS(kiln_op_attrs_set_text(conv, attrs, "groups", "1 2", &arena), INVALID_ARGUMENT,
                     "unexpected '2'");
  kiln_strbuf_deinitialize(&second);
  kiln_strbuf_deinitialize(&first);
  kiln_arena_deinitialize(&arena);
}

/* kiln_op_evaluate makes a tensor type's output and a tuple type's outputs
 * (split), and refuses what it cannot evaluate with UNIMPLEMENTED: a
 * nested tuple type, an operator without a reference kernel. */
/* kiln_op_attrs_copy: every field's typed value, the lists and strings in
 * the copy's own arena (the copy outlives the original's). */
static void test_attrs_copy(void **state) {
  (void)state;
  kiln_arena_t arena, other;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  kiln_arena_initialize(&other, kiln_allocator_system(), 0);
  kiln_strbuf_t first, second;
  kiln_strbuf_initialize(&first, kiln_allocator_system());
  kiln_strbuf_initialize(&second, kiln_allocator_system());
  const kiln_op_t *ops[] = {kiln_op_get(KILN_OP_CONV2D), kiln_op_get(KILN_OP_CONV2D),
                            kiln_op_get(KILN_OP_LEAKY_RELU), kiln_op_get(KILN_OP_SUM)};
  const char *const settings[][2] = {{"strides", "[2, 2]"},
                                     {"data_layout", "\"NHWC\""},
                                     {"alpha", "-0.5625"},
                                     {"keepdims", "True"}};
  void *originals[4] = {NULL}, *copies[4] = {NULL};
  for (int i = 0; i < 4; ++i) {
    if (i != 1) {
      KILN_ASSERT_OK(kiln_op_attrs_create_default(ops[i], &other, &originals[i]));
    } else {
      originals[i] = originals[0];
    }
    KILN_ASSERT_OK(
        kiln_op_attrs_set_text(ops[i], originals[i], settings[i][0], settings[i][1], &other));
  }
  for (int i = 1; i < 4; ++i) {
    KILN_ASSERT_OK(kiln_op_attrs_format(ops[i], originals[i], &first));
    KILN_ASSERT_OK(kiln_op_attrs_copy(ops[i], originals[i], &arena, &copies[i]));
  }
  kiln_arena_deinitialize(&other); /* the originals are gone */
  for (int i = 1; i < 4; ++i) {
    KILN_ASSERT_OK(kiln_op_attrs_format(ops[i], copies[i], &second));
  }
  const char *text = kiln_strbuf_c_str(&second);
  assert_string_equal(text, kiln_strbuf_c_str(&first));
  assert_non_null(strstr(text, "strides=[2, 2]"));
  assert_non_null(strstr(text, "data_layout=\"NHWC\""));
  assert_non_null(strstr(text, "alpha=-0.5625"));
  assert_non_null(strstr(text, "keepdims=True"));
  void *none = &arena;
  KILN_ASSERT_OK(kiln_op_attrs_copy(kiln_op_get(KILN_OP_ADD), NULL, &arena, &none));
  assert_null(none);
  kiln_strbuf_deinitialize(&second);
  kiln_strbuf_deinitialize(&first);
  kiln_arena_deinitialize(&arena);
}

static void test_evaluate(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 4096);
  kiln_allocator_t allocator = kiln_allocator_system();
  const float data[6] = {1, 2, 3, 4, 5, 6};
  kiln_tensor_t *x = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(allocator, KILN_DTYPE_FLOAT32, 1, (const int64_t[]){6}, &x));
  memcpy(kiln_tensor_data(x), data, sizeof(data));
  const kiln_op_t *split = kiln_op_get(KILN_OP_SPLIT);
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(split, &arena, &attrs));
  KILN_ASSERT_OK(kiln_op_attrs_set_text(split, attrs, "sections", "3", &arena));
  const kiln_type_t *in_type = NULL, *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_of(&arena, x, &in_type));
  KILN_ASSERT_OK(kiln_op_infer_type(split, attrs, 1, &in_type, &arena, &type));
  kiln_op_evaluation_t e;
  KILN_ASSERT_OK(kiln_op_evaluate(allocator, split, attrs, 1, &x, type, &e));
  assert_int_equal(e.count, 3);
  assert_int_equal(((const float *)kiln_tensor_data(e.outputs[2]))[1], 6);
  kiln_op_evaluation_release(&e);
  assert_int_equal(e.count, 0);
  const kiln_type_t *nested = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&arena, 1, &type, &nested));
  KILN_ASSERT_STATUS(kiln_op_evaluate(allocator, split, attrs, 1, &x, nested, &e), UNIMPLEMENTED,
                     "a nested tuple result");
  assert_int_equal(e.count, 0);
  const kiln_op_t *if_op = kiln_op_get(KILN_OP_IF);
  KILN_ASSERT_STATUS(kiln_op_evaluate(allocator, if_op, NULL, 1, &x, in_type, &e), UNIMPLEMENTED,
                     "has no reference kernel");
  kiln_tensor_release(x);
  kiln_arena_deinitialize(&arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_operator_is_registered),
      cmocka_unit_test(test_default_attrs_print_and_parse_back),
      cmocka_unit_test(test_attrs_copy),
      cmocka_unit_test(test_evaluate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
