/*
 * The target record a backend writes into the libraries it builds
 * (runtime/cpu_features.h: "triple=T cpu=C features=a,b,c"), so that the
 * module loader can refuse a library on a CPU that lacks what its code
 * uses instead of dying with SIGILL.
 *
 * The features are those of the runtime's table (kiln_cpu_feature_name)
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

/* Appends the record of the code a target string makes ("llvm -mcpu=x
 * -mattr=+a", "c -march=native -mavx2", "llvm -jit": the host): llvm's
 * -mtriple, -mcpu and -mattr, c's -march and -m<feature>/-mno-<feature>
 * flags (the system compiler's default without -march: plain x86-64). A
 * triple of another architecture than x86 records no features (the
 * feature table is x86's): its CPU, or "generic". */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_record_of(const char *target_string,
                                                                 kiln_strbuf_t *out);
/* The target string's -mtriple value into `triple` ("" when it has none:
 * this machine's). */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_triple(const char *target_string,
                                                              char *triple, size_t capacity);
/* The vector width the target's code has, for the schedules: 0 when the
 * target is this CPU (no -mcpu/-march, or "native", and no -mtriple of
 * another architecture: the schedules take the host's width); else 512
 * when its features have avx512f, 256 with avx, 128 otherwise and for
 * aarch64 (NEON). */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_vector_bits(const char *target_string,
                                                                   int *out_bits);
/* OK when code a target string makes can run on this CPU, else the
 * record check's status (runtime/cpu_features.h) naming the target: for
 * whoever runs in this process a library built for the target. */
KILN_MUST_USE_RESULT kiln_status_t kiln_codegen_target_check_host(const char *target_string);

#endif /* KILN_CODEGEN_TARGET_RECORD_H_ */
