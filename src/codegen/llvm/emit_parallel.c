/*
 * Parallel loops as outlined lambdas (TVM's CreateParallelLaunch); see
 * codegen/parallel.h for the closure's fields and the chunking.
 *
 * For lambda n the emitter makes the named struct %__kiln_closure_<n> (one
 * field per free variable: i8* for a buffer's data, else the variable's
 * type), the internal `i32 @__kiln_parallel_lambda_<n>(i32 task_id,
 * %kiln.penv* penv, i8* cdata)` that loads the fields and the task count
 * and calls `@__kiln_parallel_lambda_<n>_compute_(task_id, num_task,
 * fields...)`, whose data pointers are noalias like the packed function's,
 * and which runs the task's chunk of the loop. In place of the loop: an
 * alloca of the closure (in the entry block), a store per field and the call
 * of kiln_parallel_launch through its ABI pointer, whose -1 becomes an error
 * exit of the enclosing function. The lambda has its own workspaces; the
 * enclosing function's bindings of the free variables are restored after.
 */
#include <stdio.h>

#include "codegen/llvm/emit.h"

typedef struct saved_t {
  LLVMValueRef function;
  LLVMBasicBlockRef allocas;
  LLVMBasicBlockRef block;
  kiln_array_t workspaces;
  void **bindings; /* per free variable */
} saved_t;

static kiln_status_t save(kiln_llvm_t *ll, const kiln_codegen_lambda_t *lambda, saved_t *s) {
  s->function = ll->function;
  s->allocas = ll->allocas;
  s->block = LLVMGetInsertBlock(ll->builder);
  s->workspaces = ll->workspaces;
  kiln_array_initialize(&ll->workspaces, kiln_arena_allocator(&ll->arena), sizeof(LLVMValueRef));
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(&ll->arena, lambda->num_free ? (size_t)lambda->num_free : 1,
                                sizeof(void *), _Alignof(void *), (void **)&s->bindings));
  for (int i = 0; i < lambda->num_free; ++i) {
    s->bindings[i] = NULL;
    if (!kiln_hashmap_get(&ll->vars, lambda->free_vars[i], &s->bindings[i])) {
      return KILN_STATUS(INTERNAL, "%s: variable %s of parallel loop %s is not bound",
                         ll->func->name, lambda->free_vars[i]->name, lambda->loop->var->name);
    }
  }
  return KILN_OK;
}

static kiln_status_t restore(kiln_llvm_t *ll, const kiln_codegen_lambda_t *lambda,
                             const saved_t *s) {
  ll->function = s->function;
  ll->allocas = s->allocas;
  ll->workspaces = s->workspaces;
  LLVMPositionBuilderAtEnd(ll->builder, s->block);
  kiln_llvm_memo_undo(ll, 0);
  for (int i = 0; i < lambda->num_free; ++i) {
    KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, lambda->free_vars[i], s->bindings[i]));
  }
  return KILN_OK;
}

/* The compute function: this task's iterations. */
static kiln_status_t emit_compute(kiln_llvm_t *ll, const kiln_codegen_lambda_t *lambda, int id,
                                  LLVMValueRef *out_compute) {
  char name[96];
  snprintf(name, sizeof(name), "__kiln_parallel_lambda_%d_compute_", id);
  LLVMTypeRef prefix[] = {ll->t_i32, ll->t_i32};
  LLVMValueRef params[2];
  KILN_RETURN_IF_ERROR(kiln_llvm_body_function(ll, name, 2, prefix, lambda->num_free,
                                               lambda->free_vars, lambda->is_data, NULL,
                                               out_compute, params));
  LLVMBuilderRef b = ll->builder;
  const kiln_tir_for_t *loop = lambda->loop;
  LLVMValueRef task = LLVMBuildSExt(b, params[0], ll->t_i64, "task");
  LLVMValueRef num_task = LLVMBuildSExt(b, params[1], ll->t_i64, "num_task");
  LLVMValueRef extent = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, loop->extent, &extent));
  extent = kiln_llvm_to_i64(ll, extent, loop->extent->dtype);
  LLVMValueRef one = LLVMConstInt(ll->t_i64, 1, 0);
  if (ll->chunk == KILN_CODEGEN_CHUNK_STRIDE) {
    KILN_RETURN_IF_ERROR(kiln_llvm_loop(ll, task, extent, num_task, loop));
  } else {
    LLVMValueRef step = LLVMBuildSDiv(
        b, LLVMBuildSub(b, LLVMBuildAdd(b, extent, num_task, ""), one, ""), num_task, "step");
    LLVMValueRef begin = LLVMBuildMul(b, task, step, "");
    LLVMValueRef end = LLVMBuildMul(b, LLVMBuildAdd(b, task, one, ""), step, "");
    begin =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, begin, extent, ""), begin, extent, "begin");
    end = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, end, extent, ""), end, extent, "end");
    KILN_RETURN_IF_ERROR(kiln_llvm_loop(ll, begin, end, one, loop));
  }
  LLVMBuildRet(b, LLVMConstInt(ll->t_i32, 0, 0));
  return KILN_OK;
}

/* The lambda: unpacks the closure and calls the compute function. */
static LLVMValueRef emit_lambda(kiln_llvm_t *ll, const kiln_codegen_lambda_t *lambda, int id,
                                LLVMTypeRef closure, LLVMValueRef compute, LLVMValueRef *args) {
  char name[64];
  snprintf(name, sizeof(name), "__kiln_parallel_lambda_%d", id);
  LLVMValueRef fn = LLVMAddFunction(ll->module, name, ll->t_lambda);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMBuilderRef b = ll->builder;
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ll->context, fn, "entry"));
  LLVMValueRef data =
      LLVMBuildBitCast(b, LLVMGetParam(fn, 2), LLVMPointerType(closure, 0), "closure");
  LLVMValueRef num_task = LLVMBuildLoad2(
      b, ll->t_i32, LLVMBuildStructGEP2(b, ll->t_penv, LLVMGetParam(fn, 1), 1, ""), "num_task");
  args[0] = LLVMGetParam(fn, 0);
  args[1] = num_task;
  for (int i = 0; i < lambda->num_free; ++i) {
    LLVMTypeRef type = LLVMStructGetTypeAtIndex(closure, (unsigned)i);
    args[2 + i] = LLVMBuildLoad2(b, type, LLVMBuildStructGEP2(b, closure, data, (unsigned)i, ""),
                                 lambda->free_vars[i]->name);
  }
  LLVMValueRef result = LLVMBuildCall2(b, LLVMGetElementType(LLVMTypeOf(compute)), compute, args,
                                       (unsigned)(2 + lambda->num_free), "");
  LLVMBuildRet(b, result);
  return fn;
}

static kiln_status_t closure_type(kiln_llvm_t *ll, const kiln_codegen_lambda_t *lambda, int id,
                                  LLVMTypeRef *out_type) {
  LLVMTypeRef *fields = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_arena_allocate_array(&ll->arena, lambda->num_free ? (size_t)lambda->num_free : 1,
                                sizeof(LLVMTypeRef), _Alignof(LLVMTypeRef), (void **)&fields));
  for (int i = 0; i < lambda->num_free; ++i) {
    fields[i] =
        lambda->is_data[i] ? ll->t_ptr : kiln_llvm_type(ll, lambda->free_vars[i]->base.dtype);
  }
  char name[64];
  snprintf(name, sizeof(name), "__kiln_closure_%d", id);
  *out_type = LLVMStructCreateNamed(ll->context, name);
  if (lambda->num_free == 0) {
    fields[0] = ll->t_i8;
  }
  LLVMStructSetBody(*out_type, fields, lambda->num_free ? (unsigned)lambda->num_free : 1, 0);
  return KILN_OK;
}

kiln_status_t kiln_llvm_parallel(kiln_llvm_t *ll, const kiln_tir_for_t *loop) {
  const kiln_codegen_lambda_t *lambda = kiln_codegen_parallel_find(&ll->parallel, loop);
  if (!lambda) {
    return KILN_STATUS(INTERNAL, "%s: parallel loop %s was not outlined", ll->func->name,
                       loop->var->name);
  }
  int id = ll->lambda_base + lambda->id;
  LLVMTypeRef closure = NULL;
  KILN_RETURN_IF_ERROR(closure_type(ll, lambda, id, &closure));
  /* The closure, filled where the loop was. */
  LLVMBuilderRef b = ll->builder;
  LLVMBuilderRef entry = LLVMCreateBuilderInContext(ll->context);
  LLVMPositionBuilderBefore(entry, LLVMGetBasicBlockTerminator(ll->allocas));
  char name[64];
  snprintf(name, sizeof(name), "closure_%d", id);
  LLVMValueRef slot = LLVMBuildAlloca(entry, closure, name);
  LLVMDisposeBuilder(entry);
  for (int i = 0; i < lambda->num_free; ++i) {
    void *value = NULL;
    if (!kiln_hashmap_get(&ll->vars, lambda->free_vars[i], &value)) {
      return KILN_STATUS(INTERNAL, "%s: variable %s of parallel loop %s is not bound",
                         ll->func->name, lambda->free_vars[i]->name, loop->var->name);
    }
    LLVMBuildStore(b, value, LLVMBuildStructGEP2(b, closure, slot, (unsigned)i, ""));
  }
  saved_t saved;
  KILN_RETURN_IF_ERROR(save(ll, lambda, &saved));
  LLVMValueRef compute = NULL, *args = NULL, fn = NULL;
  kiln_status_t status = emit_compute(ll, lambda, id, &compute);
  if (!status) {
    status =
        kiln_arena_allocate_array(&ll->arena, (size_t)lambda->num_free + 2, sizeof(LLVMValueRef),
                                  _Alignof(LLVMValueRef), (void **)&args);
  }
  if (!status) {
    fn = emit_lambda(ll, lambda, id, closure, compute, args);
  }
  kiln_status_t restored = restore(ll, lambda, &saved);
  KILN_RETURN_IF_ERROR(status);
  KILN_RETURN_IF_ERROR(restored);
  /* The launch. */
  LLVMTypeRef launch_params[] = {LLVMPointerType(ll->t_lambda, 0), ll->t_ptr, ll->t_i32};
  LLVMValueRef launch_args[] = {fn, LLVMBuildBitCast(b, slot, ll->t_ptr, ""),
                                LLVMConstInt(ll->t_i32, 0, 0)};
  LLVMValueRef result = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_call_abi(ll, "__kiln_parallel_launch",
                                          LLVMFunctionType(ll->t_i32, launch_params, 3, 0),
                                          launch_args, 3, &result));
  LLVMBasicBlockRef ok = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_check(
      ll, LLVMBuildICmp(b, LLVMIntEQ, result, LLVMConstInt(ll->t_i32, 0, 0), ""), "launch", &ok));
  KILN_RETURN_IF_ERROR(kiln_llvm_fail_exit(ll));
  LLVMPositionBuilderAtEnd(b, ok);
  return KILN_OK;
}
