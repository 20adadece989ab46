/*
 * Named parameters: the weights that go with a module, as relay.testing's
 * `params` dict, and binding them into a function as constants (Relay's
 * bind_params_by_name).
 *
 * A kiln_params_t is an ordered list of (name, tensor); it holds one
 * reference to each tensor. Workloads return their weights this way; the
 * interpreter and the compiler take the remaining inputs by position.
 */
#ifndef KILN_IR_PARAMS_H_
#define KILN_IR_PARAMS_H_

#include "base/array.h"
#include "ir/expr.h"

typedef struct kiln_params_t {
  kiln_allocator_t allocator;
  kiln_array_t entries; /* kiln_param_entry_t */
} kiln_params_t;

typedef struct kiln_param_entry_t {
  char *name; /* owned */
  kiln_tensor_t *tensor;
} kiln_param_entry_t;

void kiln_params_initialize(kiln_params_t *params, kiln_allocator_t allocator);
/* Releases every tensor. */
void kiln_params_deinitialize(kiln_params_t *params);
/* Takes a new reference to `tensor`; ALREADY_EXISTS when the name is taken. */
KILN_MUST_USE_RESULT kiln_status_t kiln_params_add(kiln_params_t *params, const char *name,
                                                   kiln_tensor_t *tensor);
/* NULL when absent. */
kiln_tensor_t *kiln_params_get(const kiln_params_t *params, const char *name);
size_t kiln_params_count(const kiln_params_t *params);
const kiln_param_entry_t *kiln_params_at(const kiln_params_t *params, size_t index);

/* Replaces the parameters of function `function_name` whose names are in
 * `params` by Constants and sets the module's function to the result (the
 * remaining parameters keep their order). A tensor whose dtype or shape
 * differs from the parameter's annotation is INVALID_ARGUMENT naming both.
 * Types are re-inferred. */
KILN_MUST_USE_RESULT kiln_status_t kiln_ir_bind_params(kiln_module_t *module,
                                                       const char *function_name,
                                                       const kiln_params_t *params);

#endif /* KILN_IR_PARAMS_H_ */
