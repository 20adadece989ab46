/*
 * Named parameters and binding them as constants; see params.h.
 *
 * Binding is a mutator over the function body whose Var rule swaps a bound
 * parameter for its Constant; everything else is the default rebuild, so the
 * untouched parts of the graph are shared with the old function and the DAG
 * stays a DAG. The new function keeps the unbound parameters in order.
 */
#include "ir/params.h"

#include <string.h>

#include "base/hashmap.h"
#include "ir/functor.h"
#include "ir/infer.h"

void kiln_params_initialize(kiln_params_t *params, kiln_allocator_t allocator) {
  params->allocator = allocator;
  kiln_array_initialize(&params->entries, allocator, sizeof(kiln_param_entry_t));
}

void kiln_params_deinitialize(kiln_params_t *params) {
  for (size_t i = 0; i < kiln_array_count(&params->entries); i++) {
    kiln_param_entry_t *entry = kiln_array_at(&params->entries, i);
    kiln_allocator_free(params->allocator, entry->name);
    kiln_tensor_release(entry->tensor);
  }
  kiln_array_deinitialize(&params->entries);
}

kiln_status_t kiln_params_add(kiln_params_t *params, const char *name, kiln_tensor_t *tensor) {
  if (kiln_params_get(params, name) != NULL) {
    return KILN_STATUS(ALREADY_EXISTS, "parameter \"%s\" is already set", name);
  }
  kiln_param_entry_t entry = {NULL, tensor};
  KILN_RETURN_IF_ERROR(kiln_allocator_strdup(params->allocator, name, &entry.name));
  kiln_status_t status = kiln_array_push(&params->entries, &entry);
  if (status != KILN_OK) {
    kiln_allocator_free(params->allocator, entry.name);
    return status;
  }
  kiln_tensor_retain(tensor);
  return KILN_OK;
}

kiln_tensor_t *kiln_params_get(const kiln_params_t *params, const char *name) {
  for (size_t i = 0; i < kiln_array_count(&params->entries); i++) {
    const kiln_param_entry_t *entry = kiln_array_at(&params->entries, i);
    if (strcmp(entry->name, name) == 0)
      return entry->tensor;
  }
  return NULL;
}

size_t kiln_params_count(const kiln_params_t *params) {
  return kiln_array_count(&params->entries);
}

const kiln_param_entry_t *kiln_params_at(const kiln_params_t *params, size_t index) {
  return kiln_array_at(&params->entries, index);
}

/* ---- binding ---- */

typedef struct kiln_ir_binder_t {
  kiln_expr_mutator_t mutator; /* first: rules get &binder->mutator.functor */
  kiln_hashmap_t constant_of;  /* kiln_var_t * -> kiln_constant_t * */
} kiln_ir_binder_t;

static kiln_status_t kiln_ir_binder_var_rule(kiln_expr_functor_t *self, kiln_expr_t *expr,
                                             void *result) {
  kiln_ir_binder_t *binder = (kiln_ir_binder_t *)self;
  void *constant = NULL;
  *(kiln_expr_t **)result =
      kiln_hashmap_get(&binder->constant_of, expr, &constant) ? constant : expr;
  return KILN_OK;
}

/* The tensor must have exactly the parameter's annotated type. */
static kiln_status_t kiln_ir_bind_check(kiln_module_t *module, const kiln_var_t *param,
                                        kiln_tensor_t *tensor) {
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_type_of(kiln_module_arena(module), tensor, &type));
  if (param->type_annotation != NULL && !kiln_type_equal(type, param->type_annotation)) {
    char expected[KILN_IR_TYPE_TEXT_CAPACITY];
    char actual[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "parameter %%%s is %s but the bound value is %s",
                       param->name, kiln_type_text(param->type_annotation, expected),
                       kiln_type_text(type, actual));
  }
  return KILN_OK;
}

/* Maps bound parameters to new Constants and collects the others. */
static kiln_status_t kiln_ir_bind_prepare(kiln_ir_binder_t *binder, const kiln_function_t *function,
                                          const kiln_params_t *params, kiln_var_t **kept,
                                          int *out_num_kept) {
  kiln_module_t *module = binder->mutator.module;
  int num_kept = 0;
  for (int i = 0; i < function->num_params; i++) {
    kiln_var_t *param = function->params[i];
    kiln_tensor_t *tensor = kiln_params_get(params, param->name);
    if (tensor == NULL) {
      kept[num_kept++] = param;
      continue;
    }
    KILN_RETURN_IF_ERROR(kiln_ir_bind_check(module, param, tensor));
    kiln_constant_t *constant = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_constant_create(module, tensor, &constant));
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&binder->constant_of, param, constant));
  }
  *out_num_kept = num_kept;
  return KILN_OK;
}

static kiln_status_t kiln_ir_bind_run(kiln_ir_binder_t *binder, const char *function_name,
                                      const kiln_function_t *function,
                                      const kiln_params_t *params) {
  kiln_module_t *module = binder->mutator.module;
  kiln_var_t **kept = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(
      kiln_module_arena(module), (size_t)(function->num_params > 0 ? function->num_params : 1),
      sizeof(*kept), _Alignof(kiln_var_t *), (void **)&kept));
  int num_kept = 0;
  KILN_RETURN_IF_ERROR(kiln_ir_bind_prepare(binder, function, params, kept, &num_kept));
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(&binder->mutator, function->body, &body));
  kiln_function_t *bound = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(module, num_kept, kept, body, &bound));
  bound->primitive = function->primitive;
  KILN_RETURN_IF_ERROR(kiln_ir_infer_function(module, function_name, bound));
  return kiln_module_set_function(module, function_name, bound);
}

kiln_status_t kiln_ir_bind_params(kiln_module_t *module, const char *function_name,
                                  const kiln_params_t *params) {
  kiln_function_t *function = kiln_module_get_function(module, function_name);
  if (function == NULL) {
    return KILN_STATUS(NOT_FOUND, "the module has no function @%s to bind parameters of",
                       function_name);
  }
  kiln_allocator_t allocator = kiln_module_allocator(module);
  kiln_ir_binder_t binder;
  kiln_expr_mutator_initialize(&binder.mutator, module, allocator);
  kiln_expr_functor_override(&binder.mutator.functor, KILN_EXPR_KIND_VAR, kiln_ir_binder_var_rule);
  kiln_hashmap_initialize(&binder.constant_of, allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = kiln_ir_bind_run(&binder, function_name, function, params);
  kiln_hashmap_deinitialize(&binder.constant_of);
  kiln_expr_mutator_deinitialize(&binder.mutator);
  return status;
}
