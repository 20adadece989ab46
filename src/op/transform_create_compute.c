/*
 * Compute rules of arange, one_hot and trilu (transform_create.c is the
 * reference): each is one elementwise compute named T_<op>, so the default
 * schedule fuses its axes, vectorizes and parallelizes it.
 *
 * arange's element i is start + i * step in float64, converted to the dtype
 * as the reference's scalar store does: floats rounded once, integers
 * truncated toward zero and saturated at the dtype's range (the clamp is
 * done in float64 before the cast, since the loop IR's float-to-int cast
 * rejects values that do not fit). one_hot compares the position on the new
 * axis with the index read at the other positions: integer indices in
 * int64, negative ones in [-depth, 0) counted from the end; float indices in
 * float64 after truncation, so NaN and huge values match no position, as in
 * the reference. The on and off values are the reference's own conversion
 * of the attributes (kiln_scalar_store), made constants of the output
 * dtype. trilu selects the element or zero by column - row against k, with
 * k clamped to the matrix size so it fits int32.
 */
#include <math.h>

#include "op/compute.h"
#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/transform_common.h"

/* The constant `value` of a scalar dtype. */
static const kiln_tir_expr_t *constant(kiln_tir_builder_t *b, kiln_dtype_t dtype,
                                       kiln_scalar_t value) {
  if (dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64 || dtype == KILN_DTYPE_FLOAT16 ||
      dtype == KILN_DTYPE_BFLOAT16) {
    return kiln_tir_b_float(b, dtype, kiln_scalar_to_double(value));
  }
  return kiln_tir_b_int(b, dtype, value.is_unsigned ? (int64_t)value.u : value.i);
}

/* `value` (a double) stored through kiln_scalar_store into `dtype` and read
 * back: the reference's conversion of an attribute. */
static kiln_scalar_t stored(kiln_dtype_t dtype, double value) {
  uint64_t cell = 0;
  kiln_scalar_kind_t kind = kiln_scalar_kind(dtype);
  kiln_scalar_store(kind, &cell, 0, kiln_scalar_float(value));
  return kiln_scalar_load(kind, &cell, 0);
}

/* A float64 value converted to `dtype` as kiln_scalar_store converts: a
 * float rounded, an integer truncated and saturated. */
static const kiln_tir_expr_t *convert(kiln_tir_builder_t *b, const kiln_tir_expr_t *v,
                                      kiln_dtype_t dtype) {
  if (dtype == KILN_DTYPE_FLOAT64) {
    return v;
  }
  if (dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16) {
    return kiln_tir_b_cast(b, kiln_tir_scalar(dtype), v);
  }
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(dtype, &lo, &hi);
  double hi_d = (double)hi;
  double below_hi = hi_d > 9.0e15 ? nextafter(hi_d, 0.0) : hi_d;
  const kiln_tir_expr_t *t = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_TRUNC, 1, &v);
  const kiln_tir_expr_t *clamped = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_MAX,
      kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, t, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, below_hi)),
      kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, (double)lo));
  const kiln_tir_expr_t *over =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, t, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, hi_d + 1.0));
  return kiln_tir_b_select(b, over, kiln_tir_b_int(b, dtype, hi),
                           kiln_tir_b_cast(b, kiln_tir_scalar(dtype), clamped));
}

const kiln_tir_expr_t *kiln_compute_from_f64(kiln_tir_builder_t *b, const kiln_tir_expr_t *v,
                                             kiln_dtype_t dtype) {
  return convert(b, v, dtype);
}

/* ---- arange ---- */

const kiln_tir_expr_t *kiln_compute_arange_element(kiln_tir_builder_t *b,
                                                   const kiln_tir_expr_t *index,
                                                   const kiln_tir_expr_t *start,
                                                   const kiln_tir_expr_t *step,
                                                   kiln_dtype_t dtype) {
  /* start - i * (-step): the reference's two roundings (an Add of a Mul
   * would be an FMA in the LLVM backend, one rounding: 1.5 + 5 * -0.7 is
   * -2 in the reference, -1.9999999999999998 fused). */
  const kiln_tir_expr_t *i = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT64), index);
  const kiln_tir_expr_t *minus_step =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, 0.0), step);
  const kiln_tir_expr_t *back = kiln_tir_b_mul(b, i, minus_step);
  return convert(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, start, back), dtype);
}

static const kiln_tir_expr_t *arange_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const kiln_arange_attrs_t *attrs = user;
  return kiln_compute_arange_element(
      b, indices[0], kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, attrs->start),
      kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, attrs->step), attrs->dtype);
}

kiln_status_t kiln_compute_arange(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  return kiln_compute_one(args, arange_body, (void *)(uintptr_t)args->attrs, out_result);
}

/* ---- one_hot ---- */

typedef struct one_hot_t {
  const kiln_compute_args_t *args;
  int axis;
  int ndim; /* of the output */
  kiln_dtype_t dtype;
  /* From the attributes, or (dyn.one_hot) read from inputs 1 (depth) and 2
   * (off, on) in the kernel. */
  bool run_time;
  int64_t depth;
  double off_value, on_value;
} one_hot_t;

/* Element k of input `input` (one value or a list) as `dtype`. */
static const kiln_tir_expr_t *input_value(kiln_tir_builder_t *b, const kiln_compute_args_t *args,
                                          int input, int k, kiln_dtype_t dtype) {
  const kiln_te_tensor_t *t = args->inputs[input];
  const kiln_tir_expr_t *index[1] = {kiln_tir_b_i32(b, k)};
  return kiln_tir_b_cast(b, kiln_tir_scalar(dtype), kiln_te_read(b, t, t->ndim, index));
}

/* The on (k = 1) or off (k = 0) value in the output dtype, as the
 * reference converts it from a double. */
static const kiln_tir_expr_t *one_hot_value(kiln_tir_builder_t *b, const one_hot_t *h, int k) {
  if (!h->run_time) {
    return constant(b, h->dtype, stored(h->dtype, k ? h->on_value : h->off_value));
  }
  return convert(b, input_value(b, h->args, 2, k, KILN_DTYPE_FLOAT64), h->dtype);
}

/* The depth in `wide` (int64, or float64 for float indices); a run-time
 * depth truncated as the reference reads it. */
static const kiln_tir_expr_t *one_hot_depth(kiln_tir_builder_t *b, const one_hot_t *h,
                                            kiln_dtype_t wide) {
  if (!h->run_time) {
    return wide == KILN_DTYPE_FLOAT64 ? kiln_tir_b_float(b, wide, (double)h->depth)
                                      : kiln_tir_b_int(b, wide, h->depth);
  }
  const kiln_tir_expr_t *depth = input_value(b, h->args, 1, 0, KILN_DTYPE_FLOAT64);
  depth = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_TRUNC, 1, &depth);
  return kiln_tir_b_cast(b, kiln_tir_scalar(wide), depth);
}

static const kiln_tir_expr_t *one_hot_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const one_hot_t *h = user;
  const kiln_te_tensor_t *input = h->args->inputs[0];
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0, k = 0; d < h->ndim; ++d) {
    if (d != h->axis) {
      at[k++] = indices[d];
    }
  }
  const kiln_tir_expr_t *x = kiln_te_read(b, input, input->ndim, at);
  bool is_float = input->dtype == KILN_DTYPE_FLOAT32 || input->dtype == KILN_DTYPE_FLOAT64 ||
                  input->dtype == KILN_DTYPE_FLOAT16 || input->dtype == KILN_DTYPE_BFLOAT16;
  kiln_dtype_t wide = is_float ? KILN_DTYPE_FLOAT64 : KILN_DTYPE_INT64;
  x = kiln_tir_b_cast(b, kiln_tir_scalar(wide), x);
  const kiln_tir_expr_t *depth = one_hot_depth(b, h, wide);
  const kiln_tir_expr_t *zero =
      is_float ? kiln_tir_b_float(b, wide, 0.0) : kiln_tir_b_int(b, wide, 0);
  if (is_float) {
    x = kiln_tir_b_call(b, KILN_TIR_INTRINSIC_TRUNC, 1, &x);
  }
  const kiln_tir_expr_t *negative =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, zero),
                     kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, kiln_tir_b_add(b, x, depth), zero));
  x = kiln_tir_b_select(b, negative, kiln_tir_b_add(b, x, depth), x);
  const kiln_tir_expr_t *position = kiln_tir_b_cast(b, kiln_tir_scalar(wide), indices[h->axis]);
  return kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, x, position),
                           one_hot_value(b, h, 1), one_hot_value(b, h, 0));
}

/* The output's axis (`axis` counted over the output's rank). */
static kiln_status_t one_hot_run(const kiln_compute_args_t *args, int64_t axis, one_hot_t *h,
                                 kiln_compute_result_t *out_result) {
  const kiln_te_tensor_t *input = args->inputs[0];
  kiln_tensor_type_t type = {.dtype = input->dtype, .ndim = input->ndim, .shape = input->shape};
  h->args = args;
  h->ndim = input->ndim + 1;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", axis, &type, 1, &h->axis));
  return kiln_compute_one(args, one_hot_body, h, out_result);
}

kiln_status_t kiln_compute_one_hot(const kiln_compute_args_t *args,
                                   kiln_compute_result_t *out_result) {
  const kiln_one_hot_attrs_t *attrs = args->attrs;
  one_hot_t h = {.dtype = attrs->dtype,
                 .depth = attrs->depth,
                 .off_value = attrs->off_value,
                 .on_value = attrs->on_value};
  return one_hot_run(args, attrs->axis, &h, out_result);
}

kiln_status_t kiln_compute_one_hot_inputs(const kiln_compute_args_t *args, int64_t axis,
                                          kiln_dtype_t dtype, kiln_compute_result_t *out_result) {
  if (args->num_inputs != 3) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected indices, depth and values", args->op->name);
  }
  one_hot_t h = {.dtype = dtype, .run_time = true};
  return one_hot_run(args, axis, &h, out_result);
}

/* ---- trilu ---- */

typedef struct trilu_t {
  const kiln_compute_args_t *args;
  int64_t k;     /* clamped */
  int64_t bound; /* what k is clamped to: rows + columns */
} trilu_t;

/* k as an int32 expression: the attribute, or the k input read at run time
 * and clamped to [-bound, bound] (beyond that every element is kept or
 * zeroed alike). */
static const kiln_tir_expr_t *trilu_k(kiln_tir_builder_t *b, const trilu_t *t) {
  if (t->args->num_inputs < 2) {
    return kiln_tir_b_i32(b, t->k);
  }
  const kiln_te_tensor_t *input = t->args->inputs[1];
  const kiln_tir_expr_t *zeros[1] = {kiln_tir_b_i32(b, 0)};
  const kiln_tir_expr_t *k = kiln_te_read(b, input, input->ndim, zeros);
  const kiln_tir_expr_t *lo = kiln_tir_b_int(b, KILN_DTYPE_INT64, -t->bound);
  const kiln_tir_expr_t *hi = kiln_tir_b_int(b, KILN_DTYPE_INT64, t->bound);
  k = kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, k, lo), lo, k);
  k = kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, k, hi), hi, k);
  return kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT32), k);
}

static const kiln_tir_expr_t *trilu_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const trilu_t *t = user;
  const kiln_trilu_attrs_t *attrs = t->args->attrs;
  const kiln_te_tensor_t *input = t->args->inputs[0];
  int n = input->ndim;
  const kiln_tir_expr_t *diagonal =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, indices[n - 1], indices[n - 2]);
  const kiln_tir_expr_t *kept = kiln_tir_b_bin(
      b, attrs->upper ? KILN_TIR_EXPR_GE : KILN_TIR_EXPR_LE, diagonal, trilu_k(b, t));
  const kiln_tir_expr_t *x = kiln_te_read(b, input, n, indices);
  kiln_dtype_t dtype = input->dtype;
  bool is_float = dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64 ||
                  dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16;
  const kiln_tir_expr_t *zero =
      is_float ? kiln_tir_b_float(b, dtype, 0.0) : kiln_tir_b_int(b, dtype, 0);
  return kiln_tir_b_select(b, kept, x, zero);
}

kiln_status_t kiln_compute_trilu(const kiln_compute_args_t *args,
                                 kiln_compute_result_t *out_result) {
  const kiln_trilu_attrs_t *attrs = args->attrs;
  const kiln_te_tensor_t *input = args->inputs[0];
  if (input->ndim < 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data must have rank >= 2, not %d", args->op->name,
                       input->ndim);
  }
  int64_t bound = input->shape[input->ndim - 1] + input->shape[input->ndim - 2];
  trilu_t t = {args, attrs->k < -bound ? -bound : (attrs->k > bound ? bound : attrs->k), bound};
  return kiln_compute_one(args, trilu_body, &t, out_result);
}
