/*
 * The table of code-generation targets; see target.h. A target string is
 * "<name>[ <options>]"; the name must match a target's exactly. The LLVM
 * target is in the table when kiln was built with LLVM (KILN_HAVE_LLVM,
 * cmake/KilnLlvm.cmake); it is then the default.
 */
#include "codegen/target.h"

#include <stdbool.h>
#include <string.h>

#ifdef KILN_HAVE_LLVM
#include <llvm/Config/llvm-config.h>
#endif

static const kiln_codegen_target_t *const targets[] = {
    &kiln_codegen_target_c,
#ifdef KILN_HAVE_LLVM
    &kiln_codegen_target_llvm,
#endif
};

const char *kiln_codegen_default_target(void) {
#ifdef KILN_HAVE_LLVM
  return "llvm";
#else
  return "c -march=native";
#endif
}

const char *kiln_codegen_default_jit_target(void) {
#ifdef KILN_HAVE_LLVM
  return "llvm -jit -noasm";
#else
  return "c -march=native";
#endif
}

const char *kiln_codegen_llvm_version(void) {
#ifdef KILN_HAVE_LLVM
  return LLVM_VERSION_STRING;
#else
  return NULL;
#endif
}

/* Whether the `length` characters at `word` are one of `words`. */
static bool is_one_of(const char *word, size_t length, const char *words) {
  while (*words) {
    size_t n = strcspn(words, " ");
    if (n == length && strncmp(words, word, length) == 0) {
      return true;
    }
    words += n + (words[n] == ' ');
  }
  return false;
}

kiln_status_t kiln_codegen_target_code(const char *target_string, kiln_strbuf_t *sb) {
  const kiln_codegen_target_t *target = NULL;
  const char *options = NULL;
  KILN_RETURN_IF_ERROR(kiln_codegen_target_find(target_string, &target, &options));
  KILN_RETURN_IF_ERROR(kiln_strbuf_append(sb, target->name));
  while (*options) {
    options += strspn(options, " ");
    size_t length = strcspn(options, " ");
    if (length && !is_one_of(options, length, target->delivery_words)) {
      KILN_RETURN_IF_ERROR(kiln_strbuf_appendf(sb, " %.*s", (int)length, options));
    }
    options += length;
  }
  return KILN_OK;
}

kiln_status_t kiln_codegen_target_find(const char *target_string,
                                       const kiln_codegen_target_t **out_target,
                                       const char **out_options) {
  *out_target = NULL;
  *out_options = "";
  const char *text = target_string ? target_string : "";
  size_t length = strcspn(text, " ");
  char known[128] = "";
  for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); ++i) {
    if (strlen(targets[i]->name) == length && strncmp(targets[i]->name, text, length) == 0) {
      *out_target = targets[i];
      *out_options = text + length + (text[length] == ' ');
      return KILN_OK;
    }
    strcat(known, i ? ", " : "");
    strcat(known, targets[i]->name);
  }
  if (length == 4 && strncmp(text, "llvm", 4) == 0) {
    return KILN_STATUS(NOT_FOUND,
                       "code-generation target \"%s\": kiln was built without LLVM (known: %s)",
                       text, known);
  }
  return KILN_STATUS(NOT_FOUND, "unknown code-generation target \"%s\" (known: %s)", text, known);
}

kiln_status_t kiln_codegen_build(kiln_allocator_t allocator, const char *target_string,
                                 const kiln_tir_prim_func_t *const *funcs, int num_funcs,
                                 kiln_runtime_module_t **out_module) {
  *out_module = NULL;
  const kiln_codegen_target_t *target = NULL;
  const char *options = NULL;
  KILN_RETURN_IF_ERROR(kiln_codegen_target_find(target_string, &target, &options));
  return target->build(allocator, funcs, num_funcs, options, out_module);
}
