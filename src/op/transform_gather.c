/*
 * Gather and scatter by index tensors: gather (ONNX GatherElements),
 * gather_nd, scatter_elements and scatter_nd.
 *
 * gather and scatter_elements pair every element of an index tensor of the
 * data's rank with one element of the data: its position, with the coordinate
 * on `axis` replaced by the index there. gather_nd and scatter_nd read the
 * last dim of their index tensor as a tuple of coordinates of the data's
 * leading dims (ONNX's layout, not Relay's index-first one) and move the
 * whole slice of the remaining dims; gather_nd's batch_dims leading dims are
 * shared by data and indices. Indices are int32 or int64; a negative one
 * counts from the end, and one still out of range is OUT_OF_RANGE from the
 * kernel naming the operator, the index and the axis (never a wild read).
 * Every relation is a shape rule (transform_common.h) whose errors name the
 * shapes.
 *
 * gather and gather_nd, and the scatters without reduction, move bytes, so
 * they take every dtype. The scatters start from a copy of the data and
 * apply the updates in the row-major order of the indices, so with repeated
 * indices the last update wins ("none") or every one counts ("add", "mul":
 * floats in double rounded at each store, integers wrapping), as ONNX's
 * reference does.
 */
#include <string.h>

#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/impl.h"
#include "op/transform_common.h"

/* ---- shared ---- */

/* Index, updates and data agree in rank; index dims other than `axis` fit the data's. */
static kiln_status_t elements_check(const kiln_op_t *op, const char *what,
                                    const kiln_tensor_type_t *data,
                                    const kiln_tensor_type_t *indices, int axis) {
  char a[KILN_SHAPE_TEXT_CAPACITY];
  char b[KILN_SHAPE_TEXT_CAPACITY];
  if (indices->ndim != data->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s must have the rank of data %s", op->name, what,
                       kiln_op_shape_text(indices, a), kiln_op_shape_text(data, b));
  }
  for (int d = 0; d < data->ndim; ++d) {
    if (d != axis && indices->shape[d] > data->shape[d]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s is larger than data %s at dim %d", op->name,
                         what, kiln_op_shape_text(indices, a), kiln_op_shape_text(data, b), d);
    }
  }
  return KILN_OK;
}

/* What gather and scatter_elements do with index element j, which names data
 * element `offset`. */
typedef void (*elements_visit_fn)(void *context, int64_t j, int64_t offset);

/* Walks the indices in row-major order and visits each with the offset of
 * the data element it names: its position, with the coordinate on `axis`
 * replaced by the index (resolved, or OUT_OF_RANGE). */
static kiln_status_t elements_walk(const kiln_op_t *op, const kiln_tensor_type_t *data,
                                   int64_t axis_attr, const kiln_tensor_t *indices,
                                   elements_visit_fn visit, void *context) {
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", axis_attr, data, 0, &axis));
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data->ndim, data->shape, strides);
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, data->ndim, kiln_tensor_shape(indices));
  for (int64_t j = 0; j < count; ++j, kiln_walk_next(&walk)) {
    int64_t at = 0;
    KILN_RETURN_IF_ERROR(kiln_transform_resolve_index(op, kiln_transform_load_index(indices, j),
                                                      axis, data->shape[axis], &at));
    int64_t offset = 0;
    for (int d = 0; d < data->ndim; ++d) {
      offset += (d == axis ? at : walk.index[d]) * strides[d];
    }
    visit(context, j, offset);
  }
  return KILN_OK;
}

/* The data offset of the coordinate tuple that starts at element `first` of
 * the indices: `count` coordinates of dims [begin, begin + count). */
static kiln_status_t tuple_offset(const kiln_op_t *op, const kiln_tensor_t *indices, int64_t first,
                                  int count, int begin, const kiln_tensor_type_t *data,
                                  const int64_t *strides, int64_t *out_offset) {
  int64_t offset = 0;
  for (int k = 0; k < count; ++k) {
    int64_t at = 0;
    KILN_RETURN_IF_ERROR(kiln_transform_resolve_index(
        op, kiln_transform_load_index(indices, first + k), begin + k, data->shape[begin + k], &at));
    offset += at * strides[begin + k];
  }
  *out_offset = offset;
  return KILN_OK;
}

typedef enum scatter_reduction_e {
  SCATTER_NONE,
  SCATTER_ADD,
  SCATTER_MUL,
} scatter_reduction_t;

static const char *const kiln_scatter_reductions[] = {"none", "add", "mul"};

static kiln_status_t scatter_reduction(const kiln_op_t *op, const void *attrs,
                                       scatter_reduction_t *out_reduction) {
  const char *reduction = ((const kiln_scatter_attrs_t *)attrs)->reduction;
  for (int i = 0; i < 3; ++i) {
    if (reduction && strcmp(reduction, kiln_scatter_reductions[i]) == 0) {
      *out_reduction = (scatter_reduction_t)i;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%s: reduction \"%s\" is not one of none, add, mul",
                     op->name, reduction ? reduction : "");
}

static kiln_status_t scatter_validate(const kiln_op_t *op, const void *attrs) {
  scatter_reduction_t reduction = SCATTER_NONE;
  return scatter_reduction(op, attrs, &reduction);
}

/* updates has the data's dtype. */
static kiln_status_t scatter_check_dtype(const kiln_op_t *op, const kiln_tensor_type_t *data,
                                         const kiln_tensor_type_t *updates) {
  if (updates->dtype == data->dtype) {
    return KILN_OK;
  }
  char a[KILN_SHAPE_TEXT_CAPACITY];
  char b[KILN_SHAPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: updates %s is %s but data %s is %s", op->name,
                     kiln_op_shape_text(updates, a), kiln_dtype_name(updates->dtype),
                     kiln_op_shape_text(data, b), kiln_dtype_name(data->dtype));
}

/* a + b or a * b in the class of a (floats in double, integers wrapping). */
static kiln_scalar_t scatter_combine(scatter_reduction_t reduction, kiln_scalar_t a,
                                     kiln_scalar_t b) {
  bool add = reduction == SCATTER_ADD;
  if (a.is_float) {
    return kiln_scalar_float(add ? a.f + b.f : a.f * b.f);
  }
  if (a.is_unsigned) {
    return kiln_scalar_uint(add ? a.u + b.u : a.u * b.u);
  }
  uint64_t x = (uint64_t)a.i;
  uint64_t y = (uint64_t)b.i;
  return kiln_scalar_int((int64_t)(add ? x + y : x * y));
}

/* Writes update element `from` into output element `to`. */
static void scatter_write(scatter_reduction_t reduction, kiln_dtype_t dtype, void *out, int64_t to,
                          const void *updates, int64_t from) {
  if (reduction == SCATTER_NONE) {
    size_t size = kiln_dtype_size(dtype);
    memcpy((char *)out + (size_t)to * size, (const char *)updates + (size_t)from * size, size);
    return;
  }
  kiln_scalar_kind_t kind = kiln_scalar_kind(dtype);
  kiln_scalar_t value = scatter_combine(reduction, kiln_scalar_load(kind, out, to),
                                        kiln_scalar_load(kind, updates, from));
  kiln_scalar_store(kind, out, to, value);
}

#define KILN_FIELD_COUNT_(fields) ((int)(sizeof(fields) / sizeof(fields[0])))

/* ---- gather ---- */

static const kiln_attr_field_t kiln_gather_fields[] = {
    KILN_ATTR_FIELD(kiln_gather_attrs_t, axis, INT, "0"),
};

static kiln_status_t gather_rule(const kiln_op_t *op, const void *attrs,
                                 const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t indices = kiln_tinputs_get(inputs, 1);
  KILN_RETURN_IF_ERROR(kiln_transform_check_indices(op, "indices", &indices));
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      kiln_transform_axis(op, "axis", ((const kiln_gather_attrs_t *)attrs)->axis, &data, 0, &axis));
  KILN_RETURN_IF_ERROR(elements_check(op, "indices", &data, &indices, axis));
  out_shape->dtype = data.dtype;
  out_shape->ndim = indices.ndim;
  kiln_transform_copy_dims(out_shape->dims, indices.shape, indices.ndim);
  return KILN_OK;
}

static kiln_status_t gather_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, gather_rule, out_type);
}

/* Copies data element `offset` to output element j. */
typedef struct gather_copy_t {
  size_t size;
  const char *src;
  char *dst;
} gather_copy_t;

static void gather_visit(void *context, int64_t j, int64_t offset) {
  const gather_copy_t *copy = context;
  memcpy(copy->dst + (size_t)j * copy->size, copy->src + (size_t)offset * copy->size, copy->size);
}

static kiln_status_t gather_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, gather_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  gather_copy_t copy = {kiln_dtype_size(data.dtype), kiln_tensor_data(args->inputs[0]),
                        kiln_tensor_data(args->outputs[0])};
  return elements_walk(args->op, &data, ((const kiln_gather_attrs_t *)args->attrs)->axis,
                       args->inputs[1], gather_visit, &copy);
}

const kiln_op_t kiln_op_gather = {
    .name = "gather",
    .id = KILN_OP_GATHER,
    .min_inputs = 2,
    .max_inputs = 2,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_gather_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_gather_fields),
    .attr_fields = kiln_gather_fields,
    .infer_type = gather_infer_type,
    .symbolic_dims = true,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_gather_impl = {
    .reference = gather_reference,
    .compute = kiln_compute_gather,
};

/* ---- gather_nd ---- */

static const kiln_attr_field_t kiln_gather_nd_fields[] = {
    KILN_ATTR_FIELD(kiln_gather_nd_attrs_t, batch_dims, INT, "0"),
};

static kiln_status_t gather_nd_validate(const kiln_op_t *op, const void *attrs) {
  int64_t batch_dims = ((const kiln_gather_nd_attrs_t *)attrs)->batch_dims;
  if (batch_dims < 0 || batch_dims >= KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: batch_dims is %lld, not in [0, %d)", op->name,
                       (long long)batch_dims, KILN_MAX_RANK);
  }
  return KILN_OK;
}

/* The tuple length m = indices.shape[-1] of an ONNX GatherND or ScatterND,
 * after checking that 1 <= m <= data rank - batch_dims. */
static kiln_status_t tuple_length(const kiln_op_t *op, const kiln_tensor_type_t *data,
                                  const kiln_tensor_type_t *indices, int batch_dims,
                                  int *out_length) {
  char a[KILN_SHAPE_TEXT_CAPACITY];
  char b[KILN_SHAPE_TEXT_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_transform_check_indices(op, "indices", indices));
  if (indices->ndim < 1 + batch_dims || data->ndim < 1 + batch_dims) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: indices %s and data %s need rank > batch_dims (%d)",
                       op->name, kiln_op_shape_text(indices, a), kiln_op_shape_text(data, b),
                       batch_dims);
  }
  int64_t length = indices->shape[indices->ndim - 1];
  if (length < 1 || length > data->ndim - batch_dims) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the last dim of indices %s is %lld; it must be in [1, %d] for data %s",
                       op->name, kiln_op_shape_text(indices, a), (long long)length,
                       data->ndim - batch_dims, kiln_op_shape_text(data, b));
  }
  for (int d = 0; d < batch_dims; ++d) {
    if (indices->shape[d] != data->shape[d]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: indices %s and data %s differ in batch dim %d",
                         op->name, kiln_op_shape_text(indices, a), kiln_op_shape_text(data, b), d);
    }
  }
  *out_length = (int)length;
  return KILN_OK;
}

static kiln_status_t gather_nd_rule(const kiln_op_t *op, const void *attrs,
                                    const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t indices = kiln_tinputs_get(inputs, 1);
  int batch_dims = (int)((const kiln_gather_nd_attrs_t *)attrs)->batch_dims;
  int length = 0;
  KILN_RETURN_IF_ERROR(tuple_length(op, &data, &indices, batch_dims, &length));
  out_shape->dtype = data.dtype;
  out_shape->ndim = indices.ndim - 1;
  kiln_transform_copy_dims(out_shape->dims, indices.shape, indices.ndim - 1);
  for (int d = batch_dims + length; d < data.ndim; ++d) {
    out_shape->dims[out_shape->ndim++] = data.shape[d];
  }
  return KILN_OK;
}

static kiln_status_t gather_nd_infer_type(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, gather_nd_rule, out_type);
}

static kiln_status_t gather_nd_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, gather_nd_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  kiln_tensor_type_t index_type = kiln_tinputs_get(&inputs, 1);
  const kiln_tensor_t *indices = args->inputs[1];
  int batch_dims = (int)((const kiln_gather_nd_attrs_t *)args->attrs)->batch_dims;
  int length = (int)index_type.shape[index_type.ndim - 1];
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data.ndim, data.shape, strides);
  size_t slice = (size_t)kiln_transform_product(data.shape, batch_dims + length, data.ndim) *
                 kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  kiln_walk_t walk; /* over the tuples: indices.shape[:-1] */
  int64_t count = kiln_walk_begin(&walk, index_type.ndim - 1, index_type.shape);
  for (int64_t p = 0; p < count; ++p, kiln_walk_next(&walk)) {
    int64_t offset = 0;
    KILN_RETURN_IF_ERROR(
        tuple_offset(args->op, indices, p * length, length, batch_dims, &data, strides, &offset));
    for (int d = 0; d < batch_dims; ++d) {
      offset += walk.index[d] * strides[d];
    }
    memcpy(dst + (size_t)p * slice, src + (size_t)offset * kiln_dtype_size(data.dtype), slice);
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_gather_nd = {
    .name = "gather_nd",
    .id = KILN_OP_GATHER_ND,
    .min_inputs = 2,
    .max_inputs = 2,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_gather_nd_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_gather_nd_fields),
    .attr_fields = kiln_gather_nd_fields,
    .validate_attrs = gather_nd_validate,
    .infer_type = gather_nd_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_gather_nd_impl = {
    .reference = gather_nd_reference,
    .compute = kiln_compute_gather_nd,
};

/* ---- scatter_elements ---- */

static const kiln_attr_field_t kiln_scatter_elements_fields[] = {
    KILN_ATTR_FIELD(kiln_scatter_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_scatter_attrs_t, reduction, STRING, "\"none\""),
};

static kiln_status_t scatter_elements_rule(const kiln_op_t *op, const void *attrs,
                                           const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t indices = kiln_tinputs_get(inputs, 1);
  kiln_tensor_type_t updates = kiln_tinputs_get(inputs, 2);
  KILN_RETURN_IF_ERROR(kiln_transform_check_indices(op, "indices", &indices));
  KILN_RETURN_IF_ERROR(scatter_check_dtype(op, &data, &updates));
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", ((const kiln_scatter_attrs_t *)attrs)->axis,
                                           &data, 0, &axis));
  KILN_RETURN_IF_ERROR(elements_check(op, "indices", &data, &indices, axis));
  if (!kiln_shape_equal(indices.ndim, indices.shape, updates.ndim, updates.shape)) {
    char a[KILN_SHAPE_TEXT_CAPACITY];
    char b[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: updates %s must have the shape of indices %s",
                       op->name, kiln_op_shape_text(&updates, a), kiln_op_shape_text(&indices, b));
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim);
  return KILN_OK;
}

static kiln_status_t scatter_elements_infer_type(const kiln_type_relation_t *relation,
                                                 const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, scatter_elements_rule, out_type);
}

/* Writes update element j into output element `offset`. */
typedef struct scatter_target_t {
  scatter_reduction_t reduction;
  kiln_dtype_t dtype;
  void *out;
  const void *updates;
} scatter_target_t;

static void scatter_visit(void *context, int64_t j, int64_t offset) {
  const scatter_target_t *target = context;
  scatter_write(target->reduction, target->dtype, target->out, offset, target->updates, j);
}

static kiln_status_t scatter_elements_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, scatter_elements_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  scatter_target_t target = {SCATTER_NONE, data.dtype, kiln_tensor_data(args->outputs[0]),
                             kiln_tensor_data(args->inputs[2])};
  KILN_RETURN_IF_ERROR(scatter_reduction(args->op, args->attrs, &target.reduction));
  memcpy(target.out, kiln_tensor_data(args->inputs[0]), kiln_tensor_byte_size(args->inputs[0]));
  return elements_walk(args->op, &data, ((const kiln_scatter_attrs_t *)args->attrs)->axis,
                       args->inputs[1], scatter_visit, &target);
}

const kiln_op_t kiln_op_scatter_elements = {
    .name = "scatter_elements",
    .id = KILN_OP_SCATTER_ELEMENTS,
    .min_inputs = 3,
    .max_inputs = 3,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_scatter_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_scatter_elements_fields),
    .attr_fields = kiln_scatter_elements_fields,
    .validate_attrs = scatter_validate,
    .infer_type = scatter_elements_infer_type,
    .correct_layout = kiln_layout_keep_axes,
    .symbolic_dims = true,
};

const kiln_op_impl_t kiln_op_scatter_elements_impl = {
    .reference = scatter_elements_reference,
    .compute = kiln_compute_scatter_elements,
};

/* ---- scatter_nd ---- */

/* scatter_nd has no axis: its field table leaves it at 0, unused. */
static const kiln_attr_field_t kiln_scatter_nd_fields[] = {
    KILN_ATTR_FIELD(kiln_scatter_attrs_t, reduction, STRING, "\"none\""),
};

static kiln_status_t scatter_nd_rule(const kiln_op_t *op, const void *attrs,
                                     const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  (void)attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t indices = kiln_tinputs_get(inputs, 1);
  kiln_tensor_type_t updates = kiln_tinputs_get(inputs, 2);
  KILN_RETURN_IF_ERROR(scatter_check_dtype(op, &data, &updates));
  int length = 0;
  KILN_RETURN_IF_ERROR(tuple_length(op, &data, &indices, 0, &length));
  int64_t expected[KILN_MAX_RANK * 2];
  int ndim = indices.ndim - 1;
  kiln_transform_copy_dims(expected, indices.shape, ndim);
  for (int d = length; d < data.ndim; ++d) {
    expected[ndim++] = data.shape[d];
  }
  if (!kiln_shape_equal(updates.ndim, updates.shape, ndim, expected)) {
    char a[KILN_SHAPE_TEXT_CAPACITY];
    char b[KILN_SHAPE_TEXT_CAPACITY];
    char c[KILN_SHAPE_TEXT_CAPACITY];
    char e[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(ndim, expected, e, sizeof(e));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: updates %s must have shape %s (indices %s without its last dim, then "
                       "the dims of data %s after the first %d)",
                       op->name, kiln_op_shape_text(&updates, a), e,
                       kiln_op_shape_text(&indices, b), kiln_op_shape_text(&data, c), length);
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim);
  return KILN_OK;
}

static kiln_status_t scatter_nd_infer_type(const kiln_type_relation_t *relation,
                                           const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, scatter_nd_rule, out_type);
}

/* Data in its primal layout, and the output in it; indices and updates in any. */
static kiln_status_t scatter_nd_layout(kiln_layout_relation_t *relation) {
  const char *primal = "";
  KILN_RETURN_IF_ERROR(kiln_layout_primal(relation, kiln_layout_arriving(relation, 0), &primal));
  relation->required_layouts[0] = primal;
  relation->required_layouts[1] = "";
  relation->required_layouts[2] = "";
  relation->output_layout = primal;
  return KILN_OK;
}

static kiln_status_t scatter_nd_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, scatter_nd_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  kiln_tensor_type_t index_type = kiln_tinputs_get(&inputs, 1);
  scatter_reduction_t reduction = SCATTER_NONE;
  KILN_RETURN_IF_ERROR(scatter_reduction(args->op, args->attrs, &reduction));
  int length = (int)index_type.shape[index_type.ndim - 1];
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data.ndim, data.shape, strides);
  int64_t slice = kiln_transform_product(data.shape, length, data.ndim);
  int64_t tuples = kiln_transform_product(index_type.shape, 0, index_type.ndim - 1);
  void *out = kiln_tensor_data(args->outputs[0]);
  const void *updates = kiln_tensor_data(args->inputs[2]);
  memcpy(out, kiln_tensor_data(args->inputs[0]), kiln_tensor_byte_size(args->inputs[0]));
  for (int64_t p = 0; p < tuples; ++p) {
    int64_t offset = 0;
    KILN_RETURN_IF_ERROR(
        tuple_offset(args->op, args->inputs[1], p * length, length, 0, &data, strides, &offset));
    for (int64_t e = 0; e < slice; ++e) {
      scatter_write(reduction, data.dtype, out, offset + e, updates, p * slice + e);
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_scatter_nd = {
    .name = "scatter_nd",
    .id = KILN_OP_SCATTER_ND,
    .min_inputs = 3,
    .max_inputs = 3,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_scatter_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_scatter_nd_fields),
    .attr_fields = kiln_scatter_nd_fields,
    .validate_attrs = scatter_validate,
    .infer_type = scatter_nd_infer_type,
    .correct_layout = scatter_nd_layout,
};

const kiln_op_impl_t kiln_op_scatter_nd_impl = {
    .reference = scatter_nd_reference,
    .compute = kiln_compute_scatter_nd,
};
