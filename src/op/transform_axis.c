/*
 * Operators that run along one axis and depend on the order of its
 * elements: cumsum and topk.
 *
 * Both see the data as (outer, D, inner) around the axis and treat each line
 * of D elements, `inner` apart, on its own. cumsum keeps one running sum per
 * line, walking it forward or (reverse) backward, and stores the sum before
 * (exclusive) or after adding each element; floats accumulate in double and
 * each output is rounded once, integers wrap (in uint64, defined C). topk
 * returns a tuple (values, indices int64) whose dim on the axis is k. Its
 * reference kernel needs no scratch memory: it selects the k elements in
 * order, each time the first of the elements that come after the previous
 * pick in the total order (value, then index: larger values first when
 * `largest`, smaller first otherwise, and the smaller index first among
 * equal values), which is O(k * D) per line and obviously right. NaN orders
 * above every number (NumPy's sort). The output is always sorted (ONNX
 * allows any order when sorted is False). Elements are compared through
 * kiln_scalar_t, so every dtype works; values are copied byte-wise.
 */
#include <string.h>

#include "op/gather_attrs.h"
#include "op/gather_compute.h"
#include "op/impl.h"
#include "op/transform_common.h"
#include "runtime/shape_func.h"

#define KILN_FIELD_COUNT_(fields) ((int)(sizeof(fields) / sizeof(fields[0])))

/* (outer, extent, inner) of a shape around `axis`. */
typedef struct line_plan_t {
  int64_t outer;
  int64_t extent;
  int64_t inner;
} line_plan_t;

static line_plan_t line_plan(const kiln_tensor_type_t *data, int axis) {
  return (line_plan_t){kiln_transform_product(data->shape, 0, axis), data->shape[axis],
                       kiln_transform_product(data->shape, axis + 1, data->ndim)};
}

/* ---- cumsum ---- */

static const kiln_attr_field_t kiln_cumsum_fields[] = {
    KILN_ATTR_FIELD(kiln_cumsum_attrs_t, axis, INT, "0"),
    KILN_ATTR_FIELD(kiln_cumsum_attrs_t, exclusive, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_cumsum_attrs_t, reverse, BOOL, "False"),
};

static kiln_status_t cumsum_rule(const kiln_op_t *op, const void *attrs,
                                 const kiln_tinputs_t *inputs, kiln_tshape_t *out_shape) {
  kiln_tensor_type_t data = kiln_tinputs_get(inputs, 0);
  kiln_scalar_class_t class = kiln_scalar_class(data.dtype);
  if (class == KILN_SCALAR_CLASS_BOOL || class == KILN_SCALAR_CLASS_NONE) {
    char shape[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must be numbers, not %s", op->name,
                       kiln_op_shape_text(&data, shape), kiln_dtype_name(data.dtype));
  }
  int axis = 0;
  KILN_RETURN_IF_ERROR(
      kiln_transform_axis(op, "axis", ((const kiln_cumsum_attrs_t *)attrs)->axis, &data, 0, &axis));
  out_shape->dtype = data.dtype;
  out_shape->ndim = data.ndim;
  kiln_transform_copy_dims(out_shape->dims, data.shape, data.ndim);
  return KILN_OK;
}

static kiln_status_t cumsum_infer_type(const kiln_type_relation_t *relation,
                                       const kiln_type_t **out_type) {
  return kiln_tshape_infer_type(relation, cumsum_rule, out_type);
}

/* sum + x in the class of x: double for floats, wrapping for integers. */
static kiln_scalar_t cumsum_add(kiln_scalar_t sum, kiln_scalar_t x) {
  if (x.is_float) {
    return kiln_scalar_float(sum.f + x.f);
  }
  if (x.is_unsigned) {
    return kiln_scalar_uint(sum.u + x.u);
  }
  return kiln_scalar_int((int64_t)((uint64_t)sum.i + (uint64_t)x.i));
}

static kiln_status_t cumsum_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tshape_check_kernel(args, cumsum_rule, &inputs));
  const kiln_cumsum_attrs_t *cumsum = args->attrs;
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  int axis = 0;
  KILN_RETURN_IF_ERROR(kiln_transform_axis(args->op, "axis", cumsum->axis, &data, 0, &axis));
  line_plan_t plan = line_plan(&data, axis);
  kiln_scalar_kind_t kind = kiln_scalar_kind(data.dtype);
  kiln_scalar_class_t class = kiln_scalar_class(data.dtype);
  kiln_scalar_t zero = class == KILN_SCALAR_CLASS_FLOAT      ? kiln_scalar_float(0.0)
                       : class == KILN_SCALAR_CLASS_UNSIGNED ? kiln_scalar_uint(0)
                                                             : kiln_scalar_int(0);
  const void *in = kiln_tensor_data(args->inputs[0]);
  void *out = kiln_tensor_data(args->outputs[0]);
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t i = 0; i < plan.inner; ++i) {
      kiln_scalar_t sum = zero;
      for (int64_t step = 0; step < plan.extent; ++step) {
        int64_t x = cumsum->reverse ? plan.extent - 1 - step : step;
        int64_t at = (o * plan.extent + x) * plan.inner + i;
        kiln_scalar_t value = kiln_scalar_load(kind, in, at);
        if (!cumsum->exclusive) {
          sum = cumsum_add(sum, value);
        }
        kiln_scalar_store(kind, out, at, sum);
        if (cumsum->exclusive) {
          sum = cumsum_add(sum, value);
        }
      }
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_cumsum = {
    .name = "cumsum",
    .id = KILN_OP_CUMSUM,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_cumsum_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_cumsum_fields),
    .attr_fields = kiln_cumsum_fields,
    .infer_type = cumsum_infer_type,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_cumsum_impl = {
    .reference = cumsum_reference,
    .compute = kiln_compute_cumsum,
};

/* ---- topk ---- */

static const kiln_attr_field_t kiln_topk_fields[] = {
    KILN_ATTR_FIELD(kiln_topk_attrs_t, k, INT, "1"),
    KILN_ATTR_FIELD(kiln_topk_attrs_t, axis, INT, "-1"),
    KILN_ATTR_FIELD(kiln_topk_attrs_t, largest, BOOL, "True"),
    KILN_ATTR_FIELD(kiln_topk_attrs_t, sorted, BOOL, "True"),
};

static kiln_status_t topk_validate(const kiln_op_t *op, const void *attrs) {
  int64_t k = ((const kiln_topk_attrs_t *)attrs)->k;
  if (k < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: k is %lld; it must be >= 0", op->name, (long long)k);
  }
  return KILN_OK;
}

/* The values' shape (the indices' shape too, in int64) and the axis. */
static kiln_status_t topk_rule(const kiln_op_t *op, const void *attrs,
                               const kiln_tensor_type_t *data, kiln_tshape_t *out_shape,
                               int *out_axis) {
  const kiln_topk_attrs_t *topk = attrs;
  KILN_RETURN_IF_ERROR(kiln_op_attrs_validate(op, attrs));
  KILN_RETURN_IF_ERROR(kiln_transform_axis(op, "axis", topk->axis, data, 0, out_axis));
  out_shape->dtype = data->dtype;
  out_shape->ndim = data->ndim;
  return kiln_shape_topk(op->name, data->ndim, data->shape, *out_axis, topk->k, out_shape->dims);
}

static kiln_status_t topk_infer_type(const kiln_type_relation_t *relation,
                                     const kiln_type_t **out_type) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tinputs_of_relation(relation, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  kiln_tshape_t shape;
  int axis = 0;
  KILN_RETURN_IF_ERROR(topk_rule(relation->op, relation->attrs, &data, &shape, &axis));
  const kiln_type_t **fields = NULL;
  KILN_RETURN_IF_ERROR(kiln_arena_allocate_array(relation->arena, 2, sizeof(*fields),
                                                 _Alignof(kiln_type_t *), (void **)&fields));
  KILN_RETURN_IF_ERROR(kiln_tshape_to_type(relation->op, &shape, relation->arena, &fields[0]));
  shape.dtype = KILN_DTYPE_INT64;
  KILN_RETURN_IF_ERROR(kiln_tshape_to_type(relation->op, &shape, relation->arena, &fields[1]));
  return kiln_tuple_type_create(relation->arena, 2, fields, out_type);
}

/* One line of the data: `extent` elements `inner` apart from `base`. */
typedef struct topk_line_t {
  kiln_scalar_kind_t kind;
  const void *data;
  int64_t base;
  int64_t inner;
  bool largest;
} topk_line_t;

/* Whether element a comes before element b in the output order. */
static bool topk_before(const topk_line_t *line, int64_t a, int64_t b) {
  kiln_scalar_t x = kiln_scalar_load(line->kind, line->data, line->base + a * line->inner);
  kiln_scalar_t y = kiln_scalar_load(line->kind, line->data, line->base + b * line->inner);
  int order = kiln_scalar_compare(x, y);
  if (order == 0) {
    return a < b;
  }
  return line->largest ? order > 0 : order < 0;
}

/* The first element after `previous` (-1: none yet) in the output order. */
static int64_t topk_next(const topk_line_t *line, int64_t extent, int64_t previous) {
  int64_t best = -1;
  for (int64_t x = 0; x < extent; ++x) {
    bool after = previous < 0 || topk_before(line, previous, x);
    if (after && (best < 0 || topk_before(line, x, best))) {
      best = x;
    }
  }
  return best;
}

static kiln_status_t topk_check_outputs(const kiln_kernel_args_t *args, kiln_tshape_t *shape) {
  if (args->num_outputs != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: expected 2 outputs (values, indices), got %d",
                       args->op->name, args->num_outputs);
  }
  KILN_RETURN_IF_ERROR(kiln_tshape_check_output(args->op, 0, args->outputs[0], shape));
  kiln_tshape_t indices = *shape;
  indices.dtype = KILN_DTYPE_INT64;
  return kiln_tshape_check_output(args->op, 1, args->outputs[1], &indices);
}

static kiln_status_t topk_reference(const kiln_kernel_args_t *args) {
  kiln_tinputs_t inputs = {0, NULL, NULL};
  KILN_RETURN_IF_ERROR(kiln_tinputs_of_kernel(args, &inputs));
  kiln_tensor_type_t data = kiln_tinputs_get(&inputs, 0);
  kiln_tshape_t shape;
  int axis = 0;
  KILN_RETURN_IF_ERROR(topk_rule(args->op, args->attrs, &data, &shape, &axis));
  KILN_RETURN_IF_ERROR(topk_check_outputs(args, &shape));
  const kiln_topk_attrs_t *topk = args->attrs;
  line_plan_t plan = line_plan(&data, axis);
  size_t size = kiln_dtype_size(data.dtype);
  const char *src = kiln_tensor_data(args->inputs[0]);
  char *values = kiln_tensor_data(args->outputs[0]);
  int64_t *indices = kiln_tensor_data(args->outputs[1]);
  topk_line_t line = {kiln_scalar_kind(data.dtype), src, 0, plan.inner, topk->largest};
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t i = 0; i < plan.inner; ++i) {
      line.base = o * plan.extent * plan.inner + i;
      int64_t pick = -1;
      for (int64_t j = 0; j < topk->k; ++j) {
        pick = topk_next(&line, plan.extent, pick);
        int64_t at = (o * topk->k + j) * plan.inner + i;
        indices[at] = pick;
        memcpy(values + (size_t)at * size, src + (size_t)(line.base + pick * plan.inner) * size,
               size);
      }
    }
  }
  return KILN_OK;
}

const kiln_op_t kiln_op_topk = {
    .name = "topk",
    .id = KILN_OP_TOPK,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_topk_attrs_t),
    .num_attr_fields = KILN_FIELD_COUNT_(kiln_topk_fields),
    .attr_fields = kiln_topk_fields,
    .validate_attrs = topk_validate,
    .infer_type = topk_infer_type,
    .correct_layout = kiln_layout_keep_axes,
};

const kiln_op_impl_t kiln_op_topk_impl = {
    .reference = topk_reference,
    .compute = kiln_compute_topk,
};
