/*
 * The attribute structs of the reductions (reduce.c), the axis operators
 * (transform_axis.c), the creation operators (transform_create.c) and the
 * gathers and scatters (transform_gather.c), shared by those family files
 * and their compute rules (gather_compute.h). The field tables, which say
 * the text names and defaults, stay in the family files.
 */
#ifndef KILN_OP_GATHER_ATTRS_H_
#define KILN_OP_GATHER_ATTRS_H_

#include <stdbool.h>
#include <stdint.h>

#include "op/op.h"

/* sum, mean, max, min, prod. */
typedef struct kiln_reduce_attrs_t {
  kiln_ints_t axis; /* [] reduces every axis */
  bool keepdims;
} kiln_reduce_attrs_t;

/* argmax, argmin. */
typedef struct kiln_argmax_attrs_t {
  int64_t axis;
  bool keepdims;
  bool select_last_index;
} kiln_argmax_attrs_t;

typedef struct kiln_cumsum_attrs_t {
  int64_t axis;
  bool exclusive;
  bool reverse;
} kiln_cumsum_attrs_t;

typedef struct kiln_topk_attrs_t {
  int64_t k;
  int64_t axis;
  bool largest;
  bool sorted;
} kiln_topk_attrs_t;

typedef struct kiln_arange_attrs_t {
  double start;
  double stop;
  double step;
  kiln_dtype_t dtype;
} kiln_arange_attrs_t;

typedef struct kiln_one_hot_attrs_t {
  int64_t depth;
  int64_t axis; /* in [-(rank + 1), rank] of the indices */
  double on_value;
  double off_value;
  kiln_dtype_t dtype;
} kiln_one_hot_attrs_t;

typedef struct kiln_trilu_attrs_t {
  bool upper;
  int64_t k;
} kiln_trilu_attrs_t;

typedef struct kiln_gather_attrs_t {
  int64_t axis;
} kiln_gather_attrs_t;

typedef struct kiln_gather_nd_attrs_t {
  int64_t batch_dims;
} kiln_gather_nd_attrs_t;

/* scatter_elements and scatter_nd. */
typedef struct kiln_scatter_attrs_t {
  int64_t axis; /* scatter_elements only */
  const char *reduction;
} kiln_scatter_attrs_t;

#endif /* KILN_OP_GATHER_ATTRS_H_ */
