/*
 * The VM's threads: the notifier and queue primitives and the scheduler and
 * worker loops (scheduler.h has the design).
 */
#define _POSIX_C_SOURCE 200809L

#include "eager/scheduler.h"

#include "base/log.h"
#include "eager/vm.h"

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ---- notifier ---- */

void kiln_eager_notifier_initialize(kiln_eager_notifier_t *notifier) {
  atomic_init(&notifier->sleepers, 0);
  pthread_mutex_init(&notifier->lock, NULL);
  pthread_cond_init(&notifier->cond, NULL);
}

void kiln_eager_notifier_deinitialize(kiln_eager_notifier_t *notifier) {
  pthread_cond_destroy(&notifier->cond);
  pthread_mutex_destroy(&notifier->lock);
}

void kiln_eager_notifier_notify(kiln_eager_notifier_t *notifier) {
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load(&notifier->sleepers) > 0) {
    pthread_mutex_lock(&notifier->lock);
    pthread_cond_broadcast(&notifier->cond);
    pthread_mutex_unlock(&notifier->lock);
  }
}

void kiln_eager_notifier_wait(kiln_eager_notifier_t *notifier, bool (*ready)(void *context),
                              void *context, int spin_count) {
  for (int i = 0; i < spin_count; ++i) {
    if (ready(context)) {
      return;
    }
    cpu_relax();
  }
  pthread_mutex_lock(&notifier->lock);
  atomic_fetch_add(&notifier->sleepers, 1);
  while (!ready(context)) {
    pthread_cond_wait(&notifier->cond, &notifier->lock);
  }
  atomic_fetch_sub(&notifier->sleepers, 1);
  pthread_mutex_unlock(&notifier->lock);
}

/* ---- queue ---- */

void kiln_eager_queue_initialize(kiln_eager_queue_t *queue) {
  pthread_mutex_init(&queue->lock, NULL);
  queue->list = (kiln_eager_instruction_list_t){NULL, NULL, 0};
  atomic_init(&queue->size, 0);
}

void kiln_eager_queue_deinitialize(kiln_eager_queue_t *queue) {
  pthread_mutex_destroy(&queue->lock);
}

bool kiln_eager_queue_push_list(kiln_eager_queue_t *queue, kiln_eager_instruction_list_t *list) {
  int count = list->count;
  pthread_mutex_lock(&queue->lock);
  bool was_empty = queue->list.count == 0;
  kiln_eager_instruction_list_move(&queue->list, list);
  atomic_fetch_add(&queue->size, count);
  pthread_mutex_unlock(&queue->lock);
  return was_empty;
}

void kiln_eager_queue_push(kiln_eager_queue_t *queue, kiln_eager_instruction_t *instruction) {
  pthread_mutex_lock(&queue->lock);
  kiln_eager_instruction_list_push(&queue->list, instruction);
  atomic_fetch_add(&queue->size, 1);
  pthread_mutex_unlock(&queue->lock);
}

void kiln_eager_queue_take_all(kiln_eager_queue_t *queue, kiln_eager_instruction_list_t *out_list) {
  if (atomic_load(&queue->size) == 0) {
    return;
  }
  pthread_mutex_lock(&queue->lock);
  atomic_fetch_sub(&queue->size, queue->list.count);
  kiln_eager_instruction_list_move(out_list, &queue->list);
  pthread_mutex_unlock(&queue->lock);
}

bool kiln_eager_queue_empty(kiln_eager_queue_t *queue) {
  return atomic_load(&queue->size) == 0;
}

/* ---- the worker of a stream ---- */

static bool stream_has_work(void *context) {
  kiln_eager_stream_t *stream = context;
  return !kiln_eager_queue_empty(&stream->queue) || atomic_load(&stream->stop);
}

static void *worker_main(void *arg) {
  kiln_eager_stream_t *stream = arg;
  kiln_eager_vm_t *vm = stream->vm;
  for (;;) {
    kiln_eager_notifier_wait(&stream->wake, stream_has_work, stream, vm->spin_count);
    kiln_eager_instruction_list_t list = {NULL, NULL, 0};
    kiln_eager_queue_take_all(&stream->queue, &list);
    if (!list.head && atomic_load(&stream->stop)) {
      return NULL;
    }
    kiln_eager_instruction_t *instruction = NULL;
    while ((instruction = kiln_eager_instruction_list_pop(&list)) != NULL) {
      stream->type->compute(stream->type, instruction);
      kiln_eager_queue_push(&vm->finished, instruction);
      kiln_eager_notifier_notify(&vm->scheduler_wake);
    }
  }
}

/* ---- the scheduler ---- */

static bool scheduler_has_work(void *context) {
  kiln_eager_vm_t *vm = context;
  return !kiln_eager_queue_empty(&vm->pending) || !kiln_eager_queue_empty(&vm->finished) ||
         (atomic_load(&vm->stopping) && kiln_eager_vm_idle(vm));
}

static void *scheduler_main(void *arg) {
  kiln_eager_vm_t *vm = arg;
  for (;;) {
    kiln_eager_notifier_wait(&vm->scheduler_wake, scheduler_has_work, vm, vm->spin_count);
    kiln_eager_vm_schedule(vm);
    if (atomic_load(&vm->stopping) && kiln_eager_vm_idle(vm) &&
        kiln_eager_queue_empty(&vm->pending)) {
      return NULL;
    }
  }
}

static void stop_workers(kiln_eager_vm_t *vm) {
  for (int i = 0; i < vm->num_streams; ++i) {
    kiln_eager_stream_t *stream = &vm->streams[i];
    if (stream->running) {
      atomic_store(&stream->stop, true);
      kiln_eager_notifier_notify(&stream->wake);
      pthread_join(stream->thread, NULL);
      stream->running = false;
    }
  }
}

kiln_status_t kiln_eager_scheduler_start(kiln_eager_vm_t *vm) {
  for (int i = 0; i < vm->num_streams; ++i) {
    kiln_eager_stream_t *stream = &vm->streams[i];
    if (stream->type->on_scheduler_thread) {
      continue;
    }
    if (pthread_create(&stream->thread, NULL, worker_main, stream) != 0) {
      stop_workers(vm);
      return KILN_STATUS(INTERNAL, "eager VM: cannot start the worker of stream %s",
                         stream->type->name);
    }
    stream->running = true;
  }
  if (pthread_create(&vm->scheduler, NULL, scheduler_main, vm) != 0) {
    stop_workers(vm);
    return KILN_STATUS(INTERNAL, "eager VM: cannot start the scheduler thread");
  }
  vm->scheduler_running = true;
  return KILN_OK;
}

void kiln_eager_scheduler_stop(kiln_eager_vm_t *vm) {
  atomic_store(&vm->cancelling, true);
  atomic_store(&vm->stopping, true);
  if (vm->scheduler_running) {
    kiln_eager_notifier_notify(&vm->scheduler_wake);
    pthread_join(vm->scheduler, NULL);
    vm->scheduler_running = false;
  }
  stop_workers(vm);
}
