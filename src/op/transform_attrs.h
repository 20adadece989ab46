/*
 * Attributes of the transform operators whose compute rules need them
 * (transform_*_compute.c): the structs live here so that the family files
 * (transform_shape.c, transform_index.c, transform_spatial.c), which own
 * their attr fields, validation and reference kernels, and the compute rules
 * read one definition. String attributes hold the names the family files
 * validate ("clip", "reflect", "half_pixel", ...).
 */
#ifndef KILN_OP_TRANSFORM_ATTRS_H_
#define KILN_OP_TRANSFORM_ATTRS_H_

#include <stdbool.h>
#include <stdint.h>

#include "op/op.h"
#include "runtime/extern_kernel.h"

/* ---- transform_shape.c ---- */

typedef struct kiln_transpose_attrs_t {
  kiln_ints_t axes; /* [] reverses the axes */
} kiln_transpose_attrs_t;

typedef struct kiln_cast_attrs_t {
  kiln_dtype_t dtype;
} kiln_cast_attrs_t;

/* ---- transform_index.c ---- */

typedef struct kiln_concatenate_attrs_t {
  int64_t axis;
} kiln_concatenate_attrs_t;

typedef struct kiln_split_attrs_t {
  int64_t sections;    /* > 0: that many equal parts */
  kiln_ints_t indices; /* or the split points, as numpy.split */
  int64_t axis;
} kiln_split_attrs_t;

typedef struct kiln_strided_slice_attrs_t {
  kiln_ints_t begin;
  kiln_ints_t end;
  kiln_ints_t strides; /* [] means all 1 */
  kiln_ints_t axes;    /* [] means the first len(begin) axes */
} kiln_strided_slice_attrs_t;

typedef struct kiln_take_attrs_t {
  int64_t axis;
  const char *mode; /* "clip" | "wrap" | "fast" */
} kiln_take_attrs_t;

/* ---- transform_spatial.c ---- */

typedef struct kiln_pad_attrs_t {
  kiln_ints_t pad_width; /* before_0, after_0, before_1, after_1, ... */
  const char *pad_mode;  /* "constant" | "edge" | "reflect" */
  double pad_value;
} kiln_pad_attrs_t;

typedef struct kiln_resize2d_attrs_t {
  kiln_ints_t size; /* [H, W] of the output; required */
  const char *layout;
  const char *method;
  const char *coordinate_transformation_mode;
  const char *rounding_method;
} kiln_resize2d_attrs_t;

/* image.resize2d's string attributes as enums, in the order of their names. */
typedef enum kiln_resize_method_e {
  KILN_RESIZE_METHOD_NEAREST,
  KILN_RESIZE_METHOD_LINEAR,
} kiln_resize_method_t;

typedef enum kiln_resize_coordinates_e {
  KILN_RESIZE_COORDINATES_HALF_PIXEL,
  KILN_RESIZE_COORDINATES_ALIGN_CORNERS,
  KILN_RESIZE_COORDINATES_ASYMMETRIC,
  KILN_RESIZE_COORDINATES_PYTORCH_HALF_PIXEL,
} kiln_resize_coordinates_t;

typedef enum kiln_resize_rounding_e {
  KILN_RESIZE_ROUNDING_ROUND_PREFER_FLOOR,
  KILN_RESIZE_ROUNDING_ROUND_PREFER_CEIL,
  KILN_RESIZE_ROUNDING_FLOOR,
  KILN_RESIZE_ROUNDING_CEIL,
} kiln_resize_rounding_t;

typedef struct kiln_resize_mode_t {
  kiln_resize_method_t method;
  kiln_resize_coordinates_t coordinates;
  kiln_resize_rounding_t rounding;
} kiln_resize_mode_t;

/* The enums of `attrs` (transform_spatial.c), for the reference kernel and
 * the compute rule; INVALID_ARGUMENT naming the operator and the attribute
 * for a name it does not know. */
KILN_MUST_USE_RESULT kiln_status_t kiln_resize_mode_of(const kiln_op_t *op,
                                                       const kiln_resize2d_attrs_t *attrs,
                                                       kiln_resize_mode_t *out_mode);

/* ---- transform_grid_sample.c ---- */

typedef struct kiln_grid_sample_attrs_t {
  const char *method;       /* "bilinear" | "nearest" | "bicubic" */
  const char *padding_mode; /* "zeros" | "border" | "reflection" */
  bool align_corners;
} kiln_grid_sample_attrs_t;

/* image.grid_sample's string attributes as enums, in the order of their names. */
typedef enum kiln_grid_sample_method_e {
  KILN_GRID_SAMPLE_BILINEAR,
  KILN_GRID_SAMPLE_NEAREST,
  KILN_GRID_SAMPLE_BICUBIC,
} kiln_grid_sample_method_t;

typedef enum kiln_grid_sample_padding_e {
  KILN_GRID_SAMPLE_ZEROS,
  KILN_GRID_SAMPLE_BORDER,
  KILN_GRID_SAMPLE_REFLECTION,
} kiln_grid_sample_padding_t;

/* What the reference kernel and the compute rule both read: the enums, the
 * input plane's size and the borders a coordinate is reflected between
 * ([-0.5, size - 0.5], or [0, size - 1] with align_corners). */
typedef struct kiln_grid_sample_plan_t {
  kiln_grid_sample_method_t method;
  kiln_grid_sample_padding_t padding;
  bool align_corners;
  int64_t height, width;
  double x_min, x_max, y_min, y_max;
} kiln_grid_sample_plan_t;

/* The plan of `attrs` for an input plane of height x width
 * (transform_grid_sample.c); INVALID_ARGUMENT naming the operator and the
 * attribute for a name it does not know. */
KILN_MUST_USE_RESULT kiln_status_t kiln_grid_sample_plan_of(const kiln_op_t *op,
                                                            const kiln_grid_sample_attrs_t *attrs,
                                                            int64_t height, int64_t width,
                                                            kiln_grid_sample_plan_t *out_plan);

/* ---- transform_einsum.c ---- */

typedef struct kiln_einsum_attrs_t {
  const char *equation; /* "bij,bjk->bik"; numpy's spelling, "..." for broadcast dims */
} kiln_einsum_attrs_t;

#define KILN_EINSUM_MAX_INPUTS 8
/* Letters a-z, A-Z, then one label per dim of the ellipsis. */
#define KILN_EINSUM_MAX_LABELS (52 + KILN_MAX_RANK)

/* An equation resolved against its inputs' shapes: every dim of every
 * input and of the output carries a label; a label not in the output is
 * summed over. */
typedef struct kiln_einsum_plan_t {
  int num_inputs;
  int ndim[KILN_EINSUM_MAX_INPUTS];
  int8_t labels[KILN_EINSUM_MAX_INPUTS][KILN_MAX_RANK];
  /* Whether the dim has extent 1 under a label of another extent (read at 0). */
  bool broadcast[KILN_EINSUM_MAX_INPUTS][KILN_MAX_RANK];
  int out_ndim;
  int8_t out_labels[KILN_MAX_RANK];
  int num_summed;
  int8_t summed[KILN_EINSUM_MAX_LABELS];  /* the summed labels, in label order */
  int64_t extent[KILN_EINSUM_MAX_LABELS]; /* -1: the label is not used */
} kiln_einsum_plan_t;

/* The plan of `equation` for inputs of the given ranks and shapes
 * (transform_einsum.c); INVALID_ARGUMENT naming the operator and what in
 * the equation does not fit. */
KILN_MUST_USE_RESULT kiln_status_t kiln_einsum_plan_of(const kiln_op_t *op, const char *equation,
                                                       int num_inputs, const int *ndims,
                                                       const int64_t *const *shapes,
                                                       kiln_einsum_plan_t *out_plan);

/* ---- transform_dft.c ---- */

typedef struct kiln_dft_attrs_t {
  int64_t axis;       /* the signal axis: not the first (batch) nor the last (real, imaginary) */
  bool inverse;       /* e^{+i theta} and 1 / length */
  bool onesided;      /* only the length / 2 + 1 first frequencies */
  int64_t dft_length; /* 0: the axis' size; else the signal is cut or padded with zeros */
} kiln_dft_attrs_t;

/* The plan of `attrs` for data of rank `ndim` and `shape`
 * (transform_dft.c); INVALID_ARGUMENT naming the operator. */
KILN_MUST_USE_RESULT kiln_status_t kiln_dft_plan_of(const kiln_op_t *op,
                                                    const kiln_dft_attrs_t *attrs, int ndim,
                                                    const int64_t *shape,
                                                    kiln_dft_plan_t *out_plan);

/* ---- transform_spectral.c ---- */

typedef struct kiln_stft_attrs_t {
  bool onesided; /* only the frame_length / 2 + 1 first frequencies (a real signal) */
} kiln_stft_attrs_t;

typedef struct kiln_mel_weight_matrix_attrs_t {
  kiln_dtype_t dtype; /* of the output */
} kiln_mel_weight_matrix_attrs_t;

/* ---- transform_shape_of.c ---- */

typedef struct kiln_shape_of_attrs_t {
  int64_t start; /* the first dim; negative from the back; clamped to [0, rank] */
  int64_t end;   /* past the last dim; the same */
} kiln_shape_of_attrs_t;

/* ---- transform_roi_align.c ---- */

typedef struct kiln_roi_align_attrs_t {
  kiln_ints_t pooled_size; /* [H_out, W_out] */
  double spatial_scale;
  int64_t sample_ratio; /* samples a bin side; 0: ceil(roi side / pooled side) */
  const char *mode;     /* "avg" | "max" */
  bool aligned;         /* ONNX's half_pixel: shift the box by half a pixel */
} kiln_roi_align_attrs_t;

typedef struct kiln_depth_space_attrs_t {
  int64_t block_size;
  const char *layout;
  const char *mode; /* depth_to_space only */
} kiln_depth_space_attrs_t;

#endif /* KILN_OP_TRANSFORM_ATTRS_H_ */
