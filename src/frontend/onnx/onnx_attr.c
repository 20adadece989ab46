/*
 * Attributes on both sides of a converter: reading a node's ONNX attributes
 * (checking each one's declared type) and filling an operator's attrs
 * struct field by field.
 *
 * ONNX attributes are looked up by name in the node's list; a reader given
 * an attribute of another type says which type it found. The setters find
 * the field in the operator's table (kiln_attr_field_t: name, kind, offset),
 * check its kind and write at its offset: the registry's description of the
 * attrs struct is the only thing a converter relies on, as the text parser
 * does. A field that does not exist is an INTERNAL error (a converter bug).
 */
#include <string.h>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_tensor.h"

/* ---- ONNX attributes ---- */

static const char *kiln_onnx_attr_type_name(Onnx__AttributeProto__AttributeType type) {
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
    return "FLOAT";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
    return "INT";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
    return "STRING";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
    return "TENSOR";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
    return "GRAPH";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    return "SPARSE_TENSOR";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    return "TYPE_PROTO";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    return "FLOATS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    return "INTS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
    return "STRINGS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    return "TENSORS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
    return "GRAPHS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    return "SPARSE_TENSORS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
    return "TYPE_PROTOS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED:
  case _ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE_IS_INT_SIZE:
    break;
  }
  return "UNDEFINED";
}

const Onnx__AttributeProto *kiln_onnx_attr(const kiln_onnx_node_t *node, const char *name) {
  for (size_t i = 0; i < node->proto->n_attribute; ++i) {
    const Onnx__AttributeProto *attr = node->proto->attribute[i];
    if (attr->name && strcmp(attr->name, name) == 0) {
      return attr;
    }
  }
  return NULL;
}

/* The attribute `name` when present, after checking that it has `type`. */
static kiln_status_t kiln_onnx_attr_typed(const kiln_onnx_node_t *node, const char *name,
                                          Onnx__AttributeProto__AttributeType type,
                                          const Onnx__AttributeProto **out_attr) {
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, name);
  *out_attr = NULL;
  if (!attr) {
    return KILN_OK;
  }
  if (attr->has_type && attr->type != type) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s is %s; expected %s", name,
                       kiln_onnx_attr_type_name(attr->type), kiln_onnx_attr_type_name(type));
  }
  *out_attr = attr;
  return KILN_OK;
}

kiln_status_t kiln_onnx_attr_int(const kiln_onnx_node_t *node, const char *name, int64_t fallback,
                                 int64_t *out_value) {
  const Onnx__AttributeProto *attr = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &attr));
  *out_value = attr ? attr->i : fallback;
  return KILN_OK;
}

kiln_status_t kiln_onnx_attr_float(const kiln_onnx_node_t *node, const char *name, double fallback,
                                   double *out_value) {
  const Onnx__AttributeProto *attr = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, &attr));
  *out_value = attr ? (double)attr->f : fallback;
  return KILN_OK;
}

kiln_status_t kiln_onnx_attr_string(const kiln_onnx_node_t *node, const char *name,
                                    const char *fallback, const char **out_value) {
  const Onnx__AttributeProto *attr = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, &attr));
  if (!attr) {
    *out_value = fallback;
    return KILN_OK;
  }
  char *text = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(node->importer->arena, attr->s.len + 1, 1, (void **)&text));
  if (attr->s.len) {
    memcpy(text, attr->s.data, attr->s.len);
  }
  text[attr->s.len] = '\0';
  if (strlen(text) != attr->s.len) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s has a NUL byte", name);
  }
  *out_value = text;
  return KILN_OK;
}

kiln_status_t kiln_onnx_attr_ints(const kiln_onnx_node_t *node, const char *name,
                                  kiln_ints_t *out_ints, bool *out_present) {
  const Onnx__AttributeProto *attr = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &attr));
  *out_ints = (kiln_ints_t){0, NULL};
  if (out_present) {
    *out_present = attr != NULL;
  }
  if (!attr || attr->n_ints == 0) {
    return KILN_OK;
  }
  if (attr->n_ints > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s has %zu values", name, attr->n_ints);
  }
  int64_t *values = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, attr->n_ints,
                                                 sizeof(int64_t), 8, (void **)&values));
  memcpy(values, attr->ints, attr->n_ints * sizeof(int64_t));
  *out_ints = (kiln_ints_t){(int32_t)attr->n_ints, values};
  return KILN_OK;
}

kiln_status_t kiln_onnx_attr_floats(const kiln_onnx_node_t *node, const char *name,
                                    kiln_floats_t *out_floats, bool *out_present) {
  const Onnx__AttributeProto *attr = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, &attr));
  *out_floats = (kiln_floats_t){0, NULL};
  if (out_present) {
    *out_present = attr != NULL;
  }
  if (!attr || attr->n_floats == 0) {
    return KILN_OK;
  }
  if (attr->n_floats > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s has %zu values", name, attr->n_floats);
  }
  double *values = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, attr->n_floats,
                                                 sizeof(double), 8, (void **)&values));
  for (size_t i = 0; i < attr->n_floats; ++i) {
    values[i] = attr->floats[i];
  }
  *out_floats = (kiln_floats_t){(int32_t)attr->n_floats, values};
  return KILN_OK;
}

kiln_status_t kiln_onnx_attr_tensor(const kiln_onnx_node_t *node, const char *name,
                                    kiln_tensor_t **out_tensor) {
  const Onnx__AttributeProto *attr = NULL;
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_attr_typed(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, &attr));
  if (!attr) {
    return KILN_OK;
  }
  if (!attr->t) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute %s has no tensor", name);
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_tensor_from_proto(attr->t, node->importer->model_dir,
                                                            node->importer->allocator, out_tensor),
                                "attribute %s", name);
  return KILN_OK;
}

/* ---- IR attrs ---- */

kiln_status_t kiln_onnx_attrs(const kiln_onnx_node_t *node, const kiln_op_t *op, void **out_attrs) {
  return kiln_op_attrs_create_default(op, node->importer->arena, out_attrs);
}

/* The slot of field `name` of kind `kind` in `attrs`. */
static kiln_status_t kiln_onnx_field(const kiln_op_t *op, void *attrs, const char *name,
                                     kiln_attr_kind_t kind, void **out_slot) {
  const kiln_attr_field_t *field = kiln_op_attr_field(op, name);
  if (!field || field->kind != kind || !attrs) {
    return KILN_STATUS(INTERNAL, "%s has no attribute %s of kind %d", op->name, name, (int)kind);
  }
  *out_slot = (char *)attrs + field->offset;
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_int(const kiln_op_t *op, void *attrs, const char *field,
                                int64_t value) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_INT, &slot));
  *(int64_t *)slot = value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_float(const kiln_op_t *op, void *attrs, const char *field,
                                  double value) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_FLOAT, &slot));
  *(double *)slot = value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_bool(const kiln_op_t *op, void *attrs, const char *field, bool value) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_BOOL, &slot));
  *(bool *)slot = value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_string(const kiln_op_t *op, void *attrs, const char *field,
                                   const char *value) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_STRING, &slot));
  *(const char **)slot = value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_dtype(const kiln_op_t *op, void *attrs, const char *field,
                                  kiln_dtype_t value) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_DTYPE, &slot));
  *(kiln_dtype_t *)slot = value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_ints(const kiln_onnx_node_t *node, const kiln_op_t *op, void *attrs,
                                 const char *field, int count, const int64_t *values) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_INTS, &slot));
  int64_t *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(
      node->importer->arena, (size_t)(count > 0 ? count : 1), sizeof(int64_t), 8, (void **)&copy));
  for (int i = 0; i < count; ++i) {
    copy[i] = values[i];
  }
  *(kiln_ints_t *)slot = (kiln_ints_t){count, copy};
  return KILN_OK;
}

kiln_status_t kiln_onnx_set_floats(const kiln_onnx_node_t *node, const kiln_op_t *op, void *attrs,
                                   const char *field, int count, const double *values) {
  void *slot = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_field(op, attrs, field, KILN_ATTR_KIND_FLOATS, &slot));
  double *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(
      node->importer->arena, (size_t)(count > 0 ? count : 1), sizeof(double), 8, (void **)&copy));
  for (int i = 0; i < count; ++i) {
    copy[i] = values[i];
  }
  *(kiln_floats_t *)slot = (kiln_floats_t){count, copy};
  return KILN_OK;
}
