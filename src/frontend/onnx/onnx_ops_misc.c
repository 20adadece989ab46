/*
 * Converters that make or pass values: Identity, Dropout (inference),
 * Cast, Constant, ConstantOfShape and Range.
 *
 * Identity and Dropout hand their input on unchanged (Dropout's optional
 * mask is an all-true Constant, as ONNX defines it outside training).
 * Cast is the registry's cast, or nothing when the dtype does not change.
 * Constant, ConstantOfShape and Range make Constants at import: their
 * inputs must be constants, which is what shape-computing exports give.
 */
#include <math.h>
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_tensor.h"

kiln_status_t kiln_onnx_convert_identity(kiln_onnx_node_t *node) {
  return kiln_onnx_input(node, 0, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_dropout(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (node->importer->opset >= 12 && kiln_onnx_input_optional(node, 2)) {
    double training = 0.0;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "training_mode", &training));
    if (training != 0.0) {
      return KILN_STATUS(UNIMPLEMENTED, "training_mode=true is not supported (inference only)");
    }
  }
  node->outputs[0] = x;
  if (node->num_outputs > 1) {
    const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
    KILN_RETURN_IF_ERROR(
        kiln_onnx_filled(node, KILN_DTYPE_BOOL, xt->ndim, xt->shape, 1.0, &node->outputs[1]));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_cast(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t to = 0;
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (!kiln_onnx_attr(node, "to")) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute to is required");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "to", 0, &to));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(to, &dtype), "attribute to");
  if (dtype == kiln_onnx_type_of(x)->dtype) {
    node->outputs[0] = x;
    return KILN_OK;
  }
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_cast, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(&kiln_op_cast, attrs, "dtype", dtype));
  kiln_status_t status = kiln_op_attrs_validate(&kiln_op_cast, attrs);
  if (status) {
    kiln_status_free(status);
    return KILN_STATUS(UNIMPLEMENTED, "cast to %s is not supported", kiln_dtype_name(dtype));
  }
  return kiln_onnx_emit1(node, &kiln_op_cast, x, attrs, &node->outputs[0]);
}

/* ---- Constant ---- */

/* A Constant from a FLOAT(S) or INT(S) attribute, when `name` is there. */
static kiln_status_t kiln_onnx_constant_list(kiln_onnx_node_t *node, const char *name,
                                             bool *out_found) {
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, name);
  *out_found = attr != NULL;
  if (!attr) {
    return KILN_OK;
  }
  bool is_float = strncmp(name, "value_float", 11) == 0;
  bool is_list = name[strlen(name) - 1] == 's';
  if (!is_list) {
    double value = 0.0;
    int64_t integer = 0;
    if (is_float) {
      KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, name, 0.0, &value));
    } else {
      KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, name, 0, &integer));
      value = (double)integer;
    }
    return kiln_onnx_scalar(node, is_float ? KILN_DTYPE_FLOAT32 : KILN_DTYPE_INT64, value,
                            &node->outputs[0]);
  }
  if (!is_float) {
    kiln_ints_t ints;
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, name, &ints, NULL));
    return kiln_onnx_int64s(node, ints.count, ints.values, &node->outputs[0]);
  }
  kiln_floats_t floats;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_floats(node, name, &floats, NULL));
  const int64_t shape[1] = {floats.count};
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(node->importer->allocator, KILN_DTYPE_FLOAT32, 1, shape, &tensor));
  for (int32_t i = 0; i < floats.count; ++i) {
    ((float *)kiln_tensor_data(tensor))[i] = (float)floats.values[i];
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  kiln_tensor_release(tensor);
  return status;
}

kiln_status_t kiln_onnx_convert_constant(kiln_onnx_node_t *node) {
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_tensor(node, "value", &tensor));
  if (tensor) {
    kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
    kiln_tensor_release(tensor);
    return status;
  }
  static const char *const lists[] = {"value_float", "value_floats", "value_int", "value_ints"};
  for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); ++i) {
    bool found = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_constant_list(node, lists[i], &found));
    if (found) {
      return KILN_OK;
    }
  }
  static const char *const unsupported[] = {"sparse_value", "value_string", "value_strings"};
  for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); ++i) {
    if (kiln_onnx_attr(node, unsupported[i])) {
      return KILN_STATUS(UNIMPLEMENTED, "attribute %s is not supported", unsupported[i]);
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "has no value attribute");
}

/* ---- ConstantOfShape and Range ---- */

kiln_status_t kiln_onnx_convert_constant_of_shape(kiln_onnx_node_t *node) {
  kiln_ints_t shape;
  kiln_tensor_t *value = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 0, "shape", &shape));
  if (shape.count > KILN_MAX_RANK) {
    return KILN_STATUS(UNIMPLEMENTED, "shape has %d dims (kiln's limit is %d)", (int)shape.count,
                       KILN_MAX_RANK);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_tensor(node, "value", &value));
  if (!value) {
    return kiln_onnx_filled(node, KILN_DTYPE_FLOAT32, shape.count, shape.values, 0.0,
                            &node->outputs[0]);
  }
  kiln_status_t status = KILN_OK;
  kiln_tensor_t *tensor = NULL;
  if (kiln_tensor_element_count(value) != 1) {
    status = KILN_STATUS(INVALID_ARGUMENT, "attribute value has %lld elements; expected one",
                         (long long)kiln_tensor_element_count(value));
  } else {
    status = kiln_tensor_create(node->importer->allocator, kiln_tensor_dtype(value), shape.count,
                                shape.values, &tensor);
  }
  if (!status) {
    size_t size = kiln_dtype_size(kiln_tensor_dtype(value));
    int64_t count = kiln_tensor_element_count(tensor);
    for (int64_t i = 0; i < count; ++i) {
      memcpy((char *)kiln_tensor_data(tensor) + (size_t)i * size, kiln_tensor_data(value), size);
    }
    status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  }
  kiln_tensor_release(tensor);
  kiln_tensor_release(value);
  return status;
}

kiln_status_t kiln_onnx_convert_range(kiln_onnx_node_t *node) {
  double start = 0.0, limit = 0.0, delta = 0.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 0, "start", &start));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "limit", &limit));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "delta", &delta));
  if (delta == 0.0 || isnan(delta) || isnan(start) || isnan(limit)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "delta must be a non-zero number (start %g, limit %g, "
                       "delta %g)",
                       start, limit, delta);
  }
  double steps = ceil((limit - start) / delta);
  if (!(steps < (double)INT32_MAX)) {
    return KILN_STATUS(UNIMPLEMENTED, "the range has %g elements", steps);
  }
  const int64_t shape[1] = {steps > 0 ? (int64_t)steps : 0};
  kiln_tensor_t *tensor = NULL;
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &type));
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(node->importer->allocator, type->dtype, 1, shape, &tensor));
  for (int64_t i = 0; i < shape[0]; ++i) {
    kiln_onnx_store_double(tensor, i, start + (double)i * delta);
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  kiln_tensor_release(tensor);
  return status;
}
