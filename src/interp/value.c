/*
 * Values of the reference interpreter; see value.h.
 *
 * Everything here recurses on tuple nesting only, which types keep shallow
 * (a tuple of tensors, rarely a tuple of tuples), never on graph depth.
 */
#include "interp/value.h"

#include <string.h>

kiln_interp_value_t kiln_interp_value_of_tensor(kiln_tensor_t *tensor) {
  kiln_interp_value_t value = {.kind = KILN_INTERP_VALUE_TENSOR, .tensor = tensor};
  return value;
}

void kiln_interp_value_release(kiln_allocator_t allocator, kiln_interp_value_t *value) {
  switch (value->kind) {
  case KILN_INTERP_VALUE_TENSOR:
    kiln_tensor_release(value->tensor);
    break;
  case KILN_INTERP_VALUE_TUPLE:
  case KILN_INTERP_VALUE_SEQUENCE:
  case KILN_INTERP_VALUE_OPTIONAL:
    for (int i = 0; i < value->num_fields; i++) {
      kiln_interp_value_release(allocator, &value->fields[i]);
    }
    kiln_allocator_free(allocator, value->fields);
    break;
  case KILN_INTERP_VALUE_NONE:
    break;
  }
  memset(value, 0, sizeof(*value));
}

kiln_status_t kiln_interp_value_tuple_create(kiln_allocator_t allocator, int count,
                                             kiln_interp_value_t *out_value) {
  return kiln_interp_value_list_create(allocator, KILN_INTERP_VALUE_TUPLE, count, out_value);
}

kiln_status_t kiln_interp_value_list_create(kiln_allocator_t allocator,
                                            kiln_interp_value_kind_t kind, int count,
                                            kiln_interp_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  kiln_interp_value_t *fields = NULL;
  if (count > 0) {
    KILN_RETURN_IF_ERROR(
        kiln_allocator_malloc_array(allocator, (size_t)count, sizeof(*fields), (void **)&fields));
    memset(fields, 0, (size_t)count * sizeof(*fields));
  }
  out_value->kind = kind;
  out_value->num_fields = count;
  out_value->fields = fields;
  return KILN_OK;
}

kiln_status_t kiln_interp_value_copy(kiln_allocator_t allocator, const kiln_interp_value_t *value,
                                     kiln_interp_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  switch (value->kind) {
  case KILN_INTERP_VALUE_TENSOR:
    kiln_tensor_retain(value->tensor);
    *out_value = kiln_interp_value_of_tensor(value->tensor);
    return KILN_OK;
  case KILN_INTERP_VALUE_TUPLE:
  case KILN_INTERP_VALUE_SEQUENCE:
  case KILN_INTERP_VALUE_OPTIONAL: {
    KILN_RETURN_IF_ERROR(
        kiln_interp_value_list_create(allocator, value->kind, value->num_fields, out_value));
    for (int i = 0; i < value->num_fields; i++) {
      kiln_status_t status =
          kiln_interp_value_copy(allocator, &value->fields[i], &out_value->fields[i]);
      if (status != NULL) {
        kiln_interp_value_release(allocator, out_value);
        return status;
      }
    }
    return KILN_OK;
  }
  case KILN_INTERP_VALUE_NONE:
    break;
  }
  return KILN_STATUS(INTERNAL, "the interpreter met a node without a value");
}

size_t kiln_interp_value_leaf_count(const kiln_interp_value_t *value) {
  size_t count = 0;
  switch (value->kind) {
  case KILN_INTERP_VALUE_TENSOR:
    count = 1;
    break;
  case KILN_INTERP_VALUE_TUPLE:
    for (int i = 0; i < value->num_fields; i++) {
      count += kiln_interp_value_leaf_count(&value->fields[i]);
    }
    break;
  case KILN_INTERP_VALUE_SEQUENCE:
  case KILN_INTERP_VALUE_OPTIONAL:
  case KILN_INTERP_VALUE_NONE:
    break;
  }
  return count;
}

void kiln_interp_value_flatten(const kiln_interp_value_t *value, kiln_tensor_t **tensors,
                               size_t *position) {
  switch (value->kind) {
  case KILN_INTERP_VALUE_TENSOR:
    kiln_tensor_retain(value->tensor);
    tensors[(*position)++] = value->tensor;
    break;
  case KILN_INTERP_VALUE_TUPLE:
    for (int i = 0; i < value->num_fields; i++) {
      kiln_interp_value_flatten(&value->fields[i], tensors, position);
    }
    break;
  case KILN_INTERP_VALUE_SEQUENCE:
  case KILN_INTERP_VALUE_OPTIONAL:
  case KILN_INTERP_VALUE_NONE:
    break;
  }
}

size_t kiln_interp_type_leaf_count(const kiln_type_t *type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (tuple == NULL)
    return type != NULL ? 1 : 0;
  size_t count = 0;
  for (int i = 0; i < tuple->count; i++) {
    count += kiln_interp_type_leaf_count(tuple->fields[i]);
  }
  return count;
}

kiln_status_t kiln_interp_type_create_tensors(kiln_allocator_t allocator, const kiln_type_t *type,
                                              kiln_tensor_t **tensors, size_t *position) {
  const kiln_tensor_type_t *tensor_type = kiln_type_as_tensor(type);
  if (tensor_type != NULL) {
    KILN_RETURN_IF_ERROR(kiln_tensor_create(allocator, tensor_type->dtype, tensor_type->ndim,
                                            tensor_type->shape, &tensors[*position]));
    (*position)++;
    return KILN_OK;
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (tuple == NULL) {
    return KILN_STATUS(INTERNAL, "the interpreter met a node without a type");
  }
  for (int i = 0; i < tuple->count; i++) {
    KILN_RETURN_IF_ERROR(
        kiln_interp_type_create_tensors(allocator, tuple->fields[i], tensors, position));
  }
  return KILN_OK;
}

kiln_status_t kiln_interp_value_from_type(kiln_allocator_t allocator, const kiln_type_t *type,
                                          kiln_tensor_t **tensors, size_t *position,
                                          kiln_interp_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (tuple == NULL) {
    *out_value = kiln_interp_value_of_tensor(tensors[*position]);
    tensors[(*position)++] = NULL;
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_interp_value_tuple_create(allocator, tuple->count, out_value));
  for (int i = 0; i < tuple->count; i++) {
    kiln_status_t status = kiln_interp_value_from_type(allocator, tuple->fields[i], tensors,
                                                       position, &out_value->fields[i]);
    if (status != NULL) {
      kiln_interp_value_release(allocator, out_value);
      return status;
    }
  }
  return KILN_OK;
}
