/*
 * The LLVM target: translate, optimize, then link or JIT; see
 * codegen_llvm.h.
 *
 * Each build has its own LLVM context (a JIT build takes it from a fresh
 * thread-safe context, which the JIT then owns), so builds on different
 * threads share no LLVM state but the native target, initialized once. The
 * module is verified before the passes (a failure there is a bug of the
 * emitter: INTERNAL with LLVM's words), optimized, printed ("ll") and
 * emitted as assembly ("asm", from a copy; a second code generation, which
 * -noasm skips), then either emitted as an object and linked
 * (kiln_codegen_link, codegen/toolchain.h: for this machine, or with GNU
 * binutils for another architecture's -mtriple, whose module is not
 * loaded) or handed to the JIT (jit.c). An object records its target
 * (@__kiln_target, codegen/target_record.h: the triple built for) for the
 * module loader's check; JIT code runs where it was made and records none. Every LLVM object made
 * here is disposed of on every path.
 */
#include <string.h>

#include <llvm-c/Analysis.h>

#include "codegen/llvm/emit.h"
#include "codegen/llvm/machine.h"
#include "codegen/target_record.h"
#include "codegen/toolchain.h"
#include "runtime/cpu_features.h"

typedef struct sources_t {
  char *ll;
  LLVMMemoryBufferRef assembly;
} sources_t;

static kiln_status_t translate(kiln_allocator_t allocator, LLVMContextRef context,
                               const kiln_tir_prim_func_t *const *funcs, int num_funcs,
                               kiln_codegen_chunk_t chunk, LLVMModuleRef *out_module) {
  kiln_llvm_t ll;
  KILN_RETURN_IF_ERROR(kiln_llvm_initialize(&ll, allocator, context, chunk));
  kiln_status_t status = KILN_OK;
  for (int i = 0; i < num_funcs && !status; ++i) {
    status = kiln_llvm_function(&ll, funcs[i]);
  }
  char *message = NULL;
  if (!status && LLVMVerifyModule(ll.module, LLVMReturnStatusAction, &message)) {
    status = KILN_STATUS(INTERNAL, "llvm backend: the emitted module is invalid: %.2000s", message);
  }
  LLVMDisposeMessage(message);
  kiln_llvm_deinitialize(&ll);
  if (status) {
    LLVMDisposeModule(ll.module);
    return status;
  }
  *out_module = ll.module;
  return KILN_OK;
}

/* Optimizes the module and keeps its text and assembly. */
static kiln_status_t optimize(LLVMModuleRef module, LLVMTargetMachineRef machine,
                              const kiln_codegen_llvm_options_t *options, sources_t *sources) {
  KILN_RETURN_IF_ERROR(kiln_llvm_optimize(module, machine, options->opt_level));
  sources->ll = LLVMPrintModuleToString(module);
  if (!options->keep_asm) {
    return KILN_OK;
  }
  return kiln_llvm_emit(machine, module, LLVMAssemblyFile, &sources->assembly);
}

static kiln_status_t attach_sources(kiln_allocator_t allocator, kiln_runtime_module_t *module,
                                    const sources_t *sources) {
  KILN_RETURN_IF_ERROR(kiln_runtime_module_set_source(module, "ll", sources->ll));
  if (!sources->assembly) {
    return KILN_OK;
  }
  /* The assembly buffer is not NUL-terminated. */
  size_t size = LLVMGetBufferSize(sources->assembly);
  char *text = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc(allocator, size + 1, (void **)&text));
  memcpy(text, LLVMGetBufferStart(sources->assembly), size);
  text[size] = '\0';
  kiln_status_t status = kiln_runtime_module_set_source(module, "asm", text);
  kiln_allocator_free(allocator, text);
  return status;
}

/* `@__kiln_target`: the library's target record (codegen/target_record.h),
 * which the module loader checks against the CPU before any kernel runs. */
static kiln_status_t record_target(kiln_allocator_t allocator, LLVMModuleRef module,
                                   const kiln_codegen_llvm_options_t *options, const char *triple,
                                   int foreign) {
  char *host = foreign ? NULL : LLVMGetHostCPUName();
  kiln_strbuf_t record;
  kiln_strbuf_initialize(&record, allocator);
  kiln_status_t status = kiln_codegen_target_record(triple, options->cpu[0] ? options->cpu : NULL,
                                                    host, options->attrs, &record);
  LLVMDisposeMessage(host);
  if (!status) {
    LLVMContextRef context = LLVMGetModuleContext(module);
    LLVMValueRef text = LLVMConstStringInContext(context, kiln_strbuf_c_str(&record),
                                                 (unsigned)kiln_strbuf_length(&record), 0);
    LLVMValueRef global = LLVMAddGlobal(module, LLVMTypeOf(text), KILN_TARGET_RECORD_SYMBOL);
    LLVMSetInitializer(global, text);
    LLVMSetGlobalConstant(global, 1);
    LLVMSetLinkage(global, LLVMExternalLinkage);
  }
  kiln_strbuf_deinitialize(&record);
  return status;
}

static kiln_status_t build_object(kiln_allocator_t allocator,
                                  const kiln_tir_prim_func_t *const *funcs, int num_funcs,
                                  const kiln_codegen_llvm_options_t *options, sources_t *sources,
                                  kiln_runtime_module_t **out_module) {
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef module = NULL;
  LLVMTargetMachineRef machine = NULL;
  LLVMMemoryBufferRef object = NULL;
  char *triple = NULL;
  int foreign = 0;
  kiln_status_t status = kiln_llvm_triple(options, &triple, &foreign);
  if (!status) {
    status = translate(allocator, context, funcs, num_funcs, options->chunk, &module);
  }
  if (!status) {
    status = kiln_llvm_target_machine(options, 0, &machine);
  }
  if (!status) {
    status = record_target(allocator, module, options, triple, foreign);
  }
  if (!status) {
    status = optimize(module, machine, options, sources);
  }
  if (!status) {
    status = kiln_llvm_emit(machine, module, LLVMObjectFile, &object);
  }
  if (!status) {
    status = kiln_codegen_link(allocator, foreign ? triple : NULL, LLVMGetBufferStart(object),
                               LLVMGetBufferSize(object), NULL, 0, true, out_module);
  }
  LLVMDisposeMessage(triple);
  if (object) {
    LLVMDisposeMemoryBuffer(object);
  }
  if (machine) {
    LLVMDisposeTargetMachine(machine);
  }
  if (module) {
    LLVMDisposeModule(module);
  }
  LLVMContextDispose(context);
  return status;
}

static kiln_status_t build_jit(kiln_allocator_t allocator, const kiln_tir_prim_func_t *const *funcs,
                               int num_funcs, const kiln_codegen_llvm_options_t *options,
                               sources_t *sources, kiln_runtime_module_t **out_module) {
  LLVMOrcThreadSafeContextRef thread_safe = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef context = LLVMOrcThreadSafeContextGetContext(thread_safe);
  LLVMModuleRef module = NULL;
  LLVMTargetMachineRef machine = NULL, jit_machine = NULL;
  kiln_status_t status = translate(allocator, context, funcs, num_funcs, options->chunk, &module);
  if (!status) {
    status = kiln_llvm_target_machine(options, 0, &machine);
  }
  if (!status) {
    status = optimize(module, machine, options, sources);
  }
  if (!status) {
    status = kiln_llvm_target_machine(options, 1, &jit_machine);
  }
  if (machine) {
    LLVMDisposeTargetMachine(machine);
  }
  if (status) {
    if (module) {
      LLVMDisposeModule(module);
    }
    LLVMOrcDisposeThreadSafeContext(thread_safe);
    return status;
  }
  /* The JIT takes the module, the context and its machine, on every path. */
  return kiln_llvm_jit(allocator, thread_safe, module, jit_machine, num_funcs, funcs, out_module);
}

kiln_status_t kiln_codegen_llvm_build(kiln_allocator_t allocator,
                                      const kiln_tir_prim_func_t *const *funcs, int num_funcs,
                                      const char *options, kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  if (num_funcs < 0 || (num_funcs > 0 && !funcs)) {
    return KILN_STATUS(INVALID_ARGUMENT, "llvm backend: %d functions", num_funcs);
  }
  kiln_codegen_llvm_options_t parsed;
  KILN_RETURN_IF_ERROR(kiln_codegen_llvm_parse_options(options, &parsed));
  kiln_llvm_initialize_native();
  sources_t sources = {NULL, NULL};
  kiln_runtime_module_t *module = NULL;
  kiln_status_t status =
      parsed.jit ? build_jit(allocator, funcs, num_funcs, &parsed, &sources, &module)
                 : build_object(allocator, funcs, num_funcs, &parsed, &sources, &module);
  if (!status) {
    status = attach_sources(allocator, module, &sources);
  }
  LLVMDisposeMessage(sources.ll);
  if (sources.assembly) {
    LLVMDisposeMemoryBuffer(sources.assembly);
  }
  if (status) {
    kiln_runtime_module_release(module);
    return status;
  }
  *out_module = module;
  return KILN_OK;
}

static kiln_status_t build_llvm(kiln_allocator_t allocator,
                                const kiln_tir_prim_func_t *const *funcs, int num_funcs,
                                const char *options, kiln_runtime_module_t **out_module) {
  return kiln_codegen_llvm_build(allocator, funcs, num_funcs, options, out_module);
}

const kiln_codegen_target_t kiln_codegen_target_llvm = {"llvm", build_llvm, "-jit -noasm"};
