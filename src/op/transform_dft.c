/*
 * dft: ONNX DFT (opset 17), the discrete Fourier transform along one axis.
 *
 * data is (batch, signal dims..., 1 or 2): the last dim holds a real
 * signal, or the real and imaginary parts of a complex one. The output has
 * data's shape with the last dim 2 (always complex) and the signal axis
 * `bins` long: X[k] = sum_n x[n] e^{-2 pi i k n / L} for n below
 * min(size, L), L the dft_length (0: the axis' size; a longer L pads the
 * signal with zeros, a shorter one cuts it), k below L, or below L / 2 + 1
 * when onesided (the rest of a real signal's transform is their
 * conjugate). inverse turns the sign of the exponent and divides by L, as
 * numpy.fft.ifft. The angle is reduced first, 2 pi ((k n) mod L) / L,
 * everything in double and rounded to the data's dtype once.
 *
 * The plan (kiln_dft_plan_of) is shared by the relation, the kernel and the
 * compute rule (transform_dft_compute.c), which is a float64 sum reduction
 * over n and a cast. O(L^2) per line: a direct sum, not an FFT. The kernel's
 * line (kiln_dft_run_line) also takes a window weighing each sample, for
 * stft (transform_spectral.c).
 */
#include <math.h>

#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

static const kiln_attr_field_t kiln_dft_fields[] = {
    KILN_ATTR_FIELD(kiln_dft_attrs_t, axis, INT, "1"),
    KILN_ATTR_FIELD(kiln_dft_attrs_t, inverse, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_dft_attrs_t, onesided, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_dft_attrs_t, dft_length, INT, "0"),
};

static kiln_status_t dft_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_dft_attrs_t *a = attrs;
  if (a->dft_length < 0 || a->dft_length > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: dft_length %lld is not in [0, %d] (0: the axis' size)", op->name,
                       (long long)a->dft_length, INT32_MAX);
  }
  return KILN_OK;
}

kiln_status_t kiln_dft_plan_of(const kiln_op_t *op, const kiln_dft_attrs_t *attrs, int ndim,
                               const int64_t *shape, kiln_dft_plan_t *out_plan) {
  kiln_tensor_type_t type = {.ndim = ndim, .shape = shape};
  char text[KILN_SHAPE_TEXT_CAPACITY];
  if (ndim < 3 || (shape[ndim - 1] != 1 && shape[ndim - 1] != 2)) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data %s must be (batch, signal dims..., 1 or 2): a real or complex "
                       "signal",
                       op->name, kiln_op_shape_text(&type, text));
  }
  int64_t axis = attrs->axis < 0 ? attrs->axis + ndim : attrs->axis;
  if (axis < 1 || axis > ndim - 2) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: axis %lld of data %s is the batch or the real/imaginary dim, not a "
                       "signal dim",
                       op->name, (long long)attrs->axis, kiln_op_shape_text(&type, text));
  }
  int64_t length = attrs->dft_length > 0 ? attrs->dft_length : shape[axis];
  if (length == 0 || shape[axis] > INT32_MAX) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the signal axis %lld of data %s must be in [1, %d]",
                       op->name, (long long)axis, kiln_op_shape_text(&type, text), INT32_MAX);
  }
  *out_plan = (kiln_dft_plan_t){.axis = (int)axis,
                                .length = length,
                                .samples = shape[axis] < length ? shape[axis] : length,
                                .bins = attrs->onesided ? length / 2 + 1 : length,
                                .complex_input = shape[ndim - 1] == 2,
                                .inverse = attrs->inverse};
  return KILN_OK;
}

static kiln_status_t dft_rule(const kiln_op_t *op, const void *attrs, const kiln_tinputs_t *inputs,
                              kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_dft_plan_t plan;
  KILN_RETURN_IF_ERROR(kiln_dft_plan_of(op, attrs, data.ndim, data.shape, &plan));
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim);
  out_shape->dims[plan.axis] = plan.bins;
  out_shape->dims[data.ndim - 1] = 2;
  return KILN_OK;
}

static kiln_status_t dft_infer_type(const kiln_type_relation_t *relation,
                                    const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, dft_rule, out_type);
}

/* ---- the reference kernel (its line: kiln_dft_run_line, runtime/extern_spectral.c) ---- */

static kiln_status_t dft_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, dft_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  if (data.dtype != KILN_DTYPE_FLOAT32 && data.dtype != KILN_DTYPE_FLOAT64) {
    return kiln_transform_unsupported_dtype(args->op, data.dtype, "float32 and float64");
  }
  kiln_dft_plan_t plan;
  KILN_RETURN_IF_ERROR(kiln_dft_plan_of(args->op, args->attrs, data.ndim, data.shape, &plan));
  /* outer (before the axis) x axis x inner (after it, the last dim included) */
  int64_t outer = kiln_transform_product(data.shape, 0, plan.axis);
  int64_t inner = kiln_transform_product(data.shape, plan.axis + 1, data.ndim);
  int64_t channels = data.shape[data.ndim - 1];
  int64_t out_inner = inner / channels * 2;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner / channels; ++i) {
      kiln_dft_line_t line = {(o * data.shape[plan.axis]) * inner + i * channels, inner,
                              (o * plan.bins) * out_inner + i * 2, out_inner};
      kiln_dft_run_line(&plan, args->inputs[0], NULL, args->outputs[0], line);
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_dft = {
    .name = "dft",
    .id = KILN_OP_DFT,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_dft_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_dft_fields) / sizeof(kiln_dft_fields[0])),
    .attr_fields = kiln_dft_fields,
    .validate_attrs = dft_validate,
    .infer_type = dft_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_dft_impl = {
    .reference = dft_reference,
    .compute = kiln_compute_dft,
};
