/*
 * Parallel-loop outlining shared by the backends (TVM's
 * CodeGenCPU::CreateParallelLaunch, done once for every target).
 *
 * kiln_codegen_parallel_outline walks a lowered PrimFunc and describes each
 * For marked parallel as a lambda: its number n (the backend names the
 * outlined function __kiln_parallel_lambda_<n>), the loop, and its free
 * variables, which the closure packs: every variable used inside the loop
 * (its min and extent included) and bound outside it, buffers' data
 * variables among them, in the order of first use (a stable order: the same
 * function always gives the same closure). A backend emits, for lambda n, a
 * closure struct with one field per free variable, the function that unpacks
 * them and runs its task's chunk, and the launch in place of the loop.
 *
 * Chunks (kiln_codegen_chunk_t): STATIC gives task t of n the iterations
 * [min(t*step, extent), min((t+1)*step, extent)) with step = ceil(extent/n);
 * STRIDE gives it t, t+n, t+2n, ... A parallel loop inside a parallel loop
 * is INVALID_ARGUMENT "nested parallel loop: fuse the loops instead".
 */
#ifndef KILN_CODEGEN_PARALLEL_H_
#define KILN_CODEGEN_PARALLEL_H_

#include "tir/tir.h"

/* The largest local Allocate both backends put on the stack (bigger ones
 * are workspaces). It holds a conv row block's accumulator
 * (KILN_SCHEDULE_NCHWC_BLOCK_BYTES): LLVM keeps a stack array's elements
 * in registers across a loop more readily than a workspace's, whose
 * pointer comes from a call. */
#define KILN_CODEGEN_STACK_BYTES (32 * 1024)

typedef enum kiln_codegen_chunk_e {
  KILN_CODEGEN_CHUNK_STATIC,
  KILN_CODEGEN_CHUNK_STRIDE,
  KILN_CODEGEN_CHUNK_COUNT_
} kiln_codegen_chunk_t;

typedef struct kiln_codegen_lambda_t {
  int id; /* n of __kiln_parallel_lambda_<n>, from 0 in the function */
  const kiln_tir_for_t *loop;
  int num_free;
  const kiln_tir_var_t *const *free_vars; /* the closure's fields, in order */
  const int *is_data;                     /* per free variable: a buffer's data (a pointer) */
} kiln_codegen_lambda_t;

typedef struct kiln_codegen_parallel_t {
  kiln_codegen_chunk_t chunk;
  int count;
  const kiln_codegen_lambda_t *lambdas; /* in the order the loops appear */
} kiln_codegen_parallel_t;

/* The lambdas of `func`, in `arena`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_parallel_outline(kiln_arena_t *arena,
                                                                 const kiln_tir_prim_func_t *func,
                                                                 kiln_codegen_chunk_t chunk,
                                                                 kiln_codegen_parallel_t *out);
/* The lambda of a parallel loop, or NULL. */
const kiln_codegen_lambda_t *kiln_codegen_parallel_find(const kiln_codegen_parallel_t *parallel,
                                                        const kiln_tir_for_t *loop);

#endif /* KILN_CODEGEN_PARALLEL_H_ */
