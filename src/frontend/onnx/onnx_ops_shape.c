/*
 * Shape converters: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Shape,
 * Size, Expand, Tile, DepthToSpace, SpaceToDepth, Trilu and EyeLike.
 *
 * Shapes are static after import, so these resolve ONNX's conventions into
 * explicit shapes here: Reshape's 0 (copy the input dim, unless allowzero)
 * and -1 are passed on to reshape, which has the same rule; Unsqueeze's
 * axes (counted in the output's rank, any order) become one reshape;
 * Flatten is nn.batch_flatten at axis 1 and a 2-D reshape elsewhere. Shape
 * and Size are Constants read off the input's type, which is what lets
 * shape-computing subgraphs fold. Expand is broadcast_to (whose output is
 * the broadcast of both shapes, as ONNX's), Tile is tile, both with their
 * shape input read at import. Trilu's k input is read at import into trilu's
 * attribute, or, known only at run time, becomes trilu's second input.
 * EyeLike is a Constant: only the input's shape matters.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_tensor.h"

/* ---- Reshape ---- */

/* A Constant with no elements of `shape` (allowzero with a 0 in the shape:
 * the result is empty whatever the data holds, if the data is empty too). */
static kiln_status_t kiln_onnx_reshape_empty(kiln_onnx_node_t *node, kiln_expr_t *data,
                                             const kiln_ints_t *shape) {
  const kiln_tensor_type_t *type = kiln_onnx_type_of(data);
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(type->ndim, type->shape, &count));
  for (int32_t i = 0; i < shape->count; ++i) {
    if (shape->values[i] < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "shape has -1 and 0 with allowzero=1");
    }
  }
  if (count != 0 || shape->count > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "cannot reshape %lld elements into a shape with a 0 dim",
                       (long long)count);
  }
  return kiln_onnx_filled(node, type->dtype, shape->count, shape->values, 0.0, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_reshape(kiln_onnx_node_t *node) {
  kiln_expr_t *data = NULL;
  kiln_ints_t shape;
  int64_t allowzero = 0;
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "allowzero", 0, &allowzero));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (!known) {
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_dyn_reshape, &attrs));
    KILN_RETURN_IF_ERROR(
        kiln_onnx_set_bool(&kiln_op_dyn_reshape, attrs, "allowzero", allowzero != 0));
    return kiln_onnx_emit_dyn(node, &kiln_op_dyn_reshape, 2, attrs);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "shape", &shape));
  for (int32_t i = 0; allowzero && i < shape.count; ++i) {
    if (shape.values[i] == 0) {
      return kiln_onnx_reshape_empty(node, data, &shape);
    }
  }
  return kiln_onnx_reshape(node, data, shape.count, shape.values, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_flatten(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t axis = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 1, &axis));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (axis < -xt->ndim || axis > xt->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "axis %lld is outside [%d, %d] for rank %d",
                       (long long)axis, -xt->ndim, xt->ndim, xt->ndim);
  }
  if (axis < 0) {
    axis += xt->ndim;
  }
  if (axis == 1) {
    return kiln_onnx_emit1(node, &kiln_op_batch_flatten, x, NULL, &node->outputs[0]);
  }
  int64_t flat[2] = {1, 1};
  for (int d = 0; d < xt->ndim; ++d) {
    flat[d < axis ? 0 : 1] *= xt->shape[d];
  }
  return kiln_onnx_reshape(node, x, 2, flat, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_transpose(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t perm;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "perm", &perm, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_transpose, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, &kiln_op_transpose, attrs, "axes", perm.count, perm.values));
  return kiln_onnx_emit1(node, &kiln_op_transpose, x, attrs, &node->outputs[0]);
}

/* ---- Squeeze and Unsqueeze ---- */

kiln_status_t kiln_onnx_convert_squeeze_attrs(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t axes;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "axes", &axes, NULL));
  return kiln_onnx_squeeze(node, x, axes.count, axes.values, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_squeeze_inputs(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t axes = {0, NULL};
  bool known = true;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  }
  if (!known) {
    return kiln_onnx_emit_dyn(node, &kiln_op_dyn_squeeze, 2, NULL);
  }
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "axes", &axes));
  }
  return kiln_onnx_squeeze(node, x, axes.count, axes.values, &node->outputs[0]);
}

/* x with dims of 1 inserted at `axes` of the output. */
static kiln_status_t kiln_onnx_unsqueeze(kiln_onnx_node_t *node, kiln_expr_t *x,
                                         const kiln_ints_t *axes) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int rank = xt->ndim + axes->count;
  if (rank > KILN_MAX_RANK) {
    return KILN_STATUS(UNIMPLEMENTED, "the result would have rank %d (kiln's limit is %d)", rank,
                       KILN_MAX_RANK);
  }
  bool inserted[KILN_MAX_RANK] = {false};
  for (int32_t i = 0; i < axes->count; ++i) {
    int64_t axis = axes->values[i];
    if (axis < -rank || axis >= rank) {
      return KILN_STATUS(INVALID_ARGUMENT, "axes[%d] is %lld, outside [%d, %d]", (int)i,
                         (long long)axis, -rank, rank - 1);
    }
    axis = axis < 0 ? axis + rank : axis;
    if (inserted[axis]) {
      return KILN_STATUS(INVALID_ARGUMENT, "axes names dim %lld twice", (long long)axis);
    }
    inserted[axis] = true;
  }
  int64_t shape[KILN_MAX_RANK];
  for (int d = 0, from = 0; d < rank; ++d) {
    shape[d] = inserted[d] ? 1 : xt->shape[from++];
  }
  return kiln_onnx_reshape(node, x, rank, shape, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_unsqueeze_attrs(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t axes;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "axes", &axes, NULL));
  return kiln_onnx_unsqueeze(node, x, &axes);
}

kiln_status_t kiln_onnx_convert_unsqueeze_inputs(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t axes;
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (!known) {
    return kiln_onnx_emit_dyn(node, &kiln_op_dyn_unsqueeze, 2, NULL);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "axes", &axes));
  return kiln_onnx_unsqueeze(node, x, &axes);
}

/* ---- Shape and Size ---- */

/* ONNX's clamp of a Shape start or end into [0, rank]. */
static int64_t kiln_onnx_shape_bound(int64_t value, int rank) {
  if (value < 0) {
    value += rank;
  }
  return value < 0 ? 0 : value > rank ? rank : value;
}

/* The shape of a static input is a constant; of an input with a symbolic
 * dim, shape_of, read at run time. */
kiln_status_t kiln_onnx_convert_shape(kiln_onnx_node_t *node) {
  const kiln_tensor_type_t *xt = NULL;
  int64_t start = 0, end = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &xt));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "start", 0, &start));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "end", xt->ndim, &end));
  start = kiln_onnx_shape_bound(start, xt->ndim);
  end = kiln_onnx_shape_bound(end, xt->ndim);
  if (!kiln_tensor_type_is_static(xt)) {
    const kiln_op_t *op = &kiln_op_shape_of;
    void *attrs = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "start", start));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "end", end));
    return kiln_onnx_emit1(node, op, node->inputs[0], attrs, &node->outputs[0]);
  }
  int count = end > start ? (int)(end - start) : 0;
  /* a scalar's shape is empty, and its shape array may be NULL */
  return kiln_onnx_int64s(node, count, count > 0 ? xt->shape + start : NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_size(kiln_onnx_node_t *node) {
  const kiln_tensor_type_t *xt = NULL;
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &xt));
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(xt->ndim, xt->shape, &count));
  return kiln_onnx_scalar(node, KILN_DTYPE_INT64, (double)count, &node->outputs[0]);
}

/* ---- Expand and Tile ---- */

kiln_status_t kiln_onnx_convert_expand(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t shape;
  void *attrs = NULL;
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (!known) {
    return kiln_onnx_emit_dyn(node, &kiln_op_dyn_broadcast_to, 2, NULL);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "shape", &shape));
  const kiln_op_t *op = &kiln_op_broadcast_to;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "shape", shape.count, shape.values));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_tile(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t repeats;
  void *attrs = NULL;
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (!known) {
    return kiln_onnx_emit_dyn(node, &kiln_op_dyn_tile, 2, NULL);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "repeats", &repeats));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (repeats.count != xt->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "repeats has %d values; the input has rank %d",
                       (int)repeats.count, xt->ndim);
  }
  const kiln_op_t *op = &kiln_op_tile;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_ints(node, op, attrs, "reps", repeats.count, repeats.values));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* ---- DepthToSpace and SpaceToDepth ---- */

kiln_status_t kiln_onnx_convert_depth_space(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t block = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (!kiln_onnx_attr(node, "blocksize")) {
    return KILN_STATUS(INVALID_ARGUMENT, "attribute blocksize is required");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "blocksize", 0, &block));
  bool to_space = strcmp(node->proto->op_type, "DepthToSpace") == 0;
  const kiln_op_t *op = to_space ? &kiln_op_depth_to_space : &kiln_op_space_to_depth;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "block_size", block));
  if (to_space) {
    const char *mode = "DCR";
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "mode", "DCR", &mode));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_string(op, attrs, "mode", mode));
  }
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* ---- Trilu and EyeLike ---- */

kiln_status_t kiln_onnx_convert_trilu(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  int64_t upper = 1, k = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "upper", 1, &upper));
  bool known = true;
  if (kiln_onnx_input_optional(node, 1)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  }
  if (!known) { /* trilu reads k at run time; its output type does not depend on it */
    const kiln_op_t *op = &kiln_op_trilu;
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "upper", upper != 0));
    return kiln_onnx_emit_dyn(node, op, 2, attrs);
  }
  if (kiln_onnx_input_optional(node, 1)) {
    kiln_ints_t ks;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "k", &ks));
    if (ks.count != 1) {
      return KILN_STATUS(INVALID_ARGUMENT, "input 1 (k) has %d values; expected one",
                         (int)ks.count);
    }
    k = ks.values[0];
  }
  const kiln_op_t *op = &kiln_op_trilu;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "upper", upper != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "k", k));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* A 2-D Constant of the input's shape (and of `dtype`, default the input's)
 * with ones on the diagonal shifted by k. */
kiln_status_t kiln_onnx_convert_eye_like(kiln_onnx_node_t *node) {
  const kiln_tensor_type_t *xt = NULL;
  int64_t k = 0, dtype_attr = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &xt));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "k", 0, &k));
  kiln_dtype_t dtype = xt->dtype;
  if (kiln_onnx_attr(node, "dtype")) {
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "dtype", 0, &dtype_attr));
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(dtype_attr, &dtype), "attribute dtype");
  }
  if (xt->ndim != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "the input has rank %d; EyeLike needs a 2-D input",
                       xt->ndim);
  }
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, dtype, 2, xt->shape, &tensor));
  for (int64_t r = 0; r < xt->shape[0]; ++r) {
    for (int64_t c = 0; c < xt->shape[1]; ++c) {
      kiln_onnx_store_double(tensor, r * xt->shape[1] + c, c - r == k ? 1.0 : 0.0);
    }
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, tensor, &node->outputs[0]);
  kiln_tensor_release(tensor);
  return status;
}
