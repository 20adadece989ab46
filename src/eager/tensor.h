/*
 * Eager tensor objects (include/kiln/eager.h): a kiln_tensor_t's storage plus
 * what the VM needs to order the instructions that use it.
 *
 * A tensor belongs to the context it was made in (retained), whose VM
 * orders its instructions, or (context NULL) to the process default
 * context, whichever is current (context.h); a call mixing tensors of two
 * contexts is refused. Reference counts are atomic: the caller holds one, every queued
 * instruction that reads or writes the tensor holds one, so releasing a
 * tensor still in use only drops the caller's. `pending_writes` counts the
 * queued instructions that write the tensor and have not finished: the
 * caller increments it when it queues such an instruction, the worker
 * decrements it (release order) once the instruction's outcome is stored,
 * and a read waits (acquire) until it is zero. `failure` is the error of
 * the tensor's last writer, or NULL; it is written by that writer's thread
 * and read by later instructions (ordered after it by the VM) and by
 * readers on the caller's side after the wait.
 *
 * The access state (OneFlow's mirrored-object access list) belongs to the
 * scheduler thread alone: the last write still unfinished, and the reads
 * queued since it that are unfinished. See vm.c for how instructions are
 * linked through it.
 */
#ifndef KILN_EAGER_TENSOR_H_
#define KILN_EAGER_TENSOR_H_

#include <stdatomic.h>

#include "kiln/eager.h"

typedef struct kiln_eager_operand_t kiln_eager_operand_t;

struct kiln_eager_tensor_t {
  atomic_int refs;
  atomic_int pending_writes;
  kiln_allocator_t allocator;           /* the context's */
  struct kiln_eager_context_t *context; /* retained; NULL: the default one */
  kiln_tensor_t *storage;
  kiln_status_t failure; /* see above */
  /* scheduler thread only */
  kiln_eager_operand_t *last_write;
  kiln_eager_operand_t *reads_since; /* doubly linked through the operands */
};

/* A tensor of `context` over `storage` (retained), with a reference count
 * of one. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_create(kiln_eager_context_t *context,
                                                            kiln_tensor_t *storage,
                                                            kiln_eager_tensor_t **out_tensor);
/* A new zero-filled tensor of `context` of that dtype and shape. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_create_empty(kiln_eager_context_t *context,
                                                                  kiln_dtype_t dtype, int ndim,
                                                                  const int64_t *shape,
                                                                  kiln_eager_tensor_t **out_tensor);
/* Stores the outcome of a write (a copy of `status`'s code and message, or
 * none), then ends the write: pending_writes drops by one. */
void kiln_eager_tensor_finish_write(kiln_eager_tensor_t *tensor, kiln_status_t status);
/* A new status repeating the tensor's failure, or OK. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_tensor_failure(const kiln_eager_tensor_t *tensor);

#endif /* KILN_EAGER_TENSOR_H_ */
