/*
 * The code-generation target interface: one struct of function pointers per
 * backend (the C backend here, the LLVM backend later).
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

#include "kiln/module.h"
#include "tir/tir.h"

typedef struct kiln_codegen_target_t {
  const char *name; /* "c" */
  /* `options`: the target string after the name ("" when none). */
  kiln_status_t (*build)(kiln_allocator_t allocator, const kiln_tir_prim_func_t *const *funcs,
                         int num_funcs, const char *options, kiln_runtime_module_t **out_module);
} kiln_codegen_target_t;

/* The C backend (codegen/c/codegen_c.h). */
extern const kiln_codegen_target_t kiln_codegen_target_c;
/* The LLVM backend (codegen/llvm/codegen_llvm.h), when built with LLVM
 * (KILN_HAVE_LLVM). */
extern const kiln_codegen_target_t kiln_codegen_target_llvm;

/* The target string to use when none is asked for: "llvm" when kiln was
 * built with LLVM, else "c -march=native". */
const char *kiln_codegen_default_target(void);

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
