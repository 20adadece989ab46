/*
 * Target records: the features a CPU name implies, and the record text;
 * see target_record.h.
 */
#include "codegen/target_record.h"

#include <stdbool.h>
#include <stdio.h>
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

/* Whether the triple's architecture is x86 (the feature table's). */
static bool is_x86(const char *triple) {
  size_t arch = strcspn(triple, "-");
  return (arch == 6 && strncmp(triple, "x86_64", 6) == 0) ||
         (arch == 4 && triple[0] == 'i' && strncmp(triple + 2, "86", 2) == 0);
}

kiln_status_t kiln_codegen_target_record(const char *triple, const char *cpu, const char *host_name,
                                         const char *mattr, kiln_strbuf_t *out) {
  if (!is_x86(triple)) { /* no feature kiln can check: the architecture alone */
    const char *name = cpu && strcmp(cpu, "native") != 0 ? cpu : host_name ? host_name : "generic";
    return kiln_strbuf_appendf(out, "triple=%s cpu=%s features=", triple, name);
  }
  const char *list = NULL;
  KILN_RETURN_IF_ERROR(implied(cpu, &list));
  const char *name = list ? cpu : host_name ? host_name : "native";
  KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(out, "triple=%s cpu=%s features=", triple, name));
  bool first = true;
  const char *f = NULL;
  for (int i = 0; (f = kiln_cpu_feature_name(i)) != NULL; ++i) {
    int said = attr_says(mattr, f);
    bool has = list ? kiln_cpu_list_has(list, f) : kiln_cpu_feature_present(f);
    if (said > 0 || (has && said == 0)) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(out, "%s%s", first ? "" : ",", f));
      first = false;
    }
  }
  return KILN_OK;
}

/* What a target string says of the machine. */
typedef struct parsed_t {
  char cpu[128];    /* -mcpu= or -march=; "" when it names none */
  char triple[128]; /* -mtriple=; "" for this machine's */
  bool c;           /* the c target */
} parsed_t;

/* One word's share of a target's CPU, triple and -mattr: llvm's -mcpu=X,
 * -mtriple=T and -mattr=L, c's -march=X, -m<feature> and -mno-<feature>. */
static kiln_status_t read_word(const char *word, size_t n, parsed_t *p, kiln_strbuf_t *mattr) {
  if (n > 9 && strncmp(word, "-mtriple=", 9) == 0) {
    snprintf(p->triple, sizeof(p->triple), "%.*s", (int)(n - 9), word + 9);
    return KILN_OK;
  }
  char *cpu = p->cpu;
  size_t cpu_size = sizeof(p->cpu);
  if (n > 6 && (strncmp(word, "-mcpu=", 6) == 0 || strncmp(word, "-march=", 7) == 0)) {
    size_t skip = word[2] == 'c' ? 6 : 7;
    snprintf(cpu, cpu_size, "%.*s", (int)(n - skip), word + skip);
    return KILN_OK;
  }
  if (n > 7 && strncmp(word, "-mattr=", 7) == 0) {
    return kiln_strbuf_appendf(mattr, "%s%.*s", kiln_strbuf_length(mattr) ? "," : "", (int)(n - 7),
                               word + 7);
  }
  bool off = n > 5 && strncmp(word, "-mno-", 5) == 0;
  size_t skip = off ? 5 : 2;
  char feature[64];
  if (n <= skip || strncmp(word, "-m", 2) != 0 || n - skip >= sizeof(feature)) {
    return KILN_OK;
  }
  snprintf(feature, sizeof(feature), "%.*s", (int)(n - skip), word + skip);
  if (!kiln_cpu_feature_known(feature)) {
    return KILN_OK;
  }
  return kiln_strbuf_appendf(mattr, "%s%c%s", kiln_strbuf_length(mattr) ? "," : "", off ? '-' : '+',
                             feature);
}

/* The target string's words read into `p` and `mattr`. */
static kiln_status_t parse_target(const char *target_string, parsed_t *p, kiln_strbuf_t *mattr) {
  memset(p, 0, sizeof(*p));
  const char *t = target_string ? target_string : "";
  p->c = strncmp(t, "c", 1) == 0 && (t[1] == ' ' || t[1] == '\0');
  kiln_status_t status = KILN_OK;
  while (*t && !status) {
    size_t n = strcspn(t, " \t");
    status = read_word(t, n, p, mattr);
    t += n + strspn(t + n, " \t");
  }
  return status;
}

/* The record of a parsed target: the c target's default CPU is plain
 * x86-64 (the system compiler's without -march). */
static kiln_status_t record_of_parsed(const parsed_t *p, const char *mattr, kiln_strbuf_t *out) {
  char triple[160];
  if (p->triple[0]) {
    snprintf(triple, sizeof(triple), "%s", p->triple);
  } else {
    snprintf(triple, sizeof(triple), "%s-unknown-linux-gnu", kiln_cpu_host_arch());
  }
  const char *cpu = p->cpu[0] ? p->cpu : p->c ? "x86-64" : NULL;
  return kiln_codegen_target_record(triple, cpu, NULL, mattr, out);
}

kiln_status_t kiln_codegen_target_record_of(const char *target_string, kiln_strbuf_t *out) {
  parsed_t parsed;
  kiln_strbuf_t mattr;
  kiln_strbuf_initialize(&mattr, out->allocator);
  kiln_status_t status = parse_target(target_string, &parsed, &mattr);
  if (!status) {
    status = record_of_parsed(&parsed, kiln_strbuf_c_str(&mattr), out);
  }
  kiln_strbuf_deinitialize(&mattr);
  return status;
}

kiln_status_t kiln_codegen_target_triple(const char *target_string, char *triple, size_t capacity) {
  parsed_t parsed;
  kiln_strbuf_t mattr;
  kiln_strbuf_initialize(&mattr, kiln_allocator_system());
  kiln_status_t status = parse_target(target_string, &parsed, &mattr);
  kiln_strbuf_deinitialize(&mattr);
  KILN_RETURN_IF_ERROR(status);
  snprintf(triple, capacity, "%s", parsed.triple);
  return KILN_OK;
}

/* Whether the record's features= list has `feature`. */
static bool record_has(const char *record, const char *feature) {
  const char *list = strstr(record, " features=");
  return list && kiln_cpu_list_has(list + strlen(" features="), feature);
}

kiln_status_t kiln_codegen_target_vector_bits(const char *target_string, int *out_bits) {
  *out_bits = 0;
  parsed_t parsed;
  kiln_strbuf_t mattr, record;
  kiln_strbuf_initialize(&mattr, kiln_allocator_system());
  kiln_strbuf_initialize(&record, kiln_allocator_system());
  kiln_status_t status = parse_target(target_string, &parsed, &mattr);
  const char *host = kiln_cpu_host_arch();
  size_t arch = strcspn(parsed.triple, "-");
  bool foreign =
      parsed.triple[0] && !(arch == strlen(host) && strncmp(parsed.triple, host, arch) == 0);
  bool named = parsed.cpu[0] && strcmp(parsed.cpu, "native") != 0;
  if (!status && foreign && !is_x86(parsed.triple)) {
    *out_bits = 128; /* AArch64's NEON: 128-bit vectors */
  } else if (!status && (named || foreign)) {
    status = record_of_parsed(&parsed, kiln_strbuf_c_str(&mattr), &record);
    const char *text = kiln_strbuf_c_str(&record);
    *out_bits = status                        ? 0
                : record_has(text, "avx512f") ? 512
                : record_has(text, "avx")     ? 256
                                              : 128;
  }
  kiln_strbuf_deinitialize(&mattr);
  kiln_strbuf_deinitialize(&record);
  return status;
}

kiln_status_t kiln_codegen_target_check_host(const char *target_string) {
  kiln_strbuf_t record;
  kiln_strbuf_initialize(&record, kiln_allocator_system());
  kiln_status_t status = kiln_codegen_target_record_of(target_string, &record);
  char what[300];
  snprintf(what, sizeof(what), "code for target \"%.200s\"", target_string);
  if (!status) {
    status = kiln_cpu_target_check(kiln_strbuf_c_str(&record), what);
  }
  kiln_strbuf_deinitialize(&record);
  return status;
}
