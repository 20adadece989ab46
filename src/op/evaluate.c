/*
 * Evaluating one operator call with its reference kernel: the outputs are
 * made from the call's type (a tensor, or a tuple of tensors flattened into
 * outputs, as kiln_kernel_args_t takes them), the kernel runs, and on any
 * error the outputs made so far are released. The importer's constant
 * folding, the fold_constant pass and alter_op_layout's folding of
 * constant weights call this one function, so that they agree on which
 * calls can be evaluated and on what an evaluation gives. The interpreter,
 * the kernel cache and the dyn operators, which run kernels into outputs
 * their callers own, call kiln_op_evaluate_into, which the former runs too:
 * the reference kernel is looked up (op/impl.h) in this file alone.
 */
#include "op/impl.h"

static kiln_status_t add_output(kiln_allocator_t allocator, const kiln_type_t *type,
                                kiln_op_evaluation_t *e) {
  const kiln_tensor_type_t *tensor = kiln_type_as_tensor(type);
  if (!tensor) {
    return KILN_STATUS(UNIMPLEMENTED, "a nested tuple result");
  }
  if (e->count >= KILN_OP_EVALUATE_MAX_TENSORS) {
    return KILN_STATUS(UNIMPLEMENTED, "more than %d outputs", KILN_OP_EVALUATE_MAX_TENSORS);
  }
  KILN_RETURN_IF_ERROR(kiln_tensor_create(allocator, tensor->dtype, tensor->ndim, tensor->shape,
                                          &e->outputs[e->count]));
  e->count++;
  return KILN_OK;
}

static kiln_status_t add_outputs(kiln_allocator_t allocator, const kiln_type_t *type,
                                 kiln_op_evaluation_t *e) {
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  if (!tuple) {
    return add_output(allocator, type, e);
  }
  for (int i = 0; i < tuple->count; ++i) {
    KILN_RETURN_IF_ERROR(add_output(allocator, tuple->fields[i], e));
  }
  return KILN_OK;
}

kiln_status_t kiln_op_evaluate(kiln_allocator_t allocator, const kiln_op_t *op, const void *attrs,
                               int num_inputs, kiln_tensor_t *const *inputs,
                               const kiln_type_t *type, kiln_op_evaluation_t *out_evaluation) {
  out_evaluation->count = 0;
  if (!kiln_op_can_evaluate(op)) {
    return KILN_STATUS(UNIMPLEMENTED, "%s has no reference kernel", op->name);
  }
  kiln_status_t status = add_outputs(allocator, type, out_evaluation);
  if (!status) {
    kiln_kernel_args_t args = {
        op, attrs, num_inputs, inputs, out_evaluation->count, out_evaluation->outputs};
    status = kiln_op_evaluate_into(&args);
  }
  if (status) {
    kiln_op_evaluation_release(out_evaluation);
  }
  return status;
}

kiln_status_t kiln_op_evaluate_into(const kiln_kernel_args_t *args) {
  kiln_op_reference_fn reference = kiln_op_reference_get(args->op->id);
  if (!reference) {
    return KILN_STATUS(UNIMPLEMENTED, "%s has no reference kernel", args->op->name);
  }
  return reference(args);
}

bool kiln_op_can_evaluate(const kiln_op_t *op) {
  return kiln_op_reference_get(op->id) != NULL;
}

void kiln_op_evaluation_release(kiln_op_evaluation_t *evaluation) {
  for (int i = 0; i < evaluation->count; ++i) {
    kiln_tensor_release(evaluation->outputs[i]);
  }
  evaluation->count = 0;
}
