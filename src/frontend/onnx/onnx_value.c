/*
 * Sequence and optional values of the backend tests (onnx_case.h).
 *
 * ONNX stores a value that is not a tensor as a SequenceProto or an
 * OptionalProto (onnx_data.proto); which one a file holds is not in the
 * file, so the caller says, from the model's type for it. A sequence's
 * elements are its tensor_values (a sequence of sequences is refused); an
 * optional holds a tensor, a sequence, or nothing (elem_type 0). Tensors are
 * decoded by the importer's TensorProto reader, so every dtype it reads
 * works here too.
 */
#include <string.h>

#include "base/file.h"
#include "frontend/onnx/onnx_case.h"
#include "frontend/onnx/onnx_proto.h"
#include "frontend/onnx/onnx_tensor.h"
#include "onnx_data.pb-c.h"

#define KILN_ONNX_ELEM_TENSOR   1
#define KILN_ONNX_ELEM_SEQUENCE 3

void kiln_onnx_value_release(kiln_allocator_t allocator, kiln_onnx_value_t *value) {
  kiln_tensor_release(value->tensor);
  for (int i = 0; value->elements && i < value->count; ++i) {
    kiln_onnx_value_release(allocator, &value->elements[i]);
  }
  if (value->elements)
    kiln_allocator_free(allocator, value->elements);
  memset(value, 0, sizeof(*value));
}

static kiln_status_t kiln_onnx_value_list(kiln_allocator_t allocator, kiln_onnx_value_kind_t kind,
                                          size_t count, kiln_onnx_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  out_value->kind = kind;
  if (count > INT32_MAX) {
    return KILN_STATUS(OUT_OF_RANGE, "%zu elements", count);
  }
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(
      allocator, count ? count : 1, sizeof(kiln_onnx_value_t), (void **)&out_value->elements));
  memset(out_value->elements, 0, (count ? count : 1) * sizeof(kiln_onnx_value_t));
  out_value->count = (int)count;
  return KILN_OK;
}

static kiln_status_t kiln_onnx_value_tensor(const Onnx__TensorProto *proto, const char *dir,
                                            kiln_allocator_t allocator,
                                            kiln_onnx_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  out_value->kind = KILN_ONNX_VALUE_TENSOR;
  return kiln_onnx_tensor_from_proto(proto, dir, allocator, &out_value->tensor);
}

static kiln_status_t kiln_onnx_value_sequence(const Onnx__SequenceProto *proto, const char *dir,
                                              kiln_allocator_t allocator,
                                              kiln_onnx_value_t *out_value) {
  if (proto->n_sequence_values > 0 || proto->n_optional_values > 0 ||
      (proto->has_elem_type && proto->elem_type != KILN_ONNX_ELEM_TENSOR &&
       proto->n_tensor_values > 0)) {
    return KILN_STATUS(UNIMPLEMENTED, "only sequences of tensors are supported");
  }
  KILN_RETURN_IF_ERROR(
      kiln_onnx_value_list(allocator, KILN_ONNX_VALUE_SEQUENCE, proto->n_tensor_values, out_value));
  for (size_t i = 0; i < proto->n_tensor_values; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_onnx_value_tensor(proto->tensor_values[i], dir, allocator, &out_value->elements[i]),
        "element %zu", i);
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_value_optional(const Onnx__OptionalProto *proto, const char *dir,
                                              kiln_allocator_t allocator,
                                              kiln_onnx_value_t *out_value) {
  int32_t elem = proto->has_elem_type ? proto->elem_type : 0;
  bool tensor = elem == KILN_ONNX_ELEM_TENSOR && proto->tensor_value != NULL;
  bool sequence = elem == KILN_ONNX_ELEM_SEQUENCE && proto->sequence_value != NULL;
  if (elem != 0 && !tensor && !sequence) {
    return KILN_STATUS(UNIMPLEMENTED, "an optional of element type %d", (int)elem);
  }
  KILN_RETURN_IF_ERROR(
      kiln_onnx_value_list(allocator, KILN_ONNX_VALUE_OPTIONAL, elem != 0 ? 1 : 0, out_value));
  if (tensor)
    return kiln_onnx_value_tensor(proto->tensor_value, dir, allocator, &out_value->elements[0]);
  if (sequence)
    return kiln_onnx_value_sequence(proto->sequence_value, dir, allocator, &out_value->elements[0]);
  return KILN_OK;
}

static kiln_status_t kiln_onnx_value_parse(const void *bytes, size_t size, const char *dir,
                                           kiln_onnx_value_kind_t kind, kiln_allocator_t allocator,
                                           kiln_onnx_value_t *out_value) {
  static const ProtobufCMessageDescriptor *const descriptors[] = {
      &onnx__tensor_proto__descriptor, &onnx__sequence_proto__descriptor,
      &onnx__optional_proto__descriptor};
  static const char *const names[] = {"an ONNX TensorProto", "an ONNX SequenceProto",
                                      "an ONNX OptionalProto"};
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_onnx_proto_unpack(&adapter, descriptors[kind], names[kind], bytes, size, &message));
  kiln_status_t status = KILN_OK;
  if (kind == KILN_ONNX_VALUE_TENSOR) {
    status = kiln_onnx_value_tensor((const Onnx__TensorProto *)message, dir, allocator, out_value);
  } else if (kind == KILN_ONNX_VALUE_SEQUENCE) {
    status =
        kiln_onnx_value_sequence((const Onnx__SequenceProto *)message, dir, allocator, out_value);
  } else {
    status =
        kiln_onnx_value_optional((const Onnx__OptionalProto *)message, dir, allocator, out_value);
  }
  protobuf_c_message_free_unpacked(message, &adapter.base);
  return status;
}

kiln_status_t kiln_onnx_value_read_file(const char *path, kiln_onnx_value_kind_t kind,
                                        kiln_allocator_t allocator, kiln_onnx_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  void *bytes = NULL;
  size_t size = 0;
  char *dir = NULL;
  KILN_RETURN_IF_ERROR(kiln_file_read_all(allocator, path, &bytes, &size));
  kiln_status_t status = kiln_path_dirname(allocator, path, &dir);
  if (status == NULL)
    status = kiln_onnx_value_parse(bytes, size, dir, kind, allocator, out_value);
  kiln_allocator_free(allocator, dir);
  kiln_allocator_free(allocator, bytes);
  if (status != NULL)
    kiln_onnx_value_release(allocator, out_value);
  return kiln_status_annotate(status, "%s", path);
}

kiln_status_t kiln_onnx_value_compare(const kiln_onnx_value_t *expected,
                                      const kiln_onnx_value_t *actual, double rtol, double atol) {
  static const char *const kinds[] = {"a tensor", "a sequence", "an optional"};
  if (expected->kind != actual->kind) {
    return KILN_STATUS(INVALID_ARGUMENT, "the result is %s; expected %s", kinds[actual->kind],
                       kinds[expected->kind]);
  }
  if (expected->kind == KILN_ONNX_VALUE_TENSOR)
    return kiln_onnx_compare(expected->tensor, actual->tensor, rtol, atol);
  if (expected->count != actual->count) {
    return KILN_STATUS(INVALID_ARGUMENT, "the result has %d elements; expected %d", actual->count,
                       expected->count);
  }
  for (int i = 0; i < expected->count; ++i) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_onnx_value_compare(&expected->elements[i], &actual->elements[i], rtol, atol),
        "element %d", i);
  }
  return KILN_OK;
}
