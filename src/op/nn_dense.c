/*
 * nn.dense, nn.matmul and nn.batch_matmul.
 *
 * The three are one computation: a batch of matrix products out = A @ B,
 * where each operand's batch dims broadcast to the output's and each matrix
 * is read through two element strides, so a transposed operand is a swap of
 * strides rather than a copy. Each operator only builds the plan (gemm_plan_t:
 * M, N, K, the batch dims and the strides) from its input types; the same
 * plan gives the type relation its output shape and the kernel its loops, so
 * the two cannot disagree.
 *
 * - dense: data (..., K) @ weight (N, K)^T -> (..., N): data's leading dims
 *   fold into M, no batch.
 * - matmul: NumPy's (ONNX MatMul): a 1-D operand is promoted to a matrix
 *   ((K,) -> (1, K) on the left, (K, 1) on the right) and the added dim is
 *   dropped from the result; the dims before the last two broadcast.
 * - batch_matmul: Relay's, x (B, M, K) and y (B, N, K) by default
 *   (transpose_a False, transpose_b True); a batch of 1 broadcasts.
 * - contrib_dense_pack: dense with its weight packed in column blocks
 *   (TVM's dense_pack, weight layout NK{b}n): data (..., K) and weight
 *   (ceil(N / b), K, b), whose element (k, n) is weight[n / b, k, n % b],
 *   so a block of b columns is one contiguous panel over K. units is N
 *   (0: every packed column); the last block's columns past N are padding,
 *   never read. pack_dense makes it from nn.dense with a constant weight.
 */
#include "op/impl.h"
#include "op/nn_common.h"
#include "op/nn_conv_compute.h"

/* ---- attributes ---- */

static const kiln_attr_field_t dense_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_dense_attrs_t, units, INT, "0"),
};

static const kiln_attr_field_t batch_matmul_fields[] = {
    KILN_ATTR_FIELD(kiln_nn_batch_matmul_attrs_t, transpose_a, BOOL, "False"),
    KILN_ATTR_FIELD(kiln_nn_batch_matmul_attrs_t, transpose_b, BOOL, "True"),
};

static kiln_status_t dense_validate(const kiln_op_t *op, const void *attrs) {
  const kiln_nn_dense_attrs_t *a = attrs;
  if (a->units < 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: units is %lld; it must be 0 or positive", op->name,
                       (long long)a->units);
  }
  return KILN_OK;
}

/* ---- plans ---- */

typedef struct gemm_plan_t {
  int64_t m, n, k;
  int64_t pack;     /* contrib_dense_pack's column block b, else 0 */
  int64_t a_m, a_k; /* strides of A's element (m, k) within its matrix */
  int64_t b_k, b_n; /* strides of B's element (k, n) */
  int batch_ndim;   /* the output's batch dims */
  int64_t batch[KILN_MAX_RANK];
  int a_batch_ndim; /* each operand's, aligned to the right of the output's */
  const int64_t *a_batch;
  int b_batch_ndim;
  const int64_t *b_batch;
  int out_ndim;
  int64_t out_shape[KILN_MAX_RANK];
} gemm_plan_t;

/* The output batch dims from the operands' (NumPy broadcasting). */
static kiln_status_t gemm_broadcast(const kiln_op_t *op, const kiln_tensor_type_t *a,
                                    const kiln_tensor_type_t *b, gemm_plan_t *plan) {
  int ndim = plan->a_batch_ndim > plan->b_batch_ndim ? plan->a_batch_ndim : plan->b_batch_ndim;
  plan->batch_ndim = ndim;
  for (int i = 0; i < ndim; ++i) {
    int ia = i - (ndim - plan->a_batch_ndim), ib = i - (ndim - plan->b_batch_ndim);
    int64_t da = ia >= 0 ? plan->a_batch[ia] : 1, db = ib >= 0 ? plan->b_batch[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char text_a[KILN_SHAPE_TEXT_CAPACITY], text_b[KILN_SHAPE_TEXT_CAPACITY];
      return KILN_STATUS(INVALID_ARGUMENT,
                         "%s: cannot broadcast the batch dims of %s and %s: %lld vs %lld", op->name,
                         kiln_op_shape_text(a, text_a), kiln_op_shape_text(b, text_b),
                         (long long)da, (long long)db);
    }
    plan->batch[i] = da == 1 ? db : da;
    plan->out_shape[i] = plan->batch[i];
  }
  plan->out_ndim = ndim;
  return KILN_OK;
}

static kiln_status_t gemm_contraction_error(const kiln_op_t *op, const kiln_tensor_type_t *a,
                                            const kiln_tensor_type_t *b, int64_t ka, int64_t kb) {
  char text_a[KILN_SHAPE_TEXT_CAPACITY], text_b[KILN_SHAPE_TEXT_CAPACITY];
  return KILN_STATUS(INVALID_ARGUMENT, "%s: %s and %s do not match: contraction dim %lld vs %lld",
                     op->name, kiln_op_shape_text(a, text_a), kiln_op_shape_text(b, text_b),
                     (long long)ka, (long long)kb);
}

static kiln_status_t dense_plan(const kiln_op_t *op, const kiln_nn_dense_attrs_t *attrs,
                                const kiln_tensor_type_t *data, const kiln_tensor_type_t *weight,
                                gemm_plan_t *plan) {
  char data_text[KILN_SHAPE_TEXT_CAPACITY], weight_text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_op_shape_text(data, data_text);
  kiln_op_shape_text(weight, weight_text);
  if (data->ndim < 1 || weight->ndim != 2) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s must have rank >= 1 and weight %s rank 2",
                       op->name, data_text, weight_text);
  }
  int64_t k = data->shape[data->ndim - 1];
  if (weight->shape[1] != k) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s has %lld features but weight %s expects %lld",
                       op->name, data_text, (long long)k, weight_text, (long long)weight->shape[1]);
  }
  if (attrs->units != 0 && attrs->units != weight->shape[0]) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: units %lld does not match the %lld rows of weight %s",
                       op->name, (long long)attrs->units, (long long)weight->shape[0], weight_text);
  }
  *plan = (gemm_plan_t){.m = 1,
                        .n = weight->shape[0],
                        .k = k,
                        .a_m = k,
                        .a_k = 1,
                        .b_k = 1,
                        .b_n = k,
                        .out_ndim = data->ndim};
  for (int i = 0; i + 1 < data->ndim; ++i) {
    plan->m *= data->shape[i];
    plan->out_shape[i] = data->shape[i];
  }
  plan->out_shape[data->ndim - 1] = plan->n;
  return KILN_OK;
}

static kiln_status_t dense_pack_plan(const kiln_op_t *op, const kiln_nn_dense_attrs_t *attrs,
                                     const kiln_tensor_type_t *data,
                                     const kiln_tensor_type_t *weight, gemm_plan_t *plan) {
  char data_text[KILN_SHAPE_TEXT_CAPACITY], weight_text[KILN_SHAPE_TEXT_CAPACITY];
  kiln_op_shape_text(data, data_text);
  kiln_op_shape_text(weight, weight_text);
  if (data->ndim < 1 || weight->ndim != 3 || weight->shape[2] < 1) {
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: data %s must have rank >= 1 and weight %s rank 3 (N/b, K, b)", op->name,
                       data_text, weight_text);
  }
  int64_t k = data->shape[data->ndim - 1], b = weight->shape[2];
  int64_t n = attrs->units ? attrs->units : weight->shape[0] * b;
  if (weight->shape[1] != k) {
    return KILN_STATUS(INVALID_ARGUMENT, "%s: data %s has %lld features but weight %s expects %lld",
                       op->name, data_text, (long long)k, weight_text, (long long)weight->shape[1]);
  }
  if (n > weight->shape[0] * b || n <= (weight->shape[0] - 1) * b) {
    return KILN_STATUS(
        INVALID_ARGUMENT,
        "%s: units %lld does not fill the last of the %lld blocks of %lld columns of "
        "weight %s",
        op->name, (long long)n, (long long)weight->shape[0], (long long)b, weight_text);
  }
  kiln_nn_dense_attrs_t unchecked = {0};
  const int64_t shape[2] = {n, k};
  kiln_tensor_type_t unpacked = {.dtype = weight->dtype, .ndim = 2, .shape = shape};
  KILN_RETURN_IF_ERROR(dense_plan(op, &unchecked, data, &unpacked, plan));
  plan->pack = b;
  return KILN_OK;
}

static kiln_status_t matmul_plan(const kiln_op_t *op, const kiln_tensor_type_t *a,
                                 const kiln_tensor_type_t *b, gemm_plan_t *plan) {
  if (a->ndim < 1 || b->ndim < 1) {
    char text_a[KILN_SHAPE_TEXT_CAPACITY], text_b[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: operands %s and %s must have rank >= 1", op->name,
                       kiln_op_shape_text(a, text_a), kiln_op_shape_text(b, text_b));
  }
  bool a_matrix = a->ndim >= 2, b_matrix = b->ndim >= 2;
  *plan = (gemm_plan_t){.m = a_matrix ? a->shape[a->ndim - 2] : 1,
                        .k = a->shape[a->ndim - 1],
                        .n = b_matrix ? b->shape[b->ndim - 1] : 1,
                        .a_batch_ndim = a_matrix ? a->ndim - 2 : 0,
                        .a_batch = a->shape,
                        .b_batch_ndim = b_matrix ? b->ndim - 2 : 0,
                        .b_batch = b->shape};
  int64_t kb = b->shape[b_matrix ? b->ndim - 2 : 0];
  if (kb != plan->k) {
    return gemm_contraction_error(op, a, b, plan->k, kb);
  }
  plan->a_m = plan->k;
  plan->a_k = 1;
  plan->b_k = plan->n;
  plan->b_n = 1;
  KILN_RETURN_IF_ERROR(gemm_broadcast(op, a, b, plan));
  if (a_matrix) {
    plan->out_shape[plan->out_ndim++] = plan->m;
  }
  if (b_matrix) {
    plan->out_shape[plan->out_ndim++] = plan->n;
  }
  return KILN_OK;
}

static kiln_status_t batch_matmul_plan(const kiln_op_t *op,
                                       const kiln_nn_batch_matmul_attrs_t *attrs,
                                       const kiln_tensor_type_t *x, const kiln_tensor_type_t *y,
                                       gemm_plan_t *plan) {
  if (x->ndim != 3 || y->ndim != 3) {
    char text_x[KILN_SHAPE_TEXT_CAPACITY], text_y[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT, "%s: x %s and y %s must have rank 3", op->name,
                       kiln_op_shape_text(x, text_x), kiln_op_shape_text(y, text_y));
  }
  bool ta = attrs->transpose_a, tb = attrs->transpose_b;
  *plan = (gemm_plan_t){.m = x->shape[ta ? 2 : 1],
                        .k = x->shape[ta ? 1 : 2],
                        .n = y->shape[tb ? 1 : 2],
                        .a_batch_ndim = 1,
                        .a_batch = x->shape,
                        .b_batch_ndim = 1,
                        .b_batch = y->shape};
  int64_t ky = y->shape[tb ? 2 : 1];
  if (ky != plan->k) {
    char text_x[KILN_SHAPE_TEXT_CAPACITY], text_y[KILN_SHAPE_TEXT_CAPACITY];
    return KILN_STATUS(INVALID_ARGUMENT,
                       "%s: x %s and y %s do not match: contraction dim %lld vs %lld "
                       "(transpose_a %s, transpose_b %s)",
                       op->name, kiln_op_shape_text(x, text_x), kiln_op_shape_text(y, text_y),
                       (long long)plan->k, (long long)ky, ta ? "True" : "False",
                       tb ? "True" : "False");
  }
  plan->a_m = ta ? 1 : plan->k;
  plan->a_k = ta ? plan->m : 1;
  plan->b_k = tb ? 1 : plan->n;
  plan->b_n = tb ? plan->k : 1;
  KILN_RETURN_IF_ERROR(gemm_broadcast(op, x, y, plan));
  plan->out_shape[plan->out_ndim++] = plan->m;
  plan->out_shape[plan->out_ndim++] = plan->n;
  return KILN_OK;
}

/* The plan of any of the three operators. */
static kiln_status_t gemm_plan_make(const kiln_op_t *op, const void *attrs,
                                    const kiln_tensor_type_t *a, const kiln_tensor_type_t *b,
                                    gemm_plan_t *plan) {
  if (op->id == KILN_OP_DENSE) {
    return dense_plan(op, attrs, a, b, plan);
  }
  if (op->id == KILN_OP_BATCH_MATMUL) {
    return batch_matmul_plan(op, attrs, a, b, plan);
  }
  if (op->id == KILN_OP_DENSE_PACK) {
    return dense_pack_plan(op, attrs, a, b, plan);
  }
  return matmul_plan(op, a, b, plan);
}

/* ---- rules ---- */

_Static_assert(KILN_OP_MATMUL == KILN_OP_DENSE + 1 && KILN_OP_BATCH_MATMUL == KILN_OP_DENSE + 2 &&
                   KILN_OP_DENSE_PACK == KILN_OP_DENSE + 3,
               "gemm_input_names follows op_list.h");

static const char *const gemm_input_names[4][2] = {
    {"data", "weight"}, /* dense */
    {"a", "b"},         /* matmul */
    {"x", "y"},         /* batch_matmul */
    {"data", "weight"}, /* contrib_dense_pack */
};

static kiln_status_t gemm_infer(const kiln_type_relation_t *relation,
                                const kiln_type_t **out_type) {
  const kiln_op_t *op = relation->op;
  KILN_RETURN_IF_ERROR(kiln_nn_relation_attrs(op, relation->attrs));
  const kiln_tensor_type_t *inputs[2];
  KILN_RETURN_IF_ERROR(kiln_nn_input_tensors(relation, 2, inputs));
  const char *const *names = gemm_input_names[op->id - KILN_OP_DENSE];
  KILN_RETURN_IF_ERROR(kiln_nn_same_dtype(op, names[0], inputs[0], names[1], inputs[1]));
  gemm_plan_t plan;
  KILN_RETURN_IF_ERROR(gemm_plan_make(op, relation->attrs, inputs[0], inputs[1], &plan));
  return kiln_tensor_type_create(relation->arena, inputs[0]->dtype, plan.out_ndim, plan.out_shape,
                                 out_type);
}

/* Inputs in the primal form of their layouts; dense's output keeps data's
 * axes, a matmul's may change rank, so its layout is left unknown. */
static kiln_status_t gemm_correct_layout(kiln_layout_relation_t *relation) {
  kiln_op_id_t id = relation->op->id;
  return kiln_nn_layout_rule_primal(relation, id == KILN_OP_DENSE || id == KILN_OP_DENSE_PACK);
}

/* ---- reference kernel ---- */

/* Offset, in matrices, of output batch `index` within an operand whose
 * `ndim` batch dims align to the right of the output's and broadcast. */
static int64_t gemm_batch_offset(const gemm_plan_t *plan, int ndim, const int64_t *dims,
                                 int64_t index) {
  int64_t offset = 0, stride = 1;
  for (int i = plan->batch_ndim - 1; i >= 0; --i) {
    int64_t coord = index % plan->batch[i];
    index /= plan->batch[i];
    int j = i - (plan->batch_ndim - ndim);
    if (j >= 0) {
      offset += dims[j] == 1 ? 0 : coord * stride;
      stride *= dims[j];
    }
  }
  return offset;
}

/* Offset of B's element (k, n) within its matrix. */
static int64_t gemm_b_offset(const gemm_plan_t *plan, int64_t k, int64_t n) {
  if (plan->pack) {
    return (n / plan->pack) * plan->k * plan->pack + k * plan->pack + n % plan->pack;
  }
  return k * plan->b_k + n * plan->b_n;
}

static void gemm_run(const gemm_plan_t *plan, const float *a, const float *b, float *out) {
  int64_t batches = 1;
  for (int i = 0; i < plan->batch_ndim; ++i) {
    batches *= plan->batch[i];
  }
  for (int64_t t = 0; t < batches; ++t) {
    const float *ma =
        a + gemm_batch_offset(plan, plan->a_batch_ndim, plan->a_batch, t) * plan->m * plan->k;
    const float *mb =
        b + gemm_batch_offset(plan, plan->b_batch_ndim, plan->b_batch, t) * plan->k * plan->n;
    float *mo = out + t * plan->m * plan->n;
    for (int64_t i = 0; i < plan->m; ++i) {
      for (int64_t j = 0; j < plan->n; ++j) {
        double sum = 0.0;
        for (int64_t q = 0; q < plan->k; ++q) {
          sum += (double)ma[i * plan->a_m + q * plan->a_k] * (double)mb[gemm_b_offset(plan, q, j)];
        }
        mo[i * plan->n + j] = (float)sum;
      }
    }
  }
}

static kiln_status_t gemm_reference(const kiln_kernel_args_t *args) {
  KILN_RETURN_IF_ERROR(kiln_nn_kernel_begin_float32(args));
  kiln_tensor_type_t a = kiln_nn_tensor_type(args->inputs[0]);
  kiln_tensor_type_t b = kiln_nn_tensor_type(args->inputs[1]);
  gemm_plan_t plan;
  KILN_RETURN_IF_ERROR(gemm_plan_make(args->op, args->attrs, &a, &b, &plan));
  if (kiln_tensor_element_count(args->outputs[0]) == 0) {
    return KILN_OK;
  }
  gemm_run(&plan, kiln_tensor_data(args->inputs[0]), kiln_tensor_data(args->inputs[1]),
           kiln_tensor_data(args->outputs[0]));
  return KILN_OK;
}

/* ---- the operators ---- */

#define GEMM_OP(symbol, op_name, op_id, attrs_type, fields, count, validate, schedule_fn) \
  const kiln_op_t symbol = {                                                              \
      .name = op_name,                                                                    \
      .id = op_id,                                                                        \
      .min_inputs = 2,                                                                    \
      .max_inputs = 2,                                                                    \
      .pattern = KILN_OP_PATTERN_OUT_ELEMWISE_FUSABLE,                                    \
      .attrs_size = attrs_type,                                                           \
      .num_attr_fields = count,                                                           \
      .attr_fields = fields,                                                              \
      .validate_attrs = validate,                                                         \
      .infer_type = gemm_infer,                                                           \
      .symbolic_dims = true,                                                              \
      .correct_layout = gemm_correct_layout,                                              \
  };                                                                                      \
  const kiln_op_impl_t symbol##_impl = {.reference = gemm_reference,                      \
                                        .compute = kiln_compute_gemm,                     \
                                        .strategies = {[KILN_TARGET_KIND_CPU] = schedule_fn}}

GEMM_OP(kiln_op_dense, "nn.dense", KILN_OP_DENSE, sizeof(kiln_nn_dense_attrs_t), dense_fields, 1,
        dense_validate, kiln_schedule_dense_x86);
GEMM_OP(kiln_op_matmul, "nn.matmul", KILN_OP_MATMUL, 0, NULL, 0, NULL, kiln_schedule_dense_x86);
GEMM_OP(kiln_op_dense_pack, "nn.contrib_dense_pack", KILN_OP_DENSE_PACK,
        sizeof(kiln_nn_dense_attrs_t), dense_fields, 1, dense_validate, kiln_schedule_dense_x86);
GEMM_OP(kiln_op_batch_matmul, "nn.batch_matmul", KILN_OP_BATCH_MATMUL,
        sizeof(kiln_nn_batch_matmul_attrs_t), batch_matmul_fields, 2, NULL,
        kiln_schedule_dense_x86);
