/*
 * The LLVM backend (docs/codegen-llvm.md).
 *
 * Translates lowered PrimFuncs (after kiln_tir_lower_pipeline) to LLVM IR
 * with the LLVM C API (src/codegen/llvm/emit*.c: the packed signature,
 * argument checks with unlikely failure branches, noalias aligned buffer
 * pointers, vectors for ramp and broadcast, llvm.fmuladd and other
 * intrinsics, fast float32 exp/erf/tanh/sigmoid as IR, parallel loops
 * outlined into __kiln_parallel_lambda_<n> that kiln_parallel_launch runs),
 * optimizes it with the new pass manager ("default<O3>") for a target
 * machine, and either emits an object file linked into a shared library by
 * the system C compiler and loaded as a module, or (-jit) compiles it in
 * memory with ORC LLJIT: no file, no compiler. Either module keeps the
 * optimized IR (kiln_runtime_module_source(module, "ll")) and, unless
 * -noasm, the assembly ("asm").
 *
 * Target string: "llvm[ options]", options being words among
 *   -mtriple=T      the machine to build for (default: this one's):
 *                   x86_64-linux-gnu or aarch64-linux-gnu; another
 *                   architecture's library is linked with GNU binutils for
 *                   it (binutils-aarch64-linux-gnu) and not loaded here
 *   -mcpu=NAME      the CPU to tune and select features for (default: the
 *                   host's, with the host's features; with a -mtriple of
 *                   another architecture, "generic")
 *   -mattr=+a,-b    features to add or remove
 *   -opt=0..3       the optimization level (default 3)
 *   -jit            compile in memory with ORC LLJIT
 *   -noasm          do not keep the assembly (it costs a second code
 *                   generation; the code run is the same)
 *   chunk=stride    the stride split of parallel loops (codegen/parallel.h)
 * A word that is none of these, or a CPU or feature LLVM does not know, is
 * INVALID_ARGUMENT naming it.
 */
#ifndef KILN_CODEGEN_LLVM_CODEGEN_LLVM_H_
#define KILN_CODEGEN_LLVM_CODEGEN_LLVM_H_

#include "codegen/parallel.h"
#include "codegen/target.h"

typedef struct kiln_codegen_llvm_options_t {
  char triple[128]; /* -mtriple, "" for the host's */
  char cpu[64];     /* "" for the host's */
  char attrs[512];  /* the -mattr list, "" when none */
  int opt_level;    /* 0..3 */
  int jit;
  int keep_asm; /* 1 unless -noasm */
  kiln_codegen_chunk_t chunk;
} kiln_codegen_llvm_options_t;

/* The options of a target string's tail ("" or NULL: the defaults). */
KILN_MUST_USE_RESULT kiln_status_t
kiln_codegen_llvm_parse_options(const char *options, kiln_codegen_llvm_options_t *out_options);

/* Builds `funcs` into a loaded module (see above); for another
 * architecture, an unloaded one that keeps the library's bytes. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_llvm_build(kiln_allocator_t allocator,
                                                           const kiln_tir_prim_func_t *const *funcs,
                                                           int num_funcs, const char *options,
                                                           kiln_runtime_module_t **out_module);

#endif /* KILN_CODEGEN_LLVM_CODEGEN_LLVM_H_ */
