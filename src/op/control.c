/*
 * Control flow, sequences and optionals as operators: if, loop, scan,
 * seq.*, optional.*. Their semantics are ONNX's (If, Loop, Scan,
 * Sequence*, SplitToSequence, ConcatFromSequence, SequenceMap, Optional*).
 *
 * if, loop, scan and seq.map take Functions as arguments (Relay's design of
 * higher-order calls): a branch or a body is a closed Function node, and the
 * outer values it uses are passed as the call's last arguments and bound to
 * its last parameters (closure conversion, done by the importer; the
 * verifier's scoping rule keeps functions closed). A type relation sees a
 * Function argument as its function type (ir/type.h), so each rule checks
 * the body's parameters against the arguments and derives the result from
 * the body's result. loop, scan and seq.map always return a tuple; if
 * returns the join of its branches' types (a sequence whose element shape
 * only one branch knows is typed with shapes known at run time).
 *
 * None of these has a reference kernel or a compute rule: their values are
 * not tensors of a shape known at compile time, so the interpreter evaluates
 * them itself (interp/control.c) and the graph compiler refuses a module that
 * uses them (kiln_op_is_control). The choice and its limits are in
 * docs/control-flow.md.
 */
#include <string.h>

#include "op/control_attrs.h"
#include "op/transform_common.h"

#define KILN_FIELD_COUNT_(fields) ((int)(sizeof(fields) / sizeof(fields[0])))

bool kiln_op_is_control(const kiln_op_t *op) {
  return op != NULL && op->id >= KILN_OP_IF && op->id <= KILN_OP_OPTIONAL_GET_ELEMENT;
}

int64_t kiln_scan_attr_at(kiln_ints_t list, int index, int64_t fallback) {
  return index < list.count ? list.values[index] : fallback;
}

/* ---- helpers ---- */

static int64_t control_numel(const kiln_tensor_type_t *tensor) {
  int64_t count = 1;
  for (int d = 0; d < tensor->ndim; ++d) {
    count *= tensor->shape[d];
  }
  return count;
}

static kiln_status_t control_func(const kiln_type_relation_t *relation, int index,
                                  const kiln_func_type_t **out_func) {
  *out_func = kiln_type_as_func(relation->inputs[index]);
  if (*out_func == NULL) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: argument %d must be a function, not %s",
                       relation->op->name, index, kiln_type_text(relation->inputs[index], text));
  }
  if ((*out_func)->ret == NULL) {
    return KILN_STATUS(FAILED_PRECONDITION, "%s: the function of argument %d has no type yet",
                       relation->op->name, index);
  }
  return KILN_OK;
}

/* Body parameter `param` must have type `expected` (`what` names the role). */
static kiln_status_t control_param(const kiln_type_relation_t *relation,
                                   const kiln_func_type_t *func, int param,
                                   const kiln_type_t *expected, const char *what) {
  if (param >= func->num_params) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the body takes %d parameters, fewer than its %s",
                       relation->op->name, func->num_params, what);
  }
  if (!kiln_type_equal(func->params[param], expected)) {
    char have[KILN_IR_TYPE_TEXT_CAPACITY], want[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: body parameter %d (%s) is %s but is given %s",
                       relation->op->name, param, what, kiln_type_text(func->params[param], have),
                       kiln_type_text(expected, want));
  }
  return KILN_OK;
}

/* Parameters [first, first + count) take inputs [input, input + count). */
static kiln_status_t control_params(const kiln_type_relation_t *relation,
                                    const kiln_func_type_t *func, int first, int input, int count,
                                    const char *what) {
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(
        control_param(relation, func, first + i, relation->inputs[input + i], what));
  }
  return KILN_OK;
}

static kiln_status_t control_param_count(const kiln_type_relation_t *relation,
                                         const kiln_func_type_t *func, int expected) {
  if (func->num_params != expected) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the body takes %d parameters, expected %d",
                       relation->op->name, func->num_params, expected);
  }
  return KILN_OK;
}

/* The body's results as a list: a tuple's fields, or the one result. */
static void control_results(const kiln_func_type_t *func, int *out_count,
                            const kiln_type_t *const **out_types) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(func->ret);
  *out_count = tuple ? tuple->count : 1;
  *out_types = tuple ? tuple->fields : &func->ret;
}

/* The number of captured values from the attrs, within the inputs. */
static kiln_status_t control_captured(const kiln_type_relation_t *relation, int64_t captured,
                                      int fixed, int *out_rest) {
  if (captured < 0 || captured > relation->num_inputs - fixed) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: num_captured %lld with %d arguments",
                       relation->op->name, (long long)captured, relation->num_inputs);
  }
  *out_rest = relation->num_inputs - fixed - (int)captured;
  return KILN_OK;
}

/* Input `index` must be a one-element tensor of `dtype` (a condition, a
 * count, a position). */
static kiln_status_t control_scalar_input(const kiln_type_relation_t *relation, int index,
                                          kiln_dtype_t dtype, const char *what) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(relation->inputs[index]);
  if (tensor == NULL || control_numel(tensor) != 1 ||
      (dtype != KILN_DTYPE_COUNT_ && tensor->dtype != dtype)) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s (argument %d) must be one %s, not %s",
                       relation->op->name, what, index,
                       dtype == KILN_DTYPE_COUNT_ ? "integer" : kiln_dtype_name(dtype),
                       kiln_type_text(relation->inputs[index], text));
  }
  return KILN_OK;
}

static kiln_status_t control_scalar_type(kiln_arena_t *arena, kiln_dtype_t dtype,
                                         const kiln_type_t **out_type) {
  return kiln_tensor_type_create(arena, dtype, 0, NULL, out_type);
}

/* Whether a body's result of type `out` may go back in as `in`: the same
 * type, or one more specific (a sequence whose element shape the result
 * knows and the initial value does not). */
static bool control_fits(kiln_arena_t *arena, const kiln_type_t *out, const kiln_type_t *in) {
  const kiln_type_t *joined = NULL;
  kiln_status_t status = kiln_type_join(arena, in, out, &joined);
  if (status != NULL) {
    kiln_status_free(status);
    return false;
  }
  return kiln_type_equal(joined, in);
}

/* ---- if ---- */

static kiln_status_t if_infer_type(const kiln_type_relation_t *relation,
                                   const kiln_type_t **out_type) {
  KILN_RETURN_IF_ERROR(control_scalar_input(relation, 0, KILN_DTYPE_BOOL, "the condition"));
  const kiln_func_type_t *branches[2] = {NULL, NULL};
  int captured = relation->num_inputs - 3;
  for (int b = 0; b < 2; ++b) {
    KILN_RETURN_IF_ERROR(control_func(relation, 1 + b, &branches[b]));
    KILN_RETURN_IF_ERROR(control_param_count(relation, branches[b], captured));
    KILN_RETURN_IF_ERROR(control_params(relation, branches[b], 0, 3, captured, "a captured value"));
  }
  kiln_status_t status =
      kiln_type_join(relation->arena, branches[0]->ret, branches[1]->ret, out_type);
  if (status != NULL) {
    kiln_status_free(status);
    char then_text[KILN_IR_TYPE_TEXT_CAPACITY], else_text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "if: the then branch gives %s but the else branch %s",
                       kiln_type_text(branches[0]->ret, then_text),
                       kiln_type_text(branches[1]->ret, else_text));
  }
  return KILN_OK;
}

/* ---- loop ---- */

static const kiln_attr_field_t kiln_captured_fields[] = {
    KILN_ATTR_FIELD(kiln_captured_attrs_t, num_captured, INT, "0"),
};

/* Checks the body's parameters: (iteration, condition, carried, captured). */
static kiln_status_t loop_check_params(const kiln_type_relation_t *relation,
                                       const kiln_func_type_t *body, int carried, int captured) {
  KILN_RETURN_IF_ERROR(control_param_count(relation, body, 2 + carried + captured));
  for (int p = 0; p < 2; ++p) {
    const kiln_tensor_type_t *tensor = kiln_type_as_tensor(body->params[p]);
    kiln_dtype_t dtype = p == 0 ? KILN_DTYPE_INT64 : KILN_DTYPE_BOOL;
    if (tensor == NULL || tensor->dtype != dtype || control_numel(tensor) != 1) {
      char text[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "loop: body parameter %d must be one %s, not %s", p,
                         kiln_dtype_name(dtype), kiln_type_text(body->params[p], text));
    }
  }
  for (int i = 0; i < carried; ++i) {
    const kiln_type_t *param = 2 + i < body->num_params ? body->params[2 + i] : NULL;
    if (param == NULL || !control_fits(relation->arena, relation->inputs[3 + i], param)) {
      char have[KILN_IR_TYPE_TEXT_CAPACITY], want[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(
          INVALID_ARGUMENT, "loop: body parameter %d (a loop-carried value) is %s but is given %s",
          2 + i, kiln_type_text(param, have), kiln_type_text(relation->inputs[3 + i], want));
    }
  }
  return control_params(relation, body, 2 + carried, 3 + carried, captured, "a captured value");
}

/* Scan output `slice`, stacked on a new leading dim of the trip count,
 * which is known only at run time: an anonymous symbolic dim. */
static kiln_status_t loop_scan_output(kiln_arena_t *arena, int k, const kiln_type_t *slice,
                                      const kiln_type_t **out_type) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(slice);
  if (tensor == NULL || tensor->ndim >= KILN_MAX_RANK) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "loop: scan output %d of the body is %s", k,
                       kiln_type_text(slice, text));
  }
  int64_t dims[KILN_MAX_RANK] = {0};
  const kiln_dim_var_t *vars[KILN_MAX_RANK] = {NULL};
  KILN_RETURN_IF_ERROR(kiln_dim_var_create(arena, "", -1, &vars[0]));
  for (int d = 0; d < tensor->ndim; ++d) {
    dims[d + 1] = tensor->shape[d];
    vars[d + 1] = tensor->vars ? tensor->vars[d] : NULL;
  }
  return kiln_tensor_type_create_symbolic(arena, tensor->dtype, tensor->ndim + 1, dims, vars,
                                          out_type);
}

/* The loop's result: the carried values (typed as the body takes them),
 * then the scan outputs stacked. */
static kiln_status_t loop_result(const kiln_type_relation_t *relation, const kiln_func_type_t *body,
                                 int carried, int count, const kiln_type_t *const *results,
                                 const kiln_type_t **out_type) {
  for (int i = 0; i < carried; ++i) {
    if (!control_fits(relation->arena, results[1 + i], body->params[2 + i])) {
      char have[KILN_IR_TYPE_TEXT_CAPACITY], want[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(
          INVALID_ARGUMENT, "loop: loop-carried value %d goes in as %s but the body gives %s", i,
          kiln_type_text(body->params[2 + i], want), kiln_type_text(results[1 + i], have));
    }
  }
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(relation->arena, (size_t)count + 1,
                                                 sizeof(*fields), _Alignof(const kiln_type_t *),
                                                 (void **)&fields));
  for (int i = 0; i < carried; ++i) {
    fields[i] = body->params[2 + i];
  }
  for (int k = 0; k + 1 + carried < count; ++k) {
    KILN_RETURN_IF_ERROR(
        loop_scan_output(relation->arena, k, results[1 + carried + k], &fields[carried + k]));
  }
  return kiln_tuple_type_create(relation->arena, count - 1, fields, out_type);
}

static kiln_status_t loop_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  const kiln_captured_attrs_t *attrs = relation->attrs;
  int carried = 0;
  KILN_RETURN_IF_ERROR(control_captured(relation, attrs->num_captured, 3, &carried));
  const kiln_func_type_t *body = NULL;
  KILN_RETURN_IF_ERROR(control_func(relation, 0, &body));
  KILN_RETURN_IF_ERROR(control_scalar_input(relation, 1, KILN_DTYPE_INT64, "the trip count"));
  KILN_RETURN_IF_ERROR(control_scalar_input(relation, 2, KILN_DTYPE_BOOL, "the condition"));
  KILN_RETURN_IF_ERROR(loop_check_params(relation, body, carried, (int)attrs->num_captured));
  int count = 0;
  const kiln_type_t *const *results = NULL;
  control_results(body, &count, &results);
  const kiln_tensor_type_t *cond = count > 0 ? kiln_type_as_tensor(results[0]) : NULL;
  if (count < 1 + carried || cond == NULL || cond->dtype != KILN_DTYPE_BOOL ||
      control_numel(cond) != 1) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "loop: the body must return the condition (one bool) and %d loop-carried "
                       "values, but returns %s",
                       carried, kiln_type_text(body->ret, text));
  }
  return loop_result(relation, body, carried, count, results, out_type);
}

/* ---- scan ---- */

static const kiln_attr_field_t kiln_scan_fields[] = {
    KILN_ATTR_FIELD(kiln_scan_attrs_t, num_scan_inputs, INT, "1"),
    KILN_ATTR_FIELD(kiln_scan_attrs_t, num_captured, INT, "0"),
    KILN_ATTR_FIELD(kiln_scan_attrs_t, scan_input_directions, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_scan_attrs_t, scan_output_directions, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_scan_attrs_t, scan_input_axes, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_scan_attrs_t, scan_output_axes, INTS, "[]"),
};

static kiln_status_t scan_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_scan_attrs_t *scan = attrs;
  if (scan->num_scan_inputs < 1 || scan->num_captured < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: num_scan_inputs %lld must be >= 1", op->name,
                       (long long)scan->num_scan_inputs);
  }
  const kiln_ints_t *directions[2] = {&scan->scan_input_directions, &scan->scan_output_directions};
  for (int d = 0; d < 2; ++d) {
    for (int i = 0; i < directions[d]->count; ++i) {
      if (directions[d]->values[i] != 0 && directions[d]->values[i] != 1) {
        return KILN_STATUS(INVALID_ARGUMENT, "%s: a scan direction is 0 or 1, not %lld", op->name,
                           (long long)directions[d]->values[i]);
      }
    }
  }
  return KILN_OK;
}

/* The slice type of scan input `i` (argument `input`), and its length. */
static kiln_status_t scan_slice(const kiln_type_relation_t *relation, int i, int input,
                                const kiln_type_t **out_slice, int64_t *out_length) {
  const kiln_scan_attrs_t *attrs = relation->attrs;
  const kiln_tensor_type_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, input, &tensor));
  if (!kiln_tensor_type_is_static(tensor)) {
    return KILN_STATUS(UNIMPLEMENTED, "scan: scan input %d has a symbolic dim; not supported yet",
                       i);
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(
      relation->op, kiln_scan_attr_at(attrs->scan_input_axes, i, 0), tensor->ndim, &axis));
  int64_t dims[KILN_MAX_RANK];
  int ndim = 0;
  for (int d = 0; d < tensor->ndim; ++d) {
    if (d != axis)
      dims[ndim++] = tensor->shape[d];
  }
  *out_length = tensor->shape[axis];
  return kiln_tensor_type_create(relation->arena, tensor->dtype, ndim, dims, out_slice);
}

/* Checks the scan inputs against the body and returns the sequence length. */
static kiln_status_t scan_check_inputs(const kiln_type_relation_t *relation,
                                       const kiln_func_type_t *body, int state,
                                       int64_t *out_length) {
  const kiln_scan_attrs_t *attrs = relation->attrs;
  for (int i = 0; i < (int)attrs->num_scan_inputs; ++i) {
    const kiln_type_t *slice = NULL;
    int64_t length = 0;
    KILN_RETURN_IF_ERROR(scan_slice(relation, i, 1 + state + i, &slice, &length));
    if (i > 0 && length != *out_length) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "scan: scan input %d has %lld elements on its axis, input 0 has %lld", i,
                         (long long)length, (long long)*out_length);
    }
    *out_length = length;
    KILN_RETURN_IF_ERROR(control_param(relation, body, state + i, slice, "a scan input slice"));
  }
  return KILN_OK;
}

/* Scan output `j` of the body, `length` slices stacked on its axis. */
static kiln_status_t scan_output(const kiln_type_relation_t *relation, int j,
                                 const kiln_type_t *slice, int64_t length,
                                 const kiln_type_t **out_type) {
  const kiln_scan_attrs_t *attrs = relation->attrs;
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(slice);
  if (tensor == NULL || tensor->ndim >= KILN_MAX_RANK) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "scan: scan output %d of the body is %s", j,
                       kiln_type_text(slice, text));
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(
      relation->op, kiln_scan_attr_at(attrs->scan_output_axes, j, 0), tensor->ndim + 1, &axis));
  int64_t dims[KILN_MAX_RANK];
  for (int d = 0, k = 0; d <= tensor->ndim; ++d) {
    dims[d] = d == axis ? length : tensor->shape[k++];
  }
  return kiln_tensor_type_create(relation->arena, tensor->dtype, tensor->ndim + 1, dims, out_type);
}

static kiln_status_t scan_result(const kiln_type_relation_t *relation, const kiln_func_type_t *body,
                                 int state, int64_t length, const kiln_type_t **out_type) {
  int count = 0;
  const kiln_type_t *const *results = NULL;
  control_results(body, &count, &results);
  if (count < state) {
    return KILN_STATUS(INVALID_ARGUMENT, "scan: the body returns %d values, fewer than %d states",
                       count, state);
  }
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(relation->arena, (size_t)count + 1,
                                                 sizeof(*fields), _Alignof(const kiln_type_t *),
                                                 (void **)&fields));
  for (int i = 0; i < count; ++i) {
    if (i < state && !control_fits(relation->arena, results[i], relation->inputs[1 + i])) {
      char have[KILN_IR_TYPE_TEXT_CAPACITY], want[KILN_IR_TYPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT, "scan: state %d goes in as %s but the body gives %s", i,
                         kiln_type_text(relation->inputs[1 + i], want),
                         kiln_type_text(results[i], have));
    }
    fields[i] = i < state ? relation->inputs[1 + i] : results[i];
    if (i >= state)
      KILN_RETURN_IF_ERROR(scan_output(relation, i - state, results[i], length, &fields[i]));
  }
  return kiln_tuple_type_create(relation->arena, count, fields, out_type);
}

static kiln_status_t scan_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  const kiln_scan_attrs_t *attrs = relation->attrs;
  int rest = 0;
  KILN_RETURN_IF_ERROR(control_captured(relation, attrs->num_captured, 1, &rest));
  int state = rest - (int)attrs->num_scan_inputs;
  if (state < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "scan: %lld scan inputs but %d arguments",
                       (long long)attrs->num_scan_inputs, relation->num_inputs);
  }
  const kiln_func_type_t *body = NULL;
  KILN_RETURN_IF_ERROR(control_func(relation, 0, &body));
  KILN_RETURN_IF_ERROR(control_param_count(relation, body, rest + (int)attrs->num_captured));
  KILN_RETURN_IF_ERROR(control_params(relation, body, 0, 1, state, "a state"));
  int64_t length = 0;
  KILN_RETURN_IF_ERROR(scan_check_inputs(relation, body, state, &length));
  KILN_RETURN_IF_ERROR(
      control_params(relation, body, rest, 1 + rest, (int)attrs->num_captured, "a captured value"));
  return scan_result(relation, body, state, length, out_type);
}

/* ---- sequences ---- */

static kiln_status_t control_sequence_input(const kiln_type_relation_t *relation, int index,
                                            const kiln_sequence_type_t **out_sequence) {
  *out_sequence = kiln_type_as_sequence(relation->inputs[index]);
  if (*out_sequence == NULL) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: input %d must be a sequence, not %s",
                       relation->op->name, index, kiln_type_text(relation->inputs[index], text));
  }
  return KILN_OK;
}

/* The element type of a sequence input, which must be known. */
static kiln_status_t control_sequence_element(const kiln_type_relation_t *relation,
                                              const kiln_sequence_type_t *sequence,
                                              const kiln_type_t **out_element) {
  *out_element = sequence->element;
  if (*out_element == NULL) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(UNIMPLEMENTED,
                       "%s: the elements of %s have shapes known only at run time; symbolic "
                       "shapes are not supported yet",
                       relation->op->name, kiln_type_text(&sequence->base, text));
  }
  return KILN_OK;
}

/* The element type of a sequence holding elements of `element` and
 * `tensor`: their join when they have one rank (the dims that differ
 * symbolic), else NULL (shapes known at run time). */
static kiln_status_t control_element_join(kiln_arena_t *arena, const kiln_type_t *element,
                                          const kiln_tensor_type_t *tensor,
                                          const kiln_type_t **out_element) {
  const kiln_tensor_type_t *known = kiln_type_as_tensor(element);
  *out_element = NULL;
  if (known == NULL || known->ndim != tensor->ndim || known->dtype != tensor->dtype)
    return KILN_OK;
  return kiln_type_join(arena, element, &tensor->base, out_element);
}

static const kiln_attr_field_t kiln_seq_dtype_fields[] = {
    KILN_ATTR_FIELD(kiln_seq_dtype_attrs_t, dtype, DTYPE, "\"float32\""),
};

static kiln_status_t seq_empty_infer_type(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  const kiln_seq_dtype_attrs_t *attrs = relation->attrs;
  return kiln_sequence_type_create(relation->arena, attrs->dtype, NULL, out_type);
}

static kiln_status_t seq_construct_infer_type(const kiln_type_relation_t *relation,
                                              const kiln_type_t **out_type) {
  const kiln_tensor_type_t *first = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &first));
  const kiln_type_t *element = relation->inputs[0];
  for (int i = 1; i < relation->num_inputs; ++i) {
    const kiln_tensor_type_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, i, &tensor));
    if (tensor->dtype != first->dtype) {
      return KILN_STATUS(INVALID_ARGUMENT, "seq.construct: input %d is %s, input 0 is %s", i,
                         kiln_dtype_name(tensor->dtype), kiln_dtype_name(first->dtype));
    }
    if (element != NULL)
      KILN_RETURN_IF_ERROR(control_element_join(relation->arena, element, tensor, &element));
  }
  return kiln_sequence_type_create(relation->arena, first->dtype, element, out_type);
}

static kiln_status_t seq_insert_infer_type(const kiln_type_relation_t *relation,
                                           const kiln_type_t **out_type) {
  const kiln_sequence_type_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_input(relation, 0, &sequence));
  const kiln_tensor_type_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 1, &tensor));
  if (tensor->dtype != sequence->dtype) {
    return KILN_STATUS(INVALID_ARGUMENT, "seq.insert: a %s tensor into a sequence of %s",
                       kiln_dtype_name(tensor->dtype), kiln_dtype_name(sequence->dtype));
  }
  if (relation->num_inputs > 2)
    KILN_RETURN_IF_ERROR(control_scalar_input(relation, 2, KILN_DTYPE_COUNT_, "the position"));
  const kiln_type_t *element = NULL;
  if (sequence->element != NULL)
    KILN_RETURN_IF_ERROR(
        control_element_join(relation->arena, sequence->element, tensor, &element));
  return kiln_sequence_type_create(relation->arena, sequence->dtype, element, out_type);
}

static kiln_status_t seq_at_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  const kiln_sequence_type_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_input(relation, 0, &sequence));
  KILN_RETURN_IF_ERROR(control_scalar_input(relation, 1, KILN_DTYPE_COUNT_, "the position"));
  return control_sequence_element(relation, sequence, out_type);
}

static kiln_status_t seq_erase_infer_type(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  const kiln_sequence_type_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_input(relation, 0, &sequence));
  if (relation->num_inputs > 1)
    KILN_RETURN_IF_ERROR(control_scalar_input(relation, 1, KILN_DTYPE_COUNT_, "the position"));
  *out_type = relation->inputs[0];
  return KILN_OK;
}

static kiln_status_t seq_length_infer_type(const kiln_type_relation_t *relation,
                                           const kiln_type_t **out_type) {
  const kiln_sequence_type_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_input(relation, 0, &sequence));
  return control_scalar_type(relation->arena, KILN_DTYPE_INT64, out_type);
}

static const kiln_attr_field_t kiln_seq_split_fields[] = {
    KILN_ATTR_FIELD(kiln_seq_split_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_seq_split_attrs_t, keepdims, BOOL, "True"),
};

static kiln_status_t seq_split_infer_type(const kiln_type_relation_t *relation,
                                          const kiln_type_t **out_type) {
  const kiln_seq_split_attrs_t *attrs = relation->attrs;
  const kiln_tensor_type_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &tensor));
  if (!kiln_tensor_type_is_static(tensor)) {
    return KILN_STATUS(UNIMPLEMENTED, "seq.split: an input with a symbolic dim is not supported "
                                      "yet");
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_op_normalize_axis(relation->op, attrs->axis, tensor->ndim, &axis));
  const kiln_type_t *element = NULL;
  if (relation->num_inputs == 1) { /* pieces of one: the element type is known */
    int64_t dims[KILN_MAX_RANK];
    int ndim = 0;
    for (int d = 0; d < tensor->ndim; ++d) {
      if (d != axis || attrs->keepdims)
        dims[ndim++] = d == axis ? 1 : tensor->shape[d];
    }
    KILN_RETURN_IF_ERROR(
        kiln_tensor_type_create(relation->arena, tensor->dtype, ndim, dims, &element));
  } else {
    const kiln_tensor_type_t *split = NULL;
    KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 1, &split));
    if (split->ndim > 1 || kiln_scalar_class(split->dtype) != KILN_SCALAR_CLASS_SIGNED) {
      return KILN_STATUS(INVALID_ARGUMENT, "seq.split: split must be a scalar or 1-D integer");
    }
  }
  return kiln_sequence_type_create(relation->arena, tensor->dtype, element, out_type);
}

static const kiln_attr_field_t kiln_seq_concat_fields[] = {
    KILN_ATTR_FIELD(kiln_seq_concat_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_seq_concat_attrs_t, new_axis, BOOL, "False"),
};

static kiln_status_t seq_concat_infer_type(const kiln_type_relation_t *relation,
                                           const kiln_type_t **out_type) {
  (void)out_type;
  const kiln_sequence_type_t *sequence = NULL;
  KILN_RETURN_IF_ERROR(control_sequence_input(relation, 0, &sequence));
  return KILN_STATUS(UNIMPLEMENTED,
                     "seq.concat: the result's length on the axis depends on the number of "
                     "elements, known only at run time; symbolic shapes are not supported yet");
}

/* seq.map: each sequence input gives the body one element, a tensor itself. */
static kiln_status_t seq_map_check_params(const kiln_type_relation_t *relation,
                                          const kiln_func_type_t *body, int mapped) {
  for (int i = 0; i < mapped; ++i) {
    const kiln_type_t *type = relation->inputs[1 + i];
    const kiln_sequence_type_t *sequence = kiln_type_as_sequence(type);
    if (sequence != NULL)
      KILN_RETURN_IF_ERROR(control_sequence_element(relation, sequence, &type));
    KILN_RETURN_IF_ERROR(control_param(relation, body, i, type, "an input element"));
  }
  if (kiln_type_as_sequence(relation->inputs[1]) == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "seq.map: input 1 must be a sequence");
  }
  return KILN_OK;
}

static kiln_status_t seq_map_infer_type(const kiln_type_relation_t *relation,
                                        const kiln_type_t **out_type) {
  const kiln_captured_attrs_t *attrs = relation->attrs;
  int mapped = 0;
  KILN_RETURN_IF_ERROR(control_captured(relation, attrs->num_captured, 1, &mapped));
  const kiln_func_type_t *body = NULL;
  KILN_RETURN_IF_ERROR(control_func(relation, 0, &body));
  KILN_RETURN_IF_ERROR(control_param_count(relation, body, mapped + (int)attrs->num_captured));
  KILN_RETURN_IF_ERROR(seq_map_check_params(relation, body, mapped));
  KILN_RETURN_IF_ERROR(control_params(relation, body, mapped, 1 + mapped, (int)attrs->num_captured,
                                      "a captured value"));
  int count = 0;
  const kiln_type_t *const *results = NULL;
  control_results(body, &count, &results);
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(relation->arena, (size_t)count + 1,
                                                 sizeof(*fields), _Alignof(const kiln_type_t *),
                                                 (void **)&fields));
  for (int i = 0; i < count; ++i) {
    const kiln_tensor_type_t *tensor = kiln_type_as_tensor(results[i]);
    if (tensor == NULL) {
      return KILN_STATUS(INVALID_ARGUMENT, "seq.map: body result %d is not a tensor", i);
    }
    KILN_RETURN_IF_ERROR(
        kiln_sequence_type_create(relation->arena, tensor->dtype, results[i], &fields[i]));
  }
  return kiln_tuple_type_create(relation->arena, count, fields, out_type);
}

/* ---- optionals ---- */

static const kiln_attr_field_t kiln_optional_fields[] = {
    KILN_ATTR_FIELD(kiln_optional_attrs_t, dtype, DTYPE, "\"float32\""),
    KILN_ATTR_FIELD(kiln_optional_attrs_t, shape, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_optional_attrs_t, sequence, BOOL, "False"),
};

static kiln_status_t optional_infer_type(const kiln_type_relation_t *relation,
                                         const kiln_type_t **out_type) {
  const kiln_optional_attrs_t *attrs = relation->attrs;
  const kiln_type_t *element = relation->num_inputs > 0 ? relation->inputs[0] : NULL;
  if (element == NULL && attrs->sequence) {
    KILN_RETURN_IF_ERROR(kiln_sequence_type_create(relation->arena, attrs->dtype, NULL, &element));
  } else if (element == NULL) {
    if (attrs->shape.count > KILN_MAX_RANK) {
      return KILN_STATUS(INVALID_ARGUMENT, "optional: rank %d", (int)attrs->shape.count);
    }
    KILN_RETURN_IF_ERROR(kiln_tensor_type_create(
        relation->arena, attrs->dtype, (int)attrs->shape.count, attrs->shape.values, &element));
  }
  return kiln_optional_type_create(relation->arena, element, out_type);
}

static kiln_status_t optional_has_infer_type(const kiln_type_relation_t *relation,
                                             const kiln_type_t **out_type) {
  return control_scalar_type(relation->arena, KILN_DTYPE_BOOL, out_type);
}

static kiln_status_t optional_get_infer_type(const kiln_type_relation_t *relation,
                                             const kiln_type_t **out_type) {
  const kiln_optional_type_t *optional = kiln_type_as_optional(relation->inputs[0]);
  *out_type = optional ? optional->element : relation->inputs[0];
  if (kiln_type_as_tuple(*out_type) != NULL || kiln_type_as_func(*out_type) != NULL) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "optional.get_element: the input is %s",
                       kiln_type_text(relation->inputs[0], text));
  }
  return KILN_OK;
}

/* ---- the operators ---- */

static kiln_status_t control_layout(kiln_layout_relation_t *relation) {
  for (int i = 0; i < relation->num_inputs; ++i) {
    relation->required_layouts[i] = "";
  }
  relation->output_layout = "";
  return KILN_OK;
}

#define KILN_CONTROL_OP_(symbol, op_name, op_id, min, max, attrs_type, fields, count, validate, \
                         infer)                                                                 \
  const kiln_op_t symbol = {                                                                    \
      .name = op_name,                                                                          \
      .id = op_id,                                                                              \
      .min_inputs = min,                                                                        \
      .max_inputs = max,                                                                        \
      .pattern = KILN_OP_PATTERN_OPAQUE,                                                        \
      .attrs_size = attrs_type,                                                                 \
      .num_attr_fields = count,                                                                 \
      .attr_fields = fields,                                                                    \
      .validate_attrs = validate,                                                               \
      .infer_type = infer,                                                                      \
      .correct_layout = control_layout,                                                         \
      .symbolic_dims = true,                                                                    \
      .symbolic_relation = true,                                                                \
  }

KILN_CONTROL_OP_(kiln_op_if, "if", KILN_OP_IF, 3, -1, 0, NULL, 0, NULL, if_infer_type);
KILN_CONTROL_OP_(kiln_op_loop, "loop", KILN_OP_LOOP, 3, -1, sizeof(kiln_captured_attrs_t),
                 kiln_captured_fields, KILN_FIELD_COUNT_(kiln_captured_fields), NULL,
                 loop_infer_type);
KILN_CONTROL_OP_(kiln_op_scan, "scan", KILN_OP_SCAN, 2, -1, sizeof(kiln_scan_attrs_t),
                 kiln_scan_fields, KILN_FIELD_COUNT_(kiln_scan_fields), scan_validate,
                 scan_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_empty, "seq.empty", KILN_OP_SEQ_EMPTY, 0, 0,
                 sizeof(kiln_seq_dtype_attrs_t), kiln_seq_dtype_fields,
                 KILN_FIELD_COUNT_(kiln_seq_dtype_fields), NULL, seq_empty_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_construct, "seq.construct", KILN_OP_SEQ_CONSTRUCT, 1, -1, 0, NULL, 0,
                 NULL, seq_construct_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_insert, "seq.insert", KILN_OP_SEQ_INSERT, 2, 3, 0, NULL, 0, NULL,
                 seq_insert_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_at, "seq.at", KILN_OP_SEQ_AT, 2, 2, 0, NULL, 0, NULL,
                 seq_at_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_erase, "seq.erase", KILN_OP_SEQ_ERASE, 1, 2, 0, NULL, 0, NULL,
                 seq_erase_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_length, "seq.length", KILN_OP_SEQ_LENGTH, 1, 1, 0, NULL, 0, NULL,
                 seq_length_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_split, "seq.split", KILN_OP_SEQ_SPLIT, 1, 2,
                 sizeof(kiln_seq_split_attrs_t), kiln_seq_split_fields,
                 KILN_FIELD_COUNT_(kiln_seq_split_fields), NULL, seq_split_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_concat, "seq.concat", KILN_OP_SEQ_CONCAT, 1, 1,
                 sizeof(kiln_seq_concat_attrs_t), kiln_seq_concat_fields,
                 KILN_FIELD_COUNT_(kiln_seq_concat_fields), NULL, seq_concat_infer_type);
KILN_CONTROL_OP_(kiln_op_seq_map, "seq.map", KILN_OP_SEQ_MAP, 2, -1, sizeof(kiln_captured_attrs_t),
                 kiln_captured_fields, KILN_FIELD_COUNT_(kiln_captured_fields), NULL,
                 seq_map_infer_type);
KILN_CONTROL_OP_(kiln_op_optional, "optional", KILN_OP_OPTIONAL, 0, 1,
                 sizeof(kiln_optional_attrs_t), kiln_optional_fields,
                 KILN_FIELD_COUNT_(kiln_optional_fields), NULL, optional_infer_type);
KILN_CONTROL_OP_(kiln_op_optional_has, "optional.has_element", KILN_OP_OPTIONAL_HAS_ELEMENT, 1, 1,
                 0, NULL, 0, NULL, optional_has_infer_type);
KILN_CONTROL_OP_(kiln_op_optional_get, "optional.get_element", KILN_OP_OPTIONAL_GET_ELEMENT, 1, 1,
                 0, NULL, 0, NULL, optional_get_infer_type);
