/*
 * Compute rules and schedules: how an operator becomes loop IR.
 *
 * As in TVM's op strategies (compute, then schedule, then lower),
 * every registry operator has a compute rule, which builds its outputs
 * as tensor expressions (te/te.h) over placeholder tensors of its input
 * types, and may have a schedule strategy, which arranges the loops of
 * those tensors for a kind of target (te/schedule.h); both are entries of
 * the implementation registries (op/impl.h). An operator without its own
 * schedule gets the default CPU schedule, which every compute rule must
 * lower correctly under: stages that are not outputs or reductions are
 * inlined into their consumers; every other stage fuses its data-parallel
 * axes into one loop and then, for a reduction, runs that loop in parallel
 * with the reduction inside it, and otherwise splits it by the target's
 * vector width into a parallel outer loop and a vectorized inner one (a
 * guarded tail where the width does not divide; less than one vector of
 * work stays a serial loop). Extern ops (sorting,
 * scans, scatters) keep their hand-written loops.
 *
 * kiln_op_lower runs the whole path for one operator: placeholders of the
 * input types, the compute rule, its outputs checked against the type
 * relation's, the schedule, and te lowering into a PrimFunc whose
 * parameters are the inputs then the outputs (a tuple type's fields in
 * order). That function is what the loop-IR interpreter, the code
 * generators and the tests run.
 *
 * The helpers below are shared by the compute rules of every family: the
 * output shape of the inferred type, NumPy broadcasting of an input's
 * indices, and the elementwise template most operators are.
 */
#ifndef KILN_OP_COMPUTE_H_
#define KILN_OP_COMPUTE_H_

#include "op/impl.h"
#include "op/op.h"
#include "op/schedule_config.h"
#include "te/schedule.h"

/* Largest number of outputs of one operator (split's sections, topk's two). */
#define KILN_COMPUTE_MAX_OUTPUTS KILN_TE_MAX_INPUTS

_Static_assert(KILN_OP_MAX_FUNCTION_ARGS <= KILN_TE_MAX_INPUTS,
               "a kernel's arguments must fit in one compute's inputs");
_Static_assert(KILN_OP_MAX_FUNCTION_COMPUTES - 1 + KILN_OP_MAX_ANCHOR_STAGES <= KILN_TE_MAX_STAGES,
               "the stages of a fused group's calls must fit in one schedule");

struct kiln_compute_args_t {
  const kiln_op_t *op;
  const void *attrs;
  kiln_arena_t *arena; /* for every tensor and node */
  int num_inputs;
  const kiln_te_tensor_t *const *inputs; /* placeholders (or earlier outputs) */
  const kiln_type_t *output_type;        /* inferred: a tensor, or a tuple of tensors */
};

struct kiln_compute_result_t {
  int num_outputs;
  const kiln_te_tensor_t *outputs[KILN_COMPUTE_MAX_OUTPUTS];
};

/* What a schedule may assume about the CPU: the target description the
 * compiler derives from the target string (kiln_compiler_schedule_target)
 * or from the host. Fields left 0 take the defaults below. */
struct kiln_schedule_target_t {
  int vector_bits;            /* width of one vector register: 512 on AVX-512, 256 on AVX2 */
  int vector_registers;       /* 0: 32 with 512-bit vectors, else 16 (x86's ymm/xmm files) */
  int num_cores;              /* cores a parallel loop spreads over; 0: unknown */
  int64_t l2_bytes;           /* one core's L2 cache; 0: unknown */
  int64_t shared_cache_bytes; /* the last-level cache the cores share; 0: unknown */
  /* The knobs a tunable schedule applies instead of its default rule, when
   * set and of its template (op/schedule_config.h); NULL: the default. */
  const kiln_schedule_config_t *config;
  /* When set, a tunable schedule writes its space here (its template,
   * default and choices); the template stays NONE for any other schedule. */
  kiln_schedule_space_t *out_space;
  /* The kind of target, whose schedule strategies apply (op/impl.h); 0:
   * the x86 CPU. */
  kiln_target_kind_t kind;
  /* A graph-level knob's record (a pass's layout choice, such as
   * pack_dense's block: template DENSE_PACK): the configuration tuned for
   * `workload` (the pass's text of the operator and its shapes), or NULL
   * for the default of `space`; NULL when there are no records. The
   * compiler sets it from the tuning records; `layout_records` is its
   * first argument. */
  const kiln_schedule_config_t *(*find_layout)(const void *layout_records, const char *workload,
                                               const kiln_schedule_space_t *space);
  const void *layout_records;
};

/* The host: 512-bit vectors and 32 registers on AVX-512, 256 bits and 16
 * registers on AVX, else 128 bits; its online cores; its L2 and L3 as
 * sysfs describes them (runtime/cpu_features.h). */
kiln_schedule_target_t kiln_schedule_target_host(void);
/* The target's vector registers (vector_registers, or its default). */
int kiln_schedule_vector_registers(const kiln_schedule_target_t *target);
/* A count of vector registers a rule states for a 32-register file (a
 * register tile's accumulators), scaled to the target's: 24 is 12 on AVX2. */
int64_t kiln_schedule_scale_registers(const kiln_schedule_target_t *target, int64_t count32);
/* Lanes of one vector of `dtype` (bool as 8 bits), at least 1. */
int kiln_schedule_lanes(const kiln_schedule_target_t *target, kiln_dtype_t dtype);
/* The narrowest last axis the default schedule vectorizes by, when it is
 * narrower than the target's vector (compute.c). */
#define KILN_SCHEDULE_MIN_BLOCK_LANES 4

/* Runs the operator's compute rule (op/impl.h's registry) and checks its
 * outputs against args->output_type (count, dtype, shape); errors name the
 * operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_compute(const kiln_compute_args_t *args,
                                                   kiln_compute_result_t *out_result);
/* kiln_op_compute with `rule` for args->op's (NULL: UNIMPLEMENTED), so a
 * rule is checked the same way whatever registered it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_compute_with(kiln_op_compute_fn rule,
                                                        const kiln_compute_args_t *args,
                                                        kiln_compute_result_t *out_result);

/* Fuses `count` axes of `st` (outermost first, adjacent in its loop order)
 * into one loop; count >= 1. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_fuse_axes(kiln_te_schedule_t *s,
                                                           kiln_te_stage_t *st, int count,
                                                           const kiln_te_iter_var_t *const *axes,
                                                           const kiln_te_iter_var_t **out_fused);
/* The default CPU schedule described above, applied to every stage. */
KILN_MUST_USE_RESULT kiln_status_t kiln_schedule_default(const kiln_schedule_target_t *target,
                                                         kiln_te_schedule_t *schedule);

/* Infers the output type, computes, schedules (the operator's schedule, or
 * the default) and lowers to a PrimFunc `name`: parameters are the inputs,
 * then the outputs. Everything lives in `arena`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_op_lower(const kiln_op_t *op, const void *attrs,
                                                 int num_inputs,
                                                 const kiln_type_t *const *input_types,
                                                 const kiln_schedule_target_t *target,
                                                 kiln_arena_t *arena, const char *name,
                                                 const kiln_tir_prim_func_t **out_func);

/* ---- helpers for compute rules ---- */

/* Output `index` of the inferred type (field `index` of a tuple, or the
 * tensor itself for index 0); INVALID_ARGUMENT naming the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_output_type(const kiln_compute_args_t *args,
                                                            int index,
                                                            const kiln_tensor_type_t **out_type);

/* "T_<name>" for operator "nn.<name>" or "<name>" (TVM's T_add, T_relu)
 * into `buffer` of `size` bytes; returns the buffer. */
const char *kiln_compute_tensor_name(const kiln_op_t *op, char *buffer, size_t size);

/* The indices into `input` for output indices `out_indices` (rank
 * out_ndim) under NumPy broadcasting: dims aligned from the right, a dim of
 * extent 1 read at 0. Writes input->ndim expressions. */
void kiln_compute_broadcast_indices(kiln_tir_builder_t *b, const kiln_te_tensor_t *input,
                                    int out_ndim, const kiln_tir_expr_t *const *out_indices,
                                    const kiln_tir_expr_t **out_input_indices);

/* The operator's one output, of the inferred type and named T_<op>, whose
 * element at each index is fcompute(indices, user), reading every input. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_one(const kiln_compute_args_t *args,
                                                    kiln_te_fcompute_fn fcompute, void *user,
                                                    kiln_compute_result_t *out_result);

/* UNIMPLEMENTED naming the operator unless input 0 is float32: for the
 * operators whose reference kernels handle float32 only. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_require_float32(const kiln_compute_args_t *args);

/* min(max(x, lo), hi) and lo <= x < hi, for int32 index expressions (a
 * select evaluates both sides, so a load under one reads at a clamped index). */
const kiln_tir_expr_t *kiln_compute_clamp(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                          int64_t lo, int64_t hi);
const kiln_tir_expr_t *kiln_compute_in_range(kiln_tir_builder_t *b, const kiln_tir_expr_t *x,
                                             int64_t lo, int64_t hi);

/* The scalar function of an elementwise operator: the value from one
 * loaded value per input. */
typedef const kiln_tir_expr_t *(*kiln_compute_scalar_fn)(kiln_tir_builder_t *b,
                                                         const kiln_tir_expr_t *const *values,
                                                         const kiln_compute_args_t *args);

/* One output of the inferred type whose element at each index is `fn` of
 * every input read there with broadcasting; a value whose dtype differs
 * from the output's is cast to it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_compute_elemwise(const kiln_compute_args_t *args,
                                                         const char *name,
                                                         kiln_compute_scalar_fn fn,
                                                         kiln_compute_result_t *out_result);

#endif /* KILN_OP_COMPUTE_H_ */
