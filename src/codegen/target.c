/*
 * The table of code-generation targets; see target.h. A target string is
 * "<name>[ <options>]"; the name must match a target's exactly.
 */
#include "codegen/target.h"

#include <string.h>

static const kiln_codegen_target_t *const targets[] = {&kiln_codegen_target_c};

kiln_status_t kiln_codegen_target_find(const char *target_string,
                                       const kiln_codegen_target_t **out_target,
                                       const char **out_options) {
  *out_target = NULL;
  *out_options = "";
  const char *text = target_string ? target_string : "";
  size_t length = strcspn(text, " ");
  for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); ++i) {
    if (strlen(targets[i]->name) == length && strncmp(targets[i]->name, text, length) == 0) {
      *out_target = targets[i];
      *out_options = text + length + (text[length] == ' ');
      return KILN_OK;
    }
  }
  return KILN_STATUS(NOT_FOUND, "unknown code-generation target \"%s\" (known: c)", text);
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
