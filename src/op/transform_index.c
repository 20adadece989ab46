/*
 * Indexing operators: concatenate, split, strided_slice and take.
 *
 * concatenate, split and take see a tensor as (outer, axis, inner) and move
 * contiguous runs of whole inner blocks with memcpy; strided_slice plans a
 * start, step and count per dim (ONNX Slice clamping) and walks the output
 * with the input's strides times the steps. All four move bytes, so they
 * handle every dtype. concatenate takes its tensors as separate inputs (any
 * number >= 1), not as one Relay tuple. split's type is a tuple of its parts,
 * and its kernel gets one output tensor per part; the parts are computed
 * from the plan on demand, never stored. take resolves each index where it
 * uses it: negative indices count from the end, then the mode clamps (clip),
 * wraps (wrap) or rejects (fast, OUT_OF_RANGE) what is still out of range.
 * Layouts: the operators keep their input's axes, so they want the primal
 * layout and produce it (take only when its indices are a vector).
 */
#include <string.h>

#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

/* ---- concatenate ---- */

static const kiln_attr_field_t kiln_concatenate_fields[] = {
    KILN_ATTR_FIELD(kiln_concatenate_attrs_t, axis, INT, "0"),
};

/* Input `index` must match input 0 in rank, dtype and every dim but `axis`. */
static kiln_status_t concatenate_check(const kiln_op_t *op, const kiln_tensor_type_t *first,
                                       const kiln_tensor_type_t *next, int index, int axis) {
  char a[KILN_SHAPE_TEXT_CAPACITY];
  char b[KILN_SHAPE_TEXT_CAPACITY];
  kiln_op_shape_text(next, a);
  kiln_op_shape_text(first, b);
  if (next->ndim != first->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d %s has rank %d but input 0 %s has rank %d",
                       op->name, index, a, next->ndim, b, first->ndim);
  }
  if (next->dtype != first->dtype) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d %s is %s but input 0 %s is %s", op->name,
                       index, a, kiln_dtype_name(next->dtype), b, kiln_dtype_name(first->dtype));
  }
  for (int d = 0; d < first->ndim; ++d) {
    if (d != axis && next->shape[d] != first->shape[d]) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: input %d %s differs from input 0 %s at dim %d (the axis is %d)",
                         op->name, index, a, b, d, axis);
    }
  }
  return KILN_OK;
}

static kiln_status_t concatenate_rule(const kiln_op_t *op, const void *attrs,
                                      const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_concatenate_attrs_t *concatenate = attrs;
  kiln_tensor_type_t first = kiln_tinputs_get(inputs, 0);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", concatenate->axis, &first, 0, &axis));
  out_shape->dtype = first.dtype;
  out_shape->ndim = first.ndim;
  kiln_transform_copy_dims(out_shape->dims, first.shape, first.ndim);
  for (int i = 1; i < inputs->count; ++i) {
    kiln_tensor_type_t next = kiln_tinputs_get(inputs, i);
    KILN_RETURN_IF_ERROR(concatenate_check(op, &first, &next, i, axis));
    if (!kiln_transform_add(out_shape->dims[axis], next.shape[axis], &out_shape->dims[axis])) {
      char shape[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: axis %d overflows int64 at input %d %s", op->name,
                         axis, i, kiln_op_shape_text(&next, shape));
    }
  }
  return KILN_OK;
}

static kiln_status_t concatenate_infer_type(const kiln_type_relation_t *relation,
                                            const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, concatenate_rule, out_type);
}

static kiln_status_t concatenate_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, concatenate_rule, &inputs));
  const kiln_tensor_t *out = args->outputs[0];
  if (kiln_tensor_element_count(out) == 0) {
    return KILN_OK;
  }
  kiln_tensor_type_t first = kiln_tinputs_get(&inputs, 0);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(
      args->op, "axis", ((const kiln_concatenate_attrs_t *)args->attrs)->axis, &first, 0, &axis));
  const int64_t *shape = kiln_tensor_shape(out);
  int64_t outer = kiln_transform_product(shape, 0, axis);
  size_t inner_bytes =
      (size_t)kiln_transform_product(shape, axis + 1, first.ndim) * kiln_dtype_size(first.dtype);
  char *dst = kiln_tensor_data(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < inputs.count; ++i) {
      const kiln_tensor_t *in = args->inputs[i];
      size_t bytes = (size_t)kiln_tensor_shape(in)[axis] * inner_bytes;
      memcpy(dst, (const char *)kiln_tensor_data(in) + (size_t)o * bytes, bytes);
      dst += bytes;
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_concatenate = {
    .name = "concatenate",
    .id = KILN_OP_CONCATENATE,
    .min_inputs = 1,
    .max_inputs = -1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_concatenate_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_concatenate_fields) / sizeof(kiln_concatenate_fields[0])),
    .attr_fields = kiln_concatenate_fields,
    .infer_type = concatenate_infer_type,
    .symbolic_dims = true,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_concatenate_impl = {
    .reference = concatenate_reference,
    .compute = kiln_compute_concatenate,
    .strategies = {[KILN_TARGET_KIND_CPU] = kiln_schedule_concatenate_x86},
};

/* ---- split ---- */

static const kiln_attr_field_t kiln_split_fields[] = {
    KILN_ATTR_FIELD(kiln_split_attrs_t, sections, INT, "0"),
    KILN_ATTR_FIELD(kiln_split_attrs_t, indices, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_split_attrs_t, axis, INT, "0"),
};

/* Defaults (neither sections nor indices) pass: the relation asks for one. */
static kiln_status_t split_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_split_attrs_t *split = attrs;
  char list[KILN_INTS_TEXT_CAPACITY];
  if (split->sections < 0 || split->sections > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: sections is %lld, not in [0, %d]", op->name,
                       (long long)split->sections, INT32_MAX);
  }
  if (split->sections > 0 && split->indices.count > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: give sections or indices, not both (%lld and %s)",
                       op->name, (long long)split->sections, kiln_ints_text(&split->indices, list));
  }
  for (int32_t i = 0; i < split->indices.count; ++i) {
    int64_t previous = i > 0 ? split->indices.values[i - 1] : 0;
    if (split->indices.values[i] < previous) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: indices %s must be >= 0 and non-decreasing",
                         op->name, kiln_ints_text(&split->indices, list));
    }
  }
  return KILN_OK;
}

typedef struct split_plan_t {
  int axis;
  int64_t dim;
  int count; /* parts */
  const kiln_split_attrs_t *attrs;
} split_plan_t;

/* Where part `part` (0..count) starts on the axis; part `count` starts at the end. */
static int64_t split_begin(const split_plan_t *plan, int part) {
  if (part == plan->count) {
    return plan->dim;
  }
  if (plan->attrs->sections > 0) {
    return part * (plan->dim / plan->attrs->sections);
  }
  return part == 0 ? 0 : plan->attrs->indices.values[part - 1];
}

static kiln_status_t split_plan(const kiln_op_t *op, const void *attrs,
                                const kiln_tensor_type_t *data, split_plan_t *out_plan) {
  const kiln_split_attrs_t *split = attrs;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(op, attrs));
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", split->axis, data, 0, &out_plan->axis));
  out_plan->dim = data->shape[out_plan->axis];
  out_plan->attrs = split;
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  kiln_op_shape_text(data, shape);
  if (split->sections > 0) {
    if (out_plan->dim % split->sections != 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: axis %d of data %s has size %lld, which %lld sections do not divide",
                         op->name, out_plan->axis, shape, (long long)out_plan->dim,
                         (long long)split->sections);
    }
    out_plan->count = (int)split->sections;
    return KILN_OK;
  }
  if (split->indices.count == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: give sections (> 0) or indices to split data %s",
                       op->name, shape);
  }
  if (split->indices.values[split->indices.count - 1] > out_plan->dim) {
    char list[KILN_INTS_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: indices %s go beyond axis %d of data %s (size %lld)",
                       op->name, kiln_ints_text(&split->indices, list), out_plan->axis, shape,
                       (long long)out_plan->dim);
  }
  out_plan->count = (int)split->indices.count + 1;
  return KILN_OK;
}

/* The dtype and shape of part `part`. */
static void split_part(const split_plan_t *plan, const kiln_tensor_type_t *data, int part,
                       kiln_tshape_t *out_shape) {
  out_shape->dtype = data->dtype;
  out_shape->ndim = data->ndim;
  kiln_transform_copy_dims(out_shape->dims, data->shape, data->ndim);
  out_shape->dims[plan->axis] = split_begin(plan, part + 1) - split_begin(plan, part);
}

static kiln_status_t split_infer_type(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tinputs_of_relation(relation, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  split_plan_t plan;
  KILN_RETURN_IF_ERROR(split_plan(relation->op, relation->attrs, &data, &plan));
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(relation->arena, (size_t)plan.count,
                                                 sizeof(*fields), _Alignof(kiln_type_t *),
                                                 (void **)&fields));
  for (int part = 0; part < plan.count; ++part) {
    kiln_tshape_t shape;
    split_part(&plan, &data, part, &shape);
    KILN_RETURN_IF_ERROR(kiln_tshape_to_type(relation->op, &shape, relation->arena, &fields[part]));
  }
  return kiln_tuple_type_create(relation->arena, plan.count, fields, out_type);
}

static kiln_status_t split_check_outputs(const kiln_kernel_args_t *args, const split_plan_t *plan,
                                         const kiln_tensor_type_t *data) {
  if (args->num_outputs != plan->count) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected %d outputs (one per part), got %d",
                       args->op->name, plan->count, args->num_outputs);
  }
  for (int part = 0; part < plan->count; ++part) {
    kiln_tshape_t shape;
    split_part(plan, data, part, &shape);
    KILN_RETURN_IF_ERROR(kiln_tshape_check_output(args->op, part, args->outputs[part], &shape));
  }
  return KILN_OK;
}

static kiln_status_t split_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tinputs_of_kernel(args, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  split_plan_t plan;
  KILN_RETURN_IF_ERROR(split_plan(args->op, args->attrs, &data, &plan));
  KILN_RETURN_IF_ERROR(split_check_outputs(args, &plan, &data));
  if (kiln_tensor_element_count(args->inputs[0]) == 0) {
    return KILN_OK;
  }
  int64_t outer = kiln_transform_product(data.shape, 0, plan.axis);
  size_t inner_bytes = (size_t)kiln_transform_product(data.shape, plan.axis + 1, data.ndim) *
                       kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  for (int64_t o = 0; o < outer; ++o) {
    for (int part = 0; part < plan.count; ++part) {
      size_t bytes =
          (size_t)(split_begin(&plan, part + 1) - split_begin(&plan, part)) * inner_bytes;
      memcpy((char *)kiln_tensor_data(args->outputs[part]) + (size_t)o * bytes, src, bytes);
      src += bytes;
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_split = {
    .name = "split",
    .id = KILN_OP_SPLIT,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_split_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_split_fields) / sizeof(kiln_split_fields[0])),
    .attr_fields = kiln_split_fields,
    .validate_attrs = split_validate,
    .infer_type = split_infer_type,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_split_impl = {
    .reference = split_reference,
    .compute = kiln_compute_split,
};

/* ---- strided_slice ---- */

static const kiln_attr_field_t kiln_strided_slice_fields[] = {
    KILN_ATTR_FIELD(kiln_strided_slice_attrs_t, begin, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_strided_slice_attrs_t, end, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_strided_slice_attrs_t, strides, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_strided_slice_attrs_t, axes, INTS, "[]"),
};

/* An optional list (strides, axes) has no entries or one per begin value. */
static kiln_status_t slice_check_optional(const kiln_op_t *op, const char *name,
                                          const kiln_ints_t *list, int32_t count) {
  if (list->count != 0 && list->count != count) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: %s has %d values; give none or one per begin value (%d)", op->name,
                       name, (int)list->count, (int)count);
  }
  return KILN_OK;
}

static kiln_status_t slice_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_strided_slice_attrs_t *slice = attrs;
  if (slice->end.count != slice->begin.count) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: begin has %d values but end has %d", op->name,
                       (int)slice->begin.count, (int)slice->end.count);
  }
  if (slice->begin.count > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: begin has %d values, more than %d", op->name,
                       (int)slice->begin.count, KILN_MAX_RANK);
  }
  KILN_RETURN_IF_ERROR(slice_check_optional(op, "strides", &slice->strides, slice->begin.count));
  KILN_RETURN_IF_ERROR(slice_check_optional(op, "axes", &slice->axes, slice->begin.count));
  for (int32_t i = 0; i < slice->strides.count; ++i) {
    if (slice->strides.values[i] == 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: strides[%d] is 0", op->name, (int)i);
    }
  }
  return KILN_OK;
}

/* Per input dim: the first index taken, the step, and how many are taken. */
typedef struct slice_plan_t {
  int64_t start[KILN_MAX_RANK];
  int64_t step[KILN_MAX_RANK];
  int64_t count[KILN_MAX_RANK];
} slice_plan_t;

static int64_t clamp64(int64_t value, int64_t lo, int64_t hi) {
  return value < lo ? lo : value > hi ? hi : value;
}

/* ONNX Slice on one dim: negative begin and end count from the end, then
 * clamp to [0, dim] (step > 0) or [0, dim - 1] and [-1, dim - 1] (step < 0). */
static void slice_dim(int64_t dim, int64_t begin, int64_t end, int64_t step, int64_t *out_start,
                      int64_t *out_count) {
  *out_start = 0;
  *out_count = 0;
  if (dim == 0) {
    return;
  }
  begin = begin < 0 ? begin + dim : begin;
  end = end < 0 ? end + dim : end;
  int64_t distance = 0;
  if (step > 0) {
    begin = clamp64(begin, 0, dim);
    distance = clamp64(end, 0, dim) - begin;
  } else {
    begin = clamp64(begin, 0, dim - 1);
    distance = begin - clamp64(end, -1, dim - 1);
  }
  if (distance > 0) {
    uint64_t magnitude = step > 0 ? (uint64_t)step : -(uint64_t)step;
    *out_start = begin;
    *out_count = 1 + (int64_t)((uint64_t)(distance - 1) / magnitude);
  }
}

static kiln_status_t slice_plan(const kiln_op_t *op, const void *attrs,
                                const kiln_tensor_type_t *data, slice_plan_t *out_plan) {
  const kiln_strided_slice_attrs_t *slice = attrs;
  for (int d = 0; d < data->ndim; ++d) {
    out_plan->start[d] = 0;
    out_plan->step[d] = 1;
    out_plan->count[d] = data->shape[d];
  }
  int axes[KILN_MAX_RANK];
  if (slice->axes.count > 0) {
    bool listed[KILN_MAX_RANK];
    KILN_RETURN_IF_ERROR(kiln_transform_axes(op, "axes", &slice->axes, data, axes, listed));
  } else if (slice->begin.count > data->ndim) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: begin has %d values but data %s has rank %d",
                       op->name, (int)slice->begin.count, kiln_op_shape_text(data, shape),
                       data->ndim);
  }
  for (int i = 0; i < slice->begin.count; ++i) {
    int axis = slice->axes.count > 0 ? axes[i] : i;
    int64_t step = slice->strides.count > 0 ? slice->strides.values[i] : 1;
    out_plan->step[axis] = step;
    slice_dim(data->shape[axis], slice->begin.values[i], slice->end.values[i], step,
              &out_plan->start[axis], &out_plan->count[axis]);
  }
  return KILN_OK;
}

static kiln_status_t slice_rule(const kiln_op_t *op, const void *attrs,
                                const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  slice_plan_t plan;
  KILN_RETURN_IF_ERROR(slice_plan(op, attrs, &data, &plan));
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, plan.count, data.ndim);
  return KILN_OK;
}

static kiln_status_t slice_infer_type(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, slice_rule, out_type);
}

static kiln_status_t slice_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, slice_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  slice_plan_t plan;
  KILN_RETURN_IF_ERROR(slice_plan(args->op, args->attrs, &data, &plan));
  int64_t in_strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data.ndim, data.shape, in_strides);
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, data.ndim, plan.count);
  kiln_shape_compact_strides(data.ndim, plan.count, walk.strides[0]);
  for (int d = 0; d < data.ndim && count > 0; ++d) {
    /* A dim taken once never steps (its step may be huge). */
    walk.strides[1][d] = plan.count[d] > 1 ? in_strides[d] * plan.step[d] : 0;
    walk.offset[1] += plan.start[d] * in_strides[d];
  }
  kiln_walk_copy(&walk, count, kiln_tensor_data(args->outputs[0]),
                 kiln_tensor_data(args->inputs[0]), kiln_dtype_size(data.dtype));
  return KILN_OK;
}

const kiln_op_t kiln_op_strided_slice = {
    .name = "strided_slice",
    .id = KILN_OP_STRIDED_SLICE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_strided_slice_attrs_t),
    .num_attr_fields =
        (int)(sizeof(kiln_strided_slice_fields) / sizeof(kiln_strided_slice_fields[0])),
    .attr_fields = kiln_strided_slice_fields,
    .validate_attrs = slice_validate,
    .infer_type = slice_infer_type,
    .symbolic_dims = true,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_strided_slice_impl = {
    .reference = slice_reference,
    .compute = kiln_compute_strided_slice,
};

/* ---- take ---- */

static const kiln_attr_field_t kiln_take_fields[] = {
    KILN_ATTR_FIELD(kiln_take_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_take_attrs_t, mode, STRING, "\"clip\""),
};

typedef enum take_mode_e {
  TAKE_CLIP,
  TAKE_WRAP,
  TAKE_FAST,
} take_mode_t;

static const char *const kiln_take_modes[] = {"clip", "wrap", "fast"};

static kiln_status_t take_mode(const kiln_op_t *op, const kiln_take_attrs_t *take,
                               take_mode_t *out_mode) {
  for (int i = 0; i < 3; ++i) {
    if (take->mode && strcmp(take->mode, kiln_take_modes[i]) == 0) {
      *out_mode = (take_mode_t)i;
      return KILN_OK;
    }
  }
  return KILN_STATUS(INVALID_ARGUMENT, "%s: mode \"%s\" is not one of clip, wrap, fast", op->name,
                     take->mode ? take->mode : "");
}

static kiln_status_t take_validate(const kiln_op_t *op, const void *attrs) {
  take_mode_t mode = TAKE_CLIP;
  return take_mode(op, attrs, &mode);
}

static kiln_status_t take_rule(const kiln_op_t *op, const void *attrs, const kiln_tinputs_t *inputs,
                               kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_tensor_type_t indices = kiln_tinputs_get(inputs, 1);
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  KILN_RETURN_IF_ERROR(kiln_transform_check_indices(op, "indices", &indices));
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      kiln_transform_axis(op, "axis", ((const kiln_take_attrs_t *)attrs)->axis, &data, 0, &axis));
  if (data.ndim - 1 + indices.ndim > KILN_MAX_RANK) {
    char other[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s taken at indices %s would have rank %d",
                       op->name, kiln_op_shape_text(&data, shape),
                       kiln_op_shape_text(&indices, other), data.ndim - 1 + indices.ndim);
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = 0;
  for (int d = 0; d < data.ndim; ++d) {
    for (int k = 0; d == axis && k < indices.ndim; ++k) {
      out_shape->dims[out_shape->ndim++] = indices.shape[k];
    }
    if (d != axis) {
      out_shape->dims[out_shape->ndim++] = data.shape[d];
    }
  }
  return KILN_OK;
}

static kiln_status_t take_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, take_rule, out_type);
}

/* The data input in its primal layout, the indices in any; the output keeps
 * the data's axes when the indices are a vector. */
static kiln_status_t take_layout(kiln_layout_relation_t *relation) {
  const char *primal = "";
  KILN_RETURN_IF_ERROR(kiln_layout_primal(relation, kiln_layout_arriving(relation, 0), &primal));
  const kiln_tensor_type_t *indices = NULL;
  KILN_RETURN_IF_ERROR(kiln_layout_input_type(relation, 1, &indices));
  relation->required_layouts[0] = primal;
  relation->required_layouts[1] = "";
  relation->output_layout = indices->ndim == 1 ? primal : "";
  return KILN_OK;
}

/* Index `raw` on an axis of size `dim`, resolved by `mode`. */
static kiln_status_t take_resolve(const kiln_op_t *op, take_mode_t mode, int64_t raw, int axis,
                                  int64_t dim, int64_t *out_index) {
  int64_t index = raw < 0 ? raw + dim : raw;
  if ((index >= 0 && index < dim) || mode == TAKE_FAST || dim == 0) {
    return kiln_transform_resolve_index(op, raw, axis, dim, out_index);
  }
  if (mode == TAKE_CLIP) {
    *out_index = index < 0 ? 0 : dim - 1;
  } else {
    int64_t wrapped = raw % dim;
    *out_index = wrapped < 0 ? wrapped + dim : wrapped;
  }
  return KILN_OK;
}

/* Every index resolves (so a bad one fails even when the output is empty). */
static kiln_status_t take_check_indices(const kiln_op_t *op, take_mode_t mode,
                                        const kiln_tensor_t *indices, int axis, int64_t dim) {
  int64_t count = kiln_tensor_element_count(indices);
  for (int64_t j = 0; j < count; ++j) {
    int64_t index = 0;
    KILN_RETURN_IF_ERROR(
        take_resolve(op, mode, kiln_transform_load_index(indices, j), axis, dim, &index));
  }
  return KILN_OK;
}

static kiln_status_t take_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, take_rule, &inputs));
  const kiln_take_attrs_t *attrs = args->attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  const kiln_tensor_t *indices = args->inputs[1];
  take_mode_t mode = TAKE_CLIP;
  KILN_RETURN_IF_ERROR(take_mode(args->op, attrs, &mode));
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &data, 0, &axis));
  int64_t dim = data.shape[axis];
  KILN_RETURN_IF_ERROR(take_check_indices(args->op, mode, indices, axis, dim));
  if (kiln_tensor_element_count(args->outputs[0]) == 0) {
    return KILN_OK;
  }
  int64_t outer = kiln_transform_product(data.shape, 0, axis);
  int64_t count = kiln_tensor_element_count(indices);
  size_t bytes =
      (size_t)kiln_transform_product(data.shape, axis + 1, data.ndim) * kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t index = 0;
      KILN_RETURN_IF_ERROR(
          take_resolve(args->op, mode, kiln_transform_load_index(indices, j), axis, dim, &index));
      memcpy(dst, src + (size_t)(o * dim + index) * bytes, bytes);
      dst += bytes;
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_take = {
    .name = "take",
    .id = KILN_OP_TAKE,
    .min_inputs = 2,
    .max_inputs = 2,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_take_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_take_fields) / sizeof(kiln_take_fields[0])),
    .attr_fields = kiln_take_fields,
    .validate_attrs = take_validate,
    .infer_type = take_infer_type,
    .symbolic_dims = true,
    .correct_layout = take_layout,
};

const kiln_op_impl_t kiln_op_take_impl = {
    .reference = take_reference,
    .compute = kiln_compute_take,
};
