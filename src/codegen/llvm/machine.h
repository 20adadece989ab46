/*
 * The LLVM backend's target machine, passes and JIT (internal to
 * src/codegen/llvm/): target_machine.c, jit.c. An object file is linked
 * by codegen/toolchain.h's kiln_codegen_link.
 */
#ifndef KILN_CODEGEN_LLVM_MACHINE_H_
#define KILN_CODEGEN_LLVM_MACHINE_H_

#include <llvm-c/Core.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/llvm/codegen_llvm.h"

/* Initializes the native target, its assembly printer and parser (once). */
void kiln_llvm_initialize_native(void);
/* The options' triple, normalized (an LLVM message to dispose), or the
 * host's; *out_foreign when it is another architecture's. INVALID_ARGUMENT
 * for an architecture LLVM does not know, one kiln does not build for (not
 * x86_64 or aarch64), a system other than Linux, or -jit for another
 * architecture. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_triple(const kiln_codegen_llvm_options_t *options,
                                                    char **out_triple, int *out_foreign);
/* A target machine for the options' triple (else the host's) with the
 * options' CPU and features (another architecture's: -mcpu, else
 * "generic", and -mattr alone; never the host's):
 * position-independent for an object, the JIT's defaults for the JIT.
 * INVALID_ARGUMENT when LLVM does not know the CPU or a feature. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_target_machine(
    const kiln_codegen_llvm_options_t *options, int for_jit, LLVMTargetMachineRef *out_machine);
/* Sets the module's triple and data layout, runs "default<O<level>>". */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_optimize(LLVMModuleRef module,
                                                      LLVMTargetMachineRef machine, int opt_level);
/* The object file or assembly of `module` (LLVMObjectFile/LLVMAssemblyFile). */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_emit(LLVMTargetMachineRef machine,
                                                  LLVMModuleRef module, LLVMCodeGenFileType kind,
                                                  LLVMMemoryBufferRef *out_buffer);
/* Compiles `module` (made in `context`'s context; both taken) with ORC
 * LLJIT for `machine` (taken) and makes an in-memory module of the named
 * functions that owns the JIT. */
KILN_MUST_USE_RESULT kiln_status_t kiln_llvm_jit(kiln_allocator_t allocator,
                                                 LLVMOrcThreadSafeContextRef context,
                                                 LLVMModuleRef module, LLVMTargetMachineRef machine,
                                                 int num_funcs,
                                                 const kiln_tir_prim_func_t *const *funcs,
                                                 kiln_runtime_module_t **out_module);

#endif /* KILN_CODEGEN_LLVM_MACHINE_H_ */
