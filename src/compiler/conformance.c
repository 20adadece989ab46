/*
 * kiln/conformance.h: one ONNX backend node test case, loaded, run and
 * checked, and the operator types of its model (what `kiln conformance`
 * does in each child process; the CLI keeps the processes, the report and
 * the pass lists).
 *
 * A case loads KILN_ONNX_CASE_INPUTS_AT_RUN (onnx_case.h: the model file
 * as it is, nothing known of the test inputs), runs @main on the
 * interpreter or the model built for the target (kiln_compiler_build at
 * opt_level 3) on the graph executor, and compares each output with
 * kiln_onnx_compare. A case with sequence or optional values runs on the
 * interpreter's values (kiln_interp_run_values), or compiled for the VM with
 * its list inputs and outputs (kiln_graph_executor_set_input_list), and is
 * compared element by element. The import's UNIMPLEMENTED is UNSUPPORTED, and so is a model the
 * compiler refuses with UNIMPLEMENTED (a form it does not compile yet: control
 * flow for the graph executor, sequences and optionals; the interpreter runs
 * them); anything else that goes wrong is FAIL. The operator list is read from the model's
 * protobuf directly, so it is known even when the import fails.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "compiler/build.h"
#include "frontend/onnx/onnx_case.h"
#include "frontend/onnx/onnx_proto.h"
#include "interp/interp.h"
#include "interp/value.h"
#include "kiln/conformance.h"

#define OPS_CAPACITY 1024

static void op_name(const Onnx__NodeProto *node, char *buffer, size_t capacity) {
  const char *domain = node->domain ? node->domain : "";
  bool standard = domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
  snprintf(buffer, capacity, "%s%s%s", standard ? "" : domain, standard ? "" : ".",
           node->op_type ? node->op_type : "?");
}

/* The distinct operator types of the graph's nodes in order, comma
 * separated; Constant only when there is nothing else. */
static void list_ops(const Onnx__GraphProto *graph, char *ops, size_t capacity) {
  ops[0] = '\0';
  for (size_t i = 0; i < graph->n_node; i++) {
    char name[128], item[130];
    op_name(graph->node[i], name, sizeof(name));
    snprintf(item, sizeof(item), ",%s,", name);
    char listed[OPS_CAPACITY + 2];
    snprintf(listed, sizeof(listed), ",%s,", ops);
    if (strcmp(name, "Constant") == 0 || strstr(listed, item) != NULL ||
        strlen(ops) + strlen(name) + 2 > capacity) {
      continue;
    }
    strcat(ops, ops[0] ? "," : "");
    strcat(ops, name);
  }
  if (ops[0] == '\0' && graph->n_node > 0) {
    snprintf(ops, capacity, "Constant");
  }
}

/* The operator types of case folder `dir`'s model.onnx. */
kiln_status_t kiln_conformance_case_read_ops(kiln_allocator_t allocator, const char *dir, char *ops,
                                             size_t capacity) {
  if (capacity == 0) {
    return KILN_STATUS(INVALID_ARGUMENT, "kiln_conformance_case_read_ops: no room for the list");
  }
  capacity = capacity < OPS_CAPACITY ? capacity : OPS_CAPACITY;
  ops[0] = '\0';
  char *path = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, "model.onnx", &path));
  void *bytes = NULL;
  size_t size = 0;
  kiln_status_t status = kiln_file_read_all(allocator, path, &bytes, &size);
  kiln_allocator_free(allocator, path);
  KILN_RETURN_IF_ERROR(status);
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  status = kiln_onnx_proto_unpack(&adapter, &onnx__model_proto__descriptor, "an ONNX ModelProto",
                                  bytes, size, &message);
  kiln_allocator_free(allocator, bytes);
  KILN_RETURN_IF_ERROR(status);
  const Onnx__ModelProto *model = (const Onnx__ModelProto *)message;
  if (model->graph != NULL) {
    list_ops(model->graph, ops, capacity);
  }
  protobuf_c_message_free_unpacked(message, &adapter.base);
  return KILN_OK;
}

static kiln_status_t compare_outputs(const kiln_onnx_case_t *onnx_case, int num_outputs,
                                     kiln_tensor_t *const *outputs) {
  if (num_outputs != onnx_case->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "the model computes %d output(s); the case expects %d",
                       num_outputs, onnx_case->num_outputs);
  }
  for (int i = 0; i < num_outputs; i++) {
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_compare(onnx_case->outputs[i], outputs[i],
                                                    KILN_CONFORMANCE_RTOL, KILN_CONFORMANCE_ATOL),
                                  "output %d", i);
  }
  return KILN_OK;
}

/* The case's model compiled for `target` (opt_level 3) and `executor`, and
 * its executor; *out_refused when the compiler refuses it (UNIMPLEMENTED). */
static kiln_status_t build_case(const kiln_onnx_case_t *onnx_case, const char *target,
                                kiln_executor_kind_t executor, kiln_compiled_t **out_compiled,
                                kiln_graph_executor_t **out_gx, bool *out_refused) {
  kiln_compiler_options_t options = kiln_compiler_options_default();
  options.target = target;
  options.executor = executor;
  *out_gx = NULL;
  kiln_status_t built =
      kiln_compiler_build(onnx_case->allocator, onnx_case->module, &options, out_compiled);
  *out_refused = built && kiln_status_code(built) == KILN_STATUS_CODE_UNIMPLEMENTED;
  return built ? built : kiln_compiled_create_executor(*out_compiled, out_gx);
}

/* The case's model compiled and run; the outputs are copies the caller
 * releases. */
static kiln_status_t run_compiled(const kiln_onnx_case_t *onnx_case, const char *target,
                                  kiln_executor_kind_t executor, int *out_num_outputs,
                                  kiln_tensor_t ***out_outputs, bool *out_refused) {
  kiln_compiled_t *compiled = NULL;
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = build_case(onnx_case, target, executor, &compiled, &gx, out_refused);
  for (int i = 0; !status && i < onnx_case->num_inputs; i++) {
    status = kiln_graph_executor_set_input(gx, i, kiln_tensor_dl(onnx_case->inputs[i]));
  }
  if (!status) {
    status = kiln_graph_executor_run(gx);
  }
  int count = status ? 0 : kiln_graph_executor_num_outputs(gx);
  if (!status) {
    status = kiln_allocator_malloc(onnx_case->allocator, (size_t)(count + 1) * sizeof(void *),
                                   (void **)out_outputs);
  }
  for (int o = 0; !status && o < count; o++) {
    status = kiln_graph_executor_copy_output(gx, o, onnx_case->allocator, &(*out_outputs)[o]);
    *out_num_outputs = status ? o : o + 1;
  }
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  return status;
}

/* ---- sequence and optional values, on the interpreter ---- */

/* The interpreter value of a case value; tensors are shared (retained). */
static kiln_status_t value_to_interp(kiln_allocator_t allocator, const kiln_onnx_value_t *value,
                                     kiln_interp_value_t *out_value) {
  if (value->kind == KILN_ONNX_VALUE_TENSOR) {
    kiln_tensor_retain(value->tensor);
    *out_value = kiln_interp_value_of_tensor(value->tensor);
    return KILN_OK;
  }
  kiln_interp_value_kind_t kind = value->kind == KILN_ONNX_VALUE_SEQUENCE
                                      ? KILN_INTERP_VALUE_SEQUENCE
                                      : KILN_INTERP_VALUE_OPTIONAL;
  KILN_RETURN_IF_ERROR(kiln_interp_value_list_create(allocator, kind, value->count, out_value));
  for (int i = 0; i < value->count; i++) {
    kiln_status_t status = value_to_interp(allocator, &value->elements[i], &out_value->fields[i]);
    if (status) {
      kiln_interp_value_release(allocator, out_value);
      return status;
    }
  }
  return KILN_OK;
}

/* The expected case value against the interpreter's value. */
static kiln_status_t compare_value(const kiln_onnx_value_t *expected,
                                   const kiln_interp_value_t *actual) {
  static const kiln_interp_value_kind_t kinds[] = {
      KILN_INTERP_VALUE_TENSOR, KILN_INTERP_VALUE_SEQUENCE, KILN_INTERP_VALUE_OPTIONAL};
  if (actual->kind != kinds[expected->kind]) {
    return KILN_STATUS(INVALID_ARGUMENT, "the result is not a %s",
                       expected->kind == KILN_ONNX_VALUE_TENSOR     ? "tensor"
                       : expected->kind == KILN_ONNX_VALUE_SEQUENCE ? "sequence"
                                                                    : "optional");
  }
  if (expected->kind == KILN_ONNX_VALUE_TENSOR) {
    return kiln_onnx_compare(expected->tensor, actual->tensor, KILN_CONFORMANCE_RTOL,
                             KILN_CONFORMANCE_ATOL);
  }
  if (expected->count != actual->num_fields) {
    return KILN_STATUS(INVALID_ARGUMENT, "the result has %d elements; expected %d",
                       actual->num_fields, expected->count);
  }
  for (int i = 0; i < expected->count; i++) {
    KILN_RETURN_IF_ERROR_ANNOTATE(compare_value(&expected->elements[i], &actual->fields[i]),
                                  "element %d", i);
  }
  return KILN_OK;
}

static kiln_status_t compare_values(const kiln_onnx_case_t *onnx_case,
                                    const kiln_interp_value_t *result) {
  bool tuple = onnx_case->num_outputs != 1;
  int count = tuple ? result->num_fields : 1;
  if (count != onnx_case->num_outputs || (tuple && result->kind != KILN_INTERP_VALUE_TUPLE)) {
    return KILN_STATUS(INVALID_ARGUMENT, "the model computes %d output(s); the case expects %d",
                       count, onnx_case->num_outputs);
  }
  for (int i = 0; i < count; i++) {
    KILN_RETURN_IF_ERROR_ANNOTATE(
        compare_value(&onnx_case->output_values[i], tuple ? &result->fields[i] : result),
        "output %d", i);
  }
  return KILN_OK;
}

static kiln_status_t run_values(const kiln_onnx_case_t *onnx_case) {
  kiln_allocator_t allocator = onnx_case->allocator;
  kiln_interp_value_t *inputs = NULL;
  size_t count = onnx_case->num_inputs > 0 ? (size_t)onnx_case->num_inputs : 1;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, count, sizeof(*inputs), (void **)&inputs));
  memset(inputs, 0, count * sizeof(*inputs));
  kiln_status_t status = KILN_OK;
  for (int i = 0; !status && i < onnx_case->num_inputs; i++) {
    status = value_to_interp(allocator, &onnx_case->input_values[i], &inputs[i]);
  }
  kiln_interp_value_t result = {.kind = KILN_INTERP_VALUE_NONE};
  kiln_interp_options_t options = {.allocator = allocator};
  if (!status) {
    status = kiln_interp_run_values(onnx_case->module, "main", onnx_case->num_inputs, inputs,
                                    &options, &result);
  }
  if (!status) {
    status = compare_values(onnx_case, &result);
  }
  kiln_interp_value_release(allocator, &result);
  for (int i = 0; i < onnx_case->num_inputs; i++) {
    kiln_interp_value_release(allocator, &inputs[i]);
  }
  kiln_allocator_free(allocator, inputs);
  return status;
}

/* ---- sequence and optional values, compiled (the VM) ---- */

/* A list input's tensors: a sequence's, an optional's, or an optional of a
 * sequence's sequence's (count -1 for an empty optional). */
static kiln_status_t set_value_input(kiln_graph_executor_t *gx, int index,
                                     const kiln_onnx_value_t *value, kiln_allocator_t allocator) {
  if (value->kind == KILN_ONNX_VALUE_TENSOR) {
    return kiln_graph_executor_set_input(gx, index, kiln_tensor_dl(value->tensor));
  }
  int count = value->kind == KILN_ONNX_VALUE_OPTIONAL && value->count == 0 ? -1 : value->count;
  if (value->kind == KILN_ONNX_VALUE_OPTIONAL && count == 1 &&
      value->elements[0].kind == KILN_ONNX_VALUE_SEQUENCE) {
    value = &value->elements[0];
    count = value->count;
  }
  const DLTensor **elements = NULL;
  KILN_RETURN_IF_ERROR(kiln_allocator_malloc_array(allocator, (size_t)value->count + 1,
                                                   sizeof(*elements), (void **)&elements));
  kiln_status_t status = KILN_OK;
  for (int i = 0; !status && i < value->count; i++) {
    status = value->elements[i].kind == KILN_ONNX_VALUE_TENSOR
                 ? KILN_OK
                 : KILN_STATUS(UNIMPLEMENTED, "input %d: a list of lists", index);
    elements[i] = status ? NULL : kiln_tensor_dl(value->elements[i].tensor);
  }
  if (!status) {
    status = kiln_graph_executor_set_input_list(gx, index, count, elements);
  }
  kiln_allocator_free(allocator, elements);
  return status;
}

/* A copy of an output element's view (`dtype` the output's: a bool's view
 * is uint8 to DLPack). */
static kiln_status_t copy_view(const DLTensor *view, kiln_dtype_t dtype, kiln_allocator_t allocator,
                               kiln_interp_value_t *out_value) {
  size_t bytes = 0;
  kiln_tensor_t *tensor = NULL;
  KILN_RETURN_IF_ERROR(kiln_shape_byte_size(dtype, view->ndim, view->shape, &bytes));
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(allocator, dtype, view->ndim, view->shape,
                                               view->data, bytes, &tensor));
  *out_value = kiln_interp_value_of_tensor(tensor);
  return KILN_OK;
}

/* List output `index`'s `count` tensors as a list value of `kind`. */
static kiln_status_t output_list(const kiln_graph_executor_t *gx, int index, kiln_dtype_t dtype,
                                 kiln_interp_value_kind_t kind, int count,
                                 kiln_allocator_t allocator, kiln_interp_value_t *out_value) {
  KILN_RETURN_IF_ERROR(kiln_interp_value_list_create(allocator, kind, count, out_value));
  for (int i = 0; i < count; i++) {
    const DLTensor *view = NULL;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_get_output_element(gx, index, i, &view));
    KILN_RETURN_IF_ERROR(copy_view(view, dtype, allocator, &out_value->fields[i]));
  }
  return KILN_OK;
}

/* Output `index` as an interpreter value of the kind the executor declares.
 * ONNX counts a value as an optional holding it, so an optional holding
 * what the case expects bare (a loop carrying an optional whose body gives
 * its sequence) is read as that value. */
static kiln_status_t output_value(const kiln_graph_executor_t *gx, int index,
                                  kiln_onnx_value_kind_t kind, kiln_allocator_t allocator,
                                  kiln_interp_value_t *out_value) {
  kiln_graph_executor_tensor_info_t info;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_output_info(gx, index, &info));
  if (info.kind == KILN_VALUE_KIND_TENSOR) {
    kiln_tensor_t *tensor = NULL;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_copy_output(gx, index, allocator, &tensor));
    *out_value = kiln_interp_value_of_tensor(tensor);
    return KILN_OK;
  }
  int count = 0;
  KILN_RETURN_IF_ERROR(kiln_graph_executor_get_output_list(gx, index, &count));
  if (info.kind == KILN_VALUE_KIND_OPTIONAL && kind == KILN_ONNX_VALUE_TENSOR && count == 1) {
    const DLTensor *view = NULL;
    KILN_RETURN_IF_ERROR(kiln_graph_executor_get_output_element(gx, index, 0, &view));
    return copy_view(view, info.dtype, allocator, out_value);
  }
  if (info.kind != KILN_VALUE_KIND_OPTIONAL_SEQUENCE) {
    return output_list(gx, index, info.dtype,
                       info.kind == KILN_VALUE_KIND_OPTIONAL ? KILN_INTERP_VALUE_OPTIONAL
                                                             : KILN_INTERP_VALUE_SEQUENCE,
                       count, allocator, out_value);
  }
  if (kind == KILN_ONNX_VALUE_SEQUENCE && count >= 0) {
    return output_list(gx, index, info.dtype, KILN_INTERP_VALUE_SEQUENCE, count, allocator,
                       out_value);
  }
  /* the optional, then (when it has one) its sequence */
  KILN_RETURN_IF_ERROR(
      kiln_interp_value_list_create(allocator, KILN_INTERP_VALUE_OPTIONAL, count >= 0, out_value));
  return count < 0 ? KILN_OK
                   : output_list(gx, index, info.dtype, KILN_INTERP_VALUE_SEQUENCE, count,
                                 allocator, &out_value->fields[0]);
}

/* The executor's outputs as the interpreter's result (a tuple of several). */
static kiln_status_t executor_result(const kiln_onnx_case_t *onnx_case,
                                     const kiln_graph_executor_t *gx, kiln_interp_value_t *out) {
  int n = kiln_graph_executor_num_outputs(gx);
  if (n != onnx_case->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "the model computes %d output(s); the case expects %d", n,
                       onnx_case->num_outputs);
  }
  if (n == 1) {
    return output_value(gx, 0, onnx_case->output_values[0].kind, onnx_case->allocator, out);
  }
  KILN_RETURN_IF_ERROR(kiln_interp_value_tuple_create(onnx_case->allocator, n, out));
  for (int o = 0; o < n; o++) {
    KILN_RETURN_IF_ERROR(output_value(gx, o, onnx_case->output_values[o].kind, onnx_case->allocator,
                                      &out->fields[o]));
  }
  return KILN_OK;
}

/* A case with sequence or optional values, compiled for the VM. */
static kiln_status_t run_compiled_values(const kiln_onnx_case_t *onnx_case, const char *target,
                                         kiln_executor_kind_t executor, bool *out_refused) {
  kiln_compiled_t *compiled = NULL;
  kiln_graph_executor_t *gx = NULL;
  kiln_status_t status = build_case(onnx_case, target, executor, &compiled, &gx, out_refused);
  for (int i = 0; !status && i < onnx_case->num_inputs; i++) {
    status = set_value_input(gx, i, &onnx_case->input_values[i], onnx_case->allocator);
    *out_refused = status && kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED;
  }
  if (!status) {
    status = kiln_graph_executor_run(gx);
  }
  kiln_interp_value_t result = {.kind = KILN_INTERP_VALUE_NONE};
  if (!status) {
    status = executor_result(onnx_case, gx, &result);
  }
  if (!status) {
    status = compare_values(onnx_case, &result);
  }
  kiln_interp_value_release(onnx_case->allocator, &result);
  kiln_graph_executor_destroy(gx);
  kiln_compiled_destroy(compiled);
  return status;
}

/* *out_refused: the graph compiler refused the model (UNIMPLEMENTED). */
static kiln_status_t run_loaded(const kiln_onnx_case_t *onnx_case, const char *target,
                                kiln_executor_kind_t executor, bool *out_refused) {
  if (onnx_case->has_values) {
    *out_refused = false;
    return target ? run_compiled_values(onnx_case, target, executor, out_refused)
                  : run_values(onnx_case);
  }

  int num_outputs = 0;
  kiln_tensor_t **outputs = NULL;
  *out_refused = false;
  kiln_status_t run =
      target ? run_compiled(onnx_case, target, executor, &num_outputs, &outputs, out_refused)
             : kiln_interp_run(onnx_case->module, "main", onnx_case->num_inputs, onnx_case->inputs,
                               onnx_case->allocator, &num_outputs, &outputs);
  if (run) {
    for (int i = 0; i < num_outputs; i++) {
      kiln_tensor_release(outputs[i]);
    }
    kiln_allocator_free(onnx_case->allocator, outputs);
    return run;
  }
  kiln_status_t status = compare_outputs(onnx_case, num_outputs, outputs);
  for (int i = 0; i < num_outputs; i++) {
    kiln_tensor_release(outputs[i]);
  }
  kiln_allocator_free(onnx_case->allocator, outputs);
  return status;
}

kiln_status_t kiln_conformance_case_run(kiln_allocator_t allocator, const char *dir,
                                        const char *target, kiln_conformance_result_t *out_result) {
  return kiln_conformance_case_run_on(allocator, dir, target, KILN_EXECUTOR_AUTO, out_result);
}

kiln_status_t kiln_conformance_case_run_on(kiln_allocator_t allocator, const char *dir,
                                           const char *target, kiln_executor_kind_t executor,
                                           kiln_conformance_result_t *out_result) {
  kiln_onnx_case_t onnx_case;
  kiln_status_t status =
      kiln_onnx_case_load(dir, KILN_ONNX_CASE_INPUTS_AT_RUN, allocator, &onnx_case);
  kiln_conformance_result_t result = KILN_CONFORMANCE_RESULT_FAIL;
  if (status != KILN_OK) {
    if (kiln_status_code(status) == KILN_STATUS_CODE_UNIMPLEMENTED) {
      result = KILN_CONFORMANCE_RESULT_UNSUPPORTED;
    }
  } else {
    bool refused = false;
    status = run_loaded(&onnx_case, target, executor, &refused);
    result = status == KILN_OK ? KILN_CONFORMANCE_RESULT_PASS
             : refused         ? KILN_CONFORMANCE_RESULT_UNSUPPORTED
                               : KILN_CONFORMANCE_RESULT_FAIL;
  }
  kiln_onnx_case_deinitialize(&onnx_case);
  *out_result = result;
  return status;
}
