/*
 * The IR verifier; see verify.h.
 *
 * Each function is checked on its own canonical order (which also proves the
 * graph acyclic). Scoping: the nodes of a nested Function's order are inside
 * it; every other Var of the order must be a parameter of the function being
 * checked, and the nested function is then checked the same way. Types: each
 * node's stored checked_type is compared with what kiln_ir_infer_node
 * computes from its inputs, so a pass that rewrote a node without
 * re-inferring, or built a node its operator rejects, is caught here.
 * Symbolic dims: a parameter's symbolic dim holds -1 in its shape, and a
 * dimension variable's name has one upper bound throughout a function's
 * parameters (equal types elsewhere follow from inference).
 */
#include "ir/verify.h"

#include "base/hashmap.h"
#include "ir/infer.h"
#include "ir/order.h"

typedef struct kiln_ir_verifier_t {
  kiln_module_t *module;
  const char *name;        /* the top-level function being checked */
  kiln_hashmap_t param_of; /* kiln_var_t * -> its kiln_function_t * */
} kiln_ir_verifier_t;

static kiln_status_t kiln_ir_verify_function(kiln_ir_verifier_t *verifier,
                                             kiln_function_t *function);

/* Records `function`'s parameters; a parameter of two functions is an error. */
/* A dim variable of this name among the params' types before (param p, dim
 * d) whose upper bound differs from `var`'s, or NULL. */
static const kiln_dim_var_t *kiln_ir_verify_bound_clash(const kiln_function_t *function, int p,
                                                        int d, const kiln_dim_var_t *var) {
  for (int q = 0; q <= p; q++) {
    const kiln_tensor_type_t *t = kiln_type_as_tensor(function->params[q]->base.checked_type);
    for (int e = 0; t && t->vars && e < (q == p ? d : t->ndim); e++) {
      const kiln_dim_var_t *other = t->vars[e];
      if (other && var->name[0] && kiln_dim_var_equal(other, var) &&
          other->upper_bound != var->upper_bound) {
        return other;
      }
    }
  }
  return NULL;
}

/* Symbolic dims of the parameters: -1 in the shape, and one upper bound per
 * variable name. */
static kiln_status_t kiln_ir_verify_dim_vars(const kiln_ir_verifier_t *verifier,
                                             const kiln_function_t *function, int p) {
  const kiln_var_t *param = function->params[p];
  const kiln_tensor_type_t *t = kiln_type_as_tensor(param->base.checked_type);
  for (int d = 0; t && t->vars && d < t->ndim; d++) {
    const kiln_dim_var_t *var = t->vars[d];
    if (var && t->shape[d] != -1) {
      return KILN_STATUS(INVALID_ARGUMENT, "in @%s, %%%s: symbolic dim %d holds %lld, not -1",
                         verifier->name, param->name, d, (long long)t->shape[d]);
    }
    const kiln_dim_var_t *clash = var ? kiln_ir_verify_bound_clash(function, p, d, var) : NULL;
    if (clash) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "in @%s, %%%s: the dim variable %s has the upper bounds %lld and %lld",
                         verifier->name, param->name, var->name, (long long)clash->upper_bound,
                         (long long)var->upper_bound);
    }
  }
  return NULL;
}

static kiln_status_t kiln_ir_verify_params(kiln_ir_verifier_t *verifier,
                                           kiln_function_t *function) {
  for (int i = 0; i < function->num_params; i++) {
    KILN_RETURN_IF_ERROR(kiln_ir_verify_dim_vars(verifier, function, i));
    kiln_var_t *param = function->params[i];
    void *owner = NULL;
    if (kiln_hashmap_get(&verifier->param_of, param, &owner) && owner != function) {
      return KILN_STATUS(INVALID_ARGUMENT, "in @%s, %%%s is a parameter of two functions",
                         verifier->name, param->name);
    }
    KILN_RETURN_IF_ERROR(kiln_hashmap_put(&verifier->param_of, param, function));
  }
  return NULL;
}

/* Marks every node of a nested function's order as inside it. */
static kiln_status_t kiln_ir_verify_mark_inside(kiln_ir_verifier_t *verifier,
                                                kiln_hashmap_t *inside,
                                                const kiln_function_t *nested) {
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR(
      kiln_ir_order_compute(nested, kiln_module_allocator(verifier->module), &order));
  kiln_status_t status = NULL;
  for (size_t i = 0; i < kiln_ir_order_count(&order) && status == NULL; i++) {
    status = kiln_hashmap_put(inside, kiln_ir_order_node(&order, i), (void *)(uintptr_t)nested);
  }
  kiln_ir_order_deinitialize(&order);
  return status;
}

/* The checks of one node that is directly in `function`. */
static kiln_status_t kiln_ir_verify_node(kiln_ir_verifier_t *verifier,
                                         const kiln_function_t *function, kiln_expr_t *expr) {
  kiln_var_t *var = kiln_expr_as_var(expr);
  if (var != NULL) {
    void *owner = NULL;
    if (!kiln_hashmap_get(&verifier->param_of, var, &owner) || owner != function) {
      return KILN_STATUS(INVALID_ARGUMENT, "is not a parameter of the function that uses it");
    }
  }
  kiln_function_t *nested = kiln_expr_as_function(expr);
  if (nested != NULL) {
    KILN_RETURN_IF_ERROR(kiln_ir_verify_function(verifier, nested));
  } else if (expr->checked_type == NULL) {
    return KILN_STATUS(FAILED_PRECONDITION, "has no checked type (type inference has not run)");
  }
  const kiln_type_t *computed = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_infer_node(kiln_module_arena(verifier->module), expr, &computed));
  if (!kiln_type_equal(computed, expr->checked_type)) {
    char stored_text[KILN_IR_TYPE_TEXT_CAPACITY];
    char computed_text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "has checked type %s but its inputs give %s",
                       kiln_type_text(expr->checked_type, stored_text),
                       kiln_type_text(computed, computed_text));
  }
  return NULL;
}

static kiln_status_t kiln_ir_verify_order(kiln_ir_verifier_t *verifier,
                                          const kiln_function_t *function,
                                          const kiln_ir_order_t *order, kiln_hashmap_t *inside) {
  /* A nested function's nodes come before it in the order: mark them first. */
  for (size_t i = 0; i < kiln_ir_order_count(order); i++) {
    kiln_function_t *nested = kiln_expr_as_function(kiln_ir_order_node(order, i));
    if (nested != NULL)
      KILN_RETURN_IF_ERROR(kiln_ir_verify_mark_inside(verifier, inside, nested));
  }
  for (size_t i = 0; i < kiln_ir_order_count(order); i++) {
    kiln_expr_t *expr = kiln_ir_order_node(order, i);
    if (kiln_hashmap_contains(inside, expr))
      continue;
    kiln_status_t status = kiln_ir_verify_node(verifier, function, expr);
    if (status != NULL) {
      char node[KILN_IR_ORDER_NAME_CAPACITY];
      return kiln_status_annotate(status, "in @%s, %s", verifier->name,
                                  kiln_ir_order_describe(order, i, node));
    }
  }
  if (!kiln_type_equal(function->ret_type, function->body->checked_type)) {
    char ret_text[KILN_IR_TYPE_TEXT_CAPACITY];
    char body_text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "in @%s, a function returns %s but its body is %s",
                       verifier->name, kiln_type_text(function->ret_type, ret_text),
                       kiln_type_text(function->body->checked_type, body_text));
  }
  return NULL;
}

static kiln_status_t kiln_ir_verify_function(kiln_ir_verifier_t *verifier,
                                             kiln_function_t *function) {
  KILN_RETURN_IF_ERROR(kiln_ir_verify_params(verifier, function));
  kiln_ir_order_t order;
  KILN_RETURN_IF_ERROR_ANNOTATE(
      kiln_ir_order_compute(function, kiln_module_allocator(verifier->module), &order), "in @%s",
      verifier->name);
  kiln_hashmap_t inside; /* nodes of nested functions: checked there */
  kiln_hashmap_initialize(&inside, kiln_module_allocator(verifier->module),
                          KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = kiln_ir_verify_order(verifier, function, &order, &inside);
  kiln_hashmap_deinitialize(&inside);
  kiln_ir_order_deinitialize(&order);
  return status;
}

kiln_status_t kiln_ir_verify(kiln_module_t *module) {
  if (kiln_module_get_function(module, "main") == NULL) {
    return KILN_STATUS(INVALID_ARGUMENT, "the module has no @main function");
  }
  kiln_ir_verifier_t verifier = {.module = module};
  kiln_hashmap_initialize(&verifier.param_of, kiln_module_allocator(module),
                          KILN_HASHMAP_KEY_POINTER);
  kiln_status_t status = NULL;
  for (int i = 0; i < kiln_module_function_count(module) && status == NULL; i++) {
    verifier.name = kiln_module_function_name(module, i);
    status = kiln_ir_verify_function(&verifier, kiln_module_function_at(module, i));
  }
  kiln_hashmap_deinitialize(&verifier.param_of);
  return status;
}
