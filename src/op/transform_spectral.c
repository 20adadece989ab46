/*
 * stft and mel_weight_matrix: ONNX STFT and MelWeightMatrix (opset 17),
 * whose output shapes depend on the values of scalar inputs.
 *
 * stft(signal, frame_step, frame_length, [window]) cuts the signal
 * (batch, length, 1 or 2: real, or real and imaginary) into frames of
 * frame_length samples starting every frame_step samples (as many as fit:
 * 1 + (length - frame_length) / frame_step), weighs each by the window
 * (none: ones) and transforms each as dft does, with the transform's
 * length frame_length (kiln_dft_run_line, transform_dft.c: one meaning of
 * the transform). The output is (batch, frames, bins, 2), bins
 * frame_length / 2 + 1 when onesided (a real signal only), else
 * frame_length. A frame_length of 0 means the window's length (or, with
 * no window, the signal's), for ONNX's omitted input.
 *
 * mel_weight_matrix(num_mel_bins, dft_length, sample_rate,
 * lower_edge_hertz, upper_edge_hertz) is the (dft_length / 2 + 1,
 * num_mel_bins) matrix of triangular filters: the mel range from
 * mel(lower) to mel(upper), mel(f) = 2595 log10(1 + f / 700), cut into
 * num_mel_bins + 2 equal steps, each point mapped back to hertz and to the
 * spectrogram bin floor((dft_length + 1) f / sample_rate); filter i rises
 * from 0 at point i to 1 at point i + 1 and falls to 0 at point i + 2. The
 * mel edges and the step are computed in float32 and the points in
 * float64, as ONNX's reference does, so the bins come out the same.
 *
 * Both follow the dyn pattern of docs/dynamic-shapes.md without a static
 * twin: the relation sees only types (symbolic_relation), so the dims that
 * depend on values (stft's frame count, its bins without a window of a
 * static length, both of mel_weight_matrix's dims) are anonymous symbolic
 * dims, and the shape function computes them from the values at run time.
 * The interpreter runs them; the graph compiler refuses the symbolic dims
 * before it reaches their compute rules, which refuse as well.
 */
#include <math.h>
#include <string.h>

#include "op/compute.h"
#include "op/scalar.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"

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

static double spectral_value(const kiln_tensor_t *tensor) {
  kiln_scalar_kind_t kind = kiln_scalar_kind(kiln_tensor_dtype(tensor));
  return kiln_scalar_to_double(kiln_scalar_load(kind, kiln_tensor_data(tensor), 0));
}

/* A count input's value, which must be a whole number in [lo, INT32_MAX]. */
static kiln_status_t spectral_count(const kiln_op_t *op, const kiln_tensor_t *tensor,
                                    const char *what, int64_t lo, int64_t *out_value) {
  double value = spectral_value(tensor);
  if (!(value >= (double)lo && value <= (double)INT32_MAX)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s is %g; expected a count in [%lld, %d]", op->name,
                       what, value, (long long)lo, INT32_MAX);
  }
  *out_value = (int64_t)value;
  return KILN_OK;
}

/* The output the caller allocated must be of `dtype` and `dims`. */
static kiln_status_t spectral_output_check(const kiln_kernel_args_t *args, kiln_dtype_t dtype,
                                           int ndim, const int64_t *dims) {
  const kiln_tensor_t *out = args->outputs[0];
  if (kiln_tensor_dtype(out) != dtype ||
      !kiln_shape_equal(ndim, dims, kiln_tensor_ndim(out), kiln_tensor_shape(out))) {
    char want[KILN_SHAPE_TEXT_CAPACITY], have[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(ndim, dims, want, sizeof(want));
    kiln_shape_format(kiln_tensor_ndim(out), kiln_tensor_shape(out), have, sizeof(have));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the inputs give a %s output %s, not %s %s",
                       args->op->name, kiln_dtype_name(dtype), want,
                       kiln_dtype_name(kiln_tensor_dtype(out)), have);
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

/* stft resolved against its inputs' values. */
typedef struct stft_plan_t {
  int64_t batch, length, channels;
  int64_t step, frames;
  kiln_dft_plan_t dft; /* one frame: length = samples = frame_length */
} stft_plan_t;

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

/* The frame length from the frame_length input's value (0: the window's
 * length, or the signal's without a window), checked against the window. */
static kiln_status_t stft_frame_length(const kiln_op_t *op, int num_inputs,
                                       kiln_tensor_t *const *inputs, int64_t length,
                                       int64_t *out_frame_length) {
  int64_t frame_length = 0;
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs[2], "frame_length", 0, &frame_length));
  const kiln_tensor_t *window = num_inputs > 3 ? inputs[3] : NULL;
  int64_t window_length = window ? kiln_tensor_shape(window)[0] : -1;
  if (frame_length == 0) {
    frame_length = window ? window_length : length;
  }
  if (window && window_length != frame_length) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "stft: the window has %lld samples but frame_length is %lld",
                       (long long)window_length, (long long)frame_length);
  }
  if (frame_length < 1 || frame_length > length) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "stft: frame_length %lld is not in [1, %lld] (the signal's length)",
                       (long long)frame_length, (long long)length);
  }
  *out_frame_length = frame_length;
  return KILN_OK;
}

static kiln_status_t stft_plan_of(const kiln_op_t *op, const kiln_stft_attrs_t *attrs,
                                  int num_inputs, kiln_tensor_t *const *inputs,
                                  stft_plan_t *out_plan) {
  const int64_t *shape = kiln_tensor_shape(inputs[0]);
  if (kiln_tensor_ndim(inputs[0]) != 3 || (shape[2] != 1 && shape[2] != 2)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the signal must be (batch, length, 1 or 2)",
                       op->name);
  }
  stft_plan_t plan = {.batch = shape[0], .length = shape[1], .channels = shape[2]};
  int64_t frame_length = 0;
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs[1], "frame_step", 1, &plan.step));
  KILN_RETURN_IF_ERROR(stft_frame_length(op, num_inputs, inputs, plan.length, &frame_length));
  plan.frames = 1 + (plan.length - frame_length) / plan.step;
  plan.dft = (kiln_dft_plan_t){.axis = 1,
                               .length = frame_length,
                               .samples = frame_length,
                               .bins = attrs->onesided ? frame_length / 2 + 1 : frame_length,
                               .complex_input = plan.channels == 2};
  *out_plan = plan;
  return KILN_OK;
}

static void stft_dims(const stft_plan_t *plan, int64_t *out_dims) {
  out_dims[0] = plan->batch;
  out_dims[1] = plan->frames;
  out_dims[2] = plan->dft.bins;
  out_dims[3] = 2;
}

static kiln_status_t stft_shape_func(const kiln_shape_func_args_t *args,
                                     const kiln_type_t **out_type) {
  stft_plan_t plan;
  KILN_RETURN_IF_ERROR(stft_plan_of(args->op, args->attrs, args->num_inputs, args->inputs, &plan));
  int64_t dims[4];
  stft_dims(&plan, dims);
  return kiln_tensor_type_create(args->arena, kiln_tensor_dtype(args->inputs[0]), 4, dims,
                                 out_type);
}

static kiln_status_t stft_reference(const kiln_kernel_args_t *args) {
  stft_plan_t plan;
  KILN_RETURN_IF_ERROR(stft_plan_of(args->op, args->attrs, args->num_inputs, args->inputs, &plan));
  int64_t dims[4];
  stft_dims(&plan, dims);
  KILN_RETURN_IF_ERROR(spectral_output_check(args, kiln_tensor_dtype(args->inputs[0]), 4, dims));
  const kiln_tensor_t *window = args->num_inputs > 3 ? args->inputs[3] : NULL;
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t f = 0; f < plan.frames; ++f) {
      kiln_dft_line_t line = {(b * plan.length + f * plan.step) * plan.channels, plan.channels,
                              (b * plan.frames + f) * plan.dft.bins * 2, 2};
      kiln_dft_run_line(&plan.dft, args->inputs[0], window, args->outputs[0], line);
    }
  }
  return KILN_OK;
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
    .reference = stft_reference,
    .compute = spectral_compute,
    .symbolic_dims = true,
    .symbolic_relation = true,
    .shape_func = stft_shape_func,
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
  const int64_t dims[2] = {-1, -1};
  const kiln_dim_var_t *vars[2] = {NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_dim_var_create(relation->arena, "", -1, &vars[0]));
  KILN_RETURN_IF_ERROR(kiln_dim_var_create(relation->arena, "", -1, &vars[1]));
  return kiln_tensor_type_create_symbolic(relation->arena, attrs->dtype, 2, dims, vars, out_type);
}

/* mel_weight_matrix resolved against its inputs' values. */
typedef struct mel_plan_t {
  int64_t mel_bins, dft_length, sample_rate, spectrogram_bins;
  double lower, upper; /* hertz */
} mel_plan_t;

static kiln_status_t mel_plan_of(const kiln_op_t *op, kiln_tensor_t *const *inputs,
                                 mel_plan_t *out_plan) {
  mel_plan_t plan;
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs[0], "num_mel_bins", 1, &plan.mel_bins));
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs[1], "dft_length", 1, &plan.dft_length));
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs[2], "sample_rate", 1, &plan.sample_rate));
  plan.lower = spectral_value(inputs[3]);
  plan.upper = spectral_value(inputs[4]);
  if (!(plan.lower >= 0.0 && plan.lower <= plan.upper && isfinite(plan.upper))) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the edges %g and %g hertz must be finite with 0 <= lower <= upper",
                       op->name, plan.lower, plan.upper);
  }
  plan.spectrogram_bins = plan.dft_length / 2 + 1;
  *out_plan = plan;
  return KILN_OK;
}

static kiln_status_t mel_shape_func(const kiln_shape_func_args_t *args,
                                    const kiln_type_t **out_type) {
  const kiln_mel_weight_matrix_attrs_t *attrs = args->attrs;
  mel_plan_t plan;
  KILN_RETURN_IF_ERROR(mel_plan_of(args->op, args->inputs, &plan));
  const int64_t dims[2] = {plan.spectrogram_bins, plan.mel_bins};
  return kiln_tensor_type_create(args->arena, attrs->dtype, 2, dims, out_type);
}

/* The spectrogram bin of filter point `i` (of mel_bins + 2). */
static int64_t mel_point(const mel_plan_t *plan, int64_t i) {
  float low = 2595.0f * log10f(1.0f + (float)plan->lower / 700.0f);
  float high = 2595.0f * log10f(1.0f + (float)plan->upper / 700.0f);
  float step = (high - low) / (float)(plan->mel_bins + 2);
  double mel = (double)i * (double)step + (double)low;
  double hertz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
  return (int64_t)floor((double)(plan->dft_length + 1) * hertz / (double)plan->sample_rate);
}

/* Writes weight `value` at (bin j, filter i), j checked against the rows. */
static kiln_status_t mel_put(const kiln_kernel_args_t *args, const mel_plan_t *plan, int64_t j,
                             int64_t i, double value) {
  if (j < 0 || j >= plan->spectrogram_bins) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: filter %lld reaches the spectrogram bin %lld, outside the %lld bins "
                       "of dft_length %lld (the edges %g to %g hertz at sample rate %lld)",
                       args->op->name, (long long)i, (long long)j,
                       (long long)plan->spectrogram_bins, (long long)plan->dft_length, plan->lower,
                       plan->upper, (long long)plan->sample_rate);
  }
  kiln_scalar_store(kiln_scalar_kind(kiln_tensor_dtype(args->outputs[0])),
                    kiln_tensor_data(args->outputs[0]), j * plan->mel_bins + i,
                    kiln_scalar_float(value));
  return KILN_OK;
}

/* Filter i: up from point i to point i + 1, down to point i + 2. */
static kiln_status_t mel_filter(const kiln_kernel_args_t *args, const mel_plan_t *plan, int64_t i) {
  int64_t left = mel_point(plan, i), center = mel_point(plan, i + 1);
  int64_t right = mel_point(plan, i + 2);
  if (center == left) {
    KILN_RETURN_IF_ERROR(mel_put(args, plan, center, i, 1.0));
  }
  for (int64_t j = left; center > left && j <= center; ++j) {
    KILN_RETURN_IF_ERROR(mel_put(args, plan, j, i, (double)(j - left) / (double)(center - left)));
  }
  for (int64_t j = center; j < right; ++j) {
    KILN_RETURN_IF_ERROR(mel_put(args, plan, j, i, (double)(right - j) / (double)(right - center)));
  }
  return KILN_OK;
}

static kiln_status_t mel_reference(const kiln_kernel_args_t *args) {
  const kiln_mel_weight_matrix_attrs_t *attrs = args->attrs;
  mel_plan_t plan;
  KILN_RETURN_IF_ERROR(mel_plan_of(args->op, args->inputs, &plan));
  const int64_t dims[2] = {plan.spectrogram_bins, plan.mel_bins};
  KILN_RETURN_IF_ERROR(spectral_output_check(args, attrs->dtype, 2, dims));
  memset(kiln_tensor_data(args->outputs[0]), 0, kiln_tensor_byte_size(args->outputs[0]));
  for (int64_t i = 0; i < plan.mel_bins; ++i) {
    KILN_RETURN_IF_ERROR(mel_filter(args, &plan, i));
  }
  return KILN_OK;
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
    .reference = mel_reference,
    .compute = spectral_compute,
    .symbolic_dims = true,
    .symbolic_relation = true,
    .shape_func = mel_shape_func,
};
