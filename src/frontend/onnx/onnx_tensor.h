/*
 * ONNX TensorProto and element types -> kiln tensors and dtypes.
 *
 * A TensorProto carries its values in one of several places: raw_data
 * (fixed-width little-endian bytes), a typed repeated field (float_data;
 * int32_data, which also holds int8, int16, uint8, uint16, bool, float16 and
 * bfloat16 values, one per entry; int64_data; double_data; uint64_data, which
 * also holds uint32), or a file beside the model (data_location EXTERNAL,
 * with location, offset and length entries). Every form is checked against
 * the element count of the dims before a byte is allocated, so a tensor that
 * claims more than it carries is DATA_LOSS, not a huge allocation. External
 * files are confined to the model's folder: absolute paths, any ".."
 * component, and links that resolve outside the folder are refused.
 */
#ifndef KILN_FRONTEND_ONNX_ONNX_TENSOR_H_
#define KILN_FRONTEND_ONNX_ONNX_TENSOR_H_

#include <stdint.h>

#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "onnx.pb-c.h"

/* The kiln dtype of ONNX element type `elem_type`; UNIMPLEMENTED naming the
 * ONNX type for string, complex and the types kiln lacks, INVALID_ARGUMENT
 * for a number that is no ONNX type. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_dtype(int64_t elem_type, kiln_dtype_t *out_dtype);

/* "FLOAT", "STRING", ... of an ONNX element type ("type 99" when unknown;
 * written into `buffer` of 32 bytes when it has to be). */
const char *kiln_onnx_elem_type_name(int64_t elem_type, char *buffer);
/* The ONNX element type named `name` ("FLOAT", ...); INVALID_ARGUMENT
 * naming it when there is none. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_elem_type_from_name(const char *name,
                                                                 int64_t *out_elem_type);

/* A new tensor holding `proto`'s values. `model_dir` is the folder external
 * data must be in (NULL refuses external data). Errors name the tensor. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_tensor_from_proto(const Onnx__TensorProto *proto,
                                                               const char *model_dir,
                                                               kiln_allocator_t allocator,
                                                               kiln_tensor_t **out_tensor);

/* Reads the external data of `proto` (location/offset/length) into `data`,
 * which has exactly `size` bytes: the length must be `size`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_onnx_external_read(const Onnx__TensorProto *proto,
                                                           const char *model_dir, void *data,
                                                           size_t size);

#endif /* KILN_FRONTEND_ONNX_ONNX_TENSOR_H_ */
