/*
 * Options, the target machine and the pass pipeline; see machine.h.
 *
 * The native target is initialized once (pthread_once); every build makes
 * its own target machine, so builds on several threads share nothing.
 * "llvm" means the host: LLVMGetHostCPUName and LLVMGetHostCPUFeatures;
 * -mcpu=NAME replaces both (the CPU implies its features) and -mattr adds
 * its list after them. LLVM's C API has no way to ask whether a CPU or
 * feature name is valid: LLVM prints "'x' is not a recognized processor
 * for this target (ignoring processor)" on stderr and carries on. So the
 * target machine (whose constructor checks the names) is made with stderr
 * redirected to a temporary file (under a mutex: fd 2 is the process's),
 * and such a line becomes INVALID_ARGUMENT; anything else LLVM printed is passed on
 * to stderr.
 *
 * Optimization is LLVMRunPasses with "default<O3>" (or the -opt level):
 * the new pass manager's standard pipeline, loop and SLP vectorization on.
 * Loop strength reduction runs (it was once disabled: with int32 indices
 * sign-extended inside the loops, its search took 4 of ResNet-18's 6 s of
 * code generation; buffer indices are now i64 arithmetic of the loops'
 * i64 counters (emit_expr.c), LSR's formulae are simple, it costs a few
 * percent of code generation and turns a conv tile's addressing into two
 * pointer increments).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/llvm/machine.h"
#include "runtime/cpu_features.h"

kiln_status_t kiln_codegen_llvm_parse_options(const char *options,
                                              kiln_codegen_llvm_options_t *out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->opt_level = 3;
  out_options->keep_asm = 1;
  out_options->chunk = KILN_CODEGEN_CHUNK_STATIC;
  const char *p = options ? options : "";
  while (*p) {
    size_t length = strcspn(p, " \t");
    char word[600];
    if (length >= sizeof(word)) {
      return KILN_STATUS(INVALID_ARGUMENT, "llvm backend: option too long: \"%.40s...\"", p);
    }
    memcpy(word, p, length);
    word[length] = '\0';
    p += length;
    p += strspn(p, " \t");
    if (length == 0) {
      continue;
    }
    size_t value_length =
        strlen(word) - (strchr(word, '=') ? (size_t)(strchr(word, '=') - word) + 1 : 0);
    if (strncmp(word, "-mcpu=", 6) == 0 && value_length > 0 &&
        value_length < sizeof(out_options->cpu)) {
      strcpy(out_options->cpu, word + 6);
    } else if (strncmp(word, "-mtriple=", 9) == 0 && value_length > 0 &&
               value_length < sizeof(out_options->triple)) {
      strcpy(out_options->triple, word + 9);
    } else if (strncmp(word, "-mattr=", 7) == 0 && value_length > 0 &&
               value_length < sizeof(out_options->attrs)) {
      strcpy(out_options->attrs, word + 7);
    } else if (strncmp(word, "-opt=", 5) == 0 && word[5] >= '0' && word[5] <= '3' && !word[6]) {
      out_options->opt_level = word[5] - '0';
    } else if (strcmp(word, "-jit") == 0) {
      out_options->jit = 1;
    } else if (strcmp(word, "-noasm") == 0) {
      out_options->keep_asm = 0;
    } else if (strcmp(word, "chunk=stride") == 0) {
      out_options->chunk = KILN_CODEGEN_CHUNK_STRIDE;
    } else if (strcmp(word, "chunk=static") == 0) {
      out_options->chunk = KILN_CODEGEN_CHUNK_STATIC;
    } else {
      return KILN_STATUS(INVALID_ARGUMENT,
                         "llvm backend: unknown option \"%s\" (known: -mcpu=NAME, -mattr=+a,-b, "
                         "-opt=0..3, -jit, -noasm, chunk=stride, -mtriple=T)",
                         word);
    }
  }
  return KILN_OK;
}

static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void initialize_native(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  LLVMInitializeNativeAsmParser();
}

void kiln_llvm_initialize_native(void) {
  pthread_once(&native_once, initialize_native);
}

/* Every target LLVM was built with, for -mtriple (once). */
static void initialize_all(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
}

/* The architectures kiln builds for: 64-bit little-endian Linux, whose
 * ELF shared libraries its runtime reads (runtime/elf.h). */
static const char *const supported_arches[] = {"x86_64", "aarch64"};

kiln_status_t kiln_llvm_triple(const kiln_codegen_llvm_options_t *options, char **out_triple,
                               int *out_foreign) {
  *out_triple = NULL;
  *out_foreign = 0;
  if (!options->triple[0]) {
    *out_triple = LLVMGetDefaultTargetTriple();
    return KILN_OK;
  }
  pthread_once(&all_once, initialize_all);
  char *triple = LLVMNormalizeTargetTriple(options->triple), *error = NULL;
  LLVMTargetRef target = NULL;
  size_t arch = strcspn(triple, "-");
  kiln_status_t status = KILN_OK;
  if (LLVMGetTargetFromTriple(triple, &target, &error)) {
    status = KILN_STATUS(INVALID_ARGUMENT,
                         "llvm backend: -mtriple=%s: unknown architecture \"%.*s\" (LLVM: %s); "
                         "kiln builds for x86_64-linux-gnu and aarch64-linux-gnu",
                         options->triple, (int)arch, triple, error);
    LLVMDisposeMessage(error);
  }
  int supported = 0;
  for (size_t i = 0; i < sizeof(supported_arches) / sizeof(supported_arches[0]); ++i) {
    supported |=
        strlen(supported_arches[i]) == arch && strncmp(triple, supported_arches[i], arch) == 0;
  }
  if (!status && !supported) {
    status = KILN_STATUS(INVALID_ARGUMENT,
                         "llvm backend: -mtriple=%s: kiln does not build for %.*s (it builds for "
                         "x86_64-linux-gnu and aarch64-linux-gnu)",
                         options->triple, (int)arch, triple);
  }
  if (!status && !strstr(triple, "-linux")) {
    status = KILN_STATUS(INVALID_ARGUMENT,
                         "llvm backend: -mtriple=%s: kiln builds ELF shared libraries for Linux "
                         "(x86_64-linux-gnu, aarch64-linux-gnu)",
                         options->triple);
  }
  if (status) {
    LLVMDisposeMessage(triple);
    return status;
  }
  const char *host = kiln_cpu_host_arch();
  *out_foreign = !(strlen(host) == arch && strncmp(triple, host, arch) == 0);
  if (*out_foreign && options->jit) {
    LLVMDisposeMessage(triple);
    return KILN_STATUS(INVALID_ARGUMENT,
                       "llvm backend: -jit runs the code in this process, which is %s: it cannot "
                       "build for -mtriple=%s",
                       host, options->triple);
  }
  *out_triple = triple;
  return KILN_OK;
}

static pthread_mutex_t stderr_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The feature string into `features`; the CPU (an LLVM message to dispose,
 * NULL when the options name one). */
static kiln_status_t cpu_and_features(const kiln_codegen_llvm_options_t *options, int foreign,
                                      char **out_cpu, char *features, size_t capacity) {
  char *host = options->cpu[0] || foreign ? NULL : LLVMGetHostCPUFeatures();
  int n = snprintf(features, capacity, "%s%s%s", host ? host : "",
                   host && options->attrs[0] ? "," : "", options->attrs);
  LLVMDisposeMessage(host);
  if (n < 0 || (size_t)n >= capacity) {
    return KILN_STATUS(INVALID_ARGUMENT, "llvm backend: the feature list is too long (%d bytes)",
                       n);
  }
  *out_cpu = options->cpu[0] || foreign ? NULL : LLVMGetHostCPUName();
  return KILN_OK;
}

/* The text LLVM printed to stderr while `make` ran, into `out` (capacity). */
static LLVMTargetMachineRef create_capturing(LLVMTargetRef target, const char *triple,
                                             const char *cpu, const char *features, int for_jit,
                                             int opt_level, char *out, size_t capacity) {
  out[0] = '\0';
  LLVMCodeGenOptLevel level = opt_level == 0   ? LLVMCodeGenLevelNone
                              : opt_level == 1 ? LLVMCodeGenLevelLess
                              : opt_level == 2 ? LLVMCodeGenLevelDefault
                                               : LLVMCodeGenLevelAggressive;
  pthread_mutex_lock(&stderr_mutex);
  fflush(stderr);
  FILE *capture = tmpfile();
  int saved = capture ? dup(2) : -1;
  if (saved >= 0) {
    dup2(fileno(capture), 2);
  }
  LLVMTargetMachineRef machine = LLVMCreateTargetMachine(
      target, triple, cpu, features, level, for_jit ? LLVMRelocDefault : LLVMRelocPIC,
      for_jit ? LLVMCodeModelJITDefault : LLVMCodeModelDefault);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
    rewind(capture);
    size_t n = fread(out, 1, capacity - 1, capture);
    out[n] = '\0';
  }
  if (capture) {
    fclose(capture);
  }
  pthread_mutex_unlock(&stderr_mutex);
  return machine;
}

kiln_status_t kiln_llvm_target_machine(const kiln_codegen_llvm_options_t *options, int for_jit,
                                       LLVMTargetMachineRef *out_machine) {
  *out_machine = NULL;
  kiln_llvm_initialize_native();
  char *triple = NULL, *error = NULL;
  int foreign = 0;
  KILN_RETURN_IF_ERROR(kiln_llvm_triple(options, &triple, &foreign));
  LLVMTargetRef target = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &error)) {
    kiln_status_t status =
        KILN_STATUS(UNAVAILABLE, "llvm backend: no target for %s: %s", triple, error);
    LLVMDisposeMessage(error);
    LLVMDisposeMessage(triple);
    return status;
  }
  char *cpu = NULL, features[8192];
  kiln_status_t status = cpu_and_features(options, foreign, &cpu, features, sizeof(features));
  if (status) {
    LLVMDisposeMessage(triple);
    return status;
  }
  char printed[2048];
  const char *cpu_name = cpu ? cpu : options->cpu[0] ? options->cpu : "generic";
  LLVMTargetMachineRef machine = create_capturing(target, triple, cpu_name, features, for_jit,
                                                  options->opt_level, printed, sizeof(printed));
  if (!machine) {
    status =
        KILN_STATUS(INVALID_ARGUMENT, "llvm backend: cannot make a target machine for %s", triple);
  } else if (strstr(printed, "is not a recognized")) {
    printed[strcspn(printed, "\n")] = '\0';
    status = KILN_STATUS(INVALID_ARGUMENT, "llvm backend: target \"-mcpu=%s -mattr=%s\": %s",
                         options->cpu, options->attrs, printed);
    LLVMDisposeTargetMachine(machine);
  } else {
    fputs(printed, stderr);
    *out_machine = machine;
  }
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(triple);
  return status;
}

kiln_status_t kiln_llvm_optimize(LLVMModuleRef module, LLVMTargetMachineRef machine,
                                 int opt_level) {
  char *triple = LLVMGetTargetMachineTriple(machine);
  LLVMSetTarget(module, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(machine);
  LLVMSetModuleDataLayout(module, layout);
  LLVMDisposeTargetData(layout);
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(options, opt_level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(options, opt_level >= 2);
  LLVMPassBuilderOptionsSetLoopUnrolling(options, opt_level >= 2);
  char pipeline[32];
  snprintf(pipeline, sizeof(pipeline), "default<O%d>", opt_level);
  LLVMErrorRef error = LLVMRunPasses(module, pipeline, machine, options);
  LLVMDisposePassBuilderOptions(options);
  if (error) {
    char *message = LLVMGetErrorMessage(error);
    kiln_status_t status =
        KILN_STATUS(INTERNAL, "llvm backend: the pass pipeline %s failed: %s", pipeline, message);
    LLVMDisposeErrorMessage(message);
    return status;
  }
  return KILN_OK;
}

kiln_status_t kiln_llvm_emit(LLVMTargetMachineRef machine, LLVMModuleRef module,
                             LLVMCodeGenFileType kind, LLVMMemoryBufferRef *out_buffer) {
  char *error = NULL;
  /* Code generation changes the IR (CodeGenPrepare): emit from a copy. */
  LLVMModuleRef copy = LLVMCloneModule(module);
  LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(machine, copy, kind, &error, out_buffer);
  LLVMDisposeModule(copy);
  if (failed) {
    kiln_status_t status = KILN_STATUS(INTERNAL, "llvm backend: emitting the %s failed: %s",
                                       kind == LLVMObjectFile ? "object file" : "assembly", error);
    LLVMDisposeMessage(error);
    return status;
  }
  return KILN_OK;
}
