/*
 * Tests of NumPy broadcasting (op/broadcast.h): the shape rule on matching,
 * stretched, missing, rank-0 and zero-sized dims and its error text; the shape
 * list text and its truncation; the relation-level helper; the layout rule of
 * broadcasting operators; and the walker, whose offsets are checked against
 * offsets computed here from nested loops, including its refusal of operands
 * that would take it out of bounds.
 */
#include <string.h>

#include "base/arena.h"
#include "kiln_test.h"
#include "op/broadcast.h"

static kiln_status_t broadcast2(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b,
                                int *out_ndim, int64_t *out_shape) {
  const int ndims[] = {ndim_a, ndim_b};
  const int64_t *shapes[] = {a, b};
  return kiln_broadcast_shapes("add", 2, ndims, shapes, out_ndim, out_shape);
}

static void assert_shape(int ndim, const int64_t *shape, int expected_ndim,
                         const int64_t *expected) {
  assert_int_equal(ndim, expected_ndim);
  for (int d = 0; d < ndim; ++d) {
    assert_int_equal(shape[d], expected[d]);
  }
}

static void test_shapes_broadcast(void **state) {
  (void)state;
  int ndim = -1;
  int64_t shape[KILN_MAX_RANK];
  const int64_t a[] = {2, 3};
  const int64_t row[] = {3};
  KILN_ASSERT_OK(broadcast2(2, a, 1, row, &ndim, shape));
  assert_shape(ndim, shape, 2, a);
  KILN_ASSERT_OK(broadcast2(1, row, 2, a, &ndim, shape));
  assert_shape(ndim, shape, 2, a);
  /* rank 0 against rank 1 and rank 0 against rank 0 */
  const int64_t five[] = {5};
  KILN_ASSERT_OK(broadcast2(0, NULL, 1, five, &ndim, shape));
  assert_shape(ndim, shape, 1, five);
  KILN_ASSERT_OK(broadcast2(0, NULL, 0, NULL, &ndim, shape));
  assert_int_equal(ndim, 0);
  /* stretching on both sides */
  const int64_t p[] = {5, 1, 3};
  const int64_t q[] = {7, 1};
  const int64_t pq[] = {5, 7, 3};
  KILN_ASSERT_OK(broadcast2(3, p, 2, q, &ndim, shape));
  assert_shape(ndim, shape, 3, pq);
  /* zero-sized dims pair with 0 and 1 */
  const int64_t zero[] = {0, 3};
  const int64_t one[] = {1, 1};
  KILN_ASSERT_OK(broadcast2(2, zero, 2, one, &ndim, shape));
  assert_shape(ndim, shape, 2, zero);
  KILN_ASSERT_OK(broadcast2(2, zero, 1, row, &ndim, shape));
  assert_shape(ndim, shape, 2, zero);
}

static void test_shapes_errors(void **state) {
  (void)state;
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  const int64_t a[] = {1, 3, 4};
  const int64_t b[] = {5, 4};
  KILN_ASSERT_STATUS(broadcast2(3, a, 2, b, &ndim, shape), INVALID_ARGUMENT,
                     "add: cannot broadcast (1, 3, 4) and (5, 4): dim 1 of the result would be "
                     "3 vs 5");
  const int64_t c[] = {2, 3};
  const int64_t d[] = {4, 3};
  KILN_ASSERT_STATUS(broadcast2(2, c, 2, d, &ndim, shape), INVALID_ARGUMENT,
                     "add: cannot broadcast (2, 3) and (4, 3)");
  const int64_t zero[] = {0};
  const int64_t three[] = {3};
  KILN_ASSERT_STATUS(broadcast2(1, zero, 1, three, &ndim, shape), INVALID_ARGUMENT,
                     "add: cannot broadcast (0,) and (3,): dim 0 of the result would be 0 vs 3");
  /* three shapes: the message lists all of them */
  const int ndims[] = {1, 1, 1};
  const int64_t two[] = {2};
  const int64_t one[] = {1};
  const int64_t *shapes[] = {two, one, three};
  KILN_ASSERT_STATUS(kiln_broadcast_shapes("where", 3, ndims, shapes, &ndim, shape),
                     INVALID_ARGUMENT,
                     "where: cannot broadcast (2,), (1,) and (3,): dim 0 of the result would be "
                     "2 vs 3");
  /* a rank beyond KILN_MAX_RANK */
  int64_t big[KILN_MAX_RANK + 1];
  for (int i = 0; i <= KILN_MAX_RANK; ++i) {
    big[i] = 1;
  }
  KILN_ASSERT_STATUS(broadcast2(KILN_MAX_RANK + 1, big, 1, three, &ndim, shape), INVALID_ARGUMENT,
                     "add: cannot broadcast rank 33");
}

static void test_shapes_text(void **state) {
  (void)state;
  const int ndims[] = {0, 1, 2};
  const int64_t five[] = {5};
  const int64_t two_three[] = {2, 3};
  const int64_t *shapes[] = {NULL, five, two_three};
  char text[KILN_BROADCAST_TEXT_CAPACITY];
  assert_string_equal(kiln_broadcast_shapes_text(3, ndims, shapes, text, sizeof(text)),
                      "(), (5,) and (2, 3)");
  assert_string_equal(kiln_broadcast_shapes_text(1, ndims + 1, shapes + 1, text, sizeof(text)),
                      "(5,)");
  assert_string_equal(kiln_broadcast_shapes_text(0, ndims, shapes, text, sizeof(text)), "");
  char small[8];
  kiln_broadcast_shapes_text(3, ndims, shapes, small, sizeof(small));
  assert_string_equal(small, "(), (5,");
  assert_ptr_equal(kiln_broadcast_shapes_text(3, ndims, shapes, small, 0), small);
}

static const kiln_op_t test_broadcast_op = {
    .name = "test.bcast", .min_inputs = 1, .max_inputs = -1};

static const kiln_type_t *tensor_type(kiln_arena_t *arena, int ndim, const int64_t *shape) {
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(arena, KILN_DTYPE_FLOAT32, ndim, shape, &type));
  return type;
}

static void test_infer_shape_from_relation(void **state) {
  (void)state;
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  const int64_t a[] = {4, 1, 5};
  const int64_t b[] = {3, 1};
  const int64_t expected[] = {4, 3, 5};
  const kiln_type_t *fields[] = {tensor_type(&arena, 1, b)};
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&arena, 1, fields, &tuple));
  const kiln_type_t *inputs[] = {tensor_type(&arena, 0, NULL), tensor_type(&arena, 3, a),
                                 tensor_type(&arena, 2, b), tuple};
  kiln_type_relation_t relation = {
      .op = &test_broadcast_op, .num_inputs = 4, .inputs = inputs, .arena = &arena};
  int ndim = 0;
  int64_t shape[KILN_MAX_RANK];
  KILN_ASSERT_OK(kiln_broadcast_infer_shape(&relation, 0, 3, &ndim, shape));
  assert_shape(ndim, shape, 3, expected);
  KILN_ASSERT_OK(kiln_broadcast_infer_shape(&relation, 2, 1, &ndim, shape));
  assert_shape(ndim, shape, 2, b);
  KILN_ASSERT_STATUS(kiln_broadcast_infer_shape(&relation, 2, 2, &ndim, shape), INVALID_ARGUMENT,
                     "test.bcast: input 3 must be a tensor");
  KILN_ASSERT_STATUS(kiln_broadcast_infer_shape(&relation, 2, 3, &ndim, shape), INTERNAL,
                     "test.bcast");
  kiln_arena_deinitialize(&arena);
}

typedef struct layout_case_t {
  int num_inputs;
  int ndims[3];
  const char *arriving[3];
  const char *required[3];
  const char *output;
} layout_case_t;

static void test_layout_rule(void **state) {
  (void)state;
  static const layout_case_t cases[] = {
      {2, {4, 4}, {"", "NCHW"}, {"NCHW", "NCHW"}, "NCHW"},
      {2, {4, 4}, {"NHWC", "NCHW"}, {"NHWC", "NHWC"}, "NHWC"},
      {2, {4, 4}, {"", ""}, {"", ""}, ""},
      {2, {5, 5}, {"NCHW16c", NULL}, {"NCHW16c", "NCHW16c"}, "NCHW16c"},
      /* a (C, 1, 1) bias against NCHW, on either side */
      {2, {4, 3}, {"NCHW", "CHW"}, {"NCHW", ""}, "NCHW"},
      {2, {3, 4}, {"", "NCHW"}, {"", "NCHW"}, "NCHW"},
      {3, {1, 4, 4}, {"C", "", "NHWC"}, {"", "NHWC", "NHWC"}, "NHWC"},
      {3, {0, 0, 0}, {"", "", ""}, {"", "", ""}, ""},
  };
  kiln_arena_t arena;
  kiln_arena_initialize(&arena, kiln_allocator_system(), 0);
  const int64_t ones[] = {1, 1, 1, 1, 1};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    const layout_case_t *lc = &cases[c];
    const kiln_type_t *types[3];
    for (int i = 0; i < lc->num_inputs; ++i) {
      types[i] = tensor_type(&arena, lc->ndims[i], ones);
    }
    const char *required[3] = {"?", "?", "?"};
    kiln_layout_relation_t relation = {.op = &test_broadcast_op,
                                       .num_inputs = lc->num_inputs,
                                       .input_types = types,
                                       .input_layouts = lc->arriving,
                                       .required_layouts = required,
                                       .arena = &arena};
    KILN_ASSERT_OK(kiln_broadcast_correct_layout(&relation));
    for (int i = 0; i < lc->num_inputs; ++i) {
      assert_string_equal(required[i], lc->required[i]);
    }
    assert_string_equal(relation.output_layout, lc->output);
  }
  /* a tuple input has no layout */
  const kiln_type_t *fields[] = {tensor_type(&arena, 1, ones)};
  const kiln_type_t *types[2] = {tensor_type(&arena, 1, ones), NULL};
  KILN_ASSERT_OK(kiln_tuple_type_create(&arena, 1, fields, &types[1]));
  const char *arriving[] = {"", ""};
  const char *required[2];
  kiln_layout_relation_t relation = {.op = &test_broadcast_op,
                                     .num_inputs = 2,
                                     .input_types = types,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &arena};
  KILN_ASSERT_STATUS(kiln_broadcast_correct_layout(&relation), INVALID_ARGUMENT,
                     "test.bcast: input 1 must be a typed tensor");
  kiln_arena_deinitialize(&arena);
}

static void test_walker_offsets(void **state) {
  (void)state;
  /* out (2, 3, 4); a (3, 1) reads a[j]; b (2, 1, 4) reads b[i * 4 + k]; c rank 0 */
  const int64_t out[] = {2, 3, 4};
  const int64_t a[] = {3, 1};
  const int64_t b[] = {2, 1, 4};
  const int ndims[] = {2, 3, 0, 3};
  const int64_t *shapes[] = {a, b, NULL, out};
  kiln_broadcast_walker_t walker;
  KILN_ASSERT_OK(kiln_broadcast_walker_initialize(&walker, 3, out, 4, ndims, shapes));
  assert_int_equal(walker.count, 24);
  int64_t n = 0;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k, ++n, kiln_broadcast_walker_next(&walker)) {
        assert_int_equal(walker.offsets[0], j);
        assert_int_equal(walker.offsets[1], i * 4 + k);
        assert_int_equal(walker.offsets[2], 0);
        assert_int_equal(walker.offsets[3], n);
      }
    }
  }
  /* after the last index the walk starts over */
  for (int k = 0; k < 4; ++k) {
    assert_int_equal(walker.offsets[k], 0);
    assert_int_equal(walker.index[k < 3 ? k : 0], 0);
  }
}

static void test_walker_odd_shapes(void **state) {
  (void)state;
  /* out (1, 3, 5, 7); a (3, 1, 1) like a bias; b (5, 7); c (1, 1, 5, 1) */
  const int64_t out[] = {1, 3, 5, 7};
  const int64_t a[] = {3, 1, 1};
  const int64_t b[] = {5, 7};
  const int64_t c[] = {1, 1, 5, 1};
  const int ndims[] = {3, 2, 4};
  const int64_t *shapes[] = {a, b, c};
  kiln_broadcast_walker_t walker;
  KILN_ASSERT_OK(kiln_broadcast_walker_initialize(&walker, 4, out, 3, ndims, shapes));
  assert_int_equal(walker.count, 105);
  for (int64_t n = 0; n < walker.count; ++n, kiln_broadcast_walker_next(&walker)) {
    int64_t w = n % 7;
    int64_t h = (n / 7) % 5;
    int64_t ch = n / 35;
    assert_int_equal(walker.offsets[0], ch);
    assert_int_equal(walker.offsets[1], h * 7 + w);
    assert_int_equal(walker.offsets[2], h);
  }
}

static void test_walker_rank0_and_empty(void **state) {
  (void)state;
  kiln_broadcast_walker_t walker;
  KILN_ASSERT_OK(kiln_broadcast_walker_initialize(&walker, 0, NULL, 0, NULL, NULL));
  assert_int_equal(walker.count, 1);
  kiln_broadcast_walker_next(&walker);
  const int64_t empty[] = {0, 3};
  const int64_t row[] = {3};
  const int ndims[] = {1};
  const int64_t *shapes[] = {row};
  KILN_ASSERT_OK(kiln_broadcast_walker_initialize(&walker, 2, empty, 1, ndims, shapes));
  assert_int_equal(walker.count, 0);
}

static void test_walker_refuses_out_of_bounds(void **state) {
  (void)state;
  kiln_broadcast_walker_t walker;
  const int64_t out[] = {2, 3};
  const int64_t wide[] = {4};
  const int64_t deep[] = {1, 2, 3};
  const int ndims[] = {1, 3};
  const int64_t *shapes[] = {wide, deep};
  KILN_ASSERT_STATUS(kiln_broadcast_walker_initialize(&walker, 2, out, 1, ndims, shapes),
                     INVALID_ARGUMENT, "operand 0 of shape (4,) does not broadcast to (2, 3)");
  KILN_ASSERT_STATUS(kiln_broadcast_walker_initialize(&walker, 2, out, 1, ndims + 1, shapes + 1),
                     INVALID_ARGUMENT, "operand 0 of shape (1, 2, 3) does not broadcast to (2, 3)");
  KILN_ASSERT_STATUS(kiln_broadcast_walker_initialize(&walker, 2, out, 5, ndims, shapes),
                     INVALID_ARGUMENT, "5 operands");
  const int64_t negative[] = {-1};
  KILN_ASSERT_STATUS(kiln_broadcast_walker_initialize(&walker, 1, negative, 0, NULL, NULL),
                     INVALID_ARGUMENT, "");
}

static void test_walker_tensors(void **state) {
  (void)state;
  kiln_allocator_t system = kiln_allocator_system();
  const int64_t out_shape[] = {3, 5};
  const int64_t col_shape[] = {3, 1};
  const int64_t row_shape[] = {5};
  kiln_tensor_t *out = NULL;
  kiln_tensor_t *col = NULL;
  kiln_tensor_t *row = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(system, KILN_DTYPE_FLOAT32, 2, out_shape, &out));
  KILN_ASSERT_OK(kiln_tensor_create(system, KILN_DTYPE_FLOAT32, 2, col_shape, &col));
  KILN_ASSERT_OK(kiln_tensor_create(system, KILN_DTYPE_FLOAT32, 1, row_shape, &row));
  kiln_tensor_t *operands[] = {col, row};
  kiln_broadcast_walker_t walker;
  KILN_ASSERT_OK(kiln_broadcast_walker_initialize_tensors(&walker, out, 2, operands));
  assert_int_equal(walker.count, 15);
  for (int64_t n = 0; n < 15; ++n, kiln_broadcast_walker_next(&walker)) {
    assert_int_equal(walker.offsets[0], n / 5);
    assert_int_equal(walker.offsets[1], n % 5);
  }
  kiln_tensor_t *swapped[] = {out, row};
  KILN_ASSERT_STATUS(kiln_broadcast_walker_initialize_tensors(&walker, col, 2, swapped),
                     INVALID_ARGUMENT, "operand 0 of shape (3, 5) does not broadcast to (3, 1)");
  kiln_tensor_release(out);
  kiln_tensor_release(col);
  kiln_tensor_release(row);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes_broadcast),
      cmocka_unit_test(test_shapes_errors),
      cmocka_unit_test(test_shapes_text),
      cmocka_unit_test(test_infer_shape_from_relation),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_walker_offsets),
      cmocka_unit_test(test_walker_odd_shapes),
      cmocka_unit_test(test_walker_rank0_and_empty),
      cmocka_unit_test(test_walker_refuses_out_of_bounds),
      cmocka_unit_test(test_walker_tensors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
