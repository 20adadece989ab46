/*
 * The implementations of the operators, apart from their definitions.
 *
 * An operator's definition (op/op.h: its name, inputs, typed attributes,
 * type relation, layout rule, pattern kind) says what it is; how it is run
 * lives in three registries keyed by its id, as in TVM, where FTVMCompute
 * and FTVMStrategy are attributes registered per operator apart from its
 * Op node:
 *
 * - the reference kernels: the slow, obviously correct implementation the
 *   interpreter and constant folding run (through kiln_op_evaluate) and
 *   every fast path is checked against;
 * - the compute rules: tensor expressions of the outputs, from which the
 *   compiler lowers a call (op/compute.h);
 * - the schedule strategies, keyed by operator and target kind: the
 *   schedule that arranges a compute's loops for that kind of target, NULL
 *   where the default schedule (kiln_schedule_default) serves. The CPU is
 *   the one kind today, with the x86 schedules (which the code generators'
 *   other CPUs, aarch64, take too); a new kind of target adds its column
 *   of strategies without touching a definition.
 *
 * Each operator with implementations (KILN_OP_LIST_IMPLEMENTED in
 * op_list.h: all but the control operators) defines one kiln_op_impl_t,
 * `symbol`_impl, next to its definition in its family's file; the
 * registries are a table of those entries indexed by id (impl.c), so an
 * operator whose entry is missing does not link. That every entry has a
 * reference kernel and a compute rule is tests/op/test_impl_registry.c's
 * check.
 */
#ifndef KILN_OP_IMPL_H_
#define KILN_OP_IMPL_H_

#include "op/op.h"

/* The kinds of target a schedule strategy is written for. */
typedef enum kiln_target_kind_e {
  KILN_TARGET_KIND_CPU = 0, /* CPUs: the x86 schedules, which serve aarch64 too */
  KILN_TARGET_KIND_COUNT_
} kiln_target_kind_t;

/* One operator's entries in the three registries. */
typedef struct kiln_op_impl_t {
  kiln_op_reference_fn reference;
  kiln_op_compute_fn compute;
  /* Per target kind; NULL: kiln_schedule_default. */
  kiln_op_schedule_fn strategies[KILN_TARGET_KIND_COUNT_];
} kiln_op_impl_t;

/* Every implemented operator's entry, defined in the family files. */
#define KILN_OP_IMPL_DECLARE_(id, name, symbol) extern const kiln_op_impl_t symbol##_impl;
KILN_OP_LIST_IMPLEMENTED(KILN_OP_IMPL_DECLARE_)
#undef KILN_OP_IMPL_DECLARE_

/* The operator's reference kernel; NULL for a control operator or an id
 * out of range. */
kiln_op_reference_fn kiln_op_reference_get(kiln_op_id_t id);
/* The operator's compute rule; NULL as for the reference kernel. */
kiln_op_compute_fn kiln_op_compute_get(kiln_op_id_t id);
/* The operator's schedule for targets of `kind`; NULL where the default
 * schedule serves (or the id or kind is out of range). */
kiln_op_schedule_fn kiln_op_strategy_get(kiln_op_id_t id, kiln_target_kind_t kind);

#endif /* KILN_OP_IMPL_H_ */
