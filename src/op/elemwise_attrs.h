/*
 * Attributes of the unary elementwise operators (elemwise_unary.c), shared
 * with their compute rules (elemwise_compute.c), which build the same
 * scalar functions as loop-IR expressions.
 */
#ifndef KILN_OP_ELEMWISE_ATTRS_H_
#define KILN_OP_ELEMWISE_ATTRS_H_

#include <stdbool.h>

typedef struct kiln_leaky_relu_attrs_t {
  double alpha;
} kiln_leaky_relu_attrs_t;

typedef struct kiln_clip_attrs_t {
  double a_min;
  double a_max;
} kiln_clip_attrs_t;

typedef struct kiln_gelu_attrs_t {
  const char *approximate; /* "none" or "tanh" */
} kiln_gelu_attrs_t;

typedef struct kiln_hard_sigmoid_attrs_t {
  double alpha;
  double beta;
} kiln_hard_sigmoid_attrs_t;

/* nn.elu, nn.celu and nn.thresholded_relu. */
typedef struct kiln_alpha_attrs_t {
  double alpha;
} kiln_alpha_attrs_t;

typedef struct kiln_selu_attrs_t {
  double alpha;
  double gamma;
} kiln_selu_attrs_t;

typedef struct kiln_shrink_attrs_t {
  double bias;
  double lambd;
} kiln_shrink_attrs_t;

typedef struct kiln_isinf_attrs_t {
  bool detect_positive;
  bool detect_negative;
} kiln_isinf_attrs_t;

#endif /* KILN_OP_ELEMWISE_ATTRS_H_ */
