/*
 * Opsets 1 to 6: the operator versions before opset 7, mapped onto the
 * converters of the later versions where the meaning is the same, and
 * refused by name where it is not (ONNX's docs/Changelog.md, each
 * operator's versions 1 and 6).
 *
 * Most operators of those opsets differ from their opset-7 form only by
 * the `consumed_inputs` attribute, an in-place hint with no meaning for
 * the result, which the converters ignore as they ignore every attribute
 * they do not read. What does differ is handled here, before the
 * converter runs (kiln_onnx_legacy_prepare), or by the converter asking
 * the legacy default (Cast's `to` spelled as a name, Concat's axis, Selu's
 * constants):
 *
 * - the binary operators (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal,
 *   Greater, Less) broadcast only with `broadcast` = 1, and then only B
 *   onto A: B's dims line up with A's from `axis` (by default A's last
 *   dims), each equal to A's or 1. Such a B is reshaped with trailing ones
 *   so that NumPy broadcasting, which the converters build, gives the same
 *   thing; with `broadcast` = 0 the shapes must be equal;
 * - Dropout and BatchNormalization with `is_test` = 0 (the default) are in
 *   training mode, which drops at random or normalizes with the batch's
 *   statistics: refused; `is_test` = 1 is the inference form of opset 7;
 * - PRelu's slope before opset 7 had its own broadcasting: accepted when it
 *   is one value or X's shape, where every reading agrees;
 * - Pad-1 (attribute `paddings`) and Split-1 (the sizes as a second input)
 *   are refused.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_tensor.h"

/* The binary operators that had `broadcast` and `axis` before opset 7. */
static const char *const kiln_onnx_legacy_binary[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less", NULL};

static bool kiln_onnx_legacy_is_binary(const char *op_type) {
  for (const char *const *name = kiln_onnx_legacy_binary; *name; ++name) {
    if (strcmp(*name, op_type) == 0) {
      return true;
    }
  }
  return false;
}

static kiln_status_t kiln_onnx_legacy_shapes_error(const kiln_tensor_type_t *a,
                                                   const kiln_tensor_type_t *b, const char *why) {
  char sa[KILN_SHAPE_TEXT_CAPACITY], sb[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(a->ndim, a->shape, sa, sizeof(sa));
  kiln_shape_format(b->ndim, b->shape, sb, sizeof(sb));
  return KILN_STATUS(INVALID_ARGUMENT, "inputs %s and %s: %s", sa, sb, why);
}

/* B aligned with A from `axis`: each dim A's or 1, then trailing ones. */
static kiln_status_t kiln_onnx_legacy_align(kiln_onnx_node_t *node, const kiln_tensor_type_t *a,
                                            const kiln_tensor_type_t *b, int64_t axis) {
  if (axis < 0 || axis + b->ndim > a->ndim) {
    return kiln_onnx_legacy_shapes_error(a, b, "B does not fit in A from attribute axis");
  }
  int64_t shape[KILN_MAX_RANK];
  for (int d = 0; d < a->ndim - (int)axis; ++d) {
    shape[d] = d < b->ndim ? b->shape[d] : 1;
    if (shape[d] != 1 && shape[d] != a->shape[axis + d]) {
      return kiln_onnx_legacy_shapes_error(a, b, "B's dims must be A's (or 1) from axis");
    }
  }
  if (a->ndim - (int)axis == b->ndim) {
    return KILN_OK;
  }
  return kiln_onnx_reshape(node, node->inputs[1], a->ndim - (int)axis, shape, &node->inputs[1]);
}

/* Add ... Less before opset 7: `broadcast` and `axis` (see the top). */
static kiln_status_t kiln_onnx_legacy_broadcast(kiln_onnx_node_t *node) {
  const kiln_tensor_type_t *a = NULL, *b = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &b));
  int64_t broadcast = 0, axis = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "broadcast", 0, &broadcast));
  if (broadcast == 0) {
    return kiln_shape_equal(a->ndim, a->shape, b->ndim, b->shape)
               ? KILN_OK
               : kiln_onnx_legacy_shapes_error(a, b,
                                               "the shapes differ and attribute broadcast is 0 "
                                               "(before opset 7 only broadcast = 1 broadcasts)");
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", a->ndim - b->ndim, &axis));
  if (axis < 0 && kiln_onnx_attr(node, "axis")) {
    axis += a->ndim; /* counted from the back */
  }
  return kiln_onnx_legacy_align(node, a, b, axis);
}

/* Dropout and BatchNormalization: only the inference form (is_test = 1). */
static kiln_status_t kiln_onnx_legacy_is_test(const kiln_onnx_node_t *node) {
  int64_t is_test = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "is_test", 0, &is_test));
  if (is_test == 0) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "is_test = 0 (the default before opset 7) is training mode, which is not "
                       "supported; only is_test = 1");
  }
  return KILN_OK;
}

/* PRelu before opset 7: a slope of one value, or of X's shape. */
static kiln_status_t kiln_onnx_legacy_prelu(const kiln_onnx_node_t *node) {
  const kiln_tensor_type_t *x = NULL, *slope = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 1, &slope));
  int64_t count = 1;
  for (int d = 0; d < slope->ndim; ++d) {
    count *= slope->shape[d];
  }
  if (count != 1 && !kiln_shape_equal(x->ndim, x->shape, slope->ndim, slope->shape)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "a slope of other than one value or X's shape is not supported before "
                       "opset 7 (its broadcasting was unspecified)");
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_legacy_prepare(kiln_onnx_node_t *node) {
  const char *op_type = node->proto->op_type;
  int64_t opset = node->importer->opset;
  if (opset >= 7) {
    return KILN_OK;
  }
  if (kiln_onnx_legacy_is_binary(op_type)) {
    return kiln_onnx_legacy_broadcast(node);
  }
  if (strcmp(op_type, "Dropout") == 0 || strcmp(op_type, "BatchNormalization") == 0) {
    return kiln_onnx_legacy_is_test(node);
  }
  if (strcmp(op_type, "PRelu") == 0) {
    return kiln_onnx_legacy_prelu(node);
  }
  if (opset < 2 && (strcmp(op_type, "Pad") == 0 || strcmp(op_type, "Split") == 0)) {
    bool refused = strcmp(op_type, "Pad") == 0 ? kiln_onnx_attr(node, "paddings") != NULL
                                               : node->num_inputs > 1;
    if (refused) {
      return KILN_STATUS(UNIMPLEMENTED, "%s of opset 1 (%s) is not supported", op_type,
                         op_type[0] == 'P' ? "attribute paddings" : "the split input");
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_legacy_cast_to(const kiln_onnx_node_t *node, int64_t *out_to) {
  const Onnx__AttributeProto *attr = kiln_onnx_attr(node, "to");
  if (node->importer->opset >= 6 || !attr ||
      attr->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) {
    return kiln_onnx_attr_int(node, "to", 0, out_to);
  }
  const char *name = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_string(node, "to", "", &name));
  return kiln_onnx_elem_type_from_name(name, out_to);
}

double kiln_onnx_legacy_default(const kiln_onnx_node_t *node, const char *name, double fallback) {
  int64_t opset = node->importer->opset;
  const char *op_type = node->proto->op_type;
  if (opset < 6 && strcmp(op_type, "Selu") == 0) { /* Selu-1's constants */
    return strcmp(name, "alpha") == 0 ? 1.6732 : 1.0507;
  }
  if (opset < 4 && strcmp(op_type, "Concat") == 0) { /* Concat-1: axis optional, 1 */
    return 1.0;
  }
  return fallback;
}
