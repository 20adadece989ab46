/*
 * Eager contexts (kiln_eager_context_t, include/kiln/eager.h): everything
 * eager execution needs, owned by one object (OneFlow's Global<T> objects,
 * set up by EnvGlobalObjectsScope, made explicit): the stream-type registry,
 * the instruction-type registry, the kernel cache, the VM with its threads
 * (and its spin setting), and the resolutions of the built-in instruction
 * types, set up in that order and torn down in the reverse one (context.c
 * lists the steps in one table). Two contexts share nothing but the
 * process's kernel store (compiled code, immutable) and the thread pool
 * their kernels launch on.
 *
 * A context is reference counted: its creator holds one reference and
 * every tensor made in it holds one, so kiln_eager_context_destroy tears
 * the VM and the rest down at once (cancelling what has not started) while
 * the small object itself lives until its last tensor is released; such a
 * tensor stays readable, and a call on it is FAILED_PRECONDITION.
 *
 * Tensors of the default context are bound to "the default" (their
 * context is NULL), not to one object, as they were before contexts
 * existed: after kiln_eager_shutdown they go on with the next default
 * context (shutdown drains every instruction, so no access state is left
 * on them).
 *
 * The process default context is set up lazily by the first call that
 * needs it (or by kiln_eager_initialize) under a mutex, then published
 * through an atomic pointer that every later call reads without a lock.
 * kiln_eager_shutdown (also run at exit) unpublishes and destroys it; a
 * later call sets a new one up.
 */
#ifndef KILN_EAGER_CONTEXT_H_
#define KILN_EAGER_CONTEXT_H_

#include <stdatomic.h>

#include "compiler/kernel_cache.h"
#include "eager/instruction.h"
#include "eager/instruction_type.h"
#include "eager/stream_type.h"
#include "kiln/eager.h"

struct kiln_eager_vm_t;

struct kiln_eager_context_t {
  atomic_int refs;              /* the creator's, and one per tensor */
  atomic_bool torn_down;        /* destroyed: the steps below are undone */
  bool is_default;              /* the process default (set before it is published) */
  kiln_eager_options_t options; /* target points at target_copy */
  char *target_copy;
  kiln_eager_stream_type_registry_t stream_types;
  kiln_eager_instruction_type_registry_t instruction_types;
  kiln_kernel_cache_t *kernel_cache;
  struct kiln_eager_vm_t *vm;
  const kiln_eager_resolved_t *call_kernel;
  const kiln_eager_resolved_t *copy;
  const kiln_eager_resolved_t *barrier;
  int steps_done;      /* how many set-up steps ran */
  uint64_t generation; /* distinct for every context the process sets up */
};

/* OK while `context` is alive; FAILED_PRECONDITION naming `what` once it
 * was destroyed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_check(const kiln_eager_context_t *context,
                                                            const char *what);
/* The context a tensor's work runs in: its own, or (NULL) the current
 * default, set up if needed. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_context_of(kiln_eager_context_t *bound,
                                                         kiln_eager_context_t **out_context);
/* A reference for a tensor made in the context. */
void kiln_eager_context_retain(kiln_eager_context_t *context);
/* Drops a reference; the last one frees the object. */
void kiln_eager_context_release(kiln_eager_context_t *context);

/* The names of the set-up steps, in order ("stream types", ...); for tests. */
int kiln_eager_context_step_count(void);
const char *kiln_eager_context_step_name(int index);

#endif /* KILN_EAGER_CONTEXT_H_ */
