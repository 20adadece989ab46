/*
 * TensorProto -> kiln_tensor_t; see onnx_tensor.h.
 *
 * The dtype table is one X-macro (ONNX number, ONNX name, kiln dtype or
 * none). A tensor is made in three steps: read the header (dtype, dims, the
 * element count and byte size, all checked), find where the values are and
 * check that they are exactly as many as the dims say, then allocate and
 * copy. Typed fields are widened or narrowed element by element into the
 * kiln dtype; raw and external bytes are copied and, on a big-endian host,
 * byte-swapped per element.
 */
#include "frontend/onnx/onnx_tensor.h"

#include <stdio.h>
#include <string.h>

/* X(ONNX number, ONNX name, kiln dtype enum suffix or NONE) */
#define KILN_ONNX_DTYPE_LIST(X) \
  X(1, "FLOAT", FLOAT32)        \
  X(2, "UINT8", UINT8)          \
  X(3, "INT8", INT8)            \
  X(4, "UINT16", UINT16)        \
  X(5, "INT16", INT16)          \
  X(6, "INT32", INT32)          \
  X(7, "INT64", INT64)          \
  X(8, "STRING", NONE)          \
  X(9, "BOOL", BOOL)            \
  X(10, "FLOAT16", FLOAT16)     \
  X(11, "DOUBLE", FLOAT64)      \
  X(12, "UINT32", UINT32)       \
  X(13, "UINT64", UINT64)       \
  X(14, "COMPLEX64", NONE)      \
  X(15, "COMPLEX128", NONE)     \
  X(16, "BFLOAT16", BFLOAT16)

#define KILN_DTYPE_NONE KILN_DTYPE_COUNT_

const char *kiln_onnx_elem_type_name(int64_t elem_type, char *buffer) {
  switch (elem_type) {
#define KILN_ONNX_DTYPE_NAME_(number, name, dtype) \
  case number:                                     \
    return name;
    KILN_ONNX_DTYPE_LIST(KILN_ONNX_DTYPE_NAME_)
#undef KILN_ONNX_DTYPE_NAME_
  default:
    break;
  }
  if (elem_type == 0) {
    return "UNDEFINED";
  }
  snprintf(buffer, 32, "type %lld", (long long)elem_type);
  return buffer;
}

kiln_status_t kiln_onnx_elem_type_from_name(const char *name, int64_t *out_elem_type) {
#define KILN_ONNX_DTYPE_BY_NAME_(number, text, dtype) \
  if (strcmp(name, text) == 0) {                      \
    *out_elem_type = number;                          \
    return KILN_OK;                                   \
  }
  KILN_ONNX_DTYPE_LIST(KILN_ONNX_DTYPE_BY_NAME_)
#undef KILN_ONNX_DTYPE_BY_NAME_
  return KILN_STATUS(INVALID_ARGUMENT, "\"%s\" is no ONNX element type", name);
}

kiln_status_t kiln_onnx_dtype(int64_t elem_type, kiln_dtype_t *out_dtype) {
  kiln_dtype_t dtype = KILN_DTYPE_NONE;
  int known = 1;
  switch (elem_type) {
#define KILN_ONNX_DTYPE_MAP_(number, name, kiln) \
  case number:                                   \
    dtype = KILN_DTYPE_##kiln;                   \
    break;
    KILN_ONNX_DTYPE_LIST(KILN_ONNX_DTYPE_MAP_)
#undef KILN_ONNX_DTYPE_MAP_
  default:
    known = 0;
    break;
  }
  char buffer[32];
  if (!known) {
    return KILN_STATUS(INVALID_ARGUMENT, "element type %s is not an ONNX type",
                       kiln_onnx_elem_type_name(elem_type, buffer));
  }
  if (dtype == KILN_DTYPE_NONE) {
    return KILN_STATUS(UNIMPLEMENTED, "element type %s is not supported",
                       kiln_onnx_elem_type_name(elem_type, buffer));
  }
  *out_dtype = dtype;
  return KILN_OK;
}

/* ---- header ---- */

typedef struct kiln_onnx_tensor_header_t {
  kiln_dtype_t dtype;
  int ndim;
  int64_t dims[KILN_MAX_RANK];
  int64_t count;
  size_t bytes;
} kiln_onnx_tensor_header_t;

static kiln_status_t kiln_onnx_tensor_header(const Onnx__TensorProto *proto,
                                             kiln_onnx_tensor_header_t *out_header) {
  if (!proto->has_data_type) {
    return KILN_STATUS(INVALID_ARGUMENT, "has no data_type");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_dtype(proto->data_type, &out_header->dtype));
  if (proto->n_dims > KILN_MAX_RANK) {
    return KILN_STATUS(UNIMPLEMENTED, "has %zu dims; kiln takes at most %d", proto->n_dims,
                       KILN_MAX_RANK);
  }
  out_header->ndim = (int)proto->n_dims;
  for (size_t i = 0; i < proto->n_dims; ++i) {
    if (proto->dims[i] < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "has a negative dim %lld (dim %zu)",
                         (long long)proto->dims[i], i);
    }
    out_header->dims[i] = proto->dims[i];
  }
  KILN_RETURN_IF_ERROR(
      kiln_shape_element_count(out_header->ndim, out_header->dims, &out_header->count));
  return kiln_shape_byte_size(out_header->dtype, out_header->ndim, out_header->dims,
                              &out_header->bytes);
}

/* ---- typed fields ---- */

/* Which typed field holds values of `dtype`, its name and its length. */
typedef struct kiln_onnx_typed_field_t {
  const char *name;
  size_t count;
} kiln_onnx_typed_field_t;

static kiln_onnx_typed_field_t kiln_onnx_typed_field(const Onnx__TensorProto *proto,
                                                     kiln_dtype_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    return (kiln_onnx_typed_field_t){"float_data", proto->n_float_data};
  case KILN_DTYPE_FLOAT64:
    return (kiln_onnx_typed_field_t){"double_data", proto->n_double_data};
  case KILN_DTYPE_INT64:
    return (kiln_onnx_typed_field_t){"int64_data", proto->n_int64_data};
  case KILN_DTYPE_UINT32:
  case KILN_DTYPE_UINT64:
    return (kiln_onnx_typed_field_t){"uint64_data", proto->n_uint64_data};
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_BOOL:
  case KILN_DTYPE_COUNT_:
    break;
  }
  return (kiln_onnx_typed_field_t){"int32_data", proto->n_int32_data};
}

/* Element i of the typed field, stored into `data` as `dtype`. */
static void kiln_onnx_store_typed(const Onnx__TensorProto *proto, kiln_dtype_t dtype, void *data,
                                  size_t i) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT32:
    ((float *)data)[i] = proto->float_data[i];
    break;
  case KILN_DTYPE_FLOAT64:
    ((double *)data)[i] = proto->double_data[i];
    break;
  case KILN_DTYPE_INT64:
    ((int64_t *)data)[i] = proto->int64_data[i];
    break;
  case KILN_DTYPE_UINT32:
    ((uint32_t *)data)[i] = (uint32_t)proto->uint64_data[i];
    break;
  case KILN_DTYPE_UINT64:
    ((uint64_t *)data)[i] = proto->uint64_data[i];
    break;
  case KILN_DTYPE_INT32:
    ((int32_t *)data)[i] = proto->int32_data[i];
    break;
  case KILN_DTYPE_INT16:
    ((int16_t *)data)[i] = (int16_t)proto->int32_data[i];
    break;
  case KILN_DTYPE_INT8:
    ((int8_t *)data)[i] = (int8_t)proto->int32_data[i];
    break;
  case KILN_DTYPE_UINT8:
    ((uint8_t *)data)[i] = (uint8_t)proto->int32_data[i];
    break;
  case KILN_DTYPE_BOOL:
    ((uint8_t *)data)[i] = proto->int32_data[i] != 0;
    break;
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
    ((uint16_t *)data)[i] = (uint16_t)proto->int32_data[i];
    break;
  case KILN_DTYPE_COUNT_:
    break;
  }
}

/* ---- byte order ---- */

static int kiln_onnx_host_is_little_endian(void) {
  const uint16_t probe = 1;
  return *(const uint8_t *)&probe == 1;
}

/* Little-endian file bytes -> host order, in place. */
static void kiln_onnx_from_little_endian(void *data, size_t bytes, size_t element_size) {
  if (kiln_onnx_host_is_little_endian() || element_size == 1) {
    return;
  }
  uint8_t *p = data;
  for (size_t at = 0; at + element_size <= bytes; at += element_size) {
    for (size_t a = 0, b = element_size - 1; a < b; ++a, --b) {
      uint8_t t = p[at + a];
      p[at + a] = p[at + b];
      p[at + b] = t;
    }
  }
}

/* ---- the tensor ---- */

static kiln_status_t kiln_onnx_tensor_raw(const Onnx__TensorProto *proto,
                                          const kiln_onnx_tensor_header_t *header,
                                          kiln_allocator_t allocator, kiln_tensor_t **out_tensor) {
  if (proto->raw_data.len != header->bytes) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(header->ndim, header->dims, shape, sizeof(shape));
    return KILN_STATUS(DATA_LOSS, "has %zu bytes of raw_data; shape %s of %s needs %zu",
                       proto->raw_data.len, shape, kiln_dtype_name(header->dtype), header->bytes);
  }
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(allocator, header->dtype, header->ndim, header->dims,
                                               proto->raw_data.data, header->bytes, out_tensor));
  kiln_onnx_from_little_endian(kiln_tensor_data(*out_tensor), header->bytes,
                               kiln_dtype_size(header->dtype));
  return KILN_OK;
}

static kiln_status_t kiln_onnx_tensor_typed(const Onnx__TensorProto *proto,
                                            const kiln_onnx_tensor_header_t *header,
                                            kiln_allocator_t allocator,
                                            kiln_tensor_t **out_tensor) {
  kiln_onnx_typed_field_t field = kiln_onnx_typed_field(proto, header->dtype);
  if (field.count != (size_t)header->count) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(header->ndim, header->dims, shape, sizeof(shape));
    return KILN_STATUS(DATA_LOSS, "has %zu values in %s; shape %s needs %lld", field.count,
                       field.name, shape, (long long)header->count);
  }
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(allocator, header->dtype, header->ndim, header->dims, out_tensor));
  void *data = kiln_tensor_data(*out_tensor);
  for (size_t i = 0; i < field.count; ++i) {
    kiln_onnx_store_typed(proto, header->dtype, data, i);
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_tensor_external(const Onnx__TensorProto *proto,
                                               const kiln_onnx_tensor_header_t *header,
                                               const char *model_dir, kiln_allocator_t allocator,
                                               kiln_tensor_t **out_tensor) {
  kiln_tensor_t *tensor = NULL;
  /* The length is checked against the file before this allocation. */
  KILN_RETURN_IF_ERROR(kiln_onnx_external_read(proto, model_dir, NULL, header->bytes));
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(allocator, header->dtype, header->ndim, header->dims, &tensor));
  kiln_status_t status =
      kiln_onnx_external_read(proto, model_dir, kiln_tensor_data(tensor), header->bytes);
  if (status) {
    kiln_tensor_release(tensor);
    return status;
  }
  kiln_onnx_from_little_endian(kiln_tensor_data(tensor), header->bytes,
                               kiln_dtype_size(header->dtype));
  *out_tensor = tensor;
  return KILN_OK;
}

/* raw_data holds the values: no typed field may hold them too. */
static kiln_status_t kiln_onnx_tensor_check_one_source(const Onnx__TensorProto *proto) {
  const struct {
    size_t count;
    const char *field;
  } typed[] = {{proto->n_float_data, "float_data"},   {proto->n_int32_data, "int32_data"},
               {proto->n_string_data, "string_data"}, {proto->n_int64_data, "int64_data"},
               {proto->n_double_data, "double_data"}, {proto->n_uint64_data, "uint64_data"}};
  for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); ++i) {
    if (typed[i].count > 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "has both raw_data and typed data (%s)", typed[i].field);
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_tensor_make(const Onnx__TensorProto *proto, const char *model_dir,
                                           kiln_allocator_t allocator, kiln_tensor_t **out_tensor) {
  kiln_onnx_tensor_header_t header;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_header(proto, &header));
  if (proto->segment) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "is a segment of a larger tensor; segments are not supported");
  }
  if (proto->has_data_location &&
      proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    return kiln_onnx_tensor_external(proto, &header, model_dir, allocator, out_tensor);
  }
  if (proto->has_raw_data) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tensor_check_one_source(proto));
    return kiln_onnx_tensor_raw(proto, &header, allocator, out_tensor);
  }
  return kiln_onnx_tensor_typed(proto, &header, allocator, out_tensor);
}

kiln_status_t kiln_onnx_tensor_from_proto(const Onnx__TensorProto *proto, const char *model_dir,
                                          kiln_allocator_t allocator, kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_tensor_make(proto, model_dir, allocator, out_tensor),
                                "tensor \"%s\"", proto->name ? proto->name : "");
  return KILN_OK;
}
