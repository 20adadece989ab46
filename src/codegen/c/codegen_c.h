/*
 * The C backend (docs/codegen-c.md).
 *
 * kiln_codegen_c_emit writes ONE C file for a set of lowered PrimFuncs
 * (after kiln_tir_lower_pipeline): a prelude (the DLPack structs and the
 * backend ABI it needs, declared in the file, vector typedefs and helpers),
 * then per function its parallel lambdas with their closure structs and the
 * packed function itself, whose prologue checks every argument. The file
 * includes only the C library's headers, so any C compiler builds it without
 * kiln's headers. kiln_codegen_c_compile compiles such a file with the
 * system C compiler into a shared library in a fresh temporary directory,
 * loads it as a module (keeping the source for kiln_runtime_module_source(module,
 * "c")) and removes the directory; kiln_codegen_target_c (codegen/target.h)
 * does both.
 *
 * Options (the target string after "c"): words passed to the compiler after
 * the defaults (-O2 -shared -fPIC -fwrapv -std=gnu11), e.g. "-march=native"
 * or "-O1"; "chunk=stride" (a word kiln reads itself) makes parallel loops
 * use the stride split. The compiler is $CC when set, else cc.
 */
#ifndef KILN_CODEGEN_C_CODEGEN_C_H_
#define KILN_CODEGEN_C_CODEGEN_C_H_

#include "codegen/parallel.h"
#include "codegen/target.h"

/* The C file for `funcs` in a string the caller frees with `allocator`.
 * INVALID_ARGUMENT for a function name that is not a C identifier, a nested
 * parallel loop, .... */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_c_emit(kiln_allocator_t allocator,
                                                       const kiln_tir_prim_func_t *const *funcs,
                                                       int num_funcs, kiln_codegen_chunk_t chunk,
                                                       char **out_source);
/* Compiles `source` with the options' compiler flags and loads it. On a
 * compiler failure: INVALID_ARGUMENT with the compiler's first error lines
 * and the path of the source, which is kept. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_c_compile(kiln_allocator_t allocator,
                                                          const char *source, const char *options,
                                                          kiln_runtime_module_t **out_module);

#endif /* KILN_CODEGEN_C_CODEGEN_C_H_ */
