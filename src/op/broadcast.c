/*
 * NumPy broadcasting; see broadcast.h.
 *
 * The shape rule walks the result dims left to right and, for each, folds the
 * operands' dims that align with it (right-aligned), remembering the first
 * size other than 1 so an error can say which two sizes clash. The walker
 * precomputes, per operand, its compact row-major strides laid over the
 * output's dims with 0 on stretched and missing dims; advancing is an
 * odometer increment that adds a stride per operand and, on a carry, takes
 * the dim's whole extent back off. Checking at initialization that every
 * operand broadcasts to the output is what keeps kernels in bounds.
 */
#include "op/broadcast.h"

#include <stdio.h>
#include <string.h>

/* ---- shapes ---- */

const char *kiln_broadcast_shapes_text(int count, const int *ndims, const int64_t *const *shapes,
                                       char *buffer, size_t capacity) {
  if (capacity == 0) {
    return buffer;
  }
  buffer[0] = '\0';
  size_t length = 0;
  for (int k = 0; k < count && length < capacity; ++k) {
    const char *separator = k == 0 ? "" : (k == count - 1 ? " and " : ", ");
    length += (size_t)snprintf(buffer + length, capacity - length, "%s", separator);
    if (length < capacity) {
      length += kiln_shape_format(ndims[k], shapes[k], buffer + length, capacity - length);
    }
  }
  return buffer;
}

static int max_rank(int count, const int *ndims) {
  int rank = 0;
  for (int k = 0; k < count; ++k) {
    rank = ndims[k] > rank ? ndims[k] : rank;
  }
  return rank;
}

kiln_status_t kiln_broadcast_shapes(const char *what, int count, const int *ndims,
                                    const int64_t *const *shapes, int *out_ndim,
                                    int64_t *out_shape) {
  int rank = max_rank(count, ndims);
  if (rank > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: cannot broadcast rank %d (most is %d)", what, rank,
                       KILN_MAX_RANK);
  }
  for (int d = 0; d < rank; ++d) {
    int64_t size = 1;
    for (int k = 0; k < count; ++k) {
      int j = d - (rank - ndims[k]);
      if (j < 0 || shapes[k][j] == 1) {
        continue;
      }
      if (size != 1 && shapes[k][j] != size) {
        char text[KILN_BROADCAST_TEXT_CAPACITY];
        return KILN_STATUS(
            INVALID_ARGUMENT, "%s: cannot broadcast %s: dim %d of the result would be %lld vs %lld",
            what, kiln_broadcast_shapes_text(count, ndims, shapes, text, sizeof(text)), d,
            (long long)size, (long long)shapes[k][j]);
      }
      size = shapes[k][j];
    }
    out_shape[d] = size;
  }
  *out_ndim = rank;
  return KILN_OK;
}

kiln_status_t kiln_broadcast_infer_shape(const kiln_type_relation_t *relation, int first, int count,
                                         int *out_ndim, int64_t *out_shape) {
  if (count > KILN_BROADCAST_MAX_OPERANDS || first < 0 || first + count > relation->num_inputs) {
    return KILN_STATUS(INTERNAL, "%s: broadcast of inputs [%d, %d) of %d", relation->op->name,
                       first, first + count, relation->num_inputs);
  }
  int ndims[KILN_BROADCAST_MAX_OPERANDS];
  const int64_t *shapes[KILN_BROADCAST_MAX_OPERANDS];
  for (int k = 0; k < count; ++k) {
    const kiln_tensor_type_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, first + k, &tensor));
    ndims[k] = tensor->ndim;
    shapes[k] = tensor->shape;
  }
  return kiln_broadcast_shapes(relation->op->name, count, ndims, shapes, out_ndim, out_shape);
}

/* ---- layout ---- */

kiln_status_t kiln_broadcast_correct_layout(kiln_layout_relation_t *relation) {
  const char *name = relation->op->name;
  int rank = -1;
  for (int i = 0; i < relation->num_inputs; ++i) {
    const kiln_tensor_type_t *tensor = kiln_type_as_tensor(relation->input_types[i]);
    if (!tensor) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d must be a typed tensor for layout", name,
                         i);
    }
    rank = tensor->ndim > rank ? tensor->ndim : rank;
  }
  const char *layout = "";
  for (int i = 0; i < relation->num_inputs && layout[0] == '\0'; ++i) {
    const char *arriving = relation->input_layouts[i];
    if (kiln_type_as_tensor(relation->input_types[i])->ndim == rank && arriving) {
      layout = arriving;
    }
  }
  for (int i = 0; i < relation->num_inputs; ++i) {
    int top = kiln_type_as_tensor(relation->input_types[i])->ndim == rank;
    relation->required_layouts[i] = top ? layout : "";
  }
  relation->output_layout = layout;
  return KILN_OK;
}

/* ---- walker ---- */

kiln_status_t kiln_broadcast_walker_initialize(kiln_broadcast_walker_t *walker, int out_ndim,
                                               const int64_t *out_shape, int num_operands,
                                               const int *ndims, const int64_t *const *shapes) {
  memset(walker, 0, sizeof(*walker));
  if (num_operands < 0 || num_operands > KILN_BROADCAST_MAX_OPERANDS) {
    return KILN_STATUS(INVALID_ARGUMENT, "broadcast walker: %d operands (most is %d)", num_operands,
                       KILN_BROADCAST_MAX_OPERANDS);
  }
  KILN_RETURN_IF_ERROR(kiln_shape_element_count(out_ndim, out_shape, &walker->count));
  walker->ndim = out_ndim;
  walker->num_operands = num_operands;
  for (int d = 0; d < out_ndim; ++d) {
    walker->shape[d] = out_shape[d];
  }
  for (int k = 0; k < num_operands; ++k) {
    int lead = out_ndim - ndims[k];
    int fits = lead >= 0;
    int64_t stride = 1;
    for (int j = ndims[k] - 1; j >= 0 && fits; --j) {
      int64_t size = shapes[k][j];
      fits = size == out_shape[lead + j] || size == 1;
      walker->strides[k][lead + j] = size == 1 ? 0 : stride;
      stride *= size;
    }
    if (!fits) {
      char operand[KILN_SHAPE_TEXT_CAPACITY];
      char output[KILN_SHAPE_TEXT_CAPACITY];
      kiln_shape_format(ndims[k], shapes[k], operand, sizeof(operand));
      kiln_shape_format(out_ndim, out_shape, output, sizeof(output));
      return KILN_STATUS(INVALID_ARGUMENT, "operand %d of shape %s does not broadcast to %s", k,
                         operand, output);
    }
  }
  return KILN_OK;
}

kiln_status_t kiln_broadcast_walker_initialize_tensors(kiln_broadcast_walker_t *walker,
                                                       const kiln_tensor_t *output,
                                                       int num_operands,
                                                       kiln_tensor_t *const *operands) {
  int ndims[KILN_BROADCAST_MAX_OPERANDS];
  const int64_t *shapes[KILN_BROADCAST_MAX_OPERANDS];
  int known =
      num_operands < KILN_BROADCAST_MAX_OPERANDS ? num_operands : KILN_BROADCAST_MAX_OPERANDS;
  for (int k = 0; k < known; ++k) {
    ndims[k] = kiln_tensor_ndim(operands[k]);
    shapes[k] = kiln_tensor_shape(operands[k]);
  }
  return kiln_broadcast_walker_initialize(walker, kiln_tensor_ndim(output),
                                          kiln_tensor_shape(output), num_operands, ndims, shapes);
}

void kiln_broadcast_walker_next(kiln_broadcast_walker_t *walker) {
  for (int d = walker->ndim - 1; d >= 0; --d) {
    ++walker->index[d];
    for (int k = 0; k < walker->num_operands; ++k) {
      walker->offsets[k] += walker->strides[k][d];
    }
    if (walker->index[d] < walker->shape[d]) {
      return;
    }
    for (int k = 0; k < walker->num_operands; ++k) {
      walker->offsets[k] -= walker->strides[k][d] * walker->shape[d];
    }
    walker->index[d] = 0;
  }
}
