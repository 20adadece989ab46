/*
 * Gather, scatter and along-an-axis converters: GatherElements, GatherND,
 * ScatterElements (and the deprecated Scatter), ScatterND, MaxUnpool,
 * OneHot, TopK and CumSum.
 *
 * Each is one registry operator with ONNX's semantics (gather is ONNX's
 * GatherElements, gather_nd and scatter_nd use ONNX's index layout), so the
 * converters move attributes across and read at import the inputs the
 * registry takes as attributes: OneHot's depth and values (off, on), TopK's
 * K (an input from opset 10, an attribute before), CumSum's axis; when they
 * depend on the graph's inputs, the dyn operator reading them at run time
 * (dyn.one_hot, dyn.topk, dyn.cumsum: op/dyn.c). TopK's
 * tuple result gives one TupleGetItem per output. MaxUnpool scatters the
 * values into a zero tensor of the output's size at their flat indices
 * (MaxPool's Indices count over the whole tensor, N and C included); an
 * output_shape known only at run time is read by the graph (take of each
 * dim, dyn.broadcast_to zeros, dyn.reshape).
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* The node's int attribute `name` copied into field `field` of attrs. */
static kiln_status_t kiln_onnx_copy_int(const kiln_onnx_node_t *node, const char *name,
                                        int64_t fallback, const kiln_op_t *op, void *attrs,
                                        const char *field) {
  int64_t value = fallback;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, name, fallback, &value));
  return kiln_onnx_set_int(op, attrs, field, value);
}

/* The node's `reduction` attribute (opset 16+) into the scatter's attrs. */
static kiln_status_t kiln_onnx_copy_reduction(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                              void *attrs) {
  const char *reduction = "none";
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "reduction", "none", &reduction));
  if (strcmp(reduction, "none") != 0 && strcmp(reduction, "add") != 0 &&
      strcmp(reduction, "mul") != 0) {
    return KILN_STATUS(UNIMPLEMENTED, "reduction \"%s\" is not supported (none, add, mul)",
                       reduction);
  }
  return kiln_onnx_set_string(op, attrs, "reduction", reduction);
}

kiln_status_t kiln_onnx_convert_gather_elements(kiln_onnx_node_t *node) {
  kiln_expr_t *data = NULL, *indices = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &indices));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_gather, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_int(node, "axis", 0, &kiln_op_gather, attrs, "axis"));
  return kiln_onnx_emit2(node, &kiln_op_gather, data, indices, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_gather_nd(kiln_onnx_node_t *node) {
  kiln_expr_t *data = NULL, *indices = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &data));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &indices));
  const kiln_op_t *op = &kiln_op_gather_nd;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_int(node, "batch_dims", 0, op, attrs, "batch_dims"));
  return kiln_onnx_emit2(node, op, data, indices, attrs, &node->outputs[0]);
}

/* ScatterElements, and Scatter (opsets 9 and 10, the same without reduction). */
kiln_status_t kiln_onnx_convert_scatter_elements(kiln_onnx_node_t *node) {
  kiln_expr_t *args[3];
  void *attrs = NULL;
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  const kiln_op_t *op = &kiln_op_scatter_elements;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_int(node, "axis", 0, op, attrs, "axis"));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_reduction(node, op, attrs));
  return kiln_onnx_emit(node, op, 3, args, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_scatter_nd(kiln_onnx_node_t *node) {
  kiln_expr_t *args[3];
  void *attrs = NULL;
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input(node, i, &args[i]));
  }
  const kiln_op_t *op = &kiln_op_scatter_nd;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_reduction(node, op, attrs));
  return kiln_onnx_emit(node, op, 3, args, attrs, &node->outputs[0]);
}

/* OneHot(indices, depth, values = [off, on]): one_hot with depth and the
 * values read at import, in the values' dtype. */
/* OneHot with depth or values known only at run time: dyn.one_hot, the
 * dtype from the values' type. */
static kiln_status_t kiln_onnx_one_hot_dyn(kiln_onnx_node_t *node) {
  const kiln_op_t *op = &kiln_op_dyn_one_hot;
  const kiln_tensor_type_t *values = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 2, &values));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_int(node, "axis", -1, op, attrs, "axis"));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(op, attrs, "dtype", values->dtype));
  return kiln_onnx_emit_dyn(node, op, 3, attrs);
}

kiln_status_t kiln_onnx_convert_one_hot(kiln_onnx_node_t *node) {
  kiln_expr_t *indices = NULL;
  const kiln_tensor_t *values = NULL;
  double depth = 0.0;
  void *attrs = NULL;
  bool known = true;
  for (int i = 1; i < 3 && known; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, i, &known));
  }
  if (!known) {
    return kiln_onnx_one_hot_dyn(node);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &indices));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_scalar(node, 1, "depth", &depth));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, 2, "values", &values));
  if (kiln_tensor_element_count(values) != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "input 2 (values) has %lld elements; expected 2 (off, on)",
                       (long long)kiln_tensor_element_count(values));
  }
  if (!(depth >= 1.0 && depth < 9007199254740992.0)) {
    return KILN_STATUS(INVALID_ARGUMENT, "depth is %g; expected a positive number", depth);
  }
  const kiln_op_t *op = &kiln_op_one_hot;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "depth", (int64_t)depth));
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_int(node, "axis", -1, op, attrs, "axis"));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_float(op, attrs, "off_value", kiln_tensor_element_as_double(values, 0)));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_float(op, attrs, "on_value", kiln_tensor_element_as_double(values, 1)));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(op, attrs, "dtype", kiln_tensor_dtype(values)));
  return kiln_onnx_emit1(node, op, indices, attrs, &node->outputs[0]);
}

/* TopK's attributes other than k onto `attrs` of `op` (topk or dyn.topk). */
static kiln_status_t kiln_onnx_topk_attrs(kiln_onnx_node_t *node, const kiln_op_t *op,
                                          void *attrs) {
  int64_t largest = 1, sorted = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_copy_int(node, "axis", -1, op, attrs, "axis"));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "largest", 1, &largest));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "sorted", 1, &sorted));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "largest", largest != 0));
  return kiln_onnx_set_bool(op, attrs, "sorted", sorted != 0);
}

/* The node's outputs from topk's (values, indices) tuple. */
static kiln_status_t kiln_onnx_topk_outputs(kiln_onnx_node_t *node, kiln_expr_t *result) {
  for (int i = 0; i < node->num_outputs && i < 2; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, result, i, &node->outputs[i]));
  }
  return KILN_OK;
}

/* TopK with K known only at run time: dyn.topk. */
static kiln_status_t kiln_onnx_topk_dyn(kiln_onnx_node_t *node) {
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_dyn_topk, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_topk_attrs(node, &kiln_op_dyn_topk, attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit_dyn(node, &kiln_op_dyn_topk, 2, attrs));
  return kiln_onnx_topk_outputs(node, node->outputs[0]);
}

/* TopK: k from the attribute (before opset 10) or the constant K input. */
kiln_status_t kiln_onnx_convert_topk(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *result = NULL;
  int64_t k = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  if (node->importer->opset < 10) {
    if (!kiln_onnx_attr(node, "k")) {
      return KILN_STATUS(INVALID_ARGUMENT, "attribute k is required");
    }
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "k", 0, &k));
  } else {
    bool known = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
    if (!known) {
      return kiln_onnx_topk_dyn(node);
    }
    kiln_ints_t ks;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "K", &ks));
    if (ks.count != 1) {
      return KILN_STATUS(INVALID_ARGUMENT, "input 1 (K) has %d values; expected one",
                         (int)ks.count);
    }
    k = ks.values[0];
  }
  const kiln_op_t *op = &kiln_op_topk;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "k", k));
  KILN_RETURN_IF_ERROR(kiln_onnx_topk_attrs(node, op, attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &result));
  return kiln_onnx_topk_outputs(node, result);
}

kiln_status_t kiln_onnx_convert_cumsum(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  kiln_ints_t axis;
  void *attrs = NULL;
  bool known = false;
  int64_t exclusive = 0, reverse = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "exclusive", 0, &exclusive));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "reverse", 0, &reverse));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  const kiln_op_t *op = known ? &kiln_op_cumsum : &kiln_op_dyn_cumsum;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "exclusive", exclusive != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "reverse", reverse != 0));
  if (!known) {
    return kiln_onnx_emit_dyn(node, op, 2, attrs);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "axis", &axis));
  if (axis.count != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "input 1 (axis) has %d values; expected one",
                       (int)axis.count);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis.values[0]));
  return kiln_onnx_emit1(node, op, x, attrs, &node->outputs[0]);
}

/* ---- MaxUnpool ---- */

/* output_shape (a constant input), which must keep N and C. */
static kiln_status_t kiln_onnx_unpool_given(const kiln_onnx_node_t *node,
                                            const kiln_tensor_type_t *xt, int64_t *shape) {
  kiln_ints_t given;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 2, "output_shape", &given));
  if (given.count != xt->ndim || given.values[0] != xt->shape[0] ||
      given.values[1] != xt->shape[1]) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "output_shape has %d values; expected %d that keep N and C",
                       (int)given.count, xt->ndim);
  }
  memcpy(shape, given.values, sizeof(int64_t) * (size_t)xt->ndim);
  return KILN_OK;
}

/* The unpooled shape from the attributes: (in - 1) * stride - pads +
 * kernel per spatial dim. */
static kiln_status_t kiln_onnx_unpool_shape(const kiln_onnx_node_t *node,
                                            const kiln_tensor_type_t *xt, int64_t *shape) {
  kiln_ints_t kernel, strides, pads;
  bool has_strides = false, has_pads = false;
  int spatial = xt->ndim - 2;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "kernel_shape", &kernel, NULL));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "strides", &strides, &has_strides));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "pads", &pads, &has_pads));
  if (kernel.count != spatial || (has_strides && strides.count != spatial) ||
      (has_pads && pads.count != 2 * spatial)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "kernel_shape, strides and pads have %d, %d and %d values for %d spatial "
                       "dims",
                       (int)kernel.count, (int)strides.count, (int)pads.count, spatial);
  }
  shape[0] = xt->shape[0];
  shape[1] = xt->shape[1];
  for (int d = 0; d < spatial; ++d) {
    int64_t stride = has_strides ? strides.values[d] : 1;
    int64_t pad = has_pads ? pads.values[d] + pads.values[spatial + d] : 0;
    shape[2 + d] = (xt->shape[2 + d] - 1) * stride - pad + kernel.values[d];
  }
  return KILN_OK;
}

/* Flat indices into `from` (the unpooled shape) re-flattened into the
 * output shape, whose dims are the scalar expressions `to` (Constants, or
 * read from output_shape at run time): the same coordinates, as ONNX's
 * reference places them. */
static kiln_status_t kiln_onnx_unpool_reindex(const kiln_onnx_node_t *node, int ndim,
                                              const int64_t *from, kiln_expr_t *const *to,
                                              kiln_expr_t **inout) {
  kiln_expr_t *rest = *inout, *sum = NULL, *scalar = NULL, *term = NULL, *stride = NULL;
  kiln_dtype_t dtype = kiln_onnx_type_of(rest)->dtype;
  for (int d = ndim - 1; d >= 1; --d) {
    if (d >= 2) { /* the coordinate of spatial dim d in `from` */
      KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, (double)from[d], &scalar));
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_floor_mod, rest, scalar, NULL, &term));
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_divide, rest, scalar, NULL, &rest));
    } else { /* what is left is n * C + c */
      term = rest;
    }
    if (stride) {
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, term, stride, NULL, &term));
    }
    if (sum) {
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_add, sum, term, NULL, &term));
    }
    sum = term;
    if (stride) {
      KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_multiply, stride, to[d], NULL, &stride));
    } else {
      stride = to[d];
    }
  }
  *inout = sum;
  return KILN_OK;
}

/* The output shape's dims as scalar Constants of `dtype`. */
static kiln_status_t kiln_onnx_unpool_dims(const kiln_onnx_node_t *node, int ndim,
                                           const int64_t *shape, kiln_dtype_t dtype,
                                           kiln_expr_t **out_dims) {
  for (int d = 0; d < ndim; ++d) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, dtype, (double)shape[d], &out_dims[d]));
  }
  return KILN_OK;
}

/* MaxUnpool with output_shape known only at run time: its dims read by
 * take, the values scattered into dyn.broadcast_to zeros of it, flattened
 * and shaped by dyn.reshape. That N and C stay is not checked; an index
 * that falls outside is scatter_elements' error when it runs. */
static kiln_status_t kiln_onnx_max_unpool_late(kiln_onnx_node_t *node, kiln_expr_t *x,
                                               kiln_expr_t *indices, const int64_t *unpooled) {
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x), *gt = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 2, &gt));
  if (gt->ndim != 1 || gt->shape[0] != xt->ndim || gt->dtype != KILN_DTYPE_INT64) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(gt->ndim, gt->shape, shape, sizeof(shape));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "input 2 (output_shape) is %s %s; expected %d int64 values",
                       kiln_dtype_name(gt->dtype), shape, xt->ndim);
  }
  kiln_expr_t *given = node->inputs[2], *dims[KILN_MAX_RANK], *at = NULL, *args[2];
  kiln_dtype_t dtype = kiln_onnx_type_of(indices)->dtype;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &attrs));
  for (int d = 0; d < xt->ndim; ++d) {
    KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, (double)d, &at));
    KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_take, given, at, attrs, &dims[d]));
    KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, dims[d], dtype, &dims[d]));
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_unpool_reindex(node, xt->ndim, unpooled, dims, &indices));
  int64_t count = 1, flat = -1;
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(xt->ndim, xt->shape, &count));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, xt->dtype, 0.0, &args[0]));
  args[1] = given;
  kiln_expr_t *zeros = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_dyn_broadcast_to, 2, args, NULL, &zeros));
  KILN_RETURN_IF_ERROR(kiln_onnx_int64s(node, 1, &flat, &args[1]));
  args[0] = zeros;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_dyn_reshape, 2, args, NULL, &zeros));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 1, &count, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, indices, 1, &count, &indices));
  kiln_expr_t *scatter[3] = {zeros, indices, x};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_scatter_elements, 3, scatter, NULL, &y));
  args[0] = y;
  args[1] = given;
  return kiln_onnx_emit(node, &kiln_op_dyn_reshape, 2, args, NULL, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_max_unpool(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *indices = NULL, *zeros = NULL, *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &indices));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->ndim < 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "X has rank %d; expected (N, C, spatial...)", xt->ndim);
  }
  int64_t unpooled[KILN_MAX_RANK], shape[KILN_MAX_RANK], total = 1, count = 1;
  KILN_RETURN_IF_ERROR(kiln_onnx_unpool_shape(node, xt, unpooled));
  memcpy(shape, unpooled, sizeof(int64_t) * (size_t)xt->ndim);
  bool known = true;
  if (kiln_onnx_input_optional(node, 2)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 2, &known));
  }
  if (!known) {
    return kiln_onnx_max_unpool_late(node, x, indices, unpooled);
  }
  if (kiln_onnx_input_optional(node, 2)) {
    KILN_RETURN_IF_ERROR(kiln_onnx_unpool_given(node, xt, shape));
  }
  if (!kiln_shape_equal(xt->ndim, shape, xt->ndim, unpooled)) {
    kiln_expr_t *dims[KILN_MAX_RANK];
    kiln_dtype_t dtype = kiln_onnx_type_of(indices)->dtype;
    KILN_RETURN_IF_ERROR(kiln_onnx_unpool_dims(node, xt->ndim, shape, dtype, dims));
    KILN_RETURN_IF_ERROR(kiln_onnx_unpool_reindex(node, xt->ndim, unpooled, dims, &indices));
  }
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(xt->ndim, shape, &total));
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(xt->ndim, xt->shape, &count));
  KILN_RETURN_IF_ERROR(kiln_onnx_filled(node, xt->dtype, 1, &total, 0.0, &zeros));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 1, &count, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, indices, 1, &count, &indices));
  kiln_expr_t *args[3] = {zeros, indices, x};
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_scatter_elements, 3, args, NULL, &y));
  return kiln_onnx_reshape(node, y, xt->ndim, shape, &node->outputs[0]);
}
