/*
 * Loading a library a backend has just built (internal to kiln): it may be
 * compiled for another CPU than this one (`--target "llvm -mcpu=x86-64-v4"`
 * on a smaller machine, to be saved and deployed there), so its target
 * record is not checked at load, as kiln_runtime_module_load does. Code in
 * this process that runs such a library checks its target string first
 * (kiln_codegen_target_check_host, codegen/target_record.h).
 */
#ifndef KILN_RUNTIME_MODULE_BUILT_H_
#define KILN_RUNTIME_MODULE_BUILT_H_

#include "kiln/module.h"

KILN_MUST_USE_RESULT kiln_status_t kiln_runtime_module_load_built(
    kiln_allocator_t allocator, const char *path, kiln_runtime_module_t **out_module);

#endif /* KILN_RUNTIME_MODULE_BUILT_H_ */
