/*
 * Shared fixture and helpers of the operator tests (tests/op/).
 *
 * A test group uses setup/teardown as its cmocka fixture: they make a fresh
 * arena (kiln_op_test_arena) for attrs and types, and check that the test
 * freed every status it was given. The helpers build attrs from text
 * (ATTRS(op, "name", "value", ...)), tensor types and tensors, run a type
 * relation, a layout rule or a reference kernel, and compare results with
 * messages that say which element or type differed. INFER and RUN list
 * their inputs in the call; f32_filled gives exact small-fraction data for
 * kernels whose expectations are computed by a loop in the test.
 */
#ifndef KILN_TESTS_SUPPORT_KILN_OP_TEST_H_
#define KILN_TESTS_SUPPORT_KILN_OP_TEST_H_

#include "base/arena.h"
#include "base/strbuf.h"
#include "kiln_test.h"
#include "op/op.h"

extern kiln_arena_t kiln_op_test_arena;

int setup(void **state);
int teardown(void **state);

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* Default attrs with (name, text) pairs applied; not validated. */
void *attrs_with(const kiln_op_t *op, const char *const *settings);
#define ATTRS(op, ...) attrs_with((op), (const char *const[]){__VA_ARGS__, NULL})
/* "name=value, ..." of the op's default attrs. */
void assert_defaults(const kiln_op_t *op, const char *expected);
const kiln_type_t *ttype(kiln_dtype_t dtype, int ndim, const int64_t *shape);
kiln_status_t infer(const kiln_op_t *op, const void *attrs, int count,
                    const kiln_type_t *const *inputs, const kiln_type_t **out_type);
kiln_status_t infer1(const kiln_op_t *op, const void *attrs, const kiln_type_t *input,
                     const kiln_type_t **out_type);
void assert_type(const kiln_type_t *type, kiln_dtype_t dtype, int ndim, const int64_t *dims);
kiln_tensor_t *tensor_of(kiln_dtype_t dtype, int ndim, const int64_t *shape, const void *data);
/* Runs the reference kernel into a new output of the inferred (tensor) type. */
kiln_status_t run(const kiln_op_t *op, const void *attrs, int count, kiln_tensor_t *const *inputs,
                  kiln_tensor_t **out);
kiln_status_t run1(const kiln_op_t *op, const void *attrs, kiln_tensor_t *input,
                   kiln_tensor_t **out);
/* Elements within 1e-5 relative (NaN matches NaN). */
void assert_f32(const kiln_tensor_t *tensor, const double *expected, int64_t count);
void assert_i64(const kiln_tensor_t *tensor, const int64_t *expected, int64_t count);
/* Runs a two-input float32 operator on data `x` and weight `w` of rank
 * `ndim` and checks the `count` output values (assert_f32). */
void assert_run2_f32(const kiln_op_t *op, const void *attrs, int ndim, const int64_t *x_shape,
                     const float *x, const int64_t *w_shape, const float *w, const double *expected,
                     int64_t count);
/* The layout rule of a one-input operator. */
kiln_status_t layout1(const kiln_op_t *op, const void *attrs, const kiln_type_t *type,
                      const char *arriving, const char **out_required, const char **out_output);

/* The number of values in a list of `type`; the list is not evaluated. */
#define KILN_OP_TEST_COUNT(type, ...) (int)(sizeof((type[]){__VA_ARGS__}) / sizeof(type))
/* infer and run with their inputs listed: INFER(op, attrs, &type, input_type, ...),
 * RUN(op, attrs, &tensor, input, ...). */
#define INFER(op, attrs, out_type, ...)                                      \
  infer((op), (attrs), KILN_OP_TEST_COUNT(const kiln_type_t *, __VA_ARGS__), \
        (const kiln_type_t *const[]){__VA_ARGS__}, (out_type))
#define RUN(op, attrs, out, ...)                                       \
  run((op), (attrs), KILN_OP_TEST_COUNT(kiln_tensor_t *, __VA_ARGS__), \
      (kiln_tensor_t *const[]){__VA_ARGS__}, (out))
/* "name=value, ..." of the given attrs. */
void assert_attrs_text(const kiln_op_t *op, const void *attrs, const char *expected);
/* A zero-filled tensor. */
kiln_tensor_t *tensor_zeros(kiln_dtype_t dtype, int ndim, const int64_t *shape);
/* Float32 element i is ((37 i + 11 seed) mod 23 - 11) / 8: k/8 for k in [-11, 11], exact in
 * float, so sums of few products of them are exact. */
kiln_tensor_t *f32_filled(int seed, int ndim, const int64_t *shape);
/* A zero-filled buffer of `count` floats in kiln_op_test_arena. */
float *f32_scratch(int64_t count);
/* assert_f32 with float expectations. */
void assert_f32_floats(const kiln_tensor_t *tensor, const float *expected, int64_t count);
/* One value within 1e-5 relative (plus 1e-30); NaN matches NaN, an infinity only itself. */
void assert_near(double actual, double expected);
/* kiln_op_attrs_validate of default attrs with `name` set to `text` fails with `code` and a
 * message containing `message`. */
void assert_attr_invalid(const kiln_op_t *op, const char *name, const char *text,
                         kiln_status_code_t code, const char *message);

#endif /* KILN_TESTS_SUPPORT_KILN_OP_TEST_H_ */
