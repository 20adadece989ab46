/*
 * The x86 feature table, the host's features (CPUID and XGETBV, read
 * once per process), and the check of an artifact's target record; see
 * cpu_features.h. KILN_CPU_DISABLE=a,b makes this CPU count as lacking
 * features a and b (to check an artifact against an older CPU, and for the
 * tests). Features every x86-64 CPU has (SSE, SSE2) are not listed; AMX is not either (kiln's code
 * generators never emit it, and Linux hands its tile state out only on request).
 */
#include "runtime/cpu_features.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define KILN_CPU_X86 1
#endif

/* The register state a feature needs the OS to save (XCR0 bits). */
enum { STATE_NONE = 0, STATE_AVX = 0x6, STATE_AVX512 = 0xe6 };
/* Where CPUID reports a feature. */
enum { EAX, EBX, ECX, EDX };

typedef struct feature_t {
  const char *name; /* LLVM's name */
  uint32_t leaf, subleaf;
  int reg, bit;
  uint32_t state;
} feature_t;

static const feature_t features[] = {
    {"sse3", 1, 0, ECX, 0, STATE_NONE},
    {"ssse3", 1, 0, ECX, 9, STATE_NONE},
    {"fma", 1, 0, ECX, 12, STATE_AVX},
    {"cx16", 1, 0, ECX, 13, STATE_NONE},
    {"sse4.1", 1, 0, ECX, 19, STATE_NONE},
    {"sse4.2", 1, 0, ECX, 20, STATE_NONE},
    {"movbe", 1, 0, ECX, 22, STATE_NONE},
    {"popcnt", 1, 0, ECX, 23, STATE_NONE},
    {"avx", 1, 0, ECX, 28, STATE_AVX},
    {"f16c", 1, 0, ECX, 29, STATE_AVX},
    {"bmi", 7, 0, EBX, 3, STATE_NONE},
    {"avx2", 7, 0, EBX, 5, STATE_AVX},
    {"bmi2", 7, 0, EBX, 8, STATE_NONE},
    {"avx512f", 7, 0, EBX, 16, STATE_AVX512},
    {"avx512dq", 7, 0, EBX, 17, STATE_AVX512},
    {"avx512ifma", 7, 0, EBX, 21, STATE_AVX512},
    {"avx512cd", 7, 0, EBX, 28, STATE_AVX512},
    {"avx512bw", 7, 0, EBX, 30, STATE_AVX512},
    {"avx512vl", 7, 0, EBX, 31, STATE_AVX512},
    {"avx512vbmi", 7, 0, ECX, 1, STATE_AVX512},
    {"avx512vbmi2", 7, 0, ECX, 6, STATE_AVX512},
    {"avx512vnni", 7, 0, ECX, 11, STATE_AVX512},
    {"avx512bitalg", 7, 0, ECX, 12, STATE_AVX512},
    {"avx512vpopcntdq", 7, 0, ECX, 14, STATE_AVX512},
    {"avx512fp16", 7, 0, EDX, 23, STATE_AVX512},
    {"avxvnni", 7, 1, EAX, 4, STATE_AVX},
    {"avx512bf16", 7, 1, EAX, 5, STATE_AVX512},
    {"lzcnt", 0x80000001u, 0, ECX, 5, STATE_NONE},
};
#define NUM_FEATURES (sizeof(features) / sizeof(features[0]))
_Static_assert(NUM_FEATURES <= 64, "host_features holds one bit per feature");

const char *kiln_cpu_host_arch(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

static const feature_t *feature_find(const char *name, size_t length) {
  for (size_t i = 0; i < NUM_FEATURES; ++i) {
    if (strlen(features[i].name) == length && strncmp(features[i].name, name, length) == 0) {
      return &features[i];
    }
  }
  return NULL;
}

bool kiln_cpu_feature_known(const char *name) {
  return feature_find(name, strlen(name)) != NULL;
}

const char *kiln_cpu_feature_name(int index) {
  return index >= 0 && (size_t)index < NUM_FEATURES ? features[index].name : NULL;
}

#ifdef KILN_CPU_X86
/* XCR0, or 0 when the OS has not enabled XSAVE. */
static uint64_t os_state(void) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) {
    return 0;
  }
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static bool cpuid_has(const feature_t *f, uint64_t state) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f->leaf, f->subleaf, &r[EAX], &r[EBX], &r[ECX], &r[EDX])) {
    return false;
  }
  return (r[f->reg] & (1u << f->bit)) && (state & f->state) == f->state;
}
#endif

/* The host's features, one bit per table entry, read once (CPUID traps
 * to the hypervisor in a virtual machine: not once per check). */
static uint64_t host_features;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void read_host_features(void) {
#ifdef KILN_CPU_X86
  uint64_t state = os_state();
  for (size_t i = 0; i < NUM_FEATURES; ++i) {
    host_features |= cpuid_has(&features[i], state) ? (uint64_t)1 << i : 0;
  }
#endif
}

static bool host_has(const feature_t *f) {
  pthread_once(&host_once, read_host_features);
  return (host_features >> (f - features)) & 1;
}

bool kiln_cpu_list_has(const char *list, const char *name) {
  size_t length = strlen(name);
  for (const char *p = list ? list : ""; *p;) {
    size_t n = strcspn(p, ",");
    if (n == length && strncmp(p, name, n) == 0) {
      return true;
    }
    p += n + (p[n] == ',');
  }
  return false;
}

/* The host has `f`, and KILN_CPU_DISABLE does not take it away. */
static bool usable(const feature_t *f) {
  return host_has(f) && !kiln_cpu_list_has(getenv("KILN_CPU_DISABLE"), f->name);
}

bool kiln_cpu_feature_present(const char *name) {
  const feature_t *f = feature_find(name, strlen(name));
  return f && usable(f);
}

/* The value of `key=` in a record (up to the next space), or NULL. */
static const char *record_field(const char *record, const char *key, size_t *out_length) {
  size_t key_length = strlen(key);
  for (const char *p = record; *p;) {
    size_t token = strcspn(p, " ");
    if (token > key_length && strncmp(p, key, key_length) == 0 && p[key_length] == '=') {
      *out_length = token - key_length - 1;
      return p + key_length + 1;
    }
    p += token + (p[token] == ' ');
  }
  return NULL;
}

static kiln_status_t check_arch(const char *record, const char *what) {
  size_t length = 0;
  const char *triple = record_field(record, "triple", &length);
  if (!triple) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: target record \"%s\" has no triple=", what, record);
  }
  size_t arch = strcspn(triple, "-");
  const char *host = kiln_cpu_host_arch();
  if (arch > length || strlen(host) != arch || strncmp(triple, host, arch) != 0) {
    return KILN_STATUS(FAILED_PRECONDITION, "%s was compiled for %.*s; this machine is %s", what,
                       (int)length, triple, host);
  }
  return KILN_OK;
}

static kiln_status_t check_feature(const char *name, size_t length, const char *cpu,
                                   size_t cpu_length, const char *what) {
  const feature_t *f = feature_find(name, length);
  if (!f) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s needs CPU feature \"%.*s\", which this kiln cannot check", what,
                       (int)length, name);
  }
  if (!usable(f)) {
    return KILN_STATUS(FAILED_PRECONDITION,
                       "%s was compiled for CPU %.*s and needs %s, which this CPU lacks "
                       "(recompile it here, or for a CPU this one covers: docs/cli.md)",
                       what, (int)cpu_length, cpu, f->name);
  }
  return KILN_OK;
}

kiln_status_t kiln_cpu_target_check(const char *record, const char *what) {
  KILN_RETURN_IF_ERROR(check_arch(record, what));
  size_t cpu_length = 0, length = 0;
  const char *cpu = record_field(record, "cpu", &cpu_length);
  const char *list = record_field(record, "features", &length);
  if (!cpu || !list) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: target record \"%s\" needs cpu= and features=", what,
                       record);
  }
  for (const char *p = list; p < list + length;) {
    size_t n = strcspn(p, ", ");
    if (n > 0) {
      KILN_RETURN_IF_ERROR(check_feature(p, n, cpu, cpu_length, what));
    }
    if (p[n] != ',') {
      break; /* the space or the end that ends the list */
    }
    p += n + 1;
  }
  return KILN_OK;
}

/* ---- cache sizes (sysfs) ---- */

/* The first line of cpu_dir/cpu0/cache/index<i>/<file> into `text`. */
static bool read_cache_file(const char *cpu_dir, int index, const char *file, char *text,
                            size_t capacity) {
  char path[512];
  snprintf(path, sizeof(path), "%s/cpu0/cache/index%d/%s", cpu_dir, index, file);
  FILE *f = fopen(path, "r");
  if (!f) {
    return false;
  }
  bool ok = fgets(text, (int)capacity, f) != NULL;
  fclose(f);
  text[strcspn(text, "\n")] = '\0';
  return ok;
}

/* "2048K", "480M", "32768" as bytes; 0 when it does not parse. */
static int64_t parse_cache_size(const char *text) {
  char *end = NULL;
  long long value = strtoll(text, &end, 10);
  int64_t scale = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? 1 << 30 : 1;
  if (end == text || value <= 0 || (*end && end[1])) {
    return 0;
  }
  return (int64_t)value * scale;
}

kiln_status_t kiln_cpu_cache_bytes(const char *cpu_dir, int level, int64_t *out_bytes) {
  cpu_dir = cpu_dir ? cpu_dir : "/sys/devices/system/cpu";
  *out_bytes = 0;
  char text[64], type[64], size[64];
  for (int i = 0; i < 16; ++i) {
    if (read_cache_file(cpu_dir, i, "level", text, sizeof(text)) && atoi(text) == level &&
        read_cache_file(cpu_dir, i, "type", type, sizeof(type)) &&
        strcmp(type, "Instruction") != 0 &&
        read_cache_file(cpu_dir, i, "size", size, sizeof(size))) {
      *out_bytes = parse_cache_size(size);
      if (*out_bytes > 0) {
        return KILN_OK;
      }
    }
  }
  return KILN_STATUS(NOT_FOUND, "no level-%d data cache is described under %s/cpu0/cache", level,
                     cpu_dir);
}
