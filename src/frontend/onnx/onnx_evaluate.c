/*
 * Evaluating at import what a converter needs as a constant but the graph
 * computes from its inputs, when every input it depends on has a value in
 * the options (input_values).
 *
 * A Reshape's shape or a Range's limit is often computed from a graph
 * input (a size fed to a window function, a shape read off a tensor and
 * adjusted). Without bind_input_values those inputs stay parameters, so
 * nothing computed from them folds. When the options give their values, the
 * expression is evaluated here: parameters with values become Constants,
 * every Call is made again over the evaluated (Constant) arguments and
 * folded by its reference kernel (onnx_fold.c), a TupleGetItem picks the
 * field of a folded Tuple. Results are memoized per request, so a shared
 * subexpression is computed once. The walk is recursive and stops at
 * KILN_ONNX_EVALUATE_MAX_DEPTH: deeper expressions are reported as not
 * constant, which keeps a crafted model from exhausting the C stack. The
 * new nodes live in the module's arena but not in @main's body; the module
 * is specialized to the values read, as kiln_onnx_input_constant is.
 *
 * A tensor whose static type has no elements has one value whatever the
 * graph's inputs are (the empty one), so it is known without any option: an
 * empty axes list fed as a graph input is the empty list at import.
 */
#include "base/hashmap.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/infer.h"

#define KILN_ONNX_EVALUATE_MAX_DEPTH 64

typedef struct kiln_onnx_evaluation_t {
  kiln_onnx_importer_t *importer;
  kiln_hashmap_t done; /* expr -> its Constant (or Tuple of Constants) */
} kiln_onnx_evaluation_t;

static kiln_status_t kiln_onnx_evaluate_expr(kiln_onnx_evaluation_t *evaluation, kiln_expr_t *expr,
                                             int depth, kiln_expr_t **out_value);

/* The call again, over evaluated arguments, folded; NULL when an argument
 * cannot be evaluated or the kernel does not take the dtypes. */
static kiln_status_t kiln_onnx_evaluate_call(kiln_onnx_evaluation_t *evaluation,
                                             const kiln_call_t *call, int depth,
                                             kiln_expr_t **out_value) {
  *out_value = NULL;
  if (!call->op || call->num_args > 64) {
    return KILN_OK;
  }
  kiln_expr_t *args[64];
  for (int i = 0; i < call->num_args; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_evaluate_expr(evaluation, call->args[i], depth + 1, &args[i]));
    if (!args[i]) {
      return KILN_OK;
    }
  }
  kiln_onnx_importer_t *importer = evaluation->importer;
  kiln_call_t *copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_ir_call_create(importer->module, call->op, call->num_args, args, call->attrs, &copy));
  KILN_RETURN_IF_ERROR(kiln_ir_infer_node(importer->arena, &copy->base, &copy->base.checked_type));
  kiln_expr_t *folded = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_fold(importer, copy, &folded));
  *out_value = folded == &copy->base ? NULL : folded;
  return KILN_OK;
}

static kiln_status_t kiln_onnx_evaluate_node(kiln_onnx_evaluation_t *evaluation, kiln_expr_t *expr,
                                             int depth, kiln_expr_t **out_value) {
  *out_value = NULL;
  void *value = NULL;
  if (kiln_expr_as_constant(expr)) {
    *out_value = expr;
  } else if (kiln_expr_as_var(expr)) {
    if (kiln_hashmap_get(&evaluation->importer->param_values, expr, &value)) {
      KILN_RETURN_IF_ERROR(kiln_onnx_constant(evaluation->importer, value, out_value));
    }
  } else if (kiln_expr_as_call(expr)) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_evaluate_call(evaluation, kiln_expr_as_call(expr), depth, out_value));
  } else if (kiln_expr_as_tuple_get_item(expr)) {
    const kiln_tuple_get_item_t *item = kiln_expr_as_tuple_get_item(expr);
    kiln_expr_t *tuple = NULL;
    KILN_RETURN_IF_ERROR(kiln_onnx_evaluate_expr(evaluation, item->tuple, depth + 1, &tuple));
    const kiln_tuple_t *fields = kiln_expr_as_tuple(tuple);
    if (fields && item->index >= 0 && item->index < fields->num_fields) {
      *out_value = fields->fields[item->index];
    }
  }
  return KILN_OK;
}

static kiln_status_t kiln_onnx_evaluate_expr(kiln_onnx_evaluation_t *evaluation, kiln_expr_t *expr,
                                             int depth, kiln_expr_t **out_value) {
  void *known = NULL;
  *out_value = NULL;
  if (kiln_hashmap_get(&evaluation->done, expr, &known)) {
    *out_value = known;
    return KILN_OK;
  }
  if (depth > KILN_ONNX_EVALUATE_MAX_DEPTH) {
    return KILN_OK;
  }
  KILN_RETURN_IF_ERROR(kiln_onnx_evaluate_node(evaluation, expr, depth, out_value));
  return kiln_hashmap_put(&evaluation->done, expr, *out_value);
}

/* The empty Constant of `expr`'s type when it is static with no elements
 * (*out_tensor stays NULL otherwise). */
static kiln_status_t kiln_onnx_evaluate_empty(kiln_onnx_importer_t *importer, kiln_expr_t *expr,
                                              const kiln_tensor_t **out_tensor) {
  const kiln_tensor_type_t *type = kiln_type_as_tensor(expr->checked_type);
  bool empty = false;
  for (int d = 0; type && kiln_tensor_type_is_static(type) && d < type->ndim; ++d) {
    empty = empty || type->shape[d] == 0;
  }
  if (!empty) {
    return KILN_OK;
  }
  kiln_tensor_t *tensor = NULL;
  kiln_expr_t *constant = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_tensor_create(importer->allocator, type->dtype, type->ndim, type->shape, &tensor));
  kiln_status_t status = kiln_onnx_constant(importer, tensor, &constant);
  kiln_tensor_release(tensor);
  KILN_RETURN_IF_ERROR(status);
  *out_tensor = kiln_expr_as_constant(constant)->value;
  return KILN_OK;
}

kiln_status_t kiln_onnx_evaluate(kiln_onnx_importer_t *importer, kiln_expr_t *expr,
                                 const kiln_tensor_t **out_tensor) {
  *out_tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_evaluate_empty(importer, expr, out_tensor));
  if (*out_tensor || kiln_hashmap_count(&importer->param_values) == 0) {
    return KILN_OK; /* nothing but Constants, which have folded already */
  }
  kiln_onnx_evaluation_t evaluation = {.importer = importer};
  kiln_hashmap_initialize(&evaluation.done, importer->allocator, KILN_HASHMAP_KEY_POINTER);
  kiln_expr_t *value = NULL;
  kiln_status_t status = kiln_onnx_evaluate_expr(&evaluation, expr, 0, &value);
  kiln_hashmap_deinitialize(&evaluation.done);
  const kiln_constant_t *constant = kiln_expr_as_constant(value);
  if (!status && constant) {
    *out_tensor = constant->value;
  }
  return status;
}
