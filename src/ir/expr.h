/*
 * Graph IR expressions and modules, as in Relay.
 *
 * An expression is a node in a DAG: Var (a function parameter, with a name
 * and a type annotation), Constant (a tensor), Call (an operator, or a
 * Function for a fused group, applied to arguments, with the operator's
 * attrs struct), Tuple, TupleGetItem and Function (parameters, a body, and
 * attributes such as Primitive). Every node starts with a kiln_expr_t header:
 * its kind (the runtime type index the functors dispatch on), an id unique in
 * the module (creation order, used by printers for stable names) and its
 * checked type (NULL until type inference fills it).
 *
 * Nodes live in their module's arena and are freed with it; the module also
 * holds a reference to every Constant's tensor and releases them at the end.
 * Nodes are immutable once built, except checked_type, which type inference
 * writes, as Relay's checked_type_. A pass that changes a graph builds new
 * nodes (the mutator does this with memoization).
 */
#ifndef KILN_IR_EXPR_H_
#define KILN_IR_EXPR_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/array.h"
#include "ir/type.h"
#include "kiln/allocator.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

struct kiln_op_t;

#define KILN_EXPR_KIND_LIST(X)      \
  X(VAR, "Var")                     \
  X(CONSTANT, "Constant")           \
  X(CALL, "Call")                   \
  X(TUPLE, "Tuple")                 \
  X(TUPLE_GET_ITEM, "TupleGetItem") \
  X(FUNCTION, "Function")

typedef enum kiln_expr_kind_e {
#define KILN_EXPR_KIND_ENUM_(kind, name) KILN_EXPR_KIND_##kind,
  KILN_EXPR_KIND_LIST(KILN_EXPR_KIND_ENUM_)
#undef KILN_EXPR_KIND_ENUM_
      KILN_EXPR_KIND_COUNT_
} kiln_expr_kind_t;

/* "TupleGetItem"; "invalid" outside the enum. */
const char *kiln_expr_kind_name(kiln_expr_kind_t kind);

typedef struct kiln_expr_t {
  kiln_expr_kind_t kind;
  uint32_t id;
  const kiln_type_t *checked_type;
} kiln_expr_t;

typedef struct kiln_var_t {
  kiln_expr_t base;
  const char *name;
  const kiln_type_t *type_annotation; /* may be NULL */
} kiln_var_t;

typedef struct kiln_constant_t {
  kiln_expr_t base;
  kiln_tensor_t *value;
} kiln_constant_t;

typedef struct kiln_function_t kiln_function_t;

typedef struct kiln_call_t {
  kiln_expr_t base;
  const struct kiln_op_t *op; /* the operator, or NULL when calling `callee` */
  kiln_function_t *callee;    /* a (primitive) function, or NULL */
  int num_args;
  kiln_expr_t **args;
  const void *attrs; /* the operator's attrs struct; NULL for function calls */
} kiln_call_t;

typedef struct kiln_tuple_t {
  kiln_expr_t base;
  int num_fields;
  kiln_expr_t **fields;
} kiln_tuple_t;

typedef struct kiln_tuple_get_item_t {
  kiln_expr_t base;
  kiln_expr_t *tuple;
  int index;
} kiln_tuple_get_item_t;

struct kiln_function_t {
  kiln_expr_t base;
  int num_params;
  kiln_var_t **params;
  kiln_expr_t *body;
  const kiln_type_t *ret_type; /* may be NULL until inferred */
  bool primitive;              /* a fused group, lowered as one kernel */
};

/* Checked downcasts: NULL when `expr` is NULL or of another kind. */
kiln_var_t *kiln_expr_as_var(const kiln_expr_t *expr);
kiln_constant_t *kiln_expr_as_constant(const kiln_expr_t *expr);
kiln_call_t *kiln_expr_as_call(const kiln_expr_t *expr);
kiln_tuple_t *kiln_expr_as_tuple(const kiln_expr_t *expr);
kiln_tuple_get_item_t *kiln_expr_as_tuple_get_item(const kiln_expr_t *expr);
kiln_function_t *kiln_expr_as_function(const kiln_expr_t *expr);

/* ---- modules ---- */

typedef struct kiln_module_t kiln_module_t;

KILN_MUST_USE_RESULT kiln_status_t kiln_module_create(kiln_allocator_t allocator,
                                                      kiln_module_t **out_module);
/* Frees every node and type, and releases every constant's tensor. */
void kiln_module_destroy(kiln_module_t *module);
kiln_arena_t *kiln_module_arena(kiln_module_t *module);
/* The allocator the module was made with; passes use it for scratch memory. */
kiln_allocator_t kiln_module_allocator(const kiln_module_t *module);

/* Adds a named function; ALREADY_EXISTS when the name is taken. */
KILN_MUST_USE_RESULT kiln_status_t kiln_module_add_function(kiln_module_t *module, const char *name,
                                                            kiln_function_t *function);
/* Replaces the function of an existing name (passes do this). */
KILN_MUST_USE_RESULT kiln_status_t kiln_module_set_function(kiln_module_t *module, const char *name,
                                                            kiln_function_t *function);
/* Removes the function of that name (its nodes stay in the arena); NOT_FOUND
 * when there is none. The other functions keep their order. */
KILN_MUST_USE_RESULT kiln_status_t kiln_module_remove_function(kiln_module_t *module,
                                                               const char *name);
/* NULL when there is no function of that name. */
kiln_function_t *kiln_module_get_function(const kiln_module_t *module, const char *name);
int kiln_module_function_count(const kiln_module_t *module);
/* Functions in the order they were added. */
const char *kiln_module_function_name(const kiln_module_t *module, int index);
kiln_function_t *kiln_module_function_at(const kiln_module_t *module, int index);
/* Number of nodes made so far (ids are 0 .. count-1). */
uint32_t kiln_module_node_count(const kiln_module_t *module);

/* ---- constructors: nodes are made in the module's arena ---- */

KILN_MUST_USE_RESULT kiln_status_t kiln_ir_var_create(kiln_module_t *module, const char *name,
                                                      const kiln_type_t *type_annotation,
                                                      kiln_var_t **out_var);
/* The module takes its own reference to `value`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_constant_create(kiln_module_t *module,
                                                           kiln_tensor_t *value,
                                                           kiln_constant_t **out_constant);
/* `attrs` NULL means the operator's defaults. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_call_create(kiln_module_t *module,
                                                       const struct kiln_op_t *op, int num_args,
                                                       kiln_expr_t *const *args, const void *attrs,
                                                       kiln_call_t **out_call);
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_call_function_create(kiln_module_t *module,
                                                                kiln_function_t *callee,
                                                                int num_args,
                                                                kiln_expr_t *const *args,
                                                                kiln_call_t **out_call);
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_tuple_create(kiln_module_t *module, int num_fields,
                                                        kiln_expr_t *const *fields,
                                                        kiln_tuple_t **out_tuple);
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_tuple_get_item_create(kiln_module_t *module,
                                                                 kiln_expr_t *tuple, int index,
                                                                 kiln_tuple_get_item_t **out_item);
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_function_create(kiln_module_t *module, int num_params,
                                                           kiln_var_t *const *params,
                                                           kiln_expr_t *body,
                                                           kiln_function_t **out_function);

#endif /* KILN_IR_EXPR_H_ */
