/*
 * Value-reading shape functions (shape_func.h): one rule per dyn operator
 * whose output shape the VM computes at run time, shared with the
 * reference interpreter (op/dyn.c calls kiln_shape_func_run too).
 *
 * The rules are plain C over dims and int64 values, so they need neither the
 * IR nor the operator registry: the runtime stays free of the compiler. A
 * value input is read as int64 by the caller (the VM from the tensor's int32
 * or int64 data, the interpreter from any integer tensor). Each rule checks
 * what the values may hold (ranges, repeats, a product that must match)
 * and reports a violation as INVALID_ARGUMENT naming the operator and the
 * values, never asserting: values come from the model's inputs.
 */
#include "runtime/shape_func.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "[a, b, c]" of `count` values into `buffer`. */
static const char *values_text(const int64_t *values, int64_t count, char *buffer,
                               size_t capacity) {
  size_t length = (size_t)snprintf(buffer, capacity, "[");
  for (int64_t i = 0; i < count && length < capacity; ++i) {
    length += (size_t)snprintf(buffer + length, capacity - length, "%s%lld", i ? ", " : "",
                               (long long)values[i]);
  }
  if (length < capacity) {
    snprintf(buffer + length, capacity - length, "]");
  }
  return buffer;
}

static bool product(const int64_t *dims, int ndim, int64_t *out_product) {
  int64_t p = 1;
  for (int d = 0; d < ndim; ++d) {
    if (__builtin_mul_overflow(p, dims[d], &p)) {
      return false;
    }
  }
  *out_product = p;
  return true;
}

/* ---- dyn.reshape ---- */

/* Each value: 0 copies the data's dim (a 0 with allowzero), -1 is inferred. */
static kiln_status_t reshape_dims(const kiln_shape_func_arg_t *args, bool allowzero,
                                  int64_t *out_shape, int *out_inferred) {
  const kiln_shape_func_arg_t *data = &args[0], *shape = &args[1];
  char text[KILN_SHAPE_TEXT_CAPACITY], have[KILN_SHAPE_TEXT_CAPACITY];
  bool zeros = false;
  *out_inferred = -1;
  for (int i = 0; i < (int)shape->count; ++i) {
    int64_t dim = shape->values[i];
    bool copies = dim == 0 && !allowzero;
    if (dim < -1 || (dim == -1 && *out_inferred >= 0) || (copies && i >= data->ndim)) {
      kiln_shape_format(data->ndim, data->shape, have, sizeof(have));
      return KILN_STATUS(INVALID_ARGUMENT,
                         "dyn.reshape: shape %s is not a shape for data %s (a dim is >= 0, one "
                         "may be -1, a 0 copies the data's dim)",
                         values_text(shape->values, shape->count, text, sizeof(text)), have);
    }
    zeros = zeros || dim == 0;
    *out_inferred = dim == -1 ? i : *out_inferred;
    out_shape[i] = copies ? data->shape[i] : dim == -1 ? 1 : dim;
  }
  if (allowzero && zeros && *out_inferred >= 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.reshape: shape %s has -1 and 0 with allowzero",
                       values_text(shape->values, shape->count, text, sizeof(text)));
  }
  return KILN_OK;
}

static kiln_status_t reshape_rule(const kiln_shape_func_arg_t *args, int64_t allowzero,
                                  int *out_ndim, int64_t *out_shape) {
  int inferred = -1;
  KILN_RETURN_IF_ERROR(reshape_dims(args, allowzero != 0, out_shape, &inferred));
  *out_ndim = (int)args[1].count;
  int64_t count = 0, known = 0;
  bool fits = product(args[0].shape, args[0].ndim, &count) && product(out_shape, *out_ndim, &known);
  if (fits && inferred >= 0 && known != 0 && count % known == 0) {
    out_shape[inferred] = count / known;
    return KILN_OK;
  }
  if (fits && inferred < 0 && known == count) {
    return KILN_OK;
  }
  char data[KILN_SHAPE_TEXT_CAPACITY], list[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(args[0].ndim, args[0].shape, data, sizeof(data));
  return KILN_STATUS(
      INVALID_ARGUMENT, "dyn.reshape: cannot reshape data %s of %lld elements into %s", data,
      (long long)count, values_text(args[1].values, args[1].count, list, sizeof(list)));
}

/* ---- dyn.squeeze, dyn.unsqueeze ---- */

/* axes in [-rank, rank), none twice, as flags over [0, rank). */
static kiln_status_t axis_flags(const char *op, const kiln_shape_func_arg_t *axes, int rank,
                                bool *out_listed) {
  memset(out_listed, 0, sizeof(bool) * KILN_MAX_RANK);
  for (int64_t i = 0; i < axes->count; ++i) {
    int64_t axis = axes->values[i];
    int64_t at = axis < 0 ? axis + rank : axis;
    if (rank > KILN_MAX_RANK || at < 0 || at >= rank || out_listed[at]) {
      char text[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(
          INVALID_ARGUMENT, "%s: axis %lld of axes %s is out of range or repeated for rank %d", op,
          (long long)axis, values_text(axes->values, axes->count, text, sizeof(text)), rank);
    }
    out_listed[at] = true;
  }
  return KILN_OK;
}

static kiln_status_t squeeze_rule(const kiln_shape_func_arg_t *args, int64_t attr, int *out_ndim,
                                  int64_t *out_shape) {
  (void)attr;
  const kiln_shape_func_arg_t *data = &args[0];
  bool listed[KILN_MAX_RANK];
  if (args[1].count == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.squeeze: axes is empty (the rank must be known)");
  }
  KILN_RETURN_IF_ERROR(axis_flags("dyn.squeeze", &args[1], data->ndim, listed));
  *out_ndim = 0;
  for (int d = 0; d < data->ndim; ++d) {
    if (listed[d] && data->shape[d] != 1) {
      char text[KILN_SHAPE_TEXT_CAPACITY];
      kiln_shape_format(data->ndim, data->shape, text, sizeof(text));
      return KILN_STATUS(INVALID_ARGUMENT, "dyn.squeeze: axis %d of data %s has size %lld, not 1",
                         d, text, (long long)data->shape[d]);
    }
    if (!listed[d]) {
      out_shape[(*out_ndim)++] = data->shape[d];
    }
  }
  return KILN_OK;
}

static kiln_status_t unsqueeze_rule(const kiln_shape_func_arg_t *args, int64_t attr, int *out_ndim,
                                    int64_t *out_shape) {
  (void)attr;
  int rank = args[0].ndim + (int)args[1].count;
  bool listed[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(axis_flags("dyn.unsqueeze", &args[1], rank, listed));
  for (int d = 0, from = 0; d < rank; ++d) {
    out_shape[d] = listed[d] ? 1 : args[0].shape[from++];
  }
  *out_ndim = rank;
  return KILN_OK;
}

/* ---- dyn.broadcast_to ---- */

/* The data's shape and the values broadcast together (ONNX Expand: either
 * side's 1 stretches; the ranks align at the right). */
static kiln_status_t broadcast_to_rule(const kiln_shape_func_arg_t *args, int64_t attr,
                                       int *out_ndim, int64_t *out_shape) {
  (void)attr;
  const kiln_shape_func_arg_t *data = &args[0], *shape = &args[1];
  int rank = data->ndim > (int)shape->count ? data->ndim : (int)shape->count;
  for (int d = 0; d < rank; ++d) {
    int from_data = d - (rank - data->ndim), from_shape = d - (rank - (int)shape->count);
    int64_t a = from_data >= 0 ? data->shape[from_data] : 1;
    int64_t b = from_shape >= 0 ? shape->values[from_shape] : 1;
    if (b < 0 || (a != b && a != 1 && b != 1)) {
      char have[KILN_SHAPE_TEXT_CAPACITY], want[KILN_SHAPE_TEXT_CAPACITY];
      kiln_shape_format(data->ndim, data->shape, have, sizeof(have));
      return KILN_STATUS(INVALID_ARGUMENT, "dyn.broadcast_to: cannot broadcast data %s to shape %s",
                         have, values_text(shape->values, shape->count, want, sizeof(want)));
    }
    out_shape[d] = a == 1 ? b : a;
  }
  *out_ndim = rank;
  return KILN_OK;
}

/* ---- dyn.strided_slice ---- */

static int64_t clamp64(int64_t value, int64_t lo, int64_t hi) {
  return value < lo ? lo : value > hi ? hi : value;
}

/* ONNX Slice on one dim: how many elements are taken (negative begin and
 * end count from the end, then clamp to [0, dim] for a positive step, to
 * [0, dim - 1] and [-1, dim - 1] for a negative one). */
int64_t kiln_shape_slice_count(int64_t dim, int64_t begin, int64_t end, int64_t step) {
  if (dim == 0 || step == 0) {
    return 0;
  }
  begin = begin < 0 ? begin + dim : begin;
  end = end < 0 ? end + dim : end;
  int64_t distance = step > 0 ? clamp64(end, 0, dim) - clamp64(begin, 0, dim)
                              : clamp64(begin, 0, dim - 1) - clamp64(end, -1, dim - 1);
  uint64_t magnitude = step > 0 ? (uint64_t)step : -(uint64_t)step;
  return distance > 0 ? 1 + (int64_t)((uint64_t)(distance - 1) / magnitude) : 0;
}

/* The data axis begin value i applies to: axes[i] (in [-rank, rank), none
 * twice), or i without axes. */
static kiln_status_t slice_axes(const kiln_shape_func_arg_t *args, int *out_axes) {
  const kiln_shape_func_arg_t *axes = &args[4];
  int64_t k = args[1].count, rank = args[0].ndim;
  if (axes->count == 0) {
    for (int i = 0; i < (int)k; ++i) {
      out_axes[i] = i;
    }
    return k <= rank ? KILN_OK
                     : KILN_STATUS(INVALID_ARGUMENT,
                                   "dyn.strided_slice: begin has %lld values for rank %lld",
                                   (long long)k, (long long)rank);
  }
  bool listed[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(axis_flags("dyn.strided_slice", axes, (int)rank, listed));
  for (int i = 0; i < (int)k; ++i) {
    out_axes[i] = (int)(axes->values[i] < 0 ? axes->values[i] + rank : axes->values[i]);
  }
  return KILN_OK;
}

/* data, begin, end, strides, axes (strides one per begin value, none 0;
 * axes none or one per begin value). */
static kiln_status_t strided_slice_rule(const kiln_shape_func_arg_t *args, int64_t attr,
                                        int *out_ndim, int64_t *out_shape) {
  (void)attr;
  int64_t k = args[1].count;
  if (args[2].count != k || args[3].count != k || (args[4].count != 0 && args[4].count != k)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "dyn.strided_slice: begin, end, strides and axes have %lld, %lld, %lld and "
                       "%lld values",
                       (long long)k, (long long)args[2].count, (long long)args[3].count,
                       (long long)args[4].count);
  }
  int axes[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(slice_axes(args, axes));
  const kiln_shape_func_arg_t *data = &args[0];
  memcpy(out_shape, data->shape, sizeof(int64_t) * (size_t)data->ndim);
  for (int i = 0; i < (int)k; ++i) {
    int64_t step = args[3].values[i];
    if (step == 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "dyn.strided_slice: strides[%d] is 0", i);
    }
    out_shape[axes[i]] =
        kiln_shape_slice_count(data->shape[axes[i]], args[1].values[i], args[2].values[i], step);
  }
  *out_ndim = data->ndim;
  return KILN_OK;
}

/* ---- dyn.arange ---- */

kiln_status_t kiln_shape_arange_count(const char *op, double start, double stop, double step,
                                      int64_t *out_count) {
  if (!isfinite(start) || !isfinite(stop) || !isfinite(step) || step == 0.0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: start %g, stop %g and step %g must be finite, and step nonzero", op,
                       start, stop, step);
  }
  double count = ceil((stop - start) / step);
  if (!(count <= KILN_SHAPE_ARANGE_MAX)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: start %g, stop %g, step %g give more than %g elements", op, start, stop,
                       step, KILN_SHAPE_ARANGE_MAX);
  }
  *out_count = count > 0.0 ? (int64_t)count : 0;
  return KILN_OK;
}

/* start, stop, step: one number each. */
static kiln_status_t arange_rule(const kiln_shape_func_arg_t *args, int64_t attr, int *out_ndim,
                                 int64_t *out_shape) {
  (void)attr;
  static const char *const names[3] = {"start", "stop", "step"};
  for (int i = 0; i < 3; ++i) {
    if (args[i].count != 1) {
      return KILN_STATUS(INVALID_ARGUMENT, "dyn.arange: %s has %lld values; expected one", names[i],
                         (long long)args[i].count);
    }
  }
  *out_ndim = 1;
  return kiln_shape_arange_count("dyn.arange", args[0].numbers[0], args[1].numbers[0],
                                 args[2].numbers[0], &out_shape[0]);
}

/* ---- dyn.sum ---- */

/* data, axes (none: every axis); the attribute is keepdims: a reduced dim
 * becomes 1, or goes. */
static kiln_status_t sum_rule(const kiln_shape_func_arg_t *args, int64_t keepdims, int *out_ndim,
                              int64_t *out_shape) {
  const kiln_shape_func_arg_t *data = &args[0];
  bool listed[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(axis_flags("dyn.sum", &args[1], data->ndim, listed));
  *out_ndim = 0;
  for (int d = 0; d < data->ndim; ++d) {
    bool reduced = listed[d] || args[1].count == 0;
    if (!reduced || keepdims) {
      out_shape[(*out_ndim)++] = reduced ? 1 : data->shape[d];
    }
  }
  return KILN_OK;
}

/* ---- dyn.one_hot ---- */

/* indices, depth (one number, truncated: at least 1), values (not read);
 * the attribute is the axis of the new dim, counted over the output's
 * rank. */
static kiln_status_t one_hot_rule(const kiln_shape_func_arg_t *args, int64_t axis, int *out_ndim,
                                  int64_t *out_shape) {
  const kiln_shape_func_arg_t *indices = &args[0];
  double depth = args[1].count == 1 ? args[1].numbers[0] : 0.0;
  if (!(depth >= 1.0 && depth < 9.0e18)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "dyn.one_hot: depth has %lld values, the first %g; expected one number >= 1",
                       (long long)args[1].count, args[1].count ? args[1].numbers[0] : 0.0);
  }
  int rank = indices->ndim + 1;
  if (rank > KILN_MAX_RANK || axis < -rank || axis >= rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.one_hot: axis %lld is out of range for rank %d",
                       (long long)axis, rank);
  }
  int at = (int)(axis < 0 ? axis + rank : axis);
  for (int d = 0; d < rank; ++d) {
    out_shape[d] = d == at ? (int64_t)depth : indices->shape[d < at ? d : d - 1];
  }
  *out_ndim = rank;
  return KILN_OK;
}

/* ---- dyn.pad (and nn.pad's dims) ---- */

int kiln_shape_pad_mode(const char *name) {
  static const char *const modes[] = {"constant", "edge", "reflect"};
  for (int m = 0; name && m < 3; ++m) {
    if (strcmp(name, modes[m]) == 0) {
      return m;
    }
  }
  return -1;
}

kiln_status_t kiln_shape_pad_dim(const char *op, int mode, int ndim, const int64_t *shape, int d,
                                 int64_t before, int64_t after, int64_t *out_size) {
  char text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(ndim, shape, text, sizeof(text));
  int64_t dim = shape[d], size = 0;
  if (__builtin_add_overflow(dim, before, &size) || __builtin_add_overflow(size, after, &size)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: pad_width (%lld, %lld) overflows dim %d of data %s",
                       op, (long long)before, (long long)after, d, text);
  }
  if (size < 0) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: pad_width (%lld, %lld) crops dim %d of data %s below 0", op,
                       (long long)before, (long long)after, d, text);
  }
  int64_t largest = before > after ? before : after;
  if (mode == 1 && dim == 0 && largest > 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: cannot edge-pad dim %d of size 0 in data %s", op, d,
                       text);
  }
  if (mode == 2 && largest > 0 && largest >= dim) {
    return KILN_STATUS(
        INVALID_ARGUMENT,
        "%s: reflect pad %lld of dim %d must be smaller than its size %lld (data %s)", op,
        (long long)largest, d, (long long)dim, text);
  }
  *out_size = size;
  return KILN_OK;
}

/* data, pads (ONNX's: the befores, then the afters, two per dim),
 * constant_value (not read); the attribute is the mode's index. */
static kiln_status_t pad_rule(const kiln_shape_func_arg_t *args, int64_t mode, int *out_ndim,
                              int64_t *out_shape) {
  const kiln_shape_func_arg_t *data = &args[0], *pads = &args[1];
  if (pads->count != 2 * (int64_t)data->ndim) {
    char text[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.pad: pads %s has %lld values; rank %d needs %d",
                       values_text(pads->values, pads->count, text, sizeof(text)),
                       (long long)pads->count, data->ndim, 2 * data->ndim);
  }
  for (int d = 0; d < data->ndim; ++d) {
    KILN_RETURN_IF_ERROR(kiln_shape_pad_dim("dyn.pad", (int)mode, data->ndim, data->shape, d,
                                            pads->values[d], pads->values[data->ndim + d],
                                            &out_shape[d]));
  }
  *out_ndim = data->ndim;
  return KILN_OK;
}

/* ---- dyn.tile (and tile's dims) ---- */

kiln_status_t kiln_shape_tile(const char *op, int ndim, const int64_t *shape, int count,
                              const int64_t *reps, int *out_ndim, int64_t *out_shape) {
  char have[KILN_SHAPE_TEXT_CAPACITY], list[KILN_SHAPE_TEXT_CAPACITY];
  int rank = ndim > count ? ndim : count;
  bool fits = rank <= KILN_MAX_RANK;
  for (int d = 0; fits && d < rank; ++d) {
    int from_data = d - (rank - ndim), from_reps = d - (rank - count);
    int64_t rep = from_reps >= 0 ? reps[from_reps] : 1;
    if (rep < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: reps %s holds %lld; a repetition count is >= 0", op,
                         values_text(reps, count, list, sizeof(list)), (long long)rep);
    }
    fits = !__builtin_mul_overflow(from_data >= 0 ? shape[from_data] : 1, rep, &out_shape[d]);
  }
  int64_t elements = 0;
  if (!fits || !product(out_shape, rank, &elements)) {
    kiln_shape_format(ndim, shape, have, sizeof(have));
    return KILN_STATUS(
        INVALID_ARGUMENT, "%s: data %s tiled by %s has more than %lld elements or rank %d", op,
        have, values_text(reps, count, list, sizeof(list)), (long long)INT64_MAX, KILN_MAX_RANK);
  }
  *out_ndim = rank;
  return KILN_OK;
}

/* data, reps (one per dim, aligned at the last). */
static kiln_status_t tile_rule(const kiln_shape_func_arg_t *args, int64_t attr, int *out_ndim,
                               int64_t *out_shape) {
  (void)attr;
  return kiln_shape_tile("dyn.tile", args[0].ndim, args[0].shape, (int)args[1].count,
                         args[1].values, out_ndim, out_shape);
}

/* ---- dyn.topk (and topk's dims) ---- */

kiln_status_t kiln_shape_topk(const char *op, int ndim, const int64_t *shape, int axis, int64_t k,
                              int64_t *out_shape) {
  char text[KILN_SHAPE_TEXT_CAPACITY];
  if (k < 0 || k > shape[axis]) {
    kiln_shape_format(ndim, shape, text, sizeof(text));
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: k is %lld; it must be in [0, %lld], axis %d of data %s", op,
                       (long long)k, (long long)shape[axis], axis, text);
  }
  memcpy(out_shape, shape, sizeof(int64_t) * (size_t)ndim);
  out_shape[axis] = k;
  return KILN_OK;
}

/* data, k (one value); the attribute is the axis. Both outputs (values,
 * indices) have this shape. */
static kiln_status_t topk_rule(const kiln_shape_func_arg_t *args, int64_t axis, int *out_ndim,
                               int64_t *out_shape) {
  const kiln_shape_func_arg_t *data = &args[0];
  if (args[1].count != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.topk: input 1 (k) has %lld values; expected one",
                       (long long)args[1].count);
  }
  if (axis < -data->ndim || axis >= data->ndim) {
    return KILN_STATUS(INVALID_ARGUMENT, "dyn.topk: axis %lld is out of range for rank %d",
                       (long long)axis, data->ndim);
  }
  *out_ndim = data->ndim;
  return kiln_shape_topk("dyn.topk", data->ndim, data->shape,
                         (int)(axis < 0 ? axis + data->ndim : axis), args[1].values[0], out_shape);
}

/* ---- the table ---- */

static const kiln_shape_func_t shape_funcs[] = {
    {"dyn.reshape", 2, 1u << 1, true, reshape_rule},
    {"dyn.squeeze", 2, 1u << 1, true, squeeze_rule},
    {"dyn.unsqueeze", 2, 1u << 1, true, unsqueeze_rule},
    {"dyn.broadcast_to", 2, 1u << 1, false, broadcast_to_rule},
    {"dyn.strided_slice", 5, 0x1eu, false, strided_slice_rule},
    {"dyn.arange", 3, 0x7u, false, arange_rule, 0x7u},
    {"dyn.one_hot", 3, 0x2u, false, one_hot_rule, 0x2u},
    {"dyn.sum", 2, 0x2u, false, sum_rule},
    {"dyn.pad", 3, 0x2u, false, pad_rule},
    {"dyn.tile", 2, 0x2u, false, tile_rule},
    {"dyn.topk", 2, 0x2u, false, topk_rule},
};

int kiln_shape_func_count(void) {
  return (int)(sizeof(shape_funcs) / sizeof(shape_funcs[0]));
}

const kiln_shape_func_t *kiln_shape_func_at(int index) {
  return &shape_funcs[index];
}

int kiln_shape_func_find(const char *name) {
  for (int i = 0; i < kiln_shape_func_count(); ++i) {
    if (strcmp(shape_funcs[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

kiln_status_t kiln_shape_func_run(int index, int num_args, const kiln_shape_func_arg_t *args,
                                  int64_t attr, int *out_ndim, int64_t *out_shape) {
  const kiln_shape_func_t *f = &shape_funcs[index];
  if (num_args != f->num_inputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d inputs, expected %d", f->name, num_args,
                       f->num_inputs);
  }
  for (int i = 0; i < num_args; ++i) {
    bool read = (f->value_inputs >> i) & 1u;
    if (args[i].ndim < 0 || args[i].ndim > KILN_MAX_RANK ||
        (read && (args[i].count > KILN_MAX_RANK || args[i].count < 0 || args[i].ndim > 1))) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: input %d has rank %d and %lld values; expected at most %d values "
                         "in rank 0 or 1",
                         f->name, i, args[i].ndim, (long long)args[i].count, KILN_MAX_RANK);
    }
  }
  return f->fn(args, attr, out_ndim, out_shape);
}
