/*
 * Instructions (OneFlow's InstructionMsg and Instruction, one struct here).
 *
 * The builder fills an instruction on the caller's thread: its resolved type
 * and stream, its operands (the tensors it reads, then those it writes, each
 * retained) and the payload of its type. The VM then owns it: the scheduler
 * links it to earlier instructions through its operands' access links,
 * counts the instructions it waits for in `remaining`, hands it to its
 * stream when that count is zero, and frees it once it is done. One `next`
 * link puts it in one list at a time: the builder's, the VM's pending
 * list, a stream's queue, the finished list.
 */
#ifndef KILN_EAGER_INSTRUCTION_H_
#define KILN_EAGER_INSTRUCTION_H_

#include <stdbool.h>

#include "compiler/kernel_cache.h"
#include "eager/instruction_type.h"
#include "eager/tensor.h"

typedef struct kiln_eager_stream_t kiln_eager_stream_t;

/* One tensor an instruction uses: an access in the tensor's access list. */
struct kiln_eager_operand_t {
  kiln_eager_tensor_t *tensor;
  kiln_eager_instruction_t *instruction;
  bool is_write;
  /* scheduler thread only */
  kiln_eager_operand_t *raw_waiters;      /* a write: the reads waiting for it */
  kiln_eager_operand_t *next_raw_waiter;  /* a read: next in its write's raw_waiters */
  kiln_eager_instruction_t *write_waiter; /* the next write of the tensor, waiting for this */
  kiln_eager_operand_t *prev_read;        /* a read: in the tensor's reads_since */
  kiln_eager_operand_t *next_read;
  bool in_reads_since;
};

/* Called on the scheduler thread when a barrier runs. */
typedef void (*kiln_eager_barrier_fn)(void *user, kiln_status_t status);

/* A VM's resolution of an instruction type name: the type, its stream type
 * and the VM's stream of that type (OneFlow's RtInstrTypeId). */
typedef struct kiln_eager_resolved_t {
  const kiln_eager_instruction_type_t *type;
  const kiln_eager_stream_type_t *stream_type;
  kiln_eager_stream_t *stream;
} kiln_eager_resolved_t;

struct kiln_eager_instruction_t {
  kiln_eager_instruction_t *next;
  const kiln_eager_resolved_t *resolved;
  kiln_allocator_t allocator;
  struct kiln_eager_vm_t *vm;
  kiln_status_t status; /* the compute's outcome (the worker's, until done) */
  int remaining;        /* scheduler thread only: instructions it waits for */
  bool finished;        /* its outcome is stored on the tensors it writes */
  bool dispatched;      /* scheduler thread only: handed to its stream */
  union {
    struct {
      kiln_kernel_cache_t *cache;
      const kiln_kernel_t *kernel;
    } call;
    struct {
      void *bytes; /* a copy of host data, or NULL: operand 0 is the source */
      size_t size;
    } copy;
    struct {
      kiln_eager_barrier_fn fn;
      void *user;
    } barrier;
  } payload;
  int num_inputs; /* operands [0, num_inputs) are read, the rest written */
  int num_operands;
  kiln_eager_operand_t operands[];
};

/* A singly linked list of instructions. */
typedef struct kiln_eager_instruction_list_t {
  kiln_eager_instruction_t *head;
  kiln_eager_instruction_t *tail;
  int count;
} kiln_eager_instruction_list_t;

static inline void kiln_eager_instruction_list_push(kiln_eager_instruction_list_t *list,
                                                    kiln_eager_instruction_t *instruction) {
  instruction->next = NULL;
  if (list->tail) {
    list->tail->next = instruction;
  } else {
    list->head = instruction;
  }
  list->tail = instruction;
  list->count++;
}

/* Moves every instruction of `from` to the end of `to`. */
static inline void kiln_eager_instruction_list_move(kiln_eager_instruction_list_t *to,
                                                    kiln_eager_instruction_list_t *from) {
  if (!from->head) {
    return;
  }
  if (to->tail) {
    to->tail->next = from->head;
  } else {
    to->head = from->head;
  }
  to->tail = from->tail;
  to->count += from->count;
  from->head = from->tail = NULL;
  from->count = 0;
}

static inline kiln_eager_instruction_t *
kiln_eager_instruction_list_pop(kiln_eager_instruction_list_t *list) {
  kiln_eager_instruction_t *head = list->head;
  if (head) {
    list->head = head->next;
    if (!list->head) {
      list->tail = NULL;
    }
    list->count--;
    head->next = NULL;
  }
  return head;
}

/* Makes an instruction of `num_operands` operands (tensors NULL), status OK. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_eager_instruction_create(kiln_allocator_t allocator, const kiln_eager_resolved_t *resolved,
                              int num_operands, kiln_eager_instruction_t **out_instruction);
/* Sets operand `index` to `tensor` (retained; a write also counts as one of
 * the tensor's pending writes). */
void kiln_eager_instruction_set_operand(kiln_eager_instruction_t *instruction, int index,
                                        kiln_eager_tensor_t *tensor, bool is_write);
/* Releases the operands and the payload, frees the status and the
 * instruction. An instruction that never ran (a call that failed while
 * building its list) ends its pending writes without touching the tensors. */
void kiln_eager_instruction_destroy(kiln_eager_instruction_t *instruction);

#endif /* KILN_EAGER_INSTRUCTION_H_ */
