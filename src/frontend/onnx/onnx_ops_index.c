/*
 * Indexing converters: Concat, Split, Slice, Gather and Pad.
 *
 * Operators that took attributes in early opsets and inputs later have one
 * converter per form, which read their lists and hand them to a shared
 * builder; list inputs must be constants (kiln_onnx_input_ints). Slice maps
 * onto strided_slice, which implements ONNX's clamping; Split's sizes become
 * split's cut points, and its tuple result one TupleGetItem per output; Pad's
 * [x1_begin, x2_begin, ..., x1_end, ...] is reordered into pad_width's
 * before/after pairs. Split's sizes and Pad's pads and constant_value known
 * only at run time make dyn.split and dyn.pad (op/dyn.c), which do the same
 * at run time. Resize and Upsample are onnx_ops_resize.c.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* ---- Concat ---- */

kiln_status_t kiln_onnx_convert_concat(kiln_onnx_node_t *node) {
  int64_t axis = 0;
  void *attrs = NULL;
  if (!kiln_onnx_attr(node, "axis") && node->importer->opset >= 4) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute axis is required");
  }
  int64_t fallback = (int64_t)kiln_onnx_legacy_default(node, "axis", 0.0);
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", fallback, &axis));
  for (int i = 0; i < node->num_inputs; ++i) {
    kiln_expr_t *input = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &input));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_concatenate, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_concatenate, attrs, "axis", axis));
  return kiln_onnx_emit(node, &kiln_op_concatenate, node->num_inputs, node->inputs, attrs,
                        &node->outputs[0]);
}

/* ---- Split ---- */

/* Splits input 0 along `axis` into parts of `sizes` (NULL: equal parts, one
 * per output). */
static kiln_status_t kiln_onnx_split(kiln_onnx_node_t *node, int64_t axis_attr,
                                     const kiln_ints_t *sizes) {
  kiln_expr_t *x = NULL, *parts = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(&kiln_op_split, axis_attr, xt->ndim, &axis));
  const kiln_op_t *op = &kiln_op_split;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  if (sizes && sizes->count > 1) {
    if (sizes->count != node->num_outputs) {
      return KILN_STATUS(INVALID_ARGUMENT, "split has %d sizes for %d outputs", (int)sizes->count,
                         node->num_outputs);
    }
    int64_t indices[KILN_MAX_RANK * 8], at = 0, total = 0;
    if (sizes->count - 1 > (int32_t)(sizeof(indices) / sizeof(indices[0]))) {
      return KILN_STATUS(UNIMPLEMENTED, "split into %d parts", (int)sizes->count);
    }
    for (int32_t i = 0; i < sizes->count; ++i) {
      if (sizes->values[i] < 0) {
        return KILN_STATUS(INVALID_ARGUMENT, "split[%d] is %lld", (int)i,
                           (long long)sizes->values[i]);
      }
      total += sizes->values[i];
      if (i + 1 < sizes->count) {
        indices[at++] = total;
      }
    }
    if (total != xt->shape[axis]) {
      return KILN_STATUS(INVALID_ARGUMENT, "split sizes add up to %lld but dim %d is %lld",
                         (long long)total, axis, (long long)xt->shape[axis]);
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "indices", (int)at, indices));
  } else {
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "sections", node->num_outputs));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &parts));
  for (int i = 0; i < node->num_outputs; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, parts, i, &node->outputs[i]));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_split_attrs(kiln_onnx_node_t *node) {
  int64_t axis = 0;
  kiln_ints_t sizes;
  bool present = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "split", &sizes, &present));
  return kiln_onnx_split(node, axis, present ? &sizes : NULL);
}

/* Split with sizes known only at run time: dyn.split, one part per output. */
static kiln_status_t kiln_onnx_split_dyn(kiln_onnx_node_t *node, int64_t axis_attr) {
  const kiln_op_t *op = &kiln_op_dyn_split;
  kiln_expr_t *x = NULL;
  void *attrs = NULL;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(op, axis_attr, kiln_onnx_type_of(x)->ndim, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit_dyn(node, op, 2, attrs));
  kiln_expr_t *parts = node->outputs[0];
  int count = kiln_type_as_tuple(parts->checked_type)->count;
  if (count != node->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "split has %d sizes for %d outputs", count,
                       node->num_outputs);
  }
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, parts, i, &node->outputs[i]));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_convert_split_inputs(kiln_onnx_node_t *node) {
  int64_t axis = 0;
  kiln_ints_t sizes;
  bool present = kiln_onnx_input_optional(node, 1) != NULL, known = true;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  if (present) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  }
  if (!known && node->num_outputs > 1) {
    return kiln_onnx_split_dyn(node, axis);
  }
  if (present) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "split", &sizes));
  }
  return kiln_onnx_split(node, axis, present ? &sizes : NULL);
}

/* ---- Slice ---- */

static kiln_status_t kiln_onnx_slice(kiln_onnx_node_t *node, const kiln_ints_t *starts,
                                     const kiln_ints_t *ends, const kiln_ints_t *axes,
                                     const kiln_ints_t *steps) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (ends->count != starts->count || (axes->count && axes->count != starts->count) ||
      (steps->count && steps->count != starts->count)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "starts, ends, axes and steps have %d, %d, %d and %d values",
                       (int)starts->count, (int)ends->count, (int)axes->count, (int)steps->count);
  }
  const kiln_op_t *op = &kiln_op_strided_slice;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "begin", starts->count, starts->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "end", ends->count, ends->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "axes", axes->count, axes->values));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "strides", steps->count, steps->values));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_slice_attrs(kiln_onnx_node_t *node) {
  kiln_ints_t starts, ends, axes, steps = {0, NULL};
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "starts", &starts, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "ends", &ends, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "axes", &axes, NULL));
  return kiln_onnx_slice(node, &starts, &ends, &axes, &steps);
}

/* The omitted axes of a Slice: [0, 1, ..., len(starts) - 1] (a kernel
 * cannot take an empty input), or empty when that length is not static. */
static kiln_status_t slice_default_axes(kiln_onnx_node_t *node, const kiln_tensor_type_t *starts,
                                        kiln_expr_t **out_axes) {
  int64_t count = starts->ndim == 1 ? starts->shape[0] : 1;
  if (!kiln_tensor_type_is_static(starts) || count > KILN_MAX_RANK) {
    return kiln_onnx_filled(node, KILN_DTYPE_INT64, 1, (const int64_t[]){0}, 0.0, out_axes);
  }
  int64_t axes[KILN_MAX_RANK];
  for (int64_t i = 0; i < count; ++i) {
    axes[i] = i;
  }
  return kiln_onnx_int64s(node, (int)count, axes, out_axes);
}

/* Slice with starts, ends, axes or steps known only at run time:
 * dyn.strided_slice over (data, starts, ends, steps, axes); steps all 1 and
 * axes the first len(starts) when omitted. */
static kiln_status_t kiln_onnx_slice_dyn(kiln_onnx_node_t *node) {
  kiln_expr_t *args[5] = {NULL, NULL, NULL, NULL, NULL};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  const kiln_tensor_type_t *starts = kiln_onnx_type_of(args[1]);
  args[3] = kiln_onnx_input_optional(node, 4);
  if (!args[3]) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_filled(node, starts->dtype, starts->ndim, starts->shape, 1.0, &args[3]));
  }
  args[4] = kiln_onnx_input_optional(node, 3);
  if (!args[4]) {
    KILN_RETURN_IF_ERROR(slice_default_axes(node, starts, &args[4]));
  }
  return kiln_onnx_emit(node, &kiln_op_dyn_strided_slice, 5, args, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_slice_inputs(kiln_onnx_node_t *node) {
  kiln_ints_t starts, ends, axes = {0, NULL}, steps = {0, NULL};
  bool known = true;
  for (int i = 1; i < 5 && known; ++i) {
    if (kiln_onnx_input_optional(node, i)) {
      KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, i, &known));
    }
  }
  if (!known) {
    return kiln_onnx_slice_dyn(node);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "starts", &starts));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 2, "ends", &ends));
  if (kiln_onnx_input_optional(node, 3)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 3, "axes", &axes));
  }
  if (kiln_onnx_input_optional(node, 4)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 4, "steps", &steps));
  }
  return kiln_onnx_slice(node, &starts, &ends, &axes, &steps);
}

/* ---- Gather ---- */

kiln_status_t kiln_onnx_convert_gather(kiln_onnx_node_t *node) {
  kiln_expr_t *data = NULL, *indices = NULL;
  int64_t axis = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &indices));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_take, attrs, "axis", axis));
  /* an index out of range is an error, as ONNX says (not clamped) */
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(&kiln_op_take, attrs, "mode", "fast"));
  return kiln_onnx_emit2(node, &kiln_op_take, data, indices, attrs, &node->outputs[0]);
}

/* ---- Pad ---- */

static kiln_status_t kiln_onnx_pad_mode(const char *mode) {
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0) {
    return KILN_STATUS(UNIMPLEMENTED, "mode \"%s\" is not supported (constant, reflect, edge)",
                       mode);
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_pad(kiln_onnx_node_t *node, const kiln_ints_t *pads,
                                   const char *mode, double value) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  int rank = kiln_onnx_type_of(x)->ndim;
  if (pads->count != 2 * rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "pads has %d values; rank %d needs %d", (int)pads->count,
                       rank, 2 * rank);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_pad_mode(mode));
  int64_t width[2 * KILN_MAX_RANK];
  bool any = false;
  for (int d = 0; d < rank; ++d) {
    width[2 * d] = pads->values[d];
    width[2 * d + 1] = pads->values[rank + d];
    any = any || width[2 * d] != 0 || width[2 * d + 1] != 0;
  }
  if (!any) { /* no padding at all: the identity, as Identity is */
    node->outputs[0] = x;
    return KILN_OK;
  }
  const kiln_op_t *op = &kiln_op_pad;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "pad_width", 2 * rank, width));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "pad_mode", mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, "pad_value", value));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_pad_attrs(kiln_onnx_node_t *node) {
  kiln_ints_t pads;
  const char *mode = "constant";
  double value = 0.0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "pads", &pads, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "constant", &mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "value", 0.0, &value));
  return kiln_onnx_pad(node, &pads, mode, value);
}

/* Pad with pads or constant_value known only at run time: dyn.pad over
 * (x, pads, value), the value 0 when absent. */
static kiln_status_t kiln_onnx_pad_dyn(kiln_onnx_node_t *node, const char *mode) {
  const kiln_op_t *op = &kiln_op_dyn_pad;
  kiln_expr_t *args[3] = {NULL, NULL, NULL};
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_pad_mode(mode));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &args[0]));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &args[1]));
  args[2] = kiln_onnx_input_optional(node, 2);
  if (!args[2]) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, kiln_onnx_type_of(args[0])->dtype, 0.0, &args[2]));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "pad_mode", mode));
  return kiln_onnx_emit(node, op, 3, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_pad_inputs(kiln_onnx_node_t *node) {
  kiln_ints_t pads;
  const char *mode = "constant";
  double value = 0.0;
  bool known = true;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (known && kiln_onnx_input_optional(node, 2)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 2, &known));
  }
  if (!known && !kiln_onnx_input_optional(node, 3)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "constant", &mode));
    return kiln_onnx_pad_dyn(node, mode);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "pads", &pads));
  if (kiln_onnx_input_optional(node, 2)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 2, "constant_value", &value));
  }
  if (kiln_onnx_input_optional(node, 3)) {
    return KILN_STATUS(UNIMPLEMENTED, "the axes input is not supported");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "constant", &mode));
  return kiln_onnx_pad(node, &pads, mode, value);
}
