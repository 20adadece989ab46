/*
 * The LLVM emitter's shared state (internal to src/codegen/llvm/).
 *
 * One kiln_llvm_t translates a set of lowered PrimFuncs into one LLVM module
 * made in a fresh context. The module starts from a prelude parsed from IR
 * text (emit_module.c): the DLTensor, packed-value and parallel-environment
 * types, the backend ABI as function-pointer globals the loader fills in
 * (the C backend's scheme, docs/codegen-c.md) and the cold helpers that
 * format argument errors. Each PrimFunc becomes the packed function, which
 * checks its arguments (emit_checks.c) and calls an internal compute
 * function whose buffer pointers are noalias and aligned; each parallel loop
 * becomes __kiln_parallel_lambda_<n> with its closure struct and a launch
 * (emit_parallel.c). Expressions (emit_expr.c) and statements
 * (emit_stmt.c) are SSA values: a variable maps to the value bound to it,
 * and within one statement each expression node is emitted once (the tree
 * may be a DAG), except inside the arms of a lazily evaluated select, whose
 * values do not dominate what follows.
 *
 * Registers hold bool as i1 (vectors of i1); memory holds it as i8 0/1, as
 * the interpreter stores it. float16 and bfloat16 are i16 bits in memory and
 * float32 in registers (narrow.c); uint64 is i64 with unsigned operations. Vectors are LLVM vectors
 * of the IR's lane count.
 */
#ifndef KILN_CODEGEN_LLVM_EMIT_H_
#define KILN_CODEGEN_LLVM_EMIT_H_

#include <llvm-c/Core.h>

#include "base/array.h"
#include "base/hashmap.h"
#include "codegen/parallel.h"
#include "tir/tir.h"

typedef struct kiln_llvm_t {
  kiln_arena_t arena; /* maps and outlining, freed with the emitter */
  LLVMContextRef context;
  LLVMModuleRef module;
  LLVMBuilderRef builder;
  const kiln_tir_prim_func_t *func;
  kiln_codegen_parallel_t parallel;
  kiln_codegen_chunk_t chunk;
  int lambda_base;           /* lambdas of earlier functions */
  LLVMValueRef function;     /* the function being written */
  LLVMBasicBlockRef allocas; /* its entry block: allocas, then a branch */
  kiln_hashmap_t vars;       /* var -> LLVMValueRef */
  kiln_hashmap_t wide;       /* loop var -> its i64 value (emit_expr.c, index_i64) */
  kiln_hashmap_t memo;       /* expr -> LLVMValueRef, this statement's */
  kiln_array_t memo_log;     /* exprs put in memo, in order */
  kiln_hashmap_t has_load;   /* expr -> (void *)1 or 2: contains a load */
  kiln_array_t workspaces;   /* LLVMValueRef: live workspaces, innermost last */
  int in_index;              /* > 0 while emitting a buffer index (emit_expr.c) */
  /* Types. */
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f32, t_f64, t_ptr;
  LLVMTypeRef t_tensor, t_value, t_penv, t_lambda;
  unsigned prof_kind; /* "prof" metadata */
} kiln_llvm_t;

/* ---- emit_module.c ---- */
/* The emitter over a fresh module named `name` in `context`, from the
 * prelude. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_initialize(kiln_llvm_t *ll, kiln_allocator_t allocator,
                                                        LLVMContextRef context,
                                                        kiln_codegen_chunk_t chunk);
/* Frees the emitter, not the module (the caller owns ll->module). */
void kiln_llvm_deinitialize(kiln_llvm_t *ll);
/* Adds the packed function of `func` and its lambdas. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_function(kiln_llvm_t *ll,
                                                      const kiln_tir_prim_func_t *func);
/* A global or function of the prelude (INTERNAL when missing). */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_prelude(kiln_llvm_t *ll, const char *name,
                                                     LLVMValueRef *out_value);
/* Calls the ABI function behind global `name` (its pointer is loaded). */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_call_abi(kiln_llvm_t *ll, const char *name,
                                                      LLVMTypeRef fn_type, LLVMValueRef *args,
                                                      unsigned num_args, LLVMValueRef *out_value);
/* An internal function `name` taking (prefix types..., then the variables)
 * and returning i32, with noalias + align(element size) on data pointers;
 * binds the variables to its parameters, leaves the builder in its body and
 * returns the leading parameters in `out_prefix`. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_llvm_body_function(kiln_llvm_t *ll, const char *name, int num_prefix, LLVMTypeRef *prefix,
                        int num_vars, const kiln_tir_var_t *const *vars, const int *is_data,
                        const int *align, LLVMValueRef *out_function, LLVMValueRef *out_prefix);
/* Branches to `ok` when `cond`, else to a new failure block marked
 * unlikely (branch_weights 1:2^20); leaves the builder in that block. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_check(kiln_llvm_t *ll, LLVMValueRef cond,
                                                   const char *what, LLVMBasicBlockRef *out_ok);
/* A private constant C string, as i8*. */
LLVMValueRef kiln_llvm_string(kiln_llvm_t *ll, const char *text);

/* ---- emit_checks.c ---- */
/* The argument checks of cg->func's packed function; binds each
 * parameter's data variable and its symbolic shape variables and returns
 * them in `out_vars` (from the arena), data pointers first. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_checks(kiln_llvm_t *ll, LLVMValueRef function,
                                                    int *out_num_vars,
                                                    const kiln_tir_var_t ***out_vars,
                                                    LLVMValueRef **out_values);

/* ---- emit_expr.c ---- */
/* The LLVM type of a dtype in registers (bool: i1) and in memory (bool: i8). */
LLVMTypeRef kiln_llvm_type(const kiln_llvm_t *ll, kiln_tir_dtype_t dtype);
LLVMTypeRef kiln_llvm_mem_type(const kiln_llvm_t *ll, kiln_dtype_t dtype);
/* UNIMPLEMENTED naming the function and what holds `dtype` when the backend
 * cannot hold it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_check_dtype(const kiln_llvm_t *ll, kiln_dtype_t dtype,
                                                         const char *what, const char *name);
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_expr(kiln_llvm_t *ll, const kiln_tir_expr_t *e,
                                                  LLVMValueRef *out_value);
/* `value` (an integer of `dtype`, scalar or vector) as int64 lanes. */
LLVMValueRef kiln_llvm_to_i64(kiln_llvm_t *ll, LLVMValueRef value, kiln_tir_dtype_t dtype);
/* A scalar broadcast to `lanes` lanes (lanes 1: unchanged). */
LLVMValueRef kiln_llvm_splat(kiln_llvm_t *ll, LLVMValueRef value, int lanes);
/* The element address (elem*) of buffer[indices] for scalar indices, or
 * (contiguous) of a vector access's first lane; NULL with *out_contiguous 0
 * when lanes must be addressed one by one (kiln_llvm_lane_offsets). */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_address(kiln_llvm_t *ll,
                                                     const kiln_tir_buffer_t *buffer,
                                                     int num_indices,
                                                     const kiln_tir_expr_t *const *indices,
                                                     int lanes, LLVMValueRef *out_address);
/* The per-lane element offsets (<lanes x i64>) of a vector access. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_lane_offsets(kiln_llvm_t *ll,
                                                          const kiln_tir_buffer_t *buffer,
                                                          int num_indices,
                                                          const kiln_tir_expr_t *const *indices,
                                                          int lanes, LLVMValueRef *out_offsets);
/* Binds `var` to `value`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_bind(kiln_llvm_t *ll, const kiln_tir_var_t *var,
                                                  LLVMValueRef value);
/* Forgets the memoized expressions (from `mark` on). */
void kiln_llvm_memo_undo(kiln_llvm_t *ll, size_t mark);

/* ---- narrow.c: float16 and bfloat16 ---- */
/* Whether `dtype` is float16 or bfloat16 (bits in memory, float32 in registers). */
bool kiln_llvm_is_narrow(kiln_dtype_t dtype);
/* i16 bits (scalar or vector) of `dtype` as float32, exactly. */
LLVMValueRef kiln_llvm_widen_narrow(kiln_llvm_t *ll, kiln_dtype_t dtype, LLVMValueRef bits16);
/* float32 (scalar or vector) to `dtype`'s i16 bits, rounded as
 * base/scalar_ops.h rounds. */
LLVMValueRef kiln_llvm_narrow(kiln_llvm_t *ll, kiln_dtype_t dtype, LLVMValueRef value);
/* float32 rounded to `dtype` and back: the value a narrow result holds. */
LLVMValueRef kiln_llvm_round_narrow(kiln_llvm_t *ll, kiln_dtype_t dtype, LLVMValueRef value);

/* ---- intrinsics.c ---- */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_call(kiln_llvm_t *ll, const kiln_tir_call_t *call,
                                                  LLVMValueRef *args, LLVMValueRef *out_value);
/* The overloaded intrinsic `name` (e.g. "llvm.fmuladd") on `type`. */
LLVMValueRef kiln_llvm_intrinsic(kiln_llvm_t *ll, const char *name, LLVMTypeRef type,
                                 LLVMValueRef *args, unsigned num_args);
/* Fast float32 exp (scalar or vector), IR only. */
LLVMValueRef kiln_llvm_fast_exp(kiln_llvm_t *ll, LLVMValueRef x);

/* ---- emit_stmt.c ---- */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_stmt(kiln_llvm_t *ll, const kiln_tir_stmt_t *s);
/* Frees the live workspaces and returns -1 (terminates the block). */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_fail_exit(kiln_llvm_t *ll);
/* A counted loop: k from `begin` to `end` (i64) by `step`, binding `var`
 * to (var's dtype)(min + k) around `body`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_loop(kiln_llvm_t *ll, LLVMValueRef begin,
                                                  LLVMValueRef end, LLVMValueRef step,
                                                  const kiln_tir_for_t *loop);

/* ---- emit_parallel.c ---- */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_parallel(kiln_llvm_t *ll, const kiln_tir_for_t *loop);

#endif /* KILN_CODEGEN_LLVM_EMIT_H_ */
