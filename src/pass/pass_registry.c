/*
 * Every pass by name: the one table kiln_pass_find reads (pass.h). A new
 * pass file adds its `kiln_pass_<name>` here, in the order the default
 * pipeline runs them.
 */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "pass/passes.h"

static const kiln_pass_t *const kiln_pass_table[] = {
#define KILN_PASS_TABLE_ENTRY_(name) &kiln_pass_##name,
    KILN_PASS_LIST(KILN_PASS_TABLE_ENTRY_)
#undef KILN_PASS_TABLE_ENTRY_
};

#define KILN_PASS_TABLE_SIZE (sizeof(kiln_pass_table) / sizeof(kiln_pass_table[0]))

kiln_status_t kiln_pass_find(const char *name, const kiln_pass_t **out_pass) {
  *out_pass = NULL;
  for (size_t i = 0; i < KILN_PASS_TABLE_SIZE; ++i) {
    if (strcmp(kiln_pass_table[i]->info.name, name) == 0) {
      *out_pass = kiln_pass_table[i];
      return KILN_OK;
    }
  }
  char known[1024] = "";
  size_t used = 0;
  for (size_t i = 0; i < KILN_PASS_TABLE_SIZE && used < sizeof(known) - 64; ++i) {
    used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                             kiln_pass_table[i]->info.name);
  }
  return KILN_STATUS(NOT_FOUND, "no pass named \"%s\"; the passes are: %s", name, known);
}
