/*
 * The code-generation target interface: one struct of function pointers per
 * backend (the C backend and, when built with LLVM 14, the LLVM backend).
 *
 * A target string names the backend by its first word and passes the rest
 * to it as options: "c", "c -march=native", "llvm -mcpu=znver4", "llvm -jit". build takes
 * PrimFuncs that went through kiln_tir_lower_pipeline (tir/transform.h) and
 * returns a loaded runtime module (kiln/module.h) with one packed function
 * per PrimFunc, named as the PrimFunc, and the source it was made from when
 * the backend has one (kiln_runtime_module_source(module, target->name)).
 */
#ifndef KILN_CODEGEN_TARGET_H_
#define KILN_CODEGEN_TARGET_H_

#include "base/strbuf.h"
#include "kiln/module.h"
#include "tir/tir.h"

typedef struct kiln_codegen_target_t {
  const char *name; /* "c" */
  /* `options`: the target string after the name ("" when none). */
  kiln_status_t (*build)(kiln_allocator_t allocator, const kiln_tir_prim_func_t *const *funcs,
                         int num_funcs, const char *options, kiln_runtime_module_t **out_module);
  /* Option words that change how the code is delivered (in memory or as a
   * file, with or without its assembly) and not the code itself, separated
   * by spaces ("-jit -noasm"); "" when none. kiln_codegen_target_code
   * leaves them out. */
  const char *delivery_words;
} kiln_codegen_target_t;

/* The C backend (codegen/c/codegen_c.h). */
extern const kiln_codegen_target_t kiln_codegen_target_c;
/* The LLVM backend (codegen/llvm/codegen_llvm.h), when built with LLVM
 * (KILN_HAVE_LLVM). */
extern const kiln_codegen_target_t kiln_codegen_target_llvm;

/* The target string to use when none is asked for: "llvm" when kiln was
 * built with LLVM, else "c -march=native". */
const char *kiln_codegen_default_target(void);
/* The target for kernels compiled one at a time in this process (the eager
 * VM's): "llvm -jit -noasm" when kiln was built with LLVM (no file, no
 * system compiler), else "c -march=native". */
const char *kiln_codegen_default_jit_target(void);

/* The version of the LLVM kiln was built with ("14.0.6"), or NULL when it
 * was built without LLVM. */
const char *kiln_codegen_llvm_version(void);

/* Appends what decides the code a target string makes: its name and its
 * options without the target's delivery words, one space apart ("llvm
 * -jit -mcpu=x" and "llvm  -mcpu=x" both give "llvm -mcpu=x"). Kernel
 * caches key by it, so a kernel compiled in memory serves a build that
 * writes files. NOT_FOUND as kiln_codegen_target_find. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_code(const char *target_string,
                                                            kiln_strbuf_t *sb);

/* The target a target string names; NOT_FOUND naming it and the known ones. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_find(
    const char *target_string, const kiln_codegen_target_t **out_target, const char **out_options);
/* Finds the target and builds `funcs` with it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_build(kiln_allocator_t allocator,
                                                      const char *target_string,
                                                      const kiln_tir_prim_func_t *const *funcs,
                                                      int num_funcs,
                                                      kiln_runtime_module_t **out_module);

#endif /* KILN_CODEGEN_TARGET_H_ */
