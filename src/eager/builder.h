/*
 * The instruction builder (OneFlow's InstructionsBuilder): makes instruction
 * messages on the caller's thread into a list, then hands the whole list to
 * the VM at once (kiln_eager_builder_submit: vm::Run -> Receive). Each
 * message's type is resolved through the VM's cached lookup when the
 * context is set up, so building costs one allocation and the operands'
 * retains. A builder that is not submitted must be aborted.
 */
#ifndef KILN_EAGER_BUILDER_H_
#define KILN_EAGER_BUILDER_H_

#include "eager/context.h"
#include "eager/instruction.h"

typedef struct kiln_eager_builder_t {
  kiln_eager_context_t *context;
  kiln_eager_instruction_list_t list;
} kiln_eager_builder_t;

/* A builder for `context`'s VM; FAILED_PRECONDITION starting with `what`
 * when the context was destroyed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_builder_initialize(kiln_eager_builder_t *builder,
                                                                 kiln_eager_context_t *context,
                                                                 const char *what);
/* A "cpu.call_kernel" message: `kernel` on `inputs`, writing `outputs`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_builder_call_kernel(
    kiln_eager_builder_t *builder, const kiln_kernel_t *kernel, kiln_eager_tensor_t *const *inputs,
    kiln_eager_tensor_t *const *outputs);
/* A "cpu.copy" message into `destination`: from `source`, or (source NULL)
 * from a copy of `size` bytes of `bytes` made now. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_builder_copy(kiln_eager_builder_t *builder,
                                                           kiln_eager_tensor_t *source,
                                                           const void *bytes, size_t size,
                                                           kiln_eager_tensor_t *destination);
/* A "barrier" message: `fn(user, status)` runs on the scheduler thread once
 * everything queued before it is done. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_builder_barrier(kiln_eager_builder_t *builder,
                                                              kiln_eager_barrier_fn fn, void *user);
/* Hands the list to the VM. */
void kiln_eager_builder_submit(kiln_eager_builder_t *builder);
/* Frees the messages built so far. */
void kiln_eager_builder_abort(kiln_eager_builder_t *builder);

#endif /* KILN_EAGER_BUILDER_H_ */
