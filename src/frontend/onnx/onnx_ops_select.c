/*
 * Converters whose output shape depends on values: Compress, NonZero,
 * Unique and ReverseSequence (whose shape does not, but whose indices are
 * read from sequence_lens). NonZero and Unique are the registry's nonzero
 * and unique (op/value_shape.c), which fold to Constants at import when X
 * is known and otherwise count at run time. Compress becomes a take of the
 * selected positions: a constant list when the condition is known at
 * import, else row 0 of nonzero(condition). ReverseSequence is a gather
 * (GatherElements) along the time axis with an index tensor that reverses
 * the first sequence_lens[b] steps of each batch entry and keeps the rest:
 * a Constant computed here when sequence_lens is known at import, else
 * computed by the graph (where, less, subtract on static shapes, so that
 * it compiles too). A length outside [0, steps] then selects an index out
 * of range, which gather reports when it runs. NonMaxSuppression is the
 * registry's vision.non_max_suppression, whose row count depends on the
 * values too.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* ---- Compress and NonZero ---- */

/* The positions where a condition known only at run time holds: row 0
 * of nonzero(condition), a 1-D int64 of run-time length. */
static kiln_status_t kiln_onnx_compress_positions(kiln_onnx_node_t *node,
                                                  kiln_expr_t **out_positions) {
  kiln_expr_t *condition = NULL, *row = NULL, *zero = NULL;
  const kiln_tensor_type_t *ct = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &ct));
  if (ct->ndim != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "condition has rank %d; expected a 1-D tensor", ct->ndim);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &condition));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, &kiln_op_nonzero, condition, NULL, &row));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 0.0, &zero));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_take, attrs, "axis", 0));
  return kiln_onnx_emit2(node, &kiln_op_take, row, zero, attrs, out_positions);
}

/* Compress: take of the positions where the condition holds, along
 * `axis`, or of the flattened input when there is no axis. */
kiln_status_t kiln_onnx_convert_compress(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  const kiln_tensor_t *condition = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  int axis = 0;
  if (kiln_onnx_attr(node, "axis")) {
    int64_t axis_attr = 0;
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis_attr));
    KILN_RETURN_IF_ERROR(kiln_onnx_axis(axis_attr, xt->ndim, &axis));
  } else {
    int64_t count = 1;
    KILN_RETURN_IF_ERROR(kiln_shape_element_count(xt->ndim, xt->shape, &count));
    KILN_RETURN_IF_ERROR(kiln_onnx_reshape(node, x, 1, &count, &x));
  }
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (!known) {
    kiln_expr_t *positions = NULL;
    void *take = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_compress_positions(node, &positions));
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &take));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_take, take, "axis", axis));
    /* a condition longer than the dim selects past its end: an error */
    KILN_RETURN_IF_ERROR(kiln_onnx_set_string(&kiln_op_take, take, "mode", "fast"));
    return kiln_onnx_emit2(node, &kiln_op_take, x, positions, take, &node->outputs[0]);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, 1, "condition", &condition));
  int64_t dim = kiln_onnx_type_of(x)->shape[axis];
  int64_t length = kiln_tensor_element_count(condition);
  if (kiln_tensor_ndim(condition) != 1 || length > dim) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "condition has %lld elements in %d dims; expected a 1-D tensor of at most "
                       "%lld (the dim compressed)",
                       (long long)length, kiln_tensor_ndim(condition), (long long)dim);
  }
  int64_t *positions = NULL, selected = 0;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena,
                                                 (size_t)(length > 0 ? length : 1), sizeof(int64_t),
                                                 8, (void **)&positions));
  for (int64_t i = 0; i < length; ++i) {
    if (kiln_tensor_element_as_double(condition, i) != 0.0) {
      positions[selected++] = i;
    }
  }
  kiln_expr_t *indices = NULL;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_int64s(node, (int)selected, positions, &indices));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_take, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_take, attrs, "axis", axis));
  return kiln_onnx_emit2(node, &kiln_op_take, x, indices, attrs, &node->outputs[0]);
}

/* NonZero: the registry's nonzero, which folds at import when X is known
 * and otherwise counts at run time. */
kiln_status_t kiln_onnx_convert_nonzero(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_value(node, 0, &x));
  return kiln_onnx_emit1(node, &kiln_op_nonzero, x, NULL, &node->outputs[0]);
}

/* ---- ReverseSequence ---- */

/* `x` reshaped to `rank` dims, all 1 but its `count` elements at `axis`. */
static kiln_status_t kiln_onnx_along(const kiln_onnx_node_t *node, kiln_expr_t *x, int rank,
                                     int axis, int64_t count, kiln_expr_t **out_expr) {
  int64_t shape[KILN_MAX_RANK];
  for (int d = 0; d < rank; ++d) {
    shape[d] = d == axis ? count : 1;
  }
  return kiln_onnx_reshape(node, x, rank, shape, out_expr);
}

/* The gather index for sequence_lens known only at run time, computed by
 * the graph: t < len[b] ? len[b] - 1 - t : t, with t along the time axis
 * and len along the batch axis, broadcast to x's shape. Every shape is
 * static, so the compiled path runs it too. */
static kiln_status_t kiln_onnx_reverse_index(kiln_onnx_node_t *node, const kiln_tensor_type_t *xt,
                                             int time, int batch, kiln_expr_t **out_index) {
  kiln_expr_t *lengths = NULL, *t = NULL, *one = NULL, *reversed = NULL, *inside = NULL;
  const kiln_tensor_type_t *lt = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &lt));
  if (lt->ndim != 1 || lt->shape[0] != xt->shape[batch] ||
      (lt->dtype != KILN_DTYPE_INT64 && lt->dtype != KILN_DTYPE_INT32)) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(lt->ndim, lt->shape, shape, sizeof(shape));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "input 1 (sequence_lens) is %s %s; expected %lld int64 values (the batch)",
                       kiln_dtype_name(lt->dtype), shape, (long long)xt->shape[batch]);
  }
  int64_t steps[4096], count = xt->shape[time];
  if (count > (int64_t)(sizeof(steps) / sizeof(steps[0]))) {
    return KILN_STATUS(UNIMPLEMENTED, "a time axis of %lld steps", (long long)count);
  }
  for (int64_t i = 0; i < count; ++i) {
    steps[i] = i;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 1, &lengths));
  KILN_RETURN_IF_ERROR(kiln_onnx_cast(node, lengths, KILN_DTYPE_INT64, &lengths));
  KILN_RETURN_IF_ERROR(kiln_onnx_along(node, lengths, xt->ndim, batch, lt->shape[0], &lengths));
  KILN_RETURN_IF_ERROR(kiln_onnx_int64s(node, (int)count, steps, &t));
  KILN_RETURN_IF_ERROR(kiln_onnx_along(node, t, xt->ndim, time, count, &t));
  KILN_RETURN_IF_ERROR(kiln_onnx_scalar(node, KILN_DTYPE_INT64, 1.0, &one));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, lengths, one, NULL, &reversed));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_subtract, reversed, t, NULL, &reversed));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit2(node, &kiln_op_less, t, lengths, NULL, &inside));
  kiln_expr_t *args[3] = {inside, reversed, t}, *index = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_emit(node, &kiln_op_where, 3, args, NULL, &index));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_broadcast_to, &attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, &kiln_op_broadcast_to, attrs, "shape", xt->ndim, xt->shape));
  return kiln_onnx_emit1(node, &kiln_op_broadcast_to, index, attrs, out_index);
}

kiln_status_t kiln_onnx_convert_reverse_sequence(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *index = NULL;
  kiln_ints_t lengths;
  int64_t time_attr = 0, batch_attr = 1;
  int time = 0, batch = 0;
  bool known = false;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "time_axis", 0, &time_attr));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "batch_axis", 1, &batch_attr));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->ndim < 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "the input has rank %d; expected at least 2", xt->ndim);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(time_attr, xt->ndim, &time));
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(batch_attr, xt->ndim, &batch));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_known(node, 1, &known));
  if (!known && time != batch) {
    void *gather = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_reverse_index(node, xt, time, batch, &index));
    KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_gather, &gather));
    KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_gather, gather, "axis", time));
    return kiln_onnx_emit2(node, &kiln_op_gather, x, index, gather, &node->outputs[0]);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "sequence_lens", &lengths));
  if (time == batch || lengths.count != xt->shape[batch]) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "time_axis %d, batch_axis %d and %d sequence_lens do not fit the input",
                       time, batch, (int)lengths.count);
  }
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_INT64, xt->ndim, xt->shape, &tensor));
  int64_t count = kiln_tensor_element_count(tensor), *out = kiln_tensor_data(tensor);
  kiln_status_t status = KILN_OK;
  for (int64_t i = 0; i < count && !status; ++i) {
    int64_t rest = i, t = 0, b = 0;
    for (int d = xt->ndim - 1; d >= 0; --d) {
      int64_t coordinate = rest % xt->shape[d];
      rest /= xt->shape[d];
      t = d == time ? coordinate : t;
      b = d == batch ? coordinate : b;
    }
    int64_t length = lengths.values[b];
    if (length < 0 || length > xt->shape[time]) {
      status = KILN_STATUS(INVALID_ARGUMENT, "sequence_lens[%lld] is %lld; the time axis has %lld",
                           (long long)b, (long long)length, (long long)xt->shape[time]);
    }
    out[i] = t < length ? length - 1 - t : t;
  }
  if (!status) {
    status = kiln_onnx_constant(node->importer, tensor, &index);
  }
  kiln_tensor_release(tensor);
  KILN_RETURN_IF_ERROR(status);
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, &kiln_op_gather, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(&kiln_op_gather, attrs, "axis", time));
  return kiln_onnx_emit2(node, &kiln_op_gather, x, index, attrs, &node->outputs[0]);
}

/* ---- Unique ---- */

/* Unique: the registry's unique (sorted, and by_axis when the node has an
 * axis), folded at import when X is known; one TupleGetItem per output. */
kiln_status_t kiln_onnx_convert_unique(kiln_onnx_node_t *node) {
  const kiln_op_t *op = &kiln_op_unique;
  kiln_expr_t *x = NULL, *result = NULL;
  int64_t sorted = 1, axis = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_value(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "sorted", 1, &sorted));
  bool by_axis = kiln_onnx_attr(node, "axis") != NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "sorted", sorted != 0));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "by_axis", by_axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_int(op, attrs, "axis", axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_emit1(node, op, x, attrs, &result));
  for (int i = 0; i < node->num_outputs && i < 4; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_tuple_item(node, result, i, &node->outputs[i]));
  }
  return KILN_OK;
}

/* ---- NonMaxSuppression ---- */

/* NonMaxSuppression: vision.non_max_suppression over (boxes, scores,
 * max_output_boxes_per_class, iou_threshold, score_threshold), each absent
 * optional input an empty Constant (no boxes, threshold 0, no score
 * threshold, as ONNX defines them); center_point_box as it is. */
kiln_status_t kiln_onnx_convert_non_max_suppression(kiln_onnx_node_t *node) {
  const kiln_op_t *op = &kiln_op_non_max_suppression;
  const kiln_dtype_t dtypes[3] = {KILN_DTYPE_INT64, KILN_DTYPE_FLOAT32, KILN_DTYPE_FLOAT32};
  const int64_t empty[1] = {0};
  kiln_expr_t *args[5] = {NULL, NULL, NULL, NULL, NULL};
  int64_t center = 0;
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_inputs_at_most(node, 5));
  for (int i = 0; i < 2; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_input_value(node, i, &args[i]));
  }
  for (int i = 2; i < 5; ++i) {
    args[i] = kiln_onnx_input_optional(node, i);
    if (args[i]) {
      KILN_RETURN_IF_ERROR(kiln_onnx_input_value(node, i, &args[i]));
    } else {
      KILN_RETURN_IF_ERROR(kiln_onnx_filled(node, dtypes[i - 2], 1, empty, 0.0, &args[i]));
    }
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "center_point_box", 0, &center));
  if (center != 0 && center != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "center_point_box is %lld; expected 0 or 1",
                       (long long)center);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, &attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_bool(op, attrs, "center_point_box", center != 0));
  return kiln_onnx_emit(node, op, 5, args, attrs, &node->outputs[0]);
}
