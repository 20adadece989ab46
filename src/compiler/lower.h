/*
 * Lowering a function of the graph IR to one PrimFunc: how a fused group
 * (a primitive function made by fuse_ops) becomes one kernel (TVM's
 * LowerToTE / ScheduleBuilder: each op's compute, the anchor op's schedule,
 * then lowering).
 *
 * The function's parameters become placeholders; its body is walked in the
 * canonical order and every operator call runs its compute rule
 * (op/compute.h) on the tensors of its arguments, so the group is one graph
 * of tensor expressions. A Constant in the body becomes a compute of its
 * value when it has one element (a scalar in the kernel); larger constants
 * must be parameters (fuse_ops passes weights as arguments). Tuples and
 * TupleGetItem only route tensors.
 *
 * The anchor is the call with the highest fusion pattern (TVM's
 * OpPatternKind: a conv or dense over the elementwise ops after it, a
 * reduction over its injective inputs), the first one on a tie. Its
 * operator's schedule (or the default CPU schedule) is applied to the whole
 * group: the tuned x86 schedules take the group's output as the tile they
 * write and inline the epilogue (op/schedule_x86.c); the default schedule
 * inlines every stage that is neither an output nor a reduction. The
 * PrimFunc's parameters are the function's parameters, then its outputs
 * (the fields of a tuple result, in order).
 *
 * A function whose parameters have symbolic dims is lowered at probe sizes
 * and generalized into one kernel over run-time extents (lower_symbolic.c);
 * when the anchor's schedule does not generalize (it chose other tiles for
 * other sizes), the default schedule is used.
 */
#ifndef KILN_COMPILER_LOWER_H_
#define KILN_COMPILER_LOWER_H_

#include "ir/expr.h"
#include "op/compute.h"
#include "tir/tir.h"

/* Lowers a typed function (kiln_ir_infer_types has run) into `arena`.
 * INVALID_ARGUMENT naming the node for what a kernel cannot hold: a
 * non-tensor parameter, a call of a function, a constant of more than one
 * element, more than KILN_TE_MAX_INPUTS arguments to an op. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_lower_function(
    const kiln_function_t *function, const kiln_schedule_target_t *target, kiln_arena_t *arena,
    const char *name, const kiln_tir_prim_func_t **out_func);

/* The same for a function whose parameters have static shapes only. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_lower_static(
    const kiln_function_t *function, const kiln_schedule_target_t *target, kiln_arena_t *arena,
    const char *name, const kiln_tir_prim_func_t **out_func);

/* One probe run of a symbolic kernel (lower_symbolic.c): a static function
 * lowered with every split guarded and nothing simplified (te/schedule.h's
 * probe), with the default CPU schedule for every group when
 * `default_schedule` (the fallback when the anchor's own schedule does not
 * generalize). */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_lower_probe(const kiln_function_t *function,
                                                             const kiln_schedule_target_t *target,
                                                             bool default_schedule,
                                                             kiln_arena_t *arena, const char *name,
                                                             const kiln_tir_prim_func_t **out_func);

/* Whether `function` lowers over run-time extents: a parameter has a
 * symbolic dim, or it is one call of a dyn operator whose output extents
 * are probed (op/dyn.h, kiln_dyn_has_probe). */
bool kiln_compiler_function_is_symbolic(const kiln_function_t *function);

/* A function whose parameters have symbolic dims (compiler/lower_symbolic.c):
 * lowered at probe sizes and generalized (tir/generalize.h) into one kernel
 * whose extents are read from its arguments' shapes at run time.
 * kiln_compiler_lower_function sends such functions here. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compiler_lower_symbolic(
    const kiln_function_t *function, const kiln_schedule_target_t *target, kiln_arena_t *arena,
    const char *name, const kiln_tir_prim_func_t **out_func);

/* What the schedules may assume of the code `target_string` makes: the
 * vector width of the CPU it names (kiln_codegen_target_vector_bits: 128
 * for aarch64's NEON, 256 for an AVX2 level, ...), else this CPU's. */
KILN_MUST_USE_RESULT kiln_status_t
kiln_compiler_schedule_target(const char *target_string, kiln_schedule_target_t *out_target);

#endif /* KILN_COMPILER_LOWER_H_ */
