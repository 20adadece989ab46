/*
 * Compute rules of the shape operators (transform_shape.c): reshape,
 * expand_dims, squeeze, nn.batch_flatten, transpose, cast, tile and
 * broadcast_to.
 *
 * reshape and its three relatives keep the elements in row-major order, so
 * an output index becomes the flat index sum(out[k] * out_stride[k]) and
 * input dim d reads (flat // in_stride[d]) % in_dim[d]; the simplifier folds
 * the constants and drops what the loop bounds make redundant (the default
 * schedule fuses the output's axes, so the flat index is the fused loop
 * variable). Index arithmetic is int32, like the tensor expressions', so a
 * tensor of more than INT32_MAX elements is UNIMPLEMENTED. transpose reads
 * input dim perm[k] at output index k; tile reads out[d] % in_dim (aligned
 * at the last dim); broadcast_to reads with NumPy broadcasting.
 *
 * cast is the loop IR's Cast, whose semantics are the reference's (both
 * are base/scalar_ops.h's): float -> int truncates toward zero and
 * saturates at the target's range, NaN giving 0; int -> narrower int wraps,
 * anything -> bool is != 0, int -> float rounds to nearest. float16 and
 * bfloat16 sources are widened to float32 first (exactly), as the reference
 * reads them. float -> uint64 saturates at 2^64 - 1 at run time (the
 * simplifier leaves a constant one above INT64_MAX unfolded).
 */
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

/* ---- reshape, expand_dims, squeeze, nn.batch_flatten ---- */

typedef struct reshape_t {
  const kiln_te_tensor_t *data;
  int out_ndim;
  int32_t out_strides[KILN_MAX_RANK];
  int32_t in_strides[KILN_MAX_RANK];
} reshape_t;

static void strides32(int ndim, const int64_t *shape, int32_t *out_strides) {
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out_strides[d] = (int32_t)stride;
    stride *= shape[d];
  }
}

static const kiln_tir_expr_t *reshape_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const reshape_t *r = user;
  const kiln_tir_expr_t *flat = kiln_tir_b_i32(b, 0);
  for (int k = 0; k < r->out_ndim; ++k) {
    flat = kiln_tir_b_add(b, flat,
                          kiln_tir_b_mul(b, indices[k], kiln_tir_b_i32(b, r->out_strides[k])));
  }
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < r->data->ndim; ++d) {
    if (r->data->shape[d] == 1) {
      at[d] = kiln_tir_b_i32(b, 0);
      continue;
    }
    at[d] = kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV, flat, kiln_tir_b_i32(b, r->in_strides[d]));
    if (d > 0) {
      at[d] =
          kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, at[d], kiln_tir_b_i32(b, r->data->shape[d]));
    }
  }
  return kiln_te_read(b, r->data, r->data->ndim, at);
}

kiln_status_t kiln_compute_reshape(const kiln_compute_args_t *args,
                                   kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  reshape_t r = {args->inputs[0], type->ndim, {0}, {0}};
  int64_t count = kiln_transform_product(type->shape, 0, type->ndim);
  if (count > INT32_MAX) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: %lld elements; the compute rule's flat index is int32 (at most %d)",
                       args->op->name, (long long)count, INT32_MAX);
  }
  strides32(type->ndim, type->shape, r.out_strides);
  strides32(r.data->ndim, r.data->shape, r.in_strides);
  return kiln_compute_one(args, reshape_body, &r, out_result);
}

/* ---- transpose ---- */

typedef struct transpose_t {
  const kiln_te_tensor_t *data;
  int perm[KILN_MAX_RANK]; /* output dim k is input dim perm[k] */
} transpose_t;

static const kiln_tir_expr_t *transpose_body(kiln_tir_builder_t *b,
                                             const kiln_tir_expr_t *const *indices, void *user) {
  const transpose_t *t = user;
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int k = 0; k < t->data->ndim; ++k) {
    at[t->perm[k]] = indices[k];
  }
  return kiln_te_read(b, t->data, t->data->ndim, at);
}

kiln_status_t kiln_compute_transpose(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  const kiln_ints_t *axes = &((const kiln_transpose_attrs_t *)args->attrs)->axes;
  transpose_t t = {args->inputs[0], {0}};
  int ndim = t.data->ndim;
  if (axes->count == 0) {
    for (int k = 0; k < ndim; ++k) {
      t.perm[k] = ndim - 1 - k;
    }
  } else {
    /* The type relation has checked the count; the axes normalize here. */
    kiln_tensor_type_t data = kiln_tcompute_type_of(t.data);
    bool listed[KILN_MAX_RANK];
    KILN_RETURN_IF_ERROR(kiln_transform_axes(args->op, "axes", axes, &data, t.perm, listed));
  }
  return kiln_compute_one(args, transpose_body, &t, out_result);
}

/* ---- cast ---- */

static bool is_integer(kiln_dtype_t dtype) {
  return kiln_tir_dtype_is_int(kiln_tir_scalar(dtype));
}

static bool is_float(kiln_dtype_t dtype) {
  return kiln_tir_dtype_is_float(kiln_tir_scalar(dtype));
}

static const kiln_tir_expr_t *cast_value(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *v,
                                         const kiln_compute_args_t *args) {
  kiln_dtype_t to = ((const kiln_cast_attrs_t *)args->attrs)->dtype;
  const kiln_tir_expr_t *x = v[0];
  if (!x || !is_float(x->dtype.base) || !is_integer(to)) {
    return kiln_tir_b_cast(b, kiln_tir_scalar(to), x);
  }
  if (x->dtype.base != KILN_DTYPE_FLOAT32 && x->dtype.base != KILN_DTYPE_FLOAT64) {
    x = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_FLOAT32), x);
  }
  return kiln_tir_b_cast(b, kiln_tir_scalar(to), x);
}

kiln_status_t kiln_compute_cast(const kiln_compute_args_t *args,
                                kiln_compute_result_t *out_result) {
  char name[64];
  return kiln_compute_elemwise(args, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                               cast_value, out_result);
}

/* ---- tile ---- */

typedef struct tile_t {
  const kiln_te_tensor_t *data;
  int offset; /* output rank - input rank */
} tile_t;

static const kiln_tir_expr_t *tile_body(kiln_tir_builder_t *b,
                                        const kiln_tir_expr_t *const *indices, void *user) {
  const tile_t *t = user;
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  for (int d = 0; d < t->data->ndim; ++d) {
    at[d] = t->data->shape[d] == 1
                ? kiln_tir_b_i32(b, 0)
                : kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_MOD, indices[d + t->offset],
                                 kiln_tir_b_i32(b, t->data->shape[d]));
  }
  return kiln_te_read(b, t->data, t->data->ndim, at);
}

kiln_status_t kiln_compute_tile(const kiln_compute_args_t *args,
                                kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  tile_t t = {args->inputs[0], type->ndim - args->inputs[0]->ndim};
  return kiln_compute_one(args, tile_body, &t, out_result);
}

/* ---- broadcast_to ---- */

typedef struct broadcast_to_t {
  const kiln_te_tensor_t *data;
  int out_ndim;
} broadcast_to_t;

static const kiln_tir_expr_t *broadcast_to_body(kiln_tir_builder_t *b,
                                                const kiln_tir_expr_t *const *indices, void *user) {
  const broadcast_to_t *t = user;
  const kiln_tir_expr_t *at[KILN_MAX_RANK] = {0};
  kiln_compute_broadcast_indices(b, t->data, t->out_ndim, indices, at);
  return kiln_te_read(b, t->data, t->data->ndim, at);
}

kiln_status_t kiln_compute_broadcast_to(const kiln_compute_args_t *args,
                                        kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  broadcast_to_t t = {args->inputs[0], type->ndim};
  return kiln_compute_one(args, broadcast_to_body, &t, out_result);
}
