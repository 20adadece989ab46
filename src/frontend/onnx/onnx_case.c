/*
 * Backend test cases; see onnx_case.h.
 *
 * The model is parsed first for the types of its graph inputs and outputs,
 * which say whether each file is a TensorProto, a SequenceProto or an
 * OptionalProto (onnx_value.c); the values are read into two growable
 * arrays; the model is imported in the case's mode: AT_RUN with no options
 * at all (as `kiln interp model.onnx` imports it, so nothing about the
 * inputs' values is known until @main runs), READ with the inputs as input
 * values, BOUND with them bound as Constants (both refuse a sequence
 * input). An input file that does not parse does not stop the import: the
 * import is tried without values, so its error, which says what the model
 * needs, is the one reported. The comparison reads every dtype as
 * double, which is exact for all values the tests hold except int64 and
 * uint64 beyond 2^53, where it still detects any difference larger than the
 * tolerance allows.
 */
#define _POSIX_C_SOURCE 200809L
#include "frontend/onnx/onnx_case.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/array.h"
#include "base/file.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/onnx/onnx_proto.h"

/* The kind of value graph input or output `info` takes. */
static kiln_onnx_value_kind_t kiln_onnx_case_kind(const Onnx__ValueInfoProto *info) {
  const Onnx__TypeProto *type = info ? info->type : NULL;
  if (type && type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
    return KILN_ONNX_VALUE_SEQUENCE;
  if (type && type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
    return KILN_ONNX_VALUE_OPTIONAL;
  return KILN_ONNX_VALUE_TENSOR;
}

/* Whether graph input `name` is also an initializer. */
static bool kiln_onnx_case_is_initializer(const Onnx__GraphProto *graph, const char *name) {
  for (size_t i = 0; i < graph->n_initializer; ++i) {
    const char *other = graph->initializer[i]->name;
    if (other && name && strcmp(other, name) == 0) {
      return true;
    }
  }
  return false;
}

/* The ValueInfo of the `index`-th input file (inputs that are not
 * initializers, in order) or output file; NULL when the model has none. */
static const Onnx__ValueInfoProto *kiln_onnx_case_info(const Onnx__GraphProto *graph, bool input,
                                                       size_t index) {
  if (graph == NULL)
    return NULL;
  if (!input)
    return index < graph->n_output ? graph->output[index] : NULL;
  for (size_t i = 0, position = 0; i < graph->n_input; ++i) {
    if (kiln_onnx_case_is_initializer(graph, graph->input[i]->name))
      continue;
    if (position++ == index)
      return graph->input[i];
  }
  return NULL;
}

/* Reads `dir`/test_data_set_0/<prefix>_<i>.pb for i = 0, 1, ... until one
 * is missing, appending each value (of the kind the model gives it) to
 * `values`. */
static kiln_status_t kiln_onnx_case_values(const char *dir, const char *prefix,
                                           const Onnx__GraphProto *graph,
                                           kiln_allocator_t allocator, kiln_array_t *values) {
  for (size_t i = 0;; ++i) {
    char name[64];
    snprintf(name, sizeof(name), "test_data_set_0/%s_%zu.pb", prefix, i);
    char *path = NULL;
    KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, name, &path));
    bool exists = kiln_file_exists(path);
    kiln_status_t status = KILN_OK;
    if (exists) {
      kiln_onnx_value_t value;
      kiln_onnx_value_kind_t kind =
          kiln_onnx_case_kind(kiln_onnx_case_info(graph, prefix[0] == 'i', i));
      status = kind == KILN_ONNX_VALUE_TENSOR
                   ? kiln_onnx_tensor_read_file(path, allocator, &value.tensor)
                   : kiln_onnx_value_read_file(path, kind, allocator, &value);
      if (kind == KILN_ONNX_VALUE_TENSOR) {
        value.kind = KILN_ONNX_VALUE_TENSOR;
        value.count = 0;
        value.elements = NULL;
      }
      if (!status) {
        status = kiln_array_push(values, &value);
        if (status) {
          kiln_onnx_value_release(allocator, &value);
        }
      }
    }
    kiln_allocator_free(allocator, path);
    KILN_RETURN_IF_ERROR(status);
    if (!exists) {
      return KILN_OK;
    }
  }
}

static void kiln_onnx_case_release(kiln_allocator_t allocator, kiln_array_t *values) {
  for (size_t i = 0; i < kiln_array_count(values); ++i) {
    kiln_onnx_value_release(allocator, kiln_array_at(values, i));
  }
  kiln_array_deinitialize(values);
}

/* ---- bfloat16 stored as uint16 ---- */

/* The declared elem_type of a ValueInfo (0 when it has none). */
static int32_t kiln_onnx_case_elem_type(const Onnx__ValueInfoProto *info) {
  const Onnx__TypeProto *type = info ? info->type : NULL;
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type) {
    return 0;
  }
  return type->tensor_type->elem_type;
}

/* Retypes value `index` to bfloat16 (same bits) when it is a uint16 tensor
 * and `info` declares bfloat16. */
static kiln_status_t kiln_onnx_case_retype(const Onnx__ValueInfoProto *info,
                                           kiln_allocator_t allocator, kiln_array_t *values,
                                           size_t index) {
  if (index >= kiln_array_count(values) ||
      kiln_onnx_case_elem_type(info) != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16) {
    return KILN_OK;
  }
  kiln_tensor_t **slot = &((kiln_onnx_value_t *)kiln_array_at(values, index))->tensor;
  if (*slot == NULL || kiln_tensor_dtype(*slot) != KILN_DTYPE_UINT16) {
    return KILN_OK;
  }
  kiln_tensor_t *retyped = NULL;
  KILN_RETURN_IF_ERROR(kiln_tensor_create_copy(
      allocator, KILN_DTYPE_BFLOAT16, kiln_tensor_ndim(*slot), kiln_tensor_shape(*slot),
      kiln_tensor_data(*slot), kiln_tensor_byte_size(*slot), &retyped));
  kiln_tensor_release(*slot);
  *slot = retyped;
  return KILN_OK;
}

/* ONNX's backend tests store bfloat16 tensors as their uint16 bit patterns
 * (numpy has no bfloat16): where the model declares a bfloat16 graph input
 * or output, a uint16 tensor is retyped to bfloat16, bits unchanged. */
static kiln_status_t kiln_onnx_case_retype_all(const Onnx__GraphProto *graph,
                                               kiln_allocator_t allocator, kiln_array_t *inputs,
                                               kiln_array_t *outputs) {
  for (size_t i = 0; graph && i < kiln_array_count(inputs); ++i) {
    KILN_RETURN_IF_ERROR(
        kiln_onnx_case_retype(kiln_onnx_case_info(graph, true, i), allocator, inputs, i));
  }
  for (size_t i = 0; graph && i < graph->n_output; ++i) {
    KILN_RETURN_IF_ERROR(kiln_onnx_case_retype(graph->output[i], allocator, outputs, i));
  }
  return KILN_OK;
}

/* The case's model, parsed for the types of its inputs and outputs; NULL
 * (and OK) when it does not parse, which the import then reports. */
static kiln_status_t kiln_onnx_case_model(const char *dir, kiln_onnx_proto_allocator_t *adapter,
                                          ProtobufCMessage **out_model) {
  *out_model = NULL;
  char *path = NULL;
  void *bytes = NULL;
  size_t size = 0;
  KILN_RETURN_IF_ERROR(kiln_path_join(adapter->allocator, dir, "model.onnx", &path));
  kiln_status_t status = kiln_file_read_all(adapter->allocator, path, &bytes, &size);
  kiln_allocator_free(adapter->allocator, path);
  if (status) {
    kiln_status_free(status);
    return KILN_OK;
  }
  status = kiln_onnx_proto_unpack(adapter, &onnx__model_proto__descriptor, "an ONNX ModelProto",
                                  bytes, size, out_model);
  kiln_allocator_free(adapter->allocator, bytes);
  if (status) {
    bool exhausted = kiln_status_code(status) == KILN_STATUS_CODE_RESOURCE_EXHAUSTED;
    return exhausted ? status : (kiln_status_free(status), KILN_OK);
  }
  return KILN_OK;
}

/* Reads the inputs and expected outputs as the model types them. */
static kiln_status_t kiln_onnx_case_read(const char *dir, kiln_allocator_t allocator,
                                         kiln_array_t *inputs, kiln_array_t *outputs) {
  kiln_onnx_proto_allocator_t adapter;
  kiln_onnx_proto_allocator_initialize(&adapter, allocator);
  ProtobufCMessage *message = NULL;
  KILN_RETURN_IF_ERROR(kiln_onnx_case_model(dir, &adapter, &message));
  const Onnx__GraphProto *graph = message ? ((const Onnx__ModelProto *)message)->graph : NULL;
  kiln_status_t status = kiln_onnx_case_values(dir, "input", graph, allocator, inputs);
  if (!status)
    status = kiln_onnx_case_values(dir, "output", graph, allocator, outputs);
  if (!status)
    status = kiln_onnx_case_retype_all(graph, allocator, inputs, outputs);
  if (message)
    protobuf_c_message_free_unpacked(message, &adapter.base);
  return status;
}

/* The tensors of `values` (NULL for the others), as new references. */
static kiln_status_t kiln_onnx_case_tensor_list(kiln_array_t *values, kiln_array_t *tensors) {
  for (size_t i = 0; i < kiln_array_count(values); ++i) {
    const kiln_onnx_value_t *value = kiln_array_at(values, i);
    kiln_tensor_t *tensor = value->kind == KILN_ONNX_VALUE_TENSOR ? value->tensor : NULL;
    KILN_RETURN_IF_ERROR(kiln_array_push(tensors, &tensor));
    if (tensor)
      kiln_tensor_retain(tensor);
  }
  return KILN_OK;
}

/* Imports the model: for AT_RUN as a user does, without options (a
 * dim_param stays a symbolic dim, which the interpreter runs and the graph
 * compiler refuses); else with `inputs` as its input values, bound as
 * Constants for BOUND, and every other dim static. */
static kiln_status_t kiln_onnx_case_import(const char *dir, kiln_onnx_case_inputs_t mode,
                                           kiln_allocator_t allocator, const kiln_array_t *inputs,
                                           kiln_module_t **out_module) {
  char *path = NULL;
  KILN_RETURN_IF_ERROR(kiln_path_join(allocator, dir, "model.onnx", &path));
  kiln_onnx_import_options_t options = {0};
  if (mode != KILN_ONNX_CASE_INPUTS_AT_RUN) {
    options.static_input_shapes = true; /* the values give the shapes */
    options.num_input_values = (int)kiln_array_count(inputs);
    options.input_values = (kiln_tensor_t *const *)kiln_array_data(inputs);
    options.bind_input_values = mode == KILN_ONNX_CASE_INPUTS_BOUND;
  }
  kiln_status_t status = kiln_onnx_import_file(path, &options, allocator, out_module);
  kiln_allocator_free(allocator, path);
  return status;
}

/* Moves an array's items into a plain allocation for the case. */
static kiln_status_t kiln_onnx_case_take(kiln_allocator_t allocator, kiln_array_t *items,
                                         size_t item_size, int *out_count, void **out_items) {
  size_t count = kiln_array_count(items);
  void *copy = NULL;
  KILN_RETURN_IF_ERROR(
      kiln_allocator_malloc_array(allocator, count ? count : 1, item_size, (void **)&copy));
  if (count) {
    memcpy(copy, kiln_array_data(items), count * item_size);
  }
  kiln_array_clear(items);
  *out_count = (int)count;
  *out_items = copy;
  return KILN_OK;
}

static bool kiln_onnx_case_all_tensors(const kiln_array_t *tensors) {
  for (size_t i = 0; i < kiln_array_count(tensors); ++i) {
    if (KILN_ARRAY_AT(tensors, kiln_tensor_t *, i) == NULL)
      return false;
  }
  return true;
}

/* Fills the case's arrays from the values read (taking them over). */
static kiln_status_t kiln_onnx_case_fill(kiln_onnx_case_t *out_case, kiln_array_t *inputs,
                                         kiln_array_t *outputs) {
  kiln_allocator_t allocator = out_case->allocator;
  kiln_array_t tensors[2];
  kiln_array_initialize(&tensors[0], allocator, sizeof(kiln_tensor_t *));
  kiln_array_initialize(&tensors[1], allocator, sizeof(kiln_tensor_t *));
  kiln_status_t status = kiln_onnx_case_tensor_list(inputs, &tensors[0]);
  if (!status)
    status = kiln_onnx_case_tensor_list(outputs, &tensors[1]);
  out_case->has_values =
      !kiln_onnx_case_all_tensors(&tensors[0]) || !kiln_onnx_case_all_tensors(&tensors[1]);
  int count = 0;
  if (!status)
    status = kiln_onnx_case_take(allocator, &tensors[0], sizeof(kiln_tensor_t *),
                                 &out_case->num_inputs, (void **)&out_case->inputs);
  if (!status)
    status = kiln_onnx_case_take(allocator, &tensors[1], sizeof(kiln_tensor_t *),
                                 &out_case->num_outputs, (void **)&out_case->outputs);
  if (!status)
    status = kiln_onnx_case_take(allocator, inputs, sizeof(kiln_onnx_value_t), &count,
                                 (void **)&out_case->input_values);
  if (!status)
    status = kiln_onnx_case_take(allocator, outputs, sizeof(kiln_onnx_value_t), &count,
                                 (void **)&out_case->output_values);
  for (int t = 0; t < 2; ++t) {
    for (size_t i = 0; i < kiln_array_count(&tensors[t]); ++i) {
      kiln_tensor_release(KILN_ARRAY_AT(&tensors[t], kiln_tensor_t *, i));
    }
    kiln_array_deinitialize(&tensors[t]);
  }
  return status;
}

kiln_status_t kiln_onnx_case_load(const char *dir, kiln_onnx_case_inputs_t mode,
                                  kiln_allocator_t allocator, kiln_onnx_case_t *out_case) {
  memset(out_case, 0, sizeof(*out_case));
  out_case->allocator = allocator;
  kiln_array_t inputs, outputs, tensors;
  kiln_array_initialize(&inputs, allocator, sizeof(kiln_onnx_value_t));
  kiln_array_initialize(&outputs, allocator, sizeof(kiln_onnx_value_t));
  kiln_array_initialize(&tensors, allocator, sizeof(kiln_tensor_t *));
  kiln_status_t read = kiln_onnx_case_read(dir, allocator, &inputs, &outputs);
  kiln_status_t status = KILN_OK;
  if (!read && mode != KILN_ONNX_CASE_INPUTS_AT_RUN) {
    status = kiln_onnx_case_tensor_list(&inputs, &tensors);
    if (!status && !kiln_onnx_case_all_tensors(&tensors)) {
      status = KILN_STATUS(UNIMPLEMENTED, "an input is a sequence or an optional, which the "
                                          "import cannot take as a value");
    }
  }
  if (!status) {
    status = kiln_onnx_case_import(dir, mode, allocator, &tensors, &out_case->module);
  }
  if (!status && read) {
    status = read;
    read = KILN_OK;
  }
  kiln_status_free(read);
  if (!status) {
    status = kiln_onnx_case_fill(out_case, &inputs, &outputs);
  }
  for (size_t i = 0; i < kiln_array_count(&tensors); ++i) {
    kiln_tensor_release(KILN_ARRAY_AT(&tensors, kiln_tensor_t *, i));
  }
  kiln_array_deinitialize(&tensors);
  kiln_onnx_case_release(allocator, &inputs);
  kiln_onnx_case_release(allocator, &outputs);
  if (status) {
    kiln_onnx_case_deinitialize(out_case);
  }
  return status;
}

void kiln_onnx_case_deinitialize(kiln_onnx_case_t *onnx_case) {
  kiln_allocator_t allocator = onnx_case->allocator;
  for (int i = 0; onnx_case->inputs && i < onnx_case->num_inputs; ++i) {
    kiln_tensor_release(onnx_case->inputs[i]);
  }
  for (int i = 0; onnx_case->outputs && i < onnx_case->num_outputs; ++i) {
    kiln_tensor_release(onnx_case->outputs[i]);
  }
  for (int i = 0; onnx_case->input_values && i < onnx_case->num_inputs; ++i) {
    kiln_onnx_value_release(allocator, &onnx_case->input_values[i]);
  }
  for (int i = 0; onnx_case->output_values && i < onnx_case->num_outputs; ++i) {
    kiln_onnx_value_release(allocator, &onnx_case->output_values[i]);
  }
  kiln_allocator_free(allocator, onnx_case->inputs);
  kiln_allocator_free(allocator, onnx_case->outputs);
  kiln_allocator_free(allocator, onnx_case->input_values);
  kiln_allocator_free(allocator, onnx_case->output_values);
  kiln_module_destroy(onnx_case->module);
  memset(onnx_case, 0, sizeof(*onnx_case));
  onnx_case->allocator = allocator;
}

/* ---- checks ---- */

/* `what` (dtype, ndim, shape) against the expected tensor. */
static kiln_status_t kiln_onnx_same_type(const char *what, const kiln_tensor_t *expected,
                                         kiln_dtype_t dtype, int ndim, const int64_t *shape) {
  if (kiln_tensor_dtype(expected) == dtype &&
      kiln_shape_equal(ndim, shape, kiln_tensor_ndim(expected), kiln_tensor_shape(expected))) {
    return KILN_OK;
  }
  char want[KILN_SHAPE_TEXT_CAPACITY], got[KILN_SHAPE_TEXT_CAPACITY];
  kiln_shape_format(kiln_tensor_ndim(expected), kiln_tensor_shape(expected), want, sizeof(want));
  kiln_shape_format(ndim, shape, got, sizeof(got));
  return KILN_STATUS(INVALID_ARGUMENT, "%s is %s %s; expected %s %s", what, got,
                     kiln_dtype_name(dtype), want, kiln_dtype_name(kiln_tensor_dtype(expected)));
}

kiln_status_t kiln_onnx_case_check_types(const kiln_onnx_case_t *onnx_case) {
  const kiln_function_t *main = kiln_module_get_function(onnx_case->module, "main");
  const kiln_type_t *type = main ? main->ret_type : NULL;
  const kiln_tuple_type_t *tuple = kiln_type_as_tuple(type);
  int count = tuple ? tuple->count : 1;
  if (!type || count != onnx_case->num_outputs) {
    return KILN_STATUS(INVALID_ARGUMENT, "@main has %d outputs; the case expects %d",
                       type ? count : 0, onnx_case->num_outputs);
  }
  for (int i = 0; i < count; ++i) {
    const kiln_type_t *output = tuple ? tuple->fields[i] : type;
    if (onnx_case->outputs[i] == NULL) { /* a sequence or an optional */
      bool sequence = onnx_case->output_values[i].kind == KILN_ONNX_VALUE_SEQUENCE;
      if (sequence ? !kiln_type_as_sequence(output) : !kiln_type_as_optional(output)) {
        char text[KILN_IR_TYPE_TEXT_CAPACITY];
        return KILN_STATUS(INVALID_ARGUMENT, "output %d is %s; expected %s", i,
                           kiln_type_text(output, text), sequence ? "a sequence" : "an optional");
      }
      continue;
    }
    const kiln_tensor_type_t *field = kiln_type_as_tensor(output);
    if (!field) {
      return KILN_STATUS(INVALID_ARGUMENT, "output %d is not a tensor", i);
    }
    char what[32];
    snprintf(what, sizeof(what), "output %d", i);
    KILN_RETURN_IF_ERROR(
        kiln_onnx_same_type(what, onnx_case->outputs[i], field->dtype, field->ndim, field->shape));
  }
  return KILN_OK;
}

kiln_status_t kiln_onnx_case_check_folded(const kiln_onnx_case_t *onnx_case) {
  KILN_RETURN_IF_ERROR(kiln_onnx_case_check_types(onnx_case));
  const kiln_expr_t *body = kiln_module_get_function(onnx_case->module, "main")->body;
  const kiln_tuple_t *tuple = kiln_expr_as_tuple(body);
  for (int i = 0; i < onnx_case->num_outputs; ++i) {
    const kiln_constant_t *constant = kiln_expr_as_constant(tuple ? tuple->fields[i] : body);
    if (!constant) {
      return KILN_STATUS(UNIMPLEMENTED, "output %d did not fold to a constant", i);
    }
    KILN_RETURN_IF_ERROR_ANNOTATE(kiln_onnx_compare(onnx_case->outputs[i], constant->value,
                                                    KILN_ONNX_CASE_RTOL, KILN_ONNX_CASE_ATOL),
                                  "output %d", i);
  }
  return KILN_OK;
}

/* Whether `a` is within tolerance of `e`. */
static bool kiln_onnx_close(double e, double a, double rtol, double atol) {
  if (isnan(e) || isnan(a)) {
    return isnan(e) && isnan(a);
  }
  if (isinf(e) || isinf(a)) {
    return e == a;
  }
  return fabs(a - e) <= atol + rtol * fabs(e);
}

kiln_status_t kiln_onnx_compare(const kiln_tensor_t *expected, const kiln_tensor_t *actual,
                                double rtol, double atol) {
  KILN_RETURN_IF_ERROR(kiln_onnx_same_type("the result", expected, kiln_tensor_dtype(actual),
                                           kiln_tensor_ndim(actual), kiln_tensor_shape(actual)));
  int64_t count = kiln_tensor_element_count(expected), differ = 0, first = -1;
  for (int64_t i = 0; i < count; ++i) {
    if (!kiln_onnx_close(kiln_tensor_element_as_double(expected, i),
                         kiln_tensor_element_as_double(actual, i), rtol, atol)) {
      first = first < 0 ? i : first;
      ++differ;
    }
  }
  if (differ == 0) {
    return KILN_OK;
  }
  return KILN_STATUS(OUT_OF_RANGE,
                     "%lld of %lld elements differ; the first is element %lld: %.9g, expected "
                     "%.9g (rtol %g, atol %g)",
                     (long long)differ, (long long)count, (long long)first,
                     kiln_tensor_element_as_double(actual, first),
                     kiln_tensor_element_as_double(expected, first), rtol, atol);
}
