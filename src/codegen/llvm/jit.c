/*
 * In-memory compilation with ORC LLJIT; see machine.h.
 *
 * The optimized module goes to a fresh LLJIT (one per build, built for the
 * build's target machine) as a thread-safe module; the JIT's main dylib
 * gets a generator that resolves the process's own symbols (libm, libc's
 * snprintf and memset), so nothing is written to disk and no compiler
 * runs. Looking up the first symbol compiles the module. The backend-ABI
 * pointers the module defines (__kiln_parallel_launch, ...) are then filled
 * with the runtime's functions, as kiln_runtime_module_load does for a
 * library, and the packed functions become an in-memory module
 * (kiln_runtime_module_create_in_memory) that owns the JIT: its last
 * release disposes the LLJIT and with it the code.
 */
#include <stdint.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>

#include "codegen/llvm/machine.h"

static void release_jit(void *owner) {
  LLVMErrorRef error = LLVMOrcDisposeLLJIT(owner);
  if (error) {
    LLVMConsumeError(error);
  }
}

static kiln_status_t error_status(LLVMErrorRef error, const char *what) {
  char *message = LLVMGetErrorMessage(error);
  kiln_status_t status = KILN_STATUS(INTERNAL, "llvm backend: %s: %s", what, message);
  LLVMDisposeErrorMessage(message);
  return status;
}

static kiln_status_t lookup(LLVMOrcLLJITRef jit, const char *name, void **out_address) {
  LLVMOrcExecutorAddress address = 0;
  LLVMErrorRef error = LLVMOrcLLJITLookup(jit, &address, name);
  if (error) {
    return error_status(error, name);
  }
  *out_address = (void *)(uintptr_t)address;
  return KILN_OK;
}

/* The runtime's functions into the module's ABI pointers. */
static kiln_status_t wire_abi(LLVMOrcLLJITRef jit) {
  void (*set_last_error)(const char *) = kiln_backend_set_last_error;
  int (*launch)(kiln_parallel_lambda_fn, void *, int) = kiln_parallel_launch;
  int (*barrier)(int, kiln_parallel_env_t *) = kiln_parallel_barrier;
  void *(*alloc_workspace)(size_t) = kiln_backend_alloc_workspace;
  void (*free_workspace)(void *) = kiln_backend_free_workspace;
  struct {
    const char *name;
    const void *fn;
    size_t size;
  } const entries[] = {
      {"__kiln_backend_set_last_error", &set_last_error, sizeof(set_last_error)},
      {"__kiln_parallel_launch", &launch, sizeof(launch)},
      {"__kiln_parallel_barrier", &barrier, sizeof(barrier)},
      {"__kiln_backend_alloc_workspace", &alloc_workspace, sizeof(alloc_workspace)},
      {"__kiln_backend_free_workspace", &free_workspace, sizeof(free_workspace)},
  };
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); ++i) {
    void *slot = NULL;
    KILN_RETURN_IF_ERROR(lookup(jit, entries[i].name, &slot));
    memcpy(slot, entries[i].fn, entries[i].size);
  }
  return KILN_OK;
}

static kiln_status_t make_jit(LLVMTargetMachineRef machine, LLVMOrcLLJITRef *out_jit) {
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(machine));
  LLVMErrorRef error = LLVMOrcCreateLLJIT(out_jit, builder);
  if (error) {
    return error_status(error, "cannot make the JIT");
  }
  LLVMOrcDefinitionGeneratorRef generator = NULL;
  error = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &generator, LLVMOrcLLJITGetGlobalPrefix(*out_jit), NULL, NULL);
  if (error) {
    release_jit(*out_jit);
    *out_jit = NULL;
    return error_status(error, "cannot search the process's symbols");
  }
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(*out_jit), generator);
  return KILN_OK;
}

static kiln_status_t make_module(kiln_allocator_t allocator, LLVMOrcLLJITRef jit, int num_funcs,
                                 const kiln_tir_prim_func_t *const *funcs,
                                 kiln_runtime_module_t **out_module) {
  KILN_RETURN_IF_ERROR(wire_abi(jit));
  kiln_runtime_module_entry_t *entries = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(allocator, num_funcs > 0 ? (size_t)num_funcs : 1,
                                                   sizeof(*entries), (void **)&entries));
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < num_funcs && !status; ++i) {
    void *address = NULL;
    status = lookup(jit, funcs[i]->name, &address);
    entries[i].name = funcs[i]->name;
    entries[i].num_args = funcs[i]->num_params;
    memcpy(&entries[i].fn, &address, sizeof(address));
  }
  if (!status) {
    status = kiln_runtime_module_create_in_memory(allocator, "llvm-jit", num_funcs, entries,
                                                  release_jit, jit, out_module);
  }
  kiln_allocator_free(allocator, entries);
  return status;
}

kiln_status_t kiln_llvm_jit(kiln_allocator_t allocator, LLVMOrcThreadSafeContextRef context,
                            LLVMModuleRef module, LLVMTargetMachineRef machine, int num_funcs,
                            const kiln_tir_prim_func_t *const *funcs,
                            kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  LLVMOrcLLJITRef jit = NULL;
  kiln_status_t status = make_jit(machine, &jit);
  if (status) {
    LLVMDisposeModule(module);
    LLVMOrcDisposeThreadSafeContext(context);
    return status;
  }
  LLVMOrcThreadSafeModuleRef thread_safe = LLVMOrcCreateNewThreadSafeModule(module, context);
  LLVMOrcDisposeThreadSafeContext(context); /* the module holds it now */
  LLVMErrorRef error =
      LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit), thread_safe);
  status = error ? error_status(error, "cannot add the module to the JIT")
                 : make_module(allocator, jit, num_funcs, funcs, out_module);
  if (status) {
    release_jit(jit);
  }
  return status;
}
