/*
 * The spectral extern kernels (extern_kernel.h): stft and
 * mel_weight_matrix, ONNX STFT and MelWeightMatrix (opset 17), whose output
 * shapes depend on the values of scalar inputs; and the DFT of one line
 * (kiln_dft_run_line), which stft and the dft operator's reference kernel
 * (op/transform_dft.c) share: one meaning of the transform.
 *
 * stft(signal, frame_step, frame_length, [window]; onesided) cuts the
 * signal (batch, length, 1 or 2: real, or real and imaginary) into frames
 * of frame_length samples starting every frame_step samples (as many as
 * fit: 1 + (length - frame_length) / frame_step), weighs each by the window
 * (none: ones) and transforms each, with the transform's length
 * frame_length. The output is (batch, frames, bins, 2), bins
 * frame_length / 2 + 1 when onesided (a real signal only), else
 * frame_length. A frame_length of 0 means the window's length (or, with
 * no window, the signal's), for ONNX's omitted input.
 *
 * mel_weight_matrix(num_mel_bins, dft_length, sample_rate,
 * lower_edge_hertz, upper_edge_hertz; dtype) is the (dft_length / 2 + 1,
 * num_mel_bins) matrix of triangular filters: the mel range from
 * mel(lower) to mel(upper), mel(f) = 2595 log10(1 + f / 700), cut into
 * num_mel_bins + 2 equal steps, each point mapped back to hertz and to the
 * spectrogram bin floor((dft_length + 1) f / sample_rate); filter i rises
 * from 0 at point i to 1 at point i + 1 and falls to 0 at point i + 2. The
 * mel edges and the step are computed in float32 and the points in
 * float64, as ONNX's reference does, so the bins come out the same. The
 * output is of a float dtype.
 *
 * The DFT is a direct O(L^2) sum per line in double, the angle reduced
 * first, 2 pi ((k n) mod L) / L, rounded to the data's dtype once.
 */
#include <math.h>
#include <string.h>

#include "runtime/extern_kernel.h"

static double load(const kiln_tensor_t *tensor, int64_t offset) {
  const void *data = kiln_tensor_data(tensor);
  return kiln_tensor_dtype(tensor) == KILN_DTYPE_FLOAT64 ? ((const double *)data)[offset]
                                                         : ((const float *)data)[offset];
}

static void store(kiln_tensor_t *tensor, int64_t offset, double value) {
  void *data = kiln_tensor_data(tensor);
  if (kiln_tensor_dtype(tensor) == KILN_DTYPE_FLOAT64) {
    ((double *)data)[offset] = value;
  } else {
    ((float *)data)[offset] = (float)value;
  }
}

void kiln_dft_run_line(const kiln_dft_plan_t *p, const kiln_tensor_t *data,
                       const kiln_tensor_t *window, kiln_tensor_t *out, kiln_dft_line_t line) {
  double sign = p->inverse ? 1.0 : -1.0;
  double scale = p->inverse ? 1.0 / (double)p->length : 1.0;
  for (int64_t k = 0; k < p->bins; ++k) {
    double re = 0.0, im = 0.0;
    for (int64_t n = 0; n < p->samples; ++n) {
      double theta = KILN_DFT_TWO_PI * (double)((k * n) % p->length) / (double)p->length;
      int64_t at = line.in + n * line.stride;
      double w = window ? load(window, n) : 1.0;
      double xr = w * load(data, at);
      double xi = p->complex_input ? w * load(data, at + 1) : 0.0;
      double c = cos(theta), s = sign * sin(theta);
      re += xr * c - xi * s;
      im += xi * c + xr * s;
    }
    store(out, line.out + k * line.out_stride, re * scale);
    store(out, line.out + k * line.out_stride + 1, im * scale);
  }
}

/* ---- shared ---- */

/* Input `index`'s one value (a count) as a whole number in [lo, INT32_MAX]. */
static kiln_status_t spectral_count(const char *op, kiln_tensor_t *const *inputs, int index,
                                    const char *what, int64_t lo, int64_t *out_value) {
  double value = kiln_tensor_element_count(inputs[index]) == 1
                     ? kiln_tensor_element_as_double(inputs[index], 0)
                     : NAN;
  if (!(value >= (double)lo && value <= (double)INT32_MAX)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s is %g; expected a count in [%lld, %d]", op, what,
                       value, (long long)lo, INT32_MAX);
  }
  *out_value = (int64_t)value;
  return KILN_OK;
}

kiln_status_t kiln_extern_output_check(const char *op, const kiln_tensor_t *out,
                                       const kiln_extern_shape_t *want) {
  if (kiln_tensor_dtype(out) != want->dtype ||
      !kiln_shape_equal(want->ndim, want->shape, kiln_tensor_ndim(out), kiln_tensor_shape(out))) {
    char w[KILN_SHAPE_TEXT_CAPACITY], h[KILN_SHAPE_TEXT_CAPACITY];
    kiln_shape_format(want->ndim, want->shape, w, sizeof(w));
    kiln_shape_format(kiln_tensor_ndim(out), kiln_tensor_shape(out), h, sizeof(h));
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the inputs give a %s output %s, not %s %s", op,
                       kiln_dtype_name(want->dtype), w, kiln_dtype_name(kiln_tensor_dtype(out)), h);
  }
  return KILN_OK;
}

/* ---- stft ---- */

/* stft resolved against its inputs' values. */
typedef struct stft_plan_t {
  int64_t batch, length, channels;
  int64_t step, frames;
  kiln_dft_plan_t dft; /* one frame: length = samples = frame_length */
} stft_plan_t;

/* The frame length from the frame_length input's value (0: the window's
 * length, or the signal's without a window), checked against the window. */
static kiln_status_t stft_frame_length(const kiln_extern_args_t *args, int64_t length,
                                       int64_t *out_frame_length) {
  int64_t frame_length = 0;
  KILN_RETURN_IF_ERROR(spectral_count("stft", args->inputs, 2, "frame_length", 0, &frame_length));
  const kiln_tensor_t *window = args->num_inputs > 3 ? args->inputs[3] : NULL;
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

static bool stft_float(const kiln_tensor_t *t) {
  return kiln_tensor_dtype(t) == KILN_DTYPE_FLOAT32 || kiln_tensor_dtype(t) == KILN_DTYPE_FLOAT64;
}

/* The signal (batch, length, 1 or 2) and the window (frame_length) of one
 * float dtype. */
static kiln_status_t stft_check(const kiln_extern_args_t *args) {
  const kiln_tensor_t *signal = args->inputs[0];
  const int64_t *shape = kiln_tensor_shape(signal);
  const kiln_tensor_t *window = args->num_inputs > 3 ? args->inputs[3] : NULL;
  if (kiln_tensor_ndim(signal) != 3 || (shape[2] != 1 && shape[2] != 2) || !stft_float(signal)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "stft: the signal must be float32 or float64 (batch, length, 1 or 2)");
  }
  if (window &&
      (kiln_tensor_ndim(window) != 1 || kiln_tensor_dtype(window) != kiln_tensor_dtype(signal))) {
    return KILN_STATUS(INVALID_ARGUMENT, "stft: the window must be 1-D of the signal's dtype");
  }
  if (args->attrs[0] && shape[2] == 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "stft: onesided takes a real signal (last dim 1), not a "
                                         "complex one");
  }
  return KILN_OK;
}

static kiln_status_t stft_plan_of(const kiln_extern_args_t *args, stft_plan_t *out_plan) {
  KILN_RETURN_IF_ERROR(stft_check(args));
  const int64_t *shape = kiln_tensor_shape(args->inputs[0]);
  stft_plan_t plan = {.batch = shape[0], .length = shape[1], .channels = shape[2]};
  int64_t frame_length = 0;
  KILN_RETURN_IF_ERROR(spectral_count("stft", args->inputs, 1, "frame_step", 1, &plan.step));
  KILN_RETURN_IF_ERROR(stft_frame_length(args, plan.length, &frame_length));
  plan.frames = 1 + (plan.length - frame_length) / plan.step;
  plan.dft = (kiln_dft_plan_t){.axis = 1,
                               .length = frame_length,
                               .samples = frame_length,
                               .bins = args->attrs[0] ? frame_length / 2 + 1 : frame_length,
                               .complex_input = plan.channels == 2};
  *out_plan = plan;
  return KILN_OK;
}

static kiln_extern_shape_t stft_shape(const kiln_extern_args_t *args, const stft_plan_t *plan) {
  return (kiln_extern_shape_t){
      kiln_tensor_dtype(args->inputs[0]), 4, {plan->batch, plan->frames, plan->dft.bins, 2}};
}

kiln_status_t kiln_extern_stft_shapes(const kiln_extern_args_t *args,
                                      kiln_extern_shape_t *out_shapes) {
  stft_plan_t plan;
  KILN_RETURN_IF_ERROR(stft_plan_of(args, &plan));
  out_shapes[0] = stft_shape(args, &plan);
  return KILN_OK;
}

kiln_status_t kiln_extern_stft_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs) {
  stft_plan_t plan;
  KILN_RETURN_IF_ERROR(stft_plan_of(args, &plan));
  kiln_extern_shape_t want = stft_shape(args, &plan);
  KILN_RETURN_IF_ERROR(kiln_extern_output_check("stft", outputs[0], &want));
  const kiln_tensor_t *window = args->num_inputs > 3 ? args->inputs[3] : NULL;
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t f = 0; f < plan.frames; ++f) {
      kiln_dft_line_t line = {(b * plan.length + f * plan.step) * plan.channels, plan.channels,
                              (b * plan.frames + f) * plan.dft.bins * 2, 2};
      kiln_dft_run_line(&plan.dft, args->inputs[0], window, outputs[0], line);
    }
  }
  return KILN_OK;
}

/* ---- mel_weight_matrix ---- */

/* mel_weight_matrix resolved against its inputs' values. */
typedef struct mel_plan_t {
  int64_t mel_bins, dft_length, sample_rate, spectrogram_bins;
  double lower, upper; /* hertz */
  kiln_dtype_t dtype;
} mel_plan_t;

bool kiln_extern_mel_dtype_ok(int64_t dtype) {
  return dtype == KILN_DTYPE_FLOAT32 || dtype == KILN_DTYPE_FLOAT64 ||
         dtype == KILN_DTYPE_FLOAT16 || dtype == KILN_DTYPE_BFLOAT16;
}

/* One float value of input `index`. */
static double mel_value(kiln_tensor_t *const *inputs, int index) {
  return kiln_tensor_element_count(inputs[index]) == 1
             ? kiln_tensor_element_as_double(inputs[index], 0)
             : NAN;
}

static kiln_status_t mel_plan_of(const kiln_extern_args_t *args, mel_plan_t *out_plan) {
  kiln_tensor_t *const *inputs = args->inputs;
  mel_plan_t plan;
  if (!kiln_extern_mel_dtype_ok(args->attrs[0])) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "mel_weight_matrix: the output dtype is %s; expected float32, float64, "
                       "float16 or bfloat16",
                       kiln_dtype_name((kiln_dtype_t)args->attrs[0]));
  }
  plan.dtype = (kiln_dtype_t)args->attrs[0];
  const char *op = "mel_weight_matrix";
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs, 0, "num_mel_bins", 1, &plan.mel_bins));
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs, 1, "dft_length", 1, &plan.dft_length));
  KILN_RETURN_IF_ERROR(spectral_count(op, inputs, 2, "sample_rate", 1, &plan.sample_rate));
  plan.lower = mel_value(inputs, 3);
  plan.upper = mel_value(inputs, 4);
  if (!(plan.lower >= 0.0 && plan.lower <= plan.upper && isfinite(plan.upper))) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: the edges %g and %g hertz must be finite with 0 <= lower <= upper", op,
                       plan.lower, plan.upper);
  }
  plan.spectrogram_bins = plan.dft_length / 2 + 1;
  *out_plan = plan;
  return KILN_OK;
}

static kiln_extern_shape_t mel_shape(const mel_plan_t *plan) {
  return (kiln_extern_shape_t){plan->dtype, 2, {plan->spectrogram_bins, plan->mel_bins}};
}

kiln_status_t kiln_extern_mel_shapes(const kiln_extern_args_t *args,
                                     kiln_extern_shape_t *out_shapes) {
  mel_plan_t plan;
  KILN_RETURN_IF_ERROR(mel_plan_of(args, &plan));
  out_shapes[0] = mel_shape(&plan);
  return KILN_OK;
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
static kiln_status_t mel_put(kiln_tensor_t *out, const mel_plan_t *plan, int64_t j, int64_t i,
                             double value) {
  if (j < 0 || j >= plan->spectrogram_bins) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "mel_weight_matrix: filter %lld reaches the spectrogram bin %lld, outside "
                       "the %lld bins of dft_length %lld (the edges %g to %g hertz at sample "
                       "rate %lld)",
                       (long long)i, (long long)j, (long long)plan->spectrogram_bins,
                       (long long)plan->dft_length, plan->lower, plan->upper,
                       (long long)plan->sample_rate);
  }
  void *data = kiln_tensor_data(out);
  int64_t at = j * plan->mel_bins + i;
  if (plan->dtype == KILN_DTYPE_FLOAT64) {
    ((double *)data)[at] = value;
  } else if (plan->dtype == KILN_DTYPE_FLOAT16) {
    ((uint16_t *)data)[at] = kiln_float32_to_float16((float)value);
  } else if (plan->dtype == KILN_DTYPE_BFLOAT16) {
    ((uint16_t *)data)[at] = kiln_float32_to_bfloat16((float)value);
  } else { /* float32: mel_plan_of admits the floats only */
    ((float *)data)[at] = (float)value;
  }
  return KILN_OK;
}

/* Filter i: up from point i to point i + 1, down to point i + 2. */
static kiln_status_t mel_filter(kiln_tensor_t *out, const mel_plan_t *plan, int64_t i) {
  int64_t left = mel_point(plan, i), center = mel_point(plan, i + 1);
  int64_t right = mel_point(plan, i + 2);
  if (center == left) {
    KILN_RETURN_IF_ERROR(mel_put(out, plan, center, i, 1.0));
  }
  for (int64_t j = left; center > left && j <= center; ++j) {
    KILN_RETURN_IF_ERROR(mel_put(out, plan, j, i, (double)(j - left) / (double)(center - left)));
  }
  for (int64_t j = center; j < right; ++j) {
    KILN_RETURN_IF_ERROR(mel_put(out, plan, j, i, (double)(right - j) / (double)(right - center)));
  }
  return KILN_OK;
}

kiln_status_t kiln_extern_mel_fill(const kiln_extern_args_t *args, kiln_tensor_t *const *outputs) {
  mel_plan_t plan;
  KILN_RETURN_IF_ERROR(mel_plan_of(args, &plan));
  kiln_extern_shape_t want = mel_shape(&plan);
  KILN_RETURN_IF_ERROR(kiln_extern_output_check("mel_weight_matrix", outputs[0], &want));
  memset(kiln_tensor_data(outputs[0]), 0, kiln_tensor_byte_size(outputs[0]));
  for (int64_t i = 0; i < plan.mel_bins; ++i) {
    KILN_RETURN_IF_ERROR(mel_filter(outputs[0], &plan, i));
  }
  return KILN_OK;
}
