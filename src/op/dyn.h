/*
 * Helpers the operators whose output shape depends on input values share
 * (dyn.c, dyn_resize.c, value_shape.c): the import-time type of `rank`
 * anonymous dims, and the compute rule that refuses them on the graph
 * compiler's path.
 */
#ifndef KILN_OP_DYN_H_
#define KILN_OP_DYN_H_

#include "ir/expr.h"
#include "op/compute.h"
#include "op/op.h"

/* A tensor type of `rank` anonymous symbolic dims ("?"). */
/* dyn.strided_slice's own attribute: set only in the compiler's probe
 * runs (kiln_dyn_probe_call), where it fixes the output's type. */
typedef struct kiln_dyn_slice_attrs_t {
  kiln_ints_t out_shape; /* [] (the output's dims are known at run time), or a probe's shape */
} kiln_dyn_slice_attrs_t;

/* dyn.strided_slice's compute rule (dyn_compute.c): with out_shape set, a
 * gather whose start and step per dim are read from the begin, strides and
 * axes inputs in the kernel; UNIMPLEMENTED without it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_compute_slice(const kiln_compute_args_t *args,
                                                          kiln_compute_result_t *out_result);

/* dyn.arange's attributes: the output dtype, and out_shape as
 * dyn.strided_slice's (set only in the compiler's probe runs). */
typedef struct kiln_dyn_arange_attrs_t {
  kiln_dtype_t dtype;
  kiln_ints_t out_shape;
} kiln_dyn_arange_attrs_t;

/* dyn.arange's compute rule (dyn_compute.c): with out_shape set, element i
 * is start + i * step from the start and step inputs read in the kernel,
 * converted as arange's; UNIMPLEMENTED without it. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_compute_arange(const kiln_compute_args_t *args,
                                                           kiln_compute_result_t *out_result);

/* dyn.pad's compute rule (dyn_compute.c): in a probe run (`probe`), nn.pad's
 * mapping in pad mode `mode` (kiln_shape_pad_mode) with the befores read
 * from the pads input and the fill from the value input in the kernel;
 * UNIMPLEMENTED otherwise. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_compute_pad(const kiln_compute_args_t *args, int mode,
                                                        bool probe,
                                                        kiln_compute_result_t *out_result);

KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_symbolic_type(kiln_arena_t *arena, kiln_dtype_t dtype,
                                                          int rank, const kiln_type_t **out_type);

/* UNIMPLEMENTED naming the operator: it reads values at run time that the
 * graph compiler would need at build time. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_compute_refuse(const kiln_compute_args_t *args,
                                                           kiln_compute_result_t *out_result);

/* INVALID_ARGUMENT unless input `index` is a tensor of rank <= 1 (a list
 * or one value) of a float dtype (want_float) or an integer one, naming the
 * operator, the input and `what`. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_check_list(const kiln_type_relation_t *relation,
                                                       int index, const char *what,
                                                       bool want_float);

/* The integer attribute a dyn operator's runtime shape function
 * (runtime/shape_func.h) takes: dyn.reshape's allowzero, dyn.one_hot's
 * axis, dyn.sum's keepdims, dyn.pad's mode (kiln_shape_pad_mode), else 0. The VM code generator
 * passes it to the shape_func instruction. */
int64_t kiln_dyn_shape_func_attr(const kiln_op_t *op, const void *attrs);

/* The attributes of a call of `op` as its runtime extern kernel
 * (runtime/extern_kernel.h) takes them, into out_attrs (at most
 * KILN_EXTERN_MAX_ATTRS); their count (op/value_shape.c). */
int kiln_value_shape_extern_attrs(const kiln_op_t *op, const void *attrs, int64_t *out_attrs);

/* dyn.resize's attributes as its extern kernel takes them
 * (kiln_resize_rule_encode: KILN_RESIZE_RULE_ATTRS values). */
void kiln_dyn_resize_extern_attrs(const void *attrs, int64_t *out_attrs);

/* dyn.split's axis, its extern kernel's one attribute (runtime/
 * extern_split.c). */
int64_t kiln_dyn_split_axis(const void *attrs);

/* The shape function and reference kernel of an operator the runtime has
 * an extern kernel for (nonzero, unique, vision.non_max_suppression, stft,
 * mel_weight_matrix, dyn.resize): the extern kernel's shapes (a tensor type, or a
 * tuple of them) and its fill (op/value_shape.c). */
KILN_MUST_USE_RESULT kiln_status_t kiln_value_shape_func(const kiln_shape_func_args_t *args,
                                                         const kiln_type_t **out_type);
KILN_MUST_USE_RESULT kiln_status_t kiln_value_shape_reference(const kiln_kernel_args_t *args);

/* Whether the compiler can lower `op` (a dyn operator) over run-time
 * output extents: its static operator takes the output's shape as an
 * attribute (dyn.broadcast_to), or it does itself (out_shape:
 * dyn.strided_slice, dyn.arange, dyn.one_hot, dyn.sum, dyn.pad). */
bool kiln_dyn_has_probe(const kiln_op_t *op);

/* The static call a dyn call of such an operator stands for when its output
 * has the static type `out` (probe sizes at its symbolic dims), over
 * `args` (the call's data arguments, already in `module`): what a probe run
 * of compiler/lower_symbolic.c lowers. UNIMPLEMENTED for other operators. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dyn_probe_call(kiln_module_t *module,
                                                       const kiln_call_t *call,
                                                       kiln_expr_t *const *args,
                                                       const kiln_tensor_type_t *out,
                                                       kiln_call_t **out_call);

#endif /* KILN_OP_DYN_H_ */
