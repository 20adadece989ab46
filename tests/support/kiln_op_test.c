/*
 * Shared fixture and helpers of the operator tests; see kiln_op_test.h.
 */
#include "kiln_op_test.h"

#include "kiln_compute_test.h"

#include <math.h>
#include <stdbool.h>

kiln_arena_t kiln_op_test_arena;
static int64_t statuses_before;

int setup(void **state) {
  (void)state;
  kiln_arena_initialize(&kiln_op_test_arena, kiln_allocator_system(), 0);
  statuses_before = kiln_status_live_count();
  return 0;
}

int teardown(void **state) {
  (void)state;
  check_compute_flush(); /* the C-backend cases of the test (kiln_compute_test.h) */
  kiln_arena_deinitialize(&kiln_op_test_arena);
  assert_int_equal(kiln_status_live_count(), statuses_before);
  return 0;
}

/* Default attrs with (name, text) pairs applied; not validated. */
void *attrs_with(const kiln_op_t *op, const char *const *settings) {
  void *attrs = NULL;
  KILN_ASSERT_OK(kiln_op_attrs_create_default(op, &kiln_op_test_arena, &attrs));
  for (int i = 0; settings && settings[i]; i += 2) {
    KILN_ASSERT_OK(
        kiln_op_attrs_set_text(op, attrs, settings[i], settings[i + 1], &kiln_op_test_arena));
  }
  return attrs;
}

/* "name=value, ..." of the op's default attrs. */
void assert_defaults(const kiln_op_t *op, const char *expected) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_op_attrs_format(op, attrs_with(op, NULL), &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), expected);
  kiln_strbuf_deinitialize(&sb);
}

const kiln_type_t *ttype(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  const kiln_type_t *type = NULL;
  KILN_ASSERT_OK(kiln_tensor_type_create(&kiln_op_test_arena, dtype, ndim, shape, &type));
  return type;
}

kiln_status_t infer(const kiln_op_t *op, const void *attrs, int count,
                    const kiln_type_t *const *inputs, const kiln_type_t **out_type) {
  return kiln_op_infer_type(op, attrs, count, inputs, &kiln_op_test_arena, out_type);
}

kiln_status_t infer1(const kiln_op_t *op, const void *attrs, const kiln_type_t *input,
                     const kiln_type_t **out_type) {
  return infer(op, attrs, 1, &input, out_type);
}

void assert_type(const kiln_type_t *type, kiln_dtype_t dtype, int ndim, const int64_t *dims) {
  const kiln_type_t *expected = ttype(dtype, ndim, dims);
  if (!kiln_type_equal(type, expected)) {
    kiln_strbuf_t got;
    kiln_strbuf_t want;
    kiln_strbuf_initialize(&got, kiln_allocator_system());
    kiln_strbuf_initialize(&want, kiln_allocator_system());
    KILN_ASSERT_OK(kiln_type_format(type, &got));
    KILN_ASSERT_OK(kiln_type_format(expected, &want));
    fail_msg("type %s, expected %s", kiln_strbuf_c_str(&got), kiln_strbuf_c_str(&want));
  }
}

kiln_tensor_t *tensor_of(kiln_dtype_t dtype, int ndim, const int64_t *shape, const void *data) {
  size_t bytes = 0;
  KILN_ASSERT_OK(kiln_shape_byte_size(dtype, ndim, shape, &bytes));
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(
      kiln_tensor_create_copy(kiln_allocator_system(), dtype, ndim, shape, data, bytes, &tensor));
  return tensor;
}

/* Runs the reference kernel into a new output of the inferred (tensor) type. */
kiln_status_t run(const kiln_op_t *op, const void *attrs, int count, kiln_tensor_t *const *inputs,
                  kiln_tensor_t **out) {
  *out = NULL;
  const kiln_type_t *types[8];
  for (int i = 0; i < count; ++i) {
    types[i] = ttype(kiln_tensor_dtype(inputs[i]), kiln_tensor_ndim(inputs[i]),
                     kiln_tensor_shape(inputs[i]));
  }
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(infer(op, attrs, count, types, &type));
  assert_non_null(kiln_type_as_tensor(type));
  kiln_op_evaluation_t e;
  KILN_RETURN_IF_ERROR(
      kiln_op_evaluate(kiln_allocator_system(), op, attrs, count, inputs, type, &e));
  *out = e.outputs[0];
  return KILN_OK;
}

kiln_status_t run1(const kiln_op_t *op, const void *attrs, kiln_tensor_t *input,
                   kiln_tensor_t **out) {
  return run(op, attrs, 1, &input, out);
}

void assert_f32(const kiln_tensor_t *tensor, const double *expected, int64_t count) {
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const float *got = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    bool ok = isnan(expected[i])
                  ? isnan(got[i])
                  : fabs(got[i] - expected[i]) <= 1e-5 * fmax(1.0, fabs(expected[i]));
    if (!ok) {
      fail_msg("element %lld is %.9g, expected %.9g", (long long)i, got[i], expected[i]);
    }
  }
}

void assert_run2_f32(const kiln_op_t *op, const void *attrs, int ndim, const int64_t *x_shape,
                     const float *x, const int64_t *w_shape, const float *w, const double *expected,
                     int64_t count) {
  kiln_tensor_t *inputs[2] = {tensor_of(KILN_DTYPE_FLOAT32, ndim, x_shape, x),
                              tensor_of(KILN_DTYPE_FLOAT32, ndim, w_shape, w)};
  kiln_tensor_t *out = NULL;
  KILN_ASSERT_OK(run(op, attrs, 2, inputs, &out));
  assert_f32(out, expected, count);
  kiln_tensor_release(out);
  kiln_tensor_release(inputs[1]);
  kiln_tensor_release(inputs[0]);
}

void assert_i64(const kiln_tensor_t *tensor, const int64_t *expected, int64_t count) {
  assert_int_equal(kiln_tensor_element_count(tensor), count);
  const int64_t *got = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    if (got[i] != expected[i]) {
      fail_msg("element %lld is %lld, expected %lld", (long long)i, (long long)got[i],
               (long long)expected[i]);
    }
  }
}

/* The layout rule of a one-input operator. */
kiln_status_t layout1(const kiln_op_t *op, const void *attrs, const kiln_type_t *type,
                      const char *arriving, const char **out_required, const char **out_output) {
  const char *required[1] = {NULL};
  kiln_layout_relation_t relation = {.op = op,
                                     .attrs = attrs,
                                     .num_inputs = 1,
                                     .input_types = &type,
                                     .input_layouts = &arriving,
                                     .required_layouts = required,
                                     .arena = &kiln_op_test_arena};
  KILN_RETURN_IF_ERROR(op->correct_layout(&relation));
  *out_required = required[0];
  *out_output = relation.output_layout;
  return KILN_OK;
}

/* "name=value, ..." of the given attrs. */
void assert_attrs_text(const kiln_op_t *op, const void *attrs, const char *expected) {
  kiln_strbuf_t sb;
  kiln_strbuf_initialize(&sb, kiln_allocator_system());
  KILN_ASSERT_OK(kiln_op_attrs_format(op, attrs, &sb));
  assert_string_equal(kiln_strbuf_c_str(&sb), expected);
  kiln_strbuf_deinitialize(&sb);
}

kiln_tensor_t *tensor_zeros(kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  kiln_tensor_t *tensor = NULL;
  KILN_ASSERT_OK(kiln_tensor_create(kiln_allocator_system(), dtype, ndim, shape, &tensor));
  return tensor;
}

kiln_tensor_t *f32_filled(int seed, int ndim, const int64_t *shape) {
  kiln_tensor_t *tensor = tensor_zeros(KILN_DTYPE_FLOAT32, ndim, shape);
  float *data = kiln_tensor_data(tensor);
  for (int64_t i = 0; i < kiln_tensor_element_count(tensor); ++i) {
    data[i] = (float)((i * 37 + seed * 11) % 23 - 11) / 8.0f;
  }
  return tensor;
}

float *f32_scratch(int64_t count) {
  float *buffer = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate_zeroed(&kiln_op_test_arena, sizeof(float) * (size_t)count, 16,
                                            (void **)&buffer));
  return buffer;
}

void assert_f32_floats(const kiln_tensor_t *tensor, const float *expected, int64_t count) {
  double *widened = NULL;
  KILN_ASSERT_OK(kiln_arena_allocate(&kiln_op_test_arena,
                                     sizeof(double) * (size_t)(count > 0 ? count : 1), 16,
                                     (void **)&widened));
  for (int64_t i = 0; i < count; ++i) {
    widened[i] = expected[i];
  }
  assert_f32(tensor, widened, count);
}

void assert_near(double actual, double expected) {
  if (isnan(expected) || isinf(expected)) {
    assert_true(isnan(expected) ? isnan(actual) : actual == expected);
    return;
  }
  if (fabs(actual - expected) > 1e-5 * fabs(expected) + 1e-30) {
    fail_msg("got %.9g, expected %.9g", actual, expected);
  }
}

void assert_attr_invalid(const kiln_op_t *op, const char *name, const char *text,
                         kiln_status_code_t code, const char *message) {
  kiln_test_assert_status(kiln_op_attrs_validate(op, ATTRS(op, name, text)), code, message, name,
                          __FILE__, __LINE__);
}
