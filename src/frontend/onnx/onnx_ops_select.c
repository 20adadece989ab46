/*
 * Converters whose output shape depends on values: Compress, NonZero,
 * Unique and ReverseSequence (whose shape does not, but whose indices are
 * read from sequence_lens). They need those values at import: a Constant,
 * an input given in input_values, or something computed from them (see
 * kiln_onnx_input_constant). Compress becomes a take of the selected
 * positions; NonZero and Unique are Constants computed here; ReverseSequence
 * is a gather (GatherElements) along the time axis with a constant index
 * tensor that reverses the first sequence_lens[b] steps of each batch entry
 * and keeps the rest.
 */
#include <string.h>

#include "frontend/onnx/onnx_convert.h"

/* ---- Compress and NonZero ---- */

/* Compress: take of the positions where the (constant) condition holds,
 * along `axis`, or of the flattened input when there is no axis. */
kiln_status_t kiln_onnx_convert_compress(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL;
  const kiln_tensor_t *condition = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, 1, "condition", &condition));
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

/* NonZero of an input known at import: a Constant (rank, count) of the
 * coordinates of its nonzero elements, in row-major order. */
kiln_status_t kiln_onnx_convert_nonzero(kiln_onnx_node_t *node) {
  const kiln_tensor_t *x = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, 0, "X", &x));
  int rank = kiln_tensor_ndim(x);
  if (rank == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "a scalar input is not supported");
  }
  int64_t count = kiln_tensor_element_count(x), nonzero = 0;
  for (int64_t i = 0; i < count; ++i) {
    nonzero += kiln_tensor_element_as_double(x, i) != 0.0;
  }
  const int64_t shape[2] = {rank, nonzero};
  kiln_tensor_t *result = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, KILN_DTYPE_INT64, 2, shape, &result));
  int64_t *out = kiln_tensor_data(result), column = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (kiln_tensor_element_as_double(x, i) == 0.0) {
      continue;
    }
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      out[d * nonzero + column] = rest % kiln_tensor_shape(x)[d];
      rest /= kiln_tensor_shape(x)[d];
    }
    ++column;
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, result, &node->outputs[0]);
  kiln_tensor_release(result);
  return status;
}

/* ---- ReverseSequence ---- */

kiln_status_t kiln_onnx_convert_reverse_sequence(kiln_onnx_node_t *node) {
  kiln_expr_t *x = NULL, *index = NULL;
  kiln_ints_t lengths;
  int64_t time_attr = 0, batch_attr = 1;
  int time = 0, batch = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_ints(node, 1, "sequence_lens", &lengths));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "time_axis", 0, &time_attr));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "batch_axis", 1, &batch_attr));
  const kiln_tensor_type_t *xt = kiln_onnx_type_of(x);
  if (xt->ndim < 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "the input has rank %d; expected at least 2", xt->ndim);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(time_attr, xt->ndim, &time));
  KILN_RETURN_IF_ERROR(kiln_onnx_axis(batch_attr, xt->ndim, &batch));
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

/* The input seen as (outer, count, inner) around the axis; slice a is the
 * elements [o][a][i] in (o, i) order. */
typedef struct kiln_onnx_unique_t {
  const kiln_tensor_t *x;
  int64_t outer, count, inner;
  int64_t *first;   /* per unique slice: the position of its first occurrence */
  int64_t *inverse; /* per position: its unique slice */
  int64_t *counts;  /* per unique slice */
  int64_t unique;
} kiln_onnx_unique_t;

/* -1, 0, 1 as slice a orders before, with or after slice b (NaN after
 * every number and equal to NaN, so it is one value, as NumPy's unique). */
static int kiln_onnx_unique_compare(const kiln_onnx_unique_t *u, int64_t a, int64_t b) {
  for (int64_t o = 0; o < u->outer; ++o) {
    for (int64_t i = 0; i < u->inner; ++i) {
      double va = kiln_tensor_element_as_double(u->x, (o * u->count + a) * u->inner + i);
      double vb = kiln_tensor_element_as_double(u->x, (o * u->count + b) * u->inner + i);
      bool na = va != va, nb = vb != vb;
      if (na != nb) {
        return na ? 1 : -1;
      }
      if (!na && va != vb) {
        return va < vb ? -1 : 1;
      }
    }
  }
  return 0;
}

/* first, inverse and counts in order of first occurrence. */
static void kiln_onnx_unique_scan(kiln_onnx_unique_t *u) {
  u->unique = 0;
  for (int64_t a = 0; a < u->count; ++a) {
    int64_t k = 0;
    while (k < u->unique && kiln_onnx_unique_compare(u, u->first[k], a) != 0) {
      ++k;
    }
    if (k == u->unique) {
      u->first[u->unique] = a;
      u->counts[u->unique++] = 0;
    }
    u->inverse[a] = k;
    ++u->counts[k];
  }
}

/* Sorts the unique slices (insertion sort, stable) and renumbers inverse. */
static void kiln_onnx_unique_sort(kiln_onnx_unique_t *u, int64_t *rank) {
  for (int64_t k = 1; k < u->unique; ++k) {
    int64_t first = u->first[k], counts = u->counts[k], j = k;
    while (j > 0 && kiln_onnx_unique_compare(u, u->first[j - 1], first) > 0) {
      u->first[j] = u->first[j - 1];
      u->counts[j] = u->counts[j - 1];
      --j;
    }
    u->first[j] = first;
    u->counts[j] = counts;
  }
  for (int64_t k = 0; k < u->unique; ++k) {
    rank[u->inverse[u->first[k]]] = k;
  }
  for (int64_t a = 0; a < u->count; ++a) {
    u->inverse[a] = rank[u->inverse[a]];
  }
}

/* Output `index` of Unique as a 1-D int64 Constant of `values`. */
static kiln_status_t kiln_onnx_unique_ints(kiln_onnx_node_t *node, int index, int64_t count,
                                           const int64_t *values) {
  if (index >= node->num_outputs) {
    return KILN_OK;
  }
  return kiln_onnx_int64s(node, (int)count, values, &node->outputs[index]);
}

/* Y: the unique slices, in the input's dtype, along the axis (or 1-D). */
static kiln_status_t kiln_onnx_unique_values(kiln_onnx_node_t *node, const kiln_onnx_unique_t *u,
                                             bool has_axis, int axis) {
  const kiln_tensor_t *x = u->x;
  int64_t shape[KILN_MAX_RANK];
  int ndim = has_axis ? kiln_tensor_ndim(x) : 1;
  memcpy(shape, kiln_tensor_shape(x), sizeof(int64_t) * (size_t)kiln_tensor_ndim(x));
  shape[has_axis ? axis : 0] = u->unique;
  kiln_tensor_t *y = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_tensor_new(node, kiln_tensor_dtype(x), ndim, shape, &y));
  size_t size = kiln_dtype_size(kiln_tensor_dtype(x)) * (size_t)u->inner;
  for (int64_t o = 0; o < u->outer; ++o) {
    for (int64_t k = 0; k < u->unique; ++k) {
      memcpy((char *)kiln_tensor_data(y) + (size_t)(o * u->unique + k) * size,
             (const char *)kiln_tensor_data(x) + (size_t)(o * u->count + u->first[k]) * size, size);
    }
  }
  kiln_status_t status = kiln_onnx_constant(node->importer, y, &node->outputs[0]);
  kiln_tensor_release(y);
  return status;
}

kiln_status_t kiln_onnx_convert_unique(kiln_onnx_node_t *node) {
  const kiln_tensor_t *x = NULL;
  int64_t sorted = 1, axis_attr = 0;
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_input_constant(node, 0, "X", &x));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "sorted", 1, &sorted));
  bool has_axis = kiln_onnx_attr(node, "axis") != NULL;
  kiln_onnx_unique_t u = {.x = x, .outer = 1, .count = kiln_tensor_element_count(x), .inner = 1};
  if (has_axis) {
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "axis", 0, &axis_attr));
    KILN_RETURN_IF_ERROR(kiln_onnx_axis(axis_attr, kiln_tensor_ndim(x), &axis));
    const int64_t *shape = kiln_tensor_shape(x);
    u.count = shape[axis];
    for (int d = 0; d < kiln_tensor_ndim(x); ++d) {
      u.outer *= d < axis ? shape[d] : 1;
      u.inner *= d > axis ? shape[d] : 1;
    }
  }
  size_t slots = (size_t)(u.count > 0 ? u.count : 1);
  int64_t *scratch = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(node->importer->arena, 4 * slots, sizeof(int64_t),
                                                 8, (void **)&scratch));
  u.first = scratch;
  u.inverse = scratch + slots;
  u.counts = scratch + 2 * slots;
  kiln_onnx_unique_scan(&u);
  if (sorted) {
    kiln_onnx_unique_sort(&u, scratch + 3 * slots);
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_unique_values(node, &u, has_axis, axis));
  KILN_RETURN_IF_ERROR(kiln_onnx_unique_ints(node, 1, u.unique, u.first));
  KILN_RETURN_IF_ERROR(kiln_onnx_unique_ints(node, 2, u.count, u.inverse));
  return kiln_onnx_unique_ints(node, 3, u.unique, u.counts);
}
