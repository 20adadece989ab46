/*
 * The PrimFunc verifier; see verify.h.
 *
 * A visitor (functor.h) with two stacks: the variables in scope and the
 * buffers' data variables with storage. Binding statements push before their
 * body and pop after it; Var, BufferLoad and BufferStore rules look the
 * stacks up. A counter of enclosing parallel loops catches nesting. The
 * stacks are linear-searched: scopes are as deep as loop nests.
 */
#include "tir/verify.h"

#include "base/array.h"
#include "tir/functor.h"

typedef struct verifier_t {
  kiln_tir_visitor_t visitor; /* first: rules get &verifier->visitor */
  kiln_array_t vars;          /* const kiln_tir_var_t * in scope */
  kiln_array_t storages;      /* data variables of buffers with storage */
  const char *parallel;       /* the enclosing parallel loop's variable, or NULL */
} verifier_t;

static int contains(const kiln_array_t *stack, const kiln_tir_var_t *var) {
  for (size_t i = 0; i < kiln_array_count(stack); ++i) {
    if (KILN_ARRAY_AT(stack, const kiln_tir_var_t *, i) == var) {
      return 1;
    }
  }
  return 0;
}

static kiln_status_t push_var(verifier_t *v, const kiln_tir_var_t *var) {
  if (contains(&v->vars, var)) {
    return KILN_STATUS(INVALID_ARGUMENT, "variable %s is bound twice", var->name);
  }
  return kiln_array_push(&v->vars, &var);
}

static kiln_status_t check_storage(verifier_t *v, const kiln_tir_buffer_t *buffer,
                                   const char *what) {
  if (!contains(&v->storages, buffer->data)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s of buffer %s outside its allocation", what,
                       buffer->name);
  }
  return KILN_OK;
}

static kiln_status_t visit_var(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  const kiln_tir_var_t *var = (const kiln_tir_var_t *)expr;
  if (!contains(&((verifier_t *)self)->vars, var)) {
    return KILN_STATUS(INVALID_ARGUMENT, "variable %s is used outside the scope that binds it",
                       var->name);
  }
  return KILN_OK;
}

static kiln_status_t visit_load(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  const kiln_tir_buffer_load_t *n = (const void *)expr;
  KILN_RETURN_IF_ERROR(check_storage((verifier_t *)self, n->buffer, "load"));
  return kiln_tir_visitor_expr_children(self, expr);
}

static kiln_status_t visit_let(kiln_tir_visitor_t *self, const kiln_tir_expr_t *expr) {
  verifier_t *v = (verifier_t *)self;
  const kiln_tir_let_t *n = (const void *)expr;
  KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(self, n->value));
  KILN_RETURN_IF_ERROR(push_var(v, n->var));
  kiln_status_t status = kiln_tir_visitor_visit_expr(self, n->body);
  (void)kiln_array_pop(&v->vars, NULL);
  return status;
}

static kiln_status_t visit_store(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  const kiln_tir_buffer_store_t *n = (const void *)stmt;
  KILN_RETURN_IF_ERROR(check_storage((verifier_t *)self, n->buffer, "store"));
  return kiln_tir_visitor_stmt_children(self, stmt);
}

static kiln_status_t visit_for(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  verifier_t *v = (verifier_t *)self;
  const kiln_tir_for_t *n = (const void *)stmt;
  const char *outer = v->parallel;
  if (n->for_kind == KILN_TIR_FOR_PARALLEL) {
    if (outer) {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "parallel loop %s is nested in parallel loop %s: fuse them instead",
                         n->var->name, outer);
    }
    v->parallel = n->var->name;
  }
  KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(self, n->min));
  KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(self, n->extent));
  KILN_RETURN_IF_ERROR(push_var(v, n->var));
  kiln_status_t status = kiln_tir_visitor_visit_stmt(self, n->body);
  (void)kiln_array_pop(&v->vars, NULL);
  v->parallel = outer;
  return status;
}

static kiln_status_t visit_let_stmt(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  verifier_t *v = (verifier_t *)self;
  const kiln_tir_let_stmt_t *n = (const void *)stmt;
  KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(self, n->value));
  KILN_RETURN_IF_ERROR(push_var(v, n->var));
  kiln_status_t status = kiln_tir_visitor_visit_stmt(self, n->body);
  (void)kiln_array_pop(&v->vars, NULL);
  return status;
}

static kiln_status_t visit_allocate(kiln_tir_visitor_t *self, const kiln_tir_stmt_t *stmt) {
  verifier_t *v = (verifier_t *)self;
  const kiln_tir_allocate_t *n = (const void *)stmt;
  for (int d = 0; d < n->buffer->ndim; ++d) {
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(self, n->buffer->shape[d]));
  }
  if (contains(&v->storages, n->buffer->data)) {
    return KILN_STATUS(INVALID_ARGUMENT, "buffer %s is allocated twice", n->buffer->name);
  }
  KILN_RETURN_IF_ERROR(kiln_array_push(&v->storages, &n->buffer->data));
  kiln_status_t status = kiln_tir_visitor_visit_stmt(self, n->body);
  (void)kiln_array_pop(&v->storages, NULL);
  return status;
}

/* A parameter's storage, and the variables its shape introduces. */
static kiln_status_t bind_param(verifier_t *v, const kiln_tir_buffer_t *buffer) {
  for (int d = 0; d < buffer->ndim; ++d) {
    const kiln_tir_expr_t *dim = buffer->shape[d];
    if (dim->kind == KILN_TIR_EXPR_VAR && !contains(&v->vars, (const kiln_tir_var_t *)dim)) {
      KILN_RETURN_IF_ERROR(push_var(v, (const kiln_tir_var_t *)dim));
    }
    KILN_RETURN_IF_ERROR(kiln_tir_visitor_visit_expr(&v->visitor, dim));
  }
  return kiln_array_push(&v->storages, &buffer->data);
}

static kiln_status_t verify(verifier_t *v, const kiln_tir_prim_func_t *func) {
  for (int i = 0; i < func->num_params; ++i) {
    KILN_RETURN_IF_ERROR(bind_param(v, func->params[i]));
  }
  return kiln_tir_visitor_visit_stmt(&v->visitor, func->body);
}

kiln_status_t kiln_tir_verify_prim_func(kiln_allocator_t allocator,
                                        const kiln_tir_prim_func_t *func) {
  if (!func) {
    return KILN_STATUS(INVALID_ARGUMENT, "verify: null function");
  }
  verifier_t v = {.parallel = NULL};
  kiln_tir_visitor_initialize(&v.visitor);
  v.visitor.expr_rules[KILN_TIR_EXPR_VAR] = visit_var;
  v.visitor.expr_rules[KILN_TIR_EXPR_BUFFER_LOAD] = visit_load;
  v.visitor.expr_rules[KILN_TIR_EXPR_LET] = visit_let;
  v.visitor.stmt_rules[KILN_TIR_STMT_BUFFER_STORE] = visit_store;
  v.visitor.stmt_rules[KILN_TIR_STMT_FOR] = visit_for;
  v.visitor.stmt_rules[KILN_TIR_STMT_LET_STMT] = visit_let_stmt;
  v.visitor.stmt_rules[KILN_TIR_STMT_ALLOCATE] = visit_allocate;
  kiln_array_initialize(&v.vars, allocator, sizeof(const kiln_tir_var_t *));
  kiln_array_initialize(&v.storages, allocator, sizeof(const kiln_tir_var_t *));
  kiln_status_t status = verify(&v, func);
  kiln_array_deinitialize(&v.vars);
  kiln_array_deinitialize(&v.storages);
  return kiln_status_annotate(status, "%s", func->name);
}
