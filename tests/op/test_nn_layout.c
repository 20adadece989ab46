/*
 * Tests of layout views and storage shapes, the shared primal-form layout
 * rule, and of layout_transform: attributes, the type
 * relation with every error, its layout rule, and the kernel on float32,
 * int64 and uint8 data, element by element against index formulas written
 * here (NCHW -> NCHW{c}c, NCHW{a}c -> NCHW{b}c, OIHW -> OIHW{i}i{o}o,
 * NCHW -> NHWC) and by round trips.
 */

#include "kiln_op_test.h"
#include "op/impl.h"
#include "op/nn_common.h"

#define F32 KILN_DTYPE_FLOAT32

static const kiln_op_t *const op = &kiln_op_layout_transform;

/* layout_transform attrs; NULL leaves a layout at its default "". */
static void *transform_attrs(const char *src, const char *dst) {
  void *a = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(op, &kiln_op_test_arena, &a));
  kiln_nn_layout_transform_attrs_t *t = a;
  t->src_layout = src ? src : "";
  t->dst_layout = dst ? dst : "";
  return a;
}

static kiln_status_t infer_layouts(const char *src, const char *dst, const kiln_type_t *input,
                                   const kiln_type_t **out) {
  return infer1(op, transform_attrs(src, dst), input, out);
}

/* Element i of a float32 tensor is i; of an int64 tensor, 1000003 * i. */
static kiln_tensor_t *iota(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  kiln_tensor_t *t = tensor_zeros(dtype, ndim, shape);
  for (int64_t i = 0; i < kiln_tensor_element_count(t); ++i) {
    if (dtype == F32) {
      ((float *)kiln_tensor_data(t))[i] = (float)i;
    } else if (dtype == KILN_DTYPE_INT64) {
      ((int64_t *)kiln_tensor_data(t))[i] = 1000003 * i;
    } else {
      ((uint8_t *)kiln_tensor_data(t))[i] = (uint8_t)(i * 7);
    }
  }
  return t;
}

static kiln_tensor_t *transform(kiln_tensor_t *input, const char *src, const char *dst) {
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run1(op, transform_attrs(src, dst), input, &out));
  return out;
}

/* ---- views and shapes (the parser's own tests: test_layout.c) ---- */

static void test_view_and_shape(void **state) {
  (void)state;
  kiln_layout_t layout;
  KILN_ASSERT_OK(kiln_layout_parse("NCHW4c", &layout));
  kiln_nn_axis_view_t axes[4];
  KILN_ASSERT_OK(kiln_nn_layout_view(&layout, "NCHW", 5, SHAPE(2, 3, 5, 7, 4), axes));
  /* Strides of (2, 3, 5, 7, 4): 420, 140, 28, 4, 1. */
  assert_int_equal(axes[0].extent, 2);
  assert_int_equal(axes[1].extent, 12);
  assert_int_equal(axes[1].block, 4);
  assert_int_equal(axes[1].outer_stride, 140);
  assert_int_equal(axes[1].inner_stride, 1);
  assert_int_equal(axes[3].outer_stride, 4);
  /* Channel 9 = block 2, lane 1. */
  assert_int_equal(kiln_nn_axis_offset(&axes[1], 9), 2 * 140 + 1);
  assert_int_equal(kiln_nn_axis_offset(&axes[2], 3), 3 * 28);
  int64_t shape[5];
  KILN_ASSERT_OK(kiln_nn_layout_shape(&layout, "NCHW", (const int64_t[]){2, 12, 5, 7}, shape));
  assert_memory_equal(shape, ((const int64_t[]){2, 3, 5, 7, 4}), sizeof(shape));
  KILN_ASSERT_STATUS(kiln_nn_layout_shape(&layout, "NCHW", (const int64_t[]){2, 6, 5, 7}, shape),
                     INVALID_ARGUMENT,
                     "axis C of extent 6 is not divisible by the block 4 of layout NCHW4c");
  KILN_ASSERT_STATUS(kiln_nn_layout_view(&layout, "NCHW", 4, SHAPE(2, 3, 5, 7), axes),
                     INVALID_ARGUMENT, "(2, 3, 5, 7) must have rank 5 for layout NCHW4c, not 4");
  KILN_ASSERT_STATUS(kiln_nn_layout_view(&layout, "NCHW", 5, SHAPE(2, 3, 5, 7, 3), axes),
                     INVALID_ARGUMENT, "(2, 3, 5, 7, 3) has 3 at axis 'c' of layout NCHW4c, not 4");
}

/* The rule of axis-indexed operators, seen through a softmax-like call. */
static void test_layout_rule_primal(void **state) {
  (void)state;
  const char *arriving[3] = {"NCHW16c", "", NULL};
  const char *required[3] = {NULL, NULL, NULL};
  kiln_layout_relation_t relation = {.op = op,
                                     .num_inputs = 3,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_nn_layout_rule_primal(&relation, true));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[1], "");
  assert_string_equal(required[2], "");
  assert_string_equal(relation.output_layout, "NCHW");
  arriving[0] = "NHWC";
  KILN_ASSERT_OK(kiln_nn_layout_rule_primal(&relation, false));
  assert_string_equal(required[0], "NHWC");
  assert_string_equal(relation.output_layout, "");
  arriving[1] = "N?";
  KILN_ASSERT_STATUS(kiln_nn_layout_rule_primal(&relation, true), INVALID_ARGUMENT,
                     "layout_transform: input 1: layout 'N?': unexpected character '?'");
}

/* ---- layout_transform: attributes, relation, rule ---- */

static void test_metadata_and_attrs(void **state) {
  (void)state;
  assert_string_equal(op->name, "layout_transform");
  assert_int_equal(op->id, KILN_OP_LAYOUT_TRANSFORM);
  assert_int_equal(op->pattern, KILN_OP_PATTERN_INJECTIVE);
  assert_defaults(op, "src_layout=\"\", dst_layout=\"\"");
  KILN_ASSERT_OK(kiln_op_attrs_validate(op, transform_attrs("NCHW", "NHWC")));
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, transform_attrs("NCHW", "OIHW")), INVALID_ARGUMENT,
                     "layout_transform: src_layout NCHW and dst_layout OIHW do not have the same "
                     "primal axes");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, transform_attrs("NC?", "NCHW")), INVALID_ARGUMENT,
                     "layout_transform: src_layout: layout 'NC?'");
  KILN_ASSERT_STATUS(kiln_op_attrs_validate(op, transform_attrs("NCHW", "NCHW4")), INVALID_ARGUMENT,
                     "layout_transform: dst_layout: layout 'NCHW4'");
}

static void test_relation(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer_layouts("NCHW", "NCHW3c", ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out));
  assert_type(out, F32, 5, SHAPE(1, 2, 5, 7, 3));
  KILN_ASSERT_OK(infer_layouts("NCHW3c", "NCHW2c", ttype(F32, 5, SHAPE(1, 2, 5, 7, 3)), &out));
  assert_type(out, F32, 5, SHAPE(1, 3, 5, 7, 2));
  KILN_ASSERT_OK(infer_layouts("NCHW4c", "NCHW", ttype(F32, 5, SHAPE(1, 2, 5, 7, 4)), &out));
  assert_type(out, F32, 4, SHAPE(1, 8, 5, 7));
  KILN_ASSERT_OK(infer_layouts("OIHW", "OIHW3i4o", ttype(F32, 4, SHAPE(8, 6, 3, 1)), &out));
  assert_type(out, F32, 6, SHAPE(2, 2, 3, 1, 3, 4));
  KILN_ASSERT_OK(infer_layouts("NCHW", "NHWC", ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out));
  assert_type(out, F32, 4, SHAPE(1, 5, 7, 6));
  KILN_ASSERT_OK(infer_layouts("NCHW", "NCHW", ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out));
  assert_type(out, F32, 4, SHAPE(1, 6, 5, 7));
  KILN_ASSERT_OK(infer_layouts("NC", "NC1c", ttype(KILN_DTYPE_INT64, 2, SHAPE(13, 1)), &out));
  assert_type(out, KILN_DTYPE_INT64, 3, SHAPE(13, 1, 1));
}

static void test_relation_errors(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer_layouts(NULL, "NCHW", ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out),
                     INVALID_ARGUMENT, "layout_transform: src_layout is required");
  KILN_ASSERT_STATUS(infer_layouts("NCHW", NULL, ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out),
                     INVALID_ARGUMENT, "layout_transform: dst_layout is required");
  KILN_ASSERT_STATUS(infer_layouts("NCHW", "NCHW4c", ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out),
                     INVALID_ARGUMENT,
                     "layout_transform: data (1, 6, 5, 7) cannot go from NCHW to NCHW4c: axis C "
                     "of extent 6 is not divisible by the block 4 of layout NCHW4c");
  KILN_ASSERT_STATUS(infer_layouts("OIHW", "OIHW4i4o", ttype(F32, 4, SHAPE(8, 6, 3, 3)), &out),
                     INVALID_ARGUMENT,
                     "data (8, 6, 3, 3) cannot go from OIHW to OIHW4i4o: axis I of extent 6");
  KILN_ASSERT_STATUS(infer_layouts("NCHW", "NCHW2c", ttype(F32, 3, SHAPE(1, 6, 5)), &out),
                     INVALID_ARGUMENT,
                     "layout_transform: data: (1, 6, 5) must have rank 4 for layout NCHW, not 3");
  KILN_ASSERT_STATUS(infer_layouts("NCHW3c", "NCHW", ttype(F32, 5, SHAPE(1, 2, 5, 7, 4)), &out),
                     INVALID_ARGUMENT,
                     "layout_transform: data: (1, 2, 5, 7, 4) has 4 at axis 'c' of layout NCHW3c, "
                     "not 3");
  KILN_ASSERT_STATUS(infer_layouts("NCHW", "NCDW", ttype(F32, 4, SHAPE(1, 6, 5, 7)), &out),
                     INVALID_ARGUMENT, "do not have the same primal axes");
  KILN_ASSERT_STATUS(infer1(op, NULL, ttype(F32, 1, SHAPE(1)), &out), INVALID_ARGUMENT,
                     "layout_transform: attributes are missing");
}

static void test_layout_rule(void **state) {
  (void)state;
  const char *arriving[1] = {"NCHW"};
  const char *required[1] = {NULL};
  kiln_layout_relation_t relation = {.op = op,
                                     .attrs = transform_attrs("NCHW", "NCHW16c"),
                                     .num_inputs = 1,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(op->correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(relation.output_layout, "NCHW16c");
  relation.attrs = transform_attrs("NCHW", NULL);
  KILN_ASSERT_STATUS(op->correct_layout(&relation), INVALID_ARGUMENT,
                     "layout_transform: dst_layout is required");
}

/* ---- kernel ---- */

static void test_kernel_nchw_to_blocked(void **state) {
  (void)state;
  enum { N = 2, C = 6, H = 5, W = 3, B = 3 };
  kiln_tensor_t *in = iota(F32, 4, SHAPE(N, C, H, W));
  kiln_tensor_t *out = transform(in, "NCHW", "NCHW3c");
  const float *x = kiln_tensor_data(in), *y = kiln_tensor_data(out);
  for (int n = 0; n < N; ++n) {
    for (int c = 0; c < C; ++c) {
      for (int h = 0; h < H; ++h) {
        for (int w = 0; w < W; ++w) {
          float want = x[((n * C + c) * H + h) * W + w];
          assert_true(y[(((n * (C / B) + c / B) * H + h) * W + w) * B + c % B] == want);
        }
      }
    }
  }
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_kernel_reblock_int64(void **state) {
  (void)state;
  /* NCHW3c -> NCHW2c of 6 channels: channel c moves from (c/3, c%3) to (c/2, c%2). */
  enum { N = 1, H = 1, W = 7 };
  kiln_tensor_t *in = iota(KILN_DTYPE_INT64, 5, SHAPE(N, 2, H, W, 3));
  kiln_tensor_t *out = transform(in, "NCHW3c", "NCHW2c");
  assert_int_equal(kiln_tensor_shape(out)[1], 3);
  const int64_t *x = kiln_tensor_data(in), *y = kiln_tensor_data(out);
  for (int c = 0; c < 6; ++c) {
    for (int w = 0; w < W; ++w) {
      assert_int_equal(y[((c / 2) * W + w) * 2 + c % 2], x[((c / 3) * W + w) * 3 + c % 3]);
    }
  }
  kiln_tensor_t *back = transform(out, "NCHW2c", "NCHW3c");
  assert_memory_equal(kiln_tensor_data(back), x, kiln_tensor_byte_size(in));
  kiln_tensor_release(back);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_kernel_weights(void **state) {
  (void)state;
  enum { O = 8, I = 6, KH = 3, KW = 1, IB = 3, OB = 4 };
  kiln_tensor_t *in = iota(F32, 4, SHAPE(O, I, KH, KW));
  kiln_tensor_t *out = transform(in, "OIHW", "OIHW3i4o");
  const float *x = kiln_tensor_data(in), *y = kiln_tensor_data(out);
  for (int o = 0; o < O; ++o) {
    for (int i = 0; i < I; ++i) {
      for (int h = 0; h < KH; ++h) {
        int64_t at =
            ((((int64_t)(o / OB) * (I / IB) + i / IB) * KH + h) * KW * IB + i % IB) * OB + o % OB;
        assert_true(y[at] == x[(o * I + i) * KH + h]);
      }
    }
  }
  kiln_tensor_t *back = transform(out, "OIHW3i4o", "OIHW");
  assert_memory_equal(kiln_tensor_data(back), x, kiln_tensor_byte_size(in));
  kiln_tensor_release(back);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_kernel_permute_and_identity(void **state) {
  (void)state;
  enum { N = 1, C = 3, H = 5, W = 7 };
  kiln_tensor_t *in = iota(KILN_DTYPE_UINT8, 4, SHAPE(N, C, H, W));
  kiln_tensor_t *out = transform(in, "NCHW", "NHWC");
  const uint8_t *x = kiln_tensor_data(in), *y = kiln_tensor_data(out);
  for (int c = 0; c < C; ++c) {
    for (int h = 0; h < H; ++h) {
      for (int w = 0; w < W; ++w) {
        assert_int_equal(y[(h * W + w) * C + c], x[(c * H + h) * W + w]);
      }
    }
  }
  kiln_tensor_t *same = transform(in, "NCHW", "NCHW");
  assert_memory_equal(kiln_tensor_data(same), x, kiln_tensor_byte_size(in));
  kiln_tensor_release(same);
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

static void test_kernel_errors(void **state) {
  (void)state;
  kiln_tensor_t *in = iota(F32, 4, SHAPE(1, 4, 1, 1));
  kiln_tensor_t *out = tensor_zeros(F32, 5, SHAPE(1, 2, 1, 1, 2));
  kiln_kernel_args_t args = {.op = op,
                             .attrs = transform_attrs("NCHW", "NCHW4c"),
                             .num_inputs = 1,
                             .inputs = &in,
                             .num_outputs = 1,
                             .outputs = &out};
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "layout_transform: output tensor (1, 2, 1, 1, 2) float32 does not match the "
                     "type (1, 1, 1, 1, 4) float32");
  args.attrs = transform_attrs("", "NCHW4c");
  KILN_ASSERT_STATUS(kiln_op_reference_get(op->id)(&args), INVALID_ARGUMENT,
                     "layout_transform: src_layout is required");
  kiln_tensor_release(out);
  kiln_tensor_release(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_and_shape),
      cmocka_unit_test(test_layout_rule_primal),
      cmocka_unit_test(test_metadata_and_attrs),
      cmocka_unit_test(test_relation),
      cmocka_unit_test(test_relation_errors),
      cmocka_unit_test(test_layout_rule),
      cmocka_unit_test(test_kernel_nchw_to_blocked),
      cmocka_unit_test(test_kernel_reblock_int64),
      cmocka_unit_test(test_kernel_weights),
      cmocka_unit_test(test_kernel_permute_and_identity),
      cmocka_unit_test(test_kernel_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
