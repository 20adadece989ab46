/*
 * Helpers shared by operator rules: pattern names, the checked entry to a
 * type relation, input access and axis normalization with errors that name
 * the operator.
 */
#include <stdio.h>

#include "op/op.h"

const char *kiln_op_pattern_name(kiln_op_pattern_t pattern) {
  switch (pattern) {
  case KILN_OP_PATTERN_ELEMWISE:
    return "elemwise";
  case KILN_OP_PATTERN_BROADCAST:
    return "broadcast";
  case KILN_OP_PATTERN_INJECTIVE:
    return "injective";
  case KILN_OP_PATTERN_COMM_REDUCE:
    return "reduction";
  case KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE:
    return "out-elemwise-fusable";
  case KILN_OP_PATTERN_TUPLE:
    return "tuple";
  case KILN_OP_PATTERN_OPAQUE:
    return "opaque";
  }
  return "invalid";
}

kiln_status_t kiln_op_infer_type(const kiln_op_t *op, const void *attrs, int num_inputs,
                                 const kiln_type_t *const *inputs, kiln_arena_t *arena,
                                 const kiln_type_t **out_type) {
  *out_type = NULL;
  if (num_inputs < op->min_inputs || (op->max_inputs >= 0 && num_inputs > op->max_inputs)) {
    if (op->max_inputs == op->min_inputs) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: expected %d inputs, got %d", op->name,
                         op->min_inputs, num_inputs);
    }
    if (op->max_inputs < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: expected at least %d inputs, got %d", op->name,
                         op->min_inputs, num_inputs);
    }
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected %d to %d inputs, got %d", op->name,
                       op->min_inputs, op->max_inputs, num_inputs);
  }
  for (int i = 0; i < num_inputs; ++i) {
    if (!inputs[i]) {
      return KILN_STATUS(FAILED_PRECONDITION, "%s: input %d has no type yet", op->name, i);
    }
  }
  kiln_type_relation_t relation = {
      .op = op, .attrs = attrs, .num_inputs = num_inputs, .inputs = inputs, .arena = arena};
  for (int i = 0; i < num_inputs; ++i) {
    if (!kiln_type_is_static(inputs[i])) {
      return kiln_op_infer_type_symbolic(&relation, out_type);
    }
  }
  return op->infer_type(&relation, out_type);
}

kiln_status_t kiln_op_input_tensor(const kiln_type_relation_t *relation, int index,
                                   const kiln_tensor_type_t **out_type) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(relation->inputs[index]);
  if (!tensor) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d must be a tensor, not a tuple",
                       relation->op->name, index);
  }
  *out_type = tensor;
  return KILN_OK;
}

const char *kiln_op_shape_text(const kiln_tensor_type_t *type, char *buffer) {
  kiln_shape_format(type->ndim, type->shape, buffer, KILN_SHAPE_TEXT_CAPACITY);
  return buffer;
}

kiln_status_t kiln_op_normalize_axis(const kiln_op_t *op, int64_t axis, int ndim, int *out_axis) {
  if (axis < -ndim || axis >= ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d", op->name,
                       (long long)axis, ndim);
  }
  *out_axis = (int)(axis < 0 ? axis + ndim : axis);
  return KILN_OK;
}
