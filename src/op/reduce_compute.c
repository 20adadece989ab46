/*
 * Compute rules of the reductions: sum, mean, max, min, prod, argmax and
 * argmin (reduce.c is the reference).
 *
 * Each rule maps the output's indices to the input's: a reduced dim reads a
 * reduce axis over its whole extent, a kept dim the output index at its
 * position (keepdims keeps the reduced dims as extent-1 dims, read through
 * by index 0's position). The reference's numerics are copied exactly:
 * - sum and mean of float32 accumulate in float64 (a T_<op>_acc stage) and
 *   round once; int64 sums wrap (the loop IR's integers wrap).
 * - max and min let NaN win: a T_<op>_nan stage (max over "x is NaN") says
 *   whether a row has one, T_<op>_acc reduces with NaN read as the
 *   identity (-inf / +inf, not the te default of -+FLT_MAX, so a row of
 *   infinities stays infinite), and the output selects NaN or the value.
 * - argmax and argmin are two reductions as the brief asks: the extreme
 *   value as above (with its NaN flag for floats), then the first (min) or,
 *   with select_last_index, the last (max) index whose element equals it,
 *   or is NaN when the row has one: exactly the reference's scan order.
 * - prod has no te combiner (sum, max, min only), so it is an extern op:
 *   a loop over the output elements, a loop nest over the reduced dims
 *   inside, multiplying in place into the extern's output, which is float64
 *   for floats (T_prod_acc, cast by a T_prod stage) and the dtype for int64
 *   (te rejects an extern that writes a buffer of its own, so there is no
 *   local accumulator).
 * Dtypes are the reference's: float32, float64 and int64 (mean: floats);
 * others are UNIMPLEMENTED naming the operator. Every stage is a reduction
 * or an output, so the default schedule parallelizes each over its data
 * axes and keeps the reduction loops inside.
 */
#include <math.h>
#include <stdio.h>

#include "op/compute.h"
#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/transform_common.h"

typedef enum reduce_kind_e {
  RK_SUM,
  RK_MEAN,
  RK_MAX,
  RK_MIN,
  RK_PROD,
  RK_ARGMAX,
  RK_ARGMIN,
} reduce_kind_t;

static reduce_kind_t kind_of(const kiln_op_t *op) {
  static const struct {
    kiln_op_id_t id;
    reduce_kind_t kind;
  } kinds[] = {{KILN_OP_SUM, RK_SUM}, {KILN_OP_MEAN, RK_MEAN}, {KILN_OP_MAX, RK_MAX},
               {KILN_OP_MIN, RK_MIN}, {KILN_OP_PROD, RK_PROD}, {KILN_OP_ARGMIN, RK_ARGMIN}};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); ++k) {
    if (op->id == kinds[k].id) {
      return kinds[k].kind;
    }
  }
  return RK_ARGMAX;
}

/* Which input dims are reduced, and the reduce axes made for them. With
 * `axis_values` (dyn.sum: the axes input, read in the kernel), every dim has a reduce
 * axis, and the body masks the dims the axes do not name (see
 * read_input_any_axes). */
typedef struct reduce_map_t {
  const kiln_te_tensor_t *data;
  const kiln_te_tensor_t *axis_values;
  bool reduced[KILN_MAX_RANK];
  bool keepdims;
  int num_axes;
  const kiln_te_iter_var_t *axes[KILN_TE_MAX_REDUCE_AXES];
  int64_t count; /* elements per reduction */
  /* with axis_values: the reduce axis of each data dim, the output's rank */
  const kiln_te_iter_var_t *axes_of_dims[KILN_TE_MAX_REDUCE_AXES];
  int num_out;
} reduce_map_t;

static kiln_status_t reduce_map(const kiln_compute_args_t *args, reduce_map_t *out_map) {
  const kiln_te_tensor_t *data = args->inputs[0];
  kiln_tensor_type_t type = {.dtype = data->dtype, .ndim = data->ndim, .shape = data->shape};
  out_map->data = data;
  out_map->axis_values = NULL;
  reduce_kind_t kind = kind_of(args->op);
  if (kind == RK_ARGMAX || kind == RK_ARGMIN) {
    const kiln_argmax_attrs_t *attrs = args->attrs;
    int axis = 0;
    KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", attrs->axis, &type, 0, &axis));
    for (int d = 0; d < data->ndim; ++d) {
      out_map->reduced[d] = d == axis;
    }
    out_map->keepdims = attrs->keepdims;
  } else {
    const kiln_reduce_attrs_t *attrs = args->attrs;
    int axes[KILN_MAX_RANK];
    KILN_RETURN_IF_ERROR(
        kiln_transform_axes(args->op, "axis", &attrs->axis, &type, axes, out_map->reduced));
    for (int d = 0; d < data->ndim && attrs->axis.count == 0; ++d) {
      out_map->reduced[d] = true;
    }
    out_map->keepdims = attrs->keepdims;
  }
  out_map->num_axes = 0;
  out_map->count = 1;
  for (int d = 0; d < data->ndim; ++d) {
    if (!out_map->reduced[d]) {
      continue;
    }
    char name[16];
    snprintf(name, sizeof(name), "k%d", out_map->num_axes);
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(args->arena, name, 0, data->shape[d],
                                             &out_map->axes[out_map->num_axes++]));
    out_map->count *= data->shape[d];
  }
  return KILN_OK;
}

static const kiln_tir_expr_t *read_input_any_axes(kiln_tir_builder_t *b, const reduce_map_t *map,
                                                  const kiln_tir_expr_t *const *indices);

/* The input element a reduction body reads at output `indices`. */
static const kiln_tir_expr_t *read_input(kiln_tir_builder_t *b, const reduce_map_t *map,
                                         const kiln_tir_expr_t *const *indices) {
  if (map->axis_values) {
    return read_input_any_axes(b, map, indices);
  }
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0, r = 0, k = 0; d < map->data->ndim; ++d) {
    if (map->reduced[d]) {
      at[d] = kiln_tir_b_v(map->axes[r++]->var);
      k += map->keepdims ? 1 : 0;
    } else {
      at[d] = indices[k++];
    }
  }
  return kiln_te_read(b, map->data, map->data->ndim, at);
}

static const kiln_tir_expr_t *is_nan(kiln_tir_builder_t *b, const kiln_tir_expr_t *x) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_NE, x, x);
}

/* What one stage's fcompute needs. */
typedef struct stage_t {
  const reduce_map_t *map;
  reduce_kind_t kind;
  kiln_dtype_t dtype;          /* of the result */
  int ndim;                    /* of the output */
  const kiln_te_tensor_t *acc; /* an earlier stage read at the output indices */
  const kiln_te_tensor_t *nan; /* the NaN flag stage, or NULL */
  bool last;                   /* select_last_index */
} stage_t;

static const kiln_tir_expr_t *read_stage(kiln_tir_builder_t *b, const kiln_te_tensor_t *t, int ndim,
                                         const kiln_tir_expr_t *const *indices) {
  return kiln_te_read(b, t, ndim, indices);
}

/* sum / mean accumulator: the element in the accumulator's dtype. */
static const kiln_tir_expr_t *sum_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const stage_t *s = user;
  const kiln_tir_expr_t *x = read_input(b, s->map, indices);
  return x && x->dtype.base != s->dtype ? kiln_tir_b_cast(b, kiln_tir_scalar(s->dtype), x) : x;
}

/* 1 where the element is NaN (int32). */
static const kiln_tir_expr_t *nan_body(kiln_tir_builder_t *b, const kiln_tir_expr_t *const *indices,
                                       void *user) {
  const stage_t *s = user;
  const kiln_tir_expr_t *x = read_input(b, s->map, indices);
  return kiln_tir_b_select(b, is_nan(b, x), kiln_tir_b_i32(b, 1), kiln_tir_b_i32(b, 0));
}

static bool is_float(kiln_dtype_t dtype) {
  return dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64;
}

static bool wants_max(reduce_kind_t kind) {
  return kind == RK_MAX || kind == RK_ARGMAX;
}

/* max / min accumulator: floats read NaN as the identity. */
static const kiln_tir_expr_t *extreme_body(kiln_tir_builder_t *b,
                                           const kiln_tir_expr_t *const *indices, void *user) {
  const stage_t *s = user;
  const kiln_tir_expr_t *x = read_input(b, s->map, indices);
  if (!is_float(s->dtype)) {
    return x;
  }
  const kiln_tir_expr_t *identity =
      kiln_tir_b_float(b, s->dtype, wants_max(s->kind) ? -INFINITY : INFINITY);
  return kiln_tir_b_select(b, is_nan(b, x), identity, x);
}

/* The final value of sum (float32), mean, max and min from the stages. */
static const kiln_tir_expr_t *finish_body(kiln_tir_builder_t *b,
                                          const kiln_tir_expr_t *const *indices, void *user) {
  const stage_t *s = user;
  const kiln_tir_expr_t *value = read_stage(b, s->acc, s->ndim, indices);
  if (s->kind == RK_MEAN) {
    value = kiln_tir_b_bin(b, KILN_TIR_EXPR_DIV, value,
                           kiln_tir_b_float(b, KILN_DTYPE_FLOAT64, (double)s->map->count));
  }
  if (s->nan) {
    const kiln_tir_expr_t *flag = read_stage(b, s->nan, s->ndim, indices);
    value =
        kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, flag, kiln_tir_b_i32(b, 0)),
                          kiln_tir_b_float(b, value ? value->dtype.base : s->dtype, NAN), value);
  }
  return value && value->dtype.base != s->dtype
             ? kiln_tir_b_cast(b, kiln_tir_scalar(s->dtype), value)
             : value;
}

/* argmax / argmin: the index where the element is the extreme (or NaN, in a
 * row with one), int64; the reducer picks the first or last. */
static const kiln_tir_expr_t *index_body(kiln_tir_builder_t *b,
                                         const kiln_tir_expr_t *const *indices, void *user) {
  const stage_t *s = user;
  const kiln_tir_expr_t *x = read_input(b, s->map, indices);
  const kiln_tir_expr_t *best = read_stage(b, s->acc, s->ndim, indices);
  const kiln_tir_expr_t *hit = kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, x, best);
  if (s->nan) {
    const kiln_tir_expr_t *flag = read_stage(b, s->nan, s->ndim, indices);
    const kiln_tir_expr_t *has = kiln_tir_b_bin(b, KILN_TIR_EXPR_GT, flag, kiln_tir_b_i32(b, 0));
    hit = kiln_tir_b_select(b, has, is_nan(b, x), hit);
  }
  const kiln_tir_expr_t *k =
      kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64), kiln_tir_b_v(s->map->axes[0]->var));
  const kiln_tir_expr_t *miss = kiln_tir_b_int(b, KILN_DTYPE_INT64, s->last ? -1 : INT64_MAX);
  return kiln_tir_b_select(b, hit, k, miss);
}

/* One reduction or compute stage named T_<op>[_suffix]. */
static kiln_status_t make_stage(const kiln_compute_args_t *args, const char *suffix,
                                const kiln_tensor_type_t *out, kiln_te_reducer_t reducer,
                                const kiln_tir_expr_t *init, kiln_te_fcompute_fn fn, stage_t *stage,
                                const kiln_te_tensor_t **out_tensor) {
  char base[64];
  char name[80];
  kiln_compute_tensor_name(args->op, base, sizeof(base));
  snprintf(name, sizeof(name), "%s%s%s", base, suffix[0] ? "_" : "", suffix);
  const kiln_te_tensor_t *inputs[4] = {stage->map->data, stage->acc, stage->nan};
  int num_inputs = stage->nan ? 3 : (stage->acc ? 2 : 1);
  if (!stage->acc && stage->nan) {
    inputs[1] = stage->nan;
    num_inputs = 2;
  }
  if (stage->map->axis_values && !stage->acc) { /* the reduction reads the axes */
    inputs[num_inputs++] = stage->map->axis_values;
  }
  if (reducer == KILN_TE_REDUCE_NONE) {
    return kiln_te_compute(args->arena, name, out->ndim, out->shape, num_inputs, inputs, fn, stage,
                           out_tensor);
  }
  return kiln_te_compute_reduce(args->arena, name, out->ndim, out->shape, reducer, init,
                                stage->map->num_axes, stage->map->axes, num_inputs, inputs, fn,
                                stage, out_tensor);
}

static kiln_status_t check_dtype(const kiln_compute_args_t *args, bool int64_ok) {
  kiln_dtype_t dtype = args->inputs[0]->dtype;
  if (is_float(dtype) || (dtype == KILN_DTYPE_INT64 && int64_ok)) {
    return KILN_OK;
  }
  return kiln_transform_unsupported_dtype(
      args->op, dtype, int64_ok ? "float32, float64, int64" : "float32, float64");
}

/* A float identity init for max or min (an infinity). */
static kiln_status_t extreme_init(const kiln_compute_args_t *args, kiln_dtype_t dtype, bool max,
                                  const kiln_tir_expr_t **out_init) {
  *out_init = NULL;
  if (!is_float(dtype)) {
    return KILN_OK;
  }
  return kiln_tir_float_imm_create(args->arena, kiln_tir_scalar(dtype), max ? -INFINITY : INFINITY,
                                   out_init);
}

/* The extreme value stages of max, min, argmax, argmin: *out_nan is the
 * NaN-flag stage (NULL for int64), *out_acc the extreme ignoring NaN. */
static kiln_status_t extreme_stages(const kiln_compute_args_t *args, stage_t *stage,
                                    const kiln_tensor_type_t *shape,
                                    const kiln_te_tensor_t **out_nan,
                                    const kiln_te_tensor_t **out_acc) {
  *out_nan = NULL;
  bool max = wants_max(stage->kind);
  kiln_dtype_t dtype = stage->map->data->dtype;
  kiln_tensor_type_t type = *shape;
  if (is_float(dtype)) {
    type.dtype = KILN_DTYPE_INT32;
    KILN_RETURN_IF_ERROR(
        make_stage(args, "nan", &type, KILN_TE_REDUCE_MAX, NULL, nan_body, stage, out_nan));
  }
  const kiln_tir_expr_t *init = NULL;
  KILN_RETURN_IF_ERROR(extreme_init(args, dtype, max, &init));
  type.dtype = dtype;
  stage->dtype = dtype;
  return make_stage(args, "acc", &type, max ? KILN_TE_REDUCE_MAX : KILN_TE_REDUCE_MIN, init,
                    extreme_body, stage, out_acc);
}

/* prod: an extern op (see the top) accumulating in place in its output,
 * float64 for floats (T_prod_acc, then cast by T_prod) or int64 (T_prod). */
typedef struct prod_t {
  const reduce_map_t *map;
  const kiln_tensor_type_t *out;
} prod_t;

static const kiln_tir_stmt_t *prod_extern(kiln_tir_builder_t *b,
                                          const kiln_tir_buffer_t *const *inputs,
                                          const kiln_tir_buffer_t *const *outputs, void *user) {
  const prod_t *p = user;
  const kiln_te_tensor_t *data = p->map->data;
  const kiln_tir_buffer_t *acc = outputs[0];
  kiln_gather_nest_t outer, inner;
  kiln_gather_nest_begin(b, "i", p->out->ndim, p->out->shape, &outer);
  int64_t extents[KILN_MAX_RANK];
  for (int d = 0, r = 0; d < data->ndim; ++d) {
    if (p->map->reduced[d]) {
      extents[r++] = data->shape[d];
    }
  }
  kiln_gather_nest_begin(b, "k", p->map->num_axes, extents, &inner);
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  for (int d = 0, r = 0, k = 0; d < data->ndim; ++d) {
    if (p->map->reduced[d]) {
      at[d] = inner.index[r++];
      k += p->map->keepdims ? 1 : 0;
    } else {
      at[d] = outer.index[k++];
    }
  }
  const kiln_tir_expr_t *x = kiln_gather_load(b, inputs[0], data->ndim, at);
  if (acc->dtype != data->dtype) {
    x = kiln_tir_b_cast(b, kiln_tir_scalar(acc->dtype), x);
  }
  int n = p->out->ndim;
  const kiln_tir_expr_t *current = kiln_gather_load(b, acc, n, outer.index);
  const kiln_tir_expr_t *one = is_float(acc->dtype) ? kiln_tir_b_float(b, acc->dtype, 1.0)
                                                    : kiln_tir_b_int(b, acc->dtype, 1);
  const kiln_tir_stmt_t *step =
      kiln_gather_store(b, acc, kiln_tir_b_mul(b, current, x), n, outer.index);
  const kiln_tir_stmt_t *body = kiln_gather_seq2(b, kiln_gather_store(b, acc, one, n, outer.index),
                                                 kiln_gather_nest_end(b, &inner, step));
  return kiln_gather_nest_end(b, &outer, body);
}

static kiln_status_t compute_prod(const kiln_compute_args_t *args, stage_t *stage,
                                  const kiln_tensor_type_t *out,
                                  kiln_compute_result_t *out_result) {
  kiln_dtype_t dtype = stage->map->data->dtype;
  kiln_dtype_t wide = is_float(dtype) ? KILN_DTYPE_FLOAT64 : dtype;
  char base[64];
  char name[80];
  kiln_compute_tensor_name(args->op, base, sizeof(base));
  snprintf(name, sizeof(name), "%s%s", base, wide == dtype ? "" : "_acc");
  kiln_te_extern_output_t output = {name, out->ndim, out->shape, wide};
  prod_t p = {stage->map, out};
  out_result->num_outputs = 1;
  const kiln_te_tensor_t **result = &out_result->outputs[0];
  KILN_RETURN_IF_ERROR(kiln_te_extern(args->arena, name, 1, &output, 1, args->inputs, prod_extern,
                                      &p, wide == dtype ? result : &stage->acc));
  if (wide == dtype) {
    return KILN_OK;
  }
  return make_stage(args, "", out, KILN_TE_REDUCE_NONE, NULL, finish_body, stage, result);
}

kiln_status_t kiln_compute_reduce(const kiln_compute_args_t *args,
                                  kiln_compute_result_t *out_result) {
  reduce_kind_t kind = kind_of(args->op);
  KILN_RETURN_IF_ERROR(check_dtype(args, kind != RK_MEAN));
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  reduce_map_t map;
  KILN_RETURN_IF_ERROR(reduce_map(args, &map));
  kiln_dtype_t dtype = map.data->dtype;
  stage_t stage = {&map, kind, dtype, out->ndim, NULL, NULL, false};
  if (kind == RK_PROD) {
    return compute_prod(args, &stage, out, out_result);
  }
  out_result->num_outputs = 1;
  const kiln_te_tensor_t **result = &out_result->outputs[0];
  if (kind == RK_SUM && dtype != KILN_DTYPE_FLOAT32) {
    return make_stage(args, "", out, KILN_TE_REDUCE_SUM, NULL, sum_body, &stage, result);
  }
  if (kind == RK_SUM || kind == RK_MEAN) {
    kiln_tensor_type_t acc_type = *out;
    acc_type.dtype = stage.dtype = KILN_DTYPE_FLOAT64;
    KILN_RETURN_IF_ERROR(
        make_stage(args, "acc", &acc_type, KILN_TE_REDUCE_SUM, NULL, sum_body, &stage, &stage.acc));
  } else {
    const kiln_te_tensor_t *nan = NULL;
    KILN_RETURN_IF_ERROR(extreme_stages(args, &stage, out, &nan, &stage.acc));
    if (!nan) {
      *result = stage.acc;
      return KILN_OK;
    }
    stage.nan = nan;
  }
  stage.dtype = dtype;
  return make_stage(args, "", out, KILN_TE_REDUCE_NONE, NULL, finish_body, &stage, result);
}

kiln_status_t kiln_compute_argreduce(const kiln_compute_args_t *args,
                                     kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(check_dtype(args, true));
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  reduce_map_t map;
  KILN_RETURN_IF_ERROR(reduce_map(args, &map));
  const kiln_argmax_attrs_t *attrs = args->attrs;
  stage_t stage = {&map, kind_of(args->op),       map.data->dtype, out->ndim, NULL,
                   NULL, attrs->select_last_index};
  KILN_RETURN_IF_ERROR(extreme_stages(args, &stage, out, &stage.nan, &stage.acc));
  stage.dtype = KILN_DTYPE_INT64;
  out_result->num_outputs = 1;
  return make_stage(args, "", out,
                    attrs->select_last_index ? KILN_TE_REDUCE_MAX : KILN_TE_REDUCE_MIN, NULL,
                    index_body, &stage, &out_result->outputs[0]);
}

/* ---- sum over axes read at run time (dyn.sum) ---- */

static const kiln_tir_expr_t *i64(kiln_tir_builder_t *b, int64_t value) {
  return kiln_tir_b_int(b, KILN_DTYPE_INT64, value);
}

/* Whether the axes input names data dim d (negative axes count from the
 * rank; no axes name every dim). */
static const kiln_tir_expr_t *names_dim(kiln_tir_builder_t *b, const reduce_map_t *map, int d) {
  const kiln_te_tensor_t *axes = map->axis_values;
  int count = axes->ndim == 0 ? 1 : (int)axes->shape[0];
  int rank = map->data->ndim;
  const kiln_tir_expr_t *named = kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, i64(b, count), i64(b, 0));
  for (int k = 0; k < count; ++k) {
    const kiln_tir_expr_t *index[1] = {kiln_tir_b_i32(b, k)};
    const kiln_tir_expr_t *axis = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64),
                                                  kiln_te_read(b, axes, axes->ndim, index));
    axis = kiln_tir_b_select(b, kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, axis, i64(b, 0)),
                             kiln_tir_b_add(b, axis, i64(b, rank)), axis);
    named = kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, named,
                           kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, axis, i64(b, d)));
  }
  return named;
}

/* The output index data dim d reads when it is kept: its own position
 * with keepdims, else position d minus the reduced dims before it (chosen
 * among the output's indices by selects). */
static const kiln_tir_expr_t *kept_index(kiln_tir_builder_t *b, const reduce_map_t *map, int d,
                                         const kiln_tir_expr_t *before, int out_ndim,
                                         const kiln_tir_expr_t *const *indices) {
  if (map->keepdims) {
    return indices[d];
  }
  const kiln_tir_expr_t *index = kiln_tir_b_i32(b, 0);
  for (int j = 0; j < out_ndim && j <= d; ++j) {
    const kiln_tir_expr_t *at = kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, before, i64(b, d - j));
    index = kiln_tir_b_select(b, at, indices[j], index);
  }
  return index;
}

/* Data element (k0, k1, ...) of the reduce axes over every dim, where each
 * dim the axes do not name reads the output's index instead and counts
 * only at k = 0 (zero elsewhere): a sum over the named dims, in the
 * reference's order, whatever the axes hold. */
static const kiln_tir_expr_t *read_input_any_axes(kiln_tir_builder_t *b, const reduce_map_t *map,
                                                  const kiln_tir_expr_t *const *indices) {
  const kiln_te_tensor_t *data = map->data;
  int out_ndim = map->keepdims ? data->ndim : map->num_out;
  const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
  const kiln_tir_expr_t *counts = kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, i64(b, 0), i64(b, 0));
  const kiln_tir_expr_t *before = i64(b, 0);
  for (int d = 0; d < data->ndim; ++d) {
    const kiln_tir_expr_t *k = kiln_tir_b_v(map->axes_of_dims[d]->var);
    const kiln_tir_expr_t *named = names_dim(b, map, d);
    at[d] = kiln_tir_b_select(b, named, k, kept_index(b, map, d, before, out_ndim, indices));
    counts = kiln_tir_b_bin(
        b, KILN_TIR_EXPR_AND, counts,
        kiln_tir_b_bin(b, KILN_TIR_EXPR_OR, named,
                       kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, k, kiln_tir_b_i32(b, 0))));
    before = kiln_tir_b_add(b, before, kiln_tir_b_select(b, named, i64(b, 1), i64(b, 0)));
  }
  const kiln_tir_expr_t *x = kiln_te_read(b, data, data->ndim, at);
  const kiln_tir_expr_t *zero = is_float(data->dtype) ? kiln_tir_b_float(b, data->dtype, 0.0)
                                                      : kiln_tir_b_int(b, data->dtype, 0);
  return kiln_tir_b_select(b, counts, x, zero);
}

kiln_status_t kiln_compute_sum_any_axes(const kiln_compute_args_t *args, bool keepdims,
                                        kiln_compute_result_t *out_result) {
  KILN_RETURN_IF_ERROR(check_dtype(args, true));
  const kiln_te_tensor_t *data = args->inputs[0];
  if (args->num_inputs != 2 || data->ndim > KILN_TE_MAX_REDUCE_AXES) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: expected data of rank at most %d and axes",
                       args->op->name, KILN_TE_MAX_REDUCE_AXES);
  }
  const kiln_tensor_type_t *out = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &out));
  reduce_map_t map = {.data = data, .axis_values = args->inputs[1], .keepdims = keepdims};
  map.num_out = out->ndim;
  for (int d = 0; d < data->ndim; ++d) {
    char name[16];
    snprintf(name, sizeof(name), "k%d", d);
    KILN_RETURN_IF_ERROR(kiln_te_reduce_axis(args->arena, name, 0, data->shape[d], &map.axes[d]));
    map.axes_of_dims[d] = map.axes[d];
  }
  map.num_axes = data->ndim;
  map.count = 1;
  stage_t stage = {&map, RK_SUM, data->dtype, out->ndim, NULL, NULL, false};
  out_result->num_outputs = 1;
  const kiln_te_tensor_t **result = &out_result->outputs[0];
  if (data->dtype != KILN_DTYPE_FLOAT32) {
    return make_stage(args, "", out, KILN_TE_REDUCE_SUM, NULL, sum_body, &stage, result);
  }
  kiln_tensor_type_t acc_type = *out;
  acc_type.dtype = stage.dtype = KILN_DTYPE_FLOAT64;
  KILN_RETURN_IF_ERROR(
      make_stage(args, "acc", &acc_type, KILN_TE_REDUCE_SUM, NULL, sum_body, &stage, &stage.acc));
  stage.dtype = data->dtype;
  return make_stage(args, "", out, KILN_TE_REDUCE_NONE, NULL, finish_body, &stage, result);
}
