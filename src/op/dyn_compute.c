/*
 * Compute rules of the dyn operators that compile (dyn.h): the kernel reads
 * the shape-like inputs' values itself.
 *
 * dyn.strided_slice, in a probe run of the compiler (its out_shape set to
 * the probe sizes): output element i of data dim d is data[start_d + i *
 * step_d], where start_d and step_d come from begin[k] and strides[k] for
 * the k whose axis is d (axes[k], negative counting from the rank; or k
 * itself without axes), loaded in the loop IR and chosen with selects over
 * the k (their number is static). start_d is ONNX's: a negative begin
 * counts from the end, then it is clamped to [0, dim] for a positive step
 * or [0, dim - 1] for a negative one. The output's extents come from the
 * output buffer (the VM sizes it with the runtime's shape function,
 * runtime/shape_func.c, which also rejects a step of 0), so the kernel
 * never reads the end values. A dim taken once never steps.
 *
 * dyn.arange, in a probe run (out_shape set): element i is arange's
 * (kiln_compute_arange_element) with start and step read from their
 * inputs in the kernel as float64; the count is the output buffer's, sized
 * by the runtime's shape function, which checks the step.
 *
 * dyn.pad, in a probe run: nn.pad's mapping with the befores read from
 * ONNX's pads in the kernel: source s = index - before per dim; "constant"
 * selects the fill (constant_value read as float64 and converted as the
 * reference converts it) outside the data, "edge" clamps s, "reflect"
 * mirrors it (-s below, 2 (dim - 1) - s above). Every read is clamped into
 * the data (a select evaluates both sides); the runtime's shape function
 * (kiln_shape_pad_dim) has checked that the pads fit the mode.
 */
#include "op/dyn.h"
#include "op/gather_compute.h"
#include "runtime/shape_func.h"
#include "te/te.h"
#include "tir/builder.h"

typedef struct dyn_slice_t {
  const kiln_compute_args_t *args;
  const int64_t *counts; /* the output's extents */
} dyn_slice_t;

static const kiln_tir_expr_t *i64(kiln_tir_builder_t *b, int64_t value) {
  return kiln_tir_b_int(b, KILN_DTYPE_INT64, value);
}

/* Value k of input `input` (rank 0 or 1) as `dtype`. */
static const kiln_tir_expr_t *value_as(kiln_tir_builder_t *b, const kiln_compute_args_t *args,
                                       int input, int k, kiln_dtype_t dtype) {
  const kiln_te_tensor_t *t = args->inputs[input];
  const kiln_tir_expr_t *index[1] = {kiln_tir_b_i32(b, k)};
  return kiln_tir_b_cast(b, kiln_tir_scalar(dtype), kiln_te_read(b, t, t->ndim, index));
}

/* Value k of input `input` (rank 0 or 1) as int64. */
static const kiln_tir_expr_t *value_at(kiln_tir_builder_t *b, const kiln_compute_args_t *args,
                                       int input, int k) {
  return value_as(b, args, input, k, KILN_DTYPE_INT64);
}

static const kiln_tir_expr_t *clamp(kiln_tir_builder_t *b, const kiln_tir_expr_t *x, int64_t lo,
                                    int64_t hi) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, x, i64(b, lo)),
                        i64(b, hi));
}

/* Whether value k of the axes names data dim d. */
static const kiln_tir_expr_t *names_dim(kiln_tir_builder_t *b, const kiln_compute_args_t *args,
                                        int k, int d) {
  int rank = args->inputs[0]->ndim;
  const kiln_tir_expr_t *axis = value_at(b, args, 4, k);
  const kiln_tir_expr_t *negative = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, axis, i64(b, 0));
  axis = kiln_tir_b_select(b, negative, kiln_tir_b_add(b, axis, i64(b, rank)), axis);
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, axis, i64(b, d));
}

/* Value of input `input` (begin or strides) for data dim d, `fallback` when
 * no axis names d. */
static const kiln_tir_expr_t *value_for_dim(kiln_tir_builder_t *b, const kiln_compute_args_t *args,
                                            int input, int d, const kiln_tir_expr_t *fallback) {
  const kiln_te_tensor_t *begin = args->inputs[1], *axes = args->inputs[4];
  int count = begin->ndim == 0 ? 1 : (int)begin->shape[0];
  bool has_axes = axes->ndim == 1 && axes->shape[0] > 0;
  const kiln_tir_expr_t *value = fallback;
  for (int k = 0; k < count; ++k) {
    if (has_axes) {
      value = kiln_tir_b_select(b, names_dim(b, args, k, d), value_at(b, args, input, k), value);
    } else if (k == d) {
      value = value_at(b, args, input, k);
    }
  }
  return value;
}

/* data[start_d + i_d * step_d] per dim d. */
static const kiln_tir_expr_t *slice_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const dyn_slice_t *s = user;
  const kiln_te_tensor_t *data = s->args->inputs[0];
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < data->ndim; ++d) {
    int64_t dim = data->shape[d];
    const kiln_tir_expr_t *step = value_for_dim(b, s->args, 3, d, i64(b, 1));
    const kiln_tir_expr_t *begin = value_for_dim(b, s->args, 1, d, i64(b, 0));
    const kiln_tir_expr_t *negative = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, begin, i64(b, 0));
    begin = kiln_tir_b_select(b, negative, kiln_tir_b_add(b, begin, i64(b, dim)), begin);
    const kiln_tir_expr_t *forward = kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, step, i64(b, 0));
    const kiln_tir_expr_t *start = kiln_tir_b_select(b, forward, clamp(b, begin, 0, dim),
                                                     clamp(b, begin, 0, dim > 0 ? dim - 1 : 0));
    const kiln_tir_expr_t *i = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64), indices[d]);
    const kiln_tir_expr_t *index =
        s->counts[d] > 1 ? kiln_tir_b_add(b, start, kiln_tir_b_mul(b, i, step)) : start;
    at[d] = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), index);
  }
  return kiln_te_read(b, data, data->ndim, at);
}

kiln_status_t kiln_dyn_compute_slice(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  const kiln_dyn_slice_attrs_t *attrs = args->attrs;
  if (attrs->out_shape.count == 0) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  dyn_slice_t s = {args, type->shape};
  return kiln_compute_one(args, slice_body, &s, out_result);
}

/* ---- dyn.arange ---- */

static const kiln_tir_expr_t *arange_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const kiln_compute_args_t *args = user;
  const kiln_dyn_arange_attrs_t *attrs = args->attrs;
  return kiln_compute_arange_element(b, indices[0], value_as(b, args, 0, 0, KILN_DTYPE_FLOAT64),
                                     value_as(b, args, 2, 0, KILN_DTYPE_FLOAT64), attrs->dtype);
}

kiln_status_t kiln_dyn_compute_arange(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  const kiln_dyn_arange_attrs_t *attrs = args->attrs;
  if (attrs->out_shape.count == 0) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  return kiln_compute_one(args, arange_body, (void *)(uintptr_t)args, out_result);
}

/* ---- dyn.pad ---- */

typedef struct dyn_pad_t {
  const kiln_compute_args_t *args;
  int mode; /* kiln_shape_pad_mode's index */
} dyn_pad_t;

static const kiln_tir_expr_t *pad_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const dyn_pad_t *p = user;
  const kiln_te_tensor_t *data = p->args->inputs[0];
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  const kiln_tir_expr_t *inside = kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, i64(b, 0), i64(b, 0));
  for (int d = 0; d < data->ndim; ++d) {
    int64_t dim = data->shape[d];
    const kiln_tir_expr_t *i = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64), indices[d]);
    const kiln_tir_expr_t *s = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, i, value_at(b, p->args, 1, d));
    const kiln_tir_expr_t *low = kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, s, i64(b, 0));
    const kiln_tir_expr_t *high = kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, s, i64(b, dim));
    inside = kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, inside,
                            kiln_tir_b_not(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, low, high)));
    if (p->mode == 2) {
      const kiln_tir_expr_t *above = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, i64(b, 2 * (dim - 1)), s);
      const kiln_tir_expr_t *below = kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, i64(b, 0), s);
      s = kiln_tir_b_select(b, high, above, kiln_tir_b_select(b, low, below, s));
    }
    at[d] = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), clamp(b, s, 0, dim - 1));
  }
  const kiln_tir_expr_t *value = kiln_te_read(b, data, data->ndim, at);
  if (p->mode != 0) {
    return value;
  }
  const kiln_tir_expr_t *fill =
      kiln_compute_from_f64(b, value_as(b, p->args, 2, 0, KILN_DTYPE_FLOAT64), data->dtype);
  return kiln_tir_b_select(b, inside, value, fill);
}

kiln_status_t kiln_dyn_compute_pad(const kiln_compute_args_t *args, int mode, bool probe,
                                   kiln_compute_result_t *out_result) {
  if (!probe) {
    return kiln_dyn_compute_refuse(args, out_result);
  }
  if (mode < 0 || args->num_inputs != 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected data, pads and a value, and a pad mode",
                       args->op->name);
  }
  dyn_pad_t p = {args, mode};
  return kiln_compute_one(args, pad_body, &p, out_result);
}
