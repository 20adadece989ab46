/*
 * The eager VM's engine (vm.h): receive, the scheduling pass, dependency
 * linking through the tensors' access lists, dispatch, and running one
 * instruction.
 *
 * Linking (OneFlow's ConsumeMirroredObjects) keeps, per tensor, its last
 * unfinished write and the unfinished reads queued since. A read waits for
 * that write (it joins the write's raw_waiters). A write waits for that
 * write and for each of those reads (it becomes their write_waiter), then
 * becomes the tensor's last write with no reads since. Every access waits
 * for at most one later write, so one pointer per operand holds every edge
 * and linking allocates nothing. When an instruction finishes, each of its
 * operands lets its waiters go (their `remaining` drops; at zero they are
 * ready) and leaves the tensor's access list.
 *
 * Prescheduling (OneFlow's DispatchAndPrescheduleInstructions): a worker
 * runs its stream's queue in order, so an instruction that waits only for
 * instructions already handed to the same worker stream may be handed to it
 * at once, behind them. An edge between two instructions of one worker
 * stream is therefore let go when the earlier one is dispatched, not when it
 * finishes (and is not counted at all when the earlier one was dispatched
 * before the later one was linked). A chain of operations on one stream
 * then flows to its worker without a round trip through the scheduler per
 * operation.
 */
#define _POSIX_C_SOURCE 200809L

#include "eager/vm.h"

#include <string.h>

#define DEFAULT_SPIN_COUNT 4000

/* ---- creating, resolving, receiving ---- */

kiln_status_t kiln_eager_vm_create(kiln_allocator_t allocator,
                                   const kiln_eager_stream_type_registry_t *stream_types,
                                   const kiln_eager_instruction_type_registry_t *instruction_types,
                                   int spin_count, kiln_eager_vm_t **out_vm) {
  *out_vm = NULL;
  kiln_eager_vm_t *vm = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_zeroed(allocator, sizeof(*vm), (void **)&vm));
  vm->allocator = allocator;
  vm->spin_count = spin_count < 0 ? DEFAULT_SPIN_COUNT : spin_count;
  vm->instruction_types = instruction_types;
  vm->num_streams = stream_types->count;
  for (int i = 0; i < stream_types->count; ++i) {
    kiln_eager_stream_t *stream = &vm->streams[i];
    stream->type = stream_types->types[i];
    stream->vm = vm;
    kiln_eager_queue_initialize(&stream->queue);
    kiln_eager_notifier_initialize(&stream->wake);
    atomic_init(&stream->stop, false);
  }
  pthread_mutex_init(&vm->resolve_lock, NULL);
  kiln_hashmap_initialize(&vm->resolved, allocator, KILN_HASHMAP_KEY_STRING);
  kiln_eager_queue_initialize(&vm->pending);
  kiln_eager_queue_initialize(&vm->finished);
  kiln_eager_notifier_initialize(&vm->scheduler_wake);
  kiln_eager_notifier_initialize(&vm->host_wake);
  pthread_mutex_init(&vm->error_lock, NULL);
  atomic_init(&vm->stopping, false);
  atomic_init(&vm->cancelling, false);
  atomic_init(&vm->instructions_done, 0);
  kiln_status_t status = kiln_eager_scheduler_start(vm);
  if (status) {
    kiln_eager_vm_destroy(vm);
    return status;
  }
  *out_vm = vm;
  return KILN_OK;
}

void kiln_eager_vm_destroy(kiln_eager_vm_t *vm) {
  if (!vm) {
    return;
  }
  kiln_eager_scheduler_stop(vm);
  kiln_hashmap_iterator_t it;
  kiln_hashmap_iterator_initialize(&it, &vm->resolved);
  const void *key = NULL;
  void *value = NULL;
  while (kiln_hashmap_iterator_next(&it, &key, &value)) {
    kiln_allocator_free(vm->allocator, value);
  }
  kiln_hashmap_deinitialize(&vm->resolved);
  for (int i = 0; i < vm->num_streams; ++i) {
    kiln_eager_queue_deinitialize(&vm->streams[i].queue);
    kiln_eager_notifier_deinitialize(&vm->streams[i].wake);
  }
  pthread_mutex_destroy(&vm->resolve_lock);
  kiln_eager_queue_deinitialize(&vm->pending);
  kiln_eager_queue_deinitialize(&vm->finished);
  kiln_eager_notifier_deinitialize(&vm->scheduler_wake);
  kiln_eager_notifier_deinitialize(&vm->host_wake);
  pthread_mutex_destroy(&vm->error_lock);
  kiln_status_free(vm->first_error);
  kiln_allocator_free(vm->allocator, vm);
}

static kiln_eager_stream_t *stream_of_type(kiln_eager_vm_t *vm,
                                           const kiln_eager_stream_type_t *type) {
  for (int i = 0; i < vm->num_streams; ++i) {
    if (vm->streams[i].type == type) {
      return &vm->streams[i];
    }
  }
  return NULL;
}

/* Under resolve_lock: resolves `name` and caches the resolution. */
static kiln_status_t resolve_uncached(kiln_eager_vm_t *vm, const char *name,
                                      kiln_eager_resolved_t **out) {
  const kiln_eager_instruction_type_id_t *id = NULL;
  KILN_RETURN_IF_ERROR(kiln_eager_instruction_type_find(vm->instruction_types, name, &id));
  kiln_eager_stream_t *stream = stream_of_type(vm, id->stream_type);
  if (!stream) {
    return KILN_STATUS(NOT_FOUND, "instruction type \"%s\": the VM has no stream of type \"%s\"",
                       name, id->stream_type->name);
  }
  kiln_eager_resolved_t *resolved = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(vm->allocator, sizeof(*resolved), (void **)&resolved));
  *resolved = (kiln_eager_resolved_t){id->type, id->stream_type, stream};
  kiln_status_t status = kiln_hashmap_put(&vm->resolved, name, resolved);
  if (status) {
    kiln_allocator_free(vm->allocator, resolved);
    return status;
  }
  *out = resolved;
  return KILN_OK;
}

kiln_status_t kiln_eager_vm_resolve(kiln_eager_vm_t *vm, const char *name,
                                    const kiln_eager_resolved_t **out) {
  pthread_mutex_lock(&vm->resolve_lock);
  void *found = NULL;
  kiln_status_t status = KILN_OK;
  if (!kiln_hashmap_get(&vm->resolved, name, &found)) {
    kiln_eager_resolved_t *resolved = NULL;
    status = resolve_uncached(vm, name, &resolved);
    found = resolved;
  }
  pthread_mutex_unlock(&vm->resolve_lock);
  *out = found;
  return status;
}

void kiln_eager_vm_receive(kiln_eager_vm_t *vm, kiln_eager_instruction_list_t *list) {
  for (kiln_eager_instruction_t *i = list->head; i; i = i->next) {
    i->vm = vm;
  }
  kiln_eager_queue_push_list(&vm->pending, list);
  kiln_eager_notifier_notify(&vm->scheduler_wake);
}

bool kiln_eager_vm_cancelling(const kiln_eager_vm_t *vm) {
  return atomic_load(&vm->cancelling);
}

void kiln_eager_vm_wait_host(kiln_eager_vm_t *vm, bool (*ready)(void *context), void *context) {
  kiln_eager_notifier_wait(&vm->host_wake, ready, context, vm->spin_count);
}

kiln_status_t kiln_eager_vm_take_error(kiln_eager_vm_t *vm) {
  pthread_mutex_lock(&vm->error_lock);
  kiln_status_t error = vm->first_error;
  vm->first_error = NULL;
  pthread_mutex_unlock(&vm->error_lock);
  return error;
}

/* ---- running one instruction (a worker, or the scheduler for control) ---- */

static kiln_status_t copy_status(kiln_status_t status) {
  return kiln_status_make(kiln_status_code(status), kiln_status_file(status),
                          kiln_status_line(status), "%s", kiln_status_message(status));
}

static void record_error(kiln_eager_vm_t *vm, kiln_status_t status) {
  pthread_mutex_lock(&vm->error_lock);
  if (!vm->first_error) {
    vm->first_error = copy_status(status);
  }
  pthread_mutex_unlock(&vm->error_lock);
}

/* The first failed input's error, or OK. */
static kiln_status_t failed_input(const kiln_eager_instruction_t *instruction) {
  for (int i = 0; i < instruction->num_inputs; ++i) {
    kiln_status_t failure = kiln_eager_tensor_failure(instruction->operands[i].tensor);
    if (failure) {
      return failure;
    }
  }
  return KILN_OK;
}

static kiln_status_t cancelled(const kiln_eager_instruction_t *instruction) {
  const kiln_eager_instruction_type_t *type = instruction->resolved->type;
  const char *name = type == &kiln_eager_instruction_type_call_kernel
                         ? instruction->payload.call.kernel->op->name
                         : type->name;
  return KILN_STATUS(
      CANCELLED,
      "%s: cancelled by kiln_eager_shutdown (or kiln_eager_context_destroy) before it ran", name);
}

void kiln_eager_vm_run_instruction(const kiln_eager_stream_type_t *stream_type,
                                   kiln_eager_instruction_t *instruction) {
  (void)stream_type;
  kiln_eager_vm_t *vm = instruction->vm;
  const kiln_eager_instruction_type_t *type = instruction->resolved->type;
  kiln_status_t status = KILN_OK;
  if (atomic_load(&vm->cancelling) && !type->front_sequential) {
    status = cancelled(instruction);
  } else {
    status = failed_input(instruction);
    if (!status) {
      status = type->compute(instruction);
    }
  }
  if (status && kiln_status_code(status) != KILN_STATUS_CODE_CANCELLED) {
    record_error(vm, status);
  }
  instruction->status = status;
  for (int i = instruction->num_inputs; i < instruction->num_operands; ++i) {
    kiln_eager_tensor_finish_write(instruction->operands[i].tensor, status);
  }
  instruction->finished = true;
  atomic_fetch_add(&vm->instructions_done, 1);
  kiln_eager_notifier_notify(&vm->host_wake);
}

/* ---- linking (scheduler thread) ---- */

/* Whether `later` is ordered after `earlier` by their stream alone. */
static bool ordered_by_stream(const kiln_eager_instruction_t *earlier,
                              const kiln_eager_instruction_t *later) {
  return earlier->resolved->stream == later->resolved->stream &&
         !earlier->resolved->stream_type->on_scheduler_thread;
}

/* `waiter` waits for `earlier` unless the stream already orders them. */
static void wait_for(kiln_eager_instruction_t *waiter, const kiln_eager_instruction_t *earlier) {
  if (!(earlier->dispatched && ordered_by_stream(earlier, waiter))) {
    waiter->remaining++;
  }
}

static void unlink_read(kiln_eager_operand_t *read) {
  kiln_eager_tensor_t *tensor = read->tensor;
  if (read->prev_read) {
    read->prev_read->next_read = read->next_read;
  } else {
    tensor->reads_since = read->next_read;
  }
  if (read->next_read) {
    read->next_read->prev_read = read->prev_read;
  }
  read->prev_read = read->next_read = NULL;
  read->in_reads_since = false;
}

static void link_read(kiln_eager_operand_t *read) {
  kiln_eager_tensor_t *tensor = read->tensor;
  kiln_eager_operand_t *write = tensor->last_write;
  if (write) {
    read->next_raw_waiter = write->raw_waiters;
    write->raw_waiters = read;
    wait_for(read->instruction, write->instruction);
  }
  read->prev_read = NULL;
  read->next_read = tensor->reads_since;
  if (tensor->reads_since) {
    tensor->reads_since->prev_read = read;
  }
  tensor->reads_since = read;
  read->in_reads_since = true;
}

static void link_write(kiln_eager_operand_t *write) {
  kiln_eager_tensor_t *tensor = write->tensor;
  kiln_eager_instruction_t *instruction = write->instruction;
  if (tensor->last_write) {
    tensor->last_write->write_waiter = instruction;
    wait_for(instruction, tensor->last_write->instruction);
  }
  kiln_eager_operand_t *read = tensor->reads_since;
  while (read) {
    kiln_eager_operand_t *next = read->next_read;
    read->write_waiter = instruction;
    wait_for(instruction, read->instruction);
    read->prev_read = read->next_read = NULL;
    read->in_reads_since = false;
    read = next;
  }
  tensor->reads_since = NULL;
  tensor->last_write = write;
}

static void link(kiln_eager_instruction_t *instruction) {
  for (int i = 0; i < instruction->num_operands; ++i) {
    kiln_eager_operand_t *operand = &instruction->operands[i];
    if (operand->is_write) {
      link_write(operand);
    } else {
      link_read(operand);
    }
  }
}

/* ---- finishing (scheduler thread) ---- */

static void release_waiter(kiln_eager_vm_t *vm, kiln_eager_instruction_t *waiter) {
  if (--waiter->remaining == 0) {
    kiln_eager_instruction_list_push(&vm->ready, waiter);
  }
}

/* Lets go the waiters of `operand` that its stream orders after it
 * (`same_stream`), or the others. */
static void release_waiters(kiln_eager_vm_t *vm, kiln_eager_operand_t *operand, bool same_stream) {
  kiln_eager_instruction_t *self = operand->instruction;
  if (operand->is_write) {
    for (kiln_eager_operand_t *read = operand->raw_waiters; read; read = read->next_raw_waiter) {
      if (ordered_by_stream(self, read->instruction) == same_stream) {
        release_waiter(vm, read->instruction);
      }
    }
  }
  if (operand->write_waiter && ordered_by_stream(self, operand->write_waiter) == same_stream) {
    release_waiter(vm, operand->write_waiter);
  }
}

/* The instruction finished: its other-stream waiters go, it leaves the
 * access lists. */
static void release_operand(kiln_eager_vm_t *vm, kiln_eager_operand_t *operand) {
  release_waiters(vm, operand, false);
  if (operand->is_write) {
    if (operand->tensor->last_write == operand) {
      operand->tensor->last_write = NULL;
    }
  } else if (operand->in_reads_since) {
    unlink_read(operand);
  }
}

static void finish(kiln_eager_vm_t *vm, kiln_eager_instruction_t *instruction) {
  for (int i = 0; i < instruction->num_operands; ++i) {
    release_operand(vm, &instruction->operands[i]);
  }
  vm->live--;
  if (instruction->resolved->type->front_sequential) {
    vm->sequential_live--;
  }
  kiln_eager_instruction_destroy(instruction);
}

/* ---- the scheduling pass (scheduler thread) ---- */

/* Hands the ready list to the streams: control ones run here and finish at
 * once (which may make more ready); the rest go to their worker in one push
 * per stream. */
static void dispatch_ready(kiln_eager_vm_t *vm) {
  kiln_eager_instruction_list_t per_stream[KILN_EAGER_MAX_STREAM_TYPES];
  memset(per_stream, 0, sizeof(per_stream));
  kiln_eager_instruction_t *instruction = NULL;
  while ((instruction = kiln_eager_instruction_list_pop(&vm->ready)) != NULL) {
    kiln_eager_stream_t *stream = instruction->resolved->stream;
    if (stream->type->on_scheduler_thread) {
      stream->type->compute(stream->type, instruction);
      finish(vm, instruction);
    } else {
      kiln_eager_instruction_list_push(&per_stream[stream - vm->streams], instruction);
      instruction->dispatched = true;
      for (int i = 0; i < instruction->num_operands; ++i) {
        release_waiters(vm, &instruction->operands[i], true); /* prescheduling */
      }
    }
  }
  for (int i = 0; i < vm->num_streams; ++i) {
    if (per_stream[i].head) {
      kiln_eager_queue_push_list(&vm->streams[i].queue, &per_stream[i]);
      kiln_eager_notifier_notify(&vm->streams[i].wake);
    }
  }
}

/* Links received instructions in order until a barrier that must wait. */
static bool handle_backlog(kiln_eager_vm_t *vm) {
  bool progress = false;
  kiln_eager_instruction_t *head = NULL;
  while ((head = vm->backlog.head) != NULL) {
    if (vm->sequential_live > 0 || (head->resolved->type->front_sequential && vm->live > 0)) {
      break;
    }
    kiln_eager_instruction_list_pop(&vm->backlog);
    link(head);
    vm->live++;
    progress = true;
    if (head->remaining == 0) {
      kiln_eager_instruction_list_push(&vm->ready, head);
    }
    if (head->resolved->type->front_sequential) {
      vm->sequential_live++;
      break; /* nothing behind it is linked before it ran */
    }
  }
  return progress;
}

void kiln_eager_vm_schedule(kiln_eager_vm_t *vm) {
  kiln_eager_instruction_list_t finished = {NULL, NULL, 0};
  kiln_eager_queue_take_all(&vm->finished, &finished);
  kiln_eager_instruction_t *instruction = NULL;
  while ((instruction = kiln_eager_instruction_list_pop(&finished)) != NULL) {
    finish(vm, instruction);
  }
  kiln_eager_queue_take_all(&vm->pending, &vm->backlog);
  do {
    dispatch_ready(vm);
  } while (handle_backlog(vm) || vm->ready.head);
}

bool kiln_eager_vm_idle(const kiln_eager_vm_t *vm) {
  return vm->live == 0 && !vm->backlog.head && !vm->ready.head;
}
