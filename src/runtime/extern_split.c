/*
 * dyn.split as the runtime's extern kernel (extern_kernel.h): ONNX Split
 * whose part sizes arrive at run time, the VM's `call_extern "dyn.split"`.
 *
 * Inputs: the data and the sizes (int32 or int64, rank 0 or 1, one per
 * part); attribute: the axis (negative counts from the rank). Output o is
 * the data with the axis' extent sizes[o], its slice starting at the sum
 * of the sizes before it. The call's output count is the part count (1 to
 * KILN_EXTERN_MAX_OUTPUTS, as the call passes): the sizes must have that
 * many values, each at least 0, adding up to the axis' extent, as the
 * interpreter's dyn.split checks (op/dyn.c); a violation is
 * INVALID_ARGUMENT naming the value.
 *
 * A part's elements are contiguous runs of (its size x the inner extent)
 * elements, one per outer index, so the fill is one memcpy per run: the
 * bytes move whatever the dtype.
 */
#include <string.h>

#include "runtime/extern_kernel.h"

/* The axis, its extent, and the elements before and after it. */
typedef struct split_layout_t {
  int axis;
  int64_t dim, outer, inner;
} split_layout_t;

static kiln_status_t split_layout(const kiln_extern_args_t *args, split_layout_t *out) {
  const kiln_tensor_t *data = args->inputs[0];
  int rank = kiln_tensor_ndim(data);
  int64_t axis = args->attrs[0];
  if (axis < -rank || axis >= rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.split: axis %lld is out of range for rank %d",
                       (long long)axis, rank);
  }
  out->axis = (int)(axis < 0 ? axis + rank : axis);
  out->outer = out->inner = 1;
  const int64_t *shape = kiln_tensor_shape(data);
  for (int d = 0; d < rank; ++d) {
    out->outer *= d < out->axis ? shape[d] : 1;
    out->inner *= d > out->axis ? shape[d] : 1;
  }
  out->dim = shape[out->axis];
  return KILN_OK;
}

/* The sizes, checked against the output count and the axis' extent. */
static kiln_status_t split_sizes(const kiln_extern_args_t *args, const split_layout_t *layout,
                                 int64_t *out_sizes) {
  const kiln_tensor_t *sizes = args->inputs[1];
  kiln_dtype_t dtype = kiln_tensor_dtype(sizes);
  int64_t count = kiln_tensor_element_count(sizes), total = 0;
  if ((dtype != KILN_DTYPE_INT32 && dtype != KILN_DTYPE_INT64) || kiln_tensor_ndim(sizes) > 1 ||
      count != args->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "dyn.split: the sizes are %s of rank %d with %lld values; expected int32 "
                       "or int64 of rank 0 or 1 with one per output (%d)",
                       kiln_dtype_name(dtype), kiln_tensor_ndim(sizes), (long long)count,
                       args->num_outputs);
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t size = dtype == KILN_DTYPE_INT64 ? ((const int64_t *)kiln_tensor_data(sizes))[i]
                                             : ((const int32_t *)kiln_tensor_data(sizes))[i];
    if (size < 0 || size > layout->dim) {
      return KILN_STATUS(INVALID_ARGUMENT, "dyn.split: split[%lld] is %lld; dim %d is %lld",
                         (long long)i, (long long)size, layout->axis, (long long)layout->dim);
    }
    total += size;
    out_sizes[i] = size;
  }
  if (total != layout->dim) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "dyn.split: the split sizes add up to %lld but dim %d is %lld",
                       (long long)total, layout->axis, (long long)layout->dim);
  }
  return KILN_OK;
}

kiln_status_t kiln_extern_split_shapes(const kiln_extern_args_t *args,
                                       kiln_extern_shape_t *out_shapes) {
  split_layout_t layout;
  int64_t sizes[KILN_EXTERN_MAX_OUTPUTS];
  KILN_RETURN_IF_ERROR(split_layout(args, &layout));
  KILN_RETURN_IF_ERROR(split_sizes(args, &layout, sizes));
  const kiln_tensor_t *data = args->inputs[0];
  for (int o = 0; o < args->num_outputs; ++o) {
    kiln_extern_shape_t *s = &out_shapes[o];
    s->dtype = kiln_tensor_dtype(data);
    s->ndim = kiln_tensor_ndim(data);
    memcpy(s->shape, kiln_tensor_shape(data), sizeof(int64_t) * (size_t)s->ndim);
    s->shape[layout.axis] = sizes[o];
  }
  return KILN_OK;
}

kiln_status_t kiln_extern_split_fill(const kiln_extern_args_t *args,
                                     kiln_tensor_t *const *outputs) {
  kiln_extern_shape_t shapes[KILN_EXTERN_MAX_OUTPUTS];
  split_layout_t layout;
  KILN_RETURN_IF_ERROR(kiln_extern_split_shapes(args, shapes));
  KILN_RETURN_IF_ERROR(split_layout(args, &layout));
  for (int o = 0; o < args->num_outputs; ++o) {
    KILN_RETURN_IF_ERROR(kiln_extern_output_check("dyn.split", outputs[o], &shapes[o]));
  }
  const kiln_tensor_t *data = args->inputs[0];
  size_t element = kiln_dtype_size(kiln_tensor_dtype(data));
  const char *source = kiln_tensor_data(data);
  int64_t offset = 0;
  for (int o = 0; o < args->num_outputs; ++o) {
    int64_t size = shapes[o].shape[layout.axis];
    size_t run = (size_t)(size * layout.inner) * element;
    char *target = kiln_tensor_data(outputs[o]);
    for (int64_t i = 0; i < layout.outer && run > 0; ++i) {
      memcpy(target + (size_t)i * run,
             source + ((size_t)(i * layout.dim + offset) * (size_t)layout.inner) * element, run);
    }
    offset += size;
  }
  return KILN_OK;
}
