/*
 * Typed wrappers over kiln_eager_call for the common operators: each spells
 * its arguments as attributes in the text format and takes the one output.
 */
#include <inttypes.h>
#include <stdio.h>

#include "kiln/eager.h"

#define INTS_TEXT_CAPACITY 128

static kiln_status_t call_one(const char *op_name, int num_inputs,
                              kiln_eager_tensor_t *const *inputs, int num_attrs,
                              const kiln_eager_attr_t *attrs, kiln_eager_tensor_t **out) {
  *out = NULL;
  int count = 0;
  return kiln_eager_call(op_name, num_inputs, inputs, num_attrs, attrs, 1, &count, out);
}

/* "[a, b, ...]" into `buffer`. */
static const char *ints_text(int count, const int64_t *values, char *buffer) {
  int used = snprintf(buffer, INTS_TEXT_CAPACITY, "[");
  for (int i = 0; i < count; ++i) {
    used += snprintf(buffer + used, (size_t)(INTS_TEXT_CAPACITY - used), "%s%" PRId64,
                     i ? ", " : "", values[i]);
  }
  snprintf(buffer + used, (size_t)(INTS_TEXT_CAPACITY - used), "]");
  return buffer;
}

static kiln_status_t binary(const char *op_name, kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                            kiln_eager_tensor_t **out) {
  kiln_eager_tensor_t *inputs[] = {a, b};
  return call_one(op_name, 2, inputs, 0, NULL, out);
}

static kiln_status_t unary(const char *op_name, kiln_eager_tensor_t *x, kiln_eager_tensor_t **out) {
  return call_one(op_name, 1, &x, 0, NULL, out);
}

kiln_status_t kiln_eager_add(kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                             kiln_eager_tensor_t **out) {
  return binary("add", a, b, out);
}

kiln_status_t kiln_eager_subtract(kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                                  kiln_eager_tensor_t **out) {
  return binary("subtract", a, b, out);
}

kiln_status_t kiln_eager_multiply(kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                                  kiln_eager_tensor_t **out) {
  return binary("multiply", a, b, out);
}

kiln_status_t kiln_eager_divide(kiln_eager_tensor_t *a, kiln_eager_tensor_t *b,
                                kiln_eager_tensor_t **out) {
  return binary("divide", a, b, out);
}

kiln_status_t kiln_eager_relu(kiln_eager_tensor_t *x, kiln_eager_tensor_t **out) {
  return unary("nn.relu", x, out);
}

kiln_status_t kiln_eager_sigmoid(kiln_eager_tensor_t *x, kiln_eager_tensor_t **out) {
  return unary("sigmoid", x, out);
}

kiln_status_t kiln_eager_tanh(kiln_eager_tensor_t *x, kiln_eager_tensor_t **out) {
  return unary("tanh", x, out);
}

kiln_status_t kiln_eager_global_avg_pool2d(kiln_eager_tensor_t *x, kiln_eager_tensor_t **out) {
  return unary("nn.global_avg_pool2d", x, out);
}

kiln_status_t kiln_eager_batch_flatten(kiln_eager_tensor_t *x, kiln_eager_tensor_t **out) {
  return unary("nn.batch_flatten", x, out);
}

kiln_status_t kiln_eager_dense(kiln_eager_tensor_t *x, kiln_eager_tensor_t *weight,
                               kiln_eager_tensor_t **out) {
  return binary("nn.dense", x, weight, out);
}

kiln_status_t kiln_eager_softmax(kiln_eager_tensor_t *x, int axis, kiln_eager_tensor_t **out) {
  char text[32];
  snprintf(text, sizeof(text), "%d", axis);
  kiln_eager_attr_t attrs[] = {{"axis", text}};
  return call_one("nn.softmax", 1, &x, 1, attrs, out);
}

kiln_status_t kiln_eager_bias_add(kiln_eager_tensor_t *x, kiln_eager_tensor_t *bias, int axis,
                                  kiln_eager_tensor_t **out) {
  char text[32];
  snprintf(text, sizeof(text), "%d", axis);
  kiln_eager_attr_t attrs[] = {{"axis", text}};
  kiln_eager_tensor_t *inputs[] = {x, bias};
  return call_one("nn.bias_add", 2, inputs, 1, attrs, out);
}

kiln_status_t kiln_eager_conv2d(kiln_eager_tensor_t *x, kiln_eager_tensor_t *weight,
                                const int64_t strides[2], const int64_t padding[4],
                                kiln_eager_tensor_t **out) {
  char s[INTS_TEXT_CAPACITY], p[INTS_TEXT_CAPACITY];
  kiln_eager_attr_t attrs[] = {{"strides", ints_text(2, strides, s)},
                               {"padding", ints_text(4, padding, p)}};
  kiln_eager_tensor_t *inputs[] = {x, weight};
  return call_one("nn.conv2d", 2, inputs, 2, attrs, out);
}

kiln_status_t kiln_eager_max_pool2d(kiln_eager_tensor_t *x, const int64_t pool_size[2],
                                    const int64_t strides[2], const int64_t padding[4],
                                    kiln_eager_tensor_t **out) {
  char k[INTS_TEXT_CAPACITY], s[INTS_TEXT_CAPACITY], p[INTS_TEXT_CAPACITY];
  kiln_eager_attr_t attrs[] = {{"pool_size", ints_text(2, pool_size, k)},
                               {"strides", ints_text(2, strides, s)},
                               {"padding", ints_text(4, padding, p)}};
  return call_one("nn.max_pool2d", 1, &x, 3, attrs, out);
}
