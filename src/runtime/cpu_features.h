/*
 * The CPU features compiled code may need, and the target record an
 * artifact carries so that loading it on a CPU without them is an error
 * instead of SIGILL.
 *
 * One table (cpu_features.c) names every x86 feature kiln checks: its LLVM
 * name ("avx512f"), where CPUID reports it, and the register state the
 * operating system must save for it (XCR0: AVX's YMM state, AVX-512's
 * opmask and ZMM state, AMX's tile state). The host's features are read
 * once with CPUID and XGETBV. The code generators record only features of
 * this table, so every recorded feature can be checked.
 *
 * A target record is one line of text: "triple=T cpu=C features=a,b,c"
 * (features may be empty). The compiler writes it into the library as the
 * string __kiln_target; kiln_runtime_module_load reads it before any
 * kernel can run and refuses a library whose architecture differs from the
 * host's or that needs a feature the host lacks, naming the feature.
 */
#ifndef KILN_RUNTIME_CPU_FEATURES_H_
#define KILN_RUNTIME_CPU_FEATURES_H_

#include <stdbool.h>
#include <stdint.h>

#include "kiln/status.h"

/* The symbol of the target record in a generated library. */
#define KILN_TARGET_RECORD_SYMBOL "__kiln_target"

/* The architecture word of an LLVM triple this runtime runs ("x86_64"). */
const char *kiln_cpu_host_arch(void);
/* Whether `name` is one of the items of the comma-separated `list`. */
bool kiln_cpu_list_has(const char *list, const char *name);
/* Whether `name` is a feature of the table (so it can be checked). */
bool kiln_cpu_feature_known(const char *name);
/* Whether the host has feature `name` (false for a name not in the table). */
bool kiln_cpu_feature_present(const char *name);
/* The table's feature `index` (from 0, in table order), NULL past the end. */
const char *kiln_cpu_feature_name(int index);

/* Checks a target record against the host: FAILED_PRECONDITION naming
 * `what` (the library's path), the record's CPU and the first missing
 * feature, or the architecture that differs; INVALID_ARGUMENT for a record
 * that does not parse or names a feature kiln cannot check. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cpu_target_check(const char *record, const char *what);

/* The size in bytes of the data (or unified) cache of `level` (1, 2, 3)
 * of cpu0, as Linux's sysfs under `cpu_dir` (NULL: /sys/devices/system/cpu)
 * describes it in cpu0/cache/index*: per core for the private levels, the
 * whole cache for a shared one. NOT_FOUND naming the directory when no
 * such cache is described. */
KILN_MUST_USE_RESULT kiln_status_t kiln_cpu_cache_bytes(const char *cpu_dir, int level,
                                                        int64_t *out_bytes);

#endif /* KILN_RUNTIME_CPU_FEATURES_H_ */
