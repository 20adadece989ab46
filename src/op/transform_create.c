/*
 * Operators whose output values come from positions: arange (a position
 * gives a value), one_hot (an index gives the position of the on value) and
 * trilu (a position says whether an element is kept or zeroed).
 *
 * arange has no inputs: its start, stop and step are attributes (the ONNX
 * importer folds Range's constant inputs into them), the output has
 * max(ceil((stop - start) / step), 0) elements start + i * step, computed in
 * double and stored once in the attribute's dtype. one_hot's depth, on and
 * off values are attributes too; the output is the indices' shape with a dim
 * of depth inserted at `axis`, on where the position on that dim equals the
 * index (negative indices count from depth's end, ONNX) and off elsewhere;
 * an index outside [-depth, depth) gives a line of off values, as ONNX says.
 * Indices may be any integer or float dtype (floats truncate toward zero; NaN
 * gives a line of off values).
 * trilu keeps the elements of the last two dims on or above (upper) or on or
 * below (lower) the k-th diagonal, column - row >= k or <= k, and zeroes the
 * rest, byte-wise, so it takes every dtype.
 */
#include <math.h>
#include <string.h>

#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/impl.h"
#include "op/transform_common.h"
#include "runtime/shape_func.h"

#define KILN_FIELD_COUNT_(fields) ((int)(sizeof(fields) / sizeof(fields[0])))

/* ---- arange ---- */

static const kiln_attr_field_t kiln_arange_fields[] = {
    KILN_ATTR_FIELD(kiln_arange_attrs_t, start, FLOAT, "0.0"),
    KILN_ATTR_FIELD(kiln_arange_attrs_t, stop, FLOAT, "1.0"),
    KILN_ATTR_FIELD(kiln_arange_attrs_t, step, FLOAT, "1.0"),
    KILN_ATTR_FIELD(kiln_arange_attrs_t, dtype, DTYPE, "\"float32\""),
};

/* start, stop and step are checked where the count is computed, by the
 * rule dyn.arange shares (runtime/shape_func.h). */
static kiln_status_t arange_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_arange_attrs_t *arange = attrs;
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(
      kiln_shape_arange_count(op->name, arange->start, arange->stop, arange->step, &count));
  kiln_scalar_class_t class = kiln_scalar_class(arange->dtype);
  if (class == KILN_SCALAR_CLASS_NONE || class == KILN_SCALAR_CLASS_BOOL) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dtype %s is not a number type", op->name,
                       kiln_dtype_name(arange->dtype));
  }
  return KILN_OK;
}

static kiln_status_t arange_rule(const kiln_op_t *op, const void *attrs,
                                 const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  (void)inputs;
  const kiln_arange_attrs_t *arange = attrs;
  out_shape->dtype = arange->dtype;
  out_shape->ndim = 1;
  return kiln_shape_arange_count(op->name, arange->start, arange->stop, arange->step,
                                 &out_shape->dims[0]);
}

static kiln_status_t arange_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, arange_rule, out_type);
}

static kiln_status_t arange_layout(kiln_layout_relation_t *relation) {
  relation->output_layout = "";
  return KILN_OK;
}

static kiln_status_t arange_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, arange_rule, &inputs));
  const kiln_arange_attrs_t *arange = args->attrs;
  kiln_scalar_kind_t kind = kiln_scalar_kind(arange->dtype);
  void *out = kiln_tensor_data(args->outputs[0]);
  int64_t count = kiln_tensor_element_count(args->outputs[0]);
  for (int64_t i = 0; i < count; ++i) {
    kiln_scalar_store(kind, out, i, kiln_scalar_float(arange->start + (double)i * arange->step));
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_arange = {
    .name = "arange",
    .id = KILN_OP_ARANGE,
    .min_inputs = 0,
    .max_inputs = 0,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_arange_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_arange_fields),
    .attr_fields = kiln_arange_fields,
    .validate_attrs = arange_validate,
    .infer_type = arange_infer_type,
    .correct_layout = arange_layout,
};

const kiln_op_impl_t kiln_op_arange_impl = {
    .reference = arange_reference,
    .compute = kiln_compute_arange,
};

/* ---- one_hot ---- */

static const kiln_attr_field_t kiln_one_hot_fields[] = {
    KILN_ATTR_FIELD(kiln_one_hot_attrs_t, depth, INT, "1"),
    KILN_ATTR_FIELD(kiln_one_hot_attrs_t, axis, INT, "-1"),
    KILN_ATTR_FIELD(kiln_one_hot_attrs_t, on_value, FLOAT, "1.0"),
    KILN_ATTR_FIELD(kiln_one_hot_attrs_t, off_value, FLOAT, "0.0"),
    KILN_ATTR_FIELD(kiln_one_hot_attrs_t, dtype, DTYPE, "\"float32\""),
};

static kiln_status_t one_hot_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_one_hot_attrs_t *one_hot = attrs;
  if (one_hot->depth < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: depth is %lld; it must be >= 1", op->name,
                       (long long)one_hot->depth);
  }
  if (kiln_scalar_kind(one_hot->dtype) == KILN_SCALAR_KIND_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dtype %d is not a dtype", op->name,
                       (int)one_hot->dtype);
  }
  return KILN_OK;
}

static kiln_status_t one_hot_rule(const kiln_op_t *op, const void *attrs,
                                  const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_one_hot_attrs_t *one_hot = attrs;
  kiln_tensor_type_t indices = kiln_tinputs_get(inputs, 0);
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  kiln_scalar_class_t class = kiln_scalar_class(indices.dtype);
  if (class == KILN_SCALAR_CLASS_BOOL || class == KILN_SCALAR_CLASS_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: indices %s must be integers or floats, not %s",
                       op->name, kiln_op_shape_text(&indices, shape),
                       kiln_dtype_name(indices.dtype));
  }
  if (indices.ndim + 1 > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: indices %s have the largest rank already", op->name,
                       kiln_op_shape_text(&indices, shape));
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", one_hot->axis, &indices, 1, &axis));
  out_shape->dtype = one_hot->dtype;
  out_shape->ndim = indices.ndim + 1;
  for (int d = 0, k = 0; d < out_shape->ndim; ++d) {
    out_shape->dims[d] = d == axis ? one_hot->depth : indices.shape[k++];
  }
  return KILN_OK;
}

static kiln_status_t one_hot_infer_type(const kiln_type_relation_t *relation,
                                        const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, one_hot_rule, out_type);
}

static kiln_status_t one_hot_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, one_hot_rule, &inputs));
  const kiln_one_hot_attrs_t *one_hot = args->attrs;
  kiln_tensor_type_t indices = kiln_tinputs_get(&inputs, 0);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", one_hot->axis, &indices, 1, &axis));
  kiln_scalar_kind_t in_kind = kiln_scalar_kind(indices.dtype);
  kiln_scalar_kind_t out_kind = kiln_scalar_kind(one_hot->dtype);
  size_t size = kiln_dtype_size(one_hot->dtype);
  char on[8];
  char off[8];
  kiln_scalar_store(out_kind, on, 0, kiln_scalar_float(one_hot->on_value));
  kiln_scalar_store(out_kind, off, 0, kiln_scalar_float(one_hot->off_value));
  /* The output is (outer, depth, inner); index (o, i) is element o * inner + i. */
  int64_t outer = kiln_transform_product(indices.shape, 0, axis);
  int64_t inner = kiln_transform_product(indices.shape, axis, indices.ndim);
  const void *in = kiln_tensor_data(args->inputs[0]);
  char *out = kiln_tensor_data(args->outputs[0]);
  int64_t depth = one_hot->depth;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      kiln_scalar_t value = kiln_scalar_load(in_kind, in, o * inner + i);
      int64_t index = value.is_float && isnan(value.f)
                          ? INT64_MIN /* matches no position */
                          : kiln_scalar_to_int(value, INT64_MIN, INT64_MAX);
      index = index < 0 && index >= -depth ? index + depth : index;
      for (int64_t c = 0; c < depth; ++c) {
        memcpy(out + (size_t)((o * depth + c) * inner + i) * size, c == index ? on : off, size);
      }
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_one_hot = {
    .name = "one_hot",
    .id = KILN_OP_ONE_HOT,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_one_hot_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_one_hot_fields),
    .attr_fields = kiln_one_hot_fields,
    .validate_attrs = one_hot_validate,
    .infer_type = one_hot_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_one_hot_impl = {
    .reference = one_hot_reference,
    .compute = kiln_compute_one_hot,
};

/* ---- trilu ---- */

static const kiln_attr_field_t kiln_trilu_fields[] = {
    KILN_ATTR_FIELD(kiln_trilu_attrs_t, upper, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_trilu_attrs_t, k, INT, "0"),
};

static kiln_status_t trilu_rule(const kiln_op_t *op, const void *attrs,
                                const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  (void)attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  if (data.ndim < 2) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must have rank >= 2 (rows, columns)",
                       op->name, kiln_op_shape_text(&data, shape));
  }
  if (inputs->count == 2) {
    kiln_tensor_type_t k = kiln_tinputs_get(inputs, 1);
    int64_t count = 0;
    KILN_RETURN_IF_ERROR(kiln_shape_element_count(k.ndim, k.shape, &count));
    if (k.dtype != KILN_DTYPE_INT64 || k.ndim > 1 || count != 1) {
      char shape[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: k must be one int64, not %s %s", op->name,
                         kiln_dtype_name(k.dtype), kiln_op_shape_text(&k, shape));
    }
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim);
  return KILN_OK;
}

static kiln_status_t trilu_infer_type(const kiln_type_relation_t *relation,
                                      const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, trilu_rule, out_type);
}

static kiln_status_t trilu_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, trilu_rule, &inputs));
  const kiln_trilu_attrs_t *trilu = args->attrs;
  int64_t k =
      args->num_inputs == 2 ? *(const int64_t *)kiln_tensor_data(args->inputs[1]) : trilu->k;
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  int64_t rows = data.shape[data.ndim - 2];
  int64_t columns = data.shape[data.ndim - 1];
  int64_t matrices = kiln_transform_product(data.shape, 0, data.ndim - 2);
  size_t size = kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < columns; ++c) {
        size_t at = (size_t)((m * rows + r) * columns + c) * size;
        bool kept = trilu->upper ? c - r >= k : c - r <= k;
        if (kept) {
          memcpy(dst + at, src + at, size);
        } else {
          memset(dst + at, 0, size);
        }
      }
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_trilu = {
    .name = "trilu",
    .id = KILN_OP_TRILU,
    .min_inputs = 1,
    .max_inputs = 2, /* an int64 k read at run time, in place of the attribute */
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_trilu_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_trilu_fields),
    .attr_fields = kiln_trilu_fields,
    .infer_type = trilu_infer_type,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_trilu_impl = {
    .reference = trilu_reference,
    .compute = kiln_compute_trilu,
};
