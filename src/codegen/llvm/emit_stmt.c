/*
 * Statements of the loop IR as LLVM control flow; see emit.h.
 *
 * As in the C backend: a loop counts an i64 k over [0, extent) (a phi in
 * its header) and binds its variable to (dtype)(min + k); Allocate makes a
 * stack array when the scope is local and the size a constant of at most
 * KILN_CODEGEN_STACK_BYTES (an alloca in the function's entry block, so a
 * loop around it does not grow the stack), and a workspace
 * (kiln_backend_alloc_workspace, freed after its body) otherwise; either
 * is zeroed where the Allocate is when its init is KILN_TIR_INIT_ZERO. Every error exit frees the
 * workspaces live at that point and returns -1. A parallel loop becomes its lambda and a launch
 * (emit_parallel.c).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/llvm/emit.h"

kiln_status_t kiln_llvm_fail_exit(kiln_llvm_t *ll) {
  LLVMTypeRef param = ll->t_ptr;
  LLVMTypeRef free_type = LLVMFunctionType(ll->t_void, &param, 1, 0);
  for (size_t i = kiln_array_count(&ll->workspaces); i-- > 0;) {
    LLVMValueRef ptr = *(LLVMValueRef *)kiln_array_at(&ll->workspaces, i);
    KILN_RETURN_IF_ERROR(
        kiln_llvm_call_abi(ll, "__kiln_backend_free_workspace", free_type, &ptr, 1, NULL));
  }
  LLVMBuildRet(ll->builder, LLVMConstInt(ll->t_i32, (unsigned long long)-1, 1));
  return KILN_OK;
}

kiln_status_t kiln_llvm_loop(kiln_llvm_t *ll, LLVMValueRef begin, LLVMValueRef end,
                             LLVMValueRef step, const kiln_tir_for_t *loop) {
  LLVMBuilderRef b = ll->builder;
  LLVMValueRef min = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, loop->min, &min));
  min = kiln_llvm_to_i64(ll, min, loop->min->dtype);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(ll->context, ll->function, "for.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ll->context, ll->function, "for.body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(ll->context, ll->function, "for.end");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef k = LLVMBuildPhi(b, ll->t_i64, loop->var->name);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, k, end, ""), body, exit);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef wide = LLVMBuildNSWAdd(b, min, k, "");
  LLVMValueRef value = LLVMBuildIntCast2(b, wide, kiln_llvm_type(ll, loop->var->base.dtype), 1, "");
  KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, loop->var, value));
  KILN_RETURN_IF_ERROR(kiln_hashmap_put(&ll->wide, loop->var, wide));
  KILN_RETURN_IF_ERROR(kiln_llvm_stmt(ll, loop->body));
  LLVMValueRef next = LLVMBuildAdd(b, k, step, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, head);
  LLVMValueRef values[] = {begin, next};
  LLVMBasicBlockRef blocks[] = {pre, latch};
  LLVMAddIncoming(k, values, blocks, 2);
  LLVMPositionBuilderAtEnd(b, exit);
  return KILN_OK;
}

static kiln_status_t emit_for(kiln_llvm_t *ll, const kiln_tir_for_t *n) {
  if (n->for_kind == KILN_TIR_FOR_PARALLEL) {
    return kiln_llvm_parallel(ll, n);
  }
  LLVMValueRef extent = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->extent, &extent));
  extent = kiln_llvm_to_i64(ll, extent, n->extent->dtype);
  return kiln_llvm_loop(ll, LLVMConstInt(ll->t_i64, 0, 0), extent, LLVMConstInt(ll->t_i64, 1, 0),
                        n);
}

static kiln_status_t emit_store(kiln_llvm_t *ll, const kiln_tir_buffer_store_t *n) {
  LLVMBuilderRef b = ll->builder;
  const kiln_tir_buffer_t *buffer = n->buffer;
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, buffer->dtype, "buffer", buffer->name));
  LLVMValueRef value = NULL, address = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->value, &value));
  int lanes = n->value->dtype.lanes;
  LLVMTypeRef mem = kiln_llvm_mem_type(ll, buffer->dtype);
  unsigned align = (unsigned)kiln_dtype_size(buffer->dtype);
  if (buffer->dtype == KILN_DTYPE_BOOL) {
    value = LLVMBuildZExt(b, value, lanes > 1 ? LLVMVectorType(mem, (unsigned)lanes) : mem, "");
  } else if (kiln_llvm_is_narrow(buffer->dtype)) {
    value = kiln_llvm_narrow(ll, buffer->dtype, value);
  }
  KILN_RETURN_IF_ERROR(kiln_llvm_address(ll, buffer, n->num_indices, n->indices, lanes, &address));
  if (address) {
    if (lanes > 1) {
      address = LLVMBuildBitCast(b, address, LLVMPointerType(LLVMTypeOf(value), 0), "");
    }
    LLVMSetAlignment(LLVMBuildStore(b, value, address), align);
    return KILN_OK;
  }
  void *data = NULL;
  if (!kiln_hashmap_get(&ll->vars, buffer->data, &data)) {
    return KILN_STATUS(INTERNAL, "%s: the data of buffer %s is not bound", ll->func->name,
                       buffer->name);
  }
  LLVMValueRef base = LLVMBuildBitCast(b, data, LLVMPointerType(mem, 0), "");
  LLVMValueRef offsets = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_llvm_lane_offsets(ll, buffer, n->num_indices, n->indices, lanes, &offsets));
  for (int l = 0; l < lanes; ++l) {
    LLVMValueRef lane = LLVMConstInt(ll->t_i32, (unsigned long long)l, 0);
    LLVMValueRef at = LLVMBuildExtractElement(b, offsets, lane, "");
    LLVMValueRef element = LLVMBuildExtractElement(b, value, lane, "");
    LLVMSetAlignment(LLVMBuildStore(b, element, LLVMBuildInBoundsGEP2(b, mem, base, &at, 1, "")),
                     align);
  }
  return KILN_OK;
}

static int64_t constant_count(const kiln_tir_buffer_t *buffer) {
  int64_t count = 1;
  for (int d = 0; d < buffer->ndim; ++d) {
    int64_t extent = 0;
    if (!kiln_tir_expr_as_int(buffer->shape[d], &extent) || extent < 0 ||
        __builtin_mul_overflow(count, extent, &count)) {
      return -1;
    }
  }
  return count;
}

static kiln_status_t emit_stack(kiln_llvm_t *ll, const kiln_tir_allocate_t *n, int64_t count) {
  const kiln_tir_buffer_t *buffer = n->buffer;
  LLVMTypeRef mem = kiln_llvm_mem_type(ll, buffer->dtype);
  LLVMTypeRef array = LLVMArrayType(mem, (unsigned)(count > 0 ? count : 1));
  LLVMBuilderRef entry = LLVMCreateBuilderInContext(ll->context);
  LLVMPositionBuilderBefore(entry, LLVMGetBasicBlockTerminator(ll->allocas));
  LLVMValueRef slot = LLVMBuildAlloca(entry, array, buffer->name);
  LLVMSetAlignment(slot, 64);
  LLVMDisposeBuilder(entry);
  LLVMValueRef data = LLVMBuildBitCast(ll->builder, slot, ll->t_ptr, buffer->data->name);
  uint64_t bytes = (uint64_t)count * kiln_dtype_size(buffer->dtype);
  if (n->init == KILN_TIR_INIT_ZERO) {
    LLVMBuildMemSet(ll->builder, data, LLVMConstInt(ll->t_i8, 0, 0),
                    LLVMConstInt(ll->t_i64, bytes, 0), 64);
  }
  KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, buffer->data, data));
  return kiln_llvm_stmt(ll, n->body);
}

static kiln_status_t emit_workspace(kiln_llvm_t *ll, const kiln_tir_allocate_t *n) {
  LLVMBuilderRef b = ll->builder;
  const kiln_tir_buffer_t *buffer = n->buffer;
  LLVMValueRef bytes = LLVMConstInt(ll->t_i64, kiln_dtype_size(buffer->dtype), 0);
  for (int d = 0; d < buffer->ndim; ++d) {
    LLVMValueRef extent = NULL;
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, buffer->shape[d], &extent));
    bytes = LLVMBuildMul(b, bytes, kiln_llvm_to_i64(ll, extent, buffer->shape[d]->dtype), "");
  }
  LLVMTypeRef i64 = ll->t_i64;
  LLVMValueRef data = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_call_abi(ll, "__kiln_backend_alloc_workspace",
                                          LLVMFunctionType(ll->t_ptr, &i64, 1, 0), &bytes, 1,
                                          &data));
  LLVMBasicBlockRef ok = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_check(ll, LLVMBuildIsNotNull(b, data, ""), "workspace", &ok));
  KILN_RETURN_IF_ERROR(kiln_llvm_fail_exit(ll));
  LLVMPositionBuilderAtEnd(b, ok);
  if (n->init == KILN_TIR_INIT_ZERO) {
    LLVMBuildMemSet(b, data, LLVMConstInt(ll->t_i8, 0, 0), bytes, 64);
  }
  KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, buffer->data, data));
  KILN_RETURN_IF_ERROR(kiln_array_push(&ll->workspaces, &data));
  kiln_status_t status = kiln_llvm_stmt(ll, n->body);
  (void)kiln_array_pop(&ll->workspaces, NULL);
  KILN_RETURN_IF_ERROR(status);
  LLVMTypeRef ptr = ll->t_ptr;
  return kiln_llvm_call_abi(ll, "__kiln_backend_free_workspace",
                            LLVMFunctionType(ll->t_void, &ptr, 1, 0), &data, 1, NULL);
}

static kiln_status_t emit_allocate(kiln_llvm_t *ll, const kiln_tir_allocate_t *n) {
  const kiln_tir_buffer_t *buffer = n->buffer;
  KILN_RETURN_IF_ERROR(kiln_llvm_check_dtype(ll, buffer->dtype, "Allocate", buffer->name));
  int64_t count = constant_count(buffer);
  if (n->scope == KILN_TIR_SCOPE_LOCAL && count >= 0 &&
      count * (int64_t)kiln_dtype_size(buffer->dtype) <= KILN_CODEGEN_STACK_BYTES) {
    return emit_stack(ll, n, count);
  }
  return emit_workspace(ll, n);
}

/* Ends the block with a branch to `to` unless it is terminated. */
static void branch_to(kiln_llvm_t *ll, LLVMBasicBlockRef to) {
  if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(ll->builder))) {
    LLVMBuildBr(ll->builder, to);
  }
}

static kiln_status_t emit_if(kiln_llvm_t *ll, const kiln_tir_if_then_else_t *n) {
  LLVMValueRef cond = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->condition, &cond));
  LLVMBasicBlockRef then_block =
      LLVMAppendBasicBlockInContext(ll->context, ll->function, "if.then");
  LLVMBasicBlockRef else_block =
      n->else_case ? LLVMAppendBasicBlockInContext(ll->context, ll->function, "if.else") : NULL;
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(ll->context, ll->function, "if.end");
  LLVMBuildCondBr(ll->builder, cond, then_block, else_block ? else_block : join);
  LLVMPositionBuilderAtEnd(ll->builder, then_block);
  KILN_RETURN_IF_ERROR(kiln_llvm_stmt(ll, n->then_case));
  branch_to(ll, join);
  if (else_block) {
    LLVMPositionBuilderAtEnd(ll->builder, else_block);
    KILN_RETURN_IF_ERROR(kiln_llvm_stmt(ll, n->else_case));
    branch_to(ll, join);
  }
  LLVMPositionBuilderAtEnd(ll->builder, join);
  return KILN_OK;
}

static kiln_status_t emit_assert(kiln_llvm_t *ll, const kiln_tir_assert_t *n) {
  LLVMValueRef cond = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->condition, &cond));
  LLVMBasicBlockRef ok = NULL;
  KILN_RETURN_IF_ERROR(kiln_llvm_check(ll, cond, "assert", &ok));
  const char *message = n->message ? n->message : "";
  size_t size = strlen(ll->func->name) + strlen(message) + 32;
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate(&ll->arena, size, 1, (void **)&text));
  snprintf(text, size, "%s: assertion failed: %s", ll->func->name, message);
  LLVMValueRef arg = kiln_llvm_string(ll, text);
  LLVMTypeRef ptr = ll->t_ptr;
  KILN_RETURN_IF_ERROR(kiln_llvm_call_abi(ll, "__kiln_backend_set_last_error",
                                          LLVMFunctionType(ll->t_void, &ptr, 1, 0), &arg, 1, NULL));
  KILN_RETURN_IF_ERROR(kiln_llvm_fail_exit(ll));
  LLVMPositionBuilderAtEnd(ll->builder, ok);
  return kiln_llvm_stmt(ll, n->body);
}

/* llvm.prefetch(address, read, locality 2: into L2, data cache). */
static kiln_status_t emit_prefetch(kiln_llvm_t *ll, const kiln_tir_prefetch_t *n) {
  const kiln_tir_buffer_load_t *load = (const void *)n->load;
  LLVMValueRef address = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_llvm_address(ll, load->buffer, load->num_indices, load->indices, 1, &address));
  if (!address) {
    return KILN_STATUS(INTERNAL, "%s: no address to prefetch in buffer %s", ll->func->name,
                       load->buffer->name);
  }
  LLVMValueRef args[4] = {LLVMBuildBitCast(ll->builder, address, ll->t_ptr, ""),
                          LLVMConstInt(ll->t_i32, 0, 0), LLVMConstInt(ll->t_i32, 2, 0),
                          LLVMConstInt(ll->t_i32, 1, 0)};
  (void)kiln_llvm_intrinsic(ll, "llvm.prefetch", ll->t_ptr, args, 4);
  return KILN_OK;
}

kiln_status_t kiln_llvm_stmt(kiln_llvm_t *ll, const kiln_tir_stmt_t *s) {
  kiln_llvm_memo_undo(ll, 0);
  switch (s->kind) {
  case KILN_TIR_STMT_FOR:
    return emit_for(ll, (const void *)s);
  case KILN_TIR_STMT_BUFFER_STORE:
    return emit_store(ll, (const void *)s);
  case KILN_TIR_STMT_ALLOCATE:
    return emit_allocate(ll, (const void *)s);
  case KILN_TIR_STMT_SEQ: {
    const kiln_tir_seq_t *n = (const void *)s;
    for (int i = 0; i < n->count; ++i) {
      KILN_RETURN_IF_ERROR(kiln_llvm_stmt(ll, n->stmts[i]));
    }
    return KILN_OK;
  }
  case KILN_TIR_STMT_IF_THEN_ELSE:
    return emit_if(ll, (const void *)s);
  case KILN_TIR_STMT_LET_STMT: {
    const kiln_tir_let_stmt_t *n = (const void *)s;
    LLVMValueRef value = NULL;
    KILN_RETURN_IF_ERROR(kiln_llvm_expr(ll, n->value, &value));
    KILN_RETURN_IF_ERROR(kiln_llvm_bind(ll, n->var, value));
    return kiln_llvm_stmt(ll, n->body);
  }
  case KILN_TIR_STMT_EVALUATE: {
    LLVMValueRef ignored = NULL;
    return kiln_llvm_expr(ll, ((const kiln_tir_evaluate_t *)s)->value, &ignored);
  }
  case KILN_TIR_STMT_ASSERT:
    return emit_assert(ll, (const void *)s);
  case KILN_TIR_STMT_PREFETCH:
    return emit_prefetch(ll, (const void *)s);
  case KILN_TIR_STMT_KIND_COUNT_:
    break;
  }
  return KILN_STATUS(INTERNAL, "%s: invalid statement kind %d", ll->func->name, (int)s->kind);
}
