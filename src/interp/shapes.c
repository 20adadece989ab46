/*
 * Run-time shapes in the reference interpreter; see shapes.h.
 *
 * A module with symbolic dims runs with the sizes its inputs bring. An
 * input fits its parameter when every static dim matches, every symbolic
 * dim is within its upper bound, and a named variable has one size across
 * all inputs. A call whose checked type (or an argument's) is not static
 * gets its concrete output type when it runs: an operator whose output
 * shape depends on input values declares a shape function in its
 * definition (op.h) and gets the tensors themselves; for every other
 * operator the output shape depends on input shapes alone, so its type
 * relation, run on the inputs' concrete types, is its shape function. The
 * concrete type must then agree with what inference said at import (same
 * structure, dtypes and ranks, equal static dims, symbolic dims within
 * their bounds), so a kernel never writes a tensor of a shape the rest of
 * the graph did not expect, and a relation the probe typed too
 * optimistically (op/symbolic.c) is caught with both types in the message.
 */
#include "interp/shapes.h"

#include <string.h>

#include "op/op.h"

static bool dim_fits(kiln_interp_bindings_t *bindings, const kiln_dim_var_t *var, int64_t size) {
  if (var->upper_bound >= 0 && size > var->upper_bound) {
    return false;
  }
  if (!var->name[0]) {
    return true;
  }
  for (int k = 0; k < bindings->count; ++k) {
    if (strcmp(bindings->names[k], var->name) == 0) {
      return bindings->sizes[k] == size;
    }
  }
  if (bindings->count == KILN_INTERP_MAX_BINDINGS) {
    return false;
  }
  bindings->names[bindings->count] = var->name;
  bindings->sizes[bindings->count++] = size;
  return true;
}

bool kiln_interp_tensor_fits(kiln_interp_bindings_t *bindings, const kiln_tensor_type_t *type,
                             const kiln_tensor_t *tensor) {
  if (type->dtype != kiln_tensor_dtype(tensor) || type->ndim != kiln_tensor_ndim(tensor)) {
    return false;
  }
  const int64_t *shape = kiln_tensor_shape(tensor);
  for (int d = 0; d < type->ndim; ++d) {
    const kiln_dim_var_t *var = type->vars ? type->vars[d] : NULL;
    bool fits = var ? dim_fits(bindings, var, shape[d]) : shape[d] == type->shape[d];
    if (!fits) {
      return false;
    }
  }
  return true;
}

bool kiln_interp_call_is_dynamic(const kiln_call_t *call) {
  if (!kiln_type_is_static(call->base.checked_type)) {
    return true;
  }
  for (int k = 0; k < call->num_args; ++k) {
    if (!kiln_type_is_static(call->args[k]->checked_type)) {
      return true;
    }
  }
  return false;
}

static bool tensor_agrees(const kiln_tensor_type_t *checked, const kiln_tensor_type_t *concrete) {
  if (checked->dtype != concrete->dtype || checked->ndim != concrete->ndim) {
    return false;
  }
  for (int d = 0; d < checked->ndim; ++d) {
    const kiln_dim_var_t *var = checked->vars ? checked->vars[d] : NULL;
    int64_t size = concrete->shape[d];
    bool fits = var ? var->upper_bound < 0 || size <= var->upper_bound : size == checked->shape[d];
    if (!fits) {
      return false;
    }
  }
  return true;
}

static bool type_agrees(const kiln_type_t *checked, const kiln_type_t *concrete) {
  const kiln_tensor_type_t *tc = kiln_type_as_tensor(checked);
  if (tc) {
    return kiln_type_as_tensor(concrete) && tensor_agrees(tc, kiln_type_as_tensor(concrete));
  }
  const kiln_tuple_type_t *uc = kiln_type_as_tuple(checked);
  const kiln_tuple_type_t *un = kiln_type_as_tuple(concrete);
  if (!uc || !un || uc->count != un->count) {
    return false;
  }
  for (int i = 0; i < uc->count; ++i) {
    if (!type_agrees(uc->fields[i], un->fields[i])) {
      return false;
    }
  }
  return true;
}

/* The type relation on the concrete types of `inputs`. */
static kiln_status_t relation_type(kiln_arena_t *arena, const kiln_call_t *call,
                                   kiln_tensor_t *const *inputs, const kiln_type_t **out_type) {
  const kiln_type_t **types = NULL;
  size_t count = call->num_args > 0 ? (size_t)call->num_args : 1;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate(arena, count * sizeof(*types), _Alignof(kiln_type_t *), (void **)&types));
  for (int k = 0; k < call->num_args; ++k) {
    KILN_RETURN_IF_ERROR(kiln_tensor_type_of(arena, inputs[k], &types[k]));
  }
  return kiln_op_infer_type(call->op, call->attrs, call->num_args, types, arena, out_type);
}

kiln_status_t kiln_interp_call_type(kiln_arena_t *arena, const kiln_call_t *call,
                                    kiln_tensor_t *const *inputs, bool check,
                                    const kiln_type_t **out_type) {
  *out_type = NULL;
  const kiln_type_t *concrete = NULL;
  if (call->op->shape_func) {
    kiln_shape_func_args_t args = {.op = call->op,
                                   .attrs = call->attrs,
                                   .num_inputs = call->num_args,
                                   .inputs = inputs,
                                   .arena = arena};
    KILN_RETURN_IF_ERROR(call->op->shape_func(&args, &concrete));
  } else {
    KILN_RETURN_IF_ERROR(relation_type(arena, call, inputs, &concrete));
  }
  if (check && !type_agrees(call->base.checked_type, concrete)) {
    char checked_text[KILN_IR_TYPE_TEXT_CAPACITY];
    char concrete_text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the inputs give the output %s but it was typed %s",
                       call->op->name, kiln_type_text(concrete, concrete_text),
                       kiln_type_text(call->base.checked_type, checked_text));
  }
  *out_type = concrete;
  return KILN_OK;
}
