/*
 * Storage planning for main's intermediate tensors (TVM's GraphPlanMemory,
 * NNVM's PlanMemory), run last, after fuse_ops.
 *
 * Every tensor a Call of main produces (each field of a tuple-typed call on
 * its own) is planned into a storage: a block of bytes (a multiple of 64)
 * holding tensors of one dtype whose lifetimes do not overlap. Tensors that
 * main's caller owns are not planned: the parameters, the constants, and the
 * results (whatever main's body returns, through tuples). Tuple and
 * TupleGetItem nodes only name tensors, so they get no storage of their own.
 *
 * The plan walks main's calls in post order. A call's outputs get their
 * storages first, then the storages of its arguments whose last reader it is
 * are freed (so an output never shares a storage with one of its own
 * inputs), then any output no one reads. A tensor takes a free storage of
 * its dtype whose size is within a factor of 16 of its own: the smallest one
 * at least as large, else the largest smaller one, grown to fit; else a new
 * storage.
 *
 * Symbolic dims (a module compiled for the VM, compiler/vm_symbolic.c):
 * a tensor whose symbolic dims all have upper bounds is planned at the
 * size its bounds give (its run-time shape fits in that storage; the VM's
 * check_inputs refuses an input above a bound); one with a symbolic dim
 * without a bound is not planned (per_run: the VM allocates it each run,
 * at its run's size, and frees it after its last use).
 *
 * Concatenation in place: a call of a primitive function that is one
 * concatenate of its parameters, in order, along an axis with only 1s
 * before it (N = 1 and the channel axis, plain or blocked: each input is
 * then one contiguous run of the output's bytes), whose inputs are each
 * made by a call of main for this concatenate alone (read by nothing
 * else, not a result) at offsets that are multiples of the alignment, is
 * planned in place: its output's storage is taken when the first input is
 * made, each input is that storage at its offset, and the concatenate's
 * entry is marked in_place (the graph runs it as "__nop"). A SqueezeNet
 * fire module's or an Inception block's concatenate then costs nothing.
 * Not in a module with symbolic dims (the VM's program for it runs every
 * kernel and places every tensor at offset 0).
 */
#ifndef KILN_PASS_PLAN_MEMORY_H_
#define KILN_PASS_PLAN_MEMORY_H_

#include <stdbool.h>
#include <stddef.h>

#include "ir/expr.h"

/* The alignment and granularity of storages, in bytes. */
#define KILN_MEMORY_PLAN_ALIGNMENT 64

typedef struct kiln_memory_plan_entry_t {
  const kiln_expr_t *expr; /* a Call of main */
  int field;               /* its field, for a tuple-typed call; 0 otherwise */
  int storage_id;          /* -1: external (one of main's results) */
  kiln_dtype_t dtype;
  size_t bytes;  /* the tensor's own size */
  size_t offset; /* where in its storage it starts (a multiple of the alignment) */
  bool in_place; /* a concatenate whose inputs were written into it: it need not run */
  bool per_run;  /* a symbolic dim without an upper bound: not planned (storage_id -1; the VM
                    allocates it per run, compiler/vm_symbolic.c) */
} kiln_memory_plan_entry_t;

typedef struct kiln_memory_storage_t {
  kiln_dtype_t dtype;
  size_t bytes; /* a multiple of KILN_MEMORY_PLAN_ALIGNMENT, >= each tensor's size */
} kiln_memory_storage_t;

typedef struct kiln_memory_plan_t {
  kiln_allocator_t allocator;
  int num_storages;
  kiln_memory_storage_t *storages;
  int num_entries; /* every tensor a call of main makes, in post order */
  kiln_memory_plan_entry_t *entries;
  size_t planned_bytes; /* the storages' total: the arena the plan needs */
  size_t tensor_bytes;  /* the planned tensors' total, each aligned, as without reuse */
} kiln_memory_plan_t;

/* Plans the tensors of `module`'s main, whose types must be inferred
 * (FAILED_PRECONDITION naming the node otherwise; NOT_FOUND without main). */
KILN_MUST_USE_RESULT kiln_status_t kiln_pass_plan_memory_compute(const kiln_module_t *module,
                                                                 kiln_allocator_t allocator,
                                                                 kiln_memory_plan_t **out_plan);
void kiln_pass_plan_memory_destroy(kiln_memory_plan_t *plan);

/* The entry of field `field` of call `expr`, or NULL when it has none. */
const kiln_memory_plan_entry_t *kiln_memory_plan_find(const kiln_memory_plan_t *plan,
                                                      const kiln_expr_t *expr, int field);

#endif /* KILN_PASS_PLAN_MEMORY_H_ */
