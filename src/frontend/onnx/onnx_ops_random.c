/*
 * The random operators: RandomUniform and RandomNormal (a shape attribute),
 * RandomUniformLike and RandomNormalLike (the input's shape, and its dtype
 * unless the dtype attribute says otherwise), all as random.uniform and
 * random.normal; Bernoulli as random.bernoulli (the output dtype defaults
 * to the input's). The seed attribute is the generator's seed
 * (op/random_bits.h); without one kiln uses 0.0, so a model gives the same
 * numbers on every run (docs/onnx.md). A random operator of attributes
 * alone is a constant, evaluated once at import.
 */
#include "frontend/onnx/onnx_convert.h"
#include "frontend/onnx/onnx_tensor.h"
#include "op/random_attrs.h"

/* The dtype attribute (an ONNX element type), or `fallback` without one. */
static kiln_status_t dtype_attr(const kiln_onnx_node_t *node, kiln_dtype_t fallback,
                                kiln_dtype_t *out_dtype) {
  *out_dtype = fallback;
  if (!kiln_onnx_attr(node, "dtype")) {
    return KILN_OK;
  }
  int64_t elem_type = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_int(node, "dtype", 0, &elem_type));
  KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_dtype(elem_type, out_dtype), "attribute dtype");
  return KILN_OK;
}

/* The attrs every random operator has: dtype and seed. */
static kiln_status_t common_attrs(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                  kiln_dtype_t dtype, void **out_attrs) {
  double seed = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, "seed", 0.0, &seed));
  KILN_RETURN_IF_ERROR(kiln_onnx_attrs(node, op, out_attrs));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_dtype(op, *out_attrs, "dtype", dtype));
  return kiln_onnx_set_float(op, *out_attrs, "seed", seed);
}

/* The distribution's two parameters: low and high, or mean and scale. */
static kiln_status_t distribution_attrs(const kiln_onnx_node_t *node, const kiln_op_t *op,
                                        void *attrs) {
  bool uniform = op == &kiln_op_random_uniform;
  const char *first = uniform ? "low" : "mean", *second = uniform ? "high" : "scale";
  double a = 0, b = 0;
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, first, 0.0, &a));
  KILN_RETURN_IF_ERROR(kiln_onnx_attr_float(node, second, 1.0, &b));
  KILN_RETURN_IF_ERROR(kiln_onnx_set_float(op, attrs, first, a));
  return kiln_onnx_set_float(op, attrs, second, b);
}

/* RandomUniform, RandomNormal and their Like forms. */
static kiln_status_t convert_distribution(kiln_onnx_node_t *node, const kiln_op_t *op, bool like) {
  kiln_ints_t shape = {0, NULL};
  kiln_dtype_t dtype = KILN_DTYPE_FLOAT32;
  if (like) {
    const kiln_tensor_type_t *xt = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &xt));
    shape = (kiln_ints_t){xt->ndim, xt->shape};
    dtype = xt->dtype;
  } else {
    bool present = false;
    KILN_RETURN_IF_ERROR(kiln_onnx_attr_ints(node, "shape", &shape, &present));
    if (!present) {
      return KILN_STATUS(INVALID_ARGUMENT, "the shape attribute is missing");
    }
  }
  KILN_RETURN_IF_ERROR(dtype_attr(node, dtype, &dtype));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(common_attrs(node, op, dtype, &attrs));
  KILN_RETURN_IF_ERROR(distribution_attrs(node, op, attrs));
  KILN_RETURN_IF_ERROR(
      kiln_onnx_set_ints(node, op, attrs, "shape", (int)shape.count, shape.values));
  return kiln_onnx_emit(node, op, 0, NULL, attrs, &node->outputs[0]);
}

kiln_status_t kiln_onnx_convert_random_uniform(kiln_onnx_node_t *node) {
  return convert_distribution(node, &kiln_op_random_uniform, false);
}

kiln_status_t kiln_onnx_convert_random_normal(kiln_onnx_node_t *node) {
  return convert_distribution(node, &kiln_op_random_normal, false);
}

kiln_status_t kiln_onnx_convert_random_uniform_like(kiln_onnx_node_t *node) {
  return convert_distribution(node, &kiln_op_random_uniform, true);
}

kiln_status_t kiln_onnx_convert_random_normal_like(kiln_onnx_node_t *node) {
  return convert_distribution(node, &kiln_op_random_normal, true);
}

kiln_status_t kiln_onnx_convert_bernoulli(kiln_onnx_node_t *node) {
  kiln_expr_t *p = NULL;
  const kiln_tensor_type_t *pt = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_input(node, 0, &p));
  KILN_RETURN_IF_ERROR(kiln_onnx_input_type(node, 0, &pt));
  kiln_dtype_t dtype = pt->dtype;
  KILN_RETURN_IF_ERROR(dtype_attr(node, dtype, &dtype));
  void *attrs = NULL;
  KILN_RETURN_IF_ERROR(common_attrs(node, &kiln_op_random_bernoulli, dtype, &attrs));
  return kiln_onnx_emit1(node, &kiln_op_random_bernoulli, p, attrs, &node->outputs[0]);
}
