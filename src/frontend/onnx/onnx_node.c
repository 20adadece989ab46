/*
 * The converter toolkit's node side: reading a node's inputs (present,
 * typed, or constant), making Constants, and emitting typed calls; see
 * onnx_importer.h.
 *
 * Every node made here has its attributes validated by the operator and
 * gets its checked_type at once (kiln_ir_infer_node over inputs that are
 * already typed), so a converter can read the shape of anything it has
 * built, and an attribute or relation error surfaces at the node that
 * caused it. Scalars cross dtypes through double, which is exact for every
 * value an attribute or a shape can hold.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx/onnx_importer.h"
#include "ir/infer.h"

/* ---- inputs ---- */

kiln_expr_t *kiln_onnx_input_optional(const kiln_onnx_node_t *node, int index) {
  return index >= 0 && index < node->num_inputs ? node->inputs[index] : NULL;
}

kiln_status_t kiln_onnx_input(const kiln_onnx_node_t *node, int index, kiln_expr_t **out_expr) {
  *out_expr = kiln_onnx_input_optional(node, index);
  if (!*out_expr) {
    return KILN_STATUS(INVALID_ARGUMENT, "input %d is missing (the node has %d inputs)", index,
                       node->num_inputs);
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_inputs_at_most(const kiln_onnx_node_t *node, int most) {
  if (node->num_inputs > most) {
    return KILN_STATUS(INVALID_ARGUMENT, "%d inputs; %s takes at most %d", node->num_inputs,
                       node->proto->op_type, most);
  }
  return KILN_OK;
}

const kiln_tensor_type_t *kiln_onnx_type_of(const kiln_expr_t *expr) {
  return expr ? kiln_type_as_tensor(expr->checked_type) : NULL;
}

kiln_status_t kiln_onnx_input_type(const kiln_onnx_node_t *node, int index,
                                   const kiln_tensor_type_t **out_type) {
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, index, &expr));
  *out_type = kiln_onnx_type_of(expr);
  if (!*out_type) {
    return KILN_STATUS(INVALID_ARGUMENT, "input %d is not a tensor", index);
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_input_known(const kiln_onnx_node_t *node, int index, bool *out_known) {
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, index, &expr));
  *out_known = kiln_expr_as_constant(expr) != NULL ||
               kiln_hashmap_contains(&node->importer->param_values, expr);
  if (!*out_known) {
    const kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_evaluate(node->importer, expr, &tensor));
    *out_known = tensor != NULL;
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_input_value(const kiln_onnx_node_t *node, int index,
                                    kiln_expr_t **out_expr) {
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, index, out_expr));
  if (kiln_expr_as_constant(*out_expr)) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, index, &known));
  if (!known) {
    return KILN_OK;
  }
  const kiln_tensor_t *value = NULL;
  kiln_tensor_t *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, index, "value", &value));
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, kiln_tensor_dtype(value), kiln_tensor_ndim(value),
                                            kiln_tensor_shape(value), &copy));
  size_t bytes =
      (size_t)kiln_tensor_element_count(value) * kiln_dtype_size(kiln_tensor_dtype(value));
  if (bytes > 0) {
    memcpy(kiln_tensor_data(copy), kiln_tensor_data(value), bytes);
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, copy, out_expr);
  kiln_tensor_release(copy);
  return status;
}

kiln_status_t kiln_onnx_emit_dyn(kiln_onnx_node_t *node, const kiln_op_t *op, int count,
                                 const void *attrs) {
  kiln_expr_t *args[8];
  if (count > 8) {
    return KILN_STATUS(INTERNAL, "%s: %d inputs", op->name, count);
  }
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  return kiln_onnx_emit(node, op, count, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_input_constant(const kiln_onnx_node_t *node, int index, const char *what,
                                       const kiln_tensor_t **out_tensor) {
  kiln_expr_t *expr = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, index, &expr));
  kiln_constant_t *constant = kiln_expr_as_constant(expr);
  void *value = NULL;
  if (!constant && kiln_hashmap_get(&node->importer->param_values, expr, &value)) {
    *out_tensor = value;
    return KILN_OK;
  }
  if (!constant) {
    KILN_RETURN_IF_ERROR(kiln_onnx_evaluate(node->importer, expr, out_tensor));
    if (*out_tensor) {
      return KILN_OK;
    }
    const char *name = node->proto->input[index];
    return KILN_STATUS(UNIMPLEMENTED,
                       "input %d (%s, \"%s\") must be a constant known at import, but it depends "
                       "on the graph's inputs",
                       index, what, name);
  }
  *out_tensor = constant->value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_axis(int64_t axis, int ndim, int *out_axis) {
  if (axis < -ndim || axis >= ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axis,
                       ndim);
  }
  *out_axis = (int)(axis < 0 ? axis + ndim : axis);
  return KILN_OK;
}

bool kiln_onnx_is_float(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16 ||
         dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64;
}

/* `value` rounded toward zero and clamped to [lo, hi] (NaN: 0). */
static double kiln_onnx_clamp_int(double value, double lo, double hi) {
  if (isnan(value)) {
    return 0.0;
  }
  value = trunc(value);
  return value < lo ? lo : value > hi ? hi : value;
}

void kiln_onnx_store_double(kiln_tensor_t *tensor, int64_t index, double value) {
  void *data = kiln_tensor_data(tensor);
  switch (kiln_tensor_dtype(tensor)) {
  case KILN_DTYPE_FLOAT32:
    ((float *)data)[index] = (float)value;
    break;
  case KILN_DTYPE_FLOAT16:
    ((uint16_t *)data)[index] = kiln_float32_to_float16((float)value);
    break;
  case KILN_DTYPE_BFLOAT16:
    ((uint16_t *)data)[index] = kiln_float32_to_bfloat16((float)value);
    break;
  case KILN_DTYPE_FLOAT64:
    ((double *)data)[index] = value;
    break;
  case KILN_DTYPE_INT8:
    ((int8_t *)data)[index] = (int8_t)kiln_onnx_clamp_int(value, INT8_MIN, INT8_MAX);
    break;
  case KILN_DTYPE_INT16:
    ((int16_t *)data)[index] = (int16_t)kiln_onnx_clamp_int(value, INT16_MIN, INT16_MAX);
    break;
  case KILN_DTYPE_INT32:
    ((int32_t *)data)[index] = (int32_t)kiln_onnx_clamp_int(value, INT32_MIN, INT32_MAX);
    break;
  case KILN_DTYPE_INT64:
    /* 2^63 is the first double past INT64_MAX. */
    ((int64_t *)data)[index] =
        value >= 9223372036854775808.0
            ? INT64_MAX
            : (int64_t)kiln_onnx_clamp_int(value, -9223372036854775808.0, 9223372036854775807.0);
    break;
  case KILN_DTYPE_UINT8:
    ((uint8_t *)data)[index] = (uint8_t)kiln_onnx_clamp_int(value, 0, UINT8_MAX);
    break;
  case KILN_DTYPE_UINT16:
    ((uint16_t *)data)[index] = (uint16_t)kiln_onnx_clamp_int(value, 0, UINT16_MAX);
    break;
  case KILN_DTYPE_UINT32:
    ((uint32_t *)data)[index] = (uint32_t)kiln_onnx_clamp_int(value, 0, UINT32_MAX);
    break;
  case KILN_DTYPE_UINT64:
    ((uint64_t *)data)[index] =
        value >= 18446744073709551616.0
            ? UINT64_MAX
            : (uint64_t)kiln_onnx_clamp_int(value, 0, 18446744073709551615.0);
    break;
  case KILN_DTYPE_BOOL:
    ((uint8_t *)data)[index] = value != 0.0;
    break;
  case KILN_DTYPE_COUNT_:
    break;
  }
}

kiln_status_t kiln_onnx_input_ints(const kiln_onnx_node_t *node, int index, const char *what,
                                   kiln_ints_t *out_ints) {
  const kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, index, what, &tensor));
  kiln_dtype_t dtype = kiln_tensor_dtype(tensor);
  if ((dtype != KILN_DTYPE_INT64 && dtype != KILN_DTYPE_INT32) || kiln_tensor_ndim(tensor) > 1) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(kiln_tensor_ndim(tensor), kiln_tensor_shape(tensor), shape, sizeof(shape));
    return KILN_STATUS(INVALID_ARGUMENT, "input %d (%s) is %s %s; expected a 1-D int64 tensor",
                       index, what, kiln_dtype_name(dtype), shape);
  }
  int64_t count = kiln_tensor_element_count(tensor);
  int64_t *values = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena,
                                                 (size_t)(count > 0 ? count : 1), sizeof(int64_t),
                                                 8, (void **)&values));
  for (int64_t i = 0; i < count; ++i) {
    values[i] = dtype == KILN_DTYPE_INT64 ? ((const int64_t *)kiln_tensor_data(tensor))[i]
                                          : ((const int32_t *)kiln_tensor_data(tensor))[i];
  }
  *out_ints = (kiln_ints_t){(int32_t)count, values};
  return KILN_OK;
}

kiln_status_t kiln_onnx_input_scalar(const kiln_onnx_node_t *node, int index, const char *what,
                                     double *out_value) {
  const kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, index, what, &tensor));
  if (kiln_tensor_element_count(tensor) != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "input %d (%s) has %lld elements; expected one", index,
                       what, (long long)kiln_tensor_element_count(tensor));
  }
  *out_value = kiln_tensor_element_as_double(tensor, 0);
  return KILN_OK;
}

/* ---- constants ---- */

kiln_status_t kiln_onnx_constant(kiln_onnx_importer_t *importer, kiln_tensor_t *tensor,
                                 kiln_expr_t **out_expr) {
  kiln_constant_t *constant = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_constant_create(importer->module, tensor, &constant));
  KILN_RETURN_IF_ERROR(kiln_tensor_type_of(importer->arena, tensor, &constant->base.checked_type));
  *out_expr = &constant->base;
  return KILN_OK;
}

int64_t kiln_onnx_constant_cap(const kiln_onnx_importer_t *importer) {
  const kiln_onnx_import_options_t *options = importer->options;
  return options && options->max_constant_bytes > 0 ? options->max_constant_bytes
                                                    : KILN_ONNX_MAX_CONSTANT_BYTES;
}

kiln_status_t kiln_onnx_check_constant_size(const kiln_onnx_importer_t *importer, const char *what,
                                            const char *type, size_t bytes) {
  int64_t cap = kiln_onnx_constant_cap(importer);
  if (bytes > (size_t)cap) {
    return KILN_STATUS(RESOURCE_EXHAUSTED,
                       "%s at import would make a constant %s of %zu bytes, over the limit of "
                       "%lld bytes (the import option max_constant_bytes)",
                       what, type, bytes, (long long)cap);
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_tensor_new(const kiln_onnx_node_t *node, kiln_dtype_t dtype, int ndim,
                                   const int64_t *shape, kiln_tensor_t **out_tensor) {
  size_t bytes = 0;
  kiln_status_t status = kiln_shape_byte_size(dtype, ndim, shape, &bytes);
  if (status) {
    kiln_status_free(status);
    bytes = SIZE_MAX;
  }
  char text[KILN_SHAPE_TEXT_CAPACITY], type[KILN_SHAPE_TEXT_CAPACITY + 16];
  kiln_shape_format(ndim, shape, text, sizeof(text));
  snprintf(type, sizeof(type), "%s %s", kiln_dtype_name(dtype), text);
  KILN_RETURN_IF_ERROR(
      kiln_onnx_check_constant_size(node->importer, node->proto->op_type, type, bytes));
  return kiln_tensor_create(node->importer->allocator, dtype, ndim, shape, out_tensor);
}

kiln_status_t kiln_onnx_filled(const kiln_onnx_node_t *node, kiln_dtype_t dtype, int ndim,
                               const int64_t *shape, double value, kiln_expr_t **out_expr) {
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, dtype, ndim, shape, &tensor));
  int64_t count = kiln_tensor_element_count(tensor);
  for (int64_t i = 0; i < count; ++i) {
    kiln_onnx_store_double(tensor, i, value);
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, out_expr);
  kiln_tensor_release(tensor);
  return status;
}

kiln_status_t kiln_onnx_scalar(const kiln_onnx_node_t *node, kiln_dtype_t dtype, double value,
                               kiln_expr_t **out_expr) {
  return kiln_onnx_filled(node, dtype, 0, NULL, value, out_expr);
}

kiln_status_t kiln_onnx_int64s(const kiln_onnx_node_t *node, int count, const int64_t *values,
                               kiln_expr_t **out_expr) {
  const int64_t shape[1] = {count};
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(node->importer->allocator, KILN_DTYPE_INT64, 1,
                                               shape, values, sizeof(int64_t) * (size_t)count,
                                               &tensor));
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, out_expr);
  kiln_tensor_release(tensor);
  return status;
}

/* ---- calls ---- */

static bool kiln_onnx_all_constant(int num_args, kiln_expr_t *const *args) {
  for (int i = 0; i < num_args; ++i) {
    if (!kiln_expr_as_constant(args[i])) {
      return false;
    }
  }
  return true;
}

kiln_status_t kiln_onnx_emit(const kiln_onnx_node_t *node, const kiln_op_t *op, int num_args,
                             kiln_expr_t *const *args, const void *attrs, kiln_expr_t **out_expr) {
  kiln_onnx_importer_t *importer = node->importer;
  kiln_call_t *call = NULL;
  if (attrs) {
    KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(op, attrs));
  }
  KILN_RETURN_IF_ERROR(kiln_ir_call_create(importer->module, op, num_args, args, attrs, &call));
  KILN_RETURN_IF_ERROR(kiln_ir_infer_node(importer->arena, &call->base, &call->base.checked_type));
  *out_expr = &call->base;
  bool fold = !(importer->options && importer->options->no_constant_folding);
  if (fold && kiln_onnx_all_constant(num_args, args)) {
    return kiln_onnx_fold(importer, call, out_expr);
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_emit1(const kiln_onnx_node_t *node, const kiln_op_t *op, kiln_expr_t *x,
                              const void *attrs, kiln_expr_t **out_expr) {
  return kiln_onnx_emit(node, op, 1, &x, attrs, out_expr);
}

kiln_status_t kiln_onnx_emit2(const kiln_onnx_node_t *node, const kiln_op_t *op, kiln_expr_t *a,
                              kiln_expr_t *b, const void *attrs, kiln_expr_t **out_expr) {
  kiln_expr_t *args[2] = {a, b};
  return kiln_onnx_emit(node, op, 2, args, attrs, out_expr);
}

kiln_status_t kiln_onnx_tuple_item(const kiln_onnx_node_t *node, kiln_expr_t *tuple, int index,
                                   kiln_expr_t **out_expr) {
  kiln_tuple_t *fields = kiln_expr_as_tuple(tuple);
  if (fields && index >= 0 && index < fields->num_fields) {
    *out_expr = fields->fields[index];
    return KILN_OK;
  }
  kiln_tuple_get_item_t *item = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_tuple_get_item_create(node->importer->module, tuple, index, &item));
  KILN_RETURN_IF_ERROR(
      kiln_ir_infer_node(node->importer->arena, &item->base, &item->base.checked_type));
  *out_expr = &item->base;
  return KILN_OK;
}

/* ---- shared compositions ---- */

kiln_status_t kiln_onnx_reshape(const kiln_onnx_node_t *node, kiln_expr_t *x, int ndim,
                                const int64_t *shape, kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_reshape, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_reshape, attrs, "newshape", ndim, shape));
  return kiln_onnx_emit1(node, &kiln_op_reshape, x, attrs, out_expr);
}

kiln_status_t kiln_onnx_expand_dims(const kiln_onnx_node_t *node, kiln_expr_t *x, int axis,
                                    kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_expand_dims, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_expand_dims, attrs, "axis", axis));
  return kiln_onnx_emit1(node, &kiln_op_expand_dims, x, attrs, out_expr);
}

kiln_status_t kiln_onnx_squeeze(const kiln_onnx_node_t *node, kiln_expr_t *x, int count,
                                const int64_t *axes, kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_squeeze, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, &kiln_op_squeeze, attrs, "axis", count, axes));
  return kiln_onnx_emit1(node, &kiln_op_squeeze, x, attrs, out_expr);
}

kiln_status_t kiln_onnx_cast(const kiln_onnx_node_t *node, kiln_expr_t *x, kiln_dtype_t dtype,
                             kiln_expr_t **out_expr) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_cast, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(&kiln_op_cast, attrs, "dtype", dtype));
  return kiln_onnx_emit1(node, &kiln_op_cast, x, attrs, out_expr);
}
