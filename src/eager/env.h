/*
 * The process-wide eager environment (OneFlow's Global<T> objects, set up by
 * EnvGlobalObjectsScope): the stream-type registry, the instruction-type
 * registry, the kernel cache, the VM with its threads, and the resolutions
 * of the built-in instruction types, set up in that order and torn down in
 * the reverse one (env.c lists the steps in one table).
 *
 * The environment is set up lazily by the first call that needs it (or by
 * kiln_eager_initialize) under a mutex, then published through an atomic
 * pointer that every later call reads without a lock. kiln_eager_shutdown
 * (also run at exit) unpublishes it and tears it down; a later call sets a
 * new one up.
 */
#ifndef KILN_EAGER_ENV_H_
#define KILN_EAGER_ENV_H_

#include "compiler/kernel_cache.h"
#include "eager/instruction.h"
#include "eager/instruction_type.h"
#include "eager/stream_type.h"
#include "kiln/eager.h"

struct kiln_eager_vm_t;

typedef struct kiln_eager_env_t {
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
  uint64_t generation; /* distinct for every environment the process sets up */
} kiln_eager_env_t;

/* The environment, set up with the defaults when there is none. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_env_get(kiln_eager_env_t **out_env);

/* The names of the set-up steps, in order ("stream types", ...); for tests. */
int kiln_eager_env_step_count(void);
const char *kiln_eager_env_step_name(int index);

#endif /* KILN_EAGER_ENV_H_ */
