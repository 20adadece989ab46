/*
 * Reductions: sum, mean, max, min and prod over a list of axes (empty: all
 * of them), and argmax and argmin over one axis.
 *
 * One plan (reduce_plan) says which dims a node reduces and whether it keeps
 * them; the shape rule, the layout rule and the kernels all read it, so they
 * cannot disagree. The kernels split the input's dims into kept ones (an
 * outer walk, one position per output element, in output order) and reduced
 * ones (an inner walk), both over the input's strides, so no scratch memory
 * is needed: each output element is one finished inner walk. float32 sums,
 * means and products accumulate in double; int64 sums and products wrap as
 * two's complement (through uint64, never signed overflow). max, min, argmax
 * and argmin have no identity, so reducing an empty axis is a type error;
 * sum of nothing is 0, prod of nothing 1 and mean of nothing NaN (as NumPy).
 * NaN wins max, min, argmax and argmin (as NumPy); select_last_index picks
 * the last of equal candidates instead of the first (ONNX).
 */
#include <math.h>
#include <string.h>

#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/impl.h"
#include "op/transform_common.h"

static const kiln_attr_field_t kiln_reduce_fields[] = {
    KILN_ATTR_FIELD(kiln_reduce_attrs_t, axis, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_reduce_attrs_t, keepdims, BOOL, "False"),
};

static const kiln_attr_field_t kiln_argmax_fields[] = {
    KILN_ATTR_FIELD(kiln_argmax_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_argmax_attrs_t, keepdims, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_argmax_attrs_t, select_last_index, BOOL, "False"),
};

typedef enum reduce_kind_e {
  REDUCE_SUM,
  REDUCE_MEAN,
  REDUCE_MAX,
  REDUCE_MIN,
  REDUCE_PROD,
  REDUCE_ARGMAX,
  REDUCE_ARGMIN,
} reduce_kind_t;

static reduce_kind_t reduce_kind(const kiln_op_t *op) {
  static const struct {
    kiln_op_id_t id;
    reduce_kind_t kind;
  } kinds[] = {{KILN_OP_SUM, REDUCE_SUM},   {KILN_OP_MEAN, REDUCE_MEAN},
               {KILN_OP_MAX, REDUCE_MAX},   {KILN_OP_MIN, REDUCE_MIN},
               {KILN_OP_PROD, REDUCE_PROD}, {KILN_OP_ARGMIN, REDUCE_ARGMIN}};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); ++k) {
    if (op->id == kinds[k].id) {
      return kinds[k].kind;
    }
  }
  return REDUCE_ARGMAX;
}

static bool reduce_is_arg(reduce_kind_t kind) {
  return kind == REDUCE_ARGMAX || kind == REDUCE_ARGMIN;
}

/* ---- the plan and the shape rule ---- */

typedef struct reduce_plan_t {
  bool reduced[KILN_MAX_RANK];
  bool keepdims;
} reduce_plan_t;

static kiln_status_t reduce_plan_axes(const kiln_op_t *op, const void *attrs,
                                      const kiln_tensor_type_t *data, reduce_plan_t *out_plan) {
  if (reduce_is_arg(reduce_kind(op))) {
    const kiln_argmax_attrs_t *argmax = attrs;
    int axis = 0;
    KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", argmax->axis, data, 0, &axis));
    memset(out_plan->reduced, 0, sizeof(out_plan->reduced));
    out_plan->reduced[axis] = true;
    out_plan->keepdims = argmax->keepdims;
    return KILN_OK;
  }
  const kiln_reduce_attrs_t *reduce = attrs;
  int axes[KILN_MAX_RANK];
  KILN_RETURN_IF_ERROR(
      kiln_transform_axes(op, "axis", &reduce->axis, data, axes, out_plan->reduced));
  for (int d = 0; d < data->ndim && reduce->axis.count == 0; ++d) {
    out_plan->reduced[d] = true;
  }
  out_plan->keepdims = reduce->keepdims;
  return KILN_OK;
}

static kiln_status_t reduce_plan(const kiln_op_t *op, const void *attrs,
                                 const kiln_tensor_type_t *data, reduce_plan_t *out_plan) {
  KILN_RETURN_IF_ERROR(reduce_plan_axes(op, attrs, data, out_plan));
  reduce_kind_t kind = reduce_kind(op);
  if (kind == REDUCE_SUM || kind == REDUCE_MEAN || kind == REDUCE_PROD) {
    return KILN_OK;
  }
  for (int d = 0; d < data->ndim; ++d) {
    if (out_plan->reduced[d] && data->shape[d] == 0) {
      char shape[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "%s: cannot reduce axis %d of size 0 (data %s)",
                         op->name, d, kiln_op_shape_text(data, shape));
    }
  }
  return KILN_OK;
}

static kiln_status_t reduce_rule(const kiln_op_t *op, const void *attrs,
                                 const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  reduce_plan_t plan;
  KILN_RETURN_IF_ERROR(reduce_plan(op, attrs, &data, &plan));
  out_shape->dtype = reduce_is_arg(reduce_kind(op)) ? KILN_DTYPE_INT64 : data.dtype;
  out_shape->ndim = 0;
  for (int d = 0; d < data.ndim; ++d) {
    if (!plan.reduced[d]) {
      out_shape->dims[out_shape->ndim++] = data.shape[d];
    } else if (plan.keepdims) {
      out_shape->dims[out_shape->ndim++] = 1;
    }
  }
  return KILN_OK;
}

static kiln_status_t reduce_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, reduce_rule, out_type);
}

static kiln_status_t reduce_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_reduce_attrs_t *reduce = attrs;
  if (reduce->axis.count > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: axis has %d entries, more than the largest rank %d",
                       op->name, (int)reduce->axis.count, KILN_MAX_RANK);
  }
  return KILN_OK;
}

/* The input in its primal layout; the output keeps it, minus the reduced
 * axes unless keepdims. */
static kiln_status_t reduce_layout(kiln_layout_relation_t *relation) {
  KILN_RETURN_IF_ERROR(kiln_layout_keep_axes(relation));
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_layout_input_type(relation, 0, &data));
  reduce_plan_t plan;
  KILN_RETURN_IF_ERROR(reduce_plan(relation->op, relation->attrs, data, &plan));
  if (plan.keepdims) {
    return KILN_OK;
  }
  int kept[KILN_MAX_RANK];
  int count = 0;
  for (int d = 0; d < data->ndim; ++d) {
    if (!plan.reduced[d]) {
      kept[count++] = d;
    }
  }
  return kiln_layout_select(relation, relation->output_layout, data->ndim, count, kept,
                            &relation->output_layout);
}

/* ---- kernels ---- */

/* The outer walk (kept dims) and inner walk (reduced dims) over the input. */
typedef struct reduce_walks_t {
  kiln_walk_t outer;
  kiln_walk_t inner;
  int64_t outer_count;
  int64_t inner_count;
} reduce_walks_t;

static void reduce_walks(const kiln_tensor_type_t *data, const reduce_plan_t *plan,
                         reduce_walks_t *out_walks) {
  int64_t strides[KILN_MAX_RANK];
  kiln_shape_compact_strides(data->ndim, data->shape, strides);
  int64_t shapes[2][KILN_MAX_RANK];
  int64_t walk_strides[2][KILN_MAX_RANK];
  int ndims[2] = {0, 0};
  for (int d = 0; d < data->ndim; ++d) {
    int which = plan->reduced[d] ? 1 : 0;
    shapes[which][ndims[which]] = data->shape[d];
    walk_strides[which][ndims[which]++] = strides[d];
  }
  out_walks->outer_count = kiln_walk_begin(&out_walks->outer, ndims[0], shapes[0]);
  out_walks->inner_count = kiln_walk_begin(&out_walks->inner, ndims[1], shapes[1]);
  memcpy(out_walks->outer.strides[0], walk_strides[0], sizeof(int64_t) * (size_t)ndims[0]);
  memcpy(out_walks->inner.strides[0], walk_strides[1], sizeof(int64_t) * (size_t)ndims[1]);
}

/* One reduction over float32 or float64 elements, accumulated in double. */
static double reduce_float_one(reduce_kind_t kind, const void *data, bool is_f64, int64_t base,
                               kiln_walk_t *inner, int64_t count) {
  double sum = 0.0;
  double product = 1.0;
  double best = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = base + inner->offset[0];
    double value = is_f64 ? ((const double *)data)[at] : ((const float *)data)[at];
    sum += value;
    product *= value;
    if (i == 0 || (kind == REDUCE_MAX && (value > best || isnan(value))) ||
        (kind == REDUCE_MIN && (value < best || isnan(value)))) {
      best = isnan(best) && i > 0 ? best : value;
    }
    kiln_walk_next(inner);
  }
  if (kind == REDUCE_SUM) {
    return sum;
  }
  if (kind == REDUCE_PROD) {
    return product;
  }
  if (kind == REDUCE_MEAN) {
    return count > 0 ? sum / (double)count : NAN;
  }
  return best;
}

static int64_t reduce_i64_one(reduce_kind_t kind, const int64_t *base, kiln_walk_t *inner,
                              int64_t count) {
  uint64_t sum = 0;
  uint64_t product = 1;
  int64_t best = count > 0 ? base[0] : 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t value = base[inner->offset[0]];
    sum += (uint64_t)value;
    product *= (uint64_t)value;
    if ((kind == REDUCE_MAX && value > best) || (kind == REDUCE_MIN && value < best)) {
      best = value;
    }
    kiln_walk_next(inner);
  }
  if (kind == REDUCE_PROD) {
    return (int64_t)product;
  }
  return kind == REDUCE_SUM ? (int64_t)sum : best;
}

/* The kernel prologue shared by the reductions and argmax: checks, the
 * plan and the walks. */
static kiln_status_t reduce_prepare(const kiln_kernel_args_t *args, bool int64_ok,
                                    reduce_walks_t *out_walks) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, reduce_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  if (data.dtype != KILN_DTYPE_FLOAT32 && data.dtype != KILN_DTYPE_FLOAT64 &&
      !(data.dtype == KILN_DTYPE_INT64 && int64_ok)) {
    return kiln_transform_unsupported_dtype(
        args->op, data.dtype, int64_ok ? "float32, float64, int64" : "float32, float64");
  }
  reduce_plan_t plan;
  KILN_RETURN_IF_ERROR(reduce_plan(args->op, args->attrs, &data, &plan));
  reduce_walks(&data, &plan, out_walks);
  return KILN_OK;
}

static kiln_status_t reduce_reference(const kiln_kernel_args_t *args) {
  reduce_kind_t kind = reduce_kind(args->op);
  reduce_walks_t walks;
  KILN_RETURN_IF_ERROR(reduce_prepare(args, kind != REDUCE_MEAN, &walks));
  const void *in = kiln_tensor_data(args->inputs[0]);
  void *out = kiln_tensor_data(args->outputs[0]);
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  for (int64_t o = 0; o < walks.outer_count; ++o) {
    int64_t base = walks.outer.offset[0];
    if (dtype == KILN_DTYPE_FLOAT64) {
      ((double *)out)[o] = reduce_float_one(kind, in, true, base, &walks.inner, walks.inner_count);
    } else if (dtype == KILN_DTYPE_FLOAT32) {
      ((float *)out)[o] =
          (float)reduce_float_one(kind, in, false, base, &walks.inner, walks.inner_count);
    } else {
      ((int64_t *)out)[o] =
          reduce_i64_one(kind, (const int64_t *)in + base, &walks.inner, walks.inner_count);
    }
    kiln_walk_next(&walks.outer);
  }
  return KILN_OK;
}

/* Whether element `candidate` replaces element `best` as the argmax (or,
 * with `min`, the argmin): a larger (smaller) value, the first NaN, or with
 * `last` an equal value. */
typedef bool (*argmax_beats_fn)(const void *data, int64_t candidate, int64_t best, bool last,
                                bool min);

/* The float rule on values read as double (exact for float32 and float64). */
static bool argmax_beats_float(double value, double current, bool last, bool min) {
  if (isnan(current)) {
    return last && isnan(value);
  }
  bool better = min ? value < current : value > current;
  return isnan(value) || better || (last && value == current);
}

static bool argmax_beats_f32(const void *data, int64_t candidate, int64_t best, bool last,
                             bool min) {
  const float *values = data;
  return argmax_beats_float(values[candidate], values[best], last, min);
}

static bool argmax_beats_f64(const void *data, int64_t candidate, int64_t best, bool last,
                             bool min) {
  const double *values = data;
  return argmax_beats_float(values[candidate], values[best], last, min);
}

static bool argmax_beats_i64(const void *data, int64_t candidate, int64_t best, bool last,
                             bool min) {
  int64_t value = ((const int64_t *)data)[candidate];
  int64_t current = ((const int64_t *)data)[best];
  bool better = min ? value < current : value > current;
  return better || (last && value == current);
}

static int64_t argmax_one(argmax_beats_fn beats, const void *data, int64_t base, kiln_walk_t *inner,
                          int64_t count, bool last, bool min) {
  int64_t best = 0;
  int64_t best_offset = base;
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = base + inner->offset[0];
    if (i > 0 && beats(data, offset, best_offset, last, min)) {
      best = i;
      best_offset = offset;
    }
    kiln_walk_next(inner);
  }
  return best;
}

static kiln_status_t argmax_reference(const kiln_kernel_args_t *args) {
  reduce_walks_t walks;
  KILN_RETURN_IF_ERROR(reduce_prepare(args, true, &walks));
  const kiln_argmax_attrs_t *attrs = args->attrs;
  kiln_dtype_t dtype = kiln_tensor_dtype(args->inputs[0]);
  argmax_beats_fn beats = dtype == KILN_DTYPE_FLOAT32   ? argmax_beats_f32
                          : dtype == KILN_DTYPE_FLOAT64 ? argmax_beats_f64
                                                        : argmax_beats_i64;
  bool min = reduce_kind(args->op) == REDUCE_ARGMIN;
  const void *in = kiln_tensor_data(args->inputs[0]);
  int64_t *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t o = 0; o < walks.outer_count; ++o) {
    out[o] = argmax_one(beats, in, walks.outer.offset[0], &walks.inner, walks.inner_count,
                        attrs->select_last_index, min);
    kiln_walk_next(&walks.outer);
  }
  return KILN_OK;
}

/* ---- the operators ---- */

#define KILN_REDUCE_OP_(symbol, ID, NAME)                                                   \
  const kiln_op_t symbol = {                                                                \
      .name = NAME,                                                                         \
      .id = KILN_OP_##ID,                                                                   \
      .min_inputs = 1,                                                                      \
      .max_inputs = 1,                                                                      \
      .pattern = KILN_OP_PATTERN_COMM_REDUCE,                                               \
      .attrs_size = sizeof(kiln_reduce_attrs_t),                                            \
      .num_attr_fields = (int)(sizeof(kiln_reduce_fields) / sizeof(kiln_reduce_fields[0])), \
      .attr_fields = kiln_reduce_fields,                                                    \
      .validate_attrs = reduce_validate,                                                    \
      .infer_type = reduce_infer_type,                                                      \
      .symbolic_dims = true,                                                                \
      .correct_layout = reduce_layout,                                                      \
  };                                                                                        \
  const kiln_op_impl_t symbol##_impl = {.reference = reduce_reference,                      \
                                        .compute = kiln_compute_reduce}

KILN_REDUCE_OP_(kiln_op_sum, SUM, "sum");
KILN_REDUCE_OP_(kiln_op_mean, MEAN, "mean");
KILN_REDUCE_OP_(kiln_op_max, MAX, "max");
KILN_REDUCE_OP_(kiln_op_min, MIN, "min");

KILN_REDUCE_OP_(kiln_op_prod, PROD, "prod");

#define KILN_ARG_REDUCE_OP_(symbol, ID, NAME)                                               \
  const kiln_op_t symbol = {                                                                \
      .name = NAME,                                                                         \
      .id = KILN_OP_##ID,                                                                   \
      .min_inputs = 1,                                                                      \
      .max_inputs = 1,                                                                      \
      .pattern = KILN_OP_PATTERN_OPAQUE,                                                    \
      .attrs_size = sizeof(kiln_argmax_attrs_t),                                            \
      .num_attr_fields = (int)(sizeof(kiln_argmax_fields) / sizeof(kiln_argmax_fields[0])), \
      .attr_fields = kiln_argmax_fields,                                                    \
      .infer_type = reduce_infer_type,                                                      \
      .symbolic_dims = true,                                                                \
      .correct_layout = reduce_layout,                                                      \
  };                                                                                        \
  const kiln_op_impl_t symbol##_impl = {.reference = argmax_reference,                      \
                                        .compute = kiln_compute_argreduce}

KILN_ARG_REDUCE_OP_(kiln_op_argmax, ARGMAX, "argmax");
KILN_ARG_REDUCE_OP_(kiln_op_argmin, ARGMIN, "argmin");
