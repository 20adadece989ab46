/*
 * Instructions (instruction.h) and the three built-in instruction types:
 *
 * - "cpu.call_kernel" on "cpu.compute": runs a kernel-cache entry on the
 *   instruction's input and output tensors (compiled on first use, by the
 *   worker thread; the reference kernel where no code generator applies);
 * - "cpu.copy" on "cpu.copy": copies host bytes staged by the builder, or a
 *   source tensor, into the destination tensor;
 * - "barrier" on "control": front-sequential; calls its callback on the
 *   scheduler thread once everything queued before it is done.
 */
#include <string.h>

#include "eager/instruction.h"
#include "eager/vm.h"
#include "te/te.h"

static kiln_status_t call_kernel_compute(kiln_eager_instruction_t *instruction) {
  kiln_tensor_t *tensors[KILN_TE_MAX_INPUTS + KILN_EAGER_MAX_OUTPUTS];
  int count = instruction->num_operands;
  if (count > (int)(sizeof(tensors) / sizeof(tensors[0]))) {
    return KILN_STATUS(INTERNAL, "%s: %d operands", instruction->payload.call.kernel->op->name,
                       count);
  }
  for (int i = 0; i < count; ++i) {
    tensors[i] = instruction->operands[i].tensor->storage;
  }
  return kiln_kernel_cache_run(instruction->payload.call.cache, instruction->payload.call.kernel,
                               tensors, tensors + instruction->num_inputs);
}

static kiln_status_t copy_compute(kiln_eager_instruction_t *instruction) {
  kiln_eager_operand_t *destination = &instruction->operands[instruction->num_operands - 1];
  void *to = kiln_tensor_data(destination->tensor->storage);
  size_t size = kiln_tensor_byte_size(destination->tensor->storage);
  if (instruction->payload.copy.bytes) {
    memcpy(to, instruction->payload.copy.bytes, size);
  } else {
    memcpy(to, kiln_tensor_data(instruction->operands[0].tensor->storage), size);
  }
  return KILN_OK;
}

static kiln_status_t barrier_compute(kiln_eager_instruction_t *instruction) {
  kiln_status_t status = kiln_eager_vm_cancelling(instruction->vm)
                             ? KILN_STATUS(CANCELLED, "kiln_eager_shutdown: the VM stopped")
                             : KILN_OK;
  instruction->payload.barrier.fn(instruction->payload.barrier.user, status);
  kiln_status_free(status);
  return KILN_OK;
}

const kiln_eager_instruction_type_t kiln_eager_instruction_type_call_kernel = {
    "cpu.call_kernel", "cpu.compute", false, call_kernel_compute};
const kiln_eager_instruction_type_t kiln_eager_instruction_type_copy = {"cpu.copy", "cpu.copy",
                                                                        false, copy_compute};
const kiln_eager_instruction_type_t kiln_eager_instruction_type_barrier = {"barrier", "control",
                                                                           true, barrier_compute};

kiln_status_t kiln_eager_instruction_create(kiln_allocator_t allocator,
                                            const kiln_eager_resolved_t *resolved, int num_operands,
                                            kiln_eager_instruction_t **out_instruction) {
  *out_instruction = NULL;
  size_t size =
      sizeof(kiln_eager_instruction_t) + (size_t)num_operands * sizeof(kiln_eager_operand_t);
  kiln_eager_instruction_t *instruction = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, size, (void **)&instruction));
  instruction->resolved = resolved;
  instruction->allocator = allocator;
  instruction->num_operands = num_operands;
  for (int i = 0; i < num_operands; ++i) {
    instruction->operands[i].instruction = instruction;
  }
  *out_instruction = instruction;
  return KILN_OK;
}

void kiln_eager_instruction_set_operand(kiln_eager_instruction_t *instruction, int index,
                                        kiln_eager_tensor_t *tensor, bool is_write) {
  kiln_eager_operand_t *operand = &instruction->operands[index];
  kiln_eager_tensor_retain(tensor);
  if (is_write) {
    atomic_fetch_add(&tensor->pending_writes, 1);
  }
  operand->tensor = tensor;
  operand->is_write = is_write;
}

void kiln_eager_instruction_destroy(kiln_eager_instruction_t *instruction) {
  for (int i = 0; i < instruction->num_operands; ++i) {
    kiln_eager_operand_t *operand = &instruction->operands[i];
    if (!operand->tensor) {
      continue;
    }
    if (operand->is_write && !instruction->finished) {
      atomic_fetch_sub(&operand->tensor->pending_writes, 1);
    }
    kiln_eager_tensor_release(operand->tensor);
  }
  if (instruction->resolved->type == &kiln_eager_instruction_type_copy) {
    kiln_allocator_free(instruction->allocator, instruction->payload.copy.bytes);
  }
  kiln_status_free(instruction->status);
  kiln_allocator_free(instruction->allocator, instruction);
}
