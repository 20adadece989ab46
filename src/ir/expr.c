/*
 * Graph IR nodes and modules; see expr.h.
 *
 * Every constructor checks its inputs (no NULL children, counts in range),
 * allocates the node and its child arrays in the module's arena, and stamps
 * the next id. Call attributes default through the operator registry, so a
 * node never carries a NULL attrs pointer for an operator that has
 * attributes.
 */
#include "ir/expr.h"

#include <string.h>

#include "op/op.h"

typedef struct kiln_module_entry_t {
  const char *name;
  kiln_function_t *function;
} kiln_module_entry_t;

struct kiln_module_t {
  kiln_allocator_t allocator;
  kiln_arena_t arena;
  kiln_array_t functions; /* kiln_module_entry_t */
  kiln_array_t constants; /* kiln_tensor_t *, each holding one reference */
  uint32_t next_id;
};

const char *kiln_expr_kind_name(kiln_expr_kind_t kind) {
  static const char *const names[] = {
#define KILN_EXPR_KIND_NAME_(kind, name) name,
      KILN_EXPR_KIND_LIST(KILN_EXPR_KIND_NAME_)
#undef KILN_EXPR_KIND_NAME_
  };
  _Static_assert(sizeof(names) / sizeof(names[0]) == KILN_EXPR_KIND_COUNT_,
                 "one name per expression kind");
  return (unsigned)kind < KILN_EXPR_KIND_COUNT_ ? names[kind] : "invalid";
}

#define KILN_EXPR_DOWNCAST_(type, lower, KIND)                                           \
  type *kiln_expr_as_##lower(const kiln_expr_t *expr) {                                  \
    return expr && expr->kind == KILN_EXPR_KIND_##KIND ? (type *)(uintptr_t)expr : NULL; \
  }
KILN_EXPR_DOWNCAST_(kiln_var_t, var, VAR)
KILN_EXPR_DOWNCAST_(kiln_constant_t, constant, CONSTANT)
KILN_EXPR_DOWNCAST_(kiln_call_t, call, CALL)
KILN_EXPR_DOWNCAST_(kiln_tuple_t, tuple, TUPLE)
KILN_EXPR_DOWNCAST_(kiln_tuple_get_item_t, tuple_get_item, TUPLE_GET_ITEM)
KILN_EXPR_DOWNCAST_(kiln_function_t, function, FUNCTION)
#undef KILN_EXPR_DOWNCAST_

/* ---- module ---- */

kiln_status_t kiln_module_create(kiln_allocator_t allocator, kiln_module_t **out_module) {
  *out_module = NULL;
  kiln_module_t *module = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*module), (void **)&module));
  module->allocator = allocator;
  kiln_arena_initialize(&module->arena, allocator, 0);
  kiln_array_initialize(&module->functions, allocator, sizeof(kiln_module_entry_t));
  kiln_array_initialize(&module->constants, allocator, sizeof(kiln_tensor_t *));
  *out_module = module;
  return KILN_OK;
}

void kiln_module_destroy(kiln_module_t *module) {
  if (!module) {
    return;
  }
  for (size_t i = 0; i < kiln_array_count(&module->constants); ++i) {
    kiln_tensor_release(*(kiln_tensor_t **)kiln_array_at(&module->constants, i));
  }
  kiln_array_deinitialize(&module->constants);
  kiln_array_deinitialize(&module->functions);
  kiln_arena_deinitialize(&module->arena);
  kiln_allocator_free(module->allocator, module);
}

kiln_allocator_t kiln_module_allocator(const kiln_module_t *module) {
  return module->allocator;
}

kiln_arena_t *kiln_module_arena(kiln_module_t *module) {
  return &module->arena;
}

static kiln_module_entry_t *kiln_module_find(const kiln_module_t *module, const char *name) {
  for (size_t i = 0; i < kiln_array_count(&module->functions); ++i) {
    kiln_module_entry_t *entry = kiln_array_at(&module->functions, i);
    if (strcmp(entry->name, name) == 0) {
      return entry;
    }
  }
  return NULL;
}

kiln_status_t kiln_module_add_function(kiln_module_t *module, const char *name,
                                       kiln_function_t *function) {
  if (!function) {
    return KILN_STATUS(INVALID_ARGUMENT, "module: function '%s' is NULL", name);
  }
  if (kiln_module_find(module, name)) {
    return KILN_STATUS(ALREADY_EXISTS, "module already has a function named '%s'", name);
  }
  kiln_module_entry_t entry = {.function = function};
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(&module->arena, name, &copy));
  entry.name = copy;
  return kiln_array_push(&module->functions, &entry);
}

kiln_status_t kiln_module_set_function(kiln_module_t *module, const char *name,
                                       kiln_function_t *function) {
  kiln_module_entry_t *entry = kiln_module_find(module, name);
  if (!entry) {
    return KILN_STATUS(NOT_FOUND, "module has no function named '%s'", name);
  }
  if (!function) {
    return KILN_STATUS(INVALID_ARGUMENT, "module: function '%s' is NULL", name);
  }
  entry->function = function;
  return KILN_OK;
}

kiln_status_t kiln_module_remove_function(kiln_module_t *module, const char *name) {
  for (size_t i = 0; i < kiln_array_count(&module->functions); ++i) {
    kiln_module_entry_t *entry = kiln_array_at(&module->functions, i);
    if (strcmp(entry->name, name) == 0) {
      kiln_array_remove(&module->functions, i, NULL);
      return KILN_OK;
    }
  }
  return KILN_STATUS(NOT_FOUND, "module has no function named '%s'", name);
}

kiln_function_t *kiln_module_get_function(const kiln_module_t *module, const char *name) {
  kiln_module_entry_t *entry = kiln_module_find(module, name);
  return entry ? entry->function : NULL;
}

int kiln_module_function_count(const kiln_module_t *module) {
  return (int)kiln_array_count(&module->functions);
}

const char *kiln_module_function_name(const kiln_module_t *module, int index) {
  return ((kiln_module_entry_t *)kiln_array_at(&module->functions, (size_t)index))->name;
}

kiln_function_t *kiln_module_function_at(const kiln_module_t *module, int index) {
  return ((kiln_module_entry_t *)kiln_array_at(&module->functions, (size_t)index))->function;
}

uint32_t kiln_module_node_count(const kiln_module_t *module) {
  return module->next_id;
}

/* ---- constructors ---- */

static kiln_status_t kiln_ir_node_allocate(kiln_module_t *module, size_t size,
                                           kiln_expr_kind_t kind, void **out_node) {
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_zeroed(&module->arena, size, 16, out_node));
  kiln_expr_t *header = *out_node;
  header->kind = kind;
  header->id = module->next_id++;
  return KILN_OK;
}

/* Copies `count` non-NULL child pointers into the arena. */
static kiln_status_t kiln_ir_copy_children(kiln_module_t *module, const char *what, int count,
                                           kiln_expr_t *const *children, kiln_expr_t ***out_copy) {
  *out_copy = NULL;
  if (count < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d children", what, count);
  }
  for (int i = 0; i < count; ++i) {
    if (!children[i]) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: child %d is NULL", what, i);
    }
  }
  if (count == 0) {
    return KILN_OK;
  }
  kiln_expr_t **copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(&module->arena, (size_t)count, sizeof(*copy),
                                                 _Alignof(kiln_expr_t *), (void **)&copy));
  memcpy(copy, children, sizeof(*copy) * (size_t)count);
  *out_copy = copy;
  return KILN_OK;
}

kiln_status_t kiln_ir_var_create(kiln_module_t *module, const char *name,
                                 const kiln_type_t *type_annotation, kiln_var_t **out_var) {
  *out_var = NULL;
  if (!name || !*name) {
    return KILN_STATUS(INVALID_ARGUMENT, "Var needs a name");
  }
  kiln_var_t *var = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_node_allocate(module, sizeof(*var), KILN_EXPR_KIND_VAR, (void **)&var));
  char *copy = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_strdup(&module->arena, name, &copy));
  var->name = copy;
  var->type_annotation = type_annotation;
  *out_var = var;
  return KILN_OK;
}

kiln_status_t kiln_ir_constant_create(kiln_module_t *module, kiln_tensor_t *value,
                                      kiln_constant_t **out_constant) {
  *out_constant = NULL;
  if (!value) {
    return KILN_STATUS(INVALID_ARGUMENT, "Constant needs a tensor");
  }
  kiln_constant_t *constant = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_node_allocate(module, sizeof(*constant), KILN_EXPR_KIND_CONSTANT,
                                             (void **)&constant));
  KILN_RETURN_IF_ERROR(kiln_array_push(&module->constants, &value));
  kiln_tensor_retain(value);
  constant->value = value;
  *out_constant = constant;
  return KILN_OK;
}

static kiln_status_t kiln_ir_call_allocate(kiln_module_t *module, const char *what, int num_args,
                                           kiln_expr_t *const *args, kiln_call_t **out_call) {
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_node_allocate(module, sizeof(*call), KILN_EXPR_KIND_CALL, (void **)&call));
  KILN_RETURN_IF_ERROR(kiln_ir_copy_children(module, what, num_args, args, &call->args));
  call->num_args = num_args;
  *out_call = call;
  return KILN_OK;
}

kiln_status_t kiln_ir_call_create(kiln_module_t *module, const kiln_op_t *op, int num_args,
                                  kiln_expr_t *const *args, const void *attrs,
                                  kiln_call_t **out_call) {
  *out_call = NULL;
  if (!op) {
    return KILN_STATUS(INVALID_ARGUMENT, "Call needs an operator");
  }
  if (num_args < op->min_inputs || (op->max_inputs >= 0 && num_args > op->max_inputs)) {
    if (op->max_inputs < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: %d arguments, expected %d or more", op->name,
                         num_args, op->min_inputs);
    }
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %d arguments, expected %d to %d", op->name, num_args,
                       op->min_inputs, op->max_inputs);
  }
  if (!attrs && op->attrs_size > 0) {
    void *defaults = NULL;
    KILN_RETURN_IF_ERROR(kiln_op_attrs_create_default(op, &module->arena, &defaults));
    attrs = defaults;
  }
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_allocate(module, op->name, num_args, args, &call));
  call->op = op;
  call->attrs = attrs;
  *out_call = call;
  return KILN_OK;
}

kiln_status_t kiln_ir_call_function_create(kiln_module_t *module, kiln_function_t *callee,
                                           int num_args, kiln_expr_t *const *args,
                                           kiln_call_t **out_call) {
  *out_call = NULL;
  if (!callee) {
    return KILN_STATUS(INVALID_ARGUMENT, "Call needs a function");
  }
  if (num_args != callee->num_params) {
    return KILN_STATUS(INVALID_ARGUMENT, "call of a function of %d parameters with %d arguments",
                       callee->num_params, num_args);
  }
  kiln_call_t *call = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_call_allocate(module, "function call", num_args, args, &call));
  call->callee = callee;
  *out_call = call;
  return KILN_OK;
}

kiln_status_t kiln_ir_tuple_create(kiln_module_t *module, int num_fields,
                                   kiln_expr_t *const *fields, kiln_tuple_t **out_tuple) {
  *out_tuple = NULL;
  kiln_tuple_t *tuple = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_node_allocate(module, sizeof(*tuple), KILN_EXPR_KIND_TUPLE, (void **)&tuple));
  KILN_RETURN_IF_ERROR(kiln_ir_copy_children(module, "Tuple", num_fields, fields, &tuple->fields));
  tuple->num_fields = num_fields;
  *out_tuple = tuple;
  return KILN_OK;
}

kiln_status_t kiln_ir_tuple_get_item_create(kiln_module_t *module, kiln_expr_t *tuple, int index,
                                            kiln_tuple_get_item_t **out_item) {
  *out_item = NULL;
  if (!tuple || index < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "TupleGetItem needs a tuple and an index >= 0 (got %d)",
                       index);
  }
  kiln_tuple_get_item_t *item = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_node_allocate(module, sizeof(*item), KILN_EXPR_KIND_TUPLE_GET_ITEM, (void **)&item));
  item->tuple = tuple;
  item->index = index;
  *out_item = item;
  return KILN_OK;
}

kiln_status_t kiln_ir_function_create(kiln_module_t *module, int num_params,
                                      kiln_var_t *const *params, kiln_expr_t *body,
                                      kiln_function_t **out_function) {
  *out_function = NULL;
  if (!body) {
    return KILN_STATUS(INVALID_ARGUMENT, "Function needs a body");
  }
  kiln_function_t *function = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_node_allocate(module, sizeof(*function), KILN_EXPR_KIND_FUNCTION,
                                             (void **)&function));
  kiln_expr_t **copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_copy_children(module, "Function", num_params, (kiln_expr_t *const *)params, &copy));
  function->params = (kiln_var_t **)copy;
  function->num_params = num_params;
  function->body = body;
  *out_function = function;
  return KILN_OK;
}
