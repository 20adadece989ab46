/*
 * Tests of einsum (transform_einsum.c): the equation's forms (explicit and
 * implicit output, ellipses aligned from the right with broadcasting, a
 * repeated label taking the diagonal, spaces) through the type relation;
 * every error naming what in the equation does not fit; and the reference
 * kernel on small inputs worked by hand: a matrix product, a batched one,
 * an inner product, a row sum, a transpose, a batched diagonal, an outer
 * product, a broadcast ellipsis, float32 and float64.
 */
#include <stdio.h>
#include <string.h>

#include "kiln_op_test.h"
#include "kiln_test.h"
#include "op/op.h"

static const void *equation(const char *text) {
  char quoted[128];
  snprintf(quoted, sizeof(quoted), "\"%s\"", text);
  return ATTRS(&kiln_op_einsum, "equation", quoted);
}

static void check_shape(const char *eq, int count, const kiln_type_t *const *inputs, int ndim,
                        const int64_t *dims) {
  const kiln_type_t *out = NULL;
  KILN_ASSERT_OK(infer(&kiln_op_einsum, equation(eq), count, inputs, &out));
  assert_type(out, KILN_DTYPE_FLOAT32, ndim, dims);
}

static void test_types(void **state) {
  (void)state;
  assert_defaults(&kiln_op_einsum, "equation=\"\"");
  const kiln_type_t *a = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 3, 4));
  const kiln_type_t *b = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 4, 5));
  check_shape("bij,bjk->bik", 2, (const kiln_type_t *[]){a, b}, 3, SHAPE(2, 3, 5));
  check_shape(" bij , bjk -> bik ", 2, (const kiln_type_t *[]){a, b}, 3, SHAPE(2, 3, 5));
  /* implicit: the letters that occur once, so b is summed too (numpy's rule) */
  check_shape("bij,bjk", 2, (const kiln_type_t *[]){a, b}, 2, SHAPE(3, 5));
  check_shape("ijk->kji", 1, &a, 3, SHAPE(4, 3, 2));
  check_shape("ijk", 1, &a, 3, SHAPE(2, 3, 4));
  check_shape("kji", 1, &a, 3, SHAPE(4, 3, 2)); /* implicit: sorted */
  check_shape("...k->...", 1, &a, 2, SHAPE(2, 3));
  check_shape("...", 1, &a, 3, SHAPE(2, 3, 4));
  check_shape("i...->", 1, &a, 0, SHAPE(0));
  const kiln_type_t *square = ttype(KILN_DTYPE_FLOAT32, 4, SHAPE(3, 2, 5, 5));
  check_shape("...ii->...i", 1, &square, 3, SHAPE(3, 2, 5));
  check_shape("...ii", 1, &square, 2, SHAPE(3, 2));
  /* The ellipses broadcast, aligned from the right: (2, 1) and (3,). */
  const kiln_type_t *p = ttype(KILN_DTYPE_FLOAT32, 3, SHAPE(2, 1, 4));
  const kiln_type_t *q = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4));
  check_shape("...i,...i->...", 2, (const kiln_type_t *[]){p, q}, 2, SHAPE(2, 3));
  /* Upper case sorts before lower case in the implicit output. */
  check_shape("bA", 1, &q, 2, SHAPE(4, 3));
}

static void check_error(const char *eq, int count, const kiln_type_t *const *inputs,
                        const char *message) {
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(infer(&kiln_op_einsum, equation(eq), count, inputs, &out), INVALID_ARGUMENT,
                     message);
}

static void test_type_errors(void **state) {
  (void)state;
  const kiln_type_t *a = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 3));
  const kiln_type_t *b = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(4, 5));
  const kiln_type_t *two[] = {a, b};
  check_error("ij", 2, two, "einsum: equation \"ij\" has 1 input terms for 2 inputs");
  check_error("ij,jk,kl", 2, two, "has 3 input terms for 2 inputs");
  check_error("ij,jk", 2, two, "einsum: label j has extent 4 in input 1 but 3 before");
  check_error("ijk,jk", 2, two, "einsum: input 0 has rank 2 but its term names 3 dims");
  check_error("i,jk", 2, two, "einsum: input 0 has rank 2 but its term names 1 dims");
  check_error("i1,kl", 2, two, "einsum: equation term \"i1\" is not letters");
  check_error("i..j,kl", 2, two, "is not letters and at most one \"...\"");
  check_error("ij,kl->im", 2, two, "einsum: the output's m is in no input");
  check_error("ij,kl->ii", 2, two, "einsum: the output names i twice");
  const kiln_type_t *p = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(2, 4));
  const kiln_type_t *q = ttype(KILN_DTYPE_FLOAT32, 2, SHAPE(3, 4));
  check_error("...i,...i", 2, (const kiln_type_t *[]){p, q},
              "einsum: ellipsis dim 0 has extent 3 in input 1 but 2 before");
  const kiln_type_t *mixed[] = {a, ttype(KILN_DTYPE_FLOAT64, 2, SHAPE(3, 4))};
  check_error("ij,jk", 2, mixed, "einsum: input 1 is float64 but input 0 is float32");
  char long_equation[300];
  memset(long_equation, 'a', sizeof(long_equation) - 1);
  long_equation[0] = long_equation[sizeof(long_equation) - 2] = '"';
  long_equation[sizeof(long_equation) - 1] = '\0';
  const kiln_type_t *out = NULL;
  KILN_ASSERT_STATUS(
      infer(&kiln_op_einsum, ATTRS(&kiln_op_einsum, "equation", long_equation), 1, &a, &out),
      INVALID_ARGUMENT, "einsum: the equation is longer than 255 characters");
}

/* Runs einsum on float32 inputs and checks every element. */
static void check_f32(const char *eq, int count, const int64_t (*shapes)[3], const int *ndims,
                      const float *const *data, const double *expected, int64_t expected_count) {
  kiln_tensor_t *inputs[3] = {NULL, NULL, NULL};
  for (int i = 0; i < count; ++i) {
    inputs[i] = tensor_of(KILN_DTYPE_FLOAT32, ndims[i], shapes[i], data[i]);
  }
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(&kiln_op_einsum, equation(eq), count, inputs, &out));
  assert_f32(out, expected, expected_count);
  kiln_tensor_release(out);
  for (int i = 0; i < count; ++i) {
    kiln_tensor_release(inputs[i]);
  }
}

static void test_kernel(void **state) {
  (void)state;
  const float m[6] = {1, 2, 3, 4, 5, 6};     /* [[1, 2, 3], [4, 5, 6]] */
  const float n[6] = {1, 0, 0, 1, 2, -1};    /* [[1, 0], [0, 1], [2, -1]] */
  const int64_t mn[2][3] = {{2, 3}, {3, 2}}; /* ranks 2 */
  check_f32("ij,jk->ik", 2, mn, (const int[]){2, 2}, (const float *[]){m, n},
            (const double[]){7, -1, 16, -1}, 4);
  check_f32("ij->i", 1, mn, (const int[]){2}, (const float *[]){m}, (const double[]){6, 15}, 2);
  check_f32("ij->j", 1, mn, (const int[]){2}, (const float *[]){m}, (const double[]){5, 7, 9}, 3);
  check_f32("ij->ji", 1, mn, (const int[]){2}, (const float *[]){m},
            (const double[]){1, 4, 2, 5, 3, 6}, 6);
  check_f32("ij,ij", 2, (const int64_t[][3]){{2, 3}, {2, 3}}, (const int[]){2, 2},
            (const float *[]){m, m}, (const double[]){91}, 1);
  check_f32("i,j", 2, (const int64_t[][3]){{2}, {3}}, (const int[]){1, 1}, (const float *[]){m, m},
            (const double[]){1, 2, 3, 2, 4, 6}, 6);
  /* A batch of two 2x2 diagonals: [[1, 2], [3, 4]] and [[5, 6], [7, 8]]. */
  const float batch[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  check_f32("...ii->...i", 1, (const int64_t[][3]){{2, 2, 2}}, (const int[]){3},
            (const float *[]){batch}, (const double[]){1, 4, 5, 8}, 4);
  check_f32("bij,bjk->bik", 2, (const int64_t[][3]){{2, 2, 2}, {2, 2, 2}}, (const int[]){3, 3},
            (const float *[]){batch, batch}, (const double[]){7, 10, 15, 22, 67, 78, 91, 106}, 8);
  /* (1, 3) against (2, 3) in the ellipsis: the row broadcasts. */
  const float row[3] = {1, 1, 2};
  check_f32("...j,...j->...", 2, (const int64_t[][3]){{1, 3}, {2, 3}}, (const int[]){2, 2},
            (const float *[]){row, m}, (const double[]){9, 21}, 2);
  /* float64, and a dtype the kernel does not take. */
  const double wide[3] = {0.5, 0.25, 0.125};
  kiln_tensor_t *x = tensor_of(KILN_DTYPE_FLOAT64, 1, SHAPE(3), wide);
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(RUN(&kiln_op_einsum, equation("i,i"), &out, x, x));
  assert_true(((const double *)kiln_tensor_data(out))[0] == 0.25 + 0.0625 + 0.015625);
  kiln_tensor_release(out);
  kiln_tensor_release(x);
  const int32_t ints[2] = {1, 2};
  x = tensor_of(KILN_DTYPE_INT32, 1, SHAPE(2), ints);
  KILN_ASSERT_STATUS(RUN(&kiln_op_einsum, equation("i"), &out, x), UNIMPLEMENTED,
                     "einsum: the reference kernel does not handle int32");
  kiln_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
