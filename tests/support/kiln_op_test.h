/*
 * Shared fixture and helpers of the operator tests (tests/op/).
 *
 * A test group uses setup/teardown as its cmocka fixture: they make a fresh
 * arena (kiln_op_test_arena) for attrs and types, and check that the test
 * freed every status it was given. The helpers build attrs from text
 * (ATTRS(op, "name", "value", ...)), tensor types and tensors, run a type
 * relation, a layout rule or a reference kernel, and compare results with
 * messages that say which element or type differed.
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
/* The layout rule of a one-input operator. */
kiln_status_t layout1(const kiln_op_t *op, const void *attrs, const kiln_type_t *type,
                      const char *arriving, const char **out_required, const char **out_output);

#endif /* KILN_TESTS_SUPPORT_KILN_OP_TEST_H_ */
