/*
 * dyn.resize's extern kernel (extern_kernel.h): ONNX Resize (and Upsample)
 * whose scales, sizes or roi are known only at run time, the one
 * definition the reference interpreter (op/dyn_resize.c, through
 * op/value_shape.c) and the VM's call_extern both run.
 *
 * Inputs (data, roi, scales, sizes), each list 1-D and possibly empty;
 * attributes the rule (runtime/resize_rule.h, kiln_resize_rule_encode:
 * mode, coordinate transformation, nearest mode, exclude_outside, cubic_a
 * and extrapolation_value as IEEE-754 bits). Sizes, when not empty, give
 * the output's shape (and each axis's scale out / in), else the scales do
 * (out = floor(in * scale)); roi is read for tf_crop_and_resize only.
 *
 * The kernel resizes one axis after the other (resizing is separable), in
 * double: each output position along the axis is the row's weighted sum of
 * the input positions plus the row's offset (kiln_resize_rule_row, the
 * rule the importer builds its interpolation matrices from), skipping zero
 * weights so that nearest keeps infinities; the result is stored in the
 * data's dtype as the reference kernels store a double (runtime/scalar.h).
 * A compiled kernel over run-time output extents was the other way: it
 * would have needed the coordinate transforms, the neighbour search and
 * the cubic coefficients written again as a TE compute rule with the
 * scales read in the kernel, a second definition of the rule.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kiln/allocator.h"
#include "runtime/extern_kernel.h"
#include "runtime/resize_rule.h"
#include "runtime/scalar.h"

enum { RESIZE_DATA, RESIZE_ROI, RESIZE_SCALES, RESIZE_SIZES };

/* The most elements along one output axis. */
#define RESIZE_MAX_EXTENT ((int64_t)1 << 31)

static const char resize_name[] = "dyn.resize";

/* dyn.resize resolved against its inputs' values. */
typedef struct resize_plan_t {
  kiln_resize_rule_t rule;
  int rank;
  int64_t out_shape[KILN_MAX_RANK];
  double scales[KILN_MAX_RANK];
} resize_plan_t;

/* The output's extent and scale along axis d from `value`, a size
 * (by_size) or a scale. */
static kiln_status_t resize_extent(int d, int64_t in, double value, bool by_size,
                                   int64_t *out_extent, double *out_scale) {
  double extent = by_size ? value : floor((double)in * value);
  if (in == 0) {
    return KILN_STATUS(UNIMPLEMENTED, "%s: resizing an empty dim (%d) is not supported",
                       resize_name, d);
  }
  if (!(extent >= 1.0 && extent < (double)RESIZE_MAX_EXTENT) || (!by_size && !(value > 0.0))) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dim %d would have %g elements (from %s %g)",
                       resize_name, d, extent, by_size ? "size" : "scale", value);
  }
  *out_extent = (int64_t)extent;
  *out_scale = by_size ? extent / (double)in : value;
  return KILN_OK;
}

/* Checks the list inputs' lengths against the data's rank (roi's for
 * tf_crop_and_resize only); *out_given is the sizes when not empty, else
 * the scales. */
static kiln_status_t resize_lists(const kiln_extern_args_t *args, const kiln_resize_rule_t *rule,
                                  const kiln_tensor_t **out_given) {
  int rank = kiln_tensor_ndim(args->inputs[RESIZE_DATA]);
  bool by_size = kiln_tensor_element_count(args->inputs[RESIZE_SIZES]) > 0;
  const kiln_tensor_t *given = args->inputs[by_size ? RESIZE_SIZES : RESIZE_SCALES];
  if (kiln_tensor_element_count(given) != rank) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s has %lld values; the data has rank %d",
                       resize_name, by_size ? "sizes" : "scales",
                       (long long)kiln_tensor_element_count(given), rank);
  }
  int64_t roi = kiln_tensor_element_count(args->inputs[RESIZE_ROI]);
  if (strcmp(rule->coordinate, "tf_crop_and_resize") == 0 && roi != 2 * rank) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: roi has %lld values; tf_crop_and_resize needs 2 per dim (%d)",
                       resize_name, (long long)roi, 2 * rank);
  }
  *out_given = given;
  return KILN_OK;
}

/* The rule, the output's shape and each axis's scale, from the sizes when
 * given, else the scales. */
static kiln_status_t resize_plan_of(const kiln_extern_args_t *args, resize_plan_t *out_plan) {
  KILN_RETURN_IF_ERROR(kiln_status_annotate(kiln_resize_rule_decode(args->attrs, &out_plan->rule),
                                            "%s", resize_name));
  const kiln_tensor_t *data = args->inputs[RESIZE_DATA], *given = NULL;
  KILN_RETURN_IF_ERROR(resize_lists(args, &out_plan->rule, &given));
  bool by_size = given == args->inputs[RESIZE_SIZES];
  out_plan->rank = kiln_tensor_ndim(data);
  for (int d = 0; d < out_plan->rank; ++d) {
    KILN_RETURN_IF_ERROR(resize_extent(d, kiln_tensor_shape(data)[d],
                                       kiln_tensor_element_as_double(given, d), by_size,
                                       &out_plan->out_shape[d], &out_plan->scales[d]));
  }
  return KILN_OK;
}

static kiln_extern_shape_t resize_shape(const kiln_extern_args_t *args, const resize_plan_t *plan) {
  kiln_extern_shape_t shape = {kiln_tensor_dtype(args->inputs[RESIZE_DATA]), plan->rank, {0}};
  memcpy(shape.shape, plan->out_shape, sizeof(int64_t) * (size_t)plan->rank);
  return shape;
}

kiln_status_t kiln_extern_resize_shapes(const kiln_extern_args_t *args,
                                        kiln_extern_shape_t *out_shapes) {
  resize_plan_t plan;
  KILN_RETURN_IF_ERROR(resize_plan_of(args, &plan));
  out_shapes[0] = resize_shape(args, &plan);
  return KILN_OK;
}

/* ---- the fill ---- */

typedef struct resize_axis_t {
  const kiln_resize_rule_t *rule;
  int64_t outer, in, inner, out;
  double scale, roi_start, roi_end;
} resize_axis_t;

/* to = from resized along one axis, viewed as (outer, in, inner) into
 * (outer, out, inner); row has `in` entries of scratch. */
static void resize_axis(const resize_axis_t *axis, const double *from, double *to, double *row) {
  int64_t in = axis->in, inner = axis->inner;
  for (int64_t x = 0; x < axis->out; ++x) {
    double offset = 0.0;
    kiln_resize_rule_row(axis->rule, x, in, axis->scale, axis->roi_start, axis->roi_end, row,
                         &offset);
    for (int64_t o = 0; o < axis->outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        double sum = offset;
        for (int64_t i = 0; i < in; ++i) {
          sum += row[i] != 0.0 ? row[i] * from[(o * in + i) * inner + j] : 0.0;
        }
        to[(o * axis->out + x) * inner + j] = sum;
      }
    }
  }
}

/* Resizes `buffers[0]` (the data as doubles, of `shape`) axis by axis,
 * ping-ponging between the two buffers; *out_result is the last one. */
static void resize_all(const resize_plan_t *plan, const kiln_tensor_t *roi, int64_t *shape,
                       double **buffers, double *row, const double **out_result) {
  int current = 0, rank = plan->rank;
  bool crops = strcmp(plan->rule.coordinate, "tf_crop_and_resize") == 0;
  for (int d = 0; d < rank; ++d) {
    resize_axis_t axis = {.rule = &plan->rule, .outer = 1, .in = shape[d], .inner = 1};
    for (int k = 0; k < rank; ++k) {
      axis.outer *= k < d ? shape[k] : 1;
      axis.inner *= k > d ? shape[k] : 1;
    }
    axis.out = plan->out_shape[d];
    axis.scale = plan->scales[d];
    axis.roi_start = crops ? kiln_tensor_element_as_double(roi, d) : 0.0;
    axis.roi_end = crops ? kiln_tensor_element_as_double(roi, rank + d) : 1.0;
    resize_axis(&axis, buffers[current], buffers[1 - current], row);
    current = 1 - current;
    shape[d] = plan->out_shape[d];
  }
  *out_result = buffers[current];
}

/* The number of doubles the largest intermediate needs (every axis at the
 * larger of its two extents), and the largest input extent. */
static void resize_sizes(int rank, const int64_t *in, const int64_t *out, size_t *out_most,
                         size_t *out_row) {
  size_t most = 1, row = 1;
  for (int d = 0; d < rank; ++d) {
    size_t larger = (size_t)(in[d] > out[d] ? in[d] : out[d]);
    most = most > SIZE_MAX / larger ? SIZE_MAX : most * larger; /* SIZE_MAX: allocation fails */
    row = (size_t)in[d] > row ? (size_t)in[d] : row;
  }
  *out_most = most;
  *out_row = row;
}

/* The data resized into `output`, through the double buffers and row. */
static void resize_run(const resize_plan_t *plan, const kiln_extern_args_t *args, double **buffers,
                       double *row, kiln_tensor_t *output) {
  const kiln_tensor_t *data = args->inputs[RESIZE_DATA];
  int64_t shape[KILN_MAX_RANK];
  memcpy(shape, kiln_tensor_shape(data), sizeof(int64_t) * (size_t)plan->rank);
  kiln_scalar_kind_t in_kind = kiln_scalar_kind(kiln_tensor_dtype(data));
  for (int64_t i = 0; i < kiln_tensor_element_count(data); ++i) {
    buffers[0][i] = kiln_scalar_to_double(kiln_scalar_load(in_kind, kiln_tensor_data(data), i));
  }
  const double *result = NULL;
  resize_all(plan, args->inputs[RESIZE_ROI], shape, buffers, row, &result);
  kiln_scalar_kind_t out_kind = kiln_scalar_kind(kiln_tensor_dtype(output));
  for (int64_t i = 0; i < kiln_tensor_element_count(output); ++i) {
    kiln_scalar_store(out_kind, kiln_tensor_data(output), i, kiln_scalar_float(result[i]));
  }
}

kiln_status_t kiln_extern_resize_fill(const kiln_extern_args_t *args,
                                      kiln_tensor_t *const *outputs) {
  resize_plan_t plan;
  KILN_RETURN_IF_ERROR(resize_plan_of(args, &plan));
  kiln_extern_shape_t want = resize_shape(args, &plan);
  KILN_RETURN_IF_ERROR(kiln_extern_output_check(resize_name, outputs[0], &want));
  if (kiln_scalar_kind(want.dtype) == KILN_SCALAR_KIND_NONE) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the data is %s; expected numbers", resize_name,
                       kiln_dtype_name(want.dtype));
  }
  size_t most = 0, row_size = 0;
  resize_sizes(plan.rank, kiln_tensor_shape(args->inputs[RESIZE_DATA]), plan.out_shape, &most,
               &row_size);
  kiln_allocator_t allocator = kiln_allocator_system();
  double *buffers[2] = {NULL, NULL}, *row = NULL;
  kiln_status_t status =
      kiln_allocator_malloc_array(allocator, most, sizeof(double), (void **)&buffers[0]);
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, most, sizeof(double), (void **)&buffers[1]);
  }
  if (!status) {
    status = kiln_allocator_malloc_array(allocator, row_size, sizeof(double), (void **)&row);
  }
  if (!status) {
    resize_run(&plan, args, buffers, row, outputs[0]);
  }
  kiln_allocator_free(allocator, buffers[0]);
  kiln_allocator_free(allocator, buffers[1]);
  kiln_allocator_free(allocator, row);
  return status;
}
