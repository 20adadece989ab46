/*
 * Random operators: random.uniform and random.normal (ONNX RandomUniform,
 * RandomNormal and their Like forms, which the importer gives the shape
 * and dtype of their input) and random.bernoulli (ONNX Bernoulli).
 *
 * Element n (the row-major position in the output) takes its numbers from
 * op/random_bits.h: a counter-based generator, so a seed gives the same
 * tensor on every execution path, thread count and run. The value is
 * computed in float64 and rounded once to the output dtype:
 * - uniform: low + (high - low) * u0;
 * - normal (Box-Muller): mean + scale * sqrt(-2 log(1 - u0)) * cos(2 pi u1);
 * - bernoulli: 1 when u0 < p (p the input element as a double), else 0.
 * u0 and u1 are draws 0 and 1 of element n, in [0, 1) with 32 random bits.
 * The seed is an attribute (0.0 by default): unlike ONNX Runtime, which
 * draws a seed per session when the model gives none, kiln's numbers are
 * the same on every run. The layout is fixed (the position counts in the
 * original layout), so a blocked graph keeps these operators in theirs.
 * The compute rules are transform_random_compute.c.
 */
#include <math.h>

#include "op/impl.h"
#include "op/random_attrs.h"
#include "op/random_bits.h"
#include "op/transform_common.h"

#define KILN_FIELD_COUNT_(fields) ((int)(sizeof(fields) / sizeof(fields[0])))

static const kiln_attr_field_t kiln_random_uniform_fields[] = {
    KILN_ATTR_FIELD(kiln_random_attrs_t, shape, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_random_attrs_t, dtype, DTYPE, "\"float32\""),
    KILN_ATTR_FIELD(kiln_random_attrs_t, low, FLOAT, "0.0"),
    KILN_ATTR_FIELD(kiln_random_attrs_t, high, FLOAT, "1.0"),
    KILN_ATTR_FIELD(kiln_random_attrs_t, seed, FLOAT, "0.0"),
};

static const kiln_attr_field_t kiln_random_normal_fields[] = {
    KILN_ATTR_FIELD(kiln_random_attrs_t, shape, INTS, "[]"),
    KILN_ATTR_FIELD(kiln_random_attrs_t, dtype, DTYPE, "\"float32\""),
    KILN_ATTR_FIELD(kiln_random_attrs_t, mean, FLOAT, "0.0"),
    KILN_ATTR_FIELD(kiln_random_attrs_t, scale, FLOAT, "1.0"),
    KILN_ATTR_FIELD(kiln_random_attrs_t, seed, FLOAT, "0.0"),
};

static const kiln_attr_field_t kiln_random_bernoulli_fields[] = {
    KILN_ATTR_FIELD(kiln_random_attrs_t, dtype, DTYPE, "\"float32\""),
    KILN_ATTR_FIELD(kiln_random_attrs_t, seed, FLOAT, "0.0"),
};

static bool is_float(kiln_dtype_t dtype) {
  return kiln_scalar_class(dtype) == KILN_SCALAR_CLASS_FLOAT;
}

static kiln_status_t random_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_random_attrs_t *a = attrs;
  if (!isfinite(a->seed)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: seed %g is not finite", op->name, a->seed);
  }
  if (op->id == KILN_OP_RANDOM_BERNOULLI) {
    if (kiln_scalar_kind(a->dtype) == KILN_SCALAR_KIND_NONE) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: dtype %d is not a dtype", op->name, (int)a->dtype);
    }
    return KILN_OK;
  }
  if (!is_float(a->dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: dtype %s is not a float type", op->name,
                       kiln_dtype_name(a->dtype));
  }
  if (a->shape.count > KILN_MAX_RANK) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: shape has %d dims; at most %d", op->name,
                       (int)a->shape.count, KILN_MAX_RANK);
  }
  double lo = op->id == KILN_OP_RANDOM_UNIFORM ? a->low : a->mean;
  double hi = op->id == KILN_OP_RANDOM_UNIFORM ? a->high : a->scale;
  if (!isfinite(lo) || !isfinite(hi) || (op->id == KILN_OP_RANDOM_UNIFORM && lo > hi)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: %s %g and %s %g must be finite%s", op->name,
                       op->id == KILN_OP_RANDOM_UNIFORM ? "low" : "mean", lo,
                       op->id == KILN_OP_RANDOM_UNIFORM ? "high" : "scale", hi,
                       op->id == KILN_OP_RANDOM_UNIFORM ? ", low <= high" : "");
  }
  return KILN_OK;
}

/* uniform and normal: the shape attribute's dims, each >= 0. */
static kiln_status_t random_rule(const kiln_op_t *op, const void *attrs,
                                 const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  (void)inputs;
  const kiln_random_attrs_t *a = attrs;
  out_shape->dtype = a->dtype;
  out_shape->ndim = (int)a->shape.count;
  for (int d = 0; d < out_shape->ndim; ++d) {
    if (a->shape.values[d] < 0) {
      return KILN_STATUS(INVALID_ARGUMENT, "%s: shape dim %d is %lld; dims must be >= 0", op->name,
                         d, (long long)a->shape.values[d]);
    }
    out_shape->dims[d] = a->shape.values[d];
  }
  return KILN_OK;
}

/* bernoulli: the probabilities' shape, float, in the dtype attribute. */
static kiln_status_t bernoulli_rule(const kiln_op_t *op, const void *attrs,
                                    const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  const kiln_random_attrs_t *a = attrs;
  kiln_tensor_type_t p = kiln_tinputs_get(inputs, 0);
  if (!is_float(p.dtype)) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: the probabilities are %s; expected a float type",
                       op->name, kiln_dtype_name(p.dtype));
  }
  out_shape->dtype = a->dtype;
  out_shape->ndim = p.ndim;
  kiln_transform_copy_dims(out_shape->dims, p.shape, p.ndim);
  return KILN_OK;
}

static kiln_tshape_rule_fn rule_of(const kiln_op_t *op) {
  return op->id == KILN_OP_RANDOM_BERNOULLI ? bernoulli_rule : random_rule;
}

static kiln_status_t random_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, rule_of(relation->op), out_type);
}

/* Positions count in the original layout: no blocked form. */
static kiln_status_t random_layout(kiln_layout_relation_t *relation) {
  for (int i = 0; i < relation->num_inputs; ++i) {
    relation->required_layouts[i] = "";
  }
  relation->output_layout = "";
  return KILN_OK;
}

/* Element n's value in float64 (p: its probability, for bernoulli). */
static double random_value(const kiln_op_t *op, const kiln_random_attrs_t *a, uint32_t key,
                           uint64_t n, double p) {
  double u0 = kiln_random_unit(key, n, 0);
  if (op->id == KILN_OP_RANDOM_UNIFORM) {
    return a->low + (a->high - a->low) * u0;
  }
  if (op->id == KILN_OP_RANDOM_NORMAL) {
    double radius = sqrt(-2.0 * log(1.0 - u0));
    return a->mean + a->scale * (radius * cos(KILN_RANDOM_TWO_PI * kiln_random_unit(key, n, 1)));
  }
  return u0 < p ? 1.0 : 0.0;
}

static kiln_status_t random_reference(const kiln_kernel_args_t *args) {
  const kiln_tensor_t *p = args->num_inputs > 0 ? args->inputs[0] : NULL;
  kiln_tinputs_t inputs = {args->num_inputs, NULL, args->inputs};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, rule_of(args->op), &inputs));
  const kiln_random_attrs_t *a = args->attrs;
  uint32_t key = kiln_random_key(a->seed);
  kiln_tensor_t *out = args->outputs[0];
  kiln_scalar_kind_t kind = kiln_scalar_kind(kiln_tensor_dtype(out));
  kiln_scalar_kind_t p_kind = p ? kiln_scalar_kind(kiln_tensor_dtype(p)) : KILN_SCALAR_KIND_NONE;
  int64_t count = kiln_tensor_element_count(out);
  for (int64_t n = 0; n < count; ++n) {
    double prob = p ? kiln_scalar_to_double(kiln_scalar_load(p_kind, kiln_tensor_data(p), n)) : 0;
    double v = random_value(args->op, a, key, (uint64_t)n, prob);
    kiln_scalar_store(kind, kiln_tensor_data(out), n, kiln_scalar_float(v));
  }
  return KILN_OK;
}

#define KILN_RANDOM_OP_(symbol, op_name, op_id, inputs, fields)        \
  const kiln_op_t symbol = {                                           \
      .name = op_name,                                                 \
      .id = op_id,                                                     \
      .min_inputs = inputs,                                            \
      .max_inputs = inputs,                                            \
      .pattern = KILN_OP_PATTERN_OPAQUE,                               \
      .attrs_size = sizeof(kiln_random_attrs_t),                       \
      .num_attr_fields = KILN_FIELD_COUNT_(fields),                    \
      .attr_fields = fields,                                           \
      .validate_attrs = random_validate,                               \
      .infer_type = random_infer_type,                                 \
      .correct_layout = random_layout,                                 \
  };                                                                   \
  const kiln_op_impl_t symbol##_impl = {.reference = random_reference, \
                                        .compute = kiln_compute_random}

KILN_RANDOM_OP_(kiln_op_random_uniform, "random.uniform", KILN_OP_RANDOM_UNIFORM, 0,
                kiln_random_uniform_fields);
KILN_RANDOM_OP_(kiln_op_random_normal, "random.normal", KILN_OP_RANDOM_NORMAL, 0,
                kiln_random_normal_fields);
KILN_RANDOM_OP_(kiln_op_random_bernoulli, "random.bernoulli", KILN_OP_RANDOM_BERNOULLI, 1,
                kiln_random_bernoulli_fields);
