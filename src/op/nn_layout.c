/*
 * Layouts in the nn operators: checking layout attributes, views, the shared
 * layout rules, and the layout_transform operator.
 *
 * A layout attribute holds TVM's text ("NCHW", "NCHW16c", "OIHW16i16o");
 * kiln_layout_parse (op/layout.h) reads it once into a kiln_layout_t, and
 * kiln_nn_layout_require checks it against what an operator supports.
 * kiln_nn_layout_view then gives, for each primal axis, the extent and
 * strides that place a logical coordinate in storage (kiln_nn_axis_offset),
 * and kiln_nn_layout_shape goes the other way, from logical extents to the
 * storage shape. Conv2d, its NCHWc form and pooling address tensors through
 * these views, so the blocked and the plain forms of an operator run the
 * same loop and sum in the same order. kiln_nn_conv2d_is_nchw answers, from
 * the parsed layouts, the question the channel-rewriting passes ask of a
 * conv.
 *
 * layout_transform follows: any two layouts over the same primal axes (so
 * NCHW <-> NCHW{c}c, NCHW{a}c <-> NCHW{b}c, OIHW <-> OIHW{i}i{o}o, the
 * identity, and permutations such as NCHW <-> NHWC), a split axis having to
 * divide by its factor. The kernel walks the logical index space once and
 * copies each element from its source view offset to its destination view
 * offset, byte-wise, so it serves every dtype.
 */
#include <string.h>

#include "op/impl.h"
#include "op/nn_common.h"
#include "op/nn_compute.h"

/* ---- checking a layout attribute ---- */

/* Whether the primal axes of `layout` are exactly the letters of `axes`. */
static bool layout_has_primal_axes(const kiln_layout_t *layout, const char *axes) {
  kiln_layout_t expected;
  kiln_status_t status = kiln_layout_parse(axes, &expected);
  if (status != KILN_OK) {
    kiln_status_free(status);
    return false;
  }
  return kiln_layout_same_axes(layout, &expected);
}

/* Whether the split axes of `layout` are among `allowed` and include `required`. */
static bool layout_splits_fit(const kiln_layout_t *layout, const char *allowed,
                              const char *required) {
  for (int i = 0; i < layout->ndim; ++i) {
    if (kiln_layout_axis_is_split(layout, i) && !strchr(allowed, layout->axes[i])) {
      return false;
    }
  }
  for (const char *p = required; *p; ++p) {
    if (kiln_layout_axis_index(layout, *p) < 0) {
      return false;
    }
  }
  return true;
}

kiln_status_t kiln_nn_layout_require(const kiln_op_t *op, const char *attr, const char *text,
                                     const char *primal_axes, const char *allowed_splits,
                                     const char *required_splits, kiln_layout_t *out_layout) {
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(text, out_layout), "%s: %s", op->name, attr);
  if (!layout_has_primal_axes(out_layout, primal_axes)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s must have the primal axes %s (in any order)",
                       op->name, attr, text, primal_axes);
  }
  if (!layout_splits_fit(out_layout, allowed_splits, required_splits)) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: %s %s is not supported (split axes allowed: '%s', required: '%s')",
                       op->name, attr, text, allowed_splits, required_splits);
  }
  return KILN_OK;
}

/* ---- views and shapes ---- */

kiln_status_t kiln_nn_layout_view(const kiln_layout_t *layout, const char *order, int ndim,
                                  const int64_t *shape, kiln_nn_axis_view_t *out_axes) {
  char text[KILN_SHAPE_TEXT_CAPACITY];
  if (ndim != layout->ndim) {
    kiln_shape_format(ndim, shape, text, sizeof(text));
    return KILN_STATUS(INVALID_ARGUMENT, "%s must have rank %d for layout %s, not %d", text,
                       layout->ndim, layout->text, ndim);
  }
  int64_t strides[KILN_LAYOUT_MAX_AXES];
  kiln_shape_compact_strides(ndim, shape, strides);
  for (int i = 0; order[i]; ++i) {
    int outer = kiln_layout_axis_index(layout, order[i]);
    int inner = outer < 0 ? -1 : kiln_layout_split_index(layout, order[i]);
    if (outer < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "layout %s has no axis '%c'", layout->text, order[i]);
    }
    int64_t factor = inner < 0 ? 1 : layout->factors[inner];
    if (inner >= 0 && shape[inner] != factor) {
      kiln_shape_format(ndim, shape, text, sizeof(text));
      return KILN_STATUS(INVALID_ARGUMENT, "%s has %lld at axis '%c' of layout %s, not %lld", text,
                         (long long)shape[inner], layout->axes[inner], layout->text,
                         (long long)factor);
    }
    int64_t extent = 0;
    if (__builtin_mul_overflow(shape[outer], factor, &extent)) {
      kiln_shape_format(ndim, shape, text, sizeof(text));
      return KILN_STATUS(INVALID_ARGUMENT, "%s: axis '%c' is too large", text, order[i]);
    }
    out_axes[i] = (kiln_nn_axis_view_t){.extent = extent,
                                        .outer_stride = strides[outer],
                                        .block = inner < 0 ? 0 : factor,
                                        .inner_stride = inner < 0 ? 0 : strides[inner]};
  }
  return KILN_OK;
}

kiln_status_t kiln_nn_layout_shape(const kiln_layout_t *layout, const char *order,
                                   const int64_t *logical, int64_t *out_shape) {
  for (int i = 0; i < layout->ndim; ++i) {
    char axis = layout->axes[i];
    if (kiln_layout_axis_is_split(layout, i)) {
      out_shape[i] = layout->factors[i];
      continue;
    }
    const char *at = strchr(order, axis);
    if (!at) {
      return KILN_STATUS(INVALID_ARGUMENT, "layout %s has an axis '%c' that %s lacks", layout->text,
                         axis, order);
    }
    int64_t extent = logical[at - order];
    int64_t factor = kiln_layout_factor(layout, axis);
    if (factor > 0 && extent % factor != 0) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "axis %c of extent %lld is not divisible by the block %lld of layout %s",
                         axis, (long long)extent, (long long)factor, layout->text);
    }
    out_shape[i] = factor > 0 ? extent / factor : extent;
  }
  return KILN_OK;
}

/* ---- the shared layout rule of axis-indexed operators ---- */

kiln_status_t kiln_nn_layout_rule_primal(kiln_layout_relation_t *relation, bool output_follows) {
  for (int i = 0; i < relation->num_inputs; ++i) {
    const char *arriving = relation->input_layouts ? relation->input_layouts[i] : NULL;
    if (!arriving || !*arriving) {
      relation->required_layouts[i] = "";
      continue;
    }
    kiln_layout_t layout, primal;
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(arriving, &layout), "%s: input %d",
                                  relation->op->name, i);
    kiln_layout_to_primal(&layout, &primal);
    char *copy = NULL;
    KILN_RETURN_IF_ERROR(kiln_arena_strdup(relation->arena, primal.text, &copy));
    relation->required_layouts[i] = copy;
  }
  relation->output_layout =
      output_follows && relation->num_inputs > 0 ? relation->required_layouts[0] : "";
  return KILN_OK;
}

kiln_status_t kiln_nn_layout_rule_conv(kiln_layout_relation_t *relation, const char *data_layout,
                                       const char *kernel_layout, const char *out_layout) {
  if (relation->num_inputs != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 2 inputs, got %d", relation->op->name,
                       relation->num_inputs);
  }
  relation->required_layouts[0] = data_layout;
  relation->required_layouts[1] = kernel_layout;
  relation->output_layout = out_layout && *out_layout ? out_layout : data_layout;
  return KILN_OK;
}

bool kiln_nn_conv2d_is_nchw(const kiln_nn_conv2d_attrs_t *attrs) {
  const char *out =
      attrs->out_layout && *attrs->out_layout ? attrs->out_layout : attrs->data_layout;
  return kiln_layout_text_equal(attrs->data_layout, "NCHW") &&
         kiln_layout_text_equal(attrs->kernel_layout, "OIHW") &&
         kiln_layout_text_equal(out, "NCHW");
}

/* ---- layout_transform ---- */

static const kiln_attr_field_t layout_transform_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_layout_transform_attrs_t, src_layout, STRING, "\"\""),
    KILN_ATTR_FIELD(kiln_nn_layout_transform_attrs_t, dst_layout, STRING, "\"\""),
};

/* Empty layouts pass validation so that the defaults do (attrs are made at
 * their defaults, validated, then set); the relation, the layout rule and the
 * kernel reject them. */
static kiln_status_t layout_transform_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_nn_layout_transform_attrs_t *a = attrs;
  kiln_layout_t src, dst;
  bool has_src = a->src_layout && *a->src_layout;
  bool has_dst = a->dst_layout && *a->dst_layout;
  if (has_src) {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(a->src_layout, &src), "%s: src_layout",
                                  op->name);
  }
  if (has_dst) {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(a->dst_layout, &dst), "%s: dst_layout",
                                  op->name);
  }
  if (has_src && has_dst && !kiln_layout_same_axes(&src, &dst)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: src_layout %s and dst_layout %s do not have the same primal axes",
                       op->name, a->src_layout, a->dst_layout);
  }
  return KILN_OK;
}

/* Both layouts parsed, and neither empty. */
static kiln_status_t layout_transform_layouts(const kiln_op_t *op, const void *attrs,
                                              kiln_layout_t *out_src, kiln_layout_t *out_dst) {
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, attrs));
  const kiln_nn_layout_transform_attrs_t *a = attrs;
  if (!a->src_layout || !*a->src_layout) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: src_layout is required", op->name);
  }
  if (!a->dst_layout || !*a->dst_layout) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dst_layout is required", op->name);
  }
  KILN_RETURN_IF_ERROR(kiln_layout_parse(a->src_layout, out_src));
  return kiln_layout_parse(a->dst_layout, out_dst);
}

/* The logical view of a source tensor, over the primal axes of src in its
 * order (written to `out_order`), and the destination shape. */
static kiln_status_t layout_transform_plan(const kiln_op_t *op, const kiln_layout_t *src,
                                           const kiln_layout_t *dst, const kiln_tensor_type_t *data,
                                           char *out_order, kiln_nn_axis_view_t *out_src_axes,
                                           int64_t *out_dst_shape) {
  char text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_layout_t primal;
  kiln_layout_to_primal(src, &primal);
  memcpy(out_order, primal.text, (size_t)primal.ndim + 1);
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_nn_layout_view(src, out_order, data->ndim, data->shape, out_src_axes), "%s: data",
      op->name);
  int64_t logical[KILN_LAYOUT_MAX_AXES];
  for (int i = 0; out_order[i]; ++i) {
    logical[i] = out_src_axes[i].extent;
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_nn_layout_shape(dst, out_order, logical, out_dst_shape),
                                "%s: data %s cannot go from %s to %s", op->name,
                                kiln_op_shape_text(data, text), src->text, dst->text);
  return KILN_OK;
}

static kiln_status_t layout_transform_infer(const kiln_type_relation_t *relation,
                                            const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  kiln_layout_t src, dst;
  KILN_RETURN_IF_ERROR(layout_transform_layouts(op, relation->attrs, &src, &dst));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  char order[KILN_LAYOUT_MAX_AXES + 1];
  kiln_nn_axis_view_t axes[KILN_LAYOUT_MAX_AXES];
  int64_t shape[KILN_LAYOUT_MAX_AXES];
  KILN_RETURN_IF_ERROR(layout_transform_plan(op, &src, &dst, data, order, axes, shape));
  return kiln_tensor_type_create(relation->arena, data->dtype, dst.ndim, shape, out_type);
}

static kiln_status_t layout_transform_correct_layout(kiln_layout_relation_t *relation) {
  kiln_layout_t src, dst;
  KILN_RETURN_IF_ERROR(layout_transform_layouts(relation->op, relation->attrs, &src, &dst));
  const kiln_nn_layout_transform_attrs_t *a = relation->attrs;
  relation->required_layouts[0] = a->src_layout;
  relation->output_layout = a->dst_layout;
  return KILN_OK;
}

static kiln_status_t layout_transform_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_check(args));
  const kiln_op_t *op = args->op;
  kiln_layout_t src, dst;
  KILN_RETURN_IF_ERROR(layout_transform_layouts(op, args->attrs, &src, &dst));
  kiln_tensor_type_t in_type = kiln_nn_tensor_type(args->inputs[0]);
  kiln_tensor_type_t out_type = kiln_nn_tensor_type(args->outputs[0]);
  char order[KILN_LAYOUT_MAX_AXES + 1];
  kiln_nn_axis_view_t in_axes[KILN_LAYOUT_MAX_AXES], out_axes[KILN_LAYOUT_MAX_AXES];
  int64_t shape[KILN_LAYOUT_MAX_AXES];
  KILN_RETURN_IF_ERROR(layout_transform_plan(op, &src, &dst, &in_type, order, in_axes, shape));
  KILN_RETURN_IF_ERROR(kiln_nn_layout_view(&dst, order, out_type.ndim, out_type.shape, out_axes));
  if (kiln_tensor_element_count(args->inputs[0]) == 0) {
    return KILN_OK;
  }
  int ndim = (int)strlen(order);
  int64_t extents[KILN_LAYOUT_MAX_AXES], coords[KILN_LAYOUT_MAX_AXES] = {0};
  for (int i = 0; i < ndim; ++i) {
    extents[i] = in_axes[i].extent;
  }
  size_t size = kiln_dtype_size(in_type.dtype);
  const char *in = kiln_tensor_data(args->inputs[0]);
  char *out = kiln_tensor_data(args->outputs[0]);
  do {
    int64_t from = 0, to = 0;
    for (int i = 0; i < ndim; ++i) {
      from += kiln_nn_axis_offset(&in_axes[i], coords[i]);
      to += kiln_nn_axis_offset(&out_axes[i], coords[i]);
    }
    memcpy(out + (size_t)to * size, in + (size_t)from * size, size);
  } while (kiln_nn_next_index(ndim, extents, coords));
  return KILN_OK;
}

const kiln_op_t kiln_op_layout_transform = {
    .name = "layout_transform",
    .id = KILN_OP_LAYOUT_TRANSFORM,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_nn_layout_transform_attrs_t),
    .num_attr_fields = sizeof(layout_transform_fields) / sizeof(layout_transform_fields[0]),
    .attr_fields = layout_transform_fields,
    .validate_attrs = layout_transform_validate,
    .infer_type = layout_transform_infer,
    .correct_layout = layout_transform_correct_layout,
};

const kiln_op_impl_t kiln_op_layout_transform_impl = {
    .reference = layout_transform_reference,
    .compute = kiln_compute_layout_transform,
};
