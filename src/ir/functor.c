/*
 * Functor dispatch, the default visitor and the default mutator; see
 * functor.h.
 *
 * Children are listed once, by kiln_expr_children, so the visitor and the
 * mutator agree on what a node's children are. Visit counts live in the
 * hash map as integers cast to pointers.
 */
#include "ir/functor.h"

#include <stdint.h>
#include <string.h>

void kiln_expr_functor_initialize(kiln_expr_functor_t *functor) {
  memset(functor, 0, sizeof(*functor));
}

kiln_status_t kiln_expr_functor_set_dispatch(kiln_expr_functor_t *functor, kiln_expr_kind_t kind,
                                             kiln_expr_rule_fn rule) {
  if ((unsigned)kind >= KILN_EXPR_KIND_COUNT_) {
    return KILN_STATUS(INVALID_ARGUMENT, "set_dispatch: %d is not a node kind", (int)kind);
  }
  if (functor->rules[kind]) {
    return KILN_STATUS(ALREADY_EXISTS, "dispatch for %s is already set", kiln_expr_kind_name(kind));
  }
  functor->rules[kind] = rule;
  return KILN_OK;
}

void kiln_expr_functor_clear_dispatch(kiln_expr_functor_t *functor, kiln_expr_kind_t kind) {
  if ((unsigned)kind < KILN_EXPR_KIND_COUNT_) {
    functor->rules[kind] = NULL;
  }
}

void kiln_expr_functor_override(kiln_expr_functor_t *functor, kiln_expr_kind_t kind,
                                kiln_expr_rule_fn rule) {
  kiln_expr_functor_clear_dispatch(functor, kind);
  kiln_status_t status = kiln_expr_functor_set_dispatch(functor, kind, rule);
  (void)kiln_status_consume_ok(status); /* cannot fail: the entry was just cleared */
}

kiln_status_t kiln_expr_functor_call(kiln_expr_functor_t *functor, kiln_expr_t *expr,
                                     void *result) {
  if (!expr) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "found a null node while traversing the graph; the previous pass may have "
                       "built invalid IR");
  }
  if ((unsigned)expr->kind >= KILN_EXPR_KIND_COUNT_ || !functor->rules[expr->kind]) {
    return KILN_STATUS(UNIMPLEMENTED, "no visit rule for %s", kiln_expr_kind_name(expr->kind));
  }
  return functor->rules[expr->kind](functor, expr, result);
}

/* ---- children ---- */

/* The children of `expr`, in evaluation order; a Function's children are its
 * parameters then its body. Points into the node or at `scratch`. */
static int kiln_expr_children(kiln_expr_t *expr, kiln_expr_t **scratch,
                              kiln_expr_t *const **out_children) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_COUNT_:
    *out_children = NULL;
    return 0;
  case KILN_EXPR_KIND_CALL: {
    kiln_call_t *call = kiln_expr_as_call(expr);
    *out_children = call->args;
    return call->num_args;
  }
  case KILN_EXPR_KIND_TUPLE: {
    kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    *out_children = tuple->fields;
    return tuple->num_fields;
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM:
    scratch[0] = kiln_expr_as_tuple_get_item(expr)->tuple;
    *out_children = scratch;
    return 1;
  case KILN_EXPR_KIND_FUNCTION:
    scratch[0] = kiln_expr_as_function(expr)->body;
    *out_children = scratch;
    return 1;
  }
  *out_children = NULL;
  return 0;
}

/* ---- visitor ---- */

kiln_status_t kiln_expr_visitor_visit_children(kiln_expr_visitor_t *visitor, kiln_expr_t *expr) {
  kiln_function_t *function = kiln_expr_as_function(expr);
  if (function) {
    for (int i = 0; i < function->num_params; ++i) {
      KILN_RETURN_IF_ERROR(kiln_expr_visitor_visit(visitor, &function->params[i]->base));
    }
  }
  kiln_expr_t *scratch[1];
  kiln_expr_t *const *children = NULL;
  int count = kiln_expr_children(expr, scratch, &children);
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_expr_visitor_visit(visitor, children[i]));
  }
  return KILN_OK;
}

static kiln_status_t kiln_expr_visitor_default_rule(kiln_expr_functor_t *self, kiln_expr_t *expr,
                                                    void *result) {
  (void)result;
  return kiln_expr_visitor_visit_children((kiln_expr_visitor_t *)self, expr);
}

void kiln_expr_visitor_initialize(kiln_expr_visitor_t *visitor, kiln_allocator_t allocator) {
  kiln_expr_functor_initialize(&visitor->functor);
  for (int kind = 0; kind < KILN_EXPR_KIND_COUNT_; ++kind) {
    visitor->functor.rules[kind] = kiln_expr_visitor_default_rule;
  }
  kiln_hashmap_initialize(&visitor->visit_counter, allocator, KILN_HASHMAP_KEY_POINTER);
}

void kiln_expr_visitor_deinitialize(kiln_expr_visitor_t *visitor) {
  kiln_hashmap_deinitialize(&visitor->visit_counter);
}

size_t kiln_expr_visitor_visit_count(const kiln_expr_visitor_t *visitor, const kiln_expr_t *expr) {
  void *count = NULL;
  return kiln_hashmap_get(&visitor->visit_counter, expr, &count) ? (size_t)(uintptr_t)count : 0;
}

kiln_status_t kiln_expr_visitor_visit(kiln_expr_visitor_t *visitor, kiln_expr_t *expr) {
  size_t count = kiln_expr_visitor_visit_count(visitor, expr);
  if (count > 0) {
    return kiln_hashmap_put(&visitor->visit_counter, expr, (void *)(uintptr_t)(count + 1));
  }
  KILN_RETURN_IF_ERROR(kiln_expr_functor_call(&visitor->functor, expr, NULL));
  return kiln_hashmap_put(&visitor->visit_counter, expr, (void *)(uintptr_t)1);
}

/* ---- mutator ---- */

/* Mutates `count` children into `out_new` (arena); says whether any changed. */
static kiln_status_t kiln_expr_mutator_children(kiln_expr_mutator_t *mutator, int count,
                                                kiln_expr_t *const *children,
                                                kiln_expr_t ***out_new, bool *out_changed) {
  *out_changed = false;
  kiln_expr_t **fresh = NULL;
  if (count > 0) {
    KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(kiln_module_arena(mutator->module),
                                                   (size_t)count, sizeof(*fresh),
                                                   _Alignof(kiln_expr_t *), (void **)&fresh));
  }
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(mutator, children[i], &fresh[i]));
    *out_changed |= fresh[i] != children[i];
  }
  *out_new = fresh;
  return KILN_OK;
}

static kiln_status_t kiln_expr_mutator_rebuild_call(kiln_expr_mutator_t *mutator, kiln_call_t *call,
                                                    kiln_expr_t **out_expr) {
  kiln_expr_t **args = NULL;
  bool changed = false;
  KILN_RETURN_IF_ERROR(
      kiln_expr_mutator_children(mutator, call->num_args, call->args, &args, &changed));
  kiln_function_t *callee = call->callee;
  if (callee) {
    kiln_expr_t *new_callee = NULL;
    KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(mutator, &callee->base, &new_callee));
    changed |= new_callee != &callee->base;
    callee = kiln_expr_as_function(new_callee);
    if (!callee) {
      return KILN_STATUS(INVALID_ARGUMENT, "mutator turned a callee into a %s",
                         kiln_expr_kind_name(new_callee->kind));
    }
  }
  if (!changed) {
    *out_expr = &call->base;
    return KILN_OK;
  }
  kiln_call_t *fresh = NULL;
  if (callee) {
    KILN_RETURN_IF_ERROR(
        kiln_ir_call_function_create(mutator->module, callee, call->num_args, args, &fresh));
  } else {
    KILN_RETURN_IF_ERROR(
        kiln_ir_call_create(mutator->module, call->op, call->num_args, args, call->attrs, &fresh));
  }
  *out_expr = &fresh->base;
  return KILN_OK;
}

static kiln_status_t kiln_expr_mutator_rebuild_function(kiln_expr_mutator_t *mutator,
                                                        kiln_function_t *function,
                                                        kiln_expr_t **out_expr) {
  kiln_expr_t **params = NULL;
  bool changed = false;
  KILN_RETURN_IF_ERROR(kiln_expr_mutator_children(
      mutator, function->num_params, (kiln_expr_t *const *)function->params, &params, &changed));
  for (int i = 0; i < function->num_params; ++i) {
    if (!kiln_expr_as_var(params[i])) {
      return KILN_STATUS(INVALID_ARGUMENT, "mutator turned parameter %d into a %s", i,
                         kiln_expr_kind_name(params[i]->kind));
    }
  }
  kiln_expr_t *body = NULL;
  KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(mutator, function->body, &body));
  if (!changed && body == function->body) {
    *out_expr = &function->base;
    return KILN_OK;
  }
  kiln_function_t *fresh = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_function_create(mutator->module, function->num_params,
                                               (kiln_var_t *const *)params, body, &fresh));
  fresh->primitive = function->primitive;
  *out_expr = &fresh->base;
  return KILN_OK;
}

kiln_status_t kiln_expr_mutator_rebuild(kiln_expr_mutator_t *mutator, kiln_expr_t *expr,
                                        kiln_expr_t **out_expr) {
  switch (expr->kind) {
  case KILN_EXPR_KIND_VAR:
  case KILN_EXPR_KIND_CONSTANT:
  case KILN_EXPR_KIND_COUNT_:
    *out_expr = expr;
    return KILN_OK;
  case KILN_EXPR_KIND_CALL:
    return kiln_expr_mutator_rebuild_call(mutator, kiln_expr_as_call(expr), out_expr);
  case KILN_EXPR_KIND_FUNCTION:
    return kiln_expr_mutator_rebuild_function(mutator, kiln_expr_as_function(expr), out_expr);
  case KILN_EXPR_KIND_TUPLE: {
    kiln_tuple_t *tuple = kiln_expr_as_tuple(expr);
    kiln_expr_t **fields = NULL;
    bool changed = false;
    KILN_RETURN_IF_ERROR(
        kiln_expr_mutator_children(mutator, tuple->num_fields, tuple->fields, &fields, &changed));
    if (!changed) {
      *out_expr = expr;
      return KILN_OK;
    }
    kiln_tuple_t *fresh = NULL;
    KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(mutator->module, tuple->num_fields, fields, &fresh));
    *out_expr = &fresh->base;
    return KILN_OK;
  }
  case KILN_EXPR_KIND_TUPLE_GET_ITEM: {
    kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
    kiln_expr_t *tuple = NULL;
    KILN_RETURN_IF_ERROR(kiln_expr_mutator_mutate(mutator, item->tuple, &tuple));
    if (tuple == item->tuple) {
      *out_expr = expr;
      return KILN_OK;
    }
    kiln_tuple_get_item_t *fresh = NULL;
    KILN_RETURN_IF_ERROR(
        kiln_ir_tuple_get_item_create(mutator->module, tuple, item->index, &fresh));
    *out_expr = &fresh->base;
    return KILN_OK;
  }
  }
  return KILN_STATUS(INTERNAL, "mutator: unknown node kind %d", (int)expr->kind);
}

static kiln_status_t kiln_expr_mutator_default_rule(kiln_expr_functor_t *self, kiln_expr_t *expr,
                                                    void *result) {
  return kiln_expr_mutator_rebuild((kiln_expr_mutator_t *)self, expr, result);
}

void kiln_expr_mutator_initialize(kiln_expr_mutator_t *mutator, kiln_module_t *module,
                                  kiln_allocator_t allocator) {
  kiln_expr_functor_initialize(&mutator->functor);
  for (int kind = 0; kind < KILN_EXPR_KIND_COUNT_; ++kind) {
    mutator->functor.rules[kind] = kiln_expr_mutator_default_rule;
  }
  kiln_hashmap_initialize(&mutator->memo, allocator, KILN_HASHMAP_KEY_POINTER);
  mutator->module = module;
}

void kiln_expr_mutator_deinitialize(kiln_expr_mutator_t *mutator) {
  kiln_hashmap_deinitialize(&mutator->memo);
}

kiln_status_t kiln_expr_mutator_mutate(kiln_expr_mutator_t *mutator, kiln_expr_t *expr,
                                       kiln_expr_t **out_expr) {
  void *memoized = NULL;
  if (expr && kiln_hashmap_get(&mutator->memo, expr, &memoized)) {
    *out_expr = memoized;
    return KILN_OK;
  }
  kiln_expr_t *fresh = NULL;
  KILN_RETURN_IF_ERROR(kiln_expr_functor_call(&mutator->functor, expr, &fresh));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&mutator->memo, expr, fresh));
  *out_expr = fresh;
  return KILN_OK;
}
