/*
 * The interpreter's entry points; see interp.h.
 *
 * A run checks everything it can before computing anything: the function
 * exists, every node it reaches has a type (else the caller forgot type
 * inference), and each input matches its parameter (a symbolic dim takes
 * the size of the input that first brings its variable, and every other
 * input with that variable must agree). Then it plans the
 * function, evaluates it (interp/eval.h) and hands the body's tensors to the
 * caller as new references in a new array. Plans, values and the callee
 * plans made on the way are released whatever happens.
 */
#include "interp/interp.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "interp/eval.h"
#include "interp/shapes.h"
#include "interp/value.h"

/* NOT_FOUND naming the function and listing the module's functions. */
static kiln_status_t kiln_interp_not_found(const kiln_module_t *module, const char *name) {
  char known[256] = "";
  size_t used = 0;
  for (int i = 0; i < kiln_module_function_count(module) && used < sizeof(known); i++) {
    int written = snprintf(known + used, sizeof(known) - used, "%s@%s", i > 0 ? ", " : "",
                           kiln_module_function_name(module, i));
    if (written < 0)
      break;
    used += (size_t)written;
  }
  return KILN_STATUS(NOT_FOUND, "the module has no function @%s (it has %s)", name,
                     known[0] != '\0' ? known : "none");
}

/* FAILED_PRECONDITION for the first node without a type. */
static kiln_status_t kiln_interp_check_typed(const kiln_ir_order_t *order, const char *name) {
  for (size_t i = 0; i < kiln_ir_order_count(order); i++) {
    const kiln_expr_t *expr = kiln_ir_order_node(order, i);
    if (expr->kind == KILN_EXPR_KIND_FUNCTION || expr->checked_type != NULL)
      continue;
    char node[KILN_IR_ORDER_NAME_CAPACITY];
    return KILN_STATUS(FAILED_PRECONDITION,
                       "in @%s, %s has no type: run type inference (kiln_ir_infer_types) on the "
                       "module before interpreting it",
                       name, kiln_ir_order_describe(order, i, node));
  }
  return KILN_OK;
}

/* The tensor type describing `tensor`, pointing at its shape. */
static kiln_tensor_type_t kiln_interp_tensor_type_of(const kiln_tensor_t *tensor) {
  kiln_tensor_type_t type = {
      .base = {KILN_TYPE_KIND_TENSOR},
      .dtype = kiln_tensor_dtype(tensor),
      .ndim = kiln_tensor_ndim(tensor),
      .shape = kiln_tensor_shape(tensor),
  };
  return type;
}

static kiln_status_t kiln_interp_check_input(kiln_interp_bindings_t *bindings, const char *name,
                                             int index, const kiln_var_t *param,
                                             const kiln_tensor_t *input) {
  const kiln_type_t *expected =
      param->type_annotation != NULL ? param->type_annotation : param->base.checked_type;
  if (expected == NULL) {
    return KILN_STATUS(FAILED_PRECONDITION, "in @%s, parameter %d (%%%s) has no type", name, index,
                       param->name);
  }
  char expected_text[KILN_IR_TYPE_TEXT_CAPACITY];
  const kiln_tensor_type_t *tensor_type = kiln_type_as_tensor(expected);
  if (tensor_type == NULL) {
    return KILN_STATUS(UNIMPLEMENTED,
                       "in @%s, parameter %d (%%%s) is %s; kiln_interp_run takes tensor inputs "
                       "(kiln_interp_run_values takes any)",
                       name, index, param->name, kiln_type_text(expected, expected_text));
  }
  if (input == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "in @%s, input %d (%%%s) is NULL", name, index,
                       param->name);
  }
  if (kiln_interp_tensor_fits(bindings, tensor_type, input)) {
    return KILN_OK;
  }
  kiln_tensor_type_t actual = kiln_interp_tensor_type_of(input);
  char actual_text[KILN_IR_TYPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "in @%s, input %d (%%%s) is %s but the parameter is %s",
                     name, index, param->name, kiln_type_text(&actual.base, actual_text),
                     kiln_type_text(expected, expected_text));
}

static kiln_status_t kiln_interp_check_inputs(const char *name, const kiln_function_t *function,
                                              int num_inputs, kiln_tensor_t *const *inputs) {
  if (num_inputs != function->num_params) {
    if (num_inputs >= 0 && num_inputs < function->num_params) {
      return KILN_STATUS(
          INVALID_ARGUMENT, "@%s takes %d inputs, got %d: input %d (%%%s) is missing", name,
          function->num_params, num_inputs, num_inputs, function->params[num_inputs]->name);
    }
    return KILN_STATUS(INVALID_ARGUMENT, "@%s takes %d inputs, got %d", name, function->num_params,
                       num_inputs);
  }
  if (num_inputs > 0 && inputs == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "@%s: the input array is NULL", name);
  }
  kiln_interp_bindings_t bindings = {0};
  for (int i = 0; i < num_inputs; i++) {
    KILN_RETURN_IF_ERROR(
        kiln_interp_check_input(&bindings, name, i, function->params[i], inputs[i]));
  }
  return KILN_OK;
}

/* The body's tensors as new references in a new array. */
static kiln_status_t kiln_interp_outputs(kiln_allocator_t allocator,
                                         const kiln_interp_value_t *body, int *out_num_outputs,
                                         kiln_tensor_t ***out_outputs) {
  size_t count = kiln_interp_value_leaf_count(body);
  if (count > INT_MAX) {
    return KILN_STATUS(OUT_OF_RANGE, "the result has %zu tensors", count);
  }
  kiln_tensor_t **outputs = NULL;
  if (count > 0) {
    KILN_RETURN_IF_ERROR(
        kiln_allocator_malloc_array(allocator, count, sizeof(*outputs), (void **)&outputs));
  }
  size_t position = 0;
  kiln_interp_value_flatten(body, outputs, &position);
  *out_num_outputs = (int)count;
  *out_outputs = outputs;
  return KILN_OK;
}

/* The inputs as borrowed values, and pointers to them. */
static kiln_status_t kiln_interp_bind_inputs(kiln_allocator_t allocator, int num_inputs,
                                             kiln_tensor_t *const *inputs,
                                             kiln_interp_value_t **out_values,
                                             const kiln_interp_value_t ***out_args) {
  size_t count = num_inputs > 0 ? (size_t)num_inputs : 1;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, count, sizeof(**out_values), (void **)out_values));
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, count, sizeof(**out_args), (void **)out_args);
  if (status != NULL) {
    kiln_allocator_free(allocator, *out_values);
    *out_values = NULL;
    return status;
  }
  for (int i = 0; i < num_inputs; i++) {
    (*out_values)[i] = kiln_interp_value_of_tensor(inputs[i]);
    (*out_args)[i] = &(*out_values)[i];
  }
  return KILN_OK;
}

/* Evaluates the planned top-level function and collects its outputs. */
static kiln_status_t kiln_interp_evaluate(kiln_interp_context_t *context, int num_inputs,
                                          kiln_tensor_t *const *inputs, int *out_num_outputs,
                                          kiln_tensor_t ***out_outputs) {
  kiln_allocator_t allocator = context->allocator;
  kiln_interp_value_t *values = NULL;
  const kiln_interp_value_t **args = NULL;
  KILN_RETURN_IF_ERROR(kiln_interp_bind_inputs(allocator, num_inputs, inputs, &values, &args));
  kiln_interp_value_t body;
  kiln_status_t status = kiln_interp_eval_function(context, context->top, args, &body);
  kiln_allocator_free(allocator, (void *)args);
  kiln_allocator_free(allocator, values); /* borrowed: nothing to release */
  KILN_RETURN_IF_ERROR(status);
  status = kiln_interp_outputs(allocator, &body, out_num_outputs, out_outputs);
  kiln_interp_value_release(allocator, &body);
  return status;
}

/* ---- value inputs (sequences and optionals) ---- */

static kiln_status_t kiln_interp_check_value(const kiln_type_t *type,
                                             const kiln_interp_value_t *value);

/* Whether `tensor` fits tensor type `type`, symbolic dims included; each
 * value binds its named dims on its own (the elements of a sequence may
 * differ in shape). */
static bool kiln_interp_tensor_matches(const kiln_type_t *type, const kiln_tensor_t *tensor) {
  const kiln_tensor_type_t *tensor_type = kiln_type_as_tensor(type);
  kiln_interp_bindings_t bindings = {0};
  return tensor_type != NULL && kiln_interp_tensor_fits(&bindings, tensor_type, tensor);
}

static kiln_status_t kiln_interp_check_fields(const kiln_type_t *type,
                                              const kiln_interp_value_t *value) {
  const kiln_sequence_type_t *sequence = kiln_type_as_sequence(type);
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (tuple != NULL && tuple->count != value->num_fields) {
    return KILN_STATUS(INVALID_ARGUMENT, "a tuple of %d fields, not %d", value->num_fields,
                       tuple->count);
  }
  for (int i = 0; i < value->num_fields; i++) {
    if (sequence != NULL) {
      const kiln_tensor_t *tensor = value->fields[i].tensor;
      if (value->fields[i].kind != KILN_INTERP_VALUE_TENSOR ||
          kiln_tensor_dtype(tensor) != sequence->dtype ||
          (sequence->element && !kiln_interp_tensor_matches(sequence->element, tensor))) {
        return KILN_STATUS(INVALID_ARGUMENT, "element %d does not match", i);
      }
      continue;
    }
    const kiln_type_t *field = tuple ? tuple->fields[i] : kiln_type_as_optional(type)->element;
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_interp_check_value(field, &value->fields[i]), "field %d", i);
  }
  return KILN_OK;
}

/* OK when `value` is of `type` (sequences: every element of the dtype, and
 * of the element type when it is known). */
static kiln_status_t kiln_interp_check_value(const kiln_type_t *type,
                                             const kiln_interp_value_t *value) {
  static const kiln_interp_value_kind_t kinds[] = {
      [KILN_TYPE_KIND_TENSOR] = KILN_INTERP_VALUE_TENSOR,
      [KILN_TYPE_KIND_TUPLE] = KILN_INTERP_VALUE_TUPLE,
      [KILN_TYPE_KIND_SEQUENCE] = KILN_INTERP_VALUE_SEQUENCE,
      [KILN_TYPE_KIND_OPTIONAL] = KILN_INTERP_VALUE_OPTIONAL,
      [KILN_TYPE_KIND_FUNC] = KILN_INTERP_VALUE_NONE,
  };
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  if (type == NULL || value->kind == KILN_INTERP_VALUE_NONE || kinds[type->kind] != value->kind) {
    return KILN_STATUS(INVALID_ARGUMENT, "the value is not a %s", kiln_type_text(type, text));
  }
  if (value->kind == KILN_INTERP_VALUE_TENSOR) {
    if (kiln_interp_tensor_matches(type, value->tensor))
      return KILN_OK;
    kiln_tensor_type_t actual = kiln_interp_tensor_type_of(value->tensor);
    char actual_text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "the value is %s, not %s",
                       kiln_type_text(&actual.base, actual_text), kiln_type_text(type, text));
  }
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_interp_check_fields(type, value), "%s",
                                kiln_type_text(type, text));
  return KILN_OK;
}

/* ---- entry points ---- */

/* The function's plan, checked: the function exists and is typed. */
static kiln_status_t kiln_interp_prepare(kiln_module_t *module, const char *function_name,
                                         const kiln_interp_options_t *options,
                                         const kiln_function_t **out_function,
                                         kiln_interp_plan_t **out_plan) {
  if (module == NULL || function_name == NULL || options == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_interp_run needs a module, a function name and "
                                         "options");
  }
  *out_function = kiln_module_get_function(module, function_name);
  if (*out_function == NULL)
    return kiln_interp_not_found(module, function_name);
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_interp_plan_create(options->allocator, *out_function, NULL, out_plan), "in @%s",
      function_name);
  return kiln_interp_check_typed(&(*out_plan)->order, function_name);
}

kiln_status_t kiln_interp_run_with_options(kiln_module_t *module, const char *function_name,
                                           int num_inputs, kiln_tensor_t *const *inputs,
                                           const kiln_interp_options_t *options,
                                           int *out_num_outputs, kiln_tensor_t ***out_outputs) {
  *out_num_outputs = 0;
  *out_outputs = NULL;
  const kiln_function_t *function = NULL;
  kiln_interp_plan_t *top = NULL;
  kiln_status_t status = kiln_interp_prepare(module, function_name, options, &function, &top);
  if (status == NULL)
    status = kiln_interp_check_inputs(function_name, function, num_inputs, inputs);
  if (status == NULL && kiln_type_has_sequence_or_optional(function->ret_type)) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    status = KILN_STATUS(UNIMPLEMENTED,
                         "@%s returns %s; kiln_interp_run returns tensors only (run it with "
                         "kiln_interp_run_values)",
                         function_name, kiln_type_text(function->ret_type, text));
  }
  kiln_interp_context_t context;
  kiln_interp_context_initialize(&context, options, function_name);
  if (status == NULL) {
    context.top = top;
    status = kiln_interp_evaluate(&context, num_inputs, inputs, out_num_outputs, out_outputs);
  }
  kiln_interp_context_deinitialize(&context);
  if (top != NULL)
    kiln_interp_plan_destroy(options->allocator, top);
  return status;
}

static kiln_status_t kiln_interp_check_values(const char *name, const kiln_function_t *function,
                                              int num_inputs, const kiln_interp_value_t *inputs) {
  if (num_inputs != function->num_params || (num_inputs > 0 && inputs == NULL)) {
    return KILN_STATUS(INVALID_ARGUMENT, "@%s takes %d inputs, got %d", name, function->num_params,
                       num_inputs);
  }
  for (int i = 0; i < num_inputs; i++) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        kiln_interp_check_value(function->params[i]->type_annotation, &inputs[i]),
        "in @%s, input %d (%%%s)", name, i, function->params[i]->name);
  }
  return KILN_OK;
}

static kiln_status_t kiln_interp_evaluate_values(kiln_interp_context_t *context, int num_inputs,
                                                 const kiln_interp_value_t *inputs,
                                                 kiln_interp_value_t *out_result) {
  const kiln_interp_value_t **args = NULL;
  size_t count = num_inputs > 0 ? (size_t)num_inputs : 1;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(context->allocator, count, sizeof(*args), (void **)&args));
  for (int i = 0; i < num_inputs; i++) {
    args[i] = &inputs[i];
  }
  kiln_status_t status = kiln_interp_eval_function(context, context->top, args, out_result);
  kiln_allocator_free(context->allocator, (void *)args);
  return status;
}

kiln_status_t kiln_interp_run_values(kiln_module_t *module, const char *function_name,
                                     int num_inputs, const kiln_interp_value_t *inputs,
                                     const kiln_interp_options_t *options,
                                     kiln_interp_value_t *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  const kiln_function_t *function = NULL;
  kiln_interp_plan_t *top = NULL;
  kiln_status_t status = kiln_interp_prepare(module, function_name, options, &function, &top);
  if (status == NULL)
    status = kiln_interp_check_values(function_name, function, num_inputs, inputs);
  kiln_interp_context_t context;
  kiln_interp_context_initialize(&context, options, function_name);
  if (status == NULL) {
    context.top = top;
    status = kiln_interp_evaluate_values(&context, num_inputs, inputs, out_result);
  }
  kiln_interp_context_deinitialize(&context);
  if (top != NULL)
    kiln_interp_plan_destroy(options->allocator, top);
  return status;
}

kiln_status_t kiln_interp_run(kiln_module_t *module, const char *function_name, int num_inputs,
                              kiln_tensor_t *const *inputs, kiln_allocator_t allocator,
                              int *out_num_outputs, kiln_tensor_t ***out_outputs) {
  kiln_interp_options_t options = {.allocator = allocator};
  return kiln_interp_run_with_options(module, function_name, num_inputs, inputs, &options,
                                      out_num_outputs, out_outputs);
}
