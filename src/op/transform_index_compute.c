/*
 * Compute rules of the indexing operators (transform_index.c): concatenate,
 * split, strided_slice and take.
 *
 * concatenate selects, on the axis, the input whose range holds the output
 * index: a chain of Selects from the last input back to the first. Select
 * evaluates both sides, so every input's index on the axis is clamped into
 * that input (only on the sides where it can leave it). split makes one
 * compute per part, T_split_<p>, reading the input shifted by the part's
 * start on the axis (the starts are the sums of the earlier parts' extents
 * of the inferred tuple type); at most KILN_COMPUTE_MAX_OUTPUTS parts.
 * strided_slice plans a start and a step per input dim exactly as the
 * reference does (ONNX Slice: negative begin and end count from the end,
 * then clamp to [0, dim] for a positive step or [0, dim - 1] and
 * [-1, dim - 1] for a negative one) and reads start + out * step. take
 * reads the index tensor and resolves the index in its own dtype: a
 * negative index counts from the end, then "clip" clamps to [0, dim - 1],
 * "wrap" takes it modulo dim (floormod of the raw index, equal to the
 * reference's), and "fast" trusts it; the result, always in [0, dim) for
 * clip and wrap, becomes the int32 index of the data's axis. "fast" is two
 * stages, as gather is (transform_gather_compute.c): T_take_index asserts
 * each index in [-dim, dim) at run time and wraps it, so an index out of
 * range is an error on every path, as in the reference (ONNX Gather).
 */
#include <stdio.h>

#include "op/gather_compute.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

/* ---- concatenate ---- */

typedef struct concatenate_t {
  const kiln_compute_args_t *args;
  int axis;
  int64_t offsets[KILN_TE_MAX_INPUTS]; /* where each input starts on the axis */
} concatenate_t;

/* Input `i` read at the output's indices, its axis index shifted and clamped. */
static const kiln_tir_expr_t *concatenate_read(kiln_tir_builder_t *b, const concatenate_t *c, int i,
                                               const kiln_tir_expr_t *const *indices) {
  const kiln_te_tensor_t *input = c->args->inputs[i];
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < input->ndim; ++d) {
    at[d] = indices[d];
  }
  const kiln_tir_expr_t *x = indices[c->axis];
  if (c->offsets[i] > 0) {
    x = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, x, kiln_tir_b_i32(b, c->offsets[i]));
    x = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, x, kiln_tir_b_i32(b, 0));
  }
  if (i + 1 < c->args->num_inputs) {
    x = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, x, kiln_tir_b_i32(b, input->shape[c->axis] - 1));
  }
  at[c->axis] = x;
  return kiln_te_read(b, input, input->ndim, at);
}

static const kiln_tir_expr_t *concatenate_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const concatenate_t *c = user;
  int last = c->args->num_inputs - 1;
  const kiln_tir_expr_t *value = concatenate_read(b, c, last, indices);
  for (int i = last - 1; i >= 0; --i) {
    const kiln_tir_expr_t *inside =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, indices[c->axis], kiln_tir_b_i32(b, c->offsets[i + 1]));
    value = kiln_tir_b_select(b, inside, concatenate_read(b, c, i, indices), value);
  }
  return value;
}

kiln_status_t kiln_compute_concatenate(const kiln_compute_args_t *args,
                                       kiln_compute_result_t *out_result) {
  concatenate_t c = {args, 0, {0}};
  if (args->num_inputs > KILN_TE_MAX_INPUTS) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d inputs; a compute reads at most %d tensors",
                       args->op->name, args->num_inputs, KILN_TE_MAX_INPUTS);
  }
  kiln_tensor_type_t first = kiln_tcompute_type_of(args->inputs[0]);
  KILN_RETURN_IF_ERROR(kiln_transform_axis(
      args->op, "axis", ((const kiln_concatenate_attrs_t *)args->attrs)->axis, &first, 0, &c.axis));
  for (int i = 1; i < args->num_inputs; ++i) {
    c.offsets[i] = c.offsets[i - 1] + args->inputs[i - 1]->shape[c.axis];
  }
  return kiln_compute_one(args, concatenate_body, &c, out_result);
}

/* ---- split ---- */

typedef struct split_t {
  const kiln_te_tensor_t *data;
  int axis;
  int64_t begin; /* of the part being built */
} split_t;

static const kiln_tir_expr_t *split_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const split_t *s = user;
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < s->data->ndim; ++d) {
    at[d] = indices[d];
  }
  if (s->begin > 0) {
    at[s->axis] = kiln_tir_b_add(b, indices[s->axis], kiln_tir_b_i32(b, s->begin));
  }
  return kiln_te_read(b, s->data, s->data->ndim, at);
}

kiln_status_t kiln_compute_split(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  split_t s = {args->inputs[0], 0, 0};
  kiln_tensor_type_t data = kiln_tcompute_type_of(s.data);
  KILN_RETURN_IF_ERROR(kiln_transform_axis(
      args->op, "axis", ((const kiln_split_attrs_t *)args->attrs)->axis, &data, 0, &s.axis));
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(args->output_type);
  int count = tuple ? tuple->count : 0;
  if (count < 1 || count > KILN_COMPUTE_MAX_OUTPUTS) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: %d parts; a compute rule makes 1 to %d outputs",
                       args->op->name, count, KILN_COMPUTE_MAX_OUTPUTS);
  }
  for (int part = 0; part < count; ++part) {
    const kiln_tensor_type_t *type = NULL;
    KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, part, &type));
    if (type->shape[s.axis] == 0) {
      return KILN_STATUS(UNIMPLEMENTED,
                         "%s: part %d is empty; tensor expressions need positive extents",
                         args->op->name, part);
    }
    char name[64];
    snprintf(name, sizeof(name), "T_split_%d", part);
    KILN_RETURN_IF_ERROR(kiln_te_compute(args->arena, name, type->ndim, type->shape, 1,
                                         args->inputs, split_body, &s, &out_result->outputs[part]));
    s.begin += type->shape[s.axis];
  }
  out_result->num_outputs = count;
  return KILN_OK;
}

/* ---- strided_slice ---- */

typedef struct slice_t {
  const kiln_te_tensor_t *data;
  int64_t start[KILN_MAX_RANK];
  int64_t step[KILN_MAX_RANK];
} slice_t;

static int64_t clamp64(int64_t value, int64_t lo, int64_t hi) {
  return value < lo ? lo : value > hi ? hi : value;
}

/* The reference's start on one dim (its count is the output's extent). */
static int64_t slice_start(int64_t dim, int64_t begin, int64_t step) {
  begin = begin < 0 ? begin + dim : begin;
  return step > 0 ? clamp64(begin, 0, dim) : clamp64(begin, 0, dim - 1);
}

static kiln_status_t slice_plan(const kiln_compute_args_t *args, slice_t *s) {
  const kiln_strided_slice_attrs_t *slice = args->attrs;
  kiln_tensor_type_t data = kiln_tcompute_type_of(s->data);
  for (int d = 0; d < data.ndim; ++d) {
    s->start[d] = 0;
    s->step[d] = 1;
  }
  int axes[KILN_MAX_RANK];
  if (slice->axes.count > 0) {
    bool listed[KILN_MAX_RANK];
    KILN_RETURN_IF_ERROR(kiln_transform_axes(args->op, "axes", &slice->axes, &data, axes, listed));
  }
  for (int i = 0; i < slice->begin.count && i < KILN_MAX_RANK; ++i) {
    int axis = slice->axes.count > 0 ? axes[i] : i;
    int64_t step = slice->strides.count > 0 ? slice->strides.values[i] : 1;
    s->step[axis] = step;
    s->start[axis] = slice_start(data.shape[axis], slice->begin.values[i], step);
  }
  return KILN_OK;
}

typedef struct slice_body_t {
  const slice_t *plan;
  const int64_t *counts; /* the output's extents */
} slice_body_t;

static const kiln_tir_expr_t *slice_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const slice_body_t *sb = user;
  const slice_t *s = sb->plan;
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < s->data->ndim; ++d) {
    /* A dim taken once never steps (its step may be huge). */
    const kiln_tir_expr_t *offset =
        sb->counts[d] > 1 ? kiln_tir_b_mul(b, indices[d], kiln_tir_b_i32(b, s->step[d]))
                          : kiln_tir_b_i32(b, 0);
    at[d] = s->start[d] == 0 ? offset : kiln_tir_b_add(b, kiln_tir_b_i32(b, s->start[d]), offset);
  }
  return kiln_te_read(b, s->data, s->data->ndim, at);
}

kiln_status_t kiln_compute_strided_slice(const kiln_compute_args_t *args,
                                         kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  slice_t s;
  s.data = args->inputs[0];
  KILN_RETURN_IF_ERROR(slice_plan(args, &s));
  slice_body_t sb = {&s, type->shape};
  return kiln_compute_one(args, slice_body, &sb, out_result);
}

/* ---- take ---- */

typedef enum take_mode_e {
  TAKE_CLIP,
  TAKE_WRAP,
  TAKE_FAST,
} take_mode_t;

typedef struct take_t {
  const kiln_te_tensor_t *data;
  const kiln_te_tensor_t *indices;
  int axis;
  take_mode_t mode;
  const kiln_te_tensor_t *checked; /* fast: the asserted, wrapped indices */
} take_t;

/* The resolved int32 index of the data's axis from the raw index `raw`. */
static const kiln_tir_expr_t *take_resolve(kiln_tir_builder_t *b, const take_t *t,
                                           const kiln_tir_expr_t *raw) {
  kiln_dtype_t dtype = t->indices->dtype;
  int64_t dim = t->data->shape[t->axis];
  const kiln_tir_expr_t *n = kiln_tir_b_int(b, dtype, dim);
  const kiln_tir_expr_t *index = NULL;
  if (t->mode == TAKE_WRAP) {
    index = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, raw, n);
  } else {
    const kiln_tir_expr_t *negative =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, raw, kiln_tir_b_int(b, dtype, 0));
    index = kiln_tir_b_select(b, negative, kiln_tir_b_add(b, raw, n), raw);
    if (t->mode == TAKE_CLIP) {
      index = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, index, kiln_tir_b_int(b, dtype, 0));
      index = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, index, kiln_tir_b_int(b, dtype, dim - 1));
    }
  }
  return dtype == KILN_DTYPE_INT32 ? index
                                   : kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), index);
}

static const kiln_tir_expr_t *take_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const take_t *t = user;
  int k = t->indices->ndim;
  const kiln_tir_expr_t *index =
      t->checked ? kiln_te_read(b, t->checked, k, indices + t->axis)
                 : take_resolve(b, t, kiln_te_read(b, t->indices, k, indices + t->axis));
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < t->data->ndim; ++d) {
    at[d] = d < t->axis ? indices[d] : d == t->axis ? index : indices[d - 1 + k];
  }
  return kiln_te_read(b, t->data, t->data->ndim, at);
}

kiln_status_t kiln_compute_take(const kiln_compute_args_t *args,
                                kiln_compute_result_t *out_result) {
  const kiln_take_attrs_t *attrs = args->attrs;
  take_t t = {args->inputs[0], args->inputs[1], 0, TAKE_CLIP, NULL};
  static const char *const modes[] = {"clip", "wrap", "fast"};
  int mode = -1;
  for (int i = 0; i < 3 && attrs->mode; ++i) {
    mode = mode < 0 && strcmp(attrs->mode, modes[i]) == 0 ? i : mode;
  }
  if (mode < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: mode \"%s\" is not one of clip, wrap, fast",
                       args->op->name, attrs->mode ? attrs->mode : "");
  }
  t.mode = (take_mode_t)mode;
  kiln_tensor_type_t data = kiln_tcompute_type_of(t.data);
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &data, 0, &t.axis));
  kiln_tensor_type_t indices = kiln_tcompute_type_of(t.indices);
  KILN_RETURN_IF_ERROR(kiln_transform_check_indices(args->op, "indices", &indices));
  if (t.mode != TAKE_FAST) {
    return kiln_compute_one(args, take_body, &t, out_result);
  }
  KILN_RETURN_IF_ERROR(kiln_gather_checked_indices(args, t.axis, &t.checked));
  return kiln_gather_output_stage(args, take_body, &t, t.checked, out_result);
}
