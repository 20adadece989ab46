/*
 * Tests of the binary elementwise operators and where (op/elemwise_binary.c):
 * type relations with broadcasting (rank 0, rank 1, stretched dims on both
 * sides, zero-sized dims) and every error (counts, tuples, dtypes, shapes,
 * non-bool inputs of the logical operators); the layout rule through the
 * operators; and the reference kernels on hand-checked values, on odd shapes
 * against formulas evaluated here from loop indices, on int64 (truncating
 * division, wrapping overflow, division by zero giving 0), mod and floor_mod on every
 * integer and float dtype ONNX's Mod tests use, the logical operators and
 * shifts, unsigned 64-bit values above INT64_MAX, bool comparisons, NaN, and
 * their errors for unsupported dtypes and mismatched tensors.
 */
#include <math.h>

#include "kiln_op_test.h"
#include "op/impl.h"

/* ---- helpers ---- */

/* A tensor argument: dtype, shape and values (NULL: zeros). */
typedef struct arg_t {
  kiln_dtype_t dtype;
  int ndim;
  int64_t shape[4];
  const void *data;
} arg_t;

static kiln_tensor_t *make_tensor(const arg_t *arg) {
  return arg->data ? tensor_of(arg->dtype, arg->ndim, arg->shape, arg->data)
                   : tensor_zeros(arg->dtype, arg->ndim, arg->shape);
}

static const kiln_type_t *type_of(const arg_t *arg) {
  return ttype(arg->dtype, arg->ndim, arg->shape);
}

static kiln_status_t infer_args(const kiln_op_t *op, int count, const arg_t *args,
                                const kiln_type_t **out_type) {
  const kiln_type_t *inputs[4];
  for (int i = 0; i < count; ++i) {
    inputs[i] = type_of(&args[i]);
  }
  return infer(op, NULL, count, inputs, out_type);
}

/* Runs the kernel on tensors made from `args` into a new output of the
 * inferred type (NULL when inference or the kernel failed); returns the status. */
static kiln_status_t run_args(const kiln_op_t *op, int count, const arg_t *args,
                              kiln_tensor_t **out_output) {
  kiln_tensor_t *inputs[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < count; ++i) {
    inputs[i] = make_tensor(&args[i]);
  }
  kiln_status_t status = run(op, NULL, count, inputs, out_output);
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(inputs[i]);
  }
  return status;
}

static void check_float(const kiln_op_t *op, const arg_t *a, const arg_t *b,
                        const double *expected) {
  const arg_t args[] = {*a, *b};
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_args(op, 2, args, &output));
  assert_int_equal(kiln_tensor_dtype(output), KILN_DTYPE_FLOAT32);
  const float *out = kiln_tensor_data(output);
  for (int64_t i = 0; i < kiln_tensor_element_count(output); ++i) {
    assert_near(out[i], expected[i]);
  }
  kiln_tensor_release(output);
}

/* Checks an int64 or bool output against int64 expectations. */
static void check_exact(const kiln_op_t *op, int count, const arg_t *args,
                        const int64_t *expected) {
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_args(op, count, args, &output));
  int64_t n = kiln_tensor_element_count(output);
  for (int64_t i = 0; i < n; ++i) {
    if (kiln_tensor_dtype(output) == KILN_DTYPE_BOOL) {
      assert_int_equal(((const uint8_t *)kiln_tensor_data(output))[i], expected[i]);
    } else {
      assert_int_equal(((const int64_t *)kiln_tensor_data(output))[i], expected[i]);
    }
  }
  kiln_tensor_release(output);
}

#define F32 KILN_DTYPE_FLOAT32
#define I64 KILN_DTYPE_INT64

/* ---- type relations ---- */

static void test_binary_type_relation(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const arg_t m23[] = {{F32, 2, {2, 3}}, {F32, 1, {3}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_add, 2, m23, &out));
  assert_type(out, F32, 2, SHAPE(2, 3));
  const arg_t scalar[] = {{I64, 0, {0}}, {I64, 1, {5}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_multiply, 2, scalar, &out));
  assert_type(out, I64, 1, SHAPE(5));
  const arg_t both[] = {{F32, 3, {5, 1, 3}}, {F32, 2, {7, 1}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_power, 2, both, &out));
  assert_type(out, F32, 3, SHAPE(5, 7, 3));
  const arg_t bias[] = {{F32, 4, {1, 3, 5, 7}}, {F32, 3, {3, 1, 1}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_subtract, 2, bias, &out));
  assert_type(out, F32, 4, SHAPE(1, 3, 5, 7));
  const arg_t empty[] = {{F32, 2, {0, 3}}, {F32, 2, {1, 3}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_divide, 2, empty, &out));
  assert_type(out, F32, 2, SHAPE(0, 3));
  /* comparisons are bool, whatever they compare */
  const kiln_op_t *compare[] = {&kiln_op_equal,      &kiln_op_not_equal, &kiln_op_less,
                                &kiln_op_less_equal, &kiln_op_greater,   &kiln_op_greater_equal};
  const arg_t bools[] = {{KILN_DTYPE_BOOL, 1, {4}}, {KILN_DTYPE_BOOL, 0, {0}}};
  for (size_t i = 0; i < sizeof(compare) / sizeof(compare[0]); ++i) {
    KILN_ASSERT_OK(infer_args(compare[i], 2, m23, &out));
    assert_type(out, KILN_DTYPE_BOOL, 2, SHAPE(2, 3));
    KILN_ASSERT_OK(infer_args(compare[i], 2, bools, &out));
    assert_type(out, KILN_DTYPE_BOOL, 1, SHAPE(4));
  }
  const kiln_op_t *same[] = {&kiln_op_maximum, &kiln_op_minimum};
  for (size_t i = 0; i < 2; ++i) {
    KILN_ASSERT_OK(infer_args(same[i], 2, scalar, &out));
    assert_type(out, I64, 1, SHAPE(5));
  }
}

static void test_binary_type_relation_errors(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const arg_t clash[] = {{F32, 3, {1, 3, 4}}, {F32, 2, {5, 4}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_add, 2, clash, &out), INVALID_ARGUMENT,
                     "add: cannot broadcast (1, 3, 4) and (5, 4): dim 1 of the result would be "
                     "3 vs 5");
  const arg_t rows[] = {{F32, 2, {2, 3}}, {F32, 2, {4, 3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_less, 2, rows, &out), INVALID_ARGUMENT,
                     "less: cannot broadcast (2, 3) and (4, 3)");
  const arg_t dtypes[] = {{F32, 2, {2, 3}}, {I64, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_add, 2, dtypes, &out), INVALID_ARGUMENT,
                     "add: inputs have different dtypes: float32 (2, 3) and int64 (3,)");
  KILN_ASSERT_STATUS(infer_args(&kiln_op_equal, 2, dtypes, &out), INVALID_ARGUMENT,
                     "equal: inputs have different dtypes");
  KILN_ASSERT_STATUS(infer_args(&kiln_op_divide, 1, dtypes, &out), INVALID_ARGUMENT,
                     "divide: expected 2 inputs, got 1");
  const arg_t three[] = {{F32, 1, {3}}, {F32, 1, {3}}, {F32, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_minimum, 3, three, &out), INVALID_ARGUMENT,
                     "minimum: expected 2 inputs, got 3");
  const kiln_type_t *field = type_of(&three[0]);
  const kiln_type_t *tuple = NULL;
  KILN_ASSERT_OK(kiln_tuple_type_create(&kiln_op_test_arena, 1, &field, &tuple));
  const kiln_type_t *inputs[] = {field, tuple};
  KILN_ASSERT_STATUS(infer(&kiln_op_maximum, NULL, 2, inputs, &out), INVALID_ARGUMENT,
                     "maximum: input 1 must be a tensor, not a tuple");
}

static void test_where_type_relation(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const arg_t ok[] = {{KILN_DTYPE_BOOL, 2, {2, 1}}, {I64, 1, {3}}, {I64, 0, {0}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_where, 3, ok, &out));
  assert_type(out, I64, 2, SHAPE(2, 3));
  const arg_t wide[] = {{KILN_DTYPE_BOOL, 0, {0}}, {F32, 1, {1}}, {F32, 3, {7, 5, 1}}};
  KILN_ASSERT_OK(infer_args(&kiln_op_where, 3, wide, &out));
  assert_type(out, F32, 3, SHAPE(7, 5, 1));

  const arg_t cond[] = {{F32, 1, {3}}, {F32, 1, {3}}, {F32, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_where, 3, cond, &out), INVALID_ARGUMENT,
                     "where: condition must be bool, got float32 (3,)");
  const arg_t dtypes[] = {{KILN_DTYPE_BOOL, 1, {3}}, {F32, 1, {3}}, {I64, 2, {2, 3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_where, 3, dtypes, &out), INVALID_ARGUMENT,
                     "where: x and y have different dtypes: float32 (3,) and int64 (2, 3)");
  const arg_t shapes[] = {{KILN_DTYPE_BOOL, 1, {2}}, {F32, 2, {3, 1}}, {F32, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_where, 3, shapes, &out), INVALID_ARGUMENT,
                     "where: cannot broadcast (2,), (3, 1) and (3,): dim 1 of the result would be "
                     "2 vs 3");
  KILN_ASSERT_STATUS(infer_args(&kiln_op_where, 2, shapes, &out), INVALID_ARGUMENT,
                     "where: expected 3 inputs, got 2");
}

/* ---- layout rule ---- */

static void test_layout_rule(void **state) {
  (void)state;
  const arg_t data = {F32, 4, {1, 16, 5, 5}};
  const arg_t bias = {F32, 3, {16, 1, 1}};
  const kiln_type_t *types[] = {type_of(&data), type_of(&bias)};
  const char *arriving[] = {"NCHW", ""};
  const char *required[2] = {NULL, NULL};
  kiln_layout_relation_t relation = {.op = &kiln_op_add,
                                     .num_inputs = 2,
                                     .input_types = types,
                                     .input_layouts = arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_op_add.correct_layout(&relation));
  assert_string_equal(required[0], "NCHW");
  assert_string_equal(required[1], "");
  assert_string_equal(relation.output_layout, "NCHW");

  const kiln_type_t *same[] = {types[0], types[0], types[0]};
  const char *three[] = {"", "NHWC", "NCHW"};
  const char *required3[3] = {NULL, NULL, NULL};
  relation = (kiln_layout_relation_t){.op = &kiln_op_where,
                                      .num_inputs = 3,
                                      .input_types = same,
                                      .input_layouts = three,
                                      .required_layouts = required3,
                                      .arena = &kiln_op_test_arena};
  KILN_ASSERT_OK(kiln_op_where.correct_layout(&relation));
  for (int i = 0; i < 3; ++i) {
    assert_string_equal(required3[i], "NHWC");
  }
  assert_string_equal(relation.output_layout, "NHWC");
}

/* ---- kernels: float32 ---- */

static void test_float_arithmetic_by_hand(void **state) {
  (void)state;
  const arg_t a = {F32, 2, {2, 3}, (const float[]){1, 2, 3, 4, 5, 6}};
  const arg_t row = {F32, 1, {3}, (const float[]){10, -2, 0.5f}};
  check_float(&kiln_op_add, &a, &row, (const double[]){11, 0, 3.5, 14, 3, 6.5});
  check_float(&kiln_op_subtract, &a, &row, (const double[]){-9, 4, 2.5, -6, 7, 5.5});
  check_float(&kiln_op_subtract, &row, &a, (const double[]){9, -4, -2.5, 6, -7, -5.5});
  check_float(&kiln_op_multiply, &a, &row, (const double[]){10, -4, 1.5, 40, -10, 3});
  check_float(&kiln_op_divide, &a, &row, (const double[]){0.1, -1, 6, 0.4, -2.5, 12});
  check_float(&kiln_op_maximum, &a, &row, (const double[]){10, 2, 3, 10, 5, 6});
  check_float(&kiln_op_minimum, &a, &row, (const double[]){1, -2, 0.5, 4, -2, 0.5});
  const arg_t base = {F32, 1, {5}, (const float[]){2, 4, 2, -8, 0}};
  const arg_t exponent = {F32, 1, {5}, (const float[]){3, 0.5f, -1, 1.0f / 3.0f, 0}};
  check_float(&kiln_op_power, &base, &exponent, (const double[]){8, 2, 0.5, NAN, 1});
  /* rank 0 against rank 1, both ways */
  const arg_t scalar = {F32, 0, {0}, (const float[]){3}};
  const arg_t five = {F32, 1, {5}, (const float[]){-1, 0, 1, 2, 3}};
  check_float(&kiln_op_subtract, &scalar, &five, (const double[]){4, 3, 2, 1, 0});
  check_float(&kiln_op_power, &five, &scalar, (const double[]){-1, 0, 1, 8, 27});
  check_float(&kiln_op_divide, &five, &scalar, (const double[]){-1.0 / 3, 0, 1.0 / 3, 2.0 / 3, 1});
  /* IEEE division by zero and NaN through maximum/minimum */
  const arg_t zero = {F32, 0, {0}, (const float[]){0}};
  check_float(&kiln_op_divide, &five, &zero,
              (const double[]){-INFINITY, NAN, INFINITY, INFINITY, INFINITY});
  const arg_t nan = {F32, 1, {2}, (const float[]){NAN, 1}};
  const arg_t ones = {F32, 1, {2}, (const float[]){1, NAN}};
  check_float(&kiln_op_maximum, &nan, &ones, (const double[]){NAN, NAN});
  check_float(&kiln_op_minimum, &ones, &nan, (const double[]){NAN, NAN});
}

static void test_float_odd_shapes(void **state) {
  (void)state;
  /* (1, 3, 5, 7) + (3, 1, 1): a per-channel bias */
  float x[105];
  for (int i = 0; i < 105; ++i) {
    x[i] = (float)(i * 3 % 17) - 8.5f;
  }
  const float channel[] = {0.25f, -1.5f, 4.0f};
  const arg_t data = {F32, 4, {1, 3, 5, 7}, x};
  const arg_t bias = {F32, 3, {3, 1, 1}, channel};
  double expected[105];
  for (int c = 0; c < 3; ++c) {
    for (int hw = 0; hw < 35; ++hw) {
      expected[c * 35 + hw] = (double)x[c * 35 + hw] + channel[c];
    }
  }
  check_float(&kiln_op_add, &data, &bias, expected);
  for (int c = 0; c < 3; ++c) {
    for (int hw = 0; hw < 35; ++hw) {
      expected[c * 35 + hw] = (double)channel[c] * x[c * 35 + hw];
    }
  }
  check_float(&kiln_op_multiply, &bias, &data, expected);
  /* (13, 1) against (1, 7): an outer operation */
  float col[13];
  float row[7];
  for (int i = 0; i < 13; ++i) {
    col[i] = (float)i * 0.5f + 1.0f;
  }
  for (int j = 0; j < 7; ++j) {
    row[j] = (float)j - 3.0f;
  }
  const arg_t a = {F32, 2, {13, 1}, col};
  const arg_t b = {F32, 2, {1, 7}, row};
  double outer[91];
  for (int i = 0; i < 13; ++i) {
    for (int j = 0; j < 7; ++j) {
      outer[i * 7 + j] = pow(col[i], row[j]);
    }
  }
  check_float(&kiln_op_power, &a, &b, outer);
  for (int i = 0; i < 13; ++i) {
    for (int j = 0; j < 7; ++j) {
      outer[i * 7 + j] = (double)col[i] / row[j];
    }
  }
  check_float(&kiln_op_divide, &a, &b, outer);
  /* zero-sized output */
  const arg_t empty = {F32, 2, {0, 7}};
  check_float(&kiln_op_add, &empty, &b, NULL);
}

static void test_comparisons(void **state) {
  (void)state;
  const arg_t a = {F32, 1, {5}, (const float[]){1, 2, 3, NAN, -0.0f}};
  const arg_t b = {F32, 1, {5}, (const float[]){2, 2, 2, NAN, 0.0f}};
  const arg_t ab[] = {a, b};
  check_exact(&kiln_op_equal, 2, ab, SHAPE(0, 1, 0, 0, 1));
  check_exact(&kiln_op_not_equal, 2, ab, SHAPE(1, 0, 1, 1, 0));
  check_exact(&kiln_op_less, 2, ab, SHAPE(1, 0, 0, 0, 0));
  check_exact(&kiln_op_less_equal, 2, ab, SHAPE(1, 1, 0, 0, 1));
  check_exact(&kiln_op_greater, 2, ab, SHAPE(0, 0, 1, 0, 0));
  check_exact(&kiln_op_greater_equal, 2, ab, SHAPE(0, 1, 1, 0, 1));
  /* int64, broadcast (3, 1) against (4,) */
  const arg_t col = {I64, 2, {3, 1}, SHAPE(-5, 0, INT64_MAX)};
  const arg_t row = {I64, 1, {4}, SHAPE(INT64_MIN, -5, 0, 7)};
  const arg_t cr[] = {col, row};
  int64_t less[12];
  int64_t equal[12];
  const int64_t *cv = col.data;
  const int64_t *rv = row.data;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      less[i * 4 + j] = cv[i] < rv[j];
      equal[i * 4 + j] = cv[i] == rv[j];
    }
  }
  check_exact(&kiln_op_less, 2, cr, less);
  check_exact(&kiln_op_equal, 2, cr, equal);
  /* bool: equal and not_equal */
  const arg_t p = {KILN_DTYPE_BOOL, 1, {4}, (const uint8_t[]){0, 0, 1, 1}};
  const arg_t q = {KILN_DTYPE_BOOL, 1, {4}, (const uint8_t[]){0, 1, 0, 1}};
  const arg_t pq[] = {p, q};
  check_exact(&kiln_op_equal, 2, pq, SHAPE(1, 0, 0, 1));
  check_exact(&kiln_op_not_equal, 2, pq, SHAPE(0, 1, 1, 0));
}

/* ---- kernels: int64 ---- */

static void test_int64_arithmetic(void **state) {
  (void)state;
  const arg_t a = {I64, 1, {6}, SHAPE(7, -7, 7, -7, INT64_MIN, INT64_MAX)};
  const arg_t b = {I64, 1, {6}, SHAPE(2, 2, -2, -2, -1, 1)};
  const arg_t ab[] = {a, b};
  /* division truncates toward zero; INT64_MIN / -1 wraps */
  check_exact(&kiln_op_divide, 2, ab, SHAPE(3, -3, -3, 3, INT64_MIN, INT64_MAX));
  /* overflow wraps */
  check_exact(&kiln_op_add, 2, ab, SHAPE(9, -5, 5, -9, INT64_MAX, INT64_MIN));
  check_exact(&kiln_op_subtract, 2, ab, SHAPE(5, -9, 9, -5, INT64_MIN + 1, INT64_MAX - 1));
  check_exact(&kiln_op_multiply, 2, ab, SHAPE(14, -14, -14, 14, INT64_MIN, INT64_MAX));
  check_exact(&kiln_op_maximum, 2, ab, SHAPE(7, 2, 7, -2, -1, INT64_MAX));
  check_exact(&kiln_op_minimum, 2, ab, SHAPE(2, -7, -2, -7, INT64_MIN, 1));
  /* rank 0 broadcast */
  const arg_t three = {I64, 0, {0}, SHAPE(3)};
  const arg_t ten = {I64, 2, {1, 5}, SHAPE(10, 11, -10, -11, 0)};
  const arg_t t3[] = {ten, three};
  check_exact(&kiln_op_divide, 2, t3, SHAPE(3, 3, -3, -3, 0));
}

/* A zero divisor gives 0 (base/scalar_ops.h), as the compiled code does. */
static void test_int64_division_by_zero(void **state) {
  (void)state;
  const arg_t a = {I64, 1, {4}, SHAPE(4, 5, -6, INT64_MIN)};
  const arg_t b = {I64, 1, {4}, SHAPE(1, 0, 0, 0)};
  const arg_t ab[] = {a, b};
  check_exact(&kiln_op_divide, 2, ab, SHAPE(4, 0, 0, 0));
  check_exact(&kiln_op_mod, 2, ab, SHAPE(0, 0, 0, 0));
  check_exact(&kiln_op_floor_mod, 2, ab, SHAPE(0, 0, 0, 0));
}

/* ---- kernels: where ---- */

static void test_where(void **state) {
  (void)state;
  /* cond (2, 1), x (3,), y rank 0 */
  const arg_t f[] = {{KILN_DTYPE_BOOL, 2, {2, 1}, (const uint8_t[]){1, 0}},
                     {F32, 1, {3}, (const float[]){1.5f, 2.5f, 3.5f}},
                     {F32, 0, {0}, (const float[]){-1}}};
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_args(&kiln_op_where, 3, f, &output));
  const double expected[] = {1.5, 2.5, 3.5, -1, -1, -1};
  for (int i = 0; i < 6; ++i) {
    assert_near(((const float *)kiln_tensor_data(output))[i], expected[i]);
  }
  kiln_tensor_release(output);
  /* int64 with cond (5,) against x (3, 5) and y (3, 1) */
  const uint8_t cond[] = {1, 0, 0, 1, 1};
  int64_t x[15];
  const int64_t y[] = {-1, -2, -3};
  int64_t picked[15];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) {
      x[i * 5 + j] = INT64_MAX - i * 5 - j;
      picked[i * 5 + j] = cond[j] ? x[i * 5 + j] : y[i];
    }
  }
  const arg_t n[] = {{KILN_DTYPE_BOOL, 1, {5}, cond}, {I64, 2, {3, 5}, x}, {I64, 2, {3, 1}, y}};
  check_exact(&kiln_op_where, 3, n, picked);
}

/* ---- kernels: errors ---- */

static void test_kernel_dtype_errors(void **state) {
  (void)state;
  kiln_tensor_t *output = NULL;
  const arg_t ints[] = {{I64, 1, {2}}, {I64, 1, {2}}};
  KILN_ASSERT_STATUS(run_args(&kiln_op_logical_and, 2, ints, &output), INVALID_ARGUMENT,
                     "logical_and: inputs must be bool, got int64 (2,) and int64 (2,)");
  kiln_tensor_release(output);
  const arg_t bools[] = {{KILN_DTYPE_BOOL, 1, {2}}, {KILN_DTYPE_BOOL, 1, {2}}};
  KILN_ASSERT_STATUS(run_args(&kiln_op_add, 2, bools, &output), UNIMPLEMENTED,
                     "add: the reference kernel does not take dtype bool");
  kiln_tensor_release(output);
  KILN_ASSERT_STATUS(run_args(&kiln_op_less, 2, bools, &output), UNIMPLEMENTED,
                     "less: the reference kernel does not take dtype bool");
  kiln_tensor_release(output);
  const arg_t halves[] = {{KILN_DTYPE_FLOAT16, 1, {2}}, {KILN_DTYPE_FLOAT16, 1, {2}}};
  KILN_ASSERT_STATUS(run_args(&kiln_op_left_shift, 2, halves, &output), UNIMPLEMENTED,
                     "left_shift: the reference kernel does not take dtype float16");
  kiln_tensor_release(output);
  const arg_t words[] = {{KILN_DTYPE_INT32, 1, {2}}, {KILN_DTYPE_INT32, 1, {2}}};
  KILN_ASSERT_STATUS(run_args(&kiln_op_right_shift, 2, words, &output), UNIMPLEMENTED,
                     "right_shift: the reference kernel does not take dtype int32");
  kiln_tensor_release(output);
  KILN_ASSERT_STATUS(run_args(&kiln_op_power, 2, bools, &output), UNIMPLEMENTED,
                     "power: the reference kernel does not take dtype bool");
  kiln_tensor_release(output);
  KILN_ASSERT_STATUS(run_args(&kiln_op_floor_mod, 2, bools, &output), UNIMPLEMENTED,
                     "floor_mod: the reference kernel does not take dtype bool");
  kiln_tensor_release(output);
}

static void test_kernel_argument_errors(void **state) {
  (void)state;
  const arg_t f23 = {F32, 2, {2, 3}};
  const arg_t f3 = {F32, 1, {3}};
  const arg_t f4 = {F32, 1, {4}};
  const arg_t i3 = {I64, 1, {3}};
  const arg_t b23 = {KILN_DTYPE_BOOL, 2, {2, 3}};
  kiln_tensor_t *t23 = make_tensor(&f23);
  kiln_tensor_t *t3 = make_tensor(&f3);
  kiln_tensor_t *t4 = make_tensor(&f4);
  kiln_tensor_t *ti3 = make_tensor(&i3);
  kiln_tensor_t *tb23 = make_tensor(&b23);
  kiln_tensor_t *inputs[] = {t23, t3, t3};
  kiln_tensor_t *outputs[] = {t23};
  kiln_kernel_args_t args = {
      .op = &kiln_op_add, .num_inputs = 2, .inputs = inputs, .num_outputs = 1, .outputs = outputs};
  KILN_ASSERT_OK(kiln_op_reference_get(kiln_op_add.id)(&args));
  args.num_inputs = 3;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_add.id)(&args), INVALID_ARGUMENT,
                     "add: expected 2 inputs and 1 output, got 3 and 1");
  args.num_inputs = 2;
  inputs[1] = ti3;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_add.id)(&args), INVALID_ARGUMENT,
                     "add: input 1 is int64, expected float32");
  inputs[1] = t4;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_add.id)(&args), INVALID_ARGUMENT,
                     "add: operand 1 of shape (4,) does not broadcast to (2, 3)");
  inputs[1] = t3;
  outputs[0] = t3; /* smaller than the broadcast result */
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_add.id)(&args), INVALID_ARGUMENT,
                     "add: operand 0 of shape (2, 3) does not broadcast to (3,)");
  outputs[0] = t23;
  args.op = &kiln_op_greater;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_greater.id)(&args), INVALID_ARGUMENT,
                     "greater: output is float32, expected bool");
  inputs[1] = NULL;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_greater.id)(&args), INVALID_ARGUMENT,
                     "greater: input 1 is missing");
  /* where */
  inputs[0] = t23;
  inputs[1] = t3;
  inputs[2] = t3;
  args = (kiln_kernel_args_t){.op = &kiln_op_where,
                              .num_inputs = 3,
                              .inputs = inputs,
                              .num_outputs = 1,
                              .outputs = outputs};
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_where.id)(&args), INVALID_ARGUMENT,
                     "where: condition is float32, expected bool");
  inputs[0] = tb23;
  inputs[2] = ti3;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_where.id)(&args), INVALID_ARGUMENT,
                     "where: input 2 is int64, expected float32");
  inputs[2] = t4;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_where.id)(&args), INVALID_ARGUMENT,
                     "where: operand 2 of shape (4,) does not broadcast to (2, 3)");
  args.num_inputs = 1;
  KILN_ASSERT_STATUS(kiln_op_reference_get(kiln_op_where.id)(&args), INVALID_ARGUMENT,
                     "where: expected 3 inputs, got 1");
  kiln_tensor_release(t23);
  kiln_tensor_release(t3);
  kiln_tensor_release(t4);
  kiln_tensor_release(ti3);
  kiln_tensor_release(tb23);
}

/* ---- the operators added for ONNX ---- */

/* Runs a binary operator and compares the output's bytes with `expected`. */
static void check_bytes(const kiln_op_t *op, const arg_t *a, const arg_t *b, const void *expected) {
  const arg_t args[] = {*a, *b};
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_args(op, 2, args, &output));
  assert_memory_equal(kiln_tensor_data(output), expected, kiln_tensor_byte_size(output));
  kiln_tensor_release(output);
}

static void test_new_type_relations(void **state) {
  (void)state;
  const kiln_type_t *out = NULL;
  const arg_t bools[] = {{KILN_DTYPE_BOOL, 2, {2, 1}}, {KILN_DTYPE_BOOL, 1, {3}}};
  const kiln_op_t *logical[] = {&kiln_op_logical_and, &kiln_op_logical_or, &kiln_op_logical_xor};
  for (int i = 0; i < 3; ++i) {
    KILN_ASSERT_OK(infer_args(logical[i], 2, bools, &out));
    assert_type(out, KILN_DTYPE_BOOL, 2, SHAPE(2, 3));
  }
  const arg_t floats[] = {{F32, 2, {2, 3}}, {F32, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_logical_and, 2, floats, &out), INVALID_ARGUMENT,
                     "logical_and: inputs must be bool, got float32 (2, 3) and float32 (3,)");
  const arg_t mixed[] = {{KILN_DTYPE_BOOL, 1, {3}}, {I64, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_logical_xor, 2, mixed, &out), INVALID_ARGUMENT,
                     "logical_xor: inputs have different dtypes: bool (3,) and int64 (3,)");
  const arg_t clash[] = {{KILN_DTYPE_BOOL, 1, {3}}, {KILN_DTYPE_BOOL, 1, {4}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_logical_or, 2, clash, &out), INVALID_ARGUMENT,
                     "logical_or: cannot broadcast (3,) and (4,)");
  const arg_t bytes[] = {{KILN_DTYPE_UINT8, 1, {3}}, {KILN_DTYPE_UINT8, 0, {0}}};
  const kiln_op_t *same[] = {&kiln_op_mod, &kiln_op_floor_mod, &kiln_op_left_shift,
                             &kiln_op_right_shift};
  for (int i = 0; i < 4; ++i) {
    KILN_ASSERT_OK(infer_args(same[i], 2, bytes, &out));
    assert_type(out, KILN_DTYPE_UINT8, 1, SHAPE(3));
  }
  const arg_t unequal[] = {{KILN_DTYPE_UINT8, 1, {3}}, {KILN_DTYPE_UINT16, 1, {3}}};
  KILN_ASSERT_STATUS(infer_args(&kiln_op_left_shift, 2, unequal, &out), INVALID_ARGUMENT,
                     "left_shift: inputs have different dtypes: uint8 (3,) and uint16 (3,)");
}

static void test_logical(void **state) {
  (void)state;
  /* (2, 1) against (2,): every pair of truth values */
  const arg_t p = {KILN_DTYPE_BOOL, 2, {2, 1}, (const uint8_t[]){0, 1}};
  const arg_t q = {KILN_DTYPE_BOOL, 1, {2}, (const uint8_t[]){0, 1}};
  check_bytes(&kiln_op_logical_and, &p, &q, (const uint8_t[]){0, 0, 0, 1});
  check_bytes(&kiln_op_logical_or, &p, &q, (const uint8_t[]){0, 1, 1, 1});
  check_bytes(&kiln_op_logical_xor, &p, &q, (const uint8_t[]){0, 1, 1, 0});
  /* a bool byte other than 1 is true */
  const arg_t two = {KILN_DTYPE_BOOL, 1, {2}, (const uint8_t[]){2, 0}};
  check_bytes(&kiln_op_logical_xor, &two, &q, (const uint8_t[]){1, 1});
}

/* ONNX test_mod_mixed_sign_*: x = [-4, 7, 5, 4, -7, 8], y = [2, -3, 8, -2, 3, 5]. */
#define MOD_X     -4, 7, 5, 4, -7, 8
#define MOD_Y     2, -3, 8, -2, 3, 5
#define MOD_FLOOR 0, -2, 5, 0, 2, 3 /* the sign of the divisor (ONNX fmod=0) */
#define MOD_TRUNC 0, 1, 5, 0, -1, 3 /* the sign of the dividend (fmod=1) */

static void test_mod_integers(void **state) {
  (void)state;
  const arg_t a8 = {KILN_DTYPE_INT8, 1, {6}, (const int8_t[]){MOD_X}};
  const arg_t b8 = {KILN_DTYPE_INT8, 1, {6}, (const int8_t[]){MOD_Y}};
  check_bytes(&kiln_op_floor_mod, &a8, &b8, (const int8_t[]){MOD_FLOOR});
  check_bytes(&kiln_op_mod, &a8, &b8, (const int8_t[]){MOD_TRUNC});
  const arg_t a16 = {KILN_DTYPE_INT16, 1, {6}, (const int16_t[]){MOD_X}};
  const arg_t b16 = {KILN_DTYPE_INT16, 1, {6}, (const int16_t[]){MOD_Y}};
  check_bytes(&kiln_op_floor_mod, &a16, &b16, (const int16_t[]){MOD_FLOOR});
  const arg_t a32 = {KILN_DTYPE_INT32, 1, {6}, (const int32_t[]){MOD_X}};
  const arg_t b32 = {KILN_DTYPE_INT32, 1, {6}, (const int32_t[]){MOD_Y}};
  check_bytes(&kiln_op_floor_mod, &a32, &b32, (const int32_t[]){MOD_FLOOR});
  const arg_t a64 = {I64, 1, {6}, SHAPE(MOD_X)};
  const arg_t b64 = {I64, 1, {6}, SHAPE(MOD_Y)};
  check_bytes(&kiln_op_floor_mod, &a64, &b64, SHAPE(MOD_FLOOR));
  check_bytes(&kiln_op_mod, &a64, &b64, SHAPE(MOD_TRUNC));
  /* INT64_MIN by -1 is 0, not a trap; ONNX test_mod_broadcast: int32 (3, 2, 5) by (1,) */
  const arg_t extreme = {I64, 1, {2}, SHAPE(INT64_MIN, INT64_MIN)};
  const arg_t divisors = {I64, 1, {2}, SHAPE(-1, 3)};
  check_bytes(&kiln_op_mod, &extreme, &divisors, SHAPE(0, -2));
  check_bytes(&kiln_op_floor_mod, &extreme, &divisors, SHAPE(0, 1));
  int32_t x[30];
  int32_t expected[30];
  for (int i = 0; i < 30; ++i) {
    x[i] = i - 13;
    expected[i] = ((i - 13) % 7 + 7) % 7;
  }
  const arg_t grid = {KILN_DTYPE_INT32, 3, {3, 2, 5}, x};
  const arg_t seven = {KILN_DTYPE_INT32, 1, {1}, (const int32_t[]){7}};
  check_bytes(&kiln_op_floor_mod, &grid, &seven, expected);
  /* unsigned: both mods agree; values above INT64_MAX stay unsigned */
  const arg_t u8a = {KILN_DTYPE_UINT8, 1, {3}, (const uint8_t[]){255, 7, 4}};
  const arg_t u8b = {KILN_DTYPE_UINT8, 1, {3}, (const uint8_t[]){16, 3, 200}};
  check_bytes(&kiln_op_floor_mod, &u8a, &u8b, (const uint8_t[]){15, 1, 4});
  check_bytes(&kiln_op_mod, &u8a, &u8b, (const uint8_t[]){15, 1, 4});
  const arg_t u64a = {KILN_DTYPE_UINT64, 1, {2}, (const uint64_t[]){UINT64_MAX, 10}};
  const arg_t u64b = {KILN_DTYPE_UINT64, 1, {2}, (const uint64_t[]){10, 3}};
  check_bytes(&kiln_op_floor_mod, &u64a, &u64b, (const uint64_t[]){5, 1});
  check_bytes(&kiln_op_divide, &u64a, &u64b, (const uint64_t[]){1844674407370955161u, 3});
}

static void test_mod_floats(void **state) {
  (void)state;
  const float xf[] = {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f};
  const float yf[] = {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f};
  const arg_t a = {F32, 1, {6}, xf};
  const arg_t b = {F32, 1, {6}, yf};
  double trunc_mod[6];
  double floor_mod[6];
  for (int i = 0; i < 6; ++i) {
    trunc_mod[i] = fmod(xf[i], yf[i]);
    floor_mod[i] = trunc_mod[i] != 0 && (trunc_mod[i] < 0) != (yf[i] < 0) ? trunc_mod[i] + yf[i]
                                                                          : trunc_mod[i];
  }
  /* by hand: about -0.1, 0.4, 5, 0.1, -0.4, 3 and 2.0, -3.0, 5, -2.0, 3.0, 3 */
  const double trunc_approx[] = {-0.1, 0.4, 5, 0.1, -0.4, 3};
  const double floor_approx[] = {2.0, -3.0, 5, -2.0, 3.0, 3};
  for (int i = 0; i < 6; ++i) {
    assert_true(fabs(trunc_mod[i] - trunc_approx[i]) < 1e-5);
    assert_true(fabs(floor_mod[i] - floor_approx[i]) < 1e-5);
  }
  check_float(&kiln_op_mod, &a, &b, trunc_mod);
  check_float(&kiln_op_floor_mod, &a, &b, floor_mod);
  /* a zero result takes the divisor's sign in floor_mod; x % 0 is NaN */
  const arg_t c = {F32, 1, {3}, (const float[]){-4, 4, 1}};
  const arg_t d = {F32, 1, {3}, (const float[]){2, -2, 0}};
  const arg_t cd[] = {c, d};
  kiln_tensor_t *output = NULL;
  KILN_ASSERT_OK(run_args(&kiln_op_floor_mod, 2, cd, &output));
  const float *got = kiln_tensor_data(output);
  assert_true(got[0] == 0.0f && !signbit(got[0]));
  assert_true(got[1] == 0.0f && signbit(got[1]));
  assert_true(isnan(got[2]));
  kiln_tensor_release(output);
  /* float64 and float16 (fmod=1 in ONNX's float Mod tests) */
  const arg_t a64 = {KILN_DTYPE_FLOAT64, 1, {2}, (const double[]){-4.3, 7.25}};
  const arg_t b64 = {KILN_DTYPE_FLOAT64, 1, {2}, (const double[]){2.1, -3.5}};
  check_bytes(&kiln_op_mod, &a64, &b64, (const double[]){fmod(-4.3, 2.1), 0.25});
  /* float16: -4.5 (0xc480) mod 2 (0x4000) = -0.5 (0xb800); 7 (0x4700) mod -3 (0xc200) = 1 (0x3c00)
   */
  const arg_t a16 = {KILN_DTYPE_FLOAT16, 1, {2}, (const uint16_t[]){0xc480, 0x4700}};
  const arg_t b16 = {KILN_DTYPE_FLOAT16, 1, {2}, (const uint16_t[]){0x4000, 0xc200}};
  check_bytes(&kiln_op_mod, &a16, &b16, (const uint16_t[]){0xb800, 0x3c00});
  /* floor_mod: 1.5 (0x3e00) and -2 (0xc000) */
  check_bytes(&kiln_op_floor_mod, &a16, &b16, (const uint16_t[]){0x3e00, 0xc000});
}

/* A zero divisor gives 0 on every integer dtype, signed and unsigned. */
static void test_zero_divisors(void **state) {
  (void)state;
  const arg_t mods[] = {{KILN_DTYPE_INT32, 1, {3}, (const int32_t[]){4, 5, INT32_MIN}},
                        {KILN_DTYPE_INT32, 1, {3}, (const int32_t[]){3, 0, -1}}};
  check_bytes(&kiln_op_divide, &mods[0], &mods[1], (const int32_t[]){1, 0, INT32_MIN});
  check_bytes(&kiln_op_mod, &mods[0], &mods[1], (const int32_t[]){1, 0, 0});
  check_bytes(&kiln_op_floor_mod, &mods[0], &mods[1], (const int32_t[]){1, 0, 0});
  const arg_t narrow[] = {{KILN_DTYPE_INT8, 1, {2}, (const int8_t[]){-128, -7}},
                          {KILN_DTYPE_INT8, 1, {2}, (const int8_t[]){-1, 0}}};
  check_bytes(&kiln_op_divide, &narrow[0], &narrow[1], (const int8_t[]){-128, 0});
  const arg_t wide[] = {{KILN_DTYPE_UINT64, 1, {1}, (const uint64_t[]){UINT64_MAX}},
                        {KILN_DTYPE_UINT64, 0, {0}, (const uint64_t[]){0}}};
  check_bytes(&kiln_op_divide, &wide[0], &wide[1], (const uint64_t[]){0});
  check_bytes(&kiln_op_mod, &wide[0], &wide[1], (const uint64_t[]){0});
  check_bytes(&kiln_op_floor_mod, &wide[0], &wide[1], (const uint64_t[]){0});
}

static void test_shifts(void **state) {
  (void)state;
  /* ONNX test_bitshift_*: x = [16, 4, 1], y = [1, 2, 3] */
  const arg_t x8 = {KILN_DTYPE_UINT8, 1, {3}, (const uint8_t[]){16, 4, 1}};
  const arg_t y8 = {KILN_DTYPE_UINT8, 1, {3}, (const uint8_t[]){1, 2, 3}};
  check_bytes(&kiln_op_left_shift, &x8, &y8, (const uint8_t[]){32, 16, 8});
  check_bytes(&kiln_op_right_shift, &x8, &y8, (const uint8_t[]){8, 1, 0});
  /* bits shifted out of the width are lost; a shift of 64 or more gives 0 */
  const arg_t a8 = {KILN_DTYPE_UINT8, 1, {3}, (const uint8_t[]){255, 255, 1}};
  const arg_t s8 = {KILN_DTYPE_UINT8, 1, {3}, (const uint8_t[]){1, 8, 200}};
  check_bytes(&kiln_op_left_shift, &a8, &s8, (const uint8_t[]){254, 0, 0});
  check_bytes(&kiln_op_right_shift, &a8, &s8, (const uint8_t[]){127, 0, 0});
  const arg_t x16 = {KILN_DTYPE_UINT16, 1, {2}, (const uint16_t[]){0x8001, 3}};
  const arg_t y16 = {KILN_DTYPE_UINT16, 1, {2}, (const uint16_t[]){1, 14}};
  check_bytes(&kiln_op_left_shift, &x16, &y16, (const uint16_t[]){0x0002, 0xc000});
  const arg_t x32 = {KILN_DTYPE_UINT32, 1, {2}, (const uint32_t[]){0x80000000u, 1}};
  const arg_t y32 = {KILN_DTYPE_UINT32, 1, {2}, (const uint32_t[]){31, 31}};
  check_bytes(&kiln_op_right_shift, &x32, &y32, (const uint32_t[]){1, 0});
  const arg_t x64 = {KILN_DTYPE_UINT64, 1, {3}, (const uint64_t[]){1, 1, UINT64_MAX}};
  const arg_t y64 = {KILN_DTYPE_UINT64, 1, {3}, (const uint64_t[]){63, 64, 63}};
  check_bytes(&kiln_op_left_shift, &x64, &y64, (const uint64_t[]){1ull << 63, 0, 1ull << 63});
  check_bytes(&kiln_op_right_shift, &x64, &y64, (const uint64_t[]){0, 0, 1});
}

static void test_other_dtypes(void **state) {
  (void)state;
  /* wrapping at the dtype's width */
  const arg_t u8a = {KILN_DTYPE_UINT8, 1, {2}, (const uint8_t[]){250, 3}};
  const arg_t u8b = {KILN_DTYPE_UINT8, 1, {2}, (const uint8_t[]){10, 5}};
  check_bytes(&kiln_op_add, &u8a, &u8b, (const uint8_t[]){4, 8});
  check_bytes(&kiln_op_subtract, &u8a, &u8b, (const uint8_t[]){240, 254});
  const arg_t i8a = {KILN_DTYPE_INT8, 1, {2}, (const int8_t[]){127, -128}};
  const arg_t i8b = {KILN_DTYPE_INT8, 1, {2}, (const int8_t[]){1, -1}};
  check_bytes(&kiln_op_add, &i8a, &i8b, (const int8_t[]){-128, 127});
  check_bytes(&kiln_op_divide, &i8a, &i8b, (const int8_t[]){127, -128});
  /* uint64 compares as unsigned: UINT64_MAX is the largest */
  const arg_t big = {KILN_DTYPE_UINT64, 1, {2}, (const uint64_t[]){UINT64_MAX, 1}};
  const arg_t one = {KILN_DTYPE_UINT64, 0, {0}, (const uint64_t[]){1}};
  check_bytes(&kiln_op_greater, &big, &one, (const uint8_t[]){1, 0});
  check_bytes(&kiln_op_maximum, &big, &one, (const uint64_t[]){UINT64_MAX, 1});
  /* float64 keeps double precision; float16 rounds to half */
  const arg_t d1 = {KILN_DTYPE_FLOAT64, 1, {1}, (const double[]){0.1}};
  const arg_t d2 = {KILN_DTYPE_FLOAT64, 1, {1}, (const double[]){0.2}};
  check_bytes(&kiln_op_add, &d1, &d2, (const double[]){0.30000000000000004});
  /* 1.5 (0x3e00) * 2.25 (0x4080) = 3.375 (0x42c0) */
  const arg_t h1 = {KILN_DTYPE_FLOAT16, 1, {1}, (const uint16_t[]){0x3e00}};
  const arg_t h2 = {KILN_DTYPE_FLOAT16, 1, {1}, (const uint16_t[]){0x4080}};
  check_bytes(&kiln_op_multiply, &h1, &h2, (const uint16_t[]){0x42c0});
  check_bytes(&kiln_op_less, &h1, &h2, (const uint8_t[]){1});
}

static void test_integer_power(void **state) {
  (void)state;
  /* wraps (2^63 is INT64_MIN); a negative exponent truncates 1 / x^-y */
  const arg_t a = {I64, 1, {8}, SHAPE(2, -3, 7, 2, 1, -1, -1, 5)};
  const arg_t b = {I64, 1, {8}, SHAPE(10, 3, 0, 63, -5, -3, -2, -1)};
  check_bytes(&kiln_op_power, &a, &b, SHAPE(1024, -27, 1, INT64_MIN, 1, -1, 1, 0));
  /* ONNX test_pow_types_int32_int32: [1, 2, 3] ** [4, 5, 6] */
  const arg_t x = {KILN_DTYPE_INT32, 1, {3}, (const int32_t[]){1, 2, 3}};
  const arg_t y = {KILN_DTYPE_INT32, 1, {3}, (const int32_t[]){4, 5, 6}};
  check_bytes(&kiln_op_power, &x, &y, (const int32_t[]){1, 32, 729});
  const arg_t u = {KILN_DTYPE_UINT8, 1, {2}, (const uint8_t[]){3, 2}};
  const arg_t e = {KILN_DTYPE_UINT8, 1, {2}, (const uint8_t[]){5, 8}};
  check_bytes(&kiln_op_power, &u, &e, (const uint8_t[]){243, 0});
  /* 0 ** -n is 1 / 0, which is 0 (base/scalar_ops.h). */
  const arg_t zero[] = {{I64, 1, {3}, SHAPE(0, 0, 0)}, {I64, 1, {3}, SHAPE(0, -1, -2)}};
  check_exact(&kiln_op_power, 2, zero, SHAPE(1, 0, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_binary_type_relation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary_type_relation_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_where_type_relation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layout_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_float_arithmetic_by_hand, setup, teardown),
      cmocka_unit_test_setup_teardown(test_float_odd_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_comparisons, setup, teardown),
      cmocka_unit_test_setup_teardown(test_int64_arithmetic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_int64_division_by_zero, setup, teardown),
      cmocka_unit_test_setup_teardown(test_where, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_dtype_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_argument_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_type_relations, setup, teardown),
      cmocka_unit_test_setup_teardown(test_logical, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mod_integers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mod_floats, setup, teardown),
      cmocka_unit_test_setup_teardown(test_zero_divisors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shifts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_dtypes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_integer_power, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
