/*
 * Operators whose output shape depends on the input's values, with ONNX's
 * semantics: nonzero (ONNX NonZero: the (rank, count) int64 coordinates of
 * the nonzero elements, row-major) and unique (ONNX Unique: the unique
 * elements, or slices along an axis, with the index of each one's first
 * occurrence, each position's unique index and each unique's count; sorted
 * or in order of first occurrence; NaN is one value, after every number,
 * as NumPy's unique), and vision.non_max_suppression (ONNX
 * NonMaxSuppression: per batch and class, the boxes scoring above
 * score_threshold taken by score, descending, ties by index, each kept
 * unless its IoU with a box already kept is above iou_threshold, at most
 * max_output_boxes_per_class; the (count, 3) int64 rows (batch, class,
 * box). Its optional scalar inputs are empty tensors when absent).
 *
 * At import the counts are anonymous symbolic dims ("?"), everything else
 * static. The semantics live in the runtime (runtime/extern_kernel.c, one
 * definition): this file keeps the type relations, and each operator's
 * shape function and reference kernel call the runtime's extern kernel of
 * the same name (its shapes, then its fill), as the VM's call_extern
 * instruction does (docs/vm.md), so the interpreter, the ONNX importer's
 * folding on Constants and the VM compute the same values. The graph
 * compiler's compute rule refuses all three (kiln_dyn_compute_refuse): the
 * compiler emits call_extern for them instead of a kernel.
 */
#include <string.h>

#include "op/dyn.h"
#include "op/impl.h"
#include "op/transform_attrs.h"
#include "runtime/extern_kernel.h"
#include "runtime/resize_rule.h"
#include "runtime/scalar.h"

/* ---- shared ---- */

/* A tensor type of `rank` dims, static from `shape` except where `shape`
 * holds -1 (an anonymous symbolic dim). */
static kiln_status_t value_shape_type(kiln_arena_t *arena, kiln_dtype_t dtype, int rank,
                                      const int64_t *shape, const kiln_type_t **out_type) {
  const kiln_dim_var_t *vars[KILN_MAX_RANK] = {NULL};
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0) {
      KILN_RETURN_IF_ERROR(kiln_dim_var_create(arena, "", -1, &vars[d]));
    }
  }
  return kiln_tensor_type_create_symbolic(arena, dtype, rank, shape, vars, out_type);
}

static kiln_status_t value_shape_check_data(const kiln_type_relation_t *relation,
                                            const kiln_tensor_type_t **out_data) {
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, out_data));
  if (kiln_scalar_kind((*out_data)->dtype) == KILN_SCALAR_KIND_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the data is %s; expected numbers or booleans",
                       relation->op->name, kiln_dtype_name((*out_data)->dtype));
  }
  return KILN_OK;
}

/* The operators' attributes, as the runtime's extern kernels take them
 * (runtime/extern_kernel.h: unique's sorted, by_axis, axis;
 * non_max_suppression's center_point_box; stft's onesided;
 * mel_weight_matrix's dtype). */
typedef struct kiln_unique_attrs_t {
  bool sorted;
  bool by_axis; /* false: the flattened data */
  int64_t axis;
} kiln_unique_attrs_t;

typedef struct kiln_nms_attrs_t {
  bool center_point_box; /* boxes as (x_center, y_center, width, height), else two corners */
} kiln_nms_attrs_t;

int kiln_value_shape_extern_attrs(const kiln_op_t *op, const void *attrs, int64_t *out_attrs) {
  if (op == &kiln_op_unique) {
    const kiln_unique_attrs_t *u = attrs;
    out_attrs[0] = u->sorted;
    out_attrs[1] = u->by_axis;
    out_attrs[2] = u->axis;
    return 3;
  }
  if (op == &kiln_op_non_max_suppression) {
    out_attrs[0] = ((const kiln_nms_attrs_t *)attrs)->center_point_box;
    return 1;
  }
  if (op == &kiln_op_stft) {
    out_attrs[0] = ((const kiln_stft_attrs_t *)attrs)->onesided;
    return 1;
  }
  if (op == &kiln_op_mel_weight_matrix) {
    out_attrs[0] = ((const kiln_mel_weight_matrix_attrs_t *)attrs)->dtype;
    return 1;
  }
  if (op == &kiln_op_dyn_resize) {
    kiln_dyn_resize_extern_attrs(attrs, out_attrs);
    return KILN_RESIZE_RULE_ATTRS;
  }
  if (op == &kiln_op_dyn_split) {
    out_attrs[0] = kiln_dyn_split_axis(attrs);
    return 1;
  }
  return 0;
}

/* The extern kernel of `op` and its arguments over `inputs`. */
static kiln_status_t value_shape_extern(const kiln_op_t *op, const void *attrs, int num_inputs,
                                        kiln_tensor_t *const *inputs, int64_t *values,
                                        kiln_extern_args_t *out_args, int *out_index) {
  *out_index = kiln_extern_kernel_find(op->name);
  if (*out_index < 0) {
    return KILN_STATUS(INTERNAL, "%s: the runtime has no extern kernel for it", op->name);
  }
  kiln_value_shape_extern_attrs(op, attrs, values);
  *out_args = (kiln_extern_args_t){num_inputs, inputs, values,
                                   kiln_extern_kernel_at(*out_index)->num_outputs};
  return KILN_OK;
}

/* The output type from the extern kernel's shapes: a tensor, or a tuple of
 * them for more than one output. */
kiln_status_t kiln_value_shape_func(const kiln_shape_func_args_t *args,
                                    const kiln_type_t **out_type) {
  int64_t values[KILN_EXTERN_MAX_ATTRS];
  kiln_extern_args_t call;
  int index = 0;
  KILN_RETURN_IF_ERROR(value_shape_extern(args->op, args->attrs, args->num_inputs, args->inputs,
                                          values, &call, &index));
  kiln_extern_shape_t shapes[KILN_EXTERN_MAX_OUTPUTS];
  KILN_RETURN_IF_ERROR(kiln_extern_kernel_shapes(index, &call, shapes));
  int count = kiln_extern_kernel_at(index)->num_outputs;
  const kiln_type_t *fields[KILN_EXTERN_MAX_OUTPUTS];
  for (int o = 0; o < count; ++o) {
    KILN_RETURN_IF_ERROR(kiln_tensor_type_create(args->arena, shapes[o].dtype, shapes[o].ndim,
                                                 shapes[o].shape, &fields[o]));
  }
  if (count == 1) {
    *out_type = fields[0];
    return KILN_OK;
  }
  return kiln_tuple_type_create(args->arena, count, fields, out_type);
}

/* The extern kernel fills the outputs the interpreter allocated. */
kiln_status_t kiln_value_shape_reference(const kiln_kernel_args_t *args) {
  int64_t values[KILN_EXTERN_MAX_ATTRS];
  kiln_extern_args_t call;
  int index = 0;
  KILN_RETURN_IF_ERROR(value_shape_extern(args->op, args->attrs, args->num_inputs, args->inputs,
                                          values, &call, &index));
  return kiln_extern_kernel_fill(index, &call, args->outputs);
}

/* ---- nonzero ---- */

static kiln_status_t nonzero_infer(const kiln_type_relation_t *relation,
                                   const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(value_shape_check_data(relation, &data));
  if (data->ndim == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: a scalar input is not supported", relation->op->name);
  }
  const int64_t shape[2] = {data->ndim, -1};
  return value_shape_type(relation->arena, KILN_DTYPE_INT64, 2, shape, out_type);
}

const kiln_op_t kiln_op_nonzero = {
    .name = "nonzero",
    .id = KILN_OP_NONZERO,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .infer_type = nonzero_infer,
    .shape_func = kiln_value_shape_func,
    .symbolic_relation = true,
};

const kiln_op_impl_t kiln_op_nonzero_impl = {
    .reference = kiln_value_shape_reference,
    .compute = kiln_dyn_compute_refuse,
};

/* ---- unique ---- */

/* outer, count and inner of the data for these attrs (the axis checked). */
static kiln_status_t unique_layout(const kiln_op_t *op, const kiln_unique_attrs_t *attrs, int rank,
                                   const int64_t *shape, int64_t *out_outer, int64_t *out_count,
                                   int64_t *out_inner, int *out_axis) {
  *out_outer = *out_inner = *out_count = 1;
  *out_axis = 0;
  if (!attrs->by_axis) {
    for (int d = 0; d < rank; ++d) {
      *out_count *= shape[d];
    }
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(op, attrs->axis, rank, out_axis));
  for (int d = 0; d < rank; ++d) {
    *out_outer *= d < *out_axis ? shape[d] : 1;
    *out_count *= d == *out_axis ? shape[d] : 1;
    *out_inner *= d > *out_axis ? shape[d] : 1;
  }
  return KILN_OK;
}

/* (Y, indices, inverse_indices, counts) with `unique` uniques (-1: "?")
 * for data of `rank` and `shape` (possibly symbolic: -1 dims). */
static kiln_status_t unique_type(kiln_arena_t *arena, const kiln_unique_attrs_t *attrs,
                                 kiln_dtype_t dtype, int rank, const int64_t *shape, int axis,
                                 int64_t count, int64_t unique, const kiln_type_t **out_type) {
  int64_t y_shape[KILN_MAX_RANK];
  int y_rank = attrs->by_axis ? rank : 1;
  if (rank > 0) { /* a scalar's shape array may be NULL */
    memcpy(y_shape, shape, sizeof(int64_t) * (size_t)rank);
  }
  y_shape[attrs->by_axis ? axis : 0] = unique;
  const kiln_type_t *fields[4];
  KILN_RETURN_IF_ERROR(value_shape_type(arena, dtype, y_rank, y_shape, &fields[0]));
  KILN_RETURN_IF_ERROR(value_shape_type(arena, KILN_DTYPE_INT64, 1, &unique, &fields[1]));
  KILN_RETURN_IF_ERROR(value_shape_type(arena, KILN_DTYPE_INT64, 1, &count, &fields[2]));
  KILN_RETURN_IF_ERROR(value_shape_type(arena, KILN_DTYPE_INT64, 1, &unique, &fields[3]));
  return kiln_tuple_type_create(arena, 4, fields, out_type);
}

static kiln_status_t unique_infer(const kiln_type_relation_t *relation,
                                  const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(value_shape_check_data(relation, &data));
  const kiln_unique_attrs_t *attrs = relation->attrs;
  int64_t outer = 0, count = 0, inner = 0;
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      unique_layout(relation->op, attrs, data->ndim, data->shape, &outer, &count, &inner, &axis));
  bool known =
      kiln_tensor_type_is_static(data) || (attrs->by_axis && !(data->vars && data->vars[axis]));
  return unique_type(relation->arena, attrs, data->dtype, data->ndim, data->shape, axis,
                     known ? count : -1, -1, out_type);
}

static const kiln_attr_field_t unique_fields[] = {
    KILN_ATTR_FIELD(kiln_unique_attrs_t, sorted, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_unique_attrs_t, by_axis, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_unique_attrs_t, axis, INT, "0"),
};

const kiln_op_t kiln_op_unique = {
    .name = "unique",
    .id = KILN_OP_UNIQUE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_unique_attrs_t),
    .num_attr_fields = (int)(sizeof(unique_fields) / sizeof(unique_fields[0])),
    .attr_fields = unique_fields,
    .infer_type = unique_infer,
    .shape_func = kiln_value_shape_func,
    .symbolic_relation = true,
};

const kiln_op_impl_t kiln_op_unique_impl = {
    .reference = kiln_value_shape_reference,
    .compute = kiln_dyn_compute_refuse,
};

/* ---- vision.non_max_suppression ---- */

enum { NMS_BOXES, NMS_SCORES, NMS_MAX_OUTPUT, NMS_IOU, NMS_SCORE };

/* Input `index` is a float (or, for max_output_boxes_per_class, integer)
 * tensor of at most one element. */
static kiln_status_t nms_check_value(const kiln_type_relation_t *relation, int index,
                                     const char *what, bool want_float) {
  const kiln_tensor_type_t *t = NULL;
  KILN_RETURN_IF_ERROR(kiln_dyn_check_list(relation, index, what, want_float));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &t));
  if (!kiln_tensor_type_is_static(t) || (t->ndim == 1 && t->shape[0] > 1)) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d (%s) is %s; expected one value or none",
                       relation->op->name, index, what, kiln_op_shape_text(t, shape));
  }
  return KILN_OK;
}

static kiln_status_t nms_infer(const kiln_type_relation_t *relation, const kiln_type_t **out_type) {
  const kiln_tensor_type_t *boxes = NULL, *scores = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, NMS_BOXES, &boxes));
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, NMS_SCORES, &scores));
  bool floats = kiln_scalar_class(boxes->dtype) == KILN_SCALAR_CLASS_FLOAT &&
                kiln_scalar_class(scores->dtype) == KILN_SCALAR_CLASS_FLOAT;
  bool fits = boxes->ndim == 3 && scores->ndim == 3 && boxes->shape[2] == 4 &&
              kiln_tensor_type_is_static(boxes) && kiln_tensor_type_is_static(scores) &&
              boxes->shape[0] == scores->shape[0] && boxes->shape[1] == scores->shape[2];
  if (!floats || !fits) {
    char b[KILN_SHAPE_TEXT_CAPACITY], s[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: boxes %s %s and scores %s %s; expected float (batches, boxes, 4) and "
                       "(batches, classes, boxes)",
                       relation->op->name, kiln_dtype_name(boxes->dtype),
                       kiln_op_shape_text(boxes, b), kiln_dtype_name(scores->dtype),
                       kiln_op_shape_text(scores, s));
  }
  KILN_RETURN_IF_ERROR(
      nms_check_value(relation, NMS_MAX_OUTPUT, "max_output_boxes_per_class", false));
  KILN_RETURN_IF_ERROR(nms_check_value(relation, NMS_IOU, "iou_threshold", true));
  KILN_RETURN_IF_ERROR(nms_check_value(relation, NMS_SCORE, "score_threshold", true));
  const int64_t shape[2] = {-1, 3};
  return value_shape_type(relation->arena, KILN_DTYPE_INT64, 2, shape, out_type);
}

static const kiln_attr_field_t nms_fields[] = {
    KILN_ATTR_FIELD(kiln_nms_attrs_t, center_point_box, BOOL, "False"),
};

const kiln_op_t kiln_op_non_max_suppression = {
    .name = "vision.non_max_suppression",
    .id = KILN_OP_NON_MAX_SUPPRESSION,
    .min_inputs = 5,
    .max_inputs = 5,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_nms_attrs_t),
    .num_attr_fields = (int)(sizeof(nms_fields) / sizeof(nms_fields[0])),
    .attr_fields = nms_fields,
    .infer_type = nms_infer,
    .shape_func = kiln_value_shape_func,
    .symbolic_relation = true,
};

const kiln_op_impl_t kiln_op_non_max_suppression_impl = {
    .reference = kiln_value_shape_reference,
    .compute = kiln_dyn_compute_refuse,
};
