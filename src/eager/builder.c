/*
 * The instruction builder (builder.h).
 */
#include "eager/builder.h"

#include <string.h>

#include "eager/vm.h"

kiln_status_t kiln_eager_builder_initialize(kiln_eager_builder_t *builder,
                                            kiln_eager_context_t *context, const char *what) {
  builder->list = (kiln_eager_instruction_list_t){NULL, NULL, 0};
  builder->context = context;
  return kiln_eager_context_check(context, what);
}

kiln_status_t kiln_eager_builder_call_kernel(kiln_eager_builder_t *builder,
                                             const kiln_kernel_t *kernel,
                                             kiln_eager_tensor_t *const *inputs,
                                             kiln_eager_tensor_t *const *outputs) {
  kiln_eager_context_t *context = builder->context;
  kiln_eager_instruction_t *instruction = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_eager_instruction_create(context->options.allocator, context->call_kernel,
                                    kernel->num_inputs + kernel->num_outputs, &instruction));
  instruction->payload.call.cache = context->kernel_cache;
  instruction->payload.call.kernel = kernel;
  instruction->num_inputs = kernel->num_inputs;
  for (int i = 0; i < kernel->num_inputs; ++i) {
    kiln_eager_instruction_set_operand(instruction, i, inputs[i], false);
  }
  for (int i = 0; i < kernel->num_outputs; ++i) {
    kiln_eager_instruction_set_operand(instruction, kernel->num_inputs + i, outputs[i], true);
  }
  kiln_eager_instruction_list_push(&builder->list, instruction);
  return KILN_OK;
}

kiln_status_t kiln_eager_builder_copy(kiln_eager_builder_t *builder, kiln_eager_tensor_t *source,
                                      const void *bytes, size_t size,
                                      kiln_eager_tensor_t *destination) {
  kiln_eager_context_t *context = builder->context;
  void *staged = NULL;
  if (!source) {
    KILN_RETURN_IF_ERROR(
        kiln_allocator_malloc(context->options.allocator, size ? size : 1, &staged));
    memcpy(staged, bytes, size);
  }
  kiln_eager_instruction_t *instruction = NULL;
  kiln_status_t status = kiln_eager_instruction_create(context->options.allocator, context->copy,
                                                       source ? 2 : 1, &instruction);
  if (status) {
    kiln_allocator_free(context->options.allocator, staged);
    return status;
  }
  instruction->payload.copy.bytes = staged;
  instruction->payload.copy.size = size;
  instruction->num_inputs = source ? 1 : 0;
  if (source) {
    kiln_eager_instruction_set_operand(instruction, 0, source, false);
  }
  kiln_eager_instruction_set_operand(instruction, instruction->num_inputs, destination, true);
  kiln_eager_instruction_list_push(&builder->list, instruction);
  return KILN_OK;
}

kiln_status_t kiln_eager_builder_barrier(kiln_eager_builder_t *builder, kiln_eager_barrier_fn fn,
                                         void *user) {
  kiln_eager_instruction_t *instruction = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_instruction_create(builder->context->options.allocator,
                                                     builder->context->barrier, 0, &instruction));
  instruction->payload.barrier.fn = fn;
  instruction->payload.barrier.user = user;
  kiln_eager_instruction_list_push(&builder->list, instruction);
  return KILN_OK;
}

void kiln_eager_builder_submit(kiln_eager_builder_t *builder) {
  if (builder->list.head) {
    kiln_eager_vm_receive(builder->context->vm, &builder->list);
  }
}

void kiln_eager_builder_abort(kiln_eager_builder_t *builder) {
  kiln_eager_instruction_t *instruction = NULL;
  while ((instruction = kiln_eager_instruction_list_pop(&builder->list)) != NULL) {
    kiln_eager_instruction_destroy(instruction);
  }
}
