/*
 * Shape operators: reshape, transpose, expand_dims, squeeze,
 * nn.batch_flatten, tile, broadcast_to, and cast.
 *
 * reshape, expand_dims, squeeze and batch_flatten keep the elements in
 * order, so their kernels are one byte copy after the shape rule has checked
 * the output; they handle every dtype. transpose walks the output with the
 * input's strides permuted, also byte-wise. tile and broadcast_to repeat the
 * input: tile reads output index x of a dim at x mod the input's size there,
 * broadcast_to walks the output with the shared broadcast walker (stride 0
 * on stretched dims); both copy bytes. cast goes through kiln_scalar_t
 * (scalar.h), between any two dtypes: float -> int truncates toward zero and saturates at
 * the target's range (NaN gives 0), int -> narrower int wraps (two's
 * complement, as NumPy), anything -> bool is value != 0, int -> float rounds
 * to nearest. Layout rules: an operator whose attributes count axes wants its
 * input in the primal layout; transpose and squeeze name their output's
 * axes, the others cannot.
 */
#include <string.h>

#include "op/broadcast.h"
#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"
#include "runtime/shape_func.h"

/* ---- shared ---- */

/* The kernel of the operators that only change the shape. */
static kiln_status_t copy_reference(const kiln_kernel_args_t *args, kiln_tshape_rule_fn rule) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, rule, &inputs));
  memmove(kiln_tensor_data(args->outputs[0]), kiln_tensor_data(args->inputs[0]),
          kiln_tensor_byte_size(args->inputs[0]));
  return KILN_OK;
}

/* INVALID_ARGUMENT when a list attribute has more entries than a rank can. */
static kiln_status_t check_list_length(const kiln_op_t *op, const char *name,
                                       const kiln_ints_t *list, int limit) {
  if (list->count > limit) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s has %d entries, more than %d", op->name, name,
                       (int)list->count, limit);
  }
  return KILN_OK;
}

/* ---- reshape ---- */

typedef struct kiln_reshape_attrs_t {
  kiln_ints_t newshape; /* 0 copies the input dim (a 0 with allowzero), -1 is inferred */
  bool allowzero;       /* ONNX's allowzero=1 */
} kiln_reshape_attrs_t;

static const kiln_attr_field_t kiln_reshape_fields[] = {
    KILN_ATTR_FIELD(kiln_reshape_attrs_t, newshape, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_reshape_attrs_t, allowzero, BOOL, "False"),
};

static kiln_status_t reshape_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_reshape_attrs_t *reshape = attrs;
  const kiln_ints_t *newshape = &reshape->newshape;
  KILN_RETURN_IF_ERROR(check_list_length(op, "newshape", newshape, KILN_MAX_RANK));
  int inferred = 0, zeros = 0;
  for (int32_t i = 0; i < newshape->count; ++i) {
    if (newshape->values[i] < -1) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: newshape[%d] is %lld; a dim is >= 0, or -1 to infer it", op->name,
                         (int)i, (long long)newshape->values[i]);
    }
    inferred += newshape->values[i] == -1;
    zeros += newshape->values[i] == 0;
  }
  char list[KILN_INTS_TEXT_CAPACITY];
  if (inferred > 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: newshape %s has more than one -1", op->name,
                       kiln_ints_text(newshape, list));
  }
  if (reshape->allowzero && inferred && zeros) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: newshape %s has -1 and 0 with allowzero", op->name,
                       kiln_ints_text(newshape, list));
  }
  return KILN_OK;
}

/* Product of the dims, 0 when one is 0; false on overflow. */
static bool dims_product(const int64_t *dims, int ndim, int64_t *out_product) {
  *out_product = 0;
  for (int d = 0; d < ndim; ++d) {
    if (dims[d] == 0) {
      return true;
    }
  }
  int64_t product = 1;
  for (int d = 0; d < ndim; ++d) {
    if (!kiln_transform_mul(product, dims[d], &product)) {
      return false;
    }
  }
  *out_product = product;
  return true;
}

static kiln_status_t reshape_rule(const kiln_op_t *op, const void *attrs,
                                  const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_ints_t *newshape = &((const kiln_reshape_attrs_t *)attrs)->newshape;
  bool copies = !((const kiln_reshape_attrs_t *)attrs)->allowzero;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  out_shape->dtype = data.dtype;
  out_shape->ndim = (int)newshape->count;
  int inferred = -1;
  for (int i = 0; i < out_shape->ndim; ++i) {
    int64_t dim = newshape->values[i];
    if (dim == 0 && copies && i >= data.ndim) {
      char shape[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: newshape[%d] is 0 (copy the input dim) but data %s has no dim %d",
                         op->name, i, kiln_op_shape_text(&data, shape), i);
    }
    if (dim == -1) {
      inferred = i;
    }
    out_shape->dims[i] = dim == 0 && copies ? data.shape[i] : dim == -1 ? 1 : dim;
  }
  int64_t count = kiln_transform_product(data.shape, 0, data.ndim);
  int64_t known = 0;
  bool fits = dims_product(out_shape->dims, out_shape->ndim, &known);
  if (fits && inferred >= 0 && known != 0 && count % known == 0) {
    out_shape->dims[inferred] = count / known;
    return KILN_OK;
  }
  if (fits && inferred < 0 && known == count) {
    return KILN_OK;
  }
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  char list[KILN_INTS_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: cannot reshape data %s of %lld elements into %s",
                     op->name, kiln_op_shape_text(&data, shape), (long long)count,
                     kiln_ints_text(newshape, list));
}

static kiln_status_t reshape_infer_type(const kiln_type_relation_t *relation,
                                        const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, reshape_rule, out_type);
}

static kiln_status_t reshape_reference(const kiln_kernel_args_t *args) {
  return copy_reference(args, reshape_rule);
}

const kiln_op_t kiln_op_reshape = {
    .name = "reshape",
    .id = KILN_OP_RESHAPE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_reshape_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_reshape_fields) / sizeof(kiln_reshape_fields[0])),
    .attr_fields = kiln_reshape_fields,
    .validate_attrs = reshape_validate,
    .infer_type = reshape_infer_type,
    .symbolic_dims = true,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_reshape_impl = {
    .reference = reshape_reference,
    .compute = kiln_compute_reshape,
};

/* ---- transpose ---- */

static const kiln_attr_field_t kiln_transpose_fields[] = {
    KILN_ATTR_FIELD(kiln_transpose_attrs_t, axes, INTS, "[]"),
};

static kiln_status_t transpose_validate(const kiln_op_t *op, const void *attrs) {
  return check_list_length(op, "axes", &((const kiln_transpose_attrs_t *)attrs)->axes,
                           KILN_MAX_RANK);
}

/* Output dim k is input dim out_perm[k]. */
static kiln_status_t transpose_perm(const kiln_op_t *op, const void *attrs,
                                    const kiln_tensor_type_t *data, int *out_perm) {
  const kiln_ints_t *axes = &((const kiln_transpose_attrs_t *)attrs)->axes;
  if (axes->count == 0) {
    for (int k = 0; k < data->ndim; ++k) {
      out_perm[k] = data->ndim - 1 - k;
    }
    return KILN_OK;
  }
  if (axes->count != data->ndim) {
    char list[KILN_INTS_TEXT_CAPACITY];
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: axes %s has %d entries but data %s has rank %d",
                       op->name, kiln_ints_text(axes, list), (int)axes->count,
                       kiln_op_shape_text(data, shape), data->ndim);
  }
  bool listed[KILN_MAX_RANK];
  return kiln_transform_axes(op, "axes", axes, data, out_perm, listed);
}

static kiln_status_t transpose_rule(const kiln_op_t *op, const void *attrs,
                                    const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  int perm[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(transpose_perm(op, attrs, &data, perm));
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  for (int k = 0; k < data.ndim; ++k) {
    out_shape->dims[k] = data.shape[perm[k]];
  }
  return KILN_OK;
}

static kiln_status_t transpose_infer_type(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, transpose_rule, out_type);
}

static kiln_status_t transpose_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_layout_keep_axes(relation));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_layout_input_type(relation, 0, &data));
  int perm[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(transpose_perm(relation->op, relation->attrs, data, perm));
  return kiln_layout_select(relation, relation->output_layout, data->ndim, data->ndim, perm,
                            &relation->output_layout);
}

static kiln_status_t transpose_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, transpose_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  const kiln_tensor_t *out = args->outputs[0];
  int perm[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(transpose_perm(args->op, args->attrs, &data, perm));
  int64_t in_strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data.ndim, data.shape, in_strides);
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, data.ndim, kiln_tensor_shape(out));
  kiln_shape_compact_strides(data.ndim, kiln_tensor_shape(out), walk.strides[0]);
  for (int k = 0; k < data.ndim; ++k) {
    walk.strides[1][k] = in_strides[perm[k]];
  }
  kiln_walk_copy(&walk, count, kiln_tensor_data(out), kiln_tensor_data(args->inputs[0]),
                 kiln_dtype_size(data.dtype));
  return KILN_OK;
}

const kiln_op_t kiln_op_transpose = {
    .name = "transpose",
    .id = KILN_OP_TRANSPOSE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_transpose_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_transpose_fields) / sizeof(kiln_transpose_fields[0])),
    .attr_fields = kiln_transpose_fields,
    .validate_attrs = transpose_validate,
    .infer_type = transpose_infer_type,
    .symbolic_dims = true,
    .correct_layout = transpose_layout,
};

const kiln_op_impl_t kiln_op_transpose_impl = {
    .reference = transpose_reference,
    .compute = kiln_compute_transpose,
};

/* ---- expand_dims ---- */

typedef struct kiln_expand_dims_attrs_t {
  int64_t axis; /* in [-(ndim + 1), ndim] */
  int64_t num_newaxis;
} kiln_expand_dims_attrs_t;

static const kiln_attr_field_t kiln_expand_dims_fields[] = {
    KILN_ATTR_FIELD(kiln_expand_dims_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_expand_dims_attrs_t, num_newaxis, INT, "1"),
};

static kiln_status_t expand_dims_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_expand_dims_attrs_t *expand = attrs;
  if (expand->num_newaxis < 0 || expand->num_newaxis > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: num_newaxis is %lld, not in [0, %d]", op->name,
                       (long long)expand->num_newaxis, KILN_MAX_RANK);
  }
  return KILN_OK;
}

static kiln_status_t expand_dims_rule(const kiln_op_t *op, const void *attrs,
                                      const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_expand_dims_attrs_t *expand = attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", expand->axis, &data, 1, &axis));
  int64_t rank = data.ndim + expand->num_newaxis;
  if (rank > KILN_MAX_RANK) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data %s with %lld new axes would have rank %lld, more than %d",
                       op->name, kiln_op_shape_text(&data, shape), (long long)expand->num_newaxis,
                       (long long)rank, KILN_MAX_RANK);
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = 0;
  for (int d = 0; d <= data.ndim; ++d) {
    for (int64_t k = 0; d == axis && k < expand->num_newaxis; ++k) {
      out_shape->dims[out_shape->ndim++] = 1;
    }
    if (d < data.ndim) {
      out_shape->dims[out_shape->ndim++] = data.shape[d];
    }
  }
  return KILN_OK;
}

static kiln_status_t expand_dims_infer_type(const kiln_type_relation_t *relation,
                                            const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, expand_dims_rule, out_type);
}

static kiln_status_t expand_dims_reference(const kiln_kernel_args_t *args) {
  return copy_reference(args, expand_dims_rule);
}

const kiln_op_t kiln_op_expand_dims = {
    .name = "expand_dims",
    .id = KILN_OP_EXPAND_DIMS,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_expand_dims_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_expand_dims_fields) / sizeof(kiln_expand_dims_fields[0])),
    .attr_fields = kiln_expand_dims_fields,
    .validate_attrs = expand_dims_validate,
    .infer_type = expand_dims_infer_type,
    .symbolic_dims = true,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_expand_dims_impl = {
    .reference = expand_dims_reference,
    .compute = kiln_compute_reshape,
};

/* ---- squeeze ---- */

typedef struct kiln_squeeze_attrs_t {
  kiln_ints_t axis; /* [] squeezes every dim of size 1 */
} kiln_squeeze_attrs_t;

static const kiln_attr_field_t kiln_squeeze_fields[] = {
    KILN_ATTR_FIELD(kiln_squeeze_attrs_t, axis, INTS, "[]"),
};

static kiln_status_t squeeze_validate(const kiln_op_t *op, const void *attrs) {
  return check_list_length(op, "axis", &((const kiln_squeeze_attrs_t *)attrs)->axis, KILN_MAX_RANK);
}

/* The dims that stay, in order. */
static kiln_status_t squeeze_kept(const kiln_op_t *op, const void *attrs,
                                  const kiln_tensor_type_t *data, int *out_kept, int *out_count) {
  const kiln_ints_t *axis = &((const kiln_squeeze_attrs_t *)attrs)->axis;
  int axes[KILN_MAX_RANK];
  bool listed[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(kiln_transform_axes(op, "axis", axis, data, axes, listed));
  *out_count = 0;
  for (int d = 0; d < data->ndim; ++d) {
    bool squeezed = axis->count == 0 ? data->shape[d] == 1 : listed[d];
    if (squeezed && data->shape[d] != 1) {
      char shape[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: axis %d of data %s has size %lld, not 1", op->name,
                         d, kiln_op_shape_text(data, shape), (long long)data->shape[d]);
    }
    if (!squeezed) {
      out_kept[(*out_count)++] = d;
    }
  }
  return KILN_OK;
}

static kiln_status_t squeeze_rule(const kiln_op_t *op, const void *attrs,
                                  const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  int kept[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(squeeze_kept(op, attrs, &data, kept, &out_shape->ndim));
  out_shape->dtype = data.dtype;
  for (int k = 0; k < out_shape->ndim; ++k) {
    out_shape->dims[k] = data.shape[kept[k]];
  }
  return KILN_OK;
}

static kiln_status_t squeeze_infer_type(const kiln_type_relation_t *relation,
                                        const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, squeeze_rule, out_type);
}

static kiln_status_t squeeze_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_layout_keep_axes(relation));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_layout_input_type(relation, 0, &data));
  int kept[KILN_MAX_RANK];
  int count = 0;
  KILN_RETURN_IF_ERROR(squeeze_kept(relation->op, relation->attrs, data, kept, &count));
  return kiln_layout_select(relation, relation->output_layout, data->ndim, count, kept,
                            &relation->output_layout);
}

static kiln_status_t squeeze_reference(const kiln_kernel_args_t *args) {
  return copy_reference(args, squeeze_rule);
}

const kiln_op_t kiln_op_squeeze = {
    .name = "squeeze",
    .id = KILN_OP_SQUEEZE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_squeeze_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_squeeze_fields) / sizeof(kiln_squeeze_fields[0])),
    .attr_fields = kiln_squeeze_fields,
    .validate_attrs = squeeze_validate,
    .infer_type = squeeze_infer_type,
    .symbolic_dims = true,
    .correct_layout = squeeze_layout,
};

const kiln_op_impl_t kiln_op_squeeze_impl = {
    .reference = squeeze_reference,
    .compute = kiln_compute_reshape,
};

/* ---- nn.batch_flatten ---- */

static kiln_status_t batch_flatten_rule(const kiln_op_t *op, const void *attrs,
                                        const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  (void)attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  if (data.ndim < 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must have rank >= 1", op->name,
                       kiln_op_shape_text(&data, shape));
  }
  int64_t row = 0;
  if (!dims_product(data.shape + 1, data.ndim - 1, &row)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: a row of data %s has more than %lld elements",
                       op->name, kiln_op_shape_text(&data, shape), (long long)INT64_MAX);
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = 2;
  out_shape->dims[0] = data.shape[0];
  out_shape->dims[1] = row;
  return KILN_OK;
}

static kiln_status_t batch_flatten_infer_type(const kiln_type_relation_t *relation,
                                              const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, batch_flatten_rule, out_type);
}

static kiln_status_t batch_flatten_reference(const kiln_kernel_args_t *args) {
  return copy_reference(args, batch_flatten_rule);
}

const kiln_op_t kiln_op_batch_flatten = {
    .name = "nn.batch_flatten",
    .id = KILN_OP_BATCH_FLATTEN,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .infer_type = batch_flatten_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_batch_flatten_impl = {
    .reference = batch_flatten_reference,
    .compute = kiln_compute_reshape,
};

/* ---- cast ---- */

static const kiln_attr_field_t kiln_cast_fields[] = {
    KILN_ATTR_FIELD(kiln_cast_attrs_t, dtype, DTYPE, "\"float32\""),
};

static kiln_status_t cast_validate(const kiln_op_t *op, const void *attrs) {
  kiln_dtype_t dtype = ((const kiln_cast_attrs_t *)attrs)->dtype;
  if (kiln_scalar_kind(dtype) == KILN_SCALAR_KIND_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dtype %d is not a dtype", op->name, (int)dtype);
  }
  return KILN_OK;
}

static kiln_status_t cast_rule(const kiln_op_t *op, const void *attrs, const kiln_tinputs_t *inputs,
                               kiln_tshape_t *out_shape) {
  (void)op;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  out_shape->dtype = ((const kiln_cast_attrs_t *)attrs)->dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim);
  return KILN_OK;
}

static kiln_status_t cast_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, cast_rule, out_type);
}

static kiln_status_t cast_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, cast_rule, &inputs));
  const kiln_tensor_t *in = args->inputs[0];
  const kiln_tensor_t *out = args->outputs[0];
  kiln_scalar_kind_t from = kiln_scalar_kind(kiln_tensor_dtype(in));
  kiln_scalar_kind_t to = kiln_scalar_kind(kiln_tensor_dtype(out));
  const void *source = kiln_tensor_data(in);
  void *target = kiln_tensor_data(out);
  int64_t count = kiln_tensor_element_count(in);
  for (int64_t i = 0; i < count; ++i) {
    kiln_scalar_store(to, target, i, kiln_scalar_load(from, source, i));
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_cast = {
    .name = "cast",
    .id = KILN_OP_CAST,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_ELEMWISE,
    .attrs_size = sizeof(kiln_cast_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_cast_fields) / sizeof(kiln_cast_fields[0])),
    .attr_fields = kiln_cast_fields,
    .validate_attrs = cast_validate,
    .infer_type = cast_infer_type,
    .symbolic_dims = true,
};

const kiln_op_impl_t kiln_op_cast_impl = {
    .reference = cast_reference,
    .compute = kiln_compute_cast,
};

/* ---- tile ---- */

typedef struct kiln_tile_attrs_t {
  kiln_ints_t reps; /* per dim, aligned at the last; the shorter side is padded with 1s */
} kiln_tile_attrs_t;

static const kiln_attr_field_t kiln_tile_fields[] = {
    KILN_ATTR_FIELD(kiln_tile_attrs_t, reps, INTS, "[]"),
};

static kiln_status_t tile_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_ints_t *reps = &((const kiln_tile_attrs_t *)attrs)->reps;
  KILN_RETURN_IF_ERROR(check_list_length(op, "reps", reps, KILN_MAX_RANK));
  for (int32_t i = 0; i < reps->count; ++i) {
    if (reps->values[i] < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: reps[%d] is %lld; a repetition count is >= 0",
                         op->name, (int)i, (long long)reps->values[i]);
    }
  }
  return KILN_OK;
}

/* The data's dims and the reps, both padded with leading 1s to the output's rank. */
typedef struct tile_plan_t {
  int ndim;
  int64_t in[KILN_MAX_RANK];
  int64_t reps[KILN_MAX_RANK];
} tile_plan_t;

static void tile_plan(const kiln_ints_t *reps, const kiln_tensor_type_t *data,
                      tile_plan_t *out_plan) {
  out_plan->ndim = data->ndim > reps->count ? data->ndim : (int)reps->count;
  for (int d = 0; d < out_plan->ndim; ++d) {
    int j = d - (out_plan->ndim - data->ndim);
    int k = d - (out_plan->ndim - (int)reps->count);
    out_plan->in[d] = j >= 0 ? data->shape[j] : 1;
    out_plan->reps[d] = k >= 0 ? reps->values[k] : 1;
  }
}

static kiln_status_t tile_rule(const kiln_op_t *op, const void *attrs, const kiln_tinputs_t *inputs,
                               kiln_tshape_t *out_shape) {
  const kiln_ints_t *reps = &((const kiln_tile_attrs_t *)attrs)->reps;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  out_shape->dtype = data.dtype;
  return kiln_shape_tile(op->name, data.ndim, data.shape, (int)reps->count, reps->values,
                         &out_shape->ndim, out_shape->dims);
}

static kiln_status_t tile_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, tile_rule, out_type);
}

/* The axes stay where they are unless reps adds leading ones. */
static kiln_status_t tile_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_layout_keep_axes(relation));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_layout_input_type(relation, 0, &data));
  if (((const kiln_tile_attrs_t *)relation->attrs)->reps.count > data->ndim) {
    relation->output_layout = "";
  }
  return KILN_OK;
}

static kiln_status_t tile_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, tile_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  tile_plan_t plan;
  tile_plan(&((const kiln_tile_attrs_t *)args->attrs)->reps, &data, &plan);
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(plan.ndim, plan.in, strides);
  size_t size = kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  kiln_walk_t walk;
  int64_t count = kiln_walk_begin(&walk, plan.ndim, kiln_tensor_shape(args->outputs[0]));
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int d = 0; d < plan.ndim; ++d) {
      offset += (walk.index[d] % plan.in[d]) * strides[d];
    }
    memcpy(dst + (size_t)i * size, src + (size_t)offset * size, size);
    kiln_walk_next(&walk);
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_tile = {
    .name = "tile",
    .id = KILN_OP_TILE,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_INJECTIVE,
    .attrs_size = sizeof(kiln_tile_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_tile_fields) / sizeof(kiln_tile_fields[0])),
    .attr_fields = kiln_tile_fields,
    .validate_attrs = tile_validate,
    .infer_type = tile_infer_type,
    .correct_layout = tile_layout,
};

const kiln_op_impl_t kiln_op_tile_impl = {
    .reference = tile_reference,
    .compute = kiln_compute_tile,
};

/* ---- broadcast_to ---- */

typedef struct kiln_broadcast_to_attrs_t {
  kiln_ints_t shape; /* broadcast with the data's shape (ONNX Expand) */
} kiln_broadcast_to_attrs_t;

static const kiln_attr_field_t kiln_broadcast_to_fields[] = {
    KILN_ATTR_FIELD(kiln_broadcast_to_attrs_t, shape, INTS, "[]"),
};

static kiln_status_t broadcast_to_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_ints_t *shape = &((const kiln_broadcast_to_attrs_t *)attrs)->shape;
  KILN_RETURN_IF_ERROR(check_list_length(op, "shape", shape, KILN_MAX_RANK));
  for (int32_t i = 0; i < shape->count; ++i) {
    if (shape->values[i] < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: shape[%d] is %lld; a dim is >= 0", op->name, (int)i,
                         (long long)shape->values[i]);
    }
  }
  return KILN_OK;
}

static kiln_status_t broadcast_to_rule(const kiln_op_t *op, const void *attrs,
                                       const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_ints_t *shape = &((const kiln_broadcast_to_attrs_t *)attrs)->shape;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  const int ndims[2] = {data.ndim, (int)shape->count};
  const int64_t *const shapes[2] = {data.shape, shape->values};
  out_shape->dtype = data.dtype;
  return kiln_broadcast_shapes(op->name, 2, ndims, shapes, &out_shape->ndim, out_shape->dims);
}

static kiln_status_t broadcast_to_infer_type(const kiln_type_relation_t *relation,
                                             const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, broadcast_to_rule, out_type);
}

static kiln_status_t broadcast_to_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, broadcast_to_rule, &inputs));
  kiln_broadcast_walker_t walker;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_broadcast_walker_initialize_tensors(&walker, args->outputs[0], 1, args->inputs), "%s",
      args->op->name);
  size_t size = kiln_dtype_size(kiln_tensor_dtype(args->inputs[0]));
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *dst = kiln_tensor_data(args->outputs[0]);
  for (int64_t i = 0; i < walker.count; ++i, kiln_broadcast_walker_next(&walker)) {
    memcpy(dst + (size_t)i * size, src + (size_t)walker.offsets[0] * size, size);
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_broadcast_to = {
    .name = "broadcast_to",
    .id = KILN_OP_BROADCAST_TO,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_BROADCAST,
    .attrs_size = sizeof(kiln_broadcast_to_attrs_t),
    .num_attr_fields =
        (int)(sizeof(kiln_broadcast_to_fields) / sizeof(kiln_broadcast_to_fields[0])),
    .attr_fields = kiln_broadcast_to_fields,
    .validate_attrs = broadcast_to_validate,
    .infer_type = broadcast_to_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_broadcast_to_impl = {
    .reference = broadcast_to_reference,
    .compute = kiln_compute_broadcast_to,
};
