/*
 * Compute rules of nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d,
 * nn.global_max_pool2d, nn.max_pool3d and nn.avg_pool3d (nn_pool.c).
 *
 * A pool is a reduction over the window's reduce axes (rh, rw; rd, rh, rw
 * for the 3-D forms: every step below is per spatial axis) at each output
 * element: the input cell of output row oh is ih = oh * stride -
 * pad_top + rh * dilation (and the same for the width). The data is read
 * in the `layout` attribute's storage order: output and data share every
 * axis but H and W, so the data's index is the output's with ih and iw put
 * at H's and W's positions (NCHW, NHWC, NCHW16c alike). A global pool is the
 * window of the whole input.
 *
 * Padding follows the reference: a cell outside the input is masked (a
 * select evaluates both arms, so the cell is read at a clamped index and
 * then replaced), with -inf for max, the reference's start, rather than te's
 * max identity (the dtype's lowest finite value), so a window with no cell
 * inside gives -inf; with 0 for avg. The mask is only built along a dim
 * whose windows can leave the input (padding, or a ceil_mode window that
 * runs past the end). max_pool2d is two reductions over the window,
 * T_max_pool2d_max and T_max_pool2d_nan (the max of the cells' isnan flags),
 * and an output that gives NaN where the window holds one, as the
 * reference does: te's max combiner (acc > x ? acc : x) alone would drop a
 * NaN that is not the window's last cell. avg_pool2d sums into T_avg_pool2d_sum and divides by the
 * window's cells inside the input (count_include_pad False) or inside the
 * padded input (True), a closed form in oh and ow: the k in [0, K) with
 * lo <= s + k * d <= hi number max(0, min(K - 1, (hi - s) // d) - max(0,
 * ceil((lo - s) / d)) + 1). A window with no counted cell gives 0.
 *
 * Under the default schedule the reductions run their data axes fused and
 * parallel, the window inside; the avg output is fused, parallel and
 * vectorized. The rule handles the dtypes the reference kernel does:
 * float32, and for max the integers of up to 32 bits, whose max is one
 * reduction from the dtype's lowest value (the padding too), with no NaN
 * stage.
 */
#include <math.h>
#include <stdio.h>

#include "op/nn_common.h"
#include "op/nn_compute.h"

typedef struct pool_t {
  const kiln_compute_args_t *args;
  const kiln_te_tensor_t *data;
  int ndim;
  int spatial;                         /* 2 (H, W) or 3 (D, H, W) */
  int pos[KILN_NN_MAX_SPATIAL];        /* storage positions of the spatial axes */
  int64_t extent[KILN_NN_MAX_SPATIAL]; /* their extents */
  kiln_nn_window_t window;
  bool mask[KILN_NN_MAX_SPATIAL]; /* whether windows along a spatial axis can leave the input */
  bool count_include_pad;
  const kiln_te_iter_var_t *r[KILN_NN_MAX_SPATIAL];
  const kiln_te_tensor_t *sum; /* avg */
  const kiln_te_tensor_t *max; /* max */
  const kiln_te_tensor_t *nan; /* max: 1 where the window holds a NaN */
} pool_t;

/* ih or iw of output position `o` along `dim` and reduce axis value. */
static const kiln_tir_expr_t *pool_cell(kiln_tir_builder_t *b, const pool_t *p, int dim,
                                        const kiln_tir_expr_t *o) {
  const kiln_nn_window_t *w = &p->window;
  const kiln_tir_expr_t *start =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_mul(b, o, kiln_tir_b_i32(b, w->stride[dim])),
                     kiln_tir_b_i32(b, w->pad[dim]));
  return kiln_tir_b_add(
      b, start,
      kiln_tir_b_mul(b, kiln_tir_b_v(p->r[dim]->var), kiln_tir_b_i32(b, w->dilation[dim])));
}

/* The window cell's value, or `pad` outside the input. */
static const kiln_tir_expr_t *pool_value(kiln_tir_builder_t *b, const pool_t *p,
                                         const kiln_tir_expr_t *const *indices,
                                         const kiln_tir_expr_t *pad) {
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0; d < p->ndim; ++d) {
    at[d] = indices[d];
  }
  const kiln_tir_expr_t *inside = NULL;
  for (int dim = 0; dim < p->spatial; ++dim) {
    const kiln_tir_expr_t *cell = pool_cell(b, p, dim, indices[p->pos[dim]]);
    at[p->pos[dim]] = cell;
    if (p->mask[dim]) {
      at[p->pos[dim]] = kiln_compute_clamp(b, cell, 0, p->extent[dim] - 1);
      const kiln_tir_expr_t *in = kiln_compute_in_range(b, cell, 0, p->extent[dim]);
      inside = inside ? kiln_tir_b_bin(b, KILN_TIR_EXPR_AND, inside, in) : in;
    }
  }
  const kiln_tir_expr_t *x = kiln_te_read(b, p->data, p->ndim, at);
  return inside ? kiln_tir_b_select(b, inside, x, pad) : x;
}

static const kiln_tir_expr_t *max_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const pool_t *p = user;
  return pool_value(b, p, indices, kiln_tir_b_float(b, p->data->dtype, -(double)INFINITY));
}

/* 1 where the cell is NaN (a padded cell is not). */
static const kiln_tir_expr_t *nan_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const pool_t *p = user;
  kiln_dtype_t dtype = p->data->dtype;
  const kiln_tir_expr_t *x = pool_value(b, p, indices, kiln_tir_b_float(b, dtype, 0.0));
  return kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, x, x),
                           kiln_tir_b_float(b, dtype, 1.0), kiln_tir_b_float(b, dtype, 0.0));
}

static const kiln_tir_expr_t *max_out_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const pool_t *p = user;
  kiln_dtype_t dtype = p->data->dtype;
  const kiln_tir_expr_t *has_nan =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, kiln_te_read(b, p->nan, p->ndim, indices),
                     kiln_tir_b_float(b, dtype, 0.0));
  return kiln_tir_b_select(b, has_nan, kiln_tir_b_float(b, dtype, (double)NAN),
                           kiln_te_read(b, p->max, p->ndim, indices));
}

/* An integer max pool: the cell, or the dtype's lowest value outside the
 * input (the reduction's identity, and the reference's result for a window
 * with no cell inside). */
static const kiln_tir_expr_t *int_max_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const pool_t *p = user;
  int64_t lo = 0, hi = 0;
  kiln_tir_dtype_int_range(p->data->dtype, &lo, &hi);
  return pool_value(b, p, indices, kiln_tir_b_int(b, p->data->dtype, lo));
}

static const kiln_tir_expr_t *int_max_out_body(kiln_tir_builder_t *b,
                                               const kiln_tir_expr_t *const *indices, void *user) {
  const pool_t *p = user;
  return kiln_te_read(b, p->max, p->ndim, indices);
}

static const kiln_tir_expr_t *sum_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const pool_t *p = user;
  return pool_value(b, p, indices, kiln_tir_b_float(b, p->data->dtype, 0.0));
}

/* How many k in [0, K) have lo <= start + k * d <= hi, start being the
 * window's first cell along `dim` at output position `o`. */
static const kiln_tir_expr_t *pool_count(kiln_tir_builder_t *b, const pool_t *p, int dim,
                                         const kiln_tir_expr_t *o, int64_t lo, int64_t hi) {
  const kiln_nn_window_t *w = &p->window;
  const kiln_tir_expr_t *d = kiln_tir_b_i32(b, w->dilation[dim]);
  const kiln_tir_expr_t *start =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_mul(b, o, kiln_tir_b_i32(b, w->stride[dim])),
                     kiln_tir_b_i32(b, w->pad[dim]));
  const kiln_tir_expr_t *first = kiln_tir_b_bin(
      b, KILN_TIR_EXPR_FLOOR_DIV,
      kiln_tir_b_add(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_i32(b, lo), start),
                     kiln_tir_b_i32(b, w->dilation[dim] - 1)),
      d);
  first = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, first, kiln_tir_b_i32(b, 0));
  const kiln_tir_expr_t *last =
      kiln_tir_b_bin(b, KILN_TIR_EXPR_FLOOR_DIV,
                     kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, kiln_tir_b_i32(b, hi), start), d);
  last = kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, last, kiln_tir_b_i32(b, w->kernel[dim] - 1));
  const kiln_tir_expr_t *count =
      kiln_tir_b_add(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_SUB, last, first), kiln_tir_b_i32(b, 1));
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, count, kiln_tir_b_i32(b, 0));
}

static const kiln_tir_expr_t *avg_out_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const pool_t *p = user;
  kiln_dtype_t dtype = p->data->dtype;
  const kiln_tir_expr_t *sum = kiln_te_read(b, p->sum, p->ndim, indices);
  bool masked = false;
  int64_t cells = 1;
  for (int dim = 0; dim < p->spatial; ++dim) {
    masked = masked || p->mask[dim];
    cells *= p->window.kernel[dim];
  }
  if (!masked) {
    return kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, sum, kiln_tir_b_float(b, dtype, (double)cells));
  }
  const kiln_tir_expr_t *divisor = NULL;
  for (int dim = 0; dim < p->spatial; ++dim) {
    int64_t lo = p->count_include_pad ? -p->window.pad[dim] : 0;
    int64_t hi =
        p->extent[dim] - 1 + (p->count_include_pad ? p->window.pad[dim + p->window.spatial] : 0);
    const kiln_tir_expr_t *count = pool_count(b, p, dim, indices[p->pos[dim]], lo, hi);
    divisor = divisor ? kiln_tir_b_mul(b, divisor, count) : count;
  }
  const kiln_tir_expr_t *mean = kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, sum,
                                               kiln_tir_b_cast(b, kiln_tir_scalar(dtype), divisor));
  return kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, divisor, kiln_tir_b_i32(b, 0)),
                           mean, kiln_tir_b_float(b, dtype, 0.0));
}

/* The spatial axes of the layout: (D,) H and W, in logical order. */
static const char *pool_spatial_axes(const kiln_op_t *op) {
  return op->id == KILN_OP_MAX_POOL3D || op->id == KILN_OP_AVG_POOL3D ? "DHW" : "HW";
}

/* The window, the positions of the spatial axes, and where a mask is
 * needed. */
static kiln_status_t pool_make(const kiln_compute_args_t *args, const kiln_tensor_type_t *out,
                               pool_t *p) {
  const kiln_op_t *op = args->op;
  bool global = op->id == KILN_OP_GLOBAL_AVG_POOL2D || op->id == KILN_OP_GLOBAL_MAX_POOL2D;
  const char *text = kiln_nn_pool_layout_text(op, args->attrs);
  const char *axes = pool_spatial_axes(op);
  kiln_layout_t layout;
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_layout_parse(text, &layout), "%s: layout", op->name);
  p->spatial = axes[2] ? 3 : 2;
  bool found = layout.ndim == p->ndim;
  for (int dim = 0; dim < p->spatial; ++dim) {
    p->pos[dim] = kiln_layout_axis_index(&layout, axes[dim]);
    found = found && p->pos[dim] >= 0;
  }
  if (!found) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: layout %s does not fit data of rank %d", op->name,
                       text, p->ndim);
  }
  for (int dim = 0; dim < p->spatial; ++dim) {
    p->extent[dim] = p->data->shape[p->pos[dim]];
  }
  if (global) {
    p->window = kiln_nn_window_whole(p->spatial, p->extent);
  } else {
    const kiln_nn_pool2d_attrs_t *a = args->attrs;
    p->window = kiln_nn_window_of(p->spatial, a->pool_size.values, a->strides, a->dilation,
                                  a->padding, a->ceil_mode);
    p->count_include_pad = a->count_include_pad;
  }
  for (int dim = 0; dim < p->spatial; ++dim) {
    const kiln_nn_window_t *w = &p->window;
    int64_t last = (out->shape[p->pos[dim]] - 1) * w->stride[dim] - w->pad[dim] +
                   (w->kernel[dim] - 1) * w->dilation[dim];
    p->mask[dim] = w->pad[dim] > 0 || last >= p->extent[dim];
  }
  return KILN_OK;
}

static kiln_status_t pool_reduce(pool_t *p, const char *stage, const kiln_tensor_type_t *out,
                                 const kiln_tir_expr_t *init, kiln_te_reducer_t reducer,
                                 kiln_te_fcompute_fn body, const kiln_te_tensor_t **out_tensor) {
  kiln_arena_t *arena = p->args->arena;
  static const char *const names2[2] = {"rh", "rw"}, *const names3[3] = {"rd", "rh", "rw"};
  for (int dim = 0; dim < p->spatial; ++dim) {
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(arena, p->spatial == 3 ? names3[dim] : names2[dim], 0,
                                             p->window.kernel[dim], &p->r[dim]));
  }
  char base[48], name[64];
  kiln_compute_tensor_name(p->args->op, base, sizeof(base));
  snprintf(name, sizeof(name), "%s_%s", base, stage);
  return kiln_te_compute_reduce(arena, name, p->ndim, out->shape, reducer, init, p->spatial, p->r,
                                1, &p->data, body, p, out_tensor);
}

/* The max of an integer dtype: one reduction (no NaN to look for) and the
 * output stage that reads it. */
static kiln_status_t pool_int_max(pool_t *p, const kiln_tensor_type_t *out, const char *name,
                                  kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(pool_reduce(p, "max", out, NULL, KILN_TE_REDUCE_MAX, int_max_body, &p->max));
  return kiln_te_compute(p->args->arena, name, p->ndim, out->shape, 1, &p->max, int_max_out_body, p,
                         &out_result->outputs[0]);
}

kiln_status_t kiln_compute_nn_pool(const kiln_compute_args_t *args,
                                   kiln_compute_result_t *out_result) {
  kiln_op_id_t id = args->op->id;
  bool is_max =
      id == KILN_OP_MAX_POOL2D || id == KILN_OP_GLOBAL_MAX_POOL2D || id == KILN_OP_MAX_POOL3D;
  kiln_dtype_t dtype = args->num_inputs > 0 ? args->inputs[0]->dtype : KILN_DTYPE_FLOAT32;
  bool integer = is_max && dtype != KILN_DTYPE_FLOAT32 && kiln_nn_max_pool_dtype(dtype);
  if (!integer) {
    KILN_RETURN_IF_ERROR(kiln_compute_require_float32(args));
  }
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  pool_t p = {.args = args, .data = args->inputs[0], .ndim = args->inputs[0]->ndim};
  KILN_RETURN_IF_ERROR(pool_make(args, out, &p));
  char name[64];
  kiln_compute_tensor_name(args->op, name, sizeof(name));
  out_result->num_outputs = 1;
  if (integer) {
    return pool_int_max(&p, out, name, out_result);
  }
  if (is_max) {
    const kiln_tir_expr_t *minus_inf = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_nn_c_float_const(args->arena, p.data->dtype, -(double)INFINITY, &minus_inf));
    KILN_RETURN_IF_ERROR(
        pool_reduce(&p, "max", out, minus_inf, KILN_TE_REDUCE_MAX, max_body, &p.max));
    const kiln_tir_expr_t *zero = NULL;
    KILN_RETURN_IF_ERROR(kiln_nn_c_float_const(args->arena, p.data->dtype, 0.0, &zero));
    KILN_RETURN_IF_ERROR(pool_reduce(&p, "nan", out, zero, KILN_TE_REDUCE_MAX, nan_body, &p.nan));
    const kiln_te_tensor_t *inputs[2] = {p.max, p.nan};
    return kiln_te_compute(args->arena, name, p.ndim, out->shape, 2, inputs, max_out_body, &p,
                           &out_result->outputs[0]);
  }
  KILN_RETURN_IF_ERROR(pool_reduce(&p, "sum", out, NULL, KILN_TE_REDUCE_SUM, sum_body, &p.sum));
  return kiln_te_compute(args->arena, name, p.ndim, out->shape, 1, &p.sum, avg_out_body, &p,
                         &out_result->outputs[0]);
}
