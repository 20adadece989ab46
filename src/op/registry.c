/*
 * The registry table, derived from op_list.h. Lookup by id is an index; by
 * name a linear scan of ~110 entries, done once per imported node.
 */
#include <string.h>

#include "op/op.h"

static const kiln_op_t *const kiln_op_table[] = {
#define KILN_OP_TABLE_ENTRY_(id, name, symbol) &symbol,
    KILN_OP_LIST(KILN_OP_TABLE_ENTRY_)
#undef KILN_OP_TABLE_ENTRY_
};

_Static_assert(sizeof(kiln_op_table) / sizeof(kiln_op_table[0]) == KILN_OP_COUNT_,
               "one registry entry per operator of op_list.h");

const kiln_op_t *kiln_op_get(kiln_op_id_t id) {
  return (unsigned)id < KILN_OP_COUNT_ ? kiln_op_table[id] : NULL;
}

int kiln_op_count(void) {
  return KILN_OP_COUNT_;
}

kiln_status_t kiln_op_find(const char *name, const kiln_op_t **out_op) {
  for (int i = 0; i < KILN_OP_COUNT_; ++i) {
    if (strcmp(kiln_op_table[i]->name, name) == 0) {
      *out_op = kiln_op_table[i];
      return KILN_OK;
    }
  }
  *out_op = NULL;
  return KILN_STATUS(NOT_FOUND, "no operator named '%s'", name);
}
