/*
 * The compute-rule driver, the default CPU schedule and the helpers shared
 * by compute rules (op/compute.h).
 *
 * kiln_op_compute checks what a rule returns against the type relation, so
 * a rule that builds the wrong shape or dtype fails at once, naming the
 * operator, rather than in a kernel later. The default schedule walks the
 * stages consumers first, so an inlined stage's consumers are decided
 * before it is; a stage read by an extern op stays materialized, since a
 * hand-written loop may read each input element many times.
 */
#define _POSIX_C_SOURCE 200809L

#include "op/compute.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cpu_features.h"
#include "te/lower.h"
#include "tir/functor.h"

kiln_schedule_target_t kiln_schedule_target_host(void) {
  kiln_schedule_target_t target = {128};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    target.vector_bits = 512;
  } else if (__builtin_cpu_supports("avx")) {
    target.vector_bits = 256;
  }
#elif defined(__aarch64__)
  target.vector_registers = 32;
#endif
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  target.num_cores = cores > 0 && cores < 4096 ? (int)cores : 0;
  kiln_status_free(kiln_cpu_cache_bytes(NULL, 2, &target.l2_bytes));
  kiln_status_free(kiln_cpu_cache_bytes(NULL, 3, &target.shared_cache_bytes));
  return target;
}

int kiln_schedule_vector_registers(const kiln_schedule_target_t *target) {
  if (target->vector_registers > 0) {
    return target->vector_registers;
  }
  return target->vector_bits >= 512 ? 32 : 16;
}

int64_t kiln_schedule_scale_registers(const kiln_schedule_target_t *target, int64_t count32) {
  int64_t scaled = count32 * kiln_schedule_vector_registers(target) / 32;
  return scaled < 1 ? 1 : scaled;
}

int kiln_schedule_lanes(const kiln_schedule_target_t *target, kiln_dtype_t dtype) {
  int bits = dtype == KILN_DTYPE_BOOL ? 8 : kiln_dtype_to_dl(dtype).bits;
  int lanes = bits > 0 ? target->vector_bits / bits : 1;
  return lanes < 1 ? 1 : (lanes > KILN_TIR_MAX_LANES ? KILN_TIR_MAX_LANES : lanes);
}

/* ---- the driver ---- */

kiln_status_t kiln_compute_output_type(const kiln_compute_args_t *args, int index,
                                       const kiln_tensor_type_t **out_type) {
  *out_type = NULL;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(args->output_type);
  const kiln_type_t *type = tuple ? (index < tuple->count ? tuple->fields[index] : NULL)
                                  : (index == 0 ? args->output_type : NULL);
  *out_type = kiln_type_as_tensor(type);
  if (!*out_type) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: output %d is not a tensor of the inferred type",
                       args->op->name, index);
  }
  return KILN_OK;
}

static int output_count(const kiln_type_t *type) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  return tuple ? tuple->count : 1;
}

static kiln_status_t check_output(const kiln_compute_args_t *args, int index,
                                  const kiln_te_tensor_t *t) {
  const kiln_tensor_type_t *want = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, index, &want));
  int same = t && t->dtype == want->dtype && t->ndim == want->ndim;
  for (int d = 0; same && d < t->ndim; ++d) {
    same = t->shape[d] == want->shape[d];
  }
  if (!same) {
    char expected[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INTERNAL,
                       "%s: the compute rule's output %d (%s) is not the inferred %s of shape %s",
                       args->op->name, index, t ? t->name : "missing", kiln_dtype_name(want->dtype),
                       kiln_op_shape_text(want, expected));
  }
  return KILN_OK;
}

kiln_status_t kiln_op_compute(const kiln_compute_args_t *args, kiln_compute_result_t *out_result) {
  return kiln_op_compute_with(kiln_op_compute_get(args->op->id), args, out_result);
}

kiln_status_t kiln_op_compute_with(kiln_op_compute_fn rule, const kiln_compute_args_t *args,
                                   kiln_compute_result_t *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  if (!rule) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: the operator has no compute rule", args->op->name);
  }
  kiln_status_t status = rule(args, out_result);
  if (status) {
    /* Rules name the operator in their own errors; te's errors do not. */
    size_t length = strlen(args->op->name);
    const char *message = kiln_status_message(status);
    int named = strncmp(message, args->op->name, length) == 0 && message[length] == ':';
    return named ? status : kiln_status_annotate(status, "%s", args->op->name);
  }
  int expected = output_count(args->output_type);
  if (out_result->num_outputs != expected) {
    return KILN_STATUS(INTERNAL, "%s: the compute rule made %d outputs, the type has %d",
                       args->op->name, out_result->num_outputs, expected);
  }
  for (int i = 0; i < expected; ++i) {
    KILN_RETURN_IF_ERROR(check_output(args, i, out_result->outputs[i]));
  }
  return KILN_OK;
}

/* ---- the default schedule ---- */

static int read_by_extern(const kiln_te_schedule_t *s, const kiln_te_stage_t *st) {
  for (int i = 0; i < s->num_stages; ++i) {
    const kiln_te_operation_t *op = s->stages[i]->op;
    for (int k = 0; op->kind == KILN_TE_OP_EXTERN && k < op->num_inputs; ++k) {
      if (op->inputs[k]->op == st->op) {
        return 1;
      }
    }
  }
  return 0;
}

/* Fuses the leading data-parallel leaves into one; *out_fused is NULL for a
 * stage with none (rank 0). */
static kiln_status_t fuse_data_axes(kiln_te_schedule_t *s, kiln_te_stage_t *st,
                                    const kiln_te_iter_var_t **out_fused) {
  *out_fused = NULL;
  int count = 0;
  while (count < st->num_leaves && st->leaf_iter_vars[count]->kind == KILN_TE_ITER_DATA_PAR) {
    ++count;
  }
  if (count == 0) {
    return KILN_OK;
  }
  const kiln_te_iter_var_t *fused = st->leaf_iter_vars[0];
  for (int k = 1; k < count; ++k) {
    KILN_RETURN_IF_ERROR(kiln_te_fuse(s, st, fused, st->leaf_iter_vars[1], &fused));
  }
  *out_fused = fused;
  return KILN_OK;
}

static int64_t data_extent(const kiln_te_stage_t *st) {
  int64_t extent = 1;
  for (int d = 0; d < st->op->num_axes; ++d) {
    extent *= st->op->axes[d]->extent;
  }
  return extent;
}

/* The target's lanes, or the last axis when it is narrower and divides
 * them (a channel block of 8 at 16 lanes: a vector across two blocks would
 * read a per-channel parameter as a gather). */
static int vector_lanes(const kiln_schedule_target_t *target, const kiln_te_tensor_t *out) {
  int lanes = kiln_schedule_lanes(target, out->dtype);
  int64_t last = out->ndim > 1 ? out->shape[out->ndim - 1] : lanes;
  return last >= KILN_SCHEDULE_MIN_BLOCK_LANES && last < lanes && lanes % last == 0 ? (int)last
                                                                                    : lanes;
}

kiln_status_t kiln_schedule_fuse_axes(kiln_te_schedule_t *s, kiln_te_stage_t *st, int count,
                                      const kiln_te_iter_var_t *const *axes,
                                      const kiln_te_iter_var_t **out_fused) {
  const kiln_te_iter_var_t *fused = axes[0];
  for (int i = 1; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_te_fuse(s, st, fused, axes[i], &fused));
  }
  *out_fused = fused;
  return KILN_OK;
}

/* ---- outputs read through a permutation ---- */

typedef struct index_checker_t {
  kiln_tir_visitor_t visitor;
  const kiln_te_operation_t *op;
  bool permuted;
} index_checker_t;

/* Whether index `d` of `load` is the axis of `op` at the same place from
 * the right, or the constant 0 (a broadcast). */
static bool aligned_index(const kiln_te_operation_t *op, const kiln_tir_buffer_load_t *load,
                          int d) {
  const kiln_tir_expr_t *index = load->indices[d];
  int axis = op->num_axes - load->num_indices + d;
  if (index->kind == KILN_TIR_EXPR_INT_IMM) {
    return ((const kiln_tir_int_imm_t *)index)->value == 0;
  }
  return axis >= 0 && index == &op->axes[axis]->var->base;
}

static kiln_status_t check_index(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  index_checker_t *c = (index_checker_t *)self;
  const kiln_tir_buffer_load_t *load = (const kiln_tir_buffer_load_t *)expr;
  for (int d = 0; d < load->num_indices; ++d) {
    c->permuted |= !aligned_index(c->op, load, d);
  }
  return kiln_tir_visitor_expr_children(self, expr);
}

/* Whether some compute stage of `s` reads a tensor at other than its own
 * indices (right-aligned, or 0 for a broadcast dim): a layout transform,
 * a transpose, a reshape, a concatenation or a slice. Fused with the
 * other axes, such an output's vectors cross rows, and every lane computes
 * its own divisions: a ShuffleNet channel shuffle ran at 3 ns an element. */
static kiln_status_t reads_permuted(const kiln_te_schedule_t *s, bool *out_permuted) {
  index_checker_t c;
  kiln_tir_visitor_initialize(&c.visitor);
  c.visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = check_index;
  c.permuted = false;
  for (int i = 0; i < s->num_stages && !c.permuted; ++i) {
    c.op = s->stages[i]->op;
    if (c.op->kind == KILN_TE_OP_COMPUTE) {
      KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(&c.visitor, c.op->body));
    }
  }
  *out_permuted = c.permuted;
  return KILN_OK;
}

/* How many trailing axes of `out` make the inner loop: the last ones, up
 * to the first whose product reaches `lanes` (at most all but the first). */
static int inner_axes(const kiln_te_tensor_t *out, int lanes) {
  int count = 1;
  int64_t extent = out->shape[out->ndim - 1];
  while (extent < lanes && count < out->ndim - 1) {
    extent *= out->shape[out->ndim - 1 - count++];
  }
  return count;
}

/* An output read through a permutation: the leading axes fused and
 * parallel, the trailing ones (a row, or rows up to a vector) fused and
 * vectorized by the lanes, so that the permuted indices are the same
 * across a vector but for its position in the row; a row's tail is
 * peeled by loop partition. */
static kiln_status_t schedule_rows(const kiln_schedule_target_t *target, kiln_te_schedule_t *s,
                                   kiln_te_stage_t *st) {
  const kiln_te_tensor_t *out = st->output;
  int inner = inner_axes(out, kiln_schedule_lanes(target, out->dtype));
  const kiln_te_iter_var_t *axes[KILN_TIR_MAX_DIMS], *outer = NULL, *row = NULL;
  for (int d = 0; d < out->ndim; ++d) {
    axes[d] = kiln_te_tensor_axis(out, d);
  }
  KILN_RETURN_IF_ERROR(kiln_schedule_fuse_axes(s, st, out->ndim - inner, axes, &outer));
  KILN_RETURN_IF_ERROR(kiln_schedule_fuse_axes(s, st, inner, axes + out->ndim - inner, &row));
  KILN_RETURN_IF_ERROR(kiln_te_parallel(st, outer));
  const kiln_te_iter_var_t *vo = NULL, *vi = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_split(s, st, row, kiln_schedule_lanes(target, out->dtype), &vo, &vi));
  return kiln_te_vectorize(st, vi);
}

/* Whether `st` is an output whose loops are its axes as computed (no rule
 * split or fused them), of rank 2 or more, with a vector's worth of
 * elements after the first axis: one schedule_rows can take. */
static bool rows_apply(const kiln_schedule_target_t *target, const kiln_te_stage_t *st) {
  const kiln_te_tensor_t *out = st->output;
  if (!st->is_output || st->op->reducer != KILN_TE_REDUCE_NONE || out->ndim < 2 ||
      st->num_leaves != st->op->num_axes) {
    return false;
  }
  for (int d = 0; d < st->num_leaves; ++d) {
    if (st->leaf_iter_vars[d] != st->op->axes[d]) {
      return false;
    }
  }
  return data_extent(st) / out->shape[0] >= kiln_schedule_lanes(target, out->dtype);
}

static kiln_status_t schedule_stage(const kiln_schedule_target_t *target, kiln_te_schedule_t *s,
                                    kiln_te_stage_t *st) {
  bool permuted = false;
  if (rows_apply(target, st)) {
    KILN_RETURN_IF_ERROR(reads_permuted(s, &permuted));
  }
  if (permuted) {
    return schedule_rows(target, s, st);
  }
  const kiln_te_iter_var_t *fused = NULL;
  KILN_RETURN_IF_ERROR(fuse_data_axes(s, st, &fused));
  int64_t extent = data_extent(st);
  if (!fused || extent < 2) {
    return KILN_OK;
  }
  if (st->op->reducer != KILN_TE_REDUCE_NONE) {
    return kiln_te_parallel(st, fused);
  }
  int lanes = vector_lanes(target, st->output);
  if (lanes < 2 || extent < lanes) {
    return KILN_OK; /* less than a vector: not worth a thread */
  }
  const kiln_te_iter_var_t *outer = NULL, *inner = NULL;
  KILN_RETURN_IF_ERROR(kiln_te_split(s, st, fused, lanes, &outer, &inner));
  KILN_RETURN_IF_ERROR(kiln_te_vectorize(st, inner));
  return extent > lanes ? kiln_te_parallel(st, outer) : KILN_OK;
}

kiln_status_t kiln_schedule_default(const kiln_schedule_target_t *target,
                                    kiln_te_schedule_t *schedule) {
  for (int i = schedule->num_stages - 1; i >= 0; --i) {
    kiln_te_stage_t *st = schedule->stages[i];
    if (st->op->kind == KILN_TE_OP_EXTERN || st->inlined || st->attach_stage) {
      continue;
    }
    if (!st->is_output && st->op->reducer == KILN_TE_REDUCE_NONE && !read_by_extern(schedule, st)) {
      KILN_RETURN_IF_ERROR(kiln_te_compute_inline(st));
      continue;
    }
    KILN_RETURN_IF_ERROR(schedule_stage(target, schedule, st));
  }
  return KILN_OK;
}

/* ---- lowering one operator ---- */

static kiln_status_t make_placeholders(const kiln_op_t *op, int num_inputs,
                                       const kiln_type_t *const *input_types, kiln_arena_t *arena,
                                       const kiln_te_tensor_t **out_inputs) {
  for (int i = 0; i < num_inputs; ++i) {
    const kiln_tensor_type_t *type = kiln_type_as_tensor(input_types[i]);
    if (!type) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d is not a tensor", op->name, i);
    }
    char name[32];
    snprintf(name, sizeof(name), "p%d", i);
    KILN_RETURN_IF_ERROR(
        kiln_te_placeholder(arena, name, type->ndim, type->shape, type->dtype, &out_inputs[i]));
  }
  return KILN_OK;
}

kiln_status_t kiln_op_lower(const kiln_op_t *op, const void *attrs, int num_inputs,
                            const kiln_type_t *const *input_types,
                            const kiln_schedule_target_t *target, kiln_arena_t *arena,
                            const char *name, const kiln_tir_prim_func_t **out_func) {
  *out_func = NULL;
  if (num_inputs < 0 || num_inputs > KILN_TE_MAX_INPUTS) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d inputs, at most %d can be lowered", op->name,
                       num_inputs, KILN_TE_MAX_INPUTS);
  }
  if (op->attrs_size > 0 && !attrs) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: attributes are missing (kiln_op_attrs_create_default makes the "
                       "defaults)",
                       op->name);
  }
  kiln_compute_args_t args = {op, attrs, arena, num_inputs, NULL, NULL};
  KILN_RETURN_IF_ERROR(
      kiln_op_infer_type(op, attrs, num_inputs, input_types, arena, &args.output_type));
  const kiln_te_tensor_t *inputs[KILN_TE_MAX_INPUTS];
  KILN_RETURN_IF_ERROR(make_placeholders(op, num_inputs, input_types, arena, inputs));
  args.inputs = inputs;
  kiln_compute_result_t result;
  KILN_RETURN_IF_ERROR(kiln_op_compute(&args, &result));
  kiln_te_schedule_t *schedule = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_te_create_schedule(arena, result.num_outputs, result.outputs, &schedule));
  kiln_op_schedule_fn strategy = kiln_op_strategy_get(op->id, target->kind);
  if (strategy) {
    KILN_RETURN_IF_ERROR_ANNOTATE(strategy(target, &args, &result, schedule), "%s schedule",
                                  op->name);
  } else {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_schedule_default(target, schedule), "%s schedule", op->name);
  }
  const kiln_te_tensor_t *params[KILN_TE_MAX_INPUTS + KILN_COMPUTE_MAX_OUTPUTS];
  memcpy(params, inputs, (size_t)num_inputs * sizeof(*params));
  memcpy(params + num_inputs, result.outputs, (size_t)result.num_outputs * sizeof(*params));
  return kiln_te_lower(schedule, name, num_inputs + result.num_outputs, params, out_func);
}

/* ---- helpers ---- */

const char *kiln_compute_tensor_name(const kiln_op_t *op, char *buffer, size_t size) {
  const char *dot = strrchr(op->name, '.');
  snprintf(buffer, size, "T_%s", dot ? dot + 1 : op->name);
  return buffer;
}

void kiln_compute_broadcast_indices(kiln_tir_builder_t *b, const kiln_te_tensor_t *input,
                                    int out_ndim, const kiln_tir_expr_t *const *out_indices,
                                    const kiln_tir_expr_t **out_input_indices) {
  int offset = out_ndim - input->ndim;
  for (int d = 0; d < input->ndim; ++d) {
    out_input_indices[d] =
        input->shape[d] == 1 || d + offset < 0 ? kiln_tir_b_i32(b, 0) : out_indices[d + offset];
  }
}

typedef struct elemwise_t {
  const kiln_compute_args_t *args;
  kiln_compute_scalar_fn fn;
  kiln_dtype_t dtype;
  int ndim;
} elemwise_t;

static const kiln_tir_expr_t *elemwise_body(kiln_tir_builder_t *b,
                                            const kiln_tir_expr_t *const *indices, void *user) {
  const elemwise_t *e = user;
  const kiln_tir_expr_t *values[KILN_TE_MAX_INPUTS];
  for (int i = 0; i < e->args->num_inputs; ++i) {
    const kiln_te_tensor_t *input = e->args->inputs[i];
    const kiln_tir_expr_t *at[KILN_TIR_MAX_DIMS];
    kiln_compute_broadcast_indices(b, input, e->ndim, indices, at);
    values[i] = kiln_te_read(b, input, input->ndim, at);
  }
  const kiln_tir_expr_t *value = e->fn(b, values, e->args);
  if (value && value->dtype.base != e->dtype) {
    value = kiln_tir_b_cast(b, kiln_tir_scalar(e->dtype), value);
  }
  return value;
}

kiln_status_t kiln_compute_elemwise(const kiln_compute_args_t *args, const char *name,
                                    kiln_compute_scalar_fn fn, kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  elemwise_t e = {args, fn, type->dtype, type->ndim};
  out_result->num_outputs = 1;
  return kiln_te_compute(args->arena, name, type->ndim, type->shape, args->num_inputs, args->inputs,
                         elemwise_body, &e, &out_result->outputs[0]);
}

kiln_status_t kiln_compute_one(const kiln_compute_args_t *args, kiln_te_fcompute_fn fcompute,
                               void *user, kiln_compute_result_t *out_result) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_compute_output_type(args, 0, &type));
  char name[64];
  out_result->num_outputs = 1;
  return kiln_te_compute(args->arena, kiln_compute_tensor_name(args->op, name, sizeof(name)),
                         type->ndim, type->shape, args->num_inputs, args->inputs, fcompute, user,
                         &out_result->outputs[0]);
}

kiln_status_t kiln_compute_require_float32(const kiln_compute_args_t *args) {
  kiln_dtype_t dtype = args->num_inputs > 0 ? args->inputs[0]->dtype : KILN_DTYPE_COUNT_;
  if (dtype != KILN_DTYPE_FLOAT32) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: no compute rule for dtype %s (the reference kernel handles float32 "
                       "only)",
                       args->op->name,
                       dtype == KILN_DTYPE_COUNT_ ? "(no input)" : kiln_dtype_name(dtype));
  }
  return KILN_OK;
}

const kiln_tir_expr_t *kiln_compute_clamp(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                          int64_t lo, int64_t hi) {
  const kiln_tir_expr_t *low = kiln_tir_b_bin(b, KILN_TIR_EXPR_MAX, x, kiln_tir_b_i32(b, lo));
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_MIN, low, kiln_tir_b_i32(b, hi));
}

const kiln_tir_expr_t *kiln_compute_in_range(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                             int64_t lo, int64_t hi) {
  return kiln_tir_b_bin(b, KILN_TIR_EXPR_AND,
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_GE, x, kiln_tir_b_i32(b, lo)),
                        kiln_tir_b_bin(b, KILN_TIR_EXPR_LT, x, kiln_tir_b_i32(b, hi)));
}
