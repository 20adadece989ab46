/*
 * The interpreter's control flow, sequences and optionals: the operators of
 * op/control.c, evaluated on values rather than by a reference kernel.
 *
 * if calls one branch with the captured values. loop runs its body while the
 * iteration count is below the trip count and the condition holds (trip
 * count 0 runs nothing), passing the loop-carried values from one iteration
 * to the next; the body's scan outputs are stacked on a new leading axis.
 * scan slices each scan input on its axis (backwards for direction 1), runs
 * the body once per slice with the states, and stacks each scan output on
 * its axis (in reverse for direction 1). seq.map calls its body once per
 * element. Sequence and optional values hold their elements as fields
 * (interp/value.h), so building a sequence retains tensors rather than
 * copying them; slicing and stacking copy bytes, any dtype. Positions and
 * counts are checked against the values at run time, with errors naming the
 * operator; the node is added by the caller.
 */
#include <string.h>

#include "interp/eval.h"
#include "op/control_attrs.h"

typedef struct control_t {
  kiln_interp_context_t *context;
  const kiln_call_t *call;
  int num_args;
  const kiln_interp_value_t *const *args; /* borrowed operand values */
} control_t;

/* ---- tensors ---- */

static kiln_status_t control_tensor_arg(const control_t *c, int k, const kiln_tensor_t **out) {
  if (c->args[k]->kind != KILN_INTERP_VALUE_TENSOR) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: argument %d is not a tensor", c->call->op->name, k);
  }
  *out = c->args[k]->tensor;
  return KILN_OK;
}

/* Argument `k`, a one-element tensor, as an integer. */
static kiln_status_t control_int_arg(const control_t *c, int k, int64_t *out_value) {
  const kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(control_tensor_arg(c, k, &tensor));
  if (kiln_tensor_element_count(tensor) != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: argument %d has %lld elements, not one",
                       c->call->op->name, k, (long long)kiln_tensor_element_count(tensor));
  }
  *out_value = (int64_t)kiln_tensor_element_as_double(tensor, 0);
  if (kiln_tensor_dtype(tensor) == KILN_DTYPE_INT64)
    *out_value = *(const int64_t *)kiln_tensor_data(tensor);
  return KILN_OK;
}

/* A one-element tensor of `dtype` (bool or int64) holding `value`, shaped as
 * `like` (a one-element tensor type) or rank 0 when `like` is NULL. */
static kiln_status_t control_scalar_like(kiln_allocator_t allocator, kiln_dtype_t dtype,
                                         const kiln_type_t *like, int64_t value,
                                         kiln_interp_value_t *out_value) {
  const kiln_tensor_type_t *shape = kiln_type_as_tensor(like);
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create(allocator, dtype, shape ? shape->ndim : 0,
                                          shape ? shape->shape : NULL, &tensor));
  if (dtype == KILN_DTYPE_BOOL) {
    *(uint8_t *)kiln_tensor_data(tensor) = value != 0;
  } else {
    *(int64_t *)kiln_tensor_data(tensor) = value;
  }
  *out_value = kiln_interp_value_of_tensor(tensor);
  return KILN_OK;
}

static kiln_status_t control_scalar(kiln_allocator_t allocator, kiln_dtype_t dtype, int64_t value,
                                    kiln_interp_value_t *out_value) {
  return control_scalar_like(allocator, dtype, NULL, value, out_value);
}

/* Rows before `axis`, and bytes of one step on it. */
static void control_split_dims(const kiln_tensor_t *tensor, int axis, int64_t *out_outer,
                               size_t *out_inner) {
  int64_t outer = 1;
  size_t inner = kiln_dtype_size(kiln_tensor_dtype(tensor));
  for (int d = 0; d < kiln_tensor_ndim(tensor); ++d) {
    if (d < axis)
      outer *= kiln_tensor_shape(tensor)[d];
    if (d > axis)
      inner *= (size_t)kiln_tensor_shape(tensor)[d];
  }
  *out_outer = outer;
  *out_inner = inner;
}

/* Elements [start, start + length) of `tensor` on `axis`, as a new tensor
 * (the axis kept, or dropped when `keep` is false and length is 1). */
static kiln_status_t control_slice(kiln_allocator_t allocator, const kiln_tensor_t *tensor,
                                   int axis, int64_t start, int64_t length, bool keep,
                                   kiln_tensor_t **out_tensor) {
  int64_t dims[KILN_MAX_RANK];
  int ndim = 0;
  for (int d = 0; d < kiln_tensor_ndim(tensor); ++d) {
    if (d != axis || keep)
      dims[ndim++] = d == axis ? length : kiln_tensor_shape(tensor)[d];
  }
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(allocator, kiln_tensor_dtype(tensor), ndim, dims, out_tensor));
  int64_t outer = 0;
  size_t inner = 0;
  control_split_dims(tensor, axis, &outer, &inner);
  int64_t extent = kiln_tensor_shape(tensor)[axis];
  const char *src = kiln_tensor_data(tensor);
  char *dst = kiln_tensor_data(*out_tensor);
  for (int64_t o = 0; o < outer; ++o) {
    memcpy(dst + (size_t)(o * length) * inner, src + (size_t)(o * extent + start) * inner,
           (size_t)length * inner);
  }
  return KILN_OK;
}

/* Joins `count` tensors on `axis`: concatenated, or stacked on a new axis
 * (`stack`). `empty` gives the dtype and shape when count is 0. */
static kiln_status_t control_join(kiln_allocator_t allocator, int count,
                                  kiln_tensor_t *const *parts, int axis, bool stack,
                                  const kiln_tensor_type_t *empty, kiln_tensor_t **out_tensor) {
  if (count == 0) { /* the joined dim is 0; every other dim must be known */
    int64_t dims[KILN_MAX_RANK];
    for (int d = 0; d < empty->ndim; ++d) {
      dims[d] = d == axis ? 0 : empty->shape[d];
      if (dims[d] < 0) {
        return KILN_STATUS(UNIMPLEMENTED, "no elements, and dim %d of the result is symbolic", d);
      }
    }
    return kiln_tensor_create(allocator, empty->dtype, empty->ndim, dims, out_tensor);
  }
  const kiln_tensor_t *first = parts[0];
  int ndim = kiln_tensor_ndim(first) + (stack ? 1 : 0);
  int64_t dims[KILN_MAX_RANK];
  for (int d = 0, k = 0; d < ndim; ++d) {
    dims[d] = stack && d == axis ? count : kiln_tensor_shape(first)[k++];
  }
  if (!stack)
    dims[axis] = 0;
  for (int i = 0; i < count; ++i) {
    const kiln_tensor_t *part = parts[i];
    bool same = kiln_tensor_dtype(part) == kiln_tensor_dtype(first) &&
                kiln_tensor_ndim(part) == kiln_tensor_ndim(first);
    for (int d = 0; same && d < kiln_tensor_ndim(part); ++d) {
      same = (!stack && d == axis) || kiln_tensor_shape(part)[d] == kiln_tensor_shape(first)[d];
    }
    if (!same) {
      char a[KILN_SHAPE_TEXT_CAPACITY], b[KILN_SHAPE_TEXT_CAPACITY];
      kiln_shape_format(kiln_tensor_ndim(first), kiln_tensor_shape(first), a, sizeof(a));
      kiln_shape_format(kiln_tensor_ndim(part), kiln_tensor_shape(part), b, sizeof(b));
      return KILN_STATUS(INVALID_ARGUMENT, "element %d is %s %s but element 0 is %s %s", i,
                         kiln_dtype_name(kiln_tensor_dtype(part)), b,
                         kiln_dtype_name(kiln_tensor_dtype(first)), a);
    }
    if (!stack)
      dims[axis] += kiln_tensor_shape(part)[axis];
  }
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(allocator, kiln_tensor_dtype(first), ndim, dims, out_tensor));
  int64_t outer = 0;
  size_t row = 0; /* bytes of one outer row of the result */
  control_split_dims(*out_tensor, axis, &outer, &row);
  row *= (size_t)dims[axis];
  char *dst = kiln_tensor_data(*out_tensor);
  size_t offset = 0;
  for (int i = 0; i < count; ++i) {
    size_t bytes = kiln_tensor_byte_size(parts[i]) / (size_t)(outer > 0 ? outer : 1);
    const char *src = kiln_tensor_data(parts[i]);
    for (int64_t o = 0; o < outer && bytes > 0; ++o) {
      memcpy(dst + (size_t)o * row + offset, src + (size_t)o * bytes, bytes);
    }
    offset += bytes;
  }
  return KILN_OK;
}

/* ---- calling bodies ---- */

/* Calls `function` on argument values, one per parameter. */
static kiln_status_t control_call(const control_t *c, const kiln_function_t *function,
                                  const kiln_interp_value_t *const *args,
                                  kiln_interp_value_t *out_value) {
  return kiln_interp_call(c->context, function, args, out_value);
}

/* Result `i` of a body's value: a tuple's field, or the value itself. */
static const kiln_interp_value_t *control_result(const kiln_interp_value_t *value, int i) {
  return value->kind == KILN_INTERP_VALUE_TUPLE ? &value->fields[i] : value;
}

static int control_result_count(const kiln_interp_value_t *value) {
  return value->kind == KILN_INTERP_VALUE_TUPLE ? value->num_fields : 1;
}

/* ---- if ---- */

static kiln_status_t control_if(const control_t *c, kiln_interp_value_t *out_value) {
  int64_t cond = 0;
  KILN_RETURN_IF_ERROR(control_int_arg(c, 0, &cond));
  const kiln_function_t *branch = kiln_expr_as_function(c->call->args[cond ? 1 : 2]);
  return control_call(c, branch, c->args + 3, out_value);
}

/* ---- loop ---- */

typedef struct loop_state_t {
  kiln_allocator_t allocator;
  const kiln_function_t *body;
  int64_t cond; /* the condition for the next iteration */
  int carried, captured, scans;
  const kiln_interp_value_t **args; /* the body's arguments */
  kiln_interp_value_t *owned;       /* iteration, condition, carried: 2 + carried */
  kiln_array_t *outputs;            /* per scan output: kiln_tensor_t * per iteration */
} loop_state_t;

static void loop_state_release(loop_state_t *state) {
  for (int i = 0; state->owned && i < 2 + state->carried; ++i) {
    kiln_interp_value_release(state->allocator, &state->owned[i]);
  }
  for (int k = 0; state->outputs && k < state->scans; ++k) {
    for (size_t j = 0; j < kiln_array_count(&state->outputs[k]); ++j) {
      kiln_tensor_release(*(kiln_tensor_t **)kiln_array_at(&state->outputs[k], j));
    }
    kiln_array_deinitialize(&state->outputs[k]);
  }
  kiln_allocator_free(state->allocator, state->owned);
  kiln_allocator_free(state->allocator, state->outputs);
  kiln_allocator_free(state->allocator, (void *)state->args);
}

static kiln_status_t loop_state_initialize(const control_t *c, loop_state_t *state) {
  int total = 2 + state->carried + state->captured;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(state->allocator, (size_t)total,
                                                   sizeof(*state->args), (void **)&state->args));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(state->allocator, (size_t)total,
                                                   sizeof(*state->owned), (void **)&state->owned));
  memset(state->owned, 0, (size_t)total * sizeof(*state->owned));
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(state->allocator, (size_t)(state->scans + 1),
                                                   sizeof(*state->outputs),
                                                   (void **)&state->outputs));
  for (int k = 0; k < state->scans + 1; ++k) {
    kiln_array_initialize(&state->outputs[k], state->allocator, sizeof(kiln_tensor_t *));
  }
  for (int i = 0; i < total; ++i) {
    state->args[i] = i < 2 + state->carried ? &state->owned[i] : c->args[1 + i];
  }
  for (int i = 0; i < state->carried; ++i) {
    KILN_RETURN_IF_ERROR(
        kiln_interp_value_copy(state->allocator, c->args[3 + i], &state->owned[2 + i]));
  }
  return control_int_arg(c, 2, &state->cond);
}

/* Takes one iteration's results: the condition, carried values, scan outputs. */
static kiln_status_t loop_take(loop_state_t *state, kiln_interp_value_t *result) {
  if (control_result_count(result) != 1 + state->carried + state->scans) {
    return KILN_STATUS(INTERNAL, "loop: the body returned %d values", control_result_count(result));
  }
  const kiln_interp_value_t *cond = control_result(result, 0);
  if (cond->kind != KILN_INTERP_VALUE_TENSOR || kiln_tensor_element_count(cond->tensor) != 1) {
    return KILN_STATUS(INVALID_ARGUMENT, "loop: the body's condition is not one bool");
  }
  state->cond = kiln_tensor_element_as_double(cond->tensor, 0) != 0;
  for (int i = 1; i <= state->carried; ++i) {
    kiln_interp_value_release(state->allocator, &state->owned[1 + i]);
    KILN_RETURN_IF_ERROR(
        kiln_interp_value_copy(state->allocator, control_result(result, i), &state->owned[1 + i]));
  }
  for (int k = 0; k < state->scans; ++k) {
    const kiln_interp_value_t *out = control_result(result, 1 + state->carried + k);
    if (out->kind != KILN_INTERP_VALUE_TENSOR) {
      return KILN_STATUS(INVALID_ARGUMENT, "loop: scan output %d is not a tensor", k);
    }
    KILN_RETURN_IF_ERROR(kiln_array_push(&state->outputs[k], &out->tensor));
    kiln_tensor_retain(out->tensor);
  }
  return KILN_OK;
}

static kiln_status_t loop_iterate(const control_t *c, loop_state_t *state) {
  int64_t trips = 0;
  KILN_RETURN_IF_ERROR(control_int_arg(c, 1, &trips));
  const kiln_function_t *body = state->body;
  for (int64_t i = 0; i < trips && state->cond; ++i) {
    /* the iteration number and the condition, shaped as the body takes them */
    for (int p = 0; p < 2; ++p) {
      kiln_interp_value_release(state->allocator, &state->owned[p]);
      KILN_RETURN_IF_ERROR(control_scalar_like(
          state->allocator, p == 0 ? KILN_DTYPE_INT64 : KILN_DTYPE_BOOL,
          body->params[p]->type_annotation, p == 0 ? i : state->cond, &state->owned[p]));
    }
    kiln_interp_value_t result;
    KILN_RETURN_IF_ERROR(control_call(c, body, state->args, &result));
    kiln_status_t status = loop_take(state, &result);
    kiln_interp_value_release(state->allocator, &result);
    KILN_RETURN_IF_ERROR_ANNOTATE(status, "in iteration %lld", (long long)i);
  }
  return KILN_OK;
}

/* The loop's value: the carried values, then the stacked scan outputs. */
static kiln_status_t loop_value(const control_t *c, loop_state_t *state,
                                kiln_interp_value_t *out_value) {
  const kiln_tuple_type_t *type = kiln_type_as_tuple(c->call->base.checked_type);
  KILN_RETURN_IF_ERROR(
      kiln_interp_value_tuple_create(state->allocator, state->carried + state->scans, out_value));
  for (int i = 0; i < state->carried; ++i) {
    out_value->fields[i] = state->owned[2 + i];
    memset(&state->owned[2 + i], 0, sizeof(state->owned[0]));
  }
  for (int k = 0; k < state->scans; ++k) {
    kiln_tensor_t *stacked = NULL;
    KILN_RETURN_IF_ERROR_ANNOTATE(
        control_join(state->allocator, (int)kiln_array_count(&state->outputs[k]),
                     kiln_array_data(&state->outputs[k]), 0, true,
                     kiln_type_as_tensor(type->fields[state->carried + k]), &stacked),
        "loop: scan output %d", k);
    out_value->fields[state->carried + k] = kiln_interp_value_of_tensor(stacked);
  }
  return KILN_OK;
}

static kiln_status_t control_loop(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_captured_attrs_t *attrs = c->call->attrs;
  const kiln_tuple_type_t *type = kiln_type_as_tuple(c->call->base.checked_type);
  loop_state_t state = {.allocator = c->context->allocator,
                        .body = kiln_expr_as_function(c->call->args[0]),
                        .captured = (int)attrs->num_captured};
  state.carried = c->num_args - 3 - state.captured;
  state.scans = type->count - state.carried;
  kiln_status_t status = loop_state_initialize(c, &state);
  if (status == NULL)
    status = loop_iterate(c, &state);
  if (status == NULL)
    status = loop_value(c, &state, out_value);
  if (status != NULL)
    kiln_interp_value_release(state.allocator, out_value);
  loop_state_release(&state);
  return status;
}

/* ---- scan ---- */

typedef struct scan_t {
  const kiln_scan_attrs_t *attrs;
  int state, inputs, captured, outputs;
  int64_t length;
} scan_t;

/* The body's arguments for step `t`: states, slices, captured values. */
static kiln_status_t scan_step_args(const control_t *c, const scan_t *scan, int64_t t,
                                    kiln_interp_value_t *states, kiln_interp_value_t *slices,
                                    const kiln_interp_value_t **args) {
  for (int i = 0; i < scan->inputs; ++i) {
    const kiln_tensor_t *input = NULL;
    KILN_RETURN_IF_ERROR(control_tensor_arg(c, 1 + scan->state + i, &input));
    int axis = (int)kiln_scan_attr_at(scan->attrs->scan_input_axes, i, 0);
    axis += axis < 0 ? kiln_tensor_ndim(input) : 0;
    int64_t at =
        kiln_scan_attr_at(scan->attrs->scan_input_directions, i, 0) ? scan->length - 1 - t : t;
    kiln_interp_value_release(c->context->allocator, &slices[i]);
    kiln_tensor_t *slice = NULL;
    KILN_RETURN_IF_ERROR(control_slice(c->context->allocator, input, axis, at, 1, false, &slice));
    slices[i] = kiln_interp_value_of_tensor(slice);
  }
  for (int i = 0; i < scan->state; ++i) {
    args[i] = &states[i];
  }
  for (int i = 0; i < scan->inputs; ++i) {
    args[scan->state + i] = &slices[i];
  }
  for (int i = 0; i < scan->captured; ++i) {
    args[scan->state + scan->inputs + i] = c->args[1 + scan->state + scan->inputs + i];
  }
  return KILN_OK;
}

/* Keeps step `t`'s results: new states, and scan outputs at their place. */
static kiln_status_t scan_take(const control_t *c, const scan_t *scan, int64_t t,
                               const kiln_interp_value_t *result, kiln_interp_value_t *states,
                               kiln_tensor_t **collected) {
  for (int i = 0; i < scan->state; ++i) {
    kiln_interp_value_release(c->context->allocator, &states[i]);
    KILN_RETURN_IF_ERROR(
        kiln_interp_value_copy(c->context->allocator, control_result(result, i), &states[i]));
  }
  for (int k = 0; k < scan->outputs; ++k) {
    const kiln_interp_value_t *out = control_result(result, scan->state + k);
    int64_t at =
        kiln_scan_attr_at(scan->attrs->scan_output_directions, k, 0) ? scan->length - 1 - t : t;
    kiln_tensor_retain(out->tensor);
    collected[(size_t)k * (size_t)scan->length + (size_t)at] = out->tensor;
  }
  return KILN_OK;
}

static kiln_status_t scan_run(const control_t *c, const scan_t *scan, kiln_interp_value_t *states,
                              kiln_interp_value_t *slices, const kiln_interp_value_t **args,
                              kiln_tensor_t **collected) {
  const kiln_function_t *body = kiln_expr_as_function(c->call->args[0]);
  for (int64_t t = 0; t < scan->length; ++t) {
    KILN_RETURN_IF_ERROR(scan_step_args(c, scan, t, states, slices, args));
    kiln_interp_value_t result;
    KILN_RETURN_IF_ERROR_ANNOTATE(control_call(c, body, args, &result), "in step %lld",
                                  (long long)t);
    kiln_status_t status = scan_take(c, scan, t, &result, states, collected);
    kiln_interp_value_release(c->context->allocator, &result);
    KILN_RETURN_IF_ERROR(status);
  }
  return KILN_OK;
}

static kiln_status_t scan_value(const control_t *c, const scan_t *scan, kiln_interp_value_t *states,
                                kiln_tensor_t **collected, kiln_interp_value_t *out_value) {
  const kiln_tuple_type_t *type = kiln_type_as_tuple(c->call->base.checked_type);
  kiln_allocator_t allocator = c->context->allocator;
  KILN_RETURN_IF_ERROR(kiln_interp_value_tuple_create(allocator, type->count, out_value));
  for (int i = 0; i < scan->state; ++i) {
    out_value->fields[i] = states[i];
    memset(&states[i], 0, sizeof(states[i]));
  }
  for (int k = 0; k < scan->outputs; ++k) {
    const kiln_tensor_type_t *out_type = kiln_type_as_tensor(type->fields[scan->state + k]);
    int axis = (int)kiln_scan_attr_at(scan->attrs->scan_output_axes, k, 0);
    axis += axis < 0 ? out_type->ndim : 0;
    kiln_tensor_t *stacked = NULL;
    KILN_RETURN_IF_ERROR(control_join(allocator, (int)scan->length,
                                      collected + (size_t)k * (size_t)scan->length, axis, true,
                                      out_type, &stacked));
    out_value->fields[scan->state + k] = kiln_interp_value_of_tensor(stacked);
  }
  return KILN_OK;
}

static kiln_status_t control_scan(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_tuple_type_t *type = kiln_type_as_tuple(c->call->base.checked_type);
  scan_t scan = {.attrs = c->call->attrs};
  scan.inputs = (int)scan.attrs->num_scan_inputs;
  scan.captured = (int)scan.attrs->num_captured;
  scan.state = c->num_args - 1 - scan.inputs - scan.captured;
  scan.outputs = type->count - scan.state;
  const kiln_tensor_type_t *first =
      kiln_type_as_tensor(c->call->args[1 + scan.state]->checked_type);
  int axis = (int)kiln_scan_attr_at(scan.attrs->scan_input_axes, 0, 0);
  scan.length = first->shape[axis < 0 ? axis + first->ndim : axis];
  kiln_allocator_t allocator = c->context->allocator;
  size_t total = (size_t)(scan.state + scan.inputs + scan.captured) + 1;
  size_t slots = (size_t)scan.outputs * (size_t)scan.length + 1;
  kiln_interp_value_t *values = NULL; /* states, then slices */
  const kiln_interp_value_t **args = NULL;
  kiln_tensor_t **collected = NULL;
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, total, sizeof(*values), (void **)&values);
  if (status == NULL)
    status = kiln_allocator_malloc_array(allocator, total, sizeof(*args), (void **)&args);
  if (status == NULL)
    status = kiln_allocator_malloc_array(allocator, slots, sizeof(*collected), (void **)&collected);
  if (status == NULL) {
    memset(values, 0, total * sizeof(*values));
    memset(collected, 0, slots * sizeof(*collected));
    for (int i = 0; i < scan.state && status == NULL; ++i) {
      status = kiln_interp_value_copy(allocator, c->args[1 + i], &values[i]);
    }
  }
  if (status == NULL)
    status = scan_run(c, &scan, values, values + scan.state, args, collected);
  if (status == NULL)
    status = scan_value(c, &scan, values, collected, out_value);
  for (size_t i = 0; values && i < total; ++i) {
    kiln_interp_value_release(allocator, &values[i]);
  }
  for (size_t i = 0; collected && i < slots; ++i) {
    kiln_tensor_release(collected[i]);
  }
  kiln_allocator_free(allocator, values);
  kiln_allocator_free(allocator, (void *)args);
  kiln_allocator_free(allocator, collected);
  return status;
}

/* ---- sequences ---- */

static kiln_status_t control_sequence_arg(const control_t *c, int k,
                                          const kiln_interp_value_t **out_sequence) {
  *out_sequence = c->args[k];
  if ((*out_sequence)->kind != KILN_INTERP_VALUE_SEQUENCE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: argument %d is not a sequence", c->call->op->name, k);
  }
  return KILN_OK;
}

/* Position argument `k` (default `fallback`) normalized into [0, limit]. */
static kiln_status_t control_position(const control_t *c, int k, int64_t count, int64_t fallback,
                                      int64_t limit, int64_t *out_position) {
  int64_t position = fallback;
  if (k < c->num_args)
    KILN_RETURN_IF_ERROR(control_int_arg(c, k, &position));
  int64_t normalized = position < 0 ? position + count : position;
  if (normalized < 0 || normalized > limit) {
    return KILN_STATUS(OUT_OF_RANGE, "%s: position %lld is outside a sequence of %lld elements",
                       c->call->op->name, (long long)position, (long long)count);
  }
  *out_position = normalized;
  return KILN_OK;
}

/* A sequence of `count` elements: `sequence`'s with `skip` left out (-1:
 * none) and `insert` put at `at` (NULL: none). */
static kiln_status_t control_sequence_edit(kiln_allocator_t allocator,
                                           const kiln_interp_value_t *sequence, int64_t skip,
                                           const kiln_interp_value_t *insert, int64_t at,
                                           kiln_interp_value_t *out_value) {
  int count = sequence->num_fields - (skip >= 0 ? 1 : 0) + (insert ? 1 : 0);
  KILN_RETURN_IF_ERROR(
      kiln_interp_value_list_create(allocator, KILN_INTERP_VALUE_SEQUENCE, count, out_value));
  kiln_status_t status = KILN_OK;
  for (int i = 0, j = 0; i <= sequence->num_fields && status == NULL; ++i) {
    if (insert && i == at)
      status = kiln_interp_value_copy(allocator, insert, &out_value->fields[j++]);
    if (i < sequence->num_fields && i != skip && status == NULL)
      status = kiln_interp_value_copy(allocator, &sequence->fields[i], &out_value->fields[j++]);
  }
  if (status != NULL)
    kiln_interp_value_release(allocator, out_value);
  return status;
}

static kiln_status_t control_seq_insert(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_arg(c, 0, &sequence));
  int64_t n = sequence->num_fields, at = 0;
  KILN_RETURN_IF_ERROR(control_position(c, 2, n, n, n, &at));
  return control_sequence_edit(c->context->allocator, sequence, -1, c->args[1], at, out_value);
}

static kiln_status_t control_seq_erase(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_arg(c, 0, &sequence));
  int64_t n = sequence->num_fields, at = 0;
  KILN_RETURN_IF_ERROR(control_position(c, 1, n, -1, n - 1, &at));
  return control_sequence_edit(c->context->allocator, sequence, at, NULL, 0, out_value);
}

static kiln_status_t control_seq_at(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_arg(c, 0, &sequence));
  int64_t n = sequence->num_fields, at = 0;
  KILN_RETURN_IF_ERROR(control_position(c, 1, n, 0, n - 1, &at));
  return kiln_interp_value_copy(c->context->allocator, &sequence->fields[at], out_value);
}

static kiln_status_t control_seq_construct(const control_t *c, kiln_interp_value_t *out_value) {
  KILN_RETURN_IF_ERROR(kiln_interp_value_list_create(
      c->context->allocator, KILN_INTERP_VALUE_SEQUENCE, c->num_args, out_value));
  for (int i = 0; i < c->num_args; ++i) {
    kiln_status_t status =
        kiln_interp_value_copy(c->context->allocator, c->args[i], &out_value->fields[i]);
    if (status != NULL) {
      kiln_interp_value_release(c->context->allocator, out_value);
      return status;
    }
  }
  return KILN_OK;
}

/* The piece sizes of seq.split along an axis of `extent`. */
static kiln_status_t control_split_sizes(const control_t *c, int64_t extent, kiln_array_t *sizes) {
  if (c->num_args < 2) {
    for (int64_t i = 0; i < extent; ++i) {
      int64_t one = 1;
      KILN_RETURN_IF_ERROR(kiln_array_push(sizes, &one));
    }
    return KILN_OK;
  }
  const kiln_tensor_t *split = NULL;
  KILN_RETURN_IF_ERROR(control_tensor_arg(c, 1, &split));
  int64_t total = 0;
  for (int64_t i = 0; kiln_tensor_ndim(split) == 0 && total < extent; ++i) {
    int64_t size = (int64_t)kiln_tensor_element_as_double(split, 0);
    size = size < extent - total ? size : extent - total;
    if (size <= 0)
      return KILN_STATUS(INVALID_ARGUMENT, "seq.split: split %lld must be positive",
                         (long long)size);
    KILN_RETURN_IF_ERROR(kiln_array_push(sizes, &size));
    total += size;
  }
  for (int64_t i = 0; kiln_tensor_ndim(split) == 1 && i < kiln_tensor_element_count(split); ++i) {
    int64_t size = (int64_t)kiln_tensor_element_as_double(split, i);
    KILN_RETURN_IF_ERROR(kiln_array_push(sizes, &size));
    total += size < 0 ? extent + 1 : size;
  }
  if (total != extent) {
    return KILN_STATUS(INVALID_ARGUMENT, "seq.split: the split sizes sum to %lld, not %lld",
                       (long long)total, (long long)extent);
  }
  return KILN_OK;
}

static kiln_status_t control_seq_split(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_seq_split_attrs_t *attrs = c->call->attrs;
  const kiln_tensor_t *input = NULL;
  KILN_RETURN_IF_ERROR(control_tensor_arg(c, 0, &input));
  int axis = (int)attrs->axis + (attrs->axis < 0 ? kiln_tensor_ndim(input) : 0);
  kiln_array_t sizes;
  kiln_array_initialize(&sizes, c->context->allocator, sizeof(int64_t));
  kiln_status_t status = control_split_sizes(c, kiln_tensor_shape(input)[axis], &sizes);
  if (status == NULL)
    status = kiln_interp_value_list_create(c->context->allocator, KILN_INTERP_VALUE_SEQUENCE,
                                           (int)kiln_array_count(&sizes), out_value);
  bool keep = c->num_args > 1 || attrs->keepdims;
  for (int64_t i = 0, start = 0; status == NULL && i < (int64_t)kiln_array_count(&sizes); ++i) {
    int64_t size = *(const int64_t *)kiln_array_at(&sizes, (size_t)i);
    kiln_tensor_t *piece = NULL;
    status = control_slice(c->context->allocator, input, axis, start, size, keep, &piece);
    if (status == NULL)
      out_value->fields[i] = kiln_interp_value_of_tensor(piece);
    start += size;
  }
  kiln_array_deinitialize(&sizes);
  return status;
}

static kiln_status_t control_seq_concat(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_seq_concat_attrs_t *attrs = c->call->attrs;
  const kiln_interp_value_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_arg(c, 0, &sequence));
  kiln_tensor_t *parts[1] = {NULL};
  kiln_tensor_t **tensors = parts;
  int count = sequence->num_fields;
  if (count == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "seq.concat: the sequence is empty");
  }
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(c->context->allocator, (size_t)count,
                                                   sizeof(*tensors), (void **)&tensors));
  for (int i = 0; i < count; ++i) {
    tensors[i] = sequence->fields[i].tensor;
  }
  int ndim = kiln_tensor_ndim(tensors[0]) + (attrs->new_axis ? 1 : 0);
  int axis = (int)attrs->axis + (attrs->axis < 0 ? ndim : 0);
  kiln_tensor_t *joined = NULL;
  kiln_status_t status = KILN_OK;
  if (axis < 0 || axis >= ndim) {
    status = KILN_STATUS(INVALID_ARGUMENT, "seq.concat: axis %lld for rank %d",
                         (long long)attrs->axis, ndim);
  } else {
    status =
        control_join(c->context->allocator, count, tensors, axis, attrs->new_axis, NULL, &joined);
  }
  kiln_allocator_free(c->context->allocator, tensors);
  if (status == NULL)
    *out_value = kiln_interp_value_of_tensor(joined);
  return status;
}

/* seq.map: the body's arguments for element `i`. */
static kiln_status_t seq_map_args(const control_t *c, int mapped, int64_t i,
                                  const kiln_interp_value_t **args) {
  for (int k = 0; k < c->num_args - 1; ++k) {
    const kiln_interp_value_t *arg = c->args[1 + k];
    if (k < mapped && arg->kind == KILN_INTERP_VALUE_SEQUENCE) {
      if (i >= arg->num_fields) {
        return KILN_STATUS(INVALID_ARGUMENT, "seq.map: input %d has %d elements, input 0 more", k,
                           arg->num_fields);
      }
      arg = &arg->fields[i];
    }
    args[k] = arg;
  }
  return KILN_OK;
}

static kiln_status_t seq_map_take(kiln_allocator_t allocator, const kiln_interp_value_t *result,
                                  int64_t i, kiln_interp_value_t *out_value) {
  for (int k = 0; k < out_value->num_fields; ++k) {
    KILN_RETURN_IF_ERROR(kiln_interp_value_copy(allocator, control_result(result, k),
                                                &out_value->fields[k].fields[i]));
  }
  return KILN_OK;
}

static kiln_status_t seq_map_run(const control_t *c, int64_t count,
                                 const kiln_interp_value_t **args, kiln_interp_value_t *out_value) {
  const kiln_captured_attrs_t *attrs = c->call->attrs;
  int mapped = c->num_args - 1 - (int)attrs->num_captured;
  const kiln_function_t *body = kiln_expr_as_function(c->call->args[0]);
  for (int k = 0; k < out_value->num_fields; ++k) {
    KILN_RETURN_IF_ERROR(kiln_interp_value_list_create(
        c->context->allocator, KILN_INTERP_VALUE_SEQUENCE, (int)count, &out_value->fields[k]));
  }
  for (int64_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(seq_map_args(c, mapped, i, args));
    kiln_interp_value_t result;
    KILN_RETURN_IF_ERROR_ANNOTATE(control_call(c, body, args, &result), "in element %lld",
                                  (long long)i);
    kiln_status_t status = seq_map_take(c->context->allocator, &result, i, out_value);
    kiln_interp_value_release(c->context->allocator, &result);
    KILN_RETURN_IF_ERROR(status);
  }
  return KILN_OK;
}

static kiln_status_t control_seq_map(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *first = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_arg(c, 1, &first));
  const kiln_tuple_type_t *type = kiln_type_as_tuple(c->call->base.checked_type);
  kiln_allocator_t allocator = c->context->allocator;
  const kiln_interp_value_t **args = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, (size_t)c->num_args, sizeof(*args), (void **)&args));
  kiln_status_t status = kiln_interp_value_tuple_create(allocator, type->count, out_value);
  if (status == NULL)
    status = seq_map_run(c, first->num_fields, args, out_value);
  kiln_allocator_free(allocator, (void *)args);
  if (status != NULL)
    kiln_interp_value_release(allocator, out_value);
  return status;
}

/* ---- optionals ---- */

static kiln_status_t control_optional(const control_t *c, kiln_interp_value_t *out_value) {
  KILN_RETURN_IF_ERROR(kiln_interp_value_list_create(
      c->context->allocator, KILN_INTERP_VALUE_OPTIONAL, c->num_args, out_value));
  if (c->num_args == 0)
    return KILN_OK;
  kiln_status_t status =
      kiln_interp_value_copy(c->context->allocator, c->args[0], &out_value->fields[0]);
  if (status != NULL)
    kiln_interp_value_release(c->context->allocator, out_value);
  return status;
}

static kiln_status_t control_optional_get(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *value = c->args[0];
  if (value->kind == KILN_INTERP_VALUE_OPTIONAL) {
    if (value->num_fields == 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "optional.get_element: the optional is empty");
    }
    value = &value->fields[0];
  }
  return kiln_interp_value_copy(c->context->allocator, value, out_value);
}

/* ---- dispatch ---- */

static kiln_status_t control_seq_empty(const control_t *c, kiln_interp_value_t *out_value) {
  return kiln_interp_value_list_create(c->context->allocator, KILN_INTERP_VALUE_SEQUENCE, 0,
                                       out_value);
}

static kiln_status_t control_seq_length(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_arg(c, 0, &sequence));
  return control_scalar(c->context->allocator, KILN_DTYPE_INT64, sequence->num_fields, out_value);
}

static kiln_status_t control_optional_has(const control_t *c, kiln_interp_value_t *out_value) {
  const kiln_interp_value_t *value = c->args[0];
  return control_scalar(c->context->allocator, KILN_DTYPE_BOOL,
                        value->kind != KILN_INTERP_VALUE_OPTIONAL || value->num_fields > 0,
                        out_value);
}

typedef kiln_status_t (*control_fn)(const control_t *c, kiln_interp_value_t *out_value);

/* In the order of KILN_OP_LIST_CONTROL (op/op_list.h), from KILN_OP_IF. */
static const control_fn control_rules[] = {
    control_if,        control_loop,          control_scan,
    control_seq_empty, control_seq_construct, control_seq_insert,
    control_seq_at,    control_seq_erase,     control_seq_length,
    control_seq_split, control_seq_concat,    control_seq_map,
    control_optional,  control_optional_has,  control_optional_get,
};

_Static_assert(sizeof(control_rules) / sizeof(control_rules[0]) ==
                   KILN_OP_OPTIONAL_GET_ELEMENT - KILN_OP_IF + 1,
               "one evaluation rule per control operator");

static kiln_status_t control_eval(const control_t *c, kiln_interp_value_t *out_value) {
  return control_rules[c->call->op->id - KILN_OP_IF](c, out_value);
}

kiln_status_t kiln_interp_eval_control(kiln_interp_context_t *context,
                                       const kiln_interp_plan_t *plan, size_t index,
                                       const kiln_interp_value_t *values,
                                       kiln_interp_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  const kiln_call_t *call = kiln_expr_as_call(kiln_ir_order_node(&plan->order, index));
  const kiln_interp_value_t **args = NULL;
  KILN_RETURN_IF_ERROR(kiln_interp_operand_values(context->allocator, plan, index, values, &args));
  control_t c = {.context = context, .call = call, .num_args = call->num_args, .args = args};
  kiln_status_t status = control_eval(&c, out_value);
  kiln_allocator_free(context->allocator, (void *)args);
  return status;
}
