/*
 * Helpers shared by the reduction and data-movement operators (reduce.c and
 * transform_*.c); private to that family.
 *
 * Each operator computes its output once, in a shape rule that reads its
 * inputs through kiln_tinputs_t: the types of a type relation or the tensors
 * of a reference kernel. The relation turns the rule's kiln_tshape_t into a
 * type; the kernel runs the same rule and checks that the outputs it was given
 * have exactly that dtype and shape before it writes a byte, so a kernel
 * never trusts a caller's buffer sizes. Kernels move data with one strided
 * N-d walker (kiln_walk_t): a row-major multi-index over a shape carrying the
 * element offsets of two operands, each with its own strides (zero for a
 * reduced dim, scaled for a strided one, permuted for a transpose). Values
 * cross dtypes through one scalar (kiln_scalar_t, runtime/scalar.h), which cast,
 * pad and the arithmetic kernels share. Index tensors (take, gather, the
 * scatters) are int32 or int64, read through one loader and resolved by one
 * rule: a negative index counts from the end, and what is still out of range
 * is OUT_OF_RANGE naming the operator, the index and the axis. Layout rules
 * share the primal layout ("NCHW16c" -> "NCHW"): an operator whose
 * attributes count axes asks for its input in the primal layout, the one the
 * attributes were written for. Everything here is static inline: small
 * helpers, one family.
 */
#ifndef KILN_OP_TRANSFORM_COMMON_H_
#define KILN_OP_TRANSFORM_COMMON_H_

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "op/nn_common.h"
#include "op/op.h"
#include "runtime/scalar.h"

/* ---- shape rules ---- */

/* An output's dtype and shape, as a shape rule computes it. */
typedef struct kiln_tshape_t {
  kiln_dtype_t dtype;
  int ndim;
  int64_t dims[KILN_MAX_RANK];
} kiln_tshape_t;

/* The inputs a shape rule reads: a relation's types or a kernel's tensors. */
typedef struct kiln_tinputs_t {
  int count;
  const kiln_type_t *const *types; /* every one a tensor type; or NULL */
  kiln_tensor_t *const *tensors;   /* or NULL */
} kiln_tinputs_t;

typedef kiln_status_t (*kiln_tshape_rule_fn)(const kiln_op_t *op, const void *attrs,
                                             const kiln_tinputs_t *inputs,
                                             kiln_tshape_t *out_shape);

/* Input `index` as a tensor type (for a kernel, a view of the tensor). */
static inline kiln_tensor_type_t kiln_tinputs_get(const kiln_tinputs_t *inputs, int index) {
  if (inputs->types) {
    return *kiln_type_as_tensor(inputs->types[index]);
  }
  const kiln_tensor_t *tensor = inputs->tensors[index];
  kiln_tensor_type_t type = {.base = {KILN_TYPE_KIND_TENSOR},
                             .dtype = kiln_tensor_dtype(tensor),
                             .ndim = kiln_tensor_ndim(tensor),
                             .shape = kiln_tensor_shape(tensor)};
  return type;
}

/* The inputs of a relation, after checking that each is a tensor. */
static inline kiln_status_t kiln_tinputs_of_relation(const kiln_type_relation_t *relation,
                                                     kiln_tinputs_t *out_inputs) {
  for (int i = 0; i < relation->num_inputs; ++i) {
    const kiln_tensor_type_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, i, &tensor));
  }
  *out_inputs = (kiln_tinputs_t){relation->num_inputs, relation->inputs, NULL};
  return KILN_OK;
}

/* The inputs of a kernel, after checking their count. */
static inline kiln_status_t kiln_tinputs_of_kernel(const kiln_kernel_args_t *args,
                                                   kiln_tinputs_t *out_inputs) {
  const kiln_op_t *op = args->op;
  if (args->num_inputs < op->min_inputs ||
      (op->max_inputs >= 0 && args->num_inputs > op->max_inputs)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the kernel got %d inputs", op->name,
                       args->num_inputs);
  }
  for (int i = 0; i < args->num_inputs; ++i) {
    if (!args->inputs[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d is NULL", op->name, i);
    }
  }
  *out_inputs = (kiln_tinputs_t){args->num_inputs, NULL, args->inputs};
  return KILN_OK;
}

static inline kiln_status_t kiln_tshape_to_type(const kiln_op_t *op, const kiln_tshape_t *shape,
                                                kiln_arena_t *arena, const kiln_type_t **out_type) {
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_tensor_type_create(arena, shape->dtype, shape->ndim, shape->dims, out_type), "%s",
      op->name);
  return KILN_OK;
}

/* OK when output `index` has exactly the dtype and shape the rule computed. */
static inline kiln_status_t kiln_tshape_check_output(const kiln_op_t *op, int index,
                                                     const kiln_tensor_t *tensor,
                                                     const kiln_tshape_t *expected) {
  if (!tensor) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d is NULL", op->name, index);
  }
  if (kiln_tensor_dtype(tensor) == expected->dtype &&
      kiln_shape_equal(kiln_tensor_ndim(tensor), kiln_tensor_shape(tensor), expected->ndim,
                       expected->dims)) {
    return KILN_OK;
  }
  char got[KILN_SHAPE_TEXT_CAPACITY];
  char want[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(kiln_tensor_ndim(tensor), kiln_tensor_shape(tensor), got, sizeof(got));
  kiln_shape_format(expected->ndim, expected->dims, want, sizeof(want));
  return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d is %s %s but the inputs give %s %s", op->name,
                     index, got, kiln_dtype_name(kiln_tensor_dtype(tensor)), want,
                     kiln_dtype_name(expected->dtype));
}

/* A type relation from a shape rule (which may assume validated attrs). */
static inline kiln_status_t kiln_tshape_infer_type(const kiln_type_relation_t *relation,
                                                   kiln_tshape_rule_fn rule,
                                                   const kiln_type_t **out_type) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tinputs_of_relation(relation, &inputs));
  KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(relation->op, relation->attrs));
  kiln_tshape_t shape;
  KILN_RETURN_IF_ERROR(rule(relation->op, relation->attrs, &inputs, &shape));
  return kiln_tshape_to_type(relation->op, &shape, relation->arena, out_type);
}

/* A kernel's prologue: checks the inputs, the attrs and the one output
 * against the rule. */
static inline kiln_status_t kiln_tshape_check_kernel(const kiln_kernel_args_t *args,
                                                     kiln_tshape_rule_fn rule,
                                                     kiln_tinputs_t *out_inputs) {
  KILN_RETURN_IF_ERROR(kiln_tinputs_of_kernel(args, out_inputs));
  KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(args->op, args->attrs));
  kiln_tshape_t shape;
  KILN_RETURN_IF_ERROR(rule(args->op, args->attrs, out_inputs, &shape));
  if (args->num_outputs != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 1 output, got %d", args->op->name,
                       args->num_outputs);
  }
  return kiln_tshape_check_output(args->op, 0, args->outputs[0], &shape);
}

static inline kiln_status_t
kiln_transform_unsupported_dtype(const kiln_op_t *op, kiln_dtype_t dtype, const char *supported) {
  return KILN_STATUS(UNIMPLEMENTED, "%s: the reference kernel does not handle %s (only %s)",
                     op->name, kiln_dtype_name(dtype), supported);
}

/* Index of `value` in `names` (count entries), or -1 (also for NULL). */
static inline int kiln_transform_name_index(const char *value, const char *const *names,
                                            int count) {
  for (int i = 0; i < count && value; ++i) {
    if (strcmp(value, names[i]) == 0) {
      return i;
    }
  }
  return -1;
}

/* ---- message text ---- */

#define KILN_INTS_TEXT_CAPACITY 256

/* "[1, -2, 3]" into a buffer of KILN_INTS_TEXT_CAPACITY bytes ("[1, 2, ...]" when long). */
static inline const char *kiln_ints_text(const kiln_ints_t *ints, char *buffer) {
  size_t used = 0;
  buffer[used++] = '[';
  for (int32_t i = 0; i < ints->count; ++i) {
    char item[32];
    int length = snprintf(item, sizeof(item), "%s%lld", i ? ", " : "", (long long)ints->values[i]);
    if (length < 0 || used + (size_t)length + 6 >= KILN_INTS_TEXT_CAPACITY) {
      memcpy(buffer + used, ", ...", 5);
      used += 5;
      break;
    }
    memcpy(buffer + used, item, (size_t)length);
    used += (size_t)length;
  }
  buffer[used++] = ']';
  buffer[used] = '\0';
  return buffer;
}

/* ---- axes ---- */

/* Normalizes `axis` against rank data->ndim + extra (extra 1 where an axis
 * may name the position after the last dim, as in expand_dims). */
static inline kiln_status_t kiln_transform_axis(const kiln_op_t *op, const char *what, int64_t axis,
                                                const kiln_tensor_type_t *data, int extra,
                                                int *out_axis) {
  int rank = data->ndim + extra;
  if (axis < -rank || axis >= rank) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %lld is outside [%d, %d] for data %s", op->name,
                       what, (long long)axis, -rank, rank - 1, kiln_op_shape_text(data, shape));
  }
  *out_axis = (int)(axis < 0 ? axis + rank : axis);
  return KILN_OK;
}

/* Normalizes every entry of attribute `name` (a list of axes of `data`) into
 * out_axes (KILN_MAX_RANK entries) and marks them in out_listed (ndim
 * entries); a repeated axis is an error. */
static inline kiln_status_t kiln_transform_axes(const kiln_op_t *op, const char *name,
                                                const kiln_ints_t *axes,
                                                const kiln_tensor_type_t *data, int *out_axes,
                                                bool *out_listed) {
  for (int d = 0; d < data->ndim; ++d) {
    out_listed[d] = false;
  }
  for (int32_t i = 0; i < axes->count; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "%s[%d]", name, (int)i);
    int axis = 0;
    KILN_RETURN_IF_ERROR(kiln_transform_axis(op, what, axes->values[i], data, 0, &axis));
    if (out_listed[axis]) {
      char list[KILN_INTS_TEXT_CAPACITY];
      char shape[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s names dim %d twice for data %s", op->name,
                         name, kiln_ints_text(axes, list), axis, kiln_op_shape_text(data, shape));
    }
    out_listed[axis] = true;
    out_axes[i] = axis;
  }
  return KILN_OK;
}

/* ---- integer arithmetic ---- */

/* a * b, false on overflow. */
static inline bool kiln_transform_mul(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* a + b, false on overflow. */
static inline bool kiln_transform_add(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* Product of shape[begin, end); 0 when any of them is 0 (so it never
 * overflows for the dims of an existing tensor). */
static inline int64_t kiln_transform_product(const int64_t *shape, int begin, int end) {
  int64_t product = 1;
  for (int d = begin; d < end; ++d) {
    if (shape[d] == 0) {
      return 0;
    }
  }
  for (int d = begin; d < end; ++d) {
    product *= shape[d];
  }
  return product;
}

/* Copies n dims; a loop, not memcpy, since a rank-0 type has no shape array. */
static inline void kiln_transform_copy_dims(int64_t *dst, const int64_t *src, int n) {
  for (int d = 0; d < n; ++d) {
    dst[d] = src[d];
  }
}

/* ---- index tensors ---- */

/* OK when `indices` (named `what` in the error) is int32 or int64. */
static inline kiln_status_t kiln_transform_check_indices(const kiln_op_t *op, const char *what,
                                                         const kiln_tensor_type_t *indices) {
  if (indices->dtype == KILN_DTYPE_INT64 || indices->dtype == KILN_DTYPE_INT32) {
    return KILN_OK;
  }
  char shape[KILN_SHAPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %s must be int32 or int64, not %s", op->name, what,
                     kiln_op_shape_text(indices, shape), kiln_dtype_name(indices->dtype));
}

/* Element j of an int32 or int64 tensor. */
static inline int64_t kiln_transform_load_index(const kiln_tensor_t *indices, int64_t j) {
  const void *data = kiln_tensor_data(indices);
  return kiln_tensor_dtype(indices) == KILN_DTYPE_INT32 ? ((const int32_t *)data)[j]
                                                        : ((const int64_t *)data)[j];
}

/* Index `raw` on axis `axis` of size `dim`: a negative one counts from the
 * end; what is still outside [0, dim) is OUT_OF_RANGE naming the operator,
 * the index and the axis. */
static inline kiln_status_t kiln_transform_resolve_index(const kiln_op_t *op, int64_t raw, int axis,
                                                         int64_t dim, int64_t *out_index) {
  int64_t index = raw < 0 ? raw + dim : raw;
  if (index < 0 || index >= dim) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: index %lld is out of range for axis %d of size %lld",
                       op->name, (long long)raw, axis, (long long)dim);
  }
  *out_index = index;
  return KILN_OK;
}

/* ---- the strided walker ---- */

/* A row-major walk over `shape` carrying the element offsets of two operands. */
typedef struct kiln_walk_t {
  int ndim;
  int64_t shape[KILN_MAX_RANK];
  int64_t index[KILN_MAX_RANK];
  int64_t strides[2][KILN_MAX_RANK];
  int64_t offset[2];
} kiln_walk_t;

/* Starts at index 0 with zero strides and offsets (a caller may then set
 * strides and starting offsets); returns the number of positions (0 for an
 * empty shape). */
static inline int64_t kiln_walk_begin(kiln_walk_t *walk, int ndim, const int64_t *shape) {
  memset(walk, 0, sizeof(*walk));
  walk->ndim = ndim;
  kiln_transform_copy_dims(walk->shape, shape, ndim);
  return kiln_transform_product(shape, 0, ndim);
}

/* Moves to the next position; after the last one the walk is back at its
 * start (index 0, starting offsets) and returns false, so it can be reused. */
static inline bool kiln_walk_next(kiln_walk_t *walk) {
  for (int d = walk->ndim - 1; d >= 0; --d) {
    walk->offset[0] += walk->strides[0][d];
    walk->offset[1] += walk->strides[1][d];
    if (++walk->index[d] < walk->shape[d]) {
      return true;
    }
    walk->offset[0] -= walk->strides[0][d] * walk->shape[d];
    walk->offset[1] -= walk->strides[1][d] * walk->shape[d];
    walk->index[d] = 0;
  }
  return false;
}

/* Copies `count` elements of `element_size` bytes from src (operand 1) to dst
 * (operand 0) along a walk. */
static inline void kiln_walk_copy(kiln_walk_t *walk, int64_t count, char *dst, const char *src,
                                  size_t element_size) {
  for (int64_t i = 0; i < count; ++i) {
    memcpy(dst + walk->offset[0] * (ptrdiff_t)element_size,
           src + walk->offset[1] * (ptrdiff_t)element_size, element_size);
    kiln_walk_next(walk);
  }
}

/* ---- layouts ---- */

/* The layout input `index` arrives in; "" when unknown. */
static inline const char *kiln_layout_arriving(const kiln_layout_relation_t *relation, int index) {
  const char *layout = relation->input_layouts ? relation->input_layouts[index] : NULL;
  return layout ? layout : "";
}

/* The primal layout of `layout`, its upper-case axes in order ("NCHW16c" ->
 * "NCHW"); "" stays "". Parsed by the one layout parser (op/layout.h). */
static inline kiln_status_t kiln_layout_primal(const kiln_layout_relation_t *relation,
                                               const char *layout, const char **out_layout) {
  if (layout[0] == '\0') {
    *out_layout = layout;
    return KILN_OK;
  }
  kiln_layout_t parsed, primal;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(layout, &parsed), "%s: \"%s\" is not a layout",
                                relation->op->name, layout);
  if (!kiln_layout_is_blocked(&parsed)) {
    *out_layout = layout;
    return KILN_OK;
  }
  kiln_layout_to_primal(&parsed, &primal);
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(relation->arena, primal.text, &copy));
  *out_layout = copy;
  return KILN_OK;
}

/* The primal layout of the first input that arrives with a known layout; "" when none does. */
static inline kiln_status_t kiln_layout_first_primal(const kiln_layout_relation_t *relation,
                                                     const char **out_layout) {
  *out_layout = "";
  for (int i = 0; i < relation->num_inputs; ++i) {
    const char *layout = kiln_layout_arriving(relation, i);
    if (layout[0] != '\0') {
      return kiln_layout_primal(relation, layout, out_layout);
    }
  }
  return KILN_OK;
}

/* out[k] = primal[axes[k]] for k < count; "" when `primal` does not have
 * exactly `ndim` axes (so it cannot describe the input). */
static inline kiln_status_t kiln_layout_select(const kiln_layout_relation_t *relation,
                                               const char *primal, int ndim, int count,
                                               const int *axes, const char **out_layout) {
  *out_layout = "";
  if (strlen(primal) != (size_t)ndim || ndim == 0) {
    return KILN_OK;
  }
  char *layout = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(relation->arena, (size_t)count + 1, 1, (void **)&layout));
  for (int k = 0; k < count; ++k) {
    layout[k] = primal[axes[k]];
  }
  layout[count] = '\0';
  *out_layout = layout;
  return KILN_OK;
}

/* The rule of operators that keep the axes of their inputs (concatenate,
 * split, strided_slice, pad, a reduction with keepdims): every input in the
 * primal layout of the first known one, and the output in it too. */
static inline kiln_status_t kiln_layout_keep_axes(kiln_layout_relation_t *relation) {
  const char *primal = "";
  KILN_RETURN_IF_ERROR(kiln_layout_first_primal(relation, &primal));
  for (int i = 0; i < relation->num_inputs; ++i) {
    relation->required_layouts[i] = primal;
  }
  relation->output_layout = primal;
  return KILN_OK;
}

/* The rule of operators whose output axes cannot be named (reshape,
 * expand_dims, batch_flatten): the input in its primal layout, the output
 * unknown. */
static inline kiln_status_t kiln_layout_unknown_output(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_layout_keep_axes(relation));
  relation->output_layout = "";
  return KILN_OK;
}

/* The rule of an image operator whose other inputs (a grid, boxes) have no
 * channels: its data (input 0) in NCHW, any layout for the rest, NCHW out. */
static inline kiln_status_t kiln_layout_nchw_data(kiln_layout_relation_t *relation) {
  for (int i = 0; i < relation->num_inputs; ++i) {
    relation->required_layouts[i] = i == 0 ? "NCHW" : "";
  }
  relation->output_layout = "NCHW";
  return KILN_OK;
}

/* The input tensor type a layout rule reads, or an error naming the operator. */
static inline kiln_status_t kiln_layout_input_type(const kiln_layout_relation_t *relation,
                                                   int index, const kiln_tensor_type_t **out_type) {
  const kiln_tensor_type_t *type =
      relation->input_types ? kiln_type_as_tensor(relation->input_types[index]) : NULL;
  if (!type) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the layout rule needs the tensor type of input %d",
                       relation->op->name, index);
  }
  *out_type = type;
  return KILN_OK;
}

#endif /* KILN_OP_TRANSFORM_COMMON_H_ */
