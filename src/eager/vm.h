/*
 * The eager virtual machine (OneFlow's VirtualMachine and its engine).
 *
 * Callers hand it lists of instructions (kiln_eager_vm_receive: one lock,
 * one notify). Its scheduler thread runs kiln_eager_vm_schedule passes: take
 * the instructions the workers finished and release them (dependents whose
 * last wait ended become ready); take the received ones and link each to the
 * earlier instructions on the same tensors (read after write, write after
 * read, write after write) through the tensors' access lists; hand ready ones
 * to their streams (running control-stream ones at once on the scheduler
 * thread). A front-sequential instruction (a barrier) waits at the head of
 * the received list until nothing linked before it is unfinished; nothing
 * behind it is linked before it has run.
 *
 * Instruction type names resolve through a cache (kiln_eager_vm_resolve,
 * GetCachedInstrTypeIdAndPhyInstrStream): the first lookup of a name finds
 * the registered type and the VM's stream of its stream type, later ones
 * return the same resolution.
 *
 * Shutdown (kiln_eager_vm_destroy) sets the VM cancelling: instructions that
 * have not started finish as CANCELLED without running (barriers still call
 * their callbacks, with CANCELLED), running ones complete, then the threads
 * stop. Nothing is left queued, so nothing leaks and nobody waits forever.
 */
#ifndef KILN_EAGER_VM_H_
#define KILN_EAGER_VM_H_

#include "base/hashmap.h"
#include "eager/instruction.h"
#include "eager/scheduler.h"

struct kiln_eager_stream_t {
  const kiln_eager_stream_type_t *type;
  struct kiln_eager_vm_t *vm;
  kiln_eager_queue_t queue; /* ready instructions for the worker */
  kiln_eager_notifier_t wake;
  atomic_bool stop;
  bool running; /* a worker thread was started */
  pthread_t thread;
};

typedef struct kiln_eager_vm_t {
  kiln_allocator_t allocator;
  int spin_count;
  const kiln_eager_instruction_type_registry_t *instruction_types;
  int num_streams;
  kiln_eager_stream_t streams[KILN_EAGER_MAX_STREAM_TYPES];
  pthread_mutex_t resolve_lock;
  kiln_hashmap_t resolved;     /* name -> kiln_eager_resolved_t * */
  kiln_eager_queue_t pending;  /* received from callers */
  kiln_eager_queue_t finished; /* handed back by workers */
  kiln_eager_notifier_t scheduler_wake;
  kiln_eager_notifier_t host_wake; /* callers waiting for tensors or barriers */
  atomic_bool stopping;
  atomic_bool cancelling;
  bool scheduler_running;
  pthread_t scheduler;
  /* scheduler thread only */
  kiln_eager_instruction_list_t backlog; /* received, not linked yet */
  kiln_eager_instruction_list_t ready;
  int64_t live;            /* linked and not finished */
  int64_t sequential_live; /* front-sequential ones among them */
  /* the first run-time error since the last take */
  pthread_mutex_t error_lock;
  kiln_status_t first_error;
  atomic_llong instructions_done;
} kiln_eager_vm_t;

/* Makes the VM (one stream per registered stream type) and starts its
 * threads. The registries must outlive it. spin_count < 0: the default. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_vm_create(
    kiln_allocator_t allocator, const kiln_eager_stream_type_registry_t *stream_types,
    const kiln_eager_instruction_type_registry_t *instruction_types, int spin_count,
    kiln_eager_vm_t **out_vm);
/* Shuts down as described above and frees the VM. NULL is a no-op. */
void kiln_eager_vm_destroy(kiln_eager_vm_t *vm);

/* The cached resolution of instruction type `name` (NOT_FOUND naming it). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_vm_resolve(kiln_eager_vm_t *vm, const char *name,
                                                         const kiln_eager_resolved_t **out);
/* Takes every instruction of `list` (left empty). */
void kiln_eager_vm_receive(kiln_eager_vm_t *vm, kiln_eager_instruction_list_t *list);
/* One scheduling pass (scheduler thread). */
void kiln_eager_vm_schedule(kiln_eager_vm_t *vm);
/* Nothing received, linked or running (scheduler thread). */
bool kiln_eager_vm_idle(const kiln_eager_vm_t *vm);
/* Runs an instruction on the calling thread: its type's compute (or its
 * inputs' failure, or CANCELLED), then stores the outcome on the tensors it
 * writes and wakes waiting callers. Every stream type's compute. */
void kiln_eager_vm_run_instruction(const kiln_eager_stream_type_t *stream_type,
                                   kiln_eager_instruction_t *instruction);
bool kiln_eager_vm_cancelling(const kiln_eager_vm_t *vm);
/* Waits on the calling (host) thread until `ready(context)`. */
void kiln_eager_vm_wait_host(kiln_eager_vm_t *vm, bool (*ready)(void *context), void *context);
/* The first run-time error since the last call, or OK; forgets it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_vm_take_error(kiln_eager_vm_t *vm);

#endif /* KILN_EAGER_VM_H_ */
