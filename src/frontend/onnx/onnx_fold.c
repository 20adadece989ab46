/*
 * Constant folding at import: a call whose arguments are all Constants is
 * run once with its operator's reference kernel and replaced by its result.
 *
 * The call is already typed, so kiln_op_evaluate (op/evaluate.c, the one
 * evaluation fold_constant shares) makes its outputs from the checked type
 * (a tuple type, as split's, gives one tensor per field, in order, as the
 * kernel interface flattens it) and the kernel fills them. A call typed
 * with symbolic dims (its output shape depends on values: dyn operators,
 * nonzero, unique) takes its type from the operator's shape function on
 * the Constants, as the interpreter does; without one it is left as it is. A tensor
 * result becomes a Constant; a tuple result becomes a Tuple of Constants,
 * which kiln_onnx_tuple_item sees through. A kernel that does not handle
 * the dtypes (UNIMPLEMENTED) leaves the call as it is, to be run later by
 * whatever executes the module; any other kernel error (an index out of
 * range in a shape computation) is the model's and is returned. An integer
 * division by zero folds to 0, as compiled code computes it
 * (base/scalar_ops.h). A call typed with symbolic dims folds only when its
 * operator has a shape function, which gives the outputs' type from the
 * constant inputs.
 */
#include <stdint.h>

#include "frontend/onnx/onnx_importer.h"
#include "ir/type.h"

/* The Constant (or Tuple of Constants) of the computed outputs. */
static kiln_status_t kiln_onnx_fold_result(kiln_onnx_importer_t *importer, const kiln_type_t *type,
                                           kiln_tensor_t *const *outputs, int count,
                                           kiln_expr_t **out_expr) {
  if (kiln_type_as_tensor(type)) {
    return kiln_onnx_constant(importer, outputs[0], out_expr);
  }
  kiln_expr_t *fields[KILN_OP_EVALUATE_MAX_TENSORS];
  for (int i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_constant(importer, outputs[i], &fields[i]));
  }
  kiln_tuple_t *tuple = NULL;
  KILN_RETURN_IF_ERROR(kiln_ir_tuple_create(importer->module, count, fields, &tuple));
  tuple->base.checked_type = type;
  *out_expr = &tuple->base;
  return KILN_OK;
}

/* The bytes of every tensor of `type`; SIZE_MAX when they overflow. */
static size_t kiln_onnx_fold_bytes(const kiln_type_t *type) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  size_t bytes = 0;
  if (tensor) {
    return kiln_shape_byte_size(tensor->dtype, tensor->ndim, tensor->shape, &bytes) == KILN_OK
               ? bytes
               : SIZE_MAX;
  }
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  for (int i = 0; tuple && i < tuple->count; ++i) {
    size_t field = kiln_onnx_fold_bytes(tuple->fields[i]);
    bytes = field > SIZE_MAX - bytes ? SIZE_MAX : bytes + field;
  }
  return bytes;
}

/* The folded result must stay within the import's constant cap. */
static kiln_status_t kiln_onnx_fold_check_size(const kiln_onnx_importer_t *importer,
                                               const kiln_call_t *call, const kiln_type_t *type) {
  char text[KILN_IR_TYPE_TEXT_CAPACITY];
  return kiln_onnx_check_constant_size(importer, call->op->name, kiln_type_text(type, text),
                                       kiln_onnx_fold_bytes(type));
}

/* The type of the folded result: the call's, or, when that has symbolic
 * dims (an output shape that depends on values), what the operator's shape
 * function gives for these inputs; NULL when it has none. */
static kiln_status_t kiln_onnx_fold_type(kiln_onnx_importer_t *importer, const kiln_call_t *call,
                                         kiln_tensor_t *const *inputs,
                                         const kiln_type_t **out_type) {
  *out_type = call->base.checked_type;
  if (kiln_type_is_static(*out_type)) {
    return KILN_OK;
  }
  *out_type = NULL;
  if (!call->op->shape_func) {
    return KILN_OK;
  }
  kiln_shape_func_args_t args = {call->op, call->attrs, call->num_args, inputs, importer->arena};
  return call->op->shape_func(&args, out_type);
}

kiln_status_t kiln_onnx_fold(kiln_onnx_importer_t *importer, kiln_call_t *call,
                             kiln_expr_t **out_expr) {
  *out_expr = &call->base;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(call->base.checked_type);
  for (int i = 0; tuple && i < tuple->count; ++i) {
    if (!kiln_type_as_tensor(tuple->fields[i])) {
      return KILN_OK; /* nested tuples are left to the executor */
    }
  }
  kiln_tensor_t *inputs[KILN_OP_EVALUATE_MAX_TENSORS];
  if (call->num_args > KILN_OP_EVALUATE_MAX_TENSORS || !kiln_op_can_evaluate(call->op)) {
    return KILN_OK;
  }
  for (int i = 0; i < call->num_args; ++i) {
    inputs[i] = kiln_expr_as_constant(call->args[i])->value;
  }
  const kiln_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_fold_type(importer, call, inputs, &type));
  if (!type) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_fold_check_size(importer, call, type));
  kiln_op_evaluation_t e;
  kiln_status_t status = kiln_op_evaluate(importer->allocator, call->op, call->attrs,
                                          call->num_args, inputs, type, &e);
  if (!status) {
    status = kiln_onnx_fold_result(importer, type, e.outputs, e.count, out_expr);
    kiln_op_evaluation_release(&e);
  }
  if (kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
    kiln_status_free(status);
    *out_expr = &call->base;
    return KILN_OK;
  }
  return status;
}
