/*
 * The default pipeline (pipeline.h): KILN_PASS_LIST expanded into a static
 * array, so adding a pass to the list adds it here in the same place. The
 * opt-in passes (opt_level 4, above what a context allows) are required
 * here when the option of their name is "1": "fast_math" = "1",
 * "combine_parallel_conv2d" = "1".
 */
#include "pass/pipeline.h"

#include <string.h>

#include "pass/passes.h"

static const kiln_pass_t *const kiln_pass_pipeline[] = {
#define KILN_PASS_PIPELINE_ENTRY_(name) &kiln_pass_##name,
    KILN_PASS_LIST(KILN_PASS_PIPELINE_ENTRY_)
#undef KILN_PASS_PIPELINE_ENTRY_
};

void kiln_pass_default_pipeline(const kiln_pass_t *const **out_passes, int *out_count) {
  *out_passes = kiln_pass_pipeline;
  *out_count = (int)(sizeof(kiln_pass_pipeline) / sizeof(kiln_pass_pipeline[0]));
}

kiln_status_t kiln_pass_run_default_pipeline(kiln_module_t *module, kiln_pass_context_t *context) {
  const kiln_pass_t *const *passes = NULL;
  int count = 0;
  kiln_pass_default_pipeline(&passes, &count);
  for (int i = 0; i < count; ++i) {
    const char *name = passes[i]->info.name;
    if (passes[i]->info.opt_level > 3 &&
        strcmp(kiln_pass_context_option(context, name, "0"), "1") == 0) {
      KILN_RETURN_IF_ERROR(kiln_pass_context_require(context, name));
    }
  }
  return kiln_pass_sequential_run(module, context, passes, count);
}
