/*
 * Target records: the features a CPU name implies, and the record text;
 * see target_record.h.
 */
#include "codegen/target_record.h"

#include <stdbool.h>
#include <string.h>

#include "runtime/cpu_features.h"

#define LEVEL2  "sse3,ssse3,sse4.1,sse4.2,popcnt,cx16"
#define LEVEL3  LEVEL2 ",avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe"
#define LEVEL4  LEVEL3 ",avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define ICELAKE LEVEL4 ",avx512vnni,avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq,avx512ifma"

typedef struct cpu_t {
  const char *name;
  const char *features;
} cpu_t;

static const cpu_t cpus[] = {
    {"x86-64", ""},
    {"x86-64-v2", LEVEL2},
    {"x86-64-v3", LEVEL3},
    {"x86-64-v4", LEVEL4},
    {"haswell", LEVEL3},
    {"broadwell", LEVEL3},
    {"skylake", LEVEL3},
    {"alderlake", LEVEL3 ",avxvnni"},
    {"skylake-avx512", LEVEL4},
    {"cascadelake", LEVEL4 ",avx512vnni"},
    {"cooperlake", LEVEL4 ",avx512vnni,avx512bf16"},
    {"icelake-client", ICELAKE},
    {"icelake-server", ICELAKE},
    {"tigerlake", ICELAKE},
    {"rocketlake", ICELAKE},
    {"sapphirerapids", ICELAKE ",avx512bf16,avx512fp16,avxvnni"},
    {"znver1", LEVEL3},
    {"znver2", LEVEL3},
    {"znver3", LEVEL3},
    {"znver4", ICELAKE ",avx512bf16"},
};
#define NUM_CPUS (sizeof(cpus) / sizeof(cpus[0]))

/* Whether `name` is in the comma-separated `list`. */
static bool listed(const char *list, const char *name) {
  size_t length = strlen(name);
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    if (n == length && strncmp(p, name, n) == 0) {
      return true;
    }
    p += n + (p[n] == ',');
  }
  return false;
}

/* What -mattr says of `name`: +1 added, -1 taken away, 0 silent. */
static int attr_says(const char *mattr, const char *name) {
  size_t length = strlen(name);
  int said = 0;
  for (const char *p = mattr ? mattr : ""; *p;) {
    size_t n = strcspn(p, ",");
    if (n == length + 1 && (p[0] == '+' || p[0] == '-') && strncmp(p + 1, name, length) == 0) {
      said = p[0] == '+' ? 1 : -1;
    }
    p += n + (p[n] == ',');
  }
  return said;
}

static kiln_status_t unknown_cpu(const char *cpu) {
  char known[1024] = "";
  for (size_t i = 0; i < NUM_CPUS; ++i) {
    strncat(known, i ? ", " : "", sizeof(known) - strlen(known) - 1);
    strncat(known, cpus[i].name, sizeof(known) - strlen(known) - 1);
  }
  return KILN_STATUS(INVALID_ARGUMENT,
                     "CPU \"%s\": kiln does not know which features it implies, so a library "
                     "built for it could not be checked when loaded; use one of %s, or the host "
                     "(llvm: no -mcpu; c: -march=native)",
                     cpu, known);
}

/* The features `cpu` implies (NULL: the host's, read at run time). */
static kiln_status_t implied(const char *cpu, const char **out_list) {
  *out_list = NULL;
  if (!cpu || strcmp(cpu, "native") == 0) {
    return KILN_OK;
  }
  for (size_t i = 0; i < NUM_CPUS; ++i) {
    if (strcmp(cpus[i].name, cpu) == 0) {
      *out_list = cpus[i].features;
      return KILN_OK;
    }
  }
  return unknown_cpu(cpu);
}

kiln_status_t kiln_codegen_target_record(const char *triple, const char *cpu, const char *host_name,
                                         const char *mattr, kiln_strbuf_t *out) {
  const char *list = NULL;
  KILN_RETURN_IF_ERROR(implied(cpu, &list));
  const char *name = list ? cpu : host_name ? host_name : "native";
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(out, "triple=%s cpu=%s features=", triple, name));
  bool first = true;
  for (const char *const *f = kiln_cpu_feature_names(); *f; ++f) {
    int said = attr_says(mattr, *f);
    bool has = list ? listed(list, *f) : kiln_cpu_feature_present(*f);
    if (said > 0 || (has && said == 0)) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(out, "%s%s", first ? "" : ",", *f));
      first = false;
    }
  }
  return KILN_OK;
}
