/*
 * shape_of: the dims [start, end) of its input's shape as a 1-D int64
 * tensor (ONNX Shape, Relay's shape_of). start and end count from the back
 * when negative and are clamped to [0, rank], as ONNX Shape (15) does, so
 * the output's length depends on the input's rank alone: the relation reads
 * only the rank and takes inputs with symbolic dims as they are
 * (symbolic_relation), which is what the operator is for. The ONNX
 * importer folds the Shape of a static input to a constant and emits
 * shape_of only when a dim is symbolic (a loop body's value, a sequence's
 * element), where the interpreter's kernel reads the concrete shape at run
 * time. The compute rule, for a static input, is the dims as constants: one
 * elementwise compute selecting the constant of each position (an empty
 * output, which the loop IR cannot express, is UNIMPLEMENTED).
 */
#include "op/compute.h"
#include "op/impl.h"
#include "op/transform_attrs.h"
#include "op/transform_common.h"

static const kiln_attr_field_t kiln_shape_of_fields[] = {
    KILN_ATTR_FIELD(kiln_shape_of_attrs_t, start, INT, "0"),
    KILN_ATTR_FIELD(kiln_shape_of_attrs_t, end, INT, "2147483647"),
};

static int64_t shape_of_bound(int64_t value, int rank) {
  if (value < 0) {
    value += rank;
  }
  return value < 0 ? 0 : value > rank ? rank : value;
}

/* The first dim and the count of dims the output holds, for rank `ndim`. */
static void shape_of_range(const kiln_shape_of_attrs_t *attrs, int ndim, int *out_first,
                           int *out_count) {
  int64_t start = shape_of_bound(attrs->start, ndim);
  int64_t end = shape_of_bound(attrs->end, ndim);
  *out_first = (int)start;
  *out_count = end > start ? (int)(end - start) : 0;
}

static kiln_status_t shape_of_infer_type(const kiln_type_relation_t *relation,
                                         const kiln_type_t **out_type) {
  const kiln_tensor_type_t *data = NULL;
  KILN_RETURN_IF_ERROR(kiln_op_input_tensor(relation, 0, &data));
  int first = 0, count = 0;
  shape_of_range(relation->attrs, data->ndim, &first, &count);
  const int64_t shape[1] = {count};
  return kiln_tensor_type_create(relation->arena, KILN_DTYPE_INT64, 1, shape, out_type);
}

static kiln_status_t shape_of_reference(const kiln_kernel_args_t *args) {
  const kiln_tensor_t *data = args->inputs[0];
  int first = 0, count = 0;
  shape_of_range(args->attrs, kiln_tensor_ndim(data), &first, &count);
  kiln_tensor_t *out = args->outputs[0];
  if (kiln_tensor_dtype(out) != KILN_DTYPE_INT64 || kiln_tensor_ndim(out) != 1 ||
      kiln_tensor_shape(out)[0] != count) {
    return KILN_STATUS(INVALID_ARGUMENT, "shape_of: the output must be (%d) int64", count);
  }
  int64_t *values = kiln_tensor_data(out);
  for (int i = 0; i < count; ++i) {
    values[i] = kiln_tensor_shape(data)[first + i];
  }
  return KILN_OK;
}

/* ---- the compute rule ---- */

typedef struct shape_of_dims_t {
  int count;
  const int64_t *dims; /* the input's, from the first dim the output holds */
} shape_of_dims_t;

static const kiln_tir_expr_t *shape_of_body(kiln_tir_builder_t *b,
                                            const kiln_tir_expr_t *const *indices, void *user) {
  const shape_of_dims_t *s = user;
  const kiln_tir_expr_t *at = kiln_tir_b_cast(b, kiln_tir_scalar(KILN_DTYPE_INT64), indices[0]);
  const kiln_tir_expr_t *value = kiln_tir_b_int(b, KILN_DTYPE_INT64, s->dims[s->count - 1]);
  for (int i = s->count - 2; i >= 0; --i) {
    const kiln_tir_expr_t *here =
        kiln_tir_b_bin(b, KILN_TIR_EXPR_EQ, at, kiln_tir_b_int(b, KILN_DTYPE_INT64, i));
    value = kiln_tir_b_select(b, here, kiln_tir_b_int(b, KILN_DTYPE_INT64, s->dims[i]), value);
  }
  return value;
}

static kiln_status_t shape_of_compute(const kiln_compute_args_t *args,
                                      kiln_compute_result_t *out_result) {
  const kiln_te_tensor_t *data = args->inputs[0];
  int first = 0;
  shape_of_dims_t s = {0, NULL};
  shape_of_range(args->attrs, data->ndim, &first, &s.count);
  s.dims = data->shape + first;
  if (s.count == 0) { /* the loop IR has no extent 0 */
    return KILN_STATUS(UNIMPLEMENTED,
                       "shape_of: no dims in [start, end) of a rank-%d input: an "
                       "empty output has no compute rule",
                       data->ndim);
  }
  return kiln_compute_one(args, shape_of_body, &s, out_result);
}

const kiln_op_t kiln_op_shape_of = {
    .name = "shape_of",
    .id = KILN_OP_SHAPE_OF,
    .min_inputs = 1,
    .max_inputs = 1,
    .pattern = KILN_OP_PATTERN_OPAQUE,
    .attrs_size = sizeof(kiln_shape_of_attrs_t),
    .num_attr_fields = (int)(sizeof(kiln_shape_of_fields) / sizeof(kiln_shape_of_fields[0])),
    .attr_fields = kiln_shape_of_fields,
    .infer_type = shape_of_infer_type,
    .correct_layout = kiln_layout_unknown_output,
    .symbolic_dims = true,
    .symbolic_relation = true,
};

const kiln_op_impl_t kiln_op_shape_of_impl = {
    .reference = shape_of_reference,
    .compute = shape_of_compute,
};
