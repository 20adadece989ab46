/*
 * stft and mel_weight_matrix: ONNX STFT and MelWeightMatrix (opset 17),
 * whose output shapes depend on the values of scalar inputs. Their
 * semantics live in the runtime (runtime/extern_spectral.c, which says
 * what they compute; stft's transform is kiln_dft_run_line, shared with
 * dft): this file keeps their type relations, and their shape functions
 * and reference kernels are the runtime's extern kernels
 * (kiln_value_shape_func, kiln_value_shape_reference), as the VM's
 * call_extern runs them (docs/vm.md).
 *
 * Both follow the dyn pattern of docs/dynamic-shapes.md without a static
 * twin: the relation sees only types (symbolic_relation), so the dims that
 * depend on values (stft's frame count, its bins without a window of a
 * static length, both of mel_weight_matrix's dims) are anonymous symbolic
 * dims, and the shape function computes them from the values at run time.
 * The graph compiler emits call_extern for them; their compute rules
 * refuse.
 */
#include <math.h>
#include <string.h>

#include "op/compute.h"
#include "op/dyn.h"
#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "runtime/scalar.h"

/* ---- shared ---- */

/* Input `index` must be one integer (or, `real`, one float) value. */
static kiln_status_t spectral_scalar_type(const kiln_type_relation_t *relation, int index,
                                          const char *what, bool real) {
  const kiln_tensor_type_t *type = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, index, &type));
  kiln_scalar_class_t want = real ? KILN_SCALAR_CLASS_FLOAT : KILN_SCALAR_CLASS_SIGNED;
  bool one = kiln_tensor_type_is_static(type);
  for (int d = 0; one && d < type->ndim; ++d) {
    one = type->shape[d] == 1;
  }
  if (!one || kiln_scalar_class(type->dtype) != want) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s (input %d) must be one %s value, not %s",
                       relation->op->name, what, index, real ? "float" : "signed integer",
                       kiln_type_text(relation->inputs[index], text));
  }
  return KILN_OK;
}

static kiln_status_t spectral_compute(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  (void)out_result;
  return KILN_STATUS(UNIMPLEMENTED,
                     "%s: its output's shape depends on its inputs' values, known only at run "
                     "time; the graph compiler does not compile it (the interpreter runs it)",
                     args->op->name);
}

/* ---- stft ---- */

static const kiln_attr_field_t kiln_stft_fields[] = {
    KILN_ATTR_FIELD(kiln_stft_attrs_t, onesided, BOOL, "True"),
};

static kiln_status_t stft_signal_type(const kiln_type_relation_t *relation,
                                      const kiln_tensor_type_t **out_signal) {
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, out_signal));
  const kiln_tensor_type_t *signal = *out_signal;
  bool channels_known = signal->ndim == 3 && (signal->vars == NULL || signal->vars[2] == NULL);
  if (!channels_known || (signal->shape[2] != 1 && signal->shape[2] != 2)) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "stft: signal %s must be (batch, length, 1 or 2): a real or complex signal",
                       kiln_type_text(relation->inputs[0], text));
  }
  if (signal->dtype != KILN_DTYPE_FLOAT32 && signal->dtype != KILN_DTYPE_FLOAT64) {
    return KILN_STATUS(INVALID_ARGUMENT, "stft: signal is %s; expected float32 or float64",
                       kiln_dtype_name(signal->dtype));
  }
  const kiln_stft_attrs_t *attrs = relation->attrs;
  if (attrs->onesided && signal->shape[2] == 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "stft: onesided takes a real signal (last dim 1), not a "
                                         "complex one");
  }
  return KILN_OK;
}

/* The window's length when it is known at import, else -1. */
static kiln_status_t stft_window_type(const kiln_type_relation_t *relation,
                                      const kiln_tensor_type_t *signal, int64_t *out_length) {
  *out_length = -1;
  if (relation->num_inputs < 4) {
    return KILN_OK;
  }
  const kiln_tensor_type_t *window = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 3, &window));
  if (window->ndim != 1 || window->dtype != signal->dtype) {
    char text[KILN_IR_TYPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "stft: window %s must be 1-D of the signal's dtype %s",
                       kiln_type_text(relation->inputs[3], text), kiln_dtype_name(signal->dtype));
  }
  if (kiln_tensor_type_is_static(window)) {
    *out_length = window->shape[0];
  }
  return KILN_OK;
}

static kiln_status_t stft_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  const kiln_stft_attrs_t *attrs = relation->attrs;
  const kiln_tensor_type_t *signal = NULL;
  int64_t window = -1;
  KILN_RETURN_IF_ERROR(stft_signal_type(relation, &signal));
  KILN_RETURN_IF_ERROR(spectral_scalar_type(relation, 1, "frame_step", false));
  KILN_RETURN_IF_ERROR(spectral_scalar_type(relation, 2, "frame_length", false));
  KILN_RETURN_IF_ERROR(stft_window_type(relation, signal, &window));
  int64_t dims[4] = {signal->shape[0], -1, -1, 2};
  const kiln_dim_var_t *vars[4] = {signal->vars ? signal->vars[0] : NULL, NULL, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_dim_var_create(relation->arena, "", -1, &vars[1]));
  if (window >= 0) {
    dims[2] = attrs->onesided ? window / 2 + 1 : window;
  } else {
    KILN_RETURN_IF_ERROR(kiln_dim_var_create(relation->arena, "", -1, &vars[2]));
  }
  return kiln_tensor_type_create_symbolic(relation->arena, signal->dtype, 4, dims, vars, out_type);
}

const kiln_op_t kiln_op_stft = {
    .name = "stft",
    .id = KILN_OP_STFT,
    .min_inputs = 3,
    .max_inputs = 4,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_stft_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_stft_fields) / sizeof(kiln_stft_fields[0])),
    .attr_fields = kiln_stft_fields,
    .infer_type = stft_infer_type,
    .correct_layout = kiln_layout_unknown_output,
    .symbolic_dims = true,
    .symbolic_relation = true,
    .shape_func = kiln_value_shape_func,
};

const kiln_op_impl_t kiln_op_stft_impl = {
    .reference = kiln_value_shape_reference,
    .compute = spectral_compute,
};

/* ---- mel_weight_matrix ---- */

static const kiln_attr_field_t kiln_mel_fields[] = {
    KILN_ATTR_FIELD(kiln_mel_weight_matrix_attrs_t, dtype, DTYPE, "\"float32\""),
};

static kiln_status_t mel_infer_type(const kiln_type_relation_t *relation,
                                    const kiln_type_t **out_type) {
  static const char *const names[5] = {"num_mel_bins", "dft_length", "sample_rate",
                                       "lower_edge_hertz", "upper_edge_hertz"};
  for (int i = 0; i < 5; ++i) {
    KILN_RETURN_IF_ERROR(spectral_scalar_type(relation, i, names[i], i >= 3));
  }
  const kiln_mel_weight_matrix_attrs_t *attrs = relation->attrs;
  if (!kiln_extern_mel_dtype_ok(attrs->dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "mel_weight_matrix: the output dtype is %s; expected float32, float64, "
                       "float16 or bfloat16",
                       kiln_dtype_name(attrs->dtype));
  }
  const int64_t dims[2] = {-1, -1};
  const kiln_dim_var_t *vars[2] = {NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_dim_var_create(relation->arena, "", -1, &vars[0]));
  KILN_RETURN_IF_ERROR(kiln_dim_var_create(relation->arena, "", -1, &vars[1]));
  return kiln_tensor_type_create_symbolic(relation->arena, attrs->dtype, 2, dims, vars, out_type);
}

const kiln_op_t kiln_op_mel_weight_matrix = {
    .name = "mel_weight_matrix",
    .id = KILN_OP_MEL_WEIGHT_MATRIX,
    .min_inputs = 5,
    .max_inputs = 5,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_mel_weight_matrix_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_mel_fields) / sizeof(kiln_mel_fields[0])),
    .attr_fields = kiln_mel_fields,
    .infer_type = mel_infer_type,
    .correct_layout = kiln_layout_unknown_output,
    .symbolic_dims = true,
    .symbolic_relation = true,
    .shape_func = kiln_value_shape_func,
};

const kiln_op_impl_t kiln_op_mel_weight_matrix_impl = {
    .reference = kiln_value_shape_reference,
    .compute = spectral_compute,
};
