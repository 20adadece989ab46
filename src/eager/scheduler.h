/*
 * The VM's threads and the two primitives they share.
 *
 * A notifier lets a thread wait for a condition another thread makes true,
 * without a system call on the hot path: the waiter polls the condition for
 * the spin count, then sleeps on a condition variable after saying so in a
 * counter; a notifier, after making the condition true, takes the lock and
 * broadcasts only when someone sleeps. Both sides store then load with
 * sequentially consistent atomics, so one of them sees the other and no
 * wake-up is lost (the scheme of runtime/thread_pool.c).
 *
 * A queue is a mutex-guarded list of instructions with an atomic size, so
 * an empty queue is seen without the lock: callers hand the VM their
 * messages through one (receive), the scheduler hands ready instructions to
 * each stream's worker through one, and workers hand finished instructions
 * back through one. Lists move whole, under one lock each way.
 *
 * The scheduler thread (OneFlow's ScheduleLoop) waits for pending messages
 * or finished instructions and runs one scheduling pass (vm.c) per wake;
 * each worker thread waits for its stream's queue and runs what it finds, in
 * order, handing each instruction back as soon as it is done.
 */
#ifndef KILN_EAGER_SCHEDULER_H_
#define KILN_EAGER_SCHEDULER_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "eager/instruction.h"

typedef struct kiln_eager_notifier_t {
  atomic_int sleepers;
  pthread_mutex_t lock;
  pthread_cond_t cond;
} kiln_eager_notifier_t;

void kiln_eager_notifier_initialize(kiln_eager_notifier_t *notifier);
void kiln_eager_notifier_deinitialize(kiln_eager_notifier_t *notifier);
/* Call after making a waited-for condition true. */
void kiln_eager_notifier_notify(kiln_eager_notifier_t *notifier);
/* Returns once `ready(context)` is true: polls `spin_count` times, then sleeps. */
void kiln_eager_notifier_wait(kiln_eager_notifier_t *notifier, bool (*ready)(void *context),
                              void *context, int spin_count);

typedef struct kiln_eager_queue_t {
  pthread_mutex_t lock;
  kiln_eager_instruction_list_t list;
  atomic_int size;
} kiln_eager_queue_t;

void kiln_eager_queue_initialize(kiln_eager_queue_t *queue);
/* The queue must be empty. */
void kiln_eager_queue_deinitialize(kiln_eager_queue_t *queue);
/* Moves `list` to the end of the queue; true when the queue was empty. */
bool kiln_eager_queue_push_list(kiln_eager_queue_t *queue, kiln_eager_instruction_list_t *list);
void kiln_eager_queue_push(kiln_eager_queue_t *queue, kiln_eager_instruction_t *instruction);
/* Moves everything queued to the end of `out_list`. */
void kiln_eager_queue_take_all(kiln_eager_queue_t *queue, kiln_eager_instruction_list_t *out_list);
bool kiln_eager_queue_empty(kiln_eager_queue_t *queue);

struct kiln_eager_vm_t;

/* Starts the scheduler thread and one worker per stream not run by the
 * scheduler; INTERNAL when a thread cannot start (those started are stopped). */
KILN_MUST_USE_RESULT kiln_status_t kiln_eager_scheduler_start(struct kiln_eager_vm_t *vm);
/* Cancels what has not started, lets the scheduler drain, joins every thread. */
void kiln_eager_scheduler_stop(struct kiln_eager_vm_t *vm);

#endif /* KILN_EAGER_SCHEDULER_H_ */
