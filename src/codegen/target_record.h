/*
 * The target record a backend writes into the libraries it builds
 * (runtime/cpu_features.h: "triple=T cpu=C features=a,b,c"), so that the
 * module loader can refuse a library on a CPU that lacks what its code
 * uses instead of dying with SIGILL.
 *
 * The features are those of the runtime's table (kiln_cpu_feature_names)
 * that the code may use: for the host's CPU ("native", or LLVM's name for
 * the host), the ones this CPU has (CPUID, as the loader reads them); for
 * a named CPU, the ones it implies, from the table below (the x86-64
 * levels of the psABI and the Intel and AMD CPUs whose features are those
 * levels plus known extensions; LLVM's C API cannot say what a CPU name
 * implies, so another name is INVALID_ARGUMENT, naming the known ones);
 * then `-mattr`'s "+x" adds x and "-x" takes it away. A feature outside the
 * table is not recorded (kiln's code generators emit none of them).
 */
#ifndef KILN_CODEGEN_TARGET_RECORD_H_
#define KILN_CODEGEN_TARGET_RECORD_H_

#include "base/strbuf.h"

/* Appends the record for `triple`, `cpu` (NULL or "native": the host, named
 * `host_name` when given) and `mattr` (NULL or "+a,-b"). */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_record(const char *triple, const char *cpu,
                                                              const char *host_name,
                                                              const char *mattr,
                                                              kiln_strbuf_t *out);

#endif /* KILN_CODEGEN_TARGET_RECORD_H_ */
