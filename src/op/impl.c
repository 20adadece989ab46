/*
 * The implementation registries, derived from op_list.h as registry.c
 * derives the operator table: one entry per implemented operator, indexed
 * by id; a control operator's slot stays NULL, and so do its kernel, rule
 * and strategies.
 */
#include "op/impl.h"

static const kiln_op_impl_t *const kiln_op_impl_table[KILN_OP_COUNT_] = {
#define KILN_OP_IMPL_ENTRY_(id, name, symbol) [KILN_OP_##id] = &symbol##_impl,
    KILN_OP_LIST_IMPLEMENTED(KILN_OP_IMPL_ENTRY_)
#undef KILN_OP_IMPL_ENTRY_
};

#define KILN_OP_COUNT_ONE_(id, name, symbol) +1
_Static_assert(0 KILN_OP_LIST_IMPLEMENTED(KILN_OP_COUNT_ONE_)
                       KILN_OP_LIST_CONTROL(KILN_OP_COUNT_ONE_) == KILN_OP_COUNT_,
               "every operator of op_list.h is implemented or a control operator");
#undef KILN_OP_COUNT_ONE_

static const kiln_op_impl_t *impl_of(kiln_op_id_t id) {
  return (unsigned)id < KILN_OP_COUNT_ ? kiln_op_impl_table[id] : NULL;
}

kiln_op_reference_fn kiln_op_reference_get(kiln_op_id_t id) {
  const kiln_op_impl_t *impl = impl_of(id);
  return impl ? impl->reference : NULL;
}

kiln_op_compute_fn kiln_op_compute_get(kiln_op_id_t id) {
  const kiln_op_impl_t *impl = impl_of(id);
  return impl ? impl->compute : NULL;
}

kiln_op_schedule_fn kiln_op_strategy_get(kiln_op_id_t id, kiln_target_kind_t kind) {
  const kiln_op_impl_t *impl = impl_of(id);
  return impl && (unsigned)kind < KILN_TARGET_KIND_COUNT_ ? impl->strategies[kind] : NULL;
}
