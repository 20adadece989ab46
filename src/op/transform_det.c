/*
 * det: ONNX Det (opset 11), the determinant of each square matrix in the
 * last two dims of data (..., n, n), into (...).
 *
 * The kernel is Gaussian elimination with partial pivoting in double (the
 * LU factorization LAPACK's getrf makes, which numpy.linalg.det and ONNX's
 * reference use): for each column k, the row at or below k with the
 * largest magnitude there (the first on ties) is swapped up, flipping the
 * sign; the determinant multiplies by the pivot; a zero pivot (a singular
 * matrix) leaves it 0 and skips the elimination; the rows below subtract
 * their multiple of row k. The result is rounded to the dtype once. A 0x0
 * matrix has determinant 1.
 *
 * The compute rule (transform_det_compute.c) writes the same loops as an
 * extern op. float32 and float64.
 */
#include <math.h>

#include "op/impl.h"
#include "op/transform_common.h"
#include "op/transform_compute.h"

static kiln_status_t det_rule(const kiln_op_t *op, const void *attrs, const kiln_tinputs_t *inputs,
                              kiln_tshape_t *out_shape) {
  (void)attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  char text[KILN_SHAPE_TEXT_CAPACITY];
  if (data.ndim < 2 || data.shape[data.ndim - 1] != data.shape[data.ndim - 2]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must be (..., n, n): square matrices",
                       op->name, kiln_op_shape_text(&data, text));
  }
  if (data.shape[data.ndim - 1] > 4096) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: matrices of data %s are larger than 4096 x 4096",
                       op->name, kiln_op_shape_text(&data, text));
  }
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim - 2;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim - 2);
  return KILN_OK;
}

static kiln_status_t det_infer_type(const kiln_type_relation_t *relation,
                                    const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, det_rule, out_type);
}

/* Swaps the row of the largest magnitude in column k (at or below k) up;
 * returns -1 when it swapped, else 1. */
static double det_pivot(double *a, int64_t n, int64_t k) {
  int64_t best = k;
  for (int64_t i = k + 1; i < n; ++i) {
    best = fabs(a[i * n + k]) > fabs(a[best * n + k]) ? i : best;
  }
  if (best == k) {
    return 1.0;
  }
  for (int64_t j = 0; j < n; ++j) {
    double t = a[k * n + j];
    a[k * n + j] = a[best * n + j];
    a[best * n + j] = t;
  }
  return -1.0;
}

/* The determinant of the n x n matrix in `a`, which it overwrites. */
static double det_of(double *a, int64_t n) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    det *= det_pivot(a, n, k);
    double pivot = a[k * n + k];
    det *= pivot;
    if (pivot == 0.0) {
      continue;
    }
    for (int64_t i = k + 1; i < n; ++i) {
      double f = a[i * n + k] / pivot;
      for (int64_t j = k + 1; j < n; ++j) {
        a[i * n + j] -= f * a[k * n + j];
      }
    }
  }
  return det;
}

static kiln_status_t det_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, det_rule, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  if (data.dtype != KILN_DTYPE_FLOAT32 && data.dtype != KILN_DTYPE_FLOAT64) {
    return kiln_transform_unsupported_dtype(args->op, data.dtype, "float32 and float64");
  }
  int64_t n = data.shape[data.ndim - 1];
  int64_t count = kiln_transform_product(data.shape, 0, data.ndim - 2);
  double *a = NULL;
  kiln_allocator_t allocator = kiln_allocator_system();
  /* a scratch copy of one matrix (the kernel API has no allocator: the C heap's) */
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, (size_t)(n * n + 1), sizeof(double), (void **)&a));
  bool wide = data.dtype == KILN_DTYPE_FLOAT64;
  const void *in = kiln_tensor_data(args->inputs[0]);
  void *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t m = 0; m < count; ++m) {
    for (int64_t e = 0; e < n * n; ++e) {
      a[e] = wide ? ((const double *)in)[m * n * n + e] : ((const float *)in)[m * n * n + e];
    }
    double det = det_of(a, n);
    if (wide) {
      ((double *)out)[m] = det;
    } else {
      ((float *)out)[m] = (float)det;
    }
  }
  kiln_allocator_free(allocator, a);
  return KILN_OK;
}

const kiln_op_t kiln_op_det = {
    .name = "det",
    .id = KILN_OP_DET,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .infer_type = det_infer_type,
    .correct_layout = kiln_layout_unknown_output,
};

const kiln_op_impl_t kiln_op_det_impl = {
    .reference = det_reference,
    .compute = kiln_compute_det,
};
